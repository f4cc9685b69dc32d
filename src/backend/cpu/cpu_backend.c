/* cpu_backend.c -- the CPU backend: host memory, generated C compiled by the system
 * compiler (see cpu_cc.c), run on all cores by a small pthread pool.
 *
 * A generated CPU kernel has the signature
 *     void entry(const void *args, int64_t begin, int64_t end, int thread)
 * and the pool calls it once per worker with a contiguous share of [0, n), so
 * reductions can keep one partial per thread and the inner loops stay simple enough
 * for the compiler to vectorise. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend/backend.h"
#include "backend/cpu/cpu_cc.h"
#include "backend/cpu/cpu_mem.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void (*cpu_entry)(const void *args, int64_t begin, int64_t end, int thread);

typedef struct cpu_job {
    cpu_entry fn;
    const void *args;
    int64_t n, align;
    int nparts;
} cpu_job;

typedef struct cpu_pool {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    pthread_t *threads;
    int nthreads; /* workers besides the calling thread */
    cpu_job job;
    uint64_t generation; /* bumps once per job so workers never run one twice */
    int pending;
    bool quit;
} cpu_pool;

typedef struct cpu_state {
    cpu_pool pool;
} cpu_state;

typedef struct cpu_module {
    void *handle;
} cpu_module;

static void cpu_range(const cpu_job *j, int part, int64_t *b, int64_t *e)
{
    /* Split into nparts shares whose boundaries are multiples of align. */
    int64_t blocks = (j->n + j->align - 1) / j->align;
    int64_t per = blocks / j->nparts, rem = blocks % j->nparts;
    int64_t b0 = part * per + (part < rem ? part : rem);
    int64_t b1 = b0 + per + (part < rem ? 1 : 0);
    *b = b0 * j->align;
    *e = b1 * j->align < j->n ? b1 * j->align : j->n;
    if (*b > j->n)
        *b = j->n;
}

typedef struct cpu_worker_arg {
    cpu_pool *pool;
    int index;
} cpu_worker_arg;

static void *cpu_worker(void *p)
{
    cpu_worker_arg *wa = p;
    cpu_pool *pool = wa->pool;
    int index = wa->index;
    free(wa);
    uint64_t seen = 0;
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        while (!pool->quit && pool->generation == seen)
            pthread_cond_wait(&pool->go, &pool->mu);
        if (pool->quit)
            break;
        seen = pool->generation;
        cpu_job job = pool->job;
        pthread_mutex_unlock(&pool->mu);
        if (index < job.nparts) {
            int64_t b, e;
            cpu_range(&job, index, &b, &e);
            if (b < e)
                job.fn(job.args, b, e, index);
        }
        pthread_mutex_lock(&pool->mu);
        if (--pool->pending == 0)
            pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->mu);
    return NULL;
}

/* GX_CPU_THREADS counts the calling thread too.  The cap of 4096 only catches typos
 * (one thread per core of the largest machines is far below it). */
static int cpu_threads_wanted(void)
{
    return (int)gx__env_int("GX_CPU_THREADS", gx__cpu_count(), 1, 4096, "a whole number of threads from 1 to 4096");
}

static gx_status cpu_pool_start(cpu_pool *pool)
{
    memset(pool, 0, sizeof *pool);
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->go, NULL);
    pthread_cond_init(&pool->done, NULL);
    int want = cpu_threads_wanted() - 1; /* the caller is worker 0 */
    if (want <= 0)
        return GX_OK;
    pool->threads = calloc((size_t)want, sizeof *pool->threads);
    if (!pool->threads)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "cpu backend: cannot allocate the thread pool");
    for (int i = 0; i < want; i++) {
        cpu_worker_arg *wa = malloc(sizeof *wa);
        if (!wa)
            break;
        wa->pool = pool;
        wa->index = i + 1;
        if (pthread_create(&pool->threads[i], NULL, cpu_worker, wa) != 0) {
            free(wa);
            break; /* fewer workers is still correct */
        }
        pool->nthreads++;
    }
    return GX_OK;
}

static void cpu_pool_stop(cpu_pool *pool)
{
    pthread_mutex_lock(&pool->mu);
    pool->quit = true;
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    free(pool->threads);
    pthread_mutex_destroy(&pool->mu);
    pthread_cond_destroy(&pool->go);
    pthread_cond_destroy(&pool->done);
}

/* Runs fn over [0, n) on all workers; returns when every share is done. The context
 * lock is held by the caller, so one job runs at a time per context. */
static void cpu_pool_run(cpu_pool *pool, cpu_entry fn, const void *args, int64_t n, int64_t align, int maxparts)
{
    int parts = pool->nthreads + 1;
    if (maxparts > 0 && maxparts < parts)
        parts = maxparts;
    /* Small jobs are not worth waking threads for. */
    if (n < 4096 * (int64_t)parts)
        parts = (int)(n / 4096) + 1 < parts ? (int)(n / 4096) + 1 : parts;
    cpu_job job = {fn, args, n, align < 1 ? 1 : align, parts};
    if (parts == 1 || pool->nthreads == 0) {
        fn(args, 0, n, 0);
        return;
    }
    pthread_mutex_lock(&pool->mu);
    pool->job = job;
    pool->pending = pool->nthreads;
    pool->generation++;
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mu);
    int64_t b, e;
    cpu_range(&job, 0, &b, &e);
    if (b < e)
        fn(args, b, e, 0);
    pthread_mutex_lock(&pool->mu);
    while (pool->pending > 0)
        pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}

/* ------------------------------------------------------------ iface */

static gx_status cpu_open(gx__backend *be, int device)
{
    if (device != 0)
        return gx__err(GX_ERR_NO_DEVICE, "cpu backend has one device (0), not %d", device);
    cpu_state *st = calloc(1, sizeof *st);
    if (!st)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "cpu backend: out of host memory");
    gx_status s = cpu_pool_start(&st->pool);
    if (s != GX_OK) {
        free(st);
        return s;
    }
    be->impl = st;
    return GX_OK;
}

static void cpu_close(gx__backend *be)
{
    cpu_state *st = be->impl;
    if (!st)
        return;
    cpu_pool_stop(&st->pool);
    free(st);
    be->impl = NULL;
}

static gx_status cpu_alloc(gx__backend *be, size_t bytes, void **ptr)
{
    (void)be;
    if (bytes == 0) {
        *ptr = NULL;
        return GX_OK;
    }
    /* 64-byte alignment: whole cache lines and the widest vector loads. */
    size_t rounded = (bytes + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, rounded);
    if (!p)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "host allocation of %zu bytes failed", bytes);
    *ptr = p;
    return GX_OK;
}

static void cpu_free(gx__backend *be, void *ptr, size_t bytes)
{
    (void)be;
    (void)bytes;
    free(ptr);
}

static gx_status cpu_trim(gx__backend *be)
{
    (void)be;
    return GX_OK;
}
static size_t cpu_reserved(gx__backend *be)
{
    (void)be;
    return 0;
}

static gx_status cpu_copy(gx__backend *be, void *dst, const void *src, size_t n)
{
    (void)be;
    if (n)
        memmove(dst, src, n);
    return GX_OK;
}

static gx_status cpu_sync(gx__backend *be)
{
    (void)be;
    return GX_OK;
}

static size_t cpu_l2(void)
{
    long l = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l <= 0)
        l = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l > 0 ? (size_t)l : 0;
}

static void cpu_model(char *out, size_t n)
{
    snprintf(out, n, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ')
                    c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(out, n, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static gx_status cpu_info(gx__backend *be, gx_device_info *o)
{
    (void)be;
    memset(o, 0, sizeof *o);
    cpu_model(o->name, sizeof o->name);
    o->multiprocessors = gx__cpu_count();
    /* What this process can really use (cgroup caps included), not what malloc would
     * promise: the core's default memory limit is this figure. */
    o->mem_total = cpu_mem_total(&o->mem_free);
    o->l2_bytes = cpu_l2();
    o->max_threads_per_block = 1;
    o->warp_size = 1;
    return GX_OK;
}

static gx_status cpu_build(gx__backend *be, const char *source, const char *label, void **blob, size_t *len)
{
    (void)be;
    return cpu_cc_build(source, label, blob, len);
}

static gx_status cpu_load(gx__backend *be, const void *blob, size_t len, gx__module **out)
{
    (void)be;
    cpu_module *m = calloc(1, sizeof *m);
    if (!m)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "cpu backend: out of host memory");
    gx_status s = cpu_cc_so_load(blob, len, &m->handle);
    if (s != GX_OK) {
        free(m);
        return s;
    }
    *out = (gx__module *)m;
    return GX_OK;
}

static gx_status cpu_get_func(gx__backend *be, gx__module *mod, const char *entry, gx__func *out)
{
    (void)be;
    cpu_module *m = (cpu_module *)mod;
    void *f = dlsym(m->handle, entry);
    if (!f)
        return gx__err(GX_ERR_INTERNAL, "generated module has no entry '%s' (%s)", entry, dlerror());
    *out = f;
    return GX_OK;
}

static void cpu_module_free(gx__backend *be, gx__module *mod)
{
    (void)be;
    cpu_module *m = (cpu_module *)mod;
    if (!m)
        return;
    if (m->handle)
        dlclose(m->handle);
    free(m);
}

static gx_status cpu_launch(gx__backend *be, gx__func f, const gx__launch *l)
{
    cpu_state *st = be->impl;
    cpu_entry fn;
    /* dlsym hands back an object pointer; POSIX guarantees it converts to a function. */
    memcpy(&fn, &f, sizeof fn);
    if (l->n > 0)
        cpu_pool_run(&st->pool, fn, l->args, l->n, l->cpu_align, l->cpu_threads);
    return GX_OK;
}

static const char *cpu_compiler_id(gx__backend *be)
{
    (void)be;
    return cpu_cc_id();
}

void gx__cpu_describe(char *cc, size_t n) { snprintf(cc, n, "%s (%s)", cpu_cc_path(), cpu_cc_id()); }

/* Workers in the pool plus the calling thread. */
static int cpu_workers(gx__backend *be)
{
    cpu_state *st = be->impl;
    return st ? st->pool.nthreads + 1 : 1;
}

/* No optional slot: host memory, no streams or events (the core reads a host clock),
 * no user kernels; matmul and FFT run through src/linalg's host paths. */
const gx__backend_iface gx__cpu_iface = {
    .kind = GX_BACKEND_CPU,
    .name = "cpu",
    .target = GX__TARGET_C,
    .caps = GX__CAP_HOST,
    .open = cpu_open,
    .close = cpu_close,
    .info = cpu_info,
    .mem =
        {
            .alloc = cpu_alloc,
            .free = cpu_free,
            .trim = cpu_trim,
            .reserved = cpu_reserved,
            .h2d = cpu_copy,
            .d2h = cpu_copy,
            .d2d = cpu_copy,
        },
    .stream = {.sync = cpu_sync},
    .code =
        {
            .build = cpu_build,
            .load = cpu_load,
            .get_func = cpu_get_func,
            .module_free = cpu_module_free,
            .compiler_id = cpu_compiler_id,
        },
    .launch = {.run = cpu_launch, .workers = cpu_workers},
};
