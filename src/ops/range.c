/* range.c -- gx_pipe: building pipelines, planning their segments and the terminals
 * (see range_priv.h for the model). */
#include "ops/range_priv.h"
#include "ops/opname.h"
#include "ops/userfns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Real scalars only: the generated code does arithmetic and comparisons on them. */
bool rp_dtype_ok(gx_dtype t)
{
    return gx__dtype_supported(t) && (t == GX_BOOL || gx__dtype_is_int(t) || t == GX_F32 || t == GX_F64);
}

/* Pipeline sources and stream values may also be halves: carried as f32 values. */
static bool rp_src_dtype_ok(gx_dtype t) { return rp_dtype_ok(t) || gx__dtype_is_half(t); }

/* Reductions and scans over halves accumulate in f32 (as gx_scan and gx_reduce do). */
static gx_dtype rp_widen_half(gx_dtype t) { return gx__dtype_is_half(t) ? GX_F32 : t; }

/* ------------------------------------------------------------ handles */

/* The pipeline that gx_filter / gx_scan on this thread run on now (rp_pipe_open): on
 * the caller's stack and not in the handle table, so a warm small call pays no
 * calloc / free of the 3.8 KB pipe and no handle-table lock per stage (pipe_new,
 * gx_pipe_destroy and five pipe_checks were ~20% of a warm gx_filter of 1024 f32,
 * CPU backend, perf).  Only a pointer comparison: a user's handle is never it.
 * Warm calls on 1024 f32 (2-core VM, one thread, fastest of 7 x 2000): gx_filter
 * 1.92 -> 1.74 us, gx_scan_into 1.92 -> 1.52 us. */
static _Thread_local const gx_pipe *rp_local;

static gx_status pipe_check(const gx_pipe *p, const char *what)
{
    if (p && p == rp_local)
        return GX_OK;
    if (!p)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the pipeline is NULL", what);
    if (!gx__handle_live(p) || p->magic != RP_PIPE_MAGIC)
        return gx__err(GX_ERR_INVALID_HANDLE, "%s: not a live pipeline (destroyed already, or not made by gx_pipe_*)",
                       what);
    return GX_OK;
}

static gx_status pipe_new(gx_ctx *ctx, rp_src_kind kind, int64_t count, gx_pipe **out)
{
    gx_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_pipe: out of host memory");
    p->magic = RP_PIPE_MAGIC;
    p->ctx = ctx;
    p->src = kind;
    p->count = count;
    gx__handle_add(p);
    *out = p;
    return GX_OK;
}

static gx_status from_arrays_check(gx_ctx *ctx, int n, gx_array *const *arrays)
{
    GX__CHECK(gx__ctx_check(ctx));
    if (n < 1 || n > RP_MAXC || !arrays)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "gx_pipe_from_arrays: %d arrays; between 1 and %d are allowed (and arrays must not be NULL)", n,
                       RP_MAXC);
    for (int i = 0; i < n; i++) {
        /* The name is formatted only for a bad handle (per call it was 5% of a warm
         * gx_filter of 1024 f32, CPU backend, perf); arrays count from 0 here. */
        GX__CHECK(gx__array_check_nth(arrays[i], "gx_pipe_from_arrays", "array", i));
        const gx_array *a = arrays[i];
        if (a->ctx != ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_pipe_from_arrays: array %d belongs to another context", i);
        if (!rp_src_dtype_ok(a->dtype))
            return gx__err(GX_ERR_DTYPE, "gx_pipe_from_arrays: array %d has dtype %s, which pipelines do not support",
                           i, gx_dtype_name(a->dtype));
        if (a->size != arrays[0]->size)
            return gx__err(GX_ERR_SHAPE,
                           "gx_pipe_from_arrays: array %d has %lld elements but array 0 has %lld; zipped arrays must "
                           "have one size",
                           i, (long long)a->size, (long long)arrays[0]->size);
        if (!gx__array_contiguous(a) && a->ndim != 1)
            return gx__err(GX_ERR_SHAPE,
                           "gx_pipe_from_arrays: array %d is a non-contiguous %d-d view; pass a contiguous array or a "
                           "1-d view (gx_array_clone makes one)",
                           i, a->ndim);
    }
    return GX_OK;
}

gx_status gx_pipe_from_arrays(gx_ctx *ctx, int n, gx_array *const *arrays, gx_pipe **out)
{
    GX__ARG(out, "gx_pipe_from_arrays: out is NULL");
    *out = NULL;
    GX__CHECK(from_arrays_check(ctx, n, arrays));
    GX__CHECK(pipe_new(ctx, RP_SRC_ARRAYS, arrays[0]->size, out));
    (*out)->nsrc = n;
    for (int i = 0; i < n; i++)
        (*out)->arr[i] = arrays[i];
    return GX_OK;
}

gx_status rp_pipe_open(gx_ctx *ctx, int n, gx_array *const *arrays, gx_pipe *buf, gx_pipe **out)
{
    *out = NULL;
    if (rp_local) /* one at a time per thread; a nested one is an ordinary pipeline */
        return gx_pipe_from_arrays(ctx, n, arrays, out);
    GX__CHECK(from_arrays_check(ctx, n, arrays));
    memset(buf, 0, sizeof *buf);
    buf->magic = RP_PIPE_MAGIC;
    buf->ctx = ctx;
    buf->src = RP_SRC_ARRAYS;
    buf->count = arrays[0]->size;
    buf->nsrc = n;
    for (int i = 0; i < n; i++)
        buf->arr[i] = arrays[i];
    rp_local = buf;
    *out = buf;
    return GX_OK;
}

static void cval_from_double(gx_dtype t, double v, rp_cval *c)
{
    if (gx__dtype_is_float(t))
        c->f = v;
    else if (gx__dtype_is_signed(t) || t == GX_BOOL)
        c->i = (int64_t)v;
    else
        c->u = v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v;
}

static gx_status gen_args_ok(gx_ctx *ctx, gx_dtype dt, int64_t count, const char *what)
{
    GX__CHECK(gx__ctx_check(ctx));
    if (!rp_dtype_ok(dt))
        return gx__err(GX_ERR_DTYPE, "%s: dtype %s is not supported (use bool, an integer dtype, f32 or f64)", what,
                       gx_dtype_name(dt));
    if (count < 0)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: count is %lld; it must be >= 0", what, (long long)count);
    return GX_OK;
}

gx_status gx_pipe_iota(gx_ctx *ctx, gx_dtype dtype, int64_t count, double start, double step, gx_pipe **out)
{
    GX__ARG(out, "gx_pipe_iota: out is NULL");
    *out = NULL;
    GX__CHECK(gen_args_ok(ctx, dtype, count, "gx_pipe_iota"));
    GX__CHECK(pipe_new(ctx, RP_SRC_IOTA, count, out));
    (*out)->sdt = dtype;
    cval_from_double(dtype, start, &(*out)->start);
    cval_from_double(dtype, step, &(*out)->step);
    return GX_OK;
}

gx_status gx_pipe_random(gx_ctx *ctx, gx_dtype dtype, uint64_t seed, int64_t count, gx_pipe **out)
{
    GX__ARG(out, "gx_pipe_random: out is NULL");
    *out = NULL;
    GX__CHECK(gen_args_ok(ctx, dtype, count, "gx_pipe_random"));
    GX__CHECK(pipe_new(ctx, RP_SRC_RANDOM, count, out));
    (*out)->sdt = dtype;
    (*out)->seed = seed;
    return GX_OK;
}

static void op_free(rp_op *op)
{
    lam_free(op->lam);
    free(op->text);
    memset(op, 0, sizeof *op);
}

/* What a pipeline owns (its stages' texts, names, memo keys). */
static void pipe_free_parts(gx_pipe *p)
{
    for (int i = 0; i < p->nops; i++)
        op_free(&p->ops[i]);
    for (int j = 0; j < p->ncst; j++)
        free(p->cname[j]);
    for (int k = 0; k < BD_MAX; k++)
        free(p->bname[k]);
    for (int i = 0; i < RP_MEMO; i++)
        free(p->memo[i].key);
    p->magic = 0;
}

gx_status gx_pipe_destroy(gx_pipe *p)
{
    if (!p)
        return GX_OK;
    GX__CHECK(pipe_check(p, "gx_pipe_destroy"));
    if (p == rp_local)
        return gx__err(GX_ERR_INTERNAL, "gx_pipe_destroy: a pipeline of rp_pipe_open (close it with rp_pipe_close)");
    gx__handle_remove(p);
    pipe_free_parts(p);
    free(p);
    return GX_OK;
}

void rp_pipe_close(gx_pipe *p)
{
    if (!p)
        return;
    if (p != rp_local) {
        gx_pipe_destroy(p);
        return;
    }
    pipe_free_parts(p);
    rp_local = NULL;
}

/* ------------------------------------------------------------ stages */

/* Components and dtypes of the stream after every stage. */
static int pipe_types(const gx_pipe *p, gx_dtype *dt)
{
    int m = p->src == RP_SRC_ARRAYS ? p->nsrc : 1;
    for (int k = 0; k < m; k++)
        dt[k] = p->src == RP_SRC_ARRAYS ? p->arr[k]->dtype : p->sdt;
    for (int s = 0; s < p->nops; s++) {
        const rp_op *op = &p->ops[s];
        if (op->kind == RP_MAP) {
            dt[0] = op->rt;
            m = 1;
        } else if (op->kind == RP_ENUM) {
            memmove(dt + 1, dt, sizeof *dt * (size_t)m);
            dt[0] = GX_I64;
            m++;
        }
    }
    return m;
}

static gx_status compile_lambda(gx_ctx *ctx, const char *what, const char *text, int nargs, const gx_dtype *types,
                                const gx_const *consts, int nconsts, const bd_set *bind, lam_lambda **out)
{
    GX__ARG(text, "%s: the lambda is NULL (pass text such as \"x -> x * 2\")", what);
    if (nconsts < 0 || (nconsts > 0 && !consts))
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %d constants but consts is NULL", what, nconsts);
    gx__userfns *u = gx__userfns_of(ctx);
    lam_env env = {text,
                   nargs,
                   types,
                   consts,
                   nconsts,
                   u ? u->sigs : NULL,
                   u ? u->count : 0,
                   bind ? bind->arr : NULL,
                   bind ? bind->n : 0};
    gx_status s = lam_compile(&env, out);
    if (s != GX_OK)
        return gx__err_prefix(s, "%s (the stream has %d component%s here)", what, nargs, nargs == 1 ? "" : "s");
    return GX_OK;
}

static gx_status add_consts(gx_pipe *p, const char *what, const gx_const *consts, int nconsts, int *base)
{
    if (p->ncst + nconsts > RP_MAXCONST)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: at most %d constants over a whole pipeline", what, RP_MAXCONST);
    for (int j = 0; j < nconsts; j++)
        if (!consts[j].name || !rp_dtype_ok(consts[j].value.dtype))
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: constant %d has no name or an unsupported dtype", what, j);
    *base = p->ncst;
    for (int j = 0; j < nconsts; j++) {
        p->cname[p->ncst] = strdup(consts[j].name);
        p->cst[p->ncst] = consts[j];
        p->cst[p->ncst].name = p->cname[p->ncst];
        p->ncst++;
    }
    return GX_OK;
}

/* The pipe's bound arrays with a stage's added: a name the pipe binds already must
 * name the same array.  Checks stay on unless every binding stage asks for none. */
static gx_status merge_binds(const gx_pipe *p, const char *what, const gx_pipe_opts *o, bd_set *out)
{
    *out = p->bind;
    if (!o || o->narrays == 0)
        return GX_OK;
    bd_set st;
    GX__CHECK(bd_collect(p->ctx, what, o->arrays, o->narrays, o->unchecked, o->consts, o->nconsts, &st));
    out->checked = p->bind.n ? p->bind.checked || st.checked : st.checked;
    for (int k = 0; k < st.n; k++) {
        int at = -1;
        for (int j = 0; j < out->n && at < 0; j++)
            if (strcmp(out->arr[j].name, st.arr[k].name) == 0)
                at = j;
        if (at >= 0 && out->a[at] != st.a[k])
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "%s: '%.40s' is bound to another array by an earlier stage of this pipeline", what,
                           st.arr[k].name);
        if (at >= 0)
            continue;
        if (out->n == BD_MAX)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: at most %d bound arrays over a whole pipeline", what, BD_MAX);
        out->arr[out->n] = st.arr[k];
        out->sdt[out->n] = st.sdt[k];
        out->a[out->n++] = st.a[k];
    }
    return GX_OK;
}

/* Keeps the merged bindings, with names the pipe owns. */
static gx_status keep_binds(gx_pipe *p, const char *what, const bd_set *b)
{
    for (int k = p->bind.n; k < b->n; k++)
        if (!(p->bname[k] = strdup(b->arr[k].name)))
            return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", what);
    p->bind = *b;
    for (int k = 0; k < b->n; k++)
        p->bind.arr[k].name = p->bname[k];
    return GX_OK;
}

/* Drops the bindings added after `kept` was taken (a temporary stage's). */
static void restore_binds(gx_pipe *p, const bd_set *kept)
{
    for (int k = kept->n; k < p->bind.n; k++) {
        free(p->bname[k]);
        p->bname[k] = NULL;
    }
    p->bind = *kept;
}

/* The memo key of a stage's lambda: what compile_lambda reads but the constants'
 * values (map.c's key holds the same); only for stages without bound arrays. */
static bool op_key(gx_ctx *ctx, const char *text, int m, const gx_dtype *dt, const gx_const *consts, int nconsts,
                   const bd_set *bind, gx__bkey *k)
{
    if (bind->n > 0 || !text || nconsts < 0 || (nconsts > 0 && !consts))
        return false;
    gx__userfns *u = gx__userfns_of(ctx);
    k->len = 0;
    k->over = false;
    const int64_t head[] = {0x72706c, u ? u->count : 0, m, nconsts};
    gx__bkey_bytes(k, head, sizeof head);
    for (int c = 0; c < m; c++)
        gx__bkey_int(k, (int64_t)dt[c]);
    for (int j = 0; j < nconsts; j++) {
        gx__bkey_str(k, consts[j].name);
        gx__bkey_int(k, (int64_t)consts[j].value.dtype);
    }
    gx__bkey_str(k, text);
    return !k->over;
}

/* Whether this lambda compiled before on these dtypes (its result dtype in *rt): then
 * the stage is added without compiling it, and rp_ops_compile compiles it only if a
 * kernel must be generated.  Why: gx_filter and gx_scan make a pipeline per call, and
 * compiling the predicate (lex, parse, check, ranges) was 27% of a warm gx_filter of
 * 1024 f32 (CPU backend, perf: 2.7 us a call). */
static bool op_seen(gx_ctx *ctx, const char *text, int m, const gx_dtype *dt, const gx_const *consts, int nconsts,
                    const bd_set *bind, gx_dtype *rt)
{
    gx__bkey k;
    return op_key(ctx, text, m, dt, consts, nconsts, bind, &k) && gx__memo_bget(ctx, &k, rt, sizeof *rt);
}

static void op_saw(gx_ctx *ctx, const char *text, int m, const gx_dtype *dt, const gx_const *consts, int nconsts,
                   const bd_set *bind, gx_dtype rt)
{
    gx__bkey k;
    if (op_key(ctx, text, m, dt, consts, nconsts, bind, &k))
        gx__memo_bput(ctx, &k, &rt, sizeof rt);
}

static gx_status add_lambda_op(gx_pipe *p, rp_op_kind kind, const char *what, const char *text, const gx_const *consts,
                               int nconsts, const gx_pipe_opts *opts)
{
    GX__CHECK(pipe_check(p, what));
    if (p->nops >= RP_MAXOPS)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: a pipeline has at most %d stages", what, RP_MAXOPS);
    gx_dtype dt[RP_MAXC];
    int m = pipe_types(p, dt);
    lam_lambda *lam = NULL;
    bd_set bind;
    GX__CHECK(merge_binds(p, what, opts, &bind));
    gx_dtype rt;
    if (!op_seen(p->ctx, text, m, dt, consts, nconsts, &bind, &rt)) {
        GX__CHECK(compile_lambda(p->ctx, what, text, m, dt, consts, nconsts, &bind, &lam));
        rt = lam_result_type(lam);
        if (rp_src_dtype_ok(rt))
            op_saw(p->ctx, text, m, dt, consts, nconsts, &bind, rt);
    }
    if (!rp_src_dtype_ok(rt)) {
        lam_free(lam);
        return gx__err(GX_ERR_TYPE, "%s: the lambda gives %s, which pipelines do not carry", what, gx_dtype_name(rt));
    }
    int base = 0;
    gx_status s = keep_binds(p, what, &bind);
    if (s == GX_OK)
        s = add_consts(p, what, consts, nconsts, &base);
    char *t = s == GX_OK ? strdup(text) : NULL;
    if (s == GX_OK && !t)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", what);
    if (s != GX_OK) {
        lam_free(lam);
        return s;
    }
    rp_op op = {kind, t, lam, rt, m, {0}, base, nconsts, 0};
    memcpy(op.at, dt, sizeof op.at);
    p->ops[p->nops++] = op;
    return GX_OK;
}

gx_status rp_ops_compile(gx_pipe *p)
{
    for (int s = 0; s < p->nops; s++) {
        rp_op *op = &p->ops[s];
        if (op->text && !op->lam)
            GX__CHECK(compile_lambda(p->ctx, "gx_pipe", op->text, op->nargs, op->at, p->cst + op->cbase, op->nconst,
                                     NULL, &op->lam));
    }
    return GX_OK;
}

gx_status gx_pipe_map(gx_pipe *p, const char *lambda, const gx_pipe_opts *opts)
{
    GX__OPTS_CHECK(opts, "gx_pipe_map");
    return add_lambda_op(p, RP_MAP, "gx_pipe_map", lambda, opts ? opts->consts : NULL, opts ? opts->nconsts : 0, opts);
}

gx_status gx_pipe_filter(gx_pipe *p, const char *pred, const gx_pipe_opts *opts)
{
    GX__OPTS_CHECK(opts, "gx_pipe_filter");
    return add_lambda_op(p, RP_FILTER, "gx_pipe_filter", pred, opts ? opts->consts : NULL, opts ? opts->nconsts : 0,
                         opts);
}

static gx_status add_plain_op(gx_pipe *p, rp_op_kind kind, int64_t k, const char *what)
{
    GX__CHECK(pipe_check(p, what));
    if (p->nops >= RP_MAXOPS)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: a pipeline has at most %d stages", what, RP_MAXOPS);
    if (k < 0)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: k is %lld; it must be >= 0", what, (long long)k);
    gx_dtype dt[RP_MAXC];
    if (kind == RP_ENUM && pipe_types(p, dt) >= RP_MAXC)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the stream has %d components already (at most %d); map it first",
                       what, RP_MAXC, RP_MAXC);
    p->ops[p->nops++] = (rp_op){.kind = kind, .k = k};
    return GX_OK;
}

gx_status gx_pipe_enumerate(gx_pipe *p) { return add_plain_op(p, RP_ENUM, 0, "gx_pipe_enumerate"); }
gx_status gx_pipe_take(gx_pipe *p, int64_t k) { return add_plain_op(p, RP_TAKE, k, "gx_pipe_take"); }
gx_status gx_pipe_drop(gx_pipe *p, int64_t k) { return add_plain_op(p, RP_DROP, k, "gx_pipe_drop"); }

gx_status gx_pipe_arity(const gx_pipe *p, int *out)
{
    GX__CHECK(pipe_check(p, "gx_pipe_arity"));
    GX__ARG(out, "gx_pipe_arity: out is NULL");
    gx_dtype dt[RP_MAXC];
    *out = pipe_types(p, dt);
    return GX_OK;
}

gx_status gx_pipe_dtype(const gx_pipe *p, int i, gx_dtype *out)
{
    GX__CHECK(pipe_check(p, "gx_pipe_dtype"));
    GX__ARG(out, "gx_pipe_dtype: out is NULL");
    gx_dtype dt[RP_MAXC];
    int m = pipe_types(p, dt);
    if (i < 0 || i >= m)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_pipe_dtype: component %d of a stream of %d", i, m);
    *out = dt[i];
    return GX_OK;
}

/* The length when no filter is in effect. */
static bool pipe_len(const gx_pipe *p, int64_t *len)
{
    int64_t n = p->count;
    for (int s = 0; s < p->nops; s++) {
        const rp_op *op = &p->ops[s];
        if (op->kind == RP_FILTER)
            return false;
        if (op->kind == RP_TAKE)
            n = n < op->k ? n : op->k;
        else if (op->kind == RP_DROP)
            n = n - (n < op->k ? n : op->k);
    }
    *len = n;
    return true;
}

gx_status gx_pipe_length(const gx_pipe *p, int64_t *out)
{
    GX__CHECK(pipe_check(p, "gx_pipe_length"));
    GX__ARG(out, "gx_pipe_length: out is NULL");
    if (!pipe_len(p, out))
        return gx__err(GX_ERR_SHAPE,
                       "gx_pipe_length: the length is unknown after a filter (count the pipeline with gx_pipe_count)");
    return GX_OK;
}

/* ------------------------------------------------------------ planning */

static void seg_from_arrays(rp_seg *sg, const gx_pipe *p, int n, gx_array *const *arr, int64_t count)
{
    memset(sg, 0, sizeof *sg);
    sg->pipe = p;
    sg->src = RP_SRC_ARRAYS;
    sg->nsrc = n;
    sg->contig = true;
    for (int k = 0; k < n; k++) {
        sg->sdt[k] = arr[k]->dtype;
        sg->sptr[k] = (uint64_t)(uintptr_t)gx__array_ptr(arr[k]);
        sg->sstride[k] = gx__array_contiguous(arr[k]) ? 1 : arr[k]->strides[0];
        sg->contig = sg->contig && sg->sstride[k] == 1;
        sg->dt[k] = arr[k]->dtype;
    }
    sg->arity = n;
    sg->n = count;
}

/* [lo, hi] widened to [0, 2^b - 1] or [-2^b, 2^b - 1] for the next b of a short list,
 * so that a kernel specialised on the bound serves many lengths.  31 and 62 are on it
 * because products of two such values still fit in 62 bits and in a signed 64-bit. */
static lam_range bound_class(__int128 lo, __int128 hi)
{
    static const int bits[] = {8, 16, 24, 31, 32, 40, 48, 56, 62, 63};
    __int128 m = lo >= 0 ? hi : (-(lo + 1) > hi ? -(lo + 1) : hi);
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        __int128 top = ((__int128)1 << bits[i]) - 1;
        if (m <= top)
            return (lam_range){true, lo >= 0 ? 0 : (int64_t)(-top - 1), (int64_t)top};
    }
    return (lam_range){false, 0, 0};
}

/* The iota's values over [lo, lo + n) where they never wrap in the source dtype,
 * and each enumerate's index range. */
static void rp_seg_bounds(rp_seg *sg)
{
    memset(&sg->vr, 0, sizeof sg->vr);
    memset(sg->er, 0, sizeof sg->er);
    if (sg->n <= 0)
        return;
    gx_dtype t = sg->sdt[0];
    if (sg->src == RP_SRC_IOTA && t >= GX_I8 && t <= GX_U64) {
        bool sgn = gx__dtype_is_signed(t);
        __int128 st = sgn ? (__int128)sg->start.i : (__int128)sg->start.u;
        __int128 sp = sgn ? (__int128)sg->step.i : (__int128)sg->step.u;
        __int128 a = st + sp * sg->lo, b = st + sp * (sg->lo + sg->n - 1);
        __int128 lo = a < b ? a : b, hi = a < b ? b : a;
        int w = (int)gx_dtype_size(t) * 8;
        __int128 tmin = sgn ? -((__int128)1 << (w - 1)) : 0;
        __int128 tmax = sgn ? ((__int128)1 << (w - 1)) - 1 : ((__int128)1 << w) - 1;
        if (lo >= tmin && hi <= tmax)
            sg->vr = bound_class(lo, hi);
    }
    for (int s = 0; s < sg->nops; s++)
        if (sg->ops[s]->kind == RP_ENUM)
            sg->er[s] = bound_class((__int128)sg->lo - sg->eoff[s], (__int128)sg->lo + sg->n - 1 - sg->eoff[s]);
}

/* The segment ready to run: value bounds, and for arrays the base pointers advanced
 * to lo and the vector width every pointer allows. */
static void seg_finalize(rp_seg *sg, uint64_t *base)
{
    rp_seg_bounds(sg);
    if (sg->src != RP_SRC_ARRAYS)
        return;
    size_t maxsz = 1;
    for (int k = 0; k < sg->nsrc; k++) {
        size_t sz = gx_dtype_size(sg->sdt[k]);
        sg->sptr[k] = base[k] + (uint64_t)(sg->lo * sg->sstride[k] * (int64_t)sz);
        maxsz = sz > maxsz ? sz : maxsz;
    }
    bool half = false; /* half loads convert one by one (range_gen.c: not staged, no vectors) */
    for (int k = 0; k < sg->nsrc; k++)
        half = half || gx__dtype_is_half(sg->sdt[k]);
    int vec = sg->contig && !half ? (int)(16 / maxsz) : 1;
    for (int k = 0; k < sg->nsrc; k++)
        while (vec > 1 && sg->sptr[k] % (gx_dtype_size(sg->sdt[k]) * (size_t)vec))
            vec /= 2;
    sg->vec = vec;
}

void rp_front_args(int n, gx_array *const *arr, int64_t count, const gx_const *consts, int nconsts, rp_args *a,
                   bool *contig, int *vec)
{
    memset(a, 0, sizeof *a);
    bool c = true, half = false;
    size_t maxsz = 1;
    for (int k = 0; k < n; k++) { /* seg_from_arrays and seg_finalize's, at lo 0 */
        size_t sz = gx_dtype_size(arr[k]->dtype);
        a->src[k] = (uint64_t)(uintptr_t)gx__array_ptr(arr[k]);
        a->sst[k] = gx__array_contiguous(arr[k]) ? 1 : arr[k]->strides[0];
        c = c && a->sst[k] == 1;
        half = half || gx__dtype_is_half(arr[k]->dtype);
        maxsz = sz > maxsz ? sz : maxsz;
    }
    int v = c && !half ? (int)(16 / maxsz) : 1;
    for (int k = 0; k < n; k++)
        while (v > 1 && a->src[k] % (gx_dtype_size(arr[k]->dtype) * (size_t)v))
            v /= 2;
    a->n = count;
    for (int j = 0; j < nconsts; j++)
        a->c[j] = rp_const_arg(&consts[j].value);
    *contig = c;
    *vec = v;
}

static void seg_apply_types(rp_seg *sg, const rp_op *op)
{
    if (op->kind == RP_MAP) {
        sg->dt[0] = op->rt;
        sg->arity = 1;
    } else if (op->kind == RP_ENUM) {
        memmove(sg->dt + 1, sg->dt, sizeof *sg->dt * (size_t)sg->arity);
        sg->dt[0] = GX_I64;
        sg->arity++;
    }
}

void rp_release_tmps(gx_array **tmps, int ntmp)
{
    for (int i = 0; i < ntmp; i++)
        gx_array_release(tmps[i]);
}

/* Runs the segment as a collect and makes its outputs the source of a fresh one. */
static gx_status materialise(gx_pipe *p, rp_seg *sg, uint64_t *base, gx_array **tmps, int *ntmp)
{
    seg_finalize(sg, base);
    gx_array *outs[RP_MAXC];
    GX__CHECK(rp_run_collect(p->ctx, sg, sg->arity, outs));
    int m = sg->arity;
    for (int c = 0; c < m; c++)
        tmps[(*ntmp)++] = outs[c];
    seg_from_arrays(sg, p, m, outs, outs[0]->size);
    for (int k = 0; k < m; k++)
        base[k] = sg->sptr[k];
    return GX_OK;
}

#define RP_MAXTMP (RP_MAXC * RP_MAXOPS + RP_MAXC)

gx_status rp_plan(gx_pipe *p, bool positional, rp_seg *sg, gx_array **tmps, int *ntmp)
{
    uint64_t base[RP_MAXC] = {0};
    *ntmp = 0;
    if (p->src == RP_SRC_ARRAYS) {
        seg_from_arrays(sg, p, p->nsrc, p->arr, p->count);
        for (int k = 0; k < p->nsrc; k++)
            base[k] = sg->sptr[k];
    } else {
        memset(sg, 0, sizeof *sg);
        sg->pipe = p;
        sg->src = p->src;
        sg->nsrc = 1;
        sg->sdt[0] = sg->dt[0] = p->sdt;
        sg->arity = 1;
        sg->start = p->start;
        sg->step = p->step;
        sg->seed = p->seed;
        sg->n = p->count;
    }
    for (int s = 0; s < p->nops; s++) {
        const rp_op *op = &p->ops[s];
        bool positional_op = op->kind == RP_TAKE || op->kind == RP_DROP || op->kind == RP_ENUM;
        if (positional_op && sg->filtered) {
            gx_status st = materialise(p, sg, base, tmps, ntmp);
            if (st != GX_OK) {
                rp_release_tmps(tmps, *ntmp);
                *ntmp = 0;
                return st;
            }
        }
        if (op->kind == RP_TAKE) {
            sg->n = sg->n < op->k ? sg->n : op->k;
        } else if (op->kind == RP_DROP) {
            int64_t d = sg->n < op->k ? sg->n : op->k;
            sg->lo += d;
            sg->n -= d;
        } else {
            sg->eoff[sg->nops] = sg->lo;
            sg->ops[sg->nops++] = op;
            sg->filtered = sg->filtered || op->kind == RP_FILTER;
            seg_apply_types(sg, op);
        }
    }
    gx_status st = GX_OK;
    if (positional && sg->filtered)
        st = materialise(p, sg, base, tmps, ntmp);
    if (st != GX_OK) {
        rp_release_tmps(tmps, *ntmp);
        *ntmp = 0;
        return st;
    }
    seg_finalize(sg, base);
    return GX_OK;
}

/* ------------------------------------------------------------ terminals */

typedef struct term {
    gx_pipe *p;
    rp_seg sg;
    gx_array *tmps[RP_MAXTMP];
    int ntmp;
    bool locked;
} term;

static gx_status term_begin(term *t, gx_pipe *p, const char *what, bool positional, bool one_value)
{
    memset(t, 0, sizeof *t);
    GX__CHECK(pipe_check(p, what));
    t->p = p;
    gx_dtype dt[RP_MAXC];
    int m = pipe_types(p, dt);
    if (one_value && m != 1)
        return gx__err(GX_ERR_SHAPE, "%s: the stream has %d components; map them to one value first (gx_pipe_map)",
                       what, m);
    for (int k = 0; k < p->nsrc && p->src == RP_SRC_ARRAYS; k++)
        GX__CHECK(gx__array_check(p->arr[k], what));
    gx__lock(p->ctx);
    t->locked = true;
    gx_status s = rp_plan(p, positional, &t->sg, t->tmps, &t->ntmp);
    if (s != GX_OK) {
        gx__unlock(p->ctx);
        t->locked = false;
    }
    return s;
}

static gx_status term_end(term *t, gx_status s)
{
    rp_release_tmps(t->tmps, t->ntmp);
    if (t->locked)
        gx__unlock(t->p->ctx);
    return s;
}

/* An init value -> the accumulator member's field. */
void rp_const_to_cval(const gx_scalar *c, gx_dtype acc, rp_cval *v)
{
    double d = gx__dtype_is_float(c->dtype)                           ? c->v.f
               : gx__dtype_is_signed(c->dtype) || c->dtype == GX_BOOL ? (double)c->v.i
                                                                      : (double)c->v.u;
    if (gx__dtype_is_float(acc))
        v->f = d;
    else if (gx__dtype_is_float(c->dtype))
        cval_from_double(acc, d, v);
    else
        v->i = c->v.i; /* integer to integer: the bits, converted by the kernel's cast */
}

/* A constant's value as C text of its dtype (hex floats: exact). */
static gx_status const_literal(const char *what, const gx_const *c, char *buf, size_t n)
{
    const gx_scalar *v = &c->value;
    if (gx__dtype_is_float(v->dtype))
        snprintf(buf, n, "((%s)%a)", gx__dtype_ctype(v->dtype), v->v.f);
    else if (gx__dtype_is_int(v->dtype) && !gx__dtype_is_signed(v->dtype))
        snprintf(buf, n, "((%s)%lluULL)", gx__dtype_ctype(v->dtype), (unsigned long long)v->v.u);
    else if (gx__dtype_is_int(v->dtype) || v->dtype == GX_BOOL)
        snprintf(buf, n, "((%s)(%lldLL))", gx__dtype_ctype(v->dtype), (long long)v->v.i);
    else
        return gx__err(GX_ERR_DTYPE, "%s: constant '%s' has dtype %s; operator lambdas take real constants", what,
                       c->name ? c->name : "?", gx_dtype_name(v->dtype));
    return GX_OK;
}

/* The operator's text: a name becomes its lambda (opname.h), a lambda stays. */
static gx_status op_text(const char *what, const char *op, gx_dtype elem, gx_dtype *forced, rp_opjob *j,
                         const char **text)
{
    GX__ARG(op, "%s: the operator is NULL (pass \"+\", \"max\"... or a lambda \"a, b -> a + b\")", what);
    opn_kind k = opn_parse(op);
    *text = op;
    if (k == OPN_NONE) {
        if (!strstr(op, "->"))
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "%s: '%s' is not an operator: use one of " OPN_NAMES " or a lambda \"a, b -> ...\"", what,
                           op);
        return GX_OK;
    }
    if (*forced == GX_DTYPE_DEFAULT)
        *forced = opn_acc(k, elem);
    const char *why = NULL;
    *text = opn_lambda(k, *forced, &why);
    if (!*text)
        return gx__err(k == OPN_COUNT || k == OPN_MEAN ? GX_ERR_INVALID_ARGUMENT : GX_ERR_DTYPE,
                       "%s: operator \"%s\" on %s: %s", what, op, gx_dtype_name(*forced), why);
    j->named = true;
    j->neutral = opn_neutral(k, *forced);
    return GX_OK;
}

/* The memo key of an operator's compiled body: everything rp_op_compile reads. */
static void op_memo_key(gx_ctx *ctx, const char *text, gx_dtype elem, gx_dtype forced, const char (*lit)[64],
                        int nconsts, const gx_const *consts, gx__sbuf *k)
{
    gx__userfns *u = gx__userfns_of(ctx);
    gx__sb_printf(k, "rpop1|%d|%d|%d|%d|", (int)elem, (int)forced, u ? u->count : 0, nconsts);
    for (int c = 0; c < nconsts; c++)
        gx__sb_printf(k, "%s:%d=%s,", consts[c].name, (int)consts[c].value.dtype, lit[c]);
    gx__sb_printf(k, "|%s", text);
}

/* op_memo_key's fields as a binary key. */
static void op_memo_bkey(gx_ctx *ctx, const char *text, gx_dtype elem, gx_dtype forced, const char (*lit)[64],
                         int nconsts, const gx_const *consts, gx__bkey *k)
{
    gx__userfns *u = gx__userfns_of(ctx);
    k->len = 0;
    k->over = false;
    const int64_t head[] = {0x72706f70, (int64_t)elem, (int64_t)forced, u ? u->count : 0, nconsts};
    gx__bkey_bytes(k, head, sizeof head);
    for (int c = 0; c < nconsts; c++) {
        gx__bkey_str(k, consts[c].name);
        gx__bkey_int(k, (int64_t)consts[c].value.dtype);
        gx__bkey_str(k, lit[c]);
    }
    gx__bkey_str(k, text);
}

/* The address of an operator's memo value (acc, body, NUL, lift, NUL). */
typedef struct rp_memo_ref {
    const char *v;
} rp_memo_ref;

/* The job's texts point into the memo's value, which stays until the context is
 * destroyed (rp_op_prepare): copying them into two buffers (malloc, free) was ~6% of a
 * warm gx_scan_into of 1024 f32 (two prepares a call; CPU backend, perf): 1.52 ->
 * 1.41 us a call (2-core VM, one thread, fastest of 7 x 2000). */
static void op_job_from(rp_opjob *j, const char *v)
{
    memcpy(&j->acc, v, sizeof(gx_dtype));
    const char *body = v + sizeof(gx_dtype);
    j->body.p = (char *)body;
    j->lift.p = (char *)(body + strlen(body) + 1);
    j->borrowed = true;
}

/* Type-checks the operator twice (on the elements, then on the accumulator) and
 * writes its body: on a miss only (rp_op_prepare). */
static gx_status rp_op_compile(gx_ctx *ctx, const char *what, const char *text, gx_dtype elem, gx_dtype forced,
                               const gx_const *consts, int nconsts, const char **cnames, rp_opjob *j)
{
    gx_dtype two[2] = {elem, elem};
    lam_lambda *l = NULL;
    GX__CHECK(compile_lambda(ctx, what, text, 2, two, consts, nconsts, NULL, &l));
    gx_dtype acc = forced != GX_DTYPE_DEFAULT ? forced : lam_result_type(l);
    lam_free(l);
    l = NULL;
    if (!rp_dtype_ok(acc))
        return gx__err(GX_ERR_TYPE, "%s: the operator gives %s, which cannot accumulate", what, gx_dtype_name(acc));
    two[0] = two[1] = acc;
    GX__CHECK(compile_lambda(ctx, what, text, 2, two, consts, nconsts, NULL, &l));
    const char *names[2] = {"a.v0", "b.v0"};
    gx__sbuf e = {0};
    gx_status s = lam_emit(l, names, nconsts ? cnames : NULL, &e);
    lam_free(l);
    if (s == GX_OK) {
        gx__sb_printf(&j->body, "r.v0 = (%s)(%s);", gx__dtype_ctype(acc), e.p);
        gx__sb_printf(&j->lift, "r.v0 = (%s)r0;", gx__dtype_ctype(acc));
    }
    gx__sb_free(&e);
    j->acc = acc;
    return s;
}

/* Host time per warm gx_scan_into of 1024 f32 (CPU backend, one thread, this
 * machine): 10.5 us before the memo below, of which the four lambda compiles (two
 * here, called twice per gx_scan: scan.c and gx_pipe_scan_into) were about half
 * (perf: lex, parse, malloc/free).  The memo keeps (acc, body, lift) per (operator
 * text, dtypes, constants' literals, user functions). */
gx_status rp_op_prepare(gx_ctx *ctx, const char *what, const char *op, gx_dtype elem, gx_dtype forced,
                        const gx_const *consts, int nconsts, rp_opjob *j)
{
    const char *text = NULL;
    GX__CHECK(op_text(what, op, elem, &forced, j, &text));
    if (nconsts < 0 || nconsts > RP_MAXCONST || (nconsts > 0 && !consts))
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %d constants (at most %d; consts must not be NULL)", what, nconsts,
                       RP_MAXCONST);
    char lit[RP_MAXCONST][64];
    const char *cnames[RP_MAXCONST];
    for (int c = 0; c < nconsts; c++) {
        GX__CHECK(const_literal(what, &consts[c], lit[c], sizeof lit[c]));
        cnames[c] = lit[c];
    }
    /* The memo's front first (a binary key, no formatting): printing the text key was
     * 14% of a warm gx_scan_into of 1024 f32 (CPU backend, perf; two calls a scan). */
    gx__bkey bk;
    op_memo_bkey(ctx, text, elem, forced, (const char (*)[64])lit, nconsts, consts, &bk);
    rp_memo_ref ref;
    if (gx__memo_bget(ctx, &bk, &ref, sizeof ref)) {
        op_job_from(j, ref.v);
        return j->body.oom || j->lift.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", what) : GX_OK;
    }
    gx__sbuf key = {0};
    op_memo_key(ctx, text, elem, forced, (const char (*)[64])lit, nconsts, consts, &key);
    size_t vlen = 0;
    const char *hit = key.oom ? NULL : gx__memo_find(ctx, key.p, &vlen);
    gx_status s = GX_OK;
    if (hit && vlen > sizeof(gx_dtype)) { /* value: acc, body, NUL, lift, NUL */
        op_job_from(j, hit);
    } else {
        s = rp_op_compile(ctx, what, text, elem, forced, consts, nconsts, cnames, j);
        if (s == GX_OK && !key.oom && !j->body.oom && !j->lift.oom) {
            size_t bl = strlen(j->body.p) + 1, ll = strlen(j->lift.p) + 1;
            char *v = malloc(sizeof(gx_dtype) + bl + ll);
            if (v) {
                memcpy(v, &j->acc, sizeof(gx_dtype));
                memcpy(v + sizeof(gx_dtype), j->body.p, bl);
                memcpy(v + sizeof(gx_dtype) + bl, j->lift.p, ll);
                gx__memo_put(ctx, key.p, v, sizeof(gx_dtype) + bl + ll);
                free(v);
            }
        }
    }
    /* The memo's value stays where it is until the context is destroyed (a key is
     * put only when it is absent), so the front keeps its address. */
    const char *kept = s == GX_OK && !key.oom ? gx__memo_find(ctx, key.p, &vlen) : NULL;
    if (kept && !bk.over) {
        ref.v = kept;
        gx__memo_bput(ctx, &bk, &ref, sizeof ref);
    }
    gx__sb_free(&key);
    if (s == GX_OK && (j->body.oom || j->lift.oom))
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", what);
    return s;
}

void rp_opjob_free(rp_opjob *j)
{
    if (j->borrowed) {
        memset(&j->body, 0, sizeof j->body);
        memset(&j->lift, 0, sizeof j->lift);
        j->borrowed = false;
        return;
    }
    gx__sb_free(&j->body);
    gx__sb_free(&j->lift);
}

/* One value of dtype t as the scalar that holds it (gx.h's member rules). */
static void slot_to_scalar(gx_dtype t, const uint8_t *slot, gx_scalar *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = t;
    if (gx__dtype_is_float(t))
        out->v.f = gx__dtype_to_f64(t, slot);
    else if (t == GX_U64)
        memcpy(&out->v.u, slot, 8);
    else if (gx__dtype_is_int(t) && !gx__dtype_is_signed(t))
        out->v.u = (uint64_t)gx__dtype_to_f64(t, slot); /* exact below 2^53 */
    else if (t == GX_I64)
        memcpy(&out->v.i, slot, 8);
    else
        out->v.i = (int64_t)gx__dtype_to_f64(t, slot); /* bool and narrow ints: exact */
}

gx_status gx_pipe_reduce(gx_pipe *p, const char *op, const gx_pipe_opts *opts, gx_scalar *out)
{
    GX__ARG(out, "gx_pipe_reduce: out is NULL (it receives the result)");
    GX__OPTS_CHECK(opts, "gx_pipe_reduce");
    GX__CHECK(bd_no_operator("gx_pipe_reduce", opts ? opts->narrays : 0,
                             "bind them in a gx_pipe_map stage before it, or use gx_pipe_mapreduce"));
    const gx_scalar *init = opts ? opts->init : NULL;
    term t;
    GX__CHECK(term_begin(&t, p, "gx_pipe_reduce", false, true));
    rp_opjob j = {0};
    gx_status s = rp_op_prepare(p->ctx, "gx_pipe_reduce", op, rp_widen_half(t.sg.dt[0]),
                                rp_widen_half(opts ? opts->dtype : GX_DTYPE_DEFAULT),
                                opts ? opts->consts : NULL, opts ? opts->nconsts : 0, &j);
    if (s == GX_OK) {
        if (!init && j.named)
            init = &j.neutral; /* an empty stream then gives the neutral element, as gx_reduce does */
        rp_kspec ks = {0};
        ks.term = RP_T_REDUCE;
        ks.nacc = 1;
        ks.acc[0] = j.acc;
        ks.op_body = j.body.p;
        ks.lift = j.lift.p;
        ks.has_init = init != NULL;
        if (init)
            rp_const_to_cval(init, j.acc, &ks.init[0]);
        uint8_t slot[16];
        bool empty = false;
        s = rp_run_reduce(p->ctx, &t.sg, &ks, slot, &empty);
        if (s == GX_OK && empty)
            s = gx__err(GX_ERR_SHAPE, "gx_pipe_reduce: the stream is empty and the lambda operator has no init "
                                      "(pass opts->init, its neutral element)");
        if (s == GX_OK)
            slot_to_scalar(j.acc, slot, out);
    }
    rp_opjob_free(&j);
    return term_end(&t, s);
}

gx_status gx_pipe_mapreduce(gx_pipe *p, const char *map, const char *op, const gx_pipe_opts *opts, gx_scalar *out)
{
    GX__OPTS_CHECK(opts, "gx_pipe_mapreduce");
    gx_pipe_opts mo = {0}, ro = {0};
    if (opts) {
        mo.consts = opts->consts;
        mo.nconsts = opts->nconsts;
        mo.arrays = opts->arrays; /* the map reads them; the operator does not */
        mo.narrays = opts->narrays;
        mo.unchecked = opts->unchecked;
        ro = *opts;
        ro.arrays = NULL;
        ro.narrays = 0;
    }
    /* The map stage is temporary: so are the bindings it adds to the pipe. */
    bd_set kept = p->bind;
    gx_status s = gx_pipe_map(p, map, &mo);
    if (s == GX_OK) {
        s = gx_pipe_reduce(p, op, opts ? &ro : NULL, out);
        op_free(&p->ops[--p->nops]);
    }
    restore_binds(p, &kept);
    return s;
}

/* Reductions with a fixed operator. */
static gx_status fixed_reduce(gx_pipe *p, const char *what, bool positional, bool one_value, rp_kspec *ks,
                              uint8_t *slot, bool *empty)
{
    term t;
    GX__CHECK(term_begin(&t, p, what, positional, one_value));
    ks->term = RP_T_REDUCE;
    return term_end(&t, rp_run_reduce(p->ctx, &t.sg, ks, slot, empty));
}

gx_status gx_pipe_count(gx_pipe *p, int64_t *out)
{
    GX__ARG(out, "gx_pipe_count: out is NULL");
    rp_kspec ks = {0};
    ks.nacc = 1;
    ks.acc[0] = GX_I64;
    ks.op_body = "r.v0 = a.v0 + b.v0;";
    ks.lift = "r.v0 = 1;";
    ks.has_identity = true;
    ks.identity = "GX_ZACC";
    uint8_t slot[16];
    bool empty;
    GX__CHECK(fixed_reduce(p, "gx_pipe_count", false, false, &ks, slot, &empty));
    memcpy(out, slot, 8);
    return GX_OK;
}

/* any(x) directly; all(x) as !any(!x). */
static gx_status any_of(gx_pipe *p, const char *what, bool negate, bool *out)
{
    GX__ARG(out, "%s: out is NULL", what);
    rp_kspec ks = {0};
    ks.nacc = 1;
    ks.acc[0] = GX_BOOL;
    ks.op_body = "r.v0 = a.v0 || b.v0;";
    ks.lift = negate ? "r.v0 = !(r0 != 0);" : "r.v0 = r0 != 0;";
    ks.has_identity = true;
    ks.identity = "GX_ZACC";
    uint8_t slot[16];
    bool empty;
    GX__CHECK(fixed_reduce(p, what, false, true, &ks, slot, &empty));
    *out = (slot[0] != 0) != negate;
    return GX_OK;
}

gx_status gx_pipe_any(gx_pipe *p, bool *out) { return any_of(p, "gx_pipe_any", false, out); }
gx_status gx_pipe_all(gx_pipe *p, bool *out) { return any_of(p, "gx_pipe_all", true, out); }

static gx_status extremum(gx_pipe *p, const char *what, bool maxi, bool arg, uint8_t *slot, gx_dtype *dt)
{
    GX__CHECK(pipe_check(p, what));
    gx_dtype dts[RP_MAXC];
    pipe_types(p, dts);
    *dt = rp_widen_half(dts[0]); /* a half stream compares its f32 values; min/max give f32 */
    const char *cmp = maxi ? ">" : "<";
    char body[512];
    if (arg)
        gx__fmt(body, sizeof body,
                "const bool an = a.v0 != a.v0, bn = b.v0 != b.v0;\n"
                "  const bool tb = an && bn ? b.v1 < a.v1 : an ? true : bn ? false : (b.v0 %s a.v0 || (b.v0 == a.v0 && "
                "b.v1 < a.v1));\n"
                "  r = tb ? b : a;",
                cmp);
    else
        gx__fmt(body, sizeof body, "r.v0 = (b.v0 %s a.v0 || a.v0 != a.v0) ? b.v0 : a.v0;", cmp);
    rp_kspec ks = {0};
    ks.nacc = arg ? 2 : 1;
    ks.acc[0] = *dt;
    ks.acc[1] = GX_I64;
    ks.op_body = body;
    ks.lift = arg ? "r.v0 = r0; r.v1 = gx_pos;" : "r.v0 = r0;";
    bool empty = false;
    GX__CHECK(fixed_reduce(p, what, arg, true, &ks, slot, &empty));
    if (empty)
        return gx__err(GX_ERR_SHAPE, "%s: the stream is empty (there is no %s)", what,
                       maxi ? "largest value" : "smallest value");
    return GX_OK;
}

gx_status gx_pipe_min(gx_pipe *p, gx_scalar *out)
{
    GX__ARG(out, "gx_pipe_min: out is NULL");
    uint8_t slot[24];
    gx_dtype dt;
    GX__CHECK(extremum(p, "gx_pipe_min", false, false, slot, &dt));
    slot_to_scalar(dt, slot, out);
    return GX_OK;
}

gx_status gx_pipe_max(gx_pipe *p, gx_scalar *out)
{
    GX__ARG(out, "gx_pipe_max: out is NULL");
    uint8_t slot[24];
    gx_dtype dt;
    GX__CHECK(extremum(p, "gx_pipe_max", true, false, slot, &dt));
    slot_to_scalar(dt, slot, out);
    return GX_OK;
}

gx_status gx_pipe_argmin(gx_pipe *p, int64_t *out)
{
    GX__ARG(out, "gx_pipe_argmin: out is NULL");
    uint8_t slot[24];
    gx_dtype dt;
    GX__CHECK(extremum(p, "gx_pipe_argmin", false, true, slot, &dt));
    memcpy(out, slot + 8, 8);
    return GX_OK;
}

gx_status gx_pipe_argmax(gx_pipe *p, int64_t *out)
{
    GX__ARG(out, "gx_pipe_argmax: out is NULL");
    uint8_t slot[24];
    gx_dtype dt;
    GX__CHECK(extremum(p, "gx_pipe_argmax", true, true, slot, &dt));
    memcpy(out, slot + 8, 8);
    return GX_OK;
}

gx_status gx_pipe_collect(gx_pipe *p, int nout, gx_array **out)
{
    GX__ARG(out, "gx_pipe_collect: out is NULL");
    GX__CHECK(pipe_check(p, "gx_pipe_collect"));
    gx_dtype dt[RP_MAXC];
    int m = pipe_types(p, dt);
    if (nout != m)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "gx_pipe_collect: nout is %d but the stream has %d component%s (one array each)", nout, m,
                       m == 1 ? "" : "s");
    for (int c = 0; c < nout; c++)
        out[c] = NULL;
    term t;
    GX__CHECK(term_begin(&t, p, "gx_pipe_collect", false, false));
    return term_end(&t, rp_run_collect(p->ctx, &t.sg, nout, out));
}

gx_status rp_pipe_collect_cap(gx_pipe *p, void *const *outp, int64_t cap, void *count)
{
    term t;
    GX__CHECK(term_begin(&t, p, "gx_filter_into", false, false));
    return term_end(&t, rp_run_collect_cap(p->ctx, &t.sg, outp, cap, count));
}

/* gx_pipe_scan_into's array: known length, contiguous, the accumulator's dtype. */
static gx_status scan_check_into(gx_pipe *p, const gx_pipe_opts *o, gx_dtype acc, int64_t len, gx_array *out)
{
    if (out->ctx != p->ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_pipe_scan_into: out belongs to another context");
    if (out->size != len)
        return gx__err(GX_ERR_SHAPE, "gx_pipe_scan_into: out has %lld elements but the stream has %lld",
                       (long long)out->size, (long long)len);
    if (!gx__array_contiguous(out))
        return gx__err(GX_ERR_SHAPE, "gx_pipe_scan_into: out must be contiguous (scan into a new array with "
                                     "gx_pipe_scan, then gx_array_copy_into)");
    return gx__into_dtype("gx_pipe_scan_into", acc, out->dtype, o && o->exact_dtype);
}

/* gx_pipe_scan (into NULL: a new array through *made) and gx_pipe_scan_into. */
static gx_status pipe_scan(gx_pipe *p, const char *fn, const char *op, const gx_pipe_opts *o, gx_array *into,
                           gx_array **made)
{
    GX__OPTS_CHECK(o, fn);
    GX__CHECK(bd_no_operator(fn, o ? o->narrays : 0, "bind them in a gx_pipe_map stage before it"));
    GX__CHECK(pipe_check(p, fn));
    int64_t known = 0;
    gx_dtype forced = o ? o->dtype : GX_DTYPE_DEFAULT;
    if (into && (gx__array_check_nth(into, fn, "out", 1) != GX_OK || into->readonly)) {
        /* The name is formatted only for a bad array (per call it was 5% of a warm
         * gx_scan_into of 1024 f32, CPU backend, perf). */
        char what[48];
        gx__fmt(what, sizeof what, "%s (out)", fn);
        GX__CHECK(gx__array_check(into, what));
        GX__CHECK(gx__array_writable(into, what));
    }
    if (into) {
        if (!pipe_len(p, &known))
            return gx__err(GX_ERR_SHAPE,
                           "%s: the stream's length is unknown after a filter, so it cannot fill an "
                           "existing array; use gx_pipe_scan",
                           fn);
        if (forced == GX_DTYPE_DEFAULT && !(o && o->exact_dtype))
            forced = into->dtype; /* accumulate in out's dtype (documented for the _into forms) */
    }
    const gx_scalar *init = o ? o->init : NULL;
    bool exclusive = o && o->exclusive;
    term t;
    GX__CHECK(term_begin(&t, p, fn, true, true));
    rp_opjob j = {0};
    /* A half out or opts->dtype: f32 accumulation, each output converted once (conv). */
    gx_status s = GX_OK;
    gx_dtype elem = rp_widen_half(t.sg.dt[0]), want = rp_widen_half(forced);
    if (p->prep && p->prep_elem == elem && p->prep->acc == want) {
        /* gx_scan's, prepared for this operator already: borrowed, not looked up
         * a second time (gx_scan_into of a reversed 1024-f32 view, which takes the
         * full path: 5.42 -> 5.33 us; 2-core VM, one thread, fastest of 7 x 2000). */
        j = *p->prep;
        j.borrowed = true;
    } else {
        s = rp_op_prepare(p->ctx, fn, op, elem, want, o ? o->consts : NULL, o ? o->nconsts : 0, &j);
    }
    if (s == GX_OK && !init && exclusive && j.named)
        init = &j.neutral;
    if (s == GX_OK && exclusive && !init)
        s = gx__err(GX_ERR_INVALID_ARGUMENT, "%s: an exclusive scan of a lambda needs opts->init (its first output)",
                    fn);
    gx_array *conv = NULL; /* into of another dtype than the accumulator: scan here, then convert */
    if (s == GX_OK)
        s = into ? scan_check_into(p, o, j.acc, t.sg.n, into) : gx__array_new(p->ctx, j.acc, 1, &t.sg.n, made);
    if (s == GX_OK && into && into->dtype != j.acc) {
        conv = into;
        into = NULL;
        s = gx__array_new(p->ctx, j.acc, 1, &t.sg.n, &into);
    }
    if (s == GX_OK) {
        rp_kspec ks = {0};
        ks.term = RP_T_SCAN;
        ks.nacc = 1;
        ks.acc[0] = j.acc;
        ks.op_body = j.body.p;
        ks.lift = j.lift.p;
        ks.exclusive = exclusive;
        ks.has_init = init != NULL;
        if (init)
            rp_const_to_cval(init, j.acc, &ks.init[0]);
        s = rp_run_scan(p->ctx, &t.sg, &ks, into ? into : *made);
    }
    if (conv) {
        if (s == GX_OK)
            s = gx_map_into(p->ctx, "x -> x", 1, &into, NULL, conv);
        gx_array_release(into);
    }
    if (s != GX_OK && made && *made) {
        gx_array_release(*made);
        *made = NULL;
    }
    rp_opjob_free(&j);
    return term_end(&t, s);
}

gx_status gx_pipe_scan(gx_pipe *p, const char *op, const gx_pipe_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_pipe_scan: out is NULL (it receives the new array; gx_pipe_scan_into writes yours)");
    *out = NULL;
    return pipe_scan(p, "gx_pipe_scan", op, opts, NULL, out);
}

gx_status gx_pipe_scan_into(gx_pipe *p, const char *op, const gx_pipe_opts *opts, gx_array *out)
{
    GX__ARG(out, "gx_pipe_scan_into: out is NULL (gx_pipe_scan makes a new array)");
    return pipe_scan(p, "gx_pipe_scan_into", op, opts, out, NULL);
}

gx_status gx_pipe_to_host(gx_pipe *p, void *buf, size_t cap, int64_t *len)
{
    GX__ARG(len, "gx_pipe_to_host: len is NULL");
    GX__ARG(buf || cap == 0, "gx_pipe_to_host: buf is NULL but cap is %zu", cap);
    GX__CHECK(pipe_check(p, "gx_pipe_to_host"));
    gx_dtype dt[RP_MAXC];
    int m = pipe_types(p, dt);
    if (m != 1)
        return gx__err(
            GX_ERR_SHAPE,
            "gx_pipe_to_host: the stream has %d components; map them to one value first (or use gx_pipe_collect)", m);
    gx_array *a = NULL;
    GX__CHECK(gx_pipe_collect(p, 1, &a));
    *len = a->size;
    size_t need = (size_t)a->size * gx_dtype_size(a->dtype);
    gx_status s = GX_OK;
    if (need > cap)
        s = gx__err(GX_ERR_INVALID_ARGUMENT,
                    "gx_pipe_to_host: the result has %lld values (%zu bytes) but cap is %zu bytes", (long long)a->size,
                    need, cap);
    else if (need > 0)
        s = gx_array_to_host(a, buf, cap);
    gx_array_release(a);
    return s;
}
