/* dtype.c -- element types: sizes, names, C spellings, conversions. */
#include "core/gx_internal.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name, *ctype;
    size_t size;
    bool supported;
} gx__dt[GX_DTYPE_COUNT] = {
    [GX_BOOL] = {"bool", "bool", 1, true},
    [GX_I8] = {"i8", "int8_t", 1, true},
    [GX_I16] = {"i16", "int16_t", 2, true},
    [GX_I32] = {"i32", "int32_t", 4, true},
    [GX_I64] = {"i64", "int64_t", 8, true},
    [GX_U8] = {"u8", "uint8_t", 1, true},
    [GX_U16] = {"u16", "uint16_t", 2, true},
    [GX_U32] = {"u32", "uint32_t", 4, true},
    [GX_U64] = {"u64", "uint64_t", 8, true},
    /* Halves: 16-bit structs in generated code (the prelude's body_half.h); kernels
     * load them as f32 and round when they store (gx__dtype_load / gx__dtype_store). */
    [GX_F16] = {"f16", "gx_f16", 2, true},
    [GX_BF16] = {"bf16", "gx_bf16", 2, true},
    [GX_F32] = {"f32", "float", 4, true},
    [GX_F64] = {"f64", "double", 8, true},
    /* Complex: {re, im} pairs, the prelude's cf32 / cf64. */
    [GX_C64] = {"c64", "cf32", 8, true},
    [GX_C128] = {"c128", "cf64", 16, true},
};

/* GX_DTYPE_DEFAULT (0) is an options value, not an element type. */
static bool dt_valid(gx_dtype t) { return t > GX_DTYPE_DEFAULT && t < GX_DTYPE_COUNT; }

size_t gx_dtype_size(gx_dtype t) { return dt_valid(t) ? gx__dt[t].size : 0; }
const char *gx_dtype_name(gx_dtype t) { return dt_valid(t) ? gx__dt[t].name : t == GX_DTYPE_DEFAULT ? "default" : "?"; }
const char *gx__dtype_ctype(gx_dtype t) { return dt_valid(t) ? gx__dt[t].ctype : "void"; }
bool gx__dtype_supported(gx_dtype t) { return dt_valid(t) && gx__dt[t].supported; }
bool gx__dtype_is_float(gx_dtype t) { return t == GX_F32 || t == GX_F64 || t == GX_F16 || t == GX_BF16; }
bool gx__dtype_is_signed(gx_dtype t) { return (t >= GX_I8 && t <= GX_I64) || gx__dtype_is_float(t); }
bool gx__dtype_is_int(gx_dtype t) { return t >= GX_I8 && t <= GX_U64; }
bool gx__dtype_is_complex(gx_dtype t) { return t == GX_C64 || t == GX_C128; }
bool gx__dtype_is_half(gx_dtype t) { return t == GX_F16 || t == GX_BF16; }

/* The C type a kernel computes a loaded element in: halves compute in f32. */
const char *gx__dtype_vtype(gx_dtype t) { return gx__dtype_is_half(t) ? "float" : gx__dtype_ctype(t); }

/* The text of an element load as its compute type: `expr` is an lvalue of the
 * storage type. */
const char *gx__dtype_load(gx_dtype t, const char *expr, char *buf, size_t n)
{
    if (!gx__dtype_is_half(t))
        return expr;
    gx__fmt(buf, n, "%s(%s)", t == GX_F16 ? "gx_ld_f16" : "gx_ld_bf16", expr);
    return buf;
}

/* The function or cast that turns a computed value into the stored type; "" for
 * complex (a struct cannot be cast in C). */
const char *gx__dtype_store(gx_dtype t)
{
    static const char *casts[GX_DTYPE_COUNT] = {
        [GX_BOOL] = "(bool)",    [GX_I8] = "(int8_t)",  [GX_I16] = "(int16_t)",  [GX_I32] = "(int32_t)",
        [GX_I64] = "(int64_t)",  [GX_U8] = "(uint8_t)", [GX_U16] = "(uint16_t)", [GX_U32] = "(uint32_t)",
        [GX_U64] = "(uint64_t)", [GX_F32] = "(float)",  [GX_F64] = "(double)",   [GX_F16] = "gx_st_f16",
        [GX_BF16] = "gx_st_bf16"};
    return dt_valid(t) && casts[t] ? casts[t] : "";
}

gx_status gx_dtype_parse(const char *name, gx_dtype *out)
{
    if (!name || !out)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_dtype_parse: name and out must not be NULL");
    for (int t = GX_BOOL; t < GX_DTYPE_COUNT; t++)
        if (strcmp(name, gx__dt[t].name) == 0) {
            *out = (gx_dtype)t;
            return GX_OK;
        }
    return gx__err(GX_ERR_DTYPE,
                   "unknown dtype '%s': use bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64, c64 or c128", name);
}

/* Out-of-range float to integer conversion is undefined in C; gx saturates instead
 * so fill/iota never invoke UB whatever the caller passes. */
#define SAT(T, lo, hi) (v != v ? (T)0 : v <= (double)(lo) ? (T)(lo) : v >= (double)(hi) ? (T)(hi) : (T)v)

void gx__dtype_from_f64(gx_dtype t, double v, void *dst)
{
    switch (t) {
    case GX_BOOL: {
        bool x = v != 0;
        memcpy(dst, &x, 1);
        break;
    }
    case GX_I8: {
        int8_t x = SAT(int8_t, INT8_MIN, INT8_MAX);
        memcpy(dst, &x, 1);
        break;
    }
    case GX_I16: {
        int16_t x = SAT(int16_t, INT16_MIN, INT16_MAX);
        memcpy(dst, &x, 2);
        break;
    }
    case GX_I32: {
        int32_t x = SAT(int32_t, INT32_MIN, INT32_MAX);
        memcpy(dst, &x, 4);
        break;
    }
    case GX_I64: {
        int64_t x = v != v                        ? 0
                    : v <= -9223372036854775808.0 ? INT64_MIN
                    : v >= 9223372036854775808.0  ? INT64_MAX
                                                  : (int64_t)v;
        memcpy(dst, &x, 8);
        break;
    }
    case GX_U8: {
        uint8_t x = SAT(uint8_t, 0, UINT8_MAX);
        memcpy(dst, &x, 1);
        break;
    }
    case GX_U16: {
        uint16_t x = SAT(uint16_t, 0, UINT16_MAX);
        memcpy(dst, &x, 2);
        break;
    }
    case GX_U32: {
        uint32_t x = SAT(uint32_t, 0, UINT32_MAX);
        memcpy(dst, &x, 4);
        break;
    }
    case GX_U64: {
        uint64_t x = v != v || v <= 0 ? 0 : v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)v;
        memcpy(dst, &x, 8);
        break;
    }
    case GX_F32: {
        float x = (float)v;
        memcpy(dst, &x, 4);
        break;
    }
    case GX_F64: memcpy(dst, &v, 8); break;
    case GX_F16: {
        uint16_t x = gx_f64_to_f16(v);
        memcpy(dst, &x, 2);
        break;
    }
    case GX_BF16: {
        uint16_t x = gx_f64_to_bf16(v);
        memcpy(dst, &x, 2);
        break;
    }
    case GX_C64: {
        float x[2] = {(float)v, 0};
        memcpy(dst, x, 8);
        break;
    }
    case GX_C128: {
        double x[2] = {v, 0};
        memcpy(dst, x, 16);
        break;
    }
    default: memset(dst, 0, gx_dtype_size(t)); break;
    }
}

/* IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits; exact in a double. */
static double half_to_f64(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 0)
        v = ldexp((double)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp((double)(m + 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* bfloat16 is the upper half of an f32. */
static double bf16_to_f64(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

double gx__dtype_to_f64(gx_dtype t, const void *src)
{
    switch (t) {
    case GX_BOOL: {
        bool x;
        memcpy(&x, src, 1);
        return x;
    }
    case GX_I8: {
        int8_t x;
        memcpy(&x, src, 1);
        return x;
    }
    case GX_I16: {
        int16_t x;
        memcpy(&x, src, 2);
        return x;
    }
    case GX_I32: {
        int32_t x;
        memcpy(&x, src, 4);
        return x;
    }
    case GX_I64: {
        int64_t x;
        memcpy(&x, src, 8);
        return (double)x;
    }
    case GX_U8: {
        uint8_t x;
        memcpy(&x, src, 1);
        return x;
    }
    case GX_U16: {
        uint16_t x;
        memcpy(&x, src, 2);
        return x;
    }
    case GX_U32: {
        uint32_t x;
        memcpy(&x, src, 4);
        return x;
    }
    case GX_U64: {
        uint64_t x;
        memcpy(&x, src, 8);
        return (double)x;
    }
    case GX_F16: {
        uint16_t x;
        memcpy(&x, src, 2);
        return half_to_f64(x);
    }
    case GX_BF16: {
        uint16_t x;
        memcpy(&x, src, 2);
        return bf16_to_f64(x);
    }
    case GX_F32: {
        float x;
        memcpy(&x, src, 4);
        return x;
    }
    case GX_F64: {
        double x;
        memcpy(&x, src, 8);
        return x;
    }
    case GX_C64: {
        float x;
        memcpy(&x, src, 4);
        return x;
    } /* the real part */
    case GX_C128: {
        double x;
        memcpy(&x, src, 8);
        return x;
    }
    default: return 0;
    }
}
