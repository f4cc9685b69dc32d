/* range_priv.h -- pipelines inside gx: the stage list, the fused-kernel generator
 * (range_gen.c) and the terminals' drivers (range_run.c).
 *
 * A run splits the stage list into segments.  A segment is a source (arrays or a
 * generator) over a contiguous index range [lo, lo + n) followed by maps, filters and
 * enumerates; take/drop fold into the range while no filter precedes them.  A
 * position-dependent stage after a filter (take, drop, enumerate, scan, argmin...)
 * ends the segment: it is materialised (single-pass compaction) into temporary
 * arrays that source the next segment.  Each segment runs as one kernel. */
#ifndef GX_RANGE_PRIV_H
#define GX_RANGE_PRIV_H

#include "core/gx_internal.h"
#include "jit/lambda.h"
#include "ops/bind.h"

#define RP_MAXC 8      /* components of a tuple */
#define RP_MAXOPS 32   /* stages of a pipeline */
#define RP_MAXCONST 16 /* named constants over all stages */

typedef enum rp_src_kind { RP_SRC_ARRAYS, RP_SRC_IOTA, RP_SRC_RANDOM } rp_src_kind;
typedef enum rp_op_kind { RP_MAP, RP_FILTER, RP_ENUM, RP_TAKE, RP_DROP } rp_op_kind;

typedef union rp_cval {
    double f;
    int64_t i;
    uint64_t u;
} rp_cval;

typedef struct rp_op {
    rp_op_kind kind;
    char *text; /* lambda (map/filter) */
    lam_lambda *lam; /* NULL until rp_ops_compile where the memo vouched for it */
    gx_dtype rt;     /* map/filter: the lambda's result dtype */
    int nargs;       /* map/filter: the stream's components and dtypes it was added on */
    gx_dtype at[RP_MAXC];
    int cbase, nconst; /* its constants: slots cbase.. of the pipe */
    int64_t k;         /* take/drop count */
} rp_op;

/* Kernels a pipeline ran before, keyed by the generated body (plus the user-function
 * state), so repeated runs skip generating and hashing the whole source. */
#define RP_MEMO 4
typedef struct rp_memo {
    char *key; /* entries, user-function state, generated body */
    gx__kernel k[2];
} rp_memo;

/* The tile the generated scan and collect kernels use: threads per block, elements
 * per thread (CUDA; the CPU ignores it), and the look-back status form. */
typedef struct rp_tshape {
    int block, items;
    bool packed; /* status and value in one 64-bit word */
    int minb;    /* __launch_bounds__ minimum blocks per SM (0: NVCC's choice) */
} rp_tshape;

/* What a terminal ran with, for the memo fronts of gx_filter, gx_filter_into and
 * gx_scan (issue 22): its kernel pair and tile, which depend only on the call's front
 * key (the knobs behind the tile are read once per process). */
typedef struct rp_front {
    gx__kernel k[2];
    rp_tshape sh;
    bool ok; /* set by the terminal once it has its kernels */
} rp_front;

struct rp_opjob;

struct gx_pipe {
    uint64_t magic;
    gx_ctx *ctx;
    rp_src_kind src;
    int nsrc;
    gx_array *arr[RP_MAXC];
    gx_dtype sdt;        /* generator dtype */
    rp_cval start, step; /* iota, in sdt's field */
    uint64_t seed;
    int64_t count; /* source length */
    rp_op ops[RP_MAXOPS];
    int nops;
    gx_const cst[RP_MAXCONST];
    char *cname[RP_MAXCONST];
    int ncst;
    rp_memo memo[RP_MEMO];
    int memo_next;
    bd_set bind;         /* arrays the stages' lambdas read by index (borrowed, like sources) */
    char *bname[BD_MAX]; /* their names (copies) */
    rp_front *cap;       /* when set: the terminal records its kernels and tile there */
    /* gx_scan's operator, prepared once per call (scan.c): the scan terminal takes it
     * instead of preparing the same operator again, when it is for prep_elem and its
     * accumulator is the one asked for. */
    const struct rp_opjob *prep;
    gx_dtype prep_elem;
};
#define RP_PIPE_MAGIC 0x6778706970652121ull

/* ------------------------------------------------------------ one segment, ready to generate */

typedef struct rp_seg {
    rp_src_kind src;
    int nsrc;
    gx_dtype sdt[RP_MAXC]; /* source component dtypes */
    uint64_t sptr[RP_MAXC];
    int64_t sstride[RP_MAXC]; /* elements */
    bool contig;              /* every array source has stride 1 */
    int vec;                  /* CUDA: elements per vector load (1 = scalar) */
    rp_cval start, step;
    uint64_t seed;
    int64_t lo, n;
    const rp_op *ops[RP_MAXOPS]; /* maps, filters, enumerates */
    int64_t eoff[RP_MAXOPS];     /* enumerate: source index of position 0 */
    int nops;
    bool filtered;
    int arity; /* components at the end */
    gx_dtype dt[RP_MAXC];
    const gx_pipe *pipe; /* constants */
    /* Bounds on integer values, widened to a few classes (rp_seg_bounds) so that
     * kernels are specialised on them without one compile per length: the iota
     * source's values, and each enumerate's indices.  Let lambdas compute narrower. */
    lam_range vr;
    lam_range er[RP_MAXOPS];
} rp_seg;

/* The terminal a kernel ends in. */
typedef enum rp_term { RP_T_REDUCE, RP_T_SCAN, RP_T_COLLECT } rp_term;

typedef struct rp_kspec {
    rp_term term;
    /* reduce & scan: the accumulator (1 component, or 2 for argmin/argmax: value, index) */
    int nacc;
    gx_dtype acc[2];
    const char *op_body; /* C statements: combine a (earlier) and b into r (gx_acc) */
    const char *lift;    /* C statements: set r (gx_acc) from the element r0.. and position gx_pos */
    bool has_identity;   /* reduce: `identity` is a neutral gx_acc initialiser */
    const char *identity;
    bool exclusive;  /* scan */
    bool has_init;   /* scan/reduce: init is combined first */
    rp_cval init[2]; /* in the accumulator members' fields */
} rp_kspec;

/* Argument block shared by every pipeline kernel (matches rp_args_decl()). */
typedef struct rp_args {
    uint64_t src[RP_MAXC];
    int64_t sst[RP_MAXC];
    uint64_t out[RP_MAXC];
    uint64_t scratch;
    uint64_t clr; /* CUDA look-back launches: nclr 8-byte words to zero (rg_lookback_mem) */
    int64_t nclr;
    uint64_t par; /* CUDA look-back launches in a graph: the word whose parity swaps scratch and clr, or 0 */
    uint64_t hres; /* CUDA collect / reduce: where the count or the result slot goes in host memory, or 0 */
    uint64_t cnt;  /* CUDA reduce: the blocks' counter (zero between launches); collect: the capacity */
    int64_t lo, n, ntiles, nparts;
    uint64_t seed;
    rp_cval start, step;
    int64_t eoff[RP_MAXOPS];
    rp_cval c[RP_MAXCONST];
    rp_cval init[2];
    bd_args b; /* the pipe's bound arrays (in the kernels' struct only when it has some) */
} rp_args;

/* Source text of a kernel module for the segment and terminal: the head (prelude and
 * user functions) and the body (everything gx generates for this pipeline). */
gx_status rp_generate_head(gx_ctx *ctx, gx__sbuf *out);
gx_status rp_generate_body(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, gx__sbuf *out);
void rp_fill_args(const rp_seg *sg, rp_args *a);
/* A short key that determines rp_generate_body's output (see range_gen.c). */
/* Compiles the lambdas of p's stages that were added without (range.c); before a
 * body is generated. */
gx_status rp_ops_compile(gx_pipe *p);
void rp_body_key(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, gx__sbuf *out);
/* The same fields (and the entries' names e1 (may be NULL), e2) as a binary key. */
void rp_body_bkey(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, const char *e1, const char *e2, gx__bkey *k);
rp_tshape rp_tile_shape(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks);
/* Interleaved chains per worker of a CPU scan (range_gen.c, gen_cpu_scan). */
#define RP_CPU_CHAINS 4

#ifndef RP_BLOCK /* threads per block of range kernels (a build option for experiments) */
#define RP_BLOCK 256
#endif

/* Runs a terminal over a segment (range_run.c). */
gx_status rp_run_reduce(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, void *result, bool *empty);
gx_status rp_run_scan(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, gx_array *out);
gx_status rp_run_collect(gx_ctx *ctx, const rp_seg *sg, int nout, gx_array **out);
/* The same into caller memory: outp[c] has room for cap values (ranks past cap are not
 * written); the number kept goes to the device i64 at count; no host wait. */
gx_status rp_run_collect_cap(gx_ctx *ctx, const rp_seg *sg, void *const *outp, int64_t cap, void *count);
/* gx_filter_into's terminal (range.c): the pipe's stream into outp / count as above. */
/* A pipeline over arrays (as gx_pipe_from_arrays) in `buf`, the caller's, for one
 * internal call on this thread (gx_filter, gx_scan): not a handle, no allocation.
 * *out is buf, or an ordinary pipeline where this thread has one open already.  Close
 * it with rp_pipe_close on the same thread, before buf goes. */
gx_status rp_pipe_open(gx_ctx *ctx, int n, gx_array *const *arrays, gx_pipe *buf, gx_pipe **out);
void rp_pipe_close(gx_pipe *p);
gx_status rp_pipe_collect_cap(gx_pipe *p, void *const *outp, int64_t cap, void *count);

/* Memo fronts: a front hit runs the recorded kernels directly (range_run.c).  The
 * caller fills `a` with rp_front_args (sources, n, constants) and holds the context
 * lock.  rp_front_args also gives what the kernels were specialised on: whether every
 * source has stride 1, and the vector width their addresses allow (as rp_plan's). */
void rp_front_args(int n, gx_array *const *arr, int64_t count, const gx_const *consts, int nconsts, rp_args *a,
                   bool *contig, int *vec);
/* gx_pipe_collect's terminal: arity new arrays of dtypes dt. */
gx_status rp_front_collect(gx_ctx *ctx, const rp_front *f, rp_args *a, int arity, const gx_dtype *dt, gx_array **out);
/* rp_run_collect_cap's: a->out holds the outputs' addresses. */
gx_status rp_front_collect_cap(gx_ctx *ctx, const rp_front *f, rp_args *a, int64_t cap, void *count);
/* rp_run_scan's into out (contiguous, a->n elements of the accumulator's dtype; a->init set). */
gx_status rp_front_scan(gx_ctx *ctx, const rp_front *f, rp_args *a, gx_array *out);
/* A constant's value as the kernels' argument (rp_fill_args). */
rp_cval rp_const_arg(const gx_scalar *c);

/* Builds the runnable last segment of p (materialising earlier ones into *tmps, which
 * the caller releases: up to RP_MAXC * RP_MAXOPS arrays).  `positional` forces the
 * final segment to be unfiltered. */
gx_status rp_plan(gx_pipe *p, bool positional, rp_seg *sg, gx_array **tmps, int *ntmp);
void rp_release_tmps(gx_array **tmps, int ntmp);

/* Element dtype checks shared by scan/filter. */
bool rp_dtype_ok(gx_dtype t);

/* A binary operator lambda over the accumulator: body "r.v0 = (A)(op(a.v0, b.v0));",
 * lift "r.v0 = (A)r0;".  acc = forced, or op's result dtype on (elem, elem). */
typedef struct rp_opjob {
    gx__sbuf body, lift; /* read .p only: on a memo hit they point into the memo (borrowed) */
    bool borrowed;
    gx_dtype acc;
    bool named; /* op was a name ("+", "max"...): neutral holds its neutral element */
    gx_scalar neutral;
} rp_opjob;
/* Resolves a scan/reduce operator (a name of ops/opname.h or a lambda "a, b -> ...")
 * for elements of dtype elem: the accumulator is `forced` unless GX_DTYPE_DEFAULT,
 * else the name's accumulator, else the lambda's result.  A lambda's constants are
 * written into the code as literals (operators are small and rarely vary). */
gx_status rp_op_prepare(gx_ctx *ctx, const char *what, const char *op, gx_dtype elem, gx_dtype forced,
                        const gx_const *consts, int nconsts, rp_opjob *j);
void rp_opjob_free(rp_opjob *j);
/* An init value (gx_const) in the accumulator dtype's field. */
void rp_const_to_cval(const gx_scalar *c, gx_dtype acc, rp_cval *v);

#endif
