/* memory.h -- gx's own device buffers, counted apart from arrays.
 *
 * Reduction partials and counters, scan look-back status and the like live as long
 * as the context (or one call) and belong to no array.  They go through the same
 * pool and limit as arrays, but are counted in gx_memory_stats.scratch, not in_use:
 * in_use answers "what do my arrays hold", and must read 0 once they are released. */
#ifndef GX_CORE_MEMORY_H
#define GX_CORE_MEMORY_H

#include "core/gx_internal.h"

/* As gx__mem_alloc / gx__mem_free (the limit, the trim-and-retry, the out-of-memory
 * message), but counted as scratch.  Caller holds the context lock. */
gx_status gx__scratch_alloc(gx_ctx *ctx, size_t bytes, void **ptr);
void gx__scratch_free(gx_ctx *ctx, void *ptr, size_t bytes);

#endif
