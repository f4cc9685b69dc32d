/* histogram.c -- 256-bin histogram of 8-bit "pixels" with atomics (the lecture's example).
 *
 * Global atomics: every pixel does atomicAdd on one of 256 global counters, so
 * thousands of threads queue on the same few addresses.
 * Privatised: each block counts into its own 256 bins in shared memory (atomics
 * there are cheap and contended only within the block), then adds its bins to the
 * global ones: 256 global atomics per block instead of one per pixel. */
#include "common.h"

static const char *hist_src =
    "#include <gx/device.h>\n"
    "extern \"C\" __global__ void hist_global(const uint8_t *pix, int64_t n, unsigned *bins)\n"
    "{\n"
    "    GX_FOR_EACH(i, n)\n"
    "        atomicAdd(&bins[pix[i]], 1u);\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void hist_shared(const uint8_t *pix, int64_t n, unsigned *bins)\n"
    "{\n"
    "    __shared__ unsigned local[256];\n"
    "    for (int b = threadIdx.x; b < 256; b += blockDim.x)\n"
    "        local[b] = 0;\n"
    "    __syncthreads();   /* all bins zeroed before anyone counts */\n"
    "    GX_FOR_EACH(i, n)\n"
    "        atomicAdd(&local[pix[i]], 1u);\n"
    "    __syncthreads();   /* all pixels counted before the merge reads the bins */\n"
    "    for (int b = threadIdx.x; b < 256; b += blockDim.x)\n"
    "        if (local[b])\n"
    "            atomicAdd(&bins[b], local[b]);\n"
    "}\n";

/* Runs one kernel (fastest of several, bins zeroed each time) and compares with `want`. */
static int hist_run(gx_ctx *ctx, gx_kernel *k, const char *name, gx_array *pix, int64_t n, gx_array *bins,
                    const uint32_t *want)
{
    int rc = EX_PASS;
    ex_timer t;
    double best = INFINITY;
    uint32_t got[256];
    gx_launch_cfg cfg;
    unsigned fill = 1;
    /* Grid-stride loop: the occupancy API's block, just enough blocks to fill the GPU. */
    EX_TRY("suggest", gx_kernel_suggest(k, n, 0, &cfg, &fill));
    cfg.grid[0] = fill;
    gx_karg args[] = {GX_KARG_ARRAY(pix), GX_KARG_I64(n), GX_KARG_ARRAY(bins)};
    EX_TRY("events", ex_timer_make(ctx, &t));
    for (int r = 0; r < 5; r++) {
        float ms = 0;
        EX_TRY("zero bins", gx_array_fill_f64(bins, 0));
        EX_TRY("record", gx_event_record(t.start));
        EX_TRY(name, gx_kernel_launch(k, &cfg, 3, args));
        EX_TRY("record", gx_event_record(t.stop));
        EX_TRY("elapsed", gx_event_elapsed_ms(t.start, t.stop, &ms));
        best = fmin(best, ms);
    }
    EX_TRY("download", gx_array_to_host(bins, got, sizeof got));
    int wrong = 0;
    for (int b = 0; b < 256; b++)
        wrong += got[b] != want[b];
    rc = ex_verdict(wrong == 0, name, "%8.3f ms %8.1f GB/s   %d/256 bins differ from the host's", best,
                    (double)n / (best * 1e6), wrong);
out:
    ex_timer_free(&t);
    return rc;
}

int example_histogram(gx_ctx *ctx, int quick)
{
    const int64_t n = quick ? (1 << 22) + 7 : (1 << 26) + 7;
    int rc = EX_PASS;
    uint64_t seed = ex_seed();
    uint8_t *h = malloc((size_t)n);
    uint32_t want[256] = {0};
    gx_array *pix = NULL, *bins = NULL;
    gx_kernel *kg = NULL, *ks = NULL;
    const int64_t nbins = 256;
    if (!h)
        return ex_skip("histogram: not enough host memory");
    /* A photo-like distribution, not uniform: the mean of two bytes (a triangle peaked
     * at 128), so some bins are hot -- where contention hurts. */
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = ex_next(&seed);
        h[i] = (uint8_t)(((r & 0xff) + ((r >> 8) & 0xff)) / 2);
        want[h[i]]++;
    }
    EX_TRY("upload", gx_array_from_host(ctx, GX_U8, 1, &n, h, &pix));
    EX_TRY("bins", gx_array_empty(ctx, GX_U32, 1, &nbins, &bins));
    EX_TRY("compile", gx_kernel_compile(ctx, hist_src, "hist_global", NULL, &kg));
    EX_TRY("compile", gx_kernel_compile(ctx, hist_src, "hist_shared", NULL, &ks));
    printf("  n = %lld pixels (%.0f MiB)\n", (long long)n, (double)n / (1 << 20));
    rc |= hist_run(ctx, kg, "global atomics", pix, n, bins, want);
    rc |= hist_run(ctx, ks, "shared-memory bins + global merge", pix, n, bins, want);
out:
    gx_kernel_destroy(kg);
    gx_kernel_destroy(ks);
    gx_array_release(pix);
    gx_array_release(bins);
    free(h);
    return rc;
}

#ifndef GX_TOUR
int main(int argc, char **argv) { return ex_main(argc, argv, "histogram", example_histogram); }
#endif
