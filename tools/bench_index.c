/* bench_index.c -- gather, scatter-add and where (gx/index.h) for `gx bench`.
 * Inputs follow bench_bits, so the peers (bench/peers/) can make the same ones:
 *   take_f32:             x = f32 inputs of seed 51 (n), idx[i] = bench_bits(52, i) % n
 *                         as i64; out = gx_take(x, idx) (torch.take(x, idx));
 *   scatter_add_f32:      values = f32 inputs of seed 53 (n), idx[i] = bench_bits(54, i)
 *                         % 2^20 as i64, bins f32 2^20 zeroed then bins.at[idx] += values
 *                         (torch: out.zero_(); out.index_add_(0, idx, values));
 *   scatter_add_det_f32:  the same with opts.deterministic;
 *   index_add_rows_f32:   values = f32 inputs of seed 53 as (n / 16, 16), idx[r] =
 *                         bench_bits(54, r) % 2^16 as i64 (one per row), bins f32
 *                         (2^16, 16) zeroed then gx_index_reduce("+", bins, 0, idx,
 *                         values) (torch: out.zero_(); out.index_add_(0, idx, values));
 *   where_f32:            cond = (f32 inputs of seed 55) > 0.5, a, b = seeds 56, 57,
 *                         gx_where_into an existing out (torch.where(c, a, b, out=o)).
 * Each result is checked against a host reference from the same inputs. */
#include "bench_cases.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SCAT_BINS ((int64_t)1 << 20)

/* idx[i] = bench_bits(seed, i) % mod as i64, on the device. */
static gx_status make_idx(gx_ctx *ctx, int64_t n, uint64_t seed, int64_t mod, gx_array **out)
{
    int64_t *h = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!h)
        return GX_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < n; i++)
        h[i] = (int64_t)(bench_bits(seed, (uint64_t)i) % (uint64_t)mod);
    gx_status s = gx_array_from_host(ctx, GX_I64, 1, &n, h, out);
    free(h);
    return s;
}

static int64_t idx_at(uint64_t seed, int64_t i, int64_t mod)
{
    return (int64_t)(bench_bits(seed, (uint64_t)i) % (uint64_t)mod);
}

/* ------------------------------------------------------------ take */

typedef struct take_state {
    gx_ctx *ctx;
    gx_array *x, *idx, *out;
} take_state;

static gx_status run_take(void *p)
{
    take_state *t = p;
    gx_array_release(t->out); /* a new result per call, as torch.take makes one */
    t->out = NULL;
    return gx_take(t->ctx, t->x, t->idx, GX_ALL_AXES, NULL, &t->out);
}

static gx_status check_take(gx_array *out, int64_t n, bench_result *r)
{
    float *h = NULL;
    gx_status s = bench_fetch(out, (void **)&h);
    if (s != GX_OK)
        return s;
    int64_t pos[BENCH_SAMPLES + 2];
    int np = bench_sample_idx(n, pos);
    bool ok = true;
    int64_t bad = 0;
    for (int k = 0; k < np && ok; k++) {
        float want = bench_f32_at(51, idx_at(52, pos[k], n));
        ok = h[pos[k]] == want;
        bad = pos[k];
    }
    bench_verdict(r, ok, "take: element %lld is not x[idx[%lld]]", (long long)bad, (long long)bad);
    free(h);
    return GX_OK;
}

gx_status bench_case_take(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    take_state t = {.ctx = ctx};
    gx_status s = bench_random_f32(ctx, n, 51, &t.x);
    if (s == GX_OK)
        s = make_idx(ctx, n, 52, n, &t.idx);
    double us = 0, bytes = 16.0 * (double)n; /* idx 8, the x read 4, out 4 */
    if (s == GX_OK)
        s = bench_time(ctx, run_take, &t, reps, &us);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", "take_f32", "f32", n, us, bytes, 0, 0, bytes);
        s = bench_check(ctx, t.out, r);
        if (s == GX_OK)
            s = check_take(t.out, n, r);
    }
    gx_array_release(t.x);
    gx_array_release(t.idx);
    gx_array_release(t.out);
    return s;
}

/* ------------------------------------------------------------ scatter-add */

typedef struct scat_state {
    gx_ctx *ctx;
    gx_array *vals, *idx, *bins;
    gx_index_opts opts;
} scat_state;

static gx_status run_scat(void *p)
{
    scat_state *c = p;
    GX_TRY(gx_array_fill_f64(c->bins, 0));
    return gx_scatter_reduce(c->ctx, "+", c->idx, c->vals, &c->opts, c->bins);
}

/* Every bin against an f64 host sum (f32 atomics: relative 1e-4). */
static gx_status check_scat(scat_state *c, int64_t n, bench_result *r)
{
    double *want = calloc((size_t)SCAT_BINS, sizeof(double));
    float *got = NULL;
    gx_status s = want ? bench_fetch(c->bins, (void **)&got) : GX_ERR_OUT_OF_MEMORY;
    if (s != GX_OK) {
        free(want);
        return s;
    }
    for (int64_t i = 0; i < n; i++)
        want[idx_at(54, i, SCAT_BINS)] += bench_f32_at(53, i);
    int64_t bad = -1;
    for (int64_t b = 0; b < SCAT_BINS && bad < 0; b++)
        if (!(fabs(got[b] - want[b]) <= 1e-4 * (1 + fabs(want[b]))))
            bad = b;
    bench_verdict(r, bad < 0, "scatter-add: bin %lld is %.9g, want %.9g", (long long)bad, bad < 0 ? 0 : got[bad],
                  bad < 0 ? 0 : want[bad]);
    if (bad < 0 && c->opts.deterministic) { /* one more run must give the same bits */
        float *again = NULL;
        s = run_scat(c);
        if (s == GX_OK)
            s = bench_fetch(c->bins, (void **)&again);
        if (s == GX_OK)
            bench_verdict(r, memcmp(again, got, sizeof(float) * (size_t)SCAT_BINS) == 0,
                          "deterministic scatter-add: two runs differ");
        free(again);
    }
    free(got);
    free(want);
    return s;
}

static gx_status scat_case(gx_ctx *ctx, int64_t n, int reps, int det, bench_result *rows, int *nrows)
{
    scat_state c = {.ctx = ctx, .opts = {.deterministic = det}};
    int64_t nb = SCAT_BINS;
    gx_status s = bench_random_f32(ctx, n, 53, &c.vals);
    if (s == GX_OK)
        s = make_idx(ctx, n, 54, SCAT_BINS, &c.idx);
    if (s == GX_OK)
        s = gx_array_zeros(ctx, GX_F32, 1, &nb, &c.bins);
    double us = 0, bytes = 12.0 * (double)n + 8.0 * (double)nb;
    if (s == GX_OK)
        s = bench_time(ctx, run_scat, &c, reps, &us);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", det ? "scatter_add_det_f32" : "scatter_add_f32", "f32", n, us, bytes, 0, 0, bytes);
        s = bench_check(ctx, c.bins, r);
        if (s == GX_OK)
            s = check_scat(&c, n, r);
    }
    gx_array_release(c.vals);
    gx_array_release(c.idx);
    gx_array_release(c.bins);
    return s;
}

gx_status bench_case_scatter_add(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return scat_case(ctx, n, reps, 0, rows, nrows);
}

gx_status bench_case_scatter_add_det(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                     int *nrows)
{
    (void)k;
    return scat_case(ctx, n, reps, 1, rows, nrows);
}

/* ------------------------------------------------------------ index_add_ along rows */

#define IXR_COLS 16
#define IXR_ROWS (SCAT_BINS / IXR_COLS)

static gx_status run_ixr(void *p)
{
    scat_state *c = p;
    GX_TRY(gx_array_fill_f64(c->bins, 0));
    return gx_index_reduce(c->ctx, "+", c->bins, 0, c->idx, c->vals, &c->opts);
}

static gx_status check_ixr(scat_state *c, int64_t rows, bench_result *r)
{
    double *want = calloc((size_t)SCAT_BINS, sizeof(double));
    float *got = NULL;
    gx_status s = want ? bench_fetch(c->bins, (void **)&got) : GX_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; s == GX_OK && i < rows; i++)
        for (int64_t j = 0; j < IXR_COLS; j++)
            want[idx_at(54, i, IXR_ROWS) * IXR_COLS + j] += bench_f32_at(53, i * IXR_COLS + j);
    int64_t bad = -1;
    for (int64_t b = 0; s == GX_OK && b < SCAT_BINS && bad < 0; b++)
        if (!(fabs(got[b] - want[b]) <= 1e-4 * (1 + fabs(want[b]))))
            bad = b;
    if (s == GX_OK)
        bench_verdict(r, bad < 0, "index_add rows: bin %lld is %.9g, want %.9g", (long long)bad,
                      bad < 0 ? 0 : got[bad], bad < 0 ? 0 : want[bad]);
    free(got);
    free(want);
    return s;
}

gx_status bench_case_index_add_rows(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                    int *nrows)
{
    (void)k;
    scat_state c = {.ctx = ctx};
    int64_t nr = n / IXR_COLS, vsh[2] = {nr, IXR_COLS}, bsh[2] = {IXR_ROWS, IXR_COLS};
    gx_array *flat = NULL;
    gx_status s = bench_random_f32(ctx, nr * IXR_COLS, 53, &flat);
    if (s == GX_OK)
        s = gx_array_reshape(flat, 2, vsh, &c.vals);
    if (s == GX_OK)
        s = make_idx(ctx, nr, 54, IXR_ROWS, &c.idx);
    if (s == GX_OK)
        s = gx_array_zeros(ctx, GX_F32, 2, bsh, &c.bins);
    double us = 0, bytes = 4.0 * (double)(nr * IXR_COLS) * 3 + 8.0 * (double)nr + 4.0 * (double)SCAT_BINS;
    if (s == GX_OK)
        s = bench_time(ctx, run_ixr, &c, reps, &us);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", "index_add_rows_f32", "f32", n, us, bytes, 0, 0, bytes);
        s = bench_check(ctx, c.bins, r);
        if (s == GX_OK)
            s = check_ixr(&c, nr, r);
    }
    gx_array_release(flat);
    gx_array_release(c.vals);
    gx_array_release(c.idx);
    gx_array_release(c.bins);
    return s;
}

/* ------------------------------------------------------------ where */

typedef struct where_state {
    gx_ctx *ctx;
    gx_array *c, *a, *b, *out;
} where_state;

static gx_status run_where(void *p)
{
    where_state *w = p;
    return gx_where_into(w->ctx, w->c, w->a, w->b, NULL, w->out);
}

static gx_status check_where(gx_array *out, int64_t n, bench_result *r)
{
    float *h = NULL;
    gx_status s = bench_fetch(out, (void **)&h);
    if (s != GX_OK)
        return s;
    int64_t pos[BENCH_SAMPLES + 2];
    int np = bench_sample_idx(n, pos);
    bool ok = true;
    int64_t bad = 0;
    for (int k = 0; k < np && ok; k++) {
        int64_t i = pos[k];
        float want = bench_f32_at(55, i) > 0.5f ? bench_f32_at(56, i) : bench_f32_at(57, i);
        ok = h[i] == want;
        bad = i;
    }
    bench_verdict(r, ok, "where: element %lld is wrong", (long long)bad);
    free(h);
    return GX_OK;
}

gx_status bench_case_where(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    where_state w = {.ctx = ctx};
    gx_array *u = NULL;
    gx_status s = bench_random_f32(ctx, n, 55, &u);
    if (s == GX_OK)
        s = gx_map(ctx, "u -> u > 0.5f", 1, &u, NULL, &w.c);
    if (s == GX_OK)
        s = bench_random_f32(ctx, n, 56, &w.a);
    if (s == GX_OK)
        s = bench_random_f32(ctx, n, 57, &w.b);
    if (s == GX_OK)
        s = bench_output_f32(ctx, n, &w.out);
    double us = 0, bytes = 13.0 * (double)n; /* cond 1, a 4, b 4, out 4 */
    if (s == GX_OK)
        s = bench_time(ctx, run_where, &w, reps, &us);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", "where_f32", "f32", n, us, bytes, 0, 0, bytes);
        s = bench_check(ctx, w.out, r);
        if (s == GX_OK)
            s = check_where(w.out, n, r);
    }
    gx_array *list[] = {u, w.c, w.a, w.b, w.out};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        gx_array_release(list[i]);
    return s;
}
