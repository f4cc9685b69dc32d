/* env.c -- reading gx's environment variables.  Every GX_* variable is read through
 * these helpers, so a bad value is treated the same everywhere: one warning per
 * variable and process, naming the variable, the value and what is accepted, and the
 * default is used.  (A bad value never fails a call: the environment is not an
 * argument the caller can correct at the call site.) */
#include "core/gx_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Names already warned about (a handful at most: one slot per variable). */
static pthread_mutex_t env_mu = PTHREAD_MUTEX_INITIALIZER;
static const char *env_warned[64];
static int env_nwarned;

static bool env_first_warning(const char *name)
{
    bool first = true;
    pthread_mutex_lock(&env_mu);
    for (int i = 0; i < env_nwarned; i++)
        if (strcmp(env_warned[i], name) == 0)
            first = false;
    if (first && env_nwarned < (int)(sizeof env_warned / sizeof env_warned[0]))
        env_warned[env_nwarned++] = name; /* names are string literals */
    pthread_mutex_unlock(&env_mu);
    return first;
}

void gx__env_warn(const char *name, const char *value, const char *accepted, const char *fallback)
{
    if (env_first_warning(name))
        fprintf(stderr, "gx: warning: %s=\"%.200s\" is not accepted (%s); %s\n", name, value, accepted, fallback);
}

const char *gx__env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int64_t gx__env_int_of(const char *name, const char *v, int64_t dflt, int64_t lo, int64_t hi, const char *accepted)
{
    if (!v)
        return dflt;
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    while (end && (*end == ' ' || *end == '\t'))
        end++;
    if (errno == 0 && end != v && *end == '\0' && x >= lo && x <= hi)
        return (int64_t)x;
    char acc[96], fb[64];
    if (!accepted) {
        snprintf(acc, sizeof acc, "a whole number from %lld to %lld", (long long)lo, (long long)hi);
        accepted = acc;
    }
    snprintf(fb, sizeof fb, "using the default (%lld)", (long long)dflt);
    gx__env_warn(name, v, accepted, fb);
    return dflt;
}

int64_t gx__env_int(const char *name, int64_t dflt, int64_t lo, int64_t hi, const char *accepted)
{
    return gx__env_int_of(name, gx__env(name), dflt, lo, hi, accepted);
}

size_t gx__env_size(const char *name, size_t dflt, size_t total, const char *accepted, const char *fallback)
{
    const char *v = gx__env(name);
    size_t x;
    if (!v)
        return dflt;
    if (gx__parse_size(v, total, &x) == 0 && x > 0)
        return x;
    gx__env_warn(name, v, accepted, fallback);
    return dflt;
}

int gx__env_choice(const char *name, const char *const *choices, int dflt, const char *accepted)
{
    const char *v = gx__env(name);
    if (!v)
        return dflt;
    for (int i = 0; choices[i]; i++)
        if (strcasecmp(v, choices[i]) == 0)
            return i;
    gx__env_warn(name, v, accepted, "using the default");
    return dflt;
}
