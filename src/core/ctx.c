/* ctx.c -- contexts: the lock, the memory pool policy, teardown.  Which backend a
 * context runs on is the backend layer's choice (src/backend/registry.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/gx_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void gx__ctx_release_arrays(gx_ctx *ctx); /* array.c */

const char *gx__target_name(gx__target t) { return t == GX__TARGET_CUDA ? "cuda" : "c"; }

const char *gx_backend_name(gx_backend_kind kind)
{
    switch (kind) {
    case GX_BACKEND_AUTO: return "auto";
    case GX_BACKEND_CPU: return "cpu";
    case GX_BACKEND_CUDA: return "cuda";
    }
    return "?";
}

gx_status gx__ctx_check(const gx_ctx *ctx)
{
    if (!ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "the context is NULL: create one with gx_ctx_create()");
    if (!gx__handle_live(ctx) || ctx->magic != GX__CTX_MAGIC)
        return gx__err(GX_ERR_INVALID_HANDLE,
                       "the context handle is not live (destroyed already, or not made by gx_ctx_create)");
    return GX_OK;
}

void gx__lock(gx_ctx *ctx) { pthread_mutex_lock(&ctx->lock); }
void gx__unlock(gx_ctx *ctx) { pthread_mutex_unlock(&ctx->lock); }

/* The default limit.  A backend whose memory is the host's (GX__CAP_HOST) gets what
 * it says it can back, mem_total (physical memory, or less under a cgroup): Linux
 * overcommits, so without a limit a request beyond that succeeds and the process is
 * killed later, when the pages are touched, instead of getting GX_ERR_OUT_OF_MEMORY
 * at the call.  A GPU driver refuses what the device lacks by itself: no limit. */
static size_t ctx_default_limit(const gx_ctx *ctx)
{
    return gx__ctx_supports(ctx, GX__CAP_HOST) ? ctx->dinfo.mem_total : 0;
}

static void host_unreserve(gx_ctx *ctx, size_t bytes);

static void ctx_limit_from_env(gx_ctx *ctx)
{
    size_t dflt = ctx_default_limit(ctx);
    ctx->mem_limit = dflt;
    ctx->mem_host = gx__ctx_supports(ctx, GX__CAP_HOST);
    ctx->mem_shared = dflt != 0;
    const char *s = gx__env("GX_MEMORY_LIMIT");
    if (!s)
        return;
    /* "0" means no limit, as gx_memory_set_limit(ctx, 0) does: the user's choice. */
    if (strcmp(s, "0") == 0 || strcasecmp(s, "none") == 0) {
        ctx->mem_limit = 0;
        ctx->mem_shared = false;
        return;
    }
    ctx->mem_limit =
        gx__env_size("GX_MEMORY_LIMIT", dflt, ctx->dinfo.mem_total,
                     "a size such as 8GiB, 512MB or 1000000, a percentage of the device's memory "
                     "such as 50%, or 0/none for no limit",
                     dflt ? "using the default limit, the memory this process can use" : "running with no limit");
    /* The user's own limit holds for this context alone; a bad value falls back to the
     * default, shared one. */
    ctx->mem_shared = dflt != 0 && ctx->mem_limit == dflt;
}

static void ctx_dump_warn(const char *dir, const char *why)
{
    char accepted[256];
    snprintf(accepted, sizeof accepted, "a folder gx can create or write into; this one: %s", why);
    gx__env_warn("GX_DUMP", dir, accepted, "kernel sources are not written");
}

/* GX_DUMP names a folder for generated kernel sources.  It is made and checked
 * here, once, so a bad path is one warning instead of one per kernel (and no
 * dumping, rather than failing kernels over a debugging aid). */
static void ctx_dump_from_env(gx_ctx *ctx)
{
    const char *dir = gx__env("GX_DUMP");
    if (!dir)
        return;
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (mkdir(dir, 0755) != 0) {
            ctx_dump_warn(dir, strerror(errno));
            return;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        ctx_dump_warn(dir, "it is not a folder");
        return;
    } else if (access(dir, W_OK | X_OK) != 0) {
        ctx_dump_warn(dir, strerror(errno));
        return;
    }
    ctx->dump_dir = strdup(dir); /* NULL on no memory: no dumping, nothing else lost */
}

/* Recursive: public calls compose (zeros = empty + fill) under one lock. */
static void ctx_lock_init(gx_ctx *ctx)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&ctx->lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

gx_status gx__ctx_open(const gx__backend_iface *iface, int device, gx_ctx **out)
{
    double t0 = gx__now_ms();
    gx_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory creating a context");
    ctx->magic = GX__CTX_MAGIC;
    ctx->be.iface = iface;
    ctx->be.device = device;
    ctx->be.ctx = ctx;
    ctx_lock_init(ctx);
    gx_status s = iface->open(&ctx->be, device);
    if (s == GX_OK)
        s = iface->info(&ctx->be, &ctx->dinfo);
    if (s != GX_OK) {
        if (ctx->be.impl)
            iface->close(&ctx->be);
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return s;
    }
    ctx_limit_from_env(ctx);
    if (gx__kx_ctx_init(ctx) != GX_OK)
        fprintf(stderr, "gx: warning: GX_PROFILE: %s\n", gx_last_error());
    ctx_dump_from_env(ctx);
    gx__handle_add(ctx);
    ctx->t_create_ms = gx__now_ms() - t0;
    *out = ctx;
    return GX_OK;
}

gx_status gx_ctx_timing_get(gx_ctx *ctx, gx_ctx_timing *out)
{
    GX__ARG(out, "gx_ctx_timing_get: out is NULL");
    GX__CHECK(gx__ctx_check(ctx));
    memset(out, 0, sizeof *out);
    gx__lock(ctx);
    out->driver_ms = ctx->be.t_driver_ms;
    out->device_ctx_ms = ctx->be.t_devctx_ms;
    out->create_ms = ctx->t_create_ms;
    out->module_ms = ctx->t_module_ms;
    out->modules = ctx->n_modules;
    out->compile_ms = ctx->cstats.compile_ms;
    gx__unlock(ctx);
    return GX_OK;
}

void *gx__ctx_ext_get(gx_ctx *ctx, const gx__ctx_ext *ext)
{
    for (int i = 0; i < ctx->next; i++)
        if (ctx->ext[i].ext == ext)
            return ctx->ext[i].state;
    return NULL;
}

gx_status gx__ctx_ext_set(gx_ctx *ctx, const gx__ctx_ext *ext, void *state)
{
    for (int i = 0; i < ctx->next; i++)
        if (ctx->ext[i].ext == ext) {
            ctx->ext[i].state = state;
            return GX_OK;
        }
    if (ctx->next == GX__CTX_EXT_MAX)
        return gx__err(GX_ERR_INTERNAL, "context state for '%s': all %d slots are taken (raise GX__CTX_EXT_MAX)",
                       ext->name, GX__CTX_EXT_MAX);
    ctx->ext[ctx->next++] = (struct gx__ctx_ext_slot){ext, state};
    return GX_OK;
}

/* Newest first: a module attached later may use one attached earlier. */
static void ctx_release_exts(gx_ctx *ctx)
{
    while (ctx->next > 0) {
        struct gx__ctx_ext_slot *sl = &ctx->ext[--ctx->next];
        if (sl->state)
            sl->ext->release(ctx, sl->state);
    }
}

gx_status gx_ctx_destroy(gx_ctx *ctx)
{
    if (!ctx)
        return GX_OK;
    GX__CHECK(gx__ctx_check(ctx));
    gx__handle_remove(ctx);
    gx__lock(ctx);
    gx__graph_ctx_destroy(ctx); /* a recording left open: the real backend table back */
    /* A fault reported earlier is no news: the context is released all the same and
     * the call succeeds.  One that surfaces here (queued work failed) is reported. */
    bool known_fault = ctx->be.iface->stream.faulted && ctx->be.iface->stream.faulted(&ctx->be);
    gx_status s = ctx->be.iface->stream.sync(&ctx->be);
    if (known_fault)
        s = GX_OK;
    gx__kx_ctx_destroy(ctx); /* profile report, streams, pinned buffers */
    gx__dlpack_orphan_all(ctx);
    gx__ctx_release_arrays(ctx);
    ctx_release_exts(
        ctx); /* the higher layers' state: kernel table, user functions and kernels, scratch, library handles */
    gx__memo_free(ctx);
    host_unreserve(ctx, ctx->mem.in_use + ctx->mem.scratch); /* whatever was not given back one by one */
    ctx->be.iface->close(&ctx->be);
    free(ctx->dump_dir);
    ctx->magic = 0;
    gx__unlock(ctx);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
    return s;
}

gx_status gx_ctx_backend(const gx_ctx *ctx, gx_backend_kind *out)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(out, "gx_ctx_backend: out must not be NULL");
    *out = ctx->be.iface->kind;
    return GX_OK;
}

gx_status gx_sync(gx_ctx *ctx)
{
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    gx_status s = ctx->be.iface->stream.sync(&ctx->be);
    gx__unlock(ctx);
    return s;
}

gx_status gx_device_info_get(gx_ctx *ctx, gx_device_info *out)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(out, "gx_device_info_get: out must not be NULL");
    gx__lock(ctx);
    gx_status s = ctx->be.iface->info(&ctx->be, out);
    gx__unlock(ctx);
    return s;
}

/* ------------------------------------------------------------ memory */

static void fmt_bytes(char *out, size_t n, size_t v)
{
    if (v >= (1ull << 30))
        snprintf(out, n, "%.2f GiB", (double)v / (double)(1ull << 30));
    else if (v >= (1ull << 20))
        snprintf(out, n, "%.2f MiB", (double)v / (double)(1ull << 20));
    else
        snprintf(out, n, "%zu B", v);
}

static gx_status mem_oom(gx_ctx *ctx, size_t bytes, const char *why)
{
    char req[32], use[32], scr[32], res[32], lim[32];
    fmt_bytes(req, sizeof req, bytes);
    fmt_bytes(use, sizeof use, ctx->mem.in_use);
    fmt_bytes(scr, sizeof scr, ctx->mem.scratch);
    fmt_bytes(res, sizeof res, ctx->be.iface->mem.reserved(&ctx->be));
    if (ctx->mem_limit)
        fmt_bytes(lim, sizeof lim, ctx->mem_limit);
    else
        snprintf(lim, sizeof lim, "none");
    return gx__err(GX_ERR_OUT_OF_MEMORY,
                   "out of %s memory: a request for %s failed (%s) after trimming the pool and retrying; "
                   "pool state: %s in use by live arrays, %s held by gx's scratch buffers, %s reserved, limit %s. "
                   "Release arrays you no longer need, use smaller batches, or raise GX_MEMORY_LIMIT",
                   ctx->be.iface->name, req, why, use, scr, res, lim);
}

/* The limit covers everything gx takes from the device: arrays and scratch. */
static bool mem_over_limit(const gx_ctx *ctx, size_t bytes)
{
    size_t held = ctx->mem.in_use + ctx->mem.scratch;
    return ctx->mem_limit && (bytes > ctx->mem_limit || held > ctx->mem_limit - bytes);
}

/* Host memory taken by every context of the process whose memory is the host's
 * (arrays and scratch).  The default limit is the memory the process can use, a
 * budget of the machine's, not of one context: several CPU contexts together would
 * otherwise overcommit as one alone cannot.  So a context on the default limit
 * reserves its bytes here first and fails when the whole would pass the limit. */
static _Atomic size_t host_taken;

static gx_status host_reserve(gx_ctx *ctx, size_t bytes)
{
    if (!ctx->mem_host)
        return GX_OK;
    size_t before = atomic_fetch_add(&host_taken, bytes);
    if (!ctx->mem_shared || before + bytes <= ctx->mem_limit)
        return GX_OK;
    atomic_fetch_sub(&host_taken, bytes);
    char why[128], other[32];
    size_t own = ctx->mem.in_use + ctx->mem.scratch;
    fmt_bytes(other, sizeof other, before > own ? before - own : 0);
    snprintf(why, sizeof why, "over the memory limit this process's CPU contexts share; %s held by the others",
             other);
    return mem_oom(ctx, bytes, why);
}

static void host_unreserve(gx_ctx *ctx, size_t bytes)
{
    if (ctx->mem_host)
        atomic_fetch_sub(&host_taken, bytes);
}

/* One allocation from the backend, counted in *counter (in_use or scratch). */
static gx_status mem_take(gx_ctx *ctx, size_t bytes, void **ptr, size_t *counter)
{
    *ptr = NULL;
    if (bytes == 0)
        return GX_OK;
    if (mem_over_limit(ctx, bytes))
        return mem_oom(ctx, bytes, "over the memory limit");
    GX__CHECK(host_reserve(ctx, bytes));
    gx_status s = ctx->be.iface->mem.alloc(&ctx->be, bytes, ptr);
    if (s == GX_ERR_OUT_OF_MEMORY) {
        /* Cached pool blocks may be what is missing: give them back and try once more. */
        ctx->mem.retries++;
        ctx->be.iface->stream.sync(&ctx->be);
        ctx->be.iface->mem.trim(&ctx->be);
        s = ctx->be.iface->mem.alloc(&ctx->be, bytes, ptr);
        if (s == GX_ERR_OUT_OF_MEMORY) {
            host_unreserve(ctx, bytes);
            return mem_oom(ctx, bytes, "the device has no more");
        }
    }
    if (s != GX_OK) {
        host_unreserve(ctx, bytes);
        return s;
    }
    *counter += bytes;
    ctx->mem.allocs++;
    return GX_OK;
}

gx_status gx__mem_alloc(gx_ctx *ctx, size_t bytes, void **ptr)
{
    GX__CHECK(mem_take(ctx, bytes, ptr, &ctx->mem.in_use));
    if (ctx->mem.in_use > ctx->mem.peak)
        ctx->mem.peak = ctx->mem.in_use;
    return GX_OK;
}

/* Gives an allocation of mem_take back, uncounting it from *counter. */
static void mem_give(gx_ctx *ctx, void *ptr, size_t bytes, size_t *counter)
{
    if (!ptr && bytes == 0)
        return;
    ctx->be.iface->mem.free(&ctx->be, ptr, bytes);
    *counter -= bytes;
    host_unreserve(ctx, bytes);
}

void gx__mem_free(gx_ctx *ctx, void *ptr, size_t bytes) { mem_give(ctx, ptr, bytes, &ctx->mem.in_use); }

gx_status gx__scratch_alloc(gx_ctx *ctx, size_t bytes, void **ptr)
{
    return mem_take(ctx, bytes, ptr, &ctx->mem.scratch);
}

void gx__scratch_free(gx_ctx *ctx, void *ptr, size_t bytes) { mem_give(ctx, ptr, bytes, &ctx->mem.scratch); }

gx_status gx_memory_stats_get(gx_ctx *ctx, gx_memory_stats *out)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(out, "gx_memory_stats_get: out must not be NULL");
    gx__lock(ctx);
    *out = ctx->mem;
    size_t r = ctx->be.iface->mem.reserved(&ctx->be);
    /* A backend that reports nothing held (none keeps a pool of its own then) holds
     * what is in use, arrays and scratch. */
    out->reserved = r ? r : ctx->mem.in_use + ctx->mem.scratch;
    out->limit = ctx->mem_limit;
    gx__unlock(ctx);
    return GX_OK;
}

gx_status gx_memory_trim(gx_ctx *ctx)
{
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    gx_status s = ctx->be.iface->stream.sync(&ctx->be);
    if (s == GX_OK)
        s = ctx->be.iface->mem.trim(&ctx->be);
    gx__unlock(ctx);
    return s;
}

gx_status gx_memory_set_limit(gx_ctx *ctx, size_t bytes)
{
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    ctx->mem_limit = bytes;
    ctx->mem_shared = false; /* the user's own limit, for this context alone */
    gx__unlock(ctx);
    return GX_OK;
}
