/* test_half_ops.c -- f16 and bf16 beyond maps and reductions: matrix products (f32
 * accumulation, against an f64 host product), random numbers, scans, filters,
 * bound arrays (user kernels: test_kernel.c; DLPack: test_interop.c).  Half values on the host
 * come from the library's host conversions, which test_half.c checks bit by bit
 * against an independent reference. */
#include "gx_test.h"

static uint16_t to_half(gx_dtype t, double v) { return t == GX_F16 ? gx_f64_to_f16(v) : gx_f64_to_bf16(v); }
static double from_half(gx_dtype t, uint16_t h) { return t == GX_F16 ? gx_f16_to_f32(h) : gx_bf16_to_f32(h); }
static bool is_half(gx_dtype t) { return t == GX_F16 || t == GX_BF16; }

/* ------------------------------------------------------------ matmul */

/* A logical (batch, rows, cols) matrix of half values (batch 0: 2-D) made on the
 * device as: mode 0 dense; mode 1 a permuted view of transposed storage (unit row
 * stride: folded into the op, no copy); mode 2 every other column of wider storage
 * (copied by gx).  vals receives the logical values. */
static gx_status hm_make(gx_dtype t, int64_t batch, int64_t rows, int64_t cols, int mode, double *vals,
                         gx_array **out, gx_array **store)
{
    int64_t nb = batch ? batch : 1, wide = mode == 2 ? 2 * cols : cols;
    size_t n = (size_t)(nb * rows * wide);
    uint16_t *h = calloc(n + 1, 2);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++) {
                uint16_t v = to_half(t, gxt_rand01() * 2 - 1);
                vals[(b * rows + r) * cols + c] = from_half(t, v);
                int64_t at = mode == 1 ? (b * cols + c) * rows + r : (b * rows + r) * wide + (mode == 2 ? 2 * c : c);
                h[at] = v;
            }
    int nd = batch ? 3 : 2;
    int64_t sh[3] = {batch, mode == 1 ? cols : rows, mode == 1 ? rows : wide};
    gx_status s = gx_array_from_host(gxt_ctx(), t, nd, batch ? sh : sh + 1, h, store);
    free(h);
    if (s != GX_OK)
        return s;
    if (mode == 0)
        return *out = *store, *store = NULL, GX_OK;
    if (mode == 1) {
        int p3[3] = {0, 2, 1}, p2[2] = {1, 0};
        return gx_array_permute(*store, batch ? p3 : p2, out);
    }
    gx_slice sl[3] = {{0, batch, 1}, {0, rows, 1}, {0, wide, 2}};
    return gx_array_view(*store, batch ? sl : sl + 1, out);
}

typedef struct hm_case {
    gx_dtype tin, tout;
    int64_t batch, m, n, k; /* batch 0: 2-D */
    gx_op oa, ob;
    double alpha, beta;
    int mode_a, mode_b;
} hm_case;

/* Bound for one element: the products of halves are exact in f32; the f32 sum of k
 * terms errs by at most gamma_k * sum|terms| (Higham 3.5) -- taken as (k + 2) * 2^-20
 * rather than 2^-24 because tensor cores align and add with fewer guard bits than
 * IEEE f32; alpha and beta are exact in f32 here; then C rounds once to its dtype
 * (relative u_out, plus half the smallest subnormal). */
static double hm_tol(const hm_case *c, double mag, double w)
{
    double acc = (double)(c->k + 2) * 0x1p-20 * mag;
    double u = c->tout == GX_F16 ? 0x1p-11 : c->tout == GX_BF16 ? 0x1p-8 : 0x1p-24;
    double tiny = c->tout == GX_F16 ? 0x1p-25 : 0x1p-140;
    return acc + u * (fabs(w) + acc) + tiny;
}

static void hm_check(const hm_case *c)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t nb = c->batch ? c->batch : 1, m = c->m, n = c->n, k = c->k;
    int64_t ar = c->oa == GX_OP_N ? m : k, ac = c->oa == GX_OP_N ? k : m;
    int64_t br = c->ob == GX_OP_N ? k : n, bc = c->ob == GX_OP_N ? n : k;
    double *va = malloc(sizeof(double) * (size_t)(nb * ar * ac + 1)),
           *vb = malloc(sizeof(double) * (size_t)(nb * br * bc + 1)),
           *vc = malloc(sizeof(double) * (size_t)(nb * m * n + 1));
    gx_array *A = NULL, *As = NULL, *B = NULL, *Bs = NULL, *C = NULL;
    GXT_OK(hm_make(c->tin, c->batch, ar, ac, c->mode_a, va, &A, &As));
    GXT_OK(hm_make(c->tin, c->batch, br, bc, c->mode_b, vb, &B, &Bs));
    size_t csz = gx_dtype_size(c->tout), cn = (size_t)(nb * m * n);
    char *hc = malloc(cn * csz + 1);
    for (size_t i = 0; i < cn; i++) { /* C's old values, for beta */
        double v = gxt_rand01() * 2 - 1;
        if (is_half(c->tout)) {
            uint16_t h = to_half(c->tout, v);
            memcpy(hc + 2 * i, &h, 2);
            vc[i] = from_half(c->tout, h);
        } else {
            float f = (float)v;
            memcpy(hc + 4 * i, &f, 4);
            vc[i] = f;
        }
    }
    int64_t cs[3] = {c->batch, m, n};
    GXT_OK(gx_array_from_host(ctx, c->tout, c->batch ? 3 : 2, c->batch ? cs : cs + 1, hc, &C));
    gx_matmul_opts o = {.op_a = c->oa, .op_b = c->ob};
    if (c->alpha != 1)
        o.alpha = GX_SCALAR_F64(c->alpha);
    if (c->beta != 0)
        o.beta = GX_SCALAR_F64(c->beta);
    GXT_OK(gx_matmul_into(A, B, &o, C));
    GXT_OK(gx_array_to_host(C, hc, cn * csz));
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0, mag = 0;
                for (int64_t p = 0; p < k; p++) {
                    double x = c->oa == GX_OP_N ? va[(b * ar + i) * ac + p] : va[(b * ar + p) * ac + i];
                    double y = c->ob == GX_OP_N ? vb[(b * br + p) * bc + j] : vb[(b * br + j) * bc + p];
                    s += x * y, mag += fabs(x * y);
                }
                size_t at = (size_t)((b * m + i) * n + j);
                double w = c->alpha * s + c->beta * vc[at];
                double got;
                if (is_half(c->tout)) {
                    uint16_t h;
                    memcpy(&h, hc + 2 * at, 2);
                    got = from_half(c->tout, h);
                } else {
                    float f;
                    memcpy(&f, hc + 4 * at, 4);
                    got = f;
                }
                double tol = hm_tol(c, fabs(c->alpha) * mag + fabs(c->beta * vc[at]), w);
                if (!(fabs(got - w) <= tol)) {
                    GXT_FAIL_AT(__FILE__, __LINE__,
                                "%s->%s batch %lld m=%lld n=%lld k=%lld ops %d,%d modes %d,%d at (%lld,%lld,%lld): "
                                "%.9g want %.9g (bound %.3g)",
                                gx_dtype_name(c->tin), gx_dtype_name(c->tout), (long long)c->batch, (long long)m,
                                (long long)n, (long long)k, c->oa, c->ob, c->mode_a, c->mode_b, (long long)b,
                                (long long)i, (long long)j, got, w, tol);
                    b = nb, i = m;
                    break;
                }
            }
    gx_array_release(A), gx_array_release(As), gx_array_release(B), gx_array_release(Bs), gx_array_release(C);
    free(va), free(vb), free(vc), free(hc);
}

/* A gx without CBLAS has no matmul on the CPU backend: skip, naming the package. */
static bool hm_here(void)
{
    int64_t s11[2] = {1, 1};
    gx_array *a = NULL, *b = NULL, *c = NULL;
    gx_array_zeros(gxt_ctx(), GX_F16, 2, s11, &a);
    gx_array_zeros(gxt_ctx(), GX_F16, 2, s11, &b);
    gx_array_zeros(gxt_ctx(), GX_F16, 2, s11, &c);
    gx_status s = gx_matmul_into(a, b, NULL, c);
    gx_array_release(a), gx_array_release(b), gx_array_release(c);
    if (s == GX_ERR_UNSUPPORTED && strstr(gx_last_error(), "without CBLAS")) {
        gxt_skip("this gx was built without CBLAS: install libopenblas-dev and rebuild");
        return false;
    }
    return true;
}

GXT_TEST(half_matmul_values)
{
    if (!hm_here())
        return;
    gx_dtype ins[2] = {GX_F16, GX_BF16};
    for (int ti = 0; ti < 2; ti++) {
        gx_dtype outs[2] = {ins[ti], GX_F32};
        for (int to = 0; to < 2; to++) {
            gx_dtype a = ins[ti], c = outs[to];
            hm_case cases[] = {
                {a, c, 0, 1, 1, 1, GX_OP_N, GX_OP_N, 1, 0, 0, 0},
                {a, c, 0, 33, 17, 65, GX_OP_N, GX_OP_N, 1, 0, 0, 0},
                {a, c, 0, 33, 17, 65, GX_OP_T, GX_OP_N, 0.5, -1.25, 0, 0},
                {a, c, 0, 31, 32, 300, GX_OP_N, GX_OP_T, 1, 1, 0, 0}, /* k over one 256 block */
                {a, c, 0, 7, 5, 0, GX_OP_N, GX_OP_N, 1, 0.5, 0, 0},   /* k = 0: C = beta C */
                {a, c, 0, 9, 13, 33, GX_OP_N, GX_OP_N, 1, 0, 1, 2},   /* transposed view, strided copy */
                {a, c, 0, 9, 13, 33, GX_OP_T, GX_OP_T, -1, 0, 2, 1},
                {a, c, 3, 17, 9, 31, GX_OP_N, GX_OP_N, 1, 0.25, 0, 0}, /* strided batch */
                {a, c, 2, 8, 6, 40, GX_OP_T, GX_OP_N, 2, 0, 1, 0},
            };
            for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
                hm_check(&cases[i]);
        }
    }
}

GXT_TEST(half_matmul_allocating_and_dtypes)
{
    if (!hm_here())
        return;
    gx_ctx *ctx = gxt_ctx();
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
    uint16_t ha[6], hb[6];
    double a[6], b[6];
    for (int i = 0; i < 6; i++) {
        ha[i] = gx_f32_to_f16((float)(i + 1)), a[i] = i + 1;
        hb[i] = gx_f32_to_f16((float)(i - 2) * 0.5f), b[i] = (i - 2) * 0.5;
    }
    gx_array *A = NULL, *B = NULL, *C = NULL, *C32 = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F16, 2, s23, ha, &A));
    GXT_OK(gx_array_from_host(ctx, GX_F16, 2, s32, hb, &B));
    GXT_OK(gx_matmul(A, B, NULL, &C));
    gx_matmul_opts o = {.dtype = GX_F32};
    GXT_OK(gx_matmul(A, B, &o, &C32));
    gx_array_desc d;
    GXT_OK(gx_array_describe(C, &d));
    GXT_CHECK(d.dtype == GX_F16 && d.ndim == 2 && d.shape[0] == 2 && d.shape[1] == 2);
    GXT_OK(gx_array_describe(C32, &d));
    GXT_CHECK(d.dtype == GX_F32);
    uint16_t hc[4];
    float fc[4];
    GXT_OK(gx_array_to_host(C, hc, sizeof hc));
    GXT_OK(gx_array_to_host(C32, fc, sizeof fc));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double s = 0;
            for (int p = 0; p < 3; p++)
                s += a[i * 3 + p] * b[p * 2 + j];
            GXT_CHECK(gx_f16_to_f32(hc[i * 2 + j]) == s && fc[i * 2 + j] == s); /* small integers: exact */
        }
    gx_array_release(A), gx_array_release(B), gx_array_release(C), gx_array_release(C32);
}

GXT_TEST(half_matmul_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t s22[2] = {2, 2};
    gx_array *H = NULL, *Bf = NULL, *F = NULL, *D = NULL, *N = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F16, 2, s22, &H));
    GXT_OK(gx_array_zeros(ctx, GX_BF16, 2, s22, &Bf));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, s22, &F));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, s22, &D));
    GXT_OK(gx_array_zeros(ctx, GX_F16, 2, s22, &N));
    GXT_STATUS(gx_matmul_into(H, Bf, NULL, F), GX_ERR_DTYPE); /* f16 x bf16 */
    GXT_MSG_HAS("a=f16");
    GXT_MSG_HAS("b=bf16");
    GXT_STATUS(gx_matmul_into(H, F, NULL, F), GX_ERR_DTYPE); /* f16 x f32 */
    GXT_MSG_HAS("b=f32");
    GXT_STATUS(gx_matmul_into(H, N, NULL, Bf), GX_ERR_DTYPE); /* f16 inputs, bf16 out */
    GXT_MSG_HAS("c=bf16");
    GXT_STATUS(gx_matmul_into(H, N, NULL, D), GX_ERR_DTYPE); /* f16 inputs, f64 out */
    gx_array *out = NULL;
    GXT_STATUS(gx_matmul(H, Bf, NULL, &out), GX_ERR_DTYPE);
    GXT_MSG_HAS("bf16");
    gx_matmul_opts o = {.dtype = GX_F64};
    GXT_STATUS(gx_matmul(H, N, &o, &out), GX_ERR_DTYPE);
    GXT_MSG_HAS("f64");
    o.dtype = GX_F16;
    GXT_STATUS(gx_matmul(F, F, &o, &out), GX_ERR_DTYPE); /* f32 inputs: C is f32 */
    GXT_CHECK(out == NULL);
    o.dtype = GX_F32;
    GXT_STATUS(gx_matmul_into(H, N, &o, Bf), GX_ERR_DTYPE); /* opts->dtype disagrees with out */
    gx_array_release(H), gx_array_release(Bf), gx_array_release(F), gx_array_release(D), gx_array_release(N);
}

/* ------------------------------------------------------------ random numbers */

/* Philox4x32-10 (Random123 constants), written again here: the words of block b. */
static void hr_philox(uint64_t b, gx_rng r, uint32_t w[4])
{
    uint32_t c0 = (uint32_t)b, c1 = (uint32_t)(b >> 32), c2 = (uint32_t)r.offset, c3 = (uint32_t)(r.offset >> 32);
    uint32_t k0 = (uint32_t)r.seed, k1 = (uint32_t)(r.seed >> 32);
    for (int i = 0; i < 10; i++) {
        uint64_t p = 0xD2511F53ull * c0, q = 0xCD9E8D57ull * c2;
        uint32_t n0 = (uint32_t)(q >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p >> 32) ^ c3 ^ k1;
        c0 = n0, c1 = (uint32_t)q, c2 = n2, c3 = (uint32_t)p;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    w[0] = c0, w[1] = c1, w[2] = c2, w[3] = c3;
}

/* Uniform halves are bit-exact grid values (top 11 / 8 bits), in [0, 1); normal
 * halves are the f32 Box-Muller value rounded (within the unit roundoff of the double
 * formula, plus f32's); statistics; a strided view; odd sizes. */
GXT_TEST(half_rand_uniform_and_normal)
{
    gx_ctx *ctx = gxt_ctx();
    gx_dtype ts[2] = {GX_F16, GX_BF16};
    for (int ti = 0; ti < 2; ti++) {
        gx_dtype t = ts[ti];
        int bits = t == GX_F16 ? 11 : 8;
        double u = t == GX_F16 ? 0x1p-11 : 0x1p-8;
        const int64_t sizes[] = {1, 31, 33, 100001};
        for (size_t z = 0; z < 4; z++) {
            int64_t n = sizes[z];
            gx_rng r = {77 + (uint64_t)z, 5, 3};
            gx_array *U = NULL, *N = NULL;
            GXT_OK(gx_rand(ctx, r, t, 1, &n, &U));
            GXT_OK(gx_randn(ctx, r, t, 1, &n, &N));
            uint16_t *hu = malloc((size_t)n * 2), *hn = malloc((size_t)n * 2);
            GXT_OK(gx_array_to_host(U, hu, (size_t)n * 2));
            GXT_OK(gx_array_to_host(N, hn, (size_t)n * 2));
            double s1 = 0, s2 = 0, m1 = 0, m2 = 0;
            int bad = 0;
            for (int64_t i = 0; i < n && bad < 3; i++) {
                uint64_t g = r.start + (uint64_t)i;
                uint32_t w[4];
                hr_philox(g / 4, r, w);
                double want = (double)(w[g % 4] >> (32 - bits)) * ldexp(1, -bits), got = from_half(t, hu[i]);
                int q = (int)(g % 4) / 2;
                double u1 = ((double)w[2 * q] + 0.5) * 0x1p-32, u2 = (double)w[2 * q + 1] * 0x1p-32;
                double rad = sqrt(-2 * log(u1)), ang = 6.283185307179586477 * u2;
                double nw = g % 2 ? rad * sin(ang) : rad * cos(ang), ng = from_half(t, hn[i]);
                if (got != want || !(got >= 0 && got < 1) || !(fabs(ng - nw) <= (u + 0x1p-23) * fabs(nw) + 0x1p-25)) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld i=%lld: uniform %.9g want %.9g, normal %.9g want %.9g",
                                gx_dtype_name(t), (long long)n, (long long)i, got, want, ng, nw);
                    bad++;
                }
                s1 += got, s2 += got * got, m1 += ng, m2 += ng * ng;
            }
            if (n > 1000) {
                double mean = s1 / (double)n, var = s2 / (double)n - mean * mean;
                GXT_NEAR(mean, 0.5 - u / 2, 5e-3); /* the grid's mean */
                GXT_NEAR(var, 1.0 / 12 - u * u / 12, 5e-3);
                double nm = m1 / (double)n, nv = m2 / (double)n - nm * nm;
                GXT_CHECK(fabs(nm) < 0.02 && fabs(nv - 1) < 0.03);
            }
            /* into every other element of a wider array: the same numbers, untouched gaps */
            int64_t n2 = 2 * n;
            gx_array *W = NULL, *V = NULL;
            GXT_OK(gx_array_zeros(ctx, t, 1, &n2, &W));
            gx_slice sl = {0, n2, 2};
            GXT_OK(gx_array_view(W, &sl, &V));
            GXT_OK(gx_rand_into(r, V));
            uint16_t *hw = malloc((size_t)n2 * 2);
            GXT_OK(gx_array_to_host(W, hw, (size_t)n2 * 2));
            for (int64_t i = 0; i < n; i++)
                if (hw[2 * i] != hu[i] || hw[2 * i + 1] != 0) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "%s view i=%lld", gx_dtype_name(t), (long long)i);
                    break;
                }
            free(hu), free(hn), free(hw);
            gx_array_release(U), gx_array_release(N), gx_array_release(W), gx_array_release(V);
        }
    }
    int64_t n = 4;
    gx_array *o = NULL;
    GXT_STATUS(gx_rand_int(ctx, (gx_rng){0, 0, 0}, 0, 10, GX_F16, 1, &n, &o), GX_ERR_DTYPE);
    GXT_MSG_HAS("f16");
}

/* ------------------------------------------------------------ scans, filters */

#include "gx/range.h"

/* "+" scans accumulate in f32 and round each output once: 4096 ones give 1..4096,
 * past f16's 2048 where a half running sum would stall; random values against an
 * f64 prefix with the documented bound; "max"; a strided view; into an f32 out. */
GXT_TEST(half_scan_values)
{
    gx_ctx *ctx = gxt_ctx();
    gx_dtype ts[2] = {GX_F16, GX_BF16};
    for (int ti = 0; ti < 2; ti++) {
        gx_dtype t = ts[ti];
        double u = t == GX_F16 ? 0x1p-11 : 0x1p-8;
        const int64_t sizes[] = {1, 31, 32, 33, 4097, 10007};
        for (size_t z = 0; z < 6; z++) {
            int64_t n = sizes[z], n2 = 2 * n;
            uint16_t *h = malloc((size_t)n2 * 2), *r = malloc((size_t)n * 2);
            double *x = malloc(sizeof(double) * (size_t)n);
            for (int64_t i = 0; i < n2; i++) {
                h[i] = to_half(t, gxt_rand01() * 2 - 0.5);
                if (i % 2 == 0)
                    x[i / 2] = from_half(t, h[i]);
            }
            gx_array *W = NULL, *V = NULL, *S = NULL, *M = NULL, *F = NULL;
            GXT_OK(gx_array_from_host(ctx, t, 1, &n2, h, &W));
            gx_slice sl = {0, n2, 2};
            GXT_OK(gx_array_view(W, &sl, &V)); /* every other element */
            GXT_OK(gx_scan(ctx, "+", V, NULL, &S));
            GXT_OK(gx_scan(ctx, "max", V, NULL, &M));
            GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &F));
            GXT_OK(gx_scan_into(ctx, "+", V, NULL, F));
            gx_array_desc d;
            GXT_OK(gx_array_describe(S, &d));
            GXT_CHECK(d.dtype == t);
            GXT_OK(gx_array_describe(M, &d));
            GXT_CHECK(d.dtype == t);
            float *f = malloc((size_t)n * 4);
            GXT_OK(gx_array_to_host(F, f, (size_t)n * 4));
            uint16_t *mx = malloc((size_t)n * 2);
            GXT_OK(gx_array_to_host(S, r, (size_t)n * 2));
            GXT_OK(gx_array_to_host(M, mx, (size_t)n * 2));
            double run = 0, mag = 0, best = -INFINITY;
            for (int64_t i = 0; i < n; i++) {
                run += x[i], mag += fabs(x[i]);
                best = x[i] > best ? x[i] : best;
                double k = (double)(i + 1), acc = ((k < 4096 ? k : 4096) + k / 1024 + 64) * 0x1p-24 * mag;
                double g = from_half(t, r[i]);
                if (!(fabs(g - run) <= acc + u * (fabs(run) + acc) + 0x1p-25) || !(fabs(f[i] - run) <= acc) ||
                    from_half(t, mx[i]) != best) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld i=%lld: %.9g / %.9g want %.9g; max %.9g want %.9g",
                                gx_dtype_name(t), (long long)n, (long long)i, g, f[i], run, from_half(t, mx[i]), best);
                    break;
                }
            }
            free(h), free(r), free(x), free(f), free(mx);
            gx_array_release(W), gx_array_release(V), gx_array_release(S), gx_array_release(M), gx_array_release(F);
        }
        /* 4096 ones: 1..4096 exactly (f16 holds integers to 2048 exactly, then even ones;
         * bf16 to 256): the exact prefix rounded once */
        int64_t n = 4096;
        gx_array *O = NULL, *S = NULL;
        GXT_OK(gx_array_zeros(ctx, t, 1, &n, &O));
        GXT_OK(gx_array_fill_f64(O, 1.0));
        gx_scan_opts eo = {.exclusive = 1};
        GXT_OK(gx_scan(ctx, "+", O, &eo, &S));
        uint16_t *r = malloc((size_t)n * 2);
        GXT_OK(gx_array_to_host(S, r, (size_t)n * 2));
        for (int64_t i = 0; i < n; i++)
            if (r[i] != to_half(t, (double)i)) {
                GXT_FAIL_AT(__FILE__, __LINE__, "%s exclusive ones at %lld: %g", gx_dtype_name(t), (long long)i,
                            from_half(t, r[i]));
                break;
            }
        free(r);
        gx_array_release(O), gx_array_release(S);
    }
}

/* Selected elements come back bit-identical, in their dtype; the predicate sees f32
 * values; zipped with an i32 array; findall indices; an empty result. */
GXT_TEST(half_filter_and_findall)
{
    gx_ctx *ctx = gxt_ctx();
    gx_dtype ts[2] = {GX_F16, GX_BF16};
    for (int ti = 0; ti < 2; ti++) {
        gx_dtype t = ts[ti];
        const int64_t sizes[] = {0, 1, 33, 1000};
        for (size_t z = 0; z < 4; z++) {
            int64_t n = sizes[z];
            uint16_t *h = malloc((size_t)n * 2 + 2), *got = malloc((size_t)n * 2 + 2);
            int32_t *idx = malloc((size_t)n * 4 + 4), *gi = malloc((size_t)n * 4 + 4);
            int64_t *fi = malloc((size_t)n * 8 + 8), *want = malloc((size_t)n * 8 + 8);
            int64_t m = 0;
            for (int64_t i = 0; i < n; i++) {
                h[i] = to_half(t, gxt_rand01() * 2 - 1);
                idx[i] = (int32_t)i * 3;
                if (from_half(t, h[i]) > 0.25)
                    want[m++] = i;
            }
            gx_array *in[2] = {NULL, NULL}, *out[2] = {NULL, NULL}, *F = NULL;
            GXT_OK(gx_array_from_host(ctx, t, 1, &n, h, &in[0]));
            GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, idx, &in[1]));
            GXT_OK(gx_filter(ctx, "x, i -> x > 0.25f", 2, in, NULL, out));
            GXT_OK(gx_findall(ctx, "x -> x > 0.25f", 1, in, NULL, &F));
            gx_array_desc d;
            GXT_OK(gx_array_describe(out[0], &d));
            GXT_CHECK(d.dtype == t && d.size == m);
            GXT_OK(gx_array_describe(F, &d));
            GXT_CHECK(d.dtype == GX_I64 && d.size == m);
            if (m > 0) {
                GXT_OK(gx_array_to_host(out[0], got, (size_t)m * 2));
                GXT_OK(gx_array_to_host(out[1], gi, (size_t)m * 4));
                GXT_OK(gx_array_to_host(F, fi, (size_t)m * 8));
            }
            for (int64_t k = 0; k < m; k++)
                if (got[k] != h[want[k]] || gi[k] != idx[want[k]] || fi[k] != want[k]) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld k=%lld", gx_dtype_name(t), (long long)n, (long long)k);
                    break;
                }
            free(h), free(got), free(idx), free(gi), free(fi), free(want);
            gx_array_release(in[0]), gx_array_release(in[1]), gx_array_release(out[0]), gx_array_release(out[1]);
            gx_array_release(F);
        }
    }
}

/* ------------------------------------------------------------ bound arrays */

#include "gx/reduce.h"

/* A gather from a bound f16 / bf16 table (read as f32, exactly the stored values),
 * a reversed (negatively strided) view, a 2-d table, an out-of-range index; a map
 * over an i32 index array with an f32 result, and a reduction over the same reads. */
GXT_TEST(half_bound_arrays)
{
    gx_ctx *ctx = gxt_ctx();
    gx_dtype ts[2] = {GX_F16, GX_BF16};
    for (int ti = 0; ti < 2; ti++) {
        gx_dtype t = ts[ti];
        int64_t nt = 37, ni = 33, sh2[2] = {37, 1};
        uint16_t tab[37];
        int32_t idx[33];
        for (int i = 0; i < 37; i++)
            tab[i] = to_half(t, (gxt_rand01() - 0.5) * 100);
        for (int i = 0; i < 33; i++)
            idx[i] = (i * 7) % 37;
        gx_array *T = NULL, *R = NULL, *T2 = NULL, *I = NULL, *O = NULL, *O2 = NULL, *O3 = NULL;
        GXT_OK(gx_array_from_host(ctx, t, 1, &nt, tab, &T));
        GXT_OK(gx_array_from_host(ctx, t, 2, sh2, tab, &T2));
        gx_slice rev = {36, -38, -1}; /* Python: stop -38 is before element 0 */
        GXT_OK(gx_array_view(T, &rev, &R));
        GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &ni, idx, &I));
        gx_bind b[3] = {GX_BIND("tab", T), GX_BIND("rev", R), GX_BIND("m", T2)};
        gx_map_opts o = {0};
        o.arrays = b, o.narrays = 3;
        GXT_OK(gx_map(ctx, "i -> tab[i] + 2 * rev[i]", 1, &I, &o, &O));
        GXT_OK(gx_map(ctx, "i -> m[i, 0]", 1, &I, &o, &O2));
        gx_array_desc d;
        GXT_OK(gx_array_describe(O, &d));
        GXT_CHECK(d.dtype == GX_F32);
        float f[33], g[33];
        GXT_OK(gx_array_to_host(O, f, sizeof f));
        GXT_OK(gx_array_to_host(O2, g, sizeof g));
        for (int i = 0; i < 33; i++) {
            float want = (float)from_half(t, tab[idx[i]]) + 2 * (float)from_half(t, tab[36 - idx[i]]);
            if (f[i] != want || g[i] != (float)from_half(t, tab[idx[i]])) {
                GXT_FAIL_AT(__FILE__, __LINE__, "%s i=%d: %g %g want %g %g", gx_dtype_name(t), i, f[i], g[i], want,
                            from_half(t, tab[idx[i]]));
                break;
            }
        }
        gx_scalar s;
        gx_reduce_opts ro = {0};
        ro.arrays = b, ro.narrays = 1;
        GXT_OK(gx_mapreduce(ctx, "i -> tab[i]", "max", 1, &I, &ro, &s));
        double best = -INFINITY;
        for (int i = 0; i < 33; i++)
            best = from_half(t, tab[idx[i]]) > best ? from_half(t, tab[idx[i]]) : best;
        GXT_CHECK(s.v.f == best);
        GXT_STATUS(gx_map(ctx, "i -> tab[i + 5]", 1, &I, &o, &O3), GX_ERR_INDEX);
        GXT_MSG_HAS("tab");
        gx_array_release(T), gx_array_release(R), gx_array_release(T2), gx_array_release(I);
        gx_array_release(O), gx_array_release(O2), gx_array_release(O3);
    }
}

/* ------------------------------------------------------------ l2 distance */

/* gx_mapreduce's half map value feeds the accumulator unrounded: sum((x-y)^2) over
 * halves (the l2dist_f16 bench) is closer to the f64 sum of exact squares than the
 * sum of squares each rounded to the half dtype; the same result run to run.  A
 * pipeline's map of halves is not rounded either (gx_pipe_mapreduce, f64 fold). */
GXT_TEST(half_l2_squares_unrounded)
{
    gx_ctx *ctx = gxt_ctx();
    gx_dtype ts[2] = {GX_F16, GX_BF16};
    for (int ti = 0; ti < 2; ti++) {
        gx_dtype t = ts[ti];
        int64_t n = 40961;
        uint16_t *hx = malloc((size_t)n * 2), *hy = malloc((size_t)n * 2);
        double exact = 0, rounded = 0, abs = 0;
        for (int64_t i = 0; i < n; i++) {
            hx[i] = to_half(t, gxt_rand01() * 2 - 1);
            hy[i] = to_half(t, gxt_rand01() * 2 - 1);
            double d = from_half(t, hx[i]) - from_half(t, hy[i]);
            float sq = (float)d * (float)d; /* the f32 square the kernel forms */
            exact += d * d, abs += sq;
            rounded += from_half(t, to_half(t, sq));
        }
        gx_array *in[2] = {NULL, NULL};
        GXT_OK(gx_array_from_host(ctx, t, 1, &n, hx, &in[0]));
        GXT_OK(gx_array_from_host(ctx, t, 1, &n, hy, &in[1]));
        gx_reduce_opts o = {.dtype = GX_F32};
        gx_scalar r1, r2, r3;
        GXT_OK(gx_mapreduce(ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, &o, &r1));
        GXT_OK(gx_mapreduce(ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, &o, &r2));
        GXT_CHECK(r1.dtype == GX_F32 && r1.v.f == r2.v.f); /* deterministic */
        double err = fabs(r1.v.f - exact), err_rounded = fabs(rounded - exact);
        GXT_CHECK(err <= (double)n * 0x1p-24 * abs); /* f32 accumulation only */
        if (!(err < err_rounded))
            GXT_FAIL_AT(__FILE__, __LINE__, "%s: error %g not below %g (squares rounded to the half)",
                        gx_dtype_name(t), err, err_rounded);
        gx_pipe *p = NULL;
        GXT_OK(gx_pipe_from_arrays(ctx, 2, in, &p));
        gx_pipe_opts po = {0};
        po.dtype = GX_F64; /* a pipeline's "+" folds f32 in f32: f64 shows the squares alone */
        GXT_OK(gx_pipe_mapreduce(p, "x, y -> (x-y)*(x-y)", "+", &po, &r3));
        GXT_CHECK(r3.dtype == GX_F64);
        if (!(fabs(r3.v.f - abs) <= (double)n * 0x1p-52 * abs && fabs(r3.v.f - exact) < err_rounded))
            GXT_FAIL_AT(__FILE__, __LINE__, "%s: pipe %.17g, f32 squares %.17g, squares rounded %.17g",
                        gx_dtype_name(t), r3.v.f, abs, rounded);
        gx_pipe_destroy(p);
        gx_array_release(in[0]), gx_array_release(in[1]);
        free(hx), free(hy);
    }
}
