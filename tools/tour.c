/* tour.c -- `gx tour` (make demo): a guided run through gx on the current backend.
 * Each stop checks its own answer and prints PASS or FAIL with its figures. */
#include "tools.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int tour_failures;

/* The examples' bodies (examples/NAME.c, compiled into this tool with GX_TOUR):
 * each prints its rows and returns 0 pass, 1 fail, 2 skipped. */
int example_vadd(gx_ctx *ctx, int quick);
int example_julia(gx_ctx *ctx, int quick, const char *png);
int example_reduce_ladder(gx_ctx *ctx, int quick);
int example_matmul(gx_ctx *ctx, int quick);
int example_histogram(gx_ctx *ctx, int quick);
int example_transpose(gx_ctx *ctx, int quick);
int example_streams(gx_ctx *ctx, int quick);
int example_coop_reduce(gx_ctx *ctx, int quick);
int example_child_launch(gx_ctx *ctx, int quick);
int example_first_main(void); /* examples/first.c, through tour_first.c */

/* Stop 0: the README's first program, as a user builds it (its own context). */
static void tour_first(void)
{
    printf("== 0. your first program (examples/first.c, shown in full in the README)\n");
    fflush(stdout);
    int rc = example_first_main();
    printf("  [%s] %-34s %s\n", rc == 0 ? "PASS" : "FAIL", "first program", "exit status 0");
    if (rc != 0)
        tour_failures++;
}

int gx_tool_fail(const char *what, gx_status s)
{
    if (s == GX_OK)
        return 0;
    fprintf(stderr, "%s: %s: %s\n", what, gx_status_string(s), gx_last_error());
    return 1;
}

#define TRY(what, expr)             \
    do {                            \
        gx_status s_ = (expr);      \
        if (s_ != GX_OK) {          \
            gx_tool_fail(what, s_); \
            tour_failures++;        \
            goto out;               \
        }                           \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void verdict(const char *name, int ok, const char *figures)
{
    printf("  [%s] %-34s %s\n", ok ? "PASS" : "FAIL", name, figures);
    if (!ok)
        tour_failures++;
}

/* Stop 1: the device. */
static void tour_device(gx_ctx *ctx)
{
    gx_backend_kind k;
    gx_device_info d;
    if (gx_ctx_backend(ctx, &k) != GX_OK || gx_device_info_get(ctx, &d) != GX_OK)
        return;
    printf("== 1. the device\n  backend %s: %s", gx_backend_name(k), d.name);
    if (k == GX_BACKEND_CUDA)
        printf(" (sm_%d%d, %d SMs, %.1f GiB, %.0f MiB L2)\n", d.cc_major, d.cc_minor, d.multiprocessors,
               (double)d.mem_total / (1u << 30), (double)d.l2_bytes / (1u << 20));
    else
        printf(" (%d cores)\n", d.multiprocessors);
}

/* Stop 2: arrays, views, copies -- and the bandwidth of each kind of copy. */
static void tour_arrays(gx_ctx *ctx)
{
    printf("== 2. arrays and copies\n");
    const int64_t n = 1 << 26; /* 256 MiB of f32 */
    float *host = malloc((size_t)n * sizeof(float)), *back = malloc((size_t)n * sizeof(float));
    gx_array *a = NULL, *b = NULL, *v = NULL;
    if (!host || !back)
        goto out;
    for (int64_t i = 0; i < n; i++)
        host[i] = (float)(i % 1000) * 0.5f;
    memset(back, 0, (size_t)n * sizeof(float)); /* fault the pages in before timing */
    double t0 = now_s();
    TRY("from_host", gx_array_from_host(ctx, GX_F32, 1, &n, host, &a));
    TRY("sync", gx_sync(ctx));
    double h2d = now_s() - t0;
    TRY("similar", gx_array_similar(a, &b));
    TRY("copy", gx_array_copy_into(a, b)); /* warm-up */
    TRY("sync", gx_sync(ctx));
    t0 = now_s();
    for (int r = 0; r < 5; r++)
        TRY("copy", gx_array_copy_into(a, b));
    TRY("sync", gx_sync(ctx));
    double d2d = (now_s() - t0) / 5;
    t0 = now_s();
    TRY("to_host", gx_array_to_host(b, back, (size_t)n * sizeof(float)));
    double d2h = now_s() - t0;
    verdict("round trip host->device->host", memcmp(host, back, (size_t)n * sizeof(float)) == 0, "");
    double bytes = (double)n * sizeof(float);
    printf("  host->device   %8.1f GB/s\n  device->host   %8.1f GB/s\n  device->device %8.1f GB/s (read + write)\n",
           bytes / h2d / 1e9, bytes / d2h / 1e9, 2 * bytes / d2d / 1e9);
    gx_device_info d;
    if (gx_device_info_get(ctx, &d) == GX_OK && d.mem_bandwidth_gbs > 0)
        printf("  the device's memory can do about %.0f GB/s (theoretical)\n", d.mem_bandwidth_gbs);
    /* A strided view writes through to its parent. */
    gx_slice every_other = {0, GX_END, 2};
    TRY("view", gx_array_view(b, &every_other, &v));
    TRY("fill", gx_array_fill_f64(v, -1.0));
    TRY("to_host", gx_array_to_host(b, back, (size_t)n * sizeof(float)));
    verdict("strided view writes through", back[0] == -1.0f && back[1] == host[1] && back[2] == -1.0f, "");
out:
    gx_array_release(v);
    gx_array_release(b);
    gx_array_release(a);
    free(host);
    free(back);
}

/* Stop 3: a lambda, fused into one kernel. */
static void tour_map(gx_ctx *ctx)
{
    printf("== 3. map: x -> sin(x)*sin(x) + cos(x)*cos(x), one fused kernel\n");
    const int64_t n = 1 << 20;
    gx_array *x = NULL, *y = NULL;
    float *out = malloc((size_t)n * sizeof(float));
    if (!out)
        goto out;
    TRY("iota", gx_array_iota(ctx, GX_F32, n, 0, 0.001, &x));
    double t0 = now_s();
    TRY("map", gx_map(ctx, "x -> sin(x)*sin(x) + cos(x)*cos(x)", 1, &x, NULL, &y));
    TRY("to_host", gx_array_to_host(y, out, (size_t)n * sizeof(float)));
    double first = now_s() - t0;
    double worst = 0;
    for (int64_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(out[i] - 1.0));
    char fig[128];
    snprintf(fig, sizeof fig, "max |y - 1| = %.2e, first call %.1f ms (compile or cache)", worst, first * 1e3);
    verdict("sin^2 + cos^2 == 1", worst < 1e-5, fig);
out:
    gx_array_release(x);
    gx_array_release(y);
    free(out);
}

/* Where the Julia set goes by default: next to the gx binary (the build folder for
 * `make demo`), else the current folder. */
static void tour_png_path(char *buf, size_t cap)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = NULL;
    if (n > 0) {
        exe[n] = 0;
        slash = strrchr(exe, '/');
    }
    if (slash) {
        *slash = 0;
        snprintf(buf, cap, "%s/julia.png", exe);
    } else {
        snprintf(buf, cap, "julia.png");
    }
}

/* An example's verdict counts towards the tour's; a skip is not a failure. */
static void tour_count(int rc)
{
    if (rc == 1)
        tour_failures++;
}

/* Stops 4..12: the seeds' examples, on either backend (users' CUDA C kernels run
 * on the CPU backend too).  Stops 11 and 12 use what the CPU's subset leaves out
 * (grid-wide sync, device-side launches): there they say so and skip. */
static void tour_examples(gx_ctx *ctx, int quick, const char *png)
{
    printf("== 4. vadd: your own kernel, launched as the occupancy API suggests\n");
    tour_count(example_vadd(ctx, quick));
    printf("== 5. the Julia set: a plain C function mapped over every pixel\n");
    tour_count(example_julia(ctx, quick, png));
    printf("== 6. the reduction ladder: one sum, seven ways\n");
    tour_count(example_reduce_ladder(ctx, quick));
    printf("== 7. matrix multiply: naive, shared-memory tiles, vendor BLAS\n");
    tour_count(example_matmul(ctx, quick));
    printf("== 8. histogram: global atomics vs bins in shared memory\n");
    tour_count(example_histogram(ctx, quick));
    printf("== 9. transpose: shared-memory tiles, the notebook's race fixed\n");
    tour_count(example_transpose(ctx, quick));
    printf("== 10. streams: copies overlapped with compute\n");
    tour_count(example_streams(ctx, quick));
    printf("== 11. cooperative groups: a grid-synchronised sum in one launch\n");
    tour_count(example_coop_reduce(ctx, quick));
    printf("== 12. child launches: a quicksort kernel that launches itself\n");
    tour_count(example_child_launch(ctx, quick));
}

/* `gx tour --help`; png is where the Julia set goes by default. */
static int tour_usage(const char *png)
{
    printf("usage: gx tour [--quick] [--png PATH]\n"
           "A guided run through gx on the current backend: each stop runs a piece of gx\n"
           "(arrays, a fused map, the examples), checks its own answer and prints PASS or\n"
           "FAIL with its figures.  On the CPU backend stops 11 and 12 (grid sync, kernels\n"
           "that launch kernels) are outside its CUDA C subset: they say so and skip.\n"
           "Exit status 0 when every stop passes, 1 when one fails.\n"
           "options:\n"
           "  --quick      smaller problems, for a fast check\n"
           "  --png PATH   where the Julia set picture goes (default %s)\n"
           "  -h, --help   this text\n"
           "example: GX_BACKEND=cpu gx tour --quick\n",
           png);
    return 0;
}

int gx_tool_tour(int argc, char **argv)
{
    int quick = 0;
    char png[4200];
    tour_png_path(png, sizeof png);
    for (int i = 1; i < argc; i++) {
        if (gx_tool_wants_help(argv[i]))
            return tour_usage(png);
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--png") == 0 && i + 1 < argc)
            snprintf(png, sizeof png, "%s", argv[++i]);
        else
            return gx_tool_bad_option("tour", argv[i]);
    }
    gx_ctx *ctx = NULL;
    gx_status s = gx_ctx_create(&ctx, GX_BACKEND_AUTO);
    if (s != GX_OK)
        return gx_tool_fail("gx tour: creating a context", s);
    int ngpu = 0;
    gx_cuda_device_count(&ngpu);
    if (ngpu == 0)
        printf("(no GPU answers on this machine: the tour runs on the CPU backend, your CUDA C kernels "
               "included; stops 11 and 12 need the CUDA backend)\n");
    tour_first();
    tour_device(ctx);
    tour_arrays(ctx);
    tour_map(ctx);
    tour_examples(ctx, quick, png);
    gx_ctx_destroy(ctx);
    printf("tour: %s\n", tour_failures ? "FAIL" : "PASS");
    return tour_failures ? 1 : 0;
}
