#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* test_array.c -- arrays: round trips, views, reshape, fill/iota, copies, bad input. */
#include "gx_test.h"

static const gx_dtype all_dtypes[] = {GX_BOOL, GX_I8,  GX_I16, GX_I32, GX_I64, GX_U8,
                                      GX_U16,  GX_U32, GX_U64, GX_F32, GX_F64};
#define NDT (int)(sizeof all_dtypes / sizeof all_dtypes[0])

/* Random bytes that are valid values of the dtype (bool: 0/1; floats: finite). */
static void random_fill(gx_dtype t, void *buf, int64_t n)
{
    size_t esz = gx_dtype_size(t);
    unsigned char *p = buf;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = gxt_rand_u64();
        if (t == GX_BOOL)
            p[i] = r & 1;
        else if (t == GX_F32) {
            float f = (float)(gxt_rand01() * 2000 - 1000);
            memcpy(p + i * 4, &f, 4);
        } else if (t == GX_F64) {
            double f = gxt_rand01() * 2e6 - 1e6;
            memcpy(p + i * 8, &f, 8);
        } else
            memcpy(p + (size_t)i * esz, &r, esz);
    }
}

GXT_TEST(array_roundtrip_all_dtypes)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t sizes[] = {0, 1, 31, 32, 33, 1000, 4097};
    for (int d = 0; d < NDT; d++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            int64_t n = sizes[k];
            size_t bytes = (size_t)n * gx_dtype_size(all_dtypes[d]);
            void *in = malloc(bytes + 1), *out = malloc(bytes + 1);
            random_fill(all_dtypes[d], in, n);
            memset(out, 0xA5, bytes + 1);
            gx_array *a = NULL;
            GXT_OK(gx_array_from_host(ctx, all_dtypes[d], 1, &n, in, &a));
            GXT_OK(gx_array_to_host(a, out, bytes));
            GXT_CHECK(memcmp(in, out, bytes) == 0);
            int64_t sz = -1;
            GXT_OK(gx_array_size(a, &sz));
            GXT_EQ_I64(sz, n);
            gx_array_desc desc;
            GXT_OK(gx_array_describe(a, &desc));
            GXT_CHECK(desc.dtype == all_dtypes[d] && desc.ndim == 1 && desc.contiguous && !desc.is_view);
            GXT_OK(gx_array_release(a));
            free(in);
            free(out);
        }
}

GXT_TEST(array_fill_and_iota_values)
{
    gx_ctx *ctx = gxt_ctx();
    for (int d = 0; d < NDT; d++) {
        gx_dtype t = all_dtypes[d];
        int64_t shape[2] = {7, 9};
        gx_array *a = NULL, *z = NULL, *o = NULL, *io = NULL;
        GXT_OK(gx_array_empty(ctx, t, 2, shape, &a));
        GXT_OK(gx_array_fill_f64(a, 5.0));
        GXT_OK(gx_array_zeros(ctx, t, 2, shape, &z));
        GXT_OK(gx_array_ones(ctx, t, 2, shape, &o));
        unsigned char buf[63 * 8];
        GXT_OK(gx_array_to_host(a, buf, sizeof buf));
        for (int i = 0; i < 63; i++) {
            double v;
            switch (t) {
            case GX_BOOL: v = buf[i]; break;
            case GX_I8: v = (int8_t)buf[i]; break;
            case GX_U8: v = buf[i]; break;
            case GX_I16: {
                int16_t x;
                memcpy(&x, buf + 2 * i, 2);
                v = x;
                break;
            }
            case GX_U16: {
                uint16_t x;
                memcpy(&x, buf + 2 * i, 2);
                v = x;
                break;
            }
            case GX_I32: {
                int32_t x;
                memcpy(&x, buf + 4 * i, 4);
                v = x;
                break;
            }
            case GX_U32: {
                uint32_t x;
                memcpy(&x, buf + 4 * i, 4);
                v = x;
                break;
            }
            case GX_F32: {
                float x;
                memcpy(&x, buf + 4 * i, 4);
                v = x;
                break;
            }
            case GX_I64: {
                int64_t x;
                memcpy(&x, buf + 8 * i, 8);
                v = (double)x;
                break;
            }
            case GX_U64: {
                uint64_t x;
                memcpy(&x, buf + 8 * i, 8);
                v = (double)x;
                break;
            }
            default: {
                double x;
                memcpy(&x, buf + 8 * i, 8);
                v = x;
                break;
            }
            }
            GXT_NEAR(v, t == GX_BOOL ? 1.0 : 5.0, 0);
        }
        GXT_OK(gx_array_to_host(z, buf, sizeof buf));
        for (size_t i = 0; i < 63 * gx_dtype_size(t); i++)
            GXT_CHECK(buf[i] == 0);
        GXT_OK(gx_array_to_host(o, buf, sizeof buf));
        GXT_CHECK(buf[0] == 1 || t == GX_F32 || t == GX_F64); /* little-endian integer 1 */
        /* iota: start 3, step 2 -> 3, 5, 7, ... in the dtype's arithmetic */
        GXT_OK(gx_array_iota(ctx, t, 40, 3, 2, &io));
        GXT_OK(gx_array_to_host(io, buf, sizeof buf));
        for (int i = 0; i < 40; i++) {
            double want = 3 + 2.0 * i, got;
            if (t == GX_F32) {
                float x;
                memcpy(&x, buf + 4 * i, 4);
                got = x;
            } else if (t == GX_F64) {
                memcpy(&got, buf + 8 * i, 8);
            } else if (t == GX_BOOL) {
                got = buf[i];
                want = 1;
            } else if (gx_dtype_size(t) == 1) {
                got = t == GX_I8 ? (int8_t)buf[i] : buf[i];
            } else if (gx_dtype_size(t) == 2) {
                uint16_t x;
                memcpy(&x, buf + 2 * i, 2);
                got = x;
            } else if (gx_dtype_size(t) == 4) {
                uint32_t x;
                memcpy(&x, buf + 4 * i, 4);
                got = x;
            } else {
                uint64_t x;
                memcpy(&x, buf + 8 * i, 8);
                got = (double)x;
            }
            GXT_NEAR(got, want, 0);
        }
        gx_array_release(a);
        gx_array_release(z);
        gx_array_release(o);
        gx_array_release(io);
    }
}

GXT_TEST(array_iota_wraps_in_narrow_ints)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *a = NULL;
    GXT_OK(gx_array_iota(ctx, GX_U8, 300, 0, 1, &a));
    uint8_t v[300];
    GXT_OK(gx_array_to_host(a, v, sizeof v));
    for (int i = 0; i < 300; i++)
        GXT_EQ_I64(v[i], i & 255);
    gx_array_release(a);
}

GXT_TEST(array_views_write_through_and_keep_parent_alive)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t shape[2] = {6, 8};
    int32_t host[48], back[48];
    for (int i = 0; i < 48; i++)
        host[i] = i;
    gx_array *a = NULL, *v = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 2, shape, host, &a));
    gx_slice sl[2] = {{1, 5, 2}, {-1, GX_END, -3}}; /* rows 1,3; cols 7,4,1 */
    GXT_OK(gx_array_view(a, sl, &v));
    gx_array_desc d;
    GXT_OK(gx_array_describe(v, &d));
    GXT_EQ_I64(d.shape[0], 2);
    GXT_EQ_I64(d.shape[1], 3);
    GXT_CHECK(d.is_view && !d.contiguous);
    int32_t got[6];
    GXT_OK(gx_array_to_host(v, got, sizeof got));
    const int32_t want[6] = {15, 12, 9, 31, 28, 25};
    for (int i = 0; i < 6; i++)
        GXT_EQ_I64(got[i], want[i]);
    int32_t m1 = -1;
    GXT_OK(gx_array_fill(v, &m1));
    GXT_OK(gx_array_to_host(a, back, sizeof back));
    for (int i = 0; i < 48; i++) {
        int r = i / 8, c = i % 8;
        bool in_view = (r == 1 || r == 3) && (c == 7 || c == 4 || c == 1);
        GXT_EQ_I64(back[i], in_view ? -1 : i);
    }
    /* Release the parent: the view keeps the storage alive. */
    GXT_OK(gx_array_release(a));
    GXT_OK(gx_array_to_host(v, got, sizeof got));
    for (int i = 0; i < 6; i++)
        GXT_EQ_I64(got[i], -1);
    /* Upload into a view (scatter). */
    int32_t up[6] = {10, 20, 30, 40, 50, 60};
    GXT_OK(gx_array_from_host_into(up, sizeof up, v));
    GXT_OK(gx_array_to_host(v, got, sizeof got));
    for (int i = 0; i < 6; i++)
        GXT_EQ_I64(got[i], up[i]);
    GXT_OK(gx_array_release(v));
}

GXT_TEST(array_copy_between_strided_views)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t shape[2] = {33, 31};
    double host[33 * 31], back[33 * 31];
    for (int i = 0; i < 33 * 31; i++)
        host[i] = gxt_rand01();
    gx_array *a = NULL, *t = NULL, *b = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 2, shape, host, &a));
    int perm[2] = {1, 0};
    GXT_OK(gx_array_permute(a, perm, &t)); /* 31 x 33 transposed view */
    int64_t tshape[2] = {31, 33};
    GXT_OK(gx_array_empty(ctx, GX_F64, 2, tshape, &b));
    GXT_OK(gx_array_copy_into(t, b)); /* strided -> dense */
    GXT_OK(gx_array_to_host(b, back, sizeof back));
    for (int i = 0; i < 31; i++)
        for (int j = 0; j < 33; j++)
            GXT_CHECK(back[i * 33 + j] == host[j * 31 + i]);
    /* dense -> strided (every other row, reversed columns) of another array */
    gx_array *big = NULL, *bv = NULL, *src = NULL;
    int64_t bshape[2] = {62, 33};
    GXT_OK(gx_array_zeros(ctx, GX_F64, 2, bshape, &big));
    gx_slice sl[2] = {{0, GX_END, 2}, {-1, GX_END, -1}};
    GXT_OK(gx_array_view(big, sl, &bv));
    GXT_OK(gx_array_clone(t, GX_DTYPE_DEFAULT, &src));
    GXT_OK(gx_array_copy_into(src, bv));
    double bb[62 * 33];
    GXT_OK(gx_array_to_host(big, bb, sizeof bb));
    for (int i = 0; i < 62; i++)
        for (int j = 0; j < 33; j++)
            GXT_CHECK(bb[i * 33 + j] == (i % 2 ? 0.0 : host[(32 - j) * 31 + i / 2]));
    gx_array_release(a);
    gx_array_release(t);
    gx_array_release(b);
    gx_array_release(big);
    gx_array_release(bv);
    gx_array_release(src);
}

GXT_TEST(array_reshape)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *a = NULL, *r = NULL, *v = NULL, *bad = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I64, 24, 0, 1, &a));
    int64_t s3[3] = {2, -1, 4};
    GXT_OK(gx_array_reshape(a, 3, s3, &r));
    gx_array_desc d;
    GXT_OK(gx_array_describe(r, &d));
    GXT_EQ_I64(d.shape[1], 3);
    int64_t idx[3] = {1, 2, 3}, val = 0;
    GXT_OK(gx_array_get(r, idx, &val));
    GXT_EQ_I64(val, 1 * 12 + 2 * 4 + 3);
    int64_t s5[1] = {5};
    GXT_STATUS(gx_array_reshape(a, 1, s5, &bad), GX_ERR_SHAPE);
    GXT_CHECK(bad == NULL);
    int64_t s2[2] = {-1, -1};
    GXT_STATUS(gx_array_reshape(a, 2, s2, &bad), GX_ERR_SHAPE);
    gx_slice sl = {0, GX_END, 2};
    GXT_OK(gx_array_view(a, &sl, &v));
    int64_t s12[1] = {12};
    GXT_STATUS(gx_array_reshape(v, 1, s12, &bad), GX_ERR_SHAPE);
    GXT_MSG_HAS("clone");
    gx_array_release(a);
    gx_array_release(r);
    gx_array_release(v);
}

GXT_TEST(array_get_set_and_clone_convert)
{
    gx_ctx *ctx = gxt_ctx();
    double h[5] = {-2.7, -0.5, 0.0, 1.5, 300.9};
    int64_t n = 5;
    gx_array *a = NULL, *i = NULL, *b = NULL, *u = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, h, &a));
    int64_t k = 3;
    double x = 42.25;
    GXT_OK(gx_array_set(a, &k, &x));
    double y = 0;
    GXT_OK(gx_array_get(a, &k, &y));
    GXT_CHECK(y == 42.25);
    GXT_OK(gx_array_clone(a, GX_I32, &i));
    int32_t iv[5];
    GXT_OK(gx_array_to_host(i, iv, sizeof iv));
    GXT_EQ_I64(iv[0], -2);
    GXT_EQ_I64(iv[3], 42);
    GXT_EQ_I64(iv[4], 300);
    GXT_OK(gx_array_clone(a, GX_BOOL, &b));
    uint8_t bv[5];
    GXT_OK(gx_array_to_host(b, bv, sizeof bv));
    GXT_CHECK(bv[0] == 1 && bv[1] == 1 && bv[2] == 0 && bv[3] == 1);
    GXT_OK(gx_array_clone(i, GX_U8, &u)); /* C conversion: 300 -> 44 */
    uint8_t uv[5];
    GXT_OK(gx_array_to_host(u, uv, sizeof uv));
    GXT_EQ_I64(uv[4], 44);
    int64_t out_of_range = 5;
    GXT_STATUS(gx_array_get(a, &out_of_range, &y), GX_ERR_SHAPE);
    gx_array_release(a);
    gx_array_release(i);
    gx_array_release(b);
    gx_array_release(u);
}

GXT_TEST(array_empty_arrays_are_valid)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t shape[3] = {4, 0, 3};
    gx_array *a = NULL, *b = NULL, *c = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 3, shape, &a));
    int64_t sz = -1;
    GXT_OK(gx_array_size(a, &sz));
    GXT_EQ_I64(sz, 0);
    GXT_OK(gx_array_similar(a, &b));
    GXT_OK(gx_array_copy_into(a, b));
    GXT_OK(gx_array_fill_f64(a, 1));
    GXT_OK(gx_array_to_host(a, NULL, 0));
    GXT_OK(gx_array_clone(a, GX_I8, &c));
    gx_array *m = NULL;
    GXT_OK(gx_map(ctx, "x -> x + 1", 1, &a, NULL, &m));
    GXT_OK(gx_array_size(m, &sz));
    GXT_EQ_I64(sz, 0);
    gx_array *scalar = NULL;
    GXT_OK(gx_array_ones(ctx, GX_I32, 0, NULL, &scalar)); /* 0-d: one element */
    int32_t one = 0;
    GXT_OK(gx_array_get(scalar, NULL, &one));
    GXT_EQ_I64(one, 1);
    gx_array_release(a);
    gx_array_release(b);
    gx_array_release(c);
    gx_array_release(m);
    gx_array_release(scalar);
}

GXT_TEST(array_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *a = NULL, *b = NULL;
    int64_t neg[1] = {-3}, big[2] = {INT64_MAX / 2, 4}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, one[1] = {10};
    GXT_STATUS(gx_array_empty(NULL, GX_F32, 1, one, &a), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_array_empty(ctx, GX_F32, 1, one, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_array_empty(ctx, GX_F32, 1, neg, &a), GX_ERR_SHAPE);
    GXT_MSG_HAS("negative");
    GXT_STATUS(gx_array_empty(ctx, GX_F32, 2, big, &a), GX_ERR_SHAPE);
    GXT_MSG_HAS("overflow");
    GXT_STATUS(gx_array_empty(ctx, GX_F32, 9, nine, &a), GX_ERR_SHAPE);
    GXT_STATUS(gx_array_empty(ctx, GX_F32, 1, NULL, &a), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_array_empty(ctx, (gx_dtype)99, 1, one, &a), GX_ERR_DTYPE);
    GXT_STATUS(gx_array_empty(ctx, GX_DTYPE_DEFAULT, 1, one, &a), GX_ERR_DTYPE); /* 0 is not an element type */
    GXT_STATUS(gx_array_empty(ctx, GX_DTYPE_COUNT, 1, one, &a), GX_ERR_DTYPE); /* f16 and c64 became supported */
    GXT_CHECK(a == NULL);
    /* mismatched copies */
    int64_t other[1] = {11};
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, one, &a));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, other, &b));
    GXT_STATUS(gx_array_copy_into(b, a), GX_ERR_SHAPE);
    GXT_MSG_HAS("(10,) vs source (11,)");
    gx_array_release(b);
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, one, &b));
    GXT_STATUS(gx_array_copy_into(b, a), GX_ERR_DTYPE);
    /* host buffer too small */
    float small[3];
    GXT_STATUS(gx_array_to_host(a, small, sizeof small), GX_ERR_INVALID_ARGUMENT);
    /* out-of-range views */
    gx_array *v = NULL;
    gx_slice s1 = {0, 11, 1}, s2 = {0, 5, 0}, s3 = {-11, GX_END, 1};
    GXT_STATUS(gx_array_view(a, &s1, &v), GX_ERR_SHAPE);
    GXT_STATUS(gx_array_view(a, &s2, &v), GX_ERR_SHAPE);
    GXT_STATUS(gx_array_view(a, &s3, &v), GX_ERR_SHAPE);
    int perm[1] = {1};
    GXT_STATUS(gx_array_permute(a, perm, &v), GX_ERR_SHAPE);
    /* overlapping copy inside one storage */
    gx_slice lo = {0, 8, 1}, hi = {2, 10, 1};
    gx_array *vl = NULL, *vh = NULL;
    GXT_OK(gx_array_view(a, &lo, &vl));
    GXT_OK(gx_array_view(a, &hi, &vh));
    GXT_STATUS(gx_array_copy_into(vh, vl), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(vl);
    gx_array_release(vh);
    /* double release through a stale handle */
    GXT_OK(gx_array_release(b));
    GXT_STATUS(gx_array_release(b), GX_ERR_INVALID_HANDLE);
    GXT_STATUS(gx_array_fill_f64(b, 1), GX_ERR_INVALID_HANDLE);
    GXT_OK(gx_array_release(NULL));
    GXT_OK(gx_ctx_destroy(NULL));
    gx_array_release(a);
}

GXT_TEST(array_context_destroy_invalidates_handles)
{
    gx_ctx *ctx = NULL;
    GXT_OK(gx_ctx_create(&ctx, GX_BACKEND_AUTO));
    gx_array *a = NULL;
    int64_t n = 100;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &a));
    GXT_OK(gx_ctx_destroy(ctx));
    GXT_STATUS(gx_array_release(a), GX_ERR_INVALID_HANDLE);
    GXT_STATUS(gx_sync(ctx), GX_ERR_INVALID_HANDLE);
}

GXT_TEST(array_memory_stats_and_limit)
{
    gx_ctx *ctx = gxt_ctx();
    gx_memory_stats m0, m1, m2;
    GXT_OK(gx_memory_stats_get(ctx, &m0));
    gx_array *a = NULL, *b = NULL;
    int64_t n = 1 << 20;
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &a));
    GXT_OK(gx_memory_stats_get(ctx, &m1));
    GXT_EQ_I64(m1.in_use - m0.in_use, 4 << 20);
    GXT_CHECK(m1.peak >= m1.in_use);
    GXT_CHECK(m1.reserved >= m1.in_use);
    GXT_OK(gx_memory_set_limit(ctx, m1.in_use + (1 << 20)));
    GXT_STATUS(gx_array_empty(ctx, GX_F32, 1, &n, &b), GX_ERR_OUT_OF_MEMORY);
    GXT_MSG_HAS("limit");
    GXT_MSG_HAS("4.00 MiB");
    GXT_OK(gx_memory_set_limit(ctx, 0));
    GXT_OK(gx_array_release(a));
    GXT_OK(gx_memory_stats_get(ctx, &m2));
    GXT_EQ_I64(m2.in_use, m0.in_use);
    GXT_EQ_I64(m2.peak, m1.peak);
    GXT_OK(gx_memory_trim(ctx));
}

GXT_TEST(array_backend_selection)
{
    gx_ctx *c = NULL;
    GXT_STATUS(gx_ctx_create(&c, (gx_backend_kind)42), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(c == NULL);
    int n = -1;
    GXT_OK(gx_cuda_device_count(&n));
    if (n == 0) {
        GXT_STATUS(gx_ctx_create(&c, GX_BACKEND_CUDA), GX_ERR_NO_DEVICE);
        GXT_MSG_HAS("GX_BACKEND=cpu");
    }
    GXT_OK(gx_ctx_create(&c, GX_BACKEND_CPU));
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(c, &k));
    GXT_CHECK(k == GX_BACKEND_CPU);
    GXT_OK(gx_ctx_destroy(c));
    char info[8192];
    size_t need = 0;
    GXT_OK(gx_info_text(NULL, info, sizeof info, &need));
    GXT_CHECK(strstr(info, "gx 0.1.0") != NULL);
    GXT_CHECK(strstr(info, "backend:") != NULL);
    GXT_CHECK(need > 100);
    GXT_CHECK(strcmp(gx_status_string(GX_ERR_SHAPE), "GX_ERR_SHAPE") == 0);
    GXT_CHECK(strcmp(gx_version(), GX_VERSION_STRING) == 0);
}

GXT_TEST(array_out_of_memory_is_an_error)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *a = NULL;
    int64_t huge[2] = {1 << 20, 1 << 28}; /* 2^48 f32 = 1 PiB: more than any device */
    /* The backend's own refusal, past any limit (the CPU backend has one by default,
     * which would refuse first: tests/test_contract.c checks that path). */
    GXT_OK(gx_memory_set_limit(ctx, 0));
    GXT_STATUS(gx_array_empty(ctx, GX_F32, 2, huge, &a), GX_ERR_OUT_OF_MEMORY);
    GXT_MSG_HAS("1048576.00 GiB");
    GXT_MSG_HAS("pool state");
    GXT_CHECK(a == NULL);
    gx_memory_stats m;
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_CHECK(m.retries >= 1); /* it trimmed the pool and tried again */
    /* the context still works afterwards */
    int64_t n = 1000;
    GXT_OK(gx_array_ones(ctx, GX_F32, 1, &n, &a));
    float v = 0;
    int64_t k = 999;
    GXT_OK(gx_array_get(a, &k, &v));
    GXT_CHECK(v == 1.0f);
    gx_array_release(a);
}

/* Large copies from pageable memory go through page-locked chunks on CUDA: sizes
 * that are not multiples of a chunk, both directions, against the host data. */
GXT_TEST(array_large_roundtrip_staged)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t sizes[] = {(4 << 20) / 4, (5 << 20) + 12345, (16 << 20) + 7};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k];
        uint32_t *h = malloc((size_t)n * 4), *back = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++)
            h[i] = (uint32_t)gxt_rand_u64();
        memset(back, 0xA5, (size_t)n * 4);
        gx_array *a = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_U32, 1, &n, h, &a));
        GXT_OK(gx_array_to_host(a, back, (size_t)n * 4));
        GXT_CHECK(memcmp(h, back, (size_t)n * 4) == 0);
        /* and back in through from_host_into with new data */
        for (int64_t i = 0; i < n; i += 4099)
            h[i] ^= 0x5A5A5A5Au;
        GXT_OK(gx_array_from_host_into(h, (size_t)n * 4, a));
        GXT_OK(gx_array_to_host(a, back, (size_t)n * 4));
        GXT_CHECK(memcmp(h, back, (size_t)n * 4) == 0);
        gx_array_release(a);
        free(h);
        free(back);
    }
}

/* gx keeps its own buffers (reduction partials and counters, scan status) for
 * reuse; they are counted as scratch, so in_use is exactly what live arrays hold
 * and reads 0 once every array is released. */
GXT_TEST(array_memory_scratch_apart_from_arrays)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 100000;
    gx_array *x = NULL, *y = NULL;
    gx_scalar s;
    GXT_OK(gx_array_iota(ctx, GX_F64, n, 0, 1, &x));
    GXT_OK(gx_reduce(ctx, "+", x, NULL, &s));
    GXT_NEAR(gx_scalar_to_f64(s), 0.5 * (double)n * (double)(n - 1), 0); /* integers below 2^53: exact */
    GXT_OK(gx_scan(ctx, "a, b -> a + b", x, NULL, &y));
    GXT_OK(gx_array_release(x));
    GXT_OK(gx_array_release(y));
    gx_memory_stats m0, m1;
    GXT_OK(gx_memory_stats_get(ctx, &m0));
    GXT_EQ_I64(m0.in_use, 0);
    GXT_CHECK(m0.reserved >= m0.scratch); /* scratch comes from the same pool */
    /* An array adds exactly its bytes to in_use, nothing to scratch. */
    GXT_OK(gx_array_empty(ctx, GX_F64, 1, &n, &x));
    GXT_OK(gx_memory_stats_get(ctx, &m1));
    GXT_EQ_I64(m1.in_use, n * 8);
    GXT_EQ_I64(m1.scratch, m0.scratch);
    /* The limit covers scratch too, and the out-of-memory message names it apart. */
    GXT_OK(gx_memory_set_limit(ctx, m1.in_use + m1.scratch + 1000));
    GXT_STATUS(gx_array_empty(ctx, GX_F64, 1, &n, &y), GX_ERR_OUT_OF_MEMORY);
    GXT_MSG_HAS("in use by live arrays");
    GXT_MSG_HAS("held by gx's scratch buffers");
    GXT_OK(gx_memory_set_limit(ctx, 0));
    /* gx info shows scratch on its own line. */
    char info[8192];
    GXT_OK(gx_info_text(ctx, info, sizeof info, NULL));
    GXT_CHECK(strstr(info, "scratch (gx internal)") != NULL);
    GXT_OK(gx_array_release(x));
    GXT_OK(gx_memory_stats_get(ctx, &m1));
    GXT_EQ_I64(m1.in_use, 0);
}
