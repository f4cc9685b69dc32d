/* sort_priv.h -- the seam between sorting's API (src/ops/sort.c: gx/sort.h, argument
 * checks, views, the CPU paths) and its CUDA kernels (src/ops/sort_cuda.c: generated
 * CUDA source, launched through the backend table like every other op).
 *
 * Contract of every function here:
 *   - called with the context lock held, on a context whose target is CUDA;
 *   - pointers are device pointers to CONTIGUOUS buffers (sort.c materialises views),
 *     inputs and outputs never overlap (sort.c copies for in-place calls);
 *   - work is queued on the context's current stream; a function may wait on the host
 *     only where it says so;
 *   - temporary device memory comes from gx__scratch_alloc (or the pool) and is
 *     released before return (stream-ordered: the pool is stream-ordered);
 *   - a failure returns a status with gx__err's message; outputs are then undefined.
 *
 * Order of keys (the same on the CPU, sort.c): ascending is NumPy's order.  Integers
 * and bool by value.  Floats: -inf < ... < -0.0 == 0.0 < ... < inf < NaN; -0.0 and 0.0
 * are EQUAL (kept in input order: the sort is stable) and every NaN, whatever its sign
 * and payload, sorts last, also equal among themselves.  Descending reverses the
 * order of non-NaN keys but keeps equal keys in input order (it is not the reverse of
 * the ascending output) and still puts NaNs last.  The output holds the input's
 * original bit patterns (a -0.0 stays -0.0, a NaN keeps its payload).
 *
 * One way to get that with radix sorting: map each key to an unsigned integer whose
 * unsigned order is the wanted order (floats: flip all bits of negatives, set the sign
 * bit of positives; ints: flip the sign bit; descending: complement), with -0.0 mapped
 * as 0.0 and every NaN to one value past +inf; count during the first pass how many
 * keys were mapped lossily (-0.0, non-canonical NaNs), and when that count is not zero
 * rewrite the zero and NaN ranges of keys_out from the input in input order (a stable
 * compaction of those keys), which restores the original bits. */
#ifndef GX_OPS_SORT_PRIV_H
#define GX_OPS_SORT_PRIV_H

#include "core/gx_internal.h"

/* One sort: n keys, as nrows independent rows of rowlen keys each (nrows * rowlen ==
 * n; nrows == 1 sorts the whole array), with optional values that follow their keys.
 * Stable.  Key dtypes: GX_BOOL, all integers, GX_F32, GX_F64 (complex keys are sorted
 * by sort.c as two stable passes).  Values: vbytes 0 (keys only), 1, 2, 4, 8 or 16
 * bytes each, moved as raw bits.  n up to 2^40 (above 2^31 in particular). */
typedef struct gx__sort_req {
    gx_dtype kdtype;
    const void *keys_in;
    void *keys_out; /* NULL: only the values are wanted (argsort), the sort may then
                     * keep keys in scratch */
    size_t vbytes;
    const void *vals_in; /* NULL with vbytes > 0: the values are 0, 1, ..., rowlen-1
                          * as int64 per row (argsort without an index array) */
    void *vals_out;
    int64_t n, nrows, rowlen;
    int descending;
} gx__sort_req;

gx_status gx__sort_cuda(gx_ctx *ctx, const gx__sort_req *r);

/* The k largest (largest = 1) or smallest keys of each row, sorted (largest first for
 * largest = 1), with their int64 indices within the row; equal keys: the lower index
 * first; NaNs count as past every number in both directions (so they are chosen only
 * when a row has fewer than k numbers).  1 <= k <= rowlen.  vals_out and idx_out hold
 * nrows * k items. */
typedef struct gx__topk_req {
    gx_dtype kdtype;
    const void *keys_in;
    int64_t nrows, rowlen, k;
    int largest;
    void *vals_out;
    int64_t *idx_out;
} gx__topk_req;

gx_status gx__topk_cuda(gx_ctx *ctx, const gx__topk_req *r);

/* Histogram of n values of dtype xdtype (ints, bool, f32, f64) into nbins bins:
 *   GX__HIST_EVEN:  bin = floor((x - lo) * (nbins / (hi - lo))) for lo <= x < hi, the
 *                   value x == hi is dropped ([lo, hi) half-open, as the issue says);
 *                   computed in f64 so the host reference agrees;
 *   GX__HIST_EDGES: edges[0..nbins] (f64, increasing, device): bin i holds
 *                   edges[i] <= x < edges[i+1];
 *   GX__HIST_INT:   integer values, bin = x - base for base <= x < base + nbins
 *                   (bincount: base 0; unique's counting path: base = min(x)).  The
 *                   difference is taken modulo 2^64 on the value as a u64 (a signed
 *                   value sign-extended), so it never overflows and every value below
 *                   base or past the bins wraps to >= nbins: dropped.
 * NaNs and values outside are dropped and counted into *dropped_out (an int64 on the
 * device).  counts_out: nbins int64 without weights; with weights (wdtype any real
 * dtype, n of them) nbins f64 holding the sum of weights.  Both outputs are
 * overwritten (not accumulated into). */
typedef enum gx__hist_kind { GX__HIST_EVEN, GX__HIST_EDGES, GX__HIST_INT } gx__hist_kind;

typedef struct gx__hist_req {
    gx__hist_kind kind;
    gx_dtype xdtype;
    const void *x;
    int64_t n, nbins;
    double lo, hi;       /* EVEN */
    const double *edges; /* EDGES */
    gx_dtype wdtype;     /* GX_DTYPE_DEFAULT: no weights */
    const void *w;
    void *counts_out;
    int64_t *dropped_out;
    int64_t base; /* INT: the value of bin 0 (as a u64 bit pattern for u64 x); last, so
                   * that requests written positionally leave it 0 */
} gx__hist_req;

gx_status gx__hist_cuda(gx_ctx *ctx, const gx__hist_req *r);

/* gx_unique's path on ctx from now on (sort.c; tests run both on the same data):
 * 0 auto (counting for integers of a small range, else sorting), 1 always sort,
 * 2 count whenever the range allows (max - min < 2^24; integers and bool only).
 * The default is GX_UNIQUE_PATH (auto|sort|count), read once per context. */
gx_status gx__unique_path_set(gx_ctx *ctx, int path);
/* The path ctx's latest non-empty gx_unique took: 1 sort, 2 count (0: none yet). */
int gx__unique_path_last(gx_ctx *ctx);

#endif
