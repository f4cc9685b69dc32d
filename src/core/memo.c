/* memo.c -- a per-context table from short keys to small values.
 *
 * Repeated calls of one operation (a map in a loop, a reduction per iteration)
 * should cost a lookup, not a parse, a code generation and a SHA-256 over the
 * whole generated source: operations key their finished products (the emitted
 * expression, the kernel) by a short description of the call.  Every op cache is
 * this one table; each op's keys start with its own tag ("ew1|", "map1|", "rg1|",
 * "ra1|", a pipeline's entry names) so that they cannot meet. */
#include "core/gx_internal.h"

#include <stdlib.h>
#include <string.h>

#define MEMO_MAX 4096 /* entries per context; beyond it, misses just cost time */

typedef struct memo_val {
    size_t len;
    unsigned char bytes[];
} memo_val;

const void *gx__memo_find(gx_ctx *ctx, const char *key, size_t *len)
{
    void **slot = ctx->memo ? gx__map_get_str(ctx->memo, key) : NULL;
    if (!slot)
        return NULL;
    const memo_val *v = *slot;
    if (len)
        *len = v->len;
    return v->bytes;
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

/* Only a cache: when full or out of memory the value is not kept, and a later call
 * just does the work again. */
void gx__memo_put(gx_ctx *ctx, const char *key, const void *val, size_t len)
{
    gx__map *m = ctx->memo;
    if (!m && (m = malloc(sizeof *m)))
        *m = GX__MAP_INIT(GX__MAP_STR);
    if (!(ctx->memo = m) || m->count >= MEMO_MAX)
        return;
    memo_val *v = malloc(sizeof *v + len);
    if (!v)
        return;
    v->len = len;
    memcpy(v->bytes, val, len);
    void **old = gx__map_get_str(m, key);
    if (old) { /* a second put of one key keeps the newer value, as a lookup would see it */
        free(*old);
        *old = v;
    } else if (!gx__map_put_str(m, key, v)) {
        free(v);
    }
}

/* ------------------------------------------------------------ binary keys */

/* Why a second key form: formatting a text key (gx__sb_printf of the op's fields and
 * texts, reallocations, the map's string hash) was a third to a half of a warm small
 * call's host time (perf, CPU backend: gx_map_into 1024 f32 ~31%, gx_reduce_into
 * ~41%).  Copying the same fields into a fixed buffer and hashing it costs a small
 * fraction of that. */
#define MEMO_NFAST 256

typedef struct memo_fast_e {
    uint64_t h;
    size_t klen, vlen;
    unsigned char *kv; /* key bytes, then value bytes */
} memo_fast_e;

struct gx__memo_fast {
    memo_fast_e e[MEMO_NFAST];
};

/* The key's hash, 8 bytes a step in two independent lanes (each a multiply and a
 * rotate), then the tail.  Why: the byte-at-a-time FNV-1a this replaced is one
 * dependent multiply per byte (about 4 cycles a byte), and a reduction's key carries
 * its C texts (element, combine, argument fields: ~600 bytes), so hashing it was the
 * largest single cost of a warm small call -- 17% of a gx_find_into of 1024 f32 (CPU
 * backend, perf; ~0.35 us of 2.0).  This form runs at about 0.3 cycles a byte.  The
 * hash only picks a slot (the key is compared in full), so its quality need only be
 * fair; it is never stored anywhere but this process's memory. */
static uint64_t memo_mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return (h << 29) | (h >> 35);
}

static uint64_t memo_hash(const unsigned char *p, size_t n)
{
    uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull ^ n;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint64_t w0, w1;
        memcpy(&w0, p + i, 8);
        memcpy(&w1, p + i + 8, 8);
        a = memo_mix(a, w0);
        b = memo_mix(b, w1);
    }
    uint64_t t = 0;
    for (int s = 0; i < n; i++, s += 8) {
        if (s == 64) {
            a = memo_mix(a, t);
            t = 0;
            s = 0;
        }
        t |= (uint64_t)p[i] << s;
    }
    a = memo_mix(a, t);
    uint64_t h = a ^ (b * 0xff51afd7ed558ccdull);
    return h ^ (h >> 31);
}

bool gx__memo_bget(gx_ctx *ctx, const gx__bkey *key, void *val, size_t len)
{
    if (key->over || !ctx->memo_fast)
        return false;
    uint64_t h = memo_hash(key->b, key->len);
    const memo_fast_e *e = &ctx->memo_fast->e[h % MEMO_NFAST];
    if (!e->kv || e->h != h || e->klen != key->len || e->vlen != len || memcmp(e->kv, key->b, key->len) != 0)
        return false;
    memcpy(val, e->kv + e->klen, len);
    return true;
}

void gx__memo_bput(gx_ctx *ctx, const gx__bkey *key, const void *val, size_t len)
{
    if (key->over)
        return;
    if (!ctx->memo_fast && !(ctx->memo_fast = calloc(1, sizeof *ctx->memo_fast)))
        return;
    uint64_t h = memo_hash(key->b, key->len);
    memo_fast_e *e = &ctx->memo_fast->e[h % MEMO_NFAST];
    unsigned char *kv = malloc(key->len + len);
    if (!kv)
        return;
    memcpy(kv, key->b, key->len);
    memcpy(kv + key->len, val, len);
    free(e->kv);
    *e = (memo_fast_e){h, key->len, len, kv};
}

void gx__memo_free(gx_ctx *ctx)
{
    if (ctx->memo_fast) {
        for (int i = 0; i < MEMO_NFAST; i++)
            free(ctx->memo_fast->e[i].kv);
        free(ctx->memo_fast);
        ctx->memo_fast = NULL;
    }
    gx__map *m = ctx->memo;
    if (!m)
        return;
    size_t pos = 0;
    for (const gx__map_slot *s; (s = gx__map_next(m, &pos));)
        free(s->val);
    gx__map_free(m);
    free(m);
    ctx->memo = NULL;
}
