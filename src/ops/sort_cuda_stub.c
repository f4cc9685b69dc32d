/* sort_cuda_stub.c -- stands in for src/ops/sort_cuda.c (the CUDA kernels behind
 * sort_priv.h) until that file is merged; the lead deletes this stub then.  Each
 * function answers that the CUDA sort is not built, so CUDA contexts fail cleanly. */
#include "ops/sort_priv.h"

gx_status gx__sort_cuda(gx_ctx *ctx, const gx__sort_req *r)
{
    (void)ctx, (void)r;
    return gx__err(GX_ERR_UNSUPPORTED, "sort: the CUDA sort kernels (src/ops/sort_cuda.c) are not built");
}

gx_status gx__topk_cuda(gx_ctx *ctx, const gx__topk_req *r)
{
    (void)ctx, (void)r;
    return gx__err(GX_ERR_UNSUPPORTED, "gx_topk: the CUDA top-k kernels (src/ops/sort_cuda.c) are not built");
}

gx_status gx__hist_cuda(gx_ctx *ctx, const gx__hist_req *r)
{
    (void)ctx, (void)r;
    return gx__err(GX_ERR_UNSUPPORTED, "histogram: the CUDA histogram kernels (src/ops/sort_cuda.c) are not built");
}
