/* stream.c -- streams, the context's current stream, page-locked host memory and
 * asynchronous copies; the per-context state of user kernels and the profiler.
 *
 * The CPU backend has no streams: its work is complete when each call returns, so
 * a gx_stream there is only a token and every ordering request holds trivially. */
#include "core/stream_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct gx__kx *gx__kx(gx_ctx *ctx)
{
    if (!ctx->kx && !(ctx->kx = calloc(1, sizeof *ctx->kx)))
        gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for the context's stream state");
    return ctx->kx;
}

/* GX_PROFILE: off by default.  An unknown value still profiles (as 1): whoever set
 * the variable wants a profile, and a typo should not cost them the run. */
enum { PROF_OFF, PROF_ON, PROF_TRACE };

static int kx_profile_mode(void)
{
    static const char *const names[] = {"0", "off", "no", "1", "on", "yes", "trace", NULL};
    static const int modes[] = {PROF_OFF, PROF_OFF, PROF_OFF, PROF_ON, PROF_ON, PROF_ON, PROF_TRACE};
    const char *v = gx__env("GX_PROFILE");
    if (!v)
        return PROF_OFF;
    for (int i = 0; names[i]; i++)
        if (strcasecmp(v, names[i]) == 0)
            return modes[i];
    gx__env_warn("GX_PROFILE", v, "1/on/yes, trace, or 0/off/no", "profiling as with 1");
    return PROF_ON;
}

gx_status gx__kx_ctx_init(gx_ctx *ctx)
{
    int mode = kx_profile_mode();
    return mode == PROF_OFF ? GX_OK : gx__prof_start(ctx, mode == PROF_TRACE, true);
}

void gx__kx_ctx_destroy(gx_ctx *ctx)
{
    struct gx__kx *kx = ctx->kx;
    if (!kx)
        return;
    gx__prof_at_destroy(ctx);
    gx__prof_free(ctx);
    gx__kernels_free_all(ctx);
    const gx__backend_iface *io = ctx->be.iface;
    bool streams = gx__iface_supports(io, GX__CAP_STREAMS);
    if (streams)
        io->stream.set_current(&ctx->be, NULL);
    while (kx->streams) {
        gx_stream *s = kx->streams;
        kx->streams = s->next;
        gx__handle_remove(s);
        if (s->st && streams)
            io->stream.destroy(&ctx->be, s->st);
        free(s);
    }
    while (kx->hosts) {
        kx_host *h = kx->hosts;
        kx->hosts = h->next;
        if (gx__iface_supports(io, GX__CAP_PINNED_HOST))
            io->mem.host_free(&ctx->be, h->p);
        else
            free(h->p);
        free(h);
    }
    for (int i = 0; i < kx->nnames; i++)
        free(kx->names[i]);
    free(kx->names);
    free(kx->labels);
    free(kx);
    ctx->kx = NULL;
}

/* ------------------------------------------------------------ names */

int gx__kx_name(struct gx__kx *kx, const char *name)
{
    for (int i = 0; i < kx->nnames; i++)
        if (strcmp(kx->names[i], name) == 0)
            return i;
    if (kx->nnames == kx->capnames) {
        int cap = kx->capnames ? 2 * kx->capnames : 16;
        char **nn = realloc(kx->names, (size_t)cap * sizeof *nn);
        if (!nn)
            return -1;
        kx->names = nn;
        kx->capnames = cap;
    }
    char *c = strdup(name);
    if (!c)
        return -1;
    kx->names[kx->nnames] = c;
    return kx->nnames++;
}

static size_t kx_slot(const kx_label *t, size_t cap, gx__func fn)
{
    size_t h = ((size_t)(uintptr_t)fn >> 4) * 0x9E3779B97F4A7C15ull;
    size_t i = h & (cap - 1);
    while (t[i].fn && t[i].fn != fn)
        i = (i + 1) & (cap - 1);
    return i;
}

int gx__kx_label_of(struct gx__kx *kx, gx__func fn)
{
    if (!kx->caplabels || !fn)
        return -1;
    size_t i = kx_slot(kx->labels, kx->caplabels, fn);
    return kx->labels[i].fn ? kx->labels[i].name : -1;
}

static bool kx_labels_grow(struct gx__kx *kx)
{
    size_t cap = kx->caplabels ? 2 * kx->caplabels : 64;
    kx_label *t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < kx->caplabels; i++)
        if (kx->labels[i].fn)
            t[kx_slot(t, cap, kx->labels[i].fn)] = kx->labels[i];
    free(kx->labels);
    kx->labels = t;
    kx->caplabels = cap;
    return true;
}

/* Profiler names are best effort: without memory the kernel shows as an address. */
void gx__prof_label(gx_ctx *ctx, gx__func fn, const char *label)
{
    struct gx__kx *kx = ctx->kx ? ctx->kx : calloc(1, sizeof *kx);
    if (!kx || !fn)
        return;
    ctx->kx = kx;
    if (2 * (kx->nlabels + 1) > kx->caplabels && !kx_labels_grow(kx))
        return;
    int name = gx__kx_name(kx, label && *label ? label : "kernel");
    if (name < 0)
        return;
    size_t i = kx_slot(kx->labels, kx->caplabels, fn);
    if (!kx->labels[i].fn)
        kx->nlabels++;
    kx->labels[i].fn = fn;
    kx->labels[i].name = name;
}

/* ------------------------------------------------------------ streams */

gx_status gx__stream_backend(gx_ctx *ctx, gx_stream *s, const char *what, void **out)
{
    *out = NULL;
    if (!s)
        return GX_OK;
    if (!gx__handle_live(s))
        return gx__err(GX_ERR_INVALID_HANDLE, "%s: the stream handle is not live (destroyed already?)", what);
    if (s->ctx != ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the stream belongs to another context", what);
    *out = s->st;
    return GX_OK;
}

static gx_status stream_check(gx_stream *s, const char *what)
{
    if (!s)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the stream is NULL", what);
    if (!gx__handle_live(s))
        return gx__err(GX_ERR_INVALID_HANDLE, "%s: the stream handle is not live (destroyed already?)", what);
    return gx__ctx_check(s->ctx);
}

gx_status gx_stream_create(gx_ctx *ctx, gx_stream **out)
{
    GX__ARG(out, "gx_stream_create: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    gx_stream *s = calloc(1, sizeof *s);
    if (!s)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for a stream");
    s->ctx = ctx;
    gx__lock(ctx);
    struct gx__kx *kx = gx__kx(ctx);
    gx_status st = kx ? GX_OK : GX_ERR_OUT_OF_MEMORY;
    if (st == GX_OK && gx__ctx_supports(ctx, GX__CAP_STREAMS))
        st = ctx->be.iface->stream.create(&ctx->be, &s->st);
    if (st == GX_OK) {
        s->next = kx->streams;
        kx->streams = s;
        gx__handle_add(s);
        *out = s;
    } else {
        free(s);
    }
    gx__unlock(ctx);
    return st;
}

gx_status gx_stream_destroy(gx_stream *s)
{
    if (!s)
        return GX_OK;
    GX__CHECK(stream_check(s, "gx_stream_destroy"));
    gx_ctx *ctx = s->ctx;
    gx__lock(ctx);
    gx__handle_remove(s);
    struct gx__kx *kx = ctx->kx;
    for (gx_stream **p = &kx->streams; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    gx_status st = GX_OK;
    if (kx->current == s) {
        kx->current = NULL;
        if (gx__ctx_supports(ctx, GX__CAP_STREAMS))
            ctx->be.iface->stream.set_current(&ctx->be, NULL);
    }
    if (s->st) {
        st = ctx->be.iface->stream.sync_stream(&ctx->be, s->st);
        ctx->be.iface->stream.destroy(&ctx->be, s->st);
    }
    gx__unlock(ctx);
    free(s);
    return st;
}

gx_status gx_stream_sync(gx_stream *s)
{
    GX__CHECK(stream_check(s, "gx_stream_sync"));
    gx_ctx *ctx = s->ctx;
    gx__lock(ctx);
    gx_status st = s->st ? ctx->be.iface->stream.sync_stream(&ctx->be, s->st) : GX_OK;
    gx__unlock(ctx);
    return st;
}

gx_status gx_ctx_set_stream(gx_ctx *ctx, gx_stream *s)
{
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    void *bs = NULL;
    gx_status st = gx__stream_backend(ctx, s, "gx_ctx_set_stream", &bs);
    struct gx__kx *kx = st == GX_OK ? gx__kx(ctx) : NULL;
    if (st == GX_OK && !kx)
        st = GX_ERR_OUT_OF_MEMORY;
    if (st == GX_OK) {
        kx->current = s;
        if (gx__ctx_supports(ctx, GX__CAP_STREAMS))
            ctx->be.iface->stream.set_current(&ctx->be, bs);
    }
    gx__unlock(ctx);
    return st;
}

gx_status gx_ctx_get_stream(gx_ctx *ctx, gx_stream **out)
{
    GX__ARG(out, "gx_ctx_get_stream: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    *out = ctx->kx ? ctx->kx->current : NULL;
    gx__unlock(ctx);
    return GX_OK;
}

/* ------------------------------------------------------------ page-locked memory */

gx_status gx_host_alloc(gx_ctx *ctx, size_t bytes, void **out)
{
    GX__ARG(out, "gx_host_alloc: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(bytes > 0, "gx_host_alloc: bytes must be > 0");
    kx_host *h = calloc(1, sizeof *h);
    if (!h)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    gx__lock(ctx);
    struct gx__kx *kx = gx__kx(ctx);
    gx_status st = kx ? GX_OK : GX_ERR_OUT_OF_MEMORY;
    if (st == GX_OK && gx__ctx_supports(ctx, GX__CAP_PINNED_HOST))
        st = ctx->be.iface->mem.host_alloc(&ctx->be, bytes, &h->p);
    else if (st == GX_OK && !(h->p = malloc(bytes)))
        st = gx__err(GX_ERR_OUT_OF_MEMORY, "gx_host_alloc: out of host memory (%zu bytes)", bytes);
    if (st == GX_OK) {
        h->bytes = bytes;
        h->next = kx->hosts;
        kx->hosts = h;
        *out = h->p;
    } else {
        free(h);
    }
    gx__unlock(ctx);
    return st;
}

gx_status gx_host_free(gx_ctx *ctx, void *p)
{
    if (!p)
        return GX_OK;
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    kx_host *h = NULL;
    for (kx_host **q = ctx->kx ? &ctx->kx->hosts : NULL; q && *q; q = &(*q)->next)
        if ((*q)->p == p) {
            h = *q;
            *q = h->next;
            break;
        }
    if (h) {
        if (gx__ctx_supports(ctx, GX__CAP_PINNED_HOST))
            ctx->be.iface->mem.host_free(&ctx->be, p);
        else
            free(p);
    }
    gx__unlock(ctx);
    if (!h)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "gx_host_free: %p was not allocated by gx_host_alloc on this context (or "
                       "was freed already)", p);
    free(h);
    return GX_OK;
}

/* The buffer [p, p+n) is page-locked: one of ours, or the driver says so. */
static bool host_pinned(gx_ctx *ctx, const void *p, size_t n)
{
    for (kx_host *h = ctx->kx ? ctx->kx->hosts : NULL; h; h = h->next)
        if ((const char *)p >= (const char *)h->p &&
            (size_t)((const char *)p - (const char *)h->p) + n <= h->bytes)
            return true;
    return gx__ctx_supports(ctx, GX__CAP_PINNED_HOST) && ctx->be.iface->mem.host_pinned(&ctx->be, p, n);
}

/* Async is possible: a dense array, page-locked memory, a backend that can. */
static bool async_ok(const gx_array *a, const void *host, size_t n)
{
    gx_ctx *ctx = a->ctx;
    if (!gx__ctx_supports(ctx, GX__CAP_ASYNC_COPY))
        return false;
    return gx__array_contiguous(a) && n > 0 && host_pinned(ctx, host, n);
}

gx_status gx_array_from_host_into_async(const void *host, size_t host_bytes, gx_array *a)
{
    GX__CHECK(gx__array_check(a, "gx_array_from_host_into_async"));
    GX__ARG(host || a->size == 0, "gx_array_from_host_into_async: host must not be NULL");
    size_t n = (size_t)a->size * gx_dtype_size(a->dtype);
    GX__ARG(host_bytes >= n, "gx_array_from_host_into_async: host_bytes = %zu but the array needs %zu",
            host_bytes, n);
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
    GX__ARG(host_bytes >= n, "gx_array_to_host_async: host_bytes = %zu but the array needs %zu",
            host_bytes, n);
    gx_ctx *ctx = a->ctx;
    gx__lock(ctx);
    bool ok = async_ok(a, host, n);
    gx_status s = GX_OK;
    if (ok)
        s = ctx->be.iface->mem.d2h_async(&ctx->be, host, gx__array_ptr(a), n);
    gx__unlock(ctx);
    return ok ? s : gx_array_to_host(a, host, host_bytes);
}
