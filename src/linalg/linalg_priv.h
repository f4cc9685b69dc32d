/* linalg_priv.h -- what the linear algebra modules (matmul, rand, fft) share: the
 * copy counter and small helpers.  The libraries themselves are the backends'
 * (the lib slots of gx__backend_iface); what runs on the host is here. */
#ifndef GX_LINALG_PRIV_H
#define GX_LINALG_PRIV_H

#include "core/gx_internal.h"

/* Counts a dense temporary made for a library call. */
void linalg_count_copy(void);

/* A dense copy of `a` in *tmp when `a` is not contiguous, else *tmp = NULL.  Counted. */
gx_status linalg_dense(const gx_array *a, gx_array **tmp);

bool linalg_is_complex(gx_dtype t);
/* The real dtype of a complex one (c64 -> f32), or t itself. */
gx_dtype linalg_real_of(gx_dtype t);
/* The random-number kernel's source for one target (kind 0 uniform, 1 normal,
 * 2 integers with this range), so tests can compile the CUDA text without a GPU. */
gx_status linalg_rand_source(bool cuda, int kind, gx_dtype t, uint64_t range, gx__sbuf *out);

#endif
