/* sort_cuda.h -- what sort_cuda.c shows besides the seam (sort_priv.h): the generated
 * CUDA units, so a test can compile every one of them with NVRTC on a machine
 * without a GPU (tests/test_sort_cuda.c). */
#ifndef GX_OPS_SORT_CUDA_H
#define GX_OPS_SORT_CUDA_H

#include "ops/sort_priv.h"

/* The CUDA unit of one sort family (key dtype, direction, value bytes 0/1/2/4/8/16)
 * as compiled at run time: every sort, top-k and fix-up kernel of that family.
 * *out is malloc'ed (the caller frees it). */
gx_status gx__sort_cuda_source(gx_dtype kdtype, int desc, int vbytes, char **out);
/* The short-row unit for rows padded to np (a power of 2, at most 2048), likewise. */
gx_status gx__sort_cuda_rows_source(gx_dtype kdtype, int desc, int vbytes, int np, char **out);
/* The CUDA unit of a histogram request (r is checked as gx__hist_cuda checks it;
 * its pointers are not read). */
gx_status gx__hist_cuda_source(const gx__hist_req *r, char **out);

#endif
