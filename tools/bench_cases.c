/* bench_cases.c -- the operations `gx bench` measures.  Byte counts are the fewest
 * the work must move: every input read once, every output written once. */
#include "bench_cases.h"
#include "tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ data */

float *bench_host_f32(int64_t n, uint64_t seed)
{
    float *h = malloc((size_t)(n > 0 ? n : 1) * sizeof *h);
    for (int64_t i = 0; h && i < n; i++)
        h[i] = (float)(bench_bits(seed, (uint64_t)i) >> 40) * (1.0f / 16777216.0f);
    return h;
}

gx_status bench_random_f32(gx_ctx *ctx, int64_t n, uint64_t seed, gx_array **out)
{
    float *h = bench_host_f32(n, seed);
    if (!h)
        return GX_ERR_OUT_OF_MEMORY;
    gx_status s = gx_array_from_host(ctx, GX_F32, 1, &n, h, out);
    free(h);
    return s;
}

/* An f64 sum, whatever a's dtype: a check that is exact for indices and counts and
 * independent of the order in which the peers add f32 values. */
gx_status bench_check(gx_ctx *ctx, gx_array *a, bench_result *r)
{
    gx_reduce_opts o = {.dtype = GX_F64};
    gx_scalar v;
    gx_status s = gx_reduce(ctx, "+", a, &o, &v);
    if (s == GX_OK)
        r->check = gx_scalar_to_f64(v), r->has_check = 1;
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
    *r = (bench_result){"gx", "copy", "f32", n, us, 2.0 * (double)n * 4, 0, 0, 0, 0, 0};
    if (s == GX_OK)
        s = bench_check(ctx, c.dst, r);
    gx_array_release(c.src);
    gx_array_release(c.dst);
    return s;
}

/* ------------------------------------------------------------ host transfers */

/* Between a host malloc buffer and an existing array: on the CPU backend a copy
 * between two host buffers, on a GPU a pageable copy over the bus.  Bytes as for
 * the copy: read once, written once. */
typedef struct xfer_state {
    gx_array *dev;
    float *host;
    size_t bytes;
} xfer_state;

static gx_status run_h2d(void *p)
{
    xfer_state *x = p;
    return gx_array_from_host_into(x->host, x->bytes, x->dev);
}

static gx_status run_d2h(void *p)
{
    xfer_state *x = p;
    return gx_array_to_host(x->dev, x->host, x->bytes);
}

static double host_sum(const float *h, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += h[i];
    return s;
}

/* to_host: d2h (the array holds the inputs, the host buffer receives), else h2d. */
static gx_status xfer_case(gx_ctx *ctx, int64_t n, int reps, bool to_host, bench_result *rows, int *nrows)
{
    xfer_state x = {NULL, to_host ? malloc((size_t)n * 4) : bench_host_f32(n, 31), (size_t)n * 4};
    gx_status s = x.host ? GX_OK : GX_ERR_OUT_OF_MEMORY;
    if (s == GX_OK)
        s = to_host ? bench_random_f32(ctx, n, 32, &x.dev) : gx_array_empty(ctx, GX_F32, 1, &n, &x.dev);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, to_host ? run_d2h : run_h2d, &x, reps, &us);
    bench_result *r = &rows[*nrows];
    *r = (bench_result){"gx", to_host ? "d2h" : "h2d", "f32", n, us, 2.0 * (double)n * 4, 0, 0, 0, 0, 0};
    if (s == GX_OK && to_host)
        r->check = host_sum(x.host, n), r->has_check = 1;
    else if (s == GX_OK)
        s = bench_check(ctx, x.dev, r);
    if (s == GX_OK)
        (*nrows)++;
    gx_array_release(x.dev);
    free(x.host);
    return s;
}

static gx_status case_h2d(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return xfer_case(ctx, n, reps, false, rows, nrows);
}

static gx_status case_d2h(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    return xfer_case(ctx, n, reps, true, rows, nrows);
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
        rows[(*nrows)++] = (bench_result){"memcpy", op, "f32", n, us, 2.0 * (double)n * 4, 0, 0, 0, 0, 0};
    h.which = which;
    if (s == GX_OK)
        s = bench_time(ctx, run_host, &h, reps < 5 ? reps : 5, &us);
    if (s == GX_OK)
        rows[(*nrows)++] = (bench_result){"c_loop", op, "f32", n, us, bytes, 0, 0, 0, 0, 0};
    free(h.x);
    free(h.y);
    free(h.o);
    return s;
}

/* ------------------------------------------------------------ map */

/* What a map case times: host_which names the plain-C reference (0: none); fresh
 * times a new result each call (gx_map, the previous call's result released) rather
 * than gx_map_into an existing one. */
typedef struct map_spec {
    const char *op, *lambda;
    int nin, host_which;
    bool fresh;
} map_spec;

typedef struct map_state {
    gx_ctx *ctx;
    const map_spec *spec;
    gx_array *in[2];
    gx_array *out;
} map_state;

static gx_status run_map(void *p)
{
    map_state *m = p;
    if (!m->spec->fresh)
        return gx_map_into(m->ctx, m->spec->lambda, m->spec->nin, m->in, NULL, m->out);
    /* The release and the allocation are both part of a call that makes a new array;
     * keeping the last result lets the check read it. */
    gx_array_release(m->out);
    m->out = NULL;
    return gx_map(m->ctx, m->spec->lambda, m->spec->nin, m->in, NULL, &m->out);
}

static gx_status map_case(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, const map_spec *spec, bench_result *rows,
                          int *nrows)
{
    map_state m = {ctx, spec, {NULL, NULL}, NULL};
    gx_status s = GX_OK;
    for (int i = 0; s == GX_OK && i < spec->nin; i++)
        s = bench_random_f32(ctx, n, 11 + (uint64_t)i, &m.in[i]);
    if (s == GX_OK)
        s = gx_array_similar(m.in[0], &m.out);
    double us = 0, bytes = (double)(spec->nin + 1) * (double)n * 4;
    if (s == GX_OK)
        s = bench_time(ctx, run_map, &m, reps, &us);
    rows[*nrows] = (bench_result){"gx", spec->op, "f32", n, us, bytes, 0, 0, 0, 0, 0};
    if (s == GX_OK)
        s = bench_check(ctx, m.out, &rows[*nrows]);
    if (s == GX_OK)
        (*nrows)++;
    for (int i = 0; i < spec->nin; i++)
        gx_array_release(m.in[i]);
    gx_array_release(m.out);
    if (s == GX_OK && k == GX_BACKEND_CPU && spec->host_which > 0)
        s = bench_host_refs(ctx, spec->host_which, spec->op, n, reps, bytes, rows, nrows);
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
    map_spec spec = {lambda, lambda, nin, 0, false};
    return map_case(ctx, GX_BACKEND_CUDA, n, reps, &spec, rows, nrows);
}

static gx_status case_sin2cos2(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    static const map_spec spec = {"map_sin2cos2", "x -> sin(x)*sin(x) + cos(x)*cos(x)", 1, 1, false};
    return map_case(ctx, k, n, reps, &spec, rows, nrows);
}

static gx_status case_saxpy(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    static const map_spec spec = {"map_saxpy", "x, y -> 2*x + y", 2, 2, false};
    return map_case(ctx, k, n, reps, &spec, rows, nrows);
}

/* map_saxpy into a new array each call: what the pool saves over a fresh allocation. */
static gx_status case_saxpy_new(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    static const map_spec spec = {"map_saxpy_new", "x, y -> 2*x + y", 2, 0, true};
    return map_case(ctx, k, n, reps, &spec, rows, nrows);
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
    {"map_saxpy_new", case_saxpy_new, 0},
    {"sgemm", bench_case_sgemm, 0},
    {"rand_f32", bench_case_rand_f32, 0},
    {"h2d", case_h2d, 0},
    {"d2h", case_d2h, 0},
    {"sum", bench_case_sum, 0},
    {"max", bench_case_max, 0},
    {"argmin", bench_case_argmin, 0},
    {"argmax", bench_case_argmax, 0},
    {"mean", bench_case_mean, 0},
    {"l2dist", bench_case_l2dist, 0},
    {"max_lambda", bench_case_max_lambda, 0},
    {"sum_rows", bench_case_sum_rows, 0},
    {"sum_cols", bench_case_sum_cols, 0},
    {"scan_sum", bench_case_scan_sum, 0},
    {"scan_sum_new", bench_case_scan_sum_new, 0},
    {"select_gt05", bench_case_select_gt05, 0},
    {"iota_sum_i64", bench_case_iota_sum_i64, 0},
    {"pipeline_count", bench_case_pipeline_count, 0},
    {"pipeline_l2count", bench_case_pipeline_l2count, 0},
    {NULL, NULL, 0},
};
