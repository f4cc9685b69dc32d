/* dist_ops.c -- gx/dist.h's operations: each is gx's single-array call on the local
 * pieces plus the least communication that makes the result global (nothing for
 * map and matmul, one all-reduce or all-gather of partials for reductions, a gather
 * of per-rank totals for scans, of counts for filters; samples, counts and one
 * all-to-all for the sort). */
#include "ops/dist_priv.h"
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------ map */

/* Inputs of one communicator; sharded ones split alike and of one ndim; replicated
 * ones unable to broadcast across the split axis.  *first gets the first sharded
 * input (NULL when all are replicated). */
static gx_status dx_check_inputs(const char *fn, int nin, gx_dist *const *in, const gx_dist **first)
{
    GX__ARG(in && nin >= 1, "%s: needs 1 or more inputs (nin %d)", fn, nin);
    *first = NULL;
    int fi = 0;
    for (int i = 0; i < nin; i++) {
        GX__CHECK(dx_check(in[i], fn));
        if (in[i]->comm != in[0]->comm)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: input %d lives on another communicator than input 1", fn, i + 1);
        if (in[i]->sharded && !*first) {
            *first = in[i];
            fi = i;
        }
    }
    const gx_dist *f = *first;
    for (int i = 0; f && i < nin; i++) {
        const gx_dist *d = in[i];
        if (d->sharded && memcmp(d->counts, f->counts, (size_t)d->size * sizeof *d->counts) != 0) {
            char a[256], b[256];
            dx_counts_str(a, sizeof a, d->counts, d->size);
            dx_counts_str(b, sizeof b, f->counts, f->size);
            return gx__err(GX_ERR_SHAPE, "%s: input %d is split %s but input %d is split %s; sharded inputs need one split", fn,
                           i + 1, a, fi + 1, b);
        }
        if (d->sharded && d->ndim != f->ndim)
            return gx__err(GX_ERR_SHAPE, "%s: sharded inputs have %d and %d axes; they need one number of axes", fn,
                           d->ndim, f->ndim);
        if (!d->sharded && (d->ndim > f->ndim || (d->ndim == f->ndim && d->shape[0] != 1))) {
            char a[96];
            gx__shape_str(a, sizeof a, d->ndim, d->shape);
            return gx__err(GX_ERR_SHAPE,
                           "%s: replicated input %d of shape %s would broadcast across the split axis; it needs fewer "
                           "axes than the sharded inputs (%d) or a first axis of 1",
                           fn, i + 1, a, f->ndim);
        }
    }
    return GX_OK;
}

static gx_status dx_locals(int nin, gx_dist *const *in, gx_array **loc)
{
    GX__ARG(nin <= 16, "gx_dist: at most 16 inputs (%d)", nin);
    for (int i = 0; i < nin; i++)
        loc[i] = in[i]->local;
    return GX_OK;
}

gx_status gx_dist_map(const char *lambda, int nin, gx_dist *const *in, const gx_map_opts *opts, gx_dist **out)
{
    const char *fn = "gx_dist_map";
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    const gx_dist *f;
    gx_array *loc[16], *res = NULL;
    GX__CHECK(dx_check_inputs(fn, nin, in, &f));
    GX__CHECK(dx_locals(nin, in, loc));
    GX__CHECK(gx_map(in[0]->ctx, lambda, nin, loc, opts, &res));
    return dx_make(in[0]->comm, res, f != NULL, f ? f->counts : NULL, out);
}

/* ------------------------------------------------------------ reductions */

/* Operator spellings folded to the table's symbols ("sum" -> "+"). */
static const char *dx_opsym(const char *op)
{
    static const char *const pairs[][2] = {{"sum", "+"},     {"prod", "*"}, {"maximum", "max"},
                                           {"minimum", "min"}, {"all", "&&"}, {"any", "||"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (strcmp(op, pairs[i][0]) == 0)
            return pairs[i][1];
    return op;
}

static int dx_is_float(gx_dtype t)
{
    return t == GX_F16 || t == GX_BF16 || t == GX_F32 || t == GX_F64;
}

typedef struct dx_red {
    const char *lambda; /* NULL: a plain reduction */
    const char *op;
    int nin;
    gx_dist *const *in;
    const gx_reduce_opts *opts;
} dx_red;

/* The local partial as a 0-d array (of dtype `dt`, or the operator's when 0). */
static gx_status dx_partial(const dx_red *r, const char *op, gx_dtype dt, gx_array **out)
{
    gx_reduce_opts o;
    memset(&o, 0, sizeof o);
    if (r->opts)
        o = *r->opts;
    if (dt)
        o.dtype = dt;
    gx_array *loc[16], *p = NULL;
    GX__CHECK(dx_locals(r->nin, r->in, loc));
    gx_ctx *ctx = r->in[0]->ctx;
    gx_status s = r->lambda ? gx_mapreduce_to(ctx, r->lambda, op, r->nin, loc, &o, &p)
                            : gx_reduce_to(ctx, op, loc[0], &o, &p);
    if (s == GX_OK)
        s = gx_array_reshape(p, 0, NULL, out);
    gx_array_release(p);
    return s;
}

/* Elements of the broadcast of the inputs' global shapes (numpy rules). */
static int64_t dx_bcast_size(int nin, gx_dist *const *in)
{
    int nd = 0;
    for (int i = 0; i < nin; i++)
        nd = in[i]->ndim > nd ? in[i]->ndim : nd;
    int64_t n = 1;
    for (int k = 0; k < nd; k++) {
        int64_t m = 1;
        for (int i = 0; i < nin; i++) {
            int j = in[i]->ndim - nd + k;
            if (j >= 0 && in[i]->shape[j] != 1)
                m = in[i]->shape[j];
        }
        n *= m;
    }
    return n;
}

/* Gathers every rank's 0-d partial and folds them here in rank order with op. */
static gx_status dx_fold_gathered(const dx_red *r, const char *op, gx_array *part, gx_array **out)
{
    gx_comm *comm = r->in[0]->comm;
    gx_ctx *ctx = r->in[0]->ctx;
    int64_t n = r->in[0]->size;
    gx_array_desc pd = {0};
    GX__CHECK(gx_array_describe(part, &pd));
    gx_array *all = NULL, *res = NULL;
    gx_reduce_opts o;
    memset(&o, 0, sizeof o);
    if (r->opts) {
        o.init = r->opts->init;
        o.consts = r->opts->consts;
        o.nconsts = r->opts->nconsts;
    }
    o.dtype = pd.dtype;
    gx_status s = gx_array_empty(ctx, pd.dtype, 1, &n, &all);
    if (s == GX_OK)
        s = gx_allgather(comm, part, all);
    if (s == GX_OK)
        s = gx_reduce_to(ctx, op, all, &o, &res);
    if (s == GX_OK)
        s = gx_array_reshape(res, 0, NULL, out);
    gx_array_release(all);
    gx_array_release(res);
    return s;
}

static gx_status dx_mean(const dx_red *r, gx_array **out)
{
    int64_t n = dx_bcast_size(r->nin, r->in);
    if (n == 0)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "the mean of an empty array is undefined");
    gx_array *p = NULL;
    GX__CHECK(dx_partial(r, "+", GX_F64, &p));
    gx_dtype rdt = r->opts && r->opts->dtype ? r->opts->dtype : GX_F64;
    if (!(r->opts && r->opts->dtype) && !r->lambda && r->in[0]->dtype == GX_F32)
        rdt = GX_F32;
    gx_const c = GX_CONST("dx_n", GX_SCALAR_F64((double)n));
    gx_map_opts mo = {.dtype = rdt, .consts = &c, .nconsts = 1};
    gx_status s = gx_allreduce(r->in[0]->comm, "+", p, p);
    if (s == GX_OK)
        s = gx_map(r->in[0]->ctx, "s -> s / dx_n", 1, &p, &mo, out);
    gx_array_release(p);
    return s;
}

static gx_status dx_reduce_any(const char *fn, const dx_red *r, gx_array **out)
{
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    GX__ARG(r->op, "%s: op must not be NULL", fn);
    const gx_dist *f;
    GX__CHECK(dx_check_inputs(fn, r->nin, r->in, &f));
    if (r->opts && (r->opts->axes || r->opts->naxes))
        return gx__err(GX_ERR_UNSUPPORTED, "%s: opts->axes: reduce along axes with gx_reduce_to on gx_dist_local", fn);
    if (r->opts && r->opts->narrays && !r->lambda)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: opts->arrays is for a map (gx_dist_mapreduce)", fn);
    const char *op = dx_opsym(r->op);
    gx_array *p = NULL;
    if (!f) /* every input replicated: a local reduction */
        return dx_partial(r, op, 0, out);
    if (strcmp(op, "mean") == 0)
        return dx_mean(r, out);
    gx_dtype want = r->opts ? r->opts->dtype : GX_DTYPE_DEFAULT, pdt = want;
    /* Float sums: partials of f32 in f64 (halves in f32), rounded once at the end. */
    int fsum = strcmp(op, "+") == 0 && !want && !r->lambda;
    if (fsum && r->in[0]->dtype == GX_F32)
        pdt = GX_F64;
    if (fsum && (r->in[0]->dtype == GX_F16 || r->in[0]->dtype == GX_BF16))
        pdt = GX_F32;
    GX__CHECK(dx_partial(r, strcmp(op, "count") == 0 ? "count" : op, pdt, &p));
    gx_array_desc pd = {0};
    gx_status s = gx_array_describe(p, &pd);
    int lam = strstr(op, "->") != NULL;
    int fminmax = (strcmp(op, "max") == 0 || strcmp(op, "min") == 0) && dx_is_float(pd.dtype);
    gx_array *res = NULL;
    if (s == GX_OK && (lam || fminmax)) {
        s = dx_fold_gathered(r, op, p, &res);
    } else if (s == GX_OK) {
        const char *aop = strcmp(op, "count") == 0 ? "+" : op;
        s = gx_allreduce(r->in[0]->comm, aop, p, p);
        if (s == GX_ERR_DTYPE) {
            /* The transport lacks this operator for this dtype (NCCL: bitwise operators,
             * i16/u16): every rank is refused alike before anything moves, so all of
             * them fold the gathered partials instead (the H100 run caught it). */
            s = dx_fold_gathered(r, aop, p, &res);
        } else {
            res = p;
            p = NULL;
        }
    }
    if (s == GX_OK && pdt != want) {
        gx_array *c = NULL;
        s = gx_array_clone(res, r->in[0]->dtype, &c);
        gx_array_release(res);
        res = c;
    }
    gx_array_release(p);
    if (s != GX_OK) {
        gx_array_release(res);
        return gx__err_prefix(s, "%s", fn);
    }
    *out = res;
    return GX_OK;
}

/* opts->finish (gx/reduce.h) maps the global value: the partials fold without it and
 * the folded value is finished here, after the all-reduce (a finish on each rank's
 * partial would be wrong: sqrt(a) + sqrt(b) is not sqrt(a + b)). */
static gx_status dx_reduce_finished(const char *fn, const dx_red *r, gx_array **out)
{
    if (!r->opts || !r->opts->finish)
        return dx_reduce_any(fn, r, out);
    gx_reduce_opts o = *r->opts;
    o.finish = NULL;
    dx_red plain = *r;
    plain.opts = &o;
    GX__CHECK(dx_reduce_any(fn, &plain, out));
    gx_map_opts mo = {.consts = o.consts, .nconsts = o.nconsts};
    gx_status s = gx_map_into((*out)->ctx, r->opts->finish, 1, out, &mo, *out);
    if (s != GX_OK) {
        gx_array_release(*out);
        *out = NULL;
        return gx__err_prefix(s, "%s: opts->finish", fn);
    }
    return GX_OK;
}

gx_status gx_dist_reduce(const char *op, const gx_dist *x, const gx_reduce_opts *opts, gx_array **out)
{
    gx_dist *in[1] = {(gx_dist *)x};
    dx_red r = {NULL, op, 1, in, opts};
    return dx_reduce_finished("gx_dist_reduce", &r, out);
}

gx_status gx_dist_mapreduce(const char *lambda, const char *op, int nin, gx_dist *const *in,
                            const gx_reduce_opts *opts, gx_array **out)
{
    GX__ARG(lambda, "gx_dist_mapreduce: lambda must not be NULL");
    dx_red r = {lambda, op, nin, in, opts};
    return dx_reduce_finished("gx_dist_mapreduce", &r, out);
}

/* ------------------------------------------------------------ find */

gx_status gx_dist_find(const char *which, const gx_dist *x, gx_scalar *value, int64_t *index)
{
    const char *fn = "gx_dist_find";
    GX__CHECK(dx_check(x, fn));
    GX__ARG(which && (strcmp(which, "min") == 0 || strcmp(which, "max") == 0),
            "%s: which must be \"min\" or \"max\" (%s)", fn, which ? which : "NULL");
    int64_t rs = dx_rowsize(x), total = x->shape[0] * rs, *cnt = calloc((size_t)x->size, sizeof *cnt);
    if (!cnt)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: no host memory", fn);
    if (!x->sharded || total == 0) {
        free(cnt);
        if (total == 0 && x->sharded)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the array is empty", fn);
        gx_array *v = NULL, *i = NULL;
        gx_status s = gx_find_to(x->ctx, which, x->local, NULL, &v, &i);
        unsigned char vb[16];
        if (s == GX_OK && value)
            s = gx_array_to_host(v, vb, sizeof vb);
        if (s == GX_OK && value)
            *value = dx_scalar(x->dtype, vb);
        if (s == GX_OK && index)
            s = gx_array_to_host(i, index, 8);
        gx_array_release(v);
        gx_array_release(i);
        return s;
    }
    int m = 0, mine = x->counts[x->rank] * rs > 0;
    for (int r = 0; r < x->size; r++)
        m += (cnt[r] = x->counts[r] * rs > 0);
    gx_array *v = NULL, *i = NULL, *av = NULL, *ai = NULL, *bv = NULL, *bi = NULL;
    gx_status s = GX_OK;
    int64_t mm = m, one = 1;
    if (mine)
        s = gx_find_to(x->ctx, which, x->local, NULL, &v, &i);
    else {
        s = gx_array_empty(x->ctx, x->dtype, 1, &one, &v);
        if (s == GX_OK)
            s = gx_array_empty(x->ctx, GX_I64, 1, &one, &i);
    }
    /* An empty piece sends a view of nothing. */
    gx_array *sv = NULL, *si = NULL;
    gx_array *fv = NULL, *fi = NULL;
    if (s == GX_OK)
        s = gx_array_reshape(v, 1, &one, &fv);
    if (s == GX_OK)
        s = gx_array_reshape(i, 1, &one, &fi);
    if (s == GX_OK)
        s = dx_rows_view(fv, 0, mine, &sv);
    if (s == GX_OK)
        s = dx_rows_view(fi, 0, mine, &si);
    if (s == GX_OK)
        s = gx_array_empty(x->ctx, x->dtype, 1, &mm, &av);
    if (s == GX_OK)
        s = gx_array_empty(x->ctx, GX_I64, 1, &mm, &ai);
    if (s == GX_OK)
        s = gx_allgatherv(x->comm, sv, av, cnt);
    if (s == GX_OK)
        s = gx_allgatherv(x->comm, si, ai, cnt);
    if (s == GX_OK)
        s = gx_find_to(x->ctx, which, av, NULL, &bv, &bi);
    int64_t p = 0, *idx = calloc((size_t)m, sizeof *idx);
    unsigned char vb[16];
    if (s == GX_OK && !idx)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "%s: no host memory", fn);
    if (s == GX_OK)
        s = gx_array_to_host(bi, &p, 8);
    if (s == GX_OK)
        s = gx_array_to_host(ai, idx, (size_t)m * 8);
    if (s == GX_OK)
        s = gx_array_to_host(bv, vb, sizeof vb);
    if (s == GX_OK) {
        /* Rank of the p-th non-empty piece: its local index plus its offset. */
        int64_t off = 0;
        for (int r = 0, k = 0; r < x->size; off += x->counts[r], r++) {
            if (!cnt[r])
                continue;
            if (k++ == p)
                break;
        }
        if (index)
            *index = idx[p] + off * rs;
        if (value)
            *value = dx_scalar(x->dtype, vb);
    }
    free(idx);
    free(cnt);
    gx_array *rel[] = {v, i, av, ai, bv, bi, sv, si, fv, fi};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        gx_array_release(rel[k]);
    return s == GX_OK ? s : gx__err_prefix(s, "%s", fn);
}

/* ------------------------------------------------------------ scan */

/* The carry rank `rank` starts from: opts->init folded (in rank order, by gx_scan)
 * with the totals of the non-empty pieces before it.  *has = 0 when there is none. */
static gx_status dx_scan_carry(const char *op, const gx_dist *x, const gx_scan_opts *opts, gx_scalar *carry, int *has)
{
    gx_reduce_opts ro;
    memset(&ro, 0, sizeof ro);
    int lam = strstr(op, "->") != NULL;
    ro.init = lam ? opts->init : NULL;
    ro.dtype = opts->dtype;
    ro.consts = opts->consts;
    ro.nconsts = opts->nconsts;
    int64_t *cnt = calloc((size_t)x->size, sizeof *cnt), m = 0, before = 0, one = 1;
    if (!cnt)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_dist_scan: no host memory");
    for (int r = 0; r < x->size; r++) {
        cnt[r] = x->counts[r] > 0;
        m += cnt[r];
        before += r < x->rank ? cnt[r] : 0;
    }
    gx_array *t = NULL, *t1 = NULL, *sv = NULL, *all = NULL, *pre = NULL, *sc = NULL, *last = NULL;
    gx_status s = gx_reduce_to(x->ctx, op, x->local, &ro, &t);
    gx_array_desc td = {0};
    if (s == GX_OK)
        s = gx_array_reshape(t, 1, &one, &t1);
    if (s == GX_OK)
        s = dx_rows_view(t1, 0, cnt[x->rank], &sv);
    if (s == GX_OK)
        s = gx_array_describe(t1, &td);
    if (s == GX_OK)
        s = gx_array_empty(x->ctx, td.dtype, 1, &m, &all);
    if (s == GX_OK)
        s = gx_allgatherv(x->comm, sv, all, cnt);
    *has = before > 0 || opts->init;
    if (s == GX_OK && before == 0 && opts->init)
        *carry = *opts->init;
    if (s == GX_OK && before > 0) {
        gx_scan_opts so;
        memset(&so, 0, sizeof so);
        so.init = opts->init;
        so.dtype = td.dtype;
        so.consts = opts->consts;
        so.nconsts = opts->nconsts;
        s = dx_rows_view(all, 0, before, &pre);
        if (s == GX_OK)
            s = gx_scan(x->ctx, op, pre, &so, &sc);
        if (s == GX_OK)
            s = dx_rows_view(sc, before - 1, 1, &last);
        unsigned char b[16];
        if (s == GX_OK)
            s = gx_array_to_host(last, b, sizeof b);
        if (s == GX_OK)
            *carry = dx_scalar(td.dtype, b);
    }
    gx_array *rel[] = {t, t1, sv, all, pre, sc, last};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        gx_array_release(rel[k]);
    free(cnt);
    return s;
}

gx_status gx_dist_scan(const char *op, const gx_dist *x, const gx_scan_opts *opts, gx_dist **out)
{
    const char *fn = "gx_dist_scan";
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    GX__CHECK(dx_check(x, fn));
    GX__ARG(op, "%s: op must not be NULL", fn);
    gx_scan_opts o;
    memset(&o, 0, sizeof o);
    if (opts)
        o = *opts;
    int axis = o.axis < 0 ? o.axis + x->ndim : o.axis;
    gx_array *res = NULL;
    if (!x->sharded || axis != 0) {
        GX__CHECK(gx_scan(x->ctx, op, x->local, opts, &res));
        return dx_make(x->comm, res, x->sharded, x->counts, out);
    }
    if (x->ndim != 1)
        return gx__err(GX_ERR_UNSUPPORTED, "%s: a scan along the split axis needs a 1-d array (this one has %d axes)",
                       fn, x->ndim);
    op = dx_opsym(op);
    if (strstr(op, "->") && !o.init)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: a lambda operator needs opts->init, its neutral element", fn);
    gx_scalar carry = {GX_DTYPE_DEFAULT, {.i = 0}};
    int has = 0;
    gx_status s = dx_scan_carry(op, x, &o, &carry, &has);
    o.init = has ? &carry : NULL;
    if (s == GX_OK)
        s = gx_scan(x->ctx, op, x->local, &o, &res);
    if (s != GX_OK)
        return gx__err_prefix(s, "%s", fn);
    return dx_make(x->comm, res, 1, x->counts, out);
}

/* ------------------------------------------------------------ filter */

gx_status gx_dist_filter(const char *pred, const gx_dist *x, const gx_filter_opts *opts, gx_dist **out)
{
    const char *fn = "gx_dist_filter";
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    GX__CHECK(dx_check(x, fn));
    gx_array *res = NULL, *in = x->local;
    GX__CHECK(gx_filter(x->ctx, pred, 1, &in, opts, &res));
    if (!x->sharded)
        return dx_make(x->comm, res, 0, NULL, out);
    return dx_from_piece(x->comm, res, out);
}

/* ------------------------------------------------------------ sort */

/* Keys mapped so that the descending order is ascending (NaNs still last):
 * -x for floats, ~x for integers, !x for bool. */
static gx_status dx_flip_keys(gx_ctx *ctx, gx_array *a, gx_array **out)
{
    gx_array_desc ad = {0};
    GX__CHECK(gx_array_describe(a, &ad));
    const char *f = dx_is_float(ad.dtype) ? "x -> -x" : ad.dtype == GX_BOOL ? "x -> !x" : "x -> ~x";
    gx_map_opts mo = {.dtype = ad.dtype};
    return gx_map(ctx, f, 1, &a, &mo, out);
}

/* Samples per rank and rank count: enough that the buckets come out within a few
 * percent of even for data in any order (the samples are drawn from the unsorted
 * piece at regular positions). */
#define DX_OVERSAMPLE 32

/* Regular samples of this rank's piece (up to DX_OVERSAMPLE * size of them), gathered
 * and sorted on every rank; *spl gets size - 1 splitters at regular positions of them
 * (none when every piece is empty). */
static gx_status dx_splitters(const gx_dist *x, gx_array *piece, const gx_sort_opts *so, gx_array **spl,
                              int64_t *nspl)
{
    int p = x->size;
    int64_t *cnt = calloc((size_t)p, sizeof *cnt), S = 0, want = (int64_t)DX_OVERSAMPLE * p;
    if (!cnt)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_dist_sort: no host memory");
    for (int r = 0; r < p; r++) {
        cnt[r] = x->counts[r] < want ? x->counts[r] : want;
        S += cnt[r];
    }
    int64_t n = x->counts[x->rank], k = cnt[x->rank], step = k ? n / k : 1;
    gx_slice sl = {step / 2, k ? step / 2 + (k - 1) * step + 1 : 0, step ? step : 1};
    gx_array *smp = NULL, *all = NULL, *srt = NULL;
    gx_status s = gx_array_view(piece, &sl, &smp);
    if (s == GX_OK)
        s = gx_array_empty(x->ctx, x->dtype, 1, &S, &all);
    if (s == GX_OK)
        s = gx_allgatherv(x->comm, smp, all, cnt);
    if (s == GX_OK)
        s = gx_sort(x->ctx, all, so, &srt);
    *nspl = S ? p - 1 : 0;
    size_t es = gx_dtype_size(x->dtype);
    unsigned char *hs = malloc((size_t)S * es + 1), *hp = malloc((size_t)p * es + 1);
    if (s == GX_OK && (!hs || !hp))
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "gx_dist_sort: no host memory");
    if (s == GX_OK)
        s = gx_array_to_host(srt, hs, (size_t)S * es);
    for (int64_t j = 1; s == GX_OK && j <= *nspl; j++)
        memcpy(hp + (j - 1) * es, hs + (size_t)(j * S / p) * es, es);
    if (s == GX_OK)
        s = gx_array_from_host(x->ctx, x->dtype, 1, nspl, hp, spl);
    free(hs);
    free(hp);
    free(cnt);
    gx_array_release(smp);
    gx_array_release(all);
    gx_array_release(srt);
    return s;
}

/* The piece grouped by destination rank: bucket b = the number of splitters at or
 * before the key in the sort order (equal keys share a bucket), found by
 * gx_searchsorted (on flipped keys when descending, so the haystack ascends), then a
 * stable sort by the small bucket number moves the values; send[b] = its size. */
static gx_status dx_buckets(const gx_dist *x, gx_array *piece, gx_array *spl, int64_t nspl, int desc,
                            gx_array **grouped, int64_t *send)
{
    int p = x->size;
    gx_array *hay = spl, *nee = piece, *pos = NULL, *key = NULL, *bc = NULL;
    gx_searchsorted_opts right = {.right = 1};
    gx_bincount_opts bo = {.minlength = p};
    gx_status s = GX_OK;
    if (desc && nspl) {
        s = dx_flip_keys(x->ctx, spl, &hay);
        if (s == GX_OK)
            s = dx_flip_keys(x->ctx, piece, &nee);
    }
    if (s == GX_OK)
        s = gx_searchsorted(x->ctx, hay, nee, &right, &pos);
    if (s == GX_OK)
        s = gx_array_clone(pos, p <= 256 ? GX_U8 : p <= 65536 ? GX_U16 : GX_I32, &key);
    if (s == GX_OK)
        s = gx_sort_by_key(x->ctx, key, piece, NULL, NULL, grouped);
    if (s == GX_OK)
        s = gx_bincount(x->ctx, key, &bo, &bc);
    if (s == GX_OK)
        s = gx_array_to_host(bc, send, (size_t)p * sizeof *send);
    if (hay != spl)
        gx_array_release(hay);
    if (nee != piece)
        gx_array_release(nee);
    gx_array_release(pos);
    gx_array_release(key);
    gx_array_release(bc);
    return s;
}

/* Sample sort of a 1-d sharded x (piece: this rank's keys, 1-d): splitters from
 * samples, the piece grouped by destination, the groups exchanged, then one local
 * sort of what arrived. */
static gx_status dx_sample_sort(const gx_dist *x, gx_array *piece, const gx_sort_opts *so, gx_dist **out)
{
    int p = x->size;
    gx_array *grouped = NULL, *spl = NULL, *sc = NULL, *rc = NULL, *recv = NULL, *res = NULL;
    int64_t nspl = 0, pp = p, nrecv = 0;
    if (p == 1) {
        GX__CHECK(gx_sort(x->ctx, piece, so, &res));
        return dx_make(x->comm, res, 1, x->counts, out);
    }
    int64_t *send = calloc((size_t)p, sizeof *send), *rcv = calloc((size_t)p, sizeof *rcv);
    gx_status s = send && rcv ? GX_OK : gx__err(GX_ERR_OUT_OF_MEMORY, "gx_dist_sort: no host memory");
    if (s == GX_OK)
        s = dx_splitters(x, piece, so, &spl, &nspl);
    if (s == GX_OK)
        s = dx_buckets(x, piece, spl, nspl, so->descending, &grouped, send);
    if (s == GX_OK)
        s = gx_array_from_host(x->ctx, GX_I64, 1, &pp, send, &sc);
    if (s == GX_OK)
        s = gx_array_empty(x->ctx, GX_I64, 1, &pp, &rc);
    if (s == GX_OK)
        s = gx_alltoall(x->comm, sc, rc);
    if (s == GX_OK)
        s = gx_array_to_host(rc, rcv, (size_t)p * 8);
    for (int r = 0; s == GX_OK && r < p; r++)
        nrecv += rcv[r];
    if (s == GX_OK)
        s = gx_array_empty(x->ctx, x->dtype, 1, &nrecv, &recv);
    if (s == GX_OK)
        s = gx_alltoallv(x->comm, grouped, send, recv, rcv);
    if (s == GX_OK)
        s = gx_sort(x->ctx, recv, so, &res);
    gx_array *rel[] = {grouped, spl, sc, rc, recv};
    for (size_t k = 0; k < sizeof rel / sizeof rel[0]; k++)
        gx_array_release(rel[k]);
    free(send);
    free(rcv);
    if (s != GX_OK) {
        gx_array_release(res);
        return s;
    }
    return dx_from_piece(x->comm, res, out);
}

gx_status gx_dist_sort(const gx_dist *x, const gx_sort_opts *opts, gx_dist **out)
{
    const char *fn = "gx_dist_sort";
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    GX__CHECK(dx_check(x, fn));
    gx_sort_opts so;
    memset(&so, 0, sizeof so);
    if (opts)
        so = *opts;
    gx_array *res = NULL;
    if (!x->sharded || (x->ndim > 1 && !so.flatten)) {
        GX__CHECK(gx_sort(x->ctx, x->local, opts, &res));
        return dx_make(x->comm, res, x->sharded, x->counts, out);
    }
    if (x->dtype == GX_C64 || x->dtype == GX_C128)
        return gx__err(GX_ERR_DTYPE, "%s: complex keys (%s) are not sorted across ranks; gather them or sort rows", fn,
                       gx_dtype_name(x->dtype));
    GX__CHECK(gx__opts_reserved(so.reserved, sizeof so.reserved / sizeof so.reserved[0], fn));
    gx_array *flat = NULL;
    int64_t n = 0;
    GX__CHECK(gx_array_size(x->local, &n));
    /* A 1-d piece is used as it is (any view); an N-d one flattened through a copy. */
    gx_status s = x->ndim == 1 ? dx_rows_view(x->local, 0, n, &flat) : gx_array_clone(x->local, GX_DTYPE_DEFAULT, &flat);
    gx_array *f1 = NULL;
    if (s == GX_OK && x->ndim == 1)
        f1 = flat, flat = NULL;
    else if (s == GX_OK)
        s = gx_array_reshape(flat, 1, &n, &f1);
    gx_array_release(flat);
    gx_dist *tmp = NULL;
    /* The flattened layout: rows become elements. */
    const gx_dist *src = x;
    int64_t *cnt = NULL;
    if (s == GX_OK && x->ndim > 1) {
        cnt = calloc((size_t)x->size, sizeof *cnt);
        for (int r = 0; cnt && r < x->size; r++)
            cnt[r] = x->counts[r] * dx_rowsize(x);
        gx_array *dup = NULL;
        s = cnt ? gx_array_reshape(f1, 1, &n, &dup) : gx__err(GX_ERR_OUT_OF_MEMORY, "%s: no host memory", fn);
        if (s == GX_OK)
            s = dx_make(x->comm, dup, 1, cnt, &tmp);
        src = tmp;
    }
    so.flatten = 0;
    if (s == GX_OK)
        s = dx_sample_sort(src, f1, &so, out);
    gx_array_release(f1);
    gx_dist_release(tmp);
    free(cnt);
    return s == GX_OK ? s : gx__err_prefix(s, "%s", fn);
}

/* ------------------------------------------------------------ matmul */

gx_status gx_dist_matmul(const gx_dist *a, const gx_dist *b, const gx_matmul_opts *opts, gx_dist **out)
{
    const char *fn = "gx_dist_matmul";
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    GX__CHECK(dx_check(a, fn));
    GX__CHECK(dx_check(b, fn));
    if (a->comm != b->comm)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: A and B live on different communicators", fn);
    if (!a->sharded || b->sharded)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: A must be row-sharded (it is %s) and B replicated (it is %s)", fn,
                       a->sharded ? "sharded" : "replicated", b->sharded ? "sharded" : "replicated");
    if (opts && opts->op_a != GX_OP_N)
        return gx__err(GX_ERR_UNSUPPORTED, "%s: opts->op_a must be GX_OP_N: a transposed A is not split by rows", fn);
    if (a->ndim != 2)
        return gx__err(GX_ERR_SHAPE, "%s: A must be 2-d (it has %d axes)", fn, a->ndim);
    gx_array *c = NULL;
    GX__CHECK(gx_matmul(a->local, b->local, opts, &c));
    return dx_make(a->comm, c, 1, a->counts, out);
}
