/* sort_cpu_tmpl.h -- the CPU sorting kernels over one mapped key width, included
 * twice by sort_cpu.c (no include guard on purpose): with SC_K = uint32_t (keys of
 * up to 4 bytes) and SC_K = uint64_t (8-byte keys), and SC_F(name) naming the
 * functions of that width.  Keys are already mapped to unsigned integers whose
 * unsigned order is the wanted one (sort_cpu.c), so everything here is a stable
 * unsigned sort of keys k with an optional payload p (uint64_t, may be NULL). */

#define SC_NB (int)sizeof(SC_K)
#define SC_DIGIT(x, b) ((unsigned)((x) >> (8 * (b))) & 255u)
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
 * first position off[].  Two loops, not one with a test per key: this loop is the
 * whole cost of a radix sort. */
static void SC_F(scatter)(const SC_K *restrict src, const uint64_t *restrict ps, SC_K *restrict dst,
                          uint64_t *restrict pd, int64_t lo, int64_t hi, int sh, unsigned mask, int64_t *restrict off)
{
    if (ps) {
        for (int64_t i = lo; i < hi; i++) {
            SC_K x = src[i];
            int64_t o = off[(unsigned)(x >> sh) & mask]++;
            dst[o] = x;
            pd[o] = ps[i];
        }
    } else {
        for (int64_t i = lo; i < hi; i++) {
            SC_K x = src[i];
            dst[off[(unsigned)(x >> sh) & mask]++] = x;
        }
    }
}

/* One-thread LSD radix sort: every digit's counts in one read, passes whose digit is
 * the same for every key skipped.  rk, rp: where the result is. */
static void SC_F(radix_seq)(SC_K *k, uint64_t *p, int64_t n, SC_K *tk, uint64_t *tp, SC_K **rk, uint64_t **rp)
{
    int64_t cnt[SC_NB][256];
    memset(cnt, 0, sizeof cnt);
    /* Spelled out: as a loop over b, GCC -O2 kept a variable shift and a loop test
     * per digit, 40% of a row sort. */
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
    for (int b = 0; b < SC_NB && n > 0; b++) {
        if (cnt[b][SC_DIGIT(k[0], b)] == n)
            continue;
        int64_t off[256], run = 0;
        for (int d = 0; d < 256; d++)
            off[d] = run, run += cnt[b][d];
        SC_F(scatter)(k, p, tk, tp, 0, n, 8 * b, 255u, off);
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
        SC_F(scatter)(j->src, j->ps, j->dst, j->pd, lo, hi, SC_PBITS * j->b, SC_PRADIX - 1u, j->cnt[c]);
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
#undef SC_DIGIT
#undef SC_NP
#undef SC_PDIGIT
