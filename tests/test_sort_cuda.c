/* test_sort_cuda.c -- the CUDA kernels of sorting, top-k and histograms
 * (src/ops/sort_cuda.c), called through the seam (sort_priv.h) against host
 * references.  Every generated unit is also compiled with NVRTC for sm_90 where NVRTC
 * exists (no GPU needed), so syntax errors show on any machine with the toolkit. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* setenv */
#endif
#include "gx_test.h"

#include "core/gx_internal.h"
#include "ops/sort_cuda.h"

#ifdef GX_HAVE_CUDA
#include "backend/cuda/cuda_priv.h"
#endif

static const gx_dtype sct_keys[] = {GX_BOOL, GX_I8, GX_I16, GX_I32, GX_I64, GX_U8,
                                    GX_U16,  GX_U32, GX_U64, GX_F32, GX_F64};
#define SCT_NKEYS ((int)(sizeof sct_keys / sizeof sct_keys[0]))

#ifdef GX_HAVE_CUDA
static int sct_compile(const char *src, const char *what)
{
    void *bin = NULL;
    size_t len = 0;
    char *log = NULL;
    gx_status s = cuda_nvrtc_compile(src, what, 9, 0, 0, &bin, &len, &log);
    if (s != GX_OK)
        fprintf(stderr, "%s: %s\n", what, gx_last_error());
    free(bin);
    free(log);
    return s == GX_OK;
}
#endif

GXT_TEST(sort_cuda_nvrtc_units)
{
#ifdef GX_HAVE_CUDA
    if (!cuda_nvrtc_load()) {
        gxt_skip("NVRTC is not loadable here");
        return;
    }
    static const int vbs[] = {0, 1, 2, 4, 8, 16};
    /* Every key dtype, both directions and every value width at least once (the
     * whole cross product takes minutes of NVRTC). */
    for (int i = 0; i < SCT_NKEYS + 2 && !gxt_failures; i++) {
        int desc = i & 1, v = i % 6;
        gx_dtype kt = sct_keys[i % SCT_NKEYS];
        char *src = NULL;
        GXT_OK(gx__sort_cuda_source(kt, desc, vbs[v], &src));
        /* the device-wide sort's kernels go out as programmatic launches */
        static const char *const pdl[] = {"gx_sc_zero", "gx_sc_up", "gx_sc_scan", "gx_sc_pass", "gx_sc_pass_m"};
        for (int e = 0; src && e < 5; e++)
            GXT_CHECK(gx__kernel_src_pdl(src, pdl[e]));
        if (src && vbs[v] == 4)
            GXT_CHECK(gx__kernel_src_pdl(src, "gx_sc_pass_w") && gx__kernel_src_pdl(src, "gx_sc_pass_wm"));
        char what[64];
        snprintf(what, sizeof what, "sort %s desc %d vb %d", gx_dtype_name(kt), desc, vbs[v]);
        GXT_CHECK(sct_compile(src, what));
        free(src);
    }
    /* The short-row units with their row length fixed: the widest networks, both
     * composite key forms (32-bit keys packed with the index, 64-bit as a pair). */
    static const struct {
        gx_dtype kt;
        int vb, np;
    } rows[] = {{GX_F32, 0, 1024}, {GX_F64, 8, 2048}, {GX_U8, 16, 1}, {GX_I32, 4, 32}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] && !gxt_failures; i++) {
        char *src = NULL;
        GXT_OK(gx__sort_cuda_rows_source(rows[i].kt, (int)i & 1, rows[i].vb, rows[i].np, &src));
        char what[64];
        snprintf(what, sizeof what, "rows %s np %d", gx_dtype_name(rows[i].kt), rows[i].np);
        GXT_CHECK(src && strstr(src, "#define GX_NPC") && sct_compile(src, what));
        free(src);
    }
    static const gx_dtype xs[] = {GX_BOOL, GX_I32, GX_U64, GX_F32, GX_F64};
    double edges[3] = {0, 1, 2};
    for (int kind = 0; kind < 3; kind++)
        for (int big = 0; big < 2 && !gxt_failures; big++) {
            int x = (kind * 2 + big) % 5, w = (kind + big) % 3;
            gx__hist_req r = {(gx__hist_kind)kind, xs[x], edges, 10, big ? 100000 : 256, 0, 1, edges,
                              w == 0 ? GX_DTYPE_DEFAULT : w == 1 ? GX_F32 : GX_I64, edges, edges,
                              (int64_t *)edges, 0};
            char *src = NULL;
            GXT_OK(gx__hist_cuda_source(&r, &src));
            char what[64];
            snprintf(what, sizeof what, "hist kind %d %s w %d big %d", kind, gx_dtype_name(xs[x]), w, big);
            GXT_CHECK(sct_compile(src, what));
            free(src);
        }
    /* the f32 uniform-bin path's unit */
    gx__hist_req hf = {GX__HIST_EVEN, GX_F32, edges, 10, 256, 0, 1, NULL, GX_DTYPE_DEFAULT, NULL, edges,
                       (int64_t *)edges, 0};
    char *src = NULL;
    GXT_OK(gx__hist_cuda_source(&hf, &src));
    GXT_CHECK(strstr(src, "gx_hf") != NULL);
    GXT_CHECK(sct_compile(src, "hist f32 even"));
    free(src);
#else
    gxt_skip("built without the CUDA backend");
#endif
}

/* ------------------------------------------------------------ host references */

/* Ascending order of elements i and j of a (NumPy's: NaN last, -0.0 == 0.0);
 * descending reverses numbers but keeps NaN last. */
static int sct_cmp(gx_dtype t, const void *a, int64_t i, int64_t j, int desc)
{
    int c;
    if (t == GX_F32 || t == GX_F64) {
        double x = t == GX_F32 ? ((const float *)a)[i] : ((const double *)a)[i];
        double y = t == GX_F32 ? ((const float *)a)[j] : ((const double *)a)[j];
        if (isnan(x) || isnan(y))
            return isnan(x) - isnan(y);
        c = x < y ? -1 : x > y;
    } else if (t == GX_I8 || t == GX_I16 || t == GX_I32 || t == GX_I64) {
        int64_t x, y;
        switch (gx_dtype_size(t)) {
        case 1: x = ((const int8_t *)a)[i]; y = ((const int8_t *)a)[j]; break;
        case 2: x = ((const int16_t *)a)[i]; y = ((const int16_t *)a)[j]; break;
        case 4: x = ((const int32_t *)a)[i]; y = ((const int32_t *)a)[j]; break;
        default: x = ((const int64_t *)a)[i]; y = ((const int64_t *)a)[j]; break;
        }
        c = x < y ? -1 : x > y;
    } else {
        uint64_t x, y;
        switch (gx_dtype_size(t)) {
        case 1: x = ((const uint8_t *)a)[i]; y = ((const uint8_t *)a)[j]; break;
        case 2: x = ((const uint16_t *)a)[i]; y = ((const uint16_t *)a)[j]; break;
        case 4: x = ((const uint32_t *)a)[i]; y = ((const uint32_t *)a)[j]; break;
        default: x = ((const uint64_t *)a)[i]; y = ((const uint64_t *)a)[j]; break;
        }
        c = x < y ? -1 : x > y;
    }
    return desc ? -c : c;
}

/* Stable merge sort of idx[0..n) (indices into a) by sct_cmp. */
static void sct_msort(gx_dtype t, const void *a, int64_t *idx, int64_t *tmp, int64_t n, int desc)
{
    if (n < 2)
        return;
    int64_t h = n / 2;
    sct_msort(t, a, idx, tmp, h, desc);
    sct_msort(t, a, idx + h, tmp, n - h, desc);
    int64_t p = 0, q = h, o = 0;
    while (p < h && q < n)
        tmp[o++] = sct_cmp(t, a, idx[q], idx[p], desc) < 0 ? idx[q++] : idx[p++];
    while (p < h)
        tmp[o++] = idx[p++];
    while (q < n)
        tmp[o++] = idx[q++];
    memcpy(idx, tmp, (size_t)n * 8);
}

/* Keys with many ties; floats also NaNs of several payloads, -0.0, +-inf. */
static void sct_fill(gx_dtype t, void *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        int r = (int)(gxt_rand_u64() % 17) - 8;
        uint64_t u = gxt_rand_u64();
        switch (t) {
        case GX_BOOL: ((uint8_t *)a)[i] = (uint8_t)(r & 1); break;
        case GX_I8: ((int8_t *)a)[i] = (int8_t)(r * 15); break;
        case GX_U8: ((uint8_t *)a)[i] = (uint8_t)(r + 8 + (u % 3) * 80); break;
        case GX_I16: ((int16_t *)a)[i] = (int16_t)(r * 4000); break;
        case GX_U16: ((uint16_t *)a)[i] = (uint16_t)((r + 8) * 4000 + u % 2); break;
        case GX_I32: ((int32_t *)a)[i] = u % 5 == 0 ? (int32_t)u : r; break;
        case GX_U32: ((uint32_t *)a)[i] = u % 5 == 0 ? (uint32_t)u : (uint32_t)(r + 8); break;
        case GX_I64: ((int64_t *)a)[i] = u % 5 == 0 ? (int64_t)u : r * 1000000007ll; break;
        case GX_U64: ((uint64_t *)a)[i] = u % 5 == 0 ? u : (uint64_t)(r + 8) << 40; break;
        case GX_F32:
        case GX_F64: {
            double v = r * 0.5;
            int s = (int)(u % 40);
            if (s == 0) v = NAN;
            if (s == 1) v = -0.0;
            if (s == 2) v = INFINITY;
            if (s == 3) v = -INFINITY;
            if (s == 4) v = ldexp((double)(u >> 20), -30);
            if (t == GX_F32) {
                float f = (float)v;
                if (s == 5) { uint32_t b = 0xffc00001u; memcpy(&f, &b, 4); }
                if (s == 6) { uint32_t b = 0x7f800003u; memcpy(&f, &b, 4); }
                ((float *)a)[i] = f;
            } else {
                if (s == 5) { uint64_t b = 0xfff8000000000001ull; memcpy(&v, &b, 8); }
                ((double *)a)[i] = v;
            }
            break;
        }
        default: break;
        }
    }
}

static gx_dtype sct_raw(size_t bytes)
{
    return bytes == 1 ? GX_U8 : bytes == 2 ? GX_U16 : bytes == 4 ? GX_U32 : bytes == 8 ? GX_U64 : GX_C128;
}

static gx_status sct_up(gx_ctx *ctx, gx_dtype t, int64_t n, const void *h, gx_array **out)
{
    int64_t sh = n;
    return gx_array_from_host(ctx, t, 1, &sh, h, out);
}

static gx_status sct_empty(gx_ctx *ctx, gx_dtype t, int64_t n, gx_array **out)
{
    int64_t sh = n;
    return gx_array_empty(ctx, t, 1, &sh, out);
}

/* Keys whose 8-bit digits are the same for every key except those under `mask`
 * (sort_cuda_planned_digits): random words masked, in the key's low bytes. */
static void sct_fill_masked(gx_dtype t, void *a, int64_t n, uint64_t mask)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = gxt_rand_u64() & mask;
        switch (gx_dtype_size(t)) {
        case 2: ((uint16_t *)a)[i] = (uint16_t)u; break;
        case 4: ((uint32_t *)a)[i] = (uint32_t)u; break;
        default: ((uint64_t *)a)[i] = u; break;
        }
    }
}

/* One sort through the seam against the host reference: nrows rows of rowlen keys
 * of dtype t, vb-byte values (vb 8 with iota: generated indices), keys wanted or not;
 * keys from sct_fill, or (masked) with only the digits of mask varying. */
static void sct_sort_keys(gx_ctx *ctx, gx_dtype t, int64_t nrows, int64_t rowlen, int vb, int iota, int desc,
                          int want_keys, int masked, uint64_t mask)
{
    int64_t n = nrows * rowlen;
    size_t kb = gx_dtype_size(t);
    uint8_t *k = malloc((size_t)n * kb + 1), *v = malloc((size_t)n * (vb ? vb : 1) + 1);
    uint8_t *ko = malloc((size_t)n * kb + 1), *vo = malloc((size_t)n * (vb ? vb : 1) + 1);
    int64_t *idx = malloc((size_t)n * 8 + 8), *tmp = malloc((size_t)n * 8 + 8);
    gx_array *dk = NULL, *dv = NULL, *dko = NULL, *dvo = NULL;
    if (masked)
        sct_fill_masked(t, k, n, mask);
    else
        sct_fill(t, k, n);
    for (int64_t i = 0; i < n * vb; i++)
        v[i] = (uint8_t)(gxt_rand_u64() >> 13);
    GXT_OK(sct_up(ctx, t, n, k, &dk));
    GXT_OK(sct_empty(ctx, t, n, &dko));
    if (vb) {
        GXT_OK(sct_up(ctx, sct_raw((size_t)vb), n, v, &dv));
        GXT_OK(sct_empty(ctx, sct_raw((size_t)vb), n, &dvo));
    }
    gx__sort_req r = {t, gx__array_ptr(dk), want_keys ? gx__array_ptr(dko) : NULL, (size_t)vb,
                      vb && !iota ? gx__array_ptr(dv) : NULL, vb ? gx__array_ptr(dvo) : NULL, n, nrows, rowlen,
                      desc};
    gx__lock(ctx);
    gx_status s = gx__sort_cuda(ctx, &r);
    gx__unlock(ctx);
    if (s != GX_OK)
        GXT_FAIL_AT(__FILE__, __LINE__, "sort %s %lldx%lld vb %d: %s", gx_dtype_name(t), (long long)nrows,
                    (long long)rowlen, vb, gx_last_error());
    if (s == GX_OK && want_keys)
        GXT_OK(gx_array_to_host(dko, ko, (size_t)n * kb));
    if (s == GX_OK && vb)
        GXT_OK(gx_array_to_host(dvo, vo, (size_t)n * vb));
    int bad = 0;
    for (int64_t row = 0; s == GX_OK && row < nrows && !bad; row++) {
        int64_t at = row * rowlen;
        for (int64_t i = 0; i < rowlen; i++)
            idx[i] = at + i;
        sct_msort(t, k, idx, tmp, rowlen, desc);
        for (int64_t i = 0; i < rowlen && !bad; i++) {
            int64_t src = idx[i], dst = at + i;
            if (want_keys && memcmp(ko + dst * kb, k + src * kb, kb) != 0)
                bad = 1;
            if (vb && !iota && memcmp(vo + dst * vb, v + src * vb, (size_t)vb) != 0)
                bad = 2;
            if (vb && iota && ((int64_t *)vo)[dst] != src - at)
                bad = 3;
            if (bad)
                GXT_FAIL_AT(__FILE__, __LINE__, "sort %s %lldx%lld vb %d iota %d desc %d: row %lld item %lld (%s)",
                            gx_dtype_name(t), (long long)nrows, (long long)rowlen, vb, iota, desc, (long long)row,
                            (long long)i, bad == 1 ? "key" : "value");
        }
    }
    gx_array_release(dk);
    gx_array_release(dv);
    gx_array_release(dko);
    gx_array_release(dvo);
    free(k);
    free(v);
    free(ko);
    free(vo);
    free(idx);
    free(tmp);
}

static void sct_sort_case(gx_ctx *ctx, gx_dtype t, int64_t nrows, int64_t rowlen, int vb, int iota, int desc,
                          int want_keys)
{
    sct_sort_keys(ctx, t, nrows, rowlen, vb, iota, desc, want_keys, 0, 0);
}

/* ------------------------------------------------------------ GPU tests */

GXT_TEST(sort_cuda_keys_every_dtype)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    /* 16896 and 15360: two whole tiles of the narrow shapes (384 x 22 keys, 384 x 20
     * with values), so the last tile takes the full-tile path too */
    static const int64_t lens[] = {0, 1, 2, 31, 32, 33, 2047, 2048, 2049, 4095, 4096, 4097, 8193, 12289, 15360, 16896};
    for (int i = 0; i < SCT_NKEYS; i++)
        for (int l = 0; l < (int)(sizeof lens / sizeof lens[0]); l++)
            for (int desc = 0; desc < 2; desc++)
                sct_sort_case(ctx, sct_keys[i], 1, lens[l], 0, 0, desc, 1);
}

GXT_TEST(sort_cuda_pairs_every_width)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    static const int vbs[] = {1, 2, 4, 8, 16};
    static const int64_t lens[] = {1, 33, 2048, 4097, 15360, 100003};
    for (int v = 0; v < 5; v++)
        for (int l = 0; l < 6; l++) {
            sct_sort_case(ctx, GX_U32, 1, lens[l], vbs[v], 0, v & 1, 1);
            sct_sort_case(ctx, GX_F64, 1, lens[l], vbs[v], 0, !(v & 1), 1);
        }
}

GXT_TEST(sort_cuda_argsort_iota)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    /* 18432: two whole tiles of argsort's 4-byte-key passes (384 x 24) */
    static const int64_t lens[] = {1, 7, 2048, 2049, 18432, 70001};
    for (int l = 0; l < 6; l++)
        for (int desc = 0; desc < 2; desc++) {
            sct_sort_case(ctx, GX_F32, 1, lens[l], 8, 1, desc, 0); /* keys not wanted */
            sct_sort_case(ctx, GX_I64, 1, lens[l], 8, 1, desc, 1);
            sct_sort_case(ctx, GX_U16, 1, lens[l], 8, 1, desc, 0);
            /* one pass: the indices are generated as int64, not widened from u32 */
            sct_sort_case(ctx, GX_I8, 1, lens[l], 8, 1, desc, 1);
        }
}

/* The passes a device-wide sort plans from its digit counts, on each path
 * (GX_SORT_SPEC: 0 the counts read back first; 1 the first pass, on digit 0, launched
 * before they are read; 2 the same without a third buffer): only digit 0 varies, only
 * digit 1, digit 0 the same for all keys, three of four digits (an even number left
 * after the first pass), digits 0 and 2, none, all; keys alone, with 4-byte values,
 * argsort with and without keys out. */
GXT_TEST(sort_cuda_planned_digits)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    static const gx_dtype ts[] = {GX_U32, GX_F32, GX_I64, GX_U16};
    static const uint64_t masks[] = {0xff, 0xff00, 0xffff00, 0xffffff, 0xff00ff, 0x0, 0xffffffffffffffffull};
    static const char *const modes[] = {"0", "1", "2"};
    static const int64_t lens[] = {1000, 15365};
    for (int md = 0; md < 3; md++) {
        setenv("GX_SORT_SPEC", modes[md], 1);
        for (int ti = 0; ti < 4; ti++)
            for (int mi = 0; mi < 7; mi++)
                for (int li = 0; li < 2; li++) {
                    uint64_t m = masks[mi];
                    if (gx_dtype_size(ts[ti]) == 4)
                        m &= 0x7fffffffu; /* f32: positive bit patterns, NaNs among them */
                    int desc = (mi + li) & 1;
                    sct_sort_keys(ctx, ts[ti], 1, lens[li], 0, 0, desc, 1, 1, m);
                    sct_sort_keys(ctx, ts[ti], 1, lens[li], 4, 0, !desc, 1, 1, m);
                    sct_sort_keys(ctx, ts[ti], 1, lens[li], 8, 1, desc, 0, 1, m);
                    sct_sort_keys(ctx, ts[ti], 1, lens[li], 8, 1, !desc, 1, 1, m);
                    sct_sort_keys(ctx, ts[ti], 1, lens[li], 8, 0, desc, 0, 1, m);
                }
    }
    unsetenv("GX_SORT_SPEC");
}

GXT_TEST(sort_cuda_large)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    int64_t n = (1 << 20) + 7;
    sct_sort_case(ctx, GX_F32, 1, n, 0, 0, 0, 1);
    sct_sort_case(ctx, GX_U32, 1, n, 4, 0, 1, 1);
    sct_sort_case(ctx, GX_F64, 1, n, 8, 1, 0, 1);
    sct_sort_case(ctx, GX_I8, 1, n, 0, 0, 1, 1);
}

GXT_TEST(sort_cuda_rows)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    static const int64_t rl[] = {1, 2, 7, 33, 1024, 2048, 2049, 5000};
    static const int64_t nr[] = {1, 3, 65};
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 3; b++) {
            if (rl[a] > 2048 && nr[b] > 3)
                continue;
            sct_sort_case(ctx, GX_F32, nr[b], rl[a], 8, 1, b & 1, 1);
            sct_sort_case(ctx, GX_I16, nr[b], rl[a], 2, 0, !(b & 1), 1);
        }
}

/* f32 patterns for the radix select: 1 distinct-ish uniform [0, 1) (the bench's),
 * 2 all equal, 3 NaNs (payloads too) but for n/64 numbers, 4 a few values, most
 * of them the largest and smallest (ties at the k-th item), 5 sorted descending
 * with -0.0/0.0 pairs. */
static void sct_fill_f32(int pattern, float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = gxt_rand_u64();
        float v = (float)(u >> 40) * (1.0f / 16777216.0f);
        if (pattern == 2)
            v = 0.25f;
        if (pattern == 3 && u % 64 != 0) {
            uint32_t b = 0x7fc00000u | (uint32_t)(u % 5) | (u & 1 ? 0x80000000u : 0);
            memcpy(&v, &b, 4);
        }
        if (pattern == 4)
            v = u % 8 < 3 ? 7.0f : u % 8 < 6 ? -7.0f : (float)(u % 5);
        if (pattern == 5)
            v = (float)(n - i) * 0.5f;
        x[i] = v;
    }
    if (pattern == 5)
        for (int64_t i = 0; i + 1 < n; i += 97)
            x[i] = -0.0f, x[i + 1] = 0.0f;
}

/* Top-k of nrows x rowlen keys against the stable sort's first k; pattern 0 fills
 * with sct_fill, else sct_fill_f32 (t must then be f32). */
static void sct_topk_pat(gx_ctx *ctx, gx_dtype t, int64_t nrows, int64_t rowlen, int64_t k, int largest, int pattern)
{
    int64_t n = nrows * rowlen;
    size_t kb = gx_dtype_size(t);
    uint8_t *x = malloc((size_t)n * kb), *vo = malloc((size_t)(nrows * k) * kb);
    int64_t *io = malloc((size_t)(nrows * k) * 8), *idx = malloc((size_t)rowlen * 8), *tmp = malloc((size_t)rowlen * 8);
    gx_array *dx = NULL, *dv = NULL, *di = NULL;
    if (pattern)
        sct_fill_f32(pattern, (float *)x, n);
    else
        sct_fill(t, x, n);
    GXT_OK(sct_up(ctx, t, n, x, &dx));
    GXT_OK(sct_empty(ctx, t, nrows * k, &dv));
    GXT_OK(sct_empty(ctx, GX_I64, nrows * k, &di));
    gx__topk_req r = {t, gx__array_ptr(dx), nrows, rowlen, k, largest, gx__array_ptr(dv), gx__array_ptr(di)};
    gx__lock(ctx);
    gx_status s = gx__topk_cuda(ctx, &r);
    gx__unlock(ctx);
    GXT_OK(s);
    GXT_OK(gx_array_to_host(dv, vo, (size_t)(nrows * k) * kb));
    GXT_OK(gx_array_to_host(di, io, (size_t)(nrows * k) * 8));
    int bad = 0;
    for (int64_t row = 0; row < nrows && !bad; row++) {
        for (int64_t i = 0; i < rowlen; i++)
            idx[i] = row * rowlen + i;
        sct_msort(t, x, idx, tmp, rowlen, largest);
        for (int64_t i = 0; i < k && !bad; i++) {
            bad = io[row * k + i] != idx[i] - row * rowlen ||
                  memcmp(vo + (row * k + i) * kb, x + idx[i] * kb, kb) != 0;
            if (bad)
                GXT_FAIL_AT(__FILE__, __LINE__, "topk %s %lldx%lld k %lld largest %d pattern %d: row %lld item %lld",
                            gx_dtype_name(t), (long long)nrows, (long long)rowlen, (long long)k, largest, pattern,
                            (long long)row, (long long)i);
        }
    }
    gx_array_release(dx);
    gx_array_release(dv);
    gx_array_release(di);
    free(x);
    free(vo);
    free(io);
    free(idx);
    free(tmp);
}

static void sct_topk_case(gx_ctx *ctx, gx_dtype t, int64_t nrows, int64_t rowlen, int64_t k, int largest)
{
    sct_topk_pat(ctx, t, nrows, rowlen, k, largest, 0);
}

/* The radix select (rows longer than 2048, k <= 1024) against the sort's order:
 * every f32 pattern, ties and NaNs, k at the path's limits, every key width. */
GXT_TEST(sort_cuda_topk_select)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    const int64_t big = (1 << 20) + 7;
    for (int largest = 0; largest < 2; largest++) {
        for (int pat = 1; pat <= 5 && !gxt_failures; pat++) {
            sct_topk_pat(ctx, GX_F32, 1, big, 100, largest, pat);
            sct_topk_pat(ctx, GX_F32, 1, big, 1, largest, pat);
            sct_topk_pat(ctx, GX_F32, 1, 70001, 1024, largest, pat);
        }
        sct_topk_pat(ctx, GX_F32, 1, 70001, 1025, largest, 1); /* the sort path */
        sct_topk_pat(ctx, GX_F32, 3, 4097, 100, largest, 4);   /* rows, one narrowing pass */
        sct_topk_pat(ctx, GX_F32, 2, 4096, 1000, largest, 2);  /* every item a candidate */
        sct_topk_pat(ctx, GX_F32, 2, 2049, 17, largest, 3);
        sct_topk_pat(ctx, GX_F32, 1, 5000, 1024, largest, 5);
        for (int i = 0; i < SCT_NKEYS && !gxt_failures; i++) {
            sct_topk_case(ctx, sct_keys[i], 2, 30011, 100, largest);
            sct_topk_case(ctx, sct_keys[i], 1, 9000, 1, largest);
        }
    }
}

/* The top-k order key of f32 bits (ascending = wanted order): NaN last both ways,
 * -0.0 as 0.0, largest first by the complement. */
static uint32_t sct_f32_key(float f, int largest)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    if ((b & 0x7fffffffu) > 0x7f800000u)
        return 0xffffffffu;
    b = (b & 0x7fffffffu) ? b : 0;
    uint32_t t = b & 0x80000000u ? ~b : b | 0x80000000u;
    return largest ? ~t : t; /* never all ones: that would be a NaN */
}

/* (key << 40 | index) composites: a total order for rows below 2^40. */
static void sct_heap_down(uint64_t *h, int64_t m, int64_t i)
{
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, big = i;
        if (l < m && h[l] > h[big])
            big = l;
        if (r < m && h[r] > h[big])
            big = r;
        if (big == i)
            return;
        uint64_t t = h[i];
        h[i] = h[big], h[big] = t;
        i = big;
    }
}

static int sct_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* One row of n f32 (more than 2^26: the select stops at a bucket above 4096) against
 * a host top-k by a bounded heap, k <= 1024. */
static void sct_topk_big(gx_ctx *ctx, int64_t n, int64_t k, int largest)
{
    float *x = malloc((size_t)n * 4), *vo = malloc((size_t)k * 4);
    int64_t *io = malloc((size_t)k * 8);
    uint64_t *h = malloc((size_t)k * 8);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(gxt_rand_u64() >> 40) * (1.0f / 16777216.0f);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t c = (uint64_t)sct_f32_key(x[i], largest) << 32 | (uint64_t)i; /* n < 2^32 */
        if (m < k) {
            h[m++] = c;
            if (m == k)
                for (int64_t q = k / 2; q >= 0; q--)
                    sct_heap_down(h, m, q);
        } else if (c < h[0]) {
            h[0] = c;
            sct_heap_down(h, m, 0);
        }
    }
    qsort(h, (size_t)m, 8, sct_u64_cmp);
    gx_array *dx = NULL, *dv = NULL, *di = NULL;
    GXT_OK(sct_up(ctx, GX_F32, n, x, &dx));
    GXT_OK(sct_empty(ctx, GX_F32, k, &dv));
    GXT_OK(sct_empty(ctx, GX_I64, k, &di));
    gx__topk_req r = {GX_F32, gx__array_ptr(dx), 1, n, k, largest, gx__array_ptr(dv), gx__array_ptr(di)};
    gx__lock(ctx);
    gx_status s = gx__topk_cuda(ctx, &r);
    gx__unlock(ctx);
    GXT_OK(s);
    GXT_OK(gx_array_to_host(dv, vo, (size_t)k * 4));
    GXT_OK(gx_array_to_host(di, io, (size_t)k * 8));
    for (int64_t i = 0; i < k; i++) {
        int64_t want = (int64_t)(h[i] & 0xffffffffu);
        if (io[i] != want || memcmp(&vo[i], &x[want], 4) != 0) {
            GXT_FAIL_AT(__FILE__, __LINE__, "topk big n %lld k %lld largest %d: item %lld is %lld, want %lld",
                        (long long)n, (long long)k, largest, (long long)i, (long long)io[i], (long long)want);
            break;
        }
    }
    gx_array_release(dx);
    gx_array_release(dv);
    gx_array_release(di);
    free(x), free(vo), free(io), free(h);
}

/* 2^27 + 3 keys: the select's larger stop size (8192) and a row near the bench's. */
GXT_TEST(sort_cuda_topk_select_big)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    sct_topk_big(ctx, (1 << 27) + 3, 100, 1);
    sct_topk_big(ctx, (1 << 27) + 3, 1024, 0);
}

GXT_TEST(sort_cuda_topk)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    static const int64_t rl[] = {1, 10, 100, 2048, 3000, 50001};
    for (int a = 0; a < 6; a++)
        for (int largest = 0; largest < 2; largest++) {
            int64_t nr = rl[a] > 2048 ? 2 : 5;
            sct_topk_case(ctx, GX_F32, nr, rl[a], 1, largest);
            sct_topk_case(ctx, GX_F32, nr, rl[a], rl[a] < 7 ? rl[a] : 7, largest);
            sct_topk_case(ctx, GX_I32, nr, rl[a], rl[a] < 100 ? rl[a] : 100, largest);
            sct_topk_case(ctx, GX_F64, 1, rl[a], rl[a], largest);
        }
}

/* A histogram through the seam against the host's bins (same f64 formula). */
static void sct_hist_case(gx_ctx *ctx, gx__hist_kind kind, gx_dtype xt, gx_dtype wt, int64_t n, int64_t nbins)
{
    size_t xb = gx_dtype_size(xt);
    uint8_t *x = malloc((size_t)n * xb + 1);
    float *w = malloc((size_t)n * 4 + 4);
    double *edges = malloc((size_t)(nbins + 1) * 8), *ref = calloc((size_t)nbins, 8), *got = malloc((size_t)nbins * 8);
    sct_fill(xt, x, n);
    for (int64_t i = 0; i < n; i++)
        w[i] = (float)(gxt_rand01() * 4 - 1);
    double lo = -3.0, hi = 2.5;
    for (int64_t b = 0; b <= nbins; b++)
        edges[b] = -4.0 + 7.0 * ((double)b + (b % 3) * 0.25) / (double)nbins; /* increasing, uneven */
    int64_t dropped = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = gx__dtype_to_f64(xt, x + i * xb);
        int64_t b = -1;
        if (kind == GX__HIST_EVEN && v >= lo && v < hi) {
            b = (int64_t)floor((v - lo) * ((double)nbins / (hi - lo)));
            b = b >= nbins ? nbins - 1 : b;
        } else if (kind == GX__HIST_EDGES && v >= edges[0] && v < edges[nbins]) {
            b = 0;
            while (v >= edges[b + 1])
                b++;
        } else if (kind == GX__HIST_INT && v >= 0 && v < (double)nbins) {
            b = (int64_t)v;
        }
        if (b < 0)
            dropped++;
        else
            ref[b] += wt == GX_F32 ? (double)w[i] : 1.0;
    }
    gx_array *dx = NULL, *dw = NULL, *de = NULL, *dc = NULL, *dd = NULL;
    GXT_OK(sct_up(ctx, xt, n, x, &dx));
    GXT_OK(sct_up(ctx, GX_F32, n, w, &dw));
    GXT_OK(sct_up(ctx, GX_F64, nbins + 1, edges, &de));
    GXT_OK(sct_empty(ctx, wt == GX_F32 ? GX_F64 : GX_I64, nbins, &dc));
    GXT_OK(sct_empty(ctx, GX_I64, 1, &dd));
    gx__hist_req r = {kind, xt, gx__array_ptr(dx), n, nbins, lo, hi, gx__array_ptr(de), wt, gx__array_ptr(dw),
                      gx__array_ptr(dc), gx__array_ptr(dd), 0};
    gx__lock(ctx);
    gx_status s = gx__hist_cuda(ctx, &r);
    gx__unlock(ctx);
    GXT_OK(s);
    int64_t gd = -1;
    GXT_OK(gx_array_to_host(dc, got, (size_t)nbins * 8));
    GXT_OK(gx_array_to_host(dd, &gd, 8));
    GXT_EQ_I64(gd, dropped);
    for (int64_t b = 0; b < nbins; b++) {
        double g = wt == GX_F32 ? got[b] : (double)((int64_t *)got)[b];
        if (fabs(g - ref[b]) > 1e-6 * (1 + fabs(ref[b]))) {
            GXT_FAIL_AT(__FILE__, __LINE__, "hist kind %d %s nbins %lld: bin %lld %g vs %g", (int)kind,
                        gx_dtype_name(xt), (long long)nbins, (long long)b, g, ref[b]);
            break;
        }
    }
    gx_array_release(dx);
    gx_array_release(dw);
    gx_array_release(de);
    gx_array_release(dc);
    gx_array_release(dd);
    free(x);
    free(w);
    free(edges);
    free(ref);
    free(got);
}

/* The f32 uniform-bin path (float4 loads, f32 bins corrected to the f64 rule):
 * n values starting `off` floats into the buffer (misaligned views), counted against
 * the host's f64 rule. */
static void sct_hf_case(gx_ctx *ctx, const float *x, int64_t n, int off, double lo, double hi, int64_t nbins)
{
    int64_t *ref = calloc((size_t)nbins, 8), *got = calloc((size_t)nbins, 8), dropped = 0, gd = -1;
    double norm = (double)nbins / (hi - lo);
    for (int64_t i = 0; i < n; i++) {
        double v = x[off + i];
        if (!(v >= lo && v < hi)) {
            dropped++;
            continue;
        }
        int64_t b = (int64_t)((v - lo) * norm);
        ref[b >= nbins ? nbins - 1 : b < 0 ? 0 : b]++;
    }
    int64_t len = n + off;
    gx_array *dx = NULL, *dc = NULL, *dd = NULL;
    GXT_OK(sct_up(ctx, GX_F32, len ? len : 1, x, &dx));
    GXT_OK(sct_empty(ctx, GX_I64, nbins, &dc));
    GXT_OK(sct_empty(ctx, GX_I64, 1, &dd));
    gx__hist_req r = {GX__HIST_EVEN, GX_F32, (float *)gx__array_ptr(dx) + off, n, nbins, lo, hi, NULL,
                      GX_DTYPE_DEFAULT, NULL, gx__array_ptr(dc), gx__array_ptr(dd), 0};
    gx__lock(ctx);
    gx_status s = gx__hist_cuda(ctx, &r);
    gx__unlock(ctx);
    GXT_OK(s);
    GXT_OK(gx_array_to_host(dc, got, (size_t)nbins * 8));
    GXT_OK(gx_array_to_host(dd, &gd, 8));
    if (gd != dropped)
        GXT_FAIL_AT(__FILE__, __LINE__, "hf n %lld off %d [%g, %g) %lld bins: dropped %lld vs %lld", (long long)n,
                    off, lo, hi, (long long)nbins, (long long)gd, (long long)dropped);
    for (int64_t b = 0; b < nbins; b++)
        if (got[b] != ref[b]) {
            GXT_FAIL_AT(__FILE__, __LINE__, "hf n %lld off %d [%g, %g) %lld bins: bin %lld %lld vs %lld",
                        (long long)n, off, lo, hi, (long long)nbins, (long long)b, (long long)got[b],
                        (long long)ref[b]);
            break;
        }
    gx_array_release(dx);
    gx_array_release(dc);
    gx_array_release(dd);
    free(ref);
    free(got);
}

/* Values on every side of each bin edge (f32 neighbours of the f64 edges lo + j *
 * (hi - lo) / nbins), lo and hi themselves, NaN, +-inf, +-0, huge values. */
static int64_t sct_hf_fill(float *x, int64_t cap, double lo, double hi, int64_t nbins)
{
    int64_t n = 0;
    for (int64_t j = 0; j <= nbins && n + 8 < cap; j++) {
        float e = (float)(lo + (double)j * ((hi - lo) / (double)nbins));
        float d = e, u = e;
        x[n++] = e;
        for (int s = 0; s < 3; s++) {
            d = nextafterf(d, -INFINITY), u = nextafterf(u, INFINITY);
            x[n++] = d, x[n++] = u;
        }
    }
    const float extra[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 3.4e38f, -3.4e38f, (float)lo, (float)hi};
    for (int i = 0; i < 10 && n < cap; i++)
        x[n++] = extra[i];
    while (n < cap)
        x[n++] = (float)(lo - 1 + gxt_rand01() * (hi - lo + 2));
    return n;
}

GXT_TEST(sort_cuda_hist_f32_edges)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    const int64_t cap = (1 << 20) + 7 + 3;
    float *x = malloc((size_t)cap * 4);
    static const struct { double lo, hi; int64_t nb; } rg[] = {
        {0, 1, 256}, {-3, 2.5, 7}, {0.1, 0.7, 2048}, {1e8, 1e8 + 256, 256}, {-1e300, 1e300, 100}, {0, 1, 1},
        {-5, 3e38, 2000}, {0, 1, 2049} /* past the f32 path */, {0, 0.5, 256}, {0, 4, 1024},
        {0, 3, 768} /* exact products: 0..3 */};
    for (int g = 0; g < 11 && !gxt_failures; g++) {
        sct_hf_fill(x, cap, rg[g].lo, rg[g].hi, rg[g].nb);
        static const int64_t ns[] = {0, 1, 3, 4, 5, 31, 32, 33, 1000, (1 << 20) + 7};
        for (int i = 0; i < 10; i++)
            for (int off = 0; off < 4; off++)
                if (ns[i] < 40 || off == 0 || off == 3)
                    sct_hf_case(ctx, x, ns[i], off, rg[g].lo, rg[g].hi, rg[g].nb);
    }
    free(x);
}

GXT_TEST(sort_cuda_histograms)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    static const int64_t ns[] = {0, 1, 33, 100003};
    for (int i = 0; i < 4; i++) {
        sct_hist_case(ctx, GX__HIST_EVEN, GX_F32, GX_DTYPE_DEFAULT, ns[i], 256);
        sct_hist_case(ctx, GX__HIST_EVEN, GX_F64, GX_F32, ns[i], 7);
        sct_hist_case(ctx, GX__HIST_EVEN, GX_I32, GX_DTYPE_DEFAULT, ns[i], 100000);
        sct_hist_case(ctx, GX__HIST_EDGES, GX_F32, GX_DTYPE_DEFAULT, ns[i], 33);
        sct_hist_case(ctx, GX__HIST_EDGES, GX_F64, GX_F32, ns[i], 9000);
        sct_hist_case(ctx, GX__HIST_INT, GX_I16, GX_DTYPE_DEFAULT, ns[i], 5);
        sct_hist_case(ctx, GX__HIST_INT, GX_U8, GX_F32, ns[i], 300);
        sct_hist_case(ctx, GX__HIST_INT, GX_BOOL, GX_DTYPE_DEFAULT, ns[i], 2);
    }
}

/* Bad requests fail before any device work, so this runs on every backend. */
GXT_TEST(sort_cuda_bad_requests)
{
    gx_ctx *ctx = gxt_ctx();
    int x = 0;
    gx__sort_req r = {GX_C64, &x, &x, 0, NULL, NULL, 1, 1, 1, 0};
    GXT_STATUS(gx__sort_cuda(ctx, &r), GX_ERR_DTYPE);
    GXT_MSG_HAS("c64");
    r.kdtype = GX_F32;
    r.vbytes = 3;
    GXT_STATUS(gx__sort_cuda(ctx, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("3 bytes");
    r.vbytes = 4; /* generated indices must be int64 */
    r.vals_out = &x;
    GXT_STATUS(gx__sort_cuda(ctx, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("int64");
    r.vbytes = 0;
    r.nrows = 2;
    GXT_STATUS(gx__sort_cuda(ctx, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("nrows");
    gx__topk_req t = {GX_F32, &x, 1, 4, 0, 1, &x, (int64_t *)&x};
    GXT_STATUS(gx__topk_cuda(ctx, &t), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("k = 0");
    t.k = 5;
    GXT_STATUS(gx__topk_cuda(ctx, &t), GX_ERR_INVALID_ARGUMENT);
    t.k = 1;
    t.kdtype = GX_C128;
    GXT_STATUS(gx__topk_cuda(ctx, &t), GX_ERR_DTYPE);
    gx__hist_req h = {GX__HIST_EVEN, GX_C64, &x, 1, 4, 0, 1, NULL, GX_DTYPE_DEFAULT, NULL, &x, (int64_t *)&x, 0};
    GXT_STATUS(gx__hist_cuda(ctx, &h), GX_ERR_DTYPE);
    h.xdtype = GX_F32;
    h.nbins = 0;
    GXT_STATUS(gx__hist_cuda(ctx, &h), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("nbins");
    h.nbins = 4;
    h.kind = GX__HIST_EDGES;
    GXT_STATUS(gx__hist_cuda(ctx, &h), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("edges");
}
