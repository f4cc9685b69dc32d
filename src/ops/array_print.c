/* array_print.c -- a readable text of an array (gx_array_format, gx_array_print).
 *
 * Three steps:
 *  1. gather: the elements that will be shown are copied to a dense host buffer.
 *     Along an axis that is summarised only [0, e) and [n-e, n) are shown, so the
 *     shown set is a product of at most two index ranges per axis: one view per
 *     combination of ranges (at most 2^ndim) is read with gx_array_to_host.  An
 *     array that is not summarised is read in one transfer.
 *  2. measure: one notation for the floats (plain or e-notation) and one column
 *     width for every element, both decided over the shown elements.
 *  3. emit: nested brackets, NumPy's layout (rows separated by ",\n", one more
 *     blank line per extra axis; a row wider than the line width wraps with a
 *     hanging indent; "..." where elements were left out). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/gx_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PR_THRESHOLD 1000
#define PR_EDGEITEMS 3
#define PR_LINEWIDTH 75
#define PR_MAX_PRECISION 17
#define PR_ELEM_MAX 128 /* room for the text of one element (c128 at 17 digits is ~50) */

typedef struct pr_state {
    gx_dtype dt;
    size_t esz;
    int ndim;
    int64_t shape[GX_MAX_DIMS];   /* the array's logical shape */
    int64_t shown[GX_MAX_DIMS];   /* entries shown along each axis */
    int64_t sstride[GX_MAX_DIMS]; /* dense strides of the shown buffer, elements */
    bool split[GX_MAX_DIMS];      /* axis summarised: first edge, "...", last edge */
    int64_t edge;
    const unsigned char *vals; /* shown elements, dense row-major */
    int prec;
    bool sci;     /* floats in e-notation */
    size_t width; /* common column width */
    size_t linewidth;
    gx__sbuf *b;
    size_t col; /* length of the output's current line */
} pr_state;

/* ------------------------------------------------------------ elements */

/* The float parts of one element (1 for real dtypes, 2 for complex). */
static int float_parts(gx_dtype t, const unsigned char *src, double part[2])
{
    if (gx__dtype_is_float(t)) {
        part[0] = gx__dtype_to_f64(t, src);
        return 1;
    }
    if (t == GX_C64) {
        float f[2];
        memcpy(f, src, 8);
        part[0] = f[0], part[1] = f[1];
        return 2;
    }
    if (t == GX_C128) {
        memcpy(part, src, 16);
        return 2;
    }
    return 0;
}

static int default_precision(gx_dtype t)
{
    switch (t) {
    case GX_F16: return 4;
    case GX_BF16: return 3;
    case GX_F64:
    case GX_C128: return 8;
    default: return 6;
    }
}

/* Decimal exponent of |v| once rounded to prec significant digits (v finite, != 0). */
static int dec_exponent(double v, int prec)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, fabs(v));
    const char *e = strchr(tmp, 'e');
    return e ? atoi(e + 1) : 0;
}

/* One real number: nan / inf / -inf, else prec significant digits without trailing
 * zeros, plain ("%g" style: the mode decision keeps every value in %g's plain range)
 * or in e-notation. */
static size_t fmt_real(double v, int prec, bool sci, char *out, size_t n)
{
    int k;
    if (isnan(v))
        k = snprintf(out, n, "nan");
    else if (isinf(v))
        k = snprintf(out, n, v < 0 ? "-inf" : "inf");
    else if (!sci)
        k = snprintf(out, n, "%.*g", prec, v);
    else {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
        char *e = strchr(tmp, 'e'), *q = e;
        if (e && memchr(tmp, '.', (size_t)(e - tmp))) {
            while (q[-1] == '0')
                q--;
            if (q[-1] == '.')
                q--;
        }
        k = snprintf(out, n, "%.*s%s", (int)(q - tmp), tmp, e ? e : "");
    }
    return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}

/* The text of one element into out (PR_ELEM_MAX bytes); returns its length. */
static size_t fmt_elem(const pr_state *p, const unsigned char *src, char *out)
{
    const size_t n = PR_ELEM_MAX;
    int k = 0;
    switch (p->dt) {
    case GX_BOOL: k = snprintf(out, n, "%s", *src ? "true" : "false"); break;
    case GX_I8: {
        int8_t v;
        memcpy(&v, src, 1);
        k = snprintf(out, n, "%d", (int)v);
        break;
    }
    case GX_I16: {
        int16_t v;
        memcpy(&v, src, 2);
        k = snprintf(out, n, "%d", (int)v);
        break;
    }
    case GX_I32: {
        int32_t v;
        memcpy(&v, src, 4);
        k = snprintf(out, n, "%ld", (long)v);
        break;
    }
    case GX_I64: {
        int64_t v;
        memcpy(&v, src, 8);
        k = snprintf(out, n, "%lld", (long long)v);
        break;
    }
    case GX_U8: k = snprintf(out, n, "%u", (unsigned)*src); break;
    case GX_U16: {
        uint16_t v;
        memcpy(&v, src, 2);
        k = snprintf(out, n, "%u", (unsigned)v);
        break;
    }
    case GX_U32: {
        uint32_t v;
        memcpy(&v, src, 4);
        k = snprintf(out, n, "%lu", (unsigned long)v);
        break;
    }
    case GX_U64: {
        uint64_t v;
        memcpy(&v, src, 8);
        k = snprintf(out, n, "%llu", (unsigned long long)v);
        break;
    }
    default: {
        double part[2];
        int np = float_parts(p->dt, src, part);
        if (np == 0)
            return (size_t)snprintf(out, n, "?");
        size_t len = fmt_real(part[0], p->prec, p->sci, out, n);
        if (np == 1)
            return len;
        /* complex: re, the imaginary part's sign, |im|, "j" (nan always with "+") */
        double im = part[1];
        bool neg = !isnan(im) && signbit(im);
        out[len++] = neg ? '-' : '+';
        len += fmt_real(neg ? -im : im, p->prec, p->sci, out + len, n - len - 1);
        out[len++] = 'j';
        out[len] = 0;
        return len;
    }
    }
    return k < 0 ? 0 : (size_t)k;
}

/* ------------------------------------------------------------ gather */

static gx_status pr_oom(int64_t count, const pr_state *p)
{
    return gx__err(GX_ERR_OUT_OF_MEMORY,
                   "gx_array_format: out of host memory for the %lld shown elements of %s (use a smaller "
                   "gx_print_opts.threshold or edgeitems so that fewer are shown)",
                   (long long)count, gx_dtype_name(p->dt));
}

/* Copies the shown elements of a into a new dense host buffer (*out, free()). */
static gx_status gather(const gx_array *a, const pr_state *p, int64_t total, unsigned char **out)
{
    *out = NULL;
    unsigned char *vals = malloc((size_t)total * p->esz);
    if (!vals)
        return pr_oom(total, p);
    int splits[GX_MAX_DIMS], nsplit = 0;
    for (int d = 0; d < p->ndim; d++)
        if (p->split[d])
            splits[nsplit++] = d;
    if (nsplit == 0) {
        gx_status s = gx_array_to_host(a, vals, (size_t)total * p->esz);
        if (s != GX_OK) {
            free(vals);
            return gx__err_prefix(s, "gx_array_format");
        }
        *out = vals;
        return GX_OK;
    }
    /* Each combination of (leading, trailing) per summarised axis is one block. */
    int64_t block_max = total >> nsplit;
    unsigned char *tmp = malloc((size_t)block_max * p->esz);
    if (!tmp) {
        free(vals);
        return pr_oom(total, p);
    }
    gx_status s = GX_OK;
    for (unsigned mask = 0; mask < (1u << nsplit) && s == GX_OK; mask++) {
        gx_slice sl[GX_MAX_DIMS];
        int64_t base[GX_MAX_DIMS], bshape[GX_MAX_DIMS], count = 1;
        for (int d = 0; d < p->ndim; d++) {
            sl[d] = GX_ALL;
            base[d] = 0;
            bshape[d] = p->shape[d];
        }
        for (int k = 0; k < nsplit; k++) {
            int d = splits[k];
            bool tail = (mask >> k) & 1u;
            sl[d] = tail ? (gx_slice){p->shape[d] - p->edge, p->shape[d], 1} : (gx_slice){0, p->edge, 1};
            base[d] = tail ? p->edge : 0;
            bshape[d] = p->edge;
        }
        for (int d = 0; d < p->ndim; d++)
            count *= bshape[d];
        /* gx_array_view does not change `a`: it adds a handle sharing a's storage. */
        gx_array *v = NULL;
        s = gx_array_view((gx_array *)(uintptr_t)a, sl, &v);
        if (s == GX_OK)
            s = gx_array_to_host(v, tmp, (size_t)count * p->esz);
        gx_array_release(v);
        if (s != GX_OK) {
            s = gx__err_prefix(s, "gx_array_format");
            break;
        }
        /* Scatter the block into place, one row of the last axis at a time. */
        int last = p->ndim - 1;
        int64_t row = bshape[last], rows = count / row, idx[GX_MAX_DIMS] = {0};
        for (int64_t r = 0; r < rows; r++) {
            int64_t off = 0;
            for (int d = 0; d < p->ndim; d++)
                off += (base[d] + idx[d]) * p->sstride[d];
            memcpy(vals + (size_t)off * p->esz, tmp + (size_t)(r * row) * p->esz, (size_t)row * p->esz);
            for (int d = last - 1; d >= 0; d--) {
                if (++idx[d] < bshape[d])
                    break;
                idx[d] = 0;
            }
        }
    }
    free(tmp);
    if (s != GX_OK) {
        free(vals);
        return s;
    }
    *out = vals;
    return GX_OK;
}

/* ------------------------------------------------------------ emit */

static void put(pr_state *p, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            p->col = 0;
        else
            p->col++;
    }
    gx__sb_printf(p->b, "%.*s", (int)n, s);
}

static void put_spaces(pr_state *p, size_t n)
{
    static const char sp[] = "                                ";
    while (n > 0) {
        size_t k = n < sizeof sp - 1 ? n : sizeof sp - 1;
        put(p, sp, k);
        n -= k;
    }
}

/* One element, right-aligned to the common width. */
static void put_elem(pr_state *p, int64_t off)
{
    char txt[PR_ELEM_MAX];
    size_t len = fmt_elem(p, p->vals + (size_t)off * p->esz, txt);
    if (len < p->width)
        put_spaces(p, p->width - len);
    put(p, txt, len);
}

/* A word of the innermost row after the first: ", word" on this line when it fits
 * with `tail` characters that must follow it, else ",\n" + hanging indent + word. */
static void row_sep(pr_state *p, size_t wlen, size_t tail)
{
    put(p, ",", 1);
    if (p->col + 1 + wlen + tail <= p->linewidth) {
        put(p, " ", 1);
    } else {
        put(p, "\n", 1);
        put_spaces(p, (size_t)p->ndim);
    }
}

/* The sub-array at `axis` whose first shown element is at `off`.  closers: how many
 * ']' follow this sub-array's own; comma: whether a ',' follows them. */
static void emit(pr_state *p, int axis, int64_t off, int closers, bool comma)
{
    put(p, "[", 1);
    int64_t n = p->shown[axis];
    if (axis == p->ndim - 1) {
        size_t last_tail = 1 + (size_t)closers + (comma ? 1 : 0);
        for (int64_t i = 0; i < n; i++) {
            if (p->split[axis] && i == p->edge) {
                row_sep(p, 3, 1);
                put(p, "...", 3);
            }
            if (i > 0)
                row_sep(p, p->width, i == n - 1 ? last_tail : 1);
            put_elem(p, off + i * p->sstride[axis]);
        }
    } else {
        int gaps = p->ndim - axis - 1; /* newlines between sub-arrays */
        for (int64_t i = 0; i < n; i++) {
            if (p->split[axis] && i == p->edge) {
                put(p, ",", 1);
                for (int g = 0; g < gaps; g++)
                    put(p, "\n", 1);
                put_spaces(p, (size_t)axis + 1);
                put(p, "...", 3);
            }
            if (i > 0) {
                put(p, ",", 1);
                for (int g = 0; g < gaps; g++)
                    put(p, "\n", 1);
                put_spaces(p, (size_t)axis + 1);
            }
            bool lastc = i == n - 1;
            emit(p, axis + 1, off + i * p->sstride[axis], lastc ? closers + 1 : 0, lastc ? comma : true);
        }
    }
    put(p, "]", 1);
}

/* ------------------------------------------------------------ entry points */

static gx_status build_text(const gx_array *a, const gx_print_opts *opts, gx__sbuf *b, const char *what)
{
    GX__CHECK(gx__array_check(a, what));
    GX__OPTS_CHECK(opts, what);
    gx_print_opts o = {0};
    if (opts)
        o = *opts;
    GX__ARG(o.threshold >= 0, "%s: opts->threshold is %lld: use 0 for the default (%d) or a positive element count",
            what, (long long)o.threshold, PR_THRESHOLD);
    GX__ARG(o.edgeitems >= 0, "%s: opts->edgeitems is %d: use 0 for the default (%d) or a positive count", what,
            o.edgeitems, PR_EDGEITEMS);
    GX__ARG(o.precision >= 0, "%s: opts->precision is %d: use 0 for the dtype's default or a positive digit count",
            what, o.precision);
    GX__ARG(o.linewidth >= 0, "%s: opts->linewidth is %d: use 0 for the default (%d) or a positive width", what,
            o.linewidth, PR_LINEWIDTH);

    pr_state p = {0};
    p.dt = a->dtype;
    p.esz = gx_dtype_size(a->dtype);
    if (p.esz == 0)
        return gx__err(GX_ERR_DTYPE, "%s: the array has an invalid dtype (%d)", what, (int)a->dtype);
    p.ndim = a->ndim;
    p.edge = o.edgeitems ? o.edgeitems : PR_EDGEITEMS;
    p.prec = o.precision ? o.precision : default_precision(a->dtype);
    if (p.prec > PR_MAX_PRECISION)
        p.prec = PR_MAX_PRECISION;
    p.linewidth = (size_t)(o.linewidth ? o.linewidth : PR_LINEWIDTH);
    p.b = b;
    int64_t threshold = o.threshold ? o.threshold : PR_THRESHOLD;
    bool summarise = a->size > threshold;

    gx__sb_printf(b, "gx_array %s [", gx_dtype_name(a->dtype));
    for (int d = 0; d < a->ndim; d++)
        gx__sb_printf(b, d ? ", %lld" : "%lld", (long long)a->shape[d]);
    gx__sb_puts(b, "]\n");
    if (a->size == 0) {
        /* Empty: nothing to read, but wait like every other read of the array would. */
        gx_status s = gx_array_to_host(a, NULL, 0);
        if (s != GX_OK)
            return gx__err_prefix(s, "%s", what);
        gx__sb_puts(b, "[]");
        return GX_OK;
    }

    int64_t total = 1;
    for (int d = 0; d < p.ndim; d++) {
        p.shape[d] = a->shape[d];
        p.split[d] = summarise && a->shape[d] > 2 * p.edge;
        p.shown[d] = p.split[d] ? 2 * p.edge : a->shape[d];
        total *= p.shown[d];
    }
    int64_t st = 1;
    for (int d = p.ndim - 1; d >= 0; d--) {
        p.sstride[d] = st;
        st *= p.shown[d];
    }
    unsigned char *vals;
    gx_status s = gather(a, &p, total, &vals);
    if (s != GX_OK)
        return s;
    p.vals = vals;

    /* One notation for the floats: e-notation when any finite, non-zero shown value
     * would not print plainly with prec significant digits (as %g decides). */
    if (gx__dtype_is_float(p.dt) || gx__dtype_is_complex(p.dt))
        for (int64_t i = 0; i < total && !p.sci; i++) {
            double part[2];
            int np = float_parts(p.dt, vals + (size_t)i * p.esz, part);
            for (int k = 0; k < np; k++)
                if (isfinite(part[k]) && part[k] != 0) {
                    int x = dec_exponent(part[k], p.prec);
                    if (x < -4 || x >= p.prec)
                        p.sci = true;
                }
        }
    if (p.ndim == 0) {
        char txt[PR_ELEM_MAX];
        size_t len = fmt_elem(&p, vals, txt);
        put(&p, txt, len);
    } else {
        for (int64_t i = 0; i < total; i++) {
            char txt[PR_ELEM_MAX];
            size_t len = fmt_elem(&p, vals + (size_t)i * p.esz, txt);
            if (len > p.width)
                p.width = len;
        }
        emit(&p, 0, 0, 0, false);
    }
    free(vals);
    return GX_OK;
}

gx_status gx_array_format(const gx_array *a, const gx_print_opts *opts, char *buf, size_t cap, size_t *needed)
{
    GX__ARG(buf || cap == 0, "gx_array_format: buf is NULL but cap is %zu (pass cap 0 to ask for the size)", cap);
    if (buf && cap)
        buf[0] = 0;
    gx__sbuf b = {0};
    gx_status s = build_text(a, opts, &b, "gx_array_format");
    if (s == GX_OK)
        s = gx__sb_export(&b, buf, cap, needed);
    gx__sb_free(&b);
    return s;
}

gx_status gx_array_print(const gx_array *a, const gx_print_opts *opts)
{
    gx__sbuf b = {0};
    gx_status s = build_text(a, opts, &b, "gx_array_print");
    if (s == GX_OK && b.oom)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "gx_array_print: out of host memory while building the text");
    if (s == GX_OK) {
        if (fwrite(b.p, 1, b.len, stdout) != b.len || fputc('\n', stdout) == EOF || fflush(stdout) != 0)
            s = gx__err(GX_ERR_IO, "gx_array_print: writing to stdout failed (is it closed or a full disk?)");
    }
    gx__sb_free(&b);
    return s;
}
