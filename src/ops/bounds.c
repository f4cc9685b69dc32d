/* bounds.c -- device-side bounds flags (see bounds.h).  One 32-byte flag per
 * context, kept initialised between calls: begin hands it out without a copy, end
 * reads it back and re-initialises it only when a kernel wrote it. */
#include "ops/bounds.h"

#include <stdlib.h>

#define OOB_BYTES (4 * sizeof(int64_t))

static void oob_release(gx_ctx *ctx, void *state) { gx__scratch_free(ctx, state, OOB_BYTES); }

static const gx__ctx_ext oob_ext = {"bounds flag", oob_release};

static gx_status oob_init(gx_ctx *ctx, void *flag)
{
    const int64_t none[4] = {INT64_MAX, 0, 0, 0};
    return ctx->be.iface->mem.h2d(&ctx->be, flag, none, OOB_BYTES);
}

gx_status gx__oob_begin(gx_ctx *ctx, void **flag)
{
    void *f = gx__ctx_ext_get(ctx, &oob_ext);
    if (!f) {
        GX__CHECK(gx__scratch_alloc(ctx, OOB_BYTES, &f));
        gx_status s = oob_init(ctx, f);
        if (s == GX_OK)
            s = gx__ctx_ext_set(ctx, &oob_ext, f);
        if (s != GX_OK) {
            gx__scratch_free(ctx, f, OOB_BYTES);
            return s;
        }
    }
    *flag = f;
    return GX_OK;
}

gx_status gx__oob_end(gx_ctx *ctx, void *flag, int64_t out[4])
{
    out[0] = INT64_MAX;
    out[1] = out[2] = out[3] = 0;
    GX__CHECK(ctx->be.iface->stream.sync(&ctx->be));
    GX__CHECK(ctx->be.iface->mem.d2h(&ctx->be, out, flag, OOB_BYTES));
    return out[0] == INT64_MAX ? GX_OK : oob_init(ctx, flag);
}
