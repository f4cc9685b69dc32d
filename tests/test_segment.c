/* test_segment.c -- gx/segment.h: segmented reduce / scan / argmin / argmax over CSR
 * offsets, reduce_by_key and run-length encoding, against straightforward host
 * loops: every dtype and operator, empty segments at the start, middle and end, no
 * segments, one huge segment, segments of one, random lengths across tiles, views,
 * offsets of several integer dtypes, and bad input. */
#include "gx_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gx_dtype all_dt[] = {GX_BOOL, GX_I8, GX_I16, GX_I32, GX_I64, GX_U8,
                                  GX_U16,  GX_U32, GX_U64, GX_F32, GX_F64};
#define NDT ((int)(sizeof all_dt / sizeof all_dt[0]))

static bool is_fl(gx_dtype t) { return t == GX_F32 || t == GX_F64; }
static bool is_uns(gx_dtype t) { return t == GX_U8 || t == GX_U16 || t == GX_U32 || t == GX_U64; }

/* An array of dtype t holding the (small, exact) values v. */
static gx_array *mk(gx_ctx *ctx, gx_dtype t, const double *v, int64_t n)
{
    gx_array *d = NULL, *a = NULL;
    GXT_CHECK(gx_array_from_host(ctx, GX_F64, 1, &n, v, &d) == GX_OK);
    GXT_CHECK(gx_array_clone(d, t, &a) == GX_OK);
    gx_array_release(d);
    return a;
}

static gx_array *mk_off(gx_ctx *ctx, gx_dtype t, const int64_t *o, int64_t nseg)
{
    int64_t len = nseg + 1;
    gx_array *d = NULL, *a = NULL;
    GXT_CHECK(gx_array_from_host(ctx, GX_I64, 1, &len, o, &d) == GX_OK);
    GXT_CHECK(gx_array_clone(d, t, &a) == GX_OK);
    gx_array_release(d);
    return a;
}

/* Any array's values as doubles (exact for the small values used here). */
static int64_t sz(const gx_array *a)
{
    int64_t n = 0;
    GXT_CHECK(gx_array_size(a, &n) == GX_OK);
    return n;
}

static gx_dtype dt(const gx_array *a)
{
    gx_array_desc d;
    memset(&d, 0, sizeof d);
    GXT_CHECK(gx_array_describe(a, &d) == GX_OK);
    return d.dtype;
}

static double *to_f64(gx_array *a)
{
    gx_array *d = NULL;
    int64_t n = sz(a);
    double *h = malloc((size_t)(n ? n : 1) * 8);
    GXT_CHECK(gx_array_clone(a, GX_F64, &d) == GX_OK);
    if (n)
        GXT_CHECK(gx_array_to_host(d, h, (size_t)n * 8) == GX_OK);
    gx_array_release(d);
    return h;
}

/* The named operator on doubles holding integers or floats (no NaN here). */
static double ref_op(const char *op, double a, double b, bool fl)
{
    if (!strcmp(op, "+"))
        return a + b;
    if (!strcmp(op, "*"))
        return a * b;
    if (!strcmp(op, "max"))
        return a != a ? b : (b > a ? b : a);
    if (!strcmp(op, "min"))
        return a != a ? b : (b < a ? b : a);
    if (!strcmp(op, "&&"))
        return (a != 0) && (b != 0);
    if (!strcmp(op, "||"))
        return (a != 0) || (b != 0);
    (void)fl;
    int64_t x = (int64_t)a, y = (int64_t)b;
    return (double)(!strcmp(op, "&") ? (x & y) : !strcmp(op, "|") ? (x | y) : (x ^ y));
}

/* The neutral element (gx/reduce.h) as the result dtype stores it, as a double. */
static double ref_neutral(const char *op, gx_dtype t)
{
    if (!strcmp(op, "*") || !strcmp(op, "&&"))
        return 1;
    if (!strcmp(op, "&"))
        return t == GX_BOOL ? 1 : is_uns(t) ? (t == GX_U8 ? 255 : t == GX_U16 ? 65535 : t == GX_U32 ? 4294967295.0 : 18446744073709551615.0) : -1;
    if (!strcmp(op, "max") || !strcmp(op, "min")) {
        bool mx = !strcmp(op, "max");
        if (is_fl(t))
            return NAN;
        if (t == GX_BOOL)
            return mx ? 0 : 1;
        int bits = (int)gx_dtype_size(t) * 8;
        if (is_uns(t))
            return mx ? 0 : ldexp(1, bits) - 1;
        return mx ? -ldexp(1, bits - 1) : ldexp(1, bits - 1) - 1;
    }
    return 0;
}

static double small_val(gx_dtype t, const char *op)
{
    if (t == GX_BOOL)
        return gxt_rand01() < 0.5;
    if (!strcmp(op, "*"))
        return is_uns(t) ? 1 : (gxt_rand01() < 0.5 ? -1 : 1);
    int r = (int)(gxt_rand01() * 7);
    return is_uns(t) ? r : r - 3;
}

/* Offsets with empty segments at the start, in the middle and at the end, and lengths
 * that cross the CPU tile (65536) and GPU tile (2048) boundaries. */
static int64_t mixed_offsets(int64_t *o, int64_t cap)
{
    static const int64_t lens[] = {0, 0, 1, 5, 0, 31, 32, 33, 2047, 2048, 2049, 0, 0, 70000, 3, 0, 1, 1, 150000, 7, 0, 0};
    int64_t k = 0;
    o[0] = 0;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0] && k + 1 < cap; i++, k++)
        o[k + 1] = o[k] + lens[i];
    return k;
}

/* out[s] for named op over x[o[s]..o[s+1]), result dtype rt. */
static void check_reduce(gx_ctx *ctx, const char *op, gx_dtype t, const int64_t *o, int64_t nseg, const double *v,
                         gx_array *x, gx_array *off)
{
    gx_array *r = NULL;
    bool bitwise = !strcmp(op, "&") || !strcmp(op, "|") || !strcmp(op, "^");
    if (is_fl(t) && bitwise) {
        GXT_STATUS(gx_segment_reduce(ctx, op, x, off, NULL, &r), GX_ERR_DTYPE);
        GXT_MSG_HAS("bitwise");
        return;
    }
    gx_status s = gx_segment_reduce(ctx, op, x, off, NULL, &r);
    GXT_OK(s);
    if (s != GX_OK)
        return;
    GXT_EQ_I64(sz(r), nseg);
    gx_dtype rt = dt(r);
    double *h = to_f64(r);
    for (int64_t g = 0; g < nseg; g++) {
        double e = ref_neutral(op, rt);
        for (int64_t i = o[g]; i < o[g + 1]; i++)
            e = i == o[g] && strcmp(op, "&&") && strcmp(op, "||") ? v[i] : ref_op(op, e, v[i], is_fl(t));
        if (!strcmp(op, "&&") || !strcmp(op, "||"))
            e = e != 0;
        if (!(h[g] == e || (e != e && h[g] != h[g]))) {
            GXT_FAIL_AT(__FILE__, __LINE__, "%s on %s: segment %lld [%lld, %lld): got %g, want %g", op,
                        gx_dtype_name(t), (long long)g, (long long)o[g], (long long)o[g + 1], h[g], e);
            break;
        }
    }
    free(h);
    gx_array_release(r);
}

GXT_TEST(segment_reduce_every_dtype_and_operator)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t o[64];
    int64_t nseg = mixed_offsets(o, 64), n = o[nseg];
    const char *ops[] = {"+", "*", "max", "min", "&", "|", "^", "&&", "||"};
    double *v = malloc((size_t)n * 8);
    for (int d = 0; d < NDT; d++)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            for (int64_t i = 0; i < n; i++)
                v[i] = small_val(all_dt[d], ops[k]);
            gx_array *x = mk(ctx, all_dt[d], v, n), *off = mk_off(ctx, GX_I64, o, nseg);
            check_reduce(ctx, ops[k], all_dt[d], o, nseg, v, x, off);
            gx_array_release(x);
            gx_array_release(off);
        }
    free(v);
}

/* Sizes: no segments, all-empty segments, one huge segment, segments of one, random
 * lengths over 2^20 + 7 elements; offsets of i32, u32, i64, u8; x views. */
GXT_TEST(segment_reduce_shapes_offset_dtypes_and_views)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t N = (1 << 20) + 7;
    int64_t *o = malloc((size_t)(N + 2) * 8);
    double *v = malloc((size_t)N * 2 * 8);
    for (int64_t i = 0; i < 2 * N; i++)
        v[i] = (double)((int)(gxt_rand01() * 200) - 100);
    for (int c = 0; c < 6; c++) {
        int64_t nseg, n;
        if (c == 0) { /* offsets [0], n = 0 */
            nseg = 0;
            n = 0;
            o[0] = 0;
        } else if (c == 1) { /* all empty */
            nseg = 5;
            n = 0;
            memset(o, 0, 6 * 8);
        } else if (c == 2) { /* one huge */
            nseg = 1;
            n = N;
            o[0] = 0;
            o[1] = N;
        } else if (c == 3) { /* all of length 1 */
            nseg = n = 70001;
            for (int64_t i = 0; i <= n; i++)
                o[i] = i;
        } else { /* random lengths, some empty, mean ~ 300 (c 4) or ~ 3 (c 5) */
            n = N;
            nseg = 0;
            o[0] = 0;
            int mean = c == 4 ? 600 : 6;
            while (o[nseg] < n) {
                int64_t l = (int64_t)(gxt_rand01() * mean);
                o[nseg + 1] = o[nseg] + l < n ? o[nseg] + l : n;
                nseg++;
            }
        }
        const gx_dtype odt[] = {GX_I64, GX_I32, GX_U32, GX_U8};
        for (int q = 0; q < 4; q++) {
            if (odt[q] == GX_U8 && n > 255)
                continue;
            gx_array *off = mk_off(ctx, odt[q], o, nseg);
            gx_array *x = mk(ctx, GX_I32, v, n);
            check_reduce(ctx, "+", GX_I32, o, nseg, v, x, off);
            check_reduce(ctx, "max", GX_I32, o, nseg, v, x, off);
            gx_array_release(x);
            gx_array_release(off);
        }
        /* strided view x = base[::2] and a reversed view */
        int64_t n2 = 2 * n;
        gx_array *base = mk(ctx, GX_F64, v, n2 ? n2 : 0), *xs = NULL, *xr = NULL;
        gx_slice s2 = {0, GX_END, 2}, sr = {GX_END, GX_END, -1};
        (void)sr;
        GXT_OK(gx_array_view(base, &s2, &xs));
        double *ve = malloc((size_t)(n ? n : 1) * 8);
        for (int64_t i = 0; i < n; i++)
            ve[i] = v[2 * i];
        gx_array *off = mk_off(ctx, GX_I64, o, nseg);
        check_reduce(ctx, "+", GX_F64, o, nseg, ve, xs, off);
        if (n > 0) {
            gx_array *half = NULL;
            gx_slice h1 = {0, n, 1}, rv = {n - 1, -n - 1, -1};
            GXT_OK(gx_array_view(base, &h1, &half));
            GXT_OK(gx_array_view(half, &rv, &xr));
            for (int64_t i = 0; i < n; i++)
                ve[i] = v[n - 1 - i];
            check_reduce(ctx, "min", GX_F64, o, nseg, ve, xr, off);
            gx_array_release(half);
        }
        gx_array_release(off);
        gx_array_release(xs);
        gx_array_release(xr);
        gx_array_release(base);
        free(ve);
    }
    free(o);
    free(v);
}

/* f32 "+" accumulates in f64 per segment and rounds once (gx/segment.h's bound). */
GXT_TEST(segment_reduce_f32_sum_rounds_once)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t n = 3 << 18;
    float *h = malloc((size_t)n * 4);
    int64_t o[8] = {0, 1, 1000, 100000, 100000, 500000, n - 3, n};
    int64_t nseg = 7;
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)(gxt_rand01() * 2 - 0.5);
    gx_array *x = NULL, *r = NULL, *off = mk_off(ctx, GX_I32, o, nseg);
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
    GXT_OK(gx_segment_reduce(ctx, "sum", x, off, NULL, &r));
    GXT_CHECK(dt(r) == GX_F32);
    float got[7];
    GXT_OK(gx_array_to_host(r, got, sizeof got));
    for (int g = 0; g < nseg; g++) {
        double s = 0, a = 0;
        for (int64_t i = o[g]; i < o[g + 1]; i++) {
            s += h[i];
            a += fabs(h[i]);
        }
        double m = (double)(o[g + 1] - o[g]);
        double tol = ldexp(fabs(s), -24) + m * ldexp(a, -52);
        GXT_NEAR(got[g], s, tol * 1.0000001 + 1e-30);
    }
    gx_array_release(x);
    gx_array_release(r);
    gx_array_release(off);
    free(h);
}

GXT_TEST(segment_reduce_lambda_init_and_into)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t o[64];
    int64_t nseg = mixed_offsets(o, 64), n = o[nseg];
    double *v = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)((int)(gxt_rand01() * 9) - 4);
    gx_array *x = mk(ctx, GX_I32, v, n), *off = mk_off(ctx, GX_I64, o, nseg), *r = NULL;
    /* lambda without init: an error naming init */
    GXT_STATUS(gx_segment_reduce(ctx, "a, b -> a + 2 * b - b", x, off, NULL, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("init");
    gx_scalar z = {GX_I64, {.i = 0}};
    gx_segment_opts so = {.init = &z, .dtype = GX_I64};
    GXT_OK(gx_segment_reduce(ctx, "a, b -> a + 2 * b - b", x, off, &so, &r));
    double *h = to_f64(r);
    for (int64_t g = 0; g < nseg; g++) {
        double e = 0;
        for (int64_t i = o[g]; i < o[g + 1]; i++)
            e += v[i];
        if (h[g] != e) {
            GXT_FAIL_AT(__FILE__, __LINE__, "lambda segment %lld: %g != %g", (long long)g, h[g], e);
            break;
        }
    }
    free(h);
    /* into an f64 array: converted; with exact_dtype: an error */
    gx_array *dst = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F64, 1, &nseg, &dst));
    GXT_OK(gx_segment_reduce_into(ctx, "+", x, off, NULL, dst));
    h = to_f64(dst);
    for (int64_t g = 0; g < nseg; g++) {
        double e = 0;
        for (int64_t i = o[g]; i < o[g + 1]; i++)
            e += v[i];
        if (h[g] != e) {
            GXT_FAIL_AT(__FILE__, __LINE__, "into segment %lld: %g != %g", (long long)g, h[g], e);
            break;
        }
    }
    free(h);
    gx_segment_opts ex = {.exact_dtype = 1};
    GXT_STATUS(gx_segment_reduce_into(ctx, "+", x, off, &ex, dst), GX_ERR_DTYPE);
    int64_t wrong = nseg + 1;
    gx_array *bad = NULL;
    GXT_OK(gx_array_empty(ctx, GX_I64, 1, &wrong, &bad));
    GXT_STATUS(gx_segment_reduce_into(ctx, "+", x, off, NULL, bad), GX_ERR_SHAPE);
    GXT_MSG_HAS("shape");
    gx_array_release(bad);
    gx_array_release(dst);
    gx_array_release(r);
    gx_array_release(x);
    gx_array_release(off);
    free(v);
}

GXT_TEST(segment_scan_inclusive_exclusive)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t o[64];
    int64_t nseg = mixed_offsets(o, 64), n = o[nseg];
    double *v = malloc((size_t)n * 8);
    const gx_dtype dts[] = {GX_I32, GX_U8, GX_I64, GX_F32, GX_F64, GX_BOOL};
    const char *ops[] = {"+", "max", "a, b -> a + b"};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (int k = 0; k < 3; k++)
            for (int exc = 0; exc < 2; exc++) {
                gx_dtype t = dts[d];
                if (t == GX_BOOL && k == 2)
                    continue;
                for (int64_t i = 0; i < n; i++)
                    v[i] = small_val(t, "+");
                gx_array *x = mk(ctx, t, v, n), *off = mk_off(ctx, GX_I32, o, nseg), *r = NULL;
                gx_scalar z = {GX_I64, {.i = 0}};
                if (t == GX_F32 || t == GX_F64)
                    z = (gx_scalar){t, {.f = 0}};
                gx_segment_opts so = {.exclusive = exc, .init = k == 2 ? &z : NULL,
                                      .dtype = k == 2 && !is_fl(t) ? GX_I64 : GX_DTYPE_DEFAULT};
                GXT_OK(gx_segment_scan(ctx, ops[k], x, off, &so, &r));
                double *h = to_f64(r);
                gx_dtype rt = dt(r);
                for (int64_t g = 0; g < nseg; g++) {
                    double acc = k == 1 ? ref_neutral("max", rt) : 0;
                    for (int64_t i = o[g]; i < o[g + 1]; i++) {
                        double before = acc;
                        acc = k == 1 ? ref_op("max", acc, v[i], is_fl(t)) : acc + v[i];
                        double e = exc ? before : acc;
                        if (!(h[i] == e || (e != e && h[i] != h[i]))) {
                            GXT_FAIL_AT(__FILE__, __LINE__, "%s %s exc=%d at %lld (segment %lld): %g != %g", ops[k],
                                        gx_dtype_name(t), exc, (long long)i, (long long)g, h[i], e);
                            g = nseg;
                            break;
                        }
                    }
                }
                free(h);
                gx_array_release(r);
                gx_array_release(x);
                gx_array_release(off);
            }
    free(v);
}

GXT_TEST(segment_argmin_argmax_ties_nan_empty)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t o[64];
    int64_t nseg = mixed_offsets(o, 64), n = o[nseg];
    double *v = malloc((size_t)n * 8);
    const gx_dtype dts[] = {GX_I8, GX_I32, GX_U16, GX_I64, GX_F32, GX_F64, GX_BOOL};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        gx_dtype t = dts[d];
        for (int64_t i = 0; i < n; i++)
            v[i] = small_val(t, "+"); /* many ties */
        if (is_fl(t)) {
            for (int64_t i = 0; i < n; i += 7)
                v[i] = NAN;
            for (int64_t i = o[5]; i < o[6]; i++) /* one segment (31) all NaN */
                v[i] = NAN;
        }
        gx_array *x = mk(ctx, t, v, n), *off = mk_off(ctx, GX_I64, o, nseg);
        for (int mx = 0; mx < 2; mx++) {
            gx_array *r = NULL;
            GXT_OK(mx ? gx_segment_argmax(ctx, x, off, NULL, &r) : gx_segment_argmin(ctx, x, off, NULL, &r));
            GXT_CHECK(dt(r) == GX_I64);
            int64_t *h = malloc((size_t)nseg * 8);
            GXT_OK(gx_array_to_host(r, h, (size_t)nseg * 8));
            for (int64_t g = 0; g < nseg; g++) {
                int64_t best = -1;
                for (int64_t i = o[g]; i < o[g + 1]; i++) {
                    if (best < 0) {
                        best = i;
                        continue;
                    }
                    double b = v[best], c = v[i];
                    if ((c == c && b != b) || (mx ? c > b : c < b))
                        best = i;
                }
                int64_t e = best < 0 ? -1 : best - o[g];
                if (h[g] != e) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "arg%s %s segment %lld: %lld != %lld", mx ? "max" : "min",
                                gx_dtype_name(t), (long long)g, (long long)h[g], (long long)e);
                    break;
                }
            }
            free(h);
            gx_array_release(r);
        }
        gx_array_release(x);
        gx_array_release(off);
    }
    free(v);
}

GXT_TEST(segment_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    double v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    gx_array *x = mk(ctx, GX_F32, v, 10), *r = NULL;
    int64_t dec[] = {0, 3, 6, 5, 10};
    gx_array *off = mk_off(ctx, GX_I32, dec, 4);
    GXT_STATUS(gx_segment_reduce(ctx, "+", x, off, NULL, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("offsets[3]");
    GXT_CHECK(r == NULL);
    gx_array_release(off);
    int64_t last[] = {0, 3, 9};
    off = mk_off(ctx, GX_I64, last, 2);
    GXT_STATUS(gx_segment_scan(ctx, "+", x, off, NULL, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("offsets[2]");
    GXT_MSG_HAS("n = 10");
    gx_array_release(off);
    int64_t first[] = {1, 3, 10};
    off = mk_off(ctx, GX_I64, first, 2);
    GXT_STATUS(gx_segment_argmin(ctx, x, off, NULL, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("offsets[0]");
    gx_array_release(off);
    int64_t big[] = {0, 30, 10};
    off = mk_off(ctx, GX_I64, big, 2);
    GXT_STATUS(gx_segment_reduce(ctx, "+", x, off, NULL, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("offsets[1]");
    gx_array_release(off);
    int64_t ok[] = {0, 4, 10};
    off = mk_off(ctx, GX_F32, ok, 2);
    GXT_STATUS(gx_segment_reduce(ctx, "+", x, off, NULL, &r), GX_ERR_DTYPE);
    GXT_MSG_HAS("offsets");
    gx_array_release(off);
    off = mk_off(ctx, GX_I64, ok, 2);
    GXT_STATUS(gx_segment_reduce(ctx, "count", x, off, NULL, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_segment_reduce(ctx, "&", x, off, NULL, &r), GX_ERR_DTYPE);
    gx_array *x2 = NULL;
    int64_t sh[2] = {2, 5};
    GXT_OK(gx_array_reshape(x, 2, sh, &x2));
    GXT_STATUS(gx_segment_reduce(ctx, "+", x2, off, NULL, &r), GX_ERR_SHAPE);
    GXT_MSG_HAS("(2, 5)");
    gx_segment_opts bad = {.reserved = {1}};
    GXT_STATUS(gx_segment_reduce(ctx, "+", x, off, &bad, &r), GX_ERR_INVALID_ARGUMENT);
    gx_segment_opts withinit = {.dtype = GX_F64};
    GXT_STATUS(gx_segment_argmax(ctx, x, off, &withinit, &r), GX_ERR_INVALID_ARGUMENT);
    /* keys/values of different shapes: both named */
    gx_array *k = mk(ctx, GX_I32, v, 9), *uk = NULL, *red = NULL;
    int64_t nr = -1;
    GXT_STATUS(gx_reduce_by_key(ctx, "+", k, x, NULL, &uk, &red, &nr), GX_ERR_SHAPE);
    GXT_MSG_HAS("(9,)");
    GXT_MSG_HAS("(10,)");
    /* unchecked: valid offsets still work */
    gx_segment_opts un = {.unchecked = 1};
    GXT_OK(gx_segment_reduce(ctx, "+", x, off, &un, &r));
    float got[2];
    GXT_OK(gx_array_to_host(r, got, sizeof got));
    GXT_CHECK(got[0] == 10 && got[1] == 45);
    gx_array_release(r);
    gx_array_release(k);
    gx_array_release(x2);
    gx_array_release(off);
    gx_array_release(x);
}

/* Runs of equal adjacent keys against a host loop; keys with NaN are runs of one. */
static void check_rbk(gx_ctx *ctx, gx_dtype kt, const double *k, const double *v, int64_t n)
{
    gx_array *keys = mk(ctx, kt, k, n), *vals = mk(ctx, GX_F64, v, n), *uk = NULL, *red = NULL, *rv = NULL,
             *rc = NULL;
    int64_t nr = -1, nr2 = -1;
    GXT_OK(gx_reduce_by_key(ctx, "+", keys, vals, NULL, &uk, &red, &nr));
    GXT_OK(gx_run_length_encode(ctx, keys, &rv, &rc, &nr2));
    int64_t want = 0;
    for (int64_t i = 0; i < n; i++)
        want += i == 0 || !(k[i] == k[i - 1]);
    GXT_EQ_I64(nr, want);
    GXT_EQ_I64(nr2, want);
    if (nr != want || nr2 != want)
        goto done;
    double *hk = to_f64(uk), *hr = to_f64(red), *hv = to_f64(rv), *hc = to_f64(rc);
    int64_t r = -1;
    double sum = 0;
    for (int64_t i = 0; i <= n; i++) {
        bool start = i == n || i == 0 || !(k[i] == k[i - 1]);
        if (start && r >= 0) {
            int64_t len = 0;
            for (int64_t j = i - 1; j >= 0 && (j == i - 1 || k[j] == k[j + 1]); j--)
                len++;
            bool keq = hk[r] == k[i - len] || (hk[r] != hk[r] && k[i - len] != k[i - len]);
            bool veq = hv[r] == k[i - len] || (hv[r] != hv[r] && k[i - len] != k[i - len]);
            if (!keq || !veq || hr[r] != sum || hc[r] != (double)len) {
                GXT_FAIL_AT(__FILE__, __LINE__, "%s run %lld: key %g/%g sum %g/%g count %g/%lld", gx_dtype_name(kt),
                            (long long)r, hk[r], k[i - len], hr[r], sum, hc[r], (long long)len);
                break;
            }
        }
        if (i == n)
            break;
        if (start) {
            r++;
            sum = 0;
        }
        sum += v[i];
    }
    free(hk);
    free(hr);
    free(hv);
    free(hc);
done:
    gx_array_release(keys);
    gx_array_release(vals);
    gx_array_release(uk);
    gx_array_release(red);
    gx_array_release(rv);
    gx_array_release(rc);
}

GXT_TEST(segment_reduce_by_key_and_rle)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t n = 300007;
    double *k = malloc((size_t)n * 8), *v = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)((int)(gxt_rand01() * 100) - 50);
    const gx_dtype kts[] = {GX_I32, GX_I64, GX_U8, GX_F32, GX_F64, GX_BOOL};
    for (int c = 0; c < 4; c++)
        for (size_t d = 0; d < sizeof kts / sizeof kts[0]; d++) {
            gx_dtype kt = kts[d];
            for (int64_t i = 0; i < n; i++) {
                if (c == 0) /* one run */
                    k[i] = 1;
                else if (c == 1) /* runs of one */
                    k[i] = kt == GX_BOOL ? (double)(i & 1) : (double)(i % 200);
                else /* random runs (not sorted: a key may come back) */
                    k[i] = (i > 0 && gxt_rand01() < 0.9) ? k[i - 1] : (double)(int)(gxt_rand01() * 2);
                if (kt == GX_BOOL)
                    k[i] = k[i] != 0;
                if (c == 3 && is_fl(kt) && i % 5 == 0)
                    k[i] = NAN;
            }
            int64_t sizes[] = {n, 1, 2, 33};
            for (int q = 0; q < 4; q++)
                check_rbk(ctx, kt, k, v, sizes[q]);
        }
    /* empty keys: no runs */
    check_rbk(ctx, GX_I32, k, v, 0);
    free(k);
    free(v);
}

/* Pipeline terminals: iota | map | filter | segment reduce / scan against host folds
 * of the same values; the pipe stays usable; bad arity and a wrong last offset. */
GXT_TEST(segment_pipe_terminals)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    const int64_t n = 100003;
    /* i -> (i * 7919) % 1001, kept where odd: the host side of the same stream */
    int64_t m = 0;
    double *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        int64_t y = (i * 7919) % 1001;
        if (y % 2)
            v[m++] = (double)y;
    }
    int64_t o[64], nseg = 0;
    o[0] = 0;
    for (int64_t s = 1; s < 63; s++) /* uneven, with empty segments */
        o[++nseg] = s * m / 70 + (s % 5 == 0 ? 0 : s % 3);
    o[++nseg] = m;
    gx_array *off = mk_off(ctx, GX_I64, o, nseg);
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_iota(ctx, GX_I64, n, 0, 1, &p));
    GXT_OK(gx_pipe_map(p, "i -> (i * 7919) % 1001", NULL));
    GXT_OK(gx_pipe_filter(p, "y -> y % 2 == 1", NULL));
    gx_array *r = NULL, *c = NULL;
    GXT_OK(gx_pipe_segment_reduce(p, "+", off, NULL, &r));
    GXT_OK(gx_pipe_segment_scan(p, "max", off, NULL, &c));
    double *got = r ? to_f64(r) : NULL, *gs = c ? to_f64(c) : NULL;
    GXT_CHECK(r && sz(r) == nseg && c && sz(c) == m);
    for (int64_t s = 0; got && gs && s < nseg; s++) {
        double acc = 0, mx = -1e300;
        for (int64_t k = o[s]; k < o[s + 1]; k++) {
            acc += v[k];
            mx = v[k] > mx ? v[k] : mx;
            if (gs[k] != mx) {
                GXT_FAIL_AT(__FILE__, __LINE__, "scan at %lld: %g, want %g", (long long)k, gs[k], mx);
                break;
            }
        }
        GXT_CHECK(got[s] == acc);
    }
    /* wrong last offset: names both counts */
    o[nseg] = m + 1;
    gx_array *bad = mk_off(ctx, GX_I64, o, nseg), *junk = NULL;
    GXT_STATUS(gx_pipe_segment_reduce(p, "+", bad, NULL, &junk), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("n = ");
    GXT_CHECK(junk == NULL);
    /* two values per item */
    gx_pipe *p2 = NULL;
    GXT_OK(gx_pipe_iota(ctx, GX_I64, 10, 0, 1, &p2));
    GXT_OK(gx_pipe_enumerate(p2));
    GXT_STATUS(gx_pipe_segment_scan(p2, "+", off, NULL, &junk), GX_ERR_SHAPE);
    GXT_MSG_HAS("values per item");
    GXT_STATUS(gx_pipe_segment_reduce(NULL, "+", off, NULL, &junk), GX_ERR_INVALID_ARGUMENT);
    free(got);
    free(gs);
    free(v);
    gx_array_release(r);
    gx_array_release(c);
    gx_array_release(off);
    gx_array_release(bad);
    gx_pipe_destroy(p);
    gx_pipe_destroy(p2);
}

/* Beyond 2^31 elements on the GPU: four segments over 2^31 + 7 u8 values (ones, with a
 * 9 at 2^31 and a 5 at n - 2), summed and arg-maxed: 64-bit positions in the tiles,
 * the ends' search and the carries. */
GXT_TEST(segment_beyond_2p31_gpu)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_device_info di;
    GXT_OK(gx_device_info_get(ctx, &di));
    int64_t n = (1ll << 31) + 7;
    if (di.mem_free < (size_t)n * 2 + (1ull << 30)) {
        gxt_skip("needs about 5 GiB of free device memory");
        return;
    }
    gx_array *x = NULL, *r = NULL, *am = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_U8, 1, &n, &x));
    GXT_OK(gx_array_fill_f64(x, 1.0));
    const uint8_t nine = 9, five = 5;
    const int64_t p9[1] = {1ll << 31}, p5[1] = {n - 2};
    GXT_OK(gx_array_set(x, p9, &nine));
    GXT_OK(gx_array_set(x, p5, &five));
    const int64_t o[5] = {0, 3, 1ll << 30, (1ll << 31) + 1, n};
    gx_array *off = mk_off(ctx, GX_I64, o, 4);
    GXT_OK(gx_segment_reduce(ctx, "+", x, off, NULL, &r));
    GXT_OK(gx_segment_argmax(ctx, x, off, NULL, &am));
    double *got = r ? to_f64(r) : NULL, *ga = am ? to_f64(am) : NULL;
    const double want[4] = {3, (double)((1ll << 30) - 3), (double)((1ll << 30) + 1 + 8), 10};
    const double wa[4] = {0, 0, (double)(1ll << 30), 4};
    for (int s = 0; got && ga && s < 4; s++) {
        GXT_CHECK(got[s] == want[s]);
        GXT_CHECK(ga[s] == wa[s]);
    }
    free(got);
    free(ga);
    gx_array_release(x);
    gx_array_release(r);
    gx_array_release(am);
    gx_array_release(off);
}
