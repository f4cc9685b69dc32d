/* bench_linalg.c -- `gx bench` cases for the vendor operations: sgemm (gx_matmul_into,
 * and on the CPU OpenBLAS called directly, for the ratio) and rand_f32 (gx_rand_into). */
#include "bench_cases.h"

#include <stdlib.h>
#include <string.h>

#ifdef GX_HAVE_CBLAS
#include <cblas.h>
#endif

gx_status bench_case_sgemm(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_rand_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);

typedef struct gemm_state {
    gx_array *a, *b, *c;
    float *ha, *hb, *hc;
    int m;
} gemm_state;

static gx_status run_gemm(void *p)
{
    gemm_state *g = p;
    return gx_matmul_into(g->a, g->b, NULL, g->c);
}

#ifdef GX_HAVE_CBLAS
static gx_status run_openblas(void *p)
{
    gemm_state *g = p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, g->m, g->m, 1.0f, g->ha, g->m, g->hb, g->m, 0.0f,
                g->hc, g->m);
    return GX_OK;
}
#endif

/* An m x m matrix of random f32 (a 2-D view of bench_random_f32's vector). */
static gx_status random_matrix(gx_ctx *ctx, int m, uint64_t seed, gx_array **out)
{
    gx_array *v = NULL;
    int64_t shape[2] = {m, m};
    gx_status s = bench_random_f32(ctx, (int64_t)m * m, seed, &v);
    if (s == GX_OK)
        s = gx_array_reshape(v, 2, shape, out);
    gx_array_release(v);
    return s;
}

/* The matrix order for a size exponent: 4096 at 2^24 and 8192 at 2^28 on a GPU,
 * a quarter of that on the CPU. */
static int gemm_order(gx_backend_kind k, int64_t n)
{
    int m = n >= ((int64_t)1 << 28) ? 8192 : n >= ((int64_t)1 << 24) ? 4096 : 1024;
    return k == GX_BACKEND_CPU ? m / 4 : m;
}

gx_status bench_case_sgemm(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    int m = gemm_order(k, n);
    int64_t mm = (int64_t)m * m, shape[2] = {m, m};
    gemm_state g = {0};
    g.m = m;
    gx_status s = random_matrix(ctx, m, 3, &g.a);
    if (s == GX_OK)
        s = random_matrix(ctx, m, 4, &g.b);
    if (s == GX_OK)
        s = gx_array_zeros(ctx, GX_F32, 2, shape, &g.c);
    double us = 0, flops = 2.0 * (double)m * m * m, bytes = 3.0 * (double)mm * 4;
    if (s == GX_OK)
        s = bench_time(ctx, run_gemm, &g, reps, &us);
    if (s == GX_OK)
        rows[(*nrows)++] = (bench_result){"gx", "sgemm", "f32", m, us, bytes, flops, 0, 0, 0, 0};
#ifdef GX_HAVE_CBLAS
    if (s == GX_OK && k == GX_BACKEND_CPU) {
        g.ha = malloc((size_t)mm * 4), g.hb = malloc((size_t)mm * 4), g.hc = calloc((size_t)mm, 4);
        s = g.ha && g.hb && g.hc ? gx_array_to_host(g.a, g.ha, (size_t)mm * 4) : GX_ERR_OUT_OF_MEMORY;
        if (s == GX_OK)
            s = gx_array_to_host(g.b, g.hb, (size_t)mm * 4);
        if (s == GX_OK)
            s = bench_time(ctx, run_openblas, &g, reps, &us);
        if (s == GX_OK)
            rows[(*nrows)++] = (bench_result){"openblas", "sgemm", "f32", m, us, bytes, flops, 0, 0, 0, 0};
        free(g.ha), free(g.hb), free(g.hc);
    }
#endif
    gx_array_release(g.a);
    gx_array_release(g.b);
    gx_array_release(g.c);
    return s;
}

typedef struct rand_state {
    gx_array *out;
    uint64_t seed;
} rand_state;

static gx_status run_rand(void *p)
{
    rand_state *r = p;
    return gx_rand_into((gx_rng){r->seed++, 0, 0}, r->out);
}

gx_status bench_case_rand_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    rand_state r = {NULL, 1};
    gx_status s = gx_array_empty(ctx, GX_F32, 1, &n, &r.out);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_rand, &r, reps, &us);
    if (s == GX_OK)
        rows[(*nrows)++] = (bench_result){"gx", "rand_f32", "f32", n, us, (double)n * 4, 0, 0, 0, 0, 0};
    gx_array_release(r.out);
    return s;
}
