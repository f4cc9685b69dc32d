/* bench_progress.c -- `gx bench`'s progress: [k/N], the case about to run, the time
 * so far and an estimate of the time left.  It goes to stderr, so stdout keeps the
 * table (or the JSON lines) alone and what parses it never sees it.  On a terminal
 * the status is one line rewritten in place and erased before each row, so the
 * table stays whole; into a file or a pipe (a log) it is one line per step. */
#include "bench_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOSIZE_SLOT (BENCH_PROGRESS_SLOTS - 1)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "42s", "3m05s", "1h02m". */
static void fmt_duration(double s, char *buf, size_t cap)
{
    long t = (long)(s + 0.5);
    if (t < 60)
        snprintf(buf, cap, "%lds", t);
    else if (t < 3600)
        snprintf(buf, cap, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

static int slot_of(int e) { return e >= 0 && e < NOSIZE_SLOT ? e : NOSIZE_SLOT; }

/* For a size no step has reached yet: time grows with n on top of a fixed part
 * (warm-ups, compiling the kernel, first touch of memory) of about 2^22 elements'
 * worth on the CPU backend. */
static double slot_weight(int slot)
{
    return (slot < NOSIZE_SLOT ? (double)((int64_t)1 << slot) : 0) + (double)(1 << 22);
}

/* A terminal that understands "\r ESC[K" (erase the line): rewrite the status there. */
static bool status_in_place(void)
{
    const char *term = getenv("TERM");
    return isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0);
}

void bench_progress_init(bench_progress *p, bool on)
{
    *p = (bench_progress){.on = on, .tty = on && status_in_place(), .cur = -1, .t0 = now_s()};
}

void bench_progress_plan(bench_progress *p, int e)
{
    p->total++;
    p->nleft[slot_of(e)]++;
}

/* Each step left costs what the steps of its size cost so far (other cases, the same
 * n); a size not reached yet is scaled from the others by slot_weight. */
static double seconds_left(const bench_progress *p)
{
    double t = 0, w = 0;
    for (int i = 0; i < BENCH_PROGRESS_SLOTS; i++)
        t += p->spent[i], w += p->ndone[i] * slot_weight(i);
    double left = 0;
    for (int i = 0; i < BENCH_PROGRESS_SLOTS; i++) {
        if (p->nleft[i] == 0)
            continue;
        double each = p->ndone[i] ? p->spent[i] / p->ndone[i] : w > 0 ? t * slot_weight(i) / w : 0;
        left += p->nleft[i] * each;
    }
    return left;
}

static void end_step(bench_progress *p)
{
    if (p->cur < 0)
        return;
    p->spent[p->cur] += now_s() - p->tcur;
    p->ndone[p->cur]++;
    p->nleft[p->cur]--;
    p->done++;
    p->cur = -1;
}

static void show(bench_progress *p, const char *what, int e)
{
    char size[16] = "", el[48], left[64] = "";
    if (e >= 0)
        snprintf(size, sizeof size, " 2^%d", e);
    fmt_duration(now_s() - p->t0, el, sizeof el);
    if (p->done > 0) {
        char d[48];
        fmt_duration(seconds_left(p), d, sizeof d);
        snprintf(left, sizeof left, ", ~%s left", d);
    }
    bench_progress_clear(p);
    fprintf(stderr, "[%d/%d] %s%s: %s elapsed%s%s", p->done + 1, p->total, what, size, el, left, p->tty ? "" : "\n");
    p->shown = true;
    fflush(stderr);
}

void bench_progress_step(bench_progress *p, const char *what, int e)
{
    end_step(p);
    p->cur = slot_of(e);
    p->tcur = now_s();
    if (p->on)
        show(p, what, e);
}

void bench_progress_clear(bench_progress *p)
{
    if (p->tty && p->shown)
        fputs("\r\033[K", stderr);
    p->shown = false;
}

void bench_progress_finish(bench_progress *p)
{
    end_step(p);
    bench_progress_clear(p);
    if (!p->on && p->failed == 0)
        return;
    char el[48];
    fmt_duration(now_s() - p->t0, el, sizeof el);
    fprintf(stderr, "gx bench: %d cases in %s", p->done, el);
    if (p->failed)
        fprintf(stderr, ", %d failed (messages above)", p->failed);
    fputs("\n", stderr);
}
