/* gx_internal.h -- what the modules of gx share and users never see.
 * Naming: public gx_*, internal gx__* (shared across modules, declared here);
 * functions private to a module use that module's prefix (lam__ for the lambda
 * language, cache_ for the disk cache, cpu_/cuda_ in the backends (cpu_cc_ for the
 * CPU compiler driver), ew_, rg_ in the element-wise and range ops, opn_ for operator
 * names, linalg_ (mm_, fft_, rng_) in src/linalg). */
#ifndef GX_INTERNAL_H
#define GX_INTERNAL_H

#include "gx.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <stdbool.h>

/* ------------------------------------------------------------ errors */

/* Sets the thread's last error (printf-style) and returns `s` so callers can
 * `return gx__err(GX_ERR_SHAPE, "...")`. */
gx_status gx__err(gx_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepends "where: " context to the current message, keeps the status. */
gx_status gx__err_prefix(gx_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Checked mode's failure record (gx__check_record in include/gx/device.h), as the
 * backends read it back from a checked user kernel: one layout, one message. */
typedef struct gx__check_rec {
    double dummy[4];
    unsigned flag, line;
    unsigned block[3], thread[3];
    long long index, bound;
    int has_index;
    char func[64], file[96], msg[128];
} gx__check_rec;
_Static_assert(sizeof(gx__check_rec) == 376, "gx__check_record layout");
/* The message of a failure record (its strings are terminated here first). */
void gx__check_rec_msg(gx__check_rec *r, char *buf, size_t cap);

/* Options structs end in reserved words that must be zero (gx.h's conventions). */
gx_status gx__opts_reserved(const uint64_t *reserved, size_t n, const char *fn);
#define GX__OPTS_CHECK(opts, fn)                                                                                    \
    do {                                                                                                            \
        if (opts)                                                                                                   \
            GX__CHECK(gx__opts_reserved((opts)->reserved, sizeof(opts)->reserved / sizeof(opts)->reserved[0], fn)); \
    } while (0)
/* An *_into call's output of dtype `have` for a result of dtype `want`: GX_ERR_DTYPE
 * when they differ and exact is set, or when complex would be converted to real. */
gx_status gx__into_dtype(const char *fn, gx_dtype want, gx_dtype have, int exact);

#define GX__CHECK(expr)            \
    do {                           \
        gx_status gx__s_ = (expr); \
        if (gx__s_ != GX_OK)       \
            return gx__s_;         \
    } while (0)
#define GX__ARG(cond, ...)                                        \
    do {                                                          \
        if (!(cond))                                              \
            return gx__err(GX_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
    } while (0)

/* ------------------------------------------------------------ string builder */

/* fixed: p is the caller's buffer of cap bytes, never reallocated (gx__fmt). */
typedef struct gx__sbuf {
    char *p;
    size_t len, cap;
    bool oom, fixed;
} gx__sbuf;
void gx__sb_puts(gx__sbuf *b, const char *s);
void gx__sb_printf(gx__sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gx__sb_free(gx__sbuf *b);
/* snprintf for hot paths: %s %d %u %c %zu %ld %lu %lld %llu %% without flags are
 * expanded directly, anything else goes to vsnprintf; truncates like snprintf but
 * returns at most n for a truncated fast-path result. */
int gx__fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Copies into a caller buffer with the cap/needed convention of the public API. */
gx_status gx__sb_export(const gx__sbuf *b, char *buf, size_t cap, size_t *needed);

/* ------------------------------------------------------------ hash map (hashmap.c) */

/* gx's one hash map (the handle table, the memo, the kernel table and the profiler's
 * names all use it): open addressing with linear probing, at most half full,
 * doubling as it fills; removal moves later entries back instead of leaving marks,
 * so add/remove cycles never slow lookups.  Keys are 64-bit numbers (pointers,
 * hashes: GX__MAP_U64) or strings (GX__MAP_STR; the map keeps its own copy);
 * values are the caller's pointers, never freed by the map.  Not thread-safe: the
 * caller locks.  Start from GX__MAP_INIT. */
typedef enum gx__map_keys { GX__MAP_U64, GX__MAP_STR } gx__map_keys;
typedef struct gx__map_slot {
    uint64_t hash; /* the key's hash, never 0; 0: an empty slot */
    uint64_t key;  /* GX__MAP_STR: the map's copy, as (uintptr_t)(char *) */
    void *val;
} gx__map_slot;
typedef struct gx__map {
    gx__map_slot *slot;
    size_t cap, count; /* cap: a power of two (0 before the first put) */
    gx__map_keys keys;
} gx__map;
#define GX__MAP_INIT(keys) ((gx__map){NULL, 0, 0, (keys)})

/* The lookup's first steps, shared by hashmap.c and the inline lookup below: a hash
 * is never 0 (empty slots); probing starts at the hash's middle bits, where one
 * multiply has mixed every bit of a pointer. */
static inline uint64_t gx__map_tag(uint64_t h) { return h ? h : 1; }
static inline uint64_t gx__map_hash_u64(uint64_t key) { return gx__map_tag(key * 0x9E3779B97F4A7C15ull); }
static inline size_t gx__map_first(uint64_t h, size_t cap) { return (size_t)(h >> 29) & (cap - 1); }

/* The slot of key in a GX__MAP_U64 map, or NULL.  Inline because it is the handle
 * check of every public call: a call into hashmap.c made that 10% slower. */
static inline gx__map_slot *gx__map_find(const gx__map *m, uint64_t key)
{
    if (!m->count)
        return NULL;
    uint64_t h = gx__map_hash_u64(key);
    for (size_t i = gx__map_first(h, m->cap);; i = (i + 1) & (m->cap - 1)) {
        gx__map_slot *s = &m->slot[i];
        if (s->hash == 0)
            return NULL;
        if (s->hash == h && s->key == key)
            return s;
    }
}

/* Where the value of key is stored (write through it to replace), or NULL.  The
 * plain calls are for GX__MAP_U64 maps, the _str ones for GX__MAP_STR maps. */
static inline void **gx__map_get(const gx__map *m, uint64_t key)
{
    gx__map_slot *s = gx__map_find(m, key);
    return s ? &s->val : NULL;
}
void **gx__map_get_str(const gx__map *m, const char *key);
/* Adds key (or replaces its value); false when out of memory (the map is unchanged). */
bool gx__map_put(gx__map *m, uint64_t key, void *val);
bool gx__map_put_str(gx__map *m, const char *key, void *val);
bool gx__map_remove(gx__map *m, uint64_t key); /* GX__MAP_U64; false: key was absent */
/* Iteration: start with *pos = 0; NULL after the last entry.  The map must not
 * change meanwhile. */
const gx__map_slot *gx__map_next(const gx__map *m, size_t *pos);
/* Frees the table and the key copies (values are the caller's), leaving it empty. */
void gx__map_free(gx__map *m);
/* The map's string hash, for keys made of several strings (the kernel table's). */
uint64_t gx__hash_str(const char *s);

/* ------------------------------------------------------------ env helpers */

/* Parses "8GiB", "512MB", "1000000", "50%" (of `total`).  0 on success. */
int gx__parse_size(const char *s, size_t total, size_t *out);
int gx__cpu_count(void);
/* env.c: every GX_* variable is read through these.  A bad value warns once per
 * variable and process ("gx: warning: NAME="v" is not accepted (ACCEPTED); FALLBACK")
 * and the default is used. */
const char *gx__env(const char *name); /* getenv, with "" read as unset (NULL) */
void gx__env_warn(const char *name, const char *value, const char *accepted, const char *fallback);
/* A whole decimal number in [lo, hi]; dflt when unset or bad. */
int64_t gx__env_int(const char *name, int64_t dflt, int64_t lo, int64_t hi, const char *accepted);
/* The same for a value already read (v may be NULL: unset); accepted NULL: "a whole number from lo to hi". */
int64_t gx__env_int_of(const char *name, const char *v, int64_t dflt, int64_t lo, int64_t hi, const char *accepted);
/* A size ("8GiB", "512MB", "50%" of total), > 0; dflt when unset or bad. */
size_t gx__env_size(const char *name, size_t dflt, size_t total, const char *accepted, const char *fallback);
/* Index of the value in the NULL-terminated `choices` (case-insensitive); dflt when unset or bad. */
int gx__env_choice(const char *name, const char *const *choices, int dflt, const char *accepted);

/* ------------------------------------------------------------ dtypes */

bool gx__dtype_supported(gx_dtype t); /* accepted by array ops today */
bool gx__dtype_is_float(gx_dtype t);
bool gx__dtype_is_signed(gx_dtype t);
bool gx__dtype_is_int(gx_dtype t);       /* integer, not bool */
bool gx__dtype_is_complex(gx_dtype t);   /* c64 or c128 */
bool gx__dtype_is_half(gx_dtype t);      /* f16 or bf16 */
/* Generated code: halves are stored as 16-bit structs and computed in f32.  vtype:
 * the compute C type; load: `expr` converted to it (buf holds the text when it
 * differs); store: the cast or function applied to a value before it is stored. */
const char *gx__dtype_vtype(gx_dtype t);
const char *gx__dtype_load(gx_dtype t, const char *expr, char *buf, size_t n);
const char *gx__dtype_store(gx_dtype t);
const char *gx__dtype_ctype(gx_dtype t); /* C spelling in generated code: "float", "int32_t"... */
/* Converts a double into one element of dtype t at dst (C conversion rules). */
void gx__dtype_from_f64(gx_dtype t, double v, void *dst);
double gx__dtype_to_f64(gx_dtype t, const void *src);

/* ------------------------------------------------------------ backend interface */

typedef struct gx__backend gx__backend;
typedef struct gx__module gx__module; /* a compiled unit (backend-specific) */
typedef void *gx__func;               /* an entry point inside a module */

/* How to run one generated kernel.  CUDA uses grid/block/shmem; the CPU backend
 * splits [0, n) into per-thread ranges aligned to `cpu_align` items and calls
 * entry(args, begin, end, thread_index) on each worker. */
typedef struct gx__launch {
    unsigned grid[3], block[3];
    unsigned shmem;
    int64_t n;         /* CPU: the range to split */
    int64_t cpu_align; /* CPU: range boundaries are multiples of this (>= 1) */
    int cpu_threads;   /* CPU: 0 = all workers, else at most this many */
    int64_t cpu_work;  /* CPU: elements of work one item stands for (0: 1), so the backend
                        * can tell when a part is worth a thread of its own */
    const void *args;  /* the kernel's argument struct, passed by value */
    size_t args_size;
    bool pdl; /* CUDA: the kernel starts with GX_PDL_ENTER() (gx__kernel.pdl), so it may be
               * launched before the previous kernel on the stream has finished */
} gx__launch;

/* What generated code is written for: C for the system compiler, or CUDA C++ for
 * NVRTC.  Code generators switch on this, never on a backend's name. */
typedef enum gx__target { GX__TARGET_C = 0, GX__TARGET_CUDA } gx__target;
/* "c" / "cuda": the target's name in cache keys and dumped file names. */
const char *gx__target_name(gx__target t);

/* What a backend can do beyond the required slots.  Each capability names a group
 * of optional slots below, which a backend fills, all of them, exactly when its
 * table has the bit; callers ask gx__ctx_supports() instead of testing slots for
 * NULL.  A capability may still fail at run time where it rests on a library loaded
 * on first use (cuBLAS, cuFFT): the slot then returns GX_ERR_UNSUPPORTED naming
 * what is missing. */
typedef enum gx__cap {
    GX__CAP_HOST = 1u << 0,         /* the device is the host: device pointers are host
                                     * pointers, work is complete when a call returns, and
                                     * launch.run takes host functions of the CPU kernel
                                     * signature (no slots of its own) */
    GX__CAP_EVENTS = 1u << 1,       /* stream.event_*: timing events on the device */
    GX__CAP_STREAMS = 1u << 2,      /* stream.create ... stream.wait_event */
    GX__CAP_ASYNC_COPY = 1u << 3,   /* mem.h2d_async, mem.d2h_async */
    GX__CAP_PINNED_HOST = 1u << 4,  /* mem.host_alloc, host_free, host_pinned */
    GX__CAP_MAPPED_HOST = 1u << 5,  /* mem.host_devptr */
    GX__CAP_OCCUPANCY = 1u << 6,    /* launch.occupancy_block, occupancy_active */
    GX__CAP_USER_KERNELS = 1u << 7, /* launch.user, launch.func_attrs: gx_kernel_* */
    GX__CAP_MATMUL = 1u << 8,       /* lib.gemm */
    GX__CAP_FFT = 1u << 9,          /* lib.fft */
    GX__CAP_GRAPHS = 1u << 10,      /* stream.capture_begin ... graph_free: native graphs
                                     * (CUDA stream capture); without it src/core/graph.c
                                     * records launches and replays them itself */
    GX__CAP_COMM = 1u << 11,        /* comm.*: collectives through the backend's own
                                     * library (NCCL on CUDA); without it gx/comm.h
                                     * moves host memory with MPI (src/ops/comm_mpi.c) */
} gx__cap;

/* One matrix product, or a strided batch of them, in row-major terms:
 * C[i] = alpha op_a(A[i]) op_b(B[i]) + beta C[i] for i < batch, op_a(A) m x k,
 * op_b(B) k x n.  src/linalg/matmul.c has checked every size against the 32-bit
 * limits of the BLAS libraries and folded transposed layouts into op_a/op_b. */
typedef struct gx__gemm {
    gx_dtype dtype;   /* f32, f64, c64 or c128: all three operands; or f16 / bf16: A and B */
    gx_dtype c_dtype; /* C: dtype, or f32 / the half dtype when dtype is a half (f32 accumulation) */
    gx_math_mode math;
    gx_op op_a, op_b; /* GX_OP_C only for complex dtypes */
    int m, n, k, batch;
    const void *a, *b; /* device addresses of the first matrices */
    void *c;
    int lda, ldb, ldc;                    /* leading dimensions (row strides), in elements */
    int64_t stride_a, stride_b, stride_c; /* elements between batch entries (0: shared) */
    double alpha[2], beta[2];             /* {re, im}; im ignored for real dtypes */
} gx__gemm;

/* One unnormalised FFT over the last `rank` axes of dense arrays, `batch` times. */
typedef enum gx__fft_kind { GX__FFT_C2C, GX__FFT_R2C, GX__FFT_C2R } gx__fft_kind;
typedef struct gx__fft {
    gx__fft_kind kind;
    bool dbl;          /* f64 / c128 (else f32 / c64) */
    bool inverse;      /* the direction of a C2C transform */
    int rank;          /* 1, 2 or 3 */
    long long dims[3]; /* the transformed axes' logical (real) lengths */
    long long batch;   /* product of the other axes */
    const void *in;    /* C2R may overwrite it */
    void *out;
} gx__fft;

/* Memory and copies.  alloc does no limit check (src/core/ctx.c does). */
typedef struct gx__backend_mem {
    gx_status (*alloc)(gx__backend *be, size_t bytes, void **ptr);
    void (*free)(gx__backend *be, void *ptr, size_t bytes);
    gx_status (*trim)(gx__backend *be);  /* give cached pool blocks back */
    size_t (*reserved)(gx__backend *be); /* bytes held by the pool */
    gx_status (*h2d)(gx__backend *be, void *dst, const void *src, size_t n);
    gx_status (*d2h)(gx__backend *be, void *dst, const void *src, size_t n); /* complete on return */
    gx_status (*d2d)(gx__backend *be, void *dst, const void *src, size_t n);
    /* GX__CAP_ASYNC_COPY: queued on the current stream; the host buffer must stay. */
    gx_status (*h2d_async)(gx__backend *be, void *dst, const void *src, size_t n);
    gx_status (*d2h_async)(gx__backend *be, void *dst, const void *src, size_t n);
    /* GX__CAP_PINNED_HOST: page-locked host memory (else the core uses malloc). */
    gx_status (*host_alloc)(gx__backend *be, size_t bytes, void **ptr);
    void (*host_free)(gx__backend *be, void *ptr);
    bool (*host_pinned)(gx__backend *be, const void *ptr, size_t bytes);
    /* GX__CAP_MAPPED_HOST: the device's address of host_alloc memory, which kernels may write. */
    gx_status (*host_devptr)(gx__backend *be, void *host, uint64_t *dev);
    /* Memory that gx did not allocate (gx_array_wrap): GX_OK when [p, p + bytes) is
     * memory of this context's device, else GX_ERR_INVALID_ARGUMENT saying what it is
     * (`what` names the public call).  Required; a host backend accepts anything. */
    gx_status (*ptr_check)(gx__backend *be, const void *p, size_t bytes, const char *what);
} gx__backend_mem;

/* Ordering and timing.  A NULL stream means the backend's default stream. */
typedef struct gx__backend_stream {
    gx_status (*sync)(gx__backend *be); /* waits for all of the context's work */
    /* Optional (NULL: never): the context hit a sticky fault that was reported
     * already (gx_ctx_destroy then releases it quietly). */
    bool (*faulted)(gx__backend *be);
    /* GX__CAP_STREAMS.  set_current changes the stream every other call uses. */
    gx_status (*create)(gx__backend *be, void **st);
    void (*destroy)(gx__backend *be, void *st);
    gx_status (*sync_stream)(gx__backend *be, void *st);
    void (*set_current)(gx__backend *be, void *st);
    gx_status (*wait_event)(gx__backend *be, void *st, void *ev);
    /* The native handle of the stream every call uses now (gx_ctx_stream_handle). */
    void *(*current)(gx__backend *be);
    /* GX__CAP_EVENTS (without it the core reads a host clock). */
    gx_status (*event_create)(gx__backend *be, void **ev);
    gx_status (*event_record)(gx__backend *be, void *ev); /* on the current stream */
    gx_status (*event_record_on)(gx__backend *be, void *ev, void *st);
    gx_status (*event_elapsed)(gx__backend *be, void *start, void *end, float *ms);
    gx_status (*event_sync)(gx__backend *be, void *ev);
    void (*event_destroy)(gx__backend *be, void *ev);
    /* GX__CAP_GRAPHS.  capture_begin starts recording the current stream's work (no
     * work runs until graph_launch); allocations made meanwhile must stay outside the
     * graph.  capture_end stops and gives an executable graph (*exec), also when the
     * capture failed (then an error and *exec NULL).  graph_launch queues it on the
     * current stream. */
    gx_status (*capture_begin)(gx__backend *be);
    gx_status (*capture_end)(gx__backend *be, void **exec);
    gx_status (*graph_launch)(gx__backend *be, void *exec);
    void (*graph_free)(gx__backend *be, void *exec);
} gx__backend_stream;

/* Code: build turns generated source into a binary blob (a shared object on CPU, a
 * cubin on CUDA) that the disk cache can keep; load makes a module of a blob.  build
 * sets a message naming the user's lines on failure (GX_ERR_COMPILE). */
typedef struct gx__backend_code {
    gx_status (*build)(gx__backend *be, const char *source, const char *label, void **blob, size_t *len);
    gx_status (*load)(gx__backend *be, const void *blob, size_t len, gx__module **out);
    gx_status (*get_func)(gx__backend *be, gx__module *m, const char *entry, gx__func *out);
    void (*module_free)(gx__backend *be, gx__module *m);
    /* A string that identifies the compiler + target exactly, for cache keys. */
    const char *(*compiler_id)(gx__backend *be);
} gx__backend_code;

/* Running code. */
typedef struct gx__backend_launch {
    gx_status (*run)(gx__backend *be, gx__func f, const gx__launch *l);
    /* Units of work the backend runs at once: the CPU backend's worker threads,
     * the calling thread included (what CPU kernels split their range into, and
     * how many per-thread partials they need); CUDA: the multiprocessor count. */
    int (*workers)(gx__backend *be);
    /* GX__CAP_USER_KERNELS.  params[i] points at argument i; st NULL = current stream. */
    gx_status (*user)(gx__backend *be, gx__func f, const gx__launch *l, void **params, void *st, int cooperative);
    gx_status (*func_attrs)(gx__backend *be, gx__func f, gx_kernel_attrs *out);
    /* GX__CAP_OCCUPANCY: suggested block size for f; resident blocks per multiprocessor. */
    gx_status (*occupancy_block)(gx__backend *be, gx__func f, unsigned shmem, int *min_grid, int *block);
    gx_status (*occupancy_active)(gx__backend *be, gx__func f, int block, size_t shmem, int *blocks);
} gx__backend_launch;

/* Vendor libraries, on the context's current stream.  A backend keeps their
 * per-context state (handles, plan caches) itself, e.g. through gx__ctx_ext. */
typedef struct gx__backend_lib {
    gx_status (*gemm)(gx__backend *be, const gx__gemm *g); /* GX__CAP_MATMUL */
    gx_status (*fft)(gx__backend *be, const gx__fft *f);   /* GX__CAP_FFT */
} gx__backend_lib;

/* One collective for the comm slots (src/ops/comm.c has checked it and mapped the
 * dtype: data that the library does not carry as such moves as GX_U8 bytes). */
typedef enum gx__coll_kind {
    GX__COLL_ALLREDUCE,      /* count elements, send -> recv (send == recv: in place) */
    GX__COLL_REDUCE_SCATTER, /* count = recv's elements; send holds nranks * count */
    GX__COLL_ALLGATHER,      /* count = send's elements; recv holds nranks * count */
    GX__COLL_BROADCAST,      /* count elements of recv, from rank `peer` */
    GX__COLL_SEND,           /* count elements of send to rank `peer` */
    GX__COLL_RECV            /* count elements into recv from rank `peer` */
} gx__coll_kind;
typedef enum gx__redop { GX__RED_SUM, GX__RED_PROD, GX__RED_MAX, GX__RED_MIN } gx__redop;
typedef struct gx__coll {
    gx__coll_kind kind;
    const void *send; /* device addresses, dense */
    void *recv;
    size_t count;
    gx_dtype dtype;
    gx__redop op;
    int peer;
    double deadline_ms; /* gx__now_ms() past which a call the library left in progress fails */
    const char *what; /* the public call, for messages */
} gx__coll;

/* GX__CAP_COMM: communicators of the backend's collective library, one per rank;
 * `comm` is the library's handle.  Every slot sets the message on failure; a
 * communicator past its deadline returns GX_ERR_TIMEOUT. */
typedef struct gx__backend_comm {
    /* Whether the library carries dtype t as such (else bytes / refused reductions). */
    bool (*carries)(gx__backend *be, gx_dtype t);
    /* The unique id rank 0 makes and every rank passes to init_rank; *len <= cap. */
    gx_status (*unique_id)(gx__backend *be, void *id, size_t cap, size_t *len);
    gx_status (*init_rank)(gx__backend *be, const void *id, size_t len, int nranks, int rank, double deadline_ms,
                           void **comm);
    /* One process, n devices: bes[i] is rank i. */
    gx_status (*init_all)(gx__backend *const *bes, int n, void **comms);
    /* Queues c on the context's current stream. */
    gx_status (*run)(gx__backend *be, void *comm, const gx__coll *c);
    gx_status (*group)(gx__backend *be, void *comm, bool begin, double deadline_ms);
    /* *done when the context's stream has finished; an error when the communicator
     * reports one (a peer's failure included). */
    gx_status (*poll)(gx__backend *be, void *comm, bool *done);
    void (*abort)(gx__backend *be, void *comm);
    void (*destroy)(gx__backend *be, void *comm);
    /* "NCCL 2.21.5 (/path/libnccl.so.2)"; an error when the library does not load. */
    gx_status (*version)(char *buf, size_t n);
} gx__backend_comm;

typedef struct gx__backend_iface {
    gx_backend_kind kind;
    const char *name;
    gx__target target;
    unsigned caps; /* gx__cap bits */

    gx_status (*open)(gx__backend *be, int device);
    void (*close)(gx__backend *be);
    gx_status (*info)(gx__backend *be, gx_device_info *out);

    gx__backend_mem mem;
    gx__backend_stream stream;
    gx__backend_code code;
    gx__backend_launch launch;
    gx__backend_lib lib;
    gx__backend_comm comm;
} gx__backend_iface;

struct gx__backend {
    const gx__backend_iface *iface;
    int device;
    void *impl; /* backend's own state */
    gx_ctx *ctx;
    /* gx_ctx_timing: set by open where the backend has these stages, else 0 */
    double t_driver_ms; /* the driver library's load and init in this process */
    double t_devctx_ms; /* the device context the driver made for this context */
};

static inline bool gx__iface_supports(const gx__backend_iface *io, gx__cap cap) { return (io->caps & cap) == cap; }

/* The backends' tables and what `gx info` asks of them are private to the backend
 * layer (src/backend/backend.h): the core sees a backend only through the table
 * that src/backend/registry.c hands to gx__ctx_open. */

/* NVRTC without a context, for gx_kernel_ptx / gx_kernel_sass and their _offline
 * forms (src/backend/cuda/cuda_kernel.c).  `wrapped` is a user kernel as
 * src/ops/kernel.c wraps it; the result is a malloc'ed, NUL-terminated text.  ptx:
 * entry not NULL checks that the PTX defines that kernel.  sass: disassembles the
 * cubin with cuobjdump or nvdisasm.  `what` names the public call in messages.
 * GX_ERR_UNSUPPORTED when gx was built without the CUDA backend. */
gx_status gx__nvrtc_ptx(const char *what, const char *wrapped, const char *label, const char *entry, int cc_major,
                        int cc_minor, char **text);
gx_status gx__nvrtc_sass(const char *what, const char *wrapped, const char *label, int cc_major, int cc_minor,
                         char **text);
/* The CUDA include folders, colon-separated (src/backend/cuda/cuda_include.c; empty
 * without the CUDA backend). */
void gx__cuda_include_path(char *out, size_t n);
/* A user kernel's text as gx_kernel_compile(_sources) hands it to the backend
 * (src/ops/kernel.c); for tests that compile without a context. */
struct gx_kernel_opts;
gx_status gx__kernel_wrap(int nsrc, const char *const *src, const char *const *names, const char *label,
                          const struct gx_kernel_opts *o, char **out);
/* The first line of a wrapped user kernel (and how the backend's build tells one). */
#define GX__USER_KERNEL_MAGIC "//gx:user-kernel 1"

/* ------------------------------------------------------------ storage & arrays */

typedef struct gx__storage {
    atomic_int refs;
    gx_ctx *ctx;
    void *ptr; /* device pointer (host pointer on CPU) */
    size_t bytes;
    /* Memory gx did not allocate (gx_array_wrap, gx_array_from_dlpack): never given to
     * the pool; its deleter(user, uptr), if any, is called instead with the last
     * reference.  bytes is then the extent the arrays touch (not counted in stats). */
    bool external;
    gx_wrap_deleter deleter;
    void *user, *uptr;
} gx__storage;

#define GX__ARRAY_MAGIC 0x6778617272617921ull

struct gx_array {
    uint64_t magic;
    gx_ctx *ctx;
    gx__storage *st;
    gx_dtype dtype;
    int ndim;
    int64_t shape[GX_MAX_DIMS];
    int64_t strides[GX_MAX_DIMS]; /* elements */
    int64_t offset;               /* elements from st->ptr */
    int64_t size;
    bool is_view;
    bool readonly;         /* gx_array_wrap's opts->readonly, inherited by views */
    gx_array *prev, *next; /* the context's list of live arrays */
};

/* Validates a handle (live, made by gx); sets the error and returns its status. */
gx_status gx__array_check(const gx_array *a, const char *what);
/* The same for the n-th (from 1) of a call's `role` arrays, the message naming it
 * "fn (role n)"; the name is formatted only when the handle is bad (formatting it
 * on every call was 4-8% of a warm small map or reduction, CPU backend, perf). */
gx_status gx__array_check_nth(const gx_array *a, const char *fn, const char *role, int n);
bool gx__array_contiguous(const gx_array *a);
/* Pointer to the first element (device address on CUDA). */
void *gx__array_ptr(const gx_array *a);
/* True when dst and src share bytes but not element for element (unsafe in place). */
bool gx__arrays_overlap(const gx_array *dst, const gx_array *src);
/* The array may be written: GX_ERR_INVALID_ARGUMENT naming `what` when it is read-only. */
gx_status gx__array_writable(const gx_array *a, const char *what);
/* A new array over memory gx did not allocate (src/core/interop.c checked it): the
 * storage spans [base, base + bytes); the array starts `offset` elements into it with
 * the given strides (elements).  On failure nothing is kept and the deleter is not
 * called.  Caller holds the context lock. */
typedef struct gx__ext_mem {
    void *base;
    size_t bytes;
    int64_t offset;
    gx_wrap_deleter deleter;
    void *user, *uptr;
    bool readonly;
} gx__ext_mem;
gx_status gx__array_over(gx_ctx *ctx, const gx__ext_mem *m, gx_dtype dtype, int ndim, const int64_t *shape,
                         const int64_t *strides, gx_array **out);
/* A new handle over a's storage with a's layout (a view).  Caller holds the lock. */
gx_status gx__array_view_of(gx_array *a, gx_array **out);
/* Creates a dense array (the building block of every allocating op). */
gx_status gx__array_new(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out);
/* Unlinks and frees the handle (and the storage with its last handle); caller holds
 * the context lock. */
void gx__array_free(gx_array *a);
/* Same offset, shape and strides (strides of length-1 axes aside). */
bool gx__array_same_layout(const gx_array *a, const gx_array *b);
/* A shape as messages write it, NumPy style: "(3, 4)", "(5,)", "()" for 0-d.  One
 * spelling for every op, so users see one form whichever call refused them. */
void gx__shape_str(char *buf, size_t n, int ndim, const int64_t *shape);
/* True when a and b have the same ndim and extents (strides aside). */
bool gx__same_shape(const gx_array *a, const gx_array *b);

/* ------------------------------------------------------------ memory pool */

gx_status gx__mem_alloc(gx_ctx *ctx, size_t bytes, void **ptr);
void gx__mem_free(gx_ctx *ctx, void *ptr, size_t bytes);
/* The same for gx's own buffers (reduction partials and counters, scan look-back
 * status): one pool and limit, but counted in gx_memory_stats.scratch, not in_use,
 * which answers "what do my arrays hold" and reads 0 once they are released. */
gx_status gx__scratch_alloc(gx_ctx *ctx, size_t bytes, void **ptr);
void gx__scratch_free(gx_ctx *ctx, void *ptr, size_t bytes);

/* ------------------------------------------------------------ kernels (src/jit/kernel.c) */

/* A ready kernel: entry point plus the launch shape the occupancy API suggests
 * (block 256 / grid = 0 where the backend has no occupancy API). */
typedef struct gx__kernel {
    gx__func fn;
    int block;    /* suggested threads per block */
    int min_grid; /* blocks that fill the device at that block size */
    bool pdl;     /* the entry's first statement is GX_PDL_ENTER() (the preludes' macro) */
    int cpu_work; /* CPU: elements of work one item of a gx__launch_1d stands for (0: 1; lam_cost) */
} gx__kernel;

/* Compiles (or finds in the caches) `source` and returns the entry `entry`.
 * The cache key covers the source, the backend's compiler id and gx's version.
 * Caller holds the context lock. */
gx_status gx__kernel_get(gx_ctx *ctx, const char *source, const char *label, const char *entry, gx__kernel *out);
/* Whether `entry`'s definition in `source` starts with GX_PDL_ENTER() (then its
 * launches may overlap the previous kernel's tail: gx__kernel.pdl). */
bool gx__kernel_src_pdl(const char *source, const char *entry);
/* A 1-d launch of k: `grid` blocks (at least 1) of `block` threads on the GPU; on the
 * CPU the range [0, cpu_n) split at multiples of cpu_align.  args is passed by value. */
gx_status gx__launch_1d(gx_ctx *ctx, const gx__kernel *k, const void *args, size_t args_size, int64_t cpu_n,
                        int64_t cpu_align, int64_t grid, int64_t block);
/* The same with `shmem` bytes of dynamic shared memory a block (CUDA; the backend opts
 * in above the default limit). */
gx_status gx__launch_1d_shm(gx_ctx *ctx, const gx__kernel *k, const void *args, size_t args_size, int64_t cpu_n,
                            int64_t cpu_align, int64_t grid, int64_t block, unsigned shmem);

/* ------------------------------------------------------------ context */

/* State that a higher layer (an op, the linear algebra module) keeps per context:
 * the module declares one static gx__ctx_ext naming its destructor, and the core
 * calls it at gx_ctx_destroy without knowing the module.  Destructors run in the
 * reverse order of first attachment, under the lock, while the backend is still
 * open (so they may free device memory and library handles). */
typedef struct gx__ctx_ext {
    const char *name;                          /* for messages */
    void (*release)(gx_ctx *ctx, void *state); /* frees state (never NULL state) */
} gx__ctx_ext;
#define GX__CTX_EXT_MAX 16
/* The state attached under ext, or NULL.  Caller holds the context lock. */
void *gx__ctx_ext_get(gx_ctx *ctx, const gx__ctx_ext *ext);
/* Attaches state under ext (replacing the pointer if ext is attached already; the
 * old state is the caller's to free).  Caller holds the context lock. */
gx_status gx__ctx_ext_set(gx_ctx *ctx, const gx__ctx_ext *ext, void *state);

struct gx_ctx {
    uint64_t magic;
    gx__backend be;
    pthread_mutex_t lock; /* serialises backend calls and the caches */
    gx_memory_stats mem;
    size_t mem_limit;
    /* mem_host: the memory is the host's, counted in the process-wide total (ctx.c);
     * mem_shared: the limit is the default one, which bounds that total too. */
    bool mem_host, mem_shared;
    gx_cache_stats cstats; /* counted by src/jit/kernel.c and the op caches */
    double t_create_ms, t_module_ms; /* gx_ctx_timing: gx_ctx_create; module loads (jit/kernel.c) */
    uint64_t n_modules;
    char *dump_dir;
    gx_device_info dinfo; /* filled at creation */
    gx_array *arrays;     /* live arrays, released at destroy */
    gx__map *memo;        /* memo.c: finished products of repeated calls */
    struct gx__memo_fast *memo_fast; /* memo.c: recent entries under binary keys */
    struct gx__kx *kx;    /* streams, user kernels, profiler (src/core/stream.c) */
    struct gx__ctx_ext_slot {
        const struct gx__ctx_ext *ext;
        void *state;
    } ext[GX__CTX_EXT_MAX];
    int next; /* slots of ext in use */
    struct gx__dlx *dl_exports; /* DLPack tensors exported and not yet deleted (interop.c) */
    struct gx__graph_rec *rec;  /* graph.c: the recording under way (gx_graph_begin), else NULL */
};
#define GX__CTX_MAGIC 0x6778637478212121ull

gx_status gx__ctx_check(const gx_ctx *ctx);
void gx__lock(gx_ctx *ctx);
void gx__unlock(gx_ctx *ctx);
/* The code generation target of the context's backend. */
static inline gx__target gx__ctx_target(const gx_ctx *ctx) { return ctx->be.iface->target; }
static inline bool gx__target_is_cuda(const gx_ctx *ctx) { return ctx->be.iface->target == GX__TARGET_CUDA; }
/* Whether the context's backend has cap (or every bit of several or-ed together). */
static inline bool gx__ctx_supports(const gx_ctx *ctx, gx__cap cap) { return gx__iface_supports(ctx->be.iface, cap); }
/* Units of parallel work of the context's backend (launch.workers). */
static inline int gx__ctx_workers(gx_ctx *ctx) { return ctx->be.iface->launch.workers(&ctx->be); }
/* Makes a context on the backend `iface` (chosen by src/backend/registry.c): opens
 * the device, reads its info and the GX_* settings of contexts.  *out on success. */
gx_status gx__ctx_open(const gx__backend_iface *iface, int device, gx_ctx **out);

/* gx_ctx_destroy, before the arrays go: DLPack tensors still held by consumers
 * forget the context, so their deleters later do nothing (src/core/interop.c). */
void gx__dlpack_orphan_all(gx_ctx *ctx);

/* Graphs (src/core/graph.c).  Whether a gx_graph_begin recording is under way: ops
 * that would wait for the device or do host work between launches check it and
 * refuse (GX_ERR_UNSUPPORTED, naming the call) or take their device path. */
static inline bool gx__graph_recording(const gx_ctx *ctx) { return ctx->rec != NULL; }
/* The refusal of `call` inside a recording: sets the message, spoils the recording. */
gx_status gx__graph_refuse(gx_ctx *ctx, const char *call, const char *instead);
/* A one-time write of fresh scratch (zeroing counters when they grow), not part of
 * any call's work: it runs now, also inside a recording, and is never replayed.
 * Anything a call writes to the device every time goes through mem.h2d instead. */
gx_status gx__mem_setup_h2d(gx_ctx *ctx, void *dst, const void *src, size_t n);
/* gx_ctx_destroy: ends a recording left open (caller holds the lock). */
void gx__graph_ctx_destroy(gx_ctx *ctx);

/* Handle table: detects stale / foreign handles. */
void gx__handle_add(const void *h);
bool gx__handle_remove(const void *h);
bool gx__handle_live(const void *h);

/* ------------------------------------------------------------ streams, user kernels, profiler */

/* Context hooks (src/core/stream.c): init reads GX_PROFILE; destroy prints the
 * profile, frees streams and page-locked buffers (under the lock,
 * before the caches and the backend go). */
gx_status gx__kx_ctx_init(gx_ctx *ctx);
void gx__kx_ctx_destroy(gx_ctx *ctx);
/* Names a compiled function for the profiler (called by gx__kernel_get). */
void gx__prof_label(gx_ctx *ctx, gx__func fn, const char *label);
/* NVTX range around one gx operation (src/backend/cuda/cuda_nvtx.c; a no-op
 * without the CUDA backend). */
void gx__range_push(const char *name);
void gx__range_pop(void);

/* ------------------------------------------------------------ memo (memo.c) */

/* Copies the value stored under key (exactly len bytes) into val; false on a miss.
 * Caller holds the context lock.  Values must not hold pointers that can die. */
bool gx__memo_get(gx_ctx *ctx, const char *key, void *val, size_t len);
void gx__memo_put(gx_ctx *ctx, const char *key, const void *val, size_t len);
/* The stored value itself (valid until the context is destroyed), or NULL. */
const void *gx__memo_find(gx_ctx *ctx, const char *key, size_t *len);
void gx__memo_free(gx_ctx *ctx);

/* The memo's front for the hottest keys: a binary key, built with plain copies (no
 * formatting), in a small table of recent entries (a newer key may evict an older
 * one; the caller then takes its text-keyed path).  Build keys in a gx__bkey; one
 * that overflowed is never found and never stored. */
typedef struct gx__bkey {
    unsigned char b[1024];
    size_t len;
    bool over;
} gx__bkey;
static inline void gx__bkey_bytes(gx__bkey *k, const void *p, size_t n)
{
    if (k->over || n > sizeof k->b - k->len) {
        k->over = true;
        return;
    }
    memcpy(k->b + k->len, p, n);
    k->len += n;
}
static inline void gx__bkey_int(gx__bkey *k, int64_t v) { gx__bkey_bytes(k, &v, sizeof v); }
/* A text with its length in front (NULL differs from ""). */
static inline void gx__bkey_str(gx__bkey *k, const char *s)
{
    int64_t n = s ? (int64_t)strlen(s) : -1;
    gx__bkey_int(k, n);
    if (s)
        gx__bkey_bytes(k, s, (size_t)n);
}
bool gx__memo_bget(gx_ctx *ctx, const gx__bkey *key, void *val, size_t len);
void gx__memo_bput(gx_ctx *ctx, const gx__bkey *key, const void *val, size_t len);

/* ------------------------------------------------------------ misc */

/* An experiment knob's value (GX_EW_UNROLL, GX_RG_GRID...), read once per process. */
/* name: a string literal (its address is remembered). */
const char *gx__knob(const char *name);
int gx__knob_int(const char *name, int dflt, int lo, int hi);

double gx__now_ms(void);

#endif
