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
