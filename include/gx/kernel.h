/* gx/kernel.h -- part of gx.h (include gx.h, not this file).
 *
 * Your own CUDA C kernels from C: compile (NVRTC, cached like every gx kernel),
 * inspect (registers, shared memory, PTX, SASS), launch with typed, checked
 * arguments; occupancy; streams and events; page-locked host memory with
 * asynchronous copies; a profiler (GX_PROFILE=1).
 *
 * Backends: on the CUDA backend kernels are compiled by NVRTC.  On the CPU backend
 * the same source runs within a subset of CUDA C, compiled as C++17 by the system
 * C++ compiler ($GX_CXX, else $CXX, else c++; cached like every kernel):
 *   - __global__/__device__ functions, threadIdx/blockIdx/blockDim/gridDim (3-D),
 *     __shared__ arrays (static, and `extern __shared__ T s[];` for dynamic),
 *     __syncthreads(_count/_and/_or), atomics (atomicAdd/Sub/Min/Max/Exch/CAS/And/
 *     Or/Xor/Inc/Dec on 32- and 64-bit types, float/double add) on global and shared
 *     memory, warp intrinsics with warps of 32 (__shfl_sync/_up/_down/_xor,
 *     __ballot_sync, __any/__all_sync, __activemask, __syncwarp), __threadfence*,
 *     the C math library and CUDA's fast-math names (__expf, rsqrtf, __fdividef,
 *     __saturatef...), printf, and all of gx/device.h.  -D/-U options apply; other
 *     NVRTC options are ignored.
 *   - Outside the subset, refused at compile time with GX_ERR_UNSUPPORTED naming
 *     the construct and its file:line:column: inline PTX (asm), tensor cores
 *     (wmma, mma_sync), textures and surfaces, cooperative groups (grid sync),
 *     device-side launches, __half/__nv_bfloat16 (gx/device.h's gx_f16 / gx_bf16 and
 *     their conversions work on both backends), CUB, libcu++, __match_*_sync.
 *     Template kernels (name_expressions) are CUDA-only.
 *   - Checked mode works as on the GPU: gx_at (global or __shared__ arrays) and
 *     assert() record the first failure, the launch returns GX_OK and the next
 *     gx_sync returns GX_ERR_KERNEL_FAULT with the same message ("checked kernel
 *     failure in <fn> (<file>:<line>), block .. thread ..: index out of bounds
 *     (index i, valid 0..n-1)"); plain shared-array indexing is not checked.
 *     Unchecked, a failed assert() makes the launch return GX_ERR_KERNEL_FAULT
 *     naming the kernel and the expression (the process is never aborted).
 *   - The model: a grid's blocks are spread over the pool's workers (all cores); a
 *     worker runs one block at a time.  A kernel with no barrier or warp intrinsic
 *     (in its body or the device functions it calls; decided per kernel) runs its
 *     threads as a loop, inlined, with threadIdx a value of the loop (so the
 *     compiler vectorises it over threadIdx.x).  A kernel whose only waits are `__syncthreads();`
 *     statements at its top level or inside for/while/if/else/{ } statements (any
 *     nesting) is cut at its barriers ("loop fission"): each barrier-free stretch
 *     runs as one loop over the block's threads, variables declared between
 *     barriers get one copy per thread, and the conditions of the statements that
 *     hold barriers must be the same for every thread of the block (CUDA's rule):
 *     they are evaluated by every thread, and threads that disagree are reported
 *     as a barrier in divergent code.  Threads may `return` only after the last
 *     barrier there.  Within a barrier-free stretch, a `for` whose trip is the same
 *     for every thread -- it declares its variable, and its start, condition and
 *     step use only literals, blockIdx/blockDim/gridDim, parameters that are not
 *     pointers and never assigned, and macros of those; its body never assigns
 *     the variable and has no break/continue/return/goto -- is interchanged with
 *     the thread loop: `for (k) for (each thread) body` (legal: CUDA orders no
 *     two threads between barriers, and each thread still runs its iterations in
 *     order), so a tiled matmul's inner product runs as vectors across threadIdx.x.
 *     Variables declared between barriers and fixed for the thread's whole run
 *     (e.g. `int tx = threadIdx.x, row = blockIdx.y * TILE + ty;`, never
 *     assigned again) are recomputed in each stretch rather than stored.  Every other kernel with a barrier or warp intrinsic (warp
 *     intrinsics, __syncthreads_count/and/or, barriers in called device functions
 *     or macros, return before a barrier, break/continue out of a loop that holds
 *     a barrier, do/switch around one) runs each thread as a fiber (64 KiB stack)
 *     switched at barriers and warp intrinsics.  GX_CPU_KERNEL_LOG=1 prints which
 *     of the three each kernel got (and why not fission, or how many loops were
 *     interchanged); =2 also prints the rewritten kernels, =3 the whole C++ source
 *     handed to the compiler; GX_CPU_FISSION=0 turns fission (and the rewritten
 *     thread loops) off.  Atomics on the running block's
 *     shared memory take a plain (unlocked) path.  GX_FOR_EACH gives each thread a
 *     contiguous share of the range on the CPU (gx/device.h).  A missing __syncthreads() gives
 *     wrong results, never a hang; a barrier that some threads of a block skip
 *     (they returned) is GX_ERR_KERNEL_FAULT "kernel fault in <name> ...:
 *     __syncthreads() in divergent code",
 *     returned by the launch itself (CPU launches are complete on return).
 *   - Limits (gx_device_info): 1024 threads per block (block dims 1024 x 1024 x 64),
 *     grid dims 2^31-1 x 65535 x 65535, 1 MiB of dynamic shared memory per block;
 *     above each, GX_ERR_LAUNCH naming it.  Cooperative launches: GX_ERR_UNSUPPORTED.
 *   - Occupancy model: gx_kernel_suggest gives blocks of 256 and fill_grid = 4
 *     blocks per worker; gx_kernel_active_blocks answers 4.  gx_kernel_attrs_get:
 *     registers 0, max_threads_per_block 1024, arch "cpu".  gx_kernel_ptx/_sass
 *     of a CPU kernel: GX_ERR_UNSUPPORTED (gx_kernel_ptx_offline needs only NVRTC
 *     -- no GPU, no driver).
 * Streams on the CPU are no-ops that keep the semantics (the CPU backend's work is
 * complete when each call returns), and gx_host_alloc returns ordinary memory.
 *
 * Kernels may `#include <gx/device.h>` (gx supplies it to NVRTC; no include path is
 * needed): indexing helpers, a grid-stride loop, warp/block reductions and scans,
 * cf32/cf64 complex numbers, and the Philox4x32-10 counter-based generator.
 * gx also supplies <assert.h> (see checked mode in gx/device.h).  The CUDA
 * toolkit's device headers -- cooperative_groups.h (and its reduce/scan parts),
 * mma.h, cuda_fp16.h, cuda_bf16.h, cuda/std/..., cub/... -- are found at run time
 * (gx_kernel_include_path).  A kernel containing "<<<" (a device-side launch) is
 * built as relocatable code and linked with the CUDA device runtime (nvJitLink). */
#ifndef GX_KERNEL_H
#define GX_KERNEL_H
#include "../gx.h"
#include <stdio.h>
#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ compile */

typedef struct gx_kernel gx_kernel;
typedef struct gx_stream gx_stream;

typedef struct gx_kernel_opts {
    /* Extra NVRTC options, e.g. "-DTILE=16", "--maxrregcount=64", "--use_fast_math".
     * They are part of the kernel cache key.  gx always passes the device's arch,
     * -std=c++17, -default-device and -lineinfo; do not pass an arch yourself. */
    const char *const *options;
    int noptions;
    /* Name shown by the profiler and in messages; NULL = the entry name. */
    const char *label;
    /* Template instantiations to compile (nvrtcAddNameExpression), e.g.
     * "scale<float>" or "&scale<double>": the entry passed to gx_kernel_compile
     * may then be one of these texts (gx looks up its mangled name).  They are
     * looked up in the first source.  At most 64. */
    const char *const *name_expressions;
    int nname_expressions;
    /* 1: checked mode (also for every kernel when GX_KERNEL_CHECKS=1 is in the
     * environment): gx_at and assert() failures are recorded and reported by the
     * next synchronising call as GX_ERR_KERNEL_FAULT naming the function, block,
     * thread and message; the context stays usable.  See gx/device.h. */
    int checked;
    /* 1: relocatable device code linked with the CUDA device runtime (libcudadevrt.a,
     * through nvJitLink): kernels that launch kernels (dynamic parallelism, incl.
     * cudaStreamTailLaunch and cudaStreamFireAndForget).  Automatic when the
     * source contains "<<<". */
    int rdc;
    /* 1: link-time optimisation (sources compiled to LTO-IR, linked by nvJitLink
     * with -lto). */
    int lto;
    uint64_t reserved[3]; /* zero (see the conventions in gx.h) */
} gx_kernel_opts;

/* Compiles CUDA C++ `source` and looks up the kernel `entry` (declare it
 * `extern "C" __global__`, or give its mangled name).  Nothing is launched: use the
 * handle to inspect (attrs, PTX, SASS) or to launch.  Compiled code is cached in
 * memory and on disk (key: source + options + device arch + gx version), so the
 * second compile of the same text is instant.  opts may be NULL.
 * Errors: GX_ERR_COMPILE with the NVRTC log; GX_ERR_INVALID_ARGUMENT when `entry`
 * is not a __global__ function of the module; GX_ERR_UNSUPPORTED on the CPU backend
 * for a construct outside its CUDA C subset (see the top of this file).
 * The handle belongs to ctx: destroy it before the context (the context frees what
 * is left at gx_ctx_destroy). */
GX_API gx_status gx_kernel_compile(gx_ctx *ctx, const char *source, const char *entry, const gx_kernel_opts *opts,
                                   gx_kernel **out);
/* A kernel built from several sources (e.g. device functions in a library text,
 * declared `extern __device__` where used), each compiled as relocatable code and
 * linked with nvJitLink; names[i] (may be NULL: "source<i>.cu") names source i in
 * messages.  `entry` is looked up in the linked module, as for gx_kernel_compile.
 * 1 <= nsources <= 32.  Errors as gx_kernel_compile, plus GX_ERR_UNSUPPORTED when
 * nvJitLink (libnvJitLink.so, from the CUDA toolkit) cannot be loaded. */
GX_API gx_status gx_kernel_compile_sources(gx_ctx *ctx, int nsources, const char *const *sources,
                                           const char *const *names, const char *entry, const gx_kernel_opts *opts,
                                           gx_kernel **out);
/* NULL is accepted. */
GX_API gx_status gx_kernel_destroy(gx_kernel *k);
/* The CUDA include folders that kernels are compiled with, colon-separated: the
 * toolkit's include (and include/cccl) found from the loaded NVRTC, $CUDA_HOME,
 * $CUDA_PATH or /usr/local/cuda; GX_CUDA_INCLUDE (a colon-separated list) replaces
 * the search.  cap/needed convention of gx_info_text.  The list is part of every
 * user kernel's cache key.  With no folder found, kernels that include only
 * <gx/device.h> and <assert.h> (both supplied by gx) still compile; a missing
 * header is GX_ERR_COMPILE naming the folders searched. */
GX_API gx_status gx_kernel_include_path(char *buf, size_t cap, size_t *needed);

/* ------------------------------------------------------------------ arguments */

typedef enum gx_karg_kind {
    GX_KARG_KIND_ARRAY = 1, /* a gx array: the kernel receives the address of its first element */
    GX_KARG_KIND_PTR,       /* a raw device address (void *), passed as is */
    GX_KARG_KIND_SCALAR     /* a value of `dtype`, passed by value */
} gx_karg_kind;

/* One kernel argument.  Build them with the GX_KARG_* macros. */
typedef struct gx_karg {
    gx_karg_kind kind;
    gx_dtype dtype; /* SCALAR: the value's type; ARRAY/PTR: ignored */
    union {
        const gx_array *array;
        void *ptr;
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        float f32;
        double f64;
        _Bool b;
    } v;
} gx_karg;

#define GX_KARG_ARRAY(a) ((gx_karg){GX_KARG_KIND_ARRAY, GX_DTYPE_DEFAULT, {.array = (a)}})
#define GX_KARG_PTR(p) ((gx_karg){GX_KARG_KIND_PTR, GX_DTYPE_DEFAULT, {.ptr = (void *)(p)}})
#define GX_KARG_BOOL(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_BOOL, {.b = (x)}})
#define GX_KARG_I8(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_I8, {.i8 = (x)}})
#define GX_KARG_I16(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_I16, {.i16 = (x)}})
#define GX_KARG_I32(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_I32, {.i32 = (x)}})
#define GX_KARG_I64(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_I64, {.i64 = (x)}})
#define GX_KARG_U8(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_U8, {.u8 = (x)}})
#define GX_KARG_U16(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_U16, {.u16 = (x)}})
#define GX_KARG_U32(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_U32, {.u32 = (x)}})
#define GX_KARG_U64(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_U64, {.u64 = (x)}})
#define GX_KARG_F32(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_F32, {.f32 = (x)}})
#define GX_KARG_F64(x) ((gx_karg){GX_KARG_KIND_SCALAR, GX_F64, {.f64 = (x)}})

/* ------------------------------------------------------------------ launch */

/* Grid and block in up to 3 dimensions.  A 0 in grid[1..2] / block[1..2] counts as
 * 1, so {.grid = {g}, .block = {b}} is a 1-D launch; grid[0] and block[0] must be
 * > 0.  shmem: bytes of dynamic (extern __shared__) memory; where it and the
 * kernel's static __shared__ memory together pass the default 48 KB, gx opts the
 * kernel in, up to the device's maximum for the two together (more is
 * GX_ERR_LAUNCH naming both).  stream: NULL = the context's
 * current stream (see gx_ctx_set_stream).  cooperative: launch with
 * cuLaunchCooperativeKernel (grid-wide sync allowed; the whole grid must be
 * co-resident, else GX_ERR_LAUNCH naming the maximum). */
typedef struct gx_launch_cfg {
    unsigned grid[3];
    unsigned block[3];
    size_t shmem;
    gx_stream *stream;
    int cooperative;
} gx_launch_cfg;

/* Launches k with `nargs` arguments (asynchronous: returns once queued).
 * Checks first, each failure naming the broken limit (GX_ERR_LAUNCH): threads per
 * block ("block of 100000 threads exceeds the device limit of 1024 threads per
 * block"), each block/grid dimension, dynamic + static shared memory against the
 * device's opt-in maximum, this kernel's own threads-per-block limit (registers).
 * Arguments are checked against the __global__ entry's parameter list as written in
 * the source (when gx can read it): the count; pointer parameters take ARRAY or
 * PTR, scalar ones SCALAR; a scalar's dtype must equal the parameter's type
 * (int/int32_t = i32, long long/int64_t = i64, unsigned = u32, size_t/uint64_t = u64,
 * float = f32, double = f64, bool = bool, ...); an array's dtype must match a pointer
 * to a known element type (float * = f32...; void * and unknown types accept any;
 * __half * and gx_f16 * take an f16 array, __nv_bfloat16 * and gx_bf16 * a bf16 one, or a u16
 * array, the same 16 bits per element).
 * A mismatch is GX_ERR_TYPE naming the parameter ("argument 2 (n): the kernel
 * declares int64_t, got f32").  Templates/unreadable lists: only the count of
 * arguments against the entry's ABI is left to the driver.
 * In checked mode (opts->checked or GX_KERNEL_CHECKS=1) a failed assert() or gx_at
 * is NOT a fault: it is recorded, the thread carries on, and gx_sync /
 * gx_stream_sync / gx_event_sync return GX_ERR_KERNEL_FAULT naming the kernel, block,
 * thread and message with the context still usable (gx/device.h).  Unchecked, a
 * failed assert() traps like any device fault:
 * A fault inside the kernel (illegal address, misaligned access, a failed device
 * assert...) surfaces at the next synchronising call (gx_sync, gx_array_to_host,
 * gx_event_elapsed_ms...) as GX_ERR_KERNEL_FAULT.  CUDA keeps such a "sticky" error
 * for the rest of the PROCESS: from then on every call on that context, on other
 * CUDA contexts of the process, and gx_ctx_create(GX_BACKEND_CUDA) return
 * GX_ERR_KERNEL_FAULT with a message that says to restart the process (measured with
 * driver 580 / CUDA 13.0: neither a reset of the device's primary context nor a
 * context of gx's own recovers).  gx_ctx_destroy of a context whose fault was
 * reported releases everything and returns GX_OK (if the fault first shows during
 * destroy's own wait it is returned, after releasing).  CPU-backend contexts are
 * unaffected.  A program that must survive faulty kernels runs them in a child
 * process (a new process gets a working device). */
GX_API gx_status gx_kernel_launch(gx_kernel *k, const gx_launch_cfg *cfg, int nargs, const gx_karg *args);

/* ------------------------------------------------------------------ occupancy & reflection */

/* A 1-D configuration for n items, one item per thread: block from the occupancy
 * API (cuOccupancyMaxPotentialBlockSize with `shmem` bytes of dynamic shared memory),
 * grid = ceil(n / block) (at least 1).  Writes cfg->grid/block (other fields are set
 * to shmem, NULL stream, not cooperative).  fill_grid, if not NULL, receives the
 * number of blocks that fill the device at that block size -- the grid to use
 * with a grid-stride loop (GX_FOR_EACH in gx/device.h). */
GX_API gx_status gx_kernel_suggest(gx_kernel *k, int64_t n, size_t shmem, gx_launch_cfg *cfg, unsigned *fill_grid);
/* Resident blocks per multiprocessor for `block` threads and `shmem` dynamic bytes
 * (cuOccupancyMaxActiveBlocksPerMultiprocessor). */
GX_API gx_status gx_kernel_active_blocks(gx_kernel *k, int block, size_t shmem, int *blocks_per_sm);

typedef struct gx_kernel_attrs {
    int registers;             /* per thread */
    size_t static_shared;      /* bytes of __shared__ declared in the source */
    size_t local_bytes;        /* per thread: spills and local arrays */
    size_t const_bytes;        /* __constant__ bytes */
    int max_threads_per_block; /* this kernel's limit (can be < the device's) */
    int max_dynamic_shared;    /* dynamic shared bytes it may use now */
    int ptx_version;           /* e.g. 90 for compute_90 (major*10 + minor) */
    int binary_version;        /* SASS arch, e.g. 90 for sm_90 */
    int nparams;               /* parameters gx read from the source; -1 if unread */
    char entry[128];           /* the entry name */
    char arch[16];             /* what NVRTC compiled for: "sm_90", or "compute_90" (PTX JIT) */
} gx_kernel_attrs;

/* Facts about the compiled kernel (cuFuncGetAttribute). */
GX_API gx_status gx_kernel_attrs_get(gx_kernel *k, gx_kernel_attrs *out);
/* The kernel's PTX (NVRTC, same source and options, the device's virtual arch).
 * *text is malloc'ed and NUL-terminated: free it with gx_text_free.  A CPU
 * backend kernel has none: GX_ERR_UNSUPPORTED (also gx_kernel_sass). */
GX_API gx_status gx_kernel_ptx(gx_kernel *k, char **text);
/* The kernel's SASS through `cuobjdump --dump-sass` (or nvdisasm) from PATH or
 * $CUDA_HOME/bin, /usr/local/cuda/bin.  GX_ERR_UNSUPPORTED naming the tools when
 * neither is installed.  *text: free with gx_text_free. */
GX_API gx_status gx_kernel_sass(gx_kernel *k, char **text);
/* PTX without a context or GPU (NVRTC only): `arch` like "sm_90", "compute_80" or
 * "90" (NULL = sm_90), opts as for gx_kernel_compile (may be NULL).  If entry is
 * not NULL, GX_ERR_INVALID_ARGUMENT unless the PTX defines that entry.
 * GX_ERR_UNSUPPORTED when NVRTC is not installed.  *text: free with gx_text_free. */
GX_API gx_status gx_kernel_ptx_offline(const char *source, const char *entry, const char *arch,
                                       const gx_kernel_opts *opts, char **text);
/* SASS without a context: compiles a cubin for `arch` (an sm_ arch; NULL = sm_90)
 * with NVRTC and disassembles it as gx_kernel_sass does. */
GX_API gx_status gx_kernel_sass_offline(const char *source, const char *arch, const gx_kernel_opts *opts, char **text);
/* Frees text returned by gx (NULL is accepted). */
GX_API void gx_text_free(char *text);
/* The text of gx/device.h as gx hands it to NVRTC (static, NUL-terminated). */
GX_API const char *gx_device_header(void);

/* ------------------------------------------------------------------ streams */

/* A new stream of the context (CUDA: a non-blocking stream; CPU: a token, all
 * work is synchronous).  Destroy it before the context. */
GX_API gx_status gx_stream_create(gx_ctx *ctx, gx_stream **out);
/* Waits for the stream's work, then destroys it; if it is the context's current
 * stream, the context goes back to its default stream.  NULL is accepted. */
GX_API gx_status gx_stream_destroy(gx_stream *s);
/* Waits until the stream's work has finished (reports kernel faults). */
GX_API gx_status gx_stream_sync(gx_stream *s);
/* Makes every later operation of ctx (allocations, copies, map, reductions, user
 * kernels, events) use stream s; NULL = the context's default stream.  Arrays stay
 * valid on any stream; ordering between streams is yours to express with events
 * (gx_event_record_on + gx_stream_wait_event).  gx_sync waits for the default and
 * the current stream; synchronous copies (gx_array_to_host...) wait for the current
 * stream only. */
GX_API gx_status gx_ctx_set_stream(gx_ctx *ctx, gx_stream *s);
/* The current stream (NULL = default). */
GX_API gx_status gx_ctx_get_stream(gx_ctx *ctx, gx_stream **out);
/* Records e on stream s (NULL = the context's default stream).  gx_event_record
 * records on the current stream. */
GX_API gx_status gx_event_record_on(gx_event *e, gx_stream *s);
/* Makes later work on stream s (NULL = default stream) wait until e has happened,
 * without blocking the host (cuStreamWaitEvent).  e must have been recorded. */
GX_API gx_status gx_stream_wait_event(gx_stream *s, gx_event *e);
/* Blocks the host until e has happened. */
GX_API gx_status gx_event_sync(gx_event *e);

/* ------------------------------------------------------------------ page-locked host memory */

/* Page-locked (pinned) host memory of ctx's device (cuMemHostAlloc), usable for
 * asynchronous copies.  CPU backend: ordinary memory.  Free with gx_host_free
 * before destroying the context. */
GX_API gx_status gx_host_alloc(gx_ctx *ctx, size_t bytes, void **out);
/* Frees memory from gx_host_alloc (waits for the context's streams).  NULL is accepted. */
GX_API gx_status gx_host_free(gx_ctx *ctx, void *p);
/* Like gx_array_from_host_into / gx_array_to_host but queued on the current stream
 * WITHOUT waiting: the host buffer must stay untouched until the stream reaches
 * that point (gx_stream_sync / gx_event_sync / gx_sync).  Asynchronous only for a
 * dense array and a buffer from gx_host_alloc (or other page-locked memory); with
 * pageable memory or a strided view they fall back to the synchronous copy. */
GX_API gx_status gx_array_from_host_into_async(const void *host, size_t host_bytes, gx_array *out);
GX_API gx_status gx_array_to_host_async(const gx_array *a, void *host, size_t host_bytes);

/* ------------------------------------------------------------------ profiler */

/* GX_PROFILE=1 in the environment starts the profiler on every new context and
 * prints the report to stderr when the context is destroyed; GX_PROFILE=trace adds
 * one row per launch (grid, block, registers, shared memory).
 * The report has one row per kernel label (gx_map, gx_fill, reduce..., or a user
 * kernel's label) and per copy/allocation kind ([copy HtoD], [copy DtoH],
 * [copy DtoD], [alloc], [free]): time %, total, calls, mean ± std (min … max), name.
 * GPU times come from CUDA events around each operation (resolved at report time),
 * CPU times from the host clock.  Every gx operation is also an NVTX range named
 * after it, visible in Nsight Systems (with or without the profiler). */
GX_API gx_status gx_profile_start(gx_ctx *ctx, int trace);
/* Stops recording; what was recorded stays until gx_profile_reset. */
GX_API gx_status gx_profile_stop(gx_ctx *ctx);
/* Forgets everything recorded. */
GX_API gx_status gx_profile_reset(gx_ctx *ctx);
/* Prints the table (waits for the recorded work to finish). */
GX_API gx_status gx_profile_report(gx_ctx *ctx, FILE *f);
/* The same report as text (cap/needed convention of gx_info_text). */
GX_API gx_status gx_profile_report_text(gx_ctx *ctx, char *buf, size_t cap, size_t *needed);

#ifdef __cplusplus
}
#endif
#endif
