/* event.c -- timing events on a context's stream. */
#include "core/gx_internal.h"
#include "core/stream_priv.h"

#include <stdlib.h>

struct gx_event {
    gx_ctx *ctx;
    void *ev;       /* backend event, or NULL when the backend has none */
    double host_ms; /* CPU: when it was recorded */
    bool recorded;
};

gx_status gx_event_create(gx_ctx *ctx, gx_event **out)
{
    GX__ARG(out, "gx_event_create: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    gx_event *e = calloc(1, sizeof *e);
    if (!e)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for an event");
    e->ctx = ctx;
    gx_status s = GX_OK;
    gx__lock(ctx);
    if (gx__ctx_supports(ctx, GX__CAP_EVENTS))
        s = ctx->be.iface->stream.event_create(&ctx->be, &e->ev);
    gx__unlock(ctx);
    if (s != GX_OK) {
        free(e);
        return s;
    }
    gx__handle_add(e);
    *out = e;
    return GX_OK;
}

static gx_status ev_check(const gx_event *e, const char *what)
{
    if (!e)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the event is NULL", what);
    if (!gx__handle_live(e))
        return gx__err(GX_ERR_INVALID_HANDLE, "%s: the event handle is not live (destroyed already?)", what);
    return gx__ctx_check(e->ctx);
}

gx_status gx_event_record(gx_event *e)
{
    GX__CHECK(ev_check(e, "gx_event_record"));
    gx_ctx *ctx = e->ctx;
    gx__lock(ctx);
    gx_status s = GX_OK;
    if (e->ev)
        s = ctx->be.iface->stream.event_record(&ctx->be, e->ev);
    else
        e->host_ms = gx__now_ms();
    e->recorded = s == GX_OK;
    gx__unlock(ctx);
    return s;
}

gx_status gx_event_elapsed_ms(gx_event *start, gx_event *end, float *ms)
{
    GX__CHECK(ev_check(start, "gx_event_elapsed_ms (start)"));
    GX__CHECK(ev_check(end, "gx_event_elapsed_ms (end)"));
    GX__ARG(ms, "gx_event_elapsed_ms: ms must not be NULL");
    if (start->ctx != end->ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_event_elapsed_ms: the events belong to different contexts");
    if (!start->recorded || !end->recorded)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_event_elapsed_ms: record both events (gx_event_record) first");
    gx_ctx *ctx = start->ctx;
    gx__lock(ctx);
    gx_status s = GX_OK;
    if (start->ev)
        s = ctx->be.iface->stream.event_elapsed(&ctx->be, start->ev, end->ev, ms);
    else
        *ms = (float)(end->host_ms - start->host_ms);
    gx__unlock(ctx);
    return s;
}

gx_status gx_event_destroy(gx_event *e)
{
    if (!e)
        return GX_OK;
    if (!gx__handle_remove(e))
        return gx__err(GX_ERR_INVALID_HANDLE, "gx_event_destroy: the event handle is not live (destroyed already?)");
    if (e->ev && gx__handle_live(e->ctx)) {
        gx__lock(e->ctx);
        e->ctx->be.iface->stream.event_destroy(&e->ctx->be, e->ev);
        gx__unlock(e->ctx);
    }
    free(e);
    return GX_OK;
}

/* ------------------------------------------------------------ streams (gx/kernel.h) */

gx_status gx_event_record_on(gx_event *e, gx_stream *stream)
{
    GX__CHECK(ev_check(e, "gx_event_record_on"));
    gx_ctx *ctx = e->ctx;
    gx__lock(ctx);
    void *st = NULL;
    gx_status s = gx__stream_backend(ctx, stream, "gx_event_record_on", &st);
    if (s == GX_OK && e->ev)
        s = ctx->be.iface->stream.event_record_on(&ctx->be, e->ev, st);
    else if (s == GX_OK)
        e->host_ms = gx__now_ms();
    if (s == GX_OK)
        e->recorded = true;
    gx__unlock(ctx);
    return s;
}

gx_status gx_stream_wait_event(gx_stream *stream, gx_event *e)
{
    GX__CHECK(ev_check(e, "gx_stream_wait_event"));
    if (!e->recorded)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_stream_wait_event: record the event (gx_event_record) first");
    gx_ctx *ctx = e->ctx;
    gx__lock(ctx);
    void *st = NULL;
    gx_status s = gx__stream_backend(ctx, stream, "gx_stream_wait_event", &st);
    /* CPU: the event's work is complete already. */
    if (s == GX_OK && e->ev)
        s = ctx->be.iface->stream.wait_event(&ctx->be, st, e->ev);
    gx__unlock(ctx);
    return s;
}

gx_status gx_event_sync(gx_event *e)
{
    GX__CHECK(ev_check(e, "gx_event_sync"));
    if (!e->recorded)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_event_sync: record the event (gx_event_record) first");
    gx_ctx *ctx = e->ctx;
    gx__lock(ctx);
    gx_status s = e->ev ? ctx->be.iface->stream.event_sync(&ctx->be, e->ev) : GX_OK;
    gx__unlock(ctx);
    return s;
}
