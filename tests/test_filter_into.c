/* test_filter_into.c -- gx_filter_into: selected values into caller arrays with the
 * count on the device.  Every accepted dtype at edge sizes against a host reference;
 * a capacity below the count (true count, only capacity values written, memory past
 * the capacity untouched); strided / negative-stride / zipped / N-d inputs; inside a
 * graph recording, replayed with new contents; bad input. */
#include "gx_test.h"

#include <stdlib.h>
#include <string.h>

#define PRED "x -> i64(x) % 3 == 1"

/* Input values in [0, 100] (bool: 0/1), the same for every dtype. */
static int64_t val(int64_t i, int64_t seed) { return (i * 7919 + seed * 31 + 5) % 101; }

static gx_status make_input(gx_ctx *ctx, gx_dtype dt, int64_t n, int64_t seed, gx_array **out)
{
    int64_t *h = malloc((size_t)(n + 1) * 8);
    if (!h)
        return GX_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < n; i++)
        h[i] = dt == GX_BOOL ? val(i, seed) % 2 : val(i, seed);
    gx_array *a = NULL;
    gx_status s = gx_array_from_host(ctx, GX_I64, 1, &n, h, &a);
    free(h);
    if (s == GX_OK)
        s = gx_array_clone(a, dt, out);
    gx_array_release(a);
    return s;
}

/* Reference: the values of PRED's selection from host values v[0..n). */
static int64_t ref_select(const int64_t *v, int64_t n, int64_t *sel)
{
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (v[i] % 3 == 1)
            sel[m++] = v[i];
    return m;
}

/* out's first k values (as f64) and count against the reference. */
static void check_result(gx_array *out, gx_array *count, const int64_t *want, int64_t nwant, int64_t cap,
                         const char *what)
{
    int64_t c = -1;
    GXT_OK(gx_array_to_host(count, &c, 8));
    if (c != nwant)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s: count %lld, want %lld", what, (long long)c, (long long)nwant);
    int64_t k = nwant < cap ? nwant : cap;
    if (cap == 0)
        return;
    gx_array *o64 = NULL;
    GXT_OK(gx_array_clone(out, GX_F64, &o64));
    double *h = malloc((size_t)cap * 8);
    GXT_OK(gx_array_to_host(o64, h, (size_t)cap * 8));
    for (int64_t i = 0; i < k; i++)
        if (h[i] != (double)want[i]) {
            GXT_FAIL_AT(__FILE__, __LINE__, "%s: out[%lld] = %g, want %lld", what, (long long)i, h[i],
                        (long long)want[i]);
            break;
        }
    free(h);
    gx_array_release(o64);
}

static const int64_t lens[] = {0, 1, 31, 32, 33, 257, 4099, 100003};
#define NLENS ((int)(sizeof lens / sizeof lens[0]))

GXT_TEST(filter_into_all_dtypes_and_sizes)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_BOOL, GX_I8, GX_I16, GX_I32, GX_I64, GX_U8, GX_U16, GX_U32, GX_U64, GX_F32, GX_F64};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (int li = 0; li < NLENS; li++) {
            int64_t n = lens[li];
            int64_t *v = malloc((size_t)(n + 1) * 8), *sel = malloc((size_t)(n + 1) * 8);
            for (int64_t i = 0; i < n; i++)
                v[i] = dts[d] == GX_BOOL ? val(i, 1) % 2 : val(i, 1);
            int64_t m = ref_select(v, n, sel);
            gx_array *x = NULL, *o = NULL, *c = NULL;
            GXT_OK(make_input(ctx, dts[d], n, 1, &x));
            GXT_OK(gx_array_zeros(ctx, dts[d], 1, &n, &o));
            GXT_OK(gx_array_zeros(ctx, GX_I64, 0, NULL, &c));
            GXT_OK(gx_array_fill_f64(c, -7)); /* the call must overwrite it */
            GXT_OK(gx_filter_into(ctx, PRED, 1, &x, NULL, &o, c));
            char what[64];
            snprintf(what, sizeof what, "%s n=%lld", gx_dtype_name(dts[d]), (long long)n);
            check_result(o, c, sel, m, n, what);
            gx_array_release(x);
            gx_array_release(o);
            gx_array_release(c);
            free(v);
            free(sel);
        }
}

/* A capacity below the count: the true count, the first cap values, and the memory
 * past the capacity (the rest of a bigger array) untouched. */
GXT_TEST(filter_into_capacity_too_small)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t n = 100003;
    const int64_t caps[] = {0, 1, 33, 1000, 33000};
    int64_t *v = malloc((size_t)n * 8), *sel = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        v[i] = val(i, 2);
    int64_t m = ref_select(v, n, sel);
    GXT_CHECK(m > caps[4]);
    for (int k = 0; k < 5; k++) {
        int64_t cap = caps[k], big = cap + 64;
        gx_array *x = NULL, *buf = NULL, *o = NULL, *c = NULL;
        GXT_OK(make_input(ctx, GX_I32, n, 2, &x));
        GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &big, &buf));
        GXT_OK(gx_array_fill_f64(buf, -1));
        gx_slice sl = {0, cap, 1};
        GXT_OK(gx_array_view(buf, &sl, &o));
        GXT_OK(gx_array_zeros(ctx, GX_I64, 0, NULL, &c));
        GXT_OK(gx_filter_into(ctx, PRED, 1, &x, NULL, &o, c));
        check_result(o, c, sel, m, cap, "capacity");
        int32_t *h = malloc((size_t)big * 4);
        GXT_OK(gx_array_to_host(buf, h, (size_t)big * 4));
        for (int64_t i = cap; i < big; i++)
            if (h[i] != -1) {
                GXT_FAIL_AT(__FILE__, __LINE__, "cap %lld: buf[%lld] = %d written past the capacity", (long long)cap,
                            (long long)i, h[i]);
                break;
            }
        free(h);
        gx_array_release(x);
        gx_array_release(buf);
        gx_array_release(o);
        gx_array_release(c);
    }
    free(v);
    free(sel);
}

/* Views as inputs: a stride-3 view, a negative-stride view, two zipped inputs (the
 * predicate on both), an N-d input (row-major order). */
GXT_TEST(filter_into_views_and_zipped)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t n = 3 * 1001;
    int64_t *v = malloc((size_t)n * 8), *w = malloc((size_t)n * 8), *sel = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        v[i] = val(i, 3);
    gx_array *x = NULL;
    GXT_OK(make_input(ctx, GX_F64, n, 3, &x));
    gx_slice strided = {1, GX_END, 3}, rev = {-1, GX_END, -1};
    gx_slice *sls[] = {&strided, &rev};
    for (int k = 0; k < 2; k++) {
        gx_array *xv = NULL, *o = NULL, *c = NULL;
        GXT_OK(gx_array_view(x, sls[k], &xv));
        int64_t len = 0;
        for (int64_t i = k == 0 ? 1 : n - 1; k == 0 ? i < n : i >= 0; i += k == 0 ? 3 : -1)
            w[len++] = v[i];
        int64_t m = ref_select(w, len, sel);
        GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &len, &o));
        GXT_OK(gx_array_zeros(ctx, GX_I64, 0, NULL, &c));
        GXT_OK(gx_filter_into(ctx, PRED, 1, &xv, NULL, &o, c));
        check_result(o, c, sel, m, len, k == 0 ? "stride 3" : "stride -1");
        gx_array_release(xv);
        gx_array_release(o);
        gx_array_release(c);
    }
    /* zipped: keep x where x % 3 == 1 and y (= the reversed x) > 50; both outputs */
    gx_array *xr = NULL, *yc = NULL, *o[2] = {NULL, NULL}, *c = NULL;
    GXT_OK(gx_array_view(x, &rev, &xr));
    GXT_OK(gx_array_clone(xr, GX_I32, &yc));
    int64_t m = 0;
    int64_t *sy = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        if (v[i] % 3 == 1 && v[n - 1 - i] > 50) {
            sel[m] = v[i];
            sy[m++] = v[n - 1 - i];
        }
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &o[0]));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &o[1]));
    GXT_OK(gx_array_zeros(ctx, GX_I64, 1, (int64_t[]){1}, &c));
    GXT_OK(gx_filter_into(ctx, "x, y -> i64(x) % 3 == 1 && y > 50", 2, (gx_array *[]){x, yc}, NULL, o, c));
    check_result(o[0], c, sel, m, n, "zipped x");
    check_result(o[1], c, sy, m, n, "zipped y");
    /* N-d: a (3, 1001) transpose-free reshape is the same flat order */
    gx_array *x2 = NULL, *o2 = NULL, *c2 = NULL;
    GXT_OK(gx_array_reshape(x, 2, (int64_t[]){3, 1001}, &x2));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &o2));
    GXT_OK(gx_array_zeros(ctx, GX_I64, 0, NULL, &c2));
    GXT_OK(gx_filter_into(ctx, PRED, 1, &x2, NULL, &o2, c2));
    int64_t m2 = ref_select(v, n, sel);
    check_result(o2, c2, sel, m2, n, "2-d");
    gx_array *all[] = {x, xr, yc, o[0], o[1], c, x2, o2, c2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
    free(v);
    free(w);
    free(sel);
    free(sy);
}

/* Recorded in a graph behind a map, replayed with new input contents each time. */
GXT_TEST(filter_into_in_graph_replay)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t n = 4099;
    gx_array *x = NULL, *y = NULL, *o = NULL, *c = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_I64, 1, &n, &x));
    GXT_OK(gx_array_zeros(ctx, GX_I64, 1, &n, &y));
    GXT_OK(gx_array_zeros(ctx, GX_I64, 1, &n, &o));
    GXT_OK(gx_array_zeros(ctx, GX_I64, 0, NULL, &c));
    GXT_OK(gx_graph_begin(ctx));
    GXT_OK(gx_map_into(ctx, "x -> x + 1", 1, &x, NULL, y));
    GXT_OK(gx_filter_into(ctx, PRED, 1, &y, NULL, &o, c));
    gx_graph *g = NULL;
    GXT_OK(gx_graph_end(ctx, &g));
    int64_t *v = malloc((size_t)n * 8), *w = malloc((size_t)n * 8), *sel = malloc((size_t)n * 8);
    for (int round = 0; round < 3; round++) {
        for (int64_t i = 0; i < n; i++) {
            v[i] = val(i, 10 + round);
            w[i] = v[i] + 1;
        }
        GXT_OK(gx_array_from_host_into(v, (size_t)n * 8, x));
        GXT_OK(gx_graph_launch(g));
        int64_t m = ref_select(w, n, sel);
        check_result(o, c, sel, m, n, "graph replay");
    }
    GXT_OK(gx_graph_destroy(g));
    gx_array *all[] = {x, y, o, c};
    for (size_t i = 0; i < 4; i++)
        gx_array_release(all[i]);
    free(v);
    free(w);
    free(sel);
}

GXT_TEST(filter_into_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 10;
    gx_array *x = NULL, *o = NULL, *o2 = NULL, *of = NULL, *c = NULL, *cf = NULL, *c2 = NULL, *h = NULL, *m = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I32, n, 0, 1, &x));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &o));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, (int64_t[]){5}, &o2));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &of));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 2, (int64_t[]){2, 5}, &m));
    GXT_OK(gx_array_zeros(ctx, GX_I64, 0, NULL, &c));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 0, NULL, &cf));
    GXT_OK(gx_array_zeros(ctx, GX_I64, 1, (int64_t[]){2}, &c2));
    GXT_OK(gx_array_zeros(ctx, GX_F16, 1, &n, &h));
    GXT_STATUS(gx_filter_into(ctx, PRED, 1, &x, NULL, NULL, c), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("out is NULL");
    GXT_STATUS(gx_filter_into(ctx, PRED, 1, &x, NULL, &o, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_filter_into(ctx, PRED, 1, &x, NULL, &o, cf), GX_ERR_DTYPE);
    GXT_MSG_HAS("i64");
    GXT_STATUS(gx_filter_into(ctx, PRED, 1, &x, NULL, &o, c2), GX_ERR_DTYPE);
    GXT_STATUS(gx_filter_into(ctx, PRED, 1, &x, NULL, &of, c), GX_ERR_DTYPE);
    GXT_MSG_HAS("out 1 is f32");
    GXT_STATUS(gx_filter_into(ctx, PRED, 1, &x, NULL, &m, c), GX_ERR_SHAPE);
    GXT_MSG_HAS("(2, 5)");
    GXT_STATUS(gx_filter_into(ctx, "x, y -> x > y", 2, (gx_array *[]){x, x}, NULL, (gx_array *[]){o, o2}, c),
               GX_ERR_SHAPE);
    GXT_MSG_HAS("one capacity");
    GXT_STATUS(gx_filter_into(ctx, "x -> x > 1", 1, &h, NULL, &h, c), GX_ERR_DTYPE);
    GXT_MSG_HAS("f16");
    GXT_STATUS(gx_filter_into(ctx, "x -> x +", 1, &x, NULL, &o, c), GX_ERR_SYNTAX);
    GXT_STATUS(gx_filter_into(ctx, PRED, 0, &x, NULL, &o, c), GX_ERR_INVALID_ARGUMENT);
    gx_array *all[] = {x, o, o2, of, m, c, cf, c2, h};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
}
