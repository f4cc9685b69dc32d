/* first.c -- a first gx program: a million numbers through one fused kernel, a look
 * at the result, and its mean.  Every call returns a gx_status; GX_CHECK stops the
 * program with the status and gx_last_error()'s message if one fails.
 *
 * Build against an installed gx (see the README):
 *   cc first.c -o first $(pkg-config --cflags --libs gx) -Wl,-rpath,$(pkg-config --variable=libdir gx)
 * Run: ./first   (GX_BACKEND=cpu or cuda picks the backend; by default CUDA when a
 * GPU answers, else the CPU). */
#include <gx.h>
#include <stdio.h>

int main(void)
{
    gx_ctx *ctx = NULL;
    gx_array *x = NULL, *y = NULL;
    gx_scalar mean;

    GX_CHECK(gx_ctx_create(&ctx, GX_BACKEND_AUTO));
    GX_CHECK(gx_array_iota(ctx, GX_F32, 1 << 20, 0, 0.001, &x));                  /* 0, 0.001, 0.002, ... */
    GX_CHECK(gx_map(ctx, "x -> sin(x)*sin(x) + cos(x)*cos(x)", 1, &x, NULL, &y)); /* one fused kernel */
    GX_CHECK(gx_array_print(y, NULL));                                            /* dtype, shape, values */
    GX_CHECK(gx_mean(y, &mean));                                                  /* waits for the result */
    printf("mean of sin(x)^2 + cos(x)^2 = %.6f\n", gx_scalar_to_f64(mean));

    GX_CHECK(gx_array_release(x));
    GX_CHECK(gx_array_release(y));
    GX_CHECK(gx_ctx_destroy(ctx));
    return 0;
}
