/* kernel_parse.c -- reads a __global__ entry's parameter list from CUDA source, so
 * that gx_kernel_launch can check arguments by name before the driver sees them.
 * It is a reader for the usual spellings, not a C++ parser: anything it cannot
 * read makes kp_params return -1 and the check is skipped. */
#include "ops/kernel_parse.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* A copy of src with comments and string/char literals blanked (same offsets). */
static char *kp_strip(const char *src)
{
    size_t n = strlen(src);
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    memcpy(s, src, n + 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '/' && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                s[i++] = ' ';
        } else if (s[i] == '/' && s[i + 1] == '*') {
            s[i] = s[i + 1] = ' ';
            for (i += 2; i < n && !(s[i] == '*' && s[i + 1] == '/'); i++)
                if (s[i] != '\n')
                    s[i] = ' ';
            if (i < n)
                s[i] = s[i + 1] = ' ';
            i++;
        } else if (s[i] == '"' || s[i] == '\'') {
            char q = s[i];
            for (i++; i < n && s[i] != q; i++) {
                if (s[i] == '\\' && i + 1 < n)
                    s[i++] = ' ';
                s[i] = ' ';
            }
        }
    }
    return s;
}

static bool kp_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The word made of the `n` chars at p is `w`, not part of a longer identifier. */
static bool kp_word_at(const char *base, const char *p, const char *w)
{
    size_t n = strlen(w);
    return strncmp(p, w, n) == 0 && !kp_ident_char(p[n]) && (p == base || !kp_ident_char(p[-1]));
}

static const struct {
    const char *name;
    gx_dtype t;
} kp_types[] = {
    {"bool", GX_BOOL},
    {"char", GX_I8},
    {"signed char", GX_I8},
    {"int8_t", GX_I8},
    {"unsigned char", GX_U8},
    {"uint8_t", GX_U8},
    {"short", GX_I16},
    {"short int", GX_I16},
    {"int16_t", GX_I16},
    {"unsigned short", GX_U16},
    {"unsigned short int", GX_U16},
    {"uint16_t", GX_U16},
    {"int", GX_I32},
    {"signed", GX_I32},
    {"signed int", GX_I32},
    {"int32_t", GX_I32},
    {"unsigned", GX_U32},
    {"unsigned int", GX_U32},
    {"uint32_t", GX_U32},
    {"long", GX_I64},
    {"long int", GX_I64},
    {"long long", GX_I64},
    {"long long int", GX_I64},
    {"int64_t", GX_I64},
    {"ptrdiff_t", GX_I64},
    {"ssize_t", GX_I64},
    {"unsigned long", GX_U64},
    {"unsigned long int", GX_U64},
    {"unsigned long long", GX_U64},
    {"unsigned long long int", GX_U64},
    {"uint64_t", GX_U64},
    {"size_t", GX_U64},
    {"float", GX_F32},
    {"double", GX_F64},
    {"__half", GX_F16},
    {"half", GX_F16},
    {"__nv_bfloat16", GX_BF16},
    {"gx_f16", GX_F16}, /* gx/device.h's storage types */
    {"gx_bf16", GX_BF16},
    {"cf32", GX_C64},
    {"float2", GX_C64},
    {"cf64", GX_C128},
    {"double2", GX_C128},
};

static gx_dtype kp_dtype(const char *base)
{
    for (size_t i = 0; i < sizeof kp_types / sizeof kp_types[0]; i++)
        if (strcmp(base, kp_types[i].name) == 0)
            return kp_types[i].t;
    return GX_DTYPE_COUNT;
}

static bool kp_qualifier(const char *w)
{
    static const char *const q[] = {"const",    "volatile", "__restrict__",      "__restrict",
                                    "restrict", "struct",   "__grid_constant__", "register"};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
        if (strcmp(w, q[i]) == 0)
            return true;
    return false;
}

/* One declaration "const float *__restrict__ x" -> type, name, pointer, dtype. */
static bool kp_param_read(const char *p, const char *e, kp_param *out)
{
    char words[16][64];
    int nw = 0, stars = 0;
    memset(out, 0, sizeof *out);
    while (p < e) {
        if (kp_ident_char(*p)) {
            const char *b = p;
            while (p < e && (kp_ident_char(*p) || *p == ':')) /* ns::type */
                p++;
            if (nw == 16 || (size_t)(p - b) >= sizeof words[0])
                return false;
            memcpy(words[nw], b, (size_t)(p - b));
            words[nw][p - b] = 0;
            if (!kp_qualifier(words[nw]))
                nw++;
        } else if (*p == '*' || *p == '[') {
            stars++;
            if (*p == '[')
                while (p < e && *p != ']')
                    p++;
            p++;
        } else if (isspace((unsigned char)*p) || *p == ']') {
            p++;
        } else {
            return false; /* references, templates, defaults: not ours to judge */
        }
    }
    if (nw == 0)
        return false;
    /* The last word is the name when something comes before it. */
    int ntype = nw;
    if (nw >= 2 && kp_dtype(words[nw - 1]) == GX_DTYPE_COUNT) {
        snprintf(out->name, sizeof out->name, "%s", words[nw - 1]);
        ntype = nw - 1;
    }
    char base[96] = "";
    for (int i = 0; i < ntype; i++) {
        size_t l = strlen(base);
        snprintf(base + l, sizeof base - l, "%s%s", i ? " " : "", words[i]);
    }
    out->pointer = stars > 0;
    out->dtype = stars > 1 ? GX_DTYPE_COUNT : kp_dtype(base);
    snprintf(out->type, sizeof out->type, "%s%s%.*s", base, stars ? " " : "", stars > 4 ? 4 : stars, "****");
    return true;
}

/* Splits the text between the parentheses at top-level commas. */
static int kp_list(const char *p, const char *e, kp_param *out)
{
    const char *q = p;
    while (q < e && isspace((unsigned char)*q))
        q++;
    if (q == e)
        return 0;
    if (kp_word_at(p, q, "void")) {
        const char *r = q + 4;
        while (r < e && isspace((unsigned char)*r))
            r++;
        if (r == e)
            return 0;
    }
    int n = 0, depth = 0;
    const char *start = p;
    for (const char *c = p; c <= e; c++) {
        if (c < e && (*c == '(' || *c == '<'))
            depth++;
        else if (c < e && (*c == ')' || *c == '>'))
            depth--;
        if (c == e || (*c == ',' && depth == 0)) {
            if (n == KP_MAX_PARAMS || !kp_param_read(start, c, &out[n]))
                return -1;
            n++;
            start = c + 1;
        }
    }
    return n;
}

/* After "__global__": the name before the first '(' (none if ';' or '{' comes first). */
/* The ')' matching the '(' at p, or NULL. */
static const char *kp_close(const char *p)
{
    int depth = 0;
    for (; *p; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && --depth == 0)
            return p;
    }
    return NULL;
}

static int kp_try(const char *g, const char *entry, kp_param *out)
{
    for (;;) {
        const char *paren = g;
        while (*paren && *paren != '(' && *paren != ';' && *paren != '{')
            paren++;
        if (*paren != '(')
            return -2;
        const char *ne = paren;
        while (ne > g && isspace((unsigned char)ne[-1]))
            ne--;
        const char *nb = ne;
        while (nb > g && kp_ident_char(nb[-1]))
            nb--;
        const char *c = kp_close(paren);
        if (!c)
            return -1;
        /* __launch_bounds__(...), __attribute__((...)) and the like come before the name. */
        if (ne - nb > 4 && strncmp(nb, "__", 2) == 0 && strncmp(ne - 2, "__", 2) == 0) {
            g = c + 1;
            continue;
        }
        if ((size_t)(ne - nb) != strlen(entry) || strncmp(nb, entry, (size_t)(ne - nb)) != 0)
            return -2;
        return kp_list(paren + 1, c, out);
    }
}

int kp_params(const char *source, const char *entry, kp_param *out)
{
    if (!source || !entry || !*entry)
        return -1;
    char *s = kp_strip(source);
    if (!s)
        return -1;
    int found = -1;
    for (const char *g = strstr(s, "__global__"); g; g = strstr(g + 10, "__global__")) {
        if (!kp_word_at(s, g, "__global__"))
            continue;
        int n = kp_try(g + 10, entry, out);
        if (n != -2) {
            found = n;
            break;
        }
    }
    free(s);
    return found;
}
