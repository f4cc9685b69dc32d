/* index.c -- gather, scatter, scatter-reduce, mask assignment, where (gx/index.h).
 *
 * The kernels work on dense arrays only: views are copied to dense arrays first
 * (and a scattered x written back), which keeps one simple kernel per operation.
 *  - take: one output element per thread; the flat case (x 1-d or flattened) loads
 *    16 bytes of indices at once on the GPU; x's reads are random.
 *  - scatter on the GPU: one idx position per thread, combined into x with a native
 *    atomic (add, integer max/min) or a compare-and-swap loop (any other operator;
 *    1- and 2-byte dtypes swap their containing 32-bit word).  Deterministic float
 *    sums go through 64-bit fixed point (see gx_scatter_reduce's contract): max of
 *    |values|, integer atomics, one rounding per element at the end.
 *  - scatter on the CPU: the kernel lets every worker own a range of x's elements
 *    and walk the whole of idx, combining only into its own range, so each element
 *    sees its updates in idx order: the sequential loop's result whatever the thread
 *    count (np.add.at's, bit for bit; gx_put's last value wins).  It runs on one
 *    worker today (see scat_run: more only added work when x fits in the cache).
 *  - mask assignment and where: element-wise maps (gx_map_into / gx_map).
 * Bounds are checked with the per-context flag of bounds.h; the host then reads the
 * offending index back from idx, so the message is exact. */
#include "jit/lambda.h"
#include "ops/bounds.h"
#include "ops/opname.h"
#include "ops/userfns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Must match the struct emitted by ix_args_text. */
typedef struct ix_args {
    uint64_t x, idx, val, flag, fx, sp, mx; /* device addresses */
    int64_t n;     /* work items: take: output elements; GPU scatter: idx size; CPU scatter: x size */
    int64_t m;     /* idx elements */
    int64_t axn;   /* the extent indices are checked against */
    int64_t inner; /* take: elements of x after the axis */
    int64_t logm;  /* fixed point: ceil(log2(m)) */
} ix_args;

static const char ix_args_text[] = "typedef struct { uint64_t x, idx, val, flag, fx, sp, mx; int64_t n, m, axn, inner, "
                                   "logm; } gx_args;\n";

/* The bounds report: the smallest position wins; its thread writes the rest. */
static const char ix_oob_c[] =
    "static void gx_oob(int64_t *f, int64_t pos, int64_t v, int64_t n, int64_t tag)\n{\n"
    "  int64_t old = __atomic_load_n(f, __ATOMIC_RELAXED);\n"
    "  while (pos < old)\n"
    "    if (__atomic_compare_exchange_n(f, &old, pos, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {\n"
    "      f[1] = v; f[2] = n; f[3] = tag; return;\n    }\n}\n";
static const char ix_oob_cuda[] =
    "static __device__ void gx_oob(long long *f, long long pos, long long v, long long n, long long tag)\n{\n"
    "  if (atomicMin(f, pos) > pos) { f[1] = v; f[2] = n; f[3] = tag; }\n}\n";

typedef enum ix_kind { IX_TAKE, IX_SCATTER, IX_FX_INIT, IX_FX_MAX, IX_FX_ADD, IX_FX_FIN } ix_kind;

/* How a scatter combines into x on the GPU. */
typedef enum ix_comb { IXC_ASSIGN, IXC_ATOMIC_ADD, IXC_ATOMIC_MAX, IXC_ATOMIC_MIN, IXC_CAS } ix_comb;

/* One kernel's recipe: everything its source depends on. */
typedef struct ix_spec {
    ix_kind kind;
    gx_dtype xt, it;  /* x's (and values', result's) dtype; idx's dtype */
    bool check;       /* bounds check */
    bool flat;        /* take: output position == idx position */
    int vec;          /* take, flat, GPU: indices per vector load */
    ix_comb comb;     /* GPU scatter */
    const char *expr; /* the combination over gx_l (x's value) and gx_r (the incoming one) */
} ix_spec;

static bool ix_cuda(gx_ctx *ctx) { return gx__target_is_cuda(ctx); }

/* ------------------------------------------------------------ source text */

/* `int64_t i` from ip[j], checked when the spec says: on failure, report and run `fail`. */
static void gen_index(gx__sbuf *b, const ix_spec *sp, const char *j, const char *raw, const char *fail, const char *ind)
{
    const char *ic = gx__dtype_ctype(sp->it);
    if (gx__dtype_is_signed(sp->it)) {
        gx__sb_printf(b, "%sconst %s gx_raw = %s;\n%sint64_t i = (int64_t)gx_raw;\n%sif (i < 0) i += a->axn;\n", ind,
                      ic, raw, ind, ind);
        if (sp->check)
            gx__sb_printf(b,
                          "%sif ((uint64_t)i >= (uint64_t)a->axn) { gx_oob(gx_flag, %s, (int64_t)gx_raw, a->axn, 0); "
                          "%s }\n",
                          ind, j, fail);
    } else {
        gx__sb_printf(b, "%sconst %s gx_raw = %s;\n%sconst int64_t i = (int64_t)gx_raw;\n", ind, ic, raw, ind);
        if (sp->check)
            gx__sb_printf(b,
                          "%sif ((uint64_t)gx_raw >= (uint64_t)a->axn) { gx_oob(gx_flag, %s, (int64_t)gx_raw, "
                          "a->axn, 0); %s }\n",
                          ind, j, fail);
    }
}

/* The pointers a kernel uses (only those: NVRTC warns about unused ones). */
static void gen_ptrs(gx__sbuf *b, const ix_spec *sp, bool cuda)
{
    const char *xc = gx__dtype_ctype(sp->xt), *ic = gx__dtype_ctype(sp->it);
    const char *flag = cuda ? "long long" : "int64_t";
    ix_kind k = sp->kind;
    bool indexed = k == IX_TAKE || k == IX_SCATTER || k == IX_FX_ADD;
    if (indexed && sp->check)
        gx__sb_printf(b, "  %s *gx_flag = (%s *)a->flag;\n", flag, flag);
    if (indexed)
        gx__sb_printf(b, "  const %s *ip = (const %s *)a->idx;\n", ic, ic);
    if (k == IX_TAKE)
        gx__sb_printf(b, "  const %s *xp = (const %s *)a->x;\n  %s *op = (%s *)a->val;\n", xc, xc, xc, xc);
    if (k == IX_TAKE && sp->check) /* what a failed check yields */
        gx__sb_printf(b, "  const %s gx_z = {0};\n", xc);
    if (k == IX_SCATTER || k == IX_FX_FIN)
        gx__sb_printf(b, "  %s *xp = (%s *)a->x;\n", xc, xc);
    if (k == IX_SCATTER || k == IX_FX_MAX || k == IX_FX_ADD)
        gx__sb_printf(b, "  const %s *vp = (const %s *)a->val;\n", xc, xc);
}

/* The element of take at output position t (general: t -> (outer, j, inner)). */
static void gen_take_elem(gx__sbuf *b, const ix_spec *sp, const char *t, const char *dst, const char *ind)
{
    char raw[64], fail[96];
    if (sp->flat) {
        gx__fmt(raw, sizeof raw, "ip[%s]", t);
        gx__fmt(fail, sizeof fail, "%s = gx_z; continue;", dst);
        gen_index(b, sp, t, raw, fail, ind);
        gx__sb_printf(b, "%s%s = xp[i];\n", ind, dst);
        return;
    }
    gx__sb_printf(b,
                  "%sconst int64_t gx_k = %s %% a->inner, gx_r = %s / a->inner, gx_j = gx_r %% a->m, gx_o = gx_r / "
                  "a->m;\n",
                  ind, t, t);
    gx__fmt(fail, sizeof fail, "%s = gx_z; continue;", dst);
    gen_index(b, sp, "gx_j", "ip[gx_j]", fail, ind);
    gx__sb_printf(b, "%s%s = xp[(gx_o * a->axn + i) * a->inner + gx_k];\n", ind, dst);
}

static void gen_take_c(gx__sbuf *b, const ix_spec *sp)
{
    gx__sb_puts(b, "void gx_ix(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                   "  const gx_args *a = (const gx_args *)ap;\n  (void)thread;\n");
    gen_ptrs(b, sp, false);
    gx__sb_puts(b, "  for (int64_t t = begin; t < end; t++) {\n");
    gen_take_elem(b, sp, "t", "op[t]", "    ");
    gx__sb_puts(b, "  }\n}\n");
}

/* CUDA kernels open with the same names as the C ones (a->..., t). */
static void gen_cuda_head(gx__sbuf *b)
{
    gx__sb_puts(b, "extern \"C\" __global__ void gx_ix(const gx_args aa)\n{\n  GX_PDL_ENTER();\n  const gx_args *a = &aa;\n"
                   "  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  const int64_t nth = (int64_t)gridDim.x * blockDim.x;\n");
}

static void gen_take_cuda(gx__sbuf *b, const ix_spec *sp)
{
    const char *xc = gx__dtype_ctype(sp->xt), *ic = gx__dtype_ctype(sp->it);
    int V = sp->flat ? sp->vec : 1;
    if (V > 1)
        gx__sb_printf(b, "struct __align__(%zu) gxvi { %s e[%d]; };\nstruct __align__(%zu) gxvo { %s e[%d]; };\n",
                      gx_dtype_size(sp->it) * (size_t)V, ic, V, gx_dtype_size(sp->xt) * (size_t)V, xc, V);
    gen_cuda_head(b);
    gen_ptrs(b, sp, true);
    if (V > 1) {
        /* V indices in one 16-byte load, V results in one store. */
        gx__sb_printf(b, "  const int64_t nv = a->n / %d;\n", V);
        gx__sb_puts(b, "  for (int64_t g = tid; g < nv; g += nth) {\n"
                       "    const gxvi iv = ((const gxvi *)ip)[g];\n    gxvo y;\n");
        gx__sb_printf(b, "#pragma unroll\n    for (int k = 0; k < %d; k++) {\n      const int64_t t = g * %d + k;\n", V,
                      V);
        gen_index(b, sp, "t", "iv.e[k]", "y.e[k] = gx_z; continue;", "      ");
        gx__sb_puts(b, "      y.e[k] = xp[i];\n    }\n    ((gxvo *)op)[g] = y;\n  }\n");
        gx__sb_printf(b, "  for (int64_t t = nv * %d + tid; t < a->n; t += nth) {\n", V);
    } else {
        gx__sb_puts(b, "  for (int64_t t = tid; t < a->n; t += nth) {\n");
    }
    gen_take_elem(b, sp, "t", "op[t]", "    ");
    gx__sb_puts(b, "  }\n}\n");
}

/* "(int8_t)": the conversion of a combination's value to x's dtype (none for
 * complex: C cannot cast to a struct, and the combination is of that type already). */
static const char *cast_of(gx_dtype t)
{
    static char buf[GX_DTYPE_COUNT][24];
    if ((unsigned)t >= GX_DTYPE_COUNT)
        return "";
    if (!buf[t][0])
        gx__fmt(buf[t], sizeof buf[t], "(%s)", gx__dtype_ctype(t));
    return buf[t];
}

/* CPU scatter: this worker owns x[begin, end) and walks all of idx in order. */
static void gen_scatter_c(gx__sbuf *b, const ix_spec *sp)
{
    gx__sb_puts(b, "void gx_ix(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                   "  const gx_args *a = (const gx_args *)ap;\n  (void)thread;\n");
    gen_ptrs(b, sp, false);
    /* Every worker sees every bad index; gx_oob keeps the smallest position. */
    gx__sb_puts(b, "  for (int64_t j = 0; j < a->m; j++) {\n");
    gen_index(b, sp, "j", "ip[j]", "continue;", "    ");
    gx__sb_puts(b, "    if (i < begin || i >= end) continue;\n");
    if (sp->comb == IXC_ASSIGN)
        gx__sb_puts(b, "    xp[i] = vp[j];\n");
    else
        gx__sb_printf(b, "    { const %s gx_l = xp[i], gx_r = vp[j]; xp[i] = %s(%s); }\n", gx__dtype_ctype(sp->xt),
                      gx__dtype_is_complex(sp->xt) ? "" : cast_of(sp->xt), sp->expr);
    gx__sb_puts(b, "  }\n}\n");
}

/* The CUDA type a native atomic takes for dtype t. */
static const char *atomic_ctype(gx_dtype t, ix_comb c)
{
    switch (t) {
    case GX_F32: return "float";
    case GX_F64: return "double";
    case GX_I32: return "int";
    case GX_U32: return "unsigned";
    case GX_I64: return c == IXC_ATOMIC_ADD ? "unsigned long long" : "long long";
    case GX_U64: return "unsigned long long";
    default: return NULL;
    }
}

/* x[i] = x[i] (expr) v with a compare-and-swap loop on the element's word (4 or 8
 * bytes) or on the 32-bit word that contains it (1 or 2 bytes). */
static void gen_cas(gx__sbuf *b, const ix_spec *sp, const char *ind)
{
    const char *xc = gx__dtype_ctype(sp->xt);
    size_t sz = gx_dtype_size(sp->xt);
    if (sz >= 4) {
        const char *w = sz == 4 ? "unsigned" : "unsigned long long";
        gx__sb_printf(b, "%s{ %s *w = (%s *)(xp + i); %s old = *w, as;\n", ind, w, w, w);
        gx__sb_printf(b, "%s  do { as = old; union { %s w; %s t; } u; u.w = as; const %s gx_l = u.t, gx_r = v;\n", ind,
                      w, xc, xc);
        gx__sb_printf(b, "%s    u.t = (%s)(%s); old = atomicCAS(w, as, u.w); } while (old != as); }\n", ind, xc,
                      sp->expr);
        return;
    }
    const char *ut = sz == 1 ? "unsigned char" : "unsigned short";
    gx__sb_printf(b,
                  "%s{ const unsigned long long ad = (unsigned long long)(xp + i);\n"
                  "%s  unsigned *w = (unsigned *)(ad & ~3ull); const unsigned sh = (unsigned)(ad & 3ull) * 8u;\n"
                  "%s  const unsigned msk = %uu << sh; unsigned old = *w, as;\n",
                  ind, ind, ind, sz == 1 ? 0xffu : 0xffffu);
    gx__sb_printf(b, "%s  do { as = old; const %s gx_l = (%s)(%s)(as >> sh), gx_r = v;\n", ind, xc, xc, ut);
    gx__sb_printf(b,
                  "%s    const unsigned nb = (unsigned)(%s)(%s)(%s);\n"
                  "%s    old = atomicCAS(w, as, (as & ~msk) | (nb << sh)); } while (old != as); }\n",
                  ind, ut, xc, sp->expr, ind);
}

static void gen_scatter_cuda(gx__sbuf *b, const ix_spec *sp)
{
    gen_cuda_head(b);
    gen_ptrs(b, sp, true);
    gx__sb_puts(b, "  for (int64_t j = tid; j < a->m; j += nth) {\n");
    gen_index(b, sp, "j", "ip[j]", "continue;", "    ");
    gx__sb_printf(b, "    const %s v = vp[j];\n", gx__dtype_ctype(sp->xt));
    const char *at = atomic_ctype(sp->xt, sp->comb);
    switch (sp->comb) {
    case IXC_ASSIGN: gx__sb_puts(b, "    xp[i] = v;\n"); break;
    case IXC_ATOMIC_ADD:
        if (gx__dtype_is_complex(sp->xt))
            gx__sb_puts(b, "    atomicAdd(&xp[i].re, v.re); atomicAdd(&xp[i].im, v.im);\n");
        else
            gx__sb_printf(b, "    atomicAdd((%s *)(xp + i), (%s)v);\n", at, at);
        break;
    case IXC_ATOMIC_MAX:
    case IXC_ATOMIC_MIN:
        gx__sb_printf(b, "    %s((%s *)(xp + i), (%s)v);\n", sp->comb == IXC_ATOMIC_MAX ? "atomicMax" : "atomicMin", at,
                      at);
        break;
    case IXC_CAS: gen_cas(b, sp, "    "); break;
    }
    gx__sb_puts(b, "  }\n}\n");
}

/* ------------------------------------------------------------ fixed-point sums (CUDA) */

/* The shift s (see gx/index.h) from the largest finite |value| and ceil(log2(m)),
 * kept inside double's range both ways. */
static const char ix_fx_scale[] =
    "static __device__ double gx_fx_scale(const gx_args *a, int inv)\n{\n"
    "  const double mx = __longlong_as_double(*(const long long *)a->mx);\n"
    "  int e = 0;\n  if (mx > 0) (void)frexp(mx, &e); /* mx < 2^e */\n"
    "  int s = 62 - e - (int)a->logm;\n  if (s > 1000) s = 1000;\n  if (s < -1000) s = -1000;\n"
    "  return ldexp(1.0, inv ? -s : s);\n}\n";

static void gen_fx_cuda(gx__sbuf *b, const ix_spec *sp)
{
    gx__sb_puts(b, ix_fx_scale);
    gen_cuda_head(b);
    gen_ptrs(b, sp, true);
    if (sp->kind != IX_FX_MAX)
        gx__sb_puts(b, "  long long *fx = (long long *)a->fx; unsigned *spc = (unsigned *)a->sp;\n");
    switch (sp->kind) {
    case IX_FX_INIT: /* n = max(x size, 1): the max word is cleared even for an empty x */
        gx__sb_puts(b, "  for (int64_t t = tid; t < a->n; t += nth) {\n"
                       "    if (t < a->axn) { fx[t] = 0; spc[t] = 0u; }\n"
                       "    if (t == 0) *(unsigned long long *)a->mx = 0ull;\n  }\n}\n");
        break;
    case IX_FX_MAX: /* non-negative doubles order as their bits */
        gx__sb_puts(b, "  double m = 0.0;\n  for (int64_t j = tid; j < a->m; j += nth) {\n"
                       "    const double v = fabs((double)vp[j]);\n    if (isfinite(v) && v > m) m = v;\n  }\n"
                       "  for (int o = 16; o > 0; o >>= 1) m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));\n"
                       "  if ((threadIdx.x & 31) == 0 && m > 0.0)\n"
                       "    atomicMax((unsigned long long *)a->mx, (unsigned long long)__double_as_longlong(m));\n}\n");
        break;
    case IX_FX_ADD:
        gx__sb_puts(b, "  const double sc = gx_fx_scale(a, 0);\n  for (int64_t j = tid; j < a->m; j += nth) {\n");
        gen_index(b, sp, "j", "ip[j]", "continue;", "    ");
        gx__sb_puts(b, "    const double v = (double)vp[j];\n"
                       "    if (isfinite(v)) {\n      const long long q = __double2ll_rn(v * sc);\n"
                       "      if (q) atomicAdd((unsigned long long *)(fx + i), (unsigned long long)q);\n"
                       "    } else\n      atomicOr(spc + i, v != v ? 4u : v > 0 ? 1u : 2u);\n  }\n}\n");
        break;
    default: /* IX_FX_FIN: one rounding per element */
        gx__sb_printf(
            b,
            "  const double isc = gx_fx_scale(a, 1);\n  for (int64_t t = tid; t < a->axn; t += nth) {\n"
            "    const unsigned s = spc[t]; const long long q = fx[t];\n    if (s == 0u && q == 0) continue;\n"
            "    double add = (double)q * isc;\n"
            "    if ((s & 4u) || (s & 3u) == 3u) add = __longlong_as_double(0x7ff8000000000000ll);\n"
            "    else if (s & 1u) add = __longlong_as_double(0x7ff0000000000000ll);\n"
            "    else if (s & 2u) add = __longlong_as_double((long long)0xfff0000000000000ull);\n"
            "    xp[t] = (%s)((double)xp[t] + add);\n  }\n}\n",
            gx__dtype_ctype(sp->xt));
        break;
    }
}

static gx_status ix_source(gx_ctx *ctx, const ix_spec *sp, gx__sbuf *b)
{
    bool cuda = ix_cuda(ctx);
    gx__sb_puts(b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    gx__userfns *u = sp->expr ? gx__userfns_of(ctx) : NULL;
    if (u && u->code.p)
        gx__sb_puts(b, u->code.p);
    gx__sb_puts(b, "\n#line 1 \"gx-generated\"\n");
    gx__sb_puts(b, ix_args_text);
    gx__sb_puts(b, cuda ? ix_oob_cuda : ix_oob_c);
    if (sp->kind == IX_TAKE)
        (cuda ? gen_take_cuda : gen_take_c)(b, sp);
    else if (sp->kind == IX_SCATTER)
        (cuda ? gen_scatter_cuda : gen_scatter_c)(b, sp);
    else
        gen_fx_cuda(b, sp);
    return b->oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory generating a kernel") : GX_OK;
}

/* ------------------------------------------------------------ running */

static gx_status ix_kernel(gx_ctx *ctx, const ix_spec *sp, const char *label, gx__kernel *k)
{
    gx__sbuf key = {0}, src = {0};
    gx__sb_printf(&key, "ix1|%s|%d|%d|%d|%d|%d|%d|%d|%zu|%s", gx__target_name(gx__ctx_target(ctx)), (int)sp->kind,
                  (int)sp->xt, (int)sp->it, sp->check, sp->flat, sp->vec, (int)sp->comb,
                  sp->expr ? (gx__userfns_of(ctx) ? (size_t)gx__userfns_of(ctx)->count : 0) : 0,
                  sp->expr ? sp->expr : "");
    gx_status s = key.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
    if (s == GX_OK && gx__memo_get(ctx, key.p, k, sizeof *k)) {
        ctx->cstats.mem_hits++;
    } else if (s == GX_OK) {
        s = ix_source(ctx, sp, &src);
        if (s == GX_OK)
            s = gx__kernel_get(ctx, src.p, label, "gx_ix", k);
        if (s == GX_OK)
            gx__memo_put(ctx, key.p, k, sizeof *k);
    }
    gx__sb_free(&key);
    gx__sb_free(&src);
    return s;
}

/* One launch over a->n items: 256-thread blocks covering them on the GPU; on the CPU
 * the range split over the workers, `work` elements of effort per item. */
static gx_status ix_launch(gx_ctx *ctx, const ix_spec *sp, const char *label, const ix_args *a, int64_t items,
                           int64_t work, int cpu_threads)
{
    if (items <= 0)
        return GX_OK;
    gx__kernel k;
    GX__CHECK(ix_kernel(ctx, sp, label, &k));
    gx__launch l;
    memset(&l, 0, sizeof l);
    l.args = a;
    l.args_size = sizeof *a;
    l.n = items;
    l.cpu_align = 64;
    l.cpu_work = work;
    l.cpu_threads = cpu_threads;
    int64_t grid = (items + 255) / 256;
    l.grid[0] = (unsigned)(grid > 0x7fffffff ? 0x7fffffff : grid);
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = 256;
    l.block[1] = l.block[2] = 1;
    l.pdl = k.pdl;
    gx__range_push(label);
    gx_status s = ctx->be.iface->launch.run(&ctx->be, k.fn, &l);
    gx__range_pop();
    return s;
}

/* ------------------------------------------------------------ inputs */

static gx_status ix_own(gx_ctx *ctx, const gx_array *a, const char *fn, const char *name)
{
    char what[96];
    gx__fmt(what, sizeof what, "%s (%s)", fn, name);
    GX__CHECK(gx__array_check(a, what));
    if (a->ctx != ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %s belongs to another context than ctx; copy it through the host",
                       fn, name);
    return GX_OK;
}

static gx_status ix_check_idx(gx_ctx *ctx, const gx_array *idx, const char *fn)
{
    GX__CHECK(ix_own(ctx, idx, fn, "idx"));
    if (!gx__dtype_is_int(idx->dtype))
        return gx__err(GX_ERR_DTYPE,
                       "%s: idx is %s; indices need an integer dtype (i8..i64, u8..u64): convert with gx_array_clone",
                       fn, gx_dtype_name(idx->dtype));
    return GX_OK;
}

/* A dense array with a's contents: a itself (*owned false) when it is dense and does
 * not share storage with `avoid`, else a dense copy. */
static gx_status ix_dense(gx_array *a, const gx_array *avoid, gx_array **d, bool *owned)
{
    *owned = false;
    *d = a;
    if (gx__array_contiguous(a) && (!avoid || avoid->st != a->st))
        return GX_OK;
    GX__CHECK(gx_array_clone(a, GX_DTYPE_DEFAULT, d));
    *owned = true;
    return GX_OK;
}

/* values broadcast to idx's shape in dtype t, dense, not sharing x's storage. */
static gx_status ix_values(gx_ctx *ctx, gx_array *values, const gx_array *idx, gx_dtype t, const gx_array *x,
                           const char *fn, gx_array **d, bool *owned)
{
    GX__CHECK(ix_own(ctx, values, fn, "values"));
    *owned = false;
    *d = values;
    if (values->dtype == t && gx__same_shape(values, idx) && gx__array_contiguous(values) && values->st != x->st)
        return GX_OK;
    GX__CHECK(gx__into_dtype(fn, values->dtype, t, 0));
    for (int k = 0; k < values->ndim; k++) { /* broadcasting goes toward idx's shape only */
        int di = idx->ndim - values->ndim + k;
        if (di < 0 ? values->shape[k] != 1 : values->shape[k] != 1 && values->shape[k] != idx->shape[di]) {
            char a[160], b[160];
            gx__shape_str(a, sizeof a, values->ndim, values->shape);
            gx__shape_str(b, sizeof b, idx->ndim, idx->shape);
            return gx__err(GX_ERR_SHAPE, "%s: values of shape %s do not broadcast to idx's shape %s", fn, a, b);
        }
    }
    GX__CHECK(gx_array_empty(ctx, t, idx->ndim, idx->shape, d));
    gx_status s = gx_map_into(ctx, "v -> v", 1, &values, NULL, *d);
    if (s != GX_OK) {
        gx_array_release(*d);
        *d = NULL;
        return gx__err_prefix(s, "%s: converting values", fn);
    }
    *owned = true;
    return GX_OK;
}

/* ------------------------------------------------------------ bounds */

/* ceil(log2(m)) for m >= 1. */
static int64_t ix_log2ceil(int64_t m)
{
    int64_t l = 0;
    while (l < 63 && ((int64_t)1 << l) < m)
        l++;
    return l;
}

/* The message of GX_ERR_INDEX: the index is read back from idx (exact). */
static gx_status ix_index_error(gx_ctx *ctx, const char *fn, const gx_array *idx, const int64_t *flag,
                                const char *axis_text)
{
    int64_t pos = flag[0];
    unsigned char raw[8] = {0};
    size_t isz = gx_dtype_size(idx->dtype);
    char val[32];
    if (ctx->be.iface->mem.d2h(&ctx->be, raw, (const char *)gx__array_ptr(idx) + (size_t)pos * isz, isz) == GX_OK) {
        double f = gx__dtype_to_f64(idx->dtype, raw);
        if (idx->dtype == GX_U64) {
            uint64_t u;
            memcpy(&u, raw, 8);
            gx__fmt(val, sizeof val, "%llu", (unsigned long long)u);
        } else if (idx->dtype == GX_I64) {
            int64_t v;
            memcpy(&v, raw, 8);
            gx__fmt(val, sizeof val, "%lld", (long long)v);
        } else
            gx__fmt(val, sizeof val, "%lld", (long long)f);
    } else
        gx__fmt(val, sizeof val, "%lld", (long long)flag[1]);
    long long n = (long long)flag[2];
    char valid[80];
    if (n == 0)
        gx__fmt(valid, sizeof valid, "none: it is empty");
    else if (gx__dtype_is_signed(idx->dtype))
        gx__fmt(valid, sizeof valid, "-%lld..%lld, negatives counting from the end", n, n - 1);
    else
        gx__fmt(valid, sizeof valid, "0..%lld", n - 1);
    return gx__err(GX_ERR_INDEX,
                   "%s: idx holds %s at position %lld (flat, row-major), out of range for %s of size %lld (valid: "
                   "%s); fix the index (opts->unchecked is only for indices known to be in range)",
                   fn, val, (long long)pos, axis_text, n, valid);
}

/* ------------------------------------------------------------ take */

/* The result shape of np.take and the geometry (outer, axis extent, inner). */
static gx_status take_shape(const char *fn, const gx_array *x, const gx_array *idx, int axis, int *nd, int64_t *shape,
                            int64_t *axn, int64_t *inner, int *ax)
{
    if (axis == GX_ALL_AXES) {
        *nd = idx->ndim;
        memcpy(shape, idx->shape, sizeof(int64_t) * (size_t)idx->ndim);
        *axn = x->size;
        *inner = 1;
        *ax = -1;
        return GX_OK;
    }
    int a = axis < 0 ? axis + x->ndim : axis;
    if (a < 0 || a >= x->ndim)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: axis %d is out of range for a %d-d x (use 0..%d, -1..-%d, or GX_ALL_AXES for x flattened)",
                       fn, axis, x->ndim, x->ndim - 1, x->ndim);
    if (x->ndim - 1 + idx->ndim > GX_MAX_DIMS)
        return gx__err(GX_ERR_SHAPE, "%s: the result would have %d axes (at most GX_MAX_DIMS = %d)", fn,
                       x->ndim - 1 + idx->ndim, GX_MAX_DIMS);
    int k = 0;
    *inner = 1;
    for (int d = 0; d < a; d++)
        shape[k++] = x->shape[d];
    for (int d = 0; d < idx->ndim; d++)
        shape[k++] = idx->shape[d];
    for (int d = a + 1; d < x->ndim; d++) {
        shape[k++] = x->shape[d];
        *inner *= x->shape[d];
    }
    *nd = k;
    *axn = x->shape[a];
    *ax = a;
    return GX_OK;
}

/* Indices per 16-byte load for the flat GPU gather: the idx and out addresses must
 * allow it. */
static int take_vec(const gx_array *idx, const gx_array *out)
{
    size_t isz = gx_dtype_size(idx->dtype), osz = gx_dtype_size(out->dtype);
    int v = (int)(16 / isz);
    uintptr_t pi = (uintptr_t)gx__array_ptr(idx), po = (uintptr_t)gx__array_ptr(out);
    while (v > 1 && (pi % (isz * (size_t)v) || po % (osz * (size_t)v) || osz * (size_t)v > 32))
        v /= 2;
    return v;
}

/* Runs the gather of dense x and idx into dense out (caller holds no lock). */
static gx_status take_run(gx_ctx *ctx, const char *fn, gx_array *x, gx_array *idx, gx_array *out, int64_t axn,
                          int64_t inner, int ax, bool check)
{
    if (out->size == 0)
        return GX_OK;
    ix_spec sp = {IX_TAKE, x->dtype, idx->dtype, check, false, 1, IXC_ASSIGN, NULL};
    sp.flat = inner == 1 && out->size == idx->size;
    if (sp.flat && ix_cuda(ctx))
        sp.vec = take_vec(idx, out);
    ix_args a = {0};
    a.x = (uint64_t)(uintptr_t)gx__array_ptr(x);
    a.idx = (uint64_t)(uintptr_t)gx__array_ptr(idx);
    a.val = (uint64_t)(uintptr_t)gx__array_ptr(out);
    a.n = out->size;
    a.m = idx->size;
    a.axn = axn;
    a.inner = inner;
    gx__lock(ctx);
    void *flag = NULL;
    gx_status s = check ? gx__oob_begin(ctx, &flag) : GX_OK;
    a.flag = (uint64_t)(uintptr_t)flag;
    if (s == GX_OK)
        s = ix_launch(ctx, &sp, fn, &a, sp.vec > 1 ? (a.n + sp.vec - 1) / sp.vec : a.n, 1, 0);
    int64_t fw[4] = {INT64_MAX, 0, 0, 0}; /* GCC 13 -O3 cannot see it set when read */
    if (s == GX_OK && check)
        s = gx__oob_end(ctx, flag, fw);
    if (s == GX_OK && check && fw[0] != INT64_MAX) {
        char axt[64];
        if (ax < 0)
            gx__fmt(axt, sizeof axt, "x flattened");
        else
            gx__fmt(axt, sizeof axt, "axis %d of x", ax);
        s = ix_index_error(ctx, fn, idx, fw, axt);
    }
    gx__unlock(ctx);
    return s;
}

/* The shared body of gx_take / gx_take_into: `into` NULL makes a new array. */
static gx_status take_impl(const char *fn, gx_ctx *ctx, gx_array *x, gx_array *idx, int axis, const gx_index_opts *opts,
                           gx_array *into, gx_array **out)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(ix_own(ctx, x, fn, "x"));
    GX__CHECK(ix_check_idx(ctx, idx, fn));
    if (x->ndim == 0 && axis != GX_ALL_AXES)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: x is 0-d; take from it with axis = GX_ALL_AXES", fn);
    int nd = 0, ax = -1;
    int64_t shape[GX_MAX_DIMS] = {0}, axn = 0, inner = 1;
    GX__CHECK(take_shape(fn, x, idx, axis, &nd, shape, &axn, &inner, &ax));
    bool check = !(opts && opts->unchecked);
    if (into) {
        GX__CHECK(ix_own(ctx, into, fn, "out"));
        if (into->ndim != nd || memcmp(into->shape, shape, sizeof(int64_t) * (size_t)nd) != 0) {
            char a[160], b[160];
            gx__shape_str(a, sizeof a, into->ndim, into->shape);
            gx__shape_str(b, sizeof b, nd, shape);
            return gx__err(GX_ERR_SHAPE, "%s: out has shape %s but the result has shape %s", fn, a, b);
        }
        GX__CHECK(gx__into_dtype(fn, x->dtype, into->dtype, opts ? opts->exact_dtype : 0));
    }
    gx_array *xd = NULL, *id = NULL, *r = NULL;
    bool xo = false, io = false;
    bool direct =
        into && into->dtype == x->dtype && gx__array_contiguous(into) && into->st != x->st && into->st != idx->st;
    gx_status s = ix_dense(x, NULL, &xd, &xo);
    if (s == GX_OK)
        s = ix_dense(idx, NULL, &id, &io);
    if (s == GX_OK)
        s = direct ? GX_OK : gx_array_empty(ctx, x->dtype, nd, shape, &r);
    if (s == GX_OK)
        s = take_run(ctx, fn, xd, id, direct ? into : r, axn, inner, ax, check);
    if (into && !direct && (s == GX_OK || s == GX_ERR_INDEX)) {
        /* The converting copy happens on an index error too (the contract says what out
         * holds then); its own success must not wipe the index message. */
        char *msg = s == GX_OK ? NULL : strdup(gx_last_error());
        gx_status t = gx_map_into(ctx, "v -> v", 1, &r, NULL, into);
        if (s == GX_OK)
            s = t;
        else if (msg)
            gx__err(s, "%s", msg);
        free(msg);
    }
    if (xo)
        gx_array_release(xd);
    if (io)
        gx_array_release(id);
    if (s == GX_OK && !into)
        *out = r;
    else
        gx_array_release(r);
    return s;
}

gx_status gx_take(gx_ctx *ctx, gx_array *x, gx_array *idx, int axis, const gx_index_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_take: out must not be NULL");
    *out = NULL;
    return take_impl("gx_take", ctx, x, idx, axis, opts, NULL, out);
}

gx_status gx_take_into(gx_ctx *ctx, gx_array *x, gx_array *idx, int axis, const gx_index_opts *opts, gx_array *out)
{
    GX__ARG(out, "gx_take_into: out must not be NULL");
    return take_impl("gx_take_into", ctx, x, idx, axis, opts, out, NULL);
}

/* ------------------------------------------------------------ scatter */

/* The combination of an operator for x's dtype t: spec fields comb and expr.  *lam
 * receives the emitted expression's storage (freed by the caller). */
static gx_status scat_op(gx_ctx *ctx, const char *fn, const char *op, gx_dtype t, ix_spec *sp, gx__sbuf *lam)
{
    GX__ARG(op, "%s: op is NULL (pass \"+\", \"*\", \"max\", \"min\" or a lambda \"a, b -> ...\")", fn);
    opn_kind k = opn_parse(op);
    const char *text = op;
    bool cplx = gx__dtype_is_complex(t);
    if (k != OPN_NONE) {
        if (k != OPN_ADD && k != OPN_MUL && k != OPN_MAX && k != OPN_MIN)
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "%s: operator \"%s\" is not a scatter operator; use \"+\", \"*\", \"max\", \"min\" or a "
                           "lambda \"a, b -> ...\"",
                           fn, op);
        if (cplx && k != OPN_ADD)
            return gx__err(GX_ERR_DTYPE, "%s: x is %s: complex data takes \"+\" only", fn, gx_dtype_name(t));
        const char *why = NULL;
        text = opn_lambda(k, t, &why);
        if (!text)
            return gx__err(GX_ERR_DTYPE, "%s: \"%s\" on x of dtype %s: %s", fn, op, gx_dtype_name(t), why);
    } else {
        int np = 0;
        GX__CHECK(lam_parse_arity(op, &np));
        if (np != 2)
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "%s: an operator lambda takes two parameters (\"a, b -> ...\"); \"%s\" takes %d", fn, op,
                           np);
        if (cplx)
            return gx__err(GX_ERR_DTYPE, "%s: x is %s: complex data takes \"+\" only", fn, gx_dtype_name(t));
    }
    gx_dtype at[2] = {t, t};
    gx__lock(ctx);
    gx__userfns *u = gx__userfns_of(ctx);
    lam_env env = {text, 2, at, NULL, 0, u ? u->sigs : NULL, u ? u->count : 0, NULL, 0};
    lam_lambda *l = NULL;
    gx_status s = lam_compile(&env, &l);
    gx__unlock(ctx);
    if (s != GX_OK)
        return gx__err_prefix(s, "%s", fn);
    if (gx__dtype_is_complex(lam_result_type(l)) && !cplx) {
        lam_free(l);
        return gx__err(GX_ERR_DTYPE, "%s: the lambda \"%s\" gives a complex value for real x", fn, op);
    }
    const char *pn[2] = {"gx_l", "gx_r"};
    s = lam_emit(l, pn, NULL, lam);
    lam_free(l);
    if (s == GX_OK && lam->oom)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    GX__CHECK(s);
    sp->expr = lam->p;
    /* The GPU's native atomics where one exists for the pair. */
    bool native = atomic_ctype(t, IXC_ATOMIC_ADD) != NULL;
    sp->comb = IXC_CAS;
    if (k == OPN_ADD && (native || cplx))
        sp->comb = IXC_ATOMIC_ADD;
    else if ((k == OPN_MAX || k == OPN_MIN) && native && gx__dtype_is_int(t))
        sp->comb = k == OPN_MAX ? IXC_ATOMIC_MAX : IXC_ATOMIC_MIN;
    if (ix_cuda(ctx) && cplx && t == GX_C128 && sp->comb == IXC_CAS)
        return gx__err(GX_ERR_DTYPE, "%s: c128 has no 16-byte atomic on the GPU", fn);
    return GX_OK;
}

/* Does the GPU give scheduling-independent results for this combination? */
static bool scat_order_free(const ix_spec *sp, opn_kind k)
{
    if (sp->comb == IXC_ASSIGN)
        return false;
    if (!gx__dtype_is_float(sp->xt) && !gx__dtype_is_complex(sp->xt))
        return true; /* integer arithmetic wraps: any order gives one result */
    return k == OPN_MAX || k == OPN_MIN;
}

/* The fixed-point sum on the GPU (x: f32 or f64, dense). */
static gx_status scat_fixed(gx_ctx *ctx, const char *fn, ix_spec *sp, ix_args *a)
{
    int64_t nb = a->axn;
    size_t bytes = (size_t)nb * 12 + 16;
    void *scr = NULL;
    GX__CHECK(gx__scratch_alloc(ctx, bytes, &scr));
    a->fx = (uint64_t)(uintptr_t)scr;
    a->mx = a->fx + (uint64_t)nb * 8;
    a->sp = a->mx + 8;
    a->logm = ix_log2ceil(a->m);
    static const ix_kind steps[4] = {IX_FX_INIT, IX_FX_MAX, IX_FX_ADD, IX_FX_FIN};
    gx_status s = GX_OK;
    for (int i = 0; i < 4 && s == GX_OK; i++) {
        sp->kind = steps[i];
        int64_t items = steps[i] == IX_FX_INIT ? (nb > 0 ? nb : 1) : steps[i] == IX_FX_FIN ? nb : a->m;
        if (steps[i] == IX_FX_MAX && items > (int64_t)256 * 4096)
            items = (int64_t)256 * 4096; /* a grid that strides: one atomic per warp */
        a->n = items;
        s = ix_launch(ctx, sp, fn, a, items, 1, 0);
    }
    /* The scratch is only read by the kernels above: waiting for them before the
     * pool may hand it out again keeps it simple (gx__oob_end waits when checked). */
    if (s == GX_OK)
        s = ctx->be.iface->stream.sync(&ctx->be);
    gx__scratch_free(ctx, scr, bytes);
    return s;
}

/* The scatter into dense x of dense idx and values (x's dtype). */
static gx_status scat_run(gx_ctx *ctx, const char *fn, ix_spec *sp, gx_array *x, gx_array *idx, gx_array *vals,
                          bool fixed)
{
    if (idx->size == 0)
        return GX_OK;
    ix_args a = {0};
    a.x = (uint64_t)(uintptr_t)gx__array_ptr(x);
    a.idx = (uint64_t)(uintptr_t)gx__array_ptr(idx);
    a.val = (uint64_t)(uintptr_t)gx__array_ptr(vals);
    a.m = idx->size;
    a.axn = x->size;
    a.inner = 1;
    gx__lock(ctx);
    void *flag = NULL;
    gx_status s = sp->check ? gx__oob_begin(ctx, &flag) : GX_OK;
    a.flag = (uint64_t)(uintptr_t)flag;
    if (s == GX_OK && fixed)
        s = scat_fixed(ctx, fn, sp, &a);
    else if (s == GX_OK && ix_cuda(ctx))
        s = ix_launch(ctx, sp, fn, &a, a.m, 1, 0);
    else if (s == GX_OK) /* CPU: items are x's elements, each worker walks all of idx. One worker: every
                          * worker reads all of idx, so more of them only add work where x fits in
                          * the cache (2^24 values into 2^20 f32 bins, 2 cores: 123 ms on two
                          * workers, 77 ms on one; np.add.at 101 ms). */
        s = ix_launch(ctx, sp, fn, &a, x->size > 0 ? x->size : 1, x->size > 0 ? (a.m + x->size - 1) / x->size : a.m, 1);
    int64_t fw[4] = {INT64_MAX, 0, 0, 0}; /* GCC 13 -O3 cannot see it set when read */
    if (s == GX_OK && sp->check)
        s = gx__oob_end(ctx, flag, fw);
    if (s == GX_OK && sp->check && fw[0] != INT64_MAX)
        s = ix_index_error(ctx, fn, idx, fw, "x flattened");
    gx__unlock(ctx);
    return s;
}

/* A GPU scatter into 1- or 2-byte elements swaps the aligned 32-bit word holding each
 * element (gen_cas), so the last element's word can reach up to 3 bytes past x's
 * storage (compute-sanitizer's memcheck caught it on a 3-element i16 x; wrapped
 * memory may end right there).  Such scatters run on a copy whose storage has a word
 * to spare, written back after. */
static gx_status ix_padded(gx_array *x, gx_array **d, bool *owned)
{
    *owned = false;
    *d = NULL;
    int64_t room = x->size + 4, n = x->size;
    gx_array *big = NULL, *v = NULL;
    GX__CHECK(gx__array_new(x->ctx, x->dtype, 1, &room, &big));
    gx_slice sl = {0, n, 1};
    gx_status s = gx_array_view(big, &sl, &v);
    gx_array_release(big); /* the view keeps the storage */
    if (s == GX_OK)
        s = gx_array_reshape(v, x->ndim, x->shape, d);
    gx_array_release(v);
    if (s == GX_OK)
        s = gx_array_copy_into(x, *d);
    if (s != GX_OK) {
        gx_array_release(*d);
        *d = NULL;
        return s;
    }
    *owned = true;
    return GX_OK;
}

/* Shared body of gx_put (op NULL) and gx_scatter_reduce. */
static gx_status scat_impl(const char *fn, gx_ctx *ctx, const char *op, gx_array *idx, gx_array *values,
                           const gx_index_opts *opts, gx_array *x)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(ix_own(ctx, x, fn, "x"));
    GX__CHECK(ix_check_idx(ctx, idx, fn));
    ix_spec sp = {IX_SCATTER, x->dtype, idx->dtype, !(opts && opts->unchecked), true, 1, IXC_ASSIGN, NULL};
    gx__sbuf lam = {0};
    opn_kind k = op ? opn_parse(op) : OPN_NONE;
    gx_status s = op ? scat_op(ctx, fn, op, x->dtype, &sp, &lam) : GX_OK;
    bool det = opts && opts->deterministic && ix_cuda(ctx) && op;
    bool fixed = det && k == OPN_ADD && (x->dtype == GX_F32 || x->dtype == GX_F64);
    if (s == GX_OK && det && !fixed && !scat_order_free(&sp, k))
        s = gx__err(GX_ERR_UNSUPPORTED,
                    "%s: opts->deterministic on a GPU covers \"+\" into f32/f64, integers and max/min; \"%s\" on %s "
                    "depends on the order of the atomics (run it on the CPU backend, which is always in idx order)",
                    fn, op, gx_dtype_name(x->dtype));
    gx_array *xd = NULL, *id = NULL, *vd = NULL;
    bool xo = false, io = false, vo = false;
    bool subword = ix_cuda(ctx) && gx_dtype_size(x->dtype) < 4 && sp.comb != IXC_ASSIGN;
    if (s == GX_OK)
        s = subword ? ix_padded(x, &xd, &xo) : ix_dense(x, NULL, &xd, &xo);
    if (s == GX_OK)
        s = ix_dense(idx, x, &id, &io);
    if (s == GX_OK)
        s = ix_values(ctx, values, idx, x->dtype, x, fn, &vd, &vo);
    if (s == GX_OK)
        s = scat_run(ctx, fn, &sp, xd, id, vd, fixed);
    if (s == GX_OK && xo) /* x was a view: write the result back */
        s = gx_array_copy_into(xd, x);
    if (xo)
        gx_array_release(xd);
    if (io)
        gx_array_release(id);
    if (vo)
        gx_array_release(vd);
    gx__sb_free(&lam);
    return s;
}

gx_status gx_put(gx_ctx *ctx, gx_array *idx, gx_array *values, const gx_index_opts *opts, gx_array *x)
{
    GX__ARG(x && idx && values, "gx_put: idx, values and x must not be NULL");
    return scat_impl("gx_put", ctx, NULL, idx, values, opts, x);
}

gx_status gx_scatter_reduce(gx_ctx *ctx, const char *op, gx_array *idx, gx_array *values, const gx_index_opts *opts,
                            gx_array *x)
{
    GX__ARG(x && idx && values, "gx_scatter_reduce: idx, values and x must not be NULL");
    GX__ARG(op, "gx_scatter_reduce: op is NULL (pass \"+\", \"*\", \"max\", \"min\" or a lambda \"a, b -> ...\")");
    return scat_impl("gx_scatter_reduce", ctx, op, idx, values, opts, x);
}

/* ------------------------------------------------------------ scatter along an axis */

/* gx_index_reduce's shapes: x has an axis, idx is 1-d, values is x's shape with
 * extent len(idx) on the axis.  Splits x as (outer, n, inner). */
static gx_status ir_check(const char *fn, const gx_array *x, int *axis, const gx_array *idx, const gx_array *values,
                          int64_t *n, int64_t *inner)
{
    char xs[160], is[160], vs[160];
    gx__shape_str(xs, sizeof xs, x->ndim, x->shape);
    gx__shape_str(is, sizeof is, idx->ndim, idx->shape);
    gx__shape_str(vs, sizeof vs, values->ndim, values->shape);
    if (x->ndim == 0)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: x has shape () and no axis to index along (use gx_scatter_reduce "
                                                "on a flattened x)", fn);
    int ax = *axis < 0 ? *axis + x->ndim : *axis;
    if (ax < 0 || ax >= x->ndim)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: axis %d is out of range for x of shape %s (use 0..%d or -1..-%d)",
                       fn, *axis, xs, x->ndim - 1, x->ndim);
    if (idx->ndim != 1)
        return gx__err(GX_ERR_SHAPE, "%s: idx has shape %s; it must be 1-d (one index per slice of values)", fn, is);
    bool same = values->ndim == x->ndim;
    for (int d = 0; same && d < x->ndim; d++)
        same = values->shape[d] == (d == ax ? idx->shape[0] : x->shape[d]);
    if (!same)
        return gx__err(GX_ERR_SHAPE,
                       "%s: values has shape %s; with x of shape %s, axis %d and idx of shape %s it must be x's "
                       "shape with extent %lld on axis %d",
                       fn, vs, xs, ax, is, (long long)idx->shape[0], ax);
    *axis = ax;
    *n = x->shape[ax];
    *inner = 1;
    for (int d = ax + 1; d < x->ndim; d++)
        *inner *= x->shape[d];
    return GX_OK;
}

/* Every index in [-n, n): else GX_ERR_INDEX naming the first offending position. */
static gx_status ir_range(gx_ctx *ctx, const char *fn, gx_array *idx, int axis, int64_t n, const gx_array *x)
{
    gx_const c = GX_CONST("n", GX_SCALAR_I64(n));
    gx_map_opts mo = {.consts = &c, .nconsts = 1};
    const char *bad = gx__dtype_is_signed(idx->dtype) ? "v -> i64(v) < -n || i64(v) >= n" : "v -> u64(v) >= u64(n)";
    gx_array *flags = NULL;
    GX__CHECK(gx_map(ctx, bad, 1, &idx, &mo, &flags));
    gx_scalar any;
    int64_t at = 0;
    gx_status s = gx_findmax(flags, &any, &at);
    gx_array_release(flags);
    if (s != GX_OK || !any.v.i)
        return s;
    gx_slice sl = {at, at + 1, 1};
    gx_array *one = NULL, *wide = NULL;
    int64_t v = 0;
    s = gx_array_view(idx, &sl, &one);
    if (s == GX_OK)
        s = gx_array_clone(one, GX_I64, &wide);
    if (s == GX_OK)
        s = gx_array_to_host(wide, &v, sizeof v);
    gx_array_release(one);
    gx_array_release(wide);
    GX__CHECK(s);
    char xs[160];
    gx__shape_str(xs, sizeof xs, x->ndim, x->shape);
    return gx__err(GX_ERR_INDEX,
                   "%s: idx[%lld] = %lld is out of range for axis %d of x (shape %s, size %lld on that axis); "
                   "indices run from -%lld to %lld (negative ones count from the end); nothing was written",
                   fn, (long long)at, (long long)v, axis, xs, (long long)n, (long long)n, (long long)n - 1);
}

/* The flat (row-major) position in x of every element of values. */
static gx_status ir_flat(gx_ctx *ctx, gx_array *idx, const gx_array *values, int64_t n, int64_t inner,
                         gx_array **out)
{
    *out = NULL;
    int64_t len = idx->shape[0];
    gx_const c[3] = {GX_CONST("n", GX_SCALAR_I64(n)), GX_CONST("len", GX_SCALAR_I64(len)),
                     GX_CONST("inner", GX_SCALAR_I64(inner))};
    gx_bind b = GX_BIND("idx", idx);
    /* p's slice is (p / inner) % len: always in range, so the read needs no check. */
    gx_map_opts mo = {.consts = c, .nconsts = 3, .arrays = &b, .narrays = 1, .unchecked = 1};
    const char *lam = "p -> (p / (len * inner)) * (n * inner) + "
                      "(i64(idx[(p / inner) % len]) < 0 ? i64(idx[(p / inner) % len]) + n : "
                      "i64(idx[(p / inner) % len])) * inner + p % inner";
    gx_array *it = NULL, *shaped = NULL;
    gx_status s = gx_array_iota(ctx, GX_I64, values->size, 0, 1, &it);
    if (s == GX_OK)
        s = gx_array_reshape(it, values->ndim, values->shape, &shaped);
    if (s == GX_OK)
        s = gx_map(ctx, lam, 1, &shaped, &mo, out);
    gx_array_release(it);
    gx_array_release(shaped);
    return s;
}

gx_status gx_index_reduce(gx_ctx *ctx, const char *op, gx_array *x, int axis, gx_array *idx, gx_array *values,
                          const gx_index_opts *opts)
{
    const char *fn = "gx_index_reduce";
    GX__ARG(x && idx && values, "gx_index_reduce: x, idx and values must not be NULL");
    GX__ARG(op, "gx_index_reduce: op is NULL (pass \"=\", \"+\", \"*\", \"max\", \"min\" or a lambda \"a, b -> ...\")");
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(ix_own(ctx, x, fn, "x"));
    GX__CHECK(ix_check_idx(ctx, idx, fn));
    GX__CHECK(ix_own(ctx, values, fn, "values"));
    GX__CHECK(gx__array_writable(x, "gx_index_reduce (x)"));
    int64_t n = 0, inner = 1;
    GX__CHECK(ir_check(fn, x, &axis, idx, values, &n, &inner));
    if (values->size == 0)
        return GX_OK;
    if (!(opts && opts->unchecked))
        GX__CHECK(ir_range(ctx, fn, idx, axis, n, x));
    gx_array *flat = NULL;
    GX__CHECK(ir_flat(ctx, idx, values, n, inner, &flat));
    bool put = strcmp(op, "=") == 0;
    gx_status s = scat_impl(fn, ctx, put ? NULL : op, flat, values, opts, x);
    gx_array_release(flat);
    return s;
}

/* ------------------------------------------------------------ masks and where */

static gx_status mask_check(gx_ctx *ctx, const char *fn, gx_array *mask, gx_array *x)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__CHECK(ix_own(ctx, x, fn, "x"));
    GX__CHECK(ix_own(ctx, mask, fn, "mask"));
    if (mask->dtype != GX_BOOL)
        return gx__err(GX_ERR_DTYPE,
                       "%s: mask is %s; it must be bool (make one with a comparison, e.g. gx_map "
                       "\"v -> v > 0\")",
                       fn, gx_dtype_name(mask->dtype));
    return GX_OK;
}

/* The map's shape error names the operands by number: name them by role. */
static gx_status mask_shape(gx_status s, const char *fn, const gx_array *a, const char *an, const gx_array *x)
{
    if (s != GX_ERR_SHAPE)
        return s;
    char sa[160], sx[160];
    gx__shape_str(sa, sizeof sa, a->ndim, a->shape);
    gx__shape_str(sx, sizeof sx, x->ndim, x->shape);
    return gx__err(GX_ERR_SHAPE, "%s: %s of shape %s does not broadcast to x's shape %s", fn, an, sa, sx);
}

gx_status gx_mask_assign(gx_ctx *ctx, gx_array *mask, const gx_scalar *value, gx_array *x)
{
    GX__ARG(value, "gx_mask_assign: value is NULL");
    GX__CHECK(mask_check(ctx, "gx_mask_assign", mask, x));
    GX__CHECK(gx__into_dtype("gx_mask_assign", value->dtype, x->dtype, 0));
    gx_array *in[2] = {mask, x};
    gx_const c = {"gx_v", *value};
    gx_map_opts mo = {.consts = &c, .nconsts = 1};
    gx_status s = gx_map_into(ctx, "m, x -> m ? gx_v : x", 2, in, &mo, x);
    return s == GX_OK ? s : mask_shape(s, "gx_mask_assign", mask, "mask", x);
}

gx_status gx_mask_copy(gx_ctx *ctx, gx_array *mask, gx_array *other, gx_array *x)
{
    GX__CHECK(mask_check(ctx, "gx_mask_copy", mask, x));
    GX__CHECK(ix_own(ctx, other, "gx_mask_copy", "other"));
    GX__CHECK(gx__into_dtype("gx_mask_copy", other->dtype, x->dtype, 0));
    gx_array *in[3] = {mask, other, x};
    gx_array *src = other;
    bool owned = false;
    /* x may be written while other (sharing storage, not element for element) is read. */
    if (gx__arrays_overlap(x, other)) {
        GX__CHECK(gx_array_clone(other, GX_DTYPE_DEFAULT, &src));
        owned = true;
        in[1] = src;
    }
    gx_status s = gx_map_into(ctx, "m, o, x -> m ? o : x", 3, in, NULL, x);
    if (owned)
        gx_array_release(src);
    if (s == GX_ERR_SHAPE && !gx__same_shape(mask, x))
        return mask_shape(s, "gx_mask_copy", mask, "mask", x);
    return s == GX_OK ? s : mask_shape(s, "gx_mask_copy", other, "other", x);
}

static gx_status where_impl(const char *fn, gx_ctx *ctx, gx_array *cond, gx_array *a, gx_array *b,
                            const gx_index_opts *opts, gx_array *into, gx_array **out)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(ix_own(ctx, cond, fn, "cond"));
    GX__CHECK(ix_own(ctx, a, fn, "a"));
    GX__CHECK(ix_own(ctx, b, fn, "b"));
    if (gx__dtype_is_complex(cond->dtype))
        return gx__err(GX_ERR_TYPE, "%s: cond is %s; a condition must be bool or real (compare it first)", fn,
                       gx_dtype_name(cond->dtype));
    gx_array *in[3] = {cond, a, b};
    /* NumPy's truth: nonzero is true (NaN too). */
    const char *lam = cond->dtype == GX_BOOL ? "c, a, b -> c ? a : b" : "c, a, b -> c != 0 ? a : b";
    gx_map_opts mo = {.exact_dtype = opts ? opts->exact_dtype : 0};
    gx_status s = into ? gx_map_into(ctx, lam, 3, in, &mo, into) : gx_map(ctx, lam, 3, in, &mo, out);
    if (s == GX_ERR_SHAPE)
        return gx__err_prefix(s, "%s (input 1 is cond, 2 is a, 3 is b)", fn);
    return s == GX_OK ? s : gx__err_prefix(s, "%s", fn);
}

gx_status gx_where(gx_ctx *ctx, gx_array *cond, gx_array *a, gx_array *b, const gx_index_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_where: out must not be NULL");
    *out = NULL;
    return where_impl("gx_where", ctx, cond, a, b, opts, NULL, out);
}

gx_status gx_where_into(gx_ctx *ctx, gx_array *cond, gx_array *a, gx_array *b, const gx_index_opts *opts, gx_array *out)
{
    GX__ARG(out, "gx_where_into: out must not be NULL");
    return where_impl("gx_where_into", ctx, cond, a, b, opts, out, NULL);
}
