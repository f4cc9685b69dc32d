/* bounds.h -- device-side bounds flags (gx issue 19, item 6), shared by the gathers
 * and scatters (index.c) and by arrays read inside lambdas (bind.c).
 *
 * A bounds flag: 4 int64 words in device memory, on the context's stream:
 *   [0] first (smallest) offending work position, INT64_MAX when none (kernels atomicMin it)
 *   [1] the offending index value, [2] the extent it was checked against, [3] a tag
 *       (which axis / which bound array), written by the thread whose atomicMin lowered [0]
 *       (old > pos).  Words 1-3 can be racy on the GPU when two threads offend at once:
 *       callers that can recompute the index at position [0] from an index array on the
 *       host do so (exact); others say "position P" exactly and the rest as reported.
 * A check that fails never performs the out-of-range access. */
#ifndef GX_OPS_BOUNDS_H
#define GX_OPS_BOUNDS_H

#include "core/gx_internal.h"

/* A flag initialised to "no error" (per-context scratch, reused: no allocation per
 * call once warm).  Caller holds the context lock and calls gx__oob_end before the
 * next gx__oob_begin. */
gx_status gx__oob_begin(gx_ctx *ctx, void **flag);
/* Waits for the context's work, reads the 4 words back into out and leaves the flag
 * initialised for the next call; out[0] == INT64_MAX: no error. */
gx_status gx__oob_end(gx_ctx *ctx, void *flag, int64_t out[4]);

#endif
