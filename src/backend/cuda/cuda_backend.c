/* cuda_backend.c -- the CUDA implementation of gx__backend_iface on the driver API.
 *
 * One gx context = the device's primary context (shared with anything else in the
 * process that uses the runtime API) + one non-blocking stream + one memory pool of
 * its own.  Everything gx does on the device is ordered on that stream, so
 * allocation, frees, copies and launches need no host synchronisation except where
 * the host must see a result (d2h, sync, trim).
 *
 * Threads: the core serialises calls on one gx context, but consecutive calls may
 * come from different threads, so every entry point makes the primary context
 * current first.  Two gx contexts on one device share the primary context; a
 * per-device count of open gx contexts (under dev_mu) decides when a poisoned
 * primary context may be reset.
 *
 * Kernel faults: an illegal address (and the other sticky errors) poisons the whole
 * CUDA context: every later call on it fails.  The faulting gx context reports
 * GX_ERR_KERNEL_FAULT from then on and must be destroyed.  When the last gx context
 * on that device is destroyed, we cuDevicePrimaryCtxReset the device, so a gx context
 * created afterwards starts on a fresh, working context.  (Other code in the process
 * that holds the same primary context, e.g. the CUDA runtime, is reset with it -- it
 * was unusable anyway.)  Without a fault gx only releases its hold on the primary
 * context: the application's runtime memory and streams (gx/interop.h) stay. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend/cuda/cuda_priv.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

/* ------------------------------------------------------------ per-device state */

typedef struct cuda_devstate {
    int refs;      /* open gx contexts on this device */
    bool poisoned; /* a kernel faulted: reset the primary context at refs == 0 */
} cuda_devstate;

static pthread_mutex_t dev_mu = PTHREAD_MUTEX_INITIALIZER;
static cuda_devstate *devs; /* cuda_device_count() entries, made on first open */
static int ndevs;

/* ------------------------------------------------------------ context state */

typedef struct cuda_impl {
    int ordinal;
    CUdevice dev;
    CUcontext ctx;      /* the device's primary context (retained) */
    CUstream stream;    /* the default stream, made at open */
    CUstream cur;       /* the stream every call uses (gx_ctx_set_stream), default: stream */
    CUmemoryPool pool;  /* NULL: device without pool support -> cuMemAlloc/cuMemFree */
    size_t plain_bytes; /* bytes held through the cuMemAlloc fallback */
    bool faulted;
    char fault[160]; /* the first sticky error, repeated by later calls */
    int max_block[3], max_grid[3];
    int target_arch, target_ptx; /* what build() asks NVRTC for */
    bool have_target;
    /* Kernels with gx__launch.pdl go out with programmatic stream serialisation
     * (cuLaunchKernelEx): built for sm_90 or later, where GX_PDL_ENTER() waits, and the
     * driver has the call.  Knob GX_PDL=0 turns it off. */
    bool pdl;
    gx_device_info info;
    char compiler_id[128];
    /* Small device-to-host reads (a filter's length, a reduction's value) go through
     * this page-locked buffer: a pageable destination makes the driver stage the copy,
     * which costs several microseconds on every such call.  bounce_busy keeps two
     * threads of one context from sharing it (the loser copies directly). */
    void *bounce;
    atomic_int bounce_busy;
    bool bounce_failed;
    struct cuda_modx *modx; /* user modules gx must remember something about */
    /* Graph capture (gx_graph_begin): `capturing` is the stream being captured, and
     * allocations meanwhile go through `side` (made on first need), so that the pool's
     * blocks belong to gx, not to the graph (a captured cuMemAllocFromPoolAsync would
     * become a graph allocation node, freed and re-made at every launch). */
    CUstream capturing;
    CUstream side;
} cuda_impl;

/* A user module with a checked-mode failure record (a __device__ global that gx/
 * device.h's recorder fills; read after each sync) or a table of name expressions
 * and their lowered names (what gx_kernel_compile's entry may name). */
typedef struct cuda_modx {
    CUmodule mod;
    CUdeviceptr rec; /* 0: not a checked module */
    char *lowered;   /* "expr\tlowered\n"..., or NULL */
    struct cuda_modx *next;
} cuda_modx;

/* The record's layout; must match gx__check_record in include/gx/device.h. */
typedef gx__check_rec cuda_check_record;

static cuda_impl *IM(gx__backend *be) { return (cuda_impl *)be->impl; }
static gx_status enter(cuda_impl *im);
static gx_status check_records(cuda_impl *im);

/* For vendor libraries and user kernels: the context's stream and device, after
 * making its primary context current on the calling thread. */
gx_status cuda_current(gx__backend *be, CUstream *stream, CUdevice *dev)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    if (stream)
        *stream = im->cur;
    if (dev)
        *dev = im->dev;
    return GX_OK;
}

static void mark_poisoned(int ordinal)
{
    pthread_mutex_lock(&dev_mu);
    if (devs && ordinal >= 0 && ordinal < ndevs)
        devs[ordinal].poisoned = true;
    pthread_mutex_unlock(&dev_mu);
}

/* Remembers the first sticky error: later calls repeat it without touching the
 * driver, and the device is reset when its last gx context closes. */
static void note_fault(cuda_impl *im, CUresult r)
{
    if (!im->faulted) {
        im->faulted = true;
        snprintf(im->fault, sizeof im->fault, "%s (%s)", cuda_result_name(r), cuda_result_string(r));
    }
    mark_poisoned(im->ordinal);
}

/* Turns a failed driver call into a gx error: "<call> failed: NAME (text)".  A
 * sticky fault marks the context (and device) unusable and says what to do. */
static gx_status fail(cuda_impl *im, CUresult r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static gx_status fail(cuda_impl *im, CUresult r, const char *fmt, ...)
{
    char call[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call, sizeof call, fmt, ap);
    va_end(ap);
    gx_status s = cuda_result_status(r);
    if (s == GX_ERR_KERNEL_FAULT && im) {
        note_fault(im, r);
        return gx__err(s,
                       "%s failed: %s (%s): a kernel faulted on CUDA device %d.  CUDA keeps such an error "
                       "for the rest of the process, so no CUDA context (this one or a new one) works "
                       "again here: destroy your gx contexts (gx_ctx_destroy still succeeds) and restart "
                       "the process to use the GPU; CPU-backend contexts keep working",
                       call, cuda_result_name(r), cuda_result_string(r), im->ordinal);
    }
    if (s == GX_ERR_KERNEL_FAULT)
        return gx__err(s,
                       "%s failed: %s (%s): CUDA is unusable in this process after an earlier kernel "
                       "fault (the driver keeps the error until the process ends); restart the process "
                       "to use the GPU; CPU-backend contexts keep working",
                       call, cuda_result_name(r), cuda_result_string(r));
    return gx__err(s, "%s failed: %s (%s)", call, cuda_result_name(r), cuda_result_string(r));
}

/* Makes the primary context current on the calling thread and refuses work on a context poisoned by an earlier fault. */
static gx_status enter(cuda_impl *im)
{
    if (im->faulted)
        return gx__err(GX_ERR_KERNEL_FAULT,
                       "CUDA device %d's context is unusable after an earlier kernel fault (%s); "
                       "destroy this gx context and restart the process to use the GPU again (CUDA "
                       "keeps the error until the process ends)",
                       im->ordinal, im->fault);
    /* Always set, never "skip if already current": after a primary-context reset
     * the same handle may still be bound on this thread, and the call is cheap
     * next to any real work. */
    CUresult r = cuda_drv.CtxSetCurrent(im->ctx);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuCtxSetCurrent(device %d)", im->ordinal);
    return GX_OK;
}

/* enter() without a message, for the calls that cannot report one (free, reserved,
 * info, module_free): a thread's last error must only change on a failing call. */
static bool quiet_enter(cuda_impl *im) { return !im->faulted && cuda_drv.CtxSetCurrent(im->ctx) == CUDA_SUCCESS; }

static int attr(CUdevice dev, CUdevice_attribute a, int dflt)
{
    int v = 0;
    return cuda_drv.DeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS ? v : dflt;
}

static void fill_info(cuda_impl *im)
{
    gx_device_info *d = &im->info;
    memset(d, 0, sizeof *d);
    if (cuda_drv.DeviceGetName(d->name, (int)sizeof d->name, im->dev) != CUDA_SUCCESS)
        snprintf(d->name, sizeof d->name, "CUDA device %d", im->ordinal);
    d->name[sizeof d->name - 1] = 0;
    d->cc_major = attr(im->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0);
    d->cc_minor = attr(im->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0);
    d->multiprocessors = attr(im->dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
    /* The total only: free memory is asked for when someone reads it (cuda_info),
     * and context creation already does that once; a second cuMemGetInfo here was
     * part of the first use's cost (issue 22). */
    size_t tot = 0;
    if (cuda_drv.DeviceTotalMem(&tot, im->dev) == CUDA_SUCCESS)
        d->mem_total = tot;
    d->l2_bytes = (size_t)attr(im->dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 0);
    d->max_threads_per_block = attr(im->dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024);
    d->shared_per_block = (size_t)attr(im->dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 48 * 1024);
    d->shared_per_block_optin =
        (size_t)attr(im->dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, (int)d->shared_per_block);
    if (d->shared_per_block_optin < d->shared_per_block)
        d->shared_per_block_optin = d->shared_per_block;
    d->warp_size = attr(im->dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32);
    /* The memory clock attribute is deprecated in recent drivers and may fail:
     * then the bandwidth is reported as unknown (0).  Double data rate: x2. */
    int clk_khz = attr(im->dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 0);
    int bus_bits = attr(im->dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 0);
    if (clk_khz > 0 && bus_bits > 0)
        d->mem_bandwidth_gbs = 2.0 * (double)clk_khz * 1000.0 * ((double)bus_bits / 8.0) / 1e9;
    im->max_block[0] = attr(im->dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024);
    im->max_block[1] = attr(im->dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024);
    im->max_block[2] = attr(im->dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64);
    im->max_grid[0] = attr(im->dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647);
    im->max_grid[1] = attr(im->dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535);
    im->max_grid[2] = attr(im->dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535);
}

static void fill_compiler_id(cuda_impl *im)
{
    int ma = 0, mi = 0, dv = cuda_driver_version();
    int have = cuda_nvrtc_version(&ma, &mi);
    im->have_target = false;
    if (have && cuda_nvrtc_target(im->info.cc_major, im->info.cc_minor, &im->target_arch, &im->target_ptx) == GX_OK)
        im->have_target = true;
    if (!have)
        snprintf(im->compiler_id, sizeof im->compiler_id, "nvrtc none sm_%d%d driver %d.%d", im->info.cc_major,
                 im->info.cc_minor, dv / 1000, dv % 1000 / 10);
    else if (im->have_target && im->target_ptx)
        snprintf(im->compiler_id, sizeof im->compiler_id, "nvrtc %d.%d compute_%d(ptx) for sm_%d%d driver %d.%d", ma,
                 mi, im->target_arch, im->info.cc_major, im->info.cc_minor, dv / 1000, dv % 1000 / 10);
    else
        snprintf(im->compiler_id, sizeof im->compiler_id, "nvrtc %d.%d sm_%d%d driver %d.%d", ma, mi, im->info.cc_major,
                 im->info.cc_minor, dv / 1000, dv % 1000 / 10);
}

/* ------------------------------------------------------------ open / close */

/* Drops this gx context's hold on the device's primary context; the last one out
 * after a fault resets it so the device is usable again. */
static void dev_release(cuda_impl *im)
{
    pthread_mutex_lock(&dev_mu);
    cuda_devstate *ds = (devs && im->ordinal < ndevs) ? &devs[im->ordinal] : NULL;
    if (ds && ds->refs > 0)
        ds->refs--;
    (void)cuda_drv.DevicePrimaryCtxRelease(im->dev);
    if (ds && ds->refs == 0 && ds->poisoned) {
        /* Release alone resets the context only if nobody else (e.g. the CUDA
         * runtime) retains it; a poisoned context is useless to all of them.  With
         * driver 580 (CUDA 13.0) a sticky fault outlives the reset -- every later
         * retain or cuCtxCreate in the process fails (bench/fault_probe.c) -- but the
         * reset costs nothing and frees the device memory the context held. */
        (void)cuda_drv.DevicePrimaryCtxReset(im->dev);
        ds->poisoned = false;
    }
    if (ds && ds->refs == 0) {
        /* Last gx user: do not leave this thread bound to a context we let go of. */
        CUcontext cur = NULL;
        if (cuda_drv.CtxGetCurrent(&cur) == CUDA_SUCCESS && cur == im->ctx)
            (void)cuda_drv.CtxSetCurrent(NULL);
    }
    pthread_mutex_unlock(&dev_mu);
}

static void destroy_resources(cuda_impl *im)
{
    /* On a poisoned context these calls fail; the primary-context reset frees it all. */
    if (!im->faulted && cuda_drv.CtxSetCurrent(im->ctx) != CUDA_SUCCESS)
        im->faulted = true;
    if (im->stream && !im->faulted)
        (void)cuda_drv.StreamSynchronize(im->stream);
    if (im->pool && cuda_drv.MemPoolDestroy)
        (void)cuda_drv.MemPoolDestroy(im->pool);
    if (im->bounce && !im->faulted)
        (void)cuda_drv.MemFreeHost(im->bounce);
    im->bounce = NULL;
    if (im->stream)
        (void)cuda_drv.StreamDestroy(im->stream);
    if (im->side)
        (void)cuda_drv.StreamDestroy(im->side);
    im->side = NULL;
    im->pool = NULL;
    im->stream = NULL;
    while (im->modx) {
        cuda_modx *x = im->modx;
        im->modx = x->next;
        free(x->lowered);
        free(x);
    }
}

static gx_status cuda_open(gx__backend *be, int device)
{
    be->impl = NULL;
    if (!cuda_driver_load())
        return gx__err(GX_ERR_NO_DEVICE, "CUDA backend unavailable: %s", cuda_driver_problem());
    be->t_driver_ms = cuda_driver_load_ms();
    int count = cuda_device_count();
    if (device < 0 || device >= count)
        return gx__err(GX_ERR_NO_DEVICE,
                       "CUDA device %d does not exist: the driver reports %d device(s) "
                       "(valid indices 0..%d; see CUDA_VISIBLE_DEVICES)",
                       device, count, count - 1);

    cuda_impl *im = calloc(1, sizeof *im);
    if (!im)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory opening CUDA device %d", device);
    im->ordinal = device;
    gx_status st;
    CUresult r = cuda_drv.DeviceGet(&im->dev, device);
    if (r != CUDA_SUCCESS) {
        st = fail(NULL, r, "cuDeviceGet(%d)", device);
        free(im);
        return st == GX_ERR_BACKEND ? GX_ERR_NO_DEVICE : st;
    }

    pthread_mutex_lock(&dev_mu);
    if (!devs) {
        devs = calloc((size_t)count, sizeof *devs);
        if (devs)
            ndevs = count;
    }
    if (!devs) {
        pthread_mutex_unlock(&dev_mu);
        free(im);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory opening CUDA device %d", device);
    }
    if (devs[device].poisoned && devs[device].refs > 0) {
        pthread_mutex_unlock(&dev_mu);
        free(im);
        return gx__err(GX_ERR_KERNEL_FAULT,
                       "CUDA device %d is unusable in this process after a kernel fault in another gx "
                       "context (CUDA keeps the error until the process ends); restart the process to "
                       "use the GPU; CPU-backend contexts keep working",
                       device);
    }
    double tctx = gx__now_ms();
    r = cuda_drv.DevicePrimaryCtxRetain(&im->ctx, im->dev);
    be->t_devctx_ms = gx__now_ms() - tctx; /* the driver's context (made by the first retain) */
    if (r != CUDA_SUCCESS) {
        pthread_mutex_unlock(&dev_mu);
        st = fail(NULL, r, "cuDevicePrimaryCtxRetain(device %d)", device);
        free(im);
        return st;
    }
    devs[device].refs++;
    pthread_mutex_unlock(&dev_mu);

    r = cuda_drv.CtxSetCurrent(im->ctx);
    if (r != CUDA_SUCCESS) {
        st = fail(NULL, r, "cuCtxSetCurrent(device %d)", device);
        goto fail_ctx;
    }
    r = cuda_drv.StreamCreate(&im->stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        im->stream = NULL;
        st = fail(NULL, r, "cuStreamCreate(device %d)", device);
        goto fail_ctx;
    }
    im->cur = im->stream;

    /* Our own pool rather than the device default one, so that trimming, the
     * release threshold and the reserved-bytes figure concern this gx context only.
     * Threshold UINT64_MAX: freed blocks stay cached across synchronisations, so a
     * steady-state allocation is a ~1 us pool hit instead of a cuMemAlloc. */
    if (cuda_drv.MemPoolCreate && cuda_drv.MemPoolDestroy && cuda_drv.MemPoolSetAttribute &&
        cuda_drv.MemAllocFromPoolAsync && cuda_drv.MemFreeAsync &&
        attr(im->dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0)) {
        CUmemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
        props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = device;
        r = cuda_drv.MemPoolCreate(&im->pool, &props);
        if (r != CUDA_SUCCESS) {
            im->pool = NULL;
            if (r != CUDA_ERROR_NOT_SUPPORTED) {
                st = fail(NULL, r, "cuMemPoolCreate(device %d)", device);
                goto fail_stream;
            } /* NOT_SUPPORTED: fall back to cuMemAlloc below */
        }
        cuuint64_t keep = UINT64_MAX;
        if (im->pool)
            r = cuda_drv.MemPoolSetAttribute(im->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
        if (im->pool && r != CUDA_SUCCESS) {
            st = fail(NULL, r, "cuMemPoolSetAttribute(RELEASE_THRESHOLD)");
            goto fail_stream;
        }
    }
    /* else: no stream-ordered allocator (some virtualised GPUs): plain cuMemAlloc. */

    fill_info(im);
    fill_compiler_id(im);
    im->pdl = im->have_target && im->target_arch >= 90 && cuda_drv.LaunchKernelEx && gx__knob_int("GX_PDL", 1, 0, 1);
    be->impl = im;
    return GX_OK;

fail_stream:
    if (im->pool)
        (void)cuda_drv.MemPoolDestroy(im->pool);
    (void)cuda_drv.StreamDestroy(im->stream);
fail_ctx:
    if (st == GX_ERR_KERNEL_FAULT) {
        /* Someone poisoned the primary context before us: have it reset as soon
         * as no gx context holds it. */
        mark_poisoned(device);
        st = gx__err_prefix(st, "opening CUDA device %d", device);
    }
    dev_release(im);
    free(im);
    return st;
}

static bool cuda_faulted(gx__backend *be) { return IM(be) && IM(be)->faulted; }

static void cuda_close(gx__backend *be)
{
    cuda_impl *im = IM(be);
    if (!im)
        return;
    destroy_resources(im);
    dev_release(im);
    free(im);
    be->impl = NULL;
}

/* ------------------------------------------------------------ memory */

/* The default stream and, when another one is current, that one too. */
static CUresult sync_both(cuda_impl *im)
{
    CUresult r = cuda_drv.StreamSynchronize(im->stream);
    if (r == CUDA_SUCCESS && im->cur != im->stream)
        r = cuda_drv.StreamSynchronize(im->cur);
    return r;
}

/* An allocation while a graph is recorded: on the side stream, waited for there
 * (relaxed capture mode allows it), so the block is ready for the captured stream and
 * stays gx's after the capture. */
static CUresult cuda_capture_alloc(cuda_impl *im, CUdeviceptr *p, size_t bytes)
{
    CUresult r = CUDA_SUCCESS;
    if (!im->side)
        r = cuda_drv.StreamCreate(&im->side, CU_STREAM_NON_BLOCKING);
    if (r == CUDA_SUCCESS)
        r = cuda_drv.MemAllocFromPoolAsync(p, bytes, im->pool, im->side);
    if (r == CUDA_SUCCESS)
        r = cuda_drv.StreamSynchronize(im->side);
    return r;
}

static gx_status cuda_alloc(gx__backend *be, size_t bytes, void **ptr)
{
    cuda_impl *im = IM(be);
    *ptr = NULL;
    if (bytes == 0)
        return GX_OK; /* empty arrays own no device memory */
    GX__CHECK(enter(im));
    CUdeviceptr p = 0;
    CUresult r;
    if (im->pool && im->capturing) {
        r = cuda_capture_alloc(im, &p, bytes);
        if (r != CUDA_SUCCESS)
            return fail(im, r, "cuMemAllocFromPoolAsync(%zu bytes, outside the graph being recorded)", bytes);
    } else if (im->pool) {
        r = cuda_drv.MemAllocFromPoolAsync(&p, bytes, im->pool, im->cur);
        if (r != CUDA_SUCCESS)
            return fail(im, r, "cuMemAllocFromPoolAsync(%zu bytes)", bytes);
    } else {
        r = cuda_drv.MemAlloc(&p, bytes);
        if (r != CUDA_SUCCESS)
            return fail(im, r, "cuMemAlloc(%zu bytes)", bytes);
        im->plain_bytes += bytes;
    }
    *ptr = (void *)(uintptr_t)p;
    return GX_OK;
}

static void cuda_free(gx__backend *be, void *ptr, size_t bytes)
{
    cuda_impl *im = IM(be);
    if (!ptr || !quiet_enter(im))
        return; /* nothing to free, or a poisoned context the reset will clear */
    CUresult r;
    if (im->pool) {
        /* Stream-ordered: kernels already queued that use ptr finish first. */
        r = cuda_drv.MemFreeAsync((CUdeviceptr)(uintptr_t)ptr, im->cur);
    } else {
        /* cuMemFree is not ordered on our stream: wait for queued users. */
        r = cuda_drv.StreamSynchronize(im->cur);
        if (r == CUDA_SUCCESS)
            r = cuda_drv.MemFree((CUdeviceptr)(uintptr_t)ptr);
        if (r == CUDA_SUCCESS)
            im->plain_bytes -= bytes < im->plain_bytes ? bytes : im->plain_bytes;
    }
    if (r != CUDA_SUCCESS && cuda_result_is_fault(r))
        note_fault(im, r); /* free cannot report; the next reporting call will */
}

static gx_status cuda_trim(gx__backend *be)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    CUresult r = sync_both(im);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuStreamSynchronize (before trimming the pool)");
    if (im->pool && cuda_drv.MemPoolTrimTo) {
        r = cuda_drv.MemPoolTrimTo(im->pool, 0);
        if (r != CUDA_SUCCESS)
            return fail(im, r, "cuMemPoolTrimTo(0)");
    }
    return GX_OK;
}

static size_t cuda_reserved(gx__backend *be)
{
    cuda_impl *im = IM(be);
    if (!im->pool)
        return im->plain_bytes;
    cuuint64_t v = 0;
    if (!cuda_drv.MemPoolGetAttribute || !quiet_enter(im) ||
        cuda_drv.MemPoolGetAttribute(im->pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v) != CUDA_SUCCESS)
        return 0;
    return (size_t)v;
}

/* ------------------------------------------------------------ copies */

static gx_status cuda_h2d_async(gx__backend *be, void *dst, const void *src, size_t n);
static gx_status cuda_d2h_async(gx__backend *be, void *dst, const void *src, size_t n);
static gx_status cuda_d2h_async_raw(cuda_impl *im, void *dst, const void *src, size_t n);

/* Waits for the current stream after an async copy of n bytes. */
static gx_status wait_copy(cuda_impl *im, const char *what, size_t n)
{
    CUresult r = cuda_drv.StreamSynchronize(im->cur);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuStreamSynchronize (after a %zu-byte %s copy)", n, what);
    return GX_OK;
}

/* Waits: the caller's buffer is usually pageable and may be freed or reused as soon
 * as we return.  For pageable memory the driver stages the copy through a pinned
 * buffer anyway, so waiting costs little and makes the call safe. */
static gx_status cuda_h2d(gx__backend *be, void *dst, const void *src, size_t n)
{
    if (n == 0)
        return GX_OK;
    cuda_impl *im = IM(be);
    if (im->capturing) {
        /* Only gx__mem_setup_h2d reaches here while a graph is recorded (the recorder
         * refuses the others): fresh scratch, written now on the side stream. */
        GX__CHECK(enter(im));
        CUresult r = CUDA_SUCCESS;
        if (!im->side)
            r = cuda_drv.StreamCreate(&im->side, CU_STREAM_NON_BLOCKING);
        if (r == CUDA_SUCCESS)
            r = cuda_drv.MemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dst, src, n, im->side);
        if (r == CUDA_SUCCESS)
            r = cuda_drv.StreamSynchronize(im->side);
        return r == CUDA_SUCCESS ? GX_OK : fail(im, r, "cuMemcpyHtoDAsync(%zu bytes, outside a graph recording)", n);
    }
    GX__CHECK(cuda_h2d_async(be, dst, src, n));
    return wait_copy(IM(be), "host-to-device", n);
}

#define CUDA_BOUNCE_BYTES 4096

/* A read of at most CUDA_BOUNCE_BYTES through im->bounce; false: not taken (busy, or
 * no page-locked memory), *st untouched. */
static bool d2h_bounced(cuda_impl *im, void *dst, const void *src, size_t n, gx_status *st)
{
    if (n > CUDA_BOUNCE_BYTES || im->bounce_failed || !cuda_drv.MemHostAlloc || atomic_exchange(&im->bounce_busy, 1))
        return false;
    bool taken = false;
    if (!im->bounce && enter(im) == GX_OK && cuda_drv.MemHostAlloc(&im->bounce, CUDA_BOUNCE_BYTES, 0) != CUDA_SUCCESS) {
        im->bounce = NULL;
        im->bounce_failed = true; /* not worth a retry per call: copy directly */
    }
    if (im->bounce) {
        taken = true;
        *st = cuda_d2h_async_raw(im, im->bounce, src, n);
        if (*st == GX_OK)
            *st = wait_copy(im, "device-to-host", n);
        if (*st == GX_OK)
            memcpy(dst, im->bounce, n);
    }
    atomic_store(&im->bounce_busy, 0);
    return taken;
}

static gx_status cuda_d2h(gx__backend *be, void *dst, const void *src, size_t n)
{
    if (n == 0)
        return GX_OK;
    gx_status st;
    if (d2h_bounced(IM(be), dst, src, n, &st))
        return st;
    GX__CHECK(cuda_d2h_async(be, dst, src, n));
    return wait_copy(IM(be), "device-to-host", n); /* the host reads dst next */
}

static gx_status cuda_d2d(gx__backend *be, void *dst, const void *src, size_t n)
{
    cuda_impl *im = IM(be);
    if (n == 0)
        return GX_OK;
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.MemcpyDtoDAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, n, im->cur);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuMemcpyDtoDAsync(%zu bytes)", n);
    return GX_OK;
}

static gx_status cuda_sync(gx__backend *be)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    CUresult r = sync_both(im);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuStreamSynchronize");
    return check_records(im);
}

static gx_status cuda_info(gx__backend *be, gx_device_info *out)
{
    cuda_impl *im = IM(be);
    *out = im->info;
    /* Free memory changes; refresh it when the context is usable. */
    size_t fr = 0, tot = 0;
    if (quiet_enter(im) && cuda_drv.MemGetInfo(&fr, &tot) == CUDA_SUCCESS) {
        out->mem_free = fr;
        out->mem_total = tot;
    }
    return GX_OK;
}

/* ------------------------------------------------------------ code */

static gx_status cuda_build(gx__backend *be, const char *source, const char *label, void **blob, size_t *len)
{
    cuda_impl *im = IM(be);
    if (!cuda_nvrtc_load())
        return gx__err(GX_ERR_UNSUPPORTED, "cannot compile %s for the GPU: %s", label ? label : "kernel",
                       cuda_nvrtc_problem());
    /* No device call: compiling needs only NVRTC, for this device's exact arch. */
    if (strncmp(source, GX__USER_KERNEL_MAGIC "\n", strlen(GX__USER_KERNEL_MAGIC) + 1) == 0)
        return cuda_nvrtc_compile_user(source, label, im->info.cc_major, im->info.cc_minor, 0, blob, len, NULL);
    return cuda_nvrtc_compile(source, label, im->info.cc_major, im->info.cc_minor, 0, blob, len, NULL);
}

/* A blob may start with a table of name expressions (cuda_nvrtc_compile_user):
 * returns the offset of the code and a malloc'ed copy of the table. */
static size_t load_lowered(const void *blob, size_t len, char **table)
{
    *table = NULL;
    static const char head[] = "//gx:lowered\n", tail[] = "//gx:end\n";
    if (len < sizeof head || memcmp(blob, head, sizeof head - 1) != 0)
        return 0;
    const char *b = blob, *end = memmem(b, len, tail, sizeof tail - 1);
    if (!end)
        return 0;
    size_t off = (size_t)(end - b) + sizeof tail - 1;
    off = (off + 15) / 16 * 16;
    *table = strndup(b + sizeof head - 1, (size_t)(end - b) - (sizeof head - 1));
    return off < len ? off : 0;
}

/* Remembers a module's failure record and name table (if it has either).  The
 * record is looked up only when its name is in the code (PTX or the cubin's symbol
 * strings): asking every module would make a failing driver call per load, which
 * compute-sanitizer reports as an error. */
static gx_status load_note(cuda_impl *im, CUmodule mod, const void *blob, size_t len, char *table)
{
    static const char sym[] = "gx__check_rec";
    CUdeviceptr rec = 0;
    size_t bytes = 0;
    if (!cuda_drv.ModuleGetGlobal || !memmem(blob, len, sym, sizeof sym - 1) ||
        cuda_drv.ModuleGetGlobal(&rec, &bytes, mod, sym) != CUDA_SUCCESS ||
        bytes != sizeof(cuda_check_record))
        rec = 0;
    if (!rec && !table)
        return GX_OK;
    cuda_modx *x = calloc(1, sizeof *x);
    if (!x) {
        free(table);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    x->mod = mod;
    x->rec = rec;
    x->lowered = table;
    x->next = im->modx;
    im->modx = x;
    return GX_OK;
}

static gx_status cuda_load(gx__backend *be, const void *blob, size_t len, gx__module **out)
{
    cuda_impl *im = IM(be);
    *out = NULL;
    GX__ARG(blob && len > 0, "CUDA module load: empty code blob");
    GX__CHECK(enter(im));
    char *table = NULL;
    size_t off = load_lowered(blob, len, &table);
    blob = (const char *)blob + off;
    len -= off;
    CUmodule mod = NULL;
    CUresult r = cuda_drv.ModuleLoadData(&mod, blob);
    if (r != CUDA_SUCCESS) {
        free(table);
        int ma = 0, mi = 0, dv = cuda_driver_version();
        cuda_nvrtc_version(&ma, &mi);
        gx_status s =
            fail(im, r, "cuModuleLoadData(%zu-byte %s)", len, ((const char *)blob)[0] == '/' ? "PTX" : "cubin");
        if (s == GX_ERR_COMPILE && ma * 1000 + mi * 10 > dv)
            return gx__err_prefix(s,
                                  "the code was compiled by NVRTC %d.%d, newer than the "
                                  "driver (%d.%d): update the NVIDIA driver",
                                  ma, mi, dv / 1000, dv % 1000 / 10);
        return s;
    }
    gx_status s = load_note(im, mod, blob, len, table);
    if (s != GX_OK) {
        (void)cuda_drv.ModuleUnload(mod);
        return s;
    }
    /* A CUmodule is a pointer: it serves as the module handle directly. */
    *out = (gx__module *)mod;
    return GX_OK;
}

static cuda_modx *modx_of(cuda_impl *im, CUmodule mod)
{
    for (cuda_modx *x = im->modx; x; x = x->next)
        if (x->mod == mod)
            return x;
    return NULL;
}

/* The lowered name of a name expression in the module's table (into buf), or entry. */
static const char *lowered_entry(cuda_impl *im, CUmodule mod, const char *entry, char *buf, size_t n)
{
    cuda_modx *x = modx_of(im, mod);
    size_t el = strlen(entry);
    for (const char *p = x && x->lowered ? x->lowered : ""; *p;) {
        const char *nl = strchr(p, '\n'), *tab = strchr(p, '\t');
        if (!nl || !tab || tab > nl)
            break;
        if ((size_t)(tab - p) == el && strncmp(p, entry, el) == 0 && (size_t)(nl - tab) <= n) {
            snprintf(buf, n, "%.*s", (int)(nl - tab - 1), tab + 1);
            return buf;
        }
        p = nl + 1;
    }
    return entry;
}

static gx_status cuda_get_func(gx__backend *be, gx__module *m, const char *entry, gx__func *out)
{
    cuda_impl *im = IM(be);
    *out = NULL;
    GX__ARG(m && entry, "CUDA get_func: NULL module or entry");
    GX__CHECK(enter(im));
    char low[1024];
    const char *name = lowered_entry(im, (CUmodule)m, entry, low, sizeof low);
    CUfunction f = NULL;
    CUresult r = cuda_drv.ModuleGetFunction(&f, (CUmodule)m, name);
    if (r != CUDA_SUCCESS) {
        gx_status s = fail(im, r, "cuModuleGetFunction(\"%s\")", name);
        /* A missing entry is gx's code generator disagreeing with itself. */
        return r == CUDA_ERROR_NOT_FOUND ? gx__err_prefix(GX_ERR_INTERNAL, "kernel entry missing") : s;
    }
    *out = (gx__func)f;
    return GX_OK;
}

static void cuda_module_free(gx__backend *be, gx__module *m)
{
    cuda_impl *im = IM(be);
    for (cuda_modx **p = &im->modx; *p; p = &(*p)->next)
        if ((*p)->mod == (CUmodule)m) {
            cuda_modx *x = *p;
            *p = x->next;
            free(x->lowered);
            free(x);
            break;
        }
    if (!m || !quiet_enter(im))
        return; /* a poisoned context's modules go away with its reset */
    (void)cuda_drv.ModuleUnload((CUmodule)m);
}

/* After a successful sync: the first failure a checked kernel recorded (gx/device.h's
 * recorder, assert() and gx_at in checked mode), reported as GX_ERR_KERNEL_FAULT and
 * cleared.  The failing thread did not fault, so the context stays usable. */
static gx_status check_records(cuda_impl *im)
{
    for (cuda_modx *x = im->modx; x; x = x->next) {
        if (!x->rec)
            continue;
        cuda_check_record rc;
        CUresult r = cuda_drv.MemcpyDtoHAsync(&rc, x->rec, sizeof rc, im->stream);
        if (r == CUDA_SUCCESS)
            r = cuda_drv.StreamSynchronize(im->stream);
        if (r != CUDA_SUCCESS)
            return fail(im, r, "reading a checked kernel's failure record");
        if (rc.flag == 0)
            continue;
        unsigned zero = 0;
        r = cuda_drv.MemcpyHtoDAsync(x->rec + offsetof(cuda_check_record, flag), &zero, sizeof zero, im->stream);
        if (r == CUDA_SUCCESS)
            r = cuda_drv.StreamSynchronize(im->stream);
        if (r != CUDA_SUCCESS)
            return fail(im, r, "clearing a checked kernel's failure record");
        char m[640];
        gx__check_rec_msg(&rc, m, sizeof m);
        return gx__err(GX_ERR_KERNEL_FAULT, "%s", m);
    }
    return GX_OK;
}

/* Checks a configuration against the device's limits (each message names the
 * limit that was broken) and opts the kernel in to large dynamic shared memory. */
static gx_status launch_prepare(cuda_impl *im, CUfunction fn, const gx__launch *l, unsigned long long *threads_out)
{
    static const char axis[3] = {'x', 'y', 'z'};
    unsigned long long threads = 1;
    for (int i = 0; i < 3; i++) {
        if (l->grid[i] == 0 || l->block[i] == 0)
            return gx__err(GX_ERR_LAUNCH, "launch of grid %ux%ux%u, block %ux%ux%u has a zero dimension", l->grid[0],
                           l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2]);
        threads *= l->block[i];
    }
    *threads_out = threads;
    /* The total first: it is the limit people usually hit. */
    if (threads > (unsigned long long)im->info.max_threads_per_block)
        return gx__err(GX_ERR_LAUNCH,
                       "block of %llu threads exceeds the device limit of %d threads per block; "
                       "use smaller blocks",
                       threads, im->info.max_threads_per_block);
    for (int i = 0; i < 3; i++) {
        if (l->block[i] > (unsigned)im->max_block[i])
            return gx__err(GX_ERR_LAUNCH,
                           "block dimension %c = %u exceeds the device limit of %d (max block "
                           "dims %dx%dx%d)",
                           axis[i], l->block[i], im->max_block[i], im->max_block[0], im->max_block[1],
                           im->max_block[2]);
        if (l->grid[i] > (unsigned)im->max_grid[i])
            return gx__err(GX_ERR_LAUNCH,
                           "grid dimension %c = %u exceeds the device limit of %d blocks (max grid "
                           "dims %dx%dx%d)",
                           axis[i], l->grid[i], im->max_grid[i], im->max_grid[0], im->max_grid[1], im->max_grid[2]);
    }
    if (l->shmem > im->info.shared_per_block_optin)
        return gx__err(GX_ERR_LAUNCH,
                       "%u bytes of dynamic shared memory exceed the device limit of %zu bytes "
                       "per block (opt-in maximum)",
                       l->shmem, im->info.shared_per_block_optin);
    GX__CHECK(enter(im));
    /* Dynamic shared memory beside the kernel's static shared memory: the two together
     * may reach the opt-in maximum, but above the default per-block limit (48 KiB) the
     * function must opt in for its dynamic part -- also when the dynamic part alone is
     * under 48 KiB (16 KiB static + 40 KiB dynamic fails without it).  Asked only for
     * launches that carry dynamic memory: the warm path of an operation without it
     * makes no extra driver call (issue 22). */
    if (l->shmem == 0)
        return GX_OK;
    int stat = 0;
    if (cuda_drv.FuncGetAttribute && cuda_drv.FuncGetAttribute(&stat, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn) != CUDA_SUCCESS)
        stat = 0;
    if (stat < 0)
        stat = 0;
    if ((size_t)stat + l->shmem > im->info.shared_per_block_optin)
        return gx__err(GX_ERR_LAUNCH,
                       "%u bytes of dynamic shared memory plus the kernel's %d bytes of static "
                       "shared memory exceed the device limit of %zu bytes per block (opt-in "
                       "maximum)",
                       l->shmem, stat, im->info.shared_per_block_optin);
    if ((size_t)stat + l->shmem > im->info.shared_per_block) {
        if (!cuda_drv.FuncSetAttribute)
            return gx__err(GX_ERR_UNSUPPORTED,
                           "%u bytes of dynamic shared memory (plus %d static) need cuFuncSetAttribute, "
                           "which this driver lacks (limit without it: %zu bytes in all)",
                           l->shmem, stat, im->info.shared_per_block);
        CUresult r = cuda_drv.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)l->shmem);
        if (r != CUDA_SUCCESS) {
            gx_status s = fail(im, r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = %u)", l->shmem);
            return s == GX_ERR_BACKEND ? gx__err_prefix(GX_ERR_LAUNCH, "shared memory opt-in") : s;
        }
    }
    return GX_OK;
}

/* A rejected launch: names the kernel's own thread limit when that is what broke. */
static gx_status launch_failed(cuda_impl *im, CUresult r, CUfunction fn, const gx__launch *l,
                               unsigned long long threads, const char *call)
{
    gx_status s = fail(im, r, "%s(grid %ux%ux%u, block %ux%ux%u, %u B shared, %zu B args)", call, l->grid[0],
                       l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->shmem, l->args_size);
    if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) {
        /* Heavy kernels can allow fewer threads than the device maximum (registers). */
        int fmax = 0;
        if (cuda_drv.FuncGetAttribute &&
            cuda_drv.FuncGetAttribute(&fmax, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn) == CUDA_SUCCESS && fmax > 0 &&
            threads > (unsigned long long)fmax)
            return gx__err_prefix(GX_ERR_LAUNCH,
                                  "block of %llu threads exceeds this kernel's limit of %d "
                                  "threads per block (set by its register use)",
                                  threads, fmax);
        return gx__err_prefix(GX_ERR_LAUNCH, "launch configuration rejected");
    }
    return s;
}

/* ------------------------------------------------------------ graphs (stream capture) */

static gx_status graph_syms(void)
{
    if (!cuda_drv.StreamBeginCapture || !cuda_drv.StreamEndCapture || !cuda_drv.GraphInstantiate ||
        !cuda_drv.GraphLaunch || !cuda_drv.GraphExecDestroy || !cuda_drv.GraphDestroy)
        return gx__err(GX_ERR_UNSUPPORTED, "gx_graph: this NVIDIA driver lacks the CUDA graph API (cuStreamBeginCapture,"
                                           " cuGraphInstantiate...); update the driver or do not record graphs");
    return GX_OK;
}

/* Relaxed mode: gx may still allocate on the side stream (cuda_capture_alloc) and
 * query attributes while the stream is captured. */
static gx_status cuda_capture_begin(gx__backend *be)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    GX__CHECK(graph_syms());
    CUresult r = cuda_drv.StreamBeginCapture(im->cur, CU_STREAM_CAPTURE_MODE_RELAXED);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuStreamBeginCapture");
    im->capturing = im->cur;
    return GX_OK;
}

static gx_status cuda_capture_end(gx__backend *be, void **exec)
{
    cuda_impl *im = IM(be);
    *exec = NULL;
    if (!im->capturing)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_graph_end: no CUDA stream capture is in progress");
    CUgraph g = NULL;
    CUresult r = cuda_drv.StreamEndCapture(im->capturing, &g);
    im->capturing = NULL;
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuStreamEndCapture (a call inside the recording did something a CUDA graph cannot hold)");
    CUgraphExec ge = NULL;
    r = cuda_drv.GraphInstantiate(&ge, g, 0);
    (void)cuda_drv.GraphDestroy(g);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuGraphInstantiate");
    *exec = (void *)ge;
    return GX_OK;
}

static gx_status cuda_graph_launch(gx__backend *be, void *exec)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.GraphLaunch((CUgraphExec)exec, im->cur);
    return r == CUDA_SUCCESS ? GX_OK : fail(im, r, "cuGraphLaunch");
}

static void cuda_graph_free(gx__backend *be, void *exec)
{
    (void)be;
    if (exec && cuda_drv.GraphExecDestroy)
        (void)cuda_drv.GraphExecDestroy((CUgraphExec)exec);
}

static gx_status cuda_launch(gx__backend *be, gx__func f, const gx__launch *l)
{
    cuda_impl *im = IM(be);
    GX__ARG(f && l, "CUDA launch: NULL function or launch description");
    CUfunction fn = (CUfunction)f;
    unsigned long long threads = 0;
    GX__CHECK(launch_prepare(im, fn, l, &threads));
    /* The kernel takes one struct by value; its bytes are l->args. */
    void *params[1] = {(void *)l->args};
    if (l->pdl && im->pdl) {
        CUlaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        at.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig c;
        memset(&c, 0, sizeof c);
        c.gridDimX = l->grid[0], c.gridDimY = l->grid[1], c.gridDimZ = l->grid[2];
        c.blockDimX = l->block[0], c.blockDimY = l->block[1], c.blockDimZ = l->block[2];
        c.sharedMemBytes = l->shmem;
        c.hStream = im->cur;
        c.attrs = &at;
        c.numAttrs = 1;
        CUresult r = cuda_drv.LaunchKernelEx(&c, fn, l->args ? params : NULL, NULL);
        return r == CUDA_SUCCESS ? GX_OK : launch_failed(im, r, fn, l, threads, "cuLaunchKernelEx");
    }
    CUresult r = cuda_drv.LaunchKernel(fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
                                       l->shmem, im->cur, l->args ? params : NULL, NULL);
    if (r == CUDA_SUCCESS)
        return GX_OK; /* no sync: faults surface at the next sync / d2h */
    return launch_failed(im, r, fn, l, threads, "cuLaunchKernel");
}

/* A user kernel: one pointer per parameter; optionally cooperative (the whole grid
 * co-resident, checked against the occupancy API first so the message names the
 * maximum). */
static gx_status cuda_launch_user(gx__backend *be, gx__func f, const gx__launch *l, void **params, void *st,
                                  int cooperative)
{
    cuda_impl *im = IM(be);
    GX__ARG(f && l, "CUDA launch: NULL function or launch description");
    CUfunction fn = (CUfunction)f;
    CUstream stream = st ? (CUstream)st : im->cur;
    unsigned long long threads = 0;
    GX__CHECK(launch_prepare(im, fn, l, &threads));
    CUresult r;
    if (!cooperative) {
        r = cuda_drv.LaunchKernel(fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
                                  l->shmem, stream, params, NULL);
        return r == CUDA_SUCCESS ? GX_OK : launch_failed(im, r, fn, l, threads, "cuLaunchKernel");
    }
    if (!cuda_drv.LaunchCooperativeKernel || !attr(im->dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 0))
        return gx__err(GX_ERR_UNSUPPORTED, "cooperative launch is not supported by this device or driver");
    int per_sm = 0;
    unsigned long long blocks = (unsigned long long)l->grid[0] * l->grid[1] * l->grid[2];
    if (cuda_drv.OccupancyMaxActiveBlocksPerMultiprocessor &&
        cuda_drv.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, (int)threads, (size_t)l->shmem) ==
            CUDA_SUCCESS &&
        blocks > (unsigned long long)per_sm * (unsigned long long)im->info.multiprocessors)
        return gx__err(GX_ERR_LAUNCH,
                       "cooperative grid of %llu blocks exceeds the %d blocks that can be "
                       "resident at once (%d per multiprocessor x %d multiprocessors for "
                       "%llu threads and %u B dynamic shared memory per block)",
                       blocks, per_sm * im->info.multiprocessors, per_sm, im->info.multiprocessors, threads, l->shmem);
    r = cuda_drv.LaunchCooperativeKernel(fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
                                         l->shmem, stream, params);
    return r == CUDA_SUCCESS ? GX_OK : launch_failed(im, r, fn, l, threads, "cuLaunchCooperativeKernel");
}

static gx_status cuda_occupancy_block(gx__backend *be, gx__func f, unsigned shmem, int *min_grid, int *block)
{
    cuda_impl *im = IM(be);
    if (!cuda_drv.OccupancyMaxPotentialBlockSize)
        return gx__err(GX_ERR_UNSUPPORTED, "this driver lacks cuOccupancyMaxPotentialBlockSize");
    GX__CHECK(enter(im));
    int mg = 0, b = 0;
    CUresult r = cuda_drv.OccupancyMaxPotentialBlockSize(&mg, &b, (CUfunction)f, NULL, (size_t)shmem, 0);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuOccupancyMaxPotentialBlockSize(%u B shared)", shmem);
    if (min_grid)
        *min_grid = mg;
    if (block)
        *block = b;
    return GX_OK;
}

/* ------------------------------------------------------------ events */

static gx_status cuda_event_create(gx__backend *be, void **ev)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    CUevent e;
    CUresult r = cuda_drv.EventCreate(&e, CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuEventCreate");
    *ev = e;
    return GX_OK;
}

static gx_status cuda_event_record(gx__backend *be, void *ev)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.EventRecord((CUevent)ev, im->cur);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuEventRecord");
    return GX_OK;
}

static gx_status cuda_event_elapsed(gx__backend *be, void *start, void *end, float *ms)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.EventSynchronize((CUevent)end);
    if (r == CUDA_SUCCESS)
        r = cuda_drv.EventElapsedTime(ms, (CUevent)start, (CUevent)end);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuEventElapsedTime");
    return GX_OK;
}

static void cuda_event_destroy(gx__backend *be, void *ev)
{
    if (quiet_enter(IM(be)))
        cuda_drv.EventDestroy((CUevent)ev);
}

/* ------------------------------------------------------------ streams, pinned memory, reflection */

static gx_status cuda_stream_create(gx__backend *be, void **st)
{
    cuda_impl *im = IM(be);
    *st = NULL;
    GX__CHECK(enter(im));
    CUstream s = NULL;
    CUresult r = cuda_drv.StreamCreate(&s, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuStreamCreate");
    *st = s;
    return GX_OK;
}

static void cuda_stream_destroy(gx__backend *be, void *st)
{
    cuda_impl *im = IM(be);
    if (!st || !quiet_enter(im))
        return; /* a poisoned context's streams go away with its reset */
    if (im->cur == (CUstream)st)
        im->cur = im->stream;
    (void)cuda_drv.StreamSynchronize((CUstream)st);
    (void)cuda_drv.StreamDestroy((CUstream)st);
}

static gx_status cuda_stream_sync(gx__backend *be, void *st)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.StreamSynchronize(st ? (CUstream)st : im->stream);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuStreamSynchronize");
    return check_records(im);
}

static void cuda_set_stream(gx__backend *be, void *st)
{
    cuda_impl *im = IM(be);
    im->cur = st ? (CUstream)st : im->stream;
}

static gx_status cuda_event_record_on(gx__backend *be, void *ev, void *st)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.EventRecord((CUevent)ev, st ? (CUstream)st : im->stream);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuEventRecord");
    return GX_OK;
}

static gx_status cuda_event_sync(gx__backend *be, void *ev)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.EventSynchronize((CUevent)ev);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuEventSynchronize");
    return check_records(im);
}

static gx_status cuda_stream_wait_event(gx__backend *be, void *st, void *ev)
{
    cuda_impl *im = IM(be);
    if (!cuda_drv.StreamWaitEvent)
        return gx__err(GX_ERR_UNSUPPORTED, "this driver lacks cuStreamWaitEvent");
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.StreamWaitEvent(st ? (CUstream)st : im->stream, (CUevent)ev, 0);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuStreamWaitEvent");
    return GX_OK;
}

static gx_status cuda_host_alloc(gx__backend *be, size_t bytes, void **ptr)
{
    cuda_impl *im = IM(be);
    *ptr = NULL;
    if (!cuda_drv.MemHostAlloc || !cuda_drv.MemFreeHost)
        return gx__err(GX_ERR_UNSUPPORTED, "this driver lacks cuMemHostAlloc / cuMemFreeHost");
    GX__CHECK(enter(im));
    /* PORTABLE: usable from every CUDA context of the process (several gx contexts);
     * DEVICEMAP: kernels may write results straight into it (host_devptr). */
    CUresult r = cuda_drv.MemHostAlloc(ptr, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    if (r != CUDA_SUCCESS) {
        *ptr = NULL;
        return fail(im, r, "cuMemHostAlloc(%zu bytes of page-locked host memory)", bytes);
    }
    return GX_OK;
}

static gx_status cuda_host_devptr(gx__backend *be, void *host, uint64_t *dev)
{
    cuda_impl *im = IM(be);
    *dev = 0;
    if (!cuda_drv.MemHostGetDevicePointer)
        return gx__err(GX_ERR_UNSUPPORTED, "this driver lacks cuMemHostGetDevicePointer");
    GX__CHECK(enter(im));
    CUdeviceptr d = 0;
    CUresult r = cuda_drv.MemHostGetDevicePointer(&d, host, 0);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuMemHostGetDevicePointer");
    *dev = (uint64_t)d;
    return GX_OK;
}

static void cuda_host_free(gx__backend *be, void *ptr)
{
    cuda_impl *im = IM(be);
    if (!ptr || !quiet_enter(im))
        return;
    (void)sync_both(im); /* queued async copies may still read or write it */
    (void)cuda_drv.MemFreeHost(ptr);
}

/* cuPointerGetAttributes (plural) answers memory type 0 for pageable memory instead
 * of failing, so probing a user's buffer raises no API error (compute-sanitizer
 * reports those); the singular call is the fallback for drivers without it. */
static bool host_byte_pinned(const void *p)
{
    unsigned int type = 0;
    CUdeviceptr dp = (CUdeviceptr)(uintptr_t)p;
    if (cuda_drv.PointerGetAttributes) {
        CUpointer_attribute at = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
        void *data = &type;
        return cuda_drv.PointerGetAttributes(1, &at, &data, dp) == CUDA_SUCCESS && type == CU_MEMORYTYPE_HOST;
    }
    return cuda_drv.PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dp) == CUDA_SUCCESS &&
           type == CU_MEMORYTYPE_HOST;
}

static bool cuda_host_pinned(gx__backend *be, const void *ptr, size_t bytes)
{
    if (!ptr || bytes == 0 || !(cuda_drv.PointerGetAttributes || cuda_drv.PointerGetAttribute) || !quiet_enter(IM(be)))
        return false;
    return host_byte_pinned(ptr) && host_byte_pinned((const char *)ptr + bytes - 1);
}

/* Memory the application allocated (gx_array_wrap): the driver says what p is.  The
 * plural query answers type 0 for pageable host memory instead of failing (no API
 * error for compute-sanitizer to report). */
static gx_status cuda_ptr_check(gx__backend *be, const void *p, size_t bytes, const char *what)
{
    cuda_impl *im = IM(be);
    GX__CHECK(enter(im));
    if (!cuda_drv.PointerGetAttributes)
        return GX_OK; /* a driver older than CUDA 7: trust the caller */
    unsigned int type = 0, managed = 0;
    int ordinal = -1;
    CUdeviceptr start = 0;
    size_t size = 0;
    CUpointer_attribute at[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *data[] = {&type, &managed, &ordinal, &start, &size};
    CUresult r = cuda_drv.PointerGetAttributes(5, at, data, (CUdeviceptr)(uintptr_t)p);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "%s: cuPointerGetAttributes(%p)", what, p);
    if (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED && !managed)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: %p is %s, not CUDA device memory: the CUDA backend wraps device memory (cudaMalloc, "
                       "cuMemAlloc, a CUDA tensor); copy host data in with gx_array_from_host, or wrap it on a "
                       "CPU-backend context",
                       what, p, type == CU_MEMORYTYPE_HOST ? "page-locked host memory" : "host memory (or freed)");
    if (!managed && ordinal != im->ordinal)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: %p is memory of CUDA device %d, but this context is on device %d: wrap it on a "
                       "context of that device (gx_ctx_create_on)",
                       what, p, ordinal, im->ordinal);
    uintptr_t lo = (uintptr_t)p, s0 = (uintptr_t)start;
    if (size && (lo < s0 || lo - s0 > size || bytes > size - (lo - s0)))
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: the array's %zu bytes from %p run past the end of their allocation (%zu bytes from "
                       "0x%llx): the shape or strides are too large for the memory",
                       what, bytes, p, size, (unsigned long long)start);
    return GX_OK;
}

static void *cuda_current_stream(gx__backend *be) { return IM(be)->cur; }

static gx_status cuda_h2d_async(gx__backend *be, void *dst, const void *src, size_t n)
{
    cuda_impl *im = IM(be);
    if (n == 0)
        return GX_OK;
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.MemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dst, src, n, im->cur);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuMemcpyHtoDAsync(%zu bytes)", n);
    return GX_OK;
}

static gx_status cuda_d2h_async(gx__backend *be, void *dst, const void *src, size_t n)
{
    if (n == 0)
        return GX_OK;
    return cuda_d2h_async_raw(IM(be), dst, src, n);
}

static gx_status cuda_d2h_async_raw(cuda_impl *im, void *dst, const void *src, size_t n)
{
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.MemcpyDtoHAsync(dst, (CUdeviceptr)(uintptr_t)src, n, im->cur);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuMemcpyDtoHAsync(%zu bytes)", n);
    return GX_OK;
}

static gx_status cuda_func_attrs(gx__backend *be, gx__func f, gx_kernel_attrs *out)
{
    cuda_impl *im = IM(be);
    if (!cuda_drv.FuncGetAttribute)
        return gx__err(GX_ERR_UNSUPPORTED, "this driver lacks cuFuncGetAttribute");
    GX__CHECK(enter(im));
    static const struct {
        CUfunction_attribute a;
        const char *name;
    } want[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, "NUM_REGS"},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "CONST_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK"},
        {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "MAX_DYNAMIC_SHARED_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_PTX_VERSION, "PTX_VERSION"},
        {CU_FUNC_ATTRIBUTE_BINARY_VERSION, "BINARY_VERSION"},
    };
    int v[8];
    for (int i = 0; i < 8; i++) {
        CUresult r = cuda_drv.FuncGetAttribute(&v[i], want[i].a, (CUfunction)f);
        if (r != CUDA_SUCCESS)
            return fail(im, r, "cuFuncGetAttribute(%s)", want[i].name);
    }
    out->registers = v[0];
    out->static_shared = (size_t)v[1];
    out->local_bytes = (size_t)v[2];
    out->const_bytes = (size_t)v[3];
    out->max_threads_per_block = v[4];
    out->max_dynamic_shared = v[5];
    out->ptx_version = v[6];
    out->binary_version = v[7];
    if (im->have_target) /* what build() compiles for: sm_XY, or PTX of an older arch */
        snprintf(out->arch, sizeof out->arch, "%s_%d", im->target_ptx ? "compute" : "sm", im->target_arch);
    return GX_OK;
}

static gx_status cuda_occupancy_active(gx__backend *be, gx__func f, int block, size_t shmem, int *blocks)
{
    cuda_impl *im = IM(be);
    if (!cuda_drv.OccupancyMaxActiveBlocksPerMultiprocessor)
        return gx__err(GX_ERR_UNSUPPORTED, "this driver lacks cuOccupancyMaxActiveBlocksPerMultiprocessor");
    GX__CHECK(enter(im));
    CUresult r = cuda_drv.OccupancyMaxActiveBlocksPerMultiprocessor(blocks, (CUfunction)f, block, shmem);
    if (r != CUDA_SUCCESS)
        return fail(im, r, "cuOccupancyMaxActiveBlocksPerMultiprocessor(block %d, %zu B shared)", block, shmem);
    return GX_OK;
}

static const char *cuda_compiler_id(gx__backend *be) { return IM(be)->compiler_id; }

/* Multiprocessors: the units a grid spreads over (CPU kernels' worker count has no
 * CUDA counterpart; nothing on the CUDA paths asks for it today). */
static int cuda_workers(gx__backend *be) { return IM(be)->info.multiprocessors; }

const gx__backend_iface gx__cuda_iface = {
    .kind = GX_BACKEND_CUDA,
    .name = "cuda",
    .target = GX__TARGET_CUDA,
    .caps = GX__CAP_EVENTS | GX__CAP_STREAMS | GX__CAP_ASYNC_COPY | GX__CAP_PINNED_HOST | GX__CAP_MAPPED_HOST |
            GX__CAP_OCCUPANCY | GX__CAP_USER_KERNELS | GX__CAP_MATMUL | GX__CAP_FFT | GX__CAP_GRAPHS | GX__CAP_COMM,
    .open = cuda_open,
    .close = cuda_close,
    .info = cuda_info,
    .mem =
        {
            .alloc = cuda_alloc,
            .free = cuda_free,
            .trim = cuda_trim,
            .reserved = cuda_reserved,
            .h2d = cuda_h2d,
            .d2h = cuda_d2h,
            .d2d = cuda_d2d,
            .h2d_async = cuda_h2d_async,
            .d2h_async = cuda_d2h_async,
            .host_alloc = cuda_host_alloc,
            .host_free = cuda_host_free,
            .host_pinned = cuda_host_pinned,
            .host_devptr = cuda_host_devptr,
            .ptr_check = cuda_ptr_check,
        },
    .stream =
        {
            .faulted = cuda_faulted,
            .sync = cuda_sync,
            .create = cuda_stream_create,
            .destroy = cuda_stream_destroy,
            .sync_stream = cuda_stream_sync,
            .set_current = cuda_set_stream,
            .wait_event = cuda_stream_wait_event,
            .current = cuda_current_stream,
            .event_create = cuda_event_create,
            .event_record = cuda_event_record,
            .event_record_on = cuda_event_record_on,
            .event_elapsed = cuda_event_elapsed,
            .event_sync = cuda_event_sync,
            .event_destroy = cuda_event_destroy,
            .capture_begin = cuda_capture_begin,
            .capture_end = cuda_capture_end,
            .graph_launch = cuda_graph_launch,
            .graph_free = cuda_graph_free,
        },
    .code =
        {
            .build = cuda_build,
            .load = cuda_load,
            .get_func = cuda_get_func,
            .module_free = cuda_module_free,
            .compiler_id = cuda_compiler_id,
        },
    .launch =
        {
            .run = cuda_launch,
            .workers = cuda_workers,
            .user = cuda_launch_user,
            .func_attrs = cuda_func_attrs,
            .occupancy_block = cuda_occupancy_block,
            .occupancy_active = cuda_occupancy_active,
        },
    .lib = {.gemm = cuda_gemm, .fft = cuda_fft},
    .comm = {.carries = cuda_nccl_carries,
             .unique_id = cuda_nccl_unique_id,
             .init_rank = cuda_nccl_init_rank,
             .init_all = cuda_nccl_init_all,
             .run = cuda_nccl_run,
             .group = cuda_nccl_group,
             .poll = cuda_nccl_poll,
             .abort = cuda_nccl_abort,
             .destroy = cuda_nccl_destroy,
             .version = cuda_nccl_version},
};
