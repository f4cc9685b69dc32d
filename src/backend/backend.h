/* backend.h -- what the files of the backend layer share: the backends' tables and
 * the questions `gx info` and the registry ask them.  Only src/backend/ (and tests
 * of a backend) include it: the core and the operations reach a backend through
 * the table in ctx->be alone, handed to the core by src/backend/registry.c. */
#ifndef GX_BACKEND_H
#define GX_BACKEND_H

#include "core/gx_internal.h"

extern const gx__backend_iface gx__cpu_iface;
#ifdef GX_HAVE_CUDA
extern const gx__backend_iface gx__cuda_iface;
#endif

/* 1 if the CUDA backend was compiled in and a device answers; *count devices. */
int gx__cuda_available(int *count);
/* Versions for `gx info` ("" when absent; a sentence when CUDA was not built). */
void gx__cuda_versions(char *driver, size_t dn, char *nvrtc, size_t nn, char *libs, size_t ln);
/* The C compiler the CPU backend uses, for `gx info`. */
void gx__cpu_describe(char *cc, size_t n);

#endif
