/* stream.c -- streams, the context's current stream, page-locked host memory; the
 * per-context state of user kernels and the profiler.  (Asynchronous array copies,
 * which fall back to the kernel-backed synchronous ones, are in src/ops/array_ops.c.)
 *
 * The CPU backend has no streams: its work is complete when each call returns, so
 * a gx_stream there is only a token and every ordering request holds trivially. */
#include "core/stream_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static struct gx__kx *kx_new(void)
{
    struct gx__kx *kx = calloc(1, sizeof *kx);
    if (kx) {
        kx->labels = GX__MAP_INIT(GX__MAP_U64);
        kx->name_index = GX__MAP_INIT(GX__MAP_STR);
    }
    return kx;
}

struct gx__kx *gx__kx(gx_ctx *ctx)
{
    if (!ctx->kx && !(ctx->kx = kx_new()))
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
    const gx__backend_iface *io = ctx->be.iface;
    bool streams = gx__iface_supports(io, GX__CAP_STREAMS);
    if (streams)
        io->stream.set_current(&ctx->be, NULL);
    while (kx->streams) {
        gx_stream *s = kx->streams;
        kx->streams = s->next;
        gx__handle_remove(s);
        if (s->st && streams && !s->wrapped)
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
    gx__map_free(&kx->name_index);
    gx__map_free(&kx->labels);
    free(kx);
    ctx->kx = NULL;
}

/* ------------------------------------------------------------ names */

/* Map values are the indices themselves (a found slot tells presence). */
static int kx_index(void *const *slot) { return (int)(intptr_t)*slot; }

int gx__kx_name(struct gx__kx *kx, const char *name)
{
    void **have = gx__map_get_str(&kx->name_index, name);
    if (have)
        return kx_index(have);
    if (kx->nnames == kx->capnames) {
        int cap = kx->capnames ? 2 * kx->capnames : 16;
        char **nn = realloc(kx->names, (size_t)cap * sizeof *nn);
        if (!nn)
            return -1;
        kx->names = nn;
        kx->capnames = cap;
    }
    char *c = strdup(name);
    if (!c || !gx__map_put_str(&kx->name_index, name, (void *)(intptr_t)kx->nnames)) {
        free(c);
        return -1;
    }
    kx->names[kx->nnames] = c;
    return kx->nnames++;
}

int gx__kx_label_of(struct gx__kx *kx, gx__func fn)
{
    void **have = fn ? gx__map_get(&kx->labels, (uint64_t)(uintptr_t)fn) : NULL;
    return have ? kx_index(have) : -1;
}

/* Profiler names are best effort: without memory the kernel shows as an address. */
void gx__prof_label(gx_ctx *ctx, gx__func fn, const char *label)
{
    struct gx__kx *kx = ctx->kx ? ctx->kx : kx_new();
    if (!kx || !fn)
        return;
    ctx->kx = kx;
    int name = gx__kx_name(kx, label && *label ? label : "kernel");
    if (name >= 0)
        (void)gx__map_put(&kx->labels, (uint64_t)(uintptr_t)fn, (void *)(intptr_t)name);
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

/* Makes s (calloc'ed, ctx set) a live stream of its context: the backend stream is
 * created unless s wraps one the application owns.  Frees s on failure. */
static gx_status stream_register(gx_ctx *ctx, gx_stream *s, gx_stream **out)
{
    gx__lock(ctx);
    struct gx__kx *kx = gx__kx(ctx);
    gx_status st = kx ? GX_OK : GX_ERR_OUT_OF_MEMORY;
    if (st == GX_OK && !s->wrapped && gx__ctx_supports(ctx, GX__CAP_STREAMS))
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

gx_status gx_stream_create(gx_ctx *ctx, gx_stream **out)
{
    GX__ARG(out, "gx_stream_create: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    gx_stream *s = calloc(1, sizeof *s);
    if (!s)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for a stream");
    s->ctx = ctx;
    return stream_register(ctx, s, out);
}

gx_status gx_stream_wrap(gx_ctx *ctx, void *native, gx_stream **out)
{
    GX__ARG(out, "gx_stream_wrap: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(native, "gx_stream_wrap: the stream handle is NULL (for the legacy default stream pass (void *)1, "
                    "CU_STREAM_LEGACY)");
    gx_stream *s = calloc(1, sizeof *s);
    if (!s)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for a stream");
    s->ctx = ctx;
    s->wrapped = true;
    s->native = native;
    if (gx__ctx_supports(ctx, GX__CAP_STREAMS))
        s->st = native;
    return stream_register(ctx, s, out);
}

gx_status gx_stream_handle(gx_stream *s, void **out)
{
    GX__ARG(out, "gx_stream_handle: out must not be NULL");
    *out = NULL;
    GX__CHECK(stream_check(s, "gx_stream_handle"));
    *out = s->wrapped ? s->native : s->st;
    return GX_OK;
}

gx_status gx_ctx_stream_handle(gx_ctx *ctx, void **out)
{
    GX__ARG(out, "gx_ctx_stream_handle: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    if (gx__ctx_supports(ctx, GX__CAP_STREAMS))
        *out = ctx->be.iface->stream.current(&ctx->be);
    gx__unlock(ctx);
    return GX_OK;
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
    if (s->st)
        st = ctx->be.iface->stream.sync_stream(&ctx->be, s->st);
    if (s->st && !s->wrapped) /* the application's stream stays the application's */
        ctx->be.iface->stream.destroy(&ctx->be, s->st);
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
                       "was freed already)",
                       p);
    free(h);
    return GX_OK;
}

bool gx__host_pinned(gx_ctx *ctx, const void *p, size_t n)
{
    for (kx_host *h = ctx->kx ? ctx->kx->hosts : NULL; h; h = h->next)
        if ((const char *)p >= (const char *)h->p && (size_t)((const char *)p - (const char *)h->p) + n <= h->bytes)
            return true;
    return gx__ctx_supports(ctx, GX__CAP_PINNED_HOST) && ctx->be.iface->mem.host_pinned(&ctx->be, p, n);
}
