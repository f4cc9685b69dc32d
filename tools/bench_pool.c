/* bench_pool.c -- the cost of an allocation + release through gx's pool: a pool hit
 * must cost about a microsecond (cuMemAlloc + cuMemFree took 82 us for 1 MB and
 * 834 us for 1 GB on an H200).  Timed on the host clock, since allocation is a host
 * call; the pool is warmed by one allocation of the size first. */
#include "bench_cases.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static gx_status pool_pair_us(gx_ctx *ctx, int64_t bytes, int reps, double *median)
{
    double *t = calloc((size_t)reps, sizeof *t);
    if (!t)
        return GX_ERR_OUT_OF_MEMORY;
    gx_status s = GX_OK;
    for (int i = -3; s == GX_OK && i < reps; i++) {
        gx_array *a = NULL;
        double t0 = now_us();
        s = gx_array_empty(ctx, GX_U8, 1, &bytes, &a);
        if (s == GX_OK)
            s = gx_array_release(a);
        if (i >= 0)
            t[i] = now_us() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    *median = t[reps / 2];
    free(t);
    return s;
}

gx_status bench_case_pool(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    /* One row per size class, independent of n: report once, at the first size. */
    static int done;
    if (done++)
        return GX_OK;
    (void)n;
    const int64_t sizes[2] = {1 << 20, 1 << 30};
    for (int i = 0; i < 2; i++) {
        double us = 0;
        gx_status s = pool_pair_us(ctx, sizes[i], reps * 10, &us);
        if (s != GX_OK)
            return s;
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", "pool_alloc_free", "u8", sizes[i], us, 0, 0, 0, 0);
        bench_nocheck(r, "an allocation and its release: no result to check");
    }
    return GX_OK;
}

/* ------------------------------------------------------------ write bandwidth */

/* Outputs rotated through; slot i last got the value v[i]. */
typedef struct fill_state {
    gx_array *a[BENCH_MAXROT];
    double v[BENCH_MAXROT], next_v;
    int k, next;
} fill_state;
static gx_status run_fill(void *p)
{
    fill_state *f = p;
    int i = f->next++ % f->k;
    f->v[i] = f->next_v += 1; /* a fresh value each run */
    return gx_array_fill_f64(f->a[i], f->v[i]);
}

/* gx_array_fill: the device's write bandwidth (each byte written once), the
 * ceiling for generators such as gx_rand.  Checked: every element of the last
 * array written holds its value (0.5 + a whole number below 2^24: exact in f32). */
gx_status bench_case_fill(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    fill_state f = {.next_v = 0.5};
    double bytes = (double)n * 4;
    gx_status s = bench_outputs_f32(ctx, n, bench_rot_count(ctx, bytes), f.a, &f.k);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_fill, &f, reps, &us);
    int last = f.k > 0 ? (f.next - 1) % f.k : 0;
    float *h = NULL;
    if (s == GX_OK)
        s = bench_fetch(f.a[last], (void **)&h);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", "fill_f32", "f32", n, us, bytes, 0, 0, f.k * bytes);
        float want_v = (float)f.v[last];
        int64_t i = 0;
        while (i < n && h[i] == want_v)
            i++;
        bench_verdict(r, i == n, "[%lld] = %.9g, filled with %.9g", (long long)i, i < n ? h[i] : 0.0, want_v);
        r->check = (double)want_v * (double)n, r->has_check = 1;
    }
    free(h);
    for (int i = 0; i < BENCH_MAXROT; i++)
        gx_array_release(f.a[i]);
    return s;
}

/* ------------------------------------------------------------ the kernel cache */

/* One small map of x -> x * c + 1 over iota(1024) on ctx, timed with its wait; the
 * result is checked (sets *bad when an element is off by more than an f32 rounding
 * of each operation, 2^-23 relative). */
static double map_once_us(gx_ctx *ctx, const char *lambda, float c, gx_status *s, bool *bad)
{
    gx_array *x = NULL, *y = NULL;
    int64_t n = 1024;
    *s = gx_array_iota(ctx, GX_F32, n, 0, 1, &x);
    double t0 = now_us();
    if (*s == GX_OK)
        *s = gx_map(ctx, lambda, 1, &x, NULL, &y);
    if (*s == GX_OK)
        *s = gx_sync(ctx);
    double t = now_us() - t0;
    float h[1024];
    if (*s == GX_OK)
        *s = gx_array_to_host(y, h, sizeof h);
    for (int i = 0; *s == GX_OK && i < n; i++) {
        double want = (double)i * c + 1;
        if (!(fabs(h[i] - want) <= 0x1p-23 * fabs(want)))
            *bad = true;
    }
    gx_array_release(x);
    gx_array_release(y);
    return t;
}

/* What a new lambda costs: compiled (a miss), then found on disk by a fresh context
 * (the second run of a program), then found in memory.  Each includes one small map,
 * whose result is checked. */
gx_status bench_case_jit(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)n;
    (void)reps;
    static int done;
    if (done++)
        return GX_OK;
    char lambda[96], num[48];
    snprintf(num, sizeof num, "%.6f", (double)(now_us() - (double)(int64_t)now_us()) + 1.5);
    snprintf(lambda, sizeof lambda, "x -> x * %sf + 1", num);
    float c = strtof(num, NULL);
    gx_status s;
    bool bad[3] = {false, false, false};
    double miss = map_once_us(ctx, lambda, c, &s, &bad[0]);
    if (s != GX_OK)
        return s;
    gx_ctx *c2 = NULL;
    s = gx_ctx_create(&c2, k);
    double disk = s == GX_OK ? map_once_us(c2, lambda, c, &s, &bad[1]) : 0;
    double mem = s == GX_OK ? map_once_us(c2, lambda, c, &s, &bad[2]) : 0;
    gx_cache_stats cs;
    if (s == GX_OK)
        s = gx_cache_stats_get(c2, &cs);
    gx_ctx_destroy(c2);
    if (s != GX_OK)
        return s;
    const char *ops[3] = {"jit_miss", cs.compiles == 0 ? "jit_disk_hit" : "jit_disk_hit?", "jit_memory_hit"};
    double us[3] = {miss, disk, mem};
    for (int i = 0; i < 3; i++) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", ops[i], "f32", 1024, us[i], 0, 0, 0, 0);
        /* The time is the compiler's or the cache's; the map it includes is checked. */
        bench_verdict(r, !bad[i], "%s: the map's result differs from the host's", lambda);
    }
    return GX_OK;
}
