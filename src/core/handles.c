/* handles.c -- the table of live handles.
 *
 * Handles are plain pointers, so a released one cannot be recognised by looking at
 * it (its memory may be reused).  The table records every live handle; a call with a
 * pointer not in it gets GX_ERR_INVALID_HANDLE instead of touching freed memory.  An
 * open-addressing set keyed by pointer keeps the check at a few nanoseconds. */
#include "core/gx_internal.h"

#include <stdlib.h>

static pthread_mutex_t hmu = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *htab;    /* 0 = empty, 1 = tombstone */
static size_t hcap, hcount, hused;

static size_t hslot(uintptr_t p) { return (size_t)((p >> 4) * 0x9E3779B97F4A7C15ull); }

static bool hgrow(void)
{
    size_t ncap = hcap ? hcap * 2 : 1024;
    while (hcount * 2 >= ncap)
        ncap *= 2;
    uintptr_t *nt = calloc(ncap, sizeof *nt);
    if (!nt)
        return false;
    for (size_t i = 0; i < hcap; i++)
        if (htab[i] > 1) {
            size_t j = hslot(htab[i]) & (ncap - 1);
            while (nt[j])
                j = (j + 1) & (ncap - 1);
            nt[j] = htab[i];
        }
    free(htab);
    htab = nt;
    hcap = ncap;
    hused = hcount;
    return true;
}

void gx__handle_add(const void *h)
{
    pthread_mutex_lock(&hmu);
    if ((hused + 1) * 2 >= hcap && !hgrow()) {
        /* Table full and no memory: the handle still works, it just is not tracked. */
        pthread_mutex_unlock(&hmu);
        return;
    }
    uintptr_t p = (uintptr_t)h;
    size_t j = hslot(p) & (hcap - 1);
    while (htab[j] > 1)
        j = (j + 1) & (hcap - 1);
    if (htab[j] == 0)
        hused++;
    htab[j] = p;
    hcount++;
    pthread_mutex_unlock(&hmu);
}

static size_t hfind(uintptr_t p)
{
    if (!hcap)
        return SIZE_MAX;
    size_t j = hslot(p) & (hcap - 1);
    while (htab[j]) {
        if (htab[j] == p)
            return j;
        j = (j + 1) & (hcap - 1);
    }
    return SIZE_MAX;
}

bool gx__handle_remove(const void *h)
{
    pthread_mutex_lock(&hmu);
    size_t j = hfind((uintptr_t)h);
    if (j != SIZE_MAX) {
        htab[j] = 1;
        hcount--;
    }
    pthread_mutex_unlock(&hmu);
    return j != SIZE_MAX;
}

bool gx__handle_live(const void *h)
{
    pthread_mutex_lock(&hmu);
    bool live = hfind((uintptr_t)h) != SIZE_MAX;
    pthread_mutex_unlock(&hmu);
    return live;
}
