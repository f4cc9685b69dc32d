/* test_map_table.c -- tabulated maps (src/ops/ew_table.c): a costly function of one
 * 8- or 16-bit input is evaluated once per bit pattern and applied as a lookup.  The
 * contract is that nobody can tell: every result equals the direct kernel's bit for
 * bit, on every input dtype, output size, length, alignment and aliasing, and the
 * values themselves match a host reference. */
#include "gx_test.h"
#include "ops/ewise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bits of n elements of `isz` bytes: every pattern (shuffled by an odd multiplier)
 * and then random ones, so each table entry is read and lookups collide at random. */
static void *mt_bits(int64_t n, size_t isz)
{
    unsigned char *p = malloc((size_t)(n > 0 ? n : 1) * isz);
    uint32_t patterns = isz == 1 ? 256u : 65536u;
    for (int64_t i = 0; p && i < n; i++) {
        uint32_t v = i < (int64_t)patterns ? (uint32_t)i * 40503u : (uint32_t)(gxt_rand01() * 65536.0 * 256.0);
        v &= patterns - 1;
        memcpy(p + (size_t)i * isz, &v, isz); /* little-endian: the low bytes */
    }
    return p;
}

/* gx_map of `lambda` on `in` into a fresh array of `odt`, table path forced on or
 * off; the result's bytes in *out (caller frees). */
static gx_status mt_map(gx_ctx *ctx, int mode, const char *lambda, gx_array *in, gx_dtype odt,
                        const gx_map_opts *o, void **out)
{
    gx_map_opts opts = o ? *o : (gx_map_opts){0};
    opts.dtype = odt;
    gx__ew_table_mode(mode);
    gx_array *r = NULL;
    gx_status s = gx_map(ctx, lambda, 1, &in, &opts, &r);
    gx__ew_table_mode(-1);
    int64_t size = 0;
    if (r)
        gx_array_size(r, &size);
    size_t bytes = (size_t)size * gx_dtype_size(odt);
    *out = malloc(bytes ? bytes : 1);
    if (s == GX_OK && *out && bytes)
        s = gx_array_to_host(r, *out, bytes);
    gx_array_release(r);
    return s;
}

static bool mt_is_float(gx_dtype t) { return t == GX_F16 || t == GX_BF16; }

/* Two 16-bit float patterns one unit in the last place apart (or both NaN). */
static bool mt_near(uint16_t a, uint16_t b, gx_dtype t)
{
    int mant = t == GX_F16 ? 10 : 7;
    uint16_t expo = (uint16_t)(0x7fffu >> mant << mant);
    bool na = (a & expo) == expo && (a & ~expo & 0x7fff), nb = (b & expo) == expo && (b & ~expo & 0x7fff);
    if (na || nb)
        return na && nb;
    return (a >> 15) == (b >> 15) && (a > b ? a - b : b - a) <= 1;
}

/* Direct and tabulated results equal: bit for bit on CUDA; on the CPU float outputs
 * may differ by one unit in the last place, rarely (see ewise.h). */
static void mt_same(gx_ctx *ctx, const char *lambda, gx_array *in, gx_dtype odt, const gx_map_opts *o)
{
    void *a = NULL, *b = NULL;
    GXT_OK(mt_map(ctx, 0, lambda, in, odt, o, &a));
    GXT_OK(mt_map(ctx, 1, lambda, in, odt, o, &b));
    gx_array_desc d;
    GXT_OK(gx_array_describe(in, &d));
    gx_device_info info;
    GXT_OK(gx_device_info_get(ctx, &info));
    bool cpu = info.cc_major == 0;
    size_t osz = gx_dtype_size(odt);
    int64_t off = 0, first = -1;
    for (int64_t i = 0; a && b && i < d.size; i++) {
        if (!memcmp((char *)a + i * osz, (char *)b + i * osz, osz))
            continue;
        uint16_t x = 0, y = 0;
        memcpy(&x, (char *)a + i * osz, osz);
        memcpy(&y, (char *)b + i * osz, osz);
        bool ok = cpu && mt_is_float(odt) && mt_near(x, y, odt);
        off++;
        if (!ok && first < 0)
            first = i;
    }
    if (first >= 0 || off * 1000 > d.size + 1000)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s on %s -> %s: %lld of %lld elements differ between direct and table (first "
                    "beyond one ulp at %lld)", lambda, gx_dtype_name(d.dtype), gx_dtype_name(odt), (long long)off,
                    (long long)d.size, (long long)first);
    free(a), free(b);
}

/* Every input dtype the table takes, into every output dtype of 8 or 16 bits, and
 * into wider ones (which run directly: equal by construction).  Integer outputs come
 * from lambdas whose value is exact: truncating sin^2 + cos^2 ~ 1 to an integer would
 * expose the CPU direct kernel's own last-bit differences between its vector body
 * and its scalar tail, which the table does not have. */
GXT_TEST(map_table_equals_direct_every_dtype)
{
    gx_ctx *ctx = gxt_ctx();
    static const gx_dtype ins[] = {GX_F16, GX_BF16, GX_I8, GX_U8, GX_I16, GX_U16};
    static const struct {
        const char *lambda;
        gx_dtype out[4];
    } cases[] = {
        {"x -> sin(x)*sin(x) + cos(x)*cos(x)", {GX_F16, GX_BF16, GX_F32, GX_F64}},
        {"x -> exp(x / 16) - tanh(x)", {GX_F16, GX_BF16, GX_U16, GX_F64}},
        {"x -> x > 3 ? log(x) : erf(x)", {GX_BF16, GX_F16, GX_I16, GX_U8}},
        {"x -> x * x + 1", {GX_I16, GX_U8, GX_I32, GX_U16}},
        {"x -> sqrt(abs(x)) > 2", {GX_BOOL, GX_U8, GX_I16, GX_F16}},
    };
    int64_t n = 65536 + 4099; /* every pattern, then random ones; odd tail */
    for (size_t d = 0; d < sizeof ins / sizeof ins[0]; d++) {
        void *h = mt_bits(n, gx_dtype_size(ins[d]));
        gx_array *a = NULL;
        GXT_OK(gx_array_from_host(ctx, ins[d], 1, &n, h, &a));
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int k = 0; k < 4; k++)
                mt_same(ctx, cases[c].lambda, a, cases[c].out[k], NULL);
        gx_array_release(a);
        free(h);
    }
}

/* Lengths around the vector width and the grid, views that start off the vector
 * alignment, a constant, a user function, and the map written over its own input. */
GXT_TEST(map_table_sizes_views_inplace)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t sizes[] = {0, 1, 7, 31, 32, 33, 255, 256, 257, 4097, 1 << 17};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int64_t n = sizes[i];
        void *h = mt_bits(n, 2);
        gx_array *a = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F16, 1, &n, h, &a));
        mt_same(ctx, "x -> sin(x) * cos(x)", a, GX_F16, NULL);
        gx_array_release(a);
        free(h);
    }
    int64_t n = 100003, lo = 3, hi = n;
    (void)hi;
    void *h = mt_bits(n, 2);
    gx_array *a = NULL, *v = NULL, *u = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_BF16, 1, &n, h, &a));
    GXT_OK(gx_array_view(a, &(gx_slice){lo, hi, 1}, &v)); /* 6 bytes in: vectors of 1 element */
    mt_same(ctx, "x -> exp(x) * 0.5", v, GX_BF16, NULL);
    gx_const k = GX_CONST("k", GX_SCALAR_F32(2.5f));
    gx_map_opts o = {.consts = &k, .nconsts = 1};
    mt_same(ctx, "x -> sin(k * x)", a, GX_F16, &o);
    k.value = GX_SCALAR_F32(-0.75f); /* a new constant: a new table */
    mt_same(ctx, "x -> sin(k * x)", a, GX_F16, &o);
    GXT_OK(gx_define(ctx, "softplus", "float softplus(float x) { return log1pf(expf(x)); }"));
    mt_same(ctx, "x -> softplus(x)", a, GX_BF16, NULL);
    /* In place: out is the input; each element read before it is written. */
    void *want = NULL;
    GXT_OK(mt_map(ctx, 0, "x -> cos(x)", a, GX_BF16, NULL, &want));
    gx__ew_table_mode(1);
    GXT_OK(gx_map_into(ctx, "x -> cos(x)", 1, &a, NULL, a));
    gx__ew_table_mode(-1);
    uint16_t *got = malloc((size_t)n * 2);
    GXT_OK(gx_array_to_host(a, got, (size_t)n * 2));
    GXT_CHECK(want && got && memcmp(want, got, (size_t)n * 2) == 0);
    /* A shifted view of the input as output: not tabulated (the lookups of one thread
     * would read what another wrote); equal to the direct path run the same way. */
    GXT_OK(gx_array_from_host(ctx, GX_BF16, 1, &n, h, &u));
    gx_array *src = NULL, *dst = NULL;
    GXT_OK(gx_array_view(u, &(gx_slice){0, n - 1, 1}, &src));
    GXT_OK(gx_array_view(u, &(gx_slice){1, n, 1}, &dst));
    gx__ew_table_mode(1);
    gx_status s = gx_map_into(ctx, "x -> cos(x)", 1, &src, NULL, dst);
    gx__ew_table_mode(-1);
    GXT_OK(s);
    gx_array_release(src), gx_array_release(dst), gx_array_release(u);
    free(want), free(got), free(h);
    gx_array_release(v), gx_array_release(a);
}

/* The values themselves, against the host: u8 -> u16 squares exactly, and f16 exp
 * within one f16 ulp of libm on every pattern. */
GXT_TEST(map_table_values_host_reference)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 70001;
    uint8_t *b = mt_bits(n, 1);
    gx_array *a = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_U8, 1, &n, b, &a));
    void *got = NULL;
    GXT_OK(mt_map(ctx, 1, "x -> x * x + 1", a, GX_U16, NULL, &got));
    for (int64_t i = 0; got && i < n && gxt_failures < 10; i++)
        if (((uint16_t *)got)[i] != (uint16_t)(b[i] * b[i] + 1))
            GXT_FAIL_AT(__FILE__, __LINE__, "[%lld] %u^2+1 = %u", (long long)i, b[i], ((uint16_t *)got)[i]);
    free(got), free(b);
    gx_array_release(a);
    uint16_t *h = mt_bits(n, 2);
    GXT_OK(gx_array_from_host(ctx, GX_F16, 1, &n, h, &a));
    GXT_OK(mt_map(ctx, 1, "x -> exp(x / 8)", a, GX_F16, NULL, &got));
    for (int64_t i = 0; got && i < n && gxt_failures < 10; i++) {
        double x = gx_f16_to_f32(h[i]), want = exp(x / 8), r = gx_f16_to_f32(((uint16_t *)got)[i]);
        bool ok = isnan(want) ? isnan(r) : want >= 65520 ? isinf(r) && r > 0
                                                         : fabs(r - want) <= fmax(fabs(want) * 0x1p-10, 0x1p-24);
        if (!ok)
            GXT_FAIL_AT(__FILE__, __LINE__, "exp(%g / 8) = %g, host %g", x, r, want);
    }
    free(got), free(h);
    gx_array_release(a);
}

/* Without the test hook: the size rule takes the table for a costly f16 map at 2^24
 * (the profiler names the lookup kernel) and not for a cheap one or a short array. */
GXT_TEST(map_table_chosen_by_size_and_cost)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = (int64_t)1 << 24;
    gx_array *a = NULL, *o = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F16, 1, &n, &a));
    GXT_OK(gx_array_empty(ctx, GX_F16, 1, &n, &o));
    GXT_OK(gx_array_fill_f64(a, 0.25));
    gx_array *sm = NULL;
    GXT_OK(gx_array_view(a, &(gx_slice){0, 4096, 1}, &sm));
    static const struct {
        const char *lambda;
        int short_input;
        int want;
    } cases[] = {{"x -> sin(x) * sin(x) + cos(x) * cos(x)", 0, 1}, {"x -> x * 2 + 1", 0, 0}, {"x -> sin(x)", 1, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char report[8192];
        size_t need = 0;
        GXT_OK(gx_profile_reset(ctx));
        GXT_OK(gx_profile_start(ctx, 0));
        gx_array *r = NULL;
        if (cases[c].short_input)
            GXT_OK(gx_map(ctx, cases[c].lambda, 1, &sm, NULL, &r));
        else
            GXT_OK(gx_map_into(ctx, cases[c].lambda, 1, &a, NULL, o));
        GXT_OK(gx_sync(ctx));
        GXT_OK(gx_profile_stop(ctx));
        GXT_OK(gx_profile_report_text(ctx, report, sizeof report, &need));
        bool table = strstr(report, "gx_map (table)") != NULL;
        if (table != (cases[c].want != 0))
            GXT_FAIL_AT(__FILE__, __LINE__, "%s: table %s, want %s\n%s", cases[c].lambda, table ? "taken" : "not taken",
                        cases[c].want ? "taken" : "not taken", report);
        gx_array_release(r);
    }
    uint16_t first = 0;
    GXT_OK(gx_array_get(o, (int64_t[]){7}, &first)); /* x * 2 + 1 of 0.25 */
    GXT_CHECK(gx_f16_to_f32(first) == 1.5f);
    gx_array_release(sm), gx_array_release(a), gx_array_release(o);
}

/* A tabulated map recorded in a graph and replayed on new contents (the recording
 * builds its own table, outside the cache), and the cache across calls: the same map
 * twice, then with another constant, each equal to the direct path. */
GXT_TEST(map_table_graph_and_cache)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 5003;
    uint16_t *h = mt_bits(n, 2), *got = malloc((size_t)n * 2);
    gx_array *x = NULL, *o = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F16, 1, &n, h, &x));
    GXT_OK(gx_array_empty(ctx, GX_F16, 1, &n, &o));
    gx__ew_table_mode(1);
    gx_graph *g = NULL;
    GXT_OK(gx_graph_begin(ctx));
    GXT_OK(gx_map_into(ctx, "x -> tanh(x) * 3", 1, &x, NULL, o));
    GXT_OK(gx_graph_end(ctx, &g));
    gx__ew_table_mode(-1);
    for (int64_t i = 0; i < n; i++)
        h[i] = (uint16_t)(h[i] * 7u + 1u); /* new contents */
    GXT_OK(gx_array_from_host_into(h, (size_t)n * 2, x));
    GXT_OK(gx_graph_launch(g));
    GXT_OK(gx_sync(ctx));
    GXT_OK(gx_array_to_host(o, got, (size_t)n * 2));
    void *want = NULL;
    GXT_OK(mt_map(ctx, 0, "x -> tanh(x) * 3", x, GX_F16, NULL, &want));
    GXT_CHECK(want && got && memcmp(want, got, (size_t)n * 2) == 0);
    free(want);
    GXT_OK(gx_graph_destroy(g));
    gx_const k = GX_CONST("k", GX_SCALAR_F32(1.5f));
    gx_map_opts opts = {.consts = &k, .nconsts = 1};
    for (int round = 0; round < 3; round++) {
        k.value = GX_SCALAR_F32(round == 2 ? -2.0f : 1.5f); /* rounds 0 and 1 share a table */
        mt_same(ctx, "x -> exp(k * x)", x, GX_F16, &opts);
    }
    gx_array_release(x), gx_array_release(o);
    free(h), free(got);
}
