/* bench_dist.c -- strong and weak scaling of gx/dist.h: sum, scan, filter and sort of
 * f32 arrays (2^30 elements by default) over 1, 2, 4 ... ranks.
 *
 *   gx_bench_dist [--log2 N] [--reps R] [--ranks 1,2,4] [--cases sum,scan,filter,sort,allreduce]
 *                 [--mode strong|weak|both] [--backend cpu|cuda]
 *
 * Without mpirun: one process, one thread per rank, ranks on devices 0..p-1
 * (gx_comm_from_ctxs: CUDA; the CPU backend has p = 1 only), every p of --ranks in
 * one run, so the table has its own 1-rank baseline.  Under mpirun (one process per
 * rank, gx_comm_world) only p = the job's size is measured: run it once per p.
 * Strong: 2^N elements in all, split evenly; weak: 2^N per rank.  Each timing is the
 * slowest rank's, from a barrier to the result being usable (gx_sync and
 * gx_comm_sync; the sum is read back to the host), the best of R repetitions after one
 * warm-up.  Speedup = T(1) / T(p) for strong, p T(1) / T(p) for weak (the ideal is p
 * for both).  GB/s counts 4 bytes per element once; for "allreduce" (gx_allreduce "+"
 * in place of 2^N f32 per rank, strong rows only) it is the bus bandwidth of
 * nccl-tests, bytes / t * 2 (p - 1) / p, which bench/peers/allreduce_torch_spawn.py reports
 * for torch.distributed.all_reduce the same way. */
#define _POSIX_C_SOURCE 200809L
#include "gx.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BD_SUM, BD_SCAN, BD_FILTER, BD_SORT, BD_ALLREDUCE, BD_NCASES, BD_MAXP = 16 };
static const char *const bd_names[BD_NCASES] = {"sum", "scan", "filter", "sort", "allreduce"};

typedef struct bd_cfg {
    int log2n, reps, nranks, ranks[BD_MAXP], cases[BD_NCASES], strong, weak;
    gx_backend_kind kind;
} bd_cfg;

typedef struct bd_rank {
    const bd_cfg *cfg;
    gx_comm *comm;
    int weak, which;
    double ms; /* the slowest rank's best time */
    gx_status st;
    char err[512];
} bd_rank;

static double bd_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Every rank here; the max over ranks of v (f64) when max is set. */
static gx_status bd_allmax(gx_comm *comm, double *v)
{
    gx_ctx *ctx;
    gx_array *a = NULL;
    int64_t one = 1;
    gx_status s = gx_comm_ctx(comm, &ctx);
    if (s == GX_OK)
        s = gx_array_from_host(ctx, GX_F64, 1, &one, v, &a);
    if (s == GX_OK)
        s = gx_allreduce(comm, "max", a, a);
    if (s == GX_OK)
        s = gx_array_to_host(a, v, sizeof *v);
    gx_array_release(a);
    return s;
}

static gx_status bd_once(int which, gx_dist *x)
{
    gx_dist *o = NULL;
    gx_array *r = NULL;
    gx_status s = GX_OK;
    float v;
    switch (which) {
    case BD_SUM:
        s = gx_dist_reduce("+", x, NULL, &r);
        if (s == GX_OK)
            s = gx_array_to_host(r, &v, sizeof v);
        break;
    case BD_SCAN: s = gx_dist_scan("+", x, NULL, &o); break;
    case BD_FILTER: s = gx_dist_filter("x -> x < 0.5f", x, NULL, &o); break;
    default: s = gx_dist_sort(x, NULL, &o); break;
    }
    gx_comm *comm = NULL;
    gx_ctx *ctx = NULL;
    if (s == GX_OK)
        s = gx_dist_comm(x, &comm);
    if (s == GX_OK)
        s = gx_comm_sync(comm);
    if (s == GX_OK)
        s = gx_comm_ctx(comm, &ctx);
    if (s == GX_OK)
        s = gx_sync(ctx);
    gx_array_release(r);
    gx_dist_release(o);
    return s;
}

/* gx_allreduce "+" in place of 2^log2 f32 on every rank (strong mode only); r->ms as
 * bd_case's.  Bus bandwidth as nccl-tests: bytes / t * 2 (p - 1) / p. */
static gx_status bd_allreduce(bd_rank *r)
{
    int64_t n = (int64_t)1 << r->cfg->log2n;
    gx_ctx *ctx = NULL;
    gx_array *a = NULL;
    gx_status s = gx_comm_ctx(r->comm, &ctx);
    if (s == GX_OK)
        s = gx_array_ones(ctx, GX_F32, 1, &n, &a);
    r->ms = 1e300;
    for (int k = -1; s == GX_OK && k < r->cfg->reps; k++) {
        double z = 0;
        s = bd_allmax(r->comm, &z);
        double t0 = bd_now_ms();
        if (s == GX_OK)
            s = gx_allreduce(r->comm, "+", a, a);
        if (s == GX_OK)
            s = gx_comm_sync(r->comm);
        double t = bd_now_ms() - t0;
        if (s == GX_OK)
            s = bd_allmax(r->comm, &t);
        if (s == GX_OK && k >= 0 && t < r->ms)
            r->ms = t;
    }
    gx_array_release(a);
    return s;
}

static gx_status bd_case(bd_rank *r)
{
    if (r->which == BD_ALLREDUCE)
        return bd_allreduce(r);
    int p = 0;
    gx_comm_size(r->comm, &p);
    int64_t n = (int64_t)1 << r->cfg->log2n;
    if (r->weak)
        n *= p;
    gx_dist *x = NULL;
    gx_rng rng = {42, 0, 0};
    gx_status s = gx_dist_rand(r->comm, rng, GX_F32, 1, &n, NULL, &x);
    if (s == GX_OK)
        s = bd_once(r->which, x); /* warm-up: kernels compiled, pools filled */
    r->ms = 1e300;
    for (int k = 0; s == GX_OK && k < r->cfg->reps; k++) {
        double z = 0;
        s = bd_allmax(r->comm, &z); /* a barrier */
        double t0 = bd_now_ms();
        if (s == GX_OK)
            s = bd_once(r->which, x);
        double t = bd_now_ms() - t0;
        if (s == GX_OK)
            s = bd_allmax(r->comm, &t);
        if (s == GX_OK && t < r->ms)
            r->ms = t;
    }
    gx_dist_release(x);
    return s;
}

static void *bd_thread(void *p)
{
    bd_rank *r = p;
    r->st = bd_case(r);
    if (r->st != GX_OK)
        snprintf(r->err, sizeof r->err, "%s: %s", gx_status_string(r->st), gx_last_error());
    return NULL;
}

static void bd_row(const bd_cfg *c, int which, int weak, int p, double ms, double base)
{
    int64_t n = ((int64_t)1 << c->log2n) * (weak ? p : 1);
    if (which == BD_ALLREDUCE) { /* bus bandwidth; p = 1 moves nothing */
        double bus = p > 1 ? (double)n * 4 / ms / 1e6 * 2 * (p - 1) / p : 0;
        printf("| %-9s | busbw  | %2d | 2^%d | %10.3f | %8.2f | %7s |\n", bd_names[which], p, c->log2n, ms, bus, "-");
        fflush(stdout);
        return;
    }
    double sp = base > 0 ? (weak ? p * base / ms : base / ms) : 0;
    char spd[32] = "-";
    if (base > 0)
        snprintf(spd, sizeof spd, "%.2fx", sp);
    printf("| %-9s | %-6s | %2d | 2^%d%s | %10.3f | %8.2f | %7s |\n", bd_names[which], weak ? "weak" : "strong", p,
           c->log2n, weak ? "/rank" : "", ms, (double)n * 4 / ms / 1e6, spd);
    fflush(stdout);
}

/* One process per rank (mpirun): this job's size only. */
static int bd_mpi(const bd_cfg *c)
{
    gx_ctx *ctx = NULL;
    gx_comm *comm = NULL;
    if (gx_comm_world(c->kind, NULL, &ctx, &comm) != GX_OK) {
        fprintf(stderr, "gx_comm_world: %s\n", gx_last_error());
        return 1;
    }
    int rank = 0, p = 1, rc = 0;
    gx_comm_rank(comm, &rank);
    gx_comm_size(comm, &p);
    for (int mode = 0; mode < 2; mode++)
        for (int w = 0; w < BD_NCASES; w++) {
            if (!c->cases[w] || !(mode ? c->weak : c->strong) || (w == BD_ALLREDUCE && mode))
                continue;
            bd_rank r = {c, comm, mode, w, 0, GX_OK, ""};
            bd_thread(&r);
            if (r.st != GX_OK) {
                fprintf(stderr, "rank %d: %s %s: %s\n", rank, bd_names[w], mode ? "weak" : "strong", r.err);
                rc = 1;
            } else if (rank == 0)
                bd_row(c, w, mode, p, r.ms, 0);
        }
    gx_comm_destroy(comm);
    gx_ctx_destroy(ctx);
    return rc;
}

/* One process, a thread per rank on devices 0..p-1. */
static int bd_threads(const bd_cfg *c)
{
    int maxp = 1, ndev = 1;
    for (int i = 0; i < c->nranks; i++)
        maxp = c->ranks[i] > maxp ? c->ranks[i] : maxp;
    if (c->kind == GX_BACKEND_CUDA)
        gx_cuda_device_count(&ndev);
    gx_ctx *ctxs[BD_MAXP] = {0};
    for (int d = 0; d < maxp && d < ndev; d++)
        if (gx_ctx_create_on(&ctxs[d], c->kind, d) != GX_OK) {
            fprintf(stderr, "device %d: %s\n", d, gx_last_error());
            return 1;
        }
    int rc = 0;
    for (int mode = 0; mode < 2; mode++)
        for (int w = 0; w < BD_NCASES; w++) {
            if (!c->cases[w] || !(mode ? c->weak : c->strong) || (w == BD_ALLREDUCE && mode))
                continue;
            double base = 0;
            for (int i = 0; i < c->nranks; i++) {
                int p = c->ranks[i];
                if (p > ndev) {
                    printf("| %-9s | %-6s | %2d | skipped: %d device(s) |\n", bd_names[w], mode ? "weak" : "strong", p,
                           ndev);
                    continue;
                }
                gx_comm *comms[BD_MAXP] = {0};
                if (gx_comm_from_ctxs(p, ctxs, NULL, comms) != GX_OK) {
                    fprintf(stderr, "gx_comm_from_ctxs(%d): %s\n", p, gx_last_error());
                    rc = 1;
                    continue;
                }
                bd_rank r[BD_MAXP];
                pthread_t th[BD_MAXP];
                for (int k = 0; k < p; k++) {
                    r[k] = (bd_rank){c, comms[k], mode, w, 0, GX_OK, ""};
                    pthread_create(&th[k], NULL, bd_thread, &r[k]);
                }
                for (int k = 0; k < p; k++)
                    pthread_join(th[k], NULL);
                for (int k = 0; k < p; k++)
                    gx_comm_destroy(comms[k]);
                if (r[0].st != GX_OK) {
                    fprintf(stderr, "%s %s p=%d: %s\n", bd_names[w], mode ? "weak" : "strong", p, r[0].err);
                    rc = 1;
                    continue;
                }
                if (p == 1)
                    base = r[0].ms;
                bd_row(c, w, mode, p, r[0].ms, base);
            }
        }
    for (int d = 0; d < maxp; d++)
        gx_ctx_destroy(ctxs[d]);
    return rc;
}

static int bd_parse(int argc, char **argv, bd_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->log2n = 30;
    c->reps = 5;
    c->nranks = 3;
    c->ranks[0] = 1, c->ranks[1] = 2, c->ranks[2] = 4;
    c->strong = c->weak = 1;
    for (int w = 0; w < BD_NCASES; w++)
        c->cases[w] = 1;
    const char *be = getenv("GX_BACKEND");
    c->kind = be && strcmp(be, "cpu") == 0 ? GX_BACKEND_CPU : GX_BACKEND_CUDA;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || !v)
            return 1;
        i++;
        if (strcmp(a, "--log2") == 0)
            c->log2n = atoi(v);
        else if (strcmp(a, "--reps") == 0)
            c->reps = atoi(v);
        else if (strcmp(a, "--backend") == 0)
            c->kind = strcmp(v, "cpu") == 0 ? GX_BACKEND_CPU : GX_BACKEND_CUDA;
        else if (strcmp(a, "--mode") == 0) {
            c->strong = strcmp(v, "weak") != 0;
            c->weak = strcmp(v, "strong") != 0;
        } else if (strcmp(a, "--ranks") == 0) {
            c->nranks = 0;
            for (char *e = (char *)v; *e && c->nranks < BD_MAXP;) {
                c->ranks[c->nranks++] = (int)strtol(e, &e, 10);
                e += *e == ',';
            }
        } else if (strcmp(a, "--cases") == 0) {
            for (int w = 0; w < BD_NCASES; w++)
                c->cases[w] = strstr(v, bd_names[w]) != NULL;
        } else
            return 1;
    }
    return c->log2n < 1 || c->log2n > 40 || c->reps < 1;
}

int main(int argc, char **argv)
{
    bd_cfg c;
    if (bd_parse(argc, argv, &c)) {
        fprintf(stderr, "usage: gx_bench_dist [--log2 N] [--reps R] [--ranks 1,2,4] [--cases sum,scan,filter,sort,allreduce]\n"
                        "                     [--mode strong|weak|both] [--backend cpu|cuda]\n");
        return 2;
    }
    int mpi = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE");
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank || strcmp(rank, "0") == 0) {
        printf("gx_bench_dist: %s, %s, f32, best of %d\n", gx_backend_name(c.kind),
               mpi ? "one process per rank (mpirun)" : "one thread per rank (gx_comm_from_ctxs)", c.reps);
        printf("| case      | mode   |  p | n       |         ms |     GB/s | speedup |\n");
        printf("|-----------|--------|----|---------|------------|----------|---------|\n");
    }
    return mpi ? bd_mpi(&c) : bd_threads(&c);
}
