/* cuda_nvtx.c -- NVTX ranges around gx operations, so Nsight Systems shows each
 * operation's name over the kernels it launched.  NVTX 3 is header-only: without a
 * profiler attached the calls cost next to nothing. */
#include "backend/cuda/cuda_priv.h"

#include <nvtx3/nvToolsExt.h>

void gx__range_push(const char *name) { nvtxRangePushA(name); }
void gx__range_pop(void) { nvtxRangePop(); }
