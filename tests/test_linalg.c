/* test_linalg.c -- gx_matmul / gx_matmul_into against a host triple loop for every dtype and op,
 * views (transposed: no copy; strided: counted copy), strided batches, lists, and
 * bad input; complex arrays (fill, convert, copy). */
#include "gx_test.h"

typedef struct zd {
    double re, im;
} zd;

/* Whether this build has a matmul on the backend under test.  A gx built without
 * CBLAS has none on the CPU (an optional feature: the test is then skipped, with the
 * package to install, rather than failed).  Probed through the public call itself. */
static bool matmul_here(void)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t s11[2] = {1, 1};
    gx_array *a = NULL;
    if (gx_array_zeros(ctx, GX_F32, 2, s11, &a) != GX_OK)
        return true; /* let the test itself report the failure */
    gx_status s = gx_matmul_into(a, a, NULL, a);
    if (s == GX_ERR_INVALID_ARGUMENT) { /* aliasing is refused: use three arrays */
        gx_array *b = NULL, *c = NULL;
        gx_array_zeros(ctx, GX_F32, 2, s11, &b);
        gx_array_zeros(ctx, GX_F32, 2, s11, &c);
        s = gx_matmul_into(a, b, NULL, c);
        gx_array_release(b), gx_array_release(c);
    }
    gx_array_release(a);
    if (s == GX_ERR_UNSUPPORTED && strstr(gx_last_error(), "without CBLAS")) {
        gxt_skip("this gx was built without CBLAS, so the CPU backend has no matmul: install libopenblas-dev "
                 "(make installs it when it can) and rebuild");
        return false;
    }
    return true;
}

static zd zmul(zd a, zd b) { return (zd){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }

/* Element (i, j) of op(X) for a row-major (rows x cols) matrix of complex doubles. */
static zd op_at(const zd *x, int64_t cols, gx_op op, int64_t i, int64_t j)
{
    zd v = op == GX_OP_N ? x[i * cols + j] : x[j * cols + i];
    if (op == GX_OP_C)
        v.im = -v.im;
    return v;
}

static bool is_cplx(gx_dtype t) { return t == GX_C64 || t == GX_C128; }

/* Random host data of dtype t (n elements) and its complex-double copy. */
static void *rand_host(gx_dtype t, int64_t n, zd *z)
{
    size_t esz = gx_dtype_size(t);
    char *h = malloc((size_t)n * esz + 1);
    for (int64_t i = 0; i < n; i++) {
        double re = gxt_rand01() * 2 - 1, im = is_cplx(t) ? gxt_rand01() * 2 - 1 : 0;
        if (t == GX_F32 || t == GX_C64) {
            float f[2] = {(float)re, (float)im};
            memcpy(h + (size_t)i * esz, f, esz);
            z[i] = (zd){f[0], f[1]};
        } else {
            double d[2] = {re, im};
            memcpy(h + (size_t)i * esz, d, esz);
            z[i] = (zd){re, im};
        }
    }
    return h;
}

static zd host_get(gx_dtype t, const void *h, int64_t i)
{
    const char *p = (const char *)h + (size_t)i * gx_dtype_size(t);
    if (t == GX_F32 || t == GX_C64) {
        float f[2] = {0, 0};
        memcpy(f, p, gx_dtype_size(t));
        return (zd){f[0], f[1]};
    }
    double d[2] = {0, 0};
    memcpy(d, p, gx_dtype_size(t));
    return (zd){d[0], d[1]};
}

static void check_gemm(gx_dtype t, int64_t m, int64_t n, int64_t k, gx_op oa, gx_op ob, zd alpha, zd beta)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t as[2] = {oa == GX_OP_N ? m : k, oa == GX_OP_N ? k : m},
            bs[2] = {ob == GX_OP_N ? k : n, ob == GX_OP_N ? n : k};
    int64_t cs[2] = {m, n};
    zd *za = malloc(sizeof(zd) * (size_t)(m * k + 1)), *zb = malloc(sizeof(zd) * (size_t)(k * n + 1));
    zd *zc = malloc(sizeof(zd) * (size_t)(m * n + 1));
    void *ha = rand_host(t, m * k, za), *hb = rand_host(t, k * n, zb), *hc = rand_host(t, m * n, zc);
    gx_array *A = NULL, *B = NULL, *C = NULL;
    GXT_OK(gx_array_from_host(ctx, t, 2, as, ha, &A));
    GXT_OK(gx_array_from_host(ctx, t, 2, bs, hb, &B));
    GXT_OK(gx_array_from_host(ctx, t, 2, cs, hc, &C));
    /* alpha 1 and beta 0 are left at their defaults (a zero gx_scalar); complex values
     * for every dtype (real dtypes take the real part), except a real alpha for real
     * dtypes, so that both kinds of scalar are converted. */
    gx_matmul_opts o = {.op_a = oa, .op_b = ob, .math = GX_MATH_DEFAULT};
    if (alpha.re != 1 || alpha.im != 0)
        o.alpha = is_cplx(t) ? GX_SCALAR_C128(alpha.re, alpha.im) : GX_SCALAR_F64(alpha.re);
    if (beta.re != 0 || beta.im != 0)
        o.beta = GX_SCALAR_C128(beta.re, beta.im);
    GXT_OK(gx_matmul_into(A, B, &o, C));
    GXT_OK(gx_array_to_host(C, hc, (size_t)(m * n) * gx_dtype_size(t)));
    /* Any order of the k products and sums (blocked, FMA) errs by at most
     * gamma_{k+2} (|alpha| sum_p |a_ip||b_pj| + |beta||c_ij|) (Higham, 3.5); doubled for
     * complex products (sqrt(2) gamma_2 each) and the host's own f64 rounding. */
    double u = t == GX_F32 || t == GX_C64 ? 0x1p-24 : 0x1p-53;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            zd s = {0, 0};
            double mag = 0;
            for (int64_t p = 0; p < k; p++) {
                zd a = op_at(za, as[1], oa, i, p), b = op_at(zb, bs[1], ob, p, j), v = zmul(a, b);
                s.re += v.re, s.im += v.im;
                mag += hypot(a.re, a.im) * hypot(b.re, b.im);
            }
            if (!is_cplx(t))
                s.im = 0;
            zd w = zmul(alpha, s), c0 = zmul(beta, zc[i * n + j]);
            w.re += c0.re, w.im += c0.im;
            if (!is_cplx(t))
                w.im = 0;
            double al = is_cplx(t) ? hypot(alpha.re, alpha.im) : fabs(alpha.re); /* real dtypes: real parts */
            double be = is_cplx(t) ? hypot(beta.re, beta.im) : fabs(beta.re);
            double tol = 2 * (double)(k + 2) * u / (1 - (double)(k + 2) * u) *
                         (al * mag + be * hypot(zc[i * n + j].re, zc[i * n + j].im));
            zd g = host_get(t, hc, i * n + j);
            if (fabs(g.re - w.re) > tol || fabs(g.im - w.im) > tol) {
                GXT_FAIL_AT(__FILE__, __LINE__,
                            "%s m=%lld n=%lld k=%lld ops %d,%d (%lld,%lld): %.9g%+.9gi want %.9g%+.9gi (bound %.3g)",
                            gx_dtype_name(t), (long long)m, (long long)n, (long long)k, oa, ob, (long long)i,
                            (long long)j, g.re, g.im, w.re, w.im, tol);
                i = m;
                break;
            }
        }
    gx_array_release(A);
    gx_array_release(B);
    gx_array_release(C);
    free(za), free(zb), free(zc), free(ha), free(hb), free(hc);
}

GXT_TEST(matmul_all_dtypes_and_ops)
{
    if (!matmul_here())
        return;
    const gx_dtype dts[] = {GX_F32, GX_F64, GX_C64, GX_C128};
    const int64_t dims[][3] = {{1, 1, 1}, {33, 17, 5}, {31, 32, 33}, {64, 1, 70}, {5, 7, 0}};
    for (int d = 0; d < 4; d++)
        for (int s = 0; s < 5; s++)
            for (int oa = 0; oa < 3; oa++)
                for (int ob = 0; ob < 3; ob++)
                    check_gemm(dts[d], dims[s][0], dims[s][1], dims[s][2], (gx_op)oa, (gx_op)ob, (zd){1.5, -0.5},
                               (zd){s % 2 ? 0.0 : -2.0, 0.25});
}

GXT_TEST(matmul_large_f32)
{
    if (!matmul_here())
        return;
    check_gemm(GX_F32, 257, 129, 300, GX_OP_N, GX_OP_N, (zd){1, 0}, (zd){0, 0});
    check_gemm(GX_F64, 130, 257, 64, GX_OP_T, GX_OP_N, (zd){1, 0}, (zd){1, 0});
}

/* Transposed views need no copy; a view without a unit stride is copied and counted. */
GXT_TEST(matmul_views)
{
    if (!matmul_here())
        return;
    gx_ctx *ctx = gxt_ctx();
    int64_t s1[2] = {6, 4}, s2[2] = {6, 5};
    double ha[24], hb[30], hc[20];
    for (int i = 0; i < 24; i++)
        ha[i] = i * 0.5 - 3;
    for (int i = 0; i < 30; i++)
        hb[i] = (i % 7) - 2.5;
    gx_array *A = NULL, *B = NULL, *At = NULL, *C = NULL, *Bv = NULL, *C2 = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 2, s1, ha, &A));
    GXT_OK(gx_array_from_host(ctx, GX_F64, 2, s2, hb, &B));
    int perm[2] = {1, 0};
    GXT_OK(gx_array_permute(A, perm, &At)); /* (4, 6), unit row stride */
    int64_t cs[2] = {4, 5};
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, cs, &C));
    uint64_t c0 = gx_vendor_copies();
    GXT_OK(gx_matmul_into(At, B, NULL, C));
    GXT_EQ_I64(gx_vendor_copies(), c0);
    GXT_OK(gx_array_to_host(C, hc, sizeof hc));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++) {
            double s = 0;
            for (int p = 0; p < 6; p++)
                s += ha[p * 4 + i] * hb[p * 5 + j];
            GXT_NEAR(hc[i * 5 + j], s, 1e-12);
        }
    /* Every other column of B: stride 2 in both dimensions' sense -> a counted copy. */
    gx_slice sl[2] = {{0, 6, 1}, {0, 5, 2}};
    GXT_OK(gx_array_view(B, sl, &Bv)); /* (6, 3) with column stride 2 */
    int64_t cs2[2] = {4, 3};
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, cs2, &C2));
    c0 = gx_vendor_copies();
    GXT_OK(gx_matmul_into(At, Bv, NULL, C2));
    GXT_CHECK(gx_vendor_copies() > c0);
    double h2[12];
    GXT_OK(gx_array_to_host(C2, h2, sizeof h2));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int p = 0; p < 6; p++)
                s += ha[p * 4 + i] * hb[p * 5 + 2 * j];
            GXT_NEAR(h2[i * 3 + j], s, 1e-12);
        }
    /* Writing into a strided view of C (copied in and out). */
    gx_array *Cbig = NULL, *Cv = NULL;
    int64_t cb[2] = {4, 10};
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, cb, &Cbig));
    gx_slice sc[2] = {{0, 4, 1}, {0, 10, 2}};
    GXT_OK(gx_array_view(Cbig, sc, &Cv));
    GXT_OK(gx_matmul_into(At, B, NULL, Cv));
    double hbig[40];
    GXT_OK(gx_array_to_host(Cbig, hbig, sizeof hbig));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 10; j++)
            GXT_NEAR(hbig[i * 10 + j], j % 2 ? 0.0 : hc[i * 5 + j / 2], 1e-12);
    gx_array_release(A), gx_array_release(B), gx_array_release(At), gx_array_release(C);
    gx_array_release(Bv), gx_array_release(C2), gx_array_release(Cv), gx_array_release(Cbig);
}

GXT_TEST(matmul_strided_batch_and_lists)
{
    if (!matmul_here())
        return;
    gx_ctx *ctx = gxt_ctx();
    int64_t as[3] = {3, 4, 5}, bs[2] = {5, 2};
    float ha[60], hb[10], hc[24];
    for (int i = 0; i < 60; i++)
        ha[i] = (float)((i * 7) % 11) - 5;
    for (int i = 0; i < 10; i++)
        hb[i] = (float)i - 4.5f;
    gx_array *A = NULL, *B = NULL, *C = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 3, as, ha, &A));
    GXT_OK(gx_array_from_host(ctx, GX_F32, 2, bs, hb, &B));
    GXT_OK(gx_matmul(A, B, NULL, &C));
    gx_array_desc d;
    GXT_OK(gx_array_describe(C, &d));
    GXT_CHECK(d.ndim == 3 && d.shape[0] == 3 && d.shape[1] == 4 && d.shape[2] == 2);
    GXT_OK(gx_array_to_host(C, hc, sizeof hc));
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 2; j++) {
                double s = 0;
                for (int p = 0; p < 5; p++)
                    s += (double)ha[b * 20 + i * 5 + p] * hb[p * 2 + j];
                GXT_NEAR(hc[b * 8 + i * 2 + j], s, 0); /* small integers and halves: exact */
            }
    /* The same through a list of 2-D products. */
    gx_array *a2[3] = {0}, *c2[3] = {0};
    const gx_array *ca[3], *cb[3];
    for (int b = 0; b < 3; b++) {
        int64_t s2[2] = {4, 5}, s3[2] = {4, 2};
        GXT_OK(gx_array_from_host(ctx, GX_F32, 2, s2, ha + b * 20, &a2[b]));
        GXT_OK(gx_array_zeros(ctx, GX_F32, 2, s3, &c2[b]));
        ca[b] = a2[b], cb[b] = B;
    }
    GXT_OK(gx_matmul_batched_into(3, ca, cb, NULL, c2));
    for (int b = 0; b < 3; b++) {
        float h[8];
        GXT_OK(gx_array_to_host(c2[b], h, sizeof h));
        GXT_CHECK(memcmp(h, hc + b * 8, sizeof h) == 0);
        gx_array_release(a2[b]);
        gx_array_release(c2[b]);
    }
    gx_array_release(A), gx_array_release(B), gx_array_release(C);
}

GXT_TEST(matmul_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t s23[2] = {2, 3}, s45[2] = {4, 5}, s25[2] = {2, 5};
    gx_array *A = NULL, *B = NULL, *C = NULL, *I = NULL, *D = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, s23, &A));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, s45, &B));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, s25, &C));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 2, s25, &I));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, s45, &D));
    GXT_STATUS(gx_matmul_into(A, B, NULL, C), GX_ERR_SHAPE);
    GXT_MSG_HAS("(2, 3)");
    GXT_MSG_HAS("(4, 5)");
    GXT_STATUS(gx_matmul_into(A, D, NULL, C), GX_ERR_DTYPE);
    GXT_MSG_HAS("f64");
    GXT_STATUS(gx_matmul_into(A, B, NULL, I), GX_ERR_DTYPE);
    GXT_STATUS(gx_matmul_into(A, A, NULL, A), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_matmul_into(A, NULL, NULL, C), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_matmul_into(A, B, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    gx_matmul_opts o = {.op_a = (gx_op)7};
    GXT_STATUS(gx_matmul_into(A, B, &o, C), GX_ERR_INVALID_ARGUMENT);
    /* the allocating form: the same checks, *out left NULL */
    gx_array *N = NULL;
    GXT_STATUS(gx_matmul(A, B, NULL, &N), GX_ERR_SHAPE);
    GXT_STATUS(gx_matmul(A, D, NULL, &N), GX_ERR_DTYPE);
    GXT_STATUS(gx_matmul(A, B, &o, &N), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(N == NULL);
    GXT_STATUS(gx_matmul(A, B, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    gx_matmul_opts r = {.reserved = {1}};
    GXT_STATUS(gx_matmul_into(A, B, &r, C), GX_ERR_INVALID_ARGUMENT);
    /* m = 2^31 (empty matrices, so nothing is allocated): above the BLAS int32 limit. */
    int64_t big_a[2] = {(int64_t)1 << 31, 0}, big_b[2] = {0, 0}, big_c[2] = {(int64_t)1 << 31, 0};
    gx_array *BA = NULL, *BB = NULL, *BC = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F32, 2, big_a, &BA));
    GXT_OK(gx_array_empty(ctx, GX_F32, 2, big_b, &BB));
    GXT_OK(gx_array_empty(ctx, GX_F32, 2, big_c, &BC));
    GXT_STATUS(gx_matmul_into(BA, BB, NULL, BC), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("2147483647");
    gx_array_release(BA), gx_array_release(BB), gx_array_release(BC);
    gx_array_release(A), gx_array_release(B), gx_array_release(C), gx_array_release(I), gx_array_release(D);
}

GXT_TEST(complex_arrays_fill_convert_copy)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 37;
    gx_array *z = NULL, *r = NULL, *zc = NULL, *zz = NULL;
    GXT_OK(gx_array_empty(ctx, GX_C64, 1, &n, &z));
    float v[2] = {1.5f, -2.0f};
    GXT_OK(gx_array_fill(z, v));
    float h[74];
    GXT_OK(gx_array_to_host(z, h, sizeof h));
    for (int i = 0; i < 37; i++)
        GXT_CHECK(h[2 * i] == 1.5f && h[2 * i + 1] == -2.0f);
    GXT_OK(gx_array_fill_f64(z, 3.0));
    GXT_OK(gx_array_to_host(z, h, sizeof h));
    GXT_CHECK(h[0] == 3.0f && h[1] == 0.0f && h[72] == 3.0f && h[73] == 0.0f);
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 1, 1, &r));
    GXT_OK(gx_array_clone(r, GX_C128, &zc));
    double hd[74];
    GXT_OK(gx_array_to_host(zc, hd, sizeof hd));
    GXT_CHECK(hd[0] == 1 && hd[1] == 0 && hd[72] == 37 && hd[73] == 0);
    GXT_OK(gx_array_clone(zc, GX_C64, &zz));
    GXT_OK(gx_array_to_host(zz, h, sizeof h));
    GXT_CHECK(h[10] == 6 && h[11] == 0);
    gx_slice sl = {0, 37, 2};
    gx_array *zv = NULL, *zvc = NULL;
    GXT_OK(gx_array_view(zz, &sl, &zv));
    GXT_OK(gx_array_clone(zv, GX_DTYPE_DEFAULT, &zvc));
    GXT_OK(gx_array_to_host(zvc, h, 19 * 8));
    GXT_CHECK(h[2] == 3 && h[36] == 37);
    gx_array *bad = NULL;
    GXT_STATUS(gx_array_clone(zc, GX_F64, &bad), GX_ERR_DTYPE);
    GXT_STATUS(gx_array_iota(ctx, GX_C64, 4, 0, 1, &bad), GX_ERR_DTYPE);
    gx_array_release(z), gx_array_release(r), gx_array_release(zc), gx_array_release(zz);
    gx_array_release(zv), gx_array_release(zvc);
}

#ifdef GX_HAVE_CUDA
#include "backend/cuda/cuda_priv.h"
#include "ops/ewise.h"

/* The element-wise kernels that complex arrays use on a GPU (fill, conversions,
 * strided copies, the FFT's scaling) compile under NVRTC: generated here through a
 * copy of a CPU context that claims the CUDA target (no GPU needed). */
GXT_TEST(complex_cuda_kernels_compile)
{
    if (!cuda_nvrtc_load()) {
        gxt_skip("NVRTC not loadable");
        return;
    }
    gx_ctx *ctx = gxt_ctx();
    gx_ctx fake;
    memcpy(&fake, ctx, sizeof fake);
    fake.be.iface = &gx__cuda_iface;
    int64_t n = 64, s2[2] = {8, 8};
    gx_array *z64 = NULL, *z128 = NULL, *r32 = NULL, *zv = NULL;
    GXT_OK(gx_array_empty(ctx, GX_C64, 1, &n, &z64));
    GXT_OK(gx_array_empty(ctx, GX_C128, 2, s2, &z128));
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &r32));
    gx_slice sl[2] = {{0, 8, 2}, {0, 8, 3}};
    GXT_OK(gx_array_view(z128, sl, &zv));
    struct {
        gx_array *out, *in;
        const char *expr;
        int nconst;
    } v[] = {
        {z64, NULL, "c32((float)c0, (float)c1)", 2},
        {zv, NULL, "c64(c0, c1)", 2},
        {z64, r32, "c32((float)v0, 0.0f)", 0},
        {zv, NULL, "c64((double)c0, 0.0)", 1},
        {z64, z64, "c32((float)v0.re, (float)v0.im)", 0},
        {r32, r32, "(float)((double)v0 * c0)", 1},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        ew_plan pl;
        gx_array *in[1] = {v[i].in};
        GXT_OK(ew_plan_make(&pl, v[i].out, v[i].in ? 1 : 0, in));
        pl.nconst = v[i].nconst;
        for (int c = 0; c < v[i].nconst; c++)
            pl.cdt[c] = GX_F64;
        gx__sbuf src = {0};
        GXT_OK(ew_source(&fake, &pl, v[i].expr, NULL, &src));
        void *ptx = NULL;
        size_t len = 0;
        char *log = NULL;
        if (cuda_nvrtc_compile(src.p, "complex.cu", 9, 0, 1, &ptx, &len, &log) != GX_OK)
            GXT_FAIL_AT(__FILE__, __LINE__, "case %zu (%s): %s\n%s", i, v[i].expr, gx_last_error(), log ? log : "");
        free(ptx);
        free(log);
        gx__sb_free(&src);
    }
    gx_array_release(zv), gx_array_release(z64), gx_array_release(z128), gx_array_release(r32);
}
#else /* built without CUDA headers: the tests exist and skip */
GXT_TEST(complex_cuda_kernels_compile) { gxt_skip("gx was built without the CUDA headers"); }
#endif

/* ------------------------------------------------------------ complex values and rand() in lambdas */

GXT_TEST(lambda_complex_arithmetic)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 1003;
    double *za = malloc(sizeof(double) * 2 * (size_t)n), *zb = malloc(sizeof(double) * 2 * (size_t)n);
    float *fa = malloc(sizeof(float) * 2 * (size_t)n), *x = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < 2 * n; i++) {
        za[i] = gxt_rand01() * 4 - 2, zb[i] = gxt_rand01() * 4 - 2;
        fa[i] = (float)za[i];
    }
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(gxt_rand01() * 2);
    gx_array *A = NULL, *B = NULL, *F = NULL, *X = NULL, *o1 = NULL, *o2 = NULL, *o3 = NULL, *o4 = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_C128, 1, &n, za, &A));
    GXT_OK(gx_array_from_host(ctx, GX_C128, 1, &n, zb, &B));
    GXT_OK(gx_array_from_host(ctx, GX_C64, 1, &n, fa, &F));
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, x, &X));
    gx_array *ab[2] = {A, B}, *fx[2] = {F, X}, *fa1[1] = {F}, *fb[2] = {F, B};
    GXT_OK(gx_map(ctx, "a, b -> a * b + conj(a) / b - exp(complex(0.0, 1.0) * b)", 2, ab, NULL, &o1));
    GXT_OK(gx_map(ctx, "z, x -> z * x - 2.5f", 2, fx, NULL, &o2)); /* c64 op f32 -> c64 */
    GXT_OK(gx_map(ctx, "z -> abs(z) + arg(z) * re(z) - im(z) + abs2(z)", 1, fa1, NULL, &o3));
    GXT_OK(gx_map(ctx, "z, w -> z == c64(w) ? 1 : (z != z ? 2 : 3)", 2, fb, NULL, &o4));
    gx_array_desc d1, d2, d3, d4;
    GXT_OK(gx_array_describe(o1, &d1));
    GXT_OK(gx_array_describe(o2, &d2));
    GXT_OK(gx_array_describe(o3, &d3));
    GXT_OK(gx_array_describe(o4, &d4));
    GXT_CHECK(d1.dtype == GX_C128 && d2.dtype == GX_C64 && d3.dtype == GX_F32 && d4.dtype == GX_I32);
    double *h1 = malloc(sizeof(double) * 2 * (size_t)n);
    float *h2 = malloc(sizeof(float) * 2 * (size_t)n), *h3 = malloc(sizeof(float) * (size_t)n);
    int32_t *h4 = malloc(sizeof(int32_t) * (size_t)n);
    GXT_OK(gx_array_to_host(o1, h1, sizeof(double) * 2 * (size_t)n));
    GXT_OK(gx_array_to_host(o2, h2, sizeof(float) * 2 * (size_t)n));
    GXT_OK(gx_array_to_host(o3, h3, sizeof(float) * (size_t)n));
    GXT_OK(gx_array_to_host(o4, h4, sizeof(int32_t) * (size_t)n));
    for (int64_t i = 0; i < n; i++) {
        double ar = za[2 * i], ai = za[2 * i + 1], br = zb[2 * i], bi = zb[2 * i + 1];
        double d = br * br + bi * bi;
        double qr = (ar * br - ai * bi) / d, qi = (-ai * br - ar * bi) / d; /* conj(a) / b */
        double er = exp(-bi) * cos(br), ei = exp(-bi) * sin(br);            /* exp(i b) */
        double wr = ar * br - ai * bi + qr - er, wi = ar * bi + ai * br + qi - ei;
        GXT_NEAR(h1[2 * i], wr, 1e-12);
        GXT_NEAR(h1[2 * i + 1], wi, 1e-12);
        GXT_NEAR(h2[2 * i], fa[2 * i] * x[i] - 2.5, 1e-5);
        GXT_NEAR(h2[2 * i + 1], fa[2 * i + 1] * x[i], 1e-5);
        double fr = fa[2 * i], fi = fa[2 * i + 1];
        GXT_NEAR(h3[i], hypot(fr, fi) + atan2(fi, fr) * fr - fi + fr * fr + fi * fi, 1e-5);
        GXT_EQ_I64(h4[i], (float)br == fr && (float)bi == fi ? 1 : 3);
        if (gxt_failures)
            break;
    }
    gx_array_release(A), gx_array_release(B), gx_array_release(F), gx_array_release(X);
    gx_array_release(o1), gx_array_release(o2), gx_array_release(o3), gx_array_release(o4);
    free(za), free(zb), free(fa), free(x), free(h1), free(h2), free(h3), free(h4);
}

GXT_TEST(lambda_complex_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 4;
    gx_array *Z = NULL, *o = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_C64, 1, &n, &Z));
    gx_array *in[1] = {Z};
    GXT_STATUS(gx_map(ctx, "z -> z < z", 1, in, NULL, &o), GX_ERR_TYPE);
    GXT_MSG_HAS("order");
    GXT_STATUS(gx_map(ctx, "z -> f32(z)", 1, in, NULL, &o), GX_ERR_TYPE);
    GXT_MSG_HAS("re(z)");
    GXT_STATUS(gx_map(ctx, "z -> sin(z)", 1, in, NULL, &o), GX_ERR_TYPE);
    GXT_MSG_HAS("complex");
    GXT_STATUS(gx_map(ctx, "z -> z % z", 1, in, NULL, &o), GX_ERR_TYPE);
    GXT_STATUS(gx_map(ctx, "z -> z && z", 1, in, NULL, &o), GX_ERR_TYPE);
    GXT_STATUS(gx_map(ctx, "z -> z ? 1 : 2", 1, in, NULL, &o), GX_ERR_TYPE);
    GXT_STATUS(gx_map(ctx, "z -> rand(z, 1)", 1, in, NULL, &o), GX_ERR_TYPE);
    GXT_CHECK(o == NULL);
    gx_array_release(Z);
}

/* rand(seed, i) in a lambda is element i of gx_rand's stream (offset 0, start 0). */
GXT_TEST(lambda_rand_matches_gx_rand)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 4099;
    gx_array *I = NULL, *r64 = NULL, *r32 = NULL, *g64 = NULL, *g32 = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I64, n, 0, 1, &I));
    gx_array *in[1] = {I};
    GXT_OK(gx_map(ctx, "i -> rand(12345, i)", 1, in, NULL, &r64));
    GXT_OK(gx_map(ctx, "i -> randf(12345, i)", 1, in, NULL, &r32));
    GXT_OK(gx_rand(ctx, (gx_rng){12345, 0, 0}, GX_F64, 1, &n, &g64));
    GXT_OK(gx_rand(ctx, (gx_rng){12345, 0, 0}, GX_F32, 1, &n, &g32));
    double *a = malloc(8 * (size_t)n), *b = malloc(8 * (size_t)n);
    GXT_OK(gx_array_to_host(r64, a, 8 * (size_t)n));
    GXT_OK(gx_array_to_host(g64, b, 8 * (size_t)n));
    GXT_CHECK(memcmp(a, b, 8 * (size_t)n) == 0);
    GXT_OK(gx_array_to_host(r32, a, 4 * (size_t)n));
    GXT_OK(gx_array_to_host(g32, b, 4 * (size_t)n));
    GXT_CHECK(memcmp(a, b, 4 * (size_t)n) == 0);
    free(a), free(b);
    gx_array_release(I), gx_array_release(r64), gx_array_release(r32), gx_array_release(g64), gx_array_release(g32);
}

#ifdef GX_HAVE_CUDA
#include "jit/lambda.h"

/* The complex and rand() lambdas' CUDA text compiles under NVRTC (no GPU needed). */
GXT_TEST(lambda_complex_cuda_compiles)
{
    if (!cuda_nvrtc_load()) {
        gxt_skip("NVRTC not loadable");
        return;
    }
    gx_ctx *ctx = gxt_ctx();
    gx_ctx fake;
    memcpy(&fake, ctx, sizeof fake);
    fake.be.iface = &gx__cuda_iface;
    int64_t n = 64;
    gx_array *A = NULL, *B = NULL, *O = NULL, *R = NULL;
    GXT_OK(gx_array_empty(ctx, GX_C128, 1, &n, &A));
    GXT_OK(gx_array_empty(ctx, GX_C64, 1, &n, &B));
    GXT_OK(gx_array_empty(ctx, GX_C128, 1, &n, &O));
    GXT_OK(gx_array_empty(ctx, GX_F64, 1, &n, &R));
    gx_dtype types[2] = {GX_C128, GX_C64};
    const char *texts[2] = {"a, b -> a * b + conj(a) / b - exp(complex(0.0, 1.0) * b) + (a == b ? a : -b)",
                            "a, b -> rand(7, 3) + randf(7, 4) + abs(a) + arg(b) + abs2(b) + re(a) + im(b)"};
    gx_array *outs[2] = {O, R};
    for (int k = 0; k < 2; k++) {
        lam_env env = {texts[k], 2, types, NULL, 0, NULL, 0, NULL, 0};
        lam_lambda *l = NULL;
        GXT_OK(lam_compile(&env, &l));
        const char *pn[2] = {"v0", "v1"};
        gx__sbuf expr = {0}, src = {0};
        GXT_OK(lam_emit(l, pn, NULL, &expr));
        ew_plan pl;
        gx_array *in[2] = {A, B};
        GXT_OK(ew_plan_make(&pl, outs[k], 2, in));
        GXT_OK(ew_source(&fake, &pl, expr.p, NULL, &src));
        void *ptx = NULL;
        size_t len = 0;
        char *log = NULL;
        if (cuda_nvrtc_compile(src.p, "lambda.cu", 9, 0, 1, &ptx, &len, &log) != GX_OK)
            GXT_FAIL_AT(__FILE__, __LINE__, "%s: %s\n%s", texts[k], gx_last_error(), log ? log : "");
        free(ptx), free(log);
        gx__sb_free(&expr), gx__sb_free(&src);
        lam_free(l);
    }
    gx_array_release(A), gx_array_release(B), gx_array_release(O), gx_array_release(R);
}
#else /* built without CUDA headers: the tests exist and skip */
GXT_TEST(lambda_complex_cuda_compiles) { gxt_skip("gx was built without the CUDA headers"); }
#endif
