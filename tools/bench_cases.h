/* bench_cases.h -- the cases `gx bench` runs; one table, grown as operations land. */
#ifndef GX_BENCH_CASES_H
#define GX_BENCH_CASES_H

#include "gx.h"
#include <stdbool.h>

/* A row's verdict: its result against a host reference computed from the same inputs
 * in the same run (bench_check.c).  UNCHECKED is a case that forgot its check: the
 * driver counts it as a failure, never as a pass. */
enum { BENCH_UNCHECKED = 0, BENCH_OK, BENCH_WRONG, BENCH_NOCHECK };

typedef struct bench_result {
    const char *impl, *op, *dtype;
    int64_t n;
    double median_us, bytes, flops, elems;
    /* Distinct bytes the timed runs cycle through (inputs and outputs rotated through
     * bench_rot_count copies); 0 = just `bytes`.  Against the cache size, it says
     * whether the rate is the cache's or memory's (the * mark in the table). */
    double footprint;
    /* A value computed from the result after the timed runs (the result itself for a
     * scalar, else the f64 sum of its elements), for --json's "check": the CPU peers
     * (bench/peers/cpu_*) compute the same from the same inputs, so a wrong result
     * shows up beside its time.  has_check 0: none. */
    double check;
    int has_check;
    /* BENCH_OK / BENCH_WRONG / BENCH_NOCHECK, and what went wrong (WRONG) or why no
     * check is possible (NOCHECK): --json's "ok" (true / false / null) and "why". */
    int verdict;
    char why[200];
    int threads; /* the host references: threads they ran on (0: not one of them) */
} bench_result;

typedef gx_status (*bench_case_fn)(void *state);
gx_status bench_time(gx_ctx *ctx, bench_case_fn fn, void *state, int reps, double *median_us);
/* How many copies of a working set of set_bytes keep runs from reusing the cache. */
#define BENCH_MAXROT 64
int bench_rot_count(gx_ctx *ctx, double set_bytes);
/* copies[0] = a, then dense clones of a until there are k; *n says how many copies
 * exist (a included), also after a failure, so the caller can release them. */
gx_status bench_clones(gx_array *a, int k, gx_array **copies, int *n);

/* Runs one case at size n; writes up to BENCH_MAXROWS rows (gx, and on CPU the plain-C references). */
#define BENCH_MAXROWS 8
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
gx_status bench_case_iota_hash_sum(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_launch_latency(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                    int *nrows);
gx_status bench_case_pipeline_count(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                    int *nrows);
gx_status bench_case_pipeline_l2count(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                      int *nrows);

/* bench_latency.c: host time of warm small calls; a 10-call chain direct vs graph replay */
gx_status bench_case_host_overhead_map(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                       int *nrows);
gx_status bench_case_host_overhead_reduce(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                          int *nrows);
gx_status bench_case_host_overhead_scan(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                        int *nrows);
gx_status bench_case_host_overhead_filter_into(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps,
                                               bench_result *rows, int *nrows);
gx_status bench_case_host_overhead_filter(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                          int *nrows);
gx_status bench_case_lat_sum_to_host(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
    int *nrows);
gx_status bench_case_lat_scan_sync(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
    int *nrows);
gx_status bench_case_lat_filter_new(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
    int *nrows);
gx_status bench_case_lat_map_sync(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
    int *nrows);
gx_status bench_case_host_overhead_driver_launch(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps,
    bench_result *rows, int *nrows);
gx_status bench_case_floor_launch_sync(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
    int *nrows);
gx_status bench_case_floor_launch_d2h_sync(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
    int *nrows);
gx_status bench_case_graph_chain10(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                   int *nrows);
gx_status bench_case_graph_nodes(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);

/* bench_gather.c: gathers fused into maps (gx_bind) */
gx_status bench_case_gather_map(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
/* bench_kernel.c: a user kernel (vadd through gx_at), unchecked and checked */
gx_status bench_case_kernel_vadd(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
/* bench_segment.c: ragged segments */
gx_status bench_case_segsum(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_segsum_long(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_reduce_by_key(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                   int *nrows);
/* bench_index.c: gather, scatter-add (atomic and deterministic), where */
gx_status bench_case_take(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_index_add_rows(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                    int *nrows);
gx_status bench_case_scatter_add(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_scatter_add_det(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                     int *nrows);
gx_status bench_case_where(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);

/* bench_half.c: f16 / bf16 (sum, sin^2+cos^2, l2 distance; GEMM in TFLOP/s) */
gx_status bench_case_sum_f16(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_sin2cos2_f16(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                  int *nrows);
gx_status bench_case_l2dist_f16(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_gemm_f16(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_gemm_bf16(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
/* bench_sort.c: sorting and histograms */
gx_status bench_case_sort_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_sort_u32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_argsort_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_sort_rows_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                   int *nrows);
gx_status bench_case_hist256_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_sort_pairs_u32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                    int *nrows);
gx_status bench_case_topk100_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_unique_i32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_searchsorted_f32(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows,
                                      int *nrows);

/* Times gx_map of a user lambda over random f32 inputs (one per parameter).  The check
 * (on a GPU) runs the lambda on the CPU backend over the sampled inputs; define_name
 * and define_src (may be NULL) are --define's file, given to that context too. */
gx_status bench_custom_map(gx_ctx *ctx, int64_t n, int reps, const char *lambda, const char *define_name,
                           const char *define_src, bench_result *rows, int *nrows);
gx_status bench_case_fill(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_jit(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
gx_status bench_case_pool(gx_ctx *ctx, gx_backend_kind k, int64_t n, int reps, bench_result *rows, int *nrows);
/* CPU references for a case, on the inputs gx's rows use: "memcpy", a copy of the same
 * bytes split over every thread gx uses (bench_host_threads), and "c_loop_1t", a plain
 * C loop on one thread (which: 1 sin^2+cos^2, 2 saxpy, 3 sum); appends two rows. */
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
/* Element i of the f32 inputs of `seed` (the top 24 bits / 2^24, in [0, 1)) and of
 * the i32 inputs (the top 10 bits, 0..1023): a sampled check recreates any element
 * without the whole array. */
static inline float bench_f32_at(uint64_t seed, int64_t i)
{
    return (float)(bench_bits(seed, (uint64_t)i) >> 40) * (1.0f / 16777216.0f);
}
static inline int32_t bench_i32_at(uint64_t seed, int64_t i) { return (int32_t)(bench_bits(seed, (uint64_t)i) >> 54); }
/* Host f32 inputs of `seed` (bench_bits); NULL when out of memory.  Free with free(). */
float *bench_host_f32(int64_t n, uint64_t seed);
/* The same, kept for the checks that read every input (a few of the latest sets, so
 * that the large sizes are made once per case, not once per row): do not free.  NULL
 * when out of memory.  bench_inputs_free releases them all. */
const float *bench_inputs_f32(int64_t n, uint64_t seed);
void bench_inputs_free(void);
/* The inputs of `seed` on the device. */
gx_status bench_random_f32(gx_ctx *ctx, int64_t n, uint64_t seed, gx_array **out);
/* A new f32 output array of n elements, every byte written (NaN), as the peers' outputs
 * are: a timed run never pays for a first touch of fresh host pages. */
gx_status bench_output_f32(gx_ctx *ctx, int64_t n, gx_array **out);
/* k of them in out[0..k); *made says how many exist, also after a failure. */
gx_status bench_outputs_f32(gx_ctx *ctx, int64_t n, int k, gx_array **out, int *made);
/* Sets r's check to the f64 sum of a's elements (see bench_result). */
gx_status bench_check(gx_ctx *ctx, gx_array *a, bench_result *r);

/* ------------------------------------------------------------ checks (bench_check.c) */

/* A row with no check made yet (the fields after footprint zero). */
bench_result bench_row(const char *impl, const char *op, const char *dtype, int64_t n, double median_us, double bytes,
                       double flops, double elems, double footprint);
/* r passed its check (unless an earlier part of it failed). */
void bench_pass(bench_result *r);
/* r's verdict: BENCH_OK when ok, else BENCH_WRONG with the message (printf-like). */
void bench_verdict(bench_result *r, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* r has no result a reference could check, and why. */
void bench_nocheck(bench_result *r, const char *why);
/* A sampled check reads BENCH_SAMPLES positions spread over the array (one at a
 * random offset in each of as many equal strides), plus the first and the last; every
 * position when n is not larger.  Returns the count; idx holds BENCH_SAMPLES + 2. */
#define BENCH_SAMPLES 4096
int bench_sample_idx(int64_t n, int64_t *idx);
/* The whole array (any dtype, dense row-major) in a new host buffer; free() it. */
gx_status bench_fetch(const gx_array *a, void **host);
/* Element 0 of a (a reduction's result) as a double / as an int64 (any dtype). */
gx_status bench_read_f64(const gx_array *a, double *v);
gx_status bench_read_i64(const gx_array *a, int64_t *v);
/* Checks a f32 sum of n non-negative terms (gx/reduce.h: accumulated in f64, rounded
 * once) against the exact sum `want` (a long double host sum): |got - want| <=
 * eps_f32 |want| + n eps_f64 sum|x|, sum|x| = want here. */
void bench_check_f32_sum(bench_result *r, double got, long double want, int64_t n, const char *what);
/* The threads the host references use: GX_CPU_THREADS when set (as gx's CPU backend
 * reads it), else every core gx counts. */
int bench_host_threads(gx_ctx *ctx);
/* dst[i] = src[i] for n floats, the copy split over `threads` threads (pthreads). */
void bench_par_copy(float *dst, const float *src, int64_t n, int threads);

#endif
