/* scan.c -- gx_scan: running operators along one axis of an N-d array.
 *
 * One line (a 1-d array, or one non-trivial axis): the pipeline scan, single pass with
 * decoupled look-back on the GPU.  A few very long rows: that scan per row.
 * Otherwise the array is seen as (outer, len, inner): with inner == 1 (the contiguous
 * last axis) a warp per row walks it 32 elements at a time (warp scan + carry); with
 * inner > 1 a thread per (outer, inner) line walks the axis sequentially, so
 * neighbouring threads touch neighbouring addresses (coalesced).  The CPU runs a
 * worker per range of lines. */
#include "ops/range_priv.h"
#include "ops/userfns.h"

#include <stdio.h>
#include <string.h>

typedef struct ax_args {
    uint64_t x, o;
    int64_t outer, len, inner;
    rp_cval init;
} ax_args;

typedef struct ax_job {
    gx_dtype in, acc;
    bool exclusive, has_init;
    const char *body;
} ax_job;

static bool ax_cuda(gx_ctx *ctx) { return gx__target_is_cuda(ctx); }

static const char *fld(gx_dtype t)
{
    if (gx__dtype_is_float(t))
        return "f";
    return gx__dtype_is_signed(t) ? "i" : "u";
}

static void ax_common(gx__sbuf *b, const ax_job *j, bool cuda)
{
    const char *A = gx__dtype_ctype(j->acc);
    gx__sb_puts(b, cuda ? "typedef unsigned long long gx_uptr;\n" : "typedef uintptr_t gx_uptr;\n");
    gx__sb_printf(b,
                  "typedef union { double f; int64_t i; uint64_t u; } gx_cval;\n"
                  "typedef struct { uint64_t x, o; int64_t outer, len, inner; gx_cval init; } gx_args;\n"
                  "typedef struct { %s v0; } gx_acc;\n"
                  "GXF gx_acc gx_ax_op(gx_acc a, gx_acc b)\n{\n  gx_acc r;\n  %s\n  return r;\n}\n",
                  A, j->body);
    gx__sb_printf(b, "GXF gx_acc gx_ax_lift(%s x) { gx_acc r; r.v0 = (%s)x; return r; }\n", gx__dtype_ctype(j->in), A);
}

/* One line at (o, jj): sequential along the axis. */
static void ax_line(gx__sbuf *b, const ax_job *j, const char *A)
{
    gx__sb_printf(b,
                  "    const int64_t o = line / %sinner, jj = line - o * %sinner;\n"
                  "    const int64_t off = o * %slen * %sinner + jj, st = %sinner;\n"
                  "    gx_acc acc; acc.v0 = 0; uint32_t has = 0;\n    (void)has;\n",
                  A, A, A, A, A);
    if (j->has_init)
        gx__sb_printf(b, "    acc.v0 = (%s)%sinit.%s; has = 1;\n", gx__dtype_ctype(j->acc), A, fld(j->acc));
    gx__sb_printf(b, "    for (int64_t k = 0; k < %slen; k++) {\n      const gx_acc v = gx_ax_lift(x[off + k * st]);\n",
                  A);
    if (j->exclusive)
        gx__sb_puts(b, "      o_[off + k * st] = acc.v0;\n      acc = gx_ax_op(acc, v);\n");
    else
        gx__sb_puts(b, "      acc = has ? gx_ax_op(acc, v) : v;\n      has = 1;\n      o_[off + k * st] = acc.v0;\n");
    gx__sb_puts(b, "    }\n");
}

static void ax_ptrs(gx__sbuf *b, const ax_job *j, const char *A)
{
    gx__sb_printf(b, "  const %s *x = (const %s *)(gx_uptr)%sx;\n  %s *o_ = (%s *)(gx_uptr)%so;\n",
                  gx__dtype_ctype(j->in), gx__dtype_ctype(j->in), A, gx__dtype_ctype(j->acc), gx__dtype_ctype(j->acc),
                  A);
}

static void ax_cpu(gx__sbuf *b, const ax_job *j)
{
    gx__sb_puts(b, "void gx_ax_cols(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                   "  const gx_args *a = (const gx_args *)ap;\n  (void)thread;\n");
    ax_ptrs(b, j, "a->");
    gx__sb_puts(b, "  for (int64_t line = begin; line < end; line++) {\n");
    ax_line(b, j, "a->");
    gx__sb_puts(b, "  }\n}\n");
}

static void ax_shfl(gx__sbuf *b, gx_dtype t, const char *fn, const char *dst, const char *src, const char *arg)
{
    if (gx_dtype_size(t) < 4)
        gx__sb_printf(b, "      %s.v0 = (%s)%s(0xffffffffu, (int)%s.v0, %s);\n", dst, gx__dtype_ctype(t), fn, src, arg);
    else
        gx__sb_printf(b, "      %s.v0 = %s(0xffffffffu, %s.v0, %s);\n", dst, fn, src, arg);
}

static void ax_cuda_rows(gx__sbuf *b, const ax_job *j)
{
    gx__sb_puts(b, "extern \"C\" __global__ void gx_ax_rows(const gx_args a)\n{\n  GX_PDL_ENTER();\n");
    ax_ptrs(b, j, "a.");
    gx__sb_puts(b, "  const int lane = threadIdx.x & 31;\n"
                   "  const int64_t gw = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;\n"
                   "  const int64_t nw = ((int64_t)gridDim.x * blockDim.x) >> 5;\n"
                   "  for (int64_t row = gw; row < a.outer; row += nw) {\n"
                   "    const int64_t off = row * a.len;\n"
                   "    gx_acc carry; carry.v0 = 0; uint32_t ch = 0;\n");
    if (j->has_init)
        gx__sb_printf(b, "    carry.v0 = (%s)a.init.%s; ch = 1;\n", gx__dtype_ctype(j->acc), fld(j->acc));
    gx__sb_printf(b, "    for (int64_t c = 0; c < a.len; c += 32) {\n"
                     "      const int64_t k = c + lane;\n      const bool ok = k < a.len;\n"
                     "      gx_acc v; v.v0 = 0;\n      if (ok) v = gx_ax_lift(x[off + k]);\n"
                     "      uint32_t h = ok;\n"
                     "#pragma unroll\n      for (int d = 1; d < 32; d <<= 1) {\n        gx_acc w;\n");
    ax_shfl(b, j->acc, "__shfl_up_sync", "  w", "v", "d");
    gx__sb_puts(b, "        const uint32_t wh = __shfl_up_sync(0xffffffffu, h, d);\n"
                   "        if (lane >= d && wh) { v = h ? gx_ax_op(w, v) : w; h = 1; }\n      }\n"
                   "      gx_acc y;\n");
    if (j->exclusive) {
        gx__sb_puts(b, "      gx_acc e;\n");
        ax_shfl(b, j->acc, "__shfl_up_sync", "e", "v", "1");
        gx__sb_puts(b, "      y = lane > 0 ? gx_ax_op(carry, e) : carry;\n");
    } else {
        gx__sb_puts(b, "      y = ch ? gx_ax_op(carry, v) : v;\n");
    }
    gx__sb_puts(b, "      if (ok) o_[off + k] = y.v0;\n      gx_acc t;\n");
    ax_shfl(b, j->acc, "__shfl_sync", "t", "v", "31");
    gx__sb_puts(b, "      carry = ch ? gx_ax_op(carry, t) : t;\n      ch = 1;\n    }\n  }\n}\n");
}

static void ax_cuda_cols(gx__sbuf *b, const ax_job *j)
{
    gx__sb_puts(b, "extern \"C\" __global__ void gx_ax_cols(const gx_args a)\n{\n  GX_PDL_ENTER();\n");
    ax_ptrs(b, j, "a.");
    gx__sb_puts(b, "  const int64_t nth = (int64_t)gridDim.x * blockDim.x;\n"
                   "  for (int64_t line = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; line < a.outer * a.inner; "
                   "line += nth) {\n");
    ax_line(b, j, "a.");
    gx__sb_puts(b, "  }\n}\n");
}

static gx_status ax_run(gx_ctx *ctx, const ax_job *j, const ax_args *args)
{
    bool cuda = ax_cuda(ctx);
    gx__sbuf b = {0};
    gx__sb_puts(&b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    gx__userfns *u = gx__userfns_of(ctx);
    if (u && u->code.p)
        gx__sb_puts(&b, u->code.p);
    gx__sb_puts(&b, "\n#line 1 \"gx-generated\"\n");
    ax_common(&b, j, cuda);
    if (cuda) {
        ax_cuda_rows(&b, j);
        ax_cuda_cols(&b, j);
    } else {
        ax_cpu(&b, j);
    }
    bool rows = cuda && args->inner == 1;
    gx__kernel k;
    gx_status s = b.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "gx_scan: out of host memory") : GX_OK;
    if (s == GX_OK)
        s = gx__kernel_get(ctx, b.p, "gx_scan", rows ? "gx_ax_rows" : "gx_ax_cols", &k);
    gx__sb_free(&b);
    GX__CHECK(s);
    int64_t lines = args->outer * args->inner;
    int64_t threads = rows ? args->outer * 32 : lines;
    int64_t grid = (threads + RP_BLOCK - 1) / RP_BLOCK;
    return gx__launch_1d(ctx, &k, args, sizeof *args, lines, 1, grid < (1 << 20) ? grid : (1 << 20), RP_BLOCK);
}

/* ------------------------------------------------------------ the API */

typedef struct scan_plan {
    int axis;
    int64_t outer, len, inner;
} scan_plan;

static gx_status scan_axes(const gx_array *x, const gx_scan_opts *o, scan_plan *sp)
{
    int nd = x->ndim > 0 ? x->ndim : 1;
    int ax = o->axis < 0 ? o->axis + nd : o->axis;
    if (ax < 0 || ax >= nd)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "gx_scan: axis %d is out of range for a %d-d array (use 0..%d or -1..-%d)", o->axis, nd, nd - 1,
                       nd);
    sp->axis = ax;
    sp->outer = sp->inner = 1;
    sp->len = x->ndim > 0 ? x->shape[ax] : 1;
    for (int d = 0; d < ax && d < x->ndim; d++)
        sp->outer *= x->shape[d];
    for (int d = ax + 1; d < x->ndim; d++)
        sp->inner *= x->shape[d];
    return GX_OK;
}

/* gx_scan_into's array: x's shape, in this context. */
static gx_status scan_check_into(gx_ctx *ctx, gx_array *x, gx_array *out)
{
    GX__CHECK(gx__array_check(out, "gx_scan_into (out)"));
    GX__CHECK(gx__array_writable(out, "gx_scan_into (out)"));
    if (out->ctx != ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_scan_into: out belongs to another context");
    bool same = out->ndim == x->ndim;
    for (int d = 0; same && d < x->ndim; d++)
        same = out->shape[d] == x->shape[d];
    if (!same)
        return gx__err(GX_ERR_SHAPE, "gx_scan_into: out must have the input's shape");
    return GX_OK;
}

/* What a scan passes down besides its options: the operator prepared for it, and
 * where the pipeline records its kernels for the memo front (NULL: not wanted). */
typedef struct scan_aux {
    const rp_opjob *j;
    gx_dtype elem;
    rp_front *cap;
} scan_aux;

/* The pipeline scan of one contiguous line (1-d arrays src -> dst, dst of dtype acc). */
static gx_status scan_line(gx_ctx *ctx, const char *op, gx_array *src, gx_array *dst, const gx_scan_opts *o,
                           const scan_aux *x)
{
    gx_pipe *p = NULL, local; /* not a handle: see rp_pipe_open */
    GX__CHECK(rp_pipe_open(ctx, 1, &src, &local, &p));
    p->prep = x->j;
    p->prep_elem = x->elem;
    p->cap = x->cap;
    gx_pipe_opts po = {
        .consts = o->consts, .nconsts = o->nconsts, .init = o->init, .exclusive = o->exclusive, .dtype = dst->dtype};
    gx_status s = gx_pipe_scan_into(p, op, &po, dst);
    rp_pipe_close(p);
    return s;
}

static gx_status scan_rows(gx_ctx *ctx, const char *op, gx_array *src, gx_array *dst, const scan_plan *sp,
                           const gx_scan_opts *o, const scan_aux *x)
{
    gx_array *s2 = NULL, *d2 = NULL;
    int64_t shape[2] = {sp->outer, sp->len};
    gx_status s = gx_array_reshape(src, 2, shape, &s2);
    if (s == GX_OK)
        s = gx_array_reshape(dst, 2, shape, &d2);
    for (int64_t r = 0; s == GX_OK && r < sp->outer; r++) {
        gx_slice sl[2] = {{r, r + 1, 1}, GX_ALL};
        gx_array *sv = NULL, *dv = NULL, *s1 = NULL, *d1 = NULL;
        s = gx_array_view(s2, sl, &sv);
        if (s == GX_OK)
            s = gx_array_view(d2, sl, &dv);
        if (s == GX_OK)
            s = gx_array_reshape(sv, 1, &sp->len, &s1);
        if (s == GX_OK)
            s = gx_array_reshape(dv, 1, &sp->len, &d1);
        if (s == GX_OK)
            s = scan_line(ctx, op, s1, d1, o, x);
        gx_array_release(sv);
        gx_array_release(dv);
        gx_array_release(s1);
        gx_array_release(d1);
    }
    gx_array_release(s2);
    gx_array_release(d2);
    return s;
}

static gx_status scan_body(gx_ctx *ctx, const char *op, gx_array *x, const gx_scan_opts *o, gx_dtype acc,
                           const char *body, gx_array *dst, const scan_aux *aux)
{
    scan_plan sp;
    GX__CHECK(scan_axes(x, o, &sp));
    if (x->size == 0)
        return GX_OK;
    if (sp.outer * sp.inner == 1)
        return scan_line(ctx, op, x, dst, o, aux);
    scan_aux rows = *aux;
    rows.cap = NULL; /* the front stands for one line only */
    if (sp.inner == 1 && sp.outer <= 4 && sp.len >= (1 << 16))
        return scan_rows(ctx, op, x, dst, &sp, o, &rows);
    ax_job j = {x->dtype, acc, o->exclusive != 0, o->init != NULL, body};
    ax_args a;
    memset(&a, 0, sizeof a);
    a.x = (uint64_t)(uintptr_t)gx__array_ptr(x);
    a.o = (uint64_t)(uintptr_t)gx__array_ptr(dst);
    a.outer = sp.outer;
    a.len = sp.len;
    a.inner = sp.inner;
    if (o->init)
        rp_const_to_cval(o->init, acc, &a.init);
    return ax_run(ctx, &j, &a);
}

/* The memo front of gx_scan and gx_scan_into (issue 22): one line (a 1-d array, or
 * one non-trivial axis) of a dense, non-half x, scanned straight into the result
 * (contiguous, not overlapping x, of the accumulator's dtype).  Its value: the kernel
 * pair and tile, the accumulator and result dtypes, the named operator's neutral
 * element.  The key: everything those depend on (the operator's text, x's dtype and
 * vector width, the dtype options and out's dtype, exclusive, init's dtype, the
 * constants' names, dtypes and values (written into the operator's code), the user
 * functions).  Only a call that passed every check of the full path stored it; what
 * the key does not hold (handles, shapes, out's layout) is checked on every call.  A
 * hit skips preparing the operator, the pipeline, planning and the kernel key.  Warm
 * calls on 1024 f32 (2-core VM, one thread, fastest of 7 x 2000): gx_scan_into 1.40 ->
 * 0.92 us, gx_scan 1.64 -> 1.16 us. */
typedef struct scan_front_v {
    rp_front f;
    gx_dtype acc, rdt;
    bool named;
    gx_scalar neutral;
} scan_front_v;

static bool scan_front_key(gx_ctx *ctx, const char *op, gx_array *x, const gx_scan_opts *o, const scan_plan *sp,
                           const gx_array *into, gx_dtype forced, rp_args *a, gx__bkey *k)
{
    int nc = o->nconsts;
    if (!op || x->size == 0 || sp->outer * sp->inner != 1 || gx__dtype_is_half(x->dtype) || !gx__array_contiguous(x) ||
        nc < 0 || nc > RP_MAXCONST || (nc > 0 && !o->consts))
        return false;
    bool contig;
    int vec;
    rp_front_args(1, &x, x->size, NULL, 0, a, &contig, &vec);
    gx__userfns *u = gx__userfns_of(ctx);
    k->len = 0;
    k->over = false;
    const int64_t head[] = {0x72707366,
                            u ? u->count : 0,
                            u ? (int64_t)u->code.len : 0,
                            (int64_t)x->dtype,
                            vec,
                            (int64_t)forced,
                            (int64_t)o->dtype,
                            o->exact_dtype,
                            into ? (int64_t)into->dtype : -1,
                            o->exclusive != 0,
                            o->init ? (int64_t)o->init->dtype : -1,
                            nc};
    gx__bkey_bytes(k, head, sizeof head);
    for (int j = 0; j < nc; j++) {
        if (!o->consts[j].name)
            return false;
        gx__bkey_str(k, o->consts[j].name);
        gx__bkey_int(k, (int64_t)o->consts[j].value.dtype);
        gx__bkey_bytes(k, &o->consts[j].value.v, sizeof o->consts[j].value.v);
    }
    gx__bkey_str(k, op);
    return !k->over;
}

/* A front hit: the result array (a new one, or into) and the recorded kernels. */
static gx_status scan_front_run(gx_ctx *ctx, const scan_front_v *v, gx_array *x, const gx_scan_opts *o, gx_array *into,
                                gx_array **made, rp_args *a)
{
    if (!into)
        GX__CHECK(gx__array_new(ctx, v->rdt, x->ndim, x->shape, made));
    const gx_scalar *init = o->init ? o->init : o->exclusive && v->named ? &v->neutral : NULL;
    if (init)
        rp_const_to_cval(init, v->acc, &a->init[0]);
    gx_status s = rp_front_scan(ctx, &v->f, a, into ? into : *made);
    if (s != GX_OK && !into) {
        gx_array_release(*made);
        *made = NULL;
    }
    return s;
}

/* gx_scan (into NULL: a new array through *made) and gx_scan_into. */
static gx_status scan_impl(gx_ctx *ctx, const char *fn, const char *op, gx_array *x, const gx_scan_opts *opts,
                           gx_array *into, gx_array **made)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(bd_no_operator(fn, opts ? opts->narrays : 0,
                             "to scan values read through arrays, map them in a pipeline (gx_pipe_from_arrays or "
                             "gx_pipe_iota, gx_pipe_map with opts->arrays, then gx_pipe_scan)"));
    GX__CHECK(gx__array_check(x, "gx_scan (x)"));
    if (x->ctx != ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: x belongs to another context", fn);
    /* Halves scan a widened f32 copy and round the results once (f32 accumulation). */
    bool half = gx__dtype_is_half(x->dtype);
    if (!rp_dtype_ok(x->dtype) && !half)
        return gx__err(GX_ERR_DTYPE, "%s: x has dtype %s, which scans do not support", fn, gx_dtype_name(x->dtype));
    gx_scan_opts o = {0};
    if (opts)
        o = *opts;
    scan_plan sp;
    GX__CHECK(scan_axes(x, &o, &sp));
    if (into)
        GX__CHECK(scan_check_into(ctx, x, into));
    gx__lock(ctx);
    /* Into yours: accumulate in its dtype (unless opts says otherwise or forbids converting). */
    gx_dtype forced = o.dtype != GX_DTYPE_DEFAULT || !into || o.exact_dtype ? o.dtype : into->dtype;
    /* A half result (asked for, or a half x's float result) is accumulated in f32. */
    gx_dtype half_out = gx__dtype_is_half(forced) ? forced : half && forced == GX_DTYPE_DEFAULT ? x->dtype : 0;
    if (gx__dtype_is_half(forced))
        forced = GX_F32;
    rp_args fa;
    gx__bkey fk;
    scan_front_v fv;
    memset(&fv, 0, sizeof fv);
    bool keyed = scan_front_key(ctx, op, x, &o, &sp, into, forced, &fa, &fk);
    if (keyed && gx__memo_bget(ctx, &fk, &fv, sizeof fv) &&
        (!into || (gx__array_contiguous(into) && !gx__arrays_overlap(into, x)))) {
        gx_status fs = scan_front_run(ctx, &fv, x, &o, into, made, &fa);
        gx__unlock(ctx);
        return fs;
    }
    rp_opjob j = {0};
    gx_array *src = x, *dst = NULL;
    gx_status s = rp_op_prepare(ctx, fn, op, half ? GX_F32 : x->dtype, forced, o.consts, o.nconsts, &j);
    gx_dtype rdt = half_out && j.acc == GX_F32 ? half_out : j.acc; /* the result's dtype */
    if (s == GX_OK && o.exclusive && !o.init && j.named)
        o.init = &j.neutral;
    if (s == GX_OK && o.exclusive && !o.init)
        s = gx__err(GX_ERR_INVALID_ARGUMENT, "%s: an exclusive scan of a lambda needs opts->init (its first output)",
                    fn);
    if (s == GX_OK && into)
        s = gx__into_dtype(fn, rdt, into->dtype, o.exact_dtype);
    if (s == GX_OK && !into)
        s = gx__array_new(ctx, rdt, x->ndim, x->shape, made);
    gx_array *out = into ? into : s == GX_OK ? *made : NULL;
    /* Dense working copies where the input or output is a view (or they overlap). */
    if (s == GX_OK && (half || !gx__array_contiguous(x)))
        s = gx_array_clone(x, half ? GX_F32 : GX_DTYPE_DEFAULT, &src);
    if (s == GX_OK) {
        dst = out;
        if (!gx__array_contiguous(dst) || gx__arrays_overlap(dst, src) || dst->dtype != j.acc)
            s = gx__array_new(ctx, j.acc, x->ndim, x->shape, &dst);
    }
    scan_aux aux = {&j, half ? GX_F32 : x->dtype, keyed ? &fv.f : NULL};
    if (s == GX_OK)
        s = scan_body(ctx, op, src, &o, j.acc, j.body.p, dst, &aux);
    if (s == GX_OK && keyed && fv.f.ok && dst == out && src == x) {
        fv.acc = j.acc;
        fv.rdt = rdt;
        fv.named = j.named;
        fv.neutral = j.neutral;
        gx__memo_bput(ctx, &fk, &fv, sizeof fv);
    }
    if (s == GX_OK && dst != out) /* a C cast where out's dtype is not the accumulator's */
        s = dst->dtype == out->dtype ? gx_array_copy_into(dst, out) : gx_map_into(ctx, "x -> x", 1, &dst, NULL, out);
    if (dst && dst != out)
        gx_array_release(dst);
    if (src != x)
        gx_array_release(src);
    if (s != GX_OK && made && *made) {
        gx_array_release(*made);
        *made = NULL;
    }
    rp_opjob_free(&j);
    gx__unlock(ctx);
    return s;
}

gx_status gx_scan(gx_ctx *ctx, const char *op, gx_array *x, const gx_scan_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_scan: out is NULL (it receives the new array; gx_scan_into writes yours)");
    *out = NULL;
    return scan_impl(ctx, "gx_scan", op, x, opts, NULL, out);
}

gx_status gx_scan_into(gx_ctx *ctx, const char *op, gx_array *x, const gx_scan_opts *opts, gx_array *out)
{
    GX__ARG(out, "gx_scan_into: out is NULL (gx_scan makes a new array)");
    return scan_impl(ctx, "gx_scan_into", op, x, opts, out, NULL);
}
