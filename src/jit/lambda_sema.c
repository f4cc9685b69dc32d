/* lambda_sema.c -- the type checker: resolves names, applies C's usual arithmetic
 * conversions on gx dtypes, and records for every node the dtype it computes in
 * (optype), yields (type) and must be converted to for its parent (conv). */
#include "jit/lambda_impl.h"

#include <stdio.h>
#include <string.h>

/* The math library.  Emission calls gx_<name>_<dtype> from the prelude. */
const lam__builtin lam__builtins[] = {
    {"sin", 1, LAM_B_FLOAT},   {"cos", 1, LAM_B_FLOAT},    {"tan", 1, LAM_B_FLOAT},     {"asin", 1, LAM_B_FLOAT},
    {"acos", 1, LAM_B_FLOAT},  {"atan", 1, LAM_B_FLOAT},   {"atan2", 2, LAM_B_FLOAT},   {"sinh", 1, LAM_B_FLOAT},
    {"cosh", 1, LAM_B_FLOAT},  {"tanh", 1, LAM_B_FLOAT},   {"asinh", 1, LAM_B_FLOAT},   {"acosh", 1, LAM_B_FLOAT},
    {"atanh", 1, LAM_B_FLOAT}, {"exp", 1, LAM_B_FLOAT},    {"exp2", 1, LAM_B_FLOAT},    {"expm1", 1, LAM_B_FLOAT},
    {"log", 1, LAM_B_FLOAT},   {"log2", 1, LAM_B_FLOAT},   {"log10", 1, LAM_B_FLOAT},   {"log1p", 1, LAM_B_FLOAT},
    {"sqrt", 1, LAM_B_FLOAT},  {"rsqrt", 1, LAM_B_FLOAT},  {"cbrt", 1, LAM_B_FLOAT},    {"pow", 2, LAM_B_FLOAT},
    {"floor", 1, LAM_B_FLOAT}, {"ceil", 1, LAM_B_FLOAT},   {"round", 1, LAM_B_FLOAT},   {"trunc", 1, LAM_B_FLOAT},
    {"fmod", 2, LAM_B_FLOAT},  {"fma", 3, LAM_B_FLOAT},    {"hypot", 2, LAM_B_FLOAT},   {"erf", 1, LAM_B_FLOAT},
    {"erfc", 1, LAM_B_FLOAT},  {"lgamma", 1, LAM_B_FLOAT}, {"tgamma", 1, LAM_B_FLOAT},  {"copysign", 2, LAM_B_FLOAT},
    {"isnan", 1, LAM_B_PRED},  {"isinf", 1, LAM_B_PRED},   {"isfinite", 1, LAM_B_PRED}, {"abs", 1, LAM_B_KEEP},
    {"min", 2, LAM_B_KEEP},    {"max", 2, LAM_B_KEEP},     {"clamp", 3, LAM_B_KEEP},    {"sign", 1, LAM_B_KEEP},
    {"re", 1, LAM_B_CPLX},     {"im", 1, LAM_B_CPLX},      {"conj", 1, LAM_B_CPLX},     {"abs2", 1, LAM_B_CPLX},
    {"arg", 1, LAM_B_CPLX},    {"complex", 2, LAM_B_MAKE}, {"rand", 2, LAM_B_RAND},     {"randf", 2, LAM_B_RAND},
};
const int lam__nbuiltins = (int)(sizeof lam__builtins / sizeof lam__builtins[0]);

/* Casts are spelled like calls to the dtype's name. */
static const gx_dtype lam__casts[] = {GX_BOOL, GX_I8,  GX_I16, GX_I32, GX_I64, GX_U8,  GX_U16,
                                      GX_U32,  GX_U64, GX_F32, GX_F64, GX_C64, GX_C128};
#define NCASTS ((int)(sizeof lam__casts / sizeof lam__casts[0]))

typedef struct checker {
    const lam_env *env;
    lam_lambda *l;
    const char *text;
} checker;

static bool lam_scalar(gx_dtype t) { return (t >= GX_BOOL && t <= GX_U64) || t == GX_F32 || t == GX_F64; }

static bool is_float(gx_dtype t) { return t == GX_F32 || t == GX_F64; }
static bool is_cx(gx_dtype t) { return t == GX_C64 || t == GX_C128; }
/* What lambda parameters may be: the scalars and the complex dtypes. */
static bool lam_value(gx_dtype t) { return lam_scalar(t) || is_cx(t); }
static gx_dtype real_of(gx_dtype t) { return t == GX_C64 ? GX_F32 : t == GX_C128 ? GX_F64 : t; }

/* C's integer promotion: everything narrower than int computes as int. */
gx_dtype lam__promote(gx_dtype t)
{
    switch (t) {
    case GX_BOOL:
    case GX_I8:
    case GX_I16:
    case GX_U8:
    case GX_U16: return GX_I32;
    default: return t;
    }
}

static int rank(gx_dtype t) { return (t == GX_I64 || t == GX_U64) ? 2 : 1; }
static bool is_unsigned(gx_dtype t) { return t == GX_U32 || t == GX_U64; }

/* C's usual arithmetic conversions restricted to gx dtypes. */
static gx_dtype usual(gx_dtype a, gx_dtype b)
{
    /* Complex wins, in double precision when either side is double. */
    if (is_cx(a) || is_cx(b))
        return a == GX_C128 || b == GX_C128 || a == GX_F64 || b == GX_F64 ? GX_C128 : GX_C64;
    if (a == GX_F64 || b == GX_F64)
        return GX_F64;
    if (a == GX_F32 || b == GX_F32)
        return GX_F32;
    a = lam__promote(a);
    b = lam__promote(b);
    if (a == b)
        return a;
    if (is_unsigned(a) == is_unsigned(b))
        return rank(a) >= rank(b) ? a : b;
    gx_dtype u = is_unsigned(a) ? a : b, s = is_unsigned(a) ? b : a;
    if (rank(u) >= rank(s))
        return u;
    return s; /* i64 holds every u32 */
}

/* ------------------------------------------------------------ name suggestions */

/* Length of a name stored in a fixed array that may lack its NUL. */
static int bounded_len(const char *s, int max)
{
    int n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

static int edit_distance(const char *a, int la, const char *b, int lb)
{
    int row[65];
    if (la > 64 || lb > 64)
        return 99;
    for (int j = 0; j <= lb; j++)
        row[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

typedef struct suggest {
    const char *name;
    int len, dist;
    const char *best;
    int blen;
} suggest;

static void consider(suggest *s, const char *cand, int clen)
{
    if (!cand || clen <= 0)
        return;
    int d = edit_distance(s->name, s->len, cand, clen);
    int limit = s->len <= 3 ? 1 : 2;
    if (d <= limit && d < s->len && d < s->dist) {
        s->dist = d;
        s->best = cand;
        s->blen = clen;
    }
}

/* "did you mean 'sin'?" or a list of what is in scope. */
static void hint_for(const checker *c, const lam__node *n, bool call, char *buf, size_t cap)
{
    suggest s = {c->text + n->name_at, n->name_len, 99, NULL, 0};
    const lam_env *e = c->env;
    if (call) {
        for (int i = 0; i < lam__nbuiltins; i++)
            consider(&s, lam__builtins[i].name, (int)strlen(lam__builtins[i].name));
        for (int i = 0; i < NCASTS; i++)
            consider(&s, gx_dtype_name(lam__casts[i]), (int)strlen(gx_dtype_name(lam__casts[i])));
        for (int i = 0; i < e->nfns && e->fns; i++)
            consider(&s, e->fns[i].name, bounded_len(e->fns[i].name, (int)sizeof e->fns[i].name));
    } else {
        for (int i = 0; i < c->l->nparams; i++)
            consider(&s, c->text + c->l->pcol[i], c->l->plen[i]);
        for (int i = 0; i < e->nconsts && e->consts; i++)
            if (e->consts[i].name)
                consider(&s, e->consts[i].name, (int)strlen(e->consts[i].name));
        for (int i = 0; i < e->narrays && e->arrays; i++)
            if (e->arrays[i].name)
                consider(&s, e->arrays[i].name, (int)strlen(e->arrays[i].name));
        consider(&s, "true", 4);
        consider(&s, "false", 5);
    }
    if (s.best) {
        snprintf(buf, cap, "did you mean '%.*s'?", s.blen, s.best);
        return;
    }
    if (call) {
        snprintf(buf, cap,
                 "call a math function (sin, exp, pow, min, ...), a cast (f32, i32, ...), or a function registered "
                 "with gx_define");
        return;
    }
    size_t k = (size_t)snprintf(buf, cap, "names in scope: the parameters");
    for (int i = 0; i < c->l->nparams && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%.*s", i ? ", " : " ", c->l->plen[i] > 40 ? 40 : c->l->plen[i],
                              c->text + c->l->pcol[i]);
    for (int i = 0; i < e->nconsts && e->consts && k < cap; i++)
        if (e->consts[i].name)
            k += (size_t)snprintf(buf + k, cap - k, "%s%.40s", i ? ", " : "; the constants ", e->consts[i].name);
    for (int i = 0; i < e->narrays && e->arrays && k < cap; i++)
        if (e->arrays[i].name)
            k += (size_t)snprintf(buf + k, cap - k, "%s%.40s[]", i ? ", " : "; the arrays ", e->arrays[i].name);
}

/* ------------------------------------------------------------ resolution */

static bool name_is(const checker *c, const lam__node *n, const char *name)
{
    size_t len = (size_t)bounded_len(name, 1 << 20);
    return (size_t)n->name_len == len && memcmp(c->text + n->name_at, name, len) == 0;
}

static gx_status check(checker *c, lam__node *n);

static gx_status check_name(checker *c, lam__node *n)
{
    for (int i = 0; i < c->l->nparams; i++)
        if (c->l->plen[i] == n->name_len &&
            memcmp(c->text + c->l->pcol[i], c->text + n->name_at, (size_t)n->name_len) == 0) {
            n->ref = LAM_R_PARAM;
            n->index = i;
            n->type = c->env->arg_types[i];
            return GX_OK;
        }
    for (int i = 0; i < c->env->nconsts && c->env->consts; i++)
        if (c->env->consts[i].name && name_is(c, n, c->env->consts[i].name)) {
            n->ref = LAM_R_CONST;
            n->index = i;
            n->type = c->env->consts[i].value.dtype;
            return GX_OK;
        }
    int len = n->name_len > 40 ? 40 : n->name_len;
    const char *nm = c->text + n->name_at;
    for (int i = 0; i < c->env->narrays && c->env->arrays; i++)
        if (c->env->arrays[i].name && name_is(c, n, c->env->arrays[i].name))
            return lam__fail(GX_ERR_TYPE, c->text, n->col, "read one element by index, e.g. a[i] (m[i, j] for 2-d)",
                             "'%.*s' is a bound array, not a value", len, nm);
    for (int i = 0; i < lam__nbuiltins; i++)
        if (name_is(c, n, lam__builtins[i].name))
            return lam__fail(GX_ERR_TYPE, c->text, n->col, "call it with arguments in parentheses",
                             "'%.*s' is a function, not a value", len, nm);
    for (int i = 0; i < c->env->nfns && c->env->fns; i++)
        if (n->name_len == bounded_len(c->env->fns[i].name, (int)sizeof c->env->fns[i].name) &&
            memcmp(c->env->fns[i].name, nm, (size_t)n->name_len) == 0)
            return lam__fail(GX_ERR_TYPE, c->text, n->col, "call it with arguments in parentheses",
                             "'%.*s' is a function, not a value", len, nm);
    char hint[512];
    hint_for(c, n, false, hint, sizeof hint);
    return lam__fail(GX_ERR_TYPE, c->text, n->col, hint, "unknown name '%.*s'", len, nm);
}

static gx_status arity_error(checker *c, lam__node *n, int want)
{
    return lam__fail(GX_ERR_TYPE, c->text, n->col, "check the call's arguments",
                     "'%.*s' takes %d argument%s, but %d %s given", n->name_len > 40 ? 40 : n->name_len,
                     c->text + n->name_at, want, want == 1 ? "" : "s", n->nkids, n->nkids == 1 ? "was" : "were");
}

/* Builtins that deal in complex numbers (and rand); *done stays false for an
 * ordinary builtin with real arguments, which check_builtin then handles. */
static gx_status check_complex_builtin(checker *c, lam__node *n, const lam__builtin *b, gx_dtype t, bool *done)
{
    bool abs_or_exp = strcmp(b->name, "abs") == 0 || strcmp(b->name, "exp") == 0;
    *done = b->kind == LAM_B_CPLX || b->kind == LAM_B_MAKE || b->kind == LAM_B_RAND || (is_cx(t) && abs_or_exp);
    if (!*done) {
        if (!is_cx(t))
            return GX_OK;
        return lam__fail(GX_ERR_TYPE, c->text, n->col,
                         "complex values take + - * /, == !=, re, im, conj, abs, abs2, arg, exp",
                         "'%s' does not take complex arguments", b->name);
    }
    if (b->kind == LAM_B_RAND) { /* rand(seed, i): both u64 */
        n->optype = n->type = strcmp(b->name, "rand") == 0 ? GX_F64 : GX_F32;
        for (int i = 0; i < n->nkids; i++) {
            if (is_cx(n->kid[i]->type) || is_float(n->kid[i]->type))
                return lam__fail(GX_ERR_TYPE, c->text, n->kid[i]->col, "pass integers: rand(seed, i)",
                                 "'%s' takes an integer seed and an integer counter", b->name);
            n->kid[i]->conv = GX_U64;
        }
        return GX_OK;
    }
    if (b->kind == LAM_B_MAKE) {
        if (is_cx(t))
            return lam__fail(GX_ERR_TYPE, c->text, n->col, "pass the real and imaginary parts as real numbers",
                             "complex(re, im) takes real arguments");
        n->optype = n->type = t == GX_F32 ? GX_C64 : GX_C128;
        n->kid[0]->conv = n->kid[1]->conv = real_of(n->optype);
        return GX_OK;
    }
    n->optype = is_cx(t) ? t : (t == GX_F32 ? GX_C64 : GX_C128);
    n->kid[0]->conv = n->optype;
    bool cplx_result = strcmp(b->name, "conj") == 0 || strcmp(b->name, "exp") == 0;
    n->type = cplx_result ? n->optype : real_of(n->optype);
    return GX_OK;
}

static gx_status check_builtin(checker *c, lam__node *n, int bi)
{
    const lam__builtin *b = &lam__builtins[bi];
    if (n->nkids != b->nargs)
        return arity_error(c, n, b->nargs);
    gx_dtype t = n->kid[0]->type;
    for (int i = 1; i < n->nkids; i++)
        t = usual(t, n->kid[i]->type);
    bool done = false;
    GX__CHECK(check_complex_builtin(c, n, b, t, &done));
    if (done) {
        n->ref = LAM_R_BUILTIN;
        n->index = bi;
        return GX_OK;
    }
    if (b->kind != LAM_B_KEEP && !is_float(t))
        t = GX_F64; /* integer arguments compute in double precision */
    n->ref = LAM_R_BUILTIN;
    n->index = bi;
    n->optype = lam__promote(t);
    n->type = b->kind == LAM_B_PRED ? GX_BOOL : n->optype;
    for (int i = 0; i < n->nkids; i++)
        n->kid[i]->conv = n->optype;
    return GX_OK;
}

static gx_status check_user(checker *c, lam__node *n, int fi)
{
    const lam_fn_sig *f = &c->env->fns[fi];
    int len = n->name_len > 40 ? 40 : n->name_len;
    if (!f->callable)
        return lam__fail(
            GX_ERR_TYPE, c->text, n->col,
            "lambdas can call only functions whose return and parameter types are bool, (u)int8..64_t or float/double; "
            "wrap it in such a function",
            "function '%.*s' cannot be called from a lambda: its signature uses a type that is not a scalar dtype", len,
            c->text + n->name_at);
    if (n->nkids != f->nparams)
        return arity_error(c, n, f->nparams);
    for (int i = 0; i < n->nkids; i++) {
        if (!lam_scalar(f->params[i]))
            return lam__fail(GX_ERR_TYPE, c->text, n->col, NULL, "function '%.*s' has an unsupported parameter type",
                             len, c->text + n->name_at);
        n->kid[i]->conv = f->params[i];
    }
    if (!lam_scalar(f->ret))
        return lam__fail(GX_ERR_TYPE, c->text, n->col, NULL, "function '%.*s' has an unsupported return type", len,
                         c->text + n->name_at);
    n->ref = LAM_R_USER;
    n->index = fi;
    n->type = n->optype = f->ret;
    return GX_OK;
}

static gx_status check_call(checker *c, lam__node *n)
{
    for (int i = 0; i < n->nkids; i++)
        GX__CHECK(check(c, n->kid[i]));
    for (int i = 0; i < NCASTS; i++)
        if (name_is(c, n, gx_dtype_name(lam__casts[i]))) {
            if (n->nkids != 1)
                return arity_error(c, n, 1);
            if (is_cx(n->kid[0]->type) && !is_cx(lam__casts[i]))
                return lam__fail(GX_ERR_TYPE, c->text, n->col, "take re(z), im(z) or abs(z) first",
                                 "a complex value cannot be cast to %s", gx_dtype_name(lam__casts[i]));
            n->ref = LAM_R_CAST;
            n->type = n->optype = n->kid[0]->conv = lam__casts[i];
            return GX_OK;
        }
    for (int i = 0; i < lam__nbuiltins; i++)
        if (name_is(c, n, lam__builtins[i].name))
            return check_builtin(c, n, i);
    for (int i = 0; i < c->env->nfns && c->env->fns; i++)
        if (n->name_len == bounded_len(c->env->fns[i].name, (int)sizeof c->env->fns[i].name) &&
            memcmp(c->env->fns[i].name, c->text + n->name_at, (size_t)n->name_len) == 0)
            return check_user(c, n, i);
    int len = n->name_len > 40 ? 40 : n->name_len;
    for (int i = 0; i < c->l->nparams; i++)
        if (c->l->plen[i] == n->name_len &&
            memcmp(c->text + c->l->pcol[i], c->text + n->name_at, (size_t)n->name_len) == 0)
            return lam__fail(GX_ERR_TYPE, c->text, n->col, "only functions can be called",
                             "'%.*s' is a parameter, not a function", len, c->text + n->name_at);
    char hint[512];
    hint_for(c, n, true, hint, sizeof hint);
    return lam__fail(GX_ERR_TYPE, c->text, n->col, hint, "unknown function '%.*s'", len, c->text + n->name_at);
}

/* ------------------------------------------------------------ operators */

static gx_status need_int(checker *c, lam__node *n, const lam__node *operand, const char *which)
{
    if (!is_float(operand->type) && !is_cx(operand->type))
        return GX_OK;
    const char *hint = n->op == LAM_OP_MOD ? "use fmod(a, b) for the floating-point remainder"
                                           : "convert the operand to an integer first, e.g. i32(x)";
    return lam__fail(GX_ERR_TYPE, c->text, n->col, hint, "operator '%s' needs integer operands, but the %s is %s",
                     lam__op_text(n->op), which, gx_dtype_name(operand->type));
}

static gx_status check_unary(checker *c, lam__node *n)
{
    lam__node *a = n->kid[0];
    GX__CHECK(check(c, a));
    if (is_cx(a->type) && n->op == LAM_OP_NOT)
        return lam__fail(GX_ERR_TYPE, c->text, n->col, "compare explicitly, e.g. z == complex(0, 0)",
                         "operator '!' does not take a complex operand");
    switch (n->op) {
    case LAM_OP_NOT:
        n->type = n->optype = GX_BOOL;
        a->conv = a->type; /* C's ! accepts any scalar */
        return GX_OK;
    case LAM_OP_TILDE: GX__CHECK(need_int(c, n, a, "operand")); break;
    default: break;
    }
    n->type = n->optype = a->conv = lam__promote(a->type);
    return GX_OK;
}

/* Complex operands allow + - * / == != only (complex numbers are not ordered). */
static gx_status check_complex_binary(checker *c, lam__node *n)
{
    if (!is_cx(n->kid[0]->type) && !is_cx(n->kid[1]->type))
        return GX_OK;
    switch (n->op) {
    case LAM_OP_ADD:
    case LAM_OP_SUB:
    case LAM_OP_MUL:
    case LAM_OP_DIV:
    case LAM_OP_EQ:
    case LAM_OP_NE: return GX_OK;
    case LAM_OP_LT:
    case LAM_OP_LE:
    case LAM_OP_GT:
    case LAM_OP_GE:
        return lam__fail(GX_ERR_TYPE, c->text, n->col, "compare abs(z) or re(z) instead",
                         "operator '%s' does not order complex numbers", lam__op_text(n->op));
    case LAM_OP_LAND:
    case LAM_OP_LOR:
        return lam__fail(GX_ERR_TYPE, c->text, n->col, "compare explicitly, e.g. z != complex(0, 0)",
                         "operator '%s' does not take complex operands", lam__op_text(n->op));
    default: return GX_OK; /* the integer operators report it themselves */
    }
}

static gx_status check_binary(checker *c, lam__node *n)
{
    lam__node *a = n->kid[0], *b = n->kid[1];
    GX__CHECK(check(c, a));
    GX__CHECK(check(c, b));
    GX__CHECK(check_complex_binary(c, n));
    switch (n->op) {
    case LAM_OP_LAND:
    case LAM_OP_LOR:
        a->conv = a->type;
        b->conv = b->type;
        n->type = n->optype = GX_BOOL;
        return GX_OK;
    case LAM_OP_SHL:
    case LAM_OP_SHR:
        GX__CHECK(need_int(c, n, a, "left operand"));
        GX__CHECK(need_int(c, n, b, "right operand"));
        /* As in C the result has the promoted left type; the count is masked. */
        n->type = n->optype = a->conv = lam__promote(a->type);
        b->conv = lam__promote(b->type);
        return GX_OK;
    case LAM_OP_MOD:
    case LAM_OP_AND:
    case LAM_OP_OR:
    case LAM_OP_XOR:
        GX__CHECK(need_int(c, n, a, "left operand"));
        GX__CHECK(need_int(c, n, b, "right operand"));
        break;
    default: break;
    }
    n->optype = a->conv = b->conv = usual(a->type, b->type);
    bool cmp = n->op >= LAM_OP_LT && n->op <= LAM_OP_NE;
    n->type = cmp ? GX_BOOL : n->optype;
    return GX_OK;
}

/* c ? a : b.  Same-typed branches keep their type (so bool ? bool : bool stays bool);
 * otherwise the usual arithmetic conversions apply as in C. */
static gx_status check_cond(checker *c, lam__node *n)
{
    for (int i = 0; i < 3; i++)
        GX__CHECK(check(c, n->kid[i]));
    lam__node *a = n->kid[1], *b = n->kid[2];
    if (is_cx(n->kid[0]->type))
        return lam__fail(GX_ERR_TYPE, c->text, n->kid[0]->col, "compare explicitly, e.g. z != complex(0, 0)",
                         "the condition of ?: cannot be complex");
    n->kid[0]->conv = n->kid[0]->type;
    n->type = n->optype = a->type == b->type ? a->type : usual(a->type, b->type);
    a->conv = b->conv = n->type;
    return GX_OK;
}

/* name[i, j, ...]: a bound array (a parameter or constant of that name hides it or
 * is not indexable), one integer index per axis; the value has the array's dtype. */
static gx_status check_index(checker *c, lam__node *n)
{
    int len = n->name_len > 40 ? 40 : n->name_len;
    const char *nm = c->text + n->name_at;
    for (int i = 0; i < c->l->nparams; i++)
        if (c->l->plen[i] == n->name_len && memcmp(c->text + c->l->pcol[i], nm, (size_t)n->name_len) == 0)
            return lam__fail(GX_ERR_TYPE, c->text, n->col,
                             "only arrays bound by name (opts.arrays, gx_bind) can be indexed; a parameter is one "
                             "element and hides a bound array of its name",
                             "'%.*s' is a parameter, not an array", len, nm);
    for (int i = 0; i < c->env->nconsts && c->env->consts; i++)
        if (c->env->consts[i].name && name_is(c, n, c->env->consts[i].name))
            return lam__fail(GX_ERR_TYPE, c->text, n->col,
                             "only arrays bound by name (opts.arrays, gx_bind) can be indexed",
                             "'%.*s' is a constant, not an array", len, nm);
    int ai = -1;
    for (int i = 0; i < c->env->narrays && c->env->arrays && ai < 0; i++)
        if (c->env->arrays[i].name && name_is(c, n, c->env->arrays[i].name))
            ai = i;
    if (ai < 0) {
        char hint[512];
        hint_for(c, n, false, hint, sizeof hint);
        return lam__fail(GX_ERR_TYPE, c->text, n->col, hint, "unknown array '%.*s' (bind it with opts.arrays)", len,
                         nm);
    }
    const lam_arr *a = &c->env->arrays[ai];
    if (n->nkids != a->ndim)
        return lam__fail(GX_ERR_TYPE, c->text, n->col, "give one index per axis",
                         "array '%.*s' has rank %d, so it takes %d ind%s, but %d %s given", len, nm, a->ndim, a->ndim,
                         a->ndim == 1 ? "ex" : "ices", n->nkids, n->nkids == 1 ? "was" : "were");
    for (int i = 0; i < n->nkids; i++) {
        lam__node *k = n->kid[i];
        GX__CHECK(check(c, k));
        if (is_float(k->type) || is_cx(k->type))
            return lam__fail(GX_ERR_TYPE, c->text, k->col, "convert it to an integer first, e.g. i64(x)",
                             "an index must be an integer, but index %d of '%.*s' is %s", i + 1, len, nm,
                             gx_dtype_name(k->type));
        k->conv = k->type == GX_U64 ? GX_U64 : GX_I64; /* u64 saturates on its way to int64 (gx_bix_u64) */
    }
    n->ref = LAM_R_ARRAY;
    n->index = ai;
    n->type = n->optype = a->dtype;
    return GX_OK;
}

static gx_status check(checker *c, lam__node *n)
{
    gx_status s;
    switch (n->kind) {
    case LAM_N_LIT: s = GX_OK; break;
    case LAM_N_NAME: s = check_name(c, n); break;
    case LAM_N_UNARY: s = check_unary(c, n); break;
    case LAM_N_BINARY: s = check_binary(c, n); break;
    case LAM_N_COND: s = check_cond(c, n); break;
    case LAM_N_CALL: s = check_call(c, n); break;
    case LAM_N_INDEX: s = check_index(c, n); break;
    default: s = gx__err(GX_ERR_INTERNAL, "lambda checker: unknown node kind %d", (int)n->kind);
    }
    if (s == GX_OK && n->optype == GX_DTYPE_COUNT)
        n->optype = n->type;
    if (s == GX_OK && n->conv == GX_DTYPE_COUNT)
        n->conv = n->type;
    return s;
}

/* ------------------------------------------------------------ entry */

static gx_status check_env(const lam_env *env, const lam_lambda *l)
{
    if (env->nargs < 0 || (env->nargs > 0 && !env->arg_types) || env->nconsts < 0 || env->nfns < 0)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "lam_compile: inconsistent environment (counts and arrays)");
    if (l->nparams != env->nargs)
        return lam__fail(GX_ERR_TYPE, l->text, l->nparams ? l->pcol[0] : l->arrow_col,
                         "write one parameter per input array, in order",
                         "the lambda takes %d parameter%s, but %d argument%s given", l->nparams,
                         l->nparams == 1 ? "" : "s", env->nargs, env->nargs == 1 ? " is" : "s are");
    for (int i = 0; i < env->nargs; i++)
        if (!lam_value(env->arg_types[i]))
            return lam__fail(
                GX_ERR_TYPE, l->text, l->pcol[i], "use bool, i8..i64, u8..u64, f32, f64, c64 or c128 arrays",
                "argument %d has dtype %s, which lambdas do not support", i + 1, gx_dtype_name(env->arg_types[i]));
    if (env->narrays < 0 || (env->narrays > 0 && !env->arrays))
        return gx__err(GX_ERR_INVALID_ARGUMENT, "lam_compile: inconsistent environment (bound arrays)");
    for (int i = 0; i < env->narrays; i++)
        if (!lam_value(env->arrays[i].dtype) || env->arrays[i].ndim < 0 || env->arrays[i].ndim > GX_MAX_DIMS)
            return gx__err(GX_ERR_TYPE, "bound array '%.40s' has dtype %s or rank %d, which lambdas do not support",
                           env->arrays[i].name ? env->arrays[i].name : "?", gx_dtype_name(env->arrays[i].dtype),
                           env->arrays[i].ndim);
    for (int i = 0; i < env->nconsts && env->consts; i++)
        if (!lam_scalar(env->consts[i].value.dtype))
            return gx__err(GX_ERR_TYPE, "constant '%.40s' has dtype %s, which lambdas do not support",
                           env->consts[i].name ? env->consts[i].name : "?", gx_dtype_name(env->consts[i].value.dtype));
    return GX_OK;
}

gx_status lam_compile(const lam_env *env, lam_lambda **out)
{
    if (!out)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "lam_compile: out must not be NULL");
    *out = NULL;
    if (!env)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "lam_compile: env must not be NULL");
    lam_lambda *l;
    lam_env hv;
    lam__half_bufs hb;
    gx_dtype half;
    gx_status s = lam__half_env(env, &hv, &hb, &half);
    if (s == GX_OK)
        s = lam__parse(env->text, &l);
    if (s != GX_OK) {
        lam__half_free(&hb);
        return s;
    }
    env = &hv; /* halves are f32 values in lambdas */
    s = check_env(env, l);
    if (s == GX_OK) {
        checker c = {env, l, l->text};
        s = check(&c, l->root);
    }
    lam__half_free(&hb);
    if (s != GX_OK) {
        lam_free(l);
        return s;
    }
    l->result = lam__half_result(half, l->root->type);
    *out = l;
    return GX_OK;
}
