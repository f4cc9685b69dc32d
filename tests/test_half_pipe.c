/* test_half_pipe.c -- pipelines over f16 / bf16 arrays: values read as f32, maps typed
 * as in gx_map (a half stays a half), collect rounding once to the half dtype,
 * reductions, scans, min/max in f32; dense and reversed (negative stride) sources. */
#include "gx_test.h"

static uint16_t to_half(gx_dtype t, double v) { return t == GX_F16 ? gx_f64_to_f16(v) : gx_f64_to_bf16(v); }
static double from_half(gx_dtype t, uint16_t h) { return t == GX_F16 ? gx_f16_to_f32(h) : gx_bf16_to_f32(h); }

/* x (n halves, values in [-1, 1)) as a dense array or, rev, a reversed view of a
 * dense copy holding them backwards; vals receives the logical values. */
static void half_src(gx_dtype t, int64_t n, bool rev, double *vals, gx_array **store, gx_array **x)
{
    uint16_t *h = malloc((size_t)n * 2 + 2);
    for (int64_t i = 0; i < n; i++)
        h[i] = to_half(t, gxt_rand01() * 2 - 1);
    for (int64_t i = 0; i < n; i++)
        vals[i] = from_half(t, h[rev ? n - 1 - i : i]);
    GXT_OK(gx_array_from_host(gxt_ctx(), t, 1, &n, h, store));
    free(h);
    *x = *store;
    gx_slice sl = {-1, GX_END, -1};
    if (rev)
        GXT_OK(gx_array_view(*store, &sl, x));
}

/* map(x -> x * 3) | filter(x > 0.25) | collect: a half array of the rounded values. */
static void check_collect(gx_dtype t, gx_array *x, const double *vals, int64_t n)
{
    gx_pipe *p = NULL;
    gx_array *out = NULL;
    GXT_OK(gx_pipe_from_arrays(gxt_ctx(), 1, &x, &p));
    GXT_OK(gx_pipe_map(p, "x -> x * 3", NULL));
    gx_dtype dt;
    GXT_OK(gx_pipe_dtype(p, 0, &dt));
    GXT_CHECK(dt == t); /* as gx_map types it: a half with an integer stays a half */
    GXT_OK(gx_pipe_filter(p, "x -> x > 0.25f", NULL));
    GXT_OK(gx_pipe_collect(p, 1, &out));
    uint16_t *want = malloc((size_t)n * 2 + 2), *got = malloc((size_t)n * 2 + 2);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        float v = (float)vals[i] * 3.0f; /* exact: 11 significant bits times 3 */
        if (v > 0.25f)
            want[m++] = to_half(t, v);
    }
    gx_array_desc d;
    GXT_OK(gx_array_describe(out, &d));
    GXT_CHECK(d.dtype == t && d.size == m);
    if (m > 0 && d.size == m)
        GXT_OK(gx_array_to_host(out, got, (size_t)m * 2));
    for (int64_t k = 0; k < m && d.size == m; k++)
        if (got[k] != want[k]) {
            GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld k=%lld: %04x vs %04x", gx_dtype_name(t), (long long)n,
                        (long long)k, got[k], want[k]);
            break;
        }
    free(want), free(got);
    gx_array_release(out);
    gx_pipe_destroy(p);
}

/* reduce(+), count, min, max, argmax and scan(+) in f32 against f64 host values. */
static void check_terminals(gx_array *x, const double *vals, int64_t n)
{
    gx_ctx *ctx = gxt_ctx();
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &x, &p));
    double sum = 0, abs = 0, mx = -2, mn = 2;
    int64_t pos = 0, amax = 0;
    for (int64_t i = 0; i < n; i++) {
        sum += vals[i], abs += fabs(vals[i]);
        pos += vals[i] > 0;
        if (vals[i] > mx)
            mx = vals[i], amax = i;
        mn = vals[i] < mn ? vals[i] : mn;
    }
    gx_scalar r;
    GXT_OK(gx_pipe_reduce(p, "+", NULL, &r));
    GXT_CHECK(r.dtype == GX_F32);
    GXT_CHECK(fabs(r.v.f - sum) <= (double)(n + 2) * 0x1p-24 * abs); /* f32 accumulation */
    if (n > 0) {
        GXT_OK(gx_pipe_max(p, &r));
        GXT_CHECK(r.dtype == GX_F32 && r.v.f == mx);
        GXT_OK(gx_pipe_min(p, &r));
        GXT_CHECK(r.v.f == mn);
        int64_t am = -1;
        GXT_OK(gx_pipe_argmax(p, &am));
        GXT_EQ_I64(am, amax);
    }
    gx_array *s = NULL;
    GXT_OK(gx_pipe_scan(p, "+", NULL, &s));
    gx_array_desc d;
    GXT_OK(gx_array_describe(s, &d));
    GXT_CHECK(d.dtype == GX_F32 && d.size == n);
    float *sv = malloc((size_t)n * 4 + 4);
    if (n > 0)
        GXT_OK(gx_array_to_host(s, sv, (size_t)n * 4));
    double run = 0, ra = 0;
    for (int64_t i = 0; i < n; i++) {
        run += vals[i], ra += fabs(vals[i]);
        if (!(fabs(sv[i] - run) <= (double)(i + 3) * 0x1p-24 * ra)) {
            GXT_FAIL_AT(__FILE__, __LINE__, "scan n=%lld i=%lld: %g vs %g", (long long)n, (long long)i, sv[i], run);
            break;
        }
    }
    free(sv);
    gx_array_release(s);
    GXT_OK(gx_pipe_filter(p, "x -> x > 0", NULL));
    int64_t c = -1;
    GXT_OK(gx_pipe_count(p, &c));
    GXT_EQ_I64(c, pos);
    gx_pipe_destroy(p);
}

GXT_TEST(half_pipe_values)
{
    gx_dtype ts[2] = {GX_F16, GX_BF16};
    const int64_t sizes[] = {0, 1, 31, 32, 33, 1001, 70000};
    for (int ti = 0; ti < 2; ti++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int rev = 0; rev < 2; rev++) {
                int64_t n = sizes[z];
                double *vals = malloc((size_t)n * 8 + 8);
                gx_array *store = NULL, *x = NULL;
                half_src(ts[ti], n, rev, vals, &store, &x);
                check_collect(ts[ti], x, vals, n);
                check_terminals(x, vals, n);
                if (x != store)
                    gx_array_release(x);
                gx_array_release(store);
                free(vals);
            }
}

/* A half zipped with an i32 array: each component keeps its dtype in collect; a map
 * mixing the half with f32 gives f32 (docs/LAMBDAS.md's table). */
GXT_TEST(half_pipe_zip_and_types)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 37;
    double vals[37];
    int32_t idx[37], gi[37];
    uint16_t got[37], want2[5];
    for (int64_t i = 0; i < n; i++)
        idx[i] = (int32_t)(i * 7 - 100);
    gx_array *store = NULL, *x = NULL, *ia = NULL;
    half_src(GX_BF16, n, false, vals, &store, &x);
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, idx, &ia));
    gx_array *in[2] = {x, ia}, *out[2] = {NULL, NULL};
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 2, in, &p));
    GXT_OK(gx_pipe_filter(p, "x, i -> i > 0", NULL));
    GXT_OK(gx_pipe_collect(p, 2, out));
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (idx[i] > 0)
            m++;
    gx_array_desc d;
    GXT_OK(gx_array_describe(out[0], &d));
    GXT_CHECK(d.dtype == GX_BF16 && d.size == m);
    GXT_OK(gx_array_to_host(out[0], got, (size_t)m * 2));
    GXT_OK(gx_array_to_host(out[1], gi, (size_t)m * 4));
    for (int64_t i = 0, k = 0; i < n; i++)
        if (idx[i] > 0) {
            GXT_CHECK(from_half(GX_BF16, got[k]) == vals[i] && gi[k] == idx[i]);
            k++;
        }
    gx_array_release(out[0]), gx_array_release(out[1]);
    gx_pipe_destroy(p);
    gx_const c = {"s", {GX_F32, {.f = 0.5}}};
    gx_pipe_opts o = {0};
    o.consts = &c;
    o.nconsts = 1;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &x, &p));
    GXT_OK(gx_pipe_map(p, "x -> x * s", &o));
    gx_dtype dt;
    GXT_OK(gx_pipe_dtype(p, 0, &dt));
    GXT_CHECK(dt == GX_F32);
    gx_pipe_destroy(p);
    /* filter | take | map: the filtered halves are stored between segments (exactly) */
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &x, &p));
    GXT_OK(gx_pipe_filter(p, "x -> x > 0", NULL));
    GXT_OK(gx_pipe_take(p, 5));
    GXT_OK(gx_pipe_map(p, "x -> x * 2", NULL));
    gx_array *t5 = NULL;
    GXT_OK(gx_pipe_collect(p, 1, &t5));
    GXT_OK(gx_array_describe(t5, &d));
    int64_t k = 0;
    for (int64_t i = 0; i < n && k < 5; i++)
        if (vals[i] > 0)
            want2[k++] = to_half(GX_BF16, vals[i] * 2);
    GXT_CHECK(d.dtype == GX_BF16 && d.size == k);
    if (d.size == k && k > 0) {
        GXT_OK(gx_array_to_host(t5, got, (size_t)k * 2));
        GXT_CHECK(memcmp(got, want2, (size_t)k * 2) == 0);
    }
    gx_array_release(t5);
    gx_pipe_destroy(p);
    gx_array_release(ia), gx_array_release(store);
}

/* Sources a pipeline refuses: an N-d strided half view (as for any dtype). */
GXT_TEST(half_pipe_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t sh[2] = {4, 6};
    gx_array *a = NULL, *v = NULL;
    gx_pipe *p = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F16, 2, sh, &a));
    gx_slice sl[2] = {{0, GX_END, 1}, {0, GX_END, 2}};
    GXT_OK(gx_array_view(a, sl, &v));
    GXT_STATUS(gx_pipe_from_arrays(ctx, 1, &v, &p), GX_ERR_SHAPE);
    GXT_MSG_HAS("gx_array_clone");
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &a, &p));
    gx_pipe_opts o = {0};
    o.dtype = GX_F16; /* a half accumulator: f32 accumulation, the result as f32 */
    gx_scalar r;
    GXT_OK(gx_pipe_reduce(p, "+", &o, &r));
    GXT_CHECK(r.dtype == GX_F32 && r.v.f == 0);
    gx_const hc = {"h", {GX_F16, {.f = 0.5}}}; /* half constants: not in pipelines (use f32) */
    gx_pipe_opts co = {0};
    co.consts = &hc;
    co.nconsts = 1;
    GXT_STATUS(gx_pipe_map(p, "x -> x * h", &co), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("constant 0");
    gx_pipe_destroy(p);
    gx_array_release(v), gx_array_release(a);
}
