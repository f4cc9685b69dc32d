/* knob.c -- the experiment knobs (GX_EW_*, GX_RG_*, GX_RNG_*, GX_SC_*, GX_CO_*, GX_LB_*, GX_RA_*,
 * GX_CPU_GRAIN), read from the environment once per process: kernel launches consult them on every call, and a
 * getenv scan per launch is work on the hot path for a value that does not change. */
#include "core/gx_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const knob_names[] = {
    "GX_EW_UNROLL", "GX_EW_STREAM", "GX_EW_BLOCK", "GX_EW_GRID",  "GX_RG_UNROLL", "GX_RG_GRID",
    "GX_RNG_WAVES", "GX_SC_BLOCK",  "GX_SC_ITEMS", "GX_CO_BLOCK", "GX_CO_ITEMS",  "GX_LB_WAIT",
    "GX_LB_DELAY",  "GX_SC_MINB",   "GX_CO_MINB",  "GX_RG_FIN",   "GX_RA_FULL4",  "GX_RA_COLFULL4",
    "GX_RA_COLCHUNK", "GX_EW_TABLE", "GX_ET_UNROLL", "GX_ET_BLOCK", "GX_CPU_GRAIN",
};
#define NKNOBS (sizeof knob_names / sizeof knob_names[0])
static const char *knob_values[NKNOBS];
static pthread_once_t knob_once = PTHREAD_ONCE_INIT;

static void knob_read(void)
{
    for (size_t i = 0; i < NKNOBS; i++)
        knob_values[i] = gx__env(knob_names[i]);
}

/* The knob as a whole decimal number within [lo, hi], else dflt (unset, or bad:
 * then one warning per knob and process, as for every GX_* variable). */
int gx__knob_int(const char *name, int dflt, int lo, int hi)
{
    return (int)gx__env_int_of(name, gx__knob(name), dflt, lo, hi, NULL);
}

/* Which knob a name is, found once per name's address: callers pass string literals,
 * and several ask on every call (ew_bkey, rp_tile_shape, the reduction's unroll), where
 * a strcmp scan of the names was ~3% of a warm small reduction's host time (CPU
 * backend, perf).  One word a slot, (address << 8) | (index + 1), so a reader never
 * sees one name's address with another's index; 0: empty.  User-space addresses fit
 * in 56 bits on the 64-bit hosts gx builds for; where one does not, it is not cached. */
#define KNOB_SLOTS 64
static _Atomic uint64_t knob_slot[KNOB_SLOTS];

static int knob_index(const char *name)
{
    uintptr_t a = (uintptr_t)name;
    _Atomic uint64_t *slot = &knob_slot[(a >> 3) % KNOB_SLOTS];
    uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
    if (v && (v >> 8) == (uint64_t)a)
        return (int)(v & 0xff) - 1;
    int idx = -1;
    for (size_t i = 0; i < NKNOBS && idx < 0; i++)
        if (strcmp(name, knob_names[i]) == 0)
            idx = (int)i;
    if ((uint64_t)a >> 56 == 0)
        atomic_store_explicit(slot, ((uint64_t)a << 8) | (uint64_t)(idx + 1), memory_order_relaxed);
    return idx;
}

const char *gx__knob(const char *name)
{
    pthread_once(&knob_once, knob_read);
    int i = knob_index(name);
    return i >= 0 ? knob_values[i] : gx__env(name);
}
