/* cpu_fission.c -- loop fission at barriers for users' kernels on the CPU backend.
 *
 * A kernel whose threads wait for each other runs as fibers (kernel_prelude.h),
 * switched twice per barrier per thread: for a tiled matmul that is most of the
 * time, and each fiber's inner product stays a scalar chain.  Here the kernel's body
 * is cut at its __syncthreads() statements into barrier-free regions; each region
 * becomes one loop over the block's threads (gx_cpu::each_thread), so nothing
 * switches and the compiler sees plain loops.  The shape handled:
 *
 *   - `__syncthreads();` statements at the kernel's top level or inside for, while,
 *     if/else and { } statements (any nesting of those) whose conditions are the
 *     same for every thread of the block (CUDA's rule): they are evaluated by every
 *     thread and compared (gx_cpu::uniform), a disagreement is reported as a
 *     barrier in divergent code;
 *   - variables declared at a region's top level (and in the init of such a for)
 *     get one slot per thread (gx_cpu::slots) and are bound by reference in every
 *     later region, so they live across barriers unchanged in the source text;
 *     __shared__/static/constexpr declarations are emitted once, outside the loops.
 *
 * Anything else keeps the fibers: other barrier forms or warp intrinsics, a barrier
 * reached through a called function or a macro, `return` before the last barrier
 * (threads leaving early), break/continue/goto that would cross a region, do/switch
 * around a barrier, declarations this scanner cannot split (auto, references,
 * arrays with initialisers, names that shadow a per-thread variable).  A kernel
 * whose rewritten form does not compile is rebuilt without fission (cpu_kernel.c). */
#include "backend/cpu/cpu_kernel.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX_MAX_VARS 128

typedef struct fx {
    const char *txt, *code, *all; /* the source, its code-only twin, every part's code */
    gx__sbuf *out;
    char names[FX_MAX_VARS][64]; /* per-thread variables in scope, innermost last */
    bool byval[FX_MAX_VARS];     /* copied in and out of each region (see fx_bind_all) */
    int nv;
    const char *kb, *ke;         /* the kernel's body */
    const char *why; /* set on the first reason to give up */
} fx;

static bool fx_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

static bool fx_no(fx *f, const char *why)
{
    if (!f->why)
        f->why = why;
    return false;
}

static const char *fx_ws(const char *p, const char *e)
{
    while (p < e && isspace((unsigned char)*p))
        p++;
    return p;
}

/* Whether [p, e) starts with keyword k (a whole word). */
static bool fx_kw(const char *p, const char *e, const char *k)
{
    size_t n = strlen(k);
    return (size_t)(e - p) >= n && memcmp(p, k, n) == 0 && (p + n == e || !fx_ident(p[n]));
}

/* Whether word w occurs in [b, e) as a whole identifier. */
static bool fx_has_word(const char *b, const char *e, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = b; p + n <= e; p++)
        if (memcmp(p, w, n) == 0 && (p == b || !fx_ident(p[-1])) && (p + n == e || !fx_ident(p[n])))
            return true;
    return false;
}

/* The position after the bracket that closes the one at p (*p is ( [ or {), or NULL. */
static const char *fx_close(const char *p, const char *e)
{
    int depth = 0;
    for (; p < e; p++) {
        depth += *p == '(' || *p == '[' || *p == '{';
        depth -= *p == ')' || *p == ']' || *p == '}';
        if (depth == 0)
            return p + 1;
    }
    return NULL;
}

/* The first c at bracket depth 0 in [p, e), or e. */
static const char *fx_find0(const char *p, const char *e, char c)
{
    for (int depth = 0; p < e; p++) {
        if (depth == 0 && *p == c)
            return p;
        depth += *p == '(' || *p == '[' || *p == '{';
        depth -= *p == ')' || *p == ']' || *p == '}';
    }
    return e;
}

/* The end of the statement that starts at p (after whitespace), or NULL. */
static const char *fx_stmt_end(const char *p, const char *e)
{
    p = fx_ws(p, e);
    if (p >= e)
        return NULL;
    if (*p == '#') /* a preprocessor line (#pragma unroll) */
        return p + strcspn(p, "\n");
    if (*p == '{')
        return fx_close(p, e);
    if (fx_kw(p, e, "if") || fx_kw(p, e, "for") || fx_kw(p, e, "while") || fx_kw(p, e, "switch")) {
        const char *q = fx_ws(p + strcspn(p, "("), e);
        if (q >= e || *q != '(' || !(q = fx_close(q, e)))
            return NULL;
        const char *s = fx_stmt_end(q, e);
        if (s && fx_kw(p, e, "if")) {
            const char *el = fx_ws(s, e);
            if (fx_kw(el, e, "else"))
                return fx_stmt_end(el + 4, e);
        }
        return s;
    }
    if (fx_kw(p, e, "do")) {
        const char *s = fx_stmt_end(p + 2, e);
        return s ? fx_stmt_end(s, e) : NULL; /* the `while (...);` */
    }
    const char *semi = fx_find0(p, e, ';');
    return semi < e ? semi + 1 : NULL;
}

/* Copies [b, e) of the source (by code offsets) to the output, after a #line that
 * names where it came from (the last #line of the source before it, plus lines),
 * so compiler messages and checked mode's reports point into the user's file. */
static void fx_copy(fx *f, const char *b, const char *e)
{
    const char *t = f->txt + (b - f->code), *p = t;
    int lines = 0;
    while (p > f->txt && !(p[-1] == '\n' && strncmp(p, "#line ", 6) == 0 && p != t))
        lines += *--p == '\n';
    if (strncmp(p, "#line ", 6) == 0) {
        int line = atoi(p + 6);
        const char *q = strchr(p, '"'), *qe = q ? strchr(q + 1, '"') : NULL;
        if (q && qe && qe < t)
            gx__sb_printf(f->out, "\n#line %d %.*s\n", line + lines - 1, (int)(qe - q + 1), q);
    }
    gx__sb_printf(f->out, "%.*s\n", (int)(e - b), t);
}

/* Every per-thread variable in scope, for thread gxf_t.  A scalar whose address
 * the kernel never takes is copied into a local for the region (copy: and back at
 * its end, fx_write_back): a reference into the slots would have to be reloaded
 * after every store through a pointer, which kept an inner product's sum in memory
 * instead of a register.  The others, and every variable in conditions, are
 * references. */
static void fx_bind_all(fx *f, bool copy)
{
    for (int i = 0; i < f->nv; i++)
        gx__sb_printf(f->out, "auto %s%s = gxf_s%d[gxf_t]; ", copy && f->byval[i] ? "" : "&", f->names[i], i);
}

static void fx_write_back(fx *f)
{
    for (int i = 0; i < f->nv; i++)
        if (f->byval[i])
            gx__sb_printf(f->out, "gxf_s%d[gxf_t] = %s; ", i, f->names[i]);
}

/* Whether the kernel may take the address of `name` (an & before it). */
static bool fx_address_taken(fx *f, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = f->kb; p + n <= f->ke; p++)
        if (memcmp(p, name, n) == 0 && (p == f->kb || !fx_ident(p[-1])) && !fx_ident(p[n])) {
            const char *q = p;
            while (q > f->kb && isspace((unsigned char)q[-1]))
                q--;
            if (q > f->kb && q[-1] == '&')
                return true;
        }
    return false;
}

/* ------------------------------------------------------------ declarations */

static const char *const fx_not_types[] = {"return", "if",     "else",   "for",     "while", "do",
                                           "switch", "case",   "default", "break",  "continue",
                                           "goto",   "delete", "throw",  "sizeof",  "new"};

/* Whether statement [s, e) is a declaration: two or more words (type, name) with
 * only * & :: and template brackets among them, then = , ; or [.  *decl_at gets
 * the start of the first declarator (its * and & included). */
static bool fx_is_decl(const char *s, const char *e, const char **decl_at)
{
    const char *p = fx_ws(s, e);
    for (size_t i = 0; i < sizeof fx_not_types / sizeof fx_not_types[0]; i++)
        if (fx_kw(p, e, fx_not_types[i]))
            return false;
    int words = 0;
    const char *last_word = NULL;
    while (p < e) {
        if (fx_ident(*p) && !isdigit((unsigned char)*p)) {
            last_word = p;
            while (p < e && fx_ident(*p))
                p++;
            words++;
        } else if (*p == '*' || *p == '&') {
            p++;
        } else if (*p == ':' && p + 1 < e && p[1] == ':') {
            p += 2;
        } else if (*p == '<' && words) {
            const char *q = fx_find0(p + 1, e, '>');
            if (q >= e)
                return false;
            p = q + 1;
        } else if (isspace((unsigned char)*p)) {
            p++;
        } else {
            break;
        }
    }
    if (p >= e || words < 2 || !(*p == '=' || *p == ',' || *p == ';' || *p == '['))
        return false;
    if (*p == '=' && p + 1 < e && p[1] == '=')
        return false;
    /* the first declarator starts after the type: back over the name, then * and & */
    const char *d = last_word;
    while (d > s && (isspace((unsigned char)d[-1]) || d[-1] == '*' || d[-1] == '&'))
        d--;
    while (d < last_word && isspace((unsigned char)*d))
        d++;
    *decl_at = d;
    return true;
}

/* One declarator [d, end) of a per-thread declaration with type text [s, t): a slot
 * array before the region (into pre) and, in the region, a reference and the
 * initialiser as an assignment. */
static bool fx_declarator(fx *f, gx__sbuf *pre, const char *s, const char *t, const char *d, const char *end)
{
    const char *n = d;
    while (n < end && (*n == '*' || *n == '&' || isspace((unsigned char)*n)))
        n++;
    const char *ne = n;
    while (ne < end && fx_ident(*ne))
        ne++;
    if (ne == n || (size_t)(ne - n) >= sizeof f->names[0])
        return fx_no(f, "a declaration it cannot read");
    if (memchr(d, '&', (size_t)(n - d)))
        return fx_no(f, "a reference declared between barriers");
    const char *eq = fx_find0(ne, end, '='), *dims = fx_ws(ne, end);
    if (dims < eq && *dims == '[' && eq < end)
        return fx_no(f, "an array with an initialiser between barriers");
    if (dims < eq && *dims != '[')
        return fx_no(f, "a declaration it cannot read");
    if (f->nv >= FX_MAX_VARS)
        return fx_no(f, "too many variables across barriers");
    for (int i = 0; i < f->nv; i++)
        if ((size_t)(ne - n) == strlen(f->names[i]) && memcmp(n, f->names[i], (size_t)(ne - n)) == 0)
            return fx_no(f, "a variable that hides another one across barriers");
    int id = f->nv++;
    snprintf(f->names[id], sizeof f->names[id], "%.*s", (int)(ne - n), n);
    f->byval[id] = !(dims < eq && *dims == '[') && !fx_address_taken(f, f->names[id]);
    gx__sb_printf(pre, "typedef %.*s %.*sgxf_T%d%.*s; ", (int)(t - s), f->txt + (s - f->code), (int)(n - d),
                  f->txt + (d - f->code), id, (int)(eq - ne), f->txt + (ne - f->code));
    gx__sb_printf(pre, "std::remove_const_t<gxf_T%d> *gxf_s%d = gx_cpu::slots<std::remove_const_t<gxf_T%d>>();\n", id,
                  id, id);
    gx__sb_printf(f->out, "auto %s%s = gxf_s%d[gxf_t]; ", f->byval[id] ? "" : "&", f->names[id], id);
    if (eq < end) {
        gx__sb_printf(f->out, "%s = (", f->names[id]);
        fx_copy(f, eq + 1, end);
        gx__sb_puts(f->out, "); ");
    }
    return true;
}

/* Declaration statement [s, e) (e after the ;) in a region. */
static bool fx_decl(fx *f, gx__sbuf *pre, const char *s, const char *e, const char *d)
{
    const char *type_end = d;
    if (fx_has_word(s, type_end, "__shared__") || fx_has_word(s, type_end, "static") ||
        fx_has_word(s, type_end, "constexpr") || fx_has_word(s, type_end, "extern")) {
        gx__sb_printf(pre, "%.*s\n", (int)(e - s), f->txt + (s - f->code)); /* block-wide: once */
        return true;
    }
    if (fx_has_word(s, type_end, "auto") || fx_has_word(s, type_end, "typedef") || fx_has_word(s, type_end, "using"))
        return fx_no(f, "auto, typedef or using between barriers");
    const char *stop = e - 1; /* the ; */
    while (d < stop) {
        const char *c = fx_find0(d, stop, ',');
        if (!fx_declarator(f, pre, s, type_end, d, c))
            return false;
        d = c < stop ? c + 1 : stop;
    }
    return true;
}

/* ------------------------------------------------------------ regions */

/* Whether a region's statement [s, e) may stay inside a thread loop. */
static bool fx_plain_ok(fx *f, const char *s, const char *e, bool final)
{
    if (fx_has_word(s, e, "goto"))
        return fx_no(f, "goto");
    if (!final && fx_has_word(s, e, "return"))
        return fx_no(f, "return before a barrier (threads leaving early)");
    bool loop = fx_kw(s, e, "for") || fx_kw(s, e, "while") || fx_kw(s, e, "do") || fx_kw(s, e, "switch");
    if (!loop && (fx_has_word(s, e, "break") || fx_has_word(s, e, "continue")))
        return fx_no(f, "break or continue across a barrier");
    return true;
}

/* Statements [b, e) with no barrier as one loop over the block's threads.  Slots of
 * the variables it declares are made before the loop (pre). */
static bool fx_region(fx *f, const char *b, const char *e, bool final)
{
    if (fx_ws(b, e) >= e)
        return true;
    gx__sbuf *outer = f->out, body = {0}, pre = {0};
    f->out = &body;
    fx_bind_all(f, true);
    bool ok = true;
    const char *pending_pragma = NULL;
    for (const char *p = fx_ws(b, e); ok && p < e; p = fx_ws(p, e)) {
        const char *s = fx_stmt_end(p, e), *d;
        if (!s)
            return f->out = outer, gx__sb_free(&body), gx__sb_free(&pre), fx_no(f, "a statement it cannot read");
        if (*p == '#') {
            if (!fx_kw(fx_ws(p + 1, s), s, "pragma"))
                ok = fx_no(f, "a preprocessor line between barriers");
            pending_pragma = p;
        } else if (fx_is_decl(p, s, &d)) {
            ok = fx_decl(f, &pre, p, s, d);
        } else {
            ok = fx_plain_ok(f, p, s, final);
            if (pending_pragma) {
                fx_copy(f, pending_pragma, fx_stmt_end(pending_pragma, e));
                gx__sb_puts(f->out, "\n");
            }
            fx_copy(f, p, s);
            gx__sb_puts(f->out, "\n");
        }
        if (*p != '#')
            pending_pragma = NULL;
        p = s;
    }
    fx_write_back(f);
    f->out = outer;
    gx__sb_printf(f->out, "%sgx_cpu::each_thread([&](unsigned gxf_t) { %s });\n", pre.p ? pre.p : "",
                  body.p ? body.p : "");
    gx__sb_free(&body);
    gx__sb_free(&pre);
    return ok;
}

/* `[&](unsigned gxf_t) -> bool { ...; return (cond); }` for gx_cpu::uniform. */
static void fx_cond(fx *f, const char *b, const char *e)
{
    gx__sb_puts(f->out, "gx_cpu::uniform([&](unsigned gxf_t) -> bool { ");
    fx_bind_all(f, false);
    gx__sb_puts(f->out, "return (");
    fx_copy(f, b, e);
    gx__sb_puts(f->out, "); })");
}

static bool fx_list(fx *f, const char *b, const char *e, bool final);

/* A nested statement list in its own scope: its slots are given back at its end. */
static bool fx_scope(fx *f, const char *b, const char *e)
{
    int nv = f->nv;
    gx__sb_puts(f->out, "{ size_t gxf_m = gx_cpu::slots_mark();\n");
    bool ok = fx_list(f, b, e, false);
    gx__sb_puts(f->out, "gx_cpu::slots_release(gxf_m); }\n");
    f->nv = nv;
    return ok;
}

/* The part of statement [p, s) that is a single statement or the inside of { }. */
static void fx_inner(const char *p, const char *s, const char **ib, const char **ie)
{
    p = fx_ws(p, s);
    while (s > p && isspace((unsigned char)s[-1]))
        s--;
    if (p < s && *p == '{' && fx_close(p, s) == s)
        *ib = p + 1, *ie = s - 1;
    else
        *ib = p, *ie = s;
}

/* if/for/while/{ } statement [p, s) that holds a barrier: its control flow stays
 * outside the thread loops. */
static bool fx_control(fx *f, const char *p, const char *s)
{
    const char *ib, *ie;
    if (*p == '{') {
        fx_inner(p, s, &ib, &ie);
        return fx_scope(f, ib, ie);
    }
    bool is_if = fx_kw(p, s, "if"), is_for = fx_kw(p, s, "for"), is_while = fx_kw(p, s, "while");
    if (!is_if && !is_for && !is_while)
        return fx_no(f, "a barrier inside a do, switch or expression");
    const char *lp = fx_ws(p + (is_if ? 2 : is_for ? 3 : 5), s), *rp = fx_close(lp, s);
    if (!rp || cpu_kernel_waits(f->all, lp, rp))
        return fx_no(f, "a barrier in a condition");
    const char *cb = lp + 1, *ce = rp - 1;
    if (is_if) {
        const char *then_end = fx_stmt_end(rp, s), *el = then_end ? fx_ws(then_end, s) : s;
        if (!then_end)
            return fx_no(f, "a statement it cannot read");
        gx__sb_puts(f->out, "if (");
        fx_cond(f, cb, ce);
        gx__sb_puts(f->out, ") ");
        fx_inner(rp, then_end, &ib, &ie);
        bool ok = fx_scope(f, ib, ie);
        if (ok && fx_kw(el, s, "else")) {
            gx__sb_puts(f->out, "else ");
            fx_inner(el + 4, s, &ib, &ie);
            ok = fx_scope(f, ib, ie);
        }
        return ok;
    }
    const char *init_e = cb, *cond_b = cb, *cond_e = ce, *inc_b = ce;
    if (is_for) {
        init_e = fx_find0(cb, ce, ';');
        cond_b = init_e + 1;
        cond_e = fx_find0(cond_b, ce, ';');
        if (init_e >= ce || cond_e >= ce)
            return fx_no(f, "a for statement it cannot read");
        inc_b = cond_e + 1;
    }
    if (fx_ws(cond_b, cond_e) >= cond_e)
        return fx_no(f, "a loop around a barrier with no condition");
    int nv = f->nv;
    gx__sb_puts(f->out, "{ size_t gxf_m = gx_cpu::slots_mark();\n");
    bool ok = true;
    if (is_for && fx_ws(cb, init_e) < init_e) { /* the init, as a region of one statement */
        ok = fx_region(f, cb, init_e + 1, false);
    }
    gx__sb_puts(f->out, "for (;;) { if (!");
    fx_cond(f, cond_b, cond_e);
    gx__sb_puts(f->out, ") break;\n");
    const char *body_end = s;
    fx_inner(rp, body_end, &ib, &ie);
    ok = ok && fx_scope(f, ib, ie);
    if (ok && fx_ws(inc_b, ce) < ce) {
        gx__sb_puts(f->out, "gx_cpu::each_thread([&](unsigned gxf_t) { ");
        fx_bind_all(f, false);
        fx_copy(f, inc_b, ce);
        gx__sb_puts(f->out, "; });\n");
    }
    gx__sb_puts(f->out, "}\ngx_cpu::slots_release(gxf_m); }\n");
    f->nv = nv;
    return ok;
}

/* Whether statement [p, s) is exactly `__syncthreads();`. */
static bool fx_is_barrier(const char *p, const char *s)
{
    if (!fx_kw(p, s, "__syncthreads"))
        return false;
    p = fx_ws(p + 13, s);
    if (p >= s || *p != '(')
        return false;
    p = fx_ws(p + 1, s);
    if (p >= s || *p != ')')
        return false;
    p = fx_ws(p + 1, s);
    return p < s && *p == ';' && fx_ws(p + 1, s) == s;
}

/* A statement list: regions between the statements that hold barriers.  `final`:
 * the list is the kernel's top level, where a region after the last barrier may
 * return. */
static bool fx_list(fx *f, const char *b, const char *e, bool final)
{
    const char *region = fx_ws(b, e), *last = NULL;
    for (const char *p = region; p < e; p = fx_ws(p, e)) { /* the last statement that holds a barrier */
        const char *s = fx_stmt_end(p, e);
        if (!s)
            return fx_no(f, "a statement it cannot read");
        if (*p != '#' && cpu_kernel_waits(f->all, p, s))
            last = s;
        p = s;
    }
    for (const char *p = region; p < e; p = fx_ws(p, e)) {
        const char *s = fx_stmt_end(p, e);
        if (*p == '#' || !cpu_kernel_waits(f->all, p, s)) {
            p = s;
            continue;
        }
        if (!fx_region(f, region, p, false))
            return false;
        if (!fx_is_barrier(p, s) && !fx_control(f, p, s))
            return false;
        region = p = s;
    }
    return fx_region(f, region, e, final && (!last || region >= last));
}

bool cpu_fission(const char *all, const char *txt, const char *code, const char *name, gx__sbuf *out, char *why,
                 size_t cap)
{
    const char *b, *e, *def;
    fx f = {.txt = txt, .code = code, .all = all};
    if (!cpu_kernel_def(code, name, &def, &b, &e)) {
        snprintf(why, cap, "no definition found");
        return false;
    }
    f.kb = b, f.ke = e;
    const char *lp = def + strlen(name);
    lp = fx_ws(lp, e);
    const char *rp = fx_close(lp, b + 1);
    gx__sbuf body = {0};
    f.out = &body;
    bool ok = rp && fx_list(&f, b + 1, e, true);
    if (ok) {
        gx__sb_printf(out, "static void gx__fis_%s", name);
        gx__sb_printf(out, "%.*s\n{\n", (int)(rp - lp), txt + (lp - code));
        /* messages name the kernel, not the lambdas its regions became */
        gx__sb_printf(out, "static const char gxf_func[] = \"%s\";\n#define __func__ gxf_func\n", name);
        gx__sb_puts(out, body.p ? body.p : "");
        gx__sb_puts(out, "}\n#undef __func__\n");
    } else {
        snprintf(why, cap, "%s", f.why ? f.why : "a shape it cannot read");
    }
    gx__sb_free(&body);
    return ok;
}
