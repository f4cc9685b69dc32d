/* test_api.c -- the API conventions of gx.h hold in every call: every operator name
 * works in every call that takes an operator (against a host fold), the all-zero
 * options struct of each call gives the documented defaults (and equals NULL),
 * nonzero reserved words are refused, *_into converts or refuses (exact_dtype) as
 * documented, and new-array calls ignore what *out held. */
#include "gx_test.h"

#include <stdbool.h>

/* ------------------------------------------------------------ host reference */

typedef enum { K_ADD, K_MUL, K_MAX, K_MIN, K_AND, K_OR, K_XOR, K_LAND, K_LOR } kind;

static const struct {
    const char *name;
    kind k;
} OPS[] = {
    {"+", K_ADD},       {"sum", K_ADD}, {"*", K_MUL},       {"prod", K_MUL}, {"max", K_MAX},
    {"maximum", K_MAX}, {"min", K_MIN}, {"minimum", K_MIN}, {"&", K_AND},    {"|", K_OR},
    {"^", K_XOR},       {"&&", K_LAND}, {"all", K_LAND},    {"||", K_LOR},   {"any", K_LOR},
};
#define NOPS ((int)(sizeof OPS / sizeof OPS[0]))

/* The documented result dtype of an operator on i32 data (gx/reduce.h). */
static gx_dtype acc_of(kind k)
{
    return k == K_ADD || k == K_MUL ? GX_I64 : k == K_LAND || k == K_LOR ? GX_BOOL : GX_I32;
}

static int64_t fold1(kind k, int64_t a, int64_t b)
{
    switch (k) {
    case K_ADD: return a + b;
    case K_MUL: return a * b;
    case K_MAX: return a > b ? a : b;
    case K_MIN: return a < b ? a : b;
    case K_AND: return a & b;
    case K_OR: return a | b;
    case K_XOR: return a ^ b;
    case K_LAND: return (a != 0) && (b != 0);
    default: return (a != 0) || (b != 0);
    }
}

/* The element as the operator sees it (logical operators: x != 0). */
static int64_t lift(kind k, int64_t x) { return k == K_LAND || k == K_LOR ? x != 0 : x; }

/* Running fold of x[0..n) into run[] (inclusive); returns the total. */
static int64_t host_scan(kind k, const int32_t *x, int n, int64_t *run)
{
    int64_t acc = lift(k, x[0]);
    run[0] = acc;
    for (int i = 1; i < n; i++)
        run[i] = acc = fold1(k, acc, lift(k, x[i]));
    return acc;
}

#define N 21 /* small values in [-3, 3]: a product of 21 stays far from overflow */

static gx_array *make_data(gx_ctx *ctx, int32_t *x)
{
    for (int i = 0; i < N; i++)
        x[i] = (int32_t)(gxt_rand_u64() % 7) - 3;
    x[5] = 0; /* && and * meet a zero */
    gx_array *a = NULL;
    int64_t n = N;
    if (gx_array_from_host(ctx, GX_I32, 1, &n, x, &a) != GX_OK)
        return NULL;
    return a;
}

/* Every element of a (any dtype) as doubles. */
static bool host_values(gx_array *a, double *v, int64_t n)
{
    gx_array *d = NULL;
    if (gx_array_clone(a, GX_F64, &d) != GX_OK)
        return false;
    int64_t sz = 0;
    gx_array_size(d, &sz);
    gx_status s = sz == n ? gx_array_to_host(d, v, (size_t)n * sizeof(double)) : GX_ERR_SHAPE;
    gx_array_release(d);
    return s == GX_OK;
}

static void expect_array(const char *what, const char *op, gx_array *a, gx_dtype dt, const int64_t *want, int n)
{
    gx_array_desc d;
    if (gx_array_describe(a, &d) != GX_OK) {
        GXT_FAIL_AT(__FILE__, __LINE__, "%s(\"%s\"): no array", what, op);
        return;
    }
    if (d.dtype != dt)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s(\"%s\"): dtype %s, want %s", what, op, gx_dtype_name(d.dtype),
                    gx_dtype_name(dt));
    double v[N];
    if (!host_values(a, v, n)) {
        GXT_FAIL_AT(__FILE__, __LINE__, "%s(\"%s\"): cannot read %d values back", what, op, n);
        return;
    }
    for (int i = 0; i < n; i++)
        if (v[i] != (double)want[i]) {
            GXT_FAIL_AT(__FILE__, __LINE__, "%s(\"%s\")[%d] = %g, want %lld", what, op, i, v[i], (long long)want[i]);
            return;
        }
}

static void expect_scalar(const char *what, const char *op, gx_scalar s, gx_dtype dt, int64_t want)
{
    if (s.dtype != dt)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s(\"%s\"): dtype %s, want %s", what, op, gx_dtype_name(s.dtype),
                    gx_dtype_name(dt));
    if (gx_scalar_to_f64(s) != (double)want)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s(\"%s\") = %g, want %lld", what, op, gx_scalar_to_f64(s), (long long)want);
}

/* ------------------------------------------------------------ operator names everywhere */

/* The array reductions: gx_reduce, _to, _into, gx_mapreduce, _to, _into. */
static void reductions_with(gx_ctx *ctx, gx_array *x, const char *op, gx_dtype dt, int64_t total)
{
    gx_scalar s;
    GXT_OK(gx_reduce(ctx, op, x, NULL, &s));
    expect_scalar("gx_reduce", op, s, dt, total);
    GXT_OK(gx_mapreduce(ctx, "x -> x", op, 1, &x, NULL, &s));
    expect_scalar("gx_mapreduce", op, s, dt, total);
    gx_array *r = NULL, *into = NULL;
    GXT_OK(gx_reduce_to(ctx, op, x, NULL, &r));
    expect_array("gx_reduce_to", op, r, dt, &total, 1);
    gx_array_release(r);
    GXT_OK(gx_mapreduce_to(ctx, "x -> x", op, 1, &x, NULL, &r));
    expect_array("gx_mapreduce_to", op, r, dt, &total, 1);
    gx_array_release(r);
    int64_t one = 1;
    GXT_OK(gx_array_zeros(ctx, dt, 1, &one, &into));
    GXT_OK(gx_reduce_into(ctx, op, x, NULL, into));
    expect_array("gx_reduce_into", op, into, dt, &total, 1);
    GXT_OK(gx_array_fill_f64(into, 0));
    GXT_OK(gx_mapreduce_into(ctx, "x -> x", op, 1, &x, NULL, into));
    expect_array("gx_mapreduce_into", op, into, dt, &total, 1);
    gx_array_release(into);
}

/* gx_scan, gx_scan_into, gx_pipe_reduce, gx_pipe_mapreduce, gx_pipe_scan, _into. */
static void scans_with(gx_ctx *ctx, gx_array *x, const char *op, gx_dtype dt, const int64_t *run)
{
    gx_array *y = NULL, *into = NULL;
    int64_t n = N;
    GXT_OK(gx_scan(ctx, op, x, NULL, &y));
    expect_array("gx_scan", op, y, dt, run, N);
    gx_array_release(y);
    GXT_OK(gx_array_zeros(ctx, dt, 1, &n, &into));
    GXT_OK(gx_scan_into(ctx, op, x, NULL, into));
    expect_array("gx_scan_into", op, into, dt, run, N);
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &x, &p));
    gx_scalar s;
    GXT_OK(gx_pipe_reduce(p, op, NULL, &s));
    expect_scalar("gx_pipe_reduce", op, s, dt, run[N - 1]);
    GXT_OK(gx_pipe_mapreduce(p, "x -> x", op, NULL, &s));
    expect_scalar("gx_pipe_mapreduce", op, s, dt, run[N - 1]);
    GXT_OK(gx_pipe_scan(p, op, NULL, &y));
    expect_array("gx_pipe_scan", op, y, dt, run, N);
    gx_array_release(y);
    GXT_OK(gx_array_fill_f64(into, 0));
    GXT_OK(gx_pipe_scan_into(p, op, NULL, into));
    expect_array("gx_pipe_scan_into", op, into, dt, run, N);
    gx_array_release(into);
    gx_pipe_destroy(p);
}

GXT_TEST(api_every_operator_name_in_every_call)
{
    gx_ctx *ctx = gxt_ctx();
    int32_t x[N];
    gx_array *a = make_data(ctx, x);
    GXT_CHECK(a != NULL);
    for (int o = 0; a && o < NOPS; o++) {
        int64_t run[N];
        int64_t total = host_scan(OPS[o].k, x, N, run);
        reductions_with(ctx, a, OPS[o].name, acc_of(OPS[o].k), total);
        scans_with(ctx, a, OPS[o].name, acc_of(OPS[o].k), run);
    }
    gx_array_release(a);
}

/* A lambda operator is accepted by the same calls (with init where one is required). */
GXT_TEST(api_lambda_operator_in_every_call)
{
    gx_ctx *ctx = gxt_ctx();
    int32_t x[N];
    gx_array *a = make_data(ctx, x);
    GXT_CHECK(a != NULL);
    if (!a)
        return;
    int64_t run[N];
    int64_t total = host_scan(K_MAX, x, N, run);
    const char *op = "a, b -> a > b ? a : b";
    gx_scalar lowest = GX_SCALAR_I32(INT32_MIN), s;
    gx_reduce_opts ro = {.init = &lowest};
    GXT_OK(gx_reduce(ctx, op, a, &ro, &s));
    expect_scalar("gx_reduce", op, s, GX_I32, total);
    GXT_OK(gx_mapreduce(ctx, "x -> x", op, 1, &a, &ro, &s));
    expect_scalar("gx_mapreduce", op, s, GX_I32, total);
    gx_array *y = NULL;
    GXT_OK(gx_scan(ctx, op, a, NULL, &y));
    expect_array("gx_scan", op, y, GX_I32, run, N);
    gx_array_release(y);
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &a, &p));
    GXT_OK(gx_pipe_reduce(p, op, NULL, &s));
    expect_scalar("gx_pipe_reduce", op, s, GX_I32, total);
    GXT_OK(gx_pipe_scan(p, op, NULL, &y));
    expect_array("gx_pipe_scan", op, y, GX_I32, run, N);
    gx_array_release(y);
    gx_pipe_destroy(p);
    gx_array_release(a);
}

/* Names that are not operators are refused with a message naming the list; "count"
 * and "mean" are statistics of gx_reduce only. */
GXT_TEST(api_operator_names_refused_where_documented)
{
    gx_ctx *ctx = gxt_ctx();
    int32_t x[N];
    gx_array *a = make_data(ctx, x), *y = NULL;
    GXT_CHECK(a != NULL);
    if (!a)
        return;
    GXT_STATUS(gx_scan(ctx, "plus", a, NULL, &y), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("\"max\"");
    GXT_STATUS(gx_scan(ctx, "mean", a, NULL, &y), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("statistics");
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &a, &p));
    gx_scalar s;
    GXT_STATUS(gx_pipe_reduce(p, "count", NULL, &s), GX_ERR_INVALID_ARGUMENT);
    gx_pipe_destroy(p);
    /* bitwise names on floats: a dtype error, in every call */
    gx_array *f = NULL;
    GXT_OK(gx_array_clone(a, GX_F32, &f));
    GXT_STATUS(gx_scan(ctx, "&", f, NULL, &y), GX_ERR_DTYPE);
    GXT_STATUS(gx_reduce(ctx, "&", f, NULL, &s), GX_ERR_DTYPE);
    gx_array_release(f);
    gx_array_release(a);
}

/* Float max/min by name ignore NaN in scans and pipelines as gx_reduce does. */
GXT_TEST(api_named_max_ignores_nan_everywhere)
{
    gx_ctx *ctx = gxt_ctx();
    float v[6] = {NAN, 2.0f, NAN, -1.0f, 5.0f, NAN};
    int64_t n = 6;
    gx_array *a = NULL, *y = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F32, 1, &n, v, &a));
    gx_scalar s;
    GXT_OK(gx_reduce(ctx, "max", a, NULL, &s));
    GXT_CHECK(gx_scalar_to_f64(s) == 5.0);
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &a, &p));
    GXT_OK(gx_pipe_reduce(p, "max", NULL, &s));
    GXT_CHECK(s.dtype == GX_F32 && gx_scalar_to_f64(s) == 5.0);
    GXT_OK(gx_pipe_reduce(p, "min", NULL, &s));
    GXT_CHECK(gx_scalar_to_f64(s) == -1.0);
    gx_pipe_destroy(p);
    GXT_OK(gx_scan(ctx, "max", a, NULL, &y));
    float r[6];
    GXT_OK(gx_array_to_host(y, r, sizeof r));
    GXT_CHECK(isnan(r[0]) && r[1] == 2 && r[2] == 2 && r[3] == 2 && r[4] == 5 && r[5] == 5);
    gx_array_release(y);
    gx_array_release(a);
}

/* An empty stream reduced by name gives the neutral element, as gx_reduce does. */
GXT_TEST(api_empty_pipeline_reduce_is_neutral)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t zero = 0;
    gx_array *e = NULL;
    GXT_OK(gx_array_empty(ctx, GX_I32, 1, &zero, &e));
    static const struct {
        const char *op;
        gx_dtype dt;
        double want;
    } cases[] = {
        {"+", GX_I64, 0}, {"*", GX_I64, 1}, {"max", GX_I32, INT32_MIN}, {"min", GX_I32, INT32_MAX}, {"&", GX_I32, -1},
        {"|", GX_I32, 0}, {"^", GX_I32, 0}, {"&&", GX_BOOL, 1},         {"||", GX_BOOL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gx_pipe *p = NULL;
        gx_scalar s, r;
        GXT_OK(gx_pipe_from_arrays(ctx, 1, &e, &p));
        GXT_OK(gx_pipe_reduce(p, cases[i].op, NULL, &s));
        GXT_OK(gx_reduce(ctx, cases[i].op, e, NULL, &r));
        GXT_CHECK(s.dtype == cases[i].dt && r.dtype == cases[i].dt);
        if (gx_scalar_to_f64(s) != cases[i].want || gx_scalar_to_f64(r) != cases[i].want)
            GXT_FAIL_AT(__FILE__, __LINE__, "empty \"%s\": pipe %g, reduce %g, want %g", cases[i].op,
                        gx_scalar_to_f64(s), gx_scalar_to_f64(r), cases[i].want);
        gx_pipe_destroy(p);
    }
    /* A lambda without init has no neutral element to give. */
    gx_pipe *p = NULL;
    gx_scalar s;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &e, &p));
    GXT_STATUS(gx_pipe_reduce(p, "a, b -> a + b", NULL, &s), GX_ERR_SHAPE);
    gx_pipe_destroy(p);
    gx_array_release(e);
}

/* ------------------------------------------------------------ zero options = defaults */

static bool same_values(gx_array *a, gx_array *b)
{
    gx_array_desc da, db;
    if (gx_array_describe(a, &da) != GX_OK || gx_array_describe(b, &db) != GX_OK || da.dtype != db.dtype ||
        da.size != db.size || da.ndim != db.ndim)
        return false;
    for (int d = 0; d < da.ndim; d++)
        if (da.shape[d] != db.shape[d])
            return false;
    double va[64], vb[64];
    if (da.size > 64 || !host_values(a, va, da.size) || !host_values(b, vb, db.size))
        return false;
    for (int64_t i = 0; i < da.size; i++)
        if (!(va[i] == vb[i] || (isnan(va[i]) && isnan(vb[i]))))
            return false;
    return true;
}

GXT_TEST(api_zero_map_opts_are_defaults)
{
    gx_ctx *ctx = gxt_ctx();
    int32_t x[4] = {1, 2, 3, 4};
    int64_t n = 4;
    gx_array *a = NULL, *y0 = NULL, *y1 = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, x, &a));
    gx_map_opts z = {0};
    GXT_OK(gx_map(ctx, "x -> x * 3", 1, &a, &z, &y0));
    GXT_OK(gx_map(ctx, "x -> x * 3", 1, &a, NULL, &y1));
    gx_array_desc d;
    GXT_OK(gx_array_describe(y0, &d));
    GXT_CHECK(d.dtype == GX_I32); /* the lambda's type, not bool (GX_DTYPE_DEFAULT is 0) */
    int32_t r[4];
    GXT_OK(gx_array_to_host(y0, r, sizeof r));
    GXT_CHECK(r[0] == 3 && r[1] == 6 && r[2] == 9 && r[3] == 12);
    GXT_CHECK(same_values(y0, y1));
    /* Constants through opts, the dtype left at its zero default. */
    gx_const k = GX_CONST("k", GX_SCALAR_I32(5));
    gx_map_opts ko = {.consts = &k, .nconsts = 1};
    gx_array_release(y0);
    GXT_OK(gx_map(ctx, "x -> x + k", 1, &a, &ko, &y0));
    GXT_OK(gx_array_describe(y0, &d));
    GXT_CHECK(d.dtype == GX_I32);
    GXT_OK(gx_array_to_host(y0, r, sizeof r));
    GXT_CHECK(r[0] == 6 && r[3] == 9);
    gx_array_release(y0);
    gx_array_release(y1);
    gx_array_release(a);
}

GXT_TEST(api_zero_reduce_opts_are_defaults)
{
    gx_ctx *ctx = gxt_ctx();
    int32_t x[6] = {1, 2, 3, 4, 5, 6};
    int64_t sh[2] = {2, 3};
    gx_array *a = NULL, *r0 = NULL, *r1 = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 2, sh, x, &a));
    gx_reduce_opts z = {0};
    gx_scalar s0, s1;
    GXT_OK(gx_reduce(ctx, "+", a, &z, &s0));
    GXT_OK(gx_reduce(ctx, "+", a, NULL, &s1));
    GXT_CHECK(s0.dtype == GX_I64 && s0.v.i == 21 && s1.dtype == GX_I64 && s1.v.i == 21);
    GXT_OK(gx_reduce_to(ctx, "max", a, &z, &r0)); /* all axes, kept as size 1 */
    GXT_OK(gx_reduce_to(ctx, "max", a, NULL, &r1));
    GXT_CHECK(same_values(r0, r1));
    gx_array_desc d;
    GXT_OK(gx_array_describe(r0, &d));
    GXT_CHECK(d.ndim == 2 && d.shape[0] == 1 && d.shape[1] == 1 && d.dtype == GX_I32);
    gx_array_release(r0);
    gx_array_release(r1);
    gx_array_release(a);
}

GXT_TEST(api_zero_scan_opts_are_defaults)
{
    gx_ctx *ctx = gxt_ctx();
    int32_t x[5] = {1, 2, 3, 4, 5};
    int64_t n = 5;
    gx_array *a = NULL, *y0 = NULL, *y1 = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, x, &a));
    gx_scan_opts z = {0};
    GXT_OK(gx_scan(ctx, "a, b -> a + b", a, &z, &y0)); /* once all true: acc dtype 0 was bool */
    GXT_OK(gx_scan(ctx, "a, b -> a + b", a, NULL, &y1));
    int32_t r[5];
    GXT_OK(gx_array_to_host(y0, r, sizeof r));
    GXT_CHECK(r[0] == 1 && r[1] == 3 && r[2] == 6 && r[3] == 10 && r[4] == 15);
    GXT_CHECK(same_values(y0, y1));
    gx_array_release(y0);
    gx_array_release(y1);
    /* 2-d: the default axis is the first (down the columns); -1 scans rows. */
    int64_t sh[2] = {2, 3};
    gx_array *m = NULL;
    int32_t mv[6] = {1, 2, 3, 10, 20, 30};
    GXT_OK(gx_array_from_host(ctx, GX_I32, 2, sh, mv, &m));
    GXT_OK(gx_scan(ctx, "+", m, &z, &y0));
    int64_t c[6];
    GXT_OK(gx_array_to_host(y0, c, sizeof c));
    GXT_CHECK(c[0] == 1 && c[2] == 3 && c[3] == 11 && c[4] == 22 && c[5] == 33);
    gx_scan_opts rows = {.axis = -1};
    gx_array_release(y0);
    GXT_OK(gx_scan(ctx, "+", m, &rows, &y0));
    GXT_OK(gx_array_to_host(y0, c, sizeof c));
    GXT_CHECK(c[0] == 1 && c[1] == 3 && c[2] == 6 && c[3] == 10 && c[5] == 60);
    gx_array_release(y0);
    gx_array_release(m);
    gx_array_release(a);
}

GXT_TEST(api_zero_filter_and_pipe_opts_are_defaults)
{
    gx_ctx *ctx = gxt_ctx();
    int32_t x[6] = {5, -1, 7, 0, -3, 2};
    int64_t n = 6;
    gx_array *a = NULL, *f0 = NULL, *f1 = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, &n, x, &a));
    gx_filter_opts z = {0};
    GXT_OK(gx_filter(ctx, "x -> x > 0", 1, &a, &z, &f0));
    GXT_OK(gx_filter(ctx, "x -> x > 0", 1, &a, NULL, &f1));
    GXT_CHECK(same_values(f0, f1));
    int32_t r[3];
    GXT_OK(gx_array_to_host(f0, r, sizeof r));
    GXT_CHECK(r[0] == 5 && r[1] == 7 && r[2] == 2);
    gx_pipe_opts pz = {0};
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &a, &p));
    GXT_OK(gx_pipe_map(p, "x -> x * 2", &pz));
    gx_scalar s;
    GXT_OK(gx_pipe_reduce(p, "+", &pz, &s));
    GXT_CHECK(s.dtype == GX_I64 && s.v.i == 20);
    gx_array *y = NULL;
    GXT_OK(gx_pipe_scan(p, "+", &pz, &y)); /* inclusive, no init */
    int64_t c[6];
    GXT_OK(gx_array_to_host(y, c, sizeof c));
    GXT_CHECK(c[0] == 10 && c[1] == 8 && c[5] == 20);
    gx_array_release(y);
    gx_pipe_destroy(p);
    gx_array_release(f0);
    gx_array_release(f1);
    gx_array_release(a);
}

GXT_TEST(api_zero_print_opts_are_defaults)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *a = NULL;
    GXT_OK(gx_array_iota(ctx, GX_F32, 2000, 0, 0.5, &a));
    char b0[2048], b1[2048];
    gx_print_opts z = {0};
    GXT_OK(gx_array_format(a, &z, b0, sizeof b0, NULL));
    GXT_OK(gx_array_format(a, NULL, b1, sizeof b1, NULL));
    GXT_CHECK(strcmp(b0, b1) == 0);
    GXT_CHECK(strstr(b0, "...") != NULL); /* 2000 > the default threshold 1000 */
    gx_array_release(a);
}

/* Matmul's zero options: C = A·B (alpha 1, beta 0), the same as NULL. */
GXT_TEST(api_zero_matmul_opts_are_defaults)
{
    gx_ctx *ctx = gxt_ctx();
    double av[4] = {1, 2, 3, 4}, bv[4] = {5, 6, 7, 8};
    int64_t sh[2] = {2, 2};
    gx_array *a = NULL, *b = NULL, *c0 = NULL, *c1 = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 2, sh, av, &a));
    GXT_OK(gx_array_from_host(ctx, GX_F64, 2, sh, bv, &b));
    gx_matmul_opts z = {0};
    gx_status s = gx_matmul(a, b, &z, &c0);
    if (s == GX_ERR_UNSUPPORTED) {
        gxt_skip("this build has no matrix multiply library");
    } else {
        GXT_OK(s);
        GXT_OK(gx_matmul(a, b, NULL, &c1));
        double r[4];
        GXT_OK(gx_array_to_host(c0, r, sizeof r));
        GXT_CHECK(r[0] == 19 && r[1] == 22 && r[2] == 43 && r[3] == 50);
        GXT_CHECK(same_values(c0, c1));
        /* _into with zero opts overwrites C (beta 0), whatever it held */
        GXT_OK(gx_array_fill_f64(c1, 100));
        GXT_OK(gx_matmul_into(a, b, &z, c1));
        GXT_CHECK(same_values(c0, c1));
        gx_matmul_opts ab = {.alpha = GX_SCALAR_F64(2), .beta = GX_SCALAR_F64(1)};
        GXT_OK(gx_matmul_into(a, b, &ab, c1)); /* 2·AB + AB */
        GXT_OK(gx_array_to_host(c1, r, sizeof r));
        GXT_CHECK(r[0] == 57 && r[3] == 150);
    }
    gx_array_release(c0);
    gx_array_release(c1);
    gx_array_release(a);
    gx_array_release(b);
}

/* Every options struct refuses nonzero reserved words (a newer header's fields). */
GXT_TEST(api_reserved_words_must_be_zero)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 4;
    gx_array *a = NULL, *y = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I32, n, 1, 1, &a));
    gx_map_opts mo = {.reserved = {0, 0, 1}};
    GXT_STATUS(gx_map(ctx, "x -> x", 1, &a, &mo, &y), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("reserved");
    gx_reduce_opts ro = {.reserved = {1}};
    gx_scalar s;
    GXT_STATUS(gx_reduce(ctx, "+", a, &ro, &s), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_reduce_to(ctx, "+", a, &ro, &y), GX_ERR_INVALID_ARGUMENT);
    gx_scan_opts so = {.reserved = {0, 0, 0, 7}};
    GXT_STATUS(gx_scan(ctx, "+", a, &so, &y), GX_ERR_INVALID_ARGUMENT);
    gx_filter_opts fo = {.reserved = {1}};
    GXT_STATUS(gx_filter(ctx, "x -> x > 1", 1, &a, &fo, &y), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_findall(ctx, "x -> x > 1", 1, &a, &fo, &y), GX_ERR_INVALID_ARGUMENT);
    gx_pipe_opts po = {.reserved = {1}};
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 1, &a, &p));
    GXT_STATUS(gx_pipe_map(p, "x -> x", &po), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_pipe_reduce(p, "+", &po, &s), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_pipe_scan(p, "+", &po, &y), GX_ERR_INVALID_ARGUMENT);
    gx_pipe_destroy(p);
    gx_print_opts pr = {.reserved = {1}};
    char buf[64];
    GXT_STATUS(gx_array_format(a, &pr, buf, sizeof buf, NULL), GX_ERR_INVALID_ARGUMENT);
    gx_matmul_opts mm = {.reserved = {1}};
    GXT_STATUS(gx_matmul(a, a, &mm, &y), GX_ERR_INVALID_ARGUMENT);
    gx_kernel_opts ko = {.reserved = {1}};
    char *text = NULL;
    GXT_STATUS(gx_kernel_ptx_offline("extern \"C\" __global__ void k() {}", "k", NULL, &ko, &text),
               GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(y == NULL);
    gx_array_release(a);
}

/* ------------------------------------------------------------ *_into conversions */

GXT_TEST(api_into_converts_or_refuses_with_exact_dtype)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 5;
    gx_array *a = NULL, *f = NULL, *c = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I32, n, -2, 1, &a)); /* -2 -1 0 1 2 */
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &n, &f));
    /* map: i32 * 1.5 is f64 in the lambda; written into f32 as a C cast */
    GXT_OK(gx_map_into(ctx, "x -> x * 1.5", 1, &a, NULL, f));
    float r[5];
    GXT_OK(gx_array_to_host(f, r, sizeof r));
    GXT_CHECK(r[0] == -3.0f && r[4] == 3.0f);
    gx_map_opts ex = {.exact_dtype = 1};
    GXT_STATUS(gx_map_into(ctx, "x -> x * 1.5", 1, &a, &ex, f), GX_ERR_DTYPE);
    GXT_MSG_HAS("exact_dtype");
    gx_map_opts ex32 = {.dtype = GX_F32, .exact_dtype = 1};
    GXT_OK(gx_map_into(ctx, "x -> x * 1.5", 1, &a, &ex32, f));
    /* reduce: i64 sum into an f32 array converts; exact refuses */
    int64_t one = 1;
    gx_array *r1 = NULL;
    GXT_OK(gx_array_empty(ctx, GX_F32, 1, &one, &r1));
    GXT_OK(gx_reduce_into(ctx, "+", a, NULL, r1));
    float rv;
    GXT_OK(gx_array_to_host(r1, &rv, sizeof rv));
    GXT_CHECK(rv == 0.0f);
    gx_reduce_opts rex = {.exact_dtype = 1};
    GXT_STATUS(gx_reduce_into(ctx, "+", a, &rex, r1), GX_ERR_DTYPE);
    /* scan: into f32 accumulates in out's dtype; exact refuses an i32 -> i64 sum into f32 */
    GXT_OK(gx_scan_into(ctx, "+", a, NULL, f));
    GXT_OK(gx_array_to_host(f, r, sizeof r));
    GXT_CHECK(r[0] == -2 && r[1] == -3 && r[2] == -3 && r[3] == -2 && r[4] == 0);
    gx_scan_opts sex = {.exact_dtype = 1};
    GXT_STATUS(gx_scan_into(ctx, "+", a, &sex, f), GX_ERR_DTYPE);
    /* complex to real is never silent */
    GXT_OK(gx_array_empty(ctx, GX_C64, 1, &n, &c));
    GXT_OK(gx_map_into(ctx, "x -> complex(x, 1)", 1, &a, NULL, c));
    GXT_STATUS(gx_map_into(ctx, "x -> complex(x, 1)", 1, &a, NULL, f), GX_ERR_DTYPE);
    gx_array_release(r1);
    gx_array_release(c);
    gx_array_release(f);
    gx_array_release(a);
}

/* A new-array call ignores what *out held (it is an out-parameter only). */
GXT_TEST(api_new_array_calls_ignore_out_value)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 3;
    gx_array *a = NULL, *keep = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I32, n, 1, 1, &a));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 1, &n, &keep));
    gx_array *o = keep;
    GXT_OK(gx_map(ctx, "x -> x + 10", 1, &a, NULL, &o));
    GXT_CHECK(o != keep);
    int32_t r[3];
    GXT_OK(gx_array_to_host(keep, r, sizeof r));
    GXT_CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0); /* untouched */
    GXT_OK(gx_array_to_host(o, r, sizeof r));
    GXT_CHECK(r[0] == 11 && r[2] == 13);
    gx_array_release(o);
    gx_array_release(keep);
    gx_array_release(a);
}

/* GX_DTYPE_DEFAULT is an options value, never an element type. */
GXT_TEST(api_default_dtype_is_not_an_element_type)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 2;
    gx_array *a = NULL;
    GXT_CHECK(GX_DTYPE_DEFAULT == 0 && GX_BOOL != 0);
    GXT_CHECK(gx_dtype_size(GX_DTYPE_DEFAULT) == 0);
    GXT_STATUS(gx_array_empty(ctx, GX_DTYPE_DEFAULT, 1, &n, &a), GX_ERR_DTYPE);
    gx_dtype t;
    GXT_STATUS(gx_dtype_parse("default", &t), GX_ERR_DTYPE);
    GXT_OK(gx_dtype_parse("bool", &t));
    GXT_CHECK(t == GX_BOOL);
}
