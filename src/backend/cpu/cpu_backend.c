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
#include "backend/cpu/cpu_cache.h"
#include "backend/cpu/cpu_cc.h"
#include "backend/cpu/cpu_kernel.h"
#include "backend/cpu/cpu_mem.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
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
    uint64_t id; /* the job's number (ids grow): what claims its parts (cpu_part) */
} cpu_job;

/* How a job runs.  The caller cuts [0, n) into parts with fixed bounds (cpu_range)
 * and claims them one at a time (cpu_part), as does every worker it
 * handed the job to; whoever runs part p calls fn(..., p), so a kernel's per-part
 * results (reduction partials, scan carries) do not depend on which thread ran what,
 * and results stay the same bits for a given thread count.
 *
 * Why claiming: on a loaded machine a worker may not run for milliseconds; the caller
 * then runs that worker's part itself instead of waiting for it (with another process
 * busy on one of the VM's 2 cores, a 32 x 32 row sum took 215 us a call when each
 * part belonged to one thread).  The caller waits only for parts already started.
 *
 * Why spinning: a mutex + condition-variable handoff took 40-80 us per call on the
 * 2-core VM (perf: 60% of a 2^16 f32 sum's time in futex wake-ups; the sum itself
 * takes 3 us), a spinning one about 1 us.  Workers spin on their slot for a while
 * (CPU_SPIN_NS) before they sleep on a condition variable, so an idle pool sleeps.
 *
 * The job goes to a worker through its own slot, and only to a worker that is done
 * with the job before (slot.done == slot.gen): a late worker still reading its old
 * job is simply left out of the next one.
 *
 * Which thread runs which part: part p belongs to worker p (the caller is worker 0)
 * and is claimed by writing the job's id into the part's own tag (cpu_part.tag, ids
 * only grow, so a tag below the job's id means unclaimed, and a late worker of an
 * older job finds every tag at or past its id: it cannot claim a part of a job it was
 * not given).  A thread runs its own part first, then claims any other part still
 * unclaimed -- the part of a worker that has not started by then (late, asleep, or
 * not handed the job).  Why: with one shared counter (the next unclaimed part) parts
 * went to threads in the order they woke, a different order on every call, so the
 * second pass of a scan or a compaction (and the next operation on the same data)
 * read a part that another core's cache held from the first.  Owned, a part stays
 * with one core as long as its worker keeps up, as OpenMP's static schedule keeps it.
 * The 16-core host's table (2026-11-24) had the f32 scan of 2^20 into an existing
 * array at 287 us against OpenMP's 158 (0.55x), select at 2^16 0.69x, both two passes
 * over the same parts.  The 2-core VM cannot show the gain (one worker, which took
 * part 1 in both passes already): f32 scan into an existing array, 2^20, medians of
 * three interleaved runs, 706 / 761 / 706 us before, 707 / 746 / 713 after (no cost);
 * the many-core figure is for the lead's run of scripts/bench-cpu. */
/* The caller writes job and gen in one line (the worker spins on gen, then reads the
 * job from the line it just fetched); the worker writes done in a line of its own. */
typedef struct cpu_slot {
    _Alignas(64) cpu_job job;
    _Atomic uint64_t gen; /* bumped once per job handed to this worker */
    _Atomic int asleep;   /* the worker blocks (or is about to) on `go` */
    _Alignas(64) _Atomic uint64_t done; /* the last gen this worker is finished with */
    pthread_mutex_t mu;                 /* guards the sleep on `go` */
    pthread_cond_t go;
} cpu_slot;

/* A part's claim: the id of the last job whose part it was claimed for (a line of
 * its own: the owners claim their parts at the same moment). */
typedef struct cpu_part {
    _Alignas(64) _Atomic uint64_t tag;
} cpu_part;

typedef struct cpu_pool {
    pthread_t *threads;
    cpu_slot *slots; /* slots[i] feeds worker i + 1 */
    cpu_part *parts; /* nthreads + 1: parts[p] is worker p's */
    int nthreads;    /* workers besides the calling thread */
    int nslots;      /* slots made (their mutex and condition variable initialised) */
    uint64_t jobs;   /* jobs run so far (the caller's; under the context lock) */
    _Alignas(64) _Atomic int finished; /* parts of the current job done */
    _Atomic bool quit;
} cpu_pool;

/* How long an idle worker spins before it sleeps: longer than the gap between the
 * back-to-back calls of a loop of small operations, short enough to be invisible to
 * a process that calls gx now and then. */
#define CPU_SPIN_NS 200000

/* Fewest elements of work a part of a job gets: where a second thread starts to pay
 * for its handoff.  Measured on the 2-core VM (f32 in
 * cache, best of 900 calls, one part / two): sum 2^13 2.6 / 2.7 us, 2^14 3.8 / 3.3;
 * 2x+y 2^13 2.5 / 2.4, 2^14 3.6 / 3.0. */
#define CPU_GRAIN 8192

/* CPU_GRAIN on machines of up to 4 cores, CPU_GRAIN_MANY above, or the experiment knob
 * GX_CPU_GRAIN (read once).  On many cores the handoff to spinning workers is cheap
 * and OpenMP splits a 2^16 sum 16 ways (gx with 8192: 8 parts).  16-core H100 host,
 * same run, best of 3 medians (µs), 8192 -> 2048: 2^16 sum 8.3 -> 7.2, l2 14.0 ->
 * 10.5, mean 8.4 -> 7.3, select 26.6 -> 19.9, scan 18.6 -> 19.1, 2x+y 12.8 -> 14.0;
 * 2^20 sum 72.6 -> 59.7, select 234 -> 204, mean 76 -> 58, 2x+y 136 -> 160 (a noisy
 * host that day: read the direction, not the digits). */
#define CPU_GRAIN_MANY 2048

/* A size that depends on the machine: `few` on up to 4 cores, `many` above, or the
 * experiment knob `name` within [lo, hi]; read once into *cache. */
static int cpu_size_knob(_Atomic int *cache, const char *name, int few, int many, int lo, int hi)
{
    int g = atomic_load_explicit(cache, memory_order_relaxed);
    if (!g) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        g = gx__knob_int(name, cores > 4 ? many : few, lo, hi);
        atomic_store_explicit(cache, g, memory_order_relaxed);
    }
    return g;
}

static int64_t cpu_grain(void)
{
    static _Atomic int grain;
    return cpu_size_knob(&grain, "GX_CPU_GRAIN", CPU_GRAIN, CPU_GRAIN_MANY, 64, 1 << 24);
}

/* Items per part for items of `work` elements each (0: one). */
static int64_t cpu_grain_of(int64_t work)
{
    int64_t g = cpu_grain();
    return work > 1 ? (g + work - 1) / work : g;
}

typedef struct cpu_state {
    cpu_pool pool;
    cpu_cache cache;
    /* Checked mode: the first failure a checked user kernel recorded since the last
     * sync (cpu_launch_user), reported by cpu_sync as the CUDA backend does. */
    pthread_mutex_t check_mu;
    bool check_pending;
    char check_msg[640];
} cpu_state;

typedef struct cpu_module {
    void *handle;
} cpu_module;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static uint64_t cpu_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

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

/* Waits until the slot's generation moves past `seen` (or the pool quits): spins
 * first, then sleeps on the slot's own condition variable.  Announcing the sleep
 * (slot.asleep), a sequentially consistent fence, then re-checking the slot pairs
 * with the caller's store, fence, check in cpu_hand_out: one of the two sees the
 * other, so no wake-up is lost.
 *
 * Why one per slot: with one condition variable for the pool, a job for a few
 * workers woke every sleeping one (a broadcast), and each took the pool's mutex only
 * to find nothing to do and sleep again -- on every call that used fewer parts than
 * there are workers (a 2^16 sum has 8 parts of 8192, so 7 of the 16-core host's 15
 * workers idle past CPU_SPIN_NS and sleep), the caller paying the broadcast and the
 * workers with a job queueing for the mutex behind those without.  The likely part of
 * the 16-core host's 2^16 sum at 17.8 us against OpenMP's 6.9 (not measured there
 * yet: the 2-core VM has one worker, so no herd).  Now a sleeping worker is woken
 * only when it is handed a job.  On the 2-core VM with GX_CPU_THREADS=8, an i32 sum of
 * 3 x 8192 (3 parts, 5 workers asleep) went from 4.6 us best / 6.6-8.0 median to 3.0
 * / 5.2-5.4. */
static uint64_t cpu_wait_job(cpu_pool *pool, cpu_slot *slot, uint64_t seen)
{
    uint64_t g, t0 = 0;
    for (unsigned i = 0;; i++) {
        g = atomic_load_explicit(&slot->gen, memory_order_acquire);
        if (g != seen || atomic_load_explicit(&pool->quit, memory_order_relaxed))
            return g;
        cpu_relax();
        if ((i & 63) == 63) {
            /* A spinning worker must not keep the caller (or anyone) off a core it
             * needs: with another process busy on one of 2 cores, a pure spin made
             * the median 2^16 scan 613 us (best 83). */
            sched_yield();
            uint64_t now = cpu_now_ns();
            if (!t0)
                t0 = now;
            else if (now - t0 > CPU_SPIN_NS)
                break;
        }
    }
    pthread_mutex_lock(&slot->mu);
    atomic_store(&slot->asleep, 1);
    atomic_thread_fence(memory_order_seq_cst); /* pairs with cpu_hand_out's fence */
    while ((g = atomic_load(&slot->gen)) == seen && !atomic_load(&pool->quit))
        pthread_cond_wait(&slot->go, &slot->mu);
    atomic_store(&slot->asleep, 0);
    pthread_mutex_unlock(&slot->mu);
    return g;
}

/* Runs part p of `job` if no one has claimed it yet. */
static void cpu_try_part(cpu_pool *pool, const cpu_job *job, int p)
{
    _Atomic uint64_t *tag = &pool->parts[p].tag;
    uint64_t v = atomic_load_explicit(tag, memory_order_relaxed);
    while (v < job->id) {
        if (!atomic_compare_exchange_weak(tag, &v, job->id))
            continue; /* v holds the tag's new value */
        int64_t b, e;
        cpu_range(job, p, &b, &e);
        if (b < e)
            job->fn(job->args, b, e, p);
        atomic_fetch_add_explicit(&pool->finished, 1, memory_order_release);
        return;
    }
}

/* Worker `own`'s part first, then every part still unclaimed, from the next one on
 * (see cpu_job: the owner of a part runs it unless it is late).  The count of parts
 * done (one line) spares the look at every other part's tag (one line each) once all
 * are done; a count of parts claimed would spare more, but its increment, by every
 * part's owner at the same moment, queued the parts' starts behind one contended line.
 * A late worker of an older job may read a newer job's count: it only makes it look at
 * tags it cannot claim. */
static void cpu_claim_parts(cpu_pool *pool, const cpu_job *job, int own)
{
    int n = job->nparts, first = own < n ? own : 0;
    if (own < n)
        cpu_try_part(pool, job, own);
    for (int k = 1; k < n && atomic_load_explicit(&pool->finished, memory_order_relaxed) < n; k++)
        cpu_try_part(pool, job, (first + k) % n);
    if (own >= n)
        cpu_try_part(pool, job, first);
}

static void *cpu_worker(void *p)
{
    cpu_worker_arg *wa = p;
    cpu_pool *pool = wa->pool;
    int wa_index = wa->index;
    cpu_slot *slot = &pool->slots[wa_index - 1];
    free(wa);
    uint64_t seen = 0;
    for (;;) {
        seen = cpu_wait_job(pool, slot, seen);
        if (atomic_load(&pool->quit))
            break;
        cpu_claim_parts(pool, &slot->job, wa_index);
        atomic_store_explicit(&slot->done, seen, memory_order_release);
    }
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
    int want = cpu_threads_wanted() - 1; /* the caller is worker 0 */
    if (want <= 0)
        return GX_OK;
    pool->threads = calloc((size_t)want, sizeof *pool->threads);
    pool->slots = aligned_alloc(64, (size_t)want * sizeof *pool->slots);
    pool->parts = aligned_alloc(64, (size_t)(want + 1) * sizeof *pool->parts);
    if (pool->slots)
        memset(pool->slots, 0, (size_t)want * sizeof *pool->slots);
    for (int i = 0; pool->parts && i <= want; i++)
        atomic_init(&pool->parts[i].tag, 0);
    if (!pool->threads || !pool->slots || !pool->parts) {
        free(pool->threads);
        free(pool->slots);
        free(pool->parts);
        pool->threads = NULL;
        pool->slots = NULL;
        pool->parts = NULL;
        return gx__err(GX_ERR_OUT_OF_MEMORY, "cpu backend: cannot allocate the thread pool");
    }
    for (int i = 0; i < want; i++) {
        pthread_mutex_init(&pool->slots[i].mu, NULL);
        pthread_cond_init(&pool->slots[i].go, NULL);
    }
    pool->nslots = want;
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
    atomic_store(&pool->quit, true);
    for (int i = 0; i < pool->nslots; i++) {
        pthread_mutex_lock(&pool->slots[i].mu);
        pthread_cond_broadcast(&pool->slots[i].go);
        pthread_mutex_unlock(&pool->slots[i].mu);
    }
    for (int i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    for (int i = 0; i < pool->nslots; i++) {
        pthread_mutex_destroy(&pool->slots[i].mu);
        pthread_cond_destroy(&pool->slots[i].go);
    }
    free(pool->threads);
    free(pool->slots);
    free(pool->parts);
}

/* Parts for a job of n items with at least `grain` items each: a part is worth a
 * worker only when its work outlasts the handoff. */
static int cpu_parts(const cpu_pool *pool, int64_t n, int64_t grain, int maxparts)
{
    int parts = pool->nthreads + 1;
    if (maxparts > 0 && maxparts < parts)
        parts = maxparts;
    int64_t fit = n / (grain > 0 ? grain : 1);
    if (fit < parts)
        parts = fit < 1 ? 1 : (int)fit;
    return parts;
}

/* Hands `job` to the first idle workers, one per part besides the caller's.  Why a
 * plain store per slot and one fence for all: the seq_cst increment of each slot's
 * generation (a locked instruction: it waits for the slot's line to come over from
 * the spinning worker's core and drains the stores before it) made the hand-out a
 * chain of cross-core round trips, one slot after the other -- on the 16-core host
 * the last of 15 workers started some 15 of them (~100-200 ns each) after the first,
 * a 2^16 sum there taking 10.7 us against OpenMP's 6.3 (libgomp wakes its team by one
 * shared word).  Now the stores go out together (the job and gen share a line, so
 * one transfer each) and a single fence orders them before the look at the sleepers.
 * The 2-core VM has one worker, so no chain to measure: 2^16 f32 sum / scan / 2x+y
 * into an array, 64 rotated inputs, medians of three interleaved runs (us), before
 * 13.4 19.7 15.0 / 39.1 53.9 42.1 / 31.4 51.8 32.5, after 15.6 14.8 13.4 / 45.0 43.6
 * 39.3 / 32.9 32.5 30.9: the same within the VM's noise. */
static void cpu_hand_out(cpu_pool *pool, const cpu_job *job)
{
    int handed = 0, last = -1;
    for (int i = 0; i < pool->nthreads && handed < job->nparts - 1; i++) {
        cpu_slot *sl = &pool->slots[i];
        uint64_t g = atomic_load_explicit(&sl->gen, memory_order_relaxed);
        if (atomic_load_explicit(&sl->done, memory_order_acquire) != g)
            continue; /* still on an earlier job */
        sl->job = *job;
        atomic_store_explicit(&sl->gen, g + 1, memory_order_release); /* the caller alone writes gen */
        handed++;
        last = i;
    }
    atomic_thread_fence(memory_order_seq_cst); /* pairs with cpu_wait_job's fence */
    for (int i = 0; i <= last; i++) {
        cpu_slot *sl = &pool->slots[i];
        if (atomic_load_explicit(&sl->asleep, memory_order_relaxed) &&
            atomic_load_explicit(&sl->gen, memory_order_relaxed) != atomic_load_explicit(&sl->done, memory_order_relaxed)) {
            pthread_mutex_lock(&sl->mu);
            pthread_cond_signal(&sl->go);
            pthread_mutex_unlock(&sl->mu);
        }
    }
}

/* Runs fn over [0, n) in `parts` parts, on the caller and the idle workers; returns
 * when every part is done.  The context lock is held by the caller, so one job runs
 * at a time per context. */
static void cpu_pool_run(cpu_pool *pool, cpu_entry fn, const void *args, int64_t n, int64_t align, int64_t grain,
                         int maxparts)
{
    int parts = cpu_parts(pool, n, grain, maxparts);
    cpu_job job = {fn, args, n, align < 1 ? 1 : align, parts, ++pool->jobs};
    if (parts == 1) {
        fn(args, 0, n, 0);
        return;
    }
    atomic_store_explicit(&pool->finished, 0, memory_order_relaxed);
    cpu_hand_out(pool, &job);
    cpu_claim_parts(pool, &job, 0);
    /* Every part is claimed: wait for those still running elsewhere, yielding the
     * core now and then in case their thread needs it (more threads than cores). */
    for (unsigned i = 1; atomic_load_explicit(&pool->finished, memory_order_acquire) < parts; i++) {
        cpu_relax();
        if ((i & 1023) == 0)
            sched_yield();
    }
}

/* ------------------------------------------------------------ iface */

/* Keeps at most an eighth of what the process can use in freed blocks: enough for the
 * results of a loop's operations, little enough that the memory limit (the whole of
 * it by default) stays what an application can really use. */
static size_t cpu_cache_cap(void) { return cpu_mem_total(NULL) / 8; }

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
    cpu_cache_init(&st->cache, cpu_cache_cap());
    pthread_mutex_init(&st->check_mu, NULL);
    be->impl = st;
    return GX_OK;
}

static void cpu_close(gx__backend *be)
{
    cpu_state *st = be->impl;
    if (!st)
        return;
    cpu_pool_stop(&st->pool);
    cpu_cache_destroy(&st->cache);
    pthread_mutex_destroy(&st->check_mu);
    free(st);
    be->impl = NULL;
}

static gx_status cpu_alloc(gx__backend *be, size_t bytes, void **ptr)
{
    cpu_state *st = be->impl;
    if (bytes == 0) {
        *ptr = NULL;
        return GX_OK;
    }
    void *p = cpu_cache_alloc(&st->cache, bytes);
    if (!p)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "host allocation of %zu bytes failed", bytes);
    *ptr = p;
    return GX_OK;
}

static void cpu_free(gx__backend *be, void *ptr, size_t bytes)
{
    cpu_state *st = be->impl;
    cpu_cache_free(&st->cache, ptr, bytes);
}

static gx_status cpu_trim(gx__backend *be)
{
    cpu_state *st = be->impl;
    cpu_cache_trim(&st->cache);
    return GX_OK;
}

/* Taken from the system and not given back: live blocks and cached ones. */
static size_t cpu_reserved(gx__backend *be)
{
    cpu_state *st = be->impl;
    return cpu_cache_held(&st->cache);
}

typedef struct cpu_copy_args {
    char *dst;
    const char *src;
} cpu_copy_args;

static void cpu_copy_part(const void *p, int64_t begin, int64_t end, int part)
{
    (void)part;
    const cpu_copy_args *c = p;
    if (end > begin)
        memcpy(c->dst + begin, c->src + begin, (size_t)(end - begin));
}

/* Bytes a part of a copy gets at least: one thread's memcpy cannot fill the memory
 * bus of a many-core machine (16-core host: one thread's copy ran at about a quarter
 * of all cores'), and a part this size takes long beside its handoff (about 1 us).
 * CPU_COPY_GRAIN_MANY above 4 cores, or the experiment knob GX_CPU_COPY_GRAIN (read
 * once): one core copies from the last-level cache at about 8 GB/s there, so a
 * 256 KB copy (2^16 f32) that stayed on one thread took 30-39 us where OpenMP's
 * 16 threads took 7.5 (16-core H100 host, median of 3 rounds, session 30).  On two
 * cores a part of 64 KiB still takes ~5 us to copy: 2-core AMD EPYC VM, `gx bench
 * --filter =h2d,=d2h`, median of 8 runs alternated with the old grain of 256 KiB (one
 * thread up to 512 KiB): 2^16 f32 h2d 31.7 -> 19.2 us, d2h 31.6 -> 19.6; 2^15 (6
 * runs) 11.2 -> 5.9. */
#define CPU_COPY_GRAIN ((int64_t)1 << 16)
#define CPU_COPY_GRAIN_MANY ((int64_t)1 << 14)
static int64_t cpu_copy_grain(void)
{
    static _Atomic int grain;
    return cpu_size_knob(&grain, "GX_CPU_COPY_GRAIN", (int)CPU_COPY_GRAIN, (int)CPU_COPY_GRAIN_MANY, 4096, 1 << 30);
}

/* Host to host: in parts over the pool when the copy is large and the ranges do not
 * overlap (the pool's parts run in any order); memmove otherwise. */
static gx_status cpu_copy(gx__backend *be, void *dst, const void *src, size_t n)
{
    cpu_state *st = be->impl;
    const char *d = dst, *s = src;
    bool apart = d + n <= s || s + n <= d;
    const int64_t grain = cpu_copy_grain();
    if (n >= 2 * (size_t)grain && apart && st && st->pool.nthreads > 0) {
        cpu_copy_args c = {dst, src};
        cpu_pool_run(&st->pool, cpu_copy_part, &c, (int64_t)n, 4096, grain, 0);
    } else if (n) {
        memmove(dst, src, n);
    }
    return GX_OK;
}

static gx_status cpu_sync(gx__backend *be)
{
    cpu_state *st = be->impl;
    if (!st)
        return GX_OK;
    char msg[sizeof st->check_msg];
    pthread_mutex_lock(&st->check_mu);
    bool pending = st->check_pending;
    st->check_pending = false;
    memcpy(msg, st->check_msg, sizeof msg);
    pthread_mutex_unlock(&st->check_mu);
    if (pending)
        return gx__err(GX_ERR_KERNEL_FAULT, "%s", msg);
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
    /* User kernels' limits (cpu_kernel.h): blocks of fibers, warps of 32. */
    o->max_threads_per_block = CPU_KMAX_THREADS;
    o->warp_size = 32;
    o->shared_per_block = o->shared_per_block_optin = CPU_KMAX_SHMEM;
    return GX_OK;
}

static gx_status cpu_build(gx__backend *be, const char *source, const char *label, void **blob, size_t *len)
{
    (void)be;
    if (cpu_kernel_is_user(source))
        return cpu_kernel_build(source, label, blob, len);
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
    /* A user kernel's module: the entry is reached through its trampoline. */
    if (dlsym(m->handle, "gx__cpu_user_module")) {
        char tramp[300];
        snprintf(tramp, sizeof tramp, "gx__cpuk_%s", entry);
        void *t = strlen(entry) < 256 ? dlsym(m->handle, tramp) : NULL;
        if (!t)
            return gx__err(GX_ERR_INTERNAL, "user kernel module has no entry '%s'", entry);
        *out = t;
        return GX_OK;
    }
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
        cpu_pool_run(&st->pool, fn, l->args, l->n, l->cpu_align, cpu_grain_of(l->cpu_work), l->cpu_threads);
    return GX_OK;
}

static int cpu_workers(gx__backend *be);

static char g_cpu_id[2048];
static pthread_once_t g_cpu_id_once = PTHREAD_ONCE_INIT;

static void cpu_id_init(void)
{
    char k[256];
    cpu_kernel_id(k, sizeof k);
    snprintf(g_cpu_id, sizeof g_cpu_id, "%s%s", cpu_cc_id(), k);
}

/* The C compiler's id, plus what users' kernels are built with (cpu_kernel.c). */
static const char *cpu_compiler_id(gx__backend *be)
{
    (void)be;
    pthread_once(&g_cpu_id_once, cpu_id_init);
    return g_cpu_id;
}

/* ------------------------------------------------------------ user kernels */

/* Whether f is a user kernel's trampoline (the only functions that the user-kernel
 * slots take; generated kernels keep the launch shape jit/kernel.c gives them). */
static bool cpu_is_user_fn(gx__func f)
{
    Dl_info di;
    return f && dladdr(f, &di) && di.dli_sname && strncmp(di.dli_sname, "gx__cpuk_", 9) == 0;
}

typedef struct cpu_kjob {
    cpu_ktramp fn;
    cpu_klaunch *l;
} cpu_kjob;

static void cpu_kblocks(const void *p, int64_t begin, int64_t end, int part)
{
    (void)part;
    const cpu_kjob *j = p;
    j->fn(j->l, begin, end);
}

/* The CPU's limits, each failure named as the CUDA backend names its own. */
static gx_status cpu_klimits(const gx__launch *l)
{
    static const unsigned bmax[3] = {1024, 1024, 64}, gmax[3] = {0x7fffffffu, 65535, 65535};
    static const char axis[3] = {'x', 'y', 'z'};
    uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (threads > CPU_KMAX_THREADS)
        return gx__err(GX_ERR_LAUNCH,
                       "block of %llu threads exceeds the device limit of %d threads per block; use smaller "
                       "blocks (on the CPU backend each thread of a block is a fiber on one core)",
                       (unsigned long long)threads, CPU_KMAX_THREADS);
    for (int i = 0; i < 3; i++) {
        if (l->block[i] > bmax[i])
            return gx__err(GX_ERR_LAUNCH, "block dimension %c = %u exceeds the device limit of %u", axis[i],
                           l->block[i], bmax[i]);
        if (l->grid[i] > gmax[i])
            return gx__err(GX_ERR_LAUNCH, "grid dimension %c = %u exceeds the device limit of %u blocks", axis[i],
                           l->grid[i], gmax[i]);
    }
    if (l->shmem > CPU_KMAX_SHMEM)
        return gx__err(GX_ERR_LAUNCH,
                       "%u bytes of dynamic shared memory exceed the device limit of %zu bytes per block "
                       "(the CPU backend's limit)",
                       l->shmem, CPU_KMAX_SHMEM);
    return GX_OK;
}

/* A checked kernel's record after its launch: the first failure is kept for the
 * next sync (same message as the CUDA backend's check_records), the record cleared
 * for the next launch.  The launch is complete, so a set flag is 2 (written). */
static void cpu_check_record_take(cpu_state *cs, void *p)
{
    cpu_check_record *r = p;
    if (atomic_load((_Atomic unsigned *)&r->flag) == 0)
        return;
    pthread_mutex_lock(&cs->check_mu);
    if (!cs->check_pending) {
        gx__check_rec_msg(r, cs->check_msg, sizeof cs->check_msg);
        cs->check_pending = true;
    }
    pthread_mutex_unlock(&cs->check_mu);
    atomic_store((_Atomic unsigned *)&r->flag, 0u);
}

/* Blocks are the parts of one pool job, one block per part at least, so that a
 * grid of few heavy blocks still spreads over every worker. */
static gx_status cpu_launch_user(gx__backend *be, gx__func f, const gx__launch *l, void **params, void *st,
                                 int cooperative)
{
    (void)st;
    cpu_state *cs = be->impl;
    if (cooperative)
        return gx__err(GX_ERR_UNSUPPORTED,
                       "cooperative launches (grid-wide sync) need the CUDA backend: the CPU backend runs a "
                       "grid's blocks one after another on each core");
    GX__CHECK(cpu_klimits(l));
    if (!cpu_is_user_fn(f))
        return gx__err(GX_ERR_INTERNAL, "cpu backend: not a user kernel's entry");
    int np = 0;
    while (params[np])
        np++;
    cpu_klaunch kl;
    memset(&kl, 0, sizeof kl);
    kl.params = params;
    kl.nparams = np;
    memcpy(kl.grid, l->grid, sizeof kl.grid);
    memcpy(kl.block, l->block, sizeof kl.block);
    kl.shmem = l->shmem;
    cpu_kjob j;
    memcpy(&j.fn, &f, sizeof j.fn);
    j.l = &kl;
    int64_t nblocks = (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
    int64_t maxparts = nblocks < (1 << 19) ? nblocks : (1 << 19);
    cpu_pool_run(&cs->pool, cpu_kblocks, &j, nblocks, 1, 1, (int)maxparts);
    if (kl.rec)
        cpu_check_record_take(cs, kl.rec);
    if (atomic_load((_Atomic int *)&kl.error) > 0) {
        Dl_info di;
        const char *nm = dladdr(f, &di) && di.dli_sname ? di.dli_sname + 9 : "?"; /* after "gx__cpuk_" */
        return gx__err(GX_ERR_KERNEL_FAULT, "kernel fault in %s on the CPU backend: %s", nm, kl.msg);
    }
    return GX_OK;
}

static gx_status cpu_func_attrs(gx__backend *be, gx__func f, gx_kernel_attrs *out)
{
    (void)be;
    if (!cpu_is_user_fn(f))
        return gx__err(GX_ERR_UNSUPPORTED, "cpu backend: attributes exist for user kernels only");
    out->registers = 0; /* the CPU has no per-thread register budget */
    out->max_threads_per_block = CPU_KMAX_THREADS;
    out->max_dynamic_shared = (int)CPU_KMAX_SHMEM;
    snprintf(out->arch, sizeof out->arch, "cpu");
    return GX_OK;
}

/* The CPU model of occupancy: 256 threads a block, and CPU_KBLOCKS_PER_CORE blocks
 * per worker "resident" (a worker runs one block at a time; several per worker
 * balance blocks of uneven work). */
#define CPU_KBLOCKS_PER_CORE 4
static gx_status cpu_occ_block(gx__backend *be, gx__func f, unsigned shmem, int *min_grid, int *block)
{
    (void)shmem;
    if (!cpu_is_user_fn(f))
        return gx__err(GX_ERR_UNSUPPORTED, "cpu backend: occupancy exists for user kernels only");
    *block = 256;
    *min_grid = cpu_workers(be) * CPU_KBLOCKS_PER_CORE;
    return GX_OK;
}

static gx_status cpu_occ_active(gx__backend *be, gx__func f, int block, size_t shmem, int *blocks)
{
    (void)be, (void)f;
    *blocks = block <= CPU_KMAX_THREADS && shmem <= CPU_KMAX_SHMEM ? CPU_KBLOCKS_PER_CORE : 0;
    return GX_OK;
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
/* The device is the host: any address the caller vouches for is usable. */
static gx_status cpu_ptr_check(gx__backend *be, const void *p, size_t bytes, const char *what)
{
    (void)be, (void)p, (void)bytes, (void)what;
    return GX_OK;
}

const gx__backend_iface gx__cpu_iface = {
    .kind = GX_BACKEND_CPU,
    .name = "cpu",
    .target = GX__TARGET_C,
    .caps = GX__CAP_HOST | GX__CAP_USER_KERNELS | GX__CAP_OCCUPANCY,
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
            .ptr_check = cpu_ptr_check,
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
    .launch =
        {
            .run = cpu_launch,
            .workers = cpu_workers,
            .user = cpu_launch_user,
            .func_attrs = cpu_func_attrs,
            .occupancy_block = cpu_occ_block,
            .occupancy_active = cpu_occ_active,
        },
};
