#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* test_print.c -- gx_array_format / gx_array_print: every dtype, 0-d, empty, n-d,
 * summaries, views, the cap/needed convention, options and bad input.  Expected
 * texts are written out by hand. */
#include "gx_test.h"

/* The whole text of a (NULL on failure, after reporting it). */
static char *text_of(const gx_array *a, const gx_print_opts *o)
{
    size_t need = 0;
    gx_status s = gx_array_format(a, o, NULL, 0, &need);
    if (s != GX_OK || need == 0) {
        GXT_FAIL_AT(__FILE__, __LINE__, "gx_array_format (size) -> %s: %s", gx_status_string(s), gx_last_error());
        return NULL;
    }
    char *buf = malloc(need);
    size_t need2 = 0;
    s = gx_array_format(a, o, buf, need, &need2);
    if (s != GX_OK || need2 != need || strlen(buf) + 1 != need) {
        GXT_FAIL_AT(__FILE__, __LINE__, "gx_array_format -> %s (needed %zu then %zu, strlen %zu): %s",
                    gx_status_string(s), need, need2, strlen(buf), gx_last_error());
        free(buf);
        return NULL;
    }
    return buf;
}

static void expect_text_at(const char *file, int line, const gx_array *a, const gx_print_opts *o, const char *want)
{
    char *got = text_of(a, o);
    if (got && strcmp(got, want) != 0)
        GXT_FAIL_AT(file, line, "text differs.\n--- want:\n%s\n--- got:\n%s\n---", want, got);
    free(got);
}
#define EXPECT_TEXT(a, o, want) expect_text_at(__FILE__, __LINE__, (a), (o), (want))

static gx_array *make(gx_dtype t, int ndim, const int64_t *shape, const void *host)
{
    gx_array *a = NULL;
    gx_status s = gx_array_from_host(gxt_ctx(), t, ndim, shape, host, &a);
    if (s != GX_OK)
        GXT_FAIL_AT(__FILE__, __LINE__, "gx_array_from_host -> %s: %s", gx_status_string(s), gx_last_error());
    return a;
}

/* ------------------------------------------------------------ dtypes */

/* One 1-d array of n elements per case, printed with the defaults. */
typedef struct print_case {
    gx_dtype t;
    const void *v;
    const char *want;
} print_case;

static void expect_1d_cases(const print_case *cases, size_t ncases, int64_t n)
{
    for (size_t i = 0; i < ncases; i++) {
        gx_array *a = make(cases[i].t, 1, &n, cases[i].v);
        if (!a)
            return;
        EXPECT_TEXT(a, NULL, cases[i].want);
        GXT_OK(gx_array_release(a));
    }
}

GXT_TEST(print_2d_f32)
{
    const float v[] = {0.5f, 1, 2, 3, 4, 5};
    const int64_t sh[] = {2, 3};
    gx_array *a = make(GX_F32, 2, sh, v);
    GXT_CHECK(a);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL,
                "gx_array f32 [2, 3]\n"
                "[[0.5,   1,   2],\n"
                " [  3,   4,   5]]");
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_bool)
{
    const uint8_t v[] = {1, 0, 1};
    const int64_t n = 3;
    gx_array *a = make(GX_BOOL, 1, &n, v);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array bool [3]\n[ true, false,  true]");
    GXT_OK(gx_array_release(a));

    const uint8_t t[] = {1, 1};
    const int64_t two = 2;
    a = make(GX_BOOL, 1, &two, t);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array bool [2]\n[true, true]");
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_signed_ints_limits)
{
    const int64_t n = 3;
    const int8_t v8[] = {INT8_MIN, INT8_MAX, 0};
    const int16_t v16[] = {INT16_MIN, INT16_MAX, -1};
    const int32_t v32[] = {INT32_MIN, INT32_MAX, 7};
    const int64_t v64[] = {INT64_MIN, INT64_MAX, -42};
    const print_case cases[] = {
        {GX_I8, v8, "gx_array i8 [3]\n[-128,  127,    0]"},
        {GX_I16, v16, "gx_array i16 [3]\n[-32768,  32767,     -1]"},
        {GX_I32, v32, "gx_array i32 [3]\n[-2147483648,  2147483647,           7]"},
        {GX_I64, v64, "gx_array i64 [3]\n[-9223372036854775808,  9223372036854775807,                  -42]"},
    };
    expect_1d_cases(cases, sizeof cases / sizeof cases[0], n);
}

GXT_TEST(print_unsigned_ints_limits)
{
    const int64_t n = 3;
    const uint8_t v8[] = {0, UINT8_MAX, 9};
    const uint16_t v16[] = {0, UINT16_MAX, 10};
    const uint32_t v32[] = {0, UINT32_MAX, 11};
    const uint64_t v64[] = {0, UINT64_MAX, 12};
    const print_case cases[] = {
        {GX_U8, v8, "gx_array u8 [3]\n[  0, 255,   9]"},
        {GX_U16, v16, "gx_array u16 [3]\n[    0, 65535,    10]"},
        {GX_U32, v32, "gx_array u32 [3]\n[         0, 4294967295,         11]"},
        {GX_U64, v64, "gx_array u64 [3]\n[                   0, 18446744073709551615,                   12]"},
    };
    expect_1d_cases(cases, sizeof cases / sizeof cases[0], n);
}

GXT_TEST(print_f32_digits)
{
    /* 6 significant digits by default, no trailing zeros; 0.1f prints as 0.1. */
    const float v[] = {0.1f, -1.25f, 3.14159274f, 100, 0};
    const int64_t n = 5;
    gx_array *a = make(GX_F32, 1, &n, v);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array f32 [5]\n[    0.1,   -1.25, 3.14159,     100,       0]");
    gx_print_opts o = {.precision = 3};
    EXPECT_TEXT(a, &o, "gx_array f32 [5]\n[  0.1, -1.25,  3.14,   100,     0]");
    GXT_OK(gx_array_release(a));

    /* A value that needs an exponent puts the whole array in e-notation. */
    const float w[] = {1e-5f, 2.5f, 1e10f};
    const int64_t three = 3;
    a = make(GX_F32, 1, &three, w);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array f32 [3]\n[  1e-05, 2.5e+00,   1e+10]");
    GXT_OK(gx_array_release(a));

    /* 1234567 has 7 digits: beyond f32's default precision of 6. */
    const float big[] = {1234567.0f, 1};
    const int64_t two = 2;
    a = make(GX_F32, 1, &two, big);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array f32 [2]\n[1.23457e+06,       1e+00]");
    gx_print_opts p7 = {.precision = 7};
    EXPECT_TEXT(a, &p7, "gx_array f32 [2]\n[1234567,       1]");
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_f64_special)
{
    const double v[] = {NAN, INFINITY, -INFINITY, 1.5, -0.0};
    const int64_t n = 5;
    gx_array *a = make(GX_F64, 1, &n, v);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array f64 [5]\n[ nan,  inf, -inf,  1.5,   -0]");
    GXT_OK(gx_array_release(a));

    /* 8 significant digits by default for f64; precision above 17 prints as 17. */
    const double w[] = {1.0 / 3.0, 3.14159265358979, -2e-4};
    const int64_t three = 3;
    a = make(GX_F64, 1, &three, w);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array f64 [3]\n[0.33333333,  3.1415927,    -0.0002]");
    gx_print_opts o = {.precision = 40};
    EXPECT_TEXT(a, &o, "gx_array f64 [3]\n[    0.33333333333333331,        3.14159265358979, -0.00020000000000000001]");
    GXT_OK(gx_array_release(a));

    const double e[] = {1e-7, -2.5, 1e300, NAN};
    const int64_t four = 4;
    a = make(GX_F64, 1, &four, e);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array f64 [4]\n[   1e-07, -2.5e+00,   1e+300,      nan]");
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_complex)
{
    const float v[] = {1, 2, -0.5f, -1, 0, 0, 0.25f, -0.0f};
    const int64_t n = 4;
    gx_array *a = make(GX_C64, 1, &n, v);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array c64 [4]\n[   1+2j, -0.5-1j,    0+0j, 0.25-0j]");
    GXT_OK(gx_array_release(a));

    const double w[] = {NAN, INFINITY, -INFINITY, NAN, 1.0 / 3.0, -1e-9};
    const int64_t three = 3;
    a = make(GX_C128, 1, &three, w);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array c128 [3]\n[            nan+infj,            -inf+nanj, 3.3333333e-01-1e-09j]");
    GXT_OK(gx_array_release(a));

    const double z[] = {1, 2, 3, -4};
    const int64_t sh[] = {2, 1};
    a = make(GX_C128, 2, sh, z);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array c128 [2, 1]\n[[1+2j],\n [3-4j]]");
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_half_dtypes)
{
    /* f16 / bf16 print their values like f32 (fewer significant digits) */
    const int64_t n = 2;
    gx_array *a = NULL, *b = NULL;
    uint16_t h[2] = {gx_f32_to_f16(0.5f), gx_f32_to_f16(-3.0f)}, g[2] = {gx_f32_to_bf16(2.0f), gx_f32_to_bf16(0.25f)};
    GXT_OK(gx_array_from_host(gxt_ctx(), GX_F16, 1, &n, h, &a));
    GXT_OK(gx_array_from_host(gxt_ctx(), GX_BF16, 1, &n, g, &b));
    char buf[256];
    size_t need = 0;
    GXT_OK(gx_array_format(a, NULL, buf, sizeof buf, &need));
    GXT_CHECK(strstr(buf, "f16 [2]") && strstr(buf, "0.5") && strstr(buf, "-3]"));
    GXT_OK(gx_array_format(b, NULL, buf, sizeof buf, &need));
    GXT_CHECK(strstr(buf, "bf16 [2]") && strstr(buf, "2") && strstr(buf, "0.25"));
    gx_array_release(a);
    gx_array_release(b);
}

/* ------------------------------------------------------------ shapes */

GXT_TEST(print_0d_and_empty)
{
    const double x = 2.5;
    gx_array *a = make(GX_F64, 0, NULL, &x);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array f64 []\n2.5");
    GXT_OK(gx_array_release(a));

    const int32_t k = -7;
    a = make(GX_I32, 0, NULL, &k);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array i32 []\n-7");
    GXT_OK(gx_array_release(a));

    const int64_t sh[] = {0, 3};
    GXT_OK(gx_array_empty(gxt_ctx(), GX_F32, 2, sh, &a));
    EXPECT_TEXT(a, NULL, "gx_array f32 [0, 3]\n[]");
    GXT_OK(gx_array_release(a));

    const int64_t sh2[] = {4, 0, 2};
    GXT_OK(gx_array_empty(gxt_ctx(), GX_C64, 3, sh2, &a));
    EXPECT_TEXT(a, NULL, "gx_array c64 [4, 0, 2]\n[]");
    GXT_OK(gx_array_release(a));

    const int64_t zero = 0;
    GXT_OK(gx_array_empty(gxt_ctx(), GX_BOOL, 1, &zero, &a));
    EXPECT_TEXT(a, NULL, "gx_array bool [0]\n[]");
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_1d_small)
{
    const int32_t v[] = {1, -2, 30};
    const int64_t n = 3;
    gx_array *a = make(GX_I32, 1, &n, v);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array i32 [3]\n[ 1, -2, 30]");
    GXT_OK(gx_array_release(a));

    const int64_t one = 1;
    a = make(GX_I32, 1, &one, v);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array i32 [1]\n[1]");
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_3d)
{
    gx_array *flat, *a;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I16, 12, 0, 1, &flat));
    const int64_t sh[] = {2, 2, 3};
    GXT_OK(gx_array_reshape(flat, 3, sh, &a));
    EXPECT_TEXT(a, NULL,
                "gx_array i16 [2, 2, 3]\n"
                "[[[ 0,  1,  2],\n"
                "  [ 3,  4,  5]],\n"
                "\n"
                " [[ 6,  7,  8],\n"
                "  [ 9, 10, 11]]]");
    GXT_OK(gx_array_release(a));
    GXT_OK(gx_array_release(flat));

    /* Axes of length 1 keep their brackets. */
    const uint8_t one = 5;
    const int64_t ones[] = {1, 1, 1};
    a = make(GX_U8, 3, ones, &one);
    if (!a)
        return;
    EXPECT_TEXT(a, NULL, "gx_array u8 [1, 1, 1]\n[[[5]]]");
    GXT_OK(gx_array_release(a));
}

/* ------------------------------------------------------------ summaries */

GXT_TEST(print_summary_1d)
{
    gx_array *a;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_F32, 2000, 0, 1, &a));
    EXPECT_TEXT(a, NULL, "gx_array f32 [2000]\n[   0,    1,    2, ..., 1997, 1998, 1999]");

    /* Exactly at the threshold: not summarised (NumPy: size > threshold). */
    gx_array *b;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I32, 10, 0, 1, &b));
    gx_print_opts t10 = {.threshold = 10};
    EXPECT_TEXT(b, &t10, "gx_array i32 [10]\n[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]");
    gx_print_opts t9 = {.threshold = 9};
    EXPECT_TEXT(b, &t9, "gx_array i32 [10]\n[0, 1, 2, ..., 7, 8, 9]");
    gx_print_opts t9e1 = {.threshold = 9, .edgeitems = 1};
    EXPECT_TEXT(b, &t9e1, "gx_array i32 [10]\n[0, ..., 9]");
    /* An axis not longer than 2*edgeitems is shown whole. */
    gx_print_opts t9e5 = {.threshold = 9, .edgeitems = 5};
    EXPECT_TEXT(b, &t9e5, "gx_array i32 [10]\n[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]");
    GXT_OK(gx_array_release(b));

    /* A large threshold shows everything (the rows wrap at 75 columns). */
    gx_print_opts all = {.threshold = INT64_MAX};
    char *txt = text_of(a, &all);
    GXT_CHECK(txt && strstr(txt, " 1000, 1001,") && !strstr(txt, "..."));
    free(txt);
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_summary_2d)
{
    gx_array *flat, *a;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I32, 100, 0, 1, &flat));
    const int64_t sh[] = {10, 10};
    GXT_OK(gx_array_reshape(flat, 2, sh, &a));
    gx_print_opts o = {.threshold = 50, .edgeitems = 2};
    EXPECT_TEXT(a, &o,
                "gx_array i32 [10, 10]\n"
                "[[ 0,  1, ...,  8,  9],\n"
                " [10, 11, ..., 18, 19],\n"
                " ...,\n"
                " [80, 81, ..., 88, 89],\n"
                " [90, 91, ..., 98, 99]]");
    GXT_OK(gx_array_release(a));
    GXT_OK(gx_array_release(flat));

    /* Only the long axis is cut: 1000 x 2 has 2000 elements > 1000. */
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I64, 2000, 0, 1, &flat));
    const int64_t sh2[] = {1000, 2};
    GXT_OK(gx_array_reshape(flat, 2, sh2, &a));
    EXPECT_TEXT(a, NULL,
                "gx_array i64 [1000, 2]\n"
                "[[   0,    1],\n"
                " [   2,    3],\n"
                " [   4,    5],\n"
                " ...,\n"
                " [1994, 1995],\n"
                " [1996, 1997],\n"
                " [1998, 1999]]");
    GXT_OK(gx_array_release(a));
    GXT_OK(gx_array_release(flat));
}

GXT_TEST(print_summary_3d)
{
    gx_array *flat, *a;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_U16, 60, 0, 1, &flat));
    const int64_t sh[] = {5, 3, 4};
    GXT_OK(gx_array_reshape(flat, 3, sh, &a));
    gx_print_opts o = {.threshold = 10, .edgeitems = 1};
    EXPECT_TEXT(a, &o,
                "gx_array u16 [5, 3, 4]\n"
                "[[[ 0, ...,  3],\n"
                "  ...,\n"
                "  [ 8, ..., 11]],\n"
                "\n"
                " ...,\n"
                "\n"
                " [[48, ..., 51],\n"
                "  ...,\n"
                "  [56, ..., 59]]]");
    GXT_OK(gx_array_release(a));
    GXT_OK(gx_array_release(flat));
}

/* A large array prints by reading only the shown corners: no full-size staging copy
 * appears in the context's memory (a GPU download of a view would stage it). */
GXT_TEST(print_summary_reads_only_shown)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t sh[] = {2048, 4096}; /* 32 MiB of f32 */
    gx_array *a;
    GXT_OK(gx_array_empty(ctx, GX_F32, 2, sh, &a));
    GXT_OK(gx_array_fill_f64(a, 1.5));
    const int64_t corner[] = {2047, 4095};
    const float last = -2;
    GXT_OK(gx_array_set(a, corner, &last));
    /* a transposed view, so that the shown blocks are strided */
    const int perm[] = {1, 0};
    gx_array *t;
    GXT_OK(gx_array_permute(a, perm, &t));
    gx_memory_stats before, after;
    GXT_OK(gx_memory_stats_get(ctx, &before));
    EXPECT_TEXT(t, NULL,
                "gx_array f32 [4096, 2048]\n"
                "[[1.5, 1.5, 1.5, ..., 1.5, 1.5, 1.5],\n"
                " [1.5, 1.5, 1.5, ..., 1.5, 1.5, 1.5],\n"
                " [1.5, 1.5, 1.5, ..., 1.5, 1.5, 1.5],\n"
                " ...,\n"
                " [1.5, 1.5, 1.5, ..., 1.5, 1.5, 1.5],\n"
                " [1.5, 1.5, 1.5, ..., 1.5, 1.5, 1.5],\n"
                " [1.5, 1.5, 1.5, ..., 1.5, 1.5,  -2]]");
    GXT_OK(gx_memory_stats_get(ctx, &after));
    GXT_CHECK(after.peak - before.peak < (1u << 20));
    GXT_EQ_I64(after.in_use, before.in_use);
    GXT_OK(gx_array_release(t));
    GXT_OK(gx_array_release(a));
}

/* ------------------------------------------------------------ views */

GXT_TEST(print_strided_views)
{
    gx_array *a, *v;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I32, 10, 0, 1, &a));
    const gx_slice s1 = {1, 9, 3};
    GXT_OK(gx_array_view(a, &s1, &v));
    EXPECT_TEXT(v, NULL, "gx_array i32 [3]\n[1, 4, 7]");
    GXT_OK(gx_array_release(v));
    const gx_slice rev = {GX_END, GX_END, -2};
    GXT_OK(gx_array_view(a, &rev, &v));
    EXPECT_TEXT(v, NULL, "gx_array i32 [5]\n[9, 7, 5, 3, 1]");
    GXT_OK(gx_array_release(v));
    GXT_OK(gx_array_release(a));

    /* 2-d, both axes reversed. */
    gx_array *flat, *m;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_F64, 6, 0, 0.5, &flat));
    const int64_t sh[] = {2, 3};
    GXT_OK(gx_array_reshape(flat, 2, sh, &m));
    const gx_slice both[] = {{GX_END, GX_END, -1}, {GX_END, GX_END, -1}};
    GXT_OK(gx_array_view(m, both, &v));
    EXPECT_TEXT(v, NULL, "gx_array f64 [2, 3]\n[[2.5,   2, 1.5],\n [  1, 0.5,   0]]");
    GXT_OK(gx_array_release(v));
    GXT_OK(gx_array_release(m));
    GXT_OK(gx_array_release(flat));

    /* A summarised view with a negative stride. */
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I32, 2000, 0, 1, &a));
    const gx_slice back = {GX_END, GX_END, -1};
    GXT_OK(gx_array_view(a, &back, &v));
    EXPECT_TEXT(v, NULL, "gx_array i32 [2000]\n[1999, 1998, 1997, ...,    2,    1,    0]");
    GXT_OK(gx_array_release(v));
    const gx_slice odd = {1, GX_END, 2};
    GXT_OK(gx_array_view(a, &odd, &v));
    /* 1000 elements are not more than the default threshold: no summary. */
    char *txt = text_of(v, NULL);
    GXT_CHECK(txt && !strstr(txt, "...") && strstr(txt, " 997,  999, 1001,"));
    free(txt);
    gx_print_opts o = {.threshold = 999};
    EXPECT_TEXT(v, &o, "gx_array i32 [1000]\n[   1,    3,    5, ..., 1995, 1997, 1999]");
    GXT_OK(gx_array_release(v));
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_permuted_view)
{
    gx_array *flat, *a, *p;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I8, 6, 0, 1, &flat));
    const int64_t sh[] = {2, 3};
    GXT_OK(gx_array_reshape(flat, 2, sh, &a));
    const int perm[] = {1, 0};
    GXT_OK(gx_array_permute(a, perm, &p));
    EXPECT_TEXT(p, NULL, "gx_array i8 [3, 2]\n[[0, 3],\n [1, 4],\n [2, 5]]");
    GXT_OK(gx_array_release(p));
    GXT_OK(gx_array_release(a));
    GXT_OK(gx_array_release(flat));

    /* 3-d: (2, 3, 4) -> axes (2, 0, 1), summarised along the long axes. */
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I32, 24, 0, 1, &flat));
    const int64_t sh3[] = {2, 3, 4};
    GXT_OK(gx_array_reshape(flat, 3, sh3, &a));
    const int perm3[] = {2, 0, 1};
    GXT_OK(gx_array_permute(a, perm3, &p));
    gx_print_opts o = {.threshold = 4, .edgeitems = 1};
    EXPECT_TEXT(p, &o,
                "gx_array i32 [4, 2, 3]\n"
                "[[[ 0, ...,  8],\n"
                "  [12, ..., 20]],\n"
                "\n"
                " ...,\n"
                "\n"
                " [[ 3, ..., 11],\n"
                "  [15, ..., 23]]]");
    GXT_OK(gx_array_release(p));
    GXT_OK(gx_array_release(a));
    GXT_OK(gx_array_release(flat));
}

/* ------------------------------------------------------------ buffer, options, print */

GXT_TEST(print_truncation_and_needed)
{
    const int32_t v[] = {1, 2};
    const int64_t n = 2;
    gx_array *a = make(GX_I32, 1, &n, v);
    if (!a)
        return;
    const char *full = "gx_array i32 [2]\n[1, 2]";
    size_t need = 0;
    GXT_OK(gx_array_format(a, NULL, NULL, 0, &need));
    GXT_EQ_I64(need, strlen(full) + 1);
    char buf[64];
    memset(buf, 'x', sizeof buf);
    need = 0;
    GXT_OK(gx_array_format(a, NULL, buf, 6, &need));
    GXT_CHECK(strcmp(buf, "gx_ar") == 0);
    GXT_CHECK(buf[6] == 'x');
    GXT_EQ_I64(need, strlen(full) + 1);
    GXT_OK(gx_array_format(a, NULL, buf, 1, NULL));
    GXT_CHECK(buf[0] == 0);
    GXT_OK(gx_array_format(a, NULL, buf, strlen(full), NULL)); /* one short */
    GXT_EQ_I64(strlen(buf), strlen(full) - 1);
    GXT_OK(gx_array_format(a, NULL, buf, sizeof buf, &need));
    GXT_CHECK(strcmp(buf, full) == 0);
    GXT_EQ_I64(need, strlen(full) + 1);
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_zero_opts_are_defaults)
{
    gx_array *a;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_F64, 3000, -1, 1.0 / 7.0, &a));
    gx_print_opts zero;
    memset(&zero, 0, sizeof zero);
    gx_print_opts dflt = {.threshold = 1000, .edgeitems = 3, .precision = 8, .linewidth = 75};
    char *t_null = text_of(a, NULL), *t_zero = text_of(a, &zero), *t_dflt = text_of(a, &dflt);
    GXT_CHECK(t_null && t_zero && t_dflt);
    if (t_null && t_zero && t_dflt) {
        GXT_CHECK(strcmp(t_null, t_zero) == 0);
        GXT_CHECK(strcmp(t_null, t_dflt) == 0);
        GXT_CHECK(strcmp(t_null, "gx_array f64 [3000]\n"
                                 "[         -1, -0.85714286, -0.71428571, ...,   427.14286,   427.28571,\n"
                                 "   427.42857]") == 0);
    }
    free(t_null);
    free(t_zero);
    free(t_dflt);
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_linewidth_wraps)
{
    gx_array *a;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I32, 10, 0, 1, &a));
    gx_print_opts o = {.linewidth = 20};
    /* "[0, 1, 2, 3, 4, 5, 6," would be 21 columns. */
    EXPECT_TEXT(a, &o, "gx_array i32 [10]\n[0, 1, 2, 3, 4, 5,\n 6, 7, 8, 9]");
    /* The last element also leaves room for the closing bracket(s). */
    gx_print_opts o2 = {.linewidth = 29};
    EXPECT_TEXT(a, &o2, "gx_array i32 [10]\n[0, 1, 2, 3, 4, 5, 6, 7, 8,\n 9]");
    gx_print_opts o3 = {.linewidth = 30};
    EXPECT_TEXT(a, &o3, "gx_array i32 [10]\n[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]");
    /* Wider than any line: one element per line, never an empty line. */
    gx_print_opts o4 = {.linewidth = 1};
    EXPECT_TEXT(a, &o4, "gx_array i32 [10]\n[0,\n 1,\n 2,\n 3,\n 4,\n 5,\n 6,\n 7,\n 8,\n 9]");
    GXT_OK(gx_array_release(a));

    /* 2-d rows wrap with a hanging indent of two. */
    gx_array *flat, *m;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I32, 8, 0, 1, &flat));
    const int64_t sh[] = {2, 4};
    GXT_OK(gx_array_reshape(flat, 2, sh, &m));
    gx_print_opts o5 = {.linewidth = 12};
    EXPECT_TEXT(m, &o5,
                "gx_array i32 [2, 4]\n"
                "[[0, 1, 2,\n"
                "  3],\n"
                " [4, 5, 6,\n"
                "  7]]");
    GXT_OK(gx_array_release(m));
    GXT_OK(gx_array_release(flat));
}

GXT_TEST(print_to_stdout)
{
    const float v[] = {0.5f, 1, 2, 3, 4, 5};
    const int64_t sh[] = {2, 3};
    gx_array *a = make(GX_F32, 2, sh, v);
    if (!a)
        return;
    GXT_OK(gx_array_print(a, NULL));
    gx_print_opts o = {.precision = 2};
    GXT_OK(gx_array_print(a, &o));
    GXT_OK(gx_array_release(a));
}

GXT_TEST(print_bad_input)
{
    char buf[64];
    size_t need = 123;
    GXT_STATUS(gx_array_format(NULL, NULL, buf, sizeof buf, &need), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("NULL");
    GXT_STATUS(gx_array_print(NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("gx_array_print");

    gx_array *a;
    GXT_OK(gx_array_iota(gxt_ctx(), GX_I32, 4, 0, 1, &a));
    GXT_STATUS(gx_array_format(a, NULL, NULL, 10, &need), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("cap");

    gx_print_opts o = {.threshold = -1};
    GXT_STATUS(gx_array_format(a, &o, buf, sizeof buf, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("threshold");
    o = (gx_print_opts){.edgeitems = -2};
    GXT_STATUS(gx_array_format(a, &o, buf, sizeof buf, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("edgeitems");
    o = (gx_print_opts){.precision = -3};
    GXT_STATUS(gx_array_print(a, &o), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("precision");
    o = (gx_print_opts){.linewidth = -4};
    GXT_STATUS(gx_array_format(a, &o, buf, sizeof buf, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("linewidth");

    GXT_OK(gx_array_release(a));
    GXT_STATUS(gx_array_format(a, NULL, buf, sizeof buf, NULL), GX_ERR_INVALID_HANDLE);
    GXT_MSG_HAS("gx_array_format");
    GXT_STATUS(gx_array_print(a, NULL), GX_ERR_INVALID_HANDLE);
    GXT_MSG_HAS("not live");
}
