/* bounds.c -- the per-context bounds flag (see bounds.h). */
#include "ops/bounds.h"

#include <stdlib.h>

#define OOB_BYTES (4 * sizeof(int64_t))

typedef struct oob_state {
    void *flag; /* OOB_BYTES of device memory */
} oob_state;

static void oob_release(gx_ctx *ctx, void *state)
{
    oob_state *o = state;
    gx__scratch_free(ctx, o->flag, OOB_BYTES);
    free(o);
}

static const gx__ctx_ext oob_ext = {"bounds flag", oob_release};

/* The initial words: no offender yet.  Static, so an asynchronous copy may read it. */
static const int64_t oob_clear[4] = {INT64_MAX, 0, 0, 0};

gx_status gx__oob_begin(gx_ctx *ctx, void **flag)
{
    *flag = NULL;
    oob_state *o = gx__ctx_ext_get(ctx, &oob_ext);
    if (!o) {
        o = calloc(1, sizeof *o);
        if (!o)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for the bounds flag");
        gx_status s = gx__scratch_alloc(ctx, OOB_BYTES, &o->flag);
        if (s == GX_OK)
            s = gx__ctx_ext_set(ctx, &oob_ext, o);
        if (s != GX_OK) {
            if (o->flag)
                gx__scratch_free(ctx, o->flag, OOB_BYTES);
            free(o);
            return s;
        }
    }
    /* The previous user of the flag finished in gx__oob_end (a waiting read), so a
     * plain copy cannot race a kernel still reading it. */
    GX__CHECK(ctx->be.iface->mem.h2d(&ctx->be, o->flag, oob_clear, OOB_BYTES));
    *flag = o->flag;
    return GX_OK;
}

gx_status gx__oob_end(gx_ctx *ctx, void *flag, int64_t out[4])
{
    out[0] = INT64_MAX;
    out[1] = out[2] = out[3] = 0;
    return ctx->be.iface->mem.d2h(&ctx->be, out, flag, OOB_BYTES);
}
