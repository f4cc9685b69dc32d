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
/* Programmatic dependent launch (sm_90+).  A kernel whose first statement is
 * GX_PDL_ENTER() waits there until the kernel before it on the stream has finished
 * and its writes are visible, then lets the next kernel's blocks be scheduled.  gx
 * launches such kernels (gx__kernel.pdl) with programmatic stream serialisation, so
 * their blocks are resident, waiting, when the previous kernel ends: the launch gap
 * between two small kernels (and between graph nodes) is hidden.  Nothing may come
 * before it that touches global memory. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GX_PDL_ENTER() asm volatile("griddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;" ::: "memory")
#else
#define GX_PDL_ENTER() ((void)0)
#endif
