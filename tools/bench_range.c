/* bench_range.c -- scans, stream compaction and fused range pipelines.
 * Bytes: every input read once, every output written once.  The iota pipelines read
 * no memory: they report elements per second and run at 2n (2^29 for --sizes 28),
 * except launch_latency_iota_sum, which a compiler folds and so reports a time alone. */
#include "bench_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
        st = bench_output_f32(ctx, n, &r->out[i]);
    return st;
}

static void rot_free(rot_set *r)
{
    for (int i = 0; i < r->n; i++) {
        gx_array_release(r->in[i]);
        gx_array_release(r->out[i]);
    }
}

/* ------------------------------------------------------------ scans */

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

/* Every element of an f32 inclusive scan of the inputs of seed 21 against a long
 * double running sum.  The scan folds a lambda in f32 (gx/reduce.h: lambdas fold in
 * their own dtype), in tiles or per-worker chunks whose running total is carried from
 * one to the next: an element's error is its tile's own (at most `tile` terms) plus
 * the carry's (one rounding per tile before it), each addition within 2^-24 of the
 * partial sums, which are at most S_i here (inputs >= 0).  With tiles of T = 4096
 * (CUDA) and chunks of at most T on the CPU, |error_i| <= (min(i+1, T) + (i+1)/T + 32)
 * 2^-24 S_i: the order-free bound (i+1) 2^-24 S_i of tests/test_scan.c where i < T,
 * far tighter beyond. */
#define SCAN_TILE 4096.0
static gx_status scan_verify(gx_array *res, int64_t n, bench_result *row)
{
    const float *x = bench_inputs_f32(n, 21);
    float *got = NULL;
    gx_status s = x ? bench_fetch(res, (void **)&got) : GX_ERR_OUT_OF_MEMORY;
    long double run = 0;
    double worst = 0;
    for (int64_t i = 0; s == GX_OK && i < n; i++) {
        run += x[i];
        double m = (double)(i + 1), k = m < SCAN_TILE ? m : SCAN_TILE;
        double tol = (k + m / SCAN_TILE + 32) * 0x1p-24 * (double)run, err = fabs((double)((long double)got[i] - run));
        worst = err / tol > worst ? err / tol : worst;
        if (!(err <= tol)) {
            bench_verdict(row, false, "[%lld] = %.9g, host %.9Lg: off by %.3g > %.3g", (long long)i, got[i], run, err,
                          tol);
            break;
        }
    }
    if (getenv("GX_BENCH_DEBUG"))
        fprintf(stderr, "scan n=%lld worst err/tol %.3g\n", (long long)n, worst);
    if (s == GX_OK)
        bench_pass(row);
    free(got);
    return s;
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
    *row = bench_row("gx", fresh ? "scan_sum_new" : "scan_sum", "f32", n, us, bytes, 0, 0, s.r.n * set);
    gx_array *res = fresh ? s.last : s.r.out[(s.r.next - 1) % (s.r.n ? s.r.n : 1)];
    if (st == GX_OK)
        st = bench_check(ctx, res, row);
    if (st == GX_OK)
        st = scan_verify(res, n, row);
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

/* ------------------------------------------------------------ compaction */

/* The kept elements of input i go to a new array each call (gx_filter sizes it by
 * the count, as PyTorch's x[x > 0.5] does); the inputs rotate, the result is the
 * pool's block just freed. */
typedef struct select_state {
    gx_ctx *ctx;
    rot_set r;
    int64_t kept;
    gx_array *last; /* the last call's result, for the check */
} select_state;

static gx_status run_select(void *p)
{
    select_state *s = p;
    gx_const t = GX_CONST("t", GX_SCALAR_F32(0.5));
    gx_filter_opts fo = {.consts = &t, .nconsts = 1};
    gx_array_release(s->last);
    s->last = NULL;
    gx_status st = gx_filter(s->ctx, "x -> x > t", 1, &s->r.in[s->r.next++ % s->r.n], &fo, &s->last);
    if (st == GX_OK)
        st = gx_array_size(s->last, &s->kept);
    return st;
}

/* Every kept element, in order, against the host's pass over the inputs of seed 22. */
static gx_status select_verify(select_state *s, int64_t n, bench_result *row)
{
    const float *x = bench_inputs_f32(n, 22);
    float *got = NULL;
    gx_status st = x ? bench_fetch(s->last, (void **)&got) : GX_ERR_OUT_OF_MEMORY;
    int64_t k = 0;
    for (int64_t i = 0; st == GX_OK && i < n; i++) {
        if (!(x[i] > 0.5f))
            continue;
        if (k >= s->kept || got[k] != x[i]) {
            bench_verdict(row, false, "kept[%lld] = %.9g, host x[%lld] = %.9g", (long long)k,
                          k < s->kept ? got[k] : NAN, (long long)i, x[i]);
            break;
        }
        k++;
    }
    if (st == GX_OK)
        bench_verdict(row, k == s->kept, "kept %lld elements, host %lld", (long long)s->kept, (long long)k);
    free(got);
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
    *row = bench_row("gx", "select_gt05", "f32", n, us, bytes, 0, 0, s.r.n * (double)n * 4);
    /* The last timed call read input (next - 1) % n: a copy of every other. */
    if (st == GX_OK)
        st = bench_check(ctx, s.last, row);
    if (st == GX_OK)
        st = select_verify(&s, n, row);
    if (st == GX_OK)
        (*nrows)++;
    gx_array_release(s.last);
    rot_free(&s.r);
    return st;
}

/* ------------------------------------------------------------ pipelines */

/* Prebuilt pipelines run by one terminal per repetition, rotated through when their
 * sources would fit in the cache. */
typedef struct pipe_state {
    gx_pipe *p[BENCH_MAXROT];
    int np, next;
    int term;
    gx_scalar sum;
    int64_t count;
} pipe_state;

static gx_status run_pipe(void *v)
{
    pipe_state *s = v;
    gx_pipe *p = s->p[s->next++ % s->np];
    if (s->term == 0)
        return gx_pipe_reduce(p, "a, b -> a + b", NULL, &s->sum);
    return gx_pipe_count(p, &s->count);
}

static void pipe_free(pipe_state *s)
{
    for (int i = 0; i < s->np; i++)
        gx_pipe_destroy(s->p[i]);
}

/* Times the pipelines in s; the row's check is the result (sum or count). */
static gx_status time_pipe(gx_ctx *ctx, pipe_state *s, const char *op, const char *dt, int64_t n, int reps,
                           double bytes, double elems, double footprint, bench_result *row)
{
    double us = 0;
    gx_status st = bench_time(ctx, run_pipe, s, reps, &us);
    if (st == GX_OK) {
        *row = bench_row("gx", op, dt, n, us, bytes, 0, elems, footprint);
        row->check = s->term == 0 ? gx_scalar_to_f64(s->sum) : (double)s->count, row->has_check = 1;
    }
    return st;
}

/* The map of iota_hash_sum_i64: an xorshift then a multiplicative hash (Knuth's
 * 2654435761) mod 1000, in i64 -- nothing a compiler can sum in closed form over a
 * thread's run of indices, so the time is the work of n elements.  The CUB peer
 * (bench/peers/cub_peers.cu, HashMap) and the CPU peers compute the same. */
#define IOTA_HASH "i -> (i ^ (i >> 7)) * 2654435761 % 1000"
/* The product wraps, as gx's i64 does (it cannot below i = 2^31, 2n for --sizes 30). */
static int64_t iota_hash(int64_t i) { return (int64_t)((uint64_t)(i ^ (i >> 7)) * 2654435761u) % 1000; }

/* iota(0, n) | map(IOTA_HASH) | reduce(+) at 2n elements, the iota pipelines' size;
 * checked against the host's sum of the same map, exactly. */
gx_status bench_case_iota_hash_sum(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    n *= 2;
    pipe_state s = {.np = 1, .term = 0};
    gx_status st = gx_pipe_iota(ctx, GX_I64, n, 0, 1, &s.p[0]);
    if (st == GX_OK)
        st = gx_pipe_map(s.p[0], IOTA_HASH, NULL);
    bench_result *row = &rows[*nrows];
    if (st == GX_OK)
        st = time_pipe(ctx, &s, "iota_hash_sum_i64", "i64", n, reps, 0, (double)n, 0, row);
    if (st == GX_OK) {
        int64_t want = 0;
        for (int64_t i = 0; i < n; i++)
            want += iota_hash(i);
        bench_verdict(row, s.sum.v.i == want, "sum %lld, host %lld", (long long)s.sum.v.i, (long long)want);
        (*nrows)++;
    }
    pipe_free(&s);
    return st;
}

/* iota(0, n) | reduce(+) at 2n elements: the compiler sums each thread's run of the
 * arithmetic series in closed form, so this times a launch and the wait for its
 * result, not n elements' work: reported as a time alone (no bytes, no elements, so
 * no rate and nothing to compare a peer's rate with). */
gx_status bench_case_launch_latency(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    n *= 2;
    pipe_state s = {.np = 1, .term = 0};
    gx_status st = gx_pipe_iota(ctx, GX_I64, n, 0, 1, &s.p[0]);
    bench_result *row = &rows[*nrows];
    if (st == GX_OK)
        st = time_pipe(ctx, &s, "launch_latency_iota_sum", "i64", n, reps, 0, 0, 0, row);
    if (st == GX_OK) {
        int64_t want = n * (n - 1) / 2; /* n <= 2^34: fits */
        bench_verdict(row, s.sum.v.i == want, "sum %lld, host n(n-1)/2 = %lld", (long long)s.sum.v.i, (long long)want);
        (*nrows)++;
    }
    pipe_free(&s);
    return st;
}

/* iota | map(i -> (i*i) % 1000) | filter(v % 3 == 0) | count, as the CUB peer's
 * CountPred; (i*i) % 1000 depends on i % 1000 alone, so the host counts exactly. */
static int64_t count_ref(int64_t n)
{
    int64_t per = 0, part = 0;
    for (int64_t r = 0; r < 1000; r++) {
        bool keep = ((r * r) % 1000) % 3 == 0;
        per += keep;
        if (r < n % 1000)
            part += keep;
    }
    return n / 1000 * per + part;
}

gx_status bench_case_pipeline_count(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    n *= 2;
    pipe_state s = {.np = 1, .term = 1};
    gx_status st = gx_pipe_iota(ctx, GX_I64, n, 0, 1, &s.p[0]);
    if (st == GX_OK)
        st = gx_pipe_map(s.p[0], "i -> (i * i) % 1000", NULL);
    if (st == GX_OK)
        st = gx_pipe_filter(s.p[0], "v -> v % 3 == 0", NULL);
    bench_result *row = &rows[*nrows];
    if (st == GX_OK)
        st = time_pipe(ctx, &s, "pipeline_count", "i64", n, reps, 0, (double)n, 0, row);
    if (st == GX_OK) {
        bench_verdict(row, s.count == count_ref(n), "count %lld, host %lld", (long long)s.count,
                      (long long)count_ref(n));
        (*nrows)++;
    }
    pipe_free(&s);
    return st;
}

/* zip(x, y) | map((x - y)^2) | filter(d < 0.25) | count over inputs of seeds 23 and
 * 24, the pairs rotated; the host counts exactly (x - y is exact in f32 and the f32
 * square rounds monotonically, 0.25 being a float, so d < 0.25 is |x - y| < 0.5). */
gx_status bench_case_pipeline_l2count(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                      int *nrows)
{
    (void)k;
    double bytes = 2.0 * (double)n * 4;
    gx_array *x = NULL, *y = NULL, *xs[BENCH_MAXROT] = {NULL}, *ys[BENCH_MAXROT] = {NULL};
    int nx = 0, ny = 0, want = bench_rot_count(ctx, bytes);
    gx_status st = bench_random_f32(ctx, n, 23, &x);
    if (st == GX_OK)
        st = bench_random_f32(ctx, n, 24, &y);
    if (st == GX_OK)
        st = bench_clones(x, want, xs, &nx);
    else
        gx_array_release(x);
    if (st == GX_OK)
        st = bench_clones(y, nx, ys, &ny);
    else
        gx_array_release(y);
    pipe_state s = {.term = 1};
    for (int i = 0; st == GX_OK && i < nx; i++) {
        gx_array *xy[2] = {xs[i], ys[i]};
        st = gx_pipe_from_arrays(ctx, 2, xy, &s.p[i]);
        if (st == GX_OK)
            s.np++;
        if (st == GX_OK)
            st = gx_pipe_map(s.p[i], "x, y -> (x - y) * (x - y)", NULL);
        if (st == GX_OK)
            st = gx_pipe_filter(s.p[i], "d -> d < 0.25f", NULL);
    }
    bench_result *row = &rows[*nrows];
    if (st == GX_OK)
        st = time_pipe(ctx, &s, "pipeline_l2count", "f32", n, reps, bytes, 0, s.np * bytes, row);
    if (st == GX_OK) {
        const float *hx = bench_inputs_f32(n, 23), *hy = bench_inputs_f32(n, 24);
        int64_t c = 0;
        for (int64_t i = 0; hx && hy && i < n; i++) {
            float d = hx[i] - hy[i];
            c += d * d < 0.25f;
        }
        bench_verdict(row, hx && hy && s.count == c, "count %lld, host %lld", (long long)s.count, (long long)c);
        (*nrows)++;
    }
    pipe_free(&s);
    for (int i = 0; i < BENCH_MAXROT; i++) {
        gx_array_release(xs[i]);
        gx_array_release(ys[i]);
    }
    return st;
}
