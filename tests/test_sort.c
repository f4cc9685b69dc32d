/* test_sort.c -- gx/sort.h against host references: a stable qsort on (key, position)
 * with NumPy's float order written out by hand (NaNs last and equal, -0.0 == 0.0),
 * every key dtype, many ties, lengths 0, 1, 2, around 32 and 1024 (merge/radix
 * switch) and the parallel radix sort, 2^20 + 7, rows of length 0, 1 and odd,
 * descending, values of every width, views and in place; top-k, unique,
 * searchsorted, histograms, bincount; bad input with status and message. */
#include "gx_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gx_dtype key_dt[] = {GX_BOOL, GX_I8, GX_I16, GX_I32, GX_I64, GX_U8,
                                  GX_U16,  GX_U32, GX_U64, GX_F32, GX_F64};
#define NKDT ((int)(sizeof key_dt / sizeof key_dt[0]))

/* ------------------------------------------------------------ host reference */

static bool isfl(gx_dtype t) { return t == GX_F32 || t == GX_F64; }

static double rd_f(gx_dtype t, const void *p) { return t == GX_F32 ? *(const float *)p : *(const double *)p; }

/* NumPy's order: -1, 0, 1.  Ints compared exactly in their own type. */
static int ref_cmp_asc(gx_dtype t, const void *a, const void *b)
{
    if (isfl(t)) {
        double x = rd_f(t, a), y = rd_f(t, b);
        bool nx = x != x, ny = y != y;
        if (nx || ny)
            return nx && ny ? 0 : nx ? 1 : -1;
        return x < y ? -1 : x > y ? 1 : 0;
    }
    switch (t) {
#define CMPT(D, T)                                                   \
    case D: {                                                        \
        T x = *(const T *)a, y = *(const T *)b;                      \
        return x < y ? -1 : x > y ? 1 : 0;                           \
    }
        CMPT(GX_BOOL, uint8_t)
        CMPT(GX_U8, uint8_t)
        CMPT(GX_I8, int8_t)
        CMPT(GX_U16, uint16_t)
        CMPT(GX_I16, int16_t)
        CMPT(GX_U32, uint32_t)
        CMPT(GX_I32, int32_t)
        CMPT(GX_U64, uint64_t)
        CMPT(GX_I64, int64_t)
#undef CMPT
    default: return 0;
    }
}

static bool ref_isnan(gx_dtype t, const void *p) { return isfl(t) && rd_f(t, p) != rd_f(t, p); }

/* Descending: non-NaN reversed, NaNs still last. */
static int ref_cmp(gx_dtype t, const void *a, const void *b, bool desc)
{
    if (!desc)
        return ref_cmp_asc(t, a, b);
    bool na = ref_isnan(t, a), nb = ref_isnan(t, b);
    if (na || nb)
        return na && nb ? 0 : na ? 1 : -1;
    return -ref_cmp_asc(t, a, b);
}

static struct {
    gx_dtype t;
    const char *base;
    size_t es;
    bool desc;
} rs;

static int ref_qcmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    int c = ref_cmp(rs.t, rs.base + a * rs.es, rs.base + b * rs.es, rs.desc);
    return c ? c : a < b ? -1 : a > b ? 1 : 0; /* stable: position breaks ties */
}

/* idx[r * len + j] = the stable order of row r (positions within the row). */
static void ref_argsort(gx_dtype t, const void *keys, int64_t nrows, int64_t len, bool desc, int64_t *idx)
{
    rs.t = t, rs.es = gx_dtype_size(t), rs.desc = desc;
    for (int64_t r = 0; r < nrows; r++) {
        rs.base = (const char *)keys + r * len * rs.es;
        for (int64_t j = 0; j < len; j++)
            idx[r * len + j] = j;
        qsort(idx + r * len, (size_t)len, sizeof *idx, ref_qcmp);
    }
}

/* ------------------------------------------------------------ data */

/* Random keys of dtype t with many ties; floats also get NaNs of both signs and
 * several payloads, -0.0, 0.0 and infinities. */
static void fill_keys(gx_dtype t, void *p, int64_t n, int range)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = gxt_rand_u64();
        int64_t v = (int64_t)(r % (uint64_t)range) - (t == GX_BOOL || t == GX_U8 || t == GX_U16 || t == GX_U32 || t == GX_U64 ? 0 : range / 2);
        switch (t) {
        case GX_BOOL: ((uint8_t *)p)[i] = (uint8_t)(r & 1); break;
        case GX_I8: ((int8_t *)p)[i] = (int8_t)v; break;
        case GX_U8: ((uint8_t *)p)[i] = (uint8_t)(r >> 7); break;
        case GX_I16: ((int16_t *)p)[i] = (int16_t)v; break;
        case GX_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
        case GX_I32: ((int32_t *)p)[i] = (int32_t)(i % 3 ? v : (int64_t)(int32_t)r); break;
        case GX_U32: ((uint32_t *)p)[i] = (uint32_t)(i % 3 ? (uint64_t)v : r); break;
        case GX_I64: ((int64_t *)p)[i] = i % 3 ? v : (int64_t)r; break;
        case GX_U64: ((uint64_t *)p)[i] = i % 3 ? (uint64_t)v : r; break;
        case GX_F32:
        case GX_F64: {
            double d = (double)v / 4;
            int k = (int)(r >> 60);
            if (k == 0)
                d = -0.0;
            else if (k == 1)
                d = (r >> 59) & 1 ? INFINITY : -INFINITY;
            if (t == GX_F32) {
                float f = (float)d;
                uint32_t nan = 0x7FC00000u | (uint32_t)((r >> 20) & 0xFF) | (k == 2 ? 0x80000000u : 0);
                if (k == 2 || k == 3)
                    memcpy(&f, &nan, 4);
                ((float *)p)[i] = f;
            } else {
                uint64_t nan = 0x7FF8000000000000ull | ((r >> 20) & 0xFF) | (k == 2 ? 1ull << 63 : 0);
                if (k == 2 || k == 3)
                    memcpy(&d, &nan, 8);
                ((double *)p)[i] = d;
            }
            break;
        }
        default: break;
        }
    }
}

static gx_array *mk_keys(gx_ctx *ctx, gx_dtype t, int nd, const int64_t *shape, void **host, int range)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= shape[d];
    *host = malloc((size_t)n * gx_dtype_size(t) + 16);
    fill_keys(t, *host, n, range);
    gx_array *a = NULL;
    GXT_CHECK(gx_array_from_host(ctx, t, nd, shape, *host, &a) == GX_OK);
    return a;
}

static void *to_host(const gx_array *a)
{
    gx_array_desc d;
    if (gx_array_describe(a, &d) != GX_OK)
        return NULL;
    size_t b = (size_t)d.size * gx_dtype_size(d.dtype);
    void *h = malloc(b + 16);
    GXT_CHECK(gx_array_to_host(a, h, b) == GX_OK);
    return h;
}

/* Checks sorted keys (bits) and argsort indices of rows against the reference. */
static int check_rows(gx_dtype t, const void *in, int64_t nrows, int64_t len, bool desc, const void *keys,
                      const int64_t *idx)
{
    size_t es = gx_dtype_size(t);
    int64_t n = nrows * len;
    int64_t *ref = malloc((size_t)n * 8 + 8);
    ref_argsort(t, in, nrows, len, desc, ref);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; i++) {
        int64_t r = i / len, src = r * len + ref[i];
        if (keys && memcmp((const char *)keys + i * es, (const char *)in + src * es, es) != 0) {
            fprintf(stderr, "  %s len %lld desc %d: key %lld differs (want position %lld)\n", gx_dtype_name(t),
                    (long long)len, desc, (long long)i, (long long)ref[i]);
            bad++;
        }
        if (idx && idx[i] != ref[i]) {
            fprintf(stderr, "  %s len %lld desc %d: idx[%lld] = %lld, want %lld\n", gx_dtype_name(t),
                    (long long)len, desc, (long long)i, (long long)idx[i], (long long)ref[i]);
            bad++;
        }
    }
    free(ref);
    return bad;
}

/* Sort and argsort of x (nd, shape; host copy h) in both directions against the reference. */
static void check_sort_of(gx_ctx *ctx, gx_array *x, const void *h, gx_dtype t, int nd, const int64_t *shape,
                          bool flatten)
{
    int64_t n = 1, len = nd ? shape[nd - 1] : 1;
    for (int d = 0; d < nd; d++)
        n *= shape[d];
    if (flatten)
        len = n;
    int64_t nrows = len ? n / len : 0;
    for (int desc = 0; desc < 2; desc++) {
        gx_sort_opts o = {.descending = desc, .flatten = flatten};
        gx_array *s = NULL, *ix = NULL;
        GXT_OK(gx_sort(ctx, x, &o, &s));
        GXT_OK(gx_argsort(ctx, x, &o, &ix));
        void *sh = to_host(s);
        int64_t *ih = to_host(ix);
        GXT_CHECK(check_rows(t, h, nrows, len, desc, sh, ih) == 0);
        free(sh);
        free(ih);
        gx_array_release(s);
        gx_array_release(ix);
    }
}

/* The same for keys from fill_keys of `range`. */
static void check_sort_case(gx_ctx *ctx, gx_dtype t, int nd, const int64_t *shape, int range, bool flatten)
{
    void *h;
    gx_array *x = mk_keys(ctx, t, nd, shape, &h, range);
    check_sort_of(ctx, x, h, t, nd, shape, flatten);
    gx_array_release(x);
    free(h);
}

/* ------------------------------------------------------------ sort / argsort */

GXT_TEST(sort_every_dtype_and_length)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t lens[] = {0, 1, 2, 31, 32, 33, 1023, 1024, 1025, 4097};
    for (int d = 0; d < NKDT; d++)
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
            check_sort_case(ctx, key_dt[d], 1, &lens[l], 21, false);
}

GXT_TEST(sort_long_rows_parallel_radix)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t lens[] = {(1 << 15) - 1, (1 << 15) + 1, 100003};
    for (int d = 0; d < NKDT; d++)
        for (size_t l = 0; l < 3; l++)
            check_sort_case(ctx, key_dt[d], 1, &lens[l], d % 2 ? 1000 : 7, false);
}

/* The long-row sort's paths: one MSD split then per-bucket sorts (wide ranges), the
 * parallel LSD sort (a bucket with over a quarter of the keys), every key equal. */
GXT_TEST(sort_long_rows_msd_and_lsd_paths)
{
    gx_ctx *ctx = gxt_ctx();
    const int ranges[] = {1, 3, 1 << 12, 1 << 20, 1 << 30};
    int64_t n = (1 << 16) + 33;
    for (int d = 0; d < NKDT; d++)
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
            check_sort_case(ctx, key_dt[d], 1, &n, ranges[r], false);
}

/* Buckets too large for L1 are split again inside (sort_cpu.c, sc32_bucket): f32 in
 * [0, 1) and a -1 (the top-level window then has 3 mantissa bits, so the exponent
 * of half the keys fills 8 buckets of n/16), and u64 keys in 32 tight clusters far
 * apart (a bucket each), sorted alone and with positions.  Up to 24 workers share
 * such buckets; more take the parallel LSD sort. */
GXT_TEST(sort_long_rows_split_buckets)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = (1 << 18) + 3;
    float *f = malloc((size_t)n * sizeof *f);
    uint64_t *u = malloc((size_t)n * sizeof *u);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = gxt_rand_u64();
        f[i] = (float)(r >> 40) * 0x1p-24f;
        u[i] = ((r >> 59) << 59) + ((r >> 8) & 0xFFFFFF);
    }
    f[0] = -1.0f, f[1] = 0.0f;
    gx_array *x = NULL, *y = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, f, &x));
    GXT_OK(gx_array_from_host(ctx, GX_U64, 1, &n, u, &y));
    check_sort_of(ctx, x, f, GX_F32, 1, &n, false);
    check_sort_of(ctx, y, u, GX_U64, 1, &n, false);
    gx_array_release(x);
    gx_array_release(y);
    free(f);
    free(u);
}

GXT_TEST(sort_2p20_plus_7)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = (1 << 20) + 7;
    check_sort_case(ctx, GX_F32, 1, &n, 1 << 30, false);
    check_sort_case(ctx, GX_I32, 1, &n, 1 << 30, false);
    check_sort_case(ctx, GX_U32, 1, &n, 50, false);
}

GXT_TEST(sort_rows)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t shapes[][3] = {{5, 0, 0}, {7, 1, 0}, {33, 17, 0}, {3, 2001, 0}, {2, 3, 5}, {0, 4, 0}};
    const int nds[] = {2, 2, 2, 2, 3, 2};
    const gx_dtype dts[] = {GX_F32, GX_I16, GX_U64, GX_F64, GX_BOOL, GX_I8};
    for (int s = 0; s < 6; s++)
        for (int d = 0; d < 6; d++) {
            check_sort_case(ctx, dts[d], nds[s], shapes[s], 9, false);
            check_sort_case(ctx, dts[d], nds[s], shapes[s], 9, true);
        }
}

GXT_TEST(sort_float_specials_exact)
{
    gx_ctx *ctx = gxt_ctx();
    uint32_t bits[] = {0x7FC00001u, 0x00000000u, 0xFFC00000u, 0x3F800000u, 0x80000000u, 0xFF800000u,
                       0x7F800000u, 0x80000000u, 0x00000000u, 0x7FC00000u, 0xBF800000u};
    int64_t n = 11;
    /* ascending: -inf, -1, then zeros in input order (+0 @1, -0 @4, -0 @7, +0 @8), 1, inf, NaNs in input order */
    const int64_t want_asc[] = {5, 10, 1, 4, 7, 8, 3, 6, 0, 2, 9};
    const int64_t want_desc[] = {6, 3, 1, 4, 7, 8, 10, 5, 0, 2, 9};
    gx_array *x = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, bits, &x));
    for (int desc = 0; desc < 2; desc++) {
        gx_sort_opts o = {.descending = desc};
        gx_array *s = NULL, *ix = NULL;
        GXT_OK(gx_sort(ctx, x, &o, &s));
        GXT_OK(gx_argsort(ctx, x, &o, &ix));
        uint32_t got[11];
        int64_t gi[11];
        GXT_OK(gx_array_to_host(s, got, sizeof got));
        GXT_OK(gx_array_to_host(ix, gi, sizeof gi));
        const int64_t *w = desc ? want_desc : want_asc;
        for (int i = 0; i < 11; i++) {
            GXT_EQ_I64(gi[i], w[i]);
            GXT_EQ_I64(got[i], bits[w[i]]);
        }
        gx_array_release(s);
        gx_array_release(ix);
    }
    gx_array_release(x);
}

GXT_TEST(sort_views_and_in_place)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t shape[2] = {9, 40};
    void *h;
    gx_array *x = mk_keys(ctx, GX_F64, 2, shape, &h, 30), *v = NULL, *s = NULL;
    gx_slice sl[2] = {{8, GX_END, -2}, {1, 39, 3}}; /* rows 8, 6, 4, 2, 0; every third column from 1 */
    GXT_OK(gx_array_view(x, sl, &v));
    gx_array *vd = NULL;
    GXT_OK(gx_array_clone(v, GX_DTYPE_DEFAULT, &vd));
    void *vh = to_host(vd);
    gx_array_desc d;
    GXT_OK(gx_array_describe(v, &d));
    GXT_OK(gx_sort(ctx, v, NULL, &s));
    void *sh = to_host(s);
    GXT_CHECK(check_rows(GX_F64, vh, d.shape[0], d.shape[1], false, sh, NULL) == 0);
    free(sh);
    /* in place on the strided view itself: x's other elements stay */
    GXT_OK(gx_sort_into(ctx, v, NULL, v));
    void *xh = to_host(x);
    GXT_OK(gx_array_to_host(v, sh = malloc((size_t)d.size * 8), (size_t)d.size * 8));
    GXT_CHECK(check_rows(GX_F64, vh, d.shape[0], d.shape[1], false, sh, NULL) == 0);
    GXT_CHECK(memcmp((double *)xh + 40 + 5, (double *)h + 40 + 5, 8) == 0); /* row 1 is not */
    GXT_CHECK(memcmp((double *)xh + 8 * 40 + 2, (double *)h + 8 * 40 + 2, 8) == 0); /* column 2 is not */
    /* in place on a dense array */
    gx_array *y = NULL;
    GXT_OK(gx_array_clone(vd, GX_DTYPE_DEFAULT, &y));
    GXT_OK(gx_sort_into(ctx, y, &(gx_sort_opts){.descending = 1}, y));
    free(sh);
    sh = to_host(y);
    GXT_CHECK(check_rows(GX_F64, vh, d.shape[0], d.shape[1], true, sh, NULL) == 0);
    free(sh);
    free(xh);
    free(vh);
    free(h);
    gx_array_release(y);
    gx_array_release(vd);
    gx_array_release(s);
    gx_array_release(v);
    gx_array_release(x);
}

GXT_TEST(sort_by_key_every_value_width)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype vdt[] = {GX_U8, GX_I16, GX_F32, GX_I64, GX_C128, GX_BOOL};
    const int64_t shapes[][2] = {{1, 1000}, {1, 70001}, {13, 37}};
    for (int s = 0; s < 3; s++)
        for (int v = 0; v < 6; v++) {
            void *kh, *vh;
            gx_array *k = mk_keys(ctx, GX_F32, 2, shapes[s], &kh, 11);
            int64_t n = shapes[s][0] * shapes[s][1];
            size_t vs = gx_dtype_size(vdt[v]);
            vh = malloc((size_t)n * vs);
            for (size_t i = 0; i < (size_t)n * vs; i++)
                ((uint8_t *)vh)[i] = (uint8_t)gxt_rand_u64();
            if (vdt[v] == GX_BOOL)
                for (int64_t i = 0; i < n; i++)
                    ((uint8_t *)vh)[i] &= 1;
            gx_array *va = NULL, *ko = NULL, *vo = NULL;
            GXT_OK(gx_array_from_host(ctx, vdt[v], 2, shapes[s], vh, &va));
            GXT_OK(gx_sort_by_key(ctx, k, va, &(gx_sort_opts){.descending = v & 1}, &ko, &vo));
            void *koh = to_host(ko), *voh = to_host(vo);
            GXT_CHECK(check_rows(GX_F32, kh, shapes[s][0], shapes[s][1], v & 1, koh, NULL) == 0);
            int64_t *ref = malloc((size_t)n * 8);
            ref_argsort(GX_F32, kh, shapes[s][0], shapes[s][1], v & 1, ref);
            int bad = 0;
            for (int64_t i = 0; i < n; i++) {
                int64_t src = (i / shapes[s][1]) * shapes[s][1] + ref[i];
                bad += memcmp((char *)voh + i * vs, (char *)vh + src * vs, vs) != 0;
            }
            GXT_EQ_I64(bad, 0);
            gx_array *vo2 = NULL;
            GXT_OK(gx_sort_by_key(ctx, k, va, NULL, NULL, &vo2)); /* keys not wanted */
            gx_array_release(vo2);
            free(ref);
            free(koh);
            free(voh);
            free(kh);
            free(vh);
            gx_array_release(k);
            gx_array_release(va);
            gx_array_release(ko);
            gx_array_release(vo);
        }
}

/* ------------------------------------------------------------ complex keys */

/* NumPy's complex order (npysort's CFLOAT_LT): (isnan(re), isnan(im), re, im). */
static int cx_cmp(double ar, double ai, double br, double bi, bool desc)
{
    int ga = 2 * (ar != ar) + (ai != ai), gb = 2 * (br != br) + (bi != bi);
    if (ga != gb)
        return ga < gb ? -1 : 1;
    double s = desc ? -1 : 1;
    if (ar == ar && br == br && ar != br)
        return s * ar < s * br ? -1 : 1;
    if (ai == ai && bi == bi && ai != bi)
        return s * ai < s * bi ? -1 : 1;
    return 0;
}

/* Stable insertion argsort of each row of complex values (re, im pairs as doubles). */
static void cx_ref(const double *z, int64_t nrows, int64_t len, bool desc, int64_t *idx)
{
    for (int64_t r = 0; r < nrows; r++) {
        const double *row = z + 2 * r * len;
        int64_t *p = idx + r * len;
        for (int64_t i = 0; i < len; i++) {
            int64_t j = i;
            for (; j > 0 && cx_cmp(row[2 * i], row[2 * i + 1], row[2 * p[j - 1]], row[2 * p[j - 1] + 1], desc) < 0;
                 j--)
                p[j] = p[j - 1];
            p[j] = i;
        }
    }
}

/* Complex keys of dtype t (re, im from a few values with NaNs, +-0.0 and ties). */
static gx_array *cx_keys(gx_ctx *ctx, gx_dtype t, int nd, const int64_t *shape, double **zh)
{
    static const double pool[] = {1.5, -2.0, 0.0, -0.0, 1.5, 3.25, -7.0, NAN, INFINITY, -INFINITY};
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= shape[d];
    double *z = malloc((size_t)(2 * n + 2) * sizeof *z);
    float *f = malloc((size_t)(2 * n + 2) * sizeof *f);
    uint64_t st = 12345;
    for (int64_t i = 0; i < 2 * n; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        z[i] = pool[(st >> 33) % 10];
        f[i] = (float)z[i];
    }
    gx_array *a = NULL;
    GXT_CHECK(gx_array_from_host(ctx, t, nd, shape, t == GX_C64 ? (void *)f : (void *)z, &a) == GX_OK);
    free(f);
    *zh = z;
    return a;
}

static void cx_check(gx_ctx *ctx, gx_dtype t, int nd, const int64_t *shape, bool flatten, bool desc)
{
    double *z;
    gx_array *x = cx_keys(ctx, t, nd, shape, &z);
    int64_t n = 1, len = nd ? shape[nd - 1] : 1;
    for (int d = 0; d < nd; d++)
        n *= shape[d];
    if (flatten)
        len = n;
    int64_t nrows = len ? n / len : 0, *ref = malloc((size_t)n * 8 + 8);
    cx_ref(z, nrows, len, desc, ref);
    gx_sort_opts o = {.descending = desc, .flatten = flatten};
    gx_array *s = NULL, *ix = NULL, *ks = NULL, *vs = NULL;
    GXT_OK(gx_sort(ctx, x, &o, &s));
    GXT_OK(gx_argsort(ctx, x, &o, &ix));
    GXT_OK(gx_sort_by_key(ctx, x, x, &o, &ks, &vs)); /* values: the keys themselves */
    size_t es = gx_dtype_size(t);
    char *sh = to_host(s), *kh = to_host(ks), *vh = to_host(vs);
    int64_t *ih = to_host(ix);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 3; i++) {
        int64_t src = (i / len) * len + ref[i];
        double re, im;
        if (t == GX_C64) {
            float f[2];
            memcpy(f, sh + i * es, es);
            re = f[0], im = f[1];
        } else {
            double d[2];
            memcpy(d, sh + i * es, es);
            re = d[0], im = d[1];
        }
        /* the value at i is the reference's (compare bits through the doubles: NaN == NaN, -0 vs 0) */
        bool same = (re == z[2 * src] || (re != re && z[2 * src] != z[2 * src])) &&
                    (im == z[2 * src + 1] || (im != im && z[2 * src + 1] != z[2 * src + 1])) &&
                    signbit(re) == signbit(z[2 * src]) && signbit(im) == signbit(z[2 * src + 1]);
        if (!same || ih[i] != ref[i] || memcmp(kh + i * es, sh + i * es, es) || memcmp(vh + i * es, sh + i * es, es)) {
            fprintf(stderr, "  %s n %lld len %lld desc %d: at %lld idx %lld want %lld\n", gx_dtype_name(t),
                    (long long)n, (long long)len, desc, (long long)i, (long long)ih[i], (long long)ref[i]);
            bad++;
        }
    }
    GXT_CHECK(bad == 0);
    /* _into, in place on x itself */
    GXT_OK(gx_sort_into(ctx, x, &(gx_sort_opts){.descending = desc}, x));
    if (!flatten) {
        char *xh = to_host(x);
        GXT_CHECK(n == 0 || memcmp(xh, sh, (size_t)n * es) == 0);
        free(xh);
    }
    free(sh), free(kh), free(vh), free(ih), free(ref), free(z);
    gx_array_release(s), gx_array_release(ix), gx_array_release(ks), gx_array_release(vs);
    gx_array_release(x);
}

GXT_TEST(sort_complex_numpy_order)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t lens[] = {0, 1, 2, 31, 32, 33, 1025};
    const gx_dtype ts[] = {GX_C64, GX_C128};
    for (int t = 0; t < 2; t++) {
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
            for (int desc = 0; desc < 2; desc++)
                cx_check(ctx, ts[t], 1, &lens[l], false, desc);
        int64_t rows[2] = {5, 37};
        cx_check(ctx, ts[t], 2, rows, false, false);
        cx_check(ctx, ts[t], 2, rows, false, true);
        cx_check(ctx, ts[t], 2, rows, true, false);
    }
}

/* A strided, reversed view of complex keys sorts as its dense copy. */
GXT_TEST(sort_complex_views)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t shape[2] = {6, 20};
    double *z;
    gx_array *x = cx_keys(ctx, GX_C128, 2, shape, &z), *v = NULL, *d = NULL, *a = NULL, *b = NULL;
    gx_slice sl[2] = {{5, GX_END, -2}, {1, 19, 3}};
    GXT_OK(gx_array_view(x, sl, &v));
    GXT_OK(gx_array_clone(v, GX_DTYPE_DEFAULT, &d));
    GXT_OK(gx_argsort(ctx, v, NULL, &a));
    GXT_OK(gx_argsort(ctx, d, NULL, &b));
    int64_t *ah = to_host(a), *bh = to_host(b);
    GXT_CHECK(memcmp(ah, bh, 3 * 6 * 8) == 0);
    free(ah), free(bh), free(z);
    gx_array_release(a), gx_array_release(b), gx_array_release(d), gx_array_release(v), gx_array_release(x);
}

GXT_TEST(sort_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 4, m = 5;
    gx_array *c = NULL, *x = NULL, *o = NULL, *oi = NULL, *v = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_C64, 1, &n, &c));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &x));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &o));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &m, &oi));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &m, &v));
    gx_array *r = NULL;
    GXT_STATUS(gx_topk(ctx, c, 1, NULL, &r, NULL), GX_ERR_DTYPE); /* complex keys: sort, argsort, by key only */
    GXT_MSG_HAS("c64");
    GXT_STATUS(gx_sort(ctx, NULL, NULL, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_sort(ctx, x, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_sort(ctx, x, &(gx_sort_opts){.reserved = {1}}, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_sort_into(ctx, x, NULL, o), GX_ERR_DTYPE);
    GXT_MSG_HAS("f64");
    GXT_STATUS(gx_sort_into(ctx, x, NULL, oi), GX_ERR_SHAPE);
    GXT_MSG_HAS("(5,)");
    GXT_STATUS(gx_argsort_into(ctx, x, NULL, x), GX_ERR_DTYPE);
    GXT_STATUS(gx_sort_by_key(ctx, x, v, NULL, &r, &r), GX_ERR_SHAPE);
    GXT_MSG_HAS("(4,)");
    GXT_CHECK(r == NULL);
    gx_array_release(c);
    gx_array_release(x);
    gx_array_release(o);
    gx_array_release(oi);
    gx_array_release(v);
}

/* More than 2^31 keys: the GPU only (the CPU machine's memory is the limit). */
GXT_TEST(sort_beyond_2p31_gpu)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_device_info di;
    GXT_OK(gx_device_info_get(ctx, &di));
    int64_t n = (1ll << 31) + 5;
    if (di.mem_free < (size_t)n * 4 * 3 + (1ull << 30)) {
        gxt_skip("needs about 26 GiB of free device memory");
        return;
    }
    gx_array *x = NULL, *s = NULL;
    GXT_OK(gx_array_iota(ctx, GX_U32, n, 0, 1, &x)); /* wraps at 2^32: no, n < 2^32 */
    gx_array *neg = NULL;
    GXT_OK(gx_map(ctx, "v -> 4294967295u - v", 1, &x, NULL, &neg)); /* descending input */
    GXT_OK(gx_sort(ctx, neg, NULL, &s));
    uint32_t head[3], tail[3];
    gx_array *hv = NULL, *tv = NULL;
    gx_slice h = {0, 3, 1}, t = {n - 3, GX_END, 1};
    GXT_OK(gx_array_view(s, &h, &hv));
    GXT_OK(gx_array_view(s, &t, &tv));
    GXT_OK(gx_array_to_host(hv, head, sizeof head));
    GXT_OK(gx_array_to_host(tv, tail, sizeof tail));
    uint32_t lo = (uint32_t)(4294967295u - (uint32_t)(n - 1));
    for (int i = 0; i < 3; i++) {
        GXT_EQ_I64(head[i], lo + (uint32_t)i);
        GXT_EQ_I64(tail[i], 4294967295u - 2 + (uint32_t)i);
    }
    gx_array_release(hv);
    gx_array_release(tv);
    gx_array_release(x);
    gx_array_release(neg);
    gx_array_release(s);
}

/* ------------------------------------------------------------ top-k */

GXT_TEST(topk_rows_nan_ties)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t shapes[][2] = {{1, 1000}, {17, 33}, {4, 5000}, {1, 70001}};
    const int64_t ks[] = {1, 7, 100, 33};
    const gx_dtype dts[] = {GX_F32, GX_I32, GX_F64, GX_U8};
    for (int s = 0; s < 4; s++)
        for (int d = 0; d < 4; d++)
            for (int smallest = 0; smallest < 2; smallest++) {
                int64_t k = ks[s] < shapes[s][1] ? ks[s] : shapes[s][1];
                void *h;
                gx_array *x = mk_keys(ctx, dts[d], 2, shapes[s], &h, 40), *v = NULL, *ix = NULL;
                GXT_OK(gx_topk(ctx, x, k, &(gx_topk_opts){.smallest = smallest}, &v, &ix));
                gx_array_desc dd;
                GXT_OK(gx_array_describe(v, &dd));
                GXT_EQ_I64(dd.shape[1], k);
                void *vh = to_host(v);
                int64_t *ih = to_host(ix);
                int64_t nr = shapes[s][0], len = shapes[s][1];
                int64_t *ref = malloc((size_t)(nr * len) * 8);
                ref_argsort(dts[d], h, nr, len, !smallest, ref);
                size_t es = gx_dtype_size(dts[d]);
                int bad = 0;
                for (int64_t r = 0; r < nr; r++)
                    for (int64_t j = 0; j < k; j++) {
                        int64_t want = ref[r * len + j];
                        bad += ih[r * k + j] != want;
                        bad += memcmp((char *)vh + (r * k + j) * es, (char *)h + (r * len + want) * es, es) != 0;
                    }
                GXT_EQ_I64(bad, 0);
                free(ref);
                free(vh);
                free(ih);
                free(h);
                gx_array_release(x);
                gx_array_release(v);
                gx_array_release(ix);
            }
}

GXT_TEST(topk_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 10;
    gx_array *x = NULL, *v = NULL, *c = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &x));
    GXT_STATUS(gx_topk(ctx, x, 11, NULL, &v, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("k = 11");
    GXT_STATUS(gx_topk(ctx, x, -1, NULL, &v, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_topk(ctx, x, 1, NULL, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_OK(gx_array_zeros(ctx, GX_C128, 1, &n, &c));
    GXT_STATUS(gx_topk(ctx, c, 1, NULL, &v, NULL), GX_ERR_DTYPE);
    GXT_OK(gx_topk(ctx, x, 0, NULL, &v, NULL)); /* k = 0: empty */
    int64_t sz = -1;
    GXT_OK(gx_array_size(v, &sz));
    GXT_EQ_I64(sz, 0);
    gx_array_release(v);
    GXT_OK(gx_topk(ctx, x, 3, NULL, &v, NULL));
    float top[3];
    GXT_OK(gx_array_to_host(v, top, sizeof top));
    GXT_CHECK(top[0] == 9 && top[1] == 8 && top[2] == 7);
    gx_array_release(v);
    gx_array_release(x);
    gx_array_release(c);
}

/* ------------------------------------------------------------ unique */

static void check_unique(gx_ctx *ctx, gx_dtype t, int64_t n, int range)
{
    void *h;
    gx_array *x = mk_keys(ctx, t, 1, &n, &h, range), *u = NULL, *c = NULL, *f = NULL, *inv = NULL;
    GXT_OK(gx_unique(ctx, x, NULL, &u, &c, &f, &inv));
    int64_t *ref = malloc((size_t)n * 8 + 8);
    ref_argsort(t, h, 1, n, false, ref);
    size_t es = gx_dtype_size(t);
    /* reference runs */
    int64_t nu = 0;
    int64_t *rstart = malloc((size_t)n * 8 + 8), *rinv = malloc((size_t)n * 8 + 8);
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || ref_cmp_asc(t, (char *)h + ref[i] * es, (char *)h + ref[i - 1] * es) != 0)
            rstart[nu++] = i;
        rinv[ref[i]] = nu - 1;
    }
    gx_array_desc d;
    GXT_OK(gx_array_describe(u, &d));
    GXT_EQ_I64(d.size, nu);
    if (d.size == nu) {
        void *uh = to_host(u);
        int64_t *ch = to_host(c), *fh = to_host(f), *ih = to_host(inv);
        int bad = 0;
        for (int64_t j = 0; j < nu; j++) {
            int64_t end = j + 1 < nu ? rstart[j + 1] : n;
            bad += memcmp((char *)uh + j * es, (char *)h + ref[rstart[j]] * es, es) != 0;
            bad += ch[j] != end - rstart[j];
            bad += fh[j] != ref[rstart[j]];
        }
        for (int64_t i = 0; i < n; i++)
            bad += ih[i] != rinv[i];
        GXT_EQ_I64(bad, 0);
        free(uh);
        free(ch);
        free(fh);
        free(ih);
    }
    free(ref);
    free(rstart);
    free(rinv);
    free(h);
    gx_array_release(x);
    gx_array_release(u);
    gx_array_release(c);
    gx_array_release(f);
    gx_array_release(inv);
}

GXT_TEST(unique_values_counts_first_inverse)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t lens[] = {0, 1, 2, 33, 5000, 70001};
    for (int d = 0; d < NKDT; d++)
        for (int l = 0; l < 6; l++)
            check_unique(ctx, key_dt[d], lens[l], l == 5 ? 1 << 16 : 13);
    gx_array *x = NULL, *u = NULL;
    int64_t n = 3;
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &x));
    GXT_OK(gx_unique(ctx, x, NULL, &u, NULL, NULL, NULL)); /* optional outputs NULL */
    GXT_STATUS(gx_unique(ctx, x, NULL, NULL, NULL, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(u);
    gx_array_release(x);
}

/* ------------------------------------------------------------ searchsorted */

static int64_t ref_ss(gx_dtype t, const char *hay, int64_t m, const void *v, bool right)
{
    size_t es = gx_dtype_size(t);
    int64_t c = 0;
    for (int64_t i = 0; i < m; i++) {
        int k = ref_cmp_asc(t, hay + i * es, v);
        c += right ? k <= 0 : k < 0;
    }
    return c;
}

GXT_TEST(searchsorted_left_right_rows)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_F32, GX_F64, GX_I32, GX_U8, GX_I64, GX_U16};
    const int64_t ms[] = {0, 1, 33, 1000};
    for (int d = 0; d < 6; d++)
        for (int mi = 0; mi < 4; mi++)
            for (int rows = 0; rows < 2; rows++) {
                gx_dtype t = dts[d];
                size_t es = gx_dtype_size(t);
                int64_t R = rows ? 3 : 1, m = ms[mi], q = 37;
                int64_t hs[2] = {R, m}, ns[2] = {R, q};
                void *hh, *nh;
                gx_array *h0 = mk_keys(ctx, t, rows ? 2 : 1, rows ? hs : &m, &hh, 15);
                gx_array *hay = NULL, *nd = mk_keys(ctx, t, rows ? 2 : 1, rows ? ns : &q, &nh, 17), *o = NULL;
                GXT_OK(gx_sort(ctx, h0, NULL, &hay));
                free(hh);
                hh = to_host(hay);
                for (int right = 0; right < 2; right++) {
                    GXT_OK(gx_searchsorted(ctx, hay, nd, &(gx_searchsorted_opts){.right = right}, &o));
                    int64_t *oh = to_host(o);
                    int bad = 0;
                    for (int64_t i = 0; i < R * q; i++)
                        bad += oh[i] != ref_ss(t, (char *)hh + (i / q) * m * es, m, (char *)nh + i * es, right);
                    GXT_EQ_I64(bad, 0);
                    free(oh);
                    gx_array_release(o);
                }
                free(hh);
                free(nh);
                gx_array_release(h0);
                gx_array_release(hay);
                gx_array_release(nd);
            }
}

GXT_TEST(searchsorted_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 100, s2[2] = {2, 50}, s3[2] = {3, 4};
    gx_array *h = NULL, *nf = NULL, *ni = NULL, *h2 = NULL, *n3 = NULL, *o = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 50, -1, &h)); /* descending: unsorted */
    GXT_OK(gx_array_iota(ctx, GX_F32, n, -60, 1.5, &nf));
    GXT_OK(gx_searchsorted(ctx, h, nf, NULL, &o)); /* undefined positions, never a crash */
    int64_t *oh = to_host(o);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += oh[i] < 0 || oh[i] > n;
    GXT_EQ_I64(bad, 0);
    free(oh);
    gx_array_release(o);
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &ni));
    GXT_STATUS(gx_searchsorted(ctx, h, ni, NULL, &o), GX_ERR_DTYPE);
    GXT_MSG_HAS("i32");
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, s2, &h2));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, s3, &n3));
    GXT_STATUS(gx_searchsorted(ctx, h2, n3, NULL, &o), GX_ERR_SHAPE);
    GXT_MSG_HAS("(3, 4)");
    GXT_STATUS(gx_searchsorted(ctx, h, nf, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(h);
    gx_array_release(nf);
    gx_array_release(ni);
    gx_array_release(h2);
    gx_array_release(n3);
}

/* ------------------------------------------------------------ histograms */

GXT_TEST(histogram_even_edges_weights)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_F32, GX_F64, GX_I32, GX_U8, GX_I64};
    const int64_t lens[] = {0, 1, 31, 33, 100003};
    for (int d = 0; d < 5; d++)
        for (int l = 0; l < 5; l++) {
            gx_dtype t = dts[d];
            int64_t n = lens[l];
            void *h;
            gx_array *x = mk_keys(ctx, t, 1, &n, &h, 40), *c = NULL, *cw = NULL, *ce = NULL, *w = NULL, *e = NULL;
            double *wh = malloc((size_t)n * 8 + 8), lo = -5, hi = 5;
            for (int64_t i = 0; i < n; i++)
                wh[i] = gxt_rand01();
            if (n > 0 && isfl(t)) /* exactly hi, exactly lo */
                t == GX_F32 ? (((float *)h)[0] = 5.0f) : (((double *)h)[0] = 5.0);
            if (n > 1 && isfl(t))
                t == GX_F32 ? (((float *)h)[1] = -5.0f) : (((double *)h)[1] = -5.0);
            gx_array_release(x);
            GXT_OK(gx_array_from_host(ctx, t, 1, &n, h, &x));
            GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, wh, &w));
            int64_t nb = 7, drop = -1, dropw = -1, drope = -1;
            GXT_OK(gx_histogram(ctx, x, &(gx_histogram_opts){.nbins = nb, .lo = lo, .hi = hi}, &c, &drop));
            GXT_OK(gx_histogram(ctx, x, &(gx_histogram_opts){.nbins = nb, .lo = lo, .hi = hi, .weights = w}, &cw,
                                &dropw));
            double edges[5] = {-5, -1, 0, 0.5, 3};
            int64_t ne = 5;
            GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &ne, edges, &e));
            GXT_OK(gx_histogram(ctx, x, &(gx_histogram_opts){.edges = e}, &ce, &drope));
            int64_t rc[7] = {0}, re[4] = {0}, rdrop = 0, redrop = 0;
            double rw[7] = {0};
            for (int64_t i = 0; i < n; i++) {
                double v = t == GX_F32 ? ((float *)h)[i] : t == GX_F64 ? ((double *)h)[i]
                         : t == GX_I32 ? ((int32_t *)h)[i] : t == GX_U8 ? ((uint8_t *)h)[i] : (double)((int64_t *)h)[i];
                if (v >= lo && v < hi) {
                    int64_t b = (int64_t)floor((v - lo) * (nb / (hi - lo)));
                    rc[b]++, rw[b] += wh[i];
                } else
                    rdrop++;
                int eb = -1;
                for (int k = 0; k < 4; k++)
                    if (v >= edges[k] && v < edges[k + 1])
                        eb = k;
                if (eb < 0)
                    redrop++;
                else
                    re[eb]++;
            }
            int64_t *ch = to_host(c), *ceh = to_host(ce);
            double *cwh = to_host(cw);
            for (int b = 0; b < 7; b++) {
                GXT_EQ_I64(ch[b], rc[b]);
                GXT_NEAR(cwh[b], rw[b], 1e-12);
            }
            for (int b = 0; b < 4; b++)
                GXT_EQ_I64(ceh[b], re[b]);
            GXT_EQ_I64(drop, rdrop);
            GXT_EQ_I64(dropw, rdrop);
            GXT_EQ_I64(drope, redrop);
            free(ch), free(ceh), free(cwh), free(wh), free(h);
            gx_array_release(x), gx_array_release(c), gx_array_release(cw), gx_array_release(ce);
            gx_array_release(w), gx_array_release(e);
        }
}

/* Uniform bins of f32 and f64 values on every side of each bin edge (the f32/f64
 * neighbours of lo + j * (hi - lo) / nbins), exactly lo and hi, NaN, +-inf, +-0, as
 * a strided view and at an offset of 1..3 values (the GPU's vector loads): counts
 * and the dropped count against the documented rule floor((v - lo) * (nbins /
 * (hi - lo))) in f64, clamped to the last bin. */
static void hist_edges_case(gx_ctx *ctx, gx_dtype t, double lo, double hi, int64_t nb, int64_t n)
{
    double *v = malloc((size_t)n * 8);
    int64_t m = 0;
    for (int64_t j = 0; j <= nb && m + 8 < n; j++) {
        double e = lo + (double)j * ((hi - lo) / (double)nb), d = e, u = e;
        v[m++] = e;
        for (int s = 0; s < 3; s++) {
            d = t == GX_F32 ? nextafterf((float)d, -INFINITY) : nextafter(d, -INFINITY);
            u = t == GX_F32 ? nextafterf((float)u, INFINITY) : nextafter(u, INFINITY);
            v[m++] = d, v[m++] = u;
        }
    }
    const double extra[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 3e38, -3e38, lo, hi};
    for (int i = 0; i < 9 && m < n; i++)
        v[m++] = extra[i];
    while (m < n)
        v[m++] = lo - 1 + gxt_rand01() * (hi - lo + 2);
    size_t eb = gx_dtype_size(t);
    char *h = malloc((size_t)n * eb);
    for (int64_t i = 0; i < n; i++) {
        if (t == GX_F32)
            ((float *)h)[i] = (float)v[i];
        else
            ((double *)h)[i] = v[i];
    }
    gx_array *x = NULL;
    GXT_OK(gx_array_from_host(ctx, t, 1, &n, h, &x));
    for (int view = 0; view < 5 && !gxt_failures; view++) {
        /* view 0: all; 1..3: from offset view; 4: every other value, backwards */
        gx_slice sl = view < 4 ? (gx_slice){view, GX_END, 1} : (gx_slice){-1, GX_END, -2};
        gx_array *xv = NULL, *c = NULL;
        GXT_OK(gx_array_view(x, &sl, &xv));
        int64_t drop = -1, rdrop = 0, *rc = calloc((size_t)nb, 8);
        GXT_OK(gx_histogram(ctx, xv, &(gx_histogram_opts){.nbins = nb, .lo = lo, .hi = hi}, &c, &drop));
        for (int64_t i = view < 4 ? view : n - 1; view < 4 ? i < n : i >= 0; i += view < 4 ? 1 : -2) {
            double w = t == GX_F32 ? (double)((float *)h)[i] : ((double *)h)[i];
            if (!(w >= lo && w < hi)) {
                rdrop++;
                continue;
            }
            int64_t b = (int64_t)floor((w - lo) * ((double)nb / (hi - lo)));
            rc[b < nb ? b : nb - 1]++;
        }
        int64_t *ch = to_host(c);
        GXT_EQ_I64(drop, rdrop);
        for (int64_t b = 0; b < nb; b++)
            if (ch[b] != rc[b]) {
                GXT_FAIL_AT(__FILE__, __LINE__, "%s [%g, %g) %lld bins, view %d: bin %lld has %lld, want %lld",
                            gx_dtype_name(t), lo, hi, (long long)nb, view, (long long)b, (long long)ch[b],
                            (long long)rc[b]);
                break;
            }
        free(ch), free(rc);
        gx_array_release(c), gx_array_release(xv);
    }
    gx_array_release(x);
    free(h), free(v);
}

GXT_TEST(histogram_f32_bin_edges)
{
    gx_ctx *ctx = gxt_ctx();
    static const struct { double lo, hi; int64_t nb; } rg[] = {
        {0, 1, 256}, {-3, 2.5, 7}, {0.1, 0.7, 2048}, {1e8, 1e8 + 256, 256}, {-1e300, 1e300, 100},
        {0, 1, 1}, {-5, 3e38, 2000}, {0, 1, 2049}, {-0.3, 0.3, 3}, {0, 0.5, 256}, {0, 3, 768}};
    for (int g = 0; g < 11 && !gxt_failures; g++) {
        hist_edges_case(ctx, GX_F32, rg[g].lo, rg[g].hi, rg[g].nb, 20000 + 2 * rg[g].nb * 7 + 3);
        hist_edges_case(ctx, GX_F64, rg[g].lo, rg[g].hi, rg[g].nb, 3001 + rg[g].nb * 7);
        hist_edges_case(ctx, GX_F32, rg[g].lo, rg[g].hi, rg[g].nb, 33);
    }
}

GXT_TEST(histogram_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 10, three = 3;
    gx_array *x = NULL, *c = NULL, *cx = NULL, *w = NULL, *e = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &x));
    GXT_STATUS(gx_histogram(ctx, x, &(gx_histogram_opts){.nbins = 0, .lo = 0, .hi = 1}, &c, NULL),
               GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("nbins");
    GXT_STATUS(gx_histogram(ctx, x, &(gx_histogram_opts){.nbins = -3, .lo = 0, .hi = 1}, &c, NULL),
               GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_histogram(ctx, x, &(gx_histogram_opts){.nbins = 4, .lo = 1, .hi = 1}, &c, NULL),
               GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("lo < hi");
    GXT_STATUS(gx_histogram(ctx, x, &(gx_histogram_opts){.nbins = 4, .lo = 0, .hi = NAN}, &c, NULL),
               GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_histogram(ctx, x, NULL, &c, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_OK(gx_array_zeros(ctx, GX_C64, 1, &n, &cx));
    GXT_STATUS(gx_histogram(ctx, cx, &(gx_histogram_opts){.nbins = 4, .lo = 0, .hi = 1}, &c, NULL), GX_ERR_DTYPE);
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &three, &w));
    GXT_STATUS(gx_histogram(ctx, x, &(gx_histogram_opts){.nbins = 4, .lo = 0, .hi = 1, .weights = w}, &c, NULL),
               GX_ERR_SHAPE);
    GXT_OK(gx_array_iota(ctx, GX_F64, 3, 2, -1, &e)); /* decreasing edges */
    GXT_STATUS(gx_histogram(ctx, x, &(gx_histogram_opts){.edges = e}, &c, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("increase");
    GXT_STATUS(gx_histogram(ctx, x, &(gx_histogram_opts){.edges = e, .nbins = 3}, &c, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(c == NULL);
    gx_array_release(x), gx_array_release(cx), gx_array_release(w), gx_array_release(e);
}

GXT_TEST(bincount_counts_weights)
{
    gx_ctx *ctx = gxt_ctx();
    const gx_dtype dts[] = {GX_I32, GX_U8, GX_I64, GX_U16, GX_BOOL};
    const int64_t lens[] = {0, 1, 33, 100003};
    for (int d = 0; d < 5; d++)
        for (int l = 0; l < 4; l++) {
            int64_t n = lens[l];
            double *v = malloc((size_t)n * 8 + 8), *wv = malloc((size_t)n * 8 + 8);
            int64_t mx = -1;
            for (int64_t i = 0; i < n; i++) {
                v[i] = (double)(gxt_rand_u64() % (dts[d] == GX_BOOL ? 2 : 50));
                wv[i] = gxt_rand01();
                mx = v[i] > mx ? (int64_t)v[i] : mx;
            }
            gx_array *xd = NULL, *x = NULL, *w = NULL, *c = NULL, *cw = NULL;
            GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, v, &xd));
            GXT_OK(gx_array_clone(xd, dts[d], &x));
            GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, wv, &w));
            GXT_OK(gx_bincount(ctx, x, &(gx_bincount_opts){.minlength = 3}, &c));
            GXT_OK(gx_bincount(ctx, x, &(gx_bincount_opts){.weights = w}, &cw));
            int64_t nb = mx + 1 > 3 ? mx + 1 : 3;
            gx_array_desc dc, dw;
            GXT_OK(gx_array_describe(c, &dc));
            GXT_OK(gx_array_describe(cw, &dw));
            GXT_EQ_I64(dc.size, nb);
            GXT_EQ_I64(dw.size, mx + 1);
            int64_t *ch = to_host(c);
            double *cwh = to_host(cw);
            for (int64_t b = 0; b < nb; b++) {
                int64_t rc = 0;
                double rw = 0;
                for (int64_t i = 0; i < n; i++)
                    if (v[i] == (double)b)
                        rc++, rw += wv[i];
                GXT_EQ_I64(ch[b], rc);
                if (b <= mx)
                    GXT_NEAR(cwh[b], rw, 1e-12);
            }
            free(ch), free(cwh), free(v), free(wv);
            gx_array_release(xd), gx_array_release(x), gx_array_release(w), gx_array_release(c);
            gx_array_release(cw);
        }
    int64_t n = 4;
    double bad[4] = {1, 2, -3, 4};
    gx_array *b = NULL, *bi = NULL, *c = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n, bad, &b));
    GXT_STATUS(gx_bincount(ctx, b, NULL, &c), GX_ERR_DTYPE);
    GXT_OK(gx_array_clone(b, GX_I32, &bi));
    GXT_STATUS(gx_bincount(ctx, bi, NULL, &c), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("-3");
    GXT_STATUS(gx_bincount(ctx, bi, &(gx_bincount_opts){.minlength = -1}, &c), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(b), gx_array_release(bi);
}

/* ------------------------------------------------------------ pipeline terminals */

/* i -> (i * 7919) % 1009 - 500 for i < n, kept where not a multiple of 3, as the
 * pipeline's dtype t (f32/f64 halved so there are fractions and many ties). */
static double pipe_ref_val(gx_dtype t, int64_t i)
{
    int64_t y = (i * 7919) % 1009 - 500;
    return isfl(t) ? y * 0.5 : (double)y;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* iota | map | filter | sort (ascending and descending) against the host's sorted
 * values of the same stream, each key dtype the lambda can produce, lengths 0, 1, 31,
 * 33 and past the parallel radix threshold. */
GXT_TEST(pipe_sort_map_filter)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    const char *maps[] = {"y -> f64(y) * 0.5", "y -> f32(f64(y) * 0.5)", "y -> i32(y)", "y -> y"};
    const gx_dtype dts[] = {GX_F64, GX_F32, GX_I32, GX_I64};
    const int64_t lens[] = {0, 1, 2, 31, 33, 100003};
    for (int d = 0; d < 4; d++)
        for (int l = 0; l < 6; l++)
            for (int desc = 0; desc < 2; desc++) {
                int64_t n = lens[l], m = 0;
                double *ref = malloc((size_t)n * sizeof *ref + 8);
                for (int64_t i = 0; i < n; i++)
                    if (((i * 7919) % 1009 - 500) % 3 != 0)
                        ref[m++] = pipe_ref_val(dts[d], i);
                qsort(ref, (size_t)m, sizeof *ref, dbl_cmp);
                gx_pipe *p = NULL;
                gx_array *s = NULL;
                GXT_OK(gx_pipe_iota(ctx, GX_I64, n, 0, 1, &p));
                GXT_OK(gx_pipe_map(p, "i -> (i * 7919) % 1009 - 500", NULL));
                GXT_OK(gx_pipe_filter(p, "y -> y % 3 != 0", NULL));
                GXT_OK(gx_pipe_map(p, maps[d], NULL));
                GXT_OK(gx_pipe_sort(p, &(gx_sort_opts){.descending = desc}, &s));
                gx_array_desc ds = {0};
                GXT_CHECK(s && gx_array_describe(s, &ds) == GX_OK);
                GXT_CHECK(ds.dtype == dts[d] && ds.ndim == 1 && ds.shape[0] == m);
                gx_array *f = NULL;
                if (s && m > 0)
                    GXT_OK(gx_array_clone(s, GX_F64, &f));
                double *got = f ? to_host(f) : NULL;
                for (int64_t k = 0; got && k < m; k++)
                    if (got[k] != ref[desc ? m - 1 - k : k]) {
                        GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld desc=%d at %lld: %g, want %g", maps[d],
                                    (long long)n, desc, (long long)k, got[k], ref[desc ? m - 1 - k : k]);
                        break;
                    }
                free(got), free(ref);
                gx_array_release(f), gx_array_release(s);
                gx_pipe_destroy(p);
            }
}

/* Histogram of a random pipeline (uniform f64 mapped to [-1, 11)) against a host
 * histogram of the same values (collected from the same pipeline, which the terminal
 * leaves as it was); bad arity and NULLs. */
GXT_TEST(pipe_histogram_random)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    const int64_t lens[] = {0, 1, 33, 200003};
    for (int l = 0; l < 4; l++) {
        gx_pipe *p = NULL;
        GXT_OK(gx_pipe_random(ctx, GX_F64, 1234 + (uint64_t)l, lens[l], &p));
        GXT_OK(gx_pipe_map(p, "u -> u * 12.0 - 1.0", NULL));
        GXT_OK(gx_pipe_filter(p, "x -> x < 10.5", NULL));
        gx_array *c = NULL, *v = NULL;
        int64_t drop = -1, nb = 10;
        GXT_OK(gx_pipe_histogram(p, &(gx_histogram_opts){.nbins = nb, .lo = 0, .hi = 10}, &c, &drop));
        GXT_OK(gx_pipe_collect(p, 1, &v));
        int64_t m = 0, rc[10] = {0}, rdrop = 0;
        GXT_OK(gx_array_size(v, &m));
        double *vh = m > 0 ? to_host(v) : NULL;
        for (int64_t i = 0; i < m; i++)
            if (vh[i] >= 0 && vh[i] < 10)
                rc[(int64_t)floor(vh[i] * (nb / 10.0))]++;
            else
                rdrop++;
        int64_t *ch = c ? to_host(c) : NULL, tot = 0;
        int64_t csz = 0;
        GXT_CHECK(ch && gx_array_size(c, &csz) == GX_OK && csz == nb);
        for (int b = 0; ch && b < nb; b++) {
            GXT_EQ_I64(ch[b], rc[b]);
            tot += ch[b];
        }
        GXT_EQ_I64(drop, rdrop);
        if (lens[l] > 1000) /* the stream is not all zeros: most values were binned */
            GXT_CHECK(tot > lens[l] / 2 && rdrop > 0);
        free(ch), free(vh);
        gx_array_release(c), gx_array_release(v);
        gx_pipe_destroy(p);
    }
    /* two values per item, NULLs */
    gx_pipe *p2 = NULL;
    gx_array *junk = NULL;
    GXT_OK(gx_pipe_iota(ctx, GX_I64, 10, 0, 1, &p2));
    GXT_OK(gx_pipe_enumerate(p2));
    GXT_STATUS(gx_pipe_sort(p2, NULL, &junk), GX_ERR_SHAPE);
    GXT_MSG_HAS("values per item");
    GXT_CHECK(junk == NULL);
    GXT_STATUS(gx_pipe_histogram(p2, &(gx_histogram_opts){.nbins = 2, .lo = 0, .hi = 1}, &junk, NULL),
               GX_ERR_SHAPE);
    GXT_MSG_HAS("gx_pipe_histogram");
    GXT_STATUS(gx_pipe_sort(NULL, NULL, &junk), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_pipe_sort(p2, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_pipe_histogram(p2, NULL, &junk, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("opts");
    gx_pipe_destroy(p2);
}

/* The CPU's radix select (rows of 4096 keys and more, k <= row / 16) for every key
 * dtype, k = 1 and k = row / 16, against the stable host argsort; few distinct
 * values (many ties at the k-th), NaNs and -0.0 among floats. */
/* Top-k of x (host copy h, nr rows of len) against the stable argsort's first k. */
static void topk_check(gx_ctx *ctx, gx_dtype t, gx_array *x, const void *h, int64_t nr, int64_t len, int64_t k,
                       int smallest, const char *what)
{
    gx_array *v = NULL, *ix = NULL;
    GXT_OK(gx_topk(ctx, x, k, &(gx_topk_opts){.smallest = smallest}, &v, &ix));
    if (!v || !ix)
        return;
    void *vh = to_host(v);
    int64_t *ih = to_host(ix), *ref = malloc((size_t)(nr * len) * 8);
    ref_argsort(t, h, nr, len, !smallest, ref);
    size_t es = gx_dtype_size(t);
    int64_t bad = 0, first = -1;
    for (int64_t r = 0; r < nr; r++)
        for (int64_t j = 0; j < k; j++) {
            int64_t want = ref[r * len + j];
            int b = ih[r * k + j] != want ||
                    memcmp((char *)vh + (r * k + j) * es, (const char *)h + (r * len + want) * es, es) != 0;
            if (b && first < 0)
                first = r * k + j;
            bad += b;
        }
    if (bad)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s %s %lldx%lld k=%lld smallest=%d: %lld wrong, first at %lld", what,
                    gx_dtype_name(t), (long long)nr, (long long)len, (long long)k, smallest, (long long)bad,
                    (long long)first);
    free(ref), free(vh), free(ih);
    gx_array_release(v), gx_array_release(ix);
}

/* f32 rows for the selects: 0 uniform [0, 1) (the bench's), 1 all equal, 2 NaNs
 * (both signs, payloads) but for 1 in 64, 3 few values (ties at the k-th), 4
 * decreasing with -0.0/0.0 pairs, 5 small integers (heavy ties across the row). */
static float *topk_f32_rows(int pat, int64_t n)
{
    float *h = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = gxt_rand_u64();
        float v = (float)(u >> 40) * (1.0f / 16777216.0f);
        if (pat == 1)
            v = 0.25f;
        if (pat == 2 && u % 64 != 0) {
            uint32_t b = 0x7fc00000u | (uint32_t)(u % 5) | (u & 1 ? 0x80000000u : 0);
            memcpy(&v, &b, 4);
        }
        if (pat == 3)
            v = u % 8 < 3 ? 7.0f : u % 8 < 6 ? -7.0f : (float)(u % 5);
        if (pat == 4)
            v = (float)(n - i) * 0.5f;
        if (pat == 5)
            v = (float)((int)(u % 7) - 3);
        h[i] = v;
    }
    if (pat == 4)
        for (int64_t i = 0; i + 1 < n; i += 97)
            h[i] = -0.0f, h[i + 1] = 0.0f;
    return h;
}

/* Long rows: the selects of both backends (CPU: rows of 2^16 and more, fewer than
 * 2 per worker, split over the cores; CUDA: rows over 2048 with k <= 1024) and the
 * sort paths beside them, against the stable argsort: every f32 pattern, k = 1, 100,
 * 1024, 1025, len / 16 and len, both directions, every dtype. */
GXT_TEST(topk_long_rows_patterns)
{
    gx_ctx *ctx = gxt_ctx();
    for (int pat = 0; pat < 6 && !gxt_failures; pat++) {
        const int64_t shapes[3][2] = {{1, (1 << 20) + 7}, {2, 70001}, {3, 4099}};
        for (int si = 0; si < 3; si++) {
            int64_t nr = shapes[si][0], len = shapes[si][1], n = nr * len;
            float *h = topk_f32_rows(pat, n);
            gx_array *x = NULL;
            GXT_OK(gx_array_from_host(ctx, GX_F32, 2, shapes[si], h, &x));
            const int64_t ks[] = {1, 100, 1024, 1025, len / 16, len};
            for (int ki = 0; ki < 6; ki++)
                for (int smallest = 0; smallest < 2; smallest++)
                    if ((ki != 5 || len < 100000) && (pat == 0 || ki < 3 || si == 1))
                        topk_check(ctx, GX_F32, x, h, nr, len, ks[ki], smallest, "pattern");
            gx_array_release(x);
            free(h);
        }
    }
    for (int d = 0; d < NKDT && !gxt_failures; d++) {
        const int64_t shape[2] = {2, 70001};
        void *h;
        gx_array *x = mk_keys(ctx, key_dt[d], 2, shape, &h, d % 2 ? 1000000 : 9);
        for (int smallest = 0; smallest < 2; smallest++) {
            topk_check(ctx, key_dt[d], x, h, 2, 70001, 100, smallest, "dtype");
            topk_check(ctx, key_dt[d], x, h, 2, 70001, 1, smallest, "dtype");
        }
        free(h);
        gx_array_release(x);
    }
}

GXT_TEST(topk_select_every_dtype)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t shape[2] = {3, 4099};
    const int64_t ks[] = {1, 4099 / 16, 31};
    for (int d = 0; d < NKDT; d++)
        for (int ki = 0; ki < 3; ki++)
            for (int smallest = 0; smallest < 2; smallest++) {
                gx_dtype t = key_dt[d];
                int64_t k = ks[ki], len = shape[1], nr = shape[0];
                void *h;
                gx_array *x = mk_keys(ctx, t, 2, shape, &h, ki == 2 ? 1000000 : 9), *v = NULL, *ix = NULL;
                GXT_OK(gx_topk(ctx, x, k, &(gx_topk_opts){.smallest = smallest}, &v, &ix));
                void *vh = v ? to_host(v) : NULL;
                int64_t *ih = ix ? to_host(ix) : NULL;
                int64_t *ref = malloc((size_t)(nr * len) * 8);
                ref_argsort(t, h, nr, len, !smallest, ref);
                size_t es = gx_dtype_size(t);
                int bad = 0;
                for (int64_t r = 0; vh && ih && r < nr; r++)
                    for (int64_t j = 0; j < k; j++) {
                        int64_t want = ref[r * len + j];
                        bad += ih[r * k + j] != want;
                        bad += memcmp((char *)vh + (r * k + j) * es, (char *)h + (r * len + want) * es, es) != 0;
                    }
                GXT_CHECK(vh && ih);
                if (bad)
                    GXT_FAIL_AT(__FILE__, __LINE__, "%s k=%lld smallest=%d: %d wrong", gx_dtype_name(t),
                                (long long)k, smallest, bad);
                free(ref), free(vh), free(ih), free(h);
                gx_array_release(x), gx_array_release(v), gx_array_release(ix);
            }
}
