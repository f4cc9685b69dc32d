/* gx/reduce.h -- part of gx.h (include gx.h, not this file). */
#ifndef GX_REDUCE_H
#define GX_REDUCE_H
#include "../gx.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
