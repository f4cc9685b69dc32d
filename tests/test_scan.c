/* test_scan.c -- gx_scan / gx_scan_into: 1-d scans at tile boundaries for every dtype,
 * inclusive and exclusive with init, non-commutative operators (ordering bugs), axis
 * scans of N-d arrays (contiguous last axis, strided axes, views, the default axis),
 * named operators, in place, and bad input. */
#include "gx_test.h"

static const int64_t lens[] = {1,    2,    31,   32,   33,   255,  256,  257,  2047, 2048, 2049,   3071,         3072,
                               3073, 4095, 4096, 4097, 6143, 6144, 6145, 8191, 8192, 8193, 100000, (1 << 20) + 7};
#define NLENS ((int)(sizeof lens / sizeof lens[0]))

GXT_TEST(scan_cumsum_f32_matches_host)
{
    gx_ctx *ctx = gxt_ctx();
    for (int li = 0; li < NLENS; li++) {
        int64_t n = lens[li];
        float *h = malloc((size_t)n * 4), *o = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++)
            h[i] = (float)(int)(gxt_rand01() * 16) - 8; /* small integers: exact sums */
        gx_array *x = NULL, *y = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
        GXT_OK(gx_scan(ctx, "a, b -> a + b", x, NULL, &y));
        GXT_OK(gx_array_to_host(y, o, (size_t)n * 4));
        float acc = 0;
        for (int64_t i = 0; i < n; i++) {
            acc += h[i];
            if (o[i] != acc) {
                GXT_FAIL_AT(__FILE__, __LINE__, "n=%lld at %lld: %g != %g", (long long)n, (long long)i, o[i], acc);
                break;
            }
        }
        gx_array_release(x);
        gx_array_release(y);
        free(h);
        free(o);
    }
}

/* A long f32 scan of values that are not integers: each output within the bound of
 * gx/range.h, (min(i+1, 4096) + (i+1)/1024 + 64) u sum|x_0..i| with u = 2^-24.  A
 * single running f32 sum fails it badly: once the sum passed 2^24 (2^25 here) the
 * values below 1 (2) stopped adding, and 2^26 values in [0, 1) ended 13% short. */
GXT_TEST(scan_f32_long_running_sum_keeps_small_values)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t n = ((int64_t)1 << 25) + 3;
    float *h = malloc((size_t)n * 4), *o = malloc((size_t)n * 4);
    GXT_CHECK(h && o);
    if (!h || !o) {
        free(h);
        free(o);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        h[i] = 2.0f * (float)gxt_rand01(); /* [0, 2): the sum passes 2^25 halfway */
    const char *ops[] = {"+", "a, b -> a + b"};
    for (int k = 0; k < 2; k++) {
        gx_array *x = NULL, *y = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
        GXT_OK(gx_scan(ctx, ops[k], x, NULL, &y));
        GXT_OK(gx_array_to_host(y, o, (size_t)n * 4));
        long double s = 0;
        int bad = 0;
        for (int64_t i = 0; i < n && bad < 3; i++) {
            s += h[i];
            double steps = (double)(i + 1 < 4096 ? i + 1 : 4096) + (double)(i + 1) / 1024.0 + 64.0;
            double tol = steps * 0x1p-24 * (double)s;
            if (fabs((double)(o[i] - s)) > tol) {
                GXT_FAIL_AT(__FILE__, __LINE__, "%s: out[%lld] = %.9g, exact %.9Lg (tolerance %.3g)", ops[k], (long long)i,
                            o[i], s, tol);
                bad++;
            }
        }
        gx_array_release(x);
        gx_array_release(y);
    }
    free(h);
    free(o);
}

/* Every dtype: sums accumulate in op(T, T)'s dtype (i8 + i8 -> i32, as in C). */
GXT_TEST(scan_dtypes_exclusive_init)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_BOOL, GX_I8, GX_I16, GX_I32, GX_I64, GX_U8, GX_U16, GX_U32, GX_U64, GX_F32, GX_F64};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        for (int li = 0; li < NLENS && lens[li] <= 8193; li += 2) { /* sums that fit every dtype */
            int64_t n = lens[li];
            gx_array *x = NULL, *y = NULL, *y64 = NULL;
            GXT_OK(gx_array_iota(ctx, dts[d], n, 0, 1, &x));
            gx_scalar init = GX_SCALAR_I64(5);
            gx_scan_opts o = {.exclusive = 1, .init = &init};
            GXT_OK(gx_scan(ctx, "a, b -> a + b", x, &o, &y));
            GXT_OK(gx_array_clone(y, GX_F64, &y64));
            double *h = malloc((size_t)n * 8), *xv = malloc((size_t)n * 8);
            gx_array *x64 = NULL;
            GXT_OK(gx_array_clone(x, GX_F64, &x64));
            GXT_OK(gx_array_to_host(y64, h, (size_t)n * 8));
            GXT_OK(gx_array_to_host(x64, xv, (size_t)n * 8));
            double acc = 5;
            for (int64_t i = 0; i < n; i++) {
                double want = acc; /* exact (the sums stay below 2^53) */
                acc += xv[i];
                /* f32 past 2^24 rounds at every step, in an order that depends on the
                 * algorithm: any order stays within (i+1) * 2^-24 * sum of |x| of the
                 * exact value, the usual bound for summation. */
                double tol = dts[d] == GX_F32 ? (double)(i + 1) * 0x1p-24 * fabs(want) : 0;
                if (fabs(h[i] - want) > tol) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld at %lld: %.17g != %.17g", gx_dtype_name(dts[d]),
                                (long long)n, (long long)i, h[i], want);
                    break;
                }
            }
            free(h);
            free(xv);
            gx_array_release(x);
            gx_array_release(x64);
            gx_array_release(y);
            gx_array_release(y64);
        }
    }
}

/* "a, b -> a" and "a, b -> b" are associative, not commutative; a 2x2 integer matrix
 * product packed in a u64 (four u16 entries, arithmetic mod 2^16) is too. */
GXT_TEST(scan_noncommutative_ops)
{
    gx_ctx *ctx = gxt_ctx();
    gx_status s =
        gx_define(ctx, "matmul2",
                  "uint64_t mm2(uint64_t a, uint64_t b) {\n"
                  "  uint32_t a0 = a & 0xffff, a1 = (a >> 16) & 0xffff, a2 = (a >> 32) & 0xffff, a3 = a >> 48;\n"
                  "  uint32_t b0 = b & 0xffff, b1 = (b >> 16) & 0xffff, b2 = (b >> 32) & 0xffff, b3 = b >> 48;\n"
                  "  uint64_t r0 = (a0 * b0 + a1 * b2) & 0xffff, r1 = (a0 * b1 + a1 * b3) & 0xffff;\n"
                  "  uint64_t r2 = (a2 * b0 + a3 * b2) & 0xffff, r3 = (a2 * b1 + a3 * b3) & 0xffff;\n"
                  "  return r0 | (r1 << 16) | (r2 << 32) | (r3 << 48);\n}\n");
    GXT_OK(s);
    for (int li = 0; li < NLENS; li++) {
        int64_t n = lens[li];
        uint64_t *h = malloc((size_t)n * 8), *o = malloc((size_t)n * 8);
        for (int64_t i = 0; i < n; i++)
            h[i] = gxt_rand_u64() & 0x0003000300030003ull; /* entries 0..3 */
        gx_array *x = NULL, *y = NULL, *f = NULL, *l = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_U64, 1, &n, h, &x));
        GXT_OK(gx_scan(ctx, "a, b -> mm2(a, b)", x, NULL, &y));
        GXT_OK(gx_scan(ctx, "a, b -> a", x, NULL, &f));
        GXT_OK(gx_scan(ctx, "a, b -> b", x, NULL, &l));
        GXT_OK(gx_array_to_host(y, o, (size_t)n * 8));
        uint64_t acc = 0;
        for (int64_t i = 0; i < n; i++) {
            if (i == 0) {
                acc = h[0];
            } else {
                uint64_t a = acc, b = h[i];
                uint32_t a0 = a & 0xffff, a1 = (a >> 16) & 0xffff, a2 = (a >> 32) & 0xffff, a3 = (uint32_t)(a >> 48);
                uint32_t b0 = b & 0xffff, b1 = (b >> 16) & 0xffff, b2 = (b >> 32) & 0xffff, b3 = (uint32_t)(b >> 48);
                acc = ((a0 * b0 + a1 * b2) & 0xffff) | ((uint64_t)((a0 * b1 + a1 * b3) & 0xffff) << 16) |
                      ((uint64_t)((a2 * b0 + a3 * b2) & 0xffff) << 32) |
                      ((uint64_t)((a2 * b1 + a3 * b3) & 0xffff) << 48);
            }
            if (o[i] != acc) {
                GXT_FAIL_AT(__FILE__, __LINE__, "matrix scan n=%lld at %lld", (long long)n, (long long)i);
                break;
            }
        }
        GXT_OK(gx_array_to_host(f, o, (size_t)n * 8));
        for (int64_t i = 0; i < n; i++)
            if (o[i] != h[0]) {
                GXT_FAIL_AT(__FILE__, __LINE__, "a,b->a n=%lld at %lld", (long long)n, (long long)i);
                break;
            }
        GXT_OK(gx_array_to_host(l, o, (size_t)n * 8));
        for (int64_t i = 0; i < n; i++)
            if (o[i] != h[i]) {
                GXT_FAIL_AT(__FILE__, __LINE__, "a,b->b n=%lld at %lld", (long long)n, (long long)i);
                break;
            }
        free(h);
        free(o);
        gx_array_release(x);
        gx_array_release(y);
        gx_array_release(f);
        gx_array_release(l);
    }
}

/* Running max with an init, and subtraction (order-sensitive: a - b - c ...). */
GXT_TEST(scan_running_max_and_subtraction)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 70001;
    int32_t *h = malloc((size_t)n * 4), *o = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        h[i] = (int32_t)(gxt_rand_u64() % 2001) - 1000;
    gx_array *x = NULL, *y = NULL, *z = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, h, &x));
    gx_scalar init = GX_SCALAR_I32(900);
    gx_scan_opts op = {.axis = -1, .init = &init};
    GXT_OK(gx_scan(ctx, "a, b -> max(a, b)", x, &op, &y));
    GXT_OK(gx_array_to_host(y, o, (size_t)n * 4));
    int32_t m = 900;
    for (int64_t i = 0; i < n; i++) {
        m = h[i] > m ? h[i] : m;
        if (o[i] != m) {
            GXT_FAIL_AT(__FILE__, __LINE__, "running max at %lld", (long long)i);
            break;
        }
    }
    /* x0 - x1 - ... is not associative, but "first minus the sum of the rest" is
     * exactly what a correct left-to-right order gives with the associative pair
     * encoding below: (a, b) -> a + b on negated tails. */
    GXT_OK(gx_map(ctx, "x -> -x", 1, &x, NULL, &z));
    gx_array *w = NULL;
    GXT_OK(gx_scan(ctx, "a, b -> a + b", z, NULL, &w));
    GXT_OK(gx_array_to_host(w, o, (size_t)n * 4));
    int32_t acc = 0;
    for (int64_t i = 0; i < n; i++) {
        acc -= h[i];
        if (o[i] != acc) {
            GXT_FAIL_AT(__FILE__, __LINE__, "negated sums at %lld", (long long)i);
            break;
        }
    }
    free(h);
    free(o);
    gx_array_release(x);
    gx_array_release(y);
    gx_array_release(z);
    gx_array_release(w);
}

/* Axis scans of a 3-d array against a host loop, every axis, inclusive/exclusive. */
static void check_axis(gx_ctx *ctx, int64_t d0, int64_t d1, int64_t d2)
{
    int64_t shape[3] = {d0, d1, d2}, n = d0 * d1 * d2;
    double *h = malloc((size_t)n * 8), *o = malloc((size_t)n * 8), *want = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        h[i] = (double)(int)(gxt_rand01() * 10);
    gx_array *x = NULL;
    GXT_CHECK(gx_array_from_host(ctx, GX_F64, 3, shape, h, &x) == GX_OK);
    for (int axis = 0; axis < 3; axis++)
        for (int ex = 0; ex < 2; ex++) {
            gx_scalar init = GX_SCALAR_F64(1.5);
            gx_scan_opts op = {.axis = axis - 3, .exclusive = ex, .init = ex ? &init : NULL};
            gx_array *y = NULL;
            gx_status s = gx_scan(ctx, "a, b -> a + b", x, &op, &y);
            if (s != GX_OK) {
                GXT_FAIL_AT(__FILE__, __LINE__, "gx_scan axis %d: %s", axis, gx_last_error());
                continue;
            }
            GXT_CHECK(gx_array_to_host(y, o, (size_t)n * 8) == GX_OK);
            int64_t st[3] = {d1 * d2, d2, 1};
            for (int64_t i = 0; i < d0; i++)
                for (int64_t j = 0; j < d1; j++)
                    for (int64_t k = 0; k < d2; k++) {
                        int64_t c[3] = {i, j, k};
                        if (c[axis] != 0)
                            continue;
                        double acc = 1.5;
                        int has = ex;
                        for (int64_t t = 0; t < shape[axis]; t++) {
                            c[axis] = t;
                            int64_t off = c[0] * st[0] + c[1] * st[1] + c[2] * st[2];
                            if (ex) {
                                want[off] = acc;
                                acc = acc + h[off];
                            } else {
                                acc = has ? acc + h[off] : h[off];
                                has = 1;
                                want[off] = acc;
                            }
                        }
                    }
            for (int64_t i = 0; i < n; i++)
                if (fabs(o[i] - want[i]) > 1e-12 * (1 + fabs(want[i]))) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "shape %lldx%lldx%lld axis %d ex %d at %lld: %g != %g",
                                (long long)d0, (long long)d1, (long long)d2, axis, ex, (long long)i, o[i], want[i]);
                    break;
                }
            gx_array_release(y);
        }
    gx_array_release(x);
    free(h);
    free(o);
    free(want);
}

GXT_TEST(scan_axes_3d)
{
    gx_ctx *ctx = gxt_ctx();
    check_axis(ctx, 3, 5, 7);
    check_axis(ctx, 1, 1, 5000);
    check_axis(ctx, 2, 70000, 1);
    check_axis(ctx, 65, 33, 1);
    check_axis(ctx, 1, 100, 129);
    check_axis(ctx, 4, 1, 1);
}

GXT_TEST(scan_views_and_in_place)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 10000;
    gx_array *x = NULL, *v = NULL, *y = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I64, n, 0, 1, &x));
    gx_slice sl = {1, GX_END, 2};
    GXT_OK(gx_array_view(x, &sl, &v)); /* 1, 3, 5, ... */
    GXT_OK(gx_scan(ctx, "a, b -> a + b", v, NULL, &y));
    int64_t *h = malloc((size_t)n * 8);
    GXT_OK(gx_array_to_host(y, h, (size_t)n * 8));
    for (int64_t i = 0; i < n / 2; i++)
        if (h[i] != (i + 1) * (i + 1)) {
            GXT_FAIL_AT(__FILE__, __LINE__, "odd sums at %lld", (long long)i);
            break;
        }
    /* in place on the view: the strided output goes through a temporary */
    GXT_OK(gx_scan_into(ctx, "a, b -> a + b", v, NULL, v));
    GXT_OK(gx_array_to_host(x, h, (size_t)n * 8));
    for (int64_t i = 0; i < n; i++)
        if (h[i] != (i % 2 ? (i / 2 + 1) * (i / 2 + 1) : i)) {
            GXT_FAIL_AT(__FILE__, __LINE__, "in-place view scan at %lld", (long long)i);
            break;
        }
    /* in place on a dense array */
    gx_array *z = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I64, n, 1, 0, &z));
    GXT_OK(gx_scan_into(ctx, "a, b -> a + b", z, NULL, z));
    GXT_OK(gx_array_to_host(z, h, (size_t)n * 8));
    for (int64_t i = 0; i < n; i++)
        if (h[i] != i + 1) {
            GXT_FAIL_AT(__FILE__, __LINE__, "in-place scan at %lld", (long long)i);
            break;
        }
    free(h);
    gx_array_release(x);
    gx_array_release(v);
    gx_array_release(y);
    gx_array_release(z);
}

GXT_TEST(scan_empty_and_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t zero = 0, n = 10;
    gx_array *e = NULL, *y = NULL, *x = NULL, *w = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &zero, &e));
    GXT_OK(gx_scan(ctx, "a, b -> a + b", e, NULL, &y));
    int64_t sz = -1;
    GXT_OK(gx_array_size(y, &sz));
    GXT_EQ_I64(sz, 0);
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &x));
    gx_array *bad = NULL;
    GXT_STATUS(gx_scan(ctx, "a -> a", x, NULL, &bad), GX_ERR_TYPE);
    GXT_CHECK(bad == NULL);
    GXT_STATUS(gx_scan(ctx, "a, b -> a & b", x, NULL, &bad), GX_ERR_TYPE);
    gx_scan_opts ex = {.exclusive = 1};
    GXT_STATUS(gx_scan(ctx, "a, b -> a + b", x, &ex, &bad), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("init");
    gx_scan_opts ax = {.axis = 3};
    GXT_STATUS(gx_scan(ctx, "a, b -> a + b", x, &ax, &bad), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("axis");
    int64_t n2 = 11;
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n2, &w));
    GXT_STATUS(gx_scan_into(ctx, "a, b -> a + b", x, NULL, w), GX_ERR_SHAPE);
    GXT_STATUS(gx_scan_into(ctx, "a, b -> a + b", x, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_scan(ctx, "a, b -> a + b", NULL, NULL, &bad), GX_ERR_INVALID_ARGUMENT);
    gx_scan_opts reserved = {.reserved = {1}};
    GXT_STATUS(gx_scan(ctx, "a, b -> a + b", x, &reserved, &bad), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(bad == NULL);
    /* into an output of another dtype: converted, unless exact_dtype */
    gx_array *w64 = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &w64));
    gx_scan_opts exact = {.exact_dtype = 1};
    GXT_STATUS(gx_scan_into(ctx, "a, b -> a + b", x, &exact, w64), GX_ERR_DTYPE);
    GXT_OK(gx_scan_into(ctx, "a, b -> a + b", x, NULL, w64));
    double got[10];
    GXT_OK(gx_array_to_host(w64, got, sizeof got));
    for (int i = 0; i < 10; i++)
        GXT_NEAR(got[i], i * (i + 1) / 2, 0);
    gx_array_release(w64);
    gx_array_release(e);
    gx_array_release(y);
    gx_array_release(x);
    gx_array_release(w);
}

/* The default axis (opts NULL or all zero) is the FIRST axis; -1 scans along rows. */
GXT_TEST(scan_default_axis_is_first)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t shape[2] = {3, 4};
    int32_t h[12], o[12];
    for (int i = 0; i < 12; i++)
        h[i] = i + 1;
    gx_array *x = NULL, *down = NULL, *zero = NULL, *along = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 2, shape, h, &x));
    GXT_OK(gx_scan(ctx, "a, b -> a + b", x, NULL, &down));
    GXT_OK(gx_array_to_host(down, o, sizeof o));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            int32_t want = 0;
            for (int k = 0; k <= i; k++)
                want += h[k * 4 + j];
            GXT_EQ_I64(o[i * 4 + j], want);
        }
    gx_scan_opts z = {0};
    GXT_OK(gx_scan(ctx, "a, b -> a + b", x, &z, &zero));
    int32_t o2[12];
    GXT_OK(gx_array_to_host(zero, o2, sizeof o2));
    GXT_CHECK(memcmp(o, o2, sizeof o) == 0);
    gx_scan_opts rows = {.axis = -1};
    GXT_OK(gx_scan(ctx, "a, b -> a + b", x, &rows, &along));
    GXT_OK(gx_array_to_host(along, o, sizeof o));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            int32_t want = 0;
            for (int k = 0; k <= j; k++)
                want += h[i * 4 + k];
            GXT_EQ_I64(o[i * 4 + j], want);
        }
    gx_array_release(x);
    gx_array_release(down);
    gx_array_release(zero);
    gx_array_release(along);
}

/* Named operators take gx_reduce's result dtypes and neutral elements: "+" on i32
 * accumulates in i64, and an exclusive scan needs no init. */
GXT_TEST(scan_named_operators)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 5000;
    int32_t *h = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        h[i] = (int32_t)(gxt_rand_u64() % 2001) - 1000 + (i == 7 ? INT32_MAX - 1000 : 0);
    gx_array *x = NULL, *sum = NULL, *exs = NULL, *mx = NULL, *bad = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, h, &x));
    GXT_OK(gx_scan(ctx, "+", x, NULL, &sum));
    gx_scan_opts ex = {.exclusive = 1};
    GXT_OK(gx_scan(ctx, "sum", x, &ex, &exs));
    GXT_OK(gx_scan(ctx, "max", x, NULL, &mx));
    gx_array_desc d;
    GXT_OK(gx_array_describe(sum, &d));
    GXT_CHECK(d.dtype == GX_I64);
    GXT_OK(gx_array_describe(mx, &d));
    GXT_CHECK(d.dtype == GX_I32);
    int64_t *s = malloc((size_t)n * 8), *e = malloc((size_t)n * 8);
    int32_t *m = malloc((size_t)n * 4);
    GXT_OK(gx_array_to_host(sum, s, (size_t)n * 8));
    GXT_OK(gx_array_to_host(exs, e, (size_t)n * 8));
    GXT_OK(gx_array_to_host(mx, m, (size_t)n * 4));
    int64_t acc = 0;
    int32_t best = INT32_MIN;
    for (int64_t i = 0; i < n; i++) {
        if (e[i] != acc) {
            GXT_FAIL_AT(__FILE__, __LINE__, "exclusive \"sum\" at %lld: %lld != %lld", (long long)i, (long long)e[i],
                        (long long)acc);
            break;
        }
        acc += h[i];
        best = h[i] > best ? h[i] : best;
        if (s[i] != acc || m[i] != best) {
            GXT_FAIL_AT(__FILE__, __LINE__, "\"+\" / \"max\" at %lld", (long long)i);
            break;
        }
    }
    /* statistics are not operators */
    GXT_CHECK(gx_scan(ctx, "mean", x, NULL, &bad) != GX_OK);
    GXT_CHECK(bad == NULL);
    free(h);
    free(s);
    free(e);
    free(m);
    gx_array_release(x);
    gx_array_release(sum);
    gx_array_release(exs);
    gx_array_release(mx);
}

/* Warm scans reuse the operator's compiled body (rp_op_prepare's memo) and kernels:
 * each change must give the right values, every call checked against the host:
 * operators and lambda texts of one length, a constant's value in a lambda operator
 * (written into the code as a literal), dtypes, a strided view.  Small integers: exact. */
GXT_TEST(scan_warm_calls_see_every_change)
{
    gx_ctx *ctx = gxt_ctx();
    enum { N = 77 };
    double h[N], want[N], got[N];
    for (int i = 0; i < N; i++)
        h[i] = (double)((i * 5) % 9) - 4;
    int64_t n = N;
    gx_array *xd = NULL, *xi = NULL, *od = NULL, *oi = NULL, *xv = NULL, *ov = NULL;
    int32_t hi[N], gi[N];
    for (int i = 0; i < N; i++)
        hi[i] = (int32_t)h[i];
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &xd));
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, hi, &xi));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &od));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &oi));
    gx_slice every3 = {0, GX_END, 3};
    GXT_OK(gx_array_view(xd, &every3, &xv));
    int64_t nv = (N + 2) / 3;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &nv, &ov));
    const char *ops[] = {"max", "min", "a, b -> max(a, b)", "a, b -> min(a, b)", "+"};
    for (int rep = 0; rep < 2; rep++) {
        for (int o = 0; o < 5; o++) {
            for (int i = 0; i < N; i++) {
                double p = i ? want[i - 1] : h[0];
                want[i] = i == 0 ? h[0] : o % 2 == 0 && o < 4 ? fmax(p, h[i]) : o < 4 ? fmin(p, h[i]) : p + h[i];
            }
            gx_scan_opts so = {0};
            GXT_OK(gx_scan_into(ctx, ops[o], xd, &so, od));
            GXT_OK(gx_array_to_host(od, got, sizeof got));
            for (int i = 0; i < N; i++)
                GXT_CHECK(got[i] == want[i]);
            GXT_OK(gx_scan_into(ctx, ops[o], xi, &so, oi));
            GXT_OK(gx_array_to_host(oi, gi, sizeof gi));
            for (int i = 0; i < N; i++)
                GXT_CHECK(gi[i] == (int32_t)want[i]);
        }
        /* a constant in a lambda operator (associative: a scan may combine partials):
         * one text, two values */
        for (int k = -1; k <= 2; k += 3) {
            gx_const c = GX_CONST("k", GX_SCALAR_F64(k));
            gx_scan_opts so = {0};
            so.consts = &c;
            so.nconsts = 1;
            GXT_OK(gx_scan_into(ctx, "a, b -> max(max(a, b), k)", xd, &so, od));
            GXT_OK(gx_array_to_host(od, got, sizeof got));
            double acc = h[0];
            GXT_CHECK(got[0] == acc); /* the first output is x[0] itself */
            for (int i = 1; i < N; i++) {
                acc = fmax(fmax(acc, h[i]), k);
                GXT_CHECK(got[i] == acc);
            }
        }
        /* a strided view */
        GXT_OK(gx_scan_into(ctx, "+", xv, NULL, ov));
        double gv[(N + 2) / 3], acc = 0;
        GXT_OK(gx_array_to_host(ov, gv, sizeof gv));
        for (int64_t i = 0; i < nv; i++) {
            acc += h[3 * i];
            GXT_CHECK(gv[i] == acc);
        }
    }
    gx_array *all[] = {xd, xi, od, oi, xv, ov};
    for (int i = 0; i < 6; i++)
        gx_array_release(all[i]);
}

/* Inclusive (exclusive: shifted, init first) running sums or maxima of h[off + i * step]. */
static void front_scan_ref(const double *h, int64_t n, int64_t off, int64_t step, bool maxi, bool excl, double init,
                           bool has_init, double *out)
{
    double acc = init;
    bool has = has_init;
    for (int64_t i = 0; i < n; i++) {
        double v = h[off + i * step];
        if (excl)
            out[i] = acc;
        acc = !has ? v : maxi ? fmax(acc, v) : acc + v;
        has = true;
        if (!excl)
            out[i] = acc;
    }
}

/* An array's values as f64 (any real dtype). */
static void front_scan_get(gx_array *a, double *out, int64_t n)
{
    gx_array *d = NULL;
    GXT_OK(gx_array_clone(a, GX_F64, &d));
    GXT_OK(gx_array_to_host(d, out, (size_t)n * sizeof *out));
    gx_array_release(d);
}

/* One call under each kind of change a warm gx_scan / gx_scan_into must see (the
 * memo front keys a whole compiled one-line scan): dtype, size, offset / strided /
 * reversed views, operator names and lambda texts of one length, a constant's value
 * and dtype (written into the operator's code), init's value and dtype, exclusive,
 * new array against an existing one of the accumulator's or another dtype, in
 * place; every result against a host reference, twice over; then bad input. */
GXT_TEST(scan_memo_front_sees_every_change)
{
    gx_ctx *ctx = gxt_ctx();
    enum { N = 97 };
    double h[N], want[N], got[N];
    for (int i = 0; i < N; i++)
        h[i] = (double)((i * 7) % 13) - 6;
    int64_t n = N, n33 = 33;
    gx_array *x64 = NULL, *x32 = NULL, *xi = NULL, *small = NULL, *off = NULL, *strided = NULL, *rev = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x64));
    GXT_OK(gx_array_clone(x64, GX_F32, &x32));
    GXT_OK(gx_array_clone(x64, GX_I32, &xi));
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n33, h + 5, &small));
    gx_slice so = {1, GX_END, 1}, s3 = {0, GX_END, 3}, sr = {-1, GX_END, -1};
    GXT_OK(gx_array_view(x32, &so, &off)); /* dense, 4 bytes on: another vector width */
    GXT_OK(gx_array_view(x32, &s3, &strided));
    GXT_OK(gx_array_view(x32, &sr, &rev));
    gx_array *o64 = NULL, *o32 = NULL, *oi = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &o64));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &o32));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &oi));
    struct {
        gx_array *x;
        gx_dtype dt; /* the result's of "+" */
        int64_t n, off, step;
    } in[] = {{x64, GX_F64, N, 0, 1},     {x32, GX_F32, N, 0, 1},     {xi, GX_I64, N, 0, 1},
              {small, GX_F64, 33, 5, 1},  {off, GX_F32, N - 1, 1, 1}, {strided, GX_F32, (N + 2) / 3, 0, 3},
              {rev, GX_F32, N, N - 1, -1}};
    const char *ops[] = {"max", "+", "a, b -> max(a, b)", "a, b -> a + b"}; /* lambda texts of one length */
    for (int rep = 0; rep < 2; rep++) {
        for (size_t c = 0; c < sizeof in / sizeof in[0]; c++)
            for (int o = 0; o < 4; o++) {
                gx_array *r = NULL;
                bool maxi = o % 2 == 0;
                front_scan_ref(h, in[c].n, in[c].off, in[c].step, maxi, false, 0, false, want);
                GXT_OK(gx_scan(ctx, ops[o], in[c].x, NULL, &r));
                gx_array_desc d;
                GXT_OK(gx_array_describe(r, &d));
                /* integers: "+" accumulates in i64; max and the lambdas give i32 */
                GXT_CHECK(d.dtype == (in[c].dt == GX_I64 && o != 1 ? GX_I32 : in[c].dt));
                GXT_EQ_I64(d.size, in[c].n);
                front_scan_get(r, got, in[c].n);
                for (int64_t i = 0; i < in[c].n; i++)
                    GXT_CHECK(got[i] == want[i]);
                gx_array_release(r);
            }
        /* into an existing array: of the accumulator's dtype, of another, in place */
        gx_array *outs[] = {o64, o32, oi};
        for (int c = 0; c < 3; c++) {
            front_scan_ref(h, N, 0, 1, false, false, 0, false, want);
            GXT_OK(gx_scan_into(ctx, "+", x32, NULL, outs[c]));
            front_scan_get(outs[c], got, N);
            for (int i = 0; i < N; i++)
                GXT_CHECK(got[i] == want[i]);
        }
        GXT_OK(gx_array_copy_into(x64, o64));
        GXT_OK(gx_scan_into(ctx, "+", o64, NULL, o64)); /* in place: out overlaps x */
        front_scan_get(o64, got, N);
        for (int i = 0; i < N; i++)
            GXT_CHECK(got[i] == want[i]);
        /* a constant's value, then its dtype, under one text */
        gx_const ks[] = {GX_CONST("k", GX_SCALAR_F64(2)), GX_CONST("k", GX_SCALAR_F64(-1)),
                         GX_CONST("k", GX_SCALAR_I64(3))};
        double kv[] = {2, -1, 3};
        for (int c = 0; c < 3; c++) {
            gx_scan_opts sc = {0};
            sc.consts = &ks[c];
            sc.nconsts = 1;
            GXT_OK(gx_scan_into(ctx, "a, b -> max(max(a, b), k)", x64, &sc, o64));
            front_scan_get(o64, got, N);
            double acc = h[0];
            GXT_CHECK(got[0] == acc);
            for (int i = 1; i < N; i++) {
                acc = fmax(fmax(acc, h[i]), kv[c]);
                GXT_CHECK(got[i] == acc);
            }
        }
        /* exclusive; init's value, then its dtype */
        gx_scalar inits[] = {GX_SCALAR_F64(10), GX_SCALAR_F64(-4.5), GX_SCALAR_I64(7)};
        for (int c = 0; c < 4; c++) {
            gx_scan_opts sc = {0};
            sc.exclusive = c == 3;
            sc.init = c < 3 ? &inits[c] : NULL;
            front_scan_ref(h, N, 0, 1, false, c == 3, c < 3 ? gx_scalar_to_f64(inits[c]) : 0, true, want);
            GXT_OK(gx_scan_into(ctx, "+", x64, &sc, o64));
            front_scan_get(o64, got, N);
            for (int i = 0; i < N; i++)
                GXT_CHECK(got[i] == want[i]);
        }
        /* bad input after warm calls: each refused as on a cold one */
        gx_array *r = NULL;
        GXT_STATUS(gx_scan(ctx, NULL, x64, NULL, &r), GX_ERR_INVALID_ARGUMENT);
        GXT_CHECK(r == NULL);
        gx_scan_opts exact = {0};
        exact.exact_dtype = 1;
        GXT_STATUS(gx_scan_into(ctx, "+", x64, &exact, oi), GX_ERR_DTYPE); /* f64 into i32 */
        gx_scan_opts ex = {0};
        ex.exclusive = 1;
        GXT_STATUS(gx_scan_into(ctx, "a, b -> a + b", x64, &ex, o64), GX_ERR_INVALID_ARGUMENT);
        GXT_MSG_HAS("needs opts->init");
        GXT_STATUS(gx_scan_into(ctx, "+", small, NULL, o64), GX_ERR_SHAPE);
    }
    gx_array *all[] = {x64, x32, xi, small, off, strided, rev, o64, o32, oi};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
}
