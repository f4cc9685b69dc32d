/* linalg_priv.h -- what the linear algebra modules (matmul, rand, fft) share: the
 * per-context side table that holds library handles, the copy counter, dlopen. */
#ifndef GX_LINALG_PRIV_H
#define GX_LINALG_PRIV_H

#include "core/gx_internal.h"

/* Library state kept per context; created on first use, freed by
 * gx__vendor_ctx_release when the context is destroyed. */
typedef struct linalg_slot {
    gx_ctx *ctx;
    void *blas;       /* matmul.c: the cuBLAS handle (CUDA) */
    void *fft;        /* fft.c: the plan cache (CUDA) */
    struct linalg_slot *next;
} linalg_slot;

/* The context's slot, made if absent; NULL only when out of host memory. */
linalg_slot *linalg_slot_get(gx_ctx *ctx);

/* Releases what each module keeps in a slot (called with the context current). */
void linalg_blas_release(linalg_slot *s);
void linalg_fft_release(linalg_slot *s);

/* Counts a dense temporary made for a library call. */
void linalg_count_copy(void);

/* Opens the first library of `names` that loads (each tried as given, then under
 * /usr/local/cuda/lib64/).  On failure returns NULL and writes the names tried into
 * `tried`. */
void *linalg_dlopen(const char *const *names, char *tried, size_t n);

/* A dense copy of `a` in *tmp when `a` is not contiguous, else *tmp = NULL.  Counted. */
gx_status linalg_dense(const gx_array *a, gx_array **tmp);

bool linalg_is_cuda(const gx_ctx *ctx);
bool linalg_is_complex(gx_dtype t);
/* The real dtype of a complex one (c64 -> f32), or t itself. */
gx_dtype linalg_real_of(gx_dtype t);
/* "(2, 3, 4)" for messages. */
void linalg_shape_str(char *buf, size_t n, int ndim, const int64_t *shape);

/* The random-number kernel's source for one target (kind 0 uniform, 1 normal,
 * 2 integers with this range), so tests can compile the CUDA text without a GPU. */
gx_status linalg_rand_source(bool cuda, int kind, gx_dtype t, uint64_t range, gx__sbuf *out);

#endif
