/* test_cpu_pool.c -- the CPU backend's thread pool, its memory pool, and the kernels
 * whose CPU form splits work by thread (sums, argmin/argmax batches, scan chains):
 * right at every thread count from 1 to twice the cores, and the same bits on a
 * second run at one count, as gx/gx.h promises.  These tests make their own CPU
 * contexts, so they run the same in the cuda.* registration. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "gx_test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* A CPU context with `threads` threads (GX_CPU_THREADS is read at creation). */
static gx_ctx *ctx_threads(int threads)
{
    char v[16];
    snprintf(v, sizeof v, "%d", threads);
    setenv("GX_CPU_THREADS", v, 1);
    gx_ctx *ctx = NULL;
    gx_status s = gx_ctx_create(&ctx, GX_BACKEND_CPU);
    unsetenv("GX_CPU_THREADS");
    return s == GX_OK ? ctx : NULL;
}

static int cpu_cores(void)
{
    gx_ctx *c = NULL;
    gx_device_info d;
    int n = 1;
    if (gx_ctx_create(&c, GX_BACKEND_CPU) == GX_OK && gx_device_info_get(c, &d) == GX_OK && d.multiprocessors > 0)
        n = d.multiprocessors;
    gx_ctx_destroy(c);
    return n;
}

/* Sizes that cross the pool's split points, the find batches (256) and scan chains. */
static const int64_t k_sizes[] = {1, 2, 31, 33, 255, 257, 4097, 65536 * 3 + 5, (1 << 20) + 7};
#define NSIZES ((int)(sizeof k_sizes / sizeof k_sizes[0]))

typedef struct ref_data {
    int64_t n;
    float *f;   /* values with many ties (multiples of 1/8 in [-4, 4)) */
    int32_t *i; /* integers in [-50, 50] */
} ref_data;

static void ref_make(ref_data *r, int64_t n)
{
    r->n = n;
    r->f = malloc((size_t)n * sizeof *r->f);
    r->i = malloc((size_t)n * sizeof *r->i);
    for (int64_t k = 0; k < n; k++) {
        r->f[k] = (float)((int)(gxt_rand01() * 64) - 32) / 8.0f;
        r->i[k] = (int32_t)(gxt_rand01() * 101) - 50;
    }
}

static void ref_free(ref_data *r)
{
    free(r->f);
    free(r->i);
}

static int64_t first_best(const float *x, int64_t n, int sign)
{
    int64_t q = 0;
    for (int64_t k = 1; k < n; k++)
        if (sign * x[k] < sign * x[q])
            q = k;
    return q;
}

/* The row sums of r's values seen as a matrix of n / 33 rows of 33 (rows that are
 * not a multiple of the fold's 16 lanes), and of 3 rows of n / 3 (long rows split
 * over the pool): exact, the values being multiples of 1/8. */
static void check_rows(gx_ctx *ctx, const ref_data *r)
{
    const int64_t cols_of[2] = {33, r->n / 3};
    for (int c = 0; c < 2; c++) {
        int64_t cols = cols_of[c], rows = cols > 0 ? r->n / cols : 0;
        if (rows < 1 || cols < 1)
            continue;
        int64_t shape[2] = {rows, cols};
        gx_array *m = NULL, *rs = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 2, shape, r->f, &m));
        int axis = 1;
        gx_reduce_opts o = {0};
        o.axes = &axis;
        o.naxes = 1;
        GXT_OK(gx_reduce_to(ctx, "+", m, &o, &rs));
        float *got = malloc((size_t)rows * sizeof *got);
        GXT_OK(gx_array_to_host(rs, got, (size_t)rows * sizeof *got));
        int64_t bad = -1;
        for (int64_t i = 0; i < rows && bad < 0; i++) {
            double want = 0;
            for (int64_t j = 0; j < cols; j++)
                want += r->f[i * cols + j];
            if ((double)got[i] != (double)(float)want)
                bad = i;
        }
        if (bad >= 0)
            fprintf(stderr, "rows %lld x %lld: row %lld sum wrong\n", (long long)rows, (long long)cols, (long long)bad);
        GXT_EQ_I64(bad, -1);
        free(got);
        gx_array_release(rs);
        gx_array_release(m);
    }
}

/* Every checked result of one context on one size; `bits` gets the f32 sum's bits. */
static void check_ops(gx_ctx *ctx, const ref_data *r, uint32_t *bits)
{
    int64_t n = r->n;
    gx_array *xf = NULL, *xi = NULL, *sc = NULL, *kept = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, r->f, &xf));
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, r->i, &xi));
    double sf = 0;
    int64_t si = 0;
    for (int64_t k = 0; k < n; k++)
        sf += r->f[k], si += r->i[k];
    gx_scalar v;
    GXT_OK(gx_sum(xf, &v));
    GXT_EQ_I64(v.dtype, GX_F32);
    /* Multiples of 1/8 summed in f64 are exact, so the f32 result is the exact sum
     * rounded once: within half an ulp (it is exact while |sum| < 2^21). */
    GXT_CHECK(fabs(v.v.f - sf) <= 0x1p-24 * fabs(sf));
    float f = (float)v.v.f;
    memcpy(bits, &f, 4);
    GXT_OK(gx_sum(xi, &v));
    GXT_EQ_I64((int64_t)gx_scalar_to_f64(v), si);
    int64_t q = -1;
    GXT_OK(gx_argmin(xf, &q));
    GXT_EQ_I64(q, first_best(r->f, n, 1));
    GXT_OK(gx_argmax(xf, &q));
    GXT_EQ_I64(q, first_best(r->f, n, -1));
    /* Inclusive integer scan: exact against the running sum. */
    GXT_OK(gx_scan(ctx, "+", xi, NULL, &sc));
    gx_array *sc64 = NULL;
    GXT_OK(gx_array_clone(sc, GX_I64, &sc64));
    int64_t *back = malloc((size_t)n * sizeof *back);
    GXT_OK(gx_array_to_host(sc64, back, (size_t)n * sizeof *back));
    gx_array_release(sc64);
    int64_t run = 0, bad = -1;
    for (int64_t k = 0; k < n && bad < 0; k++) {
        run += r->i[k];
        if (back[k] != run)
            bad = k;
    }
    GXT_EQ_I64(bad, -1);
    free(back);
    /* Compaction keeps the order. */
    gx_array *in[1] = {xf};
    int64_t len = -1;
    GXT_OK(gx_filter(ctx, "x -> x > 0.5f", 1, in, NULL, &kept));
    GXT_OK(gx_array_size(kept, &len));
    int64_t want = 0;
    for (int64_t k = 0; k < n; k++)
        want += r->f[k] > 0.5f;
    GXT_EQ_I64(len, want);
    /* ... and the kept values are the host's, in order. */
    float *kv = malloc((size_t)(len > 0 ? len : 1) * sizeof *kv);
    if (len > 0)
        GXT_OK(gx_array_to_host(kept, kv, (size_t)len * sizeof *kv));
    int64_t at = 0, badk = -1;
    for (int64_t k = 0; k < n && badk < 0; k++)
        if (r->f[k] > 0.5f && kv[at++] != r->f[k])
            badk = k;
    GXT_EQ_I64(badk, -1);
    free(kv);
    check_rows(ctx, r);
    gx_array_release(kept);
    gx_array_release(sc);
    gx_array_release(xf);
    gx_array_release(xi);
}

/* f32 accumulation (opts->dtype GX_F32) at every thread count: gx/reduce.h says the
 * error stays under n eps_f32 max|x| on random data.  One lane chain per thread
 * missed it at 1, 3 and 8 threads (0.15-1.04 off against 0.125) before the CPU fold
 * took blocks. */
GXT_TEST(cpu_f32_accumulation_every_thread_count)
{
    int cores = cpu_cores(), top = 2 * cores < 32 ? 2 * cores : 32;
    const int64_t n = ((int64_t)1 << 20) + 3;
    float *h = malloc((size_t)n * sizeof *h);
    long double exact = 0;
    for (int64_t i = 0; i < n; i++) {
        h[i] = (float)(0.5 + 0.5 * gxt_rand01());
        exact += h[i];
    }
    const double bound = (double)n * FLT_EPSILON;
    for (int t = 1; t <= top; t++) {
        gx_ctx *ctx = ctx_threads(t);
        GXT_CHECK(ctx != NULL);
        if (!ctx)
            break;
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
        gx_reduce_opts o = {0};
        o.dtype = GX_F32;
        gx_scalar s;
        GXT_OK(gx_reduce(ctx, "+", x, &o, &s));
        double e = fabs((double)((long double)s.v.f - exact));
        if (!(e <= bound))
            GXT_FAIL_AT(__FILE__, __LINE__, "threads %d: f32-accumulated sum off by %.3g (bound %.3g)", t, e, bound);
        gx_array_release(x);
        gx_ctx_destroy(ctx);
    }
    free(h);
}

GXT_TEST(cpu_every_thread_count_right_and_reproducible)
{
    int cores = cpu_cores(), top = 2 * cores < 32 ? 2 * cores : 32;
    ref_data r[NSIZES];
    for (int s = 0; s < NSIZES; s++)
        ref_make(&r[s], k_sizes[s]);
    for (int t = 1; t <= top; t++) {
        gx_ctx *ctx = ctx_threads(t);
        GXT_CHECK(ctx != NULL);
        if (!ctx)
            break;
        for (int s = 0; s < NSIZES; s++) {
            uint32_t b1 = 0, b2 = 1;
            check_ops(ctx, &r[s], &b1);
            check_ops(ctx, &r[s], &b2);
            if (b1 != b2)
                fprintf(stderr, "threads %d, n %lld: f32 sum bits differ between runs\n", t, (long long)r[s].n);
            GXT_EQ_I64(b1, b2);
        }
        gx_ctx_destroy(ctx);
    }
    for (int s = 0; s < NSIZES; s++)
        ref_free(&r[s]);
}

/* The bits of a sum of inexact values (its rounding depends on the order of the
 * additions) and of a row sum: the same on a second run at each thread count, and
 * within the f64 reference's rounding bound at all. */
static void sums_bits(gx_ctx *ctx, const float *h, int64_t n, uint32_t *whole, uint32_t *row0)
{
    gx_array *x = NULL, *m = NULL, *rs = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
    gx_scalar v;
    GXT_OK(gx_sum(x, &v));
    float f = (float)v.v.f;
    memcpy(whole, &f, 4);
    int64_t shape[2] = {2, n / 2};
    GXT_OK(gx_array_from_host(ctx, GX_F32, 2, shape, h, &m));
    int axis = 1;
    gx_reduce_opts o = {0};
    o.axes = &axis;
    o.naxes = 1;
    GXT_OK(gx_reduce_to(ctx, "+", m, &o, &rs));
    float r2[2];
    GXT_OK(gx_array_to_host(rs, r2, sizeof r2));
    memcpy(row0, &r2[0], 4);
    gx_array_release(rs);
    gx_array_release(m);
    gx_array_release(x);
}

GXT_TEST(cpu_inexact_sums_same_bits_per_thread_count)
{
    int cores = cpu_cores(), top = 2 * cores < 32 ? 2 * cores : 32;
    const int64_t n = (1 << 20) + 38; /* even: two rows */
    float *h = malloc((size_t)n * sizeof *h);
    double want = 0, want0 = 0, mag = 0;
    for (int64_t k = 0; k < n; k++) {
        h[k] = (float)(gxt_rand01() * 2 - 0.9);
        want += h[k];
        want0 += k < n / 2 ? h[k] : 0;
        mag += fabs(h[k]);
    }
    for (int t = 1; t <= top; t++) {
        gx_ctx *ctx = ctx_threads(t);
        GXT_CHECK(ctx != NULL);
        if (!ctx)
            break;
        uint32_t a1, a2, b1, b2;
        sums_bits(ctx, h, n, &a1, &b1);
        sums_bits(ctx, h, n, &a2, &b2);
        GXT_EQ_I64(a1, a2);
        GXT_EQ_I64(b1, b2);
        float fa, fb;
        memcpy(&fa, &a1, 4);
        memcpy(&fb, &b1, 4);
        /* f64 accumulation: the f32 result is the reference rounded once, give or take
         * the f64 additions' error (n * 2^-53 of the magnitudes' sum). */
        GXT_CHECK(fabs(fa - want) <= 0x1p-24 * fabs(want) + n * 0x1p-52 * mag);
        GXT_CHECK(fabs(fb - want0) <= 0x1p-24 * fabs(want0) + n * 0x1p-52 * mag);
        gx_ctx_destroy(ctx);
    }
    free(h);
}

/* argmin/argmax in batches: a best value met again in a later batch keeps the first
 * index; NaN loses to everything and is the answer only when all values are NaN. */
GXT_TEST(cpu_find_batches_ties_and_nan)
{
    gx_ctx *ctx = ctx_threads(2);
    GXT_CHECK(ctx != NULL);
    const int64_t ns[] = {1, 255, 256, 257, 1000, 70001};
    for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++) {
        int64_t n = ns[c];
        double *h = malloc((size_t)n * sizeof *h);
        for (int64_t k = 0; k < n; k++)
            h[k] = (k % 7 == 3) ? NAN : (double)(k % 97);
        h[n - 1] = -5; /* the minimum last ... */
        if (n > 300)
            h[n / 3] = -5; /* ... and earlier in another batch: the first wins */
        h[n / 2] = n > 2 ? 500 : h[n / 2];
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x));
        int64_t q = -1;
        GXT_OK(gx_argmin(x, &q));
        GXT_EQ_I64(q, n > 300 ? n / 3 : n - 1);
        GXT_OK(gx_argmax(x, &q));
        GXT_EQ_I64(q, n > 2 ? n / 2 : (n == 1 ? 0 : 0));
        gx_array_release(x);
        for (int64_t k = 0; k < n; k++)
            h[k] = NAN;
        GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x));
        GXT_OK(gx_argmin(x, &q));
        GXT_EQ_I64(q, 0);
        if (n > 3) {
            h[n - 2] = 1;
            gx_array_release(x);
            GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x));
            GXT_OK(gx_argmax(x, &q));
            GXT_EQ_I64(q, n - 2);
        }
        gx_array_release(x);
        free(h);
    }
    /* The batch keeps 64 lanes (32 for 8-byte values) in four chains: a lone best in
     * each chain and lane position, found in the first batch and in later ones. */
    const int64_t at[] = {0, 15, 16, 17, 47, 63, 64, 200, 255, 256, 511, 512 + 40, 1023, 1024, 1030};
    const int64_t n = 1031;
    double *h = malloc((size_t)n * sizeof *h);
    float *hf = malloc((size_t)n * sizeof *hf);
    for (size_t c = 0; c < sizeof at / sizeof at[0]; c++) {
        for (int64_t k = 0; k < n; k++)
            h[k] = (double)(k % 13);
        h[at[c]] = -3;
        h[(at[c] + 500) % n] = 99;
        for (int64_t k = 0; k < n; k++)
            hf[k] = (float)h[k];
        gx_array *x = NULL, *y = NULL;
        int64_t q = -1;
        GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x));
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, hf, &y));
        GXT_OK(gx_argmin(x, &q));
        GXT_EQ_I64(q, at[c]);
        GXT_OK(gx_argmin(y, &q));
        GXT_EQ_I64(q, at[c]);
        GXT_OK(gx_argmax(y, &q));
        GXT_EQ_I64(q, (at[c] + 500) % n);
        gx_array_release(x);
        gx_array_release(y);
    }
    free(h);
    free(hf);
    gx_ctx_destroy(ctx);
}

/* Every integer and float dtype through the batched argmin/argmax, against a host
 * first-index search over the same values. */
GXT_TEST(cpu_find_every_dtype)
{
    gx_ctx *ctx = ctx_threads(3);
    GXT_CHECK(ctx != NULL);
    const gx_dtype dts[] = {GX_I8, GX_U8, GX_I16, GX_U16, GX_I32, GX_U32, GX_I64, GX_U64, GX_F32, GX_F64};
    int64_t n = 5000 + 77;
    double *vals = malloc((size_t)n * sizeof *vals);
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        for (int64_t k = 0; k < n; k++)
            vals[k] = (double)(int)(gxt_rand01() * 100); /* 0..99: ties everywhere */
        gx_array *xd = NULL, *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, vals, &xd));
        GXT_OK(gx_array_clone(xd, dts[d], &x));
        int64_t lo = 0, hi = 0, q = -1;
        for (int64_t k = 1; k < n; k++) {
            lo = vals[k] < vals[lo] ? k : lo;
            hi = vals[k] > vals[hi] ? k : hi;
        }
        GXT_OK(gx_argmin(x, &q));
        GXT_EQ_I64(q, lo);
        GXT_OK(gx_argmax(x, &q));
        GXT_EQ_I64(q, hi);
        gx_array_release(x);
        gx_array_release(xd);
    }
    free(vals);
    gx_ctx_destroy(ctx);
}

/* The memory pool hands a released block to the next array of its size class: the
 * new array has its own contents, the pool's bytes show in `reserved`, and a trim
 * gives them back. */
GXT_TEST(cpu_memory_pool_reuses_and_trims)
{
    gx_ctx *ctx = ctx_threads(2);
    GXT_CHECK(ctx != NULL);
    int64_t n = 1 << 20;
    gx_array *a = NULL, *b = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &a));
    GXT_OK(gx_array_fill_f64(a, 7));
    gx_array_release(a);
    gx_memory_stats m;
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_EQ_I64(m.in_use, 0);
    GXT_CHECK(m.reserved >= (size_t)n * 4); /* kept for the next array */
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &b));
    float *h = malloc((size_t)n * sizeof *h);
    GXT_OK(gx_array_to_host(b, h, (size_t)n * sizeof *h));
    int64_t nonzero = 0;
    for (int64_t k = 0; k < n; k++)
        nonzero += h[k] != 0;
    GXT_EQ_I64(nonzero, 0);
    gx_array_release(b);
    GXT_OK(gx_memory_trim(ctx));
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_EQ_I64(m.in_use, 0);
    GXT_CHECK(m.reserved < (size_t)n * 4);
    free(h);
    gx_ctx_destroy(ctx);
}

/* Large blocks (4 MiB and more) start at different offsets ("colours") in their 2 MiB
 * regions, so that arrays walked in step do not share cache sets (cpu_cache.c: a scan
 * of 2^24 f32 took 5x longer on a Xeon with every array 2 MiB-aligned): four arrays
 * allocated in a row lie 64-byte aligned, pairwise apart modulo 4 KiB, hold their own
 * values, and go back to the system on a trim.  (With GX_CPU_COLOURS=1 the offsets
 * check fails, as it should; it is skipped when that knob is set.) */
GXT_TEST(cpu_memory_pool_large_blocks_coloured)
{
    gx_ctx *ctx = ctx_threads(2);
    GXT_CHECK(ctx != NULL);
    int64_t n = (1 << 20) + 17;
    gx_array *a[4] = {NULL};
    uintptr_t at[4];
    for (int i = 0; i < 4; i++) {
        void *p = NULL;
        GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &a[i]));
        GXT_OK(gx_array_fill_f64(a[i], i + 1));
        GXT_OK(gx_array_device_ptr(a[i], &p));
        at[i] = (uintptr_t)p;
        GXT_EQ_I64((int64_t)(at[i] % 64), 0);
    }
    if (!getenv("GX_CPU_COLOURS"))
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++)
                GXT_CHECK((at[i] - at[j]) % 4096 != 0);
    for (int i = 0; i < 4; i++) {
        gx_scalar s;
        GXT_OK(gx_reduce(ctx, "+", a[i], NULL, &s));
        GXT_CHECK(s.v.f == (double)(i + 1) * (double)n); /* below 2^24: exact in f32 */
        gx_array_release(a[i]);
    }
    GXT_OK(gx_memory_trim(ctx));
    gx_memory_stats m;
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_CHECK(m.reserved < (size_t)n * 4);
    gx_ctx_destroy(ctx);
}

/* Workers that sleep (idle past the pool's spin time) are woken for a job handed to
 * them and only then: jobs of few parts (3 of 8192) and of all parts, with pauses
 * that let the idle workers fall asleep, on more threads than cores. */
GXT_TEST(cpu_pool_sleeping_workers_wake_for_their_jobs)
{
    int cores = cpu_cores(), t = 2 * cores < 8 ? 8 : 2 * cores;
    gx_ctx *ctx = ctx_threads(t > 32 ? 32 : t);
    GXT_CHECK(ctx != NULL);
    const int64_t ns[2] = {3 * 8192, (int64_t)t * 8192 + 5};
    for (int c = 0; c < 2; c++) {
        int64_t n = ns[c];
        int32_t *h = malloc((size_t)n * sizeof *h);
        int64_t want = 0;
        for (int64_t k = 0; k < n; k++)
            want += h[k] = (int32_t)(k % 1001) - 500;
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, h, &x));
        for (int it = 0; it < 60; it++) {
            if (it % 3 == 0)
                usleep(400); /* past the spin: the idle workers sleep */
            gx_scalar v;
            GXT_OK(gx_sum(x, &v));
            GXT_EQ_I64((int64_t)gx_scalar_to_f64(v), want);
        }
        gx_array_release(x);
        free(h);
    }
    gx_ctx_destroy(ctx);
}
