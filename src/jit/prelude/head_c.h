/* gx prelude (C) */
#include <stdint.h>
#include <stdbool.h>
#include <math.h>
#if defined(__GNUC__) || defined(__clang__)
#define GXF static inline __attribute__((unused)) /* clang warns on unused static inline in .c files */
#else
#define GXF static inline
#endif
#define GX_PDL_ENTER() ((void)0) /* CUDA: a programmatic launch waits here (head_cuda.h) */
/* A software prefetch 4 KB ahead of a streamed pointer, issued once per 64-byte line
 * by gx's loops over large parts (reduce_gen.h's RG_CPU_WIDE_MIN says why and what it
 * gained).  A prefetch never faults, so one past an array's end is harmless. */
#if defined(__GNUC__) || defined(__clang__)
#define GX__PF(p) __builtin_prefetch((const char *)(p) + 4096, 0, 3)
#else
#define GX__PF(p) ((void)0)
#endif
