/* test_range.c -- range pipelines (every terminal against host references, several
 * dtypes and lengths, take/drop/enumerate around filters, repeated runs, bad input)
 * and gx_filter / gx_findall (stream compaction). */
#include "gx_test.h"

/* Lengths around the CUDA tile sizes (128 x 32, 256 x 16, 256 x 8, 256 x 4) and the CPU align. */
static const int64_t lens[] = {0,    1,    2,    63,   64,   65,   1023,         1024,          1025,
                               2047, 2048, 2049, 3071, 3072, 3073, 4095,         4096,          4097,
                               6143, 6144, 6145, 8191, 8192, 8193, 3 * 4096 + 1, 65536 * 2 + 5, (1 << 20) + 7};
#define NLENS ((int)(sizeof lens / sizeof lens[0]))

static gx_pipe *iota_pipe(gx_ctx *ctx, gx_dtype dt, int64_t n, double start, double step)
{
    gx_pipe *p = NULL;
    if (gx_pipe_iota(ctx, dt, n, start, step, &p) != GX_OK)
        return NULL;
    return p;
}

GXT_TEST(range_count_iota_filter)
{
    gx_ctx *ctx = gxt_ctx();
    for (int li = 0; li < NLENS; li++) {
        int64_t n = lens[li];
        gx_pipe *p = iota_pipe(ctx, GX_I64, n, 0, 1);
        GXT_CHECK(p != NULL);
        GXT_OK(gx_pipe_map(p, "i -> (i * i) % 1000", NULL));
        GXT_OK(gx_pipe_filter(p, "v -> v % 3 == 0", NULL));
        int64_t want = 0;
        for (int64_t i = 0; i < n; i++)
            want += ((i * i) % 1000) % 3 == 0;
        for (int rep = 0; rep < 2; rep++) { /* the same pipeline runs again */
            int64_t got = -1;
            GXT_OK(gx_pipe_count(p, &got));
            GXT_EQ_I64(got, want);
        }
        gx_pipe_destroy(p);
    }
}

GXT_TEST(range_reduce_dtypes)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_I8, GX_I16, GX_I32, GX_I64, GX_U8, GX_U16, GX_U32, GX_U64, GX_F32, GX_F64};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        for (int li = 1; li < NLENS; li += 3) {
            int64_t n = lens[li];
            gx_pipe *p = iota_pipe(ctx, dts[d], n, 1, 1);
            GXT_OK(gx_pipe_map(p, "x -> i64(x) % 7", NULL));
            int64_t want = 0;
            gx_scalar got = {0};
            for (int64_t i = 0; i < n; i++) {
                int64_t v;
                switch (dts[d]) {
                case GX_I8: v = (int8_t)(i + 1); break;
                case GX_U8: v = (uint8_t)(i + 1); break;
                case GX_I16: v = (int16_t)(i + 1); break;
                case GX_U16: v = (uint16_t)(i + 1); break;
                default: v = i + 1;
                }
                if (dts[d] == GX_F32)
                    v = (int64_t)(float)(i + 1);
                want += v % 7;
            }
            GXT_OK(gx_pipe_reduce(p, "a, b -> a + b", NULL, &got));
            GXT_CHECK(got.dtype == GX_I64);
            GXT_EQ_I64(got.v.i, want);
            gx_pipe_destroy(p);
        }
    }
}

GXT_TEST(range_reduce_init_and_empty)
{
    gx_ctx *ctx = gxt_ctx();
    gx_pipe *p = iota_pipe(ctx, GX_I32, 0, 0, 1);
    gx_scalar r = {0};
    gx_scalar init = GX_SCALAR_I32(42);
    gx_pipe_opts with_init = {.init = &init};
    GXT_OK(gx_pipe_reduce(p, "a, b -> a + b", &with_init, &r));
    GXT_CHECK(r.dtype == GX_I32);
    GXT_EQ_I64(r.v.i, 42);
    GXT_STATUS(gx_pipe_reduce(p, "a, b -> a + b", NULL, &r), GX_ERR_SHAPE);
    GXT_MSG_HAS("empty");
    /* a named operator's empty result is its neutral element ("+" on i32 accumulates in i64) */
    GXT_OK(gx_pipe_reduce(p, "+", NULL, &r));
    GXT_CHECK(r.dtype == GX_I64);
    GXT_EQ_I64(r.v.i, 0);
    gx_pipe_destroy(p);
    p = iota_pipe(ctx, GX_I32, 100, 1, 1);
    GXT_OK(gx_pipe_reduce(p, "a, b -> a * 2 - a + b", &with_init, &r));
    GXT_EQ_I64(r.v.i, 42 + 5050);
    GXT_OK(gx_pipe_reduce(p, "sum", &with_init, &r));
    GXT_CHECK(r.dtype == GX_I64);
    GXT_EQ_I64(r.v.i, 42 + 5050);
    gx_pipe_opts as_f64 = {.dtype = GX_F64};
    GXT_OK(gx_pipe_reduce(p, "*", &as_f64, &r)); /* 100! in double */
    GXT_CHECK(r.dtype == GX_F64);
    GXT_NEAR(r.v.f, 9.33262154439441e157, 1e-12 * 9.33262154439441e157);
    gx_scalar f = {0};
    GXT_OK(gx_pipe_mapreduce(p, "x -> f64(x) * 0.5", "a, b -> a + b", NULL, &f));
    GXT_CHECK(f.dtype == GX_F64);
    GXT_NEAR(f.v.f, 2525.0, 1e-12);
    gx_const half = GX_CONST("half", GX_SCALAR_F64(0.5));
    gx_pipe_opts with_const = {.consts = &half, .nconsts = 1};
    GXT_OK(gx_pipe_mapreduce(p, "x -> f64(x) * half", "max", &with_const, &f));
    GXT_NEAR(f.v.f, 50.0, 0);
    int arity = 0;
    GXT_OK(gx_pipe_arity(p, &arity)); /* mapreduce leaves p as it was */
    GXT_EQ_I64(arity, 1);
    gx_dtype dt;
    GXT_OK(gx_pipe_dtype(p, 0, &dt));
    GXT_CHECK(dt == GX_I32);
    gx_pipe_destroy(p);
}

GXT_TEST(range_any_all_min_max_arg)
{
    gx_ctx *ctx = gxt_ctx();
    for (int li = 1; li < NLENS; li += 2) {
        int64_t n = lens[li];
        float *h = malloc((size_t)n * sizeof *h);
        for (int64_t i = 0; i < n; i++)
            h[i] = (float)(gxt_rand01() * 100 - 50);
        int64_t imin = n / 3, imax = n / 2;
        h[imin] = -1000;
        h[imax] = 1000;
        if (n > 4)
            h[n - 1] = -1000; /* a tie later: argmin must stay at the first */
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
        gx_pipe *p = NULL;
        GXT_OK(gx_pipe_from_arrays(ctx, 1, &x, &p));
        gx_scalar mn = {0}, mx = {0};
        int64_t amn = -1, amx = -1;
        GXT_OK(gx_pipe_min(p, &mn));
        GXT_OK(gx_pipe_max(p, &mx));
        GXT_OK(gx_pipe_argmin(p, &amn));
        GXT_OK(gx_pipe_argmax(p, &amx));
        GXT_CHECK(mn.dtype == GX_F32 && mx.dtype == GX_F32);
        GXT_NEAR(mn.v.f, n == 1 ? 1000 : -1000, 0); /* n == 1: h[0] is set to -1000, then 1000 */
        GXT_NEAR(mx.v.f, 1000, 0);
        GXT_EQ_I64(amn, imin);
        GXT_EQ_I64(amx, imax);
        bool any = false, all = false;
        GXT_OK(gx_pipe_map(p, "x -> x > 999.0f", NULL));
        GXT_OK(gx_pipe_any(p, &any));
        GXT_OK(gx_pipe_all(p, &all));
        GXT_EQ_I64(any, 1);
        GXT_EQ_I64(all, n == 1);
        gx_pipe_destroy(p);
        gx_array_release(x);
        free(h);
    }
    /* empty: any false, all true, min an error */
    gx_pipe *p = iota_pipe(ctx, GX_BOOL, 0, 0, 1);
    bool any = true, all = false;
    GXT_OK(gx_pipe_any(p, &any));
    GXT_OK(gx_pipe_all(p, &all));
    GXT_EQ_I64(any, 0);
    GXT_EQ_I64(all, 1);
    gx_scalar b;
    GXT_STATUS(gx_pipe_min(p, &b), GX_ERR_SHAPE);
    int64_t i;
    GXT_STATUS(gx_pipe_argmax(p, &i), GX_ERR_SHAPE);
    gx_pipe_destroy(p);
}

GXT_TEST(range_min_skips_nan)
{
    gx_ctx *ctx = gxt_ctx();
    double h[5] = {NAN, 3, NAN, -2, 7};
    int64_t n = 5;
    gx_array *x = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x));
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &x, &p));
    gx_scalar mn, mx;
    int64_t a;
    GXT_OK(gx_pipe_min(p, &mn));
    GXT_OK(gx_pipe_max(p, &mx));
    GXT_CHECK(mn.dtype == GX_F64 && mx.dtype == GX_F64);
    GXT_NEAR(mn.v.f, -2, 0);
    GXT_NEAR(mx.v.f, 7, 0);
    GXT_OK(gx_pipe_argmin(p, &a));
    GXT_EQ_I64(a, 3);
    gx_pipe_destroy(p);
    gx_array_release(x);
}

/* collect after a filter: order preserved, every length and keep pattern. */
GXT_TEST(range_collect_filters)
{
    gx_ctx *ctx = gxt_ctx();
    const char *preds[] = {"x -> false", "x -> true", "x -> x % 2 == 0", "x -> (x * 2654435761u) % 7u < 3u"};
    for (int li = 0; li < NLENS; li++) {
        int64_t n = lens[li];
        for (int k = 0; k < 4; k++) {
            gx_pipe *p = iota_pipe(ctx, GX_U32, n, 5, 1);
            GXT_OK(gx_pipe_filter(p, preds[k], NULL));
            gx_array *o = NULL;
            GXT_OK(gx_pipe_collect(p, 1, &o));
            int64_t m = 0;
            GXT_OK(gx_array_size(o, &m));
            uint32_t *h = malloc((size_t)(m + 1) * 4);
            GXT_OK(gx_array_to_host(o, h, (size_t)(m + 1) * 4));
            int64_t j = 0;
            bool ok = true;
            for (int64_t i = 0; i < n; i++) {
                uint32_t x = (uint32_t)(i + 5);
                bool keep = k == 0   ? false
                            : k == 1 ? true
                            : k == 2 ? x % 2 == 0
                                     : (uint32_t)(x * 2654435761u) % 7u < 3u;
                if (!keep)
                    continue;
                if (j >= m || h[j] != x)
                    ok = false;
                j++;
            }
            if (!ok || j != m)
                GXT_FAIL_AT(__FILE__, __LINE__, "collect n=%lld pred=%s: got %lld values, want %lld", (long long)n,
                            preds[k], (long long)m, (long long)j);
            free(h);
            gx_array_release(o);
            gx_pipe_destroy(p);
        }
    }
}

GXT_TEST(range_zip_enumerate_collect)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 10007;
    float *x = malloc((size_t)n * 4);
    double *y = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)gxt_rand01(), y[i] = gxt_rand01();
    gx_array *a[2] = {NULL, NULL};
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, x, &a[0]));
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, y, &a[1]));
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 2, a, &p));
    GXT_OK(gx_pipe_drop(p, 3));
    GXT_OK(gx_pipe_enumerate(p));
    GXT_OK(gx_pipe_filter(p, "i, x, y -> x < y && i % 2 == 1", NULL));
    int arity = 0;
    GXT_OK(gx_pipe_arity(p, &arity));
    GXT_EQ_I64(arity, 3);
    gx_array *o[3] = {NULL, NULL, NULL};
    GXT_OK(gx_pipe_collect(p, 3, o));
    int64_t m;
    GXT_OK(gx_array_size(o[0], &m));
    int64_t *hi = malloc((size_t)(m + 1) * 8);
    float *hx = malloc((size_t)(m + 1) * 4);
    double *hy = malloc((size_t)(m + 1) * 8);
    GXT_OK(gx_array_to_host(o[0], hi, (size_t)(m + 1) * 8));
    GXT_OK(gx_array_to_host(o[1], hx, (size_t)(m + 1) * 4));
    GXT_OK(gx_array_to_host(o[2], hy, (size_t)(m + 1) * 8));
    int64_t j = 0;
    for (int64_t i = 3; i < n; i++) {
        int64_t e = i - 3;
        if (!(x[i] < y[i] && e % 2 == 1))
            continue;
        if (j < m && (hi[j] != e || hx[j] != x[i] || hy[j] != y[i])) {
            GXT_FAIL_AT(__FILE__, __LINE__, "zip/enumerate collect differs at %lld", (long long)j);
            break;
        }
        j++;
    }
    GXT_EQ_I64(m, j);
    /* take after the filter: the first 5 kept; drop 2 of them; then enumerate again */
    GXT_OK(gx_pipe_take(p, 5));
    GXT_OK(gx_pipe_drop(p, 2));
    GXT_OK(gx_pipe_map(p, "i, x, y -> i", NULL));
    GXT_OK(gx_pipe_enumerate(p));
    GXT_OK(gx_pipe_map(p, "k, i -> k * 1000000 + i", NULL));
    int64_t got[8];
    int64_t len = 0;
    GXT_OK(gx_pipe_to_host(p, got, sizeof got, &len));
    GXT_EQ_I64(len, m < 5 ? (m > 2 ? m - 2 : 0) : 3);
    for (int64_t k = 0; k < len; k++)
        GXT_EQ_I64(got[k], k * 1000000 + hi[k + 2]);
    int64_t small[1];
    if (len > 1) {
        GXT_STATUS(gx_pipe_to_host(p, small, sizeof small, &len), GX_ERR_INVALID_ARGUMENT);
        GXT_EQ_I64(len, 3);
    }
    free(hi);
    free(hx);
    free(hy);
    for (int c = 0; c < 3; c++)
        gx_array_release(o[c]);
    gx_pipe_destroy(p);
    gx_array_release(a[0]);
    gx_array_release(a[1]);
    free(x);
    free(y);
}

/* A scan of a pipeline: exclusive/inclusive, init, and after a filter (materialised). */
GXT_TEST(range_scan_pipeline)
{
    gx_ctx *ctx = gxt_ctx();
    for (int li = 0; li < NLENS; li++) {
        int64_t n = lens[li];
        gx_pipe *p = iota_pipe(ctx, GX_I64, n, 0, 1);
        GXT_OK(gx_pipe_map(p, "i -> (i * 7) % 13 - 6", NULL));
        for (int ex = 0; ex < 2; ex++) {
            gx_array *o = NULL;
            gx_scalar init = GX_SCALAR_I64(100);
            gx_pipe_opts so = {.exclusive = ex, .init = ex ? &init : NULL};
            GXT_OK(gx_pipe_scan(p, "a, b -> a + b", &so, &o));
            int64_t *h = malloc((size_t)(n + 1) * 8);
            GXT_OK(gx_array_to_host(o, h, (size_t)(n + 1) * 8));
            int64_t acc = ex ? 100 : 0;
            for (int64_t i = 0; i < n; i++) {
                int64_t v = (i * 7) % 13 - 6;
                int64_t want = ex ? acc : acc + v;
                acc += v;
                if (h[i] != want) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "scan n=%lld ex=%d at %lld: %lld != %lld", (long long)n, ex,
                                (long long)i, (long long)h[i], (long long)want);
                    break;
                }
            }
            free(h);
            gx_array_release(o);
        }
        /* into an array you have (the length is known before the filter), by operator name */
        gx_array *into = NULL;
        GXT_OK(gx_array_zeros(ctx, GX_I64, 1, &n, &into));
        GXT_OK(gx_pipe_scan_into(p, "+", NULL, into));
        int64_t *hs = malloc((size_t)(n + 1) * 8), run = 0;
        GXT_OK(gx_array_to_host(into, hs, (size_t)(n + 1) * 8));
        for (int64_t i = 0; i < n; i++) {
            run += (i * 7) % 13 - 6;
            if (hs[i] != run) {
                GXT_FAIL_AT(__FILE__, __LINE__, "scan_into n=%lld at %lld: %lld != %lld", (long long)n, (long long)i,
                            (long long)hs[i], (long long)run);
                break;
            }
        }
        free(hs);
        gx_array_release(into);
        /* after a filter: scan of the kept values */
        GXT_OK(gx_pipe_filter(p, "v -> v > 0", NULL));
        gx_array *o = NULL;
        GXT_OK(gx_pipe_scan(p, "a, b -> a + b", NULL, &o));
        int64_t m = 0, acc = 0, j = 0;
        GXT_OK(gx_array_size(o, &m));
        int64_t *h = malloc((size_t)(m + 1) * 8);
        GXT_OK(gx_array_to_host(o, h, (size_t)(m + 1) * 8));
        for (int64_t i = 0; i < n; i++) {
            int64_t v = (i * 7) % 13 - 6;
            if (v <= 0)
                continue;
            acc += v;
            if (j < m && h[j] != acc) {
                GXT_FAIL_AT(__FILE__, __LINE__, "filtered scan at %lld", (long long)j);
                break;
            }
            j++;
        }
        GXT_EQ_I64(m, j);
        free(h);
        gx_array_release(o);
        gx_pipe_destroy(p);
    }
}

/* Non-commutative associative operators catch any reordering. */
GXT_TEST(range_scan_noncommutative)
{
    gx_ctx *ctx = gxt_ctx();
    for (int li = 1; li < NLENS; li++) {
        int64_t n = lens[li];
        gx_pipe *p = iota_pipe(ctx, GX_I32, n, 3, 1);
        gx_array *first = NULL, *last = NULL;
        GXT_OK(gx_pipe_scan(p, "a, b -> a", NULL, &first));
        GXT_OK(gx_pipe_scan(p, "a, b -> b", NULL, &last));
        int32_t *h1 = malloc((size_t)n * 4), *h2 = malloc((size_t)n * 4);
        GXT_OK(gx_array_to_host(first, h1, (size_t)n * 4));
        GXT_OK(gx_array_to_host(last, h2, (size_t)n * 4));
        for (int64_t i = 0; i < n; i++)
            if (h1[i] != 3 || h2[i] != (int32_t)(i + 3)) {
                GXT_FAIL_AT(__FILE__, __LINE__, "n=%lld at %lld: first %d last %d", (long long)n, (long long)i, h1[i],
                            h2[i]);
                break;
            }
        free(h1);
        free(h2);
        gx_array_release(first);
        gx_array_release(last);
        gx_pipe_destroy(p);
    }
}

/* Random source: reproducible, in range, and the same stream on every run. */
GXT_TEST(range_random_source)
{
    gx_ctx *ctx = gxt_ctx();
    gx_pipe *p = NULL;
    int64_t n = 100003;
    GXT_OK(gx_pipe_random(ctx, GX_F32, 1234, n, &p));
    gx_scalar mn = {0}, mx = {0};
    GXT_OK(gx_pipe_min(p, &mn));
    GXT_OK(gx_pipe_max(p, &mx));
    GXT_CHECK(mn.v.f >= 0 && mx.v.f < 1 && mx.v.f > 0.99f && mn.v.f < 0.01f);
    gx_scalar sum = {0}, sum2 = {0};
    GXT_OK(gx_pipe_mapreduce(p, "x -> f64(x)", "a, b -> a + b", NULL, &sum));
    GXT_OK(gx_pipe_mapreduce(p, "x -> f64(x)", "a, b -> a + b", NULL, &sum2));
    GXT_NEAR(sum.v.f / (double)n, 0.5, 0.01);
    GXT_NEAR(sum.v.f, sum2.v.f, 1e-12);
    gx_pipe_destroy(p);
}

/* Whether ctx runs CUDA; skips the test otherwise (2^31+ elements are too slow on a CPU). */
static bool on_cuda(gx_ctx *ctx)
{
    gx_backend_kind k;
    if (gx_ctx_backend(ctx, &k) != GX_OK) {
        GXT_FAIL_AT(__FILE__, __LINE__, "gx_ctx_backend: %s", gx_last_error());
        return false;
    }
    if (k != GX_BACKEND_CUDA)
        gxt_skip("2^31+77 elements: run on the CUDA backend");
    return k == GX_BACKEND_CUDA;
}

/* Above 2^31 elements: iota sources need no memory (CUDA only: too slow on a CPU). */
GXT_TEST(range_count_above_2_31)
{
    gx_ctx *ctx = gxt_ctx();
    if (!on_cuda(ctx))
        return;
    int64_t n = ((int64_t)1 << 31) + 77;
    gx_pipe *p = iota_pipe(ctx, GX_I64, n, 0, 1);
    int64_t c = 0;
    GXT_OK(gx_pipe_count(p, &c));
    GXT_EQ_I64(c, n);
    GXT_OK(gx_pipe_filter(p, "i -> i % 5 == 4", NULL));
    GXT_OK(gx_pipe_count(p, &c));
    GXT_EQ_I64(c, (n + 0) / 5);
    gx_scalar s = {0};
    GXT_OK(gx_pipe_reduce(p, "a, b -> a + b", NULL, &s));
    int64_t want = 0;
    for (int64_t i = 4; i < n; i += 5)
        want += i;
    GXT_EQ_I64(s.v.i, want);
    gx_pipe_destroy(p);
    /* argmax over the whole range: the last index */
    p = iota_pipe(ctx, GX_I64, n, 0, 1);
    int64_t am = 0;
    GXT_OK(gx_pipe_argmax(p, &am));
    GXT_EQ_I64(am, n - 1);
    gx_pipe_destroy(p);
}

/* Scan and compaction above 2^31 elements (the look-back's tile indices and counts
 * pass 2^31), checked on the device by other pipelines over the results. */
GXT_TEST(range_scan_collect_above_2_31)
{
    gx_ctx *ctx = gxt_ctx();
    if (!on_cuda(ctx))
        return;
    int64_t n = ((int64_t)1 << 31) + 77;
    /* running sum of 0, 1, 2... is k(k+1)/2 at position k */
    gx_pipe *p = iota_pipe(ctx, GX_I64, n, 0, 1);
    gx_array *sc = NULL;
    GXT_OK(gx_pipe_scan(p, "a, b -> a + b", NULL, &sc));
    gx_pipe_destroy(p);
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &sc, &p));
    GXT_OK(gx_pipe_enumerate(p));
    GXT_OK(gx_pipe_filter(p, "i, v -> v != i * (i + 1) / 2", NULL));
    int64_t bad = -1;
    GXT_OK(gx_pipe_count(p, &bad));
    GXT_EQ_I64(bad, 0);
    gx_pipe_destroy(p);
    int64_t last = 0;
    GXT_OK(gx_array_get(sc, (int64_t[]){n - 1}, &last));
    GXT_EQ_I64(last, (n - 1) * n / 2);
    gx_array_release(sc);
    /* every fifth position kept, in order: value 5j + 4 at position j */
    p = iota_pipe(ctx, GX_I64, n, 0, 1);
    GXT_OK(gx_pipe_filter(p, "i -> i % 5 == 4", NULL));
    gx_array *kept = NULL;
    GXT_OK(gx_pipe_collect(p, 1, &kept));
    gx_pipe_destroy(p);
    int64_t len = 0;
    GXT_OK(gx_array_size(kept, &len));
    GXT_EQ_I64(len, n / 5);
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &kept, &p));
    GXT_OK(gx_pipe_enumerate(p));
    GXT_OK(gx_pipe_filter(p, "j, v -> v != 5 * j + 4", NULL));
    GXT_OK(gx_pipe_count(p, &bad));
    GXT_EQ_I64(bad, 0);
    gx_pipe_destroy(p);
    gx_array_release(kept);
}

GXT_TEST(range_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    gx_pipe *p = iota_pipe(ctx, GX_F32, 100, 0, 1);
    /* wrong arity */
    GXT_STATUS(gx_pipe_map(p, "x, y -> x + y", NULL), GX_ERR_TYPE);
    GXT_MSG_HAS("gx_pipe_map");
    /* type mismatch between stages: & on a float stream */
    GXT_STATUS(gx_pipe_filter(p, "x -> (x & 1) == 0", NULL), GX_ERR_TYPE);
    GXT_STATUS(gx_pipe_map(p, "x -> x +", NULL), GX_ERR_SYNTAX);
    int arity = 0;
    GXT_OK(gx_pipe_arity(p, &arity)); /* failed stages left p unchanged */
    GXT_EQ_I64(arity, 1);
    GXT_STATUS(gx_pipe_take(p, -1), GX_ERR_INVALID_ARGUMENT);
    /* a preallocated scan output needs a known length */
    GXT_OK(gx_pipe_filter(p, "x -> x > 10.0f", NULL));
    int64_t len;
    GXT_STATUS(gx_pipe_length(p, &len), GX_ERR_SHAPE);
    gx_array *o = NULL;
    int64_t n = 89;
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &o));
    GXT_STATUS(gx_pipe_scan_into(p, "a, b -> a + b", NULL, o), GX_ERR_SHAPE);
    GXT_MSG_HAS("unknown");
    /* take after the filter is fine */
    GXT_OK(gx_pipe_take(p, 10));
    int64_t c = 0;
    GXT_OK(gx_pipe_count(p, &c));
    GXT_EQ_I64(c, 10);
    /* exclusive scan without init */
    gx_pipe *q = iota_pipe(ctx, GX_F32, 10, 0, 1);
    gx_array *o2 = NULL;
    gx_pipe_opts ex = {.exclusive = 1};
    GXT_STATUS(gx_pipe_scan(q, "a, b -> a + b", &ex, &o2), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(o2 == NULL);
    /* wrong preallocated size; no output at all */
    GXT_STATUS(gx_pipe_scan_into(q, "a, b -> a + b", NULL, o), GX_ERR_SHAPE);
    GXT_STATUS(gx_pipe_scan_into(q, "a, b -> a + b", NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    /* a nonzero reserved word */
    gx_pipe_opts reserved = {.reserved = {1}};
    GXT_STATUS(gx_pipe_map(q, "x -> x", &reserved), GX_ERR_INVALID_ARGUMENT);
    gx_scalar r;
    GXT_STATUS(gx_pipe_reduce(q, "+", &reserved, &r), GX_ERR_INVALID_ARGUMENT);
    /* tuples need a map before a one-value terminal; collect wants one array per component */
    GXT_OK(gx_pipe_enumerate(q));
    gx_scalar f;
    GXT_STATUS(gx_pipe_min(q, &f), GX_ERR_SHAPE);
    GXT_MSG_HAS("components");
    gx_array *one = NULL;
    GXT_STATUS(gx_pipe_collect(q, 1, &one), GX_ERR_INVALID_ARGUMENT);
    /* a destroyed pipeline */
    gx_pipe_destroy(q);
    GXT_STATUS(gx_pipe_count(q, &c), GX_ERR_INVALID_HANDLE);
    GXT_STATUS(gx_pipe_iota(ctx, GX_F16, 10, 0, 1, &q), GX_ERR_DTYPE);
    GXT_CHECK(q == NULL);
    GXT_STATUS(gx_pipe_random(ctx, GX_C64, 1, 10, &q), GX_ERR_DTYPE);
    gx_array_release(o);
    gx_pipe_destroy(p);
}

GXT_TEST(range_constants_and_strided_source)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 5001;
    gx_array *x = NULL, *v = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F64, n, 0, 1, &x));
    gx_slice sl = {1, GX_END, 3};
    GXT_OK(gx_array_view(x, &sl, &v)); /* 1, 4, 7, ... */
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &v, &p));
    gx_const c[2] = {GX_CONST("lo", GX_SCALAR_F64(100.0)), GX_CONST("m", GX_SCALAR_I32(2))};
    gx_pipe_opts lo = {.consts = c, .nconsts = 1}, m = {.consts = c + 1, .nconsts = 1};
    GXT_OK(gx_pipe_filter(p, "x -> x >= lo", &lo));
    GXT_OK(gx_pipe_map(p, "x -> i64(x) * m", &m));
    gx_scalar s = {0};
    int64_t want = 0;
    GXT_OK(gx_pipe_reduce(p, "a, b -> a + b", NULL, &s));
    for (int64_t i = 1; i < n; i += 3)
        if (i >= 100)
            want += i * 2;
    GXT_EQ_I64(s.v.i, want);
    gx_pipe_destroy(p);
    gx_array_release(v);
    gx_array_release(x);
}

/* ------------------------------------------------------------ gx_filter / gx_findall */

GXT_TEST(filter_keeps_order_all_dtypes)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_I8, GX_U16, GX_I32, GX_U64, GX_F32, GX_F64};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        for (int li = 0; li < NLENS; li += 2) {
            int64_t n = lens[li];
            gx_array *x = NULL, *o = NULL, *ix = NULL;
            GXT_OK(gx_array_iota(ctx, dts[d], n, 0, 1, &x));
            GXT_OK(gx_filter(ctx, "x -> i64(x) % 3 == 1", 1, &x, NULL, &o));
            GXT_OK(gx_findall(ctx, "x -> i64(x) % 3 == 1", 1, &x, NULL, &ix));
            gx_array_desc od;
            GXT_OK(gx_array_describe(o, &od));
            GXT_CHECK(od.dtype == dts[d] && od.ndim == 1);
            int64_t m = od.size, want = 0;
            double *h = malloc((size_t)(m + 1) * 8);
            int64_t *hi = malloc((size_t)(m + 1) * 8);
            gx_array *od64 = NULL;
            GXT_OK(gx_array_clone(o, GX_F64, &od64));
            GXT_OK(gx_array_to_host(od64, h, (size_t)(m + 1) * 8));
            GXT_OK(gx_array_to_host(ix, hi, (size_t)(m + 1) * 8));
            /* the reference: iota in the dtype's arithmetic (i8 wraps) */
            for (int64_t i = 0; i < n; i++) {
                double xv = dts[d] == GX_I8 ? (double)(int8_t)i : dts[d] == GX_U16 ? (double)(uint16_t)i : (double)i;
                if ((int64_t)xv % 3 != 1)
                    continue;
                if (want < m && (h[want] != xv || hi[want] != i)) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "dtype %s n=%lld at %lld", gx_dtype_name(dts[d]), (long long)n,
                                (long long)want);
                    break;
                }
                want++;
            }
            GXT_EQ_I64(m, want);
            free(h);
            free(hi);
            gx_array_release(od64);
            gx_array_release(x);
            gx_array_release(o);
            gx_array_release(ix);
        }
    }
}

GXT_TEST(filter_float_threshold)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = (1 << 20) + 7;
    float *h = malloc((size_t)n * 4), *r = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)gxt_rand01();
    gx_array *x = NULL, *o = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
    gx_const t = GX_CONST("t", GX_SCALAR_F32(0.5));
    gx_filter_opts fo = {.consts = &t, .nconsts = 1};
    GXT_OK(gx_filter(ctx, "x -> x > t", 1, &x, &fo, &o));
    int64_t m = 0, j = 0;
    GXT_OK(gx_array_size(o, &m));
    GXT_OK(gx_array_to_host(o, r, (size_t)n * 4));
    for (int64_t i = 0; i < n; i++)
        if (h[i] > 0.5f) {
            if (j < m && r[j] != h[i]) {
                GXT_FAIL_AT(__FILE__, __LINE__, "at %lld", (long long)j);
                break;
            }
            j++;
        }
    GXT_EQ_I64(m, j);
    free(h);
    free(r);
    gx_array_release(x);
    gx_array_release(o);
}

GXT_TEST(filter_zipped_and_nd)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t shape[2] = {37, 41}, n = 37 * 41;
    gx_array *a = NULL, *b = NULL, *bt = NULL, *o[2] = {NULL, NULL}, *ix = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I32, n, 0, 1, &a));
    GXT_OK(gx_array_iota(ctx, GX_I32, n, 0, 1, &b));
    gx_array *a2 = NULL, *b2 = NULL;
    GXT_OK(gx_array_reshape(a, 2, shape, &a2));
    int64_t sh2[2] = {41, 37};
    GXT_OK(gx_array_reshape(b, 2, sh2, &b2));
    int perm[2] = {1, 0};
    GXT_OK(gx_array_permute(b2, perm, &bt)); /* a non-contiguous 37x41 view */
    gx_array *in[2] = {a2, bt};
    GXT_OK(gx_filter(ctx, "x, y -> (x + y) % 4 == 0", 2, in, NULL, o));
    GXT_OK(gx_findall(ctx, "x, y -> (x + y) % 4 == 0", 2, in, NULL, &ix));
    int64_t m;
    GXT_OK(gx_array_size(o[0], &m));
    int32_t *hx = malloc((size_t)n * 4), *hy = malloc((size_t)n * 4);
    int64_t *hi = malloc((size_t)n * 8);
    GXT_OK(gx_array_to_host(o[0], hx, (size_t)n * 4));
    GXT_OK(gx_array_to_host(o[1], hy, (size_t)n * 4));
    GXT_OK(gx_array_to_host(ix, hi, (size_t)n * 8));
    int64_t j = 0;
    for (int64_t r = 0; r < 37; r++)
        for (int64_t c = 0; c < 41; c++) {
            int32_t x = (int32_t)(r * 41 + c), y = (int32_t)(c * 37 + r);
            if ((x + y) % 4 != 0)
                continue;
            if (j < m && (hx[j] != x || hy[j] != y || hi[j] != r * 41 + c)) {
                GXT_FAIL_AT(__FILE__, __LINE__, "zipped filter at %lld", (long long)j);
                r = 37;
                break;
            }
            j++;
        }
    GXT_EQ_I64(m, j);
    gx_array *bad[2] = {NULL, NULL};
    GXT_STATUS(gx_filter(ctx, "x -> x > 0", 2, in, NULL, bad), GX_ERR_TYPE);
    GXT_STATUS(gx_findall(ctx, "x, y -> x +", 2, in, NULL, bad), GX_ERR_SYNTAX);
    free(hx);
    free(hy);
    free(hi);
    gx_array *all[] = {a, b, a2, b2, bt, o[0], o[1], ix};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
}

/* Zipped columns of 4- and 8-byte dtypes and one of 1 byte filtered together (the CPU
 * backend packs 4- and 8-byte columns with vector compress where it can, 1-byte ones
 * in its scalar loop), random keeps, sizes around the 16-element groups and blocks
 * of 256 and parts large enough to prefetch. */
GXT_TEST(filter_zipped_mixed_widths)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t ns[] = {1, 15, 16, 17, 255, 256, 257, 4111, (1 << 17) + 5};
    for (size_t t = 0; t < 2 * sizeof ns / sizeof ns[0]; t++) {
        int64_t n = ns[t / 2];
        int ncol = t % 2 ? 4 : 3; /* 3: every column 4 or 8 bytes */
        float *hx = malloc((size_t)n * 4);
        int64_t *hy = malloc((size_t)n * 8);
        double *hz = malloc((size_t)n * 8);
        uint8_t *hb = malloc((size_t)n);
        for (int64_t i = 0; i < n; i++) {
            hx[i] = (float)gxt_rand01();
            hy[i] = (int64_t)(gxt_rand01() * 1e12) - 500000000000ll;
            hz[i] = gxt_rand01() * 2 - 1;
            hb[i] = (uint8_t)(gxt_rand01() * 256);
        }
        gx_array *in[4] = {NULL, NULL, NULL, NULL}, *o[4] = {NULL, NULL, NULL, NULL};
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, hx, &in[0]));
        GXT_OK(gx_array_from_host(ctx, GX_I64, 1, &n, hy, &in[1]));
        GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, hz, &in[2]));
        GXT_OK(gx_array_from_host(ctx, GX_U8, 1, &n, hb, &in[3]));
        /* about 3 in 10 kept, in no pattern the inputs share */
        const char *pred = ncol == 4 ? "x, y, z, b -> (x < 0.3) == (z > 0.0) && b != 7" : "x, y, z -> (x < 0.3) == (z > 0.0)";
        GXT_OK(gx_filter(ctx, pred, ncol, in, NULL, o));
        int64_t m = 0;
        GXT_OK(gx_array_size(o[0], &m));
        float *rx = malloc((size_t)(m + 1) * 4);
        int64_t *ry = malloc((size_t)(m + 1) * 8);
        double *rz = malloc((size_t)(m + 1) * 8);
        uint8_t *rb = malloc((size_t)(m + 1));
        if (ncol == 4)
            GXT_OK(gx_array_to_host(o[3], rb, (size_t)m));
        GXT_OK(gx_array_to_host(o[0], rx, (size_t)m * 4));
        GXT_OK(gx_array_to_host(o[1], ry, (size_t)m * 8));
        GXT_OK(gx_array_to_host(o[2], rz, (size_t)m * 8));
        int64_t j = 0;
        for (int64_t i = 0; i < n; i++) {
            if (((double)hx[i] < 0.3) != (hz[i] > 0.0) || (ncol == 4 && hb[i] == 7))
                continue;
            if (j >= m || rx[j] != hx[i] || ry[j] != hy[i] || rz[j] != hz[i] || (ncol == 4 && rb[j] != hb[i])) {
                GXT_FAIL_AT(__FILE__, __LINE__, "n=%lld, %d columns: kept element %lld (input %lld) differs",
                            (long long)n, ncol, (long long)j, (long long)i);
                break;
            }
            j++;
        }
        GXT_EQ_I64(m, j);
        free(hx);
        free(hy);
        free(hz);
        free(hb);
        free(rx);
        free(ry);
        free(rz);
        free(rb);
        for (int c = 0; c < 4; c++) {
            gx_array_release(in[c]);
            gx_array_release(o[c]);
        }
    }
}

/* One scan or filter of n fresh random values, checked against the host. */
static void scan_or_filter_once(gx_ctx *ctx, int64_t n, bool scan)
{
    float *h = malloc((size_t)n * 4), *o = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        h[i] = scan ? (float)(int)(gxt_rand01() * 16) - 8 : (float)gxt_rand01();
    gx_array *x = NULL, *y = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
    if (scan)
        GXT_OK(gx_scan(ctx, "a, b -> a + b", x, NULL, &y));
    else
        GXT_OK(gx_filter(ctx, "x -> x > 0.5", 1, &x, NULL, &y));
    gx_array_desc d;
    GXT_OK(gx_array_describe(y, &d));
    GXT_OK(gx_array_to_host(y, o, (size_t)d.size * 4));
    float acc = 0;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        acc += h[i];
        bool bad = scan ? o[i] != acc : h[i] > 0.5f && (m >= d.size || o[m++] != h[i]);
        if (bad) {
            GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld at %lld", scan ? "scan" : "filter", (long long)n, (long long)i);
            break;
        }
    }
    if (!scan)
        GXT_EQ_I64(d.size, m);
    gx_array_release(x);
    gx_array_release(y);
    free(h);
    free(o);
}

/* The look-back kernels' status memory is reused from launch to launch (each launch
 * zeroes what the next one reads): sizes that grow and shrink, scans and filters in
 * turn, on the default stream and on a second one. */
GXT_TEST(lookback_status_reuse_across_sizes_and_streams)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t ns[] = {(1 << 20) + 7, 5000, 1, 3 * 4096 + 1, (1 << 22) + 3, 77777, 4096, (1 << 20) + 7, 2};
    gx_stream *st = NULL;
    GXT_OK(gx_stream_create(ctx, &st));
    for (int round = 0; round < 2; round++) {
        GXT_OK(gx_ctx_set_stream(ctx, round ? st : NULL));
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
            scan_or_filter_once(ctx, ns[i], (i + (size_t)round) % 2 == 0);
    }
    GXT_OK(gx_ctx_set_stream(ctx, NULL));
    GXT_OK(gx_stream_destroy(st));
}

/* ------------------------------------------------------------ bounded iota values */

/* A value of dtype t held in an int64_t: the low bits, sign- or zero-extended (u64 as
 * its bits).  The host reference computes in t's wrapping arithmetic like gx. */
static int64_t wrap(gx_dtype t, uint64_t u)
{
    switch (t) {
    case GX_I32: return (int32_t)u;
    case GX_U32: return (uint32_t)u;
    default: return (int64_t)u;
    }
}
static int64_t w_mul(gx_dtype t, int64_t a, int64_t b) { return wrap(t, (uint64_t)a * (uint64_t)b); }
static int64_t w_add(gx_dtype t, int64_t a, int64_t b) { return wrap(t, (uint64_t)a + (uint64_t)b); }
static int64_t w_div(gx_dtype t, int64_t a, int64_t b)
{
    return t == GX_U64 ? (int64_t)((uint64_t)a / (uint64_t)b) : a / b;
}
static int64_t w_mod(gx_dtype t, int64_t a, int64_t b)
{
    return t == GX_U64 ? (int64_t)((uint64_t)a % (uint64_t)b) : a % b;
}

/* Pipelines over iotas whose values lie in, cross or wrap past the bounds the kernels
 * are specialised on (0..2^b-1 and -2^b..2^b-1 for b = 8..63, see rp_seg_bounds):
 * narrowed integer code must give the values of the dtype's own arithmetic. */
GXT_TEST(range_iota_bounds_narrowed_code)
{
    gx_ctx *ctx = gxt_ctx();
    static const struct {
        gx_dtype t;
        double start, step;
        int64_t n;
    } cfg[] = {
        {GX_I64, 0, 1, 70000},          {GX_I64, -1000, 1, 3001},
        {GX_I64, 2147483548.0, 1, 200}, {GX_I64, 4294967196.0, 1, 200},
        {GX_I64, 10000, -3, 5000},      {GX_I64, 4611686018427383808.0, 1, 5000},
        {GX_I32, -50, 7, 1000},         {GX_I32, 2147483000.0, 1, 1000},
        {GX_U32, 4294966996.0, 1, 250}, {GX_U32, 4294966996.0, 1, 600},
        {GX_U64, 0, 1, 1000},           {GX_U64, 5, 2, 33000},
    };
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        gx_dtype t = cfg[c].t;
        int64_t n = cfg[c].n, st = t == GX_I64 || t == GX_I32 ? (int64_t)cfg[c].start : (int64_t)(uint64_t)cfg[c].start;
        int64_t *v = malloc(sizeof *v * (size_t)n), *got = malloc(sizeof *got * (size_t)n);
        GXT_CHECK(v && got);
        for (int64_t k = 0; v && k < n; k++)
            v[k] = wrap(t, (uint64_t)st + (uint64_t)k * (uint64_t)(int64_t)cfg[c].step);
        int64_t want_count = 0, want_sum = 0, want_enum = 0, want_len = 0;
        int64_t *want_vals = malloc(sizeof *want_vals * (size_t)n);
        for (int64_t k = 0; v && want_vals && k < n; k++) {
            want_count += w_mod(t, w_mod(t, w_mul(t, v[k], v[k]), 1000), 3) == 0;
            want_sum = w_add(t, want_sum, w_add(t, w_div(t, w_add(t, w_mul(t, v[k], 7), -3), 5), v[k] & 255));
            if (w_mod(t, v[k], 4) == 1)
                want_vals[want_len++] = w_add(t, w_div(t, v[k], 3), -w_mod(t, v[k], 3));
            if (k >= 3)
                want_enum += ((k - 3) * (k - 3)) % 13 + v[k] % 5;
        }
        gx_pipe *p = iota_pipe(ctx, t, n, cfg[c].start, cfg[c].step);
        GXT_OK(gx_pipe_map(p, "i -> (i * i) % 1000", NULL));
        GXT_OK(gx_pipe_filter(p, "v -> v % 3 == 0", NULL));
        int64_t cnt = -1;
        GXT_OK(gx_pipe_count(p, &cnt));
        GXT_EQ_I64(cnt, want_count);
        gx_pipe_destroy(p);

        p = iota_pipe(ctx, t, n, cfg[c].start, cfg[c].step);
        gx_scalar raw = {0};
        GXT_OK(gx_pipe_mapreduce(p, "i -> (i * 7 - 3) / 5 + (i & 255)", "a, b -> a + b", NULL, &raw));
        GXT_EQ_I64(wrap(t, raw.v.u), want_sum);
        GXT_OK(gx_pipe_filter(p, "i -> i % 4 == 1", NULL));
        GXT_OK(gx_pipe_map(p, "i -> i / 3 - i % 3", NULL));
        int64_t len = -1;
        size_t esz = gx_dtype_size(t);
        uint8_t *buf = malloc(esz * (size_t)n + 1);
        GXT_OK(gx_pipe_to_host(p, buf, esz * (size_t)n, &len));
        GXT_EQ_I64(len, want_len);
        int64_t bad = 0;
        for (int64_t k = 0; buf && want_vals && k < len && k < want_len; k++) {
            uint64_t e = 0;
            memcpy(&e, buf + (size_t)k * esz, esz);
            bad += wrap(t, e) != want_vals[k];
        }
        GXT_EQ_I64(bad, 0);
        gx_pipe_destroy(p);

        p = iota_pipe(ctx, t, n, cfg[c].start, cfg[c].step);
        GXT_OK(gx_pipe_drop(p, 3));
        GXT_OK(gx_pipe_enumerate(p));
        gx_scalar s = {0};
        GXT_OK(gx_pipe_mapreduce(p, "e, i -> e * e % 13 + i64(i) % 5", "a, b -> a + b", NULL, &s));
        GXT_EQ_I64(s.v.i, want_enum);
        gx_pipe_destroy(p);
        free(buf);
        free(v);
        free(got);
        free(want_vals);
    }
}

/* Warm calls take their lambdas and kernels from the memo's front (binary keys, a
 * stage added without compiling its lambda, which is compiled only when a body must
 * be generated): the same predicate with another constant value, on a strided view
 * (a new body after a cached stage), on f64, and the same mapreduce / map lambda on
 * other dtypes must each give the host's answer. */
static void warm_filter_check(gx_ctx *ctx, gx_array *x, const double *h, int64_t n, int64_t step, double t,
                              bool f64)
{
    gx_const c = GX_CONST("t", f64 ? GX_SCALAR_F64(t) : GX_SCALAR_F32((float)t));
    gx_filter_opts fo = {.consts = &c, .nconsts = 1};
    gx_array *r = NULL;
    GXT_OK(gx_filter(ctx, "x -> x > t", 1, &x, &fo, &r));
    int64_t want = 0;
    for (int64_t i = 0; i < n; i += step)
        want += f64 ? h[i] > t : (float)h[i] > (float)t;
    int64_t rn = -1;
    GXT_OK(gx_array_size(r, &rn));
    GXT_EQ_I64(rn, want);
    double *got = malloc((size_t)(want ? want : 1) * sizeof *got);
    float *gf = malloc((size_t)(want ? want : 1) * sizeof *gf);
    GXT_OK(gx_array_to_host(r, f64 ? (void *)got : (void *)gf, (size_t)want * (f64 ? 8 : 4)));
    int64_t k = 0;
    for (int64_t i = 0; i < n; i += step)
        if (f64 ? h[i] > t : (float)h[i] > (float)t) {
            GXT_CHECK(f64 ? got[k] == h[i] : gf[k] == (float)h[i]);
            k++;
        }
    free(got);
    free(gf);
    gx_array_release(r);
    GXT_CHECK(want > 0);
}

GXT_TEST(range_warm_calls_memo_front)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t n = 1031;
    double *h = malloc(n * sizeof *h);
    float *hf = malloc(n * sizeof *hf);
    for (int64_t i = 0; i < n; i++)
        h[i] = (double)((i * 7919) % 1000) / 1000.0, hf[i] = (float)h[i];
    gx_array *xf = NULL, *xd = NULL, *xs = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, hf, &xf));
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &xd));
    gx_slice every2 = {0, n, 2};
    GXT_OK(gx_array_view(xf, &every2, &xs));
    for (int rep = 0; rep < 3; rep++) {
        warm_filter_check(ctx, xf, h, n, 1, 0.5, false);
        warm_filter_check(ctx, xf, h, n, 1, 0.25, false); /* the value is read at run time */
        warm_filter_check(ctx, xs, h, n, 2, 0.5, false);  /* a strided view: another body */
        warm_filter_check(ctx, xd, h, n, 1, 0.75, true);  /* f64 */
    }
    /* mapreduce and map: one lambda text on f32 and f64 inputs. */
    gx_array *in_f[2] = {xf, xf}, *in_d[2] = {xd, xd};
    for (int rep = 0; rep < 3; rep++) {
        gx_scalar sf, sd;
        GXT_OK(gx_mapreduce(ctx, "x, y -> x * y + 1", "+", 2, in_f, NULL, &sf));
        GXT_OK(gx_mapreduce(ctx, "x, y -> x * y + 1", "+", 2, in_d, NULL, &sd));
        double wf = 0, wd = 0;
        for (int64_t i = 0; i < n; i++)
            wf += (double)(hf[i] * hf[i] + 1.0f), wd += h[i] * h[i] + 1;
        GXT_CHECK(sf.dtype == GX_F32 && sd.dtype == GX_F64);
        GXT_NEAR(sf.v.f, wf, 1e-4 * wf);
        GXT_NEAR(sd.v.f, wd, 1e-12 * wd);
        gx_array *mf = NULL, *md = NULL;
        GXT_OK(gx_map(ctx, "x -> x * 3", 1, &xs, NULL, &mf));
        GXT_OK(gx_map(ctx, "x -> x * 3", 1, &xd, NULL, &md));
        gx_array_desc df, dd;
        GXT_OK(gx_array_describe(mf, &df));
        GXT_OK(gx_array_describe(md, &dd));
        GXT_CHECK(df.dtype == GX_F32 && dd.dtype == GX_F64 && df.shape[0] == (n + 1) / 2 && dd.shape[0] == n);
        float *of = malloc((size_t)df.shape[0] * sizeof *of);
        double *od = malloc((size_t)n * sizeof *od);
        GXT_OK(gx_array_to_host(mf, of, (size_t)df.shape[0] * sizeof *of));
        GXT_OK(gx_array_to_host(md, od, (size_t)n * sizeof *od));
        for (int64_t i = 0; i < n; i++) {
            if (i % 2 == 0)
                GXT_CHECK(of[i / 2] == hf[i] * 3);
            GXT_CHECK(od[i] == h[i] * 3);
        }
        free(of);
        free(od);
        gx_array_release(mf);
        gx_array_release(md);
    }
    gx_array_release(xs);
    gx_array_release(xf);
    gx_array_release(xd);
    free(h);
    free(hf);
}
