#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* test_repro.c -- "bitwise reproducible run to run on one device" (gx/reduce.h)
 * checked across processes, not just within one: this process computes reductions,
 * scans, maps, a compaction and a pipeline over fixed-seed gx_rand data, then runs
 * itself again (exec'ed: a fresh process, its own context, its own thread pool and
 * kernel loading) to compute the same, and every result must match bit for bit.
 * Results travel as text: a scalar's bits in hex, an array's dtype, size and a
 * 64-bit FNV-1a hash of its bytes. */
#include "gx_test.h"

#include <sys/wait.h>
#include <unistd.h>

static uint64_t rp_fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static gx_status rp_scalar(FILE *f, const char *name, gx_scalar s)
{
    uint64_t bits = 0;
    memcpy(&bits, &s.v, sizeof bits); /* f, i or u: the 8 bytes of the value */
    fprintf(f, "%s %s %016llx\n", name, gx_dtype_name(s.dtype), (unsigned long long)bits);
    return GX_OK;
}

static gx_status rp_array(FILE *f, const char *name, gx_array *a)
{
    gx_array_desc d;
    gx_status s = gx_array_describe(a, &d);
    if (s != GX_OK)
        return s;
    size_t bytes = (size_t)d.size * gx_dtype_size(d.dtype);
    unsigned char *h = malloc(bytes ? bytes : 1);
    if (!h)
        return GX_ERR_OUT_OF_MEMORY;
    s = gx_array_to_host(a, h, bytes);
    if (s == GX_OK)
        fprintf(f, "%s %s %lld %016llx\n", name, gx_dtype_name(d.dtype), (long long)d.size,
                (unsigned long long)rp_fnv(h, bytes));
    free(h);
    return s;
}

#define RP_TRY(expr)               \
    do {                           \
        if ((s = (expr)) != GX_OK) \
            goto out;              \
    } while (0)

/* Everything this test compares, written to f.  Sizes with ragged ends for every
 * thread count and vector width. */
static gx_status rp_compute(gx_ctx *ctx, FILE *f)
{
    const int64_t n = (1 << 22) + 7, mshape[2] = {1031, 1029};
    gx_rng r1 = {.seed = 0x5eed2027, .offset = 1}, r2 = {.seed = 0x5eed2027, .offset = 2};
    gx_array *x = NULL, *y = NULL, *xd = NULL, *m = NULL, *t = NULL, *kept[2] = {NULL, NULL};
    gx_pipe *p = NULL;
    gx_scalar v;
    gx_status s;
    RP_TRY(gx_rand(ctx, r1, GX_F32, 1, &n, &x));
    RP_TRY(gx_randn(ctx, r2, GX_F32, 1, &n, &y));
    RP_TRY(gx_rand(ctx, r2, GX_F64, 1, &n, &xd));
    RP_TRY(gx_randn(ctx, r1, GX_F32, 2, mshape, &m));
    RP_TRY(rp_array(f, "rand_f32", x));
    RP_TRY(rp_array(f, "randn_f32", y));
    /* whole-array reductions */
    RP_TRY(gx_sum(x, &v));
    RP_TRY(rp_scalar(f, "sum_f32", v));
    RP_TRY(gx_mean(y, &v));
    RP_TRY(rp_scalar(f, "mean_f32", v));
    RP_TRY(gx_sum(xd, &v));
    RP_TRY(rp_scalar(f, "sum_f64", v));
    gx_array *xy[2] = {x, y};
    RP_TRY(gx_mapreduce(ctx, "x, y -> (x-y)*(x-y)", "+", 2, xy, NULL, &v));
    RP_TRY(rp_scalar(f, "l2_f32", v));
    gx_reduce_opts o32 = {.dtype = GX_F32};
    RP_TRY(gx_reduce(ctx, "+", y, &o32, &v)); /* f32 accumulation: order matters most here */
    RP_TRY(rp_scalar(f, "sum_f32_acc_f32", v));
    /* along axes: the row and the column kernels */
    for (int ax = 0; ax < 2; ax++) {
        gx_reduce_opts oa = {.axes = &ax, .naxes = 1};
        RP_TRY(gx_reduce_to(ctx, "sum", m, &oa, &t));
        RP_TRY(rp_array(f, ax ? "rows_sum_f32" : "cols_sum_f32", t));
        gx_array_release(t);
        t = NULL;
    }
    /* a scan, a map, a compaction, a pipeline reduction */
    /* Float "+" scans are bitwise reproducible on the CPU; on a GPU each tile adds its
     * predecessors' sums in the order they were published (gx/range.h), so there a
     * running max, exact in any order, stands in. */
    gx_backend_kind be = GX_BACKEND_CPU;
    RP_TRY(gx_ctx_backend(ctx, &be));
    RP_TRY(gx_scan(ctx, be == GX_BACKEND_CPU ? "+" : "max", y, NULL, &t));
    RP_TRY(rp_array(f, be == GX_BACKEND_CPU ? "cumsum_f32" : "cummax_f32", t));
    gx_array_release(t);
    t = NULL;
    RP_TRY(gx_map(ctx, "x, y -> sin(x * 40) * y + cos(y)", 2, xy, NULL, &t));
    RP_TRY(rp_array(f, "map_f32", t));
    RP_TRY(gx_filter(ctx, "x, y -> y > x", 2, xy, NULL, kept));
    RP_TRY(rp_array(f, "filter_x", kept[0]));
    RP_TRY(rp_array(f, "filter_y", kept[1]));
    RP_TRY(gx_pipe_from_arrays(ctx, 1, &y, &p));
    RP_TRY(gx_pipe_mapreduce(p, "v -> v * v", "+", NULL, &v));
    RP_TRY(rp_scalar(f, "pipe_sum_sq_f32", v));
out:
    gx_pipe_destroy(p);
    gx_array_release(x), gx_array_release(y), gx_array_release(xd), gx_array_release(m), gx_array_release(t);
    gx_array_release(kept[0]), gx_array_release(kept[1]);
    return s;
}

/* The second process: `gx_tests --child-repro FILE` writes its results to FILE. */
int gxt_child_repro(const char *path);
int gxt_child_repro(const char *path)
{
    gx_ctx *ctx = NULL;
    FILE *f = fopen(path, "w");
    gx_status s = f ? gx_ctx_create(&ctx, GX_BACKEND_AUTO) : GX_ERR_INVALID_ARGUMENT;
    if (s == GX_OK)
        s = rp_compute(ctx, f);
    if (s != GX_OK)
        fprintf(stderr, "child: %s: %s\n", gx_status_string(s), gx_last_error());
    if (f)
        fclose(f);
    gx_ctx_destroy(ctx);
    return s == GX_OK ? 0 : 1;
}

static char *rp_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 14];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* The first line where a and b differ, into line ("" when they agree). */
static void rp_first_difference(const char *a, const char *b, char *line, size_t n)
{
    line[0] = 0;
    while (*a || *b) {
        size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (la != lb || memcmp(a, b, la) != 0) {
            snprintf(line, n, "this process: \"%.*s\", the second: \"%.*s\"", (int)la, a, (int)lb, b);
            return;
        }
        a += la + (a[la] != 0);
        b += lb + (b[lb] != 0);
    }
}

GXT_TEST(repro_bitwise_across_two_processes)
{
    gx_ctx *ctx = gxt_ctx();
    char *mine = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mine, &len);
    GXT_CHECK(f != NULL);
    if (!f)
        return;
    gx_status s = rp_compute(ctx, f);
    fclose(f);
    if (s != GX_OK) {
        GXT_FAIL_AT(__FILE__, __LINE__, "computing the results: %s: %s", gx_status_string(s), gx_last_error());
        free(mine);
        return;
    }
    char dir[256], path[300];
    gxt_temp_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/second.txt", dir);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "gx_tests", "--child-repro", path, (char *)NULL);
        _exit(3);
    }
    int st = 0;
    GXT_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    const char *theirs = rp_slurp(path);
    GXT_CHECK(theirs != NULL);
    int lines = 0;
    for (const char *c = mine; *c; c++)
        lines += *c == '\n';
    GXT_EQ_I64(lines, 14); /* every result was written */
    char diff[512];
    rp_first_difference(mine, theirs ? theirs : "", diff, sizeof diff);
    if (diff[0])
        GXT_FAIL_AT(__FILE__, __LINE__, "results differ between two processes: %s", diff);
    else
        printf("  %d results bit-identical in a second process\n", lines);
    free(mine);
}
