/* gx/linalg.h -- part of gx.h (include gx.h, not this file).
 *
 * Vendor-library operations: matrix multiply (cuBLAS on CUDA, CBLAS/OpenBLAS on the
 * CPU), random numbers (gx's own Philox4x32-10, bit-identical on both backends) and
 * FFTs (cuFFT on CUDA, KissFFT on the CPU).  The CUDA libraries are loaded with
 * dlopen on first use; a missing one is GX_ERR_UNSUPPORTED naming the library.
 * Operands that a library cannot take as they are (a view without a unit stride)
 * are copied to dense temporaries first; gx_vendor_copies() counts those copies. */
#ifndef GX_LINALG_H
#define GX_LINALG_H
#include "../gx.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ matmul */

typedef enum gx_op {
    GX_OP_N = 0, /* the matrix as it is */
    GX_OP_T,     /* transposed */
    GX_OP_C      /* conjugate-transposed (= GX_OP_T for real dtypes) */
} gx_op;

typedef enum gx_math_mode {
    GX_MATH_DEFAULT = 0, /* full precision of the dtype */
    GX_MATH_TF32,        /* f32 on CUDA: TF32 tensor cores (10-bit mantissa products); ignored elsewhere */
    GX_MATH_BF16         /* f32 on CUDA: bf16 tensor cores (8-bit mantissa products); ignored elsewhere */
} gx_math_mode;

/* All zero (or NULL) = C = A·B: no transposes, alpha 1, beta 0, full precision. */
typedef struct gx_matmul_opts {
    gx_op op_a, op_b;
    gx_scalar alpha; /* dtype GX_DTYPE_DEFAULT (0) = 1; a real or complex value,
                           * converted to the matrices' dtype (real dtypes take the real part) */
    gx_scalar beta;  /* dtype GX_DTYPE_DEFAULT (0) = 0 */
    gx_math_mode math;
    gx_dtype dtype;       /* C's dtype for gx_matmul: GX_DTYPE_DEFAULT (0) = A's; with f16 or bf16
                           * inputs also GX_F32.  *_into: 0 or out's dtype. */
    uint64_t reserved[6]; /* zero (see the conventions in gx.h) */
} gx_matmul_opts;

/* A new C = alpha·op(A)·op(B) (beta is ignored).  A and B have one dtype (f32, f64,
 * c64 or c128; or both f16 or both bf16, see below).  2-D: A is (m,k) after op, B (k,n), C (m,n).  3-D (strided batch, batch
 * on axis 0): C is (batch,m,n); A and B are 3-D with the same batch or 2-D (shared by
 * every batch entry).  Views work; those without a unit stride in one dimension are
 * copied (counted by gx_vendor_copies).  opts may be NULL.  Sizes above INT32_MAX per
 * dimension are GX_ERR_UNSUPPORTED. */
GX_API gx_status gx_matmul(const gx_array *a, const gx_array *b, const gx_matmul_opts *opts, gx_array **out);
/* C = alpha·op(A)·op(B) + beta·C into your C (`out`, the same dtype as A and B, any
 * view; f32 also for half inputs); it must not overlap A or B.
 *
 * Halves: A and B both f16 or both bf16 (a mix of f16 and bf16, or a half and f32, is
 * GX_ERR_DTYPE naming the dtypes: convert with gx_array_clone).  C is the inputs' dtype
 * or f32 (opts->dtype for gx_matmul, out's dtype for the _into forms).  The products
 * are exact and accumulate in f32 (CUBLAS_COMPUTE_32F: tensor cores on CUDA); alpha and
 * beta are applied in f32 and C is rounded to its dtype once, at the end (round to
 * nearest even).  opts->math is ignored.  On the CPU backend: OpenBLAS's cblas_sbgemm
 * for bf16 where the library has it, else blocks of 256 along k converted to f32 and
 * cblas_sgemm (the same f32 accumulation, only its order differs). */
GX_API gx_status gx_matmul_into(const gx_array *a, const gx_array *b, const gx_matmul_opts *opts, gx_array *out);
/* Batched over lists: out[i] = alpha·op(a[i])·op(b[i]) + beta·out[i] for i < count
 * (each a 2-D gx_matmul_into; the arrays may differ in shape). */
GX_API gx_status gx_matmul_batched_into(int count, const gx_array *const *a, const gx_array *const *b,
                                        const gx_matmul_opts *opts, gx_array *const *out);

/* ------------------------------------------------------------------ random numbers
 *
 * Generator: Philox4x32-10 (Salmon et al., SC'11; Random123's constants) with
 *   key     = {seed & 0xffffffff, seed >> 32}
 *   counter = {b & 0xffffffff, b >> 32, offset & 0xffffffff, offset >> 32}
 * where b is a block number.  Stream element g (g = rng.start + the element's
 * row-major linear index in `out`) takes its words from block b = g / W, words
 * w[...] of the 4 the block gives:
 *   W = 4 (one word, w[g % 4]): uniform f32 = (w >> 8) * 2^-24;
 *       integers in [lo, hi) when hi - lo <= 2^32: lo + ((w * (hi - lo)) >> 32)
 *   W = 2 (two words x = w[2j] << 32 | w[2j+1], j = g % 2): uniform f64 = (x >> 11) * 2^-53;
 *       integers when hi - lo > 2^32: lo + high 64 bits of x * (hi - lo)
 *   randn (Box-Muller in double, then rounded to the dtype):
 *       f32: W = 4, pair j = (g % 4) / 2 uses u1 = (w[2j] + 0.5) * 2^-32, u2 = w[2j+1] * 2^-32
 *       f64: W = 2, u1 = ((w0:w1 >> 11) + 0.5) * 2^-53, u2 = (w2:w3 >> 11) * 2^-53
 *       r = sqrt(-2 ln u1); element g is r cos(2 pi u2) when g is even in its pair, r sin(2 pi u2) when odd.
 *   f16 / bf16 (W = 4, the f32 words): uniform = (w >> 21) * 2^-11 (f16) or (w >> 24) * 2^-8
 *       (bf16): the format's grid in [0, 1), exact, never 1 (a rounded f32 draw could reach
 *       1.0); randn: the f32 value above rounded to the half (to nearest even).
 * Uniform and integer outputs are bit-identical on every backend.  randn goes through
 * the platform's double log/sin/cos: f32 results are equal in practice (rounding from
 * double hides their last-ulp differences), f64 results agree within 2 ulp.
 * The integer mapping uses a multiply-shift without rejection: the bias is at most
 * (hi - lo) / 2^32 (resp. / 2^64) relative.  Same seed + offset + start = same numbers. */

typedef struct gx_rng {
    uint64_t seed;   /* the key */
    uint64_t offset; /* selects an independent stream (counter's high half) */
    uint64_t start;  /* index of out's first element in the stream */
} gx_rng;

/* A new array (f16, bf16, f32 or f64) of uniform numbers in [0, 1). */
GX_API gx_status gx_rand(gx_ctx *ctx, gx_rng rng, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out);
/* Fills `out` (f16, bf16, f32 or f64, any view) with uniform numbers in [0, 1). */
GX_API gx_status gx_rand_into(gx_rng rng, gx_array *out);
/* A new array / your array (f16, bf16, f32 or f64) of standard normal numbers. */
GX_API gx_status gx_randn(gx_ctx *ctx, gx_rng rng, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out);
GX_API gx_status gx_randn_into(gx_rng rng, gx_array *out);
/* A new array / your array (an integer dtype) of integers in [lo, hi): lo < hi and
 * every value of the range must fit the dtype (so hi may be its largest value + 1:
 * [0, 256) for u8), else GX_ERR_INVALID_ARGUMENT. */
GX_API gx_status gx_rand_int(gx_ctx *ctx, gx_rng rng, int64_t lo, int64_t hi, gx_dtype dtype, int ndim,
                             const int64_t *shape, gx_array **out);
GX_API gx_status gx_rand_int_into(gx_rng rng, int64_t lo, int64_t hi, gx_array *out);
/* The generator on the host: 4 output words for counter ctr and key key (for tests and
 * for reproducing gx's numbers elsewhere). */
GX_API void gx_philox4x32_10_host(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* ------------------------------------------------------------------ FFT
 *
 * Transforms run over the last `rank` axes (1, 2 or 3); any leading axes are a batch.
 * Forward: X[k] = sum_j x[j] exp(-2 pi i jk/N).  Inverse: exp(+2 pi i jk/N).  Scaling
 * (numpy's `norm`): BACKWARD (default) = forward unscaled, inverse scaled by 1/N;
 * ORTHO = both by 1/sqrt(N); FORWARD = forward by 1/N, inverse unscaled; NONE = neither.
 * N is the product of the transformed lengths.  Each call returns a new array; its
 * *_into form writes yours, which must have the result's shape and dtype (any view;
 * a non-dense one receives a copy).  Non-dense inputs are copied.
 * CPU: c64 through KissFFT; c128 through gx's own mixed-radix code in double. */

typedef enum gx_fft_dir { GX_FFT_FORWARD = 0, GX_FFT_INVERSE = 1 } gx_fft_dir;
typedef enum gx_fft_norm {
    GX_FFT_NORM_BACKWARD = 0,
    GX_FFT_NORM_ORTHO,
    GX_FFT_NORM_FORWARD,
    GX_FFT_NORM_NONE
} gx_fft_norm;

/* Complex to complex (c64 or c128); out has in's shape and dtype. */
GX_API gx_status gx_fft(const gx_array *in, int rank, gx_fft_dir dir, gx_fft_norm norm, gx_array **out);
GX_API gx_status gx_fft_into(const gx_array *in, int rank, gx_fft_dir dir, gx_fft_norm norm, gx_array *out);
/* Real to complex, forward (f32 -> c64, f64 -> c128): the last axis n becomes n/2 + 1. */
GX_API gx_status gx_rfft(const gx_array *in, int rank, gx_fft_norm norm, gx_array **out);
GX_API gx_status gx_rfft_into(const gx_array *in, int rank, gx_fft_norm norm, gx_array *out);
/* Complex to real, inverse (c64 -> f32, c128 -> f64): the last axis of `in` must be
 * n_last/2 + 1, the result's last axis is n_last.  The input's imaginary parts that a
 * Hermitian spectrum cannot have (bin 0 and, for even n_last, bin n_last/2) are ignored. */
GX_API gx_status gx_irfft(const gx_array *in, int rank, int64_t n_last, gx_fft_norm norm, gx_array **out);
GX_API gx_status gx_irfft_into(const gx_array *in, int rank, int64_t n_last, gx_fft_norm norm, gx_array *out);

/* ------------------------------------------------------------------ counters */

/* Dense temporaries that matmul / FFT made because an operand could not be handed to
 * the library as it was (process-wide; a profiler can show it). */
GX_API uint64_t gx_vendor_copies(void);

#ifdef __cplusplus
}
#endif
#endif
