/* test_half.c -- f16 and bf16: host conversions (every pattern, every tie), arrays,
 * conversions in kernels, lambdas.  References are written independently of the
 * library: values by ldexp, rounding by nearbyint in double on the format's grid. */
#include "gx_test.h"

/* `mb` mantissa bits, `bias`: 10/15 (f16) or 7/127 (bf16). */
static double ref_value(uint16_t h, int mb, int bias)
{
    int e = (h & 0x7fff) >> mb, m = h & ((1 << mb) - 1), emax = 2 * bias + 1;
    double v = e == emax ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, 1 - bias - mb) : ldexp(m + (1 << mb), e - bias - mb);
    return (h & 0x8000) ? -v : v;
}

/* Round a finite or infinite double to the format, ties to even (no NaN). */
static uint16_t ref_round(double x, int mb, int bias)
{
    uint16_t s = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    int emax = 2 * bias + 1;
    uint16_t inf = (uint16_t)(emax << mb);
    double maxv = ref_value((uint16_t)(inf - 1), mb, bias), ulp_max = ldexp(1, bias - mb);
    if (a >= maxv + ulp_max / 2)
        return s | inf;
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    int ex = e - 1 < 1 - bias ? 1 - bias : e - 1;
    double q = ldexp(1, ex - mb);
    double r = nearbyint(a / q) * q; /* a / q is exact (power of two), nearbyint ties to even */
    /* r is a format value: find its pattern by bisection over the ordered positives */
    uint16_t lo = 0, hi = inf;
    while (lo < hi) {
        uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (ref_value(mid, mb, bias) < r)
            lo = (uint16_t)(mid + 1);
        else
            hi = mid;
    }
    return s | lo;
}

static bool same_f32(float a, float b) { return memcmp(&a, &b, 4) == 0; }

GXT_TEST(half_host_every_pattern_to_f32_and_back)
{
    for (uint32_t p = 0; p < 65536; p++) {
        uint16_t h = (uint16_t)p;
        double v16 = ref_value(h, 10, 15), vb = ref_value(h, 7, 127);
        float f = gx_f16_to_f32(h), g = gx_bf16_to_f32(h);
        if (isnan(v16)) {
            GXT_CHECK(isnan(f) && !signbit(f) == !(h & 0x8000));
            /* NaN round trip: quiet bit set, payload kept */
            GXT_CHECK(gx_f32_to_f16(f) == (h | 0x200));
            GXT_CHECK(gx_f64_to_f16((double)f) == (h | 0x200));
        } else {
            if (!((double)f == v16 && !signbit(f) == !signbit(v16)))
                GXT_FAIL_AT(__FILE__, __LINE__, "f16 %04x -> %a, want %a", h, f, v16);
            GXT_CHECK(gx_f32_to_f16(f) == h);
            GXT_CHECK(gx_f64_to_f16(v16) == h);
        }
        if (isnan(vb)) {
            GXT_CHECK(isnan(g) && gx_f32_to_bf16(g) == (h | 0x40) && gx_f64_to_bf16((double)g) == (h | 0x40));
        } else {
            GXT_CHECK((double)g == vb && !signbit(g) == !signbit(vb));
            GXT_CHECK(gx_f32_to_bf16(g) == h && gx_f64_to_bf16(vb) == h);
        }
        if (gxt_failures > 20)
            return;
    }
}

/* Midpoints between neighbours (ties), just above and below them, in f32 and f64. */
static void check_ties(int mb, int bias, uint16_t (*f32)(float), uint16_t (*f64)(double))
{
    uint16_t inf = (uint16_t)((2 * bias + 1) << mb);
    for (uint16_t h = 0; h < inf; h++) {
        double a = ref_value(h, mb, bias), b = h + 1 == inf ? a + ldexp(1, bias - mb) : ref_value(h + 1, mb, bias);
        double mid = (a + b) / 2;
        for (int sgn = 0; sgn < 2; sgn++) {
            double m = sgn ? -mid : mid;
            double pts[5] = {m, nextafter(m, 0), nextafter(m, 2 * m), (double)nextafterf((float)m, 0),
                             (double)nextafterf((float)m, (float)(2 * m))};
            for (int k = 0; k < 5; k++) {
                uint16_t want = ref_round(pts[k], mb, bias);
                if (f64(pts[k]) != want)
                    GXT_FAIL_AT(__FILE__, __LINE__, "f64 %a -> %04x, want %04x", pts[k], f64(pts[k]), want);
                if ((double)(float)pts[k] == pts[k] && f32((float)pts[k]) != want)
                    GXT_FAIL_AT(__FILE__, __LINE__, "f32 %a -> %04x, want %04x", pts[k], f32((float)pts[k]), want);
            }
        }
        if (gxt_failures > 20)
            return;
    }
}

GXT_TEST(half_host_rounding_ties_f16) { check_ties(10, 15, gx_f32_to_f16, gx_f64_to_f16); }
GXT_TEST(half_host_rounding_ties_bf16) { check_ties(7, 127, gx_f32_to_bf16, gx_f64_to_bf16); }

GXT_TEST(half_host_specials)
{
    GXT_CHECK(gx_f32_to_f16(65504.0f) == 0x7bff && gx_f32_to_f16(65519.99f) == 0x7bff);
    GXT_CHECK(gx_f32_to_f16(65520.0f) == 0x7c00 && gx_f32_to_f16(-1e30f) == 0xfc00);
    GXT_CHECK(gx_f32_to_f16(INFINITY) == 0x7c00 && gx_f64_to_f16(-INFINITY) == 0xfc00);
    GXT_CHECK(gx_f32_to_f16(0x1p-24f) == 0x0001 && gx_f32_to_f16(0x1p-25f) == 0x0000);
    GXT_CHECK(gx_f32_to_f16(0x1.000002p-25f) == 0x0001 && gx_f32_to_f16(-0.0f) == 0x8000);
    GXT_CHECK(gx_f32_to_f16(0x1p-149f) == 0 && gx_f32_to_bf16(0x1p-149f) == 0 && gx_f32_to_bf16(0x1p-133f) == 1);
    GXT_CHECK(gx_f32_to_bf16(3.4028235e38f) == 0x7f80 && gx_f64_to_bf16(1e300) == 0x7f80);
    float qn; /* NaN payloads: the top bits survive, the quiet bit is set */
    uint32_t bits = 0xff812345u;
    memcpy(&qn, &bits, 4);
    GXT_CHECK(gx_f32_to_f16(qn) == (0xfe00 | ((0x012345u >> 13) & 0x3ff)));
    GXT_CHECK(gx_f32_to_bf16(qn) == 0xffc1);
    GXT_CHECK(isnan(gx_f16_to_f32(0x7c01)) && isnan(gx_bf16_to_f32(0x7f81)));
    GXT_CHECK(gx_f16_to_f32(0x0001) == 0x1p-24f && gx_bf16_to_f32(0x0001) == 0x1p-133f);
}

/* Every pattern and every tie through the kernels: f32/f64 -> half and half -> f32,
 * against the host conversions (which the tests above pin). */
static void kernel_roundtrip(gx_dtype ht, uint16_t (*f32)(float), uint16_t (*f64)(double), float (*back)(uint16_t))
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 65536 * 3;
    double *d = malloc((size_t)n * 8);
    float *f = malloc((size_t)n * 4);
    uint16_t *h = malloc((size_t)n * 2), *pat = malloc(65536 * 2);
    float *fb = malloc(65536 * 4);
    for (int64_t p = 0; p < 65536; p++) {
        pat[p] = (uint16_t)p;
        double a = back((uint16_t)p), b = back((uint16_t)(p + 1 < 65536 ? p + 1 : p));
        double mid = isfinite(a) && isfinite(b) ? (a + b) / 2 : a;
        d[3 * p] = isnan(a) ? a : a, d[3 * p + 1] = mid, d[3 * p + 2] = isfinite(mid) ? nextafter(mid, 0) : mid;
    }
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)d[i];
    gx_array *ad = NULL, *af = NULL, *ah = NULL, *hp = NULL, *back32 = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, d, &ad));
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, f, &af));
    GXT_OK(gx_array_clone(ad, ht, &ah));
    GXT_OK(gx_array_to_host(ah, h, (size_t)n * 2));
    for (int64_t i = 0; i < n && gxt_failures < 20; i++)
        if (h[i] != f64(d[i]))
            GXT_FAIL_AT(__FILE__, __LINE__, "f64 %a -> %04x, host %04x", d[i], h[i], f64(d[i]));
    gx_array_release(ah);
    GXT_OK(gx_array_clone(af, ht, &ah));
    GXT_OK(gx_array_to_host(ah, h, (size_t)n * 2));
    for (int64_t i = 0; i < n && gxt_failures < 20; i++)
        if (h[i] != f32(f[i]))
            GXT_FAIL_AT(__FILE__, __LINE__, "f32 %a -> %04x, host %04x", f[i], h[i], f32(f[i]));
    int64_t m = 65536;
    GXT_OK(gx_array_from_host(ctx, ht, 1, &m, pat, &hp));
    GXT_OK(gx_array_clone(hp, GX_F32, &back32));
    GXT_OK(gx_array_to_host(back32, fb, 65536 * 4));
    for (int64_t p = 0; p < 65536 && gxt_failures < 20; p++)
        if (!same_f32(fb[p], back((uint16_t)p)))
            GXT_FAIL_AT(__FILE__, __LINE__, "%04x -> %a, host %a", (unsigned)p, fb[p], back((uint16_t)p));
    gx_array_release(ad), gx_array_release(af), gx_array_release(ah), gx_array_release(hp), gx_array_release(back32);
    free(d), free(f), free(h), free(pat), free(fb);
}

GXT_TEST(half_kernel_conversions_f16) { kernel_roundtrip(GX_F16, gx_f32_to_f16, gx_f64_to_f16, gx_f16_to_f32); }
GXT_TEST(half_kernel_conversions_bf16) { kernel_roundtrip(GX_BF16, gx_f32_to_bf16, gx_f64_to_bf16, gx_bf16_to_f32); }

static uint16_t to_half(gx_dtype t, double v) { return t == GX_F16 ? gx_f64_to_f16(v) : gx_f64_to_bf16(v); }
static double from_half(gx_dtype t, uint16_t h) { return t == GX_F16 ? gx_f16_to_f32(h) : gx_bf16_to_f32(h); }

GXT_TEST(half_fill_get_set_iota_print)
{
    gx_ctx *ctx = gxt_ctx();
    gx_dtype ts[2] = {GX_F16, GX_BF16};
    for (int k = 0; k < 2; k++) {
        gx_dtype t = ts[k];
        const int64_t sizes[] = {0, 1, 31, 32, 33, 1001};
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            int64_t n = sizes[z];
            gx_array *a = NULL, *io = NULL;
            GXT_OK(gx_array_zeros(ctx, t, 1, &n, &a));
            GXT_OK(gx_array_fill_f64(a, 1.0 / 3.0));
            uint16_t *h = malloc((size_t)n * 2 + 2);
            GXT_OK(gx_array_to_host(a, h, (size_t)n * 2));
            for (int64_t i = 0; i < n; i++)
                GXT_CHECK(h[i] == to_half(t, 1.0 / 3.0));
            GXT_OK(gx_array_iota(ctx, t, n, -3.0, 0.25, &io));
            GXT_OK(gx_array_to_host(io, h, (size_t)n * 2));
            for (int64_t i = 0; i < n; i++)
                GXT_CHECK(h[i] == to_half(t, -3.0 + 0.25 * (double)i));
            if (n > 5) {
                int64_t idx = 5;
                uint16_t v = to_half(t, 2.5), got = 0;
                GXT_OK(gx_array_set(a, &idx, &v));
                GXT_OK(gx_array_get(a, &idx, &got));
                GXT_CHECK(got == v && from_half(t, got) == 2.5);
            }
            free(h);
            gx_array_release(a), gx_array_release(io);
        }
        int64_t three = 3;
        uint16_t vals[3] = {to_half(t, 1.5), to_half(t, -0.25), to_half(t, 65504.0)};
        gx_array *p = NULL;
        GXT_OK(gx_array_from_host(ctx, t, 1, &three, vals, &p));
        char buf[256];
        size_t need = 0;
        GXT_OK(gx_array_format(p, NULL, buf, sizeof buf, &need));
        GXT_CHECK(strstr(buf, "1.5e+00") && strstr(buf, "-2.5e-01") && strstr(buf, gx_dtype_name(t)));
        gx_array_release(p);
    }
}

/* x, y -> x*y + 1 over halves, also through strided and reversed views; result dtype
 * rules of docs/LAMBDAS.md. */
GXT_TEST(half_map_values_views_and_result_dtypes)
{
    gx_ctx *ctx = gxt_ctx();
    gx_dtype ts[2] = {GX_F16, GX_BF16};
    for (int k = 0; k < 2; k++) {
        gx_dtype t = ts[k];
        double eps = t == GX_F16 ? 0x1p-11 : 0x1p-8;
        const int64_t sizes[] = {0, 1, 7, 31, 32, 33, 4097};
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            int64_t n = sizes[z], n2 = 2 * n;
            uint16_t *x = malloc((size_t)n2 * 2 + 2), *y = malloc((size_t)n * 2 + 2), *o = malloc((size_t)n * 2 + 2);
            for (int64_t i = 0; i < n2; i++)
                x[i] = to_half(t, gxt_rand01() * 8 - 4);
            for (int64_t i = 0; i < n; i++)
                y[i] = to_half(t, gxt_rand01() * 8 - 4);
            gx_array *ax = NULL, *ay = NULL, *vx = NULL, *ao = NULL;
            GXT_OK(gx_array_from_host(ctx, t, 1, &n2, x, &ax));
            GXT_OK(gx_array_from_host(ctx, t, 1, &n, y, &ay));
            /* every other element of x, from the end backwards */
            gx_slice sl = {n2 - 1, -n2 - 1, -2};
            GXT_OK(gx_array_view(ax, &sl, &vx));
            gx_array *in[2] = {vx, ay};
            GXT_OK(gx_map(ctx, "x, y -> x * y + 1", 2, in, NULL, &ao));
            gx_array_desc d;
            GXT_OK(gx_array_describe(ao, &d));
            GXT_CHECK(d.dtype == t);
            GXT_OK(gx_array_to_host(ao, o, (size_t)n * 2));
            for (int64_t i = 0; i < n; i++) {
                double xv = from_half(t, x[n2 - 1 - 2 * i]), yv = from_half(t, y[i]), want = xv * yv + 1;
                double got = from_half(t, o[i]);
                /* f32 arithmetic (2 roundings of 2^-24) then one half rounding */
                if (!(fabs(got - want) <= eps * fabs(want) + 0x1p-22 * (fabs(xv * yv) + 1)))
                    GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld i=%lld: %g, want %g", gx_dtype_name(t), (long long)n,
                                (long long)i, got, want);
            }
            free(x), free(y), free(o);
            gx_array_release(ax), gx_array_release(ay), gx_array_release(vx), gx_array_release(ao);
        }
    }
    /* promotion: f16+f32 -> f32, f16+bf16 -> f32, f16+i32 -> f16, comparisons -> bool */
    int64_t n = 5;
    gx_array *h = NULL, *b = NULL, *f = NULL, *i = NULL, *o = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F16, n, 0.5, 1, &h));
    GXT_OK(gx_array_iota(ctx, GX_BF16, n, 0.5, 1, &b));
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0.5, 1, &f));
    GXT_OK(gx_array_iota(ctx, GX_I32, n, 1, 1, &i));
    struct {
        gx_array *a, *b;
        const char *lam;
        gx_dtype want;
    } cases[] = {{h, f, "a, b -> a + b", GX_F32}, {h, b, "a, b -> a + b", GX_F32}, {h, i, "a, b -> a + b", GX_F16},
                 {b, i, "a, b -> a * b", GX_BF16}, {h, h, "a, b -> a < b", GX_BOOL}, {b, b, "a, b -> sqrt(a) + b", GX_BF16}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gx_array *in[2] = {cases[c].a, cases[c].b};
        GXT_OK(gx_map(ctx, cases[c].lam, 2, in, NULL, &o));
        gx_array_desc d;
        GXT_OK(gx_array_describe(o, &d));
        if (d.dtype != cases[c].want)
            GXT_FAIL_AT(__FILE__, __LINE__, "%s: %s, want %s", cases[c].lam, gx_dtype_name(d.dtype),
                        gx_dtype_name(cases[c].want));
        double got[5];
        gx_array *o64 = NULL;
        GXT_OK(gx_array_clone(o, GX_F64, &o64));
        GXT_OK(gx_array_to_host(o64, got, sizeof got));
        if (c == 2)
            for (int k = 0; k < 5; k++)
                GXT_CHECK(got[k] == 0.5 + k + 1 + k);
        gx_array_release(o), gx_array_release(o64);
    }
    gx_array_release(h), gx_array_release(b), gx_array_release(f), gx_array_release(i);
}

/* Maps to and from f16 over every bit pattern, shuffled so that vectors mix finite
 * values with inf and NaN: on CUDA a vector of halves takes the fast conversions
 * only when all its inputs are finite and no result is NaN, else it is redone
 * through the bit-exact path; the bits must be the host's either way. */
GXT_TEST(half_map_every_pattern_mixed_vectors)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 65536;
    uint16_t *h = malloc((size_t)n * 2), *oh = malloc((size_t)n * 2);
    float *f = malloc((size_t)n * 4), *of = malloc((size_t)n * 4);
    GXT_CHECK(h && oh && f && of);
    if (!h || !oh || !f || !of) {
        free(h), free(oh), free(f), free(of);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        h[i] = (uint16_t)((uint32_t)i * 40503u); /* odd multiplier: a permutation */
        f[i] = gx_f16_to_f32(h[i]) * (i % 3 ? 1.0f : 1.0009765625f);
    }
    gx_array *ah = NULL, *af = NULL, *toh = NULL, *tof = NULL, *same = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F16, 1, &n, h, &ah));
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, f, &af));
    GXT_OK(gx_array_empty(ctx, GX_F16, 1, &n, &toh));
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &tof));
    GXT_OK(gx_map_into(ctx, "x -> x", 1, &af, NULL, toh)); /* f32 -> f16 store */
    GXT_OK(gx_map_into(ctx, "x -> x", 1, &ah, NULL, tof)); /* f16 load -> f32 */
    GXT_OK(gx_map(ctx, "x -> x", 1, &ah, NULL, &same));    /* f16 -> f16 */
    GXT_OK(gx_array_to_host(toh, oh, (size_t)n * 2));
    for (int64_t i = 0; i < n && gxt_failures < 10; i++)
        if (oh[i] != gx_f32_to_f16(f[i]))
            GXT_FAIL_AT(__FILE__, __LINE__, "f32 %a -> f16 %04x, host %04x", f[i], oh[i], gx_f32_to_f16(f[i]));
    GXT_OK(gx_array_to_host(tof, of, (size_t)n * 4));
    for (int64_t i = 0; i < n && gxt_failures < 10; i++)
        if (!same_f32(of[i], gx_f16_to_f32(h[i])))
            GXT_FAIL_AT(__FILE__, __LINE__, "f16 %04x -> %a, host %a", h[i], of[i], gx_f16_to_f32(h[i]));
    GXT_OK(gx_array_to_host(same, oh, (size_t)n * 2));
    for (int64_t i = 0; i < n && gxt_failures < 10; i++)
        if (oh[i] != gx_f32_to_f16(gx_f16_to_f32(h[i])))
            GXT_FAIL_AT(__FILE__, __LINE__, "f16 %04x -> f16 %04x, host %04x", h[i], oh[i],
                        gx_f32_to_f16(gx_f16_to_f32(h[i])));
    gx_array_release(ah), gx_array_release(af), gx_array_release(toh), gx_array_release(tof);
    gx_array_release(same);
    free(h), free(oh), free(f), free(of);
}

/* sin^2 + cos^2 over f16 (the benchmark's map), vs f64 of the rounded input. */
GXT_TEST(half_map_math)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 10007;
    uint16_t *x = malloc((size_t)n * 2), *o = malloc((size_t)n * 2);
    for (int64_t i = 0; i < n; i++)
        x[i] = gx_f64_to_f16(gxt_rand01() * 200 - 100);
    gx_array *ax = NULL, *ao = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F16, 1, &n, x, &ax));
    GXT_OK(gx_map(ctx, "x -> sin(x)*sin(x) + cos(x)*cos(x) + exp(x / 64)", 1, &ax, NULL, &ao));
    GXT_OK(gx_array_to_host(ao, o, (size_t)n * 2));
    for (int64_t i = 0; i < n; i++) {
        double xv = gx_f16_to_f32(x[i]), want = 1 + exp(xv / 64), got = gx_f16_to_f32(o[i]);
        if (!(fabs(got - want) <= 0x1p-11 * want + 1e-5 * want))
            GXT_FAIL_AT(__FILE__, __LINE__, "x=%g: %g want %g", xv, got, want);
    }
    free(x), free(o);
    gx_array_release(ax), gx_array_release(ao);
}

#include "gx/reduce.h"

/* Sums of halves accumulate in f32: 2^15 ones sum to 32768 in f16 (a running f16
 * sum would stop at 2048); max/min/argmax exact; axis sums; a chosen f64 accumulator. */
GXT_TEST(half_reductions)
{
    gx_ctx *ctx = gxt_ctx();
    gx_dtype ts[2] = {GX_F16, GX_BF16};
    for (int k = 0; k < 2; k++) {
        gx_dtype t = ts[k];
        const int64_t sizes[] = {1, 31, 32, 33, 1000, 32768, 100003};
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            int64_t n = sizes[z];
            uint16_t *x = malloc((size_t)n * 2);
            double sum = 0, mx = -INFINITY;
            int64_t imx = 0;
            for (int64_t i = 0; i < n; i++) {
                x[i] = to_half(t, gxt_rand01() * 2 - 0.5);
                double v = from_half(t, x[i]);
                sum += v;
                if (v > mx)
                    mx = v, imx = i;
            }
            gx_array *a = NULL;
            GXT_OK(gx_array_from_host(ctx, t, 1, &n, x, &a));
            gx_scalar s;
            GXT_OK(gx_reduce(ctx, "+", a, NULL, &s));
            GXT_CHECK(s.dtype == t);
            /* f32 accumulation: relative error <= n * 2^-24 * sum|x|, then one rounding */
            double bound = fabs(sum) * (t == GX_F16 ? 0x1p-11 : 0x1p-8) + (double)n * 0x1p-24 * (double)n;
            if (!(fabs(s.v.f - sum) <= bound))
                GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld sum %g want %g", gx_dtype_name(t), (long long)n, s.v.f, sum);
            GXT_CHECK(s.v.f == from_half(t, to_half(t, s.v.f))); /* a half value */
            gx_reduce_opts o64 = {0};
            o64.dtype = GX_F64;
            GXT_OK(gx_reduce(ctx, "+", a, &o64, &s));
            GXT_CHECK(s.dtype == GX_F64 && fabs(s.v.f - sum) <= 1e-9 * (double)n);
            GXT_OK(gx_reduce(ctx, "max", a, NULL, &s));
            GXT_CHECK(s.dtype == t && s.v.f == mx);
            int64_t idx = -1;
            GXT_OK(gx_findmax(a, &s, &idx));
            GXT_CHECK(idx == imx && s.v.f == mx);
            GXT_OK(gx_mapreduce(ctx, "x -> x * x", "+", 1, &a, NULL, &s));
            free(x);
            gx_array_release(a);
        }
        /* many small values: 2^16 of 2^-10 each = 64 (exact in f32, not in a half sum) */
        int64_t n = 65536;
        gx_array *a = NULL;
        GXT_OK(gx_array_zeros(ctx, t, 1, &n, &a));
        GXT_OK(gx_array_fill_f64(a, 0x1p-10));
        gx_scalar s;
        GXT_OK(gx_reduce(ctx, "sum", a, NULL, &s));
        GXT_CHECK(s.v.f == 64.0);
        GXT_OK(gx_reduce(ctx, "mean", a, NULL, &s));
        GXT_CHECK(s.v.f == 0x1p-10);
        /* along an axis: (256, 256) rows of 2^-10 -> 0.25 each */
        gx_array *m = NULL, *r = NULL;
        int64_t sh[2] = {256, 256};
        GXT_OK(gx_array_reshape(a, 2, sh, &m));
        int ax[1] = {1};
        gx_reduce_opts ro = {0};
        ro.axes = ax, ro.naxes = 1;
        GXT_OK(gx_reduce_to(ctx, "+", m, &ro, &r));
        gx_array_desc d;
        GXT_OK(gx_array_describe(r, &d));
        GXT_CHECK(d.dtype == t && d.size == 256);
        uint16_t rows[256];
        GXT_OK(gx_array_to_host(r, rows, sizeof rows));
        for (int i = 0; i < 256; i++)
            GXT_CHECK(from_half(t, rows[i]) == 0.25);
        gx_array_release(a), gx_array_release(m), gx_array_release(r);
    }
}
