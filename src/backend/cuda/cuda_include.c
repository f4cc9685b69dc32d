/* cuda_include.c -- where the CUDA toolkit's device headers (cooperative_groups.h,
 * mma.h, cuda_fp16.h, cub/, cuda/std/...) and the device runtime library
 * (libcudadevrt.a, for kernels that launch kernels) are, found at run time from
 * the NVRTC that gx loaded, so a user kernel can #include what nvcc would find.
 *
 * GX_CUDA_INCLUDE (colon-separated folders) replaces the search.  Otherwise, in
 * order, each folder kept only if it exists: <libnvrtc's folder>/../include (a
 * toolkit, or pip's nvidia/cuda_nvrtc), pip's sibling packages nvidia/cuda_runtime
 * and nvidia/cuda_cccl, $CUDA_HOME/include, $CUDA_PATH/include,
 * /usr/local/cuda/include.  CUDA 13 keeps the CCCL headers (cub/, thrust/,
 * cuda/std) in include/cccl, so each include folder's cccl/ is added after it.
 * The list is part of a user kernel's cache key (src/ops/kernel.c puts it in the
 * wrapped source), so a different toolkit never reuses a stale module. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend/cuda/cuda_priv.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool inc_is_dir(const char *p)
{
    struct stat st;
    return p && *p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool inc_is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Appends dir (canonical) to the colon list unless absent or already there. */
static void inc_add(char *out, size_t n, const char *dir)
{
    char real[PATH_MAX];
    if (!inc_is_dir(dir) || !realpath(dir, real) || strchr(real, ':'))
        return;
    size_t len = strlen(real), used = strlen(out);
    for (const char *p = out; *p;) {
        const char *e = strchr(p, ':');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == len && strncmp(p, real, l) == 0)
            return;
        p += l + (e ? 1 : 0);
    }
    if (used + len + 2 > n)
        return;
    snprintf(out + used, n - used, "%s%s", used ? ":" : "", real);
}

/* dir, then dir/cccl (CUDA 13's home of cub/, thrust/, cuda/std). */
static void inc_add_with_cccl(char *out, size_t n, const char *dir)
{
    if (!inc_is_dir(dir))
        return;
    inc_add(out, n, dir);
    char c[PATH_MAX + 96]; /* dir comes from buffers of PATH_MAX + 64 */
    if (strlen(dir) + 6 > sizeof c)
        return;
    snprintf(c, sizeof c, "%s/cccl", dir);
    inc_add(out, n, c);
}

/* The folder of the loaded libnvrtc (empty when NVRTC is not loaded). */
static void inc_nvrtc_dir(char *out, size_t n)
{
    out[0] = 0;
    if (!cuda_nvrtc_load())
        return;
    Dl_info di;
    void *sym;
    memcpy(&sym, &cuda_nvrtc.Version, sizeof sym);
    char real[PATH_MAX];
    if (!dladdr(sym, &di) || !di.dli_fname || !realpath(di.dli_fname, real))
        return;
    char *slash = strrchr(real, '/');
    if (slash)
        *slash = 0;
    snprintf(out, n, "%s", real);
}

void cuda_include_dirs(char *out, size_t n)
{
    out[0] = 0;
    const char *env = getenv("GX_CUDA_INCLUDE");
    if (env && *env) {
        /* Taken as given (not checked): a missing header's message then names
         * exactly the folders the user asked for. */
        snprintf(out, n, "%s", env);
        return;
    }
    char lib[PATH_MAX], d[PATH_MAX + 64];
    inc_nvrtc_dir(lib, sizeof lib);
    if (lib[0]) {
        snprintf(d, sizeof d, "%s/../include", lib);
        inc_add_with_cccl(out, n, d);
        /* pip wheels: nvidia/cuda_nvrtc/lib beside nvidia/cuda_runtime/include. */
        snprintf(d, sizeof d, "%s/../../cuda_runtime/include", lib);
        inc_add_with_cccl(out, n, d);
        snprintf(d, sizeof d, "%s/../../cuda_cccl/include", lib);
        inc_add(out, n, d);
        /* A toolkit's targets/<arch>/lib: the headers are in targets/<arch>/include. */
    }
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH")};
    for (int i = 0; i < 2; i++)
        if (homes[i] && *homes[i] && strlen(homes[i]) < PATH_MAX) {
            snprintf(d, sizeof d, "%s/include", homes[i]);
            inc_add_with_cccl(out, n, d);
        }
    inc_add_with_cccl(out, n, "/usr/local/cuda/include");
}

int cuda_devrt_path(char *out, size_t n)
{
    char dirs[8192], lib[PATH_MAX], cand[PATH_MAX + 128];
    const char *env = getenv("GX_CUDA_DEVRT");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return inc_is_file(env);
    }
    inc_nvrtc_dir(lib, sizeof lib);
    if (lib[0]) {
        snprintf(cand, sizeof cand, "%s/libcudadevrt.a", lib);
        if (inc_is_file(cand))
            return snprintf(out, n, "%s", cand), 1;
    }
    /* Beside each include folder: ../lib64, ../lib (the toolkit's layout). */
    cuda_include_dirs(dirs, sizeof dirs);
    for (char *save = NULL, *t = strtok_r(dirs, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
        static const char *const rel[] = {"../lib64", "../lib", "../../lib64"};
        for (int i = 0; i < 3; i++) {
            snprintf(cand, sizeof cand, "%s/%s/libcudadevrt.a", t, rel[i]);
            if (inc_is_file(cand))
                return snprintf(out, n, "%s", cand), 1;
        }
    }
    const char *home = getenv("CUDA_HOME");
    if (home && *home && strlen(home) < PATH_MAX) {
        snprintf(cand, sizeof cand, "%s/lib64/libcudadevrt.a", home);
        if (inc_is_file(cand))
            return snprintf(out, n, "%s", cand), 1;
    }
    snprintf(out, n, "%s", "/usr/local/cuda/lib64/libcudadevrt.a");
    return inc_is_file(out);
}

void gx__cuda_include_path(char *out, size_t n) { cuda_include_dirs(out, n); }
