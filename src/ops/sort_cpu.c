/* sort_cpu.c -- sorting, top-k and histograms on the CPU backend (GX__CAP_HOST:
 * device pointers are host pointers, and launch.run runs library functions of the
 * CPU kernel signature over the worker threads).
 *
 * Sorting maps every key to an unsigned integer whose unsigned order is sort_priv.h's
 * order (ints: sign bit flipped; floats: negatives complemented, positives with the
 * sign bit set, -0.0 as 0.0, every NaN to all ones, past +inf; descending: the
 * complement, NaN kept at all ones), so one stable unsigned sort serves every dtype
 * and both directions.  Long single rows: one parallel stable MSD scatter into about
 * 256 buckets of equal size (a 12-bit window of the keys), then per-bucket
 * one-thread sorts in cache (see "one long row"), or a parallel LSD radix sort (8-bit
 * digits, per-chunk counts, positions ordered by (digit, chunk), stable scatter) when
 * one bucket would hold too much of the work.  Rows: one row per worker at a time,
 * merge sort up to 64 keys, 8-bit LSD radix sort above.
 *
 * Keys-only sorts write keys back from their mapped form; the mapping loses the bits
 * of -0.0 and of non-canonical NaNs, so when the mapping counted any, the zero and
 * NaN ranges of each row are rewritten from the input in input order (stable).
 * Sorts with values carry each key's position as a payload and gather the keys and
 * values by it, which keeps the original bits anyway.
 *
 * Top-k: long rows with a small k use the same key mapping for a radix select (see
 * "top-k"); other rows are sorted whole. */
#include "core/gx_internal.h"
#include "ops/sort_cpu.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define SC_SMALL_ROW 64          /* rows up to this: merge sort; longer: radix (8-bit digits) */
#define SC_PBITS 8               /* digit bits of the parallel LSD radix sort */
#define SC_PRADIX (1 << SC_PBITS)
#define SC_PAR_MIN (1 << 15)     /* single rows from this length: the parallel radix sort */
#define SC_CHUNKS_PER_WORKER 1   /* chunks of the parallel radix sort per worker */
#define SC_WBITS 12              /* the window of key bits that picks a long row's top-level bucket */
#define SC_WBINS (1 << SC_WBITS)
#define SC_L1_BYTES (32 << 10)   /* keys (and positions) up to this: LSD-sorted in L1 at once */
#define SC_PIECE_BYTES (16 << 10) /* larger ones: MSD-split into pieces of about this */
/* The second buffer of keys (and of positions) starts this far from a multiple of
 * 4 KB after the first: key i of both would otherwise share its address's low 12
 * bits, and a load that matches a store in flight in those bits waits for it (4K
 * aliasing).  A scatter from one buffer into the other at the same offsets took
 * 20 ms for 2^20 u32 keys on one core, 14 ms with the buffers 1088 bytes apart. */
#define SC_SKEW 1088
/* A write prefetch of a scatter's next line (why: see "one long row"). */
#define SC_PFW(p) __builtin_prefetch((p), 1)

/* Receives a sorted piece of a bucket: outputs [o, o + n), mapped keys k, positions p. */
typedef void (*sc_emit_fn)(const void *cx, int64_t o, int64_t n, const void *k, const uint64_t *p);

typedef void (*sc_entry)(const void *args, int64_t begin, int64_t end, int thread);

/* Runs fn over items [0, n) on the worker threads, one item a part where possible. */
static gx_status sc_run_work(gx_ctx *ctx, sc_entry fn, const void *args, size_t size, int64_t n, int64_t work)
{
    gx__func f;
    memcpy(&f, &fn, sizeof f);
    gx__launch l;
    memset(&l, 0, sizeof l);
    l.n = n, l.cpu_align = 1, l.cpu_work = work, l.args = args, l.args_size = size;
    return ctx->be.iface->launch.run(&ctx->be, f, &l);
}

static gx_status sc_run(gx_ctx *ctx, sc_entry fn, const void *args, size_t size, int64_t n)
{
    return sc_run_work(ctx, fn, args, size, n, 1 << 20);
}

#define SC_K uint32_t
#define SC_F(name) sc32_##name
#include "ops/sort_cpu_tmpl.h"
#undef SC_K
#undef SC_F
#define SC_K uint64_t
#define SC_F(name) sc64_##name
#include "ops/sort_cpu_tmpl.h"
#undef SC_K
#undef SC_F

/* ------------------------------------------------------------ key mapping */

static inline uint32_t sc_f32key(uint32_t b, int64_t *lossy)
{
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) {
        *lossy += b != 0x7FFFFFFFu;
        return 0xFFFFFFFFu;
    }
    if (b == 0x80000000u)
        (*lossy)++, b = 0;
    return (b & 0x80000000u) ? ~b : b | 0x80000000u;
}

static inline uint64_t sc_f64key(uint64_t b, int64_t *lossy)
{
    const uint64_t sign = 0x8000000000000000ull, all = ~0ull;
    if ((b & ~sign) > 0x7FF0000000000000ull) {
        *lossy += b != (all >> 1);
        return all;
    }
    if (b == sign)
        (*lossy)++, b = 0;
    return (b & sign) ? ~b : b | sign;
}

#define SC_MAPLOOP(T, EXPR)                       \
    do {                                          \
        const T *x = (const T *)in;               \
        for (int64_t i = 0; i < n; i++)           \
            out[i] = (EXPR) ^ inv;                \
    } while (0);                                  \
    break

/* Maps n keys of dtype t (4 bytes or fewer) to 32-bit ordered keys; returns the count
 * of lossy keys (-0.0, non-canonical NaNs). */
static int64_t sc_map32(gx_dtype t, const void *in, int64_t n, uint32_t *out, int desc)
{
    uint32_t inv = desc ? 0xFFFFFFFFu : 0, sb = 0x80000000u;
    int64_t lossy = 0;
    switch (t) {
    case GX_BOOL:
    case GX_U8: SC_MAPLOOP(uint8_t, (uint32_t)x[i]);
    case GX_U16: SC_MAPLOOP(uint16_t, (uint32_t)x[i]);
    case GX_U32: SC_MAPLOOP(uint32_t, x[i]);
    case GX_I8: SC_MAPLOOP(int8_t, (uint32_t)(int32_t)x[i] ^ sb);
    case GX_I16: SC_MAPLOOP(int16_t, (uint32_t)(int32_t)x[i] ^ sb);
    case GX_I32: SC_MAPLOOP(int32_t, (uint32_t)x[i] ^ sb);
    case GX_F32: {
        const uint32_t *x = in;
        for (int64_t i = 0; i < n; i++) {
            uint32_t m = sc_f32key(x[i], &lossy);
            out[i] = m == 0xFFFFFFFFu ? m : m ^ inv;
        }
        break;
    }
    default: break;
    }
    return lossy;
}

static int64_t sc_map64(gx_dtype t, const void *in, int64_t n, uint64_t *out, int desc)
{
    uint64_t inv = desc ? ~0ull : 0, sb = 0x8000000000000000ull;
    int64_t lossy = 0;
    switch (t) {
    case GX_U64: SC_MAPLOOP(uint64_t, x[i]);
    case GX_I64: SC_MAPLOOP(int64_t, (uint64_t)x[i] ^ sb);
    case GX_F64: {
        const uint64_t *x = in;
        for (int64_t i = 0; i < n; i++) {
            uint64_t m = sc_f64key(x[i], &lossy);
            out[i] = m == ~0ull ? m : m ^ inv;
        }
        break;
    }
    default: break;
    }
    return lossy;
}

#define SC_UNLOOP(T, EXPR)                   \
    do {                                     \
        T *y = (T *)out;                     \
        for (int64_t i = 0; i < n; i++) {    \
            uint32_t m = k[i] ^ inv;         \
            y[i] = (T)(EXPR);                \
        }                                    \
    } while (0);                             \
    break

/* The inverse of sc_map32 (canonical NaNs and +0.0 where the mapping was lossy). */
static void sc_unmap32(gx_dtype t, const uint32_t *k, int64_t n, void *out, int desc)
{
    uint32_t inv = desc ? 0xFFFFFFFFu : 0, sb = 0x80000000u;
    switch (t) {
    case GX_BOOL:
    case GX_U8: SC_UNLOOP(uint8_t, m);
    case GX_U16: SC_UNLOOP(uint16_t, m);
    case GX_U32: SC_UNLOOP(uint32_t, m);
    case GX_I8: SC_UNLOOP(int8_t, (int32_t)(m ^ sb));
    case GX_I16: SC_UNLOOP(int16_t, (int32_t)(m ^ sb));
    case GX_I32: SC_UNLOOP(int32_t, m ^ sb);
    case GX_F32: {
        uint32_t *y = out;
        for (int64_t i = 0; i < n; i++) {
            uint32_t m = k[i];
            if (m == 0xFFFFFFFFu) {
                y[i] = 0x7FFFFFFFu;
                continue;
            }
            m ^= inv;
            y[i] = (m & sb) ? m ^ sb : ~m;
        }
        break;
    }
    default: break;
    }
}

static void sc_unmap64(gx_dtype t, const uint64_t *k, int64_t n, void *out, int desc)
{
    uint64_t inv = desc ? ~0ull : 0, sb = 0x8000000000000000ull;
    uint64_t *y = out;
    for (int64_t i = 0; i < n; i++) {
        uint64_t m = k[i];
        if (t == GX_F64) {
            if (m == ~0ull) {
                y[i] = ~0ull >> 1;
                continue;
            }
            m ^= inv;
            y[i] = (m & sb) ? m ^ sb : ~m;
        } else {
            m ^= inv;
            y[i] = t == GX_I64 ? m ^ sb : m;
        }
    }
}

/* ------------------------------------------------------------ outputs */

static inline bool sc_isnan(gx_dtype t, const char *p)
{
    if (t == GX_F32) {
        float v;
        memcpy(&v, p, 4);
        return v != v;
    }
    double v;
    memcpy(&v, p, 8);
    return v != v;
}

static inline bool sc_iszero(gx_dtype t, const char *p)
{
    if (t == GX_F32) {
        float v;
        memcpy(&v, p, 4);
        return v == 0.0f;
    }
    double v;
    memcpy(&v, p, 8);
    return v == 0.0;
}

/* Rewrites the zero and NaN ranges of a sorted float row from its input row, in
 * input order: restores the bits that the key mapping lost (see the top). */
static void sc_restore(gx_dtype t, const char *in, char *out, int64_t len)
{
    size_t es = gx_dtype_size(t);
    int64_t z = 0, q = 0;
    while (z < len && !sc_iszero(t, out + z * es))
        z++;
    while (q < len && !sc_isnan(t, out + q * es))
        q++;
    for (int64_t i = 0; i < len; i++) {
        const char *v = in + i * es;
        if (sc_iszero(t, v))
            memcpy(out + z++ * es, v, es);
        else if (sc_isnan(t, v))
            memcpy(out + q++ * es, v, es);
    }
}

/* dst[j] = src[base + idx[j]] for j < n, elements of es bytes. */
static void sc_gather(char *dst, const char *src, int64_t base, const uint64_t *idx, int64_t n, size_t es)
{
#define SC_GLOOP(T)                                   \
    do {                                              \
        T *d = (T *)dst;                              \
        const T *s = (const T *)src + base;           \
        for (int64_t j = 0; j < n; j++)               \
            d[j] = s[idx[j]];                         \
    } while (0)
    switch (es) {
    case 1: SC_GLOOP(uint8_t); break;
    case 2: SC_GLOOP(uint16_t); break;
    case 4: SC_GLOOP(uint32_t); break;
    case 8: SC_GLOOP(uint64_t); break;
    default:
        for (int64_t j = 0; j < n; j++)
            memcpy(dst + j * es, src + (base + (int64_t)idx[j]) * es, es);
    }
#undef SC_GLOOP
}

/* Writes outputs [o, o + n) of request r from the sorted mapped keys k (width kw)
 * and positions p (relative to rowbase, NULL for keys only). */
static void sc_emit(const gx__sort_req *r, int64_t o, int64_t n, const void *k, int kw, const uint64_t *p,
                    int64_t rowbase)
{
    size_t kb = gx_dtype_size(r->kdtype);
    if (r->keys_out && p)
        sc_gather((char *)r->keys_out + o * kb, r->keys_in, rowbase, p, n, kb);
    else if (r->keys_out && kw == 4)
        sc_unmap32(r->kdtype, k, n, (char *)r->keys_out + o * kb, r->descending);
    else if (r->keys_out)
        sc_unmap64(r->kdtype, k, n, (char *)r->keys_out + o * kb, r->descending);
    if (r->vbytes && r->vals_in)
        sc_gather((char *)r->vals_out + o * r->vbytes, r->vals_in, rowbase, p, n, r->vbytes);
    else if (r->vbytes) {
        int64_t *v = (int64_t *)r->vals_out + o;
        for (int64_t j = 0; j < n; j++)
            v[j] = (int64_t)p[j];
    }
}

/* Maps keys [o, o + n) into k (width kw); positions from 0 into p when wanted. */
static int64_t sc_map(const gx__sort_req *r, int64_t o, int64_t n, void *k, int kw, uint64_t *p, int64_t pbase)
{
    const char *in = (const char *)r->keys_in + o * gx_dtype_size(r->kdtype);
    if (p)
        for (int64_t j = 0; j < n; j++)
            p[j] = (uint64_t)(pbase + j);
    return kw == 4 ? sc_map32(r->kdtype, in, n, k, r->descending) : sc_map64(r->kdtype, in, n, k, r->descending);
}

/* ------------------------------------------------------------ rows */

typedef struct sc_rows_job {
    const gx__sort_req *r;
    int kw;
    char *scratch; /* per thread: k, tk (rowlen * kw each), p, tp (rowlen * 8 each), SC_SKEW apart */
    size_t per_thread;
} sc_rows_job;

static void sc_rows(const void *args, int64_t begin, int64_t end, int thread)
{
    const sc_rows_job *j = args;
    const gx__sort_req *r = j->r;
    int64_t len = r->rowlen;
    char *s = j->scratch + (size_t)thread * j->per_thread;
    void *k = s, *tk = s + len * j->kw + SC_SKEW;
    uint64_t *p = r->vbytes ? (uint64_t *)(s + 2 * len * j->kw + 2 * SC_SKEW) : NULL;
    uint64_t *tp = p ? p + len + SC_SKEW / 8 : NULL;
    for (int64_t row = begin; row < end; row++) {
        int64_t o = row * len;
        int64_t lossy = sc_map(r, o, len, k, j->kw, p, 0);
        void *rk;
        uint64_t *rp;
        if (j->kw == 4)
            sc32_row(k, p, len, tk, tp, (uint32_t **)&rk, &rp);
        else
            sc64_row(k, p, len, tk, tp, (uint64_t **)&rk, &rp);
        sc_emit(r, o, len, rk, j->kw, rp, o);
        if (lossy && !p && r->keys_out) {
            size_t kb = gx_dtype_size(r->kdtype);
            sc_restore(r->kdtype, (const char *)r->keys_in + o * kb, (char *)r->keys_out + o * kb, len);
        }
    }
}

static gx_status sc_sort_rows(gx_ctx *ctx, const gx__sort_req *r, int kw)
{
    int workers = gx__ctx_workers(ctx);
    size_t per = (size_t)r->rowlen * (2 * (size_t)kw + (r->vbytes ? 16 : 0)) + 3 * SC_SKEW;
    sc_rows_job j = {r, kw, NULL, (per + 63) & ~(size_t)63};
    j.scratch = malloc(j.per_thread * (size_t)workers + 64);
    if (!j.scratch)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "sort: out of host memory for %d rows of %lld keys", workers,
                       (long long)r->rowlen);
    gx_status s = sc_run_work(ctx, sc_rows, &j, sizeof j, r->nrows, r->rowlen * 8);
    free(j.scratch);
    return s;
}

/* ------------------------------------------------------------ one long row */

/* Why the long-row sort was slow, and what changed (2-core VM under load ~5, gx
 * bench medians, 2^20 f32; NumPy's np.sort 11-19 ms there): it was a parallel LSD
 * radix sort over main memory, 8-bit digits, a count pass and a scatter pass per
 * digit, a map pass before and an unmap pass after, scratch from a fresh malloc
 * (page faults at first touch): 68 ms.  11-bit digits and the scratch from the
 * backend's block cache: 40 ms.  Then one MSD pass into 2048 buckets and per-bucket
 * one-thread LSD sorts in cache: ~12-18 ms.
 *
 * That was still 0.6x NumPy's AVX-512 quicksort on the quiet 2-core VM (u32 2^20
 * 10.5 ms against 5.2, 2^24 155 ms against 118; f32 0.31-0.64x), and the scatter
 * was most of it: 5.3 ns a key whether into 256 or 2048 buckets, against 0.55 for a
 * copy (.wt/sortmb*.c).  Each store to a bucket's next cache line missed, and the
 * in-order drain of the store buffer waited on each miss (the hardware prefetchers
 * do not follow hundreds of write streams).  A write prefetch of the line after the
 * one being filled (SC_PFW, in every scatter): 256 buckets 5.3 -> 1.7 ns a key in
 * the LLC, 5.4 -> 1.8 from memory; 2048 buckets only 5.3 -> 3.2, so the digits are
 * 8 bits now.  The top-level split counts a window of 12 key bits (in the same pass
 * as the key mapping, when the keys use their top bit) and groups the window's
 * 4096 prefixes into about SC_TBUCKETS buckets of equal size (a lookup table picks
 * the bucket in the scatter), so skewed keys -- half of the floats in [0, 1) have
 * one exponent -- still split evenly; a prefix too large for the caches is split
 * again inside its bucket (sc32_bucket).  Buckets go to the workers in groups of
 * about equal keys.  When one bucket would hold too much of the work for the
 * workers to share it, the parallel LSD sort runs instead.  Figures at SC_TBUCKETS
 * and in BENCHMARKS.md. */

#define SC_TBUCKETS 256                   /* top-level buckets, about */
#define SC_MAXB (2 * SC_TBUCKETS + 2)     /* at most (see sc_par_plan) */

typedef struct sc_par_job {
    const gx__sort_req *r;
    int kw, wsh;                 /* key width; shift of the 12-bit window */
    char *k, *tk;                /* mapped keys; the scattered ones */
    uint64_t *p, *tp;            /* positions, or NULL */
    int64_t chunk;
    int64_t *lossy;              /* per chunk */
    uint64_t *diff, *first;      /* per chunk: OR of key ^ first key; the first key */
    uint32_t (*hist)[SC_WBINS];  /* per chunk: window prefix counts, then their running sums */
    int64_t (*off)[SC_MAXB];     /* per chunk: its first position in each bucket */
    int64_t (*cnt)[SC_PRADIX];   /* per chunk: the LSD sort's digit counts */
    const uint16_t *tbl;         /* window prefix -> bucket */
    const int64_t *bstart;       /* bucket starts, nb + 1 */
    const int64_t *gstart;       /* first bucket of each group, groups + 1 */
} sc_par_job;

static int64_t sc_chunk_len(const sc_par_job *j, int64_t c)
{
    int64_t lo = c * j->chunk;
    return j->r->n - lo < j->chunk ? j->r->n - lo : j->chunk;
}

/* Counts chunk c's window prefixes at j->wsh, then turns them into running sums. */
static void sc_par_hist(const sc_par_job *j, int64_t c)
{
    int64_t lo = c * j->chunk, n = sc_chunk_len(j, c);
    uint32_t *h = j->hist[c];
    unsigned sh = (unsigned)j->wsh;
    memset(h, 0, sizeof j->hist[c]);
    if (j->kw == 4) {
        const uint32_t *k = (const uint32_t *)j->k + lo;
        for (int64_t i = 0; i < n; i++)
            h[(k[i] >> sh) & (SC_WBINS - 1)]++;
    } else {
        const uint64_t *k = (const uint64_t *)j->k + lo;
        for (int64_t i = 0; i < n; i++)
            h[(k[i] >> sh) & (SC_WBINS - 1)]++;
    }
    for (int b = 1; b < SC_WBINS; b++)
        h[b] += h[b - 1];
}

/* Maps each chunk's keys, notes where they differ, and counts the window at the
 * keys' top bits (kept when the highest differing bit is there, see sc_par_run). */
static void sc_par_map(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sc_par_job *j = args;
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * j->chunk, n = sc_chunk_len(j, c);
        j->lossy[c] = sc_map(j->r, lo, n, j->k + lo * j->kw, j->kw, j->p ? j->p + lo : NULL, lo);
        uint64_t d = 0, f;
        if (j->kw == 4) {
            const uint32_t *k = (const uint32_t *)j->k + lo;
            f = k[0];
            for (int64_t i = 0; i < n; i++)
                d |= k[i] ^ (uint32_t)f;
        } else {
            const uint64_t *k = (const uint64_t *)j->k + lo;
            f = k[0];
            for (int64_t i = 0; i < n; i++)
                d |= k[i] ^ f;
        }
        j->diff[c] = d, j->first[c] = f;
        sc_par_hist(j, c);
    }
}

static void sc_par_count(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    for (int64_t c = begin; c < end; c++)
        sc_par_hist(args, c);
}

static void sc_par_scatter(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sc_par_job *j = args;
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * j->chunk, hi = lo + sc_chunk_len(j, c);
        if (j->kw == 4)
            sc32_scatter_tbl((const uint32_t *)j->k, j->p, (uint32_t *)j->tk, j->tp, lo, hi, j->wsh, j->tbl,
                             j->off[c]);
        else
            sc64_scatter_tbl((const uint64_t *)j->k, j->p, (uint64_t *)j->tk, j->tp, lo, hi, j->wsh, j->tbl,
                             j->off[c]);
    }
}

static void sc_par_piece(const void *cx, int64_t o, int64_t n, const void *k, const uint64_t *p)
{
    const sc_par_job *j = cx;
    sc_emit(j->r, o, n, k, j->kw, p, 0);
}

/* Sorts the buckets of groups [begin, end), each in (tk, tp) with the same range of
 * (k, p) as the other buffer, and writes them out. */
static void sc_par_buckets(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sc_par_job *j = args;
    for (int64_t b = j->gstart[begin]; b < j->gstart[end]; b++) {
        int64_t o = j->bstart[b], n = j->bstart[b + 1] - o;
        uint64_t *p = j->tp ? j->tp + o : NULL, *tp = j->p ? j->p + o : NULL;
        if (n == 0)
            continue;
        if (j->kw == 4)
            sc32_bucket((uint32_t *)j->tk + o, p, n, (uint32_t *)j->k + o, tp, o, sc_par_piece, j);
        else
            sc64_bucket((uint64_t *)j->tk + o, p, n, (uint64_t *)j->k + o, tp, o, sc_par_piece, j);
    }
}

static void sc_par_emit(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sc_par_job *j = args;
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * j->chunk;
        sc_emit(j->r, lo, sc_chunk_len(j, c), j->k + lo * j->kw, j->kw, j->p ? j->p + lo : NULL, 0);
    }
}

/* The parallel LSD sort of the mapped keys, then the output: for keys whose top
 * bits are too alike for the MSD split to share the work. */
static gx_status sc_par_lsd(gx_ctx *ctx, sc_par_job *j, int64_t nch)
{
    void *rk = NULL;
    uint64_t *rp = NULL;
    gx_status s;
    if (j->kw == 4)
        s = sc32_radix_par(ctx, (uint32_t *)j->k, j->p, j->r->n, (uint32_t *)j->tk, j->tp, nch, j->cnt,
                           (uint32_t **)&rk, &rp);
    else
        s = sc64_radix_par(ctx, (uint64_t *)j->k, j->p, j->r->n, (uint64_t *)j->tk, j->tp, nch, j->cnt,
                           (uint64_t **)&rk, &rp);
    j->k = rk, j->p = rp;
    return s == GX_OK ? sc_run(ctx, sc_par_emit, j, sizeof *j, nch) : s;
}

/* The buckets: consecutive window prefixes (their counts summed over the chunks)
 * grouped while a bucket stays within n / SC_TBUCKETS keys (a larger prefix is a
 * bucket alone).  Two neighbours then hold more than that, so there are at most
 * 2 * SC_TBUCKETS + 1.  Then each chunk's first position in each bucket, ordered
 * by (bucket, chunk): the scatter is stable.  Returns the bucket count; *big: the
 * largest bucket. */
static int sc_par_plan(sc_par_job *j, int64_t nch, uint16_t *tbl, int64_t *bstart, int64_t *big)
{
    int64_t target = j->r->n / SC_TBUCKETS + 1, acc = 0, prev = 0, last[SC_MAXB];
    int nb = 0;
    bstart[0] = 0;
    for (int w = 0; w < SC_WBINS; w++) {
        int64_t run = 0; /* keys with a prefix up to w */
        for (int64_t c = 0; c < nch; c++)
            run += j->hist[c][w];
        if (acc > 0 && acc + (run - prev) > target && nb < SC_MAXB - 2)
            last[nb] = w - 1, bstart[++nb] = prev, acc = 0;
        tbl[w] = (uint16_t)nb, acc += run - prev, prev = run;
    }
    last[nb] = SC_WBINS - 1, bstart[++nb] = prev;
    *big = 0;
    int64_t pos[SC_MAXB];
    for (int b = 0; b < nb; b++) {
        pos[b] = bstart[b];
        *big = bstart[b + 1] - bstart[b] > *big ? bstart[b + 1] - bstart[b] : *big;
    }
    for (int64_t c = 0; c < nch; c++) { /* hist[c] holds running sums */
        const uint32_t *h = j->hist[c];
        for (int b = 0; b < nb; b++) {
            int64_t m = (int64_t)h[last[b]] - (b ? (int64_t)h[last[b - 1]] : 0);
            j->off[c][b] = pos[b], pos[b] += m;
        }
    }
    return nb;
}

/* Groups of consecutive buckets with about equal keys, one per worker. */
static void sc_par_groups(const int64_t *bstart, int nb, int64_t groups, int64_t *gstart)
{
    int64_t n = bstart[nb], g = 1;
    gstart[0] = 0;
    for (int b = 0; b < nb; b++)
        while (g < groups && bstart[b] >= g * n / groups)
            gstart[g++] = b;
    while (g <= groups)
        gstart[g++] = nb;
}

static gx_status sc_par_run(gx_ctx *ctx, sc_par_job *j, int64_t nch, int64_t groups)
{
    int64_t n = j->r->n;
    int bits = 8 * j->kw;
    j->wsh = bits - SC_WBITS;
    GX__CHECK(sc_run(ctx, sc_par_map, j, sizeof *j, nch));
    uint64_t d = 0;
    for (int64_t c = 0; c < nch; c++)
        d |= j->diff[c] | (j->first[c] ^ j->first[0]);
    if (d == 0) /* all keys equal: sorted as they are */
        return sc_run(ctx, sc_par_emit, j, sizeof *j, nch);
    int top = 0; /* bits up to the highest differing one */
    while (top < 64 && (d >> top))
        top++;
    if (top < bits - 1) { /* more than one constant top bit: count the window under them */
        j->wsh = top > SC_WBITS ? top - SC_WBITS : 0;
        GX__CHECK(sc_run(ctx, sc_par_count, j, sizeof *j, nch));
    }
    uint16_t tbl[SC_WBINS];
    int64_t bstart[SC_MAXB + 1], gstart[65], big;
    int nb = sc_par_plan(j, nch, tbl, bstart, &big);
    /* One bucket as 1.5 workers' share: it would hold up the rest; the LSD sort
     * shares every pass. */
    if (2 * big * gx__ctx_workers(ctx) > 3 * n && top > SC_WBITS)
        return sc_par_lsd(ctx, j, nch);
    sc_par_groups(bstart, nb, groups, gstart);
    j->tbl = tbl, j->bstart = bstart, j->gstart = gstart;
    GX__CHECK(sc_run(ctx, sc_par_scatter, j, sizeof *j, nch));
    return sc_run_work(ctx, sc_par_buckets, j, sizeof *j, groups, 1 << 20);
}

static gx_status sc_sort_par(gx_ctx *ctx, const gx__sort_req *r, int kw)
{
    /* Chunks of at most 2^31 keys: the window counts are 32-bit. */
    int64_t n = r->n, nch = (int64_t)gx__ctx_workers(ctx) * SC_CHUNKS_PER_WORKER;
    if (nch < (n >> 31) + 1)
        nch = (n >> 31) + 1;
    int64_t groups = gx__ctx_workers(ctx) > 64 ? 64 : gx__ctx_workers(ctx);
    size_t kbytes = (size_t)n * (size_t)kw, pbytes = r->vbytes ? (size_t)n * 8 : 0;
    size_t per = SC_WBINS * sizeof(uint32_t) + (SC_MAXB + SC_PRADIX + 3) * sizeof(int64_t);
    int64_t total = (int64_t)(2 * kbytes + 2 * pbytes + 2 * SC_SKEW + (size_t)nch * per);
    gx_array *scratch = NULL;
    if (gx__array_new(ctx, GX_U8, 1, &total, &scratch) != GX_OK)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "sort: out of host memory for %lld keys (%s)", (long long)n,
                       gx_last_error());
    char *mem = gx__array_ptr(scratch);
    sc_par_job j;
    memset(&j, 0, sizeof j);
    j.r = r, j.kw = kw, j.k = mem, j.tk = mem + kbytes + SC_SKEW, j.chunk = (n + nch - 1) / nch;
    char *pos = mem + 2 * kbytes + SC_SKEW; /* 8-byte aligned: 2 * kbytes is */
    j.p = pbytes ? (uint64_t *)pos : NULL, j.tp = j.p ? (uint64_t *)(pos + pbytes + SC_SKEW) : NULL;
    char *tail = pos + 2 * pbytes + SC_SKEW;
    j.off = (int64_t(*)[SC_MAXB])tail;
    j.cnt = (int64_t(*)[SC_PRADIX])(j.off + nch);
    j.lossy = (int64_t *)(j.cnt + nch), j.diff = (uint64_t *)(j.lossy + nch), j.first = j.diff + nch;
    j.hist = (uint32_t(*)[SC_WBINS])(j.first + nch);
    gx_status s = sc_par_run(ctx, &j, nch, groups);
    int64_t lost = 0;
    for (int64_t c = 0; c < nch; c++)
        lost += j.lossy[c];
    if (s == GX_OK && lost && !r->vbytes && r->keys_out)
        sc_restore(r->kdtype, r->keys_in, r->keys_out, n);
    gx_array_release(scratch);
    return s;
}

gx_status sc_sort(gx_ctx *ctx, const gx__sort_req *r)
{
    if (r->n == 0 || r->rowlen == 0)
        return GX_OK;
    int kw = gx_dtype_size(r->kdtype) <= 4 ? 4 : 8;
    if (r->nrows == 1 && r->n >= SC_PAR_MIN)
        return sc_sort_par(ctx, r, kw);
    return sc_sort_rows(ctx, r, kw);
}

/* ------------------------------------------------------------ top-k */

/* Long rows with a small k select instead of sorting the whole row: radix select on
 * an order key u (uint64, ascending = the wanted order: the largest first maps to
 * the complement; NaNs to UINT64_MAX in both directions, -0.0 to 0.0 so that they
 * tie), 8 bits a pass from the top, each pass keeping only the candidates in the
 * bucket that holds the k-th; then the k survivors (all u < T, and the first ones in
 * position order with u == T, T the k-th smallest u) sorted by (u, position).  The
 * same set and order as sorting the row: ties by position, NaNs last.
 * ./build/gx bench --filter =topk100_f32 --sizes 20 (2-core VM, one row of 2^20):
 * 61.6 ms sorting the row (the parallel radix sort), 14.7-15.3 ms selecting (one core
 * per row: a single row does not spread over the cores yet). */
#define SC_SEL_MIN 4096 /* rows from this length ... */
#define SC_SEL_KDIV 16  /* ... with k <= rowlen / 16 select */

static inline uint64_t sc_sel_key(gx_dtype t, const void *p, int64_t i, int largest)
{
    uint64_t u;
    const uint64_t top = 1ull << 63;
    switch (t) {
    case GX_F32:
    case GX_F64: {
        double d = t == GX_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
        if (d != d)
            return UINT64_MAX;
        d = d == 0 ? 0.0 : d; /* -0.0 ties with 0.0 */
        memcpy(&u, &d, 8);
        u = u & top ? ~u : u | top;
        break;
    }
    case GX_I8: u = (uint64_t)(int64_t)((const int8_t *)p)[i] ^ top; break;
    case GX_I16: u = (uint64_t)(int64_t)((const int16_t *)p)[i] ^ top; break;
    case GX_I32: u = (uint64_t)(int64_t)((const int32_t *)p)[i] ^ top; break;
    case GX_I64: u = (uint64_t)((const int64_t *)p)[i] ^ top; break;
    case GX_U16: u = ((const uint16_t *)p)[i]; break;
    case GX_U32: u = ((const uint32_t *)p)[i]; break;
    case GX_U64: u = ((const uint64_t *)p)[i]; break;
    default: u = ((const uint8_t *)p)[i]; break; /* bool, u8 */
    }
    /* a non-NaN key never becomes UINT64_MAX for floats (+-inf map below it); integer
     * keys have no NaN, so a tie with the NaN sentinel cannot arise */
    return largest ? ~u : u;
}

typedef struct {
    uint64_t u;
    int64_t pos;
} sc_sel_item;

static int sc_sel_cmp(const void *a, const void *b)
{
    const sc_sel_item *x = a, *y = b;
    if (x->u != y->u)
        return x->u < y->u ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

typedef struct {
    const gx__topk_req *r;
    uint64_t *cand; /* rowlen u's of scratch per thread */
    sc_sel_item *keep; /* k items per thread */
} sc_sel_job;

/* T, the k-th smallest u of the row (k >= 1), and how many u < T there are. */
static uint64_t sc_sel_threshold(const sc_sel_job *j, const void *row, uint64_t *cand, int64_t *below)
{
    const gx__topk_req *r = j->r;
    int64_t n = r->rowlen, kk = r->k, cnt[256];
    uint64_t prefix = 0, mask = 0;
    *below = 0;
    for (int shift = 56; shift >= 0; shift -= 8) {
        memset(cnt, 0, sizeof cnt);
        int64_t m = 0;
        if (shift == 56) /* first pass: straight from the keys, candidates kept for the next */
            for (int64_t i = 0; i < n; i++) {
                uint64_t u = sc_sel_key(r->kdtype, row, i, r->largest);
                cnt[u >> 56]++;
                cand[i] = u;
            }
        else
            for (int64_t i = 0; i < n; i++)
                if ((cand[i] & mask) == prefix)
                    cnt[(cand[i] >> shift) & 255]++, cand[m++] = cand[i];
        if (shift != 56)
            n = m;
        int d = 0;
        for (; cnt[d] < kk; d++)
            kk -= cnt[d], *below += cnt[d];
        prefix |= (uint64_t)d << shift;
        mask |= (uint64_t)255 << shift;
    }
    return prefix;
}

static void sc_sel_rows(const void *args, int64_t begin, int64_t end, int thread)
{
    const sc_sel_job *j = args;
    const gx__topk_req *r = j->r;
    size_t kb = gx_dtype_size(r->kdtype);
    uint64_t *cand = j->cand + (int64_t)thread * r->rowlen;
    sc_sel_item *keep = j->keep + (int64_t)thread * r->k;
    for (int64_t row = begin; row < end; row++) {
        const char *x = (const char *)r->keys_in + row * r->rowlen * (int64_t)kb;
        int64_t below = 0, m = 0;
        uint64_t t = sc_sel_threshold(j, x, cand, &below);
        int64_t eq = r->k - below; /* the first eq keys equal to T, in position order */
        for (int64_t i = 0; i < r->rowlen && m < r->k; i++) {
            uint64_t u = sc_sel_key(r->kdtype, x, i, r->largest);
            if (u < t || (u == t && eq-- > 0))
                keep[m++] = (sc_sel_item){u, i};
        }
        qsort(keep, (size_t)m, sizeof *keep, sc_sel_cmp);
        for (int64_t q = 0; q < m; q++) {
            memcpy((char *)r->vals_out + (row * r->k + q) * (int64_t)kb, x + keep[q].pos * (int64_t)kb, kb);
            if (r->idx_out)
                r->idx_out[row * r->k + q] = keep[q].pos;
        }
    }
}

static gx_status sc_topk_select(gx_ctx *ctx, const gx__topk_req *r)
{
    int64_t w = gx__ctx_workers(ctx);
    sc_sel_job j = {r, malloc((size_t)(w * r->rowlen) * 8 + 8), malloc((size_t)(w * r->k) * sizeof(sc_sel_item) + 8)};
    gx_status s = j.cand && j.keep ? GX_OK
                                   : gx__err(GX_ERR_OUT_OF_MEMORY, "gx_topk: out of host memory for %lld keys",
                                             (long long)(w * r->rowlen));
    if (s == GX_OK)
        s = sc_run_work(ctx, sc_sel_rows, &j, sizeof j, r->nrows, r->rowlen);
    free(j.cand);
    free(j.keep);
    return s;
}

/* Few long rows: the passes of the select split over the cores, read straight from
 * the keys (no copy of the row's candidates): 12-bit digits of u from the top, each
 * pass counting (per chunk of the row, one chunk a worker) the next digit of the
 * keys whose decided bits match the prefix so far, the prefix extended by the digit
 * that holds the k-th; it stops once that bucket holds at most SC_SEL2_CAP keys.
 * Then each chunk gathers, in position order, its keys before the prefix (fewer than
 * k in all) and those in the bucket (with every bit decided: ties with the k-th, at
 * most as many as still wanted), and the gathered keys are sorted by (u, position):
 * the first k are the top k, the same as the sort's.  Random f32: 2 counting passes
 * and the gather, 3 reads of the row, against one read and 3 copies of 8 bytes a key
 * on one core for the per-row select.
 * gx_topk(k = 100) of 2^20 / 2^24 random f32 in [0, 1), one row (2-core VM, loaded,
 * six runs each): 7.3-7.6 / 170-205 ms wall with the per-row select, 4.3-6.9 / 92-114
 * ms with this. */
#define SC_SEL2_MIN (1 << 16) /* rows from this length, fewer than 2 per worker */
#define SC_SEL2_BITS 12
#define SC_SEL2_BINS (1 << SC_SEL2_BITS)
#define SC_SEL2_CAP 4096 /* the bucket size at which narrowing stops */

typedef struct {
    const gx__topk_req *r;
    const char *row;
    int64_t chunk;
    uint64_t prefix, mask;
    int shift;
    int64_t eq_cap;     /* keys equal to the prefix that a chunk may keep */
    int64_t *cnt;       /* per chunk: SC_SEL2_BINS counts */
    sc_sel_item *cand;  /* per chunk: k + SC_SEL2_CAP items */
    int64_t *ncand;     /* per chunk */
} sc_sel2_job;

/* An order key of f32 keys as sc_sel_key's (any order-preserving key serves: the
 * counts, the gather and the final sort all use this one), without the double. */
static inline uint64_t sc_sel2_key_f32(const void *p, int64_t i, int largest)
{
    uint32_t b;
    memcpy(&b, (const float *)p + i, 4);
    if ((b & 0x7fffffffu) > 0x7f800000u)
        return UINT64_MAX;
    b = (b & 0x7fffffffu) ? b : 0; /* -0.0 ties with 0.0 */
    uint64_t u = (uint64_t)(b & 0x80000000u ? ~b : b | 0x80000000u) << 32;
    return largest ? ~u : u; /* never UINT64_MAX: that would need b == 0xffffffff, a NaN */
}

/* The key of item i of the row: the f32 form hoisted out of the per-key switch. */
#define SC_SEL2_KEY(j, i)                                                                         \
    ((j)->r->kdtype == GX_F32 ? sc_sel2_key_f32((j)->row, (i), (j)->r->largest)                   \
                              : sc_sel_key((j)->r->kdtype, (j)->row, (i), (j)->r->largest))

static void sc_sel2_count(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sc_sel2_job *j = args;
    const gx__topk_req *r = j->r;
    for (int64_t c = begin; c < end; c++) {
        int64_t *cnt = j->cnt + c * SC_SEL2_BINS;
        memset(cnt, 0, SC_SEL2_BINS * sizeof *cnt);
        int64_t lo = c * j->chunk, hi = lo + j->chunk < r->rowlen ? lo + j->chunk : r->rowlen;
        uint64_t mask = j->mask, prefix = j->prefix;
        int shift = j->shift;
        if (r->kdtype == GX_F32) /* the common case, its loop without the dtype switch */
            for (int64_t i = lo; i < hi; i++) {
                uint64_t u = sc_sel2_key_f32(j->row, i, r->largest);
                if ((u & mask) == prefix)
                    cnt[(u >> shift) & (SC_SEL2_BINS - 1)]++;
            }
        else
            for (int64_t i = lo; i < hi; i++) {
                uint64_t u = sc_sel_key(r->kdtype, j->row, i, r->largest);
                if ((u & mask) == prefix)
                    cnt[(u >> shift) & (SC_SEL2_BINS - 1)]++;
            }
    }
}

static void sc_sel2_gather(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sc_sel2_job *j = args;
    const gx__topk_req *r = j->r;
    int64_t room = r->k + SC_SEL2_CAP;
    for (int64_t c = begin; c < end; c++) {
        sc_sel_item *out = j->cand + c * room;
        int64_t m = 0, eq = 0;
        int64_t lo = c * j->chunk, hi = lo + j->chunk < r->rowlen ? lo + j->chunk : r->rowlen;
        for (int64_t i = lo; i < hi && m < room; i++) {
            uint64_t u = SC_SEL2_KEY(j, i), d = u & j->mask;
            if (d < j->prefix || (d == j->prefix && eq++ < j->eq_cap))
                out[m++] = (sc_sel_item){u, i};
        }
        j->ncand[c] = m;
    }
}

/* Narrows the prefix of row j->row's k-th key; returns the count of keys before the
 * prefix's bucket and whether that bucket is small (else every bit is decided). */
static gx_status sc_sel2_narrow(gx_ctx *ctx, sc_sel2_job *j, int64_t nch, int64_t *before, bool *done)
{
    const gx__topk_req *r = j->r;
    int64_t tot[SC_SEL2_BINS];
    j->prefix = j->mask = 0;
    *before = 0, *done = false;
    for (int rest = 64; rest > 0 && !*done;) {
        int bits = rest < SC_SEL2_BITS ? rest : SC_SEL2_BITS;
        rest -= bits;
        j->shift = rest;
        GX__CHECK(sc_run_work(ctx, sc_sel2_count, j, sizeof *j, nch, j->chunk));
        memset(tot, 0, sizeof tot);
        for (int64_t c = 0; c < nch; c++)
            for (int b = 0; b < SC_SEL2_BINS; b++)
                tot[b] += j->cnt[c * SC_SEL2_BINS + b];
        int64_t kk = r->k - *before;
        int d = 0;
        for (; tot[d] < kk; d++)
            kk -= tot[d], *before += tot[d];
        j->prefix |= (uint64_t)d << rest;
        j->mask |= (((uint64_t)1 << bits) - 1) << rest;
        *done = tot[d] <= SC_SEL2_CAP;
    }
    return GX_OK;
}

static gx_status sc_sel2_row(gx_ctx *ctx, sc_sel2_job *j, int64_t nch, int64_t row, sc_sel_item *all)
{
    const gx__topk_req *r = j->r;
    size_t kb = gx_dtype_size(r->kdtype);
    j->row = (const char *)r->keys_in + row * r->rowlen * (int64_t)kb;
    int64_t before = 0, m = 0;
    bool done = false;
    GX__CHECK(sc_sel2_narrow(ctx, j, nch, &before, &done));
    j->eq_cap = done ? INT64_MAX : r->k - before;
    GX__CHECK(sc_run_work(ctx, sc_sel2_gather, j, sizeof *j, nch, j->chunk));
    int64_t room = r->k + SC_SEL2_CAP;
    for (int64_t c = 0; c < nch; c++) {
        memcpy(all + m, j->cand + c * room, (size_t)j->ncand[c] * sizeof *all);
        m += j->ncand[c];
    }
    qsort(all, (size_t)m, sizeof *all, sc_sel_cmp);
    for (int64_t q = 0; q < r->k && q < m; q++) {
        memcpy((char *)r->vals_out + (row * r->k + q) * (int64_t)kb, j->row + all[q].pos * (int64_t)kb, kb);
        if (r->idx_out)
            r->idx_out[row * r->k + q] = all[q].pos;
    }
    return GX_OK;
}

static gx_status sc_topk_select2(gx_ctx *ctx, const gx__topk_req *r)
{
    int64_t nch = gx__ctx_workers(ctx), room = r->k + SC_SEL2_CAP;
    sc_sel2_job j;
    memset(&j, 0, sizeof j);
    j.r = r;
    j.chunk = (r->rowlen + nch - 1) / nch;
    j.cnt = malloc((size_t)nch * SC_SEL2_BINS * sizeof *j.cnt);
    j.cand = malloc((size_t)(nch * room) * sizeof *j.cand);
    j.ncand = malloc((size_t)nch * sizeof *j.ncand);
    sc_sel_item *all = malloc((size_t)(nch * room) * sizeof *all);
    gx_status s = j.cnt && j.cand && j.ncand && all
                      ? GX_OK
                      : gx__err(GX_ERR_OUT_OF_MEMORY, "gx_topk: out of host memory for %lld candidates",
                                (long long)(nch * room));
    for (int64_t row = 0; s == GX_OK && row < r->nrows; row++)
        s = sc_sel2_row(ctx, &j, nch, row, all);
    free(j.cnt);
    free(j.cand);
    free(j.ncand);
    free(all);
    return s;
}

/* Short rows or a large k: sorts every row whole (descending for the largest: NaNs
 * still last, ties in position order, which is exactly top-k's rule) and keeps the
 * first k. */
gx_status sc_topk(gx_ctx *ctx, const gx__topk_req *r)
{
    if (r->rowlen >= SC_SEL2_MIN && r->k >= 1 && r->k <= r->rowlen / SC_SEL_KDIV &&
        r->nrows < 2 * gx__ctx_workers(ctx))
        return sc_topk_select2(ctx, r);
    if (r->rowlen >= SC_SEL_MIN && r->k >= 1 && r->k <= r->rowlen / SC_SEL_KDIV)
        return sc_topk_select(ctx, r);
    int64_t n = r->nrows * r->rowlen;
    size_t kb = gx_dtype_size(r->kdtype);
    char *keys = malloc((size_t)n * kb + 1);
    int64_t *idx = malloc((size_t)n * 8 + 1);
    gx_status s = keys && idx ? GX_OK : gx__err(GX_ERR_OUT_OF_MEMORY, "gx_topk: out of host memory for %lld keys",
                                                 (long long)n);
    gx__sort_req q = {r->kdtype, r->keys_in, keys, 8, NULL, idx, n, r->nrows, r->rowlen, r->largest};
    if (s == GX_OK)
        s = sc_sort(ctx, &q);
    for (int64_t row = 0; s == GX_OK && row < r->nrows; row++) {
        memcpy((char *)r->vals_out + row * r->k * kb, keys + row * r->rowlen * kb, (size_t)r->k * kb);
        if (r->idx_out)
            memcpy(r->idx_out + row * r->k, idx + row * r->rowlen, (size_t)r->k * 8);
    }
    free(keys);
    free(idx);
    return s;
}

/* ------------------------------------------------------------ histograms */

static inline double sc_ld(gx_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case GX_BOOL:
    case GX_U8: return ((const uint8_t *)p)[i];
    case GX_I8: return ((const int8_t *)p)[i];
    case GX_U16: return ((const uint16_t *)p)[i];
    case GX_I16: return ((const int16_t *)p)[i];
    case GX_U32: return ((const uint32_t *)p)[i];
    case GX_I32: return ((const int32_t *)p)[i];
    case GX_U64: return (double)((const uint64_t *)p)[i];
    case GX_I64: return (double)((const int64_t *)p)[i];
    case GX_F32: return ((const float *)p)[i];
    case GX_F64: return ((const double *)p)[i];
    default: return 0;
    }
}

/* Integer value i of x as a u64 (signed values sign-extended: the C conversion). */
static inline uint64_t sc_ldu(gx_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case GX_BOOL:
    case GX_U8: return ((const uint8_t *)p)[i];
    case GX_I8: return (uint64_t)((const int8_t *)p)[i];
    case GX_U16: return ((const uint16_t *)p)[i];
    case GX_I16: return (uint64_t)((const int16_t *)p)[i];
    case GX_U32: return ((const uint32_t *)p)[i];
    case GX_I32: return (uint64_t)((const int32_t *)p)[i];
    case GX_U64: return ((const uint64_t *)p)[i];
    case GX_I64: return (uint64_t)((const int64_t *)p)[i];
    default: return 0;
    }
}

/* The bin of value i of x, or -1 when it is dropped (NaN, outside). */
static inline int64_t sc_bin(const gx__hist_req *r, int64_t i)
{
    if (r->kind == GX__HIST_INT) {
        uint64_t u = sc_ldu(r->xdtype, r->x, i) - (uint64_t)r->base; /* modulo 2^64: see sort_priv.h */
        return u < (uint64_t)r->nbins ? (int64_t)u : -1;
    }
    double v = sc_ld(r->xdtype, r->x, i);
    if (r->kind == GX__HIST_EVEN) {
        if (!(v >= r->lo && v < r->hi))
            return -1;
        int64_t b = (int64_t)((v - r->lo) * ((double)r->nbins / (r->hi - r->lo))); /* NumPy's formula */
        return b < r->nbins ? b : r->nbins - 1; /* rounding of the product just below hi */
    }
    if (!(v >= r->edges[0] && v < r->edges[r->nbins]))
        return -1;
    int64_t lo = 0, hi = r->nbins; /* edges[lo] <= v < edges[hi] */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (r->edges[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

typedef struct sc_hist_job {
    const gx__hist_req *r;
    int64_t chunk;
    char *bins;      /* per chunk: nbins int64 or f64 */
    int64_t *dropped; /* per chunk */
} sc_hist_job;

/* Even bins of unweighted floats, the common case, without sc_bin's per-element
 * dtype and kind switches (the same arithmetic, (v - lo) * (nbins / (hi - lo)), so
 * the same bins; it once was (v - lo) * nbins / (hi - lo), one bin off for a few
 * values at bin edges): 2^20 f32 into 256
 * bins took 20-34 ms through sc_bin on the loaded 2-core VM, an OpenMP loop 1.3 ms. */
#define SC_HIST_EVEN(T)                                                                  \
    do {                                                                                 \
        const T *x = (const T *)r->x;                                                    \
        double elo = r->lo, ehi = r->hi, norm = (double)r->nbins / (r->hi - r->lo);     \
        for (int64_t i = lo; i < hi; i++) {                                              \
            double v = x[i];                                                             \
            if (!(v >= elo && v < ehi)) {                                                \
                drop++;                                                                  \
                continue;                                                                \
            }                                                                            \
            int64_t b = (int64_t)((v - elo) * norm); /* >= 0: truncation is floor */     \
            ci[b < r->nbins ? b : r->nbins - 1]++;                                       \
        }                                                                                \
    } while (0)

/* Even bins of unweighted f32 over a chunk of 4096 or more, branch-free: a dropped
 * value (NaN, outside [lo, hi)) counts in a bin of its own past the last, and four
 * interleaved sets of counts (element i into set i % 4) keep an increment from
 * waiting on the one before it when neighbours share a bin.  The same bins as
 * SC_HIST_EVEN: the product is formed only for values inside [lo, hi), so the
 * conversion to an integer is always in range.  Returns false (nothing counted) if
 * the sets' memory cannot be had.  Why: SC_HIST_EVEN's compare, branch and
 * read-modify-write per element took 4399 us for 2^24 f32 into 256 bins on the
 * 16-core host where OpenMP's f32 loop took 3482 (median of 3 rounds, session 30). */
static inline int64_t sc_even_bin(double v, double elo, double ehi, double norm, int64_t nb)
{
    const bool in = v >= elo && v < ehi;
    const int64_t t = (int64_t)(in ? (v - elo) * norm : 0.0);
    return in ? (t < nb ? t : nb - 1) : nb;
}

/* The bins of x[i0 .. i0 + 64), each plus the offset of its set (element k into set
 * k % 4), computed apart from the increments so that the compiler vectorises them
 * (a compare, a multiply and a conversion per element, in f64 as sc_even_bin).  The
 * conversion must not be treated as able to trap (GCC's default, which keeps it out
 * of vector code without AVX-512's masks; clang's default is not to), and the CPU's
 * own vectors are chosen at run time: one copy of the loop per target, picked by
 * __builtin_cpu_supports on first use (not GCC's target_clones: its ifunc resolver
 * runs before ThreadSanitizer's runtime and crashed every TSan test at start).
 * 2-core VM (AVX-512), 2^24 f32 into 256 bins, 2 threads, same process alternated
 * (.wt/histmb.c, session 32): 17.2 -> 9.9 ms; AVX2 only 18.0 -> 12.3 ms; 2^20 1.17 ->
 * 0.64 ms. */
typedef void (*sc_bins_fn)(const float *x, double elo, double ehi, double norm, int32_t nb, int32_t stride,
                           int32_t *restrict idx);
#define SC_EVEN_BINS64_BODY                                                              \
    for (int k = 0; k < 64; k++) {                                                       \
        const double v = x[k];                                                           \
        const bool in = v >= elo && v < ehi;                                             \
        const int32_t t = (int32_t)(in ? (v - elo) * norm : 0.0);                        \
        idx[k] = (in ? (t < nb ? t : nb - 1) : nb) + (k & 3) * stride;                   \
    }
#define SC_BINS_ARGS                                                                     \
    const float *x, double elo, double ehi, double norm, int32_t nb, int32_t stride, int32_t *restrict idx
static void sc_even_bins64(SC_BINS_ARGS) { SC_EVEN_BINS64_BODY }
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#if defined(__clang__)
#define SC_NOTRAP
#else
#define SC_NOTRAP , optimize("no-trapping-math")
#endif
__attribute__((target("avx2") SC_NOTRAP)) static void sc_even_bins64_avx2(SC_BINS_ARGS) { SC_EVEN_BINS64_BODY }
__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw") SC_NOTRAP)) static void
sc_even_bins64_avx512(SC_BINS_ARGS)
{
    SC_EVEN_BINS64_BODY
}
static sc_bins_fn sc_even_bins64_pick(void)
{
    static _Atomic(sc_bins_fn) fn;
    sc_bins_fn f = atomic_load_explicit(&fn, memory_order_relaxed);
    if (!f) {
        __builtin_cpu_init();
        f = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw")
                ? sc_even_bins64_avx512
            : __builtin_cpu_supports("avx2") ? sc_even_bins64_avx2
                                             : sc_even_bins64;
        atomic_store_explicit(&fn, f, memory_order_relaxed);
    }
    return f;
}
#else
static sc_bins_fn sc_even_bins64_pick(void) { return sc_even_bins64; }
#endif

static bool sc_hist_even_f32(const gx__hist_req *r, int64_t lo, int64_t hi, int64_t *ci, int64_t *dropped)
{
    const int64_t nb = r->nbins, stride = nb + 1;
    int64_t *set = nb <= 4096 ? calloc((size_t)(4 * stride), sizeof *set) : NULL;
    if (!set)
        return false;
    const float *x = (const float *)r->x;
    const double elo = r->lo, ehi = r->hi, norm = (double)nb / (r->hi - r->lo);
    int32_t idx[64];
    const sc_bins_fn bins = sc_even_bins64_pick();
    int64_t i = lo;
    for (; i + 64 <= hi; i += 64) {
        bins(x + i, elo, ehi, norm, (int32_t)nb, (int32_t)stride, idx);
        for (int k = 0; k < 64; k++)
            set[idx[k]]++;
    }
    for (; i < hi; i++)
        set[sc_even_bin(x[i], elo, ehi, norm, nb)]++;
    for (int64_t k = 0; k <= nb; k++) {
        const int64_t c = set[k] + set[stride + k] + set[2 * stride + k] + set[3 * stride + k];
        if (k < nb)
            ci[k] = c;
        else
            *dropped = c;
    }
    free(set);
    return true;
}

/* Unweighted integer bins (bincount, unique's counting path) without sc_bin's
 * per-element switches: one subtraction modulo 2^64 and one unsigned compare. */
#define SC_HIST_INT(T)                                                                   \
    do {                                                                                 \
        const T *x = (const T *)r->x;                                                    \
        const uint64_t base = (uint64_t)r->base, nb = (uint64_t)r->nbins;                \
        for (int64_t i = lo; i < hi; i++) {                                              \
            uint64_t b = (uint64_t)x[i] - base;                                          \
            if (b < nb)                                                                  \
                ci[b]++;                                                                 \
            else                                                                         \
                drop++;                                                                  \
        }                                                                                \
    } while (0)

/* The integer fast path of one chunk; false for a dtype it does not handle. */
static bool sc_hist_int_fast(const gx__hist_req *r, int64_t lo, int64_t hi, int64_t *ci, int64_t *dropped)
{
    int64_t drop = 0;
    switch (r->xdtype) {
    case GX_BOOL:
    case GX_U8: SC_HIST_INT(uint8_t); break;
    case GX_I8: SC_HIST_INT(int8_t); break;
    case GX_U16: SC_HIST_INT(uint16_t); break;
    case GX_I16: SC_HIST_INT(int16_t); break;
    case GX_U32: SC_HIST_INT(uint32_t); break;
    case GX_I32: SC_HIST_INT(int32_t); break;
    case GX_U64: SC_HIST_INT(uint64_t); break;
    case GX_I64: SC_HIST_INT(int64_t); break;
    default: return false;
    }
    *dropped = drop;
    return true;
}

static void sc_hist_part(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const sc_hist_job *j = args;
    const gx__hist_req *r = j->r;
    bool w = r->wdtype != GX_DTYPE_DEFAULT;
    bool fast = !w && r->kind == GX__HIST_EVEN && (r->xdtype == GX_F32 || r->xdtype == GX_F64);
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * j->chunk, hi = lo + j->chunk < r->n ? lo + j->chunk : r->n, drop = 0;
        int64_t *ci = (int64_t *)(j->bins + (size_t)c * (size_t)r->nbins * 8);
        double *cw = (double *)ci;
        memset(ci, 0, (size_t)r->nbins * 8);
        bool done = fast || (!w && r->kind == GX__HIST_INT && sc_hist_int_fast(r, lo, hi, ci, &drop));
        if (fast && r->xdtype == GX_F32 && !(hi - lo >= 4096 && sc_hist_even_f32(r, lo, hi, ci, &drop)))
            SC_HIST_EVEN(float);
        else if (fast && r->xdtype == GX_F64)
            SC_HIST_EVEN(double);
        for (int64_t i = done ? hi : lo; i < hi; i++) {
            int64_t b = sc_bin(r, i);
            if (b < 0)
                drop++;
            else if (w)
                cw[b] += sc_ld(r->wdtype, r->w, i);
            else
                ci[b]++;
        }
        j->dropped[c] = drop;
    }
}

/* Per-chunk private bins, added in chunk order (reproducible for one thread count). */
gx_status sc_hist(gx_ctx *ctx, const gx__hist_req *r)
{
    int64_t nch = gx__ctx_workers(ctx);
    if (r->n < nch * 4096 || r->nbins > r->n / 4)
        nch = 1;
    sc_hist_job j = {r, r->n ? (r->n + nch - 1) / nch : 1, malloc((size_t)nch * (size_t)r->nbins * 8 + 8),
                     malloc((size_t)nch * 8)};
    gx_status s = j.bins && j.dropped ? GX_OK : gx__err(GX_ERR_OUT_OF_MEMORY, "histogram: out of host memory for "
                                                                              "%lld bins",
                                                        (long long)r->nbins);
    if (s == GX_OK)
        s = sc_run(ctx, sc_hist_part, &j, sizeof j, nch);
    if (s == GX_OK) {
        bool w = r->wdtype != GX_DTYPE_DEFAULT;
        memcpy(r->counts_out, j.bins, (size_t)r->nbins * 8);
        *r->dropped_out = j.dropped[0];
        for (int64_t c = 1; c < nch; c++) {
            const char *b = j.bins + (size_t)c * (size_t)r->nbins * 8;
            for (int64_t i = 0; i < r->nbins; i++) {
                if (w)
                    ((double *)r->counts_out)[i] += ((const double *)b)[i];
                else
                    ((int64_t *)r->counts_out)[i] += ((const int64_t *)b)[i];
            }
            *r->dropped_out += j.dropped[c];
        }
    }
    free(j.bins);
    free(j.dropped);
    return s;
}
