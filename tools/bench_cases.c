/* bench_cases.c -- the operations `gx bench` measures.  Byte counts are the fewest
 * the work must move: every input read once, every output written once. */
#include "bench_cases.h"
#include "tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ data */

gx_status bench_random_f32(gx_ctx *ctx, int64_t n, uint64_t seed, gx_array **out)
{
    float *h = malloc((size_t)n * sizeof *h);
    if (!h)
        return GX_ERR_OUT_OF_MEMORY;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        h[i] = (float)(x >> 40) * (1.0f / 16777216.0f);
    }
    gx_status s = gx_array_from_host(ctx, GX_F32, 1, &n, h, out);
    free(h);
    return s;
}

/* ------------------------------------------------------------ copy */

typedef struct copy_state {
    gx_array *dst, *src;
} copy_state;
static gx_status run_copy(void *p)
{
    copy_state *c = p;
    return gx_array_copy_into(c->src, c->dst);
}

gx_status bench_copy_bandwidth(gx_ctx *ctx, int64_t n, int reps, bench_result *r)
{
    copy_state c = {0};
    gx_status s = bench_random_f32(ctx, n, 1, &c.src);
    if (s == GX_OK)
        s = gx_array_similar(c.src, &c.dst);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_copy, &c, reps, &us);
    *r = (bench_result){"gx", "copy", "f32", n, us, 2.0 * (double)n * 4, 0, 0, 0};
    gx_array_release(c.src);
    gx_array_release(c.dst);
    return s;
}

/* ------------------------------------------------------------ plain-C references (CPU) */

typedef struct host_state {
    float *x, *y, *o;
    int64_t n;
    int which;
} host_state;

static gx_status run_host(void *p)
{
    host_state *h = p;
    switch (h->which) {
    case 0: memcpy(h->o, h->x, (size_t)h->n * sizeof(float)); break;
    case 1:
        for (int64_t i = 0; i < h->n; i++)
            h->o[i] = sinf(h->x[i]) * sinf(h->x[i]) + cosf(h->x[i]) * cosf(h->x[i]);
        break;
    case 2:
        for (int64_t i = 0; i < h->n; i++)
            h->o[i] = 2 * h->x[i] + h->y[i];
        break;
    case 3: {
        float acc[8] = {0}; /* independent sums, so the compiler can vectorise */
        int64_t i = 0;
        for (; i + 8 <= h->n; i += 8)
            for (int l = 0; l < 8; l++)
                acc[l] += h->x[i + l];
        for (; i < h->n; i++)
            acc[0] += h->x[i];
        h->o[0] = acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
        break;
    }
    }
    return GX_OK;
}

/* On the CPU backend: memcpy of the same bytes and a single-threaded C loop. */
gx_status bench_host_refs(gx_ctx *ctx, int which, const char *op, int64_t n, int reps, double bytes, bench_result *rows,
                          int *nrows)
{
    host_state h = {malloc((size_t)n * 4), malloc((size_t)n * 4), malloc((size_t)n * 4), n, 0};
    gx_status s = h.x && h.y && h.o ? GX_OK : GX_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; s == GX_OK && i < n; i++)
        h.x[i] = (float)(i % 977) * 0.001f, h.y[i] = (float)(i % 991) * 0.002f, h.o[i] = 0;
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_host, &h, reps, &us);
    /* memcpy moves one array's worth each way: its own bytes, so its GB/s is the
     * machine's copy bandwidth, the ceiling for the rows beside it. */
    if (s == GX_OK)
        rows[(*nrows)++] = (bench_result){"memcpy", op, "f32", n, us, 2.0 * (double)n * 4, 0, 0, 0};
    h.which = which;
    if (s == GX_OK)
        s = bench_time(ctx, run_host, &h, reps < 5 ? reps : 5, &us);
    if (s == GX_OK)
        rows[(*nrows)++] = (bench_result){"c_loop", op, "f32", n, us, bytes, 0, 0, 0};
    free(h.x);
    free(h.y);
    free(h.o);
    return s;
}

/* ------------------------------------------------------------ map */

typedef struct map_state {
    gx_ctx *ctx;
    const char *lambda;
    gx_array *in[2];
    int nin;
    gx_array *out;
} map_state;
static gx_status run_map(void *p)
{
    map_state *m = p;
    return gx_map_into(m->ctx, m->lambda, m->nin, m->in, NULL, m->out);
}

static gx_status map_case(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, const char *op, const char *lambda,
                          int nin, int host_which, bench_result *rows, int *nrows)
{
    map_state m = {ctx, lambda, {NULL, NULL}, nin, NULL};
    gx_status s = GX_OK;
    for (int i = 0; s == GX_OK && i < nin; i++)
        s = bench_random_f32(ctx, n, 11 + (uint64_t)i, &m.in[i]);
    if (s == GX_OK)
        s = gx_array_similar(m.in[0], &m.out);
    double us = 0, bytes = (double)(nin + 1) * (double)n * 4;
    if (s == GX_OK)
        s = bench_time(ctx, run_map, &m, reps, &us);
    if (s == GX_OK)
        rows[(*nrows)++] = (bench_result){"gx", op, "f32", n, us, bytes, 0, 0, 0};
    for (int i = 0; i < nin; i++)
        gx_array_release(m.in[i]);
    gx_array_release(m.out);
    if (s == GX_OK && k == GX_BACKEND_CPU)
        s = bench_host_refs(ctx, host_which, op, n, reps, bytes, rows, nrows);
    return s;
}

gx_status bench_custom_map(gx_ctx *ctx, int64_t n, int reps, const char *lambda, bench_result *rows, int *nrows)
{
    int nin = 0;
    const char *arrow = strstr(lambda, "->");
    /* Parameters are the comma-separated names before "->". */
    for (const char *p = lambda; arrow && p < arrow; p++)
        if (*p == ',' || (nin == 0 && *p != ' '))
            nin++;
    if (nin > 2)
        nin = 2;
    return map_case(ctx, GX_BACKEND_CUDA, n, reps, lambda, lambda, nin, 0, rows, nrows);
}

static gx_status case_sin2cos2(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    return map_case(ctx, k, n, reps, "map_sin2cos2", "x -> sin(x)*sin(x) + cos(x)*cos(x)", 1, 1, rows, nrows);
}

static gx_status case_saxpy(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    return map_case(ctx, k, n, reps, "map_saxpy", "x, y -> 2*x + y", 2, 2, rows, nrows);
}

/* Vendor operations (bench_linalg.c). */
gx_status bench_case_sgemm(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_rand_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);

const bench_case bench_cases[] = {
    {"pool", bench_case_pool, 1},
    {"fill_f32", bench_case_fill, 0},
    {"jit", bench_case_jit, 1},
    {"map_sin2cos2", case_sin2cos2, 0},
    {"map_saxpy", case_saxpy, 0},
    {"sgemm", bench_case_sgemm, 0},
    {"rand_f32", bench_case_rand_f32, 0},
    {"sum", bench_case_sum, 0},
    {"max", bench_case_max, 0},
    {"argmin", bench_case_argmin, 0},
    {"l2dist", bench_case_l2dist, 0},
    {"max_lambda", bench_case_max_lambda, 0},
    {"sum_rows", bench_case_sum_rows, 0},
    {"sum_cols", bench_case_sum_cols, 0},
    {"scan_sum", bench_case_scan_sum, 0},
    {"select_gt05", bench_case_select_gt05, 0},
    {"iota_sum_i64", bench_case_iota_sum_i64, 0},
    {"pipeline_count", bench_case_pipeline_count, 0},
    {"pipeline_l2count", bench_case_pipeline_l2count, 0},
    {NULL, NULL, 0},
};
