/* lambda_scan.c -- finds the top-level function definitions in user C source and
 * reads their signatures, so lambdas can call them with type checking.
 *
 * This is not a C parser: it tokenizes (skipping comments, string and character
 * literals and preprocessor lines), tracks parentheses and braces, and treats
 * "... name ( params ) {" at file scope as a definition.  Everything else at file
 * scope (declarations, typedefs, struct definitions, initializers) is skipped. */
#include "jit/lambda_impl.h"

#include <stdlib.h>
#include <string.h>

typedef enum { ST_ID, ST_NUM, ST_PUNCT, ST_LIT } stkind;
typedef struct stok {
    stkind kind;
    int start, len, line;
} stok;

typedef struct scanner {
    const char *src;
    stok *t;
    int n, cap;
} scanner;

static bool id_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool id_char(char c) { return id_start(c) || (c >= '0' && c <= '9'); }

static gx_status scan_err(int line, const char *what)
{
    return gx__err(GX_ERR_SYNTAX, "user functions, line %d: %s", line, what);
}

static gx_status push(scanner *s, stkind k, int start, int len, int line)
{
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 256;
        stok *t = realloc(s->t, (size_t)cap * sizeof *t);
        if (!t)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory while reading user functions");
        s->t = t;
        s->cap = cap;
    }
    s->t[s->n++] = (stok){k, start, len, line};
    return GX_OK;
}

/* Skips a comment, literal, preprocessor line or whitespace at *p; true if it did. */
static gx_status skip_trivia(const char *src, size_t *p, int *line, bool *bol, bool *skipped)
{
    size_t i = *p;
    *skipped = true;
    if (src[i] == '\n') {
        (*line)++;
        *bol = true;
        i++;
    } else if (src[i] == ' ' || src[i] == '\t' || src[i] == '\r' || src[i] == '\f' || src[i] == '\v') {
        i++;
    } else if (src[i] == '/' && src[i + 1] == '/') {
        while (src[i] && src[i] != '\n')
            i++;
    } else if (src[i] == '/' && src[i + 1] == '*') {
        int l0 = *line;
        for (i += 2; src[i] && !(src[i] == '*' && src[i + 1] == '/'); i++)
            if (src[i] == '\n')
                (*line)++;
        if (!src[i])
            return scan_err(l0, "unterminated /* comment");
        i += 2;
    } else if (src[i] == '#' && *bol) {
        /* preprocessor line, with backslash continuations */
        while (src[i] && src[i] != '\n') {
            if (src[i] == '\\' && src[i + 1] == '\n') {
                (*line)++;
                i++;
            } else if (src[i] == '\\' && src[i + 1] == '\r' && src[i + 2] == '\n') {
                (*line)++;
                i += 2;
            }
            i++;
        }
    } else {
        *skipped = false;
    }
    *p = i;
    return GX_OK;
}

static gx_status tokenize(scanner *s)
{
    const char *src = s->src;
    size_t i = 0;
    int line = 1;
    bool bol = true;
    while (src[i]) {
        bool skipped;
        GX__CHECK(skip_trivia(src, &i, &line, &bol, &skipped));
        if (skipped)
            continue;
        bol = false;
        size_t st = i;
        stkind k;
        if (src[i] == '"' || src[i] == '\'') {
            char q = src[i++];
            while (src[i] && src[i] != q && src[i] != '\n')
                i += (src[i] == '\\' && src[i + 1] && src[i + 1] != '\n') ? 2 : 1;
            if (src[i] != q)
                return scan_err(line, q == '"' ? "unterminated string literal" : "unterminated character literal");
            i++;
            k = ST_LIT;
        } else if (id_start(src[i])) {
            while (id_char(src[i]))
                i++;
            k = ST_ID;
        } else if ((src[i] >= '0' && src[i] <= '9') || (src[i] == '.' && src[i + 1] >= '0' && src[i + 1] <= '9')) {
            while (id_char(src[i]) || src[i] == '.' ||
                   ((src[i] == '+' || src[i] == '-') &&
                    (src[i - 1] == 'e' || src[i - 1] == 'E' || src[i - 1] == 'p' || src[i - 1] == 'P')))
                i++;
            k = ST_NUM;
        } else {
            i++;
            k = ST_PUNCT;
        }
        if (i - st > (size_t)INT32_MAX || i > (size_t)INT32_MAX)
            return scan_err(line, "source is too large");
        GX__CHECK(push(s, k, (int)st, (int)(i - st), line));
    }
    return GX_OK;
}

/* ------------------------------------------------------------ types */

static bool tok_is(const scanner *s, int i, const char *w)
{
    size_t n = strlen(w);
    return (size_t)s->t[i].len == n && memcmp(s->src + s->t[i].start, w, n) == 0;
}

static bool is_qualifier(const scanner *s, int i)
{
    static const char *const q[] = {"const",      "volatile",   "static",     "inline",          "extern",
                                    "register",   "restrict",   "__restrict", "__restrict__",    "__inline",
                                    "__inline__", "__device__", "__host__",   "__forceinline__", "GXF",
                                    "auto",       "_Noreturn"};
    for (size_t k = 0; k < sizeof q / sizeof q[0]; k++)
        if (tok_is(s, i, q[k]))
            return true;
    return false;
}

static bool is_type_word(const scanner *s, int i)
{
    static const char *const w[] = {"void", "bool",   "_Bool",    "char",  "short", "int",
                                    "long", "signed", "unsigned", "float", "double"};
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++)
        if (tok_is(s, i, w[k]))
            return true;
    return false;
}

#define TY_VOID ((gx_dtype)(GX_DTYPE_COUNT + 1))

static gx_dtype typedef_name(const scanner *s, int i)
{
    static const struct {
        const char *name;
        gx_dtype t;
    } names[] = {
        {"bool", GX_BOOL},   {"_Bool", GX_BOOL}, {"int8_t", GX_I8},    {"int16_t", GX_I16},   {"int32_t", GX_I32},
        {"int64_t", GX_I64}, {"uint8_t", GX_U8}, {"uint16_t", GX_U16}, {"uint32_t", GX_U32},  {"uint64_t", GX_U64},
        {"float", GX_F32},   {"double", GX_F64}, {"size_t", GX_U64},   {"ptrdiff_t", GX_I64}, {"void", TY_VOID},
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (tok_is(s, i, names[k].name))
            return names[k].t;
    return GX_DTYPE_COUNT;
}

/* Maps the type spelled by tokens [a, b) to a dtype; GX_DTYPE_COUNT when it is not
 * a scalar dtype (pointers, structs, cf32, char, long double...), TY_VOID for void. */
static gx_dtype map_type(const scanner *s, int a, int b)
{
    int nsigned = 0, nunsigned = 0, nshort = 0, nlong = 0, nint = 0, nchar = 0, nbase = 0;
    gx_dtype base = GX_DTYPE_COUNT;
    for (int i = a; i < b; i++) {
        if (s->t[i].kind != ST_ID)
            return GX_DTYPE_COUNT;
        if (is_qualifier(s, i))
            continue;
        if (tok_is(s, i, "signed"))
            nsigned++;
        else if (tok_is(s, i, "unsigned"))
            nunsigned++;
        else if (tok_is(s, i, "short"))
            nshort++;
        else if (tok_is(s, i, "long"))
            nlong++;
        else if (tok_is(s, i, "int"))
            nint++;
        else if (tok_is(s, i, "char"))
            nchar++;
        else {
            base = typedef_name(s, i);
            nbase++;
            if (base == GX_DTYPE_COUNT)
                return GX_DTYPE_COUNT;
        }
    }
    int nmod = nsigned + nunsigned + nshort + nlong + nint + nchar;
    if (nbase > 1 || (nbase == 1 && nmod > 0) || (nsigned && nunsigned) || nint > 1 || nchar > 1 || nlong > 2)
        return GX_DTYPE_COUNT;
    if (nbase == 1)
        return base;
    if (nchar)
        return (nshort || nlong || nint) ? GX_DTYPE_COUNT : nsigned ? GX_I8 : nunsigned ? GX_U8 : GX_DTYPE_COUNT;
    if (nshort)
        return nlong ? GX_DTYPE_COUNT : nunsigned ? GX_U16 : GX_I16;
    if (nlong)
        return nunsigned ? GX_U64 : GX_I64;
    if (nmod)
        return nunsigned ? GX_U32 : GX_I32;
    return GX_DTYPE_COUNT;
}

/* One parameter [a, b): drops a trailing name, maps the rest. */
static gx_dtype param_type(const scanner *s, int a, int b)
{
    if (b - a >= 2 && s->t[b - 1].kind == ST_ID && !is_type_word(s, b - 1) && !is_qualifier(s, b - 1) &&
        typedef_name(s, b - 1) == GX_DTYPE_COUNT)
        b--;
    else if (b - a >= 2 && s->t[b - 1].kind == ST_ID && typedef_name(s, b - 1) != GX_DTYPE_COUNT &&
             (s->t[b - 2].kind == ST_ID && !is_type_word(s, b - 2) && !is_qualifier(s, b - 2)))
        return GX_DTYPE_COUNT; /* e.g. "cf32 float": not something we can read */
    return map_type(s, a, b);
}

/* ------------------------------------------------------------ definitions */

static bool punct(const scanner *s, int i, char c) { return s->t[i].kind == ST_PUNCT && s->src[s->t[i].start] == c; }

/* Header tokens [a, rp] where rp is the ')' before '{'. */
static gx_status read_header(const scanner *s, int a, int rp, lam_fn_sig *sig)
{
    int depth = 0, lp = -1;
    for (int i = rp; i >= a; i--) {
        depth += punct(s, i, ')') - punct(s, i, '(');
        if (depth == 0) {
            lp = i;
            break;
        }
    }
    if (lp <= a || s->t[lp - 1].kind != ST_ID)
        return scan_err(s->t[rp].line,
                        "cannot read this function definition's name (write 'type name(params) { ... }')");
    const stok *nm = &s->t[lp - 1];
    if (nm->len >= (int)sizeof sig->name)
        return scan_err(nm->line, "function name is longer than 63 characters");
    memset(sig, 0, sizeof *sig);
    memcpy(sig->name, s->src + nm->start, (size_t)nm->len);
    gx_dtype ret = map_type(s, a, lp - 1);
    bool ok = ret != GX_DTYPE_COUNT && ret != TY_VOID;
    sig->ret = ok ? ret : GX_DTYPE_COUNT;
    int pa = lp + 1, np = 0;
    bool empty = pa == rp || (rp - pa == 1 && tok_is(s, pa, "void"));
    for (int i = pa; !empty && i <= rp; i++) {
        depth += punct(s, i, '(') - punct(s, i, ')');
        if (i == rp || (depth == 0 && punct(s, i, ','))) {
            gx_dtype t = (i == pa) ? GX_DTYPE_COUNT : param_type(s, pa, i);
            if (t == GX_DTYPE_COUNT || t == TY_VOID)
                ok = false;
            if (np < (int)(sizeof sig->params / sizeof sig->params[0]))
                sig->params[np] = (t == TY_VOID) ? GX_DTYPE_COUNT : t;
            else
                ok = false;
            np++;
            pa = i + 1;
        }
    }
    sig->nparams = np < 16 ? np : 16;
    sig->callable = ok;
    return GX_OK;
}

/* Index of the '}' matching the '{' at i, or an error naming the line. */
static gx_status skip_braces(const scanner *s, int i, int *end)
{
    int depth = 0;
    for (int k = i; k < s->n; k++) {
        depth += punct(s, k, '{') - punct(s, k, '}');
        if (depth == 0) {
            *end = k;
            return GX_OK;
        }
    }
    return scan_err(s->t[i].line, "this '{' is never closed");
}

static gx_status find_defs(const scanner *s, lam_fn_sig *sigs, size_t *offsets, int max, int *count)
{
    int item = 0, paren = 0;
    bool has_eq = false;
    for (int i = 0; i < s->n; i++) {
        if (punct(s, i, '(')) {
            paren++;
        } else if (punct(s, i, ')')) {
            if (--paren < 0)
                return scan_err(s->t[i].line, "')' without a matching '('");
        } else if (paren > 0) {
            continue;
        } else if (punct(s, i, ';')) {
            item = i + 1;
            has_eq = false;
        } else if (punct(s, i, '=')) {
            has_eq = true;
        } else if (punct(s, i, '}')) {
            return scan_err(s->t[i].line, "'}' without a matching '{'");
        } else if (punct(s, i, '{')) {
            int end = 0;
            GX__CHECK(skip_braces(s, i, &end));
            if (!has_eq && i > item && punct(s, i - 1, ')')) {
                if (*count >= max)
                    return gx__err(GX_ERR_INVALID_ARGUMENT, "user functions: more than %d function definitions", max);
                GX__CHECK(read_header(s, item, i - 1, &sigs[*count]));
                if (offsets)
                    offsets[*count] = (size_t)s->t[item].start;
                (*count)++;
                item = end + 1;
            }
            i = end;
        }
    }
    if (paren > 0)
        return scan_err(s->t[s->n - 1].line, "unbalanced '(' at the end of the source");
    return GX_OK;
}

gx_status lam_scan_functions(const char *source, lam_fn_sig *sigs, size_t *offsets, int max, int *count)
{
    if (!source || !count || max < 0 || (max > 0 && !sigs))
        return gx__err(GX_ERR_INVALID_ARGUMENT, "lam_scan_functions: source, sigs and count must not be NULL");
    *count = 0;
    scanner s = {source, NULL, 0, 0};
    gx_status st = tokenize(&s);
    if (st == GX_OK)
        st = find_defs(&s, sigs, offsets, max, count);
    free(s.t);
    if (st != GX_OK)
        *count = 0;
    return st;
}
