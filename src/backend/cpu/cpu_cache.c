/* cpu_cache.c -- the CPU backend's memory pool: see cpu_cache.h. */
#include "backend/cpu/cpu_cache.h"
#include "backend/backend.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The class of `bytes` and the size its blocks have (*size), or -1: not kept.  Up to
 * 1 KiB a class per 64 bytes (16 classes); above, eight per power of two. */
static int cache_class(size_t bytes, size_t *size)
{
    *size = (bytes + 63) & ~(size_t)63;
    if (bytes == 0 || bytes > ((size_t)1 << CPU_CACHE_MAXLOG))
        return -1;
    if (bytes <= CPU_CACHE_SMALL)
        return (int)(*size / 64) - 1;
    int e = 63 - __builtin_clzll((unsigned long long)(bytes - 1)); /* 2^e < bytes <= 2^(e+1), e >= 10 */
    size_t step = ((size_t)1 << (e + 1)) / 16;                     /* >= 128: whole cache lines */
    size_t q = (bytes + step - 1) / step;                          /* 9..16 */
    *size = q * step;
    return CPU_CACHE_NSMALL + (e - 10) * 8 + (int)(q - 9);
}

void cpu_cache_init(cpu_cache *c, size_t cap)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->cap = cap;
}

/* The size of class k's blocks (the inverse of cache_class). */
static size_t cache_class_size(int k)
{
    if (k < CPU_CACHE_NSMALL)
        return (size_t)(k + 1) * 64;
    int j = k - CPU_CACHE_NSMALL, e = 10 + j / 8, q = 9 + j % 8;
    return (size_t)q * (((size_t)1 << (e + 1)) / 16);
}

/* A new block.  From 4 MiB on it lies in a 2 MiB-aligned region that asks for
 * transparent huge pages (MADV_HUGEPAGE; NumPy asks for them too): a kernel built with
 * THP "madvise", as most distributions are, otherwise backs gx's arrays with 4 KiB
 * pages, and a core's stream prefetcher stops at each page.  2-core AMD EPYC VM, 2^24
 * f32 rotated through 8 arrays, medians of 40 calls in four alternated pairs (µs): sum
 * 2172 / 2163 / 1421 / 1400 -> 1945 / 1965 / 1168 / 1180, map 2x+1 into an array 4170
 * / 4573 / 2848 / 2770 -> 3958 / 3938 / 2548 / 2799.  Where the kernel has no THP,
 * madvise fails and nothing changes.
 *
 * The block itself starts a "colour" into its region: 64 bytes plus 0..15 times 1088
 * (17 cache lines), in turn.  Why: with every large array at the same offset from a 2
 * MiB boundary, the streams of a kernel that walks several arrays (and several parts
 * of each) in step all fall into one set of the L1 and L2 caches.  On the 16-core
 * Xeon host the CPU scan (four chains a thread, each reading its input and writing
 * its output) took 115-124 ms for 2^24 f32 on one thread, against 18.3 ms with the
 * blocks of glibc before the 2 MiB alignment; with the output 64 bytes / 1 KiB / 16
 * KiB off: 27.6 / 20.5 / 23.0 ms, 4 KiB off: 60.6 ms; coloured, 24.1 ms (16 threads:
 * 9.6-10.2 -> 2.1 ms).  Two colours differ by a multiple of 1088 bytes below 64 of
 * them, never a multiple of 4 KiB.  Colours alone do not settle it: a block taken back
 * from the pool keeps its colour, so an input and an output of one colour still meet
 * (the bench's table: the scan of 2^24 on 16 threads 5.5 ms), and the scan's chains
 * start apart as well (range_gen.c, cpu_chains).  The experiment knob GX_CPU_COLOURS
 * (1 to 16, read once) sets how many take turns.  The pointer to the region is kept in the 8 bytes
 * before the block (cache_give_back reads it).  The colour and the rounding up to
 * whole huge pages cost address space, and with huge pages in use part of the first
 * and last page's memory (the kernel backs a touched 2 MiB page whole). */
#define CACHE_HUGE ((size_t)2 << 20)
#define CACHE_COLOURS 16
#define CACHE_COLOUR_STEP 1088
#define CACHE_COLOUR_MAX (64 + (CACHE_COLOURS - 1) * CACHE_COLOUR_STEP)
static bool cache_coloured(size_t size) { return size >= 2 * CACHE_HUGE; }

static void *cache_fresh(size_t size)
{
    if (!cache_coloured(size))
        return aligned_alloc(64, size);
    static _Atomic unsigned turn;
    static _Atomic int colours; /* experiment knob GX_CPU_COLOURS (1: one offset for all) */
    int nc = colours;
    if (!nc)
        colours = nc = gx__knob_int("GX_CPU_COLOURS", CACHE_COLOURS, 1, CACHE_COLOURS);
    size_t colour = 64 + (size_t)(turn++ % (unsigned)nc) * CACHE_COLOUR_STEP;
    size_t sz = (size + CACHE_COLOUR_MAX + CACHE_HUGE - 1) & ~(CACHE_HUGE - 1);
    char *base = aligned_alloc(CACHE_HUGE, sz);
    if (!base)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(base, sz, MADV_HUGEPAGE);
#endif
    char *p = base + colour;
    memcpy(p - sizeof base, &base, sizeof base);
    return p;
}

/* Frees a block of cache_fresh(size). */
static void cache_give_back(void *p, size_t size)
{
    if (!cache_coloured(size)) {
        free(p);
        return;
    }
    char *base;
    memcpy(&base, (char *)p - sizeof base, sizeof base);
    free(base);
}

void cpu_cache_trim(cpu_cache *c)
{
    pthread_mutex_lock(&c->mu);
    for (int k = 0; k < CPU_CACHE_CLASSES; k++) {
        while (c->free[k]) {
            void *p = c->free[k];
            memcpy(&c->free[k], p, sizeof p);
            cache_give_back(p, cache_class_size(k));
        }
    }
    c->held -= c->cached;
    c->cached = 0;
    pthread_mutex_unlock(&c->mu);
}

void cpu_cache_destroy(cpu_cache *c)
{
    cpu_cache_trim(c);
    pthread_mutex_destroy(&c->mu);
}

void *cpu_cache_alloc(cpu_cache *c, size_t bytes)
{
    size_t size;
    int k = cache_class(bytes, &size);
    pthread_mutex_lock(&c->mu);
    void *p = k >= 0 ? c->free[k] : NULL;
    if (p) {
        memcpy(&c->free[k], p, sizeof p);
        c->cached -= size;
    }
    pthread_mutex_unlock(&c->mu);
    if (p)
        return p;
    p = cache_fresh(size);
    if (p) {
        pthread_mutex_lock(&c->mu);
        c->held += size;
        pthread_mutex_unlock(&c->mu);
    }
    return p;
}

void cpu_cache_free(cpu_cache *c, void *p, size_t bytes)
{
    if (!p)
        return;
    size_t size;
    int k = cache_class(bytes, &size);
    pthread_mutex_lock(&c->mu);
    bool keep = k >= 0 && c->cached + size <= c->cap;
    if (keep) {
        memcpy(p, &c->free[k], sizeof p);
        c->free[k] = p;
        c->cached += size;
    } else {
        c->held -= size;
    }
    pthread_mutex_unlock(&c->mu);
    if (!keep)
        cache_give_back(p, size);
}

size_t cpu_cache_held(cpu_cache *c)
{
    pthread_mutex_lock(&c->mu);
    size_t r = c->held;
    pthread_mutex_unlock(&c->mu);
    return r;
}
