/* test_sort_unique.c -- gx_unique's two paths (sort.c): counting for integers of a
 * small range, sorting otherwise, forced with gx__unique_path_set so that both run
 * on the same data, against a host reference (a stable qsort of positions by value,
 * runs read off it): every integer dtype and bool, every combination of the optional
 * outputs, negative values, ranges on both sides of the auto threshold, lengths 0, 1,
 * 31, 32, 33 and odd, views with strides and negative strides, 2-d input, ties for
 * the first indices, and ranges that cannot be counted (INT_MIN..INT_MAX,
 * 0..UINT64_MAX): those sort even when counting is forced. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include "gx_test.h"
#include "ops/sort_priv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { UQ_AUTO, UQ_SORT, UQ_COUNT };

static const gx_dtype uq_dt[] = {GX_BOOL, GX_I8, GX_I16, GX_I32, GX_I64, GX_U8, GX_U16, GX_U32, GX_U64};
#define UQ_NDT ((int)(sizeof uq_dt / sizeof uq_dt[0]))

static bool uq_signed(gx_dtype t) { return t == GX_I8 || t == GX_I16 || t == GX_I32 || t == GX_I64; }

/* Value i of host data of dtype t, as a u64 bit pattern (signed: sign-extended). */
static uint64_t uq_get(gx_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case GX_BOOL:
    case GX_U8: return ((const uint8_t *)p)[i];
    case GX_I8: return (uint64_t)(int64_t)((const int8_t *)p)[i];
    case GX_U16: return ((const uint16_t *)p)[i];
    case GX_I16: return (uint64_t)(int64_t)((const int16_t *)p)[i];
    case GX_U32: return ((const uint32_t *)p)[i];
    case GX_I32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
    case GX_U64: return ((const uint64_t *)p)[i];
    default: return (uint64_t)((const int64_t *)p)[i];
    }
}

/* Stores the low bytes of v (little-endian hosts, as the library's). */
static void uq_put(gx_dtype t, void *p, int64_t i, uint64_t v)
{
    size_t es = gx_dtype_size(t);
    memcpy((char *)p + (size_t)i * es, &v, es);
}

static struct {
    gx_dtype t;
    const void *h;
} uq_rs;

static int uq_qcmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    uint64_t x = uq_get(uq_rs.t, uq_rs.h, a), y = uq_get(uq_rs.t, uq_rs.h, b);
    int c = uq_signed(uq_rs.t) ? ((int64_t)x > (int64_t)y) - ((int64_t)x < (int64_t)y) : (x > y) - (x < y);
    return c ? c : (a > b) - (a < b);
}

#define UQ_COUNTS 1
#define UQ_FIRST 2
#define UQ_INVERSE 4

/* gx_unique of x (any shape, any view) whose values flattened row-major are h (n of
 * them) on `path`, with the outputs of `mask`, against the reference; want_last: the
 * path the call must have taken (0: either). */
static void uq_check(gx_ctx *ctx, gx_array *x, gx_dtype t, const void *h, int64_t n, int mask, int path,
                     int want_last)
{
    GXT_OK(gx__unique_path_set(ctx, path));
    gx_array *u = NULL, *c = NULL, *f = NULL, *inv = NULL;
    GXT_OK(gx_unique(ctx, x, NULL, &u, mask & UQ_COUNTS ? &c : NULL, mask & UQ_FIRST ? &f : NULL,
                     mask & UQ_INVERSE ? &inv : NULL));
    if (want_last && n > 0)
        GXT_EQ_I64(gx__unique_path_last(ctx), want_last);
    int64_t *ord = malloc((size_t)n * 8 + 8), *start = malloc((size_t)n * 8 + 8), *rinv = malloc((size_t)n * 8 + 8);
    for (int64_t i = 0; i < n; i++)
        ord[i] = i;
    uq_rs.t = t, uq_rs.h = h;
    qsort(ord, (size_t)n, sizeof *ord, uq_qcmp);
    int64_t nu = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || uq_get(t, h, ord[i]) != uq_get(t, h, ord[i - 1]))
            start[nu++] = i;
        rinv[ord[i]] = nu - 1;
    }
    gx_array_desc d;
    GXT_OK(gx_array_describe(u, &d));
    GXT_EQ_I64(d.size, nu);
    GXT_EQ_I64(d.dtype, t);
    GXT_EQ_I64(d.ndim, 1);
    size_t es = gx_dtype_size(t);
    char *uh = malloc((size_t)nu * es + 8);
    int64_t *ch = malloc((size_t)nu * 8 + 8), *fh = malloc((size_t)nu * 8 + 8), *ih = malloc((size_t)n * 8 + 8);
    int bad = 0;
    if (d.size == nu) {
        GXT_OK(gx_array_to_host(u, uh, (size_t)nu * es));
        if (c)
            GXT_OK(gx_array_to_host(c, ch, (size_t)nu * 8));
        if (f)
            GXT_OK(gx_array_to_host(f, fh, (size_t)nu * 8));
        if (inv)
            GXT_OK(gx_array_to_host(inv, ih, (size_t)n * 8));
        for (int64_t j = 0; j < nu; j++) {
            int64_t end = j + 1 < nu ? start[j + 1] : n;
            bad += uq_get(t, uh, j) != uq_get(t, h, ord[start[j]]);
            bad += c && ch[j] != end - start[j];
            bad += f && fh[j] != ord[start[j]]; /* stable order: the least position first */
        }
        for (int64_t i = 0; inv && i < n; i++)
            bad += ih[i] != rinv[i];
    }
    if (bad)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld mask=%d path=%d: %d differences", gx_dtype_name(t), (long long)n,
                    mask, path, bad);
    free(uh), free(ch), free(fh), free(ih), free(ord), free(start), free(rinv);
    gx_array_release(u);
    gx_array_release(c);
    gx_array_release(f);
    gx_array_release(inv);
}

/* n values of dtype t: lo + (random % range), many ties; bool: 0/1. */
static void *uq_data(gx_dtype t, int64_t n, uint64_t lo, uint64_t range)
{
    void *h = malloc((size_t)n * 8 + 8);
    for (int64_t i = 0; i < n; i++)
        uq_put(t, h, i, t == GX_BOOL ? gxt_rand_u64() & 1 : lo + gxt_rand_u64() % range);
    return h;
}

/* The lowest value of a small range for dtype t: negative for signed dtypes. */
static uint64_t uq_lo(gx_dtype t) { return uq_signed(t) ? (uint64_t)-40 : 3; }

/* Every dtype, length and combination of outputs, on both paths (and auto). */
GXT_TEST(unique_count_vs_sort_all_dtypes_and_options)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t lens[] = {0, 1, 31, 32, 33, 1001};
    for (int d = 0; d < UQ_NDT; d++)
        for (int l = 0; l < 6; l++) {
            gx_dtype t = uq_dt[d];
            int64_t n = lens[l];
            void *h = uq_data(t, n, uq_lo(t), 77);
            gx_array *x = NULL;
            GXT_OK(gx_array_from_host(ctx, t, 1, &n, h, &x));
            for (int mask = 0; mask < 8; mask++)
                for (int path = UQ_AUTO; path <= UQ_COUNT; path++)
                    if (mask == 7 || l == 5 || path != UQ_AUTO)
                        uq_check(ctx, x, t, h, n, mask, path, path == UQ_AUTO ? 0 : path);
            gx_array_release(x);
            free(h);
        }
}

/* Auto: range <= max(2^12, n / 2) counts, one more value sorts. */
GXT_TEST(unique_count_threshold_both_sides)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 20001, lim = n / 2;
    for (int side = 0; side < 2; side++) {
        int64_t range = lim + side;
        void *h = uq_data(GX_I32, n, (uint64_t)-1000, (uint64_t)range);
        uq_put(GX_I32, h, 7, (uint64_t)-1000); /* the range exactly: its two ends present */
        uq_put(GX_I32, h, 9, (uint64_t)(-1000 + range - 1));
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, h, &x));
        uq_check(ctx, x, GX_I32, h, n, 7, UQ_AUTO, side ? UQ_SORT : UQ_COUNT);
        uq_check(ctx, x, GX_I32, h, n, UQ_COUNTS, UQ_AUTO, side ? UQ_SORT : UQ_COUNT);
        gx_array_release(x);
        free(h);
    }
    /* small n: up to 2^12 values of range still count */
    int64_t m = 100;
    void *h = uq_data(GX_I64, m, 5, 4096);
    uq_put(GX_I64, h, 0, 5);
    uq_put(GX_I64, h, 1, 5 + 4095);
    gx_array *x = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I64, 1, &m, h, &x));
    uq_check(ctx, x, GX_I64, h, m, 7, UQ_AUTO, UQ_COUNT);
    uq_put(GX_I64, h, 1, 5 + 4096);
    GXT_OK(gx_array_from_host_into(h, (size_t)m * 8, x));
    uq_check(ctx, x, GX_I64, h, m, 7, UQ_AUTO, UQ_SORT);
    gx_array_release(x);
    free(h);
}

/* Views: every other element backwards, a 2-d block with a step, 2-d dense input. */
GXT_TEST(unique_count_views_and_2d)
{
    gx_ctx *ctx = gxt_ctx();
    for (int d = 0; d < UQ_NDT; d++) {
        gx_dtype t = uq_dt[d];
        int64_t n = 203;
        void *h = uq_data(t, n, uq_lo(t), 29);
        gx_array *x = NULL, *v = NULL;
        GXT_OK(gx_array_from_host(ctx, t, 1, &n, h, &x));
        gx_slice back = {n - 1, GX_END, -2}; /* x[n-1], x[n-3], ..., x[0] */
        GXT_OK(gx_array_view(x, &back, &v));
        int64_t m = (n + 1) / 2;
        void *hv = malloc((size_t)m * 8);
        for (int64_t i = 0; i < m; i++)
            uq_put(t, hv, i, uq_get(t, h, n - 1 - 2 * i));
        for (int path = UQ_SORT; path <= UQ_COUNT; path++)
            uq_check(ctx, v, t, hv, m, 7, path, path);
        gx_array_release(v);
        /* 2-d: (29, 7) dense, and its rows 1, 4, 7, ... columns 1..5 */
        int64_t sh[2] = {29, 7};
        gx_array *x2 = NULL, *v2 = NULL;
        GXT_OK(gx_array_reshape(x, 2, sh, &x2));
        for (int path = UQ_SORT; path <= UQ_COUNT; path++)
            uq_check(ctx, x2, t, h, n, 7, path, path);
        gx_slice sl[2] = {{1, GX_END, 3}, {1, 6, 1}};
        GXT_OK(gx_array_view(x2, sl, &v2));
        int64_t k = 0;
        for (int64_t r = 1; r < 29; r += 3)
            for (int64_t q = 1; q < 6; q++)
                uq_put(t, hv, k++, uq_get(t, h, r * 7 + q));
        for (int path = UQ_SORT; path <= UQ_COUNT; path++)
            uq_check(ctx, v2, t, hv, k, 7, path, path);
        gx_array_release(v2);
        gx_array_release(x2);
        gx_array_release(x);
        free(hv);
        free(h);
    }
}

/* Ranges at the ends of the dtypes: small ranges next to INT_MIN / INT_MAX /
 * UINT64_MAX count (the difference is taken modulo 2^64); the full ranges cannot be
 * counted and sort even when counting is forced. */
GXT_TEST(unique_count_extreme_ranges)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 1000;
    const struct {
        gx_dtype t;
        uint64_t lo, range;
        int want; /* path taken when counting is forced */
    } cs[] = {
        {GX_I32, (uint64_t)(int64_t)INT32_MIN, 50, UQ_COUNT},
        {GX_I32, (uint64_t)(int64_t)(INT32_MAX - 49), 50, UQ_COUNT},
        {GX_I64, (uint64_t)INT64_MIN, 50, UQ_COUNT},
        {GX_I64, (uint64_t)(INT64_MAX - 49), 50, UQ_COUNT},
        {GX_I64, (uint64_t)-25, 50, UQ_COUNT},
        {GX_U64, UINT64_MAX - 49, 50, UQ_COUNT},
        {GX_U64, ((uint64_t)1 << 63) - 25, 50, UQ_COUNT}, /* straddles 2^63 */
        {GX_U32, UINT32_MAX - 49, 50, UQ_COUNT},
        {GX_I8, (uint64_t)(int64_t)INT8_MIN, 256, UQ_COUNT},
        {GX_U16, 0, 65536, UQ_COUNT},
        {GX_I32, (uint64_t)(int64_t)INT32_MIN, 0, UQ_SORT}, /* range 0: both ends, below */
        {GX_I64, (uint64_t)INT64_MIN, 0, UQ_SORT},
        {GX_U64, 0, 0, UQ_SORT},
        {GX_U32, 0, 0, UQ_SORT},
        {GX_I32, 0, (uint64_t)1 << 24, UQ_SORT}, /* 2^24 + 1 values: one past the cap */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        gx_dtype t = cs[i].t;
        void *h;
        if (cs[i].range) {
            h = uq_data(t, n, cs[i].lo, cs[i].range);
            uq_put(t, h, 3, cs[i].lo + cs[i].range - 1);
        } else { /* the whole dtype: its least and greatest value, and some between */
            h = uq_data(t, n, 0, 1000);
            uint64_t mn = t == GX_I32 ? (uint64_t)(int64_t)INT32_MIN : t == GX_I64 ? (uint64_t)INT64_MIN : 0;
            uint64_t mx = t == GX_I32 ? (uint64_t)INT32_MAX : t == GX_I64 ? (uint64_t)INT64_MAX
                          : t == GX_U32 ? UINT32_MAX : UINT64_MAX;
            uq_put(t, h, 3, mn);
            uq_put(t, h, 500, mx);
            uq_put(t, h, 501, mn);
        }
        if (cs[i].range == (uint64_t)1 << 24) { /* 0 and 2^24 present: 2^24 + 1 values */
            uq_put(t, h, 4, (uint64_t)1 << 24);
            uq_put(t, h, 5, 0);
        }
        gx_array *x = NULL;
        GXT_OK(gx_array_from_host(ctx, t, 1, &n, h, &x));
        uq_check(ctx, x, t, h, n, 7, UQ_COUNT, cs[i].want);
        uq_check(ctx, x, t, h, n, 7, UQ_SORT, UQ_SORT);
        gx_array_release(x);
        free(h);
    }
}

/* A large input on the counting path (the parallel histogram's chunks), all outputs. */
GXT_TEST(unique_count_large)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = ((int64_t)1 << 20) + 7;
    void *h = uq_data(GX_I32, n, (uint64_t)-30000, 65536);
    gx_array *x = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, h, &x));
    uq_check(ctx, x, GX_I32, h, n, 7, UQ_AUTO, UQ_COUNT);
    uq_check(ctx, x, GX_I32, h, n, UQ_COUNTS, UQ_AUTO, UQ_COUNT);
    gx_array_release(x);
    free(h);
}

/* Bad input: complex x, and a bad path for the internal switch. */
GXT_TEST(unique_count_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 4;
    gx_array *x = NULL, *u = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_C64, 1, &n, &x));
    GXT_STATUS(gx_unique(ctx, x, NULL, &u, NULL, NULL, NULL), GX_ERR_DTYPE);
    GXT_CHECK(u == NULL);
    GXT_STATUS(gx__unique_path_set(ctx, 3), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("path 3");
    gx_array_release(x);
}

/* GX_UNIQUE_PATH is read when a context first runs a unique: a context made while it
 * says "sort" sorts a small range that auto would count. */
GXT_TEST(unique_count_env_knob)
{
    gx_backend_kind kind;
    GXT_OK(gx_ctx_backend(gxt_ctx(), &kind));
    setenv("GX_UNIQUE_PATH", "sort", 1);
    gx_ctx *c2 = NULL;
    gx_status s = gx_ctx_create(&c2, kind);
    int64_t n = 64;
    void *h = uq_data(GX_I16, n, (uint64_t)-5, 10);
    gx_array *x = NULL, *u = NULL;
    if (s == GX_OK)
        s = gx_array_from_host(c2, GX_I16, 1, &n, h, &x);
    if (s == GX_OK)
        s = gx_unique(c2, x, NULL, &u, NULL, NULL, NULL);
    unsetenv("GX_UNIQUE_PATH");
    GXT_OK(s);
    GXT_EQ_I64(gx__unique_path_last(c2), UQ_SORT);
    GXT_OK(gx__unique_path_set(c2, UQ_AUTO));
    gx_array_release(u);
    u = NULL;
    GXT_OK(gx_unique(c2, x, NULL, &u, NULL, NULL, NULL));
    GXT_EQ_I64(gx__unique_path_last(c2), UQ_COUNT);
    gx_array_release(u);
    gx_array_release(x);
    gx_ctx_destroy(c2);
    free(h);
}
