/* error.c -- status names, the per-thread last error, and small utilities
 * (string builder, size parsing, clocks) that every module uses. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/gx_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One message per thread: errors from one thread never clobber another's. */
static _Thread_local char gx__errbuf[8192];

const char *gx_status_string(gx_status s)
{
    static const char *const names[] = {
        "GX_OK",
        "GX_ERR_INVALID_ARGUMENT",
        "GX_ERR_INVALID_HANDLE",
        "GX_ERR_OUT_OF_MEMORY",
        "GX_ERR_SHAPE",
        "GX_ERR_DTYPE",
        "GX_ERR_SYNTAX",
        "GX_ERR_TYPE",
        "GX_ERR_COMPILE",
        "GX_ERR_NO_DEVICE",
        "GX_ERR_BACKEND",
        "GX_ERR_LAUNCH",
        "GX_ERR_KERNEL_FAULT",
        "GX_ERR_UNSUPPORTED",
        "GX_ERR_IO",
        "GX_ERR_INTERNAL",
        "GX_ERR_INDEX",
        "GX_ERR_TIMEOUT",
    };
    if ((unsigned)s < sizeof names / sizeof names[0])
        return names[s];
    return "GX_ERR_UNKNOWN_STATUS";
}

const char *gx_last_error(void) { return gx__errbuf; }
void gx_clear_error(void) { gx__errbuf[0] = 0; }
const char *gx_version(void) { return GX_VERSION_STRING; }

gx_status gx_report(gx_status s, const char *expr, const char *file, int line)
{
    if (s == GX_OK)
        return s;
    fprintf(stderr, "%s:%d: %s: %s: %s\n", file ? file : "?", line, expr ? expr : "gx call", gx_status_string(s),
            gx__errbuf[0] ? gx__errbuf : "(no message)");
    return s;
}

gx_status gx__err(gx_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(gx__errbuf, sizeof gx__errbuf, fmt, ap);
    va_end(ap);
    return s;
}

gx_status gx__err_prefix(gx_status s, const char *fmt, ...)
{
    char prefix[512], old[sizeof gx__errbuf];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, gx__errbuf, sizeof old);
    size_t n = strlen(prefix);
    if (n > sizeof gx__errbuf / 2)
        n = sizeof gx__errbuf / 2;
    memcpy(gx__errbuf, prefix, n);
    gx__errbuf[n] = ':';
    gx__errbuf[n + 1] = ' ';
    size_t rest = sizeof gx__errbuf - n - 3, m = strlen(old);
    memcpy(gx__errbuf + n + 2, old, m < rest ? m : rest);
    gx__errbuf[n + 2 + (m < rest ? m : rest)] = 0;
    return s;
}

/* ------------------------------------------------------------ string builder */

static void sb_reserve(gx__sbuf *b, size_t extra)
{
    if (b->oom || b->len + extra + 1 <= b->cap)
        return;
    if (b->fixed) { /* a caller's buffer (gx__fmt): too small is truncation */
        b->oom = true;
        return;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return;
    }
    b->p = p;
    b->cap = cap;
}

void gx__sb_puts(gx__sbuf *b, const char *s)
{
    size_t n = strlen(s);
    sb_reserve(b, n);
    if (b->oom)
        return;
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

/* The conversions sb_fast formats itself: no flags, width or precision. */
enum { SB_PCT, SB_S, SB_D, SB_U, SB_C, SB_ZU, SB_LLD, SB_LLU, SB_LD, SB_LU, SB_NSPEC };

/* Which conversion (%s, %zu, ...) starts f (its index, and its length in *len), or -1.  A switch,
 * not a loop over the spellings: this runs for every conversion of every kernel source
 * and memo key, and the loop's strlen/strncmp pairs were a tenth of a small
 * reduction's host time. */
static int sb_spec(const char *f, size_t *len)
{
    int k = -1;
    *len = 1;
    switch (f[0]) {
    case '%': k = SB_PCT; break;
    case 's': k = SB_S; break;
    case 'd': k = SB_D; break;
    case 'u': k = SB_U; break;
    case 'c': k = SB_C; break;
    case 'z': k = f[1] == 'u' ? SB_ZU : -1, *len = 2; break;
    case 'l':
        if (f[1] == 'l')
            k = f[2] == 'd' ? SB_LLD : f[2] == 'u' ? SB_LLU : -1, *len = 3;
        else
            k = f[1] == 'd' ? SB_LD : f[1] == 'u' ? SB_LU : -1, *len = 2;
        break;
    default: break;
    }
    if (k < 0)
        *len = 0;
    return k;
}

static void sb_put_uint(gx__sbuf *b, unsigned long long v, bool neg)
{
    char t[24];
    int i = (int)sizeof t - 1;
    t[i] = 0;
    do
        t[--i] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    if (neg)
        t[--i] = '-';
    gx__sb_puts(b, t + i);
}

static void sb_put_int(gx__sbuf *b, long long v)
{
    sb_put_uint(b, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, v < 0);
}

static void sb_put_n(gx__sbuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    if (b->oom)
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

/* Kernel sources and memo keys are built with %s and %d on every call of an
 * operation; glibc's vsnprintf costs microseconds there, so those formats are
 * expanded here and anything else goes to vsnprintf.  Returns false, having
 * consumed nothing, for a format it leaves to vsnprintf. */
static bool sb_fast(gx__sbuf *b, const char *fmt, va_list ap)
{
    size_t len;
    for (const char *f = strchr(fmt, '%'); f; f = strchr(f + 1 + len, '%'))
        if (sb_spec(f + 1, &len) < 0)
            return false;
    const char *f = fmt;
    for (const char *pc; (pc = strchr(f, '%')) != NULL; f = pc + 1 + len) {
        sb_put_n(b, f, (size_t)(pc - f));
        switch (sb_spec(pc + 1, &len)) {
        case SB_PCT: sb_put_n(b, "%", 1); break;
        case SB_S: {
            const char *s = va_arg(ap, const char *);
            gx__sb_puts(b, s ? s : "(null)");
            break;
        }
        case SB_D: sb_put_int(b, va_arg(ap, int)); break;
        case SB_U: sb_put_uint(b, va_arg(ap, unsigned), false); break;
        case SB_C: {
            char c = (char)va_arg(ap, int);
            sb_put_n(b, &c, 1);
            break;
        }
        case SB_ZU: sb_put_uint(b, va_arg(ap, size_t), false); break;
        case SB_LLD: sb_put_int(b, va_arg(ap, long long)); break;
        case SB_LLU: sb_put_uint(b, va_arg(ap, unsigned long long), false); break;
        case SB_LD: sb_put_int(b, va_arg(ap, long)); break;
        default: sb_put_uint(b, va_arg(ap, unsigned long), false); break; /* SB_LU */
        }
    }
    gx__sb_puts(b, f);
    return true;
}

int gx__fmt(char *buf, size_t n, const char *fmt, ...)
{
    if (n == 0)
        return 0;
    gx__sbuf b = {buf, 0, n, false, true};
    buf[0] = 0;
    va_list ap;
    va_start(ap, fmt);
    bool done = sb_fast(&b, fmt, ap);
    va_end(ap);
    if (done)
        return b.oom ? (int)n : (int)b.len;
    va_start(ap, fmt);
    int k = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return k;
}

void gx__sb_printf(gx__sbuf *b, const char *fmt, ...)
{
    {
        va_list ap;
        va_start(ap, fmt);
        bool done = sb_fast(b, fmt, ap);
        va_end(ap);
        if (done)
            return;
    }
    /* Format once into the free space (kernel generation and memo keys call this a
     * lot on hot paths); only an overflow formats a second time. */
    sb_reserve(b, 256);
    if (b->oom)
        return;
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->p + b->len, room, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= room) {
        sb_reserve(b, (size_t)n);
        if (!b->oom)
            vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap2);
    }
    va_end(ap2);
    if (n < 0 || b->oom) {
        if (b->p && !b->oom)
            b->p[b->len] = 0;
        return;
    }
    b->len += (size_t)n;
}

void gx__sb_free(gx__sbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}

gx_status gx__sb_export(const gx__sbuf *b, char *buf, size_t cap, size_t *needed)
{
    if (b->oom)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory while building a string");
    if (needed)
        *needed = b->len + 1;
    if (buf && cap) {
        size_t n = b->len < cap - 1 ? b->len : cap - 1;
        if (n)
            memcpy(buf, b->p, n);
        buf[n] = 0;
    }
    return GX_OK;
}

/* ------------------------------------------------------------ env helpers */

int gx__parse_size(const char *s, size_t total, size_t *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v >= 0)) /* !(v >= 0) also rejects NaN */
        return -1;
    while (*end == ' ')
        end++;
    double mul = 1;
    if (*end == '%') {
        if (v > 100 || total == 0)
            return -1;
        *out = (size_t)(v / 100.0 * (double)total);
        return end[1] ? -1 : 0;
    }
    static const struct {
        const char *suf;
        double mul;
    } units[] = {
        {"", 1},
        {"B", 1},
        {"K", 1e3},
        {"KB", 1e3},
        {"KiB", 1024.0},
        {"M", 1e6},
        {"MB", 1e6},
        {"MiB", 1048576.0},
        {"G", 1e9},
        {"GB", 1e9},
        {"GiB", 1073741824.0},
        {"T", 1e12},
        {"TB", 1e12},
        {"TiB", 1099511627776.0},
    };
    size_t i;
    for (i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcasecmp(end, units[i].suf) == 0) {
            mul = units[i].mul;
            break;
        }
    if (i == sizeof units / sizeof units[0])
        return -1;
    double bytes = v * mul;
    if (bytes >= 1.8e19)
        return -1;
    *out = (size_t)bytes;
    return 0;
}

int gx__cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

double gx__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

gx_status gx__opts_reserved(const uint64_t *reserved, size_t n, const char *fn)
{
    for (size_t i = 0; i < n; i++)
        if (reserved[i])
            return gx__err(GX_ERR_INVALID_ARGUMENT,
                           "%s: opts->reserved[%zu] is not zero; zero-initialise the options struct "
                           "(e.g. `= {0}` or designated initialisers): reserved words belong to later versions of gx",
                           fn, i);
    return GX_OK;
}

gx_status gx__into_dtype(const char *fn, gx_dtype want, gx_dtype have, int exact)
{
    if (want == have)
        return GX_OK;
    if (exact)
        return gx__err(GX_ERR_DTYPE,
                       "%s: out has dtype %s but the result is %s, and opts->exact_dtype forbids "
                       "converting; pass an out of dtype %s, or leave exact_dtype 0 to convert",
                       fn, gx_dtype_name(have), gx_dtype_name(want), gx_dtype_name(want));
    if (gx__dtype_is_complex(want) && !gx__dtype_is_complex(have))
        return gx__err(GX_ERR_DTYPE,
                       "%s: the result is complex (%s) but out is real (%s); take re(z) or abs(z) "
                       "in the lambda, or pass a complex out",
                       fn, gx_dtype_name(want), gx_dtype_name(have));
    return GX_OK;
}

void gx__check_rec_msg(gx__check_rec *r, char *buf, size_t cap)
{
    r->func[sizeof r->func - 1] = r->file[sizeof r->file - 1] = r->msg[sizeof r->msg - 1] = 0;
    char idx[96] = "";
    if (r->has_index)
        snprintf(idx, sizeof idx, " (index %lld, valid 0..%lld)", r->index, r->bound - 1);
    snprintf(buf, cap,
             "checked kernel failure in %s (%s:%u), block (%u,%u,%u) thread (%u,%u,%u): %s%s; the failing thread "
             "carried on without faulting, so the context is still usable (the first failure of the launch is "
             "reported)",
             r->func, r->file, r->line, r->block[0], r->block[1], r->block[2], r->thread[0], r->thread[1],
             r->thread[2], r->msg, idx);
}
