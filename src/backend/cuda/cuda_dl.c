/* cuda_dl.c -- the one way gx loads NVIDIA's libraries at run time (driver, NVRTC,
 * cuBLAS, cuFFT): the first loadable of a list of file names, tried as given (the
 * dynamic loader's own search: LD_LIBRARY_PATH, the ld.so cache) and then, where
 * the library ships with the toolkit, under $CUDA_HOME/lib64 and
 * /usr/local/cuda/lib64; then a table of entry points.  The message on failure
 * names every file tried, or the entry point missing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend/cuda/cuda_priv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DL_MAX_DIRS 3

/* "" (as given), then the toolkit folders when asked for; returns how many. */
static int dl_dirs(bool toolkit, char dirs[DL_MAX_DIRS][400])
{
    int n = 0;
    dirs[n++][0] = 0;
    if (!toolkit)
        return n;
    const char *home = getenv("CUDA_HOME");
    if (home && *home && strlen(home) < 380)
        snprintf(dirs[n++], sizeof dirs[0], "%s/lib64/", home);
    snprintf(dirs[n++], sizeof dirs[0], "/usr/local/cuda/lib64/");
    return n;
}

/* Every name in the first folder, then every name in the next: a library the
 * dynamic loader finds wins over a toolkit copy.  path gets what opened. */
static void *dl_search(const char *const *names, bool toolkit, int flags, char *path, size_t pn, char *why, size_t wn)
{
    char dirs[DL_MAX_DIRS][400];
    int nd = dl_dirs(toolkit, dirs);
    for (int d = 0; d < nd; d++)
        for (int i = 0; names[i]; i++) {
            int len = snprintf(path, pn, "%s%s", dirs[d], names[i]);
            if (len < 0 || (size_t)len >= pn)
                continue; /* a $CUDA_HOME too long for a path gx would keep */
            void *h = dlopen(path, flags);
            if (h)
                return h;
            const char *e = dlerror();
            if (why && e)
                snprintf(why, wn, "%s", e);
        }
    path[0] = 0;
    return NULL;
}

/* "a, b, c, each also under /x/lib64/ and /usr/local/cuda/lib64/" */
static void dl_tried(const cuda_dl_lib *lib, char *out, size_t n)
{
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; lib->names[i] && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", i ? ", " : "", lib->names[i]);
    char dirs[DL_MAX_DIRS][400];
    int nd = dl_dirs(lib->toolkit_dirs, dirs);
    for (int d = 1; d < nd && k < n; d++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", d == 1 ? ", each also under " : " and ", dirs[d]);
}

/* Fills the slots; 0 with the problem set when a required entry point is missing. */
static int dl_resolve(cuda_dl_lib *lib)
{
    for (size_t i = 0; i < lib->nsyms; i++) {
        const cuda_dl_sym *s = &lib->syms[i];
        void *f = dlsym(lib->handle, s->name);
        /* POSIX lets a dlsym result be stored in a function pointer; memcpy keeps
         * that conversion free of aliasing questions. */
        memcpy(s->slot, &f, sizeof f);
        if (!f && s->required) {
            snprintf(lib->problem, sizeof lib->problem, "%s (%s) lacks %s: %s", lib->what, lib->path, s->name,
                     lib->fix_old);
            return 0;
        }
    }
    return 1;
}

int cuda_dl_open(cuda_dl_lib *lib)
{
    char why[256] = "";
    lib->ok = 0;
    lib->handle =
        dl_search(lib->names, lib->toolkit_dirs, RTLD_NOW | RTLD_LOCAL, lib->path, sizeof lib->path, why, sizeof why);
    if (!lib->handle) {
        char tried[640];
        dl_tried(lib, tried, sizeof tried);
        snprintf(lib->problem, sizeof lib->problem, "%s could not be loaded: tried %s (%s); %s", lib->what, tried,
                 why[0] ? why : "not found", lib->fix_absent);
        return 0;
    }
    /* A library missing an entry point stays loaded: unloading a driver library is
     * not worth the risk, and its table is never used while ok is 0. */
    lib->ok = dl_resolve(lib);
    return lib->ok;
}

int cuda_dl_probe(const char *const *names, char *found, size_t n)
{
    char path[512];
    /* RTLD_NODELETE: closing again must not unload a library gx opened for real. */
    void *h = dl_search(names, true, RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE, path, sizeof path, NULL, 0);
    if (!h)
        return 0;
    dlclose(h);
    const char *base = strrchr(path, '/');
    snprintf(found, n, "%s", base ? base + 1 : path);
    return 1;
}

const char *const cuda_cublas_names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
const char *const cuda_cufft_names[] = {"libcufft.so.12", "libcufft.so.11", "libcufft.so.13", "libcufft.so", NULL};
const char *const cuda_curand_names[] = {"libcurand.so.10", "libcurand.so", NULL};
