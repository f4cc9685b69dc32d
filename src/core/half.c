/* half.c -- f16 / bf16 conversions on the host.
 *
 * The kernels' conversions are the prelude's (src/jit/prelude/body_half.h); these
 * are the same rules written for the host, so gx_array_get/set, fill values, scalar
 * results and the user's own conversions agree with the device bit for bit.  Both
 * are tested against every half pattern and every rounding tie (tests/test_half.c). */
#include "core/gx_internal.h"

#include <string.h>

static uint32_t f_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint64_t d_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* v >> s rounded to nearest, ties to even (1 <= s <= 63). */
static uint64_t rne_shift(uint64_t v, int s)
{
    uint64_t r = v >> s, rem = v & ((UINT64_C(1) << s) - 1), h = UINT64_C(1) << (s - 1);
    return r + (rem > h || (rem == h && (r & 1)));
}

/* A finite nonzero magnitude given as mantissa (with its hidden bit) * 2^exp2, of an
 * f32 or f64, rounded to a format of `mbits` mantissa bits, exponent bias `bias`,
 * as the magnitude bits (inf on overflow).  `mw`: the width of `man` (24 or 53). */
static uint32_t round_half(uint64_t man, int exp2, int mw, int mbits, int bias)
{
    int e = exp2 + mw - 1; /* the unbiased exponent of the value */
    int emin = 1 - bias, inf = ((2 * bias + 1) << mbits);
    uint64_t r;
    if (e >= emin) {
        int s = mw - 1 - mbits;
        r = (((uint64_t)(e + bias)) << mbits) + rne_shift(man, s) - (UINT64_C(1) << mbits);
    } else {
        int s = (mw - 1 - mbits) + (emin - e); /* subnormal: units of 2^(emin - mbits) */
        r = s > mw ? 0 : rne_shift(man, s);
    }
    return r >= (uint64_t)inf ? (uint32_t)inf : (uint32_t)r;
}

/* `mbits`/`bias`: 10/15 for f16, 7/127 for bf16. */
static uint16_t from_f32(float x, int mbits, int bias)
{
    uint32_t u = f_bits(x), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    uint32_t inf = (uint32_t)(2 * bias + 1) << mbits, quiet = 1u << (mbits - 1);
    if (a > 0x7f800000u)
        return (uint16_t)(s | inf | quiet | ((a >> (23 - mbits)) & ((1u << mbits) - 1)));
    if (a == 0x7f800000u)
        return (uint16_t)(s | inf);
    if (a < 0x00800000u) /* f32 zero and subnormals: f16 rounds them to zero */
        return mbits == 7 ? (uint16_t)rne_shift(u, 16) : (uint16_t)s;
    return (uint16_t)(s | round_half((a & 0x7fffffu) | 0x800000u, (int)(a >> 23) - 150, 24, mbits, bias));
}

static uint16_t from_f64(double x, int mbits, int bias)
{
    uint64_t u = d_bits(x), a = u & UINT64_C(0x7fffffffffffffff);
    uint32_t s = (uint32_t)(u >> 48) & 0x8000u;
    uint32_t inf = (uint32_t)(2 * bias + 1) << mbits, quiet = 1u << (mbits - 1);
    if (a > UINT64_C(0x7ff0000000000000))
        return (uint16_t)(s | inf | quiet | (uint32_t)((a >> (52 - mbits)) & ((1u << mbits) - 1)));
    if (a == UINT64_C(0x7ff0000000000000))
        return (uint16_t)(s | inf);
    if (a < UINT64_C(0x0010000000000000)) /* f64 zero and subnormals */
        return (uint16_t)s;
    uint64_t man = (a & UINT64_C(0xfffffffffffff)) | UINT64_C(0x10000000000000);
    return (uint16_t)(s | round_half(man, (int)(a >> 52) - 1075, 53, mbits, bias));
}

/* Exact: f16 and bf16 values are all f32 values. */
static float to_f32(uint16_t h, int mbits, int bias)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h & 0x7fffu) >> mbits, m = h & ((1u << mbits) - 1);
    uint32_t emax = (uint32_t)(2 * bias + 1);
    if (e == emax)
        return bits_f(s | 0x7f800000u | (m << (23 - mbits)));
    if (e == 0) { /* subnormal: m * 2^(1 - bias - mbits), exact in f32 */
        float v = (float)m * bits_f((uint32_t)(127 + 1 - bias - mbits) << 23);
        return s ? -v : v;
    }
    return bits_f(s | ((e + 127u - (uint32_t)bias) << 23) | (m << (23 - mbits)));
}

uint16_t gx_f32_to_f16(float x) { return from_f32(x, 10, 15); }
uint16_t gx_f64_to_f16(double x) { return from_f64(x, 10, 15); }
float gx_f16_to_f32(uint16_t h) { return to_f32(h, 10, 15); }
uint16_t gx_f32_to_bf16(float x) { return from_f32(x, 7, 127); }
uint16_t gx_f64_to_bf16(double x) { return from_f64(x, 7, 127); }
float gx_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    return bits_f(u);
}
