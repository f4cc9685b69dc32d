/* bench_kernel.c -- what checked mode costs a user kernel (gx/kernel.h, issue 26):
 * vadd written with gx/device.h's gx_at accessor, c[i] = a[i] + b[i], compiled twice,
 * unchecked (gx_at is plain p[i]) and with opts.checked (each gx_at compares i with n
 * and a failure is recorded for gx_sync).  Same launch, same inputs; the difference
 * between the two rows is the price of the checks.  CUDA only: on the CPU backend
 * user kernels are GX_ERR_UNSUPPORTED and the case writes no row. */
#include "bench_cases.h"
#include <stdio.h>
#include <stdlib.h>

#define VADD_SEED_A 61
#define VADD_SEED_B 62

static const char *VADD_AT = "#include <gx/device.h>\n"
                             "extern \"C\" __global__ void vadd_at(const float *a, const float *b, float *c, "
                             "long long n)\n"
                             "{\n"
                             "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    if (i < n) gx_at(c, i, n) = gx_at(a, i, n) + gx_at(b, i, n);\n"
                             "}\n";

typedef struct vadd_state {
    gx_kernel *k;
    gx_launch_cfg cfg;
    gx_array *a[BENCH_MAXROT], *b[BENCH_MAXROT], *c[BENCH_MAXROT];
    int ka, kb, kc, next;
    int64_t n;
} vadd_state;

static gx_status run_vadd(void *p)
{
    vadd_state *v = p;
    int i = v->next++ % v->ka;
    gx_karg args[] = {GX_KARG_ARRAY(v->a[i]), GX_KARG_ARRAY(v->b[i]), GX_KARG_ARRAY(v->c[i]), GX_KARG_I64(v->n)};
    return gx_kernel_launch(v->k, &v->cfg, 4, args);
}

static gx_status vadd_check(gx_ctx *ctx, vadd_state *v, bench_result *r)
{
    gx_array *res = v->c[(v->next - 1) % v->ka];
    gx_status s = gx_sync(ctx); /* checked mode reports a recorded failure here */
    if (s == GX_OK)
        s = bench_check(ctx, res, r);
    float *h = NULL;
    if (s == GX_OK)
        s = bench_fetch(res, (void **)&h);
    static int64_t at[BENCH_SAMPLES + 2];
    int m = s == GX_OK ? bench_sample_idx(v->n, at) : 0;
    bool ok = true;
    for (int j = 0; j < m && ok; j++) {
        float want = bench_f32_at(VADD_SEED_A, at[j]) + bench_f32_at(VADD_SEED_B, at[j]);
        if (h[at[j]] != want) {
            bench_verdict(r, false, "c[%lld] = %.9g, want a + b = %.9g", (long long)at[j], h[at[j]], want);
            ok = false;
        }
    }
    if (s == GX_OK && ok)
        bench_pass(r);
    free(h);
    return s;
}

static gx_status vadd_row(gx_ctx *ctx, vadd_state *v, int reps, int checked, bench_result *rows, int *nrows)
{
    gx_kernel_opts o = {.checked = checked};
    gx_status s = gx_kernel_compile(ctx, VADD_AT, "vadd_at", &o, &v->k);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_vadd, v, reps, &us);
    if (s == GX_OK) {
        bench_result *r = &rows[*nrows];
        *r = bench_row("gx", checked ? "kernel_vadd_at_checked" : "kernel_vadd_at", "f32", v->n, us, 12.0 * (double)v->n,
                       0, 0, 12.0 * (double)v->n * v->ka);
        s = vadd_check(ctx, v, r);
        if (s == GX_OK)
            (*nrows)++;
    }
    gx_kernel_destroy(v->k);
    v->k = NULL;
    return s;
}

gx_status bench_case_kernel_vadd(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    if (k != GX_BACKEND_CUDA || n <= 0)
        return GX_OK; /* user kernels need the CUDA backend (gx/kernel.h) */
    vadd_state v = {.n = n, .cfg = {.grid = {(unsigned)((n + 255) / 256)}, .block = {256}}};
    gx_array *a = NULL, *b = NULL;
    gx_status s = bench_random_f32(ctx, n, VADD_SEED_A, &a);
    if (s == GX_OK)
        s = bench_random_f32(ctx, n, VADD_SEED_B, &b);
    int rot = bench_rot_count(ctx, 12.0 * (double)n);
    if (s == GX_OK)
        s = bench_clones(a, rot, v.a, &v.ka);
    if (s == GX_OK)
        s = bench_clones(b, rot, v.b, &v.kb);
    if (s == GX_OK)
        s = bench_outputs_f32(ctx, n, v.ka, v.c, &v.kc);
    if (s == GX_OK)
        s = vadd_row(ctx, &v, reps, 0, rows, nrows);
    if (s == GX_OK)
        s = vadd_row(ctx, &v, reps, 1, rows, nrows);
    if (v.ka == 0)
        gx_array_release(a);
    if (v.kb == 0)
        gx_array_release(b);
    for (int i = 0; i < BENCH_MAXROT; i++) {
        if (i < v.ka)
            gx_array_release(v.a[i]);
        if (i < v.kb)
            gx_array_release(v.b[i]);
        if (i < v.kc)
            gx_array_release(v.c[i]);
    }
    return s;
}
