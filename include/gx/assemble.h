/* gx/assemble.h -- part of gx.h (include gx.h, not this file).
 *
 * Assembling arrays from arrays: concatenate, stack, repeat, tile, pad, flip, roll
 * (NumPy semantics).  Every function returns a NEW dense array through `out` (set to
 * NULL on failure) with the dtype of its input(s); inputs may be any views (strided,
 * permuted, negatively strided).  Each result is made of strided copies between
 * views of the input and of the output (gx_array_copy_into's kernel), so it runs at
 * copy speed on every backend; nothing converts dtypes.
 *
 * Axes: an axis counts from 0; a negative one counts from the end (-1 is the last).
 * An axis outside the array is GX_ERR_INVALID_ARGUMENT.  A NULL or released array is
 * GX_ERR_INVALID_ARGUMENT / GX_ERR_INVALID_HANDLE; a result with more than
 * GX_MAX_DIMS axes, or whose extent overflows int64, is GX_ERR_SHAPE.
 *
 * A dense copy of any view ("make it contiguous") is gx_array_clone(a,
 * GX_DTYPE_DEFAULT, &out) (gx.h): one strided copy, a memcpy when a is dense. */
#ifndef GX_ASSEMBLE_H
#define GX_ASSEMBLE_H
#include "../gx.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The `axis` of gx_flip and gx_roll that means every axis (gx_flip: reverse them
 * all; gx_roll: roll the array as if flattened, NumPy's axis=None). */
#define GX_ALL_AXES (-2147483647 - 1)

/* np.concatenate: the n >= 1 arrays joined along `axis`.  They must have one dtype
 * (else GX_ERR_DTYPE naming both), one context (else GX_ERR_INVALID_ARGUMENT), at
 * least one axis, and one ndim and shape except along `axis` (else GX_ERR_SHAPE
 * naming both shapes).  Result: their shape with the sum of the `axis` extents
 * there.  Empty inputs are allowed (they add nothing). */
GX_API gx_status gx_concat(gx_ctx *ctx, int n, gx_array *const *arrays, int axis, gx_array **out);

/* np.stack: the n >= 1 arrays of ONE shape (else GX_ERR_SHAPE), dtype and context,
 * stacked along a new axis `axis` (0..ndim, or -1 .. -(ndim+1) from the end).  Result
 * shape: their shape with n inserted at `axis`.  0-d inputs give a 1-d result. */
GX_API gx_status gx_stack(gx_ctx *ctx, int n, gx_array *const *arrays, int axis, gx_array **out);

/* np.repeat with one count: each element of a repeated `repeats` (>= 0, else
 * GX_ERR_INVALID_ARGUMENT) times in a row along `axis` (a needs at least one axis).
 * Result: a's shape with shape[axis] * repeats there. */
GX_API gx_status gx_repeat(gx_array *a, int64_t repeats, int axis, gx_array **out);

/* np.tile: a repeated reps[k] (>= 0) times along each axis.  nreps (0..GX_MAX_DIMS)
 * counts reps; when nreps < a's ndim the reps are prepended with 1s, when nreps is
 * larger a's shape is prepended with 1s.  Result ndim max(ndim, nreps), extents
 * shape[k] * reps[k]. */
GX_API gx_status gx_tile(gx_array *a, const int64_t *reps, int nreps, gx_array **out);

typedef enum gx_pad_mode {
    GX_PAD_CONSTANT = 0, /* the pad holds one value */
    GX_PAD_EDGE,         /* the pad repeats the edge element */
    GX_PAD_REFLECT       /* NumPy 'reflect': mirrored about the edge, which is not repeated
                          * ([1 2 3] padded by 2 on each side: [3 2 1 2 3 2 1]); pads
                          * longer than the axis reflect again, as NumPy does */
} gx_pad_mode;

/* np.pad: a with before[k] elements before and after[k] elements after it along each
 * axis k (ndim entries each, >= 0, else GX_ERR_INVALID_ARGUMENT).  Result extents
 * before[k] + shape[k] + after[k].  `value` (GX_PAD_CONSTANT only) points at one
 * element of a's dtype; NULL means zero.  EDGE and REFLECT need a nonempty axis
 * where they pad (else GX_ERR_SHAPE, as NumPy refuses). */
GX_API gx_status gx_pad(gx_array *a, const int64_t *before, const int64_t *after, gx_pad_mode mode, const void *value,
                        gx_array **out);

/* np.flip: a copy of a with the order along `axis` reversed (GX_ALL_AXES: along
 * every axis).  Same shape. */
GX_API gx_status gx_flip(gx_array *a, int axis, gx_array **out);

/* np.roll: a copy of a with the elements along `axis` shifted by `shift` positions
 * (out[(i + shift) mod n] = a[i]); shift may be negative or exceed the extent.
 * GX_ALL_AXES rolls the flattened array and keeps the shape.  Same shape. */
GX_API gx_status gx_roll(gx_array *a, int64_t shift, int axis, gx_array **out);

#ifdef __cplusplus
}
#endif
#endif /* GX_ASSEMBLE_H */
