/* gx/linalg.h -- part of gx.h (include gx.h, not this file). */
#ifndef GX_LINALG_H
#define GX_LINALG_H
#include "../gx.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
