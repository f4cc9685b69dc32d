/* lambda_range.c -- value bounds of a lambda's integer sub-expressions.
 *
 * The emitter asks for the closed interval every integer node's value lies in, given
 * bounds on the parameters (a pipeline knows that iota(0, 2^29) stays below 2^29).
 * With them, lambda_emit.c computes an operation in a narrower or unsigned form when
 * that gives the same value for every operand in bounds: (i * i) % 1000 on i64 costs
 * a 32x32->64 multiply and an unsigned remainder instead of a 64x64 multiply and a
 * signed 64-bit remainder with its sign fix-ups; GPUs have no 64-bit integer units,
 * so each 64-bit operation is several 32-bit ones.
 *
 * Every rule must be sound: a bound that is too wide only costs speed, one that is
 * too narrow gives wrong values.  Exact results are computed in 128 bits; whenever a
 * result could wrap in its dtype, the node gets the dtype's whole range. */
#include "jit/lambda_impl.h"

#include <stdlib.h>
#include <string.h>

typedef __int128 wide;

static bool is_int(gx_dtype t) { return t >= GX_BOOL && t <= GX_U64; }

/* The values a dtype holds, or "anything" (ok = false) for i64 and u64. */
static lam_range full(gx_dtype t)
{
    switch (t) {
    case GX_BOOL: return (lam_range){true, 0, 1};
    case GX_I8: return (lam_range){true, INT8_MIN, INT8_MAX};
    case GX_I16: return (lam_range){true, INT16_MIN, INT16_MAX};
    case GX_I32: return (lam_range){true, INT32_MIN, INT32_MAX};
    case GX_U8: return (lam_range){true, 0, UINT8_MAX};
    case GX_U16: return (lam_range){true, 0, UINT16_MAX};
    case GX_U32: return (lam_range){true, 0, UINT32_MAX};
    default: return (lam_range){false, 0, 0};
    }
}

static wide type_min(gx_dtype t)
{
    lam_range f = full(t);
    return f.ok ? f.lo : t == GX_I64 ? (wide)INT64_MIN : 0;
}
static wide type_max(gx_dtype t)
{
    lam_range f = full(t);
    return f.ok ? f.hi : t == GX_I64 ? (wide)INT64_MAX : (wide)UINT64_MAX;
}

/* [lo, hi] if it lies within t (and within int64_t, how bounds are kept), else t's
 * whole range: the value may have wrapped. */
static lam_range fit(wide lo, wide hi, gx_dtype t)
{
    if (lo > hi || lo < type_min(t) || hi > type_max(t) || lo < INT64_MIN || hi > INT64_MAX)
        return full(t);
    return (lam_range){true, (int64_t)lo, (int64_t)hi};
}

lam_range lam__range_conv(lam_range r, gx_dtype from, gx_dtype to)
{
    if (!is_int(to))
        return (lam_range){false, 0, 0};
    if (to == GX_BOOL)
        return (lam_range){true, r.ok && r.lo > 0 ? 1 : 0, r.ok && r.hi == 0 && r.lo == 0 ? 0 : 1};
    if (!is_int(from) || !r.ok)
        return full(to); /* float -> integer saturates: anything of `to` */
    return fit(r.lo, r.hi, to);
}

static wide wmin(wide a, wide b) { return a < b ? a : b; }
static wide wmax(wide a, wide b) { return a > b ? a : b; }

/* Smallest 2^k - 1 >= v (v >= 0). */
static wide ones_above(wide v)
{
    wide m = 0;
    while (m < v)
        m = m * 2 + 1;
    return m;
}

static lam_range mul_range(lam_range a, lam_range b, gx_dtype t)
{
    wide p[4] = {(wide)a.lo * b.lo, (wide)a.lo * b.hi, (wide)a.hi * b.lo, (wide)a.hi * b.hi};
    wide lo = p[0], hi = p[0];
    for (int i = 1; i < 4; i++) {
        lo = wmin(lo, p[i]);
        hi = wmax(hi, p[i]);
    }
    return fit(lo, hi, t);
}

/* Division and remainder bounds where C's truncation is easy to bound: a divisor
 * that is always >= 1 (so no x/0 == 0 or MIN/-1 special cases). */
static lam_range divmod_range(lam__op op, lam_range a, lam_range b, gx_dtype t)
{
    if (!b.ok || b.lo < 1 || !a.ok)
        return full(t);
    if (op == LAM_OP_DIV)
        return a.lo >= 0   ? fit(a.lo / b.hi, a.hi / b.lo, t)
               : a.hi <= 0 ? fit(a.lo / b.lo, a.hi / b.hi, t)
                           : fit(a.lo / b.lo, a.hi / b.lo, t);
    /* |a % b| < b and |a % b| <= |a|; the sign is a's. */
    wide m = (wide)b.hi - 1;
    wide lo = a.lo >= 0 ? 0 : wmax(a.lo, -m), hi = a.hi <= 0 ? 0 : wmin(a.hi, m);
    return fit(lo, hi, t);
}

static lam_range shift_range(lam__op op, lam_range a, lam_range b, gx_dtype t)
{
    int w = (int)gx_dtype_size(t) * 8;
    bool count_ok = b.ok && b.lo >= 0 && b.hi < w; /* the count is not masked */
    if (!a.ok || a.lo < 0 || !count_ok)
        return op == LAM_OP_SHR && a.ok && a.lo >= 0 ? fit(0, a.hi, t) : full(t);
    if (op == LAM_OP_SHR)
        return fit((wide)a.lo >> b.hi, (wide)a.hi >> b.lo, t);
    if (b.hi >= 64)
        return full(t);
    return fit((wide)a.lo << b.lo, (wide)a.hi << b.hi, t);
}

lam_range lam__range_binary(lam__op op, lam_range a, lam_range b, gx_dtype t)
{
    if (op >= LAM_OP_LT && op <= LAM_OP_NE)
        return (lam_range){true, 0, 1};
    if (op == LAM_OP_LAND || op == LAM_OP_LOR)
        return (lam_range){true, 0, 1};
    if (!is_int(t))
        return (lam_range){false, 0, 0};
    switch (op) {
    case LAM_OP_ADD: return a.ok && b.ok ? fit((wide)a.lo + b.lo, (wide)a.hi + b.hi, t) : full(t);
    case LAM_OP_SUB: return a.ok && b.ok ? fit((wide)a.lo - b.hi, (wide)a.hi - b.lo, t) : full(t);
    case LAM_OP_MUL: return a.ok && b.ok ? mul_range(a, b, t) : full(t);
    case LAM_OP_DIV:
    case LAM_OP_MOD: return divmod_range(op, a, b, t);
    case LAM_OP_SHL:
    case LAM_OP_SHR: return shift_range(op, a, b, t);
    case LAM_OP_AND:
        /* A non-negative operand bounds the result (two's complement AND). */
        if (a.ok && a.lo >= 0 && b.ok && b.lo >= 0)
            return fit(0, wmin(a.hi, b.hi), t);
        if ((a.ok && a.lo >= 0) || (b.ok && b.lo >= 0))
            return fit(0, a.ok && a.lo >= 0 ? a.hi : b.hi, t);
        return full(t);
    case LAM_OP_OR:
    case LAM_OP_XOR:
        if (a.ok && a.lo >= 0 && b.ok && b.lo >= 0)
            return fit(0, ones_above(wmax(a.hi, b.hi)), t);
        return full(t);
    default: return full(t);
    }
}

static lam_range unary_range(lam__op op, lam_range a, gx_dtype t)
{
    if (op == LAM_OP_NOT)
        return (lam_range){true, 0, 1};
    if (!a.ok || !gx__dtype_is_signed(t))
        return op == LAM_OP_SUB || op == LAM_OP_TILDE ? full(t) : a.ok ? fit(a.lo, a.hi, t) : full(t);
    if (op == LAM_OP_SUB)
        return fit(-(wide)a.hi, -(wide)a.lo, t);
    if (op == LAM_OP_TILDE)
        return fit(-(wide)a.hi - 1, -(wide)a.lo - 1, t);
    return fit(a.lo, a.hi, t);
}

/* abs, min, max, clamp, sign on integers. */
static lam_range keep_range(const char *name, const lam_range *k, int nk, gx_dtype t)
{
    for (int i = 0; i < nk; i++)
        if (!k[i].ok)
            return strcmp(name, "sign") == 0 ? fit(gx__dtype_is_signed(t) ? -1 : 0, 1, t) : full(t);
    if (strcmp(name, "min") == 0)
        return fit(wmin(k[0].lo, k[1].lo), wmin(k[0].hi, k[1].hi), t);
    if (strcmp(name, "max") == 0)
        return fit(wmax(k[0].lo, k[1].lo), wmax(k[0].hi, k[1].hi), t);
    if (strcmp(name, "clamp") == 0) /* min(max(x, lo), hi) */
        return fit(wmin(wmax(k[0].lo, k[1].lo), k[2].lo), wmin(wmax(k[0].hi, k[1].hi), k[2].hi), t);
    if (strcmp(name, "abs") == 0) {
        if (k[0].lo >= 0)
            return k[0];
        wide m = wmax(-(wide)k[0].lo, k[0].hi > 0 ? k[0].hi : 0);
        return fit(k[0].hi < 0 ? -(wide)k[0].hi : 0, m, t); /* abs(MIN) wraps: fit catches it */
    }
    if (strcmp(name, "sign") == 0)
        return fit(k[0].lo < 0 ? -1 : k[0].lo > 0 ? 1 : 0, k[0].hi > 0 ? 1 : k[0].hi < 0 ? -1 : 0, t);
    return full(t);
}

/* ------------------------------------------------------------ per-node bounds */

struct lam__rctx {
    const lam_lambda *l;
    const lam_range *params; /* may be NULL */
    lam_range *memo;         /* by node id */
    unsigned char *have;
};

static lam_range node_range(lam__rctx *c, const lam__node *n);

/* The bound of kid k after the conversion its parent asked for. */
static lam_range kid_range(lam__rctx *c, const lam__node *n, int k)
{
    const lam__node *kid = n->kid[k];
    return lam__range_conv(node_range(c, kid), kid->type, kid->conv);
}

static lam_range compute(lam__rctx *c, const lam__node *n)
{
    lam_range k[LAM__MAX_ARGS];
    switch (n->kind) {
    case LAM_N_LIT:
        if (!is_int(n->type) || n->ival > INT64_MAX)
            return full(n->type);
        return fit((wide)n->ival, (wide)n->ival, n->type);
    case LAM_N_NAME:
        if (n->ref == LAM_R_PARAM && c->params && c->params[n->index].ok)
            return lam__range_conv(c->params[n->index], GX_I64, n->type);
        return full(n->type);
    case LAM_N_UNARY: return unary_range(n->op, kid_range(c, n, 0), n->type);
    case LAM_N_BINARY:
        return lam__range_conv(lam__range_binary(n->op, kid_range(c, n, 0), kid_range(c, n, 1), n->optype), n->optype,
                               n->type);
    case LAM_N_COND: {
        lam_range a = kid_range(c, n, 1), b = kid_range(c, n, 2);
        return a.ok && b.ok ? fit(wmin(a.lo, b.lo), wmax(a.hi, b.hi), n->type) : full(n->type);
    }
    case LAM_N_CALL:
        if (n->ref == LAM_R_CAST)
            return lam__range_conv(kid_range(c, n, 0), n->kid[0]->conv, n->type);
        if (n->ref == LAM_R_BUILTIN && lam__builtins[n->index].kind == LAM_B_KEEP && is_int(n->optype)) {
            for (int i = 0; i < n->nkids; i++)
                k[i] = kid_range(c, n, i);
            return lam__range_conv(keep_range(lam__builtins[n->index].name, k, n->nkids, n->optype), n->optype,
                                   n->type);
        }
        return full(n->type);
    case LAM_N_INDEX: return full(n->type); /* an element of a bound array: anything */
    }
    return full(n->type);
}

static lam_range node_range(lam__rctx *c, const lam__node *n)
{
    if (!c || n->id < 0 || n->id >= c->l->nnodes)
        return is_int(n->type) ? full(n->type) : (lam_range){false, 0, 0};
    if (!c->have[n->id]) {
        c->memo[n->id] = is_int(n->type) ? compute(c, n) : (lam_range){false, 0, 0};
        c->have[n->id] = 1;
    }
    return c->memo[n->id];
}

lam__rctx *lam__rctx_new(const lam_lambda *l, const lam_range *params)
{
    lam__rctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->l = l;
    c->params = params;
    c->memo = calloc((size_t)l->nnodes + 1, sizeof *c->memo);
    c->have = calloc((size_t)l->nnodes + 1, 1);
    if (!c->memo || !c->have) {
        lam__rctx_free(c);
        return NULL;
    }
    return c;
}

void lam__rctx_free(lam__rctx *c)
{
    if (!c)
        return;
    free(c->memo);
    free(c->have);
    free(c);
}

lam_range lam__range(lam__rctx *c, const lam__node *n) { return node_range(c, n); }
lam_range lam__range_kid(lam__rctx *c, const lam__node *n, int k)
{
    return c ? kid_range(c, n, k) : full(n->kid[k]->conv);
}
