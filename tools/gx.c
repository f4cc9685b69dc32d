/* gx.c -- the command-line tool: gx info | tour | bench | version. */
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_info(int argc, char **argv)
{
    (void)argc;
    (void)argv;
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

static void usage(FILE *f)
{
    fprintf(f, "usage: gx <command> [options]\n"
               "  info               versions, build options, backend, devices, memory\n"
               "  tour               a guided run through gx on the current backend\n"
               "  bench [opts]       gx's benchmark suite (--filter S, --sizes 20,24,28, --json, --reps N,\n"
               "                     --map LAMBDA to time your own lambda over random f32 inputs)\n"
               "  ptx FILE.cu        PTX of a CUDA kernel file (--entry NAME, --arch sm_90; no GPU needed)\n"
               "  sass FILE.cu       its SASS (needs cuobjdump or nvdisasm)\n"
               "  version            print the version\n"
               "The backend comes from GX_BACKEND=auto|cpu|cuda (auto: CUDA when a GPU answers).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "tour") == 0)
        return gx_tool_tour(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return gx_tool_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "ptx") == 0)
        return gx_tool_ptx(argc - 1, argv + 1);
    if (strcmp(cmd, "sass") == 0)
        return gx_tool_sass(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("gx %s\n", gx_version());
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "gx: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
