/* common.h -- what every example shares: timing, PASS/FAIL lines, random data,
 * and the main() that runs one example on its own.
 *
 * Each examples/NAME.c defines `int example_NAME(gx_ctx *ctx, int quick)` (the
 * tour calls it; quick = smaller sizes) and, unless GX_TOUR is defined, a main()
 * through ex_main().  The functions here are static so that all examples can be
 * linked into one program (the gx tool) side by side. */
#ifndef GX_EXAMPLES_COMMON_H
#define GX_EXAMPLES_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime, getpid under -std=c11 */
#endif
#include "gx.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What an example function returns. */
enum { EX_PASS = 0, EX_FAIL = 1, EX_SKIP = 2 };

#define EX_UNUSED __attribute__((unused))

/* Prints "what: STATUS: message" (gx's message says what to do) and returns EX_FAIL. */
static EX_UNUSED int ex_fail(const char *what, gx_status s)
{
    fprintf(stderr, "  %s: %s: %s\n", what, gx_status_string(s), gx_last_error());
    return EX_FAIL;
}

/* In a function with `int rc` and a cleanup label `out`: stop at the first error. */
#define EX_TRY(what, expr)               \
    do {                                 \
        gx_status ex_s_ = (expr);        \
        if (ex_s_ != GX_OK) {            \
            rc = ex_fail((what), ex_s_); \
            goto out;                    \
        }                                \
    } while (0)

static EX_UNUSED uint64_t ex_last_seed; /* the data of this run, printed with a FAIL */

/* One result line, "  [PASS] name   figures"; returns EX_PASS or EX_FAIL. */
static EX_UNUSED __attribute__((format(printf, 3, 4))) int ex_verdict(int ok, const char *name, const char *fmt, ...)
{
    char fig[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fig, sizeof fig, fmt, ap);
    va_end(ap);
    printf("  [%s] %-34s %s\n", ok ? "PASS" : "FAIL", name, fig);
    if (!ok && ex_last_seed)
        printf("         (to repeat this run's data: GX_EXAMPLE_SEED=0x%llx)\n", (unsigned long long)ex_last_seed);
    return ok ? EX_PASS : EX_FAIL;
}

/* Prints why an example does not run here and returns EX_SKIP. */
static EX_UNUSED int ex_skip(const char *why)
{
    printf("  [SKIP] %s\n", why);
    return EX_SKIP;
}

static EX_UNUSED double ex_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static EX_UNUSED int ex_on_gpu(gx_ctx *ctx)
{
    gx_backend_kind k = GX_BACKEND_CPU;
    return gx_ctx_backend(ctx, &k) == GX_OK && k == GX_BACKEND_CUDA;
}

/* Device time of what was issued between two events, on either backend (CUDA events
 * on the GPU, the host clock on the CPU). */
typedef struct ex_timer {
    gx_event *start, *stop;
} ex_timer;

static EX_UNUSED gx_status ex_timer_make(gx_ctx *ctx, ex_timer *t)
{
    t->start = t->stop = NULL;
    gx_status s = gx_event_create(ctx, &t->start);
    return s != GX_OK ? s : gx_event_create(ctx, &t->stop);
}
static EX_UNUSED void ex_timer_free(ex_timer *t)
{
    gx_event_destroy(t->start);
    gx_event_destroy(t->stop);
}

/* Random data: xorshift64*.  Every run draws fresh numbers (seeded from the clock);
 * GX_EXAMPLE_SEED=<n> repeats a run, and the seed is printed on failure paths. */
static EX_UNUSED uint64_t ex_seed(void)
{
    const char *env = getenv("GX_EXAMPLE_SEED");
    if (env && *env)
        ex_last_seed = strtoull(env, NULL, 0) | 1;
    else
        ex_last_seed = ((uint64_t)(ex_now() * 1e9) ^ ((uint64_t)getpid() << 32)) | 1;
    return ex_last_seed;
}
static EX_UNUSED uint64_t ex_next(uint64_t *st)
{
    *st ^= *st >> 12;
    *st ^= *st << 25;
    *st ^= *st >> 27;
    return *st * 0x2545F4914F6CDD1Dull;
}
/* Uniform in [lo, hi). */
static EX_UNUSED float ex_uniform(uint64_t *st, float lo, float hi)
{
    return lo + (hi - lo) * (float)(ex_next(st) >> 40) * 0x1p-24f;
}
static EX_UNUSED void ex_fill_uniform(float *x, int64_t n, float lo, float hi, uint64_t *st)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = ex_uniform(st, lo, hi);
}

static EX_UNUSED size_t ex_fbytes(int64_t n) { return (size_t)n * sizeof(float); }

/* Command line of a stand-alone example: --quick, and --png PATH where accepted. */
static EX_UNUSED int ex_parse_args(int argc, char **argv, int *quick, const char **png)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            *quick = 1;
        } else if (png && strcmp(argv[i], "--png") == 0 && i + 1 < argc) {
            *png = argv[++i];
        } else {
            fprintf(stderr, "%s: unknown argument '%s' (accepted: --quick%s)\n", argv[0], argv[i],
                    png ? ", --png PATH" : "");
            return 0;
        }
    }
    return 1;
}

/* Opens a context (GX_BACKEND picks it: auto, cpu or cuda), prints the device. */
static EX_UNUSED gx_ctx *ex_open(const char *name)
{
    gx_ctx *ctx = NULL;
    gx_status s = gx_ctx_create(&ctx, GX_BACKEND_AUTO);
    if (s != GX_OK) {
        ex_fail("creating a context", s);
        return NULL;
    }
    gx_device_info d;
    gx_backend_kind k = GX_BACKEND_CPU;
    if (gx_device_info_get(ctx, &d) == GX_OK && gx_ctx_backend(ctx, &k) == GX_OK)
        printf("== %s on %s: %s\n", name, gx_backend_name(k), d.name);
    return ctx;
}

/* The last line and the exit status of a stand-alone example (a skip is not a failure). */
static EX_UNUSED int ex_finish(const char *name, gx_ctx *ctx, int rc)
{
    gx_status s = gx_ctx_destroy(ctx);
    if (s != GX_OK)
        rc = ex_fail("destroying the context", s);
    printf("%s: %s\n", name, rc == EX_PASS ? "PASS" : rc == EX_SKIP ? "SKIP" : "FAIL");
    return rc == EX_FAIL ? 1 : 0;
}

/* main() of an example whose function takes (ctx, quick). */
static EX_UNUSED int ex_main(int argc, char **argv, const char *name, int (*fn)(gx_ctx *, int))
{
    int quick = 0;
    if (!ex_parse_args(argc, argv, &quick, NULL))
        return 2;
    gx_ctx *ctx = ex_open(name);
    if (!ctx)
        return 1;
    return ex_finish(name, ctx, fn(ctx, quick));
}

#endif
