/* test_assemble.c -- concat, stack, repeat, tile, pad, flip, roll and dense copies of
 * views (include/gx/assemble.h), against references computed here with plain loops. */
#include "gx_test.h"

static const gx_dtype dts[] = {GX_U8, GX_I32, GX_F32, GX_F64, GX_C64};
#define NDTS (int)(sizeof dts / sizeof dts[0])

/* ------------------------------------------------------------ inputs */

/* Valid values of t (floats: small integers, so bitwise compares are safe). */
static void rand_fill(gx_dtype t, unsigned char *p, int64_t n)
{
    size_t esz = gx_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = gxt_rand_u64();
        if (t == GX_F32 || t == GX_C64) {
            float f[2] = {(float)(r % 1000) - 500, (float)((r >> 20) % 1000)};
            memcpy(p + i * esz, f, esz);
        } else if (t == GX_F64) {
            double f = (double)(r % 100000) - 5000;
            memcpy(p + i * esz, &f, esz);
        } else
            memcpy(p + i * esz, &r, esz);
    }
}

static int64_t prod(int nd, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= s[d];
    return n;
}

/* An input of `shape` in one of three layouts (0 dense, 1 every other element of the
 * last axis of a wider array, 2 the transpose of a reversed-shape array) and its
 * contents on the host (dense, row-major).  *base is the array the view is of. */
typedef struct input {
    gx_array *a, *base;
    unsigned char *h;
    int nd;
    int64_t shape[GX_MAX_DIMS];
} input;

static gx_status make_input(gx_ctx *ctx, gx_dtype t, int nd, const int64_t *shape, int kind, input *in)
{
    memset(in, 0, sizeof *in);
    in->nd = nd;
    memcpy(in->shape, shape, sizeof(int64_t) * (size_t)nd);
    int64_t bs[GX_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        bs[d] = kind == 2 ? shape[nd - 1 - d] : shape[d];
    if (kind == 1 && nd > 0)
        bs[nd - 1] = 2 * shape[nd - 1];
    int64_t bn = prod(nd, bs);
    size_t esz = gx_dtype_size(t);
    unsigned char *tmp = malloc((size_t)bn * esz + 1);
    rand_fill(t, tmp, bn);
    gx_status s = gx_array_from_host(ctx, t, nd, bs, tmp, &in->base);
    free(tmp);
    if (s != GX_OK)
        return s;
    if (kind == 1 && nd > 0) {
        gx_slice sl[GX_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            sl[d] = GX_ALL;
        sl[nd - 1] = (gx_slice){shape[nd - 1] > 0, GX_END, 2};
        s = gx_array_view(in->base, sl, &in->a);
    } else if (kind == 2) {
        int perm[GX_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            perm[d] = nd - 1 - d;
        s = gx_array_permute(in->base, perm, &in->a);
    } else
        s = gx_array_view(
            in->base, (gx_slice[GX_MAX_DIMS]){GX_ALL, GX_ALL, GX_ALL, GX_ALL, GX_ALL, GX_ALL, GX_ALL, GX_ALL}, &in->a);
    if (s != GX_OK)
        return s;
    int64_t n = prod(nd, shape);
    in->h = malloc((size_t)n * esz + 1);
    return gx_array_to_host(in->a, in->h, (size_t)n * esz);
}

static void free_input(input *in)
{
    gx_array_release(in->a);
    gx_array_release(in->base);
    free(in->h);
}

/* ------------------------------------------------------------ reference check */

/* For an output index o: which input (or -1: the fill value) and its index i. */
typedef int (*mapfn)(const void *u, int nd, const int64_t *o, int64_t *i);

static int64_t lin(int nd, const int64_t *shape, const int64_t *i)
{
    int64_t k = 0;
    for (int d = 0; d < nd; d++)
        k = k * shape[d] + i[d];
    return k;
}

/* res must have shape (nd, oshape), dtype t, be dense, and hold what f says. */
static bool check_result(const char *what, gx_array *res, gx_dtype t, int nd, const int64_t *oshape, const input *ins,
                         mapfn f, const void *u, const void *fillv)
{
    gx_array_desc dsc;
    if (gx_array_describe(res, &dsc) != GX_OK || dsc.dtype != t || dsc.ndim != nd || !dsc.contiguous) {
        GXT_FAIL_AT(__FILE__, __LINE__, "%s: bad result descriptor", what);
        return false;
    }
    for (int d = 0; d < nd; d++)
        if (dsc.shape[d] != oshape[d]) {
            GXT_FAIL_AT(__FILE__, __LINE__, "%s: axis %d has extent %lld, want %lld", what, d, (long long)dsc.shape[d],
                        (long long)oshape[d]);
            return false;
        }
    size_t esz = gx_dtype_size(t);
    int64_t n = prod(nd, oshape);
    unsigned char *got = malloc((size_t)n * esz + 1);
    bool ok = gx_array_to_host(res, got, (size_t)n * esz) == GX_OK;
    int64_t o[GX_MAX_DIMS] = {0}, i[GX_MAX_DIMS];
    for (int64_t k = 0; ok && k < n; k++) {
        int w = f(u, nd, o, i);
        const unsigned char *want = w < 0 ? fillv : ins[w].h + lin(ins[w].nd, ins[w].shape, i) * (int64_t)esz;
        if (memcmp(got + k * (int64_t)esz, want, esz)) {
            GXT_FAIL_AT(__FILE__, __LINE__, "%s (%s): element %lld differs", what, gx_dtype_name(t), (long long)k);
            ok = false;
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++o[d] < oshape[d])
                break;
            o[d] = 0;
        }
    }
    free(got);
    return ok;
}

/* ------------------------------------------------------------ concat / stack */

typedef struct cat_u {
    int n, ax;
    const input *ins;
} cat_u;

static int cat_map(const void *u, int nd, const int64_t *o, int64_t *i)
{
    const cat_u *c = u;
    memcpy(i, o, sizeof(int64_t) * (size_t)nd);
    int w = 0;
    while (i[c->ax] >= c->ins[w].shape[c->ax])
        i[c->ax] -= c->ins[w++].shape[c->ax];
    return w;
}

static int stack_map(const void *u, int nd, const int64_t *o, int64_t *i)
{
    const cat_u *c = u;
    for (int d = 0, k = 0; d < nd; d++)
        if (d != c->ax)
            i[k++] = o[d];
    return (int)o[c->ax];
}

static const int64_t sizes[] = {0, 1, 31, 32, 33};

GXT_TEST(assemble_concat_matches_reference)
{
    gx_ctx *ctx = gxt_ctx();
    for (int di = 0; di < NDTS; di++)
        for (int nd = 1; nd <= 3; nd++)
            for (int axis = -nd; axis < nd; axis++)
                for (int kind = 0; kind < 3; kind++) {
                    int ax = axis < 0 ? axis + nd : axis;
                    input ins[3];
                    gx_array *arr[3];
                    for (int j = 0; j < 3; j++) {
                        int64_t sh[3] = {3, 2, 4};
                        sh[ax] = sizes[(j + kind + di + nd) % 5];
                        GXT_OK(make_input(ctx, dts[di], nd, sh, (j + kind) % 3, &ins[j]));
                        arr[j] = ins[j].a;
                    }
                    gx_array *r = NULL;
                    GXT_OK(gx_concat(ctx, 3, arr, axis, &r));
                    int64_t os[3] = {3, 2, 4};
                    os[ax] = ins[0].shape[ax] + ins[1].shape[ax] + ins[2].shape[ax];
                    cat_u u = {3, ax, ins};
                    check_result("concat", r, dts[di], nd, os, ins, cat_map, &u, NULL);
                    gx_array_release(r);
                    for (int j = 0; j < 3; j++)
                        free_input(&ins[j]);
                }
}

GXT_TEST(assemble_concat_one_and_empty)
{
    gx_ctx *ctx = gxt_ctx();
    input in;
    int64_t sh[2] = {0, 5};
    GXT_OK(make_input(ctx, GX_F32, 2, sh, 0, &in));
    gx_array *r = NULL;
    GXT_OK(gx_concat(ctx, 1, &in.a, 1, &r));
    cat_u u = {1, 1, &in};
    check_result("concat of one empty", r, GX_F32, 2, sh, &in, cat_map, &u, NULL);
    gx_array_release(r);
    free_input(&in);
}

GXT_TEST(assemble_stack_matches_reference)
{
    gx_ctx *ctx = gxt_ctx();
    for (int di = 0; di < NDTS; di++)
        for (int nd = 0; nd <= 3; nd++)
            for (int axis = -(nd + 1); axis <= nd; axis++) {
                int ax = axis < 0 ? axis + nd + 1 : axis;
                int64_t sh[3] = {sizes[(di + nd) % 5], 3, 2};
                input ins[3];
                gx_array *arr[3];
                for (int j = 0; j < 3; j++) {
                    GXT_OK(make_input(ctx, dts[di], nd, sh, j, &ins[j]));
                    arr[j] = ins[j].a;
                }
                gx_array *r = NULL;
                GXT_OK(gx_stack(ctx, 3, arr, axis, &r));
                int64_t os[4];
                for (int d = 0, k = 0; d <= nd; d++)
                    os[d] = d == ax ? 3 : sh[k++];
                cat_u u = {3, ax, ins};
                check_result("stack", r, dts[di], nd + 1, os, ins, stack_map, &u, NULL);
                gx_array_release(r);
                for (int j = 0; j < 3; j++)
                    free_input(&ins[j]);
            }
}

/* ------------------------------------------------------------ repeat / tile */

typedef struct rep_u {
    int ax, lead;
    int64_t r;
    const int64_t *ishape;
} rep_u;

static int repeat_map(const void *u, int nd, const int64_t *o, int64_t *i)
{
    const rep_u *c = u;
    memcpy(i, o, sizeof(int64_t) * (size_t)nd);
    i[c->ax] /= c->r;
    return 0;
}

static int tile_map(const void *u, int nd, const int64_t *o, int64_t *i)
{
    const rep_u *c = u;
    for (int d = c->lead; d < nd; d++)
        i[d - c->lead] = o[d] % c->ishape[d - c->lead];
    return 0;
}

GXT_TEST(assemble_repeat_matches_reference)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t reps[] = {0, 1, 3};
    for (int di = 0; di < NDTS; di++)
        for (int nd = 1; nd <= 3; nd++)
            for (int axis = -nd; axis < nd; axis++)
                for (int k = 0; k < 3; k++) {
                    int ax = axis < 0 ? axis + nd : axis;
                    int64_t sh[3] = {sizes[(di + k + axis + 5) % 5], 3, 2};
                    input in;
                    GXT_OK(make_input(ctx, dts[di], nd, sh, k, &in));
                    gx_array *r = NULL;
                    GXT_OK(gx_repeat(in.a, reps[k], axis, &r));
                    int64_t os[3] = {sh[0], sh[1], sh[2]};
                    os[ax] *= reps[k];
                    rep_u u = {ax, 0, reps[k], sh};
                    check_result("repeat", r, dts[di], nd, os, &in, repeat_map, &u, NULL);
                    gx_array_release(r);
                    free_input(&in);
                }
}

GXT_TEST(assemble_tile_matches_reference)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t reps[][3] = {{2, 3, 1}, {1, 1, 1}, {0, 2, 2}, {3, 1, 2}};
    for (int di = 0; di < NDTS; di++)
        for (int nd = 0; nd <= 3; nd++)
            for (int nreps = 0; nreps <= 3; nreps++)
                for (int k = 0; k < 4; k++) {
                    int64_t sh[3] = {sizes[(di + k) % 5], 1, 3};
                    input in;
                    GXT_OK(make_input(ctx, dts[di], nd, sh, k % 3, &in));
                    gx_array *r = NULL;
                    GXT_OK(gx_tile(in.a, reps[k], nreps, &r));
                    int ond = nd > nreps ? nd : nreps;
                    int64_t os[3];
                    for (int d = 0; d < ond; d++) {
                        int ia = d - (ond - nd), ir = d - (ond - nreps);
                        os[d] = (ia >= 0 ? sh[ia] : 1) * (ir >= 0 ? reps[k][ir] : 1);
                    }
                    rep_u u = {0, ond - nd, 0, sh};
                    check_result("tile", r, dts[di], ond, os, &in, tile_map, &u, NULL);
                    gx_array_release(r);
                    free_input(&in);
                }
}

/* Results that need more than GX_MAX_DIMS axes in their broadcast view take the
 * per-copy paths: repeat of an 8-d array, tile of a 5-d array along every axis. */
GXT_TEST(assemble_repeat_tile_many_axes)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t sh8[8] = {2, 1, 2, 1, 3, 1, 2, 2};
    input in;
    GXT_OK(make_input(ctx, GX_I32, 8, sh8, 2, &in));
    gx_array *r = NULL;
    GXT_OK(gx_repeat(in.a, 3, -2, &r));
    int64_t os[8];
    memcpy(os, sh8, sizeof os);
    os[6] *= 3;
    rep_u u = {6, 0, 3, sh8};
    check_result("repeat 8-d", r, GX_I32, 8, os, &in, repeat_map, &u, NULL);
    gx_array_release(r);
    free_input(&in);

    int64_t sh5[5] = {2, 3, 2, 1, 2}, reps[5] = {2, 2, 3, 2, 2};
    GXT_OK(make_input(ctx, GX_F64, 5, sh5, 1, &in));
    GXT_OK(gx_tile(in.a, reps, 5, &r));
    for (int d = 0; d < 5; d++)
        os[d] = sh5[d] * reps[d];
    rep_u t = {0, 0, 0, sh5};
    check_result("tile 5-d", r, GX_F64, 5, os, &in, tile_map, &t, NULL);
    gx_array_release(r);
    free_input(&in);
}

/* ------------------------------------------------------------ pad */

typedef struct pad_u {
    gx_pad_mode mode;
    const int64_t *before, *ishape;
} pad_u;

static int pad_map(const void *u, int nd, const int64_t *o, int64_t *i)
{
    const pad_u *c = u;
    int w = 0;
    for (int d = 0; d < nd; d++) {
        int64_t j = o[d] - c->before[d], n = c->ishape[d];
        if (j >= 0 && j < n) {
            i[d] = j;
            continue;
        }
        if (c->mode == GX_PAD_CONSTANT)
            w = -1;
        else if (c->mode == GX_PAD_EDGE || n == 1)
            i[d] = j < 0 ? 0 : n - 1;
        else /* reflect again and again, one step at a time */
            for (;;) {
                if (j < 0)
                    j = -j;
                else if (j >= n)
                    j = 2 * (n - 1) - j;
                else
                    break;
            }
        if (c->mode == GX_PAD_REFLECT && n > 1)
            i[d] = j;
    }
    return w;
}

GXT_TEST(assemble_pad_matches_reference)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t pads[][2] = {{0, 0}, {1, 2}, {3, 0}, {0, 33}, {7, 5}};
    for (int di = 0; di < NDTS; di++)
        for (int mode = 0; mode < 3; mode++)
            for (int nd = 0; nd <= 3; nd++)
                for (int k = 0; k < 5; k++) {
                    int64_t sh[3] = {sizes[(k + di) % 5 == 0 && mode ? 1 : (k + di) % 5], 4, 1};
                    if (mode == 0 && k == 4)
                        sh[0] = 0;
                    int64_t b[3], e[3], os[3];
                    for (int d = 0; d < nd; d++) {
                        b[d] = pads[(k + d) % 5][0];
                        e[d] = pads[(k + d) % 5][1];
                        os[d] = b[d] + sh[d] + e[d];
                    }
                    input in;
                    GXT_OK(make_input(ctx, dts[di], nd, sh, k % 3, &in));
                    unsigned char val[16];
                    rand_fill(dts[di], val, 1);
                    gx_array *r = NULL;
                    GXT_OK(gx_pad(in.a, b, e, (gx_pad_mode)mode, val, &r));
                    pad_u u = {(gx_pad_mode)mode, b, sh};
                    check_result("pad", r, dts[di], nd, os, &in, pad_map, &u, val);
                    gx_array_release(r);
                    free_input(&in);
                }
}

GXT_TEST(assemble_pad_zero_default_and_long_reflect)
{
    gx_ctx *ctx = gxt_ctx();
    const int32_t x[3] = {1, 2, 3};
    gx_array *a = NULL, *r = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_I32, 1, (int64_t[]){3}, x, &a));
    GXT_OK(gx_pad(a, (int64_t[]){2}, (int64_t[]){1}, GX_PAD_CONSTANT, NULL, &r));
    int32_t got[16];
    GXT_OK(gx_array_to_host(r, got, sizeof got));
    const int32_t want0[6] = {0, 0, 1, 2, 3, 0};
    GXT_CHECK(memcmp(got, want0, sizeof want0) == 0);
    gx_array_release(r);
    /* np.pad([1, 2, 3], (5, 7), 'reflect') */
    GXT_OK(gx_pad(a, (int64_t[]){5}, (int64_t[]){7}, GX_PAD_REFLECT, NULL, &r));
    GXT_OK(gx_array_to_host(r, got, sizeof got));
    const int32_t want1[15] = {2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2};
    GXT_CHECK(memcmp(got, want1, sizeof want1) == 0);
    gx_array_release(r);
    gx_array_release(a);
}

/* ------------------------------------------------------------ flip / roll */

typedef struct fr_u {
    int ax; /* -1: every axis */
    int64_t shift;
    const int64_t *ishape;
} fr_u;

static int flip_map(const void *u, int nd, const int64_t *o, int64_t *i)
{
    const fr_u *c = u;
    for (int d = 0; d < nd; d++)
        i[d] = c->ax < 0 || c->ax == d ? c->ishape[d] - 1 - o[d] : o[d];
    return 0;
}

static int roll_map(const void *u, int nd, const int64_t *o, int64_t *i)
{
    const fr_u *c = u;
    if (c->ax >= 0) {
        memcpy(i, o, sizeof(int64_t) * (size_t)nd);
        int64_t n = c->ishape[c->ax];
        i[c->ax] = (((o[c->ax] - c->shift) % n) + n) % n;
        return 0;
    }
    int64_t n = prod(nd, c->ishape), k = lin(nd, c->ishape, o);
    k = (((k - c->shift) % n) + n) % n;
    for (int d = nd - 1; d >= 0; d--) {
        i[d] = k % c->ishape[d];
        k /= c->ishape[d];
    }
    return 0;
}

GXT_TEST(assemble_flip_roll_match_reference)
{
    gx_ctx *ctx = gxt_ctx();
    const int64_t shifts[] = {0, 1, -1, 5, -40, 1000003};
    for (int di = 0; di < NDTS; di++)
        for (int nd = 1; nd <= 3; nd++)
            for (int axis = -nd - 1; axis < nd; axis++)
                for (int kind = 0; kind < 3; kind++) {
                    int ax = axis == -nd - 1 ? -1 : axis < 0 ? axis + nd : axis;
                    int gax = axis == -nd - 1 ? GX_ALL_AXES : axis;
                    int64_t sh[3] = {sizes[(di + kind + axis + 5) % 5], 3, 2};
                    input in;
                    GXT_OK(make_input(ctx, dts[di], nd, sh, kind, &in));
                    gx_array *r = NULL;
                    GXT_OK(gx_flip(in.a, gax, &r));
                    fr_u u = {ax, 0, sh};
                    check_result("flip", r, dts[di], nd, sh, &in, flip_map, &u, NULL);
                    gx_array_release(r);
                    if (prod(nd, sh) > 0)
                        for (int s = 0; s < 6; s++) {
                            GXT_OK(gx_roll(in.a, shifts[s], gax, &r));
                            u.shift = shifts[s];
                            check_result("roll", r, dts[di], nd, sh, &in, roll_map, &u, NULL);
                            gx_array_release(r);
                        }
                    else {
                        GXT_OK(gx_roll(in.a, 3, gax, &r));
                        check_result("roll empty", r, dts[di], nd, sh, &in, roll_map, &u, NULL);
                        gx_array_release(r);
                    }
                    free_input(&in);
                }
}

/* ------------------------------------------------------------ dense copies */

static int id_map(const void *u, int nd, const int64_t *o, int64_t *i)
{
    (void)u;
    memcpy(i, o, sizeof(int64_t) * (size_t)nd);
    return 0;
}

/* "Make it contiguous" is gx_array_clone(a, GX_DTYPE_DEFAULT): any view, dense out. */
GXT_TEST(assemble_clone_makes_views_dense)
{
    gx_ctx *ctx = gxt_ctx();
    for (int di = 0; di < NDTS; di++)
        for (int kind = 0; kind < 3; kind++)
            for (int k = 0; k < 5; k++) {
                int64_t sh[3] = {sizes[k], 5, 3};
                input in;
                GXT_OK(make_input(ctx, dts[di], 3, sh, kind, &in));
                gx_array *r = NULL;
                GXT_OK(gx_array_clone(in.a, GX_DTYPE_DEFAULT, &r));
                check_result("clone", r, dts[di], 3, sh, &in, id_map, NULL, NULL);
                gx_array_release(r);
                free_input(&in);
            }
}

/* ------------------------------------------------------------ bad input */

GXT_TEST(assemble_bad_input)
{
    gx_ctx *ctx = gxt_ctx(), *other = NULL;
    gx_array *a = NULL, *b = NULL, *c = NULL, *f = NULL, *z = NULL, *x = NULL, *r = (gx_array *)1;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, (int64_t[]){2, 3}, &a));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 2, (int64_t[]){4, 3}, &b));
    GXT_OK(gx_array_zeros(ctx, GX_I32, 2, (int64_t[]){2, 3}, &c));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, (int64_t[]){6}, &f));
    GXT_OK(gx_array_zeros(ctx, GX_F32, 0, NULL, &z));
    GXT_OK(gx_ctx_create(&other, GX_BACKEND_CPU));
    GXT_OK(gx_array_zeros(other, GX_F32, 2, (int64_t[]){2, 3}, &x));

    GXT_STATUS(gx_concat(ctx, 2, (gx_array *[]){a, c}, 0, &r), GX_ERR_DTYPE);
    GXT_MSG_HAS("f32");
    GXT_MSG_HAS("i32");
    GXT_CHECK(r == NULL);
    GXT_STATUS(gx_concat(ctx, 2, (gx_array *[]){a, b}, 1, &r), GX_ERR_SHAPE);
    GXT_MSG_HAS("(2, 3)");
    GXT_MSG_HAS("(4, 3)");
    GXT_STATUS(gx_concat(ctx, 2, (gx_array *[]){a, f}, 0, &r), GX_ERR_SHAPE);
    GXT_MSG_HAS("(6,)");
    GXT_STATUS(gx_concat(ctx, 2, (gx_array *[]){a, b}, 2, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("axis 2");
    GXT_STATUS(gx_concat(ctx, 2, (gx_array *[]){a, b}, -3, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("axis -3");
    GXT_STATUS(gx_concat(ctx, 0, (gx_array *[]){a}, 0, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("n >= 1");
    GXT_STATUS(gx_concat(ctx, 1, NULL, 0, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_concat(ctx, 2, (gx_array *[]){a, NULL}, 0, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("arrays[1]");
    GXT_STATUS(gx_concat(ctx, 2, (gx_array *[]){a, x}, 0, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("another context");
    GXT_STATUS(gx_concat(NULL, 1, (gx_array *[]){a}, 0, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_concat(ctx, 1, (gx_array *[]){z}, 0, &r), GX_ERR_SHAPE);
    GXT_MSG_HAS("0-d");
    GXT_STATUS(gx_concat(ctx, 1, (gx_array *[]){a}, 0, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(r == NULL);

    GXT_STATUS(gx_stack(ctx, 2, (gx_array *[]){a, b}, 0, &r), GX_ERR_SHAPE);
    GXT_MSG_HAS("(4, 3)");
    GXT_STATUS(gx_stack(ctx, 2, (gx_array *[]){a, c}, 0, &r), GX_ERR_DTYPE);
    GXT_STATUS(gx_stack(ctx, 1, (gx_array *[]){a}, 3, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("axis 3");
    GXT_STATUS(gx_stack(ctx, 1, (gx_array *[]){x}, 0, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("another context");
    gx_array *a8 = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_U8, 8, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 2}, &a8));
    GXT_STATUS(gx_stack(ctx, 1, &a8, 0, &r), GX_ERR_SHAPE);
    GXT_MSG_HAS("GX_MAX_DIMS");

    GXT_STATUS(gx_repeat(a, -1, 0, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("negative");
    GXT_STATUS(gx_repeat(a, 2, 5, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("out of range");
    GXT_STATUS(gx_repeat(z, 2, 0, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_repeat(NULL, 2, 0, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_repeat(a, INT64_MAX, 0, &r), GX_ERR_SHAPE);
    GXT_MSG_HAS("overflows");
    GXT_STATUS(gx_tile(a, (int64_t[]){2, -1}, 2, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("reps[1]");
    GXT_STATUS(gx_tile(a, (int64_t[9]){1}, 9, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("GX_MAX_DIMS");
    GXT_STATUS(gx_tile(a, NULL, 2, &r), GX_ERR_INVALID_ARGUMENT);

    GXT_STATUS(gx_pad(a, (int64_t[]){1, -1}, (int64_t[]){0, 0}, GX_PAD_EDGE, NULL, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("negative pad");
    GXT_STATUS(gx_pad(a, (int64_t[]){1, 1}, (int64_t[]){0, 0}, (gx_pad_mode)7, NULL, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("gx_pad_mode");
    GXT_STATUS(gx_pad(a, NULL, (int64_t[]){0, 0}, GX_PAD_EDGE, NULL, &r), GX_ERR_INVALID_ARGUMENT);
    gx_array *e = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, (int64_t[]){0}, &e));
    GXT_STATUS(gx_pad(e, (int64_t[]){1}, (int64_t[]){0}, GX_PAD_REFLECT, NULL, &r), GX_ERR_SHAPE);
    GXT_MSG_HAS("empty");

    GXT_STATUS(gx_flip(a, 2, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("axis 2");
    GXT_STATUS(gx_flip(NULL, 0, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_roll(a, 1, -3, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("axis -3");
    GXT_STATUS(gx_roll(a, 1, 0, NULL), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_repeat(a, 1, GX_ALL_AXES, &r), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("GX_ALL_AXES");
    GXT_CHECK(r == NULL);

    gx_array *dead = b;
    GXT_OK(gx_array_release(b));
    GXT_STATUS(gx_flip(dead, 0, &r), GX_ERR_INVALID_HANDLE);
    GXT_STATUS(gx_concat(ctx, 2, (gx_array *[]){a, dead}, 0, &r), GX_ERR_INVALID_HANDLE);
    GXT_CHECK(r == NULL);

    gx_array_release(a);
    gx_array_release(c);
    gx_array_release(f);
    gx_array_release(z);
    gx_array_release(e);
    gx_array_release(a8);
    gx_array_release(x);
    gx_ctx_destroy(other);
}
