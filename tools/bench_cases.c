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
    const float *h = bench_inputs_f32(n, seed);
    if (!h)
        return GX_ERR_OUT_OF_MEMORY;
    return gx_array_from_host(ctx, GX_F32, 1, &n, h, out);
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

/* Whether host[0..n) equals the inputs of `seed`; names the first difference. */
static void check_equal_inputs(bench_result *r, const float *host, int64_t n, uint64_t seed, const char *what)
{
    const float *want = bench_inputs_f32(n, seed);
    if (!want) {
        bench_verdict(r, false, "no memory for the host reference");
        return;
    }
    int64_t i = 0;
    if (memcmp(host, want, (size_t)n * sizeof(float)) != 0)
        while (i < n && memcmp(&host[i], &want[i], sizeof(float)) == 0)
            i++;
    else
        i = n;
    bench_verdict(r, i == n, "%s[%lld] = %.9g, the input was %.9g", what, (long long)i, i < n ? host[i] : 0.0,
                  i < n ? want[i] : 0.0);
}

/* Fetches a (f32) and checks it equals the inputs of `seed`, every element. */
static gx_status check_copy_of(gx_array *a, int64_t n, uint64_t seed, bench_result *r)
{
    float *h = NULL;
    gx_status s = bench_fetch(a, (void **)&h);
    if (s == GX_OK)
        check_equal_inputs(r, h, n, seed, "the copy");
    free(h);
    return s;
}

/* ------------------------------------------------------------ copy */

/* Sources and destinations rotated through (bench_rot_count), like every case. */
typedef struct copy_state {
    gx_array *dst[BENCH_MAXROT], *src[BENCH_MAXROT];
    int k, next;
} copy_state;
static gx_status run_copy(void *p)
{
    copy_state *c = p;
    int i = c->next++ % c->k;
    return gx_array_copy_into(c->src[i], c->dst[i]);
}

gx_status bench_copy_bandwidth(gx_ctx *ctx, int64_t n, int reps, bench_result *r)
{
    copy_state c = {0};
    double bytes = 2.0 * (double)n * 4;
    gx_array *x = NULL;
    gx_status s = bench_random_f32(ctx, n, 1, &x);
    if (s == GX_OK)
        s = bench_clones(x, bench_rot_count(ctx, bytes), c.src, &c.k);
    for (int i = 0; s == GX_OK && i < c.k; i++)
        s = bench_output_f32(ctx, n, &c.dst[i]);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_copy, &c, reps, &us);
    *r = bench_row("gx", "copy", "f32", n, us, bytes, 0, 0, c.k * bytes);
    if (s == GX_OK)
        s = bench_check(ctx, c.dst[(c.next - 1) % c.k], r);
    if (s == GX_OK)
        s = check_copy_of(c.dst[(c.next - 1) % c.k], n, 1, r);
    if (c.k == 0)
        gx_array_release(x);
    for (int i = 0; i < c.k; i++) {
        gx_array_release(c.src[i]);
        gx_array_release(c.dst[i]);
    }
    return s;
}

/* ------------------------------------------------------------ host transfers */

/* Between host malloc buffers and existing arrays, both rotated: on the CPU backend
 * a copy between two host buffers, on a GPU a pageable copy over the bus.  Bytes as
 * for the copy: read once, written once. */
typedef struct xfer_state {
    gx_array *dev[BENCH_MAXROT];
    float *host[BENCH_MAXROT];
    size_t bytes;
    int k, next;
    bool to_host;
} xfer_state;

static gx_status run_xfer(void *p)
{
    xfer_state *x = p;
    int i = x->next++ % x->k;
    if (x->to_host)
        return gx_array_to_host(x->dev[i], x->host[i], x->bytes);
    return gx_array_from_host_into(x->host[i], x->bytes, x->dev[i]);
}

/* to_host: d2h (the arrays hold the inputs of seed 32, the host buffers receive),
 * else h2d (the host buffers hold the inputs of seed 31). */
static gx_status xfer_case(gx_ctx *ctx, int64_t n, int reps, bool to_host, bench_result *rows, int *nrows)
{
    xfer_state x = {.bytes = (size_t)n * 4, .to_host = to_host};
    double bytes = 2.0 * (double)n * 4;
    int k = bench_rot_count(ctx, bytes);
    const float *in = bench_inputs_f32(n, to_host ? 32 : 31);
    gx_array *a = NULL;
    gx_status s = in ? GX_OK : GX_ERR_OUT_OF_MEMORY;
    if (s == GX_OK && to_host)
        s = bench_random_f32(ctx, n, 32, &a);
    if (s == GX_OK && to_host)
        s = bench_clones(a, k, x.dev, &x.k);
    for (int i = 0; s == GX_OK && !to_host && i < k; i++, x.k++)
        s = bench_output_f32(ctx, n, &x.dev[i]);
    for (int i = 0; s == GX_OK && i < x.k; i++) {
        x.host[i] = malloc(x.bytes ? x.bytes : 1);
        if (!x.host[i])
            s = GX_ERR_OUT_OF_MEMORY;
        else if (to_host)
            memset(x.host[i], 0, x.bytes); /* touched, as the arrays are */
        else
            memcpy(x.host[i], in, x.bytes);
    }
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_xfer, &x, reps, &us);
    bench_result *r = &rows[*nrows];
    *r = bench_row("gx", to_host ? "d2h" : "h2d", "f32", n, us, bytes, 0, 0, x.k * bytes);
    int last = x.k ? (x.next - 1) % x.k : 0;
    if (s == GX_OK && to_host) {
        long double sum = 0;
        for (int64_t i = 0; i < n; i++)
            sum += x.host[last][i];
        r->check = (double)sum, r->has_check = 1;
        check_equal_inputs(r, x.host[last], n, 32, "the host copy");
    } else if (s == GX_OK) {
        s = bench_check(ctx, x.dev[last], r);
        if (s == GX_OK)
            s = check_copy_of(x.dev[last], n, 31, r);
    }
    if (s == GX_OK)
        (*nrows)++;
    if (x.k == 0)
        gx_array_release(a);
    for (int i = 0; i < x.k; i++) {
        gx_array_release(x.dev[i]);
        free(x.host[i]);
    }
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

/* ------------------------------------------------------------ map references */

/* sin(x)^2 + cos(x)^2 for x in [0, 1): sin and cos within 4 ulp (docs/LAMBDAS.md; 2
 * on CUDA), each square then within 8.5 2^-24 and the sum within 18 2^-24 of the
 * exact value (1, to within 1e-16): the tolerance is 32 2^-24 (1.9e-6). */
#define SIN2COS2_TOL (32 * 0x1p-24)

static double sin2cos2_ref(float x)
{
    double s = sin((double)x), c = cos((double)x);
    return s * s + c * c;
}

/* out of x -> sin(x)^2 + cos(x)^2 over the inputs of seed 11, at the sampled positions. */
static void check_sin2cos2(bench_result *r, const float *out, int64_t n)
{
    static int64_t idx[BENCH_SAMPLES + 2];
    int m = bench_sample_idx(n, idx);
    for (int j = 0; j < m; j++) {
        float x = bench_f32_at(11, idx[j]);
        double want = sin2cos2_ref(x), err = fabs((double)out[idx[j]] - want);
        if (!(err <= SIN2COS2_TOL)) {
            bench_verdict(r, false, "[%lld] = %.9g, host %.9g for x = %.9g (tolerance %.2g)", (long long)idx[j],
                          out[idx[j]], want, x, SIN2COS2_TOL);
            return;
        }
    }
    bench_pass(r);
}

/* out of 2*x + y over the inputs of seeds 11 and 12, every element: exact (2x is
 * exact, the sum rounds once, in f32 or in f64 then to f32 alike). */
static void check_saxpy(bench_result *r, const float *out, int64_t n)
{
    const float *x = bench_inputs_f32(n, 11), *y = bench_inputs_f32(n, 12);
    if (!x || !y) {
        bench_verdict(r, false, "no memory for the host reference");
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        float want = 2.0f * x[i] + y[i];
        if (out[i] != want) {
            bench_verdict(r, false, "[%lld] = %.9g, host 2*%.9g + %.9g = %.9g", (long long)i, out[i], x[i], y[i], want);
            return;
        }
    }
    bench_pass(r);
}

/* ------------------------------------------------------------ plain-C references (CPU) */

/* The inputs and outputs rotated through, as gx's rows rotate theirs; k the copies
 * the running row uses (each row counts its own working set). */
typedef struct host_state {
    float *x[BENCH_MAXROT], *y[BENCH_MAXROT], *o[BENCH_MAXROT];
    int64_t n;
    int which, k, kmax, next, threads;
    float sum; /* which 3: the last call's */
} host_state;

static gx_status run_host(void *p)
{
    host_state *h = p;
    int r = h->next++ % h->k;
    const float *x = h->x[r], *y = h->y[r];
    float *o = h->o[r];
    switch (h->which) {
    case 0: bench_par_copy(o, x, h->n, h->threads); break;
    case 1:
        for (int64_t i = 0; i < h->n; i++)
            o[i] = sinf(x[i]) * sinf(x[i]) + cosf(x[i]) * cosf(x[i]);
        break;
    case 2:
        for (int64_t i = 0; i < h->n; i++)
            o[i] = 2 * x[i] + y[i];
        break;
    case 3: {
        float acc[8] = {0}; /* independent sums, so the compiler can vectorise */
        int64_t i = 0;
        for (; i + 8 <= h->n; i += 8)
            for (int l = 0; l < 8; l++)
                acc[l] += x[i + l];
        for (; i < h->n; i++)
            acc[0] += x[i];
        h->sum = acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
        break;
    }
    }
    return GX_OK;
}

/* The C loop's result against the same references as gx's rows (its sum in f32
 * lanes: within the order-free bound (n/8 + 7) eps_f32 S of its own accumulation). */
static void check_host_loop(host_state *h, bench_result *r)
{
    int last = (h->next - 1) % h->k;
    if (h->which == 1)
        check_sin2cos2(r, h->o[last], h->n);
    else if (h->which == 2)
        check_saxpy(r, h->o[last], h->n);
    else {
        const float *x = bench_inputs_f32(h->n, 21);
        long double want = 0;
        for (int64_t i = 0; x && i < h->n; i++)
            want += x[i];
        double tol = ((double)h->n / 8 + 7) * 0x1p-24 * (double)want, err = fabs((double)(h->sum - want));
        bench_verdict(r, x && err <= tol, "sum %.9g, host %.9Lg: off by %.3g > %.3g", (double)h->sum, want, err, tol);
        r->check = h->sum, r->has_check = 1;
    }
}

static void host_free(host_state *h)
{
    for (int i = 0; i < h->kmax; i++) {
        free(h->x[i]);
        free(h->y[i]);
        free(h->o[i]);
    }
}

/* On the CPU backend: the copy over all threads and a single-threaded C loop, on the
 * inputs of gx's rows (seeds 11 and 12 for the maps, 21 for the sum). */
gx_status bench_host_refs(gx_ctx *ctx, int which, const char *op, int64_t n, int reps, double bytes, bench_result *rows,
                          int *nrows)
{
    host_state h = {.n = n, .threads = bench_host_threads(ctx)};
    double copy_bytes = 2.0 * (double)n * 4;
    int kcopy = bench_rot_count(ctx, copy_bytes), kloop = bench_rot_count(ctx, bytes);
    h.kmax = kcopy > kloop ? kcopy : kloop;
    const float *x = bench_inputs_f32(n, which == 3 ? 21 : 11), *y = bench_inputs_f32(n, 12);
    gx_status s = x && y ? GX_OK : GX_ERR_OUT_OF_MEMORY;
    for (int i = 0; s == GX_OK && i < h.kmax; i++) {
        h.x[i] = malloc((size_t)n * 4), h.y[i] = malloc((size_t)n * 4), h.o[i] = malloc((size_t)n * 4);
        if (!h.x[i] || !h.y[i] || !h.o[i])
            s = GX_ERR_OUT_OF_MEMORY;
        else /* every page written before the timed runs, the outputs too */
            memcpy(h.x[i], x, (size_t)n * 4), memcpy(h.y[i], y, (size_t)n * 4), memset(h.o[i], 0xFF, (size_t)n * 4);
    }
    double us = 0;
    h.k = kcopy;
    if (s == GX_OK)
        s = bench_time(ctx, run_host, &h, reps, &us);
    bench_par_copy(NULL, NULL, 0, 0); /* its helper threads end */
    /* The copy moves one array's worth each way over every thread gx uses: the
     * machine's copy bandwidth, the ceiling for the rows beside it. */
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("memcpy", op, "f32", n, us, copy_bytes, 0, 0, kcopy * copy_bytes);
        r->threads = h.threads;
        check_equal_inputs(r, h.o[(h.next - 1) % h.k], n, which == 3 ? 21 : 11, "the copy");
    }
    h.which = which, h.k = kloop, h.next = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_host, &h, reps < 5 ? reps : 5, &us);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("c_loop_1t", op, "f32", n, us, bytes, 0, 0, kloop * bytes);
        r->threads = 1;
        check_host_loop(&h, r);
    }
    host_free(&h);
    return s;
}

/* ------------------------------------------------------------ map */

enum { MAP_SIN2COS2, MAP_SAXPY, MAP_USER };

/* What a map case times: host_which names the plain-C reference (0: none); fresh
 * times a new result each call (gx_map, the previous call's result released) rather
 * than gx_map_into an existing one; check says which host reference. */
typedef struct map_spec {
    const char *op, *lambda;
    int nin, host_which;
    bool fresh;
    int check;
    const char *define_name, *define_src; /* MAP_USER: --define's file */
} map_spec;

/* Inputs (seeds 11, 12) and outputs rotated through k copies. */
typedef struct map_state {
    gx_ctx *ctx;
    const map_spec *spec;
    gx_array *in[2][BENCH_MAXROT];
    gx_array *out[BENCH_MAXROT];
    gx_array *last; /* fresh: the last call's result */
    int k, next;
} map_state;

static gx_status run_map(void *p)
{
    map_state *m = p;
    int i = m->next++ % m->k;
    gx_array *in[2] = {m->in[0][i], m->in[1][i]};
    if (!m->spec->fresh)
        return gx_map_into(m->ctx, m->spec->lambda, m->spec->nin, in, NULL, m->out[i]);
    /* The release and the allocation are both part of a call that makes a new array;
     * keeping the last result lets the check read it. */
    gx_array_release(m->last);
    m->last = NULL;
    return gx_map(m->ctx, m->spec->lambda, m->spec->nin, in, NULL, &m->last);
}

/* A user's lambda: on a GPU, the CPU backend runs it over the sampled inputs and the
 * two must agree within 1e-5 relative + 1e-6 (their sin, exp... differ by a few ulp);
 * on the CPU backend there is no independent reference. */
static void check_user_map(gx_ctx *ctx, const map_spec *spec, const float *out, int64_t n, bench_result *r)
{
    gx_backend_kind kind = GX_BACKEND_CPU;
    gx_ctx_backend(ctx, &kind);
    if (kind == GX_BACKEND_CPU) {
        bench_nocheck(r, "a user lambda: no reference independent of the CPU backend that ran it");
        return;
    }
    static int64_t idx[BENCH_SAMPLES + 2];
    static float xs[2][BENCH_SAMPLES + 2], want[BENCH_SAMPLES + 2];
    int64_t m = bench_sample_idx(n, idx);
    for (int i = 0; i < spec->nin; i++)
        for (int64_t j = 0; j < m; j++)
            xs[i][j] = bench_f32_at(11 + (uint64_t)i, idx[j]);
    gx_ctx *cpu = NULL;
    gx_array *a[2] = {NULL, NULL}, *o = NULL;
    gx_status s = gx_ctx_create(&cpu, GX_BACKEND_CPU);
    if (s == GX_OK && spec->define_src)
        s = gx_define(cpu, spec->define_name, spec->define_src);
    for (int i = 0; s == GX_OK && i < spec->nin; i++)
        s = gx_array_from_host(cpu, GX_F32, 1, &m, xs[i], &a[i]);
    if (s == GX_OK)
        s = gx_array_empty(cpu, GX_F32, 1, &m, &o);
    if (s == GX_OK)
        s = gx_map_into(cpu, spec->lambda, spec->nin, a, NULL, o);
    if (s == GX_OK)
        s = gx_array_to_host(o, want, (size_t)m * sizeof(float));
    for (int64_t j = 0; s == GX_OK && j < m; j++) {
        float g = out[idx[j]], w = want[j];
        bool same = g == w || (isnan(g) && isnan(w)) ||
                    fabs((double)g - (double)w) <= 1e-5 * fmax(fabs((double)g), fabs((double)w)) + 1e-6;
        if (!same) {
            bench_verdict(r, false, "[%lld] = %.9g, the CPU backend %.9g", (long long)idx[j], g, w);
            break;
        }
    }
    if (s == GX_OK)
        bench_pass(r);
    else
        bench_nocheck(r, "the CPU backend could not run the lambda for a reference");
    gx_array_release(a[0]);
    gx_array_release(a[1]);
    gx_array_release(o);
    gx_ctx_destroy(cpu);
}

static gx_status check_map(map_state *m, int64_t n, bench_result *r)
{
    gx_array *res = m->spec->fresh ? m->last : m->out[(m->next - 1) % m->k];
    gx_status s = bench_check(m->ctx, res, r);
    float *h = NULL;
    if (s == GX_OK)
        s = bench_fetch(res, (void **)&h);
    if (s == GX_OK && m->spec->check == MAP_SIN2COS2)
        check_sin2cos2(r, h, n);
    else if (s == GX_OK && m->spec->check == MAP_SAXPY)
        check_saxpy(r, h, n);
    else if (s == GX_OK)
        check_user_map(m->ctx, m->spec, h, n, r);
    free(h);
    return s;
}

static gx_status map_case(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, const map_spec *spec, bench_result *rows,
                          int *nrows)
{
    map_state m = {ctx, spec, {{NULL}}, {NULL}, NULL, 0, 0};
    double bytes = (double)(spec->nin + 1) * (double)n * 4;
    /* The working set: inputs and outputs; a fresh result is the pool's block just
     * freed, so it does not rotate (nor does the peers' new tensor). */
    double set = spec->fresh ? (double)spec->nin * (double)n * 4 : bytes;
    int want = bench_rot_count(ctx, set), got = 0;
    gx_status s = GX_OK;
    for (int i = 0; s == GX_OK && i < spec->nin; i++) {
        gx_array *x = NULL;
        s = bench_random_f32(ctx, n, 11 + (uint64_t)i, &x);
        if (s == GX_OK)
            s = bench_clones(x, want, m.in[i], &got);
        else
            gx_array_release(x);
        m.k = i == 0 || got < m.k ? got : m.k;
    }
    if (spec->nin == 0)
        m.k = 1;
    for (int i = 0; s == GX_OK && !spec->fresh && i < m.k; i++)
        s = bench_output_f32(ctx, n, &m.out[i]);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_map, &m, reps, &us);
    rows[*nrows] = bench_row("gx", spec->op, "f32", n, us, bytes, 0, 0, m.k * set);
    if (s == GX_OK)
        s = check_map(&m, n, &rows[*nrows]);
    if (s == GX_OK)
        (*nrows)++;
    for (int j = 0; j < BENCH_MAXROT; j++) {
        gx_array_release(m.in[0][j]);
        gx_array_release(m.in[1][j]);
        gx_array_release(m.out[j]);
    }
    gx_array_release(m.last);
    if (s == GX_OK && k == GX_BACKEND_CPU && spec->host_which > 0)
        s = bench_host_refs(ctx, spec->host_which, spec->op, n, reps, bytes, rows, nrows);
    return s;
}

gx_status bench_custom_map(gx_ctx *ctx, int64_t n, int reps, const char *lambda, const char *define_name,
                           const char *define_src, bench_result *rows, int *nrows)
{
    int nin = 0;
    const char *arrow = strstr(lambda, "->");
    /* Parameters are the comma-separated names before "->". */
    for (const char *p = lambda; arrow && p < arrow; p++)
        if (*p == ',' || (nin == 0 && *p != ' '))
            nin++;
    if (nin > 2)
        nin = 2;
    map_spec spec = {lambda, lambda, nin, 0, false, MAP_USER, define_name, define_src};
    return map_case(ctx, GX_BACKEND_CUDA, n, reps, &spec, rows, nrows);
}

static gx_status case_sin2cos2(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    static const map_spec spec = {
        "map_sin2cos2", "x -> sin(x)*sin(x) + cos(x)*cos(x)", 1, 1, false, MAP_SIN2COS2, NULL, NULL};
    return map_case(ctx, k, n, reps, &spec, rows, nrows);
}

static gx_status case_saxpy(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    static const map_spec spec = {"map_saxpy", "x, y -> 2*x + y", 2, 2, false, MAP_SAXPY, NULL, NULL};
    return map_case(ctx, k, n, reps, &spec, rows, nrows);
}

/* map_saxpy into a new array each call: what the pool saves over a fresh allocation. */
static gx_status case_saxpy_new(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    static const map_spec spec = {"map_saxpy_new", "x, y -> 2*x + y", 2, 0, true, MAP_SAXPY, NULL, NULL};
    return map_case(ctx, k, n, reps, &spec, rows, nrows);
}

/* Vendor operations (bench_linalg.c). */
gx_status bench_case_sgemm(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_rand_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);

/* ------------------------------------------------------------ assembly */

/* gx_concat of four arrays of n/4 into a new one of n (issue 19's four 2^26 arrays at
 * 2^28).  The four are quarter views of one random array, so the result must equal
 * that array's inputs, element for element.  Each call makes its result (the pool
 * hands back the block just freed), as torch.cat does; sources rotate. */
typedef struct concat_state {
    gx_ctx *ctx;
    gx_array *src[BENCH_MAXROT], *part[BENCH_MAXROT][4], *out;
    int k, next;
} concat_state;

static gx_status run_concat(void *p)
{
    concat_state *c = p;
    int i = c->next++ % c->k;
    gx_array_release(c->out);
    c->out = NULL;
    return gx_concat(c->ctx, 4, c->part[i], 0, &c->out);
}

static gx_status concat_parts(concat_state *c, int64_t n)
{
    int64_t q = n / 4;
    gx_status s = GX_OK;
    for (int i = 0; s == GX_OK && i < c->k; i++)
        for (int j = 0; s == GX_OK && j < 4; j++) {
            gx_slice sl = {j * q, (j + 1) * q, 1};
            s = gx_array_view(c->src[i], &sl, &c->part[i][j]);
        }
    return s;
}

static gx_status case_concat4(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows)
{
    (void)k;
    n -= n % 4;
    concat_state c = {.ctx = ctx};
    double bytes = 2.0 * (double)n * 4;
    gx_array *x = NULL;
    gx_status s = bench_random_f32(ctx, n, 41, &x);
    if (s == GX_OK)
        s = bench_clones(x, bench_rot_count(ctx, bytes), c.src, &c.k);
    if (s == GX_OK)
        s = concat_parts(&c, n);
    double us = 0;
    if (s == GX_OK)
        s = bench_time(ctx, run_concat, &c, reps, &us);
    if (s == GX_OK) {
        bench_result *r = &rows[(*nrows)++];
        *r = bench_row("gx", "concat4", "f32", n, us, bytes, 0, 0, c.k * (double)n * 4 + (double)n * 4);
        s = bench_check(ctx, c.out, r);
        if (s == GX_OK)
            s = check_copy_of(c.out, n, 41, r);
    }
    if (c.k == 0)
        gx_array_release(x);
    for (int i = 0; i < c.k; i++) {
        for (int j = 0; j < 4; j++)
            gx_array_release(c.part[i][j]);
        gx_array_release(c.src[i]);
    }
    gx_array_release(c.out);
    return s;
}

const bench_case bench_cases[] = {
    {"pool", bench_case_pool, 1},
    {"fill_f32", bench_case_fill, 0},
    {"jit", bench_case_jit, 1},
    {"map_sin2cos2", case_sin2cos2, 0},
    {"map_saxpy", case_saxpy, 0},
    {"map_saxpy_new", case_saxpy_new, 0},
    {"sgemm", bench_case_sgemm, 0},
    {"gemm_f16", bench_case_gemm_f16, 0},
    {"gemm_bf16", bench_case_gemm_bf16, 0},
    {"sum_f16", bench_case_sum_f16, 0},
    {"map_sin2cos2_f16", bench_case_sin2cos2_f16, 0},
    {"l2dist_f16", bench_case_l2dist_f16, 0},
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
    {"iota_hash_sum_i64", bench_case_iota_hash_sum, 0},
    {"launch_latency_iota_sum", bench_case_launch_latency, 0},
    {"pipeline_count", bench_case_pipeline_count, 0},
    {"pipeline_l2count", bench_case_pipeline_l2count, 0},
    {"concat4", case_concat4, 0},
    {"gather_map_f32", bench_case_gather_map, 0},
    {"kernel_vadd_at", bench_case_kernel_vadd, 0},
    {"segsum_f32", bench_case_segsum, 0},
    {"segsum_long_f32", bench_case_segsum_long, 0},
    {"reduce_by_key_f32", bench_case_reduce_by_key, 0},
    {"sort_f32", bench_case_sort_f32, 0},
    {"sort_u32", bench_case_sort_u32, 0},
    {"argsort_f32", bench_case_argsort_f32, 0},
    {"sort_rows_f32", bench_case_sort_rows_f32, 0},
    {"hist256_f32", bench_case_hist256_f32, 0},
    {"sort_pairs_u32", bench_case_sort_pairs_u32, 0},
    {"topk100_f32", bench_case_topk100_f32, 0},
    {"unique_i32", bench_case_unique_i32, 0},
    {"searchsorted_f32", bench_case_searchsorted_f32, 0},
    {"take_f32", bench_case_take, 0},
    {"scatter_add_f32", bench_case_scatter_add, 0},
    {"scatter_add_det_f32", bench_case_scatter_add_det, 0},
    {"index_add_rows_f32", bench_case_index_add_rows, 0},
    {"where_f32", bench_case_where, 0},
    {"host_overhead_map", bench_case_host_overhead_map, 1},
    {"host_overhead_reduce", bench_case_host_overhead_reduce, 1},
    {"host_overhead_scan", bench_case_host_overhead_scan, 1},
    {"host_overhead_filter", bench_case_host_overhead_filter, 1},
    {"host_overhead_filter_into", bench_case_host_overhead_filter_into, 1},
    {"host_overhead_driver_launch", bench_case_host_overhead_driver_launch, 1},
    {"graph_chain10", bench_case_graph_chain10, 0},
    {"graph_nodes", bench_case_graph_nodes, 0},
    {"floor_launch_sync", bench_case_floor_launch_sync, 1},
    {"floor_launch_d2h_sync", bench_case_floor_launch_d2h_sync, 1},
    {"lat_sum_to_host", bench_case_lat_sum_to_host, 0},
    {"lat_scan_sync", bench_case_lat_scan_sync, 0},
    {"lat_filter_new", bench_case_lat_filter_new, 0},
    {"lat_map_sync", bench_case_lat_map_sync, 0},
    {NULL, NULL, 0},
};
