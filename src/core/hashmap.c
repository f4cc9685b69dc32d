/* hashmap.c -- the one hash map behind gx's tables (handles, memo, kernel table,
 * profiler names).
 *
 * Open addressing with linear probing: a lookup is one hash and, at the load kept
 * here (at most half the slots used, removed ones included), one or two probes of
 * a flat array, which is what the hot tables (the handle check on every call, the
 * memo and the kernel table on every operation) need.  Each slot keeps the key's
 * full 64-bit hash, so a string key is compared only when the hashes agree. */
#include "core/gx_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAP_EMPTY 0u    /* slot.hash of a slot never used */
#define MAP_GONE 1u     /* slot.hash of a removed entry (probes go on past it) */
#define MAP_MIN_CAP 16

/* Keys can be whole kernel bodies (kilobytes): eight bytes per step. */
uint64_t gx__hash_str(const char *s)
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

/* Pointers share their low bits (alignment) and high bits (one heap): mix them all
 * into the low bits that pick the slot. */
static uint64_t map_hash_u64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDull;
    return k ^ (k >> 33);
}

/* The two smallest hashes mark empty and removed slots. */
static uint64_t map_tag(uint64_t h) { return h > MAP_GONE ? h : h + 2; }

static uint64_t map_hash(const gx__map *m, uint64_t key)
{
    return map_tag(m->keys == GX__MAP_STR ? gx__hash_str((const char *)(uintptr_t)key) : map_hash_u64(key));
}

static bool map_same(const gx__map *m, const gx__map_slot *s, uint64_t h, uint64_t key)
{
    if (s->hash != h)
        return false;
    if (m->keys == GX__MAP_STR)
        return strcmp((const char *)(uintptr_t)s->key, (const char *)(uintptr_t)key) == 0;
    return s->key == key;
}

/* The slot holding key, or NULL. */
static gx__map_slot *map_find(const gx__map *m, uint64_t key, uint64_t h)
{
    if (!m->count)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        gx__map_slot *s = &m->slot[i];
        if (s->hash == MAP_EMPTY)
            return NULL;
        if (map_same(m, s, h, key))
            return s;
    }
}

/* Rehashes into a table sized for the live entries (removed slots are dropped). */
static bool map_grow(gx__map *m)
{
    size_t cap = m->cap ? m->cap : MAP_MIN_CAP;
    while (2 * (m->count + 1) > cap)
        cap *= 2;
    gx__map_slot *t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < m->cap; i++) {
        const gx__map_slot *s = &m->slot[i];
        if (s->hash <= MAP_GONE)
            continue;
        size_t j = (size_t)s->hash & (cap - 1);
        while (t[j].hash != MAP_EMPTY)
            j = (j + 1) & (cap - 1);
        t[j] = *s;
    }
    free(m->slot);
    m->slot = t;
    m->cap = cap;
    m->used = m->count;
    return true;
}

/* Adds or replaces; `key` is already the map's own (a copied string). */
static bool map_insert(gx__map *m, uint64_t key, uint64_t h, void *val)
{
    if (2 * (m->used + 1) > m->cap && !map_grow(m))
        return false;
    size_t mask = m->cap - 1, i = (size_t)h & mask;
    while (m->slot[i].hash > MAP_GONE)
        i = (i + 1) & mask;
    if (m->slot[i].hash == MAP_EMPTY)
        m->used++;
    m->slot[i] = (gx__map_slot){h, key, val};
    m->count++;
    return true;
}

void **gx__map_get(const gx__map *m, uint64_t key)
{
    gx__map_slot *s = map_find(m, key, map_hash(m, key));
    return s ? &s->val : NULL;
}

void **gx__map_get_str(const gx__map *m, const char *key) { return gx__map_get(m, (uint64_t)(uintptr_t)key); }

bool gx__map_put(gx__map *m, uint64_t key, void *val)
{
    uint64_t h = map_hash(m, key);
    gx__map_slot *s = map_find(m, key, h);
    if (s) {
        s->val = val;
        return true;
    }
    if (m->keys != GX__MAP_STR)
        return map_insert(m, key, h, val);
    char *copy = strdup((const char *)(uintptr_t)key);
    if (copy && map_insert(m, (uint64_t)(uintptr_t)copy, h, val))
        return true;
    free(copy);
    return false;
}

bool gx__map_put_str(gx__map *m, const char *key, void *val) { return gx__map_put(m, (uint64_t)(uintptr_t)key, val); }

bool gx__map_remove(gx__map *m, uint64_t key)
{
    gx__map_slot *s = map_find(m, key, map_hash(m, key));
    if (!s)
        return false;
    if (m->keys == GX__MAP_STR)
        free((char *)(uintptr_t)s->key);
    *s = (gx__map_slot){MAP_GONE, 0, NULL};
    m->count--;
    return true;
}

const gx__map_slot *gx__map_next(const gx__map *m, size_t *pos)
{
    for (; *pos < m->cap; (*pos)++)
        if (m->slot[*pos].hash > MAP_GONE)
            return &m->slot[(*pos)++];
    return NULL;
}

void gx__map_free(gx__map *m)
{
    if (m->keys == GX__MAP_STR)
        for (size_t i = 0; i < m->cap; i++)
            if (m->slot[i].hash > MAP_GONE)
                free((char *)(uintptr_t)m->slot[i].key);
    free(m->slot);
    *m = (gx__map){.keys = m->keys};
}
