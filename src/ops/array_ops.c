/* array_ops.c -- the array operations that may need a generated kernel: host
 * transfers of any view (a strided one goes through a device staging array and the
 * copy kernel on CUDA), fill, zeros/ones, iota, copy and dtype conversion (clone).
 * They live in the ops layer, above the element-wise kernels (ewise.c); the core
 * (src/core/array.c) keeps what needs none: handles, views, dense creation. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/gx_internal.h"
#include "core/stream_priv.h"
#include "ops/ewise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ host transfers */

static bool is_cpu(const gx_ctx *ctx) { return gx__ctx_supports(ctx, GX__CAP_HOST); }
/* Host loops over device memory (the CPU's fill and strided copy) run at once: inside
 * a graph recording (gx/graph.h) the kernel path is taken instead, so it is replayed. */
static bool host_now(const gx_ctx *ctx) { return is_cpu(ctx) && !gx__graph_recording(ctx); }

/* Walks every element of a view in row-major order, calling fn with its byte offset
 * from the first element (host-side; used by the CPU backend and host staging). */
typedef void (*elem_fn)(void *user, int64_t byte_off, int64_t linear);
static void walk(const gx_array *a, elem_fn fn, void *user)
{
    if (a->size == 0)
        return;
    int64_t co[GX_MAX_DIMS] = {0}, esz = (int64_t)gx_dtype_size(a->dtype);
    for (int64_t i = 0; i < a->size; i++) {
        int64_t off = 0;
        for (int d = 0; d < a->ndim; d++)
            off += co[d] * a->strides[d];
        fn(user, off * esz, i);
        for (int d = a->ndim - 1; d >= 0; d--) {
            if (++co[d] < a->shape[d])
                break;
            co[d] = 0;
        }
    }
}

typedef struct xfer {
    char *view;
    char *host;
    size_t esz;
    bool to_host;
} xfer;
static void xfer_elem(void *u, int64_t off, int64_t i)
{
    xfer *x = u;
    if (x->to_host)
        memcpy(x->host + (size_t)i * x->esz, x->view + off, x->esz);
    else
        memcpy(x->view + off, x->host + (size_t)i * x->esz, x->esz);
}

static gx_status need_host_bytes(const gx_array *a, size_t host_bytes, const char *what)
{
    size_t need = (size_t)a->size * gx_dtype_size(a->dtype);
    if (host_bytes < need)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the host buffer has %zu bytes but the array needs %zu (%lld x %s)",
                       what, host_bytes, need, (long long)a->size, gx_dtype_name(a->dtype));
    return GX_OK;
}

/* Host data into any view: directly when dense, else through a dense staging array
 * on the device and an element-wise copy kernel. */
static gx_status upload(gx_array *a, const void *host)
{
    gx_ctx *ctx = a->ctx;
    size_t bytes = (size_t)a->size * gx_dtype_size(a->dtype);
    if (gx__graph_recording(ctx))
        return gx__graph_refuse(ctx, "gx_array_from_host_into (a host-to-device copy)",
                                "write the inputs before gx_graph_launch, outside the recording");
    if (a->size == 0)
        return GX_OK;
    if (gx__array_contiguous(a))
        return ctx->be.iface->mem.h2d(&ctx->be, gx__array_ptr(a), host, bytes);
    if (is_cpu(ctx)) {
        xfer x = {gx__array_ptr(a), (char *)(uintptr_t)host, gx_dtype_size(a->dtype), false};
        walk(a, xfer_elem, &x);
        return GX_OK;
    }
    gx_array *tmp;
    GX__CHECK(gx__array_new(ctx, a->dtype, a->ndim, a->shape, &tmp));
    gx_status s = ctx->be.iface->mem.h2d(&ctx->be, gx__array_ptr(tmp), host, bytes);
    if (s == GX_OK)
        s = gx_array_copy_into(tmp, a);
    gx__array_free(tmp);
    return s;
}

static gx_status download(const gx_array *a, void *host)
{
    gx_ctx *ctx = a->ctx;
    size_t bytes = (size_t)a->size * gx_dtype_size(a->dtype);
    if (gx__graph_recording(ctx))
        return gx__graph_refuse(ctx, "gx_array_to_host", "read the results after gx_graph_launch");
    if (a->size == 0)
        return ctx->be.iface->stream.sync(&ctx->be);
    if (gx__array_contiguous(a))
        return ctx->be.iface->mem.d2h(&ctx->be, host, gx__array_ptr(a), bytes);
    if (is_cpu(ctx)) {
        xfer x = {gx__array_ptr(a), host, gx_dtype_size(a->dtype), true};
        walk(a, xfer_elem, &x);
        return GX_OK;
    }
    gx_array *tmp;
    GX__CHECK(gx__array_new(ctx, a->dtype, a->ndim, a->shape, &tmp));
    gx_status s = gx_array_copy_into(a, tmp);
    if (s == GX_OK)
        s = ctx->be.iface->mem.d2h(&ctx->be, host, gx__array_ptr(tmp), bytes);
    gx__array_free(tmp);
    return s;
}

gx_status gx_array_to_host(const gx_array *a, void *host, size_t host_bytes)
{
    GX__CHECK(gx__array_check(a, "gx_array_to_host"));
    GX__CHECK(need_host_bytes(a, host_bytes, "gx_array_to_host"));
    GX__ARG(host || a->size == 0, "gx_array_to_host: host is NULL");
    gx__lock(a->ctx);
    gx_status s = download(a, host);
    gx__unlock(a->ctx);
    return s;
}

gx_status gx_array_from_host_into(const void *host, size_t host_bytes, gx_array *a)
{
    GX__CHECK(gx__array_check(a, "gx_array_from_host_into"));
    GX__CHECK(gx__array_writable(a, "gx_array_from_host_into"));
    GX__CHECK(need_host_bytes(a, host_bytes, "gx_array_from_host_into"));
    GX__ARG(host || a->size == 0, "gx_array_from_host_into: host is NULL");
    gx__lock(a->ctx);
    gx_status s = upload(a, host);
    gx__unlock(a->ctx);
    return s;
}

/* Asynchronous copies (into and out of gx_host_alloc memory, src/core/stream.c).
 * When one cannot be asynchronous it becomes the synchronous copy above, which may
 * need the copy kernel: that is why they live here, not in the core. */

/* Async is possible: a dense array, page-locked memory, a backend that can. */
static bool async_ok(const gx_array *a, const void *host, size_t n)
{
    gx_ctx *ctx = a->ctx;
    if (!gx__ctx_supports(ctx, GX__CAP_ASYNC_COPY))
        return false;
    return gx__array_contiguous(a) && n > 0 && gx__host_pinned(ctx, host, n);
}

gx_status gx_array_from_host_into_async(const void *host, size_t host_bytes, gx_array *a)
{
    GX__CHECK(gx__array_check(a, "gx_array_from_host_into_async"));
    GX__CHECK(gx__array_writable(a, "gx_array_from_host_into_async"));
    GX__ARG(host || a->size == 0, "gx_array_from_host_into_async: host must not be NULL");
    size_t n = (size_t)a->size * gx_dtype_size(a->dtype);
    GX__ARG(host_bytes >= n, "gx_array_from_host_into_async: host_bytes = %zu but the array needs %zu", host_bytes, n);
    gx_ctx *ctx = a->ctx;
    gx__lock(ctx);
    bool ok = async_ok(a, host, n);
    gx_status s = GX_OK;
    if (ok)
        s = ctx->be.iface->mem.h2d_async(&ctx->be, gx__array_ptr(a), host, n);
    gx__unlock(ctx);
    return ok ? s : gx_array_from_host_into(host, host_bytes, a);
}

gx_status gx_array_to_host_async(const gx_array *a, void *host, size_t host_bytes)
{
    GX__CHECK(gx__array_check(a, "gx_array_to_host_async"));
    GX__ARG(host || a->size == 0, "gx_array_to_host_async: host must not be NULL");
    size_t n = (size_t)a->size * gx_dtype_size(a->dtype);
    GX__ARG(host_bytes >= n, "gx_array_to_host_async: host_bytes = %zu but the array needs %zu", host_bytes, n);
    gx_ctx *ctx = a->ctx;
    gx__lock(ctx);
    bool ok = async_ok(a, host, n);
    gx_status s = GX_OK;
    if (ok)
        s = ctx->be.iface->mem.d2h_async(&ctx->be, host, gx__array_ptr(a), n);
    gx__unlock(ctx);
    return ok ? s : gx_array_to_host(a, host, host_bytes);
}

/* ------------------------------------------------------------ fill / iota */

static void to_cval(gx_dtype t, const void *value, ew_cval *c)
{
    double f = gx__dtype_to_f64(t, value);
    if (gx__dtype_is_float(t))
        c->f = f;
    else if (t == GX_I64)
        memcpy(&c->i, value, 8);
    else if (t == GX_U64)
        memcpy(&c->u, value, 8);
    else
        c->i = (int64_t)f; /* narrower integers and bool are exact in a double */
}

typedef struct fillx {
    const void *value;
    size_t esz;
    char *base;
} fillx;
static void fill_elem(void *u, int64_t off, int64_t i)
{
    (void)i;
    fillx *f = u;
    memcpy(f->base + off, f->value, f->esz);
}

/* Constants travel as doubles: a complex value is two of them (re, im). */
static gx_status fill_complex_device(gx_ctx *ctx, ew_plan *pl, gx_dtype t, const void *value)
{
    double re, im;
    if (t == GX_C64) {
        float z[2];
        memcpy(z, value, sizeof z);
        re = z[0], im = z[1];
    } else {
        double z[2];
        memcpy(z, value, sizeof z);
        re = z[0], im = z[1];
    }
    pl->nconst = 2;
    pl->cdt[0] = pl->cdt[1] = GX_F64;
    pl->args.c[0].f = re;
    pl->args.c[1].f = im;
    return ew_run(ctx, pl, t == GX_C64 ? "c32((float)c0, (float)c1)" : "c64(c0, c1)", NULL, "gx_fill");
}

static gx_status fill_locked(gx_array *a, const void *value)
{
    gx_ctx *ctx = a->ctx;
    if (a->size == 0)
        return GX_OK;
    if (host_now(ctx) && gx__array_contiguous(a)) {
        /* Dense: write one element, then double the filled prefix with memcpy. */
        char *p = gx__array_ptr(a);
        size_t esz = gx_dtype_size(a->dtype), total = (size_t)a->size * esz, done = esz;
        memcpy(p, value, esz);
        while (done < total) {
            size_t n = done < total - done ? done : total - done;
            memcpy(p + done, p, n);
            done += n;
        }
        return GX_OK;
    }
    if (host_now(ctx)) {
        fillx f = {value, gx_dtype_size(a->dtype), gx__array_ptr(a)};
        walk(a, fill_elem, &f);
        return GX_OK;
    }
    ew_plan pl;
    GX__CHECK(ew_plan_make(&pl, a, 0, NULL));
    if (a->dtype == GX_C64 || a->dtype == GX_C128)
        return fill_complex_device(ctx, &pl, a->dtype, value);
    pl.nconst = 1;
    pl.cdt[0] = a->dtype;
    to_cval(a->dtype, value, &pl.args.c[0]);
    return ew_run(ctx, &pl, "c0", NULL, "gx_fill");
}

gx_status gx_array_fill(gx_array *a, const void *value)
{
    GX__CHECK(gx__array_check(a, "gx_array_fill"));
    GX__CHECK(gx__array_writable(a, "gx_array_fill"));
    GX__ARG(value, "gx_array_fill: value is NULL (pass a pointer to one element of the array's dtype)");
    gx__lock(a->ctx);
    gx_status s = fill_locked(a, value);
    gx__unlock(a->ctx);
    return s;
}

gx_status gx_array_fill_f64(gx_array *a, double value)
{
    GX__CHECK(gx__array_check(a, "gx_array_fill_f64"));
    unsigned char buf[16];
    gx__dtype_from_f64(a->dtype, value, buf);
    return gx_array_fill(a, buf);
}

static gx_status make_filled(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, double v, gx_array **out)
{
    GX__ARG(out, "out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    gx_array *a = NULL;
    gx_status s = gx__array_new(ctx, dtype, ndim, shape, &a);
    if (s == GX_OK) {
        unsigned char buf[16];
        gx__dtype_from_f64(dtype, v, buf);
        s = fill_locked(a, buf);
    }
    if (s != GX_OK && a)
        gx__array_free(a);
    else
        *out = a;
    gx__unlock(ctx);
    return s;
}

gx_status gx_array_zeros(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out)
{
    return make_filled(ctx, dtype, ndim, shape, 0.0, out);
}

gx_status gx_array_ones(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out)
{
    return make_filled(ctx, dtype, ndim, shape, 1.0, out);
}

/* iota on the host (CPU backend): floats through double, integers in wrapping
 * 64-bit arithmetic, so both backends give the same values. */
static void iota_host(gx_array *a, double start, double step)
{
    char *p = gx__array_ptr(a);
    size_t esz = gx_dtype_size(a->dtype);
    unsigned char buf[16];
    bool fl = gx__dtype_is_float(a->dtype);
    int64_t s0 = 0, d0 = 0;
    if (!fl) {
        gx__dtype_from_f64(GX_I64, start, &s0);
        gx__dtype_from_f64(GX_I64, step, &d0);
    }
    for (int64_t i = 0; i < a->size; i++) {
        if (fl) {
            gx__dtype_from_f64(a->dtype, start + (double)i * step, buf);
        } else {
            uint64_t v = (uint64_t)s0 + (uint64_t)i * (uint64_t)d0;
            memcpy(buf, &v, 8); /* little-endian: the low bytes are the narrow value */
            if (a->dtype == GX_BOOL)
                buf[0] = v != 0;
        }
        memcpy(p + (size_t)i * esz, buf, esz);
    }
}

static gx_status iota_device(gx_array *a, double start, double step)
{
    ew_plan pl;
    GX__CHECK(ew_plan_make(&pl, a, 0, NULL));
    pl.nconst = 2;
    const char *expr;
    if (gx__dtype_is_float(a->dtype)) {
        pl.cdt[0] = pl.cdt[1] = GX_F64;
        pl.args.c[0].f = start;
        pl.args.c[1].f = step;
        expr = "c0 + (double)gx_idx * c1";
    } else {
        pl.cdt[0] = pl.cdt[1] = GX_I64;
        gx__dtype_from_f64(GX_I64, start, &pl.args.c[0].i);
        gx__dtype_from_f64(GX_I64, step, &pl.args.c[1].i);
        expr = a->dtype == GX_BOOL ? "((uint64_t)c0 + (uint64_t)gx_idx * (uint64_t)c1) != 0"
                                   : "(uint64_t)c0 + (uint64_t)gx_idx * (uint64_t)c1";
    }
    return ew_run(a->ctx, &pl, expr, NULL, "gx_iota");
}

gx_status gx_array_iota(gx_ctx *ctx, gx_dtype dtype, int64_t count, double start, double step, gx_array **out)
{
    GX__ARG(out, "gx_array_iota: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    if (count < 0)
        return gx__err(GX_ERR_SHAPE, "gx_array_iota: count %lld is negative", (long long)count);
    if (dtype == GX_C64 || dtype == GX_C128)
        return gx__err(GX_ERR_DTYPE,
                       "gx_array_iota: complex dtype %s is not supported; make a real iota and "
                       "convert it with gx_array_clone",
                       gx_dtype_name(dtype));
    gx__lock(ctx);
    gx_array *a = NULL;
    gx_status s = gx__array_new(ctx, dtype, 1, &count, &a);
    if (s == GX_OK && count > 0) {
        if (host_now(ctx))
            iota_host(a, start, step);
        else
            s = iota_device(a, start, step);
    }
    if (s != GX_OK && a)
        gx__array_free(a);
    else
        *out = a;
    gx__unlock(ctx);
    return s;
}

/* ------------------------------------------------------------ copies */

/* CPU strided copy: walks dst, computes src offsets with a second odometer. */
static void cpu_copy(gx_array *dst, const gx_array *src)
{
    int64_t co[GX_MAX_DIMS] = {0};
    size_t esz = gx_dtype_size(dst->dtype);
    char *d0 = gx__array_ptr(dst);
    const char *s0 = gx__array_ptr(src);
    for (int64_t i = 0; i < dst->size; i++) {
        int64_t od = 0, os = 0;
        for (int d = 0; d < dst->ndim; d++) {
            od += co[d] * dst->strides[d];
            os += co[d] * src->strides[d];
        }
        memcpy(d0 + od * (int64_t)esz, s0 + os * (int64_t)esz, esz);
        for (int d = dst->ndim - 1; d >= 0; d--) {
            if (++co[d] < dst->shape[d])
                break;
            co[d] = 0;
        }
    }
}

static gx_status copy_locked(gx_array *dst, const gx_array *src)
{
    gx_ctx *ctx = dst->ctx;
    if (dst->size == 0 || (dst->st == src->st && gx__array_same_layout(dst, src)))
        return GX_OK;
    if (gx__array_contiguous(dst) && gx__array_contiguous(src))
        return ctx->be.iface->mem.d2d(&ctx->be, gx__array_ptr(dst), gx__array_ptr(src),
                                      (size_t)dst->size * gx_dtype_size(dst->dtype));
    if (host_now(ctx)) {
        cpu_copy(dst, src);
        return GX_OK;
    }
    ew_plan pl;
    gx_array *in[1] = {(gx_array *)src};
    GX__CHECK(ew_plan_make(&pl, dst, 1, in));
    return ew_run(ctx, &pl, "v0", NULL, "gx_copy");
}

static gx_status same_shape(const gx_array *a, const gx_array *b, const char *what)
{
    if (gx__same_shape(a, b))
        return GX_OK;
    char s1[160], s2[160];
    gx__shape_str(s1, sizeof s1, a->ndim, a->shape);
    gx__shape_str(s2, sizeof s2, b->ndim, b->shape);
    return gx__err(GX_ERR_SHAPE, "%s: shapes differ: destination %s vs source %s", what, s1, s2);
}

gx_status gx_array_copy_into(const gx_array *src, gx_array *dst)
{
    GX__CHECK(gx__array_check(dst, "gx_array_copy_into (dst)"));
    GX__CHECK(gx__array_writable(dst, "gx_array_copy_into (dst)"));
    GX__CHECK(gx__array_check(src, "gx_array_copy_into (src)"));
    if (dst->ctx != src->ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "gx_array_copy_into: the arrays belong to different contexts; copy through the host");
    GX__CHECK(same_shape(dst, src, "gx_array_copy_into"));
    if (dst->dtype != src->dtype)
        return gx__err(GX_ERR_DTYPE, "gx_array_copy_into: dtypes differ (%s <- %s); use gx_array_clone to convert",
                       gx_dtype_name(dst->dtype), gx_dtype_name(src->dtype));
    if (gx__arrays_overlap(dst, src))
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_array_copy_into: source and destination overlap in one storage; "
                                                "clone the source first");
    gx__lock(dst->ctx);
    gx_status s = copy_locked(dst, src);
    gx__unlock(dst->ctx);
    return s;
}

/* C conversion, except bool (!= 0) and complex: a real value becomes (v, 0), a
 * complex one converts part by part. */
static const char *convert_expr(gx_dtype from, gx_dtype to)
{
    bool cf = from == GX_C64 || from == GX_C128;
    if (to == GX_C64)
        return cf ? "c32((float)v0.re, (float)v0.im)" : "c32((float)v0, 0.0f)";
    if (to == GX_C128)
        return cf ? "c64((double)v0.re, (double)v0.im)" : "c64((double)v0, 0.0)";
    return to == GX_BOOL ? "v0 != 0" : "v0";
}

gx_status gx_array_clone(const gx_array *a, gx_dtype dtype, gx_array **out)
{
    GX__ARG(out, "gx_array_clone: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_array_clone"));
    if (dtype == GX_DTYPE_DEFAULT)
        dtype = a->dtype;
    if ((a->dtype == GX_C64 || a->dtype == GX_C128) && dtype != GX_C64 && dtype != GX_C128)
        return gx__err(GX_ERR_DTYPE,
                       "gx_array_clone: converting complex %s to real %s would drop the imaginary part; "
                       "take re(x) or abs(x) with gx_map instead",
                       gx_dtype_name(a->dtype), gx_dtype_name(dtype));
    gx_ctx *ctx = a->ctx;
    gx__lock(ctx);
    gx_array *c = NULL;
    gx_status s = gx__array_new(ctx, dtype, a->ndim, a->shape, &c);
    if (s == GX_OK && dtype == a->dtype) {
        s = copy_locked(c, a);
    } else if (s == GX_OK && c->size > 0) {
        /* Conversion: an element-wise kernel with C's conversion (bool: != 0). */
        ew_plan pl;
        gx_array *in[1] = {(gx_array *)a};
        s = ew_plan_make(&pl, c, 1, in);
        if (s == GX_OK)
            s = ew_run(ctx, &pl, convert_expr(a->dtype, dtype), NULL, "gx_convert");
    }
    if (s != GX_OK && c)
        gx__array_free(c);
    else
        *out = c;
    gx__unlock(ctx);
    return s;
}
