/* array.c -- arrays: creation, storage sharing, views, host transfers, copies.
 *
 * An array is a view (shape, strides, offset) over reference-counted storage; a
 * view made from another shares the storage and keeps it alive.  Every handle lives
 * on its context's list so that gx_ctx_destroy can release what the user forgot,
 * after which the old handles read as invalid instead of dangling. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/gx_internal.h"
#include "ops/ewise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ checks */

gx_status gx__array_check(const gx_array *a, const char *what)
{
    if (!a)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the array is NULL", what);
    if (!gx__handle_live(a) || a->magic != GX__ARRAY_MAGIC)
        return gx__err(GX_ERR_INVALID_HANDLE,
                       "%s: the array handle is not live (released already, its context destroyed, or not made by gx)", what);
    return GX_OK;
}

bool gx__array_contiguous(const gx_array *a)
{
    int64_t expect = 1;
    for (int d = a->ndim - 1; d >= 0; d--) {
        if (a->shape[d] != 1 && a->strides[d] != expect)
            return a->size == 0;
        expect *= a->shape[d];
    }
    return true;
}

void *gx__array_ptr(const gx_array *a)
{
    if (!a->st->ptr)
        return NULL;
    return (char *)a->st->ptr + a->offset * (int64_t)gx_dtype_size(a->dtype);
}

static gx_status check_shape(gx_dtype dtype, int ndim, const int64_t *shape, int64_t *size_out, size_t *bytes_out)
{
    if (!gx__dtype_supported(dtype))
        return gx__err(GX_ERR_DTYPE, "dtype %s (%d) is not supported for arrays yet: use bool, i8..i64, u8..u64, f32 or f64",
                       gx_dtype_name(dtype), (int)dtype);
    if (ndim < 0 || ndim > GX_MAX_DIMS)
        return gx__err(GX_ERR_SHAPE, "ndim %d is out of range: arrays have 0 to %d dimensions", ndim, GX_MAX_DIMS);
    if (ndim > 0 && !shape)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "shape is NULL but ndim is %d", ndim);
    int64_t size = 1;
    bool empty = false;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return gx__err(GX_ERR_SHAPE, "shape[%d] = %lld is negative: sizes must be >= 0", d, (long long)shape[d]);
        if (shape[d] == 0)
            empty = true;
    }
    for (int d = 0; d < ndim && !empty; d++)
        if (__builtin_mul_overflow(size, shape[d], &size))
            return gx__err(GX_ERR_SHAPE, "the shape's element count overflows 64 bits");
    if (empty)
        size = 0;
    size_t bytes;
    if (__builtin_mul_overflow((size_t)size, gx_dtype_size(dtype), &bytes) || bytes > (size_t)INT64_MAX)
        return gx__err(GX_ERR_SHAPE, "%lld elements of %s overflow the byte count", (long long)size, gx_dtype_name(dtype));
    *size_out = size;
    *bytes_out = bytes;
    return GX_OK;
}

static void set_dense_strides(gx_array *a)
{
    int64_t st = 1;
    for (int d = a->ndim - 1; d >= 0; d--) {
        a->strides[d] = st;
        st *= a->shape[d] ? a->shape[d] : 1;
    }
}

/* ------------------------------------------------------------ handles */

static gx_array *arr_alloc(gx_ctx *ctx, gx__storage *st)
{
    gx_array *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->magic = GX__ARRAY_MAGIC;
    a->ctx = ctx;
    a->st = st;
    a->next = ctx->arrays;
    if (ctx->arrays)
        ctx->arrays->prev = a;
    ctx->arrays = a;
    gx__handle_add(a);
    return a;
}

static void storage_release(gx__storage *st)
{
    if (atomic_fetch_sub(&st->refs, 1) != 1)
        return;
    gx__mem_free(st->ctx, st->ptr, st->bytes);
    free(st);
}

/* Unlinks and frees the handle; caller holds the context lock. */
static void arr_free(gx_array *a)
{
    gx_ctx *ctx = a->ctx;
    gx__handle_remove(a);
    if (a->prev)
        a->prev->next = a->next;
    else
        ctx->arrays = a->next;
    if (a->next)
        a->next->prev = a->prev;
    a->magic = 0;
    storage_release(a->st);
    free(a);
}

void gx__ctx_release_arrays(gx_ctx *ctx)
{
    while (ctx->arrays)
        arr_free(ctx->arrays);
}

gx_status gx__array_new(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out)
{
    int64_t size = 0;
    size_t bytes = 0;
    GX__CHECK(check_shape(dtype, ndim, shape, &size, &bytes));
    gx__storage *st = calloc(1, sizeof *st);
    if (!st)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for an array handle");
    atomic_init(&st->refs, 1);
    st->ctx = ctx;
    st->bytes = bytes;
    gx_status s = gx__mem_alloc(ctx, bytes, &st->ptr);
    if (s != GX_OK) {
        free(st);
        return s;
    }
    gx_array *a = arr_alloc(ctx, st);
    if (!a) {
        storage_release(st);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for an array handle");
    }
    a->dtype = dtype;
    a->ndim = ndim;
    for (int d = 0; d < ndim; d++)
        a->shape[d] = shape[d];
    a->size = size;
    set_dense_strides(a);
    *out = a;
    return GX_OK;
}

/* A new handle over a's storage with a's layout (the caller then edits the layout). */
static gx_status arr_view_of(gx_array *a, gx_array **out)
{
    atomic_fetch_add(&a->st->refs, 1);
    gx_array *v = arr_alloc(a->ctx, a->st);
    if (!v) {
        storage_release(a->st);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for a view handle");
    }
    v->dtype = a->dtype;
    v->ndim = a->ndim;
    memcpy(v->shape, a->shape, sizeof v->shape);
    memcpy(v->strides, a->strides, sizeof v->strides);
    v->offset = a->offset;
    v->size = a->size;
    v->is_view = true;
    *out = v;
    return GX_OK;
}

gx_status gx_array_release(gx_array *a)
{
    if (!a)
        return GX_OK;
    GX__CHECK(gx__array_check(a, "gx_array_release"));
    gx_ctx *ctx = a->ctx;
    gx__lock(ctx);
    /* Re-check under the lock: another thread may have released it meanwhile. */
    gx_status s = gx__array_check(a, "gx_array_release");
    if (s == GX_OK)
        arr_free(a);
    gx__unlock(ctx);
    return s;
}

/* ------------------------------------------------------------ creation */

gx_status gx_array_empty(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out)
{
    GX__ARG(out, "gx_array_empty: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    gx_status s = gx__array_new(ctx, dtype, ndim, shape, out);
    gx__unlock(ctx);
    return s;
}

static bool is_cpu(const gx_ctx *ctx) { return gx__ctx_supports(ctx, GX__CAP_HOST); }

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

typedef struct xfer { char *view; char *host; size_t esz; bool to_host; } xfer;
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
    arr_free(tmp);
    return s;
}

static gx_status download(const gx_array *a, void *host)
{
    gx_ctx *ctx = a->ctx;
    size_t bytes = (size_t)a->size * gx_dtype_size(a->dtype);
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
    arr_free(tmp);
    return s;
}

gx_status gx_array_from_host(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, const void *host, gx_array **out)
{
    GX__ARG(out, "gx_array_from_host: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    gx_array *a = NULL;
    gx_status s = gx__array_new(ctx, dtype, ndim, shape, &a);
    if (s == GX_OK && a->size > 0 && !host)
        s = gx__err(GX_ERR_INVALID_ARGUMENT, "gx_array_from_host: host is NULL but the array has %lld elements", (long long)a->size);
    if (s == GX_OK)
        s = upload(a, host);
    if (s != GX_OK && a)
        arr_free(a);
    else
        *out = a;
    gx__unlock(ctx);
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
    GX__CHECK(need_host_bytes(a, host_bytes, "gx_array_from_host_into"));
    GX__ARG(host || a->size == 0, "gx_array_from_host_into: host is NULL");
    gx__lock(a->ctx);
    gx_status s = upload(a, host);
    gx__unlock(a->ctx);
    return s;
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
        c->i = (int64_t)f;   /* narrower integers and bool are exact in a double */
}

typedef struct fillx { const void *value; size_t esz; char *base; } fillx;
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
    if (is_cpu(ctx) && gx__array_contiguous(a)) {
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
    if (is_cpu(ctx)) {
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
        arr_free(a);
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
            memcpy(buf, &v, 8);   /* little-endian: the low bytes are the narrow value */
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
        return gx__err(GX_ERR_DTYPE, "gx_array_iota: complex dtype %s is not supported; make a real iota and "
                                     "convert it with gx_array_clone", gx_dtype_name(dtype));
    gx__lock(ctx);
    gx_array *a = NULL;
    gx_status s = gx__array_new(ctx, dtype, 1, &count, &a);
    if (s == GX_OK && count > 0) {
        if (is_cpu(ctx))
            iota_host(a, start, step);
        else
            s = iota_device(a, start, step);
    }
    if (s != GX_OK && a)
        arr_free(a);
    else
        *out = a;
    gx__unlock(ctx);
    return s;
}

gx_status gx_array_similar(const gx_array *a, gx_array **out)
{
    GX__ARG(out, "gx_array_similar: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_array_similar"));
    gx__lock(a->ctx);
    gx_status s = gx__array_new(a->ctx, a->dtype, a->ndim, a->shape, out);
    gx__unlock(a->ctx);
    return s;
}

/* ------------------------------------------------------------ copies */

/* Byte range [lo, hi) that a view touches in its storage. */
static void extent(const gx_array *a, int64_t *lo, int64_t *hi)
{
    int64_t l = a->offset, h = a->offset;
    for (int d = 0; d < a->ndim; d++) {
        int64_t span = (a->shape[d] - 1) * a->strides[d];
        if (span < 0)
            l += span;
        else
            h += span;
    }
    int64_t esz = (int64_t)gx_dtype_size(a->dtype);
    *lo = l * esz;
    *hi = (h + 1) * esz;
}

static bool same_layout(const gx_array *a, const gx_array *b)
{
    if (a->offset != b->offset || a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d] || (a->shape[d] > 1 && a->strides[d] != b->strides[d]))
            return false;
    return true;
}

/* True when dst and src share bytes but not element for element. */
bool gx__arrays_overlap(const gx_array *dst, const gx_array *src)
{
    if (dst->st != src->st || dst->size == 0 || src->size == 0)
        return false;
    if (same_layout(dst, src) && dst->dtype == src->dtype)
        return false;
    int64_t l1, h1, l2, h2;
    extent(dst, &l1, &h1);
    extent(src, &l2, &h2);
    return l1 < h2 && l2 < h1;
}

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
    if (dst->size == 0 || (dst->st == src->st && same_layout(dst, src)))
        return GX_OK;
    if (gx__array_contiguous(dst) && gx__array_contiguous(src))
        return ctx->be.iface->mem.d2d(&ctx->be, gx__array_ptr(dst), gx__array_ptr(src),
                                  (size_t)dst->size * gx_dtype_size(dst->dtype));
    if (is_cpu(ctx)) {
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
    bool ok = a->ndim == b->ndim;
    for (int d = 0; ok && d < a->ndim; d++)
        ok = a->shape[d] == b->shape[d];
    if (ok)
        return GX_OK;
    char s1[160], s2[160];
    size_t k1 = 0, k2 = 0;
    s1[0] = s2[0] = 0;
    for (int d = 0; d < a->ndim; d++)
        k1 += (size_t)snprintf(s1 + k1, sizeof s1 - k1, d ? ", %lld" : "%lld", (long long)a->shape[d]);
    for (int d = 0; d < b->ndim; d++)
        k2 += (size_t)snprintf(s2 + k2, sizeof s2 - k2, d ? ", %lld" : "%lld", (long long)b->shape[d]);
    return gx__err(GX_ERR_SHAPE, "%s: shapes differ: destination (%s) vs source (%s)", what, s1, s2);
}

gx_status gx_array_copy_into(const gx_array *src, gx_array *dst)
{
    GX__CHECK(gx__array_check(dst, "gx_array_copy_into (dst)"));
    GX__CHECK(gx__array_check(src, "gx_array_copy_into (src)"));
    if (dst->ctx != src->ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_array_copy_into: the arrays belong to different contexts; copy through the host");
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
        return gx__err(GX_ERR_DTYPE, "gx_array_clone: converting complex %s to real %s would drop the imaginary part; "
                                     "take re(x) or abs(x) with gx_map instead", gx_dtype_name(a->dtype), gx_dtype_name(dtype));
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
        arr_free(c);
    else
        *out = c;
    gx__unlock(ctx);
    return s;
}

/* ------------------------------------------------------------ views */

gx_status gx_array_reshape(gx_array *a, int ndim, const int64_t *shape, gx_array **out)
{
    GX__ARG(out, "gx_array_reshape: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_array_reshape"));
    if (ndim < 0 || ndim > GX_MAX_DIMS)
        return gx__err(GX_ERR_SHAPE, "gx_array_reshape: ndim %d is out of range 0..%d", ndim, GX_MAX_DIMS);
    GX__ARG(shape || ndim == 0, "gx_array_reshape: shape is NULL");
    int64_t sh[GX_MAX_DIMS], known = 1;
    int infer = -1;
    for (int d = 0; d < ndim; d++) {
        sh[d] = shape[d];
        if (sh[d] == -1 && infer < 0) {
            infer = d;
            continue;
        }
        if (sh[d] < 0)
            return gx__err(GX_ERR_SHAPE, "gx_array_reshape: shape[%d] = %lld (only one -1 is allowed, others must be >= 0)", d, (long long)sh[d]);
        if (__builtin_mul_overflow(known, sh[d], &known))
            return gx__err(GX_ERR_SHAPE, "gx_array_reshape: the new shape's element count overflows");
    }
    if (infer >= 0) {
        if (known == 0 || a->size % known)
            return gx__err(GX_ERR_SHAPE, "gx_array_reshape: cannot infer axis %d: %lld elements do not divide by %lld", infer, (long long)a->size, (long long)known);
        sh[infer] = a->size / known;
        known = a->size;
    }
    if (known != a->size)
        return gx__err(GX_ERR_SHAPE, "gx_array_reshape: the new shape has %lld elements but the array has %lld", (long long)known, (long long)a->size);
    if (!gx__array_contiguous(a))
        return gx__err(GX_ERR_SHAPE, "gx_array_reshape: the array is a non-contiguous view; clone it first (gx_array_clone)");
    gx__lock(a->ctx);
    gx_status s = arr_view_of(a, out);
    if (s == GX_OK) {
        (*out)->ndim = ndim;
        memcpy((*out)->shape, sh, sizeof(int64_t) * (size_t)ndim);
        set_dense_strides(*out);
    }
    gx__unlock(a->ctx);
    return s;
}

/* Normalises one slice against an axis of length len (Python rules, but an index
 * outside the axis is an error rather than silently clamped). */
static gx_status slice_norm(gx_slice s, int64_t len, int axis, int64_t *start, int64_t *count)
{
    if (s.step == 0)
        return gx__err(GX_ERR_SHAPE, "gx_array_view: axis %d has step 0 (use a positive or negative step)", axis);
    int64_t b = s.start, e = s.stop;
    if (s.step > 0) {
        if (b == GX_END)
            b = len;
        if (e == GX_END)
            e = len;
        if (b < 0)
            b += len;
        if (e < 0)
            e += len;
        if (b < 0 || b > len || e < 0 || e > len)
            return gx__err(GX_ERR_SHAPE, "gx_array_view: axis %d slice %lld:%lld:%lld is outside the axis of length %lld",
                           axis, (long long)s.start, (long long)s.stop, (long long)s.step, (long long)len);
        *start = b;
        *count = e > b ? (e - b + s.step - 1) / s.step : 0;
        return GX_OK;
    }
    if (b == GX_END)
        b = len - 1;
    if (b < 0)
        b += len;
    if (e == GX_END)
        e = -1;             /* through index 0 */
    else if (e < 0)
        e += len;
    if ((len > 0 && (b < 0 || b >= len)) || e < -1 || e >= len)
        return gx__err(GX_ERR_SHAPE, "gx_array_view: axis %d slice %lld:%lld:%lld is outside the axis of length %lld",
                       axis, (long long)s.start, (long long)s.stop, (long long)s.step, (long long)len);
    *start = len > 0 ? b : 0;
    *count = len > 0 && b > e ? (b - e + (-s.step) - 1) / (-s.step) : 0;
    return GX_OK;
}

gx_status gx_array_view(gx_array *a, const gx_slice *slices, gx_array **out)
{
    GX__ARG(out, "gx_array_view: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_array_view"));
    GX__ARG(slices || a->ndim == 0, "gx_array_view: slices is NULL (pass one gx_slice per axis)");
    int64_t start[GX_MAX_DIMS], count[GX_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++)
        GX__CHECK(slice_norm(slices[d], a->shape[d], d, &start[d], &count[d]));
    gx__lock(a->ctx);
    gx_status s = arr_view_of(a, out);
    if (s == GX_OK) {
        gx_array *v = *out;
        int64_t size = 1;
        for (int d = 0; d < a->ndim; d++) {
            v->offset += start[d] * a->strides[d];
            v->shape[d] = count[d];
            v->strides[d] = a->strides[d] * slices[d].step;
            size *= count[d];
        }
        v->size = size;
    }
    gx__unlock(a->ctx);
    return s;
}

gx_status gx_array_permute(gx_array *a, const int *perm, gx_array **out)
{
    GX__ARG(out, "gx_array_permute: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_array_permute"));
    GX__ARG(perm || a->ndim == 0, "gx_array_permute: perm is NULL");
    bool seen[GX_MAX_DIMS] = {false};
    for (int d = 0; d < a->ndim; d++) {
        if (perm[d] < 0 || perm[d] >= a->ndim || seen[perm[d]])
            return gx__err(GX_ERR_SHAPE, "gx_array_permute: perm is not a permutation of 0..%d (entry %d is %d)", a->ndim - 1, d, perm[d]);
        seen[perm[d]] = true;
    }
    gx__lock(a->ctx);
    gx_status s = arr_view_of(a, out);
    if (s == GX_OK)
        for (int d = 0; d < a->ndim; d++) {
            (*out)->shape[d] = a->shape[perm[d]];
            (*out)->strides[d] = a->strides[perm[d]];
        }
    gx__unlock(a->ctx);
    return s;
}

/* ------------------------------------------------------------ queries */

gx_status gx_array_describe(const gx_array *a, gx_array_desc *out)
{
    GX__CHECK(gx__array_check(a, "gx_array_describe"));
    GX__ARG(out, "gx_array_describe: out must not be NULL");
    memset(out, 0, sizeof *out);
    out->dtype = a->dtype;
    out->ndim = a->ndim;
    memcpy(out->shape, a->shape, sizeof out->shape);
    memcpy(out->strides, a->strides, sizeof out->strides);
    out->size = a->size;
    out->contiguous = gx__array_contiguous(a);
    out->is_view = a->is_view;
    return GX_OK;
}

gx_status gx_array_size(const gx_array *a, int64_t *out)
{
    GX__CHECK(gx__array_check(a, "gx_array_size"));
    GX__ARG(out, "gx_array_size: out must not be NULL");
    *out = a->size;
    return GX_OK;
}

gx_status gx_array_ctx(const gx_array *a, gx_ctx **out)
{
    GX__CHECK(gx__array_check(a, "gx_array_ctx"));
    GX__ARG(out, "gx_array_ctx: out must not be NULL");
    *out = a->ctx;
    return GX_OK;
}

gx_status gx_array_device_ptr(const gx_array *a, void **out)
{
    GX__CHECK(gx__array_check(a, "gx_array_device_ptr"));
    GX__ARG(out, "gx_array_device_ptr: out must not be NULL");
    *out = gx__array_ptr(a);
    return GX_OK;
}

static gx_status elem_offset(const gx_array *a, const int64_t *index, const char *what, int64_t *off)
{
    GX__ARG(index || a->ndim == 0, "%s: index is NULL (pass one index per axis)", what);
    int64_t o = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (index[d] < 0 || index[d] >= a->shape[d])
            return gx__err(GX_ERR_SHAPE, "%s: index %lld is outside axis %d of length %lld", what, (long long)index[d], d, (long long)a->shape[d]);
        o += index[d] * a->strides[d];
    }
    if (a->size == 0)
        return gx__err(GX_ERR_SHAPE, "%s: the array is empty", what);
    *off = o * (int64_t)gx_dtype_size(a->dtype);
    return GX_OK;
}

gx_status gx_array_get(const gx_array *a, const int64_t *index, void *value)
{
    GX__CHECK(gx__array_check(a, "gx_array_get"));
    GX__ARG(value, "gx_array_get: value is NULL");
    int64_t off;
    GX__CHECK(elem_offset(a, index, "gx_array_get", &off));
    gx__lock(a->ctx);
    gx_status s = a->ctx->be.iface->mem.d2h(&a->ctx->be, value, (char *)gx__array_ptr(a) + off, gx_dtype_size(a->dtype));
    gx__unlock(a->ctx);
    return s;
}

gx_status gx_array_set(gx_array *a, const int64_t *index, const void *value)
{
    GX__CHECK(gx__array_check(a, "gx_array_set"));
    GX__ARG(value, "gx_array_set: value is NULL");
    int64_t off;
    GX__CHECK(elem_offset(a, index, "gx_array_set", &off));
    gx__lock(a->ctx);
    gx_status s = a->ctx->be.iface->mem.h2d(&a->ctx->be, (char *)gx__array_ptr(a) + off, value, gx_dtype_size(a->dtype));
    gx__unlock(a->ctx);
    return s;
}
