/* gx/reduce.h -- part of gx.h (include gx.h, not this file).
 *
 * Reductions: an array (or a lambda mapped over broadcast inputs, with no temporary
 * array) folded with an operator to one value, or along any set of axes.
 *
 * Operators (`op`), the same in every gx call that takes one (gx_scan, the pipeline
 * terminals): "+" "*" "max" "min" "&" "|" "^" "&&" "||", the words "sum" "prod"
 * "maximum" "minimum" (= "+" "*" "max" "min") "all" "any" (= "&&" "||"), or a lambda
 * "a, b -> ..." of two parameters.  The reductions of this header also take "count"
 * and "mean" (statistics rather than operators: scans and pipelines reject them).
 * A lambda operator must be associative AND commutative (gx folds in a parallel
 * tree, not left to right) and needs opts->init, its neutral element (used as the
 * start of every partial, and the result of an empty reduction).
 *
 * Result dtypes (unless opts->dtype says otherwise): "+" "*" "sum" "prod": i64 for
 * bool and signed ints, u64 for unsigned ints, the input dtype for floats; "max" "min"
 * "&" "|" "^": the input dtype ("&" "|" "^" reject floats); "&&" "||" "any" "all":
 * bool (x != 0); "count": i64 (number of x != 0); "mean": f32 for f32, else f64; a
 * lambda: opts->dtype, else the init's dtype.
 *
 * Accuracy of f32 sums: "+" "sum" and "mean" of f32 elements (an array, or a map
 * that gives f32) accumulate in f64 on every backend and round to f32 once, at the
 * end, so for n elements of exact sum S:
 *     |sum error|  <= u_f32 * |S| + n * eps_f64 * sum|x|
 *     |mean error| <= u_f32 * |S| / n + eps_f64 * sum|x|
 * (u_f32 = 2^-24, half an f32 ulp: the one rounding to nearest; eps_f64 = 2^-52):
 * in practice the f32 nearest to S (the tests check that it is never further off
 * than NumPy's pairwise f32 sum, and that the bound would reject the sum with any
 * one element left out, at n up to 2^22).  An explicit
 * opts->dtype of GX_F32 asks for f32 accumulation and gets it (per thread, like CUB;
 * the CPU backend folds blocks of 2048 elements and then the blocks' sums): the error
 * is that of f32 arithmetic, with no bound like the one above -- on random data it
 * stays under n * eps_f32 * max|x| (checked at 2^20 elements at every thread count
 * from 1 to 2x the cores); GX_F64 returns the f64 result.  "*" and lambda operators
 * fold in their own dtype.
 *
 * Halves (f16, bf16): elements load as f32 and fold in an f32 accumulator (unless
 * opts->dtype names another); a half result is the f32 result rounded once.  In
 * gx_mapreduce* a half map value is not rounded to half before it is accumulated:
 * "x, y -> (x-y)*(x-y)" over f16 x, y adds the f32 squares (no f16 rounding of each
 * square), as gx_pipe_mapreduce does.
 *
 * Complex arrays (c64, c128) reduce with "+" / "sum" only (gx_reduce, _to, _into,
 * gx_sum), to the input's dtype and without opts->init (GX_ERR_INVALID_ARGUMENT).
 * Any other operator, a lambda, "mean", "count", any/all and the find/arg calls are
 * GX_ERR_DTYPE: reduce a real value instead, gx_mapreduce with "z -> abs(z)" or
 * "z -> re(z)" (a map may take complex inputs; its result must be real).
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
 * (one CPU thread count): the grid is a function of (size, the operation, device)
 * and partials are combined in a fixed order without float atomics.  No flag is
 * needed.
 *
 * Results: gx_reduce, gx_mapreduce, gx_sum... wait and return a host gx_scalar.  The
 * *_to calls stay on the device: they return a new array (the input's ndim, size 1 on
 * reduced axes) at once, so the result can feed the next map or reduction without a
 * host round trip; the *_into calls write into yours instead (contiguous, the same
 * element count; its dtype is the result dtype unless it differs: then each value is
 * converted as gx.h's conventions say, or GX_ERR_DTYPE with opts->exact_dtype).
 * These are the asynchronous forms: into a 0-d (or size-1) device array the result
 * needs no host round trip, a chain of small reductions and maps queues without a
 * synchronisation, and reading the value (gx_array_get, gx_array_to_host) waits for
 * it.  They can be recorded in a graph (gx/graph.h); the host-scalar forms cannot.
 *
 * Finishing: opts->finish, a lambda of one parameter such as "s -> sqrt(s)", maps
 * each folded value (after "mean"'s division) in the reduction's own kernel, so a
 * norm is one call and one launch:
 *     gx_reduce_opts o = {.finish = "s -> sqrt(s)"};
 *     gx_mapreduce_into(ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, &o, dist);
 * Its parameter has the result dtype (above); its value is converted to the result
 * dtype as a C cast (a finish does not change the result's dtype).  It sees the
 * named constants (opts->consts) and gx_define's functions, not bound arrays.  An
 * empty reduction's neutral element is finished too ("+" of nothing with
 * "s -> s + 1" gives 1).  The calls that return indices (gx_find*, gx_arg*) refuse
 * a finish (GX_ERR_INVALID_ARGUMENT); a malformed one is GX_ERR_SYNTAX or
 * GX_ERR_TYPE with a caret under the column, like any lambda; a complex value is
 * GX_ERR_DTYPE. */
#ifndef GX_REDUCE_H
#define GX_REDUCE_H
#include "../gx.h"
#include <stdbool.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct gx_reduce_opts {
    const int *axes; /* axes to reduce (negative count from the end); NULL or naxes 0: all */
    int naxes;
    const gx_scalar *init;  /* the operator's neutral element; required for a lambda operator */
    gx_dtype dtype;         /* result/accumulator dtype; GX_DTYPE_DEFAULT (0) = the operator's */
    const gx_const *consts; /* named constants for the map lambda, may be NULL */
    int nconsts;
    int exact_dtype;      /* *_into: out's dtype must be the result dtype (else GX_ERR_DTYPE) */
    const gx_bind *arrays; /* gx_mapreduce*: named arrays the map reads by index (gx.h's gx_bind) */
    int narrays;
    int unchecked;        /* nonzero: no bounds checks on arrays[] reads (see gx_map_opts) */
    const char *finish;   /* a one-parameter lambda applied to each result in the same
                           * kernel, before it is stored; NULL: none (see "Finishing") */
    uint64_t reserved[3]; /* zero (see the conventions in gx.h) */
} gx_reduce_opts;

/* Folds every element of x with `op` into *out (waits for the result).  opts may be
 * NULL; opts->axes must be NULL/all here (use gx_reduce_to for axes). */
GX_API gx_status gx_reduce(gx_ctx *ctx, const char *op, gx_array *x, const gx_reduce_opts *opts, gx_scalar *out);
/* Same, into a new device array (over opts->axes, or all axes); does not wait. */
GX_API gx_status gx_reduce_to(gx_ctx *ctx, const char *op, gx_array *x, const gx_reduce_opts *opts, gx_array **out);
/* Same, into your array `out` (see "Results" above). */
GX_API gx_status gx_reduce_into(gx_ctx *ctx, const char *op, gx_array *x, const gx_reduce_opts *opts, gx_array *out);
/* Folds map(in[0][i], in[1][i], ...) (numpy broadcasting, like gx_map) with `op`, in
 * one kernel and without a temporary array.  The map's result type is the element
 * type the operator sees.  The map may read arrays bound in opts->arrays (gx_bind,
 * docs/LAMBDAS.md), over every axis and along opts->axes; an index out of range is
 * GX_ERR_INDEX naming the first offending element (over every axis: row-major, of the
 * broadcast inputs; along axes: the output element, row-major over the kept axes, and
 * the reduced element, row-major over the reduced axes), and such a call waits.
 * Plain reductions (gx_reduce*) with opts->arrays are GX_ERR_INVALID_ARGUMENT. */
GX_API gx_status gx_mapreduce(gx_ctx *ctx, const char *map, const char *op, int nin, gx_array *const *in,
                              const gx_reduce_opts *opts, gx_scalar *out);
GX_API gx_status gx_mapreduce_to(gx_ctx *ctx, const char *map, const char *op, int nin, gx_array *const *in,
                                 const gx_reduce_opts *opts, gx_array **out);
GX_API gx_status gx_mapreduce_into(gx_ctx *ctx, const char *map, const char *op, int nin, gx_array *const *in,
                                   const gx_reduce_opts *opts, gx_array *out);

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
/* findmin ("min") / findmax ("max") over opts->axes (or all) into new device arrays:
 * values (x's dtype) and/or indices (i64); either out pointer may be NULL. */
GX_API gx_status gx_find_to(gx_ctx *ctx, const char *which, gx_array *x, const gx_reduce_opts *opts, gx_array **values,
                            gx_array **indices);
/* The same into your arrays (values: x's dtype; indices: i64; either may be NULL). */
GX_API gx_status gx_find_into(gx_ctx *ctx, const char *which, gx_array *x, const gx_reduce_opts *opts, gx_array *values,
                              gx_array *indices);

#ifdef __cplusplus
}
#endif
#endif
