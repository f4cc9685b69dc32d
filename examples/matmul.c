/* matmul.c -- C = A * B three ways: naive, shared-memory tiles (the lecture's
 * TILE_WIDTH kernel), and the vendor BLAS through gx_matmul.
 *
 * The naive kernel reads 2n floats from global memory per output: 0.25 flop per byte,
 * so it is bound by memory.  A tile of TILE x TILE outputs loads each input once per
 * block into shared memory and reuses it TILE times: TILE times the arithmetic
 * intensity.  The vendor library adds register blocking, wide loads and tuned
 * pipelines on top -- the row to beat. */
#include "common.h"

/* Square n x n, row-major.  TILE comes from a compile option (-DTILE=32), so the same
 * text can be tried with other tile sizes; the launch must use TILE x TILE blocks. */
static const char *matmul_src =
    "extern \"C\" __global__ void matmul_naive(const float *a, const float *b, float *c, int n)\n"
    "{\n"
    "    int row = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "    int col = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (row >= n || col >= n)\n"
    "        return;\n"
    "    float acc = 0.0f;\n"
    "    for (int k = 0; k < n; k++)\n"
    "        acc += a[(size_t)row * n + k] * b[(size_t)k * n + col];\n"
    "    c[(size_t)row * n + col] = acc;\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void matmul_tiled(const float *a, const float *b, float *c, int n)\n"
    "{\n"
    "    __shared__ float ta[TILE][TILE], tb[TILE][TILE];\n"
    "    int tx = threadIdx.x, ty = threadIdx.y;\n"
    "    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;\n"
    "    float acc = 0.0f;\n"
    "    for (int p = 0; p < n; p += TILE) {\n"
    "        /* Each thread loads one element of each tile (0 past the edges), coalesced\n"
    "         * along rows; no thread returns early, since all must reach the barriers. */\n"
    "        ta[ty][tx] = row < n && p + tx < n ? a[(size_t)row * n + p + tx] : 0.0f;\n"
    "        tb[ty][tx] = p + ty < n && col < n ? b[(size_t)(p + ty) * n + col] : 0.0f;\n"
    "        __syncthreads();   /* both tiles complete before anyone multiplies */\n"
    "        for (int k = 0; k < TILE; k++)\n"
    "            acc += ta[ty][k] * tb[k][tx];\n"
    "        __syncthreads();   /* everyone done with the tiles before they are overwritten */\n"
    "    }\n"
    "    if (row < n && col < n)\n"
    "        c[(size_t)row * n + col] = acc;\n"
    "}\n";

enum { MM_TILE = 32, MM_SAMPLES = 256 };

/* Checks `samples` random entries of c against a double-precision dot product.
 * Float dot products of length n err by ~ sqrt(n) * eps * sum|a_ik b_kj|. */
static int64_t mm_wrong(const float *a, const float *b, const float *c, int n, uint64_t *st)
{
    int64_t bad = 0;
    for (int s = 0; s < MM_SAMPLES; s++) {
        int i = (int)(ex_next(st) % (uint64_t)n), j = (int)(ex_next(st) % (uint64_t)n);
        double want = 0, mag = 0;
        for (int k = 0; k < n; k++) {
            double p = (double)a[(size_t)i * n + k] * b[(size_t)k * n + j];
            want += p;
            mag += fabs(p);
        }
        bad += !(fabs(c[(size_t)i * n + j] - want) <= 8.0 * sqrt((double)n) * 0x1p-24 * mag);
    }
    return bad;
}

typedef struct mm {
    gx_ctx *ctx;
    int n;
    float *ha, *hb, *hc;
    gx_array *a, *b, *c;
    uint64_t seed;
} mm;

static void mm_free(mm *m)
{
    gx_array_release(m->a);
    gx_array_release(m->b);
    gx_array_release(m->c);
    free(m->ha);
    free(m->hb);
    free(m->hc);
}

static gx_status mm_setup(mm *m, gx_ctx *ctx, int n, uint64_t *seed)
{
    int64_t shape[2] = {n, n}, nn = (int64_t)n * n;
    *m = (mm){.ctx = ctx, .n = n};
    m->ha = malloc(ex_fbytes(nn));
    m->hb = malloc(ex_fbytes(nn));
    m->hc = malloc(ex_fbytes(nn));
    if (!m->ha || !m->hb || !m->hc) {
        fprintf(stderr, "  matmul: not enough host memory for n = %d\n", n);
        return GX_ERR_OUT_OF_MEMORY;
    }
    ex_fill_uniform(m->ha, nn, -1, 1, seed);
    ex_fill_uniform(m->hb, nn, -1, 1, seed);
    m->seed = ex_next(seed) | 1;
    gx_status s = gx_array_from_host(ctx, GX_F32, 2, shape, m->ha, &m->a);
    if (s == GX_OK)
        s = gx_array_from_host(ctx, GX_F32, 2, shape, m->hb, &m->b);
    if (s == GX_OK)
        s = gx_array_empty(ctx, GX_F32, 2, shape, &m->c);
    return s;
}

/* Fastest of `reps` runs of either a kernel (k != NULL) or gx_matmul_into, then the check. */
static int mm_run(mm *m, const char *name, gx_kernel *k, const gx_launch_cfg *cfg, int reps)
{
    int rc = EX_PASS;
    ex_timer t;
    double best = INFINITY;
    gx_karg args[] = {GX_KARG_ARRAY(m->a), GX_KARG_ARRAY(m->b), GX_KARG_ARRAY(m->c), GX_KARG_I32(m->n)};
    EX_TRY("events", ex_timer_make(m->ctx, &t));
    EX_TRY("fill c", gx_array_fill_f64(m->c, NAN)); /* so a kernel that skips entries shows */
    for (int r = 0; r <= reps; r++) {               /* run 0 warms up (and compiles) */
        float ms = 0;
        EX_TRY("record", gx_event_record(t.start));
        if (k)
            EX_TRY(name, gx_kernel_launch(k, cfg, 4, args));
        else
            EX_TRY(name, gx_matmul_into(m->a, m->b, NULL, m->c));
        EX_TRY("record", gx_event_record(t.stop));
        EX_TRY("elapsed", gx_event_elapsed_ms(t.start, t.stop, &ms));
        if (r > 0)
            best = fmin(best, ms);
    }
    EX_TRY("download", gx_array_to_host(m->c, m->hc, ex_fbytes((int64_t)m->n * m->n)));
    int64_t bad = mm_wrong(m->ha, m->hb, m->hc, m->n, &m->seed);
    char label[64];
    snprintf(label, sizeof label, "%s, n = %d", name, m->n);
    rc = ex_verdict(bad == 0, label, "%9.3f ms %9.1f GFLOP/s   %lld/%d sampled entries wrong", best,
                    2.0 * m->n * m->n * (double)m->n / (best * 1e6), (long long)bad, MM_SAMPLES);
out:
    ex_timer_free(&t);
    return rc;
}

/* The two hand-written kernels at size n (CUDA C; on the CPU backend too). */
static int mm_kernels(mm *m)
{
    int rc = EX_PASS;
    gx_kernel *naive = NULL, *tiled = NULL;
    const char *opt[] = {"-DTILE=32"};
    gx_kernel_opts ko = {.options = opt, .noptions = 1};
    unsigned g = (unsigned)((m->n + MM_TILE - 1) / MM_TILE);
    gx_launch_cfg cfg = {.grid = {g, g}, .block = {MM_TILE, MM_TILE}};
    EX_TRY("compile", gx_kernel_compile(m->ctx, matmul_src, "matmul_naive", &ko, &naive));
    EX_TRY("compile", gx_kernel_compile(m->ctx, matmul_src, "matmul_tiled", &ko, &tiled));
    rc |= mm_run(m, "naive kernel", naive, &cfg, 3);
    rc |= mm_run(m, "shared-memory tiles (32x32)", tiled, &cfg, 3);
out:
    gx_kernel_destroy(naive);
    gx_kernel_destroy(tiled);
    return rc;
}

/* gx_matmul_into: cuBLAS on the GPU, CBLAS on the CPU; a build without it skips the
 * row (EX_SKIP). */
static int mm_vendor(mm *m)
{
    gx_clear_error();
    gx_status s = gx_matmul_into(m->a, m->b, NULL, m->c);
    if (s == GX_ERR_UNSUPPORTED) {
        char why[512];
        snprintf(why, sizeof why, "gx_matmul: %s", gx_last_error());
        return ex_skip(why);
    }
    return s != GX_OK ? ex_fail("gx_matmul", s) : mm_run(m, "gx_matmul (vendor BLAS)", NULL, NULL, 3);
}

int example_matmul(gx_ctx *ctx, int quick)
{
    int gpu = ex_on_gpu(ctx), rc = EX_PASS;
    uint64_t seed = ex_seed();
    int n = gpu ? (quick ? 512 : 1024) : (quick ? 128 : 256);
    mm m;
    gx_status s = mm_setup(&m, ctx, n, &seed);
    if (s != GX_OK)
        rc = ex_fail("matmul setup", s);
    if (rc == EX_PASS)
        rc = mm_kernels(&m);
    /* Without a vendor library the two kernels above were still checked: the
     * vendor row is then skipped, the example passes. */
    if (rc == EX_PASS)
        rc = mm_vendor(&m);
    mm_free(&m);
    if (rc == EX_PASS && gpu && !quick) { /* large enough to show the library's peak */
        s = mm_setup(&m, ctx, 4096, &seed);
        rc = s != GX_OK ? ex_fail("matmul setup", s) : mm_vendor(&m);
        mm_free(&m);
    }
    return rc == EX_SKIP ? EX_PASS : rc;
}

#ifndef GX_TOUR
int main(int argc, char **argv) { return ex_main(argc, argv, "matmul", example_matmul); }
#endif
