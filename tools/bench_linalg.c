/* bench_linalg.c -- `gx bench` cases for the vendor operations: sgemm (gx_matmul_into,
 * and on the CPU OpenBLAS called directly, for the ratio) and rand_f32 (gx_rand_into). */
#include "bench_cases.h"

#include <math.h>
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

/* 16 entries of C = A B (row-major m x m, inputs of seeds 3 and 4) against a double
 * dot product: within the order-free bound m 2^-24 sum_l |a_il b_lj| (gamma_m; the
 * inputs are >= 0, so the sum is the reference itself) -- a tile left out or added
 * twice is off by about 1/tiles of it, far beyond. */
static void gemm_verify(const float *c, int m, bench_result *row)
{
    const float *a = bench_inputs_f32((int64_t)m * m, 3), *b = bench_inputs_f32((int64_t)m * m, 4);
    if (!a || !b) {
        bench_verdict(row, false, "no memory for the host reference");
        return;
    }
    for (int t = 0; t < 16; t++) {
        int64_t i = t == 0 ? 0 : t == 15 ? m - 1 : (int64_t)(bench_bits(78, (uint64_t)t) % (uint64_t)m);
        int64_t j = t == 0 ? 0 : t == 15 ? m - 1 : (int64_t)(bench_bits(79, (uint64_t)t) % (uint64_t)m);
        double want = 0;
        for (int64_t l = 0; l < m; l++)
            want += (double)a[i * m + l] * (double)b[l * m + j];
        double got = c[i * m + j], tol = (double)m * 0x1p-24 * want, err = fabs(got - want);
        if (!(err <= tol)) {
            bench_verdict(row, false, "C[%lld][%lld] = %.9g, host %.9g: off by %.3g > %.3g", (long long)i, (long long)j,
                          got, want, err, tol);
            return;
        }
    }
    bench_pass(row);
}

/* Not rotated: the peers' (cuBLAS, PyTorch, CuPy) GEMMs are not, and the time is the
 * arithmetic's. */
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
    float *hc = NULL;
    if (s == GX_OK)
        s = bench_fetch(g.c, (void **)&hc);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", "sgemm", "f32", m, us, bytes, flops, 0, 0);
        gemm_verify(hc, m, r);
    }
    free(hc);
#ifdef GX_HAVE_CBLAS
    if (s == GX_OK && k == GX_BACKEND_CPU) {
        g.ha = malloc((size_t)mm * 4), g.hb = malloc((size_t)mm * 4), g.hc = calloc((size_t)mm, 4);
        s = g.ha && g.hb && g.hc ? gx_array_to_host(g.a, g.ha, (size_t)mm * 4) : GX_ERR_OUT_OF_MEMORY;
        if (s == GX_OK)
            s = gx_array_to_host(g.b, g.hb, (size_t)mm * 4);
        if (s == GX_OK)
            s = bench_time(ctx, run_openblas, &g, reps, &us);
        if (s == GX_OK) {
            bench_result *r = &rows[(*nrows)++];
            *r = bench_row("openblas", "sgemm", "f32", m, us, bytes, flops, 0, 0);
            gemm_verify(g.hc, m, r);
        }
        free(g.ha), free(g.hb), free(g.hc);
    }
#endif
    gx_array_release(g.a);
    gx_array_release(g.b);
    gx_array_release(g.c);
    return s;
}

/* Outputs rotated through; run i writes stream seed (the key) seeds[slot]. */
typedef struct rand_state {
    gx_array *out[BENCH_MAXROT];
    uint64_t seed[BENCH_MAXROT];
    uint64_t next_seed;
    int k, next;
} rand_state;

static gx_status run_rand(void *p)
{
    rand_state *r = p;
    int i = r->next++ % r->k;
    r->seed[i] = r->next_seed++; /* a fresh stream each run */
    return gx_rand_into((gx_rng){r->seed[i], 0, 0}, r->out[i]);
}

/* gx_rand's element g of key `seed` (gx/linalg.h: Philox4x32-10, counter {g / 4, 0},
 * word g % 4, (w >> 8) 2^-24), through the host generator gx exports. */
static float rand_ref(uint64_t seed, int64_t g)
{
    uint64_t b = (uint64_t)g / 4;
    uint32_t ctr[4] = {(uint32_t)b, (uint32_t)(b >> 32), 0, 0}, key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, w[4];
    gx_philox4x32_10_host(ctr, key, w);
    return (float)(w[g % 4] >> 8) * 0x1p-24f;
}

/* The bits at the sampled positions against the host generator, exactly (uniform
 * outputs are bit-identical on every backend, gx/linalg.h); and over every element:
 * in [0, 1), the mean within 6 sigma of 1/2 (sigma^2 = 1/(12 n)), the mean square
 * within 6 sigma of 1/3 (sigma^2 = 4/(45 n)), each of 16 bins within 6 sigma of n/16. */
static void rand_verify(const float *o, int64_t n, uint64_t seed, bench_result *row)
{
    static int64_t idx[BENCH_SAMPLES + 2];
    int m = bench_sample_idx(n, idx);
    for (int j = 0; j < m; j++) {
        float want = rand_ref(seed, idx[j]);
        if (memcmp(&o[idx[j]], &want, sizeof want) != 0) {
            bench_verdict(row, false, "[%lld] = %.9g, host Philox %.9g (seed %llu)", (long long)idx[j], o[idx[j]], want,
                          (unsigned long long)seed);
            return;
        }
    }
    double s1 = 0, s2 = 0, bins[16] = {0};
    for (int64_t i = 0; i < n; i++) {
        if (!(o[i] >= 0.0f && o[i] < 1.0f)) {
            bench_verdict(row, false, "[%lld] = %.9g, outside [0, 1)", (long long)i, o[i]);
            return;
        }
        s1 += o[i], s2 += (double)o[i] * o[i];
        bins[(int)(o[i] * 16)]++;
    }
    double dn = (double)n, mean = s1 / dn, msq = s2 / dn;
    bool ok = fabs(mean - 0.5) <= 6 * sqrt(1.0 / 12 / dn) && fabs(msq - 1.0 / 3) <= 6 * sqrt(4.0 / 45 / dn);
    for (int b = 0; b < 16; b++)
        ok = ok && fabs(bins[b] - dn / 16) <= 6 * sqrt(dn / 16 * 15 / 16) + 1;
    bench_verdict(row, ok, "statistics off: mean %.6g, mean square %.6g over %lld values", mean, msq, (long long)n);
}

gx_status bench_case_rand_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    rand_state r = {.next_seed = 1};
    double bytes = (double)n * 4;
    gx_status s = bench_outputs_f32(ctx, n, bench_rot_count(ctx, bytes), r.out, &r.k);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_rand, &r, reps, &us);
    int last = r.k > 0 ? (r.next - 1) % r.k : 0;
    float *h = NULL;
    if (s == GX_OK)
        s = bench_fetch(r.out[last], (void **)&h);
    if (s == GX_OK) {
        bench_result *row = &rows[(*nrows)++];
        *row = bench_row("gx", "rand_f32", "f32", n, us, bytes, 0, 0, r.k * bytes);
        long double sum = 0;
        for (int64_t i = 0; i < n; i++)
            sum += h[i];
        row->check = (double)sum, row->has_check = 1;
        rand_verify(h, n, r.seed[last], row);
    }
    free(h);
    for (int i = 0; i < BENCH_MAXROT; i++)
        gx_array_release(r.out[i]);
    return s;
}
