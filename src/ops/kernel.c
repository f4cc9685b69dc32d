/* kernel.c -- user CUDA kernels: compile through gx's kernel caches, check
 * arguments against the source's parameter list, launch, occupancy, reflection
 * (attributes, PTX, SASS) and NVRTC-only PTX without a GPU.  Everything
 * CUDA-specific is the backend's: launches and reflection go through the context's
 * table (GX__CAP_USER_KERNELS, GX__CAP_OCCUPANCY), PTX and SASS through the
 * context-free gx__nvrtc_ptx / gx__nvrtc_sass (src/backend/cuda/cuda_kernel.c).
 *
 * A user kernel goes through gx__kernel_get like every generated kernel: its
 * source is wrapped with a first line that marks it as a user kernel and carries
 * its NVRTC options and a hash of gx/device.h, so options and header are part of
 * the cache key and the backend's build step knows what to pass to NVRTC. */
#include "core/stream_priv.h"
#include "jit/cache.h"
#include "ops/kernel_parse.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KMAGIC 0x67786b65726e656cull

/* The new option words came out of `reserved`: the struct keeps its size (ABI). */
_Static_assert(sizeof(gx_kernel_opts) == 3 * sizeof(void *) + 8 + 16 + 24, "gx_kernel_opts size (72 on LP64)");

struct gx_kernel {
    uint64_t magic;
    gx_ctx *ctx;
    gx__kernel k;
    char *source; /* the wrapped source (for PTX / SASS) */
    char *entry, *label;
    int nparams; /* -1: the parameter list could not be read */
    kp_param params[KP_MAX_PARAMS];
    struct gx_kernel *next;
};

void gx_text_free(char *text) { free(text); }

/* ------------------------------------------------------------ source wrapping */

#define KMAX_OPTS 60
#define KMAX_SOURCES 32
#define KMAX_NAMES 64

/* Checked mode: the option, or GX_KERNEL_CHECKS=1 for every kernel. */
static bool k_checked(const gx_kernel_opts *o)
{
    if (o && o->checked)
        return true;
    const char *e = getenv("GX_KERNEL_CHECKS");
    return e && *e && strcmp(e, "0") != 0;
}

/* Relocatable code: asked for, or a device-side launch in some source. */
static bool k_rdc(const gx_kernel_opts *o, int nsrc, const char *const *src)
{
    if (o && o->rdc)
        return true;
    for (int i = 0; i < nsrc; i++)
        if (strstr(src[i], "<<<"))
            return true;
    return false;
}

static gx_status k_opt_lines(const char *what, const gx_kernel_opts *o, gx__sbuf *b)
{
    int nopt = o ? o->noptions : 0;
    GX__ARG(nopt >= 0 && nopt <= KMAX_OPTS && (nopt == 0 || o->options),
            "%s: noptions = %d (0..%d, with options not NULL)", what, nopt, KMAX_OPTS);
    int nn = o ? o->nname_expressions : 0;
    GX__ARG(nn >= 0 && nn <= KMAX_NAMES && (nn == 0 || o->name_expressions),
            "%s: nname_expressions = %d (0..%d, with name_expressions not NULL)", what, nn, KMAX_NAMES);
    for (int i = 0; i < nopt; i++) {
        const char *op = o->options[i];
        if (!op || !*op || strchr(op, '\n') || strncmp(op, "--gpu-architecture", 18) == 0 ||
            strncmp(op, "-arch", 5) == 0)
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "%s: option %d (\"%s\") is empty, has a newline, or sets the arch "
                           "(gx picks the device's arch itself)",
                           what, i, op ? op : "(null)");
        gx__sb_printf(b, "//gx:opt %s\n", op);
    }
    for (int i = 0; i < nn; i++) {
        const char *e = o->name_expressions[i];
        if (!e || !*e || strpbrk(e, "\n\t"))
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: name expression %d (\"%s\") is empty or has a newline or tab",
                           what, i, e ? e : "(null)");
        gx__sb_printf(b, "//gx:name %s\n", e);
    }
    return GX_OK;
}

/* A user kernel as the backend's build step reads it (cuda_nvrtc_compile_user):
 * GX__USER_KERNEL_MAGIC, "//gx:" lines with everything that shapes the code
 * (options, checked mode, the CUDA include folders, relocatable/LTO, name
 * expressions, a hash of gx/device.h), then the source(s).  All of it is in the
 * text, so all of it is in the cache key. */
static gx_status k_wrap_n(const char *what, int nsrc, const char *const *src, const char *const *names,
                          const char *label, const gx_kernel_opts *o, char **out)
{
    *out = NULL;
    gx__sbuf b = {0};
    char hash[65], inc[8192];
    const char *dev = gx_device_header();
    cache_sha256_hex(dev, strlen(dev), hash);
    gx__sb_printf(&b, "%s\n", GX__USER_KERNEL_MAGIC);
    gx_status s = k_opt_lines(what, o, &b);
    if (s != GX_OK) {
        gx__sb_free(&b);
        return s;
    }
    bool checked = k_checked(o);
    if (checked)
        gx__sb_puts(&b, "//gx:opt -DGX_KERNEL_CHECKS\n");
    gx__cuda_include_path(inc, sizeof inc);
    gx__sb_printf(&b, "//gx:include %s\n", inc);
    if (k_rdc(o, nsrc, src))
        gx__sb_puts(&b, "//gx:rdc\n");
    if (o && o->lto)
        gx__sb_puts(&b, "//gx:lto\n");
    gx__sb_printf(&b, "//gx:device.h %.16s\n", hash);
    if (nsrc > 1 || names)
        gx__sb_printf(&b, "//gx:sources %d\n", nsrc);
    for (int i = 0; i < nsrc; i++) {
        char nm[256];
        const char *given = names && names[i] && *names[i] ? names[i] : NULL;
        if (nsrc == 1 && !names)
            given = label;
        if (given && !strpbrk(given, "\"\\\n\t "))
            snprintf(nm, sizeof nm, "%s", given);
        else
            snprintf(nm, sizeof nm, "source%d.cu", i);
        gx__sbuf one = {0};
        /* Checked mode: the record gx/device.h's recorder fills, defined once. */
        if (checked && i == 0)
            gx__sb_puts(&one, "#include <gx/device.h>\nextern \"C\" { __device__ gx__check_record gx__check_rec; }\n");
        /* #line keeps NVRTC's messages on the user's own line numbers. */
        gx__sb_printf(&one, "#line 1 \"%s\"\n%s", nm, src[i]);
        if (nsrc > 1 || names)
            gx__sb_printf(&b, "//gx:source %zu %s\n", one.len, nm);
        if (one.p)
            gx__sb_puts(&b, one.p);
        if (one.oom)
            b.oom = true;
        gx__sb_free(&one);
    }
    if (b.oom) {
        gx__sb_free(&b);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    *out = b.p;
    return GX_OK;
}

gx_status gx__kernel_wrap(int nsrc, const char *const *src, const char *const *names, const char *label,
                          const gx_kernel_opts *o, char **out)
{
    return k_wrap_n("gx__kernel_wrap", nsrc, src, names, label, o, out);
}

static gx_status k_wrap(const char *what, const char *source, const char *label, const gx_kernel_opts *o, char **out)
{
    return k_wrap_n(what, 1, &source, NULL, label, o, out);
}

gx_status gx_kernel_include_path(char *buf, size_t cap, size_t *needed)
{
    char inc[8192];
    gx__cuda_include_path(inc, sizeof inc);
    gx__sbuf b = {0};
    gx__sb_puts(&b, inc);
    gx_status s = b.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : gx__sb_export(&b, buf, cap, needed);
    gx__sb_free(&b);
    return s;
}

/* ------------------------------------------------------------ handles */

static gx_status k_check(const gx_kernel *k, const char *what)
{
    if (!k)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the kernel is NULL", what);
    if (!gx__handle_live(k) || k->magic != KMAGIC)
        return gx__err(GX_ERR_INVALID_HANDLE, "%s: the kernel handle is not live (destroyed already?)", what);
    return gx__ctx_check(k->ctx);
}

static void k_free(gx_kernel *k)
{
    k->magic = 0;
    free(k->source);
    free(k->entry);
    free(k->label);
    free(k);
}

/* The context's live user kernels, freed with the context (gx__ctx_ext). */
typedef struct k_live {
    gx_kernel *head;
} k_live;

static void k_live_release(gx_ctx *ctx, void *state)
{
    (void)ctx;
    k_live *l = state;
    while (l->head) {
        gx_kernel *k = l->head;
        l->head = k->next;
        gx__handle_remove(k);
        k_free(k);
    }
    free(l);
}

static const gx__ctx_ext k_live_ext = {"user kernels", k_live_release};

/* Caller holds the lock. */
static k_live *k_live_of(gx_ctx *ctx)
{
    k_live *l = gx__ctx_ext_get(ctx, &k_live_ext);
    if (l || !(l = calloc(1, sizeof *l)))
        return l;
    if (gx__ctx_ext_set(ctx, &k_live_ext, l) != GX_OK) {
        free(l);
        return NULL;
    }
    return l;
}

static gx_status k_unsupported(gx_ctx *ctx, const char *what)
{
    return gx__err(GX_ERR_UNSUPPORTED,
                   "%s: raw CUDA kernels are GPU-only and this context runs on the %s backend; "
                   "create a CUDA context (gx_ctx_create(..., GX_BACKEND_CUDA) or GX_BACKEND=cuda), "
                   "or write the work with gx_map and the other array operations, which run on "
                   "both backends (gx_kernel_ptx_offline still gives PTX without a GPU)",
                   what, ctx->be.iface->name);
}

/* A missing entry reaches us as the backend's "kernel entry missing". */
static gx_status k_get(gx_ctx *ctx, gx_kernel *k)
{
    gx_status s = gx__kernel_get(ctx, k->source, k->label, k->entry, &k->k);
    if (s == GX_ERR_INTERNAL)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "gx_kernel_compile: the source compiled but has no kernel named \"%s\"; "
                       "declare it extern \"C\" __global__ (C++ names are mangled), pass the "
                       "mangled name, or list a template instantiation in opts.name_expressions",
                       k->entry);
    return s;
}

/* The declared parameters of entry, from the first source that defines it. */
static int k_params_of(int nsrc, const char *const *src, const char *entry, kp_param *params)
{
    for (int i = 0; i < nsrc; i++) {
        int n = kp_params(src[i], entry, params);
        if (n >= 0)
            return n;
    }
    return -1;
}

static gx_status k_compile(const char *what, gx_ctx *ctx, int nsrc, const char *const *src, const char *const *names,
                           const char *entry, const gx_kernel_opts *opts, gx_kernel **out)
{
    GX__ARG(out, "%s: out must not be NULL", what);
    *out = NULL;
    GX__OPTS_CHECK(opts, what);
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(src && entry && *entry, "%s: sources and entry must not be NULL or empty", what);
    for (int i = 0; i < nsrc; i++)
        GX__ARG(src[i], "%s: source and entry must not be NULL or empty (source %d is NULL)", what, i);
    if (!gx__ctx_supports(ctx, GX__CAP_USER_KERNELS))
        return k_unsupported(ctx, what);
    const char *label = opts && opts->label && *opts->label ? opts->label : entry;
    gx_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    k->magic = KMAGIC;
    k->ctx = ctx;
    k->entry = strdup(entry);
    k->label = strdup(label);
    gx_status s = k->entry && k->label ? k_wrap_n(what, nsrc, src, names, label, opts, &k->source)
                                       : gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    if (s == GX_OK)
        k->nparams = k_params_of(nsrc, src, entry, k->params);
    if (s == GX_OK) {
        gx__lock(ctx);
        k_live *live = k_live_of(ctx);
        s = live ? k_get(ctx, k) : gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", what);
        if (s == GX_OK) {
            k->next = live->head;
            live->head = k;
            gx__handle_add(k);
        }
        gx__unlock(ctx);
    }
    if (s != GX_OK) {
        k_free(k);
        return s;
    }
    *out = k;
    return GX_OK;
}

gx_status gx_kernel_compile(gx_ctx *ctx, const char *source, const char *entry, const gx_kernel_opts *opts,
                            gx_kernel **out)
{
    return k_compile("gx_kernel_compile", ctx, 1, &source, NULL, entry, opts, out);
}

gx_status gx_kernel_compile_sources(gx_ctx *ctx, int nsources, const char *const *sources, const char *const *names,
                                    const char *entry, const gx_kernel_opts *opts, gx_kernel **out)
{
    if (out)
        *out = NULL;
    GX__ARG(nsources >= 1 && nsources <= KMAX_SOURCES && sources,
            "gx_kernel_compile_sources: nsources = %d (1..%d, with sources not NULL)", nsources, KMAX_SOURCES);
    return k_compile("gx_kernel_compile_sources", ctx, nsources, sources, names, entry, opts, out);
}

gx_status gx_kernel_destroy(gx_kernel *k)
{
    if (!k)
        return GX_OK;
    if (!gx__handle_remove(k))
        return gx__err(GX_ERR_INVALID_HANDLE, "gx_kernel_destroy: the kernel handle is not live (destroyed already?)");
    gx_ctx *ctx = k->ctx;
    gx__lock(ctx);
    k_live *live = gx__ctx_ext_get(ctx, &k_live_ext);
    for (gx_kernel **p = live ? &live->head : NULL; p && *p; p = &(*p)->next)
        if (*p == k) {
            *p = k->next;
            break;
        }
    gx__unlock(ctx);
    /* The compiled module stays in the context's cache for the next compile. */
    k_free(k);
    return GX_OK;
}

/* ------------------------------------------------------------ arguments */

static void k_params_list(const gx_kernel *k, char *out, size_t n)
{
    size_t off = 0;
    out[0] = 0;
    for (int i = 0; i < k->nparams && off + 1 < n; i++) {
        int w = snprintf(out + off, n - off, "%s%s", i ? ", " : "",
                         k->params[i].name[0] ? k->params[i].name : k->params[i].type);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

static gx_status k_arg_err(const gx_kernel *k, int i, const char *fmt, const char *a, const char *b)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, a, b);
    const kp_param *p = &k->params[i];
    return gx__err(GX_ERR_TYPE, "gx_kernel_launch(%s): argument %d (%s): the kernel declares %s, %s", k->label, i,
                   p->name[0] ? p->name : "unnamed", p->type, msg);
}

static const char *karg_kind_name(gx_karg_kind kd)
{
    return kd == GX_KARG_KIND_ARRAY ? "an array" : kd == GX_KARG_KIND_PTR ? "a raw pointer" : "a scalar";
}

/* One argument against the declared parameter i (when the list was read). */
static gx_status k_arg_check(const gx_kernel *k, int i, const gx_karg *a)
{
    const kp_param *p = &k->params[i];
    bool is_ptr = a->kind != GX_KARG_KIND_SCALAR;
    if (p->pointer != is_ptr)
        return k_arg_err(k, i, "got %s%s", karg_kind_name(a->kind),
                         p->pointer ? " (pass GX_KARG_ARRAY or GX_KARG_PTR)" : " (pass a GX_KARG_<type> value)");
    if (a->kind == GX_KARG_KIND_SCALAR && p->dtype != GX_DTYPE_COUNT && p->dtype != a->dtype) {
        char macro[16];
        const char *nm = gx_dtype_name(p->dtype);
        size_t j = 0;
        for (; nm[j] && j + 1 < sizeof macro; j++)
            macro[j] = (char)toupper((unsigned char)nm[j]);
        macro[j] = 0;
        return k_arg_err(k, i, "got a %s scalar (use GX_KARG_%s)", gx_dtype_name(a->dtype), macro);
    }
    /* Half-precision pointers take u16 arrays too: the same 16 bits (data made
     * before gx had f16/bf16 arrays). */
    bool half_bits = (p->dtype == GX_F16 || p->dtype == GX_BF16) && a->kind == GX_KARG_KIND_ARRAY &&
                     a->v.array->dtype == GX_U16;
    if (a->kind == GX_KARG_KIND_ARRAY && p->dtype != GX_DTYPE_COUNT && p->dtype != a->v.array->dtype && !half_bits)
        return k_arg_err(k, i, "got an array of %s%s", gx_dtype_name(a->v.array->dtype),
                         " (its element type must match the pointer)");
    return GX_OK;
}

/* Validates args and points params[i] at each argument's value. */
static gx_status k_args(const gx_kernel *k, int nargs, const gx_karg *args, void **vals, void **params)
{
    if (k->nparams >= 0 && nargs != k->nparams) {
        char list[512];
        k_params_list(k, list, sizeof list);
        return gx__err(GX_ERR_TYPE, "gx_kernel_launch(%s): the kernel takes %d argument%s (%s), got %d", k->label,
                       k->nparams, k->nparams == 1 ? "" : "s", list, nargs);
    }
    for (int i = 0; i < nargs; i++) {
        const gx_karg *a = &args[i];
        if (a->kind == GX_KARG_KIND_ARRAY) {
            GX__CHECK(gx__array_check(a->v.array, "gx_kernel_launch"));
            if (a->v.array->ctx != k->ctx)
                return gx__err(GX_ERR_INVALID_ARGUMENT,
                               "gx_kernel_launch(%s): argument %d is an array of another context", k->label, i);
            vals[i] = gx__array_ptr(a->v.array);
            params[i] = &vals[i];
        } else if (a->kind == GX_KARG_KIND_PTR) {
            params[i] = (void *)&a->v.ptr;
        } else if (a->kind == GX_KARG_KIND_SCALAR) {
            if ((unsigned)a->dtype >= GX_DTYPE_COUNT || gx_dtype_size(a->dtype) == 0)
                return gx__err(GX_ERR_DTYPE,
                               "gx_kernel_launch(%s): argument %d has no valid dtype "
                               "(build it with a GX_KARG_<type> macro)",
                               k->label, i);
            params[i] = (void *)&a->v; /* every member starts at the union's start */
        } else {
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "gx_kernel_launch(%s): argument %d has kind %d, "
                           "not one of GX_KARG_KIND_ARRAY/PTR/SCALAR",
                           k->label, i, (int)a->kind);
        }
        if (k->nparams >= 0)
            GX__CHECK(k_arg_check(k, i, a));
    }
    return GX_OK;
}

/* ------------------------------------------------------------ launch */

static gx_status k_cfg(const gx_kernel *k, const gx_launch_cfg *c, gx__launch *l)
{
    GX__ARG(c, "gx_kernel_launch(%s): cfg must not be NULL", k->label);
    if (c->grid[0] == 0 || c->block[0] == 0)
        return gx__err(GX_ERR_LAUNCH,
                       "gx_kernel_launch(%s): grid[0] = %u and block[0] = %u must be > 0 "
                       "(0 counts as 1 only in dimensions 1 and 2)",
                       k->label, c->grid[0], c->block[0]);
    if (c->shmem > UINT_MAX)
        return gx__err(GX_ERR_LAUNCH,
                       "gx_kernel_launch(%s): %zu bytes of dynamic shared memory exceed "
                       "any device's limit",
                       k->label, c->shmem);
    memset(l, 0, sizeof *l);
    for (int i = 0; i < 3; i++) {
        l->grid[i] = c->grid[i] ? c->grid[i] : 1;
        l->block[i] = c->block[i] ? c->block[i] : 1;
    }
    l->shmem = (unsigned)c->shmem;
    return GX_OK;
}

gx_status gx_kernel_launch(gx_kernel *k, const gx_launch_cfg *cfg, int nargs, const gx_karg *args)
{
    GX__CHECK(k_check(k, "gx_kernel_launch"));
    GX__ARG(nargs >= 0 && nargs <= KP_MAX_PARAMS && (nargs == 0 || args),
            "gx_kernel_launch(%s): nargs = %d (0..%d, args not NULL)", k->label, nargs, KP_MAX_PARAMS);
    gx__launch l;
    GX__CHECK(k_cfg(k, cfg, &l));
    void *vals[KP_MAX_PARAMS], *params[KP_MAX_PARAMS + 1];
    GX__CHECK(k_args(k, nargs, args, vals, params));
    params[nargs] = NULL; /* the CPU backend counts the arguments; CUDA reads the entry's ABI */
    gx_ctx *ctx = k->ctx;
    gx__range_push(k->label);
    gx__lock(ctx);
    void *st = NULL;
    gx_status s = gx__stream_backend(ctx, cfg->stream, "gx_kernel_launch", &st);
    if (s == GX_OK)
        s = ctx->be.iface->launch.user(&ctx->be, k->k.fn, &l, params, st, cfg->cooperative);
    gx__unlock(ctx);
    gx__range_pop();
    if (s != GX_OK && s != GX_ERR_KERNEL_FAULT)
        return gx__err_prefix(s, "gx_kernel_launch(%s)", k->label);
    return s;
}

/* ------------------------------------------------------------ occupancy & reflection */

gx_status gx_kernel_suggest(gx_kernel *k, int64_t n, size_t shmem, gx_launch_cfg *cfg, unsigned *fill_grid)
{
    GX__CHECK(k_check(k, "gx_kernel_suggest"));
    GX__ARG(cfg && n >= 0, "gx_kernel_suggest: cfg must not be NULL and n >= 0 (n = %lld)", (long long)n);
    GX__ARG(shmem <= UINT_MAX, "gx_kernel_suggest: shmem = %zu is too large", shmem);
    gx_ctx *ctx = k->ctx;
    int mg = 0, b = 0;
    gx__lock(ctx);
    gx_status s = gx__ctx_supports(ctx, GX__CAP_OCCUPANCY)
                      ? ctx->be.iface->launch.occupancy_block(&ctx->be, k->k.fn, (unsigned)shmem, &mg, &b)
                      : k_unsupported(ctx, "gx_kernel_suggest");
    gx__unlock(ctx);
    GX__CHECK(s);
    if (b <= 0)
        b = 256;
    int64_t grid = (n + b - 1) / b;
    grid = grid < 1 ? 1 : grid > INT_MAX ? INT_MAX : grid;
    memset(cfg, 0, sizeof *cfg);
    cfg->grid[0] = (unsigned)grid;
    cfg->block[0] = (unsigned)b;
    cfg->grid[1] = cfg->grid[2] = cfg->block[1] = cfg->block[2] = 1;
    cfg->shmem = shmem;
    if (fill_grid)
        *fill_grid = (unsigned)(mg > 0 ? mg : 1);
    return GX_OK;
}

gx_status gx_kernel_active_blocks(gx_kernel *k, int block, size_t shmem, int *blocks_per_sm)
{
    GX__CHECK(k_check(k, "gx_kernel_active_blocks"));
    GX__ARG(blocks_per_sm && block > 0, "gx_kernel_active_blocks: blocks_per_sm must not be NULL and block > 0");
    gx_ctx *ctx = k->ctx;
    gx__lock(ctx);
    gx_status s = gx__ctx_supports(ctx, GX__CAP_OCCUPANCY)
                      ? ctx->be.iface->launch.occupancy_active(&ctx->be, k->k.fn, block, shmem, blocks_per_sm)
                      : k_unsupported(ctx, "gx_kernel_active_blocks");
    gx__unlock(ctx);
    return s;
}

gx_status gx_kernel_attrs_get(gx_kernel *k, gx_kernel_attrs *out)
{
    GX__CHECK(k_check(k, "gx_kernel_attrs_get"));
    GX__ARG(out, "gx_kernel_attrs_get: out must not be NULL");
    memset(out, 0, sizeof *out);
    gx_ctx *ctx = k->ctx;
    gx__lock(ctx);
    /* The backend fills the arch too: it knows what it compiled for. */
    gx_status s = gx__ctx_supports(ctx, GX__CAP_USER_KERNELS) ? ctx->be.iface->launch.func_attrs(&ctx->be, k->k.fn, out)
                                                              : k_unsupported(ctx, "gx_kernel_attrs_get");
    gx__unlock(ctx);
    GX__CHECK(s);
    out->nparams = k->nparams;
    snprintf(out->entry, sizeof out->entry, "%s", k->entry);
    return GX_OK;
}

/* ------------------------------------------------------------ PTX and SASS */

/* "sm_90", "compute_80", "90", NULL -> cc 9.0 (the default without a device). */
static gx_status k_arch(const char *what, const char *arch, int *major, int *minor)
{
    const char *p = arch ? arch : "sm_90";
    if (strncmp(p, "sm_", 3) == 0)
        p += 3;
    else if (strncmp(p, "compute_", 8) == 0)
        p += 8;
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (end == p || *end || v < 10 || v > 999)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "%s: arch \"%s\" is not like sm_90, compute_80 or 90 (suffixed archs such as "
                       "sm_90a are not accepted)",
                       what, arch);
    *major = (int)(v / 10);
    *minor = (int)(v % 10);
    return GX_OK;
}

/* PTX and SASS exist for the CUDA backend's kernels only. */
static gx_status k_gpu_code(gx_kernel *k, const char *what)
{
    gx_backend_kind kind = GX_BACKEND_AUTO;
    GX__CHECK(gx_ctx_backend(k->ctx, &kind));
    if (kind != GX_BACKEND_CUDA)
        return gx__err(GX_ERR_UNSUPPORTED,
                       "%s: the CPU backend has no PTX or SASS (it compiles the kernel as C++ for the host); "
                       "gx_kernel_attrs_get describes a CPU kernel, and gx_kernel_ptx_offline / "
                       "gx_kernel_sass_offline give a GPU's code without a GPU",
                       what);
    return GX_OK;
}

gx_status gx_kernel_ptx(gx_kernel *k, char **text)
{
    GX__ARG(text, "gx_kernel_ptx: text must not be NULL");
    *text = NULL;
    GX__CHECK(k_check(k, "gx_kernel_ptx"));
    GX__CHECK(k_gpu_code(k, "gx_kernel_ptx"));
    const gx_device_info *d = &k->ctx->dinfo;
    return gx__nvrtc_ptx("gx_kernel_ptx", k->source, k->label, NULL, d->cc_major, d->cc_minor, text);
}

gx_status gx_kernel_sass(gx_kernel *k, char **text)
{
    GX__ARG(text, "gx_kernel_sass: text must not be NULL");
    *text = NULL;
    GX__CHECK(k_check(k, "gx_kernel_sass"));
    GX__CHECK(k_gpu_code(k, "gx_kernel_sass"));
    const gx_device_info *d = &k->ctx->dinfo;
    return gx__nvrtc_sass("gx_kernel_sass", k->source, k->label, d->cc_major, d->cc_minor, text);
}

gx_status gx_kernel_ptx_offline(const char *source, const char *entry, const char *arch, const gx_kernel_opts *opts,
                                char **text)
{
    GX__ARG(text && source, "gx_kernel_ptx_offline: source and text must not be NULL");
    *text = NULL;
    GX__OPTS_CHECK(opts, "gx_kernel_ptx_offline");
    int ma, mi;
    GX__CHECK(k_arch("gx_kernel_ptx_offline", arch, &ma, &mi));
    const char *label = opts && opts->label && *opts->label ? opts->label : entry ? entry : "kernel.cu";
    char *wrapped = NULL;
    GX__CHECK(k_wrap("gx_kernel_ptx_offline", source, label, opts, &wrapped));
    gx_status s = gx__nvrtc_ptx("gx_kernel_ptx_offline", wrapped, label, entry, ma, mi, text);
    free(wrapped);
    return s;
}

gx_status gx_kernel_sass_offline(const char *source, const char *arch, const gx_kernel_opts *opts, char **text)
{
    GX__ARG(text && source, "gx_kernel_sass_offline: source and text must not be NULL");
    *text = NULL;
    GX__OPTS_CHECK(opts, "gx_kernel_sass_offline");
    int ma, mi;
    GX__CHECK(k_arch("gx_kernel_sass_offline", arch, &ma, &mi));
    const char *label = opts && opts->label && *opts->label ? opts->label : "kernel.cu";
    char *wrapped = NULL;
    GX__CHECK(k_wrap("gx_kernel_sass_offline", source, label, opts, &wrapped));
    gx_status s = gx__nvrtc_sass("gx_kernel_sass_offline", wrapped, label, ma, mi, text);
    free(wrapped);
    return s;
}
