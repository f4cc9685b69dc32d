/* gx/range.h -- part of gx.h (include gx.h, not this file).
 *
 * Scans, stream compaction and range pipelines.  Maps and predicates are lambdas
 * (docs/LAMBDAS.md).  Operators are the names of gx/reduce.h ("+" "*" "max" "min" "&"
 * "|" "^" "&&" "||", "sum" "prod" "maximum" "minimum" "all" "any"), with the result
 * dtypes and neutral elements described there ("+" on i32 accumulates in i64...), or
 * lambdas "a, b -> ...": scan operators must be associative, reduce operators
 * associative and commutative (the order of combination is not specified).  An
 * initial value is a gx_scalar, converted to the accumulator's dtype.  Constants
 * reach lambdas through opts->consts / nconsts, as everywhere in gx. */
#ifndef GX_RANGE_H
#define GX_RANGE_H
#include "../gx.h"
#include <stdbool.h>
#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ array scans */

typedef struct gx_scan_opts {
    int axis;               /* axis to scan along; negative counts from the end; 0 (the
                               * default) is the FIRST axis: pass -1 to scan along rows */
    int exclusive;          /* 0: out[k] = init op x0 op ... op xk; 1: init op x0 ... op x(k-1) */
    const gx_scalar *init;  /* initial value (NULL = none; an exclusive scan of a lambda
                               * needs one; a named operator's default is its neutral element) */
    gx_dtype dtype;         /* accumulator/output dtype; GX_DTYPE_DEFAULT (0) = the
                               * operator's result on the input dtype */
    const gx_const *consts; /* named constants for a lambda operator, may be NULL */
    int nconsts;
    int exact_dtype;      /* gx_scan_into: out's dtype must be the accumulator's */
    const gx_bind *arrays; /* must be NULL / 0: the operator reads no arrays (else
                            * GX_ERR_INVALID_ARGUMENT; bind them in a gx_pipe_map stage
                            * and use gx_pipe_scan, docs/LAMBDAS.md) */
    int narrays;
    int unchecked;
    uint64_t reserved[4]; /* zero (see the conventions in gx.h) */
} gx_scan_opts;

/* A new array (x's shape) of the running `op` along opts->axis of x (opts NULL: axis
 * 0, inclusive, no init).  Single pass on the GPU.  Scans re-associate (tiles of 4096
 * on the GPU, blocks of 1024 folded into a running carry on the CPU), so a float "+"
 * scan's output i is within (min(i+1, 4096) + (i+1)/1024 + 64) u sum|x_0..x_i| of
 * the exact prefix (u: half an ulp of the accumulator, 2^-24 for f32), never a
 * running sum that stops growing once it dwarfs the values.  Reproducibility: scans
 * on the CPU backend are bitwise reproducible (for one thread count), and so are
 * integer and order-free scans (max, min, &, |) everywhere; a float "+" or lambda scan
 * on a GPU is not: each tile adds the sums of the tiles before it in the order they
 * were published (the single-pass look-back), so the last bits may differ run to
 * run, within the bound above.
 * Halves (f16, bf16 x; or a half opts->dtype / out): the scan runs on x widened to f32
 * and accumulates in f32 (u = 2^-24 above); each output is rounded once to the half
 * dtype, which is the default result dtype of a float operator on a half x. */
GX_API gx_status gx_scan(gx_ctx *ctx, const char *op, gx_array *x, const gx_scan_opts *opts, gx_array **out);
/* The same into `out`, of x's shape (it may be x itself).  The scan accumulates in
 * out's dtype unless opts->dtype names another (then each value is converted), or
 * opts->exact_dtype is set (then out's dtype must be the operator's accumulator). */
GX_API gx_status gx_scan_into(gx_ctx *ctx, const char *op, gx_array *x, const gx_scan_opts *opts, gx_array *out);

/* ------------------------------------------------------------------ compaction */

typedef struct gx_filter_opts {
    const gx_const *consts; /* named constants the predicate sees, may be NULL */
    int nconsts;
    const gx_bind *arrays; /* named arrays the predicate reads by index (gx.h's gx_bind) */
    int narrays;
    int unchecked;        /* nonzero: no bounds checks on arrays[] reads (see gx_map_opts) */
    uint64_t reserved[4]; /* zero (see the conventions in gx.h) */
} gx_filter_opts;

/* For each of the nin arrays (1 <= nin <= 8; one shape, any views, flattened in
 * row-major order), a new 1-d array of the elements where pred(x0[i], x1[i], ...)
 * holds, in order: out[k] for input k (out has nin entries, all NULL on failure;
 * caller releases).  Inputs of different shapes are GX_ERR_SHAPE, even with one
 * element count.  opts may be NULL.  f16 / bf16 inputs reach pred as f32 values and
 * come out in their own dtype (exactly the selected elements). */
GX_API gx_status gx_filter(gx_ctx *ctx, const char *pred, int nin, gx_array *const *in, const gx_filter_opts *opts,
                           gx_array **out);
/* gx_filter without a host wait: the selected values of in[k] go to the caller's
 * out[k] and their number to `count`, all on the device, so the call can be queued
 * behind others and recorded in a graph (gx/graph.h).  Each out[k] is a 1-d contiguous
 * array of in[k]'s dtype; all have one length, the capacity (the input's element count
 * is always enough).  count is a contiguous one-element i64 array (0-d is usual).
 * After the call (on the device's order; read count with gx_array_to_host, which
 * waits): count holds the true number selected, out[k][0 .. min(count, capacity))
 * the selected values in order, and out[k] past that is unspecified.  A count above
 * the capacity is not an error: only capacity values are written.  Inputs and opts
 * as for gx_filter (one shape, any views); f16 / bf16 inputs are GX_ERR_DTYPE here.
 * Errors: out NULL or a count / out of another context GX_ERR_INVALID_ARGUMENT;
 * count not one i64 element, or an out of another dtype, GX_ERR_DTYPE; an out not
 * 1-d contiguous, or outs of different lengths, GX_ERR_SHAPE. */
GX_API gx_status gx_filter_into(gx_ctx *ctx, const char *pred, int nin, gx_array *const *in,
                                const gx_filter_opts *opts, gx_array *const *out, gx_array *count);
/* A new 1-d i64 array of the flat (row-major) indices where pred holds, ascending.
 * Inputs as for gx_filter (one shape, else GX_ERR_SHAPE).
 * Both read arrays bound in opts->arrays (gx_bind, docs/LAMBDAS.md) inside pred; an
 * index out of range is GX_ERR_INDEX naming the first offending flat position (the
 * results are NULL then). */
GX_API gx_status gx_findall(gx_ctx *ctx, const char *pred, int nin, gx_array *const *in, const gx_filter_opts *opts,
                            gx_array **out);

/* ------------------------------------------------------------------ pipelines */

/* A lazy stream of tuples of scalars, built stage by stage and run by a terminal as
 * ONE fused kernel (stream compaction and scans single-pass on the GPU).  Exception:
 * a stage that needs positions (take, drop, enumerate, and the scan / argmin / argmax
 * terminals) after a filter first materialises the stream so far (one extra
 * compaction kernel into temporary arrays).  A pipeline
 * may be run any number of times; its kernels are compiled once and cached.  Source
 * arrays are borrowed: keep them alive while the pipeline is used.  Stages mutate the
 * handle; a failing stage leaves it unchanged.  Values of a stream of m components
 * reach a lambda as m parameters. */
typedef struct gx_pipe gx_pipe;

/* The n arrays (1 <= n <= 8) zipped: tuples (a0[i], a1[i], ...), i the row-major
 * position.  They need one element count, not one shape (a (3, 4) zips with a (12,)),
 * and each must be contiguous or a 1-d view with any stride; else GX_ERR_SHAPE
 * (gx_array_clone makes a dense copy of an N-d view; gx_filter takes any views).
 * f16 / bf16 arrays are sources too: their elements reach the stages as f32 values
 * and the stream keeps the half dtype (maps are typed as in gx_map, docs/LAMBDAS.md:
 * x -> x * 3 stays f16, a half with f32 gives f32).  A half stream's values are f32
 * values rounded to the half dtype only when stored (gx_pipe_collect gives a half
 * array); reductions, scans, min and max over it work in f32 and give f32 (a half
 * opts->dtype accumulates in f32; gx_pipe_scan_into a half out rounds each output). */
GX_API gx_status gx_pipe_from_arrays(gx_ctx *ctx, int n, gx_array *const *arrays, gx_pipe **out);
/* count values start, start+step, ... computed in dtype's arithmetic (integers wrap). */
GX_API gx_status gx_pipe_iota(gx_ctx *ctx, gx_dtype dtype, int64_t count, double start, double step, gx_pipe **out);
/* count pseudo-random values, a pure function of (seed, index): floats uniform in [0, 1),
 * integers uniform over the dtype's bits.  A simple internal hash (SplitMix64), not gx_rand. */
GX_API gx_status gx_pipe_random(gx_ctx *ctx, gx_dtype dtype, uint64_t seed, int64_t count, gx_pipe **out);
/* Options of the pipeline stages and terminals that take a lambda or an operator. */
typedef struct gx_pipe_opts {
    const gx_const *consts; /* named constants the lambdas see, may be NULL */
    int nconsts;
    const gx_scalar *init; /* reduce/scan: initial value, combined first (NULL = none) */
    int exclusive;         /* scan: 1 = exclusive (out[k] excludes x[k]) */
    gx_dtype dtype;        /* reduce/scan: accumulator dtype; GX_DTYPE_DEFAULT (0) = the operator's */
    int exact_dtype;       /* gx_pipe_scan_into: out's dtype must be the accumulator's */
    const gx_bind *arrays; /* gx_pipe_map / gx_pipe_filter / gx_pipe_mapreduce's map: named
                            * arrays the lambda reads by index (gx.h's gx_bind);
                            * gx_pipe_reduce / gx_pipe_scan*: NULL / 0 (their operator reads
                            * no arrays: GX_ERR_INVALID_ARGUMENT) */
    int narrays;
    int unchecked;        /* nonzero: no bounds checks on arrays[] reads (see gx_map_opts) */
    uint64_t reserved[4]; /* zero (see the conventions in gx.h) */
} gx_pipe_opts;

/* Replaces each tuple by lambda(tuple...) (one value).  opts may be NULL.
 * gx_pipe_map and gx_pipe_filter take bound arrays (opts->arrays, gx_bind): the
 * pipeline keeps them (borrowed: keep them alive while it is used), a later stage
 * may use them too, and rebinding a name to another array is GX_ERR_INVALID_ARGUMENT.
 * Checks stay on unless every binding stage sets opts->unchecked.  A terminal whose
 * kernel reads out of range returns GX_ERR_INDEX naming the stream position (the
 * source index of its segment), with no results; checked runs wait. */
GX_API gx_status gx_pipe_map(gx_pipe *p, const char *lambda, const gx_pipe_opts *opts);
/* Keeps the tuples where pred(tuple...) holds; the length is unknown afterwards. */
GX_API gx_status gx_pipe_filter(gx_pipe *p, const char *pred, const gx_pipe_opts *opts);
/* Prepends the position in the stream (i64, from 0): later lambdas get (i, x...). */
GX_API gx_status gx_pipe_enumerate(gx_pipe *p);
/* Keeps the first k tuples / drops the first k tuples (k >= 0). */
GX_API gx_status gx_pipe_take(gx_pipe *p, int64_t k);
GX_API gx_status gx_pipe_drop(gx_pipe *p, int64_t k);
/* Components in the stream now and the dtype of component i. */
GX_API gx_status gx_pipe_arity(const gx_pipe *p, int *out);
GX_API gx_status gx_pipe_dtype(const gx_pipe *p, int i, gx_dtype *out);
/* The length when known (no filter in effect), else GX_ERR_SHAPE. */
GX_API gx_status gx_pipe_length(const gx_pipe *p, int64_t *out);
/* NULL is accepted. */
GX_API gx_status gx_pipe_destroy(gx_pipe *p);

/* Terminals: each runs the pipeline (one fused kernel per segment, see above) and waits
 * for the result.  Scalar results go to host memory.  They need a one-value stream
 * (GX_ERR_SHAPE otherwise: map tuples first) unless noted. */

/* Folds op over the stream into *out (its dtype is the accumulator's: opts->dtype, else
 * a named operator's result dtype (gx/reduce.h), else a lambda's result on two stream
 * values).  opts->init (may be NULL) is combined first.  An empty stream gives the
 * init, else a named operator's neutral element; a lambda with neither is GX_ERR_SHAPE. */
GX_API gx_status gx_pipe_reduce(gx_pipe *p, const char *op, const gx_pipe_opts *opts, gx_scalar *out);
/* map then reduce, without changing p.  opts->arrays are bound for the map only, for
 * this call (the pipe keeps none of them). */
GX_API gx_status gx_pipe_mapreduce(gx_pipe *p, const char *map, const char *op, const gx_pipe_opts *opts,
                                   gx_scalar *out);
/* Number of tuples (any arity). */
GX_API gx_status gx_pipe_count(gx_pipe *p, int64_t *out);
/* Whether any / all values are true (bool(x)); empty: any false, all true. */
GX_API gx_status gx_pipe_any(gx_pipe *p, bool *out);
GX_API gx_status gx_pipe_all(gx_pipe *p, bool *out);
/* Smallest / largest value, of the stream's dtype (NaNs are skipped unless all are
 * NaN); empty is GX_ERR_SHAPE. */
GX_API gx_status gx_pipe_min(gx_pipe *p, gx_scalar *out);
GX_API gx_status gx_pipe_max(gx_pipe *p, gx_scalar *out);
/* Position of the first smallest / largest value (as for min/max); empty is GX_ERR_SHAPE. */
GX_API gx_status gx_pipe_argmin(gx_pipe *p, int64_t *out);
GX_API gx_status gx_pipe_argmax(gx_pipe *p, int64_t *out);
/* Materialises the stream: one new 1-d array per component (nout must equal the
 * arity; caller releases).  After a filter this is single-pass stream compaction; on
 * the GPU the result may then be a view of a buffer sized for the unfiltered length. */
GX_API gx_status gx_pipe_collect(gx_pipe *p, int nout, gx_array **out);
/* Running op over the stream into a new 1-d array of the accumulator dtype
 * (opts->exclusive: out[k] excludes x[k]; an exclusive lambda scan needs opts->init). */
GX_API gx_status gx_pipe_scan(gx_pipe *p, const char *op, const gx_pipe_opts *opts, gx_array **out);
/* The same into `out` (contiguous), whose size must equal the stream's length, which
 * must be known (GX_ERR_SHAPE after a filter: use gx_pipe_scan).  Accumulates in out's
 * dtype as gx_scan_into does. */
GX_API gx_status gx_pipe_scan_into(gx_pipe *p, const char *op, const gx_pipe_opts *opts, gx_array *out);
/* Collects a one-value stream into host memory (cap bytes); *len gets the element
 * count.  A result larger than cap is GX_ERR_INVALID_ARGUMENT (with *len set). */
GX_API gx_status gx_pipe_to_host(gx_pipe *p, void *buf, size_t cap, int64_t *len);

#ifdef __cplusplus
}
#endif
#endif
