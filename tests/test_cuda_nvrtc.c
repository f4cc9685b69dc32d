/* test_cuda_nvrtc.c -- CUDA backend checks that need NVRTC but no GPU: compiling for
 * a fixed arch, compile errors that point at the user's line, and a clean
 * GX_ERR_NO_DEVICE (or a working open, where a GPU exists) from the backend. */
#include "gx_test.h"

#ifdef GX_HAVE_CUDA
#include "backend/cuda/cuda_priv.h"

static const char *k_saxpy = "struct saxpy_args { float a; const float *x; float *y; long long n; };\n"
                             "extern \"C\" __global__ void gx_saxpy(saxpy_args p)\n"
                             "{\n"
                             "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    if (i < p.n) p.y[i] = p.a * p.x[i] + p.y[i];\n"
                             "}\n";

static int need_nvrtc(void)
{
    if (cuda_nvrtc_load())
        return 1;
    char why[1200];
    snprintf(why, sizeof why, "NVRTC not loadable: %s", cuda_nvrtc_problem());
    gxt_skip(why);
    return 0;
}

GXT_TEST(nvrtc_ptx_sm90)
{
    if (!need_nvrtc())
        return;
    int ma = -1, mi = -1;
    GXT_CHECK(cuda_nvrtc_version(&ma, &mi) == 1);
    GXT_CHECK(ma >= 11);
    void *ptx = NULL;
    size_t len = 0;
    char *log = NULL;
    GXT_OK(cuda_nvrtc_compile(k_saxpy, "saxpy.cu", 9, 0, 1, &ptx, &len, &log));
    GXT_CHECK(ptx != NULL && len > 1);
    if (ptx) {
        const char *t = ptx;
        GXT_CHECK(t[len - 1] == 0); /* PTX comes NUL-terminated */
        GXT_CHECK(strstr(t, ".target sm_90") != NULL);
        GXT_CHECK(strstr(t, ".entry gx_saxpy") != NULL);
    }
    free(ptx);
    free(log);
}

GXT_TEST(nvrtc_cubin_sm90)
{
    if (!need_nvrtc())
        return;
    void *bin = NULL;
    size_t len = 0;
    GXT_OK(cuda_nvrtc_compile(k_saxpy, "saxpy.cu", 9, 0, 0, &bin, &len, NULL));
    GXT_CHECK(bin != NULL && len > 4);
    /* NVRTC knows sm_90, so this must be a real cubin (ELF), not PTX. */
    if (bin && len > 4)
        GXT_CHECK(memcmp(bin, "\177ELF", 4) == 0);
    free(bin);
}

GXT_TEST(nvrtc_syntax_error_names_line)
{
    if (!need_nvrtc())
        return;
    /* The generator emits #line directives pointing at user files: the log must
     * name that file and line. */
    const char *src = "extern \"C\" __global__ void k(int *p)\n"
                      "{\n"
                      "#line 42 \"user_lambda.gx\"\n"
                      "    p[0] = 1 +;\n"
                      "}\n";
    void *out = (void *)1;
    size_t len = 7;
    char *log = NULL;
    GXT_STATUS(cuda_nvrtc_compile(src, "bad_kernel", 9, 0, 0, &out, &len, &log), GX_ERR_COMPILE);
    GXT_CHECK(out == NULL && len == 0);
    GXT_MSG_HAS("bad_kernel");
    GXT_MSG_HAS("user_lambda.gx(42)");
    GXT_CHECK(log != NULL && strstr(log, "user_lambda.gx(42)") != NULL);
    free(log);
}

GXT_TEST(nvrtc_bad_arguments)
{
    void *out = NULL;
    size_t len = 0;
    GXT_STATUS(cuda_nvrtc_compile(NULL, "x", 9, 0, 0, &out, &len, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(cuda_nvrtc_compile(k_saxpy, "x", 0, 0, 0, &out, &len, NULL), GX_ERR_INVALID_ARGUMENT);
    if (!need_nvrtc())
        return;
    /* An arch far below anything NVRTC supports is a clear "unsupported". */
    GXT_STATUS(cuda_nvrtc_compile(k_saxpy, "x", 1, 0, 0, &out, &len, NULL), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("1.0");
}

GXT_TEST(nvrtc_backend_open_without_gpu)
{
    int count = -1;
    int avail = gx__cuda_available(&count);
    gx__backend be;
    memset(&be, 0, sizeof be);
    be.iface = &gx__cuda_iface;
    if (!avail) {
        GXT_EQ_I64(count, 0);
        GXT_STATUS(gx__cuda_iface.open(&be, 0), GX_ERR_NO_DEVICE);
        GXT_MSG_HAS("GX_BACKEND=cpu");
        GXT_CHECK(be.impl == NULL);
        /* Asking twice gives the same answer (the loader runs once). */
        GXT_STATUS(gx__cuda_iface.open(&be, 0), GX_ERR_NO_DEVICE);
        return;
    }
    /* A GPU is present: the same entry point opens, reports and closes cleanly. */
    GXT_CHECK(count > 0);
    GXT_STATUS(gx__cuda_iface.open(&be, count), GX_ERR_NO_DEVICE);
    GXT_MSG_HAS("does not exist");
    GXT_OK(gx__cuda_iface.open(&be, 0));
    gx_device_info di;
    GXT_OK(gx__cuda_iface.info(&be, &di));
    GXT_CHECK(di.cc_major >= 3 && di.warp_size == 32 && di.mem_total > 0);
    GXT_CHECK(strncmp(gx__cuda_iface.code.compiler_id(&be), "nvrtc ", 6) == 0);
    void *p = NULL;
    GXT_OK(gx__cuda_iface.mem.alloc(&be, 0, &p));
    GXT_CHECK(p == NULL);
    gx__cuda_iface.mem.free(&be, NULL, 0);
    gx__cuda_iface.close(&be);
    GXT_CHECK(be.impl == NULL);
}

GXT_TEST(nvrtc_versions_text)
{
    char drv[64], nv[64], libs[512];
    gx__cuda_versions(drv, sizeof drv, nv, sizeof nv, libs, sizeof libs);
    GXT_CHECK(strstr(libs, "cuBLAS ") != NULL);
    GXT_CHECK(strstr(libs, "cuFFT ") != NULL);
    GXT_CHECK(strstr(libs, "cuRAND ") != NULL);
    int ma, mi;
    if (cuda_nvrtc_version(&ma, &mi)) {
        char want[32];
        snprintf(want, sizeof want, "%d.%d", ma, mi);
        GXT_CHECK(strcmp(nv, want) == 0);
    } else {
        GXT_CHECK(nv[0] == 0);
    }
}

#else /* built without CUDA headers: the tests exist but have nothing to check */

GXT_TEST(nvrtc_ptx_sm90) { gxt_skip("gx built without CUDA"); }
GXT_TEST(nvrtc_cubin_sm90) { gxt_skip("gx built without CUDA"); }
GXT_TEST(nvrtc_syntax_error_names_line) { gxt_skip("gx built without CUDA"); }
GXT_TEST(nvrtc_bad_arguments) { gxt_skip("gx built without CUDA"); }
GXT_TEST(nvrtc_backend_open_without_gpu) { gxt_skip("gx built without CUDA"); }
GXT_TEST(nvrtc_versions_text) { gxt_skip("gx built without CUDA"); }

#endif
