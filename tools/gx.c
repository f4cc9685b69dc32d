/* gx.c -- the command-line tool: gx info | tour | bench | ptx | sass | version | help. */
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool gx_tool_wants_help(const char *arg) { return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0; }

int gx_tool_bad_option(const char *cmd, const char *arg)
{
    fprintf(stderr, "gx %s: unknown option '%s' (see gx %s --help)\n", cmd, arg, cmd);
    return 2;
}

static void info_usage(void)
{
    printf("usage: gx info\n"
           "What this gx is and what it runs on: version and build options, the CUDA driver\n"
           "and libraries it found, the backend it picks, each device (cores or SMs, memory,\n"
           "cache) and the memory pool.  Quote it in bug reports.\n"
           "options:\n"
           "  --timing     instead: where a context's first use goes -- creating it and\n"
           "               running a first small map (driver load + init, device context,\n"
           "               kernel build: cache look-up / compile / module load, first launch,\n"
           "               total, and gx's own part).  Run it twice: the second run has\n"
           "               the kernel in the disk cache (GX_CACHE_DIR), as a warm start has.\n"
           "  --comm       also the communicator's layout (gx/comm.h): every rank with its\n"
           "               host, local rank and device, and the transport (NCCL's or MPI's\n"
           "               version).  Under mpirun (mpirun -n 4 gx info) this is the\n"
           "               default; rank 0 prints, the other ranks only take part.\n"
           "  -h, --help   this text\n"
           "The backend comes from GX_BACKEND=auto|cpu|cuda (auto: CUDA when a GPU answers).\n"
           "example: GX_BACKEND=cpu gx info; mpirun -n 2 gx info\n");
}

static double tool_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int timing_fail(const char *what, gx_status s, gx_ctx *ctx)
{
    fprintf(stderr, "gx info --timing: %s: %s: %s\n", what, gx_status_string(s), gx_last_error());
    gx_ctx_destroy(ctx);
    return 1;
}

/* gx info --timing: a context made and a first map run (1024 f32, a fixed lambda so
 * that a second run finds it in the disk cache), with the library's own split of
 * the stages (gx_ctx_timing) and the host clock around each call. */
static int cmd_info_timing(void)
{
    gx_ctx *ctx = NULL;
    double t0 = tool_now_ms();
    gx_status s = gx_ctx_create(&ctx, GX_BACKEND_AUTO);
    double t1 = tool_now_ms();
    if (s != GX_OK)
        return timing_fail("gx_ctx_create", s, NULL);
    int64_t n = 1024;
    gx_array *x = NULL, *y = NULL;
    s = gx_array_iota(ctx, GX_F32, n, 0, 1, &x);
    if (s == GX_OK)
        s = gx_array_zeros(ctx, GX_F32, 1, &n, &y);
    /* The inputs' fill and iota load modules of their own: the map's share of module
     * load and compile time is what the counters gained across the map call. */
    gx_ctx_timing tm0;
    if (s == GX_OK)
        s = gx_ctx_timing_get(ctx, &tm0);
    if (s != GX_OK)
        return timing_fail("inputs", s, ctx);
    double t2 = tool_now_ms();
    s = gx_map_into(ctx, "x -> x * 3 + 1", 1, &x, NULL, y);
    double t3 = tool_now_ms();
    if (s == GX_OK)
        s = gx_sync(ctx);
    double t4 = tool_now_ms();
    float last = 0; /* the map checked: y[n-1] = 3 (n-1) + 1 */
    if (s == GX_OK) {
        gx_array *tail = NULL;
        gx_slice sl = {n - 1, n, 1};
        s = gx_array_view(y, &sl, &tail);
        if (s == GX_OK)
            s = gx_array_to_host(tail, &last, sizeof last);
        gx_array_release(tail);
        if (s == GX_OK && last != (float)(3 * (n - 1) + 1)) {
            fprintf(stderr, "gx info --timing: the first map gave %g, want %g\n", last, (double)(3 * (n - 1) + 1));
            gx_ctx_destroy(ctx);
            return 1;
        }
    }
    gx_ctx_timing tm;
    gx_cache_stats cs;
    gx_device_info di;
    gx_backend_kind bk = GX_BACKEND_AUTO;
    if (s == GX_OK)
        s = gx_ctx_timing_get(ctx, &tm);
    if (s == GX_OK)
        s = gx_cache_stats_get(ctx, &cs);
    if (s == GX_OK)
        s = gx_device_info_get(ctx, &di);
    if (s == GX_OK)
        s = gx_ctx_backend(ctx, &bk);
    if (s != GX_OK)
        return timing_fail("the first map", s, ctx);
    double create = t1 - t0, map_call = t3 - t2, wait = t4 - t3, total = create + map_call + wait;
    double gx_create = create - tm.driver_ms - tm.device_ctx_ms;
    double gx_build = map_call - (tm.module_ms - tm0.module_ms) - (tm.compile_ms - tm0.compile_ms);
    printf("gx first use (%s backend, %s): a context, then a first map of 1024 f32\n",
           gx_backend_name(bk), di.name);
    printf("  %-34s %9.3f ms\n", "driver load + init", tm.driver_ms);
    printf("  %-34s %9.3f ms\n", "device context (driver)", tm.device_ctx_ms);
    printf("  %-34s %9.3f ms\n", "context creation (gx)", gx_create);
    printf("  %-34s %9.3f ms  %s\n", "module compile", tm.compile_ms,
           cs.compiles ? "(cold: compiled; run again for a warm disk cache)" : "(warm: from the disk cache)");
    printf("  %-34s %9.3f ms  (%llu module%s)\n", "module load", tm.module_ms, (unsigned long long)tm.modules,
           tm.modules == 1 ? "" : "s");
    printf("  %-34s %9.3f ms\n", "first map call (gx: source, cache)", gx_build);
    printf("  %-34s %9.3f ms\n", "first launch wait (gx_sync)", wait);
    printf("  %-34s %9.3f ms\n", "total", total);
    printf("  %-34s %9.3f ms  (context creation + map call, less driver, compile, module load)\n",
           "gx's own part", gx_create + gx_build);
    gx_array_release(x);
    gx_array_release(y);
    gx_ctx_destroy(ctx);
    return 0;
}

/* gx info under mpirun (or --comm): the communicator's layout after rank 0's info. */
static int cmd_info_comm(void)
{
    gx_ctx *ctx = NULL;
    gx_comm *comm = NULL;
    gx_status s = gx_comm_world(GX_BACKEND_AUTO, NULL, &ctx, &comm);
    if (s != GX_OK) {
        fprintf(stderr, "gx info: gx_comm_world: %s: %s\n", gx_status_string(s), gx_last_error());
        return 1;
    }
    int rank = 0;
    gx_comm_rank(comm, &rank);
    size_t need = 0;
    char *buf = NULL, *ctext = NULL;
    s = gx_comm_info_text(comm, NULL, 0, &need); /* collective: every rank calls it */
    if (s == GX_OK && (ctext = malloc(need + 4096)) != NULL)
        s = gx_comm_info_text(comm, ctext, need + 4096, NULL);
    if (s == GX_OK && rank == 0) {
        s = gx_info_text(ctx, NULL, 0, &need);
        if (s == GX_OK && (buf = malloc(need)) != NULL)
            s = gx_info_text(ctx, buf, need, NULL);
    }
    if (s == GX_OK && rank == 0)
        printf("%s%s", buf ? buf : "", ctext ? ctext : "");
    else if (s != GX_OK)
        fprintf(stderr, "gx info (rank %d): %s: %s\n", rank, gx_status_string(s), gx_last_error());
    free(buf), free(ctext);
    gx_comm_destroy(comm);
    gx_ctx_destroy(ctx);
    return s == GX_OK ? 0 : 1;
}

static int cmd_info(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--timing") == 0)
        return cmd_info_timing();
    if ((argc == 2 && strcmp(argv[1], "--comm") == 0) || (argc == 1 && getenv("OMPI_COMM_WORLD_SIZE")))
        return cmd_info_comm();
    if (argc > 1) {
        if (!gx_tool_wants_help(argv[1]))
            return gx_tool_bad_option("info", argv[1]);
        info_usage();
        return 0;
    }
    size_t need = 0;
    gx_status s = gx_info_text(NULL, NULL, 0, &need);
    char *buf = s == GX_OK ? malloc(need) : NULL;
    if (buf)
        s = gx_info_text(NULL, buf, need, NULL);
    if (s != GX_OK) {
        fprintf(stderr, "gx info: %s: %s\n", gx_status_string(s), gx_last_error());
        free(buf);
        return 1;
    }
    fputs(buf, stdout);
    free(buf);
    return 0;
}

static int cmd_version(int argc, char **argv)
{
    if (argc > 1) {
        if (!gx_tool_wants_help(argv[1]))
            return gx_tool_bad_option("version", argv[1]);
        printf("usage: gx version (or gx --version)\nPrints gx's version, e.g. \"gx %s\".\n", gx_version());
        return 0;
    }
    printf("gx %s\n", gx_version());
    return 0;
}

static int cmd_help(int argc, char **argv);

typedef struct tool_cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} tool_cmd;

static const tool_cmd tool_cmds[] = {
    {"info", cmd_info, "versions, build options, backend, devices, memory"},
    {"tour", gx_tool_tour, "a guided run through gx on the current backend (--quick)"},
    {"bench", gx_tool_bench, "gx's benchmark suite (--quick, --filter S, --sizes 20,24,28, --json, --map)"},
    {"ptx", gx_tool_ptx, "PTX of a CUDA kernel file: gx ptx FILE.cu (no GPU needed)"},
    {"sass", gx_tool_sass, "its SASS: gx sass FILE.cu (needs cuobjdump or nvdisasm)"},
    {"version", cmd_version, "print the version"},
    {"help", cmd_help, "this list; gx help COMMAND is gx COMMAND --help"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: gx <command> [options]    (gx <command> --help: that command's options)\n");
    for (const tool_cmd *c = tool_cmds; c->name; c++)
        fprintf(f, "  %-9s %s\n", c->name, c->summary);
    fprintf(f, "The backend comes from GX_BACKEND=auto|cpu|cuda (auto: CUDA when a GPU answers).\n"
               "example: gx tour --quick\n");
}

static const tool_cmd *find_cmd(const char *name)
{
    for (const tool_cmd *c = tool_cmds; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

static int unknown_cmd(const char *name)
{
    fprintf(stderr, "gx: unknown command '%s' (see gx --help)\n", name);
    usage(stderr);
    return 2;
}

/* gx help [COMMAND]: the list, or that command's own --help. */
static int cmd_help(int argc, char **argv)
{
    if (argc < 2 || gx_tool_wants_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    const tool_cmd *c = find_cmd(argv[1]);
    if (!c)
        return unknown_cmd(argv[1]);
    static char help_flag[] = "--help"; /* argv strings are writable; a literal is not */
    char *args[] = {argv[1], help_flag, NULL};
    return c->run(2, args);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (gx_tool_wants_help(argv[1]))
        return cmd_help(1, argv);
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(1, argv);
    const tool_cmd *c = find_cmd(argv[1]);
    return c ? c->run(argc - 1, argv + 1) : unknown_cmd(argv[1]);
}
