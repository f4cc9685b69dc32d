/* test_lambda.c -- the lambda language: parsing, types, errors with carets,
 * emitted C evaluated by the system compiler, the CUDA prelude under NVRTC,
 * user function scanning, and robustness against garbage. */
#define _GNU_SOURCE
#include "gx_test.h"
#include "jit/cache.h" /* cache_sha256_hex */
#include "jit/lambda.h"
#include "jit/lambda_impl.h" /* LAM__MAX_NEST */

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

/* ------------------------------------------------------------ shared fixtures */

static const char *const julia_src =
    "/* Julia set: escape time of one pixel */\n"
    "#define JULIA_MAX 255\n"
    "float cnorm1(cf32 z) { return fabsf(z.re) + fabsf(z.im); }   // not callable: cf32\n"
    "int juliaset_pixel(int i, int j, int n)\n"
    "{\n"
    "    const char *why = \"braces { in strings } are skipped\";\n"
    "    if (why[0] == '}') return -1;\n"
    "    cf32 c = c32(-0.5f, 0.6f);\n"
    "    cf32 z = c32(-1.5f + 3.0f * (float)j / (float)n, -1.5f + 3.0f * (float)i / (float)n);\n"
    "    for (int k = 0; k < JULIA_MAX; k++) {\n"
    "        z = cadd(cmul(z, z), c);\n"
    "        if (cabs2(z) > 4.0f) return k;\n"
    "    }\n"
    "    return JULIA_MAX;\n"
    "}\n";

/* The same computation written directly, for expected values. */
static int julia_ref(int i, int j, int n)
{
    float cr = -0.5f, ci = 0.6f;
    float zr = -1.5f + 3.0f * (float)j / (float)n, zi = -1.5f + 3.0f * (float)i / (float)n;
    for (int k = 0; k < 255; k++) {
        float r = zr * zr - zi * zi, m = zr * zi + zi * zr;
        zr = r + cr;
        zi = m + ci;
        if (zr * zr + zi * zi > 4.0f)
            return k;
    }
    return 255;
}

/* Constants every test environment offers: n (i32 100) and h (f64 0.5). */
static const gx_const test_consts[2] = {{"n", {GX_I32, {.i = 100}}}, {"h", {GX_F64, {.f = 0.5}}}};
static const char *const test_const_c[2] = {"k_n", "k_h"};
static const char *const test_const_defs = "#define k_n ((int32_t)100)\n#define k_h ((double)0.5)\n";
static const char *const test_param_c[3] = {"a0", "a1", "a2"};

static int test_sigs(lam_fn_sig *sigs, size_t *offs, int max)
{
    int count = 0;
    if (lam_scan_functions(julia_src, sigs, offs, max, &count) != GX_OK)
        return -1;
    return count;
}

static int parse_types(const char *spec, gx_dtype *out)
{
    int n = 0;
    char buf[64];
    while (spec && *spec && n < 3) {
        size_t k = strcspn(spec, ",");
        snprintf(buf, sizeof buf, "%.*s", (int)k, spec);
        if (gx_dtype_parse(buf, &out[n]) != GX_OK)
            return -1;
        n++;
        spec += k + (spec[k] == ',');
    }
    return n;
}

/* Compiles `text` against args `types` with the fixture's constants and functions. */
static gx_status compile_with(const char *text, const char *types, lam_lambda **out)
{
    gx_dtype at[3];
    lam_fn_sig sigs[4];
    int nt = parse_types(types, at), ns = test_sigs(sigs, NULL, 4);
    if (nt < 0 || ns < 0)
        return GX_ERR_INTERNAL;
    lam_env env = {text, nt, at, test_consts, 2, sigs, ns, NULL, 0};
    return lam_compile(&env, out);
}

/* User source with GXF in front of each definition, as the JIT does. */
static void add_user_source(gx__sbuf *b)
{
    lam_fn_sig sigs[4];
    size_t offs[4];
    int n = test_sigs(sigs, offs, 4);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        gx__sb_printf(b, "%.*s GXF ", (int)(offs[i] - at), julia_src + at);
        at = offs[i];
    }
    gx__sb_puts(b, julia_src + at);
}

/* ------------------------------------------------------------ result types */

GXT_TEST(lambda_result_types)
{
    static const struct {
        const char *text, *types;
        gx_dtype want;
    } cases[] = {
        {"x, y -> x + y", "i8,i8", GX_I32},
        {"x, y -> x + y", "u16,u8", GX_I32},
        {"x, y -> x + y", "i32,u32", GX_U32},
        {"x, y -> x + y", "i64,u32", GX_I64},
        {"x, y -> x + y", "u64,i64", GX_U64},
        {"x, y -> x * y", "f32,i64", GX_F32},
        {"x, y -> x * y", "f32,f64", GX_F64},
        {"x -> x + 1", "bool", GX_I32},
        {"x -> x + 1.0", "f32", GX_F64},
        {"x -> x + 1.0f", "f32", GX_F32},
        {"x -> x > 0.5f", "f32", GX_BOOL},
        {"x, y -> x && y", "f64,i8", GX_BOOL},
        {"x -> !x", "f32", GX_BOOL},
        {"x -> -x", "u8", GX_I32},
        {"x -> ~x", "u64", GX_U64},
        {"x, y -> x << y", "u8,i64", GX_I32},
        {"x, y -> x << y", "i64,i8", GX_I64},
        {"x -> sin(x)", "i32", GX_F64},
        {"x -> sin(x)", "f32", GX_F32},
        {"x -> sin(x)", "f64", GX_F64},
        {"x, y -> pow(x, y)", "f32,i32", GX_F32},
        {"x -> abs(x)", "i16", GX_I32},
        {"x -> abs(x)", "f32", GX_F32},
        {"x, y -> min(x, y)", "u32,i32", GX_U32},
        {"x -> clamp(x, 0, 1)", "f32", GX_F32},
        {"x -> isnan(x)", "f64", GX_BOOL},
        {"x -> sign(x)", "i64", GX_I64},
        {"x -> f32(x)", "u64", GX_F32},
        {"x -> u8(x)", "f64", GX_U8},
        {"x -> bool(x)", "i32", GX_BOOL},
        {"-> 1", "", GX_I32},
        {"-> 2147483648", "", GX_I64},
        {"-> 0xFFFFFFFF", "", GX_I64},
        {"-> 1u", "", GX_U32},
        {"-> 4294967296u", "", GX_U64},
        {"-> 1L", "", GX_I64},
        {"-> 1ul", "", GX_U64},
        {"-> 0xFFFFFFFFFFFFFFFF", "", GX_U64},
        {"-> .5", "", GX_F64},
        {"-> 2.5f", "", GX_F32},
        {"-> 1e-3", "", GX_F64},
        {"-> true", "", GX_BOOL},
        {"x -> x ? true : false", "f32", GX_BOOL},
        {"x -> x ? 1 : 2.0f", "bool", GX_F32},
        {"x -> n * x", "i8", GX_I32},
        {"x -> h * x", "f32", GX_F64},
        {"n -> n", "u8", GX_U8},
        {"i, j -> juliaset_pixel(i, j, n)", "i64,f32", GX_I32},
        {"x, y -> x == y", "u64,f64", GX_BOOL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lam_lambda *l = NULL;
        gx_status s = compile_with(cases[i].text, cases[i].types, &l);
        if (s != GX_OK) {
            GXT_FAIL_AT(__FILE__, __LINE__, "'%s' (%s) failed: %s", cases[i].text, cases[i].types, gx_last_error());
            continue;
        }
        if (lam_result_type(l) != cases[i].want)
            GXT_FAIL_AT(__FILE__, __LINE__, "'%s' (%s): type %s, want %s", cases[i].text, cases[i].types,
                        gx_dtype_name(lam_result_type(l)), gx_dtype_name(cases[i].want));
        lam_free(l);
    }
}

GXT_TEST(lambda_parse_arity)
{
    int n = -1;
    GXT_OK(lam_parse_arity("-> 1", &n));
    GXT_EQ_I64(n, 0);
    GXT_OK(lam_parse_arity("a, b, c -> a + b * c", &n));
    GXT_EQ_I64(n, 3);
    GXT_OK(lam_parse_arity("x -> undefined_name(x, 1)", &n)); /* no types: names unchecked */
    GXT_EQ_I64(n, 1);
    GXT_STATUS(lam_parse_arity("x -> x +", &n), GX_ERR_SYNTAX);
    GXT_STATUS(lam_parse_arity(NULL, &n), GX_ERR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------ errors with carets */

static int caret_col(const char *msg)
{
    const char *c = strchr(msg, '^');
    if (!c)
        return -1;
    const char *line = c;
    while (line > msg && line[-1] != '\n')
        line--;
    return (int)(c - line) - 2;
}

GXT_TEST(lambda_errors)
{
    static const struct {
        const char *text, *types;
        gx_status s;
        int col;
        const char *has;
    } cases[] = {
        {"x, y -> x * ", "f32,f32", GX_ERR_SYNTAX, 12, "expected an expression after '*'"},
        {"", "", GX_ERR_SYNTAX, 0, "empty"},
        {"x y -> x", "f32,f32", GX_ERR_SYNTAX, 2, "expected ',' or '->'"},
        {"x, y", "f32,f32", GX_ERR_SYNTAX, 4, "'->'"},
        {"x, y -> (x + y", "f32,f32", GX_ERR_SYNTAX, 14, "expected ')'"},
        {"x, y -> x + y)", "f32,f32", GX_ERR_SYNTAX, 13, "unexpected ')'"},
        {"x, y -> x = y", "f32,f32", GX_ERR_SYNTAX, 10, "'=='"},
        {"x, y -> x @ y", "f32,f32", GX_ERR_SYNTAX, 10, "unexpected character '@'"},
        {"x, y -> 99999999999999999999", "f32,f32", GX_ERR_SYNTAX, 8, "does not fit"},
        {"x, y -> 9223372036854775808", "f32,f32", GX_ERR_SYNTAX, 8, "too large"},
        {"x, y -> 1e999", "f32,f32", GX_ERR_SYNTAX, 8, "out of range"},
        {"x, y -> 1e40f", "f32,f32", GX_ERR_SYNTAX, 8, "out of range"},
        {"x, y -> 1.5q", "f32,f32", GX_ERR_SYNTAX, 11, "malformed"},
        {"x, y -> 12abc", "f32,f32", GX_ERR_SYNTAX, 10, "suffix"},
        {"x, y -> 1e+", "f32,f32", GX_ERR_SYNTAX, 9, "exponent"},
        {"x, y -> 0x", "f32,f32", GX_ERR_SYNTAX, 8, "hex"},
        {"x, y -> x ? y", "f32,f32", GX_ERR_SYNTAX, 13, "expected ':'"},
        {"x, y -> f(x y)", "f32,f32", GX_ERR_SYNTAX, 12, "expected ',' or ')'"},
        {"x, x -> x", "f32,f32", GX_ERR_SYNTAX, 3, "appears twice"},
        {"true -> 1", "f32", GX_ERR_SYNTAX, 0, "cannot be a parameter"},
        {"x, y -> x & y", "f32,f32", GX_ERR_TYPE, 10, "needs integer operands"},
        {"x, y -> x % y", "f32,f32", GX_ERR_TYPE, 10, "fmod"},
        {"x, y -> ~x", "f32,f32", GX_ERR_TYPE, 8, "'~'"},
        {"x, y -> 1 << y", "f32,f32", GX_ERR_TYPE, 10, "right operand is f32"},
        {"x, y -> sinn(x)", "f32,f32", GX_ERR_TYPE, 8, "did you mean 'sin'"},
        {"x, y -> z", "f32,f32", GX_ERR_TYPE, 8, "unknown name 'z'"},
        {"x, y -> x + nn", "f32,f32", GX_ERR_TYPE, 12, "did you mean 'n'"},
        {"x, y -> atan2(x)", "f32,f32", GX_ERR_TYPE, 8, "takes 2 arguments"},
        {"x, y -> f32(x, y)", "f32,f32", GX_ERR_TYPE, 8, "takes 1 argument"},
        {"x, y -> juliaset_pixel(1, 2)", "f32,f32", GX_ERR_TYPE, 8, "takes 3 arguments"},
        {"x, y -> juliaset_pxl(1, 2, 3)", "f32,f32", GX_ERR_TYPE, 8, "did you mean 'juliaset_pixel'"},
        {"x, y -> 1 + cnorm1(x)", "f32,f32", GX_ERR_TYPE, 12, "cannot be called"},
        {"x, y -> x(1)", "f32,f32", GX_ERR_TYPE, 8, "is a parameter"},
        {"x, y -> sin", "f32,f32", GX_ERR_TYPE, 8, "is a function"},
        {"x -> x", "f32,f32", GX_ERR_TYPE, 0, "takes 1 parameter, but 2 arguments"},
        {"-> 1", "f32", GX_ERR_TYPE, 0, "takes 0 parameters"},
        {"x -> x", "", GX_ERR_TYPE, 0, "but 0 arguments"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lam_lambda *l = NULL;
        gx_clear_error();
        gx_status s = compile_with(cases[i].text, cases[i].types, &l);
        const char *msg = gx_last_error();
        if (s != cases[i].s || l) {
            GXT_FAIL_AT(__FILE__, __LINE__, "'%s': %s, want %s\n%s", cases[i].text, gx_status_string(s),
                        gx_status_string(cases[i].s), msg);
            lam_free(l);
            continue;
        }
        if (!strstr(msg, cases[i].has))
            GXT_FAIL_AT(__FILE__, __LINE__, "'%s': message lacks \"%s\":\n%s", cases[i].text, cases[i].has, msg);
        if (caret_col(msg) != cases[i].col)
            GXT_FAIL_AT(__FILE__, __LINE__, "'%s': caret at %d, want %d:\n%s", cases[i].text, caret_col(msg),
                        cases[i].col, msg);
        /* the text is shown in full on the line above the caret */
        if (!strstr(msg, cases[i].text))
            GXT_FAIL_AT(__FILE__, __LINE__, "'%s': text not shown:\n%s", cases[i].text, msg);
        if (!strstr(msg, "\nhint: ") && cases[i].s == GX_ERR_SYNTAX)
            GXT_FAIL_AT(__FILE__, __LINE__, "'%s': no hint:\n%s", cases[i].text, msg);
    }
}

GXT_TEST(lambda_error_format)
{
    lam_lambda *l = NULL;
    GXT_STATUS(compile_with("x, y -> x * ", "f32,f32", &l), GX_ERR_SYNTAX);
    static const char want[] = "syntax error: expected an expression after '*'\n"
                               "  x, y -> x * \n"
                               "              ^\n"
                               "hint: ";
    GXT_CHECK(strncmp(gx_last_error(), want, sizeof want - 1) == 0);
}

/* ------------------------------------------------------------ evaluation through cc */

typedef struct ecase {
    const char *text, *types;
    const char *args[3];
    gx_dtype want;
    double f;             /* expected value: float results */
    long long i;          /* signed / bool results */
    unsigned long long u; /* unsigned results */
} ecase;

#define EI(t, ty, a, b, c, w, v)                  \
    {                                             \
        t, ty, {a, b, c}, w, 0, (long long)(v), 0 \
    }
#define EU(t, ty, a, b, c, w, v)                           \
    {                                                      \
        t, ty, {a, b, c}, w, 0, 0, (unsigned long long)(v) \
    }
#define EF(t, ty, a, b, c, w, v)               \
    {                                          \
        t, ty, {a, b, c}, w, (double)(v), 0, 0 \
    }

static const ecase eval_cases[] = {
    /* precedence and associativity */
    EI("x, y, z -> x + y * z", "i32,i32,i32", "2", "3", "4", GX_I32, 2 + 3 * 4),
    EI("x, y, z -> x - y - z", "i32,i32,i32", "10", "3", "2", GX_I32, 10 - 3 - 2),
    EI("x, y, z -> x / y / z", "i32,i32,i32", "100", "5", "2", GX_I32, 100 / 5 / 2),
    EI("x, y, z -> x << y + z", "i32,i32,i32", "1", "2", "3", GX_I32, 1 << (2 + 3)),
    EI("x, y, z -> x & y == z", "i32,i32,i32", "3", "2", "2", GX_I32, 3 & (2 == 2)),
    EI("x, y, z -> x | y ^ z & 7", "i32,i32,i32", "1", "6", "13", GX_I32, 1 | (6 ^ (13 & 7))),
    EI("x, y, z -> x ? y : z ? 1 : 2", "i32,i32,i32", "0", "5", "0", GX_I32, 2),
    EI("x, y, z -> x < y == y < z", "i32,i32,i32", "1", "2", "3", GX_BOOL, 1),
    EI("x, y, z -> x || y && z", "i32,i32,i32", "1", "0", "0", GX_BOOL, 1),
    EI("x, y -> -x % y", "i32,i32", "7", "3", NULL, GX_I32, -7 % 3),
    EI("x, y -> !x + -y", "i32,i32", "0", "5", NULL, GX_I32, 1 - 5),
    EI("x -> - - x", "i32", "4", NULL, NULL, GX_I32, 4),
    EI("-> 1 + 2 * 3 - (4 - 5) * 6", "", NULL, NULL, NULL, GX_I32, 1 + 2 * 3 - (4 - 5) * 6),
    EI("-> 10 % 3 == 1 && !false", "", NULL, NULL, NULL, GX_BOOL, 1),
    EI("-> 100 >> 2 >> 1", "", NULL, NULL, NULL, GX_I32, (100 >> 2) >> 1),
    /* C conversions */
    EI("x, y -> x + y", "u8,u8", "200", "100", NULL, GX_I32, 300),
    EI("x -> ~x", "u8", "5", NULL, NULL, GX_I32, ~5),
    EI("x, y -> x < y", "u32,i32", "1", "-1", NULL, GX_BOOL, 1),
    EI("x, y -> x < y", "i64,u32", "-1", "1", NULL, GX_BOOL, 1),
    EU("x, y -> min(x, y)", "u32,i32", "1", "-1", NULL, GX_U32, 1),
    EI("x -> u8(x)", "i32", "300", NULL, NULL, GX_U8, 44),
    EI("x -> i8(x)", "i32", "200", NULL, NULL, GX_I8, -56),
    EI("n -> n + 1", "i32", "5", NULL, NULL, GX_I32, 6),
    EI("x -> n * x", "i16", "3", NULL, NULL, GX_I32, 300),
    /* wraparound */
    EI("x, y -> x * y", "i32,i32", "65536", "65536", NULL, GX_I32, 0),
    EI("x, y -> x + y", "i32,i32", "2147483647", "1", NULL, GX_I32, INT32_MIN),
    EI("x, y -> x - y", "i64,i64", "INT64_MIN", "1", NULL, GX_I64, INT64_MAX),
    EI("x -> -x", "i32", "INT32_MIN", NULL, NULL, GX_I32, INT32_MIN),
    EI("x -> abs(x)", "i32", "INT32_MIN", NULL, NULL, GX_I32, INT32_MIN),
    EU("x, y -> x - y", "u32,u32", "1", "2", NULL, GX_U32, UINT32_MAX),
    EU("x -> -x", "u32", "1", NULL, NULL, GX_U32, UINT32_MAX),
    EU("x, y -> x * y", "u64,u64", "0x8000000000000000", "2", NULL, GX_U64, 0),
    EI("-> 0x7fffffff + 1", "", NULL, NULL, NULL, GX_I32, INT32_MIN),
    EU("-> 1u - 2u", "", NULL, NULL, NULL, GX_U32, UINT32_MAX),
    EU("-> 0xFFFFFFFFFFFFFFFF", "", NULL, NULL, NULL, GX_U64, UINT64_MAX),
    EI("-> -2147483648", "", NULL, NULL, NULL, GX_I64, -2147483648LL),
    /* division, modulo */
    EI("x, y -> x / y", "i32,i32", "7", "-2", NULL, GX_I32, 7 / -2),
    EI("x, y -> x % y", "i32,i32", "-7", "2", NULL, GX_I32, -7 % 2),
    EI("x, y -> x / y", "i32,i32", "7", "0", NULL, GX_I32, 0),
    EI("x, y -> x % y", "i32,i32", "7", "0", NULL, GX_I32, 0),
    EI("x, y -> x / y", "i32,i32", "INT32_MIN", "-1", NULL, GX_I32, INT32_MIN),
    EI("x, y -> x % y", "i32,i32", "INT32_MIN", "-1", NULL, GX_I32, 0),
    EI("x, y -> x / y", "i64,i64", "INT64_MIN", "-1", NULL, GX_I64, INT64_MIN),
    EU("x, y -> x / y", "u64,u64", "5", "0", NULL, GX_U64, 0),
    EU("x, y -> x % y", "u32,u32", "5", "0", NULL, GX_U32, 0),
    EI("x, y -> x / y", "i8,i8", "-128", "-1", NULL, GX_I32, 128),
    /* shifts */
    EI("x, y -> x << y", "i32,i32", "1", "33", NULL, GX_I32, 2),
    EI("x, y -> x << y", "i32,i32", "1", "-1", NULL, GX_I32, INT32_MIN),
    EI("x, y -> x >> y", "i32,i32", "-8", "1", NULL, GX_I32, -4),
    EI("x, y -> x >> y", "i32,i32", "-1", "40", NULL, GX_I32, -1),
    EI("x, y -> x >> y", "i32,i32", "INT32_MIN", "31", NULL, GX_I32, -1),
    EI("x, y -> x << y", "i64,i32", "3", "64", NULL, GX_I64, 3),
    EU("x, y -> x >> y", "u32,i32", "0x80000000", "33", NULL, GX_U32, 0x40000000u),
    EU("x, y -> x << y", "u64,u64", "1", "63", NULL, GX_U64, 1ull << 63),
    EI("x, y -> x << y", "u8,i32", "255", "24", NULL, GX_I32, (int32_t)0xFF000000u),
    /* float -> int */
    EI("x -> i32(x)", "f64", "NAN", NULL, NULL, GX_I32, 0),
    EI("x -> i32(x)", "f64", "1e20", NULL, NULL, GX_I32, INT32_MAX),
    EI("x -> i32(x)", "f64", "-1e20", NULL, NULL, GX_I32, INT32_MIN),
    EI("x -> i32(x)", "f32", "-2.75f", NULL, NULL, GX_I32, -2),
    EI("x -> u8(x)", "f32", "-5", NULL, NULL, GX_U8, 0),
    EI("x -> u8(x)", "f32", "300", NULL, NULL, GX_U8, 255),
    EI("x -> i64(x)", "f64", "1e30", NULL, NULL, GX_I64, INT64_MAX),
    EI("x -> i64(x)", "f64", "-INFINITY", NULL, NULL, GX_I64, INT64_MIN),
    EU("x -> u64(x)", "f64", "1e30", NULL, NULL, GX_U64, UINT64_MAX),
    EU("x -> u64(x)", "f32", "NAN", NULL, NULL, GX_U64, 0),
    EI("x -> bool(x)", "f64", "NAN", NULL, NULL, GX_BOOL, 1),
    EI("x -> bool(x)", "f64", "0.0", NULL, NULL, GX_BOOL, 0),
    EI("x, y -> x ? y : 2", "f32,f32", "0.5f", "7.9f", NULL, GX_F32, 0), /* overwritten below */
    /* floats and math */
    EF("x, y -> sin(x)*sin(x) + cos(y)*cos(y)", "f32,f32", "0.3f", "0.3f", NULL, GX_F32, 1.0),
    EI("x -> x > 0.5f", "f32", "0.7f", NULL, NULL, GX_BOOL, 1),
    EF("x -> sqrt(x)", "i32", "2", NULL, NULL, GX_F64, 1.4142135623730951),
    EF("x -> x / 2.0", "i32", "7", NULL, NULL, GX_F64, 3.5),
    EI("x -> x / 2", "i32", "7", NULL, NULL, GX_I32, 3),
    EF("x -> f32(x) / 2", "i32", "7", NULL, NULL, GX_F32, 3.5),
    EF("x -> fmod(x, 2.5f)", "f32", "7", NULL, NULL, GX_F32, 2.0),
    EF("x -> pow(x, 2)", "f32", "3", NULL, NULL, GX_F32, 9.0),
    EF("x -> round(x)", "f64", "2.5", NULL, NULL, GX_F64, 3.0),
    EF("x -> trunc(x) + floor(x) + ceil(x)", "f64", "-1.5", NULL, NULL, GX_F64, -1.0 - 2.0 - 1.0),
    EF("x -> sign(x)", "f64", "-2.5", NULL, NULL, GX_F64, -1.0),
    EI("x -> sign(x)", "i32", "-7", NULL, NULL, GX_I32, -1),
    EI("x -> clamp(x, 0, 10)", "i32", "15", NULL, NULL, GX_I32, 10),
    EF("x -> clamp(x, 0, 1)", "f32", "-3", NULL, NULL, GX_F32, 0.0),
    EI("x -> isnan(x)", "f32", "NAN", NULL, NULL, GX_BOOL, 1),
    EI("x -> isinf(x) + 2 * isfinite(x)", "f64", "INFINITY", NULL, NULL, GX_I32, 1),
    EI("x -> isfinite(x)", "i32", "3", NULL, NULL, GX_BOOL, 1),
    EF("x -> abs(x) + max(x, -10.0f)", "f32", "-4", NULL, NULL, GX_F32, 0.0),
    EF("x, y -> atan2(x, y) + hypot(x, y)", "f64,f64", "3", "4", NULL, GX_F64, 0.64350110879328437 + 5.0),
    EF("x -> fma(x, x, 1) + exp2(x) + log2(8) + rsqrt(4)", "f32", "2", NULL, NULL, GX_F64, 5.0 + 4.0 + 3.0 + 0.5),
    EF("x -> copysign(3, x) + cbrt(27.0f)", "f32", "-1", NULL, NULL, GX_F32, 0.0),
    EF("x, y -> x > y ? x : y", "i32,f32", "3", "2.5f", NULL, GX_F32, 3.0),
    EF("x -> h * x", "f32", "3", NULL, NULL, GX_F64, 1.5),
    EF("-> 1e-3 + .5 + 2.5f", "", NULL, NULL, NULL, GX_F64, 1e-3 + .5 + 2.5),
    EF("x -> lgamma(x) + tgamma(x) + erf(0) + erfc(0)", "f64", "3", NULL, NULL, GX_F64,
       0.69314718055994529 + 2.0 + 1.0),
    /* user function */
    EI("i, j -> juliaset_pixel(i, j, n)", "i32,i32", "0", "0", NULL, GX_I32, 0), /* filled below */
    EI("i, j -> juliaset_pixel(i, j, n)", "i32,i32", "50", "50", NULL, GX_I32, 0),
    EI("i, j -> juliaset_pixel(i, j, n)", "i64,f32", "40", "61.9f", NULL, GX_I32, 0),
};
#define NEVAL ((int)(sizeof eval_cases / sizeof eval_cases[0]))

/* Expected values that need code rather than a constant expression. */
static ecase eval_case(int i)
{
    ecase c = eval_cases[i];
    if (strstr(c.text, "x ? y : 2"))
        c.f = 7.9f;
    if (strstr(c.text, "juliaset_pixel"))
        c.i = julia_ref(atoi(c.args[0]), (int)strtod(c.args[1], NULL), 100);
    if (strstr(c.text, "abs(x) + max"))
        c.f = 4.0f + -4.0f;
    if (strstr(c.text, "copysign"))
        c.f = -3.0f + 3.0f;
    return c;
}

/* Builds one C program that prints every case's value, one per line. */
static gx_status build_eval_program(gx__sbuf *b, const char *target)
{
    gx__sb_puts(b, lam_prelude(strcmp(target, "cuda") == 0 ? GX__TARGET_CUDA : GX__TARGET_C));
    gx__sb_puts(b, test_const_defs);
    add_user_source(b);
    bool c = strcmp(target, "c") == 0;
    if (c)
        gx__sb_puts(b, "#include <stdio.h>\n");
    for (int i = 0; i < NEVAL; i++) {
        ecase e = eval_case(i);
        gx_dtype at[3];
        int nt = parse_types(e.types, at);
        lam_lambda *l;
        GX__CHECK(compile_with(e.text, e.types, &l));
        if (c)
            gx__sb_printf(b, "static void case%d(void) {\n", i);
        else {
            gx__sb_printf(b, "extern \"C\" __global__ void case%d(%s *out", i, gx__dtype_ctype(lam_result_type(l)));
            for (int k = 0; k < nt; k++)
                gx__sb_printf(b, ", %s a%d", gx__dtype_ctype(at[k]), k);
            gx__sb_puts(b, ") {\n");
        }
        for (int k = 0; k < nt && c; k++)
            gx__sb_printf(b, "    const %s a%d = (%s)(%s);\n", gx__dtype_ctype(at[k]), k, gx__dtype_ctype(at[k]),
                          e.args[k]);
        gx__sb_puts(b, c ? "    printf(" : "    out[0] = ");
        gx_dtype r = lam_result_type(l);
        if (c)
            gx__sb_puts(b, r == GX_F32 || r == GX_F64  ? "\"%.17g\\n\", (double)"
                           : r >= GX_U8 && r <= GX_U64 ? "\"%llu\\n\", (unsigned long long)"
                                                       : "\"%lld\\n\", (long long)");
        gx_status s = lam_emit(l, test_param_c, test_const_c, b);
        lam_free(l);
        GX__CHECK(s);
        gx__sb_puts(b, c ? ");\n}\n" : ";\n}\n");
    }
    if (c) {
        gx__sb_puts(b, "int main(void) {\n");
        for (int i = 0; i < NEVAL; i++)
            gx__sb_printf(b, "    case%d();\n", i);
        gx__sb_puts(b, "    return 0;\n}\n");
    }
    return b->oom ? GX_ERR_OUT_OF_MEMORY : GX_OK;
}

static bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

static void check_eval_line(int i, const char *line)
{
    ecase e = eval_case(i);
    if (e.want == GX_F32 || e.want == GX_F64) {
        double v = strtod(line, NULL), tol = e.want == GX_F32 ? 1e-6 : 1e-12;
        if (!(fabs(v - e.f) <= tol * (1 + fabs(e.f))))
            GXT_FAIL_AT(__FILE__, __LINE__, "'%s' (%s): got %.17g, want %.17g", e.text, e.types, v, e.f);
    } else if (e.want == GX_U32 || e.want == GX_U64) {
        unsigned long long v = strtoull(line, NULL, 10);
        if (v != e.u)
            GXT_FAIL_AT(__FILE__, __LINE__, "'%s' (%s): got %llu, want %llu", e.text, e.types, v, e.u);
    } else {
        long long v = strtoll(line, NULL, 10);
        if (v != e.i)
            GXT_FAIL_AT(__FILE__, __LINE__, "'%s' (%s): got %lld, want %lld", e.text, e.types, v, e.i);
    }
}

/* Compiles with `cc` (warnings are errors) and runs; false + skip if no compiler. */
static void run_eval_with(const char *cc)
{
    char dir[] = "/tmp/gx_lambda_XXXXXX";
    if (!mkdtemp(dir)) {
        GXT_FAIL_AT(__FILE__, __LINE__, "mkdtemp failed");
        return;
    }
    char src[128], bin[128], cmd[512];
    snprintf(src, sizeof src, "%s/eval.c", dir);
    snprintf(bin, sizeof bin, "%s/eval", dir);
    gx__sbuf b = {0};
    gx_status s = build_eval_program(&b, "c");
    if (s != GX_OK || !write_file(src, b.p)) {
        GXT_FAIL_AT(__FILE__, __LINE__, "building the program failed: %s", gx_last_error());
        goto out;
    }
    snprintf(cmd, sizeof cmd, "%s -std=c11 -O1 -Wall -Wextra -Werror -o %s %s -lm 2>&1", cc, bin, src);
    FILE *p = popen(cmd, "r");
    char line[512];
    bool any = false;
    while (p && fgets(line, sizeof line, p)) {
        if (!any)
            fprintf(stderr, "%s failed on %s:\n", cc, src);
        any = true;
        fputs(line, stderr);
    }
    if (!p || pclose(p) != 0 || any) {
        GXT_FAIL_AT(__FILE__, __LINE__, "%s could not compile the emitted program (kept in %s)", cc, src);
        gx__sb_free(&b);
        return;
    }
    p = popen(bin, "r");
    int i = 0;
    while (p && fgets(line, sizeof line, p) && i < NEVAL)
        check_eval_line(i++, line);
    if (p)
        pclose(p);
    GXT_EQ_I64(i, NEVAL);
out:
    gx__sb_free(&b);
    unlink(src);
    unlink(bin);
    rmdir(dir);
}

static bool have_tool(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

GXT_TEST(lambda_eval_c)
{
    int ran = 0;
    const char *ccs[] = {"cc", "clang"};
    for (int k = 0; k < 2; k++)
        if (have_tool(ccs[k])) {
            run_eval_with(ccs[k]);
            ran++;
        }
    if (!ran)
        gxt_skip("no C compiler (cc, gcc, clang) on PATH");
}

/* ------------------------------------------------------------ bounded parameters */

/* lam_emit_ranged: with parameter bounds, integer operations may compute in 32-bit or
 * unsigned forms.  Each case is emitted twice, without and with the bounds, into one
 * program that evaluates both on values across the bounds (ends, 0, +-1, the 2^31 and
 * 2^32 edges, pseudo-random values) and counts the pairs that differ, and the values
 * outside the bound the emitter claimed for the result. */
typedef struct rcase {
    const char *text, *types;
    int64_t lo[2], hi[2];
} rcase;

#define P29 ((1LL << 29) - 1)
#define P31 (1LL << 31)
#define P32 (1LL << 32)
static const rcase range_cases[] = {
    {"x -> (x * x) % 1000", "i64", {0}, {P29}},
    {"x -> (x * x) % 1000 % 3 == 0", "i64", {0}, {P29}},
    {"x -> x * x / 7 + x", "i64", {0}, {P29}},
    {"x -> x + x - 5", "i64", {0}, {P29}},
    {"x -> (x - 1000) * 3", "i64", {0}, {P29}},
    {"x -> (x & 255) * (x >> 3) | 7", "i64", {0}, {P29}},
    {"x -> x ^ 12345", "i64", {0}, {P29}},
    {"x -> x * x * x", "i64", {0}, {P29}},
    {"x -> x % 7 - 3", "i64", {0}, {P29}},
    {"x -> x / 3 < 100", "i64", {0}, {P29}},
    {"x -> abs(x - 500000) + sign(x - 7)", "i64", {0}, {P29}},
    {"x -> min(x, 1000) * max(x, 7)", "i64", {0}, {P29}},
    {"x -> clamp(x, 10, 1000) % 11", "i64", {0}, {P29}},
    {"x -> x > 5 ? x % 3 : x * 2", "i64", {0}, {P29}},
    {"x -> -x % 5 + ~x & 0xff", "i64", {0}, {P29}},
    {"x -> u32(x) * u32(x) + i32(x) * 3", "i64", {0}, {P29}},
    {"x -> (x << 3) + (x * 3 >> 1) + (x << 40)", "i64", {0}, {P29}},
    {"x -> x * x", "i64", {-P31}, {P31 - 1}},
    {"x -> x * x % 1000 + x % 3 + x / 3", "i64", {-P31}, {P31 - 1}},
    {"x -> (x + 1) * (x - 1) < 0", "i64", {-P31}, {P31 - 1}},
    {"x -> x * x", "i64", {0}, {P32 - 1}},
    {"x -> x * x % 1000 + (x >> 31)", "i64", {0}, {P32 - 1}},
    {"x -> (x + x) - 4294967295 + (x * 2 == 2)", "i64", {0}, {P32 - 1}},
    {"x, y -> x * y % 97 + (x - y) / 3", "i64,i64", {0, 0}, {999, 999}},
    {"x, y -> x % (y + 1) + x / (y + 1) + x % y + x / y", "i64,i64", {0, 0}, {999, 999}},
    {"x, y -> (x < y) + (x == y) * 2 + (x - y) % 7", "i64,i64", {0, -500}, {999, 499}},
    {"x -> x * x % 1000 + (x - 1) / 3", "u64", {0}, {P31 - 1}},
    {"x -> x * x + x % 1000 + x / 7", "i32", {0}, {(1 << 20) - 1}},
    {"x -> x * 2 + x % 1000 + (x + x) + x * 4", "i64", {(1LL << 62) - 1000}, {1LL << 62}},
    {"x -> x * x % 7", "u8", {0}, {255}},
};
#define NRANGE ((int)(sizeof range_cases / sizeof range_cases[0]))

/* Values of [lo, hi] to try: the edges and pseudo-random ones. */
static int range_values(int64_t lo, int64_t hi, int64_t *v, int max)
{
    const int64_t edges[] = {lo,      lo + 1, hi - 1, hi,  lo / 2 + hi / 2, 0, 1, -1, INT32_MAX, P31,
                             P32 - 1, P32,    999,    1000};
    int n = 0;
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        if (edges[i] >= lo && edges[i] <= hi && n < max)
            v[n++] = edges[i];
    uint64_t z = 0x9E3779B97F4A7C15ull ^ (uint64_t)hi;
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    while (n < max) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        v[n++] = (int64_t)((uint64_t)lo + (span ? (z >> 11) % span : z));
    }
    return n;
}

static void emit_values(gx__sbuf *b, const char *name, const int64_t *v, int n)
{
    gx__sb_printf(b, "static const long long %s[%d] = {", name, n);
    for (int i = 0; i < n; i++)
        gx__sb_printf(b, "%s%lldLL", i ? ", " : "", (long long)v[i] == INT64_MIN ? 0 : (long long)v[i]);
    gx__sb_puts(b, "};\n");
}

/* One function pair and a loop over the value grid per case; prints
 * "<evaluated> <differing> <outside the result bound> <narrowed ops>" per case. */
static gx_status build_range_program(gx__sbuf *b, int *narrowed)
{
    gx__sb_puts(b, lam_prelude(GX__TARGET_C));
    gx__sb_puts(b, test_const_defs);
    gx__sb_puts(b, "#include <stdio.h>\n");
    *narrowed = 0;
    for (int i = 0; i < NRANGE; i++) {
        const rcase *c = &range_cases[i];
        gx_dtype at[3];
        int np = parse_types(c->types, at);
        lam_lambda *l;
        GX__CHECK(compile_with(c->text, c->types, &l));
        const char *rt = gx__dtype_ctype(lam_result_type(l));
        lam_range pr[2] = {{true, c->lo[0], c->hi[0]}, {true, c->lo[1], c->hi[1]}}, res;
        for (int k = 0; k < np; k++) {
            int64_t v[40];
            char nm[32];
            snprintf(nm, sizeof nm, "v%d_%d", i, k);
            emit_values(b, nm, v, range_values(c->lo[k], c->hi[k], v, np == 1 ? 40 : 24));
        }
        for (int f = 0; f < 2; f++) {
            gx__sb_printf(b, "static %s f%d_%d(", rt, i, f);
            for (int k = 0; k < np; k++)
                gx__sb_printf(b, "%s%s a%d", k ? ", " : "", gx__dtype_ctype(at[k]), k);
            gx__sb_puts(b, ") { return ");
            size_t at0 = b->len;
            gx_status s = lam_emit_ranged(l, test_param_c, f ? pr : NULL, test_const_c, b, &res);
            if (s != GX_OK) {
                lam_free(l);
                return s;
            }
            if (f && strstr(b->p + at0, "(uint32_t)"))
                (*narrowed)++;
            gx__sb_puts(b, "; }\n");
        }
        lam_free(l);
        gx__sb_printf(b, "static void case%d(void) {\n  long long n = 0, bad = 0, out = 0;\n", i);
        int n1 = np == 1 ? 40 : 24;
        gx__sb_printf(b, "  for (int i = 0; i < %d; i++)\n  for (int j = 0; j < %d; j++) {\n", n1, np == 2 ? 24 : 1);
        const char *args = np == 2 ? "v%d_0[i], v%d_1[j]" : "v%d_0[i]";
        gx__sb_printf(b, "    %s p = f%d_0(", rt, i);
        gx__sb_printf(b, args, i, i);
        gx__sb_printf(b, "), r = f%d_1(", i);
        gx__sb_printf(b, args, i, i);
        gx__sb_puts(b, ");\n    n++;\n    bad += p != r;\n");
        if (res.ok)
            gx__sb_printf(b, "    out += (long long)r < %lldLL || (long long)r > %lldLL;\n", (long long)res.lo,
                          (long long)res.hi);
        gx__sb_puts(b, "  }\n  printf(\"%lld %lld %lld\\n\", n, bad, out);\n}\n");
    }
    gx__sb_puts(b, "int main(void) {\n");
    for (int i = 0; i < NRANGE; i++)
        gx__sb_printf(b, "    case%d();\n", i);
    gx__sb_puts(b, "    return 0;\n}\n");
    return b->oom ? GX_ERR_OUT_OF_MEMORY : GX_OK;
}

GXT_TEST(lambda_ranged_emit_matches_plain)
{
    if (!have_tool("cc")) {
        gxt_skip("no C compiler (cc) on PATH");
        return;
    }
    char dir[] = "/tmp/gx_lamrange_XXXXXX";
    GXT_CHECK(mkdtemp(dir) != NULL);
    char src[128], bin[128], cmd[512], line[256];
    snprintf(src, sizeof src, "%s/r.c", dir);
    snprintf(bin, sizeof bin, "%s/r", dir);
    gx__sbuf b = {0};
    int narrowed = 0;
    GXT_OK(build_range_program(&b, &narrowed));
    GXT_CHECK(write_file(src, b.p));
    gx__sb_free(&b);
    /* -fwrapv like the CPU backend; unsigned compares against constants are expected. */
    snprintf(cmd, sizeof cmd, "cc -std=c11 -O2 -fwrapv -Wall -Wextra -Wno-type-limits -Werror -o %s %s -lm 2>&1", bin,
             src);
    FILE *p = popen(cmd, "r");
    bool any = false;
    while (p && fgets(line, sizeof line, p))
        any = true, fputs(line, stderr);
    GXT_CHECK(p && pclose(p) == 0 && !any);
    p = popen(bin, "r");
    int i = 0;
    long long total = 0;
    while (p && fgets(line, sizeof line, p) && i < NRANGE) {
        long long n = 0, bad = -1, out = -1;
        if (sscanf(line, "%lld %lld %lld", &n, &bad, &out) != 3)
            break;
        if (bad || out)
            GXT_FAIL_AT(__FILE__, __LINE__,
                        "'%s' on %s in [%lld, %lld]: %lld of %lld values differ, %lld outside the result bound",
                        range_cases[i].text, range_cases[i].types, (long long)range_cases[i].lo[0],
                        (long long)range_cases[i].hi[0], bad, n, out);
        total += n;
        i++;
    }
    if (p)
        pclose(p);
    GXT_EQ_I64(i, NRANGE);
    GXT_CHECK(total >= 40 * NRANGE / 2);
    GXT_CHECK(narrowed >= NRANGE / 2); /* the bounds did change most cases' code */
    unlink(src);
    unlink(bin);
    rmdir(dir);
}

GXT_TEST(lambda_ranged_emit_shape)
{
    lam_lambda *l;
    GXT_OK(compile_with("i -> (i * i) % 1000 % 3 == 0", "i64", &l));
    gx__sbuf b = {0};
    lam_range r29 = {true, 0, P29}, res;
    GXT_OK(lam_emit_ranged(l, test_param_c, &r29, test_const_c, &b, &res));
    /* one 32x32->64 multiply, an unsigned 64-bit remainder cut to 32 bits, a 32-bit one */
    GXT_CHECK(strstr(b.p, "gx_mul_i64") == NULL && strstr(b.p, "gx_mod_i64") == NULL);
    GXT_CHECK(strstr(b.p, "(uint64_t)(uint32_t)") != NULL);
    GXT_CHECK(res.ok && res.lo == 0 && res.hi == 1);
    gx__sb_free(&b);
    GXT_OK(lam_emit_ranged(l, test_param_c, NULL, test_const_c, &b, &res));
    GXT_CHECK(strstr(b.p, "gx_mul_i64") != NULL && strstr(b.p, "gx_mod_i64") != NULL && !res.ok);
    gx__sb_free(&b);
    /* i < 2^32: i * i may pass INT64_MAX and wrap, so it stays a 64-bit multiply */
    lam_range r32 = {true, 0, P32 - 1};
    GXT_OK(lam_emit_ranged(l, test_param_c, &r32, test_const_c, &b, NULL));
    GXT_CHECK(strstr(b.p, "gx_mul_i64") != NULL && strstr(b.p, "gx_mod_i64") != NULL);
    gx__sb_free(&b);
    lam_free(l);
}

/* ------------------------------------------------------------ emitted text shape */

GXT_TEST(lambda_emit_shape)
{
    lam_lambda *l;
    GXT_OK(compile_with("x, y -> sin(x) + y / 2", "f32,i32", &l));
    gx__sbuf b = {0};
    GXT_OK(lam_emit(l, test_param_c, test_const_c, &b));
    GXT_CHECK(strstr(b.p, "((float)gx_sin_f32(((float)(a0))))") != NULL);
    GXT_CHECK(strstr(b.p, "gx_div_i32(((int32_t)(a1)), ((int32_t)2))") != NULL);
    gx__sb_free(&b);
    lam_free(l);
    GXT_OK(compile_with("x -> i16(x)", "f64", &l));
    GXT_OK(lam_emit(l, test_param_c, test_const_c, &b));
    GXT_CHECK(strstr(b.p, "gx_cvt_f64_i16") != NULL);
    GXT_STATUS(lam_emit(l, NULL, NULL, &b), GX_ERR_INVALID_ARGUMENT);
    gx__sb_free(&b);
    lam_free(l);
    GXT_CHECK(strstr(lam_prelude(GX__TARGET_C), "#define GXF static inline") != NULL);
    GXT_CHECK(strstr(lam_prelude(GX__TARGET_C), "#include <math.h>") != NULL);
    GXT_CHECK(strstr(lam_prelude(GX__TARGET_CUDA), "#define GXF static __device__ __forceinline__") != NULL);
    GXT_CHECK(strstr(lam_prelude(GX__TARGET_CUDA), "#include") == NULL);
}

/* Every byte of the preludes is part of every kernel's cache key.  Their text lives
 * in src/jit/prelude/ and is embedded at build time; this pins it, so an editor's
 * stray newline or a reordered piece cannot slip through.  A deliberate change to
 * the prelude updates these digests (sha256 of lam_prelude's text, as printed). */
static void expect_prelude_digest(gx__target t, const char *want)
{
    const char *p = lam_prelude(t);
    char got[65];
    cache_sha256_hex(p, strlen(p), got);
    if (strcmp(got, want) != 0)
        GXT_FAIL_AT(__FILE__, __LINE__, "the %s prelude changed: sha256 %s, pinned %s", gx__target_name(t), got, want);
}

GXT_TEST(lambda_prelude_bytes_pinned)
{
    expect_prelude_digest(GX__TARGET_C, "8cb2b64e86ad60df1b48f80275ec1f3c2a02eccca695fdf70c1fd8091643dcfc");
    expect_prelude_digest(GX__TARGET_CUDA, "b9a9cc36d864d8b53b4446be99071ee33134f378d3ed56921ea578d152c1fbfa");
}

/* ------------------------------------------------------------ NVRTC */

typedef int (*nvrtc_create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*nvrtc_compile_fn)(void *, int, const char *const *);
typedef int (*nvrtc_logsize_fn)(void *, size_t *);
typedef int (*nvrtc_log_fn)(void *, char *);
typedef int (*nvrtc_destroy_fn)(void **);

GXT_TEST(lambda_nvrtc_prelude)
{
    static const char *const libs[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                       "/usr/local/cuda/lib64/libnvrtc.so"};
    /* libnvrtc's own static initializer leaks a 72 KiB pool that memcheck reports as
     * "definitely lost"; under valgrind (its preload is in LD_PRELOAD) skip NVRTC. */
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "vgpreload")) {
        gxt_skip("running under valgrind (libnvrtc's static initializer leaks a pool memcheck reports)");
        return;
    }
    void *h = NULL;
    for (size_t i = 0; i < sizeof libs / sizeof libs[0] && !h; i++)
        h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        gxt_skip("libnvrtc not found (it is the CUDA toolkit's NVRTC; nothing else needs a GPU here)");
        return;
    }
    nvrtc_create_fn create = (nvrtc_create_fn)dlsym(h, "nvrtcCreateProgram");
    nvrtc_compile_fn compile = (nvrtc_compile_fn)dlsym(h, "nvrtcCompileProgram");
    nvrtc_logsize_fn logsize = (nvrtc_logsize_fn)dlsym(h, "nvrtcGetProgramLogSize");
    nvrtc_log_fn getlog = (nvrtc_log_fn)dlsym(h, "nvrtcGetProgramLog");
    nvrtc_destroy_fn destroy = (nvrtc_destroy_fn)dlsym(h, "nvrtcDestroyProgram");
    if (!create || !compile || !logsize || !getlog || !destroy) {
        GXT_FAIL_AT(__FILE__, __LINE__, "libnvrtc lacks the expected entry points");
        dlclose(h);
        return;
    }
    gx__sbuf b = {0};
    gx_status s = build_eval_program(&b, "cuda");
    GXT_CHECK(s == GX_OK);
    void *prog = NULL;
    const char *opts[] = {"--gpu-architecture=compute_90", "--std=c++17"};
    int r = create(&prog, b.p, "gx_lambda_test.cu", 0, NULL, NULL);
    GXT_CHECK(r == 0);
    if (r == 0) {
        r = compile(prog, 2, opts);
        size_t n = 0;
        logsize(prog, &n);
        char *log = calloc(1, n + 1);
        if (log && n)
            getlog(prog, log);
        if (r != 0)
            GXT_FAIL_AT(__FILE__, __LINE__, "NVRTC rejected the CUDA prelude + lambdas:\n%s", log ? log : "");
        else if (log && strstr(log, "warning"))
            GXT_FAIL_AT(__FILE__, __LINE__, "NVRTC warned:\n%s", log);
        free(log);
        destroy(&prog);
    }
    gx__sb_free(&b);
    dlclose(h);
}

/* ------------------------------------------------------------ user functions */

GXT_TEST(lambda_scan_julia)
{
    lam_fn_sig sigs[8];
    size_t offs[8];
    int n = 0;
    GXT_OK(lam_scan_functions(julia_src, sigs, offs, 8, &n));
    GXT_EQ_I64(n, 2);
    if (n != 2)
        return;
    GXT_CHECK(strcmp(sigs[0].name, "cnorm1") == 0);
    GXT_CHECK(!sigs[0].callable);
    GXT_EQ_I64(sigs[0].nparams, 1);
    GXT_CHECK(strncmp(julia_src + offs[0], "float cnorm1", 12) == 0);
    GXT_CHECK(strcmp(sigs[1].name, "juliaset_pixel") == 0);
    GXT_CHECK(sigs[1].callable);
    GXT_EQ_I64(sigs[1].ret, GX_I32);
    GXT_EQ_I64(sigs[1].nparams, 3);
    GXT_EQ_I64(sigs[1].params[2], GX_I32);
    GXT_CHECK(strncmp(julia_src + offs[1], "int juliaset_pixel", 18) == 0);
}

GXT_TEST(lambda_scan_types)
{
    const char *src = "#include <something.h>\n"
                      "#define MACRO(x) { x }\n"
                      "typedef struct { float a, b; } pair;   /* a struct, not a function */\n"
                      "struct node { int v; struct node *next; };\n"
                      "static const int table[3] = {1, 2, 3};\n"
                      "int proto(int x);\n"
                      "const char *s = \"int fake(int x) { }\";\n"
                      "char c = '{';\n"
                      "unsigned long long f1(signed char a, unsigned short b, long c, unsigned d, _Bool e, double f)\n"
                      "{ return 0; }\n"
                      "int8_t f2(uint8_t a, int16_t b, uint16_t c, int64_t d, uint32_t e, bool g) { return a; }\n"
                      "void f3(void) { }\n"
                      "float f4() { return 1.0f; }\n"
                      "int f5(int *p, pair q) { return *p; }\n"
                      "short int f6(long long int a, const float b, unsigned int) { return 0; }\n"
                      "char f7(char c) { return c; }\n";
    lam_fn_sig sigs[16];
    size_t offs[16];
    int n = 0;
    GXT_OK(lam_scan_functions(src, sigs, offs, 16, &n));
    GXT_EQ_I64(n, 7);
    if (n != 7)
        return;
    GXT_CHECK(strcmp(sigs[0].name, "f1") == 0 && sigs[0].callable && sigs[0].ret == GX_U64);
    GXT_CHECK(sigs[0].nparams == 6 && sigs[0].params[0] == GX_I8 && sigs[0].params[1] == GX_U16 &&
              sigs[0].params[2] == GX_I64 && sigs[0].params[3] == GX_U32 && sigs[0].params[4] == GX_BOOL &&
              sigs[0].params[5] == GX_F64);
    GXT_CHECK(sigs[1].callable && sigs[1].ret == GX_I8 && sigs[1].params[0] == GX_U8 && sigs[1].params[1] == GX_I16 &&
              sigs[1].params[2] == GX_U16 && sigs[1].params[3] == GX_I64 && sigs[1].params[4] == GX_U32 &&
              sigs[1].params[5] == GX_BOOL);
    GXT_CHECK(strcmp(sigs[2].name, "f3") == 0 && !sigs[2].callable && sigs[2].nparams == 0);
    GXT_CHECK(strcmp(sigs[3].name, "f4") == 0 && sigs[3].callable && sigs[3].nparams == 0 && sigs[3].ret == GX_F32);
    GXT_CHECK(strcmp(sigs[4].name, "f5") == 0 && !sigs[4].callable && sigs[4].nparams == 2);
    GXT_CHECK(strcmp(sigs[5].name, "f6") == 0 && sigs[5].callable && sigs[5].ret == GX_I16 &&
              sigs[5].params[0] == GX_I64 && sigs[5].params[1] == GX_F32 && sigs[5].params[2] == GX_U32);
    GXT_CHECK(strcmp(sigs[6].name, "f7") == 0 && !sigs[6].callable);
    GXT_CHECK(strncmp(src + offs[0], "unsigned long long f1", 21) == 0);
    GXT_CHECK(strncmp(src + offs[6], "char f7", 7) == 0);
}

GXT_TEST(lambda_scan_errors)
{
    lam_fn_sig sigs[4];
    int n = 0;
    GXT_STATUS(lam_scan_functions("int f(int x) {\n return x;\n", sigs, NULL, 4, &n), GX_ERR_SYNTAX);
    GXT_MSG_HAS("line 1");
    GXT_STATUS(lam_scan_functions("int g(void) { return 0; }\n/* open", sigs, NULL, 4, &n), GX_ERR_SYNTAX);
    GXT_MSG_HAS("line 2");
    GXT_STATUS(lam_scan_functions("\n\nint f(int x { }", sigs, NULL, 4, &n), GX_ERR_SYNTAX);
    GXT_MSG_HAS("line 3");
    GXT_STATUS(lam_scan_functions("int f() { }\n}\n", sigs, NULL, 4, &n), GX_ERR_SYNTAX);
    GXT_MSG_HAS("line 2");
    GXT_STATUS(lam_scan_functions("const char *s = \"abc\n", sigs, NULL, 4, &n), GX_ERR_SYNTAX);
    GXT_STATUS(lam_scan_functions("int a(){}\nint b(){}\nint c(){}", sigs, NULL, 2, &n), GX_ERR_INVALID_ARGUMENT);
    GXT_OK(lam_scan_functions("", sigs, NULL, 4, &n));
    GXT_EQ_I64(n, 0);
    GXT_STATUS(lam_scan_functions(NULL, sigs, NULL, 4, &n), GX_ERR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------ robustness */

static void compile_any(const char *text)
{
    gx_dtype at[2] = {GX_F32, GX_I32};
    lam_fn_sig sig = {"fn", GX_F32, 2, {GX_F32, GX_I32}, true};
    lam_env env = {text, 2, at, test_consts, 2, &sig, 1, NULL, 0};
    lam_lambda *l = NULL;
    gx_clear_error();
    gx_status s = lam_compile(&env, &l);
    if (s == GX_OK) {
        gx__sbuf b = {0};
        if (lam_emit(l, test_param_c, test_const_c, &b) != GX_OK)
            GXT_FAIL_AT(__FILE__, __LINE__, "emit failed for '%s'", text);
        gx__sb_free(&b);
        lam_free(l);
    } else if (gx_last_error()[0] == 0 || l) {
        GXT_FAIL_AT(__FILE__, __LINE__, "'%s': error without a message", text);
    }
    int np;
    (void)lam_parse_arity(text, &np);
}

GXT_TEST(lambda_robust_garbage)
{
    static const char alpha[] = "xy n h fn sin ( ) , -> + - * / % << >> < > = ! ~ & | ^ ? : 0 1 9 . e f u l 0x true";
    char buf[96];
    for (int it = 0; it < 3000; it++) {
        int len = (int)(gxt_rand_u64() % (sizeof buf - 1));
        for (int k = 0; k < len; k++) {
            uint64_t r = gxt_rand_u64();
            buf[k] = (r & 7) == 0 ? (char)(1 + (r >> 8) % 255) : alpha[(r >> 8) % (sizeof alpha - 1)];
        }
        buf[len] = 0;
        if (it % 2 == 0 && len > 8)
            memcpy(buf, "x, y -> ", 8);
        compile_any(buf);
    }
    compile_any("");
    compile_any("->");
    compile_any("x, y ->");
    compile_any("\x01\x02\xff");
}

GXT_TEST(lambda_robust_limits)
{
    enum { N = 5000 };
    char *s = malloc(4 * N + 64);
    GXT_CHECK(s != NULL);
    if (!s)
        return;
    lam_lambda *l = NULL;
    /* deep parentheses */
    strcpy(s, "x, y -> ");
    size_t k = strlen(s);
    for (int i = 0; i < N; i++)
        s[k++] = '(';
    s[k++] = 'x';
    for (int i = 0; i < N; i++)
        s[k++] = ')';
    s[k] = 0;
    GXT_STATUS(compile_with(s, "f32,f32", &l), GX_ERR_SYNTAX);
    GXT_MSG_HAS("nests too deeply");
    /* deep unary chains */
    k = 8;
    for (int i = 0; i < N; i++)
        s[k++] = '-';
    s[k++] = 'x';
    s[k] = 0;
    GXT_STATUS(compile_with(s, "f32,f32", &l), GX_ERR_SYNTAX);
    /* very long flat chains: bounded tree height */
    k = 8;
    for (int i = 0; i < N; i++) {
        s[k++] = 'x';
        s[k++] = '+';
    }
    s[k++] = 'y';
    s[k] = 0;
    GXT_STATUS(compile_with(s, "f32,f32", &l), GX_ERR_SYNTAX);
    /* a long but reasonable chain works */
    k = 8;
    for (int i = 0; i < 200; i++) {
        s[k++] = 'x';
        s[k++] = '+';
    }
    s[k++] = 'y';
    s[k] = 0;
    GXT_OK(compile_with(s, "f32,f32", &l));
    lam_free(l);
    /* long text: the caret window still points at the error */
    k = 8;
    for (int i = 0; i < 1000; i++) {
        s[k++] = 'x';
        s[k++] = '+';
    }
    s[k++] = '@';
    s[k] = 0;
    GXT_STATUS(compile_with(s, "f32,f32", &l), GX_ERR_SYNTAX);
    GXT_MSG_HAS("'@'");
    free(s);
    GXT_OK(compile_with("x, y -> 1\0 + junk", "f32,f32", &l)); /* the text ends at NUL */
    lam_free(l);
}

/* gx__fmt / gx__sb_printf format %s %d %u %c %zu %ld %lu %lld %llu %% themselves
 * (kernel generation calls them on every operation): the same text as snprintf,
 * extremes included; other formats fall back to vsnprintf; truncation as snprintf. */
GXT_TEST(string_builder_formats_like_snprintf)
{
    char want[512], got[512];
    const long long ll[] = {0, 1, -1, 42, -987654321, LLONG_MAX, LLONG_MIN};
    for (size_t i = 0; i < sizeof ll / sizeof ll[0]; i++) {
        int iv = (int)(ll[i] % 100000), n;
        snprintf(want, sizeof want, "a%db%uc%zu|%ld|%lu|%lld|%llu|%%|%c|%s|x", iv, (unsigned)iv, (size_t)ll[i] * 3,
                 (long)ll[i], (unsigned long)ll[i], ll[i], (unsigned long long)ll[i], 'q', "str");
        n = gx__fmt(got, sizeof got, "a%db%uc%zu|%ld|%lu|%lld|%llu|%%|%c|%s|x", iv, (unsigned)iv, (size_t)ll[i] * 3,
                    (long)ll[i], (unsigned long)ll[i], ll[i], (unsigned long long)ll[i], 'q', "str");
        GXT_CHECK(strcmp(got, want) == 0);
        GXT_EQ_I64(n, (int64_t)strlen(want));
        gx__sbuf b = {0};
        gx__sb_puts(&b, "<");
        gx__sb_printf(&b, "a%db%uc%zu|%ld|%lu|%lld|%llu|%%|%c|%s|x", iv, (unsigned)iv, (size_t)ll[i] * 3, (long)ll[i],
                      (unsigned long)ll[i], ll[i], (unsigned long long)ll[i], 'q', "str");
        GXT_CHECK(!b.oom && b.p[0] == '<' && strcmp(b.p + 1, want) == 0 && b.len == strlen(want) + 1);
        gx__sb_free(&b);
    }
    /* Formats the fast path leaves alone. */
    snprintf(want, sizeof want, "%5d|%-3s|%.3f|%x|%08.2g", 7, "ab", 3.14159, 255u, 1e-7);
    gx__fmt(got, sizeof got, "%5d|%-3s|%.3f|%x|%08.2g", 7, "ab", 3.14159, 255u, 1e-7);
    GXT_CHECK(strcmp(got, want) == 0);
    gx__sbuf b = {0};
    gx__sb_printf(&b, "%5d|%-3s|%.3f|%x|%08.2g", 7, "ab", 3.14159, 255u, 1e-7);
    GXT_CHECK(b.p && strcmp(b.p, want) == 0);
    gx__sb_free(&b);
    /* Long arguments grow the buffer. */
    char big[3000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = 0;
    gx__sb_printf(&b, "[%s|%d]", big, 5);
    GXT_CHECK(b.p && b.len == sizeof big - 1 + 4 && b.p[0] == '[' && strcmp(b.p + b.len - 3, "|5]") == 0);
    gx__sb_free(&b);
    /* Truncation: NUL-terminated within the buffer, a prefix of the full text. */
    char small[8];
    gx__fmt(small, sizeof small, "%s-%d", "abcdef", 123);
    GXT_CHECK(strlen(small) < sizeof small && strncmp(small, "abcdef-123", strlen(small)) == 0);
}

/* "x, y -> " + k copies of `open` + `mid` + k copies of `close`, in a new buffer. */
static char *nest_text(const char *open, const char *mid, const char *close, int k)
{
    size_t lo = strlen(open), lc = strlen(close), lm = strlen(mid);
    char *s = malloc(16 + (size_t)k * (lo + lc) + lm);
    if (!s)
        return NULL;
    memcpy(s, "x, y -> ", 8);
    size_t at = 8;
    for (int i = 0; i < k; i++, at += lo)
        memcpy(s + at, open, lo);
    memcpy(s + at, mid, lm);
    at += lm;
    for (int i = 0; i < k; i++, at += lc)
        memcpy(s + at, close, lc);
    s[at] = 0;
    return s;
}

/* The nesting limit is the one the message states, in the user's terms: each
 * parenthesis, call, unary operator or ?: counts one level (binary operands count
 * none), the deepest allowed compiles, and one more fails naming the limit. */
GXT_TEST(lambda_nesting_limit_matches_message)
{
    static const struct {
        const char *open, *mid, *close;
    } shapes[] = {
        {"(", "x", ")"},           /* parentheses */
        {"-", "x", ""},            /* unary operators */
        {"sin(", "x", ")"},        /* calls */
        {"x + (", "y", ")"},       /* parentheses under binary operators */
        {"x > y ? x : ", "y", ""}, /* ?: branches */
    };
    const int max = LAM__MAX_NEST;
    char want[96];
    snprintf(want, sizeof want, "at most %d levels of parentheses, calls, unary operators and ?:", max);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int k = max - 1; k <= max + 1; k++) {
            char *s = nest_text(shapes[i].open, shapes[i].mid, shapes[i].close, k);
            GXT_CHECK(s != NULL);
            if (!s)
                return;
            lam_lambda *l = NULL;
            gx_clear_error();
            gx_status st = compile_with(s, "f32,f32", &l);
            if (k <= max && st != GX_OK)
                GXT_FAIL_AT(__FILE__, __LINE__, "%d x '%s': %s", k, shapes[i].open, gx_last_error());
            if (k > max) {
                GXT_CHECK(st == GX_ERR_SYNTAX);
                GXT_MSG_HAS("nests too deeply");
                GXT_MSG_HAS(want);
            }
            lam_free(l);
            free(s);
        }
    }
}

/* lam_cost: the CPU grain's weight of a lambda (gx/jit/lambda.h) -- plain arithmetic
 * counts as one element, an integer division or remainder makes the loop scalar (16
 * more), each transcendental call 4, and float division nothing extra. */
GXT_TEST(lambda_cost_weights)
{
    static const struct {
        const char *text, *types;
        int cost;
    } cases[] = {
        {"x -> x", "f32", 1},
        {"x, y -> 2*x + y", "f32,f32", 1},
        {"x -> x / 3", "f32", 1},
        {"i -> (i ^ (i >> 7)) * 2654435761 % 1000", "i64", 16},
        {"i -> i / 7 + i % 7", "i32", 16},
        {"x -> sin(x)*sin(x) + cos(x)*cos(x)", "f32", 17},
        {"x -> exp(x) + 1", "f64", 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lam_lambda *l = NULL;
        GXT_OK(compile_with(cases[i].text, cases[i].types, &l));
        if (l && lam_cost(l) != cases[i].cost) {
            GXT_CHECK(!"lam_cost");
            fprintf(stderr, "  %s: cost %d, want %d\n", cases[i].text, lam_cost(l), cases[i].cost);
        }
        lam_free(l);
    }
    GXT_EQ_I64(lam_cost(NULL), 1);
}
