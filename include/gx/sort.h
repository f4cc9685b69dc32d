/* gx/sort.h -- part of gx.h (include gx.h, not this file).
 *
 * Sorting, top-k, unique, searchsorted, histograms and bincount.
 *
 * Key dtypes: bool, every integer dtype, f32 and f64; and c64/c128 keys for gx_sort,
 * gx_argsort (and _into) and gx_sort_by_key (top-k, unique, searchsorted and the
 * histograms refuse complex with GX_ERR_DTYPE).  f16/bf16 are not array dtypes yet.
 *
 * Complex order (NumPy's): lexicographic on (isnan(re), isnan(im), re, im), i.e.
 *     R+Rj  <  R+nanj  <  nan+Rj  <  nan+nanj      (R: any non-NaN real)
 * each group ordered by its non-NaN parts (re first, then im), -0.0 == 0.0 in each
 * part, ties in input order.  Descending reverses re and im but keeps the NaN groups
 * last.  It runs as three stable passes (by im, by re, by NaN group) of the real
 * sorts below, so a complex sort costs about three real ones.
 *
 * Order (ascending is NumPy's): integers and bool by value.  Floats:
 *     -inf < ... < -0.0 == 0.0 < ... < inf < NaN
 * -0.0 and 0.0 are EQUAL (kept in input order: every sort here is stable) and every
 * NaN, whatever its sign and payload, sorts last, all NaNs equal among themselves.
 * Descending reverses the order of non-NaN keys but keeps equal keys in input order
 * (it is not the reverse of the ascending output) and still puts NaNs last.  Sorted
 * outputs hold the input's original bit patterns (a -0.0 stays -0.0, a NaN keeps its
 * payload).
 *
 * Axes: by default each row along the LAST axis is sorted on its own (an N-d array
 * of shape (..., m) is size/m independent rows; many short rows run as one job, not
 * one launch per row).  opts->flatten sorts the whole array as one row-major sequence
 * instead; the result is then 1-d.  A 0-d array is one row of one element.
 *
 * Inputs may be any view (strided, negative strides): gx reads them through a dense
 * copy where needed.  Empty inputs give empty results.  Every array must belong to
 * ctx (else GX_ERR_INVALID_ARGUMENT).
 *
 * Backends: on the CPU, long rows (2^15 keys and more): one parallel MSD radix pass
 * on order-preserving bit-flipped keys (11 bits just under the highest bit where the
 * keys differ), then each bucket sorted in cache by an 8-bit LSD radix sort, passes
 * whose digit is the same for every key skipped (a parallel 11-bit LSD sort instead
 * when one bucket holds over a quarter of the keys); rows: an 8-bit LSD radix sort
 * per row (a merge sort up to 64 keys), rows spread over the cores.
 * On CUDA the device radix/segmented sorts (src/ops/sort_cuda.c).  gx_topk on the CPU
 * selects (radix select, then a sort of the k chosen) for rows of 4096 keys and more
 * with k <= row/16, and sorts the rows otherwise; on CUDA it selects (radix select on
 * (key, position)) for rows over 2048 keys with k <= 1024, and sorts otherwise; the
 * results are the same.
 */
#ifndef GX_SORT_H
#define GX_SORT_H
#include "../gx.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ sort */

typedef struct gx_sort_opts {
    int descending;       /* nonzero: largest first (NaNs still last, ties in input order) */
    int flatten;          /* nonzero: sort the whole array as one row (result 1-d) */
    uint64_t reserved[6]; /* zero (see the conventions in gx.h) */
} gx_sort_opts;

/* A new array of x's values sorted along the last axis (x's shape and dtype), or the
 * whole array flattened (opts->flatten: shape (size,)).  opts may be NULL.
 * Errors: GX_ERR_INVALID_ARGUMENT for NULLs. */
GX_API gx_status gx_sort(gx_ctx *ctx, gx_array *x, const gx_sort_opts *opts, gx_array **out);
/* The same into `out`: x's dtype exactly (else GX_ERR_DTYPE: a sort does not
 * convert), x's shape (with flatten: any shape of x's size, filled row-major; else
 * GX_ERR_SHAPE naming both shapes), any view.  out may be x itself: in place. */
GX_API gx_status gx_sort_into(gx_ctx *ctx, gx_array *x, const gx_sort_opts *opts, gx_array *out);

/* Stable argsort: a new i64 array of x's shape (flatten: (size,)) whose row r holds
 * the positions within row r of x (flatten: flat row-major positions) that put it in
 * order; x[r, idx[r, j]] is the j-th key of the sorted row, equal keys in increasing
 * position.  np.argsort(x, kind="stable") for the default. */
GX_API gx_status gx_argsort(gx_ctx *ctx, gx_array *x, const gx_sort_opts *opts, gx_array **out);
/* The same into an i64 array of that shape (another dtype is GX_ERR_DTYPE). */
GX_API gx_status gx_argsort_into(gx_ctx *ctx, gx_array *x, const gx_sort_opts *opts, gx_array *out);

/* Sorts keys and moves values with them (stable): values has keys' shape and ANY
 * dtype (complex included: only the keys are compared).  *keys_out gets the sorted
 * keys (pass keys_out NULL if you need only the values), *values_out the values in
 * the keys' order; shapes as gx_sort (flatten: both 1-d). */
GX_API gx_status gx_sort_by_key(gx_ctx *ctx, gx_array *keys, gx_array *values, const gx_sort_opts *opts,
                                gx_array **keys_out, gx_array **values_out);

/* ------------------------------------------------------------------ top-k */

typedef struct gx_topk_opts {
    int smallest;         /* nonzero: the k smallest (smallest first); 0: the k largest, largest first */
    uint64_t reserved[7]; /* zero (see the conventions in gx.h) */
} gx_topk_opts;

/* The k largest (or smallest) keys of each row along the last axis of x, sorted, and
 * their i64 positions within the row: two new arrays of x's shape with the last axis
 * k (a 0-d x is one row of one).  Equal keys: the lower position first.  NaNs count
 * as past every number in both directions: they are chosen only when a row has fewer
 * than k numbers.  1 <= k <= the row length (else GX_ERR_INVALID_ARGUMENT; an empty
 * x with k == 0 gives empty results).  idx may be NULL when the positions are not
 * wanted.  Dtypes as gx_sort. */
GX_API gx_status gx_topk(gx_ctx *ctx, gx_array *x, int64_t k, const gx_topk_opts *opts, gx_array **vals,
                         gx_array **idx);

/* ------------------------------------------------------------------ unique */

typedef struct gx_unique_opts {
    uint64_t reserved[8]; /* zero (see the conventions in gx.h) */
} gx_unique_opts;

/* np.unique(x, return_index, return_inverse, return_counts) over x flattened:
 * *uniq gets the u sorted distinct values (1-d, x's dtype), in the sort order above
 * (-0.0 and 0.0 are one value, the first occurrence's bits kept; all NaNs are one
 * value, as NumPy's equal_nan).  The optional outputs (pass NULL for those not
 * wanted) are 1-d i64 arrays: *counts (u) how often each occurs, *first (u) the flat
 * position of its first occurrence in x, *inverse (size of x) the position in uniq of
 * each element of x (x.flat[i] equals uniq[inverse[i]]).  Empty x: empty results.
 * Dtypes as gx_sort.  Integers (and bool) whose range max - min + 1 is small next to
 * the size (at most max(4096, size / 2) values, and below 2^24) are counted instead
 * of sorted (a min/max reduction, then a histogram), with the same results;
 * GX_UNIQUE_PATH (README) forces either way. */
GX_API gx_status gx_unique(gx_ctx *ctx, gx_array *x, const gx_unique_opts *opts, gx_array **uniq, gx_array **counts,
                           gx_array **first, gx_array **inverse);

/* ------------------------------------------------------------------ searchsorted */

typedef struct gx_searchsorted_opts {
    int right;            /* nonzero: the last position (side="right"), 0: the first ("left") */
    uint64_t reserved[7]; /* zero (see the conventions in gx.h) */
} gx_searchsorted_opts;

/* np.searchsorted: for each needle v, the position at which v would be inserted into
 * the sorted haystack to keep it sorted -- left: the count of keys < v, right: the
 * count of keys <= v (in the order above, NaNs last).  A new i64 array of needles'
 * shape.  Haystack 1-d (any needles shape, any number of needles), or 2-d (R, m) with
 * needles (R, q): each needle row searches its own haystack row.  haystack and
 * needles have one dtype (else GX_ERR_DTYPE; complex is GX_ERR_DTYPE).  A haystack
 * that is not sorted ascending gives unspecified positions in [0, m] (never a crash
 * or an error).  Empty needles give an empty result; an empty haystack gives zeros. */
GX_API gx_status gx_searchsorted(gx_ctx *ctx, gx_array *haystack, gx_array *needles, const gx_searchsorted_opts *opts,
                                 gx_array **out);

/* ------------------------------------------------------------------ histograms */

typedef struct gx_histogram_opts {
    int64_t nbins;        /* uniform bins: how many (>= 1) over [lo, hi) */
    double lo, hi;        /* uniform bins' range, lo < hi, both finite */
    gx_array *edges;      /* instead of nbins/lo/hi: explicit bin edges, 1-d of nbins + 1 >= 2
                           * strictly increasing real values (any real dtype, read as f64) */
    gx_array *weights;    /* optional: x's shape, any real dtype: sum weights instead of counting */
    uint64_t reserved[4]; /* zero (see the conventions in gx.h) */
} gx_histogram_opts;

/* Histogram of x (any shape, flattened; bool, integer, f32 or f64 values).  Uniform
 * bins: value v goes to bin floor((v - lo) * (nbins / (hi - lo))) (in f64, NumPy's formula) for
 * lo <= v < hi: the range is half-open, v == hi is OUTSIDE.  Explicit edges: bin i
 * holds edges[i] <= v < edges[i+1] (the last edge is outside too).  NaNs and values
 * outside are not binned; *dropped (may be NULL) receives how many there were.
 * *counts: a new 1-d array of nbins i64 counts, or of f64 weight sums with
 * opts->weights (the weight of a dropped value is ignored).  Counts are exact; weight
 * sums are added per core in a fixed order (reproducible on one thread count).  opts
 * is required.  Errors (GX_ERR_INVALID_ARGUMENT): nbins <= 0 without edges, lo >= hi
 * or not finite, edges together with nbins/lo/hi, edges not 1-d or fewer than 2 or
 * not increasing; GX_ERR_DTYPE: complex x, weights or edges; GX_ERR_SHAPE: weights of
 * another shape.  Waits for the device when dropped is not NULL. */
GX_API gx_status gx_histogram(gx_ctx *ctx, gx_array *x, const gx_histogram_opts *opts, gx_array **counts,
                              int64_t *dropped);

typedef struct gx_bincount_opts {
    int64_t minlength;    /* at least this many bins (>= 0) */
    gx_array *weights;    /* optional: x's shape, any real dtype */
    uint64_t reserved[6]; /* zero (see the conventions in gx.h) */
} gx_bincount_opts;

/* np.bincount: x holds non-negative integers (any integer dtype or bool, any shape,
 * flattened); a new 1-d array of max(max(x) + 1, minlength) bins: i64 counts of each
 * value, or f64 sums of opts->weights.  Empty x: minlength zeros.  Errors:
 * GX_ERR_DTYPE for float or complex x, GX_ERR_INVALID_ARGUMENT for a negative value
 * (the message names it) or minlength < 0.  Waits for the device (it reads max(x)). */
GX_API gx_status gx_bincount(gx_ctx *ctx, gx_array *x, const gx_bincount_opts *opts, gx_array **counts);

/* ------------------------------------------------------------------ pipeline terminals */

struct gx_pipe; /* gx/range.h */

/* gx_sort / gx_histogram over the values a one-value pipeline produces (after its maps
 * and filters).  The pipeline's values are generated into ONE new 1-d array (as
 * gx_pipe_collect), and that array is then sorted in place (gx_sort_into with out ==
 * the collected array) and returned as *out: no array of the pipeline's input is
 * materialised and no second copy of the values is made (the sort's own scratch, as
 * for gx_sort_into, aside).  The histogram bins the collected values and releases
 * them.  Order, opts and results as gx_sort (opts->flatten changes nothing: the values
 * are 1-d) and gx_histogram (opts->weights, if given, must be 1-d of the number of
 * values the pipeline produces, else GX_ERR_SHAPE).  A pipeline of more than one value
 * per item is GX_ERR_SHAPE (gx_pipe_map it to one value first); NULL p or out is
 * GX_ERR_INVALID_ARGUMENT.  The pipeline is left as it was (run it again, or
 * gx_pipe_destroy it).  An empty stream gives an empty sorted array / zero counts. */
GX_API gx_status gx_pipe_sort(struct gx_pipe *p, const gx_sort_opts *opts, gx_array **out);
GX_API gx_status gx_pipe_histogram(struct gx_pipe *p, const gx_histogram_opts *opts, gx_array **counts,
                                   int64_t *dropped);

#ifdef __cplusplus
}
#endif
#endif
