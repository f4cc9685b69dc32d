/*
 * gx.h -- GPU array programming from C.
 *
 * Conventions (they hold for every function of gx.h and the gx/ headers unless its comment
 * says otherwise):
 *  - Every call returns a gx_status; GX_OK (0) is success.  On failure the calling
 *    thread's gx_last_error() holds one message: what was wrong, where, what to do.
 *  - Handles are opaque.  They are created through an out-parameter (set to NULL on
 *    failure) and released by a *_destroy / *_release that accepts NULL.
 *  - One shape for every operation: the context (when it takes one), then the inputs,
 *    then the options, then the result last.  A result that is a NEW array comes back
 *    through `gx_array **out` (whatever *out held before is ignored).  Writing into an
 *    array you already have is a separate call named *_into that takes that array
 *    last, as `gx_array *out` (e.g. gx_map / gx_map_into, gx_matmul / gx_matmul_into,
 *    gx_array_copy_into(src, dst)).  Host results (a gx_scalar, a count) also come
 *    last.  Methods of one array (describe, view, reshape, fill, get/set, release)
 *    take that array first.
 *  - Options come as a pointer to a gx_*_opts struct.  A NULL pointer and an
 *    all-zero struct mean the same thing: every default (so `gx_map_opts o = {0}` is
 *    safe, and designated initialisers set just what you need).  In particular a
 *    dtype field of 0 is GX_DTYPE_DEFAULT, never an element type.  Each options struct
 *    ends in `reserved`, which must stay zero: later versions put new fields there,
 *    so the struct keeps its size and a program compiled against an older gx.h keeps
 *    working; a nonzero reserved word is GX_ERR_INVALID_ARGUMENT.
 *  - Scalars (constants for lambdas, initial values, alpha/beta, results on the host)
 *    are one type, gx_scalar; a named constant is a gx_const {name, gx_scalar}.
 *    Constants reach lambdas the same way in every call: opts->consts / nconsts.
 *  - Operators: every call that takes one accepts the same names ("+" "*" "max" "min"
 *    "&" "|" "^" "&&" "||" and the words "sum" "prod" "maximum" "minimum" "all"
 *    "any") and a two-parameter lambda "a, b -> ..." (see gx/reduce.h).
 *  - Writing into an existing output of another dtype than the result's converts each
 *    value as a C cast from the result dtype (integers wrap modulo 2^bits, floats to
 *    integers truncate toward zero and are unspecified outside the integer's range,
 *    bool is x != 0, a real value becomes a complex one with imaginary part 0; complex
 *    to real is GX_ERR_DTYPE: take re(x) or abs(x)).  Set opts->exact_dtype to make
 *    any conversion GX_ERR_DTYPE instead.
 *  - Arrays are N-d (up to GX_MAX_DIMS), row-major, strides counted in elements.
 *    Work is issued on the context's stream and is asynchronous on GPU backends:
 *    results read back with gx_array_to_host() are complete when it returns;
 *    gx_sync() waits for everything else.
 *
 * Threads: separate contexts used from separate threads are independent.  One
 * context (and its arrays) may be used from several threads at once: the memory
 * pool, the stream, the kernel caches and the handle table are locked; work from
 * different threads on one context is serialised on its stream in the order the
 * calls take the context lock.  Writing the same array from two threads at once is
 * a data race in the user's program, as in C.  gx_last_error() is per thread.
 */
#ifndef GX_H
#define GX_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h> /* exit(), for GX_CHECK */

#ifdef __cplusplus
extern "C" {
#endif

#define GX_VERSION_MAJOR 0
#define GX_VERSION_MINOR 1
#define GX_VERSION_PATCH 0
#define GX_VERSION_STRING "0.1.0"
/* One integer that grows with every release: major*10000 + minor*100 + patch. */
#define GX_VERSION_NUMBER (GX_VERSION_MAJOR * 10000 + GX_VERSION_MINOR * 100 + GX_VERSION_PATCH)

#if defined(_WIN32)
#define GX_API
#else
#define GX_API __attribute__((visibility("default")))
#endif

#define GX_MAX_DIMS 8

/* ------------------------------------------------------------------ status */

typedef enum gx_status {
    GX_OK = 0,
    GX_ERR_INVALID_ARGUMENT, /* a NULL where a value is needed, a bad enum, a bad size */
    GX_ERR_INVALID_HANDLE,   /* a handle that is not live (released, or never made by gx) */
    GX_ERR_OUT_OF_MEMORY,    /* device or host memory exhausted after trimming the pool */
    GX_ERR_SHAPE,            /* shapes that do not match or broadcast, bad reshape, bad view */
    GX_ERR_DTYPE,            /* a dtype the operation does not accept */
    GX_ERR_SYNTAX,           /* a lambda that does not parse (message has a caret) */
    GX_ERR_TYPE,             /* a lambda that parses but is ill-typed or names unknown things */
    GX_ERR_COMPILE,          /* the backend's compiler rejected generated or user code */
    GX_ERR_NO_DEVICE,        /* the requested backend or device is not present */
    GX_ERR_BACKEND,          /* the driver / runtime library reported an error (its name is in the message) */
    GX_ERR_LAUNCH,           /* a launch configuration broke a device limit */
    GX_ERR_KERNEL_FAULT,     /* a kernel faulted (e.g. illegal address); CUDA is unusable until the process restarts */
    GX_ERR_UNSUPPORTED,      /* valid request this backend or build cannot do */
    GX_ERR_IO,               /* a file could not be read or written */
    GX_ERR_INTERNAL,         /* a bug in gx: please report it with the message */
    GX_ERR_INDEX,            /* an index out of range (the message names position, index, axis and size) */
    GX_ERR_TIMEOUT           /* a collective did not finish in time: a peer failed or is stuck (gx/comm.h) */
} gx_status;

/* Name of a status ("GX_ERR_SHAPE"); never NULL. */
GX_API const char *gx_status_string(gx_status s);
/* The calling thread's last error message ("" if none).  Valid until this thread's next gx call. */
GX_API const char *gx_last_error(void);
/* Clears the calling thread's last error message. */
GX_API void gx_clear_error(void);
/* Library version string, e.g. "0.1.0" (the library that is running, not the header). */
GX_API const char *gx_version(void);

/* Prints "file:line: expr: GX_ERR_NAME: <gx_last_error()>" to stderr when s is not
 * GX_OK, and returns s.  The macros below call it; use it in your own checks. */
GX_API gx_status gx_report(gx_status s, const char *expr, const char *file, int line);

/* Status checks a program can adopt (gx's own examples use them):
 *   GX_CHECK(call);  on failure prints where, the status and the message, then ends
 *                    the program with exit(EXIT_FAILURE) -- for main() and tools;
 *   GX_TRY(call);    on failure prints the same, then returns the status from the
 *                    enclosing function, which must return gx_status.
 * GX_CHECK needs <stdlib.h> (exit), which gx.h includes. */
#define GX_CHECK(call)                                         \
    do {                                                       \
        gx_status gx_check_s_ = (call);                        \
        if (gx_check_s_ != GX_OK) {                            \
            gx_report(gx_check_s_, #call, __FILE__, __LINE__); \
            exit(EXIT_FAILURE);                                \
        }                                                      \
    } while (0)
#define GX_TRY(call)                                                \
    do {                                                            \
        gx_status gx_try_s_ = (call);                               \
        if (gx_try_s_ != GX_OK)                                     \
            return gx_report(gx_try_s_, #call, __FILE__, __LINE__); \
    } while (0)

/* ------------------------------------------------------------------ dtypes */

typedef enum gx_dtype {
    GX_DTYPE_DEFAULT = 0, /* in options: "the operation's default dtype"; not an element type */
    GX_BOOL,
    GX_I8,
    GX_I16,
    GX_I32,
    GX_I64,
    GX_U8,
    GX_U16,
    GX_U32,
    GX_U64,
    GX_F16,  /* IEEE binary16 (1+5+10 bits); computes in f32, rounds when stored */
    GX_BF16, /* bfloat16 (the top 16 bits of an f32); computes in f32, rounds when stored */
    GX_F32,
    GX_F64,
    GX_C64,  /* complex: {float re, im} (cf32 in lambdas / user functions) */
    GX_C128, /* complex: {double re, im} (cf64) */
    GX_DTYPE_COUNT
} gx_dtype;

/* Size of one element in bytes; 0 for an invalid dtype. (Pure query, no status.) */
GX_API size_t gx_dtype_size(gx_dtype t);
/* Short name ("f32"); "default" for GX_DTYPE_DEFAULT (which messages about options
 * name), "?" for an invalid dtype. */
GX_API const char *gx_dtype_name(gx_dtype t);
/* Parses a short name ("f32", "i64", "bool"...).  GX_ERR_DTYPE if unknown. */
GX_API gx_status gx_dtype_parse(const char *name, gx_dtype *out);

/* Half-precision conversions on the host, bit for bit the ones every kernel uses
 * (CPU and CUDA).  Storage is the 16 raw bits.  To half: round to nearest, ties to
 * even; values beyond the largest finite half (65504 for f16, about 3.39e38 for
 * bf16) by half an ulp or more become inf; values below half the smallest
 * subnormal become a signed zero; NaN stays NaN with its sign, the quiet bit set
 * and the top payload bits kept (f16: 0x7e00 | payload >> 13 of an f32).  The f64
 * forms round once, directly from the double (no double rounding through f32).
 * From half: exact (every half is an f32).  Pure functions, no status. */
GX_API uint16_t gx_f32_to_f16(float x);
GX_API uint16_t gx_f64_to_f16(double x);
GX_API float gx_f16_to_f32(uint16_t h);
GX_API uint16_t gx_f32_to_bf16(float x);
GX_API uint16_t gx_f64_to_bf16(double x);
GX_API float gx_bf16_to_f32(uint16_t h);

/* ------------------------------------------------------------------ scalars */

/* One value of a dtype -- the one scalar type of gx (constants, initial values,
 * alpha/beta, results on the host).  Which member holds the value: f for floats (f16,
 * bf16, f32, f64), i for bool and signed integers, u for unsigned integers (i and u
 * share storage, so either reads a value below 2^63), c[0] + i*c[1] for c64/c128. */
typedef struct gx_scalar {
    gx_dtype dtype;
    union {
        double f;
        int64_t i;
        uint64_t u;
        double c[2];
    } v;
} gx_scalar;

#define GX_SCALAR_BOOL(x) ((gx_scalar){GX_BOOL, {.i = (x) != 0}})
#define GX_SCALAR_I32(x) ((gx_scalar){GX_I32, {.i = (x)}})
#define GX_SCALAR_I64(x) ((gx_scalar){GX_I64, {.i = (x)}})
#define GX_SCALAR_U32(x) ((gx_scalar){GX_U32, {.u = (x)}})
#define GX_SCALAR_U64(x) ((gx_scalar){GX_U64, {.u = (x)}})
#define GX_SCALAR_F32(x) ((gx_scalar){GX_F32, {.f = (x)}})
#define GX_SCALAR_F64(x) ((gx_scalar){GX_F64, {.f = (x)}})
#define GX_SCALAR_C64(re, im) ((gx_scalar){GX_C64, {.c = {(re), (im)}}})
#define GX_SCALAR_C128(re, im) ((gx_scalar){GX_C128, {.c = {(re), (im)}}})

/* The value as a double (u64 and i64 beyond 2^53 round; complex: the real part).
 * Pure, no status. */
GX_API double gx_scalar_to_f64(gx_scalar s);

/* A named constant that lambdas see by name: GX_CONST("a", GX_SCALAR_F32(2)).  The
 * macros make compound literals, which C does not accept in a static initialiser:
 * there, spell the braces out, {"a", {GX_F32, {.f = 2}}}. */
typedef struct gx_const {
    const char *name;
    gx_scalar value;
} gx_const;
#define GX_CONST(n, s) ((gx_const){(n), s})

/* A named array that lambdas read by index: GX_BIND("table", t) lets a lambda write
 * table[i] (one index per axis, m[i, j] for a 2-d array; see docs/LAMBDAS.md).  The
 * array must belong to the call's context; any dtype lambdas take, any rank, any view.
 * Each index is checked on the device: an index outside [0, size) of its axis (a
 * negative one included: there is no wrap-around) reads as 0 and makes the call
 * return GX_ERR_INDEX naming the position, the index, the array, the axis and its
 * size, unless the options' `unchecked` is set. */
typedef struct gx_bind {
    const char *name;
    const struct gx_array *array;
} gx_bind;
#define GX_BIND(n, a) ((gx_bind){(n), (a)})

/* ------------------------------------------------------------------ context */

typedef enum gx_backend_kind {
    GX_BACKEND_AUTO = 0, /* GX_BACKEND env var if set (auto|cpu|cuda), else CUDA when a device answers, else CPU */
    GX_BACKEND_CPU,
    GX_BACKEND_CUDA
} gx_backend_kind;

typedef struct gx_ctx gx_ctx;

/* Creates a context on `kind` (device 0 for CUDA).  Asking for CUDA where there is no
 * usable device is GX_ERR_NO_DEVICE, never a silent fallback to CPU. */
GX_API gx_status gx_ctx_create(gx_ctx **out, gx_backend_kind kind);
/* Same on a given device index (CUDA: 0 .. gx_cuda_device_count() - 1; the CPU has
 * index 0 only).  Any other index is GX_ERR_NO_DEVICE. */
GX_API gx_status gx_ctx_create_on(gx_ctx **out, gx_backend_kind kind, int device);
/* Waits for outstanding work, frees every cached kernel and the pool, releases the
 * context.  Arrays still alive become invalid handles (their release then reports
 * GX_ERR_INVALID_HANDLE).  NULL is accepted.  A context whose kernel fault was
 * already reported is released and the call returns GX_OK (see gx/kernel.h). */
GX_API gx_status gx_ctx_destroy(gx_ctx *ctx);
/* Which backend the context runs on (never AUTO). */
GX_API gx_status gx_ctx_backend(const gx_ctx *ctx, gx_backend_kind *out);
/* Name of a backend kind: "auto", "cpu", "cuda". */
GX_API const char *gx_backend_name(gx_backend_kind kind);
/* Waits until all work issued on the context's stream has finished. Reports
 * asynchronous errors (e.g. a kernel fault) that happened since the last check. */
GX_API gx_status gx_sync(gx_ctx *ctx);

/* ------------------------------------------------------------------ info */

typedef struct gx_device_info {
    char name[128];
    int cc_major, cc_minor;        /* compute capability (0.0 on CPU) */
    int multiprocessors;           /* SMs on CUDA, cores on CPU */
    size_t mem_total, mem_free;    /* bytes; CPU: what this process can use, physical memory
                                    * or the cgroup's cap when smaller */
    size_t l2_bytes;               /* L2 cache (last-level cache on CPU, 0 if unknown) */
    int max_threads_per_block;     /* CPU: 1024, the limit of user kernels' blocks (gx/kernel.h) */
    size_t shared_per_block;       /* default shared memory per block (bytes; CPU: 1 MiB) */
    size_t shared_per_block_optin; /* opt-in maximum (bytes) */
    int warp_size;                 /* 32 (the CPU emulates warps of 32 for user kernels) */
    double mem_bandwidth_gbs;      /* theoretical peak from clock and bus width, 0 if unknown */
} gx_device_info;

/* Facts about the context's device. */
GX_API gx_status gx_device_info_get(gx_ctx *ctx, gx_device_info *out);
/* Number of CUDA devices that answer (0 without a driver or GPU; never an error). */
GX_API gx_status gx_cuda_device_count(int *out);

/* Writes the full report that `gx info` prints (versions, build options, backend,
 * devices, libraries, memory) into buf (NUL-terminated, truncated to cap).
 * *needed, if not NULL, receives the full length + 1.  ctx may be NULL (then the
 * report describes what gx_ctx_create(AUTO) would pick). */
GX_API gx_status gx_info_text(gx_ctx *ctx, char *buf, size_t cap, size_t *needed);

/* ------------------------------------------------------------------ memory */

typedef struct gx_memory_stats {
    size_t in_use;    /* bytes held by live arrays (0 once every array is released) */
    size_t peak;      /* highest in_use since the context was made (or stats reset) */
    size_t reserved;  /* bytes the pool holds from the device, in use or cached */
    size_t limit;     /* bytes, 0 = none; covers in_use + scratch.  Default: none on a GPU
                       * (its driver refuses what it lacks); on the CPU backend the memory
                       * the process can use (physical memory, or less under a cgroup),
                       * because the host overcommits and would kill the process when the
                       * pages are touched.  That default is the process's: every CPU
                       * context that keeps it counts against it what all of them hold,
                       * so two contexts together cannot take more than one could.
                       * GX_MEMORY_LIMIT, then gx_memory_set_limit, override it with a
                       * limit for that context alone. */
    uint64_t allocs;  /* allocations served */
    uint64_t retries; /* allocations that needed a trim-and-retry */
    size_t scratch;   /* bytes held by gx's own scratch buffers (reduction partials and
                         * counters, scan status), kept for reuse until the context goes */
} gx_memory_stats;

GX_API gx_status gx_memory_stats_get(gx_ctx *ctx, gx_memory_stats *out);
/* Returns cached, unused pool memory to the device (waits for the stream first). */
GX_API gx_status gx_memory_trim(gx_ctx *ctx);
/* Sets the limit (bytes, 0 = none, even on the CPU backend); overrides the default and
 * GX_MEMORY_LIMIT ("8GiB", "512MB", "50%" of mem_total, "0"/"none").  An allocation that
 * would take in_use + scratch past the limit is GX_ERR_OUT_OF_MEMORY, at once, with the
 * pool state and the limit in the message. */
GX_API gx_status gx_memory_set_limit(gx_ctx *ctx, size_t bytes);

/* ------------------------------------------------------------------ arrays */

typedef struct gx_array gx_array;

typedef struct gx_array_desc {
    gx_dtype dtype;
    int ndim;
    int64_t shape[GX_MAX_DIMS];
    int64_t strides[GX_MAX_DIMS]; /* in elements; may be 0 or negative for views */
    int64_t size;                 /* product of shape */
    int contiguous;               /* 1 if row-major dense */
    int is_view;                  /* 1 if it shares storage made for another array */
} gx_array_desc;

/* Slice of one axis: elements start, start+step, ... while < stop (step > 0) or
 * > stop (step < 0).  Negative start/stop count from the end as in Python; use
 * GX_END for "to the end".  step 0 is an error. */
typedef struct gx_slice {
    int64_t start, stop, step;
} gx_slice;
#define GX_END INT64_MAX
#define GX_ALL ((gx_slice){0, GX_END, 1})

/* A new uninitialised array.  ndim 0 is a scalar (size 1); a 0 in shape is an empty array. */
GX_API gx_status gx_array_empty(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out);
/* A new array filled from `host` (size*dtype_size bytes, row-major). */
GX_API gx_status gx_array_from_host(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, const void *host,
                                    gx_array **out);
/* Copies the array (any view) to `host` as dense row-major; host_bytes must be >= size*elem. Waits. */
GX_API gx_status gx_array_to_host(const gx_array *a, void *host, size_t host_bytes);
/* Writes `host` (dense row-major, host_bytes >= size*elem) into `out` (any view). */
GX_API gx_status gx_array_from_host_into(const void *host, size_t host_bytes, gx_array *out);
GX_API gx_status gx_array_zeros(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out);
GX_API gx_status gx_array_ones(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out);
/* Sets every element (of any view) to the value; `value` points at one element of a's dtype. */
GX_API gx_status gx_array_fill(gx_array *a, const void *value);
/* Same, from a double (converted as C converts double to the dtype). */
GX_API gx_status gx_array_fill_f64(gx_array *a, double value);
/* A new 1-d array: start, start+step, ... (count elements), computed in the dtype's arithmetic. */
GX_API gx_status gx_array_iota(gx_ctx *ctx, gx_dtype dtype, int64_t count, double start, double step, gx_array **out);
/* New uninitialised array with a's dtype and shape (dense, even if a is a view). */
GX_API gx_status gx_array_similar(const gx_array *a, gx_array **out);
/* Copies src into dst element by element; shapes and dtypes must match; any strides on
 * either side.  Overlapping src and dst of one storage is GX_ERR_INVALID_ARGUMENT. */
GX_API gx_status gx_array_copy_into(const gx_array *src, gx_array *dst);
/* A new dense copy of a, converted to `dtype` (as a C cast, see the conventions)
 * unless dtype is GX_DTYPE_DEFAULT (0): then a's dtype. */
GX_API gx_status gx_array_clone(const gx_array *a, gx_dtype dtype, gx_array **out);
/* A view with a new shape sharing storage; a must be contiguous (else GX_ERR_SHAPE:
 * clone it first).  One entry of shape may be -1 (inferred). */
GX_API gx_status gx_array_reshape(gx_array *a, int ndim, const int64_t *shape, gx_array **out);
/* A strided view: one slice per axis (ndim entries).  Shares storage, which stays alive
 * while any view of it lives. */
GX_API gx_status gx_array_view(gx_array *a, const gx_slice *slices, gx_array **out);
/* A view with axes permuted (perm is a permutation of 0..ndim-1); shares storage. */
GX_API gx_status gx_array_permute(gx_array *a, const int *perm, gx_array **out);
/* Releases the handle; storage is freed when its last view is released.  NULL is
 * accepted; a handle released already is GX_ERR_INVALID_HANDLE (where detectable). */
GX_API gx_status gx_array_release(gx_array *a);
/* Shape, strides, dtype... of a. */
GX_API gx_status gx_array_describe(const gx_array *a, gx_array_desc *out);
/* Number of elements. */
GX_API gx_status gx_array_size(const gx_array *a, int64_t *out);
/* The context that owns a. */
GX_API gx_status gx_array_ctx(const gx_array *a, gx_ctx **out);
/* Reads / writes ONE element.  Slow on a GPU (a synchronous round trip per call, like
 * scalar indexing in CUDA.jl): use them for debugging, never in loops. */
GX_API gx_status gx_array_get(const gx_array *a, const int64_t *index, void *value);
GX_API gx_status gx_array_set(gx_array *a, const int64_t *index, const void *value);
/* Device address of the first element (for handing to user kernels / vendor libraries).
 * CPU: a host pointer.  Valid while the array lives. */
GX_API gx_status gx_array_device_ptr(const gx_array *a, void **out);

/* ------------------------------------------------------------------ printing arrays */

/* How gx_array_format / gx_array_print lay an array out.  All zero (or a NULL
 * pointer) means the defaults; negative values are GX_ERR_INVALID_ARGUMENT. */
typedef struct gx_print_opts {
    int64_t threshold;    /* arrays with MORE elements than this are summarised; 0 = 1000
                        * (INT64_MAX: never; 1: every axis longer than 2*edgeitems) */
    int edgeitems;        /* elements shown at each end of a summarised axis; 0 = 3 */
    int precision;        /* significant digits of floats (and of each part of a complex);
                        * 0 = 6 for f32/c64, 8 for f64/c128 (4 f16, 3 bf16); values
                        * above 17 print as 17 */
    int linewidth;        /* rows are wrapped to lines of at most this many characters
                        * (a single element wider than that still gets its own line);
                        * 0 = 75 */
    uint64_t reserved[6]; /* zero (see the conventions) */
} gx_print_opts;

/* Writes a readable text of the array into buf: a header line with dtype and shape,
 * then its logical contents (any view, permuted or negatively strided, prints in
 * index order), NumPy style:
 *     gx_array f32 [2, 3]
 *     [[0.5,   1,   2],
 *      [  3,   4,   5]]
 * One bracket per axis; elements right-aligned to a common width; bool as true/false;
 * integers exact; floats with `precision` significant digits and no trailing zeros,
 * in plain notation unless a shown value needs an exponent (|x| < 1e-4, or the
 * rounded value reaches 10^precision), then every element in e-notation (1.5e-07);
 * nan, inf, -inf as such; complex as 1+2j, -0.5-1j.  A 0-d array prints its value
 * alone; an empty one `[]`.  When the array is summarised, each axis longer than
 * 2*edgeitems shows its first and last edgeitems entries around "...": only those
 * elements are read from the device (at most 2^ndim transfers of views), never the
 * whole array.  No trailing newline.
 * cap/needed as gx_info_text: the text is NUL-terminated and truncated to cap
 * (buf may be NULL only when cap is 0, to ask for the size); *needed, if not NULL,
 * receives the full length + 1.  Waits for work pending on the array. */
GX_API gx_status gx_array_format(const gx_array *a, const gx_print_opts *opts, char *buf, size_t cap, size_t *needed);
/* The same text written to stdout, followed by a newline (and flushed). */
GX_API gx_status gx_array_print(const gx_array *a, const gx_print_opts *opts);

/* ------------------------------------------------------------------ lambdas & map */

/* Registers plain C functions (one or more, in `source`) that lambdas of this context may
 * call.  The same text must compile under the system C compiler and NVRTC; gx's
 * prelude (see docs/LAMBDAS.md) gives fixed-width ints, `cf32`/`cf64` complex types with
 * abs2/cmul/cadd helpers, and math functions.  gx reads each function's signature;
 * bodies are compiled with the lambdas that call them (errors name lines of `source`).
 * `name` labels the source in messages. */
GX_API gx_status gx_define(gx_ctx *ctx, const char *name, const char *source);

typedef struct gx_map_opts {
    gx_dtype dtype;         /* result dtype; GX_DTYPE_DEFAULT (0) = the lambda's type */
    const gx_const *consts; /* named scalars the lambda sees, may be NULL */
    int nconsts;
    int exact_dtype;      /* gx_map_into: nonzero = out's dtype must equal the
                                 * result dtype (else GX_ERR_DTYPE), 0 = convert */
    const gx_bind *arrays; /* named arrays the lambda reads by index, may be NULL (at most 8) */
    int narrays;
    int unchecked;        /* nonzero: no bounds checks on arrays[] reads (faster; an index out
                           * of range is then undefined behaviour: garbage or a fault) */
    uint64_t reserved[4]; /* zero (see the conventions) */
} gx_map_opts;

/* A new array out = f(in[0], in[1], ...) element by element with numpy broadcasting,
 * in one fused kernel: shape = the broadcast shape, dtype = opts->dtype or the
 * lambda's result type.  opts may be NULL. */
GX_API gx_status gx_map(gx_ctx *ctx, const char *lambda, int nin, gx_array *const *in, const gx_map_opts *opts,
                        gx_array **out);
/* The same written into `out`, which must have the broadcast shape (any view); it may
 * alias an input element for element (in place).  The lambda's value, computed in
 * the result dtype, is converted to out's dtype as the conventions say, unless
 * opts->exact_dtype.
 * Bound arrays (opts->arrays, gx_bind; docs/LAMBDAS.md): an index out of range is
 * GX_ERR_INDEX naming the first offending output element (row-major), the index, the
 * array, its axis and size; gx_map then releases its result, gx_map_into's out holds
 * the results with 0 for the failed reads.  A call with checked bound arrays waits for
 * its kernel.  `out` may be a bound array (then gx computes into a temporary first). */
GX_API gx_status gx_map_into(gx_ctx *ctx, const char *lambda, int nin, gx_array *const *in, const gx_map_opts *opts,
                             gx_array *out);

/* ------------------------------------------------------------------ events */

typedef struct gx_event gx_event;

/* An event for timing work on the context's stream (CUDA events on the GPU; a host
 * clock read on the CPU backend, whose work is complete when each call returns). */
GX_API gx_status gx_event_create(gx_ctx *ctx, gx_event **out);
/* Records the event at the current point of the context's stream. */
GX_API gx_status gx_event_record(gx_event *e);
/* Milliseconds between two recorded events of one context; waits for `end`. */
GX_API gx_status gx_event_elapsed_ms(gx_event *start, gx_event *end, float *ms);
/* NULL is accepted. */
GX_API gx_status gx_event_destroy(gx_event *e);

/* ------------------------------------------------------------------ kernel cache */

typedef struct gx_cache_stats {
    uint64_t mem_hits, disk_hits, misses, compiles, corrupt_entries;
    double compile_ms; /* total time spent in the backend compiler */
} gx_cache_stats;

GX_API gx_status gx_cache_stats_get(gx_ctx *ctx, gx_cache_stats *out);

/* Where a context's first use went (gx info --timing prints it), in milliseconds.
 * Stages a backend does not have are 0 (the CPU backend has no driver or device
 * context).  reserved: zero. */
typedef struct gx_ctx_timing {
    double driver_ms;     /* CUDA: loading the driver library and cuInit; paid once per process,
                           * by whichever call first needed the driver (reported to every context) */
    double device_ctx_ms; /* CUDA: the driver making its device context (primary context retain;
                           * near 0 when another context of the process holds it already) */
    double create_ms;     /* the whole gx_ctx_create of this context (driver_ms included when
                           * this creation loaded the driver) */
    double module_ms;     /* loading compiled kernels into the process / device so far
                           * (CUDA cuModuleLoadData, CPU dlopen), over `modules` loads */
    double compile_ms;    /* compiling kernels so far (as gx_cache_stats; 0 when the disk cache
                           * had them all) */
    uint64_t modules;
    uint64_t reserved[4];
} gx_ctx_timing;
/* The figures above for ctx.  GX_ERR_INVALID_ARGUMENT for out NULL or a bad ctx. */
GX_API gx_status gx_ctx_timing_get(gx_ctx *ctx, gx_ctx_timing *out);
/* Writes every source gx generates from now on into `dir` (like GX_DUMP=dir); NULL stops. */
GX_API gx_status gx_set_dump_dir(gx_ctx *ctx, const char *dir);
/* Generates (without compiling) the source that gx_map would run, for reading.
 * Writes a NUL-terminated string into buf (truncated to cap); *needed gets the length+1. */
GX_API gx_status gx_map_source(gx_ctx *ctx, const char *lambda, int nin, gx_array *const *in, const gx_map_opts *opts,
                               char *buf, size_t cap, size_t *needed);

#ifdef __cplusplus
}
#endif

/* The operations beyond map, one header per component (all included here, so users
 * include gx.h alone). */
#include "gx/reduce.h" /* reduce, mapreduce, along axes, argmin/argmax */
#include "gx/range.h"  /* scans, filter/findall, range pipelines */
#include "gx/kernel.h" /* user CUDA kernels, launch, occupancy, streams, profiler */
#include "gx/linalg.h" /* matmul, random numbers, FFT */
#include "gx/assemble.h" /* concat, stack, repeat, tile, pad, flip, roll */
#include "gx/interop.h"  /* external memory, DLPack, the application's streams */
#include "gx/segment.h" /* ragged segments: segmented reduce/scan/argmin, reduce_by_key, RLE */
#include "gx/index.h"    /* take, put, scatter-reduce, mask assignment, where */
#include "gx/sort.h"     /* sort, argsort, top-k, unique, searchsorted, histogram, bincount */
#include "gx/graph.h"    /* record a sequence of calls, replay it (CUDA graphs) */
#include "gx/comm.h"     /* communicators and collectives over ranks (MPI, NCCL) */
#include "gx/dist.h"     /* distributed arrays: sharded along axis 0 over a communicator */

#endif /* GX_H */
