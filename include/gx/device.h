/* gx/device.h -- helpers for your own CUDA kernels (gx_kernel_compile).
 *
 * `#include <gx/device.h>` in a kernel's source: gx hands this text to NVRTC, no
 * include path needed (gx_device_header() returns it).  nvcc users may include the
 * installed file.  The first part (fixed-width ints, complex numbers, Philox) is
 * also plain C11, so host code can include it to reproduce device results.
 *
 * Contents
 *   gx_global_id(), gx_global_id_x/y/z(), gx_global_size(), gx_thread_rank(),
 *   gx_block_threads(), gx_lane(), gx_warp_id()    -- 64-bit indexing
 *   GX_FOR_EACH(i, n)                              -- grid-stride loop over [0, n)
 *   gx_warp_sum/min/max, gx_warp_inclusive_sum, gx_warp_exclusive_sum
 *   gx_block_sum/min/max, gx_block_inclusive_sum, gx_block_exclusive_sum
 *   cf32 / cf64 and c32, cadd, csub, cmul, cconj, cabs2 (..64) -- as in gx lambdas
 *   gx_philox4x32_10, gx_uniform_f32, gx_uniform_f64 -- counter-based random numbers
 *   gx_f16 / gx_bf16, gx_f16_to_float, gx_float_to_f16, gx_bf16_to_float,
 *   gx_float_to_bf16, gx_f16_make, gx_bf16_make (from bits) -- halves without cuda_fp16.h
 *   gx_at(p, i, n)                                 -- p[i], bounds-checked in checked mode
 *
 * Checked mode (gx_kernel_opts.checked or GX_KERNEL_CHECKS=1; gx then defines
 * GX_KERNEL_CHECKS): gx_at and assert() (<assert.h>, supplied by gx) record the
 * first failure -- function, file, line, block, thread, message -- in a __device__
 * record that gx defines in the module, and the failing thread carries on (gx_at
 * then reads/writes a scratch slot, never memory out of bounds).  gx_sync and the
 * other synchronising calls report it as GX_ERR_KERNEL_FAULT; the context stays
 * usable.  Unchecked (the default): gx_at is plain p[i], and a failed assert()
 * traps like CUDA's (the context is lost, see gx_kernel_launch).
 */
#ifndef GX_DEVICE_H
#define GX_DEVICE_H

/* ------------------------------------------------------------ portable part (C11 and CUDA) */

#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define GX_DEVFN static __host__ __device__ __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define GX_DEVFN static inline __attribute__((unused))
#else
#define GX_DEVFN static inline
#endif

/* Complex numbers: the same types and helper names as gx's lambda prelude (so a
 * function written for gx_define works here unchanged).  Skipped when the prelude
 * is already present. */
#ifndef abs2
typedef struct cf32 { float re, im; } cf32;
typedef struct cf64 { double re, im; } cf64;
#define GX__DEV_CPLX(C, T, MK, SFX, ASFX)                                              \
    GX_DEVFN C MK(T re, T im) { C z; z.re = re; z.im = im; return z; }                 \
    GX_DEVFN C cadd##SFX(C a, C b) { return MK(a.re + b.re, a.im + b.im); }            \
    GX_DEVFN C csub##SFX(C a, C b) { return MK(a.re - b.re, a.im - b.im); }            \
    GX_DEVFN C cmul##SFX(C a, C b)                                                     \
    { return MK(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }               \
    GX_DEVFN C cconj##SFX(C a) { return MK(a.re, -a.im); }                             \
    GX_DEVFN T cabs2##ASFX(C a) { return a.re * a.re + a.im * a.im; }
GX__DEV_CPLX(cf32, float, c32, , )
GX__DEV_CPLX(cf64, double, c64, 64, _64)
#define abs2 cabs2
#define abs2_64 cabs2_64
#endif

/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
 * SC'11), bit-exact with Random123's philox4x32 at 10 rounds: each round maps
 * (c0,c1,c2,c3) with key (k0,k1) to
 *     (hi(M1*c2) ^ c1 ^ k0,  lo(M1*c2),  hi(M0*c0) ^ c3 ^ k1,  lo(M0*c0))
 * with 32x32->64-bit products, M0 = 0xD2511F53, M1 = 0xCD9E8D57; the key is bumped
 * by (W0, W1) = (0x9E3779B9, 0xBB67AE85) between rounds (9 bumps for 10 rounds).
 * Known answer: counter {0,0,0,0}, key {0,0} -> {0x6627e8d5, 0xe169c58d,
 * 0xbc57ac4c, 0x9b00dbd8}.  Same counter and key give the same 4 words on every
 * device and on the host. */
typedef struct gx_u32x4 { uint32_t v[4]; } gx_u32x4;

GX_DEVFN gx_u32x4 gx_philox4x32_10(const uint32_t counter[4], const uint32_t key[2])
{
    uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
    }
    gx_u32x4 out;
    out.v[0] = c0;
    out.v[1] = c1;
    out.v[2] = c2;
    out.v[3] = c3;
    return out;
}

/* Uniform in [0, 1): the top 24 bits of one word, times 2^-24 (exact in float). */
GX_DEVFN float gx_uniform_f32(uint32_t x) { return (float)(x >> 8) * 0x1p-24f; }
/* Uniform in [0, 1): the top 53 bits of (hi << 32 | lo), times 2^-53. */
GX_DEVFN double gx_uniform_f64(uint32_t hi, uint32_t lo)
{
    return (double)((((uint64_t)hi << 32) | lo) >> 11) * 0x1p-53;
}

/* Half precision without cuda_fp16.h / cuda_bf16.h.  gx_f16 (IEEE binary16) and
 * gx_bf16 (bfloat16) are 16-bit storage structs with the bits in .b: a kernel
 * parameter `gx_f16 *` / `const gx_bf16 *` takes a gx array of GX_F16 / GX_BF16.
 * Arithmetic is done in float: widen with gx_f16_to_float / gx_bf16_to_float (exact)
 * and narrow with gx_float_to_f16 / gx_float_to_bf16 (round to nearest, ties to even;
 * overflow gives infinity; a NaN stays a NaN with its sign and top payload bits,
 * quieted).  Bit-exact with the host's gx_f16_to_f32, gx_f32_to_f16, gx_bf16_to_f32
 * and gx_f32_to_bf16 (gx.h) on every input.  (The names differ from those host
 * functions so that host code may include gx.h and this header together.)  Skipped
 * when gx's lambda prelude, which has the same types, is already present. */
#ifndef GX__FBITS
typedef struct gx_f16 { uint16_t b; } gx_f16;
typedef struct gx_bf16 { uint16_t b; } gx_bf16;
#endif
GX_DEVFN uint32_t gx__dev_fbits(float f) { union { float f; uint32_t u; } x; x.f = f; return x.u; }
GX_DEVFN float gx__dev_bitsf(uint32_t u) { union { float f; uint32_t u; } x; x.u = u; return x.f; }
/* v >> s rounded to nearest, ties to even (1 <= s <= 31). */
GX_DEVFN uint32_t gx__dev_rne(uint32_t v, int s)
{
    uint32_t r = v >> s, rem = v & ((1u << s) - 1u), h = 1u << (s - 1);
    return r + (rem > h || (rem == h && (r & 1u)));
}
GX_DEVFN gx_f16 gx_f16_make(uint16_t b) { gx_f16 r; r.b = b; return r; }
GX_DEVFN gx_bf16 gx_bf16_make(uint16_t b) { gx_bf16 r; r.b = b; return r; }
GX_DEVFN float gx_f16_to_float(gx_f16 h)
{
    uint32_t s = (uint32_t)(h.b & 0x8000u) << 16, e = (h.b >> 10) & 31u, m = h.b & 1023u;
    if (e == 31u) /* infinity, NaN (payload kept) */
        return gx__dev_bitsf(s | 0x7f800000u | (m << 13));
    if (e == 0u) { /* zero, subnormal: m * 2^-24, exact in float */
        float v = (float)m * 5.9604644775390625e-8f;
        return s ? -v : v;
    }
    return gx__dev_bitsf(s | ((e + 112u) << 23) | (m << 13));
}
GX_DEVFN gx_f16 gx_float_to_f16(float f)
{
    uint32_t u = gx__dev_fbits(f), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu, e = a >> 23;
    if (a > 0x7f800000u) /* NaN: quiet, top 10 payload bits */
        return gx_f16_make((uint16_t)(s | 0x7e00u | ((a >> 13) & 1023u)));
    if (a >= 0x477ff000u) /* rounds past 65504: infinity */
        return gx_f16_make((uint16_t)(s | 0x7c00u));
    if (a >= 0x38800000u) /* normal: rebias the exponent, round the mantissa */
        return gx_f16_make((uint16_t)(s | gx__dev_rne(a - 0x38000000u, 13)));
    if (e < 102u) /* below half the smallest subnormal */
        return gx_f16_make((uint16_t)s);
    return gx_f16_make((uint16_t)(s | gx__dev_rne((a & 0x7fffffu) | 0x800000u, (int)(126u - e))));
}
GX_DEVFN float gx_bf16_to_float(gx_bf16 h) { return gx__dev_bitsf((uint32_t)h.b << 16); }
GX_DEVFN gx_bf16 gx_float_to_bf16(float f)
{
    uint32_t u = gx__dev_fbits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: quiet, top payload bits */
        return gx_bf16_make((uint16_t)((u >> 16) | 0x40u));
    return gx_bf16_make((uint16_t)gx__dev_rne(u, 16)); /* a carry into the exponent is right */
}

/* ------------------------------------------------------------ CUDA part */

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

#define GX_DEV static __device__ __forceinline__

/* Global 64-bit thread index along x (blockIdx.x * blockDim.x + threadIdx.x), and y, z. */
GX_DEV int64_t gx_global_id_x(void) { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
GX_DEV int64_t gx_global_id_y(void) { return (int64_t)blockIdx.y * blockDim.y + threadIdx.y; }
GX_DEV int64_t gx_global_id_z(void) { return (int64_t)blockIdx.z * blockDim.z + threadIdx.z; }
GX_DEV int64_t gx_global_id(void) { return gx_global_id_x(); }
/* Threads in the whole grid along x: the stride of a grid-stride loop. */
GX_DEV int64_t gx_global_size(void) { return (int64_t)gridDim.x * blockDim.x; }
/* Threads per block, and this thread's linear rank inside its block. */
GX_DEV int gx_block_threads(void) { return (int)(blockDim.x * blockDim.y * blockDim.z); }
GX_DEV int gx_thread_rank(void)
{
    return (int)((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x);
}
GX_DEV int gx_lane(void) { return gx_thread_rank() & 31; }
GX_DEV int gx_warp_id(void) { return gx_thread_rank() >> 5; }

/* for (int64_t i = first; i < n; i += stride): any grid covers any n.  On the CPU
 * backend (GX_CPU_KERNEL) a block's threads run one after another, not in lockstep,
 * so a strided walk would use one element of each cache line per thread: there each
 * thread takes a contiguous share of [0, n) instead -- every index once, as on the
 * GPU, in a different thread-to-index assignment. */
#ifdef GX_CPU_KERNEL
GX_DEV int64_t gx__share(int64_t n, int64_t g)
{
    int64_t G = gx_global_size(), q = n / G, r = n % G;
    return g * q + (g < r ? g : r);
}
#define GX_FOR_EACH(i, n) \
    for (int64_t i = gx__share((int64_t)(n), gx_global_id()), i##_gx_end = gx__share((int64_t)(n), gx_global_id() + 1); \
         i < i##_gx_end; i++)
#else
#define GX_FOR_EACH(i, n) \
    for (int64_t i = gx_global_id(); i < (int64_t)(n); i += gx_global_size())
#endif

/* Warp collectives: every lane of the warp must call them (full 32-lane warps). */
#define GX__FULL 0xffffffffu
template <typename T> GX_DEV T gx__min(T a, T b) { return b < a ? b : a; }
template <typename T> GX_DEV T gx__max(T a, T b) { return a < b ? b : a; }

template <typename T> GX_DEV T gx_warp_sum(T v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(GX__FULL, v, o);
    return v;
}
template <typename T> GX_DEV T gx_warp_min(T v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = gx__min(v, (T)__shfl_xor_sync(GX__FULL, v, o));
    return v;
}
template <typename T> GX_DEV T gx_warp_max(T v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = gx__max(v, (T)__shfl_xor_sync(GX__FULL, v, o));
    return v;
}
/* Lane i gets v[0] + ... + v[i] (inclusive) or v[0] + ... + v[i-1] (exclusive, 0 for lane 0). */
template <typename T> GX_DEV T gx_warp_inclusive_sum(T v)
{
    int lane = gx_lane();
    for (int o = 1; o < 32; o <<= 1) {
        T u = __shfl_up_sync(GX__FULL, v, o);
        if (lane >= o)
            v += u;
    }
    return v;
}
template <typename T> GX_DEV T gx_warp_exclusive_sum(T v)
{
    T up = __shfl_up_sync(GX__FULL, gx_warp_inclusive_sum(v), 1);
    return gx_lane() == 0 ? (T)0 : up;
}

/* Block collectives: every thread of the block must call them, and the block's
 * thread count must be a multiple of 32 (at most 1024).  The result is returned to
 * every thread.  They use 32 elements of static shared memory per type and may be
 * called repeatedly (they synchronise before reusing it). */
template <typename T, int OP> GX_DEV T gx__warp_op(T v)
{
    return OP == 0 ? gx_warp_sum(v) : OP == 1 ? gx_warp_min(v) : gx_warp_max(v);
}
template <typename T, int OP> GX_DEV T gx__block_op(T v)
{
    __shared__ T part[32];
    int nw = gx_block_threads() >> 5;
    v = gx__warp_op<T, OP>(v);
    __syncthreads();   /* a previous call may still be reading part[] */
    if (gx_lane() == 0)
        part[gx_warp_id()] = v;
    __syncthreads();
    T r = part[0];
    for (int w = 1; w < nw; w++)
        r = OP == 0 ? r + part[w] : OP == 1 ? gx__min(r, part[w]) : gx__max(r, part[w]);
    return r;
}
template <typename T> GX_DEV T gx_block_sum(T v) { return gx__block_op<T, 0>(v); }
template <typename T> GX_DEV T gx_block_min(T v) { return gx__block_op<T, 1>(v); }
template <typename T> GX_DEV T gx_block_max(T v) { return gx__block_op<T, 2>(v); }

/* Thread of rank r gets the sum over ranks 0..r (inclusive) or 0..r-1 (exclusive). */
template <typename T, int INCL> GX_DEV T gx__block_scan(T v)
{
    __shared__ T part[32];
    int w = gx_warp_id();
    T x = gx_warp_inclusive_sum(v);
    __syncthreads();   /* a previous call may still be reading part[] */
    if (gx_lane() == 31)
        part[w] = x;
    __syncthreads();
    T before = (T)0;
    for (int i = 0; i < w; i++)
        before += part[i];
    T up = __shfl_up_sync(GX__FULL, x, 1);
    return INCL ? before + x : gx_lane() == 0 ? before : before + up;
}
template <typename T> GX_DEV T gx_block_inclusive_sum(T v) { return gx__block_scan<T, 1>(v); }
template <typename T> GX_DEV T gx_block_exclusive_sum(T v) { return gx__block_scan<T, 0>(v); }

/* ------------------------------------------------------------ checked mode */

/* The failure record: its layout is read by gx on the host (cuda_backend.c). */
typedef struct gx__check_record {
    double dummy[4]; /* what a failed gx_at returns a reference to (types up to 32 bytes) */
    unsigned flag;   /* 0 none, 1 being written, 2 complete */
    unsigned line;
    unsigned block[3], thread[3];
    long long index, bound;
    int has_index;
    char func[64], file[96], msg[128];
} gx__check_record;

#if defined(GX_KERNEL_CHECKS)
/* Defined by gx in the kernel's (first) source. */
extern "C" __device__ gx__check_record gx__check_rec;

GX_DEV void gx__check_str(char *d, const char *s, int n)
{
    int i = 0;
    for (; s && i < n - 1 && s[i]; i++)
        d[i] = s[i];
    d[i] = 0;
}

/* The first failing thread of the launch fills the record; the others return. */
static __device__ __noinline__ void gx__check_fail(const char *msg, const char *file, unsigned line,
                                                   const char *func, int has_index, long long index,
                                                   long long bound)
{
    if (atomicCAS(&gx__check_rec.flag, 0u, 1u) != 0u)
        return;
    gx__check_rec.line = line;
    gx__check_rec.block[0] = blockIdx.x, gx__check_rec.block[1] = blockIdx.y, gx__check_rec.block[2] = blockIdx.z;
    gx__check_rec.thread[0] = threadIdx.x, gx__check_rec.thread[1] = threadIdx.y;
    gx__check_rec.thread[2] = threadIdx.z;
    gx__check_rec.index = index;
    gx__check_rec.bound = bound;
    gx__check_rec.has_index = has_index;
    gx__check_str(gx__check_rec.func, func, 64);
    gx__check_str(gx__check_rec.file, file, 96);
    gx__check_str(gx__check_rec.msg, msg, 128);
    __threadfence();
    atomicExch(&gx__check_rec.flag, 2u);
}

template <typename T>
GX_DEV T &gx__at(T *p, long long i, long long n, const char *file, unsigned line, const char *func)
{
    if (i < 0 || i >= n) {
        gx__check_fail("index out of bounds", file, line, func, 1, i, n);
        return *reinterpret_cast<T *>(gx__check_rec.dummy);
    }
    return p[i];
}
#define gx_at(p, i, n) gx__at((p), (long long)(i), (long long)(n), __FILE__, __LINE__, __func__)
#else
/* p[i] for an array of n elements: checked in checked mode, plain indexing otherwise. */
#define gx_at(p, i, n) ((p)[(i)])
#endif

#endif /* CUDA */
#endif /* GX_DEVICE_H */
