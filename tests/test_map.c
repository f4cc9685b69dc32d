#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* test_map.c -- gx_map: values against host C, broadcasting, views, in-place,
 * constants, user functions (the Julia set), caching, and bad input. */
#include "gx_test.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static gx_array *upload_f64(gx_ctx *ctx, const double *h, int ndim, const int64_t *shape)
{
    gx_array *a = NULL;
    if (gx_array_from_host(ctx, GX_F64, ndim, shape, h, &a) != GX_OK)
        return NULL;
    return a;
}

GXT_TEST(map_float_expression_matches_host)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t sizes[] = {1, 31, 32, 33, 1000, 4099, (1 << 20) + 7};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k];
        float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4), *o = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++)
            x[i] = (float)(gxt_rand01() * 20 - 10), y[i] = (float)(gxt_rand01() * 20 - 10);
        gx_array *ax = NULL, *ay = NULL, *ao = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, x, &ax));
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, y, &ay));
        gx_array *in[2] = {ax, ay};
        GXT_OK(gx_map(ctx, "x, y -> sin(x)*sin(x) + cos(y)*cos(y) + 2*x - y/3.0f", 2, in, NULL, &ao));
        gx_array_desc d;
        GXT_OK(gx_array_describe(ao, &d));
        GXT_CHECK(d.dtype == GX_F32);
        GXT_OK(gx_array_to_host(ao, o, (size_t)n * 4));
        /* f32 arithmetic on f32 inputs: sin and cos within 4 ulp (docs/LAMBDAS.md),
         * squared (9 ulp of the square), then three adds and a divide of half an
         * ulp each: within 2^-23 * (10 (s^2 + c^2) + 3 (|2x| + |y/3|)) of the exact
         * value, some 100x tighter than a relative 1e-4. */
        for (int64_t i = 0; i < n; i++) {
            double s = sin(x[i]), c = cos(y[i]), want = s * s + c * c + 2.0 * x[i] - y[i] / 3.0;
            double tol = 0x1p-23 * (10 * (s * s + c * c) + 3 * (fabs(2.0 * x[i]) + fabs(y[i] / 3.0)));
            if (!(fabs(o[i] - want) <= tol)) {
                GXT_FAIL_AT(__FILE__, __LINE__, "n=%lld element %lld: %.9g vs %.9g (bound %.3g)", (long long)n,
                            (long long)i, o[i], want, tol);
                break;
            }
        }
        gx_array_release(ax);
        gx_array_release(ay);
        gx_array_release(ao);
        free(x);
        free(y);
        free(o);
    }
}

/* Integer semantics per dtype, checked against the same arithmetic in C. */
#define INT_CASE(T, DT)                                                                                   \
    do {                                                                                                  \
        int64_t n = 257;                                                                                  \
        T a[257], b[257], o[257];                                                                         \
        for (int i = 0; i < n; i++) {                                                                     \
            a[i] = (T)gxt_rand_u64();                                                                     \
            b[i] = (T)(gxt_rand_u64() % 50);                                                              \
        }                                                                                                 \
        gx_array *xa = NULL, *xb = NULL, *xo = NULL;                                                      \
        GXT_OK(gx_array_from_host(ctx, DT, 1, &n, a, &xa));                                               \
        GXT_OK(gx_array_from_host(ctx, DT, 1, &n, b, &xb));                                               \
        gx_array *in[2] = {xa, xb};                                                                       \
        gx_map_opts op = {.dtype = DT};                                                                   \
        GXT_OK(gx_map(ctx, "a, b -> (a ^ b) + (a & 7) - (b | 1)", 2, in, &op, &xo));                      \
        GXT_OK(gx_array_to_host(xo, o, sizeof o));                                                        \
        for (int i = 0; i < n; i++) {                                                                     \
            T want = (T)((uint64_t)(T)(a[i] ^ b[i]) + (uint64_t)(T)(a[i] & 7) - (uint64_t)(T)(b[i] | 1)); \
            if (o[i] != want) {                                                                           \
                GXT_EQ_I64(o[i], want);                                                                   \
                break;                                                                                    \
            }                                                                                             \
        }                                                                                                 \
        gx_array_release(xa);                                                                             \
        gx_array_release(xb);                                                                             \
        gx_array_release(xo);                                                                             \
    } while (0)

GXT_TEST(map_integer_dtypes)
{
    gx_ctx *ctx = gxt_ctx();
    INT_CASE(int8_t, GX_I8);
    INT_CASE(int16_t, GX_I16);
    INT_CASE(int32_t, GX_I32);
    INT_CASE(int64_t, GX_I64);
    INT_CASE(uint8_t, GX_U8);
    INT_CASE(uint16_t, GX_U16);
    INT_CASE(uint32_t, GX_U32);
    INT_CASE(uint64_t, GX_U64);
}

GXT_TEST(map_division_by_zero_is_defined)
{
    gx_ctx *ctx = gxt_ctx();
    int32_t a[4] = {7, -7, INT32_MIN, 5}, b[4] = {0, 2, -1, 0}, q[4], r[4];
    int64_t n = 4;
    gx_array *xa = NULL, *xb = NULL, *xq = NULL, *xr = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, a, &xa));
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, b, &xb));
    gx_array *in[2] = {xa, xb};
    GXT_OK(gx_map(ctx, "a, b -> a / b", 2, in, NULL, &xq));
    GXT_OK(gx_map(ctx, "a, b -> a % b", 2, in, NULL, &xr));
    GXT_OK(gx_array_to_host(xq, q, sizeof q));
    GXT_OK(gx_array_to_host(xr, r, sizeof r));
    /* documented: x / 0 == 0, x % 0 == 0, INT_MIN / -1 == INT_MIN, INT_MIN % -1 == 0 */
    GXT_EQ_I64(q[0], 0);
    GXT_EQ_I64(q[1], -3);
    GXT_EQ_I64(q[2], INT32_MIN);
    GXT_EQ_I64(r[0], 0);
    GXT_EQ_I64(r[1], -1);
    GXT_EQ_I64(r[2], 0);
    GXT_EQ_I64(q[3], 0);
    gx_array_release(xa);
    gx_array_release(xb);
    gx_array_release(xq);
    gx_array_release(xr);
}

GXT_TEST(map_all_dtypes_identity_plus_one)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_BOOL, GX_I8, GX_I16, GX_I32, GX_I64, GX_U8, GX_U16, GX_U32, GX_U64, GX_F32, GX_F64};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        gx_array *a = NULL, *o = NULL;
        GXT_OK(gx_array_iota(ctx, dts[k], 100, 0, 1, &a));
        gx_map_opts op = {.dtype = GX_F64};
        GXT_OK(gx_map(ctx, "x -> x + 1", 1, &a, &op, &o));
        double v[100];
        GXT_OK(gx_array_to_host(o, v, sizeof v));
        for (int i = 0; i < 100; i++) {
            double want = dts[k] == GX_BOOL                    ? (i ? 2 : 1)
                          : dts[k] == GX_I8 || dts[k] == GX_U8 ? (double)(i + 1)
                                                               : i + 1;
            GXT_NEAR(v[i], want, 0);
        }
        gx_array_release(a);
        gx_array_release(o);
    }
}

GXT_TEST(map_broadcast_outer)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t sr[2] = {5, 1}, sc[2] = {1, 7}, s1[1] = {7};
    double r[5], c[7];
    for (int i = 0; i < 5; i++)
        r[i] = i + 0.5;
    for (int j = 0; j < 7; j++)
        c[j] = 10.0 * j;
    gx_array *ar = upload_f64(ctx, r, 2, sr), *ac = upload_f64(ctx, c, 2, sc), *a1 = upload_f64(ctx, c, 1, s1),
             *o = NULL, *o2 = NULL;
    GXT_CHECK(ar && ac && a1);
    gx_array *in[2] = {ar, ac};
    GXT_OK(gx_map(ctx, "i, j -> i * 1000 + j", 2, in, NULL, &o));
    gx_array_desc d;
    GXT_OK(gx_array_describe(o, &d));
    GXT_CHECK(d.ndim == 2 && d.shape[0] == 5 && d.shape[1] == 7);
    double v[35];
    GXT_OK(gx_array_to_host(o, v, sizeof v));
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++)
            GXT_NEAR(v[i * 7 + j], r[i] * 1000 + c[j], 0);
    /* (5,1) with a 1-d (7,) broadcasts the same way */
    gx_array *in2[2] = {ar, a1};
    GXT_OK(gx_map(ctx, "i, j -> i - j", 2, in2, NULL, &o2));
    GXT_OK(gx_array_to_host(o2, v, sizeof v));
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++)
            GXT_NEAR(v[i * 7 + j], r[i] - c[j], 0);
    /* mismatch names both shapes */
    int64_t s3[1] = {3}, s5[1] = {5};
    gx_array *a3 = upload_f64(ctx, c, 1, s3), *a5 = upload_f64(ctx, r, 1, s5), *bad = NULL;
    gx_array *in3[2] = {a5, a3};
    GXT_STATUS(gx_map(ctx, "a, b -> a + b", 2, in3, NULL, &bad), GX_ERR_SHAPE);
    GXT_MSG_HAS("(3,)");
    GXT_MSG_HAS("(5,)");
    GXT_CHECK(bad == NULL);
    gx_array_release(a5);
    gx_array_release(ar);
    gx_array_release(ac);
    gx_array_release(a1);
    gx_array_release(a3);
    gx_array_release(o);
    gx_array_release(o2);
}

GXT_TEST(map_strided_views_and_in_place)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t shape[2] = {40, 30};
    double h[1200];
    for (int i = 0; i < 1200; i++)
        h[i] = gxt_rand01();
    gx_array *a = upload_f64(ctx, h, 2, shape), *t = NULL, *v = NULL, *o = NULL;
    int perm[2] = {1, 0};
    GXT_OK(gx_array_permute(a, perm, &t));
    gx_slice sl[2] = {{1, GX_END, 3}, {GX_END, GX_END, -2}};
    GXT_OK(gx_array_view(t, sl, &v)); /* rows 1,4,..; columns reversed, step 2 */
    GXT_OK(gx_map(ctx, "x -> x * x", 1, &v, NULL, &o));
    gx_array_desc d;
    GXT_OK(gx_array_describe(o, &d));
    double got[10 * 20];
    GXT_CHECK(d.shape[0] == 10 && d.shape[1] == 20);
    GXT_OK(gx_array_to_host(o, got, sizeof got));
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 20; j++) {
            double x = h[(39 - 2 * j) * 30 + (1 + 3 * i)];
            GXT_NEAR(got[i * 20 + j], x * x, 0);
        }
    /* in place on the view: writes through to the parent */
    GXT_OK(gx_map_into(ctx, "x -> -x", 1, &v, NULL, v));
    double back[1200];
    GXT_OK(gx_array_to_host(a, back, sizeof back));
    for (int r = 0; r < 40; r++)
        for (int c = 0; c < 30; c++) {
            bool in = (c - 1) % 3 == 0 && c >= 1 && (39 - r) % 2 == 0;
            GXT_CHECK(back[r * 30 + c] == (in ? -h[r * 30 + c] : h[r * 30 + c]));
        }
    /* overlapping output (shifted by one) goes through a temporary and is still right */
    gx_slice lo = {0, 29, 1}, hi = {1, 30, 1};
    int64_t n30 = 30;
    double line[30];
    for (int i = 0; i < 30; i++)
        line[i] = i;
    gx_array *l = upload_f64(ctx, line, 1, &n30), *vlo = NULL, *vhi = NULL;
    GXT_OK(gx_array_view(l, &lo, &vlo));
    GXT_OK(gx_array_view(l, &hi, &vhi));
    GXT_OK(gx_map_into(ctx, "x -> x + 100", 1, &vlo, NULL, vhi));
    GXT_OK(gx_array_to_host(l, line, sizeof line));
    GXT_NEAR(line[0], 0, 0);
    for (int i = 1; i < 30; i++)
        GXT_NEAR(line[i], i - 1 + 100, 0);
    gx_array_release(a);
    gx_array_release(t);
    gx_array_release(v);
    gx_array_release(o);
    gx_array_release(l);
    gx_array_release(vlo);
    gx_array_release(vhi);
}

GXT_TEST(map_constants_and_out_dtype)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *x = NULL, *o = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, 50, 0, 0.25, &x));
    gx_const cs[2] = {GX_CONST("a", GX_SCALAR_F32(2.5)), GX_CONST("k", GX_SCALAR_I32(3))};
    gx_map_opts op = {.dtype = GX_I32, .consts = cs, .nconsts = 2};
    GXT_OK(gx_map(ctx, "x -> a * x + k", 1, &x, &op, &o));
    int32_t v[50];
    GXT_OK(gx_array_to_host(o, v, sizeof v));
    for (int i = 0; i < 50; i++)
        GXT_EQ_I64(v[i], (int32_t)(2.5f * (i * 0.25f) + 3));
    /* gx_map always makes a new array: a non-NULL *out is ignored, never written */
    gx_array *keep = o;
    GXT_OK(gx_map(ctx, "x -> x + 1", 1, &x, NULL, &o));
    GXT_CHECK(o != NULL && o != keep);
    int32_t kept[50];
    GXT_OK(gx_array_to_host(keep, kept, sizeof kept));
    GXT_CHECK(memcmp(kept, v, sizeof v) == 0);
    gx_array_release(o);
    o = keep;
    /* gx_map_into converts the lambda's f32 value to out's i32 as a C cast (toward zero) */
    GXT_OK(gx_map_into(ctx, "x -> x * 3 - 0.5f", 1, &x, NULL, o));
    GXT_OK(gx_array_to_host(o, v, sizeof v));
    for (int i = 0; i < 50; i++)
        GXT_EQ_I64(v[i], (int32_t)((i * 0.25f) * 3 - 0.5f));
    /* ... unless exact_dtype: then out's dtype must be the result dtype */
    gx_map_opts exact = {.exact_dtype = 1};
    GXT_STATUS(gx_map_into(ctx, "x -> x * 3", 1, &x, &exact, o), GX_ERR_DTYPE);
    exact.dtype = GX_I32;
    GXT_OK(gx_map_into(ctx, "x -> x * 4", 1, &x, &exact, o));
    GXT_OK(gx_array_to_host(o, v, sizeof v));
    for (int i = 0; i < 50; i++)
        GXT_EQ_I64(v[i], i);
    /* zero inputs: a constant-valued scalar */
    gx_array *c = NULL;
    GXT_OK(gx_map(ctx, "-> 41 + 1", 0, NULL, NULL, &c));
    int32_t fortytwo = 0;
    GXT_OK(gx_array_get(c, NULL, &fortytwo));
    GXT_EQ_I64(fortytwo, 42);
    gx_array_release(x);
    gx_array_release(o);
    gx_array_release(c);
}

GXT_TEST(map_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *x = NULL, *o = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, 10, 0, 1, &x));
    GXT_STATUS(gx_map(ctx, "x -> x *", 1, &x, NULL, &o), GX_ERR_SYNTAX);
    GXT_MSG_HAS("x -> x *");
    GXT_MSG_HAS("^");
    GXT_STATUS(gx_map(ctx, "x -> y + 1", 1, &x, NULL, &o), GX_ERR_TYPE);
    GXT_MSG_HAS("y");
    GXT_STATUS(gx_map(ctx, "x, y -> x + y", 1, &x, NULL, &o), GX_ERR_TYPE);
    GXT_STATUS(gx_map(ctx, "x -> x & 1", 1, &x, NULL, &o), GX_ERR_TYPE);
    GXT_STATUS(gx_map(ctx, "x -> sin(x, x)", 1, &x, NULL, &o), GX_ERR_TYPE);
    GXT_STATUS(gx_map(ctx, NULL, 1, &x, NULL, &o), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_map(ctx, "x -> x", 1, &x, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_map(ctx, "x -> x", 1, NULL, NULL, &o), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_map(ctx, "x -> x", 17, &x, NULL, &o), GX_ERR_INVALID_ARGUMENT);
    gx_map_opts reserved = {.reserved = {0, 0, 0, 1}};
    GXT_STATUS(gx_map(ctx, "x -> x", 1, &x, &reserved, &o), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(o == NULL);
    /* gx_map_into needs an output of the broadcast shape */
    gx_array *y = NULL;
    int64_t n9 = 9;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n9, &y));
    GXT_STATUS(gx_map_into(ctx, "x -> x", 1, &x, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_map_into(ctx, "x -> x", 1, &x, NULL, y), GX_ERR_SHAPE);
    GXT_STATUS(gx_map_into(ctx, "x -> x *", 1, &x, NULL, y), GX_ERR_SYNTAX);
    gx_array_release(y);
    gx_array_release(x);
    GXT_STATUS(gx_map(ctx, "x -> x", 1, &x, NULL, &o), GX_ERR_INVALID_HANDLE);
}

/* ------------------------------------------------------------ user functions */

static const char *julia_src =
    "/* the seeds' Julia set, in plain C */\n"
    "int juliaset_pixel(int i, int j, int n)\n"
    "{\n"
    "    cf32 c = c32(-0.79f, 0.15f);\n"
    "    cf32 z = c32(-1.5f + 3.0f * (float)j / (float)n, -1.5f + 3.0f * (float)i / (float)n);\n"
    "    for (int k = 0; k < 255; k++) {\n"
    "        z = cadd(cmul(z, z), c);\n"
    "        if (cabs2(z) > 4.0f)\n"
    "            return k;\n"
    "    }\n"
    "    return 255;\n"
    "}\n";

static int julia_host(int i, int j, int n)
{
    float zr = -1.5f + 3.0f * (float)j / (float)n, zi = -1.5f + 3.0f * (float)i / (float)n;
    for (int k = 0; k < 255; k++) {
        float r = zr * zr - zi * zi - 0.79f, im = zr * zi + zi * zr + 0.15f;
        zr = r, zi = im;
        if (zr * zr + zi * zi > 4.0f)
            return k;
    }
    return 255;
}

GXT_TEST(map_user_function_julia_set)
{
    gx_ctx *ctx = gxt_ctx();
    GXT_OK(gx_define(ctx, "julia.c", julia_src));
    const int N = 1000;
    int64_t si[2] = {N, 1}, sj[2] = {1, N};
    gx_array *is = NULL, *js = NULL, *ri = NULL, *rj = NULL, *img = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I32, N, 0, 1, &is));
    GXT_OK(gx_array_iota(ctx, GX_I32, N, 0, 1, &js));
    GXT_OK(gx_array_reshape(is, 2, si, &ri));
    GXT_OK(gx_array_reshape(js, 2, sj, &rj));
    gx_array *in[2] = {ri, rj};
    gx_const n = GX_CONST("n", GX_SCALAR_I32(N));
    gx_map_opts op = {.consts = &n, .nconsts = 1};
    GXT_OK(gx_map(ctx, "i, j -> juliaset_pixel(i, j, n)", 2, in, &op, &img));
    int32_t *v = malloc(sizeof(int32_t) * (size_t)N * (size_t)N);
    GXT_OK(gx_array_to_host(img, v, sizeof(int32_t) * (size_t)N * (size_t)N));
    int64_t differ = 0, sum = 0, want_sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int w = julia_host(i, j, N);
            differ += v[i * N + j] != w;
            sum += v[i * N + j];
            want_sum += w;
        }
    /* The CPU matches the plain C loop exactly.  NVRTC contracts a*b+c into fma
     * (as nvcc does by default), and the iteration is chaotic on the set's boundary,
     * so there a few pixels escape at another step: bound how many, and the total. */
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(ctx, &k));
    if (k == GX_BACKEND_CPU)
        GXT_EQ_I64(differ, 0);
    GXT_CHECK(differ < N * N / 100);
    GXT_CHECK(llabs(sum - want_sum) < want_sum / 100);
    GXT_CHECK(sum > N * N); /* not a blank image */
    free(v);
    /* user function errors point at the user's lines */
    GXT_STATUS(gx_define(ctx, "broken.c", "float f(float x)\n{\n    return x +* 2;\n}\n"), GX_ERR_COMPILE);
    GXT_MSG_HAS("broken.c");
    GXT_MSG_HAS("3");
    GXT_STATUS(gx_define(ctx, "again.c", julia_src), GX_ERR_TYPE); /* defined twice */
    gx_array *bad = NULL;
    GXT_STATUS(gx_map(ctx, "i, j -> juliaset_pixel(i, j)", 2, in, &op, &bad), GX_ERR_TYPE);
    gx_array_release(is);
    gx_array_release(js);
    gx_array_release(ri);
    gx_array_release(rj);
    gx_array_release(img);
}

/* ------------------------------------------------------------ the kernel cache */

static void fresh_cache_dir(char *dir, size_t n) { gxt_temp_dir(dir, n); }

GXT_TEST(map_cache_hit_miss_and_second_process)
{
    char dir[256];
    fresh_cache_dir(dir, sizeof dir);
    GXT_CHECK(dir[0]);
    setenv("GX_CACHE_DIR", dir, 1);
    extern void cache_disk_reset_for_tests(void);
    cache_disk_reset_for_tests();
    gx_ctx *ctx = gxt_ctx();
    gx_array *x = NULL, *o = NULL;
    int64_t n = 64;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &x));
    GXT_OK(gx_map(ctx, "x -> x + 12345.5", 1, &x, NULL, &o));
    gx_cache_stats c1, c2;
    GXT_OK(gx_cache_stats_get(ctx, &c1));
    GXT_CHECK(c1.compiles >= 1);
    gx_array_release(o);
    o = NULL;
    GXT_OK(gx_map(ctx, "x -> x + 12345.5", 1, &x, NULL, &o)); /* same kernel: memory hit */
    GXT_OK(gx_cache_stats_get(ctx, &c2));
    GXT_EQ_I64(c2.compiles, c1.compiles);
    GXT_CHECK(c2.mem_hits > c1.mem_hits);
    /* A second process running the same program must not compile at all. */
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "gx_tests", "--child-cache-probe", (char *)NULL);
        _exit(3);
    }
    int st = 0; /* a failed fork or wait must not read as a child that exited 0 */
    GXT_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    gx_array_release(x);
    gx_array_release(o);
}

/* Run in a child by the test above: same map, expects a disk hit and no compile. */
int gxt_child_cache_probe(void);
int gxt_child_cache_probe(void)
{
    gx_ctx *ctx = NULL;
    if (gx_ctx_create(&ctx, GX_BACKEND_AUTO) != GX_OK)
        return 4;
    gx_array *x = NULL, *o = NULL;
    int64_t n = 64;
    if (gx_array_zeros(ctx, GX_F64, 1, &n, &x) != GX_OK || gx_map(ctx, "x -> x + 12345.5", 1, &x, NULL, &o) != GX_OK)
        return 5;
    double v = 0;
    int64_t k = 3;
    gx_array_get(o, &k, &v);
    gx_cache_stats c;
    gx_cache_stats_get(ctx, &c);
    int ok = c.compiles == 0 && c.disk_hits >= 1 && v == 12345.5;
    printf("child: compiles=%llu disk_hits=%llu value=%g\n", (unsigned long long)c.compiles,
           (unsigned long long)c.disk_hits, v);
    gx_ctx_destroy(ctx);
    return ok ? 0 : 1;
}

GXT_TEST(map_cache_corrupt_entry_is_rebuilt)
{
    char dir[256];
    fresh_cache_dir(dir, sizeof dir);
    setenv("GX_CACHE_DIR", dir, 1);
    extern void cache_disk_reset_for_tests(void);
    cache_disk_reset_for_tests();
    gx_ctx *ctx = gxt_ctx();
    gx_array *x = NULL, *o = NULL;
    int64_t n = 16;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &x));
    GXT_OK(gx_map(ctx, "x -> x + 777", 1, &x, NULL, &o));
    gx_array_release(o);
    o = NULL;
    /* Corrupt every entry on disk, then ask again from a fresh context. */
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "find '%s' -type f -name '*.c' -o -type f -name '*.cuda' | while read f; do printf 'garbage' | dd "
             "of=\"$f\" bs=1 seek=60 conv=notrunc 2>/dev/null; done",
             dir);
    GXT_CHECK(system(cmd) == 0);
    gx_ctx *c2 = NULL;
    GXT_OK(gx_ctx_create(&c2, GX_BACKEND_AUTO));
    gx_array *x2 = NULL;
    GXT_OK(gx_array_zeros(c2, GX_F64, 1, &n, &x2));
    GXT_OK(gx_map(c2, "x -> x + 777", 1, &x2, NULL, &o));
    double v = 0;
    int64_t k = 0;
    GXT_OK(gx_array_get(o, &k, &v));
    GXT_NEAR(v, 777, 0);
    gx_cache_stats cs;
    GXT_OK(gx_cache_stats_get(c2, &cs));
    GXT_CHECK(cs.corrupt_entries >= 1);
    GXT_CHECK(cs.compiles >= 1);
    gx_array_release(x);
    gx_array_release(x2);
    gx_array_release(o);
    gx_ctx_destroy(c2);
}

GXT_TEST(map_source_dump)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *x = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, 8, 0, 1, &x));
    size_t need = 0;
    GXT_OK(gx_map_source(ctx, "x -> sqrt(x)", 1, &x, NULL, NULL, 0, &need));
    char *src = malloc(need);
    GXT_OK(gx_map_source(ctx, "x -> sqrt(x)", 1, &x, NULL, src, need, NULL));
    GXT_CHECK(strstr(src, "gx_ew") != NULL);
    GXT_CHECK(strstr(src, "sqrt") != NULL);
    free(src);
    char dir[256];
    fresh_cache_dir(dir, sizeof dir);
    GXT_OK(gx_set_dump_dir(ctx, dir));
    gx_array *o = NULL;
    GXT_OK(gx_map(ctx, "x -> x * 3.25f", 1, &x, NULL, &o));
    char cmd[400];
    snprintf(cmd, sizeof cmd, "grep -l '3.25' '%s'/* >/dev/null", dir);
    GXT_CHECK(system(cmd) == 0);
    GXT_OK(gx_set_dump_dir(ctx, NULL));
    gx_array_release(x);
    gx_array_release(o);
}

/* sin and cos of the same argument are fused into one sincos on CUDA: check the
 * rewrite keeps every value (several pairs, nested, f32 and f64). */
GXT_TEST(map_sincos_fusion_values)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 4099;
    double h[4099];
    for (int i = 0; i < n; i++)
        h[i] = gxt_rand01() * 40 - 20;
    gx_array *x = NULL, *xf = NULL, *o = NULL, *of = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x));
    GXT_OK(gx_array_clone(x, GX_F32, &xf));
    const char *lam = "x -> sin(x)*cos(x) + cos(2*x) - sin(2*x)*sin(x) + sin(cos(x))*cos(cos(x))";
    GXT_OK(gx_map(ctx, lam, 1, &x, NULL, &o));
    GXT_OK(gx_map(ctx, lam, 1, &xf, NULL, &of));
    double v[4099];
    float vf[4099];
    GXT_OK(gx_array_to_host(o, v, sizeof v));
    GXT_OK(gx_array_to_host(of, vf, sizeof vf));
    for (int i = 0; i < n; i++) {
        double a = h[i], want = sin(a) * cos(a) + cos(2 * a) - sin(2 * a) * sin(a) + sin(cos(a)) * cos(cos(a));
        float af = (float)h[i];
        double wantf = sinf(af) * cosf(af) + cosf(2 * af) - sinf(2 * af) * sinf(af) + sinf(cosf(af)) * cosf(cosf(af));
        if (fabs(v[i] - want) > 1e-12 || fabs(vf[i] - wantf) > 1e-5) {
            GXT_NEAR(v[i], want, 1e-12);
            GXT_NEAR(vf[i], wantf, 1e-5);
            break;
        }
    }
    gx_array_release(x);
    gx_array_release(xf);
    gx_array_release(o);
    gx_array_release(of);
}

/* A process may load many kernels: the CPU backend's in-memory loading must not run
 * out of names (it once failed after ~70 kernels). */
GXT_TEST(map_many_kernels_in_one_process)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *x = NULL;
    int64_t n = 16;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &x));
    for (int i = 0; i < 80; i++) {
        char lam[64];
        snprintf(lam, sizeof lam, "x -> x * 2 + %d", i);
        gx_array *y = NULL;
        GXT_OK(gx_map(ctx, lam, 1, &x, NULL, &y));
        float v = 0;
        int64_t k = 5;
        GXT_OK(gx_array_get(y, &k, &v));
        GXT_CHECK(v == 10.0f + (float)i);
        gx_array_release(y);
    }
    gx_array_release(x);
}

/* Warm calls find their kernels by a binary key (memo.c's front): one lambda text on
 * alternating dtypes, layouts and constant dtypes must each get its own kernel. */
GXT_TEST(map_warm_calls_alternate_dtypes_and_layouts)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 33;
    gx_array *xf = NULL, *xi = NULL, *xd = NULL, *of = NULL, *oi = NULL, *od = NULL, *rv = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0.5, 1, &xf));
    GXT_OK(gx_array_iota(ctx, GX_I32, n, -7, 1, &xi));
    GXT_OK(gx_array_iota(ctx, GX_F64, n, 0.25, 1, &xd));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &of));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &oi));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &od));
    gx_slice sl = {-1, GX_END, -1};
    GXT_OK(gx_array_view(xd, &sl, &rv));
    gx_map_opts ci = {.consts = (gx_const[]){{"c", {GX_I32, {.i = 3}}}}, .nconsts = 1};
    gx_map_opts cd = {.consts = (gx_const[]){{"c", {GX_F64, {.f = 0.5}}}}, .nconsts = 1};
    for (int round = 0; round < 3; round++) {
        GXT_OK(gx_map_into(ctx, "x -> x * c", 1, &xf, &ci, of));
        GXT_OK(gx_map_into(ctx, "x -> x * c", 1, &xi, &ci, oi));
        GXT_OK(gx_map_into(ctx, "x -> x * c", 1, &xd, &cd, od));
        float hf[33];
        int32_t hi[33];
        double hd[33];
        GXT_OK(gx_array_to_host(of, hf, sizeof hf));
        GXT_OK(gx_array_to_host(oi, hi, sizeof hi));
        GXT_OK(gx_array_to_host(od, hd, sizeof hd));
        for (int i = 0; i < n; i++) {
            GXT_CHECK(hf[i] == (0.5f + (float)i) * 3);
            GXT_CHECK(hi[i] == (-7 + i) * 3);
            GXT_CHECK(hd[i] == (0.25 + i) * 0.5);
        }
        GXT_OK(gx_map_into(ctx, "x -> x * c", 1, &rv, &cd, od)); /* the reversed view: strided plan */
        GXT_OK(gx_array_to_host(od, hd, sizeof hd));
        for (int i = 0; i < n; i++)
            GXT_CHECK(hd[i] == (0.25 + (double)(n - 1 - i)) * 0.5);
    }
    gx_array *all[] = {xf, xi, xd, of, oi, od, rv};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
}
