/* cuda_fft.c -- lib.fft on the CUDA backend: cuFFT, loaded on first use, with the
 * plans of each context cached by type and shape (a plan costs far more than a
 * transform) and bound to the context's current stream. */
#include "backend/cuda/cuda_priv.h"

#include <cufft.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUFFT_FUNCS(X)                     \
    X(Create, cufftCreate)                 \
    X(Destroy, cufftDestroy)               \
    X(MakePlanMany64, cufftMakePlanMany64) \
    X(SetStream, cufftSetStream)           \
    X(ExecC2C, cufftExecC2C)               \
    X(ExecZ2Z, cufftExecZ2Z)               \
    X(ExecR2C, cufftExecR2C)               \
    X(ExecD2Z, cufftExecD2Z)               \
    X(ExecC2R, cufftExecC2R)               \
    X(ExecZ2D, cufftExecZ2D)

#define FFT_FIELD(f, sym) __typeof__(&sym) f;
static struct {
    CUFFT_FUNCS(FFT_FIELD)
} cufft;
#undef FFT_FIELD

#define FFT_SYM(f, sym) {CUDA_STR(sym), &cufft.f, 1},
static const cuda_dl_sym fft_syms[] = {CUFFT_FUNCS(FFT_SYM)};
#undef FFT_SYM

static cuda_dl_lib fft_lib = {
    .what = "cuFFT",
    .names = cuda_cufft_names,
    .toolkit_dirs = true,
    .syms = fft_syms,
    .nsyms = sizeof fft_syms / sizeof fft_syms[0],
    .fix_absent = "install the CUDA toolkit's libcufft or add its folder to LD_LIBRARY_PATH",
    .fix_old = "install a newer CUDA toolkit",
};

static pthread_once_t fft_once = PTHREAD_ONCE_INIT;
static void fft_load(void) { cuda_dl_open(&fft_lib); }

typedef struct fft_plan {
    cufftType type;
    int rank;
    long long dims[3], batch;
    cufftHandle h;
    struct fft_plan *next;
} fft_plan;

/* At gx_ctx_destroy, after the context's streams are gone: each plan is bound to
 * the default stream again before it is destroyed. */
static void fft_release(gx_ctx *ctx, void *state)
{
    CUstream stream;
    bool current = fft_lib.ok && cuda_current(&ctx->be, &stream, NULL) == GX_OK;
    for (fft_plan *p = state, *n; p; p = n) {
        n = p->next;
        if (current) {
            cufft.SetStream(p->h, (cudaStream_t)stream);
            cufft.Destroy(p->h);
        }
        free(p);
    }
}

static const gx__ctx_ext fft_ext = {"cufft", fft_release};

static gx_status fft_err(cufftResult r, const char *what)
{
    gx_status g = r == CUFFT_ALLOC_FAILED                               ? GX_ERR_OUT_OF_MEMORY
                  : r == CUFFT_INVALID_SIZE || r == CUFFT_NOT_SUPPORTED ? GX_ERR_UNSUPPORTED
                                                                        : GX_ERR_BACKEND;
    return gx__err(g, "gx_fft: %s failed: cufftResult %d", what, (int)r);
}

static fft_plan *fft_find(fft_plan *p, cufftType type, const gx__fft *f)
{
    while (p && !(p->type == type && p->rank == f->rank && p->batch == f->batch &&
                  !memcmp(p->dims, f->dims, sizeof(long long) * (size_t)f->rank)))
        p = p->next;
    return p;
}

/* A new plan, put at the head of the context's list. */
static gx_status fft_make(gx__backend *be, cufftType type, const gx__fft *f, fft_plan **out)
{
    fft_plan *p = calloc(1, sizeof *p);
    if (!p)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_fft: out of host memory");
    cufftResult r = cufft.Create(&p->h);
    size_t ws = 0;
    if (r == CUFFT_SUCCESS)
        r = cufft.MakePlanMany64(p->h, f->rank, (long long *)f->dims, NULL, 1, 0, NULL, 1, 0, type, f->batch, &ws);
    if (r != CUFFT_SUCCESS) {
        free(p);
        return fft_err(r, "cufftMakePlanMany64");
    }
    p->type = type, p->rank = f->rank, p->batch = f->batch;
    memcpy(p->dims, f->dims, sizeof(long long) * (size_t)f->rank);
    p->next = gx__ctx_ext_get(be->ctx, &fft_ext);
    gx_status s = gx__ctx_ext_set(be->ctx, &fft_ext, p);
    if (s != GX_OK) {
        cufft.Destroy(p->h);
        free(p);
        return s;
    }
    *out = p;
    return GX_OK;
}

static gx_status fft_plan_get(gx__backend *be, cufftType type, const gx__fft *f, cufftHandle *out)
{
    pthread_once(&fft_once, fft_load);
    if (!fft_lib.ok)
        return gx__err(GX_ERR_UNSUPPORTED, "gx_fft: %s", fft_lib.problem);
    CUstream stream;
    GX__CHECK(cuda_current(be, &stream, NULL));
    fft_plan *p = fft_find(gx__ctx_ext_get(be->ctx, &fft_ext), type, f);
    if (!p)
        GX__CHECK(fft_make(be, type, f, &p));
    cufftResult r = cufft.SetStream(p->h, (cudaStream_t)stream);
    if (r != CUFFT_SUCCESS)
        return fft_err(r, "cufftSetStream");
    *out = p->h;
    return GX_OK;
}

static cufftType fft_type(const gx__fft *f)
{
    switch (f->kind) {
    case GX__FFT_C2C: return f->dbl ? CUFFT_Z2Z : CUFFT_C2C;
    case GX__FFT_R2C: return f->dbl ? CUFFT_D2Z : CUFFT_R2C;
    default: return f->dbl ? CUFFT_Z2D : CUFFT_C2R;
    }
}

gx_status cuda_fft(gx__backend *be, const gx__fft *f)
{
    cufftType t = fft_type(f);
    cufftHandle h = 0;
    GX__CHECK(fft_plan_get(be, t, f, &h));
    void *i = (void *)f->in, *o = f->out;
    int dir = f->inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
    cufftResult r;
    switch (t) {
    case CUFFT_C2C: r = cufft.ExecC2C(h, i, o, dir); break;
    case CUFFT_Z2Z: r = cufft.ExecZ2Z(h, i, o, dir); break;
    case CUFFT_R2C: r = cufft.ExecR2C(h, i, o); break;
    case CUFFT_D2Z: r = cufft.ExecD2Z(h, i, o); break;
    case CUFFT_C2R: r = cufft.ExecC2R(h, i, o); break;
    default: r = cufft.ExecZ2D(h, i, o); break;
    }
    return r == CUFFT_SUCCESS ? GX_OK : fft_err(r, "cufftExec");
}
