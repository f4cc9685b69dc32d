/* profile.c -- the profiler (GX_PROFILE, gx_profile_*).
 *
 * While profiling, the context's backend interface is replaced by a copy whose
 * launch/copy/alloc entries wrap the real ones: every gx operation passes through
 * them, whichever module issued it.  On a GPU each wrapped call is bracketed by two
 * events from a pool, recorded on the stream the work goes to; times are read
 * lazily (at report time, or when too many are outstanding) so profiling adds no
 * synchronisation.  Without backend events (CPU) the host clock brackets the call,
 * which is exact there because CPU work is complete when the call returns. */
#include "core/stream_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ state */

enum { PK_KERNEL, PK_COPY, PK_ALLOC };

typedef struct prof_rec {
    int name; /* index into kx->names */
    int kind;
    void *ev0, *ev1; /* NULL once resolved (or on CPU) */
    double ms;
    unsigned grid[3], block[3], shmem;
    int regs;
    size_t sshared;
} prof_rec;

typedef struct prof_stat {
    uint64_t calls;
    double total, sumsq, min, max;
    int kind;
} prof_stat;

struct gx__prof {
    const gx__backend_iface *real;
    gx__backend_iface wrap;
    bool on, trace, from_env, reported;
    double t_start, t_stop; /* t_stop: when recording stopped (0 while it runs) */
    prof_rec *recs; /* unresolved records (+ resolved ones kept for the trace) */
    size_t nrecs, caprecs, first_open;
    void **pool; /* idle backend events */
    size_t npool, cappool;
    prof_stat *stats; /* per name index */
    int capstats;
    uint64_t dropped; /* trace rows not kept (cap) */
};

#define PROF_MAX_OPEN 4096    /* unresolved event pairs before resolving early */
#define PROF_MAX_TRACE 200000 /* trace rows kept */

static gx__prof *P(gx__backend *be) { return be->ctx->kx->prof; }

/* ------------------------------------------------------------ events */

static void *ev_get(gx__prof *p, gx__backend *be)
{
    if (p->npool)
        return p->pool[--p->npool];
    void *ev = NULL;
    return p->real->stream.event_create(&be->ctx->be, &ev) == GX_OK ? ev : NULL;
}

static void ev_put(gx__prof *p, gx__backend *be, void *ev)
{
    if (!ev)
        return;
    if (p->npool == p->cappool) {
        size_t cap = p->cappool ? 2 * p->cappool : 64;
        void **np = realloc(p->pool, cap * sizeof *np);
        if (!np) {
            p->real->stream.event_destroy(be, ev);
            return;
        }
        p->pool = np;
        p->cappool = cap;
    }
    p->pool[p->npool++] = ev;
}

static prof_stat *stat_for(gx__prof *p, int name)
{
    if (name >= p->capstats) {
        int cap = name + 32;
        prof_stat *ns = realloc(p->stats, (size_t)cap * sizeof *ns);
        if (!ns)
            return NULL;
        memset(ns + p->capstats, 0, (size_t)(cap - p->capstats) * sizeof *ns);
        p->stats = ns;
        p->capstats = cap;
    }
    return &p->stats[name];
}

static void stat_add(gx__prof *p, const prof_rec *r)
{
    prof_stat *s = stat_for(p, r->name);
    if (!s)
        return;
    if (s->calls == 0 || r->ms < s->min)
        s->min = r->ms;
    if (s->calls == 0 || r->ms > s->max)
        s->max = r->ms;
    s->calls++;
    s->total += r->ms;
    s->sumsq += r->ms * r->ms;
    s->kind = r->kind;
}

/* Reads the times of every open record (waits for the last one's work). */
static void prof_resolve(gx__prof *p, gx__backend *be)
{
    for (size_t i = p->first_open; i < p->nrecs; i++) {
        prof_rec *r = &p->recs[i];
        if (r->ev0) {
            float ms = 0;
            gx_status s = p->real->stream.event_elapsed(be, r->ev0, r->ev1, &ms);
            r->ms = s == GX_OK ? ms : 0;
            ev_put(p, be, r->ev0);
            ev_put(p, be, r->ev1);
            r->ev0 = r->ev1 = NULL;
        }
        stat_add(p, r);
    }
    if (p->trace && p->nrecs < PROF_MAX_TRACE) {
        p->first_open = p->nrecs;
    } else {
        p->dropped += p->trace ? p->nrecs : 0;
        p->nrecs = p->first_open = 0;
    }
}

/* ------------------------------------------------------------ records */

static prof_rec *rec_begin(gx__backend *be, int name, int kind, void *st, bool use_st)
{
    gx__prof *p = P(be);
    if (!p->on || name < 0)
        return NULL;
    if (p->nrecs - p->first_open >= PROF_MAX_OPEN)
        prof_resolve(p, be);
    if (p->nrecs == p->caprecs) {
        size_t cap = p->caprecs ? 2 * p->caprecs : 256;
        prof_rec *nr = realloc(p->recs, cap * sizeof *nr);
        if (!nr)
            return NULL;
        p->recs = nr;
        p->caprecs = cap;
    }
    prof_rec *r = &p->recs[p->nrecs];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->kind = kind;
    if (gx__iface_supports(p->real, GX__CAP_EVENTS) && (r->ev0 = ev_get(p, be)) && (r->ev1 = ev_get(p, be))) {
        gx_status s =
            use_st ? p->real->stream.event_record_on(be, r->ev0, st) : p->real->stream.event_record(be, r->ev0);
        if (s == GX_OK) {
            p->nrecs++;
            return r;
        }
    }
    ev_put(p, be, r->ev0);
    ev_put(p, be, r->ev1);
    r->ev0 = r->ev1 = NULL;
    r->ms = -gx__now_ms(); /* host clock: end adds the finish time */
    p->nrecs++;
    return r;
}

static void rec_end(gx__backend *be, prof_rec *r, gx_status s, void *st, bool use_st)
{
    if (!r)
        return;
    gx__prof *p = P(be);
    bool ok = s == GX_OK;
    if (ok && r->ev1)
        ok = (use_st ? p->real->stream.event_record_on(be, r->ev1, st) : p->real->stream.event_record(be, r->ev1)) ==
             GX_OK;
    else if (ok)
        r->ms += gx__now_ms();
    if (!ok) { /* the operation failed: it is not part of the profile */
        ev_put(p, be, r->ev0);
        ev_put(p, be, r->ev1);
        p->nrecs--;
    }
}

static int kernel_name(gx__backend *be, gx__func f)
{
    struct gx__kx *kx = be->ctx->kx;
    int n = gx__kx_label_of(kx, f);
    if (n >= 0)
        return n;
    char tmp[48];
    snprintf(tmp, sizeof tmp, "kernel@%p", f);
    return gx__kx_name(kx, tmp);
}

static void rec_shape(gx__backend *be, prof_rec *r, gx__func f, const gx__launch *l)
{
    if (!r)
        return;
    memcpy(r->grid, l->grid, sizeof r->grid);
    memcpy(r->block, l->block, sizeof r->block);
    r->shmem = l->shmem;
    gx_kernel_attrs a;
    memset(&a, 0, sizeof a);
    const gx__backend_iface *io = P(be)->real;
    if (P(be)->trace && gx__iface_supports(io, GX__CAP_USER_KERNELS) && io->launch.func_attrs(be, f, &a) == GX_OK) {
        r->regs = a.registers;
        r->sshared = a.static_shared;
    }
}

/* ------------------------------------------------------------ wrapped entries */

static gx_status w_launch(gx__backend *be, gx__func f, const gx__launch *l)
{
    prof_rec *r = rec_begin(be, kernel_name(be, f), PK_KERNEL, NULL, false);
    rec_shape(be, r, f, l);
    gx_status s = P(be)->real->launch.run(be, f, l);
    rec_end(be, r, s, NULL, false);
    return s;
}

static gx_status w_launch_user(gx__backend *be, gx__func f, const gx__launch *l, void **params, void *st, int coop)
{
    prof_rec *r = rec_begin(be, kernel_name(be, f), PK_KERNEL, st, st != NULL);
    rec_shape(be, r, f, l);
    gx_status s = P(be)->real->launch.user(be, f, l, params, st, coop);
    rec_end(be, r, s, st, st != NULL);
    return s;
}

#define W_COPY(fname, field, label, DST, SRC)                                               \
    static gx_status fname(gx__backend *be, DST dst, SRC src, size_t n)                     \
    {                                                                                       \
        prof_rec *r = rec_begin(be, gx__kx_name(be->ctx->kx, label), PK_COPY, NULL, false); \
        gx_status s = P(be)->real->mem.field(be, dst, src, n);                              \
        rec_end(be, r, s, NULL, false);                                                     \
        return s;                                                                           \
    }
W_COPY(w_h2d, h2d, "[copy HtoD]", void *, const void *)
W_COPY(w_d2h, d2h, "[copy DtoH]", void *, const void *)
W_COPY(w_d2d, d2d, "[copy DtoD]", void *, const void *)
W_COPY(w_h2d_async, h2d_async, "[copy HtoD async]", void *, const void *)
W_COPY(w_d2h_async, d2h_async, "[copy DtoH async]", void *, const void *)

/* Allocation cost is on the host (the pool call); time it with the host clock. */
static gx_status w_alloc(gx__backend *be, size_t bytes, void **ptr)
{
    gx__prof *p = P(be);
    double t0 = gx__now_ms();
    gx_status s = p->real->mem.alloc(be, bytes, ptr);
    if (s == GX_OK && p->on) {
        prof_rec r = {.name = gx__kx_name(be->ctx->kx, "[alloc]"), .kind = PK_ALLOC, .ms = gx__now_ms() - t0};
        if (r.name >= 0)
            stat_add(p, &r);
    }
    return s;
}

static void w_free(gx__backend *be, void *ptr, size_t bytes)
{
    gx__prof *p = P(be);
    double t0 = gx__now_ms();
    p->real->mem.free(be, ptr, bytes);
    if (p->on && ptr) {
        prof_rec r = {.name = gx__kx_name(be->ctx->kx, "[free]"), .kind = PK_ALLOC, .ms = gx__now_ms() - t0};
        if (r.name >= 0)
            stat_add(p, &r);
    }
}

static void wrap_init(gx__prof *p)
{
    p->wrap = *p->real;
    p->wrap.launch.run = w_launch;
    p->wrap.mem.h2d = w_h2d;
    p->wrap.mem.d2h = w_d2h;
    p->wrap.mem.d2d = w_d2d;
    p->wrap.mem.alloc = w_alloc;
    p->wrap.mem.free = w_free;
    if (gx__iface_supports(p->real, GX__CAP_USER_KERNELS))
        p->wrap.launch.user = w_launch_user;
    if (gx__iface_supports(p->real, GX__CAP_ASYNC_COPY)) {
        p->wrap.mem.h2d_async = w_h2d_async;
        p->wrap.mem.d2h_async = w_d2h_async;
    }
}

/* ------------------------------------------------------------ control */

gx_status gx__prof_start(gx_ctx *ctx, int trace, bool from_env)
{
    struct gx__kx *kx = gx__kx(ctx);
    if (!kx)
        return GX_ERR_OUT_OF_MEMORY;
    if (!kx->prof) {
        gx__prof *p = calloc(1, sizeof *p);
        if (!p)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for the profiler");
        p->real = ctx->be.iface;
        wrap_init(p);
        p->t_start = gx__now_ms();
        kx->prof = p;
        ctx->be.iface = &p->wrap;
    }
    kx->prof->on = true;
    kx->prof->t_stop = 0;
    kx->prof->trace = kx->prof->trace || trace;
    kx->prof->from_env = kx->prof->from_env || from_env;
    kx->prof->reported = false;
    return GX_OK;
}

void gx__prof_free(gx_ctx *ctx)
{
    gx__prof *p = ctx->kx ? ctx->kx->prof : NULL;
    if (!p)
        return;
    for (size_t i = p->first_open; i < p->nrecs; i++) {
        ev_put(p, &ctx->be, p->recs[i].ev0);
        ev_put(p, &ctx->be, p->recs[i].ev1);
    }
    for (size_t i = 0; i < p->npool; i++)
        p->real->stream.event_destroy(&ctx->be, p->pool[i]);
    ctx->be.iface = p->real;
    free(p->pool);
    free(p->recs);
    free(p->stats);
    free(p);
    ctx->kx->prof = NULL;
}

static gx_status prof_ctx(gx_ctx *ctx, gx__prof **out)
{
    GX__CHECK(gx__ctx_check(ctx));
    *out = ctx->kx ? ctx->kx->prof : NULL;
    return GX_OK;
}

gx_status gx_profile_start(gx_ctx *ctx, int trace)
{
    GX__CHECK(gx__ctx_check(ctx));
    gx__lock(ctx);
    gx_status s = gx__prof_start(ctx, trace, false);
    gx__unlock(ctx);
    return s;
}

gx_status gx_profile_stop(gx_ctx *ctx)
{
    gx__prof *p;
    GX__CHECK(prof_ctx(ctx, &p));
    gx__lock(ctx);
    if (ctx->kx && ctx->kx->prof && ctx->kx->prof->on) {
        ctx->kx->prof->on = false;
        ctx->kx->prof->t_stop = gx__now_ms(); /* the report's span ends here, not at the report */
    }
    gx__unlock(ctx);
    return GX_OK;
}

gx_status gx_profile_reset(gx_ctx *ctx)
{
    gx__prof *p;
    GX__CHECK(prof_ctx(ctx, &p));
    gx__lock(ctx);
    p = ctx->kx ? ctx->kx->prof : NULL;
    if (p) {
        prof_resolve(p, &ctx->be);
        p->nrecs = p->first_open = 0;
        p->dropped = 0;
        memset(p->stats, 0, (size_t)p->capstats * sizeof *p->stats);
        p->t_start = gx__now_ms();
        p->t_stop = p->on ? 0 : p->t_start;
    }
    gx__unlock(ctx);
    return GX_OK;
}

/* ------------------------------------------------------------ report */

static void fmt_time(char *out, size_t n, double ms)
{
    double a = fabs(ms);
    if (a >= 1000)
        snprintf(out, n, "%.2f s", ms / 1000);
    else if (a >= 1)
        snprintf(out, n, "%.2f ms", ms);
    else if (a >= 1e-3)
        snprintf(out, n, "%.2f \xc2\xb5s", ms * 1e3);
    else
        snprintf(out, n, "%.0f ns", ms * 1e6);
}

/* Pads s to `width` screen columns (UTF-8 continuation bytes take none). */
static void pad(gx__sbuf *b, const char *s, int width, bool left)
{
    int cols = 0;
    for (const char *p = s; *p; p++)
        cols += ((unsigned char)*p & 0xC0) != 0x80;
    int fill = width > cols ? width - cols : 0;
    gx__sb_printf(b, "%*s%s%*s", left ? 0 : fill, "", s, left ? fill : 0, "");
}

typedef struct prof_row {
    int name;
    const prof_stat *s;
} prof_row;

static int row_cmp(const void *a, const void *b)
{
    double x = ((const prof_row *)a)->s->total, y = ((const prof_row *)b)->s->total;
    return x < y ? 1 : x > y ? -1 : ((const prof_row *)a)->name - ((const prof_row *)b)->name;
}

static void report_kind(gx__sbuf *b, struct gx__kx *kx, gx__prof *p, int kind, const char *title, double all)
{
    prof_row *rows = calloc((size_t)(p->capstats ? p->capstats : 1), sizeof *rows);
    int n = 0;
    for (int i = 0; rows && i < p->capstats && i < kx->nnames; i++)
        if (p->stats[i].calls && p->stats[i].kind == kind)
            rows[n++] = (prof_row){i, &p->stats[i]};
    if (n == 0) {
        free(rows);
        return;
    }
    qsort(rows, (size_t)n, sizeof *rows, row_cmp);
    gx__sb_printf(b, "\n%s:\n %8s  %10s  %7s  %-44s  %s\n", title, "Time (%)", "Total time", "Calls",
                  "Time distribution", "Name");
    for (int i = 0; i < n; i++) {
        const prof_stat *s = rows[i].s;
        double mean = s->total / (double)s->calls;
        double var = s->calls > 1 ? (s->sumsq - s->total * mean) / (double)(s->calls - 1) : 0;
        char tot[24], mu[24], sd[24], mn[24], mx[24], dist[160];
        fmt_time(tot, sizeof tot, s->total);
        fmt_time(mu, sizeof mu, mean);
        fmt_time(sd, sizeof sd, sqrt(var > 0 ? var : 0));
        fmt_time(mn, sizeof mn, s->min);
        fmt_time(mx, sizeof mx, s->max);
        if (s->calls > 1)
            snprintf(dist, sizeof dist, "%s \xc2\xb1 %s (%s \xe2\x80\xa6 %s)", mu, sd, mn, mx);
        else
            snprintf(dist, sizeof dist, "%s", mu);
        char pct[16] = "       -";
        if (all > 0)
            snprintf(pct, sizeof pct, "%7.2f%%", 100.0 * s->total / all);
        gx__sb_printf(b, " %8s  ", pct);
        pad(b, tot, 10, false);
        gx__sb_printf(b, "  %7llu  ", (unsigned long long)s->calls);
        pad(b, dist, 44, true);
        gx__sb_printf(b, "  %s\n", kx->names[rows[i].name]);
    }
    free(rows);
}

static void report_trace(gx__sbuf *b, struct gx__kx *kx, gx__prof *p)
{
    gx__sb_printf(b, "\nTrace (one row per operation):\n %6s  %10s  %-16s  %-14s  %4s  %8s  %s\n", "#", "Time", "Grid",
                  "Block", "Regs", "Shared", "Name");
    for (size_t i = 0; i < p->nrecs; i++) {
        const prof_rec *r = &p->recs[i];
        char t[24], g[40] = "-", bl[40] = "-", sh[24] = "-", rg[12] = "-";
        fmt_time(t, sizeof t, r->ms);
        if (r->kind == PK_KERNEL) {
            snprintf(g, sizeof g, "%ux%ux%u", r->grid[0], r->grid[1], r->grid[2]);
            snprintf(bl, sizeof bl, "%ux%ux%u", r->block[0], r->block[1], r->block[2]);
            snprintf(sh, sizeof sh, "%zu B", r->sshared + r->shmem);
            snprintf(rg, sizeof rg, "%d", r->regs);
        }
        gx__sb_printf(b, " %6zu  ", i + 1);
        pad(b, t, 10, false);
        gx__sb_printf(b, "  %-16s  %-14s  %4s  %8s  %s\n", g, bl, rg, sh, kx->names[r->name]);
    }
    if (p->dropped)
        gx__sb_printf(b, " (%llu earlier rows not kept)\n", (unsigned long long)p->dropped);
}

static gx_status report_build(gx_ctx *ctx, gx__sbuf *b)
{
    gx__prof *p = ctx->kx ? ctx->kx->prof : NULL;
    if (!p) {
        gx__sb_puts(b, "gx profile: the profiler was not started (gx_profile_start or GX_PROFILE=1)\n");
        return GX_OK;
    }
    prof_resolve(p, &ctx->be);
    double all = 0;
    uint64_t ops = 0;
    for (int i = 0; i < p->capstats; i++) {
        all += p->stats[i].kind != PK_ALLOC ? p->stats[i].total : 0;
        ops += p->stats[i].calls;
    }
    char wall[24], busy[24];
    fmt_time(wall, sizeof wall, (p->t_stop > 0 ? p->t_stop : gx__now_ms()) - p->t_start);
    fmt_time(busy, sizeof busy, all);
    gx__sb_printf(b, "gx profile (%s backend, %s timing): %llu operations over %s, %s of kernels and copies\n",
                  p->real->name, gx__iface_supports(p->real, GX__CAP_EVENTS) ? "device event" : "host clock",
                  (unsigned long long)ops, wall, busy);
    report_kind(b, ctx->kx, p, PK_KERNEL, "Kernels", all);
    report_kind(b, ctx->kx, p, PK_COPY, "Copies", all);
    report_kind(b, ctx->kx, p, PK_ALLOC, "Memory (host-side time of the pool calls)", 0);
    if (p->trace)
        report_trace(b, ctx->kx, p);
    p->reported = true;
    return b->oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for the profile report") : GX_OK;
}

gx_status gx_profile_report_text(gx_ctx *ctx, char *buf, size_t cap, size_t *needed)
{
    GX__CHECK(gx__ctx_check(ctx));
    gx__sbuf b = {0};
    gx__lock(ctx);
    gx_status s = report_build(ctx, &b);
    gx__unlock(ctx);
    if (s == GX_OK)
        s = gx__sb_export(&b, buf, cap, needed);
    gx__sb_free(&b);
    return s;
}

gx_status gx_profile_report(gx_ctx *ctx, FILE *f)
{
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(f, "gx_profile_report: f must not be NULL (use stderr or stdout)");
    gx__sbuf b = {0};
    gx__lock(ctx);
    gx_status s = report_build(ctx, &b);
    gx__unlock(ctx);
    if (s == GX_OK && b.p && fputs(b.p, f) < 0)
        s = gx__err(GX_ERR_IO, "gx_profile_report: writing the report failed");
    gx__sb_free(&b);
    return s;
}

void gx__prof_at_destroy(gx_ctx *ctx)
{
    gx__prof *p = ctx->kx ? ctx->kx->prof : NULL;
    if (!p || !(p->from_env || !p->reported))
        return;
    gx__sbuf b = {0};
    if (report_build(ctx, &b) == GX_OK && b.p)
        fputs(b.p, stderr);
    gx__sb_free(&b);
}
