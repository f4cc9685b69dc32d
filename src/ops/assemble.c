/* assemble.c -- concat, stack, repeat, tile, pad, flip, roll (include/gx/assemble.h).
 * Each result is a new dense array filled by strided copies (gx_array_copy_into)
 * from views of the input into views of the output: the copy kernel of either
 * backend, no kernel of its own.  Views that gx_array_view cannot spell (an axis
 * dropped, a broadcast axis of stride 0) are made here with sub_view. */
#include "core/gx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

/* A view of a with its own shape and strides (elements) at a's offset + off.  The
 * caller makes sure it stays inside a's storage. */
static gx_status sub_view(gx_array *a, int ndim, const int64_t *shape, const int64_t *strides, int64_t off,
                          gx_array **out)
{
    gx_slice all[GX_MAX_DIMS];
    for (int d = 0; d < GX_MAX_DIMS; d++)
        all[d] = GX_ALL;
    GX__CHECK(gx_array_view(a, all, out));
    gx_array *v = *out;
    v->ndim = ndim;
    v->offset += off;
    v->size = 1;
    for (int d = 0; d < ndim; d++) {
        v->shape[d] = shape[d];
        v->strides[d] = strides[d];
        v->size *= shape[d];
    }
    return GX_OK;
}

/* Copies src into the box of dst that starts at start[] with src's extents
 * (or with ext[] when src is NULL: then fills the box with *value). */
static gx_status put_box(gx_array *dst, const int64_t *start, const int64_t *ext, const gx_array *src,
                         const void *value)
{
    int64_t off = 0, size = 1;
    for (int d = 0; d < dst->ndim; d++) {
        off += start[d] * dst->strides[d];
        size *= ext[d];
    }
    if (size == 0)
        return GX_OK;
    gx_array *v = NULL;
    GX__CHECK(sub_view(dst, dst->ndim, ext, dst->strides, off, &v));
    gx_status s = src ? gx_array_copy_into(src, v) : gx_array_fill(v, value);
    gx_array_release(v);
    return s;
}

static gx_status norm_axis(const char *fn, int axis, int ndim, int *ax)
{
    if (axis == GX_ALL_AXES)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: takes one axis, not GX_ALL_AXES", fn);
    int a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: axis %d is out of range for a %d-d array (use 0..%d or -1..-%d)",
                       fn, axis, ndim, ndim - 1, ndim);
    *ax = a;
    return GX_OK;
}

static gx_status mul_extent(const char *fn, int64_t a, int64_t b, int64_t *r)
{
    if (__builtin_mul_overflow(a, b, r))
        return gx__err(GX_ERR_SHAPE, "%s: the result's extent %lld x %lld overflows", fn, (long long)a, (long long)b);
    return GX_OK;
}

/* The new dense result; on failure of the fill step `finish` releases it. */
static gx_status finish(gx_status s, gx_array *r, gx_array **out)
{
    if (s == GX_OK)
        *out = r;
    else
        gx_array_release(r);
    return s;
}

/* ------------------------------------------------------------ concat / stack */

/* The n arrays: live, one context, one dtype (arrays[0] is the reference). */
static gx_status check_list(const char *fn, gx_ctx *ctx, int n, gx_array *const *arrays)
{
    GX__ARG(n >= 1 && arrays, "%s: needs n >= 1 arrays (n = %d%s)", fn, n, arrays ? "" : ", arrays NULL");
    char what[96];
    for (int i = 0; i < n; i++) {
        snprintf(what, sizeof what, "%s (arrays[%d])", fn, i);
        GX__CHECK(gx__array_check(arrays[i], what));
        if (arrays[i]->ctx != ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "%s: arrays[%d] belongs to another context than ctx; copy it through the host", fn, i);
        if (arrays[i]->dtype != arrays[0]->dtype)
            return gx__err(GX_ERR_DTYPE, "%s: arrays[0] is %s but arrays[%d] is %s; convert with gx_array_clone", fn,
                           gx_dtype_name(arrays[0]->dtype), i, gx_dtype_name(arrays[i]->dtype));
    }
    return GX_OK;
}

static gx_status shape_mismatch(const char *fn, const gx_array *a, const gx_array *b, int i, const char *rule)
{
    char s1[160], s2[160];
    gx__shape_str(s1, sizeof s1, a->ndim, a->shape);
    gx__shape_str(s2, sizeof s2, b->ndim, b->shape);
    return gx__err(GX_ERR_SHAPE, "%s: arrays[0] has shape %s but arrays[%d] has shape %s (%s)", fn, s1, i, s2, rule);
}

gx_status gx_concat(gx_ctx *ctx, int n, gx_array *const *arrays, int axis, gx_array **out)
{
    GX__ARG(out, "gx_concat: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    GX__CHECK(check_list("gx_concat", ctx, n, arrays));
    const gx_array *a0 = arrays[0];
    if (a0->ndim == 0)
        return gx__err(GX_ERR_SHAPE, "gx_concat: 0-d arrays cannot be concatenated (use gx_stack)");
    int ax = 0;
    GX__CHECK(norm_axis("gx_concat", axis, a0->ndim, &ax));
    int64_t shape[GX_MAX_DIMS];
    memcpy(shape, a0->shape, sizeof shape);
    shape[ax] = 0;
    for (int i = 0; i < n; i++) {
        const gx_array *b = arrays[i];
        bool ok = b->ndim == a0->ndim;
        for (int d = 0; ok && d < a0->ndim; d++)
            ok = d == ax || b->shape[d] == a0->shape[d];
        if (!ok)
            return shape_mismatch("gx_concat", a0, b, i, "they must agree except along the axis");
        if (__builtin_add_overflow(shape[ax], b->shape[ax], &shape[ax]))
            return gx__err(GX_ERR_SHAPE, "gx_concat: the result's extent along axis %d overflows", ax);
    }
    gx_array *r = NULL;
    GX__CHECK(gx_array_empty(ctx, a0->dtype, a0->ndim, shape, &r));
    int64_t start[GX_MAX_DIMS] = {0};
    gx_status s = GX_OK;
    for (int i = 0; i < n && s == GX_OK; i++) {
        s = put_box(r, start, arrays[i]->shape, arrays[i], NULL);
        start[ax] += arrays[i]->shape[ax];
    }
    return finish(s, r, out);
}

gx_status gx_stack(gx_ctx *ctx, int n, gx_array *const *arrays, int axis, gx_array **out)
{
    GX__ARG(out, "gx_stack: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    GX__CHECK(check_list("gx_stack", ctx, n, arrays));
    const gx_array *a0 = arrays[0];
    int nd = a0->ndim, ax = 0;
    if (nd + 1 > GX_MAX_DIMS)
        return gx__err(GX_ERR_SHAPE, "gx_stack: the result would have %d axes (at most GX_MAX_DIMS = %d)", nd + 1,
                       GX_MAX_DIMS);
    GX__CHECK(norm_axis("gx_stack", axis, nd + 1, &ax));
    for (int i = 1; i < n; i++)
        if (!gx__same_shape(arrays[i], a0))
            return shape_mismatch("gx_stack", a0, arrays[i], i, "stacked arrays must have one shape");
    int64_t shape[GX_MAX_DIMS], strides[GX_MAX_DIMS];
    for (int d = 0, k = 0; d <= nd; d++)
        shape[d] = d == ax ? n : a0->shape[k++];
    gx_array *r = NULL;
    GX__CHECK(gx_array_empty(ctx, a0->dtype, nd + 1, shape, &r));
    /* Slab i of the result is a view without the new axis. */
    for (int d = 0, k = 0; d <= nd; d++)
        if (d != ax)
            strides[k++] = r->strides[d];
    gx_status s = GX_OK;
    for (int i = 0; i < n && s == GX_OK; i++) {
        gx_array *v = NULL;
        s = sub_view(r, nd, a0->shape, strides, i * r->strides[ax], &v);
        if (s == GX_OK)
            s = gx_array_copy_into(arrays[i], v);
        gx_array_release(v);
    }
    return finish(s, r, out);
}

/* ------------------------------------------------------------ repeat / tile */

/* Result r (dense) seen as `nd` axes of `shape` = a broadcast view of a whose axes
 * k with bcast[k] have stride 0 and the others take a's axes in order: one copy. */
static gx_status broadcast_copy(gx_array *a, gx_array *r, int nd, const int64_t *shape, const bool *bcast)
{
    if (r->size == 0)
        return GX_OK;
    int64_t st[GX_MAX_DIMS];
    for (int d = 0, k = 0; d < nd; d++)
        st[d] = bcast[d] ? 0 : a->strides[k++];
    gx_array *src = NULL, *dst = NULL;
    gx_status s = sub_view(a, nd, shape, st, 0, &src);
    if (s == GX_OK)
        s = gx_array_reshape(r, nd, shape, &dst);
    if (s == GX_OK)
        s = gx_array_copy_into(src, dst);
    gx_array_release(src);
    gx_array_release(dst);
    return s;
}

gx_status gx_repeat(gx_array *a, int64_t repeats, int axis, gx_array **out)
{
    GX__ARG(out, "gx_repeat: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_repeat"));
    GX__ARG(repeats >= 0, "gx_repeat: repeats = %lld is negative", (long long)repeats);
    int ax = 0, nd = a->ndim;
    GX__CHECK(norm_axis("gx_repeat", axis, nd, &ax));
    int64_t shape[GX_MAX_DIMS];
    memcpy(shape, a->shape, sizeof shape);
    GX__CHECK(mul_extent("gx_repeat", a->shape[ax], repeats, &shape[ax]));
    gx_array *r = NULL;
    GX__CHECK(gx_array_empty(a->ctx, a->dtype, nd, shape, &r));
    gx_status s = GX_OK;
    if (nd < GX_MAX_DIMS) { /* r as (..., n, repeats, ...) <- a with a stride-0 axis */
        int64_t sh[GX_MAX_DIMS];
        bool bc[GX_MAX_DIMS] = {false};
        for (int d = 0, k = 0; d <= nd; d++)
            sh[d] = d == ax + 1 ? repeats : a->shape[k++];
        bc[ax + 1] = true;
        s = broadcast_copy(a, r, nd + 1, sh, bc);
    } else { /* no room for the extra axis: one strided copy per repetition */
        int64_t st[GX_MAX_DIMS];
        memcpy(st, r->strides, sizeof st);
        st[ax] *= repeats;
        for (int64_t j = 0; j < repeats && s == GX_OK && a->size > 0; j++) {
            gx_array *v = NULL;
            s = sub_view(r, nd, a->shape, st, j * r->strides[ax], &v);
            if (s == GX_OK)
                s = gx_array_copy_into(a, v);
            gx_array_release(v);
        }
    }
    return finish(s, r, out);
}

/* Tiles the whole of a into r at every tile position (when the broadcast view
 * would need more than GX_MAX_DIMS axes). */
static gx_status tile_loop(gx_array *a1, gx_array *r, const int64_t *reps)
{
    int nd = r->ndim;
    int64_t t[GX_MAX_DIMS] = {0}, start[GX_MAX_DIMS];
    if (r->size == 0)
        return GX_OK;
    for (;;) {
        for (int d = 0; d < nd; d++)
            start[d] = t[d] * a1->shape[d];
        GX__CHECK(put_box(r, start, a1->shape, a1, NULL));
        int d = nd - 1;
        for (; d >= 0 && ++t[d] == reps[d]; d--)
            t[d] = 0;
        if (d < 0)
            return GX_OK;
    }
}

gx_status gx_tile(gx_array *a, const int64_t *reps, int nreps, gx_array **out)
{
    GX__ARG(out, "gx_tile: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_tile"));
    GX__ARG(nreps >= 0 && nreps <= GX_MAX_DIMS, "gx_tile: nreps = %d is out of range 0..%d (GX_MAX_DIMS)", nreps,
            GX_MAX_DIMS);
    GX__ARG(reps || nreps == 0, "gx_tile: reps is NULL");
    int nd = a->ndim > nreps ? a->ndim : nreps, lead = nd - a->ndim;
    int64_t rp[GX_MAX_DIMS] = {0}, ash[GX_MAX_DIMS] = {0}, ast[GX_MAX_DIMS] = {0}, shape[GX_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++) {
        int k = d - (nd - nreps);
        rp[d] = k >= 0 ? reps[k] : 1;
        GX__ARG(rp[d] >= 0, "gx_tile: reps[%d] = %lld is negative", k, (long long)rp[d]);
        ash[d] = d < lead ? 1 : a->shape[d - lead];
        ast[d] = ash[d] == 1 ? 0 : a->strides[d - lead]; /* extent 1: stride 0, so it broadcasts */
        GX__CHECK(mul_extent("gx_tile", ash[d], rp[d], &shape[d]));
    }
    gx_array *r = NULL, *a1 = NULL;
    GX__CHECK(gx_array_empty(a->ctx, a->dtype, nd, shape, &r));
    gx_status s = sub_view(a, nd, ash, ast, 0, &a1); /* a with nd axes */
    int nb = 0;
    for (int d = 0; d < nd; d++)
        nb += rp[d] != 1 && ash[d] != 1;
    if (s == GX_OK && nd + nb <= GX_MAX_DIMS) { /* r as (reps0, n0, ...) <- a1 broadcast */
        int64_t sh[GX_MAX_DIMS];
        bool bc[GX_MAX_DIMS] = {false};
        int k = 0;
        for (int d = 0; d < nd; d++) {
            if (rp[d] != 1 && ash[d] != 1) {
                bc[k] = true;
                sh[k++] = rp[d];
                sh[k++] = ash[d];
            } else
                sh[k++] = shape[d];
        }
        /* an axis of extent 1 is tiled as a1's axis itself (stride 0) */
        s = broadcast_copy(a1, r, k, sh, bc);
    } else if (s == GX_OK)
        s = tile_loop(a1, r, rp);
    gx_array_release(a1);
    return finish(s, r, out);
}

/* ------------------------------------------------------------ pad */

/* One piece of an axis of the result: `len` elements from `dst` on, taken from
 * the input at src, src+step, ... (step 0: one element repeated); fill: the value. */
typedef struct seg {
    int64_t dst, len, src, step;
    bool fill;
} seg;

/* Appends the pieces of [dst, dst+len) whose input positions are j0, j0+1, ...
 * (outside 0..n-1 for a pad), for the mode. */
static int pad_segs(gx_pad_mode mode, int64_t n, int64_t dst, int64_t len, int64_t j0, seg *sg, int k)
{
    if (len == 0)
        return k;
    if (mode == GX_PAD_CONSTANT) {
        sg[k] = (seg){dst, len, 0, 0, true};
        return k + 1;
    }
    if (mode == GX_PAD_EDGE || n == 1) {
        sg[k] = (seg){dst, len, j0 < 0 ? 0 : n - 1, 0, false};
        return k + 1;
    }
    int64_t P = 2 * (n - 1), done = 0;
    while (done < len) {
        int64_t m = ((j0 + done) % P + P) % P, rem = len - done, run;
        if (m < n - 1) { /* ascending: m .. n-2 */
            run = rem < n - 1 - m ? rem : n - 1 - m;
            sg[k++] = (seg){dst + done, run, m, 1, false};
        } else { /* descending: P-m .. 1 */
            run = rem < P - m ? rem : P - m;
            sg[k++] = (seg){dst + done, run, P - m, -1, false};
        }
        done += run;
    }
    return k;
}

/* The pieces of one axis: before pad, the input, after pad.  *sg is malloc'd. */
static gx_status axis_segs(gx_pad_mode mode, int64_t n, int64_t b, int64_t e, seg **sg, int *nseg)
{
    int64_t most = 3;
    if (mode == GX_PAD_REFLECT && n > 1)
        most += (b + e) / (n - 1) + 2;
    if (most > (1 << 20))
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "gx_pad: a reflect pad of %lld + %lld on an axis of %lld needs "
                       "too many reflections",
                       (long long)b, (long long)e, (long long)n);
    *sg = malloc(sizeof(seg) * (size_t)most);
    if (!*sg)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_pad: out of host memory");
    int k = pad_segs(mode, n, 0, b, -b, *sg, 0);
    if (n > 0)
        (*sg)[k++] = (seg){b, n, 0, 1, false};
    *nseg = pad_segs(mode, n, b + n, e, n, *sg, k);
    return GX_OK;
}

/* One box of the result: the product of one piece per axis. */
static gx_status pad_box(gx_array *a, gx_array *r, seg *const *sg, const int *pick, const void *value)
{
    int nd = r->ndim;
    int64_t start[GX_MAX_DIMS], ext[GX_MAX_DIMS], st[GX_MAX_DIMS], off = 0;
    bool fill = false;
    for (int d = 0; d < nd; d++) {
        const seg *g = &sg[d][pick[d]];
        start[d] = g->dst;
        ext[d] = g->len;
        fill |= g->fill;
        st[d] = a->strides[d] * g->step;
        off += g->src * a->strides[d];
    }
    if (fill)
        return put_box(r, start, ext, NULL, value);
    gx_array *v = NULL;
    GX__CHECK(sub_view(a, nd, ext, st, off, &v));
    gx_status s = put_box(r, start, ext, v, NULL);
    gx_array_release(v);
    return s;
}

static gx_status pad_fill(gx_array *a, gx_array *r, gx_pad_mode mode, const int64_t *b, const int64_t *e,
                          const void *value)
{
    int nd = r->ndim, n[GX_MAX_DIMS] = {0}, pick[GX_MAX_DIMS] = {0};
    seg *sg[GX_MAX_DIMS] = {NULL};
    gx_status s = GX_OK;
    for (int d = 0; d < nd && s == GX_OK; d++)
        s = axis_segs(mode, a->shape[d], b[d], e[d], &sg[d], &n[d]);
    bool any = r->size > 0;
    while (s == GX_OK && any) {
        s = pad_box(a, r, sg, pick, value);
        int d = nd - 1;
        for (; d >= 0 && ++pick[d] == n[d]; d--)
            pick[d] = 0;
        any = d >= 0;
    }
    for (int d = 0; d < nd; d++)
        free(sg[d]);
    return s;
}

gx_status gx_pad(gx_array *a, const int64_t *before, const int64_t *after, gx_pad_mode mode, const void *value,
                 gx_array **out)
{
    GX__ARG(out, "gx_pad: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_pad"));
    GX__ARG((before && after) || a->ndim == 0, "gx_pad: before and after must not be NULL (ndim entries each)");
    GX__ARG(mode == GX_PAD_CONSTANT || mode == GX_PAD_EDGE || mode == GX_PAD_REFLECT,
            "gx_pad: mode %d is not a gx_pad_mode (GX_PAD_CONSTANT, GX_PAD_EDGE, GX_PAD_REFLECT)", (int)mode);
    int64_t shape[GX_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++) {
        GX__ARG(before[d] >= 0 && after[d] >= 0, "gx_pad: axis %d has a negative pad (%lld before, %lld after)", d,
                (long long)before[d], (long long)after[d]);
        if (mode != GX_PAD_CONSTANT && a->shape[d] == 0 && before[d] + after[d] > 0)
            return gx__err(GX_ERR_SHAPE, "gx_pad: axis %d is empty: %s cannot pad it (use GX_PAD_CONSTANT)", d,
                           mode == GX_PAD_EDGE ? "GX_PAD_EDGE" : "GX_PAD_REFLECT");
        if (__builtin_add_overflow(before[d], a->shape[d], &shape[d]) ||
            __builtin_add_overflow(shape[d], after[d], &shape[d]))
            return gx__err(GX_ERR_SHAPE, "gx_pad: the result's extent along axis %d overflows", d);
    }
    unsigned char zero[16] = {0};
    gx_array *r = NULL;
    GX__CHECK(gx_array_empty(a->ctx, a->dtype, a->ndim, shape, &r));
    return finish(pad_fill(a, r, mode, before, after, value ? value : zero), r, out);
}

/* ------------------------------------------------------------ flip / roll */

gx_status gx_flip(gx_array *a, int axis, gx_array **out)
{
    GX__ARG(out, "gx_flip: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_flip"));
    int ax = -1;
    if (axis != GX_ALL_AXES)
        GX__CHECK(norm_axis("gx_flip", axis, a->ndim, &ax));
    int64_t st[GX_MAX_DIMS], off = 0;
    for (int d = 0; d < a->ndim; d++) {
        bool rev = (ax < 0 || d == ax) && a->shape[d] > 0;
        st[d] = rev ? -a->strides[d] : a->strides[d];
        off += rev ? (a->shape[d] - 1) * a->strides[d] : 0;
    }
    gx_array *v = NULL;
    GX__CHECK(sub_view(a, a->ndim, a->shape, st, off, &v));
    gx_status s = gx_array_clone(v, GX_DTYPE_DEFAULT, out);
    gx_array_release(v);
    return s;
}

/* Rolls a (dense when flat) along ax into r: two copies. */
static gx_status roll_into(gx_array *a, gx_array *r, int64_t shift, int ax)
{
    int64_t n = a->shape[ax];
    if (a->size == 0)
        return GX_OK;
    int64_t k = ((shift % n) + n) % n, start[GX_MAX_DIMS] = {0}, ext[GX_MAX_DIMS];
    gx_slice sl[GX_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++)
        sl[d] = GX_ALL;
    gx_status s = GX_OK;
    for (int part = 0; part < 2 && s == GX_OK; part++) {
        /* part 0: a[:n-k] -> r[k:]; part 1: a[n-k:] -> r[:k] */
        sl[ax] = part == 0 ? (gx_slice){0, n - k, 1} : (gx_slice){n - k, n, 1};
        start[ax] = part == 0 ? k : 0;
        gx_array *v = NULL;
        s = gx_array_view(a, sl, &v);
        if (s == GX_OK) {
            memcpy(ext, v->shape, sizeof ext);
            s = put_box(r, start, ext, v, NULL);
        }
        gx_array_release(v);
    }
    return s;
}

gx_status gx_roll(gx_array *a, int64_t shift, int axis, gx_array **out)
{
    GX__ARG(out, "gx_roll: out must not be NULL");
    *out = NULL;
    GX__CHECK(gx__array_check(a, "gx_roll"));
    gx_array *r = NULL, *src = NULL, *flat = NULL, *rflat = NULL;
    if (axis != GX_ALL_AXES) {
        int ax = 0;
        GX__CHECK(norm_axis("gx_roll", axis, a->ndim, &ax));
        GX__CHECK(gx_array_empty(a->ctx, a->dtype, a->ndim, a->shape, &r));
        return finish(roll_into(a, r, shift, ax), r, out);
    }
    /* axis=None: roll the flattened array (a dense copy first when a is a view) */
    GX__CHECK(gx_array_empty(a->ctx, a->dtype, a->ndim, a->shape, &r));
    int64_t n = a->size;
    gx_status s = gx__array_contiguous(a) ? gx_array_reshape(a, 1, &n, &flat) : gx_array_clone(a, 0, &src);
    if (s == GX_OK && src)
        s = gx_array_reshape(src, 1, &n, &flat);
    if (s == GX_OK)
        s = gx_array_reshape(r, 1, &n, &rflat);
    if (s == GX_OK)
        s = roll_into(flat, rflat, shift, 0);
    gx_array_release(flat);
    gx_array_release(rflat);
    gx_array_release(src);
    return finish(s, r, out);
}
