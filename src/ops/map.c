/* map.c -- gx_map: a lambda over broadcast inputs, one fused kernel. */
#include "core/gx_internal.h"
#include "jit/lambda.h"
#include "ops/ewise.h"
#include "ops/userfns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct map_job {
    lam_lambda *lam;
    gx_dtype out_dtype;
    int nconst;
    gx_dtype cdt[EW_MAXCONST];
    ew_cval cval[EW_MAXCONST];
    gx__sbuf expr;
} map_job;

static gx_status map_check_inputs(gx_ctx *ctx, int nin, gx_array *const *in)
{
    if (nin < 0 || nin > EW_MAXIN)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_map: %d inputs; between 0 and %d are allowed", nin, EW_MAXIN);
    GX__ARG(in || nin == 0, "gx_map: in is NULL but nin is %d", nin);
    for (int i = 0; i < nin; i++) {
        char what[32];
        gx__fmt(what, sizeof what, "gx_map (input %d)", i + 1);
        GX__CHECK(gx__array_check(in[i], what));
        if (in[i]->ctx != ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_map: input %d belongs to another context", i + 1);
        if (!gx__dtype_supported(in[i]->dtype))
            return gx__err(GX_ERR_DTYPE, "gx_map: input %d has dtype %s, which map does not support yet", i + 1, gx_dtype_name(in[i]->dtype));
    }
    return GX_OK;
}

/* Parses, type-checks and emits the lambda for these inputs. */
static gx_status map_prepare(gx_ctx *ctx, const char *lambda, int nin, gx_array *const *in, const gx_map_opts *opts, map_job *job)
{
    GX__ARG(lambda, "gx_map: lambda is NULL (pass text such as \"x -> x * 2\")");
    int nc = opts ? opts->nconsts : 0;
    if (nc < 0 || nc > EW_MAXCONST || (nc > 0 && !opts->consts))
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_map: %d constants; between 0 and %d are allowed (and consts must not be NULL)", nc, EW_MAXCONST);
    gx_dtype at[EW_MAXIN];
    for (int i = 0; i < nin; i++)
        at[i] = in[i]->dtype;
    for (int j = 0; j < nc; j++) {
        if (!opts->consts[j].name || !gx__dtype_supported(opts->consts[j].dtype))
            return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_map: constant %d has no name or an unsupported dtype", j);
        job->cdt[j] = opts->consts[j].dtype;
        ew_cval_of(&opts->consts[j], &job->cval[j]);
    }
    job->nconst = nc;
    gx__userfns *u = gx__userfns_of(ctx);
    /* A lambda seen before with these dtypes: reuse its emitted expression. */
    gx__sbuf key = {0};
    gx__sb_printf(&key, "map1|%d|%d|", u ? u->count : 0, opts ? (int)opts->out_dtype : -1);
    for (int i = 0; i < nin; i++)
        gx__sb_printf(&key, "%d,", (int)at[i]);
    for (int j = 0; j < nc; j++)
        gx__sb_printf(&key, "%s:%d,", opts->consts[j].name, (int)opts->consts[j].dtype);
    gx__sb_printf(&key, "|%s", lambda);
    size_t vlen = 0;
    const char *hit = key.oom ? NULL : gx__memo_find(ctx, key.p, &vlen);
    if (hit && vlen > sizeof(gx_dtype)) {
        memcpy(&job->out_dtype, hit, sizeof(gx_dtype));
        gx__sb_puts(&job->expr, hit + sizeof(gx_dtype));
        gx__sb_free(&key);
        return job->expr.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
    }
    lam_env env = {lambda, nin, at, nc ? opts->consts : NULL, nc, u ? u->sigs : NULL, u ? u->count : 0};
    gx_status cs = lam_compile(&env, &job->lam);
    if (cs != GX_OK) {
        gx__sb_free(&key);
        return cs;
    }
    job->out_dtype = opts && opts->out_dtype != GX_DTYPE_COUNT ? opts->out_dtype : lam_result_type(job->lam);
    if (!gx__dtype_supported(job->out_dtype)) {
        gx__sb_free(&key);
        return gx__err(GX_ERR_DTYPE, "gx_map: output dtype %s is not supported", gx_dtype_name(job->out_dtype));
    }
    char pn[EW_MAXIN][16], cn[EW_MAXCONST][16];
    const char *pnames[EW_MAXIN], *cnames[EW_MAXCONST];
    for (int i = 0; i < nin; i++) {
        gx__fmt(pn[i], sizeof pn[i], "v%d", i);
        pnames[i] = pn[i];
    }
    for (int j = 0; j < nc; j++) {
        gx__fmt(cn[j], sizeof cn[j], "c%d", j);
        cnames[j] = cn[j];
    }
    gx_status s = lam_emit(job->lam, pnames, cnames, &job->expr);
    if (s == GX_OK && !key.oom && !job->expr.oom) {
        size_t el = strlen(job->expr.p);
        unsigned char *v = malloc(sizeof(gx_dtype) + el + 1);
        if (v) {
            memcpy(v, &job->out_dtype, sizeof(gx_dtype));
            memcpy(v + sizeof(gx_dtype), job->expr.p, el + 1);
            gx__memo_put(ctx, key.p, v, sizeof(gx_dtype) + el + 1);
            free(v);
        }
    }
    gx__sb_free(&key);
    return s;
}

static void map_job_free(map_job *job)
{
    lam_free(job->lam);
    gx__sb_free(&job->expr);
}

static gx_status map_output(gx_ctx *ctx, int nin, gx_array *const *in, gx_dtype dt, gx_array **out, bool *made)
{
    int nd;
    int64_t shape[GX_MAX_DIMS];
    GX__CHECK(ew_broadcast_shape(nin, in, &nd, shape));
    *made = false;
    if (*out) {
        GX__CHECK(gx__array_check(*out, "gx_map (out)"));
        if ((*out)->ctx != ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_map: out belongs to another context");
        if (!gx__dtype_supported((*out)->dtype))
            return gx__err(GX_ERR_DTYPE, "gx_map: out has dtype %s, which map does not support yet", gx_dtype_name((*out)->dtype));
        return GX_OK;   /* shape compatibility is checked by the plan (inputs must broadcast to out) */
    }
    GX__CHECK(gx__array_new(ctx, dt, nd, shape, out));
    *made = true;
    return GX_OK;
}

static void map_fill_plan(ew_plan *pl, const map_job *job)
{
    pl->nconst = job->nconst;
    for (int j = 0; j < job->nconst; j++) {
        pl->cdt[j] = job->cdt[j];
        pl->args.c[j] = job->cval[j];
    }
}

static gx_status map_run(gx_ctx *ctx, const map_job *job, int nin, gx_array *const *in, gx_array *out)
{
    gx__userfns *u = gx__userfns_of(ctx);
    const char *ucode = u ? u->code.p : NULL;
    bool alias = false;
    for (int i = 0; i < nin; i++)
        alias = alias || gx__arrays_overlap(out, in[i]);
    gx_array *dst = out;
    /* An output that overlaps an input other than element for element would read
     * values it has already written: compute into a fresh array, then copy. */
    if (alias)
        GX__CHECK(gx__array_new(ctx, out->dtype, out->ndim, out->shape, &dst));
    ew_plan pl;
    gx_status s = ew_plan_make(&pl, dst, nin, in);
    if (s == GX_OK) {
        map_fill_plan(&pl, job);
        s = ew_run(ctx, &pl, job->expr.p, ucode, "gx_map");
    }
    if (alias) {
        if (s == GX_OK)
            s = gx_array_copy(out, dst);
        gx_array_release(dst);
    }
    return s;
}

gx_status gx_map(gx_ctx *ctx, const char *lambda, int nin, gx_array *const *in, const gx_map_opts *opts, gx_array **out)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(out, "gx_map: out must not be NULL (set *out = NULL to have gx allocate the result)");
    GX__CHECK(map_check_inputs(ctx, nin, in));
    gx__lock(ctx);
    map_job job = {0};
    bool made = false;
    gx_status s = map_prepare(ctx, lambda, nin, in, opts, &job);
    if (s == GX_OK)
        s = map_output(ctx, nin, in, job.out_dtype, out, &made);
    if (s == GX_OK)
        s = map_run(ctx, &job, nin, in, *out);
    if (s != GX_OK && made) {
        gx_array_release(*out);
        *out = NULL;
    }
    map_job_free(&job);
    gx__unlock(ctx);
    return s;
}

gx_status gx_map_source(gx_ctx *ctx, const char *lambda, int nin, gx_array *const *in, const gx_map_opts *opts,
                        char *buf, size_t cap, size_t *needed)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__CHECK(map_check_inputs(ctx, nin, in));
    gx__lock(ctx);
    map_job job = {0};
    gx_array *out = NULL;
    bool made = false;
    gx__sbuf src = {0};
    gx_status s = map_prepare(ctx, lambda, nin, in, opts, &job);
    if (s == GX_OK)
        s = map_output(ctx, nin, in, job.out_dtype, &out, &made);
    ew_plan pl;
    if (s == GX_OK)
        s = ew_plan_make(&pl, out, nin, in);
    if (s == GX_OK) {
        map_fill_plan(&pl, &job);
        gx__userfns *u = gx__userfns_of(ctx);
        s = ew_source(ctx, &pl, job.expr.p, u ? u->code.p : NULL, &src);
    }
    if (s == GX_OK)
        s = gx__sb_export(&src, buf, cap, needed);
    if (made)
        gx_array_release(out);
    gx__sb_free(&src);
    map_job_free(&job);
    gx__unlock(ctx);
    return s;
}
