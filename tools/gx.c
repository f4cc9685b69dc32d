/* gx.c -- the command-line tool: gx info | tour | bench | ptx | sass | version | help. */
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
           "  -h, --help   this text\n"
           "The backend comes from GX_BACKEND=auto|cpu|cuda (auto: CUDA when a GPU answers).\n"
           "example: GX_BACKEND=cpu gx info\n");
}

static int cmd_info(int argc, char **argv)
{
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
