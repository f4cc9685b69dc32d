/* lambda_emit.c -- turns a checked lambda into one C expression.
 *
 * Every sub-expression is wrapped as ((T)...) in its own dtype, so the value never
 * depends on C's or C++'s implicit conversions.  Operations with undefined or
 * compiler-dependent behaviour go through prelude helpers named gx_<op>_<dtype>
 * (gx_add_i32, gx_div_u64, gx_shl_i64, gx_sin_f32, gx_cvt_f64_i8, ...). */
#include "jit/lambda_impl.h"

#include <stdio.h>
#include <string.h>

typedef struct emitter {
    const lam_lambda *l;
    const char *const *params;
    const char *const *consts;
    gx__sbuf *out;
    gx_status err;
    lam__rctx *rc; /* value bounds, or NULL: emit every operation in its dtype */
} emitter;

static const char *ct(gx_dtype t) { return gx__dtype_ctype(t); }
static bool is_cx(gx_dtype t) { return t == GX_C64 || t == GX_C128; }
/* "(float)" -- or nothing for complex types: C cannot cast to a struct type. */
static const char *cast(gx_dtype t)
{
    static const char *const casts[GX_DTYPE_COUNT] = {
        [GX_BOOL] = "(bool)",    [GX_I8] = "(int8_t)",  [GX_I16] = "(int16_t)",  [GX_I32] = "(int32_t)",
        [GX_I64] = "(int64_t)",  [GX_U8] = "(uint8_t)", [GX_U16] = "(uint16_t)", [GX_U32] = "(uint32_t)",
        [GX_U64] = "(uint64_t)", [GX_F32] = "(float)",  [GX_F64] = "(double)"};
    return (unsigned)t < GX_DTYPE_COUNT && casts[t] ? casts[t] : "";
}
static const char *dn(gx_dtype t) { return gx_dtype_name(t); }
static bool is_float(gx_dtype t) { return t == GX_F32 || t == GX_F64; }
static bool is_intlike(gx_dtype t) { return t >= GX_I8 && t <= GX_U64; }

static void emit(emitter *e, const lam__node *n);

/* n's value converted to dtype t.  float -> integer saturates through gx_cvt_f64_*
 * (a plain C cast of NaN or an out-of-range value is undefined behaviour). */
static void emit_conv(emitter *e, const lam__node *n, gx_dtype t)
{
    if (t == n->type) {
        emit(e, n);
        return;
    }
    if (is_cx(t)) { /* real -> complex (v, 0); complex -> the other precision */
        gx_dtype r = t == GX_C64 ? GX_F32 : GX_F64;
        if (is_cx(n->type))
            gx__sb_printf(e->out, "gx_cx_%s_%s(", dn(n->type), dn(t));
        else
            gx__sb_printf(e->out, "gx_complex_%s((%s)", dn(t), ct(r));
        emit(e, n);
        gx__sb_printf(e->out, is_cx(n->type) ? ")" : ", (%s)0)", ct(r));
        return;
    }
    if (is_float(n->type) && is_intlike(t)) {
        gx__sb_printf(e->out, "((%s)gx_cvt_f64_%s((double)", ct(t), dn(t));
        emit(e, n);
        gx__sb_puts(e->out, "))");
        return;
    }
    gx__sb_printf(e->out, "((%s)", ct(t));
    emit(e, n);
    gx__sb_puts(e->out, ")");
}

/* A float literal that reads back exactly and is always a floating constant. */
static void emit_float(emitter *e, double v, gx_dtype t)
{
    char buf[64];
    if (t == GX_F32)
        snprintf(buf, sizeof buf, "%.9g", (double)(float)v);
    else
        snprintf(buf, sizeof buf, "%.17g", v);
    for (char *c = buf; *c; c++)
        if (*c == ',')
            *c = '.'; /* a locale with a decimal comma */
    if (!strpbrk(buf, ".eE"))
        strcat(buf, ".0");
    gx__sb_printf(e->out, "((%s)%s%s)", ct(t), buf, t == GX_F32 ? "f" : "");
}

static void emit_lit(emitter *e, const lam__node *n)
{
    unsigned long long v = (unsigned long long)n->ival;
    switch (n->type) {
    case GX_BOOL: gx__sb_printf(e->out, "((bool)%d)", v ? 1 : 0); break;
    case GX_I32: gx__sb_printf(e->out, "((int32_t)%llu)", v); break;
    case GX_I64: gx__sb_printf(e->out, "((int64_t)%lluLL)", v); break;
    case GX_U32: gx__sb_printf(e->out, "((uint32_t)%lluU)", v); break;
    case GX_U64: gx__sb_printf(e->out, "((uint64_t)%lluULL)", v); break;
    default: emit_float(e, n->fval, n->type); break;
    }
}

static void emit_name(emitter *e, const lam__node *n)
{
    const char *s =
        n->ref == LAM_R_PARAM ? (e->params ? e->params[n->index] : NULL) : (e->consts ? e->consts[n->index] : NULL);
    if (!s) {
        e->err = gx__err(GX_ERR_INVALID_ARGUMENT, "lam_emit: no C spelling given for %s %d",
                         n->ref == LAM_R_PARAM ? "parameter" : "constant", n->index);
        return;
    }
    gx__sb_printf(e->out, "(%s(%s))", cast(n->type), s);
}

static void emit_unary(emitter *e, const lam__node *n)
{
    const lam__node *a = n->kid[0];
    switch (n->op) {
    case LAM_OP_NOT: gx__sb_puts(e->out, "((bool)!"); break;
    case LAM_OP_TILDE: gx__sb_printf(e->out, "((%s)~", ct(n->type)); break;
    case LAM_OP_SUB:
        if (is_float(n->type))
            gx__sb_printf(e->out, "((%s)-", ct(n->type));
        else
            gx__sb_printf(e->out, "(%sgx_neg_%s(", cast(n->type), dn(n->type));
        break;
    default: gx__sb_printf(e->out, "(%s", cast(n->type)); break;
    }
    emit_conv(e, a, a->conv);
    gx__sb_puts(e->out, n->op == LAM_OP_SUB && !is_float(n->type) ? "))" : ")");
}

/* Integer + - * / % << >> go through wrapping / guarded helpers. */
static const char *int_helper(lam__op op)
{
    switch (op) {
    case LAM_OP_ADD: return "add";
    case LAM_OP_SUB: return "sub";
    case LAM_OP_MUL: return "mul";
    case LAM_OP_DIV: return "div";
    case LAM_OP_MOD: return "mod";
    case LAM_OP_SHL: return "shl";
    case LAM_OP_SHR: return "shr";
    default: return NULL;
    }
}

/* Complex + - * / == != go through the prelude's gx_<op>_c64 / _c128. */
static const char *cx_helper(lam__op op)
{
    switch (op) {
    case LAM_OP_ADD: return "add";
    case LAM_OP_SUB: return "sub";
    case LAM_OP_MUL: return "mul";
    case LAM_OP_DIV: return "div";
    case LAM_OP_EQ: return "eq";
    default: return "ne";
    }
}

/* ---- narrowed forms: the operation on operands whose bounds (lambda_range.c) make a
 * 32-bit or unsigned computation give the same value as the dtype's own. */

static bool in_u32(lam_range r) { return r.ok && r.lo >= 0 && r.hi <= (int64_t)UINT32_MAX; }
static bool in_s32(lam_range r) { return r.ok && r.lo >= INT32_MIN && r.hi <= INT32_MAX; }
static bool wide64(gx_dtype t) { return t == GX_I64 || t == GX_U64; }

/* "(W)(a) OP (W)(b)" with both operands converted to the operation's dtype first. */
static void emit_pair(emitter *e, const lam__node *n, const char *w, const char *op)
{
    gx__sb_printf(e->out, "(%s", w);
    emit_conv(e, n->kid[0], n->kid[0]->conv);
    gx__sb_printf(e->out, " %s %s", op, w);
    emit_conv(e, n->kid[1], n->kid[1]->conv);
    gx__sb_puts(e->out, ")");
}

/* Which narrowed form n takes, if any: the operands' type W, the type the result is
 * truncated to first (NULL: none) -- then it is converted to n's dtype as usual. */
static bool narrow_form(emitter *e, const lam__node *n, const char **w, const char **trunc)
{
    gx_dtype t = n->optype;
    if (!e->rc || !is_intlike(t))
        return false;
    lam_range a = lam__range_kid(e->rc, n, 0), b = lam__range_kid(e->rc, n, 1);
    lam_range r = lam__range_binary(n->op, a, b, t); /* ok for a 64-bit t: never wraps */
    *trunc = NULL;
    switch (n->op) {
    case LAM_OP_ADD:
    case LAM_OP_SUB:
    case LAM_OP_MUL:
        if (!wide64(t) || !r.ok)
            return false;
        if (in_u32(a) && in_u32(b) && in_u32(r))
            return *w = "(uint32_t)", *trunc = "(uint32_t)", true;
        if (in_s32(a) && in_s32(b) && in_s32(r)) /* wraps in 32 bits, lands back in range */
            return *w = "(uint32_t)", *trunc = "(int32_t)", true;
        if (n->op == LAM_OP_MUL && in_u32(a) && in_u32(b)) /* one 32x32->64 multiply */
            return *w = "(uint64_t)(uint32_t)", true;
        return false;
    case LAM_OP_DIV:
    case LAM_OP_MOD:
        /* x / 0, MIN / -1 and the sign of a negative dividend cannot occur. */
        if (!a.ok || a.lo < 0 || !b.ok || b.lo < 1)
            return false;
        if (in_u32(a) && in_u32(b))
            return *w = "(uint32_t)", true;
        if (!wide64(t))
            return false;
        *w = "(uint64_t)";
        *trunc = in_u32(r) ? "(uint32_t)" : NULL;
        return true;
    case LAM_OP_AND: return wide64(t) && (in_u32(a) || in_u32(b)) ? (*w = "(uint32_t)", true) : false;
    case LAM_OP_OR:
    case LAM_OP_XOR: return wide64(t) && in_u32(a) && in_u32(b) ? (*w = "(uint32_t)", true) : false;
    case LAM_OP_SHR:
        return wide64(t) && in_u32(a) && b.ok && b.lo >= 0 && b.hi < 32 ? (*w = "(uint32_t)", true) : false;
    case LAM_OP_LT:
    case LAM_OP_LE:
    case LAM_OP_GT:
    case LAM_OP_GE:
    case LAM_OP_EQ:
    case LAM_OP_NE:
        if (!wide64(t))
            return false;
        if (in_u32(a) && in_u32(b))
            return *w = "(uint32_t)", true;
        if (in_s32(a) && in_s32(b))
            return *w = "(int32_t)", true;
        return false;
    default: return false;
    }
}

static bool emit_narrow(emitter *e, const lam__node *n)
{
    const char *w, *trunc;
    if (!narrow_form(e, n, &w, &trunc))
        return false;
    gx__sb_printf(e->out, "(%s(%s)%s(", cast(n->type), ct(n->optype), trunc ? trunc : "");
    emit_pair(e, n, w, lam__op_text(n->op));
    gx__sb_puts(e->out, "))");
    return true;
}

static void emit_binary(emitter *e, const lam__node *n)
{
    const lam__node *a = n->kid[0], *b = n->kid[1];
    if (emit_narrow(e, n))
        return;
    const char *h = is_float(n->optype) ? NULL : is_cx(n->optype) ? cx_helper(n->op) : int_helper(n->op);
    if (h) {
        bool shift = n->op == LAM_OP_SHL || n->op == LAM_OP_SHR;
        gx__sb_printf(e->out, "(%sgx_%s_%s(", cast(n->type), h, dn(n->optype));
        emit_conv(e, a, a->conv);
        gx__sb_puts(e->out, shift ? ", (uint64_t)" : ", ");
        emit_conv(e, b, b->conv);
        gx__sb_puts(e->out, "))");
        return;
    }
    gx__sb_printf(e->out, "(%s(", cast(n->type));
    emit_conv(e, a, a->conv);
    gx__sb_printf(e->out, " %s ", lam__op_text(n->op));
    emit_conv(e, b, b->conv);
    gx__sb_puts(e->out, "))");
}

static void emit_cond(emitter *e, const lam__node *n)
{
    gx__sb_printf(e->out, "(%s(", cast(n->type));
    emit_conv(e, n->kid[0], n->kid[0]->conv);
    gx__sb_puts(e->out, " ? ");
    emit_conv(e, n->kid[1], n->kid[1]->conv);
    gx__sb_puts(e->out, " : ");
    emit_conv(e, n->kid[2], n->kid[2]->conv);
    gx__sb_puts(e->out, "))");
}

static void emit_call(emitter *e, const lam__node *n)
{
    if (n->ref == LAM_R_CAST) {
        emit_conv(e, n->kid[0], n->kid[0]->conv);
        return;
    }
    if (n->ref == LAM_R_BUILTIN)
        gx__sb_printf(e->out, "(%sgx_%s_%s(", cast(n->type), lam__builtins[n->index].name, dn(n->optype));
    else
        gx__sb_printf(e->out, "(%s%.*s(", cast(n->type), n->name_len, e->l->text + n->name_at);
    for (int i = 0; i < n->nkids; i++) {
        if (i)
            gx__sb_puts(e->out, ", ");
        emit_conv(e, n->kid[i], n->kid[i]->conv);
    }
    gx__sb_puts(e->out, "))");
}

/* A bound array's element: gx_bl<k>(j0, ...) with int64_t indices (see lambda.h). */
static void emit_index(emitter *e, const lam__node *n)
{
    gx__sb_printf(e->out, "(%sgx_bl%d(", cast(n->type), n->index);
    for (int i = 0; i < n->nkids; i++) {
        if (i)
            gx__sb_puts(e->out, ", ");
        if (n->kid[i]->conv == GX_U64) {
            gx__sb_puts(e->out, "gx_bix_u64(");
            emit_conv(e, n->kid[i], GX_U64);
            gx__sb_puts(e->out, ")");
        } else
            emit_conv(e, n->kid[i], GX_I64);
    }
    gx__sb_puts(e->out, "))");
}

static void emit(emitter *e, const lam__node *n)
{
    if (e->err != GX_OK)
        return;
    switch (n->kind) {
    case LAM_N_LIT: emit_lit(e, n); break;
    case LAM_N_NAME: emit_name(e, n); break;
    case LAM_N_UNARY: emit_unary(e, n); break;
    case LAM_N_BINARY: emit_binary(e, n); break;
    case LAM_N_COND: emit_cond(e, n); break;
    case LAM_N_CALL: emit_call(e, n); break;
    case LAM_N_INDEX: emit_index(e, n); break;
    }
}

gx_status lam_emit_ranged(const lam_lambda *l, const char *const *param_names, const lam_range *param_ranges,
                          const char *const *const_names, gx__sbuf *out, lam_range *result)
{
    if (result)
        *result = (lam_range){false, 0, 0};
    if (!l || !out || l->result == GX_DTYPE_COUNT)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "lam_emit: needs a lambda checked by lam_compile and an output buffer");
    emitter e = {l, param_names, const_names, out, GX_OK, NULL};
    if (param_ranges && !(e.rc = lam__rctx_new(l, param_ranges)))
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory while emitting a lambda");
    emit(&e, l->root);
    if (result && e.rc && e.err == GX_OK)
        *result = lam__range(e.rc, l->root);
    lam__rctx_free(e.rc);
    if (e.err != GX_OK)
        return e.err;
    if (out->oom)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory while emitting a lambda");
    return GX_OK;
}

gx_status lam_emit(const lam_lambda *l, const char *const *param_names, const char *const *const_names, gx__sbuf *out)
{
    return lam_emit_ranged(l, param_names, NULL, const_names, out, NULL);
}
