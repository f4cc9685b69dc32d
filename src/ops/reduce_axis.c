/* reduce_axis.c -- reductions along axes.
 *
 * Why a generator of its own (beside reduce_gen.c and range_gen.c's pipeline
 * reduce): those make ONE value from a flat range; this one makes one value per
 * kept position, each from a reduced range that may be strided, so its kernels
 * are built around the two-dimensional (kept x reduced) layout.  It reuses
 * reduce_gen's common text (rg_gen_common, the CUDA block fold) and scratch.
 *
 * The broadcast shape is split into kept dimensions (the output, in order) and
 * reduced dimensions; size-1 dimensions drop out and neighbours in each list merge
 * when every input's strides allow, so a dense (R, C) array summed over either axis
 * becomes one kept and one reduced dimension.  Two kernels then cover everything:
 *  - column: consecutive outputs sit on consecutive addresses (reducing a strided
 *    axis): one thread per output, the warp reads coalesced rows;
 *  - row: a warp (short rows) or a block (long rows) folds each output, with 16-byte
 *    vector loads where the reduced axis is contiguous and aligned.
 * With few outputs the reduced range is split over gridDim.y blocks whose partials
 * the last block to finish (per column tile / row group, threadfence + counter)
 * combines in y order: deterministic, one launch.  Several unmerged reduced
 * dimensions (views, axis sets like (0, 2)) go through div/mod per element:
 * correct, slower. */
#include "ops/reduce_priv.h"
#include "jit/lambda.h"

#include <stdio.h>
#include <string.h>

#define RA_BLOCK 256
#define RA_COLCHUNK 64 /* CPU: outputs folded side by side */

typedef struct ra_plan {
    int nk, nr;
    int64_t ks[GX_MAX_DIMS], rs[GX_MAX_DIMS];
    int64_t kst[RD_MAXIN][GX_MAX_DIMS], rst[RD_MAXIN][GX_MAX_DIMS];
    bool col;
    int G;              /* row kernel: threads per output (32 or 256) */
    int vec;            /* row kernel: elements per vector load (1 = none) */
    bool vin[RD_MAXIN]; /* row kernel, vec > 1: input read by vectors (else row-constant) */
    int cband;          /* CPU column kernel in bands (ra_gen_cpu_band): 1 + a bit per input
                         * contiguous along the columns (the others are constant along them) */
} ra_plan;

typedef struct ra_user {
    uint64_t p[RD_MAXIN];
    int64_t ks[GX_MAX_DIMS], rs[GX_MAX_DIMS];
    int64_t kst[RD_MAXIN][GX_MAX_DIMS], rst[RD_MAXIN][GX_MAX_DIMS];
    ew_cval c[EW_MAXCONST];
    double cnt;
    int64_t nout, nred, chunk;
    bd_args b; /* passed only when the map reads bound arrays */
} ra_user;

static void ra_user_fields(char *buf, size_t n, bool bind)
{
    gx__fmt(buf, n,
            "uint64_t p[%d]; int64_t ks[%d], rs[%d]; int64_t kst[%d][%d], rst[%d][%d]; "
            "union { double f; int64_t i; uint64_t u; } c[%d]; double cnt; int64_t nout, nred, chunk;%s",
            RD_MAXIN, GX_MAX_DIMS, GX_MAX_DIMS, RD_MAXIN, GX_MAX_DIMS, RD_MAXIN, GX_MAX_DIMS, EW_MAXCONST,
            bind ? " gx_bargs b;" : "");
}

/* ------------------------------------------------------------ plan */

/* Appends a dimension to a list, merging it into the previous one when every input
 * steps through both as through one. */
static void ra_push(int nin, int64_t *sizes, int64_t st[][GX_MAX_DIMS], int *cnt, int64_t size, const int64_t *s)
{
    int c = *cnt;
    bool merge = c > 0;
    for (int k = 0; k < nin && merge; k++)
        merge = st[k][c - 1] == s[k] * size;
    if (merge) {
        sizes[c - 1] *= size;
        for (int k = 0; k < nin; k++)
            st[k][c - 1] = s[k];
        return;
    }
    sizes[c] = size;
    for (int k = 0; k < nin; k++)
        st[k][c] = s[k];
    *cnt = c + 1;
}

static void ra_plan_dims(const rd_job *job, ra_plan *pl)
{
    int64_t bst[RD_MAXIN][GX_MAX_DIMS];
    for (int k = 0; k < job->nin; k++)
        rd_bcast_strides(job, k, bst[k]);
    for (int d = 0; d < job->ndim; d++) {
        if (job->shape[d] == 1)
            continue;
        int64_t s[RD_MAXIN];
        for (int k = 0; k < job->nin; k++)
            s[k] = bst[k][d];
        if (job->red[d])
            ra_push(job->nin, pl->rs, pl->rst, &pl->nr, job->shape[d], s);
        else
            ra_push(job->nin, pl->ks, pl->kst, &pl->nk, job->shape[d], s);
    }
    if (pl->nr == 0) { /* nothing (or an empty axis) to fold: one pseudo element */
        pl->rs[0] = job->nred;
        for (int k = 0; k < job->nin; k++)
            pl->rst[k][0] = 0;
        pl->nr = 1;
    }
}

/* Vector loads along rows: every input either contiguous along the (single) reduced
 * dimension with 16-byte aligned rows, or constant along it. */
static void ra_plan_vec(const rd_job *job, ra_plan *pl)
{
    pl->vec = 1;
    if (pl->nr != 1)
        return;
    size_t maxsz = 0;
    for (int k = 0; k < job->nin; k++) {
        pl->vin[k] = pl->rst[k][0] == 1;
        if (!pl->vin[k] && pl->rst[k][0] != 0)
            return;
        size_t es = gx_dtype_size(job->in[k]->dtype);
        if (!pl->vin[k])
            continue;
        maxsz = es > maxsz ? es : maxsz;
        if ((uintptr_t)gx__array_ptr(job->in[k]) % 16)
            return;
        for (int d = 0; d < pl->nk; d++)
            if ((pl->kst[k][d] * (int64_t)es) % 16)
                return;
    }
    if (maxsz)
        pl->vec = (int)(16 / maxsz);
}

static void ra_plan_make(const rd_job *job, ra_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    ra_plan_dims(job, pl);
    bool unit = false, ok = true;
    for (int k = 0; k < job->nin; k++) {
        int64_t s = pl->kst[k][pl->nk - 1];
        unit = unit || s == 1;
        ok = ok && (s == 0 || s == 1);
    }
    /* Short reductions read well per thread even when strided (the cache lines are
     * shared by neighbouring threads). */
    pl->col = (unit && ok) || job->nred <= 16;
    pl->G = job->nred >= 2048 ? RA_BLOCK : 32;
    if (unit && ok && pl->nr == 1 && !job->op.find && !job->bind.n && !gx__target_is_cuda(job->ctx)) {
        pl->cband = 1;
        for (int k = 0; k < job->nin; k++)
            pl->cband |= (pl->kst[k][pl->nk - 1] == 1) << (k + 1);
    }
    if (!pl->col)
        ra_plan_vec(job, pl);
}

/* ------------------------------------------------------------ code pieces */

/* Offsets b<k> of output j's first element in every input. */
static void ra_gen_base(gx__sbuf *b, const rd_job *job, const ra_plan *pl, const char *j, const char *ind)
{
    gx__sb_printf(b, "%sint64_t bt = %s, bc;\n%s(void)bc;\n", ind, j, ind);
    for (int k = 0; k < job->nin; k++)
        gx__sb_printf(b, "%sint64_t b%d = 0;\n", ind, k);
    for (int d = pl->nk - 1; d >= 0; d--) {
        if (d > 0)
            gx__sb_printf(b, "%sbc = bt %% u->ks[%d]; bt /= u->ks[%d];\n", ind, d, d);
        else
            gx__sb_printf(b, "%sbc = bt;\n", ind);
        for (int k = 0; k < job->nin; k++)
            gx__sb_printf(b, "%sb%d += bc * u->kst[%d][%d];\n", ind, k, k, d);
    }
}

/* Offsets ro<k><tag> of reduced element R (relative to the output's base). */
static void ra_gen_ro(gx__sbuf *b, const rd_job *job, const ra_plan *pl, const char *R, const char *tag,
                      const char *ind)
{
    if (pl->nr == 1) {
        for (int k = 0; k < job->nin; k++)
            gx__sb_printf(b, "%sconst int64_t ro%d%s = (%s) * u->rst[%d][0];\n", ind, k, tag, R, k);
        return;
    }
    gx__sb_printf(b, "%sint64_t rt%s = %s, rc%s;\n", ind, tag, R, tag);
    for (int k = 0; k < job->nin; k++)
        gx__sb_printf(b, "%sint64_t ro%d%s = 0;\n", ind, k, tag);
    for (int d = pl->nr - 1; d >= 0; d--) {
        if (d > 0)
            gx__sb_printf(b, "%src%s = rt%s %% u->rs[%d]; rt%s /= u->rs[%d];\n", ind, tag, tag, d, tag, d);
        else
            gx__sb_printf(b, "%src%s = rt%s;\n", ind, tag, tag);
        for (int k = 0; k < job->nin; k++)
            gx__sb_printf(b, "%sro%d%s += rc%s * u->rst[%d][%d];\n", ind, k, tag, tag, k, d);
    }
}

static void ra_gen_fold(gx__sbuf *b, const rd_job *job, const char *acc, const char *q, const char *R, const char *ind)
{
    /* Every loop meets a given accumulator's indices in increasing order: the first
     * value replaces the identity, later ones only when strictly better. */
    if (job->op.find)
        gx__sb_printf(b, "%sif (rg_better(v, %s) || %s == RG_IMAX) { %s = v; %s = %s; }\n", ind, acc, q, acc, q, R);
    else
        gx__sb_printf(b, "%s%s = rg_comb(%s, v);\n", ind, acc, acc);
}

/* With bound arrays: names output J as gx_bj, which each element's position uses. */
static void ra_gen_bj(gx__sbuf *b, const rd_job *job, const char *J, const char *ind)
{
    if (job->bind.n)
        gx__sb_printf(b, "%sconst int64_t gx_bj = %s;\n", ind, J);
}

/* One element: loads given per input, folded into acc / q with index R.  With bound
 * arrays, the element's work position (bd_end_split) is gx_bj * nred + R. */
static void ra_gen_elem(gx__sbuf *b, const rd_job *job, const char *const *load, const char *acc, const char *q,
                        const char *R, const char *ind)
{
    gx__sb_printf(b, "%s{\n%s  rg_acc v;\n", ind, ind);
    if (job->bind.n)
        gx__sb_printf(b, "%s  const int64_t gx_bpos = gx_bj * u->nred + (%s);\n%s  (void)gx_bpos;\n", ind, R, ind);
    gx__sb_printf(b, "%s  ", ind);
    rd_elem_text(job, load, b);
    gx__sb_puts(b, "\n");
    char ind2[32];
    gx__fmt(ind2, sizeof ind2, "%s  ", ind);
    ra_gen_fold(b, job, acc, q, R, ind2);
    gx__sb_printf(b, "%s}\n", ind);
}

/* Element R of output j (bases b<k>, offsets computed here with `tag`). */
static void ra_gen_strided_elem(gx__sbuf *b, const rd_job *job, const ra_plan *pl, const char *R, const char *tag,
                                const char *acc, const char *q, const char *extra, const char *ind)
{
    char ld[RD_MAXIN][128];
    const char *load[RD_MAXIN];
    gx__sb_printf(b, "%s{\n", ind);
    char ind2[32];
    gx__fmt(ind2, sizeof ind2, "%s  ", ind);
    ra_gen_ro(b, job, pl, R, tag, ind2);
    for (int k = 0; k < job->nin; k++) {
        gx__fmt(ld[k], sizeof ld[k], "((const %s *)(rg_uptr)u->p[%d])[b%d%s + ro%d%s]",
                gx__dtype_ctype(job->in[k]->dtype), k, k, extra, k, tag);
        load[k] = ld[k];
    }
    ra_gen_elem(b, job, load, acc, q, R, ind2);
    gx__sb_printf(b, "%s}\n", ind);
}

static void ra_gen_store(gx__sbuf *b, const char *j, const char *acc, const char *q, const char *ind)
{
    gx__sb_printf(b, "%sif (a->out) ((rg_out *)(rg_uptr)a->out)[%s] = rg_final(%s, u);\n", ind, j, acc);
    gx__sb_printf(b, "%sif (a->out_idx) ((int64_t *)(rg_uptr)a->out_idx)[%s] = %s;\n", ind, j, q);
}

/* ------------------------------------------------------------ CPU */

/* The column kernel walks its chunk of outputs down the rows: each row is a few
 * cache lines one row stride from the last, which the hardware prefetchers do not
 * follow, so only the misses the out-of-order window holds are in flight.  f64
 * accumulation of f32 (two converts and twice the accumulator stores per element)
 * halved them: a 4096 x 4096 f32 sum over axis 0 on one thread (Xeon @ 2.8 GHz)
 * went from 1.1 to 0.8 G elements/s.  Prefetching the chunk RA_PREFETCH rows ahead
 * keeps the misses in flight whatever the arithmetic costs: 1.6-2.0 (f32
 * accumulators: 2.1-2.3). */
#define RA_PREFETCH 16
static void ra_gen_cpu_prefetch(gx__sbuf *b, const rd_job *job, const ra_plan *pl)
{
    size_t maxsz = 1;
    for (int k = 0; k < job->nin; k++)
        maxsz = gx_dtype_size(job->in[k]->dtype) > maxsz ? gx_dtype_size(job->in[k]->dtype) : maxsz;
    gx__sb_printf(
        b, "#if defined(__GNUC__)\n      if (R + %d < u->nred)\n        for (int64_t t = 0; t < cn; t += %d) {\n",
        RA_PREFETCH, (int)(64 / maxsz));
    for (int k = 0; k < job->nin; k++)
        gx__sb_printf(b,
                      "          __builtin_prefetch(&((const %s *)(rg_uptr)u->p[%d])[b%d + t * u->kst[%d][%d] + ro%d + "
                      "%d * u->rst[%d][0]]);\n",
                      gx__dtype_ctype(job->in[k]->dtype), k, k, k, pl->nk - 1, k, RA_PREFETCH, k);
    gx__sb_puts(b, "        }\n#endif\n");
}

/* Opens the loop over the part's outputs in chunks of up to `most` neighbours along
 * the last kept dimension (j0, cn), with their bases b<k>. */
static void ra_gen_cpu_chunk(gx__sbuf *b, const rd_job *job, const ra_plan *pl, int most)
{
    gx__sb_printf(b,
                  "  for (int64_t j0 = jb; j0 < je;) {\n"
                  "    int64_t cn = je - j0, inner = u->ks[%d] - j0 %% u->ks[%d];\n"
                  "    if (cn > inner) cn = inner;\n    if (cn > %d) cn = %d;\n",
                  pl->nk - 1, pl->nk - 1, most, most);
    ra_gen_base(b, job, pl, "j0", "    ");
}

static void ra_gen_cpu_col(gx__sbuf *b, const rd_job *job, const ra_plan *pl)
{
    ra_gen_cpu_chunk(b, job, pl, RA_COLCHUNK);
    gx__sb_printf(b,
                  "    rg_acc acc[%d];\n    int64_t q[%d];\n"
                  "    for (int64_t t = 0; t < cn; t++) { acc[t] = rg_identity(u); q[t] = RG_IMAX; }\n"
                  "    for (int64_t R = 0; R < u->nred; R++) {\n",
                  RA_COLCHUNK, RA_COLCHUNK);
    ra_gen_ro(b, job, pl, "R", "", "      ");
    if (pl->nr == 1)
        ra_gen_cpu_prefetch(b, job, pl);
    gx__sb_puts(b, "      for (int64_t t = 0; t < cn; t++) {\n");
    ra_gen_bj(b, job, "j0 + t", "        ");
    char ld[RD_MAXIN][128];
    const char *load[RD_MAXIN];
    for (int k = 0; k < job->nin; k++) {
        gx__fmt(ld[k], sizeof ld[k], "((const %s *)(rg_uptr)u->p[%d])[b%d + t * u->kst[%d][%d] + ro%d]",
                gx__dtype_ctype(job->in[k]->dtype), k, k, k, pl->nk - 1, k);
        load[k] = ld[k];
    }
    ra_gen_elem(b, job, load, "acc[t]", "q[t]", "R", "        ");
    gx__sb_puts(b, "      }\n    }\n    for (int64_t t = 0; t < cn; t++) {\n");
    ra_gen_store(b, "j0 + t", "acc[t]", "q[t]", "      ");
    gx__sb_puts(b, "    }\n    j0 += cn;\n  }\n");
}

/* Column sums of dense rows (the plan's cband): the part's outputs in bands of
 * RA_BAND accumulators kept in L1, the rows RA_BAND_ROWS at a time: one vectorised
 * pass over the band per block of rows loads each accumulator, adds the block's
 * elements of its column and stores it.  Why: the column kernel above walks 64
 * outputs down every row, a few cache lines one row stride apart, which the hardware
 * prefetchers do not follow; here a row is read in runs of the band's width (8 KiB of
 * f32), RA_BAND_ROWS of them side by side, and the accumulators' loads and stores are
 * shared by that many elements.  One thread, 2-core AMD EPYC VM, f32 summed in f64,
 * the whole-array sum of the same matrix in brackets: 4096 x 4096 from memory 5.9 ->
 * 2.8-3.4 ms (2.1-2.5); 1024 x 1024 in the LLC 146 -> 92-95 us (88).  Bands of 64 or
 * 1024 outputs walked row by row: 3.6-4.0 ms.  Sixteen rows a block: the compiler no
 * longer unrolls the block, and the pass stays scalar (12 ms). */
#define RA_BAND 2048
#define RA_BAND_ROWS 8
static void ra_gen_cpu_band_elem(gx__sbuf *b, const rd_job *job, const ra_plan *pl, const char *t, const char *R,
                                 const char *acc, const char *ind)
{
    char ld[RD_MAXIN][96];
    const char *load[RD_MAXIN];
    for (int k = 0; k < job->nin; k++) {
        if (pl->cband >> (k + 1) & 1)
            gx__fmt(ld[k], sizeof ld[k], "c%d[(%s) + (%s) * u->rst[%d][0]]", k, t, R, k);
        else
            gx__fmt(ld[k], sizeof ld[k], "c%d[(%s) * u->rst[%d][0]]", k, R, k);
        load[k] = ld[k];
    }
    ra_gen_elem(b, job, load, acc, "", R, ind);
}

static void ra_gen_cpu_band(gx__sbuf *b, const rd_job *job, const ra_plan *pl)
{
    ra_gen_cpu_chunk(b, job, pl, RA_BAND);
    for (int k = 0; k < job->nin; k++)
        gx__sb_printf(b, "    const %s *c%d = (const %s *)(rg_uptr)u->p[%d] + b%d;\n",
                      gx__dtype_ctype(job->in[k]->dtype), k, gx__dtype_ctype(job->in[k]->dtype), k, k);
    gx__sb_printf(b,
                  "    rg_acc acc[%d];\n    for (int64_t t = 0; t < cn; t++) acc[t] = rg_identity(u);\n"
                  "    int64_t R0 = 0;\n    for (; R0 + %d <= u->nred; R0 += %d) {\n"
                  "      for (int64_t t = 0; t < cn; t++) {\n        rg_acc w = acc[t];\n"
                  "        for (int k = 0; k < %d; k++) {\n          const int64_t R = R0 + k;\n",
                  RA_BAND, RA_BAND_ROWS, RA_BAND_ROWS, RA_BAND_ROWS);
    ra_gen_cpu_band_elem(b, job, pl, "t", "R", "w", "          ");
    gx__sb_puts(b, "        }\n        acc[t] = w;\n      }\n    }\n"
                   "    for (int64_t R = R0; R < u->nred; R++)\n      for (int64_t t = 0; t < cn; t++)\n");
    ra_gen_cpu_band_elem(b, job, pl, "t", "R", "acc[t]", "        ");
    gx__sb_puts(b, "    for (int64_t t = 0; t < cn; t++)\n"
                   "      if (a->out) ((rg_out *)(rg_uptr)a->out)[j0 + t] = rg_final(acc[t], u);\n"
                   "    j0 += cn;\n  }\n");
}

static void ra_gen_cpu_row(gx__sbuf *b, const rd_job *job, const ra_plan *pl)
{
    gx__sb_puts(b, "  for (int64_t j = jb; j < je; j++) {\n");
    ra_gen_base(b, job, pl, "j", "    ");
    ra_gen_bj(b, job, "j", "    ");
    /* Four independent accumulators keep the loop free of one long dependency chain. */
    gx__sb_puts(b, "    rg_acc r0 = rg_identity(u), r1 = r0, r2 = r0, r3 = r0;\n"
                   "    int64_t q0 = RG_IMAX, q1 = q0, q2 = q0, q3 = q0;\n    int64_t R = 0;\n"
                   "    for (; R + 4 <= u->nred; R += 4) {\n");
    const char *tags[4] = {"a", "b", "c", "d"}, *acc[4] = {"r0", "r1", "r2", "r3"}, *q[4] = {"q0", "q1", "q2", "q3"};
    const char *Rs[4] = {"R", "R + 1", "R + 2", "R + 3"};
    for (int t = 0; t < 4; t++)
        ra_gen_strided_elem(b, job, pl, Rs[t], tags[t], acc[t], q[t], "", "      ");
    gx__sb_puts(b, "    }\n    for (; R < u->nred; R++) {\n");
    ra_gen_strided_elem(b, job, pl, "R", "a", "r0", "q0", "", "      ");
    gx__sb_puts(b, "    }\n");
    if (job->op.find)
        gx__sb_puts(b,
                    "    rg_pick(&r0, &q0, r1, q1);\n    rg_pick(&r2, &q2, r3, q3);\n    rg_pick(&r0, &q0, r2, q2);\n");
    else
        gx__sb_puts(b, "    r0 = rg_comb(r0, r1);\n    r2 = rg_comb(r2, r3);\n    r0 = rg_comb(r0, r2);\n");
    ra_gen_store(b, "j", "r0", "q0", "    ");
    gx__sb_puts(b, "  }\n");
}

/* Rows that are contiguous (the plan's vector case: every input dense along the one
 * reduced dimension or constant along it) of f32 summed in f64.  The general row
 * loop above indexes through runtime strides and stays scalar, below memory speed,
 * and f64 accumulation made it slower still (row sums of a 4096 x 4096 f32 matrix,
 * 2 threads, Xeon @ 2.8 GHz: 5.3 ms against 4.75 with f32 accumulators).  Direct
 * indexing into RA_LANES lanes of an accumulator array vectorises (GCC does not
 * vectorise named f64 accumulators fed by f32 converts): 4.97 ms against 5.35 for
 * the f32 loop in the same run; 512 x 512 in L2 on one thread 5.4-7.2 G elements/s
 * against 3.2-3.6.  The lanes loop is kept a loop (RG_CPU_NO_UNROLL): with
 * -march=native on an AMD EPYC (znver4) GCC 12 unrolled its 16 trips and left the
 * copies scalar, a convert and an add per element (one thread, 1024 x 1024 f32 in the
 * LLC: 295 us, against 95 as a loop and 88 for the whole-array sum). */
#define RA_LANES 16
static bool ra_cpu_row_lanes(const rd_job *job, const ra_plan *pl)
{
    if (job->op.acc != GX_F64 || job->op.find || pl->vec <= 1)
        return false;
    for (int k = 0; k < job->nin; k++)
        if (pl->vin[k] && gx_dtype_size(job->in[k]->dtype) >= 8)
            return false;
    return true;
}

static void ra_gen_cpu_row_lanes(gx__sbuf *b, const rd_job *job, const ra_plan *pl, bool pf)
{
    char ld[RD_MAXIN][32];
    const char *load[RD_MAXIN];
    gx__sb_puts(b, "  for (int64_t j = jb; j < je; j++) {\n");
    ra_gen_base(b, job, pl, "j", "    ");
    ra_gen_bj(b, job, "j", "    ");
    for (int k = 0; k < job->nin; k++) {
        const char *ct = gx__dtype_ctype(job->in[k]->dtype);
        if (pl->vin[k]) {
            gx__sb_printf(b, "    const %s *row%d = gx_p%d + b%d;\n", ct, k, k, k);
            gx__fmt(ld[k], sizeof ld[k], "row%d[R]", k);
        } else {
            gx__sb_printf(b, "    const %s rc%d = gx_p%d[b%d];\n", ct, k, k, k);
            gx__fmt(ld[k], sizeof ld[k], "rc%d", k);
        }
        load[k] = ld[k];
    }
    gx__sb_printf(b,
                  "    rg_acc r[%d];\n    for (int k = 0; k < %d; k++) r[k] = rg_identity(u);\n"
                  "    int64_t R0 = 0;\n    for (; R0 + %d <= u->nred; R0 += %d) {\n",
                  RA_LANES, RA_LANES, RA_LANES, RA_LANES);
    /* A large part's rows prefetch (reduce_gen.h's RG_CPU_WIDE_MIN says why). */
    char ptr[32];
    for (int k = 0; pf && k < job->nin; k++) {
        gx__fmt(ptr, sizeof ptr, "row%d + R0", k);
        if (pl->vin[k])
            lam_emit_prefetch(b, "      ", ptr, RA_LANES * gx_dtype_size(job->in[k]->dtype));
    }
    gx__sb_printf(b, "%s      for (int k = 0; k < %d; k++) {\n        const int64_t R = R0 + k;\n", RG_CPU_NO_UNROLL, RA_LANES);
    ra_gen_elem(b, job, load, "r[k]", "", "R", "        ");
    gx__sb_puts(b, "      }\n    }\n    for (int64_t R = R0; R < u->nred; R++)\n");
    ra_gen_elem(b, job, load, "r[0]", "", "R", "      ");
    gx__sb_printf(b,
                  "    for (int st = 1; st < %d; st *= 2)\n"
                  "      for (int k = 0; k + st < %d; k += 2 * st) r[k] = rg_comb(r[k], r[k + st]);\n",
                  RA_LANES, RA_LANES);
    gx__sb_puts(b, "    if (a->out) ((rg_out *)(rg_uptr)a->out)[j] = rg_final(r[0], u);\n  }\n");
}

/* The row lanes' body: a function of its own whose inputs are restrict parameters
 * (gx_p<k>), called by gx_ra.  Why: restrict locals initialised from the argument
 * block's integers are not trusted by GCC 12, which then versions the lanes loop for
 * an alias between a row and the lane array and keeps the lanes in memory (a store
 * and a reload per 16 elements; reduce_gen.c's rg_gen_cpu_head has the figures for
 * the whole-array fold, 5.5 -> 9.2 G f32/s in L2 on one thread).  Emitted twice, the
 * second for large parts: it prefetches, with 512-bit vectors where the CPU has
 * AVX-512 (reduce_gen.h's RG_CPU_WIDE_*). */
static void ra_gen_cpu_row_lanes_fn(gx__sbuf *b, const rd_job *job, const ra_plan *pl, bool wide)
{
    gx__sb_puts(b, RG_CPU_BODY_ATTRS);
    if (wide)
        gx__sb_puts(b, RG_CPU_WIDE_IF RG_CPU_WIDE_ATTR "#endif\n");
    gx__sb_printf(b, "static void gx_ra_body%s(const gx_args *a, const rg_user_t *u, int64_t jb, int64_t je",
                  wide ? "_wide" : "");
    for (int k = 0; k < job->nin; k++)
        gx__sb_printf(b, ", const %s *restrict gx_p%d", gx__dtype_ctype(job->in[k]->dtype), k);
    gx__sb_puts(b, ")\n{\n");
    ra_gen_cpu_row_lanes(b, job, pl, wide);
    gx__sb_puts(b, "}\n");
}

/* gx_ra's call of a row lanes body (`wide`: the 512-bit one). */
static void ra_gen_cpu_row_lanes_call(gx__sbuf *b, const rd_job *job, bool wide)
{
    gx__sb_printf(b, "%sgx_ra_body%s(a, u, jb, je", wide ? "    " : "  ", wide ? "_wide" : "");
    for (int k = 0; k < job->nin; k++)
        gx__sb_printf(b, ", (const %s *)(rg_uptr)u->p[%d]", gx__dtype_ctype(job->in[k]->dtype), k);
    gx__sb_puts(b, ");\n");
}

static void ra_gen_cpu(gx__sbuf *b, const rd_job *job, const ra_plan *pl)
{
    bool lanes = !pl->col && ra_cpu_row_lanes(job, pl);
    if (lanes) {
        ra_gen_cpu_row_lanes_fn(b, job, pl, false);
        ra_gen_cpu_row_lanes_fn(b, job, pl, true);
    }
    /* The pool splits [0, nout): output j is item j. */
    gx__sb_puts(b, "void gx_ra(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                   "  const gx_args *a = (const gx_args *)ap;\n  const rg_user_t *u = &a->u;\n  (void)thread;\n"
                   "  const int64_t jb = begin, je = end;\n");
    if (pl->cband) {
        ra_gen_cpu_band(b, job, pl);
    } else if (pl->col) {
        ra_gen_cpu_col(b, job, pl);
    } else if (lanes) {
        gx__sb_printf(b, "  if ((je - jb) * u->nred >= %d) {\n", RG_CPU_WIDE_MIN);
        ra_gen_cpu_row_lanes_call(b, job, true);
        gx__sb_puts(b, "    return;\n  }\n");
        ra_gen_cpu_row_lanes_call(b, job, false);
    } else {
        ra_gen_cpu_row(b, job, pl);
    }
    gx__sb_puts(b, "}\n");
}

/* ------------------------------------------------------------ CUDA */

/* The split tail shared by both kernels: publish partials, the last block of the
 * tile folds them in y order.  `lead` is true for the thread owning output j. */
static void ra_gen_cuda_split(gx__sbuf *b, const char *lead)
{
    gx__sb_printf(b, "    if (gridDim.y == 1) {\n      if (%s) {\n", lead);
    gx__sb_puts(b, "        if (a.out) ((rg_out *)(rg_uptr)a.out)[j] = rg_final(acc, u);\n"
                   "        if (a.out_idx) ((int64_t *)(rg_uptr)a.out_idx)[j] = q;\n      }\n      continue;\n    }\n");
    gx__sb_printf(b,
                  "    if (%s) {\n      part[(int64_t)blockIdx.y * nout + j] = acc;\n"
                  "      part_idx[(int64_t)blockIdx.y * nout + j] = q;\n    }\n",
                  lead);
    gx__sb_puts(b, "    __threadfence();\n    __syncthreads();\n"
                   "    if (threadIdx.x == 0) last = atomicAdd(&counter[tile], 1u) == gridDim.y - 1;\n"
                   "    __syncthreads();\n    if (!last) continue;\n    __threadfence();\n");
    gx__sb_printf(b,
                  "    if (%s) {\n      acc = rg_identity(u);\n      q = RG_IMAX;\n"
                  "      for (unsigned yy = 0; yy < gridDim.y; yy++) {\n",
                  lead);
    gx__sb_puts(b, "        const rg_acc pv = rg_vload(&part[(int64_t)yy * nout + j]);\n"
                   "        const int64_t pq = rg_vload(&part_idx[(int64_t)yy * nout + j]);\n        (void)pq;\n");
    gx__sb_puts(b, "        RA_MERGE(acc, q, pv, pq);\n      }\n"
                   "      if (a.out) ((rg_out *)(rg_uptr)a.out)[j] = rg_final(acc, u);\n"
                   "      if (a.out_idx) ((int64_t *)(rg_uptr)a.out_idx)[j] = q;\n    }\n"
                   "    if (threadIdx.x == 0) counter[tile] = 0u;\n");
}

static void ra_gen_cuda_head(gx__sbuf *b, const rd_job *job)
{
    if (job->op.find)
        gx__sb_puts(b, "#define RA_MERGE(A, Q, V, VQ) rg_pick(&(A), &(Q), (V), (VQ))\n");
    else
        gx__sb_puts(b, "#define RA_MERGE(A, Q, V, VQ) ((A) = rg_comb((A), (V)))\n");
    gx__sb_printf(b,
                  "extern \"C\" __global__ void __launch_bounds__(%d) gx_ra(const gx_args a)\n{\n  GX_PDL_ENTER();\n"
                  "  const rg_user_t *u = &a.u;\n  const int64_t nout = u->nout, nred = u->nred;\n"
                  "  const int64_t r0 = (int64_t)blockIdx.y * u->chunk;\n"
                  "  const int64_t r1 = r0 + u->chunk < nred ? r0 + u->chunk : nred;\n"
                  "  rg_acc *part = (rg_acc *)(rg_uptr)a.part;\n"
                  "  int64_t *part_idx = (int64_t *)(rg_uptr)a.part_idx;\n"
                  "  unsigned *counter = (unsigned *)(rg_uptr)a.counter;\n"
                  "  __shared__ bool last;\n  (void)part; (void)part_idx; (void)counter; (void)r1;\n",
                  RA_BLOCK);
}

static void ra_gen_cuda_col(gx__sbuf *b, const rd_job *job, const ra_plan *pl)
{
    ra_gen_cuda_head(b, job);
    gx__sb_printf(b,
                  "  for (int64_t tile = blockIdx.x; tile * %d < nout; tile += gridDim.x) {\n"
                  "    const int64_t j = tile * %d + threadIdx.x;\n    const bool valid = j < nout;\n"
                  "    rg_acc acc = rg_identity(u);\n    int64_t q = RG_IMAX;\n    (void)q;\n    if (valid) {\n",
                  RA_BLOCK, RA_BLOCK);
    ra_gen_base(b, job, pl, "j", "      ");
    ra_gen_bj(b, job, "j", "      ");
    /* Eight rows per step: their loads are independent, so they are in flight together
     * (8 x 4 bytes per thread keeps enough bytes moving per SM). */
    gx__sb_puts(b, "      int64_t R = r0;\n      for (; R + 8 <= r1; R += 8) {\n");
    const char *tags[8] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    const char *Rs[8] = {"R", "R + 1", "R + 2", "R + 3", "R + 4", "R + 5", "R + 6", "R + 7"};
    for (int t = 0; t < 8; t++)
        ra_gen_strided_elem(b, job, pl, Rs[t], tags[t], "acc", "q", "", "        ");
    gx__sb_puts(b, "      }\n      for (; R < r1; R++) {\n");
    ra_gen_strided_elem(b, job, pl, "R", "a", "acc", "q", "", "        ");
    gx__sb_puts(b, "      }\n    }\n");
    ra_gen_cuda_split(b, "valid");
    gx__sb_puts(b, "  }\n}\n");
}

/* Row kernel body for one output: lane folds its share of [r0, r1). */
static void ra_gen_cuda_row_body(gx__sbuf *b, const rd_job *job, const ra_plan *pl)
{
    int G = pl->G, K = pl->vec, U = 4;
    if (K > 1) {
        char ld[RD_MAXIN][64];
        const char *load[RD_MAXIN];
        for (int k = 0; k < job->nin; k++) {
            const char *ct = gx__dtype_ctype(job->in[k]->dtype);
            if (pl->vin[k]) {
                gx__sb_printf(b, "      struct __align__(%zu) rav%d { %s e[%d]; };\n",
                              gx_dtype_size(job->in[k]->dtype) * (size_t)K, k, ct, K);
                gx__sb_printf(b,
                              "      const rav%d *vp%d = (const rav%d *)((const %s *)(rg_uptr)u->p[%d] + b%d + r0);\n",
                              k, k, k, ct, k, k);
                gx__fmt(ld[k], sizeof ld[k], "xv%d[uu].e[e]", k);
            } else {
                gx__sb_printf(b, "      const %s rc%d = ((const %s *)(rg_uptr)u->p[%d])[b%d];\n", ct, k, ct, k, k);
                gx__fmt(ld[k], sizeof ld[k], "rc%d", k);
            }
            load[k] = ld[k];
        }
        gx__sb_printf(b,
                      "      const int64_t nv = (r1 - r0) / %d;\n"
                      "      for (int64_t v0 = lane; v0 < nv; v0 += %d) {\n",
                      K, G * U);
        for (int k = 0; k < job->nin; k++)
            if (pl->vin[k])
                gx__sb_printf(b, "        rav%d xv%d[%d];\n", k, k, U);
        gx__sb_printf(
            b, "#pragma unroll\n        for (int uu = 0; uu < %d; uu++)\n          if (v0 + uu * %d < nv) {\n", U, G);
        for (int k = 0; k < job->nin; k++)
            if (pl->vin[k])
                gx__sb_printf(b, "            xv%d[uu] = vp%d[v0 + uu * %d];\n", k, k, G);
        gx__sb_printf(b,
                      "          }\n#pragma unroll\n        for (int uu = 0; uu < %d; uu++)\n"
                      "          if (v0 + uu * %d < nv) {\n#pragma unroll\n            for (int e = 0; e < %d; e++) {\n"
                      "              const int64_t R = r0 + (v0 + uu * %d) * %d + e;\n",
                      U, G, K, G, K);
        ra_gen_elem(b, job, load, "acc", "q", "R", "              ");
        gx__sb_printf(
            b, "            }\n          }\n      }\n      for (int64_t R = r0 + nv * %d + lane; R < r1; R += %d) {\n",
            K, G);
        ra_gen_strided_elem(b, job, pl, "R", "a", "acc", "q", "", "        ");
        gx__sb_puts(b, "      }\n");
        return;
    }
    gx__sb_printf(b, "      int64_t R = r0 + lane;\n      for (; R + %d < r1; R += %d) {\n", 3 * G, 4 * G);
    char Rs[4][24];
    const char *tags[4] = {"a", "b", "c", "d"};
    for (int t = 0; t < 4; t++) {
        gx__fmt(Rs[t], sizeof Rs[t], "R + %d", t * G);
        ra_gen_strided_elem(b, job, pl, Rs[t], tags[t], "acc", "q", "", "        ");
    }
    gx__sb_printf(b, "      }\n      for (; R < r1; R += %d) {\n", G);
    ra_gen_strided_elem(b, job, pl, "R", "a", "acc", "q", "", "        ");
    gx__sb_puts(b, "      }\n");
}

static void ra_gen_cuda_row(gx__sbuf *b, const rd_job *job, const ra_plan *pl)
{
    int G = pl->G, RPB = RA_BLOCK / G;
    ra_gen_cuda_head(b, job);
    gx__sb_printf(b,
                  "  const int lane = threadIdx.x %% %d;\n"
                  "  for (int64_t tile = blockIdx.x; tile * %d < nout; tile += gridDim.x) {\n"
                  "    const int64_t j = tile * %d + threadIdx.x / %d;\n    const bool valid = j < nout;\n"
                  "    rg_acc acc = rg_identity(u);\n    int64_t q = RG_IMAX;\n    (void)q;\n    if (valid) {\n",
                  G, RPB, RPB, G);
    ra_gen_base(b, job, pl, "j", "      ");
    ra_gen_bj(b, job, "j", "      ");
    ra_gen_cuda_row_body(b, job, pl);
    gx__sb_puts(b, "    }\n");
    if (G == RA_BLOCK) {
        gx__sb_puts(b, "    rg_block(&acc, &q, u);\n");
    } else if (job->op.find) {
        gx__sb_puts(b, "    for (int off = 16; off > 0; off >>= 1) {\n"
                       "      const rg_acc ov = rg_shfl(acc, off);\n      const int64_t oq = rg_shfl(q, off);\n"
                       "      rg_pick(&acc, &q, ov, oq);\n    }\n");
    } else {
        gx__sb_puts(b, "    for (int off = 16; off > 0; off >>= 1) acc = rg_comb(acc, rg_shfl(acc, off));\n");
    }
    ra_gen_cuda_split(b, "valid && lane == 0");
    gx__sb_puts(b, "  }\n}\n");
}

static gx_status ra_source(const rd_job *job, const ra_plan *pl, const rg_spec *sp, bool cuda, gx__sbuf *b)
{
    gx__sb_puts(b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    if (job->ucode)
        gx__sb_puts(b, job->ucode);
    /* Bound arrays: their types before the argument struct (user_fields names
     * gx_bargs); their loads read the position every element defines (gx_bpos). */
    bd_gen_types(b, &job->bind);
    bd_gen(b, &job->bind, cuda, "u->b.", "gx_bpos");
    gx__sb_puts(b, "\n#line 1 \"gx-generated\"\n");
    rg_gen_common(b, sp);
    if (!cuda)
        ra_gen_cpu(b, job, pl);
    else {
        gx__sb_puts(b, rg_cuda_helpers());
        if (!pl->col && pl->G == RA_BLOCK)
            rg_gen_cuda_block(b, sp);
        if (pl->col)
            ra_gen_cuda_col(b, job, pl);
        else
            ra_gen_cuda_row(b, job, pl);
    }
    if (b->oom)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory generating a reduction kernel");
    return GX_OK;
}

/* ------------------------------------------------------------ running */

typedef struct ra_argbuf {
    rg_head h;
    ra_user u;
} ra_argbuf;

/* The argument bytes the kernel reads: without bound arrays, not their block. */
static size_t ra_args_size(const rd_job *job)
{
    return job->bind.n ? sizeof(ra_argbuf) : offsetof(ra_argbuf, u) + offsetof(ra_user, b);
}

static gx_status ra_launch_cpu(rd_job *job, const gx__kernel *k, ra_argbuf *ab)
{
    gx_ctx *ctx = job->ctx;
    /* One item per output, each worth nred elements of work: the pool gives a part
     * to a thread only when its outputs' work outlasts the handoff. */
    gx__launch l;
    memset(&l, 0, sizeof l);
    l.args = ab;
    l.args_size = ra_args_size(job);
    l.n = job->nout;
    l.cpu_align = 1;
    l.cpu_work = job->nred;
    return ctx->be.iface->launch.run(&ctx->be, k->fn, &l);
}

/* Grid: tiles of outputs across x; when they do not fill the device, the reduced
 * range is split over y (chunks of at least `minchunk`). */
static gx_status ra_launch_cuda(rd_job *job, const ra_plan *pl, const gx__kernel *k, ra_argbuf *ab, size_t accsz)
{
    gx_ctx *ctx = job->ctx;
    int64_t per_tile = pl->col ? RA_BLOCK : RA_BLOCK / pl->G;
    int64_t tiles = (job->nout + per_tile - 1) / per_tile;
    int64_t full = k->min_grid > 0 ? (int64_t)k->min_grid * k->block / RA_BLOCK : 1024;
    /* The blocks aimed for, in quarters of one wave (experiment knobs GX_RA_FULL4,
     * GX_RA_COLFULL4; launch only).  The column kernel aims at a quarter wave: each
     * block then folds more rows and writes fewer f64 partials.  Same-run on an H100
     * (scripts/bench-ab, against the f32-accumulating kernels of 93e9f4d), column sums
     * of 2^22/2^24/2^26/2^28 f32 took 1.00/0.79/0.91/0.94x the time; with a full wave,
     * as before, 1.01/1.02/1.01/1.01x.  Rows gained nothing from fewer or more blocks,
     * nor from 2 or 8 vectors in flight per lane instead of 4. */
    full = full * gx__knob_int(pl->col ? "GX_RA_COLFULL4" : "GX_RA_FULL4", pl->col ? 1 : 4, 1, 64) / 4;
    full = full < 1 ? 1 : full;
    int64_t minchunk = pl->col ? gx__knob_int("GX_RA_COLCHUNK", 64, 8, 1 << 20) : (int64_t)pl->G * pl->vec * 4;
    int64_t ys = 1, nred = job->nred;
    if (tiles < full && nred > 2 * minchunk) {
        ys = (full + tiles - 1) / tiles;
        int64_t maxys = (nred + minchunk - 1) / minchunk;
        ys = ys < maxys ? ys : maxys;
        ys = ys < 65535 ? ys : 65535;
    }
    int64_t chunk = (nred + ys - 1) / ys;
    if (pl->vec > 1)
        chunk = (chunk + pl->vec - 1) / pl->vec * pl->vec; /* keeps every chunk's start aligned */
    chunk = chunk < 1 ? 1 : chunk;
    ys = (nred + chunk - 1) / chunk;
    ys = ys < 1 ? 1 : ys;
    ab->u.chunk = chunk;
    uint64_t part = 0, cnt = 0;
    if (ys > 1) {
        size_t n = (size_t)(ys * job->nout);
        GX__CHECK(rg_scratch(ctx, n * (accsz + 8) + 16, tiles, &part, &cnt));
        ab->h.part = part;
        ab->h.part_idx = part + ((n * accsz + 15) & ~(size_t)15);
        ab->h.counter = cnt;
    }
    int64_t gx = ys > 1 ? tiles : (tiles < 0x7fffffff ? tiles : 0x7fffffff);
    gx__launch l;
    memset(&l, 0, sizeof l);
    l.args = ab;
    l.args_size = ra_args_size(job);
    l.grid[0] = (unsigned)gx;
    l.grid[1] = (unsigned)ys;
    l.grid[2] = 1;
    l.block[0] = RA_BLOCK;
    l.block[1] = l.block[2] = 1;
    l.pdl = k->pdl;
    return ctx->be.iface->launch.run(&ctx->be, k->fn, &l);
}

static void ra_fill_args(const rd_job *job, const ra_plan *pl, ra_argbuf *ab, uint64_t out, uint64_t idx)
{
    /* all but the bound arrays' block, which bd_begin fills (zeroing it here too was a
     * second kilobyte of stores a call) */
    memset(ab, 0, offsetof(ra_argbuf, u.b));
    ab->h.n = job->nout;
    ab->h.out = out;
    ab->h.out_idx = idx;
    ra_user *u = &ab->u;
    for (int k = 0; k < job->nin; k++)
        u->p[k] = (uint64_t)(uintptr_t)gx__array_ptr(job->in[k]);
    memcpy(u->ks, pl->ks, sizeof u->ks);
    memcpy(u->rs, pl->rs, sizeof u->rs);
    memcpy(u->kst, pl->kst, sizeof u->kst);
    memcpy(u->rst, pl->rst, sizeof u->rst);
    for (int j = 0; j < job->nconst; j++)
        u->c[j] = job->cval[j];
    u->cnt = (double)job->nred;
    u->nout = job->nout;
    u->nred = job->nred;
    u->chunk = job->nred;
}

/* Everything ra_source depends on, short of the prelude (the memo key; see rg_key). */
static void ra_key(const rd_job *job, const ra_plan *pl, const rg_spec *sp, bool cuda, gx__sbuf *b)
{
    gx__sb_printf(b, "ra1|%s|%d|%d|%d|%d|%d|%d|%d|%d|%d|%d|%d|", cuda ? "cuda" : "c", (int)sp->acc, (int)sp->out_dtype,
                  sp->with_index, job->op.truth, pl->nk, pl->nr, pl->col, pl->G, pl->vec, pl->cband, job->nin);
    for (int k = 0; k < job->nin; k++)
        gx__sb_printf(b, "%d%c,", (int)job->in[k]->dtype, pl->vin[k] ? 'v' : 's');
    for (int j = 0; j < job->nconst; j++)
        gx__sb_printf(b, "c%d,", (int)job->cdt[j]);
    const char *parts[] = {sp->combine, sp->better, sp->identity, sp->final, job->expr.p, job->ucode};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        gx__sb_printf(b, "|%zu:%s", parts[i] ? strlen(parts[i]) : 0, parts[i] ? parts[i] : "");
    bd_key(&job->bind, b);
}

/* The memo front's key (gx__bkey): ra_key's fields as plain copies.  Why: formatting
 * ra_key's text and hashing it as a string was a third of a warm 32 x 32 row sum
 * (CPU backend, perf: sb_fast, strlen, strchr, memmove ~40% of 1.6 us).  Not for
 * bound arrays (their key is text from bind.c): those take the text key alone. */
static bool ra_front_key(const rd_job *job, const ra_plan *pl, const rg_spec *sp, bool cuda, gx__bkey *k)
{
    if (job->bind.n > 0)
        return false;
    k->len = 0;
    k->over = false;
    const int64_t head[] = {0x7261, cuda, sp->acc, sp->out_dtype, sp->with_index, job->op.truth, pl->nk, pl->nr,
                            pl->col, pl->G, pl->vec, pl->cband, job->nin, job->nconst};
    gx__bkey_bytes(k, head, sizeof head);
    for (int i = 0; i < job->nin; i++)
        gx__bkey_int(k, (int64_t)job->in[i]->dtype * 2 + pl->vin[i]);
    for (int j = 0; j < job->nconst; j++)
        gx__bkey_int(k, (int64_t)job->cdt[j]);
    const char *parts[] = {sp->combine, sp->better, sp->identity, sp->final, job->expr.p, job->ucode};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        gx__bkey_str(k, parts[i]);
    return !k->over;
}

static gx_status ra_kernel(const rd_job *job, const ra_plan *pl, rg_spec *sp, bool cuda, gx__kernel *k)
{
    gx__bkey fk;
    bool front = ra_front_key(job, pl, sp, cuda, &fk);
    if (front && gx__memo_bget(job->ctx, &fk, k, sizeof *k))
        return GX_OK;
    gx__sbuf key = {0}, src = {0};
    ra_key(job, pl, sp, cuda, &key);
    gx_status s = key.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory") : GX_OK;
    if (s == GX_OK && gx__memo_get(job->ctx, key.p, k, sizeof *k)) {
        if (front)
            gx__memo_bput(job->ctx, &fk, k, sizeof *k);
        gx__sb_free(&key);
        return GX_OK;
    }
    /* the argument struct's fields, formatted only for the source */
    char fields[360];
    ra_user_fields(fields, sizeof fields, job->bind.n > 0);
    sp->user_fields = fields;
    if (s == GX_OK)
        s = ra_source(job, pl, sp, cuda, &src);
    sp->user_fields = NULL;
    if (s == GX_OK)
        s = gx__kernel_get(job->ctx, src.p, "gx_reduce_axes", "gx_ra", k);
    if (s == GX_OK) {
        gx__memo_put(job->ctx, key.p, k, sizeof *k);
        if (front)
            gx__memo_bput(job->ctx, &fk, k, sizeof *k);
    }
    gx__sb_free(&src);
    gx__sb_free(&key);
    return s;
}

gx_status ra_run(rd_job *job, uint64_t out, uint64_t idx)
{
    ra_plan pl;
    ra_plan_make(job, &pl);
    rg_spec sp;
    rd_spec_base(job, &sp);
    sp.elem = "";
    bool cuda = gx__target_is_cuda(job->ctx);
    gx__kernel k;
    GX__CHECK(ra_kernel(job, &pl, &sp, cuda, &k));
    ra_argbuf ab;
    ra_fill_args(job, &pl, &ab, out, idx);
    GX__CHECK(bd_begin(job->ctx, &job->bind, &ab.u.b));
    gx_status s = cuda ? ra_launch_cuda(job, &pl, &k, &ab, gx_dtype_size(sp.acc)) : ra_launch_cpu(job, &k, &ab);
    return bd_end_split(job->ctx, &job->bind, job->fn, job->nred, s);
}
