/* test_graph.c -- gx_graph_*: a 10-call chain (maps, reductions into 0-d device
 * arrays, a scan, a copy, a mapreduce, a map over a negative-stride view) issued
 * directly and recorded + replayed with new input contents, both against a host
 * reference computed exactly (small integers in f64 / i64); temporaries made and
 * released inside a recording; calls that wait refused; bad input. */
#include "gx_test.h"

#include <math.h>
#include <string.h>

enum { CH_NOUT = 9 };

typedef struct chain {
    gx_dtype dt;
    int64_t n;
    gx_array *x, *y, *z, *w, *u, *v, *q;
    gx_array *s, *mx, *t, *mn; /* 0-d results */
} chain;

static gx_status chain_make(gx_ctx *ctx, gx_dtype dt, int64_t n, chain *c)
{
    memset(c, 0, sizeof *c);
    c->dt = dt;
    c->n = n;
    gx_array **a1[] = {&c->x, &c->y, &c->z, &c->w, &c->u, &c->v, &c->q};
    for (size_t i = 0; i < sizeof a1 / sizeof a1[0]; i++)
        GX_TRY(gx_array_zeros(ctx, dt, 1, &n, a1[i]));
    gx_array **a0[] = {&c->s, &c->mx, &c->t, &c->mn};
    for (size_t i = 0; i < sizeof a0 / sizeof a0[0]; i++)
        GX_TRY(gx_array_zeros(ctx, dt, 0, NULL, a0[i]));
    return GX_OK;
}

static void chain_free(chain *c)
{
    gx_array *all[] = {c->x, c->y, c->z, c->w, c->u, c->v, c->q, c->s, c->mx, c->t, c->mn};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
}

/* The ten calls.  The result of each feeds later ones, so an op replayed out of order
 * or with stale arguments shows in the values. */
static gx_status chain_run(gx_ctx *ctx, chain *c)
{
    GX_TRY(gx_map_into(ctx, "x -> 2*x + 1", 1, &c->x, NULL, c->y));                             /* 1 */
    GX_TRY(gx_map_into(ctx, "x, y -> x*y - 3", 2, (gx_array *[]){c->x, c->y}, NULL, c->z));     /* 2 */
    GX_TRY(gx_reduce_into(ctx, "+", c->z, NULL, c->s));                                         /* 3 */
    GX_TRY(gx_scan_into(ctx, "+", c->z, NULL, c->w));                                           /* 4 */
    GX_TRY(gx_reduce_into(ctx, "max", c->w, NULL, c->mx));                                      /* 5 */
    GX_TRY(gx_map_into(ctx, "w, m -> m - w", 2, (gx_array *[]){c->w, c->mx}, NULL, c->u));      /* 6 */
    GX_TRY(gx_array_copy_into(c->u, c->v));                                                     /* 7 */
    GX_TRY(gx_mapreduce_into(ctx, "a, b -> a*b", "+", 2, (gx_array *[]){c->v, c->x}, NULL, c->t)); /* 8 */
    gx_array *rev = NULL;
    gx_slice sl = {.start = -1, .stop = GX_END, .step = -1};
    GX_TRY(gx_array_view(c->y, &sl, &rev));
    gx_status s = gx_map_into(ctx, "x -> x * 3 - c", 1, &rev,
                              &(gx_map_opts){.consts = (gx_const[]){{"c", {.dtype = GX_I32, .v.i = 5}}}, .nconsts = 1},
                              c->q); /* 9 */
    gx_array_release(rev);
    GX_TRY(s);
    return gx_reduce_into(ctx, "min", c->q, NULL, c->mn); /* 10 */
}

/* The same chain on the host, in long double (every value an integer below 2^53). */
typedef struct chain_ref {
    double *y, *z, *w, *u, *q;
    double s, mx, t, mn;
} chain_ref;

static void chain_host(const double *x, int64_t n, chain_ref *r)
{
    double acc = 0;
    r->s = 0;
    r->mx = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        r->y[i] = 2 * x[i] + 1;
        r->z[i] = x[i] * r->y[i] - 3;
        r->s += r->z[i];
        acc += r->z[i];
        r->w[i] = acc;
        r->mx = r->w[i] > r->mx ? r->w[i] : r->mx;
    }
    r->t = 0;
    r->mn = INFINITY;
    for (int64_t i = 0; i < n; i++) {
        r->u[i] = r->mx - r->w[i];
        r->t += r->u[i] * x[i];
        r->q[i] = r->y[n - 1 - i] * 3 - 5;
        r->mn = r->q[i] < r->mn ? r->q[i] : r->mn;
    }
}

static double get0(gx_array *a)
{
    double d = NAN;
    int64_t none[1] = {0};
    gx_array_desc ds;
    if (gx_array_describe(a, &ds) != GX_OK)
        return NAN;
    if (ds.dtype == GX_F64 && gx_array_get(a, none, &d) == GX_OK)
        return d;
    int64_t i = 0;
    if (ds.dtype == GX_I64 && gx_array_get(a, none, &i) == GX_OK)
        return (double)i;
    return NAN;
}

static void get1(gx_array *a, int64_t n, double *out)
{
    gx_array *d = NULL;
    GXT_OK(gx_array_clone(a, GX_F64, &d));
    GXT_OK(gx_array_to_host(d, out, (size_t)n * 8));
    gx_array_release(d);
}

static void chain_check(chain *c, const chain_ref *r, const char *what)
{
    int64_t n = c->n;
    double *h = malloc((size_t)n * 8);
    struct {
        gx_array *a;
        const double *ref;
        const char *name;
    } v[] = {{c->y, r->y, "y"}, {c->z, r->z, "z"}, {c->w, r->w, "w"}, {c->u, r->u, "u"},
             {c->v, r->u, "v"}, {c->q, r->q, "q"}};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        get1(v[k].a, n, h);
        for (int64_t i = 0; i < n; i++)
            if (h[i] != v[k].ref[i]) {
                GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld %s[%lld] = %.17g, host %.17g", what, (long long)n,
                            v[k].name, (long long)i, h[i], v[k].ref[i]);
                break;
            }
    }
    double got[4] = {get0(c->s), get0(c->mx), get0(c->t), get0(c->mn)};
    double want[4] = {r->s, r->mx, r->t, r->mn};
    for (int k = 0; k < 4; k++)
        if (got[k] != want[k])
            GXT_FAIL_AT(__FILE__, __LINE__, "%s n=%lld scalar %d = %.17g, host %.17g", what, (long long)n, k, got[k],
                        want[k]);
    free(h);
}

/* Writes hx (f64) into c->x, converted to its dtype. */
static void set_input(gx_ctx *ctx, chain *c, const double *hx)
{
    gx_array *t = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 1, &c->n, hx, &t));
    gx_array *conv = NULL;
    GXT_OK(gx_array_clone(t, c->dt, &conv));
    GXT_OK(gx_array_copy_into(conv, c->x));
    gx_array_release(conv);
    gx_array_release(t);
}

static void random_input(int64_t n, double *hx)
{
    for (int64_t i = 0; i < n; i++)
        hx[i] = (double)((int)(gxt_rand01() * 17) - 8);
}

GXT_TEST(graph_chain10_replay_equals_direct_and_host)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t sizes[] = {1, 2, 31, 32, 33, 1000, 4097, 65536};
    static const gx_dtype dts[] = {GX_F64, GX_I64};
    for (size_t di = 0; di < 2; di++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            int64_t n = sizes[si];
            chain direct, rec;
            GXT_OK(chain_make(ctx, dts[di], n, &direct));
            GXT_OK(chain_make(ctx, dts[di], n, &rec));
            double *hx = malloc((size_t)n * 8), *buf = malloc((size_t)n * 8 * 5);
            chain_ref r = {buf, buf + n, buf + 2 * n, buf + 3 * n, buf + 4 * n, 0, 0, 0, 0};
            /* Record first: the recorded calls must not run (rec's outputs stay zero). */
            gx_graph *g = NULL;
            GXT_OK(gx_graph_begin(ctx));
            GXT_OK(chain_run(ctx, &rec));
            GXT_OK(gx_graph_end(ctx, &g));
            int64_t nops = 0;
            GXT_OK(gx_graph_size(g, &nops));
            GXT_CHECK(nops >= 10);
            for (int round = 0; round < 3; round++) {
                random_input(n, hx);
                chain_host(hx, n, &r);
                set_input(ctx, &direct, hx);
                set_input(ctx, &rec, hx);
                GXT_OK(chain_run(ctx, &direct));
                GXT_OK(gx_graph_launch(g));
                chain_check(&direct, &r, "direct");
                chain_check(&rec, &r, "graph replay");
            }
            GXT_OK(gx_graph_destroy(g));
            chain_free(&direct);
            chain_free(&rec);
            free(hx);
            free(buf);
        }
    }
}

/* A temporary made and released inside the recording keeps its memory for the graph:
 * arrays made after gx_graph_end must not share it. */
GXT_TEST(graph_keeps_temporaries)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 333;
    float h[333], o[333];
    for (int i = 0; i < n; i++)
        h[i] = (float)(i % 7) - 3;
    gx_array *x = NULL, *out = NULL, *tmp = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, h, &x));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &out));
    gx_graph *g = NULL;
    GXT_OK(gx_graph_begin(ctx));
    GXT_OK(gx_map(ctx, "x -> x + 10", 1, &x, NULL, &tmp));
    GXT_OK(gx_map_into(ctx, "t -> t * 2", 1, &tmp, NULL, out));
    GXT_OK(gx_array_release(tmp));
    GXT_OK(gx_graph_end(ctx, &g));
    gx_array *junk[4] = {0};
    for (int k = 0; k < 4; k++)
    {
        GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &junk[k]));
        GXT_OK(gx_array_fill_f64(junk[k], 999.0));
    }
    GXT_OK(gx_graph_launch(g));
    GXT_OK(gx_array_to_host(out, o, sizeof o));
    for (int i = 0; i < n; i++)
        if (o[i] != (h[i] + 10) * 2) {
            GXT_FAIL_AT(__FILE__, __LINE__, "out[%d] = %g, want %g", i, o[i], (h[i] + 10) * 2);
            break;
        }
    for (int k = 0; k < 4; k++) {
        float jv[333];
        GXT_OK(gx_array_to_host(junk[k], jv, sizeof jv));
        GXT_CHECK(jv[0] == 999.0f && jv[n - 1] == 999.0f);
        gx_array_release(junk[k]);
    }
    GXT_OK(gx_graph_destroy(g));
    gx_array_release(x);
    gx_array_release(out);
}

GXT_TEST(graph_refuses_calls_that_wait)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 40;
    gx_array *x = NULL, *y = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &x));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &y));
    gx_graph *g = NULL;
    gx_scalar sc;

    GXT_OK(gx_graph_begin(ctx));
    GXT_STATUS(gx_reduce(ctx, "+", x, NULL, &sc), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("gx_reduce");
    GXT_MSG_HAS("gx_reduce_into");
    GXT_STATUS(gx_graph_end(ctx, &g), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("gx_graph_end");
    GXT_MSG_HAS("gx_reduce");
    GXT_CHECK(g == NULL);

    float h[40];
    GXT_OK(gx_graph_begin(ctx));
    GXT_STATUS(gx_array_to_host(x, h, sizeof h), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("gx_array_to_host");
    GXT_STATUS(gx_sync(ctx), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("synchronisation");
    gx_array *f[1] = {0};
    GXT_STATUS(gx_filter(ctx, "x -> x > 3", 1, &x, NULL, f), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("gx_filter");
    GXT_CHECK(f[0] == NULL);
    GXT_STATUS(gx_array_from_host_into(h, sizeof h, y), GX_ERR_UNSUPPORTED);
    GXT_STATUS(gx_graph_end(ctx, &g), GX_ERR_UNSUPPORTED);
    GXT_MSG_HAS("gx_array_to_host"); /* the first refusal */

    /* After a spoiled recording the context works as before. */
    GXT_OK(gx_map_into(ctx, "x -> x + 1", 1, &x, NULL, y));
    GXT_OK(gx_array_to_host(y, h, sizeof h));
    GXT_CHECK(h[0] == 1.0f && h[39] == 40.0f);
    gx_array_release(x);
    gx_array_release(y);
}

GXT_TEST(graph_bad_input)
{
    gx_ctx *ctx = gxt_ctx();
    gx_graph *g = (gx_graph *)1;
    GXT_STATUS(gx_graph_end(ctx, &g), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("gx_graph_begin first");
    GXT_CHECK(g == NULL);
    GXT_STATUS(gx_graph_end(ctx, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_graph_begin(NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_graph_launch(NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("gx_graph_launch");
    int64_t k = 5;
    GXT_STATUS(gx_graph_size(NULL, &k), GX_ERR_INVALID_ARGUMENT);
    GXT_EQ_I64(k, 0);
    GXT_OK(gx_graph_destroy(NULL));

    /* An empty recording is a graph that does nothing. */
    GXT_OK(gx_graph_begin(ctx));
    GXT_STATUS(gx_graph_begin(ctx), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("do not nest");
    GXT_OK(gx_graph_end(ctx, &g));
    GXT_OK(gx_graph_launch(g));
    GXT_OK(gx_graph_size(g, &k));
    GXT_EQ_I64(k, 0);

    /* Launching or destroying a graph while recording another. */
    GXT_OK(gx_graph_begin(ctx));
    GXT_STATUS(gx_graph_launch(g), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("gx_graph_end first");
    GXT_STATUS(gx_graph_destroy(g), GX_ERR_INVALID_ARGUMENT);
    gx_graph *g2 = NULL;
    GXT_OK(gx_graph_end(ctx, &g2));
    GXT_OK(gx_graph_destroy(g2));
    GXT_OK(gx_graph_destroy(g));

    /* A recording left open when the context goes: gx_ctx_destroy ends it. */
    gx_ctx *c2 = NULL;
    gx_backend_kind kind;
    GXT_OK(gx_ctx_backend(ctx, &kind));
    GXT_OK(gx_ctx_create(&c2, kind));
    int64_t n = 8;
    gx_array *a = NULL;
    GXT_OK(gx_array_zeros(c2, GX_F32, 1, &n, &a));
    GXT_OK(gx_graph_begin(c2));
    GXT_OK(gx_map_into(c2, "x -> x + 1", 1, &a, NULL, a));
    GXT_OK(gx_ctx_destroy(c2));
}

/* Fills and strided copies, which the CPU backend otherwise runs as host loops at
 * once: inside a recording they are kernels, run only by gx_graph_launch. */
GXT_TEST(graph_fill_and_strided_copy_replay)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t sizes[] = {1, 31, 32, 33, 257};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int64_t n = sizes[si];
        gx_array *a = NULL, *src = NULL, *dst = NULL, *rev = NULL;
        GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &a));
        GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &src));
        GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &dst));
        gx_slice sl = {-1, GX_END, -1};
        GXT_OK(gx_array_view(src, &sl, &rev));
        gx_graph *g = NULL;
        GXT_OK(gx_graph_begin(ctx));
        GXT_OK(gx_array_fill_f64(a, 7));
        GXT_OK(gx_array_copy_into(rev, dst));
        GXT_OK(gx_graph_end(ctx, &g));
        int32_t *h = malloc((size_t)n * 4), *o = malloc((size_t)n * 4);
        GXT_OK(gx_array_to_host(a, o, (size_t)n * 4));
        GXT_CHECK(o[0] == 0); /* recorded, not run */
        for (int round = 0; round < 2; round++) {
            for (int64_t i = 0; i < n; i++)
                h[i] = (int32_t)(i * 3 + round * 1000 + 1);
            GXT_OK(gx_array_from_host_into(h, (size_t)n * 4, src));
            GXT_OK(gx_graph_launch(g));
            GXT_OK(gx_array_to_host(dst, o, (size_t)n * 4));
            for (int64_t i = 0; i < n; i++)
                if (o[i] != h[n - 1 - i]) {
                    GXT_FAIL_AT(__FILE__, __LINE__, "n=%lld dst[%lld] = %d, want %d", (long long)n, (long long)i,
                                o[i], h[n - 1 - i]);
                    break;
                }
            GXT_OK(gx_array_to_host(a, o, (size_t)n * 4));
            GXT_CHECK(o[0] == 7 && o[n - 1] == 7);
        }
        free(h);
        free(o);
        GXT_OK(gx_graph_destroy(g));
        gx_array_release(rev);
        gx_array_release(a);
        gx_array_release(src);
        gx_array_release(dst);
    }
}

/* Look-back launches (a scan and a compaction over many tiles) replayed several times
 * with new contents: on CUDA a recorded look-back launch swaps its two status buffers
 * by a parity word at every replay (range_gen.c, cu_clear_next), so replays 1, 2, 3...
 * each start from the buffer the one before cleared. */
GXT_TEST(graph_lookback_many_replays)
{
    gx_ctx *ctx = gxt_ctx();
    static const int64_t sizes[] = {5000, ((int64_t)1 << 20) + 3};
    for (size_t si = 0; si < 2; si++) {
        int64_t n = sizes[si];
        gx_array *x = NULL, *w = NULL, *o = NULL, *c = NULL;
        GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &x));
        GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &w));
        GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &o));
        GXT_OK(gx_array_zeros(ctx, GX_I64, 0, NULL, &c));
        gx_graph *g = NULL;
        GXT_OK(gx_graph_begin(ctx));
        GXT_OK(gx_scan_into(ctx, "+", x, NULL, w));
        GXT_OK(gx_filter_into(ctx, "v -> v > 0", 1, &w, NULL, &o, c));
        GXT_OK(gx_graph_end(ctx, &g));
        int32_t *hx = malloc((size_t)n * 4), *hw = malloc((size_t)n * 4), *hs = malloc((size_t)n * 4),
                *got = malloc((size_t)n * 4);
        for (int round = 0; round < 5; round++) {
            int64_t kept = 0;
            int32_t run = 0;
            for (int64_t i = 0; i < n; i++) {
                hx[i] = (int32_t)(gxt_rand01() * 17) - 8 + (round % 2 ? 1 : -1);
                hw[i] = run += hx[i];
                if (hw[i] > 0)
                    hs[kept++] = hw[i];
            }
            GXT_OK(gx_array_from_host_into(hx, (size_t)n * 4, x));
            GXT_OK(gx_graph_launch(g));
            GXT_OK(gx_array_to_host(w, got, (size_t)n * 4));
            int64_t bad = -1;
            for (int64_t i = 0; i < n && bad < 0; i++)
                if (got[i] != hw[i])
                    bad = i;
            if (bad >= 0)
                GXT_FAIL_AT(__FILE__, __LINE__, "n=%lld replay %d: scan[%lld] = %d, host %d", (long long)n, round,
                            (long long)bad, got[bad], hw[bad]);
            int64_t cnt = -1;
            GXT_OK(gx_array_to_host(c, &cnt, 8));
            GXT_CHECK(cnt == kept);
            GXT_OK(gx_array_to_host(o, got, (size_t)n * 4));
            for (int64_t i = 0; i < kept && i < n && bad < 0; i++)
                if (got[i] != hs[i])
                    bad = i;
            if (bad >= 0)
                GXT_FAIL_AT(__FILE__, __LINE__, "n=%lld replay %d: kept[%lld] = %d, host %d", (long long)n, round,
                            (long long)bad, got[bad], hs[bad]);
        }
        GXT_OK(gx_graph_destroy(g));
        gx_array *all[] = {x, w, o, c};
        for (size_t i = 0; i < 4; i++)
            gx_array_release(all[i]);
        free(hx);
        free(hw);
        free(hs);
        free(got);
    }
}
