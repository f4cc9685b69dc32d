/* cuda_blas.c -- lib.gemm on the CUDA backend: cuBLAS, loaded on first use, one
 * handle per context bound to the context's current stream.
 *
 * gx describes the product row-major (src/linalg/matmul.c); cuBLAS is column-major,
 * so gx computes C^T = op(B)^T op(A)^T by swapping the operands. */
#include "backend/cuda/cuda_priv.h"

#include <cublas_v2.h>
#include <stdio.h>
#include <string.h>

#define CUBLAS_FUNCS(X)                                    \
    X(Create, cublasCreate, 1)                             \
    X(Destroy, cublasDestroy, 1)                           \
    X(SetStream, cublasSetStream, 1)                       \
    X(GemmEx, cublasGemmEx, 1)                             \
    X(GemmStridedBatchedEx, cublasGemmStridedBatchedEx, 1) \
    X(GetStatusString, cublasGetStatusString, 0)

#define BLAS_FIELD(f, sym, req) __typeof__(&sym) f;
static struct {
    CUBLAS_FUNCS(BLAS_FIELD)
} cublas;
#undef BLAS_FIELD

#define BLAS_SYM(f, sym, req) {CUDA_STR(sym), &cublas.f, req},
static const cuda_dl_sym blas_syms[] = {CUBLAS_FUNCS(BLAS_SYM)};
#undef BLAS_SYM

static cuda_dl_lib blas_lib = {
    .what = "cuBLAS",
    .names = cuda_cublas_names,
    .toolkit_dirs = true,
    .syms = blas_syms,
    .nsyms = sizeof blas_syms / sizeof blas_syms[0],
    .fix_absent = "install the CUDA toolkit's libcublas or add its folder to LD_LIBRARY_PATH",
    .fix_old = "install a newer CUDA toolkit",
};

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static void blas_load(void) { cuda_dl_open(&blas_lib); }

static gx_status blas_err(cublasStatus_t st, const char *what)
{
    const char *s = cublas.GetStatusString ? cublas.GetStatusString(st) : "";
    gx_status g = st == CUBLAS_STATUS_ALLOC_FAILED                                         ? GX_ERR_OUT_OF_MEMORY
                  : st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH ? GX_ERR_UNSUPPORTED
                                                                                           : GX_ERR_BACKEND;
    return gx__err(g, "gx_matmul: %s failed: cuBLAS status %d %s", what, (int)st, s);
}

/* At gx_ctx_destroy, after the context's streams are gone: the handle is bound
 * to the default stream again before it is destroyed. */
static void blas_release(gx_ctx *ctx, void *state)
{
    CUstream stream;
    if (!blas_lib.ok || cuda_current(&ctx->be, &stream, NULL) != GX_OK)
        return;
    cublas.SetStream(state, (cudaStream_t)stream);
    cublas.Destroy(state);
}

static const gx__ctx_ext blas_ext = {"cublas", blas_release};

/* The context's handle (made on first use), bound to its current stream. */
static gx_status blas_handle(gx__backend *be, cublasHandle_t *out)
{
    pthread_once(&blas_once, blas_load);
    if (!blas_lib.ok)
        return gx__err(GX_ERR_UNSUPPORTED, "gx_matmul: %s", blas_lib.problem);
    CUstream stream;
    GX__CHECK(cuda_current(be, &stream, NULL));
    cublasHandle_t h = gx__ctx_ext_get(be->ctx, &blas_ext);
    if (!h) {
        cublasStatus_t st = cublas.Create(&h);
        if (st != CUBLAS_STATUS_SUCCESS)
            return blas_err(st, "cublasCreate");
        gx_status s = gx__ctx_ext_set(be->ctx, &blas_ext, h);
        if (s != GX_OK) {
            cublas.Destroy(h);
            return s;
        }
    }
    cublasStatus_t st = cublas.SetStream(h, (cudaStream_t)stream);
    if (st != CUBLAS_STATUS_SUCCESS)
        return blas_err(st, "cublasSetStream");
    *out = h;
    return GX_OK;
}

static cublasOperation_t blas_op(gx_op op)
{
    return op == GX_OP_N ? CUBLAS_OP_N : op == GX_OP_T ? CUBLAS_OP_T : CUBLAS_OP_C;
}

static cudaDataType blas_dtype(gx_dtype t)
{
    switch (t) {
    case GX_F32: return CUDA_R_32F;
    case GX_F64: return CUDA_R_64F;
    case GX_C64: return CUDA_C_32F;
    case GX_F16: return CUDA_R_16F;   /* 2 */
    case GX_BF16: return CUDA_R_16BF; /* 14 */
    default: return CUDA_C_64F;
    }
}

/* The compute type, and alpha / beta in its precision (host memory, the default
 * pointer mode).  Half inputs: CUBLAS_COMPUTE_32F (f32 accumulation on the tensor
 * cores, float alpha / beta), whatever g->math says. */
static cublasComputeType_t blas_compute(const gx__gemm *g, double *al, double *be)
{
    bool wide = g->dtype == GX_F64 || g->dtype == GX_C128;
    cublasComputeType_t ct = wide ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
    if (g->dtype == GX_F32 && g->math == GX_MATH_TF32)
        ct = CUBLAS_COMPUTE_32F_FAST_TF32;
    else if (g->dtype == GX_F32 && g->math == GX_MATH_BF16)
        ct = CUBLAS_COMPUTE_32F_FAST_16BF;
    if (wide) {
        memcpy(al, g->alpha, 16);
        memcpy(be, g->beta, 16);
    } else {
        float fa[2] = {(float)g->alpha[0], (float)g->alpha[1]}, fb[2] = {(float)g->beta[0], (float)g->beta[1]};
        memcpy(al, fa, 8);
        memcpy(be, fb, 8);
    }
    return ct;
}

gx_status cuda_gemm(gx__backend *be, const gx__gemm *g)
{
    cublasHandle_t h = NULL;
    GX__CHECK(blas_handle(be, &h));
    double al[2], bt[2];
    cublasComputeType_t ct = blas_compute(g, al, bt);
    cudaDataType dt = blas_dtype(g->dtype), dc = blas_dtype(g->c_dtype);
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T. */
    cublasOperation_t ta = blas_op(g->op_b), tb = blas_op(g->op_a);
    cublasStatus_t st;
    if (g->batch == 1)
        st = cublas.GemmEx(h, ta, tb, g->n, g->m, g->k, al, g->b, dt, g->ldb, g->a, dt, g->lda, bt, g->c, dc, g->ldc,
                           ct, CUBLAS_GEMM_DEFAULT);
    else
        st = cublas.GemmStridedBatchedEx(h, ta, tb, g->n, g->m, g->k, al, g->b, dt, g->ldb, g->stride_b, g->a, dt,
                                         g->lda, g->stride_a, bt, g->c, dc, g->ldc, g->stride_c, g->batch, ct,
                                         CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS)
        return blas_err(st, g->batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx");
    return GX_OK;
}
