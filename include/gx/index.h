/* gx/index.h -- part of gx.h (include gx.h, not this file).
 *
 * Indexing as operations: gather (gx_take), scatter (gx_put), scatter-reduce
 * (gx_scatter_reduce, np.add.at semantics), boolean-mask assignment (gx_mask_assign,
 * gx_mask_copy) and gx_where.
 *
 * Index arrays: any integer dtype (i8 i16 i32 i64 u8 u16 u32 u64; bool and floats are
 * GX_ERR_DTYPE), any shape, any view.  A negative index of a signed dtype counts from
 * the end, as in NumPy (-1 is the last element); an unsigned index never does.
 *
 * Bounds: every index is checked on the device.  An index outside [-n, n) makes the
 * call return GX_ERR_INDEX, whose message names the operation, the first offending
 * position in idx (flat, row-major; when several are out of range, the smallest),
 * the index value there, the axis and its size.  A check that fails never performs
 * the access: a gather writes 0 at that output position, a scatter skips that
 * element (so memory is never corrupted).  What happened to the rest on
 * GX_ERR_INDEX: gx_take's result is not returned (*out stays NULL); gx_take_into's
 * out holds the in-range elements and 0 elsewhere; gx_put and gx_scatter_reduce have
 * written / combined every in-range element of x and skipped the others -- except
 * when x is not dense (a strided view), where x is left unchanged.
 * The check costs a compare per index in the kernel, a 32-byte copy to the device
 * and a waiting 32-byte read back per call (so a checked call returns when its work
 * is done).  opts->unchecked = 1 skips all three; out-of-range indices are then
 * UNDEFINED BEHAVIOUR (a fault or a wrong write).  Off by default.
 *
 * Inputs that are views (strided, permuted, negatively strided) are accepted
 * everywhere; gx makes a dense copy of such an idx / values / x first (and writes a
 * scattered x back into the view), so dense inputs are the fast path.  An idx or
 * values array sharing storage with x is copied first too, so x[idx] = x[...] is safe.
 * Every array must belong to ctx (else GX_ERR_INVALID_ARGUMENT). */
#ifndef GX_INDEX_H
#define GX_INDEX_H
#include "../gx.h"
#include "assemble.h" /* GX_ALL_AXES */
#ifdef __cplusplus
extern "C" {
#endif

/* Options of every call here.  All zero (or NULL) = the defaults. */
typedef struct gx_index_opts {
    int unchecked;        /* nonzero: no bounds check (out-of-range indices are undefined
                        * behaviour, see above); default 0: checked */
    int deterministic;    /* gx_scatter_reduce: results that do not depend on scheduling
                        * (see its contract); default 0 */
    int exact_dtype;      /* the *_into calls: nonzero = out's dtype must equal the result
                        * dtype (else GX_ERR_DTYPE); 0 = convert as gx.h's conventions say */
    uint64_t reserved[6]; /* zero (see the conventions) */
} gx_index_opts;

/* np.take(x, idx, axis): the elements of x at the positions idx along `axis`.
 * Result shape: x.shape[:axis] + idx.shape + x.shape[axis+1:], dtype x's (any gx
 * dtype).  axis counts from 0, negative from the end; axis = GX_ALL_AXES takes from x
 * flattened (row-major), result shape idx.shape (numpy's axis=None).  x needs at least
 * one axis unless axis is GX_ALL_AXES.  An empty idx gives an empty result; a
 * non-empty idx into an axis of extent 0 is GX_ERR_INDEX.  Errors: GX_ERR_DTYPE (idx
 * not an integer dtype), GX_ERR_INVALID_ARGUMENT (bad axis, NULLs), GX_ERR_SHAPE (the
 * result would have more than GX_MAX_DIMS axes), GX_ERR_INDEX (see above). */
GX_API gx_status gx_take(gx_ctx *ctx, gx_array *x, gx_array *idx, int axis, const gx_index_opts *opts, gx_array **out);
/* The same written into `out` (any view), which must have the result shape (else
 * GX_ERR_SHAPE naming both shapes); converted to out's dtype unless opts->exact_dtype. */
GX_API gx_status gx_take_into(gx_ctx *ctx, gx_array *x, gx_array *idx, int axis, const gx_index_opts *opts,
                              gx_array *out);

/* np.put(x, idx, values): x.flat[idx[j]] = values[j] for every position j of idx.
 * values broadcasts to idx's shape (numpy rules; else GX_ERR_SHAPE naming both
 * shapes) and is converted to x's dtype as a C cast (gx.h's conventions; complex into
 * real is GX_ERR_DTYPE).  Duplicate indices: one of their values wins -- on the CPU
 * backend always the last (highest position in idx), as NumPy; on a GPU an
 * unspecified one of them (for c64/c128 the real part and the imaginary part each come
 * from one of them, not always the same one: a GPU stores the two parts separately).
 * Give distinct indices (or use the CPU backend) where that matters.  x: any dtype,
 * any view (flattened row-major). */
GX_API gx_status gx_put(gx_ctx *ctx, gx_array *idx, gx_array *values, const gx_index_opts *opts, gx_array *x);

/* np.<op>.at(x, idx, values): x.flat[idx[j]] = x.flat[idx[j]] op values[j] for every
 * position j of idx, every duplicate counted (unbuffered, as np.add.at).  values as in
 * gx_put (broadcast to idx's shape, converted to x's dtype); the combination is
 * computed in x's dtype.  x's own values are the starting values (zero it first for a
 * plain histogram / segment sum).
 * op: "+" "*" "max" "min" (also "sum" "prod" "maximum" "minimum"), or a two-parameter
 * lambda "a, b -> ..." where a is x's current value and b the incoming one, both of
 * x's dtype; its value is converted to x's dtype.  Other names are
 * GX_ERR_INVALID_ARGUMENT.  Float max/min ignore NaN as gx_reduce does: a number
 * beats NaN, so the result is NaN only where x and every value sent there are NaN.
 * Dtypes: "+" and "*" take every numeric dtype (bool is GX_ERR_DTYPE; complex takes
 * "+" only); max/min every real dtype (bool: or / and); lambdas every real dtype.
 * Integers wrap modulo 2^bits.
 * Order and determinism: integer results (and max/min, up to the sign of a zero) are
 * the same in any order.  Float "+" and "*" and lambdas depend on the order of the
 * combinations: on the CPU backend it is always the order of idx (the sequential
 * loop, bit for bit, whatever the thread count); on a GPU it is the order in which
 * atomic operations land, which varies from run to run.
 * opts->deterministic = 1 asks for results that do not depend on scheduling: on the
 * CPU that is always so; on a GPU, "+" into f32 or f64 then accumulates in 64-bit
 * fixed point: each value is rounded to a multiple of 2^-s, where s is the largest
 * shift for which n * max|value| * 2^s < 2^62 (n: idx's size; max over the finite
 * values), the integer sums are exact, and each x element gets x + sum * 2^-s rounded
 * once (in f64 for f32 data).  The result is the same on every run and device; its
 * error is below n * 2^-s / 2 per element (values much smaller than the largest one
 * lose digits; for f32 data with up to 2^28 values of one magnitude, below f32's own
 * rounding).  +-inf and NaN values give +-inf / NaN as IEEE sums do.  On a GPU,
 * deterministic with another op or dtype (float "*", lambdas on floats, complex) is
 * GX_ERR_UNSUPPORTED; with integers or max/min it is accepted (always deterministic). */
GX_API gx_status gx_scatter_reduce(gx_ctx *ctx, const char *op, gx_array *idx, gx_array *values,
                                   const gx_index_opts *opts, gx_array *x);

/* torch's index_add_ / index_copy_ / index_reduce_ along one axis: for every position
 * (..., j, ...) of values, with j on `axis`,
 *     x[..., idx[j], ...] = x[..., idx[j], ...] op values[..., j, ...]
 * (op "=": the element is replaced, as index_copy_).  axis counts from 0, negative
 * from the end; x needs at least one axis.  idx: 1-d, any integer dtype, each index
 * in [-n, n) where n = x.shape[axis] (negatives count from the end, as torch and
 * numpy do).  values: x's shape with extent len(idx) on the axis (else GX_ERR_SHAPE
 * naming the three shapes), any view, converted to x's dtype as gx_put converts.
 * op: "=" (copy), or any operator of gx_scatter_reduce ("+" "*" "max" "min", their
 * long names, or a lambda "a, b -> ..."), with its dtypes, its handling of NaN and
 * duplicates (every duplicate index combines, as index_add_ does; with "=" one of
 * them wins, as gx_put says), and its ordering and opts->deterministic rules: this is
 * gx_scatter_reduce (or gx_put) on x flattened, each element of values sent to its
 * row-major position in x.  x: any view (written back as gx_scatter_reduce does).
 * An empty values writes nothing.  Bounds: an index outside [-n, n) is GX_ERR_INDEX
 * naming its position in idx, its value, the axis and x's shape, checked before
 * anything is written (a pass over idx and a wait); opts->unchecked skips that
 * (out-of-range indices are then undefined behaviour).  Errors: as gx_scatter_reduce,
 * plus GX_ERR_INVALID_ARGUMENT (bad axis, 0-d x), GX_ERR_SHAPE (idx not 1-d, values'
 * shape). */
GX_API gx_status gx_index_reduce(gx_ctx *ctx, const char *op, gx_array *x, int axis, gx_array *idx, gx_array *values,
                                 const gx_index_opts *opts);

/* x[mask] = *value: every element of x where mask is true becomes the value
 * (converted to x's dtype as a C cast; complex into real is GX_ERR_DTYPE).  mask: bool
 * (else GX_ERR_DTYPE), broadcasting to x's shape (numpy rules; else GX_ERR_SHAPE
 * naming both shapes).  x: any view.  One element-wise pass (gx_map_into). */
GX_API gx_status gx_mask_assign(gx_ctx *ctx, gx_array *mask, const gx_scalar *value, gx_array *x);
/* x[mask] = other[mask]: where mask is true, x takes other's element.  other
 * broadcasts to x's shape like mask, and is converted to x's dtype as above. */
GX_API gx_status gx_mask_copy(gx_ctx *ctx, gx_array *mask, gx_array *other, gx_array *x);

/* np.where(cond, a, b): a where cond is true, else b, with numpy broadcasting of the
 * three.  cond: bool or any real dtype (nonzero is true; complex is GX_ERR_TYPE).
 * Result dtype: a's and b's, or their promotion as lambdas promote (C's usual
 * arithmetic conversions: i8 with u8 gives i32, i32 with f32 gives f32, f32 with f64
 * gives f64; see docs/LAMBDAS.md).  One fused element-wise pass (gx_map with
 * "c, a, b -> c ? a : b").  Errors: GX_ERR_SHAPE naming the shapes that do not
 * broadcast. */
GX_API gx_status gx_where(gx_ctx *ctx, gx_array *cond, gx_array *a, gx_array *b, const gx_index_opts *opts,
                          gx_array **out);
/* The same into `out` (the broadcast shape, any view, may alias an input element for
 * element), converted to out's dtype unless opts->exact_dtype. */
GX_API gx_status gx_where_into(gx_ctx *ctx, gx_array *cond, gx_array *a, gx_array *b, const gx_index_opts *opts,
                               gx_array *out);

#ifdef __cplusplus
}
#endif
#endif /* GX_INDEX_H */
