/* cpu_omp.c -- the CPU peer a performance-minded C programmer writes by hand: OpenMP
 * loops over every core, for the cases of `gx bench` on the CPU backend.
 *
 * Build: cc -O3 -march=native -fopenmp -o cpu_omp bench/peers/cpu_omp.c -lm
 * Run:   OMP_NUM_THREADS=4 ./cpu_omp --sizes 10,16,20,24 --reps 30 [--filter S]
 * (scripts/bench-cpu builds and runs it beside gx bench and the NumPy peer.)
 *
 * Like gx bench: the same inputs (bench_bits in tools/bench_cases.h, rewritten here),
 * case names, byte counts (the fewest bytes the work must move) and "check" (the
 * result, or the f64 sum of the result array), the same work (l2dist includes its
 * sqrt; the iota case hashes each index, as gx's iota_hash_sum_i64), and the same
 * timing: the median wall time of one call (clock_gettime) over --reps runs after 3
 * warm-ups, the inputs and outputs rotated through copies as gx bench rotates them
 * (ceil(4 x the last-level cache / the working set) copies, at most 64).  One JSON
 * line per row, impl "omp", and a "memcpy" row: op copy, every thread memcpy-ing its
 * share of a buffer of at least 2^26 bytes, the machine's copy bandwidth.
 * OMP_NUM_THREADS sets the thread count (default: every core). */
#define _GNU_SOURCE
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXROT 64
#define MAXTHREADS 4096
#define WARMUPS 3

/* ------------------------------------------------------------ inputs */

/* gx bench's inputs: element i of seed s (tools/bench_cases.h, bench_bits). */
static inline uint64_t bench_bits(uint64_t seed, uint64_t i)
{
    uint64_t z = (seed << 40) + i + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Page-aligned, so that vector loads never split; filled by the threads that will read
 * it (first touch places pages near them on a many-socket machine). */
static void *buffer(int64_t n)
{
    size_t bytes = ((size_t)(n > 0 ? n : 1) * 4 + 4095) / 4096 * 4096;
    void *p = aligned_alloc(4096, bytes);
    if (!p) {
        fprintf(stderr, "cpu_omp: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

static float *make_f32(int64_t n, uint64_t seed)
{
    float *h = buffer(n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)(bench_bits(seed, (uint64_t)i) >> 40) * (1.0f / 16777216.0f);
    return h;
}

/* gx bench's i32 inputs: 0..1023. */
static int32_t *make_i32(int64_t n, uint64_t seed)
{
    int32_t *h = buffer(n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        h[i] = (int32_t)(bench_bits(seed, (uint64_t)i) >> 54);
    return h;
}

static void *clone(const void *src, int64_t n)
{
    char *d = buffer(n);
    const char *s = src;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n * 4; i += 4096)
        memcpy(d + i, s + i, (size_t)(n * 4 - i < 4096 ? n * 4 - i : 4096));
    return d;
}

static double sum_f64(const float *x, int64_t n)
{
    double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < n; i++)
        s += x[i];
    return s;
}

/* ------------------------------------------------------------ the cases */

/* One case's buffers; x, y and o are this call's (rotated) ones. */
typedef struct bench {
    int64_t n, rows, cols;
    void *in0[MAXROT], *in1[MAXROT], *out[MAXROT];
    int nrot, next;
    const float *x, *y;
    const int32_t *xi;
    float *o;
    float *fresh; /* *_new: the last call's result */
    double check; /* a scalar result */
    int64_t kept;
    float part[MAXTHREADS];
    int64_t cnt[MAXTHREADS];
} bench;

typedef void (*run_fn)(bench *b);

/* Thread t's share [lo, hi) of n. */
static void share(int64_t n, int64_t *lo, int64_t *hi)
{
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    *lo = n * t / nt;
    *hi = n * (t + 1) / nt;
}

/* Every thread memcpy-s its share: a copy as fast as this machine copies. */
static void par_memcpy(float *dst, const float *src, int64_t n)
{
#pragma omp parallel
    {
        int64_t lo, hi;
        share(n, &lo, &hi);
        memcpy(dst + lo, src + lo, (size_t)(hi - lo) * 4);
    }
}

static void run_copy(bench *b) { par_memcpy(b->o, b->x, b->n); }

static void run_sum(bench *b)
{
    const float *x = b->x;
    float s = 0;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < b->n; i++)
        s += x[i];
    b->check = s;
}

static void run_sum_i32(bench *b)
{
    const int32_t *x = b->xi;
    int64_t s = 0;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < b->n; i++)
        s += x[i];
    b->check = (double)s;
}

static void run_mean(bench *b)
{
    run_sum(b);
    b->check = (float)b->check / (float)b->n;
}

static void run_max(bench *b)
{
    const float *x = b->x;
    float m = -INFINITY;
#pragma omp parallel for simd reduction(max : m) schedule(static)
    for (int64_t i = 0; i < b->n; i++)
        m = x[i] > m ? x[i] : m;
    b->check = m;
}

/* The first index of the smallest of neg ? -x : x over [lo, hi), in blocks: a vector
 * minimum per block, and a scan for its index only in a block that improves.  An
 * empty share gives +inf. */
static inline int64_t arg_share(const float *x, int64_t lo, int64_t hi, const int neg, float *value)
{
    enum { BLOCK = 2048 };
    int64_t at = lo;
    float best = INFINITY;
    for (int64_t i0 = lo; i0 < hi; i0 += BLOCK) {
        int64_t i1 = hi - i0 < BLOCK ? hi : i0 + BLOCK;
        float m = best;
#pragma omp simd reduction(min : m)
        for (int64_t i = i0; i < i1; i++)
            m = (neg ? -x[i] : x[i]) < m ? (neg ? -x[i] : x[i]) : m;
        if (m < best) {
            for (at = i0; (neg ? -x[at] : x[at]) != m; at++)
                ;
            best = m;
        }
    }
    *value = best;
    return at;
}

/* Per-thread (value, index), then combined in thread order: ties keep the first. */
static inline void run_arg(bench *b, const int neg)
{
    int nt = 1;
#pragma omp parallel
    {
        int64_t lo, hi;
        share(b->n, &lo, &hi);
        int t = omp_get_thread_num();
        b->cnt[t] = arg_share(b->x, lo, hi, neg, &b->part[t]);
        if (t == 0)
            nt = omp_get_num_threads();
    }
    int w = 0;
    for (int t = 1; t < nt; t++)
        if (b->part[t] < b->part[w])
            w = t;
    b->check = (double)b->cnt[w];
}

static void run_argmin(bench *b) { run_arg(b, 0); }
static void run_argmax(bench *b) { run_arg(b, 1); }

/* sqrt(sum((x - y)^2)), the sqrt of the one value included (as in gx bench). */
static void run_l2(bench *b)
{
    const float *x = b->x, *y = b->y;
    float s = 0;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < b->n; i++)
        s += (x[i] - y[i]) * (x[i] - y[i]);
    b->check = sqrtf(s);
}

static void run_sin2cos2(bench *b)
{
    const float *x = b->x;
    float *o = b->o;
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < b->n; i++)
        o[i] = sinf(x[i]) * sinf(x[i]) + cosf(x[i]) * cosf(x[i]);
}

static void saxpy(const float *x, const float *y, float *o, int64_t n)
{
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++)
        o[i] = 2 * x[i] + y[i];
}

static void run_saxpy(bench *b) { saxpy(b->x, b->y, b->o, b->n); }

/* A result made each call: the previous one freed, a new one allocated. */
static void run_saxpy_new(bench *b)
{
    free(b->fresh);
    b->fresh = malloc((size_t)b->n * 4);
    saxpy(b->x, b->y, b->fresh, b->n);
}

/* Two passes: each thread sums its share, then scans it from the sum of the shares
 * before it. */
static void scan(bench *b, const float *x, float *o)
{
#pragma omp parallel
    {
        int64_t lo, hi;
        share(b->n, &lo, &hi);
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = lo; i < hi; i++)
            s += x[i];
        b->part[omp_get_thread_num()] = s;
#pragma omp barrier
        float run = 0;
        for (int t = 0; t < omp_get_thread_num(); t++)
            run += b->part[t];
        for (int64_t i = lo; i < hi; i++)
            o[i] = run += x[i];
    }
}

static void run_scan(bench *b) { scan(b, b->x, b->o); }

static void run_scan_new(bench *b)
{
    free(b->fresh);
    b->fresh = malloc((size_t)b->n * 4);
    scan(b, b->x, b->fresh);
}

/* Thread t writes the kept elements of its share from `at`, without branches: every
 * element is stored and the position moves only past kept ones.  The loop stops at
 * the share's last kept element, so no store lands past the share's own results,
 * where the next thread writes. */
static void select_share(const float *x, int64_t lo, int64_t hi, float *o, int64_t at)
{
    int64_t last = hi - 1;
    while (last >= lo && !(x[last] > 0.5f))
        last--;
    for (int64_t i = lo; i <= last; i++) {
        o[at] = x[i];
        at += x[i] > 0.5f;
    }
}

/* A parallel count, a prefix over the threads' counts, a parallel write. */
static void run_select(bench *b)
{
    const float *x = b->x;
#pragma omp parallel
    {
        int64_t lo, hi, c = 0;
        share(b->n, &lo, &hi);
#pragma omp simd reduction(+ : c)
        for (int64_t i = lo; i < hi; i++)
            c += x[i] > 0.5f;
        int t = omp_get_thread_num();
        b->cnt[t] = c;
#pragma omp barrier
        int64_t at = 0;
        for (int k = 0; k < t; k++)
            at += b->cnt[k];
        select_share(x, lo, hi, b->o, at);
        if (t == omp_get_num_threads() - 1)
            b->kept = at + c;
    }
}

/* gx bench's hist256_f32: 256 even bins over [0, 1), private bins per thread added
 * at the end (the natural OpenMP histogram).  Sorting has no such natural OpenMP
 * form (a parallel radix sort is a library, not a loop): NumPy is its CPU peer. */
static void run_hist256(bench *b)
{
    const float *x = b->x;
    int64_t bins[256] = {0};
#pragma omp parallel
    {
        int64_t mine[256] = {0}, lo, hi;
        share(b->n, &lo, &hi);
        for (int64_t i = lo; i < hi; i++) {
            float v = x[i];
            if (v >= 0.0f && v < 1.0f) {
                int k = (int)(v * 256.0f);
                mine[k < 256 ? k : 255]++;
            }
        }
        for (int k = 0; k < 256; k++) {
#pragma omp atomic
            bins[k] += mine[k];
        }
    }
    int64_t tot = 0;
    for (int k = 0; k < 256; k++)
        tot += bins[k];
    b->check = (double)tot;
}

static void run_sum_rows(bench *b)
{
    const float *x = b->x;
    float *o = b->o;
    int64_t cols = b->cols;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < b->rows; r++) {
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < cols; j++)
            s += x[r * cols + j];
        o[r] = s;
    }
}

/* Each thread owns a band of columns and adds every row's part of it. */
static void run_sum_cols(bench *b)
{
    const float *x = b->x;
    float *o = b->o;
#pragma omp parallel
    {
        int64_t lo, hi;
        share(b->cols, &lo, &hi);
        for (int64_t j = lo; j < hi; j++)
            o[j] = 0;
        for (int64_t r = 0; r < b->rows; r++) {
            const float *row = x + r * b->cols;
#pragma omp simd
            for (int64_t j = lo; j < hi; j++)
                o[j] += row[j];
        }
    }
}

/* gx bench's iota_hash_sum_i64: the sum of i -> (i ^ (i >> 7)) * 2654435761 % 1000 in
 * i64 (the product wrapping, as gx's integers do), which no compiler sums in closed
 * form. */
static void run_iota_sum(bench *b)
{
    int64_t s = 0;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < b->n; i++)
        s += (int64_t)((uint64_t)(i ^ (i >> 7)) * 2654435761u) % 1000;
    b->check = (double)s;
}

/* ------------------------------------------------------------ the case table */

enum { OUT_NONE, OUT_N, OUT_ROWS, OUT_COLS, OUT_FRESH };

/* One row of output.  rot: the inputs rotate as gx bench's do (set: the bytes one
 * call's rotated buffers hold, in units of 4n; rot_out: the outputs rotate too, as
 * gx's do wherever it writes into an existing array); bytes in units of 4n (select
 * adds its kept elements).  A result made anew each call (the *_new cases, select)
 * does not rotate: the allocator hands back the block just freed, as gx's pool does. */
typedef struct omp_case {
    const char *name, *dtype;
    run_fn run;
    int nin;
    uint64_t seed[2];
    int out;
    bool rot, rot_out;
    double set, bytes;
} omp_case;

static const omp_case cases[] = {
    {"copy", "f32", run_copy, 1, {1, 0}, OUT_N, true, true, 2, 2},
    {"h2d", "f32", run_copy, 1, {31, 0}, OUT_N, true, true, 2, 2},
    {"d2h", "f32", run_copy, 1, {32, 0}, OUT_N, true, true, 2, 2},
    {"map_sin2cos2", "f32", run_sin2cos2, 1, {11, 0}, OUT_N, true, true, 2, 2},
    {"map_saxpy", "f32", run_saxpy, 2, {11, 12}, OUT_N, true, true, 3, 3},
    {"map_saxpy_new", "f32", run_saxpy_new, 2, {11, 12}, OUT_FRESH, true, false, 2, 3},
    {"sum", "f32", run_sum, 1, {21, 0}, OUT_NONE, true, false, 1, 1},
    {"sum", "i32", run_sum_i32, 1, {20, 0}, OUT_NONE, true, false, 1, 1},
    {"max", "f32", run_max, 1, {21, 0}, OUT_NONE, true, false, 1, 1},
    {"argmin", "f32", run_argmin, 1, {21, 0}, OUT_NONE, true, false, 1, 1},
    {"argmax", "f32", run_argmax, 1, {21, 0}, OUT_NONE, true, false, 1, 1},
    {"mean", "f32", run_mean, 1, {21, 0}, OUT_NONE, true, false, 1, 1},
    {"l2dist", "f32", run_l2, 2, {21, 22}, OUT_NONE, true, false, 2, 2},
    {"sum_rows", "f32", run_sum_rows, 1, {23, 0}, OUT_ROWS, true, true, 1, 1},
    {"sum_cols", "f32", run_sum_cols, 1, {23, 0}, OUT_COLS, true, true, 1, 1},
    {"scan_sum", "f32", run_scan, 1, {21, 0}, OUT_N, true, true, 2, 2},
    {"scan_sum_new", "f32", run_scan_new, 1, {21, 0}, OUT_FRESH, true, false, 1, 2},
    {"select_gt05", "f32", run_select, 1, {22, 0}, OUT_N, true, false, 1, 1},
    {"iota_hash_sum_i64", "i64", run_iota_sum, 0, {0, 0}, OUT_NONE, false, false, 0, 0},
    {"hist256_f32", "f32", run_hist256, 1, {51, 0}, OUT_NONE, true, false, 1, 1},
};

/* ------------------------------------------------------------ timing */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The next call's buffers, round the rotation. */
static void call(bench *b, run_fn run)
{
    int k = b->next++ % b->nrot;
    b->x = b->in0[k];
    b->xi = b->in0[k];
    b->y = b->in1[k];
    b->o = b->out[k] ? b->out[k] : b->out[0];
    run(b);
}

/* Median of up to `reps` timed calls after the warm-ups; a call slower than
 * max_s / reps gets fewer runs (at least 3), and *done says how many. */
static double time_calls(bench *b, run_fn run, int reps, double max_s, int *done)
{
    double t0 = now_us();
    for (int i = 0; i < WARMUPS; i++)
        call(b, run);
    double per = (now_us() - t0) / WARMUPS;
    if (per * reps > max_s * 1e6)
        reps = per * 3 > max_s * 1e6 ? 3 : (int)(max_s * 1e6 / per);
    double *t = malloc((size_t)reps * sizeof *t);
    for (int i = 0; i < reps; i++) {
        double a = now_us();
        call(b, run);
        t[i] = now_us() - a;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    free(t);
    *done = reps;
    return med;
}

/* ------------------------------------------------------------ one case */

static size_t llc_bytes(void)
{
    long l = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l <= 0)
        l = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l > 0 ? (size_t)l : 0;
}

/* gx bench's bench_rot_count: ceil(4 llc / set), at most 64. */
static int rot_count(double set_bytes)
{
    double llc = (double)llc_bytes();
    if (llc <= 0 || set_bytes <= 0)
        return 1;
    double k = ceil(4.0 * llc / set_bytes);
    return k <= 1 ? 1 : k >= MAXROT ? MAXROT : (int)k;
}

/* gx bench's matrix of n elements: rows a power of two, as square as it goes. */
static void matrix_shape(int64_t n, int64_t *rows, int64_t *cols)
{
    int64_t side = 1;
    while ((side * 2) * (side * 2) <= n)
        side *= 2;
    *rows = side;
    *cols = n / side;
}

static void setup(bench *b, const omp_case *c, int64_t n)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    matrix_shape(n, &b->rows, &b->cols);
    b->nrot = c->rot ? rot_count(c->set * 4.0 * (double)n) : 1;
    if (c->nin > 0)
        b->in0[0] = strcmp(c->dtype, "i32") == 0 ? (void *)make_i32(n, c->seed[0]) : make_f32(n, c->seed[0]);
    if (c->nin > 1)
        b->in1[0] = make_f32(n, c->seed[1]);
    for (int k = 1; k < b->nrot; k++) {
        b->in0[k] = clone(b->in0[0], n);
        b->in1[k] = c->nin > 1 ? clone(b->in1[0], n) : NULL;
    }
    int64_t outn = c->out == OUT_ROWS ? b->rows : c->out == OUT_COLS ? b->cols : n;
    for (int k = 0; c->out != OUT_NONE && c->out != OUT_FRESH && k < (c->rot_out ? b->nrot : 1); k++)
        b->out[k] = make_f32(outn, 99); /* touched, as gx's existing arrays are */
}

static void teardown(bench *b)
{
    for (int k = 0; k < MAXROT; k++) {
        free(b->in0[k]);
        free(b->in1[k]);
        free(b->out[k]);
    }
    free(b->fresh);
}

/* The check: the scalar result, else the f64 sum of the last call's result. */
static double check_of(const bench *b, const omp_case *c)
{
    switch (c->out) {
    case OUT_NONE: return b->check;
    case OUT_FRESH: return sum_f64(b->fresh, b->n);
    case OUT_ROWS: return sum_f64(b->o, b->rows);
    case OUT_COLS: return sum_f64(b->o, b->cols);
    default: return sum_f64(b->o, c->run == run_select ? b->kept : b->n);
    }
}

static void print_row(const char *impl, const char *op, const char *dtype, int64_t n, double us, double bytes,
                      double elems, int reps, int rot, double check)
{
    printf("{\"impl\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"n\":%lld,\"median_us\":%.3f,\"bytes\":%.0f,"
           "\"flops\":0,\"elems\":%.0f,\"reps\":%d,\"rot\":%d,\"threads\":%d,\"check\":%.17g}\n",
           impl, op, dtype, (long long)n, us, bytes, elems, reps, rot, omp_get_max_threads(), check);
    fflush(stdout);
}

static void run_case(const omp_case *c, int64_t n, int reps, double max_s)
{
    static bench b; /* large (per-thread partials): not on the stack */
    if (c->run == run_iota_sum)
        n *= 2; /* gx bench's iota pipelines run at 2n */
    setup(&b, c, n);
    int done = 0;
    double us = time_calls(&b, c->run, reps, max_s, &done);
    double bytes = c->bytes * 4.0 * (double)n + (c->run == run_select ? 4.0 * (double)b.kept : 0);
    double elems = c->run == run_iota_sum ? (double)n : 0;
    print_row("omp", c->name, c->dtype, n, us, bytes, elems, done, b.nrot, check_of(&b, c));
    teardown(&b);
}

/* The machine's copy bandwidth: every thread's memcpy over a buffer of n elements. */
static void run_memcpy_row(int64_t n, int reps, double max_s)
{
    static bench b;
    setup(&b, &cases[0], n);
    int done = 0;
    double us = time_calls(&b, run_copy, reps, max_s, &done);
    print_row("memcpy", "copy", "f32", n, us, 8.0 * (double)n, 0, done, b.nrot, sum_f64(b.o, n));
    teardown(&b);
}

/* ------------------------------------------------------------ options */

typedef struct opts {
    int sizes[16], nsizes, reps;
    double max_s;
    const char *filter;
} opts;

/* gx bench's --filter: comma-separated items; =NAME matches that name alone, any
 * other item every name that contains it. */
static bool selected(const char *filter, const char *name)
{
    if (!filter || !*filter)
        return true;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", filter);
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save))
        if (it[0] == '=' ? strcmp(name, it + 1) == 0 : strstr(name, it) != NULL)
            return true;
    return false;
}

static int parse_sizes(opts *o, const char *s)
{
    o->nsizes = 0;
    for (char *end; *s && o->nsizes < 16; s = *end ? end + 1 : end) {
        long e = strtol(s, &end, 10);
        if (end == s || e < 0 || e > 33 || (*end && *end != ','))
            return -1;
        o->sizes[o->nsizes++] = (int)e;
    }
    return o->nsizes > 0 ? 0 : -1;
}

static int usage(int rc)
{
    fprintf(rc ? stderr : stdout,
            "usage: cpu_omp [--sizes 10,16,20,24] [--reps 30] [--filter S] [--max-seconds 10]\n"
            "OpenMP peer of gx bench on the CPU: JSON lines on stdout (impl \"omp\", and a \"memcpy\" copy row).\n"
            "OMP_NUM_THREADS sets the threads.  --filter: as gx bench's (S,T: either; =NAME: that case alone).\n");
    return rc;
}

static int parse_args(int argc, char **argv, opts *o)
{
    *o = (opts){{10, 16, 20, 24}, 4, 30, 10.0, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            exit(usage(0));
        if (!v)
            return usage(2);
        i++;
        if (strcmp(a, "--sizes") == 0 && parse_sizes(o, v) == 0)
            continue;
        if (strcmp(a, "--reps") == 0 && (o->reps = atoi(v)) >= 1)
            continue;
        if (strcmp(a, "--max-seconds") == 0 && (o->max_s = atof(v)) > 0)
            continue;
        if (strcmp(a, "--filter") == 0) {
            o->filter = v;
            continue;
        }
        fprintf(stderr, "cpu_omp: bad option or value: %s %s\n", a, v);
        return usage(2);
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse_args(argc, argv, &o) != 0)
        return 2;
    int maxe = 0;
    for (int i = 0; i < o.nsizes; i++)
        maxe = o.sizes[i] > maxe ? o.sizes[i] : maxe;
    if (omp_get_max_threads() > MAXTHREADS) {
        fprintf(stderr, "cpu_omp: at most %d threads\n", MAXTHREADS);
        return 2;
    }
    printf("{\"impl\":\"meta\",\"lib\":\"OpenMP\",\"version\":\"%d\",\"threads\":%d,\"llc_bytes\":%zu}\n", _OPENMP,
           omp_get_max_threads(), llc_bytes());
    run_memcpy_row((int64_t)1 << (maxe > 24 ? maxe : 24), o.reps, o.max_s);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (!selected(o.filter, cases[c].name))
            continue;
        for (int i = 0; i < o.nsizes; i++) {
            fprintf(stderr, "cpu_omp: %s %s 2^%d\n", cases[c].name, cases[c].dtype, o.sizes[i]);
            run_case(&cases[c], (int64_t)1 << o.sizes[i], o.reps, o.max_s);
        }
    }
    return 0;
}
