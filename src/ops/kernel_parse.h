/* kernel_parse.h -- reads a __global__ entry's parameter list from CUDA source. */
#ifndef GX_KERNEL_PARSE_H
#define GX_KERNEL_PARSE_H

#include "gx.h"
#include <stdbool.h>

#define KP_MAX_PARAMS 64

typedef struct kp_param {
    char name[64];  /* "" when the declaration has none */
    char type[104]; /* as written, qualifiers dropped: "float *", "int64_t" */
    bool pointer;   /* a pointer (or array) parameter */
    gx_dtype dtype; /* scalar type, or pointee type; GX_DTYPE_COUNT when unknown */
} kp_param;

/* Parameters of the __global__ function named `entry` in `source` (comments
 * skipped).  Returns their count, or -1 when no such definition can be read
 * (a mangled name, macros around the signature, more than KP_MAX_PARAMS). */
int kp_params(const char *source, const char *entry, kp_param *out);

#endif
