/* cuda_kernel.c -- PTX and SASS of user kernels without a context: NVRTC alone
 * gives PTX (no driver, no GPU), and the CUDA toolkit's cuobjdump or nvdisasm turn
 * a cubin into SASS.  src/ops/kernel.c reaches them through gx__nvrtc_ptx and
 * gx__nvrtc_sass (src/backend/no_cuda.c answers when CUDA is not built). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend/cuda/cuda_priv.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static gx_status cuda_user_ptx(const char *wrapped, const char *label, int ma, int mi, char **text)
{
    void *blob = NULL;
    size_t len = 0;
    GX__CHECK(cuda_nvrtc_compile_user(wrapped, label, ma, mi, 1, &blob, &len, NULL));
    char *t = realloc(blob, len + 1);
    if (!t) {
        free(blob);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for PTX");
    }
    t[len] = 0;
    *text = t;
    return GX_OK;
}

/* `.entry NAME(` or `.entry NAME\n` in PTX. */
static bool cuda_ptx_has_entry(const char *ptx, const char *entry)
{
    size_t n = strlen(entry);
    for (const char *p = strstr(ptx, ".entry "); p; p = strstr(p + 7, ".entry ")) {
        const char *q = p + 7;
        while (*q == ' ')
            q++;
        if (strncmp(q, entry, n) == 0 && (q[n] == '(' || q[n] == '\n' || q[n] == ' ' || q[n] == '\r'))
            return true;
    }
    return false;
}

/* The first of the tools found in PATH, $CUDA_HOME/bin, /usr/local/cuda/bin. */
static bool cuda_find_tool(const char *name, char *out, size_t n)
{
    const char *path = getenv("PATH");
    const char *home = getenv("CUDA_HOME");
    char dirs[8192];
    snprintf(dirs, sizeof dirs, "%s:%s%s:/usr/local/cuda/bin", path ? path : "", home ? home : "", home ? "/bin" : "");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        if (!*d)
            continue;
        snprintf(out, n, "%s/%s", d, name);
        if (access(out, X_OK) == 0)
            return true;
    }
    return false;
}

/* Runs argv, collecting stdout+stderr; *status gets the exit code (or -1). */
static gx_status cuda_run_tool(char *const argv[], char **text, int *status)
{
    int fds[2];
    if (pipe(fds) != 0)
        return gx__err(GX_ERR_IO, "cannot create a pipe for %s: %s", argv[0], strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    pid_t pid;
    int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (e != 0) {
        close(fds[0]);
        return gx__err(GX_ERR_IO, "cannot run %s: %s", argv[0], strerror(e));
    }
    gx__sbuf b = {0};
    char buf[65536];
    ssize_t r;
    while ((r = read(fds[0], buf, sizeof buf - 1)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        buf[r] = 0;
        gx__sb_puts(&b, buf);
    }
    close(fds[0]);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    if (b.oom) {
        gx__sb_free(&b);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory reading %s's output", argv[0]);
    }
    *text = b.p ? b.p : strdup("");
    return *text ? GX_OK : gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
}

/* Disassembles a cubin with cuobjdump --dump-sass, else nvdisasm. */
static gx_status cuda_disasm(const void *cubin, size_t len, char **text)
{
    char tool[4096];
    bool objdump = cuda_find_tool("cuobjdump", tool, sizeof tool);
    if (!objdump && !cuda_find_tool("nvdisasm", tool, sizeof tool))
        return gx__err(GX_ERR_UNSUPPORTED,
                       "SASS needs cuobjdump or nvdisasm from the CUDA toolkit, and neither is in "
                       "PATH, $CUDA_HOME/bin or /usr/local/cuda/bin; install the toolkit's binary "
                       "utilities (e.g. the cuda-cuobjdump package) or use the PTX (gx_kernel_ptx)");
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/gx-sass-XXXXXX.cubin", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemps(path, 6);
    if (fd < 0)
        return gx__err(GX_ERR_IO, "cannot create a temporary file %s: %s", path, strerror(errno));
    bool wrote = write(fd, cubin, len) == (ssize_t)len;
    close(fd);
    gx_status s = wrote ? GX_OK : gx__err(GX_ERR_IO, "cannot write the cubin to %s", path);
    int status = 0;
    char *out = NULL;
    if (s == GX_OK) {
        char *argv_o[] = {tool, "--dump-sass", path, NULL};
        char *argv_n[] = {tool, path, NULL};
        s = cuda_run_tool(objdump ? argv_o : argv_n, &out, &status);
    }
    unlink(path);
    if (s == GX_OK && status != 0) {
        s = gx__err(GX_ERR_BACKEND, "%s exited with status %d:\n%.2000s", tool, status, out);
        free(out);
        out = NULL;
    }
    *text = out;
    return s;
}

static gx_status cuda_user_sass(const char *wrapped, const char *label, int ma, int mi, char **text)
{
    int arch = 0, ptx = 0;
    if (cuda_nvrtc_target(ma, mi, &arch, &ptx) != GX_OK || ptx)
        return gx__err(GX_ERR_UNSUPPORTED, "SASS for sm_%d%d: this NVRTC cannot emit a cubin for that arch (%s)", ma,
                       mi, cuda_nvrtc_load() ? "the device is newer than the toolkit" : cuda_nvrtc_problem());
    void *blob = NULL;
    size_t len = 0;
    GX__CHECK(cuda_nvrtc_compile_user(wrapped, label, ma, mi, 0, &blob, &len, NULL));
    gx_status s = cuda_disasm(blob, len, text);
    free(blob);
    return s;
}

gx_status gx__nvrtc_ptx(const char *what, const char *wrapped, const char *label, const char *entry, int cc_major,
                        int cc_minor, char **text)
{
    GX__CHECK(cuda_user_ptx(wrapped, label, cc_major, cc_minor, text));
    if (entry && !cuda_ptx_has_entry(*text, entry)) {
        free(*text);
        *text = NULL;
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: the source compiled but defines no kernel \"%s\"; "
                       "declare it extern \"C\" __global__ (C++ names are mangled)",
                       what, entry);
    }
    return GX_OK;
}

gx_status gx__nvrtc_sass(const char *what, const char *wrapped, const char *label, int cc_major, int cc_minor,
                         char **text)
{
    (void)what; /* the messages below name the tool or the arch instead */
    return cuda_user_sass(wrapped, label, cc_major, cc_minor, text);
}
