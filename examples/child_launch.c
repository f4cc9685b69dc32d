/* child_launch.c -- dynamic parallelism: a quicksort whose kernel launches itself.
 *
 * Shows: a kernel that launches kernels (`qsort_k<<<1, 1, 0, stream>>>` in device
 * code).  gx sees the "<<<", compiles the source as relocatable code and links it
 * with the CUDA device runtime (nvJitLink + libcudadevrt.a).  Each partition is
 * sorted by a child launched into cudaStreamFireAndForget (CUDA 12+: no device-side
 * cudaDeviceSynchronize any more; a grid completes only when all its children
 * have), short ranges by insertion sort.  Checked against qsort on the host. */
#include "common.h"

static const char *qsort_src =
    "extern \"C\" __global__ void qsort_k(int *a, int lo, int hi, int depth)\n"
    "{\n"
    "    if (hi - lo < 32 || depth >= 16) {          /* small, or deep enough: insertion sort */\n"
    "        for (int i = lo + 1; i <= hi; i++) {\n"
    "            int v = a[i], j = i - 1;\n"
    "            while (j >= lo && a[j] > v) { a[j + 1] = a[j]; j--; }\n"
    "            a[j + 1] = v;\n"
    "        }\n"
    "        return;\n"
    "    }\n"
    "    int p = a[lo + (hi - lo) / 2], i = lo, j = hi;\n"
    "    while (i <= j) {\n"
    "        while (a[i] < p) i++;\n"
    "        while (a[j] > p) j--;\n"
    "        if (i <= j) { int t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }\n"
    "    }\n"
    "    if (lo < j) qsort_k<<<1, 1, 0, cudaStreamFireAndForget>>>(a, lo, j, depth + 1);\n"
    "    if (i < hi) qsort_k<<<1, 1, 0, cudaStreamFireAndForget>>>(a, i, hi, depth + 1);\n"
    "}\n";

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

int example_child_launch(gx_ctx *ctx, int quick)
{
    if (!ex_on_gpu(ctx))
        return ex_skip("child_launch: kernels that launch kernels need the CUDA backend (this context is on the CPU)");
    const int64_t n = quick ? 1000 : 4099;
    int rc = EX_PASS;
    uint64_t seed = ex_seed();
    int *h = malloc((size_t)n * sizeof *h), *want = malloc((size_t)n * sizeof *h);
    gx_array *a = NULL;
    gx_kernel *k = NULL;
    if (!h || !want) {
        rc = ex_skip("child_launch: not enough host memory");
        goto out;
    }
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        h[i] = (int)(seed >> 40) % 5000 - 2500; /* with repeats */
        want[i] = h[i];
    }
    qsort(want, (size_t)n, sizeof *want, cmp_int);
    EX_TRY("upload", gx_array_from_host(ctx, GX_I32, 1, &n, h, &a));
    gx_status s = gx_kernel_compile(ctx, qsort_src, "qsort_k", NULL, &k);
    if (s == GX_ERR_UNSUPPORTED) { /* no nvJitLink or no libcudadevrt.a on this machine */
        rc = ex_skip(gx_last_error());
        goto out;
    }
    EX_TRY("compile qsort_k (relocatable, linked with the device runtime)", s);
    gx_launch_cfg cfg = {.grid = {1}, .block = {1}};
    gx_karg args[] = {GX_KARG_ARRAY(a), GX_KARG_I32(0), GX_KARG_I32((int)n - 1), GX_KARG_I32(0)};
    EX_TRY("launch", gx_kernel_launch(k, &cfg, 4, args));
    EX_TRY("download", gx_array_to_host(a, h, (size_t)n * sizeof *h));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += h[i] != want[i];
    rc |= ex_verdict(bad == 0, "recursive quicksort on the GPU", "n = %lld, %lld out of place vs qsort", (long long)n,
                     (long long)bad);
out:
    gx_kernel_destroy(k);
    gx_array_release(a);
    free(h);
    free(want);
    return rc;
}

#ifndef GX_TOUR
int main(int argc, char **argv) { return ex_main(argc, argv, "child_launch", example_child_launch); }
#endif
