/* bind.c -- arrays read by index inside lambdas (see bind.h). */
#include "ops/bind.h"
#include "ops/bounds.h"

#include <stdio.h>
#include <string.h>

static bool bd_dtype_ok(gx_dtype t) { return gx__dtype_supported(t); }

gx_status bd_collect(gx_ctx *ctx, const char *fn, const gx_bind *arrays, int narrays, int unchecked,
                     const gx_const *consts, int nconsts, bd_set *set)
{
    memset(set, 0, sizeof *set);
    if (narrays < 0 || narrays > BD_MAX || (narrays > 0 && !arrays))
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: %d bound arrays; between 0 and %d are allowed (and arrays must not be NULL)", fn, narrays,
                       BD_MAX);
    for (int k = 0; k < narrays; k++) {
        const char *nm = arrays[k].name;
        const gx_array *a = arrays[k].array;
        if (!nm || !nm[0])
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: bound array %d has no name (GX_BIND(\"table\", t))", fn, k);
        if (!a)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: bound array '%.40s' is NULL", fn, nm);
        char what[96];
        gx__fmt(what, sizeof what, "%s (bound array '%.40s')", fn, nm);
        GX__CHECK(gx__array_check(a, what));
        if (a->ctx != ctx)
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "%s: bound array '%.40s' belongs to another context (copy it into this one)", fn, nm);
        if (!bd_dtype_ok(a->dtype))
            return gx__err(GX_ERR_DTYPE, "%s: bound array '%.40s' has dtype %s, which lambdas do not read", fn, nm,
                           gx_dtype_name(a->dtype));
        for (int j = 0; j < k; j++)
            if (strcmp(set->arr[j].name, nm) == 0)
                return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the name '%.40s' is bound to two arrays", fn, nm);
        for (int j = 0; j < nconsts && consts; j++)
            if (consts[j].name && strcmp(consts[j].name, nm) == 0)
                return gx__err(GX_ERR_INVALID_ARGUMENT,
                               "%s: '%.40s' names both a constant and a bound array; rename one of them", fn, nm);
        /* halves reach the lambda as f32 values, like its parameters */
        set->arr[k] = (lam_arr){nm, gx__dtype_is_half(a->dtype) ? GX_F32 : a->dtype, a->ndim};
        set->sdt[k] = a->dtype;
        set->a[k] = a;
    }
    set->n = narrays;
    set->checked = !unchecked;
    return GX_OK;
}

void bd_key(const bd_set *set, gx__sbuf *key)
{
    if (!set || set->n == 0)
        return;
    gx__sb_printf(key, "|bind%d%c:", set->n, set->checked ? 'c' : 'u');
    for (int k = 0; k < set->n; k++)
        gx__sb_printf(key, "%s:%d:%d:%d,", set->arr[k].name, (int)set->arr[k].dtype, (int)set->sdt[k],
                      set->arr[k].ndim);
}

void bd_gen_types(gx__sbuf *b, const bd_set *set)
{
    if (!set || set->n == 0)
        return;
    gx__sb_printf(b,
                  "typedef struct { uint64_t p; int64_t n[%d], s[%d]; } gx_bdesc;\n"
                  "typedef struct { uint64_t flag; gx_bdesc a[%d]; } gx_bargs;\n",
                  GX_MAX_DIMS, GX_MAX_DIMS, BD_MAX);
}

/* Records an offence: the smallest position wins word 0; its thread writes 1-3. */
static void bd_gen_oob(gx__sbuf *b, bool cuda)
{
    if (cuda) {
        gx__sb_puts(
            b, "GXF void gx_boob(uint64_t fl, int64_t pos, int64_t j, int64_t n, int64_t tag)\n{\n"
               "  long long *f = (long long *)fl;\n"
               "  if ((long long)pos < *(volatile long long *)f && atomicMin(f, (long long)pos) > (long long)pos) {\n"
               "    f[1] = (long long)j; f[2] = (long long)n; f[3] = (long long)tag;\n  }\n}\n");
        return;
    }
    gx__sb_puts(b, "GXF void gx_boob(uint64_t fl, int64_t pos, int64_t j, int64_t n, int64_t tag)\n{\n"
                   "  int64_t *f = (int64_t *)fl;\n"
                   "  int64_t old = __atomic_load_n(f, __ATOMIC_RELAXED);\n"
                   "  while (pos < old)\n"
                   "    if (__atomic_compare_exchange_n(f, &old, pos, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {\n"
                   "      __atomic_store_n(f + 1, j, __ATOMIC_RELAXED);\n"
                   "      __atomic_store_n(f + 2, n, __ATOMIC_RELAXED);\n"
                   "      __atomic_store_n(f + 3, tag, __ATOMIC_RELAXED);\n"
                   "      return;\n    }\n}\n");
}

static const char *bd_zero(gx_dtype t)
{
    return t == GX_C64 ? "c32(0.0f, 0.0f)" : t == GX_C128 ? "c64(0.0, 0.0)" : "0";
}

/* gx_bload<k>(p, n0.., s0.., fl, pos, j0..): extents and strides as scalars, so a
 * CUDA kernel reads them from its parameters without taking their address. */
static void bd_gen_load(gx__sbuf *b, const bd_set *set, int k)
{
    const char *t = gx__dtype_ctype(set->arr[k].dtype);
    int r = set->arr[k].ndim;
    gx__sb_printf(b, "GXF %s gx_bload%d(uint64_t p", t, k);
    for (int d = 0; d < r; d++)
        gx__sb_printf(b, ", int64_t n%d", d);
    for (int d = 0; d < r; d++)
        gx__sb_printf(b, ", int64_t s%d", d);
    gx__sb_puts(b, ", uint64_t fl, int64_t pos");
    for (int d = 0; d < r; d++)
        gx__sb_printf(b, ", int64_t j%d", d);
    gx__sb_puts(b, ")\n{\n  (void)fl; (void)pos;\n");
    for (int d = 0; d < r; d++) {
        if (set->checked)
            gx__sb_printf(b, "  if ((uint64_t)j%d >= (uint64_t)n%d) { gx_boob(fl, pos, j%d, n%d, %d); return %s; }\n",
                          d, d, d, d, 16 * k + d, bd_zero(set->arr[k].dtype));
        else
            gx__sb_printf(b, "  (void)n%d;\n", d);
    }
    /* the element, widened to t when it is a half (gx__dtype_load) */
    gx_dtype st = set->sdt[k];
    gx__sb_printf(b, "  return %s(((const %s *)p)[0", gx__dtype_is_half(st) ? (st == GX_F16 ? "gx_ld_f16" : "gx_ld_bf16") : "",
                  gx__dtype_ctype(st));
    for (int d = 0; d < r; d++)
        gx__sb_printf(b, " + j%d * s%d", d, d);
    gx__sb_puts(b, "]);\n}\n");
}

void bd_gen(gx__sbuf *b, const bd_set *set, bool cuda, const char *acc, const char *pos)
{
    if (!set || set->n == 0)
        return;
    gx__sb_puts(b, "GXF int64_t gx_bix_u64(uint64_t v) { return v > 0x7fffffffffffffffULL ? "
                   "(int64_t)0x7fffffffffffffffLL : (int64_t)v; }\n");
    if (set->checked)
        bd_gen_oob(b, cuda);
    for (int k = 0; k < set->n; k++) {
        bd_gen_load(b, set, k);
        int r = set->arr[k].ndim;
        gx__sb_printf(b, "#define gx_bl%d(", k);
        for (int d = 0; d < r; d++)
            gx__sb_printf(b, "%sj%d", d ? ", " : "", d);
        gx__sb_printf(b, ") gx_bload%d(%sa[%d].p", k, acc, k);
        for (int d = 0; d < r; d++)
            gx__sb_printf(b, ", %sa[%d].n[%d]", acc, k, d);
        for (int d = 0; d < r; d++)
            gx__sb_printf(b, ", %sa[%d].s[%d]", acc, k, d);
        gx__sb_printf(b, ", %sflag, %s", acc, pos);
        for (int d = 0; d < r; d++)
            gx__sb_printf(b, ", (j%d)", d);
        gx__sb_puts(b, ")\n");
    }
}

gx_status bd_begin(gx_ctx *ctx, bd_set *set, bd_args *args)
{
    memset(args, 0, sizeof *args);
    set->flag = NULL;
    if (set->n == 0)
        return GX_OK;
    for (int k = 0; k < set->n; k++) {
        const gx_array *a = set->a[k];
        args->a[k].p = (uint64_t)(uintptr_t)gx__array_ptr(a);
        memcpy(args->a[k].n, a->shape, sizeof(int64_t) * (size_t)a->ndim);
        memcpy(args->a[k].s, a->strides, sizeof(int64_t) * (size_t)a->ndim);
    }
    if (set->checked) {
        GX__CHECK(gx__oob_begin(ctx, &set->flag));
        args->flag = (uint64_t)(uintptr_t)set->flag;
    }
    return GX_OK;
}

/* Reads the flag back; *hit tells whether a kernel recorded an offence (w filled). */
static gx_status bd_read(gx_ctx *ctx, bd_set *set, int64_t w[4], bool *hit)
{
    *hit = false;
    gx_status e = gx__oob_end(ctx, set->flag, w);
    set->flag = NULL;
    *hit = e == GX_OK && w[0] != INT64_MAX;
    return e;
}

static gx_status bd_report(const bd_set *set, const char *fn, const int64_t w[4], const char *where)
{
    int k = (int)(w[3] / 16), d = (int)(w[3] % 16);
    if (k < 0 || k >= set->n)
        k = 0;
    char sh[160];
    gx__shape_str(sh, sizeof sh, set->a[k]->ndim, set->a[k]->shape);
    return gx__err(GX_ERR_INDEX,
                   "%s: index %lld is out of range for axis %d of bound array '%.40s' (shape %s, size %lld on that "
                   "axis) at %s (the first offending one; indices run from 0 to size - 1, negative ones do not "
                   "wrap); that read gave 0.  Fix the index, or clamp it in the lambda with min/max "
                   "(opts.unchecked skips the check for speed)",
                   fn, (long long)w[1], d, set->arr[k].name, sh, (long long)w[2], where);
}

gx_status bd_end(gx_ctx *ctx, bd_set *set, const char *fn, const char *poswhat, gx_status s)
{
    if (set->n == 0 || !set->flag)
        return s;
    int64_t w[4];
    bool hit;
    gx_status e = bd_read(ctx, set, w, &hit);
    if (s != GX_OK || !hit)
        return s != GX_OK ? s : e;
    char where[192];
    gx__fmt(where, sizeof where, "%s %lld", poswhat, (long long)w[0]);
    return bd_report(set, fn, w, where);
}

gx_status bd_end_split(gx_ctx *ctx, bd_set *set, const char *fn, int64_t per, gx_status s)
{
    if (set->n == 0 || !set->flag)
        return s;
    int64_t w[4];
    bool hit;
    gx_status e = bd_read(ctx, set, w, &hit);
    if (s != GX_OK || !hit)
        return s != GX_OK ? s : e;
    per = per > 0 ? per : 1;
    char where[192];
    gx__fmt(where, sizeof where,
            "output element %lld (row-major over the kept axes), reduced element %lld (row-major over the "
            "reduced axes)",
            (long long)(w[0] / per), (long long)(w[0] % per));
    return bd_report(set, fn, w, where);
}

gx_status bd_no_operator(const char *fn, int narrays, const char *instead)
{
    if (narrays == 0)
        return GX_OK;
    return gx__err(GX_ERR_INVALID_ARGUMENT,
                   "%s: opts->arrays binds %d array(s), but here only the operator is a lambda, and an operator "
                   "combines two partial results with no element position, so it reads no arrays; %s",
                   fn, narrays, instead);
}
