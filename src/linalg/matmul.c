/* matmul.c -- gx_matmul: checks and layouts here, the product in the backend's
 * lib.gemm (cuBLAS on CUDA) or, on a backend that runs on the host, CBLAS.
 *
 * gx arrays are row-major.  Each operand's last two axes are classified: a unit
 * column stride is a row-major matrix (leading dimension = row stride); a unit row
 * stride is the transpose of a row-major matrix, folded into the op flag; anything
 * else is copied to a dense temporary.  The product goes out row-major (gx__gemm);
 * a column-major library swaps the operands itself. */
#include "linalg/linalg_priv.h"

#include <stdio.h>
#include <string.h>

#ifdef GX_HAVE_CBLAS
#include <cblas.h>
#include <dlfcn.h>
#include <stdlib.h>
#endif

/* One operand as a library sees it. */
typedef struct mm_operand {
    gx_array *tmp;     /* dense copy, when one was needed */
    const gx_array *a; /* what the library reads: the caller's array or tmp */
    gx_op op;          /* op after folding a transposed layout */
    int64_t ld;        /* leading dimension (row-major) */
    int64_t bstride;   /* elements between batch entries (0 = shared) */
} mm_operand;

/* The options resolved: defaults applied, alpha/beta as {re, im} doubles. */
typedef struct mm_opts {
    gx_op op_a, op_b;
    double alpha[2], beta[2];
    gx_math_mode math;
    gx_dtype dtype; /* opts->dtype: C's dtype, 0 = A's (gx_matmul) / out's (_into) */
} mm_opts;

typedef struct mm_call {
    gx_dtype dt;  /* A and B */
    gx_dtype cdt; /* C: dt, or f32 for half inputs */
    int64_t m, n, k, batch;
    mm_operand A, B, C;
    gx_array *c_user; /* C when the library writes a temporary instead */
    mm_opts o;
} mm_call;

static bool mm_dtype_ok(gx_dtype t) { return t == GX_F32 || t == GX_F64 || t == GX_C64 || t == GX_C128; }

/* C's dtype for inputs of dtype `in`: the same, or f32 for halves (f32 accumulation). */
static bool mm_out_ok(gx_dtype in, gx_dtype out)
{
    return (mm_dtype_ok(in) || gx__dtype_is_half(in)) && (out == in || (gx__dtype_is_half(in) && out == GX_F32));
}

/* Rows/cols strides of the last two axes. */
static void mm_rc(const gx_array *a, int64_t *r, int64_t *c, int64_t *sr, int64_t *sc)
{
    *r = a->shape[a->ndim - 2], *c = a->shape[a->ndim - 1];
    *sr = a->strides[a->ndim - 2], *sc = a->strides[a->ndim - 1];
}

/* Classifies `a`; copies it when no library layout fits.  op is the caller's op. */
static gx_status mm_operand_make(const gx_array *a, gx_op op, mm_operand *o)
{
    memset(o, 0, sizeof *o);
    o->a = a;
    for (int pass = 0; pass < 2; pass++) {
        int64_t r, c, sr, sc;
        mm_rc(o->a, &r, &c, &sr, &sc);
        int64_t sb = o->a->ndim == 3 ? o->a->strides[0] : 0;
        bool batch_ok = sb >= 0 && (o->a->ndim == 2 || o->a->shape[0] == 1 || sb > 0);
        if (r == 0 || c == 0) { /* nothing to read: any layout with a legal ld */
            o->op = op;
            o->ld = c > 1 ? c : 1;
            return GX_OK;
        }
        if (batch_ok && (sc == 1 || c == 1) && (sr >= c || r == 1)) {
            o->op = op;
            o->ld = r == 1 ? c : sr;
            o->bstride = sb;
            return GX_OK;
        }
        if (batch_ok && op != GX_OP_C && (sr == 1 || r == 1) && (sc >= r || c == 1)) {
            o->op = op == GX_OP_N ? GX_OP_T : GX_OP_N;
            o->ld = c == 1 ? r : sc;
            o->bstride = sb;
            return GX_OK;
        }
        if (pass == 1 || o->tmp)
            break;
        linalg_count_copy();
        GX__CHECK(gx_array_clone(a, GX_DTYPE_DEFAULT, &o->tmp));
        o->a = o->tmp;
    }
    return gx__err(GX_ERR_INTERNAL, "gx_matmul: a dense copy still has no library layout");
}

static gx_status mm_check(const gx_array *c, const gx_array *a, const gx_array *b, const mm_opts *o)
{
    GX__CHECK(gx__array_check(c, "gx_matmul (c)"));
    GX__CHECK(gx__array_writable(c, "gx_matmul (c)"));
    GX__CHECK(gx__array_check(a, "gx_matmul (a)"));
    GX__CHECK(gx__array_check(b, "gx_matmul (b)"));
    if (a->ctx != c->ctx || b->ctx != c->ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_matmul: a, b and c belong to different contexts");
    if (a->dtype != b->dtype || !mm_out_ok(a->dtype, c->dtype))
        return gx__err(GX_ERR_DTYPE,
                       "gx_matmul: dtypes a=%s, b=%s, c=%s; all three must be one of f32, f64, c64, c128, or a and "
                       "b both f16 or both bf16 with c the same or f32 (convert with gx_array_clone)",
                       gx_dtype_name(a->dtype), gx_dtype_name(b->dtype), gx_dtype_name(c->dtype));
    if ((unsigned)o->op_a > GX_OP_C || (unsigned)o->op_b > GX_OP_C || (unsigned)o->math > GX_MATH_BF16)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "gx_matmul: op_a/op_b must be GX_OP_N, GX_OP_T or GX_OP_C and math a gx_math_mode");
    if (o->dtype != GX_DTYPE_DEFAULT && o->dtype != c->dtype)
        return gx__err(GX_ERR_DTYPE, "gx_matmul_into: opts->dtype is %s but out is %s; leave opts->dtype 0 (out's "
                       "dtype decides) or make them agree", gx_dtype_name(o->dtype), gx_dtype_name(c->dtype));
    if (c->st == a->st || c->st == b->st)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_matmul: c shares storage with a or b; write into a separate array");
    return GX_OK;
}

static gx_status mm_shapes(const gx_array *c, const gx_array *a, const gx_array *b, const mm_opts *o, mm_call *mc)
{
    char sa[96], sb[96], sc[96];
    gx__shape_str(sa, sizeof sa, a->ndim, a->shape);
    gx__shape_str(sb, sizeof sb, b->ndim, b->shape);
    gx__shape_str(sc, sizeof sc, c->ndim, c->shape);
    if (a->ndim < 2 || a->ndim > 3 || b->ndim < 2 || b->ndim > 3 || c->ndim != (a->ndim == 3 || b->ndim == 3 ? 3 : 2))
        return gx__err(GX_ERR_SHAPE,
                       "gx_matmul: a %s, b %s, c %s: matrices are 2-D, batches 3-D (c is 3-D when a or b is)", sa, sb,
                       sc);
    int64_t ar = a->shape[a->ndim - 2], ac = a->shape[a->ndim - 1], br = b->shape[b->ndim - 2],
            bc = b->shape[b->ndim - 1];
    int64_t m = o->op_a == GX_OP_N ? ar : ac, ka = o->op_a == GX_OP_N ? ac : ar;
    int64_t kb = o->op_b == GX_OP_N ? br : bc, n = o->op_b == GX_OP_N ? bc : br;
    if (ka != kb)
        return gx__err(GX_ERR_SHAPE,
                       "gx_matmul: inner sizes differ: op(a) of a %s has %lld columns, op(b) of b %s has %lld rows", sa,
                       (long long)ka, sb, (long long)kb);
    int64_t batch = c->ndim == 3 ? c->shape[0] : 1;
    bool bad_batch = (a->ndim == 3 && a->shape[0] != batch) || (b->ndim == 3 && b->shape[0] != batch);
    if (c->shape[c->ndim - 2] != m || c->shape[c->ndim - 1] != n || bad_batch)
        return gx__err(GX_ERR_SHAPE, "gx_matmul: c has shape %s but op(a)·op(b) of a %s and b %s is (%s%lld, %lld)", sc,
                       sa, sb, c->ndim == 3 ? "batch, " : "", (long long)m, (long long)n);
    if (m > INT32_MAX || n > INT32_MAX || ka > INT32_MAX || batch > INT32_MAX)
        return gx__err(GX_ERR_UNSUPPORTED,
                       "gx_matmul: m=%lld, n=%lld, k=%lld, batch=%lld: the BLAS libraries take 32-bit "
                       "sizes (at most 2147483647); split the product into blocks",
                       (long long)m, (long long)n, (long long)ka, (long long)batch);
    mc->dt = a->dtype, mc->cdt = c->dtype, mc->m = m, mc->n = n, mc->k = ka, mc->batch = batch, mc->o = *o;
    return GX_OK;
}

/* C must be row-major with a unit column stride; otherwise compute into a dense
 * copy (holding C's values for beta) and copy back afterwards. */
static gx_status mm_output(gx_array *c, mm_call *mc)
{
    int64_t r, cc, sr, sc;
    mm_rc(c, &r, &cc, &sr, &sc);
    int64_t sb = c->ndim == 3 ? c->strides[0] : 0;
    bool ok = r == 0 || cc == 0 ||
              ((sc == 1 || cc == 1) && (sr >= cc || r == 1) && (c->ndim == 2 || c->shape[0] == 1 || sb >= r * sr));
    memset(&mc->C, 0, sizeof mc->C);
    mc->C.a = c;
    mc->C.op = GX_OP_N;
    if (!ok) {
        linalg_count_copy();
        GX__CHECK(gx_array_clone(c, GX_DTYPE_DEFAULT, &mc->C.tmp));
        mc->C.a = mc->C.tmp;
        mc->c_user = c;
        mm_rc(mc->C.a, &r, &cc, &sr, &sc);
        sb = c->ndim == 3 ? mc->C.a->strides[0] : 0;
    }
    mc->C.ld = r <= 1 || cc == 0 ? (cc > 1 ? cc : 1) : sr;
    mc->C.bstride = sb;
    if (mc->A.ld > INT32_MAX || mc->B.ld > INT32_MAX || mc->C.ld > INT32_MAX)
        return gx__err(GX_ERR_UNSUPPORTED,
                       "gx_matmul: a leading dimension (lda=%lld, ldb=%lld, ldc=%lld) exceeds the BLAS "
                       "32-bit limit 2147483647; copy the view to a dense array first",
                       (long long)mc->A.ld, (long long)mc->B.ld, (long long)mc->C.ld);
    return GX_OK;
}

/* ------------------------------------------------------------ host: CBLAS */

#ifdef GX_HAVE_CBLAS
static enum CBLAS_TRANSPOSE mm_cblas_op(gx_op op)
{
    return op == GX_OP_N ? CblasNoTrans : op == GX_OP_T ? CblasTrans : CblasConjTrans;
}

static void mm_cblas_one(const gx__gemm *g, const char *a, const char *b, char *c)
{
    enum CBLAS_TRANSPOSE ta = mm_cblas_op(g->op_a), tb = mm_cblas_op(g->op_b);
    int m = g->m, n = g->n, k = g->k, lda = g->lda, ldb = g->ldb, ldc = g->ldc;
    const double *al = g->alpha, *be = g->beta;
    switch (g->dtype) {
    case GX_F32:
        cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, (float)al[0], (const float *)a, lda, (const float *)b, ldb,
                    (float)be[0], (float *)c, ldc);
        break;
    case GX_F64:
        cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, al[0], (const double *)a, lda, (const double *)b, ldb, be[0],
                    (double *)c, ldc);
        break;
    case GX_C64: {
        float fa[2] = {(float)al[0], (float)al[1]}, fb[2] = {(float)be[0], (float)be[1]};
        cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, fa, a, lda, b, ldb, fb, c, ldc);
        break;
    }
    default: cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc); break;
    }
}

/* ---- halves on the host: f32 accumulation */

enum { MM_KB = 256 }; /* k per converted block */

/* OpenBLAS's bf16 product (bf16 A, B; f32 C), present only in builds with BFLOAT16;
 * looked up at run time so that gx builds and runs against any OpenBLAS. */
#ifdef OPENBLAS_CONST
typedef blasint mm_bint;
#else
typedef int mm_bint; /* another CBLAS: its int */
#endif
typedef void (*mm_sbgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, mm_bint, mm_bint, mm_bint,
                             float, const uint16_t *, mm_bint, const uint16_t *, mm_bint, float, float *, mm_bint);

static mm_sbgemm_fn mm_sbgemm(void)
{
    static mm_sbgemm_fn fn;
    static int looked; /* benign race: every thread finds the same symbol */
    if (!looked) {
        void *p = dlsym(RTLD_DEFAULT, "cblas_sbgemm");
        memcpy(&fn, &p, sizeof fn);
        looked = 1;
    }
    return fn;
}

static float mm_widen1(gx_dtype t, uint16_t v) { return t == GX_F16 ? gx_f16_to_f32(v) : gx_bf16_to_f32(v); }

/* Rows [r0, r1) x columns [c0, c1) of a row-major half matrix (leading dimension ld)
 * as a dense f32 matrix. */
static void mm_widen(gx_dtype t, const uint16_t *src, int64_t ld, int r0, int r1, int c0, int c1, float *dst)
{
    for (int i = r0; i < r1; i++)
        for (int j = c0; j < c1; j++)
            *dst++ = mm_widen1(t, src[(int64_t)i * ld + j]);
}

/* The f32 C of one product: scaled by beta (or cleared) before the k blocks add in. */
static void mm_c_start(const gx__gemm *g, const void *c, float *cw, int ldw)
{
    float beta = (float)g->beta[0];
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            float v = 0;
            if (beta != 0) /* beta 0: C's old values (maybe NaN) are not read, as in BLAS */
                v = g->c_dtype == GX_F32 ? ((const float *)c)[(int64_t)i * g->ldc + j]
                                         : mm_widen1(g->c_dtype, ((const uint16_t *)c)[(int64_t)i * g->ldc + j]);
            cw[(int64_t)i * ldw + j] = beta * v;
        }
}

/* One half product into cw (f32, row-major, ldw), which holds beta·C already. */
static void mm_half_sum(const gx__gemm *g, const uint16_t *a, const uint16_t *b, float *cw, int ldw, float *ab,
                        float *bb)
{
    int m = g->m, n = g->n, k = g->k;
    bool ta = g->op_a != GX_OP_N, tb = g->op_b != GX_OP_N;
    mm_sbgemm_fn sb = g->dtype == GX_BF16 ? mm_sbgemm() : NULL;
    if (sb && k > 0) {
        sb(CblasRowMajor, mm_cblas_op(g->op_a), mm_cblas_op(g->op_b), m, n, k, (float)g->alpha[0], a, g->lda, b,
           g->ldb, 1.0f, cw, ldw);
        return;
    }
    for (int k0 = 0; k0 < k; k0 += MM_KB) {
        int kb = k - k0 < MM_KB ? k - k0 : MM_KB;
        /* op(A) columns / op(B) rows k0 .. k0+kb, dense: ld kb or m / n or kb */
        if (ta)
            mm_widen(g->dtype, a, g->lda, k0, k0 + kb, 0, m, ab);
        else
            mm_widen(g->dtype, a, g->lda, 0, m, k0, k0 + kb, ab);
        if (tb)
            mm_widen(g->dtype, b, g->ldb, 0, n, k0, k0 + kb, bb);
        else
            mm_widen(g->dtype, b, g->ldb, k0, k0 + kb, 0, n, bb);
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, kb,
                    (float)g->alpha[0], ab, ta ? m : kb, bb, tb ? kb : n, 1.0f, cw, ldw);
    }
}

/* cw (f32) into C of a half dtype, rounded once. */
static void mm_narrow(const gx__gemm *g, const float *cw, uint16_t *c)
{
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            float v = cw[(int64_t)i * g->n + j];
            c[(int64_t)i * g->ldc + j] = g->c_dtype == GX_F16 ? gx_f32_to_f16(v) : gx_f32_to_bf16(v);
        }
}

static gx_status mm_host_half(const gx__gemm *g)
{
    bool c32 = g->c_dtype == GX_F32;
    size_t m = (size_t)g->m, n = (size_t)g->n, kb = (size_t)(g->k < MM_KB ? g->k : MM_KB);
    float *cf = c32 ? NULL : malloc(m * n * sizeof(float) + 1);
    float *ab = malloc(m * kb * sizeof(float) + 1), *bb = malloc(kb * n * sizeof(float) + 1);
    gx_status s = GX_OK;
    if ((!c32 && !cf) || !ab || !bb)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "gx_matmul: no host memory for the f32 blocks of a %s product (%zu x %zu)",
                    gx_dtype_name(g->dtype), m, n);
    size_t esz = gx_dtype_size(g->dtype), csz = gx_dtype_size(g->c_dtype);
    for (int64_t i = 0; s == GX_OK && i < g->batch; i++) {
        const uint16_t *a = (const uint16_t *)((const char *)g->a + (size_t)(i * g->stride_a) * esz);
        const uint16_t *b = (const uint16_t *)((const char *)g->b + (size_t)(i * g->stride_b) * esz);
        char *c = (char *)g->c + (size_t)(i * g->stride_c) * csz;
        float *cw = c32 ? (float *)c : cf;
        int ldw = c32 ? g->ldc : g->n;
        mm_c_start(g, c, cw, ldw);
        mm_half_sum(g, a, b, cw, ldw, ab, bb);
        if (!c32)
            mm_narrow(g, cf, (uint16_t *)c);
    }
    free(cf), free(ab), free(bb);
    return s;
}

static gx_status mm_host(const gx__gemm *g)
{
    if (gx__dtype_is_half(g->dtype))
        return mm_host_half(g);
    size_t esz = gx_dtype_size(g->dtype);
    const char *a = g->a, *b = g->b;
    char *c = g->c;
    for (int64_t i = 0; i < g->batch; i++)
        mm_cblas_one(g, a + (size_t)(i * g->stride_a) * esz, b + (size_t)(i * g->stride_b) * esz,
                     c + (size_t)(i * g->stride_c) * esz);
    return GX_OK;
}
#else
static gx_status mm_host(const gx__gemm *g)
{
    (void)g;
    return gx__err(GX_ERR_UNSUPPORTED, "gx_matmul: this gx was built without CBLAS, so the CPU backend has no matmul; "
                                       "install libopenblas-dev and rebuild gx (or use the CUDA backend)");
}
#endif

/* The call as a backend-neutral description (pointers are device addresses). */
static void mm_desc(const mm_call *mc, gx__gemm *g)
{
    memset(g, 0, sizeof *g);
    g->dtype = mc->dt, g->c_dtype = mc->cdt, g->math = mc->o.math, g->op_a = mc->A.op, g->op_b = mc->B.op;
    g->m = (int)mc->m, g->n = (int)mc->n, g->k = (int)mc->k, g->batch = (int)mc->batch;
    g->a = gx__array_ptr(mc->A.a), g->b = gx__array_ptr(mc->B.a), g->c = gx__array_ptr(mc->C.a);
    g->lda = (int)mc->A.ld, g->ldb = (int)mc->B.ld, g->ldc = (int)mc->C.ld;
    g->stride_a = mc->A.bstride, g->stride_b = mc->B.bstride, g->stride_c = mc->C.bstride;
    memcpy(g->alpha, mc->o.alpha, sizeof g->alpha);
    memcpy(g->beta, mc->o.beta, sizeof g->beta);
}

/* The backend's library when it has one, else CBLAS on host memory. */
static gx_status mm_dispatch(gx_ctx *ctx, const gx__gemm *g)
{
    if (gx__ctx_supports(ctx, GX__CAP_MATMUL))
        return ctx->be.iface->lib.gemm(&ctx->be, g);
    if (gx__ctx_supports(ctx, GX__CAP_HOST))
        return mm_host(g);
    return gx__err(GX_ERR_UNSUPPORTED, "gx_matmul: the %s backend has no matrix product", ctx->be.iface->name);
}

/* ------------------------------------------------------------ entry points */

static void mm_call_free(mm_call *mc)
{
    gx_array_release(mc->A.tmp);
    gx_array_release(mc->B.tmp);
    gx_array_release(mc->C.tmp);
}

static gx_status mm_run(gx_ctx *ctx, mm_call *mc)
{
    if (mc->m == 0 || mc->n == 0 || mc->batch == 0)
        return GX_OK;
    gx__gemm g;
    mm_desc(mc, &g);
    gx__range_push("gx_matmul"); /* NVTX: names the library's kernels in Nsight Systems */
    gx_status s = mm_dispatch(ctx, &g);
    gx__range_pop();
    if (s == GX_OK && mc->c_user)
        s = gx_array_copy_into(mc->C.a, mc->c_user);
    return s;
}

/* A scalar option as {re, im}: dtype GX_DTYPE_DEFAULT gives dflt. */
static gx_status mm_scalar(const gx_scalar *v, double dflt, double out[2], const char *what)
{
    out[0] = dflt;
    out[1] = 0;
    if (v->dtype == GX_DTYPE_DEFAULT)
        return GX_OK;
    if (gx__dtype_is_complex(v->dtype)) {
        out[0] = v->v.c[0];
        out[1] = v->v.c[1];
        return GX_OK;
    }
    if (gx_dtype_size(v->dtype) == 0)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_matmul: opts->%s has dtype %d, which is not a gx_dtype", what,
                       (int)v->dtype);
    out[0] = gx_scalar_to_f64(*v);
    return GX_OK;
}

static gx_status mm_opts_of(const gx_matmul_opts *opts, bool keep_beta, mm_opts *o)
{
    gx_matmul_opts z = {0};
    if (!opts)
        opts = &z;
    GX__OPTS_CHECK(opts, "gx_matmul");
    o->op_a = opts->op_a;
    o->op_b = opts->op_b;
    o->math = opts->math;
    o->dtype = opts->dtype;
    GX__CHECK(mm_scalar(&opts->alpha, 1, o->alpha, "alpha"));
    GX__CHECK(mm_scalar(&opts->beta, 0, o->beta, "beta"));
    if (!keep_beta)
        o->beta[0] = o->beta[1] = 0;
    return GX_OK;
}

static gx_status mm_into(const gx_array *a, const gx_array *b, const mm_opts *opts, gx_array *c)
{
    mm_opts o = *opts;
    GX__CHECK(mm_check(c, a, b, &o));
    mm_call mc;
    memset(&mc, 0, sizeof mc);
    GX__CHECK(mm_shapes(c, a, b, &o, &mc));
    if (!linalg_is_complex(mc.dt)) { /* conjugation means nothing for real numbers */
        mc.o.op_a = o.op_a == GX_OP_C ? GX_OP_T : o.op_a;
        mc.o.op_b = o.op_b == GX_OP_C ? GX_OP_T : o.op_b;
    }
    gx_ctx *ctx = c->ctx;
    gx__lock(ctx);
    gx_status s = mm_operand_make(a, mc.o.op_a, &mc.A);
    if (s == GX_OK)
        s = mm_operand_make(b, mc.o.op_b, &mc.B);
    if (s == GX_OK)
        s = mm_output(c, &mc);
    if (s == GX_OK)
        s = mm_run(ctx, &mc);
    mm_call_free(&mc);
    gx__unlock(ctx);
    return s;
}

gx_status gx_matmul_into(const gx_array *a, const gx_array *b, const gx_matmul_opts *opts, gx_array *out)
{
    mm_opts o;
    GX__CHECK(mm_opts_of(opts, true, &o));
    GX__ARG(out, "gx_matmul_into: out (C) must not be NULL (gx_matmul makes a new C)");
    return mm_into(a, b, &o, out);
}

gx_status gx_matmul(const gx_array *a, const gx_array *b, const gx_matmul_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_matmul: out must not be NULL (it receives the new C; gx_matmul_into writes yours)");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_matmul (a)"));
    GX__CHECK(gx__array_check(b, "gx_matmul (b)"));
    mm_opts o;
    GX__CHECK(mm_opts_of(opts, false, &o));
    if (a->ndim < 2 || b->ndim < 2)
        return gx__err(GX_ERR_SHAPE, "gx_matmul: a and b must be matrices (2-D) or batches (3-D); got %d-D and %d-D",
                       a->ndim, b->ndim);
    int64_t shape[3];
    int nd = a->ndim == 3 || b->ndim == 3 ? 3 : 2;
    if (nd == 3)
        shape[0] = a->ndim == 3 ? a->shape[0] : b->shape[0];
    shape[nd - 2] = o.op_a == GX_OP_N ? a->shape[a->ndim - 2] : a->shape[a->ndim - 1];
    shape[nd - 1] = o.op_b == GX_OP_N ? b->shape[b->ndim - 1] : b->shape[b->ndim - 2];
    gx_dtype cdt = o.dtype == GX_DTYPE_DEFAULT ? a->dtype : o.dtype;
    if (a->dtype != b->dtype || !mm_out_ok(a->dtype, cdt))
        return gx__err(GX_ERR_DTYPE,
                       "gx_matmul: a is %s, b is %s, opts->dtype %s: a and b must share one of f32, f64, c64, c128 "
                       "(C the same), or both be f16 or both bf16 (C the same or f32); convert with gx_array_clone",
                       gx_dtype_name(a->dtype), gx_dtype_name(b->dtype),
                       o.dtype == GX_DTYPE_DEFAULT ? "0 (a's)" : gx_dtype_name(o.dtype));
    o.dtype = GX_DTYPE_DEFAULT; /* c is made with it */
    gx_array *c = NULL;
    GX__CHECK(gx_array_zeros(a->ctx, cdt, nd, shape, &c));
    gx_status s = mm_into(a, b, &o, c);
    if (s != GX_OK)
        gx_array_release(c);
    else
        *out = c;
    return s;
}

gx_status gx_matmul_batched_into(int count, const gx_array *const *a, const gx_array *const *b,
                                 const gx_matmul_opts *opts, gx_array *const *out)
{
    GX__ARG(count >= 0, "gx_matmul_batched_into: count %d is negative", count);
    GX__ARG(count == 0 || (out && a && b), "gx_matmul_batched_into: a, b and out must not be NULL");
    mm_opts o;
    GX__CHECK(mm_opts_of(opts, true, &o));
    for (int i = 0; i < count; i++) {
        gx_status s = mm_into(a[i], b[i], &o, out[i]);
        if (s != GX_OK)
            return gx__err_prefix(s, "gx_matmul_batched_into (entry %d)", i);
    }
    return GX_OK;
}
