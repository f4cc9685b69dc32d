/* cpu_kernel.c -- users' CUDA C kernels (gx_kernel_compile) on the CPU backend.
 *
 * Build: the wrapped source (GX__USER_KERNEL_MAGIC, "//gx:" lines, the sources) is
 * checked for what the CPU cannot run (inline PTX, tensor cores, textures, grid
 * sync...: GX_ERR_UNSUPPORTED naming the construct and its line), lightly rewritten
 * (`extern __shared__ T s[];` becomes a pointer to the block's dynamic shared
 * buffer; includes gx supplies are dropped) and compiled as C++ behind
 * kernel_prelude.h, the CUDA vocabulary.  Each __global__ function gets an exported
 * trampoline gx__cpuk_<name>(launch, first block, end block) that runs those blocks
 * on the calling thread: as a loop over the threads when the source has no barrier
 * or warp intrinsic, else as fibers switched at barriers (kernel_prelude.h).
 *
 * Launch: the blocks are the parts of a pool job (cpu_backend.c), so they spread
 * over all workers; the call returns when the grid is done, with the first failure
 * a block reported (divergent barrier, deadlock) as GX_ERR_KERNEL_FAULT. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend/cpu/cpu_kernel.h"
#include "backend/cpu/cpu_cc.h"
#include "jit/cache.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gx_cpu_kernel_prelude.inc"

/* Bumped whenever cpu_fission.c's output changes (part of the cache key). */
#define CK_FISSION_VERSION 7

/* ------------------------------------------------------------ source scanning */

/* A copy of src with comments and the insides of string and character literals
 * blanked (newlines kept), so scans see code only and keep line numbers. */
static char *ck_code_only(const char *src)
{
    size_t n = strlen(src);
    char *c = malloc(n + 1);
    if (!c)
        return NULL;
    memcpy(c, src, n + 1);
    for (size_t i = 0; i < n; i++) {
        if (c[i] == '/' && c[i + 1] == '/') {
            while (i < n && c[i] != '\n')
                c[i++] = ' ';
        } else if (c[i] == '/' && c[i + 1] == '*') {
            c[i] = c[i + 1] = ' ';
            for (i += 2; i < n && !(c[i] == '*' && c[i + 1] == '/'); i++)
                if (c[i] != '\n')
                    c[i] = ' ';
            if (i < n)
                c[i] = c[i + 1] = ' ', i++;
        } else if (c[i] == '"' || c[i] == '\'') {
            char q = c[i];
            for (i++; i < n && c[i] != q && c[i] != '\n'; i++) {
                if (c[i] == '\\' && i + 1 < n)
                    c[i++] = ' ';
                c[i] = ' ';
            }
        }
    }
    return c;
}

static bool ck_ident(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

/* The first occurrence of word `w` in code (not part of a longer identifier when
 * w itself starts/ends with an identifier character). */
static const char *ck_find(const char *code, const char *w)
{
    size_t wl = strlen(w);
    for (const char *p = strstr(code, w); p; p = strstr(p + 1, w)) {
        bool left = p == code || !ck_ident(w[0]) || !ck_ident(p[-1]);
        bool right = !ck_ident(w[wl - 1]) || !ck_ident(p[wl]);
        if (left && right)
            return p;
    }
    return NULL;
}

static void ck_linecol(const char *code, const char *at, int *line, int *col)
{
    *line = 1, *col = 1;
    for (const char *p = code; p < at; p++)
        if (*p == '\n')
            ++*line, *col = 1;
        else
            ++*col;
}

/* What the CPU backend's subset leaves out, and what to say about it. */
static const struct {
    const char *text, *what;
} ck_unsupported[] = {
    {"asm", "inline PTX (asm)"},
    {"__asm__", "inline PTX (asm)"},
    {"wmma::", "tensor-core intrinsics (wmma)"},
    {"mma_sync", "tensor-core intrinsics (mma_sync)"},
    {"texture<", "textures"},
    {"tex1D", "textures (tex1D)"},
    {"tex2D", "textures (tex2D)"},
    {"tex3D", "textures (tex3D)"},
    {"tex1Dfetch", "textures (tex1Dfetch)"},
    {"cudaTextureObject_t", "texture objects"},
    {"surf2Dwrite", "surfaces"},
    {"this_grid", "cooperative-groups grid sync (this_grid)"},
    {"grid_group", "cooperative-groups grid sync (grid_group)"},
    {"cooperative_groups", "cooperative groups"},
    {"<<<", "device-side kernel launches (dynamic parallelism)"},
    {"cuda_fp16.h", "half precision (cuda_fp16.h)"},
    {"cuda_bf16.h", "bfloat16 (cuda_bf16.h)"},
    {"__half", "half precision (__half)"},
    {"__nv_bfloat16", "bfloat16 (__nv_bfloat16)"},
    {"cub::", "CUB"},
    {"cuda::", "libcu++ (cuda::)"},
    {"__match_any_sync", "__match_any_sync"},
    {"__match_all_sync", "__match_all_sync"},
};

static gx_status ck_check_subset(const char *code, const char *name)
{
    /* The construct that comes first in the source is the one named. */
    const char *first = NULL, *what = NULL;
    for (size_t i = 0; i < sizeof ck_unsupported / sizeof ck_unsupported[0]; i++) {
        const char *at = ck_find(code, ck_unsupported[i].text);
        if (at && (!first || at < first))
            first = at, what = ck_unsupported[i].what;
    }
    if (!first)
        return GX_OK;
    int line, col;
    ck_linecol(code, first, &line, &col);
    return gx__err(GX_ERR_UNSUPPORTED,
                   "gx_kernel_compile: %s:%d:%d: %s is outside the CUDA C subset that the CPU backend runs "
                   "(see gx/kernel.h); run this kernel on the CUDA backend (GX_BACKEND=cuda)",
                   name, line, col, what);
}

/* A kernel runs its threads as fibers when its code has anything that makes a
 * thread wait for others (gx/device.h's warp and block helpers included). */
static const char *const ck_wait_words[] = {"__syncthreads", "__syncwarp", "__shfl",  "__ballot_sync",
                                            "__any_sync",    "__all_sync", "__activemask", "gx_warp_",
                                            "gx_block_",     "__reduce_"};

static bool ck_waits_in(const char *b, const char *e)
{
    for (size_t i = 0; i < sizeof ck_wait_words / sizeof ck_wait_words[0]; i++) {
        size_t wl = strlen(ck_wait_words[i]);
        for (const char *p = b; p + wl <= e; p++)
            if (memcmp(p, ck_wait_words[i], wl) == 0)
                return true;
    }
    return false;
}

static bool ck_needs_fibers(const char *code) { return ck_waits_in(code, code + strlen(code)); }

/* The end of the bracketed run that starts at p (*p is open), or NULL. */
static const char *ck_match(const char *p, char open, char close)
{
    for (int depth = 0; *p; p++) {
        depth += *p == open;
        depth -= *p == close;
        if (depth == 0)
            return p;
    }
    return NULL;
}

/* The body [*b, *e) of the function whose name starts at nm (a definition: the
 * parameter list is followed by a brace before any semicolon); false if none. */
static bool ck_body(const char *nm, const char **b, const char **e)
{
    const char *p = nm;
    while (ck_ident(*p))
        p++;
    while (isspace((unsigned char)*p))
        p++;
    if (*p != '(' || !(p = ck_match(p, '(', ')')))
        return false;
    for (p++; ck_ident(*p) || isspace((unsigned char)*p);) /* const, noexcept... */
        p++;
    if (*p != '{' || !(*e = ck_match(p, '{', '}')))
        return false;
    *b = p;
    return true;
}

/* Whether the body [b, e) waits for other threads, itself or through a function
 * of this source that it calls (by name, any depth up to 8).  Conservative: a
 * name defined several times counts if any definition waits. */
static bool ck_body_waits(const char *code, const char *b, const char *e, int depth)
{
    if (ck_waits_in(b, e))
        return true;
    if (depth >= 8)
        return false;
    for (const char *p = b; p < e; p++) {
        if (!ck_ident(*p) || ck_ident(p[-1]) || isdigit((unsigned char)*p))
            continue;
        const char *s = p;
        while (p < e && ck_ident(*p))
            p++;
        const char *q = p;
        while (q < e && isspace((unsigned char)*q))
            q++;
        if (q >= e || (*q != '(' && *q != '<'))
            continue;
        char nm[128];
        if ((size_t)(p - s) >= sizeof nm)
            continue;
        snprintf(nm, sizeof nm, "%.*s", (int)(p - s), s);
        /* `if (c) { ... }` looks like a definition of `if` */
        if (!strcmp(nm, "if") || !strcmp(nm, "for") || !strcmp(nm, "while") || !strcmp(nm, "switch") ||
            !strcmp(nm, "return") || !strcmp(nm, "sizeof") || !strcmp(nm, "catch"))
            continue;
        for (const char *d = ck_find(code, nm); d; d = ck_find(d + 1, nm)) {
            const char *db, *de;
            if (d != s && ck_body(d, &db, &de) && !(db <= s && s < de) && ck_body_waits(code, db, de, depth + 1))
                return true;
        }
    }
    return false;
}

/* Whether __global__ function `name` needs fibers: any macro that mentions a wait
 * makes every kernel of the source need them (macros are not followed). */
static bool ck_macro_waits(const char *code)
{
    for (const char *h = strchr(code, '#'); h; h = strchr(h + 1, '#')) {
        const char *eol = h + strcspn(h, "\n");
        while (eol > h && eol[-1] == '\\' && *eol)
            eol += 1 + strcspn(eol + 1, "\n");
        if (strncmp(h + 1 + strspn(h + 1, " \t"), "define", 6) == 0 && ck_waits_in(h, eol))
            return true;
    }
    return false;
}

static bool ck_kernel_needs_fibers(const char *code, const char *name)
{
    if (ck_macro_waits(code))
        return true;
    const char *b, *e;
    for (const char *d = ck_find(code, name); d; d = ck_find(d + 1, name))
        if (ck_body(d, &b, &e))
            return ck_body_waits(code, b, e, 0);
    return ck_needs_fibers(code); /* no body found: stay on the safe side */
}

bool cpu_kernel_waits(const char *code, const char *b, const char *e) { return ck_body_waits(code, b, e, 0); }

bool cpu_kernel_def(const char *code, const char *name, const char **def, const char **b, const char **e)
{
    for (const char *d = ck_find(code, name); d; d = ck_find(d + 1, name))
        if (ck_body(d, b, e)) {
            *def = d;
            return true;
        }
    return false;
}

/* ------------------------------------------------------------ rewriting */

/* Copies one source part into b: `extern __shared__ T name[];` becomes
 * `T *name = (T *)gx__dyn_smem();` on the same line, and the includes gx supplies
 * itself (gx/device.h, the CUDA runtime's headers) become blank lines. */
static void ck_rewrite(gx__sbuf *b, const char *src, const char *code)
{
    size_t n = strlen(src), i = 0;
    while (i < n) {
        const char *c = code + i;
        if (c[0] == '#' && (strncmp(src + i, "#include <gx/device.h>", 22) == 0 ||
                            strncmp(src + i, "#include <cuda_runtime", 22) == 0 ||
                            strncmp(src + i, "#include <cuda.h>", 17) == 0 ||
                            strncmp(src + i, "#include <device_launch_parameters.h>", 37) == 0 ||
                            strncmp(src + i, "#include <assert.h>", 19) == 0 ||
                            strncmp(src + i, "#include <cassert>", 18) == 0)) {
            while (i < n && src[i] != '\n')
                i++;
            continue;
        }
        if (strncmp(c, "extern", 6) == 0 && (i == 0 || !ck_ident(c[-1])) && !ck_ident(c[6])) {
            const char *p = c + 6;
            while (*p == ' ' || *p == '\t')
                p++;
            const char *semi = strchr(p, ';'), *br = strstr(p, "[]");
            if (strncmp(p, "__shared__", 10) == 0 && semi && br && br < semi) {
                const char *decl = p + 10, *e = br;
                while (e > decl && isspace((unsigned char)e[-1]))
                    e--;
                const char *nm = e;
                while (nm > decl && ck_ident(nm[-1]))
                    nm--;
                gx__sb_printf(b, "%.*s *%.*s = (%.*s *)gx__dyn_smem();", (int)(nm - decl), src + (decl - code),
                              (int)(e - nm), src + (nm - code), (int)(nm - decl), src + (decl - code));
                i = (size_t)(semi - code) + 1;
                continue;
            }
        }
        gx__sb_printf(b, "%c", src[i]);
        i++;
    }
}

/* The __global__ functions of one part (non-template ones), appended to names
 * (blank-separated).  The name is the identifier before the parameter list;
 * __launch_bounds__(...) in between is skipped. */
static void ck_globals(const char *code, gx__sbuf *names)
{
    for (const char *g = ck_find(code, "__global__"); g; g = ck_find(g + 10, "__global__")) {
        const char *back = g;
        while (back > code && back[-1] != ';' && back[-1] != '}' && back[-1] != '{')
            back--;
        const char *tp = ck_find(back, "template");
        if (tp && tp < g)
            continue;
        const char *p = g + 10, *last = NULL;
        size_t lastn = 0;
        while (*p && *p != '(' && *p != ';' && *p != '{') {
            if (ck_ident(*p)) {
                const char *s = p;
                while (ck_ident(*p))
                    p++;
                if ((size_t)(p - s) == 17 && strncmp(s, "__launch_bounds__", 17) == 0) {
                    while (*p && *p != '(')
                        p++;
                    for (int depth = 0; *p; p++) {
                        depth += *p == '(';
                        depth -= *p == ')';
                        if (depth == 0) {
                            p++;
                            break;
                        }
                    }
                    continue;
                }
                last = s, lastn = (size_t)(p - s);
            } else {
                p++;
            }
        }
        if (*p != '(' || !last)
            continue;
        char nm[128];
        snprintf(nm, sizeof nm, "%.*s", (int)lastn, last);
        char pat[132];
        snprintf(pat, sizeof pat, " %s ", nm);
        if (!names->p || !strstr(names->p, pat))
            gx__sb_printf(names, " %s ", nm);
    }
}

/* ------------------------------------------------------------ the wrapped source */

typedef struct ck_part {
    const char *name, *text;
    size_t len;
} ck_part;

#define CK_MAX_PARTS 32

/* Reads the "//gx:" lines: options (-D/-U kept as #define/#undef lines; the rest
 * are NVRTC's business) and the sources. */
static gx_status ck_parse(const char *w, gx__sbuf *defs, ck_part *parts, int *nparts)
{
    const char *p = strchr(w, '\n');
    p = p ? p + 1 : w + strlen(w);
    int declared = 0;
    *nparts = 0;
    while (strncmp(p, "//gx:", 5) == 0) {
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        const char *nx = eol ? eol + 1 : p + ll;
        if (strncmp(p, "//gx:opt -D", 11) == 0 || strncmp(p, "//gx:opt -U", 11) == 0) {
            const char *v = p + 11;
            size_t vl = ll - 11;
            const char *eq = memchr(v, '=', vl);
            if (p[10] == 'U')
                gx__sb_printf(defs, "#undef %.*s\n", (int)vl, v);
            else if (eq)
                gx__sb_printf(defs, "#define %.*s %.*s\n", (int)(eq - v), v, (int)(vl - (size_t)(eq - v) - 1), eq + 1);
            else
                gx__sb_printf(defs, "#define %.*s 1\n", (int)vl, v);
        } else if (strncmp(p, "//gx:sources ", 13) == 0) {
            declared = atoi(p + 13);
        } else if (strncmp(p, "//gx:source ", 12) == 0 && *nparts < CK_MAX_PARTS) {
            char *end = NULL;
            size_t len = strtoull(p + 12, &end, 10);
            ck_part *pt = &parts[(*nparts)++];
            pt->name = "source";
            pt->text = nx;
            pt->len = len;
            if (strlen(nx) < len)
                return gx__err(GX_ERR_INTERNAL, "cpu backend: a wrapped user kernel's source is shorter than declared");
            nx += len;
        }
        p = nx;
    }
    if (declared == 0) {
        parts[0].name = "source";
        parts[0].text = p;
        parts[0].len = strlen(p);
        *nparts = 1;
    }
    return GX_OK;
}

/* The name in a part's first "#line 1 "name"" (what messages call it).  Not always
 * the part's first line: checked mode puts gx/device.h's record before it. */
static void ck_part_name(const ck_part *pt, char *out, size_t cap)
{
    snprintf(out, cap, "source.cu");
    const char *l = pt->text, *end = pt->text + pt->len;
    while (l < end && strncmp(l, "#line 1 \"", 9) != 0) {
        const char *nl = memchr(l, '\n', (size_t)(end - l));
        l = nl ? nl + 1 : end;
    }
    if (l < end) {
        const char *q = l + 8, *e = memchr(q + 1, '"', (size_t)(end - q - 1));
        if (e)
            snprintf(out, cap, "%.*s", (int)(e - q - 1), q + 1);
    }
}

/* The user's text of a part, after gx's own first lines (checked mode's record and
 * the #line), for the subset check's line numbers. */
static const char *ck_user_text(const char *t)
{
    const char *l = strstr(t, "#line 1 \"");
    if (!l)
        return t;
    const char *e = strchr(l, '\n');
    return e ? e + 1 : t;
}

/* assert() as the CUDA backend gives it (cuda_loader.c's in-memory assert.h), put
 * after gx/device.h; the user's own #include <assert.h> lines are dropped (glibc's
 * would abort the process).  Checked mode: gx's recorder, read at gx_sync.
 * Unchecked: the launch reports it.  GXC_REC hands the launch the module's record. */
static const char ck_assert_h[] = "#undef assert\n"
                                  "#if defined(NDEBUG)\n"
                                  "#define assert(e) ((void)0)\n"
                                  "#elif defined(GX_KERNEL_CHECKS)\n"
                                  "#define assert(e) ((e) ? (void)0 : gx__check_fail(\"assertion failed: \" #e, "
                                  "__FILE__, __LINE__, __func__, 0, 0, 0))\n"
                                  "#else\n"
                                  "#define assert(e) ((e) ? (void)0 : gx_cpu::assert_fail(#e, __FILE__, __LINE__))\n"
                                  "#endif\n"
                                  "#if defined(GX_KERNEL_CHECKS)\n"
                                  "#define GXC_REC(L) ((L)->rec = (void *)&gx__check_rec)\n"
                                  "#else\n"
                                  "#define GXC_REC(L) ((void)0)\n"
                                  "#endif\n";

/* How kernel `name` runs (0 loop, 1 fibers, 2 fission; cpu_kernel_path): body is
 * the rewritten source, bcode its code-only twin; with fission, the rewritten
 * kernel is appended to fis.  GX_CPU_FISSION=0 keeps every kernel on fibers. */
static int ck_path(const char *body, const char *bcode, const char *name, bool fission, gx__sbuf *fis, char *why,
                   size_t cap, bool *loop_fis)
{
    *loop_fis = false;
    snprintf(why, cap, "%s", "");
    const char *env = getenv("GX_CPU_FISSION");
    bool off = !fission || (env && strcmp(env, "0") == 0);
    if (!ck_kernel_needs_fibers(bcode, name)) {
        /* no barrier: still one thread loop, but written by cpu_fission where it can
         * (threadIdx a value of the loop, block indices hoisted), which the compiler
         * vectorises (vadd), where the kernel called per thread is scalar code */
        gx__sbuf mine = {0};
        if (!off && cpu_fission(bcode, body, bcode, name, &mine, why, cap) && !mine.oom) {
            gx__sb_puts(fis, mine.p);
            *loop_fis = true;
        }
        if (*loop_fis) {
            char how[160];
            snprintf(how, sizeof how, "%s", why);
            snprintf(why, cap, "written as fission's loop%s%s", how[0] ? "; " : "", how);
        } else {
            snprintf(why, cap, "%s", "");
        }
        gx__sb_free(&mine);
        return 0;
    }
    if (off) {
        snprintf(why, cap, "fission turned off");
        return 1;
    }
    if (ck_macro_waits(bcode)) {
        snprintf(why, cap, "a macro of the source holds a barrier or warp intrinsic");
        return 1;
    }
    gx__sbuf mine = {0};
    bool ok = cpu_fission(bcode, body, bcode, name, &mine, why, cap) && !mine.oom;
    if (ok)
        gx__sb_puts(fis, mine.p);
    gx__sb_free(&mine);
    return ok ? 2 : 1;
}

/* The sources of a wrapped text, checked and rewritten into body; kernel names
 * (blank-separated) into names. */
static gx_status ck_sources(const char *wrapped, gx__sbuf *defs, gx__sbuf *body, gx__sbuf *names)
{
    ck_part parts[CK_MAX_PARTS];
    int np = 0;
    gx_status s = ck_parse(wrapped, defs, parts, &np);
    for (int i = 0; i < np && s == GX_OK; i++) {
        char *txt = strndup(parts[i].text, parts[i].len);
        char *code = txt ? ck_code_only(txt) : NULL;
        if (!code) {
            free(txt);
            s = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
            break;
        }
        char nm[256];
        ck_part_name(&parts[i], nm, sizeof nm);
        s = ck_check_subset(code + (ck_user_text(txt) - txt), nm);
        if (s == GX_OK) {
            ck_globals(code, names);
            ck_rewrite(body, txt, code);
            gx__sb_puts(body, "\n;\n");
        }
        free(code);
        free(txt);
    }
    return s;
}

static gx_status ck_generate(const char *wrapped, bool fission, gx__sbuf *out, int *nfis)
{
    gx__sbuf defs = {0}, body = {0}, names = {0}, fis = {0}, entries = {0};
    gx_status s = ck_sources(wrapped, &defs, &body, &names);
    char *bcode = s == GX_OK ? ck_code_only(body.p ? body.p : "") : NULL;
    if (s == GX_OK && !bcode)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    *nfis = 0;
    for (const char *p = names.p; s == GX_OK && p && *p;) {
        while (*p == ' ')
            p++;
        size_t l = strcspn(p, " ");
        if (!l)
            break;
        char kn[128], why[160];
        snprintf(kn, sizeof kn, "%.*s", (int)l, p);
        bool loop_fis;
        int path = ck_path(body.p, bcode, kn, fission, &fis, why, sizeof why, &loop_fis);
        *nfis += path == 2 || loop_fis;
        const char *log = getenv("GX_CPU_KERNEL_LOG"); /* 1: each kernel's path; 2: and the fission code */
        if (log)
            fprintf(stderr, "gx cpu kernel %s: %s%s%s\n", kn, path == 0 ? "thread loop" : path == 1 ? "fibers" : "fission",
                    why[0] ? ": " : "", why);
        if (log && strcmp(log, "2") == 0 && (path == 2 || loop_fis))
            fprintf(stderr, "%s\n", fis.p);
        gx__sb_printf(&entries,
                      "extern \"C\" __attribute__((visibility(\"default\"))) void gx__cpuk_%s"
                      "(gx_cpu_launch *L, int64_t b, int64_t e) { gx_cpu::run_blocks<%d, &%s%s>(L, b, e); GXC_REC(L); }\n",
                      kn, loop_fis ? 2 : path, path == 2 || loop_fis ? "gx__fis_" : "", kn);
        p += l;
    }
    if (s == GX_OK) {
        gx__sb_puts(out, defs.p ? defs.p : "");
        gx__sb_puts(out, (const char *)gx_cpu_kernel_prelude);
        gx__sb_puts(out, "#line 1 \"gx/device.h\"\n");
        gx__sb_puts(out, gx_device_header());
        gx__sb_puts(out, "\n");
        gx__sb_puts(out, ck_assert_h);
        gx__sb_puts(out, body.p ? body.p : "");
        gx__sb_puts(out, "\n#line 1 \"gx-cpu-fission\"\n");
        gx__sb_puts(out, fis.p ? fis.p : "");
        gx__sb_puts(out, "\n#line 1 \"gx-cpu-entries\"\n");
        gx__sb_puts(out, entries.p ? entries.p : "");
        gx__sb_puts(out, "extern \"C\" { __attribute__((visibility(\"default\"))) int gx__cpu_user_module = 1; }\n");
        if (out->oom || fis.oom || entries.oom)
            s = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    free(bcode);
    gx__sb_free(&defs);
    gx__sb_free(&body);
    gx__sb_free(&names);
    gx__sb_free(&fis);
    gx__sb_free(&entries);
    return s;
}

int cpu_kernel_path(const char *source, const char *name, char *why, size_t cap)
{
    gx__sbuf defs = {0}, body = {0}, names = {0}, fis = {0};
    int path = -1;
    if (ck_sources(source, &defs, &body, &names) == GX_OK) {
        char *bcode = ck_code_only(body.p ? body.p : "");
        bool loop_fis;
        if (bcode)
            path = ck_path(body.p, bcode, name, true, &fis, why, cap, &loop_fis);
        free(bcode);
    }
    gx__sb_free(&defs);
    gx__sb_free(&body);
    gx__sb_free(&names);
    gx__sb_free(&fis);
    return path;
}

bool cpu_kernel_is_user(const char *source)
{
    return strncmp(source, GX__USER_KERNEL_MAGIC "\n", strlen(GX__USER_KERNEL_MAGIC) + 1) == 0;
}

gx_status cpu_kernel_build(const char *wrapped, const char *label, void **blob, size_t *len)
{
    gx__sbuf src = {0};
    int nfis = 0;
    gx_status s = ck_generate(wrapped, true, &src, &nfis);
    const char *log = getenv("GX_CPU_KERNEL_LOG"); /* 3: the whole C++ source (to try flags on by hand) */
    if (s == GX_OK && log && strcmp(log, "3") == 0)
        fprintf(stderr, "%s\n", src.p);
    if (s == GX_OK)
        s = cpu_cxx_build(src.p, label, blob, len);
    gx__sb_free(&src);
    if (s == GX_ERR_COMPILE && nfis > 0) {
        /* the rewritten form did not compile (a declaration the scanner misread, a
         * per-thread variable used as a constant): the fibers run any kernel, and a
         * real error in the source is reported by this second build */
        gx__sbuf plain = {0};
        s = ck_generate(wrapped, false, &plain, &nfis);
        if (s == GX_OK)
            s = cpu_cxx_build(plain.p, label, blob, len);
        gx__sb_free(&plain);
    }
    return s;
}

void cpu_kernel_id(char *out, size_t cap)
{
    char hash[65];
    const char *p = (const char *)gx_cpu_kernel_prelude;
    cache_sha256_hex(p, strlen(p), hash);
    /* the generator's version too: cached objects from an older fission must not be reused */
    const char *env = getenv("GX_CPU_FISSION"); /* GX_CPU_FISSION=0 builds other objects */
    snprintf(out, cap, "; c++=%s; kprelude=%.16s; fission=%d", cpu_cxx_path(), hash,
             env && strcmp(env, "0") == 0 ? 0 : CK_FISSION_VERSION);
}
