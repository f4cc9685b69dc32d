/* test_ctx_timing.c -- gx_ctx_timing_get: a context's creation time is counted, a
 * first kernel adds a module load (and not one more when run again from the
 * context's cache), the backend's stages are 0 where it has none; bad input. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr, setenv */
#endif
#include "gx_test.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

GXT_TEST(ctx_timing_counts_creation_and_modules)
{
    gx_ctx *ctx = gxt_ctx();
    gx_ctx_timing t0, t1, t2;
    GXT_OK(gx_ctx_timing_get(ctx, &t0));
    GXT_CHECK(t0.create_ms > 0);
    GXT_CHECK(t0.driver_ms >= 0 && t0.device_ctx_ms >= 0 && t0.module_ms >= 0 && t0.compile_ms >= 0);
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(ctx, &k));
    if (k == GX_BACKEND_CPU)
        GXT_CHECK(t0.driver_ms == 0 && t0.device_ctx_ms == 0);
    int64_t n = 33;
    gx_array *x = NULL, *y = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &x));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &y));
    GXT_OK(gx_map_into(ctx, "x -> x * 5 - 2 + 0.25", 1, &x, NULL, y));
    GXT_OK(gx_ctx_timing_get(ctx, &t1));
    GXT_CHECK(t1.modules > t0.modules);
    GXT_CHECK(t1.module_ms >= t0.module_ms);
    GXT_CHECK(t1.create_ms == t0.create_ms);
    GXT_OK(gx_map_into(ctx, "x -> x * 5 - 2 + 0.25", 1, &x, NULL, y));
    GXT_OK(gx_ctx_timing_get(ctx, &t2));
    GXT_EQ_I64(t2.modules, t1.modules);
    float h[33];
    GXT_OK(gx_array_to_host(y, h, sizeof h));
    GXT_CHECK(h[32] == 32 * 5 - 2 + 0.25f);
    gx_array_release(x);
    gx_array_release(y);
}

GXT_TEST(ctx_timing_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    gx_ctx_timing t;
    GXT_STATUS(gx_ctx_timing_get(ctx, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("out is NULL");
    GXT_STATUS(gx_ctx_timing_get(NULL, &t), GX_ERR_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------ NVRTC stays unloaded
 * A first use whose kernels are in the disk cache needs no compiler: the CUDA
 * context takes NVRTC's version and architectures (its compiler id) from a record in
 * the disk cache instead of loading the library (9-10 ms of dlopen on an H100 host).
 * Two fresh processes over one fresh cache: the first compiles (NVRTC loaded), the
 * second gets the kernel from the disk with NVRTC never loaded, and the same id. */

static int nvrtc_seen_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "libnvrtc"))
        *(int *)data = 1;
    return 0;
}

typedef struct warm_seen {
    int ok, nvrtc_loaded;
    gx_cache_stats cs;
    char info[256];
} warm_seen;

static void warm_child(warm_seen *w)
{
    gx_ctx *ctx = NULL;
    gx_array *x = NULL, *y = NULL;
    if (gx_ctx_create(&ctx, GX_BACKEND_CUDA) != GX_OK)
        return;
    int64_t n = 1000;
    float h[1000];
    if (gx_array_iota(ctx, GX_F32, n, 0, 1, &x) == GX_OK && gx_map(ctx, "x -> x * 3 + 1", 1, &x, NULL, &y) == GX_OK &&
        gx_array_to_host(y, h, sizeof h) == GX_OK) {
        w->ok = 1;
        for (int i = 0; i < 1000; i++)
            w->ok &= h[i] == (float)i * 3 + 1;
    }
    gx_cache_stats_get(ctx, &w->cs);
    char text[4096];
    size_t need = 0;
    if (gx_info_text(ctx, text, sizeof text, &need) == GX_OK) {
        const char *p = strstr(text, "NVRTC");
        snprintf(w->info, sizeof w->info, "%.*s", p ? (int)strcspn(p, "\n") : 0, p ? p : "");
    }
    dl_iterate_phdr(nvrtc_seen_cb, &w->nvrtc_loaded);
    gx_array_release(x);
    gx_array_release(y);
    gx_ctx_destroy(ctx);
}

/* Run by the test in a NEW process (`gx_tests --child-warm-probe`: exec, not fork --
 * a forked child of a process that initialised CUDA cannot use it): one line out. */
int gxt_child_warm_probe(void);
int gxt_child_warm_probe(void)
{
    warm_seen w;
    memset(&w, 0, sizeof w);
    warm_child(&w);
    printf("ok=%d loaded=%d compiles=%llu disk_hits=%llu info=%s\n", w.ok, w.nvrtc_loaded,
           (unsigned long long)w.cs.compiles, (unsigned long long)w.cs.disk_hits, w.info);
    return 0;
}

static warm_seen warm_in_child(void)
{
    warm_seen w;
    memset(&w, 0, sizeof w);
    char self[4096], cmd[4200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1); /* this test binary, not popen's shell */
    if (n <= 0)
        return w;
    self[n] = 0;
    snprintf(cmd, sizeof cmd, "exec '%s' --child-warm-probe", self);
    FILE *p = popen(cmd, "r");
    if (!p)
        return w;
    char line[512] = "";
    unsigned long long c = 0, d = 0;
    if (fgets(line, sizeof line, p) &&
        sscanf(line, "ok=%d loaded=%d compiles=%llu disk_hits=%llu", &w.ok, &w.nvrtc_loaded, &c, &d) == 4) {
        w.cs.compiles = c;
        w.cs.disk_hits = d;
        const char *i = strstr(line, "info=");
        if (i)
            snprintf(w.info, sizeof w.info, "%.*s", (int)strcspn(i + 5, "\n"), i + 5);
    }
    pclose(p);
    return w;
}

GXT_TEST(ctx_warm_first_use_leaves_nvrtc_unloaded)
{
    const char *be = getenv("GX_BACKEND");
    if (!be || strcmp(be, "cuda") != 0) {
        gxt_skip("needs the CUDA backend (CUDA contexts in fresh processes)");
        return;
    }
    char dir[128];
    gxt_temp_dir(dir, sizeof dir);
    GXT_CHECK(dir[0]);
    setenv("GX_CACHE_DIR", dir, 1);
    unsetenv("GX_CACHE");
    warm_seen cold = warm_in_child();
    GXT_CHECK(cold.ok);
    GXT_CHECK(cold.cs.compiles >= 1); /* the iota and the map */
    GXT_EQ_I64(cold.nvrtc_loaded, 1);
    warm_seen warm = warm_in_child();
    GXT_CHECK(warm.ok);
    GXT_EQ_I64(warm.cs.compiles, 0);
    GXT_CHECK(warm.cs.disk_hits >= 1);
    GXT_EQ_I64(warm.nvrtc_loaded, 0);
    /* The same NVRTC named either way (gx info's NVRTC line). */
    GXT_CHECK(cold.info[0] && strcmp(cold.info, warm.info) == 0);
}
