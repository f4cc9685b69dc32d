/* vadd.c -- the first kernel: c = a + b, written by hand in CUDA C.
 *
 * Shows: compiling a kernel from a string, letting the occupancy API pick the block
 * size (gx_kernel_suggest), checking the answer, and the classic first mistake from
 * the CUDA.jl workshop -- one block as large as the array -- with the message gx
 * gives instead of the driver's bare "invalid argument". */
#include "common.h"

/* One thread per element.  The index is 64-bit (arrays may exceed 2^31 elements)
 * and the bounds check matters: the grid is rounded up to whole blocks, so the
 * last block has threads past the end. */
static const char *vadd_src = "#include <gx/device.h>\n"
                              "extern \"C\" __global__ void vadd(float *c, const float *a, const float *b, int64_t n)\n"
                              "{\n"
                              "    int64_t i = gx_global_id();   /* blockIdx.x * blockDim.x + threadIdx.x */\n"
                              "    if (i < n)\n"
                              "        c[i] = a[i] + b[i];\n"
                              "}\n";

/* Counts elements of c that differ from a + b (float addition is exact IEEE on both sides). */
static int64_t vadd_wrong(const float *a, const float *b, const float *c, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += c[i] != a[i] + b[i];
    return bad;
}

/* The notebook's mistake: threads = length(a) in ONE block.  A block has at most
 * 1024 threads (they share one multiprocessor), so the launch must be refused, and
 * the message should name the limit. */
static int vadd_too_many_threads(gx_kernel *k, gx_array *c, gx_array *a, gx_array *b)
{
    const int64_t n = 100000;
    gx_launch_cfg bad = {.grid = {1}, .block = {(unsigned)n}};
    gx_karg args[] = {GX_KARG_ARRAY(c), GX_KARG_ARRAY(a), GX_KARG_ARRAY(b), GX_KARG_I64(n)};
    gx_clear_error();
    gx_status s = gx_kernel_launch(k, &bad, 4, args);
    int named = strstr(gx_last_error(), "threads per block") != NULL;
    printf("  launching 100000 threads in one block -> %s:\n    %s\n", gx_status_string(s), gx_last_error());
    return ex_verdict(s == GX_ERR_LAUNCH && named, "a too-large block is refused",
                      "(the fix: blocks of <= 1024 threads, grid = ceil(n / block))");
}

int example_vadd(gx_ctx *ctx, int quick)
{
    const int64_t n = quick ? (1 << 20) + 3 : (1 << 26) + 3; /* odd: the last block is partial */
    int rc = EX_PASS;
    uint64_t seed = ex_seed();
    float *ha = malloc(ex_fbytes(n)), *hb = malloc(ex_fbytes(n)), *hc = malloc(ex_fbytes(n));
    gx_array *a = NULL, *b = NULL, *c = NULL;
    gx_kernel *k = NULL;
    ex_timer t = {0};
    if (!ha || !hb || !hc) {
        rc = ex_skip("vadd: not enough host memory");
        goto out;
    }
    ex_fill_uniform(ha, n, -1, 1, &seed);
    ex_fill_uniform(hb, n, -1, 1, &seed);
    EX_TRY("upload a", gx_array_from_host(ctx, GX_F32, 1, &n, ha, &a));
    EX_TRY("upload b", gx_array_from_host(ctx, GX_F32, 1, &n, hb, &b));
    EX_TRY("allocate c", gx_array_empty(ctx, GX_F32, 1, &n, &c));
    EX_TRY("compile vadd", gx_kernel_compile(ctx, vadd_src, "vadd", NULL, &k));

    /* The occupancy API picks the block size that keeps the most threads resident;
     * the grid is then just enough blocks to cover n. */
    gx_launch_cfg cfg;
    EX_TRY("suggest", gx_kernel_suggest(k, n, 0, &cfg, NULL));
    gx_kernel_attrs at;
    EX_TRY("attrs", gx_kernel_attrs_get(k, &at));
    printf("  vadd: %d registers/thread; suggested launch: %u blocks x %u threads\n", at.registers, cfg.grid[0],
           cfg.block[0]);
    gx_karg args[] = {GX_KARG_ARRAY(c), GX_KARG_ARRAY(a), GX_KARG_ARRAY(b), GX_KARG_I64(n)};
    EX_TRY("launch", gx_kernel_launch(k, &cfg, 4, args)); /* warm-up */
    EX_TRY("events", ex_timer_make(ctx, &t));
    const int reps = 10;
    EX_TRY("record", gx_event_record(t.start));
    for (int r = 0; r < reps; r++)
        EX_TRY("launch", gx_kernel_launch(k, &cfg, 4, args));
    EX_TRY("record", gx_event_record(t.stop));
    float ms = 0;
    EX_TRY("elapsed", gx_event_elapsed_ms(t.start, t.stop, &ms));
    EX_TRY("download c", gx_array_to_host(c, hc, ex_fbytes(n)));
    double us = ms * 1e3 / reps;
    int64_t bad = vadd_wrong(ha, hb, hc, n);
    rc |= ex_verdict(bad == 0, "vadd, suggested launch", "n = %lld, %lld wrong, %.1f us, %.0f GB/s", (long long)n,
                     (long long)bad, us, 3.0 * (double)ex_fbytes(n) / (us * 1e3));

    rc |= vadd_too_many_threads(k, c, a, b);
out:
    ex_timer_free(&t);
    gx_kernel_destroy(k);
    gx_array_release(a);
    gx_array_release(b);
    gx_array_release(c);
    free(ha);
    free(hb);
    free(hc);
    return rc;
}

#ifndef GX_TOUR
int main(int argc, char **argv) { return ex_main(argc, argv, "vadd", example_vadd); }
#endif
