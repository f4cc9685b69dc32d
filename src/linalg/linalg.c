/* linalg.c -- the copy counter and the helpers that matmul.c, rand.c and fft.c share. */
#include "linalg/linalg_priv.h"

static atomic_uint_fast64_t linalg_copies;

void linalg_count_copy(void) { atomic_fetch_add(&linalg_copies, 1); }
uint64_t gx_vendor_copies(void) { return (uint64_t)atomic_load(&linalg_copies); }

gx_status linalg_dense(const gx_array *a, gx_array **tmp)
{
    *tmp = NULL;
    if (gx__array_contiguous(a))
        return GX_OK;
    linalg_count_copy();
    return gx_array_clone(a, GX_DTYPE_DEFAULT, tmp);
}

bool linalg_is_complex(gx_dtype t) { return t == GX_C64 || t == GX_C128; }
gx_dtype linalg_real_of(gx_dtype t) { return t == GX_C64 ? GX_F32 : t == GX_C128 ? GX_F64 : t; }
