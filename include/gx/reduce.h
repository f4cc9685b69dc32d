/* gx/reduce.h -- part of gx.h (include gx.h, not this file).
 *
 * Reductions: an array (or a lambda mapped over broadcast inputs, with no temporary
 * array) folded with an operator to one value, or along any set of axes.
 *
 * Operators (`op`): "+" "*" "max" "min" "&" "|" "^" "&&" "||", the names "sum"
 * "prod" "mean" "any" "all" "count", or a lambda "a, b -> ..." of two parameters.
 * A lambda operator must be associative AND commutative (gx folds in a parallel
 * tree, not left to right) and needs opts->init, its neutral element (used as the
 * start of every partial, and the result of an empty reduction).
 *
 * Result dtypes (unless opts->dtype says otherwise): "+" "*" "sum" "prod": i64 for
 * bool and signed ints, u64 for unsigned ints, the input dtype for floats (f32 sums
 * accumulate in f32 per thread, like CUB: error grows like n * eps * max|x| in the
 * worst case); "max" "min" "&" "|" "^": the input dtype ("&" "|" "^" reject floats);
 * "&&" "||" "any" "all": bool (x != 0); "count": i64 (number of x != 0); "mean": f32
 * for f32, else f64; a lambda: opts->dtype, else the init's dtype.
 *
 * NaN: "max"/"min" and findmax/findmin/argmax/argmin ignore NaN (like fmax/fmin):
 * the result is NaN (and the index that of the first NaN) only when every value is
 * NaN.  Ties give the FIRST index.  Indices along axes count row-major within the
 * reduced axes (for one axis: the position along it).
 *
 * Empty input (or empty reduced axes): the neutral element ("+" 0, "*" 1, "max" the
 * lowest integer / NaN for floats (fmax's neutral element), "min" the highest integer
 * / NaN, "&" all ones, "|" "^" 0, "&&" true, "||" false, count 0, a lambda's init);
 * "mean", argmin/argmax/findmin/findmax of nothing are GX_ERR_INVALID_ARGUMENT.
 *
 * Determinism: every reduction is bitwise reproducible run to run on one device
 * (one CPU thread count): the grid is a function of (size, device) and partials are
 * combined in a fixed order without float atomics.  No flag is needed.
 *
 * Results: *_scalar-style calls (gx_reduce, gx_mapreduce, gx_sum...) wait and return
 * a host gx_scalar.  The *_to calls stay on the device: they write into an array
 * (allocated when *out is NULL, with the input's ndim and size 1 on reduced axes; or
 * yours: contiguous, same element count, the result dtype) and return at once, so
 * the result can feed the next map or reduction without a host round trip. */
#ifndef GX_REDUCE_H
#define GX_REDUCE_H
#include "../gx.h"
#include <stdbool.h>
#ifdef __cplusplus
extern "C" {
#endif

/* One value of a dtype: f for f32/f64, u for u64, i for bool and the other ints,
 * c[0] + i*c[1] for c64/c128. */
typedef struct gx_scalar {
    gx_dtype dtype;
    union { double f; int64_t i; uint64_t u; double c[2]; } v;
} gx_scalar;

#define GX_SCALAR_F32(x) ((gx_scalar){GX_F32, {.f = (x)}})
#define GX_SCALAR_F64(x) ((gx_scalar){GX_F64, {.f = (x)}})
#define GX_SCALAR_I32(x) ((gx_scalar){GX_I32, {.i = (x)}})
#define GX_SCALAR_I64(x) ((gx_scalar){GX_I64, {.i = (x)}})

/* The value as a double (u64 and i64 beyond 2^53 round).  Pure, no status. */
GX_API double gx_scalar_to_f64(gx_scalar s);

typedef struct gx_reduce_opts {
    const int *axes;          /* axes to reduce (negative count from the end); NULL or naxes 0: all */
    int naxes;
    const gx_scalar *init;    /* the operator's neutral element; required for a lambda operator */
    gx_dtype dtype;           /* result/accumulator dtype; 0 (GX_BOOL) or GX_DTYPE_COUNT = default */
    const gx_const *consts;   /* named constants for the map lambda, may be NULL */
    int nconsts;
} gx_reduce_opts;

/* Folds every element of x with `op` into *out (waits for the result).  opts may be
 * NULL; opts->axes must be NULL/all here (use gx_reduce_to for axes). */
GX_API gx_status gx_reduce(gx_ctx *ctx, const char *op, gx_array *x, const gx_reduce_opts *opts, gx_scalar *out);
/* Same, into a device array (over opts->axes, or all axes); does not wait. */
GX_API gx_status gx_reduce_to(gx_ctx *ctx, const char *op, gx_array *x, const gx_reduce_opts *opts, gx_array **out);
/* Folds map(in[0][i], in[1][i], ...) (numpy broadcasting, like gx_map) with `op`, in
 * one kernel and without a temporary array.  The map's result type is the element
 * type the operator sees. */
GX_API gx_status gx_mapreduce(gx_ctx *ctx, const char *map, const char *op, int nin, gx_array *const *in,
                              const gx_reduce_opts *opts, gx_scalar *out);
GX_API gx_status gx_mapreduce_to(gx_ctx *ctx, const char *map, const char *op, int nin, gx_array *const *in,
                                 const gx_reduce_opts *opts, gx_array **out);

/* Conveniences over the whole array (the context is x's); they wait. */
GX_API gx_status gx_sum(gx_array *x, gx_scalar *out);
GX_API gx_status gx_prod(gx_array *x, gx_scalar *out);
GX_API gx_status gx_maximum(gx_array *x, gx_scalar *out);
GX_API gx_status gx_minimum(gx_array *x, gx_scalar *out);
GX_API gx_status gx_mean(gx_array *x, gx_scalar *out);
GX_API gx_status gx_any(gx_array *x, bool *out);
GX_API gx_status gx_all(gx_array *x, bool *out);
GX_API gx_status gx_count(gx_array *x, int64_t *out);
/* First index of the smallest / largest value (linear, row-major); empty x is an error. */
GX_API gx_status gx_argmin(gx_array *x, int64_t *index);
GX_API gx_status gx_argmax(gx_array *x, int64_t *index);
/* Value and first index of the smallest / largest element. */
GX_API gx_status gx_findmin(gx_array *x, gx_scalar *value, int64_t *index);
GX_API gx_status gx_findmax(gx_array *x, gx_scalar *value, int64_t *index);
/* findmin ("min") / findmax ("max") over opts->axes (or all) into device arrays:
 * values (x's dtype) and/or indices (i64); either out pointer may be NULL. */
GX_API gx_status gx_find_to(gx_ctx *ctx, const char *which, gx_array *x, const gx_reduce_opts *opts,
                            gx_array **values, gx_array **indices);

#ifdef __cplusplus
}
#endif
#endif
