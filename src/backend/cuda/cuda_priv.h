/* cuda_priv.h -- what the CUDA backend's files share (loader, backend, libraries,
 * user-kernel reflection), plus the NVRTC entry points that GPU-less tests call
 * directly.  Nothing outside src/backend/cuda/ includes it, tests aside.
 *
 * gx never links libcuda or libnvrtc: both are dlopen'ed at run time so that one gx
 * binary runs on machines without a driver (the CPU backend still works) and picks
 * up whichever NVRTC the machine has.  <cuda.h> and <nvrtc.h> are included for
 * types and enums only; every call goes through the tables below. */
#ifndef GX_CUDA_PRIV_H
#define GX_CUDA_PRIV_H

#include "backend/backend.h"

#include <cuda.h>
#include <nvrtc.h>

/* Field name, header symbol, required?  The function's type is taken from the
 * header symbol with __typeof__, and the name we look up in libcuda is that symbol
 * *after* macro expansion (cuda.h maps e.g. cuMemAlloc to cuMemAlloc_v2 and
 * cuStreamDestroy to cuStreamDestroy_v2), so the ABI version we call always
 * matches the prototype we compiled against.  Optional entries may be NULL; the
 * code checks them before use. */
#define CUDA_DRIVER_FUNCS(X)                                                                     \
    X(GetErrorName, cuGetErrorName, 1)                                                           \
    X(GetErrorString, cuGetErrorString, 1)                                                       \
    X(Init, cuInit, 1)                                                                           \
    X(DriverGetVersion, cuDriverGetVersion, 1)                                                   \
    X(DeviceGet, cuDeviceGet, 1)                                                                 \
    X(DeviceGetCount, cuDeviceGetCount, 1)                                                       \
    X(DeviceGetName, cuDeviceGetName, 1)                                                         \
    X(DeviceGetAttribute, cuDeviceGetAttribute, 1)                                               \
    X(DeviceTotalMem, cuDeviceTotalMem, 1)                                                       \
    X(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 1)                                       \
    X(DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, 1)                                     \
    X(DevicePrimaryCtxReset, cuDevicePrimaryCtxReset, 1)                                         \
    X(CtxGetCurrent, cuCtxGetCurrent, 1)                                                         \
    X(CtxSetCurrent, cuCtxSetCurrent, 1)                                                         \
    X(StreamCreate, cuStreamCreate, 1)                                                           \
    X(StreamDestroy, cuStreamDestroy, 1)                                                         \
    X(StreamSynchronize, cuStreamSynchronize, 1)                                                 \
    X(MemGetInfo, cuMemGetInfo, 1)                                                               \
    X(MemAlloc, cuMemAlloc, 1)                                                                   \
    X(MemFree, cuMemFree, 1)                                                                     \
    X(MemcpyHtoDAsync, cuMemcpyHtoDAsync, 1)                                                     \
    X(MemcpyDtoHAsync, cuMemcpyDtoHAsync, 1)                                                     \
    X(MemcpyDtoDAsync, cuMemcpyDtoDAsync, 1)                                                     \
    X(ModuleLoadData, cuModuleLoadData, 1)                                                       \
    X(ModuleUnload, cuModuleUnload, 1)                                                           \
    X(ModuleGetFunction, cuModuleGetFunction, 1)                                                 \
    X(LaunchKernel, cuLaunchKernel, 1)                                                           \
    X(FuncSetAttribute, cuFuncSetAttribute, 0)                                                   \
    X(FuncGetAttribute, cuFuncGetAttribute, 0)                                                   \
    X(OccupancyMaxPotentialBlockSize, cuOccupancyMaxPotentialBlockSize, 0)                       \
    X(MemPoolCreate, cuMemPoolCreate, 0)                                                         \
    X(MemPoolDestroy, cuMemPoolDestroy, 0)                                                       \
    X(MemPoolSetAttribute, cuMemPoolSetAttribute, 0)                                             \
    X(MemPoolGetAttribute, cuMemPoolGetAttribute, 0)                                             \
    X(MemPoolTrimTo, cuMemPoolTrimTo, 0)                                                         \
    X(MemAllocFromPoolAsync, cuMemAllocFromPoolAsync, 0)                                         \
    X(MemFreeAsync, cuMemFreeAsync, 0)                                                           \
    X(EventCreate, cuEventCreate, 1)                                                             \
    X(EventDestroy, cuEventDestroy, 1)                                                           \
    X(EventRecord, cuEventRecord, 1)                                                             \
    X(EventSynchronize, cuEventSynchronize, 1)                                                   \
    X(EventElapsedTime, cuEventElapsedTime, 1)                                                   \
    X(StreamWaitEvent, cuStreamWaitEvent, 0)                                                     \
    X(StreamQuery, cuStreamQuery, 0)                                                             \
    X(LaunchCooperativeKernel, cuLaunchCooperativeKernel, 0)                                     \
    X(LaunchKernelEx, cuLaunchKernelEx, 0)                                                       \
    X(OccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor, 0) \
    X(MemHostAlloc, cuMemHostAlloc, 0)                                                           \
    X(MemFreeHost, cuMemFreeHost, 0)                                                             \
    X(MemHostGetDevicePointer, cuMemHostGetDevicePointer, 0)                                     \
    X(PointerGetAttribute, cuPointerGetAttribute, 0)                                             \
    X(PointerGetAttributes, cuPointerGetAttributes, 0)                                           \
    X(ModuleGetGlobal, cuModuleGetGlobal, 0)                                                     \
    X(StreamBeginCapture, cuStreamBeginCapture, 0)                                               \
    X(StreamEndCapture, cuStreamEndCapture, 0)                                                   \
    X(GraphInstantiate, cuGraphInstantiate, 0)                                                   \
    X(GraphLaunch, cuGraphLaunch, 0)                                                             \
    X(GraphExecDestroy, cuGraphExecDestroy, 0)                                                   \
    X(GraphDestroy, cuGraphDestroy, 0)

#define CUDA_NVRTC_FUNCS(X)                               \
    X(Version, nvrtcVersion, 1)                           \
    X(GetErrorString, nvrtcGetErrorString, 1)             \
    X(CreateProgram, nvrtcCreateProgram, 1)               \
    X(DestroyProgram, nvrtcDestroyProgram, 1)             \
    X(CompileProgram, nvrtcCompileProgram, 1)             \
    X(GetProgramLogSize, nvrtcGetProgramLogSize, 1)       \
    X(GetProgramLog, nvrtcGetProgramLog, 1)               \
    X(GetPTXSize, nvrtcGetPTXSize, 1)                     \
    X(GetPTX, nvrtcGetPTX, 1)                             \
    X(GetCUBINSize, nvrtcGetCUBINSize, 0)                 \
    X(GetCUBIN, nvrtcGetCUBIN, 0)                         \
    X(GetNumSupportedArchs, nvrtcGetNumSupportedArchs, 0) \
    X(GetSupportedArchs, nvrtcGetSupportedArchs, 0)       \
    X(GetLTOIRSize, nvrtcGetLTOIRSize, 0)                 \
    X(GetLTOIR, nvrtcGetLTOIR, 0)                         \
    X(AddNameExpression, nvrtcAddNameExpression, 0)       \
    X(GetLoweredName, nvrtcGetLoweredName, 0)

#define CUDA__FIELD(field, sym, req) __typeof__(&sym) field;
typedef struct cuda_driver_api {
    CUDA_DRIVER_FUNCS(CUDA__FIELD)
} cuda_driver_api;
typedef struct cuda_nvrtc_api {
    CUDA_NVRTC_FUNCS(CUDA__FIELD)
} cuda_nvrtc_api;
#undef CUDA__FIELD

/* Filled once by the loader; read-only afterwards (valid only once
 * cuda_driver_load() / cuda_nvrtc_load() returned 1). */
extern cuda_driver_api cuda_drv;
extern cuda_nvrtc_api cuda_nvrtc;

/* ------------------------------------------------------------ run-time loading (cuda_dl.c) */

/* The symbol name after macro expansion: cuda.h and cublas_v2.h rename entry points
 * (cuMemAlloc -> cuMemAlloc_v2), and the renamed one matches the prototype. */
#define CUDA_STR_(x) #x
#define CUDA_STR(x) CUDA_STR_(x)

/* One entry point: its exported name, the function pointer to fill (NULL when
 * absent), and whether the library is unusable without it. */
typedef struct cuda_dl_sym {
    const char *name;
    void *slot;
    int required;
} cuda_dl_sym;

/* A library loaded at run time.  The first fields describe it; cuda_dl_open fills
 * the rest. */
typedef struct cuda_dl_lib {
    const char *what;         /* "cuBLAS": names the library in messages */
    const char *const *names; /* file names, tried in order; NULL-terminated */
    bool toolkit_dirs;        /* also under $CUDA_HOME/lib64, /usr/local/cuda/lib64 */
    const cuda_dl_sym *syms;
    size_t nsyms;
    const char *fix_absent; /* what to do when no file loads */
    const char *fix_old;    /* ... when a required entry point is missing */
    void *handle;
    int ok;             /* loaded, every required entry point found */
    char path[512];     /* the file that loaded */
    char problem[1024]; /* why not: every file tried, or the entry point */
} cuda_dl_lib;

/* Opens the first loadable of lib->names and resolves lib->syms; 1 on success, else
 * 0 with lib->problem set.  Not thread-safe by itself: each library calls it once
 * per process from its own pthread_once routine, which also runs what else the
 * library needs once (cuInit, NVRTC's arch list). */
int cuda_dl_open(cuda_dl_lib *lib);
/* 1 when one of names loads (same search); found gets its file name.  Closes it
 * again: `gx info` only reports what is there. */
int cuda_dl_probe(const char *const *names, char *found, size_t n);

/* The file names of the toolkit's libraries, for loading and for `gx info`. */
extern const char *const cuda_cublas_names[];
extern const char *const cuda_cufft_names[];
extern const char *const cuda_curand_names[];

/* ------------------------------------------------------------ loader */

/* Loads libcuda.so.1 and runs cuInit(0) once per process (thread-safe).  1 if the
 * driver is usable and reports at least one device; otherwise 0 and
 * cuda_driver_problem() says what was found and what to do. */
int cuda_driver_load(void);
/* Milliseconds the driver load (dlopen, cuInit, device count) took in this process. */
double cuda_driver_load_ms(void);
const char *cuda_driver_problem(void);
int cuda_driver_version(void); /* e.g. 13000; 0 without a driver */
int cuda_device_count(void);   /* 0 without a driver */

/* Loads NVRTC once per process (thread-safe, independent of the driver).  1 if
 * usable; otherwise 0 and cuda_nvrtc_problem() names what was tried. */
int cuda_nvrtc_load(void);
const char *cuda_nvrtc_problem(void);

/* NVRTC's version; returns 0 (and leaves the outputs 0) when NVRTC is absent. */
int cuda_nvrtc_version(int *major, int *minor);

/* Compiles CUDA C++ `source` for compute capability cc_major.cc_minor with NVRTC
 * alone (no driver, no GPU needed).  want_ptx = 0 gives a cubin for sm_XY; when this
 * NVRTC cannot target sm_XY itself (a device newer than the toolkit), or want_ptx
 * != 0, the result is NUL-terminated PTX for the newest virtual arch <= XY, which
 * cuModuleLoadData also accepts (the driver JITs it).  *out is malloc'ed (free()),
 * *len its size in bytes (PTX: including the NUL).  log, if not NULL, receives the
 * malloc'ed NVRTC log (or NULL when empty), on success and on failure.
 * Errors: GX_ERR_COMPILE with the (trimmed) log and label, GX_ERR_UNSUPPORTED when
 * NVRTC is missing or cannot target the arch, GX_ERR_INVALID_ARGUMENT. */
gx_status cuda_nvrtc_compile(const char *source, const char *label, int cc_major, int cc_minor, int want_ptx,
                             void **out, size_t *len, char **log);
/* The same with extra NVRTC options (after gx's own) and in-memory headers
 * (hnames[i] is the #include name of htexts[i]). */
gx_status cuda_nvrtc_compile_ex(const char *source, const char *label, int cc_major, int cc_minor, int want_ptx,
                                int nopts, const char *const *opts, int nheaders, const char *const *htexts,
                                const char *const *hnames, void **out, size_t *len, char **log);

/* One NVRTC compilation with everything cuda_nvrtc_compile_ex takes, plus: out_kind
 * 1 = PTX, 0 = cubin (PTX where NVRTC cannot target the arch), 2 = LTO-IR (the
 * caller passes -dlto); name expressions (nvrtcAddNameExpression), whose lowered
 * (mangled) names come back in lowered[i] (malloc'ed; NULL when not asked). */
typedef struct cuda_nvrtc_req {
    const char *source, *label;
    int cc_major, cc_minor, out_kind;
    int nopts;
    const char *const *opts;
    int nheaders;
    const char *const *htexts, *const *hnames;
    int nexprs;
    const char *const *exprs;
    char **lowered;
    int got_ptx; /* out: 1 when the result is PTX */
} cuda_nvrtc_req;
gx_status cuda_nvrtc_compile_req(cuda_nvrtc_req *rq, void **out, size_t *len, char **log);

/* The CUDA include folders as a colon-separated list (cuda_include.c: GX_CUDA_INCLUDE,
 * else found from the loaded NVRTC, CUDA_HOME, CUDA_PATH, /usr/local/cuda). */
void cuda_include_dirs(char *out, size_t n);
/* libcudadevrt.a (GX_CUDA_DEVRT, beside libnvrtc, the toolkit's lib64); 1 if it
 * exists, else 0 with out holding the last path tried. */
int cuda_devrt_path(char *out, size_t n);

/* nvJitLink (cuda_link.c), loaded on first use like NVRTC.  Links relocatable
 * cubins / PTX / LTO-IR (types: the NVJITLINK_INPUT_* values) and, when devrt is
 * not NULL, the device runtime library into one cubin for sm_<arch>.  lto: pass
 * -lto.  GX_ERR_UNSUPPORTED naming what was tried when nvJitLink is absent;
 * GX_ERR_COMPILE with the linker's log on a link error. */
typedef struct cuda_link_input {
    const void *data;
    size_t len;
    int type;
    const char *name;
} cuda_link_input;
gx_status cuda_link(const cuda_link_input *in, int nin, const char *devrt, int arch, int lto, void **out,
                    size_t *len);

/* User kernels (gx_kernel_compile): the source starts with GX__USER_KERNEL_MAGIC
 * and carries its NVRTC options as "//gx:opt ..." lines; compiled with gx/device.h
 * available as an in-memory header. */
gx_status cuda_nvrtc_compile_user(const char *source, const char *label, int cc_major, int cc_minor, int want_ptx,
                                  void **out, size_t *len, char **log);

/* The target cuda_nvrtc_compile picks for a cc: sets *arch (e.g. 90) and *ptx
 * (1 when only PTX for a lower virtual arch can be produced).  GX_ERR_UNSUPPORTED
 * when NVRTC is absent or supports nothing <= the cc; sets no error message. */
gx_status cuda_nvrtc_target(int cc_major, int cc_minor, int *arch, int *ptx);

/* The context's stream and device, with its primary context made current on the
 * calling thread (for vendor libraries and user kernels).  Sets the error on failure. */
gx_status cuda_current(gx__backend *be, CUstream *stream, CUdevice *dev);

/* The table's lib slots: cuBLAS (cuda_blas.c) and cuFFT (cuda_fft.c), each loaded
 * on first use, with per-context state (handle, plans) freed through gx__ctx_ext. */
gx_status cuda_gemm(gx__backend *be, const gx__gemm *g);
gx_status cuda_fft(gx__backend *be, const gx__fft *f);

/* The table's comm slots (GX__CAP_COMM): NCCL, loaded on first use (cuda_nccl.c). */
bool cuda_nccl_carries(gx__backend *be, gx_dtype t);
gx_status cuda_nccl_unique_id(gx__backend *be, void *id, size_t cap, size_t *len);
gx_status cuda_nccl_init_rank(gx__backend *be, const void *id, size_t len, int nranks, int rank, double deadline_ms,
                              void **out);
gx_status cuda_nccl_init_all(gx__backend *const *bes, int n, void **comms);
gx_status cuda_nccl_run(gx__backend *be, void *comm, const gx__coll *k);
gx_status cuda_nccl_group(gx__backend *be, void *comm, bool begin, double deadline_ms);
gx_status cuda_nccl_poll(gx__backend *be, void *comm, bool *done);
void cuda_nccl_abort(gx__backend *be, void *comm);
void cuda_nccl_destroy(gx__backend *be, void *comm);
gx_status cuda_nccl_version(char *buf, size_t n);

/* ------------------------------------------------------------ errors */

/* "CUDA_ERROR_OUT_OF_MEMORY" / "out of memory"; never NULL. */
const char *cuda_result_name(CUresult r);
const char *cuda_result_string(CUresult r);
/* 1 for the sticky errors that leave the context unusable (illegal address,
 * launch failed, misaligned address, illegal instruction, ...). */
int cuda_result_is_fault(CUresult r);
/* The gx status for a driver result (OOM, kernel fault, no device, ...). */
gx_status cuda_result_status(CUresult r);

#endif
