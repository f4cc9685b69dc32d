/* filter.c -- gx_filter / gx_findall: stream compaction of (zipped) arrays, run as
 * pipelines (one single-pass kernel on the GPU). */
#include "ops/range_priv.h"
#include "ops/userfns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void flat_release(int nin, gx_array **flat, const bool *owned)
{
    for (int i = 0; i < nin; i++)
        if (owned[i])
            gx_array_release(flat[i]);
}

/* Flat, contiguous-or-1-d inputs: N-d views are cloned to dense copies first (on
 * failure nothing is left to release).  The inputs must have one shape, as gx/range.h
 * says: pairing a (3, 4) with a (4, 3) by flat position would silently mix elements
 * that do not belong together, so an equal element count is not enough.  (Pipelines
 * zip by size alone; that is their documented contract, not this one's.) */
static gx_status flat_inputs(gx_ctx *ctx, const char *what, int nin, gx_array *const *in, gx_array **flat, bool *owned)
{
    GX__ARG(in, "%s: in is NULL", what);
    if (nin < 1 || nin > RP_MAXC)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %d inputs; between 1 and %d are allowed", what, nin, RP_MAXC);
    for (int i = 0; i < nin; i++) {
        flat[i] = NULL;
        owned[i] = false;
    }
    for (int i = 0; i < nin; i++) {
        GX__CHECK(gx__array_check_nth(in[i], what, "input", i + 1));
        if (in[i]->ctx != ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: input %d belongs to another context", what, i + 1);
        if (!gx__same_shape(in[i], in[0])) {
            char a[160], b[160];
            gx__shape_str(a, sizeof a, in[i]->ndim, in[i]->shape);
            gx__shape_str(b, sizeof b, in[0]->ndim, in[0]->shape);
            return gx__err(GX_ERR_SHAPE, "%s: input %d has shape %s but input 1 has %s; all inputs need one shape",
                           what, i + 1, a, b);
        }
    }
    for (int i = 0; i < nin; i++) {
        bool half = gx__dtype_is_half(in[i]->dtype); /* pipelines read halves as f32 copies */
        if (!half && (gx__array_contiguous(in[i]) || in[i]->ndim <= 1)) {
            flat[i] = in[i];
            continue;
        }
        gx_status s = gx_array_clone(in[i], half ? GX_F32 : GX_DTYPE_DEFAULT, &flat[i]);
        if (s != GX_OK) {
            flat_release(i, flat, owned);
            return s;
        }
        owned[i] = true;
    }
    return GX_OK;
}

/* The filter options as the pipeline stage's. */
static gx_pipe_opts pipe_opts_of(const gx_filter_opts *o)
{
    gx_pipe_opts po = {0};
    if (o) {
        po.consts = o->consts;
        po.nconsts = o->nconsts;
        po.arrays = o->arrays;
        po.narrays = o->narrays;
        po.unchecked = o->unchecked;
    }
    return po;
}

/* A half input's selected elements back in its dtype (exact: they were halves). */
static gx_status filter_narrow(gx_dtype t, gx_array **a)
{
    if (!gx__dtype_is_half(t))
        return GX_OK;
    gx_array *h = NULL;
    GX__CHECK(gx_array_clone(*a, t, &h));
    gx_array_release(*a);
    *a = h;
    return GX_OK;
}

/* The memo front of gx_filter and gx_filter_into (issue 22): the kernel pair and tile
 * of a filter run before, found by one binary key of what they were generated from:
 * the output mode, the user functions, the inputs' dtypes, whether they all have
 * stride 1 and the vector width their addresses allow, the constants' names and
 * dtypes (their values are kernel arguments), the predicate's text.  Not for bound
 * arrays (their checks are generated code) or empty inputs (no kernel runs).  A hit
 * skips the pipeline (its stage, the predicate's memo look-up), planning its segment
 * and the segment's kernel key (rp_body_bkey: the predicate's text and more copied
 * and hashed, ~35% of the collect step by the last profile).  Only a call that passed
 * every check of the full path stored the key, and whatever the key does not hold
 * (handles, contexts, shapes) is checked before it on every call.  Warm calls on 1024
 * f32 (2-core VM, one thread, fastest of 7 x 2000): gx_filter 1.71 -> 1.29 us,
 * gx_filter_into 1.44 -> 1.03 us. */
static bool filter_front(gx_ctx *ctx, int mode, const char *pred, int nin, gx_array *const *flat,
                         const gx_filter_opts *o, rp_args *a, gx__bkey *k)
{
    int nc = o ? o->nconsts : 0;
    if (!pred || flat[0]->size == 0 || (o && o->narrays != 0) || nc < 0 || nc > RP_MAXCONST || (nc > 0 && !o->consts))
        return false;
    bool contig;
    int vec;
    rp_front_args(nin, flat, flat[0]->size, nc ? o->consts : NULL, nc, a, &contig, &vec);
    gx__userfns *u = gx__userfns_of(ctx);
    k->len = 0;
    k->over = false;
    const int64_t head[] = {0x72706674, mode, u ? u->count : 0, u ? (int64_t)u->code.len : 0, nin, contig, vec, nc};
    gx__bkey_bytes(k, head, sizeof head);
    for (int i = 0; i < nin; i++)
        gx__bkey_int(k, (int64_t)flat[i]->dtype);
    for (int j = 0; j < nc; j++) {
        if (!o->consts[j].name)
            return false;
        gx__bkey_str(k, o->consts[j].name);
        gx__bkey_int(k, (int64_t)o->consts[j].value.dtype);
    }
    gx__bkey_str(k, pred);
    return !k->over;
}

/* gx_filter's pipeline: a new array per input in out. */
static gx_status filter_pipe(gx_ctx *ctx, const char *pred, int nin, gx_array *const *flat, const gx_pipe_opts *po,
                             rp_front *cap, gx_array **out)
{
    gx_pipe *p = NULL, local;
    gx_status s = rp_pipe_open(ctx, nin, flat, &local, &p);
    if (s == GX_OK) {
        p->cap = cap;
        s = gx_pipe_filter(p, pred, po);
    }
    if (s == GX_OK)
        s = gx_pipe_collect(p, nin, out);
    rp_pipe_close(p);
    return s;
}

gx_status gx_filter(gx_ctx *ctx, const char *pred, int nin, gx_array *const *in, const gx_filter_opts *opts,
                    gx_array **out)
{
    GX__ARG(out, "gx_filter: out is NULL (pass room for one array per input)");
    /* The convention: a failed call leaves its results NULL (out has nin entries). */
    for (int i = 0; i < nin && i < RP_MAXC; i++)
        out[i] = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    if (gx__graph_recording(ctx))
        return gx__graph_refuse(ctx, "gx_filter", "its output's length is read to the host to size it; filter "
                                                  "outside the recording");
    GX__OPTS_CHECK(opts, "gx_filter");
    gx_pipe_opts po = pipe_opts_of(opts);
    gx_array *flat[RP_MAXC];
    bool owned[RP_MAXC];
    gx_status s = flat_inputs(ctx, "gx_filter", nin, in, flat, owned);
    if (s != GX_OK) /* it released what it made; its messages name gx_filter already */
        return s;
    rp_args a;
    gx__bkey fk;
    rp_front fr = {0};
    gx__lock(ctx); /* the memo's */
    bool keyed = filter_front(ctx, 0, pred, nin, flat, opts, &a, &fk);
    if (keyed && gx__memo_bget(ctx, &fk, &fr, sizeof fr)) {
        gx_dtype dt[RP_MAXC];
        for (int i = 0; i < nin; i++)
            dt[i] = flat[i]->dtype;
        s = rp_front_collect(ctx, &fr, &a, nin, dt, out);
    } else {
        s = filter_pipe(ctx, pred, nin, flat, &po, keyed ? &fr : NULL, out);
        if (s == GX_OK && keyed && fr.ok)
            gx__memo_bput(ctx, &fk, &fr, sizeof fr);
    }
    gx__unlock(ctx);
    for (int i = 0; s == GX_OK && i < nin; i++)
        s = filter_narrow(in[i]->dtype, &out[i]);
    if (s != GX_OK)
        for (int i = 0; i < nin; i++) {
            gx_array_release(out[i]);
            out[i] = NULL;
        }
    flat_release(nin, flat, owned);
    return s == GX_OK ? s : gx__err_prefix(s, "gx_filter");
}

/* gx_filter_into's outputs: each 1-d, contiguous, its input's dtype, one length (the
 * capacity); count a one-element i64 array.  Halves are refused: the pipeline would
 * select f32 copies, and narrowing them back needs a host-sized temporary. */
static gx_status into_check(gx_ctx *ctx, int nin, gx_array *const *in, gx_array *const *out, gx_array *count,
                            int64_t *cap)
{
    GX__ARG(out, "gx_filter_into: out is NULL (pass one array per input)");
    GX__CHECK(gx__array_check(count, "gx_filter_into (count)"));
    if (count->ctx != ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_filter_into: count belongs to another context");
    if (count->dtype != GX_I64 || count->size != 1 || !gx__array_contiguous(count))
        return gx__err(GX_ERR_DTYPE, "gx_filter_into: count must be a contiguous one-element i64 array (a 0-d "
                                     "gx_array_zeros(ctx, GX_I64, 0, NULL, &c) will do)");
    for (int i = 0; i < nin; i++) {
        GX__CHECK(gx__array_check_nth(out[i], "gx_filter_into", "out", i + 1));
        if (out[i]->ctx != ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_filter_into: out %d belongs to another context", i + 1);
        if (gx__dtype_is_half(in[i]->dtype))
            return gx__err(GX_ERR_DTYPE, "gx_filter_into: input %d is %s; f16 / bf16 are not supported here (use "
                                         "gx_filter, or clone the input to f32)", i + 1, gx_dtype_name(in[i]->dtype));
        if (out[i]->dtype != in[i]->dtype)
            return gx__err(GX_ERR_DTYPE, "gx_filter_into: out %d is %s but input %d is %s; they must match", i + 1,
                           gx_dtype_name(out[i]->dtype), i + 1, gx_dtype_name(in[i]->dtype));
        if (out[i]->ndim != 1 || !gx__array_contiguous(out[i])) {
            char a[160];
            gx__shape_str(a, sizeof a, out[i]->ndim, out[i]->shape);
            return gx__err(GX_ERR_SHAPE, "gx_filter_into: out %d has shape %s; it must be 1-d and contiguous", i + 1,
                           a);
        }
        if (out[i]->shape[0] != out[0]->shape[0])
            return gx__err(GX_ERR_SHAPE, "gx_filter_into: out %d holds %lld values but out 1 holds %lld; all outputs "
                                         "need one capacity", i + 1, (long long)out[i]->shape[0],
                           (long long)out[0]->shape[0]);
    }
    *cap = out[0]->shape[0];
    return GX_OK;
}

gx_status gx_filter_into(gx_ctx *ctx, const char *pred, int nin, gx_array *const *in, const gx_filter_opts *opts,
                         gx_array *const *out, gx_array *count)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__OPTS_CHECK(opts, "gx_filter_into");
    gx_array *flat[RP_MAXC];
    bool owned[RP_MAXC];
    gx_status s = flat_inputs(ctx, "gx_filter_into", nin, in, flat, owned);
    if (s != GX_OK)
        return s;
    int64_t cap = 0;
    s = into_check(ctx, nin, in, out, count, &cap);
    rp_args a;
    gx__bkey fk;
    rp_front fr = {0};
    gx__lock(ctx); /* the memo's */
    bool keyed = s == GX_OK && filter_front(ctx, 1, pred, nin, flat, opts, &a, &fk);
    if (keyed && gx__memo_bget(ctx, &fk, &fr, sizeof fr)) {
        for (int i = 0; i < nin; i++)
            a.out[i] = (uint64_t)(uintptr_t)gx__array_ptr(out[i]);
        s = rp_front_collect_cap(ctx, &fr, &a, cap, gx__array_ptr(count));
    } else {
        gx_pipe_opts po = pipe_opts_of(opts);
        gx_pipe *p = NULL, local;
        if (s == GX_OK)
            s = rp_pipe_open(ctx, nin, flat, &local, &p);
        if (s == GX_OK) {
            p->cap = keyed ? &fr : NULL;
            s = gx_pipe_filter(p, pred, &po);
        }
        if (s == GX_OK && in[0]->size == 0) {
            s = gx_array_fill_f64(count, 0); /* no kernel runs on an empty stream */
        } else if (s == GX_OK) {
            void *op[RP_MAXC];
            for (int i = 0; i < nin; i++)
                op[i] = gx__array_ptr(out[i]);
            s = rp_pipe_collect_cap(p, op, cap, gx__array_ptr(count));
        }
        rp_pipe_close(p);
        if (s == GX_OK && keyed && fr.ok)
            gx__memo_bput(ctx, &fk, &fr, sizeof fr);
    }
    gx__unlock(ctx);
    flat_release(nin, flat, owned);
    return s == GX_OK ? s : gx__err_prefix(s, "gx_filter_into");
}

/* "gx__i, p0, p1 -> gx__i" for nin parameters: the index column of (i, x...). */
static void index_lambda(char *buf, size_t n, int nin)
{
    size_t k = (size_t)gx__fmt(buf, n, "gx__i");
    for (int i = 0; i < nin && k < n; i++)
        k += (size_t)gx__fmt(buf + k, n - k, ", gx__p%d", i);
    if (k < n)
        gx__fmt(buf + k, n - k, " -> gx__i");
}

/* The user's predicate with the index parameter in front: "gx__i, " + text, or
 * "gx__i " + text when the lambda has no parameters. */
static char *with_index_param(const char *pred)
{
    const char *t = pred;
    while (*t == ' ' || *t == '\t' || *t == '\n')
        t++;
    bool noparams = t[0] == '-' && t[1] == '>';
    size_t n = strlen(pred) + 16;
    char *s = malloc(n);
    if (s)
        gx__fmt(s, n, noparams ? "gx__i %s" : "gx__i, %s", pred);
    return s;
}

gx_status gx_findall(gx_ctx *ctx, const char *pred, int nin, gx_array *const *in, const gx_filter_opts *opts,
                     gx_array **out)
{
    GX__ARG(out, "gx_findall: out is NULL");
    *out = NULL;
    GX__ARG(pred, "gx_findall: pred is NULL (pass text such as \"x -> x > 0\")");
    GX__CHECK(gx__ctx_check(ctx));
    if (gx__graph_recording(ctx))
        return gx__graph_refuse(ctx, "gx_findall", "its output's length is read to the host to size it; call it "
                                                   "outside the recording");
    GX__OPTS_CHECK(opts, "gx_findall");
    gx_pipe_opts po = pipe_opts_of(opts);
    gx_array *flat[RP_MAXC];
    bool owned[RP_MAXC];
    gx_status s = flat_inputs(ctx, "gx_findall", nin, in, flat, owned);
    if (s != GX_OK) /* it released what it made; its messages name gx_findall already */
        return s;
    /* Pipelines on this stack, not handles (rp_pipe_open): warm gx_findall of 1024 f32,
     * 2-core VM, one thread, fastest of 7 x 2000: 2.67 -> 2.36 us. */
    gx_pipe *p = NULL, local;
    char *wrapped = NULL;
    s = rp_pipe_open(ctx, nin, flat, &local, &p);
    /* Checked as written first, so messages point into the user's text. */
    if (s == GX_OK)
        s = gx_pipe_filter(p, pred, &po);
    rp_pipe_close(p);
    p = NULL;
    if (s == GX_OK)
        s = rp_pipe_open(ctx, nin, flat, &local, &p);
    if (s == GX_OK)
        s = gx_pipe_enumerate(p);
    if (s == GX_OK && !(wrapped = with_index_param(pred)))
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "gx_findall: out of host memory");
    if (s == GX_OK)
        s = gx_pipe_filter(p, wrapped, &po);
    char idx[256];
    index_lambda(idx, sizeof idx, nin);
    if (s == GX_OK)
        s = gx_pipe_map(p, idx, NULL);
    if (s == GX_OK)
        s = gx_pipe_collect(p, 1, out);
    free(wrapped);
    rp_pipe_close(p);
    flat_release(nin, flat, owned);
    return s == GX_OK ? s : gx__err_prefix(s, "gx_findall");
}
