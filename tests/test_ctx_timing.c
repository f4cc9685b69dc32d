/* test_ctx_timing.c -- gx_ctx_timing_get: a context's creation time is counted, a
 * first kernel adds a module load (and not one more when run again from the
 * context's cache), the backend's stages are 0 where it has none; bad input. */
#include "gx_test.h"

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
