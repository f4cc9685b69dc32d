/* test_reduce_finish.c -- gx_reduce_opts.finish (gx/reduce.h, "Finishing"): a
 * one-parameter lambda applied to each folded value in the reduction's kernel.
 * Checked against host references on fresh random data: every float dtype, integer
 * results, "mean" and constants, along axes of dense and strided views, empty
 * inputs, the memo keyed by the finish, and bad input. */
#include "gx_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const int64_t FIN_SIZES[] = {0, 1, 31, 32, 33, 1023, 4097, (1 << 20) + 7};

/* n fresh values in [0, 1) as `dt`, and the same values (after rounding to dt) in h. */
static void rand_array(gx_ctx *ctx, gx_dtype dt, int64_t n, double *h, gx_array **out)
{
    float *f = malloc((size_t)(n ? n : 1) * sizeof *f);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)gxt_rand01();
    gx_array *a32 = NULL, *back = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, f, &a32));
    GXT_OK(gx_array_clone(a32, dt, out));
    GXT_OK(gx_array_clone(*out, GX_F32, &back)); /* the values as dt holds them */
    GXT_OK(gx_array_to_host(back, f, (size_t)n * sizeof *f));
    for (int64_t i = 0; i < n; i++)
        h[i] = f[i];
    gx_array_release(a32);
    gx_array_release(back);
    free(f);
}

/* The l2 distance as one call, to a host scalar and into a 0-d device array, for
 * every float dtype and edge sizes. */
GXT_TEST(reduce_finish_l2_every_float_dtype)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_F32, GX_F64, GX_F16, GX_BF16};
    /* relative tolerance of the result: the f32 / f64 sum's bound is far inside it;
     * halves: the squares add in f32 and the result is rounded to the half once */
    const double rel[] = {2e-6, 1e-12, 2e-3, 1e-2};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        for (size_t z = 0; z < sizeof FIN_SIZES / sizeof FIN_SIZES[0]; z++) {
            int64_t n = FIN_SIZES[z];
            double *hx = malloc((size_t)(n + 1) * 8), *hy = malloc((size_t)(n + 1) * 8);
            gx_array *x = NULL, *y = NULL;
            rand_array(ctx, dts[d], n, hx, &x);
            rand_array(ctx, dts[d], n, hy, &y);
            long double acc = 0;
            for (int64_t i = 0; i < n; i++)
                acc += (long double)(hx[i] - hy[i]) * (long double)(hx[i] - hy[i]);
            double want = sqrt((double)acc);
            gx_reduce_opts o = {.finish = "s -> sqrt(s)"};
            gx_array *in[2] = {x, y};
            gx_scalar s;
            GXT_OK(gx_mapreduce(ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, &o, &s));
            GXT_EQ_I64(s.dtype, dts[d]);
            if (fabs(s.v.f - want) > rel[d] * want) {
                GXT_CHECK(!"host scalar off");
                fprintf(stderr, "  %s n=%lld: %.9g want %.9g\n", gx_dtype_name(dts[d]), (long long)n, s.v.f, want);
            }
            gx_array *out = NULL, *o64 = NULL;
            GXT_OK(gx_array_zeros(ctx, dts[d], 0, NULL, &out));
            GXT_OK(gx_mapreduce_into(ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, &o, out));
            GXT_OK(gx_array_clone(out, GX_F64, &o64));
            double got = -1;
            GXT_OK(gx_array_to_host(o64, &got, sizeof got));
            GXT_CHECK(got == s.v.f); /* the same kernel, the same value */
            gx_array_release(out);
            gx_array_release(o64);
            gx_array_release(x);
            gx_array_release(y);
            free(hx);
            free(hy);
        }
    }
}

/* Integer results, "count", "mean" with a named constant, a user function. */
GXT_TEST(reduce_finish_ints_mean_consts)
{
    gx_ctx *ctx = gxt_ctx();
    for (size_t z = 0; z < sizeof FIN_SIZES / sizeof FIN_SIZES[0]; z++) {
        int64_t n = FIN_SIZES[z];
        int32_t *h = malloc((size_t)(n + 1) * 4);
        int64_t sum = 0, cnt = 0;
        for (int64_t i = 0; i < n; i++) {
            h[i] = (int32_t)(gxt_rand_u64() % 2000001) - 1000000;
            sum += h[i];
            cnt += h[i] != 0 && h[i] % 3 != 0;
        }
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, h, &x));
        gx_scalar s;
        gx_reduce_opts o = {.finish = "s -> s % 1000"};
        GXT_OK(gx_reduce(ctx, "+", x, &o, &s));
        GXT_EQ_I64(s.dtype, GX_I64);
        GXT_EQ_I64(s.v.i, sum % 1000);
        gx_reduce_opts oc = {.finish = "c -> c * 3 + 1"};
        GXT_OK(gx_mapreduce(ctx, "v -> v % 3", "count", 1, &x, &oc, &s));
        GXT_EQ_I64(s.v.i, cnt * 3 + 1);
        if (n > 0) {
            gx_const k = GX_CONST("k", GX_SCALAR_F64(0.25));
            gx_reduce_opts om = {.finish = "m -> (m - k) * 2", .consts = &k, .nconsts = 1};
            GXT_OK(gx_reduce(ctx, "mean", x, &om, &s));
            double want = ((double)sum / (double)n - 0.25) * 2;
            GXT_NEAR(s.v.f, want, 1e-12);
        }
        gx_array_release(x);
        free(h);
    }
    GXT_OK(gx_define(ctx, "finish_test", "float fin_half(float v) { return v * 0.5f; }"));
    int64_t n = 1000;
    gx_array *x = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &x));
    gx_reduce_opts o = {.finish = "s -> fin_half(s)"};
    gx_scalar s;
    GXT_OK(gx_reduce(ctx, "+", x, &o, &s));
    GXT_EQ_I64(s.v.f, 999 * 1000 / 4);
    gx_array_release(x);
}

/* Along axes: row sums and column maxima of a dense matrix and of a strided,
 * reversed view, and two of three axes of a 3-d array, each output finished. */
GXT_TEST(reduce_finish_axes_rows_cols_strided)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t R = 37, C = 45;
    int64_t sh[2] = {R, C};
    double *h = malloc((size_t)(R * C) * 8);
    for (int64_t i = 0; i < R * C; i++)
        h[i] = gxt_rand01() - 0.5;
    gx_array *x = NULL, *v = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 2, sh, h, &x));
    gx_slice sl[2] = {{R - 1, GX_END, -2}, {1, GX_END, 3}}; /* rows 36, 34, ..., 0; cols 1, 4, ... */
    GXT_OK(gx_array_view(x, sl, &v));
    const int64_t vr = (R + 1) / 2, vc = (C - 1 + 2) / 3;
    for (int which = 0; which < 2; which++) {
        gx_array *a = which ? v : x;
        int64_t nr = which ? vr : R, nc = which ? vc : C;
        for (int axis = 0; axis < 2; axis++) {
            gx_reduce_opts o = {.axes = &axis, .naxes = 1};
            o.finish = axis == 1 ? "s -> s * 0.5 + 1" : "m -> -m";
            gx_array *out = NULL;
            GXT_OK(gx_reduce_to(ctx, axis == 1 ? "+" : "max", a, &o, &out));
            int64_t nout = axis == 1 ? nr : nc;
            double *got = malloc((size_t)nout * 8);
            GXT_OK(gx_array_to_host(out, got, (size_t)nout * 8));
            for (int64_t j = 0; j < nout; j++) {
                double acc = axis == 1 ? 0 : -INFINITY;
                for (int64_t t = 0; t < (axis == 1 ? nc : nr); t++) {
                    int64_t r = axis == 1 ? j : t, c = axis == 1 ? t : j;
                    int64_t src = which ? (R - 1 - 2 * r) * C + 1 + 3 * c : r * C + c;
                    acc = axis == 1 ? acc + h[src] : fmax(acc, h[src]);
                }
                double want = axis == 1 ? acc * 0.5 + 1 : -acc;
                if (fabs(got[j] - want) > 1e-12 * (1 + fabs(want))) {
                    GXT_CHECK(!"finished axis value off");
                    fprintf(stderr, "  view %d axis %d [%lld] = %.17g want %.17g\n", which, axis, (long long)j, got[j],
                            want);
                    break;
                }
            }
            free(got);
            gx_array_release(out);
        }
    }
    /* 3-d, axes {0, 2}, f32 input and result */
    int64_t s3[3] = {5, 7, 33}, n3 = 5 * 7 * 33;
    float *f = malloc((size_t)n3 * 4);
    for (int64_t i = 0; i < n3; i++)
        f[i] = (float)gxt_rand01();
    gx_array *y = NULL, *out = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 3, s3, f, &y));
    int axes[2] = {0, 2};
    gx_reduce_opts o = {.axes = axes, .naxes = 2, .finish = "s -> sqrt(s)"};
    GXT_OK(gx_reduce_to(ctx, "+", y, &o, &out));
    float got[7];
    GXT_OK(gx_array_to_host(out, got, sizeof got));
    for (int j = 0; j < 7; j++) {
        double acc = 0;
        for (int a = 0; a < 5; a++)
            for (int c = 0; c < 33; c++)
                acc += f[(a * 7 + j) * 33 + c];
        GXT_NEAR(got[j], sqrt(acc), 1e-6);
    }
    gx_array_release(out);
    gx_array_release(y);
    gx_array_release(v);
    gx_array_release(x);
    free(f);
    free(h);
}

/* The memo is keyed by the finish: alternating finishes (and none) on the same
 * inputs give each its own value. */
GXT_TEST(reduce_finish_memo_sees_the_text)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 4097;
    gx_array *x = NULL, *out = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I64, n, 1, 1, &x));
    GXT_OK(gx_array_zeros(ctx, GX_I64, 0, NULL, &out));
    const char *fins[] = {NULL, "s -> s + 1", "s -> s + 2", NULL, "s -> s * 2", "s -> s + 1"};
    const int64_t base = n * (n + 1) / 2, want[] = {base, base + 1, base + 2, base, 2 * base, base + 1};
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof fins / sizeof fins[0]; i++) {
            gx_reduce_opts o = {.finish = fins[i]};
            GXT_OK(gx_reduce_into(ctx, "+", x, &o, out));
            int64_t got = 0;
            GXT_OK(gx_array_to_host(out, &got, sizeof got));
            GXT_EQ_I64(got, want[i]);
        }
    }
    gx_array_release(out);
    gx_array_release(x);
}

GXT_TEST(reduce_finish_empty_and_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t zero = 0, sh[2] = {3, 0};
    gx_array *e = NULL, *e2 = NULL, *out = NULL, *x = NULL, *vals = NULL, *idx = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &zero, &e));
    gx_reduce_opts o = {.finish = "s -> s + 1"};
    gx_scalar s;
    GXT_OK(gx_reduce(ctx, "+", e, &o, &s));
    GXT_EQ_I64(s.v.f, 1);
    /* three rows of nothing: three neutral elements, each finished */
    GXT_OK(gx_array_empty(ctx, GX_F32, 2, sh, &e2));
    int axis = 1;
    gx_reduce_opts oa = {.axes = &axis, .naxes = 1, .finish = "s -> s + 1"};
    GXT_OK(gx_reduce_to(ctx, "+", e2, &oa, &out));
    float got[3] = {0};
    GXT_OK(gx_array_to_host(out, got, sizeof got));
    GXT_CHECK(got[0] == 1 && got[1] == 1 && got[2] == 1);
    gx_array_release(out);
    out = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, 10, 0, 1, &x));
    /* calls that find an index refuse a finish */
    GXT_STATUS(gx_find_to(ctx, "min", x, &o, &vals, &idx), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("finish");
    GXT_CHECK(vals == NULL && idx == NULL);
    /* malformed lambdas: a caret under the column */
    gx_reduce_opts bad = {.finish = "s -> sqrt(s"};
    GXT_STATUS(gx_reduce(ctx, "+", x, &bad, &s), GX_ERR_SYNTAX);
    GXT_MSG_HAS("^");
    bad.finish = "a, b -> a + b";
    GXT_STATUS(gx_reduce(ctx, "+", x, &bad, &s), GX_ERR_TYPE);
    bad.finish = "s -> s + nope";
    GXT_STATUS(gx_reduce_to(ctx, "+", x, &bad, &out), GX_ERR_TYPE);
    GXT_MSG_HAS("nope");
    GXT_CHECK(out == NULL);
    /* the same call without the bad finish still works */
    GXT_OK(gx_reduce(ctx, "+", x, NULL, &s));
    GXT_EQ_I64(s.v.f, 45);
    gx_array_release(x);
    gx_array_release(e);
    gx_array_release(e2);
}
