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

void gx__memo_free(gx_ctx *ctx)
{
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
