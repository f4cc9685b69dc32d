/* interop.c -- gx inside a larger program: arrays over memory gx did not allocate
 * (gx_array_wrap) and DLPack export and import (gx/interop.h).
 *
 * A wrapped array is an ordinary array whose storage is marked external
 * (src/core/array.c): every op reads and writes it like any other, and its last
 * release calls the owner's deleter instead of returning the bytes to gx's pool.
 * DLPack import is a wrap whose deleter calls the producer's; export hands out a
 * view of the array that the consumer's call to the tensor's deleter releases.
 *
 * DLPack's header comes from the system (libdlpack-dev) or PyTorch's copy: CMake
 * names it in GX_DLPACK_HEADER.  Without it the DLPack calls answer
 * GX_ERR_UNSUPPORTED; gx_array_wrap works regardless. */
#include "core/gx_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef GX_DLPACK_HEADER
#include GX_DLPACK_HEADER
#endif

/* ------------------------------------------------------------ layouts */

/* What the C code gx generates (and the CUDA hardware) needs of an element's
 * address: its own size, or a component's for complex.  Wider vector loads check
 * the pointer themselves (ew_vec, rg_vec, ra_plan_vec...). */
static size_t elem_align(gx_dtype t) { return gx__dtype_is_complex(t) ? gx_dtype_size(t) / 2 : gx_dtype_size(t); }

/* Whether two elements may share bytes.  Axes of length > 1 sorted by |stride|:
 * each must step past everything the smaller ones reach.  Exact for dense, sliced,
 * permuted and reversed layouts; a rarer interleaving that does not overlap is
 * refused too (documented). */
static bool layout_overlaps(int ndim, const int64_t *shape, const int64_t *strides)
{
    int ax[GX_MAX_DIMS], n = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 0)
            return false;
        if (shape[d] > 1)
            ax[n++] = d;
    }
    for (int i = 1; i < n; i++) /* insertion sort by |stride| */
        for (int j = i; j > 0 && llabs(strides[ax[j]]) < llabs(strides[ax[j - 1]]); j--) {
            int t = ax[j];
            ax[j] = ax[j - 1];
            ax[j - 1] = t;
        }
    int64_t reach = 0; /* elements the smaller axes span */
    for (int i = 0; i < n; i++) {
        int64_t s = llabs(strides[ax[i]]);
        if (s <= reach)
            return true;
        reach += s * (shape[ax[i]] - 1); /* bounded: layout_extent checked it */
    }
    return false;
}

/* The element offsets [lo, hi] the layout touches from element (0, ..., 0), and its
 * byte extent, refusing layouts whose addresses overflow. */
static gx_status layout_extent(const char *fn, gx_dtype dt, int ndim, const int64_t *shape, const int64_t *strides,
                               int64_t *lo, int64_t *hi, size_t *bytes)
{
    *lo = *hi = 0;
    *bytes = 0;
    for (int d = 0; d < ndim; d++)
        if (shape[d] == 0)
            return GX_OK;
    for (int d = 0; d < ndim; d++) {
        int64_t span;
        if (strides[d] == INT64_MIN || __builtin_mul_overflow(shape[d] - 1, strides[d], &span) ||
            __builtin_add_overflow(span < 0 ? *lo : *hi, span, span < 0 ? lo : hi))
            return gx__err(GX_ERR_SHAPE, "%s: strides[%d] = %lld over shape[%d] = %lld overflow the address range", fn,
                           d, (long long)strides[d], d, (long long)shape[d]);
    }
    int64_t n, b;
    if (__builtin_sub_overflow(*hi, *lo, &n) || __builtin_add_overflow(n, 1, &n) ||
        __builtin_mul_overflow(n, (int64_t)gx_dtype_size(dt), &b))
        return gx__err(GX_ERR_SHAPE, "%s: the layout spans more bytes than an address can hold", fn);
    *bytes = (size_t)b;
    return GX_OK;
}

static gx_status check_shape_args(const char *fn, gx_dtype dtype, int ndim, const int64_t *shape, int64_t *size)
{
    if (!gx__dtype_supported(dtype))
        return gx__err(GX_ERR_DTYPE,
                       "%s: dtype %s (%d) cannot be an array: gx arrays hold bool, i8..i64, u8..u64, f32, f64, "
                       "c64 and c128 (no f16/bf16 arrays yet)",
                       fn, gx_dtype_name(dtype), (int)dtype);
    if (ndim < 0 || ndim > GX_MAX_DIMS)
        return gx__err(GX_ERR_SHAPE, "%s: ndim %d is out of range: arrays have 0 to %d dimensions", fn, ndim,
                       GX_MAX_DIMS);
    GX__ARG(shape || ndim == 0, "%s: shape is NULL but ndim is %d", fn, ndim);
    *size = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return gx__err(GX_ERR_SHAPE, "%s: shape[%d] = %lld is negative", fn, d, (long long)shape[d]);
        if (__builtin_mul_overflow(*size, shape[d], size))
            return gx__err(GX_ERR_SHAPE, "%s: the shape's element count overflows 64 bits", fn);
    }
    return GX_OK;
}

static void dense_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d] ? shape[d] : 1;
    }
}

/* The part of gx_array_wrap and gx_array_from_dlpack after their own argument
 * checks: strides in elements (NULL: dense); readonly < 0 means "read-only exactly
 * when elements overlap" (DLPack has no read-only flag). */
static gx_status wrap_core(gx_ctx *ctx, const char *fn, void *ptr, gx_dtype dtype, int ndim, const int64_t *shape,
                           const int64_t *strides_in, int readonly, gx_wrap_deleter deleter, void *user,
                           gx_array **out)
{
    int64_t size = 0, strides[GX_MAX_DIMS];
    GX__CHECK(check_shape_args(fn, dtype, ndim, shape, &size));
    if (strides_in)
        memcpy(strides, strides_in, sizeof(int64_t) * (size_t)ndim);
    else
        dense_strides(ndim, shape, strides);
    char sh[160], sd[160];
    gx__shape_str(sh, sizeof sh, ndim, shape);
    if (size > 0 && !ptr)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the pointer is NULL but the shape %s has %lld elements", fn, sh,
                       (long long)size);
    size_t align = elem_align(dtype);
    if ((uintptr_t)ptr % align)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: the pointer %p is not aligned to %zu bytes, the alignment of %s elements", fn, ptr, align,
                       gx_dtype_name(dtype));
    int64_t lo, hi;
    size_t bytes;
    GX__CHECK(layout_extent(fn, dtype, ndim, shape, strides, &lo, &hi, &bytes));
    bool overlap = layout_overlaps(ndim, shape, strides);
    if (overlap && readonly == 0) {
        gx__shape_str(sd, sizeof sd, ndim, strides);
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: strides %s (elements) over shape %s make elements share bytes, so writing them is "
                       "undefined: set gx_wrap_opts.readonly to wrap it for reading only",
                       fn, sd, sh);
    }
    gx__ext_mem m = {
        .base = size > 0 ? (char *)ptr + lo * (int64_t)gx_dtype_size(dtype) : ptr,
        .bytes = bytes,
        .offset = -lo,
        .deleter = deleter,
        .user = user,
        .uptr = ptr,
        .readonly = readonly > 0 || overlap,
    };
    gx__lock(ctx);
    gx_status s = size > 0 ? ctx->be.iface->mem.ptr_check(&ctx->be, m.base, bytes, fn) : GX_OK;
    if (s == GX_OK)
        s = gx__array_over(ctx, &m, dtype, ndim, shape, strides, out);
    gx__unlock(ctx);
    return s;
}

gx_status gx_array_wrap(gx_ctx *ctx, void *ptr, gx_dtype dtype, int ndim, const int64_t *shape,
                        const int64_t *strides, const gx_wrap_opts *opts, gx_array **out)
{
    static const char fn[] = "gx_array_wrap";
    GX__ARG(out, "gx_array_wrap: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, fn);
    int64_t est[GX_MAX_DIMS];
    if (strides && opts && opts->strides_in_bytes) {
        GX__ARG(ndim >= 0 && ndim <= GX_MAX_DIMS, "gx_array_wrap: ndim %d is out of range 0..%d", ndim, GX_MAX_DIMS);
        size_t esz = gx_dtype_size(dtype);
        for (int d = 0; d < ndim && esz; d++) {
            if (strides[d] % (int64_t)esz)
                return gx__err(GX_ERR_INVALID_ARGUMENT,
                               "gx_array_wrap: strides[%d] = %lld bytes is not a multiple of the %zu-byte %s element",
                               d, (long long)strides[d], esz, gx_dtype_name(dtype));
            est[d] = strides[d] / (int64_t)esz;
        }
        strides = est;
    }
    return wrap_core(ctx, fn, ptr, dtype, ndim, shape, strides, opts && opts->readonly ? 1 : 0,
                     opts ? opts->deleter : NULL, opts ? opts->user : NULL, out);
}

gx_status gx_array_readonly(const gx_array *a, int *out)
{
    GX__CHECK(gx__array_check(a, "gx_array_readonly"));
    GX__ARG(out, "gx_array_readonly: out must not be NULL");
    *out = a->readonly;
    return GX_OK;
}

/* ------------------------------------------------------------ DLPack */

#ifdef GX_DLPACK_HEADER

/* kDLBool (code 6) arrived in DLPack 0.8; an older header (Debian's 0.6) lacks the
 * name, not the value, which producers send all the same. */
#if defined(DLPACK_VERSION) && DLPACK_VERSION >= 80
#define GX_DL_BOOL kDLBool
#else
#define GX_DL_BOOL 6
#endif

static DLDataType dl_of_dtype(gx_dtype t)
{
    DLDataType d = {0, (uint8_t)(gx_dtype_size(t) * 8), 1};
    if (t == GX_BOOL)
        d.code = GX_DL_BOOL;
    else if (t == GX_BF16)
        d.code = kDLBfloat; /* f16 is kDLFloat of 16 bits, below */
    else if (gx__dtype_is_complex(t))
        d.code = kDLComplex;
    else if (gx__dtype_is_float(t))
        d.code = kDLFloat;
    else
        d.code = gx__dtype_is_signed(t) ? kDLInt : kDLUInt;
    return d;
}

/* "float16", "uint1", "float32x4": a DLPack dtype as messages spell it. */
static void dl_dtype_str(DLDataType d, char *buf, size_t n)
{
    static const char *const names[] = {"int", "uint", "float", "opaque_handle", "bfloat", "complex", "bool"};
    const char *name = d.code < sizeof names / sizeof names[0] ? names[d.code] : "code";
    if (d.lanes != 1)
        gx__fmt(buf, n, "%s%ux%u", name, (unsigned)d.bits, (unsigned)d.lanes);
    else
        gx__fmt(buf, n, "%s%u", name, (unsigned)d.bits);
    if (d.code >= sizeof names / sizeof names[0])
        gx__fmt(buf, n, "type code %u of %u bits", (unsigned)d.code, (unsigned)d.bits);
}

static gx_status dl_to_dtype(DLDataType d, gx_dtype *out)
{
    static const gx_dtype ints[] = {GX_I8, GX_I16, GX_I32, GX_I64}, uints[] = {GX_U8, GX_U16, GX_U32, GX_U64};
    int k = d.bits == 8 ? 0 : d.bits == 16 ? 1 : d.bits == 32 ? 2 : d.bits == 64 ? 3 : -1;
    *out = GX_DTYPE_DEFAULT;
    if (d.lanes == 1 && k >= 0) {
        if (d.code == kDLInt)
            *out = ints[k];
        else if (d.code == kDLUInt)
            *out = uints[k];
        else if (d.code == kDLFloat && k >= 1)
            *out = k == 1 ? GX_F16 : k == 2 ? GX_F32 : GX_F64;
        else if (d.code == kDLBfloat && k == 1)
            *out = GX_BF16;
        else if (d.code == kDLComplex && k >= 3)
            *out = GX_C64;
        else if (d.code == GX_DL_BOOL && k == 0)
            *out = GX_BOOL;
    }
    if (d.lanes == 1 && d.code == kDLComplex && d.bits == 128)
        *out = GX_C128;
    if (*out != GX_DTYPE_DEFAULT)
        return GX_OK;
    char s[64];
    dl_dtype_str(d, s, sizeof s);
    return gx__err(GX_ERR_DTYPE,
                   "gx_array_from_dlpack: the tensor's dtype %s has no gx array dtype (gx holds bool, int8..64, "
                   "uint8..64, float16/32/64, bfloat16, complex64/128 with one lane): convert it before export (e.g. "
                   ".float())",
                   s);
}

static const char *dl_device_name(int type)
{
    switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLCUDAManaged: return "kDLCUDAManaged";
    case kDLROCM: return "kDLROCM";
    case kDLROCMHost: return "kDLROCMHost";
    case kDLOpenCL: return "kDLOpenCL";
    case kDLVulkan: return "kDLVulkan";
    case kDLMetal: return "kDLMetal";
    default: return "an unknown device type";
    }
}

static gx_status dl_check_device(gx_ctx *ctx, DLDevice dev)
{
    bool host = gx__ctx_supports(ctx, GX__CAP_HOST);
    bool ok = host ? dev.device_type == kDLCPU
                   : (dev.device_type == kDLCUDA || dev.device_type == kDLCUDAManaged) &&
                         dev.device_id == ctx->be.device;
    if (ok)
        return GX_OK;
    return gx__err(GX_ERR_INVALID_ARGUMENT,
                   "gx_array_from_dlpack: the tensor is on %s (%d) device %d, but this context is %s device %d "
                   "(it takes %s tensors): copy the tensor there first, or import it into a context of its device",
                   dl_device_name((int)dev.device_type), (int)dev.device_type, (int)dev.device_id,
                   ctx->be.iface->name, ctx->be.device, host ? "kDLCPU" : "kDLCUDA");
}

/* The producer's tensor dies with the last array over it. */
static void dl_release(void *user, void *ptr)
{
    (void)ptr;
    DLManagedTensor *t = user;
    if (t->deleter)
        t->deleter(t);
}

gx_status gx_array_from_dlpack(gx_ctx *ctx, struct DLManagedTensor *t, gx_array **out)
{
    static const char fn[] = "gx_array_from_dlpack";
    GX__ARG(out, "gx_array_from_dlpack: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(t, "gx_array_from_dlpack: the tensor is NULL");
    const DLTensor *x = &t->dl_tensor;
    GX__CHECK(dl_check_device(ctx, x->device));
    gx_dtype dt;
    GX__CHECK(dl_to_dtype(x->dtype, &dt));
    GX__ARG(x->ndim >= 0 && x->ndim <= GX_MAX_DIMS, "gx_array_from_dlpack: the tensor has %d dimensions (gx: 0..%d)",
            x->ndim, GX_MAX_DIMS);
    void *p = x->data ? (char *)x->data + x->byte_offset : NULL;
    return wrap_core(ctx, fn, p, dt, x->ndim, x->shape, x->strides, -1, dl_release, t, out);
}

/* One exported tensor: DLPack's struct first, then what its pointers point at and
 * the gx view that keeps the storage alive.  view is NULL once the context is gone;
 * dlx_mu guards view and the context's list against a consumer's deleter running
 * on another thread (lock order: context lock, then dlx_mu). */
typedef struct gx__dlx {
    DLManagedTensor mt;
    int64_t shape[GX_MAX_DIMS], strides[GX_MAX_DIMS];
    gx_array *view;
    gx_ctx *ctx;
    struct gx__dlx *prev, *next;
} gx__dlx;

static pthread_mutex_t dlx_mu = PTHREAD_MUTEX_INITIALIZER;

static void dlx_unlink(gx__dlx *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        e->ctx->dl_exports = e->next;
    if (e->next)
        e->next->prev = e->prev;
    e->prev = e->next = NULL;
}

static void dlx_deleter(DLManagedTensor *self)
{
    gx__dlx *e = self->manager_ctx;
    pthread_mutex_lock(&dlx_mu);
    gx_array *v = e->view;
    if (v)
        dlx_unlink(e);
    e->view = NULL;
    pthread_mutex_unlock(&dlx_mu);
    if (v)
        (void)gx_array_release(v);
    free(e);
}

void gx__dlpack_orphan_all(gx_ctx *ctx)
{
    pthread_mutex_lock(&dlx_mu);
    while (ctx->dl_exports) {
        gx__dlx *e = ctx->dl_exports;
        e->view = NULL;
        dlx_unlink(e);
    }
    pthread_mutex_unlock(&dlx_mu);
}

/* The DLPack stream rule: the consumer's stream waits for what gx queued so far. */
static gx_status dl_order(gx_ctx *ctx, const gx_dlpack_opts *opts)
{
    void *consumer = opts ? opts->stream : NULL;
    if (consumer == GX_DLPACK_NO_SYNC || !gx__ctx_supports(ctx, GX__CAP_EVENTS | GX__CAP_STREAMS))
        return GX_OK;
    if (!consumer)
        consumer = (void *)(uintptr_t)1; /* the legacy default stream: CU_STREAM_LEGACY */
    const gx__backend_stream *io = &ctx->be.iface->stream;
    void *ev = NULL;
    gx_status s = io->event_create(&ctx->be, &ev);
    if (s == GX_OK)
        s = io->event_record(&ctx->be, ev);
    if (s == GX_OK)
        s = io->wait_event(&ctx->be, consumer, ev);
    if (ev)
        io->event_destroy(&ctx->be, ev); /* the wait keeps what it needs */
    return s == GX_OK ? s : gx__err_prefix(s, "gx_array_to_dlpack (ordering the consumer's stream)");
}

gx_status gx_array_to_dlpack(gx_array *a, const gx_dlpack_opts *opts, struct DLManagedTensor **out)
{
    GX__ARG(out, "gx_array_to_dlpack: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_array_to_dlpack"));
    GX__OPTS_CHECK(opts, "gx_array_to_dlpack");
    gx__dlx *e = calloc(1, sizeof *e);
    if (!e)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_array_to_dlpack: out of host memory");
    gx_ctx *ctx = a->ctx;
    gx__lock(ctx);
    gx_status s = dl_order(ctx, opts);
    if (s == GX_OK)
        s = gx__array_view_of(a, &e->view);
    if (s != GX_OK) {
        gx__unlock(ctx);
        free(e);
        return s;
    }
    e->ctx = ctx;
    memcpy(e->shape, a->shape, sizeof e->shape);
    memcpy(e->strides, a->strides, sizeof e->strides);
    DLTensor *x = &e->mt.dl_tensor;
    x->data = gx__array_ptr(a);
    x->device.device_type = gx__ctx_supports(ctx, GX__CAP_HOST) ? kDLCPU : kDLCUDA;
    x->device.device_id = gx__ctx_supports(ctx, GX__CAP_HOST) ? 0 : ctx->be.device;
    x->ndim = a->ndim;
    x->dtype = dl_of_dtype(a->dtype);
    x->shape = e->shape;
    x->strides = e->strides;
    x->byte_offset = 0;
    e->mt.manager_ctx = e;
    e->mt.deleter = dlx_deleter;
    pthread_mutex_lock(&dlx_mu);
    e->next = ctx->dl_exports;
    if (e->next)
        e->next->prev = e;
    ctx->dl_exports = e;
    pthread_mutex_unlock(&dlx_mu);
    gx__unlock(ctx);
    *out = &e->mt;
    return GX_OK;
}

#else /* no DLPack header at build time */

static gx_status dl_missing(const char *fn)
{
    return gx__err(GX_ERR_UNSUPPORTED,
                   "%s: this gx was built without DLPack's header (install libdlpack-dev, or point CMake at "
                   "PyTorch's torch/include with -DGX_DLPACK_INCLUDE_DIR=..., and rebuild)",
                   fn);
}

gx_status gx_array_from_dlpack(gx_ctx *ctx, struct DLManagedTensor *t, gx_array **out)
{
    GX__ARG(out, "gx_array_from_dlpack: out must not be NULL");
    *out = NULL;
    (void)ctx;
    (void)t;
    return dl_missing("gx_array_from_dlpack");
}

gx_status gx_array_to_dlpack(gx_array *a, const gx_dlpack_opts *opts, struct DLManagedTensor **out)
{
    GX__ARG(out, "gx_array_to_dlpack: out must not be NULL");
    *out = NULL;
    (void)a;
    (void)opts;
    return dl_missing("gx_array_to_dlpack");
}

void gx__dlpack_orphan_all(gx_ctx *ctx) { (void)ctx; }

#endif
