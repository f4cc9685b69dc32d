/* segment.c -- ragged segments (gx/segment.h): segmented reduce / scan / argmin /
 * argmax over CSR offsets, reduce-by-key and run-length encoding.
 *
 * One generator, two tilings.  Segment s ends at offsets[s+1]; tiles are fixed pieces
 * of the work whatever the segment lengths, so long, short and empty segments balance
 * alike (never one block per segment):
 *   - CUDA: tiles of SG_T consecutive ELEMENTS (256 threads x 16, loaded with 16-byte
 *     loads into registers); each thread owns the ends that fall in its 16 elements and
 *     folds a chunk with no end in it without a test per element;
 *   - CPU: the MERGE of the n elements and the nseg ends cut into SG_CPU_T items (a
 *     worker's tile; an end is taken before element j when offsets[s+1] <= j).
 *
 *   sg_check   offsets valid?  the first bad position into the bounds flag (bounds.c);
 *   sg_coords  per tile boundary, a binary search: the tile's first end;
 *   sg_tiles   per tile: fold each thread's part left to right, segments that start and
 *              end inside are written at once; a block-level segmented scan of (has
 *              end, value) joins the threads; the tile records its head (the open
 *              segment's part before its first end) and tail (after its last);
 *   sg_carry   the tiles' records combined IN TILE ORDER (CUDA: sg_carry_up folds runs
 *              of tiles per block, sg_carry_down starts each block from the blocks
 *              before it; CPU: one call): each tile's carry-in, and the segments that
 *              cross tiles;
 *   sg_scan    (scans) the tiles again, each thread starting from its carry.
 *
 * Every fold is in index order, so results are deterministic and a lambda only needs
 * associativity.  reduce-by-key / RLE find run heads with gx_findall, then reduce
 * the runs as segments and gather the first key of each. */
#include "ops/bounds.h"
#include "ops/opname.h"
#include "ops/range_priv.h"
#include "ops/userfns.h"

#include <stdio.h>
#include <string.h>

#define SG_CUDA_CB 256 /* threads per carry block */

/* CUDA tile shape: threads per block and elements per thread (knobs for experiments). */
static int sg_cuda_b(void) { return gx__knob_int("GX_SG_BLOCK", 128, 64, 1024) & ~31; }
static int sg_cuda_i(void) { return gx__knob_int("GX_SG_ITEMS", 16, 16, 64) & ~15; }
#define SG_CPU_T (1 << 16)

typedef enum sg_mode { SG_REDUCE, SG_SCAN_INCL, SG_SCAN_EXCL } sg_mode;

/* What one segmented operation computes, as generator input. */
typedef struct sg_job {
    const char *fn;
    gx_dtype xt, acc, out, offt;
    int argk;         /* 0, or 1 argmin / 2 argmax (acc carries an index) */
    const char *body; /* "r.v0 = ...(a.v0, b.v0);" (not argk) */
    sg_mode mode;
} sg_job;

/* Argument block (8-byte fields: host and device layouts agree). */
typedef struct sg_args {
    uint64_t x, off, out, rf, rh, rt, cin, co, flag;
    int64_t n, nseg, ntiles, tile;
    rp_cval init;
    uint64_t af, av;  /* CUDA: the carry blocks' aggregates */
    int64_t per, vec; /* CUDA: tiles per carry thread; x is 16-byte aligned */
} sg_args;

static const char *sg_fld(gx_dtype t)
{
    if (gx__dtype_is_float(t))
        return "f";
    return gx__dtype_is_signed(t) || t == GX_BOOL ? "i" : "u";
}

static size_t sg_acc_size(const sg_job *j) { return j->argk ? 16 : gx_dtype_size(j->acc); }

/* ------------------------------------------------------------ generated text */

static void sg_common(gx__sbuf *b, const sg_job *j, bool cuda)
{
    const char *A = gx__dtype_ctype(j->acc);
    gx__sb_puts(b, cuda ? "typedef unsigned long long gx_uptr;\n" : "typedef uintptr_t gx_uptr;\n");
    gx__sb_printf(b,
                  "typedef union { double f; int64_t i; uint64_t u; } gx_cval;\n"
                  "typedef struct { uint64_t x, off, out, rf, rh, rt, cin, co, flag; int64_t n, nseg, ntiles, tile; "
                  "gx_cval init; uint64_t af, av; int64_t per, vec; } gx_args;\n"
                  "typedef %s sg_x_t;\ntypedef %s sg_off_t;\ntypedef %s sg_o_t;\ntypedef %s sg_a_t;\n"
                  "typedef struct { sg_a_t v0;%s } gx_acc;\n"
                  "GXF int64_t sg_off(const gx_args *A_, int64_t k) { return (int64_t)((const sg_off_t "
                  "*)(gx_uptr)A_->off)[k]; }\n",
                  gx__dtype_ctype(j->xt), gx__dtype_ctype(j->offt), gx__dtype_ctype(j->out), A,
                  j->argk ? " int64_t v1;" : "");
    /* identity, operator, element, final value */
    if (j->argk)
        gx__sb_puts(b, "GXF gx_acc sg_id(const gx_args *A_) { gx_acc r; (void)A_; r.v0 = 0; r.v1 = -1; return r; }\n");
    else
        gx__sb_printf(b, "GXF gx_acc sg_id(const gx_args *A_) { gx_acc r; r.v0 = (sg_a_t)A_->init.%s; return r; }\n",
                      sg_fld(j->acc));
    if (j->argk) {
        const char *cmp = j->argk == 1 ? "<" : ">";
        bool fl = gx__dtype_is_float(j->acc);
        /* b wins when a is empty, strictly better, or a is NaN and b is not: the
         * first best index, NaN only when all are NaN. */
        gx__sb_printf(b,
                      "GXF gx_acc sg_op(gx_acc a, gx_acc b) { return (b.v1 >= 0 && (a.v1 < 0 || b.v0 %s a.v0%s)) ? b "
                      ": a; }\n",
                      cmp, fl ? " || (a.v0 != a.v0 && b.v0 == b.v0)" : "");
        gx__sb_puts(b, "GXF gx_acc sg_lift(sg_x_t x, int64_t j) { gx_acc r; r.v0 = x; r.v1 = j; return r; }\n"
                       "GXF sg_o_t sg_fin(const gx_args *A_, gx_acc r, int64_t s) { return r.v1 < 0 ? -1 : r.v1 - "
                       "sg_off(A_, s); }\n");
    } else {
        gx__sb_printf(b, "GXF gx_acc sg_op(gx_acc a, gx_acc b) { gx_acc r; %s return r; }\n", j->body);
        gx__sb_puts(b, "GXF gx_acc sg_lift(sg_x_t x, int64_t j) { gx_acc r; (void)j; r.v0 = (sg_a_t)x; return r; }\n"
                       "GXF sg_o_t sg_fin(const gx_args *A_, gx_acc r, int64_t s) { (void)A_; (void)s; return "
                       "(sg_o_t)r.v0; }\n");
    }
    /* Ends before merge diagonal d: the largest i with offsets[i] <= d - i (merge path). */
    gx__sb_printf(b, "GXF int64_t sg_search(const gx_args *A_, int64_t d)\n{\n"
                     "  int64_t lo = d - A_->n > 0 ? d - A_->n : 0, hi = d < A_->nseg ? d : A_->nseg;\n"
                     "  while (lo < hi) {\n    const int64_t mid = (lo + hi) >> 1;\n"
                     "    if (sg_off(A_, mid + 1) <= d - 1 - mid) lo = mid + 1; else hi = mid;\n  }\n"
                     "  return lo;\n}\n"
                     "GXF int sg_bad(const gx_args *A_, int64_t k)\n{\n"
                     "  const int64_t v = sg_off(A_, k);\n"
                     "  if (v < 0 || v > A_->n || (k == A_->nseg && v != A_->n)) return 1;\n"
                     "  return k == 0 ? v != 0 : v < sg_off(A_, k - 1);\n}\n");
}

/* The statements of one element (jj local) folded into acc; scans store it too. */
static void sg_elem(gx__sbuf *b, sg_mode m, const char *xv)
{
    gx__sb_printf(b, "const gx_acc e_ = sg_lift(%s, j0 + jj);\n", xv);
    if (m == SG_REDUCE)
        gx__sb_puts(b, "acc = sg_op(acc, e_);\n");
    else if (m == SG_SCAN_INCL)
        gx__sb_puts(b, "acc = sg_op(acc, e_); os_[j0 + jj] = acc.v0;\n");
    else
        gx__sb_puts(b, "os_[j0 + jj] = acc.v0; acc = sg_op(acc, e_);\n");
}

/* The statements of a segment end (local i): a reduce's first end keeps the head (its
 * segment may have begun before), later ones are whole segments, written now. */
static void sg_end(gx__sbuf *b, sg_mode m, bool write)
{
    if (m == SG_REDUCE) {
        gx__sb_puts(b, "if (!f) { head = acc; f = 1; gf = i0 + i; }\n");
        if (write)
            gx__sb_puts(b, "else if (op_) op_[i0 + i] = sg_fin(A_, acc, i0 + i);\n");
    }
    gx__sb_puts(b, "acc = sg_id(A_); i++;\n");
}

/* ---- CUDA: element tiles.  A tile is SG_T = SG_B x SG_I consecutive ELEMENTS (not
 * merge items): thread tid owns elements [e0, e0 + SG_I) in registers (16-byte loads)
 * and the segment ends whose values lie in (e0, e0 + SG_I] (the very first thread also
 * takes ends at 0).  A chunk with no end in it (the common case: segments longer than
 * SG_I) folds its elements without a test per element; ends are visited where they
 * fall, so empty segments cost one step each.  Before: merge-path tiles walked item by
 * item (an end-or-element test, 64-bit counters, shared-memory staging) and took
 * 1140 us for 2^28 f32 in 2^20 random segments on an H200 (ncu), the single-block
 * carry another 605 us; now 430-510 us in all (2^10 long segments: 300 us, 84% of
 * copy).  What is left is instructions, not bytes (ncu: issue slots 70% busy, DRAM
 * 40%): with segments of ~256 elements about two threads of every warp hold an end,
 * so most warps take the tested path (a compare per element, the end's bookkeeping,
 * the next offset's load).  Tried and measured slower: 32 elements per thread,
 * 256- or 512-thread blocks, marking each thread's first end in shared memory instead
 * of a binary search per thread. */

/* The thread's fold of its chunk: ends close segments (the first one's value goes to
 * `head`, later ones are written when `write`), elements fold into acc (scans store). */
static void sg_cuda_fold(gx__sbuf *b, sg_mode m, bool write)
{
    const char *st = m == SG_SCAN_INCL ? "acc = sg_op(acc, sg_lift(v[q], e0 + q)); os_[e0 + q] = acc.v0;"
                     : m == SG_SCAN_EXCL ? "os_[e0 + q] = acc.v0; acc = sg_op(acc, sg_lift(v[q], e0 + q));"
                                         : "acc = sg_op(acc, sg_lift(v[q], e0 + q));";
    /* r: the next end's place in the chunk as a 32-bit number (SG_I + 1: none here), so
     * the test per element is one compare.  Every loop over v[] is unrolled: one with a
     * variable index would put v[] in local memory for the whole kernel. */
    gx__sb_printf(b,
                  "  {\n    int64_t k = kb, nx = k < kend ? sg_off(A_, k + 1) : SG_NONE;\n"
                  "    int r = nx - e0 < SG_I + 1 ? (int)(nx - e0) : SG_I + 1;\n"
                  "    const int lim = full ? SG_I : a.n - e0 > 0 ? (int)(a.n - e0) : 0;\n"
                  "#define SG_END { if (!f) { head = acc; f = 1; gf = k; } else if (%s) op_[k] = sg_fin(A_, acc, k); "
                  "acc = sg_id(A_); k++; nx = k < kend ? sg_off(A_, k + 1) : SG_NONE; "
                  "r = nx - e0 < SG_I + 1 ? (int)(nx - e0) : SG_I + 1; }\n"
                  /* a whole warp without ends folds without tests; any other warp takes
                   * one path for all its threads (two paths would run one after the other) */
                  "    if (__all_sync(0xffffffffu, full && r > SG_I)) {\n#pragma unroll\n"
                  "      for (int q = 0; q < SG_I; q++) { %s }\n"
                  "    } else if (full) {\n#pragma unroll\n      for (int q = 0; q < SG_I; q++) {\n"
                  "        while (r <= q) SG_END\n        %s\n      }\n"
                  "      while (r <= SG_I) SG_END\n"
                  "    } else {\n#pragma unroll\n      for (int q = 0; q < SG_I; q++) if (q < lim) {\n"
                  "        while (r <= q) SG_END\n        %s\n      }\n"
                  "      while (r <= SG_I) SG_END\n    }\n#undef SG_END\n  }\n",
                  write && m == SG_REDUCE ? "op_" : "0", st, st, st);
}

/* Block-wide segmented scan of the threads' (pf, pv): ef/ev exclusive, tf/tv inclusive
 * (so the block's total in the last thread).  Warp shuffles, then the warps' totals folded in warp order, so the
 * grouping is fixed (deterministic). */
static void sg_cuda_bscan(gx__sbuf *b, const char *nb)
{
    gx__sb_printf(b,
                  "  {\n    const int lane = tid & 31, wid = tid >> 5;\n    int fl = pf; gx_acc vl = pv;\n"
                  "#pragma unroll\n    for (int d = 1; d < 32; d <<= 1) {\n"
                  "      const int of = __shfl_up_sync(0xffffffffu, fl, d); const gx_acc ov = sg_shup(vl, d);\n"
                  "      if (lane >= d) { if (!fl) vl = sg_op(ov, vl); fl |= of; }\n    }\n"
                  "    if (lane == 31) { wf_[wid] = fl; wv_[wid] = vl; }\n    __syncthreads();\n"
                  "    int pfl = 0; gx_acc pre = sg_id(A_);\n"
                  "    for (int w = 0; w < wid; w++) { if (wf_[w]) { pre = wv_[w]; pfl = 1; } else pre = sg_op(pre, "
                  "wv_[w]); }\n"
                  "    const int fi = fl | pfl; const gx_acc vi = fl ? vl : sg_op(pre, vl);\n"
                  "    const int uf = __shfl_up_sync(0xffffffffu, fi, 1); const gx_acc uv = sg_shup(vi, 1);\n"
                  "    ef = lane ? uf : pfl; ev = lane ? uv : pre;\n"
                  "    tf = fi; tv = vi; /* the block's total in thread %s - 1 */\n  }\n",
                  nb);
}

/* Head of the tile kernels: the chunk, its first end (marked by the tile's ends),
 * the elements loaded into v[] (16-byte loads where x is aligned and the chunk full). */
static void sg_cuda_tile_head(gx__sbuf *b, const char *name)
{
    gx__sb_printf(b,
                  "extern \"C\" __global__ void __launch_bounds__(SG_B) %s(const gx_args a)\n{\n"
                  "  const gx_args *A_ = &a;\n"
                  "  __shared__ int wf_[SG_B / 32];\n  __shared__ gx_acc wv_[SG_B / 32];\n"
                  "  const int64_t t = blockIdx.x; const int tid = threadIdx.x;\n"
                  "  const int64_t *co = (const int64_t *)(gx_uptr)a.co;\n"
                  "  const int64_t e0 = t * SG_T + (int64_t)tid * SG_I, e1 = e0 + SG_I;\n"
                  "  const int full = e1 <= a.n;\n"
                  "  const sg_x_t *xp = (const sg_x_t *)(gx_uptr)a.x;\n"
                  "  sg_o_t *op_ = (sg_o_t *)(gx_uptr)a.out; sg_a_t *os_ = (sg_a_t *)(gx_uptr)a.out;\n"
                  "  (void)op_; (void)os_;\n"
                  "  __align__(16) sg_x_t v[SG_I];\n"
                  "  if (full && a.vec) {\n"
                  "#pragma unroll\n"
                  "    for (int w = 0; w < (int)(SG_I * sizeof(sg_x_t) / 16); w++)\n"
                  "      ((uint4 *)v)[w] = __ldg((const uint4 *)(xp + e0) + w);\n"
                  "  } else {\n"
                  "#pragma unroll\n"
                  "    for (int q = 0; q < SG_I; q++) v[q] = e0 + q < a.n ? xp[e0 + q] : (sg_x_t)0;\n  }\n"
                  "  const int64_t kend = co[t + 1];\n"
                  "  const int64_t kb = e0 == 0 ? co[t] : sg_count_le(A_, co[t], kend, e0);\n"
                  "  int f = 0; int64_t gf = -1; gx_acc acc = sg_id(A_), head = acc;\n"
                  "  int ef, tf; gx_acc ev, tv;\n",
                  name);
}

/* The carry over tiles, in two parallel launches with a fixed grouping: sg_carry_up
 * folds each block's run of tiles (per thread `per` tiles, then the block scan) into
 * one aggregate; sg_carry_down starts each block from the aggregates before it (in
 * block order), gives every tile its carry-in and writes the segments that cross
 * tiles.  (One block walking every tile took 605 us at 2^17 tiles.) */
static void sg_cuda_carry(gx__sbuf *b, bool down)
{
    gx__sb_printf(b,
                  "extern \"C\" __global__ void __launch_bounds__(SG_CB) %s(const gx_args a)\n{\n"
                  "  const gx_args *A_ = &a;\n"
                  "  __shared__ int wf_[SG_CB / 32];\n  __shared__ gx_acc wv_[SG_CB / 32];\n"
                  "  const int tid = threadIdx.x;\n  const int64_t T = a.ntiles;\n"
                  "  const int64_t b0 = ((int64_t)blockIdx.x * SG_CB + tid) * a.per;\n"
                  "  const int64_t b = b0 < T ? b0 : T, e = b + a.per < T ? b + a.per : T;\n"
                  "  const int *rf = (const int *)(gx_uptr)a.rf;\n"
                  "  const gx_acc *rh = (const gx_acc *)(gx_uptr)a.rh, *rt = (const gx_acc *)(gx_uptr)a.rt;\n"
                  "  int pf = 0; gx_acc pv = sg_id(A_);\n"
                  "  for (int64_t u = b; u < e; u++) { if (rf[u]) { pv = rt[u]; pf = 1; } else pv = sg_op(pv, "
                  "rh[u]); }\n"
                  "  int ef, tf; gx_acc ev, tv;\n",
                  down ? "sg_carry_down" : "sg_carry_up");
    sg_cuda_bscan(b, "SG_CB");
    if (!down) {
        gx__sb_puts(b, "  (void)ef; (void)ev;\n"
                       "  if (tid == SG_CB - 1) { ((int *)(gx_uptr)a.af)[blockIdx.x] = tf; ((gx_acc *)(gx_uptr)a.av)[blockIdx.x] "
                       "= tv; }\n}\n");
        return;
    }
    gx__sb_puts(b, "  (void)tf; (void)tv;\n"
                   "  gx_acc c = sg_id(A_);\n"
                   "  for (unsigned w = 0; w < blockIdx.x; w++) { if (((const int *)(gx_uptr)a.af)[w]) c = ((const "
                   "gx_acc *)(gx_uptr)a.av)[w]; else c = sg_op(c, ((const gx_acc *)(gx_uptr)a.av)[w]); }\n"
                   "  c = ef ? ev : sg_op(c, ev);\n"
                   "  gx_acc *cin = (gx_acc *)(gx_uptr)a.cin;\n  const int64_t *co = (const int64_t *)(gx_uptr)a.co;\n"
                   "  sg_o_t *op_ = (sg_o_t *)(gx_uptr)a.out;\n"
                   "  for (int64_t u = b; u < e; u++) {\n    if (cin) cin[u] = c;\n"
                   "    if (rf[u]) { if (op_) { const int64_t s = co[u]; op_[s] = sg_fin(A_, sg_op(c, rh[u]), s); } c "
                   "= rt[u]; }\n"
                   "    else c = sg_op(c, rh[u]);\n  }\n}\n");
}

static void sg_cuda(gx__sbuf *b, const sg_job *j)
{
    gx__sb_printf(b, "#define SG_B %d\n#define SG_I %d\n#define SG_T (SG_B * SG_I)\n#define SG_CB %d\n", sg_cuda_b(), sg_cuda_i(), SG_CUDA_CB);
    gx__sb_puts(b, "#define SG_NONE 0x7fffffffffffffffll\n"
                   "__device__ gx_acc sg_shup(gx_acc x, int d)\n{\n"
                   "  union { gx_acc a; unsigned w[(sizeof(gx_acc) + 3) / 4]; } u, r;\n  u.a = x;\n"
                   "#pragma unroll\n  for (int i = 0; i < (int)((sizeof(gx_acc) + 3) / 4); i++) r.w[i] = "
                   "__shfl_up_sync(0xffffffffu, u.w[i], d);\n"
                   "  return r.a;\n}\n"
                   /* ends among [lo, hi) whose value is <= v */
                   "__device__ int64_t sg_count_le(const gx_args *A_, int64_t lo, int64_t hi, int64_t v)\n{\n"
                   "  while (lo < hi) { const int64_t mid = (lo + hi) >> 1; if (sg_off(A_, mid + 1) <= v) lo = mid + "
                   "1; else hi = mid; }\n  return lo;\n}\n");
    /* the first bad offset, into the bounds flag (gx__oob_*: word 0, atomicMin) */
    gx__sb_puts(b, "extern \"C\" __global__ void sg_check(const gx_args a)\n{\n  const gx_args *A_ = &a;\n"
                   "  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k <= a.nseg; k += "
                   "(int64_t)gridDim.x * blockDim.x)\n"
                   "    if (sg_bad(A_, k)) atomicMin((long long *)(gx_uptr)a.flag, (long long)k);\n}\n");
    /* co[t]: the first end owned by tile t (ends with value <= t * SG_T belong before) */
    gx__sb_puts(b, "extern \"C\" __global__ void sg_coords(const gx_args a)\n{\n  const gx_args *A_ = &a;\n"
                   "  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t <= a.ntiles; t += "
                   "(int64_t)gridDim.x * blockDim.x)\n"
                   "    ((int64_t *)(gx_uptr)a.co)[t] = t == 0 ? 0 : t == a.ntiles ? a.nseg : sg_count_le(A_, 0, "
                   "a.nseg, t * SG_T);\n}\n");
    /* pass 1: per tile, fold; write inner segments (reduce); records */
    sg_cuda_tile_head(b, "sg_tiles");
    sg_cuda_fold(b, SG_REDUCE, true);
    gx__sb_puts(b, "  int pf = f; gx_acc pv = acc;\n  if (!f) head = acc;\n");
    sg_cuda_bscan(b, "SG_B");
    gx__sb_puts(b, "  if (f) {\n    const gx_acc h = sg_op(ev, head);\n"
                   "    if (ef) { if (op_) op_[gf] = sg_fin(A_, h, gf); }\n"
                   "    else ((gx_acc *)(gx_uptr)a.rh)[t] = h;\n  }\n"
                   "  if (tid == SG_B - 1) {\n    ((int *)(gx_uptr)a.rf)[t] = tf;\n"
                   "    if (tf) ((gx_acc *)(gx_uptr)a.rt)[t] = tv; else ((gx_acc *)(gx_uptr)a.rh)[t] = tv;\n  }\n"
                   "}\n");
    sg_cuda_carry(b, false);
    sg_cuda_carry(b, true);
    if (j->mode == SG_REDUCE)
        return;
    /* scans: fold again (no writes) for the threads' carries, then the writing fold */
    sg_cuda_tile_head(b, "sg_scan");
    sg_cuda_fold(b, SG_REDUCE, false);
    gx__sb_puts(b, "  (void)gf; (void)head;\n  int pf = f; gx_acc pv = acc;\n");
    sg_cuda_bscan(b, "SG_B");
    gx__sb_puts(b, "  (void)tf; (void)tv;\n"
                   "  acc = ef ? ev : sg_op(((const gx_acc *)(gx_uptr)a.cin)[t], ev); f = 0;\n");
    sg_cuda_fold(b, j->mode, false);
    gx__sb_puts(b, "}\n");
}

/* CPU: a whole tile, a segment at a time (a tight loop over its elements). */
/* CPU reductions fold a long run as four consecutive quarters side by side, then
 * join them in order: four independent chains instead of one (a float add waits ~4
 * cycles for the previous one), and only associativity is used, so lambdas and
 * arg-min/max fold as before.  2^24 f32 in 2^10 segments on the 2-core VM, unchecked:
 * 21.5 -> 7.1 ms.  Runs of fewer than 12 fold one by one (2^20 segments of ~16 elements
 * stay at ~11 ms there: per-segment bookkeeping, not the chain). */
static void sg_cpu_quarters(gx__sbuf *b)
{
    gx__sb_puts(b, "      if (stop - jj >= 12) {\n"
                   "        const int64_t q_ = (stop - jj) >> 2, c0 = jj, c1 = jj + q_, c2 = jj + 2 * q_, c3 = jj + 3 * q_;\n"
                   "        gx_acc a0 = sg_lift(xp[j0 + c0], j0 + c0), a1 = sg_lift(xp[j0 + c1], j0 + c1);\n"
                   "        gx_acc a2 = sg_lift(xp[j0 + c2], j0 + c2), a3 = sg_lift(xp[j0 + c3], j0 + c3);\n"
                   "        for (int64_t t = 1; t < q_; t++) {\n"
                   "          a0 = sg_op(a0, sg_lift(xp[j0 + c0 + t], j0 + c0 + t));\n"
                   "          a1 = sg_op(a1, sg_lift(xp[j0 + c1 + t], j0 + c1 + t));\n"
                   "          a2 = sg_op(a2, sg_lift(xp[j0 + c2 + t], j0 + c2 + t));\n"
                   "          a3 = sg_op(a3, sg_lift(xp[j0 + c3 + t], j0 + c3 + t));\n"
                   "        }\n"
                   "        acc = sg_op(sg_op(sg_op(sg_op(acc, a0), a1), a2), a3);\n"
                   "        jj = c3 + q_;\n      }\n");
}

static void sg_cpu_walk(gx__sbuf *b, sg_mode m)
{
    gx__sb_puts(b, "    int64_t i = 0, jj = 0;\n    while (i < E || jj < J) {\n"
                   "      const int64_t stop = i < E ? sg_off(A_, i0 + 1 + i) - j0 : J;\n");
    if (m == SG_REDUCE)
        sg_cpu_quarters(b);
    gx__sb_puts(b, "      for (; jj < stop; jj++) {\n");
    sg_elem(b, m, "xp[j0 + jj]");
    gx__sb_puts(b, "      }\n      if (i < E) {\n");
    sg_end(b, m, true);
    gx__sb_puts(b, "      }\n    }\n");
}

static void sg_cpu_tile_head(gx__sbuf *b, const char *name)
{
    gx__sb_printf(b,
                  "void %s(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                  "  const gx_args *A_ = (const gx_args *)ap;\n  (void)thread;\n"
                  "  const int64_t *co = (const int64_t *)(gx_uptr)A_->co;\n"
                  "  const sg_x_t *xp = (const sg_x_t *)(gx_uptr)A_->x;\n"
                  "  sg_o_t *op_ = (sg_o_t *)(gx_uptr)A_->out; sg_a_t *os_ = (sg_a_t *)(gx_uptr)A_->out;\n"
                  "  (void)op_; (void)os_;\n"
                  "  const int64_t tot = A_->n + A_->nseg;\n"
                  "  for (int64_t t = begin; t < end; t++) {\n"
                  "    const int64_t D0 = t * SG_T, D1 = D0 + SG_T < tot ? D0 + SG_T : tot;\n"
                  "    const int64_t i0 = co[t], i1 = co[t + 1], j0 = D0 - i0, j1 = D1 - i1;\n"
                  "    const int64_t E = i1 - i0, J = j1 - j0;\n",
                  name);
}

static void sg_cpu(gx__sbuf *b, const sg_job *j)
{
    gx__sb_printf(b, "#define SG_T %lldll\n", (long long)SG_CPU_T);
    gx__sb_puts(b,
                  "void sg_check(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                  "  const gx_args *A_ = (const gx_args *)ap;\n  (void)thread; (void)end;\n  if (begin) return;\n"
                  "  for (int64_t k = 0; k <= A_->nseg; k++)\n"
                  "    if (sg_bad(A_, k)) { *(int64_t *)(gx_uptr)A_->flag = k; return; }\n}\n");
    gx__sb_puts(b, "void sg_coords(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                   "  const gx_args *A_ = (const gx_args *)ap;\n  (void)thread;\n"
                   "  const int64_t tot = A_->n + A_->nseg;\n"
                   "  for (int64_t t = begin; t < end; t++)\n"
                   "    ((int64_t *)(gx_uptr)A_->co)[t] = sg_search(A_, t * SG_T < tot ? t * SG_T : tot);\n}\n");
    sg_cpu_tile_head(b, "sg_tiles");
    gx__sb_puts(b, "    int f = 0; int64_t gf = -1; gx_acc acc = sg_id(A_), head = acc;\n    (void)gf;\n");
    sg_cpu_walk(b, SG_REDUCE);
    gx__sb_puts(b, "    if (!f) head = acc;\n"
                   "    ((int *)(gx_uptr)A_->rf)[t] = f; ((gx_acc *)(gx_uptr)A_->rh)[t] = head;\n"
                   "    ((gx_acc *)(gx_uptr)A_->rt)[t] = acc;\n  }\n}\n");
    gx__sb_puts(b, "void sg_carry(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                   "  const gx_args *A_ = (const gx_args *)ap;\n  (void)thread; (void)end;\n  if (begin) return;\n"
                   "  const int *rf = (const int *)(gx_uptr)A_->rf;\n"
                   "  const gx_acc *rh = (const gx_acc *)(gx_uptr)A_->rh, *rt = (const gx_acc *)(gx_uptr)A_->rt;\n"
                   "  gx_acc *cin = (gx_acc *)(gx_uptr)A_->cin;\n"
                   "  const int64_t *co = (const int64_t *)(gx_uptr)A_->co;\n"
                   "  sg_o_t *op_ = (sg_o_t *)(gx_uptr)A_->out;\n"
                   "  gx_acc c = sg_id(A_);\n"
                   "  for (int64_t u = 0; u < A_->ntiles; u++) {\n    if (cin) cin[u] = c;\n"
                   "    if (rf[u]) { if (op_) { const int64_t s = co[u]; op_[s] = sg_fin(A_, sg_op(c, rh[u]), s); } c "
                   "= rt[u]; }\n"
                   "    else c = sg_op(c, rh[u]);\n  }\n}\n");
    if (j->mode == SG_REDUCE)
        return;
    sg_cpu_tile_head(b, "sg_scan");
    gx__sb_puts(b, "    gx_acc acc = ((const gx_acc *)(gx_uptr)A_->cin)[t];\n");
    sg_cpu_walk(b, j->mode);
    gx__sb_puts(b, "  }\n}\n");
}

static gx_status sg_source(gx_ctx *ctx, const sg_job *j, gx__sbuf *b)
{
    bool cuda = gx__target_is_cuda(ctx);
    gx__sb_puts(b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    gx__userfns *u = gx__userfns_of(ctx);
    if (u && u->code.p)
        gx__sb_puts(b, u->code.p);
    gx__sb_puts(b, "\n#line 1 \"gx-generated\"\n");
    sg_common(b, j, cuda);
    if (cuda)
        sg_cuda(b, j);
    else
        sg_cpu(b, j);
    return b->oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", j->fn) : GX_OK;
}

/* ------------------------------------------------------------ running */

static uint64_t sg_ptr(const gx_array *a) { return a ? (uint64_t)(uintptr_t)gx__array_ptr(a) : 0; }

static gx_status sg_launch(gx_ctx *ctx, const char *src, const char *fn, const char *entry, const sg_args *a,
                           int64_t cpu_n, int64_t grid, int64_t block)
{
    gx__kernel k;
    GX__CHECK(gx__kernel_get(ctx, src, fn, entry, &k));
    if (grid < 1)
        grid = 1;
    return gx__launch_1d(ctx, &k, a, sizeof *a, cpu_n, 1, grid, block);
}

static int64_t sg_read_off(gx_ctx *ctx, const gx_array *off, int64_t k)
{
    uint8_t buf[8] = {0};
    size_t es = gx_dtype_size(off->dtype);
    if (ctx->be.iface->mem.d2h(&ctx->be, buf, (const uint8_t *)gx__array_ptr(off) + k * es, es) != GX_OK)
        return 0;
    if (off->dtype == GX_U64) {
        uint64_t v;
        memcpy(&v, buf, 8);
        return (int64_t)v;
    }
    return (int64_t)gx__dtype_to_f64(off->dtype, buf); /* exact for offsets below 2^53 */
}

/* The message for the first bad position k. */
static gx_status sg_bad_msg(gx_ctx *ctx, const char *fn, const gx_array *off, int64_t n, int64_t k)
{
    int64_t nseg = off->size - 1, v = sg_read_off(ctx, off, k);
    if (k == 0 && v != 0)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: offsets[0] is %lld; CSR offsets start at 0", fn, (long long)v);
    if (v < 0 || v > n)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: offsets[%lld] is %lld, outside [0, n = %lld]", fn, (long long)k,
                       (long long)v, (long long)n);
    if (k == nseg && v != n)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: offsets[%lld] (the last) is %lld but x has n = %lld elements; the last offset must be n",
                       fn, (long long)k, (long long)v, (long long)n);
    return gx__err(GX_ERR_INVALID_ARGUMENT,
                   "%s: offsets[%lld] = %lld is less than offsets[%lld] = %lld; offsets must be non-decreasing", fn,
                   (long long)k, (long long)v, (long long)(k - 1), (long long)sg_read_off(ctx, off, k - 1));
}

/* Offsets are checked on the device into the bounds flag of ops/bounds.c (word 0: the
 * first bad position).  The CPU walks need valid offsets, so there the check finishes
 * first; the CUDA kernels stay inside their own tile's elements and ends whatever the
 * offsets hold, so there the check runs beside them and is read back once at the end
 * (one wait per call, not a wait before the work). */
static gx_status sg_check_launch(gx_ctx *ctx, const char *fn, const char *src, sg_args *a, void **flag)
{
    GX__CHECK(gx__oob_begin(ctx, flag));
    a->flag = (uint64_t)(uintptr_t)*flag;
    int64_t grid = (a->nseg + 1 + 255) / 256;
    return sg_launch(ctx, src, fn, "sg_check", a, 1, grid < 4096 ? grid : 4096, 256);
}

/* Reads the flag (waits); s: the status so far, which wins. */
static gx_status sg_check_end(gx_ctx *ctx, const char *fn, const gx_array *off, int64_t n, void *flag, gx_status s)
{
    int64_t w[4];
    gx_status e = gx__oob_end(ctx, flag, w);
    if (s != GX_OK)
        return s;
    GX__CHECK(e);
    return w[0] == INT64_MAX ? GX_OK : sg_bad_msg(ctx, fn, off, n, w[0]);
}

static size_t sg_round16(size_t v) { return (v + 15) & ~(size_t)15; }

/* Record layout (one scratch array): rf (int per tile), rh, rt, cin (acc per tile), co
 * (ntiles + 1 int64), and on CUDA the carry blocks' af (int), av (acc). */
static gx_status sg_run(gx_ctx *ctx, const sg_job *j, const char *src, sg_args *a, gx_array *out)
{
    bool cuda = gx__target_is_cuda(ctx);
    size_t T = (size_t)a->ntiles, as = sg_acc_size(j);
    int64_t nb = 1;
    if (cuda) {
        int64_t per = (a->ntiles + SG_CUDA_CB * 64 - 1) / (SG_CUDA_CB * 64); /* at most 64 carry blocks */
        a->per = per < 4 ? 4 : per;
        nb = (a->ntiles + SG_CUDA_CB * a->per - 1) / (SG_CUDA_CB * a->per);
    }
    size_t o_rh = sg_round16(T * 4), o_rt = o_rh + sg_round16(T * as), o_cin = o_rt + sg_round16(T * as);
    size_t o_co = o_cin + sg_round16(T * as), o_af = o_co + sg_round16((T + 1) * 8);
    size_t o_av = o_af + sg_round16((size_t)nb * 4);
    int64_t bytes = (int64_t)(o_av + (size_t)nb * as);
    gx_array *rec = NULL;
    GX__CHECK(gx__array_new(ctx, GX_U8, 1, &bytes, &rec));
    uint64_t base = sg_ptr(rec);
    a->rf = base;
    a->rh = base + o_rh;
    a->rt = base + o_rt;
    a->cin = j->mode == SG_REDUCE ? 0 : base + o_cin;
    a->co = base + o_co;
    a->af = base + o_af;
    a->av = base + o_av;
    gx_status s = sg_launch(ctx, src, j->fn, "sg_coords", a, a->ntiles + 1, (a->ntiles + 1 + 255) / 256, 256);
    if (s == GX_OK) {
        a->out = j->mode == SG_REDUCE ? sg_ptr(out) : 0;
        s = sg_launch(ctx, src, j->fn, "sg_tiles", a, a->ntiles, a->ntiles, sg_cuda_b());
    }
    if (s == GX_OK && cuda) {
        s = sg_launch(ctx, src, j->fn, "sg_carry_up", a, 1, nb, SG_CUDA_CB);
        if (s == GX_OK)
            s = sg_launch(ctx, src, j->fn, "sg_carry_down", a, 1, nb, SG_CUDA_CB);
    } else if (s == GX_OK) {
        s = sg_launch(ctx, src, j->fn, "sg_carry", a, 1, 1, 1);
    }
    if (s == GX_OK && j->mode != SG_REDUCE) {
        a->out = sg_ptr(out);
        s = sg_launch(ctx, src, j->fn, "sg_scan", a, a->ntiles, a->ntiles, sg_cuda_b());
    }
    gx_array_release(rec); /* the pool keeps it until the stream is done with it */
    return s;
}

/* Runs job j: x (dense 1-d), off (dense 1-d), out (dense, j->out for reduce / j->acc
 * for scans).  CUDA tiles are SG_T elements (at least one tile when there are
 * segments: empty ones are written too); CPU tiles are SG_CPU_T merge items.  Caller
 * holds the lock. */
static gx_status sg_exec(gx_ctx *ctx, const sg_job *j, gx_array *x, gx_array *off, const rp_cval *init,
                         gx_array *out, bool check)
{
    bool cuda = gx__target_is_cuda(ctx);
    sg_args a;
    memset(&a, 0, sizeof a);
    a.x = sg_ptr(x);
    a.off = sg_ptr(off);
    a.n = x->size;
    a.nseg = off->size - 1;
    a.tile = cuda ? (int64_t)sg_cuda_b() * sg_cuda_i() : SG_CPU_T;
    if (cuda) {
        a.ntiles = a.nseg > 0 ? (a.n + a.tile - 1) / a.tile : 0;
        if (a.nseg > 0 && a.ntiles == 0)
            a.ntiles = 1;
        a.vec = a.x % 16 == 0;
    } else {
        a.ntiles = (a.n + a.nseg + a.tile - 1) / a.tile;
    }
    if (init)
        a.init = *init;
    gx__sbuf src = {0};
    void *flag = NULL;
    gx_status s = sg_source(ctx, j, &src);
    if (s == GX_OK && check) {
        s = sg_check_launch(ctx, j->fn, src.p, &a, &flag);
        if (flag && !cuda) {
            s = sg_check_end(ctx, j->fn, off, a.n, flag, s);
            flag = NULL;
        }
    }
    if (s == GX_OK && a.ntiles > 0)
        s = sg_run(ctx, j, src.p, &a, out);
    if (flag)
        s = sg_check_end(ctx, j->fn, off, a.n, flag, s);
    gx__sb_free(&src);
    return s;
}

/* ------------------------------------------------------------ inputs */

static gx_status sg_check_1d(const char *fn, const char *what, const gx_array *a)
{
    if (a->ndim == 1)
        return GX_OK;
    char sh[160];
    gx__shape_str(sh, sizeof sh, a->ndim, a->shape);
    return gx__err(GX_ERR_SHAPE, "%s: %s has shape %s; it must be 1-d (gx_array_reshape flattens a contiguous array)",
                   fn, what, sh);
}

static gx_status sg_check_in(gx_ctx *ctx, const char *fn, const char *what, gx_array *a)
{
    char w[96];
    gx__fmt(w, sizeof w, "%s (%s)", fn, what);
    GX__CHECK(gx__array_check(a, w));
    if (a->ctx != ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %s belongs to another context", fn, what);
    GX__CHECK(sg_check_1d(fn, what, a));
    if (!rp_dtype_ok(a->dtype))
        return gx__err(GX_ERR_DTYPE, "%s: %s has dtype %s; segment operations take bool, integers, f32 or f64", fn,
                       what, gx_dtype_name(a->dtype));
    return GX_OK;
}

static gx_status sg_check_off(gx_ctx *ctx, const char *fn, gx_array *off)
{
    GX__CHECK(gx__array_check(off, "segment offsets"));
    if (off->ctx != ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: offsets belongs to another context", fn);
    GX__CHECK(sg_check_1d(fn, "offsets", off));
    if (!gx__dtype_is_int(off->dtype))
        return gx__err(GX_ERR_DTYPE, "%s: offsets has dtype %s; CSR offsets need an integer dtype (i32, i64...)", fn,
                       gx_dtype_name(off->dtype));
    if (off->size < 1)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: offsets is empty; it needs nseg + 1 >= 1 values (offsets [0] for no segments)", fn);
    return GX_OK;
}

/* A dense copy of a view (*made = the copy to release), or a itself. */
static gx_status sg_dense(gx_array *a, gx_array **use, gx_array **made)
{
    *use = a;
    *made = NULL;
    if (gx__array_contiguous(a))
        return GX_OK;
    GX__CHECK(gx_array_clone(a, GX_DTYPE_DEFAULT, made));
    *use = *made;
    return GX_OK;
}

/* Checks an _into output: contiguous or not, 1-d of len elements. */
static gx_status sg_check_into(gx_ctx *ctx, const char *fn, gx_array *out, int64_t len)
{
    GX__CHECK(gx__array_check(out, fn));
    if (out->ctx != ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: out belongs to another context", fn);
    if (out->ndim != 1 || out->shape[0] != len) {
        char a[160], b[160];
        gx__shape_str(a, sizeof a, out->ndim, out->shape);
        gx__shape_str(b, sizeof b, 1, &len);
        return gx__err(GX_ERR_SHAPE, "%s: out has shape %s but the result has shape %s", fn, a, b);
    }
    return GX_OK;
}

/* ------------------------------------------------------------ the API */

typedef struct sg_call {
    const char *fn, *op;
    int argk;
    sg_mode mode;
    bool check;
} sg_call;

/* Resolves the operator into j (body in oj) and the identity. */
static gx_status sg_prepare(gx_ctx *ctx, const sg_call *c, gx_dtype xt, const gx_segment_opts *o, sg_job *j,
                            rp_opjob *oj, rp_cval *init)
{
    memset(j, 0, sizeof *j);
    j->fn = c->fn;
    j->xt = xt;
    j->argk = c->argk;
    j->mode = c->mode;
    memset(init, 0, sizeof *init);
    if (c->argk) {
        if (o->init || o->dtype || o->consts || o->nconsts || o->exclusive || o->exact_dtype)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: only opts->unchecked applies here; leave the rest zero", c->fn);
        j->acc = xt;
        j->out = GX_I64;
        return GX_OK;
    }
    gx_dtype forced = o->dtype;
    bool widen = forced == GX_DTYPE_DEFAULT && c->mode == SG_REDUCE && xt == GX_F32 && opn_parse(c->op) == OPN_ADD;
    if (widen)
        forced = GX_F64; /* f32 "+" accumulates in f64 and rounds once, as gx_reduce */
    GX__CHECK(rp_op_prepare(ctx, c->fn, c->op, xt, forced, o->consts, o->nconsts, oj));
    j->acc = oj->acc;
    j->out = widen ? GX_F32 : oj->acc;
    j->body = oj->body.p;
    const gx_scalar *in = o->init ? o->init : oj->named ? &oj->neutral : NULL;
    if (!in)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: a lambda operator needs opts->init, its neutral element (the value of an empty segment)",
                       c->fn);
    rp_const_to_cval(in, j->acc, init);
    return GX_OK;
}

/* The result into `out` (converted where its dtype or layout differs). */
static gx_status sg_run_to(gx_ctx *ctx, const sg_job *j, gx_array *x, gx_array *off, const rp_cval *init, bool check,
                           gx_array *out)
{
    gx_dtype rd = j->mode == SG_REDUCE ? j->out : j->acc;
    gx_array *dst = out;
    gx_status s = GX_OK;
    if (!gx__array_contiguous(out) || out->dtype != rd || gx__arrays_overlap(out, x))
        s = gx__array_new(ctx, rd, 1, out->shape, &dst);
    if (s == GX_OK)
        s = sg_exec(ctx, j, x, off, init, dst, check);
    if (s == GX_OK && dst != out)
        s = dst->dtype == out->dtype ? gx_array_copy_into(dst, out) : gx_map_into(ctx, "x -> x", 1, &dst, NULL, out);
    if (dst != out)
        gx_array_release(dst);
    return s;
}

static gx_status sg_impl(gx_ctx *ctx, const sg_call *c, gx_array *x, gx_array *offsets, const gx_segment_opts *opts,
                         gx_array *into, gx_array **made)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, c->fn);
    GX__CHECK(sg_check_in(ctx, c->fn, "x", x));
    GX__CHECK(sg_check_off(ctx, c->fn, offsets));
    gx_segment_opts o = {0};
    if (opts)
        o = *opts;
    int64_t len = c->mode == SG_REDUCE ? offsets->size - 1 : x->size;
    if (into)
        GX__CHECK(sg_check_into(ctx, c->fn, into, len));
    gx__lock(ctx);
    sg_job j;
    rp_opjob oj = {0};
    rp_cval init;
    gx_array *xd = NULL, *xm = NULL, *od = NULL, *om = NULL;
    gx_status s = sg_prepare(ctx, c, x->dtype, &o, &j, &oj, &init);
    gx_dtype rd = c->mode == SG_REDUCE ? j.out : j.acc;
    if (s == GX_OK && into)
        s = gx__into_dtype(c->fn, rd, into->dtype, o.exact_dtype);
    if (s == GX_OK && !into)
        s = gx__array_new(ctx, rd, 1, &len, made);
    if (s == GX_OK)
        s = sg_dense(x, &xd, &xm);
    if (s == GX_OK)
        s = sg_dense(offsets, &od, &om);
    j.offt = offsets->dtype;
    if (s == GX_OK)
        s = sg_run_to(ctx, &j, xd, od, &init, c->check && !o.unchecked, into ? into : *made);
    gx_array_release(xm);
    gx_array_release(om);
    if (s != GX_OK && made && *made) {
        gx_array_release(*made);
        *made = NULL;
    }
    rp_opjob_free(&oj);
    gx__unlock(ctx);
    return s;
}

gx_status gx_segment_reduce(gx_ctx *ctx, const char *op, gx_array *x, gx_array *offsets, const gx_segment_opts *opts,
                            gx_array **out)
{
    GX__ARG(out, "gx_segment_reduce: out is NULL (it receives the new array)");
    *out = NULL;
    sg_call c = {"gx_segment_reduce", op, 0, SG_REDUCE, true};
    return sg_impl(ctx, &c, x, offsets, opts, NULL, out);
}

gx_status gx_segment_reduce_into(gx_ctx *ctx, const char *op, gx_array *x, gx_array *offsets,
                                 const gx_segment_opts *opts, gx_array *out)
{
    GX__ARG(out, "gx_segment_reduce_into: out is NULL (gx_segment_reduce makes a new array)");
    sg_call c = {"gx_segment_reduce_into", op, 0, SG_REDUCE, true};
    return sg_impl(ctx, &c, x, offsets, opts, out, NULL);
}

static sg_mode sg_scan_mode(const gx_segment_opts *o) { return o && o->exclusive ? SG_SCAN_EXCL : SG_SCAN_INCL; }

gx_status gx_segment_scan(gx_ctx *ctx, const char *op, gx_array *x, gx_array *offsets, const gx_segment_opts *opts,
                          gx_array **out)
{
    GX__ARG(out, "gx_segment_scan: out is NULL (it receives the new array)");
    *out = NULL;
    sg_call c = {"gx_segment_scan", op, 0, sg_scan_mode(opts), true};
    return sg_impl(ctx, &c, x, offsets, opts, NULL, out);
}

gx_status gx_segment_scan_into(gx_ctx *ctx, const char *op, gx_array *x, gx_array *offsets,
                               const gx_segment_opts *opts, gx_array *out)
{
    GX__ARG(out, "gx_segment_scan_into: out is NULL (gx_segment_scan makes a new array)");
    sg_call c = {"gx_segment_scan_into", op, 0, sg_scan_mode(opts), true};
    return sg_impl(ctx, &c, x, offsets, opts, out, NULL);
}

gx_status gx_segment_argmin(gx_ctx *ctx, gx_array *x, gx_array *offsets, const gx_segment_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_segment_argmin: out is NULL (it receives the new array)");
    *out = NULL;
    sg_call c = {"gx_segment_argmin", "min", 1, SG_REDUCE, true};
    return sg_impl(ctx, &c, x, offsets, opts, NULL, out);
}

gx_status gx_segment_argmax(gx_ctx *ctx, gx_array *x, gx_array *offsets, const gx_segment_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_segment_argmax: out is NULL (it receives the new array)");
    *out = NULL;
    sg_call c = {"gx_segment_argmax", "max", 2, SG_REDUCE, true};
    return sg_impl(ctx, &c, x, offsets, opts, NULL, out);
}

/* ------------------------------------------------------------ runs of equal keys */

/* dst[r] = src[idx[r]] for r < idx's size, elements of `es` bytes. */
static gx_status sg_gather(gx_ctx *ctx, const char *fn, gx_array *src, gx_array *idx, gx_array *dst)
{
    bool cuda = gx__target_is_cuda(ctx);
    size_t es = gx_dtype_size(src->dtype);
    const char *T = es == 1 ? "uint8_t" : es == 2 ? "uint16_t" : es == 4 ? "uint32_t" : "uint64_t";
    gx__sbuf b = {0};
    gx__sb_puts(&b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    gx__sb_puts(&b, cuda ? "typedef unsigned long long gx_uptr;\n" : "typedef uintptr_t gx_uptr;\n");
    gx__sb_printf(&b, "typedef struct { uint64_t src, idx, dst; int64_t m; } gx_args;\ntypedef %s sg_e_t;\n", T);
    const char *body = "    ((sg_e_t *)(gx_uptr)a->dst)[r] = ((const sg_e_t *)(gx_uptr)a->src)[((const int64_t "
                       "*)(gx_uptr)a->idx)[r]];\n";
    if (cuda)
        gx__sb_printf(&b,
                      "extern \"C\" __global__ void sg_gather(const gx_args a_)\n{\n  const gx_args *a = &a_;\n"
                      "  for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < a->m; r += "
                      "(int64_t)gridDim.x * blockDim.x)\n%s}\n",
                      body);
    else
        gx__sb_printf(&b,
                      "void sg_gather(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                      "  const gx_args *a = (const gx_args *)ap;\n  (void)thread;\n"
                      "  for (int64_t r = begin; r < end; r++)\n%s}\n",
                      body);
    struct {
        uint64_t src, idx, dst;
        int64_t m;
    } a = {sg_ptr(src), sg_ptr(idx), sg_ptr(dst), idx->size};
    gx__kernel k;
    gx_status s = b.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn) : GX_OK;
    if (s == GX_OK)
        s = gx__kernel_get(ctx, b.p, fn, "sg_gather", &k);
    gx__sb_free(&b);
    int64_t grid = (a.m + 255) / 256;
    if (s == GX_OK && a.m > 0)
        s = gx__launch_1d(ctx, &k, &a, sizeof a, a.m, 1, grid < 65536 ? (grid ? grid : 1) : 65536, 256);
    return s;
}

/* The view a[lo:hi] of a 1-d array. */
static gx_status sg_view(gx_array *a, int64_t lo, int64_t hi, gx_array **out)
{
    gx_slice sl = {lo, hi, 1};
    return gx_array_view(a, &sl, out);
}

/* Offsets [0, heads..., n] of the runs of equal adjacent keys (dense i64), *nruns. */
static gx_status sg_run_offsets(gx_ctx *ctx, gx_array *keys, gx_array **offs, int64_t *nruns)
{
    int64_t n = keys->size;
    gx_array *in[2] = {NULL, NULL}, *idx = NULL, *mid = NULL;
    gx_status s = GX_OK;
    *nruns = 0;
    if (n > 0) {
        s = sg_view(keys, 1, n, &in[0]);
        if (s == GX_OK)
            s = sg_view(keys, 0, n - 1, &in[1]);
        if (s == GX_OK) /* k where keys[k+1] != keys[k]: run k+1 starts (NaN != NaN) */
            s = gx_findall(ctx, "a, b -> a != b", 2, in, NULL, &idx);
        if (s == GX_OK)
            *nruns = idx->size + 1;
    }
    int64_t len = *nruns + 1;
    if (s == GX_OK)
        s = gx__array_new(ctx, GX_I64, 1, &len, offs);
    if (s == GX_OK)
        s = ctx->be.iface->mem.h2d(&ctx->be, gx__array_ptr(*offs), (const int64_t[]){0}, 8);
    if (s == GX_OK && n > 0)
        s = ctx->be.iface->mem.h2d(&ctx->be, (int64_t *)gx__array_ptr(*offs) + *nruns, &n, 8);
    if (s == GX_OK && *nruns > 1)
        s = sg_view(*offs, 1, *nruns, &mid);
    if (s == GX_OK && mid)
        s = gx_map_into(ctx, "k -> k + 1", 1, &idx, NULL, mid);
    gx_array_release(mid);
    gx_array_release(idx);
    gx_array_release(in[0]);
    gx_array_release(in[1]);
    if (s != GX_OK && *offs) {
        gx_array_release(*offs);
        *offs = NULL;
    }
    return s;
}

/* The first key of each run: keys[offs[r]] for r < nruns. */
static gx_status sg_run_keys(gx_ctx *ctx, const char *fn, gx_array *keys, gx_array *offs, int64_t nruns,
                             gx_array **out)
{
    gx_array *heads = NULL;
    GX__CHECK(gx__array_new(ctx, keys->dtype, 1, &nruns, out));
    gx_status s = sg_view(offs, 0, nruns, &heads);
    if (s == GX_OK)
        s = sg_gather(ctx, fn, keys, heads, *out);
    gx_array_release(heads);
    if (s != GX_OK) {
        gx_array_release(*out);
        *out = NULL;
    }
    return s;
}

gx_status gx_reduce_by_key(gx_ctx *ctx, const char *op, gx_array *keys, gx_array *values, const gx_segment_opts *opts,
                           gx_array **unique_keys, gx_array **reduced, int64_t *nruns)
{
    const char *fn = "gx_reduce_by_key";
    GX__ARG(nruns, "gx_reduce_by_key: nruns is NULL (it receives the run count)");
    *nruns = 0;
    if (unique_keys)
        *unique_keys = NULL;
    if (reduced)
        *reduced = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(sg_check_in(ctx, fn, "keys", keys));
    GX__CHECK(sg_check_in(ctx, fn, "values", values));
    if (!gx__same_shape(keys, values)) {
        char a[160], b[160];
        gx__shape_str(a, sizeof a, keys->ndim, keys->shape);
        gx__shape_str(b, sizeof b, values->ndim, values->shape);
        return gx__err(GX_ERR_SHAPE, "%s: keys has shape %s but values has %s; they must match", fn, a, b);
    }
    gx_segment_opts o = {0};
    if (opts)
        o = *opts;
    gx__lock(ctx);
    sg_call c = {fn, op, 0, SG_REDUCE, false};
    sg_job j;
    rp_opjob oj = {0};
    rp_cval init;
    gx_array *kd = NULL, *km = NULL, *vd = NULL, *vm = NULL, *offs = NULL;
    int64_t nr = 0;
    gx_status s = sg_prepare(ctx, &c, values->dtype, &o, &j, &oj, &init);
    if (s == GX_OK)
        s = sg_dense(keys, &kd, &km);
    if (s == GX_OK)
        s = sg_dense(values, &vd, &vm);
    if (s == GX_OK)
        s = sg_run_offsets(ctx, kd, &offs, &nr);
    j.offt = GX_I64;
    if (s == GX_OK && reduced)
        s = gx__array_new(ctx, j.out, 1, &nr, reduced);
    if (s == GX_OK && reduced)
        s = sg_exec(ctx, &j, vd, offs, &init, *reduced, false);
    if (s == GX_OK && unique_keys)
        s = sg_run_keys(ctx, fn, kd, offs, nr, unique_keys);
    if (s == GX_OK)
        *nruns = nr;
    else if (reduced && *reduced) {
        gx_array_release(*reduced);
        *reduced = NULL;
    }
    gx_array_release(offs);
    gx_array_release(km);
    gx_array_release(vm);
    rp_opjob_free(&oj);
    gx__unlock(ctx);
    return s;
}

gx_status gx_run_length_encode(gx_ctx *ctx, gx_array *x, gx_array **values, gx_array **counts, int64_t *nruns)
{
    const char *fn = "gx_run_length_encode";
    GX__ARG(nruns, "gx_run_length_encode: nruns is NULL (it receives the run count)");
    *nruns = 0;
    if (values)
        *values = NULL;
    if (counts)
        *counts = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    GX__CHECK(sg_check_in(ctx, fn, "x", x));
    gx__lock(ctx);
    gx_array *xd = NULL, *xm = NULL, *offs = NULL, *v[2] = {NULL, NULL};
    int64_t nr = 0;
    gx_status s = sg_dense(x, &xd, &xm);
    if (s == GX_OK)
        s = sg_run_offsets(ctx, xd, &offs, &nr);
    if (s == GX_OK && values)
        s = sg_run_keys(ctx, fn, xd, offs, nr, values);
    if (s == GX_OK && counts) {
        s = sg_view(offs, 1, nr + 1, &v[0]);
        if (s == GX_OK)
            s = sg_view(offs, 0, nr, &v[1]);
        if (s == GX_OK)
            s = gx_map(ctx, "a, b -> a - b", 2, v, NULL, counts);
    }
    if (s == GX_OK)
        *nruns = nr;
    else if (values && *values) {
        gx_array_release(*values);
        *values = NULL;
    }
    gx_array_release(v[0]);
    gx_array_release(v[1]);
    gx_array_release(offs);
    gx_array_release(xm);
    gx__unlock(ctx);
    return s;
}

/* ------------------------------------------------------------ pipeline terminals */

/* The pipeline's values, collected (one-value pipelines only). */
static gx_status sg_pipe_values(gx_pipe *p, const char *fn, gx_array *offsets, gx_array **vals)
{
    int ar = 0;
    GX__ARG(p && offsets, "%s: the pipeline and offsets must not be NULL", fn);
    GX__CHECK(gx_pipe_arity(p, &ar));
    if (ar != 1)
        return gx__err(GX_ERR_SHAPE,
                       "%s: the pipeline carries %d values per item; segment terminals take one (gx_pipe_map the "
                       "tuple to one value first)",
                       fn, ar);
    return gx_pipe_collect(p, 1, vals);
}

typedef gx_status (*sg_array_fn)(gx_ctx *, const char *, gx_array *, gx_array *, const gx_segment_opts *,
                                 gx_array **);

/* A segment terminal: the pipeline's values collected, then f over them. */
static gx_status sg_pipe_term(gx_pipe *p, const char *fn, sg_array_fn f, const char *op, gx_array *offsets,
                              const gx_segment_opts *opts, gx_array **out)
{
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    gx_array *v = NULL;
    GX__CHECK(sg_pipe_values(p, fn, offsets, &v));
    gx_status s = f(v->ctx, op, v, offsets, opts, out);
    gx_array_release(v);
    return s;
}

gx_status gx_pipe_segment_reduce(gx_pipe *p, const char *op, gx_array *offsets, const gx_segment_opts *opts,
                                 gx_array **out)
{
    return sg_pipe_term(p, "gx_pipe_segment_reduce", gx_segment_reduce, op, offsets, opts, out);
}

gx_status gx_pipe_segment_scan(gx_pipe *p, const char *op, gx_array *offsets, const gx_segment_opts *opts,
                               gx_array **out)
{
    return sg_pipe_term(p, "gx_pipe_segment_scan", gx_segment_scan, op, offsets, opts, out);
}
