/* cpu_cache.h -- the CPU backend's memory pool (cpu_cache.c): freed blocks are kept,
 * by size class, for the next allocation of that class.
 *
 * Why: a large block from the system (glibc mmaps them) comes back with no pages, so
 * every first touch is a page fault; an operation into a new 64 MiB array took 7.1 ms
 * where the same one into an existing array took 2.2 ms (16-core host, f32 cumsum of
 * 2^24).  Reusing the block that an earlier result released costs no faults.  Part of
 * the CPU backend.
 *
 * Small blocks (a small call's result, a pipeline's scratch) are kept too: glibc's
 * aligned_alloc of a few KiB took its slow memalign path with malloc_consolidate and
 * was 23% of a warm gx_filter of 1024 f32 (2-core VM, perf, GX_CPU_THREADS=1: the
 * result array and the scratch, ~0.5 us a call); a cached block is a pop under the
 * mutex.  With the pipeline scratch cleared in place (range_run.c): warm gx_filter
 * 2.29 -> 1.92 us (2-core VM, one thread, fastest of 7 x 2000 calls). */
#ifndef GX_CPU_CACHE_H
#define GX_CPU_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* Size classes: one per 64 bytes up to CPU_CACHE_SMALL, then eight a power of two (a
 * block is at most 1/8 larger than asked for) up to 2^(CPU_CACHE_MAXLOG) bytes;
 * larger blocks are not kept. */
#define CPU_CACHE_SMALL ((size_t)1 << 10)
#define CPU_CACHE_NSMALL 16
#define CPU_CACHE_MAXLOG 48
#define CPU_CACHE_CLASSES (CPU_CACHE_NSMALL + (CPU_CACHE_MAXLOG - 10) * 8)

typedef struct cpu_cache {
    pthread_mutex_t mu;
    void *free[CPU_CACHE_CLASSES]; /* each list links blocks through their first bytes */
    size_t cached;                 /* bytes in the lists */
    size_t held;                   /* bytes taken from the system and not given back */
    size_t cap;                    /* the most `cached` may reach */
} cpu_cache;

/* An empty cache that keeps at most `cap` bytes of freed blocks. */
void cpu_cache_init(cpu_cache *c, size_t cap);
/* Gives every cached block back to the system (the cache stays usable). */
void cpu_cache_trim(cpu_cache *c);
/* trim, then the mutex. */
void cpu_cache_destroy(cpu_cache *c);
/* Bytes taken from the system and not given back: live blocks and cached ones. */
size_t cpu_cache_held(cpu_cache *c);
/* A 64-byte aligned block (whole cache lines, the widest vector loads) of at least `bytes` (> 0): a cached one of its class, or a
 * new one; NULL when the system has none. */
void *cpu_cache_alloc(cpu_cache *c, size_t bytes);
/* Gives back a block of cpu_cache_alloc(c, bytes): kept for reuse, or freed when it
 * is too small or large to keep or the cache is full. */
void cpu_cache_free(cpu_cache *c, void *p, size_t bytes);

#endif
