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
    gx_dtype out_dtype; /* opts->dtype, else the lambda's type */
    gx_dtype lam_dtype; /* the lambda's own result type */
    int nconst;
    gx_dtype cdt[EW_MAXCONST];
    ew_cval cval[EW_MAXCONST];
    gx__sbuf expr;
    bd_set bind; /* arrays the lambda reads by index */
} map_job;

static gx_status map_check_inputs(gx_ctx *ctx, int nin, gx_array *const *in)
{
    if (nin < 0 || nin > EW_MAXIN)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_map: %d inputs; between 0 and %d are allowed", nin, EW_MAXIN);
    GX__ARG(in || nin == 0, "gx_map: in is NULL but nin is %d", nin);
    for (int i = 0; i < nin; i++) {
        GX__CHECK(gx__array_check_nth(in[i], "gx_map", "input", i + 1));
        if (in[i]->ctx != ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_map: input %d belongs to another context", i + 1);
        if (!gx__dtype_supported(in[i]->dtype))
            return gx__err(GX_ERR_DTYPE, "gx_map: input %d has dtype %s, which map does not support yet", i + 1,
                           gx_dtype_name(in[i]->dtype));
    }
    return GX_OK;
}

/* The text key's fields (below) as a binary key: user functions, opts->dtype, input
 * dtypes, constants' names and dtypes, bound arrays, the lambda. */
static void map_bkey(gx_ctx *ctx, const char *lambda, int nin, const gx_dtype *at, const gx_map_opts *opts,
                     const bd_set *bind, gx__bkey *k)
{
    gx__userfns *u = gx__userfns_of(ctx);
    int nc = opts ? opts->nconsts : 0;
    k->len = 0;
    k->over = false;
    const int64_t head[] = {0x6d6170, u ? u->count : 0, opts ? (int64_t)opts->dtype : -1, nin, nc};
    gx__bkey_bytes(k, head, sizeof head);
    for (int i = 0; i < nin; i++)
        gx__bkey_int(k, (int64_t)at[i]);
    for (int j = 0; j < nc; j++) {
        gx__bkey_str(k, opts->consts[j].name);
        gx__bkey_int(k, (int64_t)opts->consts[j].value.dtype);
    }
    if (bind->n > 0) { /* rare: the text form */
        gx__sbuf b = {0};
        bd_key(bind, &b);
        if (b.oom)
            k->over = true;
        gx__bkey_str(k, b.p ? b.p : "");
        gx__sb_free(&b);
    }
    gx__bkey_str(k, lambda);
}

/* The address of a lambda's memo value (out dtype, lambda dtype, expression): it
 * stays put until the context is destroyed (a key is put only when absent). */
typedef struct map_memo_ref {
    const char *v;
} map_memo_ref;

static void map_keep_ref(gx_ctx *ctx, const gx__bkey *bk, const char *v)
{
    map_memo_ref ref = {v};
    gx__memo_bput(ctx, bk, &ref, sizeof ref);
}

static void map_job_from(map_job *job, const char *v)
{
    memcpy(&job->out_dtype, v, sizeof(gx_dtype));
    memcpy(&job->lam_dtype, v + sizeof(gx_dtype), sizeof(gx_dtype));
    gx__sb_puts(&job->expr, v + 2 * sizeof(gx_dtype));
}

/* Parses, type-checks and emits the lambda for these inputs. */
static gx_status map_prepare(gx_ctx *ctx, const char *lambda, int nin, gx_array *const *in, const gx_map_opts *opts,
                             map_job *job)
{
    GX__ARG(lambda, "gx_map: lambda is NULL (pass text such as \"x -> x * 2\")");
    int nc = opts ? opts->nconsts : 0;
    if (nc < 0 || nc > EW_MAXCONST || (nc > 0 && !opts->consts))
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "gx_map: %d constants; between 0 and %d are allowed (and consts must not be NULL)", nc,
                       EW_MAXCONST);
    gx_dtype at[EW_MAXIN];
    for (int i = 0; i < nin; i++)
        at[i] = in[i]->dtype;
    for (int j = 0; j < nc; j++) {
        if (!opts->consts[j].name || !gx__dtype_supported(opts->consts[j].value.dtype))
            return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_map: constant %d has no name or an unsupported dtype", j);
        job->cdt[j] = opts->consts[j].value.dtype;
        ew_cval_of(&opts->consts[j].value, &job->cval[j]);
    }
    job->nconst = nc;
    GX__CHECK(bd_collect(ctx, "gx_map", opts ? opts->arrays : NULL, opts ? opts->narrays : 0,
                         opts ? opts->unchecked : 0, nc ? opts->consts : NULL, nc, &job->bind));
    gx__userfns *u = gx__userfns_of(ctx);
    /* A lambda seen before with these dtypes: reuse its emitted expression, found
     * first by a binary key in the memo's front (printing the text key below was 18%
     * of a warm gx_map_into of 2 x 1024 f32, CPU backend, perf). */
    gx__bkey bk;
    map_bkey(ctx, lambda, nin, at, opts, &job->bind, &bk);
    map_memo_ref ref;
    if (gx__memo_bget(ctx, &bk, &ref, sizeof ref)) {
        map_job_from(job, ref.v);
        return job->expr.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
    }
    gx__sbuf key = {0};
    gx__sb_printf(&key, "map1|%d|%d|", u ? u->count : 0, opts ? (int)opts->dtype : -1);
    for (int i = 0; i < nin; i++)
        gx__sb_printf(&key, "%d,", (int)at[i]);
    for (int j = 0; j < nc; j++)
        gx__sb_printf(&key, "%s:%d,", opts->consts[j].name, (int)opts->consts[j].value.dtype);
    bd_key(&job->bind, &key);
    gx__sb_printf(&key, "|%s", lambda);
    size_t vlen = 0;
    const char *hit = key.oom ? NULL : gx__memo_find(ctx, key.p, &vlen);
    if (hit && vlen > 2 * sizeof(gx_dtype)) {
        map_job_from(job, hit);
        map_keep_ref(ctx, &bk, hit);
        gx__sb_free(&key);
        return job->expr.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
    }
    lam_env env = {lambda,           nin,           at,         nc ? opts->consts : NULL, nc, u ? u->sigs : NULL,
                   u ? u->count : 0, job->bind.arr, job->bind.n};
    gx_status cs = lam_compile(&env, &job->lam);
    if (cs != GX_OK) {
        gx__sb_free(&key);
        return cs;
    }
    job->lam_dtype = lam_result_type(job->lam);
    job->out_dtype = opts && opts->dtype != GX_DTYPE_DEFAULT ? opts->dtype : job->lam_dtype;
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
        unsigned char *v = malloc(2 * sizeof(gx_dtype) + el + 1);
        if (v) {
            memcpy(v, &job->out_dtype, sizeof(gx_dtype));
            memcpy(v + sizeof(gx_dtype), &job->lam_dtype, sizeof(gx_dtype));
            memcpy(v + 2 * sizeof(gx_dtype), job->expr.p, el + 1);
            gx__memo_put(ctx, key.p, v, 2 * sizeof(gx_dtype) + el + 1);
            free(v);
            const char *kept = gx__memo_find(ctx, key.p, &vlen);
            if (kept)
                map_keep_ref(ctx, &bk, kept);
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

/* gx_map_into's output: checked here; its shape is checked by the plan (the inputs
 * must broadcast to it). */
static gx_status map_check_into(gx_ctx *ctx, const char *fn, const gx_map_opts *opts, gx_dtype dt, gx_array *out)
{
    /* The name is formatted only for a message (as for the inputs). */
    if (!out || !gx__handle_live(out) || out->magic != GX__ARRAY_MAGIC || out->readonly) {
        char what[48];
        gx__fmt(what, sizeof what, "%s (out)", fn);
        GX__CHECK(gx__array_check(out, what));
        if (out->ctx != ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: out belongs to another context", fn);
        GX__CHECK(gx__array_writable(out, what));
    }
    if (out->ctx != ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: out belongs to another context", fn);
    if (!gx__dtype_supported(out->dtype))
        return gx__err(GX_ERR_DTYPE, "%s: out has dtype %s, which map does not support yet", fn,
                       gx_dtype_name(out->dtype));
    return gx__into_dtype(fn, dt, out->dtype, opts && opts->exact_dtype);
}

static gx_status map_new_output(gx_ctx *ctx, int nin, gx_array *const *in, gx_dtype dt, gx_array **out)
{
    int nd;
    int64_t shape[GX_MAX_DIMS];
    GX__CHECK(ew_broadcast_shape(nin, in, &nd, shape));
    return gx__array_new(ctx, dt, nd, shape, out);
}

static void map_fill_plan(ew_plan *pl, const map_job *job)
{
    pl->bind = &job->bind;
    pl->nconst = job->nconst;
    for (int j = 0; j < job->nconst; j++) {
        pl->cdt[j] = job->cdt[j];
        pl->args.c[j] = job->cval[j];
    }
}

/* The lambda's value as out's dtype: real stores cast in the kernel (ewise.c), but a
 * complex struct converts through the prelude's helpers. */
static gx_status map_store_expr(const map_job *job, gx_dtype out, gx__sbuf *e)
{
    gx_dtype lt = job->lam_dtype;
    bool lc = gx__dtype_is_complex(lt), oc = gx__dtype_is_complex(out);
    if (lc && !oc)
        return gx__err(GX_ERR_DTYPE,
                       "gx_map: the lambda gives complex %s but the result dtype is real %s; take re(z) "
                       "or abs(z) in the lambda",
                       gx_dtype_name(lt), gx_dtype_name(out));
    if (!oc || lt == out)
        gx__sb_puts(e, job->expr.p);
    else if (lc)
        gx__sb_printf(e, "gx_cx_%s_%s(%s)", gx_dtype_name(lt), gx_dtype_name(out), job->expr.p);
    else if (out == GX_C64)
        gx__sb_printf(e, "c32((float)(%s), 0.0f)", job->expr.p);
    else
        gx__sb_printf(e, "c64((double)(%s), 0.0)", job->expr.p);
    return e->oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "gx_map: out of host memory") : GX_OK;
}

static gx_status map_run(gx_ctx *ctx, map_job *job, int nin, gx_array *const *in, gx_array *out)
{
    gx__userfns *u = gx__userfns_of(ctx);
    const char *ucode = u ? u->code.p : NULL;
    bool alias = false;
    for (int i = 0; i < nin; i++)
        alias = alias || gx__arrays_overlap(out, in[i]);
    for (int k = 0; k < job->bind.n; k++)
        alias = alias || gx__arrays_overlap(out, job->bind.a[k]);
    gx_array *dst = out;
    /* An output that overlaps an input other than element for element, or any bound
     * array (read at any index), would read values it has already written: compute
     * into a fresh array, then copy. */
    if (alias)
        GX__CHECK(gx__array_new(ctx, out->dtype, out->ndim, out->shape, &dst));
    ew_plan pl;
    gx__sbuf e = {0};
    gx_status s = ew_plan_make(&pl, dst, nin, in);
    if (s == GX_OK)
        s = map_store_expr(job, dst->dtype, &e);
    if (s == GX_OK) {
        map_fill_plan(&pl, job);
        s = bd_begin(ctx, &job->bind, &pl.args.b);
        if (s == GX_OK)
            s = bd_end(ctx, &job->bind, "gx_map", "output element (row-major)", ew_run(ctx, &pl, e.p, ucode, "gx_map"));
    }
    gx__sb_free(&e);
    if (alias) {
        if (s == GX_OK)
            s = gx_array_copy_into(dst, out);
        gx_array_release(dst);
    }
    return s;
}

/* gx_map (into == NULL: a new array through *made) and gx_map_into. */
static gx_status map_impl(gx_ctx *ctx, const char *fn, const char *lambda, int nin, gx_array *const *in,
                          const gx_map_opts *opts, gx_array *into, gx_array **made)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(map_check_inputs(ctx, nin, in));
    gx__lock(ctx);
    map_job job = {0};
    gx_status s = map_prepare(ctx, lambda, nin, in, opts, &job);
    if (s == GX_OK)
        s = into ? map_check_into(ctx, fn, opts, job.out_dtype, into)
                 : map_new_output(ctx, nin, in, job.out_dtype, made);
    if (s == GX_OK)
        s = map_run(ctx, &job, nin, in, into ? into : *made);
    if (s != GX_OK && made && *made) {
        gx_array_release(*made);
        *made = NULL;
    }
    map_job_free(&job);
    gx__unlock(ctx);
    return s;
}

gx_status gx_map(gx_ctx *ctx, const char *lambda, int nin, gx_array *const *in, const gx_map_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_map: out must not be NULL (it receives the new array; gx_map_into writes into yours)");
    *out = NULL;
    return map_impl(ctx, "gx_map", lambda, nin, in, opts, NULL, out);
}

gx_status gx_map_into(gx_ctx *ctx, const char *lambda, int nin, gx_array *const *in, const gx_map_opts *opts,
                      gx_array *out)
{
    GX__ARG(out, "gx_map_into: out must not be NULL (gx_map makes a new array)");
    return map_impl(ctx, "gx_map_into", lambda, nin, in, opts, out, NULL);
}

gx_status gx_map_source(gx_ctx *ctx, const char *lambda, int nin, gx_array *const *in, const gx_map_opts *opts,
                        char *buf, size_t cap, size_t *needed)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, "gx_map_source");
    GX__CHECK(map_check_inputs(ctx, nin, in));
    gx__lock(ctx);
    map_job job = {0};
    gx_array *out = NULL;
    gx__sbuf src = {0};
    gx_status s = map_prepare(ctx, lambda, nin, in, opts, &job);
    if (s == GX_OK)
        s = map_new_output(ctx, nin, in, job.out_dtype, &out);
    ew_plan pl;
    if (s == GX_OK)
        s = ew_plan_make(&pl, out, nin, in);
    gx__sbuf e = {0};
    if (s == GX_OK)
        s = map_store_expr(&job, out->dtype, &e);
    if (s == GX_OK) {
        map_fill_plan(&pl, &job);
        gx__userfns *u = gx__userfns_of(ctx);
        s = ew_source(ctx, &pl, e.p, u ? u->code.p : NULL, &src);
    }
    gx__sb_free(&e);
    if (s == GX_OK)
        s = gx__sb_export(&src, buf, cap, needed);
    gx_array_release(out);
    gx__sb_free(&src);
    map_job_free(&job);
    gx__unlock(ctx);
    return s;
}
