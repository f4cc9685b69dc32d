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
#include "jit/cache.h"

#include <dlfcn.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
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

static double drv_ms; /* dlopen + cuInit + the device count, once per process */

static void drv_load_once_timed(void);
static void drv_load_once(void)
{
    double t0 = gx__now_ms();
    drv_load_once_timed();
    drv_ms = gx__now_ms() - t0;
}

double cuda_driver_load_ms(void)
{
    cuda_driver_load();
    return drv_ms;
}

static void drv_load_once_timed(void)
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

/* ---- NVRTC's identity without loading it
 *
 * A context's compiler id (part of every kernel's cache key) names NVRTC's version
 * and the architectures it targets.  Asking NVRTC meant dlopen-ing it, 9-10 ms warm
 * on an H100 host (bench: dlopen alone, 0.01 ms for the version calls): all of gx's
 * own part of a first use whose kernels were in the disk cache, where NVRTC is never
 * called.  So the answer is remembered in the disk cache, under the environment that
 * decides which file the loader picks (LD_LIBRARY_PATH, CUDA_HOME, ld.so.cache) and
 * checked against the file's identity (device, inode, size, mtime); a compile loads
 * NVRTC anyway and rewrites the record if it differs. */
static pthread_once_t id_once = PTHREAD_ONCE_INIT;
static int id_ok, id_major, id_minor, id_narchs, id_archs[64];

/* The record's file name for this environment; 0 without a disk cache. */
static int nv_record_file(char *out, size_t cap)
{
    cache_disk *d = cache_disk_get();
    if (!cache_disk_enabled(d))
        return 0;
    char buf[128], hex[65];
    cache_key k;
    cache_key_init(&k);
    cache_key_add(&k, "nvrtc-id 1");
    for (int i = 0; nv_names[i]; i++)
        cache_key_add(&k, nv_names[i]);
    const char *e = getenv("LD_LIBRARY_PATH");
    cache_key_add(&k, e ? e : "-");
    e = getenv("CUDA_HOME");
    cache_key_add(&k, e ? e : "-");
    cache_key_add(&k, cache_file_identity("/etc/ld.so.cache", buf, sizeof buf) ? buf : "-");
    cache_key_final(&k, hex);
    int n = snprintf(out, cap, "%s/nvrtc-id-%.32s", cache_disk_dir(d), hex);
    return n > 0 && (size_t)n < cap;
}

/* "path\nidentity\nmajor minor narchs a1 a2 ...\n" */
static bool nv_record_read(const char *file)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return false;
    char path[PATH_MAX], ident[160], now[160];
    int ma, mi, n;
    bool ok = fgets(path, sizeof path, f) && fgets(ident, sizeof ident, f) && fscanf(f, "%d %d %d", &ma, &mi, &n) == 3 &&
              n >= 0 && n <= (int)(sizeof id_archs / sizeof id_archs[0]);
    for (int i = 0; ok && i < n; i++)
        ok = fscanf(f, "%d", &id_archs[i]) == 1;
    fclose(f);
    if (!ok)
        return false;
    path[strcspn(path, "\n")] = 0;
    ident[strcspn(ident, "\n")] = 0;
    if (path[0] != '/' || !cache_file_identity(path, now, sizeof now) || strcmp(now, ident) != 0)
        return false; /* another file now: ask NVRTC */
    id_major = ma;
    id_minor = mi;
    id_narchs = n;
    return true;
}

static void nv_record_write(const char *file)
{
    Dl_info di;
    char path[PATH_MAX], ident[160]; /* realpath() writes up to PATH_MAX */
    if (!cuda_nvrtc.Version || !dladdr((void *)cuda_nvrtc.Version, &di) || !di.dli_fname ||
        !realpath(di.dli_fname, path) || !cache_file_identity(path, ident, sizeof ident))
        return;
    char *text = malloc(PATH_MAX + 1024);
    if (!text)
        return;
    int n = snprintf(text, PATH_MAX + 1024, "%s\n%s\n%d %d %d", path, ident, nv_major, nv_minor, nv_narchs);
    for (int i = 0; i < nv_narchs && n > 0 && n < PATH_MAX + 1000; i++)
        n += snprintf(text + n, (size_t)(PATH_MAX + 1024 - n), " %d", nv_archs[i]);
    if (n > 0 && n < PATH_MAX + 1000) {
        text[n++] = '\n';
        text[n] = 0;
        cache_side_write(file, text);
    }
    free(text);
}

static void id_once_fn(void)
{
    char file[4200];
    bool have_file = nv_record_file(file, sizeof file);
    if (have_file && nv_record_read(file)) {
        id_ok = 1;
        return;
    }
    pthread_once(&nv_once, nv_load_once);
    if (!nv_ok)
        return;
    id_ok = 1;
    id_major = nv_major;
    id_minor = nv_minor;
    id_narchs = nv_narchs;
    memcpy(id_archs, nv_archs, sizeof id_archs);
    if (have_file)
        nv_record_write(file);
}

static void nv_identity(void) { pthread_once(&id_once, id_once_fn); }

int cuda_nvrtc_load(void)
{
    pthread_once(&nv_once, nv_load_once);
    /* Loaded for a compile after the identity came from the record: keep the record
     * true for the next process if this NVRTC answers differently. */
    nv_identity();
    if (nv_ok && (nv_major != id_major || nv_minor != id_minor || nv_narchs != id_narchs)) {
        char file[4200];
        if (nv_record_file(file, sizeof file))
            nv_record_write(file);
    }
    return nv_ok;
}

const char *cuda_nvrtc_problem(void)
{
    cuda_nvrtc_load();
    return nv_ok ? "" : nv_problem;
}

int cuda_nvrtc_version(int *major, int *minor)
{
    nv_identity();
    if (major)
        *major = id_ok ? id_major : 0;
    if (minor)
        *minor = id_ok ? id_minor : 0;
    return id_ok;
}

gx_status cuda_nvrtc_target(int cc_major, int cc_minor, int *arch, int *ptx)
{
    /* Sets no message: open() asks this early, build() reports the problem. */
    nv_identity();
    if (!id_ok)
        return GX_ERR_UNSUPPORTED;
    int want = cc_major * 10 + cc_minor;
    *arch = want;
    *ptx = 0;
    if (id_narchs == 0)
        return GX_OK;
    int best = 0;
    for (int i = 0; i < id_narchs; i++) {
        if (id_archs[i] == want)
            return GX_OK;
        if (id_archs[i] < want && id_archs[i] > best)
            best = id_archs[i];
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
    cuda_nvrtc_req rq = {.source = source,
                         .label = label,
                         .cc_major = cc_major,
                         .cc_minor = cc_minor,
                         .out_kind = want_ptx ? 1 : 0,
                         .nopts = nopts,
                         .opts = uopts,
                         .nheaders = nheaders,
                         .htexts = htexts,
                         .hnames = hnames};
    return cuda_nvrtc_compile_req(&rq, out, len, log);
}

/* Copies the lowered names of rq's name expressions (after a successful compile). */
static gx_status nvrtc_lowered(nvrtcProgram prog, cuda_nvrtc_req *rq)
{
    for (int i = 0; i < rq->nexprs; i++) {
        const char *low = NULL;
        if (cuda_nvrtc.GetLoweredName(prog, rq->exprs[i], &low) != NVRTC_SUCCESS || !low)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: NVRTC has no lowered name for the name expression \"%s\"",
                           rq->label, rq->exprs[i]);
        if (!(rq->lowered[i] = strdup(low)))
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    return GX_OK;
}

/* The program's output: kind 0 cubin, 1 PTX, 2 LTO-IR. */
static gx_status nvrtc_output(nvrtcProgram prog, const char *label, int kind, void **out, size_t *len)
{
    static const char *const what[] = {"CUBIN", "PTX", "LTOIR"};
    size_t n = 0;
    nvrtcResult r = kind == 1   ? cuda_nvrtc.GetPTXSize(prog, &n)
                    : kind == 2 ? cuda_nvrtc.GetLTOIRSize(prog, &n)
                                : cuda_nvrtc.GetCUBINSize(prog, &n);
    void *blob = NULL;
    if (r == NVRTC_SUCCESS && n > 0) {
        if (!(blob = malloc(n)))
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for a %zu-byte %s of %s", n, what[kind], label);
        r = kind == 1   ? cuda_nvrtc.GetPTX(prog, blob)
            : kind == 2 ? cuda_nvrtc.GetLTOIR(prog, blob)
                        : cuda_nvrtc.GetCUBIN(prog, blob);
    }
    if (r != NVRTC_SUCCESS || n == 0) {
        free(blob);
        return gx__err(GX_ERR_BACKEND, "nvrtcGet%s(%s) failed: %s", what[kind], label,
                       r != NVRTC_SUCCESS ? cuda_nvrtc.GetErrorString(r) : "empty output");
    }
    *out = blob;
    *len = n;
    return GX_OK;
}

gx_status cuda_nvrtc_compile_req(cuda_nvrtc_req *rq, void **out, size_t *len, char **log)
{
    if (log)
        *log = NULL;
    GX__ARG(rq && rq->source && out && len, "cuda_nvrtc_compile: source, out and len must not be NULL");
    int cc_major = rq->cc_major, cc_minor = rq->cc_minor, nopts = rq->nopts;
    GX__ARG(cc_major > 0 && cc_minor >= 0 && cc_minor < 10, "cuda_nvrtc_compile: bad compute capability %d.%d",
            cc_major, cc_minor);
    *out = NULL;
    *len = 0;
    const char *label = rq->label && *rq->label ? rq->label : "gx_kernel.cu";
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
    if (rq->out_kind == 1 || !cuda_nvrtc.GetCUBINSize || !cuda_nvrtc.GetCUBIN)
        ptx = 1;
    int kind = rq->out_kind == 2 ? 2 : ptx;
    if (kind == 2 && (!cuda_nvrtc.GetLTOIRSize || !cuda_nvrtc.GetLTOIR))
        return gx__err(GX_ERR_UNSUPPORTED, "NVRTC %d.%d (%s) cannot emit LTO-IR (link-time optimisation)", nv_major,
                       nv_minor, nv_path);
    if (rq->nexprs > 0 && (!cuda_nvrtc.AddNameExpression || !cuda_nvrtc.GetLoweredName))
        return gx__err(GX_ERR_UNSUPPORTED, "NVRTC %d.%d (%s) lacks nvrtcAddNameExpression", nv_major, nv_minor,
                       nv_path);
    rq->got_ptx = kind == 1;

    char archopt[64];
    /* LTO-IR is for a real arch: the link picks the code. */
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s_%d", ptx && kind != 2 ? "compute" : "sm", arch);
    /* No --use_fast_math: gx keeps IEEE semantics (exact division/sqrt, denormals)
     * so results match the CPU backend.  -default-device lets generated helpers omit
     * __device__; -lineinfo keeps the user's #line mapping for profilers. */
    const char *opts[4 + CUDA_MAX_USER_OPTS] = {archopt, "-std=c++17", "-default-device", "-lineinfo"};
    int nall = 4;
    GX__ARG(nopts >= 0 && nopts <= CUDA_MAX_USER_OPTS && (nopts == 0 || rq->opts),
            "cuda_nvrtc_compile: %d options (at most %d)", nopts, CUDA_MAX_USER_OPTS);
    for (int i = 0; i < nopts; i++)
        opts[nall++] = rq->opts[i];

    nvrtcProgram prog = NULL;
    nvrtcResult r = cuda_nvrtc.CreateProgram(&prog, rq->source, label, rq->nheaders, rq->htexts, rq->hnames);
    if (r != NVRTC_SUCCESS)
        return gx__err(r == NVRTC_ERROR_OUT_OF_MEMORY ? GX_ERR_OUT_OF_MEMORY : GX_ERR_BACKEND,
                       "nvrtcCreateProgram(%s) failed: %s", label, cuda_nvrtc.GetErrorString(r));
    for (int i = 0; i < rq->nexprs; i++)
        cuda_nvrtc.AddNameExpression(prog, rq->exprs[i]);
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
        st = nvrtc_output(prog, label, kind, out, len);
        if (st == GX_OK && rq->nexprs > 0 && rq->lowered)
            st = nvrtc_lowered(prog, rq);
        if (st != GX_OK) {
            free(*out);
            *out = NULL;
            *len = 0;
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

/* In-memory assert.h for user kernels (NVRTC has no libc headers).  Unchecked: the
 * CUDA behaviour -- a failed assert prints and traps, which leaves the context
 * unusable (see gx_kernel_launch).  Checked (GX_KERNEL_CHECKS): gx's recorder in
 * gx/device.h notes the first failure and the thread carries on; gx_sync reports it. */
static const char cuda_assert_h[] =
    "#ifndef GX__ASSERT_H\n"
    "#define GX__ASSERT_H\n"
    "#if defined(GX_KERNEL_CHECKS)\n"
    "#include <gx/device.h>\n"
    "#endif\n"
    "#endif\n"
    "#undef assert\n"
    "#if defined(NDEBUG)\n"
    "#define assert(e) ((void)0)\n"
    "#elif defined(GX_KERNEL_CHECKS)\n"
    "#define assert(e) ((e) ? (void)0 : gx__check_fail(\"assertion failed: \" #e, __FILE__, __LINE__, __func__, "
    "0, 0, 0))\n"
    "#else\n"
    "#define assert(e) ((e) ? (void)0 : __assertfail(#e, __FILE__, __LINE__, __func__, sizeof(char)))\n"
    "#endif\n";

/* The parsed header of a wrapped user kernel (see cuda_nvrtc_compile_user). */
typedef struct user_src {
    char *copy;
    const char *opts[CUDA_MAX_USER_OPTS];
    int nopts;
    const char *exprs[64];
    int nexprs;
    bool rdc, lto;
    int nsrc;
    const char *src[32], *names[32];
    size_t lens[32];
    char *incopts;    /* "--include-path=..." strings, NUL-separated */
    const char *body; /* what follows the header lines */
} user_src;

/* "//gx:source BYTES NAME\n" + BYTES of text, nsrc times. */
static gx_status user_split(user_src *u, char *p, const char *label)
{
    for (int i = 0; i < u->nsrc; i++) {
        char *nl = strchr(p, '\n');
        unsigned long long n = 0;
        int off = 0;
        if (i >= 32 || !nl || sscanf(p, "//gx:source %llu %n", &n, &off) != 1 || strlen(nl + 1) < n)
            return gx__err(GX_ERR_INTERNAL, "%s: malformed multi-source kernel text", label);
        *nl = 0;
        u->names[i] = p + off;
        u->src[i] = nl + 1;
        u->lens[i] = (size_t)n;
        p = nl + 1 + n;
    }
    return GX_OK;
}

/* Turns "a:b" into --include-path options. */
static gx_status user_includes(user_src *u, const char *dirs)
{
    size_t n = strlen(dirs);
    u->incopts = malloc(n * 2 + 64 * 20 + 1);
    if (!u->incopts)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    char *w = u->incopts;
    for (const char *p = dirs; *p && u->nopts < CUDA_MAX_USER_OPTS;) {
        const char *e = strchr(p, ':');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l) {
            u->opts[u->nopts++] = w;
            w += sprintf(w, "--include-path=%.*s", (int)l, p) + 1;
        }
        p += l + (e ? 1 : 0);
    }
    return GX_OK;
}

static gx_status user_parse(const char *source, const char *label, user_src *u)
{
    memset(u, 0, sizeof *u);
    if (!(u->copy = strdup(source)))
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory compiling %s", label);
    char *line = u->copy;
    if (strncmp(line, GX__USER_KERNEL_MAGIC "\n", strlen(GX__USER_KERNEL_MAGIC) + 1) == 0)
        line += strlen(GX__USER_KERNEL_MAGIC) + 1;
    const char *inc = "";
    while (strncmp(line, "//gx:", 5) == 0 && strncmp(line, "//gx:source ", 12) != 0) {
        char *nl = strchr(line, '\n');
        if (!nl)
            break;
        *nl = 0;
        if (strncmp(line, "//gx:opt ", 9) == 0 && u->nopts < CUDA_MAX_USER_OPTS - 20)
            u->opts[u->nopts++] = line + 9;
        else if (strncmp(line, "//gx:include ", 13) == 0)
            inc = line + 13;
        else if (strcmp(line, "//gx:rdc") == 0)
            u->rdc = true;
        else if (strcmp(line, "//gx:lto") == 0)
            u->lto = true;
        else if (strncmp(line, "//gx:name ", 10) == 0 && u->nexprs < 64)
            u->exprs[u->nexprs++] = line + 10;
        else if (strncmp(line, "//gx:sources ", 13) == 0)
            u->nsrc = atoi(line + 13);
        line = nl + 1;
    }
    u->body = line;
    GX__CHECK(user_includes(u, inc));
    if (u->nsrc > 0)
        return user_split(u, line, label);
    return GX_OK;
}

static void user_free(user_src *u)
{
    free(u->copy);
    free(u->incopts);
}

/* A header NVRTC could not open: say where gx looked and how to change it. */
static gx_status user_missing_header(gx_status s, const user_src *u)
{
    const char *m = gx_last_error();
    if (s != GX_ERR_COMPILE || !m || !strstr(m, "open source file"))
        return s;
    char *msg = strdup(m);
    gx__sbuf b = {0};
    for (int i = 0; i < u->nopts; i++)
        if (strncmp(u->opts[i], "--include-path=", 15) == 0)
            gx__sb_printf(&b, "%s%s", b.p ? ", " : "", u->opts[i] + 15);
    s = gx__err(s,
                "%s\nCUDA include directories searched: %s; set GX_CUDA_INCLUDE to a colon-separated list "
                "of folders holding the CUDA toolkit's headers (its include and include/cccl) to change "
                "the search",
                msg ? msg : "",
                b.p ? b.p
                    : "none found (no CUDA toolkit headers beside NVRTC, in "
                      "$CUDA_HOME, $CUDA_PATH or /usr/local/cuda)");
    free(msg);
    gx__sb_free(&b);
    return s;
}

/* Puts a table of name expressions and their lowered names before the code:
 * "//gx:lowered\n" + "expr\tlowered\n"... + "//gx:end\n", padded to 16 bytes, then
 * the cubin (cuda_load reads the table back; it is cached with the code). */
static gx_status user_prefix_lowered(const user_src *u, char **lowered, void **blob, size_t *len)
{
    gx__sbuf b = {0};
    gx__sb_puts(&b, "//gx:lowered\n");
    for (int i = 0; i < u->nexprs; i++)
        gx__sb_printf(&b, "%s\t%s\n", u->exprs[i], lowered[i]);
    gx__sb_puts(&b, "//gx:end\n");
    while (!b.oom && b.len % 16)
        gx__sb_puts(&b, "\n");
    char *out = b.oom ? NULL : malloc(b.len + *len);
    if (!out) {
        gx__sb_free(&b);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    memcpy(out, b.p, b.len);
    memcpy(out + b.len, *blob, *len);
    free(*blob);
    *blob = out;
    *len += b.len;
    gx__sb_free(&b);
    return GX_OK;
}

static const char *const user_hnames[] = {"gx/device.h", "assert.h", "cassert"};

/* Compiles source i of a relocatable build (LTO-IR with lto, else a cubin). */
static gx_status user_compile_one(const user_src *u, const char *text, const char *label, int cc_major, int cc_minor,
                                  int kind, int with_exprs, char **lowered, void **out, size_t *len, int *got_ptx)
{
    const char *opts[CUDA_MAX_USER_OPTS];
    int n = 0;
    for (int i = 0; i < u->nopts && n < CUDA_MAX_USER_OPTS - 2; i++)
        opts[n++] = u->opts[i];
    if (u->rdc || u->nsrc > 0)
        opts[n++] = "-rdc=true";
    if (kind == 2)
        opts[n++] = "-dlto";
    const char *htexts[] = {gx_device_header(), cuda_assert_h, cuda_assert_h};
    cuda_nvrtc_req rq = {.source = text,
                         .label = label,
                         .cc_major = cc_major,
                         .cc_minor = cc_minor,
                         .out_kind = kind,
                         .nopts = n,
                         .opts = opts,
                         .nheaders = 3,
                         .htexts = htexts,
                         .hnames = user_hnames,
                         .nexprs = with_exprs ? u->nexprs : 0,
                         .exprs = u->exprs,
                         .lowered = lowered};
    gx_status s = cuda_nvrtc_compile_req(&rq, out, len, NULL);
    if (got_ptx)
        *got_ptx = rq.got_ptx;
    return user_missing_header(s, u);
}

/* Relocatable: each source compiled, then linked with nvJitLink (and libcudadevrt.a
 * when the code launches kernels). */
static gx_status user_link(const user_src *u, const char *label, int cc_major, int cc_minor, char **lowered, void **out,
                           size_t *len)
{
    int nin = u->nsrc > 0 ? u->nsrc : 1;
    cuda_link_input in[32];
    char *texts[32] = {0};
    void *blobs[32] = {0};
    gx_status s = GX_OK;
    char devrt[4096];
    if (u->rdc && !cuda_devrt_path(devrt, sizeof devrt))
        s = gx__err(GX_ERR_UNSUPPORTED,
                    "%s launches kernels from the GPU (dynamic parallelism), which needs the CUDA device "
                    "runtime library libcudadevrt.a; it is not beside NVRTC nor at %s: install the CUDA "
                    "toolkit's libraries or set GX_CUDA_DEVRT to the file",
                    label, devrt);
    for (int i = 0; i < nin && s == GX_OK; i++) {
        const char *nm = u->nsrc > 0 ? u->names[i] : label;
        texts[i] = u->nsrc > 0 ? strndup(u->src[i], u->lens[i]) : strdup(u->body);
        if (!texts[i]) {
            s = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
            break;
        }
        int got_ptx = 0;
        s = user_compile_one(u, texts[i], nm, cc_major, cc_minor, u->lto ? 2 : 0, i == 0, lowered, &blobs[i],
                             &in[i].len, &got_ptx);
        in[i].data = blobs[i];
        in[i].type = u->lto ? 3 : got_ptx ? 2 : 1;
        in[i].name = nm;
    }
    if (s == GX_OK)
        s = cuda_link(in, nin, u->rdc ? devrt : NULL, cc_major * 10 + cc_minor, u->lto, out, len);
    if (s != GX_OK)
        s = gx__err_prefix(s, "%s", label);
    for (int i = 0; i < nin; i++) {
        free(texts[i]);
        free(blobs[i]);
    }
    return s;
}

/* A user kernel's source as src/ops/kernel.c wraps it: a first line
 * GX__USER_KERNEL_MAGIC, then "//gx:" lines: "opt <option>" per NVRTC option,
 * "include <dirs>" (the CUDA include folders, colon-separated), "rdc" (relocatable
 * code linked with the device runtime), "lto", "name <expression>" per template
 * instantiation, "sources N" (several sources follow, each as "//gx:source BYTES
 * NAME\n" and its text); other "//gx:" lines only feed the cache key.  Then the
 * user's text.  Everything that changes the code thus lives in the source, so it
 * is part of every cache key. */
gx_status cuda_nvrtc_compile_user(const char *source, const char *label, int cc_major, int cc_minor, int want_ptx,
                                  void **out, size_t *len, char **log)
{
    if (log)
        *log = NULL;
    user_src u;
    gx_status s = user_parse(source, label, &u);
    char *lowered[64] = {0};
    if (s == GX_OK && want_ptx) {
        /* PTX of the (first) source: what the user reads, relocatable if so built. */
        const char *text = u.nsrc > 0 ? strndup(u.src[0], u.lens[0]) : strdup(u.body);
        s = text ? user_compile_one(&u, text, label, cc_major, cc_minor, 1, 0, NULL, out, len, NULL)
                 : gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
        free((void *)text);
    } else if (s == GX_OK && (u.rdc || u.nsrc > 0 || u.lto)) {
        s = user_link(&u, label, cc_major, cc_minor, lowered, out, len);
    } else if (s == GX_OK) {
        /* The whole text goes to NVRTC (the //gx: lines are comments), so line numbers
         * in messages stay those of the #line directive the wrapper put after them. */
        s = user_compile_one(&u, source, label, cc_major, cc_minor, 0, 1, lowered, out, len, NULL);
    }
    if (s == GX_OK && !want_ptx && u.nexprs > 0)
        s = user_prefix_lowered(&u, lowered, out, len);
    if (s != GX_OK && !want_ptx) {
        free(*out);
        *out = NULL;
        *len = 0;
    }
    for (int i = 0; i < 64; i++)
        free(lowered[i]);
    user_free(&u);
    return s;
}
