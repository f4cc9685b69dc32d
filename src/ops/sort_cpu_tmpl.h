/* sort_cpu_tmpl.h -- the CPU sorting kernels over one mapped key width, included
 * twice by sort_cpu.c (no include guard on purpose): with SC_K = uint32_t (keys of
 * up to 4 bytes) and SC_K = uint64_t (8-byte keys), and SC_F(name) naming the
 * functions of that width.  Keys are already mapped to unsigned integers whose
 * unsigned order is the wanted one (sort_cpu.c), so everything here is a stable
 * unsigned sort of keys k with an optional payload p (uint64_t, may be NULL). */

#define SC_NB (int)sizeof(SC_K)
#define SC_PFK (64 / SC_NB) /* keys in a cache line */
/* The parallel sort's digits: SC_PBITS bits each, SC_NP passes cover the key. */
#define SC_NP ((8 * SC_NB + SC_PBITS - 1) / SC_PBITS)
#define SC_PDIGIT(x, b) ((unsigned)((x) >> (SC_PBITS * (b))) & (SC_PRADIX - 1u))

/* Stable insertion sort, for runs of a few keys. */
static void SC_F(insertion)(SC_K *k, uint64_t *p, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        SC_K x = k[i];
        uint64_t y = p ? p[i] : 0;
        int64_t j = i;
        for (; j > 0 && k[j - 1] > x; j--) {
            k[j] = k[j - 1];
            if (p)
                p[j] = p[j - 1];
        }
        k[j] = x;
        if (p)
            p[j] = y;
    }
}

/* Merges the sorted runs [lo, mid) and [mid, hi) of (k, p) into (tk, tp), left first on ties. */
static void SC_F(merge)(const SC_K *k, const uint64_t *p, SC_K *tk, uint64_t *tp, int64_t lo, int64_t mid,
                        int64_t hi)
{
    int64_t i = lo, j = mid, o = lo;
    while (i < mid && j < hi) {
        int64_t s = k[j] < k[i] ? j++ : i++;
        tk[o] = k[s];
        if (p)
            tp[o] = p[s];
        o++;
    }
    for (; i < mid; i++, o++) {
        tk[o] = k[i];
        if (p)
            tp[o] = p[i];
    }
    for (; j < hi; j++, o++) {
        tk[o] = k[j];
        if (p)
            tp[o] = p[j];
    }
}

/* Bottom-up merge sort of short rows: insertion-sorted runs of 16, then merge passes
 * that ping-pong between (k, p) and (tk, tp).  rk, rp: where the result is. */
static void SC_F(mergesort)(SC_K *k, uint64_t *p, int64_t n, SC_K *tk, uint64_t *tp, SC_K **rk, uint64_t **rp)
{
    for (int64_t i = 0; i < n; i += 16)
        SC_F(insertion)(k + i, p ? p + i : NULL, n - i < 16 ? n - i : 16);
    for (int64_t w = 16; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            SC_F(merge)(k, p, tk, tp, lo, mid, hi);
        }
        SC_K *sk = k;
        k = tk, tk = sk;
        uint64_t *sp = p;
        p = tp, tp = sp;
    }
    *rk = k, *rp = p;
}

/* Moves (src, ps) to (dst, pd) by the digit (key >> sh) & mask, given each digit's
 * first position off[]; pf: with a write prefetch of each destination's next line
 * (for destinations beyond L1: in L1 it only costs, 0.78 -> 1.52 ns a key for 4096
 * keys on the 2-core VM; 5.3 -> 1.7 for 2^20 keys in the LLC).  Separate loops, not
 * tests per key: this loop is the whole cost of a radix sort. */
#define SC_SCATTER_LOOP(BUCKET, PF, PAY)                   \
    for (int64_t i = lo; i < hi; i++) {                    \
        SC_K x = src[i];                                   \
        int64_t o = off[BUCKET]++;                         \
        PF;                                                \
        dst[o] = x;                                        \
        PAY;                                               \
    }
static void SC_F(scatter)(const SC_K *restrict src, const uint64_t *restrict ps, SC_K *restrict dst,
                          uint64_t *restrict pd, int64_t lo, int64_t hi, int sh, unsigned mask, int64_t *restrict off,
                          bool pf)
{
#define SC_B ((unsigned)(x >> sh) & mask)
    if (ps && pf)
        SC_SCATTER_LOOP(SC_B, (SC_PFW(dst + o + SC_PFK), SC_PFW(pd + o + 8)), pd[o] = ps[i])
    else if (ps)
        SC_SCATTER_LOOP(SC_B, (void)0, pd[o] = ps[i])
    else if (pf)
        SC_SCATTER_LOOP(SC_B, SC_PFW(dst + o + SC_PFK), (void)0)
    else
        SC_SCATTER_LOOP(SC_B, (void)0, (void)0)
#undef SC_B
}

/* sc_scatter without prefetch that also counts each key's digit at nsh into cnt
 * (zeroed here): the next LSD pass's counts, without a read of their own. */
static void SC_F(scatter_count)(const SC_K *restrict src, const uint64_t *restrict ps, SC_K *restrict dst,
                                uint64_t *restrict pd, int64_t n, int sh, int64_t *restrict off, int nsh,
                                uint32_t *restrict cnt)
{
    int64_t lo = 0, hi = n;
    memset(cnt, 0, 256 * sizeof *cnt);
    if (ps)
        SC_SCATTER_LOOP((unsigned)(x >> sh) & 255u, cnt[(unsigned)(x >> nsh) & 255u]++, pd[o] = ps[i])
    else
        SC_SCATTER_LOOP((unsigned)(x >> sh) & 255u, cnt[(unsigned)(x >> nsh) & 255u]++, (void)0)
}

/* sc_scatter with the bucket of a key looked up: tbl[(key >> sh) & (SC_WBINS - 1)]. */
static void SC_F(scatter_tbl)(const SC_K *restrict src, const uint64_t *restrict ps, SC_K *restrict dst,
                              uint64_t *restrict pd, int64_t lo, int64_t hi, int sh, const uint16_t *restrict tbl,
                              int64_t *restrict off)
{
#define SC_B tbl[(unsigned)(x >> sh) & (SC_WBINS - 1u)]
    if (ps)
        SC_SCATTER_LOOP(SC_B, (SC_PFW(dst + o + SC_PFK), SC_PFW(pd + o + 8)), pd[o] = ps[i])
    else
        SC_SCATTER_LOOP(SC_B, SC_PFW(dst + o + SC_PFK), (void)0)
#undef SC_B
}
#undef SC_SCATTER_LOOP

/* Every digit's counts in one read (spelled out: as a loop over the digits, GCC -O2
 * kept a variable shift and a loop test per digit, 40% of a row sort). */
static void SC_F(count_all)(const SC_K *k, int64_t n, uint32_t (*cnt)[256])
{
    memset(cnt, 0, SC_NB * sizeof cnt[0]);
    for (int64_t i = 0; i < n; i++) {
        uint64_t x = k[i];
        cnt[0][x & 255]++;
        cnt[1][(x >> 8) & 255]++;
        cnt[2][(x >> 16) & 255]++;
        cnt[3][(x >> 24) & 255]++;
        if (SC_NB == 8) {
            cnt[SC_NB - 4][(x >> 32) & 255]++;
            cnt[SC_NB - 3][(x >> 40) & 255]++;
            cnt[SC_NB - 2][(x >> 48) & 255]++;
            cnt[SC_NB - 1][(x >> 56) & 255]++;
        }
    }
}

/* One-thread LSD radix sort over the 8-bit digits where the keys differ (their OR of
 * key ^ first key): digits the same for every key are neither counted nor moved.
 * When every digit differs somewhere (rows of random keys), all counts come from
 * one read first.  Otherwise (the pieces of a long row's buckets: their top digit
 * is always the same) not: a digit the same for every key increments one counter
 * per key, a chain through memory -- counting four digits of 4096 keys took 2.2-2.8
 * ns a key, three varying ones 1.2-2.2 -- so there each pass counts the next digit
 * as it moves the keys (rows of 1024 f32 were 20% slower that way: their top digit
 * varies, but little, and its chain then held up a scatter).  rk, rp: where the
 * result is. */
static void SC_F(radix_seq)(SC_K *k, uint64_t *p, int64_t n, SC_K *tk, uint64_t *tp, SC_K **rk, uint64_t **rp)
{
    SC_K d = 0;
    for (int64_t i = 0; i < n; i++)
        d |= k[i] ^ k[0];
    int dig[SC_NB], nd = 0;
    for (int b = 0; b < SC_NB; b++)
        if ((d >> (8 * b)) & 255u)
            dig[nd++] = 8 * b;
    uint32_t cnt[SC_NB][256];
    bool all = nd == SC_NB, pf = (size_t)n * sizeof(SC_K) > SC_L1_BYTES;
    if (all)
        SC_F(count_all)(k, n, cnt);
    else if (nd > 0) {
        memset(cnt[0], 0, sizeof cnt[0]);
        for (int64_t i = 0; i < n; i++)
            cnt[0][(unsigned)(k[i] >> dig[0]) & 255u]++;
    }
    for (int q = 0; q < nd; q++) {
        const uint32_t *c = cnt[all ? q : q & 1];
        uint32_t *next = cnt[all ? 0 : (q + 1) & 1];
        int64_t off[256], run = 0;
        for (int v = 0; v < 256; v++)
            off[v] = run, run += c[v];
        if (q + 1 < nd && !all && !pf)
            SC_F(scatter_count)(k, p, tk, tp, n, dig[q], off, dig[q + 1], next);
        else {
            SC_F(scatter)(k, p, tk, tp, 0, n, dig[q], 255u, off, pf);
            if (q + 1 < nd && !all) {
                memset(next, 0, sizeof cnt[0]);
                for (int64_t i = 0; i < n; i++)
                    next[(unsigned)(tk[i] >> dig[q + 1]) & 255u]++;
            }
        }
        SC_K *sk = k;
        k = tk, tk = sk;
        uint64_t *sp = p;
        p = tp, tp = sp;
    }
    *rk = k, *rp = p;
}

/* One row on one thread: the merge sort when short, else the radix sort.  The merge
 * is branchy (a mispredicted compare per key and level): rows of 1024 f32 took
 * 135 us each with it, ~20 us with the radix sort (2-core VM under load). */
static void SC_F(row)(SC_K *k, uint64_t *p, int64_t n, SC_K *tk, uint64_t *tp, SC_K **rk, uint64_t **rp)
{
    if (n <= SC_SMALL_ROW)
        SC_F(mergesort)(k, p, n, tk, tp, rk, rp);
    else
        SC_F(radix_seq)(k, p, n, tk, tp, rk, rp);
}

/* Sorts the bucket (k, p) of n keys, (tk, tp) being the other buffer, and hands each
 * sorted piece to emit(cx, o + its offset, its length, keys, positions).  A bucket
 * larger than L1 is first split by the bits under its highest differing bit, as
 * many as make pieces of about SC_PIECE_BYTES (at most 8: one stable MSD pass; each
 * level leaves fewer bits to sort), so that the LSD passes of each piece run in L1
 * (0.78 ns a key a pass there, 1.4 in L2); a piece of equal keys is sorted already. */
static void SC_F(bucket)(SC_K *k, uint64_t *p, int64_t n, SC_K *tk, uint64_t *tp, int64_t o, sc_emit_fn emit,
                         const void *cx)
{
    size_t bytes = (size_t)n * (sizeof(SC_K) + (p ? 8u : 0u));
    if (bytes <= SC_L1_BYTES) {
        SC_K *rk;
        uint64_t *rp;
        SC_F(row)(k, p, n, tk, tp, &rk, &rp);
        emit(cx, o, n, rk, rp);
        return;
    }
    SC_K d = 0;
    for (int64_t i = 0; i < n; i++)
        d |= k[i] ^ k[0];
    if (d == 0) {
        emit(cx, o, n, k, p);
        return;
    }
    int top = 0, bits = 1;
    while (top < 8 * SC_NB && (d >> top))
        top++;
    while (bits < 8 && ((size_t)SC_PIECE_BYTES << bits) < bytes)
        bits++;
    int sh = top > bits ? top - bits : 0;
    unsigned mask = (1u << bits) - 1;
    int64_t cnt[256] = {0}, off[256], start[256], run = 0;
    for (int64_t i = 0; i < n; i++)
        cnt[(unsigned)(k[i] >> sh) & mask]++;
    for (unsigned b = 0; b <= mask; b++)
        start[b] = off[b] = run, run += cnt[b];
    SC_F(scatter)(k, p, tk, tp, 0, n, sh, mask, off, bytes > 2 * SC_L1_BYTES);
    for (unsigned b = 0; b <= mask; b++)
        if (cnt[b])
            SC_F(bucket)(tk + start[b], tp ? tp + start[b] : NULL, cnt[b], k + start[b], p ? p + start[b] : NULL,
                         o + start[b], emit, cx);
}

/* ---- the parallel radix sort of one long row: per pass, each chunk counts its
 * digits (job 1), the host turns the counts into positions ordered by (digit,
 * chunk), each chunk scatters its keys in order (job 2): stable. */

typedef struct SC_F(pjob) {
    SC_K *src, *dst;
    uint64_t *ps, *pd;
    int64_t n, chunk;
    int b;
    int64_t (*cnt)[SC_PRADIX]; /* per chunk */
} SC_F(pjob);

static void SC_F(p_count)(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const SC_F(pjob) *j = args;
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        int64_t *h = j->cnt[c];
        memset(h, 0, SC_PRADIX * sizeof *h);
        int sh = SC_PBITS * j->b;
        for (int64_t i = lo; i < hi; i++)
            h[(unsigned)(j->src[i] >> sh) & (SC_PRADIX - 1u)]++;
    }
}

static void SC_F(p_scatter)(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const SC_F(pjob) *j = args;
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        SC_F(scatter)(j->src, j->ps, j->dst, j->pd, lo, hi, SC_PBITS * j->b, SC_PRADIX - 1u, j->cnt[c], true);
    }
}

/* Sorts (k, p) of n keys over nchunks chunks with (tk, tp) as the other buffer;
 * cnt holds nchunks rows of SC_PRADIX.  rk, rp: where the result is. */
static gx_status SC_F(radix_par)(gx_ctx *ctx, SC_K *k, uint64_t *p, int64_t n, SC_K *tk, uint64_t *tp,
                                 int64_t nchunks, int64_t (*cnt)[SC_PRADIX], SC_K **rk, uint64_t **rp)
{
    SC_F(pjob) j = {k, tk, p, tp, n, (n + nchunks - 1) / nchunks, 0, cnt};
    for (int b = 0; b < SC_NP; b++) {
        j.b = b;
        GX__CHECK(sc_run(ctx, SC_F(p_count), &j, sizeof j, nchunks));
        int64_t run = 0, same = 0;
        unsigned d0 = SC_PDIGIT(j.src[0], b);
        for (int64_t c = 0; c < nchunks; c++)
            same += cnt[c][d0];
        if (same == n)
            continue; /* one digit for every key: this pass would not move anything */
        for (int d = 0; d < SC_PRADIX; d++)
            for (int64_t c = 0; c < nchunks; c++) {
                int64_t m = cnt[c][d];
                cnt[c][d] = run, run += m;
            }
        GX__CHECK(sc_run(ctx, SC_F(p_scatter), &j, sizeof j, nchunks));
        SC_K *sk = j.src;
        j.src = j.dst, j.dst = sk;
        uint64_t *sp = j.ps;
        j.ps = j.pd, j.pd = sp;
    }
    *rk = j.src, *rp = j.ps;
    return GX_OK;
}

#undef SC_NB
#undef SC_PFK
#undef SC_NP
#undef SC_PDIGIT
