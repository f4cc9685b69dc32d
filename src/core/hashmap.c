/* hashmap.c -- the one hash map behind gx's tables (handles, memo, kernel table,
 * profiler names); see gx_internal.h.
 *
 * Open addressing with linear probing: a lookup is one hash and, at the load kept
 * here (at most half full), one or two probes of a flat array, which is what the
 * hot tables (the handle check on every call, the memo and the kernel table on
 * every operation) need.  Each slot keeps the key's full 64-bit hash, so a string
 * key is compared only when the hashes agree.  The U64 lookup is inline in
 * gx_internal.h; the rest is here. */
#include "core/gx_internal.h"

#include <stdlib.h>
#include <string.h>

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

static bool map_holds(const gx__map *m, const gx__map_slot *s, uint64_t key, uint64_t h)
{
    if (s->hash != h)
        return false;
    if (m->keys == GX__MAP_U64)
        return s->key == key;
    return strcmp((const char *)(uintptr_t)s->key, (const char *)(uintptr_t)key) == 0;
}

/* The slot holding key, else the empty slot where it would go (there is one: the
 * table is never more than half full).  One probe serves lookups and puts. */
static gx__map_slot *map_probe(const gx__map *m, uint64_t key, uint64_t h)
{
    for (size_t i = gx__map_first(h, m->cap);; i = (i + 1) & (m->cap - 1)) {
        gx__map_slot *s = &m->slot[i];
        if (s->hash == 0 || map_holds(m, s, key, h))
            return s;
    }
}

/* The first empty slot of h's probe sequence. */
static size_t map_free_slot(const gx__map_slot *t, size_t cap, uint64_t h)
{
    size_t i = gx__map_first(h, cap);
    while (t[i].hash != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

static bool map_grow(gx__map *m)
{
    size_t cap = m->cap ? 2 * m->cap : MAP_MIN_CAP;
    gx__map_slot *t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slot[i].hash != 0)
            t[map_free_slot(t, cap, m->slot[i].hash)] = m->slot[i];
    free(m->slot);
    m->slot = t;
    m->cap = cap;
    return true;
}

/* Adds key or replaces its value; a new string key is copied. */
static bool map_put(gx__map *m, uint64_t key, uint64_t h, void *val)
{
    if (2 * (m->count + 1) > m->cap) {
        gx__map_slot *s = m->count ? map_probe(m, key, h) : NULL;
        if (s && s->hash) { /* present: replacing needs no room */
            s->val = val;
            return true;
        }
        if (!map_grow(m))
            return false;
    }
    gx__map_slot *s = map_probe(m, key, h);
    if (!s->hash) {
        if (m->keys == GX__MAP_STR && !(key = (uint64_t)(uintptr_t)strdup((const char *)(uintptr_t)key)))
            return false;
        *s = (gx__map_slot){h, key, NULL};
        m->count++;
    }
    s->val = val;
    return true;
}

/* Empties slot i without a tombstone (Knuth's algorithm R): each later entry of the
 * run whose first slot is not cyclically in (hole, its slot] moves back into the
 * hole.  So lookups never probe past removed entries and the add/remove cycle of
 * every array handle never forces a rehash (with tombstones a small table was
 * rebuilt every few cycles, which cost array creation measurable time). */
static void map_erase(gx__map *m, size_t i)
{
    size_t mask = m->cap - 1;
    for (size_t j = (i + 1) & mask; m->slot[j].hash != 0; j = (j + 1) & mask) {
        size_t k = gx__map_first(m->slot[j].hash, m->cap);
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            m->slot[i] = m->slot[j];
            i = j;
        }
    }
    m->slot[i] = (gx__map_slot){0, 0, NULL};
    m->count--;
}

void **gx__map_get_str(const gx__map *m, const char *key)
{
    if (!m->count)
        return NULL;
    gx__map_slot *s = map_probe(m, (uint64_t)(uintptr_t)key, gx__map_tag(gx__hash_str(key)));
    return s->hash ? &s->val : NULL;
}

bool gx__map_put(gx__map *m, uint64_t key, void *val) { return map_put(m, key, gx__map_hash_u64(key), val); }

bool gx__map_put_str(gx__map *m, const char *key, void *val)
{
    return map_put(m, (uint64_t)(uintptr_t)key, gx__map_tag(gx__hash_str(key)), val);
}

bool gx__map_remove(gx__map *m, uint64_t key)
{
    gx__map_slot *s = gx__map_find(m, key);
    if (!s)
        return false;
    map_erase(m, (size_t)(s - m->slot));
    return true;
}

const gx__map_slot *gx__map_next(const gx__map *m, size_t *pos)
{
    for (; *pos < m->cap; (*pos)++)
        if (m->slot[*pos].hash != 0)
            return &m->slot[(*pos)++];
    return NULL;
}

void gx__map_free(gx__map *m)
{
    if (m->keys == GX__MAP_STR)
        for (size_t i = 0; i < m->cap; i++)
            if (m->slot[i].hash != 0)
                free((char *)(uintptr_t)m->slot[i].key);
    free(m->slot);
    *m = (gx__map){.keys = m->keys};
}
