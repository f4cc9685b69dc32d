/* dist_checks.h -- the checks of gx/dist.h, run by every rank of a communicator of any
 * size: tests/test_dist.c runs them on a communicator of size 1 (the normal suite),
 * tests/mpi/dist_ranks.c under `mpirun -n N` (N = 1..4).  Each rank builds the whole
 * input itself (deterministic), so every distributed result is compared with gx's
 * single-process call on the whole array, on the same context.  Failures are counted
 * in dxt_failures and printed with the rank; a check never returns early from a
 * collective step that its peers take (the checks are the same on every rank and
 * gx_dist's errors are collective), so one failure does not hang the others.
 * Included once per program (static functions). */
#ifndef GX_DIST_CHECKS_H
#define GX_DIST_CHECKS_H
#include "gx.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per thread: tests/mpi/dist_ranks.c may run one rank per thread (gx_comm_from_ctxs). */
static _Thread_local int dxt_failures, dxt_rank, dxt_size;

#define DXT_FAIL(...)                                                       \
    do {                                                                    \
        fprintf(stderr, "%s:%d: rank %d/%d FAILED: ", __FILE__, __LINE__, dxt_rank, dxt_size); \
        fprintf(stderr, __VA_ARGS__);                                       \
        fprintf(stderr, "\n");                                              \
        dxt_failures++;                                                     \
    } while (0)
#define DXT_CHECK(c)                   \
    do {                               \
        if (!(c))                      \
            DXT_FAIL("%s", #c);        \
    } while (0)
/* A call that must succeed; on failure the rest of the check is skipped (every rank
 * fails it alike: the calls are collective and their errors too). */
#define DXT_OK(e)                                                                                 \
    do {                                                                                          \
        gx_status dxt_s_ = (e);                                                                   \
        if (dxt_s_ != GX_OK) {                                                                    \
            DXT_FAIL("%s -> %s: %s", #e, gx_status_string(dxt_s_), gx_last_error());              \
            return;                                                                               \
        }                                                                                         \
    } while (0)
#define DXT_STATUS(e, want)                                                                       \
    do {                                                                                          \
        gx_clear_error();                                                                         \
        gx_status dxt_s_ = (e);                                                                   \
        if (dxt_s_ != (want))                                                                     \
            DXT_FAIL("%s -> %s, want %s (%s)", #e, gx_status_string(dxt_s_), gx_status_string(want), \
                     gx_last_error());                                                            \
        else if (!gx_last_error()[0])                                                             \
            DXT_FAIL("%s: no message", #e);                                                       \
    } while (0)
#define DXT_MSG_HAS(sub)                                                              \
    do {                                                                              \
        if (!strstr(gx_last_error(), (sub)))                                          \
            DXT_FAIL("message lacks \"%s\": %s", (sub), gx_last_error());             \
    } while (0)

/* ------------------------------------------------------------ inputs and layouts */

/* A deterministic value for element i (seed s) of dtype t, written at p: small
 * integers (exact in every dtype), quarters for floats, a few -0.0 and NaN where
 * `specials`. */
static void dxt_value(gx_dtype t, int64_t i, int s, int specials, void *p)
{
    int64_t v = ((i * 7919 + s * 104729) % 201) - 100;
    double f = (double)v * 0.25;
    if (specials && i % 17 == 5)
        f = -0.0;
    if (specials && i % 29 == 7)
        f = NAN;
    switch (t) {
    case GX_BOOL: *(uint8_t *)p = v > 0; break;
    case GX_I8: *(int8_t *)p = (int8_t)v; break;
    case GX_I16: *(int16_t *)p = (int16_t)v; break;
    case GX_I32: *(int32_t *)p = (int32_t)(v * 1000); break;
    case GX_I64: *(int64_t *)p = v * 3000000000ll; break;
    case GX_U8: *(uint8_t *)p = (uint8_t)(v + 100); break;
    case GX_U16: *(uint16_t *)p = (uint16_t)(v + 100); break;
    case GX_U32: *(uint32_t *)p = (uint32_t)(v + 100) * 1000u; break;
    case GX_U64: *(uint64_t *)p = (uint64_t)(v + 100) * 5000000000ull; break;
    case GX_F32: *(float *)p = (float)f; break;
    case GX_F64: *(double *)p = f; break;
    default: break;
    }
}

static void *dxt_host(gx_dtype t, int64_t n, int seed, int specials)
{
    size_t es = gx_dtype_size(t);
    unsigned char *b = malloc((size_t)n * es + 1);
    for (int64_t i = 0; i < n; i++)
        dxt_value(t, i, seed, specials, b + (size_t)i * es);
    return b;
}

/* Layouts of n rows over the ranks: 0 even (NULL splits), 1 uneven with empty ranks
 * (weights r % 3: rank 0 holds nothing), 2 everything on the last rank. */
enum { DXT_LAYOUTS = 3 };
static const int64_t *dxt_splits(int layout, int64_t n, int64_t *buf)
{
    if (layout == 0)
        return NULL;
    int64_t w = 0, last = dxt_size - 1, given = 0;
    for (int r = 0; r < dxt_size; r++)
        w += layout == 1 ? r % 3 : r == last;
    for (int r = 0; r < dxt_size; r++) {
        int64_t wr = layout == 1 ? r % 3 : r == last;
        buf[r] = w ? n * wr / w : (r == last ? n : 0);
        given += buf[r];
    }
    for (int r = dxt_size - 1; r >= 0; r--)
        if (buf[r] || r == 0 || (layout == 1 ? r % 3 : r == last)) {
            buf[r] += n - given;
            break;
        }
    return buf;
}

/* A sharded gx_dist of host (the whole array, on every rank): by scatter from the last
 * rank (odd layouts) or from each rank's own rows (even ones). */
static gx_status dxt_make_via(gx_comm *comm, gx_dtype t, int ndim, const int64_t *shape, const void *host,
                              int layout, int via, gx_dist **out)
{
    int64_t sp[64], cnt[64];
    const int64_t *splits = dxt_splits(layout, shape[0], sp);
    if (via)
        return gx_dist_from_host(comm, dxt_size - 1, t, ndim, shape, dxt_rank == dxt_size - 1 ? host : NULL, splits,
                                 out);
    int64_t rowb = (int64_t)gx_dtype_size(t), off = 0, ls[GX_MAX_DIMS];
    for (int i = 1; i < ndim; i++)
        rowb *= shape[i];
    for (int r = 0; r < dxt_size; r++)
        cnt[r] = splits ? splits[r] : shape[0] / dxt_size + (r < shape[0] % dxt_size);
    for (int r = 0; r < dxt_rank; r++)
        off += cnt[r];
    memcpy(ls, shape, sizeof(int64_t) * (size_t)ndim);
    ls[0] = cnt[dxt_rank];
    gx_ctx *ctx;
    gx_array *a = NULL;
    gx_comm_ctx(comm, &ctx);
    gx_status s = gx_array_from_host(ctx, t, ndim, ls, (const char *)host + off * rowb, &a);
    if (s == GX_OK)
        s = gx_dist_from_local(comm, a, out);
    gx_array_release(a);
    return s;
}

static gx_status dxt_make(gx_comm *comm, gx_dtype t, int ndim, const int64_t *shape, const void *host, int layout,
                          gx_dist **out)
{
    return dxt_make_via(comm, t, ndim, shape, host, layout, layout % 2, out);
}

/* Compares arrays element by element: dtype and shape equal; integers exactly; floats
 * within tol relative to max(1, |want|) (NaN equals NaN, -0.0 equals 0.0). */
static void dxt_cmp(const char *what, gx_array *got, gx_array *want, double tol)
{
    gx_array_desc g, w;
    if (gx_array_describe(got, &g) || gx_array_describe(want, &w)) {
        DXT_FAIL("%s: describe: %s", what, gx_last_error());
        return;
    }
    if (g.dtype != w.dtype || g.size != w.size || g.ndim != w.ndim) {
        DXT_FAIL("%s: got %s size %lld ndim %d, want %s size %lld ndim %d", what, gx_dtype_name(g.dtype),
                 (long long)g.size, g.ndim, gx_dtype_name(w.dtype), (long long)w.size, w.ndim);
        return;
    }
    size_t es = gx_dtype_size(g.dtype), nb = (size_t)g.size * es;
    unsigned char *a = malloc(nb + 16), *b = malloc(nb + 16);
    gx_array_to_host(got, a, nb);
    gx_array_to_host(want, b, nb);
    int bad = 0;
    for (int64_t i = 0; i < g.size && bad < 3; i++) {
        double x, y;
        if (g.dtype == GX_F32) {
            x = ((float *)a)[i];
            y = ((float *)b)[i];
        } else if (g.dtype == GX_F64) {
            x = ((double *)a)[i];
            y = ((double *)b)[i];
        } else {
            if (memcmp(a + (size_t)i * es, b + (size_t)i * es, es) != 0) {
                DXT_FAIL("%s: element %lld differs (integer bytes)", what, (long long)i);
                bad++;
            }
            continue;
        }
        if (isnan(x) && isnan(y))
            continue;
        if (!(fabs(x - y) <= tol * fmax(1.0, fabs(y)))) {
            DXT_FAIL("%s: element %lld: %.17g, want %.17g", what, (long long)i, x, y);
            bad++;
        }
    }
    free(a);
    free(b);
}

/* The whole of d on the last rank compared with want there (every rank gathers). */
static void dxt_cmp_dist(const char *what, gx_dist *d, gx_array *want, double tol)
{
    gx_array *whole = NULL;
    gx_status s = gx_dist_gather(d, dxt_size - 1, &whole);
    if (s != GX_OK) {
        DXT_FAIL("%s: gather: %s", what, gx_last_error());
        return;
    }
    if (dxt_rank == dxt_size - 1)
        dxt_cmp(what, whole, want, tol);
    else if (whole)
        DXT_FAIL("%s: gather gave an array to a rank that is not the root", what);
    gx_array_release(whole);
}

static const gx_dtype dxt_types[] = {GX_I32, GX_I64, GX_U32, GX_F32, GX_F64};
enum { DXT_NTYPES = sizeof dxt_types / sizeof dxt_types[0] };
static const int64_t dxt_sizes[] = {0, 1, 33, 1000};
enum { DXT_NSIZES = sizeof dxt_sizes / sizeof dxt_sizes[0] };

/* ------------------------------------------------------------ the checks */

static void dxt_layout(gx_comm *comm, gx_ctx *ctx)
{
    for (int ti = 0; ti < DXT_NTYPES; ti++)
        for (int l = 0; l < DXT_LAYOUTS; l++) {
            gx_dtype t = dxt_types[ti];
            int64_t shape[2] = {37, 3}, sp[64], cnt[64];
            void *h = dxt_host(t, 37 * 3, ti, 0);
            gx_dist *d = NULL;
            gx_array *want = NULL, *loc = NULL;
            gx_status s = dxt_make(comm, t, 2, shape, h, l, &d);
            if (s == GX_OK)
                s = gx_array_from_host(ctx, t, 2, shape, h, &want);
            free(h);
            if (s != GX_OK) {
                DXT_FAIL("layout %s/%d: %s", gx_dtype_name(t), l, gx_last_error());
                gx_dist_release(d);
                continue;
            }
            const int64_t *splits = dxt_splits(l, 37, sp);
            gx_dist_desc dd;
            DXT_CHECK(gx_dist_describe(d, &dd) == GX_OK);
            DXT_CHECK(gx_dist_counts(d, cnt) == GX_OK);
            int64_t off = 0;
            for (int r = 0; r < dxt_size; r++) {
                int64_t e = splits ? splits[r] : 37 / dxt_size + (r < 37 % dxt_size);
                DXT_CHECK(cnt[r] == e);
                off += r < dxt_rank ? e : 0;
            }
            DXT_CHECK(dd.dtype == t && dd.ndim == 2 && dd.shape[0] == 37 && dd.shape[1] == 3 && dd.sharded);
            DXT_CHECK(dd.rank == dxt_rank && dd.size == dxt_size && dd.offset == off && dd.rows == cnt[dxt_rank]);
            DXT_CHECK(gx_dist_local(d, &loc) == GX_OK && loc);
            char what[64];
            snprintf(what, sizeof what, "layout %s/%d", gx_dtype_name(t), l);
            dxt_cmp_dist(what, d, want, 0);
            gx_dist_release(d);
            gx_array_release(want);
        }
}

static void dxt_iota_rand(gx_comm *comm, gx_ctx *ctx)
{
    gx_dtype ts[] = {GX_I64, GX_I32, GX_U32, GX_F32, GX_F64};
    for (int ti = 0; ti < 5; ti++)
        for (int l = 0; l < DXT_LAYOUTS; l++) {
            int64_t sp[64];
            gx_dist *d = NULL;
            gx_array *w = NULL;
            DXT_OK(gx_dist_iota(comm, ts[ti], 101, 7, 3, dxt_splits(l, 101, sp), &d));
            DXT_OK(gx_array_iota(ctx, ts[ti], 101, 7, 3, &w));
            dxt_cmp_dist("iota", d, w, 0);
            gx_dist_release(d);
            gx_array_release(w);
        }
    gx_dtype rs[] = {GX_F32, GX_F64};
    for (int ti = 0; ti < 2; ti++)
        for (int l = 0; l < DXT_LAYOUTS; l++) {
            int64_t sp[64], shape[2] = {45, 5};
            gx_rng rng = {1234, 7, 11};
            gx_dist *d = NULL;
            gx_array *w = NULL;
            DXT_OK(gx_dist_rand(comm, rng, rs[ti], 2, shape, dxt_splits(l, 45, sp), &d));
            DXT_OK(gx_rand(ctx, rng, rs[ti], 2, shape, &w));
            dxt_cmp_dist("rand", d, w, 0);
            gx_dist_release(d);
            gx_array_release(w);
        }
}

static void dxt_map(gx_comm *comm, gx_ctx *ctx)
{
    for (int ti = 0; ti < DXT_NTYPES; ti++)
        for (int l = 0; l < DXT_LAYOUTS; l++) {
            gx_dtype t = dxt_types[ti];
            int64_t shape[2] = {29, 4}, rshape[1] = {4};
            void *h = dxt_host(t, 29 * 4, 1, 0), *h2 = dxt_host(t, 29 * 4, 2, 0), *hr = dxt_host(t, 4, 3, 0);
            gx_dist *a = NULL, *b = NULL, *r = NULL, *o = NULL;
            gx_array *wa = NULL, *wb = NULL, *wr = NULL, *w = NULL;
            gx_status s = dxt_make(comm, t, 2, shape, h, l, &a);
            if (s == GX_OK)
                s = dxt_make_via(comm, t, 2, shape, h2, l, 1 - l % 2, &b); /* another constructor, the same splits */
            if (s == GX_OK)
                s = gx_array_from_host(ctx, t, 1, rshape, hr, &wr);
            if (s == GX_OK)
                s = gx_dist_replicated(comm, wr, &r);
            if (s == GX_OK)
                s = gx_array_from_host(ctx, t, 2, shape, h, &wa);
            if (s == GX_OK)
                s = gx_array_from_host(ctx, t, 2, shape, h2, &wb);
            free(h);
            free(h2);
            free(hr);
            if (s == GX_OK) {
                gx_dist *in[3] = {a, b, r};
                gx_array *win[3] = {wa, wb, wr};
                s = gx_dist_map("x, y, z -> x * 2 + y - z", 3, in, NULL, &o);
                if (s == GX_OK)
                    s = gx_map(ctx, "x, y, z -> x * 2 + y - z", 3, win, NULL, &w);
                if (s == GX_OK)
                    dxt_cmp_dist("map", o, w, 0);
            }
            if (s != GX_OK)
                DXT_FAIL("map %s/%d: %s", gx_dtype_name(t), l, gx_last_error());
            gx_dist_release(a), gx_dist_release(b), gx_dist_release(r), gx_dist_release(o);
            gx_array_release(wa), gx_array_release(wb), gx_array_release(wr), gx_array_release(w);
        }
}

/* Reduces the dist and the whole array with op (opts) and compares on every rank. */
static void dxt_red1(gx_ctx *ctx, gx_dist *d, gx_array *w, const char *op, const gx_reduce_opts *o, double tol)
{
    gx_array *g = NULL, *r = NULL, *r0 = NULL;
    gx_status s = gx_dist_reduce(op, d, o, &g);
    if (s == GX_OK)
        s = gx_reduce_to(ctx, op, w, o, &r);
    if (s == GX_OK)
        s = gx_array_reshape(r, 0, NULL, &r0);
    char what[96];
    gx_array_desc wd;
    gx_array_describe(w, &wd);
    snprintf(what, sizeof what, "reduce %s %s n=%lld", op, gx_dtype_name(wd.dtype), (long long)wd.size);
    if (s != GX_OK)
        DXT_FAIL("%s: %s", what, gx_last_error());
    else
        dxt_cmp(what, g, r0, tol);
    gx_array_release(g), gx_array_release(r), gx_array_release(r0);
}

static void dxt_reduce(gx_comm *comm, gx_ctx *ctx)
{
    for (int ti = 0; ti < DXT_NTYPES; ti++)
        for (int ni = 0; ni < DXT_NSIZES; ni++)
            for (int l = 0; l < DXT_LAYOUTS; l++) {
                gx_dtype t = dxt_types[ti];
                int fl = t == GX_F32 || t == GX_F64;
                int64_t n = dxt_sizes[ni];
                void *h = dxt_host(t, n, ni, fl && l == 1);
                gx_dist *d = NULL;
                gx_array *w = NULL;
                gx_status s = dxt_make(comm, t, 1, &n, h, l, &d);
                if (s == GX_OK)
                    s = gx_array_from_host(ctx, t, 1, &n, h, &w);
                free(h);
                if (s != GX_OK) {
                    DXT_FAIL("reduce setup: %s", gx_last_error());
                    continue;
                }
                double tol = t == GX_F32 ? 1e-6 : 1e-12;
                dxt_red1(ctx, d, w, "+", NULL, tol);
                dxt_red1(ctx, d, w, "max", NULL, 0);
                dxt_red1(ctx, d, w, "minimum", NULL, 0);
                dxt_red1(ctx, d, w, "count", NULL, 0);
                if (!fl)
                    dxt_red1(ctx, d, w, "|", NULL, 0);
                if (n)
                    dxt_red1(ctx, d, w, "mean", NULL, tol);
                gx_scalar init = {t, {.i = 0}};
                gx_reduce_opts lo = {.init = &init};
                dxt_red1(ctx, d, w, "a, b -> a + b", &lo, tol);
                /* a finish maps the global value, not each rank's partial */
                gx_reduce_opts fo = {.finish = "s -> s * 2 + 1"};
                dxt_red1(ctx, d, w, "+", &fo, tol);
                dxt_red1(ctx, d, w, "max", &fo, 0);
                if (n) {
                    gx_scalar v1, v2;
                    int64_t i1 = -1, i2 = -2;
                    DXT_OK(gx_dist_find("max", d, &v1, &i1));
                    DXT_OK(gx_findmax(w, &v2, &i2));
                    DXT_CHECK(i1 == i2);
                    DXT_CHECK(v1.dtype == v2.dtype && memcmp(&v1.v, &v2.v, 8) == 0);
                    DXT_OK(gx_dist_find("min", d, &v1, &i1));
                    DXT_OK(gx_findmin(w, &v2, &i2));
                    DXT_CHECK(i1 == i2);
                    DXT_CHECK(v1.dtype == v2.dtype && memcmp(&v1.v, &v2.v, 8) == 0);
                } else {
                    DXT_STATUS(gx_dist_find("min", d, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
                    gx_array *m = NULL;
                    DXT_STATUS(gx_dist_reduce("mean", d, NULL, &m), GX_ERR_INVALID_ARGUMENT);
                    DXT_CHECK(m == NULL);
                }
                /* mapreduce of two inputs */
                gx_dist *in[2] = {d, d};
                gx_array *win[2] = {w, w}, *g = NULL, *r = NULL, *r0 = NULL;
                if (n) {
                    DXT_OK(gx_dist_mapreduce("x, y -> x * y", "+", 2, in, NULL, &g));
                    DXT_OK(gx_mapreduce_to(ctx, "x, y -> x * y", "+", 2, win, NULL, &r));
                    DXT_OK(gx_array_reshape(r, 0, NULL, &r0));
                    dxt_cmp("mapreduce", g, r0, tol);
                }
                gx_array_release(g), gx_array_release(r), gx_array_release(r0);
                gx_dist_release(d);
                gx_array_release(w);
            }
}

static void dxt_scan(gx_comm *comm, gx_ctx *ctx)
{
    const char *ops[] = {"+", "max", "a, b -> a + b"};
    for (int ti = 0; ti < DXT_NTYPES; ti++)
        for (int ni = 0; ni < DXT_NSIZES; ni++)
            for (int l = 0; l < DXT_LAYOUTS; l++)
                for (int oi = 0; oi < 3; oi++)
                    for (int ex = 0; ex < 2; ex++) {
                        gx_dtype t = dxt_types[ti];
                        int64_t n = dxt_sizes[ni];
                        void *h = dxt_host(t, n, ni + 5, 0);
                        gx_dist *d = NULL, *o = NULL;
                        gx_array *w = NULL, *r = NULL;
                        gx_scalar init = {t, {.i = 0}}; /* zero: "+"'s neutral element */
                        if (t == GX_F32 || t == GX_F64)
                            init.v.f = 0;
                        gx_scan_opts so = {.exclusive = ex, .init = oi == 2 || (ex && oi == 0) ? &init : NULL};
                        gx_status s = dxt_make(comm, t, 1, &n, h, l, &d);
                        if (s == GX_OK)
                            s = gx_array_from_host(ctx, t, 1, &n, h, &w);
                        free(h);
                        if (s == GX_OK)
                            s = gx_dist_scan(ops[oi], d, &so, &o);
                        if (s == GX_OK)
                            s = gx_scan(ctx, ops[oi], w, &so, &r);
                        char what[96];
                        snprintf(what, sizeof what, "scan %s %s n=%lld layout %d excl %d", ops[oi], gx_dtype_name(t),
                                 (long long)n, l, ex);
                        if (s != GX_OK)
                            DXT_FAIL("%s: %s", what, gx_last_error());
                        else
                            dxt_cmp_dist(what, o, r, t == GX_F32 ? 1e-5 : 1e-12);
                        gx_dist_release(d), gx_dist_release(o);
                        gx_array_release(w), gx_array_release(r);
                    }
}

static void dxt_filter(gx_comm *comm, gx_ctx *ctx)
{
    for (int ti = 0; ti < DXT_NTYPES; ti++)
        for (int ni = 0; ni < DXT_NSIZES; ni++)
            for (int l = 0; l < DXT_LAYOUTS; l++) {
                gx_dtype t = dxt_types[ti];
                int64_t n = dxt_sizes[ni], shape[2] = {n, 2};
                void *h = dxt_host(t, 2 * n, ni, 0);
                gx_dist *d = NULL, *o = NULL;
                gx_array *w = NULL, *r = NULL;
                /* keeps about a third; u32 values are 0..200000 */
                const char *pred = t == GX_U32 ? "x -> x > 130000" : "x -> x > 30";
                gx_status s = dxt_make(comm, t, 2, shape, h, l, &d);
                if (s == GX_OK)
                    s = gx_array_from_host(ctx, t, 2, shape, h, &w);
                free(h);
                if (s == GX_OK)
                    s = gx_dist_filter(pred, d, NULL, &o);
                if (s == GX_OK)
                    s = gx_filter(ctx, pred, 1, &w, NULL, &r);
                if (s != GX_OK)
                    DXT_FAIL("filter: %s", gx_last_error());
                else {
                    gx_dist_desc od;
                    gx_dist_describe(o, &od);
                    DXT_CHECK(od.ndim == 1 && od.sharded);
                    dxt_cmp_dist("filter", o, r, 0);
                }
                gx_dist_release(d), gx_dist_release(o);
                gx_array_release(w), gx_array_release(r);
            }
}

static void dxt_sort(gx_comm *comm, gx_ctx *ctx)
{
    gx_dtype ts[] = {GX_I32, GX_I64, GX_U32, GX_U8, GX_F32, GX_F64};
    int64_t sizes[] = {0, 1, 33, 1000, 5000};
    for (int ti = 0; ti < 6; ti++)
        for (int ni = 0; ni < 5; ni++)
            for (int l = 0; l < DXT_LAYOUTS; l++)
                for (int desc = 0; desc < 2; desc++) {
                    gx_dtype t = ts[ti];
                    int64_t n = sizes[ni];
                    void *h = dxt_host(t, n, ni, 1);
                    gx_dist *d = NULL, *o = NULL;
                    gx_array *w = NULL, *r = NULL;
                    gx_sort_opts so = {.descending = desc};
                    gx_status s = dxt_make(comm, t, 1, &n, h, l, &d);
                    if (s == GX_OK)
                        s = gx_array_from_host(ctx, t, 1, &n, h, &w);
                    free(h);
                    if (s == GX_OK)
                        s = gx_dist_sort(d, &so, &o);
                    if (s == GX_OK)
                        s = gx_sort(ctx, w, &so, &r);
                    char what[96];
                    snprintf(what, sizeof what, "sort %s n=%lld layout %d desc %d", gx_dtype_name(t), (long long)n, l,
                             desc);
                    if (s != GX_OK)
                        DXT_FAIL("%s: %s", what, gx_last_error());
                    else
                        dxt_cmp_dist(what, o, r, 0);
                    gx_dist_release(d), gx_dist_release(o);
                    gx_array_release(w), gx_array_release(r);
                }
    /* 2-d: rows sorted locally; flatten: one global sort. */
    int64_t shape[2] = {23, 5}, n = 115;
    void *h = dxt_host(GX_F32, n, 9, 1);
    gx_dist *d = NULL, *o = NULL, *o2 = NULL;
    gx_array *w = NULL, *r = NULL, *r2 = NULL;
    gx_sort_opts fl = {.flatten = 1};
    gx_status s = dxt_make(comm, GX_F32, 2, shape, h, 1, &d);
    free(h);
    if (s == GX_OK)
        s = gx_dist_gather(d, dxt_size - 1, &w) == GX_OK && gx_dist_sort(d, NULL, &o) == GX_OK &&
                    gx_dist_sort(d, &fl, &o2) == GX_OK
                ? GX_OK
                : GX_ERR_INTERNAL;
    if (s == GX_OK && w) {
        DXT_OK(gx_sort(ctx, w, NULL, &r));
        DXT_OK(gx_sort(ctx, w, &fl, &r2));
    }
    if (s != GX_OK)
        DXT_FAIL("sort 2-d: %s", gx_last_error());
    else {
        dxt_cmp_dist("sort rows", o, r, 0);
        dxt_cmp_dist("sort flatten", o2, r2, 0);
    }
    gx_dist_release(d), gx_dist_release(o), gx_dist_release(o2);
    gx_array_release(w), gx_array_release(r), gx_array_release(r2);
}

static void dxt_matmul(gx_comm *comm, gx_ctx *ctx)
{
    gx_dtype ts[] = {GX_F32, GX_F64};
    for (int ti = 0; ti < 2; ti++)
        for (int l = 0; l < DXT_LAYOUTS; l++) {
            gx_dtype t = ts[ti];
            int64_t as[2] = {19, 7}, bs[2] = {7, 6};
            void *ha = dxt_host(t, 19 * 7, 1, 0), *hb = dxt_host(t, 7 * 6, 2, 0);
            gx_dist *a = NULL, *b = NULL, *c = NULL;
            gx_array *wa = NULL, *wb = NULL, *wc = NULL;
            gx_status s = dxt_make(comm, t, 2, as, ha, l, &a);
            if (s == GX_OK)
                s = gx_array_from_host(ctx, t, 2, as, ha, &wa);
            if (s == GX_OK)
                s = gx_array_from_host(ctx, t, 2, bs, hb, &wb);
            if (s == GX_OK)
                s = gx_dist_replicated(comm, wb, &b);
            if (s == GX_OK)
                s = gx_dist_matmul(a, b, NULL, &c);
            if (s == GX_OK)
                s = gx_matmul(wa, wb, NULL, &wc);
            free(ha);
            free(hb);
            if (s != GX_OK)
                DXT_FAIL("matmul %s/%d: %s", gx_dtype_name(t), l, gx_last_error());
            else
                dxt_cmp_dist("matmul", c, wc, t == GX_F32 ? 1e-5 : 1e-12);
            if (s == GX_OK) {
                gx_dist *bad = NULL;
                DXT_STATUS(gx_dist_matmul(b, b, NULL, &bad), GX_ERR_INVALID_ARGUMENT);
                DXT_STATUS(gx_dist_matmul(a, a, NULL, &bad), GX_ERR_INVALID_ARGUMENT);
                DXT_CHECK(bad == NULL);
            }
            gx_dist_release(a), gx_dist_release(b), gx_dist_release(c);
            gx_array_release(wa), gx_array_release(wb), gx_array_release(wc);
        }
}

static void dxt_files(gx_comm *comm, gx_ctx *ctx, const char *dir)
{
    char prefix[512], path[600];
    snprintf(prefix, sizeof prefix, "%s/dxt_shards_%d", dir, dxt_size);
    int64_t shape[2] = {21, 3};
    void *h = dxt_host(GX_I64, 63, 4, 0);
    gx_dist *d = NULL, *e = NULL;
    gx_array *w = NULL;
    DXT_OK(dxt_make(comm, GX_I64, 2, shape, h, 1, &d));
    DXT_OK(gx_array_from_host(ctx, GX_I64, 2, shape, h, &w));
    free(h);
    DXT_OK(gx_dist_save(d, prefix));
    DXT_OK(gx_dist_load(comm, prefix, &e));
    int64_t c1[64], c2[64];
    gx_dist_counts(d, c1);
    gx_dist_counts(e, c2);
    DXT_CHECK(memcmp(c1, c2, sizeof(int64_t) * (size_t)dxt_size) == 0);
    dxt_cmp_dist("load", e, w, 0);
    gx_dist_release(e);
    e = NULL;
    /* One rank's file missing: every rank fails, the missing path named on its rank. */
    snprintf(path, sizeof path, "%s.%d-of-%d.gxd", prefix, dxt_size - 1, dxt_size);
    if (dxt_rank == dxt_size - 1)
        remove(path);
    DXT_STATUS(gx_dist_load(comm, prefix, &e), GX_ERR_IO);
    if (dxt_rank == dxt_size - 1)
        DXT_MSG_HAS(path);
    DXT_CHECK(e == NULL);
    char nowhere[600];
    snprintf(nowhere, sizeof nowhere, "%s/no/such/dir/x", dir);
    DXT_STATUS(gx_dist_save(d, nowhere), GX_ERR_IO);
    DXT_MSG_HAS("no/such/dir");
    for (int r = 0; r < dxt_size; r++) {
        snprintf(path, sizeof path, "%s.%d-of-%d.gxd", prefix, r, dxt_size);
        if (r == dxt_rank)
            remove(path);
    }
    gx_dist_release(d);
    gx_array_release(w);
}

static void dxt_bad(gx_comm *comm, gx_ctx *ctx)
{
    int64_t n = 10, bad[64], sp[64];
    gx_dist *d = NULL, *e = NULL, *o = NULL;
    for (int r = 0; r < dxt_size; r++)
        bad[r] = r == 0 ? 11 : 0;
    DXT_STATUS(gx_dist_iota(comm, GX_I32, n, 0, 1, bad, &d), GX_ERR_SHAPE);
    DXT_CHECK(d == NULL);
    DXT_STATUS(gx_dist_iota(comm, GX_C64, n, 0, 1, NULL, &d), GX_ERR_DTYPE);
    int64_t shape[2] = {4, 2};
    DXT_STATUS(gx_dist_from_host(comm, 0, GX_F32, 2, shape, NULL, NULL, &d), GX_ERR_INVALID_ARGUMENT);
    DXT_STATUS(gx_dist_from_host(comm, dxt_size, GX_F32, 2, shape, NULL, NULL, &d), GX_ERR_INVALID_ARGUMENT);
    /* Splits that differ between sharded inputs. */
    DXT_OK(gx_dist_iota(comm, GX_F32, 12, 0, 1, NULL, &d));
    DXT_OK(gx_dist_iota(comm, GX_F32, 12, 0, 1, dxt_splits(2, 12, sp), &e));
    gx_dist *in[2] = {d, e};
    if (dxt_size > 1) {
        DXT_STATUS(gx_dist_map("x, y -> x + y", 2, in, NULL, &o), GX_ERR_SHAPE);
        DXT_MSG_HAS("input 2 is split (");
        DXT_MSG_HAS("input 1 is split (");
    }
    /* A replicated input as long as the sharded axis would broadcast across it. */
    gx_array *full = NULL;
    gx_dist *rep = NULL;
    DXT_OK(gx_array_iota(ctx, GX_F32, 12, 0, 1, &full));
    DXT_OK(gx_dist_replicated(comm, full, &rep));
    gx_dist *in2[2] = {d, rep};
    DXT_STATUS(gx_dist_map("x, y -> x + y", 2, in2, NULL, &o), GX_ERR_SHAPE);
    DXT_MSG_HAS("broadcast across the split axis");
    DXT_STATUS(gx_dist_reduce("+", NULL, NULL, &full), GX_ERR_INVALID_ARGUMENT);
    full = NULL;
    int ax = 0;
    gx_reduce_opts ro = {.axes = &ax, .naxes = 1};
    gx_array *g = NULL;
    DXT_STATUS(gx_dist_reduce("+", d, &ro, &g), GX_ERR_UNSUPPORTED);
    DXT_STATUS(gx_dist_find("median", d, NULL, NULL), GX_ERR_INVALID_ARGUMENT);
    DXT_STATUS(gx_dist_scan("a, b -> a + b", d, NULL, &o), GX_ERR_INVALID_ARGUMENT);
    /* Pieces whose shapes differ past axis 0 (only the last rank's differs), and a
     * NULL piece on rank 0 only: every rank fails. */
    int64_t ls[2] = {2, dxt_rank == dxt_size - 1 && dxt_size > 1 ? 4 : 3}, ok2[2] = {dxt_rank, 3};
    gx_array *p = NULL, *q = NULL;
    gx_dist *p2 = NULL;
    DXT_OK(gx_array_zeros(ctx, GX_F32, 2, ls, &p));
    DXT_OK(gx_array_zeros(ctx, GX_F32, 2, ok2, &q));
    if (dxt_size > 1) {
        DXT_STATUS(gx_dist_from_local(comm, p, &o), GX_ERR_SHAPE);
        DXT_MSG_HAS("past axis 0");
        DXT_STATUS(gx_dist_from_local(comm, dxt_rank == 0 ? NULL : q, &o), GX_ERR_INVALID_ARGUMENT);
        if (dxt_rank)
            DXT_MSG_HAS("rank 0 failed");
    }
    DXT_OK(gx_dist_from_local(comm, q, &p2));
    DXT_STATUS(gx_dist_scan("+", p2, NULL, &o), GX_ERR_UNSUPPORTED); /* along the split axis of a 2-d array */
    DXT_CHECK(o == NULL);
    gx_dist_release(p2);
    gx_array_release(p);
    gx_array_release(q);
    gx_dist_release(rep);
    gx_dist_release(d);
    gx_dist_release(e);
    DXT_STATUS(gx_dist_release(d), GX_ERR_INVALID_HANDLE);
}

/* Pieces that are views: each rank's rows as a negatively strided view (its rows
 * stored in reverse) and as every second row of a larger array; the dist must equal
 * the whole array, through gather, map, reduce, scan and sort. */
static void dxt_views(gx_comm *comm, gx_ctx *ctx)
{
    int64_t n = 53, sp[64], cnt[64], off = 0;
    const int64_t *splits = dxt_splits(1, n, sp);
    for (int r = 0; r < dxt_size; r++)
        cnt[r] = splits ? splits[r] : n / dxt_size + (r < n % dxt_size);
    for (int r = 0; r < dxt_rank; r++)
        off += cnt[r];
    int64_t m = cnt[dxt_rank], m2 = 2 * m;
    float *h = dxt_host(GX_F32, n, 3, 0), *rev = malloc(sizeof(float) * (size_t)(m2 + 1));
    for (int64_t i = 0; i < m; i++)
        rev[i] = h[off + m - 1 - i];
    gx_array *w = NULL, *store = NULL, *view = NULL, *store2 = NULL, *view2 = NULL;
    DXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &w));
    DXT_OK(gx_array_from_host(ctx, GX_F32, 1, &m, rev, &store));
    gx_slice back = {-1, m ? -m - 1 : 0, -1}, every2 = {0, GX_END, 2};
    if (m)
        DXT_OK(gx_array_view(store, &back, &view));
    else
        DXT_OK(gx_array_reshape(store, 1, &m, &view));
    for (int64_t i = 0; i < m2; i++)
        rev[i] = i % 2 ? -1.0f : h[off + i / 2];
    DXT_OK(gx_array_from_host(ctx, GX_F32, 1, &m2, rev, &store2));
    DXT_OK(gx_array_view(store2, &every2, &view2));
    free(h);
    free(rev);
    gx_array *pieces[2] = {view, view2};
    for (int k = 0; k < 2; k++) {
        gx_dist *d = NULL, *o = NULL, *sc = NULL, *so = NULL;
        gx_array *g = NULL, *r = NULL, *r0 = NULL, *wm = NULL, *ws = NULL, *wso = NULL;
        gx_status s = gx_dist_from_local(comm, pieces[k], &d);
        if (s == GX_OK)
            dxt_cmp_dist("view piece", d, w, 0);
        if (s == GX_OK)
            s = gx_dist_map("x -> x * 3 - 1", 1, &d, NULL, &o);
        if (s == GX_OK)
            s = gx_map(ctx, "x -> x * 3 - 1", 1, &w, NULL, &wm);
        if (s == GX_OK)
            dxt_cmp_dist("view map", o, wm, 0);
        if (s == GX_OK)
            s = gx_dist_reduce("+", d, NULL, &g);
        if (s == GX_OK)
            s = gx_reduce_to(ctx, "+", w, NULL, &r);
        if (s == GX_OK)
            s = gx_array_reshape(r, 0, NULL, &r0);
        if (s == GX_OK)
            dxt_cmp("view reduce", g, r0, 1e-6);
        if (s == GX_OK)
            s = gx_dist_scan("+", d, NULL, &sc);
        if (s == GX_OK)
            s = gx_scan(ctx, "+", w, NULL, &ws);
        if (s == GX_OK)
            dxt_cmp_dist("view scan", sc, ws, 1e-5);
        if (s == GX_OK)
            s = gx_dist_sort(d, NULL, &so);
        if (s == GX_OK)
            s = gx_sort(ctx, w, NULL, &wso);
        if (s == GX_OK)
            dxt_cmp_dist("view sort", so, wso, 0);
        if (s != GX_OK)
            DXT_FAIL("views %d: %s", k, gx_last_error());
        gx_dist_release(d), gx_dist_release(o), gx_dist_release(sc), gx_dist_release(so);
        gx_array *rel[] = {g, r, r0, wm, ws, wso};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
            gx_array_release(rel[i]);
    }
    gx_array_release(view), gx_array_release(view2), gx_array_release(store), gx_array_release(store2);
    gx_array_release(w);
}

/* Every check; returns the number of failures on this rank. */
__attribute__((unused)) static int dxt_all(gx_comm *comm, const char *dir)
{
    gx_ctx *ctx;
    gx_comm_rank(comm, &dxt_rank);
    gx_comm_size(comm, &dxt_size);
    gx_comm_ctx(comm, &ctx);
    dxt_layout(comm, ctx);
    dxt_views(comm, ctx);
    dxt_iota_rand(comm, ctx);
    dxt_map(comm, ctx);
    dxt_reduce(comm, ctx);
    dxt_scan(comm, ctx);
    dxt_filter(comm, ctx);
    dxt_sort(comm, ctx);
    dxt_matmul(comm, ctx);
    dxt_files(comm, ctx, dir);
    dxt_bad(comm, ctx);
    return dxt_failures;
}
#endif
