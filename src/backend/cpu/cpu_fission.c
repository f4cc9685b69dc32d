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
 * Within the thread loops, threadIdx is the loop's own value (gxf_tid) and the block's
 * indices are hoisted, so GCC vectorises across threadIdx.x.  Two more rewrites:
 *
 *   - a per-thread variable whose initialiser is fixed for the thread's whole run
 *     (threadIdx, blockIdx, unassigned scalar parameters, macros of those; fx_pure)
 *     and that is never assigned again is recomputed in each region, not kept in a
 *     slot (`tb[k][tx]` stays a contiguous access, not a gather);
 *   - a `for` with a block-uniform trip, no barrier and no jump out of its body is
 *     interchanged with the thread loop (fx_interchange_ok), so a per-thread inner
 *     product becomes a vector over threads.  GX_CPU_KERNEL_LOG=1 shows the count.
 *
 * A barrier-free kernel is written the same way (one region; cpu_kernel.c), its
 * declarations then plain locals.
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
    bool remat[FX_MAX_VARS];     /* recomputed from its initialiser in each region (fx_pure) */
    bool uni[FX_MAX_VARS];       /* and that initialiser is the same for every thread */
    const char *init_b[FX_MAX_VARS], *init_e[FX_MAX_VARS]; /* that initialiser (code) */
    int nv;
    char params[32][64];         /* the kernel's parameters that are not pointers */
    int np;
    int interchanged;            /* loops run as `for (k) for (each thread)` (fx_interchange) */
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
    for (int i = 0; i < f->nv; i++) {
        if (f->remat[i]) {
            gx__sb_printf(f->out, "gxf_T%d %s = (", i, f->names[i]);
            fx_copy(f, f->init_b[i], f->init_e[i]);
            gx__sb_puts(f->out, "); ");
        } else {
            gx__sb_printf(f->out, "auto %s%s = gxf_s%d[gxf_t]; ", copy && f->byval[i] ? "" : "&", f->names[i], i);
        }
    }
}

/* Copies back the scalars that statements [b, e) mention (one not named there is
 * unchanged: its address is never taken). */
static void fx_write_back(fx *f, const char *b, const char *e)
{
    for (int i = 0; i < f->nv; i++)
        if (f->byval[i] && !f->remat[i] && b && fx_has_word(b, e, f->names[i]))
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
            if (q > f->kb && q[-1] == '&' && !(q - 1 > f->kb && q[-2] == '&')) /* not && */
                return true;
        }
    return false;
}

/* ------------------------------------------------------------ what stays the same */

/* The position after the whitespace before p (backwards), bounded by b. */
static const char *fx_back(const char *b, const char *p)
{
    while (p > b && isspace((unsigned char)p[-1]))
        p--;
    return p;
}

/* Whether `name` may be changed in [b, e): an assignment, ++/--, or its address
 * taken, at an occurrence other than `skip` (its own declaration). */
static bool fx_assigned(const char *b, const char *e, const char *name, const char *skip)
{
    size_t n = strlen(name);
    for (const char *p = b; p + n <= e; p++) {
        if (memcmp(p, name, n) != 0 || (p > b && fx_ident(p[-1])) || (p + n < e && fx_ident(p[n])) || p == skip)
            continue;
        const char *a = fx_ws(p + n, e), *z = fx_back(b, p);
        if (z > b && z[-1] == '.') /* a member of something else */
            continue;
        if (z - b >= 2 && ((z[-1] == '+' && z[-2] == '+') || (z[-1] == '-' && z[-2] == '-')))
            return true;
        if (z > b && z[-1] == '&' && !(z - b >= 2 && z[-2] == '&'))
            return true;
        if (a < e && *a == '=' && !(a + 1 < e && a[1] == '='))
            return true;
        if (a < e && (*a == '.' || *a == '[')) /* a member or element may be assigned */
            return true;
        if (a + 1 < e && strchr("+-*/%&|^", *a) && (a[1] == '=' || (a[1] == *a && (*a == '+' || *a == '-'))))
            return true;
        if (a + 2 < e && (*a == '<' || *a == '>') && a[1] == *a && a[2] == '=')
            return true;
    }
    return false;
}

static bool fx_pure(fx *f, const char *b, const char *e, bool thread, const char *var, int depth);

/* Whether identifier [p, q) is an object-like macro of the source whose text is
 * itself pure (fx_pure). */
static bool fx_macro_pure(fx *f, const char *p, const char *q, bool thread, int depth)
{
    size_t n = (size_t)(q - p);
    for (const char *d = strstr(f->all, "#define"); d; d = strstr(d + 7, "#define")) {
        const char *m = d + 7, *le = m + strcspn(m, "\n");
        while (m < le && (*m == ' ' || *m == '\t'))
            m++;
        if ((size_t)(le - m) < n || memcmp(m, p, n) != 0 || (m + n < le && fx_ident(m[n])))
            continue;
        if (m[n] == '(' || (le > m && le[-1] == '\\'))
            return false; /* function-like, or continued */
        return fx_pure(f, m + n, le, thread, NULL, depth + 1);
    }
    return false;
}

static const char *const fx_type_words[] = {"int",     "unsigned", "long",     "short",   "char",     "float",
                                            "double",  "signed",   "bool",     "size_t",  "int64_t",  "uint64_t",
                                            "int32_t", "uint32_t", "sizeof",   "const",   "ptrdiff_t", "true", "false"};

/* Whether expression [b, e) gives the same value wherever in the block's run it is
 * evaluated: literals, blockIdx/blockDim/gridDim, the kernel's parameters that are
 * not pointers and never assigned, macros of such, the loop variable `var`; with
 * `thread`, also threadIdx and the per-thread variables recomputed the same way
 * (then the value is per thread, fixed for its whole run).  No calls, no memory
 * (no [ or ->), no assignment outside `var`'s increment. */
static bool fx_pure(fx *f, const char *b, const char *e, bool thread, const char *var, int depth)
{
    if (depth > 4)
        return false;
    for (const char *p = b; p < e;) {
        char c = *p;
        if (c == '[' || c == '"' || c == '\'' || c == '{' || c == ';' || c == '#' || (c == '-' && p + 1 < e && p[1] == '>'))
            return false;
        if (isdigit((unsigned char)c) || (c == '.' && p + 1 < e && isdigit((unsigned char)p[1]))) {
            while (p < e && (fx_ident(*p) || *p == '.'))
                p++; /* 0.5f, 1u, 0x1F */
            continue;
        }
        if (!fx_ident(c)) {
            bool op_assign = c == '=' && !(p + 1 < e && p[1] == '=') && !(p > b && strchr("=!<>", p[-1]));
            if ((op_assign || ((c == '+' || c == '-') && p + 1 < e && p[1] == c)) && !var)
                return false;
            p++;
            continue;
        }
        const char *q = p;
        while (q < e && fx_ident(*q))
            q++;
        size_t n = (size_t)(q - p);
        const char *z = fx_back(b, p), *a = fx_ws(q, e);
        bool ok = z > b && z[-1] == '.'; /* .x .y .z */
        if (!ok && a < e && *a == '(' && !fx_kw(p, q, "sizeof"))
            return false; /* a call */
        if (!ok && var && strlen(var) == n && memcmp(p, var, n) == 0)
            ok = true;
        if (!ok && (fx_kw(p, q, "blockIdx") || fx_kw(p, q, "blockDim") || fx_kw(p, q, "gridDim") ||
                    (thread && fx_kw(p, q, "threadIdx"))))
            ok = true;
        for (size_t i = 0; !ok && i < sizeof fx_type_words / sizeof fx_type_words[0]; i++)
            ok = fx_kw(p, q, fx_type_words[i]);
        for (int i = 0; !ok && i < f->np; i++)
            ok = strlen(f->params[i]) == n && memcmp(p, f->params[i], n) == 0;
        for (int i = 0; !ok && i < f->nv; i++)
            ok = (thread ? f->remat[i] : f->uni[i]) && strlen(f->names[i]) == n && memcmp(p, f->names[i], n) == 0;
        if (!ok && !fx_macro_pure(f, p, q, thread, depth))
            return false;
        p = q;
    }
    return true;
}

/* The kernel's parameters that are not pointers, arrays or references and that
 * the body never assigns: values fixed for the whole launch. */
static void fx_params(fx *f, const char *lp, const char *rp)
{
    for (const char *p = lp + 1; p < rp - 1;) {
        const char *c = fx_find0(p, rp - 1, ',');
        const char *ne = fx_back(p, c), *nb = ne;
        while (nb > p && fx_ident(nb[-1]))
            nb--;
        bool plain = !memchr(p, '*', (size_t)(c - p)) && !memchr(p, '[', (size_t)(c - p)) &&
                     !memchr(p, '&', (size_t)(c - p)) && ne > nb && (size_t)(ne - nb) < sizeof f->params[0];
        if (plain && f->np < 32) {
            snprintf(f->params[f->np], sizeof f->params[0], "%.*s", (int)(ne - nb), nb);
            if (!fx_assigned(f->kb, f->ke, f->params[f->np], NULL))
                f->np++;
        }
        p = c + 1;
    }
}

/* Whether the kernel may call code that reads threadIdx from the worker's state
 * (its own device functions, gx/device.h's helpers, checked mode's records): then
 * the thread loops keep that state current (each_thread's Store). */
static bool fx_needs_tid_state(fx *f)
{
    /* outside the kernel: all; inside: from the second (the first names it directly);
     * an #include gx does not supply itself (cooperative_groups.h...) may read it */
    static const char *const words[] = {"threadIdx", "#include", "gx_", "GX_", "assert"};
    const char *end = f->all + strlen(f->all);
    for (const char *p = f->all; *p; p++) {
        if (p > f->all && fx_ident(p[-1]))
            continue;
        if (*p == '_' && fx_kw(p, end, "__global__")) { /* another kernel: never called */
            const char *o = p + strcspn(p, "{;"), *c = *o == '{' ? fx_close(o, end) : NULL;
            if (c && !(f->kb >= p && f->kb < c)) {
                p = c - 1;
                continue;
            }
        }
        bool inside = p >= f->kb && p < f->ke;
        for (size_t i = inside ? 2 : 0; i < sizeof words / sizeof words[0]; i++)
            if (strncmp(p, words[i], strlen(words[i])) == 0)
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
    /* a value fixed per thread (tx = threadIdx.x, row = blockIdx.y * TILE + ty) is
     * recomputed in each region rather than kept in a slot: the compiler then sees
     * it as a function of the loop index (contiguous accesses, no gathers) */
    f->remat[id] = f->uni[id] = false;
    if (eq < end && f->byval[id] && !fx_has_word(s, t, "volatile") && fx_pure(f, eq + 1, end, true, NULL, 0) &&
        !fx_assigned(f->kb, f->ke, f->names[id], n)) {
        f->remat[id] = true;
        f->init_b[id] = eq + 1, f->init_e[id] = end;
        f->uni[id] = fx_pure(f, eq + 1, end, false, NULL, 0);
    }
    gx__sb_printf(pre, "typedef %.*s %.*sgxf_T%d%.*s; ", (int)(t - s), f->txt + (s - f->code), (int)(n - d),
                  f->txt + (d - f->code), id, (int)(eq - ne), f->txt + (ne - f->code));
    if (!f->remat[id])
        gx__sb_printf(pre, "std::remove_const_t<gxf_T%d> *gxf_s%d = gx_cpu::slots<std::remove_const_t<gxf_T%d>>();\n",
                      id, id, id);
    else
        gx__sb_puts(pre, "\n");
    if (f->remat[id]) {
        gx__sb_printf(f->out, "gxf_T%d %s = (", id, f->names[id]);
        fx_copy(f, eq + 1, end);
        gx__sb_puts(f->out, "); ");
        return true;
    }
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

/* Whether region statement [p, s) is a `for` whose trip is the same for every
 * thread (its init declares the loop variable from pure values, its condition and
 * increment are pure, fx_pure) and whose body leaves the variable alone and has no
 * break/continue/return/goto: then it runs as `for (k) for (each thread) body`.
 * Legal because between barriers CUDA gives no order among a block's threads, and
 * each thread still sees its own iterations in order.  Why: a thread's inner
 * product (`acc += ta[ty][k] * tb[k][tx]`) is a scalar chain, while across threads
 * it is a vector over tx.  *hdr gets the end of the `for (...)`. */
static bool fx_interchange_ok(fx *f, const char *p, const char *s, const char **hdr)
{
    if (!fx_kw(p, s, "for"))
        return false;
    const char *lp = fx_ws(p + 3, s), *rp = lp < s && *lp == '(' ? fx_close(lp, s) : NULL, *d;
    if (!rp)
        return false;
    const char *cb = lp + 1, *ce = rp - 1, *ie = fx_find0(cb, ce, ';');
    const char *ke = ie < ce ? fx_find0(ie + 1, ce, ';') : ce;
    if (ie >= ce || ke >= ce || !fx_is_decl(cb, ie + 1, &d) || fx_find0(d, ie, ',') < ie)
        return false;
    const char *vb = d;
    while (vb < ie && (*vb == '*' || *vb == '&' || isspace((unsigned char)*vb)))
        vb++;
    const char *ve = vb, *eq;
    while (ve < ie && fx_ident(*ve))
        ve++;
    char var[64];
    if (ve == vb || (size_t)(ve - vb) >= sizeof var || (eq = fx_ws(ve, ie)) >= ie || *eq != '=')
        return false;
    snprintf(var, sizeof var, "%.*s", (int)(ve - vb), vb);
    for (int i = 0; i < f->nv; i++)
        if (strcmp(f->names[i], var) == 0)
            return false; /* the lambda's bindings would hide it */
    static const char *const bad[] = {"break", "continue", "return", "goto", "__shared__", "static", "asm"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (fx_has_word(rp, s, bad[i]) || fx_has_word(cb, d, bad[i]))
            return false;
    if (fx_has_word(cb, d, "volatile") || !fx_pure(f, eq + 1, ie, false, NULL, 0) ||
        !fx_pure(f, ie + 1, ke, false, var, 0) || !fx_pure(f, ke + 1, ce, false, var, 0) ||
        fx_assigned(rp, s, var, NULL))
        return false;
    *hdr = rp;
    return true;
}

/* Emits the thread loop of the statements gathered so far (body, after the slots
 * they declare, pre) into outer, and starts the next one's bindings. */
static void fx_flush(fx *f, gx__sbuf *outer, gx__sbuf *body, gx__sbuf *pre, bool *any, const char **seg_b,
                     const char *seg_e)
{
    f->out = body;
    fx_write_back(f, *seg_b, seg_e);
    *seg_b = NULL;
    if (*any)
        gx__sb_printf(outer, "%sgx_cpu::each_thread<GXF_ST>([&](size_t gxf_t, uint3 gxf_tid) { %s });\n",
                      pre->p ? pre->p : "", body->p ? body->p : "");
    else
        gx__sb_puts(outer, pre->p ? pre->p : "");
    outer->oom |= body->oom || pre->oom;
    gx__sb_free(body);
    gx__sb_free(pre);
    *any = false;
    fx_bind_all(f, true);
}

/* Statements [b, e) with no barrier as one loop over the block's threads, or
 * several where a loop is interchanged (fx_interchange_ok).  Slots of the variables
 * it declares are made before the loop (pre). */
static bool fx_region(fx *f, const char *b, const char *e, bool final)
{
    if (fx_ws(b, e) >= e)
        return true;
    gx__sbuf *outer = f->out, body = {0}, pre = {0};
    f->out = &body;
    fx_bind_all(f, true);
    bool ok = true, any = false, returns = false; /* returns: a thread may have left */
    const char *pending_pragma = NULL, *hdr, *seg_b = NULL, *seg_e = NULL;
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
            any = true;
            seg_b = seg_b ? seg_b : p, seg_e = s;
        } else if (!returns && fx_interchange_ok(f, p, s, &hdr)) {
            fx_flush(f, outer, &body, &pre, &any, &seg_b, seg_e);
            f->out = outer;
            gx__sb_puts(f->out, "{ ");
            for (int i = 0; i < f->nv; i++) /* the loop's bounds may use them */
                if (f->uni[i]) {
                    gx__sb_printf(f->out, "gxf_T%d %s = (", i, f->names[i]);
                    fx_copy(f, f->init_b[i], f->init_e[i]);
                    gx__sb_puts(f->out, "); ");
                }
            if (pending_pragma)
                fx_copy(f, pending_pragma, fx_stmt_end(pending_pragma, e));
            fx_copy(f, p, hdr);
            gx__sb_puts(f->out, "gx_cpu::each_thread<GXF_ST>([&](size_t gxf_t, uint3 gxf_tid) { ");
            fx_bind_all(f, true);
            fx_copy(f, hdr, s);
            fx_write_back(f, hdr, s);
            gx__sb_puts(f->out, "}); }\n");
            f->interchanged++;
            gx__sb_free(&body);
            f->out = &body;
            fx_bind_all(f, true);
        } else {
            ok = fx_plain_ok(f, p, s, final);
            returns |= fx_has_word(p, s, "return"); /* later statements must stay in its loop */
            if (pending_pragma) {
                fx_copy(f, pending_pragma, fx_stmt_end(pending_pragma, e));
                gx__sb_puts(f->out, "\n");
            }
            fx_copy(f, p, s);
            gx__sb_puts(f->out, "\n");
            any = true;
            seg_b = seg_b ? seg_b : p, seg_e = s;
        }
        if (*p != '#')
            pending_pragma = NULL;
        p = s;
    }
    fx_flush(f, outer, &body, &pre, &any, &seg_b, seg_e);
    gx__sb_free(&body);
    f->out = outer;
    return ok;
}

/* `[&](unsigned gxf_t) -> bool { ...; return (cond); }` for gx_cpu::uniform. */
static void fx_cond(fx *f, const char *b, const char *e)
{
    gx__sb_puts(f->out, "gx_cpu::uniform<GXF_ST>([&](size_t gxf_t, uint3 gxf_tid) -> bool { ");
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
        gx__sb_puts(f->out, "gx_cpu::each_thread<GXF_ST>([&](size_t gxf_t, uint3 gxf_tid) { ");
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
    if (rp)
        fx_params(&f, lp, rp);
    gx__sbuf body = {0};
    f.out = &body;
    bool ok = rp && fx_list(&f, b + 1, e, true);
    if (ok) {
        gx__sb_printf(out, "static void gx__fis_%s", name);
        gx__sb_printf(out, "%.*s\n{\n", (int)(rp - lp), txt + (lp - code));
        /* messages name the kernel, not the lambdas its regions became */
        gx__sb_printf(out, "static const char gxf_func[] = \"%s\";\n#define __func__ gxf_func\n", name);
        /* the built-in indices as values the compiler sees: threadIdx is each thread
         * loop's own (gxf_tid), the others are fixed for the block */
        gx__sb_printf(out, "#define GXF_ST %d\n", fx_needs_tid_state(&f) ? 1 : 0);
        gx__sb_puts(out, "const uint3 gxf_bid = gx_cpu::self()->bid;\n"
                         "const dim3 gxf_bdim = gx_cpu::self()->bdim, gxf_gdim = gx_cpu::self()->gdim;\n"
                         "#pragma push_macro(\"threadIdx\")\n#pragma push_macro(\"blockIdx\")\n"
                         "#pragma push_macro(\"blockDim\")\n#pragma push_macro(\"gridDim\")\n"
                         "#undef threadIdx\n#undef blockIdx\n#undef blockDim\n#undef gridDim\n"
                         "#define threadIdx gxf_tid\n#define blockIdx gxf_bid\n"
                         "#define blockDim gxf_bdim\n#define gridDim gxf_gdim\n");
        gx__sb_puts(out, body.p ? body.p : "");
        gx__sb_puts(out, "}\n#undef __func__\n#undef GXF_ST\n"
                         "#pragma pop_macro(\"threadIdx\")\n#pragma pop_macro(\"blockIdx\")\n"
                         "#pragma pop_macro(\"blockDim\")\n#pragma pop_macro(\"gridDim\")\n");
        if (f.interchanged)
            snprintf(why, cap, "%d loop%s interchanged with the thread loop", f.interchanged,
                     f.interchanged > 1 ? "s" : "");
        else
            snprintf(why, cap, "%s", "");
    } else {
        snprintf(why, cap, "%s", f.why ? f.why : "a shape it cannot read");
    }
    gx__sb_free(&body);
    return ok;
}
