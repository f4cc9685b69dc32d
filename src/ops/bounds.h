/* bounds.h -- device-side bounds flags: how gathers, scatters and arrays read inside
 * lambdas report an index out of range without crashing or writing out of bounds.
 *
 * A bounds flag: 4 int64 words in device memory, on the context's stream:
 *   [0] first (smallest) offending work position, INT64_MAX when none (kernels atomicMin it)
 *   [1] the offending index value, [2] the extent it was checked against, [3] a tag
 *       (which axis / which bound array), written by the thread whose atomicMin lowered [0]
 *       (old > pos).  Words 1-3 can be racy on the GPU when two threads offend at once:
 *       callers that can recompute the index at position [0] from an index array on the
 *       host do so (exact); others say "position P" exactly and the rest as reported.
 * Generated code gets the flag's address as a kernel argument (CUDA: atomicMin on
 * (long long *); C: __atomic builtins).  A check that fails never performs the access
 * it guards.  The flag is per-context scratch, reused: caller holds the context lock
 * from begin to end, and one flag is live at a time per context. */
#ifndef GX_BOUNDS_H
#define GX_BOUNDS_H

#include "core/gx_internal.h"

/* zeroed/initialised flag word (per-context scratch, reused; no allocation per call once warm) */
gx_status gx__oob_begin(gx_ctx *ctx, void **flag);
/* waits, reads the 4 words back; out[0]==INT64_MAX: no error */
gx_status gx__oob_end(gx_ctx *ctx, void *flag, int64_t out[4]);

#endif
