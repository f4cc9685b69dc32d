/* opname.h -- the named operators every gx call accepts ("+", "max", "&&", ...):
 * which names exist, their default accumulator dtypes, neutral elements, and their
 * meaning written in the lambda language (how scans and pipelines run them). */
#ifndef GX_OPNAME_H
#define GX_OPNAME_H

#include "core/gx_internal.h"

typedef enum opn_kind {
    OPN_NONE = 0, /* not a name: a lambda, or unknown */
    OPN_ADD,
    OPN_MUL,
    OPN_MAX,
    OPN_MIN,
    OPN_AND,
    OPN_OR,
    OPN_XOR,
    OPN_LAND,
    OPN_LOR,
    OPN_COUNT,
    OPN_MEAN /* reductions only (gx/reduce.h): statistics, not operators */
} opn_kind;

/* The kind of a name ("+", "sum", "maximum", "any"...); OPN_NONE otherwise. */
opn_kind opn_parse(const char *op);
/* The operator's accumulator for elements of dtype `elem` (gx/reduce.h's table):
 * "+" "*" widen integers and bool to i64 / u64, "&&" "||" give bool, the others keep elem. */
gx_dtype opn_acc(opn_kind k, gx_dtype elem);
/* The operator as a lambda "a, b -> ..." over two values of dtype acc (NaN-ignoring
 * max/min for floats, like fmax/fmin).  NULL when the kind has no binary form
 * (count, mean) or does not apply to acc (bitwise on floats): *why says which. */
const char *opn_lambda(opn_kind k, gx_dtype acc, const char **why);
/* The neutral element in dtype acc (max/min of floats: NaN, as for gx_reduce). */
gx_scalar opn_neutral(opn_kind k, gx_dtype acc);
/* The names, for messages. */
#define OPN_NAMES                                                                                               \
    "\"+\" \"*\" \"max\" \"min\" \"&\" \"|\" \"^\" \"&&\" \"||\" (or \"sum\" \"prod\" \"maximum\" \"minimum\" " \
    "\"all\" \"any\")"

#endif
