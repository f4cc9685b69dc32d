/* ptx.c -- `gx ptx FILE.cu [--entry NAME] [--arch sm_XY] [NVRTC options]` and
 * `gx sass FILE.cu [--arch sm_XY] [NVRTC options]`: what NVRTC makes of a kernel
 * file, as gx_kernel_compile would build it (gx/device.h available).  PTX needs no
 * GPU: without one the arch defaults to sm_90; with one, to the GPU's. */
#include "tools.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PTX_MAX_OPTS 32

typedef struct ptx_args {
    const char *file, *entry, *arch;
    const char *opts[PTX_MAX_OPTS];
    int nopts;
} ptx_args;

static int ptx_usage(const char *cmd)
{
    fprintf(stderr,
            "usage: gx %s FILE.cu [--entry NAME] [--arch sm_XY] [NVRTC options, e.g. -DN=4]"
            " (see gx %s --help)\n",
            cmd, cmd);
    return 2;
}

/* The full usage, on stdout: `gx ptx --help` and `gx sass --help`. */
static int ptx_help(const char *cmd, bool sass)
{
    printf("usage: gx %s FILE.cu%s [--arch sm_XY] [NVRTC options]\n", cmd, sass ? "" : " [--entry NAME]");
    if (sass)
        printf("The SASS (GPU machine code) of a CUDA kernel file: NVRTC builds a cubin as\n"
               "gx_kernel_compile would, and cuobjdump or nvdisasm (on the PATH) disassembles it.\n");
    else
        printf("The PTX that NVRTC makes of a CUDA kernel file, as gx_kernel_compile would build\n"
               "it (gx/device.h available).  Needs NVRTC, not a GPU.\n");
    printf("options:\n");
    if (!sass)
        printf("  --entry NAME   fail unless the PTX defines this kernel (entry) name\n");
    printf("  --arch sm_XY   target architecture (default: the GPU's, or sm_90 without one)\n"
           "  -OPTION        any other option starting with '-' goes to NVRTC (-DN=4, -lineinfo)\n"
           "  -h, --help     this text\n"
           "example: gx %s kernel.cu --arch sm_90 -DTILE=32%s\n",
           cmd, sass ? "" : " --entry vadd");
    return 0;
}

static int ptx_parse(const char *cmd, int argc, char **argv, ptx_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        if (gx_tool_wants_help(argv[i]))
            return -1; /* the caller prints the help and exits 0 */
        if ((strcmp(argv[i], "--entry") == 0 || strcmp(argv[i], "--arch") == 0) && i + 1 < argc) {
            *(argv[i][2] == 'e' ? &a->entry : &a->arch) = argv[i + 1];
            i++;
        } else if (argv[i][0] == '-' && a->nopts < PTX_MAX_OPTS) {
            a->opts[a->nopts++] = argv[i];
        } else if (argv[i][0] != '-' && !a->file) {
            a->file = argv[i];
        } else {
            return ptx_usage(cmd);
        }
    }
    return a->file ? 0 : ptx_usage(cmd);
}

static char *ptx_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[65536];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = 2 * (len + n + 1);
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (!buf)
        buf = calloc(1, 1);
    else
        buf[len] = 0;
    return buf;
}

/* The GPU's arch when one answers, else sm_90. */
static void ptx_default_arch(char *out, size_t n)
{
    snprintf(out, n, "sm_90");
    int count = 0;
    gx_ctx *ctx = NULL;
    if (gx_cuda_device_count(&count) != GX_OK || count == 0 || gx_ctx_create(&ctx, GX_BACKEND_CUDA) != GX_OK)
        return;
    gx_device_info info;
    if (gx_device_info_get(ctx, &info) == GX_OK && info.cc_major > 0)
        snprintf(out, n, "sm_%d%d", info.cc_major, info.cc_minor);
    gx_ctx_destroy(ctx);
}

/* Options other than --entry and --arch go to NVRTC, which judges them: one it does
 * not know is a usage error (exit 2), like an unknown option anywhere in gx. */
static int ptx_failed(const char *cmd, gx_status s)
{
    char what[16];
    snprintf(what, sizeof what, "gx %s", cmd);
    gx_tool_fail(what, s);
    if (!strstr(gx_last_error(), "INVALID_OPTION"))
        return 1;
    fprintf(stderr, "gx %s: NVRTC rejected an option (see gx %s --help)\n", cmd, cmd);
    return 2;
}

static int ptx_run(const char *cmd, int argc, char **argv, bool sass)
{
    ptx_args a;
    int rc = ptx_parse(cmd, argc, argv, &a);
    if (rc)
        return rc < 0 ? ptx_help(cmd, sass) : rc;
    char *src = ptx_read(a.file);
    if (!src) {
        fprintf(stderr, "gx %s: cannot read %s\n", cmd, a.file);
        return 1;
    }
    char arch[32];
    if (a.arch)
        snprintf(arch, sizeof arch, "%s", a.arch);
    else
        ptx_default_arch(arch, sizeof arch);
    const char *base = strrchr(a.file, '/');
    gx_kernel_opts o = {.options = a.opts, .noptions = a.nopts, .label = base ? base + 1 : a.file};
    char *text = NULL;
    gx_status s =
        sass ? gx_kernel_sass_offline(src, arch, &o, &text) : gx_kernel_ptx_offline(src, a.entry, arch, &o, &text);
    free(src);
    if (s != GX_OK)
        return ptx_failed(cmd, s);
    fputs(text, stdout);
    gx_text_free(text);
    return 0;
}

int gx_tool_ptx(int argc, char **argv) { return ptx_run("ptx", argc, argv, false); }
int gx_tool_sass(int argc, char **argv) { return ptx_run("sass", argc, argv, true); }
