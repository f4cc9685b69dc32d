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
/* What the compiler id adds for user kernels: the C++ compiler and the prelude's hash. */
void cpu_kernel_id(char *out, size_t cap);

#endif
