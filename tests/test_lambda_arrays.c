/* test_lambda_arrays.c -- arrays read by index inside lambdas (gx_bind): look-up
 * tables, 2-d views, stencils, nested gathers, mapreduce, filter, bounds checks and
 * bad input, against host references on random data. */
#include "gx_test.h"

#include "gx/range.h"
#include "gx/reduce.h"

#include <math.h>
#include <stdlib.h>

/* The options structs kept their sizes: the bindings took two reserved words. */
_Static_assert(sizeof(gx_map_opts) == 72, "gx_map_opts changed size");
_Static_assert(sizeof(gx_reduce_opts) == 96, "gx_reduce_opts changed size");
_Static_assert(sizeof(gx_scan_opts) == 88, "gx_scan_opts changed size");
_Static_assert(sizeof(gx_filter_opts) == 64, "gx_filter_opts changed size");
_Static_assert(sizeof(gx_pipe_opts) == 88, "gx_pipe_opts changed size");

/* Element k of a host buffer of dtype t, as a double. */
static double la_get(gx_dtype t, const void *p, int64_t k)
{
    switch (t) {
    case GX_BOOL: return ((const bool *)p)[k];
    case GX_I8: return ((const int8_t *)p)[k];
    case GX_I16: return ((const int16_t *)p)[k];
    case GX_I32: return ((const int32_t *)p)[k];
    case GX_I64: return (double)((const int64_t *)p)[k];
    case GX_U8: return ((const uint8_t *)p)[k];
    case GX_U16: return ((const uint16_t *)p)[k];
    case GX_U32: return ((const uint32_t *)p)[k];
    case GX_U64: return (double)((const uint64_t *)p)[k];
    case GX_F32: return ((const float *)p)[k];
    case GX_F64: return ((const double *)p)[k];
    default: return NAN;
    }
}

static void la_set(gx_dtype t, void *p, int64_t k, double v)
{
    switch (t) {
    case GX_BOOL: ((bool *)p)[k] = v != 0; break;
    case GX_I8: ((int8_t *)p)[k] = (int8_t)v; break;
    case GX_I16: ((int16_t *)p)[k] = (int16_t)v; break;
    case GX_I32: ((int32_t *)p)[k] = (int32_t)v; break;
    case GX_I64: ((int64_t *)p)[k] = (int64_t)v; break;
    case GX_U8: ((uint8_t *)p)[k] = (uint8_t)v; break;
    case GX_U16: ((uint16_t *)p)[k] = (uint16_t)v; break;
    case GX_U32: ((uint32_t *)p)[k] = (uint32_t)v; break;
    case GX_U64: ((uint64_t *)p)[k] = (uint64_t)v; break;
    case GX_F32: ((float *)p)[k] = (float)v; break;
    case GX_F64: ((double *)p)[k] = v; break;
    default: break;
    }
}

/* A new 1-d array of n values from f(k). */
static gx_status la_array(gx_ctx *ctx, gx_dtype t, int64_t n, double (*f)(int64_t, void *), void *arg, gx_array **out)
{
    void *h = calloc((size_t)(n ? n : 1), gx_dtype_size(t));
    for (int64_t k = 0; k < n; k++)
        la_set(t, h, k, f(k, arg));
    gx_status s = gx_array_from_host(ctx, t, 1, &n, h, out);
    free(h);
    return s;
}

static double la_rand_below(int64_t k, void *arg)
{
    (void)k;
    return (double)(gxt_rand_u64() % (uint64_t) * (int64_t *)arg);
}
static double la_rand_small(int64_t k, void *arg)
{
    (void)k;
    (void)arg;
    return (double)(int)(gxt_rand_u64() % 100) - 20.0;
}
static double la_rand_unit(int64_t k, void *arg)
{
    (void)k;
    (void)arg;
    return gxt_rand01() * 2 - 1;
}

/* The whole array (any view) as doubles, in row-major order. */
static double *la_host(const gx_array *a)
{
    gx_array_desc d;
    if (gx_array_describe(a, &d) != GX_OK)
        return NULL;
    size_t n = (size_t)(d.size ? d.size : 1);
    void *raw = calloc(n, gx_dtype_size(d.dtype));
    double *v = calloc(n, sizeof *v);
    if (raw && v && gx_array_to_host(a, raw, n * gx_dtype_size(d.dtype)) == GX_OK)
        for (int64_t k = 0; k < d.size; k++)
            v[k] = la_get(d.dtype, raw, k);
    free(raw);
    return v;
}

/* i -> table[i] * 2 for every integer dtype of i and several table dtypes. */
GXT_TEST(lam_arrays_lookup_table_every_index_dtype)
{
    gx_ctx *ctx = gxt_ctx();
    static const gx_dtype idt[] = {GX_I8, GX_I16, GX_I32, GX_I64, GX_U8, GX_U16, GX_U32, GX_U64};
    static const gx_dtype tdt[] = {GX_F32, GX_F64, GX_I32, GX_U8, GX_I64, GX_I16};
    static const int64_t sizes[] = {0, 1, 31, 32, 33, 1000};
    int64_t tn = 100;
    for (size_t ti = 0; ti < sizeof tdt / sizeof tdt[0]; ti++) {
        gx_array *table = NULL;
        GXT_OK(la_array(ctx, tdt[ti], tn, la_rand_small, NULL, &table));
        double *th = la_host(table);
        for (size_t ii = 0; ii < sizeof idt / sizeof idt[0]; ii++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                gx_array *idx = NULL, *out = NULL;
                GXT_OK(la_array(ctx, idt[ii], sizes[si], la_rand_below, &tn, &idx));
                gx_bind b = GX_BIND("table", table);
                gx_map_opts o = {.arrays = &b, .narrays = 1};
                GXT_OK(gx_map(ctx, "i -> table[i] * 2", 1, &idx, &o, &out));
                double *ih = la_host(idx), *oh = la_host(out);
                for (int64_t k = 0; k < sizes[si]; k++)
                    if (oh[k] != th[(int64_t)ih[k]] * 2) {
                        GXT_FAIL_AT(__FILE__, __LINE__, "table %s index %s n %lld: out[%lld] = %g, want %g",
                                    gx_dtype_name(tdt[ti]), gx_dtype_name(idt[ii]), (long long)sizes[si], (long long)k,
                                    oh[k], th[(int64_t)ih[k]] * 2);
                        break;
                    }
                free(ih);
                free(oh);
                gx_array_release(idx);
                gx_array_release(out);
            }
        free(th);
        gx_array_release(table);
    }
}

/* m[i, j] where m is a permuted, strided or reversed view of a (6, 8) array. */
GXT_TEST(lam_arrays_2d_views)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t sh[2] = {6, 8};
    double base[48];
    for (int k = 0; k < 48; k++)
        base[k] = gxt_rand01() * 100;
    gx_array *m = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 2, sh, base, &m));
    gx_array *views[3] = {0};
    int perm[2] = {1, 0};
    GXT_OK(gx_array_permute(m, perm, &views[0]));   /* (8, 6) */
    gx_slice sl[2] = {{1, GX_END, 2}, {-1, 0, -1}}; /* rows 1, 3, 5; columns 7 down to 1 */
    GXT_OK(gx_array_view(m, sl, &views[1]));        /* (3, 7) */
    gx_slice rev[2] = {{5, 0, -1}, {0, GX_END, 3}}; /* rows 5 down to 1; columns 0, 3, 6 */
    GXT_OK(gx_array_view(m, rev, &views[2]));       /* (5, 3) */
    for (int v = 0; v < 3; v++) {
        gx_array_desc d;
        GXT_OK(gx_array_describe(views[v], &d));
        double *vh = la_host(views[v]);
        int64_t R = d.shape[0], C = d.shape[1];
        gx_array *ii = NULL, *jj = NULL, *i2 = NULL, *j2 = NULL, *out = NULL;
        GXT_OK(gx_array_iota(ctx, GX_I32, R, 0, 1, &ii));
        GXT_OK(gx_array_iota(ctx, GX_I64, C, 0, 1, &jj));
        int64_t rs[2] = {R, 1}, cs[2] = {1, C};
        GXT_OK(gx_array_reshape(ii, 2, rs, &i2));
        GXT_OK(gx_array_reshape(jj, 2, cs, &j2));
        gx_bind b = GX_BIND("m", views[v]);
        gx_map_opts o = {.arrays = &b, .narrays = 1};
        gx_array *in[2] = {i2, j2};
        GXT_OK(gx_map(ctx, "i, j -> m[i, j] + 1000 * i", 2, in, &o, &out));
        double *oh = la_host(out);
        for (int64_t r = 0; r < R; r++)
            for (int64_t c = 0; c < C; c++)
                if (oh[r * C + c] != vh[r * C + c] + 1000.0 * (double)r)
                    GXT_FAIL_AT(__FILE__, __LINE__, "view %d at (%lld, %lld): %g vs %g", v, (long long)r, (long long)c,
                                oh[r * C + c], vh[r * C + c] + 1000.0 * (double)r);
        free(vh);
        free(oh);
        gx_array_release(ii);
        gx_array_release(jj);
        gx_array_release(i2);
        gx_array_release(j2);
        gx_array_release(out);
        gx_array_release(views[v]);
    }
    gx_array_release(m);
}

/* A 1-d three-point stencil over an iota of the interior indices, f32. */
GXT_TEST(lam_arrays_stencil)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t sizes[] = {3, 4, 33, 34, 1001};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int64_t n = sizes[si];
        gx_array *x = NULL, *ix = NULL, *out = NULL;
        GXT_OK(la_array(ctx, GX_F32, n, la_rand_unit, NULL, &x));
        GXT_OK(gx_array_iota(ctx, GX_I64, n - 2, 1, 1, &ix));
        gx_bind b = GX_BIND("x", x);
        gx_map_opts o = {.arrays = &b, .narrays = 1};
        GXT_OK(gx_map(ctx, "i -> (x[i-1] + x[i] + x[i+1]) / 3", 1, &ix, &o, &out));
        float *xh = calloc((size_t)n, sizeof *xh), *oh = calloc((size_t)n, sizeof *oh);
        GXT_OK(gx_array_to_host(x, xh, sizeof *xh * (size_t)n));
        GXT_OK(gx_array_to_host(out, oh, sizeof *oh * (size_t)(n - 2)));
        for (int64_t k = 1; k + 1 < n; k++) {
            float want = (xh[k - 1] + xh[k] + xh[k + 1]) / 3;
            if (fabsf(oh[k - 1] - want) > 2e-7f * (1 + fabsf(want)))
                GXT_FAIL_AT(__FILE__, __LINE__, "n %lld at %lld: %.9g vs %.9g", (long long)n, (long long)k, oh[k - 1],
                            want);
        }
        free(xh);
        free(oh);
        gx_array_release(x);
        gx_array_release(ix);
        gx_array_release(out);
    }
}

/* table[idx[i]]: a gather through a gather; and a second table bound beside it. */
GXT_TEST(lam_arrays_nested_gather)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t tn = 77, n = 333;
    gx_array *table = NULL, *idx = NULL, *it = NULL, *out = NULL, *w = NULL;
    GXT_OK(la_array(ctx, GX_F64, tn, la_rand_unit, NULL, &table));
    GXT_OK(la_array(ctx, GX_U16, n, la_rand_below, &tn, &idx));
    GXT_OK(la_array(ctx, GX_F32, n, la_rand_unit, NULL, &w));
    GXT_OK(gx_array_iota(ctx, GX_I32, n, 0, 1, &it));
    gx_bind b[3] = {GX_BIND("table", table), GX_BIND("idx", idx), GX_BIND("w", w)};
    gx_map_opts o = {.arrays = b, .narrays = 3};
    GXT_OK(gx_map(ctx, "i -> table[idx[i]] - w[i]", 1, &it, &o, &out));
    double *th = la_host(table), *ih = la_host(idx), *wh = la_host(w), *oh = la_host(out);
    for (int64_t k = 0; k < n; k++)
        if (oh[k] != th[(int64_t)ih[k]] - wh[k])
            GXT_FAIL_AT(__FILE__, __LINE__, "at %lld: %.17g vs %.17g", (long long)k, oh[k], th[(int64_t)ih[k]] - wh[k]);
    free(th);
    free(ih);
    free(wh);
    free(oh);
    gx_array_release(table);
    gx_array_release(idx);
    gx_array_release(w);
    gx_array_release(it);
    gx_array_release(out);
}

/* Broadcast inputs (4, 1) and (1, 5) beside a bound table; also gx_map_into. */
GXT_TEST(lam_arrays_broadcast_inputs)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t tn = 10;
    gx_array *t = NULL, *a = NULL, *bb = NULL, *a2 = NULL, *b2 = NULL, *out = NULL;
    GXT_OK(la_array(ctx, GX_I32, tn, la_rand_small, NULL, &t));
    GXT_OK(la_array(ctx, GX_I8, 4, la_rand_below, &tn, &a));
    GXT_OK(la_array(ctx, GX_F32, 5, la_rand_unit, NULL, &bb));
    int64_t s1[2] = {4, 1}, s2[2] = {1, 5}, s3[2] = {4, 5};
    GXT_OK(gx_array_reshape(a, 2, s1, &a2));
    GXT_OK(gx_array_reshape(bb, 2, s2, &b2));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, s3, &out));
    gx_bind b = GX_BIND("t", t);
    gx_map_opts o = {.arrays = &b, .narrays = 1};
    gx_array *in[2] = {a2, b2};
    GXT_OK(gx_map_into(ctx, "a, b -> t[a] + b", 2, in, &o, out));
    double *th = la_host(t), *ah = la_host(a), *bh = la_host(bb), *oh = la_host(out);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 5; c++) {
            double want = (double)((float)th[(int)ah[r]] + (float)bh[c]);
            if (oh[r * 5 + c] != want)
                GXT_FAIL_AT(__FILE__, __LINE__, "(%d, %d): %g vs %g", r, c, oh[r * 5 + c], want);
        }
    free(th);
    free(ah);
    free(bh);
    free(oh);
    gx_array *all[] = {t, a, bb, a2, b2, out};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        gx_array_release(all[k]);
}

/* mapreduce i -> w[i] * v[i] over an iota is a dot product; along axes it is not taken yet. */
GXT_TEST(lam_arrays_mapreduce_dot)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t sizes[] = {1, 31, 32, 33, 4097};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int64_t n = sizes[si];
        gx_array *w = NULL, *v = NULL, *it = NULL;
        GXT_OK(la_array(ctx, GX_F64, n, la_rand_unit, NULL, &w));
        GXT_OK(la_array(ctx, GX_F32, n, la_rand_unit, NULL, &v));
        GXT_OK(gx_array_iota(ctx, GX_I64, n, 0, 1, &it));
        gx_bind b[2] = {GX_BIND("w", w), GX_BIND("v", v)};
        gx_reduce_opts o = {.arrays = b, .narrays = 2};
        gx_scalar s;
        GXT_OK(gx_mapreduce(ctx, "i -> w[i] * v[i]", "+", 1, &it, &o, &s));
        double *wh = la_host(w), *vh = la_host(v), want = 0, mag = 0;
        for (int64_t k = 0; k < n; k++) {
            want += wh[k] * vh[k];
            mag += fabs(wh[k] * vh[k]);
        }
        GXT_CHECK(s.dtype == GX_F64);
        if (fabs(s.v.f - want) > 1e-14 * (mag + 1))
            GXT_FAIL_AT(__FILE__, __LINE__, "n %lld: %.17g vs %.17g", (long long)n, s.v.f, want);
        free(wh);
        free(vh);
        if (si + 1 == sizeof sizes / sizeof sizes[0]) { /* along an axis that keeps 2 outputs */
            int64_t sh2[2] = {2, 4};
            gx_array *i8 = NULL, *it2 = NULL, *r = NULL;
            GXT_OK(gx_array_iota(ctx, GX_I64, 8, 0, 1, &i8));
            GXT_OK(gx_array_reshape(i8, 2, sh2, &it2));
            int ax = 1;
            gx_reduce_opts oa = {.axes = &ax, .naxes = 1, .arrays = b, .narrays = 2};
            GXT_OK(gx_mapreduce_to(ctx, "i -> w[i] * v[i]", "+", 1, &it2, &oa, &r));
            double *rh = la_host(r), *wh2 = la_host(w), *vh2 = la_host(v);
            for (int row = 0; row < 2; row++) {
                double want2 = 0;
                for (int c = 0; c < 4; c++)
                    want2 += wh2[row * 4 + c] * vh2[row * 4 + c];
                GXT_NEAR(rh[row], want2, 1e-14);
            }
            free(rh);
            free(wh2);
            free(vh2);
            gx_array_release(r);
            gx_array_release(it2);
            gx_array_release(i8);
        }
        gx_array_release(w);
        gx_array_release(v);
        gx_array_release(it);
    }
}

/* An index out of range: GX_ERR_INDEX naming the position, the index, the array and
 * its size; negative indices do not wrap; the next call works; unchecked is right on
 * valid input. */
GXT_TEST(lam_arrays_out_of_range)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t tn = 100, n = 1000;
    gx_array *table = NULL, *idx = NULL, *out = NULL;
    GXT_OK(la_array(ctx, GX_F32, tn, la_rand_unit, NULL, &table));
    int64_t *ih = calloc((size_t)n, sizeof *ih);
    for (int64_t k = 0; k < n; k++)
        ih[k] = (int64_t)(gxt_rand_u64() % (uint64_t)tn);
    GXT_OK(gx_array_from_host(ctx, GX_I64, 1, &n, ih, &idx));
    gx_bind b = GX_BIND("table", table);
    gx_map_opts o = {.arrays = &b, .narrays = 1};
    /* valid first, checked and unchecked */
    GXT_OK(gx_map(ctx, "i -> table[i] * 2", 1, &idx, &o, &out));
    double *th = la_host(table), *oh = la_host(out);
    for (int64_t k = 0; k < n; k++)
        GXT_CHECK(oh[k] == th[ih[k]] * 2);
    free(oh);
    gx_array_release(out);
    gx_map_opts ou = {.arrays = &b, .narrays = 1, .unchecked = 1};
    GXT_OK(gx_map(ctx, "i -> table[i] * 2", 1, &idx, &ou, &out));
    oh = la_host(out);
    for (int64_t k = 0; k < n; k++)
        GXT_CHECK(oh[k] == th[ih[k]] * 2);
    free(oh);
    /* two offenders: the first position is reported */
    ih[417] = 1000;
    ih[900] = -1;
    GXT_OK(gx_array_from_host_into(ih, sizeof *ih * (size_t)n, idx));
    gx_array *bad = (gx_array *)1;
    GXT_STATUS(gx_map(ctx, "i -> table[i] * 2", 1, &idx, &o, &bad), GX_ERR_INDEX);
    GXT_CHECK(bad == NULL);
    GXT_MSG_HAS("gx_map");
    GXT_MSG_HAS("index 1000");
    GXT_MSG_HAS("'table'");
    GXT_MSG_HAS("size 100");
    GXT_MSG_HAS("element (row-major) 417");
    /* into: documented as written, failed reads as 0 */
    GXT_STATUS(gx_map_into(ctx, "i -> table[i] * 2", 1, &idx, &o, out), GX_ERR_INDEX);
    oh = la_host(out);
    GXT_CHECK(oh[417] == 0 && oh[900] == 0 && oh[416] == th[ih[416]] * 2);
    free(oh);
    /* negative only */
    ih[417] = 3;
    GXT_OK(gx_array_from_host_into(ih, sizeof *ih * (size_t)n, idx));
    GXT_STATUS(gx_map_into(ctx, "i -> table[i] * 2", 1, &idx, &o, out), GX_ERR_INDEX);
    GXT_MSG_HAS("index -1");
    GXT_MSG_HAS("900");
    /* the flag is reset: a valid call after an offence succeeds */
    ih[900] = 99;
    GXT_OK(gx_array_from_host_into(ih, sizeof *ih * (size_t)n, idx));
    GXT_OK(gx_map_into(ctx, "i -> table[i] * 2", 1, &idx, &o, out));
    /* u64 indices beyond INT64_MAX stay out of range; mapreduce reports too */
    gx_array *it = NULL;
    GXT_OK(gx_array_iota(ctx, GX_U64, 5, 18446744073709551610.0, 1, &it));
    GXT_STATUS(gx_map(ctx, "i -> table[i]", 1, &it, &o, &bad), GX_ERR_INDEX);
    GXT_MSG_HAS("index 9223372036854775807"); /* saturated on its way to int64 */
    gx_array_release(it);
    GXT_OK(gx_array_iota(ctx, GX_I32, 101, 0, 1, &it));
    gx_reduce_opts ro = {.arrays = &b, .narrays = 1};
    gx_scalar s;
    GXT_STATUS(gx_mapreduce(ctx, "i -> table[i]", "+", 1, &it, &ro, &s), GX_ERR_INDEX);
    GXT_MSG_HAS("gx_mapreduce");
    GXT_MSG_HAS("index 100");
    GXT_MSG_HAS(") 100");
    gx_array_release(it);
    free(th);
    free(ih);
    gx_array_release(table);
    gx_array_release(idx);
    gx_array_release(out);
}

/* Bad input: each a status and a message. */
GXT_TEST(lam_arrays_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t sh2[2] = {3, 4};
    gx_array *t = NULL, *m = NULL, *it = NULL, *out = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, 10, 0, 1, &t));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 2, sh2, &m));
    GXT_OK(gx_array_iota(ctx, GX_I32, 3, 0, 1, &it));
    gx_bind b[2] = {GX_BIND("table", t), GX_BIND("m", m)};
    gx_map_opts o = {.arrays = b, .narrays = 2};
    GXT_STATUS(gx_map(ctx, "i -> tabel[i]", 1, &it, &o, &out), GX_ERR_TYPE);
    GXT_MSG_HAS("unknown array 'tabel'");
    GXT_MSG_HAS("^");
    GXT_MSG_HAS("did you mean 'table'");
    GXT_STATUS(gx_map(ctx, "i -> m[i]", 1, &it, &o, &out), GX_ERR_TYPE);
    GXT_MSG_HAS("rank 2");
    GXT_STATUS(gx_map(ctx, "i -> table[i, i]", 1, &it, &o, &out), GX_ERR_TYPE);
    GXT_MSG_HAS("rank 1");
    GXT_STATUS(gx_map(ctx, "i -> table[i * 0.5]", 1, &it, &o, &out), GX_ERR_TYPE);
    GXT_MSG_HAS("must be an integer");
    GXT_MSG_HAS("^");
    GXT_STATUS(gx_map(ctx, "i -> i[0]", 1, &it, &o, &out), GX_ERR_TYPE);
    GXT_MSG_HAS("parameter, not an array");
    GXT_STATUS(gx_map(ctx, "i -> table + i", 1, &it, &o, &out), GX_ERR_TYPE);
    GXT_MSG_HAS("bound array, not a value");
    GXT_STATUS(gx_map(ctx, "i -> table[]", 1, &it, &o, &out), GX_ERR_SYNTAX);
    GXT_STATUS(gx_map(ctx, "i -> table[i", 1, &it, &o, &out), GX_ERR_SYNTAX);
    GXT_MSG_HAS("']'");
    /* a parameter hides a bound array of its name */
    GXT_STATUS(gx_map(ctx, "table -> table[0]", 1, &it, &o, &out), GX_ERR_TYPE);
    GXT_OK(gx_map(ctx, "table -> table * 2", 1, &it, &o, &out)); /* an unused binding is fine */
    gx_array_release(out);
    out = NULL;
    gx_const c = GX_CONST("table", GX_SCALAR_I32(1));
    gx_map_opts oc = {.consts = &c, .nconsts = 1, .arrays = b, .narrays = 1};
    GXT_STATUS(gx_map(ctx, "i -> table[i]", 1, &it, &oc, &out), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("both a constant and a bound array");
    gx_bind nul = GX_BIND("x", NULL);
    gx_map_opts on = {.arrays = &nul, .narrays = 1};
    GXT_STATUS(gx_map(ctx, "i -> x[i]", 1, &it, &on, &out), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("'x' is NULL");
    gx_map_opts onull = {.narrays = 1};
    GXT_STATUS(gx_map(ctx, "i -> i", 1, &it, &onull, &out), GX_ERR_INVALID_ARGUMENT);
    gx_bind many[9];
    char names[9][4];
    for (int k = 0; k < 9; k++) {
        names[k][0] = 'a', names[k][1] = (char)('0' + k), names[k][2] = 0;
        many[k] = GX_BIND(names[k], t);
    }
    gx_map_opts om = {.arrays = many, .narrays = 9};
    GXT_STATUS(gx_map(ctx, "i -> i", 1, &it, &om, &out), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("between 0 and 8");
    gx_bind twice[2] = {GX_BIND("t", t), GX_BIND("t", m)};
    gx_map_opts ot = {.arrays = twice, .narrays = 2};
    GXT_STATUS(gx_map(ctx, "i -> t[i]", 1, &it, &ot, &out), GX_ERR_INVALID_ARGUMENT);
    gx_ctx *c2 = NULL;
    GXT_OK(gx_ctx_create(&c2, GX_BACKEND_CPU));
    gx_array *other = NULL;
    GXT_OK(gx_array_iota(c2, GX_F32, 10, 0, 1, &other));
    gx_bind bo = GX_BIND("o", other);
    gx_map_opts oo = {.arrays = &bo, .narrays = 1};
    GXT_STATUS(gx_map(ctx, "i -> o[i]", 1, &it, &oo, &out), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("another context");
    gx_array_release(other);
    gx_ctx_destroy(c2);
    /* a plain reduction has no lambda to read them */
    gx_reduce_opts ro = {.arrays = b, .narrays = 1};
    gx_scalar s;
    GXT_STATUS(gx_reduce(ctx, "+", it, &ro, &s), GX_ERR_INVALID_ARGUMENT);
    /* a scan's or a terminal's only lambda is its operator, which reads no arrays:
     * the message says where to bind them instead */
    gx_scan_opts so = {.arrays = b, .narrays = 1};
    GXT_STATUS(gx_scan(ctx, "+", it, &so, &out), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("gx_pipe_map");
    gx_pipe_opts po = {.arrays = b, .narrays = 1};
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &it, &p));
    gx_scalar sr;
    GXT_STATUS(gx_pipe_reduce(p, "+", &po, &sr), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("gx_pipe_mapreduce");
    gx_array *sc = NULL;
    GXT_STATUS(gx_pipe_scan(p, "+", &po, &sc), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("operator");
    gx_bind bm = GX_BIND("table", m);
    gx_pipe_opts pm = {.arrays = &bm, .narrays = 1};
    GXT_OK(gx_pipe_map(p, "i -> table[i]", &po));
    GXT_STATUS(gx_pipe_map(p, "x -> table[0, 0]", &pm), GX_ERR_INVALID_ARGUMENT); /* rebinding a name */
    GXT_MSG_HAS("earlier stage");
    gx_pipe_destroy(p);
    gx_array_release(t);
    gx_array_release(m);
    gx_array_release(it);
}

/* A map that binds nothing generates what it did before (no flag, no helpers);
 * one that binds a table loads through the helper. */
GXT_TEST(lam_arrays_source)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *t = NULL, *it = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, 10, 0, 1, &t));
    GXT_OK(gx_array_iota(ctx, GX_I32, 3, 0, 1, &it));
    char buf[1 << 16];
    size_t need = 0;
    GXT_OK(gx_map_source(ctx, "i -> i * 2", 1, &it, NULL, buf, sizeof buf, &need));
    GXT_CHECK(!strstr(buf, "gx_bargs") && !strstr(buf, "gx_bload") && !strstr(buf, "gx_bdesc")); /* (the prelude has gx_bf16) */
    gx_bind b = GX_BIND("table", t);
    gx_map_opts o = {.arrays = &b, .narrays = 1};
    GXT_OK(gx_map_source(ctx, "i -> table[i] * 2", 1, &it, &o, buf, sizeof buf, &need));
    GXT_CHECK(strstr(buf, "gx_bload0") && strstr(buf, "gx_boob"));
    o.unchecked = 1;
    GXT_OK(gx_map_source(ctx, "i -> table[i] * 2", 1, &it, &o, buf, sizeof buf, &need));
    GXT_CHECK(strstr(buf, "gx_bload0") && !strstr(buf, "gx_boob"));
    gx_array_release(t);
    gx_array_release(it);
}

/* gx_filter / gx_findall with a bound array in the predicate, and a pipeline whose
 * map and filter stages read two tables; out of range reports the stream position. */
GXT_TEST(lam_arrays_filter_and_pipeline)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t sizes[] = {0, 1, 31, 32, 33, 2049};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int64_t n = sizes[si];
        gx_array *mask = NULL, *it = NULL, *x = NULL, *out[2] = {0}, *fa = NULL;
        GXT_OK(la_array(ctx, GX_F32, n, la_rand_unit, NULL, &mask));
        GXT_OK(la_array(ctx, GX_I16, n, la_rand_small, NULL, &x));
        GXT_OK(gx_array_iota(ctx, GX_I64, n, 0, 1, &it));
        gx_bind b = GX_BIND("mask", mask);
        gx_filter_opts o = {.arrays = &b, .narrays = 1};
        gx_array *in[2] = {it, x};
        GXT_OK(gx_filter(ctx, "i, v -> mask[i] > 0.25f && v != 3", 2, in, &o, out));
        GXT_OK(gx_findall(ctx, "i, v -> mask[i] > 0.25f && v != 3", 2, in, &o, &fa));
        double *mh = la_host(mask), *xh = la_host(x), *o0 = la_host(out[0]), *o1 = la_host(out[1]), *fh = la_host(fa);
        gx_array_desc d;
        GXT_OK(gx_array_describe(out[0], &d));
        int64_t kept = 0;
        for (int64_t k = 0; k < n; k++) {
            if (!((float)mh[k] > 0.25f && xh[k] != 3))
                continue;
            if (kept < d.size && (o0[kept] != (double)k || o1[kept] != xh[k] || fh[kept] != (double)k))
                GXT_FAIL_AT(__FILE__, __LINE__, "n %lld: kept %lld is %g/%g/%g, want %lld/%g", (long long)n,
                            (long long)kept, o0[kept], o1[kept], fh[kept], (long long)k, xh[k]);
            kept++;
        }
        GXT_EQ_I64(d.size, kept);
        free(mh);
        free(xh);
        free(o0);
        free(o1);
        free(fh);
        gx_array_release(out[0]);
        gx_array_release(out[1]);
        gx_array_release(fa);
        gx_array_release(x);
        /* a pipeline: iota -> map through a table -> filter on a mask -> collect */
        int64_t tn = 50;
        gx_array *table = NULL, *col = NULL;
        GXT_OK(la_array(ctx, GX_F64, tn, la_rand_unit, NULL, &table));
        gx_pipe *p = NULL;
        GXT_OK(gx_pipe_iota(ctx, GX_I32, n, 0, 1, &p));
        gx_bind bt = GX_BIND("t", table);
        gx_pipe_opts pm = {.arrays = &bt, .narrays = 1};
        gx_pipe_opts pf = {.arrays = &b, .narrays = 1};
        GXT_OK(gx_pipe_enumerate(p));
        GXT_OK(gx_pipe_filter(p, "k, i -> mask[k] < 0", &pf));
        GXT_OK(gx_pipe_map(p, "k, i -> t[i % 50] + mask[k]", &pm));
        GXT_OK(gx_pipe_collect(p, 1, &col));
        double *th = la_host(table), *ch = la_host(col);
        mh = la_host(mask);
        GXT_OK(gx_array_describe(col, &d));
        kept = 0;
        for (int64_t k = 0; k < n; k++) {
            if (!(mh[k] < 0))
                continue;
            double want = th[k % 50] + (double)(float)mh[k];
            if (kept < d.size && ch[kept] != want)
                GXT_FAIL_AT(__FILE__, __LINE__, "pipe n %lld: %g vs %g", (long long)n, ch[kept], want);
            kept++;
        }
        GXT_EQ_I64(d.size, kept);
        free(th);
        free(ch);
        free(mh);
        gx_pipe_destroy(p);
        gx_array_release(col);
        if (n > 40) { /* t[i] past 50: the first offending source index is 50 */
            GXT_OK(gx_pipe_iota(ctx, GX_I32, n, 0, 1, &p));
            GXT_OK(gx_pipe_map(p, "i -> t[i]", &pm));
            GXT_STATUS(gx_pipe_collect(p, 1, &col), GX_ERR_INDEX);
            GXT_MSG_HAS("index 50");
            GXT_MSG_HAS("source index of its segment) 50");
            GXT_CHECK(col == NULL);
            gx_pipe_destroy(p);
            gx_array *bad[2] = {(gx_array *)1, (gx_array *)1};
            gx_bind bt2 = GX_BIND("t", table);
            gx_filter_opts ob = {.arrays = &bt2, .narrays = 1};
            GXT_STATUS(gx_filter(ctx, "i -> t[i] > 0", 1, &it, &ob, bad), GX_ERR_INDEX);
            GXT_MSG_HAS("gx_filter");
            GXT_CHECK(bad[0] == NULL);
        }
        gx_array_release(table);
        gx_array_release(mask);
        gx_array_release(it);
    }
}

/* Reductions along axes reading bound arrays: row sums of m[i, j] * w[j] (the row
 * kernel) and column sums (the column kernel), m of every real dtype class and a
 * strided view, against a host reference. */
static void la_axes_case(gx_ctx *ctx, gx_dtype mt, int64_t R, int64_t C, bool view)
{
    gx_array *big = NULL, *m = NULL, *w = NULL, *i0 = NULL, *j0 = NULL, *ii = NULL, *jj = NULL;
    int64_t shb[2] = {R, 2 * C}, shi[2] = {R, 1}, shj[2] = {1, C};
    GXT_OK(la_array(ctx, mt, R * 2 * C, mt == GX_BOOL ? la_rand_unit : la_rand_small, NULL, &big));
    gx_array *b2 = NULL;
    GXT_OK(gx_array_reshape(big, 2, shb, &b2));
    /* view: every other column, walked backwards (negative stride); else the first C columns */
    gx_slice sl[2] = {GX_ALL, view ? (gx_slice){-1, GX_END, -2} : (gx_slice){0, C, 1}};
    if (view)
        sl[1].stop = -(2 * C) - 1; /* past the start, backwards */
    GXT_OK(gx_array_view(b2, sl, &m));
    GXT_OK(la_array(ctx, GX_F64, C, la_rand_unit, NULL, &w));
    GXT_OK(gx_array_iota(ctx, GX_I64, R, 0, 1, &i0));
    GXT_OK(gx_array_iota(ctx, GX_I32, C, 0, 1, &j0));
    GXT_OK(gx_array_reshape(i0, 2, shi, &ii));
    GXT_OK(gx_array_reshape(j0, 2, shj, &jj));
    gx_bind b[2] = {GX_BIND("m", m), GX_BIND("w", w)};
    gx_array *in[2] = {ii, jj}, *rows = NULL, *cols = NULL;
    int ax1 = 1, ax0 = 0;
    gx_reduce_opts o1 = {.axes = &ax1, .naxes = 1, .arrays = b, .narrays = 2};
    gx_reduce_opts o0 = {.axes = &ax0, .naxes = 1, .arrays = b, .narrays = 2};
    GXT_OK(gx_mapreduce_to(ctx, "i, j -> m[i, j] * w[j]", "+", 2, in, &o1, &rows));
    GXT_OK(gx_mapreduce_to(ctx, "i, j -> m[i, j] * w[j]", "+", 2, in, &o0, &cols));
    double *mh = la_host(m), *wh = la_host(w), *rh = la_host(rows), *ch = la_host(cols);
    for (int64_t i = 0; i < R; i++) {
        double want = 0, mag = 0;
        for (int64_t j = 0; j < C; j++) {
            want += mh[i * C + j] * wh[j];
            mag += fabs(mh[i * C + j] * wh[j]);
        }
        if (fabs(rh[i] - want) > 1e-13 * (mag + 1))
            GXT_FAIL_AT(__FILE__, __LINE__, "%s (%lld, %lld)%s row %lld: %.17g vs %.17g", gx_dtype_name(mt),
                        (long long)R, (long long)C, view ? " view" : "", (long long)i, rh[i], want);
    }
    for (int64_t j = 0; j < C; j++) {
        double want = 0, mag = 0;
        for (int64_t i = 0; i < R; i++) {
            want += mh[i * C + j] * wh[j];
            mag += fabs(mh[i * C + j] * wh[j]);
        }
        if (fabs(ch[j] - want) > 1e-13 * (mag + 1))
            GXT_FAIL_AT(__FILE__, __LINE__, "%s (%lld, %lld)%s col %lld: %.17g vs %.17g", gx_dtype_name(mt),
                        (long long)R, (long long)C, view ? " view" : "", (long long)j, ch[j], want);
    }
    free(mh);
    free(wh);
    free(rh);
    free(ch);
    gx_array *rel[] = {big, b2, m, w, i0, j0, ii, jj, rows, cols};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        gx_array_release(rel[k]);
}

GXT_TEST(lam_arrays_axes_stencil)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t shapes[][2] = {{1, 1}, {3, 31}, {33, 32}, {2, 33}, {5, 2049}, {70, 17}, {1, 4099}};
    static const gx_dtype dts[] = {GX_BOOL, GX_I8, GX_U16, GX_I32, GX_I64, GX_U64, GX_F32, GX_F64};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
            la_axes_case(ctx, dts[di], shapes[si][0], shapes[si][1], (si + di) % 2 == 1);
}

/* A complex bound array summed along an axis, and an integer accumulator ("max"). */
GXT_TEST(lam_arrays_axes_complex_and_max)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t R = 9, C = 37, sh[2] = {R, C};
    gx_array *re = NULL, *im = NULL, *z = NULL, *z2 = NULL, *it = NULL, *it2 = NULL, *out = NULL;
    GXT_OK(la_array(ctx, GX_F64, R * C, la_rand_unit, NULL, &re));
    GXT_OK(la_array(ctx, GX_F64, R * C, la_rand_unit, NULL, &im));
    gx_array *parts[2] = {re, im};
    GXT_OK(gx_map(ctx, "a, b -> c64(complex(f32(a), f32(b)))", 2, parts, NULL, &z));
    GXT_OK(gx_array_reshape(z, 2, sh, &z2));
    GXT_OK(gx_array_iota(ctx, GX_I64, R * C, 0, 1, &it));
    GXT_OK(gx_array_reshape(it, 2, sh, &it2));
    gx_bind b = GX_BIND("z", z2);
    int ax = 1;
    gx_reduce_opts o = {.axes = &ax, .naxes = 1, .arrays = &b, .narrays = 1};
    /* mapreduce results are real: a complex read enters through re / im */
    GXT_OK(gx_mapreduce_to(ctx, "k -> re(z[k / 37, k % 37]) + 2 * im(z[k / 37, k % 37])", "+", 1, &it2, &o, &out));
    double *oh = la_host(out), *rh = la_host(re), *ih = la_host(im);
    for (int64_t i = 0; i < R; i++) {
        double want = 0;
        for (int64_t j = 0; j < C; j++)
            want += (double)(float)rh[i * C + j] + 2 * (double)(float)ih[i * C + j];
        GXT_NEAR(oh[i], want, 1e-4);
    }
    free(oh);
    gx_array_release(out);
    /* max of u8 table values along axis 0 */
    gx_array *t = NULL, *mx = NULL;
    int64_t tn = 200;
    GXT_OK(la_array(ctx, GX_U8, tn, la_rand_below, &tn, &t));
    gx_bind bt = GX_BIND("t", t);
    int ax0 = 0;
    gx_reduce_opts om = {.axes = &ax0, .naxes = 1, .arrays = &bt, .narrays = 1};
    GXT_OK(gx_mapreduce_to(ctx, "k -> t[(k * 7) % 200]", "max", 1, &it2, &om, &mx));
    double *th = la_host(t), *mh = la_host(mx);
    for (int64_t j = 0; j < C; j++) {
        double want = -1;
        for (int64_t i = 0; i < R; i++)
            want = fmax(want, th[((i * C + j) * 7) % 200]);
        GXT_NEAR(mh[j], want, 0);
    }
    free(rh);
    free(ih);
    free(th);
    free(mh);
    gx_array *rel[] = {re, im, z, z2, it, it2, t, mx};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        gx_array_release(rel[k]);
}

/* Out of range along axes: GX_ERR_INDEX naming the output element, the reduced
 * element, the index and the axis; unchecked gives the right values on valid input. */
GXT_TEST(lam_arrays_axes_out_of_range)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t R = 4, C = 5, shi[2] = {R, 1}, shj[2] = {1, C}, shm[2] = {R, C};
    gx_array *m0 = NULL, *m = NULL, *i0 = NULL, *j0 = NULL, *ii = NULL, *jj = NULL, *out = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, R * C, 1, 1, &m0));
    GXT_OK(gx_array_reshape(m0, 2, shm, &m));
    GXT_OK(gx_array_iota(ctx, GX_I64, R, 0, 1, &i0));
    GXT_OK(gx_array_iota(ctx, GX_I64, C, 0, 1, &j0));
    GXT_OK(gx_array_reshape(i0, 2, shi, &ii));
    GXT_OK(gx_array_reshape(j0, 2, shj, &jj));
    gx_bind b = GX_BIND("m", m);
    gx_array *in[2] = {ii, jj};
    int ax1 = 1, ax0 = 0;
    gx_reduce_opts o = {.axes = &ax1, .naxes = 1, .arrays = &b, .narrays = 1};
    GXT_STATUS(gx_mapreduce_to(ctx, "i, j -> m[i, j + 1]", "+", 2, in, &o, &out), GX_ERR_INDEX);
    GXT_MSG_HAS("gx_mapreduce_to");
    GXT_MSG_HAS("index 5");
    GXT_MSG_HAS("axis 1 of bound array 'm'");
    GXT_MSG_HAS("(4, 5)");
    GXT_MSG_HAS("output element 0");
    GXT_MSG_HAS("reduced element 4");
    GXT_CHECK(out == NULL);
    o.axes = &ax0; /* the column kernel: first offender is row -1 of output 0 */
    GXT_STATUS(gx_mapreduce_to(ctx, "i, j -> m[i - 1, j]", "+", 2, in, &o, &out), GX_ERR_INDEX);
    GXT_MSG_HAS("index -1");
    GXT_MSG_HAS("axis 0");
    GXT_MSG_HAS("output element 0");
    GXT_MSG_HAS("reduced element 0");
    o.unchecked = 1;
    GXT_OK(gx_mapreduce_to(ctx, "i, j -> m[i, j]", "+", 2, in, &o, &out));
    double *h = la_host(out);
    for (int64_t j = 0; j < C; j++) {
        double want = 0;
        for (int64_t i = 0; i < R; i++)
            want += (double)(i * C + j + 1);
        GXT_NEAR(h[j], want, 0);
    }
    free(h);
    gx_array *rel[] = {m0, m, i0, j0, ii, jj, out};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        gx_array_release(rel[k]);
}

/* Pipeline terminals reading bound arrays: cumsum of table[idx[i]] (a bound map
 * before gx_pipe_scan), gx_pipe_mapreduce with its own bindings (the pipe keeps none
 * of them), reduce after a bound map; out of range in each -> GX_ERR_INDEX. */
GXT_TEST(lam_arrays_pipe_terminals)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t sizes[] = {0, 1, 31, 32, 33, 5003};
    static const gx_dtype tdt[] = {GX_I32, GX_U8, GX_F64, GX_I64};
    int64_t tn = 97;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t ti = 0; ti < sizeof tdt / sizeof tdt[0]; ti++) {
            int64_t n = sizes[si];
            gx_array *table = NULL, *idx = NULL, *cs = NULL;
            GXT_OK(la_array(ctx, tdt[ti], tn, tdt[ti] == GX_U8 ? la_rand_below : la_rand_small, &tn, &table));
            GXT_OK(la_array(ctx, (ti % 2) ? GX_U16 : GX_I32, n, la_rand_below, &tn, &idx));
            gx_bind b[2] = {GX_BIND("table", table), GX_BIND("idx", idx)};
            gx_pipe_opts pm = {.arrays = b, .narrays = 2, .dtype = GX_F64};
            gx_pipe *p = NULL;
            GXT_OK(gx_pipe_iota(ctx, GX_I64, n, 0, 1, &p));
            GXT_OK(gx_pipe_map(p, "i -> f64(table[idx[i]])", &pm));
            gx_pipe_opts ps = {.dtype = GX_F64};
            GXT_OK(gx_pipe_scan(p, "+", &ps, &cs));
            gx_scalar mx;
            if (n > 0)
                GXT_OK(gx_pipe_max(p, &mx));
            gx_pipe_destroy(p);
            double *th = la_host(table), *ih = la_host(idx), *ch = la_host(cs), run = 0, best = -1e300;
            for (int64_t k = 0; k < n; k++) {
                double v = th[(int64_t)ih[k]];
                run += v;
                best = fmax(best, v);
                if (ch[k] != run)
                    GXT_FAIL_AT(__FILE__, __LINE__, "%s n %lld: cumsum[%lld] %g vs %g", gx_dtype_name(tdt[ti]),
                                (long long)n, (long long)k, ch[k], run);
            }
            if (n > 0)
                GXT_NEAR(mx.v.f, best, 0);
            /* gx_pipe_mapreduce binds for its map only */
            GXT_OK(gx_pipe_from_arrays(ctx, 1, &idx, &p));
            gx_bind bt = GX_BIND("table", table);
            gx_pipe_opts po = {.arrays = &bt, .narrays = 1, .dtype = GX_F64};
            gx_scalar sum;
            GXT_OK(gx_pipe_mapreduce(p, "i -> f64(table[i]) * 2", "+", &po, &sum));
            GXT_NEAR(sum.v.f, 2 * run, 1e-9 * (fabs(run) + 1));
            gx_bind other = GX_BIND("table", idx); /* the name is free again */
            gx_pipe_opts po2 = {.arrays = &other, .narrays = 1};
            GXT_OK(gx_pipe_map(p, "i -> table[0] + i", &po2));
            gx_pipe_destroy(p);
            if (n > 2) { /* out of range: idx's values + 95 pass 97 */
                GXT_OK(gx_pipe_from_arrays(ctx, 1, &idx, &p));
                GXT_STATUS(gx_pipe_mapreduce(p, "i -> table[i + 95]", "+", &po, &sum), GX_ERR_INDEX);
                GXT_MSG_HAS("pipeline: index");
                GXT_MSG_HAS("bound array 'table'");
                gx_pipe_destroy(p);
                GXT_OK(gx_pipe_iota(ctx, GX_I64, n, 0, 1, &p));
                GXT_OK(gx_pipe_map(p, "i -> table[i]", &po));
                gx_array *bad = NULL;
                GXT_STATUS(gx_pipe_scan(p, "+", NULL, &bad), n > tn ? GX_ERR_INDEX : GX_OK);
                if (n > tn) {
                    GXT_MSG_HAS("index 97");
                    GXT_MSG_HAS("source index of its segment) 97");
                    GXT_CHECK(bad == NULL);
                }
                gx_array_release(bad);
                gx_pipe_destroy(p);
            }
            free(th);
            free(ih);
            free(ch);
            gx_array_release(cs);
            gx_array_release(table);
            gx_array_release(idx);
        }
}
