/* test_index.c -- gx_take, gx_put, gx_scatter_reduce, gx_mask_assign / gx_mask_copy,
 * gx_where (include/gx/index.h) against references computed here with plain loops. */
#include "gx_test.h"

static const gx_dtype all_dts[] = {GX_BOOL, GX_I8,  GX_I16, GX_I32, GX_I64, GX_U8,  GX_U16,
                                   GX_U32,  GX_U64, GX_F32, GX_F64, GX_C64, GX_C128};
static const gx_dtype idx_dts[] = {GX_I8, GX_I16, GX_I32, GX_I64, GX_U8, GX_U16, GX_U32, GX_U64};
#define NALL (int)(sizeof all_dts / sizeof all_dts[0])
#define NIDX (int)(sizeof idx_dts / sizeof idx_dts[0])

static bool is_signed_idx(gx_dtype t) { return t == GX_I8 || t == GX_I16 || t == GX_I32 || t == GX_I64; }

/* Random valid elements of t (bool 0/1; any bits otherwise: take/put only copy). */
static void rand_bytes(gx_dtype t, unsigned char *p, int64_t n)
{
    size_t esz = gx_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r[2] = {gxt_rand_u64(), gxt_rand_u64()};
        if (t == GX_BOOL)
            r[0] &= 1;
        memcpy(p + (size_t)i * esz, r, esz);
    }
}

/* Index values for an axis of n: in [-n, n) for signed dtypes, [0, n) unsigned. */
static void rand_idx(gx_dtype t, int64_t *v, int64_t m, int64_t n)
{
    for (int64_t j = 0; j < m; j++) {
        uint64_t r = gxt_rand_u64();
        v[j] = is_signed_idx(t) ? (int64_t)(r % (uint64_t)(2 * n)) - n : (int64_t)(r % (uint64_t)n);
    }
}

/* An index array of dtype t holding v (exact for these small values). */
static gx_array *mk_idx(gx_ctx *ctx, gx_dtype t, int nd, const int64_t *shape, const int64_t *v)
{
    gx_array *a = NULL, *b = NULL;
    if (gx_array_from_host(ctx, GX_I64, nd, shape, v, &a) != GX_OK)
        return NULL;
    gx_status s = gx_array_clone(a, t, &b);
    gx_array_release(a);
    return s == GX_OK ? b : NULL;
}

/* An array of t from doubles (C conversion; complex: imaginary part 0.5*v). */
static gx_array *mk_num(gx_ctx *ctx, gx_dtype t, int nd, const int64_t *shape, const double *v, int64_t n)
{
    gx_array *a = NULL, *b = NULL;
    if (t == GX_C64 || t == GX_C128) {
        double *z = malloc(sizeof(double) * 2 * (size_t)(n ? n : 1));
        for (int64_t i = 0; i < n; i++)
            z[2 * i] = v[i], z[2 * i + 1] = 0.5 * v[i];
        gx_status s = gx_array_from_host(ctx, GX_C128, nd, shape, z, &a);
        free(z);
        if (s != GX_OK)
            return NULL;
    } else if (gx_array_from_host(ctx, GX_F64, nd, shape, v, &a) != GX_OK)
        return NULL;
    gx_status s = gx_array_clone(a, t, &b);
    gx_array_release(a);
    return s == GX_OK ? b : NULL;
}

/* The array's values as doubles (complex: re, im pairs). */
static void rd_num(gx_array *a, double *v, int64_t n)
{
    gx_array_desc d;
    gx_array_describe(a, &d);
    gx_array *b = NULL;
    bool c = d.dtype == GX_C64 || d.dtype == GX_C128;
    if (gx_array_clone(a, c ? GX_C128 : GX_F64, &b) != GX_OK)
        return;
    gx_array_to_host(b, v, sizeof(double) * (size_t)n * (c ? 2 : 1));
    gx_array_release(b);
}

static int64_t norm(int64_t i, int64_t n) { return i < 0 ? i + n : i; }

/* ------------------------------------------------------------ take */

/* np.take(x, idx) flat for one (x dtype, idx dtype, sizes). */
static void take_case(gx_ctx *ctx, gx_dtype xt, gx_dtype it, int64_t n, int64_t m, int checked)
{
    size_t esz = gx_dtype_size(xt);
    unsigned char *xh = malloc(esz * (size_t)n + 1), *got = malloc(esz * (size_t)m + 1);
    int64_t *iv = malloc(sizeof(int64_t) * (size_t)m + 8);
    rand_bytes(xt, xh, n);
    rand_idx(it, iv, m, n);
    gx_array *x = NULL, *idx = mk_idx(ctx, it, 1, &m, iv), *out = NULL;
    GXT_CHECK(idx != NULL);
    gx_status s = gx_array_from_host(ctx, xt, 1, &n, xh, &x);
    GXT_CHECK(s == GX_OK);
    gx_index_opts o = {.unchecked = !checked};
    s = gx_take(ctx, x, idx, 0, &o, &out);
    if (s != GX_OK)
        GXT_FAIL_AT(__FILE__, __LINE__, "take %s[%s] n=%lld m=%lld: %s", gx_dtype_name(xt), gx_dtype_name(it),
                    (long long)n, (long long)m, gx_last_error());
    else {
        gx_array_to_host(out, got, esz * (size_t)m);
        int bad = 0;
        for (int64_t j = 0; j < m && bad < 3; j++)
            if (memcmp(got + (size_t)j * esz, xh + (size_t)norm(iv[j], n) * esz, esz) != 0) {
                GXT_FAIL_AT(__FILE__, __LINE__, "take %s[%s] m=%lld: element %lld differs", gx_dtype_name(xt),
                            gx_dtype_name(it), (long long)m, (long long)j);
                bad++;
            }
    }
    gx_array_release(x);
    gx_array_release(idx);
    gx_array_release(out);
    free(xh);
    free(got);
    free(iv);
}

GXT_TEST(index_take_every_x_dtype)
{
    for (int k = 0; k < NALL; k++)
        take_case(gxt_ctx(), all_dts[k], GX_I64, 100, 1007, 1);
}

GXT_TEST(index_take_every_idx_dtype)
{
    for (int k = 0; k < NIDX; k++)
        take_case(gxt_ctx(), GX_F32, idx_dts[k], 100, 1007, 1);
}

GXT_TEST(index_take_sizes_and_unchecked)
{
    static const int64_t ms[] = {0, 1, 2, 3, 31, 32, 33, 1000 + 7};
    for (int k = 0; k < 8; k++) {
        take_case(gxt_ctx(), GX_F32, GX_I64, 57, ms[k], 1);
        take_case(gxt_ctx(), GX_F64, GX_I32, 1, ms[k], 1);
        take_case(gxt_ctx(), GX_U8, GX_I16, 33, ms[k], 0); /* unchecked: valid input works */
    }
}

/* Along an axis of a 3-d x, with a 2-d idx: shape x[:axis] + idx + x[axis+1:]. */
GXT_TEST(index_take_axis)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t xs[3] = {4, 5, 6}, is[2] = {2, 3}, nx = 120;
    double xv[120];
    for (int i = 0; i < nx; i++)
        xv[i] = i * 1.5 - 7;
    gx_array *x = mk_num(ctx, GX_F64, 3, xs, xv, nx);
    for (int axis = -1; axis < 3; axis++) {
        int ax = axis < 0 ? 2 : axis;
        int64_t iv[6], n = xs[ax];
        rand_idx(GX_I32, iv, 6, n);
        gx_array *idx = mk_idx(ctx, GX_I32, 2, is, iv), *out = NULL;
        GXT_OK(gx_take(ctx, x, idx, axis, NULL, &out));
        gx_array_desc d;
        gx_array_describe(out, &d);
        GXT_EQ_I64(d.ndim, 4);
        int64_t want_shape[4], k = 0;
        for (int q = 0; q < 3; q++) {
            if (q == ax) {
                want_shape[k++] = 2;
                want_shape[k++] = 3;
            } else
                want_shape[k++] = xs[q];
        }
        for (int q = 0; q < 4; q++)
            GXT_EQ_I64(d.shape[q], want_shape[q]);
        double got[256];
        GXT_CHECK(d.size <= 256);
        rd_num(out, got, d.size);
        /* reference: walk the result's index space */
        int64_t pos = 0;
        for (int64_t a0 = 0; a0 < (ax == 0 ? 6 : xs[0]); a0++)
            for (int64_t a1 = 0; a1 < (ax == 1 ? 6 : xs[1]); a1++)
                for (int64_t a2 = 0; a2 < (ax == 2 ? 6 : xs[2]); a2++, pos++) {
                    int64_t c[3] = {a0, a1, a2};
                    c[ax] = norm(iv[c[ax]], n);
                    GXT_CHECK(got[pos] == xv[(c[0] * 5 + c[1]) * 6 + c[2]]);
                }
        GXT_EQ_I64(pos, d.size);
        gx_array_release(idx);
        gx_array_release(out);
    }
    gx_array_release(x);
}

/* Views as x and idx (negative strides), and take_into a strided view with conversion. */
GXT_TEST(index_take_views_and_into)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 40, m = 33;
    double xv[40];
    for (int i = 0; i < n; i++)
        xv[i] = i * i - 3;
    gx_array *x = mk_num(ctx, GX_F32, 1, &n, xv, n), *xr = NULL;
    gx_slice rev = {GX_END, GX_END, -1};
    rev.start = -1;
    GXT_OK(gx_array_view(x, &rev, &xr)); /* xr[i] = x[39 - i] */
    int64_t iv[66], m2 = 2 * m;
    rand_idx(GX_I64, iv, m2, n);
    gx_array *ib = mk_idx(ctx, GX_I64, 1, &m2, iv), *iview = NULL;
    gx_slice ev = {0, GX_END, 2};
    GXT_OK(gx_array_view(ib, &ev, &iview)); /* iview[j] = iv[2j] */
    int64_t os = 2 * m;
    gx_array *ob = NULL, *oview = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &os, &ob));
    gx_slice ov = {1, GX_END, 2};
    GXT_OK(gx_array_view(ob, &ov, &oview));
    GXT_OK(gx_take_into(ctx, xr, iview, GX_ALL_AXES, NULL, oview));
    double got[66];
    rd_num(ob, got, os);
    for (int64_t j = 0; j < m; j++) {
        GXT_CHECK(got[2 * j] == 0);
        GXT_CHECK(got[2 * j + 1] == xv[39 - norm(iv[2 * j], n)]);
    }
    gx_index_opts ex = {.exact_dtype = 1};
    GXT_STATUS(gx_take_into(ctx, xr, iview, 0, &ex, oview), GX_ERR_DTYPE);
    gx_array_release(x);
    gx_array_release(xr);
    gx_array_release(ib);
    gx_array_release(iview);
    gx_array_release(ob);
    gx_array_release(oview);
}

GXT_TEST(index_take_out_of_range)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 50, m = 100, iv[100];
    for (int j = 0; j < m; j++)
        iv[j] = j % 50 - 25;
    iv[40] = 77;
    iv[17] = -51;
    double xv[50] = {0};
    gx_array *x = mk_num(ctx, GX_F32, 1, &n, xv, n), *out = NULL;
    gx_array *idx = mk_idx(ctx, GX_I64, 1, &m, iv);
    GXT_STATUS(gx_take(ctx, x, idx, 0, NULL, &out), GX_ERR_INDEX);
    GXT_MSG_HAS("position 17");
    GXT_MSG_HAS("-51");
    GXT_MSG_HAS("size 50");
    GXT_MSG_HAS("axis 0");
    GXT_CHECK(out == NULL);
    gx_array_release(idx);
    /* unsigned: never negative; a huge u64 is out of range, not wrapped */
    uint64_t big[3] = {1, 0xffffffffffffffffull, 2};
    int64_t m3 = 3;
    gx_array *ui = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_U64, 1, &m3, big, &ui));
    GXT_STATUS(gx_take(ctx, x, ui, GX_ALL_AXES, NULL, &out), GX_ERR_INDEX);
    GXT_MSG_HAS("18446744073709551615");
    GXT_MSG_HAS("position 1");
    GXT_MSG_HAS("x flattened");
    gx_array_release(ui);
    /* an empty axis: any index is out of range; an empty idx is fine */
    int64_t e = 0, one = 1, zero_idx = 0;
    gx_array *ex = NULL, *i1 = mk_idx(ctx, GX_I32, 1, &one, &zero_idx), *i0 = mk_idx(ctx, GX_I32, 1, &e, NULL);
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &e, &ex));
    GXT_STATUS(gx_take(ctx, ex, i1, 0, NULL, &out), GX_ERR_INDEX);
    GXT_MSG_HAS("size 0");
    GXT_OK(gx_take(ctx, ex, i0, 0, NULL, &out));
    gx_array_release(out);
    gx_array_release(ex);
    gx_array_release(i1);
    gx_array_release(i0);
    gx_array_release(x);
}

GXT_TEST(index_take_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 8, s2[2] = {2, 4};
    double v[8] = {1, 2, 3, 4, 5, 6, 7, 0};
    gx_array *x = mk_num(ctx, GX_F32, 2, s2, v, n), *fi = mk_num(ctx, GX_F32, 1, &n, v, n), *out = NULL;
    int64_t iv[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    gx_array *idx = mk_idx(ctx, GX_I64, 1, &n, iv);
    GXT_STATUS(gx_take(ctx, x, fi, 0, NULL, &out), GX_ERR_DTYPE);
    GXT_STATUS(gx_take(ctx, x, idx, 2, NULL, &out), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_take(ctx, x, idx, -3, NULL, &out), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_take(ctx, x, idx, 0, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    gx_index_opts bad = {.reserved = {1}};
    GXT_STATUS(gx_take(ctx, x, idx, 0, &bad, &out), GX_ERR_INVALID_ARGUMENT);
    gx_array *wrong = NULL;
    int64_t ws[2] = {3, 3};
    GXT_OK(gx_array_empty(ctx, GX_F32, 2, ws, &wrong));
    GXT_STATUS(gx_take_into(ctx, x, idx, 0, NULL, wrong), GX_ERR_SHAPE);
    GXT_MSG_HAS("(3, 3)");
    GXT_MSG_HAS("(8, 4)");
    gx_array_release(wrong);
    gx_array_release(x);
    gx_array_release(fi);
    gx_array_release(idx);
}

/* ------------------------------------------------------------ put */

static bool is_cpu(void)
{
    gx_backend_kind k;
    gx_ctx_backend(gxt_ctx(), &k);
    return k == GX_BACKEND_CPU;
}

/* Every x dtype, duplicates: on the CPU the last value wins, elsewhere one of them. */
GXT_TEST(index_put_every_dtype_duplicates)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 37, m = 1007;
    for (int k = 0; k < NALL; k++) {
        gx_dtype t = all_dts[k];
        size_t esz = gx_dtype_size(t);
        unsigned char *xh = malloc(esz * (size_t)n), *vh = malloc(esz * (size_t)m), *got = malloc(esz * (size_t)n);
        int64_t iv[1007];
        rand_bytes(t, xh, n);
        rand_bytes(t, vh, m);
        rand_idx(GX_I32, iv, m, n);
        iv[5] = 36; /* element 36 is targeted, element 35 never (below) */
        for (int j = 0; j < m; j++)
            if (norm(iv[j], n) == 35)
                iv[j] = 0;
        gx_array *x = NULL, *vals = NULL, *idx = mk_idx(ctx, GX_I32, 1, &m, iv);
        GXT_OK(gx_array_from_host(ctx, t, 1, &n, xh, &x));
        GXT_OK(gx_array_from_host(ctx, t, 1, &m, vh, &vals));
        GXT_OK(gx_put(ctx, idx, vals, NULL, x));
        gx_array_to_host(x, got, esz * (size_t)n);
        for (int64_t i = 0; i < n; i++) {
            int64_t last = -1;
            bool any = false, re_any = false, im_any = false;
            size_t half = esz / 2; /* complex: each part from one of the values (gx/index.h) */
            for (int64_t j = 0; j < m; j++)
                if (norm(iv[j], n) == i) {
                    last = j;
                    any = any || memcmp(got + i * esz, vh + j * esz, esz) == 0;
                    re_any = re_any || memcmp(got + i * esz, vh + j * esz, half) == 0;
                    im_any = im_any || memcmp(got + i * esz + half, vh + j * esz + half, half) == 0;
                }
            if (t == GX_C64 || t == GX_C128)
                any = any || (re_any && im_any);
            if (last < 0)
                GXT_CHECK(memcmp(got + i * esz, xh + i * esz, esz) == 0);
            else if (is_cpu())
                GXT_CHECK(memcmp(got + i * esz, vh + last * esz, esz) == 0);
            else
                GXT_CHECK(any);
        }
        gx_array_release(x);
        gx_array_release(vals);
        gx_array_release(idx);
        free(xh);
        free(vh);
        free(got);
    }
}

/* values broadcast (a 0-d scalar array), converted (f64 into i16); x a strided view;
 * a values shape that does not broadcast; out-of-range indices. */
GXT_TEST(index_put_views_broadcast_errors)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 20, m = 4, iv[4] = {0, -1, 3, 3};
    double xv[20];
    for (int i = 0; i < n; i++)
        xv[i] = i;
    gx_array *xb = mk_num(ctx, GX_I16, 1, &n, xv, n), *x = NULL; /* x = xb[1::2], 10 elements */
    gx_slice sl = {1, GX_END, 2};
    GXT_OK(gx_array_view(xb, &sl, &x));
    double seven = 7.5;
    gx_array *v0 = mk_num(ctx, GX_F64, 0, NULL, &seven, 1), *idx = mk_idx(ctx, GX_I8, 1, &m, iv);
    GXT_OK(gx_put(ctx, idx, v0, NULL, x));
    double got[20];
    rd_num(xb, got, n);
    for (int i = 0; i < n; i++) {
        bool hit = i == 1 || i == 19 || i == 7;
        GXT_CHECK(got[i] == (hit ? 7 : i));
    }
    int64_t m3 = 3;
    gx_array *v3 = mk_num(ctx, GX_F64, 1, &m3, xv, m3);
    GXT_STATUS(gx_put(ctx, idx, v3, NULL, x), GX_ERR_SHAPE);
    GXT_MSG_HAS("(3,)");
    GXT_MSG_HAS("(4,)");
    /* out of range into the view: error, and the view is left unchanged */
    int64_t bad[4] = {0, 10, 1, 2};
    gx_array *bi = mk_idx(ctx, GX_I64, 1, &m, bad);
    double nine = 9;
    gx_array *v9 = mk_num(ctx, GX_F64, 0, NULL, &nine, 1);
    GXT_STATUS(gx_put(ctx, bi, v9, NULL, x), GX_ERR_INDEX);
    GXT_MSG_HAS("position 1");
    GXT_MSG_HAS("size 10");
    double after[20];
    rd_num(xb, after, n);
    for (int i = 0; i < n; i++)
        GXT_CHECK(after[i] == got[i]);
    /* dense x: the in-range elements are written, the bad one skipped */
    gx_array *xd = mk_num(ctx, GX_F32, 1, &n, xv, n);
    bad[1] = 25;
    gx_array *bi2 = mk_idx(ctx, GX_I64, 1, &m, bad);
    GXT_STATUS(gx_put(ctx, bi2, v9, NULL, xd), GX_ERR_INDEX);
    rd_num(xd, after, n);
    for (int i = 0; i < n; i++)
        GXT_CHECK(after[i] == (i <= 2 ? 9 : i));
    gx_array *c = mk_num(ctx, GX_C64, 0, NULL, &nine, 1);
    GXT_STATUS(gx_put(ctx, idx, c, NULL, xd), GX_ERR_DTYPE);
    gx_array *fi = mk_num(ctx, GX_F64, 1, &m, xv, m);
    GXT_STATUS(gx_put(ctx, fi, v9, NULL, xd), GX_ERR_DTYPE);
    gx_array *list[] = {xb, x, v0, idx, v3, bi, v9, xd, bi2, c, fi};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        gx_array_release(list[i]);
}

/* ------------------------------------------------------------ scatter-reduce */

/* The wrapped integer combination of a and b in dtype t (op: + * max min). */
static int64_t wrap(gx_dtype t, int64_t v)
{
    switch (t) {
    case GX_I8: return (int8_t)v;
    case GX_I16: return (int16_t)v;
    case GX_I32: return (int32_t)v;
    case GX_U8: return (uint8_t)v;
    case GX_U16: return (uint16_t)v;
    case GX_U32: return (uint32_t)v;
    default: return v;
    }
}

static int64_t int_comb(gx_dtype t, char op, int64_t a, int64_t b)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case '+': return wrap(t, (int64_t)(ua + ub));
    case '*': return wrap(t, (int64_t)(ua * ub));
    case '>': return a > b ? a : b;
    default: return a < b ? a : b;
    }
}

/* x.at[idx] op= v with integer x of every dtype: exact, with duplicates. */
GXT_TEST(index_scatter_int_exact)
{
    gx_ctx *ctx = gxt_ctx();
    static const gx_dtype its[] = {GX_I8, GX_I16, GX_I32, GX_I64, GX_U8, GX_U16, GX_U32, GX_U64};
    static const char *ops[] = {"+", "*", "max", "min"};
    static const char opc[] = {'+', '*', '>', '<'};
    int64_t n = 33, m = 1007, iv[1007];
    double xv[33], vv[1007];
    for (int k = 0; k < 8; k++)
        for (int o = 0; o < 4; o++) {
            gx_dtype t = its[k];
            bool sg = is_signed_idx(t);
            for (int i = 0; i < n; i++)
                xv[i] = (double)(gxt_rand_u64() % 100) - (sg ? 50 : 0);
            for (int j = 0; j < m; j++)
                vv[j] = o == 1 ? (double)(gxt_rand_u64() % 3) + 1 : (double)(gxt_rand_u64() % 100) - (sg ? 50 : 0);
            rand_idx(GX_I16, iv, m, n);
            gx_array *x = mk_num(ctx, t, 1, &n, xv, n), *v = mk_num(ctx, t, 1, &m, vv, m);
            gx_array *idx = mk_idx(ctx, (k + o) % 2 ? GX_I16 : GX_I64, 1, &m, iv);
            GXT_OK(gx_scatter_reduce(ctx, ops[o], idx, v, NULL, x));
            int64_t ref[33];
            for (int i = 0; i < n; i++)
                ref[i] = (int64_t)xv[i];
            for (int j = 0; j < m; j++) {
                int64_t i = norm(iv[j], n);
                ref[i] = int_comb(t, opc[o], ref[i], (int64_t)vv[j]);
            }
            int64_t got[33];
            gx_array *g = NULL;
            GXT_OK(gx_array_clone(x, GX_I64, &g));
            GXT_OK(gx_array_to_host(g, got, sizeof got));
            for (int i = 0; i < n; i++)
                if (got[i] != ref[i]) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "%s %s: x[%d] = %lld, want %lld", gx_dtype_name(t), ops[o], i,
                                (long long)got[i], (long long)ref[i]);
                    break;
                }
            gx_array_release(g);
            gx_array_release(x);
            gx_array_release(v);
            gx_array_release(idx);
        }
}

/* Float sums: f32 and f64 against an f64 reference; on the CPU bit for bit the
 * sequential loop; deterministic mode the same twice. */
GXT_TEST(index_scatter_add_float)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 31, m = 20000;
    int64_t *iv = malloc(sizeof(int64_t) * (size_t)m);
    double *vv = malloc(sizeof(double) * (size_t)m), xv[31];
    for (int j = 0; j < m; j++)
        vv[j] = gxt_rand01() * 2 - 1;
    for (int i = 0; i < n; i++)
        xv[i] = i * 0.25;
    rand_idx(GX_I64, iv, m, n);
    for (int det = 0; det < 2; det++)
        for (int tt = 0; tt < 2; tt++) {
            gx_dtype t = tt ? GX_F64 : GX_F32;
            gx_index_opts o = {.deterministic = det};
            gx_array *idx = mk_idx(ctx, GX_I64, 1, &m, iv), *v = mk_num(ctx, t, 1, &m, vv, m);
            double r1[31], r2[31], ref[31];
            float seq[31];
            for (int rep = 0; rep < 2; rep++) {
                gx_array *x = mk_num(ctx, t, 1, &n, xv, n);
                GXT_OK(gx_scatter_reduce(ctx, "+", idx, v, &o, x));
                rd_num(x, rep ? r2 : r1, n);
                gx_array_release(x);
            }
            for (int i = 0; i < n; i++) {
                ref[i] = xv[i];
                seq[i] = (float)xv[i];
            }
            for (int j = 0; j < m; j++) {
                ref[norm(iv[j], n)] += tt ? vv[j] : (double)(float)vv[j];
                seq[norm(iv[j], n)] += (float)vv[j];
            }
            for (int i = 0; i < n; i++) {
                GXT_NEAR(r1[i], ref[i], tt ? 1e-12 : 1e-4);
                if (det || is_cpu())
                    GXT_CHECK(memcmp(&r1[i], &r2[i], sizeof r1[i]) == 0);
                if (is_cpu() && !tt)
                    GXT_CHECK(r1[i] == (double)seq[i]);
            }
            gx_array_release(idx);
            gx_array_release(v);
        }
    free(iv);
    free(vv);
}

/* Deterministic float sums with inf / NaN values: IEEE results. */
GXT_TEST(index_scatter_add_specials)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 4, m = 6, iv[6] = {0, 0, 1, 2, 2, 3};
    double vv[6] = {INFINITY, 1, NAN, INFINITY, -INFINITY, 2.5}, xv[4] = {1, 1, 1, 1};
    for (int det = 0; det < 2; det++) {
        gx_index_opts o = {.deterministic = det};
        gx_array *x = mk_num(ctx, GX_F32, 1, &n, xv, n), *v = mk_num(ctx, GX_F32, 1, &m, vv, m);
        gx_array *idx = mk_idx(ctx, GX_U32, 1, &m, iv);
        GXT_OK(gx_scatter_reduce(ctx, "sum", idx, v, &o, x));
        double got[4];
        rd_num(x, got, n);
        GXT_CHECK(isinf(got[0]) && got[0] > 0);
        GXT_CHECK(isnan(got[1]));
        GXT_CHECK(isnan(got[2]));
        GXT_CHECK(got[3] == 3.5);
        gx_array_release(x);
        gx_array_release(v);
        gx_array_release(idx);
    }
}

/* max/min on floats ignore NaN; "*" and lambdas; complex "+"; bool max/min. */
GXT_TEST(index_scatter_ops_float_lambda_complex)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 3, m = 5, iv[5] = {0, 1, 1, 2, -1};
    double xv[3] = {NAN, 5, -1}, vv[5] = {2, NAN, 7, NAN, -3};
    gx_array *idx = mk_idx(ctx, GX_I64, 1, &m, iv);
    for (int tt = 0; tt < 2; tt++) {
        gx_dtype t = tt ? GX_F64 : GX_F32;
        gx_array *x = mk_num(ctx, t, 1, &n, xv, n), *v = mk_num(ctx, t, 1, &m, vv, m);
        GXT_OK(gx_scatter_reduce(ctx, "max", idx, v, NULL, x));
        double got[3];
        rd_num(x, got, n);
        GXT_CHECK(got[0] == 2 && got[1] == 7 && got[2] == -1);
        gx_array_release(x);
        x = mk_num(ctx, t, 1, &n, xv, n);
        GXT_OK(gx_scatter_reduce(ctx, "minimum", idx, v, NULL, x));
        rd_num(x, got, n);
        GXT_CHECK(got[0] == 2 && got[1] == 5 && got[2] == -3);
        gx_array_release(x);
        double pv[5] = {2, 3, 4, 5, 6}, px[3] = {1, 1, 1};
        gx_array *p = mk_num(ctx, t, 1, &m, pv, m);
        x = mk_num(ctx, t, 1, &n, px, n);
        GXT_OK(gx_scatter_reduce(ctx, "*", idx, p, NULL, x));
        rd_num(x, got, n);
        GXT_CHECK(got[0] == 2 && got[1] == 12 && got[2] == 30);
        gx_array_release(x);
        x = mk_num(ctx, t, 1, &n, px, n);
        GXT_OK(gx_scatter_reduce(ctx, "a, b -> a + b * b", idx, p, NULL, x));
        rd_num(x, got, n);
        GXT_CHECK(got[0] == 5 && got[1] == 26 && got[2] == 62);
        gx_array_release(x);
        gx_array_release(p);
        gx_array_release(v);
    }
    /* a lambda on i16 (compare-and-swap on the containing word on a GPU) */
    double ix[3] = {1, 2, 3}, iv2[5] = {10, 20, 30, 40, 50};
    gx_array *x = mk_num(ctx, GX_I16, 1, &n, ix, n), *v = mk_num(ctx, GX_I16, 1, &m, iv2, m);
    GXT_OK(gx_scatter_reduce(ctx, "a, b -> a * 2 + b", idx, v, NULL, x));
    double got[6];
    rd_num(x, got, n);
    GXT_CHECK(got[0] == 12);
    GXT_CHECK(got[1] == (2 * 2 + 20) * 2 + 30 || got[1] == (2 * 2 + 30) * 2 + 20);
    GXT_CHECK(got[2] == (3 * 2 + 40) * 2 + 50 || got[2] == (3 * 2 + 50) * 2 + 40);
    if (is_cpu())
        GXT_CHECK(got[1] == 78 && got[2] == 142);
    gx_array_release(x);
    gx_array_release(v);
    /* complex "+" */
    double cx[3] = {1, 2, 3}, cv[5] = {1, 2, 3, 4, 5};
    for (int tt = 0; tt < 2; tt++) {
        gx_dtype t = tt ? GX_C128 : GX_C64;
        x = mk_num(ctx, t, 1, &n, cx, n);
        v = mk_num(ctx, t, 1, &m, cv, m);
        GXT_OK(gx_scatter_reduce(ctx, "+", idx, v, NULL, x));
        rd_num(x, got, n);
        GXT_CHECK(got[0] == 2 && got[1] == 1);
        GXT_CHECK(got[2] == 7 && got[3] == 3.5);
        GXT_CHECK(got[4] == 12 && got[5] == 6);
        GXT_STATUS(gx_scatter_reduce(ctx, "max", idx, v, NULL, x), GX_ERR_DTYPE);
        gx_array_release(x);
        gx_array_release(v);
    }
    /* bool: max is or, min is and; "+" is refused */
    double bx[3] = {0, 1, 0}, bv[5] = {1, 0, 0, 0, 0};
    x = mk_num(ctx, GX_BOOL, 1, &n, bx, n);
    v = mk_num(ctx, GX_BOOL, 1, &m, bv, m);
    GXT_OK(gx_scatter_reduce(ctx, "max", idx, v, NULL, x));
    rd_num(x, got, n);
    GXT_CHECK(got[0] == 1 && got[1] == 1 && got[2] == 0);
    GXT_OK(gx_scatter_reduce(ctx, "min", idx, v, NULL, x));
    rd_num(x, got, n);
    GXT_CHECK(got[0] == 1 && got[1] == 0 && got[2] == 0);
    GXT_STATUS(gx_scatter_reduce(ctx, "+", idx, v, NULL, x), GX_ERR_DTYPE);
    GXT_STATUS(gx_scatter_reduce(ctx, "&", idx, v, NULL, x), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_scatter_reduce(ctx, "a -> a", idx, v, NULL, x), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_scatter_reduce(ctx, NULL, idx, v, NULL, x), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(x);
    gx_array_release(v);
    gx_array_release(idx);
}

/* Views as x, idx and values; deterministic mode with an order-dependent operator. */
GXT_TEST(index_scatter_views_and_modes)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 24, m = 16, iv[16];
    double xv[24], vv[16];
    for (int i = 0; i < n; i++)
        xv[i] = i;
    for (int j = 0; j < m; j++)
        vv[j] = j + 1, iv[j] = (j * 5) % 12 - 6;
    gx_array *xb = mk_num(ctx, GX_I32, 1, &n, xv, n), *x = NULL; /* x = xb[::-2], 12 elements */
    gx_slice rs = {-1, GX_END, -2};
    GXT_OK(gx_array_view(xb, &rs, &x));
    gx_array *ib = mk_idx(ctx, GX_I64, 1, &m, iv), *ir = NULL; /* idx reversed */
    gx_slice r1 = {-1, GX_END, -1};
    GXT_OK(gx_array_view(ib, &r1, &ir));
    gx_array *vb = mk_num(ctx, GX_F64, 1, &m, vv, m), *vr = NULL;
    GXT_OK(gx_array_view(vb, &r1, &vr));
    GXT_OK(gx_scatter_reduce(ctx, "+", ir, vr, NULL, x));
    double ref[24];
    memcpy(ref, xv, sizeof ref);
    for (int j = 0; j < m; j++) {
        int64_t i = norm(iv[j], 12);
        ref[23 - 2 * i] += vv[j];
    }
    double got[24];
    rd_num(xb, got, n);
    for (int i = 0; i < n; i++)
        GXT_CHECK(got[i] == ref[i]);
    /* deterministic: "*" on floats and lambdas on floats are refused on a GPU only */
    gx_index_opts det = {.deterministic = 1};
    gx_array *xf = mk_num(ctx, GX_F32, 1, &n, xv, n), *vf = mk_num(ctx, GX_F32, 1, &m, vv, m);
    gx_status s = gx_scatter_reduce(ctx, "*", ib, vf, &det, xf);
    GXT_CHECK(is_cpu() ? s == GX_OK : s == GX_ERR_UNSUPPORTED);
    GXT_OK(gx_scatter_reduce(ctx, "max", ib, vf, &det, xf));
    GXT_OK(gx_scatter_reduce(ctx, "+", ib, vb, &det, x)); /* integers: accepted everywhere */
    gx_index_opts unc = {.unchecked = 1};
    GXT_OK(gx_scatter_reduce(ctx, "+", ib, vb, &unc, x));
    int64_t bad[16];
    memcpy(bad, iv, sizeof bad);
    bad[9] = 24;
    bad[3] = -25;
    gx_array *bi = mk_idx(ctx, GX_I32, 1, &m, bad);
    GXT_STATUS(gx_scatter_reduce(ctx, "+", bi, vf, &det, xf), GX_ERR_INDEX);
    GXT_MSG_HAS("position 3");
    GXT_MSG_HAS("-25");
    GXT_MSG_HAS("gx_scatter_reduce");
    gx_array *list[] = {xb, x, ib, ir, vb, vr, xf, vf, bi};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        gx_array_release(list[i]);
}

/* ------------------------------------------------------------ masks and where */

GXT_TEST(index_mask_assign_and_copy)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t s2[2] = {3, 4}, n = 12, row = 4;
    double xv[12], mv[4] = {1, 0, 0, 1}, ov[12];
    for (int i = 0; i < n; i++)
        xv[i] = i, ov[i] = 100 + i;
    for (int k = 0; k < NALL; k++) {
        gx_dtype t = all_dts[k];
        if (t == GX_BOOL)
            continue;
        gx_array *x = mk_num(ctx, t, 2, s2, xv, n), *mask = mk_num(ctx, GX_BOOL, 1, &row, mv, row);
        gx_scalar val = {GX_F64, {.f = 42}};
        GXT_OK(gx_mask_assign(ctx, mask, &val, x)); /* mask broadcast over rows */
        double got[24];
        rd_num(x, got, n);
        bool c = t == GX_C64 || t == GX_C128;
        for (int i = 0; i < n; i++)
            GXT_CHECK(got[c ? 2 * i : i] == (mv[i % 4] ? 42 : xv[i]));
        gx_array *o = mk_num(ctx, t, 2, s2, ov, n);
        gx_array *m2 = NULL, *xi = mk_num(ctx, GX_I32, 2, s2, xv, n);
        GXT_OK(gx_map(ctx, "v -> v % 3 == 0", 1, &xi, NULL, &m2));
        gx_array_release(xi);
        GXT_OK(gx_mask_copy(ctx, m2, o, x));
        rd_num(x, got, n);
        for (int i = 0; i < n; i++)
            GXT_CHECK(got[c ? 2 * i : i] == (i % 3 == 0 ? 100 + i : mv[i % 4] ? 42 : xv[i]));
        gx_array_release(x);
        gx_array_release(mask);
        gx_array_release(o);
        gx_array_release(m2);
    }
    /* a strided x view, bad dtype and shape */
    gx_array *xb = mk_num(ctx, GX_F32, 2, s2, xv, n), *xv2 = NULL;
    gx_slice sl[2] = {{0, GX_END, 2}, {-1, GX_END, -1}};
    GXT_OK(gx_array_view(xb, sl, &xv2)); /* rows 0 and 2, columns reversed */
    gx_array *mask = mk_num(ctx, GX_BOOL, 1, &row, mv, row);
    gx_scalar neg = GX_SCALAR_I32(-1);
    GXT_OK(gx_mask_assign(ctx, mask, &neg, xv2));
    double got[12];
    rd_num(xb, got, n);
    for (int i = 0; i < n; i++) {
        int r = i / 4, cidx = 3 - i % 4;
        GXT_CHECK(got[i] == ((r % 2 == 0 && mv[cidx]) ? -1 : xv[i]));
    }
    gx_array *fm = mk_num(ctx, GX_F32, 1, &row, mv, row);
    GXT_STATUS(gx_mask_assign(ctx, fm, &neg, xb), GX_ERR_DTYPE);
    int64_t three = 3;
    gx_array *m3 = mk_num(ctx, GX_BOOL, 1, &three, mv, three);
    GXT_STATUS(gx_mask_assign(ctx, m3, &neg, xb), GX_ERR_SHAPE);
    GXT_MSG_HAS("(3,)");
    GXT_MSG_HAS("(3, 4)");
    gx_scalar cz = GX_SCALAR_C64(1, 1);
    GXT_STATUS(gx_mask_assign(ctx, mask, &cz, xb), GX_ERR_DTYPE);
    gx_array *list[] = {xb, xv2, mask, fm, m3};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        gx_array_release(list[i]);
}

GXT_TEST(index_where)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t s2[2] = {2, 3}, n = 6, row = 3;
    double cv[6] = {1, 0, 1, 0, 0, 1}, av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {-1, -2, -3};
    gx_array *c = mk_num(ctx, GX_BOOL, 2, s2, cv, n), *a = mk_num(ctx, GX_I32, 2, s2, av, n);
    gx_array *b = mk_num(ctx, GX_F32, 1, &row, bv, row), *out = NULL;
    GXT_OK(gx_where(ctx, c, a, b, NULL, &out));
    gx_array_desc d;
    gx_array_describe(out, &d);
    GXT_EQ_I64(d.dtype, GX_F32);
    GXT_EQ_I64(d.ndim, 2);
    double got[6];
    rd_num(out, got, n);
    for (int i = 0; i < n; i++)
        GXT_CHECK(got[i] == (cv[i] ? av[i] : bv[i % 3]));
    gx_array_release(out);
    /* same dtypes keep it (i8 stays i8); a non-bool condition: nonzero is true */
    gx_array *a8 = mk_num(ctx, GX_I8, 2, s2, av, n), *b8 = mk_num(ctx, GX_I8, 1, &row, bv, row);
    gx_array *cf = mk_num(ctx, GX_F64, 2, s2, cv, n);
    GXT_OK(gx_where(ctx, cf, a8, b8, NULL, &out));
    gx_array_describe(out, &d);
    GXT_EQ_I64(d.dtype, GX_I8);
    rd_num(out, got, n);
    for (int i = 0; i < n; i++)
        GXT_CHECK(got[i] == (cv[i] ? av[i] : bv[i % 3]));
    /* into a view of another dtype; exact_dtype refuses */
    int64_t s3[2] = {2, 6};
    gx_array *ob = NULL, *ov = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, s3, &ob));
    gx_slice sl[2] = {GX_ALL, {0, GX_END, 2}};
    GXT_OK(gx_array_view(ob, sl, &ov));
    GXT_OK(gx_where_into(ctx, c, a8, b8, NULL, ov));
    double g2[12];
    rd_num(ob, g2, 12);
    for (int i = 0; i < n; i++)
        GXT_CHECK(g2[(i / 3) * 6 + (i % 3) * 2] == (cv[i] ? av[i] : bv[i % 3]));
    gx_index_opts ex = {.exact_dtype = 1};
    GXT_STATUS(gx_where_into(ctx, c, a8, b8, &ex, ov), GX_ERR_DTYPE);
    int64_t four = 4;
    gx_array *b4 = mk_num(ctx, GX_F32, 1, &four, av, four), *o2 = NULL;
    GXT_STATUS(gx_where(ctx, c, a, b4, NULL, &o2), GX_ERR_SHAPE);
    GXT_MSG_HAS("(4,)");
    GXT_MSG_HAS("gx_where");
    gx_array *cc = mk_num(ctx, GX_C64, 2, s2, cv, n);
    GXT_STATUS(gx_where(ctx, cc, a, b, NULL, &o2), GX_ERR_TYPE);
    gx_array *list[] = {c, a, b, out, a8, b8, cf, ob, ov, b4, cc};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        gx_array_release(list[i]);
}

/* ------------------------------------------------------------ gx_index_reduce */

/* Host reference of x[..., idx[j], ...] op= values[..., j, ...] (row-major walk of
 * values, complex as (re, im) pairs with c components per element). */
static void ir_ref(double *x, const int64_t *xs, int nd, int axis, const int64_t *idx, int64_t L, const double *v,
                   char op, int c)
{
    int64_t outer = 1, inner = 1, n = xs[axis];
    for (int d = 0; d < axis; d++)
        outer *= xs[d];
    for (int d = axis + 1; d < nd; d++)
        inner *= xs[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < L; j++)
            for (int64_t in = 0; in < inner; in++) {
                int64_t src = (o * L + j) * inner + in, dst = (o * n + norm(idx[j], n)) * inner + in;
                for (int k = 0; k < c; k++) {
                    double *t = &x[dst * c + k], e = v[src * c + k];
                    *t = op == '+' ? *t + e : op == '*' ? *t * e : op == 'M' ? fmax(*t, e) : op == 'l' ? *t + 2 * e : e;
                }
            }
}

/* One case: x of shape xs (dtype xt), idx of dtype it and length L, op. */
static void ir_case(gx_ctx *ctx, gx_dtype xt, gx_dtype it, int nd, const int64_t *xs, int axis, int64_t L, char op,
                    bool distinct, bool views)
{
    int ax = axis < 0 ? axis + nd : axis;
    int64_t n = xs[ax], vs[4], xsize = 1, vsize = 1;
    for (int d = 0; d < nd; d++) {
        vs[d] = d == ax ? L : xs[d];
        xsize *= xs[d];
        vsize *= vs[d];
    }
    int c = xt == GX_C64 || xt == GX_C128 ? 2 : 1;
    double *xh = malloc(sizeof(double) * (size_t)(xsize + 1)), *vh = malloc(sizeof(double) * (size_t)(vsize + 1));
    double *want = malloc(sizeof(double) * (size_t)(2 * xsize + 2)), *got = malloc(sizeof(double) * (size_t)(2 * xsize + 2));
    double *vw = malloc(sizeof(double) * (size_t)(2 * vsize + 2));
    int64_t *iv = malloc(sizeof(int64_t) * (size_t)(L + 1));
    for (int64_t k = 0; k < xsize; k++)
        xh[k] = (double)(gxt_rand_u64() % (xt == GX_BOOL ? 2 : 3)) + (op == '*' ? 1 : 0);
    for (int64_t k = 0; k < vsize; k++)
        vh[k] = (double)(gxt_rand_u64() % (xt == GX_BOOL ? 2 : 3)) + (op == '*' ? 1 : 0);
    if (distinct) { /* a random permutation's first L (L <= n), signed ones sometimes negative */
        int64_t *perm = malloc(sizeof(int64_t) * (size_t)n);
        for (int64_t k = 0; k < n; k++)
            perm[k] = k;
        for (int64_t k = n - 1; k > 0; k--) {
            int64_t r = (int64_t)(gxt_rand_u64() % (uint64_t)(k + 1)), t = perm[k];
            perm[k] = perm[r], perm[r] = t;
        }
        for (int64_t j = 0; j < L; j++)
            iv[j] = is_signed_idx(it) && (gxt_rand_u64() & 1) ? perm[j] - n : perm[j];
        free(perm);
    } else {
        rand_idx(it, iv, L, n);
    }
    for (int64_t k = 0; k < xsize; k++)
        want[k * c] = xh[k], want[k * c + c - 1] = c == 2 ? 0.5 * xh[k] : xh[k];
    for (int64_t k = 0; k < vsize; k++)
        vw[k * c] = vh[k], vw[k * c + c - 1] = c == 2 ? 0.5 * vh[k] : vh[k];
    ir_ref(want, xs, nd, ax, iv, L, vw, op, c);
    int64_t lshape[1] = {L};
    gx_array *x = mk_num(ctx, xt, nd, xs, xh, xsize), *v = mk_num(ctx, xt, nd, vs, vh, vsize);
    gx_array *idx = mk_idx(ctx, it, 1, lshape, iv), *xv = x, *vv = v;
    GXT_CHECK(x && v && idx);
    if (views && nd >= 2) { /* x and values as permuted views of arrays holding the transposes */
        int perm[4] = {1, 0, 2, 3};
        gx_array *xt2 = NULL, *vt2 = NULL;
        GXT_OK(gx_array_permute(x, perm, &xt2));
        GXT_OK(gx_array_clone(xt2, GX_DTYPE_DEFAULT, &xv)); /* dense, transposed */
        gx_array_release(xt2);
        GXT_OK(gx_array_permute(xv, perm, &xt2)); /* a strided view of x's shape */
        gx_array_release(xv);
        xv = xt2;
        GXT_OK(gx_array_permute(v, perm, &vt2));
        GXT_OK(gx_array_clone(vt2, GX_DTYPE_DEFAULT, &vv));
        gx_array_release(vt2);
        GXT_OK(gx_array_permute(vv, perm, &vt2));
        gx_array_release(vv);
        vv = vt2;
    }
    const char *ops = op == '+' ? "+" : op == '*' ? "*" : op == 'M' ? "max" : op == 'l' ? "a, b -> a + 2 * b" : "=";
    gx_status s = gx_index_reduce(ctx, ops, xv, axis, idx, vv, NULL);
    if (s != GX_OK)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s op %s axis %d: %s", gx_dtype_name(xt), ops, axis, gx_last_error());
    rd_num(xv, got, xsize);
    for (int64_t k = 0; k < xsize * c; k++)
        if (fabs(got[k] - want[k]) > 1e-9 * (fabs(want[k]) + 1)) {
            GXT_FAIL_AT(__FILE__, __LINE__, "%s idx %s op %s nd %d axis %d L %lld%s: element %lld is %g, want %g",
                        gx_dtype_name(xt), gx_dtype_name(it), ops, nd, axis, (long long)L, views ? " views" : "",
                        (long long)k, got[k], want[k]);
            break;
        }
    if (xv != x)
        gx_array_release(xv);
    if (vv != v)
        gx_array_release(vv);
    gx_array_release(x);
    gx_array_release(v);
    gx_array_release(idx);
    free(xh);
    free(vh);
    free(want);
    free(got);
    free(vw);
    free(iv);
}

/* "+" along axes 0, 1, -1 of 2-d and 3-d x with duplicates and negative indices, every
 * idx dtype and the numeric x dtypes (complex included). */
GXT_TEST(index_reduce_add_axes)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t s2[2] = {5, 7}, s3[3] = {3, 4, 5}, s1[1] = {9};
    static const gx_dtype xts[] = {GX_I8, GX_I32, GX_U16, GX_I64, GX_U64, GX_F32, GX_F64, GX_C64, GX_C128};
    for (size_t xi = 0; xi < sizeof xts / sizeof xts[0]; xi++)
        for (int ii = 0; ii < NIDX; ii++) {
            gx_dtype xt = xts[xi], it = idx_dts[ii];
            bool views = (xi + (size_t)ii) % 3 == 0;
            ir_case(ctx, xt, it, 2, s2, 0, 9, '+', false, views);
            ir_case(ctx, xt, it, 2, s2, 1, 4, '+', false, views);
            ir_case(ctx, xt, it, 2, s2, -1, 11, '+', false, !views);
            ir_case(ctx, xt, it, 3, s3, 1, 6, '+', false, views);
            ir_case(ctx, xt, it, 3, s3, -1, 1, '+', false, views);
            ir_case(ctx, xt, it, 3, s3, 0, 5, '+', false, !views);
            ir_case(ctx, xt, it, 1, s1, 0, 13, '+', false, false);
        }
}

/* "*", "max", a lambda and "=" (distinct indices: one writer each), and big sizes. */
GXT_TEST(index_reduce_ops_and_copy)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t s2[2] = {6, 5}, s3[3] = {4, 3, 33}, big[2] = {1000, 16};
    static const gx_dtype xts[] = {GX_BOOL, GX_I16, GX_U8, GX_I64, GX_F32, GX_F64};
    for (size_t xi = 0; xi < sizeof xts / sizeof xts[0]; xi++) {
        gx_dtype xt = xts[xi];
        if (xt != GX_BOOL) {
            ir_case(ctx, xt, GX_I32, 2, s2, 0, 3, '*', false, false);
            ir_case(ctx, xt, GX_I64, 3, s3, 2, 40, 'M', false, true);
            ir_case(ctx, xt, GX_U8, 3, s3, -2, 5, 'l', false, false);
        }
        ir_case(ctx, xt, GX_I16, 2, s2, 1, 5, '=', true, true);
        ir_case(ctx, xt, GX_I8, 3, s3, 0, 4, '=', true, false);
        ir_case(ctx, xt, GX_U32, 3, s3, -1, 31, '=', true, false);
    }
    ir_case(ctx, GX_F32, GX_I64, 2, big, 0, 4099, '+', false, false);
    ir_case(ctx, GX_F64, GX_I32, 2, big, -1, 33, '+', false, true);
    ir_case(ctx, GX_F32, GX_I64, 2, big, 0, 1000, '=', true, false);
}

/* Empty values, unchecked, out-of-range indices and bad input. */
GXT_TEST(index_reduce_errors)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t xs[2] = {4, 3}, vs[2] = {2, 3}, bad_vs[2] = {2, 4}, two[1] = {2}, zero[1] = {0}, sq[2] = {1, 2}, vz[2] = {0, 3};
    double xh[12] = {0}, vh[6] = {1, 2, 3, 4, 5, 6}, got[12];
    gx_array *x = mk_num(ctx, GX_F32, 2, xs, xh, 12), *v = mk_num(ctx, GX_F32, 2, vs, vh, 6);
    int64_t iv[2] = {3, -4}, oob[2] = {1, 4}, neg[2] = {-5, 0};
    gx_array *idx = mk_idx(ctx, GX_I32, 1, two, iv);
    GXT_CHECK(x && v && idx);
    gx_index_opts un = {.unchecked = 1};
    GXT_OK(gx_index_reduce(ctx, "+", x, 0, idx, v, &un));
    rd_num(x, got, 12);
    GXT_NEAR(got[9], 1, 0);
    GXT_NEAR(got[11], 3, 0);
    GXT_NEAR(got[0], 4, 0);
    GXT_NEAR(got[2], 6, 0);
    /* empty values: nothing written */
    gx_array *e = mk_idx(ctx, GX_I64, 1, zero, iv), *ve = mk_num(ctx, GX_F32, 2, vz, vh, 0);
    GXT_OK(gx_index_reduce(ctx, "+", x, 0, e, ve, NULL));
    gx_array *o = mk_idx(ctx, GX_I16, 1, two, oob), *ng = mk_idx(ctx, GX_I64, 1, two, neg);
    GXT_STATUS(gx_index_reduce(ctx, "+", x, 0, o, v, NULL), GX_ERR_INDEX);
    GXT_MSG_HAS("gx_index_reduce");
    GXT_MSG_HAS("idx[1] = 4");
    GXT_MSG_HAS("axis 0");
    GXT_MSG_HAS("(4, 3)");
    GXT_STATUS(gx_index_reduce(ctx, "max", x, -2, ng, v, NULL), GX_ERR_INDEX);
    GXT_MSG_HAS("idx[0] = -5");
    rd_num(x, got, 12);
    GXT_NEAR(got[9], 1, 0); /* nothing written by the failed calls */
    GXT_STATUS(gx_index_reduce(ctx, "+", x, 1, idx, v, NULL), GX_ERR_SHAPE); /* values (2, 3) vs x (4, 3) on axis 1 */
    GXT_MSG_HAS("(2, 3)");
    GXT_MSG_HAS("(4, 3)");
    GXT_MSG_HAS("(2,)");
    const double vh8[8] = {1, 2, 3, 4, 5, 6, 7, 8}; /* (2, 4) needs 8 values */
    gx_array *vb = mk_num(ctx, GX_F32, 2, bad_vs, vh8, 8);
    GXT_STATUS(gx_index_reduce(ctx, "+", x, 0, idx, vb, NULL), GX_ERR_SHAPE);
    GXT_MSG_HAS("(2, 4)");
    gx_array *i2 = mk_idx(ctx, GX_I32, 2, sq, iv);
    GXT_STATUS(gx_index_reduce(ctx, "+", x, 0, i2, v, NULL), GX_ERR_SHAPE);
    GXT_MSG_HAS("1-d");
    GXT_STATUS(gx_index_reduce(ctx, "+", x, 2, idx, v, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("axis 2");
    GXT_STATUS(gx_index_reduce(ctx, "+", x, -3, idx, v, NULL), GX_ERR_INVALID_ARGUMENT);
    gx_array *fi = mk_num(ctx, GX_F32, 1, two, vh, 2);
    GXT_STATUS(gx_index_reduce(ctx, "+", x, 0, fi, v, NULL), GX_ERR_DTYPE);
    GXT_STATUS(gx_index_reduce(ctx, NULL, x, 0, idx, v, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_index_reduce(ctx, "avg", x, 0, idx, v, NULL), GX_ERR_SYNTAX); /* read as a lambda, as gx_scatter_reduce does */
    GXT_STATUS(gx_index_reduce(ctx, "+", NULL, 0, idx, v, NULL), GX_ERR_INVALID_ARGUMENT);
    gx_array *x0 = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 0, NULL, &x0));
    GXT_STATUS(gx_index_reduce(ctx, "+", x0, 0, idx, v, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("no axis");
    gx_index_opts r = {.reserved = {1}};
    GXT_STATUS(gx_index_reduce(ctx, "+", x, 0, idx, v, &r), GX_ERR_INVALID_ARGUMENT);
    gx_array *rel[] = {x, v, idx, e, ve, o, ng, vb, i2, fi, x0};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        gx_array_release(rel[k]);
}

/* Beyond 2^31 elements on the GPU: put and take at positions past INT32_MAX (64-bit
 * indexing in the generated kernels), a negative index from the end, and an index
 * one past the end refused with its value in the message. */
GXT_TEST(index_beyond_2p31_gpu)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_device_info di;
    GXT_OK(gx_device_info_get(ctx, &di));
    int64_t n = (1ll << 31) + 5, three = 3, one = 1;
    if (di.mem_free < (size_t)n * 2 + (1ull << 30)) {
        gxt_skip("needs about 5 GiB of free device memory");
        return;
    }
    gx_array *x = NULL, *idx = NULL, *vals = NULL, *got = NULL, *ni = NULL, *g1 = NULL, *bad = NULL, *junk = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_U8, 1, &n, &x));
    const int64_t at[3] = {n - 1, (1ll << 31) + 1, 7}, neg[1] = {-1}, past[1] = {n};
    const uint8_t val[3] = {11, 22, 33};
    GXT_OK(gx_array_from_host(ctx, GX_I64, 1, &three, at, &idx));
    GXT_OK(gx_array_from_host(ctx, GX_U8, 1, &three, val, &vals));
    GXT_OK(gx_put(ctx, idx, vals, NULL, x));
    GXT_OK(gx_take(ctx, x, idx, 0, NULL, &got));
    uint8_t h[3] = {0}, h1 = 0;
    GXT_OK(gx_array_to_host(got, h, 3));
    for (int i = 0; i < 3; i++)
        GXT_EQ_I64(h[i], val[i]);
    GXT_OK(gx_array_from_host(ctx, GX_I64, 1, &one, neg, &ni));
    GXT_OK(gx_take(ctx, x, ni, 0, NULL, &g1));
    GXT_OK(gx_array_to_host(g1, &h1, 1));
    GXT_EQ_I64(h1, 11);
    GXT_OK(gx_array_from_host(ctx, GX_I64, 1, &one, past, &bad));
    GXT_STATUS(gx_take(ctx, x, bad, 0, NULL, &junk), GX_ERR_INDEX);
    GXT_MSG_HAS("2147483653");
    gx_array_release(x);
    gx_array_release(idx);
    gx_array_release(vals);
    gx_array_release(got);
    gx_array_release(ni);
    gx_array_release(g1);
    gx_array_release(bad);
}
