#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* test_kernel.c -- user CUDA kernels: compile, argument checks, launch limits,
 * faults, occupancy, reflection, PTX/SASS, gx/device.h (Philox known answers,
 * reductions), and the CPU backend's refusals.  GPU tests skip on the CPU
 * backend; the NVRTC-only ones run wherever NVRTC is installed. */
#include "gx_test.h"
#include "gx/device.h" /* its portable part: Philox on the host */
#include "ops/kernel_parse.h"

#include <unistd.h>

static const char *VADD = "#include <gx/device.h>\n"
                          "extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, int n)\n"
                          "{\n"
                          "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "    if (i < n)\n"
                          "        c[i] = a[i] + b[i];\n"
                          "}\n";

static void fill_rand_f32(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(gxt_rand01() * 200 - 100);
}

/* ------------------------------------------------------------ backend-free */

GXT_TEST(kernel_device_header_matches)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/include/gx/device.h", GX_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    GXT_CHECK(f != NULL);
    if (!f)
        return;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* gx hands NVRTC the text compiled into the library: it must be the file. */
    GXT_CHECK(strcmp(buf, gx_device_header()) == 0);
}

GXT_TEST(kernel_philox_known_answers)
{
    /* Random123 kat_vectors, philox4x32 10 rounds. */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
         0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
         0x24126ea1},
    };
    for (int t = 0; t < 3; t++) {
        gx_u32x4 r = gx_philox4x32_10(kat[t], kat[t] + 4);
        for (int w = 0; w < 4; w++)
            GXT_EQ_I64(r.v[w], kat[t][6 + w]);
    }
    GXT_CHECK(gx_uniform_f32(0) == 0.0f);
    GXT_CHECK(gx_uniform_f32(0xffffffffu) < 1.0f);
    GXT_CHECK(gx_uniform_f64(0xffffffffu, 0xffffffffu) < 1.0);
    GXT_NEAR(gx_uniform_f32(0x80000000u), 0.5, 0);
}

GXT_TEST(kernel_parse_params)
{
    kp_param p[KP_MAX_PARAMS];
    const char *src = "// __global__ void vadd(int x) in a comment\n"
                      "template <int N> __device__ int helper(int);\n"
                      "extern \"C\" __global__ void __launch_bounds__(256) other(double *q) {}\n"
                      "extern \"C\" __global__ void vadd(const float *__restrict__ a, float b[],\n"
                      "    unsigned long long n, int64_t m, const double s, bool flag) {}\n"
                      "extern \"C\" __global__ void none(void) {}\n";
    GXT_EQ_I64(kp_params(src, "vadd", p), 6);
    GXT_CHECK(p[0].pointer && p[0].dtype == GX_F32 && strcmp(p[0].name, "a") == 0);
    GXT_CHECK(p[1].pointer && p[1].dtype == GX_F32 && strcmp(p[1].name, "b") == 0);
    GXT_CHECK(!p[2].pointer && p[2].dtype == GX_U64 && strcmp(p[2].name, "n") == 0);
    GXT_CHECK(!p[3].pointer && p[3].dtype == GX_I64);
    GXT_CHECK(!p[4].pointer && p[4].dtype == GX_F64 && strcmp(p[4].name, "s") == 0);
    GXT_CHECK(!p[5].pointer && p[5].dtype == GX_BOOL);
    GXT_EQ_I64(kp_params(src, "none", p), 0);
    GXT_EQ_I64(kp_params(src, "other", p), 1);
    GXT_CHECK(p[0].pointer && p[0].dtype == GX_F64);
    GXT_EQ_I64(kp_params(src, "missing", p), -1);
    GXT_EQ_I64(kp_params("__global__ void t(T *x, MyStruct s) {}", "t", p), 2);
    GXT_CHECK(p[0].pointer && p[0].dtype == GX_DTYPE_COUNT && p[1].dtype == GX_DTYPE_COUNT);
}

GXT_TEST(kernel_ptx_offline)
{
    if (!gxt_have_nvrtc())
        return;
    char *ptx = NULL;
    GXT_OK(gx_kernel_ptx_offline(VADD, "vadd", "sm_80", NULL, &ptx));
    GXT_CHECK(strstr(ptx, ".entry vadd") != NULL);
    GXT_CHECK(strstr(ptx, ".target sm_80") != NULL);
    gx_text_free(ptx);
    ptx = NULL;
    /* Options reach NVRTC; gx/device.h (templates, Philox) compiles. */
    const char *scaled = "#include <gx/device.h>\n"
                         "extern \"C\" __global__ void scaled(float *x, long long n)\n"
                         "{\n"
                         "    GX_FOR_EACH(i, n) {\n"
                         "        uint32_t c[4] = {(uint32_t)i, 0, 0, 0}, k[2] = {1, 2};\n"
                         "        float s = gx_block_sum(x[i]) + gx_warp_inclusive_sum(1.0f);\n"
                         "        x[i] = SCALE * s + gx_uniform_f32(gx_philox4x32_10(c, k).v[0]);\n"
                         "    }\n"
                         "}\n";
    const char *opt[] = {"-DSCALE=3.0f"};
    gx_kernel_opts o = {.options = opt, .noptions = 1, .label = "scaled.cu"};
    GXT_OK(gx_kernel_ptx_offline(scaled, "scaled", "90", &o, &ptx));
    GXT_CHECK(strstr(ptx, ".entry scaled") != NULL);
    gx_text_free(ptx);
    ptx = NULL;
    /* Without the option the macro is undefined: a compile error on the user's line 7. */
    GXT_STATUS(gx_kernel_ptx_offline(scaled, "scaled", NULL, NULL, &ptx), GX_ERR_COMPILE);
    GXT_MSG_HAS("SCALE");
    GXT_MSG_HAS("(7)");
    GXT_CHECK(ptx == NULL);
    GXT_STATUS(gx_kernel_ptx_offline(VADD, "vsub", NULL, NULL, &ptx), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("vsub");
    GXT_STATUS(gx_kernel_ptx_offline(VADD, "vadd", "sm_x", NULL, &ptx), GX_ERR_INVALID_ARGUMENT);
    const char *bad[] = {"--gpu-architecture=sm_70"};
    gx_kernel_opts ob = {.options = bad, .noptions = 1};
    GXT_STATUS(gx_kernel_ptx_offline(VADD, "vadd", NULL, &ob, &ptx), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_kernel_ptx_offline(VADD, "vadd", NULL, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
}

GXT_TEST(kernel_sass_offline)
{
    if (!gxt_have_nvrtc())
        return;
    char *sass = NULL;
    gx_status s = gx_kernel_sass_offline(VADD, "sm_90", NULL, &sass);
    if (s == GX_ERR_UNSUPPORTED) {
        GXT_MSG_HAS("cuobjdump"); /* the message names the missing tools */
        gxt_skip("no SASS disassembler here (cuobjdump or nvdisasm from the CUDA toolkit); the PTX half of "
                 "the compile is kernel_ptx_offline");
        return;
    }
    GXT_OK(s);
    GXT_CHECK(strstr(sass, "vadd") != NULL);
    gx_text_free(sass);
}

/* ------------------------------------------------------------ CPU backend */

GXT_TEST(kernel_cpu_unsupported)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(ctx, &k));
    if (k != GX_BACKEND_CPU) {
        gxt_skip("checks the CPU backend's refusal of constructs outside its CUDA subset");
        return;
    }
    /* Each construct outside the CPU subset: GX_ERR_UNSUPPORTED naming it and its line:column. */
    static const struct {
        const char *src, *want;
    } cases[] = {
        {"extern \"C\" __global__ void k(int *p)\n{\n    asm volatile(\"membar.gl;\");\n}\n", "k.cu:3:5: inline PTX"},
        {"#include <mma.h>\nextern \"C\" __global__ void k(int *p)\n{\n  using namespace nvcuda;\n  wmma::fill_fragment(f, 0);\n}\n",
         "k.cu:5:3: tensor-core"},
        {"extern \"C\" __global__ void k(float *p, cudaTextureObject_t t) { p[0] = tex1Dfetch<float>(t, 0); }\n",
         "k.cu:1:40: texture objects"},
        {"#include <cooperative_groups.h>\nextern \"C\" __global__ void k(int *p) { cooperative_groups::this_grid().sync(); }\n",
         "k.cu:1:11: cooperative groups"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gx_kernel *kern = (gx_kernel *)1;
        gx_kernel_opts o = {.label = "k.cu"};
        GXT_STATUS(gx_kernel_compile(ctx, cases[i].src, "k", &o, &kern), GX_ERR_UNSUPPORTED);
        GXT_MSG_HAS(cases[i].want);
        GXT_MSG_HAS("CUDA backend");
        GXT_CHECK(kern == NULL);
    }
    /* In a comment or a string it is no construct. */
    gx_kernel *kern = NULL;
    GXT_OK(gx_kernel_compile(ctx, "/* asm( wmma:: */ extern \"C\" __global__ void k(int *p) { p[0] = 1; } // tex1D\n",
                             "k", NULL, &kern));
    GXT_OK(gx_kernel_destroy(kern));
    GXT_OK(gx_kernel_destroy(NULL));
    GXT_STATUS(gx_kernel_launch(NULL, NULL, 0, NULL), GX_ERR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------ CUDA */

static gx_status upload(gx_ctx *ctx, const float *h, int64_t n, gx_array **out)
{
    return gx_array_from_host(ctx, GX_F32, 1, &n, h, out);
}

GXT_TEST(kernel_vadd_suggested_launch)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, VADD, "vadd", NULL, &k));
    const int64_t sizes[] = {1, 31, 32, 33, 1000, 100003, (1 << 20) + 7};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        int64_t n = sizes[t];
        float *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4), *c = malloc((size_t)n * 4);
        fill_rand_f32(a, n);
        fill_rand_f32(b, n);
        gx_array *da = NULL, *db = NULL, *dc = NULL;
        GXT_OK(upload(ctx, a, n, &da));
        GXT_OK(upload(ctx, b, n, &db));
        GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &dc));
        gx_launch_cfg cfg;
        unsigned fill = 0;
        GXT_OK(gx_kernel_suggest(k, n, 0, &cfg, &fill));
        GXT_CHECK(cfg.block[0] >= 32 && cfg.block[0] <= 1024 && fill > 0);
        GXT_CHECK((int64_t)cfg.grid[0] * cfg.block[0] >= n);
        gx_karg args[] = {GX_KARG_ARRAY(da), GX_KARG_ARRAY(db), GX_KARG_ARRAY(dc), GX_KARG_I32((int32_t)n)};
        GXT_OK(gx_kernel_launch(k, &cfg, 4, args));
        GXT_OK(gx_array_to_host(dc, c, (size_t)n * 4));
        int bad = 0;
        for (int64_t i = 0; i < n; i++)
            bad += c[i] != a[i] + b[i];
        GXT_EQ_I64(bad, 0);
        gx_array_release(da);
        gx_array_release(db);
        gx_array_release(dc);
        free(a);
        free(b);
        free(c);
    }
    /* A second compile of the same text comes from the cache. */
    gx_cache_stats before, after;
    gx_kernel *k2 = NULL;
    GXT_OK(gx_cache_stats_get(ctx, &before));
    GXT_OK(gx_kernel_compile(ctx, VADD, "vadd", NULL, &k2));
    GXT_OK(gx_cache_stats_get(ctx, &after));
    GXT_EQ_I64(after.compiles, before.compiles);
    GXT_OK(gx_kernel_destroy(k2));
    GXT_OK(gx_kernel_destroy(k));
}

GXT_TEST(kernel_2d_launch)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    const char *src = "extern \"C\" __global__ void coords(long long *out, int w, int h)\n"
                      "{\n"
                      "    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n"
                      "    if (x < w && y < h) out[(long long)y * w + x] = x + 100000LL * y + 7 * blockIdx.z;\n"
                      "}\n";
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, src, "coords", NULL, &k));
    int w = 100, h = 37;
    int64_t shape[2] = {h, w};
    gx_array *out = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_I64, 2, shape, &out));
    gx_launch_cfg cfg = {.grid = {(unsigned)(w + 15) / 16, (unsigned)(h + 7) / 8}, .block = {16, 8}};
    gx_karg args[] = {GX_KARG_ARRAY(out), GX_KARG_I32(w), GX_KARG_I32(h)};
    GXT_OK(gx_kernel_launch(k, &cfg, 3, args));
    int64_t *hst = malloc((size_t)w * h * 8);
    GXT_OK(gx_array_to_host(out, hst, (size_t)w * h * 8));
    int bad = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            bad += hst[y * w + x] != x + 100000LL * y;
    GXT_EQ_I64(bad, 0);
    free(hst);
    gx_array_release(out);
    gx_kernel_destroy(k);
}

/* k(in, out, per) over `blocks` blocks of 256 threads with per floats of dynamic
 * shared memory each: a gets blocks * per fresh random inputs, o the outputs. */
static gx_status run_per_block(gx_ctx *ctx, gx_kernel *k, int per, int blocks, float *a, float *o)
{
    int64_t n = (int64_t)per * blocks;
    fill_rand_f32(a, n);
    gx_array *din = NULL, *dout = NULL;
    gx_status s = upload(ctx, a, n, &din);
    if (s == GX_OK)
        s = gx_array_zeros(ctx, GX_F32, 1, &n, &dout);
    gx_launch_cfg cfg = {.grid = {(unsigned)blocks}, .block = {256}, .shmem = (size_t)per * 4};
    gx_karg args[] = {GX_KARG_ARRAY(din), GX_KARG_ARRAY(dout), GX_KARG_I32(per)};
    if (s == GX_OK)
        s = gx_kernel_launch(k, &cfg, 3, args);
    if (s == GX_OK)
        s = gx_array_to_host(dout, o, (size_t)n * 4);
    gx_array_release(din);
    gx_array_release(dout);
    return s;
}

GXT_TEST(kernel_dynamic_shared)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    /* Reverses each block's chunk through dynamic shared memory. */
    const char *src = "extern \"C\" __global__ void rev(const float *in, float *out, int per)\n"
                      "{\n"
                      "    extern __shared__ float s[];\n"
                      "    const float *src = in + (long long)blockIdx.x * per;\n"
                      "    for (int i = threadIdx.x; i < per; i += blockDim.x) s[i] = src[i];\n"
                      "    __syncthreads();\n"
                      "    for (int i = threadIdx.x; i < per; i += blockDim.x) out[(long long)blockIdx.x * per + i] = "
                      "s[per - 1 - i];\n"
                      "}\n";
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, src, "rev", NULL, &k));
    gx_device_info info;
    GXT_OK(gx_device_info_get(ctx, &info));
    /* 1 KB (below the 48 KB default) and, where the device allows, 64 KB (opt-in). */
    int pers[2] = {256, 16384};
    for (int t = 0; t < 2; t++) {
        int per = pers[t];
        if ((size_t)per * 4 > info.shared_per_block_optin)
            continue;
        int64_t n = (int64_t)per * 5;
        float *a = malloc((size_t)n * 4), *o = malloc((size_t)n * 4);
        GXT_OK(run_per_block(ctx, k, per, 5, a, o));
        int bad = 0;
        for (int64_t i = 0; i < n; i++)
            bad += o[i] != a[(i / per) * per + per - 1 - i % per];
        GXT_EQ_I64(bad, 0);
        free(a);
        free(o);
    }
    gx_kernel_destroy(k);
}

/* Static and dynamic shared memory together past the 48 KB default: 16 KB static and
 * 40 KB dynamic (each under 48 KB alone) need the opt-in for the dynamic part. */
GXT_TEST(kernel_static_plus_dynamic_shared)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    const char *src = "extern \"C\" __global__ void mix(const float *in, float *out, int per)\n"
                      "{\n"
                      "    __shared__ float st[4096];\n"
                      "    extern __shared__ float s[];\n"
                      "    const float *src = in + (long long)blockIdx.x * per;\n"
                      "    for (int i = threadIdx.x; i < per; i += blockDim.x) s[i] = src[i];\n"
                      "    for (int i = threadIdx.x; i < 4096; i += blockDim.x) st[i] = src[i] + 1.0f;\n"
                      "    __syncthreads();\n"
                      "    for (int i = threadIdx.x; i < per; i += blockDim.x)\n"
                      "        out[(long long)blockIdx.x * per + i] = s[per - 1 - i] + st[i & 4095];\n"
                      "}\n";
    gx_device_info info;
    GXT_OK(gx_device_info_get(ctx, &info));
    const int per = 10240; /* 40 KB dynamic */
    if ((size_t)per * 4 + 16384 > info.shared_per_block_optin)
        return; /* a device without 56 KB of shared memory a block */
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, src, "mix", NULL, &k));
    int64_t n = (int64_t)per * 3;
    float *a = malloc((size_t)n * 4), *o = malloc((size_t)n * 4);
    GXT_OK(run_per_block(ctx, k, per, 3, a, o));
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t b = i / per, j = i % per;
        bad += o[i] != a[b * per + per - 1 - j] + (a[b * per + (j & 4095)] + 1.0f);
    }
    GXT_EQ_I64(bad, 0);
    free(a);
    free(o);
    gx_kernel_destroy(k);
}

GXT_TEST(kernel_launch_limits)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, VADD, "vadd", NULL, &k));
    int64_t n = 100000;
    gx_array *a = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &a));
    gx_karg args[] = {GX_KARG_ARRAY(a), GX_KARG_ARRAY(a), GX_KARG_ARRAY(a), GX_KARG_I32(100000)};
    gx_device_info info;
    GXT_OK(gx_device_info_get(ctx, &info));
    char want[128];
    /* The notebook's mistake: one block of n threads. */
    gx_launch_cfg cfg = {.grid = {1}, .block = {100000}};
    GXT_STATUS(gx_kernel_launch(k, &cfg, 4, args), GX_ERR_LAUNCH);
    snprintf(want, sizeof want, "block of 100000 threads exceeds the device limit of %d", info.max_threads_per_block);
    GXT_MSG_HAS(want);
    gx_launch_cfg sh = {.grid = {1}, .block = {32}, .shmem = info.shared_per_block_optin + 1};
    GXT_STATUS(gx_kernel_launch(k, &sh, 4, args), GX_ERR_LAUNCH);
    GXT_MSG_HAS("shared memory exceed the device limit");
    gx_launch_cfg gy = {.grid = {1, 70000}, .block = {32}};
    GXT_STATUS(gx_kernel_launch(k, &gy, 4, args), GX_ERR_LAUNCH);
    GXT_MSG_HAS("grid dimension y = 70000 exceeds the device limit");
    gx_launch_cfg bz = {.grid = {1}, .block = {1, 1, 128}};
    GXT_STATUS(gx_kernel_launch(k, &bz, 4, args), GX_ERR_LAUNCH);
    GXT_MSG_HAS("block dimension z = 128");
    gx_launch_cfg zero = {.grid = {0}, .block = {32}};
    GXT_STATUS(gx_kernel_launch(k, &zero, 4, args), GX_ERR_LAUNCH);
    /* The context still works after refused launches. */
    gx_launch_cfg ok = {.grid = {(100000 + 255) / 256}, .block = {256}};
    GXT_OK(gx_kernel_launch(k, &ok, 4, args));
    GXT_OK(gx_sync(ctx));
    gx_array_release(a);
    gx_kernel_destroy(k);
}

GXT_TEST(kernel_param_mismatch)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, VADD, "vadd", NULL, &k));
    int64_t n = 64;
    gx_array *a = NULL, *d = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &a));
    GXT_OK(gx_array_zeros(ctx, GX_F64, 1, &n, &d));
    gx_launch_cfg cfg = {.grid = {1}, .block = {64}};
    gx_karg wrong_scalar[] = {GX_KARG_ARRAY(a), GX_KARG_ARRAY(a), GX_KARG_ARRAY(a), GX_KARG_F64(64)};
    GXT_STATUS(gx_kernel_launch(k, &cfg, 4, wrong_scalar), GX_ERR_TYPE);
    GXT_MSG_HAS("argument 3 (n)");
    GXT_MSG_HAS("GX_KARG_I32");
    gx_karg wrong_kind[] = {GX_KARG_ARRAY(a), GX_KARG_I32(1), GX_KARG_ARRAY(a), GX_KARG_I32(64)};
    GXT_STATUS(gx_kernel_launch(k, &cfg, 4, wrong_kind), GX_ERR_TYPE);
    GXT_MSG_HAS("argument 1 (b)");
    gx_karg wrong_elem[] = {GX_KARG_ARRAY(d), GX_KARG_ARRAY(a), GX_KARG_ARRAY(a), GX_KARG_I32(64)};
    GXT_STATUS(gx_kernel_launch(k, &cfg, 4, wrong_elem), GX_ERR_TYPE);
    GXT_MSG_HAS("argument 0 (a)");
    GXT_MSG_HAS("f64");
    GXT_STATUS(gx_kernel_launch(k, &cfg, 3, wrong_scalar), GX_ERR_TYPE);
    GXT_MSG_HAS("takes 4 arguments (a, b, c, n), got 3");
    gx_karg raw[] = {GX_KARG_PTR(NULL), GX_KARG_ARRAY(a), GX_KARG_ARRAY(a), GX_KARG_I32(0)};
    GXT_OK(gx_kernel_launch(k, &cfg, 4, raw)); /* n = 0: touches nothing */
    GXT_OK(gx_sync(ctx));
    gx_kernel *none = NULL;
    GXT_STATUS(gx_kernel_compile(ctx, VADD, "vsub", NULL, &none), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("vsub");
    GXT_STATUS(gx_kernel_compile(ctx, "extern \"C\" __global__ void k() { oops; }", "k", NULL, &none), GX_ERR_COMPILE);
    GXT_MSG_HAS("oops");
    gx_array_release(a);
    gx_array_release(d);
    gx_kernel_destroy(k);
}

/* ------------------------------------------------------------ kernel faults
 * CUDA keeps a sticky fault for the rest of the process, so each scenario runs in a
 * fresh child process (exec'ed, not just forked: a forked child may not use CUDA
 * that its parent initialised).  The child checks the documented statuses and
 * messages and exits 0; the parent then shows that a new process -- itself -- gets
 * a working device. */

#include <sys/wait.h>

static int fault_failures;
#define FAULT_CHECK(cond)                                                                                       \
    do {                                                                                                        \
        if (!(cond)) {                                                                                          \
            fprintf(stderr, "child: %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, #cond, gx_last_error()); \
            fault_failures++;                                                                                   \
        }                                                                                                       \
    } while (0)

static gx_status fault_launch(gx_ctx *ctx, gx_kernel **k)
{
    const char *src = "extern \"C\" __global__ void bad(float *p) { p[threadIdx.x] = 1.0f; }\n";
    gx_status s = gx_kernel_compile(ctx, src, "bad", NULL, k);
    if (s != GX_OK)
        return s;
    gx_launch_cfg cfg = {.grid = {1}, .block = {32}};
    gx_karg args[] = {GX_KARG_PTR((void *)(uintptr_t)0x10)};
    return gx_kernel_launch(*k, &cfg, 1, args);
}

/* The CPU backend keeps working in a process whose CUDA is poisoned. */
static void fault_cpu_still_works(void)
{
    gx_ctx *cpu = NULL;
    gx_array *x = NULL, *y = NULL;
    FAULT_CHECK(gx_ctx_create(&cpu, GX_BACKEND_CPU) == GX_OK);
    FAULT_CHECK(gx_array_iota(cpu, GX_F32, 100, 1, 1, &x) == GX_OK);
    FAULT_CHECK(gx_map(cpu, "x -> x * 3", 1, &x, NULL, &y) == GX_OK);
    float h[100] = {0};
    FAULT_CHECK(gx_array_to_host(y, h, sizeof h) == GX_OK && h[0] == 3 && h[99] == 300);
    gx_array_release(x), gx_array_release(y);
    FAULT_CHECK(gx_ctx_destroy(cpu) == GX_OK);
}

/* mode 1: one context faults; mode 2: a second context is alive beside it. */
int gxt_child_fault_probe(int mode);
int gxt_child_fault_probe(int mode)
{
    gx_ctx *ctx = NULL, *other = NULL;
    gx_kernel *k = NULL;
    gx_array *z = NULL, *w = NULL;
    int64_t n = 8;
    if (gx_ctx_create(&ctx, GX_BACKEND_CUDA) != GX_OK)
        return 4;
    if (mode == 2 && (gx_ctx_create(&other, GX_BACKEND_CUDA) != GX_OK || gx_array_zeros(other, GX_F32, 1, &n, &w)))
        return 5;
    gx_status s = fault_launch(ctx, &k);
    FAULT_CHECK(s == GX_OK || s == GX_ERR_KERNEL_FAULT);
    FAULT_CHECK(gx_sync(ctx) == GX_ERR_KERNEL_FAULT);
    FAULT_CHECK(strstr(gx_last_error(), "illegal") && strstr(gx_last_error(), "restart the process"));
    /* every later call on the context reports it, and says what to do */
    FAULT_CHECK(gx_array_zeros(ctx, GX_F32, 1, &n, &z) == GX_ERR_KERNEL_FAULT);
    FAULT_CHECK(strstr(gx_last_error(), "restart the process") != NULL);
    if (mode == 2) { /* the other context shares the process: it is poisoned too */
        float h[8];
        FAULT_CHECK(gx_array_to_host(w, h, sizeof h) == GX_ERR_KERNEL_FAULT);
        FAULT_CHECK(strstr(gx_last_error(), "restart the process") != NULL);
        gx_array_release(w);
        FAULT_CHECK(gx_ctx_destroy(other) == GX_OK);
    }
    FAULT_CHECK(gx_kernel_destroy(k) == GX_OK);
    FAULT_CHECK(gx_ctx_destroy(ctx) == GX_OK); /* releases everything, quietly */
    /* a new CUDA context in this process is refused, with the way out */
    s = gx_ctx_create(&ctx, GX_BACKEND_CUDA);
    FAULT_CHECK(s == GX_ERR_KERNEL_FAULT && ctx == NULL);
    FAULT_CHECK(strstr(gx_last_error(), "restart the process") != NULL);
    if (s == GX_OK)
        gx_ctx_destroy(ctx);
    fault_cpu_still_works();
    printf("child (mode %d): %d check(s) failed\n", mode, fault_failures);
    return fault_failures ? 1 : 0;
}

static void fault_scenario(int mode)
{
    const char *be = getenv("GX_BACKEND");
    int count = 0;
    gx_cuda_device_count(&count);
    if (!be || strcmp(be, "cuda") != 0 || count == 0) {
        gxt_skip("needs GX_BACKEND=cuda and a GPU");
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "gx_tests", "--child-fault-probe", mode == 2 ? "2" : "1", (char *)NULL);
        _exit(3);
    }
    int st = 0; /* a failed fork or wait must not read as a child that exited 0 */
    GXT_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* This process never faulted: the device works here, results checked. */
    gx_ctx *ctx = gxt_ctx();
    gx_array *z = NULL, *y = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, 1000, 1, 1, &z));
    GXT_OK(gx_map(ctx, "x -> x * 2", 1, &z, NULL, &y));
    float h[1000];
    GXT_OK(gx_array_to_host(y, h, sizeof h));
    GXT_CHECK(h[0] == 2 && h[999] == 2000);
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, VADD, "vadd", NULL, &k));
    gx_kernel_destroy(k);
    gx_array_release(z);
    gx_array_release(y);
}

GXT_TEST(kernel_fault_then_a_new_process_works) { fault_scenario(1); }
GXT_TEST(kernel_fault_poisons_every_context_of_the_process) { fault_scenario(2); }

GXT_TEST(kernel_reflection)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    const char *src = "extern \"C\" __global__ void stat(float *x) {\n"
                      "    __shared__ float s[100];\n"
                      "    s[threadIdx.x % 100] = x[threadIdx.x];\n"
                      "    __syncthreads();\n"
                      "    x[threadIdx.x] = s[(threadIdx.x + 1) % 100];\n"
                      "}\n";
    GXT_OK(gx_kernel_compile(ctx, src, "stat", NULL, &k));
    gx_kernel_attrs at;
    GXT_OK(gx_kernel_attrs_get(k, &at));
    gx_backend_kind kind;
    GXT_OK(gx_ctx_backend(ctx, &kind));
    if (kind == GX_BACKEND_CPU) {
        /* The CPU's documented answers: no registers, its own limits, arch "cpu"; PTX is
         * NVRTC's (gx_kernel_ptx_offline gives it without a GPU). */
        GXT_EQ_I64(at.registers, 0);
        GXT_EQ_I64(at.max_threads_per_block, 1024);
        GXT_EQ_I64(at.nparams, 1);
        GXT_CHECK(strcmp(at.entry, "stat") == 0 && strcmp(at.arch, "cpu") == 0);
        int blocks = 0;
        GXT_OK(gx_kernel_active_blocks(k, 128, 0, &blocks));
        GXT_EQ_I64(blocks, 4);
        gx_kernel_destroy(k);
        return;
    }
    GXT_CHECK(at.registers > 0 && at.registers <= 255);
    GXT_CHECK(at.max_threads_per_block > 0 && at.max_threads_per_block <= 1024);
    GXT_CHECK(at.static_shared >= 400); /* __shared__ float s[100] */
    GXT_CHECK(at.binary_version >= 50 && at.ptx_version >= 50);
    GXT_EQ_I64(at.nparams, 1);
    GXT_CHECK(strcmp(at.entry, "stat") == 0);
    GXT_CHECK(strncmp(at.arch, "sm_", 3) == 0 || strncmp(at.arch, "compute_", 8) == 0);
    int blocks = 0;
    GXT_OK(gx_kernel_active_blocks(k, 128, 0, &blocks));
    GXT_CHECK(blocks > 0 && blocks <= 64);
    char *ptx = NULL;
    GXT_OK(gx_kernel_ptx(k, &ptx));
    GXT_CHECK(strstr(ptx, ".entry stat") != NULL);
    gx_text_free(ptx);
    char *sass = NULL;
    gx_status s = gx_kernel_sass(k, &sass);
    GXT_CHECK(s == GX_OK || s == GX_ERR_UNSUPPORTED);
    if (s == GX_OK)
        GXT_CHECK(strstr(sass, "stat") != NULL);
    gx_text_free(sass);
    gx_kernel_destroy(k);
}

GXT_TEST(kernel_device_helpers)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    /* Per block: sum, min, inclusive/exclusive scans; per thread: Philox words. */
    const char *src = "#include <gx/device.h>\n"
                      "extern \"C\" __global__ void helpers(const int *x, int *sum, int *mn, int *inc, int *exc,\n"
                      "                                    int *wsum, unsigned *rnd, long long n)\n"
                      "{\n"
                      "    long long i = gx_global_id();\n"
                      "    int v = i < n ? x[i] : 0;\n"
                      "    int s = gx_block_sum(v), m = gx_block_min(i < n ? v : 2147483647);\n"
                      "    int a = gx_block_inclusive_sum(v), b = gx_block_exclusive_sum(v);\n"
                      "    int w = gx_warp_sum(v);\n"
                      "    if (i < n) {\n"
                      "        inc[i] = a; exc[i] = b; wsum[i] = w;\n"
                      "        uint32_t c[4] = {(uint32_t)i, 7u, 0u, 0u}, k[2] = {42u, 43u};\n"
                      "        rnd[i] = gx_philox4x32_10(c, k).v[i % 4];\n"
                      "    }\n"
                      "    if (gx_thread_rank() == 0) { sum[blockIdx.x] = s; mn[blockIdx.x] = m; }\n"
                      "}\n";
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, src, "helpers", NULL, &k));
    const int B = 256;
    int64_t n = 1000, nb = (n + B - 1) / B;
    int32_t *x = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        x[i] = (int32_t)(gxt_rand_u64() % 2001) - 1000;
    gx_array *dx = NULL, *o[6] = {0}, *dr = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, x, &dx));
    for (int j = 0; j < 2; j++)
        GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &nb, &o[j]));
    for (int j = 2; j < 5; j++)
        GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &o[j]));
    GXT_OK(gx_array_zeros(ctx, GX_U32, 1, &n, &dr));
    gx_launch_cfg cfg = {.grid = {(unsigned)nb}, .block = {B}};
    gx_karg args[] = {GX_KARG_ARRAY(dx),   GX_KARG_ARRAY(o[0]), GX_KARG_ARRAY(o[1]), GX_KARG_ARRAY(o[2]),
                      GX_KARG_ARRAY(o[3]), GX_KARG_ARRAY(o[4]), GX_KARG_ARRAY(dr),   GX_KARG_I64(n)};
    GXT_OK(gx_kernel_launch(k, &cfg, 8, args));
    int32_t hs[4], hm[4], *hi = malloc((size_t)n * 4), *he = malloc((size_t)n * 4), *hw = malloc((size_t)n * 4);
    uint32_t *hr = malloc((size_t)n * 4);
    GXT_OK(gx_array_to_host(o[0], hs, sizeof hs));
    GXT_OK(gx_array_to_host(o[1], hm, sizeof hm));
    GXT_OK(gx_array_to_host(o[2], hi, (size_t)n * 4));
    GXT_OK(gx_array_to_host(o[3], he, (size_t)n * 4));
    GXT_OK(gx_array_to_host(o[4], hw, (size_t)n * 4));
    GXT_OK(gx_array_to_host(dr, hr, (size_t)n * 4));
    int bad = 0;
    for (int64_t b = 0; b < nb; b++) {
        int s = 0, m = 2147483647, run = 0;
        for (int64_t i = b * B; i < (b + 1) * B && i < n; i++) {
            s += x[i];
            m = x[i] < m ? x[i] : m;
            bad += he[i] != run;
            run += x[i];
            bad += hi[i] != run;
        }
        bad += hs[b] != s || hm[b] != m;
    }
    for (int64_t w = 0; w < n; w += 32) {
        int s = 0;
        for (int64_t i = w; i < w + 32; i++)
            s += i < n ? x[i] : 0;
        for (int64_t i = w; i < w + 32 && i < n; i++)
            bad += hw[i] != s;
    }
    for (int64_t i = 0; i < n; i++) {
        uint32_t c[4] = {(uint32_t)i, 7u, 0u, 0u}, key[2] = {42u, 43u};
        bad += hr[i] != gx_philox4x32_10(c, key).v[i % 4]; /* bit-exact with the host */
    }
    GXT_EQ_I64(bad, 0);
    free(x);
    free(hi);
    free(he);
    free(hw);
    free(hr);
    gx_array_release(dx);
    gx_array_release(dr);
    for (int j = 0; j < 5; j++)
        gx_array_release(o[j]);
    gx_kernel_destroy(k);
}

GXT_TEST(kernel_cooperative)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, VADD, "vadd", NULL, &k));
    int64_t n = 4096;
    gx_array *a = NULL, *c = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &a));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &c));
    gx_karg args[] = {GX_KARG_ARRAY(a), GX_KARG_ARRAY(a), GX_KARG_ARRAY(c), GX_KARG_I32((int32_t)n)};
    gx_launch_cfg cfg = {.grid = {16}, .block = {256}, .cooperative = 1};
    gx_status s = gx_kernel_launch(k, &cfg, 4, args);
    if (s == GX_ERR_UNSUPPORTED) {
        gxt_skip("cooperative launch not supported on this device");
        return;
    }
    GXT_OK(s);
    float h[4096];
    GXT_OK(gx_array_to_host(c, h, sizeof h));
    GXT_CHECK(h[0] == 0 && h[4095] == 8190);
    gx_launch_cfg big = {.grid = {1u << 24}, .block = {1024}, .cooperative = 1};
    GXT_STATUS(gx_kernel_launch(k, &big, 4, args), GX_ERR_LAUNCH);
    GXT_MSG_HAS("resident at once");
    gx_array_release(a);
    gx_array_release(c);
    gx_kernel_destroy(k);
}

/* ------------------------------------------------------------ both backends: semantics */

/* Atomics on global and shared memory, 32- and 64-bit, float add; __syncthreads_count;
 * ballot.  One block per 256 items; every result is checked against the host. */
GXT_TEST(kernel_atomics_and_votes)
{
    gx_ctx *ctx = gxt_ctx();
    const char *src =
        "extern \"C\" __global__ void at(const int *x, int *i32, unsigned long long *u64, float *f32, int *cnt,\n"
        "                                unsigned *ballots, int n)\n"
        "{\n"
        "    __shared__ int smax;\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (threadIdx.x == 0) smax = -2147483647;\n"
        "    __syncthreads();\n"
        "    int v = i < n ? x[i] : 0;\n"
        "    atomicAdd(&i32[0], v);\n"
        "    atomicMin(&i32[1], v);\n"
        "    atomicMax(&smax, v);\n"
        "    atomicOr(&i32[2], i < n ? (1 << (v & 15)) : 0);\n"
        "    atomicAdd(&u64[0], (unsigned long long)(v + 1000));\n"
        "    atomicAdd(&f32[0], i < n ? 0.5f : 0.0f);\n"
        "    int c = __syncthreads_count(v > 0);\n"
        "    unsigned b = __ballot_sync(0xffffffffu, v > 0);\n"
        "    if (threadIdx.x == 0) { cnt[blockIdx.x] = c; atomicMax(&i32[3], smax); }\n"
        "    if ((threadIdx.x & 31) == 0) ballots[i >> 5] = b;\n"
        "}\n";
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, src, "at", NULL, &k));
    const int n = 1000, B = 256, nb = (n + B - 1) / B;
    int32_t x[1024] = {0};
    for (int i = 0; i < n; i++)
        x[i] = (int)(gxt_rand_u64() % 2001) - 1000;
    int64_t nn = n, four = 4, one = 1, nbl = nb, nballot = nb * B / 32;
    gx_array *dx = NULL, *di = NULL, *du = NULL, *df = NULL, *dc = NULL, *dbal = NULL;
    int32_t init[4] = {0, 2147483647, 0, -2147483647};
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &nn, x, &dx));
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &four, init, &di));
    GXT_OK(gx_array_zeros(ctx, GX_U64, 1, &one, &du));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &one, &df));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &nbl, &dc));
    GXT_OK(gx_array_zeros(ctx, GX_U32, 1, &nballot, &dbal));
    gx_launch_cfg cfg = {.grid = {(unsigned)nb}, .block = {(unsigned)B}};
    gx_karg args[] = {GX_KARG_ARRAY(dx), GX_KARG_ARRAY(di), GX_KARG_ARRAY(du), GX_KARG_ARRAY(df),
                      GX_KARG_ARRAY(dc), GX_KARG_ARRAY(dbal), GX_KARG_I32(n)};
    GXT_OK(gx_kernel_launch(k, &cfg, 7, args));
    int32_t hi[4], hc[4];
    uint64_t hu;
    float hf;
    uint32_t hb[32];
    GXT_OK(gx_array_to_host(di, hi, sizeof hi));
    GXT_OK(gx_array_to_host(du, &hu, sizeof hu));
    GXT_OK(gx_array_to_host(df, &hf, sizeof hf));
    GXT_OK(gx_array_to_host(dc, hc, sizeof hc));
    GXT_OK(gx_array_to_host(dbal, hb, sizeof hb));
    int64_t sum = 0, mn = 2147483647, mx = -2147483647, bits = 0;
    for (int i = 0; i < n; i++) {
        sum += x[i];
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
        bits |= 1 << (x[i] & 15);
    }
    GXT_EQ_I64(hi[0], sum);
    GXT_EQ_I64(hi[1], mn);
    GXT_EQ_I64(hi[2], bits);
    GXT_EQ_I64(hi[3], mx);
    GXT_EQ_I64((int64_t)hu, sum + 1000LL * nb * B);
    GXT_NEAR(hf, 0.5 * n, 0);
    for (int b = 0; b < nb; b++) {
        int c = 0;
        for (int i = b * B; i < (b + 1) * B; i++)
            c += x[i] > 0;
        GXT_EQ_I64(hc[b], c);
    }
    for (int w = 0; w < nb * B / 32; w++) {
        uint32_t want = 0;
        for (int l = 0; l < 32; l++)
            want |= (uint32_t)(x[w * 32 + l] > 0) << l;
        GXT_EQ_I64(hb[w], want);
    }
    gx_array_release(dx), gx_array_release(di), gx_array_release(du), gx_array_release(df);
    gx_array_release(dc), gx_array_release(dbal);
    gx_kernel_destroy(k);
}

/* The workshop's transpose race: without __syncthreads a thread reads tile entries
 * that another thread has not written yet.  The CPU runs such a block's threads one
 * after another, so the result is wrong -- and the launch never hangs. */
GXT_TEST(kernel_missing_barrier_is_wrong_not_a_hang)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind kind;
    GXT_OK(gx_ctx_backend(ctx, &kind));
    if (kind != GX_BACKEND_CPU) {
        gxt_skip("on a GPU the race's outcome is timing-dependent; the CPU's is fixed");
        return;
    }
    const char *src = "extern \"C\" __global__ void tr(const float *in, float *out, int n)\n"
                      "{\n"
                      "    __shared__ float tile[16][17];\n"
                      "    int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;\n"
                      "    tile[threadIdx.y][threadIdx.x] = in[y * n + x];\n"
                      "    /* missing: __syncthreads(); */\n"
                      "    x = blockIdx.y * 16 + threadIdx.x, y = blockIdx.x * 16 + threadIdx.y;\n"
                      "    out[y * n + x] = tile[threadIdx.x][threadIdx.y];\n"
                      "}\n";
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, src, "tr", NULL, &k));
    int64_t shape[2] = {32, 32};
    float h[1024], o[1024];
    for (int i = 0; i < 1024; i++)
        h[i] = (float)i + 1;
    gx_array *a = NULL, *b = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 2, shape, h, &a));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, shape, &b));
    gx_launch_cfg cfg = {.grid = {2, 2}, .block = {16, 16}};
    gx_karg args[] = {GX_KARG_ARRAY(a), GX_KARG_ARRAY(b), GX_KARG_I32(32)};
    GXT_OK(gx_kernel_launch(k, &cfg, 3, args));
    GXT_OK(gx_array_to_host(b, o, sizeof o));
    int wrong = 0;
    for (int r = 0; r < 32; r++)
        for (int c = 0; c < 32; c++)
            wrong += o[r * 32 + c] != h[c * 32 + r];
    GXT_CHECK(wrong > 0);
    gx_array_release(a), gx_array_release(b);
    gx_kernel_destroy(k);
}

/* A barrier that only some threads reach: reported (the CPU detects it), no hang. */
GXT_TEST(kernel_divergent_barrier_is_reported)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind kind;
    GXT_OK(gx_ctx_backend(ctx, &kind));
    if (kind != GX_BACKEND_CPU) {
        gxt_skip("a GPU does not detect a barrier in divergent code (it may hang); the CPU backend reports it");
        return;
    }
    const char *src = "extern \"C\" __global__ void halfway(int *p)\n"
                      "{\n"
                      "    if (threadIdx.x < 16) return;\n"
                      "    __syncthreads();\n"
                      "    p[threadIdx.x] = 1;\n"
                      "}\n";
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, src, "halfway", NULL, &k));
    int64_t n = 64;
    gx_array *a = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &a));
    gx_launch_cfg cfg = {.grid = {3}, .block = {64}};
    gx_karg args[] = {GX_KARG_ARRAY(a)};
    GXT_STATUS(gx_kernel_launch(k, &cfg, 1, args), GX_ERR_KERNEL_FAULT);
    GXT_MSG_HAS("__syncthreads() in divergent code");
    /* The context and the kernel stay usable. */
    const char *ok = "extern \"C\" __global__ void fine(int *p) { p[threadIdx.x] = 2; }\n";
    gx_kernel *k2 = NULL;
    GXT_OK(gx_kernel_compile(ctx, ok, "fine", NULL, &k2));
    gx_launch_cfg c1 = {.grid = {1}, .block = {64}};
    GXT_OK(gx_kernel_launch(k2, &c1, 1, args));
    int32_t h[64];
    GXT_OK(gx_array_to_host(a, h, sizeof h));
    GXT_EQ_I64(h[63], 2);
    gx_array_release(a);
    gx_kernel_destroy(k);
    gx_kernel_destroy(k2);
}

/* gx/device.h's halves in a user kernel (CPU and CUDA backends): every f16 and bf16
 * pattern widened, and floats narrowed -- random bit patterns (NaNs, infinities,
 * subnormals), exact f16 midpoints and exact bf16 midpoints (the ties) -- each
 * bit-identical with the host functions of gx.h.  gx_f16 / gx_bf16 pointer
 * parameters take f16 / bf16 arrays. */
static const char *HALVES = "#include <gx/device.h>\n"
                            "extern \"C\" __global__ void halves(const gx_f16 *h, const gx_bf16 *hb, const float *f,\n"
                            "    float *wide, float *wideb, gx_f16 *nh, gx_bf16 *nb, int64_t n)\n"
                            "{\n"
                            "    GX_FOR_EACH(i, n) {\n"
                            "        wide[i] = gx_f16_to_float(h[i]);\n"
                            "        wideb[i] = gx_bf16_to_float(hb[i]);\n"
                            "        nh[i] = gx_float_to_f16(f[i]);\n"
                            "        nb[i] = gx_float_to_bf16(f[i]);\n"
                            "    }\n"
                            "}\n";

static uint32_t f_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

GXT_TEST(kernel_device_halves_match_host)
{
    gx_ctx *ctx = gxt_ctx();
    if (!ctx)
        return;
    int64_t n = 3 * 65536;
    uint16_t *h = malloc((size_t)n * 2), *nh = malloc((size_t)n * 2), *nb = malloc((size_t)n * 2);
    float *f = malloc((size_t)n * 4), *w = malloc((size_t)n * 4), *wb = malloc((size_t)n * 4);
    uint64_t st = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < n; i++) {
        uint32_t p = (uint32_t)(i & 0xffff), bits;
        h[i] = (uint16_t)p;
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        if (i < 65536) {
            bits = (uint32_t)(st >> 32); /* any pattern */
        } else if (i < 2 * 65536) { /* halfway between f16 p and its successor (p < 0x7c00 and sign) */
            uint16_t q = (uint16_t)(p & 0x7bff);
            double mid = ((double)gx_f16_to_f32(q) + (double)gx_f16_to_f32((uint16_t)(q + 1))) / 2;
            float m = (float)(p & 0x8000 ? -mid : mid);
            memcpy(&bits, &m, 4);
        } else {
            bits = p << 16 | 0x8000u; /* a bf16 tie */
        }
        memcpy(&f[i], &bits, 4);
    }
    gx_array *H = NULL, *HB = NULL, *F = NULL, *W = NULL, *WB = NULL, *NH = NULL, *NB = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F16, 1, &n, h, &H));
    GXT_OK(gx_array_from_host(ctx, GX_BF16, 1, &n, h, &HB));
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, f, &F));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &W));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &WB));
    GXT_OK(gx_array_zeros(ctx, GX_F16, 1, &n, &NH));
    GXT_OK(gx_array_zeros(ctx, GX_BF16, 1, &n, &NB));
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, HALVES, "halves", NULL, &k));
    gx_launch_cfg cfg;
    unsigned fill = 0;
    GXT_OK(gx_kernel_suggest(k, n, 0, &cfg, &fill));
    gx_karg args[] = {GX_KARG_ARRAY(H),  GX_KARG_ARRAY(HB), GX_KARG_ARRAY(F),  GX_KARG_ARRAY(W),
                      GX_KARG_ARRAY(WB), GX_KARG_ARRAY(NH), GX_KARG_ARRAY(NB), GX_KARG_I64(n)};
    GXT_OK(gx_kernel_launch(k, &cfg, 8, args));
    GXT_OK(gx_array_to_host(W, w, (size_t)n * 4));
    GXT_OK(gx_array_to_host(WB, wb, (size_t)n * 4));
    GXT_OK(gx_array_to_host(NH, nh, (size_t)n * 2));
    GXT_OK(gx_array_to_host(NB, nb, (size_t)n * 2));
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 10; i++) {
        bool ok = f_bits(w[i]) == f_bits(gx_f16_to_f32(h[i])) && f_bits(wb[i]) == f_bits(gx_bf16_to_f32(h[i])) &&
                  nh[i] == gx_f32_to_f16(f[i]) && nb[i] == gx_f32_to_bf16(f[i]);
        if (!ok) {
            GXT_FAIL_AT(__FILE__, __LINE__,
                        "i=%lld: widen %04x -> %08x / %08x (host %08x / %08x); narrow %08x -> %04x / %04x (host "
                        "%04x / %04x)",
                        (long long)i, h[i], f_bits(w[i]), f_bits(wb[i]), f_bits(gx_f16_to_f32(h[i])),
                        f_bits(gx_bf16_to_f32(h[i])), f_bits(f[i]), nh[i], nb[i], gx_f32_to_f16(f[i]),
                        gx_f32_to_bf16(f[i]));
            bad++;
        }
    }
    /* and on the host, through this header's portable part */
    for (int64_t i = 0; i < n && bad < 10; i++) {
        gx_f16 a = gx_f16_make(h[i]);
        gx_bf16 b = gx_bf16_make(h[i]);
        if (f_bits(gx_f16_to_float(a)) != f_bits(w[i]) || f_bits(gx_bf16_to_float(b)) != f_bits(wb[i]) ||
            gx_float_to_f16(f[i]).b != nh[i] || gx_float_to_bf16(f[i]).b != nb[i]) {
            GXT_FAIL_AT(__FILE__, __LINE__, "host device.h i=%lld", (long long)i);
            bad++;
        }
    }
    GXT_OK(gx_kernel_destroy(k));
    gx_array_release(H), gx_array_release(HB), gx_array_release(F), gx_array_release(W), gx_array_release(WB);
    gx_array_release(NH), gx_array_release(NB);
    free(h), free(nh), free(nb), free(f), free(w), free(wb);
}

/* The same kernel through NVRTC (no GPU needed): gx/device.h's halves compile as CUDA. */
GXT_TEST(kernel_device_halves_ptx_offline)
{
    if (!gxt_have_nvrtc())
        return;
    char *ptx = NULL;
    GXT_OK(gx_kernel_ptx_offline(HALVES, "halves", "sm_90", NULL, &ptx));
    GXT_CHECK(strstr(ptx, ".entry halves") != NULL);
    gx_text_free(ptx);
}

/* Checked mode (gx_at, assert) on both backends: the launch returns, gx_sync reports
 * the first failure (function, line, block, thread, index and bound), the next sync
 * is clean and the context works.  An out-of-bounds write into a __shared__ array
 * through gx_at is caught as well as one into global memory. */
static const char *CHECKED = "#include <assert.h>\n"
                             "#include <gx/device.h>\n"
                             "extern \"C\" __global__ void chk(float *x, int n, int m, int limit, int sh)\n"
                             "{\n"
                             "    __shared__ float tile[32];\n"
                             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    assert(i < limit);\n"
                             "    gx_at(tile, threadIdx.x + sh - 32, 32) = 1.0f + i;\n"
                             "    __syncthreads(); /* the read below is another thread's write when sh != 32 */\n"
                             "    if (i < m) gx_at(x, i, n) = 2.0f * i + tile[threadIdx.x % 32];\n"
                             "}\n";

static void checked_case(gx_ctx *ctx, gx_kernel *k, int m, int limit, int sh, const char *want)
{
    int64_t n = 40;
    gx_array *a = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &a));
    gx_launch_cfg cfg = {.grid = {2}, .block = {32}};
    gx_karg args[] = {GX_KARG_ARRAY(a), GX_KARG_I32((int32_t)n), GX_KARG_I32(m), GX_KARG_I32(limit), GX_KARG_I32(sh)};
    GXT_OK(gx_kernel_launch(k, &cfg, 5, args));
    if (want) {
        GXT_STATUS(gx_sync(ctx), GX_ERR_KERNEL_FAULT);
        GXT_MSG_HAS("checked kernel failure in chk");
        GXT_MSG_HAS(want);
    }
    GXT_OK(gx_sync(ctx)); /* reported once */
    float h[40];
    GXT_OK(gx_array_to_host(a, h, sizeof h));
    for (int i = 0; i < 40 && i < m && sh == 32; i++)
        GXT_NEAR(h[i], 2.0f * i + 1.0f + i, 0); /* each thread reads its own tile slot back */
    gx_array_release(a);
}

GXT_TEST(kernel_checked_mode)
{
    gx_ctx *ctx = gxt_ctx();
    gx_kernel_opts o = {.checked = 1};
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, CHECKED, "chk", &o, &k));
    checked_case(ctx, k, 40, 64, 32, NULL);                          /* all in bounds */
    checked_case(ctx, k, 64, 64, 32, "index out of bounds");         /* global x[40..63] */
    GXT_MSG_HAS("(index 4");                                          /* 40..63: valid 0..39 */
    GXT_MSG_HAS("valid 0..39)");
    checked_case(ctx, k, 40, 64, 33, "index 32, valid 0..31");      /* tile[32]: shared */
    checked_case(ctx, k, 40, 50, 32, "assertion failed: i < limit"); /* assert */
    checked_case(ctx, k, 40, 64, 32, NULL);                          /* still usable */
    gx_kernel_destroy(k);
}

/* Unchecked assert() on the CPU: the launch itself reports it (on a GPU it traps and
 * poisons the context, see kernel_fault_*), naming the kernel and the expression;
 * the process is not aborted. */
GXT_TEST(kernel_cpu_unchecked_assert)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind kind;
    GXT_OK(gx_ctx_backend(ctx, &kind));
    if (kind != GX_BACKEND_CPU) {
        gxt_skip("an unchecked failed assert traps a GPU kernel (kernel_fault_* tests that in a child)");
        return;
    }
    unsetenv("GX_KERNEL_CHECKS");
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, CHECKED, "chk", NULL, &k));
    int64_t n = 40;
    gx_array *a = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &a));
    gx_launch_cfg cfg = {.grid = {2}, .block = {32}};
    gx_karg args[] = {GX_KARG_ARRAY(a), GX_KARG_I32(40), GX_KARG_I32(40), GX_KARG_I32(50), GX_KARG_I32(32)};
    GXT_STATUS(gx_kernel_launch(k, &cfg, 5, args), GX_ERR_KERNEL_FAULT);
    GXT_MSG_HAS("kernel fault in chk");
    GXT_MSG_HAS("assertion failed: i < limit");
    args[3] = GX_KARG_I32(64);
    GXT_OK(gx_kernel_launch(k, &cfg, 5, args));
    GXT_OK(gx_sync(ctx));
    gx_array_release(a);
    gx_kernel_destroy(k);
}

/* PTX/SASS of a CPU kernel: a clear refusal that says what to use instead. */
GXT_TEST(kernel_cpu_has_no_ptx)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind kind;
    GXT_OK(gx_ctx_backend(ctx, &kind));
    if (kind != GX_BACKEND_CPU) {
        gxt_skip("the CUDA backend has PTX (kernel_reflection)");
        return;
    }
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, VADD, "vadd", NULL, &k));
    char *t = NULL;
    GXT_STATUS(gx_kernel_ptx(k, &t), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("the CPU backend has no PTX");
    GXT_MSG_HAS("gx_kernel_attrs_get");
    GXT_CHECK(t == NULL);
    GXT_STATUS(gx_kernel_sass(k, &t), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("gx_kernel_sass");
    gx_kernel_destroy(k);
}

/* One source on both backends, same inputs, same results: a kernel that mixes a
 * plain thread loop kernel and one with shared memory, barriers, warp shuffles and
 * shared atomics.  Runs where a GPU is present (the CPU half always runs). */
static const char *CROSS = "#include <gx/device.h>\n"
                           "extern \"C\" __global__ void scale(const float *x, float *y, int n, float s)\n"
                           "{\n"
                           "    GX_FOR_EACH(i, n) y[i] = s * x[i] + 1.0f;\n"
                           "}\n"
                           "extern \"C\" __global__ void blocks(const float *x, float *sum, int *cnt, int *hist, int n)\n"
                           "{\n"
                           "    __shared__ float part[32];\n"
                           "    __shared__ int h[8];\n"
                           "    if (threadIdx.x < 8) h[threadIdx.x] = 0;\n"
                           "    __syncthreads();\n"
                           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "    float v = i < n ? x[i] : 0.0f;\n"
                           "    if (i < n) atomicAdd(&h[((int)(v * 8.0f)) & 7], 1);\n"
                           "    float w = v;\n"
                           "    for (int d = 16; d > 0; d >>= 1) w += __shfl_down_sync(0xffffffffu, w, d);\n"
                           "    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = w;\n"
                           "    int c = __syncthreads_count(i < n && v > 0.5f);\n"
                           "    if (threadIdx.x == 0) {\n"
                           "        float t = 0.0f;\n"
                           "        for (int k = 0; k < (int)(blockDim.x >> 5); k++) t += part[k];\n"
                           "        sum[blockIdx.x] = t;\n"
                           "        cnt[blockIdx.x] = c;\n"
                           "    }\n"
                           "    __syncthreads();\n"
                           "    if (threadIdx.x < 8) atomicAdd(&hist[threadIdx.x], h[threadIdx.x]);\n"
                           "}\n";

typedef struct cross_out {
    float y[1000], sum[8];
    int32_t cnt[8], hist[8];
} cross_out;

static void cross_run(gx_ctx *ctx, const float *x, int n, cross_out *o)
{
    gx_kernel *ks = NULL, *kb = NULL;
    GXT_OK(gx_kernel_compile(ctx, CROSS, "scale", NULL, &ks));
    GXT_OK(gx_kernel_compile(ctx, CROSS, "blocks", NULL, &kb));
    int64_t nn = n, nb = 8;
    gx_array *dx = NULL, *dy = NULL, *ds = NULL, *dc = NULL, *dh = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &nn, x, &dx));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &nn, &dy));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &nb, &ds));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &nb, &dc));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &nb, &dh));
    gx_launch_cfg c1 = {.grid = {3}, .block = {96}};
    gx_karg a1[] = {GX_KARG_ARRAY(dx), GX_KARG_ARRAY(dy), GX_KARG_I32(n), GX_KARG_F32(3.0f)};
    GXT_OK(gx_kernel_launch(ks, &c1, 4, a1));
    gx_launch_cfg c2 = {.grid = {(unsigned)((n + 127) / 128)}, .block = {128}};
    gx_karg a2[] = {GX_KARG_ARRAY(dx), GX_KARG_ARRAY(ds), GX_KARG_ARRAY(dc), GX_KARG_ARRAY(dh), GX_KARG_I32(n)};
    GXT_OK(gx_kernel_launch(kb, &c2, 5, a2));
    GXT_OK(gx_sync(ctx));
    GXT_OK(gx_array_to_host(dy, o->y, sizeof(float) * (size_t)n));
    GXT_OK(gx_array_to_host(ds, o->sum, sizeof o->sum));
    GXT_OK(gx_array_to_host(dc, o->cnt, sizeof o->cnt));
    GXT_OK(gx_array_to_host(dh, o->hist, sizeof o->hist));
    gx_array_release(dx), gx_array_release(dy), gx_array_release(ds), gx_array_release(dc), gx_array_release(dh);
    gx_kernel_destroy(ks), gx_kernel_destroy(kb);
}

GXT_TEST(kernel_cross_backend_same_results)
{
    enum { N = 1000 };
    float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)gxt_rand01();
    gx_ctx *cpu = NULL;
    GXT_OK(gx_ctx_create(&cpu, GX_BACKEND_CPU));
    static cross_out oc, og;
    memset(&oc, 0, sizeof oc);
    cross_run(cpu, x, N, &oc);
    /* The CPU half against the host. */
    int hist[8] = {0};
    for (int i = 0; i < N; i++) {
        GXT_NEAR(oc.y[i], 3.0 * x[i] + 1.0, 1e-6 * 4); /* an FMA or not: one rounding */
        hist[((int)(x[i] * 8.0f)) & 7]++;
    }
    for (int b = 0; b < 8; b++) {
        int c = 0;
        double s = 0;
        for (int i = b * 128; i < (b + 1) * 128 && i < N; i++)
            c += x[i] > 0.5f, s += x[i];
        GXT_EQ_I64(oc.cnt[b], c);
        GXT_NEAR(oc.sum[b], s, 1e-4 * 128);
        GXT_EQ_I64(oc.hist[b], hist[b]);
    }
    /* The cuda variant of this test compares with the GPU; the cpu one has checked
     * the CPU against the host. */
    gx_ctx *gpu = gxt_ctx();
    gx_backend_kind kind;
    GXT_OK(gx_ctx_backend(gpu, &kind));
    if (kind != GX_BACKEND_CUDA) {
        gx_ctx_destroy(cpu);
        return;
    }
    memset(&og, 0, sizeof og);
    cross_run(gpu, x, N, &og);
    /* y: NVRTC contracts s * x + 1 into an FMA, the CPU build does not (one rounding
     * apart); the sums follow the kernel's own shuffle tree on both: bit for bit. */
    for (int i = 0; i < N; i++)
        GXT_NEAR(og.y[i], oc.y[i], 1e-6 * (1 + fabs(oc.y[i])));
    GXT_CHECK(memcmp(oc.sum, og.sum, sizeof oc.sum) == 0);
    GXT_CHECK(memcmp(oc.cnt, og.cnt, sizeof oc.cnt) == 0);
    GXT_CHECK(memcmp(oc.hist, og.hist, sizeof oc.hist) == 0);
    gx_ctx_destroy(cpu);
}
