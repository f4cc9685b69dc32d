/* bench_gather.c -- gathers fused into maps (arrays read inside lambdas, gx_bind):
 * out[k] = table[idx[k]] * 2 with idx 2^k random i64 in [0, n) and table n random
 * f32, written into an existing output.  The peers (bench/peers/torch_cupy_peers.py,
 * gather_map_f32) time torch.take + torch.mul (two kernels and a temporary),
 * torch.compile of table[idx] * 2, cupy.take + multiply and a cupy ElementwiseKernel
 * over the raw table.  Bytes: idx read (8n), the table's elements read once each on
 * average (4n; a random gather moves whole sectors, so the rate undercounts), out
 * written (4n).  Rows: checked (the default) and unchecked (opts.unchecked). */
#include "bench_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GATHER_SEED_T 51
#define GATHER_SEED_I 52

typedef struct gather_state {
    gx_ctx *ctx;
    gx_array *table, *idx[BENCH_MAXROT], *out[BENCH_MAXROT];
    int k, nout, next;
    gx_map_opts o;
} gather_state;

static gx_status run_gather(void *p)
{
    gather_state *g = p;
    int i = g->next++ % g->k;
    return gx_map_into(g->ctx, "i -> table[i] * 2", 1, &g->idx[i], &g->o, g->out[i]);
}

static int64_t gather_idx_at(int64_t n, int64_t k)
{
    return (int64_t)(bench_bits(GATHER_SEED_I, (uint64_t)k) % (uint64_t)n);
}

static gx_status gather_inputs(gather_state *g, int64_t n)
{
    int64_t *h = malloc(sizeof *h * (size_t)(n ? n : 1));
    if (!h)
        return GX_ERR_OUT_OF_MEMORY;
    for (int64_t k = 0; k < n; k++)
        h[k] = gather_idx_at(n, k);
    gx_array *x = NULL;
    gx_status s = gx_array_from_host(g->ctx, GX_I64, 1, &n, h, &x);
    free(h);
    if (s == GX_OK)
        s = bench_clones(x, bench_rot_count(g->ctx, 12.0 * (double)n), g->idx, &g->k);
    else
        gx_array_release(x);
    if (s == GX_OK)
        s = bench_outputs_f32(g->ctx, n, g->k, g->out, &g->nout);
    if (s == GX_OK)
        s = bench_random_f32(g->ctx, n, GATHER_SEED_T, &g->table);
    return s;
}

/* Sampled positions against table[idx] * 2 recomputed from the seeds. */
static gx_status gather_check(gather_state *g, int64_t n, bench_result *r)
{
    gx_array *res = g->out[(g->next - 1) % g->k];
    gx_status s = bench_check(g->ctx, res, r);
    float *h = NULL;
    if (s == GX_OK)
        s = bench_fetch(res, (void **)&h);
    static int64_t at[BENCH_SAMPLES + 2];
    int64_t m = s == GX_OK ? bench_sample_idx(n, at) : 0;
    bool ok = true;
    for (int64_t j = 0; j < m && ok; j++) {
        float want = bench_f32_at(GATHER_SEED_T, gather_idx_at(n, at[j])) * 2;
        if (h[at[j]] != want) {
            bench_verdict(r, false, "[%lld] = %.9g, want table[%lld] * 2 = %.9g", (long long)at[j], h[at[j]],
                          (long long)gather_idx_at(n, at[j]), want);
            ok = false;
        }
    }
    if (s == GX_OK && ok)
        bench_pass(r);
    free(h);
    return s;
}

static gx_status gather_row(gather_state *g, int64_t n, int reps, bool unchecked, bench_result *rows, int *nrows)
{
    gx_bind b = GX_BIND("table", g->table);
    g->o = (gx_map_opts){.arrays = &b, .narrays = 1, .unchecked = unchecked};
    double us = 0;
    gx_status s = bench_time(g->ctx, run_gather, g, reps, &us);
    if (s != GX_OK)
        return s;
    bench_result *r = &rows[*nrows];
    *r = bench_row("gx", unchecked ? "gather_map_f32_unchecked" : "gather_map_f32", "f32", n, us, 16.0 * (double)n, 0,
                   0, g->k * 12.0 * (double)n + 4.0 * (double)n);
    s = gather_check(g, n, r);
    if (s == GX_OK)
        (*nrows)++;
    return s;
}

gx_status bench_case_gather_map(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    gather_state g = {.ctx = ctx};
    gx_status s = gather_inputs(&g, n);
    if (s == GX_OK)
        s = gather_row(&g, n, reps, false, rows, nrows);
    if (s == GX_OK)
        s = gather_row(&g, n, reps, true, rows, nrows);
    for (int i = 0; i < BENCH_MAXROT; i++) {
        gx_array_release(g.idx[i]);
        gx_array_release(g.out[i]);
    }
    gx_array_release(g.table);
    return s;
}
