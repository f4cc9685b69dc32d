/* bench_check.c -- what `gx bench` needs to check its rows: verdicts, sampled
 * positions, results read back, the host inputs kept for the references, and the
 * multi-threaded host copy that is the CPU backend's copy ceiling.
 *
 * Every row's result is compared with a host reference computed from the same
 * inputs in the same run (the inputs are a formula of seed and index, bench_bits):
 * exact where the result is exact (copies, integers, max/min, indices, counts,
 * selections, gx_rand's bits), within a bound derived from the operation's accuracy
 * where it rounds (f32 sums: gx/reduce.h's bound), at sampled positions where the
 * reference is dear (transcendental maps, scans).  A mismatch makes the row WRONG. */
#include "bench_cases.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ verdicts */

bench_result bench_row(const char *impl, const char *op, const char *dtype, int64_t n, double median_us, double bytes,
                       double flops, double elems, double footprint)
{
    bench_result r;
    memset(&r, 0, sizeof r);
    r.impl = impl, r.op = op, r.dtype = dtype, r.n = n, r.median_us = median_us;
    r.bytes = bytes, r.flops = flops, r.elems = elems, r.footprint = footprint;
    return r;
}

void bench_pass(bench_result *r)
{
    if (r->verdict != BENCH_WRONG)
        r->verdict = BENCH_OK;
}

void bench_verdict(bench_result *r, bool ok, const char *fmt, ...)
{
    if (r->verdict == BENCH_WRONG)
        return; /* the first failure says what went wrong */
    r->verdict = ok ? BENCH_OK : BENCH_WRONG;
    r->why[0] = 0;
    if (ok)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
}

void bench_nocheck(bench_result *r, const char *why)
{
    r->verdict = BENCH_NOCHECK;
    snprintf(r->why, sizeof r->why, "%s", why);
}

/* ------------------------------------------------------------ positions and results */

int bench_sample_idx(int64_t n, int64_t *idx)
{
    if (n <= BENCH_SAMPLES + 2) {
        for (int64_t i = 0; i < n; i++)
            idx[i] = i;
        return (int)n;
    }
    int k = 0;
    idx[k++] = 0;
    for (int j = 0; j < BENCH_SAMPLES; j++) {
        int64_t lo = n * j / BENCH_SAMPLES, hi = n * (j + 1) / BENCH_SAMPLES;
        idx[k++] = lo + (int64_t)(bench_bits(77, (uint64_t)j) % (uint64_t)(hi - lo));
    }
    idx[k++] = n - 1;
    return k;
}

gx_status bench_fetch(const gx_array *a, void **host)
{
    gx_array_desc d;
    *host = NULL;
    gx_status s = gx_array_describe(a, &d);
    if (s != GX_OK)
        return s;
    size_t bytes = (size_t)d.size * gx_dtype_size(d.dtype);
    *host = malloc(bytes ? bytes : 1);
    if (!*host)
        return GX_ERR_OUT_OF_MEMORY;
    s = gx_array_to_host(a, *host, bytes);
    if (s != GX_OK) {
        free(*host);
        *host = NULL;
    }
    return s;
}

/* Element 0 of a, in a gx_scalar of its dtype. */
static gx_status read_first(const gx_array *a, gx_scalar *v)
{
    gx_array_desc d;
    gx_status s = gx_array_describe(a, &d);
    if (s != GX_OK)
        return s;
    int64_t zero[GX_MAX_DIMS] = {0};
    union {
        float f32;
        double f64;
        int32_t i32;
        int64_t i64;
        uint32_t u32;
        uint64_t u64;
        unsigned char b[16];
    } u = {0};
    s = gx_array_get(a, zero, &u);
    if (s != GX_OK)
        return s;
    v->dtype = d.dtype;
    switch (d.dtype) {
    case GX_F32: v->v.f = u.f32; break;
    case GX_F64: v->v.f = u.f64; break;
    case GX_I32: v->v.i = u.i32; break;
    case GX_I64: v->v.i = u.i64; break;
    case GX_U32: v->v.u = u.u32; break;
    case GX_U64: v->v.u = u.u64; break;
    default: return GX_ERR_DTYPE;
    }
    return GX_OK;
}

gx_status bench_read_f64(const gx_array *a, double *v)
{
    gx_scalar s;
    gx_status st = read_first(a, &s);
    if (st == GX_OK)
        *v = gx_scalar_to_f64(s);
    return st;
}

gx_status bench_read_i64(const gx_array *a, int64_t *v)
{
    gx_scalar s;
    gx_status st = read_first(a, &s);
    if (st == GX_OK)
        *v = s.dtype == GX_F32 || s.dtype == GX_F64 ? (int64_t)s.v.f : s.v.i;
    return st;
}

void bench_check_f32_sum(bench_result *r, double got, long double want, int64_t n, const char *what)
{
    /* gx/reduce.h: |error| <= eps_f32 |S| + n eps_f64 sum|x|; the inputs are >= 0, so
     * sum|x| = S.  The long double reference adds at most n 2^-63 S of its own. */
    double s = fabs((double)want);
    double tol = 0x1p-23 * s + (double)n * 0x1p-52 * s + (double)n * 0x1p-63 * s;
    double err = fabs((double)((long double)got - want));
    bench_verdict(r, err <= tol, "%s %.9g, host %.9Lg: off by %.3g > %.3g (eps_f32 |S| + n eps_f64 sum|x|)", what, got,
                  want, err, tol);
}

/* ------------------------------------------------------------ host inputs, kept */

/* Four sets: a case reads at most two (x and y), and the next case's are made anew. */
#define KEPT 4
static struct {
    float *h;
    int64_t n;
    uint64_t seed, used;
} kept[KEPT];
static uint64_t kept_clock;

float *bench_host_f32(int64_t n, uint64_t seed)
{
    float *h = malloc((size_t)(n > 0 ? n : 1) * sizeof *h);
    for (int64_t i = 0; h && i < n; i++)
        h[i] = bench_f32_at(seed, i);
    return h;
}

const float *bench_inputs_f32(int64_t n, uint64_t seed)
{
    int lru = 0;
    for (int i = 0; i < KEPT; i++) {
        if (kept[i].h && kept[i].n == n && kept[i].seed == seed) {
            kept[i].used = ++kept_clock;
            return kept[i].h;
        }
        if (kept[i].used < kept[lru].used)
            lru = i;
    }
    free(kept[lru].h);
    kept[lru].h = bench_host_f32(n, seed);
    kept[lru].n = n, kept[lru].seed = seed, kept[lru].used = ++kept_clock;
    return kept[lru].h;
}

gx_status bench_output_f32(gx_ctx *ctx, int64_t n, gx_array **out)
{
    gx_status s = gx_array_empty(ctx, GX_F32, 1, &n, out);
    if (s == GX_OK)
        s = gx_array_fill_f64(*out, NAN);
    if (s != GX_OK) {
        gx_array_release(*out);
        *out = NULL;
    }
    return s;
}

gx_status bench_outputs_f32(gx_ctx *ctx, int64_t n, int k, gx_array **out, int *made)
{
    gx_status s = GX_OK;
    for (*made = 0; s == GX_OK && *made < k; (*made)++)
        s = bench_output_f32(ctx, n, &out[*made]);
    if (s != GX_OK)
        (*made)--; /* the failed one made nothing */
    return s;
}

void bench_inputs_free(void)
{
    for (int i = 0; i < KEPT; i++) {
        free(kept[i].h);
        kept[i].h = NULL;
        kept[i].used = 0;
    }
}

/* ------------------------------------------------------------ the host copy ceiling */

int bench_host_threads(gx_ctx *ctx)
{
    const char *e = getenv("GX_CPU_THREADS");
    char *end;
    long t = e && *e ? strtol(e, &end, 10) : 0;
    if (t >= 1 && t <= 4096 && e && *end == 0)
        return (int)t;
    gx_device_info d;
    if (gx_device_info_get(ctx, &d) == GX_OK && d.multiprocessors > 0)
        return d.multiprocessors;
    return 1;
}

/* A pool of helper threads alive for one bench_par_copy series (the caller is share
 * 0): a helper spins a while for the next copy, then sleeps on a condition variable,
 * so it costs gx's own rows nothing once the references are done. */
#define POOL_MAX 256
#define SPINS 20000
typedef struct copy_pool {
    pthread_t th[POOL_MAX];
    int nth; /* helpers started */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    _Atomic uint64_t gen;
    _Atomic int pending;
    bool quit;
    float *dst;
    const float *src;
    int64_t n;
} copy_pool;

typedef struct helper_arg {
    copy_pool *p;
    int share;
} helper_arg;
static helper_arg helper_args[POOL_MAX];
static copy_pool pool;
static int pool_threads; /* shares of the running pool, 0: none */

/* Share s of nshares, its bounds a multiple of 16 floats (64 bytes: no line written
 * by two threads). */
static void copy_share(copy_pool *p, int s, int nshares)
{
    int64_t lines = (p->n + 15) / 16;
    int64_t lo = lines * s / nshares * 16, hi = lines * (s + 1) / nshares * 16;
    hi = hi < p->n ? hi : p->n;
    if (hi > lo)
        memcpy(p->dst + lo, p->src + lo, (size_t)(hi - lo) * sizeof(float));
}

static void *helper(void *v)
{
    helper_arg *a = v;
    copy_pool *p = a->p;
    uint64_t seen = 0;
    for (;;) {
        uint64_t g = atomic_load(&p->gen);
        for (int i = 0; i < SPINS && g == seen; i++)
            g = atomic_load(&p->gen);
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            while ((g = atomic_load(&p->gen)) == seen && !p->quit)
                pthread_cond_wait(&p->go, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (p->quit)
            return NULL;
        seen = g;
        copy_share(p, a->share, p->nth + 1);
        if (atomic_fetch_sub(&p->pending, 1) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void pool_stop(void)
{
    if (pool_threads == 0)
        return;
    pthread_mutex_lock(&pool.mu);
    pool.quit = true;
    atomic_fetch_add(&pool.gen, 1);
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < pool.nth; i++)
        pthread_join(pool.th[i], NULL);
    pthread_mutex_destroy(&pool.mu);
    pthread_cond_destroy(&pool.go);
    pthread_cond_destroy(&pool.done);
    pool_threads = 0;
}

/* A pool of `threads` shares (threads - 1 helpers); false if none could start. */
static bool pool_start(int threads)
{
    if (pool_threads == threads)
        return true;
    pool_stop();
    memset(&pool, 0, sizeof pool);
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.go, NULL);
    pthread_cond_init(&pool.done, NULL);
    int want = (threads < POOL_MAX ? threads : POOL_MAX) - 1;
    for (int i = 0; i < want; i++) {
        helper_args[i] = (helper_arg){&pool, i + 1};
        if (pthread_create(&pool.th[i], NULL, helper, &helper_args[i]) != 0)
            break;
        pool.nth++;
    }
    pool_threads = threads;
    return true;
}

void bench_par_copy(float *dst, const float *src, int64_t n, int threads)
{
    if (threads <= 0) { /* the series is over: the helpers end */
        pool_stop();
        return;
    }
    if (threads == 1 || !pool_start(threads) || pool.nth == 0) {
        memcpy(dst, src, (size_t)n * sizeof(float));
        return;
    }
    pool.dst = dst, pool.src = src, pool.n = n;
    atomic_store(&pool.pending, pool.nth);
    pthread_mutex_lock(&pool.mu);
    atomic_fetch_add(&pool.gen, 1);
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.mu);
    copy_share(&pool, 0, pool.nth + 1);
    for (int i = 0; i < SPINS && atomic_load(&pool.pending) > 0; i++)
        ;
    if (atomic_load(&pool.pending) > 0) {
        pthread_mutex_lock(&pool.mu);
        while (atomic_load(&pool.pending) > 0)
            pthread_cond_wait(&pool.done, &pool.mu);
        pthread_mutex_unlock(&pool.mu);
    }
}
