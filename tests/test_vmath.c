/* test_vmath.c -- accuracy of sin and cos in lambdas against the host's libm in
 * higher precision, for every class of float input (docs/LAMBDAS.md states the
 * bounds): gx's own f32 sincos on the CPU with libm / libmvec beyond its range,
 * libmvec / libm for f64, NVRTC's functions on CUDA.  Also sizes, a strided view,
 * in place, and the generated source using the fast path. */
#include "gx_test.h"

#include <float.h>

/* f32 with every argument |x| <= 2^18: gx's own sincos on the CPU, CUDA's sinf. */
#define VM_ULP_FAST 2.0
/* f32 any argument (libmvec takes over beyond 2^18), f64, and f32 on a CPU kernel
 * compiler without FMA, where libmvec / libm do all of it. */
#define VM_ULP_ANY 4.0
#define VM_FAST_MAX 262144.0f

/* The bound for arguments up to 2^18: VM_ULP_FAST unless the CPU kernel compiler
 * took the prelude's fallback (GX__SC_FAST 0: no hardware FMA). */
static double vm_fast_bound(gx_ctx *ctx)
{
    gx_backend_kind k;
    if (gx_ctx_backend(ctx, &k) != GX_OK || k != GX_BACKEND_CPU)
        return VM_ULP_FAST;
    int32_t on = 0;
    int64_t one = 1;
    gx_array *x = NULL, *o = NULL;
    gx_status s = gx_define(ctx, "vm_probe.c", "int32_t vm_sc_fast(int32_t x) { return x + GX__SC_FAST; }");
    if (s == GX_OK)
        s = gx_array_zeros(ctx, GX_I32, 1, &one, &x);
    if (s == GX_OK)
        s = gx_map(ctx, "x -> vm_sc_fast(x)", 1, &x, NULL, &o);
    if (s == GX_OK)
        s = gx_array_to_host(o, &on, sizeof on);
    gx_array_release(x);
    gx_array_release(o);
    GXT_CHECK(s == GX_OK);
    if (!on)
        printf("  the CPU kernel compiler has no FMA: libm / libmvec throughout, bound %.0f ulp\n", VM_ULP_ANY);
    return s == GX_OK && on ? VM_ULP_FAST : VM_ULP_ANY;
}

static double vm_ulp_f32(double ref)
{
    int e;
    frexp(ref, &e);
    double u = ldexp(1.0, e - 24);
    return ref == 0 || u < 0x1p-149 ? 0x1p-149 : u;
}

static long double vm_ulp_f64(long double ref)
{
    int e;
    frexpl(ref, &e);
    long double u = ldexpl(1.0L, e - 53);
    return ref == 0 || u < 0x1p-1074L ? 0x1p-1074L : u;
}

/* Error of `got` in ulps of the reference; NaN must meet NaN, and sin(+-0) keeps the
 * sign of the zero (as libm's does). */
static double vm_err_f32(float got, double want)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got) ? 0 : INFINITY;
    if (want == 0 && got == 0)
        return !signbit(want) == !signbit(got) ? 0 : INFINITY;
    return fabs((double)got - want) / vm_ulp_f32(want);
}

static double vm_err_f64(double got, long double want)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got) ? 0 : INFINITY;
    if (want == 0 && got == 0)
        return !signbit(want) == !signbit(got) ? 0 : INFINITY;
    return (double)(fabsl((long double)got - want) / vm_ulp_f64(want));
}

static float vm_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Random floats with uniformly random exponents: every binade up to 2^18 alike. */
static float vm_rand_fast_f32(void)
{
    float f;
    do
        f = vm_bits_f32((uint32_t)gxt_rand_u64());
    while (!(fabsf(f) <= VM_FAST_MAX));
    return f;
}

/* The special values of the brief: zeros, tiny, denormal, near multiples of pi/2,
 * 1e3..1e6, huge, inf, NaN.  Returns the count written (at most 256). */
static int vm_special_f32(float *v)
{
    static const float fixed[] = {
        0.0f,        -0.0f,       1e-30f,     -1e-30f,  FLT_MIN,      -FLT_MIN,    1e-40f,      -1e-40f,
        0x1p-149f,   -0x1p-149f,  0x1p-12f,   0.5f,     0.785398185f, 1.0f,        1.57079637f, 3.14159274f,
        4.71238899f, 6.28318548f, 1e3f,       -1e3f,    12345.678f,   1e5f,        131071.5f,   262143.98f,
        262144.0f,   -262144.0f,  262144.03f, 1e6f,     -1e6f,        16777215.0f, 1e20f,       -1e20f,
        3.4e30f,     FLT_MAX,     -FLT_MAX,   INFINITY, -INFINITY,    NAN,         -NAN};
    int n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        v[n++] = fixed[i];
    for (int k = 1; k <= 200001 && n < 256; k = k * 3 + 1) {
        float m = (float)(k * 1.5707963267948966);
        v[n++] = m;
        v[n++] = -nextafterf(m, INFINITY);
        v[n++] = nextafterf(m, 0);
    }
    return n;
}

typedef struct vm_stats {
    double sin, cos, sum;
} vm_stats;

/* Distance of sin^2 + cos^2 from 1; NaN exactly where x is inf or NaN. */
static double vm_sum_err(double got, bool finite_x)
{
    if (!finite_x || isnan(got))
        return !finite_x && isnan(got) ? 0 : INFINITY;
    return fabs(got - 1.0);
}

/* Runs x -> sin(x), x -> cos(x) and x -> sin(x)*sin(x) + cos(x)*cos(x) over x (f32)
 * and returns the largest errors: ulps for sin and cos, the absolute error of the sum. */
static gx_status vm_run_f32(gx_ctx *ctx, gx_array *x, const float *h, int64_t n, vm_stats *st)
{
    static const char *const lams[3] = {"x -> sin(x)", "x -> cos(x)", "x -> sin(x)*sin(x) + cos(x)*cos(x)"};
    float *o = malloc((size_t)(n ? n : 1) * sizeof(float));
    gx_status s = o ? GX_OK : GX_ERR_OUT_OF_MEMORY;
    memset(st, 0, sizeof *st);
    for (int l = 0; l < 3 && s == GX_OK; l++) {
        gx_array *out = NULL;
        s = gx_map(ctx, lams[l], 1, &x, NULL, &out);
        if (s == GX_OK)
            s = gx_array_to_host(out, o, (size_t)n * sizeof(float));
        gx_array_release(out);
        for (int64_t i = 0; i < n && s == GX_OK; i++) {
            double xd = h[i];
            if (l == 0)
                st->sin = fmax(st->sin, vm_err_f32(o[i], sin(xd)));
            else if (l == 1)
                st->cos = fmax(st->cos, vm_err_f32(o[i], cos(xd)));
            else
                st->sum = fmax(st->sum, vm_sum_err(o[i], isfinite(xd)));
        }
    }
    free(o);
    return s;
}

/* sin^2 + cos^2 in f32 from sin and cos within E ulp: 2E*2^-23*(s^2 + c^2) from the
 * inputs plus three roundings (2^-24 s^2, 2^-24 c^2, 2^-24 for the sum near 1). */
static double vm_sum_bound_f32(double ulps) { return ulps * 0x1p-22 + 0x1p-23 + 1e-12; }

static gx_status vm_check_f32(gx_ctx *ctx, const float *h, int64_t n, double ulps, const char *what)
{
    gx_array *x = NULL;
    vm_stats st;
    gx_status s = gx_array_from_host(ctx, GX_F32, 1, &n, h, &x);
    if (s == GX_OK)
        s = vm_run_f32(ctx, x, h, n, &st);
    gx_array_release(x);
    if (s != GX_OK)
        return s;
    if (n > 1) /* the measured figures, for the record (ctest -V) */
        printf("  %s: sin %.3f ulp, cos %.3f ulp, sin^2+cos^2 - 1 up to %.3g\n", what, st.sin, st.cos, st.sum);
    if (!(st.sin <= ulps && st.cos <= ulps && st.sum <= vm_sum_bound_f32(ulps)))
        GXT_FAIL_AT(__FILE__, __LINE__,
                    "%s: sin %.3f ulp, cos %.3f ulp (bound %.1f), sin^2+cos^2 off by %.3g (bound %.3g)", what, st.sin,
                    st.cos, ulps, st.sum, vm_sum_bound_f32(ulps));
    return GX_OK;
}

GXT_TEST(vmath_f32_special_values)
{
    gx_ctx *ctx = gxt_ctx();
    float v[256];
    int n = vm_special_f32(v);
    double fast = vm_fast_bound(ctx);
    GXT_OK(vm_check_f32(ctx, v, n, VM_ULP_ANY, "special values"));
    /* one value per call: no block shares a large neighbour, so each takes its own path */
    for (int i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof what, "x = %a alone", (double)v[i]);
        GXT_OK(vm_check_f32(ctx, &v[i], 1, fabsf(v[i]) <= VM_FAST_MAX ? fast : VM_ULP_ANY, what));
    }
}

/* The floats nearest every multiple of pi/2 up to 2^18 and their neighbours: where
 * the argument reduction cancels most (sin or cos is tiny there). */
GXT_TEST(vmath_f32_multiples_of_pi_half)
{
    gx_ctx *ctx = gxt_ctx();
    const int kmax = (int)(VM_FAST_MAX / 1.5707963267948966);
    int64_t n = 4 * (int64_t)kmax;
    float *h = malloc((size_t)n * sizeof(float));
    GXT_CHECK(h != NULL);
    if (!h)
        return;
    for (int k = 1; k <= kmax; k++) {
        float m = (float)(k * 1.5707963267948966);
        float *p = &h[4 * (k - 1)];
        p[0] = m;
        p[1] = -nextafterf(m, 0);
        p[2] = nextafterf(m, INFINITY);
        p[3] = -nextafterf(nextafterf(m, INFINITY), INFINITY);
    }
    GXT_OK(vm_check_f32(ctx, h, n, vm_fast_bound(ctx), "near k*pi/2"));
    free(h);
}

/* 2^20 + 7 random floats, every binade up to 2^18 alike, then the same with every
 * float (inf and NaN included) so that many blocks take libm's path. */
GXT_TEST(vmath_f32_random_sweep)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = (1 << 20) + 7;
    float *h = malloc((size_t)n * sizeof(float));
    GXT_CHECK(h != NULL);
    if (!h)
        return;
    for (int64_t i = 0; i < n; i++)
        h[i] = vm_rand_fast_f32();
    GXT_OK(vm_check_f32(ctx, h, n, vm_fast_bound(ctx), "random |x| <= 2^18"));
    for (int64_t i = 0; i < n; i++)
        h[i] = i % 64 ? vm_rand_fast_f32() : vm_bits_f32((uint32_t)gxt_rand_u64());
    GXT_OK(vm_check_f32(ctx, h, n, VM_ULP_ANY, "random, some beyond 2^18"));
    free(h);
}

/* Sizes around the vector width and the 256-element blocks, with large values at a few
 * places so that some blocks are redone; then a strided view and an in-place map
 * whose redo must still see the original inputs. */
GXT_TEST(vmath_f32_sizes_views_in_place)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t sizes[] = {0, 1, 31, 32, 33, 255, 256, 257, 1000, (1 << 20) + 7};
    double fast = vm_fast_bound(ctx);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k];
        float *h = malloc((size_t)(n ? n : 1) * sizeof(float));
        GXT_CHECK(h != NULL);
        if (!h)
            return;
        for (int64_t i = 0; i < n; i++)
            h[i] = (float)(gxt_rand01() * 200 - 100);
        char what[64];
        snprintf(what, sizeof what, "n = %lld", (long long)n);
        GXT_OK(vm_check_f32(ctx, h, n, fast, what));
        const int64_t at[] = {0, 31, 255, 256, 1000, 70000, n - 1};
        for (size_t j = 0; j < sizeof at / sizeof at[0]; j++)
            if (at[j] >= 0 && at[j] < n)
                h[at[j]] = j % 2 ? 1e7f : -INFINITY;
        snprintf(what, sizeof what, "n = %lld with large values", (long long)n);
        GXT_OK(vm_check_f32(ctx, h, n, VM_ULP_ANY, what));
        free(h);
    }

    /* a 2-d view: every third row, columns reversed */
    int64_t shape[2] = {300, 40}, m = 300 * 40;
    float *h = malloc((size_t)m * sizeof(float)), *got = malloc((size_t)m * sizeof(float));
    GXT_CHECK(h && got);
    if (!h || !got) {
        free(h);
        free(got);
        return;
    }
    for (int64_t i = 0; i < m; i++)
        h[i] = i % 997 == 5 ? 3e9f : (float)(gxt_rand01() * 2000 - 1000);
    gx_array *a = NULL, *v = NULL, *o = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 2, shape, h, &a));
    gx_slice sl[2] = {{1, GX_END, 3}, {GX_END, GX_END, -1}};
    GXT_OK(gx_array_view(a, sl, &v));
    GXT_OK(gx_map(ctx, "x -> sin(x) + 2 * cos(x)", 1, &v, NULL, &o));
    GXT_OK(gx_array_to_host(o, got, (size_t)100 * 40 * sizeof(float)));
    double worst = 0;
    for (int r = 0; r < 100; r++)
        for (int c = 0; c < 40; c++) {
            double x = h[(1 + 3 * r) * 40 + (39 - c)];
            /* sin + 2 cos: the rounding of the sum on top of the inputs' errors */
            double want = sin(x) + 2 * cos(x), tol = VM_ULP_ANY * 3 * 0x1p-23 + 0x1p-22;
            worst = fmax(worst, fabs(got[r * 40 + c] - want) / tol);
        }
    GXT_CHECK(worst <= 1);

    /* in place, contiguous: a block redone with libm must read the original inputs */
    GXT_OK(gx_map_into(ctx, "x -> sin(x)", 1, &a, NULL, a));
    GXT_OK(gx_array_to_host(a, got, (size_t)m * sizeof(float)));
    worst = 0;
    for (int64_t i = 0; i < m; i++)
        worst = fmax(worst, vm_err_f32(got[i], sin((double)h[i])));
    GXT_CHECK(worst <= VM_ULP_ANY);
    gx_array_release(a);
    gx_array_release(v);
    gx_array_release(o);
    free(h);
    free(got);
}

/* f64 sin and cos (libmvec / libm on the CPU) against long double. */
GXT_TEST(vmath_f64_values)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 100000;
    double *h = malloc((size_t)n * sizeof(double)), *o = malloc((size_t)n * sizeof(double));
    GXT_CHECK(h && o);
    if (!h || !o) {
        free(h);
        free(o);
        return;
    }
    float sp[256];
    int ns = vm_special_f32(sp);
    static const double more[] = {DBL_MIN, -DBL_MIN, 0x1p-1074, 4.9e-320, 1e-300, 1e100, DBL_MAX, 1e22};
    int64_t i = 0;
    for (; i < ns; i++)
        h[i] = sp[i];
    for (size_t j = 0; j < sizeof more / sizeof more[0]; j++)
        h[i++] = more[j];
    for (int k = 1; i + 2 < n && k < 200000; k = k * 5 / 4 + 1) {
        double m = (double)(k * 1.5707963267948966192313216916L);
        h[i++] = m;
        h[i++] = -nextafter(m, 0);
    }
    for (; i < n; i++) {
        uint64_t u = gxt_rand_u64();
        double d;
        memcpy(&d, &u, 8);
        h[i] = i % 2 ? d : (gxt_rand01() - 0.5) * ldexp(1.0, (int)(gxt_rand_u64() % 40));
    }
    gx_array *x = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x));
    static const char *const lams[3] = {"x -> sin(x)", "x -> cos(x)", "x -> sin(x)*sin(x) + cos(x)*cos(x)"};
    double worst[3] = {0, 0, 0};
    for (int l = 0; l < 3; l++) {
        gx_array *out = NULL;
        GXT_OK(gx_map(ctx, lams[l], 1, &x, NULL, &out));
        GXT_OK(gx_array_to_host(out, o, (size_t)n * sizeof(double)));
        gx_array_release(out);
        for (int64_t j = 0; j < n; j++) {
            long double xl = h[j];
            double e = l == 0   ? vm_err_f64(o[j], sinl(xl))
                       : l == 1 ? vm_err_f64(o[j], cosl(xl))
                                : vm_sum_err(o[j], isfinite(h[j]));
            worst[l] = fmax(worst[l], e);
        }
    }
    /* the sum: 2E*2^-52 from the inputs and three roundings, as for f32 */
    double sum_bound = VM_ULP_ANY * 0x1p-51 + 0x1p-52;
    printf("  f64: sin %.3f ulp, cos %.3f ulp, sin^2+cos^2 - 1 up to %.3g\n", worst[0], worst[1], worst[2]);
    if (!(worst[0] <= VM_ULP_ANY && worst[1] <= VM_ULP_ANY && worst[2] <= sum_bound))
        GXT_FAIL_AT(__FILE__, __LINE__, "f64: sin %.3f ulp, cos %.3f ulp, sin^2+cos^2 off by %.3g", worst[0], worst[1],
                    worst[2]);
    gx_array_release(x);
    free(h);
    free(o);
}

/* The CPU kernel for f32 sin/cos goes through gx's own sincos (a test of the wiring:
 * the sweeps above would pass with libmvec too). */
GXT_TEST(vmath_cpu_source_uses_fast_sincos)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(ctx, &k));
    if (k != GX_BACKEND_CPU) {
        gxt_skip("CPU backend only");
        return;
    }
    int64_t n = 8;
    gx_array *x = NULL, *xd = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &x));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &xd));
    size_t need = 0;
    GXT_OK(gx_map_source(ctx, "x -> sin(x) * cos(x)", 1, &x, NULL, NULL, 0, &need));
    char *src = malloc(need);
    GXT_CHECK(src != NULL);
    if (src) {
        GXT_OK(gx_map_source(ctx, "x -> sin(x) * cos(x)", 1, &x, NULL, src, need, &need));
        GXT_CHECK(strstr(src, "#define gx_sin_f32(x) gx__fsin_f32") != NULL);
        GXT_CHECK(strstr(src, "if (gx__m <= GX__SC_MAX_F32)") != NULL);
        free(src);
    }
    GXT_OK(gx_map_source(ctx, "x -> sin(x)", 1, &xd, NULL, NULL, 0, &need));
    src = malloc(need);
    GXT_CHECK(src != NULL);
    if (src) {
        GXT_OK(gx_map_source(ctx, "x -> sin(x)", 1, &xd, NULL, src, need, &need));
        GXT_CHECK(strstr(src, "gx__m <=") == NULL); /* f64 keeps the plain loop */
        free(src);
    }
    gx_array_release(x);
    gx_array_release(xd);
}

/* ------------------------------------------------------------ f16 arguments */

/* Distance of `got` from `want` in f16 ulps at want's magnitude (2^-24 below the
 * normal range). */
static double vm_ulp_f16_err(double got, double want)
{
    int e;
    frexp(want, &e);
    double u = want == 0 ? 0x1p-24 : fmax(ldexp(1.0, e - 11), 0x1p-24);
    return fabs(got - want) / u;
}

/* sin, cos and sin^2 + cos^2 of every f16 value (the half map of the benchmark;
 * on CUDA an f16 argument goes through gx's own sincos, on the CPU through the same
 * helper): within 1 f16 ulp of f64 libm rounded to f16, almost always equal to it,
 * the sign of a zero kept, inf and NaN giving NaN. */
GXT_TEST(vmath_f16_every_value)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 65536;
    uint16_t *x = malloc((size_t)n * 2), *o = malloc((size_t)n * 2);
    GXT_CHECK(x && o);
    if (!x || !o) {
        free(x), free(o);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        x[i] = (uint16_t)i;
    gx_array *ax = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F16, 1, &n, x, &ax));
    static const char *const fn[3] = {"x -> sin(x)", "x -> cos(x)", "x -> sin(x)*sin(x) + cos(x)*cos(x)"};
    for (int f = 0; f < 3; f++) {
        gx_array *ao = NULL;
        GXT_OK(gx_map(ctx, fn[f], 1, &ax, NULL, &ao));
        GXT_OK(gx_array_to_host(ao, o, (size_t)n * 2));
        int64_t off = 0, bad = 0;
        double worst = 0;
        for (int64_t i = 0; i < n && bad < 5; i++) {
            double xv = gx_f16_to_f32(x[i]), got = gx_f16_to_f32(o[i]);
            if (!isfinite(xv)) {
                if (!isnan(got) && bad++ < 5)
                    GXT_FAIL_AT(__FILE__, __LINE__, "%s at x=%g: %g, want NaN", fn[f], xv, got);
                continue;
            }
            double want = f == 0 ? sin(xv) : f == 1 ? cos(xv) : 1.0;
            uint16_t wbits = gx_f64_to_f16(want);
            double e = vm_ulp_f16_err(got, gx_f16_to_f32(wbits));
            worst = fmax(worst, e);
            off += o[i] != wbits;
            if ((e > 1.0 || (want == 0 && o[i] != wbits)) && bad++ < 5)
                GXT_FAIL_AT(__FILE__, __LINE__, "%s at x=%g (0x%04x): %.8g (0x%04x), want %.8g (0x%04x)", fn[f], xv,
                            (unsigned)x[i], got, (unsigned)o[i], gx_f16_to_f32(wbits), (unsigned)wbits);
        }
        printf("  %s: %lld of %lld values off the rounded f64 by <= 1 ulp (worst %.2f)\n", fn[f], (long long)off,
               (long long)n, worst);
        GXT_CHECK(off <= n / 100);
        gx_array_release(ao);
    }
    gx_array_release(ax);
    free(x), free(o);
}

/* On CUDA, sin and cos of an f16 value call gx's own helpers (range known), of an
 * f32 value CUDA's sincosf / sinf. */
GXT_TEST(vmath_cuda_source_f16_sincos)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(ctx, &k));
    if (k != GX_BACKEND_CUDA) {
        gxt_skip("CUDA backend only");
        return;
    }
    static const struct {
        gx_dtype dt;
        const char *fn, *want, *not_want;
    } c[4] = {
        {GX_F16, "x -> sin(x)*sin(x) + cos(x)*cos(x)", "gx__sincos_core(((float)(v0))", "sincosf("},
        {GX_F16, "x -> sin(x) + 1", "gx__sin_h(((float)(v0)))", "gx_sin_f32("},
        {GX_F32, "x -> sin(x)*sin(x) + cos(x)*cos(x)", "sincosf(", "gx__sincos_core("},
        {GX_F16, "x -> sin(2 * x)", "gx_sin_f32(", "gx__sin_h("},
    };
    int64_t n = 8;
    for (int i = 0; i < 4; i++) {
        gx_array *x = NULL;
        GXT_OK(gx_array_zeros(ctx, c[i].dt, 1, &n, &x));
        size_t need = 0;
        GXT_OK(gx_map_source(ctx, c[i].fn, 1, &x, NULL, NULL, 0, &need));
        char *src = malloc(need);
        GXT_CHECK(src != NULL);
        if (src) {
            GXT_OK(gx_map_source(ctx, c[i].fn, 1, &x, NULL, src, need, &need));
            const char *body = strstr(src, "gx-generated");
            GXT_CHECK(body && strstr(body, c[i].want) != NULL);
            GXT_CHECK(body && strstr(body, c[i].not_want) == NULL);
            if (!body || !strstr(body, c[i].want) || strstr(body, c[i].not_want))
                printf("  %s on %s: wanted %s, not %s\n", c[i].fn, gx_dtype_name(c[i].dt), c[i].want, c[i].not_want);
            free(src);
        }
        gx_array_release(x);
    }
}
