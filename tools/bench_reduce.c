/* bench_reduce.c -- reduction cases for `gx bench`: whole-array reductions (results
 * into a device array, so a run is one launch with no host round trip) and sums
 * over the rows / columns of a matrix.  Bytes: every input read once. */
#include "bench_cases.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Appends the row the call filled, or returns its failure. */
#define RB_ROW(call, nrows)       \
    do {                          \
        gx_status rb_s_ = (call); \
        if (rb_s_ != GX_OK)       \
            return rb_s_;         \
        (*(nrows))++;             \
    } while (0)

typedef struct red_state {
    gx_ctx *ctx;
    int which;
    gx_array *x, *y, *out, *idx;
    int axis;
    /* Inputs rotated through, so that small sizes are read from memory, not L2. */
    gx_array *xs[BENCH_MAXROT], *ys[BENCH_MAXROT];
    int nrot, next;
} red_state;

enum { RB_SUM, RB_MAX, RB_ARGMIN, RB_ARGMAX, RB_MEAN, RB_L2, RB_MAXLAM, RB_AXIS };

static gx_status run_red(void *p)
{
    red_state *r = p;
    if (r->nrot > 0) {
        r->x = r->xs[r->next % r->nrot];
        r->y = r->ys[r->next % r->nrot];
        r->next++;
    }
    gx_array *in[2] = {r->x, r->y};
    gx_scalar ninf = GX_SCALAR_F32(-INFINITY);
    gx_reduce_opts o = {0};
    /* The first run makes the result (*_to); later runs write into it (*_into). */
    switch (r->which) {
    case RB_SUM:
        return r->out ? gx_reduce_into(r->ctx, "+", r->x, NULL, r->out)
                      : gx_reduce_to(r->ctx, "+", r->x, NULL, &r->out);
    case RB_MAX:
        return r->out ? gx_reduce_into(r->ctx, "max", r->x, NULL, r->out)
                      : gx_reduce_to(r->ctx, "max", r->x, NULL, &r->out);
    case RB_ARGMIN:
        return r->idx ? gx_find_into(r->ctx, "min", r->x, NULL, NULL, r->idx)
                      : gx_find_to(r->ctx, "min", r->x, NULL, NULL, &r->idx);
    case RB_ARGMAX:
        return r->idx ? gx_find_into(r->ctx, "max", r->x, NULL, NULL, r->idx)
                      : gx_find_to(r->ctx, "max", r->x, NULL, NULL, &r->idx);
    case RB_MEAN:
        return r->out ? gx_reduce_into(r->ctx, "mean", r->x, NULL, r->out)
                      : gx_reduce_to(r->ctx, "mean", r->x, NULL, &r->out);
    case RB_L2:
        return r->out ? gx_mapreduce_into(r->ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, NULL, r->out)
                      : gx_mapreduce_to(r->ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, NULL, &r->out);
    case RB_MAXLAM:
        o.init = &ninf;
        return r->out ? gx_reduce_into(r->ctx, "a, b -> max(a, b)", r->x, &o, r->out)
                      : gx_reduce_to(r->ctx, "a, b -> max(a, b)", r->x, &o, &r->out);
    default:
        o.axes = &r->axis;
        o.naxes = 1;
        return r->out ? gx_reduce_into(r->ctx, "+", r->x, &o, r->out) : gx_reduce_to(r->ctx, "+", r->x, &o, &r->out);
    }
}

static gx_status random_i32(gx_ctx *ctx, int64_t n, gx_array **out)
{
    int32_t *h = malloc((size_t)n * sizeof *h);
    if (!h)
        return GX_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < n; i++)
        h[i] = (int32_t)(bench_bits(20, (uint64_t)i) >> 54); /* 0..1023: the peers' i32 inputs */
    gx_status st = gx_array_from_host(ctx, GX_I32, 1, &n, h, out);
    free(h);
    return st;
}

/* Makes copies of r->x (and r->y) until a run's inputs are out of the cache. */
static gx_status red_rotate(red_state *r, double bytes)
{
    int ny;
    gx_status s = bench_clones(r->x, bench_rot_count(r->ctx, bytes), r->xs, &r->nrot);
    r->ys[0] = r->y; /* red_free releases xs[i] and ys[i] below nrot; unmade ones are NULL */
    if (s == GX_OK && r->y)
        s = bench_clones(r->y, r->nrot, r->ys, &ny);
    return s;
}

static void red_free(red_state *r)
{
    for (int i = 0; i < r->nrot; i++) {
        gx_array_release(r->xs[i]);
        gx_array_release(r->ys[i]);
    }
    if (r->nrot == 0) {
        gx_array_release(r->x);
        gx_array_release(r->y);
    }
    gx_array_release(r->out);
    gx_array_release(r->idx);
}

/* One row: time `which` on f32 (or i32) data of n elements. */
static gx_status red_row(gx_ctx *ctx, int which, bool i32, const char *op, int64_t n, int reps, double bytes,
                         bench_result *row)
{
    red_state r = {.ctx = ctx, .which = which};
    gx_status s = i32 ? random_i32(ctx, n, &r.x) : bench_random_f32(ctx, n, 21, &r.x);
    if (s == GX_OK && which == RB_L2)
        s = bench_random_f32(ctx, n, 22, &r.y);
    if (s == GX_OK)
        s = red_rotate(&r, bytes);
    double us = 0;
    if (s == GX_OK)
        s = run_red(&r); /* allocates the result once; later runs write into it */
    if (s == GX_OK)
        s = bench_time(ctx, run_red, &r, reps, &us);
    *row = (bench_result){"gx", op, i32 ? "i32" : "f32", n, us, bytes, 0, 0, r.nrot * bytes, 0, 0};
    if (s == GX_OK)
        s = bench_check(ctx, r.idx ? r.idx : r.out, row); /* the scalar result itself */
    red_free(&r);
    return s;
}

gx_status bench_case_sum(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    RB_ROW(red_row(ctx, RB_SUM, false, "sum", n, reps, (double)n * 4, &rows[*nrows]), nrows);
    RB_ROW(red_row(ctx, RB_SUM, true, "sum", n, reps, (double)n * 4, &rows[*nrows]), nrows);
    /* On the CPU: memcpy's bandwidth and a plain loop, so the CPU figure is a ratio. */
    if (k == GX_BACKEND_CPU)
        return bench_host_refs(ctx, 3, "sum", n, reps, (double)n * 4, rows, nrows);
    return GX_OK;
}

gx_status bench_case_max(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    RB_ROW(red_row(ctx, RB_MAX, false, "max", n, reps, (double)n * 4, &rows[*nrows]), nrows);
    return GX_OK;
}

gx_status bench_case_argmin(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    RB_ROW(red_row(ctx, RB_ARGMIN, false, "argmin", n, reps, (double)n * 4, &rows[*nrows]), nrows);
    return GX_OK;
}

gx_status bench_case_argmax(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    RB_ROW(red_row(ctx, RB_ARGMAX, false, "argmax", n, reps, (double)n * 4, &rows[*nrows]), nrows);
    return GX_OK;
}

/* The f32 mean (accumulated in f64, as the sum) into an existing f32 array. */
gx_status bench_case_mean(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    RB_ROW(red_row(ctx, RB_MEAN, false, "mean", n, reps, (double)n * 4, &rows[*nrows]), nrows);
    return GX_OK;
}

/* The mapreduce alone (into a device scalar); the sqrt of one value is not timed. */
gx_status bench_case_l2dist(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    RB_ROW(red_row(ctx, RB_L2, false, "l2dist", n, reps, 2.0 * (double)n * 4, &rows[*nrows]), nrows);
    return GX_OK;
}

gx_status bench_case_max_lambda(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    RB_ROW(red_row(ctx, RB_MAXLAM, false, "max_lambda", n, reps, (double)n * 4, &rows[*nrows]), nrows);
    return GX_OK;
}

/* A square matrix of n elements (16384 x 16384 at 2^28); axis 1 = over rows' elements. */
static gx_status axis_case(gx_ctx *ctx, int64_t n, int reps, int axis, const char *op, bench_result *row)
{
    int64_t side = 1;
    while ((side * 2) * (side * 2) <= n)
        side *= 2;
    int64_t shape[2] = {side, n / side};
    red_state r = {.ctx = ctx, .which = RB_AXIS, .axis = axis};
    gx_array *flat = NULL;
    gx_status s = bench_random_f32(ctx, shape[0] * shape[1], 23, &flat);
    if (s == GX_OK)
        s = gx_array_reshape(flat, 2, shape, &r.x);
    gx_array_release(flat);
    if (s == GX_OK)
        s = red_rotate(&r, (double)(shape[0] * shape[1]) * 4);
    double us = 0;
    if (s == GX_OK)
        s = run_red(&r);
    if (s == GX_OK)
        s = bench_time(ctx, run_red, &r, reps, &us);
    double bytes = (double)(shape[0] * shape[1]) * 4;
    *row = (bench_result){"gx", op, "f32", shape[0] * shape[1], us, bytes, 0, 0, r.nrot * bytes, 0, 0};
    if (s == GX_OK)
        s = bench_check(ctx, r.out, row);
    red_free(&r);
    return s;
}

gx_status bench_case_sum_rows(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    RB_ROW(axis_case(ctx, n, reps, 1, "sum_rows", &rows[*nrows]), nrows);
    return GX_OK;
}

gx_status bench_case_sum_cols(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    RB_ROW(axis_case(ctx, n, reps, 0, "sum_cols", &rows[*nrows]), nrows);
    return GX_OK;
}
