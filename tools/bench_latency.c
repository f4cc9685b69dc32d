/* bench_latency.c -- small calls at the floor (gx issue 22).
 *
 * host_overhead_{map,reduce,scan,filter,filter_into}: the host's time per warm call on a tiny
 * array (1024 f32), timed with the host clock around each call: on CUDA the call only
 * queues work, so this is gx's own cost up to and including the launch call (queued
 * work is drained with gx_sync every 32 calls, outside the timing); on the CPU it
 * includes running the kernel on the worker threads.  gx_filter reads its count back
 * to size the result, so on CUDA its row includes a wait for the GPU (the floor:
 * launch + sync); host_overhead_filter_into (capacity n, count on the device) is the
 * filter's host time alone.
 *
 * graph_chain10: ten dependent small calls (maps, reductions into 0-d device arrays,
 * a scan, a copy, a mapreduce) issued one by one ("gx direct") against the same ten
 * recorded once and replayed as one graph ("gx graph", gx/graph.h), timed with events
 * around the whole chain.  Both rows check their final values against the host.
 *
 * graph_nodes: what one node of each kind costs inside a replay -- a graph of one call
 * and a graph of ten of the same kind (maps, copies, sums into a 0-d array, max
 * scans), each replayed back to back and timed with events like graph_chain10; the
 * difference over nine is the cost of a node in a chain.  Checked against the host.
 *
 * lat_{sum_to_host,scan_sync,filter_new,map_sync} (at the --sizes given): one call
 * until its result is usable on the host, host clock, median: gx_reduce to a host
 * scalar; gx_scan_into + gx_sync; gx_filter (a new array: its length is read back, so
 * the values are complete); gx_map_into + gx_sync.  Each checked against the host.
 *
 * host_overhead_driver_launch: the host time of the driver's cuLaunchKernel alone
 * (an empty kernel taking one 64-byte struct, as gx's kernels take theirs, on gx's
 * stream), timed like the rows above: subtracted from a host_overhead row it leaves
 * gx's own part, from the call's entry to its launch call (issue 22's measure).
 * The bench loads the driver's symbols itself (dlopen with RTLD_NOLOAD: the library
 * gx loaded) so no gx code runs inside the timing.  CUDA only.
 *
 * floor_launch_sync / floor_launch_d2h_sync: an empty user kernel (one thread)
 * launched through gx_kernel_launch, then gx_sync / an 8-byte gx_array_to_host (which
 * waits for the stream): the least a call that waits (and reads a result) can cost.
 * CUDA; a backend without user kernels writes no row. */
#include "bench_cases.h"

#include <dlfcn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------ host overhead */

/* HO_*: the call alone; LAT_*: the call until its result is usable on the host. */
enum { HO_MAP, HO_REDUCE, HO_SCAN, HO_FILTER, HO_FILTER_INTO, LAT_SUM, LAT_SCAN, LAT_FILTER, LAT_MAP };
#define HO_N 1024

typedef struct ho_state {
    gx_ctx *ctx;
    int op;
    int64_t n;
    gx_array *x, *out, *s0; /* s0: 0-d result of the reduction */
    gx_array *kept;         /* the filter's latest result */
    gx_array *cnt;          /* HO_FILTER_INTO's count: a 0-d i64 device array */
    gx_scalar sum;          /* LAT_SUM's result in host memory */
} ho_state;

static gx_status ho_call(ho_state *h)
{
    switch (h->op) {
    case HO_MAP: return gx_map_into(h->ctx, "x -> 2*x + 1", 1, &h->x, NULL, h->out);
    case HO_REDUCE: return gx_reduce_into(h->ctx, "+", h->x, NULL, h->s0);
    case HO_SCAN: return gx_scan_into(h->ctx, "+", h->x, NULL, h->out);
    /* Into an array of capacity n with the count on the device: no wait for the
     * count, so on CUDA this is the host's part alone (gx_filter waits for it). */
    case HO_FILTER_INTO: return gx_filter_into(h->ctx, "x -> x > 0.5", 1, &h->x, NULL, &h->out, h->cnt);
    case LAT_SUM: return gx_reduce(h->ctx, "+", h->x, NULL, &h->sum); /* waits: the value is on the host */
    case LAT_SCAN: GX_TRY(gx_scan_into(h->ctx, "+", h->x, NULL, h->out)); return gx_sync(h->ctx);
    case LAT_MAP: GX_TRY(gx_map_into(h->ctx, "x -> 2*x + 1", 1, &h->x, NULL, h->out)); return gx_sync(h->ctx);
    default: {
        gx_array_release(h->kept);
        h->kept = NULL;
        return gx_filter(h->ctx, "x -> x > 0.5", 1, &h->x, NULL, &h->kept);
    }
    }
}

/* The result of the last call against the host, from the same inputs. */
static gx_status ho_check(ho_state *h, bench_result *r)
{
    const int64_t N = h->n;
    const float *x = bench_inputs_f32(N, 31);
    if (!x)
        return GX_ERR_OUT_OF_MEMORY;
    if (h->op == HO_REDUCE || h->op == LAT_SUM) {
        double got = gx_scalar_to_f64(h->sum);
        if (h->op == HO_REDUCE)
            GX_TRY(bench_read_f64(h->s0, &got));
        long double want = 0;
        for (int64_t i = 0; i < N; i++)
            want += x[i];
        bench_check_f32_sum(r, got, want, N, "sum");
        return GX_OK;
    }
    if (h->op == HO_FILTER_INTO) {
        int64_t got = -1, want = 0, bad = 0;
        GX_TRY(gx_array_to_host(h->cnt, &got, sizeof got));
        float *o = NULL;
        GX_TRY(bench_fetch(h->out, (void **)&o));
        for (int64_t i = 0, k = 0; i < N; i++)
            if (x[i] > 0.5f)
                bad += k < got && o[k++] != x[i], want++;
        free(o);
        bench_verdict(r, got == want && bad == 0, "filter_into kept %lld (host %lld), %lld values differ",
                      (long long)got, (long long)want, (long long)bad);
        return GX_OK;
    }
    if (h->op == HO_FILTER || h->op == LAT_FILTER) {
        int64_t n = 0, want = 0;
        GX_TRY(gx_array_size(h->kept, &n));
        for (int64_t i = 0; i < N; i++)
            want += x[i] > 0.5f;
        bench_verdict(r, n == want, "filter kept %lld, host %lld", (long long)n, (long long)want);
        return GX_OK;
    }
    float *o = NULL;
    GX_TRY(bench_fetch(h->out, (void **)&o));
    double acc = 0, worst = 0;
    bool map = h->op == HO_MAP || h->op == LAT_MAP;
    for (int64_t i = 0; i < N; i++) {
        acc += x[i];
        double want = map ? (double)(2 * x[i] + 1) : acc;
        /* map: exact (the same f32 operations); scan: gx/range.h's bound with
         * sum|x| = the prefix itself (x >= 0), u = 2^-24. */
        double tol = map ? 0 : (double)((i + 1 < 4096 ? i + 1 : 4096) + (i + 1) / 1024 + 64) * 0x1p-24 * acc;
        double e = fabs((double)o[i] - want) - tol;
        worst = e > worst ? e : worst;
    }
    free(o);
    bench_verdict(r, worst <= 0, "off by %.3g beyond the documented bound", worst);
    return GX_OK;
}

/* The median host time of `calls` calls of fn(arg), each timed alone, after 8 warm
 * ones (compiled, cached, pooled); queued work is drained with gx_sync every 32
 * calls, outside the timing. */
static gx_status time_calls(gx_ctx *ctx, gx_status (*fn)(void *), void *arg, int calls, double *median)
{
    double *t = calloc((size_t)calls, sizeof *t);
    gx_status s = t ? GX_OK : GX_ERR_OUT_OF_MEMORY;
    for (int i = 0; s == GX_OK && i < 8; i++)
        s = fn(arg);
    if (s == GX_OK)
        s = gx_sync(ctx);
    for (int i = 0; s == GX_OK && i < calls; i++) {
        double t0 = now_us();
        s = fn(arg);
        t[i] = now_us() - t0;
        if (s == GX_OK && i % 32 == 31)
            s = gx_sync(ctx);
    }
    if (s == GX_OK)
        s = gx_sync(ctx);
    if (s == GX_OK) {
        qsort(t, (size_t)calls, sizeof *t, cmp_dbl);
        *median = t[calls / 2];
    }
    free(t);
    return s;
}

static gx_status ho_call_v(void *h) { return ho_call(h); }

static gx_status ho_case(gx_ctx *ctx, int op, const char *name, int64_t n, int reps, bench_result *rows, int *nrows)
{
    ho_state h = {.ctx = ctx, .op = op, .n = n};
    double med = 0;
    gx_status s = bench_random_f32(ctx, n, 31, &h.x);
    if (s == GX_OK)
        s = bench_output_f32(ctx, n, &h.out);
    if (s == GX_OK)
        s = gx_array_zeros(ctx, GX_F32, 0, NULL, &h.s0);
    if (s == GX_OK)
        s = gx_array_zeros(ctx, GX_I64, 0, NULL, &h.cnt);
    if (s == GX_OK)
        s = time_calls(ctx, ho_call_v, &h, reps < 200 ? 200 : reps, &med);
    if (s == GX_OK) {
        bench_result *r = &rows[*nrows];
        *r = bench_row(op >= LAT_SUM ? "gx 1 call" : "gx host", name, "f32", n, med, (double)n * 8, 0, 0, 0);
        s = ho_check(&h, r);
        if (s == GX_OK)
            (*nrows)++;
    }
    gx_array_release(h.x);
    gx_array_release(h.out);
    gx_array_release(h.s0);
    gx_array_release(h.kept);
    gx_array_release(h.cnt);
    return s;
}

gx_status bench_case_host_overhead_map(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                       int *nrows)
{
    (void)k, (void)n;
    return ho_case(ctx, HO_MAP, "host_overhead_map", HO_N, reps, rows, nrows);
}

gx_status bench_case_host_overhead_reduce(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                          int *nrows)
{
    (void)k, (void)n;
    return ho_case(ctx, HO_REDUCE, "host_overhead_reduce", HO_N, reps, rows, nrows);
}

gx_status bench_case_host_overhead_scan(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                        int *nrows)
{
    (void)k, (void)n;
    return ho_case(ctx, HO_SCAN, "host_overhead_scan", HO_N, reps, rows, nrows);
}

gx_status bench_case_host_overhead_filter(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                          int *nrows)
{
    (void)k, (void)n;
    return ho_case(ctx, HO_FILTER, "host_overhead_filter", HO_N, reps, rows, nrows);
}

gx_status bench_case_host_overhead_filter_into(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps,
                                               bench_result *rows, int *nrows)
{
    (void)k, (void)n;
    return ho_case(ctx, HO_FILTER_INTO, "host_overhead_filter_into", HO_N, reps, rows, nrows);
}

/* ------------------------------------------------------------ one call to a host result */

gx_status bench_case_lat_sum_to_host(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                     int *nrows)
{
    (void)k;
    return ho_case(ctx, LAT_SUM, "lat_sum_to_host", n, reps, rows, nrows);
}

gx_status bench_case_lat_scan_sync(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return ho_case(ctx, LAT_SCAN, "lat_scan_sync", n, reps, rows, nrows);
}

gx_status bench_case_lat_filter_new(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                    int *nrows)
{
    (void)k;
    return ho_case(ctx, LAT_FILTER, "lat_filter_new", n, reps, rows, nrows);
}

gx_status bench_case_lat_map_sync(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return ho_case(ctx, LAT_MAP, "lat_map_sync", n, reps, rows, nrows);
}

/* ------------------------------------------------------------ the driver's launch */

typedef int (*drv_load_fn)(void **mod, const void *image);
typedef int (*drv_getf_fn)(void **fn, void *mod, const char *name);
typedef int (*drv_launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                             unsigned shmem, void *stream, void **params, void **extra);
typedef int (*drv_unload_fn)(void *mod);

static const char *DRV_PTX = ".version 7.0\n.target sm_80\n.address_size 64\n"
                             ".visible .entry gx_ho_empty(.param .align 8 .b8 gx_ho_empty_p[64])\n{\n ret;\n}\n";

/* One launch of the empty kernel with a zeroed 64-byte argument; failures counted. */
typedef struct drv_call {
    drv_launch_fn launch;
    void *fn, *stream;
    int bad;
} drv_call;

static gx_status drv_call_one(void *p)
{
    drv_call *c = p;
    unsigned char arg[64] = {0};
    void *params[1] = {arg};
    c->bad += c->launch(c->fn, 1, 1, 1, 32, 1, 1, 0, c->stream, params, NULL) != 0;
    return GX_OK;
}

gx_status bench_case_host_overhead_driver_launch(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps,
                                                 bench_result *rows, int *nrows)
{
    (void)n;
    if (k != GX_BACKEND_CUDA)
        return GX_OK;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    drv_load_fn load = lib ? (drv_load_fn)dlsym(lib, "cuModuleLoadData") : NULL;
    drv_getf_fn getf = lib ? (drv_getf_fn)dlsym(lib, "cuModuleGetFunction") : NULL;
    drv_launch_fn launch = lib ? (drv_launch_fn)dlsym(lib, "cuLaunchKernel") : NULL;
    drv_unload_fn unload = lib ? (drv_unload_fn)dlsym(lib, "cuModuleUnload") : NULL;
    void *stream = NULL, *mod = NULL, *fn = NULL;
    gx_status s = gx_sync(ctx); /* the context current on this thread */
    if (s == GX_OK)
        s = gx_ctx_stream_handle(ctx, &stream);
    if (s != GX_OK || !load || !getf || !launch || !unload || load(&mod, DRV_PTX) != 0 ||
        getf(&fn, mod, "gx_ho_empty") != 0) {
        if (s == GX_OK)
            fprintf(stderr, "host_overhead_driver_launch: the driver's symbols or the empty module are missing\n");
        if (mod)
            unload(mod);
        if (lib)
            dlclose(lib);
        return s;
    }
    drv_call c = {launch, fn, stream, 0};
    double med = 0;
    s = time_calls(ctx, drv_call_one, &c, reps < 200 ? 200 : reps, &med);
    if (s == GX_OK) {
        bench_result *r = &rows[*nrows];
        *r = bench_row("driver", "host_overhead_driver_launch", "-", 1, med, 0, 0, 0, 0);
        bench_verdict(r, c.bad == 0, "%d launches failed", c.bad);
        (*nrows)++;
    }
    unload(mod);
    dlclose(lib);
    return s;
}

/* ------------------------------------------------------------ the floor */

/* An empty user kernel (gx/kernel.h) through gx's launch path, one block of one
 * thread: what any call that waits for the device costs at least. */
static const char *FLOOR_SRC = "extern \"C\" __global__ void gx_floor_empty() {}\n";

static gx_status floor_case(gx_ctx *ctx, bool d2h, int reps, bench_result *rows, int *nrows)
{
    gx_kernel *kern = NULL;
    gx_array *word = NULL;
    int calls = reps < 200 ? 200 : reps;
    double *t = calloc((size_t)calls, sizeof *t);
    gx_status s = t ? gx_kernel_compile(ctx, FLOOR_SRC, "gx_floor_empty", NULL, &kern) : GX_ERR_OUT_OF_MEMORY;
    if (s == GX_ERR_UNSUPPORTED) { /* no user kernels on this backend: no row */
        free(t);
        gx_clear_error();
        return GX_OK;
    }
    const int64_t magic = 0x5eed5eed1234LL;
    if (s == GX_OK)
        s = gx_array_from_host(ctx, GX_I64, 0, NULL, &magic, &word);
    gx_launch_cfg cfg = {.grid = {1, 1, 1}, .block = {1, 1, 1}};
    int64_t got = 0;
    for (int i = 0; s == GX_OK && i < 8; i++) /* warm: module loaded, pool filled */
        s = gx_kernel_launch(kern, &cfg, 0, NULL);
    if (s == GX_OK)
        s = gx_sync(ctx);
    for (int i = 0; s == GX_OK && i < calls; i++) {
        double t0 = now_us();
        s = gx_kernel_launch(kern, &cfg, 0, NULL);
        /* the 8-byte read waits for the stream first, as a result read does */
        if (s == GX_OK)
            s = d2h ? gx_array_to_host(word, &got, 8) : gx_sync(ctx);
        t[i] = now_us() - t0;
    }
    if (s == GX_OK) {
        qsort(t, (size_t)calls, sizeof *t, cmp_dbl);
        bench_result *r = &rows[*nrows];
        *r = bench_row("gx floor", d2h ? "floor_launch_d2h_sync" : "floor_launch_sync", "-", 1, t[calls / 2],
                       0, 0, 0, 0);
        if (d2h)
            bench_verdict(r, got == magic, "read %lld, want %lld", (long long)got, (long long)magic);
        else
            bench_pass(r);
        (*nrows)++;
    }
    free(t);
    gx_kernel_destroy(kern);
    gx_array_release(word);
    return s;
}

gx_status bench_case_floor_launch_sync(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                       int *nrows)
{
    (void)k, (void)n;
    return floor_case(ctx, false, reps, rows, nrows);
}

gx_status bench_case_floor_launch_d2h_sync(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                           int *nrows)
{
    (void)k, (void)n;
    return floor_case(ctx, true, reps, rows, nrows);
}

/* ------------------------------------------------------------ graph_nodes */

enum { GN_MAP, GN_COPY, GN_SUM, GN_SCAN, GN_KINDS };
static const char *const gn_name[GN_KINDS] = {"graph_node_map", "graph_node_copy", "graph_node_sum0d",
                                              "graph_node_scanmax"};

typedef struct gn {
    gx_ctx *ctx;
    gx_array *x, *y, *s;
    gx_graph *g;
} gn;

/* Call i of a chain of `kind`: maps and copies go x -> y -> x..., so each depends on
 * the one before; the sums all read x; the max scans go back and forth like maps. */
static gx_status gn_call(gn *c, int kind, int i)
{
    gx_array *a = i % 2 ? c->y : c->x, *b = i % 2 ? c->x : c->y;
    switch (kind) {
    case GN_MAP: return gx_map_into(c->ctx, "x -> x * 0.5f + 1", 1, &a, NULL, b);
    case GN_COPY: return gx_array_copy_into(a, b);
    case GN_SUM: return gx_reduce_into(c->ctx, "+", c->x, NULL, c->s);
    default: return gx_scan_into(c->ctx, "max", a, NULL, b);
    }
}

static gx_status gn_replay(void *p) { return gx_graph_launch(((gn *)p)->g); }

/* The host's version of the chain's last output after `runs` replays: y = f(x) for one
 * call (x is only read); x = f^(10 runs)(x) for ten (maps; a max scan is idempotent
 * after its first pass, a copy leaves x alone).  Exact (one f32 rounding per step,
 * as on the device), and the sum against its f32 bound. */
static gx_status gn_check(gn *c, int kind, int calls, int runs, int64_t n, bench_result *r)
{
    const float *x0 = bench_inputs_f32(n, 43);
    float *h = malloc((size_t)n * sizeof *h), *want = malloc((size_t)n * sizeof *want);
    const gx_array *out = calls % 2 && kind != GN_SUM ? c->y : c->x;
    gx_status s = x0 && h && want ? gx_array_to_host(out, h, (size_t)n * sizeof *h) : GX_ERR_OUT_OF_MEMORY;
    if (s == GX_OK) {
        memcpy(want, x0, (size_t)n * sizeof *want);
        int64_t steps = kind == GN_SUM ? 0 : calls % 2 ? 1 : (int64_t)calls * runs;
        for (int64_t i = 0; kind == GN_MAP && i < n; i++)
            for (int64_t k = 0; k < steps; k++) {
                float v = want[i] * 0.5f + 1;
                if (v == want[i])
                    break; /* the fixed point, 2 */
                want[i] = v;
            }
        for (int64_t i = 1; kind == GN_SCAN && steps && i < n; i++)
            want[i] = want[i] > want[i - 1] ? want[i] : want[i - 1];
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++)
            if (h[i] != want[i])
                bad = i;
        bench_verdict(r, bad < 0, "out[%lld] = %.9g, host %.9g", (long long)bad, bad < 0 ? 0.0 : (double)h[bad],
                      bad < 0 ? 0.0 : (double)want[bad]);
        if (kind == GN_SUM) {
            long double sum = 0;
            for (int64_t i = 0; i < n; i++)
                sum += x0[i];
            double got = 0;
            s = bench_read_f64(c->s, &got);
            if (s == GX_OK)
                bench_check_f32_sum(r, got, sum, n, "sum x");
        }
    }
    free(h);
    free(want);
    return s;
}

/* One graph of `calls` calls of `kind` over fresh x (seed 43), replayed. */
static gx_status gn_one(gx_ctx *ctx, int kind, int calls, int64_t n, int reps, bench_result *r)
{
    gn c = {ctx, NULL, NULL, NULL, NULL};
    gx_status s = bench_random_f32(ctx, n, 43, &c.x);
    if (s == GX_OK)
        s = bench_output_f32(ctx, n, &c.y);
    if (s == GX_OK)
        s = gx_array_zeros(ctx, GX_F32, 0, NULL, &c.s);
    if (s == GX_OK)
        s = gn_call(&c, kind, 0); /* compiled before the recording; x -> y leaves x as it was */
    if (s == GX_OK)
        s = gx_graph_begin(ctx);
    if (s == GX_OK) {
        gx_status e = GX_OK;
        for (int i = 0; e == GX_OK && i < calls; i++)
            e = gn_call(&c, kind, i);
        s = gx_graph_end(ctx, &c.g);
        s = e != GX_OK ? e : s;
    }
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, gn_replay, &c, reps, &us);
    if (s == GX_OK)
        s = gx_sync(ctx);
    if (s == GX_OK) {
        *r = bench_row(calls == 1 ? "gx graph x1" : "gx graph x10", gn_name[kind], "f32", n, us,
                       (double)calls * ((kind == GN_SUM ? 1 : 2) * (double)n * 4), 0, 0, 0);
        s = gn_check(&c, kind, calls, reps + 3, n, r);
    }
    gx_graph_destroy(c.g);
    gx_array_release(c.x);
    gx_array_release(c.y);
    gx_array_release(c.s);
    return s;
}

gx_status bench_case_graph_nodes(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    gx_status s = GX_OK;
    for (int kind = 0; s == GX_OK && kind < GN_KINDS; kind++)
        for (int calls = 1; s == GX_OK && calls <= 10; calls += 9) {
            s = gn_one(ctx, kind, calls, n, reps, &rows[*nrows]);
            if (s == GX_OK)
                (*nrows)++;
        }
    return s;
}

/* ------------------------------------------------------------ graph_chain10 */

typedef struct g10 {
    gx_ctx *ctx;
    gx_array *x, *y, *z, *w, *u, *v, *q; /* n elements */
    gx_array *s, *mx, *t, *mn;           /* 0-d */
    gx_graph *g;
} g10;

static gx_status g10_make(gx_ctx *ctx, int64_t n, g10 *c)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    GX_TRY(bench_random_f32(ctx, n, 41, &c->x));
    gx_array **a1[] = {&c->y, &c->z, &c->w, &c->u, &c->v, &c->q};
    for (size_t i = 0; i < sizeof a1 / sizeof a1[0]; i++)
        GX_TRY(bench_output_f32(ctx, n, a1[i]));
    gx_array **a0[] = {&c->s, &c->mx, &c->t, &c->mn};
    for (size_t i = 0; i < sizeof a0 / sizeof a0[0]; i++)
        GX_TRY(gx_array_zeros(ctx, GX_F32, 0, NULL, a0[i]));
    return GX_OK;
}

static void g10_free(g10 *c)
{
    gx_graph_destroy(c->g);
    gx_array *all[] = {c->x, c->y, c->z, c->w, c->u, c->v, c->q, c->s, c->mx, c->t, c->mn};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
}

static gx_status g10_direct(void *p)
{
    g10 *c = p;
    gx_ctx *ctx = c->ctx;
    GX_TRY(gx_map_into(ctx, "x -> 2*x + 1", 1, &c->x, NULL, c->y));
    GX_TRY(gx_map_into(ctx, "x, y -> x*y", 2, (gx_array *[]){c->x, c->y}, NULL, c->z));
    GX_TRY(gx_reduce_into(ctx, "+", c->z, NULL, c->s));
    GX_TRY(gx_scan_into(ctx, "+", c->z, NULL, c->w));
    GX_TRY(gx_reduce_into(ctx, "max", c->w, NULL, c->mx));
    GX_TRY(gx_map_into(ctx, "w, m -> m - w", 2, (gx_array *[]){c->w, c->mx}, NULL, c->u));
    GX_TRY(gx_array_copy_into(c->u, c->v));
    GX_TRY(gx_mapreduce_into(ctx, "a, b -> a*b", "+", 2, (gx_array *[]){c->v, c->x}, NULL, c->t));
    GX_TRY(gx_map_into(ctx, "x -> x * 0.5", 1, &c->y, NULL, c->q));
    return gx_reduce_into(ctx, "min", c->q, NULL, c->mn);
}

static gx_status g10_replay(void *p) { return gx_graph_launch(((g10 *)p)->g); }

/* s = sum z (gx/reduce.h's bound), mx = the scan's last prefix (gx/range.h's bound at
 * i = n - 1; z >= 0 so the largest prefix is the last), mn exactly (f32 ops alike). */
static gx_status g10_check(g10 *c, int64_t n, bench_result *r)
{
    const float *x = bench_inputs_f32(n, 41);
    if (!x)
        return GX_ERR_OUT_OF_MEMORY;
    long double sum = 0;
    float mn = INFINITY;
    for (int64_t i = 0; i < n; i++) {
        float y = 2 * x[i] + 1;
        sum += (long double)(x[i] * y);
        float q = y * 0.5f;
        mn = q < mn ? q : mn;
    }
    double s = 0, mx = 0, gmn = 0;
    GX_TRY(bench_read_f64(c->s, &s));
    GX_TRY(bench_read_f64(c->mx, &mx));
    GX_TRY(bench_read_f64(c->mn, &gmn));
    bench_check_f32_sum(r, s, sum, n, "sum z");
    double tol = (double)((n < 4096 ? n : 4096) + n / 1024 + 64) * 0x1p-24 * (double)sum;
    bench_verdict(r, fabs(mx - (double)sum) <= tol, "max prefix %.9g, host %.9Lg (bound %.3g)", mx, sum, tol);
    bench_verdict(r, gmn == (double)mn, "min %.9g, host %.9g", gmn, (double)mn);
    return GX_OK;
}

gx_status bench_case_graph_chain10(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                   int *nrows)
{
    (void)k;
    g10 d = {0}, g = {0};
    gx_status s = g10_make(ctx, n, &d);
    if (s == GX_OK)
        s = g10_make(ctx, n, &g);
    if (s == GX_OK)
        s = g10_direct(&g); /* compiled and cached before the recording */
    if (s == GX_OK)
        s = gx_graph_begin(ctx);
    if (s == GX_OK) {
        gx_status r = g10_direct(&g);
        s = gx_graph_end(ctx, &g.g);
        s = r != GX_OK ? r : s;
    }
    double bytes = 12.0 * (double)n * 4; /* about what the ten calls read and write, once */
    double us[2] = {0, 0};
    if (s == GX_OK)
        s = bench_time(ctx, g10_direct, &d, reps, &us[0]);
    if (s == GX_OK)
        s = bench_time(ctx, g10_replay, &g, reps, &us[1]);
    if (s == GX_OK)
        s = gx_sync(ctx);
    static const char *impl[2] = {"gx direct", "gx graph"};
    g10 *cs[2] = {&d, &g};
    for (int i = 0; s == GX_OK && i < 2; i++) {
        bench_result *r = &rows[*nrows];
        *r = bench_row(impl[i], "graph_chain10", "f32", n, us[i], bytes, 0, 0, 0);
        s = g10_check(cs[i], n, r);
        if (s == GX_OK)
            (*nrows)++;
    }
    g10_free(&d);
    g10_free(&g);
    return s;
}
