/* gx prelude (CUDA) */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define GXF static __device__ __forceinline__
#define GX__CUDA 1 /* the CUDA prelude (sincos_fast.h) */
#pragma nv_diag_suppress 177 /* unused static helpers are expected */
