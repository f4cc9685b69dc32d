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
    int axis;
    /* Inputs and results rotated through, so that small sizes are read from memory,
     * not L2: slot i's inputs xs[i] (ys[i]) and its result outs[i] (an index array for
     * argmin/argmax), made by the slot's first run (*_to), written by later ones
     * (*_into). */
    gx_array *xs[BENCH_MAXROT], *ys[BENCH_MAXROT], *outs[BENCH_MAXROT];
    int nrot, next;
} red_state;

enum { RB_SUM, RB_MAX, RB_ARGMIN, RB_ARGMAX, RB_MEAN, RB_L2, RB_MAXLAM, RB_AXIS };

/* l2dist is sqrt(sum((x - y)^2)), as the peers compute it (torch.sqrt(torch.sum(...)),
 * a CuPy ReductionKernel with a sqrt post-map): the squared distance folded into a
 * one-element device array with the sqrt as the reduction's finish (gx/reduce.h's
 * opts->finish), one kernel -- what a gx user who keeps the result on the device
 * writes (gx_mapreduce's host scalar would add a wait for the result, which the
 * peers' calls do not pay).  Until session 33 this was two launches, the sum and a
 * one-element map "s -> sqrt(s)". */
static gx_status run_l2(red_state *r, gx_array *x, gx_array *y, gx_array **out)
{
    gx_array *in[2] = {x, y};
    gx_reduce_opts o = {.finish = "s -> sqrt(s)"};
    return *out ? gx_mapreduce_into(r->ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, &o, *out)
                : gx_mapreduce_to(r->ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, &o, out);
}

static gx_status run_red(void *p)
{
    red_state *r = p;
    int i = r->next++ % r->nrot;
    gx_array *x = r->xs[i], **out = &r->outs[i];
    gx_scalar ninf = GX_SCALAR_F32(-INFINITY);
    gx_reduce_opts o = {0};
    switch (r->which) {
    case RB_SUM: return *out ? gx_reduce_into(r->ctx, "+", x, NULL, *out) : gx_reduce_to(r->ctx, "+", x, NULL, out);
    case RB_MAX: return *out ? gx_reduce_into(r->ctx, "max", x, NULL, *out) : gx_reduce_to(r->ctx, "max", x, NULL, out);
    case RB_ARGMIN:
        return *out ? gx_find_into(r->ctx, "min", x, NULL, NULL, *out) : gx_find_to(r->ctx, "min", x, NULL, NULL, out);
    case RB_ARGMAX:
        return *out ? gx_find_into(r->ctx, "max", x, NULL, NULL, *out) : gx_find_to(r->ctx, "max", x, NULL, NULL, out);
    case RB_MEAN:
        return *out ? gx_reduce_into(r->ctx, "mean", x, NULL, *out) : gx_reduce_to(r->ctx, "mean", x, NULL, out);
    case RB_L2: return run_l2(r, x, r->ys[i], out);
    case RB_MAXLAM:
        o.init = &ninf;
        return *out ? gx_reduce_into(r->ctx, "a, b -> max(a, b)", x, &o, *out)
                    : gx_reduce_to(r->ctx, "a, b -> max(a, b)", x, &o, out);
    default:
        o.axes = &r->axis;
        o.naxes = 1;
        return *out ? gx_reduce_into(r->ctx, "+", x, &o, *out) : gx_reduce_to(r->ctx, "+", x, &o, out);
    }
}

/* The slot the last run used: its result is the one checked. */
static gx_array *red_last(const red_state *r) { return r->outs[(r->next - 1) % r->nrot]; }

static gx_status random_i32(gx_ctx *ctx, int64_t n, gx_array **out)
{
    int32_t *h = malloc((size_t)n * sizeof *h);
    if (!h)
        return GX_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < n; i++)
        h[i] = bench_i32_at(20, i); /* 0..1023: the peers' i32 inputs */
    gx_status st = gx_array_from_host(ctx, GX_I32, 1, &n, h, out);
    free(h);
    return st;
}

/* Makes copies of x (and y) until a run's working set (set bytes: inputs and the
 * result) is out of the cache, then every slot's result by one untimed run each. */
static gx_status red_rotate(red_state *r, gx_array *x, gx_array *y, double set)
{
    int ny;
    /* xs[0] = x and ys[0] = y from here on: red_free releases them. */
    gx_status s = bench_clones(x, bench_rot_count(r->ctx, set), r->xs, &r->nrot);
    if (s == GX_OK && y)
        s = bench_clones(y, r->nrot, r->ys, &ny);
    else if (y)
        gx_array_release(y);
    for (int i = 0; s == GX_OK && i < r->nrot; i++)
        s = run_red(r);
    return s;
}

static void red_free(red_state *r)
{
    for (int i = 0; i < BENCH_MAXROT; i++) {
        gx_array_release(r->xs[i]);
        gx_array_release(r->ys[i]);
        gx_array_release(r->outs[i]);
    }
}

/* ------------------------------------------------------------ host references */

/* The row's scalar against the host's, from the same inputs (seed 21, y: 22; i32: 20). */
static gx_status red_verify(red_state *r, bool i32, int64_t n, bench_result *row)
{
    gx_array *res = red_last(r);
    if (i32) { /* exact: an i64 sum of 0..1023 */
        int64_t got = 0, want = 0;
        gx_status s = bench_read_i64(res, &got);
        for (int64_t i = 0; i < n; i++)
            want += bench_i32_at(20, i);
        if (s == GX_OK)
            bench_verdict(row, got == want, "sum %lld, host %lld", (long long)got, (long long)want);
        return s;
    }
    const float *x = bench_inputs_f32(n, 21), *y = r->which == RB_L2 ? bench_inputs_f32(n, 22) : NULL;
    if (!x || (r->which == RB_L2 && !y))
        return GX_ERR_OUT_OF_MEMORY;
    if (r->which == RB_ARGMIN || r->which == RB_ARGMAX) { /* exact: the first extreme index */
        int64_t got = -1, want = 0;
        gx_status s = bench_read_i64(res, &got);
        for (int64_t i = 1; i < n; i++)
            if (r->which == RB_ARGMIN ? x[i] < x[want] : x[i] > x[want])
                want = i;
        if (s == GX_OK)
            bench_verdict(row, got == want, "index %lld (value %.9g), host %lld (value %.9g)", (long long)got,
                          got >= 0 && got < n ? x[got] : NAN, (long long)want, x[want]);
        return s;
    }
    double got = 0;
    gx_status s = bench_read_f64(res, &got);
    if (s != GX_OK)
        return s;
    if (r->which == RB_MAX || r->which == RB_MAXLAM) { /* exact */
        float want = x[0];
        for (int64_t i = 1; i < n; i++)
            want = x[i] > want ? x[i] : want;
        bench_verdict(row, got == want, "max %.9g, host %.9g", got, want);
        return GX_OK;
    }
    long double sum = 0;
    if (r->which == RB_L2) /* x - y is exact in f32 (both multiples of 2^-24 in [0, 1)), its square in double */
        for (int64_t i = 0; i < n; i++)
            sum += (long double)((double)(x[i] - y[i]) * (double)(x[i] - y[i]));
    else
        for (int64_t i = 0; i < n; i++)
            sum += x[i];
    if (r->which == RB_SUM) {
        bench_check_f32_sum(row, got, sum, n, "sum");
    } else if (r->which == RB_MEAN) {
        /* gx/reduce.h: |mean error| <= eps_f32 |S| / n + eps_f64 sum|x| (sum|x| = S). */
        long double want = sum / n;
        double tol = 0x1p-23 * (double)(sum / n) + 0x1p-52 * (double)sum, err = fabs((double)(got - want));
        bench_verdict(row, err <= tol, "mean %.9g, host %.9Lg: off by %.3g > %.3g", got, want, err, tol);
    } else {
        /* Each f32 square rounds (2^-24 S in all), the f64 sum rounds to f32 (2^-23 S +
         * n 2^-52 S): relative error of S within e = 3 2^-24 + n 2^-52, of its sqrt
         * e / 2, and the f32 sqrt rounds once more (2^-24); tolerance twice that. */
        long double want = sqrtl(sum);
        double e = 3 * 0x1p-24 + (double)n * 0x1p-52, tol = 2 * (e / 2 + 0x1p-24) * (double)want;
        double err = fabs((double)(got - want));
        bench_verdict(row, err <= tol, "sqrt(sum((x-y)^2)) %.9g, host %.9Lg: off by %.3g > %.3g", got, want, err, tol);
    }
    return GX_OK;
}

/* One row: time `which` on f32 (or i32) data of n elements. */
static gx_status red_row(gx_ctx *ctx, int which, bool i32, const char *op, int64_t n, int reps, double bytes,
                         bench_result *row)
{
    red_state r = {.ctx = ctx, .which = which};
    gx_array *x = NULL, *y = NULL;
    gx_status s = i32 ? random_i32(ctx, n, &x) : bench_random_f32(ctx, n, 21, &x);
    if (s == GX_OK && which == RB_L2)
        s = bench_random_f32(ctx, n, 22, &y);
    /* The result (one value, 8 bytes at most) rotates with the inputs. */
    double set = bytes + 8;
    if (s == GX_OK)
        s = red_rotate(&r, x, y, set);
    else
        gx_array_release(x), gx_array_release(y);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_red, &r, reps, &us);
    *row = bench_row("gx", op, i32 ? "i32" : "f32", n, us, bytes, 0, 0, r.nrot * set);
    if (s == GX_OK)
        s = bench_check(ctx, red_last(&r), row); /* the scalar result itself */
    if (s == GX_OK)
        s = red_verify(&r, i32, n, row);
    red_free(&r);
    return s;
}

gx_status bench_case_sum(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    RB_ROW(red_row(ctx, RB_SUM, false, "sum", n, reps, (double)n * 4, &rows[*nrows]), nrows);
    RB_ROW(red_row(ctx, RB_SUM, true, "sum", n, reps, (double)n * 4, &rows[*nrows]), nrows);
    /* On the CPU: the copy's bandwidth and a plain loop, so the CPU figure is a ratio. */
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

/* sqrt(sum((x - y)^2)): the mapreduce and the sqrt, both on the device (run_l2). */
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

/* Every output element of a sum along `axis` of the rows x cols inputs of seed 23
 * against a long double host sum: gx/reduce.h's bound with n the summed length. */
static gx_status axis_verify(red_state *r, int64_t rows, int64_t cols, int axis, bench_result *row)
{
    int64_t nout = axis == 1 ? rows : cols, len = axis == 1 ? cols : rows;
    const float *x = bench_inputs_f32(rows * cols, 23);
    long double *want = calloc((size_t)nout, sizeof *want);
    float *got = NULL;
    gx_status s = x && want ? bench_fetch(red_last(r), (void **)&got) : GX_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; s == GX_OK && i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            want[axis == 1 ? i : j] += x[i * cols + j];
    for (int64_t o = 0; s == GX_OK && o < nout; o++) {
        double w = (double)want[o], tol = 0x1p-23 * w + (double)len * 0x1p-52 * w, err = fabs((double)got[o] - w);
        if (err > tol) {
            bench_verdict(row, false, "[%lld] = %.9g, host %.9g: off by %.3g > %.3g", (long long)o, got[o], w, err,
                          tol);
            break;
        }
    }
    if (s == GX_OK)
        bench_pass(row);
    free(want);
    free(got);
    return s;
}

/* A square matrix of n elements (16384 x 16384 at 2^28); axis 1 = over rows' elements. */
static gx_status axis_case(gx_ctx *ctx, int64_t n, int reps, int axis, const char *op, bench_result *row)
{
    int64_t side = 1;
    while ((side * 2) * (side * 2) <= n)
        side *= 2;
    int64_t shape[2] = {side, n / side};
    red_state r = {.ctx = ctx, .which = RB_AXIS, .axis = axis};
    gx_array *flat = NULL, *x = NULL;
    gx_status s = bench_random_f32(ctx, shape[0] * shape[1], 23, &flat);
    if (s == GX_OK)
        s = gx_array_reshape(flat, 2, shape, &x);
    gx_array_release(flat);
    double bytes = (double)(shape[0] * shape[1]) * 4, set = bytes + 4.0 * (double)shape[axis == 1 ? 0 : 1];
    if (s == GX_OK)
        s = red_rotate(&r, x, NULL, set);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_red, &r, reps, &us);
    *row = bench_row("gx", op, "f32", shape[0] * shape[1], us, bytes, 0, 0, r.nrot * set);
    if (s == GX_OK)
        s = bench_check(ctx, red_last(&r), row);
    if (s == GX_OK)
        s = axis_verify(&r, shape[0], shape[1], axis, row);
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
