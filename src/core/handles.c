/* handles.c -- the table of live handles.
 *
 * Handles are plain pointers, so a released one cannot be recognised by looking at
 * it (its memory may be reused).  The table records every live handle; a call with a
 * pointer not in it gets GX_ERR_INVALID_HANDLE instead of touching freed memory.  A
 * hash set keyed by pointer (gx__map) keeps the check at a few nanoseconds. */
#include "core/gx_internal.h"

static pthread_mutex_t hmu = PTHREAD_MUTEX_INITIALIZER;
static gx__map htab = {NULL, 0, 0, GX__MAP_U64};

void gx__handle_add(const void *h)
{
    pthread_mutex_lock(&hmu);
    /* No memory to grow the table: the handle still works, it just is not tracked. */
    (void)gx__map_put(&htab, (uint64_t)(uintptr_t)h, NULL);
    pthread_mutex_unlock(&hmu);
}

bool gx__handle_remove(const void *h)
{
    pthread_mutex_lock(&hmu);
    bool found = gx__map_remove(&htab, (uint64_t)(uintptr_t)h);
    pthread_mutex_unlock(&hmu);
    return found;
}

bool gx__handle_live(const void *h)
{
    pthread_mutex_lock(&hmu);
    bool live = gx__map_get(&htab, (uint64_t)(uintptr_t)h) != NULL;
    pthread_mutex_unlock(&hmu);
    return live;
}
