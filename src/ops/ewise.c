/* ewise.c -- the element-wise kernel generator (see ewise.h). */
#include "ops/ewise.h"
#include "jit/lambda.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ew_cval_of(const gx_scalar *c, ew_cval *v)
{
    if (gx__dtype_is_float(c->dtype))
        v->f = c->v.f;
    else if (c->dtype == GX_U64)
        v->u = c->v.u;
    else
        v->i = c->v.i;
}

/* ------------------------------------------------------------ broadcasting */

gx_status ew_broadcast_shape(int nin, gx_array *const *in, int *ndim, int64_t *shape)
{
    int nd = 0;
    for (int i = 0; i < nin; i++)
        nd = in[i]->ndim > nd ? in[i]->ndim : nd;
    for (int d = 0; d < nd; d++)
        shape[d] = 1;
    for (int i = 0; i < nin; i++) {
        int off = nd - in[i]->ndim;
        for (int d = 0; d < in[i]->ndim; d++) {
            int64_t s = in[i]->shape[d], *t = &shape[off + d];
            if (s == *t || s == 1)
                continue;
            if (*t == 1) {
                *t = s;
                continue;
            }
            char a[160], b[160];
            gx__shape_str(a, sizeof a, in[i]->ndim, in[i]->shape);
            gx__shape_str(b, sizeof b, nd, shape);
            return gx__err(GX_ERR_SHAPE,
                           "shapes do not broadcast: input %d has shape %s, which does not match %s at axis %d "
                           "(sizes must be equal or 1; reshape one input so the axes line up)",
                           i + 1, a, b, off + d);
        }
    }
    *ndim = nd;
    return GX_OK;
}

/* Strides of `a` seen through the output's shape: broadcast axes get stride 0. */
static void bcast_strides(const gx_array *a, int nd, const int64_t *shape, int64_t *st)
{
    int off = nd - a->ndim;
    for (int d = 0; d < nd; d++) {
        int k = d - off;
        st[d] = (k < 0 || (a->shape[k] == 1 && shape[d] != 1)) ? 0 : a->strides[k];
    }
}

/* Merges neighbouring axes that are contiguous in every operand and drops size-1
 * axes, so most real calls reach the one-dimensional fast path. */
static void ew_collapse(ew_plan *pl, int nd, const int64_t *shape)
{
    int nops = pl->nin + 1, out = 0;
    int64_t sh[GX_MAX_DIMS];
    int64_t st[EW_MAXOPS][GX_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        if (shape[d] == 1)
            continue;
        bool merge = out > 0;
        for (int o = 0; o < nops && merge; o++)
            merge = st[o][out - 1] == pl->args.st[o][d] * shape[d];
        if (merge) {
            sh[out - 1] *= shape[d];
            for (int o = 0; o < nops; o++)
                st[o][out - 1] = pl->args.st[o][d];
            continue;
        }
        sh[out] = shape[d];
        for (int o = 0; o < nops; o++)
            st[o][out] = pl->args.st[o][d];
        out++;
    }
    if (out == 0) { /* a single element */
        sh[0] = 1;
        for (int o = 0; o < nops; o++)
            st[o][0] = 0;
        out = 1;
    }
    pl->ndim = out;
    memcpy(pl->args.shape, sh, sizeof(int64_t) * (size_t)out);
    for (int o = 0; o < nops; o++)
        memcpy(pl->args.st[o], st[o], sizeof(int64_t) * (size_t)out);
    pl->contig = out == 1;
    for (int o = 0; o < nops && pl->contig; o++)
        pl->contig = st[o][0] == 0 || st[o][0] == 1;
    if (pl->contig && st[0][0] == 0 && sh[0] > 1)
        pl->contig = false; /* never write one element many times on the fast path */
}

/* Widest access (up to 16 bytes) that every streamed operand's address allows. */
static int ew_vec(const ew_plan *pl)
{
    if (!pl->contig)
        return 1;
    size_t maxsz = 1;
    for (int o = 0; o <= pl->nin; o++)
        if (pl->args.st[o][0] != 0 && gx_dtype_size(pl->dt[o]) > maxsz)
            maxsz = gx_dtype_size(pl->dt[o]);
    int vec = (int)(16 / maxsz);
    for (int o = 0; o <= pl->nin; o++) {
        if (pl->args.st[o][0] == 0)
            continue;
        size_t align = gx_dtype_size(pl->dt[o]) * (size_t)vec;
        while (vec > 1 && pl->args.p[o] % align) {
            vec /= 2;
            align = gx_dtype_size(pl->dt[o]) * (size_t)vec;
        }
    }
    return vec;
}

gx_status ew_plan_make(ew_plan *pl, gx_array *out, int nin, gx_array *const *in)
{
    memset(pl, 0, sizeof *pl);
    if (nin > EW_MAXIN)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "at most %d inputs per element-wise operation, got %d", EW_MAXIN, nin);
    pl->nin = nin;
    int nd = out->ndim;
    pl->dt[0] = out->dtype;
    pl->args.p[0] = (uint64_t)(uintptr_t)gx__array_ptr(out);
    memcpy(pl->args.st[0], out->strides, sizeof(int64_t) * (size_t)nd);
    for (int i = 0; i < nin; i++) {
        if (in[i]->ndim > nd)
            return gx__err(GX_ERR_SHAPE, "input %d has more dimensions (%d) than the output (%d)", i + 1, in[i]->ndim,
                           nd);
        for (int d = 0; d < in[i]->ndim; d++) {
            int64_t s = in[i]->shape[d], t = out->shape[nd - in[i]->ndim + d];
            if (s != t && s != 1) {
                char a[160], b[160];
                gx__shape_str(a, sizeof a, in[i]->ndim, in[i]->shape);
                gx__shape_str(b, sizeof b, nd, out->shape);
                return gx__err(GX_ERR_SHAPE, "input %d of shape %s does not broadcast to the output shape %s", i + 1, a,
                               b);
            }
        }
        pl->dt[i + 1] = in[i]->dtype;
        pl->args.p[i + 1] = (uint64_t)(uintptr_t)gx__array_ptr(in[i]);
        bcast_strides(in[i], nd, out->shape, pl->args.st[i + 1]);
    }
    pl->args.n = out->size;
    ew_collapse(pl, nd, out->shape);
    pl->vec = ew_vec(pl);
    return GX_OK;
}

/* ------------------------------------------------------------ code generation */

static bool is_cuda(gx_ctx *ctx) { return gx__target_is_cuda(ctx); }

static bool ew_binds(const ew_plan *pl) { return pl->bind && pl->bind->n > 0; }

/* Without bound arrays the text is what it always was (same kernels, same caches). */
static void gen_args_struct(gx__sbuf *b, const ew_plan *pl)
{
    bd_gen_types(b, pl->bind);
    gx__sb_printf(
        b,
        "typedef union { double f; int64_t i; uint64_t u; } gx_cval;\n"
        "typedef struct { uint64_t p[%d]; int64_t st[%d][%d]; int64_t shape[%d]; int64_t n; gx_cval c[%d];%s } "
        "gx_args;\n",
        EW_MAXOPS, EW_MAXOPS, GX_MAX_DIMS, GX_MAX_DIMS, EW_MAXCONST, ew_binds(pl) ? " gx_bargs b;" : "");
}

static const char *cval_field(gx_dtype t)
{
    if (gx__dtype_is_float(t))
        return "f";
    return gx__dtype_is_signed(t) ? "i" : "u";
}

/* Constants and base pointers, common to every variant. */
static void gen_prologue(gx__sbuf *b, const ew_plan *pl, const char *acc, const char *restrict_kw)
{
    for (int j = 0; j < pl->nconst; j++)
        gx__sb_printf(b, "  const %s c%d = (%s)%sc[%d].%s;\n", gx__dtype_vtype(pl->cdt[j]), j,
                      gx__dtype_vtype(pl->cdt[j]), acc, j, cval_field(pl->cdt[j]));
    gx__sb_printf(b, "  %s *%s o = (%s *)%sp[0];\n", gx__dtype_ctype(pl->dt[0]), restrict_kw,
                  gx__dtype_ctype(pl->dt[0]), acc);
    for (int i = 1; i <= pl->nin; i++)
        gx__sb_printf(b, "  const %s *%s in%d = (const %s *)%sp[%d];\n", gx__dtype_ctype(pl->dt[i]), restrict_kw, i,
                      gx__dtype_ctype(pl->dt[i]), acc, i);
    (void)b;
}

/* The cast applied to the stored value (halves: the rounding store). */
static const char *out_cast(gx_dtype t) { return gx__dtype_store(t); }

/* One element: bind v0.. from the given offsets expression and store into `lhs`. */
static void gen_element_to(gx__sbuf *b, const ew_plan *pl, const char *expr, const char *const *off, const char *lhs,
                           const char *ind)
{
    for (int i = 1; i <= pl->nin; i++) {
        char e[64], lb[96];
        gx__fmt(e, sizeof e, "in%d[%s]", i, off[i]);
        gx__sb_printf(b, "%s  const %s v%d = %s;\n", ind, gx__dtype_vtype(pl->dt[i]), i - 1,
                      gx__dtype_load(pl->dt[i], e, lb, sizeof lb));
    }
    gx__sb_printf(b, "%s  %s = %s(%s);\n", ind, lhs, out_cast(pl->dt[0]), expr);
}

static void gen_element(gx__sbuf *b, const ew_plan *pl, const char *expr, const char *const *off, const char *ind)
{
    char lhs[48];
    gx__fmt(lhs, sizeof lhs, "o[%s]", off[0]);
    gen_element_to(b, pl, expr, off, lhs, ind);
}

/* Elements per block of the fast sin/cos loop: its buffer stays in L1 (4 KB at most). */
#define EW_FAST_BLOCK 256

/* f32 sin and cos on the CPU use gx's own vectorisable sincos (gx__fsin_f32 in the
 * C prelude), accurate for |x| <= GX__SC_MAX_F32 only.  Each block is computed into
 * a buffer while the largest |x| is kept in gx__m, then copied out, or recomputed
 * with the libm helpers when an argument was beyond the limit, inf or NaN.  The
 * buffer leaves an in-place map's inputs intact for that redo.  sin(x) and cos(x) of
 * one x share the reduction (one inline helper, merged by the compiler).  On a
 * 2-core AVX-512 VM, sin(x)^2 + cos(x)^2 on 2^24 f32 went from 52-53% to 89-101%
 * of memcpy's bandwidth. */
static void gen_fast_loop(gx__sbuf *b, const ew_plan *pl, const char *expr, const char *const *off, const char *var,
                          const char *lo, const char *hi, bool follow, const char *ind)
{
    const char *inc = follow ? ", gx_idx++" : "";
    char lhs[48], in1[16], in2[16];
    gx__fmt(lhs, sizeof lhs, "gx__t[%s - gx__b]", var);
    gx__fmt(in1, sizeof in1, "%s  ", ind);
    gx__fmt(in2, sizeof in2, "%s    ", ind);
    gx__sb_printf(b, "%sfor (int64_t gx__b = %s; gx__b < %s; gx__b += %d) {\n", ind, lo, hi, EW_FAST_BLOCK);
    gx__sb_printf(b, "%sconst int64_t gx__e = %s - gx__b < %d ? %s : gx__b + %d;\n", in1, hi, EW_FAST_BLOCK, hi,
                  EW_FAST_BLOCK);
    if (follow)
        gx__sb_printf(b, "%sconst int64_t gx__i0 = gx_idx;\n", in1);
    gx__sb_printf(b, "%s%s gx__t[%d];\n%suint32_t gx__m = 0;\n", in1, gx__dtype_ctype(pl->dt[0]), EW_FAST_BLOCK, in1);
    gx__sb_puts(b,
                "#define gx_sin_f32(x) gx__fsin_f32((x), &gx__m)\n#define gx_cos_f32(x) gx__fcos_f32((x), &gx__m)\n");
    gx__sb_printf(b, "%sfor (int64_t %s = gx__b; %s < gx__e; %s++%s) {\n", in1, var, var, var, inc);
    gen_element_to(b, pl, expr, off, lhs, in1);
    gx__sb_printf(b, "%s}\n#undef gx_sin_f32\n#undef gx_cos_f32\n", in1);
    gx__sb_printf(b, "%sif (gx__m <= GX__SC_MAX_F32) {\n", in1);
    gx__sb_printf(b, "%sfor (int64_t %s = gx__b; %s < gx__e; %s++)\n", in2, var, var, var);
    gx__sb_printf(b, "%s  o[%s] = %s;\n%s} else {\n", in2, off[0], lhs, in1);
    if (follow)
        gx__sb_printf(b, "%sgx_idx = gx__i0;\n", in2);
    gx__sb_printf(b, "%sfor (int64_t %s = gx__b; %s < gx__e; %s++%s) {\n", in2, var, var, var, inc);
    gen_element(b, pl, expr, off, in2);
    gx__sb_printf(b, "%s}\n%s}\n%s}\n", in2, in1, ind);
}

static bool ew_fast_sincos(const char *expr) { return strstr(expr, "gx_sin_f32(") || strstr(expr, "gx_cos_f32("); }

/* The loop of `var` over [lo, hi); `follow`: gx_idx steps along (strided kernels). */
static void gen_loop(gx__sbuf *b, const ew_plan *pl, const char *expr, const char *const *off, const char *var,
                     const char *lo, const char *hi, bool follow, const char *ind)
{
    if (ew_fast_sincos(expr)) {
        gen_fast_loop(b, pl, expr, off, var, lo, hi, follow, ind);
        return;
    }
    gx__sb_printf(b, "%sfor (int64_t %s = %s; %s < %s; %s++%s) {\n", ind, var, lo, var, hi, var,
                  follow ? ", gx_idx++" : "");
    gen_element(b, pl, expr, off, ind);
    gx__sb_printf(b, "%s}\n", ind);
}

static void gen_cpu(gx__sbuf *b, const ew_plan *pl, const char *expr)
{
    /* GX__SC_WIDE: the compute-bound sincos loop prefers the widest vectors. */
    gx__sb_printf(b,
                  "%svoid gx_ew(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                  "  const gx_args *a = (const gx_args *)ap;\n  (void)thread;\n",
                  ew_fast_sincos(expr) ? "GX__SC_WIDE " : "");
    gen_prologue(b, pl, "a->", "restrict");
    char offs[EW_MAXOPS][32];
    const char *off[EW_MAXOPS] = {0}; /* GCC 11 -O3 cannot see every used slot set */
    if (pl->contig) {
        for (int o = 0; o <= pl->nin; o++) {
            gx__fmt(offs[o], sizeof offs[o], pl->args.st[o][0] ? "gx_idx" : "0");
            off[o] = offs[o];
        }
        gen_loop(b, pl, expr, off, "gx_idx", "begin", "end", false, "  ");
        gx__sb_puts(b, "}\n");
        return;
    }
    /* Odometer over the outer axes, a strided inner loop over the last one. */
    int D = pl->ndim;
    gx__sb_printf(b, "  int64_t co[%d], r = begin, gx_idx = begin;\n", D);
    for (int d = D - 1; d >= 0; d--)
        gx__sb_printf(b, "  co[%d] = r %% a->shape[%d]; r /= a->shape[%d];\n", d, d, d);
    gx__sb_puts(b, "  while (gx_idx < end) {\n");
    for (int o = 0; o <= pl->nin; o++) {
        gx__sb_printf(b, "    int64_t b%d = 0;\n", o);
        for (int d = 0; d < D - 1; d++)
            gx__sb_printf(b, "    b%d += co[%d] * a->st[%d][%d];\n", o, d, o, d);
        gx__fmt(offs[o], sizeof offs[o], "b%d + j * s%d", o, o);
        off[o] = offs[o];
        gx__sb_printf(b, "    const int64_t s%d = a->st[%d][%d];\n", o, o, D - 1);
    }
    gx__sb_printf(
        b, "    int64_t jend = a->shape[%d];\n    if (jend - co[%d] > end - gx_idx) jend = co[%d] + (end - gx_idx);\n",
        D - 1, D - 1, D - 1);
    char lo[32];
    gx__fmt(lo, sizeof lo, "co[%d]", D - 1);
    gen_loop(b, pl, expr, off, "j", lo, "jend", true, "    ");
    gx__sb_printf(b, "    co[%d] = 0;\n", D - 1);
    for (int d = D - 2; d >= 0; d--)
        gx__sb_printf(b, "    if (++co[%d] < a->shape[%d]) continue;\n    co[%d] = 0;\n", d, d, d);
    gx__sb_puts(b, "  }\n}\n");
}

/* Does a contiguous kernel stream any input array (not only broadcast scalars and
 * constants)?  Kernels that only write (fills) keep 4 vectors in flight per thread
 * and four waves of blocks striding: a fill of 2^28 f32 took 252.6 µs this way on an
 * H200, 319.3 as one pass of single vectors. */
static bool ew_reads(const ew_plan *pl)
{
    for (int i = 1; i <= pl->nin; i++)
        if (pl->args.st[i][0])
            return true;
    return false;
}

/* Tuning knobs for experiments (GX_EW_UNROLL); part of the source, so of the key. */
static int ew_unroll(const ew_plan *pl) { return gx__knob_int("GX_EW_UNROLL", ew_reads(pl) ? 1 : 4, 1, 16); }

/* Halves in the vector loop take a fast path: one check per vector that every f16
 * input is finite, then the bare hardware conversions (gx__ld_f16_fin, and
 * gx__cvt2_f16_fin for f16 results, which notes a NaN); a vector with an inf or NaN input or
 * a NaN result is redone through gx_ld_f16 / gx_st_f16, which keep NaN payloads bit
 * for bit.  Why: the per-element checks cost ~15 of the ~47 instructions an element
 * of sin(x)^2 + cos(x)^2 on f16 took (H100, ncu: issue slots 86% busy). Needs an
 * even vector width (the check reads the vector as 32-bit words). */
static bool ew_half_fast(const ew_plan *pl, int K)
{
    if (K % 2)
        return false;
    bool any = pl->dt[0] == GX_F16;
    for (int i = 1; i <= pl->nin; i++)
        any = any || (pl->args.st[i][0] && pl->dt[i] == GX_F16);
    return any;
}

/* The input loads of element k of a vector: v<i-1> from x<i>[u].e[k] (or the
 * broadcast bc<i>); `fast`: f16 inputs by the bare hardware conversion. */
static void gen_cuda_vec_loads(gx__sbuf *b, const ew_plan *pl, bool fast, const char *ind)
{
    for (int i = 1; i <= pl->nin; i++) {
        char e[32], lb[64];
        gx__fmt(e, sizeof e, pl->args.st[i][0] ? "x%d[u].e[k]" : "bc%d", i);
        if (fast && pl->args.st[i][0] && pl->dt[i] == GX_F16)
            gx__sb_printf(b, "%sconst float v%d = gx__ld_f16_fin(%s);\n", ind, i - 1, e);
        else
            gx__sb_printf(b, "%sconst %s v%d = %s;\n", ind, gx__dtype_vtype(pl->dt[i]), i - 1,
                          gx__dtype_load(pl->dt[i], e, lb, sizeof lb));
    }
}

/* The fast path into f16: elements in pairs, each pair rounded by one conversion
 * (cvt.rn.f16x2.f32) -- with the per-element conversion the f16 sin(x)^2 + cos(x)^2
 * map of 2^28 values ran at 89.4% of copy on an H100 (399.5 us). */
static void gen_cuda_vec_pairs(gx__sbuf *b, const ew_plan *pl, const char *expr, int K)
{
    gx__sb_printf(b, "          union { gxv0 v; uint32_t w[%d]; } gx_y;\n", K / 2);
    gx__sb_printf(b, "          auto gx_el = [&](const int k) {\n            const int64_t gx_idx = v * %d + k;\n"
                     "            (void)gx_idx;\n",
                  K);
    gen_cuda_vec_loads(b, pl, true, "            ");
    gx__sb_printf(b, "            return (%s);\n          };\n", expr);
    gx__sb_printf(b,
                  "#pragma unroll\n          for (int k = 0; k < %d; k += 2)\n"
                  "            gx_y.w[k / 2] = gx__cvt2_f16_fin(gx_el(k), gx_el(k + 1), gx_slow);\n"
                  "          y = gx_y.v;\n",
                  K);
}

/* The K elements of one vector (y.e[k] from x<i>[u].e[k]); `fast`: the half fast
 * path's conversions. */
static void gen_cuda_vec_elements(gx__sbuf *b, const ew_plan *pl, const char *expr, int K, bool fast)
{
    if (fast && pl->dt[0] == GX_F16) {
        gen_cuda_vec_pairs(b, pl, expr, K);
        return;
    }
    gx__sb_printf(b,
                  "#pragma unroll\n        for (int k = 0; k < %d; k++) {\n          const int64_t gx_idx = v * %d + "
                  "k;\n          (void)gx_idx;\n",
                  K, K);
    gen_cuda_vec_loads(b, pl, fast, "          ");
    gx__sb_printf(b, "          y.e[k] = %s(%s);\n        }\n", out_cast(pl->dt[0]), expr);
}

static void gen_cuda_contig(gx__sbuf *b, const ew_plan *pl, const char *expr)
{
    int K = pl->vec, U = ew_unroll(pl);
    for (int o = 0; o <= pl->nin; o++)
        if (pl->args.st[o][0] || o == 0) /* the output's type is always needed */
            gx__sb_printf(b, "struct __align__(%zu) gxv%d { %s e[%d]; };\n", gx_dtype_size(pl->dt[o]) * (size_t)K, o,
                          gx__dtype_ctype(pl->dt[o]), K);
    gx__sb_puts(b, "extern \"C\" __global__ void gx_ew(const gx_args a)\n{\n  GX_PDL_ENTER();\n");
    gen_prologue(b, pl, "a.", "__restrict__");
    gx__sb_printf(b, "  const int64_t n = a.n, nv = n / %d;\n", K);
    gx__sb_puts(b, "  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  const int64_t nth = (int64_t)gridDim.x * blockDim.x;\n");
    for (int i = 1; i <= pl->nin; i++)
        if (!pl->args.st[i][0])
            gx__sb_printf(b, "  const %s bc%d = in%d[0];\n", gx__dtype_ctype(pl->dt[i]), i, i);
    /* U independent vector loads per input before any use: enough bytes in flight. */
    gx__sb_printf(b, "  for (int64_t gv = tid; gv < nv; gv += nth * %d) {\n", U);
    for (int i = 1; i <= pl->nin; i++)
        if (pl->args.st[i][0])
            gx__sb_printf(b, "    gxv%d x%d[%d];\n", i, i, U);
    gx__sb_printf(b,
                  "#pragma unroll\n    for (int u = 0; u < %d; u++) {\n      const int64_t v = gv + u * nth;\n      if "
                  "(v < nv) {\n",
                  U);
    for (int i = 1; i <= pl->nin; i++)
        if (pl->args.st[i][0])
            gx__sb_printf(b, "        x%d[u] = ((const gxv%d *)in%d)[v];\n", i, i, i);
    gx__sb_printf(b,
                  "      }\n    }\n#pragma unroll\n    for (int u = 0; u < %d; u++) {\n      const int64_t v = gv + u "
                  "* nth;\n      if (v < nv) {\n",
                  U);
    gx__sb_puts(b, "        gxv0 y;\n");
    if (ew_half_fast(pl, K)) {
        gx__sb_puts(b, "        bool gx_slow = false;\n");
        for (int i = 1; i <= pl->nin; i++)
            if (pl->args.st[i][0] && pl->dt[i] == GX_F16)
                gx__sb_printf(b, "        gx_slow = gx_slow || !gx__h_finite(x%d[u]);\n", i);
        gx__sb_puts(b, "        if (!gx_slow) {\n");
        gen_cuda_vec_elements(b, pl, expr, K, true);
        gx__sb_puts(b, "        }\n        if (gx_slow) {\n");
        gen_cuda_vec_elements(b, pl, expr, K, false);
        gx__sb_puts(b, "        }\n");
    } else {
        gen_cuda_vec_elements(b, pl, expr, K, false);
    }
    /* Experiment knob GX_EW_STREAM=1: evict-first (streaming) stores of the output. */
    size_t vb = gx_dtype_size(pl->dt[0]) * (size_t)K;
    if (gx__knob_int("GX_EW_STREAM", 0, 0, 1) == 1 && (vb == 16 || vb == 8 || vb == 4))
        gx__sb_printf(b, "        __stcs((%s *)&((gxv0 *)o)[v], *(const %s *)&y);\n",
                      vb == 16  ? "uint4"
                      : vb == 8 ? "uint2"
                                : "unsigned",
                      vb == 16  ? "uint4"
                      : vb == 8 ? "uint2"
                                : "unsigned");
    else
        gx__sb_puts(b, "        ((gxv0 *)o)[v] = y;\n");
    gx__sb_puts(b, "      }\n    }\n  }\n");
    /* The tail that does not fill a vector. */
    gx__sb_printf(b, "  for (int64_t gx_idx = nv * %d + tid; gx_idx < n; gx_idx += nth) {\n", K);
    const char *off[EW_MAXOPS];
    for (int o = 0; o <= pl->nin; o++)
        off[o] = pl->args.st[o][0] ? "gx_idx" : "0";
    gen_element(b, pl, expr, off, "  ");
    gx__sb_puts(b, "  }\n}\n");
}

static void gen_cuda_strided(gx__sbuf *b, const ew_plan *pl, const char *expr)
{
    int D = pl->ndim;
    gx__sb_puts(b, "extern \"C\" __global__ void gx_ew(const gx_args a)\n{\n  GX_PDL_ENTER();\n");
    gen_prologue(b, pl, "a.", "");
    gx__sb_puts(
        b, "  const int64_t nth = (int64_t)gridDim.x * blockDim.x;\n"
           "  for (int64_t gx_idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; gx_idx < a.n; gx_idx += nth) {\n"
           "    int64_t r = gx_idx, c;\n");
    char offs[EW_MAXOPS][16];
    const char *off[EW_MAXOPS];
    for (int o = 0; o <= pl->nin; o++) {
        gx__sb_printf(b, "    int64_t f%d = 0;\n", o);
        gx__fmt(offs[o], sizeof offs[o], "f%d", o);
        off[o] = offs[o];
    }
    for (int d = D - 1; d >= 0; d--) {
        gx__sb_printf(b, "    c = r %% a.shape[%d]; r /= a.shape[%d];\n", d, d);
        for (int o = 0; o <= pl->nin; o++)
            gx__sb_printf(b, "    f%d += c * a.st[%d][%d];\n", o, o, d);
    }
    gen_element(b, pl, expr, off, "  ");
    gx__sb_puts(b, "  }\n}\n");
}

/* ------------------------------------------------------------ sin/cos fusion */

/* Length of the balanced argument text starting right after an opening '('. */
static size_t arg_len(const char *p)
{
    int depth = 1;
    size_t i = 0;
    for (; p[i] && depth; i++)
        depth += p[i] == '(' ? 1 : p[i] == ')' ? -1 : 0;
    return depth ? 0 : i - 1;
}

/* Replaces every "fn(arg)" in *text by `name`. */
static void replace_call(gx__sbuf *out, const char *text, const char *fn, const char *arg, size_t alen,
                         const char *name)
{
    size_t fl = strlen(fn);
    for (const char *p = text; *p;) {
        if (strncmp(p, fn, fl) == 0 && strncmp(p + fl, arg, alen) == 0 && p[fl + alen] == ')') {
            gx__sb_puts(out, name);
            p += fl + alen + 1;
            continue;
        }
        char c[2] = {*p++, 0};
        gx__sb_puts(out, c);
    }
}

/* True when `arg` is exactly an input's value read from an f16 array, "((float)(vN))":
 * its |x| <= 65504 (or inf, NaN) lies inside the range of gx's own sincos
 * (gx__sincos_core, prelude sincos_fast.h). */
static bool ew_arg_is_f16(const ew_plan *pl, const char *arg, size_t alen)
{
    char buf[32];
    int v = -1, used = -1;
    if (alen >= sizeof buf)
        return false;
    memcpy(buf, arg, alen);
    buf[alen] = 0;
    if (sscanf(buf, "((float)(v%d))%n", &v, &used) != 1 || used != (int)alen)
        return false;
    return v >= 0 && v < pl->nin && pl->dt[v + 1] == GX_F16;
}

/* A lone sin(x) or cos(x) of an f16 value: gx's own helper (one reduction without
 * conversions or a large-argument branch) instead of sinf / cosf. */
static void ew_lone_half_sincos(const ew_plan *pl, gx__sbuf *cur)
{
    static const char *const fn[2][2] = {{"gx_sin_f32(", "gx__sin_h("}, {"gx_cos_f32(", "gx__cos_h("}};
    for (int f = 0; f < 2; f++) {
        for (const char *p = strstr(cur->p, fn[f][0]); p; p = strstr(p + 1, fn[f][0])) {
            const char *arg = p + strlen(fn[f][0]);
            size_t alen = arg_len(arg);
            if (!alen || !ew_arg_is_f16(pl, arg, alen))
                continue;
            char *a = strndup(arg, alen), name[48];
            if (!a)
                return;
            gx__fmt(name, sizeof name, "%s%s)", fn[f][1], a);
            gx__sbuf t = {0};
            size_t at = (size_t)(p - cur->p);
            replace_call(&t, cur->p, fn[f][0], a, alen, name);
            free(a);
            gx__sb_free(cur);
            *cur = t;
            if (cur->oom || !cur->p)
                return;
            p = cur->p + at;
        }
    }
}

/* sin(x) and cos(x) of the same x, as in sin(x)^2 + cos(x)^2, cost one range
 * reduction if computed together: on CUDA the expression is rewritten to call
 * sincos once per such x (an immediately invoked C++ lambda inside the kernel).
 * Measured on an H200, 2^28 f32: 948 us with separate sinf/cosf, ~590 us fused.
 * An x that is an f16 value gets gx's own sincos (gx__sincos_core), whose range
 * covers every f16: CUDA's sincosf rounds with two quarter-rate conversions and
 * keeps a large-argument branch, which left the f16 map of 2^28 values
 * instruction-bound (H100: 506.8 us, 70% of copy; ncu issue slots 84%).
 * Returns NULL when there is nothing to rewrite. */
static char *ew_fuse_sincos(const ew_plan *pl, const char *expr)
{
    static const struct {
        const char *sin, *cos, *type, *call;
    } fam[2] = {
        {"gx_sin_f32(", "gx_cos_f32(", "float", "sincosf"},
        {"gx_sin_f64(", "gx_cos_f64(", "double", "sincos"},
    };
    gx__sbuf decl = {0}, cur = {0};
    gx__sb_puts(&cur, expr);
    int fused = 0;
    for (int f = 0; f < 2; f++) {
        for (const char *p = strstr(cur.p, fam[f].sin); p && fused < 8; p = strstr(p + 1, fam[f].sin)) {
            const char *arg = p + strlen(fam[f].sin);
            size_t alen = arg_len(arg);
            char *a = alen ? strndup(arg, alen) : NULL;
            gx__sbuf probe = {0};
            gx__sb_printf(&probe, "%s%s)", fam[f].cos, a ? a : "");
            bool pair = a && strstr(cur.p, probe.p);
            gx__sb_free(&probe);
            if (pair) {
                char sn[32], cn[32];
                gx__fmt(sn, sizeof sn, "gx_fs%d", fused);
                gx__fmt(cn, sizeof cn, "gx_fc%d", fused);
                const char *call = f == 0 && ew_arg_is_f16(pl, a, alen) ? "gx__sincos_core" : fam[f].call;
                gx__sb_printf(&decl, "%s %s, %s; %s(%s, &%s, &%s); ", fam[f].type, sn, cn, call, a, sn, cn);
                gx__sbuf t1 = {0}, t2 = {0};
                replace_call(&t1, cur.p, fam[f].sin, a, alen, sn);
                replace_call(&t2, t1.p, fam[f].cos, a, alen, cn);
                gx__sb_free(&t1);
                gx__sb_free(&cur);
                cur = t2;
                fused++;
                p = cur.p;
            }
            free(a);
            if (!p)
                break;
        }
    }
    const size_t before = cur.len;
    ew_lone_half_sincos(pl, &cur);
    char *res = NULL;
    if ((fused || cur.len != before) && !decl.oom && !cur.oom && cur.p) {
        gx__sbuf r = {0};
        if (fused)
            gx__sb_printf(&r, "([&]() { %sreturn %s; }())", decl.p, cur.p);
        else
            gx__sb_puts(&r, cur.p);
        res = r.oom ? NULL : r.p;
        if (!res)
            gx__sb_free(&r);
    }
    gx__sb_free(&decl);
    gx__sb_free(&cur);
    return res;
}

gx_status ew_source(gx_ctx *ctx, const ew_plan *pl, const char *expr, const char *user_code, gx__sbuf *b)
{
    bool cuda = is_cuda(ctx);
    gx__sb_puts(b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    if (user_code)
        gx__sb_puts(b, user_code);
    gx__sb_puts(b, "\n#line 1 \"gx-generated\"\n");
    gen_args_struct(b, pl);
    bd_gen(b, pl->bind, cuda, cuda ? "a.b." : "a->b.", "gx_idx"); /* every loop names its output index gx_idx */
    char *fused = cuda ? ew_fuse_sincos(pl, expr) : NULL;
    if (fused)
        expr = fused;
    if (!cuda)
        gen_cpu(b, pl, expr);
    else if (pl->contig)
        gen_cuda_contig(b, pl, expr);
    else
        gen_cuda_strided(b, pl, expr);
    free(fused);
    if (b->oom)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory generating a kernel");
    return GX_OK;
}

/* ------------------------------------------------------------ running */

static gx_status ew_launch(gx_ctx *ctx, const ew_plan *pl, const gx__kernel *k)
{
    int64_t work = pl->contig ? (pl->args.n + pl->vec - 1) / pl->vec : pl->args.n;
    /* Contiguous kernels: one vector per input and thread, 128 threads a block, one
     * pass (the grid covers the array; threads stride only past 2^31 blocks).  Same
     * run on an H200 at 2^28 f32 (scripts/knob-sweep): 2x+y 735.6 µs (4379 GB/s)
     * and sin^2+cos^2 526.0 against 779.1 and 549.3 with the former four waves of
     * 256-thread blocks striding with 4 vectors in flight (torch.add(out=) 739.7,
     * torch.compile 559.5); 2^24: 50.2 and 37.1 against 51.7 and 39.4.  On an H100
     * 2x+y 1053 against 1113 µs.  Strided kernels and kernels that read no array
     * (ew_reads) keep four waves of resident blocks striding over the rest (91% of
     * copy for a strided x*x+1 on an H200). */
    bool one_pass = pl->contig && ew_reads(pl);
    int64_t block = one_pass ? 128 : k->block > 0 ? k->block : 256;
    block = gx__knob_int("GX_EW_BLOCK", (int)block, 32, 1024); /* experiments: threads per block */
    int64_t want = (work + block - 1) / block;
    int64_t full = !one_pass && k->min_grid > 0 ? 4 * (int64_t)k->min_grid : 0x7fffffff;
    const int gm = gx__knob_int("GX_EW_GRID", -1, 0, 1 << 20); /* experiments: grid = min_grid * this, 0 = one pass */
    if (gm > 0 && k->min_grid > 0)
        full = (int64_t)k->min_grid * gm;
    else if (gm == 0)
        full = 0x7fffffff;
    size_t asz = ew_binds(pl) ? sizeof pl->args : offsetof(ew_args, b);
    return gx__launch_1d(ctx, k, &pl->args, asz, pl->args.n, 64, want < full ? want : full, block);
}

/* Everything ew_source's output depends on, short of the prelude (fixed per build):
 * repeated calls then skip generating and hashing the whole source. */
static void ew_memo_key(gx_ctx *ctx, const ew_plan *pl, const char *expr, const char *user_code, gx__sbuf *k)
{
    gx__sb_printf(k, "ew1|%s|%d|%d|%d|%d|%d|%zu|", gx__target_name(gx__ctx_target(ctx)), pl->nin, pl->nconst, pl->ndim,
                  pl->contig, pl->vec, user_code ? strlen(user_code) : 0);
    for (int o = 0; o <= pl->nin; o++)
        gx__sb_printf(k, "%d%c", (int)pl->dt[o], pl->contig && pl->args.st[o][0] == 0 ? 'b' : 's');
    for (int j = 0; j < pl->nconst; j++)
        gx__sb_printf(k, "c%d", (int)pl->cdt[j]);
    const char *u = gx__knob("GX_EW_UNROLL"), *st = gx__knob("GX_EW_STREAM");
    bd_key(pl->bind, k);
    gx__sb_printf(k, "|%s|%s|%s", u ? u : "", st ? st : "", expr);
}

/* ew_memo_key's fields as a binary key (gx__memo_bget); plans with bound arrays
 * keep to the text key only.  Formatting the text key was ~31% of a warm
 * gx_map_into's host time (1024 f32, CPU backend, one thread, perf). */
static void ew_bkey(gx_ctx *ctx, const ew_plan *pl, const char *expr, const char *user_code, gx__bkey *k)
{
    k->len = 0;
    k->over = pl->bind && pl->bind->n > 0;
    const int64_t nums[] = {0x6577, (int64_t)gx__ctx_target(ctx), pl->nin, pl->nconst, pl->ndim, pl->contig, pl->vec,
                            user_code ? (int64_t)strlen(user_code) : -1};
    gx__bkey_bytes(k, nums, sizeof nums);
    for (int o = 0; o <= pl->nin; o++)
        gx__bkey_int(k, (int64_t)pl->dt[o] * 2 + (pl->contig && pl->args.st[o][0] == 0));
    for (int j = 0; j < pl->nconst; j++)
        gx__bkey_int(k, (int64_t)pl->cdt[j]);
    gx__bkey_str(k, gx__knob("GX_EW_UNROLL"));
    gx__bkey_str(k, gx__knob("GX_EW_STREAM"));
    gx__bkey_str(k, expr);
}

gx_status ew_run(gx_ctx *ctx, ew_plan *pl, const char *expr, const char *user_code, const char *label)
{
    if (pl->args.n == 0)
        return GX_OK;
    if (ew_table_wanted(ctx, pl, expr, user_code))
        return ew_table_run(ctx, pl, expr, user_code, label);
    return ew_run_direct(ctx, pl, expr, user_code, label);
}

gx_status ew_run_direct(gx_ctx *ctx, ew_plan *pl, const char *expr, const char *user_code, const char *label)
{
    gx__kernel k;
    gx__bkey bk;
    ew_bkey(ctx, pl, expr, user_code, &bk);
    gx_status s = GX_OK;
    if (gx__memo_bget(ctx, &bk, &k, sizeof k)) {
        ctx->cstats.mem_hits++;
    } else {
        gx__sbuf key = {0}, src = {0};
        ew_memo_key(ctx, pl, expr, user_code, &key);
        s = key.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
        if (s == GX_OK && gx__memo_get(ctx, key.p, &k, sizeof k)) {
            ctx->cstats.mem_hits++; /* an in-memory hit, found without hashing the source */
        } else if (s == GX_OK) {
            s = ew_source(ctx, pl, expr, user_code, &src);
            if (s == GX_OK)
                s = gx__kernel_get(ctx, src.p, label, "gx_ew", &k);
            if (s == GX_OK)
                gx__memo_put(ctx, key.p, &k, sizeof k);
        }
        if (s == GX_OK)
            gx__memo_bput(ctx, &bk, &k, sizeof k);
        gx__sb_free(&key);
        gx__sb_free(&src);
    }
    if (s == GX_OK) {
        gx__range_push(label); /* NVTX: Nsight Systems shows the operation's name */
        s = ew_launch(ctx, pl, &k);
        gx__range_pop();
    }
    return s;
}
