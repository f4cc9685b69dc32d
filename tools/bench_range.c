/* bench_range.c -- scans, stream compaction and fused range pipelines.
 * Bytes: every input read once, every output written once.  The iota pipelines read
 * no memory: they report elements per second and run at 2n (2^29 for --sizes 28). */
#include "bench_cases.h"

#include <string.h>

/* Inputs (and outputs) rotated through, so that small sizes are read from memory. */
typedef struct rot_set {
    gx_array *in[BENCH_MAXROT], *out[BENCH_MAXROT];
    int n, next;
} rot_set;

/* n random f32 inputs, copied until runs miss the cache; outputs alike if with_out. */
static gx_status rot_make(gx_ctx *ctx, int64_t n, uint64_t seed, bool with_out, rot_set *r)
{
    int k = bench_rot_count(ctx, (with_out ? 2.0 : 1.0) * (double)n * 4);
    gx_array *x = NULL;
    gx_status st = bench_random_f32(ctx, n, seed, &x);
    if (st == GX_OK)
        st = bench_clones(x, k, r->in, &r->n);
    for (int i = 0; st == GX_OK && with_out && i < r->n; i++)
        st = gx_array_similar(r->in[0], &r->out[i]);
    return st;
}

static void rot_free(rot_set *r)
{
    for (int i = 0; i < r->n; i++) {
        gx_array_release(r->in[i]);
        gx_array_release(r->out[i]);
    }
}

/* fresh: gx_scan into a new array each call (the previous call's result released,
 * the last one kept for the check), else gx_scan_into the rotated outputs. */
typedef struct scan_state {
    gx_ctx *ctx;
    rot_set r;
    bool fresh;
    gx_array *last;
} scan_state;

static gx_status run_scan(void *p)
{
    scan_state *s = p;
    int i = s->r.next++ % s->r.n;
    if (!s->fresh)
        return gx_scan_into(s->ctx, "a, b -> a + b", s->r.in[i], NULL, s->r.out[i]);
    gx_array_release(s->last);
    s->last = NULL;
    return gx_scan(s->ctx, "a, b -> a + b", s->r.in[i], NULL, &s->last);
}

static gx_status scan_case(gx_ctx *ctx, int64_t n, int reps, bool fresh, bench_result *rows, int *nrows)
{
    scan_state s = {.ctx = ctx, .fresh = fresh};
    gx_status st = rot_make(ctx, n, 21, !fresh, &s.r);
    double us = 0;
    if (st == GX_OK)
        st = bench_time(ctx, run_scan, &s, reps, &us);
    double bytes = 2.0 * (double)n * 4, set = (fresh ? 0.5 : 1.0) * bytes;
    bench_result *row = &rows[*nrows];
    *row = (bench_result){"gx", fresh ? "scan_sum_new" : "scan_sum", "f32", n, us, bytes, 0, 0, s.r.n * set, 0, 0};
    if (st == GX_OK)
        st = bench_check(ctx, fresh ? s.last : s.r.out[(s.r.next - 1) % s.r.n], row);
    if (st == GX_OK)
        (*nrows)++;
    gx_array_release(s.last);
    rot_free(&s.r);
    return st;
}

gx_status bench_case_scan_sum(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return scan_case(ctx, n, reps, false, rows, nrows);
}

gx_status bench_case_scan_sum_new(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return scan_case(ctx, n, reps, true, rows, nrows);
}

typedef struct select_state {
    gx_ctx *ctx;
    rot_set r;
    int64_t kept;
} select_state;

/* One gx_filter of input i; *o receives the kept elements. */
static gx_status select_one(select_state *s, int i, gx_array **o)
{
    gx_const t = GX_CONST("t", GX_SCALAR_F32(0.5));
    gx_filter_opts fo = {.consts = &t, .nconsts = 1};
    gx_status st = gx_filter(s->ctx, "x -> x > t", 1, &s->r.in[i], &fo, o);
    if (st == GX_OK)
        st = gx_array_size(*o, &s->kept);
    return st;
}

static gx_status run_select(void *p)
{
    select_state *s = p;
    gx_array *o = NULL;
    gx_status st = select_one(s, s->r.next++ % s->r.n, &o);
    gx_array_release(o);
    return st;
}

gx_status bench_case_select_gt05(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    select_state s = {.ctx = ctx};
    gx_status st = rot_make(ctx, n, 22, false, &s.r);
    double us = 0;
    if (st == GX_OK)
        st = bench_time(ctx, run_select, &s, reps, &us);
    bench_result *row = &rows[*nrows];
    double bytes = (double)n * 4 + (double)s.kept * 4; /* read once, the kept written once */
    *row = (bench_result){"gx", "select_gt05", "f32", n, us, bytes, 0, 0, s.r.n * (double)n * 4, 0, 0};
    gx_array *o = NULL; /* one more, untimed, for the check */
    if (st == GX_OK)
        st = select_one(&s, 0, &o);
    if (st == GX_OK)
        st = bench_check(ctx, o, row);
    if (st == GX_OK)
        (*nrows)++;
    gx_array_release(o);
    rot_free(&s.r);
    return st;
}

/* A prebuilt pipeline run by one terminal per repetition. */
typedef struct pipe_state {
    gx_pipe *p;
    int term;
    gx_scalar sum;
    int64_t count;
} pipe_state;

static gx_status run_pipe(void *v)
{
    pipe_state *s = v;
    if (s->term == 0)
        return gx_pipe_reduce(s->p, "a, b -> a + b", NULL, &s->sum);
    return gx_pipe_count(s->p, &s->count);
}

static gx_status time_pipe(gx_ctx *ctx, gx_pipe *p, int term, const char *op, const char *dt, int64_t n, int reps,
                           double bytes, double elems, bench_result *rows, int *nrows)
{
    pipe_state s = {.p = p, .term = term};
    double us = 0;
    gx_status st = bench_time(ctx, run_pipe, &s, reps, &us);
    if (st == GX_OK)
        rows[(*nrows)++] = (bench_result){
            "gx", op, dt, n, us, bytes, 0, elems, 0, term == 0 ? gx_scalar_to_f64(s.sum) : (double)s.count, 1};
    return st;
}

gx_status bench_case_iota_sum_i64(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    n *= 2;
    gx_pipe *p = NULL;
    gx_status st = gx_pipe_iota(ctx, GX_I64, n, 0, 1, &p);
    if (st == GX_OK)
        st = time_pipe(ctx, p, 0, "iota_sum_i64", "i64", n, reps, 0, (double)n, rows, nrows);
    gx_pipe_destroy(p);
    return st;
}

gx_status bench_case_pipeline_count(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    n *= 2;
    gx_pipe *p = NULL;
    gx_status st = gx_pipe_iota(ctx, GX_I64, n, 0, 1, &p);
    if (st == GX_OK)
        st = gx_pipe_map(p, "i -> (i * i) % 1000", NULL);
    if (st == GX_OK)
        st = gx_pipe_filter(p, "v -> v % 3 == 0", NULL);
    if (st == GX_OK)
        st = time_pipe(ctx, p, 1, "pipeline_count", "i64", n, reps, 0, (double)n, rows, nrows);
    gx_pipe_destroy(p);
    return st;
}

gx_status bench_case_pipeline_l2count(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                      int *nrows)
{
    (void)k;
    gx_array *xy[2] = {NULL, NULL};
    gx_status st = bench_random_f32(ctx, n, 23, &xy[0]);
    if (st == GX_OK)
        st = bench_random_f32(ctx, n, 24, &xy[1]);
    gx_pipe *p = NULL;
    if (st == GX_OK)
        st = gx_pipe_from_arrays(ctx, 2, xy, &p);
    if (st == GX_OK)
        st = gx_pipe_map(p, "x, y -> (x - y) * (x - y)", NULL);
    if (st == GX_OK)
        st = gx_pipe_filter(p, "d -> d < 0.25f", NULL);
    if (st == GX_OK)
        st = time_pipe(ctx, p, 1, "pipeline_l2count", "f32", n, reps, 2.0 * (double)n * 4, 0, rows, nrows);
    gx_pipe_destroy(p);
    gx_array_release(xy[0]);
    gx_array_release(xy[1]);
    return st;
}
