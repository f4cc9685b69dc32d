/* info.c -- the version report (`gx info`, gx_info_text).  It sits in the backend
 * layer because it asks each backend what it found (driver, NVRTC, compiler). */
#include "backend/backend.h"
#include "jit/cache.h"

#include <stdio.h>
#include <string.h>

#ifndef GX_BUILD_TYPE
#define GX_BUILD_TYPE "unknown"
#endif

static void info_bytes(gx__sbuf *b, const char *label, size_t v)
{
    gx__sb_printf(b, "  %-22s %.2f GiB\n", label, (double)v / (double)(1ull << 30));
}

static void info_device(gx__sbuf *b, const gx_device_info *d, gx_backend_kind k)
{
    gx__sb_printf(b, "  %-22s %s\n", "name", d->name);
    if (k == GX_BACKEND_CUDA) {
        gx__sb_printf(b, "  %-22s %d.%d (sm_%d%d)\n", "compute capability", d->cc_major, d->cc_minor, d->cc_major,
                      d->cc_minor);
        gx__sb_printf(b, "  %-22s %d\n", "multiprocessors", d->multiprocessors);
        info_bytes(b, "memory total", d->mem_total);
        info_bytes(b, "memory free", d->mem_free);
        gx__sb_printf(b, "  %-22s %.1f MiB\n", "L2 cache", (double)d->l2_bytes / 1048576.0);
        gx__sb_printf(b, "  %-22s %d\n", "max threads / block", d->max_threads_per_block);
        gx__sb_printf(b, "  %-22s %zu KiB (opt-in %zu KiB)\n", "shared memory / block", d->shared_per_block / 1024,
                      d->shared_per_block_optin / 1024);
        if (d->mem_bandwidth_gbs > 0)
            gx__sb_printf(b, "  %-22s %.0f GB/s (theoretical)\n", "memory bandwidth", d->mem_bandwidth_gbs);
    } else {
        gx__sb_printf(b, "  %-22s %d\n", "cores", d->multiprocessors);
        info_bytes(b, "memory total", d->mem_total);
        info_bytes(b, "memory available", d->mem_free);
        gx__sb_printf(b, "  %-22s %.1f MiB\n", "last-level cache", (double)d->l2_bytes / 1048576.0);
    }
}

static void info_memory(gx__sbuf *b, gx_ctx *ctx)
{
    gx_memory_stats m;
    if (gx_memory_stats_get(ctx, &m) != GX_OK)
        return;
    /* Scratch on its own line: in use is what the caller's arrays hold, and reads 0
     * once they are released even though gx keeps its reduction buffers. */
    gx__sb_printf(b, "memory pool:\n  %-22s %zu B\n  %-22s %zu B\n  %-22s %zu B\n  %-22s %zu B\n", "in use (arrays)",
                  m.in_use, "scratch (gx internal)", m.scratch, "peak (arrays)", m.peak, "reserved", m.reserved);
    if (m.limit && gx__env("GX_MEMORY_LIMIT"))
        gx__sb_printf(b, "  %-22s %zu B (GX_MEMORY_LIMIT)\n", "limit", m.limit);
    else if (m.limit) /* the CPU backend's default: the host's memory is overcommitted */
        gx__sb_printf(b, "  %-22s %zu B (what this process can use; GX_MEMORY_LIMIT sets another)\n", "limit", m.limit);
    else
        gx__sb_printf(b, "  %-22s none (set GX_MEMORY_LIMIT, e.g. 8GiB or 50%%)\n", "limit");
}

static void info_build(gx__sbuf *b)
{
    gx__sb_printf(b, "gx %s (header %s), build %s, C compiler at build time: %s\n", gx_version(), GX_VERSION_STRING,
                  GX_BUILD_TYPE, __VERSION__);
#ifdef GX_HAVE_CUDA
    gx__sb_puts(b, "build options: CUDA backend yes (driver and NVRTC loaded at run time)");
#else
    gx__sb_puts(b, "build options: CUDA backend no (no CUDA headers at build time)");
#endif
#ifdef GX_HAVE_CBLAS
    gx__sb_puts(b, ", CBLAS yes");
#else
    gx__sb_puts(b, ", CBLAS no");
#endif
#ifdef GX_HAVE_MPI
    gx__sb_puts(b, ", MPI yes (gx/comm.h over mpirun; `gx info --comm`)");
#else
    gx__sb_puts(b, ", MPI no (communicators of size 1)");
#endif
    gx__sb_puts(b, "\n");
}

static void info_cuda(gx__sbuf *b)
{
    char drv[128], nvrtc[128], libs[512];
    gx__cuda_versions(drv, sizeof drv, nvrtc, sizeof nvrtc, libs, sizeof libs);
    int count = 0;
    gx__cuda_available(&count);
    gx__sb_printf(b, "CUDA driver: %s\nNVRTC: %s\nlibraries: %s\n", drv, nvrtc, libs);
    if (count == 0)
        gx__sb_puts(b,
                    "CUDA devices: none answer on this machine (no GPU, or no driver); gx runs on the CPU backend.\n");
    else
        gx__sb_printf(b, "CUDA devices: %d\n", count);
}

gx_status gx_info_text(gx_ctx *ctx, char *buf, size_t cap, size_t *needed)
{
    gx__sbuf b = {0};
    gx_ctx *own = NULL;
    gx_status s = GX_OK;
    if (!ctx) {
        s = gx_ctx_create(&own, GX_BACKEND_AUTO);
        ctx = own;
    } else {
        s = gx__ctx_check(ctx);
    }
    if (s != GX_OK)
        return s;
    info_build(&b);
    info_cuda(&b);
    char cc[512];
    gx__cpu_describe(cc, sizeof cc);
    gx__sb_printf(&b, "CPU backend: %d cores, kernels compiled by %s\n", gx__cpu_count(), cc);
    const cache_disk *dc = cache_disk_get();
    gx__sb_printf(&b, "kernel cache: %s\n",
                  cache_disk_enabled(dc) ? cache_disk_dir(dc) : "disk cache off (memory only)");
    gx__sb_printf(&b, "backend: %s\n", ctx->be.iface->name);
    gx__sb_printf(&b, "device %d:\n", ctx->be.device);
    gx_device_info d;
    if (gx_device_info_get(ctx, &d) == GX_OK)
        info_device(&b, &d, ctx->be.iface->kind);
    info_memory(&b, ctx);
    s = gx__sb_export(&b, buf, cap, needed);
    gx__sb_free(&b);
    gx_ctx_destroy(own);
    return s;
}
