/* bench_cases.h -- the cases `gx bench` runs; one table, grown as operations land. */
#ifndef GX_BENCH_CASES_H
#define GX_BENCH_CASES_H

#include "gx.h"
#include <stdbool.h>

typedef struct bench_result {
    const char *impl, *op, *dtype;
    int64_t n;
    double median_us, bytes, flops, elems;
    /* Distinct bytes the timed runs cycle through, when inputs rotate through copies
     * (bench_rot_count); 0 = just `bytes`.  Against the cache size, it says whether
     * the rate is the cache's or memory's (the * mark in the table). */
    double footprint;
    /* A value computed from the result after the timed runs (the result itself for a
     * scalar, else the f64 sum of its elements), for --json's "check": the CPU peers
     * (bench/peers/cpu_*) compute the same from the same inputs, so a wrong result
     * shows up beside its time.  has_check 0: none (the plain-C references). */
    double check;
    int has_check;
} bench_result;

typedef gx_status (*bench_case_fn)(void *state);
gx_status bench_time(gx_ctx *ctx, bench_case_fn fn, void *state, int reps, double *median_us);
/* How many copies of a working set of set_bytes keep runs from reusing the cache. */
#define BENCH_MAXROT 64
int bench_rot_count(gx_ctx *ctx, double set_bytes);
/* copies[0] = a, then dense clones of a until there are k; *n says how many copies
 * exist (a included), also after a failure, so the caller can release them. */
gx_status bench_clones(gx_array *a, int k, gx_array **copies, int *n);

/* Runs one case at size n; writes up to 4 rows (gx, and on CPU the plain-C references). */
typedef gx_status (*bench_run_fn)(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
/* once: the case measures something independent of n (the pool, the JIT), so it runs
 * at the first size only. */
typedef struct bench_case {
    const char *name;
    bench_run_fn run;
    int once;
} bench_case;
extern const bench_case bench_cases[];
/* Reductions (tools/bench_reduce.c). */
gx_status bench_case_sum(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_max(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_argmin(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_argmax(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_mean(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_l2dist(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_max_lambda(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_sum_rows(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_sum_cols(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
/* bench_range.c: scans, compaction, fused pipelines */
gx_status bench_case_scan_sum(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_scan_sum_new(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_select_gt05(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_iota_sum_i64(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_pipeline_count(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                    int *nrows);
gx_status bench_case_pipeline_l2count(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                      int *nrows);

/* Times gx_map of a user lambda over random f32 inputs (one per parameter). */
gx_status bench_custom_map(gx_ctx *ctx, int64_t n, int reps, const char *lambda, bench_result *rows, int *nrows);
gx_status bench_case_fill(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_jit(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_pool(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
/* CPU references for a case: memcpy of the same bytes and a single-threaded C loop
 * (which: 1 sin^2+cos^2, 2 saxpy, 3 sum); appends two rows. */
gx_status bench_host_refs(gx_ctx *ctx, int which, const char *op, int64_t n, int reps, double bytes, bench_result *rows,
                          int *nrows);
gx_status bench_copy_bandwidth(gx_ctx *ctx, int64_t n, int reps, bench_result *r);
/* Progress on stderr (tools/bench_progress.c): [k/N], the case starting, the time so
 * far and an estimate of the time left.  Steps are kept by size (slot e for 2^e,
 * the last slot for cases that ignore the size), since a step's time is mostly a
 * function of its size. */
#define BENCH_PROGRESS_SLOTS 35
typedef struct bench_progress {
    bool on, tty, shown;
    int done, total, failed;
    int cur;                            /* the running step's slot, -1 before the first */
    double t0, tcur;                    /* when the run and the running step started */
    double spent[BENCH_PROGRESS_SLOTS]; /* seconds of the steps done, by slot */
    int ndone[BENCH_PROGRESS_SLOTS], nleft[BENCH_PROGRESS_SLOTS];
} bench_progress;
void bench_progress_init(bench_progress *p, bool on);
/* Plans one more step at 2^e elements (e < 0: a case that ignores the size). */
void bench_progress_plan(bench_progress *p, int e);
/* Starts the next planned step (and ends the one before): what, at 2^e elements. */
void bench_progress_step(bench_progress *p, const char *what, int e);
/* Erases the status line on a terminal, before anything else is printed. */
void bench_progress_clear(bench_progress *p);
/* Ends the last step; prints the count, the total time and the failures. */
void bench_progress_finish(bench_progress *p);

/* Bits of element i of the inputs of `seed`: splitmix64's output function over a
 * counter, not a sequence, so the NumPy and OpenMP peers (bench/peers/cpu_*) make
 * the very same inputs (f32: the top 24 bits / 2^24, uniform in [0,1); i32: the top
 * 10 bits) and their checks can be compared with gx's. */
static inline uint64_t bench_bits(uint64_t seed, uint64_t i)
{
    uint64_t z = (seed << 40) + i + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* Host f32 inputs of `seed` (bench_bits); NULL when out of memory.  Free with free(). */
float *bench_host_f32(int64_t n, uint64_t seed);
/* The same inputs on the device. */
gx_status bench_random_f32(gx_ctx *ctx, int64_t n, uint64_t seed, gx_array **out);
/* Sets r's check to the f64 sum of a's elements (see bench_result). */
gx_status bench_check(gx_ctx *ctx, gx_array *a, bench_result *r);

#endif
