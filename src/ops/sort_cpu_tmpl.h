/* sort_cpu_tmpl.h -- the CPU sorting kernels over one mapped key width, included
 * twice by sort_cpu.c (no include guard on purpose): with SC_K = uint32_t (keys of
 * up to 4 bytes) and SC_K = uint64_t (8-byte keys), and SC_F(name) naming the
 * functions of that width.  Keys are already mapped to unsigned integers whose
 * unsigned order is the wanted one (sort_cpu.c), so everything here is a stable
 * unsigned sort of keys k with an optional payload p (uint64_t, may be NULL). */

#define SC_NB (int)sizeof(SC_K)
#define SC_DIGIT(x, b) ((unsigned)((x) >> (8 * (b))) & 255u)

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

/* Moves (src, ps) to (dst, pd) by digit b, given each digit's first position off[]. */
static void SC_F(scatter)(const SC_K *src, const uint64_t *ps, SC_K *dst, uint64_t *pd, int64_t lo, int64_t hi, int b,
                          int64_t *off)
{
    if (ps) {
        for (int64_t i = lo; i < hi; i++) {
            int64_t o = off[SC_DIGIT(src[i], b)]++;
            dst[o] = src[i];
            pd[o] = ps[i];
        }
    } else {
        for (int64_t i = lo; i < hi; i++)
            dst[off[SC_DIGIT(src[i], b)]++] = src[i];
    }
}

/* One-thread LSD radix sort: every digit's counts in one read, passes whose digit is
 * the same for every key skipped.  rk, rp: where the result is. */
static void SC_F(radix_seq)(SC_K *k, uint64_t *p, int64_t n, SC_K *tk, uint64_t *tp, SC_K **rk, uint64_t **rp)
{
    int64_t cnt[SC_NB][256];
    memset(cnt, 0, sizeof cnt);
    for (int64_t i = 0; i < n; i++)
        for (int b = 0; b < SC_NB; b++)
            cnt[b][SC_DIGIT(k[i], b)]++;
    for (int b = 0; b < SC_NB && n > 0; b++) {
        if (cnt[b][SC_DIGIT(k[0], b)] == n)
            continue;
        int64_t off[256], run = 0;
        for (int d = 0; d < 256; d++)
            off[d] = run, run += cnt[b][d];
        SC_F(scatter)(k, p, tk, tp, 0, n, b, off);
        SC_K *sk = k;
        k = tk, tk = sk;
        uint64_t *sp = p;
        p = tp, tp = sp;
    }
    *rk = k, *rp = p;
}

/* One row on one thread: the merge sort when short, else the radix sort. */
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
    int64_t (*cnt)[256]; /* per chunk */
} SC_F(pjob);

static void SC_F(p_count)(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const SC_F(pjob) *j = args;
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        int64_t *h = j->cnt[c];
        memset(h, 0, 256 * sizeof *h);
        for (int64_t i = lo; i < hi; i++)
            h[SC_DIGIT(j->src[i], j->b)]++;
    }
}

static void SC_F(p_scatter)(const void *args, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const SC_F(pjob) *j = args;
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        SC_F(scatter)(j->src, j->ps, j->dst, j->pd, lo, hi, j->b, j->cnt[c]);
    }
}

/* Sorts (k, p) of n keys over nchunks chunks with (tk, tp) as the other buffer;
 * cnt holds nchunks rows of 256.  rk, rp: where the result is. */
static gx_status SC_F(radix_par)(gx_ctx *ctx, SC_K *k, uint64_t *p, int64_t n, SC_K *tk, uint64_t *tp,
                                 int64_t nchunks, int64_t (*cnt)[256], SC_K **rk, uint64_t **rp)
{
    SC_F(pjob) j = {k, tk, p, tp, n, (n + nchunks - 1) / nchunks, 0, cnt};
    for (int b = 0; b < SC_NB; b++) {
        j.b = b;
        GX__CHECK(sc_run(ctx, SC_F(p_count), &j, sizeof j, nchunks));
        int64_t tot[256] = {0}, run = 0;
        for (int64_t c = 0; c < nchunks; c++)
            for (int d = 0; d < 256; d++)
                tot[d] += cnt[c][d];
        if (tot[SC_DIGIT(j.src[0], b)] == n)
            continue; /* one digit for every key: this pass would not move anything */
        for (int d = 0; d < 256; d++)
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
