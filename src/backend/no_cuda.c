/* no_cuda.c -- what the rest of gx calls of the CUDA side when the CUDA backend is
 * not built (no CUDA headers at build time): every answer is "not here".  With the
 * backend built, src/backend/cuda/ defines these instead. */
#include "backend/backend.h"

#include <stdio.h>

#ifndef GX_HAVE_CUDA
int gx__cuda_available(int *count)
{
    if (count)
        *count = 0;
    return 0;
}

void gx__cuda_versions(char *driver, size_t dn, char *nvrtc, size_t nn, char *libs, size_t ln)
{
    snprintf(driver, dn, "not built (no CUDA headers at build time)");
    snprintf(nvrtc, nn, "not built");
    snprintf(libs, ln, "none (CUDA backend not built)");
}

static gx_status no_nvrtc(const char *what)
{
    return gx__err(GX_ERR_UNSUPPORTED,
                   "%s: gx was built without the CUDA headers, so it cannot "
                   "drive NVRTC; rebuild with the CUDA toolkit installed",
                   what);
}

gx_status gx__nvrtc_ptx(const char *what, const char *wrapped, const char *label, const char *entry, int cc_major,
                        int cc_minor, char **text)
{
    (void)wrapped, (void)label, (void)entry, (void)cc_major, (void)cc_minor, (void)text;
    return no_nvrtc(what);
}

gx_status gx__nvrtc_sass(const char *what, const char *wrapped, const char *label, int cc_major, int cc_minor,
                         char **text)
{
    (void)wrapped, (void)label, (void)cc_major, (void)cc_minor, (void)text;
    return no_nvrtc(what);
}

void gx__cuda_include_path(char *out, size_t n)
{
    if (n)
        out[0] = 0;
}

/* NVTX ranges need the CUDA headers: without them there is nothing to name. */
void gx__range_push(const char *name) { (void)name; }
void gx__range_pop(void) {}
#endif
