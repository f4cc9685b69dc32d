/* kernel_peers.c -- users' CUDA C kernels on the CPU backend beside the same
 * algorithm written as plain C with OpenMP (issue 24, item 4):
 *
 *   vadd       c[i] = a[i] + b[i], one thread per element, GB/s beside a parallel memcpy
 *   histogram  examples/histogram.c's shared-memory kernel (per-block bins, merged
 *              with atomics) beside OpenMP with per-thread bins merged with atomics
 *   matmul     examples/matmul.c's 32x32 tiled kernel beside OpenMP over the same
 *              tiles (each thread copies two tiles, multiplies, accumulates)
 *
 * Built by CMake as gx_kernel_peers when the compiler has OpenMP; run with
 * GX_BACKEND=cpu (the default).  Prints one line per case: gx time, OpenMP time,
 * their ratio; each gx result is checked against the OpenMP one. */
#include <gx.h>
#include <gx/kernel.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(x)                                                                                                    \
    do {                                                                                                          \
        gx_status s_ = (x);                                                                                       \
        if (s_ != GX_OK) {                                                                                        \
            fprintf(stderr, "%s: %s\n", #x, gx_last_error());                                                     \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)

static const char *src =
    "extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, long long n)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "extern \"C\" __global__ void hist_shared(const uint8_t *pix, int64_t n, unsigned *bins)\n"
    "{\n"
    "    __shared__ unsigned local[256];\n"
    "    for (int b = threadIdx.x; b < 256; b += blockDim.x)\n"
    "        local[b] = 0;\n"
    "    __syncthreads();\n"
    "    GX_FOR_EACH(i, n)\n"
    "        atomicAdd(&local[pix[i]], 1u);\n"
    "    __syncthreads();\n"
    "    for (int b = threadIdx.x; b < 256; b += blockDim.x)\n"
    "        if (local[b])\n"
    "            atomicAdd(&bins[b], local[b]);\n"
    "}\n"
    "#define TILE 32\n"
    "extern \"C\" __global__ void matmul_tiled(const float *a, const float *b, float *c, int n)\n"
    "{\n"
    "    __shared__ float ta[TILE][TILE], tb[TILE][TILE];\n"
    "    int tx = threadIdx.x, ty = threadIdx.y;\n"
    "    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;\n"
    "    float acc = 0.0f;\n"
    "    for (int p = 0; p < n; p += TILE) {\n"
    "        ta[ty][tx] = row < n && p + tx < n ? a[(size_t)row * n + p + tx] : 0.0f;\n"
    "        tb[ty][tx] = p + ty < n && col < n ? b[(size_t)(p + ty) * n + col] : 0.0f;\n"
    "        __syncthreads();\n"
    "        for (int k = 0; k < TILE; k++)\n"
    "            acc += ta[ty][k] * tb[k][tx];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (row < n && col < n)\n"
    "        c[(size_t)row * n + col] = acc;\n"
    "}\n";

typedef void (*run_fn)(void *);

/* Best of reps wall-clock runs, in seconds (gx launches are synchronous on the CPU;
 * gx_sync is called anyway). */
static double best_of(run_fn f, void *p, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime();
        f(p);
        double t = omp_get_wtime() - t0;
        if (t < best)
            best = t;
    }
    return best;
}

typedef struct job {
    gx_ctx *ctx;
    gx_kernel *k;
    gx_launch_cfg cfg;
    int nargs;
    gx_karg args[4];
    float *a, *b, *c;
    uint8_t *pix;
    unsigned *bins;
    int64_t n;
} job;

static void run_gx(void *p)
{
    job *j = p;
    TRY(gx_kernel_launch(j->k, &j->cfg, j->nargs, j->args));
    TRY(gx_sync(j->ctx));
}

static void omp_copy(void *p)
{
    job *j = p;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t lo = j->n * t / nt, hi = j->n * (t + 1) / nt;
        memcpy(j->c + lo, j->a + lo, (size_t)(hi - lo) * sizeof(float));
    }
}

static void omp_vadd(void *p)
{
    job *j = p;
    const float *a = j->a, *b = j->b;
    float *c = j->c;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < j->n; i++)
        c[i] = a[i] + b[i];
}

static void omp_hist(void *p)
{
    job *j = p;
    memset(j->bins, 0, 256 * sizeof(unsigned));
#pragma omp parallel
    {
        unsigned local[256] = {0};
#pragma omp for schedule(static)
        for (int64_t i = 0; i < j->n; i++)
            local[j->pix[i]]++;
        for (int b = 0; b < 256; b++)
            if (local[b])
#pragma omp atomic
                j->bins[b] += local[b];
    }
}

enum { T = 32 };
static void omp_matmul(void *p)
{
    job *j = p;
    int n = (int)j->n, nb = (n + T - 1) / T;
#pragma omp parallel for schedule(static)
    for (int blk = 0; blk < nb * nb; blk++) {
        int by = blk / nb, bx = blk % nb;
        float ta[T][T], tb[T][T], acc[T][T] = {{0}};
        for (int q = 0; q < n; q += T) {
            for (int ty = 0; ty < T; ty++)
                for (int tx = 0; tx < T; tx++) {
                    int row = by * T + ty, col = bx * T + tx;
                    ta[ty][tx] = row < n && q + tx < n ? j->a[(size_t)row * n + q + tx] : 0.0f;
                    tb[ty][tx] = q + ty < n && col < n ? j->b[(size_t)(q + ty) * n + col] : 0.0f;
                }
            for (int ty = 0; ty < T; ty++)
                for (int k = 0; k < T; k++)
                    for (int tx = 0; tx < T; tx++)
                        acc[ty][tx] += ta[ty][k] * tb[k][tx];
        }
        for (int ty = 0; ty < T; ty++)
            for (int tx = 0; tx < T; tx++) {
                int row = by * T + ty, col = bx * T + tx;
                if (row < n && col < n)
                    j->c[(size_t)row * n + col] = acc[ty][tx];
            }
    }
}

static void fill(float *x, int64_t n, unsigned seed)
{
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    }
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 25;
    int mm = argc > 2 ? atoi(argv[2]) : 512, reps = 7;
    while (mm > 1 && (int64_t)mm * mm > n) /* the matmul reuses the vadd arrays */
        mm /= 2;
    gx_ctx *ctx;
    TRY(gx_ctx_create(&ctx, GX_BACKEND_CPU));
    gx_kernel *kv, *kh, *km;
    TRY(gx_kernel_compile(ctx, src, "vadd", NULL, &kv));
    TRY(gx_kernel_compile(ctx, src, "hist_shared", NULL, &kh));
    TRY(gx_kernel_compile(ctx, src, "matmul_tiled", NULL, &km));
    printf("threads: OpenMP %d\n", omp_get_max_threads());

    /* vadd */
    gx_array *A, *B, *C;
    TRY(gx_array_empty(ctx, GX_F32, 1, &n, &A));
    TRY(gx_array_empty(ctx, GX_F32, 1, &n, &B));
    TRY(gx_array_empty(ctx, GX_F32, 1, &n, &C));
    job j = {.ctx = ctx, .n = n};
    TRY(gx_array_device_ptr(A, (void **)&j.a));
    TRY(gx_array_device_ptr(B, (void **)&j.b));
    TRY(gx_array_device_ptr(C, (void **)&j.c));
    fill(j.a, n, 1), fill(j.b, n, 2);
    double tcopy = best_of(omp_copy, &j, reps);
    double tomp = best_of(omp_vadd, &j, reps);
    j.k = kv, j.nargs = 4;
    j.cfg = (gx_launch_cfg){.grid = {(unsigned)((n + 255) / 256), 1, 1}, .block = {256, 1, 1}};
    j.args[0] = GX_KARG_ARRAY(A), j.args[1] = GX_KARG_ARRAY(B), j.args[2] = GX_KARG_ARRAY(C);
    j.args[3] = GX_KARG_I64(n);
    memset(j.c, 0, (size_t)n * 4);
    double tgx = best_of(run_gx, &j, reps);
    for (int64_t i = 0; i < n; i += 9973)
        if (j.c[i] != j.a[i] + j.b[i])
            return fprintf(stderr, "vadd wrong at %lld\n", (long long)i), 1;
    double cb = 8.0 * n / tcopy / 1e9, vb = 12.0 * n / tgx / 1e9, ob = 12.0 * n / tomp / 1e9;
    printf("vadd      n=%lld  memcpy %.2f GB/s  gx %.2f GB/s (%.0f%% of copy)  omp %.2f GB/s  gx/omp time %.2fx\n",
           (long long)n, cb, vb, 100 * vb / cb, ob, tgx / tomp);

    /* histogram over the first n bytes of a */
    j.pix = (uint8_t *)j.a;
    unsigned want[256], got[256];
    double thomp = best_of(omp_hist, &(job){.pix = j.pix, .bins = want, .n = n}, reps);
    unsigned *gb;
    gx_array *bins;
    int64_t nb = 256;
    TRY(gx_array_empty(ctx, GX_U32, 1, &nb, &bins));
    TRY(gx_array_device_ptr(bins, (void **)&gb));
    unsigned fillb = 1;
    TRY(gx_kernel_suggest(kh, n, 0, &j.cfg, &fillb));
    j.cfg.grid[0] = fillb; /* grid-stride, as examples/histogram.c launches it */
    j.k = kh, j.nargs = 3;
    j.args[0] = GX_KARG_PTR(j.pix), j.args[1] = GX_KARG_I64(n), j.args[2] = GX_KARG_ARRAY(bins);
    double thgx = 1e30;
    for (int r = 0; r < reps; r++) {
        memset(gb, 0, sizeof got);
        double t0 = omp_get_wtime();
        run_gx(&j);
        double t = omp_get_wtime() - t0;
        thgx = t < thgx ? t : thgx;
    }
    if (memcmp(gb, want, sizeof want))
        return fprintf(stderr, "histogram differs\n"), 1;
    printf("histogram n=%lld  gx %.3f ms (grid %u x %u)  omp %.3f ms  gx/omp %.2fx\n", (long long)n, thgx * 1e3,
           j.cfg.grid[0], j.cfg.block[0], thomp * 1e3, thgx / thomp);

    /* tiled matmul mm x mm */
    int64_t m2 = (int64_t)mm * mm;
    float *ref = malloc((size_t)m2 * 4);
    job jm = {.ctx = ctx, .a = j.a, .b = j.b, .c = ref, .n = mm};
    double tmomp = best_of(omp_matmul, &jm, 3);
    jm.c = j.c, jm.k = km, jm.nargs = 4;
    jm.cfg = (gx_launch_cfg){.grid = {(unsigned)((mm + 31) / 32), (unsigned)((mm + 31) / 32), 1}, .block = {32, 32, 1}};
    jm.args[0] = GX_KARG_ARRAY(A), jm.args[1] = GX_KARG_ARRAY(B), jm.args[2] = GX_KARG_ARRAY(C);
    jm.args[3] = GX_KARG_I32(mm);
    double tmgx = best_of(run_gx, &jm, 3);
    for (int64_t i = 0; i < m2; i++)
        if (fabsf(ref[i] - j.c[i]) > 1e-3f * (1 + fabsf(ref[i])))
            return fprintf(stderr, "matmul differs at %lld\n", (long long)i), 1;
    printf("matmul    n=%d  gx %.2f ms (%.2f GFLOP/s)  omp %.2f ms (%.2f GFLOP/s)  gx/omp %.2fx\n", mm, tmgx * 1e3,
           2.0 * mm * m2 / tmgx / 1e9, tmomp * 1e3, 2.0 * mm * m2 / tmomp / 1e9, tmgx / tmomp);
    free(ref);
    gx_kernel_destroy(kv), gx_kernel_destroy(kh), gx_kernel_destroy(km);
    gx_array_release(A), gx_array_release(B), gx_array_release(C), gx_array_release(bins);
    gx_ctx_destroy(ctx);
    return 0;
}
