/* define.c -- user functions (gx_define): plain C that lambdas may call.
 *
 * gx reads each definition's signature (lam_scan_functions), prefixes it with the
 * backend's function qualifier (GXF: `static inline` in C, `__device__` for CUDA) and
 * keeps the text behind a #line directive, so the compiler's messages name the
 * user's own file and lines. */
#include "core/gx_internal.h"
#include "jit/lambda.h"
#include "ops/userfns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEF_MAXFNS 256

static void def_release(gx_ctx *ctx, void *state)
{
    (void)ctx;
    gx__userfns *u = state;
    free(u->sigs);
    gx__sb_free(&u->code);
    free(u);
}

static const gx__ctx_ext def_ext = {"user functions (gx_define)", def_release};

gx__userfns *gx__userfns_of(gx_ctx *ctx) { return gx__ctx_ext_get(ctx, &def_ext); }

/* The context's table, made on first use. */
static gx_status def_table(gx_ctx *ctx, gx__userfns **out)
{
    gx__userfns *u = gx__userfns_of(ctx);
    if (!u) {
        if (!(u = calloc(1, sizeof *u)))
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
        gx_status s = gx__ctx_ext_set(ctx, &def_ext, u);
        if (s != GX_OK) {
            free(u);
            return s;
        }
    }
    *out = u;
    return GX_OK;
}

static gx_status def_check_names(const gx__userfns *u, const lam_fn_sig *sigs, int n, const char *name)
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < u->count; j++)
            if (strcmp(sigs[i].name, u->sigs[j].name) == 0)
                return gx__err(GX_ERR_TYPE, "gx_define(%s): function '%s' is already defined in this context", name,
                               sigs[i].name);
        for (int j = 0; j < i; j++)
            if (strcmp(sigs[i].name, sigs[j].name) == 0)
                return gx__err(GX_ERR_TYPE, "gx_define(%s): function '%s' is defined twice", name, sigs[i].name);
    }
    return GX_OK;
}

/* The user's text with GXF before each definition, behind a #line for the file. */
static void def_render(gx__sbuf *b, const char *name, const char *source, const size_t *offs, int n)
{
    gx__sb_printf(b, "\n#line 1 \"%s\"\n", name);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        char *piece = strndup(source + at, offs[i] - at);
        if (piece) {
            gx__sb_puts(b, piece);
            free(piece);
        }
        gx__sb_puts(b, "GXF ");
        at = offs[i];
    }
    gx__sb_puts(b, source + at);
    gx__sb_puts(b, "\n");
}

/* Compiles the prelude and the new functions once, so errors surface at definition. */
static gx_status def_try_build(gx_ctx *ctx, const char *code, const char *name)
{
    gx__sbuf src = {0};
    gx__sb_puts(&src, lam_prelude(gx__ctx_target(ctx)));
    gx__sb_puts(&src, code);
    /* One exported symbol so the CPU compiler has something to keep. */
    if (gx__target_is_cuda(ctx))
        gx__sb_puts(&src, "\nextern \"C\" __global__ void gx_define_check(void) {}\n");
    else
        gx__sb_puts(&src, "\nvoid gx_define_check(void);\nvoid gx_define_check(void) {}\n");
    if (src.oom) {
        gx__sb_free(&src);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    void *blob = NULL;
    size_t len = 0;
    gx_status s = ctx->be.iface->code.build(&ctx->be, src.p, name, &blob, &len);
    free(blob);
    gx__sb_free(&src);
    if (s != GX_OK)
        gx__err_prefix(s, "gx_define(%s): the functions do not compile", name);
    return s;
}

gx_status gx_define(gx_ctx *ctx, const char *name, const char *source)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(source, "gx_define: source is NULL");
    if (!name || !*name)
        name = "user.c";
    for (const char *p = name; *p; p++)
        if (*p == '"' || *p == '\\' || *p == '\n')
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "gx_define: the name '%s' may not contain quotes, backslashes or newlines", name);
    lam_fn_sig *sigs = calloc(DEF_MAXFNS, sizeof *sigs);
    size_t *offs = calloc(DEF_MAXFNS, sizeof *offs);
    int n = 0;
    gx_status s = sigs && offs ? GX_OK : gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    if (s == GX_OK)
        s = lam_scan_functions(source, sigs, offs, DEF_MAXFNS, &n);
    if (s == GX_OK && n == 0)
        s = gx__err(GX_ERR_SYNTAX,
                    "gx_define(%s): no function definitions found; write plain C functions, e.g. "
                    "\"float f(float x) { return x * x; }\"",
                    name);
    gx__lock(ctx);
    gx__userfns *u = NULL;
    if (s == GX_OK)
        s = def_table(ctx, &u);
    if (s == GX_OK)
        s = def_check_names(u, sigs, n, name);
    gx__sbuf code = {0};
    if (s == GX_OK) {
        def_render(&code, name, source, offs, n);
        gx__sbuf all = {0};
        if (u->code.p)
            gx__sb_puts(&all, u->code.p);
        gx__sb_puts(&all, code.p ? code.p : "");
        s = all.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : def_try_build(ctx, all.p, name);
        gx__sb_free(&all);
    }
    if (s == GX_OK) {
        lam_fn_sig *ns = realloc(u->sigs, sizeof *ns * (size_t)(u->count + n));
        if (!ns) {
            s = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
        } else {
            u->sigs = ns;
            memcpy(u->sigs + u->count, sigs, sizeof *sigs * (size_t)n);
            u->count += n;
            gx__sb_puts(&u->code, code.p);
        }
    }
    gx__unlock(ctx);
    gx__sb_free(&code);
    free(sigs);
    free(offs);
    return s;
}
