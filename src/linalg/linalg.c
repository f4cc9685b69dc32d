/* linalg.c -- the per-context side table, the copy counter and library loading
 * shared by matmul.c, rand.c and fft.c. */
#include "linalg/linalg_priv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t linalg_mu = PTHREAD_MUTEX_INITIALIZER;
static linalg_slot *linalg_slots;
static atomic_uint_fast64_t linalg_copies;

linalg_slot *linalg_slot_get(gx_ctx *ctx)
{
    pthread_mutex_lock(&linalg_mu);
    linalg_slot *s = linalg_slots;
    while (s && s->ctx != ctx)
        s = s->next;
    if (!s && (s = calloc(1, sizeof *s)) != NULL) {
        s->ctx = ctx;
        s->next = linalg_slots;
        linalg_slots = s;
    }
    pthread_mutex_unlock(&linalg_mu);
    return s;
}

void gx__vendor_ctx_release(gx_ctx *ctx)
{
    pthread_mutex_lock(&linalg_mu);
    linalg_slot **pp = &linalg_slots, *s = NULL;
    while (*pp && (*pp)->ctx != ctx)
        pp = &(*pp)->next;
    if (*pp) {
        s = *pp;
        *pp = s->next;
    }
    pthread_mutex_unlock(&linalg_mu);
    if (!s)
        return;
    linalg_fft_release(s);
    linalg_blas_release(s);
    free(s);
}

void linalg_count_copy(void) { atomic_fetch_add(&linalg_copies, 1); }
uint64_t gx_vendor_copies(void) { return (uint64_t)atomic_load(&linalg_copies); }

void *linalg_dlopen(const char *const *names, char *tried, size_t n)
{
    size_t k = 0;
    tried[0] = 0;
    for (int i = 0; names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
        char path[256];
        snprintf(path, sizeof path, "/usr/local/cuda/lib64/%s", names[i]);
        if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) != NULL)
            return h;
        if (k < n)
            k += (size_t)snprintf(tried + k, n - k, "%s%s", i ? ", " : "", names[i]);
    }
    return NULL;
}

gx_status linalg_dense(const gx_array *a, gx_array **tmp)
{
    *tmp = NULL;
    if (gx__array_contiguous(a))
        return GX_OK;
    linalg_count_copy();
    return gx_array_clone(a, GX_DTYPE_COUNT, tmp);
}

bool linalg_is_cuda(const gx_ctx *ctx) { return gx__target_is_cuda(ctx); }
bool linalg_is_complex(gx_dtype t) { return t == GX_C64 || t == GX_C128; }
gx_dtype linalg_real_of(gx_dtype t) { return t == GX_C64 ? GX_F32 : t == GX_C128 ? GX_F64 : t; }

void linalg_shape_str(char *buf, size_t n, int ndim, const int64_t *shape)
{
    size_t k = (size_t)snprintf(buf, n, "(");
    for (int d = 0; d < ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, d ? ", %lld" : "%lld", (long long)shape[d]);
    if (k < n)
        snprintf(buf + k, n - k, ndim == 1 ? ",)" : ")");
}
