/* cpu_cc.h -- the CPU backend's compiler driver (cpu_cc.c): which C compiler, an
 * identity string for cache keys, compiling generated C into a shared object, and
 * loading a shared object from memory.  Part of the CPU backend; the kernel cache
 * (jit/cache.h) keeps what it builds. */
#ifndef GX_CPU_CC_H
#define GX_CPU_CC_H

#include "core/gx_internal.h"

/* The C compiler the CPU backend uses: $GX_CC, else $CC, else "cc".  *id receives
 * the compiler's first `--version` line plus the host CPU model and flags digest, for
 * cache keys (stable across runs, different across machines/compilers). */
const char *cpu_cc_path(void);
const char *cpu_cc_id(void);

/* Compiles C `source` into a shared object with
 *   <cc> -std=c11 -O3 -march=native -fPIC -shared -fwrapv -fno-strict-aliasing
 *        -fno-math-errno -Wno-unused-function -o out.so <label>.c -lm
 * run with fork + execve (no shell; the only user-influenced text, the label, is
 * reduced to [A-Za-z0-9_] and used only inside a file name), in a private temporary
 * directory $TMPDIR/gx-cc-<pid>-XXXXXX (or /tmp/...), which is also the compiler's
 * TMPDIR and is removed on every path.  <cc> is cpu_cc_path(), split at blanks so
 * that e.g. CC="ccache gcc" works.  The compiler runs in its own process group under
 * two limits, read from the environment at every call: GX_CC_TIMEOUT (wall clock,
 * whole seconds >= 1, default 120; on expiry the whole group is killed) and
 * GX_CC_MEMORY (RLIMIT_AS of each compiler process, a size, default 4GiB).
 * On success *so / *len hold the .so bytes (malloc'd).  On failure GX_ERR_COMPILE
 * with the compiler's diagnostics in the message (the source carries #line
 * directives, so they name the user's file and lines), or naming the limit that
 * stopped it and the variable that raises it. */
gx_status cpu_cc_build(const char *source, const char *label, void **so, size_t *len);

/* The same for C++ source (users' CUDA C kernels, cpu_kernel.c): the compiler is
 * $GX_CXX, else $CXX, else "c++" (cpu_cxx_path), with
 *   -std=c++17 -O3 -march=native -fPIC -shared -fwrapv -fno-strict-aliasing
 *   -fno-math-errno -fvisibility=hidden -Wno-unused-function -Wno-unused-variable -lm
 * under the same limits and folders. */
const char *cpu_cxx_path(void);
gx_status cpu_cxx_build(const char *source, const char *label, void **so, size_t *len);

/* Removes compile folders gx-cc-<pid>-* in the temporary directory that belong to
 * this user and whose process no longer exists (left by a process that was killed).
 * cpu_cc_build() calls it once per process, before its first compile; exposed for
 * tests. */
void cpu_cc_sweep_stale(void);

/* Loads a shared object from memory (memfd + dlopen, or a temp file that is unlinked
 * at once where memfd_create is unavailable); *handle for dlsym/dlclose.  Each call
 * gives a distinct library even when glibc would reuse a /proc/self/fd name. */
gx_status cpu_cc_so_load(const void *so, size_t len, void **handle);

#endif
