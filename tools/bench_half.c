/* bench_half.c -- `gx bench` cases for f16 / bf16 (issue 20): sum_f16, map_sin2cos2_f16,
 * l2dist_f16 (bandwidth: 2 bytes an element) and gemm_f16 / gemm_bf16 (TFLOP/s; the
 * peers are cuBLAS's cublasGemmEx and torch.matmul).  Inputs: the f32 inputs of a
 * seed (bench_bits) rounded to the half dtype; the host references use those half
 * values. */
#include "bench_cases.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double hb_value(gx_dtype t, float f)
{
    return t == GX_F16 ? gx_f16_to_f32(gx_f32_to_f16(f)) : gx_bf16_to_f32(gx_f32_to_bf16(f));
}

/* The f32 inputs of `seed`, rounded to t, on the device. */
static gx_status hb_random(gx_ctx *ctx, gx_dtype t, int64_t n, uint64_t seed, gx_array **out)
{
    gx_array *x = NULL;
    gx_status s = bench_random_f32(ctx, n, seed, &x);
    if (s == GX_OK)
        s = gx_array_clone(x, t, out);
    gx_array_release(x);
    return s;
}

/* ------------------------------------------------------------ sum, sin^2+cos^2, l2 */

enum { HB_SUM, HB_SIN2COS2, HB_L2 };

/* Inputs (and outputs) rotated through k copies, as the f32 cases do. */
typedef struct hb_state {
    gx_ctx *ctx;
    int which;
    gx_array *x[BENCH_MAXROT], *y[BENCH_MAXROT], *out[BENCH_MAXROT];
    int k, next;
} hb_state;

/* sum: an f32 result (opts->dtype f32: f32 accumulation; an f16 result of 2^28 values
 * in [0, 1) would overflow -- torch.sum(x, dtype=torch.float32) is the peer).  l2:
 * sqrt(sum((x - y)^2)), the squares accumulated in f32, the sqrt the reduction's finish
 * (one kernel, as bench_reduce.c's l2dist). */
static gx_status run_hb(void *p)
{
    hb_state *h = p;
    int i = h->next++ % h->k;
    gx_reduce_opts o = {.dtype = GX_F32};
    gx_array *in[2] = {h->x[i], h->y[i]};
    switch (h->which) {
    case HB_SUM:
        return h->out[i] ? gx_reduce_into(h->ctx, "+", h->x[i], &o, h->out[i])
                         : gx_reduce_to(h->ctx, "+", h->x[i], &o, &h->out[i]);
    case HB_SIN2COS2: return gx_map_into(h->ctx, "x -> sin(x)*sin(x) + cos(x)*cos(x)", 1, in, NULL, h->out[i]);
    default:
        o.finish = "s -> sqrt(s)";
        return h->out[i] ? gx_mapreduce_into(h->ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, &o, h->out[i])
                         : gx_mapreduce_to(h->ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, &o, &h->out[i]);
    }
}

static gx_status hb_verify_scalar(hb_state *h, int64_t n, bench_result *r)
{
    double got = 0;
    gx_status s = bench_read_f64(h->out[(h->next - 1) % h->k], &got);
    const float *x = bench_inputs_f32(n, 21), *y = h->which == HB_L2 ? bench_inputs_f32(n, 22) : NULL;
    if (s != GX_OK || !x || (h->which == HB_L2 && !y))
        return s != GX_OK ? s : GX_ERR_OUT_OF_MEMORY;
    long double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = hb_value(GX_F16, x[i]);
        if (h->which == HB_L2) {
            double d = a - hb_value(GX_F16, y[i]); /* exact in f32 and f16 arithmetic's f32 */
            sum += d * d;
        } else {
            sum += a;
        }
    }
    /* f32 accumulation of n terms in some order: allowed 2^-14 relative (the order's
     * growth at these sizes is far below; a dropped or doubled tile of 2^12 terms at
     * 2^24 is 2^-12 off).  l2: the squares reach the sum as f32 values (gx_mapreduce
     * does not round a half map value to f16), and the sqrt halves the relative error. */
    long double want = h->which == HB_L2 ? sqrtl(sum) : sum;
    double tol = 0x1p-14 * (double)want, err = fabs(got - (double)want);
    bench_verdict(r, err <= tol, "%s %.9g, host %.9Lg: off by %.3g > %.3g", h->which == HB_L2 ? "l2" : "sum", got,
                  want, err, tol);
    return GX_OK;
}

/* Every sampled output of sin^2+cos^2 is 1 (its f32 value rounds to 1.0 in f16). */
static gx_status hb_verify_map(hb_state *h, int64_t n, bench_result *r)
{
    uint16_t *o = NULL;
    gx_status s = bench_fetch(h->out[(h->next - 1) % h->k], (void **)&o);
    int64_t idx[BENCH_SAMPLES + 2];
    int m = s == GX_OK ? bench_sample_idx(n, idx) : 0;
    bool ok = true;
    for (int j = 0; j < m && ok; j++)
        if (gx_f16_to_f32(o[idx[j]]) != 1.0f) {
            bench_verdict(r, false, "[%lld] = %.9g, want 1", (long long)idx[j], gx_f16_to_f32(o[idx[j]]));
            ok = false;
        }
    if (s == GX_OK && ok)
        bench_pass(r);
    free(o);
    return s;
}

static gx_status hb_case(gx_ctx *ctx, int which, const char *op, int64_t n, int reps, bench_result *rows, int *nrows)
{
    hb_state h = {.ctx = ctx, .which = which};
    int nin = which == HB_L2 ? 2 : 1;
    double bytes = (double)n * 2 * nin + (which == HB_SIN2COS2 ? (double)n * 2 : 4);
    int want = bench_rot_count(ctx, bytes), got = 0;
    gx_array *x = NULL, *y = NULL;
    gx_status s = hb_random(ctx, GX_F16, n, 21, &x);
    if (s == GX_OK)
        s = bench_clones(x, want, h.x, &h.k);
    else
        gx_array_release(x);
    if (s == GX_OK && nin == 2) {
        s = hb_random(ctx, GX_F16, n, 22, &y);
        if (s == GX_OK)
            s = bench_clones(y, h.k, h.y, &got);
        else
            gx_array_release(y);
        h.k = got < h.k ? got : h.k;
    }
    for (int i = 0; s == GX_OK && which == HB_SIN2COS2 && i < h.k; i++)
        s = gx_array_empty(ctx, GX_F16, 1, &n, &h.out[i]);
    for (int i = 0; s == GX_OK && i < h.k; i++) /* makes the scalar slots; warms up */
        s = run_hb(&h);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_hb, &h, reps, &us);
    rows[*nrows] = bench_row("gx", op, "f16", n, us, bytes, 0, 0, h.k * bytes);
    if (s == GX_OK)
        s = bench_check(ctx, h.out[(h.next - 1) % h.k], &rows[*nrows]);
    if (s == GX_OK)
        s = which == HB_SIN2COS2 ? hb_verify_map(&h, n, &rows[*nrows]) : hb_verify_scalar(&h, n, &rows[*nrows]);
    if (s == GX_OK)
        (*nrows)++;
    for (int i = 0; i < BENCH_MAXROT; i++) {
        gx_array_release(h.x[i]);
        gx_array_release(h.y[i]);
        gx_array_release(h.out[i]);
    }
    return s;
}

gx_status bench_case_sum_f16(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return hb_case(ctx, HB_SUM, "sum_f16", n, reps, rows, nrows);
}

gx_status bench_case_sin2cos2_f16(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                  int *nrows)
{
    (void)k;
    return hb_case(ctx, HB_SIN2COS2, "map_sin2cos2_f16", n, reps, rows, nrows);
}

gx_status bench_case_l2dist_f16(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return hb_case(ctx, HB_L2, "l2dist_f16", n, reps, rows, nrows);
}

/* ------------------------------------------------------------ GEMM */

typedef struct hg_state {
    gx_array *a, *b, *c;
} hg_state;

static gx_status run_hgemm(void *p)
{
    hg_state *g = p;
    return gx_matmul_into(g->a, g->b, NULL, g->c);
}

/* 16 entries of C (the inputs' dtype) against a double product of the half inputs:
 * f32 accumulation (m 2^-20 of the sum, room for tensor cores' alignment) and one
 * rounding to the half.  Inputs are >= 0, so the sum is the reference itself. */
static void hg_verify(gx_dtype t, const uint16_t *c, int m, bench_result *row)
{
    const float *a = bench_inputs_f32((int64_t)m * m, 3), *b = bench_inputs_f32((int64_t)m * m, 4);
    if (!a || !b) {
        bench_verdict(row, false, "no memory for the host reference");
        return;
    }
    double u = t == GX_F16 ? 0x1p-11 : 0x1p-8;
    for (int q = 0; q < 16; q++) {
        int64_t i = q == 0 ? 0 : q == 15 ? m - 1 : (int64_t)(bench_bits(78, (uint64_t)q) % (uint64_t)m);
        int64_t j = q == 0 ? 0 : q == 15 ? m - 1 : (int64_t)(bench_bits(79, (uint64_t)q) % (uint64_t)m);
        double want = 0;
        for (int64_t l = 0; l < m; l++)
            want += hb_value(t, a[i * m + l]) * hb_value(t, b[l * m + j]);
        uint16_t h = c[i * m + j];
        double got = t == GX_F16 ? gx_f16_to_f32(h) : gx_bf16_to_f32(h);
        double tol = ((double)m * 0x1p-20 + u) * want, err = fabs(got - want);
        if (!(err <= tol)) {
            bench_verdict(row, false, "C[%lld][%lld] = %.9g, host %.9g: off by %.3g > %.3g", (long long)i, (long long)j,
                          got, want, err, tol);
            return;
        }
    }
    bench_pass(row);
}

/* 4096 at 2^24 and 8192 at 2^28 on a GPU, a quarter on the CPU (as sgemm).  Not
 * rotated: the peers' GEMMs are not, and the time is the arithmetic's. */
static gx_status hg_case(gx_ctx *ctx, gx_backend_kind k, gx_dtype t, int64_t n, int reps, bench_result *rows,
                         int *nrows)
{
    int m = n >= ((int64_t)1 << 28) ? 8192 : n >= ((int64_t)1 << 24) ? 4096 : 1024;
    m = k == GX_BACKEND_CPU ? m / 4 : m;
    int64_t mm = (int64_t)m * m, shape[2] = {m, m};
    hg_state g = {0};
    gx_array *va = NULL, *vb = NULL;
    gx_status s = hb_random(ctx, t, mm, 3, &va);
    if (s == GX_OK)
        s = hb_random(ctx, t, mm, 4, &vb);
    if (s == GX_OK)
        s = gx_array_reshape(va, 2, shape, &g.a);
    if (s == GX_OK)
        s = gx_array_reshape(vb, 2, shape, &g.b);
    if (s == GX_OK)
        s = gx_array_zeros(ctx, t, 2, shape, &g.c);
    double us = 0, flops = 2.0 * (double)m * m * m, bytes = 3.0 * (double)mm * 2;
    if (s == GX_OK)
        s = bench_time(ctx, run_hgemm, &g, reps, &us);
    uint16_t *hc = NULL;
    if (s == GX_OK)
        s = bench_fetch(g.c, (void **)&hc);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", t == GX_F16 ? "gemm_f16" : "gemm_bf16", gx_dtype_name(t), m, us, bytes, flops, 0, 0);
        hg_verify(t, hc, m, r);
    }
    free(hc);
    gx_array_release(va), gx_array_release(vb);
    gx_array_release(g.a), gx_array_release(g.b), gx_array_release(g.c);
    return s;
}

gx_status bench_case_gemm_f16(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    return hg_case(ctx, k, GX_F16, n, reps, rows, nrows);
}

gx_status bench_case_gemm_bf16(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    return hg_case(ctx, k, GX_BF16, n, reps, rows, nrows);
}
