/* cpu_kernel.h -- users' CUDA C kernels on the CPU backend (cpu_kernel.c builds
 * them, cpu_backend.c launches them).  Private to src/backend/cpu/. */
#ifndef GX_CPU_KERNEL_H
#define GX_CPU_KERNEL_H

#include "core/gx_internal.h"

/* What a kernel's trampoline gx__cpuk_<name>(launch, b, e) gets: the same layout as
 * gx_cpu_launch in kernel_prelude.h. */
typedef struct cpu_klaunch {
    void **params;
    int nparams;
    unsigned grid[3], block[3];
    size_t shmem;
    int error;     /* 0, else the first failure (written by the kernel's blocks) */
    char msg[256]; /* its description */
    void *rec;     /* checked mode: the module's gx__check_record (set by the trampoline) */
} cpu_klaunch;

/* Checked mode's failure record (gx__check_record in include/gx/device.h). */
typedef gx__check_rec cpu_check_record;

typedef void (*cpu_ktramp)(cpu_klaunch *l, int64_t begin, int64_t end);

/* The CPU's limits for user kernels (gx/kernel.h documents them). */
#define CPU_KMAX_THREADS 1024
#define CPU_KMAX_SHMEM ((size_t)1 << 20)

/* A source that gx_kernel_compile wrapped (GX__USER_KERNEL_MAGIC first). */
bool cpu_kernel_is_user(const char *source);
/* Checks it against the CPU subset (GX_ERR_UNSUPPORTED naming construct and line),
 * generates the C++ and compiles it (cpu_cxx_build) into a shared object. */
gx_status cpu_kernel_build(const char *wrapped, const char *label, void **blob, size_t *len);
/* Whether [b, e) of code (comments and literals blanked) waits for other threads:
 * a barrier or warp intrinsic, itself or in a function of code that it calls. */
bool cpu_kernel_waits(const char *code, const char *b, const char *e);
/* The definition of function `name` in code: *def at its name, its body's braces
 * at *b and *e; false if none. */
bool cpu_kernel_def(const char *code, const char *name, const char **def, const char **b, const char **e);
/* Loop fission (cpu_fission.c): appends `static void gx__fis_<name>(params)`, the
 * kernel `name` of txt (code: txt with comments and literals blanked; all: the
 * code of every part) cut at its barriers into loops over the block's threads.
 * false, with the reason in why, when the kernel keeps the fibers. */
bool cpu_fission(const char *all, const char *txt, const char *code, const char *name, gx__sbuf *out, char *why,
                 size_t cap);
/* How the CPU backend runs kernel `name` of a wrapped (or plain) source: 0 as a loop
 * of threads (no barrier), 1 as fibers (why says what kept it off fission), 2 after
 * loop fission.  For tests and GX_CPU_KERNEL_LOG. */
int cpu_kernel_path(const char *source, const char *name, char *why, size_t cap);

/* What the compiler id adds for user kernels: the C++ compiler and the prelude's hash. */
void cpu_kernel_id(char *out, size_t cap);

#endif
