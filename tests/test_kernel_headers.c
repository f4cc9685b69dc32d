#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* test_kernel_headers.c -- the rest of the kernel programming guide: the CUDA
 * toolkit's device headers in user kernels (cooperative groups with a grid sync,
 * cg::reduce, WMMA, fp16/bf16, cuda::std, CUB), assert and gx_at in checked mode,
 * kernels that launch kernels (plain, tail and fire-and-forget launches), several
 * sources linked, template kernels by name expression, LTO.  GPU tests skip on the
 * CPU backend; the NVRTC/nvJitLink-only ones run wherever those are installed. */
#include "gx_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef GX_HAVE_CUDA
#include "backend/cuda/cuda_priv.h"
#endif

/* NVRTC and the toolkit's headers: PTX of a source including `header`. */
static bool have_headers(void)
{
    if (!gxt_have_nvrtc())
        return false;
    char inc[4096] = "";
    if (gx_kernel_include_path(inc, sizeof inc, NULL) != GX_OK || !inc[0]) {
        gxt_skip("no CUDA toolkit headers found (set GX_CUDA_INCLUDE)");
        return false;
    }
    return true;
}

static void offline_ok(const char *src, const char *entry)
{
    char *t = NULL;
    GXT_OK(gx_kernel_ptx_offline(src, entry, "sm_90", NULL, &t));
    GXT_CHECK(t && strstr(t, ".entry") != NULL);
    gx_text_free(t);
}

/* ------------------------------------------------------------ kernel sources */

static const char *COOP = "#include <cooperative_groups.h>\n"
                          "namespace cg = cooperative_groups;\n"
                          "extern \"C\" __global__ void coop_sum(const float *x, float *part, float *out, int n)\n"
                          "{\n"
                          "    cg::grid_group g = cg::this_grid();\n"
                          "    __shared__ float s[256];\n"
                          "    float v = 0;\n"
                          "    for (long long i = g.thread_rank(); i < n; i += g.size()) v += x[i];\n"
                          "    s[threadIdx.x] = v;\n"
                          "    __syncthreads();\n"
                          "    for (int o = blockDim.x / 2; o > 0; o >>= 1) {\n"
                          "        if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];\n"
                          "        __syncthreads();\n"
                          "    }\n"
                          "    if (threadIdx.x == 0) part[blockIdx.x] = s[0];\n"
                          "    g.sync();\n"
                          "    if (g.thread_rank() == 0) {\n"
                          "        float t = 0;\n"
                          "        for (unsigned b = 0; b < gridDim.x; b++) t += part[b];\n"
                          "        *out = t;\n"
                          "    }\n"
                          "}\n";

static const char *CG_REDUCE = "#include <cooperative_groups.h>\n"
                               "#include <cooperative_groups/reduce.h>\n"
                               "#include <cooperative_groups/scan.h>\n"
                               "namespace cg = cooperative_groups;\n"
                               "extern \"C\" __global__ void tile_ops(const int *x, int *sum, int *scan)\n"
                               "{\n"
                               "    auto t = cg::tiled_partition<32>(cg::this_thread_block());\n"
                               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "    int r = cg::reduce(t, x[i], cg::plus<int>());\n"
                               "    scan[i] = cg::inclusive_scan(t, x[i]);\n"
                               "    if (t.thread_rank() == 0) sum[i / 32] = r;\n"
                               "}\n";

static const char *WMMA = "#include <mma.h>\n"
                          "#include <cuda_fp16.h>\n"
                          "using namespace nvcuda;\n"
                          "extern \"C\" __global__ void wmma16(const __half *a, const __half *b, float *c)\n"
                          "{\n"
                          "    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;\n"
                          "    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;\n"
                          "    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;\n"
                          "    wmma::fill_fragment(fc, 0.0f);\n"
                          "    wmma::load_matrix_sync(fa, a, 16);\n"
                          "    wmma::load_matrix_sync(fb, b, 16);\n"
                          "    wmma::mma_sync(fc, fa, fb, fc);\n"
                          "    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);\n"
                          "}\n";

static const char *HALFS = "#include <cuda_fp16.h>\n"
                           "#include <cuda_bf16.h>\n"
                           "extern \"C\" __global__ void halfs(const float *x, float *h, float *b, int n)\n"
                           "{\n"
                           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "    if (i < n) {\n"
                           "        h[i] = __half2float(__hadd(__float2half(x[i]), __float2half(1.0f)));\n"
                           "        b[i] = __bfloat162float(__float2bfloat16(x[i]));\n"
                           "    }\n"
                           "}\n";

static const char *CUSTD = "#include <cuda/std/limits>\n"
                           "#include <cuda/std/array>\n"
                           "extern \"C\" __global__ void custd(int *out)\n"
                           "{\n"
                           "    cuda::std::array<int, 4> a = {1, 2, 3, 4};\n"
                           "    int s = 0;\n"
                           "    for (int v : a) s += v;\n"
                           "    out[0] = s;\n"
                           "    out[1] = cuda::std::numeric_limits<int>::max();\n"
                           "    out[2] = cuda::std::numeric_limits<signed char>::min();\n"
                           "}\n";

static const char *CUB = "#include <cub/block/block_reduce.cuh>\n"
                         "#include <cub/block/block_scan.cuh>\n"
                         "extern \"C\" __global__ void cubk(const int *x, int *sum, int *scan)\n"
                         "{\n"
                         "    typedef cub::BlockReduce<int, 128> BR;\n"
                         "    typedef cub::BlockScan<int, 128> BS;\n"
                         "    __shared__ typename BR::TempStorage tr;\n"
                         "    __shared__ typename BS::TempStorage ts;\n"
                         "    int v = x[threadIdx.x];\n"
                         "    int s = BR(tr).Sum(v);\n"
                         "    if (threadIdx.x == 0) *sum = s;\n"
                         "    int e;\n"
                         "    BS(ts).ExclusiveSum(v, e);\n"
                         "    scan[threadIdx.x] = e;\n"
                         "}\n";

static const char *ASSERTK = "#include <assert.h>\n"
                             "#include <gx/device.h>\n"
                             "extern \"C\" __global__ void checked_k(float *x, int n, int m, int limit)\n"
                             "{\n"
                             "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "    assert(i < limit);\n"
                             "    if (i < m) gx_at(x, i, n) = 2.0f * i;\n"
                             "}\n";

static const char *DP = "extern \"C\" __global__ void child(int *x, int base)\n"
                        "{\n"
                        "    x[base + threadIdx.x] = base + threadIdx.x + 1;\n"
                        "}\n"
                        "extern \"C\" __global__ void parent(int *x)\n"
                        "{\n"
                        "    if (threadIdx.x == 0) {\n"
                        "        child<<<1, 32>>>(x, 0);\n"
                        "        child<<<1, 32, 0, cudaStreamFireAndForget>>>(x, 32);\n"
                        "        child<<<1, 32, 0, cudaStreamTailLaunch>>>(x, 64);\n"
                        "    }\n"
                        "}\n";

static const char *LIB = "extern \"C\" __device__ float lib_twice(float v) { return 2.0f * v + 1.0f; }\n";
static const char *USE = "extern \"C\" __device__ float lib_twice(float v);\n"
                         "extern \"C\" __global__ void use_lib(float *x, int n)\n"
                         "{\n"
                         "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                         "    if (i < n) x[i] = lib_twice(x[i]);\n"
                         "}\n";

static const char *TMPL = "template <typename T> __global__ void scale(T *x, T a, int n)\n"
                          "{\n"
                          "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "    if (i < n) x[i] *= a;\n"
                          "}\n";

/* ------------------------------------------------------------ NVRTC only (no GPU) */

GXT_TEST(kheaders_each_header_compiles)
{
    if (!have_headers())
        return;
    offline_ok(COOP, "coop_sum");
    offline_ok(CG_REDUCE, "tile_ops");
    offline_ok(WMMA, "wmma16");
    offline_ok(HALFS, "halfs");
    offline_ok(CUSTD, "custd");
    offline_ok(CUB, "cubk");
    offline_ok(ASSERTK, "checked_k");
    offline_ok(DP, "parent");
}

GXT_TEST(kheaders_assert_needs_no_toolkit)
{
    if (!gxt_have_nvrtc())
        return;
    /* assert.h and gx/device.h are gx's own: they compile with no include folder. */
    setenv("GX_CUDA_INCLUDE", "/nonexistent-gx-include", 1);
    offline_ok(ASSERTK, "checked_k");
    gx_kernel_opts o = {0};
    o.checked = 1;
    char *t = NULL;
    GXT_OK(gx_kernel_ptx_offline(ASSERTK, "checked_k", "sm_90", &o, &t));
    GXT_CHECK(t && strstr(t, "gx__check_rec") != NULL);
    gx_text_free(t);
    unsetenv("GX_CUDA_INCLUDE");
}

GXT_TEST(kheaders_missing_header_names_search_path)
{
    if (!gxt_have_nvrtc())
        return;
    setenv("GX_CUDA_INCLUDE", "/nonexistent-gx-include:/also-not-here", 1);
    char *t = NULL;
    GXT_STATUS(gx_kernel_ptx_offline(COOP, "coop_sum", "sm_90", NULL, &t), GX_ERR_COMPILE);
    GXT_MSG_HAS("cooperative_groups.h");
    GXT_MSG_HAS("/nonexistent-gx-include, /also-not-here");
    GXT_MSG_HAS("GX_CUDA_INCLUDE");
    GXT_CHECK(t == NULL);
    unsetenv("GX_CUDA_INCLUDE");
    if (!have_headers())
        return;
    GXT_STATUS(gx_kernel_ptx_offline("#include <no_such_gx_header.h>\nextern \"C\" __global__ void k() {}\n", "k",
                                     "sm_90", NULL, &t),
               GX_ERR_COMPILE);
    GXT_MSG_HAS("no_such_gx_header.h");
    GXT_MSG_HAS("CUDA include directories searched: /");
}

/* GX_CUDA_INCLUDE names a folder of our own: its header is found, and the folder
 * list is in the wrapped text (the cache key). */
GXT_TEST(kheaders_include_env_and_cache_key)
{
    char dir[] = "/tmp/gx-inc-XXXXXX";
    GXT_CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/gx_fake.h", dir);
    FILE *f = fopen(path, "w");
    GXT_CHECK(f != NULL);
    if (!f)
        return;
    fputs("#define GX_FAKE_VALUE 41\n", f);
    fclose(f);
    setenv("GX_CUDA_INCLUDE", dir, 1);
    char inc[512];
    size_t need = 0;
    GXT_OK(gx_kernel_include_path(inc, sizeof inc, &need));
    GXT_CHECK(strcmp(inc, dir) == 0 && need == strlen(dir) + 1);
    const char *src = "#include <gx_fake.h>\nextern \"C\" __global__ void k(int *p) { *p = GX_FAKE_VALUE + 1; }\n";
    char *w1 = NULL, *w2 = NULL;
    GXT_OK(gx__kernel_wrap(1, &src, NULL, "k", NULL, &w1));
    GXT_CHECK(w1 && strstr(w1, "//gx:include ") && strstr(w1, dir));
    setenv("GX_CUDA_INCLUDE", "/somewhere-else", 1);
    GXT_OK(gx__kernel_wrap(1, &src, NULL, "k", NULL, &w2));
    GXT_CHECK(w1 && w2 && strcmp(w1, w2) != 0); /* a different key */
    free(w1);
    free(w2);
    setenv("GX_CUDA_INCLUDE", dir, 1);
    char *t = NULL;
    gx_status s = gx_kernel_ptx_offline(src, "k", "sm_90", NULL, &t);
    if (s != GX_ERR_UNSUPPORTED) { /* NVRTC present: the fake header is found */
        GXT_OK(s);
        GXT_CHECK(t && strstr(t, "42") != NULL);
    }
    gx_text_free(t);
    unsetenv("GX_CUDA_INCLUDE");
    unlink(path);
    rmdir(dir);
}

GXT_TEST(kheaders_wrap_options)
{
    const char *src = DP;
    char *w = NULL;
    gx_kernel_opts o = {0};
    unsetenv("GX_KERNEL_CHECKS"); /* the default below is "unchecked"; the env would turn it on */
    GXT_OK(gx__kernel_wrap(1, &src, NULL, "p", &o, &w));
    GXT_CHECK(w && strstr(w, "\n//gx:rdc\n")); /* "<<<" makes it relocatable */
    GXT_CHECK(w && !strstr(w, "GX_KERNEL_CHECKS"));
    free(w);
    const char *plain = "extern \"C\" __global__ void k() {}\n";
    const char *names[] = {"scale<float>", "scale<double>"};
    o.checked = 1;
    o.lto = 1;
    o.name_expressions = names;
    o.nname_expressions = 2;
    GXT_OK(gx__kernel_wrap(1, &plain, NULL, "k", &o, &w));
    GXT_CHECK(w && strstr(w, "//gx:opt -DGX_KERNEL_CHECKS\n") && strstr(w, "//gx:lto\n") &&
              strstr(w, "//gx:name scale<double>\n") && strstr(w, "gx__check_rec") && !strstr(w, "//gx:rdc"));
    free(w);
    /* GX_KERNEL_CHECKS=1 turns checked mode on for every kernel. */
    setenv("GX_KERNEL_CHECKS", "1", 1);
    GXT_OK(gx__kernel_wrap(1, &plain, NULL, "k", NULL, &w));
    GXT_CHECK(w && strstr(w, "-DGX_KERNEL_CHECKS"));
    free(w);
    unsetenv("GX_KERNEL_CHECKS");
    /* Bad options: each a status and a message. */
    o = (gx_kernel_opts){0};
    o.nname_expressions = -1;
    GXT_STATUS(gx__kernel_wrap(1, &plain, NULL, "k", &o, &w), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("nname_expressions = -1");
    const char *bad[] = {"scale<float>\n"};
    o.name_expressions = bad;
    o.nname_expressions = 1;
    GXT_STATUS(gx__kernel_wrap(1, &plain, NULL, "k", &o, &w), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("name expression 0");
    o = (gx_kernel_opts){0};
    o.reserved[2] = 1;
    GXT_STATUS(gx_kernel_ptx_offline(plain, "k", NULL, &o, &w), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_kernel_compile_sources(gxt_ctx(), 0, NULL, NULL, "k", NULL, (gx_kernel **)&w),
               GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("nsources = 0");
    GXT_CHECK(w == NULL);
}

#ifdef GX_HAVE_CUDA
/* The backend's build for sm_90 without a GPU: compile + nvJitLink. */
static gx_status build_sm90(int nsrc, const char *const *src, const char *const *names, const gx_kernel_opts *o,
                            void **blob, size_t *len)
{
    char *w = NULL;
    gx_status s = gx__kernel_wrap(nsrc, src, names, "t.cu", o, &w);
    if (s == GX_OK)
        s = cuda_nvrtc_compile_user(w, "t.cu", 9, 0, 0, blob, len, NULL);
    free(w);
    return s;
}

static bool link_skip(gx_status s)
{
    if (s == GX_ERR_UNSUPPORTED) {
        gxt_skip(gx_last_error());
        return true;
    }
    return false;
}

GXT_TEST(kheaders_offline_link_dynamic_parallelism)
{
    if (!gxt_have_nvrtc())
        return;
    void *b = NULL;
    size_t n = 0;
    gx_status s = build_sm90(1, &DP, NULL, NULL, &b, &n);
    if (link_skip(s))
        return;
    GXT_OK(s);
    GXT_CHECK(b && n > 4 && memcmp(b, "\177ELF", 4) == 0);
    free(b);
}

GXT_TEST(kheaders_offline_link_sources_names_lto)
{
    if (!gxt_have_nvrtc())
        return;
    const char *two[] = {USE, LIB};
    const char *nm[] = {"use.cu", "lib.cu"};
    void *b = NULL;
    size_t n = 0;
    gx_status s = build_sm90(2, two, nm, NULL, &b, &n);
    if (link_skip(s))
        return;
    GXT_OK(s);
    GXT_CHECK(b && n > 4 && memcmp(b, "\177ELF", 4) == 0);
    free(b);
    b = NULL;
    /* Without the library the link fails and says which symbol. */
    GXT_STATUS(build_sm90(1, two, nm, NULL, &b, &n), GX_ERR_COMPILE);
    GXT_MSG_HAS("lib_twice");
    /* LTO of the same pair. */
    gx_kernel_opts o = {0};
    o.lto = 1;
    s = build_sm90(2, two, nm, &o, &b, &n);
    if (s != GX_ERR_UNSUPPORTED) {
        GXT_OK(s);
        GXT_CHECK(b && memcmp(b, "\177ELF", 4) == 0);
    }
    free(b);
    b = NULL;
    /* Name expressions: the lowered names travel in front of the code. */
    const char *exprs[] = {"scale<float>", "scale<double>"};
    o = (gx_kernel_opts){0};
    o.name_expressions = exprs;
    o.nname_expressions = 2;
    GXT_OK(build_sm90(1, &TMPL, NULL, &o, &b, &n));
    GXT_CHECK(b && strncmp(b, "//gx:lowered\nscale<float>\t_Z5scaleIfEvPT_S0_i\n", 45) == 0);
    free(b);
}
#endif

/* ------------------------------------------------------------ on the GPU */

static gx_array *up_f32(gx_ctx *ctx, const float *h, int64_t n)
{
    gx_array *a = NULL;
    GXT_CHECK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &a) == GX_OK);
    return a;
}

static gx_array *up_i32(gx_ctx *ctx, const int *h, int64_t n)
{
    gx_array *a = NULL;
    GXT_CHECK(gx_array_from_host(ctx, GX_I32, 1, &n, h, &a) == GX_OK);
    return a;
}

GXT_TEST(kheaders_gpu_coop_grid_sync)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, COOP, "coop_sum", NULL, &k));
    const int64_t sizes[] = {1, 31, 33, 1000, 100003};
    for (int t = 0; t < 5; t++) {
        int64_t n = sizes[t];
        float *h = malloc((size_t)n * 4);
        double want = 0;
        for (int64_t i = 0; i < n; i++)
            want += h[i] = (float)((i * 7) % 13) - 6;
        int per_sm = 0;
        GXT_OK(gx_kernel_active_blocks(k, 256, 0, &per_sm));
        gx_device_info di;
        GXT_OK(gx_device_info_get(ctx, &di));
        unsigned grid = (unsigned)(per_sm * di.multiprocessors);
        int64_t pg = grid;
        gx_array *x = up_f32(ctx, h, n), *part = NULL, *out = NULL;
        int64_t one = 1;
        GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &pg, &part));
        GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &one, &out));
        gx_launch_cfg cfg = {.grid = {grid}, .block = {256}, .cooperative = 1};
        gx_karg a[] = {GX_KARG_ARRAY(x), GX_KARG_ARRAY(part), GX_KARG_ARRAY(out), GX_KARG_I32((int)n)};
        GXT_OK(gx_kernel_launch(k, &cfg, 4, a));
        float got = 0;
        GXT_OK(gx_array_to_host(out, &got, 4));
        GXT_CHECK(fabs(got - want) <= 1e-3 * (1 + fabs(want)));
        gx_array_release(x);
        gx_array_release(part);
        gx_array_release(out);
        free(h);
    }
    gx_kernel_destroy(k);
}

GXT_TEST(kheaders_gpu_cg_reduce_scan)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, CG_REDUCE, "tile_ops", NULL, &k));
    int h[128], sum[4], scan[128];
    for (int i = 0; i < 128; i++)
        h[i] = (i * 5) % 11 - 3;
    gx_array *x = up_i32(ctx, h, 128), *ds = NULL, *dc = NULL;
    int64_t n4 = 4, n128 = 128;
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n4, &ds));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n128, &dc));
    gx_launch_cfg cfg = {.grid = {1}, .block = {128}};
    gx_karg a[] = {GX_KARG_ARRAY(x), GX_KARG_ARRAY(ds), GX_KARG_ARRAY(dc)};
    GXT_OK(gx_kernel_launch(k, &cfg, 3, a));
    GXT_OK(gx_array_to_host(ds, sum, sizeof sum));
    GXT_OK(gx_array_to_host(dc, scan, sizeof scan));
    for (int w = 0; w < 4; w++) {
        int s = 0;
        for (int l = 0; l < 32; l++) {
            s += h[w * 32 + l];
            GXT_CHECK(scan[w * 32 + l] == s);
        }
        GXT_CHECK(sum[w] == s);
    }
    gx_array_release(x);
    gx_array_release(ds);
    gx_array_release(dc);
    gx_kernel_destroy(k);
}

/* IEEE binary16 of a small integer-valued float (exact): sign, exponent, mantissa. */
static uint16_t f2h_small(float v)
{
    if (v == 0)
        return 0;
    uint32_t u;
    memcpy(&u, &v, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    int e = (int)((u >> 23) & 0xff) - 127 + 15;
    return (uint16_t)(sign | ((uint32_t)e << 10) | ((u >> 13) & 0x3ffu));
}

GXT_TEST(kheaders_gpu_wmma_fp16)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, WMMA, "wmma16", NULL, &k));
    float A[256], B[256], C[256];
    uint16_t ha[256], hb[256];
    for (int i = 0; i < 256; i++) {
        A[i] = (float)((i * 3) % 7 - 3);
        B[i] = (float)((i * 5) % 9 - 4);
        ha[i] = f2h_small(A[i]);
        hb[i] = f2h_small(B[i]);
    }
    int64_t n = 256;
    gx_array *da = NULL, *db = NULL, *dc = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_U16, 1, &n, ha, &da));
    GXT_OK(gx_array_from_host(ctx, GX_U16, 1, &n, hb, &db));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &dc));
    gx_launch_cfg cfg = {.grid = {1}, .block = {32}};
    gx_karg a[] = {GX_KARG_ARRAY(da), GX_KARG_ARRAY(db), GX_KARG_ARRAY(dc)};
    GXT_OK(gx_kernel_launch(k, &cfg, 3, a));
    GXT_OK(gx_array_to_host(dc, C, sizeof C));
    int bad = 0;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float s = 0;
            for (int t = 0; t < 16; t++)
                s += A[i * 16 + t] * B[t * 16 + j];
            bad += C[i * 16 + j] != s;
        }
    GXT_EQ_I64(bad, 0);
    gx_array_release(da);
    gx_array_release(db);
    gx_array_release(dc);
    gx_kernel_destroy(k);
}

GXT_TEST(kheaders_gpu_fp16_bf16)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, HALFS, "halfs", NULL, &k));
    const int64_t n = 33;
    float x[33], h[33], b[33];
    for (int i = 0; i < n; i++)
        x[i] = (float)(i - 16) * 0.5f; /* exact in fp16 and bf16 */
    gx_array *dx = up_f32(ctx, x, n), *dh = NULL, *db = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &dh));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &db));
    gx_launch_cfg cfg = {.grid = {2}, .block = {32}};
    gx_karg a[] = {GX_KARG_ARRAY(dx), GX_KARG_ARRAY(dh), GX_KARG_ARRAY(db), GX_KARG_I32((int)n)};
    GXT_OK(gx_kernel_launch(k, &cfg, 4, a));
    GXT_OK(gx_array_to_host(dh, h, sizeof h));
    GXT_OK(gx_array_to_host(db, b, sizeof b));
    for (int i = 0; i < n; i++)
        GXT_CHECK(h[i] == x[i] + 1.0f && b[i] == x[i]);
    gx_array_release(dx);
    gx_array_release(dh);
    gx_array_release(db);
    gx_kernel_destroy(k);
}

GXT_TEST(kheaders_gpu_cuda_std_and_cub)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, CUSTD, "custd", NULL, &k));
    int64_t three = 3;
    gx_array *o = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &three, &o));
    gx_launch_cfg one = {.grid = {1}, .block = {1}};
    gx_karg a1[] = {GX_KARG_ARRAY(o)};
    GXT_OK(gx_kernel_launch(k, &one, 1, a1));
    int r[3];
    GXT_OK(gx_array_to_host(o, r, sizeof r));
    GXT_CHECK(r[0] == 10 && r[1] == 2147483647 && r[2] == -128);
    gx_array_release(o);
    gx_kernel_destroy(k);

    GXT_OK(gx_kernel_compile(ctx, CUB, "cubk", NULL, &k));
    int h[128], scan[128], sum = 0;
    for (int i = 0; i < 128; i++)
        h[i] = (i * 13) % 17 - 8;
    int64_t n1 = 1, n128 = 128;
    gx_array *x = up_i32(ctx, h, 128), *ds = NULL, *dc = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n1, &ds));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n128, &dc));
    gx_launch_cfg cfg = {.grid = {1}, .block = {128}};
    gx_karg a[] = {GX_KARG_ARRAY(x), GX_KARG_ARRAY(ds), GX_KARG_ARRAY(dc)};
    GXT_OK(gx_kernel_launch(k, &cfg, 3, a));
    GXT_OK(gx_array_to_host(ds, &sum, 4));
    GXT_OK(gx_array_to_host(dc, scan, sizeof scan));
    int s = 0;
    for (int i = 0; i < 128; i++) {
        GXT_CHECK(scan[i] == s);
        s += h[i];
    }
    GXT_CHECK(sum == s);
    gx_array_release(x);
    gx_array_release(ds);
    gx_array_release(dc);
    gx_kernel_destroy(k);
}

GXT_TEST(kheaders_gpu_checked_assert_and_bounds)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_kernel_opts o = {0};
    o.checked = 1;
    gx_kernel *k = NULL;
    GXT_OK(gx_kernel_compile(ctx, ASSERTK, "checked_k", &o, &k));
    const int64_t n = 100;
    gx_array *x = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &x));
    /* Passing: 100 threads, all asserts hold, all indices in range. */
    gx_launch_cfg cfg = {.grid = {1}, .block = {100}};
    gx_karg pass[] = {GX_KARG_ARRAY(x), GX_KARG_I32(100), GX_KARG_I32(100), GX_KARG_I32(1000)};
    GXT_OK(gx_kernel_launch(k, &cfg, 4, pass));
    GXT_OK(gx_sync(ctx));
    float h[100];
    GXT_OK(gx_array_to_host(x, h, sizeof h));
    for (int i = 0; i < 100; i++)
        GXT_CHECK(h[i] == 2.0f * i);
    /* An assert fails in block 1 (threads 64.. of 128-thread blocks: i >= 200). */
    gx_launch_cfg c2 = {.grid = {2}, .block = {128}};
    gx_karg fail_a[] = {GX_KARG_ARRAY(x), GX_KARG_I32(100), GX_KARG_I32(100), GX_KARG_I32(200)};
    GXT_OK(gx_kernel_launch(k, &c2, 4, fail_a));
    GXT_STATUS(gx_sync(ctx), GX_ERR_KERNEL_FAULT);
    GXT_MSG_HAS("checked_k");
    GXT_MSG_HAS("assertion failed: i < limit");
    GXT_MSG_HAS("block (1,0,0)");
    /* Reported once; the context still works: the next launch and sync are fine. */
    GXT_OK(gx_sync(ctx));
    GXT_OK(gx_kernel_launch(k, &cfg, 4, pass));
    GXT_OK(gx_sync(ctx));
    /* gx_at out of bounds: thread 100 writes x[100] of 100 (m = n + 1 threads write). */
    gx_launch_cfg c3 = {.grid = {1}, .block = {101}};
    gx_karg over[] = {GX_KARG_ARRAY(x), GX_KARG_I32(100), GX_KARG_I32(101), GX_KARG_I32(1000)};
    GXT_OK(gx_kernel_launch(k, &c3, 4, over));
    GXT_STATUS(gx_sync(ctx), GX_ERR_KERNEL_FAULT);
    GXT_MSG_HAS("index out of bounds");
    GXT_MSG_HAS("index 100, valid 0..99");
    GXT_MSG_HAS("thread (100,0,0)");
    GXT_OK(gx_array_to_host(x, h, sizeof h));
    GXT_CHECK(h[99] == 198.0f);
    gx_array_release(x);
    gx_kernel_destroy(k);
}

GXT_TEST(kheaders_gpu_child_launches)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    gx_kernel *k = NULL;
    gx_status s = gx_kernel_compile(ctx, DP, "parent", NULL, &k);
    if (link_skip(s))
        return;
    GXT_OK(s);
    int64_t n = 96;
    gx_array *x = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &x));
    gx_launch_cfg cfg = {.grid = {1}, .block = {32}};
    gx_karg a[] = {GX_KARG_ARRAY(x)};
    GXT_OK(gx_kernel_launch(k, &cfg, 1, a));
    int h[96];
    GXT_OK(gx_array_to_host(x, h, sizeof h));
    for (int i = 0; i < 96; i++)
        GXT_CHECK(h[i] == i + 1);
    gx_array_release(x);
    gx_kernel_destroy(k);
}

GXT_TEST(kheaders_gpu_sources_and_templates)
{
    gx_ctx *ctx = gxt_cuda_ctx();
    if (!ctx)
        return;
    const char *two[] = {USE, LIB};
    gx_kernel *k = NULL;
    gx_status s = gx_kernel_compile_sources(ctx, 2, two, NULL, "use_lib", NULL, &k);
    if (link_skip(s))
        return;
    GXT_OK(s);
    float h[33];
    for (int i = 0; i < 33; i++)
        h[i] = (float)i - 10;
    gx_array *x = up_f32(ctx, h, 33);
    gx_launch_cfg cfg = {.grid = {2}, .block = {32}};
    gx_karg a[] = {GX_KARG_ARRAY(x), GX_KARG_I32(33)};
    GXT_OK(gx_kernel_launch(k, &cfg, 2, a));
    float r[33];
    GXT_OK(gx_array_to_host(x, r, sizeof r));
    for (int i = 0; i < 33; i++)
        GXT_CHECK(r[i] == 2.0f * h[i] + 1.0f);
    gx_kernel_destroy(k);
    gx_array_release(x);

    const char *exprs[] = {"scale<float>", "scale<double>"};
    gx_kernel_opts o = {.name_expressions = exprs, .nname_expressions = 2};
    gx_kernel *kf = NULL, *kd = NULL;
    GXT_OK(gx_kernel_compile(ctx, TMPL, "scale<float>", &o, &kf));
    GXT_OK(gx_kernel_compile(ctx, TMPL, "scale<double>", &o, &kd));
    double hd[31];
    for (int i = 0; i < 31; i++)
        hd[i] = i * 0.25;
    int64_t n31 = 31;
    gx_array *xd = NULL, *xf = up_f32(ctx, h, 33);
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &n31, hd, &xd));
    gx_karg af[] = {GX_KARG_ARRAY(xf), GX_KARG_F32(3.0f), GX_KARG_I32(33)};
    gx_karg ad[] = {GX_KARG_ARRAY(xd), GX_KARG_F64(-2.0), GX_KARG_I32(31)};
    GXT_OK(gx_kernel_launch(kf, &cfg, 3, af));
    GXT_OK(gx_kernel_launch(kd, &cfg, 3, ad));
    double rd[31];
    GXT_OK(gx_array_to_host(xf, r, sizeof r));
    GXT_OK(gx_array_to_host(xd, rd, sizeof rd));
    for (int i = 0; i < 33; i++)
        GXT_CHECK(r[i] == 3.0f * h[i]);
    for (int i = 0; i < 31; i++)
        GXT_CHECK(rd[i] == -2.0 * hd[i]);
    /* An instantiation not listed is not an entry. */
    gx_kernel *kx = NULL;
    GXT_STATUS(gx_kernel_compile(ctx, TMPL, "scale<int>", &o, &kx), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("name_expressions");
    gx_array_release(xf);
    gx_array_release(xd);
    gx_kernel_destroy(kf);
    gx_kernel_destroy(kd);
}
