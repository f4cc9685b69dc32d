/* test_rand.c -- gx_rand / gx_randn / gx_rand_int and their *_into forms: Philox4x32-10 known answers,
 * bit equality with a plain host implementation (so the CPU and the CUDA runs both
 * compare against the same numbers), stream slices, views, statistics, bad input. */
#include "gx_test.h"

/* An independent host Philox4x32-10 (Random123 constants). */
static void ref_philox(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1, uint32_t w[4])
{
    for (int r = 0; r < 10; r++) {
        uint64_t a = 0xD2511F53ull * c0, b = 0xCD9E8D57ull * c2;
        uint32_t n0 = (uint32_t)(b >> 32) ^ c1 ^ k0, n2 = (uint32_t)(a >> 32) ^ c3 ^ k1;
        c0 = n0, c1 = (uint32_t)b, c2 = n2, c3 = (uint32_t)a;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    w[0] = c0, w[1] = c1, w[2] = c2, w[3] = c3;
}

/* The 4 words of the block holding stream element g (W elements per block). */
static void ref_block(gx_rng r, uint64_t g, int W, uint32_t w[4])
{
    uint64_t b = g / (uint64_t)W;
    ref_philox((uint32_t)b, (uint32_t)(b >> 32), (uint32_t)r.offset, (uint32_t)(r.offset >> 32), (uint32_t)r.seed,
               (uint32_t)(r.seed >> 32), w);
}

static uint64_t w64(const uint32_t *w, int j) { return (uint64_t)w[2 * j] << 32 | w[2 * j + 1]; }

static float ref_u_f32(gx_rng r, uint64_t g)
{
    uint32_t w[4];
    ref_block(r, g, 4, w);
    return (float)(w[g % 4] >> 8) * 0x1p-24f;
}

static double ref_u_f64(gx_rng r, uint64_t g)
{
    uint32_t w[4];
    ref_block(r, g, 2, w);
    return (double)(w64(w, (int)(g % 2)) >> 11) * 0x1p-53;
}

static double ref_n(gx_rng r, uint64_t g, bool f32)
{
    uint32_t w[4];
    double u1, u2;
    if (f32) {
        ref_block(r, g, 4, w);
        int q = (int)(g % 4) / 2;
        u1 = ((double)w[2 * q] + 0.5) * 0x1p-32, u2 = (double)w[2 * q + 1] * 0x1p-32;
    } else {
        ref_block(r, g, 2, w);
        u1 = ((double)(w64(w, 0) >> 11) + 0.5) * 0x1p-53, u2 = (double)(w64(w, 1) >> 11) * 0x1p-53;
    }
    double rad = sqrt(-2 * log(u1)), t = 6.283185307179586477 * u2;
    return g % 2 ? rad * sin(t) : rad * cos(t);
}

static uint64_t ref_int(gx_rng r, uint64_t g, int64_t lo, int64_t hi)
{
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    uint32_t w[4];
    if (range <= (1ull << 32)) {
        ref_block(r, g, 4, w);
        return (uint64_t)lo + (((uint64_t)w[g % 4] * range) >> 32);
    }
    ref_block(r, g, 2, w);
    return (uint64_t)lo + (uint64_t)(((unsigned __int128)w64(w, (int)(g % 2)) * range) >> 64);
}

GXT_TEST(rand_philox_known_answers)
{
    /* Random123 kat_vectors, "philox4x32 10" lines. */
    static const uint32_t v[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
         0x24126ea1},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4], ref[4];
        gx_philox4x32_10_host(v[i], v[i] + 4, out);
        ref_philox(v[i][0], v[i][1], v[i][2], v[i][3], v[i][4], v[i][5], ref);
        for (int k = 0; k < 4; k++) {
            GXT_EQ_I64(out[k], v[i][6 + k]);
            GXT_EQ_I64(ref[k], v[i][6 + k]);
        }
    }
}

GXT_TEST(rand_uniform_bit_equal_to_host)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t sizes[] = {0, 1, 3, 31, 32, 33, 1001, (1 << 20) + 7};
    const uint64_t starts[] = {0, 5, (1ull << 33) + 3};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t st = 0; st < 3; st++) {
            int64_t n = sizes[si];
            gx_rng r = {0x123456789abcdefull + si, 7 + st, starts[st]};
            gx_array *a = NULL, *b = NULL;
            GXT_OK(gx_rand(ctx, r, GX_F32, 1, &n, &a));
            GXT_OK(gx_rand(ctx, r, GX_F64, 1, &n, &b));
            float *ha = malloc((size_t)n * 4 + 4);
            double *hb = malloc((size_t)n * 8 + 8);
            GXT_OK(gx_array_to_host(a, ha, (size_t)n * 4));
            GXT_OK(gx_array_to_host(b, hb, (size_t)n * 8));
            int bad = 0;
            for (int64_t i = 0; i < n && bad < 3; i++) {
                float wa = ref_u_f32(r, r.start + (uint64_t)i);
                double wb = ref_u_f64(r, r.start + (uint64_t)i);
                if (memcmp(&wa, &ha[i], 4) || memcmp(&wb, &hb[i], 8) || !(ha[i] >= 0 && ha[i] < 1) ||
                    !(hb[i] >= 0 && hb[i] < 1)) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "n=%lld start=%llu i=%lld: got %.9g/%.17g want %.9g/%.17g",
                                (long long)n, (unsigned long long)r.start, (long long)i, ha[i], hb[i], wa, wb);
                    bad++;
                }
            }
            free(ha);
            free(hb);
            gx_array_release(a);
            gx_array_release(b);
        }
}

#define INT_RAND_CASE(T, DT, LO, HI)                                                                               \
    do {                                                                                                           \
        int64_t n = 4099;                                                                                          \
        gx_rng r = {99, 3, 1};                                                                                     \
        gx_array *a = NULL;                                                                                        \
        GXT_OK(gx_rand_int(ctx, r, (LO), (HI), DT, 1, &n, &a));                                                    \
        T h[4099];                                                                                                 \
        GXT_OK(gx_array_to_host(a, h, sizeof h));                                                                  \
        for (int64_t i = 0; i < n; i++) {                                                                          \
            T want = (T)ref_int(r, r.start + (uint64_t)i, (LO), (HI));                                             \
            if (h[i] != want || (int64_t)h[i] < (int64_t)(LO) || (LO >= 0 && (uint64_t)h[i] >= (uint64_t)(HI))) {  \
                GXT_FAIL_AT(__FILE__, __LINE__, "%s [%lld,%lld) i=%lld: got %lld want %lld", #DT, (long long)(LO), \
                            (long long)(HI), (long long)i, (long long)h[i], (long long)want);                      \
                break;                                                                                             \
            }                                                                                                      \
        }                                                                                                          \
        gx_array_release(a);                                                                                       \
    } while (0)

GXT_TEST(rand_int_bit_equal_to_host)
{
    gx_ctx *ctx = gxt_ctx();
    INT_RAND_CASE(int8_t, GX_I8, -100, 100);
    INT_RAND_CASE(uint8_t, GX_U8, 0, 256);
    INT_RAND_CASE(int16_t, GX_I16, -5, 7);
    INT_RAND_CASE(uint16_t, GX_U16, 10, 60000);
    INT_RAND_CASE(int32_t, GX_I32, INT32_MIN, INT32_MAX);
    INT_RAND_CASE(uint32_t, GX_U32, 0, 4294967295ll);
    INT_RAND_CASE(int64_t, GX_I64, -3, 1000000);
    INT_RAND_CASE(int64_t, GX_I64, INT64_MIN, INT64_MAX);
    INT_RAND_CASE(int64_t, GX_I64, 0, (1ll << 40) + 5);
    INT_RAND_CASE(uint64_t, GX_U64, 0, INT64_MAX);
}

GXT_TEST(rand_normal_matches_host)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 100003;
    gx_rng r = {2024, 1, 3};
    gx_array *a = NULL, *b = NULL;
    GXT_OK(gx_randn(ctx, r, GX_F32, 1, &n, &a));
    GXT_OK(gx_array_empty(ctx, GX_F64, 1, &n, &b));
    GXT_OK(gx_randn_into(r, b));
    float *ha = malloc((size_t)n * 4);
    double *hb = malloc((size_t)n * 8);
    GXT_OK(gx_array_to_host(a, ha, (size_t)n * 4));
    GXT_OK(gx_array_to_host(b, hb, (size_t)n * 8));
    double s1 = 0, s2 = 0;
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 3; i++) {
        double wa = ref_n(r, r.start + (uint64_t)i, true), wb = ref_n(r, r.start + (uint64_t)i, false);
        /* f32: within 1 ulp of the double formula rounded; f64: within a few ulp (platform libm). */
        if (fabs(ha[i] - wa) > 1.2e-7 * fabs(wa) + 1e-30 || fabs(hb[i] - wb) > 1e-14 * fabs(wb) + 1e-300) {
            GXT_FAIL_AT(__FILE__, __LINE__, "i=%lld: %.9g vs %.9g, %.17g vs %.17g", (long long)i, ha[i], wa, hb[i], wb);
            bad++;
        }
        s1 += hb[i], s2 += hb[i] * hb[i];
    }
    double mean = s1 / (double)n, var = s2 / (double)n - mean * mean;
    GXT_CHECK(fabs(mean) < 0.02);
    GXT_CHECK(fabs(var - 1) < 0.02);
    free(ha);
    free(hb);
    gx_array_release(a);
    gx_array_release(b);
}

GXT_TEST(rand_uniform_statistics)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 1 << 20;
    gx_array *a = NULL;
    GXT_OK(gx_rand(ctx, (gx_rng){42, 0, 0}, GX_F32, 1, &n, &a));
    float *h = malloc((size_t)n * 4);
    GXT_OK(gx_array_to_host(a, h, (size_t)n * 4));
    double s1 = 0, s2 = 0, bins[64] = {0};
    for (int64_t i = 0; i < n; i++) {
        s1 += h[i], s2 += (double)h[i] * h[i];
        bins[(int)(h[i] * 64)]++;
    }
    double mean = s1 / (double)n, var = s2 / (double)n - mean * mean, chi = 0, e = (double)n / 64;
    for (int k = 0; k < 64; k++)
        chi += (bins[k] - e) * (bins[k] - e) / e;
    GXT_NEAR(mean, 0.5, 2e-3);
    GXT_NEAR(var, 1.0 / 12, 2e-3);
    /* 63 degrees of freedom: P(chi2 > 110) < 1e-4. */
    GXT_CHECK(chi < 110);
    free(h);
    gx_array_release(a);
}

GXT_TEST(rand_stream_slices_and_views)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 1000, m = 333;
    gx_rng r = {5, 9, 0};
    gx_array *full = NULL, *part = NULL, *big = NULL, *view = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F64, 1, &n, &full));
    GXT_OK(gx_rand_into(r, full));
    GXT_OK(gx_rand(ctx, (gx_rng){5, 9, 101}, GX_F64, 1, &m, &part));
    double hf[1000], hp[333];
    GXT_OK(gx_array_to_host(full, hf, sizeof hf));
    GXT_OK(gx_array_to_host(part, hp, sizeof hp));
    GXT_CHECK(memcmp(hf + 101, hp, sizeof hp) == 0);
    /* A strided 2-D view: element (i, j) of the view is stream element i*cols + j. */
    int64_t shape[2] = {20, 30};
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, shape, &big));
    gx_slice sl[2] = {{1, 20, 2}, {0, 30, 3}};
    GXT_OK(gx_array_view(big, sl, &view));
    GXT_OK(gx_rand_into((gx_rng){77, 0, 0}, view));
    float hb[600];
    GXT_OK(gx_array_to_host(big, hb, sizeof hb));
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < 30; j++) {
            float want =
                (i % 2 == 1 && j % 3 == 0) ? ref_u_f32((gx_rng){77, 0, 0}, (uint64_t)((i / 2) * 10 + j / 3)) : 0.0f;
            if (hb[i * 30 + j] != want) {
                GXT_FAIL_AT(__FILE__, __LINE__, "view (%d,%d): %g want %g", i, j, hb[i * 30 + j], want);
                i = 20;
                break;
            }
        }
    gx_array_release(full);
    gx_array_release(part);
    gx_array_release(view);
    gx_array_release(big);
}

GXT_TEST(rand_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 10;
    gx_array *i32 = NULL, *f32 = NULL, *u8 = NULL;
    GXT_OK(gx_array_empty(ctx, GX_I32, 1, &n, &i32));
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &f32));
    GXT_OK(gx_array_empty(ctx, GX_U8, 1, &n, &u8));
    GXT_STATUS(gx_rand_into((gx_rng){0, 0, 0}, i32), GX_ERR_DTYPE);
    GXT_MSG_HAS("gx_rand_int");
    GXT_STATUS(gx_randn_into((gx_rng){0, 0, 0}, i32), GX_ERR_DTYPE);
    GXT_STATUS(gx_rand_int_into((gx_rng){0, 0, 0}, 0, 10, f32), GX_ERR_DTYPE);
    GXT_STATUS(gx_rand_int_into((gx_rng){0, 0, 0}, 5, 5, i32), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("empty");
    GXT_STATUS(gx_rand_int_into((gx_rng){0, 0, 0}, 0, 300, u8), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("u8");
    GXT_STATUS(gx_rand_into((gx_rng){0, 0, UINT64_MAX - 3}, f32), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_rand_into((gx_rng){0, 0, 0}, NULL), GX_ERR_INVALID_ARGUMENT);
    /* the allocating forms check the same, and leave *out NULL */
    gx_array *o = NULL;
    GXT_STATUS(gx_rand(ctx, (gx_rng){0, 0, 0}, GX_I32, 1, &n, &o), GX_ERR_DTYPE);
    GXT_STATUS(gx_randn(ctx, (gx_rng){0, 0, 0}, GX_DTYPE_DEFAULT, 1, &n, &o), GX_ERR_DTYPE);
    GXT_STATUS(gx_rand_int(ctx, (gx_rng){0, 0, 0}, 0, 10, GX_F32, 1, &n, &o), GX_ERR_DTYPE);
    GXT_STATUS(gx_rand_int(ctx, (gx_rng){0, 0, 0}, 0, 300, GX_U8, 1, &n, &o), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(o == NULL);
    GXT_STATUS(gx_rand(NULL, (gx_rng){0, 0, 0}, GX_F32, 1, &n, &o), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_rand(ctx, (gx_rng){0, 0, 0}, GX_F32, 1, &n, NULL), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(i32);
    gx_array_release(f32);
    gx_array_release(u8);
}

#ifdef GX_HAVE_CUDA
#include "backend/cuda/cuda_priv.h"
#include "linalg/linalg_priv.h"

/* The CUDA text of every generator variant compiles under NVRTC (no GPU needed). */
GXT_TEST(rand_cuda_source_compiles)
{
    if (!cuda_nvrtc_load()) {
        gxt_skip("NVRTC not loadable");
        return;
    }
    struct {
        int kind;
        gx_dtype t;
        uint64_t range;
    } v[] = {
        {0, GX_F32, 0},    {0, GX_F64, 0},          {1, GX_F32, 0}, {1, GX_F64, 0},          {2, GX_I8, 10},
        {2, GX_U16, 1000}, {2, GX_I32, 1ull << 32}, {2, GX_I64, 5}, {2, GX_I64, 1ull << 40}, {2, GX_U64, 0},
        {0, GX_F16, 0},    {0, GX_BF16, 0},         {1, GX_F16, 0}, {1, GX_BF16, 0},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        gx__sbuf src = {0};
        GXT_OK(linalg_rand_source(true, v[i].kind, v[i].t, v[i].range, &src));
        void *ptx = NULL;
        size_t len = 0;
        char *log = NULL;
        gx_status s = cuda_nvrtc_compile(src.p, "rand.cu", 9, 0, 1, &ptx, &len, &log);
        if (s != GX_OK)
            GXT_FAIL_AT(__FILE__, __LINE__, "variant %zu: %s\n%s", i, gx_last_error(), log ? log : "");
        free(ptx);
        free(log);
        gx__sb_free(&src);
    }
}
#else /* built without CUDA headers: the tests exist and skip */
GXT_TEST(rand_cuda_source_compiles) { gxt_skip("gx was built without the CUDA headers"); }
#endif
