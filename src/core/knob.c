/* knob.c -- the experiment knobs (GX_EW_*, GX_RG_*, GX_RNG_*, GX_SC_*, GX_CO_*, GX_LB_*, GX_RA_*), read from the
 * environment once per process: kernel launches consult them on every call, and a
 * getenv scan per launch is work on the hot path for a value that does not change. */
#include "core/gx_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const knob_names[] = {
    "GX_EW_UNROLL", "GX_EW_STREAM", "GX_EW_BLOCK", "GX_EW_GRID",  "GX_RG_UNROLL", "GX_RG_GRID",
    "GX_RNG_WAVES", "GX_SC_BLOCK",  "GX_SC_ITEMS", "GX_CO_BLOCK", "GX_CO_ITEMS",  "GX_LB_WAIT",
    "GX_LB_DELAY",  "GX_SC_MINB",   "GX_CO_MINB",  "GX_RG_FIN",   "GX_RA_FULL4",  "GX_RA_COLFULL4",
    "GX_RA_COLCHUNK", "GX_EW_TABLE", "GX_ET_UNROLL", "GX_ET_BLOCK",
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

const char *gx__knob(const char *name)
{
    pthread_once(&knob_once, knob_read);
    for (size_t i = 0; i < NKNOBS; i++)
        if (strcmp(name, knob_names[i]) == 0)
            return knob_values[i];
    return gx__env(name);
}
