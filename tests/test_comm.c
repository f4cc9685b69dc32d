/* test_comm.c -- gx/comm.h in one process: communicators of size 1 (gx_comm_world
 * outside mpirun, gx_comm_from_ctxs with one context: NCCL on CUDA), where every
 * collective must hand back this rank's own data, on every dtype, views included;
 * the options, groups and bad input.  Several ranks: tests/comm_mpi_main.c under
 * mpirun (ctest mpi.comm.*). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* setenv */
#endif
#include "gx_test.h"

static const gx_dtype comm_dtypes[] = {GX_BOOL, GX_I8,  GX_I16, GX_I32, GX_I64, GX_U8,  GX_U16, GX_U32,
                                       GX_U64,  GX_F16, GX_BF16, GX_F32, GX_F64, GX_C64, GX_C128};
#define COMM_NDT ((int)(sizeof comm_dtypes / sizeof comm_dtypes[0]))

/* n elements of dtype t: byte pattern i*7+salt (bool: 0/1), valid in every dtype
 * (half and float patterns are finite numbers: the top bits stay small). */
static void comm_fill(gx_dtype t, void *h, int64_t n, int salt)
{
    size_t es = gx_dtype_size(t);
    unsigned char *b = h;
    for (int64_t i = 0; i < n; i++)
        for (size_t j = 0; j < es; j++)
            b[(size_t)i * es + j] = t == GX_BOOL ? (unsigned char)((i + salt) % 2) : j + 1 == es ? 0x3c : (unsigned char)(i * 7 + salt + (int64_t)j);
}

static bool comm_is_nccl(gx_comm *c)
{
    gx_comm_desc d;
    return gx_comm_describe(c, &d) == GX_OK && strncmp(d.transport, "NCCL", 4) == 0;
}

/* Whether op reduces t on this communicator (gx/comm.h's rules; NCCL's on CUDA). */
static bool comm_reduces(gx_comm *c, const char *op, gx_dtype t)
{
    bool cx = t == GX_C64 || t == GX_C128, fl = t == GX_F16 || t == GX_BF16 || t == GX_F32 || t == GX_F64;
    bool arith = !strcmp(op, "+") || !strcmp(op, "*"), order = !strcmp(op, "max") || !strcmp(op, "min");
    if (comm_is_nccl(c)) {
        if (t == GX_BOOL)
            return !arith && strcmp(op, "^") != 0;
        return !(t == GX_I16 || t == GX_U16 || cx) && (arith || order);
    }
    if (cx)
        return arith;
    if (fl)
        return arith || order;
    bool logical = !strcmp(op, "&&") || !strcmp(op, "||");
    return t == GX_BOOL ? !arith : !logical;
}

/* a holds exactly the bytes of h (n elements). */
static void comm_expect(gx_comm *c, const char *what, const gx_array *a, const void *h, int64_t n, gx_dtype t)
{
    GXT_OK(gx_comm_sync(c));
    size_t bytes = (size_t)n * gx_dtype_size(t);
    unsigned char *got = malloc(bytes + 1);
    GXT_OK(gx_array_to_host(a, got, bytes));
    if (memcmp(got, h, bytes) != 0)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s on %s (%lld elements): the data changed", what, gx_dtype_name(t),
                    (long long)n);
    free(got);
}

/* A view of n elements over every other element of a fresh 2n array, reversed. */
static gx_array *comm_view(gx_ctx *ctx, gx_dtype t, const void *h, int64_t n, gx_array **base)
{
    size_t es = gx_dtype_size(t);
    int64_t m = 2 * n + 1;
    unsigned char *b = calloc((size_t)m, es);
    for (int64_t i = 0; i < n; i++)
        memcpy(b + (size_t)(2 * (n - 1 - i)) * es, (const unsigned char *)h + (size_t)i * es, es);
    gx_array *v = NULL;
    *base = NULL;
    if (gx_array_from_host(ctx, t, 1, &m, b, base) == GX_OK) {
        gx_slice s = n ? (gx_slice){2 * n - 2, -m - 1, -2} : (gx_slice){0, 0, 1};
        gx_array_view(*base, &s, &v);
    }
    free(b);
    return v;
}

/* Every collective on a communicator of size 1 gives back this rank's data. */
static void comm_size1_all(gx_comm *c)
{
    gx_ctx *ctx;
    GXT_OK(gx_comm_ctx(c, &ctx));
    static const int64_t sizes[] = {0, 1, 31, 32, 33, 1001};
    static const char *const ops[] = {"+", "*", "max", "min", "&", "|", "^", "&&", "||"};
    for (int d = 0; d < COMM_NDT; d++)
        for (int z = 0; z < 6; z++) {
            gx_dtype t = comm_dtypes[d];
            int64_t n = sizes[z];
            unsigned char *h = malloc((size_t)(n + 1) * gx_dtype_size(t));
            comm_fill(t, h, n, d + z);
            gx_array *x = NULL, *y = NULL, *base = NULL, *v;
            GXT_OK(gx_array_from_host(ctx, t, 1, &n, h, &x));
            GXT_OK(gx_array_zeros(ctx, t, 1, &n, &y));
            for (int o = 0; o < 9; o++) {
                if (!comm_reduces(c, ops[o], t)) {
                    GXT_STATUS(gx_allreduce(c, ops[o], x, y), GX_ERR_DTYPE);
                    continue;
                }
                GXT_OK(gx_allreduce(c, ops[o], x, y));
                comm_expect(c, ops[o], y, h, n, t);
                GXT_OK(gx_allreduce(c, ops[o], y, y)); /* in place */
                comm_expect(c, "in place", y, h, n, t);
                GXT_OK(gx_reduce_scatter(c, ops[o], x, y));
                comm_expect(c, "reduce_scatter", y, h, n, t);
            }
            GXT_OK(gx_array_fill_f64(y, 0));
            GXT_OK(gx_allgather(c, x, y));
            comm_expect(c, "allgather", y, h, n, t);
            GXT_OK(gx_array_fill_f64(y, 0));
            GXT_OK(gx_allgatherv(c, x, y, &n));
            comm_expect(c, "allgatherv", y, h, n, t);
            GXT_OK(gx_array_fill_f64(y, 0));
            GXT_OK(gx_alltoall(c, x, y));
            comm_expect(c, "alltoall", y, h, n, t);
            GXT_OK(gx_array_fill_f64(y, 0));
            GXT_OK(gx_alltoallv(c, x, &n, y, &n));
            comm_expect(c, "alltoallv", y, h, n, t);
            GXT_OK(gx_broadcast(c, 0, x));
            comm_expect(c, "broadcast", x, h, n, t);
            /* views: a reversed strided send, a strided recv */
            v = comm_view(ctx, t, h, n, &base);
            GXT_CHECK(v != NULL);
            GXT_OK(gx_array_fill_f64(y, 0));
            GXT_OK(gx_allgather(c, v, y));
            comm_expect(c, "allgather from a view", y, h, n, t);
            GXT_OK(gx_broadcast(c, 0, v));
            comm_expect(c, "broadcast of a view", v, h, n, t);
            if (comm_reduces(c, "max", t)) {
                GXT_OK(gx_array_fill_f64(y, 0));
                GXT_OK(gx_allreduce(c, "max", v, y));
                comm_expect(c, "allreduce from a view", y, h, n, t);
                GXT_OK(gx_allreduce(c, "max", x, v));
                comm_expect(c, "allreduce into a view", v, h, n, t);
            }
            gx_array_release(v), gx_array_release(base);
            gx_array_release(x), gx_array_release(y);
            free(h);
        }
}

GXT_TEST(comm_from_ctxs_size1_every_collective)
{
    gx_ctx *ctx = gxt_ctx();
    gx_comm *c = NULL;
    gx_status s = gx_comm_from_ctxs(1, &ctx, NULL, &c);
    if (s == GX_ERR_UNSUPPORTED) { /* CUDA without libnccl.so.2 */
        GXT_MSG_HAS("NCCL");
        gxt_skip(gx_last_error());
        return;
    }
    GXT_OK(s);
    int r = -1, n = -1;
    GXT_OK(gx_comm_rank(c, &r));
    GXT_OK(gx_comm_size(c, &n));
    GXT_EQ_I64(r, 0);
    GXT_EQ_I64(n, 1);
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(ctx, &k));
    GXT_CHECK(comm_is_nccl(c) == (k == GX_BACKEND_CUDA));
    comm_size1_all(c);
    GXT_OK(gx_comm_destroy(c));
}

GXT_TEST(comm_world_size1_outside_mpirun)
{
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(gxt_ctx(), &k));
    gx_ctx *ctx = NULL;
    gx_comm *c = NULL;
    GXT_OK(gx_comm_world(k, NULL, &ctx, &c));
    int r = -1, n = -1;
    GXT_OK(gx_comm_rank(c, &r));
    GXT_OK(gx_comm_size(c, &n));
    GXT_EQ_I64(r, 0);
    GXT_EQ_I64(n, 1);
    gx_ctx *cc = NULL;
    GXT_OK(gx_comm_ctx(c, &cc));
    GXT_CHECK(cc == ctx);
    gx_comm_desc d;
    GXT_OK(gx_comm_describe(c, &d));
    GXT_EQ_I64(d.size, 1);
    GXT_CHECK(d.backend == k);
    GXT_NEAR(d.timeout_s, 300, 0);
    GXT_CHECK(d.transport[0] != 0);
    char buf[1024];
    size_t need = 0;
    GXT_OK(gx_comm_info_text(c, buf, sizeof buf, &need));
    GXT_CHECK(strstr(buf, "rank 0/1") != NULL);
    GXT_CHECK(need == strlen(buf) + 1);
    GXT_OK(gx_comm_info_text(c, NULL, 0, &need));
    GXT_CHECK(need == strlen(buf) + 1);
    float h[5] = {1, -2, 3.5f, 4, 5};
    int64_t five = 5;
    gx_array *x = NULL, *y = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &five, h, &x));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &five, &y));
    GXT_OK(gx_allreduce(c, "+", x, y));
    GXT_OK(gx_comm_sync(c));
    float got[5];
    GXT_OK(gx_array_to_host(y, got, sizeof got));
    GXT_CHECK(memcmp(got, h, sizeof h) == 0);
    gx_array_release(x), gx_array_release(y);
    GXT_OK(gx_comm_destroy(c));
    GXT_OK(gx_comm_destroy(NULL));
    GXT_OK(gx_ctx_destroy(ctx));
}

GXT_TEST(comm_timeout_option_and_env)
{
    gx_ctx *ctx = gxt_ctx();
    gx_comm *c = NULL;
    gx_comm_opts o = {.timeout_s = 2.5};
    gx_comm_desc d;
    setenv("GX_COMM_TIMEOUT", "7", 1);
    gx_status s = gx_comm_from_ctxs(1, &ctx, &o, &c);
    if (s == GX_ERR_UNSUPPORTED) {
        gxt_skip(gx_last_error());
        return;
    }
    GXT_OK(s);
    GXT_OK(gx_comm_describe(c, &d));
    GXT_NEAR(d.timeout_s, 2.5, 0); /* the option wins over the env */
    GXT_OK(gx_comm_destroy(c));
    GXT_OK(gx_comm_from_ctxs(1, &ctx, NULL, &c));
    GXT_OK(gx_comm_describe(c, &d));
    GXT_NEAR(d.timeout_s, 7, 0);
    GXT_OK(gx_comm_destroy(c));
    setenv("GX_COMM_TIMEOUT", "soon", 1); /* a warning, and the default */
    GXT_OK(gx_comm_from_ctxs(1, &ctx, NULL, &c));
    GXT_OK(gx_comm_describe(c, &d));
    GXT_NEAR(d.timeout_s, 300, 0);
    GXT_OK(gx_comm_destroy(c));
    unsetenv("GX_COMM_TIMEOUT");
    o.timeout_s = -1;
    GXT_STATUS(gx_comm_from_ctxs(1, &ctx, &o, &c), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("timeout_s");
    GXT_CHECK(c == NULL);
    o.timeout_s = NAN;
    GXT_STATUS(gx_comm_from_ctxs(1, &ctx, &o, &c), GX_ERR_INVALID_ARGUMENT);
    gx_comm_opts r = {.reserved = {0, 0, 3, 0}};
    GXT_STATUS(gx_comm_from_ctxs(1, &ctx, &r, &c), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("reserved");
}

GXT_TEST(comm_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    gx_comm *c = NULL, *two[2];
    gx_ctx *ctxs[2] = {ctx, ctx};
    GXT_STATUS(gx_comm_from_ctxs(0, &ctx, NULL, &c), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_comm_from_ctxs(1, NULL, NULL, &c), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_comm_from_ctxs(1, &ctx, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_comm_from_ctxs(2, ctxs, NULL, two), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("same device");
    GXT_STATUS(gx_comm_world(GX_BACKEND_CPU, NULL, NULL, &c), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_comm_from_mpi(ctx, NULL, NULL, &c), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(c == NULL);
    gx_status s = gx_comm_from_ctxs(1, &ctx, NULL, &c);
    if (s == GX_ERR_UNSUPPORTED) {
        gxt_skip(gx_last_error());
        return;
    }
    GXT_OK(s);
    int64_t n8 = 8, n3 = 3;
    gx_array *x = NULL, *y = NULL, *yi = NULL, *y3 = NULL, *o = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n8, &x));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n8, &y));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n8, &yi));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n3, &y3));
    GXT_STATUS(gx_allreduce(NULL, "+", x, y), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_allreduce(c, NULL, x, y), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_allreduce(c, "mean", x, y), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("\"max\"");
    GXT_STATUS(gx_allreduce(c, "+", x, yi), GX_ERR_DTYPE);
    GXT_MSG_HAS("i32");
    GXT_STATUS(gx_allreduce(c, "+", x, y3), GX_ERR_SHAPE);
    GXT_MSG_HAS("(3,)");
    GXT_STATUS(gx_allreduce(c, "|", x, y), GX_ERR_DTYPE);
    GXT_STATUS(gx_reduce_scatter(c, "+", x, x), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_allgather(c, x, y3), GX_ERR_SHAPE);
    GXT_STATUS(gx_allgather(c, x, x), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_allgatherv(c, x, y, NULL), GX_ERR_INVALID_ARGUMENT);
    int64_t neg = -1;
    GXT_STATUS(gx_allgatherv(c, x, y, &neg), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("negative");
    GXT_STATUS(gx_allgatherv(c, x, y, &n3), GX_ERR_SHAPE);
    GXT_STATUS(gx_broadcast(c, 1, x), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("root 1");
    GXT_STATUS(gx_broadcast(c, 0, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_alltoall(c, x, y3), GX_ERR_SHAPE);
    GXT_STATUS(gx_alltoallv(c, x, &n8, y, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_alltoallv(c, x, &n8, y, &n3), GX_ERR_SHAPE);
    GXT_STATUS(gx_send(c, 0, x), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("this rank itself");
    GXT_STATUS(gx_recv(c, 1, x), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_comm_group_end(c), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_comm_rank(c, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_comm_size(NULL, &(int){0}), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_comm_describe(c, NULL), GX_ERR_INVALID_ARGUMENT);
    /* an array of another context */
    gx_ctx *other = NULL;
    GXT_OK(gx_ctx_create(&other, GX_BACKEND_CPU));
    GXT_OK(gx_array_zeros(other, GX_F32, 1, &n8, &o));
    GXT_STATUS(gx_allreduce(c, "+", o, y), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("another context");
    GXT_STATUS(gx_allgather(c, x, o), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(o);
    GXT_OK(gx_ctx_destroy(other));
    /* groups nest; the outer end completes them */
    GXT_OK(gx_comm_group_begin(c));
    GXT_OK(gx_comm_group_begin(c));
    GXT_OK(gx_allreduce(c, "+", x, y));
    GXT_OK(gx_comm_group_end(c));
    GXT_OK(gx_comm_group_end(c));
    GXT_STATUS(gx_comm_group_end(c), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(x), gx_array_release(y), gx_array_release(yi), gx_array_release(y3);
    GXT_OK(gx_comm_destroy(c));
}

/* One device per rank: a context twice is refused (on the CPU, whose only device is
 * 0, any two contexts). */
GXT_TEST(comm_from_ctxs_cpu_needs_mpirun)
{
    gx_ctx *a = NULL;
    GXT_OK(gx_ctx_create(&a, GX_BACKEND_CPU));
    gx_comm *cs[2] = {(gx_comm *)1, (gx_comm *)1};
    gx_ctx *ctxs[2] = {a, a};
    GXT_STATUS(gx_comm_from_ctxs(2, ctxs, NULL, cs), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(cs[0] == NULL && cs[1] == NULL);
    GXT_OK(gx_ctx_destroy(a));
}

/* A graph recording does not take collectives (they would run at once). */
GXT_TEST(comm_refused_while_recording)
{
    gx_ctx *ctx = gxt_ctx();
    gx_comm *c = NULL;
    gx_status s = gx_comm_from_ctxs(1, &ctx, NULL, &c);
    if (s == GX_ERR_UNSUPPORTED) {
        gxt_skip(gx_last_error());
        return;
    }
    GXT_OK(s);
    int64_t n = 4;
    gx_array *x = NULL, *y = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &x));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &y));
    GXT_OK(gx_graph_begin(ctx));
    GXT_STATUS(gx_allreduce(c, "+", x, y), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("gx_allreduce");
    gx_graph *g = NULL;
    gx_graph_end(ctx, &g);
    gx_graph_destroy(g);
    gx_array_release(x), gx_array_release(y);
    GXT_OK(gx_comm_destroy(c));
}

/* One process, every GPU (2 or more): ranks 0..n-1 driven by this thread, their
 * collectives in one group; every dtype NCCL carries, against the host's sums. */
GXT_TEST(comm_from_ctxs_every_gpu)
{
    gx_ctx *c0 = gxt_cuda_ctx();
    if (!c0)
        return;
    int ndev = 0;
    GXT_OK(gx_cuda_device_count(&ndev));
    if (ndev < 2) {
        gxt_skip("needs 2 or more GPUs");
        return;
    }
    int n = ndev > 8 ? 8 : ndev;
    gx_ctx *ctxs[8] = {0};
    gx_comm *cs[8] = {0};
    for (int i = 0; i < n; i++)
        GXT_OK(gx_ctx_create_on(&ctxs[i], GX_BACKEND_CUDA, i));
    gx_status s = gx_comm_from_ctxs(n, ctxs, NULL, cs);
    if (s == GX_ERR_UNSUPPORTED) {
        gxt_skip(gx_last_error());
        for (int i = 0; i < n; i++)
            gx_ctx_destroy(ctxs[i]);
        return;
    }
    GXT_OK(s);
    static const gx_dtype dts[] = {GX_I8, GX_U8, GX_I32, GX_U32, GX_I64, GX_U64, GX_F16, GX_BF16, GX_F32, GX_F64};
    int64_t len = 1001;
    for (int d = 0; d < 10; d++) {
        gx_dtype t = dts[d];
        gx_array *x[8], *y[8], *g[8];
        for (int r = 0; r < n; r++) {
            GXT_OK(gx_array_empty(ctxs[r], t, 1, &len, &x[r]));
            GXT_OK(gx_array_fill_f64(x[r], r + 1));
            GXT_OK(gx_array_zeros(ctxs[r], t, 1, &len, &y[r]));
            int64_t gl = len * n;
            GXT_OK(gx_array_zeros(ctxs[r], t, 1, &gl, &g[r]));
        }
        GXT_OK(gx_comm_group_begin(cs[0]));
        for (int r = 0; r < n; r++) {
            GXT_OK(gx_allreduce(cs[r], "+", x[r], y[r]));
            GXT_OK(gx_allgather(cs[r], x[r], g[r]));
        }
        GXT_OK(gx_comm_group_end(cs[0]));
        double want = n * (n + 1) / 2.0;
        for (int r = 0; r < n; r++) {
            GXT_OK(gx_comm_sync(cs[r]));
            gx_scalar sy, sg;
            GXT_OK(gx_reduce(ctxs[r], "+", y[r], NULL, &sy));
            GXT_OK(gx_reduce(ctxs[r], "+", g[r], NULL, &sg));
            double vy = t == GX_F16 || t == GX_BF16 || t == GX_F32 || t == GX_F64 ? sy.v.f : (double)sy.v.i;
            double vg = t == GX_F16 || t == GX_BF16 || t == GX_F32 || t == GX_F64 ? sg.v.f : (double)sg.v.i;
            if (t == GX_U8 || t == GX_U32 || t == GX_U64)
                vy = (double)sy.v.u, vg = (double)sg.v.u;
            double tol = t == GX_F16 || t == GX_BF16 ? 1e-2 : 0; /* the sums of halves round */
            GXT_NEAR(vy, want * len, tol);
            GXT_NEAR(vg, want * len, tol);
        }
        for (int r = 0; r < n; r++)
            gx_array_release(x[r]), gx_array_release(y[r]), gx_array_release(g[r]);
    }
    for (int i = 0; i < n; i++)
        GXT_OK(gx_comm_destroy(cs[i]));
    for (int i = 0; i < n; i++)
        gx_ctx_destroy(ctxs[i]);
}
