/* fft.c -- gx_fft / gx_rfft / gx_irfft: the backend's lib.fft where it has one
 * (cuFFT on CUDA), else, on a backend that runs on the host, KissFFT (c64) and gx's
 * own mixed-radix transform (c128, and c64 when KissFFT is absent).
 *
 * Host plan: an N-d transform is 1-d transforms along each transformed axis, lines
 * spread over the backend's worker threads.  Real transforms run the last axis as a
 * complex transform of the real line (r2c keeps n/2 + 1 bins; c2r rebuilds the
 * Hermitian spectrum first).  Scaling is one element-wise kernel at the end. */
#include "linalg/linalg_priv.h"
#include "ops/ewise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GX_HAVE_KISSFFT
#define kiss_fft_scalar float
#include <kiss_fft.h>
#endif

typedef enum fft_kind { FFT_C2C, FFT_R2C, FFT_C2R } fft_kind;

typedef struct fft_req {
    fft_kind kind;
    int rank;
    bool inverse;
    gx_fft_norm norm;
    const gx_array *in;
    int64_t n_last; /* C2R: the real length of the last axis */
} fft_req;

/* ------------------------------------------------------------ gx's own transform (double) */

typedef struct fz {
    double re, im;
} fz;

static int64_t fft_factor(int64_t n)
{
    if (n % 4 == 0 && n > 4)
        return 4;
    for (int64_t p = 2; p * p <= n; p++)
        if (n % p == 0)
            return p;
    return n;
}

/* y[0..n) = DFT of x[0], x[xs], ...; tw[j] = exp(sign 2 pi i j / N) with n | N;
 * tmp holds at least the largest radix.  Decimation in time, any radix. */
static void zfft_rec(const fz *x, int64_t xs, fz *y, int64_t n, int64_t N, const fz *tw, fz *tmp)
{
    if (n == 1) {
        y[0] = x[0];
        return;
    }
    int64_t p = fft_factor(n), m = n / p, step = N / n, wp = N / p;
    for (int64_t r = 0; r < p; r++)
        zfft_rec(x + r * xs, xs * p, y + r * m, m, N, tw, tmp);
    for (int64_t k = 0; k < m; k++) {
        for (int64_t r = 0; r < p; r++) {
            fz a = y[r * m + k], w = tw[r * k * step];
            tmp[r] = (fz){a.re * w.re - a.im * w.im, a.re * w.im + a.im * w.re};
        }
        for (int64_t q = 0; q < p; q++) {
            double sr = 0, si = 0;
            for (int64_t r = 0, e = 0; r < p; r++, e = (e + q) % p) {
                fz w = tw[e * wp];
                sr += tmp[r].re * w.re - tmp[r].im * w.im;
                si += tmp[r].re * w.im + tmp[r].im * w.re;
            }
            y[q * m + k] = (fz){sr, si};
        }
    }
}

static fz *fft_twiddles(int64_t n, bool inverse)
{
    fz *tw = malloc((size_t)n * sizeof *tw);
    for (int64_t j = 0; tw && j < n; j++) {
        double t = (inverse ? 6.283185307179586477 : -6.283185307179586477) * (double)j / (double)n;
        tw[j] = (fz){cos(t), sin(t)};
    }
    return tw;
}

/* ------------------------------------------------------------ CPU lines */

typedef struct fft_axis_job {
    fft_kind kind; /* C2C: in place on dst; R2C / C2R: last axis, src -> dst */
    gx_dtype cdt;  /* the complex dtype involved */
    int64_t n;     /* transform length */
    int64_t inner; /* C2C: element stride of the axis in dst */
    int64_t src_len, dst_len;
    const char *src;
    char *dst;
    bool inverse;
    const fz *tw;
    void *kcfg;    /* KissFFT plan for c64 (NULL: use tw) */
    char *scratch; /* per worker: scratch_per bytes */
    size_t scratch_per;
} fft_axis_job;

static fz ld_c(gx_dtype t, const char *p, int64_t i)
{
    if (t == GX_C64) {
        float v[2];
        memcpy(v, p + i * 8, 8);
        return (fz){v[0], v[1]};
    }
    fz z;
    memcpy(&z, p + i * 16, 16);
    return z;
}

static void st_c(gx_dtype t, char *p, int64_t i, fz z)
{
    if (t == GX_C64) {
        float v[2] = {(float)z.re, (float)z.im};
        memcpy(p + i * 8, v, 8);
    } else {
        memcpy(p + i * 16, &z, 16);
    }
}

static void fft_line(const fft_axis_job *j, fz *X, fz *Y, fz *T)
{
#ifdef GX_HAVE_KISSFFT
    if (j->kcfg) {
        kiss_fft_cpx *kx = (kiss_fft_cpx *)T, *ky = kx + j->n;
        for (int64_t i = 0; i < j->n; i++)
            kx[i].r = (float)X[i].re, kx[i].i = (float)X[i].im;
        kiss_fft((kiss_fft_cfg)j->kcfg, kx, ky);
        for (int64_t i = 0; i < j->n; i++)
            Y[i] = (fz){ky[i].r, ky[i].i};
        return;
    }
#endif
    zfft_rec(X, 1, Y, j->n, j->n, j->tw, T);
}

static void fft_line_io(const fft_axis_job *j, int64_t L, fz *X, fz *Y, fz *T)
{
    int64_t n = j->n;
    gx_dtype rdt = linalg_real_of(j->cdt);
    if (j->kind == FFT_C2C) {
        int64_t base = (L / j->inner) * n * j->inner + L % j->inner;
        for (int64_t i = 0; i < n; i++)
            X[i] = ld_c(j->cdt, j->dst, base + i * j->inner);
        fft_line(j, X, Y, T);
        for (int64_t i = 0; i < n; i++)
            st_c(j->cdt, j->dst, base + i * j->inner, Y[i]);
    } else if (j->kind == FFT_R2C) {
        const char *s = j->src + (size_t)(L * j->src_len) * gx_dtype_size(rdt);
        for (int64_t i = 0; i < n; i++)
            X[i] = (fz){rdt == GX_F32 ? ((const float *)s)[i] : ((const double *)s)[i], 0};
        fft_line(j, X, Y, T);
        for (int64_t i = 0; i < j->dst_len; i++)
            st_c(j->cdt, j->dst, L * j->dst_len + i, Y[i]);
    } else {
        int64_t h = j->src_len;
        for (int64_t i = 0; i < h && i < n; i++)
            X[i] = ld_c(j->cdt, j->src, L * h + i);
        X[0].im = 0;
        if (n % 2 == 0)
            X[n / 2].im = 0;
        for (int64_t i = h; i < n; i++)
            X[i] = (fz){X[n - i].re, -X[n - i].im};
        fft_line(j, X, Y, T);
        char *d = j->dst + (size_t)(L * j->dst_len) * gx_dtype_size(rdt);
        for (int64_t i = 0; i < n; i++) {
            if (rdt == GX_F32)
                ((float *)d)[i] = (float)Y[i].re;
            else
                ((double *)d)[i] = Y[i].re;
        }
    }
}

static void fft_lines(const void *args, int64_t begin, int64_t end, int thread)
{
    const fft_axis_job *j = args;
    fz *X = (fz *)(j->scratch + (size_t)thread * j->scratch_per), *Y = X + j->n, *T = Y + j->n;
    for (int64_t L = begin; L < end; L++)
        fft_line_io(j, L, X, Y, T);
}

static gx_status fft_run_axis(gx_ctx *ctx, fft_axis_job *j, int64_t nlines)
{
    if (nlines == 0 || j->n == 0)
        return GX_OK;
    int workers = gx__ctx_workers(ctx);
    /* X, Y and a radix/Kiss buffer (2n floats pairs fit in n fz). */
    j->scratch_per = (size_t)(3 * j->n) * sizeof(fz);
    j->scratch = malloc(j->scratch_per * (size_t)workers);
    fz *tw = NULL;
    gx_status s = GX_OK;
#ifdef GX_HAVE_KISSFFT
    if (j->cdt == GX_C64 && j->n <= INT32_MAX)
        j->kcfg = kiss_fft_alloc((int)j->n, j->inverse, NULL, NULL);
#endif
    if (!j->kcfg)
        j->tw = tw = fft_twiddles(j->n, j->inverse);
    if (!j->scratch || (!j->kcfg && !tw))
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "gx_fft: out of host memory for a %lld-point transform", (long long)j->n);
    if (s == GX_OK) {
        void (*fn)(const void *, int64_t, int64_t, int) = fft_lines;
        gx__func f;
        memcpy(&f, &fn, sizeof f);
        gx__launch l;
        memset(&l, 0, sizeof l);
        l.n = nlines, l.cpu_align = 1, l.args = j, l.args_size = sizeof *j;
        s = ctx->be.iface->launch.run(&ctx->be, f, &l);
    }
#ifdef GX_HAVE_KISSFFT
    if (j->kcfg)
        kiss_fft_free(j->kcfg);
#endif
    free(tw);
    free(j->scratch);
    return s;
}

/* src/dst are dense; dst has the result's shape. */
static gx_status fft_host(gx_ctx *ctx, const fft_req *r, const gx_array *src, gx_array *dst)
{
    const gx_array *cplx = r->kind == FFT_C2R ? src : dst; /* the complex-shaped array */
    int nd = cplx->ndim, last = nd - 1;
    fft_axis_job j;
    memset(&j, 0, sizeof j);
    j.cdt = cplx->dtype;
    j.inverse = r->inverse;
    if (r->kind == FFT_C2C && dst != src)
        GX__CHECK(gx_array_copy_into(src, dst));
    if (r->kind == FFT_R2C) {
        j.kind = FFT_R2C, j.n = src->shape[last], j.src_len = j.n, j.dst_len = dst->shape[last];
        j.src = gx__array_ptr(src), j.dst = gx__array_ptr(dst);
        GX__CHECK(fft_run_axis(ctx, &j, src->shape[last] ? src->size / src->shape[last] : 0));
    }
    /* The complex axes: every transformed axis, except the last one of a real transform. */
    char *cdata = r->kind == FFT_C2R ? (char *)gx__array_ptr(src) : (char *)gx__array_ptr(dst);
    int hi = r->kind == FFT_C2C ? last : last - 1;
    int64_t inner = 1;
    for (int d = last; d > hi; d--)
        inner *= cplx->shape[d];
    for (int d = hi; d > last - r->rank; d--) {
        memset(&j, 0, sizeof j);
        j.kind = FFT_C2C, j.cdt = cplx->dtype, j.inverse = r->inverse;
        j.n = cplx->shape[d], j.inner = inner, j.dst = cdata;
        GX__CHECK(fft_run_axis(ctx, &j, j.n ? cplx->size / j.n : 0));
        inner *= cplx->shape[d];
    }
    if (r->kind == FFT_C2R) {
        memset(&j, 0, sizeof j);
        j.kind = FFT_C2R, j.cdt = src->dtype, j.inverse = true;
        j.n = dst->shape[last], j.src_len = src->shape[last], j.dst_len = j.n;
        j.src = gx__array_ptr(src), j.dst = gx__array_ptr(dst);
        GX__CHECK(fft_run_axis(ctx, &j, dst->shape[last] ? dst->size / dst->shape[last] : 0));
    }
    return GX_OK;
}

/* ------------------------------------------------------------ backend library */

/* The request as the backend's lib.fft takes it: the logical (full-length) shape's
 * last rank axes, the others as the batch. */
static void fft_desc(const fft_req *rq, const gx_array *src, gx_array *dst, gx__fft *f)
{
    const gx_array *real = rq->kind == FFT_C2R ? dst : src;
    const gx_array *shp = rq->kind == FFT_C2C ? src : real;
    memset(f, 0, sizeof *f);
    f->kind = rq->kind == FFT_C2C ? GX__FFT_C2C : rq->kind == FFT_R2C ? GX__FFT_R2C : GX__FFT_C2R;
    f->dbl = src->dtype == GX_C128 || src->dtype == GX_F64;
    f->inverse = rq->inverse;
    f->rank = rq->rank;
    int nd = shp->ndim;
    for (int d = 0; d < rq->rank; d++)
        f->dims[d] = shp->shape[nd - rq->rank + d];
    f->batch = 1;
    for (int d = 0; d < nd - rq->rank; d++)
        f->batch *= shp->shape[d];
    f->in = gx__array_ptr(src);
    f->out = gx__array_ptr(dst);
}

/* The backend's library when it has one, else the transform on host memory. */
static gx_status fft_dispatch(gx_ctx *ctx, const fft_req *r, const gx_array *src, gx_array *dst)
{
    if (gx__ctx_supports(ctx, GX__CAP_FFT)) {
        gx__fft f;
        fft_desc(r, src, dst, &f);
        return ctx->be.iface->lib.fft(&ctx->be, &f);
    }
    if (gx__ctx_supports(ctx, GX__CAP_HOST))
        return fft_host(ctx, r, src, dst);
    return gx__err(GX_ERR_UNSUPPORTED, "gx_fft: the %s backend has no FFT", ctx->be.iface->name);
}

/* ------------------------------------------------------------ entry points */

static double fft_scale(const fft_req *r, double N)
{
    switch (r->norm) {
    case GX_FFT_NORM_ORTHO: return 1.0 / sqrt(N);
    case GX_FFT_NORM_FORWARD: return r->inverse ? 1.0 : 1.0 / N;
    case GX_FFT_NORM_NONE: return 1.0;
    default: return r->inverse ? 1.0 / N : 1.0;
    }
}

/* Multiplies every scalar of dense `a` (complex parts alike) by f. */
static gx_status fft_apply_scale(gx_array *a, double f)
{
    if (f == 1.0 || a->size == 0)
        return GX_OK;
    gx_array v = *a; /* a private real-typed view of the same bytes, never registered */
    int parts = linalg_is_complex(a->dtype) ? 2 : 1;
    v.dtype = linalg_real_of(a->dtype);
    v.ndim = 1, v.shape[0] = a->size * parts, v.strides[0] = 1, v.offset = a->offset * parts, v.size = v.shape[0];
    ew_plan pl;
    gx_array *in[1] = {&v};
    GX__CHECK(ew_plan_make(&pl, &v, 1, in));
    pl.nconst = 1;
    pl.cdt[0] = GX_F64;
    pl.args.c[0].f = f;
    return ew_run(a->ctx, &pl, v.dtype == GX_F32 ? "(float)((double)v0 * c0)" : "v0 * c0", NULL, "gx_fft_scale");
}

/* The result's dtype and shape; validates the request. */
static gx_status fft_result(const fft_req *r, gx_dtype *dt, int64_t *shape, const char *what)
{
    const gx_array *in = r->in;
    if (r->rank < 1 || r->rank > 3 || r->rank > in->ndim)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: rank %d; transforms run over the last 1, 2 or 3 axes of a %d-D array", what, r->rank,
                       in->ndim);
    if ((unsigned)r->norm > GX_FFT_NORM_NONE)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: norm %d is not a gx_fft_norm", what, (int)r->norm);
    bool cin = linalg_is_complex(in->dtype), rin = in->dtype == GX_F32 || in->dtype == GX_F64;
    if ((r->kind == FFT_R2C && !rin) || (r->kind != FFT_R2C && !cin))
        return gx__err(GX_ERR_DTYPE, "%s: input dtype %s; it takes %s", what, gx_dtype_name(in->dtype),
                       r->kind == FFT_R2C ? "f32 or f64 (use gx_fft for complex input)" : "c64 or c128");
    memcpy(shape, in->shape, sizeof(int64_t) * (size_t)in->ndim);
    int last = in->ndim - 1;
    *dt = in->dtype;
    if (r->kind == FFT_R2C) {
        *dt = in->dtype == GX_F32 ? GX_C64 : GX_C128;
        shape[last] = in->shape[last] / 2 + 1;
        if (in->shape[last] == 0)
            return gx__err(GX_ERR_SHAPE, "%s: the last axis has length 0", what);
    } else if (r->kind == FFT_C2R) {
        *dt = linalg_real_of(in->dtype);
        if (r->n_last < 1 || r->n_last / 2 + 1 != in->shape[last])
            return gx__err(GX_ERR_SHAPE,
                           "%s: n_last %lld needs a last input axis of n_last/2 + 1 = %lld, but it is %lld", what,
                           (long long)r->n_last, (long long)(r->n_last / 2 + 1), (long long)in->shape[last]);
        shape[last] = r->n_last;
    }
    return GX_OK;
}

static gx_status fft_out(gx_ctx *ctx, gx_dtype dt, int nd, const int64_t *shape, gx_array **out, bool *made,
                         const char *what)
{
    *made = false;
    if (!*out) {
        GX__CHECK(gx__array_new(ctx, dt, nd, shape, out));
        *made = true;
        return GX_OK;
    }
    GX__CHECK(gx__array_check(*out, what));
    GX__CHECK(gx__array_writable(*out, what));
    bool ok = (*out)->ctx == ctx && (*out)->dtype == dt && (*out)->ndim == nd;
    for (int d = 0; ok && d < nd; d++)
        ok = (*out)->shape[d] == shape[d];
    if (!ok) {
        char a[96], b[96];
        gx__shape_str(a, sizeof a, (*out)->ndim, (*out)->shape);
        gx__shape_str(b, sizeof b, nd, shape);
        return gx__err(GX_ERR_SHAPE, "%s: out is %s %s but the result is %s %s (same context)", what,
                       gx_dtype_name((*out)->dtype), a, gx_dtype_name(dt), b);
    }
    return GX_OK;
}

/* src: dense input (a copy for C2R, which both libraries overwrite); dst: dense output. */
static gx_status fft_exec(gx_ctx *ctx, const fft_req *r, const gx_array *src, gx_array *dst)
{
    if (dst->size == 0)
        return GX_OK;
    gx__range_push("gx_fft");
    gx_status s = fft_dispatch(ctx, r, src, dst);
    gx__range_pop();
    if (s != GX_OK)
        return s;
    const gx_array *full = r->kind == FFT_R2C ? src : r->kind == FFT_C2R ? dst : dst;
    double N = 1;
    for (int d = full->ndim - r->rank; d < full->ndim; d++)
        N *= (double)full->shape[d];
    return fft_apply_scale(dst, fft_scale(r, N));
}

/* *out NULL: a new result; else the caller's array (the *_into forms). */
static gx_status fft_do(fft_req *r, gx_array **out, const char *what)
{
    GX__CHECK(gx__array_check(r->in, what));
    gx_dtype dt = GX_F32;
    int64_t shape[GX_MAX_DIMS];
    GX__CHECK(fft_result(r, &dt, shape, what));
    gx_ctx *ctx = r->in->ctx;
    gx__lock(ctx);
    bool made = false;
    gx_array *src = NULL, *dst = NULL;
    gx_status s = fft_out(ctx, dt, r->in->ndim, shape, out, &made, what);
    if (s == GX_OK && r->kind == FFT_C2R) {
        s = gx_array_clone(r->in, GX_DTYPE_DEFAULT, &src); /* the transform destroys its input */
    } else if (s == GX_OK) {
        s = linalg_dense(r->in, &src);
    }
    if (s == GX_OK && !gx__array_contiguous(*out)) {
        linalg_count_copy();
        s = gx__array_new(ctx, dt, r->in->ndim, shape, &dst);
    }
    if (s == GX_OK)
        s = fft_exec(ctx, r, src ? src : r->in, dst ? dst : *out);
    if (s == GX_OK && dst)
        s = gx_array_copy_into(dst, *out);
    gx_array_release(src);
    gx_array_release(dst);
    if (s != GX_OK && made) {
        gx_array_release(*out);
        *out = NULL;
    }
    gx__unlock(ctx);
    return s;
}

/* The new-array and *_into entry points of one transform. */
static gx_status fft_new(fft_req *r, gx_array **out, const char *what)
{
    GX__ARG(out, "%s: out must not be NULL (it receives the new array; %s_into writes yours)", what, what);
    *out = NULL;
    return fft_do(r, out, what);
}

static gx_status fft_into(fft_req *r, gx_array *out, const char *what)
{
    GX__ARG(out, "%s: out must not be NULL", what);
    return fft_do(r, &out, what);
}

static gx_status fft_dir_ok(gx_fft_dir dir, const char *what)
{
    GX__ARG(dir == GX_FFT_FORWARD || dir == GX_FFT_INVERSE, "%s: dir must be GX_FFT_FORWARD or GX_FFT_INVERSE", what);
    return GX_OK;
}

gx_status gx_fft(const gx_array *in, int rank, gx_fft_dir dir, gx_fft_norm norm, gx_array **out)
{
    GX__CHECK(fft_dir_ok(dir, "gx_fft"));
    fft_req r = {FFT_C2C, rank, dir == GX_FFT_INVERSE, norm, in, 0};
    return fft_new(&r, out, "gx_fft");
}

gx_status gx_fft_into(const gx_array *in, int rank, gx_fft_dir dir, gx_fft_norm norm, gx_array *out)
{
    GX__CHECK(fft_dir_ok(dir, "gx_fft_into"));
    fft_req r = {FFT_C2C, rank, dir == GX_FFT_INVERSE, norm, in, 0};
    return fft_into(&r, out, "gx_fft_into");
}

gx_status gx_rfft(const gx_array *in, int rank, gx_fft_norm norm, gx_array **out)
{
    fft_req r = {FFT_R2C, rank, false, norm, in, 0};
    return fft_new(&r, out, "gx_rfft");
}

gx_status gx_rfft_into(const gx_array *in, int rank, gx_fft_norm norm, gx_array *out)
{
    fft_req r = {FFT_R2C, rank, false, norm, in, 0};
    return fft_into(&r, out, "gx_rfft_into");
}

gx_status gx_irfft(const gx_array *in, int rank, int64_t n_last, gx_fft_norm norm, gx_array **out)
{
    fft_req r = {FFT_C2R, rank, true, norm, in, n_last};
    return fft_new(&r, out, "gx_irfft");
}

gx_status gx_irfft_into(const gx_array *in, int rank, int64_t n_last, gx_fft_norm norm, gx_array *out)
{
    fft_req r = {FFT_C2R, rank, true, norm, in, n_last};
    return fft_into(&r, out, "gx_irfft_into");
}
