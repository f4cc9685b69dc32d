/* Loop fission of users' kernels on the CPU backend (src/backend/cpu/cpu_fission.c):
 * which kernels take it (cpu_kernel_path), and that kernels with barriers give the
 * host reference's results on it -- tiled matmul, a reduction with a barrier in a
 * loop, a barrier in a uniform if, variables live across barriers, threads that
 * return after the last barrier, and divergent barriers still reported.  The value
 * tests run on both backends (the same kernels on a GPU). */
#include "gx_test.h"
#include "backend/cpu/cpu_kernel.h"
#include <gx/kernel.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *MATMUL = "#define TILE 32\n"
                            "extern \"C\" __global__ void mm(const float *a, const float *b, float *c, int n)\n"
                            "{\n"
                            "    __shared__ float ta[TILE][TILE], tb[TILE][TILE];\n"
                            "    int tx = threadIdx.x, ty = threadIdx.y;\n"
                            "    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;\n"
                            "    float acc = 0.0f;\n"
                            "    for (int p = 0; p < n; p += TILE) {\n"
                            "        ta[ty][tx] = row < n && p + tx < n ? a[(size_t)row * n + p + tx] : 0.0f;\n"
                            "        tb[ty][tx] = p + ty < n && col < n ? b[(size_t)(p + ty) * n + col] : 0.0f;\n"
                            "        __syncthreads();\n"
                            "#pragma unroll\n"
                            "        for (int k = 0; k < TILE; k++)\n"
                            "            acc += ta[ty][k] * tb[k][tx];\n"
                            "        __syncthreads();\n"
                            "    }\n"
                            "    if (row >= n || col >= n)\n"
                            "        return; /* after the last barrier: fine */\n"
                            "    c[(size_t)row * n + col] = acc;\n"
                            "}\n";

/* examples/reduce_ladder.c's shared-memory tree: the barrier opens each level. */
static const char *LADDER = "#define BLOCK 256\n"
                            "extern \"C\" __global__ void tree(const float *a, float *out, long long n)\n"
                            "{\n"
                            "    __shared__ float s[2 * BLOCK];\n"
                            "    unsigned t = threadIdx.x;\n"
                            "    long long base = (long long)blockIdx.x * 2 * BLOCK;\n"
                            "    s[t] = base + t < n ? a[base + t] : 0.0f;\n"
                            "    s[t + BLOCK] = base + t + BLOCK < n ? a[base + t + BLOCK] : 0.0f;\n"
                            "    for (unsigned d = BLOCK; d > 0; d /= 2) {\n"
                            "        __syncthreads();\n"
                            "        if (t < d)\n"
                            "            s[t] += s[t + d];\n"
                            "    }\n"
                            "    if (t == 0)\n"
                            "        atomicAdd(out, s[0]);\n"
                            "}\n";

/* A barrier in an if that is uniform over the block, and per-thread values that
 * live across barriers: a scalar, an array, a pointer, a while loop's counter. */
static const char *LIVE = "extern \"C\" __global__ void live(const int *x, int *y, int n)\n"
                          "{\n"
                          "    __shared__ int s[128];\n"
                          "    int i = blockIdx.x * blockDim.x + threadIdx.x, v = i < n ? x[i] : 0;\n"
                          "    int w[3];\n"
                          "    const int *px = x + (i < n ? i : 0);\n"
                          "    w[0] = v, w[1] = 2 * v, w[2] = 3 * v;\n"
                          "    s[threadIdx.x] = v;\n"
                          "    __syncthreads();\n"
                          "    int r = 0;\n"
                          "    if (blockIdx.x % 2 == 0) {\n"
                          "        int nb = s[(threadIdx.x + 1) % blockDim.x];\n"
                          "        __syncthreads();\n"
                          "        s[threadIdx.x] = nb + w[1];\n"
                          "        __syncthreads();\n"
                          "        r = s[threadIdx.x];\n"
                          "    } else {\n"
                          "        r = -w[2];\n"
                          "    }\n"
                          "    int k = 0;\n"
                          "    while (k < 3) {\n"
                          "        s[threadIdx.x] = r + k;\n"
                          "        __syncthreads();\n"
                          "        r += s[blockDim.x - 1 - threadIdx.x] + w[k];\n"
                          "        __syncthreads();\n"
                          "        k++;\n"
                          "    }\n"
                          "    if (i < n)\n"
                          "        y[i] = r + (i < n ? *px : 0) + k;\n"
                          "}\n";

/* Loops between barriers (cpu_fission.c's interchange): the first `for` has a
 * block-uniform trip (k < m, m a parameter) and runs as `for (k) for (each thread)`,
 * with a thread-varying condition in its body and per-thread state carried from
 * iteration to iteration; the second's bound is threadIdx.x (not interchanged);
 * the third starts from a variable that is the same for every thread (half). */
static const char *LOOPS = "extern \"C\" __global__ void loops(const int *x, int *y, int m, int n)\n"
                           "{\n"
                           "    __shared__ int s[256];\n"
                           "    int t = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;\n"
                           "    int g = blockIdx.x * nt + t;\n"
                           "    s[t] = g < n ? x[g] : 0;\n"
                           "    int v = t;\n"
                           "    __syncthreads();\n"
                           "    int acc = 0, odd = 0;\n"
                           "    for (int k = 0; k < m; k++) {\n"
                           "        acc += s[(t + k) % nt] * (k + 1);\n"
                           "        if ((threadIdx.x + k) % 3 == 0)\n"
                           "            odd += s[k % nt];\n"
                           "        v = (v * 7 + s[k % nt]) % 1009;\n"
                           "    }\n"
                           "    int tail = 0;\n"
                           "    for (int k = 0; k < (int)threadIdx.x; k++)\n"
                           "        tail += s[k] - k;\n"
                           "    int half = m / 2 + 1, w2 = 0;\n"
                           "    for (int k = half; k > 0; k -= 2)\n"
                           "        w2 += s[(t * k) % nt];\n"
                           "    __syncthreads();\n"
                           "    s[t] = acc;\n"
                           "    __syncthreads();\n"
                           "    if (g < n)\n"
                           "        y[g] = s[nt - 1 - t] + odd * 3 + v + tail + 5 * w2;\n"
                           "}\n";

/* What `loops` writes, block by block (block bx x by threads). */
static void loops_ref(const int *x, int *y, int m, int n, int bx, int by)
{
    int nt = bx * by, nb = (n + nt - 1) / nt, s[256], acc[256];
    for (int b = 0; b < nb; b++) {
        for (int t = 0; t < nt; t++)
            s[t] = b * nt + t < n ? x[b * nt + t] : 0;
        for (int t = 0; t < nt; t++) {
            acc[t] = 0;
            for (int k = 0; k < m; k++)
                acc[t] += s[(t + k) % nt] * (k + 1);
        }
        for (int t = 0; t < nt; t++) {
            int tx = t % bx, odd = 0, v = t, tail = 0, g = b * nt + t, w2 = 0;
            for (int k = 0; k < m; k++) {
                if ((tx + k) % 3 == 0)
                    odd += s[k % nt];
                v = (v * 7 + s[k % nt]) % 1009;
            }
            for (int k = 0; k < tx; k++)
                tail += s[k] - k;
            for (int k = m / 2 + 1; k > 0; k -= 2)
                w2 += s[(t * k) % nt];
            if (g < n)
                y[g] = acc[nt - 1 - t] + odd * 3 + v + tail + 5 * w2;
        }
    }
}

/* No barrier: one thread loop; a device function reads threadIdx (so the loop
 * keeps the worker's threadIdx current), and threads past n return. */
static const char *NOBAR = "__device__ int lane(void) { return (int)threadIdx.x; }\n"
                           "extern \"C\" __global__ void nobar(int *p, int n)\n"
                           "{\n"
                           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "    if (i >= n)\n"
                           "        return;\n"
                           "    int acc = 0;\n"
                           "    for (int k = 0; k < 4; k++) /* after a return: stays in the thread loop */\n"
                           "        acc += k;\n"
                           "    p[i] = lane() * 2 + i + (int)threadIdx.x + acc;\n"
                           "}\n";

/* What `live` writes at y[i], from the kernel's definition, block by block. */
static int live_ref(const int *x, int n, int bd, int i)
{
    int b = i / bd, t = i % bd, base = b * bd, r[128], old[128], v[128];
    for (int u = 0; u < bd; u++)
        v[u] = base + u < n ? x[base + u] : 0;
    for (int u = 0; u < bd; u++)
        r[u] = b % 2 == 0 ? v[(u + 1) % bd] + 2 * v[u] : -3 * v[u];
    for (int k = 0; k < 3; k++) {
        memcpy(old, r, sizeof(int) * (size_t)bd);
        for (int u = 0; u < bd; u++)
            r[u] += old[bd - 1 - u] + k + v[u] * (k + 1);
    }
    return r[t] + v[t] + 3;
}

static char *wrap(const char *src)
{
    size_t n = strlen(GX__USER_KERNEL_MAGIC) + strlen(src) + 2;
    char *w = malloc(n);
    snprintf(w, n, "%s\n%s", GX__USER_KERNEL_MAGIC, src);
    return w;
}

static int path_of(const char *src, const char *name, char *why)
{
    char *w = wrap(src);
    int p = cpu_kernel_path(w, name, why, 160);
    free(w);
    return p;
}

GXT_TEST(kernel_fission_paths)
{
    char why[160];
    GXT_EQ_I64(path_of(MATMUL, "mm", why), 2);
    GXT_EQ_I64(path_of(LADDER, "tree", why), 2);
    GXT_EQ_I64(path_of(LIVE, "live", why), 2);
    GXT_EQ_I64(path_of("extern \"C\" __global__ void v(float *a) { a[threadIdx.x] = 1; }\n", "v", why), 0);
    /* threads that return before a barrier: the fibers, which report it */
    GXT_EQ_I64(path_of("extern \"C\" __global__ void h(int *p) { if (threadIdx.x < 16) return;\n"
                       "__syncthreads(); p[threadIdx.x] = 1; }\n",
                       "h", why),
               1);
    GXT_CHECK(strstr(why, "return before a barrier") != NULL);
    /* warp intrinsics, a barrier in a called function, other barrier forms */
    GXT_EQ_I64(path_of("extern \"C\" __global__ void w(int *p) { int v = __shfl_down_sync(~0u, 1, 1);\n"
                       "__syncthreads(); p[0] = v; }\n",
                       "w", why),
               1);
    GXT_EQ_I64(path_of("__device__ void bar() { __syncthreads(); }\n"
                       "extern \"C\" __global__ void f(int *p) { p[threadIdx.x] = 1; bar(); p[0] = 2; }\n",
                       "f", why),
               1);
    GXT_EQ_I64(path_of("extern \"C\" __global__ void c(int *p) { int n = __syncthreads_count(p[threadIdx.x]);\n"
                       "p[0] = n; }\n",
                       "c", why),
               1);
    /* the matmul's inner product runs as `for (k) for (each thread)` */
    GXT_EQ_I64(path_of(MATMUL, "mm", why), 2);
    GXT_CHECK(strstr(why, "1 loop interchanged") != NULL);
    GXT_EQ_I64(path_of(LOOPS, "loops", why), 2);
    GXT_CHECK(strstr(why, "2 loops interchanged") != NULL); /* not the one bounded by threadIdx */
    /* a barrier-free kernel: a thread loop, written by the fission generator */
    GXT_EQ_I64(path_of(NOBAR, "nobar", why), 0);
    GXT_CHECK(strstr(why, "fission's loop") != NULL);
    GXT_CHECK(strstr(why, "interchanged") == NULL); /* its loop follows a return */
    /* break out of a loop that holds a barrier: the fibers */
    GXT_EQ_I64(path_of("extern \"C\" __global__ void b(int *p) { for (int i = 0; i < 4; i++) {\n"
                       "__syncthreads(); if (p[0]) break; } }\n",
                       "b", why),
               1);
}

static void rand_f32(float *x, int64_t n, unsigned seed)
{
    srand(seed);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(rand() % 2001 - 1000) / 256.0f;
}

static void matmul_case(gx_ctx *ctx, gx_kernel *k, int n)
{
    int64_t m = (int64_t)n * n;
    float *a = malloc(sizeof(float) * (size_t)m), *b = malloc(sizeof(float) * (size_t)m),
          *c = malloc(sizeof(float) * (size_t)m);
    rand_f32(a, m, 1 + n), rand_f32(b, m, 7 + n);
    gx_array *da = NULL, *db = NULL, *dc = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &m, a, &da));
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &m, b, &db));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &m, &dc));
    gx_launch_cfg cfg = {.grid = {(unsigned)(n + 31) / 32, (unsigned)(n + 31) / 32}, .block = {32, 32}};
    gx_karg args[] = {GX_KARG_ARRAY(da), GX_KARG_ARRAY(db), GX_KARG_ARRAY(dc), GX_KARG_I32(n)};
    GXT_OK(gx_kernel_launch(k, &cfg, 4, args));
    GXT_OK(gx_array_to_host(dc, c, sizeof(float) * (size_t)m));
    int bad = 0;
    for (int i = 0; i < n && bad < 5; i++)
        for (int j = 0; j < n && bad < 5; j++) {
            double s = 0;
            for (int q = 0; q < n; q++)
                s += (double)a[(size_t)i * n + q] * b[(size_t)q * n + j];
            if (fabs(c[(size_t)i * n + j] - s) > 1e-3 * (1 + fabs(s)))
            {
                GXT_CHECK(!"matmul element differs");
                bad++;
            }
        }
    gx_array_release(da), gx_array_release(db), gx_array_release(dc);
    free(a), free(b), free(c);
}

GXT_TEST(kernel_fission_matmul)
{
    gx_ctx *ctx = gxt_ctx();
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, MATMUL, "mm", NULL, &k));
    int sizes[] = {1, 31, 32, 33, 64, 70, 97};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        matmul_case(ctx, k, sizes[i]);
    gx_kernel_destroy(k);
}

GXT_TEST(kernel_fission_reduce_ladder)
{
    gx_ctx *ctx = gxt_ctx();
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, LADDER, "tree", NULL, &k));
    int64_t sizes[] = {1, 31, 512, 513, 5000};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        int64_t n = sizes[c], one = 1;
        float *a = malloc(sizeof(float) * (size_t)n), out = 0;
        rand_f32(a, n, 3 + (unsigned)n);
        double want = 0;
        for (int64_t i = 0; i < n; i++)
            want += a[i];
        gx_array *da = NULL, *dout = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, a, &da));
        GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &one, &dout));
        gx_launch_cfg cfg = {.grid = {(unsigned)((n + 511) / 512)}, .block = {256}};
        gx_karg args[] = {GX_KARG_ARRAY(da), GX_KARG_ARRAY(dout), GX_KARG_I64(n)};
        GXT_OK(gx_kernel_launch(k, &cfg, 3, args));
        GXT_OK(gx_array_to_host(dout, &out, sizeof out));
        GXT_CHECK(fabs(out - want) <= 1e-3 * (1 + fabs(want)));
        gx_array_release(da), gx_array_release(dout);
        free(a);
    }
    gx_kernel_destroy(k);
}

GXT_TEST(kernel_fission_live_across_barriers)
{
    gx_ctx *ctx = gxt_ctx();
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, LIVE, "live", NULL, &k));
    int bds[] = {1, 33, 64, 128};
    for (size_t c = 0; c < sizeof bds / sizeof bds[0]; c++) {
        int bd = bds[c], n = 5 * bd - 3;
        int64_t nn = n;
        int *x = malloc(sizeof(int) * (size_t)n), *y = malloc(sizeof(int) * (size_t)n);
        srand(11 + bd);
        for (int i = 0; i < n; i++)
            x[i] = rand() % 1000 - 500;
        gx_array *dx = NULL, *dy = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &nn, x, &dx));
        GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &nn, &dy));
        gx_launch_cfg cfg = {.grid = {5}, .block = {(unsigned)bd}};
        gx_karg args[] = {GX_KARG_ARRAY(dx), GX_KARG_ARRAY(dy), GX_KARG_I32(n)};
        GXT_OK(gx_kernel_launch(k, &cfg, 3, args));
        GXT_OK(gx_array_to_host(dy, y, sizeof(int) * (size_t)n));
        int bad = 0;
        for (int i = 0; i < n && bad < 3; i++)
            if (y[i] != live_ref(x, n, bd, i))
            {
                GXT_EQ_I64(y[i], live_ref(x, n, bd, i));
                bad++;
            }
        gx_array_release(dx), gx_array_release(dy);
        free(x), free(y);
    }
    gx_kernel_destroy(k);
}

GXT_TEST(kernel_fission_divergent_if_is_reported)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind kind;
    GXT_OK(gx_ctx_backend(ctx, &kind));
    if (kind != GX_BACKEND_CPU) {
        gxt_skip("a GPU does not detect a barrier in divergent code (it may hang); the CPU backend reports it");
        return;
    }
    const char *src = "extern \"C\" __global__ void split(int *p)\n"
                      "{\n"
                      "    p[threadIdx.x] = 1;\n"
                      "    if (threadIdx.x < 16) {\n"
                      "        __syncthreads();\n"
                      "        p[threadIdx.x] = 2;\n"
                      "    }\n"
                      "}\n";
    char why[160];
    GXT_EQ_I64(path_of(src, "split", why), 2);
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, src, "split", NULL, &k));
    int64_t n = 64;
    gx_array *a = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &a));
    gx_launch_cfg cfg = {.grid = {2}, .block = {64}};
    gx_karg args[] = {GX_KARG_ARRAY(a)};
    GXT_STATUS(gx_kernel_launch(k, &cfg, 1, args), GX_ERR_KERNEL_FAULT);
    GXT_MSG_HAS("__syncthreads() in divergent code");
    /* a uniform launch of the same kernel (one thread short of the split) is fine */
    gx_launch_cfg small = {.grid = {1}, .block = {16}};
    GXT_OK(gx_kernel_launch(k, &small, 1, args));
    int32_t h[64];
    GXT_OK(gx_array_to_host(a, h, sizeof h));
    GXT_EQ_I64(h[15], 2);
    gx_array_release(a);
    gx_kernel_destroy(k);
}

GXT_TEST(kernel_fission_interchanged_loops)
{
    gx_ctx *ctx = gxt_ctx();
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, LOOPS, "loops", NULL, &k));
    int blocks[][2] = {{1, 1}, {32, 4}, {33, 3}, {7, 5}, {16, 16}};
    int ms[] = {0, 1, 37};
    for (size_t c = 0; c < sizeof blocks / sizeof blocks[0]; c++)
        for (size_t q = 0; q < sizeof ms / sizeof ms[0]; q++) {
            int bx = blocks[c][0], by = blocks[c][1], nt = bx * by, n = 3 * nt - (nt > 1 ? 5 : 0), m = ms[q];
            int64_t nn = n;
            int *x = malloc(sizeof(int) * (size_t)n), *y = malloc(sizeof(int) * (size_t)n),
                *want = malloc(sizeof(int) * (size_t)n);
            srand(5 + (unsigned)(nt * 41 + m));
            for (int i = 0; i < n; i++)
                x[i] = rand() % 1001 - 500;
            loops_ref(x, want, m, n, bx, by);
            gx_array *dx = NULL, *dy = NULL;
            GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &nn, x, &dx));
            GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &nn, &dy));
            gx_launch_cfg cfg = {.grid = {(unsigned)((n + nt - 1) / nt)}, .block = {(unsigned)bx, (unsigned)by}};
            gx_karg args[] = {GX_KARG_ARRAY(dx), GX_KARG_ARRAY(dy), GX_KARG_I32(m), GX_KARG_I32(n)};
            GXT_OK(gx_kernel_launch(k, &cfg, 4, args));
            GXT_OK(gx_array_to_host(dy, y, sizeof(int) * (size_t)n));
            int bad = 0;
            for (int i = 0; i < n && bad < 3; i++)
                if (y[i] != want[i]) {
                    GXT_EQ_I64(y[i], want[i]);
                    bad++;
                }
            gx_array_release(dx), gx_array_release(dy);
            free(x), free(y), free(want);
        }
    gx_kernel_destroy(k);
}

GXT_TEST(kernel_fission_barrier_free_loop)
{
    gx_ctx *ctx = gxt_ctx();
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, NOBAR, "nobar", NULL, &k));
    int cases[][2] = {{1, 1}, {31, 8}, {100, 33}, {1000, 256}}; /* n, block */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int n = cases[c][0], bd = cases[c][1], grid = (n + bd - 1) / bd;
        int64_t nn = (int64_t)grid * bd; /* past n: must stay -1 */
        int *h = malloc(sizeof(int) * (size_t)nn);
        for (int64_t i = 0; i < nn; i++)
            h[i] = -1;
        gx_array *d = NULL;
        GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &nn, h, &d));
        gx_launch_cfg cfg = {.grid = {(unsigned)grid}, .block = {(unsigned)bd}};
        gx_karg args[] = {GX_KARG_ARRAY(d), GX_KARG_I32(n)};
        GXT_OK(gx_kernel_launch(k, &cfg, 2, args));
        GXT_OK(gx_array_to_host(d, h, sizeof(int) * (size_t)nn));
        int bad = 0;
        for (int64_t i = 0; i < nn && bad < 3; i++) {
            int want = i < n ? (int)(i % bd) * 3 + (int)i + 6 : -1;
            if (h[i] != want) {
                GXT_EQ_I64(h[i], want);
                bad++;
            }
        }
        gx_array_release(d);
        free(h);
    }
    gx_kernel_destroy(k);
}
