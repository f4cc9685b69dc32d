/* lambda_prelude.c -- the C text placed before generated kernels and user functions.
 *
 * One body serves both targets; only the head differs (C includes the standard
 * headers; NVRTC has none, so the CUDA head declares the fixed-width integers
 * itself and relies on NVRTC's built-in math functions).  Helpers are generated
 * by macros inside the prelude so the text stays short. */
#include "jit/lambda_impl.h"

#include <string.h>

#define LAM__HEAD_C                                                                     \
    "/* gx prelude (C) */\n"                                                            \
    "#include <stdint.h>\n"                                                             \
    "#include <stdbool.h>\n"                                                            \
    "#include <math.h>\n"                                                               \
    "#if defined(__GNUC__) || defined(__clang__)\n"                                   \
    "#define GXF static inline __attribute__((unused)) /* clang warns on unused static inline in .c files */\n" \
    "#else\n"                                                                          \
    "#define GXF static inline\n"                                                      \
    "#endif\n"                                                                         \
    LAM__VECTOR_MATH

/* gx's CPU compiler (backend/cpu/cpu_cc.c) defines GX_VECTOR_MATH and links glibc's libmvec:
 * these declarations let GCC vectorise loops over the common float functions
 * (8 or 16 lanes; libmvec's results are within 4 ulp).  On a 2-core x86 VM,
 * sin(x)^2 + cos(x)^2 went from 7.3 to 1.4 ns per element per core.  Other
 * compilers of the same text (clang, user builds) see plain declarations. */
#define LAM__VECTOR_MATH                                                                \
    "#if defined(GX_VECTOR_MATH) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)\n" \
    "#define GX__VM __attribute__((simd(\"notinbranch\"), const))\n"                    \
    "extern float sinf(float) GX__VM; extern float cosf(float) GX__VM;\n"              \
    "extern float expf(float) GX__VM; extern float logf(float) GX__VM;\n"              \
    "extern float powf(float, float) GX__VM;\n"                                        \
    "extern double sin(double) GX__VM; extern double cos(double) GX__VM;\n"            \
    "extern double exp(double) GX__VM; extern double log(double) GX__VM;\n"            \
    "extern double pow(double, double) GX__VM;\n"                                      \
    "#endif\n"

#define LAM__HEAD_CUDA                                                                  \
    "/* gx prelude (CUDA) */\n"                                                         \
    "typedef signed char int8_t;\n"                                                     \
    "typedef short int16_t;\n"                                                          \
    "typedef int int32_t;\n"                                                            \
    "typedef long long int64_t;\n"                                                      \
    "typedef unsigned char uint8_t;\n"                                                  \
    "typedef unsigned short uint16_t;\n"                                                \
    "typedef unsigned int uint32_t;\n"                                                  \
    "typedef unsigned long long uint64_t;\n"                                            \
    "#define GXF static __device__ __forceinline__\n"                                 \
    "#pragma nv_diag_suppress 177 /* unused static helpers are expected */\n"

/* Integer helpers.  Signed + - * wrap (through the unsigned type: no overflow UB);
 * division by zero gives 0, MIN / -1 gives MIN, % by 0 or -1 gives 0; shift counts
 * are masked to the width; >> of a negative value is arithmetic. */
#define LAM__BODY_INT                                                                   \
    "#define GX__INT_COMMON(T, S, U, W) \\\n"                                           \
    "GXF T gx_add_##S(T a, T b) { return (T)((U)a + (U)b); } \\\n"                      \
    "GXF T gx_sub_##S(T a, T b) { return (T)((U)a - (U)b); } \\\n"                      \
    "GXF T gx_mul_##S(T a, T b) { return (T)((U)a * (U)b); } \\\n"                      \
    "GXF T gx_neg_##S(T a) { return (T)((U)0 - (U)a); } \\\n"                           \
    "GXF T gx_shl_##S(T a, uint64_t n) { return (T)((U)a << (n & (W - 1))); } \\\n"     \
    "GXF T gx_min_##S(T a, T b) { return a < b ? a : b; } \\\n"                         \
    "GXF T gx_max_##S(T a, T b) { return a > b ? a : b; } \\\n"                         \
    "GXF T gx_clamp_##S(T x, T lo, T hi) { return gx_min_##S(gx_max_##S(x, lo), hi); }\n" \
    "#define GX__INT_SIGNED(T, S, U, W, MN) \\\n"                                       \
    "GX__INT_COMMON(T, S, U, W) \\\n"                                                   \
    "GXF T gx_div_##S(T a, T b) { return b == 0 ? (T)0 : (a == (MN) && b == -1) ? a : (T)(a / b); } \\\n" \
    "GXF T gx_mod_##S(T a, T b) { return (b == 0 || b == -1) ? (T)0 : (T)(a % b); } \\\n" \
    "GXF T gx_shr_##S(T a, uint64_t n) { return a < 0 ? (T)~(T)(~a >> (n & (W - 1))) : (T)(a >> (n & (W - 1))); } \\\n" \
    "GXF T gx_abs_##S(T a) { return a < 0 ? gx_neg_##S(a) : a; } \\\n"                  \
    "GXF T gx_sign_##S(T a) { return (T)((a > 0) - (a < 0)); }\n"                       \
    "#define GX__INT_UNSIGNED(T, S, W) \\\n"                                            \
    "GX__INT_COMMON(T, S, T, W) \\\n"                                                   \
    "GXF T gx_div_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \\\n"            \
    "GXF T gx_mod_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); } \\\n"            \
    "GXF T gx_shr_##S(T a, uint64_t n) { return (T)(a >> (n & (W - 1))); } \\\n"        \
    "GXF T gx_abs_##S(T a) { return a; } \\\n"                                          \
    "GXF T gx_sign_##S(T a) { return (T)(a > 0); }\n"                                   \
    "GX__INT_SIGNED(int32_t, i32, uint32_t, 32, (-2147483647 - 1))\n"                   \
    "GX__INT_SIGNED(int64_t, i64, uint64_t, 64, (-9223372036854775807LL - 1))\n"        \
    "GX__INT_UNSIGNED(uint32_t, u32, 32)\n"                                             \
    "GX__INT_UNSIGNED(uint64_t, u64, 64)\n"

/* double -> integer as a C cast, except NaN -> 0 and out-of-range saturates. */
#define LAM__BODY_CVT                                                                   \
    "#define GX__CVT(T, S, LO, HI, TLO, THI) \\\n"                                      \
    "GXF T gx_cvt_f64_##S(double v) { return v != v ? (T)0 : v <= LO ? (T)(TLO) : v >= HI ? (T)(THI) : (T)v; }\n" \
    "GX__CVT(int8_t, i8, -128.0, 127.0, -128, 127)\n"                                   \
    "GX__CVT(int16_t, i16, -32768.0, 32767.0, -32768, 32767)\n"                         \
    "GX__CVT(int32_t, i32, -2147483648.0, 2147483647.0, (-2147483647 - 1), 2147483647)\n" \
    "GX__CVT(int64_t, i64, -9223372036854775808.0, 9223372036854775808.0, (-9223372036854775807LL - 1), 9223372036854775807LL)\n" \
    "GX__CVT(uint8_t, u8, 0.0, 255.0, 0, 255)\n"                                        \
    "GX__CVT(uint16_t, u16, 0.0, 65535.0, 0, 65535)\n"                                  \
    "GX__CVT(uint32_t, u32, 0.0, 4294967295.0, 0, 4294967295U)\n"                       \
    "GX__CVT(uint64_t, u64, 0.0, 18446744073709551616.0, 0, 18446744073709551615ULL)\n"

/* sin and cos stay separate calls; ewise fuses sin(x) and cos(x) of one x into one
 * sincos on CUDA (ew_fuse_sincos), so a lone sin(x) keeps the cheaper sinf. */
#define LAM__SINCOS "#define GX__SINCOS GX__M1(sin) GX__M1(cos)\n"

/* Math: gx_<f>_f32 calls <f>f, gx_<f>_f64 calls <f>.  isnan & co. are written as
 * arithmetic so they need no header and behave alike on both targets. */
#define LAM__BODY_MATH                                                                  \
    "#define GX__M1(N) GXF float gx_##N##_f32(float x) { return N##f(x); } \\\n"        \
    "GXF double gx_##N##_f64(double x) { return N(x); }\n"                              \
    "#define GX__M2(N, F) GXF float gx_##N##_f32(float x, float y) { return F##f(x, y); } \\\n" \
    "GXF double gx_##N##_f64(double x, double y) { return F(x, y); }\n"                 \
    "GX__SINCOS\n"                                                                       \
    "GX__M1(tan) GX__M1(asin) GX__M1(acos) GX__M1(atan)\n"                               \
    "GX__M1(sinh) GX__M1(cosh) GX__M1(tanh) GX__M1(asinh) GX__M1(acosh) GX__M1(atanh)\n" \
    "GX__M1(exp) GX__M1(exp2) GX__M1(expm1) GX__M1(log) GX__M1(log2) GX__M1(log10)\n"   \
    "GX__M1(log1p) GX__M1(sqrt) GX__M1(cbrt) GX__M1(floor) GX__M1(ceil) GX__M1(round)\n" \
    "GX__M1(trunc) GX__M1(erf) GX__M1(erfc) GX__M1(lgamma) GX__M1(tgamma)\n"            \
    "GX__M2(atan2, atan2) GX__M2(pow, pow) GX__M2(fmod, fmod) GX__M2(hypot, hypot)\n"   \
    "GX__M2(copysign, copysign) GX__M2(min, fmin) GX__M2(max, fmax)\n"                  \
    "#define GX__MF(T, S, SF) \\\n"                                                     \
    "GXF T gx_rsqrt_##S(T x) { return (T)1 / sqrt##SF(x); } \\\n"                       \
    "GXF T gx_abs_##S(T x) { return fabs##SF(x); } \\\n"                                \
    "GXF T gx_fma_##S(T x, T y, T z) { return fma##SF(x, y, z); } \\\n"                 \
    "GXF T gx_clamp_##S(T x, T lo, T hi) { return gx_min_##S(gx_max_##S(x, lo), hi); } \\\n" \
    "GXF T gx_sign_##S(T x) { return x > 0 ? (T)1 : x < 0 ? (T)-1 : x; } \\\n"          \
    "GXF bool gx_isnan_##S(T x) { return x != x; } \\\n"                                \
    "GXF bool gx_isinf_##S(T x) { return x == x && (x - x) != (x - x); } \\\n"          \
    "GXF bool gx_isfinite_##S(T x) { return (x - x) == (x - x); }\n"                    \
    "GX__MF(float, f32, f)\n"                                                           \
    "GX__MF(double, f64, )\n"

/* Complex numbers for user functions (not lambda values). */
#define LAM__BODY_COMPLEX                                                               \
    "typedef struct cf32 { float re, im; } cf32;\n"                                     \
    "typedef struct cf64 { double re, im; } cf64;\n"                                    \
    "#define GX__CPLX(C, T, MK, SFX, ASFX) \\\n"                                              \
    "GXF C MK(T re, T im) { C z; z.re = re; z.im = im; return z; } \\\n"                \
    "GXF C cadd##SFX(C a, C b) { return MK(a.re + b.re, a.im + b.im); } \\\n"           \
    "GXF C csub##SFX(C a, C b) { return MK(a.re - b.re, a.im - b.im); } \\\n"           \
    "GXF C cmul##SFX(C a, C b) { return MK(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); } \\\n" \
    "GXF C cconj##SFX(C a) { return MK(a.re, -a.im); } \\\n"                            \
    "GXF T cabs2##ASFX(C a) { return a.re * a.re + a.im * a.im; }\n"                     \
    "GX__CPLX(cf32, float, c32, , )\n"                                                    \
    "GX__CPLX(cf64, double, c64, 64, _64)\n"                                                 \
    "#define abs2 cabs2\n"                                                              \
    "#define abs2_64 cabs2_64\n"

/* Complex values in lambdas: gx_<op>_c64 works on cf32, gx_<op>_c128 on cf64.
 * Division scales by |re| + |im| of the divisor so it neither overflows nor
 * underflows early. */
#define LAM__BODY_CXLAM                                                                 \
    "#define GX__CXL(C, T, S, MK, SF) \\\n"                                             \
    "GXF C gx_complex_##S(T re, T im) { return MK(re, im); } \\\n"                     \
    "GXF C gx_add_##S(C a, C b) { return MK(a.re + b.re, a.im + b.im); } \\\n"         \
    "GXF C gx_sub_##S(C a, C b) { return MK(a.re - b.re, a.im - b.im); } \\\n"         \
    "GXF C gx_mul_##S(C a, C b) { return MK(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); } \\\n" \
    "GXF C gx_div_##S(C a, C b) { T s = fabs##SF(b.re) + fabs##SF(b.im); T ar = a.re / s, ai = a.im / s, br = b.re / s, bi = b.im / s; \\\n" \
    "  T d = br * br + bi * bi; return MK((ar * br + ai * bi) / d, (ai * br - ar * bi) / d); } \\\n" \
    "GXF C gx_neg_##S(C a) { return MK(-a.re, -a.im); } \\\n"                          \
    "GXF bool gx_eq_##S(C a, C b) { return a.re == b.re && a.im == b.im; } \\\n"       \
    "GXF bool gx_ne_##S(C a, C b) { return !(a.re == b.re && a.im == b.im); } \\\n"    \
    "GXF T gx_re_##S(C a) { return a.re; } \\\n"                                       \
    "GXF T gx_im_##S(C a) { return a.im; } \\\n"                                       \
    "GXF C gx_conj_##S(C a) { return MK(a.re, -a.im); } \\\n"                          \
    "GXF T gx_abs2_##S(C a) { return a.re * a.re + a.im * a.im; } \\\n"                \
    "GXF T gx_abs_##S(C a) { return hypot##SF(a.re, a.im); } \\\n"                     \
    "GXF T gx_arg_##S(C a) { return atan2##SF(a.im, a.re); } \\\n"                     \
    "GXF C gx_exp_##S(C a) { T r = exp##SF(a.re); return MK(r * cos##SF(a.im), r * sin##SF(a.im)); }\n" \
    "GX__CXL(cf32, float, c64, c32, f)\n"                                                \
    "GX__CXL(cf64, double, c128, c64, )\n"                                               \
    "GXF cf64 gx_cx_c64_c128(cf32 a) { return c64(a.re, a.im); }\n"                      \
    "GXF cf32 gx_cx_c128_c64(cf64 a) { return c32((float)a.re, (float)a.im); }\n"

/* rand(seed, i) / randf(seed, i) in lambdas: element i of gx_rand's f64 / f32 stream
 * for key `seed`, offset 0, start 0 (Philox4x32-10; see gx/linalg.h). */
#define LAM__BODY_RAND                                                                  \
    "GXF void gx__lam_philox(uint64_t blk, uint64_t seed, uint32_t *w)\n"               \
    "{\n"                                                                               \
    "  uint32_t c0 = (uint32_t)blk, c1 = (uint32_t)(blk >> 32), c2 = 0, c3 = 0;\n"       \
    "  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);\n"                     \
    "  for (int r = 0; r < 10; r++) {\n"                                                \
    "    const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;\n" \
    "    const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;\n" \
    "    c0 = n0; c1 = (uint32_t)p1; c2 = n2; c3 = (uint32_t)p0;\n"                     \
    "    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;\n"                                       \
    "  }\n"                                                                             \
    "  w[0] = c0; w[1] = c1; w[2] = c2; w[3] = c3;\n"                                   \
    "}\n"                                                                               \
    "GXF double gx_rand_f64(uint64_t seed, uint64_t i)\n"                               \
    "{\n"                                                                               \
    "  uint32_t w[4]; gx__lam_philox(i >> 1, seed, w);\n"                               \
    "  const int j = (int)(i & 1);\n"                                                   \
    "  return (double)((((uint64_t)w[2 * j] << 32) | w[2 * j + 1]) >> 11) * 1.1102230246251565404e-16;\n" \
    "}\n"                                                                               \
    "GXF float gx_randf_f32(uint64_t seed, uint64_t i)\n"                               \
    "{\n"                                                                               \
    "  uint32_t w[4]; gx__lam_philox(i >> 2, seed, w);\n"                               \
    "  return (float)(w[i & 3] >> 8) * 5.9604644775390625e-8f;\n"                       \
    "}\n"

#define LAM__BODY LAM__BODY_INT LAM__BODY_CVT LAM__BODY_MATH LAM__BODY_COMPLEX LAM__BODY_CXLAM LAM__BODY_RAND
#define LAM__END "/* end of gx prelude */\n"

/* gx's own sin and cos for f32, which CPU element-wise kernels call in place of
 * gx_sin_f32 / gx_cos_f32 (ewise.c, gen_fast_loop): libmvec's sinf and cosf each
 * reduce the argument and check for large ones, which made sin(x)^2 + cos(x)^2
 * compute-bound at ~50% of memcpy.  Branch-free so that GCC and clang vectorise
 * the loop: k = nearest integer to |x| * 2/pi by adding 1.5 * 2^23 (the low bits of
 * j are k mod 4), r = |x| - k * pi/2 by FMAs with pi/2 in three float parts (the
 * first step is exact), minimax polynomials on [-pi/4, pi/4] (sin to r^7, relative
 * error 2^-28; cos to r^8, 2^-34), the quadrant picks and signs them, sin's sign
 * follows x (so sin(-0) = -0).  Both helpers compute both values, so the compiler
 * merges sin(x) and cos(x) of one x into one evaluation.
 * Accuracy: within 2 ulp (1.54 ulp measured on every float) for |x| <= 2^18
 * (GX__SC_MAX_F32); beyond that the reduction loses bits, so each call keeps the
 * largest |x| bit pattern in *m (inf and NaN included: those lanes compute garbage,
 * with no undefined behaviour) and the kernel redoes a block whose *m is over the
 * limit with gx_sin_f32 / gx_cos_f32 (libm / libmvec, 4 ulp).  Without a hardware
 * FMA or with excess float precision the helpers are the libm ones and never ask for
 * a redo (GX__SC_FAST says which).  GX__SC_WIDE: GCC otherwise keeps 256-bit vectors
 * on AVX-512 CPUs; this loop is compute-bound, and 512-bit ones took it from 75-88%
 * to 88-107% of memcpy on a 2-core Xeon VM. */
#define LAM__SINCOS_FAST_C                                                              \
    "#define GX__SC_MAX_F32 0x48800000u\n"                                              \
    "#if defined(__GNUC__) && __GNUC__ >= 8 && !defined(__clang__) && defined(__x86_64__) && defined(__AVX512F__)\n" \
    "#define GX__SC_WIDE __attribute__((target(\"prefer-vector-width=512\")))\n"          \
    "#else\n"                                                                           \
    "#define GX__SC_WIDE\n"                                                             \
    "#endif\n"                                                                          \
    "#if (defined(FP_FAST_FMAF) || defined(__FMA__) || defined(__ARM_FEATURE_FMA)) && \\\n" \
    "    (!defined(__FLT_EVAL_METHOD__) || __FLT_EVAL_METHOD__ == 0 || __FLT_EVAL_METHOD__ == 16)\n" \
    "#define GX__SC_FAST 1\n"                                                           \
    "typedef union { float f; uint32_t u; } gx__fu32;\n"                                \
    "GXF void gx__sincos_f32(float x, uint32_t *m, float *sn, float *cs)\n"             \
    "{\n"                                                                               \
    "  gx__fu32 ux, ua, uj, us, uc;\n"                                                  \
    "  ux.f = x;\n"                                                                     \
    "  ua.u = ux.u & 0x7fffffffu;\n"                                                    \
    "  *m = ua.u > *m ? ua.u : *m;\n"                                                   \
    "  uj.f = fmaf(ua.f, 0x1.45f306p-1f, 0x1.8p23f);\n"                                 \
    "  const float k = uj.f - 0x1.8p23f;\n"                                             \
    "  const float r = fmaf(-k, -0x1.ee59dap-50f, fmaf(-k, -0x1.777a5cp-25f, fmaf(-k, 0x1.921fb6p0f, ua.f)));\n" \
    "  const float r2 = r * r;\n"                                                       \
    "  const float s = fmaf(r * r2, fmaf(r2, fmaf(r2, -0x1.994388p-13f, 0x1.11073ap-7f), -0x1.555546p-3f), r);\n" \
    "  const float c = fmaf(r2, fmaf(r2, fmaf(r2, fmaf(r2, 0x1.991644p-16f, -0x1.6c07fp-10f), 0x1.55553cp-5f), -0.5f), 1.0f);\n" \
    "  const uint32_t q = uj.u;\n"                                                      \
    "  us.f = (q & 1u) ? c : s;\n"                                                      \
    "  uc.f = (q & 1u) ? s : c;\n"                                                      \
    "  us.u ^= ((q << 30) & 0x80000000u) ^ (ux.u & 0x80000000u);\n"                     \
    "  uc.u ^= ((q + 1u) << 30) & 0x80000000u;\n"                                       \
    "  *sn = us.f;\n"                                                                   \
    "  *cs = uc.f;\n"                                                                   \
    "}\n"                                                                               \
    "GXF float gx__fsin_f32(float x, uint32_t *m) { float s, c; gx__sincos_f32(x, m, &s, &c); return s; }\n" \
    "GXF float gx__fcos_f32(float x, uint32_t *m) { float s, c; gx__sincos_f32(x, m, &s, &c); return c; }\n" \
    "#else\n"                                                                           \
    "#define GX__SC_FAST 0\n"                                                           \
    "GXF float gx__fsin_f32(float x, uint32_t *m) { (void)m; return gx_sin_f32(x); }\n" \
    "GXF float gx__fcos_f32(float x, uint32_t *m) { (void)m; return gx_cos_f32(x); }\n" \
    "#endif\n"

static const char lam__prelude_c[] = LAM__HEAD_C LAM__SINCOS LAM__BODY LAM__SINCOS_FAST_C LAM__END;
static const char lam__prelude_cuda[] = LAM__HEAD_CUDA LAM__SINCOS LAM__BODY LAM__END;

const char *lam_prelude(gx__target target)
{
    return target == GX__TARGET_CUDA ? lam__prelude_cuda : lam__prelude_c;
}
