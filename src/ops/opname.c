/* opname.c -- the one table of operator names (see opname.h). */
#include "ops/opname.h"

#include <math.h>
#include <string.h>

opn_kind opn_parse(const char *op)
{
    static const struct {
        const char *name;
        opn_kind k;
    } names[] = {
        {"+", OPN_ADD},       {"sum", OPN_ADD},   {"*", OPN_MUL},       {"prod", OPN_MUL}, {"max", OPN_MAX},
        {"maximum", OPN_MAX}, {"min", OPN_MIN},   {"minimum", OPN_MIN}, {"&", OPN_AND},    {"|", OPN_OR},
        {"^", OPN_XOR},       {"&&", OPN_LAND},   {"all", OPN_LAND},    {"||", OPN_LOR},   {"any", OPN_LOR},
        {"count", OPN_COUNT}, {"mean", OPN_MEAN},
    };
    for (size_t i = 0; op && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(op, names[i].name) == 0)
            return names[i].k;
    return OPN_NONE;
}

gx_dtype opn_acc(opn_kind k, gx_dtype elem)
{
    switch (k) {
    case OPN_ADD:
    case OPN_MUL:
        if (gx__dtype_is_float(elem) || gx__dtype_is_complex(elem))
            return elem;
        return gx__dtype_is_signed(elem) || elem == GX_BOOL ? GX_I64 : GX_U64;
    case OPN_LAND:
    case OPN_LOR: return GX_BOOL;
    case OPN_COUNT: return GX_I64;
    default: return elem;
    }
}

const char *opn_lambda(opn_kind k, gx_dtype acc, const char **why)
{
    bool fl = gx__dtype_is_float(acc), bo = acc == GX_BOOL;
    *why = NULL;
    if ((k == OPN_AND || k == OPN_OR || k == OPN_XOR) && (fl || gx__dtype_is_complex(acc))) {
        *why = "bitwise operators need integer or bool data";
        return NULL;
    }
    if ((k == OPN_ADD || k == OPN_MUL) && bo) {
        *why = "\"+\" and \"*\" need a numeric accumulator, not bool";
        return NULL;
    }
    switch (k) {
    case OPN_ADD: return "a, b -> a + b";
    case OPN_MUL: return "a, b -> a * b";
    /* fmax/fmin: a NaN loses to a number, so NaN (the neutral element) never sticks. */
    case OPN_MAX: return bo ? "a, b -> a || b" : fl ? "a, b -> (b > a || a != a) ? b : a" : "a, b -> b > a ? b : a";
    case OPN_MIN: return bo ? "a, b -> a && b" : fl ? "a, b -> (b < a || a != a) ? b : a" : "a, b -> b < a ? b : a";
    case OPN_AND: return "a, b -> a & b";
    case OPN_OR: return "a, b -> a | b";
    case OPN_XOR: return bo ? "a, b -> a != b" : "a, b -> a ^ b";
    case OPN_LAND: return "a, b -> a && b";
    case OPN_LOR: return "a, b -> a || b";
    default:
        *why = "\"count\" and \"mean\" are statistics of whole reductions (gx_reduce), not running operators; "
               "map x -> x != 0 and use \"+\" instead of \"count\"";
        return NULL;
    }
}

/* The largest (hi) or smallest value of an integer dtype, as a scalar of it. */
static gx_scalar opn_int_extreme(gx_dtype t, bool hi)
{
    gx_scalar s = {t, {.u = 0}};
    unsigned bits = (unsigned)gx_dtype_size(t) * 8;
    if (gx__dtype_is_signed(t))
        s.v.i = hi ? (int64_t)((~0ull) >> (65 - bits)) : -(int64_t)((~0ull) >> (65 - bits)) - 1;
    else
        s.v.u = hi ? (~0ull) >> (64 - bits) : 0;
    return s;
}

gx_scalar opn_neutral(opn_kind k, gx_dtype acc)
{
    gx_scalar s = {acc, {.u = 0}};
    bool fl = gx__dtype_is_float(acc);
    switch (k) {
    case OPN_MUL:
        if (fl)
            s.v.f = 1;
        else if (gx__dtype_is_complex(acc))
            s.v.c[0] = 1;
        else
            s.v.i = 1;
        break;
    case OPN_MAX:
    case OPN_MIN:
        if (fl)
            s.v.f = NAN;
        else if (acc == GX_BOOL)
            s.v.i = k == OPN_MIN;
        else
            s = opn_int_extreme(acc, k == OPN_MIN);
        break;
    case OPN_AND: s.v.i = acc == GX_BOOL ? 1 : -1; break; /* all ones (u64 too: shared storage) */
    case OPN_LAND: s.v.i = 1; break;
    default: break; /* + | ^ || count: zero */
    }
    return s;
}
