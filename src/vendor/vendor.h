/* vendor.h -- what the vendor-library modules (matmul, rand, fft) share: the
 * per-context side table that holds library handles, the copy counter, dlopen. */
#ifndef GX_VENDOR_H
#define GX_VENDOR_H

#include "core/gx_internal.h"

/* Library state kept per context; created on first use, freed by
 * gx__vendor_ctx_release when the context is destroyed. */
typedef struct vendor_slot {
    gx_ctx *ctx;
    void *blas;       /* matmul.c: the cuBLAS handle (CUDA) */
    void *fft;        /* fft.c: the plan cache (CUDA) */
    struct vendor_slot *next;
} vendor_slot;

/* The context's slot, made if absent; NULL only when out of host memory. */
vendor_slot *vendor_slot_get(gx_ctx *ctx);

/* Releases what each module keeps in a slot (called with the context current). */
void vendor_blas_release(vendor_slot *s);
void vendor_fft_release(vendor_slot *s);

/* Counts a dense temporary made for a library call. */
void vendor_count_copy(void);

/* Opens the first library of `names` that loads (each tried as given, then under
 * /usr/local/cuda/lib64/).  On failure returns NULL and writes the names tried into
 * `tried`. */
void *vendor_dlopen(const char *const *names, char *tried, size_t n);

/* A dense copy of `a` in *tmp when `a` is not contiguous, else *tmp = NULL.  Counted. */
gx_status vendor_dense(const gx_array *a, gx_array **tmp);

bool vendor_is_cuda(const gx_ctx *ctx);
bool vendor_is_complex(gx_dtype t);
/* The real dtype of a complex one (c64 -> f32), or t itself. */
gx_dtype vendor_real_of(gx_dtype t);
/* "(2, 3, 4)" for messages. */
void vendor_shape_str(char *buf, size_t n, int ndim, const int64_t *shape);

/* The random-number kernel's source for one target (kind 0 uniform, 1 normal,
 * 2 integers with this range), so tests can compile the CUDA text without a GPU. */
gx_status vendor_rand_source(bool cuda, int kind, gx_dtype t, uint64_t range, gx__sbuf *out);

#endif
