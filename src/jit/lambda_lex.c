/* lambda_lex.c -- tokens of the lambda language, and the caret-style error messages
 * that every stage of the lambda compiler reports through. */
#include "jit/lambda_impl.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ error messages */

/* Appends at most cap-1 bytes in total; never overruns. */
static void app(char *buf, size_t cap, size_t *n, const char *s, size_t len)
{
    while (len-- && *n + 1 < cap)
        buf[(*n)++] = *s++;
    buf[*n] = 0;
}

/* The text line (control characters shown as spaces so the caret stays aligned) and
 * the caret line.  Long texts show a window around the column. */
static void show_caret(char *buf, size_t cap, size_t *n, const char *text, int col)
{
    int len = (int)strlen(text);
    if (col < 0)
        col = 0;
    if (col > len)
        col = len;
    int from = 0, to = len;
    if (len > 160) {
        from = col > 70 ? col - 70 : 0;
        to = col + 70 < len ? col + 70 : len;
    }
    app(buf, cap, n, "  ", 2);
    if (from > 0)
        app(buf, cap, n, "...", 3);
    for (int i = from; i < to; i++) {
        unsigned char c = (unsigned char)text[i];
        char ch = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
        app(buf, cap, n, &ch, 1);
    }
    if (to < len)
        app(buf, cap, n, "...", 3);
    app(buf, cap, n, "\n  ", 3);
    if (from > 0)
        app(buf, cap, n, "   ", 3);
    for (int i = from; i < col; i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80) /* one space per UTF-8 character */
            app(buf, cap, n, " ", 1);
    app(buf, cap, n, "^", 1);
}

gx_status lam__fail(gx_status s, const char *text, int col, const char *hint, const char *fmt, ...)
{
    char buf[4096];
    size_t n = 0;
    const char *kind = s == GX_ERR_SYNTAX ? "syntax error: " : s == GX_ERR_TYPE ? "type error: " : "error: ";
    app(buf, sizeof buf, &n, kind, strlen(kind));
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + n, sizeof buf - n, fmt, ap);
    va_end(ap);
    if (k > 0)
        n = n + (size_t)k < sizeof buf ? n + (size_t)k : sizeof buf - 1;
    app(buf, sizeof buf, &n, "\n", 1);
    show_caret(buf, sizeof buf, &n, text ? text : "", col);
    if (hint) {
        app(buf, sizeof buf, &n, "\nhint: ", 7);
        app(buf, sizeof buf, &n, hint, strlen(hint));
    }
    return gx__err(s, "%s", buf);
}

/* ------------------------------------------------------------ operators */

static const char *const lam__ops[LAM_OP_COUNT] = {
    [LAM_OP_NONE] = "",   [LAM_OP_ADD] = "+",    [LAM_OP_SUB] = "-",    [LAM_OP_MUL] = "*",    [LAM_OP_DIV] = "/",
    [LAM_OP_MOD] = "%",   [LAM_OP_SHL] = "<<",   [LAM_OP_SHR] = ">>",   [LAM_OP_LT] = "<",     [LAM_OP_LE] = "<=",
    [LAM_OP_GT] = ">",    [LAM_OP_GE] = ">=",    [LAM_OP_EQ] = "==",    [LAM_OP_NE] = "!=",    [LAM_OP_AND] = "&",
    [LAM_OP_XOR] = "^",   [LAM_OP_OR] = "|",     [LAM_OP_LAND] = "&&",  [LAM_OP_LOR] = "||",   [LAM_OP_NOT] = "!",
    [LAM_OP_TILDE] = "~", [LAM_OP_QUEST] = "?",  [LAM_OP_COLON] = ":",  [LAM_OP_LPAREN] = "(", [LAM_OP_RPAREN] = ")",
    [LAM_OP_COMMA] = ",", [LAM_OP_ARROW] = "->", [LAM_OP_ASSIGN] = "=", [LAM_OP_LBRACK] = "[", [LAM_OP_RBRACK] = "]",
};

const char *lam__op_text(lam__op op) { return (unsigned)op < LAM_OP_COUNT ? lam__ops[op] : "?"; }

/* Longest match first: two-character operators are listed before their prefixes. */
static lam__op match_op(const char *s, int *len)
{
    static const lam__op two[] = {LAM_OP_SHL, LAM_OP_SHR,  LAM_OP_LE,  LAM_OP_GE,   LAM_OP_EQ,
                                  LAM_OP_NE,  LAM_OP_LAND, LAM_OP_LOR, LAM_OP_ARROW};
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
        if (s[0] == lam__ops[two[i]][0] && s[1] == lam__ops[two[i]][1]) {
            *len = 2;
            return two[i];
        }
    for (int op = 1; op < LAM_OP_COUNT; op++)
        if (lam__ops[op][1] == 0 && s[0] == lam__ops[op][0]) {
            *len = 1;
            return (lam__op)op;
        }
    return LAM_OP_NONE;
}

/* ------------------------------------------------------------ numbers */

static bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alnum(char c) { return is_ident_start(c) || is_digit(c); }
static int hexval(char c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static const char *const lam__int_hint =
    "integer literals are i32, or i64 when they do not fit; suffixes: u (u32/u64), l or L (i64), ul (u64)";

/* Picks the literal's dtype from its value and suffix (C's rules, restricted to gx dtypes). */
static gx_status int_type(const char *text, int start, uint64_t v, bool hex, bool u, bool l, gx_dtype *out)
{
    if (u)
        *out = (!l && v <= UINT32_MAX) ? GX_U32 : GX_U64;
    else if (!l && v <= INT32_MAX)
        *out = GX_I32;
    else if (v <= INT64_MAX)
        *out = GX_I64;
    else if (hex)
        *out = GX_U64; /* as in C, a hex literal may become unsigned */
    else
        return lam__fail(GX_ERR_SYNTAX, text, start,
                         "the largest signed literal is 9223372036854775807; write a u suffix for u64",
                         "integer literal is too large for i64");
    return GX_OK;
}

static gx_status lex_int(const char *text, int *pos, lam__tok *t)
{
    int p = *pos, start = p;
    bool hex = text[p] == '0' && (text[p + 1] == 'x' || text[p + 1] == 'X');
    uint64_t v = 0;
    bool overflow = false;
    int base = hex ? 16 : 10, ndig = 0;
    if (hex)
        p += 2;
    for (;; p++) {
        int d = hex ? hexval(text[p]) : (is_digit(text[p]) ? text[p] - '0' : -1);
        if (d < 0)
            break;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            overflow = true;
        v = v * (uint64_t)base + (uint64_t)d;
        ndig++;
    }
    if (ndig == 0)
        return lam__fail(GX_ERR_SYNTAX, text, start, "write hex literals like 0x1F", "expected hex digits after '0x'");
    if (overflow)
        return lam__fail(GX_ERR_SYNTAX, text, start, lam__int_hint, "integer literal does not fit in 64 bits");
    int sfx = p;
    bool u = false, l = false;
    while (text[p] == 'u' || text[p] == 'U' || text[p] == 'l' || text[p] == 'L') {
        bool isu = text[p] == 'u' || text[p] == 'U';
        if ((isu && u) || (!isu && l))
            break;
        if (isu)
            u = true;
        else
            l = true;
        p++;
    }
    if (is_alnum(text[p]) || text[p] == '.')
        return lam__fail(GX_ERR_SYNTAX, text, sfx, lam__int_hint, "invalid suffix on integer literal");
    t->kind = LAM_T_INT;
    t->ival = v;
    t->len = p - start;
    *pos = p;
    return int_type(text, start, v, hex, u, l, &t->lit);
}

/* Decimal floating literal: digits [. digits] [e[+-]digits] [f|F]. */
static gx_status lex_float(const char *text, int *pos, lam__tok *t)
{
    int p = *pos, start = p;
    while (is_digit(text[p]))
        p++;
    if (text[p] == '.')
        p++;
    while (is_digit(text[p]))
        p++;
    if (text[p] == 'e' || text[p] == 'E') {
        int e = p++;
        if (text[p] == '+' || text[p] == '-')
            p++;
        if (!is_digit(text[p]))
            return lam__fail(GX_ERR_SYNTAX, text, e, "an exponent looks like 1e-3 or 2.5E+4",
                             "expected digits in the exponent");
        while (is_digit(text[p]))
            p++;
    }
    int end = p;
    bool f32 = false;
    if (text[p] == 'f' || text[p] == 'F') {
        f32 = true;
        p++;
    }
    if (is_alnum(text[p]) || text[p] == '.')
        return lam__fail(GX_ERR_SYNTAX, text, p, "floating literals look like 2.5, .5, 1e-3 or 2.5f (f32)",
                         "malformed floating-point literal");
    char buf[128];
    if (end - start >= (int)sizeof buf)
        return lam__fail(GX_ERR_SYNTAX, text, start, "write it with an exponent, e.g. 1.5e300",
                         "floating literal is too long");
    memcpy(buf, text + start, (size_t)(end - start));
    buf[end - start] = 0;
    /* strtod follows LC_NUMERIC: spell the point the way the current locale wants. */
    const char *dp = localeconv()->decimal_point;
    char *dot = strchr(buf, '.');
    if (dot && dp && dp[0] && dp[1] == 0)
        *dot = dp[0];
    double v = strtod(buf, NULL);
    if (v > DBL_MAX || (f32 && v > FLT_MAX))
        return lam__fail(GX_ERR_SYNTAX, text, start,
                         f32 ? "the largest f32 is about 3.4e38; drop the f suffix for f64"
                             : "the largest f64 is about 1.8e308",
                         "floating literal is out of range");
    t->kind = LAM_T_FLT;
    t->fval = f32 ? (double)(float)v : v;
    t->lit = f32 ? GX_F32 : GX_F64;
    t->len = p - start;
    *pos = p;
    return GX_OK;
}

static gx_status lex_number(const char *text, int *pos, lam__tok *t)
{
    int p = *pos;
    if (text[p] == '0' && (text[p + 1] == 'x' || text[p + 1] == 'X'))
        return lex_int(text, pos, t);
    while (is_digit(text[p]))
        p++;
    if (text[p] == '.' || text[p] == 'e' || text[p] == 'E' || text[p] == 'f' || text[p] == 'F')
        return lex_float(text, pos, t);
    return lex_int(text, pos, t);
}

/* ------------------------------------------------------------ tokens */

gx_status lam__lex(const char *text, int *pos, lam__tok *t)
{
    int p = *pos;
    while (text[p] == ' ' || text[p] == '\t' || text[p] == '\n' || text[p] == '\r' || text[p] == '\f' ||
           text[p] == '\v')
        p++;
    memset(t, 0, sizeof *t);
    t->start = p;
    *pos = p;
    char c = text[p];
    if (c == 0) {
        t->kind = LAM_T_EOF;
        return GX_OK;
    }
    if (is_digit(c) || (c == '.' && is_digit(text[p + 1])))
        return lex_number(text, pos, t);
    if (is_ident_start(c)) {
        while (is_alnum(text[p]))
            p++;
        t->kind = LAM_T_IDENT;
        t->len = p - t->start;
        *pos = p;
        return GX_OK;
    }
    int len = 0;
    lam__op op = match_op(text + p, &len);
    if (op == LAM_OP_NONE) {
        unsigned char uc = (unsigned char)c;
        if (uc >= 0x21 && uc < 0x7f)
            return lam__fail(GX_ERR_SYNTAX, text, p,
                             "lambdas use C operators: + - * / % << >> < <= > >= == != & ^ | && || ! ~ ?:",
                             "unexpected character '%c'", c);
        return lam__fail(GX_ERR_SYNTAX, text, p,
                         "only ASCII letters, digits, operators and spaces may appear in a lambda",
                         "unexpected byte 0x%02x", uc);
    }
    t->kind = LAM_T_OP;
    t->op = op;
    t->len = len;
    *pos = p + len;
    return GX_OK;
}
