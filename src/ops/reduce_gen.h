/* reduce_gen.h -- the single-pass reduction kernel generator, shared by gx_reduce /
 * gx_mapreduce (reduce.c) and the range pipelines (scans, filters, count...).
 *
 * You describe ONE reduction of the n values v(0), v(1), ..., v(n-1) to one value:
 *
 *   acc       the accumulator dtype (every partial and the combine work in it);
 *   combine   a C expression of gx_l and gx_r (both acc) giving acc, e.g. "gx_l + gx_r".
 *             It must be associative AND commutative: threads fold strided subsets and
 *             partials are combined in a fixed tree (deterministic, not left-to-right).
 *   identity  a C expression of acc type: the neutral element (every thread starts
 *             from it, so it may be used many times; it is the result when n == 0).
 *   elem      C statements that compute the i-th value: they see `i` (int64_t, in
 *             [0, n)), `u` (const rg_user_t *: your argument fields, see below), the
 *             stream values x0..x{nstreams-1} (already loaded for index i) and must
 *             assign `v` (declared by the generator, of type acc).  If `filtered`, they
 *             may also assign `keep` (bool, preset to true): values with keep == false
 *             are skipped.
 *   streams   optional dense inputs read at index i (pointer value + dtype).  The
 *             generator loads them itself, with 16-byte vector loads and several loads
 *             in flight on CUDA when every stream pointer is aligned, and binds
 *             `const T xK` for element i.  Anything else (broadcast, strided) the
 *             elem snippet reads itself from u.
 *   index     with_index: the reduction also carries the index of the winning
 *             element (argmin style).  Then `combine` is ignored and `better` is a C
 *             expression of gx_l, gx_r that is true when gx_l must win over gx_r
 *             (strictly); equal candidates resolve to the smaller index, so the result
 *             is the FIRST best index.  Index identity is INT64_MAX.
 *   final     a C expression of `r` (acc) giving the stored value of out_dtype (NULL
 *             means "(out type)r"), e.g. a mean's division.
 *
 * Your argument fields: `user_fields` is C declaration text pasted into
 * `typedef struct { ... } rg_user_t;` -- use 8-byte fields only (uint64_t pointers,
 * int64_t, double, 8-byte unions) so the host and device layouts agree; pass the
 * matching host struct bytes to rg_run.  `user_code` (may be NULL) is pasted before
 * the kernel (user functions from gx_define, helpers your elem calls).
 *
 * Output: the final value is written to the device address `out` (element of out_dtype)
 * and, with_index, the int64 index to `out_idx` (0 = not written).  Both may point into
 * a gx_array's storage, so a chain of reductions never waits for the host; rg_run
 * with out == 0 writes into the context's scratch and copies the result back
 * (*host_val / *host_idx).
 *
 * Example (tests/test_reduce.c, reduce_gen_filtered_and_first_index): count the f32
 * values above a cut, then the first index of one:
 *     rg_spec sp = {0};
 *     sp.acc = sp.out_dtype = GX_I64;  sp.combine = "gx_l + gx_r";  sp.identity = "0";
 *     sp.elem = "v = 1; keep = x0 > u->cut;";  sp.filtered = true;
 *     sp.nstreams = 1;  sp.stream_dt[0] = GX_F32;  sp.stream_ptr[0] = (uint64_t)(uintptr_t)ptr;
 *     sp.user_fields = "double cut;";  sp.label = "count_above";
 *     double cut = 0.75;  int64_t count;
 *     rg_run(ctx, &sp, n, &cut, sizeof cut, 0, 0, &count, NULL);      (lock held)
 *     sp.with_index = true;  sp.better = "false";  sp.elem = "v = 0; keep = x0 > u->cut;";
 *     rg_run(ctx, &sp, n, &cut, sizeof cut, 0, 0, &v, &first);        (INT64_MAX: none)
 * In generated text use rg_uptr (not uintptr_t) for pointer casts and RG_IMAX (not
 * INT64_MAX): NVRTC has no <stdint.h>.
 *
 * Kernels: CUDA runs one launch (a fixed grid per (n, device): occupancy x SMs capped
 * by the work; per-thread register folding, warp shuffles, shared memory, and the
 * last block to finish -- threadfence + atomic counter -- combines the per-block
 * partials and resets the counter; on sm_90, 2..8 blocks' worth of work runs as one
 * thread block cluster that folds through block 0's shared memory instead).  The CPU runs every worker over a contiguous
 * share with eight independent accumulators (sixteen lanes of an array for an f64
 * accumulator of f32 streams: see rg_cpu_lanes), then a tiny second call combines
 * the per-thread partials in thread order.  Both are deterministic: the same n, data and
 * device give bitwise-identical results on every run.
 */
#ifndef GX_REDUCE_GEN_H
#define GX_REDUCE_GEN_H

#include "core/gx_internal.h"

#define RG_MAXSTREAMS 8

typedef struct rg_spec {
    gx_dtype acc;         /* accumulator dtype */
    gx_dtype out_dtype;   /* dtype stored at `out` */
    const char *combine;  /* expr of gx_l, gx_r (ignored with_index) */
    const char *better;   /* with_index: expr of gx_l, gx_r, true if gx_l wins */
    const char *sel;      /* with_index, optional: expr of gx_l, gx_r giving the
                                 * better value, gx_l on ties (fminf for a float min) */
    const char *identity; /* expr, acc type */
    const char *elem;     /* statements: assign v (and keep if filtered) */
    const char *final;    /* expr of r, or NULL */
    bool filtered;
    bool with_index;
    int nstreams;
    gx_dtype stream_dt[RG_MAXSTREAMS];
    uint64_t stream_ptr[RG_MAXSTREAMS];
    const char *user_fields; /* C declarations (8-byte fields), may be NULL */
    const char *user_code;   /* pasted before the kernels, may be NULL */
    const char *label;       /* names the kernel in messages and dumps */
    /* Optional memo front (issue 22): a binary key, built by the caller without
     * formatting, that determines every text field above (elem, combine, identity,
     * final, user_fields, user_code) and the stream dtypes.  rg_run appends what it adds
     * (vec, the target, the knobs) and looks the kernels up by it first; only on a miss
     * does it call fill(spec, fill_arg) to set the text fields (elem may be NULL until
     * then) and take the spec's own keys.  NULL: the spec is complete. */
    gx__bkey *front;
    gx_status (*fill)(struct rg_spec *sp, void *arg);
    void *fill_arg;
} rg_spec;

/* The fields the generator owns; they precede the user fields in the argument struct. */
typedef struct rg_head {
    int64_t n;
    uint64_t part, part_idx; /* scratch partials: acc values, int64 indices */
    uint64_t counter;        /* CUDA: unsigned counters (zero between launches) */
    uint64_t seen;           /* CPU: int64 flags, one per worker (zero between calls) */
    uint64_t out, out_idx;   /* final value (out_dtype) and index (int64) */
    uint64_t stream[RG_MAXSTREAMS];
} rg_head;

/* Reduces n values as described by `spec`, `user` being `user_size` bytes (at most
 * RG_MAXUSER) that match spec->user_fields.  out / out_idx: device addresses or 0;
 * when 0, the result is copied to host_val (out_dtype size) / host_idx, which may
 * then not be NULL.  Caller holds the context lock. */
#define RG_MAXUSER 2048
gx_status rg_run(gx_ctx *ctx, const rg_spec *spec, int64_t n, const void *user, size_t user_size, uint64_t out,
                 uint64_t out_idx, void *host_val, int64_t *host_idx);

/* The generated source (for reading and tests); same rules as rg_run. */
gx_status rg_source(gx_ctx *ctx, const rg_spec *spec, int vec, gx__sbuf *out);

/* ---- helpers for other reduction-like generators ---- */

/* Per-context device scratch (one set per stream the context has issued reductions
 * on), allocated once through gx__scratch_alloc (counted as scratch, not as array
 * memory) and grown when needed: at least
 * `part_bytes` of partials and `ncounters` zeroed 8-byte counters (a kernel that
 * uses counters must leave them zero).  Pointers stay valid until the next
 * rg_scratch call.  Caller holds the context lock. */
gx_status rg_scratch(gx_ctx *ctx, size_t part_bytes, int64_t ncounters, uint64_t *part, uint64_t *counters);
/* Status memory for one look-back launch (scan, compaction) on the current stream:
 * *use holds `bytes` zero bytes; the launch must zero the first *nclr bytes of *clr
 * (16-byte multiples), the buffer the stream's next such launch gets.  While a graph
 * is recorded *par is a zeroed word of the recording's own: when its parity is odd
 * the launch swaps *use and *clr, and its last tile flips it (else *par is NULL).
 * Call rg_lookback_failed when the launch did not happen.  Caller holds the context
 * lock. */
gx_status rg_lookback_mem(gx_ctx *ctx, size_t bytes, void **use, void **clr, size_t *nclr, void **par);
void rg_lookback_failed(gx_ctx *ctx);
/* 64 bytes of page-locked host memory per stream that kernels write results into
 * (*dev is their address for it), read by the host after a sync; false where the
 * backend has none.  Caller holds the context lock. */
bool rg_host_result(gx_ctx *ctx, void **host, uint64_t *dev);

/* Emits the types and functions every rg kernel starts from: rg_user_t, gx_args
 * (rg_head's fields, then `u`), rg_acc, rg_out, rg_identity(u), rg_comb(l, r) or
 * rg_better/rg_pick(&v, &ix, ov, oix), rg_final(r, u), rg_f32_bits/rg_f64_bits. */
void rg_gen_common(gx__sbuf *b, const rg_spec *sp);
/* CUDA: emits rg_block(&r, &q, u): a block-wide fold (call from every thread; thread
 * 0 ends with the block's value).  Needs rg_cuda_helpers() and rg_gen_common first. */
void rg_gen_cuda_block(gx__sbuf *b, const rg_spec *sp);
/* The CUDA helpers rg kernels use (warp shuffle of any <= 8-byte type, a volatile
 * load); paste once per source when you write your own kernels. */
const char *rg_cuda_helpers(void);

/* CPU folds' body functions (generated C).  Each is kept out of line
 * (RG_CPU_BODY_ATTRS), so that its restrict parameters keep their meaning (see
 * rg_gen_cpu_head), and is emitted twice: once as the compiler likes it, and once for
 * parts of at least RG_CPU_WIDE_MIN elements, which prefetches and, where the CPU has
 * AVX-512 (RG_CPU_WIDE_IF), uses 512-bit vectors (RG_CPU_WIDE_ATTR).
 * Why prefetch: a core streaming from memory keeps few lines in flight, and its L2
 * prefetcher stops at each 4 KB page.  One GX__PF per 64-byte line, 4 KB ahead, took
 * the f32 sum's fold of 2^24 elements rotated through 19 inputs (16-core Xeon host,
 * same process, interleaved) from 7867 to 5484 us on one core (OpenMP's f32 loop:
 * 6784) and from 772 to 660 us on 16 (OpenMP 664); 1 KB ahead gained half as much,
 * 8 and 16 KB the same as 4 (.wt/mb2.c, session 30).
 * Why 512: GCC's -march=native prefers 256-bit vectors, and an f32 fold into f64
 * lanes spends a convert, an extract and an add per 4 elements on them; with 512-bit
 * ones half as many.  One thread, f32 sum's fold (2-core VM, Xeon @ 2.8 GHz): in L2
 * 8.1 -> 12.5 G elements/s; from the last-level cache (64 rotated 256 KiB inputs)
 * 2.07 -> 2.37 best, 1.68 -> 2.01 median.
 * Why only for large parts: a core that runs 512-bit code slows its clock for a
 * while, host code included; a loop of 1024-element sums went from 1.35-1.45 us a
 * call (median) to 1.61-1.79 with every part wide.
 * The lanes' order does not depend on the vector width, so the results are the same
 * bits either way (and which body runs depends on the part's size alone, fixed by n
 * and the thread count). */
#define RG_CPU_BODY_ATTRS "#if defined(__GNUC__)\n__attribute__((noinline))\n#endif\n"

/* Before a loop over the RG_CPU_LANES lanes: GCC unrolls a 16-trip loop fully and
 * then vectorises the copies only when they hold no select; kept as a loop, its loop
 * vectoriser turns the NaN-aware selects of max/min/argmin (a compare, an or, a
 * blend) into vector code too.  One thread, 2^24 f32 from memory: max 13.0 ms
 * unrolled (scalar compares and branches), against OpenMP's 7.5. */
#define RG_CPU_NO_UNROLL "#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC unroll 1\n#endif\n"
#define RG_CPU_WIDE_IF "#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)\n"
#define RG_CPU_WIDE_ATTR "__attribute__((target(\"prefer-vector-width=512\")))\n"
#define RG_CPU_WIDE_MIN 32768

#endif
