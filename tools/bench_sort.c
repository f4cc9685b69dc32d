/* bench_sort.c -- sorting cases: sort_f32, sort_u32, argsort_f32 (stable),
 * sort_rows_f32 (rows of 1024), hist256_f32.  Inputs are bench_bits' (the peers can
 * make the same); each row is checked on the host: sorted order, the multiset kept
 * (an exact long double sum of the f32 inputs, or of the u32 ones), argsort a stable
 * permutation, histogram counts against a host count. */
#include "bench_cases.h"

#include <stdlib.h>
#include <string.h>

typedef struct srt_state {
    gx_ctx *ctx;
    gx_array *x[BENCH_MAXROT], *out[BENCH_MAXROT];
    int k, next, kind;
    gx_sort_opts o;
} srt_state;

enum { SRT_SORT, SRT_ARG, SRT_HIST };

static gx_status run_srt(void *p)
{
    srt_state *c = p;
    int i = c->next++ % c->k;
    if (c->kind == SRT_SORT)
        return gx_sort_into(c->ctx, c->x[i], &c->o, c->out[i]);
    if (c->kind == SRT_ARG)
        return gx_argsort_into(c->ctx, c->x[i], &c->o, c->out[i]);
    gx_array_release(c->out[i]);
    c->out[i] = NULL;
    return gx_histogram(c->ctx, c->x[i], &(gx_histogram_opts){.nbins = 256, .lo = 0, .hi = 1}, &c->out[i], NULL);
}

/* Sorted rows of `len`, and the same sum of values as the input (exact). */
static void srt_check_sorted(bench_result *r, const void *got, const void *in, int64_t n, int64_t len, bool u32)
{
    long double a = 0, b = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = u32 ? ((const uint32_t *)got)[i] : ((const float *)got)[i];
        double prev = i % len ? (u32 ? ((const uint32_t *)got)[i - 1] : ((const float *)got)[i - 1]) : g;
        if (prev > g) {
            bench_verdict(r, false, "out[%lld] = %.9g after %.9g", (long long)i, g, prev);
            return;
        }
        a += g;
        b += u32 ? ((const uint32_t *)in)[i] : ((const float *)in)[i];
    }
    bench_verdict(r, a == b, "sums differ: %.17Lg, want %.17Lg", a, b);
}

static void srt_check_arg(bench_result *r, const int64_t *idx, const float *in, int64_t n)
{
    char *seen = calloc((size_t)n + 1, 1);
    for (int64_t i = 0; seen && i < n; i++) {
        int64_t j = idx[i];
        bool ok = j >= 0 && j < n && !seen[j];
        if (ok && i > 0)
            ok = in[idx[i - 1]] < in[j] || (in[idx[i - 1]] == in[j] && idx[i - 1] < j);
        if (!ok) {
            bench_verdict(r, false, "idx[%lld] = %lld breaks a stable order", (long long)i, (long long)j);
            free(seen);
            return;
        }
        seen[j] = 1;
    }
    bench_verdict(r, seen != NULL, "out of host memory");
    free(seen);
}

static void srt_check_hist(bench_result *r, const int64_t *cnt, const float *in, int64_t n)
{
    int64_t want[256] = {0};
    for (int64_t i = 0; i < n; i++)
        want[(int)(in[i] * 256.0)]++;
    for (int b = 0; b < 256; b++)
        if (cnt[b] != want[b]) {
            bench_verdict(r, false, "bin %d: %lld, want %lld", b, (long long)cnt[b], (long long)want[b]);
            return;
        }
    bench_pass(r);
}

static gx_status srt_inputs(gx_ctx *ctx, int64_t n, bool u32, gx_array **x, void **host)
{
    if (!u32) {
        *host = bench_host_f32(n, 51);
        return *host ? gx_array_from_host(ctx, GX_F32, 1, &n, *host, x) : GX_ERR_OUT_OF_MEMORY;
    }
    uint32_t *h = malloc((size_t)n * 4 + 4);
    for (int64_t i = 0; h && i < n; i++)
        h[i] = (uint32_t)(bench_bits(51, (uint64_t)i) >> 32);
    *host = h;
    return h ? gx_array_from_host(ctx, GX_U32, 1, &n, h, x) : GX_ERR_OUT_OF_MEMORY;
}

static gx_status srt_case(gx_ctx *ctx, int64_t n, int reps, int kind, bool u32, int64_t rowlen, const char *name,
                          bench_result *rows, int *nrows)
{
    srt_state c = {.ctx = ctx, .kind = kind};
    void *host = NULL;
    gx_array *x = NULL;
    int64_t shape[2] = {rowlen ? n / rowlen : 1, rowlen ? rowlen : n};
    n = shape[0] * shape[1];
    gx_status s = srt_inputs(ctx, n, u32, &x, &host);
    gx_array *x2 = NULL;
    if (s == GX_OK && rowlen)
        s = gx_array_reshape(x, 2, shape, &x2);
    double bytes = (double)n * (kind == SRT_ARG ? 12 : kind == SRT_HIST ? 4 : 8);
    if (s == GX_OK)
        s = bench_clones(x2 ? x2 : x, bench_rot_count(ctx, bytes), c.x, &c.k);
    for (int i = 0; s == GX_OK && kind != SRT_HIST && i < c.k; i++)
        s = kind == SRT_ARG ? gx_array_empty(ctx, GX_I64, rowlen ? 2 : 1, rowlen ? shape : &n, &c.out[i])
                            : gx_array_similar(c.x[i], &c.out[i]);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_srt, &c, reps, &us);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", name, u32 ? "u32" : "f32", n, us, bytes, 0, (double)n, c.k * bytes);
        gx_array *res = c.out[(c.next - 1) % c.k];
        s = bench_check(ctx, res, r);
        void *got = NULL;
        if (s == GX_OK)
            s = bench_fetch(res, &got);
        if (s == GX_OK && kind == SRT_SORT)
            srt_check_sorted(r, got, host, n, rowlen ? rowlen : n, u32);
        else if (s == GX_OK && kind == SRT_ARG)
            srt_check_arg(r, got, host, n);
        else if (s == GX_OK)
            srt_check_hist(r, got, host, n);
        free(got);
    }
    if (c.k == 0)
        gx_array_release(x2 ? x2 : x);
    if (x2 && c.k)
        gx_array_release(x);
    for (int i = 0; i < c.k; i++) {
        gx_array_release(c.x[i]);
        gx_array_release(c.out[i]);
    }
    free(host);
    return s;
}

gx_status bench_case_sort_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return srt_case(ctx, n, reps, SRT_SORT, false, 0, "sort_f32", rows, nrows);
}

gx_status bench_case_sort_u32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return srt_case(ctx, n, reps, SRT_SORT, true, 0, "sort_u32", rows, nrows);
}

gx_status bench_case_argsort_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return srt_case(ctx, n, reps, SRT_ARG, false, 0, "argsort_f32", rows, nrows);
}

/* Rows of 1024 (2^16 x 1024 at 2^26). */
gx_status bench_case_sort_rows_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                   int *nrows)
{
    (void)k;
    return srt_case(ctx, n < 1024 ? 1024 : n, reps, SRT_SORT, false, 1024, "sort_rows_f32", rows, nrows);
}

gx_status bench_case_hist256_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return srt_case(ctx, n, reps, SRT_HIST, false, 0, "hist256_f32", rows, nrows);
}
