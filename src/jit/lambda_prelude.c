/* lambda_prelude.c -- the C text placed before generated kernels and user functions.
 *
 * One body serves both targets; only the head differs (C includes the standard
 * headers; NVRTC has none, so the CUDA head declares the fixed-width integers
 * itself and relies on NVRTC's built-in math functions).  Helpers are generated
 * by macros inside the prelude so the text stays short.
 *
 * The text lives in real files, one .h per piece in src/jit/prelude, that the
 * build embeds byte for byte (cmake/embed.cmake, as include/gx/device.h) and that
 * are joined here once.  They hold exactly the prelude's text, so notes about them
 * are here, not in them:
 * every byte is part of every kernel's cache key (a change, even of whitespace,
 * recompiles everything; tests/test_lambda.c pins the two preludes' digests).
 *
 *  head_c.h: the C head: the standard headers and GXF as static inline.
 *  vector_math.h: gx's CPU compiler (backend/cpu/cpu_cc.c) defines
 *    GX_VECTOR_MATH and links glibc's libmvec: these declarations let GCC
 *    vectorise loops over the common float functions (8 or 16 lanes; libmvec's
 *    results are within 4 ulp).  On a 2-core x86 VM, sin(x)^2 + cos(x)^2 went
 *    from 7.3 to 1.4 ns per element per core.  Other compilers of the same text
 *    (clang, user builds) see plain declarations.
 *  head_cuda.h: the CUDA head: NVRTC has no headers, so it declares the
 *    fixed-width integers itself and relies on NVRTC's built-in math functions;
 *    GXF is __device__ __forceinline__.
 *  sincos.h: sin and cos stay separate calls; ewise fuses sin(x) and cos(x) of
 *    one x into one sincos on CUDA (ew_fuse_sincos), so a lone sin(x) keeps the
 *    cheaper sinf.
 *  body_int.h: Integer helpers.  Signed + - * wrap (through the unsigned type:
 *    no overflow UB); division by zero gives 0, MIN / -1 gives MIN, % by 0 or -1
 *    gives 0; shift counts are masked to the width; >> of a negative value is
 *    arithmetic.
 *  body_cvt.h: double -> integer as a C cast, except NaN -> 0 and out-of-range
 *    saturates.
 *  body_math.h: Math: gx_<f>_f32 calls <f>f, gx_<f>_f64 calls <f>.  isnan & co.
 *    are written as arithmetic so they need no header and behave alike on both
 *    targets.
 *  body_complex.h: Complex numbers for user functions (not lambda values).
 *  body_cxlam.h: Complex values in lambdas: gx_<op>_c64 works on cf32,
 *    gx_<op>_c128 on cf64. Division scales by |re| + |im| of the divisor so it
 *    neither overflows nor underflows early.
 *  body_rand.h: rand(seed, i) / randf(seed, i) in lambdas: element i of
 *    gx_rand's f64 / f32 stream for key `seed`, offset 0, start 0 (Philox4x32-10;
 *    see gx/linalg.h).
 *  body_half.h: f16 and bf16 storage (gx_f16 / gx_bf16: 16 bits in a struct, so
 *    that no generated code computes on the bits by mistake) and the conversions,
 *    written with integer bit operations so the C and CUDA targets and the host
 *    (src/core/half.c) round alike: round to nearest even, overflow to inf, NaN
 *    stays NaN with its sign, the quiet bit set and the top payload bits kept.
 *    f64 rounds to a half directly (no double rounding through f32).  Kernels
 *    load with gx_ld_f16 and store with gx_st_f16 (overloads in C++, _Generic
 *    in C pick the float or the double path).
 *  sincos_fast.h: gx's own sin and cos for f32 (both targets), which CPU
 *    element-wise kernels call in place of gx_sin_f32 / gx_cos_f32 (ewise.c,
 *    gen_fast_loop), and CUDA ones for arguments that are f16 values (their
 *    |x| <= 65504 is inside the helper's range; ewise.c, ew_fuse_sincos):
 *    libmvec's sinf and cosf each reduce the argument and check for large ones,
 *    which made sin(x)^2 + cos(x)^2 compute-bound at ~50% of memcpy; CUDA's
 *    sincosf rounds k with two conversions (F2I, I2F: quarter-rate) and keeps a
 *    Payne-Hanek branch, which made the f16 map instruction-bound at 70% of copy
 *    on an H100.  Branch-free so that GCC and clang vectorise the loop: k =
 *    nearest integer to |x| * 2/pi by adding 1.5 * 2^23 (the low bits of j are k
 *    mod 4), r = |x| - k * pi/2 by FMAs with pi/2 in three float parts (the first
 *    step is exact), minimax polynomials on [-pi/4, pi/4] (sin to r^7, relative
 *    error 2^-28; cos to r^8, 2^-34), the quadrant picks and signs them, sin's
 *    sign follows x (so sin(-0) = -0).  Both helpers compute both values, so the
 *    compiler merges sin(x) and cos(x) of one x into one evaluation. Accuracy:
 *    within 2 ulp (1.54 ulp measured on every float) for |x| <= 2^18
 *    (GX__SC_MAX_F32); inf and NaN give NaN.  Beyond 2^18 the reduction loses
 *    bits, so on the CPU each call keeps the largest |x| bit pattern in *m
 *    (inf and NaN included: those lanes compute garbage, with no undefined
 *    behaviour) and the kernel redoes a block whose *m is over the limit with
 *    gx_sin_f32 / gx_cos_f32 (libm / libmvec, 4 ulp); CUDA calls it only where
 *    the range is known.  Without a hardware FMA or with excess float precision
 *    the CPU helpers are the libm ones and never ask for a redo (GX__SC_FAST says
 *    which).  GX__SC_WIDE: GCC otherwise keeps 256-bit vectors on AVX-512 CPUs;
 *    this loop is compute-bound, and 512-bit ones took it from 75-88% to 88-107%
 *    of memcpy on a 2-core Xeon VM.  An f16 value's sin and cos are thus the same
 *    bits on both backends.
 *  end.h: the end marker. */
#include "jit/lambda_impl.h"

#include <pthread.h>
#include <string.h>

#include "gx_prelude_head_c.inc"
#include "gx_prelude_vector_math.inc"
#include "gx_prelude_head_cuda.inc"
#include "gx_prelude_sincos.inc"
#include "gx_prelude_body_int.inc"
#include "gx_prelude_body_cvt.inc"
#include "gx_prelude_body_math.inc"
#include "gx_prelude_body_complex.inc"
#include "gx_prelude_body_cxlam.inc"
#include "gx_prelude_body_rand.inc"
#include "gx_prelude_body_half.inc"
#include "gx_prelude_sincos_fast.inc"
#include "gx_prelude_end.inc"

/* Each prelude's pieces in order (X-macro lists: the buffer sizes and the tables
 * below come from the same list, so they cannot disagree). */
#define LAM__BODY(X) X(body_int) X(body_cvt) X(body_math) X(body_complex) X(body_cxlam) X(body_rand) X(body_half)
#define LAM__PIECES_C(X) X(head_c) X(vector_math) X(sincos) LAM__BODY(X) X(sincos_fast) X(end)
#define LAM__PIECES_CUDA(X) X(head_cuda) X(sincos) LAM__BODY(X) X(sincos_fast) X(end)

/* An embedded file is its bytes and a NUL. */
#define LAM__LEN(name) (sizeof lam__p_##name - 1) +
#define LAM__PIECE(name) {lam__p_##name, sizeof lam__p_##name - 1},

typedef struct lam__piece {
    const unsigned char *text;
    size_t len;
} lam__piece;

static const lam__piece lam__pieces_c[] = {LAM__PIECES_C(LAM__PIECE)};
static const lam__piece lam__pieces_cuda[] = {LAM__PIECES_CUDA(LAM__PIECE)};
static char lam__prelude_c[LAM__PIECES_C(LAM__LEN) 1];
static char lam__prelude_cuda[LAM__PIECES_CUDA(LAM__LEN) 1];
static pthread_once_t lam__prelude_once = PTHREAD_ONCE_INIT;

static void lam__join(char *dst, const lam__piece *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        memcpy(dst, p[i].text, p[i].len);
        dst += p[i].len;
    }
    *dst = 0;
}

static void lam__prelude_init(void)
{
    lam__join(lam__prelude_c, lam__pieces_c, sizeof lam__pieces_c / sizeof lam__pieces_c[0]);
    lam__join(lam__prelude_cuda, lam__pieces_cuda, sizeof lam__pieces_cuda / sizeof lam__pieces_cuda[0]);
}

void lam_emit_prefetch(gx__sbuf *b, const char *ind, const char *ptr, size_t bytes)
{
    for (size_t off = 0; off < bytes; off += 64)
        gx__sb_printf(b, "%sGX__PF((const char *)(%s) + %zu);\n", ind, ptr, off);
}

const char *lam_prelude(gx__target target)
{
    pthread_once(&lam__prelude_once, lam__prelude_init);
    return target == GX__TARGET_CUDA ? lam__prelude_cuda : lam__prelude_c;
}
