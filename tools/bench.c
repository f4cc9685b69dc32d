/* bench.c -- `gx bench`: gx's benchmark suite on the current backend.
 *
 * Each case times one operation: the median of many runs after warm-up, the runs
 * queued back to back, each between its own events on the context's stream (CUDA
 * events on a GPU), as the peers in bench/peers time theirs.  GB/s counts the
 * fewest bytes the work must move (inputs read once, outputs written once) and is
 * also shown as a share of the device-to-device copy bandwidth measured first in
 * the same run.  Inputs are fresh random data, never zeros.  Every case rotates
 * through copies of its inputs AND outputs where one set would fit in the L2 cache
 * (bench_rot_count: ceil(4 L2 / set) copies, at most 64, the peers' rule), so small
 * sizes are read from memory, as the peers' are; footprint is the rotated bytes.
 * Every side times the same work (l2dist includes its sqrt, as the peers' do), and
 * every case does work a compiler cannot fold away (iota_hash_sum_i64 hashes each
 * index; the folded iota | reduce(+) is launch_latency_iota_sum, a time with no
 * rate).  Every row is checked against a host reference computed from the same
 * inputs in the same run (bench_check.c: exact, or within a bound derived from the
 * operation's accuracy, at sampled positions where the reference is dear): the
 * check column says ok, WRONG or - (nothing a reference could check: pool, JIT
 * timings); a WRONG row keeps the run going, and gx bench exits 1 at the end naming
 * it.  On the CPU backend, the map and sum cases also time a copy of the same bytes
 * over every thread gx uses ("memcpy", the ceiling) and a plain single-threaded C
 * loop ("c_loop_1t"), so CPU figures are ratios too.  A mark after %copy flags rows
 * whose working set fits in the cache (or that beat the copy), and a legend under
 * the table says why.  --json prints one JSON object per line (the format
 * scripts/bench_merge.py reads), each with "ok" (true, false, or null for no check),
 * "why" (what was wrong, or why there is no check) and a "check" (the result, or
 * its f64 sum) that the CPU peers compare; progress goes to stderr
 * (bench_progress.c), so stdout holds the table alone.  --quick is the short run a
 * first contact wants: two sizes, fewer repetitions. */
#include "tools.h"
#include "bench_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_opts {
    const char *filter;
    const char *map_lambda;  /* --map: time this lambda over random f32 inputs */
    const char *define_file; /* --define: C functions the lambda may call */
    int sizes[8], nsizes;
    int reps;
    bool json, quick, no_progress, help;
    bool sizes_set, reps_set; /* given on the command line: --quick leaves them be */
} bench_opts;

/* Timed runs per measurement under --quick: enough for a stable median, and the whole
 * run (2^20 and 2^24) took 10-13 s on two CPU cores with the CPU backend. */
#define BENCH_QUICK_REPS 10

/* Rows whose check failed (or that forgot one) named again at the end, at most. */
#define BENCH_MAXBAD 32

/* What one run shares: options, device, the copy reference, the marks printed, the
 * verdicts. */
typedef struct bench_run {
    bench_opts o;
    char *define_src; /* --define's file */
    gx_ctx *ctx;
    gx_backend_kind k;
    gx_device_info d;
    double copy_gbs;
    int copy_e;
    bool marked[2]; /* a '*' or '+' row was printed: the legend explains it */
    bench_progress prog;
    int nbad, nok, nnocheck;
    bool host_refs; /* a memcpy / c_loop_1t row was printed */
    char bad[BENCH_MAXBAD][320];
} bench_run;

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

/* Copies of a working set (inputs and outputs) so that a run never finds its data in
 * the cache: 4x the L2 (the last-level cache on a CPU) of distinct data between
 * reuses, ceil(4 L2 / set) capped at 64 -- the peers' rule (bench/peers). */
int bench_rot_count(gx_ctx *ctx, double set_bytes)
{
    gx_device_info d;
    if (gx_device_info_get(ctx, &d) != GX_OK || d.l2_bytes == 0 || set_bytes <= 0)
        return 1;
    double k = ceil(4.0 * (double)d.l2_bytes / set_bytes);
    return k <= 1 ? 1 : k >= BENCH_MAXROT ? BENCH_MAXROT : (int)k;
}

gx_status bench_clones(gx_array *a, int k, gx_array **copies, int *n)
{
    copies[0] = a;
    gx_status s = GX_OK;
    for (*n = 1; s == GX_OK && *n < k; (*n)++)
        s = gx_array_clone(a, GX_DTYPE_DEFAULT, &copies[*n]);
    if (s != GX_OK)
        (*n)--; /* the failed clone made nothing */
    return s;
}

/* ------------------------------------------------------------ the table */

/* '*': the working set fits in the cache (L2, the last-level cache on a CPU), so the
 * rate is the cache's, not memory's: %copy can pass 100% there.  '+': faster than
 * the copy without fitting (work that mostly reads can outrun a copy, or noise). */
static const char *row_mark(bench_run *b, const bench_result *r, double gbs)
{
    double set = r->footprint > 0 ? r->footprint : r->bytes;
    if (b->d.l2_bytes > 0 && set <= (double)b->d.l2_bytes)
        return b->marked[0] = true, " *";
    if (b->copy_gbs > 0 && gbs > b->copy_gbs)
        return b->marked[1] = true, " +";
    return "";
}

/* Writes s as a JSON string's contents (quotes and backslashes escaped, control
 * characters dropped). */
static void json_text(const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        if ((unsigned char)*s >= 32)
            putchar(*s);
    }
}

static void print_json(const bench_run *b, const bench_result *r)
{
    printf("{\"impl\":\"%s\",\"op\":\"", r->impl);
    json_text(r->op);
    printf("\",\"dtype\":\"%s\",\"n\":%lld,\"median_us\":%.3f,\"bytes\":%.0f,\"flops\":%.0f,\"elems\":%.0f,"
           "\"footprint\":%.0f,\"device\":\"",
           r->dtype, (long long)r->n, r->median_us, r->bytes, r->flops, r->elems,
           r->footprint > 0 ? r->footprint : r->bytes);
    json_text(b->d.name);
    printf("\"");
    if (r->threads > 0)
        printf(",\"threads\":%d", r->threads);
    if (r->has_check)
        printf(",\"check\":%.17g", r->check);
    printf(",\"ok\":%s", r->verdict == BENCH_OK ? "true" : r->verdict == BENCH_NOCHECK ? "null" : "false");
    if (r->verdict != BENCH_OK) {
        printf(",\"why\":\"");
        json_text(r->verdict == BENCH_UNCHECKED ? "no check was made (a bug in the case)" : r->why);
        printf("\"");
    }
    printf("}\n");
}

/* Counts the row's verdict; a WRONG or unchecked row is kept for the summary. */
static void tally(bench_run *b, const bench_result *r)
{
    if (r->verdict == BENCH_OK) {
        b->nok++;
        return;
    }
    if (r->verdict == BENCH_NOCHECK) {
        b->nnocheck++;
        return;
    }
    if (b->nbad < BENCH_MAXBAD)
        snprintf(b->bad[b->nbad], sizeof b->bad[0], "%s %s %s n=%lld: %s", r->impl, r->op, r->dtype, (long long)r->n,
                 r->verdict == BENCH_UNCHECKED ? "no check was made (a bug in the case)" : r->why);
    b->nbad++;
}

/* One row; flops first, as scripts/bench_merge.py rates them (a GEMM's byte count
 * is no measure of it). */
static void print_row(bench_run *b, const bench_result *r)
{
    bench_progress_clear(&b->prog);
    tally(b, r);
    b->host_refs |= r->threads > 0;
    if (b->o.json) {
        print_json(b, r);
        fflush(stdout);
        return;
    }
    char rate[32] = "", pct[16] = "";
    if (r->flops > 0) {
        snprintf(rate, sizeof rate, "%9.2f TFLOP/s", r->flops / (r->median_us * 1e6));
    } else if (r->bytes > 0) {
        double gbs = r->bytes / (r->median_us * 1e3);
        snprintf(rate, sizeof rate, "%9.1f GB/s", gbs);
        snprintf(pct, sizeof pct, "%6.1f%%%s", b->copy_gbs > 0 ? 100 * gbs / b->copy_gbs : 0, row_mark(b, r, gbs));
    } else if (r->elems > 0) {
        snprintf(rate, sizeof rate, "%9.3f Telem/s", r->elems / (r->median_us * 1e6));
    }
    const char *check = r->verdict == BENCH_OK ? "ok" : r->verdict == BENCH_NOCHECK ? "-" : "WRONG";
    printf("%-9s %-23s %-5s %11lld %12.1f %16s %-9s %s\n", r->impl, r->op, r->dtype, (long long)r->n, r->median_us,
           rate, pct, check);
    fflush(stdout);
}

static void print_header(const bench_run *b)
{
    if (b->o.json)
        return;
    printf("gx %s bench on %s (%s), median of %d runs after 3 warm-ups%s\n%-9s %-23s %-5s %11s %12s %16s %-9s %s\n",
           gx_version(), b->d.name, gx_backend_name(b->k), b->o.reps, b->o.quick ? " (--quick)" : "", "impl", "op",
           "dtype", "n", "median us", "throughput", " %copy", "check");
}

/* Under the table: what %copy is measured against, the marks that appeared, the
 * reference rows and the check column. */
static void print_legend(const bench_run *b)
{
    if (b->o.json)
        return;
    if (b->copy_gbs > 0) {
        printf("%%copy: GB/s as a share of the copy row's %.1f GB/s (gx copy at 2^%d, this run)", b->copy_gbs,
               b->copy_e);
        if (b->marked[0])
            printf("; * working set fits in the %.0f MiB %s: cache speed, not memory's",
                   (double)b->d.l2_bytes / (1 << 20), b->k == GX_BACKEND_CPU ? "last-level cache" : "L2");
        if (b->marked[1])
            printf("; + faster than the copy though not in cache: more reads than writes, or noise");
        printf("\n");
    }
    if (b->host_refs)
        printf(
            "memcpy: the same bytes copied by %d threads (GX_CPU_THREADS, else every core), the ceiling; c_loop_1t: a "
            "plain C loop on one thread\n",
            bench_host_threads(b->ctx));
    printf("check: each result against a host reference from the same inputs (ok), WRONG if it differs, - where "
           "nothing can be checked (allocation, JIT timings)\n");
}

/* After the table: the rows whose check failed, and the exit status. */
static int print_verdicts(bench_run *b)
{
    bench_progress_clear(&b->prog);
    if (b->nbad == 0)
        return 0;
    fprintf(stderr, "gx bench: %d row%s WRONG (result differs from the host reference, or not checked):\n", b->nbad,
            b->nbad == 1 ? "" : "s");
    for (int i = 0; i < b->nbad && i < BENCH_MAXBAD; i++)
        fprintf(stderr, "  %s\n", b->bad[i]);
    if (b->nbad > BENCH_MAXBAD)
        fprintf(stderr, "  ... and %d more\n", b->nbad - BENCH_MAXBAD);
    return 1;
}

/* ------------------------------------------------------------ options */

static int parse_sizes(bench_opts *o, char *p)
{
    o->nsizes = 0;
    while (*p && o->nsizes < 8) {
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
    o->sizes_set = true;
    if (o->nsizes == 0)
        fprintf(stderr, "gx bench: --sizes names no size\n");
    return o->nsizes > 0 ? 0 : -1;
}

static int parse_reps(bench_opts *o, const char *v)
{
    char *end;
    long r = strtol(v, &end, 10);
    if (*v == 0 || *end || r < 1 || r > 100000) {
        fprintf(stderr, "gx bench: --reps takes a count from 1 to 100000, not '%s'\n", v);
        return -1;
    }
    o->reps = (int)r;
    o->reps_set = true;
    return 0;
}

static bool takes_value(const char *opt)
{
    static const char *const valued[] = {"--filter", "--map", "--define", "--reps", "--sizes", NULL};
    for (int i = 0; valued[i]; i++)
        if (strcmp(opt, valued[i]) == 0)
            return true;
    return false;
}

/* opt is one that takes_value. */
static int parse_value(bench_opts *o, const char *opt, char *v)
{
    if (strcmp(opt, "--filter") == 0)
        o->filter = v;
    else if (strcmp(opt, "--map") == 0)
        o->map_lambda = v;
    else if (strcmp(opt, "--define") == 0)
        o->define_file = v;
    else if (strcmp(opt, "--reps") == 0)
        return parse_reps(o, v);
    else
        return parse_sizes(o, v);
    return 0;
}

/* --quick: two sizes (the larger still far past the cache, so the copy reference is
 * memory's) and fewer runs; --sizes and --reps still win. */
static void apply_quick(bench_opts *o)
{
    if (!o->sizes_set)
        o->sizes[0] = 20, o->sizes[1] = 24, o->nsizes = 2;
    if (!o->reps_set)
        o->reps = BENCH_QUICK_REPS;
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sizes[0] = 20, o->sizes[1] = 24, o->sizes[2] = 28;
    o->nsizes = 3;
    o->reps = 30;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (gx_tool_wants_help(a)) {
            o->help = true;
            return 0;
        }
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--quick") == 0) {
            o->quick = true;
        } else if (strcmp(a, "--no-progress") == 0) {
            o->no_progress = true;
        } else if (!takes_value(a)) {
            return gx_tool_bad_option("bench", a);
        } else if (i + 1 == argc) {
            fprintf(stderr, "gx bench: %s needs a value (see gx bench --help)\n", a);
            return 2;
        } else if (parse_value(o, a, argv[++i]) != 0) {
            return 2;
        }
    }
    if (o->quick)
        apply_quick(o);
    return 0;
}

/* Wraps the case names to the terminal's usual width, for --help. */
static void print_case_names(void)
{
    int col = printf("cases (for --filter):");
    for (int c = 0; bench_cases[c].name; c++) {
        int w = (int)strlen(bench_cases[c].name) + 1;
        if (col + w > 80)
            col = printf("\n ");
        col += printf(" %s", bench_cases[c].name);
    }
    printf("\n");
}

static int bench_usage(void)
{
    printf("usage: gx bench [options]\n"
           "gx's benchmark suite on the current backend: one row per measurement, the median\n"
           "of N timed runs after 3 warm-ups, its rate, and %%copy: the rate as a share of\n"
           "the copy bandwidth measured first in the same run (a legend under the table\n"
           "explains it and its marks).  Every result is checked against a host reference\n"
           "computed from the same inputs: the check column says ok, WRONG or - (nothing to\n"
           "check), and the exit status is 1 if any row is WRONG.  On the CPU backend, a copy\n"
           "over every thread (memcpy) and a plain single-threaded C loop (c_loop_1t) are\n"
           "timed beside gx.  The table goes to stdout; progress ([k/N] case, time so far,\n"
           "time left) to stderr.\n"
           "options:\n"
           "  --quick            a short run: sizes 2^20 and 2^24, %d runs each\n"
           "  --filter S         only cases whose name contains S (=NAME: that case alone;\n"
           "                     S,T,...: any of them)\n"
           "  --sizes 20,24,28   element counts, as exponents of 2 (up to 8; default 20,24,28)\n"
           "  --reps N           timed runs per measurement (default 30)\n"
           "  --json             one JSON object per line (what scripts/bench_merge.py reads),\n"
           "                     with \"ok\" (true, false, null: no check) and \"why\", and\n"
           "                     \"check\": the result's value or f64 sum, as the CPU peers in\n"
           "                     bench/peers compute it (scripts/bench-cpu)\n"
           "  --map LAMBDA       time your own lambda over random f32 inputs instead\n"
           "  --define FILE      C functions the --map lambda may call\n"
           "  --no-progress      no progress lines on stderr\n"
           "  -h, --help         this text\n",
           BENCH_QUICK_REPS);
    print_case_names();
    printf("examples: gx bench --quick\n"
           "          gx bench --filter sum --sizes 24,28 --json > gx.jsonl\n"
           "          gx bench --filter =sum,=scan_sum --sizes 20\n"
           "          gx bench --map 'x, y -> x*y + 1' --sizes 24\n");
    return 0;
}

/* ------------------------------------------------------------ the run */

/* One item of --filter: names containing it; =NAME: that name only ("sum" is in
 * several names).  item is len characters, not terminated. */
static bool filter_item_matches(const char *item, size_t len, const char *name)
{
    char buf[128];
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, item, len);
    buf[len] = 0;
    return buf[0] == '=' ? strcmp(name, buf + 1) == 0 : strstr(name, buf) != NULL;
}

/* --filter A,B,...: a case that any comma-separated item selects (scripts/bench-cpu
 * names several cases, each exactly, in one run). */
static bool case_selected(const bench_opts *o, const char *name)
{
    if (!o->filter || !*o->filter)
        return true;
    for (const char *p = o->filter;; p++) {
        size_t len = strcspn(p, ",");
        if (len > 0 && filter_item_matches(p, len, name))
            return true;
        p += len;
        if (*p == 0)
            return false;
    }
}

static int max_exponent(const bench_opts *o)
{
    int maxe = 0;
    for (int i = 0; i < o->nsizes; i++)
        maxe = o->sizes[i] > maxe ? o->sizes[i] : maxe;
    return maxe;
}

static void plan_sizes(const bench_opts *o, bench_progress *p)
{
    for (int i = 0; i < o->nsizes; i++)
        bench_progress_plan(p, o->sizes[i]);
}

/* Plans the run's steps for the progress line: the copy reference, then each case
 * selected at each size (a once-case: one step), or --map at each size. */
static void plan_steps(const bench_opts *o, bench_progress *p)
{
    bench_progress_plan(p, max_exponent(o));
    if (o->map_lambda) {
        plan_sizes(o, p);
        return;
    }
    for (int c = 0; bench_cases[c].name; c++) {
        if (!case_selected(o, bench_cases[c].name))
            continue;
        if (bench_cases[c].once)
            bench_progress_plan(p, -1);
        else
            plan_sizes(o, p);
    }
}

/* GX_ERR_UNSUPPORTED is a feature this build or backend lacks (e.g. matmul on a CPU
 * build without OpenBLAS): a skip with gx's message, which names what to install,
 * once per case -- not a failure. */
static void report_failure(bench_run *b, const char *what, int64_t n, gx_status s)
{
    static char skipped[64][48];
    static int nskipped;
    bench_progress_clear(&b->prog);
    if (s == GX_ERR_UNSUPPORTED) {
        for (int i = 0; i < nskipped; i++)
            if (strncmp(skipped[i], what, sizeof skipped[i] - 1) == 0)
                return;
        if (nskipped < 64)
            snprintf(skipped[nskipped++], sizeof skipped[0], "%s", what);
        fprintf(stderr, "gx bench: %s skipped: %s\n", what, gx_last_error());
        return;
    }
    fprintf(stderr, "gx bench: %s at n=%lld: %s: %s\n", what, (long long)n, gx_status_string(s), gx_last_error());
    b->prog.failed++;
}

/* The copy first: every GB/s row is also shown as a share of it. */
static void run_copy_reference(bench_run *b)
{
    b->copy_e = max_exponent(&b->o);
    int64_t n = (int64_t)1 << b->copy_e;
    bench_result r;
    bench_progress_step(&b->prog, "copy (the %copy reference)", b->copy_e);
    gx_status s = bench_copy_bandwidth(b->ctx, n, b->o.reps, &r);
    if (s != GX_OK) {
        report_failure(b, "copy", n, s);
        return;
    }
    b->copy_gbs = r.bytes / (r.median_us * 1e3);
    print_row(b, &r);
}

/* One case at 2^e elements (once-cases ignore e); a failure is reported and the
 * run goes on. */
static void run_case(bench_run *b, const bench_case *c, int e)
{
    int64_t n = (int64_t)1 << e;
    bench_result rows[BENCH_MAXROWS];
    int nrows = 0;
    bench_progress_step(&b->prog, c->name, c->once ? -1 : e);
    gx_status s = c->run(b->ctx, b->k, n, b->o.reps, rows, &nrows);
    if (s != GX_OK) {
        report_failure(b, c->name, n, s);
        return;
    }
    for (int j = 0; j < nrows; j++)
        print_row(b, &rows[j]);
}

/* --map: the user's lambda at each size; a failure (a lambda that does not parse)
 * would fail alike at every size, so it ends the run. */
static void run_custom_map(bench_run *b)
{
    for (int i = 0; i < b->o.nsizes; i++) {
        int64_t n = (int64_t)1 << b->o.sizes[i];
        bench_result rows[BENCH_MAXROWS];
        int nrows = 0;
        bench_progress_step(&b->prog, "map", b->o.sizes[i]);
        gx_status s =
            bench_custom_map(b->ctx, n, b->o.reps, b->o.map_lambda, b->o.define_file, b->define_src, rows, &nrows);
        if (s != GX_OK) {
            report_failure(b, "--map", n, s);
            return;
        }
        for (int j = 0; j < nrows; j++)
            print_row(b, &rows[j]);
    }
}

/* --define: the file's C functions, kept for the --map check's CPU context too. */
static int define_from_file(bench_run *b, const char *path)
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
    gx_status s = src ? gx_define(b->ctx, path, src) : GX_ERR_OUT_OF_MEMORY;
    b->define_src = src;
    return gx_tool_fail("gx bench --define", s);
}

static int bench_all(bench_run *b)
{
    gx_device_info_get(b->ctx, &b->d);
    gx_ctx_backend(b->ctx, &b->k);
    print_header(b);
    run_copy_reference(b);
    if (b->o.map_lambda)
        run_custom_map(b);
    for (int c = 0; !b->o.map_lambda && bench_cases[c].name; c++) {
        if (!case_selected(&b->o, bench_cases[c].name))
            continue;
        for (int i = 0; i < (bench_cases[c].once ? 1 : b->o.nsizes); i++)
            run_case(b, &bench_cases[c], b->o.sizes[i]);
    }
    print_legend(b);
    bench_inputs_free();
    bench_progress_finish(&b->prog);
    int wrong = print_verdicts(b);
    return b->prog.failed || wrong ? 1 : 0;
}

int gx_tool_bench(int argc, char **argv)
{
    bench_run b;
    memset(&b, 0, sizeof b);
    if (parse_args(argc, argv, &b.o) != 0)
        return 2;
    if (b.o.help)
        return bench_usage();
    bench_progress_init(&b.prog, !b.o.no_progress);
    plan_steps(&b.o, &b.prog);
    if (b.prog.total == 1 && !b.o.map_lambda) {
        fprintf(stderr, "gx bench: no case matches --filter %s (gx bench --help lists them)\n", b.o.filter);
        return 2;
    }
    gx_status s = gx_ctx_create(&b.ctx, GX_BACKEND_AUTO);
    if (s != GX_OK)
        return gx_tool_fail("gx bench: creating a context", s);
    int rc = b.o.define_file ? define_from_file(&b, b.o.define_file) : 0;
    if (rc == 0)
        rc = bench_all(&b);
    gx_ctx_destroy(b.ctx);
    free(b.define_src);
    return rc;
}
