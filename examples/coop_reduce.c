/* coop_reduce.c -- a whole-array sum in ONE launch with cooperative groups.
 *
 * Shows: #include <cooperative_groups.h> (the CUDA toolkit's headers are found at
 * run time), this_grid().sync() as a barrier across every block, and the
 * cooperative launch (.cooperative = 1) that makes it legal: the grid is sized to
 * what fits on the device at once (gx_kernel_active_blocks x multiprocessors). */
#include "common.h"

static const char *coop_src =
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "extern \"C\" __global__ void coop_sum(const float *x, float *part, double *out, int64_t n)\n"
    "{\n"
    "    cg::grid_group g = cg::this_grid();\n"
    "    cg::thread_block b = cg::this_thread_block();\n"
    "    __shared__ float s[256];\n"
    "    float v = 0;\n"
    "    for (int64_t i = g.thread_rank(); i < n; i += g.size())  /* grid-stride */\n"
    "        v += x[i];\n"
    "    s[b.thread_rank()] = v;\n"
    "    b.sync();\n"
    "    for (unsigned o = b.size() / 2; o > 0; o >>= 1) {\n"
    "        if (b.thread_rank() < o) s[b.thread_rank()] += s[b.thread_rank() + o];\n"
    "        b.sync();\n"
    "    }\n"
    "    if (b.thread_rank() == 0) part[blockIdx.x] = s[0];\n"
    "    g.sync();   /* every block's partial sum is written */\n"
    "    if (g.thread_rank() == 0) {\n"
    "        double t = 0;\n"
    "        for (unsigned k = 0; k < gridDim.x; k++) t += part[k];\n"
    "        *out = t;\n"
    "    }\n"
    "}\n";

int example_coop_reduce(gx_ctx *ctx, int quick)
{
    if (!ex_on_gpu(ctx))
        return ex_skip("coop_reduce: cooperative kernels need the CUDA backend (this context is on the CPU)");
    const int64_t n = quick ? 1000003 : 50000017;
    int rc = EX_PASS;
    uint64_t seed = ex_seed();
    float *h = malloc(ex_fbytes(n));
    gx_array *x = NULL, *part = NULL, *out = NULL;
    gx_kernel *k = NULL;
    if (!h)
        return ex_skip("coop_reduce: not enough host memory");
    ex_fill_uniform(h, n, -1, 1, &seed);
    double want = 0;
    for (int64_t i = 0; i < n; i++)
        want += h[i];
    EX_TRY("upload x", gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
    EX_TRY("compile coop_sum", gx_kernel_compile(ctx, coop_src, "coop_sum", NULL, &k));
    int per_sm = 0;
    EX_TRY("occupancy", gx_kernel_active_blocks(k, 256, 0, &per_sm));
    gx_device_info di;
    EX_TRY("device info", gx_device_info_get(ctx, &di));
    int64_t grid = (int64_t)per_sm * di.multiprocessors, one = 1;
    EX_TRY("partials", gx_array_zeros(ctx, GX_F32, 1, &grid, &part));
    EX_TRY("result", gx_array_zeros(ctx, GX_F64, 1, &one, &out));
    gx_launch_cfg cfg = {.grid = {(unsigned)grid}, .block = {256}, .cooperative = 1};
    gx_karg args[] = {GX_KARG_ARRAY(x), GX_KARG_ARRAY(part), GX_KARG_ARRAY(out), GX_KARG_I64(n)};
    EX_TRY("launch", gx_kernel_launch(k, &cfg, 4, args));
    double got = 0;
    EX_TRY("download", gx_array_to_host(out, &got, sizeof got));
    double err = fabs(got - want), tol = 1e-5 * (double)n;
    printf("  one cooperative launch of %lld blocks x 256 threads (%d per multiprocessor)\n", (long long)grid, per_sm);
    rc |= ex_verdict(err <= tol, "grid-synchronised sum", "n = %lld, gpu %.6f, host %.6f, |diff| %.2e", (long long)n,
                     got, want, err);
out:
    gx_kernel_destroy(k);
    gx_array_release(x);
    gx_array_release(part);
    gx_array_release(out);
    free(h);
    return rc;
}

#ifndef GX_TOUR
int main(int argc, char **argv) { return ex_main(argc, argv, "coop_reduce", example_coop_reduce); }
#endif
