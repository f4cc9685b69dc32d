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

/* ------------------------------------------------------------ the memo front */

/* Values h[off + i * step] (i < n) that pass "x > k" (less: "x < k"), as f64. */
static int64_t front_ref(const double *h, int64_t n, int64_t off, int64_t step, bool less, double k, double *out)
{
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = h[off + i * step];
        if (less ? v < k : v > k)
            out[m++] = v;
    }
    return m;
}

/* gx_filter's result (one array) against the reference, compared as f64. */
static void front_check(gx_array *got, gx_dtype dt, const double *want, int64_t m)
{
    gx_array_desc d0;
    GXT_OK(gx_array_describe(got, &d0));
    GXT_CHECK(d0.dtype == dt);
    GXT_EQ_I64(d0.size, m);
    gx_array *d = NULL;
    GXT_OK(gx_array_clone(got, GX_F64, &d));
    double buf[128];
    GXT_CHECK(m <= 128);
    if (m > 0)
        GXT_OK(gx_array_to_host(d, buf, sizeof buf));
    for (int64_t i = 0; i < m; i++)
        GXT_CHECK(buf[i] == want[i]);
    gx_array_release(d);
}

/* gx_filter_into's count (on the device) and the first m values of out against want
 * (rounded to out's dtype). */
static void front_check_into(gx_array *cnt, gx_array *out, const double *want, int64_t m)
{
    int64_t kept = -1;
    GXT_OK(gx_array_to_host(cnt, &kept, sizeof kept));
    GXT_EQ_I64(kept, m);
    gx_array_desc d0;
    GXT_OK(gx_array_describe(out, &d0));
    gx_array *d = NULL;
    GXT_OK(gx_array_clone(out, GX_F64, &d));
    double buf[128];
    GXT_CHECK(m <= 128 && d0.size <= 128);
    GXT_OK(gx_array_to_host(d, buf, (size_t)d0.size * sizeof(double)));
    for (int64_t i = 0; i < m; i++)
        GXT_CHECK(buf[i] == (d0.dtype == GX_F32 ? (double)(float)want[i] : want[i]));
    gx_array_release(d);
}

/* One call under each kind of change a warm gx_filter / gx_filter_into must see
 * (the memo front keys a whole compiled filter): dtype, size, strided / reversed /
 * offset views, predicate texts of one length, a constant's value and dtype under
 * one text, zipped inputs, new array against an existing one; every result against
 * a host reference, twice over (the second round all warm); then bad input. */
GXT_TEST(filter_memo_front_sees_every_change)
{
    gx_ctx *ctx = gxt_ctx();
    enum { N = 101 };
    double h[N], want[N];
    for (int i = 0; i < N; i++)
        h[i] = (double)((i * 5) % 11) - 5;
    int64_t n = N, n33 = 33;
    gx_array *x64 = NULL, *x32 = NULL, *xi = NULL, *small = NULL, *strided = NULL, *rev = NULL, *off = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &x64));
    GXT_OK(gx_array_clone(x64, GX_F32, &x32));
    GXT_OK(gx_array_clone(x64, GX_I32, &xi));
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n33, h + 7, &small));
    gx_slice s3 = {0, GX_END, 3}, sr = {-1, GX_END, -1}, so = {1, GX_END, 1};
    GXT_OK(gx_array_view(x32, &s3, &strided));
    GXT_OK(gx_array_view(x32, &sr, &rev));
    GXT_OK(gx_array_view(x32, &so, &off)); /* 4 bytes on: another vector width */
    gx_array *o64 = NULL, *o32 = NULL, *cnt = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &o64));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &o32));
    GXT_OK(gx_array_zeros(ctx, GX_I64, 0, NULL, &cnt));
    struct {
        gx_array *x;
        gx_dtype dt;
        int64_t n, off, step;
    } in[] = {/* the offset view (dense, vector width 1) before the strided ones of that width */
              {x64, GX_F64, N, 0, 1},     {x32, GX_F32, N, 0, 1},     {xi, GX_I32, N, 0, 1},
              {small, GX_F64, 33, 7, 1},  {off, GX_F32, N - 1, 1, 1}, {strided, GX_F32, 34, 0, 3},
              {rev, GX_F32, N, N - 1, -1}};
    const char *preds[] = {"x -> x > 1", "x -> x < 1"}; /* one length */
    for (int rep = 0; rep < 2; rep++) {
        for (size_t c = 0; c < sizeof in / sizeof in[0]; c++)
            for (int p = 0; p < 2; p++) {
                gx_array *x = in[c].x, *got = NULL;
                int64_t m = front_ref(h, in[c].n, in[c].off, in[c].step, p == 1, 1, want);
                GXT_OK(gx_filter(ctx, preds[p], 1, &x, NULL, &got));
                front_check(got, in[c].dt, want, m);
                gx_array_release(got);
            }
        /* a constant's value, then its dtype, under one text */
        gx_const ks[] = {GX_CONST("k", GX_SCALAR_F64(2)), GX_CONST("k", GX_SCALAR_F64(-2.5)),
                         GX_CONST("k", GX_SCALAR_I64(3))};
        double kv[] = {2, -2.5, 3};
        for (int c = 0; c < 3; c++) {
            gx_filter_opts fo = {0};
            fo.consts = &ks[c];
            fo.nconsts = 1;
            gx_array *got = NULL;
            int64_t m = front_ref(h, N, 0, 1, false, kv[c], want);
            GXT_OK(gx_filter(ctx, "x -> x > k", 1, &x64, &fo, &got));
            front_check(got, GX_F64, want, m);
            gx_array_release(got);
            /* the same into an existing array: the count on the device, the values in front */
            GXT_OK(gx_filter_into(ctx, "x -> x > k", 1, &x64, &fo, &o64, cnt));
            front_check_into(cnt, o64, want, m);
        }
        /* into, from a view (another vector width), after the new-array form of that text */
        for (int p = 0; p < 2; p++) {
            int64_t m = front_ref(h, N - 1, 1, 1, p == 1, 1, want);
            GXT_OK(gx_filter_into(ctx, preds[p], 1, &off, NULL, &o32, cnt));
            front_check_into(cnt, o32, want, m);
        }
        /* zipped: two inputs, then the first alone under a text of one length */
        gx_array *two[2] = {x64, x32}, *outs[2] = {NULL, NULL};
        GXT_OK(gx_filter(ctx, "x, y -> x > 1", 2, two, NULL, outs));
        int64_t m = front_ref(h, N, 0, 1, false, 1, want);
        front_check(outs[0], GX_F64, want, m);
        front_check(outs[1], GX_F32, want, m);
        gx_array_release(outs[0]);
        gx_array_release(outs[1]);
        /* bad input after warm calls: each refused as on a cold one */
        gx_array *got = NULL;
        GXT_STATUS(gx_filter_into(ctx, preds[0], 1, &x64, NULL, &o32, cnt), GX_ERR_DTYPE);
        GXT_MSG_HAS("out 1 is f32 but input 1 is f64");
        GXT_STATUS(gx_filter(ctx, NULL, 1, &x64, NULL, &got), GX_ERR_INVALID_ARGUMENT);
        GXT_CHECK(got == NULL);
        GXT_STATUS(gx_filter(ctx, "x -> x > 1", 2, two, NULL, outs), GX_ERR_TYPE); /* warm on one input */
        GXT_MSG_HAS("the lambda takes 1 parameter, but 2 arguments are given");
        GXT_CHECK(outs[0] == NULL && outs[1] == NULL);
        gx_array *bad[2] = {x64, small};
        GXT_STATUS(gx_filter(ctx, "x, y -> x > 1", 2, bad, NULL, outs), GX_ERR_SHAPE);
        GXT_MSG_HAS("input 2 has shape (33,) but input 1 has (101,)");
    }
    gx_array *all[] = {x64, x32, xi, small, strided, rev, off, o64, o32, cnt};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
}
