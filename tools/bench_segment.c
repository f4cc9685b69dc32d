/* bench_segment.c -- ragged segments (gx/segment.h): segmented sums over random and
 * long segments, and reduce-by-key over sorted keys in runs of 64.
 *
 * Offsets (the peers make the same): nseg segments of n, o[0] = 0, o[nseg] = n and
 * for 0 < s < nseg  o[s] = s*avg + (splitmix64(s) % avg) - avg/2  (avg = n / nseg),
 * so lengths are random in [1, 2 avg) and never empty (np.add.reduceat's rule). */
#include "bench_cases.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seg_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t *seg_offsets(int64_t n, int64_t nseg)
{
    int64_t *o = malloc((size_t)(nseg + 1) * 8), avg = n / nseg;
    if (!o)
        return NULL;
    o[0] = 0;
    for (int64_t s = 1; s < nseg; s++)
        o[s] = s * avg + (int64_t)(seg_mix((uint64_t)s) % (uint64_t)avg) - avg / 2;
    o[nseg] = n;
    return o;
}

typedef struct seg_state {
    gx_ctx *ctx;
    gx_array *x[BENCH_MAXROT], *off, *out[BENCH_MAXROT], *keys;
    int k, next;
    int rbk;
} seg_state;

static gx_status run_seg(void *p)
{
    seg_state *c = p;
    int i = c->next++ % c->k;
    if (c->rbk) {
        int64_t nr = 0;
        gx_array_release(c->out[i]);
        c->out[i] = NULL;
        return gx_reduce_by_key(c->ctx, "+", c->keys, c->x[i], NULL, NULL, &c->out[i], &nr);
    }
    return gx_segment_reduce_into(c->ctx, "+", c->x[i], c->off, NULL, c->out[i]);
}

/* Every segment's f32 sum against a long double host sum (gx/segment.h's bound). */
static void seg_check(bench_result *r, const float *got, const float *x, const int64_t *o, int64_t nseg)
{
    for (int64_t s = 0; s < nseg; s++) {
        long double w = 0, a = 0;
        for (int64_t i = o[s]; i < o[s + 1]; i++) {
            w += x[i];
            a += fabsl((long double)x[i]);
        }
        double tol = ldexp(fabs((double)w), -24) + (double)(o[s + 1] - o[s]) * ldexp((double)a, -52);
        if (!(fabs((double)got[s] - (double)w) <= tol * 1.000001)) {
            bench_verdict(r, false, "segment %lld: %.9g, want %.9Lg", (long long)s, got[s], w);
            return;
        }
    }
    bench_pass(r);
}

static gx_status seg_case(gx_ctx *ctx, int64_t n, int64_t nseg, int reps, int rbk, const char *name,
                          bench_result *rows, int *nrows)
{
    if (nseg > n / 2)
        nseg = n / 2 > 0 ? n / 2 : 1;
    seg_state c = {.ctx = ctx, .rbk = rbk};
    int64_t *o = seg_offsets(n, nseg);
    int32_t *hk = NULL;
    if (!o)
        return GX_ERR_OUT_OF_MEMORY;
    double bytes = (double)n * 4 + (double)(nseg + 1) * 8 + (double)nseg * 4;
    gx_array *x = NULL;
    int64_t len = nseg + 1;
    gx_status s = bench_random_f32(ctx, n, 43, &x);
    if (s == GX_OK && rbk) { /* keys: i32, sorted, runs of 64 */
        hk = malloc((size_t)n * 4);
        for (int64_t i = 0; hk && i < n; i++)
            hk[i] = (int32_t)(i / 64);
        nseg = (n + 63) / 64;
        free(o);
        o = malloc((size_t)(nseg + 1) * 8);
        for (int64_t sg = 0; o && sg <= nseg; sg++)
            o[sg] = sg * 64 < n ? sg * 64 : n;
        if (!o || !hk)
            s = GX_ERR_OUT_OF_MEMORY;
        bytes = (double)n * 8 + (double)nseg * 8;
        if (s == GX_OK)
            s = gx_array_from_host(ctx, GX_I32, 1, &n, hk, &c.keys);
    } else if (s == GX_OK) {
        s = gx_array_from_host(ctx, GX_I64, 1, &len, o, &c.off);
    }
    if (s == GX_OK)
        s = bench_clones(x, bench_rot_count(ctx, bytes), c.x, &c.k);
    for (int i = 0; s == GX_OK && !rbk && i < c.k; i++)
        s = bench_output_f32(ctx, nseg, &c.out[i]);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_seg, &c, reps, &us);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", name, "f32", n, us, bytes, 0, (double)n, c.k * (double)n * 4);
        gx_array *res = c.out[(c.next - 1) % c.k];
        s = bench_check(ctx, res, r);
        float *got = NULL;
        if (s == GX_OK)
            s = bench_fetch(res, (void **)&got);
        const float *hx = bench_inputs_f32(n, 43);
        if (s == GX_OK && hx)
            seg_check(r, got, hx, o, nseg);
        free(got);
    }
    if (c.k == 0)
        gx_array_release(x);
    for (int i = 0; i < c.k; i++) {
        gx_array_release(c.x[i]);
        gx_array_release(c.out[i]);
    }
    gx_array_release(c.off);
    gx_array_release(c.keys);
    free(o);
    free(hk);
    return s;
}

/* 2^20 segments of random lengths (n / 2^20 on average). */
gx_status bench_case_segsum(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return seg_case(ctx, n, (int64_t)1 << 20, reps, 0, "segsum_f32", rows, nrows);
}

/* 2^10 long segments: one block per segment would underfill the GPU. */
gx_status bench_case_segsum_long(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return seg_case(ctx, n, (int64_t)1 << 10, reps, 0, "segsum_long_f32", rows, nrows);
}

/* reduce_by_key: i32 keys sorted in runs of 64, f32 values, "+". */
gx_status bench_case_reduce_by_key(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                   int *nrows)
{
    (void)k;
    return seg_case(ctx, n, 1, reps, 1, "reduce_by_key_f32", rows, nrows);
}
