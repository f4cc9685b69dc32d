/* reduce_gen.c -- the single-pass reduction generator (see reduce_gen.h).
 *
 * One of three reduction generators; each serves a shape the other two cannot:
 *  - this one folds a flat range [0, n) into ONE value: a scalar accumulator with a
 *    neutral element (plus, for argmin and kin, the winning index), elements as C
 *    statements of i over dense streams it loads itself.  So every thread can fold
 *    a strided share with vector loads, and one launch finishes (whole-array
 *    gx_reduce / gx_mapreduce / count / argmin).
 *  - reduce_axis.c makes MANY values, one per kept position, each over a reduced
 *    range that may be strided: its kernels are about the (kept x reduced) layout
 *    (column vs row kernels, splits over gridDim.y), which a flat range would pay
 *    for with a div/mod per element.
 *  - range_gen.c (gen_cuda_reduce) ends a fused pipeline: elements come from
 *    generators or arrays through maps and filters in registers, the accumulator
 *    is a tuple lifted from element and position, and the operator may have no
 *    neutral element (validity flags, init first), none of which a plain
 *    reduction should carry. */
#include "ops/reduce_gen.h"
#include "core/stream_priv.h"
#include "jit/lambda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RG_BLOCK 256
#define RG_CLUSTER 8 /* blocks of gx_rg_cl, the most a cluster is guaranteed to hold */
#define RG_UNROLL rg_unroll(sp) /* independent vector loads per stream in flight (CUDA) */

/* Tuning knobs for experiments on a GPU (GX_RG_UNROLL, GX_RG_GRID); the unroll is
 * part of the generated source and of the memo key.  Defaults measured on an H200,
 * f32 sum at 2^28 (us): unroll 4 / 1 wave 244.4, 4/2 242.2, 8/1 242.8, 8/2 241.3,
 * 8/4 242.8; at 2^20 8/2 gave 10.0 us against 12.0 for 4/1. */
/* Index-carrying reductions (argmin...) hold more registers per element: they run
 * best with fewer loads in flight and one wave (argmin 2^28: 249.7 us at 4/1 against
 * 255.4 at 8/2).  So do sums that widen each element (i32 into i64 at 2^28: 248.4 us
 * at unroll 8, 238.7-240.1 at 4; CUB's i32 sum, in i32: 238.2).  Measured without
 * gain (2026-11-22, f32 sum 2^28 at 238-243 us like CUB's): cache hints on the loads
 * (L2::256B prefetch was 6% slower; L1::no_allocate, evict-first and .cs equal), and
 * a warp's loads of one iteration in one contiguous run (equal at unroll 4, 10%
 * slower at 8). */
/* f32 sums accumulate in f64 since issue 25: they widen, but keep unroll 8 with one
 * f64 accumulator per vector lane (rg_gen_cuda_main_loop).  H100, same run against
 * the f32-accumulating build (us, 3 rounds): f32 sum 2^24 28.4 / 28.4 at unroll 8
 * with lanes, 29.3 at unroll 4 with lanes, 29.8 at 4 with one accumulator; 2^28
 * 351.3 / 350.1, 350.9 and 351.7. */
static bool rg_widens(const rg_spec *sp)
{
    for (int k = 0; k < sp->nstreams; k++)
        if (gx_dtype_size(sp->stream_dt[k]) >= gx_dtype_size(sp->acc))
            return false;
    return sp->nstreams > 0;
}
static bool rg_wide_lanes(const rg_spec *sp);
/* Half streams (f16/bf16 widened to f32) hold a vector of 8 and its conversions per
 * load: fewer loads in flight, more threads.  H200, same run, 2^28 (% of copy) at
 * unroll 1 / 2 / 4 / 8: f16 sum 95.9 / 97.9 / 96.2 / 77.2; l2 distance of two f16
 * arrays 99.7 / 97.1 / 82.2 / 32.9. */
static bool rg_half_streams(const rg_spec *sp)
{
    for (int k = 0; k < sp->nstreams; k++)
        if (!gx__dtype_is_half(sp->stream_dt[k]))
            return false;
    return sp->nstreams > 0;
}
static int rg_unroll(const rg_spec *sp)
{
    bool narrow_unroll = sp->with_index || (rg_widens(sp) && !rg_wide_lanes(sp));
    int dflt = narrow_unroll ? 4 : 8;
    if (rg_half_streams(sp) && !sp->with_index)
        dflt = sp->nstreams >= 2 ? 1 : 2;
    return gx__knob_int("GX_RG_UNROLL", dflt, 1, 16);
}
/* Partials each thread of the last block loads at once (GX_RG_FIN): at 2^28 f32, 4
 * took argmin from 246.3 us (one at a time) to 244.7 (CUB: 246.4) and left the sum
 * at 241.9 (CUB: 241.8); 8 made the sum's kernel 2 us slower. */
/* Read once: the knob lookup (a scan of the knob names) ran on every call for the
 * memo key (rg_bkey), ~4% of a warm small reduction on the CPU backend. */
static int rg_fin(void)
{
    static _Atomic int fin;
    int f = atomic_load_explicit(&fin, memory_order_relaxed);
    if (!f)
        atomic_store_explicit(&fin, f = gx__knob_int("GX_RG_FIN", 4, 1, 16), memory_order_relaxed);
    return f;
}
static int rg_grid_waves(const rg_spec *sp) { return gx__knob_int("GX_RG_GRID", sp->with_index ? 1 : 2, 1, 16); }
/* Whether whole-array reductions of 2..RG_CLUSTER blocks run as one thread block
 * cluster (gx_rg_cl; knob GX_RG_CLUSTER=0 turns it off).  Read once, like rg_fin. */
static bool rg_cluster(const gx_ctx *ctx)
{
    static _Atomic int on; /* 0 unread, 1 off, 2 on */
    int v = atomic_load_explicit(&on, memory_order_relaxed);
    if (!v)
        atomic_store_explicit(&on, v = 1 + gx__knob_int("GX_RG_CLUSTER", 1, 0, 1), memory_order_relaxed);
    return v == 2 && ctx->dinfo.cc_major >= 9;
}
#define RG_CPU_ACC 8    /* independent accumulators per CPU thread */
#define RG_CPU_LANES 16 /* f64 accumulators of narrower streams: lanes of one array */
#define RG_CPU_FIND 256 /* elements per batch of the CPU argmin/argmax (rg_gen_cpu_find) */
#define RG_CPU_BLOCK 2048 /* elements per block of an f32 fold's lanes (rg_gen_cpu_lanes) */

/* ------------------------------------------------------------ scratch */

/* Scratch for one stream: reductions issued on different streams of a context may
 * run at the same time, so each stream gets its own partials, counters and result
 * slot (the default stream is the NULL token). */
typedef struct rg_slot {
    const void *stream;
    void *part;
    size_t part_bytes;
    void *cnt; /* ncnt 8-byte slots, all zero between kernels */
    int64_t ncnt;
    void *res; /* RG_RES_BYTES for results read back by the host */
    /* Look-back status memory of scans and compactions, two buffers used in turn:
     * a launch reads one (all zero) and zeroes the other's dirty prefix for the next
     * launch, so no launch needs an initialising kernel or fresh pool memory. */
    void *lb[2];
    size_t lb_cap[2], lb_dirty[2];
    int lb_next;
    /* RG_RES_BYTES of page-locked host memory that kernels write results into, so
     * the host reads them after a sync without a copy; NULL: not available. */
    void *hres;
    uint64_t hres_dev;
    bool hres_failed;
    struct rg_slot *next;
} rg_slot;

#define RG_RES_BYTES 64

typedef struct rg_scr {
    rg_slot *slots;
} rg_scr;

/* Frees the scratch at gx_ctx_destroy (the backend is still open then). */
static void rg_scr_release(gx_ctx *ctx, void *state)
{
    rg_scr *s = state;
    for (rg_slot *sl = s->slots, *nx; sl; sl = nx) {
        nx = sl->next;
        gx__scratch_free(ctx, sl->part, sl->part_bytes);
        gx__scratch_free(ctx, sl->cnt, (size_t)sl->ncnt * 8);
        gx__scratch_free(ctx, sl->res, RG_RES_BYTES);
        for (int i = 0; i < 2; i++)
            gx__scratch_free(ctx, sl->lb[i], sl->lb_cap[i]);
        if (sl->hres)
            ctx->be.iface->mem.host_free(&ctx->be, sl->hres);
        free(sl);
    }
    free(s);
}

static const gx__ctx_ext rg_scr_ext = {"reduction scratch", rg_scr_release};

/* Zeroes the first n bytes of device memory p (rare: when scratch grows). */
static gx_status rg_zero(gx_ctx *ctx, void *p, size_t n)
{
    void *zeros = calloc(n ? n : 1, 1);
    if (!zeros)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for %zu bytes of zeros", n);
    gx_status st = gx__mem_setup_h2d(ctx, p, zeros, n); /* runs now, also inside a graph recording */
    free(zeros);
    return st;
}

static gx_status rg_grow_counters(gx_ctx *ctx, rg_slot *s, int64_t want)
{
    int64_t n = want < 1024 ? 1024 : want;
    void *p = NULL;
    gx_status st = gx__scratch_alloc(ctx, (size_t)n * 8, &p);
    if (st == GX_OK)
        st = rg_zero(ctx, p, (size_t)n * 8);
    if (st != GX_OK) {
        gx__scratch_free(ctx, p, p ? (size_t)n * 8 : 0);
        return gx__err_prefix(st, "allocating reduction counters");
    }
    gx__scratch_free(ctx, s->cnt, (size_t)s->ncnt * 8);
    s->cnt = p;
    s->ncnt = n;
    return GX_OK;
}

static gx_status rg_scr_get(gx_ctx *ctx, rg_scr **out)
{
    rg_scr *s = gx__ctx_ext_get(ctx, &rg_scr_ext);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for reduction scratch");
        gx_status st = gx__ctx_ext_set(ctx, &rg_scr_ext, s);
        if (st != GX_OK) {
            free(s);
            return st;
        }
    }
    *out = s;
    return GX_OK;
}

/* The slot of the context's current stream, made on first use. */
static gx_status rg_slot_get(gx_ctx *ctx, rg_slot **out)
{
    rg_scr *s = NULL;
    GX__CHECK(rg_scr_get(ctx, &s));
    const void *stream = ctx->kx ? (const void *)ctx->kx->current : NULL;
    for (rg_slot *sl = s->slots; sl; sl = sl->next)
        if (sl->stream == stream) {
            *out = sl;
            return GX_OK;
        }
    rg_slot *sl = calloc(1, sizeof *sl);
    if (!sl)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for reduction scratch");
    gx_status st = gx__scratch_alloc(ctx, RG_RES_BYTES, &sl->res);
    if (st != GX_OK) {
        free(sl);
        return gx__err_prefix(st, "allocating reduction scratch");
    }
    sl->stream = stream;
    sl->next = s->slots;
    s->slots = sl;
    *out = sl;
    return GX_OK;
}

gx_status rg_scratch(gx_ctx *ctx, size_t part_bytes, int64_t ncounters, uint64_t *part, uint64_t *counters)
{
    rg_slot *s;
    GX__CHECK(rg_slot_get(ctx, &s));
    if (part_bytes > s->part_bytes) {
        size_t want = part_bytes < 65536 ? 65536 : part_bytes + part_bytes / 2;
        void *p = NULL;
        GX__CHECK(gx__scratch_alloc(ctx, want, &p));
        gx__scratch_free(ctx, s->part, s->part_bytes);
        s->part = p;
        s->part_bytes = want;
    }
    if (ncounters > s->ncnt)
        GX__CHECK(rg_grow_counters(ctx, s, ncounters));
    *part = (uint64_t)(uintptr_t)s->part;
    *counters = (uint64_t)(uintptr_t)s->cnt;
    return GX_OK;
}

/* Inside a graph recording (gx/graph.h) a look-back launch gets status memory of its
 * own, kept by the graph (freed while recording = kept until gx_graph_destroy): a
 * parity word and two buffers, all zeroed now.  A replay cannot rely on the launch
 * before it the way the context's pair does, so the kernel picks its buffer by the
 * word's parity, zeroes the other for the next replay and flips the word
 * (range_gen.c, cu_clear_next).  Before that a recorded copy of zeros preceded each
 * recorded launch: a memcpy node, outside programmatic dependent launch, that cost a
 * graph of ten max scans over 1024 f32 4.6 us a scan against 1.1 for a map (H100,
 * `gx bench --filter graph_nodes`).  The context's pair is left alone: a recorded
 * launch does not run now, so it neither dirties nor clears the pair (counting it as
 * run left a dirty buffer marked clean, and the next direct scan read stale statuses:
 * wrong sums under compute-sanitizer, whose timing exposed it). */
static gx_status rg_lookback_recorded(gx_ctx *ctx, size_t bytes, void **use, void **clr, size_t *nclr, void **par)
{
    void *p = NULL;
    size_t total = 16 + 2 * bytes;
    GX__CHECK(gx__scratch_alloc(ctx, total, &p));
    gx_status st = rg_zero(ctx, p, total);
    gx__scratch_free(ctx, p, total); /* the recording keeps it until gx_graph_destroy */
    *par = p;
    *use = (char *)p + 16;
    *clr = (char *)p + 16 + bytes;
    *nclr = bytes;
    return st;
}

gx_status rg_lookback_mem(gx_ctx *ctx, size_t bytes, void **use, void **clr, size_t *nclr, void **par)
{
    bytes = (bytes + 15) & ~(size_t)15;
    *par = NULL;
    if (gx__graph_recording(ctx))
        return rg_lookback_recorded(ctx, bytes, use, clr, nclr, par);
    rg_slot *s; /* the stream's pair: only direct launches use it */
    GX__CHECK(rg_slot_get(ctx, &s));
    int i = s->lb_next;
    if (bytes > s->lb_cap[i]) {
        size_t want = bytes < 65536 ? 65536 : bytes + bytes / 4;
        void *p = NULL;
        GX__CHECK(gx__scratch_alloc(ctx, want, &p));
        gx__scratch_free(ctx, s->lb[i], s->lb_cap[i]);
        s->lb[i] = p;
        s->lb_cap[i] = want;
        s->lb_dirty[i] = want;
    }
    if (s->lb_dirty[i]) { /* fresh memory, or a launch that failed */
        gx_status st = rg_zero(ctx, s->lb[i], s->lb_dirty[i]);
        if (st != GX_OK)
            return gx__err_prefix(st, "zeroing look-back status memory");
        s->lb_dirty[i] = 0;
    }
    *use = s->lb[i];
    *clr = s->lb[1 - i];
    *nclr = s->lb_dirty[1 - i];
    /* As if the launch ran; rg_lookback_failed says otherwise. */
    s->lb_dirty[i] = bytes;
    s->lb_dirty[1 - i] = 0;
    s->lb_next = 1 - i;
    return GX_OK;
}

bool rg_host_result(gx_ctx *ctx, void **host, uint64_t *dev)
{
    rg_slot *s = NULL;
    const gx__backend_iface *be = ctx->be.iface;
    if (!gx__ctx_supports(ctx, GX__CAP_PINNED_HOST | GX__CAP_MAPPED_HOST) || rg_slot_get(ctx, &s) != GX_OK)
        return false;
    if (!s->hres && !s->hres_failed) {
        /* Without it each result costs a copy, nothing else: a failure here is
         * not the caller's error (its text stays until the next failing call). */
        if (be->mem.host_alloc(&ctx->be, RG_RES_BYTES, &s->hres) != GX_OK ||
            be->mem.host_devptr(&ctx->be, s->hres, &s->hres_dev) != GX_OK) {
            if (s->hres)
                be->mem.host_free(&ctx->be, s->hres);
            s->hres = NULL;
            s->hres_failed = true;
        }
    }
    *host = s->hres;
    *dev = s->hres_dev;
    return s->hres != NULL;
}

void rg_lookback_failed(gx_ctx *ctx)
{
    rg_slot *s = NULL;
    if (rg_slot_get(ctx, &s) != GX_OK)
        return;
    for (int i = 0; i < 2; i++)
        s->lb_dirty[i] = s->lb_cap[i]; /* zeroed by the host before their next use */
}

/* ------------------------------------------------------------ shared generated text */

const char *rg_cuda_helpers(void)
{
    return "template <typename T> static __device__ __forceinline__ T rg_shfl(T v, int off)\n"
           "{\n"
           "  union { T t; unsigned w; unsigned long long d; } x;\n"
           "  x.d = 0ull;\n"
           "  x.t = v;\n"
           "  if (sizeof(T) <= 4) x.w = __shfl_down_sync(0xffffffffu, x.w, off);\n"
           "  else x.d = __shfl_down_sync(0xffffffffu, x.d, off);\n"
           "  return x.t;\n"
           "}\n"
           "template <typename T> static __device__ __forceinline__ T rg_vload(const T *p) { return *(const volatile T "
           "*)p; }\n";
}

static bool rg_is_cuda(gx_ctx *ctx) { return gx__target_is_cuda(ctx); }

void rg_gen_common(gx__sbuf *b, const rg_spec *sp)
{
    /* NVRTC has no <stdint.h>: the prelude's fixed-width types only. */
    gx__sb_puts(b, "typedef uint64_t rg_uptr;\n#define RG_IMAX ((int64_t)0x7fffffffffffffffLL)\n");
    gx__sb_printf(b, "typedef struct { %s } rg_user_t;\n",
                  sp->user_fields && sp->user_fields[0] ? sp->user_fields : "int64_t rg_unused_;");
    gx__sb_printf(b,
                  "typedef struct { int64_t n; uint64_t part, part_idx, counter, seen, out, out_idx; "
                  "uint64_t stream[%d]; rg_user_t u; } gx_args;\n",
                  RG_MAXSTREAMS);
    gx__sb_printf(b, "typedef %s rg_acc;\ntypedef %s rg_out;\n", gx__dtype_ctype(sp->acc),
                  gx__dtype_ctype(sp->out_dtype));
    /* Wrapping integer + and *: through uint64_t on CUDA; on the CPU plainly, as the
     * compiler runs with -fwrapv (GCC 12 -O3 -march=native miscompiles the uint64_t
     * form in vectorised reduction loops over widened int32 inputs). */
    gx__sb_puts(b, "#if defined(__CUDACC__)\n#define RG_WRAP(op, x, y) (rg_acc)((uint64_t)(x) op (uint64_t)(y))\n"
                   "#else\n#define RG_WRAP(op, x, y) (rg_acc)((x) op (y))\n#endif\n");
    /* fmax/fmin: one instruction on the GPU; a select the CPU compiler vectorises. */
    gx__sb_puts(b, "#if defined(__CUDACC__)\n"
                   "GXF float rg_fmax32(float x, float y) { return fmaxf(x, y); }\n"
                   "GXF float rg_fmin32(float x, float y) { return fminf(x, y); }\n"
                   "GXF double rg_fmax64(double x, double y) { return fmax(x, y); }\n"
                   "GXF double rg_fmin64(double x, double y) { return fmin(x, y); }\n#else\n"
                   "GXF float rg_fmax32(float x, float y) { return (y != y || x > y) ? x : y; }\n"
                   "GXF float rg_fmin32(float x, float y) { return (y != y || x < y) ? x : y; }\n"
                   "GXF double rg_fmax64(double x, double y) { return (y != y || x > y) ? x : y; }\n"
                   "GXF double rg_fmin64(double x, double y) { return (y != y || x < y) ? x : y; }\n#endif\n");
    /* Infinities and NaN from their bits: no math.h macro is common to C and NVRTC. */
    gx__sb_puts(b, "GXF float rg_f32_bits(uint32_t v) { union { uint32_t u; float f; } x; x.u = v; return x.f; }\n"
                   "GXF double rg_f64_bits(uint64_t v) { union { uint64_t u; double f; } x; x.u = v; return x.f; }\n");
    gx__sb_printf(b, "GXF rg_acc rg_identity(const rg_user_t *u) { (void)u; return (rg_acc)(%s); }\n", sp->identity);
    if (sp->with_index) {
        gx__sb_printf(b, "GXF bool rg_better(rg_acc gx_l, rg_acc gx_r) { return (%s); }\n", sp->better);
        gx__sb_printf(b, "GXF rg_acc rg_sel(rg_acc gx_l, rg_acc gx_r) { return (%s); }\n",
                      sp->sel ? sp->sel : "rg_better(gx_r, gx_l) ? gx_r : gx_l");
        /* Strictly better wins; equal candidates keep the smaller index (first best). */
        gx__sb_puts(b, "GXF void rg_pick(rg_acc *v, int64_t *ix, rg_acc ov, int64_t oix)\n{\n"
                       "  if (rg_better(ov, *v) || (!rg_better(*v, ov) && oix < *ix)) { *v = ov; *ix = oix; }\n}\n");
    } else {
        gx__sb_printf(b, "GXF rg_acc rg_comb(rg_acc gx_l, rg_acc gx_r) { return (rg_acc)(%s); }\n", sp->combine);
    }
    gx__sb_printf(b, "GXF rg_out rg_final(rg_acc r, const rg_user_t *u) { (void)u; return %s(%s); }\n",
                  gx__dtype_is_half(sp->out_dtype) ? gx__dtype_store(sp->out_dtype) : "(rg_out)",
                  sp->final ? sp->final : "r");
}

/* Folds value `v` of index `i` into accumulator r (and index q). */
static void rg_gen_fold(gx__sbuf *b, const rg_spec *sp, const char *r, const char *q, const char *ind)
{
    /* A thread meets its indices in increasing order: the first value replaces the
     * identity, later ones only when strictly better (ties keep the earlier index). */
    if (sp->with_index)
        gx__sb_printf(b, "%sif (%s(rg_better(v, %s) || %s == RG_IMAX)) { %s = v; %s = i; }\n", ind,
                      sp->filtered ? "keep && " : "", r, q, r, q);
    else
        gx__sb_printf(b, "%s%s%s = rg_comb(%s, v);\n", ind, sp->filtered ? "if (keep) " : "", r, r);
}

/* The value of one element as v: i is set by the caller's text `idx`; stream values
 * come from `load[k]`.  Leaves the block open for the caller's use of v. */
static void rg_gen_value(gx__sbuf *b, const rg_spec *sp, const char *idx, const char *const *load, const char *ind)
{
    gx__sb_printf(b, "%s{\n%s  const int64_t i = %s;\n%s  (void)i;\n", ind, ind, idx, ind);
    for (int k = 0; k < sp->nstreams; k++)
        gx__sb_printf(b, "%s  const %s x%d = %s;\n%s  (void)x%d;\n", ind, gx__dtype_ctype(sp->stream_dt[k]), k, load[k],
                      ind, k);
    gx__sb_printf(b, "%s  rg_acc v;\n", ind);
    if (sp->filtered)
        gx__sb_printf(b, "%s  bool keep = true;\n", ind);
    gx__sb_printf(b, "%s  %s\n", ind, sp->elem);
}

/* One element folded into r (and q). */
static void rg_gen_elem(gx__sbuf *b, const rg_spec *sp, const char *idx, const char *const *load, const char *r,
                        const char *q, const char *ind)
{
    rg_gen_value(b, sp, idx, load, ind);
    char ind2[32];
    gx__fmt(ind2, sizeof ind2, "%s  ", ind);
    rg_gen_fold(b, sp, r, q, ind2);
    gx__sb_printf(b, "%s}\n", ind);
}

static void rg_gen_streams(gx__sbuf *b, const rg_spec *sp, const char *acc, const char *restrict_kw)
{
    for (int k = 0; k < sp->nstreams; k++)
        gx__sb_printf(b, "  const %s *%s s%d = (const %s *)(rg_uptr)%sstream[%d];\n", gx__dtype_ctype(sp->stream_dt[k]),
                      restrict_kw, k, gx__dtype_ctype(sp->stream_dt[k]), acc, k);
}

/* ------------------------------------------------------------ CPU */

/* f32 sums accumulate in f64 (reduce.c).  GCC leaves eight named f64 accumulators
 * fed by f32 conversions scalar (one cvtss2sd and addsd per element); an array of
 * RG_CPU_LANES written by a loop over the lane it turns into vector converts and
 * adds.  In L2 (2^18 f32 per thread, Xeon @ 2.8 GHz, AVX-512): 8 named f64
 * accumulators 3.3 G elements/s, f32 ones (the old sum) 3.6-4.5, 16 lanes of f64
 * 6.2-8.5; the l2 distance map 1.7, 2.0-2.4 and 3.1-4.0.  Every plain fold on the
 * CPU now takes this form (rg_cpu_lanes); here it names the sums whose CUDA kernel
 * keeps one accumulator per vector lane too (rg_unroll). */
static bool rg_wide_lanes(const rg_spec *sp)
{
    return sp->acc == GX_F64 && rg_widens(sp) && !sp->with_index && !sp->filtered;
}

/* GCC 12 -O3 -march=native -fwrapv miscompiles the vectorised form of a fold whose
 * combine wraps through uint64_t, as the lambda prelude's integer helpers (gx_add_i64...)
 * do; such kernels are built without the loop vectoriser (rg_gen_cpu). */
static bool rg_cpu_novec(const rg_spec *sp)
{
    if (gx__dtype_is_float(sp->acc) || !sp->combine)
        return false;
    /* Only a helper's name counts: every combine names its operands gx_l and gx_r, and
     * matching those too had left every integer sum, max, min and bitwise fold on the
     * eight named accumulators (an i32 sum of 2^24 on one core of the 16-core host:
     * 9.6-10.2 ms, against 7.4 for the same fold in vector lanes). */
    for (const char *p = strstr(sp->combine, "gx_"); p; p = strstr(p + 3, "gx_")) {
        const char c = p[3], d = c ? p[4] : 0;
        const bool ident = (d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || (d >= '0' && d <= '9') || d == '_';
        if (!((c == 'l' || c == 'r') && !ident))
            return true;
    }
    return false;
}

/* The lanes form needs the loop vectoriser; without it the eight named accumulators
 * (which GCC's straight-line vectoriser still packs) are faster: an i32 sum of 2^24
 * on 2 threads took 10.3 ms in lanes against 5.4. */
static bool rg_cpu_lanes(const rg_spec *sp)
{
    return !sp->with_index && !sp->filtered && !rg_cpu_novec(sp);
}

/* `pf`: the prefetches of `elems` elements of every stream from index `idx` on, one
 * per 64-byte line (GX__PF in the C prelude; large parts only, see RG_CPU_WIDE_MIN). */
static void rg_gen_cpu_pf(gx__sbuf *b, const rg_spec *sp, bool pf, const char *idx, int elems, const char *ind)
{
    char ptr[64];
    for (int k = 0; pf && k < sp->nstreams; k++) {
        gx__fmt(ptr, sizeof ptr, "s%d + %s", k, idx);
        lam_emit_prefetch(b, ind, ptr, (size_t)elems * gx_dtype_size(sp->stream_dt[k]));
    }
}

/* One step of the lanes loop: elements i0 .. i0 + RG_CPU_LANES - 1 (prefetched ahead
 * when `pf`) folded into the lane array `acc` (an lvalue of k), at indent `ind`. */
static void rg_gen_cpu_step(gx__sbuf *b, const rg_spec *sp, const char *const *load, bool pf, const char *acc,
                            const char *ind)
{
    rg_gen_cpu_pf(b, sp, pf, "i0", RG_CPU_LANES, ind);
    gx__sb_printf(b, "%s%sfor (int k = 0; k < %d; k++)\n", RG_CPU_NO_UNROLL, ind, RG_CPU_LANES);
    rg_gen_elem(b, sp, "i0 + k", load, acc, "", ind);
}

/* The thread's share folded into RG_CPU_LANES lanes of one accumulator array (see
 * rg_wide_lanes), stored to its partial.  An f32 accumulator (opts->dtype GX_F32, or
 * halves) folds blocks of RG_CPU_BLOCK elements into fresh lanes and adds each block's
 * lanes to the running ones.  Why: a lane that folds its n / 16 elements in one
 * chain loses ~sqrt(n / 16) roundings of its growing sum: 2^20 + 3 f32 in [0.5, 1)
 * with opts->dtype GX_F32 was 0.15-1.04 off on 1, 3 and 8 threads (the test's bound,
 * n eps_f32 max|x|, is 0.125; reduce_f32_sum_accuracy failed there on the 16-core
 * host and passed on 2, 5, 16 and 32).  In blocks each fresh lane sums 128 elements
 * and the running lanes n / 2048 block sums: 0.02-0.04 off at every count, and one
 * thread's 2^20 took 45.9 us against 54.6 (2-core VM). */
static void rg_gen_cpu_lanes(gx__sbuf *b, const rg_spec *sp, const char *const *load, bool pf)
{
    gx__sb_printf(b, "  rg_acc r[%d];\n  for (int k = 0; k < %d; k++) r[k] = rg_identity(u);\n", RG_CPU_LANES,
                  RG_CPU_LANES);
    gx__sb_puts(b, "  int64_t i0 = begin;\n");
    if (sp->acc == GX_F32) {
        gx__sb_printf(b,
                      "  for (; i0 + %d <= end;) {\n    rg_acc t[%d];\n"
                      "    for (int k = 0; k < %d; k++) t[k] = rg_identity(u);\n"
                      "    for (const int64_t ie = i0 + %d; i0 < ie; i0 += %d) {\n",
                      RG_CPU_BLOCK, RG_CPU_LANES, RG_CPU_LANES, RG_CPU_BLOCK, RG_CPU_LANES);
        rg_gen_cpu_step(b, sp, load, pf, "t[k]", "      ");
        gx__sb_printf(b, "    }\n%s    for (int k = 0; k < %d; k++) r[k] = rg_comb(r[k], t[k]);\n  }\n",
                      RG_CPU_NO_UNROLL, RG_CPU_LANES);
    }
    gx__sb_printf(b, "  for (; i0 + %d <= end; i0 += %d) {\n", RG_CPU_LANES, RG_CPU_LANES);
    rg_gen_cpu_step(b, sp, load, pf, "r[k]", "    ");
    gx__sb_puts(b, "  }\n  for (; i0 < end; i0++)\n");
    rg_gen_elem(b, sp, "i0", load, "r[0]", "", "    ");
    gx__sb_printf(b,
                  "  for (int st = 1; st < %d; st *= 2)\n"
                  "    for (int k = 0; k + st < %d; k += 2 * st) r[k] = rg_comb(r[k], r[k + st]);\n"
                  "  ((rg_acc *)(rg_uptr)a->part)[thread] = r[0];\n",
                  RG_CPU_LANES, RG_CPU_LANES);
}

/* The thread's share folded into eight named accumulators, stored to its partial. */
static void rg_gen_cpu_named(gx__sbuf *b, const rg_spec *sp, const char *const *load, bool pf)
{
    char r[RG_CPU_ACC][16], q[RG_CPU_ACC][16], idx[RG_CPU_ACC][24];
    for (int k = 0; k < RG_CPU_ACC; k++) {
        gx__fmt(r[k], sizeof r[k], "r%d", k);
        gx__fmt(q[k], sizeof q[k], "q%d", k);
        gx__fmt(idx[k], sizeof idx[k], "i0 + %d", k);
        gx__sb_printf(b, "  rg_acc r%d = rg_identity(u);\n  int64_t q%d = RG_IMAX;\n  (void)q%d;\n", k, k, k);
    }
    /* Independent accumulators let the compiler keep one vector lane per accumulator. */
    gx__sb_printf(b, "  int64_t i0 = begin;\n  for (; i0 + %d <= end; i0 += %d) {\n", RG_CPU_ACC, RG_CPU_ACC);
    rg_gen_cpu_pf(b, sp, pf, "i0", RG_CPU_ACC, "    ");
    for (int k = 0; k < RG_CPU_ACC; k++)
        rg_gen_elem(b, sp, idx[k], load, r[k], q[k], "    ");
    gx__sb_puts(b, "  }\n  for (; i0 < end; i0++) {\n");
    rg_gen_elem(b, sp, "i0", load, "r0", "q0", "    ");
    gx__sb_puts(b, "  }\n");
    for (int step = 1; step < RG_CPU_ACC; step *= 2)
        for (int k = 0; k + step < RG_CPU_ACC; k += 2 * step) {
            if (sp->with_index)
                gx__sb_printf(b, "  rg_pick(&r%d, &q%d, r%d, q%d);\n", k, k, k + step, k + step);
            else
                gx__sb_printf(b, "  r%d = rg_comb(r%d, r%d);\n", k, k, k + step);
        }
    gx__sb_puts(b, "  ((rg_acc *)(rg_uptr)a->part)[thread] = r0;\n");
    if (sp->with_index)
        gx__sb_puts(b, "  ((int64_t *)(rg_uptr)a->part_idx)[thread] = q0;\n");
}

/* argmin/argmax: per batch of RG_CPU_FIND elements, the batch's best value alone in
 * rg_cpu_find_lanes lanes (rg_sel: a compare and a blend, which vectorise), then its first
 * index only when it beats the thread's best -- on most batches it does not, and the
 * batch is still in L1 when it does.  That index is found RG_CPU_LANES elements at a
 * time (a vector compare of the lanes against the batch's best, then the first of the
 * one group that holds it): one element at a time, the search of a batch was most of
 * the difference between a warm argmin and a sum of 1024 f32 rotated through L2
 * (2-core VM, 64 inputs rotated: median 1.85 against 1.40 us a call, 10th percentile
 * 1.50 against 1.17; after: 1.63-1.82 median, 1.27-1.33 10th percentile, a noisy VM).
 * The eight named (value, index) accumulators
 * this replaced branch per element and stay scalar: argmin of 2^20 f32 on the
 * 2-core VM took 1323 us against 363 us for the sum of the same data.
 * The batch keeps rg_cpu_find_lanes lanes, four vectors of AVX-512: with one vector
 * (16 lanes) every rg_sel waited on the one before it (compare, mask or, blend: a
 * chain of ~5 cycles a vector), and a batch that cannot win is skipped on a vector
 * compare of its lanes against the best, before any tree.  2-core AMD EPYC VM, 2
 * threads, f32 in the LLC: 2^20 argmin 71 -> 50 us (the sum 45), 2^24 1350 -> 960 us
 * (the sum 850); 2^16 5.5 -> 4.1 us.  A batch of 1024 measured the same as 256. */
/* Four 512-bit vectors of lanes (two AVX2 ones of 8-byte values: registers run out). */
static int rg_cpu_find_lanes(const rg_spec *sp) { return gx_dtype_size(sp->acc) <= 4 ? 64 : 32; }

static void rg_gen_cpu_find(gx__sbuf *b, const rg_spec *sp, const char *const *load, bool pf)
{
    const int fl = rg_cpu_find_lanes(sp);
    gx__sb_puts(b, "  rg_acc r = rg_identity(u);\n  int64_t q = RG_IMAX;\n  int64_t i0 = begin;\n");
    gx__sb_printf(b, "  for (; i0 + %d <= end; i0 += %d) {\n    rg_acc bm[%d];\n", RG_CPU_FIND, RG_CPU_FIND, fl);
    rg_gen_cpu_pf(b, sp, pf, "i0", fl, "    ");
    gx__sb_printf(b, "%s    for (int k = 0; k < %d; k++)\n", RG_CPU_NO_UNROLL, fl);
    rg_gen_value(b, sp, "i0 + k", load, "    ");
    gx__sb_printf(b, "      bm[k] = v;\n    }\n    for (int jb = %d; jb < %d; jb += %d) {\n", fl, RG_CPU_FIND, fl);
    rg_gen_cpu_pf(b, sp, pf, "i0 + jb", fl, "      ");
    gx__sb_printf(b, "%s      for (int k = 0; k < %d; k++)\n", RG_CPU_NO_UNROLL, fl);
    rg_gen_value(b, sp, "i0 + jb + k", load, "      ");
    gx__sb_printf(b,
                  "        bm[k] = rg_sel(bm[k], v);\n      }\n    }\n"
                  "    if (q != RG_IMAX) {\n      int better = 0;\n%s      for (int k = 0; k < %d; k++)\n"
                  "        better |= rg_better(bm[k], r);\n      if (!better)\n        continue;\n    }\n"
                  "    for (int st = %d; st > 0; st /= 2)\n      for (int k = 0; k < st; k++) bm[k] = rg_sel(bm[k], bm[k + st]);\n"
                  "    for (int jb = 0; jb < %d; jb += %d) {\n      int hit = 0;\n%s      for (int k = 0; k < %d; k++)\n",
                  RG_CPU_NO_UNROLL, fl, fl / 2, RG_CPU_FIND, RG_CPU_LANES, RG_CPU_NO_UNROLL, RG_CPU_LANES);
    rg_gen_value(b, sp, "i0 + jb + k", load, "      ");
    gx__sb_printf(b, "        hit |= !rg_better(bm[0], v);\n      }\n      if (!hit)\n        continue;\n"
                     "      for (int j = jb; j < jb + %d; j++)\n",
                  RG_CPU_LANES);
    rg_gen_value(b, sp, "i0 + j", load, "      ");
    gx__sb_puts(b, "        if (!rg_better(bm[0], v)) { r = v; q = i; break; }\n      }\n      break;\n    }\n  }\n"
                   "  for (; i0 < end; i0++)\n");
    rg_gen_elem(b, sp, "i0", load, "r", "q", "    ");
    gx__sb_puts(b, "  ((rg_acc *)(rg_uptr)a->part)[thread] = r;\n  ((int64_t *)(rg_uptr)a->part_idx)[thread] = q;\n");
}

/* The fold's body is a function of its own whose streams are restrict parameters,
 * called by the entry point.  Why: declared as restrict locals initialised from the
 * argument block's integers (rg_gen_streams), GCC 12 does not trust them, versions
 * the lanes loop for an alias between a stream and the lane array, and keeps the
 * lanes in memory -- a store and a reload of every accumulator per 16 elements, a
 * store-forwarding chain.  One thread, 2^15 f32 in L2 (2-core VM, Xeon @ 2.8 GHz):
 * the f32 sum's fold 5.5 -> 9.2 G elements/s; from memory 1.83 -> 1.92 (the loop
 * keeps more loads in flight).  noinline keeps the parameters' restrict meaning. */
static void rg_gen_cpu_head(gx__sbuf *b, const rg_spec *sp, bool wide)
{
    gx__sb_puts(b, RG_CPU_BODY_ATTRS);
    if (wide)
        gx__sb_puts(b, RG_CPU_WIDE_IF RG_CPU_WIDE_ATTR "#endif\n");
    if (rg_cpu_novec(sp))
        gx__sb_puts(b, "#if defined(__GNUC__) && !defined(__clang__)\n"
                       "__attribute__((optimize(\"no-tree-loop-vectorize\")))\n#endif\n");
    gx__sb_printf(b, "static void gx_rg_body%s(const gx_args *a, const rg_user_t *u, int64_t begin, int64_t end, int thread",
                  wide ? "_wide" : "");
    for (int k = 0; k < sp->nstreams; k++)
        gx__sb_printf(b, ", const %s *restrict s%d", gx__dtype_ctype(sp->stream_dt[k]), k);
    gx__sb_puts(b, ")\n{\n  (void)u;\n");
}

/* The entry point: unpacks the stream pointers for gx_rg_body (or, for a large part,
 * gx_rg_body_wide: reduce_gen.h's RG_CPU_WIDE_*). */
static void rg_gen_cpu_entry(gx__sbuf *b, const rg_spec *sp)
{
    char args[RG_MAXSTREAMS * 48 + 64];
    size_t at = (size_t)gx__fmt(args, sizeof args, "a, &a->u, begin, end, thread");
    for (int k = 0; k < sp->nstreams && at < sizeof args; k++)
        at += (size_t)gx__fmt(args + at, sizeof args - at, ", (const %s *)(rg_uptr)a->stream[%d]",
                              gx__dtype_ctype(sp->stream_dt[k]), k);
    gx__sb_puts(b, "void gx_rg(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                   "  const gx_args *a = (const gx_args *)ap;\n");
    gx__sb_printf(b, "  if (end - begin >= %d) {\n    gx_rg_body_wide(%s);\n    return;\n  }\n", RG_CPU_WIDE_MIN, args);
    gx__sb_printf(b, "  gx_rg_body(%s);\n}\n", args);
}

/* The fold of one part, after rg_gen_cpu_head (`pf`: a large part's, which prefetches). */
static void rg_gen_cpu_fold(gx__sbuf *b, const rg_spec *sp, bool pf)
{
    char ld[RG_MAXSTREAMS][32];
    const char *load[RG_MAXSTREAMS];
    for (int s = 0; s < sp->nstreams; s++) {
        gx__fmt(ld[s], sizeof ld[s], "s%d[i]", s);
        load[s] = ld[s];
    }
    if (rg_cpu_lanes(sp))
        rg_gen_cpu_lanes(b, sp, load, pf);
    else if (sp->with_index && !sp->filtered)
        rg_gen_cpu_find(b, sp, load, pf);
    else
        rg_gen_cpu_named(b, sp, load, pf);
    gx__sb_puts(b, "  ((int64_t *)(rg_uptr)a->seen)[thread] = 1;\n}\n");
}

static void rg_gen_cpu(gx__sbuf *b, const rg_spec *sp)
{
    rg_gen_cpu_head(b, sp, false);
    rg_gen_cpu_fold(b, sp, false);
    rg_gen_cpu_head(b, sp, true);
    rg_gen_cpu_fold(b, sp, true);
    rg_gen_cpu_entry(b, sp);

    /* The second call: a->n is the number of worker slots; combined in thread order. */
    gx__sb_puts(b, "void gx_rg_fin(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                   "  const gx_args *a = (const gx_args *)ap;\n  const rg_user_t *u = &a->u;\n"
                   "  (void)begin; (void)end; (void)thread;\n"
                   "  int64_t *seen = (int64_t *)(rg_uptr)a->seen;\n"
                   "  const rg_acc *part = (const rg_acc *)(rg_uptr)a->part;\n"
                   "  rg_acc r = rg_identity(u);\n  int64_t q = RG_IMAX;\n"
                   "  for (int64_t t = 0; t < a->n; t++) {\n    if (!seen[t]) continue;\n    seen[t] = 0;\n");
    if (sp->with_index)
        gx__sb_puts(b, "    rg_pick(&r, &q, part[t], ((const int64_t *)(rg_uptr)a->part_idx)[t]);\n");
    else
        gx__sb_puts(b, "    r = rg_comb(r, part[t]);\n");
    gx__sb_puts(b, "  }\n  if (a->out) *(rg_out *)(rg_uptr)a->out = rg_final(r, u);\n"
                   "  if (a->out_idx) *(int64_t *)(rg_uptr)a->out_idx = q;\n  (void)q;\n}\n");
}

/* ------------------------------------------------------------ CUDA */

/* Block-wide reduction: thread 0 ends with the block's value.  Shuffles within each
 * warp, one shared slot per warp, then warp 0 folds the slots. */
void rg_gen_cuda_block(gx__sbuf *b, const rg_spec *sp)
{
    gx__sb_puts(b, "static __device__ __forceinline__ void rg_block(rg_acc *r, int64_t *q, const rg_user_t *u)\n{\n"
                   "  __shared__ rg_acc sv[32];\n  __shared__ int64_t sq[32];\n"
                   "  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;\n"
                   "  (void)sq;\n");
    const char *warp = sp->with_index
                           ? "  for (int off = 16; off > 0; off >>= 1) {\n"
                             "    const rg_acc ov = rg_shfl(*r, off);\n    const int64_t oq = rg_shfl(*q, off);\n"
                             "    rg_pick(r, q, ov, oq);\n  }\n"
                           : "  for (int off = 16; off > 0; off >>= 1) *r = rg_comb(*r, rg_shfl(*r, off));\n";
    gx__sb_puts(b, warp);
    gx__sb_puts(b, "  __syncthreads();   /* an earlier call's readers are done with sv */\n"
                   "  if (lane == 0) { sv[w] = *r; sq[w] = *q; }\n  __syncthreads();\n"
                   "  if (w != 0) return;\n"
                   "  *r = lane < nw ? sv[lane] : rg_identity(u);\n  *q = lane < nw ? sq[lane] : RG_IMAX;\n");
    gx__sb_puts(b, warp);
    gx__sb_puts(b, "}\n");
}

/* argmin/argmax over a full batch of loads: the batch's best value alone first (one
 * min/max instruction per element for floats), and its first index only when it beats
 * the thread's best, which on most batches it does not.  Ends the iteration. */
static void rg_gen_find_batch(gx__sbuf *b, const rg_spec *sp, int vec, const char *const *load)
{
    int nb = RG_UNROLL * vec;
    gx__sb_printf(b, "    if (v0 + %d * nth < nv) {\n      rg_acc bv[%d], bm[%d];\n", RG_UNROLL - 1, nb, nb);
    gx__sb_printf(b,
                  "#pragma unroll\n      for (int uu = 0; uu < %d; uu++)\n#pragma unroll\n"
                  "        for (int k = 0; k < %d; k++)\n",
                  RG_UNROLL, vec);
    char idx[48];
    gx__fmt(idx, sizeof idx, "(v0 + uu * nth) * %d + k", vec);
    rg_gen_value(b, sp, idx, load, "        ");
    gx__sb_printf(b, "          bv[uu * %d + k] = bm[uu * %d + k] = v;\n        }\n", vec, vec);
    gx__sb_printf(b,
                  "#pragma unroll\n      for (int s = 1; s < %d; s <<= 1)\n#pragma unroll\n"
                  "        for (int j = 0; j + s < %d; j += 2 * s) bm[j] = rg_sel(bm[j], bm[j + s]);\n",
                  nb, nb);
    gx__sb_printf(
        b,
        "      if (q == RG_IMAX || rg_better(bm[0], r)) {\n        int jj = %d;\n"
        "        rg_acc rv = bv[%d];\n"
        "#pragma unroll\n        for (int j = %d; j >= 0; j--) if (!rg_better(bm[0], bv[j])) { jj = j; rv = bv[j]; }\n"
        "        r = rv;\n        q = (v0 + (int64_t)(jj / %d) * nth) * %d + jj %% %d;\n      }\n"
        "      continue;\n    }\n",
        nb - 1, nb - 1, nb - 2, vec, vec, vec);
}

static void rg_gen_cuda_main_loop(gx__sbuf *b, const rg_spec *sp, int vec)
{
    char ld[RG_MAXSTREAMS][40];
    const char *load[RG_MAXSTREAMS];
    if (vec > 1 && sp->nstreams > 0) {
        for (int k = 0; k < sp->nstreams; k++) {
            gx__sb_printf(b, "  struct __align__(%zu) rgv%d { %s e[%d]; };\n",
                          gx_dtype_size(sp->stream_dt[k]) * (size_t)vec, k, gx__dtype_ctype(sp->stream_dt[k]), vec);
            gx__fmt(ld[k], sizeof ld[k], "xv%d[uu].e[k]", k);
            load[k] = ld[k];
        }
        gx__sb_printf(b, "  const int64_t nv = n / %d;\n", vec);
        /* Widening f64 sums: one accumulator per vector lane, so the adds of a
         * thread's loads do not wait on each other (one chain of dependent f64 adds
         * was 5.7% slower at 2^24 f32 on an H100, see rg_unroll); folded in lane
         * order after the loop, so the result stays deterministic. */
        bool lanes = rg_wide_lanes(sp);
        if (lanes)
            gx__sb_printf(b, "  rg_acc rl[%d];\n#pragma unroll\n  for (int k = 0; k < %d; k++) rl[k] = r;\n", vec, vec);
        gx__sb_printf(b, "  for (int64_t v0 = tid; v0 < nv; v0 += nth * %d) {\n", RG_UNROLL);
        for (int k = 0; k < sp->nstreams; k++)
            gx__sb_printf(b, "    rgv%d xv%d[%d];\n", k, k, RG_UNROLL);
        /* Every load issued before any use: RG_UNROLL x 16 bytes in flight per stream. */
        gx__sb_printf(b,
                      "#pragma unroll\n    for (int uu = 0; uu < %d; uu++) {\n      const int64_t vv = v0 + uu * nth;\n"
                      "      if (vv < nv) {\n",
                      RG_UNROLL);
        for (int k = 0; k < sp->nstreams; k++)
            gx__sb_printf(b, "        xv%d[uu] = ((const rgv%d *)s%d)[vv];\n", k, k, k);
        gx__sb_puts(b, "      }\n    }\n");
        if (sp->with_index && !sp->filtered)
            rg_gen_find_batch(b, sp, vec, load);
        gx__sb_printf(b,
                      "#pragma unroll\n    for (int uu = 0; uu < %d; uu++) {\n"
                      "      const int64_t vv = v0 + uu * nth;\n      if (vv < nv) {\n"
                      "#pragma unroll\n        for (int k = 0; k < %d; k++)\n",
                      RG_UNROLL, vec);
        char idx[32];
        gx__fmt(idx, sizeof idx, "vv * %d + k", vec);
        rg_gen_elem(b, sp, idx, load, lanes ? "rl[k]" : "r", "q", "        ");
        gx__sb_puts(b, "      }\n    }\n  }\n");
        if (lanes)
            gx__sb_printf(
                b, "#pragma unroll\n  for (int k = 1; k < %d; k++) rl[0] = rg_comb(rl[0], rl[k]);\n  r = rl[0];\n",
                vec);
        gx__sb_printf(b, "  for (int64_t ii = nv * %d + tid; ii < n; ii += nth)\n", vec);
    } else {
        gx__sb_puts(b, "  for (int64_t ii = tid; ii < n; ii += nth)\n");
    }
    for (int k = 0; k < sp->nstreams; k++) {
        gx__fmt(ld[k], sizeof ld[k], "s%d[ii]", k);
        load[k] = ld[k];
    }
    rg_gen_elem(b, sp, "ii", load, "r", "q", "  ");
}

/* Every thread's share folded and the block's value in thread 0 (rg_block): what both
 * entries start with, as one inlined function so the text is emitted once. */
static void rg_gen_cuda_part(gx__sbuf *b, const rg_spec *sp, int vec)
{
    gx__sb_puts(b, "static __device__ __forceinline__ void rg_part(const gx_args &a, rg_acc *rr, int64_t *qq)\n{\n"
                   "  const rg_user_t *u = &a.u;\n  (void)u;\n  const int64_t n = a.n;\n"
                   "  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  const int64_t nth = (int64_t)gridDim.x * blockDim.x;\n"
                   "  rg_acc r = rg_identity(u);\n  int64_t q = RG_IMAX;\n  (void)q;\n");
    rg_gen_streams(b, sp, "a.", "__restrict__");
    rg_gen_cuda_main_loop(b, sp, vec);
    gx__sb_puts(b, "  rg_block(&r, &q, u);\n  *rr = r;\n  *qq = q;\n}\n");
}

/* The last fold, over `cnt` values loaded by `load` (an expression of index bb), in
 * the same order whoever calls it; thread 0 writes the results. */
static void rg_gen_cuda_fold(gx__sbuf *b, const rg_spec *sp, const char *cnt, const char *load, const char *load_idx)
{
    /* Loads go out `fin` at a time (rg_fin), not one L2 round trip each, and are
     * combined in the same order as one at a time (deterministic sums stay bitwise
     * the same). */
    int fin = rg_fin();
    gx__sb_printf(b,
                  "  r = rg_identity(u);\n  q = RG_IMAX;\n"
                  "  for (unsigned b0 = threadIdx.x; b0 < %s; b0 += blockDim.x * %d) {\n"
                  "    rg_acc pv[%d];\n    int64_t pq[%d];\n    (void)pq;\n"
                  "#pragma unroll\n    for (int k = 0; k < %d; k++) {\n"
                  "      const unsigned bb = b0 + k * blockDim.x;\n      if (bb < %s) {\n"
                  "        pv[k] = %s;\n",
                  cnt, fin, fin, fin, fin, cnt, load);
    if (sp->with_index)
        gx__sb_printf(b, "        pq[k] = %s;\n", load_idx);
    gx__sb_printf(b,
                  "      }\n    }\n#pragma unroll\n    for (int k = 0; k < %d; k++)\n"
                  "      if (b0 + k * blockDim.x < %s) %s;\n  }\n",
                  fin, cnt, sp->with_index ? "rg_pick(&r, &q, pv[k], pq[k])" : "r = rg_comb(r, pv[k])");
    gx__sb_puts(b, "  rg_block(&r, &q, u);\n"
                   "  if (threadIdx.x == 0) {\n"
                   "    if (a.out) *(rg_out *)(rg_uptr)a.out = rg_final(r, u);\n"
                   "    if (a.out_idx) *(int64_t *)(rg_uptr)a.out_idx = q;\n  }\n");
}

/* rg_grid_end, gx_rg's end: one block writes its value; more publish partials,
 * count in, and the block that counts last folds them (a fence, an atomic and a read
 * of every partial: a chain of L2 round trips the whole GPU waits for). */
static void rg_gen_cuda_grid(gx__sbuf *b, const rg_spec *sp)
{
    gx__sb_puts(b, "static __device__ __forceinline__ void rg_grid_end(const gx_args &a, rg_acc r, int64_t q)\n{\n"
                   "  const rg_user_t *u = &a.u;\n  (void)u;\n"
                   "  if (gridDim.x == 1) {\n"
                   "    if (threadIdx.x == 0) {\n"
                   "      if (a.out) *(rg_out *)(rg_uptr)a.out = rg_final(r, u);\n"
                   "      if (a.out_idx) *(int64_t *)(rg_uptr)a.out_idx = q;\n    }\n    return;\n  }\n"
                   "  __shared__ bool last;\n"
                   "  unsigned *counter = (unsigned *)(rg_uptr)a.counter;\n"
                   "  rg_acc *part = (rg_acc *)(rg_uptr)a.part;\n"
                   "  int64_t *part_idx = (int64_t *)(rg_uptr)a.part_idx;\n"
                   "  (void)part_idx;\n"
                   "  if (threadIdx.x == 0) {\n    part[blockIdx.x] = r;\n");
    if (sp->with_index)
        gx__sb_puts(b, "    part_idx[blockIdx.x] = q;\n");
    /* Publish the partial before counting in; the block that counts last sees all. */
    gx__sb_puts(b, "    __threadfence();\n    last = atomicAdd(counter, 1u) == gridDim.x - 1;\n  }\n"
                   "  __syncthreads();\n  if (!last) return;\n  __threadfence();\n");
    rg_gen_cuda_fold(b, sp, "gridDim.x", "rg_vload(&part[bb])", "rg_vload(&part_idx[bb])");
    gx__sb_puts(b, "  if (threadIdx.x == 0) *counter = 0u;   /* ready for the next launch */\n}\n");
    gx__sb_printf(b,
                  "extern \"C\" __global__ void __launch_bounds__(%d) gx_rg(const gx_args a)\n{\n  GX_PDL_ENTER();\n"
                  "  rg_acc r;\n  int64_t q;\n  rg_part(a, &r, &q);\n  rg_grid_end(a, r, q);\n}\n",
                  RG_BLOCK);
}

/* gx_rg_cl: one cluster of RG_CLUSTER blocks (sm_90's thread block clusters).  Each
 * block stores its value straight into block 0's shared memory (distributed shared
 * memory, `mapa`), the cluster barrier orders those stores before block 0's reads,
 * and block 0 folds them: no partials in global memory, no fence, no atomic.  A
 * block may write into another's shared memory only once that block has started:
 * each arrives at a first (relaxed) barrier on entry and waits on it after its own
 * loads, so the wait costs nothing (without it compute-sanitizer's racecheck saw
 * writes into blocks that "might not have entered yet").  Below
 * sm_90 the entry exists with gx_rg's global chain, so the host's choice never finds a
 * missing symbol. */
static void rg_gen_cuda_cluster(gx__sbuf *b, const rg_spec *sp)
{
    gx__sb_printf(b,
                  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
                  "template <typename T> static __device__ __forceinline__ T *rg_cl_map0(T *p)\n{\n"
                  "  unsigned long long d;\n"
                  "  asm volatile(\"mapa.u64 %%0, %%1, 0;\" : \"=l\"(d) : \"l\"((unsigned long long)p));\n"
                  "  return (T *)d;\n}\n"
                  "extern \"C\" __global__ void __cluster_dims__(%d, 1, 1) __launch_bounds__(%d) gx_rg_cl(const gx_args a)\n"
                  "{\n  GX_PDL_ENTER();\n"
                  "  asm volatile(\"barrier.cluster.arrive.relaxed;\" ::: \"memory\");   /* this block has started */\n"
                  "  const rg_user_t *u = &a.u;\n  (void)u;\n"
                  "  rg_acc r;\n  int64_t q;\n  rg_part(a, &r, &q);\n"
                  "  __shared__ rg_acc cv[%d];\n  __shared__ int64_t cq[%d];\n  (void)cq;\n"
                  "  unsigned rank;\n  asm volatile(\"mov.u32 %%0, %%%%cluster_ctarank;\" : \"=r\"(rank));\n"
                  "  asm volatile(\"barrier.cluster.wait;\" ::: \"memory\");   /* block 0 has started: its shared memory exists */\n"
                  "  if (threadIdx.x == 0) {\n    *rg_cl_map0(&cv[rank]) = r;\n",
                  RG_CLUSTER, RG_BLOCK, RG_CLUSTER, RG_CLUSTER);
    if (sp->with_index)
        gx__sb_puts(b, "    *rg_cl_map0(&cq[rank]) = q;\n");
    /* arrive has release and wait acquire semantics at cluster scope (their defaults). */
    gx__sb_puts(b, "  }\n  asm volatile(\"barrier.cluster.arrive;\\n\\tbarrier.cluster.wait;\" ::: \"memory\");\n"
                   "  if (rank != 0) return;\n");
    gx__sb_printf(b, "  const unsigned ncl = %du;\n", RG_CLUSTER);
    rg_gen_cuda_fold(b, sp, "ncl", "cv[bb]", "cq[bb]");
    gx__sb_printf(b,
                  "}\n#else\n"
                  "extern \"C\" __global__ void __launch_bounds__(%d) gx_rg_cl(const gx_args a)\n{\n  GX_PDL_ENTER();\n"
                  "  rg_acc r;\n  int64_t q;\n  rg_part(a, &r, &q);\n  rg_grid_end(a, r, q);\n}\n#endif\n",
                  RG_BLOCK);
}

static void rg_gen_cuda(gx__sbuf *b, const rg_spec *sp, int vec)
{
    gx__sb_puts(b, rg_cuda_helpers());
    rg_gen_cuda_block(b, sp);
    rg_gen_cuda_part(b, sp, vec);
    rg_gen_cuda_grid(b, sp);
    rg_gen_cuda_cluster(b, sp);
}

gx_status rg_source(gx_ctx *ctx, const rg_spec *sp, int vec, gx__sbuf *b)
{
    bool cuda = rg_is_cuda(ctx);
    gx__sb_puts(b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    if (sp->user_code)
        gx__sb_puts(b, sp->user_code);
    gx__sb_puts(b, "\n#line 1 \"gx-generated\"\n");
    rg_gen_common(b, sp);
    if (cuda)
        rg_gen_cuda(b, sp, vec);
    else
        rg_gen_cpu(b, sp);
    if (b->oom)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory generating a reduction kernel");
    return GX_OK;
}

/* ------------------------------------------------------------ running */

/* Widest vector (elements) every stream's address allows, up to 16 bytes. */
static int rg_vec(const rg_spec *sp)
{
    size_t maxsz = 1;
    for (int k = 0; k < sp->nstreams; k++)
        maxsz = gx_dtype_size(sp->stream_dt[k]) > maxsz ? gx_dtype_size(sp->stream_dt[k]) : maxsz;
    int vec = (int)(16 / maxsz);
    for (int k = 0; k < sp->nstreams; k++)
        while (vec > 1 && sp->stream_ptr[k] % (gx_dtype_size(sp->stream_dt[k]) * (size_t)vec))
            vec /= 2;
    return sp->nstreams ? vec : 1;
}

typedef struct rg_argbuf {
    rg_head h;
    unsigned char u[RG_MAXUSER];
} rg_argbuf;

static gx_status rg_launch(gx_ctx *ctx, const gx__kernel *k, const rg_argbuf *ab, size_t size, int64_t n, unsigned grid)
{
    return gx__launch_1d(ctx, k, ab, size, n, 64, grid, RG_BLOCK);
}

/* Blocks: enough to fill the device once (occupancy), no more than the work needs.
 * A function of (n, device) only, which makes float results reproducible. */
static unsigned rg_grid(const rg_spec *sp, const gx__kernel *k, int64_t n, int vec)
{
    int64_t per_block = (int64_t)RG_BLOCK * vec * RG_UNROLL;
    int64_t want = (n + per_block - 1) / per_block;
    int64_t full = k->min_grid > 0 ? (int64_t)k->min_grid * k->block / RG_BLOCK * rg_grid_waves(sp) : 1024;
    int64_t g = want < full ? want : full;
    return (unsigned)(g < 1 ? 1 : g);
}

/* k[0] is gx_rg; k[1], when loaded, gx_rg_cl.  2..RG_CLUSTER blocks' worth of work
 * runs as one cluster.  H100, same runs, GX_RG_CLUSTER=0 -> 1: the ten-call graph
 * chain at 2^16 (four reductions of 8 blocks) replays in 27.3 -> 23.3 us (three
 * rounds each), ten sums of 2^16 f32 into a 0-d array in 32.9 -> 26.8 us; ncu puts a
 * 2^16 reduction at 4.4-5.2 us with the global chain, 3.8-4.6 as a cluster.  2^10
 * (one block) and 2^20 (no cluster) unchanged. */
static gx_status rg_run_cuda(gx_ctx *ctx, const rg_spec *sp, rg_argbuf *ab, size_t size, int vec, const gx__kernel *k)
{
    unsigned grid = rg_grid(sp, &k[0], ab->h.n, vec);
    if (grid > 1 && grid <= RG_CLUSTER && k[1].fn)
        return rg_launch(ctx, &k[1], ab, size, ab->h.n, RG_CLUSTER);
    size_t accsz = gx_dtype_size(sp->acc);
    uint64_t part, cnt;
    GX__CHECK(rg_scratch(ctx, (size_t)grid * (accsz + 8) + 16, 1, &part, &cnt));
    ab->h.part = part;
    ab->h.part_idx = part + (((size_t)grid * accsz + 15) & ~(size_t)15);
    ab->h.counter = cnt;
    return rg_launch(ctx, &k[0], ab, size, ab->h.n, grid);
}

static gx_status rg_run_cpu(gx_ctx *ctx, const rg_spec *sp, rg_argbuf *ab, size_t size, const gx__kernel *k)
{
    int64_t workers = gx__ctx_workers(ctx);
    size_t accsz = gx_dtype_size(sp->acc);
    uint64_t part, cnt;
    GX__CHECK(rg_scratch(ctx, (size_t)workers * (accsz + 8) + 16, workers, &part, &cnt));
    ab->h.part = part;
    ab->h.part_idx = part + (((size_t)workers * accsz + 15) & ~(size_t)15);
    ab->h.seen = cnt;
    if (ab->h.n > 0)
        GX__CHECK(rg_launch(ctx, &k[0], ab, size, ab->h.n, 1));
    ab->h.n = workers;
    return rg_launch(ctx, &k[1], ab, size, 1, 1);
}

/* Everything the source depends on, short of the prelude. */
static void rg_key(gx_ctx *ctx, const rg_spec *sp, int vec, gx__sbuf *b)
{
    gx__sb_printf(b, "rg2|%d|%d|%d|%s|%d|%d|%d|%d|%d|%d|", RG_UNROLL, rg_fin(), rg_cluster(ctx),
                  gx__target_name(gx__ctx_target(ctx)), (int)sp->acc, (int)sp->out_dtype, vec, sp->filtered, sp->with_index, sp->nstreams);
    for (int k = 0; k < sp->nstreams; k++)
        gx__sb_printf(b, "%d,", (int)sp->stream_dt[k]);
    const char *parts[] = {sp->combine, sp->better, sp->sel,         sp->identity,
                           sp->elem,    sp->final,  sp->user_fields, sp->user_code};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        gx__sb_printf(b, "|%zu:%s", parts[i] ? strlen(parts[i]) : 0, parts[i] ? parts[i] : "");
}

/* rg_key's fields as a binary key (gx__memo_bget): the same fields, copied. */
static void rg_bkey(gx_ctx *ctx, const rg_spec *sp, int vec, gx__bkey *k)
{
    const int64_t nums[] = {0x7267,        RG_UNROLL,          rg_fin(),     rg_cluster(ctx),
                            (int64_t)gx__ctx_target(ctx), (int64_t)sp->acc, (int64_t)sp->out_dtype, vec,
                            sp->filtered,  sp->with_index,     sp->nstreams};
    gx__bkey_bytes(k, nums, sizeof nums);
    for (int i = 0; i < sp->nstreams; i++)
        gx__bkey_int(k, (int64_t)sp->stream_dt[i]);
    const char *parts[] = {sp->combine, sp->better, sp->sel,         sp->identity,
                           sp->elem,    sp->final,  sp->user_fields, sp->user_code};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        gx__bkey_str(k, parts[i]);
}

/* The kernels go into the context's memo by a short description of what they
 * compute (rg_key): generating and hashing the full source (prelude included) costs
 * tens of microseconds per call, more than a small reduction takes on the GPU.
 * The same fields as a binary key (gx__memo_bget) find recent kernels without
 * formatting that text: it was ~41% of a warm gx_reduce_into's host time (1024 f32
 * into a 0-d array, CPU backend, one thread, perf; memo.c has the numbers). */
static gx_status rg_kernels(gx_ctx *ctx, const rg_spec *sp, int vec, gx__kernel *k)
{
    bool cuda = rg_is_cuda(ctx);
    if (cuda)
        memset(&k[1], 0, sizeof k[1]); /* CUDA folds in the same kernel; k[1]: the cluster's */
    gx__bkey bk;
    bk.len = 0;
    bk.over = false;
    rg_bkey(ctx, sp, vec, &bk);
    if (gx__memo_bget(ctx, &bk, k, 2 * sizeof *k)) {
        ctx->cstats.mem_hits++;
        return GX_OK;
    }
    gx__sbuf key = {0};
    rg_key(ctx, sp, vec, &key);
    if (key.oom) {
        gx__sb_free(&key);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    if (gx__memo_get(ctx, key.p, k, 2 * sizeof *k)) {
        gx__sb_free(&key);
        gx__memo_bput(ctx, &bk, k, 2 * sizeof *k);
        return GX_OK;
    }
    gx__sbuf src = {0};
    gx_status s = rg_source(ctx, sp, vec, &src);
    if (s == GX_OK)
        s = gx__kernel_get(ctx, src.p, sp->label, "gx_rg", &k[0]);
    if (s == GX_OK && (!cuda || rg_cluster(ctx)))
        s = gx__kernel_get(ctx, src.p, sp->label, cuda ? "gx_rg_cl" : "gx_rg_fin", &k[1]);
    if (s == GX_OK) {
        gx__memo_put(ctx, key.p, k, 2 * sizeof *k);
        gx__memo_bput(ctx, &bk, k, 2 * sizeof *k);
    }
    gx__sb_free(&src);
    gx__sb_free(&key);
    return s;
}

/* rg_kernels behind the spec's memo front, when it has one: a hit skips building the
 * element text (rd_full_inputs: ~20% of a warm argmin of 1024 f32) and hashing it
 * with the other text fields (rg_bkey: ~14%), CPU backend, perf. */
static gx_status rg_kernels_front(gx_ctx *ctx, const rg_spec *sp, int vec, gx__kernel *k)
{
    if (!sp->front)
        return rg_kernels(ctx, sp, vec, k);
    gx__bkey *fk = sp->front;
    const int64_t nums[] = {0x72676672, RG_UNROLL, rg_fin(), rg_cluster(ctx), (int64_t)gx__ctx_target(ctx), vec};
    gx__bkey_bytes(fk, nums, sizeof nums);
    if (gx__memo_bget(ctx, fk, k, 2 * sizeof *k)) {
        ctx->cstats.mem_hits++;
        return GX_OK;
    }
    rg_spec full = *sp;
    full.front = NULL;
    GX__CHECK(sp->fill(&full, sp->fill_arg));
    GX__CHECK(rg_kernels(ctx, &full, vec, k));
    gx__memo_bput(ctx, fk, k, 2 * sizeof *k);
    return GX_OK;
}

gx_status rg_run(gx_ctx *ctx, const rg_spec *sp, int64_t n, const void *user, size_t user_size, uint64_t out,
                 uint64_t out_idx, void *host_val, int64_t *host_idx)
{
    if (user_size > RG_MAXUSER || sp->nstreams < 0 || sp->nstreams > RG_MAXSTREAMS)
        return gx__err(GX_ERR_INTERNAL, "rg_run: %zu bytes of user arguments or %d streams exceed the limits",
                       user_size, sp->nstreams);
    rg_slot *scr;
    GX__CHECK(rg_slot_get(ctx, &scr));
    rg_argbuf ab;
    memset(&ab.h, 0, sizeof ab.h);
    if (user_size)
        memcpy(ab.u, user, user_size);
    /* Only the padding up to the 8-byte size that is passed (the rest of the 2 KB
     * buffer is never read): clearing all of it was a memset per call. */
    memset(ab.u + user_size, 0, ((user_size + 7) & ~(size_t)7) - user_size);
    ab.h.n = n;
    bool to_host = out == 0 && out_idx == 0;
    /* A result for the host goes straight into the mapped page-locked slot, read after
     * the stream's sync: the copy back (a second round trip through the driver) was
     * ~2 of the 19.5 us a sum to a host scalar took on an H200 (floor: launch + sync
     * 8.1 us).  Without mapped memory it is copied from the device scratch. */
    void *hres = NULL;
    uint64_t hres_dev = 0;
    bool mapped = to_host && rg_host_result(ctx, &hres, &hres_dev);
    uint64_t res = mapped ? hres_dev : (uint64_t)(uintptr_t)scr->res;
    ab.h.out = to_host ? res : out;
    ab.h.out_idx = to_host ? (sp->with_index ? res + 32 : 0) : out_idx;
    for (int k = 0; k < sp->nstreams; k++)
        ab.h.stream[k] = sp->stream_ptr[k];
    bool cuda = rg_is_cuda(ctx);
    int vec = cuda ? rg_vec(sp) : 1;
    gx__kernel k[2];
    memset(k, 0, sizeof k);
    GX__CHECK(rg_kernels_front(ctx, sp, vec, k));
    size_t size = sizeof ab.h + ((user_size + 7) & ~(size_t)7);
    GX__CHECK(cuda ? rg_run_cuda(ctx, sp, &ab, size, vec, k) : rg_run_cpu(ctx, sp, &ab, size, k));
    if (!to_host)
        return GX_OK;
    unsigned char buf[40];
    size_t nres = sp->with_index ? 40 : gx_dtype_size(sp->out_dtype);
    if (mapped) {
        GX__CHECK(ctx->be.iface->stream.sync(&ctx->be));
        memcpy(buf, (const void *)(const volatile unsigned char *)hres, nres);
    } else {
        GX__CHECK(ctx->be.iface->mem.d2h(&ctx->be, buf, scr->res, nres));
    }
    memcpy(host_val, buf, gx_dtype_size(sp->out_dtype));
    if (sp->with_index && host_idx)
        memcpy(host_idx, buf + 32, 8);
    return GX_OK;
}
