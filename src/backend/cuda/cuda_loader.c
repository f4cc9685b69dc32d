/* cuda_loader.c -- finds the NVIDIA driver and NVRTC at run time, maps their errors,
 * compiles CUDA C++ with NVRTC, and reports versions for `gx info`.
 *
 * Both libraries are loaded (through cuda_dl.c) once per process under
 * pthread_once, so concurrent first uses from several threads are safe and the
 * tables are immutable afterwards. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend/cuda/cuda_priv.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cuda_driver_api cuda_drv;
cuda_nvrtc_api cuda_nvrtc;

#define CUDA__SYM(table, field, sym, req) {CUDA_STR(sym), &table.field, req},
#define CUDA__DRV_SYM(field, sym, req) CUDA__SYM(cuda_drv, field, sym, req)
#define CUDA__NV_SYM(field, sym, req) CUDA__SYM(cuda_nvrtc, field, sym, req)
static const cuda_dl_sym drv_syms[] = {CUDA_DRIVER_FUNCS(CUDA__DRV_SYM)};
static const cuda_dl_sym nv_syms[] = {CUDA_NVRTC_FUNCS(CUDA__NV_SYM)};
#undef CUDA__NV_SYM
#undef CUDA__DRV_SYM
#undef CUDA__SYM

/* The driver is never searched for in the toolkit's folders: those hold only a
 * stub libcuda that cannot run anything. */
static const char *const drv_names[] = {"libcuda.so.1", NULL};
static cuda_dl_lib drv_lib = {
    .what = "the NVIDIA driver library",
    .names = drv_names,
    .syms = drv_syms,
    .nsyms = sizeof drv_syms / sizeof drv_syms[0],
    .fix_absent = "install the NVIDIA driver, or use GX_BACKEND=cpu",
    .fix_old = "the NVIDIA driver is too old for gx; update the driver, or use GX_BACKEND=cpu",
};

static const char *const nv_names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", NULL};
static cuda_dl_lib nv_lib = {
    .what = "NVRTC (the CUDA runtime compiler, libnvrtc.so)",
    .names = nv_names,
    .toolkit_dirs = true,
    .syms = nv_syms,
    .nsyms = sizeof nv_syms / sizeof nv_syms[0],
    .fix_absent = "install the CUDA toolkit's NVRTC (e.g. the cuda-nvrtc package, or pip "
                  "nvidia-cuda-nvrtc) and add its lib directory to LD_LIBRARY_PATH or set CUDA_HOME",
    .fix_old = "too old an NVRTC; install NVRTC 12 or newer",
};

/* ------------------------------------------------------------ driver */

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static int drv_ok;
static int drv_version;
static int drv_count;
static char drv_problem[1024];

static void drv_load_once(void)
{
    if (!cuda_dl_open(&drv_lib)) {
        snprintf(drv_problem, sizeof drv_problem, "%s", drv_lib.problem);
        return;
    }
    CUresult r = cuda_drv.Init(0);
    if (r != CUDA_SUCCESS) {
        snprintf(drv_problem, sizeof drv_problem,
                 "cuInit(0) failed: %s (%s); the driver library was found but no usable GPU "
                 "answered (check nvidia-smi, CUDA_VISIBLE_DEVICES), or use GX_BACKEND=cpu",
                 cuda_result_name(r), cuda_result_string(r));
        return;
    }
    if (cuda_drv.DriverGetVersion(&drv_version) != CUDA_SUCCESS)
        drv_version = 0;
    int n = 0;
    r = cuda_drv.DeviceGetCount(&n);
    if (r != CUDA_SUCCESS) {
        snprintf(drv_problem, sizeof drv_problem, "cuDeviceGetCount failed: %s (%s); use GX_BACKEND=cpu",
                 cuda_result_name(r), cuda_result_string(r));
        return;
    }
    if (n <= 0) {
        snprintf(drv_problem, sizeof drv_problem,
                 "the NVIDIA driver (%d.%d) reports no CUDA devices (check nvidia-smi and "
                 "CUDA_VISIBLE_DEVICES), or use GX_BACKEND=cpu",
                 drv_version / 1000, drv_version % 1000 / 10);
        return;
    }
    drv_count = n;
    drv_ok = 1;
}

int cuda_driver_load(void)
{
    pthread_once(&drv_once, drv_load_once);
    return drv_ok;
}

const char *cuda_driver_problem(void)
{
    cuda_driver_load();
    return drv_ok ? "" : drv_problem;
}

int cuda_driver_version(void)
{
    cuda_driver_load();
    return drv_version;
}

int cuda_device_count(void)
{
    cuda_driver_load();
    return drv_count;
}

int gx__cuda_available(int *count)
{
    int ok = cuda_driver_load();
    if (count)
        *count = ok ? drv_count : 0;
    return ok;
}

/* ------------------------------------------------------------ errors */

const char *cuda_result_name(CUresult r)
{
    const char *s = NULL;
    if (cuda_drv.GetErrorName && cuda_drv.GetErrorName(r, &s) == CUDA_SUCCESS && s)
        return s;
    static _Thread_local char buf[48];
    snprintf(buf, sizeof buf, "CUresult %d", (int)r);
    return buf;
}

const char *cuda_result_string(CUresult r)
{
    const char *s = NULL;
    if (cuda_drv.GetErrorString && cuda_drv.GetErrorString(r, &s) == CUDA_SUCCESS && s)
        return s;
    return "unknown driver error";
}

int cuda_result_is_fault(CUresult r)
{
    switch ((int)r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case 721: /* CUDA_ERROR_TENSOR_MEMORY_LEAK (12.8+); by value so older headers build */ return 1;
    default: return 0;
    }
}

gx_status cuda_result_status(CUresult r)
{
    if (r == CUDA_SUCCESS)
        return GX_OK;
    if (cuda_result_is_fault(r))
        return GX_ERR_KERNEL_FAULT;
    switch ((int)r) {
    case CUDA_ERROR_OUT_OF_MEMORY: return GX_ERR_OUT_OF_MEMORY;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE: return GX_ERR_NO_DEVICE;
    case CUDA_ERROR_NOT_SUPPORTED: return GX_ERR_UNSUPPORTED;
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND: return GX_ERR_COMPILE;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: return GX_ERR_LAUNCH;
    default: return GX_ERR_BACKEND;
    }
}

/* ------------------------------------------------------------ NVRTC */

static pthread_once_t nv_once = PTHREAD_ONCE_INIT;
static int nv_ok;
static int nv_major, nv_minor;
static char nv_path[512];
static char nv_problem[1024];
static int nv_archs[64];
static int nv_narchs; /* 0 = unknown (old NVRTC): trust the requested arch */

static void nv_load_once(void)
{
    if (!cuda_dl_open(&nv_lib)) {
        snprintf(nv_problem, sizeof nv_problem, "%s", nv_lib.problem);
        return;
    }
    snprintf(nv_path, sizeof nv_path, "%s", nv_lib.path);
    if (cuda_nvrtc.Version(&nv_major, &nv_minor) != NVRTC_SUCCESS)
        nv_major = nv_minor = 0;
    int n = 0;
    if (cuda_nvrtc.GetNumSupportedArchs && cuda_nvrtc.GetSupportedArchs &&
        cuda_nvrtc.GetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0 &&
        n <= (int)(sizeof nv_archs / sizeof nv_archs[0]) && cuda_nvrtc.GetSupportedArchs(nv_archs) == NVRTC_SUCCESS)
        nv_narchs = n;
    nv_ok = 1;
}

int cuda_nvrtc_load(void)
{
    pthread_once(&nv_once, nv_load_once);
    return nv_ok;
}

const char *cuda_nvrtc_problem(void)
{
    cuda_nvrtc_load();
    return nv_ok ? "" : nv_problem;
}

int cuda_nvrtc_version(int *major, int *minor)
{
    int ok = cuda_nvrtc_load();
    if (major)
        *major = ok ? nv_major : 0;
    if (minor)
        *minor = ok ? nv_minor : 0;
    return ok;
}

gx_status cuda_nvrtc_target(int cc_major, int cc_minor, int *arch, int *ptx)
{
    /* Sets no message: open() asks this early, build() reports the problem. */
    if (!cuda_nvrtc_load())
        return GX_ERR_UNSUPPORTED;
    int want = cc_major * 10 + cc_minor;
    *arch = want;
    *ptx = 0;
    if (nv_narchs == 0)
        return GX_OK;
    int best = 0;
    for (int i = 0; i < nv_narchs; i++) {
        if (nv_archs[i] == want)
            return GX_OK;
        if (nv_archs[i] < want && nv_archs[i] > best)
            best = nv_archs[i];
    }
    if (best == 0)
        return GX_ERR_UNSUPPORTED;
    /* A device newer than this NVRTC: emit PTX for the newest arch it knows and let
     * the driver JIT it (slower first load, but it runs). */
    *arch = best;
    *ptx = 1;
    return GX_OK;
}

/* Keeps compile errors readable (and inside gx's 8 KB message buffer). */
#define CUDA_LOG_KEEP 4096

gx_status cuda_nvrtc_compile(const char *source, const char *label, int cc_major, int cc_minor, int want_ptx,
                             void **out, size_t *len, char **log)
{
    return cuda_nvrtc_compile_ex(source, label, cc_major, cc_minor, want_ptx, 0, NULL, 0, NULL, NULL, out, len, log);
}

/* At most this many user options (more is a usage error, reported by the caller). */
#define CUDA_MAX_USER_OPTS 60

gx_status cuda_nvrtc_compile_ex(const char *source, const char *label, int cc_major, int cc_minor, int want_ptx,
                                int nopts, const char *const *uopts, int nheaders, const char *const *htexts,
                                const char *const *hnames, void **out, size_t *len, char **log)
{
    if (log)
        *log = NULL;
    GX__ARG(source && out && len, "cuda_nvrtc_compile: source, out and len must not be NULL");
    GX__ARG(cc_major > 0 && cc_minor >= 0 && cc_minor < 10, "cuda_nvrtc_compile: bad compute capability %d.%d",
            cc_major, cc_minor);
    *out = NULL;
    *len = 0;
    if (!label || !*label)
        label = "gx_kernel.cu";
    if (!cuda_nvrtc_load())
        return gx__err(GX_ERR_UNSUPPORTED, "%s", nv_problem);
    int arch, ptx;
    if (cuda_nvrtc_target(cc_major, cc_minor, &arch, &ptx) != GX_OK)
        return gx__err(GX_ERR_UNSUPPORTED,
                       "NVRTC %d.%d (%s) cannot generate code for compute capability %d.%d "
                       "(it supports sm_%d to sm_%d)%s",
                       nv_major, nv_minor, nv_path, cc_major, cc_minor, nv_archs[0], nv_archs[nv_narchs - 1],
                       cc_major * 10 + cc_minor < nv_archs[0] ? "; this GPU is too old for this CUDA toolkit"
                                                              : "; install a newer CUDA toolkit's NVRTC");
    if (want_ptx || !cuda_nvrtc.GetCUBINSize || !cuda_nvrtc.GetCUBIN)
        ptx = 1;

    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s_%d", ptx ? "compute" : "sm", arch);
    /* No --use_fast_math: gx keeps IEEE semantics (exact division/sqrt, denormals)
     * so results match the CPU backend.  -default-device lets generated helpers omit
     * __device__; -lineinfo keeps the user's #line mapping for profilers. */
    const char *opts[4 + CUDA_MAX_USER_OPTS] = {archopt, "-std=c++17", "-default-device", "-lineinfo"};
    int nall = 4;
    GX__ARG(nopts >= 0 && nopts <= CUDA_MAX_USER_OPTS && (nopts == 0 || uopts),
            "cuda_nvrtc_compile: %d options (at most %d)", nopts, CUDA_MAX_USER_OPTS);
    for (int i = 0; i < nopts; i++)
        opts[nall++] = uopts[i];

    nvrtcProgram prog = NULL;
    nvrtcResult r = cuda_nvrtc.CreateProgram(&prog, source, label, nheaders, htexts, hnames);
    if (r != NVRTC_SUCCESS)
        return gx__err(r == NVRTC_ERROR_OUT_OF_MEMORY ? GX_ERR_OUT_OF_MEMORY : GX_ERR_BACKEND,
                       "nvrtcCreateProgram(%s) failed: %s", label, cuda_nvrtc.GetErrorString(r));
    nvrtcResult cr = cuda_nvrtc.CompileProgram(prog, nall, opts);

    char *text = NULL;
    size_t tn = 0;
    if (cuda_nvrtc.GetProgramLogSize(prog, &tn) == NVRTC_SUCCESS && tn > 1) {
        text = malloc(tn);
        if (text && cuda_nvrtc.GetProgramLog(prog, text) != NVRTC_SUCCESS) {
            free(text);
            text = NULL;
        }
        if (text)
            text[tn - 1] = 0;
    }

    gx_status st = GX_OK;
    if (cr != NVRTC_SUCCESS) {
        const char *lg = text ? text : "(no log)";
        size_t ln = strlen(lg);
        st = gx__err(cr == NVRTC_ERROR_COMPILATION     ? GX_ERR_COMPILE
                     : cr == NVRTC_ERROR_OUT_OF_MEMORY ? GX_ERR_OUT_OF_MEMORY
                                                       : GX_ERR_BACKEND,
                     "NVRTC %d.%d could not compile %s for %s_%d: %s\n%.*s%s", nv_major, nv_minor, label,
                     ptx ? "compute" : "sm", arch, cuda_nvrtc.GetErrorString(cr),
                     (int)(ln > CUDA_LOG_KEEP ? CUDA_LOG_KEEP : ln), lg,
                     ln > CUDA_LOG_KEEP ? "\n... (log truncated)" : "");
    } else {
        size_t n = 0;
        r = ptx ? cuda_nvrtc.GetPTXSize(prog, &n) : cuda_nvrtc.GetCUBINSize(prog, &n);
        void *blob = NULL;
        if (r == NVRTC_SUCCESS && n > 0) {
            blob = malloc(n);
            if (!blob)
                st = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for a %zu-byte %s of %s", n,
                             ptx ? "PTX" : "cubin", label);
            else
                r = ptx ? cuda_nvrtc.GetPTX(prog, blob) : cuda_nvrtc.GetCUBIN(prog, blob);
        }
        if (st == GX_OK && (r != NVRTC_SUCCESS || n == 0))
            st = gx__err(GX_ERR_BACKEND, "nvrtcGet%s(%s) failed: %s", ptx ? "PTX" : "CUBIN", label,
                         r != NVRTC_SUCCESS ? cuda_nvrtc.GetErrorString(r) : "empty output");
        if (st == GX_OK) {
            *out = blob;
            *len = n;
        } else {
            free(blob);
        }
    }
    cuda_nvrtc.DestroyProgram(&prog);
    if (log)
        *log = text;
    else
        free(text);
    return st;
}

/* ------------------------------------------------------------ versions */

static void put(char *dst, size_t n, const char *s)
{
    if (dst && n)
        snprintf(dst, n, "%s", s);
}

void gx__cuda_versions(char *driver, size_t dn, char *nvrtc, size_t nn, char *libs, size_t ln)
{
    char tmp[256];
    put(driver, dn, "");
    put(nvrtc, nn, "");
    put(libs, ln, "");
    /* The driver version does not need a device: report it even when cuInit failed. */
    cuda_driver_load();
    int dv = drv_version;
    if (!dv && cuda_drv.DriverGetVersion && cuda_drv.DriverGetVersion(&dv) != CUDA_SUCCESS)
        dv = 0;
    if (dv) {
        snprintf(tmp, sizeof tmp, "%d.%d", dv / 1000, dv % 1000 / 10);
        put(driver, dn, tmp);
    }
    int ma, mi;
    if (cuda_nvrtc_version(&ma, &mi)) {
        snprintf(tmp, sizeof tmp, "%d.%d", ma, mi);
        put(nvrtc, nn, tmp);
    }
    static const struct {
        const char *what;
        const char *const *names;
    } groups[] = {
        {"cuBLAS", cuda_cublas_names},
        {"cuFFT", cuda_cufft_names},
        {"cuRAND", cuda_curand_names},
    };
    char out[512] = "";
    size_t off = 0;
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        char found[64];
        int yes = cuda_dl_probe(groups[g].names, found, sizeof found);
        int k = snprintf(out + off, sizeof out - off, "%s%s %s%s%s%s", g ? ", " : "", groups[g].what,
                         yes ? "yes" : "no", yes ? " (" : "", yes ? found : "", yes ? ")" : "");
        if (k < 0 || (size_t)k >= sizeof out - off)
            break;
        off += (size_t)k;
    }
    put(libs, ln, out);
}

/* ------------------------------------------------------------ user kernels */

/* A user kernel's source as src/ops/kernel.c wraps it: a first line
 * GX__USER_KERNEL_MAGIC, then one "//gx:opt <option>" line per NVRTC option, other
 * "//gx:" lines (ignored here; they only feed the cache key), then the user's text.
 * The options thus live in the source, so they are part of every cache key. */
gx_status cuda_nvrtc_compile_user(const char *source, const char *label, int cc_major, int cc_minor, int want_ptx,
                                  void **out, size_t *len, char **log)
{
    const char *opts[CUDA_MAX_USER_OPTS];
    char *copy = strdup(source);
    if (!copy)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory compiling %s", label);
    int n = 0;
    char *line = copy;
    if (strncmp(line, GX__USER_KERNEL_MAGIC "\n", strlen(GX__USER_KERNEL_MAGIC) + 1) == 0)
        line += strlen(GX__USER_KERNEL_MAGIC) + 1;
    while (strncmp(line, "//gx:", 5) == 0) {
        char *nl = strchr(line, '\n');
        if (!nl)
            break;
        *nl = 0;
        if (strncmp(line, "//gx:opt ", 9) == 0 && n < CUDA_MAX_USER_OPTS)
            opts[n++] = line + 9;
        line = nl + 1;
    }
    const char *htext = gx_device_header();
    const char *hname = "gx/device.h";
    /* The whole text goes to NVRTC (the //gx: lines are comments), so line numbers in
     * messages stay those of the #line directive the wrapper put after them. */
    gx_status s =
        cuda_nvrtc_compile_ex(source, label, cc_major, cc_minor, want_ptx, n, opts, 1, &htext, &hname, out, len, log);
    free(copy);
    return s;
}
