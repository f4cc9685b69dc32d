/* gx/range.h -- part of gx.h (include gx.h, not this file). */
#ifndef GX_RANGE_H
#define GX_RANGE_H
#include "../gx.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
