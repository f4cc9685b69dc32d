/* kernel.c -- from generated source to a launchable kernel, through two caches:
 * the context's in-memory table (keyed by a quick hash of the source) and the
 * process-wide disk cache (keyed by a hash of everything that can change the
 * binary).  It compiles through the backend's build/load, and is the jit layer's:
 * ops generate sources and ask here for kernels. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/gx_internal.h"
#include "jit/cache.h"
#include "jit/lambda.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct kc_entry {
    int prelude; /* which standard prelude the source starts with (0: none) */
    char *body;  /* the source after that prelude, to confirm a quick-hash hit */
    char *entry;
    gx__module *mod;
    gx__kernel k;
    /* Entries with the same quick hash (a 64-bit collision: never seen, but a hit must
     * never return another source's kernel). */
    struct kc_entry *same;
} kc_entry;

/* The context's kernels by quick hash: the jit layer's state in the context,
 * released (modules freed) at gx_ctx_destroy while the backend is still open. */
static void kc_release(gx_ctx *ctx, void *state);
static const gx__ctx_ext kc_ext = {"kernel table", kc_release};

/* Every generated source starts with one of the two preludes (~25 KB).  The
 * in-memory lookup skips it and hashes only the rest, so a repeated operation costs
 * a short hash and a compare instead of a SHA-256 over the whole text; SHA-256 is
 * computed only on a miss, for the disk cache. */
static size_t kc_len[2];
static pthread_once_t kc_len_once = PTHREAD_ONCE_INIT;
static void kc_len_init(void)
{
    kc_len[0] = strlen(lam_prelude(GX__TARGET_C));
    kc_len[1] = strlen(lam_prelude(GX__TARGET_CUDA));
}

static const char *kc_split(gx_ctx *ctx, const char *source, int *prelude)
{
    /* Only this backend's prelude can lead its sources; its length is fixed. */
    pthread_once(&kc_len_once, kc_len_init);
    int i = gx__target_is_cuda(ctx);
    const char *p = lam_prelude(i ? GX__TARGET_CUDA : GX__TARGET_C);
    if (strncmp(source, p, kc_len[i]) == 0) { /* stops at a shorter source's end */
        *prelude = i + 1;
        return source + kc_len[i];
    }
    *prelude = 0;
    return source;
}

static uint64_t kc_quick_hash(const char *body, int prelude, const char *entry)
{
    uint64_t h = gx__hash_str(body) ^ (uint64_t)prelude;
    return h * 0x9E3779B97F4A7C15ull ^ gx__hash_str(entry);
}

static void kc_entry_free(gx_ctx *ctx, kc_entry *e)
{
    if (e->mod)
        ctx->be.iface->code.module_free(&ctx->be, e->mod);
    free(e->entry);
    free(e->body);
    free(e);
}

static void kc_release(gx_ctx *ctx, void *state)
{
    gx__map *t = state;
    size_t pos = 0;
    for (const gx__map_slot *sl; (sl = gx__map_next(t, &pos));)
        for (kc_entry *e = sl->val, *nx; e; e = nx) {
            nx = e->same;
            kc_entry_free(ctx, e);
        }
    gx__map_free(t);
    free(t);
}

static gx_status kc_table(gx_ctx *ctx, gx__map **out)
{
    gx__map *t = gx__ctx_ext_get(ctx, &kc_ext);
    if (!t) {
        if (!(t = malloc(sizeof *t)))
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for the kernel cache");
        *t = GX__MAP_INIT(GX__MAP_U64);
        gx_status s = gx__ctx_ext_set(ctx, &kc_ext, t);
        if (s != GX_OK) {
            free(t);
            return s;
        }
    }
    *out = t;
    return GX_OK;
}

/* Everything that changes the binary goes into the key: gx's version (the prelude
 * and generators are part of it), the backend's exact compiler and target, the
 * source itself.  Nothing the compiler outputs is hashed. */
static void kc_key(gx_ctx *ctx, const char *source, char out[65])
{
    cache_key k;
    cache_key_init(&k);
    cache_key_add(&k, "gx-kernel-key-1");
    cache_key_add(&k, GX_VERSION_STRING);
    cache_key_add(&k, gx__target_name(gx__ctx_target(ctx)));
    cache_key_add(&k, ctx->be.iface->code.compiler_id(&ctx->be));
    cache_key_add(&k, source);
    cache_key_final(&k, out);
}

static void kc_dump(gx_ctx *ctx, const char *key, const char *label, const char *source)
{
    if (!ctx->dump_dir)
        return;
    mkdir(ctx->dump_dir, 0755);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s-%.12s.%s", ctx->dump_dir, label, key, gx__target_is_cuda(ctx) ? "cu" : "c");
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "gx: warning: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    fputs(source, f);
    fclose(f);
}

/* Binary for the source: from disk if a verified entry exists, else built. */
static gx_status kc_binary(gx_ctx *ctx, const char *key, const char *source, const char *label, void **blob,
                           size_t *len)
{
    cache_disk *dc = cache_disk_get();
    const char *suffix = gx__target_name(gx__ctx_target(ctx));
    int corrupt = 0;
    if (cache_disk_load(dc, key, suffix, blob, len, &corrupt)) {
        ctx->cstats.disk_hits++;
        return GX_OK;
    }
    if (corrupt)
        ctx->cstats.corrupt_entries++;
    ctx->cstats.misses++;
    double t0 = gx__now_ms();
    gx_status s = ctx->be.iface->code.build(&ctx->be, source, label, blob, len);
    ctx->cstats.compile_ms += gx__now_ms() - t0;
    if (s != GX_OK)
        return s;
    ctx->cstats.compiles++;
    cache_disk_store(dc, key, suffix, *blob, *len);
    return GX_OK;
}

static void kc_occupancy(gx_ctx *ctx, gx__kernel *k)
{
    k->block = 256;
    k->min_grid = 0;
    if (!gx__ctx_supports(ctx, GX__CAP_OCCUPANCY))
        return;
    int mg = 0, bs = 0;
    if (ctx->be.iface->launch.occupancy_block(&ctx->be, k->fn, 0, &mg, &bs) == GX_OK && bs > 0) {
        k->block = bs;
        k->min_grid = mg;
    }
}

gx_status gx__launch_1d(gx_ctx *ctx, const gx__kernel *k, const void *args, size_t args_size, int64_t cpu_n,
                        int64_t cpu_align, int64_t grid, int64_t block)
{
    return gx__launch_1d_shm(ctx, k, args, args_size, cpu_n, cpu_align, grid, block, 0);
}

gx_status gx__launch_1d_shm(gx_ctx *ctx, const gx__kernel *k, const void *args, size_t args_size, int64_t cpu_n,
                            int64_t cpu_align, int64_t grid, int64_t block, unsigned shmem)
{
    gx__launch l;
    memset(&l, 0, sizeof l);
    l.args = args;
    l.args_size = args_size;
    l.n = cpu_n;
    l.cpu_align = cpu_align;
    l.grid[0] = (unsigned)(grid > 0 ? grid : 1);
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = (unsigned)block;
    l.block[1] = l.block[2] = 1;
    l.shmem = shmem;
    l.pdl = k->pdl;
    l.cpu_work = k->cpu_work;
    return ctx->be.iface->launch.run(&ctx->be, k->fn, &l);
}

static kc_entry *kc_lookup(const gx__map *t, uint64_t qh, int prelude, const char *body, const char *entry)
{
    void **v = gx__map_get(t, qh);
    for (kc_entry *e = v ? *v : NULL; e; e = e->same)
        if (e->prelude == prelude && strcmp(e->entry, entry) == 0 && strcmp(e->body, body) == 0)
            return e;
    return NULL;
}

/* Read from the text, so a generator opts in by writing the macro first and nothing
 * else has to agree. */
bool gx__kernel_src_pdl(const char *body, const char *entry)
{
    size_t n = strlen(entry);
    for (const char *p = strstr(body, entry); p; p = strstr(p + n, entry)) {
        if (p > body && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        const char *q = p + n;
        while (*q == ' ')
            q++;
        if (*q != '(')
            continue;
        q = strchr(q, ')');
        if (!q)
            return false;
        q++;
        while (isspace((unsigned char)*q))
            q++;
        if (*q != '{')
            continue; /* a declaration or a call */
        q++;
        while (isspace((unsigned char)*q))
            q++;
        return strncmp(q, "GX_PDL_ENTER();", 15) == 0;
    }
    return false;
}

/* A new entry: the module loaded from blob, its entry point, the keys' copies. */
static gx_status kc_entry_make(gx_ctx *ctx, const void *blob, size_t len, const char *body, const char *entry,
                               kc_entry **out)
{
    kc_entry *e = calloc(1, sizeof *e);
    if (!e)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for the kernel cache");
    double t0 = gx__now_ms(); /* gx_ctx_timing's module_ms */
    gx_status s = ctx->be.iface->code.load(&ctx->be, blob, len, &e->mod);
    if (s == GX_OK)
        s = ctx->be.iface->code.get_func(&ctx->be, e->mod, entry, &e->k.fn);
    ctx->t_module_ms += gx__now_ms() - t0;
    ctx->n_modules += s == GX_OK;
    e->k.pdl = s == GX_OK && gx__kernel_src_pdl(body, entry);
    if (s == GX_OK && (!(e->body = strdup(body)) || !(e->entry = strdup(entry))))
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for the kernel cache");
    if (s != GX_OK) {
        kc_entry_free(ctx, e);
        return s;
    }
    *out = e;
    return GX_OK;
}

gx_status gx__kernel_get(gx_ctx *ctx, const char *source, const char *label, const char *entry, gx__kernel *out)
{
    gx__map *t = NULL;
    GX__CHECK(kc_table(ctx, &t));
    int prelude;
    const char *body = kc_split(ctx, source, &prelude);
    uint64_t qh = kc_quick_hash(body, prelude, entry);
    const kc_entry *hit = kc_lookup(t, qh, prelude, body, entry);
    if (hit) {
        ctx->cstats.mem_hits++;
        *out = hit->k;
        return GX_OK;
    }
    char key[65];
    kc_key(ctx, source, key);
    kc_dump(ctx, key, label, source);
    void *blob = NULL;
    size_t len = 0;
    GX__CHECK(kc_binary(ctx, key, source, label, &blob, &len));
    kc_entry *e = NULL;
    gx_status s = kc_entry_make(ctx, blob, len, body, entry, &e);
    free(blob);
    if (s != GX_OK)
        return s;
    void **v = gx__map_get(t, qh);
    e->prelude = prelude;
    e->same = v ? *v : NULL;
    if (!gx__map_put(t, qh, e)) {
        kc_entry_free(ctx, e);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for the kernel cache");
    }
    kc_occupancy(ctx, &e->k);
    gx__prof_label(ctx, e->k.fn, label); /* the profiler shows "gx_map", not the entry */
    *out = e->k;
    return GX_OK;
}

gx_status gx_cache_stats_get(gx_ctx *ctx, gx_cache_stats *out)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(out, "gx_cache_stats_get: out must not be NULL");
    gx__lock(ctx);
    *out = ctx->cstats;
    gx__unlock(ctx);
    return GX_OK;
}

gx_status gx_set_dump_dir(gx_ctx *ctx, const char *dir)
{
    GX__CHECK(gx__ctx_check(ctx));
    char *copy = NULL;
    if (dir && !(copy = strdup(dir)))
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
    gx__lock(ctx);
    free(ctx->dump_dir);
    ctx->dump_dir = copy;
    gx__unlock(ctx);
    return GX_OK;
}
