/* array.c -- arrays: creation, storage sharing, views, element access.
 *
 * An array is a view (shape, strides, offset) over reference-counted storage; a
 * view made from another shares the storage and keeps it alive.  Every handle lives
 * on its context's list so that gx_ctx_destroy can release what the user forgot,
 * after which the old handles read as invalid instead of dangling.  Operations that
 * may need a generated kernel (fill, iota, copy, conversion, strided host transfers)
 * are in the ops layer: src/ops/array_ops.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/gx_internal.h"

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
                       "%s: the array handle is not live (released already, its context destroyed, or not made by gx)",
                       what);
    return GX_OK;
}

gx_status gx__array_check_nth(const gx_array *a, const char *fn, const char *role, int n)
{
    if (a && gx__handle_live(a) && a->magic == GX__ARRAY_MAGIC)
        return GX_OK;
    char what[96];
    gx__fmt(what, sizeof what, "%s (%s %d)", fn, role, n);
    return gx__array_check(a, what);
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
        return gx__err(GX_ERR_DTYPE,
                       "dtype %s (%d) is not supported for arrays yet: use bool, i8..i64, u8..u64, f32 or f64",
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
        return gx__err(GX_ERR_SHAPE, "%lld elements of %s overflow the byte count", (long long)size,
                       gx_dtype_name(dtype));
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
    if (!st->external)
        gx__mem_free(st->ctx, st->ptr, st->bytes);
    else if (st->deleter) /* the owner's memory: only its deleter may free it */
        st->deleter(st->user, st->uptr);
    free(st);
}

void gx__array_free(gx_array *a)
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
        gx__array_free(ctx->arrays);
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
gx_status gx__array_view_of(gx_array *a, gx_array **out)
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
    v->readonly = a->readonly;
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
        gx__array_free(a);
    gx__unlock(ctx);
    return s;
}

gx_status gx__array_over(gx_ctx *ctx, const gx__ext_mem *m, gx_dtype dtype, int ndim, const int64_t *shape,
                         const int64_t *strides, gx_array **out)
{
    int64_t size = 0;
    size_t bytes = 0;
    GX__CHECK(check_shape(dtype, ndim, shape, &size, &bytes));
    gx__storage *st = calloc(1, sizeof *st);
    gx_array *a = st ? arr_alloc(ctx, st) : NULL;
    if (!a) {
        free(st);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for an array handle");
    }
    atomic_init(&st->refs, 1);
    st->ctx = ctx;
    st->ptr = m->base;
    st->bytes = m->bytes;
    st->external = true;
    st->deleter = m->deleter;
    st->user = m->user;
    st->uptr = m->uptr;
    a->dtype = dtype;
    a->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        a->shape[d] = shape[d];
        a->strides[d] = strides[d];
    }
    a->offset = m->offset;
    a->size = size;
    a->readonly = m->readonly;
    *out = a;
    return GX_OK;
}

gx_status gx__array_writable(const gx_array *a, const char *what)
{
    if (a->readonly)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: the array is read-only (wrapped with gx_wrap_opts.readonly, or imported from DLPack "
                       "with overlapping strides): write into a copy (gx_array_clone)",
                       what);
    return GX_OK;
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

gx_status gx_array_from_host(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, const void *host,
                             gx_array **out)
{
    GX__ARG(out, "gx_array_from_host: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    gx_array *a = NULL;
    gx_status s = gx__array_new(ctx, dtype, ndim, shape, &a);
    if (s == GX_OK && a->size > 0 && !host)
        s = gx__err(GX_ERR_INVALID_ARGUMENT, "gx_array_from_host: host is NULL but the array has %lld elements",
                    (long long)a->size);
    /* A new array is dense: its bytes go over in one copy. */
    if (s == GX_OK && a->size > 0)
        s = ctx->be.iface->mem.h2d(&ctx->be, gx__array_ptr(a), host, (size_t)a->size * gx_dtype_size(a->dtype));
    if (s != GX_OK && a)
        gx__array_free(a);
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

/* ------------------------------------------------------------ layouts */

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

bool gx__array_same_layout(const gx_array *a, const gx_array *b)
{
    if (a->offset != b->offset || a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d] || (a->shape[d] > 1 && a->strides[d] != b->strides[d]))
            return false;
    return true;
}

bool gx__same_shape(const gx_array *a, const gx_array *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

void gx__shape_str(char *buf, size_t n, int ndim, const int64_t *shape)
{
    if (n == 0)
        return;
    size_t k = (size_t)gx__fmt(buf, n, "(");
    for (int d = 0; d < ndim && k < n; d++)
        k += (size_t)gx__fmt(buf + k, n - k, d ? ", %lld" : "%lld", (long long)shape[d]);
    if (k < n)
        gx__fmt(buf + k, n - k, ndim == 1 ? ",)" : ")");
}

/* True when dst and src share bytes but not element for element. */
bool gx__arrays_overlap(const gx_array *dst, const gx_array *src)
{
    if (dst->st != src->st || dst->size == 0 || src->size == 0)
        return false;
    if (gx__array_same_layout(dst, src) && dst->dtype == src->dtype)
        return false;
    int64_t l1, h1, l2, h2;
    extent(dst, &l1, &h1);
    extent(src, &l2, &h2);
    return l1 < h2 && l2 < h1;
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
            return gx__err(GX_ERR_SHAPE,
                           "gx_array_reshape: shape[%d] = %lld (only one -1 is allowed, others must be >= 0)", d,
                           (long long)sh[d]);
        if (__builtin_mul_overflow(known, sh[d], &known))
            return gx__err(GX_ERR_SHAPE, "gx_array_reshape: the new shape's element count overflows");
    }
    if (infer >= 0) {
        if (known == 0 || a->size % known)
            return gx__err(GX_ERR_SHAPE, "gx_array_reshape: cannot infer axis %d: %lld elements do not divide by %lld",
                           infer, (long long)a->size, (long long)known);
        sh[infer] = a->size / known;
        known = a->size;
    }
    if (known != a->size)
        return gx__err(GX_ERR_SHAPE, "gx_array_reshape: the new shape has %lld elements but the array has %lld",
                       (long long)known, (long long)a->size);
    if (!gx__array_contiguous(a))
        return gx__err(GX_ERR_SHAPE,
                       "gx_array_reshape: the array is a non-contiguous view; clone it first (gx_array_clone)");
    gx__lock(a->ctx);
    gx_status s = gx__array_view_of(a, out);
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
            return gx__err(GX_ERR_SHAPE,
                           "gx_array_view: axis %d slice %lld:%lld:%lld is outside the axis of length %lld", axis,
                           (long long)s.start, (long long)s.stop, (long long)s.step, (long long)len);
        *start = b;
        *count = e > b ? (e - b + s.step - 1) / s.step : 0;
        return GX_OK;
    }
    if (b == GX_END)
        b = len - 1;
    if (b < 0)
        b += len;
    if (e == GX_END)
        e = -1; /* through index 0 */
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
    gx_status s = gx__array_view_of(a, out);
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
            return gx__err(GX_ERR_SHAPE, "gx_array_permute: perm is not a permutation of 0..%d (entry %d is %d)",
                           a->ndim - 1, d, perm[d]);
        seen[perm[d]] = true;
    }
    gx__lock(a->ctx);
    gx_status s = gx__array_view_of(a, out);
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
            return gx__err(GX_ERR_SHAPE, "%s: index %lld is outside axis %d of length %lld", what, (long long)index[d],
                           d, (long long)a->shape[d]);
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
    gx_status s =
        a->ctx->be.iface->mem.d2h(&a->ctx->be, value, (char *)gx__array_ptr(a) + off, gx_dtype_size(a->dtype));
    gx__unlock(a->ctx);
    return s;
}

gx_status gx_array_set(gx_array *a, const int64_t *index, const void *value)
{
    GX__CHECK(gx__array_check(a, "gx_array_set"));
    GX__ARG(value, "gx_array_set: value is NULL");
    int64_t off;
    GX__CHECK(elem_offset(a, index, "gx_array_set", &off));
    GX__CHECK(gx__array_writable(a, "gx_array_set"));
    gx__lock(a->ctx);
    gx_status s =
        a->ctx->be.iface->mem.h2d(&a->ctx->be, (char *)gx__array_ptr(a) + off, value, gx_dtype_size(a->dtype));
    gx__unlock(a->ctx);
    return s;
}
