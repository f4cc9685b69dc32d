/* cuda_runtime_interop.c -- gx inside a program that uses the CUDA runtime
 * (gx/interop.h): memory from cudaMalloc wrapped as gx arrays, gx work queued on the
 * application's own cudaStream_t, ordered both ways with the application's copies
 * without any synchronisation in between, and the runtime still working after
 * gx_ctx_destroy (gx shares the primary context and must not reset it).
 *
 * Built where CMake finds the CUDA toolkit's cudart; exits 77 (ctest: skipped)
 * without a GPU.  Run it under compute-sanitizer too:
 *   compute-sanitizer --tool memcheck build/gx_test_cuda_runtime */
#include "gx.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                    \
        }                                                                  \
    } while (0)
#define GX(call)                                                                                     \
    do {                                                                                             \
        gx_status s_ = (call);                                                                       \
        if (s_ != GX_OK) {                                                                           \
            fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, gx_status_string(s_), \
                    gx_last_error());                                                                \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)
#define RT(call)                                                                                             \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));          \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static int deleter_calls;
/* The application's deleter: its stream may still use the memory, so free in order. */
static void free_on_stream(void *user, void *ptr)
{
    deleter_calls++;
    RT(cudaStreamSynchronize((cudaStream_t)user));
    RT(cudaFree(ptr));
}

int main(void)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP cuda.runtime_interop: no CUDA device\n");
        return 77;
    }
    RT(cudaSetDevice(0));
    cudaStream_t st;
    RT(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

    gx_ctx *ctx = NULL;
    gx_status s = gx_ctx_create(&ctx, GX_BACKEND_CUDA);
    if (s == GX_ERR_NO_DEVICE) {
        printf("SKIP cuda.runtime_interop: %s\n", gx_last_error());
        return 77;
    }
    GX(s);
    gx_stream *gs = NULL;
    GX(gx_stream_wrap(ctx, (void *)st, &gs));
    void *h = NULL;
    GX(gx_stream_handle(gs, &h));
    CHECK(h == (void *)st);
    GX(gx_ctx_set_stream(ctx, gs));
    GX(gx_ctx_stream_handle(ctx, &h));
    CHECK(h == (void *)st);

    /* Large enough that a missing order would show: 4M floats. */
    const int64_t n = 1 << 22;
    float *x = NULL, *y = NULL;
    float *hx = malloc(sizeof(float) * (size_t)n), *hy = NULL;
    RT(cudaMallocHost((void **)&hy, sizeof(float) * (size_t)n)); /* async D2H below */
    for (int64_t i = 0; i < n; i++)
        hx[i] = (float)(i % 1000);
    RT(cudaMalloc((void **)&x, sizeof(float) * (size_t)n));
    RT(cudaMalloc((void **)&y, sizeof(float) * (size_t)n));

    /* Application -> gx: the upload is queued on st, gx reads x on st right after. */
    RT(cudaMemcpyAsync(x, hx, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice, st));
    gx_wrap_opts xo = {.deleter = free_on_stream, .user = st};
    gx_array *ax = NULL, *ay = NULL, *sc = NULL;
    GX(gx_array_wrap(ctx, x, GX_F32, 1, &n, NULL, &xo, &ax));
    GX(gx_array_wrap(ctx, y, GX_F32, 1, &n, NULL, NULL, &ay));
    GX(gx_map_into(ctx, "x -> x * 2.0f + 1.0f", 1, &ax, NULL, ay));

    /* gx -> application: the download is queued on st right after gx's kernel. */
    RT(cudaMemcpyAsync(hy, y, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost, st));
    RT(cudaStreamSynchronize(st));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += hy[i] != hx[i] * 2.0f + 1.0f;
    CHECK(bad == 0);

    /* Reduce and scan over the runtime's memory, a strided view included. */
    gx_scalar sum;
    GX(gx_reduce(ctx, "+", ax, NULL, &sum));
    double want = 0;
    for (int64_t i = 0; i < n; i++)
        want += hx[i];
    /* gx sums f32 in f64 and rounds once (gx/reduce.h): the f32 nearest the sum, give
     * or take the last bit where the two f64 orders round differently. */
    CHECK(fabs(sum.v.f - want) <= 0x1p-23 * fabs(want));
    int64_t m = 100001;
    gx_array *part = NULL;
    GX(gx_array_wrap(ctx, y + 7, GX_F32, 1, &m, NULL, NULL, &part)); /* off 16-byte alignment */
    GX(gx_scan(ctx, "+", part, NULL, &sc));
    double *hs = malloc(sizeof(double) * (size_t)m);
    gx_array *sc64 = NULL;
    GX(gx_array_clone(sc, GX_F64, &sc64));
    GX(gx_array_to_host(sc64, hs, sizeof(double) * (size_t)m));
    double run = 0;
    bad = 0;
    for (int64_t i = 0; i < m; i++) {
        run += hy[7 + i];
        bad += fabs(hs[i] - run) > 1e-6 * run;
    }
    CHECK(bad == 0);

    /* A host pointer is refused with a clear message. */
    gx_array *hostwrap = NULL;
    CHECK(gx_array_wrap(ctx, hx, GX_F32, 1, &n, NULL, NULL, &hostwrap) == GX_ERR_INVALID_ARGUMENT);
    CHECK(strstr(gx_last_error(), "not CUDA device memory") != NULL);

    gx_array_release(sc64);
    gx_array_release(sc);
    gx_array_release(part);
    gx_array_release(ay);
    gx_array_release(ax); /* -> free_on_stream(st, x) */
    CHECK(deleter_calls == 1);
    GX(gx_ctx_set_stream(ctx, NULL));
    GX(gx_stream_destroy(gs)); /* forgets the wrapper, st stays */
    GX(gx_ctx_destroy(ctx));

    /* The runtime still works on the primary context gx shared: y, st, new memory. */
    RT(cudaMemsetAsync(y, 0, sizeof(float), st));
    float first = -1;
    RT(cudaMemcpyAsync(&first, y, sizeof first, cudaMemcpyDeviceToHost, st));
    RT(cudaStreamSynchronize(st));
    CHECK(first == 0.0f);
    void *more = NULL;
    RT(cudaMalloc(&more, 1 << 20));
    RT(cudaFree(more));
    RT(cudaFree(y));
    RT(cudaStreamDestroy(st));
    RT(cudaFreeHost(hy));
    free(hx);
    free(hs);
    if (failures)
        fprintf(stderr, "cuda.runtime_interop: %d check(s) failed\n", failures);
    else
        printf("cuda.runtime_interop: passed\n");
    return failures ? 1 : 0;
}
