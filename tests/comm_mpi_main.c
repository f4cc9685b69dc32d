/* comm_mpi_main.c -- gx/comm.h's collectives over N MPI processes (CPU backend).
 *
 *   mpirun -n N gx_comm_mpi_tests [all|timeout|bench [max_exp]]
 *
 * The backend is GX_BACKEND's (ctest sets cpu: MPI carries the data; on a GPU machine
 * GX_BACKEND=cuda runs the same checks over NCCL, one GPU per rank, with NCCL's dtype
 * and operator rules).
 * Its own program (not a GXT_TEST: those run one process each).  Every rank makes
 * its inputs from (rank, element, salt) alone, so each rank computes every expected
 * result on the host from all ranks' inputs, independently of gx and MPI.  Values are
 * small integers, so sums and products are exact in every dtype and float results
 * compare exactly.  Each rank counts its failures; rank 0 prints the total and the
 * program exits 1 when any rank failed.
 *
 * `timeout`: the last rank never joins an all-reduce; the others must get
 * GX_ERR_TIMEOUT within the 2 s timeout (and again at once: the communicator is
 * broken).  They print the outcome and rank 0 ends the job with MPI_Abort (MPI cannot
 * take back the half-done collective); ctest matches the printed line. */
#include "gx.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_rank, g_size, g_fail;
static bool g_nccl; /* CUDA: NCCL's dtype and operator rules (gx/comm.h) */
static gx_ctx *g_ctx;
static gx_comm *g_comm;

#define FAIL(...)                                                           \
    do {                                                                    \
        fprintf(stderr, "rank %d: %s:%d: FAILED: ", g_rank, __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                       \
        fprintf(stderr, "\n");                                              \
        g_fail++;                                                           \
    } while (0)
#define OK(call)                                                                                         \
    do {                                                                                                 \
        gx_status s_ = (call);                                                                           \
        if (s_ != GX_OK) {                                                                               \
            FAIL("%s -> %s: %s", #call, gx_status_string(s_), gx_last_error());                          \
            return;                                                                                      \
        }                                                                                                \
    } while (0)
#define STATUS(call, want, sub)                                                                           \
    do {                                                                                                  \
        gx_clear_error();                                                                                 \
        gx_status s_ = (call);                                                                            \
        if (s_ != (want))                                                                                 \
            FAIL("%s -> %s, want %s (%s)", #call, gx_status_string(s_), gx_status_string(want), gx_last_error()); \
        else if (!strstr(gx_last_error(), (sub)))                                                         \
            FAIL("%s: message lacks \"%s\": %s", #call, (sub), gx_last_error());                          \
    } while (0)

static const gx_dtype all_dtypes[] = {GX_BOOL, GX_I8,  GX_I16, GX_I32, GX_I64, GX_U8,  GX_U16, GX_U32,
                                      GX_U64,  GX_F16, GX_BF16, GX_F32, GX_F64, GX_C64, GX_C128};
#define NDT ((int)(sizeof all_dtypes / sizeof all_dtypes[0]))

static bool is_cx(gx_dtype t) { return t == GX_C64 || t == GX_C128; }
static bool is_fl(gx_dtype t) { return t == GX_F16 || t == GX_BF16 || t == GX_F32 || t == GX_F64; }
static bool is_signed(gx_dtype t) { return t == GX_I8 || t == GX_I16 || t == GX_I32 || t == GX_I64 || is_fl(t) || is_cx(t); }

/* Element i of rank r's input (salt k): small integers, negative ones for signed
 * dtypes; "*" gets 1s and 2s so four ranks' product stays small. */
static double gen(gx_dtype t, int r, long i, int k, bool mul)
{
    if (t == GX_BOOL)
        return (r + i + k) % 3 == 0;
    if (mul)
        return (double)((r + i + k) % 2 + 1);
    long v = (r * 7 + i * 3 + k) % 11 + 1;
    return (double)(is_signed(t) ? v - 5 : v);
}

static void put(gx_dtype t, void *buf, long i, double re, double im)
{
    switch (t) {
    case GX_BOOL: ((uint8_t *)buf)[i] = re != 0; break;
    case GX_I8: ((int8_t *)buf)[i] = (int8_t)re; break;
    case GX_I16: ((int16_t *)buf)[i] = (int16_t)re; break;
    case GX_I32: ((int32_t *)buf)[i] = (int32_t)re; break;
    case GX_I64: ((int64_t *)buf)[i] = (int64_t)re; break;
    case GX_U8: ((uint8_t *)buf)[i] = (uint8_t)re; break;
    case GX_U16: ((uint16_t *)buf)[i] = (uint16_t)re; break;
    case GX_U32: ((uint32_t *)buf)[i] = (uint32_t)re; break;
    case GX_U64: ((uint64_t *)buf)[i] = (uint64_t)re; break;
    case GX_F16: ((uint16_t *)buf)[i] = gx_f32_to_f16((float)re); break;
    case GX_BF16: ((uint16_t *)buf)[i] = gx_f32_to_bf16((float)re); break;
    case GX_F32: ((float *)buf)[i] = (float)re; break;
    case GX_F64: ((double *)buf)[i] = re; break;
    case GX_C64: ((float *)buf)[2 * i] = (float)re, ((float *)buf)[2 * i + 1] = (float)im; break;
    case GX_C128: ((double *)buf)[2 * i] = re, ((double *)buf)[2 * i + 1] = im; break;
    default: break;
    }
}

static double get(gx_dtype t, const void *buf, long i, double *im)
{
    *im = 0;
    switch (t) {
    case GX_BOOL: return ((const uint8_t *)buf)[i];
    case GX_I8: return ((const int8_t *)buf)[i];
    case GX_I16: return ((const int16_t *)buf)[i];
    case GX_I32: return ((const int32_t *)buf)[i];
    case GX_I64: return (double)((const int64_t *)buf)[i];
    case GX_U8: return ((const uint8_t *)buf)[i];
    case GX_U16: return ((const uint16_t *)buf)[i];
    case GX_U32: return ((const uint32_t *)buf)[i];
    case GX_U64: return (double)((const uint64_t *)buf)[i];
    case GX_F16: return gx_f16_to_f32(((const uint16_t *)buf)[i]);
    case GX_BF16: return gx_bf16_to_f32(((const uint16_t *)buf)[i]);
    case GX_F32: return ((const float *)buf)[i];
    case GX_F64: return ((const double *)buf)[i];
    case GX_C64: *im = ((const float *)buf)[2 * i + 1]; return ((const float *)buf)[2 * i];
    case GX_C128: *im = ((const double *)buf)[2 * i + 1]; return ((const double *)buf)[2 * i];
    default: return 0;
    }
}

/* Rank r's n-element input as a gx array (1-d). */
static gx_array *make(gx_dtype t, int r, long n, int k, bool mul)
{
    size_t es = gx_dtype_size(t);
    unsigned char *h = malloc(es * (size_t)(n ? n : 1));
    for (long i = 0; i < n; i++)
        put(t, h, i, gen(t, r, i, k, mul), is_cx(t) ? gen(t, r, i, k + 5, mul) : 0);
    gx_array *a = NULL;
    int64_t sh = n;
    if (gx_array_from_host(g_ctx, t, 1, &sh, h, &a) != GX_OK)
        FAIL("from_host: %s", gx_last_error());
    free(h);
    return a;
}

/* A strided view over a fresh 2n array whose even elements hold the input
 * (reversed with neg: a negative stride), for views as send buffers. */
static gx_array *make_view(gx_dtype t, int r, long n, int k, bool mul, bool neg, gx_array **base)
{
    size_t es = gx_dtype_size(t);
    long m = 2 * n + 1;
    unsigned char *h = calloc((size_t)m, es);
    for (long i = 0; i < n; i++) {
        long at = neg ? 2 * (n - 1 - i) : 2 * i;
        put(t, h, at, gen(t, r, i, k, mul), is_cx(t) ? gen(t, r, i, k + 5, mul) : 0);
    }
    int64_t sh = m;
    *base = NULL;
    gx_array *v = NULL;
    if (gx_array_from_host(g_ctx, t, 1, &sh, h, base) == GX_OK) {
        gx_slice s = neg ? (gx_slice){2 * n - 2, -m - 1, -2} : (gx_slice){0, 2 * n, 2};
        if (n == 0)
            s = (gx_slice){0, 0, 1};
        if (gx_array_view(*base, &s, &v) != GX_OK)
            FAIL("view: %s", gx_last_error());
    }
    free(h);
    return v;
}

static double fold(const char *op, gx_dtype t, double a, double b)
{
    long long x = (long long)a, y = (long long)b;
    if (!strcmp(op, "+")) return a + b;
    if (!strcmp(op, "*")) return a * b;
    if (!strcmp(op, "max")) return a > b ? a : b;
    if (!strcmp(op, "min")) return a < b ? a : b;
    if (!strcmp(op, "&")) return (double)(x & y);
    if (!strcmp(op, "|")) return (double)(x | y);
    if (!strcmp(op, "^")) return t == GX_BOOL ? (double)((x != 0) != (y != 0)) : (double)(x ^ y);
    if (!strcmp(op, "&&")) return (double)(x && y);
    if (!strcmp(op, "||")) return (double)(x || y);
    return NAN;
}

/* The expected reduction of element i over all ranks (re, im). */
static void expect_red(const char *op, gx_dtype t, long i, int k, double *re, double *im)
{
    bool mul = !strcmp(op, "*");
    *re = gen(t, 0, i, k, mul), *im = is_cx(t) ? gen(t, 0, i, k + 5, mul) : 0;
    for (int r = 1; r < g_size; r++) {
        double br = gen(t, r, i, k, mul), bi = is_cx(t) ? gen(t, r, i, k + 5, mul) : 0;
        if (is_cx(t) && mul) {
            double nr = *re * br - *im * bi, ni = *re * bi + *im * br;
            *re = nr, *im = ni;
        } else if (is_cx(t)) {
            *re += br, *im += bi;
        } else
            *re = fold(op, t, *re, br);
    }
    /* what storing it in the dtype makes of it (negative values in unsigned wrap) */
    unsigned char tmp[16] = {0};
    put(t, tmp, 0, *re, *im);
    *re = get(t, tmp, 0, im);
}

static bool op_ok(const char *op, gx_dtype t)
{
    bool bit = !strcmp(op, "&") || !strcmp(op, "|") || !strcmp(op, "^") || !strcmp(op, "&&") || !strcmp(op, "||");
    bool arith = !strcmp(op, "+") || !strcmp(op, "*");
    if (g_nccl && t == GX_BOOL)
        return !arith && strcmp(op, "^") != 0;
    if (g_nccl)
        return !(t == GX_I16 || t == GX_U16 || is_cx(t)) && !bit;
    if (is_cx(t))
        return arith;
    if (is_fl(t))
        return !bit;
    if (t == GX_BOOL)
        return !arith;
    return strcmp(op, "&&") != 0 && strcmp(op, "||") != 0; /* logical: bool only */
}

static void check_host(const char *what, gx_dtype t, const gx_array *a, long n, void (*want)(long, double *, double *, void *),
                       void *arg)
{
    size_t es = gx_dtype_size(t);
    unsigned char *h = malloc(es * (size_t)(n ? n : 1));
    if (gx_array_to_host(a, h, es * (size_t)n) != GX_OK) {
        FAIL("%s: to_host: %s", what, gx_last_error());
        free(h);
        return;
    }
    int bad = 0;
    for (long i = 0; i < n && bad < 3; i++) {
        double wr, wi, gi, gr = get(t, h, i, &gi);
        want(i, &wr, &wi, arg);
        if (gr != wr || gi != wi) {
            FAIL("%s %s n=%ld: element %ld is %g%+gi, want %g%+gi", what, gx_dtype_name(t), n, i, gr, gi, wr, wi);
            bad++;
        }
    }
    free(h);
}

/* ------------------------------------------------------------ reductions */

typedef struct red_arg {
    const char *op;
    gx_dtype t;
    int k;
    long off; /* reduce-scatter: this rank's block starts here */
} red_arg;

static void want_red(long i, double *re, double *im, void *arg)
{
    red_arg *a = arg;
    expect_red(a->op, a->t, i + a->off, a->k, re, im);
}

static const char *const ops[] = {"+", "*", "max", "min", "&", "|", "^", "&&", "||"};

static void test_allreduce(void)
{
    static const long sizes[] = {0, 1, 33, 1001};
    for (int d = 0; d < NDT; d++)
        for (int o = 0; o < 9; o++) {
            gx_dtype t = all_dtypes[d];
            const char *op = ops[o];
            bool mul = !strcmp(op, "*");
            if (!op_ok(op, t)) {
                gx_array *x = make(t, g_rank, 4, 1, mul), *y = make(t, g_rank, 4, 1, mul);
                STATUS(gx_allreduce(g_comm, op, x, y), GX_ERR_DTYPE, op);
                gx_array_release(x), gx_array_release(y);
                continue;
            }
            for (int z = 0; z < 4; z++) {
                long n = sizes[z];
                int k = d + o + z;
                red_arg ra = {op, t, k, 0};
                char what[64];
                /* plain */
                gx_array *x = make(t, g_rank, n, k, mul), *y = make(t, g_rank, n, k + 1, mul);
                snprintf(what, sizeof what, "allreduce \"%s\"", op);
                OK(gx_allreduce(g_comm, op, x, y));
                check_host(what, t, y, n, want_red, &ra);
                /* in place */
                snprintf(what, sizeof what, "allreduce in place \"%s\"", op);
                OK(gx_allreduce(g_comm, op, x, x));
                check_host(what, t, x, n, want_red, &ra);
                gx_array_release(x);
                /* a strided view (negative stride on odd sizes) as send, a view as recv */
                gx_array *base, *base2;
                gx_array *v = make_view(t, g_rank, n, k, mul, n % 2 == 1, &base);
                gx_array *rv = make_view(t, g_rank, n, k + 3, mul, false, &base2);
                snprintf(what, sizeof what, "allreduce view \"%s\"", op);
                OK(gx_allreduce(g_comm, op, v, rv));
                check_host(what, t, rv, n, want_red, &ra);
                gx_array_release(v), gx_array_release(base), gx_array_release(rv), gx_array_release(base2);
                gx_array_release(y);
            }
        }
}

static void test_reduce_scatter(void)
{
    static const long sizes[] = {0, 1, 33};
    static const char *const rops[] = {"+", "max", "*", "|"};
    for (int d = 0; d < NDT; d++)
        for (int o = 0; o < 4; o++)
            for (int z = 0; z < 3; z++) {
                gx_dtype t = all_dtypes[d];
                const char *op = rops[o];
                if (!op_ok(op, t))
                    continue;
                long n = sizes[z];
                int k = 3 * d + o + z;
                bool mul = !strcmp(op, "*");
                gx_array *base;
                gx_array *x = z == 2 ? make_view(t, g_rank, n * g_size, k, mul, true, &base)
                                     : make(t, g_rank, n * g_size, k, mul);
                gx_array *y = make(t, g_rank, n, 0, false);
                red_arg ra = {op, t, k, n * g_rank};
                OK(gx_reduce_scatter(g_comm, op, x, y));
                check_host("reduce_scatter", t, y, n, want_red, &ra);
                gx_array_release(x), gx_array_release(y);
                if (z == 2)
                    gx_array_release(base);
            }
}

/* ------------------------------------------------------------ movement */

typedef struct mv_arg {
    gx_dtype t;
    int k;
    const int64_t *counts; /* allgatherv: element j is rank r's (j - start) */
} mv_arg;

static void want_gather(long i, double *re, double *im, void *arg)
{
    mv_arg *a = arg;
    long r = 0, j = i;
    while (j >= a->counts[r])
        j -= a->counts[r++];
    *re = gen(a->t, (int)r, j, a->k, false);
    *im = is_cx(a->t) ? gen(a->t, (int)r, j, a->k + 5, false) : 0;
    unsigned char tmp[16] = {0};
    put(a->t, tmp, 0, *re, *im);
    *re = get(a->t, tmp, 0, im);
}

static void test_allgather(void)
{
    static const long sizes[] = {0, 1, 33, 1001};
    for (int d = 0; d < NDT; d++)
        for (int z = 0; z < 4; z++) {
            gx_dtype t = all_dtypes[d];
            long n = sizes[z];
            int k = d + z;
            int64_t *counts = malloc(sizeof(int64_t) * (size_t)g_size);
            for (int r = 0; r < g_size; r++)
                counts[r] = n;
            mv_arg ma = {t, k, counts};
            gx_array *base, *x = make_view(t, g_rank, n, k, false, z % 2 == 1, &base);
            gx_array *y = make(t, g_rank, n * g_size, 0, false);
            OK(gx_allgather(g_comm, x, y));
            check_host("allgather", t, y, n * g_size, want_gather, &ma);
            /* send = recv's own block (a view of it) */
            gx_array *y2 = make(t, 99, n * g_size, 0, false), *blk = NULL;
            gx_slice s = {n * g_rank, n * (g_rank + 1), 1};
            OK(gx_array_view(y2, &s, &blk));
            OK(gx_array_copy_into(x, blk));
            OK(gx_allgather(g_comm, blk, y2));
            check_host("allgather from own block", t, y2, n * g_size, want_gather, &ma);
            gx_array_release(blk), gx_array_release(y2);
            gx_array_release(x), gx_array_release(base), gx_array_release(y);
            free(counts);
        }
}

static void test_allgatherv(void)
{
    for (int d = 0; d < NDT; d++)
        for (int v = 0; v < 2; v++) {
            gx_dtype t = all_dtypes[d];
            int k = 2 * d + v;
            int64_t *counts = malloc(sizeof(int64_t) * (size_t)g_size), total = 0;
            for (int r = 0; r < g_size; r++) {
                counts[r] = v == 0 ? (r == 1 ? 0 : 3 * r + 1) : (r % 2 ? 1000 + r : 0);
                total += counts[r];
            }
            mv_arg ma = {t, k, counts};
            gx_array *base, *x = make_view(t, g_rank, counts[g_rank], k, false, v == 1, &base);
            gx_array *y = make(t, g_rank, total, 0, false);
            OK(gx_allgatherv(g_comm, x, y, counts));
            check_host("allgatherv", t, y, total, want_gather, &ma);
            gx_array_release(x), gx_array_release(base), gx_array_release(y);
            free(counts);
        }
}

static void want_bcast(long i, double *re, double *im, void *arg)
{
    mv_arg *a = arg;
    int root = (int)(intptr_t)a->counts;
    *re = gen(a->t, root, i, a->k, false);
    *im = is_cx(a->t) ? gen(a->t, root, i, a->k + 5, false) : 0;
    unsigned char tmp[16] = {0};
    put(a->t, tmp, 0, *re, *im);
    *re = get(a->t, tmp, 0, im);
}

static void test_broadcast(void)
{
    static const long sizes[] = {0, 1, 33, 1001};
    for (int d = 0; d < NDT; d++)
        for (int z = 0; z < 4; z++)
            for (int root = 0; root < g_size; root++) {
                gx_dtype t = all_dtypes[d];
                long n = sizes[z];
                int k = d + z + root;
                mv_arg ma = {t, k, (const int64_t *)(intptr_t)root};
                if (z == 2) { /* a strided view */
                    gx_array *base, *v = make_view(t, g_rank, n, k, false, true, &base);
                    OK(gx_broadcast(g_comm, root, v));
                    check_host("broadcast view", t, v, n, want_bcast, &ma);
                    gx_array_release(v), gx_array_release(base);
                } else {
                    gx_array *a = make(t, g_rank, n, k, false);
                    OK(gx_broadcast(g_comm, root, a));
                    check_host("broadcast", t, a, n, want_bcast, &ma);
                    gx_array_release(a);
                }
            }
}

/* alltoallv: rank r sends (r + 2j + c) % 3 elements to rank j; element m of that
 * block is gen(r, 1000 j + m). */
static int64_t a2a_count(int from, int to, int c) { return c < 0 ? 3 : (from + 2 * to + c) % 3; }

typedef struct a2a_arg {
    gx_dtype t;
    int k, c;
} a2a_arg;

static void want_a2a(long i, double *re, double *im, void *arg)
{
    a2a_arg *a = arg;
    int from = 0;
    long m = i;
    while (m >= a2a_count(from, g_rank, a->c))
        m -= a2a_count(from++, g_rank, a->c);
    long idx = 1000L * g_rank + m;
    *re = gen(a->t, from, idx, a->k, false);
    *im = is_cx(a->t) ? gen(a->t, from, idx, a->k + 5, false) : 0;
    unsigned char tmp[16] = {0};
    put(a->t, tmp, 0, *re, *im);
    *re = get(a->t, tmp, 0, im);
}

static void test_alltoall(void)
{
    for (int d = 0; d < NDT; d++)
        for (int c = -1; c < 3; c++) { /* -1: gx_alltoall, equal blocks of 3 */
            gx_dtype t = all_dtypes[d];
            int k = d + c + 2;
            size_t es = gx_dtype_size(t);
            int64_t *sc = malloc(sizeof(int64_t) * (size_t)g_size), *rc = malloc(sizeof(int64_t) * (size_t)g_size);
            int64_t st = 0, rt = 0;
            for (int j = 0; j < g_size; j++) {
                sc[j] = a2a_count(g_rank, j, c), rc[j] = a2a_count(j, g_rank, c);
                st += sc[j], rt += rc[j];
            }
            unsigned char *h = malloc(es * (size_t)(st + 1));
            long at = 0;
            for (int j = 0; j < g_size; j++)
                for (long m = 0; m < sc[j]; m++, at++)
                    put(t, h, at, gen(t, g_rank, 1000L * j + m, k, false),
                        is_cx(t) ? gen(t, g_rank, 1000L * j + m, k + 5, false) : 0);
            gx_array *x = NULL, *y = make(t, g_rank, rt, 0, false);
            OK(gx_array_from_host(g_ctx, t, 1, &st, h, &x));
            a2a_arg aa = {t, k, c};
            if (c < 0)
                OK(gx_alltoall(g_comm, x, y));
            else
                OK(gx_alltoallv(g_comm, x, sc, y, rc));
            check_host(c < 0 ? "alltoall" : "alltoallv", t, y, rt, want_a2a, &aa);
            gx_array_release(x), gx_array_release(y);
            free(h), free(sc), free(rc);
        }
}

/* A ring: every rank sends right and receives from the left, in one group (a
 * strided view as the receiver). */
static void test_ring(void)
{
    if (g_size < 2)
        return;
    for (int d = 0; d < NDT; d++) {
        gx_dtype t = all_dtypes[d];
        long n = 1001 + d;
        int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
        gx_array *x = make(t, g_rank, n, d, false), *base, *v = make_view(t, g_rank, n, 0, false, true, &base);
        OK(gx_comm_group_begin(g_comm));
        OK(gx_send(g_comm, right, x));
        OK(gx_recv(g_comm, left, v));
        OK(gx_comm_group_end(g_comm));
        mv_arg ma = {t, d, (const int64_t *)(intptr_t)left};
        check_host("ring send/recv", t, v, n, want_bcast, &ma);
        /* outside a group: rank 0 sends to 1, 1 receives */
        if (g_rank == 0)
            OK(gx_send(g_comm, 1, x));
        if (g_rank == 1) {
            OK(gx_recv(g_comm, 0, v));
            mv_arg m0 = {t, d, (const int64_t *)(intptr_t)0};
            check_host("send/recv", t, v, n, want_bcast, &m0);
        }
        gx_array_release(x), gx_array_release(v), gx_array_release(base);
    }
}

/* ------------------------------------------------------------ bad input */

static void test_bad_input(void)
{
    gx_array *x = make(GX_F32, g_rank, 8, 0, false), *y = make(GX_F32, g_rank, 8, 0, false);
    gx_array *xi = make(GX_I32, g_rank, 8, 0, false), *small = make(GX_F32, g_rank, 3, 0, false);
    gx_array *c = make(GX_C64, g_rank, 8, 0, false), *b = make(GX_BOOL, g_rank, 8, 0, false);
    STATUS(gx_allreduce(NULL, "+", x, y), GX_ERR_INVALID_ARGUMENT, "comm is NULL");
    STATUS(gx_allreduce(g_comm, NULL, x, y), GX_ERR_INVALID_ARGUMENT, "op is NULL");
    STATUS(gx_allreduce(g_comm, "avg", x, y), GX_ERR_INVALID_ARGUMENT, "\"avg\"");
    STATUS(gx_allreduce(g_comm, "+", NULL, y), GX_ERR_INVALID_ARGUMENT, "send");
    STATUS(gx_allreduce(g_comm, "+", x, NULL), GX_ERR_INVALID_ARGUMENT, "recv");
    STATUS(gx_allreduce(g_comm, "+", x, xi), GX_ERR_DTYPE, "f32");
    STATUS(gx_allreduce(g_comm, "+", x, small), GX_ERR_SHAPE, "(3,)");
    STATUS(gx_allreduce(g_comm, "max", c, c), GX_ERR_DTYPE, "complex");
    STATUS(gx_allreduce(g_comm, "+", b, b), GX_ERR_DTYPE, "bool");
    STATUS(gx_allreduce(g_comm, "&", x, y), GX_ERR_DTYPE, "bitwise");
    STATUS(gx_reduce_scatter(g_comm, "+", x, x), GX_ERR_INVALID_ARGUMENT, "one array");
    STATUS(gx_allgather(g_comm, x, y), g_size == 1 ? GX_OK : GX_ERR_SHAPE, g_size == 1 ? "" : "size x send");
    STATUS(gx_broadcast(g_comm, g_size, x), GX_ERR_INVALID_ARGUMENT, "root");
    STATUS(gx_broadcast(g_comm, -1, x), GX_ERR_INVALID_ARGUMENT, "root -1");
    STATUS(gx_send(g_comm, g_rank, x), GX_ERR_INVALID_ARGUMENT, "this rank itself");
    STATUS(gx_recv(g_comm, g_size + 3, x), GX_ERR_INVALID_ARGUMENT, "peer");
    STATUS(gx_allgatherv(g_comm, x, y, NULL), GX_ERR_INVALID_ARGUMENT, "counts is NULL");
    int64_t *neg = calloc((size_t)g_size, sizeof(int64_t));
    neg[g_size - 1] = -1;
    STATUS(gx_alltoallv(g_comm, x, neg, y, neg), GX_ERR_INVALID_ARGUMENT, "negative");
    free(neg);
    STATUS(gx_alltoall(g_comm, x, x), GX_ERR_INVALID_ARGUMENT, "one array");
    STATUS(gx_comm_group_end(g_comm), GX_ERR_INVALID_ARGUMENT, "no group");
    gx_comm_opts bad = {.timeout_s = -1};
    gx_ctx *c2 = NULL;
    gx_comm *cm2 = NULL;
    STATUS(gx_comm_world(GX_BACKEND_CPU, &bad, &c2, &cm2), GX_ERR_INVALID_ARGUMENT, "timeout_s");
    gx_comm_opts res = {.reserved = {1}};
    STATUS(gx_comm_world(GX_BACKEND_CPU, &res, &c2, &cm2), GX_ERR_INVALID_ARGUMENT, "reserved");
    /* an array of another context */
    gx_ctx *other = NULL;
    OK(gx_ctx_create(&other, GX_BACKEND_CPU));
    gx_array *o = NULL;
    int64_t sh = 8;
    OK(gx_array_zeros(other, GX_F32, 1, &sh, &o));
    STATUS(gx_allreduce(g_comm, "+", o, y), GX_ERR_INVALID_ARGUMENT, "another context");
    STATUS(gx_broadcast(g_comm, 0, o), GX_ERR_INVALID_ARGUMENT, "another context");
    gx_array_release(o);
    gx_ctx_destroy(other);
    /* after all those refusals the communicator still works */
    red_arg ra = {"+", GX_F32, 0, 0};
    OK(gx_allreduce(g_comm, "+", x, y));
    check_host("allreduce after refusals", GX_F32, y, 8, want_red, &ra);
    gx_array_release(x), gx_array_release(y), gx_array_release(xi), gx_array_release(small);
    gx_array_release(c), gx_array_release(b);
}

static void test_info(void)
{
    int r = -1, s = -1;
    OK(gx_comm_rank(g_comm, &r));
    OK(gx_comm_size(g_comm, &s));
    if (r != g_rank || s != g_size)
        FAIL("rank/size %d/%d, MPI says %d/%d", r, s, g_rank, g_size);
    gx_comm_desc d;
    OK(gx_comm_describe(g_comm, &d));
    if (!strstr(d.transport, d.backend == GX_BACKEND_CUDA ? "NCCL" : "MPI"))
        FAIL("transport \"%s\" does not name %s", d.transport, d.backend == GX_BACKEND_CUDA ? "NCCL" : "MPI");
    char buf[4096];
    size_t need = 0;
    OK(gx_comm_info_text(g_comm, buf, sizeof buf, &need));
    if (g_rank == 0) {
        char want[32];
        snprintf(want, sizeof want, "rank %d/%d", g_size - 1, g_size);
        if (!strstr(buf, want) || !strstr(buf, "transport"))
            FAIL("info text lacks \"%s\": %s", want, buf);
        printf("%s", buf);
    }
}

/* ------------------------------------------------------------ main */

static int run_timeout(void)
{
    if (g_size < 2) {
        printf("timeout test passed (skipped: it needs 2 ranks)\n");
        return 0;
    }
    gx_array *x = make(GX_F32, g_rank, 100, 0, false), *y = make(GX_F32, g_rank, 100, 0, false);
    if (g_rank == g_size - 1) { /* the failing rank: never joins */
        sleep(60);
        return 0;
    }
    double t0 = MPI_Wtime();
    gx_status s = gx_allreduce(g_comm, "+", x, y);
    if (s == GX_OK) /* NCCL: queued; the wait is what times out */
        s = gx_comm_sync(g_comm);
    double dt = MPI_Wtime() - t0;
    if (s != GX_ERR_TIMEOUT)
        FAIL("allreduce with a missing rank -> %s, want GX_ERR_TIMEOUT (%s)", gx_status_string(s), gx_last_error());
    else if ((!strstr(gx_last_error(), "gx_allreduce") && !strstr(gx_last_error(), "gx_comm_sync")) ||
             !strstr(gx_last_error(), "GX_COMM_TIMEOUT") || !strstr(gx_last_error(), "2 s"))
        FAIL("timeout message: %s", gx_last_error());
    if (dt < 1.5 || dt > 15)
        FAIL("the timeout came after %.2f s; the timeout is 2 s", dt);
    t0 = MPI_Wtime();
    s = gx_broadcast(g_comm, 0, x);
    if (s != GX_ERR_TIMEOUT || MPI_Wtime() - t0 > 0.5 || !strstr(gx_last_error(), "broken"))
        FAIL("a broken communicator -> %s after %.2f s: %s", gx_status_string(s), MPI_Wtime() - t0, gx_last_error());
    if (g_fail == 0)
        printf("rank %d: timeout test passed after %.2f s: %s\n", g_rank, dt, gx_last_error());
    fflush(stdout);
    gx_comm_destroy(g_comm);
    if (g_rank == 0) {
        sleep(1); /* the other ranks print first */
        MPI_Abort(MPI_COMM_WORLD, g_fail ? 1 : 0);
    }
    sleep(30);
    return g_fail != 0;
}

/* `bench`: all-reduce "+" of f32 over sizes 2^20 .. 2^max_exp bytes; rank 0 prints
 * one line per size with the algorithm and bus bandwidth (nccl-tests' definition:
 * bus = alg * 2 (n - 1) / n), the median of `reps` timed runs after warm-up. */
static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int run_bench(int max_exp)
{
    if (g_rank == 0)
        printf("# allreduce f32 \"+\" over %d ranks (%s)\n# bytes  time_us  algbw_GBps  busbw_GBps\n", g_size,
               g_nccl ? "NCCL" : "MPI");
    enum { reps = 20 };
    for (int e = 20; e <= max_exp; e += 2) {
        int64_t n = ((int64_t)1 << e) / 4;
        gx_array *x = NULL;
        if (gx_array_empty(g_ctx, GX_F32, 1, &n, &x) != GX_OK || gx_array_fill_f64(x, 1) != GX_OK) {
            FAIL("bench: %s", gx_last_error());
            return 1;
        }
        double t[reps];
        for (int i = -3; i < reps; i++) {
            gx_sync(g_ctx);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (gx_allreduce(g_comm, "+", x, x) != GX_OK || gx_comm_sync(g_comm) != GX_OK) {
                FAIL("bench: %s", gx_last_error());
                return 1;
            }
            double dt = MPI_Wtime() - t0, mx = 0;
            MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); /* the slowest rank's time */
            if (i >= 0)
                t[i] = mx;
        }
        qsort(t, reps, sizeof t[0], cmp_d);
        double med = t[reps / 2], bytes = (double)n * 4, alg = bytes / med / 1e9;
        if (g_rank == 0)
            printf("%10.0f %10.1f %10.2f %10.2f\n", bytes, med * 1e6, alg, alg * 2.0 * (g_size - 1) / g_size);
        gx_array_release(x);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    gx_comm_opts o = {.timeout_s = strcmp(mode, "timeout") == 0 ? 2.0 : 120.0};
    /* GX_BACKEND picks the backend: cpu (MPI) here, cuda (NCCL) on GPU machines. */
    gx_status s = gx_comm_world(GX_BACKEND_AUTO, &o, &g_ctx, &g_comm);
    if (s != GX_OK) {
        fprintf(stderr, "FAILED: gx_comm_world: %s: %s\n", gx_status_string(s), gx_last_error());
        return 1;
    }
    gx_comm_rank(g_comm, &g_rank);
    gx_comm_size(g_comm, &g_size);
    gx_comm_desc d;
    gx_comm_describe(g_comm, &d);
    g_nccl = strncmp(d.transport, "NCCL", 4) == 0;
    if (!strcmp(mode, "timeout"))
        return run_timeout();
    if (!strcmp(mode, "bench")) {
        int rc = run_bench(argc > 2 ? atoi(argv[2]) : 28);
        gx_comm_destroy(g_comm);
        gx_ctx_destroy(g_ctx);
        return rc;
    }
    test_info();
    test_allreduce();
    test_reduce_scatter();
    test_allgather();
    test_allgatherv();
    test_broadcast();
    test_alltoall();
    test_ring();
    test_bad_input();
    /* every rank's count, summed */
    int64_t sh = 1, mine = g_fail, total = -1;
    gx_array *f = NULL, *t = NULL;
    if (gx_array_from_host(g_ctx, GX_I64, 1, &sh, &mine, &f) == GX_OK && gx_array_empty(g_ctx, GX_I64, 1, &sh, &t) == GX_OK &&
        gx_allreduce(g_comm, "+", f, t) == GX_OK)
        gx_array_to_host(t, &total, sizeof total);
    gx_array_release(f), gx_array_release(t);
    if (g_rank == 0 && total == 0)
        printf("comm mpi tests: all passed on %d ranks\n", g_size);
    else if (g_rank == 0)
        printf("comm mpi tests: FAILED (%lld failures) on %d ranks\n", (long long)total, g_size);
    gx_comm_destroy(g_comm);
    gx_ctx_destroy(g_ctx);
    return total != 0;
}
