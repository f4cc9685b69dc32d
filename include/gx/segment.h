/* gx/segment.h -- part of gx.h (include gx.h, not this file).
 *
 * Ragged segments: a 1-d array x of n elements cut into nseg consecutive segments
 * by CSR offsets [0, o1, ..., n] (nseg + 1 values): segment s is x[offsets[s] ..
 * offsets[s+1]).  Segmented reduce, scan, argmin/argmax; reduce-by-key over runs of
 * equal adjacent keys (Thrust's reduce_by_key) and run-length encoding.
 *
 * Inputs: x (and keys, values) are 1-d arrays of bool, an integer dtype, f32 or f64
 * (anything else, complex included, is GX_ERR_DTYPE; another ndim is GX_ERR_SHAPE
 * naming the shape).  Views are accepted (a strided or reversed view is read through
 * a dense copy).  offsets is a 1-d array of any integer dtype (a float or bool one is
 * GX_ERR_DTYPE) with nseg + 1 >= 1 values: offsets[0] == 0, non-decreasing,
 * offsets[nseg] == n.  Each of these is checked on the device (one pass over the
 * offsets, a flag word read back, so the call waits for that check): a violation is
 * GX_ERR_INVALID_ARGUMENT naming the FIRST bad position k and its value.
 * opts->unchecked skips the check (and the wait): bad offsets then give undefined
 * results and may read out of bounds.
 *
 * Operators: the names of gx/reduce.h ("+" "*" "max" "min" "&" "|" "^" "&&" "||" and
 * their word forms; "count" and "mean" are GX_ERR_INVALID_ARGUMENT) or a lambda
 * "a, b -> ..." with opts->init.  opts->init is the operator's NEUTRAL element, as
 * for gx_reduce: it starts every segment and every partial, so a value that is not
 * neutral gives unspecified results.  A named operator's default is its neutral
 * element (gx/reduce.h's table: "max" of floats NaN, ...).  Segments are folded
 * strictly left to right in index order (partials of one segment are combined in
 * index order, never re-associated by arrival), so a lambda only needs to be
 * associative, not commutative.
 *
 * Result dtypes: as gx_reduce's ("+" of ints: i64/u64, "&&": bool, ...), or
 * opts->dtype.  f32 "+" / "sum" accumulates each segment in f64 and rounds once, so a
 * segment of m elements of exact sum S is within u_f32 |S| + m eps_f64 sum|x| (the
 * f32 nearest to S in practice); opts->dtype = GX_F32 accumulates in f32, left to
 * right (error up to m eps_f32 sum|x|).  Other float operators fold in their dtype.
 *
 * Determinism: every result is bitwise reproducible run to run on one device (one
 * CPU thread count): each segment is folded in index order; pieces of a segment split
 * over GPU tiles are combined in tile order by a second small kernel (no atomics).
 *
 * Empty segments: reduce gives the neutral element (or init); argmin/argmax give -1.
 * nseg == 0 (offsets [0], n == 0) gives empty results.
 *
 * Kernels: the GPU splits the merged sequence of (elements, segment ends) into
 * fixed tiles of 2048 items per block of 128 threads (merge path), so long, short and
 * empty segments all run at full occupancy; the CPU splits it into per-thread tiles.
 *
 * Not done: pipelines (gx_pipe) have no segmented terminal yet. */
#ifndef GX_SEGMENT_H
#define GX_SEGMENT_H
#include "../gx.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct gx_segment_opts {
    const gx_scalar *init;  /* the operator's neutral element; required for a lambda operator */
    gx_dtype dtype;         /* result / accumulator dtype; GX_DTYPE_DEFAULT (0) = the operator's */
    const gx_const *consts; /* named constants for a lambda operator, may be NULL */
    int nconsts;
    int exclusive;        /* gx_segment_scan: 1 = out[k] excludes x[k] (a segment's first is init) */
    int exact_dtype;      /* *_into: out's dtype must be the result dtype (else GX_ERR_DTYPE) */
    int unchecked;        /* 1: do not validate offsets (no wait; bad offsets: undefined) */
    uint64_t reserved[6]; /* zero (see the conventions in gx.h) */
} gx_segment_opts;

/* out[s] = op-fold of x[offsets[s] .. offsets[s+1]) for each of the nseg segments: a
 * new 1-d array of nseg values of the result dtype (see above).  opts may be NULL. */
GX_API gx_status gx_segment_reduce(gx_ctx *ctx, const char *op, gx_array *x, gx_array *offsets,
                                   const gx_segment_opts *opts, gx_array **out);
/* The same into your array: contiguous 1-d of nseg elements (else GX_ERR_SHAPE naming
 * both shapes); another dtype is converted (or GX_ERR_DTYPE with opts->exact_dtype). */
GX_API gx_status gx_segment_reduce_into(gx_ctx *ctx, const char *op, gx_array *x, gx_array *offsets,
                                        const gx_segment_opts *opts, gx_array *out);

/* The running `op` within each segment, restarting at every segment: a new array of
 * x's shape (n,) in the accumulator dtype (as gx_scan: the operator's result dtype, or
 * opts->dtype; f32 "+" accumulates in f32 here, left to right within a segment).
 * Inclusive: out[k] = x[start] op ... op x[k]; opts->exclusive: out[k] = init op
 * x[start] op ... op x[k-1] (a segment's first output is init / the neutral element). */
GX_API gx_status gx_segment_scan(gx_ctx *ctx, const char *op, gx_array *x, gx_array *offsets,
                                 const gx_segment_opts *opts, gx_array **out);
/* The same into your array of shape (n,) (converted, or GX_ERR_DTYPE with exact_dtype). */
GX_API gx_status gx_segment_scan_into(gx_ctx *ctx, const char *op, gx_array *x, gx_array *offsets,
                                      const gx_segment_opts *opts, gx_array *out);

/* For each segment, the index WITHIN the segment (0 = its first element) of its
 * smallest / largest value, as a new i64 array of nseg values; -1 for an empty
 * segment.  As gx_argmin: NaN is ignored unless the segment is all NaN (then the first
 * NaN), ties give the first index.  opts may be NULL (only unchecked is read;
 * everything else must be zero/default). */
GX_API gx_status gx_segment_argmin(gx_ctx *ctx, gx_array *x, gx_array *offsets, const gx_segment_opts *opts,
                                   gx_array **out);
GX_API gx_status gx_segment_argmax(gx_ctx *ctx, gx_array *x, gx_array *offsets, const gx_segment_opts *opts,
                                   gx_array **out);

/* Runs of EQUAL ADJACENT keys (as thrust/CUB: keys need not be sorted; a key that
 * comes back later starts a new run).  Keys compare with == , so every NaN key is a
 * run of its own (NaN != NaN, as thrust's equal_to).  keys and values are 1-d of one
 * length (else GX_ERR_SHAPE naming both shapes).  Results, *nruns values each:
 * *unique_keys (keys' dtype: the first key of each run), *reduced (op folded over the
 * run's values, dtype as gx_segment_reduce; opts as gx_segment_reduce's, unchecked
 * ignored); *nruns is the number of runs (0 for empty keys).  Any out pointer but
 * nruns may be NULL (not computed).  Waits (the run count is read back). */
GX_API gx_status gx_reduce_by_key(gx_ctx *ctx, const char *op, gx_array *keys, gx_array *values,
                                  const gx_segment_opts *opts, gx_array **unique_keys, gx_array **reduced,
                                  int64_t *nruns);
/* Run-length encoding of x (1-d, bool/ints/f32/f64; NaN: runs of one, as above):
 * *values (x's dtype) and *counts (i64, each >= 1), *nruns values each; either array
 * pointer may be NULL.  Waits. */
GX_API gx_status gx_run_length_encode(gx_ctx *ctx, gx_array *x, gx_array **values, gx_array **counts,
                                      int64_t *nruns);

struct gx_pipe; /* gx/range.h */

/* Pipeline terminals (gx/range.h): gx_segment_reduce / gx_segment_scan over the values
 * a one-value pipeline produces (after its maps and filters), with CSR offsets whose
 * last value must equal the number of values produced (GX_ERR_INVALID_ARGUMENT naming
 * both otherwise).  The values are collected once into a temporary array (the
 * segmented kernels need each value's position, which a filter only fixes after its
 * compaction), then reduced or scanned as above; opts and results as there.  A
 * pipeline of more than one value per item is GX_ERR_SHAPE (map it to one value
 * first).  The pipeline is left as it was (run it again, or gx_pipe_destroy it). */
GX_API gx_status gx_pipe_segment_reduce(struct gx_pipe *p, const char *op, gx_array *offsets,
                                        const gx_segment_opts *opts, gx_array **out);
GX_API gx_status gx_pipe_segment_scan(struct gx_pipe *p, const char *op, gx_array *offsets,
                                      const gx_segment_opts *opts, gx_array **out);

#ifdef __cplusplus
}
#endif
#endif
