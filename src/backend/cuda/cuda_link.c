/* cuda_link.c -- links relocatable device code (kernels that launch kernels,
 * kernels built from several sources, link-time optimisation) with nvJitLink,
 * loaded at run time through cuda_dl.c like NVRTC.  nvJitLink needs no driver and
 * no context, so the linked cubin is an ordinary build result that gx's kernel
 * caches keep on disk.  The entry points are declared here with their documented
 * C types (nvJitLink.h renames some of them per release with macros; the plain
 * names are exported by every release). */
#include "backend/cuda/cuda_priv.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cuda_jl *cuda_jl_handle;
typedef struct cuda_jl_api {
    int (*Create)(cuda_jl_handle *, uint32_t, const char **);
    int (*Destroy)(cuda_jl_handle *);
    int (*AddData)(cuda_jl_handle, int, const void *, size_t, const char *);
    int (*AddFile)(cuda_jl_handle, int, const char *);
    int (*Complete)(cuda_jl_handle);
    int (*GetLinkedCubinSize)(cuda_jl_handle, size_t *);
    int (*GetLinkedCubin)(cuda_jl_handle, void *);
    int (*GetErrorLogSize)(cuda_jl_handle, size_t *);
    int (*GetErrorLog)(cuda_jl_handle, char *);
} cuda_jl_api;

static cuda_jl_api jl;
static const cuda_dl_sym jl_syms[] = {
    {"nvJitLinkCreate", &jl.Create, 1},
    {"nvJitLinkDestroy", &jl.Destroy, 1},
    {"nvJitLinkAddData", &jl.AddData, 1},
    {"nvJitLinkAddFile", &jl.AddFile, 1},
    {"nvJitLinkComplete", &jl.Complete, 1},
    {"nvJitLinkGetLinkedCubinSize", &jl.GetLinkedCubinSize, 1},
    {"nvJitLinkGetLinkedCubin", &jl.GetLinkedCubin, 1},
    {"nvJitLinkGetErrorLogSize", &jl.GetErrorLogSize, 1},
    {"nvJitLinkGetErrorLog", &jl.GetErrorLog, 1},
};
static const char *const jl_names[] = {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so", NULL};
static cuda_dl_lib jl_lib = {
    .what = "nvJitLink (the CUDA device linker, libnvJitLink.so)",
    .names = jl_names,
    .toolkit_dirs = true,
    .syms = jl_syms,
    .nsyms = sizeof jl_syms / sizeof jl_syms[0],
    .fix_absent = "install the CUDA toolkit's nvJitLink (e.g. the libnvjitlink package, or pip "
                  "nvidia-nvjitlink) next to NVRTC; kernels that launch kernels, several sources "
                  "and link-time optimisation need it",
    .fix_old = "too old an nvJitLink; install the one of CUDA 12 or newer",
};

static pthread_once_t jl_once = PTHREAD_ONCE_INIT;
static int jl_ok;

static void jl_load_once(void) { jl_ok = cuda_dl_open(&jl_lib); }

/* The linker's error log (malloc'ed, or NULL). */
static char *jl_log(cuda_jl_handle h)
{
    size_t n = 0;
    if (jl.GetErrorLogSize(h, &n) != 0 || n <= 1)
        return NULL;
    char *t = malloc(n);
    if (t && jl.GetErrorLog(h, t) != 0) {
        free(t);
        return NULL;
    }
    if (t)
        t[n - 1] = 0;
    return t;
}

static gx_status jl_fail(cuda_jl_handle h, int r, const char *step)
{
    char *lg = jl_log(h);
    gx_status s =
        gx__err(GX_ERR_COMPILE, "nvJitLink %s failed (error %d)%s%.3000s", step, r, lg ? ":\n" : "", lg ? lg : "");
    free(lg);
    return s;
}

/* NVJITLINK_INPUT_LIBRARY: an archive such as libcudadevrt.a. */
#define CUDA_JL_INPUT_LIBRARY 6

gx_status cuda_link(const cuda_link_input *in, int nin, const char *devrt, int arch, int lto, void **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    pthread_once(&jl_once, jl_load_once);
    if (!jl_ok)
        return gx__err(GX_ERR_UNSUPPORTED, "%s", jl_lib.problem);
    char archopt[32];
    snprintf(archopt, sizeof archopt, "-arch=sm_%d", arch);
    const char *opts[2] = {archopt, "-lto"};
    cuda_jl_handle h = NULL;
    int r = jl.Create(&h, lto ? 2 : 1, opts);
    if (r != 0)
        return gx__err(GX_ERR_BACKEND, "nvJitLinkCreate(%s) failed (error %d)", archopt, r);
    gx_status s = GX_OK;
    for (int i = 0; i < nin && s == GX_OK; i++)
        if ((r = jl.AddData(h, in[i].type, in[i].data, in[i].len, in[i].name)) != 0)
            s = jl_fail(h, r, "adding a source");
    if (s == GX_OK && devrt && (r = jl.AddFile(h, CUDA_JL_INPUT_LIBRARY, devrt)) != 0)
        s = jl_fail(h, r, "adding the device runtime");
    if (s == GX_OK && (r = jl.Complete(h)) != 0)
        s = jl_fail(h, r, "link");
    size_t n = 0;
    if (s == GX_OK && (jl.GetLinkedCubinSize(h, &n) != 0 || n == 0))
        s = gx__err(GX_ERR_BACKEND, "nvJitLink produced no cubin");
    void *blob = s == GX_OK ? malloc(n) : NULL;
    if (s == GX_OK && !blob)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for a %zu-byte linked cubin", n);
    if (s == GX_OK && jl.GetLinkedCubin(h, blob) != 0)
        s = gx__err(GX_ERR_BACKEND, "nvJitLinkGetLinkedCubin failed");
    jl.Destroy(&h);
    if (s != GX_OK) {
        free(blob);
        return s;
    }
    *out = blob;
    *len = n;
    return GX_OK;
}
