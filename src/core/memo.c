/* memo.c -- a per-context table from short keys to small values.
 *
 * Repeated calls of one operation (a map in a loop, a reduction per iteration)
 * should cost a lookup, not a parse, a code generation and a SHA-256 over the
 * whole generated source: operations key their finished products (the emitted
 * expression, the kernel) by a short description of the call. */
#include "core/gx_internal.h"

#include <stdlib.h>
#include <string.h>

#define MEMO_BUCKETS 256
#define MEMO_MAX 4096   /* entries per context; beyond it, misses just cost time */

typedef struct memo_entry {
    struct memo_entry *next;
    uint64_t hash;
    char *key;
    size_t len;
    unsigned char val[];
} memo_entry;

typedef struct gx__memo {
    memo_entry *b[MEMO_BUCKETS];
    int count;
} gx__memo;

/* Keys can be whole kernel bodies (kilobytes): hash eight bytes per step. */
static uint64_t memo_hash(const char *s)
{
    size_t n = strlen(s), i = 0;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

const void *gx__memo_find(gx_ctx *ctx, const char *key, size_t *len)
{
    gx__memo *m = ctx->memo;
    if (!m)
        return NULL;
    uint64_t h = memo_hash(key);
    for (memo_entry *e = m->b[h % MEMO_BUCKETS]; e; e = e->next)
        if (e->hash == h && strcmp(e->key, key) == 0) {
            if (len)
                *len = e->len;
            return e->val;
        }
    return NULL;
}

bool gx__memo_get(gx_ctx *ctx, const char *key, void *val, size_t len)
{
    size_t have = 0;
    const void *v = gx__memo_find(ctx, key, &have);
    if (!v || have != len)
        return false;
    memcpy(val, v, len);
    return true;
}

void gx__memo_put(gx_ctx *ctx, const char *key, const void *val, size_t len)
{
    if (!ctx->memo && !(ctx->memo = calloc(1, sizeof(gx__memo))))
        return;
    gx__memo *m = ctx->memo;
    if (m->count >= MEMO_MAX)
        return;
    memo_entry *e = malloc(sizeof *e + len);
    char *k = e ? strdup(key) : NULL;
    if (!k) {
        free(e);
        return;
    }
    e->hash = memo_hash(key);
    e->key = k;
    e->len = len;
    memcpy(e->val, val, len);
    e->next = m->b[e->hash % MEMO_BUCKETS];
    m->b[e->hash % MEMO_BUCKETS] = e;
    m->count++;
}

void gx__memo_free(gx_ctx *ctx)
{
    gx__memo *m = ctx->memo;
    if (!m)
        return;
    for (int i = 0; i < MEMO_BUCKETS; i++)
        for (memo_entry *e = m->b[i], *nx; e; e = nx) {
            nx = e->next;
            free(e->key);
            free(e);
        }
    free(m);
    ctx->memo = NULL;
}
