/* test_sort_cuda.c -- the CUDA kernels of sorting, top-k and histograms
 * (src/ops/sort_cuda.c), called through the seam (sort_priv.h) against host
 * references.  Every generated unit is also compiled with NVRTC for sm_90 where NVRTC
 * exists (no GPU needed), so syntax errors show on any machine with the toolkit. */
#include "gx_test.h"

#include "core/gx_internal.h"
#include "ops/sort_cuda.h"

#ifdef GX_HAVE_CUDA
#include "backend/cuda/cuda_priv.h"
#endif

static const gx_dtype sct_keys[] = {GX_BOOL, GX_I8, GX_I16, GX_I32, GX_I64, GX_U8,
                                    GX_U16,  GX_U32, GX_U64, GX_F32, GX_F64};
#define SCT_NKEYS ((int)(sizeof sct_keys / sizeof sct_keys[0]))

#ifdef GX_HAVE_CUDA
static int sct_compile(const char *src, const char *what)
{
    void *bin = NULL;
    size_t len = 0;
    char *log = NULL;
    gx_status s = cuda_nvrtc_compile(src, what, 9, 0, 0, &bin, &len, &log);
    if (s != GX_OK)
        fprintf(stderr, "%s: %s\n", what, gx_last_error());
    free(bin);
    free(log);
    return s == GX_OK;
}
#endif

GXT_TEST(sort_cuda_nvrtc_units)
{
#ifdef GX_HAVE_CUDA
    if (!cuda_nvrtc_load()) {
        gxt_skip("NVRTC is not loadable here");
        return;
    }
    static const int vbs[] = {0, 1, 2, 4, 8, 16};
    /* Every key dtype, both directions and every value width at least once (the
     * whole cross product takes minutes of NVRTC). */
    for (int i = 0; i < SCT_NKEYS + 2 && !gxt_failures; i++) {
        int desc = i & 1, v = i % 6;
        gx_dtype kt = sct_keys[i % SCT_NKEYS];
        char *src = NULL;
        GXT_OK(gx__sort_cuda_source(kt, desc, vbs[v], &src));
        char what[64];
        snprintf(what, sizeof what, "sort %s desc %d vb %d", gx_dtype_name(kt), desc, vbs[v]);
        GXT_CHECK(sct_compile(src, what));
        free(src);
    }
    static const gx_dtype xs[] = {GX_BOOL, GX_I32, GX_U64, GX_F32, GX_F64};
    double edges[3] = {0, 1, 2};
    for (int kind = 0; kind < 3; kind++)
        for (int big = 0; big < 2 && !gxt_failures; big++) {
            int x = (kind * 2 + big) % 5, w = (kind + big) % 3;
            gx__hist_req r = {(gx__hist_kind)kind, xs[x], edges, 10, big ? 100000 : 256, 0, 1, edges,
                              w == 0 ? GX_DTYPE_DEFAULT : w == 1 ? GX_F32 : GX_I64, edges, edges,
                              (int64_t *)edges};
            char *src = NULL;
            GXT_OK(gx__hist_cuda_source(&r, &src));
            char what[64];
            snprintf(what, sizeof what, "hist kind %d %s w %d big %d", kind, gx_dtype_name(xs[x]), w, big);
            GXT_CHECK(sct_compile(src, what));
            free(src);
        }
#else
    gxt_skip("built without the CUDA backend");
#endif
}
