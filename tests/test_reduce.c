/* test_reduce.c -- gx_reduce / gx_mapreduce / along axes / argmin & co.: values against
 * host references for every operator and dtype at edge sizes, determinism, axes on
 * 3-D and 4-D arrays and views, device-array chains, > 2^31 elements (CUDA), bad input.
 *
 * Float tolerances come from the error bounds gx/reduce.h documents, not from a
 * guess scaled by n: "+" and "mean" accumulate in f64 and round once, so a result is
 * within u_out*|S| + n*eps_f64*sum|x| of the exact sum S (u_out = 2^-24 for f32,
 * 2^-53 for f64: half an ulp), over n for the mean; "*" folds in its own dtype
 * (Higham's gamma_{n-1} bound); max and min are exact.  The references are
 * compensated sums in long double (error about 2^-64 |S|, nothing next to the
 * bound).  Every float sum and mean check also asserts that its tolerance REJECTS the
 * sum with one element left out (DROP_REJECTED): the data keep every |x| >= 0.5 so
 * that any dropped element shows, and the sizes stop at 2^22+7, beyond which one
 * element of [0.5, 1) sits within f32's last bit of a same-sign sum. */
#include "gx_test.h"

#include <float.h>
#include <stdbool.h>

/* 4097 ... 131071: two to eight blocks' worth of work on CUDA for every element size,
 * which sm_90 folds in one thread block cluster (reduce_gen.c, gx_rg_cl). */
static const int64_t SIZES[] = {0, 1, 31, 32, 33, 1023, 1025, 4097, 20001, 65536, 131071, (1 << 20) + 7, (1 << 22) + 7};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))
/* The largest size whose float sums are checked to reject a dropped element. */
#define DROP_MAX (((int64_t)1 << 22) + 7)

/* ------------------------------------------------------------ float references */

/* Neumaier's compensated sum in long double of x[0..n) (*abs_sum: sum of |x|). */
static double ref_sum(const double *x, int64_t n, double *abs_sum)
{
    long double s = 0, c = 0, a = 0;
    for (int64_t i = 0; i < n; i++) {
        long double v = x[i], t = s + v;
        c += fabsl(s) >= fabsl(v) ? (s - t) + v : (v - t) + s;
        s = t;
        a += fabsl(v);
    }
    *abs_sum = (double)a;
    return (double)(s + c);
}

/* Half an ulp of dtype t, relative: the one rounding of a result. */
static double unit_round(gx_dtype t) { return t == GX_F32 ? 0x1p-24 : 0x1p-53; }

/* gx/reduce.h's bound for a sum of n values (exact sum S, sum of magnitudes A)
 * accumulated in f64 and rounded once to `out`. */
static double sum_bound(gx_dtype out, int64_t n, double S, double A)
{
    return unit_round(out) * fabs(S) + (double)n * DBL_EPSILON * A;
}

/* gamma_k = k*u / (1 - k*u): relative error bound of k roundings of unit u. */
static double gamma_k(int64_t k, double u) { return (double)k * u / (1 - (double)k * u); }

static double round_to(gx_dtype t, double v) { return t == GX_F32 ? (double)(float)v : v; }

/* Index of the smallest |x[i]|: the element whose absence is hardest to see. */
static int64_t least_abs(const double *x, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 1; i < n; i++)
        if (fabs(x[i]) < fabs(x[k]))
            k = i;
    return k;
}

/* The tolerance `tol` around the right answer `want` must reject `wrong`, the answer
 * a reduction that left one element out would give (rounded to its dtype): else the
 * check could not see that mistake. */
#define DROP_REJECTED(what, n, want, wrong, tol)                                                               \
    do {                                                                                                       \
        double dw_ = (wrong), dt_ = (tol);                                                                     \
        if (!(fabs(dw_ - (want)) > dt_))                                                                       \
            GXT_FAIL_AT(__FILE__, __LINE__, "%s, n=%lld: tolerance %.3g would accept a dropped element (%.17g " \
                        "vs %.17g)", what, (long long)(n), dt_, dw_, (double)(want));                         \
    } while (0)

/* Writes value v (an integer or a float) as one element of dtype t. */
static void put(gx_dtype t, void *buf, int64_t i, int64_t iv, double fv)
{
    char *p = (char *)buf + i * (int64_t)gx_dtype_size(t);
    switch (t) {
    case GX_BOOL: {
        bool x = iv != 0;
        memcpy(p, &x, 1);
        break;
    }
    case GX_I8: {
        int8_t x = (int8_t)iv;
        memcpy(p, &x, 1);
        break;
    }
    case GX_I16: {
        int16_t x = (int16_t)iv;
        memcpy(p, &x, 2);
        break;
    }
    case GX_I32: {
        int32_t x = (int32_t)iv;
        memcpy(p, &x, 4);
        break;
    }
    case GX_I64: memcpy(p, &iv, 8); break;
    case GX_U8: {
        uint8_t x = (uint8_t)iv;
        memcpy(p, &x, 1);
        break;
    }
    case GX_U16: {
        uint16_t x = (uint16_t)iv;
        memcpy(p, &x, 2);
        break;
    }
    case GX_U32: {
        uint32_t x = (uint32_t)iv;
        memcpy(p, &x, 4);
        break;
    }
    case GX_U64: {
        uint64_t x = (uint64_t)iv;
        memcpy(p, &x, 8);
        break;
    }
    case GX_F32: {
        float x = (float)fv;
        memcpy(p, &x, 4);
        break;
    }
    case GX_F64: memcpy(p, &fv, 8); break;
    default: break;
    }
}

/* x converted to dtype t and back, as C does (bit pattern for u64). */
static int64_t norm(gx_dtype t, int64_t x)
{
    switch (t) {
    case GX_BOOL: return x != 0;
    case GX_I8: return (int8_t)x;
    case GX_I16: return (int16_t)x;
    case GX_I32: return (int32_t)x;
    case GX_U8: return (uint8_t)x;
    case GX_U16: return (uint16_t)x;
    case GX_U32: return (uint32_t)x;
    default: return x;
    }
}

static int64_t sc_i(gx_scalar s) { return s.dtype == GX_U64 ? (int64_t)s.v.u : s.v.i; }

static bool is_float(gx_dtype t) { return t == GX_F32 || t == GX_F64; }
static bool is_unsigned(gx_dtype t) { return t >= GX_U8 && t <= GX_U64; }

/* Host data for an operator: products get mostly ones (no overflow noise in floats);
 * other floats are +-[0.5, 10), so that leaving any one out of a sum shows. */
static void make_data(gx_dtype t, const char *op, int64_t n, int64_t *iv, double *fv)
{
    bool mul = strcmp(op, "*") == 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = gxt_rand_u64();
        if (t == GX_BOOL)
            iv[i] = (int64_t)(r % 2);
        else if (mul)
            iv[i] = r % 97 == 0 ? 2 : r % 89 == 0 ? (is_unsigned(t) ? 3 : -1) : 1;
        else
            iv[i] = is_unsigned(t) ? (int64_t)(r % 101) : (int64_t)(r % 101) - 50;
        fv[i] = mul ? 1.0 + ((double)(r % 1000) - 500.0) * 1e-6 : (r >> 63 ? -1 : 1) * (0.5 + 9.5 * gxt_rand01());
        if (t == GX_F32)
            fv[i] = (float)fv[i];
    }
}

typedef struct ref {
    int64_t i;
    double f;
    bool isf;
} ref;

static ref host_ref(gx_dtype t, const char *op, int64_t n, const int64_t *iv, const double *fv)
{
    ref r = {0, 0, is_float(t)};
    bool fl = is_float(t);
    if (!strcmp(op, "+") || !strcmp(op, "mean")) {
        uint64_t s = 0;
        double d = 0;
        for (int64_t i = 0; i < n; i++)
            s += (uint64_t)norm(t, iv[i]), d += fl ? fv[i] : (double)norm(t, iv[i]);
        r.i = (int64_t)s, r.f = d;
        if (!strcmp(op, "mean"))
            r.f = d / (double)n, r.isf = true;
    } else if (!strcmp(op, "*")) {
        uint64_t s = 1;
        double d = 1;
        for (int64_t i = 0; i < n; i++)
            s *= (uint64_t)norm(t, iv[i]), d *= fv[i];
        r.i = (int64_t)s, r.f = d;
    } else if (!strcmp(op, "max") || !strcmp(op, "min")) {
        bool mx = op[1] == 'a';
        int64_t s = 0;
        double d = NAN; /* fmax's neutral element */
        for (int64_t i = 0; i < n; i++) {
            int64_t x = norm(t, iv[i]);
            if (i == 0 || (mx ? x > s : x < s))
                s = x;
            d = mx ? fmax(d, fv[i]) : fmin(d, fv[i]);
        }
        if (n == 0 && !fl) { /* the neutral elements: lowest / highest of the dtype */
            static const int64_t lo[GX_DTYPE_COUNT] = {
                [GX_BOOL] = 0, [GX_I8] = INT8_MIN, [GX_I16] = INT16_MIN, [GX_I32] = INT32_MIN, [GX_I64] = INT64_MIN};
            static const int64_t hi[GX_DTYPE_COUNT] = {
                [GX_BOOL] = 1,         [GX_I8] = INT8_MAX,    [GX_I16] = INT16_MAX,
                [GX_I32] = INT32_MAX,  [GX_I64] = INT64_MAX,  [GX_U8] = UINT8_MAX,
                [GX_U16] = UINT16_MAX, [GX_U32] = UINT32_MAX, [GX_U64] = -1};
            s = mx ? lo[t] : hi[t];
        }
        r.i = s, r.f = d;
    } else if (!strcmp(op, "&") || !strcmp(op, "|") || !strcmp(op, "^")) {
        int64_t s = op[0] == '&' ? -1 : 0;
        for (int64_t i = 0; i < n; i++)
            s = op[0] == '&' ? s & iv[i] : op[0] == '|' ? s | iv[i] : s ^ iv[i];
        r.i = norm(t, s);
    } else if (!strcmp(op, "&&") || !strcmp(op, "||") || !strcmp(op, "count")) {
        int64_t c = 0;
        for (int64_t i = 0; i < n; i++)
            c += fl ? fv[i] != 0 : norm(t, iv[i]) != 0;
        r.i = op[0] == '&' ? c == n : op[0] == '|' ? c > 0 : c;
        r.isf = false;
    }
    return r;
}

/* A float result of `op` over v[0..n) (the values, of dtype t, as doubles; host: the
 * host's value) within the bound gx/reduce.h documents for it.  For float sums and
 * means the bound must also reject the result with one element left out. */
static void check_float_result(gx_dtype t, const char *op, int64_t n, const double *v, gx_scalar s, double host)
{
    double got = s.v.f, want = host, tol = 0; /* max, min: exact */
    bool mean = !strcmp(op, "mean");
    if (mean || !strcmp(op, "+")) {
        double A, S = ref_sum(v, n, &A), per = mean ? (double)n : 1;
        want = S / per;
        tol = sum_bound(s.dtype, n, S, A) / per;
        if (is_float(t) && n > 0 && n <= DROP_MAX)
            DROP_REJECTED(op, n, want, round_to(s.dtype, (S - v[least_abs(v, n)]) / per), tol);
    } else if (!strcmp(op, "*")) { /* folds in t; the host's product in f64 errs too */
        tol = (gamma_k(n, unit_round(t)) + gamma_k(n, 0x1p-53)) * fabs(host);
    }
    if (!(got == want || (isnan(got) && isnan(want)) || fabs(got - want) <= tol))
        GXT_FAIL_AT(__FILE__, __LINE__, "%s %s n=%lld: %.17g vs host %.17g (|error| %.3g, bound %.3g)",
                    gx_dtype_name(t), op, (long long)n, got, want, fabs(got - want), tol);
}

static void check_op(gx_ctx *ctx, gx_dtype t, const char *op, int64_t n)
{
    int64_t *iv = malloc((size_t)(n + 1) * 8);
    double *fv = malloc((size_t)(n + 1) * 8);
    void *raw = malloc((size_t)(n + 1) * 8);
    make_data(t, op, n, iv, fv);
    for (int64_t i = 0; i < n; i++)
        put(t, raw, i, iv[i], fv[i]);
    gx_array *x = NULL;
    gx_scalar s;
    gx_status st = gx_array_from_host(ctx, t, 1, &n, raw, &x);
    if (st == GX_OK)
        st = gx_reduce(ctx, op, x, NULL, &s);
    if (!strcmp(op, "mean") && n == 0) {
        GXT_CHECK(st == GX_ERR_INVALID_ARGUMENT);
    } else if (st != GX_OK) {
        GXT_FAIL_AT(__FILE__, __LINE__, "%s %s n=%lld: %s: %s", gx_dtype_name(t), op, (long long)n,
                    gx_status_string(st), gx_last_error());
    } else {
        ref r = host_ref(t, op, n, iv, fv);
        if (r.isf) {
            if (!is_float(t)) /* the mean of integers: their values as doubles */
                for (int64_t i = 0; i < n; i++)
                    fv[i] = (double)norm(t, iv[i]);
            check_float_result(t, op, n, fv, s, r.f);
        } else if (sc_i(s) != r.i) {
            GXT_FAIL_AT(__FILE__, __LINE__, "%s %s n=%lld: %lld vs host %lld", gx_dtype_name(t), op, (long long)n,
                        (long long)sc_i(s), (long long)r.i);
        }
    }
    gx_array_release(x);
    free(iv);
    free(fv);
    free(raw);
}

/* findmin / findmax (value and first index) against a host scan; sizes > 0. */
static void check_find(gx_ctx *ctx, gx_dtype t, int64_t n)
{
    int64_t *iv = malloc((size_t)n * 8);
    double *fv = malloc((size_t)n * 8);
    void *raw = malloc((size_t)n * 8);
    make_data(t, "max", n, iv, fv);
    for (int64_t i = 0; i < n; i++)
        put(t, raw, i, iv[i], fv[i]);
    int64_t lo = 0, hi = 0;
    for (int64_t i = 1; i < n; i++) {
        double a = is_float(t) ? fv[i] : (double)norm(t, iv[i]), l = is_float(t) ? fv[lo] : (double)norm(t, iv[lo]),
               h = is_float(t) ? fv[hi] : (double)norm(t, iv[hi]);
        if (t == GX_U64 ? (uint64_t)iv[i] < (uint64_t)iv[lo] : a < l)
            lo = i;
        if (t == GX_U64 ? (uint64_t)iv[i] > (uint64_t)iv[hi] : a > h)
            hi = i;
    }
    gx_array *x = NULL;
    gx_scalar v;
    int64_t i1 = -1, i2 = -1;
    gx_status st = gx_array_from_host(ctx, t, 1, &n, raw, &x);
    if (st == GX_OK)
        st = gx_findmin(x, &v, &i1);
    if (st == GX_OK)
        st = gx_findmax(x, &v, &i2);
    if (st != GX_OK || i1 != lo || i2 != hi)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s find n=%lld: %s, argmin %lld (host %lld), argmax %lld (host %lld)",
                    gx_dtype_name(t), (long long)n, gx_status_string(st), (long long)i1, (long long)lo, (long long)i2,
                    (long long)hi);
    gx_array_release(x);
    free(iv);
    free(fv);
    free(raw);
}

static void check_dtypes(const gx_dtype *dts, int ndt)
{
    gx_ctx *ctx = gxt_ctx();
    const char *ops[] = {"+", "*", "max", "min", "&", "|", "^", "&&", "||", "count", "mean"};
    for (int d = 0; d < ndt; d++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            if (is_float(dts[d]) && (ops[o][0] == '&' || ops[o][0] == '|' || ops[o][0] == '^') && ops[o][1] == 0)
                continue;
            for (int k = 0; k < NSIZES; k++)
                if (is_float(dts[d]) || SIZES[k] < DROP_MAX) /* integers are exact: 2^20+7 will do */
                    check_op(ctx, dts[d], ops[o], SIZES[k]);
        }
    for (int d = 0; d < ndt; d++)
        for (int k = 1; k < NSIZES - 1; k++)
            check_find(ctx, dts[d], SIZES[k]);
}

/* One test per dtype: each loads its own kernels (one per operator). */
GXT_TEST(reduce_ops_bool) { check_dtypes((const gx_dtype[]){GX_BOOL}, 1); }
GXT_TEST(reduce_ops_i8) { check_dtypes((const gx_dtype[]){GX_I8}, 1); }
GXT_TEST(reduce_ops_i16) { check_dtypes((const gx_dtype[]){GX_I16}, 1); }
GXT_TEST(reduce_ops_i32) { check_dtypes((const gx_dtype[]){GX_I32}, 1); }
GXT_TEST(reduce_ops_i64) { check_dtypes((const gx_dtype[]){GX_I64}, 1); }
GXT_TEST(reduce_ops_u8) { check_dtypes((const gx_dtype[]){GX_U8}, 1); }
GXT_TEST(reduce_ops_u16) { check_dtypes((const gx_dtype[]){GX_U16}, 1); }
GXT_TEST(reduce_ops_u32) { check_dtypes((const gx_dtype[]){GX_U32}, 1); }
GXT_TEST(reduce_ops_u64) { check_dtypes((const gx_dtype[]){GX_U64}, 1); }
GXT_TEST(reduce_ops_f32) { check_dtypes((const gx_dtype[]){GX_F32}, 1); }
GXT_TEST(reduce_ops_f64) { check_dtypes((const gx_dtype[]){GX_F64}, 1); }

GXT_TEST(reduce_float_errors_on_bitwise_and_result_dtypes)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *x = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, 10, 0, 1, &x));
    gx_scalar s;
    GXT_STATUS(gx_reduce(ctx, "&", x, NULL, &s), GX_ERR_DTYPE);
    GXT_MSG_HAS("bitwise");
    GXT_OK(gx_reduce(ctx, "+", x, NULL, &s));
    GXT_CHECK(s.dtype == GX_F32);
    GXT_NEAR(s.v.f, 45, 0);
    gx_reduce_opts o = {0};
    o.dtype = GX_F64;
    GXT_OK(gx_reduce(ctx, "+", x, &o, &s));
    GXT_CHECK(s.dtype == GX_F64);
    gx_array *y = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I16, 10, 0, 1, &y));
    GXT_OK(gx_reduce(ctx, "sum", y, NULL, &s));
    GXT_CHECK(s.dtype == GX_I64);
    GXT_EQ_I64(s.v.i, 45);
    GXT_OK(gx_reduce(ctx, "max", y, NULL, &s));
    GXT_CHECK(s.dtype == GX_I16);
    GXT_EQ_I64(s.v.i, 9);
    gx_array_release(x);
    gx_array_release(y);
}

GXT_TEST(reduce_conveniences)
{
    gx_ctx *ctx = gxt_ctx();
    double h[] = {3, -1, 4, 1, -5, 9, 2, 6, -5, 9};
    int64_t n = 10;
    gx_array *x = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x));
    gx_scalar s;
    GXT_OK(gx_sum(x, &s));
    GXT_NEAR(s.v.f, 23, 0);
    GXT_OK(gx_prod(x, &s));
    GXT_NEAR(s.v.f, 3.0 * -1 * 4 * 1 * -5 * 9 * 2 * 6 * -5 * 9, 0);
    GXT_OK(gx_maximum(x, &s));
    GXT_NEAR(s.v.f, 9, 0);
    GXT_OK(gx_minimum(x, &s));
    GXT_NEAR(s.v.f, -5, 0);
    GXT_OK(gx_mean(x, &s));
    GXT_NEAR(s.v.f, 2.3, 1e-15);
    bool b;
    GXT_OK(gx_any(x, &b));
    GXT_CHECK(b);
    GXT_OK(gx_all(x, &b));
    GXT_CHECK(b);
    int64_t c, i;
    GXT_OK(gx_count(x, &c));
    GXT_EQ_I64(c, 10);
    GXT_OK(gx_argmin(x, &i));
    GXT_EQ_I64(i, 4); /* first of the tied -5s */
    GXT_OK(gx_argmax(x, &i));
    GXT_EQ_I64(i, 5); /* first of the tied 9s */
    GXT_OK(gx_findmax(x, &s, &i));
    GXT_NEAR(s.v.f, 9, 0);
    GXT_EQ_I64(i, 5);
    GXT_OK(gx_findmin(x, &s, &i));
    GXT_NEAR(s.v.f, -5, 0);
    GXT_EQ_I64(i, 4);
    gx_array_release(x);
}

/* Many ties spread over the whole array (and so over threads and blocks): the
 * first index must win; NaN is ignored unless everything is NaN. */
GXT_TEST(reduce_argmin_argmax_ties_and_nan)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t sizes[] = {33, 1025, (1 << 20) + 7};
    for (int k = 0; k < 3; k++) {
        int64_t n = sizes[k];
        float *h = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++)
            h[i] = (float)(gxt_rand_u64() % 1000) + 1;
        int64_t lo = n / 3, hi = n / 2;
        h[n - 1] = 0, h[lo] = 0, h[n / 4 + (n > 4)] = 0; /* ties for the min */
        h[hi] = 5000, h[n - 1 - (n > 2)] = 5000;         /* ties for the max */
        if (n > 8)
            h[1] = NAN, h[n - 2] = NAN;
        int64_t wmin = n, wmax = n;
        for (int64_t i = 0; i < n; i++) {
            if (h[i] == 0 && wmin == n)
                wmin = i;
            if (h[i] == 5000 && wmax == n)
                wmax = i;
        }
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
        int64_t i;
        GXT_OK(gx_argmin(x, &i));
        GXT_EQ_I64(i, wmin);
        GXT_OK(gx_argmax(x, &i));
        GXT_EQ_I64(i, wmax);
        gx_scalar s;
        GXT_OK(gx_maximum(x, &s));
        GXT_NEAR(s.v.f, 5000, 0);
        gx_array_release(x);
        /* all NaN: value NaN, index of the first */
        for (int64_t j = 0; j < n; j++)
            h[j] = NAN;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
        GXT_OK(gx_findmin(x, &s, &i));
        GXT_CHECK(isnan(s.v.f));
        GXT_EQ_I64(i, 0);
        GXT_OK(gx_maximum(x, &s));
        GXT_CHECK(isnan(s.v.f));
        gx_array_release(x);
        free(h);
    }
    /* integers at the dtype's extreme tie with the neutral element: a real index wins */
    int32_t hv[5] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
    int64_t n = 5, i;
    gx_array *x = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, hv, &x));
    GXT_OK(gx_argmin(x, &i));
    GXT_EQ_I64(i, 0);
    gx_array_release(x);
}

/* Values in 0..3, so the best value appears in most vector loads of most threads:
 * the first index must win across lanes of one load, loads of one batch, threads and
 * blocks.  Floats add -0.0 beside 0.0 (equal, so the first of them wins) and NaN
 * (never the best unless all are NaN).  Sizes include partial last batches. */
static int64_t ref_best(const double *h, int64_t n, bool want_max)
{
    int64_t w = -1;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(h[i]) && (w < 0 || (want_max ? h[i] > h[w] : h[i] < h[w])))
            w = i;
    return w;
}

GXT_TEST(reduce_argmin_argmax_dense_ties_all_dtypes)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_F32, GX_F64, GX_I32, GX_I64, GX_U8, GX_I16, GX_U64};
    const int64_t sizes[] = {4097, (3 << 18) + 1, (1 << 20) + 7, (1 << 22) + 33};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (int k = 0; k < 4; k++) {
            gx_dtype dt = dts[d];
            int64_t n = sizes[k];
            size_t es = gx_dtype_size(dt);
            double *h = malloc((size_t)n * sizeof *h);
            unsigned char *raw = malloc((size_t)n * es);
            bool fl = dt == GX_F32 || dt == GX_F64;
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = gxt_rand_u64();
                /* The extremes are rare at the start, so threads' first loads hold
                 * worse values than their later ones. */
                h[i] = (double)(1 + r % 2);
                if (r % 1000 < (uint64_t)(i < n / 8 ? 1 : 30))
                    h[i] = (r >> 20) % 2 ? 0 : 3;
                if (fl && (r >> 32) % 97 == 0)
                    h[i] = NAN;
                if (fl && h[i] == 0 && (r >> 40) % 2)
                    h[i] = -0.0;
                switch (dt) {
                case GX_F32: ((float *)raw)[i] = (float)h[i]; break;
                case GX_F64: ((double *)raw)[i] = h[i]; break;
                case GX_I32: ((int32_t *)raw)[i] = (int32_t)h[i]; break;
                case GX_I64: ((int64_t *)raw)[i] = (int64_t)h[i]; break;
                case GX_U8: ((uint8_t *)raw)[i] = (uint8_t)h[i]; break;
                case GX_I16: ((int16_t *)raw)[i] = (int16_t)h[i]; break;
                default: ((uint64_t *)raw)[i] = (uint64_t)h[i]; break;
                }
            }
            gx_array *x = NULL;
            GXT_OK(gx_array_from_host(ctx, dt, 1, &n, raw, &x));
            int64_t i = -1;
            GXT_OK(gx_argmin(x, &i));
            GXT_EQ_I64(i, ref_best(h, n, false));
            GXT_OK(gx_argmax(x, &i));
            GXT_EQ_I64(i, ref_best(h, n, true));
            gx_scalar v;
            GXT_OK(gx_findmin(x, &v, &i));
            GXT_NEAR(gx_scalar_to_f64(v), 0, 0);
            gx_array_release(x);
            free(h);
            free(raw);
        }
}

GXT_TEST(reduce_deterministic_float_sum_10_runs)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = DROP_MAX;
    float *h = malloc((size_t)n * 4);
    double *hd = malloc((size_t)n * 8), a;
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)(0.5 + 0.5 * gxt_rand01()), hd[i] = h[i];
    double want = ref_sum(hd, n, &a), tol = sum_bound(GX_F32, n, want, a);
    DROP_REJECTED("sum", n, want, round_to(GX_F32, want - hd[least_abs(hd, n)]), tol);
    gx_array *x = NULL, *y = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &y));
    gx_array *in[2] = {x, y};
    gx_scalar first, s, m0, m;
    GXT_OK(gx_sum(x, &first));
    GXT_CHECK(fabs(first.v.f - want) <= tol);
    GXT_OK(gx_mapreduce(ctx, "x, y -> x * y", "+", 2, in, NULL, &m0));
    for (int r = 0; r < 10; r++) {
        GXT_OK(gx_sum(x, &s));
        GXT_CHECK(memcmp(&s.v.f, &first.v.f, sizeof(double)) == 0);
        GXT_OK(gx_mapreduce(ctx, "x, y -> x * y", "+", 2, in, NULL, &m));
        GXT_CHECK(memcmp(&m.v.f, &m0.v.f, sizeof(double)) == 0);
    }
    gx_array_release(x);
    gx_array_release(y);
    free(h);
    free(hd);
}

GXT_TEST(reduce_lambda_operator_matches_builtin)
{
    gx_ctx *ctx = gxt_ctx();
    for (int k = 0; k < NSIZES; k++) {
        int64_t n = SIZES[k];
        gx_array *x = NULL;
        float *h = malloc((size_t)(n + 1) * 4);
        for (int64_t i = 0; i < n; i++)
            h[i] = (float)(gxt_rand01() * 200 - 100);
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
        gx_scalar init = GX_SCALAR_F32(-INFINITY), a, b;
        gx_reduce_opts o = {0};
        o.init = &init;
        GXT_OK(gx_reduce(ctx, "a, b -> max(a, b)", x, &o, &a));
        GXT_OK(gx_reduce(ctx, "max", x, NULL, &b));
        GXT_CHECK(a.dtype == GX_F32);
        GXT_CHECK(n == 0 || a.v.f == b.v.f); /* empty: the inits differ (-inf vs NaN) */
        /* an integer lambda with its own accumulator dtype */
        gx_scalar zero = GX_SCALAR_I64(0), c;
        gx_reduce_opts oi = {0};
        oi.init = &zero;
        GXT_OK(gx_mapreduce(ctx, "x -> i64(x > 0)", "a, b -> a + b", 1, &x, &oi, &c));
        int64_t want = 0;
        for (int64_t i = 0; i < n; i++)
            want += h[i] > 0;
        GXT_EQ_I64(c.v.i, want);
        gx_array_release(x);
        free(h);
    }
}

GXT_TEST(reduce_mapreduce_l2dist_broadcast_consts)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = (1 << 20) + 7;
    float *hx = malloc((size_t)n * 4), *hy = malloc((size_t)n * 4);
    double *sq = malloc((size_t)n * 8), a;
    for (int64_t i = 0; i < n; i++) { /* |x - y| in [0.5, 1): no square is negligible */
        hx[i] = (float)gxt_rand01(), hy[i] = (float)(hx[i] + (gxt_rand01() < 0.5 ? -1 : 1) * (0.5 + 0.5 * gxt_rand01()));
        float d = hx[i] - hy[i];
        sq[i] = (double)(d * d); /* what the map computes: f32 */
    }
    double want = ref_sum(sq, n, &a), tol = sum_bound(GX_F32, n, want, a);
    DROP_REJECTED("l2 sum of squares", n, want, round_to(GX_F32, want - sq[least_abs(sq, n)]), tol);
    gx_array *x = NULL, *y = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, hx, &x));
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, hy, &y));
    gx_array *in[2] = {x, y};
    gx_scalar s;
    GXT_OK(gx_mapreduce(ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, NULL, &s));
    GXT_CHECK(fabs(s.v.f - want) <= tol);
    /* broadcasting: a (rows, cols) matrix against a row vector, and a named constant */
    int64_t sh[2] = {37, 41}, rn = 41;
    double *hm = malloc(37 * 41 * 8), hr[41], *terms = malloc(37 * 41 * 8);
    for (int i = 0; i < 41; i++)
        hr[i] = gxt_rand01();
    for (int i = 0; i < 37 * 41; i++) {
        hm[i] = gxt_rand01();
        terms[i] = 3 * (hm[i] - hr[i % 41]);
    }
    double w2 = ref_sum(terms, 37 * 41, &a), w2_tol = sum_bound(GX_F64, 37 * 41, w2, a) + 0x1p-51 * a;
    gx_array *m = NULL, *r = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 2, sh, hm, &m));
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &rn, hr, &r));
    gx_array *in2[2] = {m, r};
    gx_const k = GX_CONST("k", GX_SCALAR_F64(3));
    gx_reduce_opts o = {0};
    o.consts = &k;
    o.nconsts = 1;
    GXT_OK(gx_mapreduce(ctx, "a, b -> k * (a - b)", "+", 2, in2, &o, &s));
    GXT_CHECK(fabs(s.v.f - w2) <= w2_tol); /* + each term's two roundings, in gx and here */
    gx_array_release(x);
    gx_array_release(y);
    gx_array_release(m);
    gx_array_release(r);
    free(hx);
    free(hy);
    free(hm);
    free(sq);
    free(terms);
}

/* ------------------------------------------------------------ axes */

/* Host reference along a set of axes for int32 data: sum (i64), max, argmin. */
static void axes_ref(int nd, const int64_t *shape, const int64_t *st, const int32_t *base, const bool *red,
                     int64_t *sum, int32_t *mx, int64_t *amin)
{
    int64_t total = 1, nout = 1;
    for (int d = 0; d < nd; d++) {
        total *= shape[d];
        nout *= red[d] ? 1 : shape[d];
    }
    for (int64_t j = 0; j < nout; j++)
        sum[j] = 0, mx[j] = INT32_MIN, amin[j] = -1;
    int32_t *mn = malloc((size_t)(nout ? nout : 1) * 4);
    for (int64_t e = 0; e < total; e++) {
        int64_t rem = e, j = 0, jm = 1, r = 0, rm = 1, off = 0;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t c = rem % shape[d];
            rem /= shape[d];
            off += c * st[d];
            if (red[d])
                r += c * rm, rm *= shape[d];
            else
                j += c * jm, jm *= shape[d];
        }
        int32_t v = base[off];
        sum[j] += v;
        mx[j] = v > mx[j] ? v : mx[j];
        if (amin[j] < 0 || v < mn[j] || (v == mn[j] && r < amin[j]))
            mn[j] = v, amin[j] = r;
    }
    free(mn);
}

static void check_axes(gx_ctx *ctx, gx_array *x, const int32_t *base, const int *axes, int naxes)
{
    gx_array_desc d;
    GXT_OK(gx_array_describe(x, &d));
    bool red[GX_MAX_DIMS] = {false};
    for (int i = 0; i < naxes; i++)
        red[axes[i] < 0 ? axes[i] + d.ndim : axes[i]] = true;
    int64_t nout = 1;
    for (int k = 0; k < d.ndim; k++)
        nout *= red[k] ? 1 : d.shape[k];
    int64_t *sum = malloc((size_t)nout * 8), *amin = malloc((size_t)nout * 8), *gs = malloc((size_t)nout * 8),
            *ga = malloc((size_t)nout * 8);
    int32_t *mx = malloc((size_t)nout * 4), *gm = malloc((size_t)nout * 4);
    axes_ref(d.ndim, d.shape, d.strides, base, red, sum, mx, amin);
    gx_reduce_opts o = {0};
    o.axes = axes;
    o.naxes = naxes;
    gx_array *s = NULL, *m = NULL, *a = NULL;
    GXT_OK(gx_reduce_to(ctx, "+", x, &o, &s));
    GXT_OK(gx_reduce_to(ctx, "max", x, &o, &m));
    GXT_OK(gx_find_to(ctx, "min", x, &o, NULL, &a));
    gx_array_desc sd;
    GXT_OK(gx_array_describe(s, &sd));
    GXT_EQ_I64(sd.ndim, d.ndim);
    for (int k = 0; k < d.ndim; k++)
        GXT_EQ_I64(sd.shape[k], red[k] ? 1 : d.shape[k]);
    GXT_OK(gx_array_to_host(s, gs, (size_t)nout * 8));
    GXT_OK(gx_array_to_host(m, gm, (size_t)nout * 4));
    GXT_OK(gx_array_to_host(a, ga, (size_t)nout * 8));
    for (int64_t j = 0; j < nout; j++) {
        if (gs[j] != sum[j] || gm[j] != mx[j] || ga[j] != amin[j]) {
            GXT_FAIL_AT(__FILE__, __LINE__,
                        "ndim %d naxes %d (axis0 %d) output %lld: sum %lld/%lld max %d/%d argmin %lld/%lld", d.ndim,
                        naxes, axes[0], (long long)j, (long long)gs[j], (long long)sum[j], gm[j], mx[j],
                        (long long)ga[j], (long long)amin[j]);
            break;
        }
    }
    gx_array_release(s);
    gx_array_release(m);
    gx_array_release(a);
    free(sum), free(amin), free(gs), free(ga), free(mx), free(gm);
}

/* Every non-empty subset of axes (as a bit mask). */
static void check_all_subsets(gx_ctx *ctx, gx_array *x, const int32_t *base, int nd)
{
    for (int mask = 1; mask < (1 << nd); mask++) {
        int axes[GX_MAX_DIMS], na = 0;
        for (int k = 0; k < nd; k++)
            if (mask & (1 << k)) {
                axes[na] = (na % 2) ? k - nd : k; /* negative axes too */
                na++;
            }
        check_axes(ctx, x, base, axes, na);
    }
}

static int32_t *rand_i32(int64_t n)
{
    int32_t *h = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        h[i] = (int32_t)(gxt_rand_u64() % 2001) - 1000;
    return h;
}

GXT_TEST(reduce_axes_3d_4d)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t shapes[][4] = {{3, 4, 5, 0}, {2, 3, 4, 5}, {1, 7, 1, 9}, {5, 1, 300, 0}, {3, 2, 1100, 0}};
    const int nds[] = {3, 4, 4, 3, 3};
    for (int s = 0; s < 5; s++) {
        int64_t n = 1;
        for (int k = 0; k < nds[s]; k++)
            n *= shapes[s][k];
        int32_t *h = rand_i32(n);
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_I32, nds[s], shapes[s], h, &x));
        check_all_subsets(ctx, x, h, nds[s]);
        gx_array_release(x);
        free(h);
    }
}

GXT_TEST(reduce_axes_strided_views)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t shape[3] = {6, 10, 14}, n = 6 * 10 * 14;
    int32_t *h = rand_i32(n);
    gx_array *x = NULL, *v = NULL, *p = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 3, shape, h, &x));
    gx_slice sl[3] = {{1, GX_END, 2}, {8, 0, -1}, {0, 13, 3}};
    GXT_OK(gx_array_view(x, sl, &v));
    /* the view's elements relative to its first one, through the full buffer */
    int64_t first = 1 * 140 + 8 * 14 + 0;
    check_all_subsets(ctx, v, h + first, 3);
    int perm[3] = {2, 0, 1};
    GXT_OK(gx_array_permute(x, perm, &p));
    check_all_subsets(ctx, p, h, 3);
    gx_array_release(v);
    gx_array_release(p);
    gx_array_release(x);
    free(h);
}

/* Long rows, long columns, few outputs: the split-over-blocks paths, in f32. */
GXT_TEST(reduce_axes_rows_cols_f32)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t shapes[][2] = {{300, 5000}, {5000, 300}, {2, 300000}, {300000, 3}, {64, 64}};
    for (int s = 0; s < 5; s++) {
        int64_t R = shapes[s][0], C = shapes[s][1], n = R * C;
        float *h = malloc((size_t)n * 4);
        double *line = malloc((size_t)(R > C ? R : C) * 8);
        for (int64_t i = 0; i < n; i++)
            h[i] = (float)(0.5 + 0.5 * gxt_rand01());
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 2, shapes[s], h, &x));
        for (int ax = 0; ax < 2; ax++) {
            gx_reduce_opts o = {0};
            o.axes = &ax;
            o.naxes = 1;
            gx_array *y = NULL;
            GXT_OK(gx_reduce_to(ctx, "sum", x, &o, &y));
            int64_t nout = ax ? R : C, len = ax ? C : R;
            float *g = malloc((size_t)nout * 4);
            GXT_OK(gx_array_to_host(y, g, (size_t)nout * 4));
            for (int64_t j = 0; j < nout; j++) {
                for (int64_t r = 0; r < len; r++)
                    line[r] = ax ? h[j * C + r] : h[r * C + j];
                double a, w = ref_sum(line, len, &a), tol = sum_bound(GX_F32, len, w, a);
                if (j == 0)
                    DROP_REJECTED("row/column sum", len, w, round_to(GX_F32, w - line[least_abs(line, len)]), tol);
                if (!(fabs(g[j] - w) <= tol)) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "(%lld, %lld) axis %d output %lld: %.9g vs %.9g (bound %.3g)",
                                (long long)R, (long long)C, ax, (long long)j, g[j], w, tol);
                    break;
                }
            }
            gx_array_release(y);
            free(g);
        }
        free(line);
        gx_array_release(x);
        free(h);
    }
}

/* Column sums in bands (the CPU's dense column kernel): rows in blocks of eight and
 * a remainder, bands of 2048 outputs and a remainder, a partner broadcast along the
 * rows or along the columns, f32, f64, f16 and i32.  Small integer values: every
 * sum is exact, so the results are compared for equality. */
GXT_TEST(reduce_axes_cols_bands)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t shapes[][2] = {{1, 5}, {7, 33}, {8, 2049}, {9, 4100}, {37, 4099}, {16, 1}, {300, 2048}};
    const gx_dtype dts[] = {GX_F32, GX_F64, GX_I32, GX_F16};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t R = shapes[si][0], C = shapes[si][1], n = R * C;
        double *h = malloc((size_t)n * 8), *hr = malloc((size_t)R * 8), *hc = malloc((size_t)C * 8);
        double *want = malloc((size_t)C * 8), *got = malloc((size_t)C * 8);
        for (int64_t i = 0; i < n; i++)
            h[i] = (double)(int)(gxt_rand_u64() % 9) - 4;
        for (int64_t r = 0; r < R; r++)
            hr[r] = (double)(r % 3) + 1;
        for (int64_t c = 0; c < C; c++)
            hc[c] = (double)(c % 5) - 2;
        for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
            gx_array *x = NULL, *xd = NULL, *pr = NULL, *pc = NULL, *y = NULL, *yd = NULL;
            int64_t shr[2] = {R, 1}, shc[2] = {1, C};
            GXT_OK(gx_array_from_host(ctx, GX_F64, 2, shapes[si], h, &xd));
            GXT_OK(gx_array_empty(ctx, dts[di], 2, shapes[si], &x));
            GXT_OK(gx_map_into(ctx, "x -> x", 1, &xd, NULL, x));
            GXT_OK(gx_array_from_host(ctx, GX_F64, 2, shr, hr, &pr));
            GXT_OK(gx_array_from_host(ctx, GX_F64, 2, shc, hc, &pc));
            int ax = 0;
            gx_reduce_opts o = {.axes = &ax, .naxes = 1};
            for (int form = 0; form < 3; form++) {
                if (form == 0)
                    GXT_OK(gx_reduce_to(ctx, "+", x, &o, &y));
                else
                    GXT_OK(gx_mapreduce_to(ctx, "a, b -> f64(a) * b", "+", 2,
                                           (gx_array *[]){x, form == 1 ? pr : pc}, &o, &y));
                GXT_OK(gx_map(ctx, "x -> f64(x)", 1, &y, NULL, &yd));
                GXT_OK(gx_array_to_host(yd, got, (size_t)C * 8));
                for (int64_t c = 0; c < C; c++) {
                    want[c] = 0;
                    for (int64_t r = 0; r < R; r++)
                        want[c] += h[r * C + c] * (form == 0 ? 1 : form == 1 ? hr[r] : hc[c]);
                }
                for (int64_t c = 0; c < C; c++)
                    if (got[c] != want[c]) {
                        GXT_FAIL_AT(__FILE__, __LINE__, "(%lld, %lld) %s form %d column %lld: %g, host %g",
                                    (long long)R, (long long)C, gx_dtype_name(dts[di]), form, (long long)c, got[c],
                                    want[c]);
                        break;
                    }
                gx_array_release(y);
                gx_array_release(yd);
                y = yd = NULL;
            }
            gx_array_release(x);
            gx_array_release(xd);
            gx_array_release(pr);
            gx_array_release(pc);
        }
        free(h), free(hr), free(hc), free(want), free(got);
    }
}

/* Results stay on the device and feed the next reduction: variance through the mean. */
GXT_TEST(reduce_device_chain)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 100003;
    double *h = malloc((size_t)n * 8), mean = 0, var = 0;
    for (int64_t i = 0; i < n; i++)
        h[i] = gxt_rand01() * 10, mean += h[i];
    mean /= (double)n;
    for (int64_t i = 0; i < n; i++)
        var += (h[i] - mean) * (h[i] - mean);
    gx_array *x = NULL, *m = NULL, *v = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x));
    GXT_OK(gx_reduce_to(ctx, "mean", x, NULL, &m));
    gx_array *in[2] = {x, m};
    GXT_OK(gx_mapreduce_to(ctx, "x, m -> (x - m) * (x - m)", "+", 2, in, NULL, &v));
    gx_array *in2[1] = {v};
    gx_scalar s;
    GXT_OK(gx_mapreduce(ctx, "v -> sqrt(v)", "+", 1, in2, NULL, &s));
    GXT_NEAR(s.v.f, sqrt(var), 1e-10);
    /* into a caller's array, and a per-row chain along an axis */
    int64_t sh[2] = {100, 1000};
    gx_array *mat = NULL, *rows = NULL;
    GXT_OK(gx_array_ones(ctx, GX_F64, 2, sh, &mat));
    int ax = 1;
    gx_reduce_opts o = {0};
    o.axes = &ax;
    o.naxes = 1;
    GXT_OK(gx_reduce_to(ctx, "+", mat, &o, &rows));
    gx_array *dst = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, (int64_t[]){1}, &dst));
    GXT_OK(gx_reduce_into(ctx, "+", rows, NULL, dst));
    double got;
    GXT_OK(gx_array_to_host(dst, &got, 8));
    GXT_NEAR(got, 100000, 0);
    /* gx_reduce_to always makes a new array (what *out held is ignored) */
    gx_array *keep = dst;
    GXT_OK(gx_reduce_to(ctx, "max", rows, NULL, &dst));
    GXT_CHECK(dst != NULL && dst != keep);
    GXT_OK(gx_array_to_host(dst, &got, 8));
    GXT_NEAR(got, 1000, 0);
    GXT_OK(gx_array_to_host(keep, &got, 8));
    GXT_NEAR(got, 100000, 0);
    /* mapreduce and find into caller's arrays: the row sums of squares, and the max per row */
    gx_array *rows2 = NULL, *vals = NULL, *idx = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, (int64_t[]){100, 1}, &rows2));
    gx_array *inm[1] = {mat};
    GXT_OK(gx_mapreduce_into(ctx, "x -> 2 * x", "+", 1, inm, &o, rows2));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, (int64_t[]){100, 1}, &vals));
    GXT_OK(gx_array_zeros(ctx, GX_I64, 2, (int64_t[]){100, 1}, &idx));
    GXT_OK(gx_find_into(ctx, "max", mat, &o, vals, idx));
    double hr[100], hv[100];
    int64_t hi[100];
    GXT_OK(gx_array_to_host(rows2, hr, sizeof hr));
    GXT_OK(gx_array_to_host(vals, hv, sizeof hv));
    GXT_OK(gx_array_to_host(idx, hi, sizeof hi));
    for (int r = 0; r < 100; r++) {
        GXT_NEAR(hr[r], 2000, 0);
        GXT_NEAR(hv[r], 1, 0);
        GXT_EQ_I64(hi[r], 0); /* all equal: the first */
    }
    gx_array_release(x), gx_array_release(m), gx_array_release(v), gx_array_release(mat);
    gx_array_release(rows), gx_array_release(dst), gx_array_release(keep);
    gx_array_release(rows2), gx_array_release(vals), gx_array_release(idx);
    free(h);
}

GXT_TEST(reduce_empty_inputs)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t z = 0, sh[2] = {0, 4};
    gx_array *x = NULL, *m = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &z, &x));
    gx_scalar s;
    GXT_OK(gx_reduce(ctx, "+", x, NULL, &s));
    GXT_NEAR(s.v.f, 0, 0);
    GXT_OK(gx_reduce(ctx, "*", x, NULL, &s));
    GXT_NEAR(s.v.f, 1, 0);
    GXT_OK(gx_reduce(ctx, "max", x, NULL, &s));
    GXT_CHECK(isnan(s.v.f));
    GXT_OK(gx_reduce(ctx, "&&", x, NULL, &s));
    GXT_EQ_I64(s.v.i, 1);
    /* init is the operator's neutral element (gx may fold it in once per thread) */
    gx_scalar init = GX_SCALAR_F32(INFINITY);
    gx_reduce_opts o = {0};
    o.init = &init;
    GXT_OK(gx_reduce(ctx, "a, b -> min(a, b)", x, &o, &s));
    GXT_CHECK(isinf(s.v.f) && s.v.f > 0);
    int64_t i;
    GXT_STATUS(gx_argmin(x, &i), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_mean(x, &s), GX_ERR_INVALID_ARGUMENT);
    /* an empty reduced axis gives the neutral element per output */
    GXT_OK(gx_array_empty(ctx, GX_F32, 2, sh, &m));
    int ax = 0;
    gx_reduce_opts oa = {0};
    oa.axes = &ax;
    oa.naxes = 1;
    gx_array *y = NULL, *q = NULL;
    GXT_OK(gx_reduce_to(ctx, "+", m, &oa, &y));
    float g[4] = {1, 1, 1, 1};
    GXT_OK(gx_array_to_host(y, g, sizeof g));
    for (int k = 0; k < 4; k++)
        GXT_NEAR(g[k], 0, 0);
    GXT_STATUS(gx_find_to(ctx, "max", m, &oa, NULL, &q), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(x), gx_array_release(m), gx_array_release(y);
}

GXT_TEST(reduce_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *x = NULL, *y = NULL;
    int64_t sh[3] = {2, 3, 4};
    GXT_OK(gx_array_zeros(ctx, GX_F32, 3, sh, &x));
    gx_scalar s;
    GXT_STATUS(gx_reduce(ctx, "plus", x, NULL, &s), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("unknown operator");
    gx_scalar init = GX_SCALAR_F32(0);
    gx_reduce_opts o = {0};
    o.init = &init;
    GXT_STATUS(gx_reduce(ctx, "a, b, c -> a + b + c", x, &o, &s), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("two parameters");
    GXT_STATUS(gx_reduce(ctx, "a, b -> a + b", x, NULL, &s), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("init");
    GXT_STATUS(gx_reduce(ctx, "a, b -> a +", x, &o, &s), GX_ERR_SYNTAX);
    GXT_STATUS(gx_reduce(ctx, NULL, x, NULL, &s), GX_ERR_INVALID_ARGUMENT);
    int bad = 3, neg = -4, dup[2] = {1, -2};
    gx_reduce_opts oa = {0};
    oa.axes = &bad;
    oa.naxes = 1;
    GXT_STATUS(gx_reduce_to(ctx, "+", x, &oa, &y), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("out of range");
    oa.axes = &neg;
    GXT_STATUS(gx_reduce_to(ctx, "+", x, &oa, &y), GX_ERR_INVALID_ARGUMENT);
    oa.axes = dup;
    oa.naxes = 2;
    GXT_STATUS(gx_reduce_to(ctx, "+", x, &oa, &y), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("twice");
    GXT_CHECK(y == NULL);
    oa.axes = &bad;
    bad = 0;
    oa.naxes = 1;
    GXT_STATUS(gx_reduce(ctx, "+", x, &oa, &s), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("_to");
    GXT_STATUS(gx_reduce_to(ctx, "+", x, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_mapreduce(ctx, "x -> x", "+", 0, NULL, NULL, &s), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_mapreduce(ctx, "x, y -> x", "+", 1, &x, NULL, &s), GX_ERR_TYPE);
    GXT_STATUS(gx_find_to(ctx, "median", x, NULL, &y, NULL), GX_ERR_INVALID_ARGUMENT);
    /* a caller's output of the wrong size */
    gx_array *small = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, (int64_t[]){5}, &small));
    oa.axes = &bad;
    GXT_STATUS(gx_reduce_into(ctx, "+", x, &oa, small), GX_ERR_SHAPE);
    GXT_STATUS(gx_reduce_into(ctx, "+", x, &oa, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_find_into(ctx, "min", x, &oa, small, NULL), GX_ERR_SHAPE);
    /* into an output of another dtype: converted, or GX_ERR_DTYPE with exact_dtype */
    gx_array *f64 = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, (int64_t[]){3, 4}, &f64));
    GXT_OK(gx_reduce_into(ctx, "+", x, &oa, f64));
    oa.exact_dtype = 1;
    GXT_STATUS(gx_reduce_into(ctx, "+", x, &oa, f64), GX_ERR_DTYPE);
    GXT_STATUS(gx_mapreduce_into(ctx, "v -> v", "+", 1, &x, &oa, f64), GX_ERR_DTYPE);
    oa.exact_dtype = 0;
    /* a nonzero reserved word */
    gx_reduce_opts r = {.reserved = {0, 1}};
    GXT_STATUS(gx_reduce(ctx, "+", x, &r, &s), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_sum(NULL, &s), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(f64);
    gx_array_release(small);
    gx_array_release(x);
}

/* More than 2^31 elements (u8, ~2 GB): int64 indexing end to end.  CUDA only. */
GXT_TEST(reduce_huge_count_cuda)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(ctx, &k));
    if (k != GX_BACKEND_CUDA) {
        gxt_skip("needs the CUDA backend (2^31+123 elements)");
        return;
    }
    int64_t n = ((int64_t)1 << 31) + 123;
    gx_array *x = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_U8, 1, &n, &x));
    uint8_t one = 1, two = 2;
    int64_t at[3] = {5, ((int64_t)1 << 31) + 7, n - 1};
    GXT_OK(gx_array_set(x, &at[0], &one));
    GXT_OK(gx_array_set(x, &at[1], &two));
    GXT_OK(gx_array_set(x, &at[2], &one));
    gx_scalar s;
    GXT_OK(gx_mapreduce(ctx, "x -> x > 0", "count", 1, &x, NULL, &s));
    GXT_EQ_I64(s.v.i, 3);
    GXT_OK(gx_sum(x, &s));
    GXT_EQ_I64(s.v.u, 4);
    int64_t i;
    GXT_OK(gx_argmax(x, &i));
    GXT_EQ_I64(i, at[1]);
    gx_array_release(x);
}

/* The generator API that range pipelines use directly: a filtered count and a
 * "first index whose value passes" (with_index, every candidate equal). */
#include "core/gx_internal.h"
#include "ops/reduce_gen.h"

static gx_status rg_count_and_first(gx_ctx *ctx, gx_array *x, int64_t n, double cut, int64_t *count, int64_t *first)
{
    void *p = NULL;
    GX__CHECK(gx_array_device_ptr(x, &p));
    rg_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.acc = sp.out_dtype = GX_I64;
    sp.combine = "gx_l + gx_r";
    sp.identity = "0";
    sp.elem = "v = 1; keep = x0 > u->cut;";
    sp.filtered = true;
    sp.nstreams = 1;
    sp.stream_dt[0] = GX_F32;
    sp.stream_ptr[0] = (uint64_t)(uintptr_t)p;
    sp.user_fields = "double cut;";
    sp.label = "test_rg";
    gx__lock(ctx);
    gx_status s = rg_run(ctx, &sp, n, &cut, sizeof cut, 0, 0, count, NULL);
    sp.with_index = true;
    sp.better = "false";
    sp.elem = "v = 0; keep = x0 > u->cut;";
    int64_t v = 0;
    if (s == GX_OK)
        s = rg_run(ctx, &sp, n, &cut, sizeof cut, 0, 0, &v, first);
    gx__unlock(ctx);
    return s;
}

GXT_TEST(reduce_gen_filtered_and_first_index)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t sizes[] = {0, 1, 33, 1025, (1 << 20) + 7};
    for (int k = 0; k < 5; k++) {
        int64_t n = sizes[k], want = 0, first = INT64_MAX;
        float *h = malloc((size_t)(n + 1) * 4);
        for (int64_t i = 0; i < n; i++) {
            h[i] = (float)gxt_rand01();
            if (h[i] > 0.75f) {
                want++;
                first = first == INT64_MAX ? i : first;
            }
        }
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
        int64_t got = -1, idx = -1;
        GXT_OK(rg_count_and_first(ctx, x, n, 0.75, &got, &idx));
        GXT_EQ_I64(got, want);
        GXT_EQ_I64(idx, first); /* INT64_MAX when nothing passes */
        gx_array_release(x);
        free(h);
    }
}

/* Sums of complex arrays (the real and imaginary parts folded separately), whole and
 * along an axis, against host sums; a real-valued map over complex inputs. */
GXT_TEST(reduce_complex_sum)
{
    gx_ctx *ctx = gxt_ctx();
    const int R = 37, C = 1031;
    int64_t shape[2] = {R, C};
    float *h = malloc(sizeof(float) * 2 * R * C);
    double sre = 0, sim = 0, sabs = 0, *col_re = calloc(C, sizeof(double)), *col_im = calloc(C, sizeof(double));
    for (int i = 0; i < R * C; i++) {
        h[2 * i] = (float)(gxt_rand01() * 2 - 1);
        h[2 * i + 1] = (float)(gxt_rand01() * 2 - 1);
        sre += h[2 * i];
        sim += h[2 * i + 1];
        sabs += sqrt((double)h[2 * i] * h[2 * i] + (double)h[2 * i + 1] * h[2 * i + 1]);
        col_re[i % C] += h[2 * i];
        col_im[i % C] += h[2 * i + 1];
    }
    gx_array *z = NULL, *zc = NULL, *cols = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_C64, 2, shape, h, &z));
    gx_scalar s;
    GXT_OK(gx_sum(z, &s));
    GXT_CHECK(s.dtype == GX_C64);
    GXT_NEAR(s.v.c[0], sre, 1e-4);
    GXT_NEAR(s.v.c[1], sim, 1e-4);
    GXT_OK(gx_reduce(ctx, "sum", z, NULL, &s));
    GXT_NEAR(s.v.c[1], sim, 1e-4);
    /* along axis 0, into a complex device array */
    int ax = 0;
    gx_reduce_opts o = {0};
    o.axes = &ax;
    o.naxes = 1;
    GXT_OK(gx_reduce_to(ctx, "+", z, &o, &cols));
    gx_array_desc d;
    GXT_OK(gx_array_describe(cols, &d));
    GXT_CHECK(d.dtype == GX_C64 && d.ndim == 2 && d.shape[0] == 1 && d.shape[1] == C);
    float *back = malloc(sizeof(float) * 2 * C);
    GXT_OK(gx_array_to_host(cols, back, sizeof(float) * 2 * C));
    for (int j = 0; j < C; j++) {
        GXT_NEAR(back[2 * j], col_re[j], 1e-4);
        GXT_NEAR(back[2 * j + 1], col_im[j], 1e-4);
    }
    /* a real-valued map over complex values */
    GXT_OK(gx_mapreduce(ctx, "z -> abs(z)", "+", 1, &z, NULL, &s));
    GXT_NEAR(s.v.f, sabs, 1e-4);
    /* c128 too */
    GXT_OK(gx_array_clone(z, GX_C128, &zc));
    GXT_OK(gx_sum(zc, &s));
    GXT_CHECK(s.dtype == GX_C128);
    GXT_NEAR(s.v.c[0], sre, 1e-9);
    GXT_NEAR(s.v.c[1], sim, 1e-9);
    /* other operators on complex values are refused with a message */
    GXT_STATUS(gx_reduce(ctx, "max", z, NULL, &s), GX_ERR_DTYPE);
    GXT_STATUS(gx_mapreduce(ctx, "z -> z * z", "+", 1, &z, NULL, &s), GX_ERR_DTYPE);
    free(h);
    free(back);
    free(col_re);
    free(col_im);
    gx_array_release(z);
    gx_array_release(zc);
    gx_array_release(cols);
}

/* ------------------------------------------------------------ accuracy of f32 sums
 * gx/reduce.h promises that f32 sums and means accumulate in f64 and round once:
 * |error| <= u_f32 * |S| + n * eps_f64 * sum|x|.  Checked against the exact sum (a
 * compensated sum in long double over the f32 values) and against NumPy's pairwise
 * f32 sum, which gx must not lose to, on same-sign data (where per-thread f32
 * accumulators lost badly: 2^20 values in [0, 1) were 0.45 off) and mixed signs.
 * The values keep |x| >= 0.5 (and |x - y| >= 0.5 for the l2 distance), and up to
 * DROP_MAX each bound is shown to reject the sum with one element left out. */

/* The exact sum of f32 values (*abs_sum: the sum of their magnitudes). */
static double acc_exact(const float *x, int64_t n, double *abs_sum)
{
    double *d = malloc((size_t)(n > 0 ? n : 1) * sizeof *d);
    for (int64_t i = 0; d && i < n; i++)
        d[i] = x[i];
    double s = d ? ref_sum(d, n, abs_sum) : NAN;
    free(d);
    return s;
}

/* The f32 value of smallest magnitude: the one whose absence is hardest to see. */
static double acc_least(const float *x, int64_t n)
{
    float m = x[0];
    for (int64_t i = 1; i < n; i++)
        m = fabsf(x[i]) < fabsf(m) ? x[i] : m;
    return m;
}

/* NumPy's pairwise float32 sum (its algorithm, written here): blocks of up to 128
 * summed in 8 accumulators, halves (multiples of 8) summed recursively. */
static float acc_pairwise(const float *a, int64_t n)
{
    if (n < 8) {
        float r = 0;
        for (int64_t i = 0; i < n; i++)
            r += a[i];
        return r;
    }
    if (n <= 128) {
        float r[8];
        for (int k = 0; k < 8; k++)
            r[k] = a[k];
        int64_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (int k = 0; k < 8; k++)
                r[k] += a[i + k];
        float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    int64_t h = n / 2;
    h -= h % 8;
    return acc_pairwise(a, h) + acc_pairwise(a + h, n - h);
}

/* One result against the exact value: within `bound`, and no further off than the
 * pairwise result; up to DROP_MAX, `bound` must reject `dropped` (the f32 result
 * with one element left out). */
static void acc_check(const char *what, int64_t n, const char *data, double got, double pairwise, double exact,
                      double bound, double dropped)
{
    double e = fabs(got - exact), ep = fabs(pairwise - exact);
    if (!(e <= bound) || !(e <= ep))
        GXT_FAIL_AT(__FILE__, __LINE__,
                    "%s of %lld %s values: |error| %.3g (got %.9g, exact %.9g); bound %.3g, pairwise f32 %.3g", what,
                    (long long)n, data, e, got, exact, bound, ep);
    if (n <= DROP_MAX)
        DROP_REJECTED(what, n, exact, dropped, bound);
}

/* Uniform in [0.5, 1), of either sign when `mixed`. */
static float acc_value(bool mixed) { return (float)((mixed && gxt_rand01() < 0.5 ? -1 : 1) * (0.5 + 0.5 * gxt_rand01())); }

GXT_TEST(reduce_f32_sum_accuracy)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind be = GX_BACKEND_CPU;
    GXT_OK(gx_ctx_backend(ctx, &be));
    int kmax = be == GX_BACKEND_CUDA ? 28 : 24;
    const double u32 = 0x1p-24, e64 = DBL_EPSILON;
    for (int k = 10; k <= kmax; k += 2) {
        int64_t n = ((int64_t)1 << k) + 3; /* a ragged end for every thread count */
        float *hx = malloc((size_t)n * 4), *hy = malloc((size_t)n * 4), *hd = malloc((size_t)n * 4);
        GXT_CHECK(hx && hy && hd);
        if (!hx || !hy || !hd)
            return;
        for (int mixed = 0; mixed < 2; mixed++) {
            const char *data = mixed ? "mixed-sign" : "same-sign";
            for (int64_t i = 0; i < n; i++) {
                hx[i] = acc_value(mixed);
                hy[i] = (float)(hx[i] + acc_value(true)); /* |x - y| >= 0.5 */
                float d = hx[i] - hy[i];
                hd[i] = d * d; /* what the map computes: f32 */
            }
            gx_array *x = NULL, *y = NULL;
            GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, hx, &x));
            GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, hy, &y));
            double ax, ad, sx = acc_exact(hx, n, &ax), sd = acc_exact(hd, n, &ad);
            double lx = acc_least(hx, n), ld = acc_least(hd, n);
            float px = acc_pairwise(hx, n), pd = acc_pairwise(hd, n);
            gx_scalar s, m, l2;
            GXT_OK(gx_sum(x, &s));
            GXT_OK(gx_mean(x, &m));
            gx_array *in[2] = {x, y};
            GXT_OK(gx_mapreduce(ctx, "x, y -> (x-y)*(x-y)", "+", 2, in, NULL, &l2));
            GXT_CHECK(s.dtype == GX_F32 && m.dtype == GX_F32 && l2.dtype == GX_F32);
            acc_check("sum", n, data, s.v.f, px, sx, u32 * fabs(sx) + (double)n * e64 * ax, (float)(sx - lx));
            /* NumPy's float32 mean: the pairwise sum divided in f32. */
            acc_check("mean", n, data, m.v.f, (double)(px / (float)n), sx / (double)n,
                      u32 * fabs(sx) / (double)n + e64 * ax, (float)((sx - lx) / (double)n));
            acc_check("l2 sum of squares", n, data, l2.v.f, pd, sd, u32 * sd + (double)n * e64 * ad,
                      (float)(sd - ld));
            /* The distance itself, sqrt taken on the host (a dropped square moves it
             * by less than the bound: the sum of squares above is the check for that). */
            double dist = sqrt(sd);
            acc_check("l2 distance", n, data, sqrt(l2.v.f), sqrt((double)pd), dist,
                      (u32 * sd + (double)n * e64 * ad) / dist, INFINITY);
            if (k == 20 && !mixed) { /* opts->dtype f32 keeps f32 accumulation: n * eps_f32 * max|x| */
                gx_reduce_opts o32 = {0};
                o32.dtype = GX_F32;
                gx_scalar s32;
                GXT_OK(gx_reduce(ctx, "+", x, &o32, &s32));
                GXT_CHECK(s32.dtype == GX_F32);
                double e = fabs(s32.v.f - sx), b = (double)n * FLT_EPSILON * 1.0;
                if (!(e <= b))
                    GXT_FAIL_AT(__FILE__, __LINE__, "f32-accumulated sum of %lld: |error| %.3g > n eps_f32 max|x| = %.3g",
                                (long long)n, e, b);
            }
            gx_array_release(x);
            gx_array_release(y);
        }
        free(hx);
        free(hy);
        free(hd);
    }
}

/* The same promise along axes: long rows (the row kernel; 16-byte aligned rows take
 * its vector path) and long columns (the column kernel), each output against its
 * exact sum and its pairwise sum. */
GXT_TEST(reduce_f32_sum_accuracy_axes)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t W = 4;
    const double u32 = 0x1p-24, e64 = DBL_EPSILON;
    float *h = malloc((size_t)(((1 << 20) + 4) * W) * 4), *col = malloc((size_t)((1 << 20) + 4) * 4);
    GXT_CHECK(h && col);
    if (!h || !col)
        return;
    for (int ax = 0; ax < 2; ax++) {
        const int64_t L = (1 << 20) + (ax ? 4 : 3);
        for (int64_t i = 0; i < L * W; i++)
            h[i] = acc_value(false);
        /* ax 1: (W, L) summed along its rows; ax 0: (L, W) summed down its columns. */
        int64_t shape[2] = {ax ? W : L, ax ? L : W};
        gx_array *x = NULL, *y = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 2, shape, h, &x));
        gx_reduce_opts o = {0};
        o.axes = &ax;
        o.naxes = 1;
        for (int mean = 0; mean < 2; mean++) {
            GXT_OK(gx_reduce_to(ctx, mean ? "mean" : "sum", x, &o, &y));
            gx_array_desc d;
            GXT_OK(gx_array_describe(y, &d));
            GXT_CHECK(d.dtype == GX_F32);
            float g[4];
            GXT_OK(gx_array_to_host(y, g, sizeof g));
            for (int64_t j = 0; j < W; j++) {
                for (int64_t r = 0; r < L; r++)
                    col[r] = ax ? h[j * L + r] : h[r * W + j];
                double a, ex = acc_exact(col, L, &a), least = acc_least(col, L);
                float pw = acc_pairwise(col, L);
                if (mean)
                    acc_check(ax ? "row mean" : "column mean", L, "same-sign", g[j], (double)(pw / (float)L),
                              ex / (double)L, u32 * ex / (double)L + e64 * a, (float)((ex - least) / (double)L));
                else
                    acc_check(ax ? "row sum" : "column sum", L, "same-sign", g[j], pw, ex,
                              u32 * ex + (double)L * e64 * a, (float)(ex - least));
            }
            gx_array_release(y);
            y = NULL;
        }
        gx_array_release(x);
    }
    free(h);
    free(col);
}

/* ------------------------------------------------------------ warm calls (issue 22) */

/* The host reference of memo_front_sum: sum of k*x[i*step] (or x*y, y one value). */
static double memo_ref(const double *h, int64_t n, int64_t off, int64_t step, double k)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += k * h[off + i * step];
    return s;
}

/* Whole-array reductions find their kernels by a binary key of the job (the memo
 * front, reduce.c's rd_front_key) on warm calls: every change that changes the kernel
 * or its arguments must give the right value, each call twice (cold, then warm):
 * dtypes, sizes, views (strided, reversed, offset), lambda texts and operators of one
 * length, constants' values and dtypes, a size-1 input against a full one.  Values are
 * small integers, so every sum is exact in every dtype. */
GXT_TEST(reduce_memo_front_sees_every_change)
{
    gx_ctx *ctx = gxt_ctx();
    enum { N = 101 };
    double h[N];
    for (int i = 0; i < N; i++)
        h[i] = (double)(i % 7) - 3;
    int64_t n = N, one = 1;
    gx_array *x32 = NULL, *x64 = NULL, *xi = NULL, *small = NULL, *y1 = NULL;
    float hf[N];
    int32_t hi[N];
    for (int i = 0; i < N; i++)
        hf[i] = (float)h[i], hi[i] = (int32_t)h[i];
    double two = 2;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, hf, &x32));
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x64));
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, hi, &xi));
    int64_t n33 = 33;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n33, hf + 5, &small));
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &one, &two, &y1));
    gx_array *strided = NULL, *rev = NULL, *offset = NULL;
    gx_slice sl = {0, GX_END, 3}, sr = {-1, GX_END, -1}, so = {1, GX_END, 1};
    GXT_OK(gx_array_view(x32, &sl, &strided));
    GXT_OK(gx_array_view(x32, &so, &offset));
    GXT_OK(gx_array_view(x32, &sr, &rev));
    gx_scalar s;
    for (int rep = 0; rep < 2; rep++) {
        GXT_OK(gx_reduce(ctx, "+", x32, NULL, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == memo_ref(h, N, 0, 1, 1));
        GXT_OK(gx_reduce(ctx, "+", x64, NULL, &s));
        GXT_CHECK(s.dtype == GX_F64 && s.v.f == memo_ref(h, N, 0, 1, 1));
        gx_reduce_opts d64 = {0}; /* one accumulator and result: only the input's dtype differs */
        d64.dtype = GX_F64;
        GXT_OK(gx_reduce(ctx, "+", x32, &d64, &s));
        GXT_CHECK(s.dtype == GX_F64 && s.v.f == memo_ref(h, N, 0, 1, 1));
        GXT_OK(gx_reduce(ctx, "+", xi, &d64, &s));
        GXT_CHECK(s.dtype == GX_F64 && s.v.f == memo_ref(h, N, 0, 1, 1));
        GXT_OK(gx_reduce(ctx, "+", x64, &d64, &s));
        GXT_CHECK(s.dtype == GX_F64 && s.v.f == memo_ref(h, N, 0, 1, 1));
        GXT_OK(gx_reduce(ctx, "+", xi, NULL, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == memo_ref(h, N, 0, 1, 1));
        GXT_OK(gx_reduce(ctx, "+", small, NULL, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == memo_ref(h, 33, 5, 1, 1));
        GXT_OK(gx_reduce(ctx, "+", strided, NULL, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == memo_ref(h, (N + 2) / 3, 0, 3, 1));
        GXT_OK(gx_reduce(ctx, "+", offset, NULL, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == memo_ref(h, N - 1, 1, 1, 1));
        GXT_OK(gx_reduce(ctx, "+", rev, NULL, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == memo_ref(h, N, 0, 1, 1));
        /* operators of one length, and a lambda operator */
        GXT_OK(gx_reduce(ctx, "max", x32, NULL, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == 3);
        GXT_OK(gx_reduce(ctx, "min", x32, NULL, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == -3);
        int64_t at = -1;
        GXT_OK(gx_argmin(x32, &at));
        GXT_CHECK(at == 0);
        GXT_OK(gx_argmax(x32, &at));
        GXT_CHECK(at == 6);
        GXT_OK(gx_argmax(offset, &at));
        GXT_CHECK(at == 5);
        GXT_OK(gx_argmin(rev, &at)); /* x[98], the last -3, comes first reversed */
        GXT_CHECK(at == N - 1 - 98);
        /* lambda texts of one length; a constant's value and dtype under one text */
        gx_array *in1[1] = {x32};
        GXT_OK(gx_mapreduce(ctx, "x -> x * 2", "+", 1, in1, NULL, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == memo_ref(h, N, 0, 1, 2));
        GXT_OK(gx_mapreduce(ctx, "x -> x * 5", "+", 1, in1, NULL, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == memo_ref(h, N, 0, 1, 5));
        gx_const k[2] = {GX_CONST("k", GX_SCALAR_F64(2)), GX_CONST("k", GX_SCALAR_F64(7))};
        gx_reduce_opts o = {0};
        o.nconsts = 1;
        for (int c = 0; c < 2; c++) {
            o.consts = &k[c];
            GXT_OK(gx_mapreduce(ctx, "x -> x * k", "+", 1, in1, &o, &s));
            GXT_CHECK(gx_scalar_to_f64(s) == memo_ref(h, N, 0, 1, c ? 7 : 2));
        }
        gx_const ki = GX_CONST("k", GX_SCALAR_I64(4));
        o.consts = &ki;
        GXT_OK(gx_mapreduce(ctx, "x -> x * k", "+", 1, in1, &o, &s));
        GXT_CHECK(gx_scalar_to_f64(s) == memo_ref(h, N, 0, 1, 4));
        /* a size-1 input (read once) against a full one (streamed), one text */
        gx_array *in2[2] = {x64, y1}, *in3[2] = {x64, x64};
        GXT_OK(gx_mapreduce(ctx, "x, y -> x * y", "+", 2, in2, NULL, &s));
        GXT_CHECK(s.v.f == memo_ref(h, N, 0, 1, 2));
        GXT_OK(gx_mapreduce(ctx, "x, y -> x * y", "+", 2, in3, NULL, &s));
        double sq = 0;
        for (int i = 0; i < N; i++)
            sq += h[i] * h[i];
        GXT_CHECK(s.v.f == sq);
        /* into a device array: the same kernels, another output */
        gx_array *s0 = NULL;
        GXT_OK(gx_array_zeros(ctx, GX_F64, 0, NULL, &s0));
        GXT_OK(gx_reduce_into(ctx, "+", x64, NULL, s0));
        double got = 0;
        GXT_OK(gx_array_to_host(s0, &got, sizeof got));
        GXT_CHECK(got == memo_ref(h, N, 0, 1, 1));
        gx_array_release(s0);
    }
    gx_array *all[] = {x32, x64, xi, small, y1, strided, rev, offset};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
}

/* Small whole arrays (the CPU backend's front for up to 8192 elements, reduce_small.c,
 * and the full path beyond it and for what the front leaves: halves, bool, views):
 * every dtype argmin takes, the sizes around the vector lanes and the front's limit,
 * values 0..3 with many ties, NaN first / in the middle / last / everywhere, -0.0
 * beside 0.0, through every call form.  Reference: ref_best on the f64 values (the
 * values are exact in every dtype). */
static void small_case(gx_ctx *ctx, gx_dtype dt, const double *h, int64_t n)
{
    gx_array *x64 = NULL, *x = NULL, *vals = NULL, *idx = NULL, *vt = NULL, *it = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x64));
    GXT_OK(gx_array_clone(x64, dt, &x));
    int64_t one = 1;
    GXT_OK(gx_array_empty(ctx, dt, 1, &one, &vals));
    GXT_OK(gx_array_empty(ctx, GX_I64, 0, NULL, &idx));
    for (int want_max = 0; want_max < 2; want_max++) {
        int64_t w = ref_best(h, n, want_max), got = -1;
        if (w < 0)
            w = 0; /* all NaN: the first */
        GXT_OK(want_max ? gx_argmax(x, &got) : gx_argmin(x, &got));
        GXT_EQ_I64(got, w);
        gx_scalar v;
        got = -1;
        GXT_OK(want_max ? gx_findmax(x, &v, &got) : gx_findmin(x, &v, &got));
        GXT_EQ_I64(got, w);
        double vv = gx_scalar_to_f64(v);
        GXT_CHECK(isnan(h[w]) ? isnan(vv) : (vv == h[w] && signbit(vv) == signbit(h[w])));
        GXT_EQ_I64(v.dtype, dt);
        /* into arrays (the front), then new arrays (the full path) */
        const char *which = want_max ? "max" : "min";
        GXT_OK(gx_find_into(ctx, which, x, NULL, vals, idx));
        int64_t gi = -1;
        GXT_OK(gx_array_to_host(idx, &gi, 8));
        GXT_EQ_I64(gi, w);
        GXT_OK(gx_find_into(ctx, which, x, NULL, NULL, idx));
        GXT_OK(gx_find_to(ctx, which, x, NULL, &vt, &it));
        GXT_OK(gx_array_to_host(it, &gi, 8));
        GXT_EQ_I64(gi, w);
        unsigned char a[8] = {0}, b[8] = {0};
        GXT_OK(gx_array_to_host(vals, a, gx_dtype_size(dt)));
        GXT_OK(gx_array_to_host(vt, b, gx_dtype_size(dt)));
        GXT_CHECK(memcmp(a, b, gx_dtype_size(dt)) == 0);
        gx_array_release(vt);
        gx_array_release(it);
        vt = it = NULL;
    }
    gx_array_release(vals);
    gx_array_release(idx);
    gx_array_release(x);
    gx_array_release(x64);
}

GXT_TEST(reduce_find_small_all_dtypes_sizes_nan)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_F32, GX_F64, GX_F16, GX_BF16, GX_I8,  GX_I16, GX_I32,
                            GX_I64, GX_U8,  GX_U16, GX_U32,  GX_U64, GX_BOOL};
    const int64_t sizes[] = {1, 2, 31, 32, 33, 63, 64, 65, 1023, 1024, 1025, 8191, 8192, 8193};
    int64_t nmax = 8193;
    double *h = malloc((size_t)nmax * sizeof *h);
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            gx_dtype dt = dts[d];
            int64_t n = sizes[k];
            bool fl = dt == GX_F32 || dt == GX_F64 || dt == GX_F16 || dt == GX_BF16;
            int top = dt == GX_BOOL ? 2 : 4;
            for (int pat = 0; pat < (fl ? 6 : 1); pat++) {
                for (int64_t i = 0; i < n; i++) {
                    uint64_t r = gxt_rand_u64();
                    h[i] = (double)(r % (uint64_t)top);
                    if (fl && h[i] == 0 && (r >> 40) % 2)
                        h[i] = -0.0;
                }
                if (pat == 1) /* NaN first */
                    h[0] = NAN;
                if (pat == 2) /* NaN in the middle */
                    h[n / 2] = NAN;
                if (pat == 3) /* NaN last */
                    h[n - 1] = NAN;
                if (pat == 4) /* NaN everywhere but one */
                    for (int64_t i = 0; i < n; i++)
                        h[i] = i == n / 3 ? 2.0 : NAN;
                if (pat == 5) /* all NaN */
                    for (int64_t i = 0; i < n; i++)
                        h[i] = NAN;
                small_case(ctx, dt, h, n);
            }
        }
    free(h);
}

/* The front and the full path beside each other: dense arrays and strided / reversed
 * views of the same data give the same first index; bad calls report errors. */
GXT_TEST(reduce_find_small_views_and_errors)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 2051;
    float *h = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)(gxt_rand_u64() % 50);
    h[700] = -1, h[1500] = -1, h[10] = 99, h[2040] = 99;
    gx_array *x = NULL, *v = NULL, *d = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
    const gx_slice sl[] = {{1, GX_END, 3}, {-1, GX_END, -1}, {5, 1030, 1}};
    for (int s = 0; s < 3; s++) {
        GXT_OK(gx_array_view(x, &sl[s], &v));
        GXT_OK(gx_array_clone(v, GX_DTYPE_DEFAULT, &d));
        int64_t m = 0;
        GXT_OK(gx_array_size(v, &m));
        double *ref = malloc((size_t)m * sizeof *ref);
        for (int64_t i = 0; i < m; i++) {
            int64_t j = sl[s].step < 0 ? n - 1 - i : sl[s].start + i * sl[s].step;
            ref[i] = h[j];
        }
        for (int want_max = 0; want_max < 2; want_max++) {
            int64_t a = -1, b = -1;
            GXT_OK(want_max ? gx_argmax(v, &a) : gx_argmin(v, &a));
            GXT_OK(want_max ? gx_argmax(d, &b) : gx_argmin(d, &b));
            GXT_EQ_I64(a, ref_best(ref, m, want_max));
            GXT_EQ_I64(b, a);
        }
        free(ref);
        gx_array_release(v);
        gx_array_release(d);
    }
    /* bad input: empty, wrong output shape, output over the input, complex */
    gx_array *e = NULL, *o = NULL, *c = NULL;
    int64_t zero = 0, two = 2, i = 0;
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &zero, &e));
    GXT_STATUS(gx_argmin(e, &i), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("empty");
    GXT_OK(gx_array_empty(ctx, GX_I64, 0, NULL, &o));
    GXT_STATUS(gx_find_into(ctx, "min", e, NULL, NULL, o), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(o);
    GXT_OK(gx_array_empty(ctx, GX_I64, 1, &two, &o));
    GXT_STATUS(gx_find_into(ctx, "min", x, NULL, NULL, o), GX_ERR_SHAPE);
    GXT_MSG_HAS("indices");
    gx_array_release(o);
    gx_slice first = {0, 1, 1};
    GXT_OK(gx_array_view(x, &first, &o));
    GXT_STATUS(gx_find_into(ctx, "max", x, NULL, o, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("shares memory");
    gx_array_release(o);
    GXT_STATUS(gx_find_into(ctx, "mid", x, NULL, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_OK(gx_array_empty(ctx, GX_C64, 1, &two, &c));
    GXT_STATUS(gx_argmin(c, &i), GX_ERR_DTYPE);
    /* an index array of another dtype: converted (the full path) */
    GXT_OK(gx_array_empty(ctx, GX_F64, 0, NULL, &o));
    GXT_OK(gx_find_into(ctx, "min", x, NULL, NULL, o));
    double di = 0;
    GXT_OK(gx_array_to_host(o, &di, 8));
    GXT_NEAR(di, 700, 0);
    gx_array_release(o);
    gx_array_release(c);
    gx_array_release(e);
    gx_array_release(x);
    free(h);
}
