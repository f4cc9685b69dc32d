/* sort_cpu.h -- the CPU paths of sorting (src/ops/sort_cpu.c), called by sort.c on
 * contexts with GX__CAP_HOST.  Same requests and contract as sort_priv.h's CUDA
 * functions (contiguous host buffers that never overlap), so sort.c dispatches one
 * request to either. */
#ifndef GX_OPS_SORT_CPU_H
#define GX_OPS_SORT_CPU_H

#include "ops/sort_priv.h"

gx_status sc_sort(gx_ctx *ctx, const gx__sort_req *r);
gx_status sc_topk(gx_ctx *ctx, const gx__topk_req *r);
gx_status sc_hist(gx_ctx *ctx, const gx__hist_req *r);

#endif
