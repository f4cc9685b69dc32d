/* gx/dist.h -- part of gx.h (include gx.h, not this file).
 *
 * Distributed arrays: one array split along axis 0 over the ranks of a communicator
 * (gx/comm.h), or replicated on every rank.
 *
 * The same program runs on 1..N ranks: every rank calls every function below in the
 * same order with the same arguments (its own piece aside), as with the collectives
 * of gx/comm.h.  A communicator of size 1 is an ordinary single-process program.
 * Ranks are processes (mpirun, gx_comm_world) or, for one process driving several
 * GPUs (gx_comm_from_ctxs), threads: one thread per rank, each calling these functions
 * on its own communicator (a gx_dist call waits on the host for counts and carries,
 * so one thread cannot drive several ranks through it).
 *
 * Layout.  A SHARDED gx_dist of global shape (n, d1, ..., dk) gives rank r the rows
 * [offset_r, offset_r + rows_r) of axis 0 as an ordinary gx_array of shape
 * (rows_r, d1, ..., dk) on the communicator's context (its "local piece"); the rows
 * per rank (the "splits" or "counts") are any non-negative numbers that add up to n:
 * a rank may hold zero rows.  "Even" splits (splits == NULL) give rank r
 * n / size + (r < n % size) rows.  A REPLICATED gx_dist holds the whole array on every
 * rank (the same values everywhere: gx does not check that).
 *
 * Errors are collective: a call that fails on one rank for a reason only that rank can
 * see (a shard file it cannot read, a NULL host buffer on the root) fails on every
 * rank, the others with a message naming the rank that failed, so no rank is left
 * waiting in a collective.  Arguments that every rank passes (dtypes, shapes, splits,
 * lambdas) are checked the same way on every rank.  A failed call leaves *out NULL.
 * A peer that dies or stalls makes the collectives under these calls return
 * GX_ERR_TIMEOUT (gx_comm_opts.timeout_s); the gx_dist handles are then only good for
 * gx_dist_release.
 *
 * Results live on the communicator's context; on CUDA they are queued on its stream
 * like any gx result (the host-scalar results below wait).  Numbers: reductions and
 * scans combine per-rank partial results, so float results may differ from the
 * single-process call on the whole array in the last bits (integer results, min/max,
 * sorts, filters, maps and matmul rows are exact and equal). */
#ifndef GX_DIST_H
#define GX_DIST_H
#include "../gx.h"
#include "comm.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct gx_dist gx_dist;

/* What gx_dist_describe reports. */
typedef struct gx_dist_desc {
    gx_dtype dtype;
    int ndim;                    /* >= 1 when sharded; a replicated array may be 0-d */
    int64_t shape[GX_MAX_DIMS];  /* the GLOBAL shape */
    int sharded;                 /* 1: split along axis 0; 0: replicated */
    int rank, size;              /* this rank and the communicator's size */
    int64_t offset;              /* rows held by the ranks before this one (0 when replicated) */
    int64_t rows;                /* rows held here (shape[0] when replicated; 1 for 0-d) */
} gx_dist_desc;

/* ------------------------------------------------------------ constructors (collective) */

/* Sharded, from each rank's piece: local (any view, at least 1-d, the communicator's
 * context) becomes this rank's rows in rank order.  Every rank's piece must have one
 * dtype and one shape past axis 0 (else GX_ERR_SHAPE / GX_ERR_DTYPE on every rank,
 * naming the first rank that differs); rows may be 0.  The gx_dist keeps its own
 * handle on local's storage: release local when you like. */
GX_API gx_status gx_dist_from_local(gx_comm *comm, gx_array *local, gx_dist **out);
/* Replicated: every rank passes its copy of the same array (any ndim, 0-d included);
 * the gx_dist keeps its own handle on a's storage.  Ranks whose copies differ in dtype
 * or shape get GX_ERR_SHAPE / GX_ERR_DTYPE. */
GX_API gx_status gx_dist_replicated(gx_comm *comm, gx_array *a, gx_dist **out);
/* Sharded, scattered from a dense row-major host buffer read on rank `root` only
 * (other ranks may pass NULL).  Every rank passes the same dtype, ndim (>= 1), shape
 * and splits (rows per rank, `size` entries adding up to shape[0]; NULL = even). */
GX_API gx_status gx_dist_from_host(gx_comm *comm, int root, gx_dtype dtype, int ndim, const int64_t *shape,
                                   const void *host, const int64_t *splits, gx_dist **out);
/* Sharded 1-d start, start + step, ... (count elements) as gx_array_iota: rank r makes
 * its rows with gx_array_iota starting at start + offset_r * step (integers exact
 * below 2^53; floats as gx_array_iota of the whole, up to the rounding of that sum). */
GX_API gx_status gx_dist_iota(gx_comm *comm, gx_dtype dtype, int64_t count, double start, double step,
                              const int64_t *splits, gx_dist **out);
/* Sharded uniform numbers in [0, 1) (f16, bf16, f32, f64): the same numbers as
 * gx_rand(ctx, rng, dtype, ndim, shape) of the whole array on one rank (each rank draws
 * its rows with rng.start moved to its first element), whatever the splits. */
GX_API gx_status gx_dist_rand(gx_comm *comm, gx_rng rng, gx_dtype dtype, int ndim, const int64_t *shape,
                              const int64_t *splits, gx_dist **out);
/* Releases the handle and its local piece (not collective).  NULL is fine. */
GX_API gx_status gx_dist_release(gx_dist *d);

/* ------------------------------------------------------------ queries (local) */

/* This rank's piece, borrowed: valid until d is released; do not release it.  For a
 * replicated d, the whole array. */
GX_API gx_status gx_dist_local(const gx_dist *d, gx_array **out);
GX_API gx_status gx_dist_describe(const gx_dist *d, gx_dist_desc *out);
/* rows[r] = the rows rank r holds (size entries; a replicated d: shape[0] for every
 * rank, 1 for 0-d). */
GX_API gx_status gx_dist_counts(const gx_dist *d, int64_t *rows);
/* The communicator d lives on. */
GX_API gx_status gx_dist_comm(const gx_dist *d, gx_comm **out);

/* ------------------------------------------------------------ operations */

/* out = lambda(in[0], in[1], ...) element by element, as gx_map on each rank's pieces
 * (opts as gx_map's; bound arrays, opts->arrays, are read locally).  Sharded inputs
 * must have equal splits (else GX_ERR_SHAPE naming both inputs' splits) and one shape;
 * replicated inputs broadcast along (numpy rules) when they have fewer axes than the
 * sharded ones or a first axis of 1 (else GX_ERR_SHAPE: they would broadcast across
 * the split axis).  The result is sharded with the inputs' splits, or replicated when
 * every input is.  No communication. */
GX_API gx_status gx_dist_map(const char *lambda, int nin, gx_dist *const *in, const gx_map_opts *opts,
                             gx_dist **out);

/* The reduction of every element of x with `op` (gx/reduce.h's operators and
 * statistics: "+" "*" "max" "min" "&" "|" "^" "&&" "||", their word forms, "count",
 * "mean", or a lambda with opts->init), as gx_reduce_to of the whole array: a new 0-d
 * array of the result dtype, the same on every rank (each rank reduces its piece, then
 * the partial results are combined with gx_allreduce, or gathered and folded in rank
 * order for lambdas and float max/min, whose NaN rule MPI does not share).  Float "+"
 * partials of f32 are f64, rounded once.  "mean" is the global sum over the global
 * count (empty x: GX_ERR_INVALID_ARGUMENT, as gx_mean).  opts as gx_reduce's, but
 * opts->axes must be NULL (GX_ERR_UNSUPPORTED: reduce along axes on the local piece)
 * and opts->arrays is not accepted.  A replicated x is reduced locally. */
GX_API gx_status gx_dist_reduce(const char *op, const gx_dist *x, const gx_reduce_opts *opts, gx_array **out);
/* The same over lambda(in[0], ...) mapped as gx_dist_map maps (without a temporary),
 * as gx_mapreduce_to. */
GX_API gx_status gx_dist_mapreduce(const char *lambda, const char *op, int nin, gx_dist *const *in,
                                   const gx_reduce_opts *opts, gx_array **out);
/* gx_findmin ("min") / gx_findmax ("max") of the whole array: the value and its GLOBAL
 * flat row-major index (first index on ties; NaN ignored unless every value is NaN),
 * on every rank.  An empty x is GX_ERR_INVALID_ARGUMENT.  value or index may be NULL. */
GX_API gx_status gx_dist_find(const char *which, const gx_dist *x, gx_scalar *value, int64_t *index);

/* The running `op` along opts->axis (gx_scan's options and operators).  Along axis 0
 * of a sharded x, which must then be 1-d (else GX_ERR_UNSUPPORTED), each rank reduces
 * its piece, the per-rank totals are gathered, and each rank scans its piece starting
 * from the fold of opts->init and the totals of the ranks before it (a reduce-then-
 * scan).  A lambda operator must then be associative and commutative and opts->init
 * (required) its neutral element.  Along other axes (and for a replicated x) it is
 * gx_scan of each piece.  The result has x's layout. */
GX_API gx_status gx_dist_scan(const char *op, const gx_dist *x, const gx_scan_opts *opts, gx_dist **out);

/* The elements of x (flattened row-major) where pred holds, in order, as gx_filter:
 * a new sharded 1-d gx_dist whose rank r holds what its own piece kept (uneven
 * splits; a rank may keep nothing).  Only the counts are exchanged.  A replicated x
 * gives a replicated result. */
GX_API gx_status gx_dist_filter(const char *pred, const gx_dist *x, const gx_filter_opts *opts, gx_dist **out);

/* Sorts as gx_sort (the same order: NaNs last, -0.0 == 0.0; opts->descending).  A 1-d
 * sharded x (or any x with opts->flatten: the result is 1-d) is sorted globally by a
 * sample sort: regular samples of every piece (32 per rank and rank) are gathered and
 * sorted, size-1 splitters chosen from them, each key's destination found among the
 * splitters (gx_searchsorted; equal keys go to one rank), each piece grouped by
 * destination (a stable sort by the small destination number), the groups exchanged
 * with gx_alltoallv and what each rank received sorted: one full sort of its share.
 * The result's splits follow the data (uneven; a rank may get nothing when many keys
 * are equal).  Equal keys are not promised to keep their input
 * order.  Without flatten an N-d x (N >= 2) sorts each row along the last axis
 * locally.  Complex keys are GX_ERR_DTYPE for the global sort. */
GX_API gx_status gx_dist_sort(const gx_dist *x, const gx_sort_opts *opts, gx_dist **out);

/* C = A·B for a row-sharded 2-d A and a replicated 2-d B (gx_matmul on each piece):
 * C is row-sharded with A's splits.  opts as gx_matmul's; op_a must be GX_OP_N (a
 * transposed A would not be split by rows: GX_ERR_UNSUPPORTED).  A sharded B, or a
 * replicated A, is GX_ERR_INVALID_ARGUMENT. */
GX_API gx_status gx_dist_matmul(const gx_dist *a, const gx_dist *b, const gx_matmul_opts *opts, gx_dist **out);

/* The whole array on rank `root` (a new dense array of the global shape, on the root's
 * context); other ranks get *out = NULL.  Collective (point-to-point messages to the
 * root). */
GX_API gx_status gx_dist_gather(const gx_dist *x, int root, gx_array **out);

/* Writes each rank's piece to its own file "<prefix>.<rank>-of-<size>.gxd": a header
 * (magic "GXDIST1", dtype, ndim, global shape, sharded flag, rank, size, the rows of
 * every rank; little-endian 64-bit words) then the piece's bytes, dense row-major.  A
 * file that cannot be written is GX_ERR_IO naming its path (on every rank). */
GX_API gx_status gx_dist_save(const gx_dist *x, const char *prefix);
/* Reads what gx_dist_save wrote with the same number of ranks: each rank reads its own
 * file.  A missing, short or foreign file, or one written by another number of ranks,
 * is GX_ERR_IO naming the path (on every rank). */
GX_API gx_status gx_dist_load(gx_comm *comm, const char *prefix, gx_dist **out);

#ifdef __cplusplus
}
#endif
#endif
