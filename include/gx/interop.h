/*
 * gx/interop.h -- gx inside a larger program: arrays over memory gx did not
 * allocate, DLPack exchange without copies, streams the application owns.
 * (Included by gx.h.)
 *
 * Sharing the CUDA runtime's context.  A CUDA gx context runs on the device's
 * PRIMARY context, the one the CUDA runtime (cudaMalloc, cudaStream_t, PyTorch,
 * CuPy) uses too.  So device memory from cudaMalloc is valid in gx kernels, gx's
 * device pointers are valid in runtime calls, and a cudaStream_t is a CUstream
 * that gx can run on (gx_stream_wrap).  gx retains the primary context while a gx
 * context lives and releases it at gx_ctx_destroy; it never destroys or resets
 * what the application still uses -- with one exception: after a kernel FAULT
 * (GX_ERR_KERNEL_FAULT), when the last gx context on that device is destroyed, gx
 * resets the primary context (cuDevicePrimaryCtxReset).  CUDA makes such a fault
 * sticky, so the context was unusable for every user in the process anyway; the
 * reset frees its memory, including the application's.
 *
 * Lifetimes.  An array made over external memory (gx_array_wrap, gx_array_from_dlpack)
 * never owns the bytes: gx never frees them nor returns them to its memory pool.
 * When the last handle (the array and every view of it) is released, or the context
 * is destroyed, gx calls the deleter you gave (or the DLPack producer's), once.  The
 * memory must stay valid until then: freeing it earlier (cudaFree, a PyTorch tensor
 * going out of scope without a reference held by its capsule) is the caller's error
 * and gx cannot detect it -- later gx calls then read freed memory.  Work gx queued
 * on the memory may still be running when the deleter is called on a GPU: the
 * deleter must free in stream order (cudaFreeAsync on gx's stream) or synchronise
 * first (gx_sync) if it frees at once.
 */
#ifndef GX_INTEROP_H
#define GX_INTEROP_H

#include "../gx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* DLPack's managed tensor (<dlpack/dlpack.h>).  Declared here without its fields so
 * that gx.h does not need DLPack's header; include <dlpack/dlpack.h> to read them. */
struct DLManagedTensor;

/* Called once, when the last handle over wrapped memory is released: user is
 * gx_wrap_opts.user, ptr the pointer given to gx_array_wrap.  It may call gx
 * functions on other contexts, and on this one (the context lock is recursive)
 * except gx_ctx_destroy. */
typedef void (*gx_wrap_deleter)(void *user, void *ptr);

typedef struct gx_wrap_opts {
    int strides_in_bytes; /* nonzero: strides are bytes (NumPy, __cuda_array_interface__),
                           * each a multiple of the element size; 0: elements */
    gx_wrap_deleter deleter; /* NULL: nothing is called (the memory is the caller's) */
    void *user;              /* passed to the deleter */
    int readonly;            /* nonzero: gx only reads the array (and its views): any
                              * call that would write it is GX_ERR_INVALID_ARGUMENT.
                              * Needed for strides whose elements overlap (a stride 0
                              * that broadcasts one value along an axis) */
    uint64_t reserved[6];    /* zero (see the conventions) */
} gx_wrap_opts;

/* A new array over memory gx did not allocate (zero copy): ptr is the address of
 * element (0, ..., 0); element i lies at ptr + sum(i[d] * strides[d]) elements (or
 * bytes with opts->strides_in_bytes).  strides NULL = dense row-major; strides may
 * be negative or, with opts->readonly, 0.
 *  - CUDA backend: ptr is device memory (cudaMalloc, cuMemAlloc, a PyTorch/CuPy
 *    tensor's data_ptr, managed memory) of the context's device.  gx asks the driver
 *    (cuPointerGetAttributes): a host pointer, memory of another device or a range
 *    that runs past the end of its allocation is GX_ERR_INVALID_ARGUMENT.
 *  - CPU backend: ptr is host memory; writes by gx are visible in it at once.
 * ptr must be aligned to the element (to the component for c64/c128: 4 or 8 bytes)
 * else GX_ERR_INVALID_ARGUMENT naming the alignment; gx's vectorised kernels check
 * wider alignment themselves.  ptr may be NULL only when the shape is empty.  Strides
 * under which two elements share bytes are GX_ERR_INVALID_ARGUMENT unless
 * opts->readonly (the check is exact for layouts whose axes, sorted by |stride|, each
 * step over all the smaller ones -- dense, sliced, permuted, reversed; rarer
 * interleavings are refused too).  dtype: any array dtype.  The array behaves as any other (views, every op as input and
 * output); gx_array_describe reports it as not a view.  Its bytes are not counted in
 * gx_memory_stats.  On failure the deleter is NOT called. */
GX_API gx_status gx_array_wrap(gx_ctx *ctx, void *ptr, gx_dtype dtype, int ndim, const int64_t *shape,
                               const int64_t *strides, const gx_wrap_opts *opts, gx_array **out);

/* Whether a is read-only (made by gx_array_wrap with opts->readonly, by
 * gx_array_from_dlpack from overlapping strides, or a view of one): *out 1 or 0. */
GX_API gx_status gx_array_readonly(const gx_array *a, int *out);

/* ------------------------------------------------------------------ DLPack */

/* Sentinel for gx_dlpack_opts.stream: no ordering at all (the DLPack Python
 * protocol's stream=-1): the consumer orders its work itself. */
#define GX_DLPACK_NO_SYNC ((void *)(intptr_t)-1)

typedef struct gx_dlpack_opts {
    /* The consumer's stream (CUDA backend): a CUstream / cudaStream_t, or the values
     * of the DLPack Python protocol, which are the driver's too: NULL or (void *)1 the
     * legacy default stream, (void *)2 the per-thread default stream.  gx makes it
     * wait (cuStreamWaitEvent, without blocking the host) for the work gx queued so
     * far on its current stream, so the consumer sees the finished values.
     * GX_DLPACK_NO_SYNC skips that.  Ignored on the CPU backend (work is complete
     * when gx calls return). */
    void *stream;
    uint64_t reserved[7]; /* zero (see the conventions) */
} gx_dlpack_opts;

/* Exports a as a DLPack tensor without a copy: *out's dl_tensor has a's data
 * pointer, shape, strides (in elements) and dtype, device kDLCUDA with the context's
 * device index (CUDA backend) or kDLCPU (CPU backend), byte_offset 0.  The tensor
 * holds its own reference to a's storage (a may be released at once); calling
 * (*out)->deleter(*out) releases it -- exactly once, as DLPack requires, by the
 * consumer (torch.from_dlpack and cupy.from_dlpack do).  The consumer must not
 * outlive the context: gx_ctx_destroy frees the memory, and a deleter called
 * after that does nothing.  dtype map: bool -> kDLBool (DLPack >= 0.8's code 6),
 * i* -> kDLInt, u* -> kDLUInt, f16/f32/f64 -> kDLFloat (16/32/64 bits), bf16 ->
 * kDLBfloat (16 bits), c64/c128 -> kDLComplex.
 * opts may be NULL (the legacy default stream).  GX_ERR_UNSUPPORTED when gx was
 * built without DLPack's header. */
GX_API gx_status gx_array_to_dlpack(gx_array *a, const gx_dlpack_opts *opts, struct DLManagedTensor **out);

/* Imports a DLPack tensor without a copy, taking ownership of t on success: gx calls
 * t->deleter(t) (if not NULL) once the new array and all its views are released or
 * the context is destroyed.  On failure t stays the caller's (call its deleter).
 * Accepted: device kDLCPU on the CPU backend; kDLCUDA (or kDLCUDAManaged) with the
 * context's device index on the CUDA backend; dtypes kDLBool of 8 bits (bool),
 * kDLInt/kDLUInt of 8..64 bits, kDLFloat of 16/32/64 bits (f16/f32/f64), kDLBfloat of
 * 16 bits (bf16), kDLComplex of 64/128 bits,
 * lanes 1 (a kDLUInt of 8 bits is u8, never bool).  Anything
 * else is refused naming what it got: a dtype (bfloat32, 1-bit, lanes > 1) is
 * GX_ERR_DTYPE, a device GX_ERR_INVALID_ARGUMENT.  strides NULL = dense row-major;
 * data + byte_offset is element (0, ..., 0).  Strides whose elements overlap (an
 * expanded tensor) make a read-only array (gx_array_readonly).  The checks of
 * gx_array_wrap apply (pointer, device, alignment).  Ordering: the producer must have
 * ordered its work before gx's current stream (pass gx's stream handle,
 * gx_ctx_stream_handle, as __dlpack__(stream=...) in Python). */
GX_API gx_status gx_array_from_dlpack(gx_ctx *ctx, struct DLManagedTensor *t, gx_array **out);

/* ------------------------------------------------------------------ streams */

/* A gx stream over a stream the application owns (CUDA backend: a CUstream or
 * cudaStream_t of the context's device, e.g. from cudaStreamCreate or
 * torch.cuda.current_stream().cuda_stream; NULL is not accepted: wrap (void *)1
 * for the legacy default stream).  Make it current with gx_ctx_set_stream and gx
 * allocates, copies and launches on it, ordered with the application's own work.
 * gx never destroys the CUstream: gx_stream_destroy waits for it and forgets the
 * wrapper (as does gx_ctx_destroy); destroy the wrapper before the CUstream.  CPU
 * backend: a token, like gx_stream_create's (any non-NULL handle is accepted and
 * read back by gx_stream_handle). */
GX_API gx_status gx_stream_wrap(gx_ctx *ctx, void *native, gx_stream **out);
/* The native handle of s (CUDA: its CUstream, for cuBLAS, cuDNN, the runtime, or
 * torch.cuda.ExternalStream).  CPU backend: NULL for gx_stream_create's streams. */
GX_API gx_status gx_stream_handle(gx_stream *s, void **out);
/* The native handle of the context's current stream (its default stream unless
 * gx_ctx_set_stream chose another): what other libraries should order against.
 * CPU backend: NULL. */
GX_API gx_status gx_ctx_stream_handle(gx_ctx *ctx, void **out);

#ifdef __cplusplus
}
#endif
#endif
