/* sort.c -- gx/sort.h: argument checks, views, outputs and dispatch of sorting,
 * top-k, unique, searchsorted, histograms and bincount.
 *
 * One request struct per kind of work (sort_priv.h) goes to the CPU paths
 * (sort_cpu.c) on GX__CAP_HOST contexts or to the CUDA kernels (sort_cuda.c) on
 * CUDA ones, always with dense buffers that never overlap: views are read through
 * dense copies, and an output that is a view or shares storage with an input is
 * written through a dense temporary and copied back (in place included).  unique is
 * composed of gx ops (sort, map, findall, take, scan, put; for integers of a small
 * range: min/max, the integer histogram, findall, scatter-min) and so runs on both;
 * searchsorted is one generated kernel per target (CUDA: a binary search per needle;
 * C: branchless searches 8 needles at a time).  The pipeline terminals gx_pipe_sort /
 * gx_pipe_histogram collect the stream once and work on that array. */
#include "core/gx_internal.h"
#include "jit/lambda.h"
#include "ops/sort_cpu.h"
#include "ops/sort_priv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ checks */

static bool st_key_dtype(gx_dtype t)
{
    return t == GX_BOOL || gx__dtype_is_int(t) || t == GX_F32 || t == GX_F64;
}

static gx_status st_check_in(gx_ctx *ctx, const char *fn, const char *what, const gx_array *a)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(a, "%s: %s is NULL", fn, what);
    GX__CHECK(gx__array_check(a, fn));
    if (a->ctx != ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %s belongs to another context", fn, what);
    return GX_OK;
}

static gx_status st_check_keys(gx_ctx *ctx, const char *fn, const char *what, const gx_array *a)
{
    GX__CHECK(st_check_in(ctx, fn, what, a));
    if (!st_key_dtype(a->dtype))
        return gx__err(GX_ERR_DTYPE,
                       "%s: %s has dtype %s; keys must be bool, an integer dtype, f32 or f64 (complex keys: "
                       "gx_sort, gx_argsort and gx_sort_by_key only)",
                       fn, what, gx_dtype_name(a->dtype));
    return GX_OK;
}

static gx_status st_shape_err(const char *fn, const char *what, const gx_array *a, int nd, const int64_t *want)
{
    char h[160], w[160];
    gx__shape_str(h, sizeof h, a->ndim, a->shape);
    gx__shape_str(w, sizeof w, nd, want);
    return gx__err(GX_ERR_SHAPE, "%s: %s has shape %s; it must be %s", fn, what, h, w);
}

/* Checks an output array of the call: live, ctx's, writable, `dt` exactly, shape. */
static gx_status st_check_out(gx_ctx *ctx, const char *fn, const char *what, gx_array *out, gx_dtype dt, int nd,
                              const int64_t *shape, bool any_shape_of_size)
{
    GX__CHECK(st_check_in(ctx, fn, what, out));
    GX__CHECK(gx__array_writable(out, fn));
    if (out->dtype != dt)
        return gx__err(GX_ERR_DTYPE, "%s: %s has dtype %s; it must be %s (no conversion)", fn, what,
                       gx_dtype_name(out->dtype), gx_dtype_name(dt));
    int64_t size = 1;
    for (int d = 0; d < nd; d++)
        size *= shape[d];
    bool ok = any_shape_of_size ? out->size == size : out->ndim == nd;
    for (int d = 0; ok && !any_shape_of_size && d < nd; d++)
        ok = out->shape[d] == shape[d];
    return ok ? GX_OK : st_shape_err(fn, what, out, nd, shape);
}

/* ------------------------------------------------------------ dense buffers */

/* A dense copy of a view (*made = the copy to release), or a itself. */
static gx_status st_dense(gx_array *a, gx_array **use, gx_array **made)
{
    *use = a, *made = NULL;
    if (!a || gx__array_contiguous(a))
        return GX_OK;
    GX__CHECK(gx_array_clone(a, GX_DTYPE_DEFAULT, made));
    *use = *made;
    return GX_OK;
}

/* Where to write an output: out itself when dense and sharing no storage with the
 * inputs, else a dense temporary (*tmp, copied into out by st_finish). */
static gx_status st_target(gx_array *out, const gx_array *in1, const gx_array *in2, gx_array **use, gx_array **tmp)
{
    *use = out, *tmp = NULL;
    if (!out)
        return GX_OK;
    bool shared = (in1 && in1->st == out->st) || (in2 && in2->st == out->st);
    if (gx__array_contiguous(out) && !shared)
        return GX_OK;
    GX__CHECK(gx__array_new(out->ctx, out->dtype, out->ndim, out->shape, tmp));
    *use = *tmp;
    return GX_OK;
}

static gx_status st_finish(gx_status s, gx_array *tmp, gx_array *out)
{
    if (s == GX_OK && tmp)
        s = gx_array_copy_into(tmp, out);
    gx_array_release(tmp);
    return s;
}

static void *st_ptr(const gx_array *a) { return a ? gx__array_ptr(a) : NULL; }

static void st_rows(const gx_array *x, bool flatten, int64_t *nrows, int64_t *rowlen)
{
    if (flatten || x->ndim == 0) {
        *nrows = 1, *rowlen = x->size;
        return;
    }
    *rowlen = x->shape[x->ndim - 1];
    *nrows = 1;
    for (int d = 0; d < x->ndim - 1; d++)
        *nrows *= x->shape[d];
}

/* ------------------------------------------------------------ dispatch */

static gx_status st_sort_dispatch(gx_ctx *ctx, const gx__sort_req *r)
{
    if (r->n == 0)
        return GX_OK;
    if (gx__ctx_supports(ctx, GX__CAP_HOST))
        return sc_sort(ctx, r);
    if (gx__target_is_cuda(ctx))
        return gx__sort_cuda(ctx, r);
    return gx__err(GX_ERR_UNSUPPORTED, "sort: the %s backend has no sort", ctx->be.iface->name);
}

static gx_status st_topk_dispatch(gx_ctx *ctx, const gx__topk_req *r)
{
    if (r->nrows == 0 || r->k == 0)
        return GX_OK;
    if (gx__ctx_supports(ctx, GX__CAP_HOST))
        return sc_topk(ctx, r);
    if (gx__target_is_cuda(ctx))
        return gx__topk_cuda(ctx, r);
    return gx__err(GX_ERR_UNSUPPORTED, "gx_topk: the %s backend has no top-k", ctx->be.iface->name);
}

static gx_status st_hist_dispatch(gx_ctx *ctx, const gx__hist_req *r)
{
    if (gx__ctx_supports(ctx, GX__CAP_HOST))
        return sc_hist(ctx, r);
    if (gx__target_is_cuda(ctx))
        return gx__hist_cuda(ctx, r);
    return gx__err(GX_ERR_UNSUPPORTED, "histogram: the %s backend has no histogram", ctx->be.iface->name);
}

/* ------------------------------------------------------------ sort, argsort, by key */

/* Sorts x (and moves v with it), writing keys into kout and values (or, for an
 * argsort, positions) into vout; kout/vout have the result shape, any layout. */
static gx_status st_sort_run(gx_ctx *ctx, gx_array *x, gx_array *v, bool arg, const gx_sort_opts *o, gx_array *kout,
                             gx_array *vout)
{
    gx_array *xd, *xm, *vd = NULL, *vm = NULL, *kw = NULL, *kt = NULL, *vw = NULL, *vt = NULL;
    GX__CHECK(st_dense(x, &xd, &xm));
    gx_status s = st_dense(v, &vd, &vm);
    if (s == GX_OK)
        s = st_target(kout, x, v, &kw, &kt);
    else
        kt = NULL;
    if (s == GX_OK)
        s = st_target(vout, x, v, &vw, &vt);
    gx__sort_req r;
    memset(&r, 0, sizeof r);
    r.kdtype = x->dtype, r.keys_in = st_ptr(xd), r.keys_out = st_ptr(kw);
    r.vbytes = v ? gx_dtype_size(v->dtype) : arg ? 8 : 0;
    r.vals_in = st_ptr(vd), r.vals_out = st_ptr(vw);
    r.n = x->size, r.descending = o->descending != 0;
    st_rows(x, o->flatten != 0, &r.nrows, &r.rowlen);
    if (s == GX_OK)
        s = st_sort_dispatch(ctx, &r);
    s = st_finish(s, kt, kout);
    s = st_finish(s, vt, vout);
    gx_array_release(xm);
    gx_array_release(vm);
    return s;
}

/* The result shape of a sort of x: x's, or (size,) when flattened. */
static int st_out_shape(const gx_array *x, const gx_sort_opts *o, int64_t *shape)
{
    if (o->flatten) {
        shape[0] = x->size;
        return 1;
    }
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    return x->ndim;
}

typedef enum { ST_SORT, ST_ARG } st_kind;

/* ---- complex keys: NumPy's order, (isnan(re), isnan(im), re, im) lexicographic
 * (R+Rj < R+nanj < nan+Rj < nan+nanj, each group by its non-NaN parts), as three
 * stable passes from the least significant key: im, then re, then the NaN group.
 * Each pass sorts the complex values (and the positions, for an argsort) by a real
 * key made by a map; composed of public ops, so it runs on every backend. */

static const char *const st_cx_keys[3] = {"z -> im(z)", "z -> re(z)",
                                          "z -> (isnan(re(z)) ? 2 : 0) + (isnan(im(z)) ? 1 : 0)"};

/* One pass: *xs and *ps (NULL when no positions are carried) reordered by key `pass`
 * of *xs, stable; the old arrays released. */
static gx_status st_cx_pass(gx_ctx *ctx, int pass, const gx_sort_opts *o, gx_array **xs, gx_array **ps)
{
    gx_map_opts mo = {.dtype = pass == 2 ? GX_I32 : GX_DTYPE_DEFAULT};
    gx_sort_opts so = *o;
    so.descending = pass < 2 && o->descending; /* the NaN groups stay last */
    gx_array *key = NULL, *nx = NULL, *np_ = NULL;
    gx_status s = gx_map(ctx, st_cx_keys[pass], 1, xs, &mo, &key);
    if (s == GX_OK && ps && *ps)
        s = gx_sort_by_key(ctx, key, *ps, &so, NULL, &np_);
    else if (s == GX_OK && ps)
        s = gx_argsort(ctx, key, &so, &np_);
    if (s == GX_OK)
        s = gx_sort_by_key(ctx, key, *xs, &so, NULL, &nx);
    gx_array_release(key);
    if (s != GX_OK) {
        gx_array_release(nx);
        gx_array_release(np_);
        return s;
    }
    gx_array_release(*xs);
    *xs = nx;
    if (ps) {
        gx_array_release(*ps);
        *ps = np_;
    }
    return GX_OK;
}

/* The sorted values (*xs) of complex x and, when ps is not NULL, *ps carried along:
 * *ps NULL on entry gives the argsort, else it is a values array (owned: released
 * and replaced by the values in the keys' order). */
static gx_status st_cx_sort(gx_ctx *ctx, gx_array *x, const gx_sort_opts *o, gx_array **xs, gx_array **ps)
{
    gx_sort_opts first = *o;
    gx_array *cur = NULL;
    gx_status s = gx_array_clone(x, GX_DTYPE_DEFAULT, &cur); /* released by the first pass */
    for (int pass = 0; s == GX_OK && pass < 3; pass++) {
        s = st_cx_pass(ctx, pass, &first, &cur, ps);
        first.flatten = o->flatten; /* after a flattened pass the arrays are 1-d already */
    }
    if (s != GX_OK) {
        gx_array_release(cur);
        if (ps) {
            gx_array_release(*ps);
            *ps = NULL;
        }
        cur = NULL;
    }
    *xs = cur;
    return s;
}

/* gx_sort / gx_argsort (and _into) of complex x. */
static gx_status st_cx_api(gx_ctx *ctx, const char *fn, st_kind kind, gx_array *x, const gx_sort_opts *o,
                           gx_array **made, gx_array *into)
{
    int64_t shape[GX_MAX_DIMS];
    int nd = o->flatten ? 1 : x->ndim;
    if (o->flatten)
        shape[0] = x->size;
    else
        memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    if (into)
        GX__CHECK(st_check_out(ctx, fn, "out", into, kind == ST_ARG ? GX_I64 : x->dtype, nd, shape,
                               o->flatten != 0));
    gx_array *xs = NULL, *ps = NULL;
    GX__CHECK(st_cx_sort(ctx, x, o, &xs, kind == ST_ARG ? &ps : NULL));
    gx_array *res = kind == ST_ARG ? ps : xs, *other = kind == ST_ARG ? xs : ps;
    gx_array_release(other);
    if (!into) {
        *made = res;
        return GX_OK;
    }
    gx_status s = gx_array_copy_into(res, into);
    gx_array_release(res);
    return s;
}

/* gx_sort, gx_argsort and their _into forms. */
static gx_status st_sort_api(gx_ctx *ctx, const char *fn, st_kind kind, gx_array *x, const gx_sort_opts *opts,
                             gx_array **made, gx_array *into)
{
    GX__OPTS_CHECK(opts, fn);
    gx_sort_opts o = opts ? *opts : (gx_sort_opts){0};
    GX__CHECK(st_check_in(ctx, fn, "x", x));
    if (gx__dtype_is_complex(x->dtype))
        return st_cx_api(ctx, fn, kind, x, &o, made, into);
    GX__CHECK(st_check_keys(ctx, fn, "x", x));
    int64_t shape[GX_MAX_DIMS];
    int nd = st_out_shape(x, &o, shape);
    gx_dtype dt = kind == ST_ARG ? GX_I64 : x->dtype;
    if (into)
        GX__CHECK(st_check_out(ctx, fn, "out", into, dt, nd, shape, o.flatten != 0));
    gx__lock(ctx);
    gx__range_push(fn);
    gx_status s = into ? GX_OK : gx__array_new(ctx, dt, nd, shape, made);
    gx_array *out = into ? into : *made;
    if (s == GX_OK)
        s = st_sort_run(ctx, x, NULL, kind == ST_ARG, &o, kind == ST_SORT ? out : NULL, kind == ST_ARG ? out : NULL);
    if (s != GX_OK && made && *made) {
        gx_array_release(*made);
        *made = NULL;
    }
    gx__range_pop();
    gx__unlock(ctx);
    return s;
}

gx_status gx_sort(gx_ctx *ctx, gx_array *x, const gx_sort_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_sort: out is NULL (it receives the new array)");
    *out = NULL;
    return st_sort_api(ctx, "gx_sort", ST_SORT, x, opts, out, NULL);
}

gx_status gx_sort_into(gx_ctx *ctx, gx_array *x, const gx_sort_opts *opts, gx_array *out)
{
    GX__ARG(out, "gx_sort_into: out is NULL (gx_sort makes a new array; pass x itself to sort in place)");
    return st_sort_api(ctx, "gx_sort_into", ST_SORT, x, opts, NULL, out);
}

gx_status gx_argsort(gx_ctx *ctx, gx_array *x, const gx_sort_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_argsort: out is NULL (it receives the new array)");
    *out = NULL;
    return st_sort_api(ctx, "gx_argsort", ST_ARG, x, opts, out, NULL);
}

gx_status gx_argsort_into(gx_ctx *ctx, gx_array *x, const gx_sort_opts *opts, gx_array *out)
{
    GX__ARG(out, "gx_argsort_into: out is NULL (gx_argsort makes a new array)");
    return st_sort_api(ctx, "gx_argsort_into", ST_ARG, x, opts, NULL, out);
}

static gx_status st_by_key_checks(gx_ctx *ctx, gx_array *keys, gx_array *values, gx_array **values_out)
{
    const char *fn = "gx_sort_by_key";
    GX__ARG(values_out, "%s: values_out is NULL (it receives the sorted values)", fn);
    if (keys && gx__dtype_is_complex(keys->dtype))
        GX__CHECK(st_check_in(ctx, fn, "keys", keys));
    else
        GX__CHECK(st_check_keys(ctx, fn, "keys", keys));
    GX__CHECK(st_check_in(ctx, fn, "values", values));
    if (!gx__dtype_supported(values->dtype))
        return gx__err(GX_ERR_DTYPE, "%s: values have dtype %s, which arrays do not hold yet", fn,
                       gx_dtype_name(values->dtype));
    if (!gx__same_shape(keys, values))
        return st_shape_err(fn, "values", values, keys->ndim, keys->shape);
    return GX_OK;
}

static gx_status st_by_key_checks(gx_ctx *ctx, gx_array *keys, gx_array *values, gx_array **values_out);

/* gx_sort_by_key with complex keys: the values ride along the three passes. */
static gx_status st_cx_by_key(gx_ctx *ctx, gx_array *keys, gx_array *values, const gx_sort_opts *o,
                              gx_array **keys_out, gx_array **values_out)
{
    GX__CHECK(st_by_key_checks(ctx, keys, values, values_out));
    gx_array *xs = NULL, *vs = NULL;
    GX__CHECK(gx_array_clone(values, GX_DTYPE_DEFAULT, &vs));
    GX__CHECK(st_cx_sort(ctx, keys, o, &xs, &vs));
    if (keys_out)
        *keys_out = xs;
    else
        gx_array_release(xs);
    *values_out = vs;
    return GX_OK;
}

gx_status gx_sort_by_key(gx_ctx *ctx, gx_array *keys, gx_array *values, const gx_sort_opts *opts,
                         gx_array **keys_out, gx_array **values_out)
{
    if (keys_out)
        *keys_out = NULL;
    if (values_out)
        *values_out = NULL;
    GX__OPTS_CHECK(opts, "gx_sort_by_key");
    gx_sort_opts o = opts ? *opts : (gx_sort_opts){0};
    if (keys && gx__dtype_is_complex(keys->dtype) && gx__array_check(keys, "gx_sort_by_key") == GX_OK)
        return st_cx_by_key(ctx, keys, values, &o, keys_out, values_out);
    GX__CHECK(st_by_key_checks(ctx, keys, values, values_out));
    int64_t shape[GX_MAX_DIMS];
    int nd = st_out_shape(keys, &o, shape);
    gx__lock(ctx);
    gx_array *k = NULL, *v = NULL;
    gx_status s = keys_out ? gx__array_new(ctx, keys->dtype, nd, shape, &k) : GX_OK;
    if (s == GX_OK)
        s = gx__array_new(ctx, values->dtype, nd, shape, &v);
    if (s == GX_OK)
        s = st_sort_run(ctx, keys, values, false, &o, k, v);
    if (s != GX_OK) {
        gx_array_release(k);
        gx_array_release(v);
        k = v = NULL;
    }
    if (keys_out)
        *keys_out = k;
    *values_out = v;
    gx__unlock(ctx);
    return s;
}

/* ------------------------------------------------------------ top-k */

static gx_status st_topk_checks(gx_ctx *ctx, gx_array *x, int64_t k, gx_array **vals, int64_t *rowlen)
{
    const char *fn = "gx_topk";
    GX__ARG(vals, "%s: vals is NULL (it receives the k keys of each row)", fn);
    GX__CHECK(st_check_keys(ctx, fn, "x", x));
    int64_t nrows;
    st_rows(x, false, &nrows, rowlen);
    if (k < 0 || k > *rowlen) {
        char sh[160];
        gx__shape_str(sh, sizeof sh, x->ndim, x->shape);
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: k = %lld for rows of %lld keys (x has shape %s); k must be in "
                       "[0, %lld]", fn, (long long)k, (long long)*rowlen, sh, (long long)*rowlen);
    }
    return GX_OK;
}

gx_status gx_topk(gx_ctx *ctx, gx_array *x, int64_t k, const gx_topk_opts *opts, gx_array **vals, gx_array **idx)
{
    if (vals)
        *vals = NULL;
    if (idx)
        *idx = NULL;
    GX__OPTS_CHECK(opts, "gx_topk");
    int64_t rowlen = 0;
    GX__CHECK(st_topk_checks(ctx, x, k, vals, &rowlen));
    int64_t shape[GX_MAX_DIMS];
    int nd = x->ndim ? x->ndim : 1;
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    shape[nd - 1] = k;
    gx__lock(ctx);
    gx_array *xd, *xm, *v = NULL, *ix = NULL;
    gx_status s = st_dense(x, &xd, &xm);
    if (s == GX_OK)
        s = gx__array_new(ctx, x->dtype, nd, shape, &v);
    if (s == GX_OK)
        s = gx__array_new(ctx, GX_I64, nd, shape, &ix);
    gx__topk_req r = {x->dtype, st_ptr(xd), 0, rowlen, k, !(opts && opts->smallest), st_ptr(v), st_ptr(ix)};
    st_rows(x, false, &r.nrows, &r.rowlen);
    if (s == GX_OK)
        s = st_topk_dispatch(ctx, &r);
    gx_array_release(xm);
    if (s != GX_OK || !idx) {
        gx_array_release(ix);
        ix = NULL;
    }
    if (s != GX_OK) {
        gx_array_release(v);
        v = NULL;
    }
    *vals = v;
    if (idx)
        *idx = ix;
    gx__unlock(ctx);
    return s;
}

/* ------------------------------------------------------------ histogram, bincount */

static gx_status st_check_weights(gx_ctx *ctx, const char *fn, gx_array *x, gx_array *w)
{
    if (!w)
        return GX_OK;
    GX__CHECK(st_check_in(ctx, fn, "weights", w));
    if (w->dtype == GX_BOOL || !st_key_dtype(w->dtype))
        return gx__err(GX_ERR_DTYPE, "%s: weights have dtype %s; they must be an integer dtype, f32 or f64", fn,
                       gx_dtype_name(w->dtype));
    if (!gx__same_shape(x, w))
        return st_shape_err(fn, "weights", w, x->ndim, x->shape);
    return GX_OK;
}

/* Runs one histogram request over dense x and weights into a new counts array and
 * the dropped count (read back to the host when wanted). */
static gx_status st_hist_run(gx_ctx *ctx, gx__hist_req *r, gx_array *x, gx_array *w, gx_array **counts,
                             int64_t *dropped)
{
    gx_array *xd, *xm, *wd = NULL, *wm = NULL, *drop = NULL;
    int64_t one = 1;
    GX__CHECK(st_dense(x, &xd, &xm));
    gx_status s = st_dense(w, &wd, &wm);
    if (s == GX_OK)
        s = gx__array_new(ctx, w ? GX_F64 : GX_I64, 1, &r->nbins, counts);
    if (s == GX_OK)
        s = gx__array_new(ctx, GX_I64, 1, &one, &drop);
    r->xdtype = x->dtype, r->x = st_ptr(xd), r->n = x->size;
    r->wdtype = w ? w->dtype : GX_DTYPE_DEFAULT, r->w = st_ptr(wd);
    r->counts_out = st_ptr(*counts), r->dropped_out = st_ptr(drop);
    if (s == GX_OK && r->n == 0) { /* nothing to launch: zeros */
        s = gx_array_fill_f64(*counts, 0);
        if (s == GX_OK)
            s = gx_array_fill_f64(drop, 0);
    } else if (s == GX_OK)
        s = st_hist_dispatch(ctx, r);
    if (s == GX_OK && dropped)
        s = gx_array_to_host(drop, dropped, sizeof *dropped);
    if (s != GX_OK) {
        gx_array_release(*counts);
        *counts = NULL;
    }
    gx_array_release(drop);
    gx_array_release(xm);
    gx_array_release(wm);
    return s;
}

static gx_status st_hist_x(gx_ctx *ctx, const char *fn, gx_array *x, bool ints_only)
{
    GX__CHECK(st_check_in(ctx, fn, "x", x));
    bool ok = ints_only ? x->dtype == GX_BOOL || gx__dtype_is_int(x->dtype) : st_key_dtype(x->dtype);
    if (!ok)
        return gx__err(GX_ERR_DTYPE, "%s: x has dtype %s; it must be %s", fn, gx_dtype_name(x->dtype),
                       ints_only ? "bool or an integer dtype" : "bool, an integer dtype, f32 or f64");
    return GX_OK;
}

/* Explicit edges: read to the host (they are few) to check them, then as dense f64. */
static gx_status st_edges(gx_ctx *ctx, const char *fn, gx_array *e, gx_array **ed)
{
    GX__CHECK(st_check_in(ctx, fn, "edges", e));
    if (!st_key_dtype(e->dtype) || e->dtype == GX_BOOL)
        return gx__err(GX_ERR_DTYPE, "%s: edges have dtype %s; they must be an integer dtype, f32 or f64", fn,
                       gx_dtype_name(e->dtype));
    if (e->ndim != 1 || e->size < 2) {
        char sh[160];
        gx__shape_str(sh, sizeof sh, e->ndim, e->shape);
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: edges have shape %s; they must be 1-d with at least 2 values", fn,
                       sh);
    }
    GX__CHECK(gx_array_clone(e, GX_F64, ed));
    double *h = malloc((size_t)e->size * sizeof *h);
    gx_status s = h ? gx_array_to_host(*ed, h, (size_t)e->size * sizeof *h)
                    : gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    for (int64_t i = 1; s == GX_OK && i < e->size; i++)
        if (!(h[i - 1] < h[i]))
            s = gx__err(GX_ERR_INVALID_ARGUMENT, "%s: edges[%lld] = %g is not above edges[%lld] = %g; edges must "
                        "increase strictly", fn, (long long)i, h[i], (long long)(i - 1), h[i - 1]);
    free(h);
    if (s != GX_OK) {
        gx_array_release(*ed);
        *ed = NULL;
    }
    return s;
}

static gx_status st_hist_opts(const char *fn, const gx_histogram_opts *o)
{
    GX__ARG(o, "%s: opts is NULL; set opts.nbins, lo, hi (or opts.edges)", fn);
    if (o->edges) {
        GX__ARG(o->nbins == 0 && o->lo == 0 && o->hi == 0,
                "%s: opts.edges is given together with nbins/lo/hi; give one or the other", fn);
        return GX_OK;
    }
    GX__ARG(o->nbins > 0, "%s: opts.nbins = %lld; it must be >= 1 (or give opts.edges)", fn, (long long)o->nbins);
    GX__ARG(isfinite(o->lo) && isfinite(o->hi) && o->lo < o->hi,
            "%s: the range [lo, hi) = [%g, %g) is empty or not finite; lo < hi, both finite", fn, o->lo, o->hi);
    return GX_OK;
}

gx_status gx_histogram(gx_ctx *ctx, gx_array *x, const gx_histogram_opts *opts, gx_array **counts, int64_t *dropped)
{
    const char *fn = "gx_histogram";
    GX__ARG(counts, "%s: counts is NULL (it receives the new array)", fn);
    *counts = NULL;
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(st_hist_opts(fn, opts));
    GX__CHECK(st_hist_x(ctx, fn, x, false));
    GX__CHECK(st_check_weights(ctx, fn, x, opts->weights));
    gx__lock(ctx);
    gx__range_push(fn);
    gx__hist_req r;
    memset(&r, 0, sizeof r);
    gx_array *ed = NULL;
    gx_status s = GX_OK;
    if (opts->edges) {
        s = st_edges(ctx, fn, opts->edges, &ed);
        r.kind = GX__HIST_EDGES, r.nbins = opts->edges->size - 1, r.edges = st_ptr(ed);
    } else
        r.kind = GX__HIST_EVEN, r.nbins = opts->nbins, r.lo = opts->lo, r.hi = opts->hi;
    if (s == GX_OK)
        s = st_hist_run(ctx, &r, x, opts->weights, counts, dropped);
    gx_array_release(ed);
    gx__range_pop();
    gx__unlock(ctx);
    return s;
}

/* min and max of a non-empty integer x as int64 (gx_scalar's i and u share storage,
 * so .i reads every value below 2^63; u64 above that cannot be a bin). */
static gx_status st_int_range(gx_ctx *ctx, const char *fn, gx_array *x, int64_t *mn, int64_t *mx)
{
    gx_scalar a, b;
    GX__CHECK(gx_reduce(ctx, "min", x, NULL, &a));
    GX__CHECK(gx_reduce(ctx, "max", x, NULL, &b));
    if (x->dtype == GX_U64 && b.v.u > (uint64_t)INT64_MAX - 1)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: x holds %llu; bins beyond 2^63 are not possible", fn,
                       (unsigned long long)b.v.u);
    *mn = x->dtype == GX_U64 ? 0 : a.v.i;
    *mx = b.v.i;
    if (*mn < 0)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: x holds the negative value %lld; bincount counts values >= 0",
                       fn, (long long)*mn);
    return GX_OK;
}

gx_status gx_bincount(gx_ctx *ctx, gx_array *x, const gx_bincount_opts *opts, gx_array **counts)
{
    const char *fn = "gx_bincount";
    GX__ARG(counts, "%s: counts is NULL (it receives the new array)", fn);
    *counts = NULL;
    GX__OPTS_CHECK(opts, fn);
    gx_bincount_opts o = opts ? *opts : (gx_bincount_opts){0};
    GX__ARG(o.minlength >= 0, "%s: opts.minlength = %lld; it must be >= 0", fn, (long long)o.minlength);
    GX__CHECK(st_hist_x(ctx, fn, x, true));
    GX__CHECK(st_check_weights(ctx, fn, x, o.weights));
    gx__lock(ctx);
    int64_t mn = 0, mx = -1;
    gx_status s = x->size ? st_int_range(ctx, fn, x, &mn, &mx) : GX_OK;
    gx__hist_req r;
    memset(&r, 0, sizeof r);
    r.kind = GX__HIST_INT, r.nbins = mx + 1 > o.minlength ? mx + 1 : o.minlength;
    if (s == GX_OK)
        s = st_hist_run(ctx, &r, x, o.weights, counts, NULL);
    gx__unlock(ctx);
    return s;
}

/* ------------------------------------------------------------ unique */

/* The flat positions where a new value starts in sorted s (n >= 1): [0, j + 1 for
 * every j with s[j + 1] != s[j]].  Both NaN is equal; -0.0 == 0.0 as the sort says. */
static gx_status st_run_starts(gx_ctx *ctx, gx_array *s, gx_array **starts)
{
    int64_t n = s->size;
    gx_array *a = NULL, *b = NULL, *j = NULL, *t = NULL, *tail = NULL;
    gx_slice hi = {1, GX_END, 1}, lo = {0, n - 1, 1};
    gx_status st = gx_array_view(s, &hi, &a);
    if (st == GX_OK)
        st = gx_array_view(s, &lo, &b);
    gx_array *ab[2] = {a, b};
    if (st == GX_OK)
        st = gx_findall(ctx, "a, b -> a != b && (a == a || b == b)", 2, ab, NULL, &j);
    int64_t m = j ? j->size + 1 : 0;
    if (st == GX_OK)
        st = gx__array_new(ctx, GX_I64, 1, &m, &t);
    gx_slice rest = {1, GX_END, 1};
    if (st == GX_OK)
        st = gx_array_view(t, &rest, &tail);
    if (st == GX_OK)
        st = gx_map_into(ctx, "i -> i + 1", 1, &j, NULL, tail);
    int64_t zero = 0, at = 0;
    if (st == GX_OK)
        st = gx_array_set(t, &at, &zero);
    gx_array_release(a);
    gx_array_release(b);
    gx_array_release(j);
    gx_array_release(tail);
    if (st != GX_OK)
        gx_array_release(t), t = NULL;
    *starts = t;
    return st;
}

/* counts[i] = starts[i + 1] - starts[i], with starts[u] = n. */
static gx_status st_counts(gx_ctx *ctx, gx_array *starts, int64_t n, gx_array **counts)
{
    int64_t u = starts->size, m = u + 1;
    gx_array *ext = NULL, *head = NULL, *a = NULL, *b = NULL;
    gx_slice h = {0, u, 1}, s1 = {1, GX_END, 1}, s0 = {0, u, 1};
    gx_status st = gx__array_new(ctx, GX_I64, 1, &m, &ext);
    if (st == GX_OK)
        st = gx_array_view(ext, &h, &head);
    if (st == GX_OK)
        st = gx_array_copy_into(starts, head);
    if (st == GX_OK)
        st = gx_array_set(ext, &u, &n);
    if (st == GX_OK)
        st = gx_array_view(ext, &s1, &a);
    if (st == GX_OK)
        st = gx_array_view(ext, &s0, &b);
    gx_array *ab[2] = {a, b};
    if (st == GX_OK)
        st = gx_map(ctx, "a, b -> a - b", 2, ab, NULL, counts);
    gx_array_release(ext);
    gx_array_release(head);
    gx_array_release(a);
    gx_array_release(b);
    return st;
}

/* inverse[perm[i]] = (number of run starts at or before i) - 1. */
static gx_status st_inverse(gx_ctx *ctx, gx_array *starts, gx_array *perm, gx_array **inverse)
{
    int64_t n = perm->size;
    gx_array *flag = NULL, *rank = NULL, *inv = NULL;
    gx_status st = gx_array_zeros(ctx, GX_I64, 1, &n, &flag);
    if (st == GX_OK) {
        gx_array *ones = NULL;
        int64_t u = starts->size;
        st = gx_array_ones(ctx, GX_I64, 1, &u, &ones);
        if (st == GX_OK)
            st = gx_put(ctx, starts, ones, NULL, flag);
        gx_array_release(ones);
    }
    if (st == GX_OK)
        st = gx_scan(ctx, "+", flag, NULL, &rank);
    if (st == GX_OK)
        st = gx_map_into(ctx, "r -> r - 1", 1, &rank, NULL, rank);
    if (st == GX_OK)
        st = gx__array_new(ctx, GX_I64, 1, &n, &inv);
    if (st == GX_OK)
        st = gx_put(ctx, perm, rank, NULL, inv);
    gx_array_release(flag);
    gx_array_release(rank);
    if (st != GX_OK)
        gx_array_release(inv), inv = NULL;
    *inverse = inv;
    return st;
}

/* ---- unique by counting.  Integers (and bool) whose range max - min + 1 is small
 * next to n are counted instead of sorted: a histogram of x - min into `range` bins
 * (bincount's kernels: per-block shared-memory bins on CUDA where they fit, per-core
 * bins on the CPU), the bins with a count compacted in order (findall): bin + min are
 * the sorted values and the bins' counts the counts; first indices are a scatter-min
 * of positions into the bins; the inverse looks each value's bin up in the ranks (an
 * inclusive scan of the presence flags).  Passes over x: min, max and the histogram,
 * plus one or two per optional output; the sorting path reads and writes the keys
 * once per radix digit and then flags, compacts and gathers.  The results are the
 * sorting path's bit for bit: every output is an exact integer (no order-dependent
 * arithmetic), first indices are the least position per value, ranks count the
 * smaller present values. */

enum { ST_UQ_AUTO, ST_UQ_SORT, ST_UQ_COUNT };

/* Counting only up to this many bins: the counts (i64) and ranks of 2^24 bins are
 * 256 MiB in all, a bound on the scratch a unique may take beside its results, and a
 * range past it is sparse for any n that fits in memory. */
#define ST_UQ_MAX_RANGE ((int64_t)1 << 24)
/* ...and, on the auto path, up to max(ST_UQ_MIN_RANGE, n / 2) bins: past about n bins
 * the histogram's scattered increments and the passes over the bins cost more than
 * the sort.  Measured on the 2-core VM (CPU backend, i32 uniformly in [0, range),
 * values and counts, GX_UNIQUE_PATH=sort vs count, ms): n = 2^22: range 2^16 65.5 vs
 * 9.2, 2^20 77.3 vs 40.1, 2^22 92.0 vs 96.1, 2^23 87.1 vs 151.9; n = 2^18: range 2^17
 * 4.5 vs 1.1, 2^18 4.7 vs 2.4; n = 2^14: range 2^14 0.21 vs 0.12, 2^16 0.21 vs 0.32.
 * The floor keeps tiny inputs of a few distinct values off the sort (a few thousand
 * bins cost microseconds). */
#define ST_UQ_MIN_RANGE ((int64_t)1 << 12)
#define ST_UQ_N_DIV 2

typedef struct st_uq_state {
    int path; /* ST_UQ_* */
    int last; /* the path the latest non-empty unique took: ST_UQ_SORT or ST_UQ_COUNT */
} st_uq_state;

static void st_uq_release(gx_ctx *ctx, void *state)
{
    (void)ctx;
    free(state);
}

static const gx__ctx_ext st_uq_ext = {"unique path", st_uq_release};

/* The context's state, made at its first unique with the path GX_UNIQUE_PATH
 * (auto|sort|count) names; NULL when out of memory (then auto, unrecorded). */
static st_uq_state *st_uq_get(gx_ctx *ctx)
{
    st_uq_state *p = gx__ctx_ext_get(ctx, &st_uq_ext);
    if (p)
        return p;
    static const char *const names[] = {"auto", "sort", "count", NULL};
    p = calloc(1, sizeof *p);
    if (!p || gx__ctx_ext_set(ctx, &st_uq_ext, p) != GX_OK) {
        free(p);
        return NULL;
    }
    p->path = gx__env_choice("GX_UNIQUE_PATH", names, ST_UQ_AUTO, "auto, sort or count");
    return p;
}

gx_status gx__unique_path_set(gx_ctx *ctx, int path)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(path >= ST_UQ_AUTO && path <= ST_UQ_COUNT, "gx__unique_path_set: path %d (0 auto, 1 sort, 2 count)",
            path);
    gx__lock(ctx);
    st_uq_state *p = st_uq_get(ctx);
    if (p)
        p->path = path;
    gx__unlock(ctx);
    return p ? GX_OK : gx__err(GX_ERR_OUT_OF_MEMORY, "gx__unique_path_set: out of host memory");
}

int gx__unique_path_last(gx_ctx *ctx)
{
    gx__lock(ctx);
    st_uq_state *p = st_uq_get(ctx);
    int last = p ? p->last : 0;
    gx__unlock(ctx);
    return last;
}

/* Whether to count (n >= 1): *lo (min(x) as a u64 bit pattern) and *range set when
 * so.  A range beyond ST_UQ_MAX_RANGE sorts even when counting is forced. */
static gx_status st_uq_plan(gx_ctx *ctx, gx_array *x, bool *count, uint64_t *lo, int64_t *range)
{
    *count = false;
    st_uq_state *stt = st_uq_get(ctx);
    int path = stt ? stt->path : ST_UQ_AUTO;
    if (stt)
        stt->last = ST_UQ_SORT;
    if (path == ST_UQ_SORT || !(x->dtype == GX_BOOL || gx__dtype_is_int(x->dtype)))
        return GX_OK;
    gx_scalar a, b;
    GX__CHECK(gx_reduce(ctx, "min", x, NULL, &a));
    GX__CHECK(gx_reduce(ctx, "max", x, NULL, &b));
    /* max - min modulo 2^64 on the bit patterns (signed values sign-extended): exact,
     * as max >= min, and never an overflow (i64's full range is 2^64 - 1) */
    uint64_t span = b.v.u - a.v.u;
    if (span >= (uint64_t)ST_UQ_MAX_RANGE)
        return GX_OK;
    int64_t r = (int64_t)span + 1, want = x->size / ST_UQ_N_DIV;
    *count = path == ST_UQ_COUNT || r <= (want > ST_UQ_MIN_RANGE ? want : ST_UQ_MIN_RANGE);
    if (stt && *count)
        stt->last = ST_UQ_COUNT;
    *lo = a.v.u, *range = r;
    return GX_OK;
}

/* first[j] = the least position of value j: positions scattered with "min" into one
 * slot per bin (n to start with), taken at the present bins. */
static gx_status st_uq_first(gx_ctx *ctx, gx_array *xf, const gx_const *m, int64_t range, gx_array *bins,
                             gx_array **first)
{
    int64_t n = xf->size;
    gx_array *idx = NULL, *pos = NULL, *slot = NULL;
    gx_map_opts mo = {.dtype = GX_U64, .consts = m, .nconsts = 1};
    gx_index_opts io = {.unchecked = 1}; /* every bin is in [0, range) by construction */
    gx_status st = gx_map(ctx, "v -> u64(v) - m", 1, &xf, &mo, &idx);
    if (st == GX_OK)
        st = gx_array_iota(ctx, GX_I64, n, 0, 1, &pos);
    if (st == GX_OK)
        st = gx__array_new(ctx, GX_I64, 1, &range, &slot);
    if (st == GX_OK)
        st = gx_array_fill_f64(slot, (double)n); /* exact: n < 2^53 */
    if (st == GX_OK)
        st = gx_scatter_reduce(ctx, "min", idx, pos, &io, slot);
    if (st == GX_OK)
        st = gx_take(ctx, slot, bins, 0, &io, first);
    gx_array_release(idx);
    gx_array_release(pos);
    gx_array_release(slot);
    return st;
}

/* inverse[i] = rank of x[i]'s bin = (present bins up to it) - 1. */
static gx_status st_uq_inverse(gx_ctx *ctx, gx_array *xf, const gx_const *m, gx_array *hist, gx_array **inverse)
{
    gx_array *flag = NULL, *rank = NULL;
    gx_map_opts fo = {.dtype = GX_I64};
    gx_status st = gx_map(ctx, "c -> c > 0", 1, &hist, &fo, &flag);
    if (st == GX_OK)
        st = gx_scan(ctx, "+", flag, NULL, &rank);
    gx_bind b = GX_BIND("rank", rank);
    gx_map_opts mo = {.dtype = GX_I64, .consts = m, .nconsts = 1, .arrays = &b, .narrays = 1, .unchecked = 1};
    if (st == GX_OK)
        st = gx_map(ctx, "v -> rank[u64(v) - m] - 1", 1, &xf, &mo, inverse);
    gx_array_release(flag);
    gx_array_release(rank);
    return st;
}

/* The counting path over xf (x flattened, 1-d, n >= 1) whose values lie in
 * [lo, lo + range). */
static gx_status st_uq_count(gx_ctx *ctx, gx_array *xf, uint64_t lo, int64_t range, gx_array **uniq,
                             gx_array **counts, gx_array **first, gx_array **inverse)
{
    gx__hist_req r;
    memset(&r, 0, sizeof r);
    r.kind = GX__HIST_INT, r.nbins = range, r.base = (int64_t)lo;
    gx_array *hist = NULL, *bins = NULL;
    gx_const m = GX_CONST("m", GX_SCALAR_U64(lo));
    gx_map_opts mo = {.dtype = xf->dtype, .consts = &m, .nconsts = 1};
    gx_index_opts io = {.unchecked = 1}; /* bins are positions in hist */
    gx_status st = st_hist_run(ctx, &r, xf, NULL, &hist, NULL);
    if (st == GX_OK)
        st = gx_findall(ctx, "c -> c > 0", 1, &hist, NULL, &bins);
    if (st == GX_OK) /* in u64, then cast to x's dtype: modulo 2^bits, the value's bits */
        st = gx_map(ctx, "b -> u64(b) + m", 1, &bins, &mo, uniq);
    if (st == GX_OK && counts)
        st = gx_take(ctx, hist, bins, 0, &io, counts);
    if (st == GX_OK && first)
        st = st_uq_first(ctx, xf, &m, range, bins, first);
    if (st == GX_OK && inverse)
        st = st_uq_inverse(ctx, xf, &m, hist, inverse);
    gx_array_release(hist);
    gx_array_release(bins);
    return st;
}

/* x as a 1-d array (a view of x when dense, else a dense copy). */
static gx_status st_flat(gx_array *x, gx_array **flat)
{
    gx_array *d, *made;
    int64_t n = x->size;
    GX__CHECK(st_dense(x, &d, &made));
    gx_status st = gx_array_reshape(d, 1, &n, flat);
    gx_array_release(made); /* the view keeps the storage alive */
    return st;
}

/* Counts when st_uq_plan says so (*done), else leaves the work to the sort. */
static gx_status st_uq_try_count(gx_ctx *ctx, gx_array *x, gx_array **uniq, gx_array **counts, gx_array **first,
                                 gx_array **inverse, bool *done)
{
    uint64_t lo = 0;
    int64_t range = 0;
    GX__CHECK(st_uq_plan(ctx, x, done, &lo, &range));
    if (!*done)
        return GX_OK;
    gx_array *xf = NULL;
    GX__CHECK(st_flat(x, &xf));
    gx_status st = st_uq_count(ctx, xf, lo, range, uniq, counts, first, inverse);
    gx_array_release(xf);
    return st;
}

static gx_status st_unique_run(gx_ctx *ctx, gx_array *x, gx_array **uniq, gx_array **counts, gx_array **first,
                               gx_array **inverse)
{
    int64_t n = x->size;
    gx_sort_opts fl = {.flatten = 1};
    gx_array *perm = NULL, *sorted = NULL, *starts = NULL;
    if (n == 0) {
        gx_status st = gx__array_new(ctx, x->dtype, 1, &n, uniq);
        if (st == GX_OK && counts)
            st = gx__array_new(ctx, GX_I64, 1, &n, counts);
        if (st == GX_OK && first)
            st = gx__array_new(ctx, GX_I64, 1, &n, first);
        if (st == GX_OK && inverse)
            st = gx__array_new(ctx, GX_I64, 1, &n, inverse);
        return st;
    }
    bool counted = false;
    gx_status st = st_uq_try_count(ctx, x, uniq, counts, first, inverse, &counted);
    if (st != GX_OK || counted)
        return st;
    bool want_perm = first || inverse;
    st = want_perm ? gx_argsort(ctx, x, &fl, &perm) : gx_sort(ctx, x, &fl, &sorted);
    if (st == GX_OK && want_perm)
        st = gx_take(ctx, x, perm, GX_ALL_AXES, NULL, &sorted);
    if (st == GX_OK)
        st = st_run_starts(ctx, sorted, &starts);
    if (st == GX_OK)
        st = gx_take(ctx, sorted, starts, 0, NULL, uniq);
    if (st == GX_OK && counts)
        st = st_counts(ctx, starts, n, counts);
    if (st == GX_OK && first)
        st = gx_take(ctx, perm, starts, 0, NULL, first);
    if (st == GX_OK && inverse)
        st = st_inverse(ctx, starts, perm, inverse);
    gx_array_release(perm);
    gx_array_release(sorted);
    gx_array_release(starts);
    return st;
}

gx_status gx_unique(gx_ctx *ctx, gx_array *x, const gx_unique_opts *opts, gx_array **uniq, gx_array **counts,
                    gx_array **first, gx_array **inverse)
{
    const char *fn = "gx_unique";
    GX__ARG(uniq, "%s: uniq is NULL (it receives the sorted distinct values)", fn);
    gx_array **outs[4] = {uniq, counts, first, inverse};
    for (int i = 0; i < 4; i++)
        if (outs[i])
            *outs[i] = NULL;
    GX__OPTS_CHECK(opts, fn);
    GX__CHECK(st_check_keys(ctx, fn, "x", x));
    gx__lock(ctx);
    gx__range_push(fn);
    gx_status st = st_unique_run(ctx, x, uniq, counts, first, inverse);
    if (st != GX_OK)
        for (int i = 0; i < 4; i++)
            if (outs[i]) {
                gx_array_release(*outs[i]);
                *outs[i] = NULL;
            }
    gx__range_pop();
    gx__unlock(ctx);
    return st;
}

/* ------------------------------------------------------------ searchsorted */

/* The CPU side: a branchless lower bound (the range [base, base + n] that holds the
 * answer halves by adding half & -(key < v), never a branch on the data), run for 8
 * needles side by side so their 8 independent cache misses overlap instead of one
 * dependent, mispredicting search per needle.  All needles of one call share the row
 * length m, so the 8 searches take the same steps.  For a non-NaN needle the sort's
 * order is ONE IEEE compare (left: key < v, right: key <= v; a NaN key is false in
 * both, i.e. past v; -0.0 == 0.0), which the compiler turns into flags, not branches;
 * a group holding a NaN needle (rare) goes through the general search (ss_one, the
 * full NaN-aware compare) one needle at a time.  Same answers as the CUDA search:
 * left = #keys < v, right = #keys <= v, NaNs last and equal; an unsorted row still
 * gives a position in [0, m].
 * ./build/gx bench --filter =searchsorted_f32 --sizes 20 (2-core VM, 2^20 needles
 * into 2^20 keys): 615 ms before (one binary search per needle; 1.38 s on a busier
 * run), 125-147 ms after; 280-334 ms with the 8-wide search alone, while GCC still
 * branched on the two-part NaN-aware compare. */
static const char st_ss_c_search[] =
    "#define SS_W 8\n"
    "static void ss_one(const gx_args *a, int64_t r)\n{\n"
    "  const ss_t *h = SS_ROW(r);\n  ss_t v = SS_NDL(r);\n  int64_t b = 0, n = a->m;\n"
    "  if (n == 0) { SS_OUT(r) = 0; return; }\n"
    "  while (n > 1) { int64_t half = n >> 1; b = SS_P(h[b + half], v) ? b + half : b; n -= half; }\n"
    "  SS_OUT(r) = b + (SS_P(h[b], v) ? 1 : 0);\n}\n"
    "static int ss_group(const gx_args *a, int64_t r0)\n{\n"
    "  const ss_t *h[SS_W];\n  ss_t v[SS_W];\n  int64_t b[SS_W];\n  int nan = 0;\n"
    "  for (int j = 0; j < SS_W; j++) { h[j] = SS_ROW(r0 + j); v[j] = SS_NDL(r0 + j); b[j] = 0; nan |= SS_NAN(v[j]); }\n"
    "  if (nan) return 0;\n"
    "  for (int64_t n = a->m; n > 1;) {\n    int64_t half = n >> 1;\n"
    "    for (int j = 0; j < SS_W; j++) b[j] += half & -(int64_t)SS_Q(h[j][b[j] + half], v[j]);\n"
    "    n -= half;\n  }\n"
    "  for (int j = 0; j < SS_W; j++) SS_OUT(r0 + j) = b[j] + SS_Q(h[j][b[j]], v[j]);\n  return 1;\n}\n"
    "void st_ss(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
    "  const gx_args *a = (const gx_args *)ap;\n  (void)thread;\n  int64_t r = begin;\n"
    "  if (a->m > 0)\n    for (; r + SS_W <= end; r += SS_W)\n      if (!ss_group(a, r))\n"
    "        for (int j = 0; j < SS_W; j++) ss_one(a, r + j);\n"
    "  for (; r < end; r++) ss_one(a, r);\n}\n";

/* One thread per needle: a binary search in its haystack row, with the sort's order
 * (NaN past everything, NaNs equal) for floats. */
static void st_ss_source(gx__sbuf *b, bool cuda, gx_dtype t, bool right)
{
    gx__sb_puts(b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    gx__sb_puts(b, cuda ? "typedef unsigned long long gx_uptr;\n" : "typedef uintptr_t gx_uptr;\n");
    bool fl = gx__dtype_is_float(t);
    /* the CPU's compare without && / || so that it compiles to flags, not branches */
    gx__sb_printf(b,
                  "typedef struct { uint64_t hay, ndl, out; int64_t m, q, total; } gx_args;\ntypedef %s ss_t;\n"
                  "GXF int ss_lt(ss_t a, ss_t b) { return %s; }\n",
                  gx__dtype_ctype(t),
                  !fl ? "a < b" : cuda ? "a < b || (b != b && a == a)" : "(a < b) | ((b != b) & (a == a))");
    if (!cuda) {
        gx__sb_printf(b,
                      "#define SS_ROW(r) ((const ss_t *)(gx_uptr)a->hay + (a->q ? (r) / a->q : 0) * a->m)\n"
                      "#define SS_NDL(r) (((const ss_t *)(gx_uptr)a->ndl)[r])\n"
                      "#define SS_OUT(r) (((int64_t *)(gx_uptr)a->out)[r])\n#define SS_P(hv, v) (%s)\n"
                      "#define SS_Q(hv, v) ((int64_t)((hv) %s (v)))\n#define SS_NAN(v) (%s)\n",
                      right ? "!ss_lt((v), (hv))" : "ss_lt((hv), (v))", right ? "<=" : "<", fl ? "(v) != (v)" : "0");
        gx__sb_puts(b, st_ss_c_search);
        return;
    }
    const char *body =
        "    const ss_t *h = (const ss_t *)(gx_uptr)a->hay + (a->q ? r / a->q : 0) * a->m;\n"
        "    ss_t v = ((const ss_t *)(gx_uptr)a->ndl)[r];\n"
        "    int64_t lo = 0, hi = a->m;\n"
        "    while (lo < hi) {\n      int64_t mid = lo + (hi - lo) / 2;\n"
        "      if (%s) lo = mid + 1; else hi = mid;\n    }\n"
        "    ((int64_t *)(gx_uptr)a->out)[r] = lo;\n";
    const char *test = right ? "!ss_lt(v, h[mid])" : "ss_lt(h[mid], v)";
    gx__sb_puts(b, "extern \"C\" __global__ void st_ss(const gx_args a_)\n{\n  const gx_args *a = &a_;\n"
                   "  for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < a->total;"
                   " r += (int64_t)gridDim.x * blockDim.x) {\n");
    gx__sb_printf(b, body, test);
    gx__sb_puts(b, "  }\n}\n");
}

static gx_status st_ss_checks(gx_ctx *ctx, gx_array *h, gx_array *nd, gx_array **out)
{
    const char *fn = "gx_searchsorted";
    GX__ARG(out, "%s: out is NULL (it receives the new array)", fn);
    *out = NULL;
    GX__CHECK(st_check_keys(ctx, fn, "haystack", h));
    GX__CHECK(st_check_keys(ctx, fn, "needles", nd));
    if (h->dtype != nd->dtype)
        return gx__err(GX_ERR_DTYPE, "%s: haystack is %s and needles are %s; give both one dtype (gx_array_clone)",
                       fn, gx_dtype_name(h->dtype), gx_dtype_name(nd->dtype));
    if (h->ndim == 1)
        return GX_OK;
    char hs[160], ns[160];
    gx__shape_str(hs, sizeof hs, h->ndim, h->shape);
    gx__shape_str(ns, sizeof ns, nd->ndim, nd->shape);
    if (h->ndim != 2)
        return gx__err(GX_ERR_SHAPE, "%s: haystack has shape %s; it must be 1-d, or 2-d (rows) with 2-d needles", fn,
                       hs);
    if (nd->ndim != 2 || nd->shape[0] != h->shape[0])
        return gx__err(GX_ERR_SHAPE, "%s: haystack %s has rows, so needles must be (%lld, q); they are %s", fn, hs,
                       (long long)h->shape[0], ns);
    return GX_OK;
}

static gx_status st_ss_run(gx_ctx *ctx, gx_array *hd, gx_array *nd, bool right, gx_array *out)
{
    bool cuda = gx__target_is_cuda(ctx);
    gx__sbuf b = {0};
    st_ss_source(&b, cuda, hd->dtype, right);
    struct {
        uint64_t hay, ndl, out;
        int64_t m, q, total;
    } a = {(uint64_t)(uintptr_t)st_ptr(hd), (uint64_t)(uintptr_t)st_ptr(nd), (uint64_t)(uintptr_t)st_ptr(out),
           hd->ndim == 2 ? hd->shape[1] : hd->size, hd->ndim == 2 ? nd->shape[1] : 0, nd->size};
    gx__kernel k;
    gx_status s = b.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "gx_searchsorted: out of host memory") : GX_OK;
    if (s == GX_OK)
        s = gx__kernel_get(ctx, b.p, "gx_searchsorted", "st_ss", &k);
    gx__sb_free(&b);
    int64_t grid = (a.total + 255) / 256;
    if (s == GX_OK && a.total > 0)
        s = gx__launch_1d(ctx, &k, &a, sizeof a, a.total, 1, grid < 65536 ? (grid ? grid : 1) : 65536, 256);
    return s;
}

gx_status gx_searchsorted(gx_ctx *ctx, gx_array *haystack, gx_array *needles, const gx_searchsorted_opts *opts,
                          gx_array **out)
{
    GX__OPTS_CHECK(opts, "gx_searchsorted");
    GX__CHECK(st_ss_checks(ctx, haystack, needles, out));
    gx__lock(ctx);
    gx_array *hd, *hm = NULL, *nd = NULL, *nm = NULL;
    gx_status s = st_dense(haystack, &hd, &hm);
    if (s == GX_OK)
        s = st_dense(needles, &nd, &nm);
    if (s == GX_OK)
        s = gx__array_new(ctx, GX_I64, needles->ndim, needles->shape, out);
    if (s == GX_OK)
        s = st_ss_run(ctx, hd, nd, opts && opts->right, *out);
    if (s != GX_OK) {
        gx_array_release(*out);
        *out = NULL;
    }
    gx_array_release(hm);
    gx_array_release(nm);
    gx__unlock(ctx);
    return s;
}

/* ------------------------------------------------------------ pipeline terminals */

/* The pipeline's one value per item, collected into a new 1-d array: the only copy of
 * the values, which the terminals below then work on directly. */
static gx_status st_pipe_values(gx_pipe *p, const char *fn, gx_array **vals)
{
    int ar = 0;
    GX__ARG(p, "%s: the pipeline must not be NULL", fn);
    GX__CHECK(gx_pipe_arity(p, &ar));
    if (ar != 1)
        return gx__err(GX_ERR_SHAPE,
                       "%s: the pipeline carries %d values per item; this terminal takes one (gx_pipe_map the "
                       "tuple to one value first)",
                       fn, ar);
    return gx_pipe_collect(p, 1, vals);
}

gx_status gx_pipe_sort(gx_pipe *p, const gx_sort_opts *opts, gx_array **out)
{
    GX__ARG(out, "gx_pipe_sort: out must not be NULL (it receives the sorted array)");
    *out = NULL;
    GX__OPTS_CHECK(opts, "gx_pipe_sort");
    gx_array *v = NULL;
    GX__CHECK(st_pipe_values(p, "gx_pipe_sort", &v));
    /* in place: the collected values are the sort's working buffer */
    gx_status s = gx_sort_into(v->ctx, v, opts, v);
    if (s != GX_OK) {
        gx_array_release(v);
        return s;
    }
    *out = v;
    return GX_OK;
}

gx_status gx_pipe_histogram(gx_pipe *p, const gx_histogram_opts *opts, gx_array **counts, int64_t *dropped)
{
    GX__ARG(counts, "gx_pipe_histogram: counts must not be NULL (it receives the new array)");
    *counts = NULL;
    GX__ARG(opts, "gx_pipe_histogram: opts is required (nbins/lo/hi or edges)");
    gx_array *v = NULL;
    GX__CHECK(st_pipe_values(p, "gx_pipe_histogram", &v));
    gx_status s = gx_histogram(v->ctx, v, opts, counts, dropped);
    gx_array_release(v);
    return s;
}
