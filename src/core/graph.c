/* graph.c -- gx_graph_*: record a sequence of gx calls, replay it.
 *
 * Recording swaps the context's backend table for a wrapper (as the profiler does),
 * so no op knows about graphs beyond gx__graph_recording():
 *   - backends with GX__CAP_GRAPHS (CUDA) capture the stream natively; the wrapper
 *     only refuses what a capture cannot hold (host waits, d2h reads) and keeps the
 *     frees of temporaries for later, since the graph still uses their memory;
 *   - the others (the CPU) do not run the launches and copies: the wrapper stores them
 *     (function, argument bytes, range; copy addresses) and gx_graph_launch calls
 *     the real table with them in order.  That skips the lambda memo, source keys,
 *     plans and checks of every call: only the launches remain. */
#include "core/gx_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GR_MAGIC 0x6778677261706821ull

typedef enum { GR_LAUNCH, GR_D2D, GR_H2D } gr_kind;

/* One recorded device operation (non-native backends). */
typedef struct gr_node {
    gr_kind kind;
    gx__func f;     /* GR_LAUNCH */
    gx__launch l;   /* GR_LAUNCH: l.args points at `bytes` */
    void *dst;      /* copies */
    const void *src; /* GR_D2D: the device source; GR_H2D: `bytes` */
    size_t n;
    void *bytes; /* owned copy: the kernel's argument struct, or h2d's host data */
} gr_node;

typedef struct gr_block {
    void *p;
    size_t bytes;
} gr_block;

struct gx_graph {
    uint64_t magic;
    gx_ctx *ctx;
    void *exec; /* native graph (GX__CAP_GRAPHS), else NULL */
    gr_node *nodes;
    size_t n, cap;
    gr_block *keep; /* temporaries freed while recording: freed at destroy */
    size_t nkeep, capkeep;
    int64_t launches;
};

/* The recording under way: the wrapper table that ctx->be.iface points at. */
typedef struct gx__graph_rec {
    gx__backend_iface wrap;
    const gx__backend_iface *real;
    gx_graph *g;
    bool native;
    gx_status spoiled; /* the first refusal's status; GX_OK while the recording is good */
    char why[400];
} gr_rec;

static gr_rec *REC(gx__backend *be) { return (gr_rec *)((char *)be->iface - offsetof(gr_rec, wrap)); }

/* ------------------------------------------------------------ refusals */

gx_status gx__graph_refuse(gx_ctx *ctx, const char *call, const char *instead)
{
    gx_status s = gx__err(GX_ERR_UNSUPPORTED,
                          "%s cannot be recorded in a graph (between gx_graph_begin and gx_graph_end): it waits "
                          "for the device or reads a value to the host; %s",
                          call, instead);
    gr_rec *r = ctx->rec;
    if (r && r->spoiled == GX_OK) {
        r->spoiled = s;
        snprintf(r->why, sizeof r->why, "%s", gx_last_error());
    }
    return s;
}

static gx_status w_refuse_copy(gx__backend *be, void *dst, const void *src, size_t n)
{
    (void)dst, (void)src, (void)n;
    return gx__graph_refuse(be->ctx, "a read of device memory to the host",
                            "read results after gx_graph_launch (gx_array_to_host waits for it)");
}

static gx_status w_sync(gx__backend *be)
{
    return gx__graph_refuse(be->ctx, "a synchronisation (gx_sync, gx_stream_sync, gx_event_sync)",
                            "synchronise after gx_graph_end / gx_graph_launch");
}

static gx_status w_sync_stream(gx__backend *be, void *st)
{
    (void)st;
    return w_sync(be);
}

static gx_status w_event_sync(gx__backend *be, void *ev)
{
    (void)ev;
    return w_sync(be);
}

static gx_status w_gemm(gx__backend *be, const gx__gemm *g)
{
    gr_rec *r = REC(be);
    if (r->native)
        return r->real->lib.gemm(be, g);
    return gx__graph_refuse(be->ctx, "gx_matmul", "on this backend it runs on the host at once; call it outside");
}

static gx_status w_fft(gx__backend *be, const gx__fft *f)
{
    gr_rec *r = REC(be);
    if (r->native)
        return r->real->lib.fft(be, f);
    return gx__graph_refuse(be->ctx, "gx_fft", "on this backend it runs on the host at once; call it outside");
}

/* ------------------------------------------------------------ recording */

static gx_status gr_push(gr_rec *r, const gr_node *nd)
{
    gx_graph *g = r->g;
    if (g->n == g->cap) {
        size_t c = g->cap ? 2 * g->cap : 16;
        gr_node *p = realloc(g->nodes, c * sizeof *p);
        if (!p)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory recording a graph");
        g->nodes = p;
        g->cap = c;
    }
    g->nodes[g->n++] = *nd;
    return GX_OK;
}

static gx_status gr_push_bytes(gr_rec *r, gr_node *nd, const void *p, size_t n)
{
    if (n && !(nd->bytes = malloc(n)))
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory recording a graph");
    if (n)
        memcpy(nd->bytes, p, n);
    gx_status s = gr_push(r, nd);
    if (s != GX_OK)
        free(nd->bytes);
    return s;
}

static gx_status w_launch(gx__backend *be, gx__func f, const gx__launch *l)
{
    gr_rec *r = REC(be);
    r->g->launches++;
    if (r->native)
        return r->real->launch.run(be, f, l);
    gr_node nd = {.kind = GR_LAUNCH, .f = f, .l = *l};
    return gr_push_bytes(r, &nd, l->args, l->args ? l->args_size : 0);
}

static gx_status w_launch_user(gx__backend *be, gx__func f, const gx__launch *l, void **params, void *st, int coop)
{
    gr_rec *r = REC(be);
    r->g->launches++;
    if (r->native)
        return r->real->launch.user(be, f, l, params, st, coop);
    /* The parameters' sizes are the kernel's, unknown here: nothing to copy them by. */
    return gx__err(GX_ERR_UNSUPPORTED, "gx_kernel_launch cannot be recorded in a graph on this backend (only CUDA "
                                       "graphs hold user kernels); launch it outside the recording");
}

static gx_status w_d2d(gx__backend *be, void *dst, const void *src, size_t n)
{
    gr_rec *r = REC(be);
    r->g->launches++; /* a device operation too (gx_graph_size counts it on CUDA) */
    if (r->native)
        return r->real->mem.d2d(be, dst, src, n);
    gr_node nd = {.kind = GR_D2D, .dst = dst, .src = src, .n = n};
    return gr_push(r, &nd);
}

/* Host data written to the device inside a recording (small constants: a scratch
 * reset, a flag): the bytes are kept and written again at every replay. */
static gx_status w_h2d(gx__backend *be, void *dst, const void *src, size_t n)
{
    gr_rec *r = REC(be);
    if (r->native)
        return gx__graph_refuse(be->ctx, "a synchronous host-to-device copy (gx_array_from_host_into...)",
                                "write inputs before gx_graph_launch, outside the recording");
    gr_node nd = {.kind = GR_H2D, .dst = dst, .n = n};
    gx_status s = gr_push_bytes(r, &nd, src, n);
    if (s == GX_OK)
        r->g->nodes[r->g->n - 1].src = r->g->nodes[r->g->n - 1].bytes;
    return s;
}

/* Memory freed while recording is still the graph's: keep it until gx_graph_destroy. */
static void w_free(gx__backend *be, void *ptr, size_t bytes)
{
    gr_rec *r = REC(be);
    gx_graph *g = r->g;
    if (!ptr)
        return;
    if (g->nkeep == g->capkeep) {
        size_t c = g->capkeep ? 2 * g->capkeep : 8;
        gr_block *p = realloc(g->keep, c * sizeof *p);
        if (!p) {
            /* Cannot remember it: leaking is safe, reusing memory the graph writes is not. */
            return;
        }
        g->keep = p;
        g->capkeep = c;
    }
    g->keep[g->nkeep++] = (gr_block){ptr, bytes};
}

static void wrap_init(gr_rec *r)
{
    const gx__backend_iface *io = r->real;
    r->wrap = *io;
    r->wrap.mem.d2h = w_refuse_copy;
    r->wrap.mem.h2d = w_h2d;
    r->wrap.mem.d2d = w_d2d;
    r->wrap.mem.free = w_free;
    r->wrap.stream.sync = w_sync;
    r->wrap.launch.run = w_launch;
    if (gx__iface_supports(io, GX__CAP_ASYNC_COPY)) {
        r->wrap.mem.h2d_async = w_refuse_copy;
        r->wrap.mem.d2h_async = w_refuse_copy;
    }
    if (gx__iface_supports(io, GX__CAP_STREAMS))
        r->wrap.stream.sync_stream = w_sync_stream;
    if (gx__iface_supports(io, GX__CAP_EVENTS))
        r->wrap.stream.event_sync = w_event_sync;
    if (gx__iface_supports(io, GX__CAP_USER_KERNELS))
        r->wrap.launch.user = w_launch_user;
    if (gx__iface_supports(io, GX__CAP_MATMUL))
        r->wrap.lib.gemm = w_gemm;
    if (gx__iface_supports(io, GX__CAP_FFT))
        r->wrap.lib.fft = w_fft;
}

/* The real table's h2d: CUDA, when capturing, copies on its side stream. */
gx_status gx__mem_setup_h2d(gx_ctx *ctx, void *dst, const void *src, size_t n)
{
    const gx__backend_iface *io = ctx->rec ? ctx->rec->real : ctx->be.iface;
    return io->mem.h2d(&ctx->be, dst, src, n);
}

/* ------------------------------------------------------------ the graph */

static gx_status graph_check(const gx_graph *g, const char *fn)
{
    if (!g || g->magic != GR_MAGIC)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: not a live graph (NULL, destroyed, or not from gx_graph_end)",
                       fn);
    return GX_OK;
}

/* Frees the nodes and the kept temporaries through the real table (caller holds the
 * lock; the context is not recording into g). */
static void graph_free(gx_ctx *ctx, gx_graph *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->nodes[i].bytes);
    free(g->nodes);
    if (g->exec)
        ctx->be.iface->stream.graph_free(&ctx->be, g->exec);
    for (size_t i = 0; i < g->nkeep; i++)
        ctx->be.iface->mem.free(&ctx->be, g->keep[i].p, g->keep[i].bytes);
    free(g->keep);
    g->magic = 0;
    free(g);
}

gx_status gx_graph_begin(gx_ctx *ctx)
{
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    gx_status s = GX_OK;
    gr_rec *r = NULL;
    if (ctx->rec)
        s = gx__err(GX_ERR_INVALID_ARGUMENT,
                    "gx_graph_begin: a recording is already under way on this context (graphs do not nest); "
                    "call gx_graph_end first");
    if (s == GX_OK && (!(r = calloc(1, sizeof *r)) || !(r->g = calloc(1, sizeof *r->g))))
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "gx_graph_begin: out of host memory");
    if (s == GX_OK) {
        r->real = ctx->be.iface;
        r->native = gx__iface_supports(r->real, GX__CAP_GRAPHS);
        r->g->magic = GR_MAGIC;
        r->g->ctx = ctx;
        wrap_init(r);
        if (r->native)
            s = r->real->stream.capture_begin(&ctx->be);
    }
    if (s == GX_OK) {
        ctx->rec = r;
        ctx->be.iface = &r->wrap;
    } else if (r) {
        free(r->g);
        free(r);
    }
    gx__unlock(ctx);
    return s;
}

/* Puts the real table back and ends a native capture; *exec gets the native graph. */
static gx_status rec_stop(gx_ctx *ctx, gr_rec *r, void **exec)
{
    *exec = NULL;
    if (ctx->be.iface == &r->wrap)
        ctx->be.iface = r->real;
    ctx->rec = NULL;
    if (!r->native)
        return GX_OK;
    return r->real->stream.capture_end(&ctx->be, exec);
}

gx_status gx_graph_end(gx_ctx *ctx, gx_graph **out)
{
    GX__ARG(out, "gx_graph_end: out must not be NULL (it receives the graph)");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    gr_rec *r = ctx->rec;
    if (!r) {
        gx__unlock(ctx);
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_graph_end: no recording is under way on this context (call "
                                                "gx_graph_begin first)");
    }
    gx_graph *g = r->g;
    gx_status s = rec_stop(ctx, r, &g->exec);
    if (r->spoiled != GX_OK)
        s = gx__err(r->spoiled, "gx_graph_end: the recording holds a refused call, so no graph was made: %s", r->why);
    if (s == GX_OK)
        *out = g;
    else
        graph_free(ctx, g);
    free(r);
    gx__unlock(ctx);
    return s;
}

/* The CPU (and any backend without native graphs): the recorded operations in order. */
static gx_status graph_replay(gx_ctx *ctx, const gx_graph *g)
{
    const gx__backend_iface *io = ctx->be.iface;
    gx_status s = GX_OK;
    for (size_t i = 0; s == GX_OK && i < g->n; i++) {
        const gr_node *nd = &g->nodes[i];
        if (nd->kind == GR_LAUNCH) {
            gx__launch l = nd->l;
            l.args = nd->bytes;
            s = io->launch.run(&ctx->be, nd->f, &l);
        } else if (nd->kind == GR_D2D) {
            s = io->mem.d2d(&ctx->be, nd->dst, nd->src, nd->n);
        } else {
            s = io->mem.h2d(&ctx->be, nd->dst, nd->bytes, nd->n);
        }
    }
    return s;
}

gx_status gx_graph_launch(gx_graph *g)
{
    GX__CHECK(graph_check(g, "gx_graph_launch"));
    gx_ctx *ctx = g->ctx;
    gx__lock(ctx);
    gx_status s;
    if (ctx->rec)
        s = gx__err(GX_ERR_INVALID_ARGUMENT, "gx_graph_launch: a recording is under way on the graph's context; "
                                             "call gx_graph_end first (graphs do not nest)");
    else if (g->exec)
        s = ctx->be.iface->stream.graph_launch(&ctx->be, g->exec);
    else
        s = graph_replay(ctx, g);
    gx__unlock(ctx);
    return s;
}

gx_status gx_graph_size(const gx_graph *g, int64_t *out)
{
    GX__ARG(out, "gx_graph_size: out must not be NULL");
    *out = 0;
    GX__CHECK(graph_check(g, "gx_graph_size"));
    *out = g->exec ? g->launches : (int64_t)g->n;
    return GX_OK;
}

gx_status gx_graph_destroy(gx_graph *g)
{
    if (!g)
        return GX_OK;
    GX__CHECK(graph_check(g, "gx_graph_destroy"));
    gx_ctx *ctx = g->ctx;
    gx__lock(ctx);
    if (ctx->rec) {
        gx__unlock(ctx);
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_graph_destroy: a recording is under way on the graph's context; "
                                                "call gx_graph_end first");
    }
    /* Queued launches may still use the kept temporaries (device backends). */
    gx_status s = g->exec ? ctx->be.iface->stream.sync(&ctx->be) : GX_OK;
    graph_free(ctx, g);
    gx__unlock(ctx);
    return s;
}

void gx__graph_ctx_destroy(gx_ctx *ctx)
{
    gr_rec *r = ctx->rec;
    if (!r)
        return;
    void *exec = NULL;
    (void)rec_stop(ctx, r, &exec);
    r->g->exec = exec;
    graph_free(ctx, r->g);
    free(r);
}
