/* range_gen.c -- the fused pipeline kernel generator (see range_priv.h).
 *
 * Every kernel evaluates the segment's element code: the source values at stream
 * index `idx`, then each stage in registers, ending with `keep` and the result
 * components r0, r1...  Around it sit the terminals:
 *  - reduce: per-thread folds, a block tree (CUDA) and a one-block finisher that
 *    combines the per-block (per-worker on CPU) partials in order, init first;
 *  - scan and collect on CUDA: one pass with decoupled look-back (Merrill & Garland):
 *    tiles of RP_BLOCK x ITEMS elements, the tile id from an atomic counter, per-tile
 *    status slots {flag: 0 invalid / 1 aggregate / 2 inclusive prefix, value}
 *    published value-then-fence-then-flag, a warp looking back over 32 tiles at a time;
 *    global loads and stores warp-striped, transposed through shared memory;
 *  - scan and collect on the CPU: two passes over per-worker chunks (fold / count,
 *    then offsets, then write).
 * Slots hold the accumulator in 8-byte cells so the host can read them. */
#include "ops/range_priv.h"
#include "ops/userfns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool gen_cuda(gx_ctx *ctx) { return gx__target_is_cuda(ctx); }

static const char *cfield(gx_dtype t)
{
    if (gx__dtype_is_float(t))
        return "f";
    return gx__dtype_is_signed(t) ? "i" : "u";
}

static const char *ct(gx_dtype t) { return gx__dtype_ctype(t); }

/* The C type a stream value of dtype t lives in: halves are carried as f32 values
 * (loaded with gx_ld_f16 / gx_ld_bf16, rounded only when stored), as in gx_map. */
static const char *vt(gx_dtype t) { return gx__dtype_is_half(t) ? "float" : ct(t); }

/* The prelude's loader of a half in storage ("" for other dtypes: no conversion). */
static const char *half_ld(gx_dtype t) { return t == GX_F16 ? "gx_ld_f16" : t == GX_BF16 ? "gx_ld_bf16" : ""; }
static const char *half_st(gx_dtype t) { return t == GX_F16 ? "gx_st_f16" : t == GX_BF16 ? "gx_st_bf16" : ""; }

/* Bytes of shared memory a scan/collect tile of the widest element may take. */
#define RP_SM_TILE 32768

static bool cu_staged(const rp_seg *sg);
static int cu_src_vec(const rp_seg *sg, int items);

/* Elements a 16-byte access holds (1 for wider types). */
static int vec16(size_t sz) { return sz >= 16 ? 1 : (int)(16 / sz); }

/* Whether `items` per thread suits the tile staging: a whole number of 16-byte
 * runs of every staged source and of the output (see cu_stage_source). */
static bool shape_fits(const rp_seg *sg, const rp_kspec *ks, int block, int items)
{
    if (block < 32 || block > 1024 || block % 32 != 0 || items < 1 || items > 32)
        return false;
    size_t te = (size_t)block * (size_t)items, widest = 0;
    for (int k = 0; k < sg->nsrc && cu_staged(sg); k++) {
        size_t sz = gx_dtype_size(sg->sdt[k]);
        int K = sg->vec > 1 ? sg->vec : 1;
        if ((K <= items && items % K != 0) || (vec16(sz) <= items && items % vec16(sz) != 0))
            return false;
        widest = sz > widest ? sz : widest;
    }
    size_t osz = ks->term == RP_T_SCAN ? gx_dtype_size(ks->acc[0]) : 0;
    for (int c = 0; ks->term == RP_T_COLLECT && c < sg->arity; c++)
        osz = gx_dtype_size(sg->dt[c]) > osz ? gx_dtype_size(sg->dt[c]) : osz;
    if (ks->term == RP_T_SCAN && vec16(osz) <= items && items % vec16(osz) != 0)
        return false;
    widest = osz > widest ? osz : widest;
    return te * widest <= RP_SM_TILE; /* one staging buffer, within static shared memory */
}

/* A knob "GX_..." as an int >= 0 (shapes are checked by shape_fits), or `dflt`. */
static int knob_int(const char *name, int dflt) { return gx__knob_int(name, dflt, 0, 1000000); }

/* Tile shapes measured on an H200 (scripts/knob-sweep): up to 4 bytes, scan and
 * compaction alike run best in blocks of 128 threads with 32 elements each, 8 blocks
 * per SM (f32 2^28: scan 661 us, select 545; the older 128x24 / 256x16 took 695 and
 * 621): a scan tile of 4096 elements needs a quarter fewer look-backs per byte than
 * one of 3072, and 8 tiles in flight per SM (6 before for compaction) hide each
 * one's wait for its prefix.  Knobs override for experiments. */
rp_tshape rp_tile_shape(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks)
{
    rp_tshape t = {RP_BLOCK, 64, false, 0};
    if (!gen_cuda(ctx))
        return t;
    size_t bytes = 0;
    if (ks->term == RP_T_SCAN)
        bytes = gx_dtype_size(ks->acc[0]);
    else
        for (int c = 0; c < sg->arity; c++)
            bytes += gx_dtype_size(sg->dt[c]);
    bool scan = ks->term == RP_T_SCAN;
    /* Long runs only where one thread's run of staged inputs fits its registers. */
    size_t in_bytes = 0;
    for (int k = 0; k < sg->nsrc && sg->src == RP_SRC_ARRAYS; k++)
        in_bytes += gx_dtype_size(sg->sdt[k]);
    bool small = bytes <= 4 && in_bytes <= 4;
    /* The look-back status fits one 64-bit word with the value: a 4-byte accumulator,
     * or a compaction count (< 2^62). */
    t.packed = scan ? ks->nacc == 1 && bytes <= 4 : true;
    t.block = knob_int(scan ? "GX_SC_BLOCK" : "GX_CO_BLOCK", small ? 128 : 256);
    t.items = knob_int(scan ? "GX_SC_ITEMS" : "GX_CO_ITEMS", small ? 32 : bytes <= 4 ? 16 : bytes <= 8 ? 8 : 4);
    bool dflt = !gx__knob(scan ? "GX_SC_BLOCK" : "GX_CO_BLOCK") && !gx__knob(scan ? "GX_SC_ITEMS" : "GX_CO_ITEMS");
    if (!shape_fits(sg, ks, t.block, t.items)) {
        t.block = RP_BLOCK;
        t.items = bytes <= 4 ? 16 : bytes <= 8 ? 8 : 4;
        dflt = false;
    }
    /* Occupancy: the long-run tiles with NVCC held to 64 registers, 8 blocks per SM
     * (the f32 scan spills 12 bytes there, and still beats 7 blocks without: 661
     * against 675 us); 10 blocks measured slower (650 us for select). */
    t.minb = knob_int(scan ? "GX_SC_MINB" : "GX_CO_MINB", dflt && small ? 8 : 0);
    return t;
}

/* ------------------------------------------------------------ element code */

/* Emits `keep` and r0.. for stream index expression `idx`; `src[k]` spells source
 * component k (NULL: from the pointer in0.. with stride). `A` is "a->" or "a.". */
static void emit_elem(gx__sbuf *b, const rp_seg *sg, const char *idx, const char *const *src, const char *A,
                      const char *ind)
{
    gx__sb_printf(b, "%sbool keep = false;\n", ind);
    for (int c = 0; c < sg->arity; c++)
        gx__sb_printf(b, "%s%s r%d = 0;\n%s(void)r%d;\n", ind, vt(sg->dt[c]), c, ind, c);
    gx__sb_printf(
        b,
        "%sconst int64_t gx_i = %s;\n%s(void)gx_i;\n%sdo {\n%s  const int64_t gx_si = %slo + gx_i;\n%s  (void)gx_si;\n",
        ind, idx, ind, ind, ind, A, ind);
    char names[RP_MAXC][24];
    gx_dtype dt[RP_MAXC];
    lam_range rg[RP_MAXC + 1] = {{0}}; /* bounds of each component's values */
    rg[0] = sg->src == RP_SRC_IOTA ? sg->vr : rg[0];
    int m = sg->nsrc;
    for (int k = 0; k < sg->nsrc; k++) {
        gx_dtype t = sg->sdt[k];
        dt[k] = t;
        gx__fmt(names[k], sizeof names[k], "x%d", k);
        if (sg->src == RP_SRC_ARRAYS) {
            if (src)
                gx__sb_printf(b, "%s  const %s x%d = %s(%s);\n", ind, vt(t), k, half_ld(t), src[k]);
            else if (sg->contig)
                gx__sb_printf(b, "%s  const %s x%d = %s(in%d[gx_i]);\n", ind, vt(t), k, half_ld(t), k);
            else
                gx__sb_printf(b, "%s  const %s x%d = %s(in%d[gx_i * st%d]);\n", ind, vt(t), k, half_ld(t), k, k);
        } else if (sg->src == RP_SRC_IOTA) {
            if (src)
                gx__sb_printf(b, "%s  const %s x0 = %s;\n", ind, ct(t), src[0]);
            else if (gx__dtype_is_float(t))
                gx__sb_printf(b, "%s  const %s x0 = (%s)(gx_st + (%s)gx_si * gx_sp);\n", ind, ct(t), ct(t), ct(t));
            else
                gx__sb_printf(b, "%s  const %s x0 = (%s)(gx_st + (uint64_t)gx_si * gx_sp);\n", ind, ct(t), ct(t));
        } else {
            gx__sb_printf(b, "%s  const uint64_t gx_z = gx_rp_mix(%sseed, (uint64_t)gx_si);\n", ind, A);
            if (t == GX_F32)
                gx__sb_printf(b, "%s  const float x0 = (float)(gx_z >> 40) * 5.9604644775390625e-08f;\n", ind);
            else if (t == GX_F64)
                gx__sb_printf(b, "%s  const double x0 = (double)(gx_z >> 11) * 1.1102230246251565e-16;\n", ind);
            else if (t == GX_BOOL)
                gx__sb_printf(b, "%s  const bool x0 = (gx_z >> 63) != 0;\n", ind);
            else
                gx__sb_printf(b, "%s  const %s x0 = (%s)gx_z;\n", ind, ct(t), ct(t));
        }
    }
    const gx_pipe *p = sg->pipe;
    int last_filter = -1;
    for (int s = 0; s < sg->nops; s++)
        if (sg->ops[s]->kind == RP_MAP)
            last_filter = -1;
        else if (sg->ops[s]->kind == RP_FILTER)
            last_filter = s;
    gx__sb_printf(b, "%s  bool gx_pass = true;\n%s  (void)keep;\n", ind, ind);
    for (int s = 0; s < sg->nops; s++) {
        const rp_op *op = sg->ops[s];
        if (op->kind == RP_ENUM) {
            for (int c = m; c > 0; c--) {
                memcpy(names[c], names[c - 1], sizeof names[c]);
                dt[c] = dt[c - 1];
                rg[c] = rg[c - 1];
            }
            gx__fmt(names[0], sizeof names[0], "e%d", s);
            dt[0] = GX_I64;
            rg[0] = sg->er[s];
            m++;
            gx__sb_printf(b, "%s  const int64_t e%d = gx_si - %seoff[%d];\n", ind, s, A, s);
            continue;
        }
        const char *pn[RP_MAXC + 1], *cn[RP_MAXCONST];
        char cbuf[RP_MAXCONST][64];
        for (int c = 0; c < m; c++)
            pn[c] = names[c];
        for (int j = 0; j < op->nconst; j++) {
            gx_dtype t = p->cst[op->cbase + j].value.dtype;
            gx__fmt(cbuf[j], sizeof cbuf[j], "((%s)%sc[%d].%s)", ct(t), A, op->cbase + j, cfield(t));
            cn[j] = cbuf[j];
        }
        gx__sbuf e = {0};
        lam_range res;
        lam_emit_ranged(op->lam, pn, rg, cn, &e, &res);
        if (op->kind == RP_FILTER && s == last_filter) {
            /* No map follows: a plain flag, so compilers can go branch-free. */
            gx__sb_printf(b, "%s  gx_pass = (%s);\n", ind, e.p ? e.p : "0");
        } else if (op->kind == RP_FILTER) {
            gx__sb_printf(b, "%s  if (!(%s)) break;\n", ind, e.p ? e.p : "0");
        } else {
            gx_dtype rt = op->rt;
            gx__sb_printf(b, "%s  const %s m%d = (%s)(%s);\n", ind, vt(rt), s, vt(rt), e.p ? e.p : "0");
            gx__fmt(names[0], sizeof names[0], "m%d", s);
            dt[0] = rt;
            rg[0] = res;
            m = 1;
        }
        gx__sb_free(&e);
    }
    for (int c = 0; c < m; c++)
        gx__sb_printf(b, "%s  r%d = %s;\n", ind, c, names[c]);
    gx__sb_printf(b, "%s  keep = gx_pass;\n%s} while (0);\n", ind, ind);
}

/* Source pointers, strides and generator parameters as locals. */
static void emit_prologue(gx__sbuf *b, const rp_seg *sg, const char *A, bool cuda)
{
    const char *rk = cuda ? "__restrict__" : "restrict";
    if (sg->src == RP_SRC_ARRAYS) {
        for (int k = 0; k < sg->nsrc; k++) {
            gx__sb_printf(b, "  const %s *%s in%d = (const %s *)(gx_uptr)%ssrc[%d];\n", ct(sg->sdt[k]), rk, k,
                          ct(sg->sdt[k]), A, k);
            if (!sg->contig)
                gx__sb_printf(b, "  const int64_t st%d = %ssst[%d];\n", k, A, k);
        }
    } else if (sg->src == RP_SRC_IOTA) {
        gx_dtype t = sg->sdt[0];
        if (gx__dtype_is_float(t))
            gx__sb_printf(b, "  const %s gx_st = (%s)%sstart.f, gx_sp = (%s)%sstep.f;\n", ct(t), ct(t), A, ct(t), A);
        else
            gx__sb_printf(b, "  const uint64_t gx_st = %sstart.u, gx_sp = %sstep.u;\n", A, A);
    }
    gx__sb_printf(b, "  const int64_t n = %sn;\n  (void)n;\n", A);
}

/* ------------------------------------------------------------ shared declarations */

static void emit_common(gx__sbuf *b, const rp_kspec *ks, const bd_set *bind, bool cuda)
{
    /* Generated element code sets flags some terminals never read (warning 550). */
    gx__sb_puts(b, cuda ? "#pragma nv_diag_suppress 550\ntypedef unsigned long long gx_uptr;\n"
                        : "typedef uintptr_t gx_uptr;\n");
    bd_gen_types(b, bind);
    gx__sb_printf(b,
                  "typedef union { double f; int64_t i; uint64_t u; } gx_cval;\n"
                  "typedef struct { uint64_t src[%d]; int64_t sst[%d]; uint64_t out[%d]; uint64_t scratch;\n"
                  "  uint64_t clr; int64_t nclr; uint64_t par, hres, cnt; int64_t lo, n, ntiles, nparts; uint64_t seed; "
                  "gx_cval start, step; int64_t eoff[%d];\n"
                  "  gx_cval c[%d]; gx_cval init[2];%s } gx_args;\n",
                  RP_MAXC, RP_MAXC, RP_MAXC, RP_MAXOPS, RP_MAXCONST, bind && bind->n ? " gx_bargs b;" : "");
    /* A bound array's read records the element's source index (gx_si) when out of range. */
    bd_gen(b, bind, cuda, cuda ? "a.b." : "a->b.", "gx_si");
    /* SplitMix64 of (seed, index): internal to pipelines' random sources. */
    gx__sb_puts(b, "GXF uint64_t gx_rp_mix(uint64_t s, uint64_t i)\n{\n"
                   "  uint64_t z = s + (i + 1) * 0x9E3779B97F4A7C15ull;\n"
                   "  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;\n"
                   "  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;\n  return z ^ (z >> 31);\n}\n");
    const char *al = cuda ? "alignas(8)" : "_Alignas(8)";
    if (ks->term == RP_T_COLLECT) {
        gx__sb_printf(b, "typedef struct { %s int64_t v0; } gx_acc;\n", al);
        gx__sb_puts(b, "GXF gx_acc gx_rp_op(gx_acc a, gx_acc b) { gx_acc r; r.v0 = a.v0 + b.v0; return r; }\n");
    } else {
        gx__sb_puts(b, "typedef struct {");
        for (int c = 0; c < ks->nacc; c++)
            gx__sb_printf(b, " %s %s v%d;", al, ct(ks->acc[c]), c);
        gx__sb_printf(b, " } gx_acc;\nGXF gx_acc gx_rp_op(gx_acc a, gx_acc b)\n{\n  gx_acc r;\n  %s\n  return r;\n}\n",
                      ks->op_body);
    }
    /* A tile's aggregate and its inclusive prefix live in separate fields: a reader
     * that saw flag 1 must still read the aggregate, even if the prefix (flag 2)
     * is being published meanwhile -- one shared field would let it read the
     * prefix under flag 1 and count earlier tiles twice. */
    gx__sb_puts(b, "typedef struct { gx_acc v; uint32_t flag, has; gx_acc inc; } gx_slot;\n");
    gx__sb_puts(b, cuda ? "#define GX_ZACC gx_acc()\n" : "#define GX_ZACC ((gx_acc){0})\n");
}

/* gx_acc r from the element r0.. at position gx_i. */
static void emit_lift(gx__sbuf *b, const rp_kspec *ks, const char *ind)
{
    if (ks->term == RP_T_COLLECT)
        gx__sb_printf(b, "%sgx_acc r; r.v0 = 1;\n", ind);
    else
        gx__sb_printf(b, "%sgx_acc r;\n%s{ const int64_t gx_pos = gx_i; (void)gx_pos; %s }\n", ind, ind, ks->lift);
}

static void emit_init_acc(gx__sbuf *b, const rp_kspec *ks, const char *A, const char *var)
{
    for (int c = 0; c < ks->nacc; c++)
        gx__sb_printf(b, "  %s.v%d = (%s)%sinit[%d].%s;\n", var, c, ct(ks->acc[c]), A, c, cfield(ks->acc[c]));
}

/* Accumulates element into (acc, has). */
static void emit_accum(gx__sbuf *b, const rp_kspec *ks, const char *ind)
{
    if (ks->has_identity) {
        gx__sb_printf(b, "%sif (keep) {\n", ind);
        emit_lift(b, ks, ind);
        gx__sb_printf(b, "%s  acc = gx_rp_op(acc, r);\n%s}\n", ind, ind);
        return;
    }
    gx__sb_printf(b, "%sif (keep) {\n", ind);
    emit_lift(b, ks, ind);
    gx__sb_printf(b, "%s  acc = has ? gx_rp_op(acc, r) : r;\n%s  has = 1;\n%s}\n", ind, ind, ind);
}

/* acc and has at the start of a fold (declared, or `decl` false: assigned again). */
static void emit_acc_init(gx__sbuf *b, const rp_kspec *ks, bool decl)
{
    gx__sb_printf(b, "  %sacc = %s;\n  %shas = %d;\n", decl ? "gx_acc " : "",
                  ks->has_identity ? ks->identity : "GX_ZACC", decl ? "uint32_t " : "", ks->has_identity ? 1 : 0);
}

/* ------------------------------------------------------------ CPU */

static void cpu_head(gx__sbuf *b, const char *name, const rp_seg *sg)
{
    gx__sb_printf(b,
                  "void %s(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                  "  const gx_args *a = (const gx_args *)ap;\n  (void)thread; (void)begin; (void)end;\n"
                  "  gx_slot *part = (gx_slot *)(gx_uptr)(a->scratch + 64);\n  (void)part;\n",
                  name);
    emit_prologue(b, sg, "a->", false);
}

/* Combines part[0..upto) in order (empty parts skipped) into (acc, has). */
static void cpu_prefix(gx__sbuf *b, const rp_kspec *ks, const char *upto)
{
    emit_acc_init(b, ks, true);
    if (ks->has_init && ks->term != RP_T_COLLECT) {
        gx__sb_puts(b, "  gx_acc r;\n");
        emit_init_acc(b, ks, "a->", "r");
        gx__sb_puts(b, "  acc = has ? gx_rp_op(acc, r) : r; has = 1;\n");
    }
    gx__sb_printf(b,
                  "  for (int64_t t = 0; t < %s; t++)\n"
                  "    if (part[t].has) { acc = has ? gx_rp_op(acc, part[t].v) : part[t].v; has = 1; }\n",
                  upto);
}

static void cpu_pf(gx__sbuf *b, const rp_seg *sg, const char *idx, int elems, const char *ind);

/* Elements of a worker's part from which a fold over contiguous arrays prefetches
 * (one GX__PF a line, 4 KB ahead, as reduce_gen.h explains): below it the part sits in
 * cache and the prefetches only cost (2-core VM, 2^20 f32 count of x > 0.5: 99.8 ->
 * 102.8 us with them). */
#define RP_CPU_PF_MIN 32768

static void cpu_fold_entry(gx__sbuf *b, const rp_seg *sg, const rp_kspec *ks, const char *name)
{
    cpu_head(b, name, sg);
    emit_acc_init(b, ks, true);
    if ((sg->filtered || ks->has_identity) && sg->src == RP_SRC_ARRAYS && sg->contig) {
        /* Large parts a block of 256 at a time, the block's lines prefetched: the count
         * pass of x > 0.5 over 2^24 f32 took 3842 -> 2968 us on the 2-core VM (2
         * threads; one thread 8538 -> 6622), .wt/selh2.c, session 32. */
        gx__sb_printf(b, "  if (end - begin >= %d) {\n", RP_CPU_PF_MIN);
        gx__sb_puts(b, "    for (int64_t i0 = begin; i0 < end; i0 += 256) {\n"
                       "      const int64_t i1 = end - i0 < 256 ? end : i0 + 256;\n");
        cpu_pf(b, sg, "i0", 256, "      ");
        gx__sb_puts(b, "      for (int64_t i = i0; i < i1; i++) {\n");
        emit_elem(b, sg, "i", NULL, "a->", "        ");
        emit_accum(b, ks, "        ");
        gx__sb_puts(b, "      }\n    }\n    part[thread].v = acc;\n    part[thread].has = has;\n    return;\n  }\n");
    }
    if (!sg->filtered && !ks->has_identity) {
        /* Every element counts: the first starts the fold, the loop needs no flag. */
        gx__sb_puts(b, "  int64_t i = begin;\n  if (i < end) {\n");
        emit_elem(b, sg, "i", NULL, "a->", "    ");
        emit_lift(b, ks, "    ");
        gx__sb_puts(b, "    acc = r;\n    has = 1;\n    i++;\n  }\n  for (; i < end; i++) {\n");
        emit_elem(b, sg, "i", NULL, "a->", "    ");
        emit_lift(b, ks, "    ");
        gx__sb_puts(b, "    acc = gx_rp_op(acc, r);\n  }\n");
    } else {
        gx__sb_puts(b, "  for (int64_t i = begin; i < end; i++) {\n");
        emit_elem(b, sg, "i", NULL, "a->", "    ");
        emit_accum(b, ks, "    ");
        gx__sb_puts(b, "  }\n");
    }
    gx__sb_puts(b, "  part[thread].v = acc;\n  part[thread].has = has;\n}\n");
}

/* The CPU scan runs each worker's share as RP_CPU_CHAINS interleaved chains (the
 * share cut in that many pieces, the last taking the remainder), so the adds of one
 * chain overlap the others' instead of waiting on the one before: a single f32
 * chain is bound by the add's latency (4 cycles an element), and the two passes over
 * 2^24 f32 took 23 ms on the 2-core VM where memory allows about 10.  Every chain's
 * fold is a part of its own: part[thread * RP_CPU_CHAINS + c] (RP_CPU_CHAINS is in
 * range_priv.h: range_run.c sizes the parts). */

/* Each chain folds RP_CPU_BLOCK elements at a time into a local value (loc<c>, from
 * the identity, or empty) and adds that to its carry (acc<c>) once per block; a
 * scan's output is carry op local.  One running value over a chain of millions of
 * elements would lose the small ones: an f32 running sum stops growing by values
 * below 1 once it reaches 2^24 (a scan of 2^26 uniform values in [0, 1) ended at
 * 29316102 instead of 33520878), and its error grows with the chain's length.  Blocked,
 * each output is within about (RP_CPU_BLOCK + chain/RP_CPU_BLOCK) roundings of exact,
 * the bound of the GPU's tiles. */
#define RP_CPU_BLOCK 1024
/* Elements between the end of a chain's lockstep part and the next chain's start
 * (see cpu_chains): 272 = 17 cache lines of 4-byte elements, 34 of 8-byte ones, so
 * four chains start in four different sets; only for chains of RP_CPU_STAG_MIN
 * elements or more, where the tails, run one element at a time, cost little. */
#define RP_CPU_STAG 272
#define RP_CPU_STAG_MIN 4096

/* Software prefetches of `elems` elements of every contiguous array source from index
 * `idx` on, one per 64-byte line, 4 KB ahead (GX__PF in the C prelude).  Why: a
 * scan's chains and a compaction's blocks are not vectorised, so they issue their
 * loads slowly, and the hardware prefetcher stops at each 4 KB page.  Running sums
 * of 2^24 f32 over the 16-core Xeon host's cores, in blocks of 16 with a prefetch
 * each: 16358 -> 14752 us on one core, 1559 -> 1352 on 16 (.wt/mb3.c, session 30). */
#define RP_CPU_PF 16 /* elements per prefetching step */
static void cpu_pf(gx__sbuf *b, const rp_seg *sg, const char *idx, int elems, const char *ind)
{
    if (sg->src != RP_SRC_ARRAYS || !sg->contig)
        return;
    char ptr[96];
    for (int k = 0; k < sg->nsrc; k++) {
        gx__fmt(ptr, sizeof ptr, "in%d + %s", k, idx);
        lam_emit_prefetch(b, ind, ptr, (size_t)elems * gx_dtype_size(sg->sdt[k]));
    }
}

/* Opens the chains' loop of k over [lo, ke) in steps of RP_CPU_PF, each step
 * prefetching every chain's sources (cpu_pf); cpu_chains_close closes it. */
static void cpu_chains_open(gx__sbuf *b, const rp_seg *sg, const char *lo, const char *ind)
{
    gx__sb_printf(b, "%sfor (int64_t kq = %s; kq < ke; kq += %d) {\n", ind, lo, RP_CPU_PF);
    char in2[32], idx[64];
    gx__fmt(in2, sizeof in2, "%s  ", ind);
    for (int c = 0; c < RP_CPU_CHAINS; c++) {
        gx__fmt(idx, sizeof idx, "begin + %d * gx_cs + kq", c);
        cpu_pf(b, sg, idx, RP_CPU_PF, in2);
    }
    gx__sb_printf(b, "%sconst int64_t kqe = ke - kq < %d ? ke : kq + %d;\n", in2, RP_CPU_PF, RP_CPU_PF);
    gx__sb_printf(b, "%sfor (int64_t k = kq; k < kqe; k++) {\n", in2);
}

static void cpu_chains_close(gx__sbuf *b, const char *ind) { gx__sb_printf(b, "%s  }\n%s}\n", ind, ind); }

/* Chain c's local value starts (again): empty, or the identity. */
static void cpu_chain_loc_init(gx__sbuf *b, const rp_kspec *ks, int c, bool decl, const char *ind)
{
    gx__sb_printf(b, "%s%sloc%d = %s; %slhas%d = %d;\n", ind, decl ? "gx_acc " : "", c,
                  ks->has_identity ? ks->identity : "GX_ZACC", decl ? "uint32_t " : "", c, ks->has_identity ? 1 : 0);
}

/* Chain c's local value into its carry, then the local value starts again. */
static void cpu_chain_flush(gx__sbuf *b, const rp_kspec *ks, int c, const char *ind)
{
    gx__sb_printf(b, "%sif (lhas%d) { acc%d = has%d ? gx_rp_op(acc%d, loc%d) : loc%d; has%d = 1; }\n", ind, c, c, c, c,
                  c, c, c);
    cpu_chain_loc_init(b, ks, c, false, ind);
}

/* How one position of chain c is generated (see cpu_chains). */
enum {
    RP_CH_GENERAL, /* every test: acc/has bound to the local value (filtered, remainder) */
    RP_CH_PEEL,    /* a block's first position, no identity: the local value starts at r */
    RP_CH_FAST,    /* local value set (identity, or after the peel), carry set (or pass a) */
    RP_CH_CARRY,   /* local value set, the carry tested (a chain without one yet) */
};

/* Chain c's element at index expression idx, in its own braces. */
static void cpu_chain_elem(gx__sbuf *b, const rp_seg *sg, const rp_kspec *ks, bool scan, int c, const char *idx,
                           int mode, const char *ind)
{
    char in2[32];
    gx__fmt(in2, sizeof in2, "%s  ", ind);
    gx__sb_printf(b, "%s{\n", ind);
    if (mode == RP_CH_GENERAL) {
        gx__sb_printf(b, "%sgx_acc acc = loc%d;\n%suint32_t has = lhas%d;\n%s(void)has;\n", in2, c, in2, c, in2);
        emit_elem(b, sg, idx, NULL, "a->", in2);
        /* With an identity every local value starts from one: no flag to test. */
        bool plain = ks->has_identity && !sg->filtered;
        char carried[96];
        gx__fmt(carried, sizeof carried,
                ks->has_identity ? "gx_rp_op(acc%d, acc)" : "(has%d ? gx_rp_op(acc%d, acc) : acc)", c, c);
        if (!scan && !plain) {
            emit_accum(b, ks, in2);
        } else if (!scan) {
            emit_lift(b, ks, in2);
            gx__sb_printf(b, "%sacc = gx_rp_op(acc, r);\n", in2);
        } else {
            emit_lift(b, ks, in2);
            if (ks->exclusive)
                gx__sb_printf(b, "%sout[gx_i] = (has ? %s : acc%d).v0;\n%sacc = has ? gx_rp_op(acc, r) : r;\n"
                                 "%shas = 1;\n",
                              in2, carried, c, in2, in2);
            else if (plain)
                gx__sb_printf(b, "%sacc = gx_rp_op(acc, r);\n%sout[gx_i] = %s.v0;\n", in2, in2, carried);
            else
                gx__sb_printf(b, "%sacc = has ? gx_rp_op(acc, r) : r;\n%shas = 1;\n%sout[gx_i] = %s.v0;\n", in2, in2,
                              in2, carried);
        }
        gx__sb_printf(b, "%sloc%d = acc;\n%slhas%d = has;\n%s}\n", in2, c, in2, c, ind);
        return;
    }
    /* Every element counts here (not filtered): keep is true. */
    emit_elem(b, sg, idx, NULL, "a->", in2);
    emit_lift(b, ks, in2);
    char carried[96];
    gx__fmt(carried, sizeof carried,
            mode == RP_CH_FAST ? "gx_rp_op(acc%d, loc%d)" : "(has%d ? gx_rp_op(acc%d, loc%d) : loc%d)", c, c, c, c);
    /* Exclusive: the output before the element (the carry alone before a block's first). */
    if (scan && ks->exclusive && mode == RP_CH_PEEL)
        gx__sb_printf(b, "%sout[gx_i] = acc%d.v0;\n", in2, c);
    else if (scan && ks->exclusive)
        gx__sb_printf(b, "%sout[gx_i] = %s.v0;\n", in2, carried);
    if (mode == RP_CH_PEEL)
        gx__sb_printf(b, "%sloc%d = r;\n%slhas%d = 1;\n", in2, c, in2, c);
    else
        gx__sb_printf(b, "%sloc%d = gx_rp_op(loc%d, r);\n", in2, c, c);
    if (scan && !ks->exclusive)
        gx__sb_printf(b, "%sout[gx_i] = %s.v0;\n", in2, carried);
    gx__sb_printf(b, "%s}\n", ind);
}

/* The chains run block by block: a block is RP_CPU_BLOCK positions k of every chain
 * (chain c's element begin + c * gx_cs + k, k < gx_sub), each chain folding its block
 * into its local value; a scan writes carry op local.  A full block's local values go
 * into the carries; each chain's tail (gx_cs - gx_sub positions, and for the last
 * chain what is left up to end) joins the last block, then every chain flushes.  The
 * inner loops test nothing but k: without an identity a block's first position is
 * peeled (the local value starts from it), and pass b runs the block with the carries
 * tested only while a chain has none (the first block of the first worker).
 *
 * Why the chains are gx_cs = gx_sub + RP_CPU_STAG apart, not gx_sub: a worker's share
 * of a power-of-2 length cut in four puts every chain at the same offset modulo 4
 * KiB, so the chains' streams (and a scan's output streams, when its output lies at
 * the input's offset modulo 4 KiB) all fall into one set of the L1 and L2 caches.
 * The pool's colours (cpu_cache.c) keep different blocks apart, but a block taken
 * back from the pool keeps its colour, and an input and output of one colour do
 * meet.  16-core Xeon host, 2^24 f32 on 16 threads, gx_scan_into (µs): input and
 * output of different colours 1551-2163; of one colour (GX_CPU_COLOURS=1) 8598-8767;
 * in the bench's table, its arrays taken back from the pool, 5492 against OpenMP's
 * 2798. */
static void cpu_chains(gx__sbuf *b, const rp_seg *sg, const rp_kspec *ks, bool scan)
{
    for (int c = 0; c < RP_CPU_CHAINS; c++)
        cpu_chain_loc_init(b, ks, c, true, "  ");
    gx__sb_printf(b,
                  "  const int64_t gx_stag = (end - begin) / %d >= %d ? %d : 0;\n"
                  "  const int64_t gx_sub = (end - begin - %d * gx_stag) / %d, gx_cs = gx_sub + gx_stag;\n"
                  "  for (int64_t kb = 0; kb < gx_sub; kb += %d) {\n"
                  "    const int64_t ke = gx_sub - kb < %d ? gx_sub : kb + %d;\n",
                  RP_CPU_CHAINS, RP_CPU_STAG_MIN, RP_CPU_STAG, RP_CPU_CHAINS - 1, RP_CPU_CHAINS, RP_CPU_BLOCK,
                  RP_CPU_BLOCK, RP_CPU_BLOCK);
    char idx[RP_CPU_CHAINS][64];
    for (int c = 0; c < RP_CPU_CHAINS; c++)
        gx__fmt(idx[c], sizeof idx[c], "begin + %d * gx_cs + k", c);
    if (sg->filtered || ks->has_identity) {
        cpu_chains_open(b, sg, "kb", "    ");
        for (int c = 0; c < RP_CPU_CHAINS; c++)
            cpu_chain_elem(b, sg, ks, scan, c, idx[c], sg->filtered ? RP_CH_GENERAL : RP_CH_FAST, "        ");
        cpu_chains_close(b, "    ");
    } else {
        gx__sb_puts(b, "    {\n      const int64_t k = kb;\n");
        for (int c = 0; c < RP_CPU_CHAINS; c++)
            cpu_chain_elem(b, sg, ks, scan, c, idx[c], RP_CH_PEEL, "      ");
        gx__sb_puts(b, "    }\n");
        for (int v = 0; v < (scan ? 2 : 1); v++) {
            const char *ind = "    ";
            if (scan && v == 0) {
                gx__sb_puts(b, "    if (");
                for (int c = 0; c < RP_CPU_CHAINS; c++)
                    gx__sb_printf(b, "%shas%d", c ? " && " : "", c);
                gx__sb_puts(b, ") {\n");
                ind = "      ";
            } else if (scan) {
                gx__sb_puts(b, "    } else {\n");
                ind = "      ";
            }
            cpu_chains_open(b, sg, "kb + 1", ind);
            char in2[16];
            gx__fmt(in2, sizeof in2, "%s    ", ind);
            for (int c = 0; c < RP_CPU_CHAINS; c++)
                cpu_chain_elem(b, sg, ks, scan, c, idx[c], scan && v == 1 ? RP_CH_CARRY : RP_CH_FAST, in2);
            cpu_chains_close(b, ind);
        }
        if (scan)
            gx__sb_puts(b, "    }\n");
    }
    gx__sb_printf(b, "    if (ke - kb == %d) {\n", RP_CPU_BLOCK);
    for (int c = 0; c < RP_CPU_CHAINS; c++)
        cpu_chain_flush(b, ks, c, "      ");
    gx__sb_puts(b, "    }\n  }\n");
    for (int c = 0; c < RP_CPU_CHAINS; c++) {
        if (c < RP_CPU_CHAINS - 1)
            gx__sb_printf(b, "  for (int64_t i = begin + %d * gx_cs + gx_sub; i < begin + %d * gx_cs; i++)\n", c, c + 1);
        else
            gx__sb_printf(b, "  for (int64_t i = begin + %d * gx_cs + gx_sub; i < end; i++)\n", c);
        cpu_chain_elem(b, sg, ks, scan, c, "i", RP_CH_GENERAL, "  ");
    }
    for (int c = 0; c < RP_CPU_CHAINS; c++)
        cpu_chain_flush(b, ks, c, "  ");
}

static void gen_cpu_scan(gx__sbuf *b, const rp_seg *sg, const rp_kspec *ks)
{
    /* Pass a: each chain's fold into its part. */
    cpu_head(b, "gx_rp_scan_a", sg);
    emit_acc_init(b, ks, true);
    for (int c = 0; c < RP_CPU_CHAINS; c++)
        gx__sb_printf(b, "  gx_acc acc%d = acc;\n  uint32_t has%d = has;\n", c, c);
    cpu_chains(b, sg, ks, false);
    for (int c = 0; c < RP_CPU_CHAINS; c++)
        gx__sb_printf(b, "  part[(int64_t)thread * %d + %d].v = acc%d;\n  part[(int64_t)thread * %d + %d].has = has%d;\n",
                      RP_CPU_CHAINS, c, c, RP_CPU_CHAINS, c, c);
    gx__sb_puts(b, "}\n");
    /* Pass b: every chain starts from the parts before it. */
    cpu_head(b, "gx_rp_scan_b", sg);
    char upto[48];
    gx__fmt(upto, sizeof upto, "(int64_t)thread * %d", RP_CPU_CHAINS);
    cpu_prefix(b, ks, upto);
    for (int c = 0; c < RP_CPU_CHAINS; c++)
        gx__sb_printf(b,
                      "  gx_acc acc%d = acc;\n  uint32_t has%d = has;\n"
                      "  { const gx_slot *p = &part[(int64_t)thread * %d + %d];\n"
                      "    if (p->has) { acc = has ? gx_rp_op(acc, p->v) : p->v; has = 1; } }\n",
                      c, c, RP_CPU_CHAINS, c);
    gx__sb_printf(b, "  %s *restrict out = (%s *)(gx_uptr)a->out[0];\n", ct(ks->acc[0]), ct(ks->acc[0]));
    cpu_chains(b, sg, ks, true);
    gx__sb_puts(b, "}\n");
}

/* Whether every output column is 4 or 8 bytes: the widths the vector compaction of
 * cpu_collect_blocks handles. */
static bool cpu_collect_vec(const rp_seg *sg)
{
    for (int c = 0; c < sg->arity; c++) {
        size_t w = gx_dtype_size(sg->dt[c]);
        if (w != 4 && w != 8)
            return false;
    }
    return true;
}

/* The collect pass writes its part block by block: a block's kept elements go to a
 * local buffer (bf<c>), then out at o (at most cap - o of them).
 * - Every CPU: one loop, branch-free: each element is stored at q and q moves past
 *   kept ones (q += keep).  A chain through q, about 2 cycles an element.
 * - AVX-512 (with VL) and 4- or 8-byte columns: the block's values (bd<c>) and flags
 *   (kf) first, in a loop the compiler vectorises like a map, then 16 flags at a time
 *   become a mask and vpcompressd/q packs the kept values into bf<c>.  256-bit
 *   vectors: 512-bit ones were no faster and slow the core's clock for the host code
 *   after them (reduce_gen.h).  x > 0.5 over f32 on the 2-core VM, count and collect
 *   passes, same process alternated (.wt/selh.c, session 32): 2^24 14.5 -> 10.4 ms
 *   on 2 threads, 22.6 -> 16.6 on one; 2^20 518 -> 257 us. */
static void cpu_collect_blocks(gx__sbuf *b, const rp_seg *sg)
{
    bool vec = cpu_collect_vec(sg);
    if (vec)
        gx__sb_puts(b, "#if defined(__AVX512F__) && defined(__AVX512VL__)\n");
    for (int v = vec ? 0 : 1; v < 2; v++) {
        int slack = v == 0 ? 16 : 0;
        for (int c = 0; c < sg->arity; c++) {
            gx__sb_printf(b, "  %s bf%d[256 + %d];\n", ct(sg->dt[c]), c, slack);
            if (v == 0)
                gx__sb_printf(b, "  %s bd%d[256 + 16];\n", ct(sg->dt[c]), c);
        }
        if (v == 0)
            gx__sb_puts(b, "  _Alignas(16) uint8_t kf[256 + 16];\n");
        gx__sb_puts(b, "  for (int64_t i0 = begin; i0 < end; i0 += 256) {\n"
                       "    const int64_t i1 = end - i0 < 256 ? end : i0 + 256;\n    int q = 0;\n");
        cpu_pf(b, sg, "i0", 256, "    ");
        gx__sb_puts(b, "    for (int64_t i = i0; i < i1; i++) {\n");
        emit_elem(b, sg, "i", NULL, "a->", "      ");
        for (int c = 0; c < sg->arity; c++)
            gx__sb_printf(b, v == 0 ? "      bd%d[i - i0] = %s(r%d);\n" : "      bf%d[q] = %s(r%d);\n", c,
                          half_st(sg->dt[c]), c);
        gx__sb_puts(b, v == 0 ? "      kf[i - i0] = keep ? 1 : 0;\n    }\n" : "      q += keep ? 1 : 0;\n    }\n");
        if (v == 0) {
            /* flags past the block's end are zero, so its last 16 need no test */
            gx__sb_puts(b, "    const int nb = (int)(i1 - i0);\n    if (nb < 256)\n      memset(kf + nb, 0, 16);\n"
                           "    for (int k = 0; k < nb; k += 16) {\n"
                           "      const __m128i f = _mm_loadu_si128((const __m128i *)(kf + k));\n"
                           "      const unsigned m = (unsigned)_mm_movemask_epi8(_mm_sub_epi8(_mm_setzero_si128(), f));\n");
            for (int c = 0; c < sg->arity; c++) {
                bool w8 = gx_dtype_size(sg->dt[c]) == 8;
                for (int h = 0; h < (w8 ? 4 : 2); h++) {
                    int lanes = w8 ? 4 : 8;
                    gx__sb_printf(b,
                                  "      { const unsigned mh = (m >> %d) & %#x;\n"
                                  "        int at = q;\n",
                                  h * lanes, (1u << lanes) - 1);
                    if (h > 0)
                        gx__sb_printf(b, "        at += __builtin_popcount(m & %#x);\n", (1u << (h * lanes)) - 1);
                    gx__sb_printf(b,
                                  "        _mm256_storeu_si256((__m256i *)(bf%d + at), _mm256_maskz_compress_epi%d((__mmask8)mh, "
                                  "_mm256_loadu_si256((const __m256i *)(bd%d + k + %d)))); }\n",
                                  c, w8 ? 64 : 32, c, h * lanes);
                }
            }
            gx__sb_puts(b, "      q += __builtin_popcount(m);\n    }\n");
        }
        gx__sb_puts(b, "    int64_t w = o < cap ? cap - o : 0;\n    if (w > q) w = q;\n");
        for (int c = 0; c < sg->arity; c++)
            gx__sb_printf(b, "    memcpy(out%d + o, bf%d, sizeof bf%d[0] * (size_t)w);\n", c, c, c);
        gx__sb_puts(b, "    o += q;\n  }\n");
        if (vec && v == 0)
            gx__sb_puts(b, "#else\n");
    }
    if (vec)
        gx__sb_puts(b, "#endif\n");
}

static void gen_cpu(gx__sbuf *b, const rp_seg *sg, const rp_kspec *ks)
{
    if (ks->term == RP_T_REDUCE) {
        cpu_fold_entry(b, sg, ks, "gx_rp_red");
        gx__sb_puts(b, "void gx_rp_fin(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                       "  const gx_args *a = (const gx_args *)ap;\n  (void)begin; (void)end; (void)thread;\n"
                       "  gx_slot *part = (gx_slot *)(gx_uptr)(a->scratch + 64);\n");
        cpu_prefix(b, ks, "a->nparts");
        gx__sb_puts(b, "  part[a->nparts].v = acc;\n  part[a->nparts].has = has;\n}\n");
        return;
    }
    if (ks->term == RP_T_COLLECT) {
        rp_kspec cnt = *ks;
        cnt.has_identity = true;
        cnt.identity = "GX_ZACC";
        cpu_fold_entry(b, sg, &cnt, "gx_rp_cnt");
        if (cpu_collect_vec(sg))
            gx__sb_puts(b, "#if defined(__AVX512F__) && defined(__AVX512VL__)\n#include <immintrin.h>\n#endif\n");
        cpu_head(b, "gx_rp_coll", sg);
        /* a->cnt: the outputs' capacity (ranks past it are not written); a->hres: where
         * the number kept goes (gx_filter_into's count), or 0. */
        gx__sb_puts(b, "  int64_t o = 0;\n  for (int t = 0; t < thread; t++) o += part[t].v.v0;\n"
                       "  const int64_t cap = (int64_t)a->cnt;\n"
                       "  if (thread == 0 && a->hres) {\n    int64_t tot = 0;\n"
                       "    for (int64_t t = 0; t < a->nparts; t++) tot += part[t].v.v0;\n"
                       "    *(int64_t *)(gx_uptr)a->hres = tot;\n  }\n");
        for (int c = 0; c < sg->arity; c++)
            gx__sb_printf(b, "  %s *restrict out%d = (%s *)(gx_uptr)a->out[%d];\n", ct(sg->dt[c]), c, ct(sg->dt[c]), c);
        cpu_collect_blocks(b, sg);
        gx__sb_puts(b, "}\n");
        return;
    }
    gen_cpu_scan(b, sg, ks);
}

/* ------------------------------------------------------------ CUDA helpers */

/* Shuffles of every accumulator member (and a has flag) by `fn` ("__shfl_down_sync"...). */
static void cu_shfl(gx__sbuf *b, const rp_kspec *ks, const char *fn, const char *dst, const char *src, const char *arg,
                    const char *ind)
{
    int nacc = ks->term == RP_T_COLLECT ? 1 : ks->nacc;
    for (int c = 0; c < nacc; c++) {
        gx_dtype t = ks->term == RP_T_COLLECT ? GX_I64 : ks->acc[c];
        if (gx_dtype_size(t) < 4)
            gx__sb_printf(b, "%s%s.v%d = (%s)%s(0xffffffffu, (int)%s.v%d, %s);\n", ind, dst, c, ct(t), fn, src, c, arg);
        else
            gx__sb_printf(b, "%s%s.v%d = %s(0xffffffffu, %s.v%d, %s);\n", ind, dst, c, fn, src, c, arg);
    }
}

/* ------------------------------------------------------------ CUDA look-back
 *
 * Tile t's status is published in two steps, aggregate (1) then inclusive prefix
 * (2).  Packed form (shape.packed): status in bits 62-63 of one 64-bit word, value
 * below (a <= 4-byte accumulator's bits, or a compaction count), written and read
 * with single 64-bit accesses -- a reader never sees a flag without its value, so
 * no fences and one load per poll, which is the latency every later tile waits on.
 * Wide form: gx_slot {v, flag, has, inc} with value-fence-flag writes. */

static void cu_pack_helpers(gx__sbuf *b, const rp_kspec *ks)
{
    if (ks->term == RP_T_COLLECT) {
        gx__sb_puts(b, "GXF unsigned long long gx_pk(unsigned long long st, gx_acc v) { return (st << 62) | (unsigned "
                       "long long)v.v0; }\n"
                       "GXF gx_acc gx_upk(unsigned long long w) { gx_acc r; r.v0 = (int64_t)(w & "
                       "0x3fffffffffffffffull); return r; }\n");
        return;
    }
    /* The accumulator's bits through the unsigned type of its width. */
    gx_dtype t = ks->acc[0];
    const char *to, *from;
    if (t == GX_F32) {
        to = "__float_as_uint(v.v0)";
        from = "__uint_as_float(u)";
    } else if (t == GX_BOOL) {
        to = "(v.v0 ? 1u : 0u)";
        from = "u != 0u";
    } else {
        size_t sz = gx_dtype_size(t);
        to = sz == 1   ? "(unsigned int)(unsigned char)v.v0"
             : sz == 2 ? "(unsigned int)(unsigned short)v.v0"
                       : "(unsigned int)v.v0";
        from = sz == 1 ? "(unsigned char)u" : sz == 2 ? "(unsigned short)u" : "u";
    }
    gx__sb_printf(b,
                  "GXF unsigned long long gx_pk(unsigned long long st, gx_acc v) { return (st << 62) | (unsigned long "
                  "long)%s; }\n"
                  "GXF gx_acc gx_upk(unsigned long long w) { const unsigned int u = (unsigned int)w; gx_acc r; r.v0 = "
                  "(%s)(%s); return r; }\n",
                  to, ct(t), from);
}

/* Publishes tile `T`'s status `st` with value `val` (lane 0 / thread 0 only). */
static void cu_publish(gx__sbuf *b, const rp_kspec *ks, bool packed, const char *T, int st, const char *val,
                       const char *ind)
{
    if (packed) {
        gx__sb_printf(b, "%sws[%s] = gx_pk(%du, %s);\n", ind, T, st, val);
        return;
    }
    int nacc = ks->term == RP_T_COLLECT ? 1 : ks->nacc;
    for (int c = 0; c < nacc; c++)
        gx__sb_printf(b, "%svs[%s].%s.v%d = %s.v%d;\n", ind, T, st == 1 ? "v" : "inc", c, val, c);
    gx__sb_printf(b, "%s__threadfence();\n%svs[%s].flag = %du;\n", ind, ind, T, st);
}

/* Lane `lane` of warp 0 reads the status of tile j (>= 0) into (f, v), waiting
 * while any lane's tile has published nothing yet (a warp-uniform loop). */
static void cu_poll(gx__sbuf *b, const rp_kspec *ks, bool packed)
{
    if (packed) {
        gx__sb_puts(b, "      unsigned long long sw = j >= 0 ? ws[j] : (2ull << 62);\n"
                       "      while (__any_sync(0xffffffffu, (sw >> 62) == 0ull)) {\n"
                       "        if (GX_LB_DELAY) __nanosleep(GX_LB_DELAY);   /* spinning steals issue slots from the "
                       "tiles waited for */\n"
                       "        if ((sw >> 62) == 0ull) sw = ws[j];\n      }\n"
                       "      const uint32_t f = (uint32_t)(sw >> 62);\n"
                       "      const gx_acc v = j >= 0 ? gx_upk(sw) : GX_ZACC;\n");
        return;
    }
    int nacc = ks->term == RP_T_COLLECT ? 1 : ks->nacc;
    gx__sb_puts(b, "      uint32_t f = 2u;\n      gx_acc v = GX_ZACC;\n"
                   "      if (j >= 0) {\n"
                   "        while ((f = vs[j].flag) == 0u)\n"
                   "          if (GX_LB_DELAY) __nanosleep(GX_LB_DELAY);\n"
                   "        __threadfence();\n");
    for (int c = 0; c < nacc; c++)
        gx__sb_printf(b, "        v.v%d = f == 2u ? vs[j].inc.v%d : vs[j].v.v%d;\n", c, c, c);
    gx__sb_puts(b, "      }\n");
}

/* Warp 0 of the block at tile `tile` (> 0) publishes `s_agg`, looks back, publishes
 * the inclusive prefix and leaves the exclusive prefix in s_ex. */
static void cu_lookback(gx__sbuf *b, const rp_kspec *ks, bool packed)
{
    gx__sb_puts(b, "  if (tile > 0 && threadIdx.x < 32) {\n"
                   "    const int lane = threadIdx.x;\n"
                   "    if (lane == 0) {\n");
    cu_publish(b, ks, packed, "tile", 1, "s_agg", "      ");
    gx__sb_puts(b, "    }\n"
                   "    if (GX_LB_WAIT) __nanosleep(GX_LB_WAIT);   /* the predecessors' writes are on their way */\n"
                   "    gx_acc ex = GX_ZACC; uint32_t exh = 0;\n"
                   "    int64_t j0 = tile - 1;\n"
                   "    for (;;) {\n"
                   "      const int64_t j = j0 - lane;\n");
    cu_poll(b, ks, packed);
    gx__sb_puts(b, "      const unsigned pm = __ballot_sync(0xffffffffu, f == 2u);\n"
                   "      const int p = pm ? __ffs(pm) - 1 : 31;\n"
                   "      gx_acc w = v;\n");
    /* Lane l holds tile j0 - l; fold lanes p..0 in tile order with a 5-step
     * shuffle tree (earlier tiles on the left: op(lane l + off, lane l)), not 31
     * dependent shuffles: the window's fold is on every tile's critical path. */
    gx__sb_puts(b, "#pragma unroll\n      for (int off = 1; off < 32; off <<= 1) {\n        gx_acc o;\n");
    cu_shfl(b, ks, "__shfl_down_sync", "o", "w", "off", "        ");
    gx__sb_puts(b, "        if (lane + off <= p) w = gx_rp_op(o, w);\n      }\n");
    cu_shfl(b, ks, "__shfl_sync", "w", "w", "0", "      ");
    gx__sb_puts(b, "      ex = exh ? gx_rp_op(w, ex) : w;\n      exh = 1;\n"
                   "      if (pm) break;\n      j0 -= 32;\n    }\n"
                   "    if (lane == 0) {\n      const gx_acc inc = gx_rp_op(ex, s_agg);\n");
    cu_publish(b, ks, packed, "tile", 2, "inc", "      ");
    gx__sb_puts(b, "      s_ex = ex;\n      s_exh = 1;\n    }\n  }\n");
    /* After thread 0's publish (tile 0's comes before this, in every kernel). */
    gx__sb_puts(b, "  if (a.par && tile == a.ntiles - 1 && threadIdx.x == 0) *(volatile unsigned *)(gx_uptr)a.par ^= 1u;\n");
}

/* Block-wide exclusive scan of per-thread (tagg, th): leaves the thread's exclusive
 * prefix within the tile in (pre, preh) and the tile aggregate in s_agg. */
static void cu_block_scan(gx__sbuf *b, const rp_kspec *ks)
{
    gx__sb_puts(b, "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
                   "  gx_acc inc = tagg; uint32_t inch = th;\n"
                   "#pragma unroll\n  for (int d = 1; d < 32; d <<= 1) {\n    gx_acc o;\n");
    cu_shfl(b, ks, "__shfl_up_sync", "o", "inc", "d", "    ");
    gx__sb_puts(b, "    const uint32_t oh = __shfl_up_sync(0xffffffffu, inch, d);\n"
                   "    if (lane >= d && oh) { inc = inch ? gx_rp_op(o, inc) : o; inch = 1; }\n  }\n"
                   "  gx_acc pre;\n");
    cu_shfl(b, ks, "__shfl_up_sync", "pre", "inc", "1", "  ");
    gx__sb_puts(b, "  uint32_t preh = __shfl_up_sync(0xffffffffu, inch, 1);\n  if (lane == 0) preh = 0;\n"
                   "  if (lane == 31) { s_w[warp] = inc; s_wh[warp] = inch; }\n  __syncthreads();\n"
                   "  if (threadIdx.x == 0) {\n    gx_acc t = GX_ZACC; uint32_t h = 0;\n"
                   "    for (int w = 0; w < (int)(blockDim.x >> 5); w++) {\n"
                   "      s_wx[w] = t; s_wxh[w] = h;\n"
                   "      if (s_wh[w]) { t = h ? gx_rp_op(t, s_w[w]) : s_w[w]; h = 1; }\n    }\n"
                   "    s_agg = t;\n  }\n  __syncthreads();\n"
                   "  if (s_wxh[warp]) { pre = preh ? gx_rp_op(s_wx[warp], pre) : s_wx[warp]; preh = 1; }\n");
}

/* The tile is the block index: blocks start in index order, so every tile a block
 * waits on is running or done (CUB relies on the same), and the loads need not wait
 * for an atomic ticket first. */
static void cu_shared_decls(gx__sbuf *b, size_t sm_bytes)
{
    gx__sb_printf(b, "  __shared__ __align__(128) unsigned char gx_sm[%zu];\n", sm_bytes);
    gx__sb_puts(
        b,
        "  __shared__ gx_acc s_w[32], s_wx[32], s_agg, s_ex;\n"
        "  __shared__ uint32_t s_wh[32], s_wxh[32], s_exh;\n"
        "  gx_slot *slots = (gx_slot *)(gx_uptr)(gx_scr + 64);\n"
        "  volatile gx_slot *vs = slots;\n  (void)vs;\n"
        "  volatile unsigned long long *ws = (volatile unsigned long long *)(gx_uptr)(gx_scr + 64);\n  (void)ws;\n");
    gx__sb_puts(b, "  const int64_t tile = (int64_t)blockIdx.x;\n"
                   "  if (threadIdx.x == 0) s_exh = 0;   /* thread 0 writes it again only after this */\n");
}

/* The look-back's timing constants (knobs for experiments; 0 = no sleep). */
static void cu_lb_consts(gx__sbuf *b)
{
    gx__sb_printf(b, "#define GX_LB_WAIT %du\n#define GX_LB_DELAY %du\n", knob_int("GX_LB_WAIT", 1200),
                  knob_int("GX_LB_DELAY", 300));
}

/* ------------------------------------------------------------ CUDA tile staging
 *
 * Scan and collect kernels work on a "blocked" layout: thread t owns the ITEMS
 * consecutive elements from t * ITEMS.  Reading or writing that layout straight from
 * global memory makes a warp's access span 32 runs (2 KB for f32), so stores turn
 * into partial-sector writes.  Instead, contiguous arrays are loaded warp-striped
 * (thread t takes vector q * B + t of the tile, so a warp touches 512 contiguous
 * bytes), transposed through the shared buffer gx_sm and read back as per-thread
 * runs; scan results take the reverse path.  rp_tile_shape keeps a tile of the
 * widest element within RP_SM_TILE bytes. */

/* Shared-memory offsets: tiles are swizzled (16-byte cell c of 128-byte row r sits at
 * cell c ^ (r & 7)) so both a warp's per-thread runs and its striped accesses hit
 * distinct banks; compacted runs (collect) swizzle elements within a row likewise. */
static void cu_sm_helpers(gx__sbuf *b, bool compact)
{
    gx__sb_puts(b, "GXF int gx_sv(int o) { return o ^ (((o >> 7) & 7) << 4); }\n");
    if (compact)
        gx__sb_puts(b, "GXF int gx_se(int i, int l) { return i ^ ((i >> l) & ((1 << l) - 1)); }\n");
}

/* Half sources are not staged (their loads convert; seg_finalize gives them vec 1). */
static bool cu_staged(const rp_seg *sg)
{
    bool half = false;
    for (int k = 0; k < sg->nsrc; k++)
        half = half || gx__dtype_is_half(sg->sdt[k]);
    return sg->src == RP_SRC_ARRAYS && sg->contig && !half;
}

/* Elements per global vector access of source k (the segment's alignment allows it). */
static int cu_src_vec(const rp_seg *sg, int items)
{
    int K = cu_staged(sg) && sg->vec > 1 ? sg->vec : 1;
    return K > items ? items : K;
}

/* Elements per 16-byte (at most) shared-memory access of a run of `items` of size sz. */
static int cu_run_vec(size_t sz, int items)
{
    int R = vec16(sz);
    return R > items ? items : R;
}

/* Bytes of gx_sm a scan (out_sz = accumulator size) or collect (out_sz = 0) needs. */
static size_t cu_sm_bytes(const rp_seg *sg, rp_tshape sh, size_t out_sz)
{
    size_t te = (size_t)sh.block * (size_t)sh.items, need = 16;
    for (int k = 0; k < sg->nsrc && cu_staged(sg); k++)
        need = te * gx_dtype_size(sg->sdt[k]) > need ? te * gx_dtype_size(sg->sdt[k]) : need;
    for (int c = 0; out_sz == 0 && c < sg->arity; c++)
        need = te * gx_dtype_size(sg->dt[c]) > need ? te * gx_dtype_size(sg->dt[c]) : need;
    need = te * out_sz > need ? te * out_sz : need;
    return need;
}

/* Vector types of the staged sources: gxv (global accesses), gxr (per-thread runs). */
static void cu_stage_types(gx__sbuf *b, const rp_seg *sg, int items)
{
    for (int k = 0; k < sg->nsrc && cu_staged(sg); k++) {
        size_t sz = gx_dtype_size(sg->sdt[k]);
        int K = cu_src_vec(sg, items), R = cu_run_vec(sz, items);
        gx__sb_printf(b, "struct __align__(%zu) gxv%d { %s e[%d]; };\n", sz * (size_t)K, k, ct(sg->sdt[k]), K);
        gx__sb_printf(b, "struct __align__(%zu) gxr%d { %s e[%d]; };\n", sz * (size_t)R, k, ct(sg->sdt[k]), R);
    }
}

/* Source k into xs<k>[items] (blocked), through gx_sm; `more`: gx_sm is reused after. */
static void cu_stage_source(gx__sbuf *b, const rp_seg *sg, int k, rp_tshape sh, bool more)
{
    const char *t = ct(sg->sdt[k]);
    size_t sz = gx_dtype_size(sg->sdt[k]);
    int B = sh.block, items = sh.items, K = cu_src_vec(sg, items), R = cu_run_vec(sz, items);
    int te = B * items;
    gx__sb_printf(b, "  {\n    const int64_t pb = tile * %d;\n", te);
    gx__sb_printf(b,
                  "    if (gx_tfull) {\n#pragma unroll\n      for (int q = 0; q < %d; q++) {\n"
                  "        const int vi = q * %d + (int)threadIdx.x;\n"
                  "        *(gxv%d *)(gx_sm + gx_sv(vi * %d)) = ((const gxv%d *)(in%d + pb))[vi];\n      }\n"
                  "    } else {\n#pragma unroll\n      for (int q = 0; q < %d; q++) {\n"
                  "        const int i = q * %d + (int)threadIdx.x;\n"
                  "        *(%s *)(gx_sm + gx_sv(i * %zu)) = pb + i < n ? in%d[pb + i] : (%s)0;\n      }\n    }\n"
                  "    __syncthreads();\n",
                  items / K, B, k, (int)sz * K, k, k, items, B, t, sz, k, t);
    gx__sb_printf(b,
                  "    const int o = (int)threadIdx.x * %d;\n"
                  "#pragma unroll\n    for (int q = 0; q < %d; q++) {\n"
                  "      const gxr%d v = *(const gxr%d *)(gx_sm + gx_sv(o + q * %d));\n"
                  "#pragma unroll\n      for (int e = 0; e < %d; e++) xs%d[q * %d + e] = v.e[e];\n    }\n  }\n",
                  (int)sz * items, items / R, k, k, (int)sz * R, R, k, R);
    if (more)
        gx__sb_puts(b, "  __syncthreads();   /* gx_sm is read: the next source may overwrite it */\n");
}

/* The thread's ITEMS elements (blocked: from base) through the element code into
 * kept[k] / rv<c>[k] (contiguous array sources staged through gx_sm first), then
 * `after`: once for a full tile without bounds checks and once for the last, partial
 * tile.  In a full tile of a pipeline without a filter every kept[k] is the constant
 * true, so `after` (the thread's scan or count) compiles to plain arithmetic. */
static void cu_tile_elements(gx__sbuf *b, const rp_seg *sg, rp_tshape sh, const char *after)
{
    int items = sh.items, te = sh.block * items;
    gx__sb_printf(b,
                  "  const int64_t base = tile * %d + (int64_t)threadIdx.x * %d;\n"
                  "  const bool gx_tfull = (tile + 1) * %d <= n;\n  (void)gx_tfull;\n",
                  te, items, te);
    gx__sb_printf(b, "  bool kept[%d];\n", items);
    for (int c = 0; c < sg->arity; c++)
        gx__sb_printf(b, "  %s rv%d[%d];\n", vt(sg->dt[c]), c, items);
    const char *srcx[RP_MAXC];
    char sbuf[RP_MAXC][48];
    bool staged = cu_staged(sg);
    for (int k = 0; k < sg->nsrc && staged; k++) {
        gx__sb_printf(b, "  %s xs%d[%d];\n", ct(sg->sdt[k]), k, items);
        gx__fmt(sbuf[k], sizeof sbuf[k], "xs%d[k]", k);
        srcx[k] = sbuf[k];
    }
    for (int k = 0; k < sg->nsrc && staged; k++)
        cu_stage_source(b, sg, k, sh, k + 1 < sg->nsrc);
    for (int full = 1; full >= 0; full--) {
        gx__sb_puts(b, full ? "  if (gx_tfull) {\n" : "  } else {\n");
        gx__sb_printf(b, "#pragma unroll\n  for (int k = 0; k < %d; k++) {\n    kept[k] = false;\n    if (%s) {\n",
                      items, full ? "true" : "base + k < n");
        emit_elem(b, sg, "base + k", staged ? srcx : NULL, "a.", "      ");
        gx__sb_puts(b, "      kept[k] = keep;\n");
        for (int c = 0; c < sg->arity; c++)
            gx__sb_printf(b, "      rv%d[k] = r%d;\n", c, c);
        gx__sb_puts(b, "    }\n  }\n");
        gx__sb_puts(b, after);
    }
    gx__sb_puts(b, "  }\n");
}

static void cu_vec_types(gx__sbuf *b, const rp_seg *sg, int items)
{
    int K = sg->src == RP_SRC_ARRAYS && sg->contig ? sg->vec : 1;
    if (K > items)
        K = items;
    if (K <= 1)
        return;
    for (int k = 0; k < sg->nsrc; k++)
        gx__sb_printf(b, "struct __align__(%zu) gxv%d { %s e[%d]; };\n", gx_dtype_size(sg->sdt[k]) * (size_t)K, k,
                      ct(sg->sdt[k]), K);
}

/* The status memory of the stream's next look-back launch starts at zero: this
 * launch zeroes it (rg_lookback_mem), so no launch needs an initialising kernel. */
static void cu_clear_next(gx__sbuf *b)
{
    /* In a graph (a.par != 0) the same launch replays, so it cannot be handed the next
     * buffer: the two swap by the parity of *a.par, which the last tile flips once
     * every tile has read it (a tile finishes its look-back only after every earlier
     * tile has published, so after every block has started). */
    gx__sb_puts(b, "  uint64_t gx_scr = a.scratch, gx_clr = a.clr;\n"
                   "  if (a.par && (*(volatile unsigned *)(gx_uptr)a.par & 1u)) { gx_scr = a.clr; gx_clr = a.scratch; }\n");
    gx__sb_puts(b, "  {\n    unsigned long long *gx_c = (unsigned long long *)(gx_uptr)gx_clr;\n"
                   "    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.nclr; i += "
                   "(int64_t)gridDim.x * blockDim.x)\n"
                   "      gx_c[i] = 0ull;\n  }\n");
}

/* ys[] (blocked) to out: each thread's run into gx_sm, then whole tiles leave in
 * warp-striped vectors (a warp writes 512 contiguous bytes per store), the last
 * tile (or an unaligned out) element-wise striped.  gx_sm is free here: the block
 * scan's barriers follow every read of the loads' staging. */
static void cu_store_scan(gx__sbuf *b, const rp_kspec *ks, rp_tshape sh)
{
    const char *t = ct(ks->acc[0]);
    size_t sz = gx_dtype_size(ks->acc[0]);
    int B = sh.block, items = sh.items, R = cu_run_vec(sz, items), vb = (int)sz * R;
    gx__sb_printf(b,
                  "  struct __align__(%d) gxo { %s e[%d]; };\n  {\n    const int o = (int)threadIdx.x * %d;\n"
                  "#pragma unroll\n    for (int q = 0; q < %d; q++) {\n      gxo v;\n"
                  "#pragma unroll\n      for (int e = 0; e < %d; e++) v.e[e] = ys[q * %d + e];\n"
                  "      *(gxo *)(gx_sm + gx_sv(o + q * %d)) = v;\n    }\n  }\n  __syncthreads();\n",
                  vb, t, R, (int)sz * items, items / R, R, R, vb);
    gx__sb_printf(b,
                  "  const int64_t tb = tile * %d;\n"
                  "  if (gx_tfull && (a.out[0] & %d) == 0) {\n    gxo *ov = (gxo *)(out + tb);\n"
                  "#pragma unroll\n    for (int q = 0; q < %d; q++) {\n"
                  "      const int vi = q * %d + (int)threadIdx.x;\n"
                  "      ov[vi] = *(const gxo *)(gx_sm + gx_sv(vi * %d));\n    }\n  } else {\n"
                  "#pragma unroll\n    for (int q = 0; q < %d; q++) {\n"
                  "      const int i = q * %d + (int)threadIdx.x;\n"
                  "      if (tb + i < n) out[tb + i] = *(const %s *)(gx_sm + gx_sv(i * %zu));\n    }\n  }\n",
                  B * items, vb - 1, items / R, B, vb, items, B, t, sz);
}

/* ", N" for __launch_bounds__ when the tile shape asks for N blocks per SM. */
static const char *cu_minb(char *buf, size_t n, int minb)
{
    if (minb > 0)
        gx__fmt(buf, n, ", %d", minb);
    else
        buf[0] = '\0';
    return buf;
}

/* What scan and collect kernels share up to the tile's elements: helpers, the init
 * entry, the entry `name`'s head, shared memory and the staged elements. */
static void cu_tile_kernel_head(gx__sbuf *b, const rp_seg *sg, const rp_kspec *ks, rp_tshape sh, const char *name,
                                const char *decl, const char *after)
{
    bool scan = ks->term == RP_T_SCAN;
    char mb[16];
    cu_stage_types(b, sg, sh.items);
    cu_sm_helpers(b, !scan);
    cu_lb_consts(b);
    cu_pack_helpers(b, ks);
    gx__sb_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d%s) %s(const gx_args a)\n{\n  GX_PDL_ENTER();\n", sh.block,
                  cu_minb(mb, sizeof mb, sh.minb), name);
    emit_prologue(b, sg, "a.", true);
    cu_clear_next(b);
    /* collect: gx_sm also holds one tile of the widest component, compacted one at a time */
    cu_shared_decls(b, cu_sm_bytes(sg, sh, scan ? gx_dtype_size(ks->acc[0]) : 0));
    gx__sb_puts(b, decl);
    cu_tile_elements(b, sg, sh, after);
}

static void gen_cuda_scan(gx__sbuf *b, const rp_seg *sg, const rp_kspec *ks, rp_tshape sh)
{
    int items = sh.items;
    /* Running values within the thread's items (inclusive). */
    gx__sbuf run = {0};
    gx__sb_printf(&run,
                  "#pragma unroll\n  for (int k = 0; k < %d; k++) {\n    const int64_t gx_i = base + k;\n"
                  "    const %s r0 = rv0[k];\n",
                  items, vt(sg->dt[0]));
    gx__sb_printf(&run, "    gx_acc r;\n    { const int64_t gx_pos = gx_i; (void)gx_pos; %s }\n", ks->lift);
    gx__sb_puts(&run, "    if (kept[k]) { tagg = th ? gx_rp_op(tagg, r) : r; th = 1; }\n    x[k] = tagg;\n  }\n");
    char decl[80];
    gx__fmt(decl, sizeof decl, "  gx_acc x[%d];\n  gx_acc tagg = GX_ZACC; uint32_t th = 0;\n", items);
    cu_tile_kernel_head(b, sg, ks, sh, "gx_rp_scan", decl, run.oom ? "#error out of host memory\n" : run.p);
    gx__sb_free(&run);
    cu_block_scan(b, ks);
    gx__sb_puts(b, "  if (tile == 0 && threadIdx.x == 0) {\n    gx_acc inc = s_agg;\n");
    if (ks->has_init) {
        gx__sb_puts(b, "    gx_acc i0;\n");
        emit_init_acc(b, ks, "a.", "i0");
        gx__sb_puts(b, "    inc = gx_rp_op(i0, inc);\n    s_ex = i0;\n    s_exh = 1;\n");
    }
    cu_publish(b, ks, sh.packed, "0", 2, "inc", "    ");
    gx__sb_puts(b, "  }\n");
    cu_lookback(b, ks, sh.packed);
    gx__sb_puts(b, "  __syncthreads();\n"
                   "  if (s_exh) { pre = preh ? gx_rp_op(s_ex, pre) : s_ex; preh = 1; }\n");
    gx__sb_printf(b, "  %s *out = (%s *)(gx_uptr)a.out[0];\n", ct(ks->acc[0]), ct(ks->acc[0]));
    gx__sb_printf(b, "  %s ys[%d];\n#pragma unroll\n  for (int k = 0; k < %d; k++) {\n", ct(ks->acc[0]), items, items);
    if (ks->exclusive)
        gx__sb_puts(b, "    ys[k] = (k == 0 ? pre : gx_rp_op(pre, x[k - 1])).v0;\n  }\n");
    else
        gx__sb_puts(b, "    ys[k] = (preh ? gx_rp_op(pre, x[k]) : x[k]).v0;\n  }\n");
    cu_store_scan(b, ks, sh);
    gx__sb_puts(b, "}\n");
}

static void gen_cuda_collect(gx__sbuf *b, const rp_seg *sg, const rp_kspec *ks, rp_tshape sh)
{
    int items = sh.items;
    char cnt[96];
    gx__fmt(cnt, sizeof cnt, "#pragma unroll\n  for (int k = 0; k < %d; k++) cnt += kept[k] ? 1 : 0;\n", items);
    cu_tile_kernel_head(b, sg, ks, sh, "gx_rp_coll", "  int cnt = 0;\n", cnt);
    gx__sb_puts(b, "  gx_acc tagg; tagg.v0 = cnt;\n  const uint32_t th = 1;\n");
    cu_block_scan(b, ks);
    gx__sb_puts(b, "  if (tile == 0 && threadIdx.x == 0) {\n");
    cu_publish(b, ks, sh.packed, "0", 2, "s_agg", "    ");
    gx__sb_puts(b, "  }\n");
    cu_lookback(b, ks, sh.packed);
    gx__sb_puts(b, "  __syncthreads();\n"
                   "  const int64_t tbase = s_exh ? s_ex.v0 : 0;\n"
                   "  const int tcount = (int)s_agg.v0;\n"
                   "  int rk = preh ? (int)pre.v0 : 0;\n"
                   "  if (tile == a.ntiles - 1 && threadIdx.x == 0) {\n"
                   "    ((int64_t *)(gx_uptr)gx_scr)[1] = tbase + tcount;\n"
                   "    if (a.hres) *(volatile int64_t *)(gx_uptr)a.hres = tbase + tcount;\n  }\n");
    /* Each component in turn: kept values to their ranks in gx_sm, then out with
     * consecutive threads at consecutive indices (warp-contiguous runs). */
    for (int c = 0; c < sg->arity; c++) {
        const char *t = ct(sg->dt[c]);
        size_t sz = gx_dtype_size(sg->dt[c]);
        int l = 0; /* a 128-byte row holds 1 << l elements */
        while (((size_t)2 << l) * sz <= 128)
            l++;
        gx__sb_printf(b,
                      "  {\n    int q = rk;\n"
                      "#pragma unroll\n    for (int k = 0; k < %d; k++)\n"
                      "      if (kept[k]) { *(%s *)(gx_sm + gx_se(q, %d) * %zu) = %s(rv%d[k]); q++; }\n"
                      "    __syncthreads();\n    %s *out = (%s *)(gx_uptr)a.out[%d];\n"
                      "    for (int q2 = threadIdx.x; q2 < tcount && tbase + q2 < (int64_t)a.cnt; q2 += %d) out[tbase + q2] = *(const %s *)(gx_sm + "
                      "gx_se(q2, %d) * %zu);\n",
                      items, t, l, sz, half_st(sg->dt[c]), c, t, t, c, sh.block, t, l, sz);
        gx__sb_puts(b, c + 1 < sg->arity ? "    __syncthreads();\n  }\n" : "  }\n");
    }
    gx__sb_puts(b, "}\n");
}

/* Reduce: per-thread folds (striped vector loads for arrays, contiguous runs for
 * generators), a warp tree, one slot per block; the last block combines the slots. */
static void cu_block_reduce(gx__sbuf *b, const rp_kspec *ks, const char *slot)
{
    gx__sb_puts(b, "  {\n    __shared__ gx_acc s_w[32];\n    __shared__ uint32_t s_wh[32];\n"
                   "    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
                   "#pragma unroll\n    for (int d = 16; d > 0; d >>= 1) {\n      gx_acc o;\n");
    cu_shfl(b, ks, "__shfl_down_sync", "o", "acc", "d", "      ");
    gx__sb_puts(b, "      const uint32_t oh = __shfl_down_sync(0xffffffffu, has, d);\n"
                   "      if (oh && lane + d < 32) { acc = has ? gx_rp_op(acc, o) : o; has = 1; }\n    }\n"
                   "    if (lane == 0) { s_w[warp] = acc; s_wh[warp] = has; }\n    __syncthreads();\n"
                   "    if (threadIdx.x == 0) {\n      has = 0;\n"
                   "      for (int w = 0; w < (int)(blockDim.x >> 5); w++)\n"
                   "        if (s_wh[w]) { acc = has ? gx_rp_op(acc, s_w[w]) : s_w[w]; has = 1; }\n");
    gx__sb_printf(b, "      %s\n    }\n  }\n", slot);
}

/* The pipeline's reduce terminal on CUDA.  Why not reduce_gen.c's generator (one
 * value from a flat range) or reduce_axis.c's (one value per kept position): the
 * elements here are a fused segment -- generator or array sources, maps, filters,
 * enumerate -- computed in registers, the accumulator is a tuple lifted from the
 * element and its position, and a lambda operator may have no neutral element, so
 * partials carry validity flags and init is combined first.  Generators read no
 * memory and fold contiguous runs; arrays use striped vector loads. */
static void gen_cuda_reduce(gx__sbuf *b, const rp_seg *sg, const rp_kspec *ks)
{
    int K = sg->src == RP_SRC_ARRAYS && sg->contig ? sg->vec : 1, U = 4;
    cu_vec_types(b, sg, 16);
    gx__sb_printf(b, "extern \"C\" __global__ void __launch_bounds__(%d) gx_rp_red(const gx_args a)\n{\n  GX_PDL_ENTER();\n", RP_BLOCK);
    emit_prologue(b, sg, "a.", true);
    gx__sb_puts(b, "  gx_slot *part = (gx_slot *)(gx_uptr)(a.scratch + 64);\n");
    emit_acc_init(b, ks, true);
    gx__sb_puts(b, "  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  const int64_t nth = (int64_t)gridDim.x * blockDim.x;\n");
    if (sg->src == RP_SRC_ARRAYS && K > 1) {
        const char *srcx[RP_MAXC];
        char sbuf[RP_MAXC][32];
        for (int k = 0; k < sg->nsrc; k++) {
            gx__fmt(sbuf[k], sizeof sbuf[k], "xv%d[u].e[e]", k);
            srcx[k] = sbuf[k];
        }
        gx__sb_printf(b, "  const int64_t nv = n / %d;\n  for (int64_t v0 = tid; v0 < nv; v0 += nth * %d) {\n", K, U);
        for (int k = 0; k < sg->nsrc; k++)
            gx__sb_printf(b, "    gxv%d xv%d[%d];\n", k, k, U);
        gx__sb_printf(b,
                      "#pragma unroll\n    for (int u = 0; u < %d; u++) {\n      const int64_t v = v0 + u * nth;\n     "
                      " if (v < nv) {\n",
                      U);
        for (int k = 0; k < sg->nsrc; k++)
            gx__sb_printf(b, "        xv%d[u] = ((const gxv%d *)in%d)[v];\n", k, k, k);
        gx__sb_printf(b,
                      "      }\n    }\n#pragma unroll\n    for (int u = 0; u < %d; u++) {\n      const int64_t v = v0 "
                      "+ u * nth;\n"
                      "      if (v < nv) {\n#pragma unroll\n        for (int e = 0; e < %d; e++) {\n",
                      U, K);
        char idx[48];
        gx__fmt(idx, sizeof idx, "v * %d + e", K);
        emit_elem(b, sg, idx, srcx, "a.", "          ");
        emit_accum(b, ks, "          ");
        gx__sb_printf(b, "        }\n      }\n    }\n  }\n  for (int64_t i = nv * %d + tid; i < n; i += nth) {\n", K);
        emit_elem(b, sg, "i", NULL, "a.", "    ");
        emit_accum(b, ks, "    ");
        gx__sb_puts(b, "  }\n");
    } else if (sg->src == RP_SRC_ARRAYS) {
        gx__sb_puts(b, "#pragma unroll 4\n  for (int64_t i = tid; i < n; i += nth) {\n");
        emit_elem(b, sg, "i", NULL, "a.", "    ");
        emit_accum(b, ks, "    ");
        gx__sb_puts(b, "  }\n");
    } else {
        /* Generators read no memory: a contiguous run per thread, a 32-bit counter. */
        gx__sb_puts(b, "  const int64_t run = (n + nth - 1) / nth;\n"
                       "  const int64_t b0 = tid * run;\n"
                       "  const int64_t len = b0 < n ? (n - b0 < run ? n - b0 : run) : 0;\n");
        /* Integer iota: the value advances by one add per element (same wrap-around).
         * A 64-bit one whose values all fit 32 bits advances in 32 (one add, not two)
         * behind a filter: without one, NVCC sums polynomial maps of a 64-bit counter
         * in closed form (iota | reduce(+) at 2^29 in 25 us), which a 32-bit counter
         * that might wrap prevents (95 us). */
        bool inc = sg->src == RP_SRC_IOTA && !gx__dtype_is_float(sg->sdt[0]);
        const char *ctype = ct(sg->sdt[0]), *cur[1] = {"gx_cur"};
        char cur32[64];
        if (inc && sg->filtered && gx_dtype_size(sg->sdt[0]) == 8 && sg->vr.ok && sg->vr.lo >= INT32_MIN &&
            sg->vr.hi <= (int64_t)UINT32_MAX) {
            gx__fmt(cur32, sizeof cur32, "((%s)%sgx_cur)", ctype, sg->vr.lo < 0 ? "(int32_t)" : "");
            cur[0] = cur32;
            ctype = "uint32_t";
        }
        char step[96] = "";
        if (inc) {
            gx__sb_printf(b, "  %s gx_cur = (%s)(gx_st + (uint64_t)(a.lo + b0) * gx_sp);\n", ctype, ctype);
            gx__fmt(step, sizeof step, "    gx_cur = (%s)(gx_cur + (%s)gx_sp);\n", ctype,
                    cur[0] == cur32 ? "uint32_t" : "uint64_t");
        }
        int64_t j0 = 0;
        if (!sg->filtered && !ks->has_identity) {
            gx__sb_puts(b, "  if (len > 0) {\n");
            emit_elem(b, sg, "b0", inc ? cur : NULL, "a.", "    ");
            emit_lift(b, ks, "    ");
            gx__sb_puts(b, "    acc = r;\n    has = 1;\n");
            gx__sb_puts(b, step);
            gx__sb_puts(b, "  }\n");
            j0 = 1;
        }
        gx__sb_printf(b, "#pragma unroll 4\n  for (int64_t j = %lld; j < len; j++) {\n", (long long)j0);
        emit_elem(b, sg, "b0 + j", inc ? cur : NULL, "a.", "    ");
        if (j0) {
            emit_lift(b, ks, "    ");
            gx__sb_puts(b, "    acc = gx_rp_op(acc, r);\n");
        } else {
            emit_accum(b, ks, "    ");
        }
        gx__sb_puts(b, step);
        gx__sb_puts(b, "  }\n");
    }
    cu_block_reduce(b, ks, "part[blockIdx.x].v = acc; part[blockIdx.x].has = has;");
    /* Single pass: the block that counts in last (threadfence, then the atomic counter)
     * combines the per-block slots in block order, init first, so a float sum is the
     * same on every run, and writes the result slot to host memory when mapped. */
    gx__sb_puts(b, "  unsigned *gx_cnt = (unsigned *)(gx_uptr)a.cnt;\n  {\n    __shared__ bool gx_last;\n"
                   "    if (threadIdx.x == 0) {\n      __threadfence();\n"
                   "      gx_last = atomicAdd(gx_cnt, 1u) == gridDim.x - 1;\n    }\n"
                   "    __syncthreads();\n    if (!gx_last)\n      return;\n    __threadfence();\n  }\n");
    emit_acc_init(b, ks, false);
    /* The whole GPU waits for this block: its loads of the slots go out 4 at a time,
     * not one L2 round trip each, and combine in the same order. */
    gx__sb_puts(b, "  for (unsigned t0 = threadIdx.x; t0 < gridDim.x; t0 += blockDim.x * 4) {\n"
                   "    gx_acc pv[4];\n    uint32_t ph[4];\n#pragma unroll\n    for (int k = 0; k < 4; k++) {\n"
                   "      const unsigned t = t0 + k * blockDim.x;\n      const volatile gx_slot *ps = part + t;\n"
                   "      ph[k] = t < gridDim.x ? ps->has : 0u;\n      if (ph[k]) {\n");
    for (int c = 0; c < ks->nacc; c++)
        gx__sb_printf(b, "        pv[k].v%d = ps->v.v%d;\n", c, c);
    gx__sb_puts(
        b, "      }\n    }\n#pragma unroll\n    for (int k = 0; k < 4; k++)\n"
           "      if (ph[k]) {\n        acc = has ? gx_rp_op(acc, pv[k]) : pv[k];\n        has = 1;\n      }\n  }\n");
    gx__sbuf fin = {0};
    if (ks->has_init) {
        gx__sb_puts(&fin, "gx_acc i0; ");
        for (int c = 0; c < ks->nacc; c++)
            gx__sb_printf(&fin, "i0.v%d = (%s)a.init[%d].%s; ", c, ct(ks->acc[c]), c, cfield(ks->acc[c]));
        gx__sb_puts(&fin, "acc = has ? gx_rp_op(i0, acc) : i0; has = 1;\n      ");
    }
    gx__sb_puts(&fin,
                "gx_slot *res = a.hres ? (gx_slot *)(gx_uptr)a.hres : part + gridDim.x;\n"
                "      res->v = acc;\n      res->has = has;\n      *gx_cnt = 0u;   /* ready for the next launch */");
    cu_block_reduce(b, ks, fin.p ? fin.p : "");
    gx__sb_free(&fin);
    gx__sb_puts(b, "}\n");
}

/* ------------------------------------------------------------ entry */

gx_status rp_generate_body(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, gx__sbuf *b)
{
    bool cuda = gen_cuda(ctx);
    gx__sb_puts(b, "\n#line 1 \"gx-generated\"\n");
    emit_common(b, ks, &sg->pipe->bind, cuda);
    if (!cuda)
        gen_cpu(b, sg, ks);
    else if (ks->term == RP_T_REDUCE)
        gen_cuda_reduce(b, sg, ks);
    else if (ks->term == RP_T_SCAN)
        gen_cuda_scan(b, sg, ks, rp_tile_shape(ctx, sg, ks));
    else
        gen_cuda_collect(b, sg, ks, rp_tile_shape(ctx, sg, ks));
    if (b->oom)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory generating a pipeline kernel");
    return GX_OK;
}

/* Everything rp_generate_body reads, in a few hundred bytes: the memo key of a
 * kernel pair, so a repeated call (gx_scan and gx_filter build a new pipeline each
 * time) finds its kernels without generating the body.  Values that reach kernels
 * as arguments (pointers, sizes, strides, constants' values, offsets) stay out. */
void rp_body_key(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, gx__sbuf *b)
{
    rp_tshape sh = ks->term == RP_T_REDUCE ? (rp_tshape){0, 0, false, 0} : rp_tile_shape(ctx, sg, ks);
    gx__sb_printf(b, "%s|src %d %d c%d v%d f%d a%d|", gx__target_name(gx__ctx_target(ctx)), (int)sg->src, sg->nsrc,
                  sg->contig, sg->vec, sg->filtered, sg->arity);
    bd_key(&sg->pipe->bind, b);
    for (int k = 0; k < sg->nsrc; k++)
        gx__sb_printf(b, "%d,", (int)sg->sdt[k]);
    for (int c = 0; c < sg->arity; c++)
        gx__sb_printf(b, "%d;", (int)sg->dt[c]);
    if (sg->vr.ok)
        gx__sb_printf(b, "|r %lld,%lld", (long long)sg->vr.lo, (long long)sg->vr.hi);
    for (int s = 0; s < sg->nops; s++) {
        const rp_op *op = sg->ops[s];
        if (sg->er[s].ok)
            gx__sb_printf(b, "|e %lld,%lld", (long long)sg->er[s].lo, (long long)sg->er[s].hi);
        gx__sb_printf(b, "|op %d %d %d {%s}", (int)op->kind, op->cbase, op->nconst, op->text ? op->text : "");
        for (int j = 0; j < op->nconst; j++) {
            const char *nm = sg->pipe->cname[op->cbase + j];
            gx__sb_printf(b, " %s:%d", nm ? nm : "", (int)sg->pipe->cst[op->cbase + j].value.dtype);
        }
    }
    gx__sb_printf(b, "|t%d n%d %d,%d x%d i%d h%d {%s} {%s} {%s}|sh %d %d %d %d|%d\n", (int)ks->term, ks->nacc,
                  (int)ks->acc[0], (int)ks->acc[1], ks->exclusive, ks->has_init, ks->has_identity,
                  ks->identity ? ks->identity : "", ks->op_body ? ks->op_body : "", ks->lift ? ks->lift : "", sh.block,
                  sh.items, sh.packed, sh.minb, RP_BLOCK);
}

/* rp_body_key's fields as a binary key (gx__memo_bget), plus the entries' names and
 * the gx_define state get_kernels adds in front.  Why: printing the text key was 16%
 * of a warm gx_scan_into of 1024 f32 (CPU backend, perf); this copies the same
 * fields, and the text key is built only on a miss of the memo's front. */
void rp_body_bkey(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, const char *e1, const char *e2, gx__bkey *k)
{
    rp_tshape sh = ks->term == RP_T_REDUCE ? (rp_tshape){0, 0, false, 0} : rp_tile_shape(ctx, sg, ks);
    gx__userfns *u = gx__userfns_of(ctx);
    const int64_t head[] = {0x7270, (int64_t)gx__ctx_target(ctx), u ? u->count : 0, u ? (int64_t)u->code.len : 0,
                            (int64_t)sg->src, sg->nsrc, sg->contig, sg->vec, sg->filtered, sg->arity,
                            sg->vr.ok, sg->vr.ok ? sg->vr.lo : 0, sg->vr.ok ? sg->vr.hi : 0, sg->nops};
    gx__bkey_bytes(k, head, sizeof head);
    gx__bkey_str(k, e1);
    gx__bkey_str(k, e2);
    if (sg->pipe->bind.n > 0) { /* rare: the text form */
        gx__sbuf bk = {0};
        bd_key(&sg->pipe->bind, &bk);
        if (bk.oom)
            k->over = true;
        gx__bkey_str(k, bk.p ? bk.p : "");
        gx__sb_free(&bk);
    }
    for (int j = 0; j < sg->nsrc; j++)
        gx__bkey_int(k, (int64_t)sg->sdt[j]);
    for (int c = 0; c < sg->arity; c++)
        gx__bkey_int(k, (int64_t)sg->dt[c]);
    for (int s = 0; s < sg->nops; s++) {
        const rp_op *op = sg->ops[s];
        const int64_t f[] = {sg->er[s].ok, sg->er[s].ok ? sg->er[s].lo : 0, sg->er[s].ok ? sg->er[s].hi : 0,
                             (int64_t)op->kind, op->cbase, op->nconst};
        gx__bkey_bytes(k, f, sizeof f);
        gx__bkey_str(k, op->text ? op->text : "");
        for (int j = 0; j < op->nconst; j++) {
            gx__bkey_str(k, sg->pipe->cname[op->cbase + j]);
            gx__bkey_int(k, (int64_t)sg->pipe->cst[op->cbase + j].value.dtype);
        }
    }
    const int64_t t[] = {(int64_t)ks->term, ks->nacc, (int64_t)ks->acc[0], (int64_t)ks->acc[1], ks->exclusive,
                         ks->has_init, ks->has_identity, sh.block, sh.items, sh.packed, sh.minb, RP_BLOCK};
    gx__bkey_bytes(k, t, sizeof t);
    gx__bkey_str(k, ks->identity);
    gx__bkey_str(k, ks->op_body);
    gx__bkey_str(k, ks->lift);
}

gx_status rp_generate_head(gx_ctx *ctx, gx__sbuf *b)
{
    bool cuda = gen_cuda(ctx);
    gx__sb_puts(b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    if (!cuda)
        gx__sb_puts(b, "#include <string.h>\n");
    gx__userfns *u = gx__userfns_of(ctx);
    if (u && u->code.p)
        gx__sb_puts(b, u->code.p);
    if (b->oom)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory generating a pipeline kernel");
    return GX_OK;
}

void rp_fill_args(const rp_seg *sg, rp_args *a)
{
    memset(a, 0, sizeof *a);
    for (int k = 0; k < sg->nsrc && sg->src == RP_SRC_ARRAYS; k++) {
        a->src[k] = sg->sptr[k];
        a->sst[k] = sg->sstride[k];
    }
    a->lo = sg->lo;
    a->n = sg->n;
    a->seed = sg->seed;
    a->start = sg->start;
    a->step = sg->step;
    for (int s = 0; s < sg->nops; s++)
        a->eoff[s] = sg->eoff[s];
    for (int j = 0; j < sg->pipe->ncst; j++)
        a->c[j] = rp_const_arg(&sg->pipe->cst[j].value);
}

rp_cval rp_const_arg(const gx_scalar *c)
{
    rp_cval v;
    if (gx__dtype_is_float(c->dtype))
        v.f = c->v.f;
    else if (gx__dtype_is_signed(c->dtype))
        v.i = c->v.i;
    else
        v.u = c->v.u;
    return v;
}
