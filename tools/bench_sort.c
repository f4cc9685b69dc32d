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

/* ------------------------------------------------------------ pairs, top-k, unique, searchsorted */

enum { SX_PAIRS, SX_TOPK, SX_UNIQUE, SX_SEARCH };
#define SX_TOPK_K 100
#define SX_DISTINCT 65536 /* unique_i32: values in [0, 2^16) */

/* Cases that make new results each call: out[0..1] are the latest ones. */
typedef struct sx_state {
    gx_ctx *ctx;
    gx_array *x[BENCH_MAXROT], *v[BENCH_MAXROT], *hay, *out[2];
    int k, next, kind;
} sx_state;

static gx_status run_sx(void *p)
{
    sx_state *c = p;
    int i = c->next++ % c->k;
    gx_array_release(c->out[0]);
    gx_array_release(c->out[1]);
    c->out[0] = c->out[1] = NULL;
    gx_sort_opts o = {0};
    switch (c->kind) {
    case SX_PAIRS: return gx_sort_by_key(c->ctx, c->x[i], c->v[i], &o, &c->out[0], &c->out[1]);
    case SX_TOPK: return gx_topk(c->ctx, c->x[i], SX_TOPK_K, NULL, &c->out[0], &c->out[1]);
    case SX_UNIQUE: return gx_unique(c->ctx, c->x[i], NULL, &c->out[0], &c->out[1], NULL, NULL);
    default: return gx_searchsorted(c->ctx, c->hay, c->x[i], NULL, &c->out[0]);
    }
}

/* Sorted keys, and values (the input positions) that carry each key, stable. */
static void sx_check_pairs(bench_result *r, const uint32_t *in, const uint32_t *keys, const uint32_t *vals, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        bool ok = vals[i] < (uint64_t)n && in[vals[i]] == keys[i];
        if (ok && i > 0)
            ok = keys[i - 1] < keys[i] || (keys[i - 1] == keys[i] && vals[i - 1] < vals[i]);
        if (!ok) {
            bench_verdict(r, false, "pair %lld: key %u value %u breaks a stable order", (long long)i, keys[i],
                          vals[i]);
            return;
        }
    }
    bench_pass(r);
}

/* The k largest against a host selection (kept sorted, largest first; ties by position). */
static void sx_check_topk(bench_result *r, const float *in, int64_t n, const float *vals, const int64_t *idx)
{
    int k = n < SX_TOPK_K ? (int)n : SX_TOPK_K, m = 0;
    float best[SX_TOPK_K];
    int64_t at[SX_TOPK_K];
    for (int64_t i = 0; i < n; i++) {
        if (m == k && !(in[i] > best[k - 1]))
            continue; /* not above the smallest kept: an equal one later loses the tie */
        int j = m < k ? m++ : k - 1;
        for (; j > 0 && best[j - 1] < in[i]; j--)
            best[j] = best[j - 1], at[j] = at[j - 1];
        best[j] = in[i], at[j] = i;
    }
    for (int j = 0; j < k; j++)
        if (vals[j] != best[j] || idx[j] != at[j]) {
            bench_verdict(r, false, "top %d: %.9g at %lld, want %.9g at %lld", j, vals[j], (long long)idx[j],
                          best[j], (long long)at[j]);
            return;
        }
    bench_pass(r);
}

static void sx_check_unique(bench_result *r, const int32_t *in, int64_t n, const int32_t *u, const int64_t *cnt,
                            int64_t nu)
{
    int64_t *want = calloc(SX_DISTINCT, sizeof *want), distinct = 0;
    for (int64_t i = 0; want && i < n; i++)
        distinct += want[in[i]]++ == 0;
    bool ok = want && nu == distinct;
    for (int64_t j = 0; ok && j < nu; j++)
        ok = u[j] >= 0 && u[j] < SX_DISTINCT && (j == 0 || u[j - 1] < u[j]) && cnt[j] == want[u[j]];
    bench_verdict(r, ok, "%lld distinct values (want %lld), or a value or count differs", (long long)nu,
                  (long long)distinct);
    free(want);
}

/* hay[pos - 1] < v <= hay[pos] for each needle v (side left). */
static void sx_check_search(bench_result *r, const float *hay, const float *nd, const int64_t *pos, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t p = pos[i];
        bool ok = p >= 0 && p <= n && (p == 0 || hay[p - 1] < nd[i]) && (p == n || nd[i] <= hay[p]);
        if (!ok) {
            bench_verdict(r, false, "needle %lld (%.9g): position %lld", (long long)i, nd[i], (long long)p);
            return;
        }
    }
    bench_pass(r);
}

/* The inputs: x (and v or the haystack) on the device, their host copies. */
static gx_status sx_inputs(sx_state *c, int64_t n, void **hx, void **hv)
{
    gx_ctx *ctx = c->ctx;
    if (c->kind == SX_TOPK || c->kind == SX_SEARCH) {
        *hx = bench_host_f32(n, c->kind == SX_TOPK ? 51 : 52);
        gx_status s = *hx ? gx_array_from_host(ctx, GX_F32, 1, &n, *hx, &c->x[0]) : GX_ERR_OUT_OF_MEMORY;
        if (s != GX_OK || c->kind == SX_TOPK)
            return s;
        gx_array *h = NULL; /* the haystack: seed 51's inputs sorted */
        s = bench_random_f32(ctx, n, 51, &h);
        if (s == GX_OK)
            s = gx_sort(ctx, h, &(gx_sort_opts){0}, &c->hay);
        gx_array_release(h);
        return s == GX_OK ? bench_fetch(c->hay, hv) : s;
    }
    uint32_t *h = calloc((size_t)n + 1, 4), *v = c->kind == SX_PAIRS ? calloc((size_t)n + 1, 4) : NULL;
    *hx = h, *hv = v;
    if (!h || (c->kind == SX_PAIRS && !v))
        return GX_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < n; i++) {
        uint64_t b = bench_bits(51, (uint64_t)i);
        h[i] = c->kind == SX_PAIRS ? (uint32_t)(b >> 32) : (uint32_t)(b % SX_DISTINCT);
        if (v)
            v[i] = (uint32_t)i;
    }
    gx_dtype t = c->kind == SX_PAIRS ? GX_U32 : GX_I32;
    gx_status s = gx_array_from_host(ctx, t, 1, &n, h, &c->x[0]);
    if (s == GX_OK && v)
        s = gx_array_from_host(ctx, GX_U32, 1, &n, v, &c->v[0]);
    return s;
}

static void sx_check(sx_state *c, bench_result *r, int64_t n, const void *hx, const void *hv)
{
    void *a = NULL, *b = NULL;
    gx_status s = bench_fetch(c->out[0], &a);
    if (s == GX_OK && c->out[1])
        s = bench_fetch(c->out[1], &b);
    gx_array_desc d = {0};
    if (s == GX_OK)
        s = gx_array_describe(c->out[0], &d);
    if (s != GX_OK)
        bench_verdict(r, false, "cannot read the result back: %s", gx_last_error());
    else if (c->kind == SX_PAIRS)
        sx_check_pairs(r, hx, a, b, n);
    else if (c->kind == SX_TOPK)
        sx_check_topk(r, hx, n, a, b);
    else if (c->kind == SX_UNIQUE)
        sx_check_unique(r, hx, n, a, b, d.size);
    else
        sx_check_search(r, hv, hx, a, n);
    free(a);
    free(b);
}

static gx_status sx_case(gx_ctx *ctx, int64_t n, int reps, int kind, const char *name, const char *dtype,
                         double bytes_per, bench_result *rows, int *nrows)
{
    sx_state c = {.ctx = ctx, .kind = kind};
    void *hx = NULL, *hv = NULL;
    gx_status s = sx_inputs(&c, n, &hx, &hv);
    double bytes = bytes_per * (double)n;
    gx_array *x0 = c.x[0], *v0 = c.v[0];
    int kv = 0;
    if (s == GX_OK)
        s = bench_clones(x0, bench_rot_count(ctx, bytes), c.x, &c.k);
    if (s == GX_OK && v0)
        s = bench_clones(v0, c.k, c.v, &kv);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_sx, &c, reps, &us);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", name, dtype, n, us, bytes, 0, (double)n, c.k * bytes);
        s = bench_check(ctx, c.out[kind == SX_PAIRS ? 1 : 0], r); /* pairs: the values */
        if (s == GX_OK)
            sx_check(&c, r, n, hx, hv);
    }
    if (c.k == 0)
        gx_array_release(x0);
    if (kv == 0)
        gx_array_release(v0);
    for (int i = 0; i < c.k; i++)
        gx_array_release(c.x[i]);
    for (int i = 0; i < kv; i++)
        gx_array_release(c.v[i]);
    gx_array_release(c.hay);
    gx_array_release(c.out[0]);
    gx_array_release(c.out[1]);
    free(hx);
    free(hv);
    return s;
}

/* Stable pairs: u32 keys (bench_bits(51) >> 32), u32 values = positions. */
gx_status bench_case_sort_pairs_u32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                    int *nrows)
{
    (void)k;
    return sx_case(ctx, n, reps, SX_PAIRS, "sort_pairs_u32", "u32", 16, rows, nrows);
}

/* The 100 largest of n f32 (seed 51) with their positions (n >= 100). */
gx_status bench_case_topk100_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return sx_case(ctx, n < SX_TOPK_K ? SX_TOPK_K : n, reps, SX_TOPK, "topk100_f32", "f32", 4, rows, nrows);
}

/* np.unique with counts of n i32 in [0, 2^16) (bench_bits(51) % 2^16). */
gx_status bench_case_unique_i32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return sx_case(ctx, n, reps, SX_UNIQUE, "unique_i32", "i32", 4, rows, nrows);
}

/* n needles (f32, seed 52) into n sorted f32 (seed 51, sorted once), side left. */
gx_status bench_case_searchsorted_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                      int *nrows)
{
    (void)k;
    return sx_case(ctx, n, reps, SX_SEARCH, "searchsorted_f32", "f32", 16, rows, nrows);
}
