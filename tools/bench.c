/* bench.c -- `gx bench`: gx's benchmark suite on the current backend.
 *
 * Each case times one operation: the median of many runs after warm-up, the runs
 * queued back to back, each between its own events on the context's stream (CUDA
 * events on a GPU), as the peers in bench/peers time theirs.  GB/s counts the
 * fewest bytes the work must move (inputs read once, outputs written once) and is
 * also shown as a share of the device-to-device copy bandwidth measured first in
 * the same run.  Inputs are fresh random data, never zeros; the reduction, scan and
 * select cases rotate through copies of their inputs where one set would fit in the
 * L2 cache (bench_rot_count), so small sizes are read from memory.  On the CPU
 * backend, the same cases also time the machine's memcpy and a plain single-threaded
 * C loop, so CPU figures are ratios too.
 * --json prints one JSON object per line (the format scripts/bench_merge.py reads). */
#include "tools.h"
#include "bench_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_opts {
    const char *filter;
    const char *map_lambda;   /* --map: time this lambda over random f32 inputs */
    const char *define_file;  /* --define: C functions the lambda may call */
    int sizes[8], nsizes;
    int reps;
    bool json;
} bench_opts;

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Median time in microseconds of `reps` runs after 3 warm-ups.  The runs are queued
 * back to back, each between its own pair of events, and read after one final
 * synchronisation: the method of the CUB, PyTorch and CuPy peers, so host work that
 * overlaps the device's is hidden for every library alike, and an operation that
 * must wait for its result (a filter's length) pays for the wait. */
gx_status bench_time(gx_ctx *ctx, bench_case_fn fn, void *state, int reps, double *median_us)
{
    gx_event **ev = calloc(2 * (size_t)reps, sizeof *ev);
    float *t = calloc((size_t)reps, sizeof *t);
    gx_status s = t && ev ? GX_OK : GX_ERR_OUT_OF_MEMORY;
    for (int i = 0; s == GX_OK && i < 2 * reps; i++)
        s = gx_event_create(ctx, &ev[i]);
    for (int i = 0; s == GX_OK && i < 3; i++)
        s = fn(state);
    if (s == GX_OK)
        s = gx_sync(ctx);
    for (int i = 0; s == GX_OK && i < reps; i++) {
        s = gx_event_record(ev[2 * i]);
        if (s == GX_OK)
            s = fn(state);
        if (s == GX_OK)
            s = gx_event_record(ev[2 * i + 1]);
    }
    if (s == GX_OK)
        s = gx_sync(ctx);
    for (int i = 0; s == GX_OK && i < reps; i++)
        s = gx_event_elapsed_ms(ev[2 * i], ev[2 * i + 1], &t[i]);
    if (s == GX_OK) {
        qsort(t, (size_t)reps, sizeof *t, cmp_float);
        *median_us = reps % 2 ? t[reps / 2] * 1e3 : 0.5 * (t[reps / 2 - 1] + t[reps / 2]) * 1e3;
    }
    for (int i = 0; ev && i < 2 * reps; i++)
        gx_event_destroy(ev[i]);
    free(ev);
    free(t);
    return s;
}

/* Copies of an input so that a run never finds its data in the cache: 4x the L2
 * (the last-level cache on a CPU) of distinct data between reuses, as the peers do. */
int bench_rot_count(gx_ctx *ctx, double set_bytes)
{
    gx_device_info d;
    if (gx_device_info_get(ctx, &d) != GX_OK || d.l2_bytes == 0 || set_bytes <= 0)
        return 1;
    double k = 4.0 * (double)d.l2_bytes / set_bytes;
    return k <= 1 ? 1 : k >= BENCH_MAXROT ? BENCH_MAXROT : (int)k + 1;
}

gx_status bench_clones(gx_array *a, int k, gx_array **copies, int *n)
{
    copies[0] = a;
    gx_status s = GX_OK;
    for (*n = 1; s == GX_OK && *n < k; (*n)++)
        s = gx_array_clone(a, GX_DTYPE_COUNT, &copies[*n]);
    if (s != GX_OK)
        (*n)--;   /* the failed clone made nothing */
    return s;
}

static void print_row(const bench_opts *o, const bench_result *r, double copy_gbs, const char *device)
{
    double gbs = r->bytes > 0 ? r->bytes / (r->median_us * 1e3) : 0;
    if (o->json) {
        printf("{\"impl\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"n\":%lld,\"median_us\":%.3f,\"bytes\":%.0f,\"flops\":%.0f,\"elems\":%.0f,\"device\":\"%s\"}\n",
               r->impl, r->op, r->dtype, (long long)r->n, r->median_us, r->bytes, r->flops, r->elems, device);
        return;
    }
    printf("%-8s %-16s %-5s %11lld %12.1f", r->impl, r->op, r->dtype, (long long)r->n, r->median_us);
    if (r->bytes > 0)
        printf(" %9.1f GB/s %6.1f%%", gbs, copy_gbs > 0 ? 100 * gbs / copy_gbs : 0);
    else if (r->flops > 0)
        printf(" %9.2f TFLOP/s", r->flops / (r->median_us * 1e6));
    else if (r->elems > 0)
        printf(" %9.3f Telem/s", r->elems / (r->median_us * 1e6));
    printf("\n");
    fflush(stdout);
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sizes[0] = 20, o->sizes[1] = 24, o->sizes[2] = 28;
    o->nsizes = 3;
    o->reps = 30;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            o->json = true;
        else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
            o->filter = argv[++i];
        else if (strcmp(argv[i], "--map") == 0 && i + 1 < argc)
            o->map_lambda = argv[++i];
        else if (strcmp(argv[i], "--define") == 0 && i + 1 < argc)
            o->define_file = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            o->reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            o->nsizes = 0;
            for (char *p = argv[++i]; *p && o->nsizes < 8;) {
                int e = (int)strtol(p, &p, 10);
                if (e < 0 || e > 33) {
                    fprintf(stderr, "gx bench: --sizes takes exponents of 2 between 0 and 33\n");
                    return -1;
                }
                o->sizes[o->nsizes++] = e;
                if (*p == ',')
                    p++;
                else if (*p) {
                    fprintf(stderr, "gx bench: --sizes looks like 20,24,28\n");
                    return -1;
                }
            }
        } else {
            fprintf(stderr, "gx bench: unknown option %s (use --filter S, --sizes 20,24,28, --reps N, --json)\n", argv[i]);
            return -1;
        }
    }
    if (o->reps < 1)
        o->reps = 1;
    return 0;
}

static int define_from_file(gx_ctx *ctx, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gx bench: cannot open %s\n", path);
        return 1;
    }
    char *src = calloc(1, 1 << 20);
    size_t n = src ? fread(src, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    (void)n;
    gx_status s = src ? gx_define(ctx, path, src) : GX_ERR_OUT_OF_MEMORY;
    free(src);
    return gx_tool_fail("gx bench --define", s);
}

int gx_tool_bench(int argc, char **argv)
{
    bench_opts o;
    if (parse_args(argc, argv, &o) != 0)
        return 2;
    gx_ctx *ctx = NULL;
    gx_status s = gx_ctx_create(&ctx, GX_BACKEND_AUTO);
    if (s != GX_OK)
        return gx_tool_fail("gx bench: creating a context", s);
    if (o.define_file && define_from_file(ctx, o.define_file) != 0) {
        gx_ctx_destroy(ctx);
        return 1;
    }
    gx_device_info d;
    gx_device_info_get(ctx, &d);
    gx_backend_kind k;
    gx_ctx_backend(ctx, &k);
    if (!o.json)
        printf("gx %s bench on %s (%s), median of %d runs after 3 warm-ups\n%-8s %-16s %-5s %11s %12s %14s %7s\n",
               gx_version(), d.name, gx_backend_name(k), o.reps, "impl", "op", "dtype", "n", "median us", "throughput", "%copy");
    /* The copy bandwidth first: every other row is a share of it. */
    double copy_gbs = 0;
    int rc = 0;
    int maxe = 0;
    for (int i = 0; i < o.nsizes; i++)
        maxe = o.sizes[i] > maxe ? o.sizes[i] : maxe;
    bench_result r;
    if (bench_copy_bandwidth(ctx, (int64_t)1 << maxe, o.reps, &r) == GX_OK) {
        copy_gbs = r.bytes / (r.median_us * 1e3);
        print_row(&o, &r, copy_gbs, d.name);
    }
    for (int i = 0; o.map_lambda && i < o.nsizes; i++) {
        bench_result rows[4];
        int nrows = 0;
        s = bench_custom_map(ctx, (int64_t)1 << o.sizes[i], o.reps, o.map_lambda, rows, &nrows);
        if (s != GX_OK) {
            rc = gx_tool_fail("gx bench --map", s);
            break;
        }
        for (int j = 0; j < nrows; j++)
            print_row(&o, &rows[j], copy_gbs, d.name);
    }
    for (int c = 0; !o.map_lambda && bench_cases[c].name; c++) {
        /* --filter =NAME matches one case exactly ("sum" is in several names). */
        if (o.filter && (o.filter[0] == '=' ? strcmp(bench_cases[c].name, o.filter + 1) != 0 : !strstr(bench_cases[c].name, o.filter)))
            continue;
        for (int i = 0; i < o.nsizes; i++) {
            int64_t n = (int64_t)1 << o.sizes[i];
            bench_result rows[4];
            int nrows = 0;
            s = bench_cases[c].run(ctx, k, n, o.reps, rows, &nrows);
            if (s != GX_OK) {
                fprintf(stderr, "gx bench: %s at n=%lld: %s: %s\n", bench_cases[c].name, (long long)n,
                        gx_status_string(s), gx_last_error());
                rc = 1;
                continue;
            }
            for (int j = 0; j < nrows; j++)
                print_row(&o, &rows[j], copy_gbs, d.name);
        }
    }
    gx_ctx_destroy(ctx);
    return rc;
}
