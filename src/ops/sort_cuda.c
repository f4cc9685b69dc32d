/* sort_cuda.c -- the CUDA kernels of sorting, top-k and histograms (sort_priv.h is
 * the contract; src/ops/sort.c calls these).  The kernels are fixed CUDA text
 * (sort_cuda_src.h) behind a few #defines generated here, compiled by NVRTC through
 * gx__kernel_get and launched through the backend table like every other op.
 *
 * Keys.  Each key's bits map to an unsigned integer whose unsigned order is the
 * wanted order (sort_priv.h): ints flip the sign bit, floats flip all bits of
 * negatives and set the sign bit of positives, -0.0 maps as 0.0, every NaN to one
 * value past +inf; descending complements the result, except NaN, which maps to the
 * all-ones value so it still sorts last.  8-bit digits: a key of B bytes needs B
 * passes at most.
 *
 * Long rows (more than SC_CAP keys): onesweep (Adinets & Merrill 2022).
 *   1. upsweep: every digit histogram of every pass in one read of the keys,
 *      counted per block in shared memory and flushed with one global atomic per bin;
 *      it also notes whether any key was mapped lossily (-0.0, a non-canonical NaN);
 *   2. a tiny scan of each pass's histogram gives each digit's start, and flags
 *      passes whose digit is the same for every key: those are skipped.  It also
 *      writes the flags to mapped host memory, and the first pass (digit 0, the
 *      likeliest to run) is launched before the host reads them, after an event that
 *      marks the scan's end (sc_onesweep_spec): the device never waits for the host.
 *      Without events or mapped memory, and above SC_SEG keys, the host reads them
 *      back first (sc_onesweep_plain);
 *   3. one kernel per remaining digit: 384 threads x 22 keys a tile (20 with values)
 *      when keys and values are at most 4 bytes, else 256 x 16 (8 with 16-byte
 *      values); the tile's buffers are dynamic shared memory (sc_cfg).  A block
 *      takes its tile from an atomic counter, not from blockIdx, so every tile it
 *      waits on belongs to a block that is already running.  Each warp
 *      counts its keys per digit first (shared atomics); thread d publishes the
 *      tile's count of digit d at once (count | AGGREGATE flag: early counts) and
 *      turns the warps' counts of digit d into the block-wide start of each warp's
 *      digit-d keys.  Then the keys are ranked by digit inside the warp (each lane ors
 *      its bit into the warp's mask of its digit; the leader of each digit group bumps
 *      the warp's counter), which hands out final positions in the tile in input
 *      order: the pass is stable.  Thread d < 256 then looks back over the earlier
 *      tiles' words for digit d, adding aggregates until it meets an INCLUSIVE
 *      prefix; it publishes its own inclusive prefix.  The count
 *      and flag share one 32-bit word, so no fence is needed between them.  Keys
 *      (then values) are staged in shared memory in sorted order and written out
 *      from there, so a warp writes runs of consecutive addresses.  4- and 8-byte
 *      values are copied into shared memory by cp.async as the tile starts.  The
 *      look-back words come in two sets: each launch reads one and clears the other
 *      for the next launch (no zeroing kernel between passes).
 *   Status words hold 30-bit counts, so a pass runs as launches over segments of at
 *   most SC_SEG keys; the upsweep counts per segment and the scan gives each
 *   segment's digit starts (positions are int64: n above 2^31 works).  The first pass
 *   reads the input keys and transforms them; the last writes the original form; the
 *   passes ping-pong between the output and one scratch buffer so that the last
 *   lands in the output (a third buffer where the first pass's guess leaves an even
 *   number of passes).  A float sort whose upsweep saw a lossy key then rewrites
 *   the zero and NaN ranges of the output from the input in input order (a stable
 *   compaction: count per chunk, scan, write), which restores -0.0 and NaN payloads.
 *   Argsort without an index array generates the indices in the first pass: as u32
 *   when n < 2^32 and two or more passes run, widened to int64 by the last pass
 *   (sc_widen), else as int64.
 *   Several long rows: this sort once per row (rows that long are few).
 * Short rows (up to SC_CAP = 2048 keys): several rows per block, a bitonic network
 *   over (transformed key, index in row) composites in shared memory, one launch for
 *   all rows.  The composite is a total order, so the result is the stable order;
 *   keys and values are then gathered from the input by index, which keeps the
 *   original bits (no fix-up).
 * Top-k: rows up to SC_CAP keys use the short-row kernel, writing only the first k
 *   (descending for the largest); NaNs sort last both ways and ties keep index order,
 *   which is the contract.  Longer rows with k <= SC_SEL_KMAX: a radix select on the
 *   composite (transformed key, index), whose order is exactly that order: passes of
 *   12 bits from the top (the key's bits, then the index's) each count the next digit
 *   of the items that match the prefix found so far and a one-block kernel extends
 *   the prefix by the digit holding the k-th item; once that digit's bucket holds at
 *   most sc_sel_cap items the remaining passes return at once (a flag on the device:
 *   no host waits).  Then every item at or before the prefix (the k - 1 or fewer
 *   before it and the bucket) is gathered, ranked by comparing all pairs, and the
 *   first k written with their input bits.  2^28 random f32 in [0, 1): 2 passes and
 *   the gather, 3 reads of the row.  Longer rows with a larger k: a device-wide sort of the
 *   row with its indices, then the first k.
 * Histograms: bins privatised per block in shared memory when they fit (u32 counts
 *   or f64 sums), flushed with one global atomic per non-empty bin; otherwise global
 *   atomics; dropped values are summed per block, one atomic per block.  f32 values
 *   into at most 2048 uniform bins, counted: float4 loads, the bin estimated in f32
 *   and corrected against per-block f32 thresholds that reproduce the f64 rule
 *   exactly, per-warp sub-histograms, one wave of blocks (sc_cuda_hist_f32). */
#include "ops/reduce_gen.h"
#include "ops/sort_priv.h"
#include "ops/sort_cuda.h"
#include "ops/sort_cuda_src.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SC_CAP 2048               /* keys of the longest row the short-row kernel takes */
#define SC_SEG (1ll << 29)        /* keys per look-back launch (30-bit status counts) */
#define SC_FIX_CHUNK 4096         /* keys per chunk of the float fix-up */
#define SC_HIST_SHARED_BYTES 32768 /* shared memory for privatised histogram bins */
/* Or'ed into a pass family's value width: argsort's passes, whose u32 indices the
 * first pass generates and the last widens (sc_widen).  A family of its own, so that
 * its shape is chosen for it (sc_cfg_items). */
#define SC_GEN 0x100

/* ------------------------------------------------------------ key types */

typedef struct sc_key {
    int kb;   /* key bytes: 1, 2, 4, 8 */
    int kind; /* 0 unsigned (bool too), 1 signed, 2 float */
} sc_key;

static gx_status sc_key_of(const char *fn, gx_dtype t, sc_key *k)
{
    if (t == GX_F32 || t == GX_F64) {
        k->kb = (int)gx_dtype_size(t);
        k->kind = 2;
        return GX_OK;
    }
    if (t == GX_BOOL || gx__dtype_is_int(t)) {
        k->kb = (int)gx_dtype_size(t);
        k->kind = gx__dtype_is_signed(t) ? 1 : 0;
        return GX_OK;
    }
    return gx__err(GX_ERR_DTYPE, "%s: keys of dtype %s cannot be sorted on the GPU (use bool, an integer, f32 or f64)",
                   fn, gx_dtype_name(t));
}

static bool sc_vb_ok(size_t vb) { return vb == 0 || vb == 1 || vb == 2 || vb == 4 || vb == 8 || vb == 16; }

static const char *sc_uint(int bytes)
{
    switch (bytes) {
    case 1:
        return "uint8_t";
    case 2:
        return "uint16_t";
    case 4:
        return "uint32_t";
    case 8:
        return "uint64_t";
    default:
        return "gx_v16";
    }
}

/* The #defines in front of the fixed text: key and value types, direction. */
static void sc_head(gx__sbuf *b, sc_key k, int desc, int vb)
{
    unsigned long long top = 1ull << (8 * k.kb - 1);
    unsigned long long inf = k.kb == 8 ? 0x7ff0000000000000ull : 0x7f800000ull;
    unsigned long long qnan = k.kb == 8 ? 0x7ff8000000000000ull : 0x7fc00000ull;
    gx__sb_printf(b, "#define GX_KB %d\n#define GX_KIND %d\n#define GX_DESC %d\n#define GX_VB %d\n", k.kb, k.kind,
                  desc ? 1 : 0, vb);
    gx__sb_printf(b, "#define GX_TOP %lluull\n#define GX_INF %lluull\n#define GX_QNAN %lluull\n", top, inf, qnan);
    gx__sb_printf(b, "#define gx_ut %s\n#define gx_vt %s\n", sc_uint(k.kb), sc_uint(vb ? vb : 1));
}

/* The iota value and the short-row composite, after the fixed key text. */
static void sc_helpers(gx__sbuf *b, sc_key k, int vb)
{
    if (vb == 16)
        gx__sb_puts(b, "GXF gx_vt gx_iota(long long i) { gx_vt v; v.a = (unsigned long long)i; v.b = 0; return v; }\n");
    else
        gx__sb_puts(b, "GXF gx_vt gx_iota(long long i) { return (gx_vt)i; }\n");
    if (k.kb <= 4)
        gx__sb_puts(b, "typedef unsigned long long gx_ck;\n"
                       "GXF gx_ck gx_ck_pad() { return ~0ull; }\n"
                       "GXF gx_ck gx_ck_make(gx_ut t, unsigned q) { return ((unsigned long long)t << 32) | q; }\n"
                       "GXF bool gx_ck_less(gx_ck x, gx_ck y) { return x < y; }\n"
                       "GXF unsigned gx_ck_idx(gx_ck c) { return (unsigned)c; }\n"
                       "GXF gx_ck gx_ck_shfl(gx_ck c, int m) { return __shfl_xor_sync(0xffffffffu, c, m); }\n");
    else
        gx__sb_puts(b, "typedef struct { unsigned long long k; unsigned i; } gx_ck;\n"
                       "GXF gx_ck gx_ck_pad() { gx_ck c; c.k = ~0ull; c.i = ~0u; return c; }\n"
                       "GXF gx_ck gx_ck_make(gx_ut t, unsigned q) { gx_ck c; c.k = t; c.i = q; return c; }\n"
                       "GXF bool gx_ck_less(gx_ck x, gx_ck y) { return x.k < y.k || (x.k == y.k && x.i < y.i); }\n"
                       "GXF unsigned gx_ck_idx(gx_ck c) { return c.i; }\n"
                       "GXF gx_ck gx_ck_shfl(gx_ck c, int m)\n"
                       "{ c.k = __shfl_xor_sync(0xffffffffu, c.k, m); c.i = __shfl_xor_sync(0xffffffffu, c.i, m); return c; }\n");
}

/* The shape of one pass family (key and value widths) on one device: what the
 * #defines of its source say and what its launches need.  sc_cfg_make decides it
 * from the knobs below and the device's shared memory; sc_cfg memoises it per
 * context, so the source, the scratch layout and every launch agree. */
typedef struct sc_cfg {
    int b;        /* threads a block (GX_B) */
    int it;       /* keys a thread (GX_IT) */
    int minb;     /* resident blocks asked of ptxas (0: its own choice) */
    int vasync;   /* values copied into shared memory as the tile starts */
    int rank;     /* GX_RANK */
    int sbuf;     /* bytes of the staging buffer (GX_SBUF) */
    unsigned dyn; /* dynamic shared memory of a pass launch: staging, then values */
} sc_cfg;

/* Bytes a pass stages per item: the larger of key and value. */
static int sc_sb(sc_key k, int vb) { return k.kb > vb ? k.kb : vb; }

/* Shared memory of one multiprocessor (KB) by compute capability (the CUDA
 * programming guide's table; unknown: the smallest).  Only the split between
 * resident blocks depends on it: a wrong guess costs occupancy, never correctness
 * (the total a block asks for stays within the device's opt-in limit). */
static int sc_smem_sm_kb(int major, int minor)
{
    if (major >= 9 && major <= 11)
        return 228;
    if (major == 8)
        return minor == 0 || minor == 7 ? 164 : 100;
    if (major == 12)
        return 100;
    if (major == 7)
        return minor == 5 ? 64 : 96;
    return 64;
}

/* Static shared memory of a pass: the warps' digit counters (1 KB a warp) and the
 * per-digit words; the tile's buffers are dynamic. */
static int sc_smem_fixed(int b) { return (b / 32) * 1024 + 4200; }

/* Threads of a pass block (knob GX_SORT_B: 256, 384 or 512) and the resident blocks
 * asked of ptxas (knob GX_SORT_MINB); sc_cfg_items picks the keys a thread.  Threads
 * 0..255 also own one digit each (counts, look-back); the others only rank and
 * scatter.  The pass is latency-bound
 * (ranking, look-back, scatter), so blocks resident beat registers; larger tiles
 * spread a tile's fixed work (look-back, barriers) over more keys.
 * - Keys and values of at most 4 bytes: 384 threads at 2 blocks (CUB's sm_90 shape is
 *   384 x 23), with the tile's buffers in dynamic shared memory so that the values'
 *   copy fits beside it.  H100 2^28, same run (µs), 256 x 16 at 3-4 blocks (static,
 *   48 KB) -> 384 x 20 at 2 blocks (dynamic, values copied): u32 keys 7530 -> 7322,
 *   f32 keys 7724 -> 7724, u32 pairs 11968 -> 10350, argsort f32 11508 -> 10092.
 *   The same 384 x 20 with static shared memory (no room for the values' copy):
 *   pairs 11118, argsort 10858; at 1 block: f32 11099, pairs 16647 (spills).
 *   Before that, 384 threads at ptxas's choice: u32 7906 -> 7528 but f32 8107 ->
 *   11564 (one resident block).
 * - Wider keys or values: 256 threads; 8-byte keys or values spill at 3 or 4 blocks
 *   (H200 2^28: u32 pairs at 3 blocks, 80 registers, 14137 -> 12469 µs at the time,
 *   but 8-byte items far worse), so ptxas chooses. */
static void sc_cfg_threads(sc_key k, int vb, sc_cfg *c)
{
    int narrow = sc_sb(k, vb) <= 4;
    int b = gx__knob_int("GX_SORT_B", narrow ? 384 : 256, 256, 512);
    c->b = b <= 256 ? 256 : b <= 384 ? 384 : 512;
    int dflt = c->b == 384 && narrow ? 2 : c->b != 256 ? 0 : k.kb <= 4 && vb == 0 ? 4 : k.kb <= 4 && vb <= 4 ? 3 : 0;
    c->minb = gx__knob_int("GX_SORT_MINB", dflt, 0, 8);
}

/* Shared memory one block may use in all: the multiprocessor's split between the
 * blocks asked for (1 KB of each is the system's), at most the opt-in limit; 48 KB
 * when ptxas chooses the occupancy. */
static int sc_cfg_budget(const sc_cfg *c, const gx_device_info *d)
{
    if (c->minb <= 0)
        return 48 * 1024;
    int64_t per = (int64_t)sc_smem_sm_kb(d->cc_major, d->cc_minor) * 1024 / c->minb - 1024;
    int64_t optin = d->shared_per_block_optin > 0 ? (int64_t)d->shared_per_block_optin : 48 * 1024;
    per = per < optin ? per : optin;
    return (int)(per > 16 * 1024 ? per : 16 * 1024);
}

/* Keys per thread (knob GX_SORT_IT: with 384 threads 22 for keys alone and 20 with
 * values; 16 with 256 threads, 8 with 16-byte items), clamped to what the budget
 * holds.  Sweeps, H100 2^28 u32 / f32 keys (µs), same run, 256 threads: 16 at 4
 * resident blocks 7906 / 8107; 20 at 3: 7879 / 8198; 20 at 4 (spills): 8073 / 9307;
 * 24 at 3: 7816 / 8322.  384 threads at 2 blocks, dynamic shared memory (u32 / f32
 * keys, u32 pairs, argsort f32): 18 keys 7601 / 7852 / 10589 / 10364; 20: 7324 / 7704
 * / 10304 / 10177; 22: 7143 / 7526 / 10282 / 10189; 24: 7461 / 7833 / 10724 / 10459.
 * At 2^20 the larger tiles leave SMs idle (argsort 108 -> 125 µs against 256 x 16):
 * one shape serves all sizes, tuned for the large ones.  Argsort's passes (SC_GEN)
 * take 24, their indices loaded without the copy (sc_cfg_vasync); its first pass
 * generates the indices and loads none.  Why u32 pairs lose at 24 while argsort gains
 * is not measured yet (H200, session 39, without the copy: pairs at 23, 2^24 588.8 /
 * 589.2 against 586.2 / 586.0 at 20).
 * H100, two rounds in one run (µs), the pairs' 20 with the copy -> 24 late: argsort
 * f32 2^28 9126 / 9111 -> 8819 / 8834 (torch.sort 13610), 2^24 666 / 667 -> 650 /
 * 649, 2^20 96 / 99 -> 99 / 100.  u32 pairs at 24 lost (2^28 9910 -> 10570). */
static void sc_cfg_items(sc_key k, int vb, int gen, int budget, sc_cfg *c)
{
    int sb = sc_sb(k, vb);
    int it = gx__knob_int("GX_SORT_IT", c->b == 384 ? (vb == 0 ? 22 : gen ? 24 : 20) : sb <= 8 ? 16 : 8, 1, 32);
    int room = (budget - sc_smem_fixed(c->b)) / (c->b * sb);
    if (room < 1)
        room = 1; /* a budget below the fixed part (knobs on a small device): one key a
                   * thread still launches, within the 48 KB every device has */
    c->it = it < room ? it : room;
}

/* Whether a pass copies the tile's values into shared memory as it starts (cp.async,
 * knob GX_SORT_VASYNC, off by default): for 4- and 8-byte values where a second
 * tile-sized buffer still fits the budget beside the staging buffer.  H100 2^28, same
 * run (µs), off -> on: u32 pairs 12910 -> 12239 (CUB 8983), argsort f32 13592 -> 13305
 * (torch 13407) at 256 x 16; at 384 x 20, pairs 11118 -> 10350, argsort 10858 ->
 * 10092.  Since the passes' later changes it loses: H200, same run (µs), on -> off
 * (values loaded in the staging loop): u32 pairs 2^24 609.6, 609.8 -> 592.8, 591.6,
 * 2^28 8451 -> 8236 (CUB 7452); off with the values loaded before the keys go out
 * (GX_VLOAD below): 583.4, 586.1 and 8183.  Argsort's passes had it off already. */
static int sc_cfg_vasync(sc_key k, int vb, int budget, const sc_cfg *c)
{
    if ((vb != 4 && vb != 8) || !gx__knob_int("GX_SORT_VASYNC", 0, 0, 1) ||
        gx__knob_int("GX_SORT_VEARLY", 0, 0, 1))
        return 0; /* values loaded with the keys (GX_SORT_VEARLY) need no copy */
    return (int64_t)c->b * c->it * (sc_sb(k, vb) + vb) + sc_smem_fixed(c->b) <= budget;
}

/* How a pass finds the lanes of its warp holding the same digit (knob GX_SORT_RANK):
 * 0: nine ballots; 1: each lane ors its bit into its warp's mask of that digit in
 * shared memory (the masks borrow the staging buffer, so it needs 32 bytes a thread).
 * H100, 2^28, same run (µs), ballots -> masks: u32 keys 8928 -> 7901, f32 keys 9369 ->
 * 8817 (CUB 6401 / 5679); pairs and argsort within 2% (14035 -> 14061, 13845 ->
 * 14070).  A later run with the ballots again: u32 9353, f32 9823 against 8234 /
 * 9213.  Default 1. */
static int sc_cfg_rank(sc_key k, int vb, const sc_cfg *c)
{
    int r = gx__knob_int("GX_SORT_RANK", 1, 0, 1);
    return r == 1 && c->it * sc_sb(k, vb) >= 32 ? 1 : 0;
}

static void sc_cfg_make(sc_key k, int vb, const gx_device_info *d, sc_cfg *c)
{
    int gen = (vb & SC_GEN) != 0;
    vb &= ~SC_GEN;
    memset(c, 0, sizeof *c);
    sc_cfg_threads(k, vb, c);
    int budget = sc_cfg_budget(c, d);
    sc_cfg_items(k, vb, gen, budget, c);
    c->vasync = sc_cfg_vasync(k, vb, budget, c);
    c->rank = sc_cfg_rank(k, vb, c);
    /* the staging buffer holds the ranking's match masks first, then the tile's
     * items */
    int stage = c->b * c->it * sc_sb(k, vb);
    int masks = c->rank ? c->b / 32 * 1024 : 0;
    c->sbuf = stage > masks ? stage : masks;
    c->dyn = (((unsigned)c->sbuf + 15u) & ~15u) + (c->vasync ? (unsigned)(c->b * c->it * vb) : 0u);
}

/* The pass shape of (k, vb) on ctx's device, memoised per context. */
static gx_status sc_cfg_get(gx_ctx *ctx, sc_key k, int vb, sc_cfg *out)
{
    char key[64];
    gx__fmt(key, sizeof key, "sort_cuda_cfg|%d|%d", k.kb, vb);
    if (gx__memo_get(ctx, key, out, sizeof *out))
        return GX_OK;
    gx_device_info info;
    memset(&info, 0, sizeof info);
    GX__CHECK(ctx->be.iface->info(&ctx->be, &info));
    sc_cfg_make(k, vb, &info, out);
    gx__memo_put(ctx, key, out, sizeof *out);
    return GX_OK;
}

static int64_t sc_tile_of(const sc_cfg *c) { return (int64_t)c->b * c->it; }

static gx_status sc_tile(gx_ctx *ctx, sc_key k, int vb, int64_t *tile)
{
    sc_cfg c;
    GX__CHECK(sc_cfg_get(ctx, k, vb, &c));
    *tile = sc_tile_of(&c);
    return GX_OK;
}

/* How many tiles ahead a pass prefetches into L2 (knob GX_SORT_PF, 0: none): the
 * block that takes that tile, about one tile's time later, finds its keys in L2.  H100
 * 2^28 / 2^24 (µs, two rounds, same run), keys only, no prefetch -> 2 x SMs (264 tiles)
 * ahead: u32 7904-7917 -> 7484-7514 and 552-554 -> 536-548; f32 8121-8168 -> 7703-7721
 * and 573 -> 558-565.  4 x SMs ahead was alike, 8 x slower (u32 8020).  With values
 * (the keys and the values prefetched, GX_SORT_PFV=1) it lost: u32 pairs 2^28 12072 ->
 * 12388 at 2 x SMs, 13819 at 4 x; argsort even.  So pairs prefetch nothing by default. */
static int sc_prefetch(int vb, int sms)
{
    return gx__knob_int("GX_SORT_PF", vb == 0 ? 2 * sms : 0, 0, 1 << 20);
}

/* The whole unit of one sort family (key type, direction, value width) for device d. */
static void sc_source(gx__sbuf *b, sc_key k, int desc, int vb, const gx_device_info *d)
{
    sc_cfg c;
    sc_cfg_make(k, vb, d, &c);
    vb &= ~SC_GEN; /* the text is the same; the shape in c is the family's */
    int sms = d->multiprocessors > 0 ? d->multiprocessors : 1;
    sc_head(b, k, desc, vb);
    gx__sb_printf(b, "#define GX_IT %d\n#define GX_SB %d\n", c.it, sc_sb(k, vb));
    /* Values loaded with the keys (knob GX_SORT_VEARLY): H100 2^28, u32 pairs 14279 ->
     * 15117 µs at 3 resident blocks (spills), 13204 at 2 (GX_SORT_MINB=2), but argsort
     * 14480 -> 14830 there; off by default. */
    gx__sb_printf(b, "#define GX_VEARLY %d\n", gx__knob_int("GX_SORT_VEARLY", 0, 0, 1));
    gx__sb_printf(b, "#define GX_VASYNC %d\n", c.vasync);
    /* Where a pass loads its values (knob GX_SORT_VLOAD, sort_cuda_src.h's GX_VLOAD):
     * into registers before the keys go out, so that the loads are in flight while the
     * keys are written and the block meets at the barrier; CUB loads them after the keys
     * go out, gx used to load each in the staging loop after the barrier.  H200, same
     * run (µs; CUB pairs 2^24 556-560, 2^28 7452-7457; torch.sort 2^24 822-825), two
     * rounds, in the staging loop / after the keys / before the keys: u32 pairs 2^24
     * 592.8, 591.6 / 586.2, 586.0 / 583.4, 586.1, 2^28 8236 / 8348 / 8183; argsort f32
     * 2^24 554.8, 556.6, 556.4 / 546.0, 544.2, 546.7 / 546.1, 547.1, 548.5, 2^28 7288 /
     * 7257 / 7183.  Measured for 4-byte values only (8-byte ones take 106 registers
     * against 98 that way), so the others keep the old order. */
    gx__sb_printf(b, "#define GX_VLOAD %d\n", gx__knob_int("GX_SORT_VLOAD", vb == 4 ? 2 : 0, 0, 2));
    /* Copies of the upsweep's counters (knob GX_SORT_UPP, at most 8, or 4 for 8-byte
     * keys), as copies of the passes' early counts were (GX_SORT_PARTS, removed in
     * session 35 with the per-warp counts); no gain either: H100 2^28 (µs), 8 -> 1
     * copy: u32 8108 -> 7929, f32 8995 -> 8800.  Default 1. */
    int upp = gx__knob_int("GX_SORT_UPP", 1, 1, 8);
    gx__sb_printf(b, "#define GX_UPP %d\n", k.kb == 8 && upp > 4 ? 4 : upp);
    /* Keys a thread of the upsweep loads at once (knob GX_SORT_UPU). */
    gx__sb_printf(b, "#define GX_UPU %d\n", gx__knob_int("GX_SORT_UPU", 8, 1, 16));
    gx__sb_printf(b, "#define GX_B %d\n#define GX_RANK %d\n#define GX_SBUF %d\n", c.b, c.rank, c.sbuf);
    /* Experiment knob GX_SORT_LB: predecessors read at once in the look-back. */
    gx__sb_printf(b, "#define GX_LB %d\n", gx__knob_int("GX_SORT_LB", 8, 1, 64));
    /* A pass whose largest digit holds more than 1 / GX_SORT_SKEW of the keys ranks
     * with __match_any_sync (gx_sc_pass_m; 0: never): floats' exponent byte, say.
     * H100, two rounds in one run (µs), never -> 1/4: f32 keys in [0, 1) 2^28 6834 /
     * 6832 -> 6334 / 6353 (CUB 5679), 2^24 516 / 516 -> 490 / 485 (CUB 440); argsort
     * f32 2^28 9847 / 9833 -> 9462 / 9488; u32 keys and pairs (no such pass) alike. */
    gx__sb_printf(b, "#define GX_SKEW %d\n", gx__knob_int("GX_SORT_SKEW", 4, 0, 256));
    gx__sb_printf(b, "#define GX_PASS_MINB %d\n", c.minb);
    gx__sb_printf(b, "#define GX_PF %d\n#define GX_PFV %d\n", sc_prefetch(vb, sms),
                  gx__knob_int("GX_SORT_PFV", 0, 0, 1));
    gx__sb_puts(b, sc_cuda_keys);
    sc_helpers(b, k, vb);
    gx__sb_puts(b, sc_cuda_onesweep);
    if (k.kind == 2)
        gx__sb_puts(b, sc_cuda_fix);
    gx__sb_puts(b, sc_cuda_rows);
    gx__sb_puts(b, sc_cuda_select);
}

/* The short-row sort of rows padded to np (a power of 2 up to SC_CAP) alone, with np
 * fixed in the text: the bitonic network then unrolls completely, every stage's
 * distance and direction tests folded (61 registers against 47, no spills).  H200,
 * rows of 1024 f32, same run as torch.sort(dim=-1): 2^26 keys 2154.1 -> 1590.1 µs
 * (torch 2112.7), 2^24 542.4 -> 407.3 (torch 550.9). */
static void sc_rows_source(gx__sbuf *b, sc_key k, int desc, int vb, int np)
{
    int lg = 0;
    while ((1 << lg) < np)
        lg++;
    sc_head(b, k, desc, vb);
    gx__sb_printf(b, "#define GX_NPC %d\n#define GX_LGC %d\n", np, lg);
    gx__sb_puts(b, sc_cuda_keys);
    sc_helpers(b, k, vb);
    gx__sb_puts(b, sc_cuda_rows);
}

gx_status gx__sort_cuda_rows_source(gx_dtype kdtype, int desc, int vbytes, int np, char **out)
{
    sc_key k;
    *out = NULL;
    GX__CHECK(sc_key_of("gx__sort_cuda_rows_source", kdtype, &k));
    GX__ARG(sc_vb_ok((size_t)vbytes), "gx__sort_cuda_rows_source: vbytes %d", vbytes);
    GX__ARG(np >= 1 && np <= SC_CAP && (np & (np - 1)) == 0, "gx__sort_cuda_rows_source: np %d", np);
    gx__sbuf b = {0};
    sc_rows_source(&b, k, desc, vbytes, np);
    if (b.oom) {
        gx__sb_free(&b);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx__sort_cuda_rows_source: out of host memory");
    }
    *out = b.p;
    return GX_OK;
}

gx_status gx__sort_cuda_source(gx_dtype kdtype, int desc, int vbytes, char **out)
{
    sc_key k;
    *out = NULL;
    GX__CHECK(sc_key_of("gx__sort_cuda_source", kdtype, &k));
    GX__ARG(sc_vb_ok((size_t)vbytes), "gx__sort_cuda_source: vbytes %d", vbytes);
    gx__sbuf b = {0};
    /* an H100's figures: the text compiles alike on any device */
    gx_device_info h100;
    memset(&h100, 0, sizeof h100);
    h100.cc_major = 9;
    h100.multiprocessors = 132;
    h100.shared_per_block = 48 * 1024;
    h100.shared_per_block_optin = 227 * 1024;
    sc_source(&b, k, desc, vbytes, &h100);
    if (b.oom) {
        gx__sb_free(&b);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx__sort_cuda_source: out of host memory");
    }
    *out = b.p;
    return GX_OK;
}

/* Kernel `entry` of one unit: the whole sort family (np 0) or the short-row sort of
 * rows padded to np, from the memo, else generated and compiled. */
static gx_status sc_unit_kernel(gx_ctx *ctx, sc_key k, int desc, int vb, int np, const char *entry,
                                gx__kernel *out)
{
    char key[128];
    gx__fmt(key, sizeof key, "sort_cuda|%d|%d|%d|%d|%d|%s", k.kb, k.kind, desc, vb, np, entry);
    if (gx__memo_get(ctx, key, out, sizeof *out)) {
        ctx->cstats.mem_hits++;
        return GX_OK;
    }
    gx__sbuf b = {0};
    if (np) {
        sc_rows_source(&b, k, desc, vb, np);
    } else {
        gx_device_info info;
        memset(&info, 0, sizeof info);
        GX__CHECK(ctx->be.iface->info(&ctx->be, &info)); /* b holds nothing yet */
        sc_source(&b, k, desc, vb, &info);
    }
    gx_status s = b.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "gx sort: out of host memory") : GX_OK;
    if (s == GX_OK)
        s = gx__kernel_get(ctx, b.p, "gx_sort", entry, out);
    gx__sb_free(&b);
    if (s == GX_OK)
        gx__memo_put(ctx, key, out, sizeof *out);
    return s;
}

/* One sort family's kernel `entry` (every entry shares one source). */
static gx_status sc_kernel(gx_ctx *ctx, sc_key k, int desc, int vb, const char *entry, gx__kernel *out)
{
    return sc_unit_kernel(ctx, k, desc, vb, 0, entry, out);
}

/* ------------------------------------------------------------ launches */

static gx_status sc_launch(gx_ctx *ctx, const gx__kernel *k, const void *args, size_t size, int64_t grid)
{
    if (grid > 0x7fffffffll)
        return gx__err(GX_ERR_LAUNCH, "gx sort: %lld blocks exceed the grid limit", (long long)grid);
    return gx__launch_1d(ctx, k, args, size, 1, 1, grid, 256);
}

/* Grid-stride kernels: enough blocks to fill the device, not one per item. */
static int64_t sc_fill_grid(const gx__kernel *k, int64_t items)
{
    int64_t want = (items + 255) / 256;
    int64_t cap = k->min_grid > 0 ? 4 * (int64_t)k->min_grid : 1024;
    return want < 1 ? 1 : want < cap ? want : cap;
}




/* ------------------------------------------------------------ short rows */

typedef struct sc_sr_args {
    uint64_t keys, vals, okeys, ovals;
    int64_t nrows, rowlen, ocols;
    int32_t np, lg, rpb, iota;
} sc_sr_args;

/* Rows of at most SC_CAP keys: the first ocols of each sorted row into okeys
 * (NULL: not wanted) and ovals (vals NULL with vb 8: the indices). */
static gx_status sc_rows(gx_ctx *ctx, sc_key k, int desc, int vb, const void *keys, const void *vals, void *okeys,
                         void *ovals, int64_t nrows, int64_t rowlen, int64_t ocols)
{
    int lg = 0;
    while ((1ll << lg) < rowlen)
        lg++;
    gx__kernel kr;
    GX__CHECK(sc_unit_kernel(ctx, k, desc, vb, 1 << lg, "gx_sr_rows", &kr));
    sc_sr_args a = {(uint64_t)(uintptr_t)keys, (uint64_t)(uintptr_t)vals, (uint64_t)(uintptr_t)okeys,
                    (uint64_t)(uintptr_t)ovals, nrows, rowlen, ocols, 1 << lg, lg, SC_CAP >> lg, vals == NULL};
    if (a.rpb > nrows)
        a.rpb = (int32_t)nrows;
    return sc_launch(ctx, &kr, &a, sizeof a, (nrows + a.rpb - 1) / a.rpb);
}

/* ------------------------------------------------------------ device-wide sort */

/* One contiguous sort of n keys: inputs, outputs (kout NULL: not wanted; vin NULL
 * with vb 8: indices 0..n-1). */
typedef struct sc_job {
    sc_key k;
    int desc, vb;
    const void *kin, *vin;
    void *kout, *vout;
    int64_t n;
    int pvb; /* value bytes the passes carry: vb, or 4 when an argsort's generated
              * indices travel as u32 and widen to i64 in the last pass (sc_widen) */
    unsigned skew; /* bit p: digit p's pass ranks with __match_any_sync (sc_plan) */
} sc_job;

typedef struct sc_zero_args {
    uint64_t p;
    int64_t nwords;
} sc_zero_args;

/* Zeroes bytes (a multiple of 8) at p, on the stream (a kernel of j's family). */
static gx_status sc_zero(gx_ctx *ctx, const sc_job *j, void *p, size_t bytes)
{
    gx__kernel z;
    GX__CHECK(sc_kernel(ctx, j->k, j->desc, j->vb, "gx_sc_zero", &z));
    sc_zero_args a = {(uint64_t)(uintptr_t)p, (int64_t)(bytes / 8)};
    return sc_launch(ctx, &z, &a, sizeof a, sc_fill_grid(&z, a.nwords));
}

/* The scratch of one device-wide sort: one block of counters and status words
 * ("meta"), and the ping-pong buffers. */
typedef struct sc_mem {
    void *meta;
    size_t meta_bytes;
    uint64_t *hist, *offs, *lossy, *counters;
    uint32_t *trivial, *status[2];
    size_t status_bytes;
    int64_t launches; /* pass launches so far: launch L looks back in status[L % 2] */
    void *kbuf[2], *vbuf, *vbuf2; /* vbuf2: a third value buffer (sc_passes_after) */
    size_t kbytes, vbytes;
    int64_t nseg;
} sc_mem;

static void sc_mem_free(gx_ctx *ctx, sc_mem *m)
{
    if (m->meta)
        gx__scratch_free(ctx, m->meta, m->meta_bytes);
    for (int i = 0; i < 2; i++)
        if (m->kbuf[i])
            gx__scratch_free(ctx, m->kbuf[i], m->kbytes);
    if (m->vbuf)
        gx__scratch_free(ctx, m->vbuf, m->vbytes);
    if (m->vbuf2)
        gx__scratch_free(ctx, m->vbuf2, m->vbytes);
    memset(m, 0, sizeof *m);
}

/* Meta layout (8-byte words): hist and offs [nseg][kb][256], trivial (kb u32, 4
 * words) + lossy (1 word) read back together, tile counters [kb][nseg] (u32),
 * two sets of status words of one segment's tiles. */
static gx_status sc_mem_meta(gx_ctx *ctx, const sc_job *j, sc_mem *m)
{
    int64_t segn = j->n < SC_SEG ? j->n : SC_SEG;
    int64_t tile = 0, t4 = 0;
    GX__CHECK(sc_tile(ctx, j->k, j->vb, &tile));
    if (!j->vin && j->vb == 8) { /* sc_widen may carry 4-byte indices (argsort's family) */
        GX__CHECK(sc_tile(ctx, j->k, 4 | SC_GEN, &t4));
        tile = t4 < tile ? t4 : tile;
    }
    int64_t tiles = (segn + tile - 1) / tile;
    m->nseg = (j->n + SC_SEG - 1) / SC_SEG;
    size_t hw = (size_t)m->nseg * (size_t)j->k.kb * 256;
    size_t cw = ((size_t)j->k.kb * (size_t)m->nseg + 1) / 2;
    m->status_bytes = (size_t)tiles * 256 * 4;
    m->meta_bytes = (2 * hw + 5 + cw) * 8 + 2 * m->status_bytes;
    GX__CHECK(gx__scratch_alloc(ctx, m->meta_bytes, &m->meta));
    uint64_t *w = m->meta;
    m->hist = w;
    m->offs = w + hw;
    m->trivial = (uint32_t *)(w + 2 * hw);
    m->lossy = w + 2 * hw + 4;
    m->counters = w + 2 * hw + 5;
    m->status[0] = (uint32_t *)(w + 2 * hw + 5 + cw);
    m->status[1] = m->status[0] + m->status_bytes / 4;
    /* Everything up to the first set of status words starts at zero; each pass launch
     * zeroes the other set for the next (no zeroing kernel between passes). */
    return sc_zero(ctx, j, m->meta, m->meta_bytes - m->status_bytes);
}

typedef struct sc_up_args {
    uint64_t keys, hist, lossy;
    int64_t n, raw;
} sc_up_args;
typedef struct sc_scan_args {
    uint64_t hist, offs, trivial, host;
    int64_t nseg, n;
} sc_scan_args;

/* Upsweep and scan of src (raw: the input's keys, else keys already transformed by a
 * pass) into hist / offs, per segment of SC_SEG keys; the trivial flags and the lossy
 * word also to mapped host memory at device address host (0: not). */
static gx_status sc_hist_all(gx_ctx *ctx, const sc_job *j, sc_mem *m, const void *src, int raw, uint64_t host)
{
    gx__kernel ku, ks;
    GX__CHECK(sc_kernel(ctx, j->k, j->desc, j->vb, "gx_sc_up", &ku));
    GX__CHECK(sc_kernel(ctx, j->k, j->desc, j->vb, "gx_sc_scan", &ks));
    for (int64_t s = 0; s < m->nseg; s++) {
        int64_t at = s * SC_SEG, len = j->n - at < SC_SEG ? j->n - at : SC_SEG;
        sc_up_args a = {(uint64_t)(uintptr_t)((const char *)src + at * j->k.kb),
                        (uint64_t)(uintptr_t)(m->hist + s * j->k.kb * 256), (uint64_t)(uintptr_t)m->lossy, len, raw};
        int64_t grid = (len + 4095) / 4096;
        GX__CHECK(sc_launch(ctx, &ku, &a, sizeof a, grid < 2048 ? grid : 2048));
    }
    sc_scan_args a = {(uint64_t)(uintptr_t)m->hist, (uint64_t)(uintptr_t)m->offs, (uint64_t)(uintptr_t)m->trivial,
                      host, m->nseg, j->n};
    return sc_launch(ctx, &ks, &a, sizeof a, j->k.kb);
}

/* Upsweep and scan; *trivial[p] and *lossy read back to the host. */
static gx_status sc_count(gx_ctx *ctx, const sc_job *j, sc_mem *m, uint32_t *trivial, uint64_t *lossy)
{
    GX__CHECK(sc_hist_all(ctx, j, m, j->kin, 1, 0));
    uint64_t back[5];
    GX__CHECK(ctx->be.iface->mem.d2h(&ctx->be, back, m->trivial, sizeof back));
    memcpy(trivial, back, (size_t)j->k.kb * 4);
    *lossy = back[4];
    return GX_OK;
}

typedef struct sc_pass_args {
    uint64_t src_k, src_v, dst_k, dst_v, offs, status, counter, zst;
    int64_t n, base, znext;
    int32_t shift, in_raw, out_raw, iota;
} sc_pass_args;

static gx_status sc_launch_pass(gx_ctx *ctx, const gx__kernel *k, const sc_pass_args *a, int64_t grid,
                                const sc_cfg *c)
{
    if (grid > 0x7fffffffll)
        return gx__err(GX_ERR_LAUNCH, "gx sort: %lld blocks exceed the grid limit", (long long)grid);
    return gx__launch_1d_shm(ctx, k, a, sizeof *a, 1, 1, grid, c->b, c->dyn);
}

/* One digit pass (all segments): src -> dst, with the kernels of value width
 * j->pvb; `last` with pvb < vb widens the values as it writes them. */
static gx_status sc_pass(gx_ctx *ctx, const sc_job *j, sc_mem *m, int p, int e, const void *sk, const void *sv,
                         void *dk, void *dv, bool last)
{
    gx__kernel kp;
    bool widen = last && j->pvb < j->vb;
    bool ma = (j->skew >> p) & 1u;
    const char *entry = widen ? (ma ? "gx_sc_pass_wm" : "gx_sc_pass_w") : ma ? "gx_sc_pass_m" : "gx_sc_pass";
    int fam = j->pvb | (j->pvb < j->vb ? SC_GEN : 0);
    GX__CHECK(sc_kernel(ctx, j->k, j->desc, fam, entry, &kp));
    sc_cfg c;
    GX__CHECK(sc_cfg_get(ctx, j->k, fam, &c));
    int64_t tile = sc_tile_of(&c);
    for (int64_t s = 0; s < m->nseg; s++) {
        int64_t at = s * SC_SEG, len = j->n - at < SC_SEG ? j->n - at : SC_SEG;
        int64_t tiles = (len + tile - 1) / tile;
        sc_pass_args a;
        memset(&a, 0, sizeof a);
        a.src_k = (uint64_t)(uintptr_t)((const char *)sk + at * j->k.kb);
        a.src_v = sv ? (uint64_t)(uintptr_t)((const char *)sv + at * j->pvb) : 0;
        a.dst_k = (uint64_t)(uintptr_t)dk;
        a.dst_v = (uint64_t)(uintptr_t)dv;
        a.offs = (uint64_t)(uintptr_t)(m->offs + (s * j->k.kb + p) * 256);
        int64_t L = m->launches++;
        a.status = (uint64_t)(uintptr_t)m->status[L % 2];
        /* the next launch's status words (a whole segment's worth; none after the last) */
        a.zst = (uint64_t)(uintptr_t)m->status[(L + 1) % 2];
        a.znext = last && s == m->nseg - 1 ? 0 : (int64_t)(m->status_bytes / 1024);
        a.counter = (uint64_t)(uintptr_t)((uint32_t *)m->counters + (int64_t)e * m->nseg + s);
        a.n = len;
        a.base = at;
        a.shift = 8 * p;
        a.in_raw = e == 0;
        a.out_raw = last;
        a.iota = e == 0 && j->vb && !j->vin;
        GX__CHECK(sc_launch_pass(ctx, &kp, &a, tiles, &c));
    }
    return GX_OK;
}

typedef struct sc_fx_args {
    uint64_t keys, out, cnt, lossy;
    int64_t n, nchunks;
} sc_fx_args;

/* Float keys: the zero and NaN ranges of the output rewritten from the input. */
static gx_status sc_fixup(gx_ctx *ctx, const sc_job *j, sc_mem *m)
{
    int64_t nch = (j->n + SC_FIX_CHUNK - 1) / SC_FIX_CHUNK;
    size_t bytes = ((size_t)nch * 3 + 2) * 8;
    void *cnt = NULL;
    GX__CHECK(gx__scratch_alloc(ctx, bytes, &cnt));
    sc_fx_args a = {(uint64_t)(uintptr_t)j->kin, (uint64_t)(uintptr_t)j->kout, (uint64_t)(uintptr_t)cnt,
                    (uint64_t)(uintptr_t)m->lossy, j->n, nch};
    gx__kernel k1, k2, k3;
    gx_status s = sc_kernel(ctx, j->k, j->desc, j->vb, "gx_fx_count", &k1);
    if (s == GX_OK)
        s = sc_kernel(ctx, j->k, j->desc, j->vb, "gx_fx_scan", &k2);
    if (s == GX_OK)
        s = sc_kernel(ctx, j->k, j->desc, j->vb, "gx_fx_write", &k3);
    if (s == GX_OK)
        s = sc_launch(ctx, &k1, &a, sizeof a, nch);
    if (s == GX_OK)
        s = sc_launch(ctx, &k2, &a, sizeof a, 1);
    if (s == GX_OK)
        s = sc_launch(ctx, &k3, &a, sizeof a, nch);
    gx__scratch_free(ctx, cnt, bytes);
    return s;
}

/* The passes that run (digit not constant; at least one) into run[], their count;
 * the passes whose largest digit holds more than 1 / GX_SKEW of the keys into
 * j->skew (gx_sc_scan's bit 1). */
static int sc_plan(sc_job *j, const uint32_t *trivial, int *run)
{
    int np = 0;
    j->skew = 0;
    for (int p = 0; p < j->k.kb; p++) {
        if (trivial[p] & 2u)
            j->skew |= 1u << p;
        if (!(trivial[p] & 1u))
            run[np++] = p;
    }
    if (np == 0)
        run[np++] = 0; /* all keys equal: one (stable) pass still moves them */
    return np;
}

/* Argsort (generated indices, i64 out) of at most 2^32 keys over 2 or more passes:
 * the indices travel as u32 and the last pass widens them, so every pass but the
 * last moves 4 bytes of value a key instead of 8.  The passes before the last may
 * use the output as u32 scratch: the last reads the scratch buffer only.  (knob
 * GX_SORT_WIDEN=0 keeps the 8-byte indices).  H100, argsort of 2^28 f32, same run:
 * 16817 -> 13845 µs (torch.sort with indices: 13396). */
static void sc_widen(sc_job *j, int np)
{
    j->pvb = j->vb;
    if (!j->vin && j->vb == 8 && np >= 2 && j->n <= 0xffffffffll && gx__knob_int("GX_SORT_WIDEN", 1, 0, 1))
        j->pvb = 4;
}

/* Scratch buffers for the ping-pong: kbuf[0] when passes > 1, kbuf[1] when keys
 * are not wanted and 3 or more passes run (the last pass then writes no keys). */
static gx_status sc_mem_bufs(gx_ctx *ctx, const sc_job *j, sc_mem *m, int np)
{
    m->kbytes = (size_t)j->n * (size_t)j->k.kb;
    m->vbytes = (size_t)j->n * (size_t)j->pvb;
    if (np > 1)
        GX__CHECK(gx__scratch_alloc(ctx, m->kbytes, &m->kbuf[0]));
    if (!j->kout && np > 2)
        GX__CHECK(gx__scratch_alloc(ctx, m->kbytes, &m->kbuf[1]));
    if (np > 1 && j->vb)
        GX__CHECK(gx__scratch_alloc(ctx, m->vbytes, &m->vbuf));
    return GX_OK;
}

static gx_status sc_passes(gx_ctx *ctx, const sc_job *j, sc_mem *m, const int *run, int np)
{
    const void *sk = j->kin, *sv = j->vin;
    for (int e = 0; e < np; e++) {
        bool last = e == np - 1;
        /* Counting back from the last pass (into the output), buffers alternate. */
        bool to_out = (np - 1 - e) % 2 == 0;
        void *dk = to_out ? (last ? j->kout : (j->kout ? j->kout : m->kbuf[1])) : m->kbuf[0];
        void *dv = to_out ? j->vout : m->vbuf;
        /* Above SC_SEG keys a pass runs segment by segment, and each segment's digit
         * counts must be those of the keys it reads now, not of the input's. */
        if (e > 0 && m->nseg > 1) {
            GX__CHECK(sc_zero(ctx, j, m->hist, (size_t)m->nseg * (size_t)j->k.kb * 256 * 8));
            GX__CHECK(sc_hist_all(ctx, j, m, sk, 0, 0));
        }
        GX__CHECK(sc_pass(ctx, j, m, run[e], e, sk, sv, dk, dv, last));
        sk = dk;
        sv = dv;
    }
    return GX_OK;
}

/* The sort with the host reading the upsweep's flags first (d2h, which waits for
 * it), then launching the passes that run. */
static gx_status sc_onesweep_plain(gx_ctx *ctx, sc_job *j, sc_mem *m)
{
    uint32_t trivial[8] = {0};
    uint64_t lossy = 0;
    int run[8] = {0};
    GX__CHECK(sc_count(ctx, j, m, trivial, &lossy));
    int np = sc_plan(j, trivial, run);
    sc_widen(j, np);
    GX__CHECK(sc_mem_bufs(ctx, j, m, np));
    GX__CHECK(sc_passes(ctx, j, m, run, np));
    return j->k.kind == 2 && j->kout && lossy ? sc_fixup(ctx, j, m) : GX_OK;
}

/* Per context: the event that marks the end of the upsweep in sc_onesweep_spec. */
typedef struct sc_state {
    void *ev;
    bool failed; /* event_create failed once: the plain path from then on */
} sc_state;

static void sc_state_release(gx_ctx *ctx, void *state)
{
    sc_state *s = state;
    if (s->ev)
        ctx->be.iface->stream.event_destroy(&ctx->be, s->ev);
    free(s);
}

static const gx__ctx_ext sc_state_ext = {"device sort state", sc_state_release};

/* Whether the first pass may run before the host has the upsweep's flags (knob
 * GX_SORT_SPEC: 0 never; 1, the default; 2, sc_passes_after's test setting): events
 * and mapped host memory (reduce_gen.c's result slot) are there, and no graph is being
 * recorded.  Without them the plain path works as well; a failure here is not the
 * caller's (as rg_host_result). */
static bool sc_spec_get(gx_ctx *ctx, void **ev, void **host, uint64_t *hdev)
{
    if (!gx__knob_int("GX_SORT_SPEC", 1, 0, 2) || gx__graph_recording(ctx) || !gx__ctx_supports(ctx, GX__CAP_EVENTS) ||
        !rg_host_result(ctx, host, hdev))
        return false;
    sc_state *s = gx__ctx_ext_get(ctx, &sc_state_ext);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s || gx__ctx_ext_set(ctx, &sc_state_ext, s) != GX_OK) {
            free(s);
            return false;
        }
    }
    if (!s->ev && !s->failed && ctx->be.iface->stream.event_create(&ctx->be, &s->ev) != GX_OK) {
        s->ev = NULL;
        s->failed = true;
    }
    *ev = s->ev;
    return s->ev != NULL;
}

/* The passes after a first pass into kbuf[0] / vbuf, on digits rest[0..nr-1], the
 * last into the output.  Counting back from the last, destinations alternate between
 * the output and a scratch buffer; when nr is even that would make the first of them
 * write kbuf[0] / vbuf, which it reads, so the scratch is a third buffer (kbuf[1],
 * vbuf2).  Without keys out, the last pass writes none and the others alternate
 * between kbuf[1] and kbuf[0].  Where the third buffer cannot be had, one more pass on
 * a digit that is the same for every key (one is, when nr is even: fewer than kb
 * digits run) moves the data without reordering it and makes nr odd. */
static gx_status sc_passes_after(gx_ctx *ctx, const sc_job *j, sc_mem *m, const uint32_t *trivial, const int *rest,
                                 int nr)
{
    int run[9];
    memcpy(run, rest, (size_t)nr * sizeof *run);
    bool need_k = j->kout ? nr % 2 == 0 : nr >= 2; /* kbuf[1] (sc_mem_bufs made it without keys out) */
    gx_status s = GX_OK;
    if (nr % 2 == 0 && gx__knob_int("GX_SORT_SPEC", 1, 0, 2) == 2)
        s = GX_ERR_OUT_OF_MEMORY; /* knob value 2: as if no third buffer could be had (tests) */
    if (s == GX_OK && need_k && !m->kbuf[1])
        s = gx__scratch_alloc(ctx, m->kbytes, &m->kbuf[1]);
    if (s == GX_OK && j->vb && nr % 2 == 0 && !m->vbuf2)
        s = gx__scratch_alloc(ctx, m->vbytes, &m->vbuf2);
    if (s != GX_OK && nr % 2 == 0) {
        int t = 0;
        while (t < j->k.kb - 1 && !(trivial[t] & 1u))
            t++;
        memmove(run + 1, run, (size_t)nr * sizeof *run);
        run[0] = t;
        nr++;
    } else if (s != GX_OK) {
        return s;
    }
    const void *sk = m->kbuf[0], *sv = m->vbuf;
    bool even = nr % 2 == 0;
    for (int e = 1; e <= nr; e++) {
        bool last = e == nr, fin = (nr - e) % 2 == 0;
        void *dk = j->kout ? (fin ? j->kout : m->kbuf[even]) : last ? NULL : m->kbuf[e % 2];
        void *dv = fin ? j->vout : even ? m->vbuf2 : m->vbuf;
        GX__CHECK(sc_pass(ctx, j, m, run[e - 1], e, sk, sv, dk, dv, last));
        sk = dk;
        sv = dv;
    }
    return GX_OK;
}

/* The sort with the first pass (digit 0, the likeliest to run) launched before the
 * host reads the upsweep's flags: the scan writes them to mapped host memory and the
 * host waits on an event after it while the first pass runs, so the device never
 * waits for the host.  A read back before the first pass left the device idle from
 * the upsweep's end to the first pass's start: 15-18 us a sort.  H200, two rounds in
 * one run (µs), read back first (GX_SORT_SPEC=0) -> this: u32 keys 2^20 77.2 / 74.6
 * -> 62.7 / 62.5 (CUB 81.5), 2^24 433.7 / 435.2 -> 417.4 / 417.3; f32 keys 2^20 79.0
 * / 76.7 -> 62.9 / 63.0; u32 pairs 2^20 98.2 / 93.3 -> 81.5 / 81.2 (CUB 88.9), 2^24
 * 634.9 / 634.1 -> 616.1 / 616.6; argsort f32 2^24 568.0 / 571.8 -> 550.4 / 550.0.
 * The guess costs one pass where digit 0 is the same for every key (that pass then
 * moves the keys without reordering them), and one more where only digit 0 varies
 * (a pass on digit 1 brings the keys back to their own form in the output). */
static gx_status sc_onesweep_spec(gx_ctx *ctx, sc_job *j, sc_mem *m, void *ev, const void *host, uint64_t hdev)
{
    int kb = j->k.kb;
    GX__CHECK(sc_hist_all(ctx, j, m, j->kin, 1, hdev));
    GX__CHECK(ctx->be.iface->stream.event_record(&ctx->be, ev));
    j->skew = 0;
    sc_widen(j, kb); /* two passes at least run */
    GX__CHECK(sc_mem_bufs(ctx, j, m, kb));
    /* kb is even: counting back from the last of kb passes, the first writes kbuf[0] */
    GX__CHECK(sc_pass(ctx, j, m, 0, 0, j->kin, j->vin, m->kbuf[0], m->vbuf, false));
    GX__CHECK(ctx->be.iface->stream.event_sync(&ctx->be, ev));
    const volatile uint32_t *hw = host;
    uint32_t trivial[8] = {0};
    for (int p = 0; p < kb; p++)
        trivial[p] = hw[p];
    uint64_t lossy = ((const volatile uint64_t *)host)[4];
    int run[8] = {0}, rest[8] = {0}, nr = 0;
    int np = sc_plan(j, trivial, run);
    for (int e = 0; e < np; e++)
        if (run[e] != 0)
            rest[nr++] = run[e];
    if (nr == 0)
        rest[nr++] = 1; /* only digit 0 varies (or none): digit 1 is the same for every key */
    GX__CHECK(sc_passes_after(ctx, j, m, trivial, rest, nr));
    return j->k.kind == 2 && j->kout && lossy ? sc_fixup(ctx, j, m) : GX_OK;
}

static gx_status sc_onesweep(gx_ctx *ctx, sc_job *j)
{
    sc_mem m;
    memset(&m, 0, sizeof m);
    void *ev = NULL, *host = NULL;
    uint64_t hdev = 0;
    gx_status s = sc_mem_meta(ctx, j, &m);
    bool spec = s == GX_OK && m.nseg == 1 && j->k.kb % 2 == 0 && sc_spec_get(ctx, &ev, &host, &hdev);
    if (s == GX_OK)
        s = spec ? sc_onesweep_spec(ctx, j, &m, ev, host, hdev) : sc_onesweep_plain(ctx, j, &m);
    sc_mem_free(ctx, &m);
    return s;
}

/* ------------------------------------------------------------ the seam */


static gx_status sc_check(const gx__sort_req *r, sc_key *k)
{
    GX__ARG(r, "gx sort (GPU): no request");
    GX__CHECK(sc_key_of("gx sort (GPU)", r->kdtype, k));
    GX__ARG(sc_vb_ok(r->vbytes), "gx sort (GPU): values of %zu bytes; 1, 2, 4, 8 or 16 are supported", r->vbytes);
    GX__ARG(r->n == 0 || r->vbytes != 0 || r->keys_out, "gx sort (GPU): keys_out is needed without values");
    GX__ARG(r->vals_in || r->vbytes == 0 || r->vbytes == 8,
            "gx sort (GPU): generated indices are int64 (vbytes 8), not %zu bytes", r->vbytes);
    GX__ARG(r->n == 0 || r->vbytes == 0 || r->vals_out, "gx sort (GPU): vals_out is NULL with %zu-byte values", r->vbytes);
    GX__ARG(r->n >= 0 && r->nrows >= 0 && r->rowlen >= 0 && r->nrows * r->rowlen == r->n,
            "gx sort (GPU): n = %lld is not nrows (%lld) x rowlen (%lld)", (long long)r->n, (long long)r->nrows,
            (long long)r->rowlen);
    GX__ARG(r->n == 0 || r->keys_in, "gx sort (GPU): keys_in is NULL");
    return GX_OK;
}

gx_status gx__sort_cuda(gx_ctx *ctx, const gx__sort_req *r)
{
    sc_key k;
    GX__CHECK(sc_check(r, &k));
    if (r->n == 0)
        return GX_OK;
    int vb = (int)r->vbytes;
    if (r->rowlen <= SC_CAP)
        return sc_rows(ctx, k, r->descending, vb, r->keys_in, r->vals_in, r->keys_out, r->vals_out, r->nrows,
                       r->rowlen, r->rowlen);
    for (int64_t row = 0; row < r->nrows; row++) {
        int64_t at = row * r->rowlen;
        sc_job j = {k,
                    r->descending != 0,
                    vb,
                    (const char *)r->keys_in + at * k.kb,
                    r->vals_in ? (const char *)r->vals_in + at * vb : NULL,
                    r->keys_out ? (char *)r->keys_out + at * k.kb : NULL,
                    vb ? (char *)r->vals_out + at * vb : NULL,
                    r->rowlen,
                    vb,
                    0};
        GX__CHECK(sc_onesweep(ctx, &j));
    }
    return GX_OK;
}

typedef struct sc_head_args {
    uint64_t src, dst;
    int64_t nrows, rowlen, ocols;
} sc_head_args;

/* Top-k of one long row: the sorted row with its indices in scratch, its first k. */
static gx_status sc_topk_row(gx_ctx *ctx, sc_key k, const gx__topk_req *r, int64_t row, void *ks, int64_t *is)
{
    sc_job j = {k, r->largest != 0, 8, (const char *)r->keys_in + row * r->rowlen * k.kb, NULL, ks, is, r->rowlen, 8, 0};
    GX__CHECK(sc_onesweep(ctx, &j));
    gx__kernel hk, hv;
    GX__CHECK(sc_kernel(ctx, k, r->largest != 0, 8, "gx_sr_head_k", &hk));
    GX__CHECK(sc_kernel(ctx, k, r->largest != 0, 8, "gx_sr_head_v", &hv));
    sc_head_args a = {(uint64_t)(uintptr_t)ks, (uint64_t)(uintptr_t)((char *)r->vals_out + row * r->k * k.kb), 1,
                      r->rowlen, r->k};
    GX__CHECK(sc_launch(ctx, &hk, &a, sizeof a, sc_fill_grid(&hk, r->k)));
    a.src = (uint64_t)(uintptr_t)is;
    a.dst = (uint64_t)(uintptr_t)(r->idx_out + row * r->k);
    return sc_launch(ctx, &hv, &a, sizeof a, sc_fill_grid(&hv, r->k));
}

/* ---- radix select: rows longer than SC_CAP with k <= SC_SEL_KMAX */

#define SC_SEL_KMAX 1024 /* the largest k the select takes (larger: the sort) */
/* Items of the k-th item's bucket at which narrowing stops: another pass costs a read
 * of the row, the ranking of the gathered items grows with their square, so long
 * rows stop earlier.  2^28 random f32 in [0, 1) (the bench's): the 24 bits of two
 * passes leave about 4096 items, which 16384 stops at, saving a third pass. */
static int64_t sc_sel_cap(int64_t rowlen)
{
    int64_t c = rowlen >> 14;
    return c < 4096 ? 4096 : c > 16384 ? 16384 : c;
}
#define SC_SEL_BITS 12   /* bits per narrowing pass (GX_RBINS bins) */

typedef struct sc_sel_hist_args {
    uint64_t keys, state, hist;
    int64_t n;
    int32_t field, shift, bits, pad;
} sc_sel_hist_args;
typedef struct sc_sel_pick_args {
    uint64_t state, hist;
    int64_t cap, k;
    int32_t field, shift, bits, pad;
} sc_sel_pick_args;
typedef struct sc_sel_cand_args {
    uint64_t keys, state, cand;
    int64_t n, total;
} sc_sel_cand_args;
typedef struct sc_sel_rank_args {
    uint64_t keys, state, cand, rank;
    int64_t tiles, total;
} sc_sel_rank_args;
typedef struct sc_sel_write_args {
    uint64_t keys, state, cand, rank, vals, idx;
    int64_t k, total;
} sc_sel_write_args;

/* The select's scratch, zeroed per row: state (8 words), counts (4096 words),
 * ranks (u32), then the candidates' positions (not zeroed). */
typedef struct sc_sel_mem {
    void *p;
    size_t bytes, zero_bytes;
    uint64_t *state, *hist, *cand;
    uint32_t *rank;
    int64_t cap, total;
} sc_sel_mem;

static gx_status sc_sel_alloc(gx_ctx *ctx, const gx__topk_req *r, sc_sel_mem *m)
{
    m->cap = sc_sel_cap(r->rowlen);
    m->total = r->k + m->cap < r->rowlen ? r->k + m->cap : r->rowlen;
    size_t rank_words = ((size_t)m->total + 1) / 2;
    m->zero_bytes = (8 + ((size_t)1 << SC_SEL_BITS) + rank_words) * 8;
    m->bytes = m->zero_bytes + (size_t)m->total * 8;
    GX__CHECK(gx__scratch_alloc(ctx, m->bytes, &m->p));
    uint64_t *w = m->p;
    m->state = w;
    m->hist = w + 8;
    m->rank = (uint32_t *)(w + 8 + ((size_t)1 << SC_SEL_BITS));
    m->cand = w + 8 + ((size_t)1 << SC_SEL_BITS) + rank_words;
    return GX_OK;
}

/* Grid of a pass over n keys: fills the device; a block counts at most 2^30 keys
 * (its u32 bins). */
static int64_t sc_sel_grid(const gx__kernel *k, int64_t n)
{
    int64_t g = sc_fill_grid(k, (n + 3) / 4), least = (n >> 30) + 1;
    return g > least ? g : least;
}

/* The narrowing passes over one field (0: the key's tbits bits, 1: the index's). */
static gx_status sc_sel_field(gx_ctx *ctx, sc_key k, int largest, const sc_sel_mem *m, const void *keys, int64_t n,
                              int64_t want, int field, int nbits)
{
    gx__kernel kh, kp;
    GX__CHECK(sc_kernel(ctx, k, largest, 8, "gx_sel_hist", &kh));
    GX__CHECK(sc_kernel(ctx, k, largest, 8, "gx_sel_pick", &kp));
    for (int rest = nbits; rest > 0;) {
        int bits = rest < SC_SEL_BITS ? rest : SC_SEL_BITS;
        rest -= bits;
        sc_sel_hist_args h = {(uint64_t)(uintptr_t)keys, (uint64_t)(uintptr_t)m->state, (uint64_t)(uintptr_t)m->hist,
                              n, field, rest, bits, 0};
        GX__CHECK(sc_launch(ctx, &kh, &h, sizeof h, sc_sel_grid(&kh, n)));
        sc_sel_pick_args p = {(uint64_t)(uintptr_t)m->state, (uint64_t)(uintptr_t)m->hist, m->cap, want, field,
                              rest, bits, 0};
        GX__CHECK(sc_launch(ctx, &kp, &p, sizeof p, 1));
    }
    return GX_OK;
}

/* Top-k of one long row by radix select: narrow the prefix of the k-th item (key
 * bits, then index bits) until its bucket is small, gather every item at or before
 * that prefix (at most k - 1 + cap), rank those by (key, index), write the
 * first k.  Same result as the sort: the order is the sort's composite order. */
static gx_status sc_sel_row(gx_ctx *ctx, sc_key k, const gx__topk_req *r, int64_t row, const sc_sel_mem *m)
{
    int largest = r->largest != 0;
    const void *keys = (const char *)r->keys_in + row * r->rowlen * k.kb;
    int64_t n = r->rowlen;
    sc_job zj = {k, largest, 8, NULL, NULL, NULL, NULL, 0, 8, 0};
    GX__CHECK(sc_zero(ctx, &zj, m->p, m->zero_bytes));
    if (n > m->cap) { /* else every item is a candidate */
        int ibits = 1;
        while (ibits < 63 && (1ll << ibits) < n)
            ibits++;
        GX__CHECK(sc_sel_field(ctx, k, largest, m, keys, n, r->k, 0, 8 * k.kb));
        GX__CHECK(sc_sel_field(ctx, k, largest, m, keys, n, r->k, 1, ibits));
    }
    gx__kernel kc, kr, kw;
    GX__CHECK(sc_kernel(ctx, k, largest, 8, "gx_sel_cand", &kc));
    GX__CHECK(sc_kernel(ctx, k, largest, 8, "gx_sel_rank", &kr));
    GX__CHECK(sc_kernel(ctx, k, largest, 8, "gx_sel_write", &kw));
    uint64_t ks = (uint64_t)(uintptr_t)keys, st = (uint64_t)(uintptr_t)m->state, cd = (uint64_t)(uintptr_t)m->cand,
             rk = (uint64_t)(uintptr_t)m->rank;
    sc_sel_cand_args c = {ks, st, cd, n, m->total};
    GX__CHECK(sc_launch(ctx, &kc, &c, sizeof c, sc_sel_grid(&kc, n)));
    int64_t tiles = (m->total + 255) / 256;
    sc_sel_rank_args ra = {ks, st, cd, rk, tiles, m->total};
    GX__CHECK(sc_launch(ctx, &kr, &ra, sizeof ra, tiles * tiles));
    sc_sel_write_args w = {ks, st, cd, rk, (uint64_t)(uintptr_t)((char *)r->vals_out + row * r->k * k.kb),
                           (uint64_t)(uintptr_t)(r->idx_out + row * r->k), r->k, m->total};
    return sc_launch(ctx, &kw, &w, sizeof w, sc_fill_grid(&kw, m->total));
}

static gx_status sc_topk_select(gx_ctx *ctx, sc_key k, const gx__topk_req *r)
{
    sc_sel_mem m;
    memset(&m, 0, sizeof m);
    gx_status s = sc_sel_alloc(ctx, r, &m);
    for (int64_t row = 0; s == GX_OK && row < r->nrows; row++)
        s = sc_sel_row(ctx, k, r, row, &m);
    if (m.p)
        gx__scratch_free(ctx, m.p, m.bytes);
    return s;
}

gx_status gx__topk_cuda(gx_ctx *ctx, const gx__topk_req *r)
{
    GX__ARG(r, "gx topk (GPU): no request");
    sc_key k;
    GX__CHECK(sc_key_of("gx topk (GPU)", r->kdtype, &k));
    GX__ARG(r->nrows >= 0 && r->rowlen >= 1 && r->k >= 1 && r->k <= r->rowlen,
            "gx topk (GPU): k = %lld must be between 1 and the row length %lld", (long long)r->k,
            (long long)r->rowlen);
    GX__ARG(r->nrows == 0 || (r->keys_in && r->vals_out && r->idx_out), "gx topk (GPU): a NULL buffer");
    if (r->nrows == 0)
        return GX_OK;
    if (r->rowlen <= SC_CAP)
        return sc_rows(ctx, k, r->largest, 8, r->keys_in, NULL, r->vals_out, r->idx_out, r->nrows, r->rowlen, r->k);
    if (r->k <= SC_SEL_KMAX)
        return sc_topk_select(ctx, k, r);
    size_t kbytes = (size_t)r->rowlen * (size_t)k.kb, ibytes = (size_t)r->rowlen * 8;
    void *ks = NULL, *is = NULL;
    gx_status s = gx__scratch_alloc(ctx, kbytes, &ks);
    if (s == GX_OK)
        s = gx__scratch_alloc(ctx, ibytes, &is);
    for (int64_t row = 0; s == GX_OK && row < r->nrows; row++)
        s = sc_topk_row(ctx, k, r, row, ks, is);
    if (is)
        gx__scratch_free(ctx, is, ibytes);
    if (ks)
        gx__scratch_free(ctx, ks, kbytes);
    return s;
}

/* ------------------------------------------------------------ histograms */

typedef struct sc_hi_args {
    uint64_t x, w, edges, counts, dropped;
    int64_t n, nbins;
    double lo, hi, norm; /* norm: nbins / (hi - lo), NumPy's factor (one division per call) */
    int64_t base;        /* GX__HIST_INT: the value of bin 0 */
} sc_hi_args;

static const char *sc_ctype(gx_dtype t) { return t == GX_BOOL ? "uint8_t" : gx__dtype_ctype(t); }

static bool sc_real(gx_dtype t) { return t == GX_BOOL || gx__dtype_is_int(t) || t == GX_F32 || t == GX_F64; }

/* Bins per block in shared memory (0: global atomics). */
static int64_t sc_hist_sbins(const gx__hist_req *r)
{
    int64_t per = r->wdtype != GX_DTYPE_DEFAULT ? 8 : 4;
    return r->nbins * per <= SC_HIST_SHARED_BYTES ? SC_HIST_SHARED_BYTES / per : 0;
}

#define SC_HF_MAXB 2048  /* bins of the f32 path (GX_HF_MAXB) */
#define SC_HF_WORDS 4096 /* its shared counters (GX_HF_WORDS): copies x nbins */

/* The f32 path (sc_cuda_hist_f32): f32 values into uniform bins, counted. */
static bool sc_hf_ok(const gx__hist_req *r)
{
    return r->kind == GX__HIST_EVEN && r->xdtype == GX_F32 && r->wdtype == GX_DTYPE_DEFAULT &&
           r->nbins <= SC_HF_MAXB && ((uintptr_t)r->x & 3) == 0;
}

static void sc_hist_source(gx__sbuf *b, const gx__hist_req *r);
static gx_status sc_hist_check(const gx__hist_req *r);

static gx_status sc_hist_kernel(gx_ctx *ctx, const gx__hist_req *r, const char *entry, gx__kernel *out)
{
    int64_t sbins = sc_hist_sbins(r);
    bool w = r->wdtype != GX_DTYPE_DEFAULT;
    char key[128];
    gx__fmt(key, sizeof key, "hist_cuda|%d|%d|%d|%d|%lld|%s", (int)r->kind, (int)r->xdtype, (int)r->wdtype, (int)w,
            (long long)sbins, entry);
    if (gx__memo_get(ctx, key, out, sizeof *out)) {
        ctx->cstats.mem_hits++;
        return GX_OK;
    }
    gx__sbuf b = {0};
    sc_hist_source(&b, r);
    gx_status s = b.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "gx histogram: out of host memory") : GX_OK;
    if (s == GX_OK)
        s = gx__kernel_get(ctx, b.p, "gx_histogram", entry, out);
    gx__sb_free(&b);
    if (s == GX_OK)
        gx__memo_put(ctx, key, out, sizeof *out);
    return s;
}

static void sc_hist_source(gx__sbuf *b, const gx__hist_req *r)
{
    int64_t sbins = sc_hist_sbins(r);
    bool w = r->wdtype != GX_DTYPE_DEFAULT;
    gx__sb_puts(b, "typedef signed char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\n"
                    "typedef long long int64_t;\ntypedef unsigned char uint8_t;\ntypedef unsigned short uint16_t;\n"
                    "typedef unsigned int uint32_t;\ntypedef unsigned long long uint64_t;\n"
                    "#define GXF static __device__ __forceinline__\n");
    gx__sb_printf(b, "typedef %s gx_xt;\ntypedef %s gx_wt;\n", sc_ctype(r->xdtype), w ? sc_ctype(r->wdtype) : "double");
    gx__sb_printf(b, "#define GX_XFLOAT %d\n#define GX_HKIND %d\n#define GX_WT %d\n#define GX_SHARED %d\n",
                  gx__dtype_is_float(r->xdtype) ? 1 : 0, (int)r->kind, w ? 1 : 0, sbins > 0 ? 1 : 0);
    gx__sb_printf(b, "#define GX_SBINS %lld\n", (long long)(sbins > 0 ? sbins : 1));
    gx__sb_puts(b, sc_cuda_hist);
    if (sc_hf_ok(r))
        gx__sb_puts(b, sc_cuda_hist_f32);
}

gx_status gx__hist_cuda_source(const gx__hist_req *r, char **out)
{
    *out = NULL;
    GX__CHECK(sc_hist_check(r));
    gx__sbuf b = {0};
    sc_hist_source(&b, r);
    if (b.oom) {
        gx__sb_free(&b);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx__hist_cuda_source: out of host memory");
    }
    *out = b.p;
    return GX_OK;
}

static gx_status sc_hist_check(const gx__hist_req *r)
{
    GX__ARG(r, "gx histogram (GPU): no request");
    if (!sc_real(r->xdtype))
        return gx__err(GX_ERR_DTYPE, "gx histogram (GPU): values of dtype %s (use bool, an integer, f32 or f64)",
                       gx_dtype_name(r->xdtype));
    if (r->wdtype != GX_DTYPE_DEFAULT && !sc_real(r->wdtype))
        return gx__err(GX_ERR_DTYPE, "gx histogram (GPU): weights of dtype %s (use a real dtype)",
                       gx_dtype_name(r->wdtype));
    GX__ARG(r->kind == GX__HIST_EVEN || r->kind == GX__HIST_EDGES || r->kind == GX__HIST_INT,
            "gx histogram (GPU): unknown kind %d", (int)r->kind);
    GX__ARG(r->nbins >= 1 && r->n >= 0, "gx histogram (GPU): nbins = %lld, n = %lld (nbins >= 1, n >= 0)",
            (long long)r->nbins, (long long)r->n);
    GX__ARG(r->counts_out && r->dropped_out, "gx histogram (GPU): counts_out and dropped_out are needed");
    GX__ARG(r->n == 0 || r->x, "gx histogram (GPU): x is NULL");
    GX__ARG(r->kind != GX__HIST_EDGES || r->edges, "gx histogram (GPU): edges are NULL");
    GX__ARG(r->wdtype == GX_DTYPE_DEFAULT || r->n == 0 || r->w, "gx histogram (GPU): weights are NULL");
    return GX_OK;
}

typedef struct sc_hz_args {
    uint64_t p;
    int64_t nwords;
} sc_hz_args;

typedef struct sc_hf_args {
    uint64_t x, counts, dropped;
    int64_t n, nbins, head;
    double lo, hi, norm;
    int32_t copies, exact;
} sc_hf_args;

/* Whether x * norm is exact in f32 and in f64 for every f32 x in [0, hi): lo 0 and
 * norm a power of 2 well inside f32's range (a product below 2^-126 may round, but
 * it is below 1: bin 0 both ways).  Then the f32 estimate is the f64 bin. */
static int sc_hf_exact(const gx__hist_req *r, double norm)
{
    int e = 0;
    return r->lo == 0 && frexp(norm, &e) == 0.5 && e > -100 && e < 100;
}

/* f32 values into at most SC_HF_MAXB uniform bins (outputs already zeroed): one
 * wave of blocks, each reading its share with float4 loads. */
static gx_status sc_hist_f32(gx_ctx *ctx, const gx__hist_req *r)
{
    gx__kernel kf;
    GX__CHECK(sc_hist_kernel(ctx, r, "gx_hf", &kf));
    uintptr_t at = (uintptr_t)r->x;
    int64_t head = (int64_t)(((16 - (at & 15)) & 15) / 4);
    sc_hf_args a = {(uint64_t)at, (uint64_t)(uintptr_t)r->counts_out, (uint64_t)(uintptr_t)r->dropped_out, r->n,
                    r->nbins, head < r->n ? head : r->n, r->lo, r->hi, (double)r->nbins / (r->hi - r->lo),
                    (int32_t)(SC_HF_WORDS / r->nbins < 8 ? SC_HF_WORDS / r->nbins : 8), 0};
    a.exact = sc_hf_exact(r, a.norm);
    /* One wave: each block finds the thresholds and flushes its bins once. */
    int64_t wave = kf.min_grid > 0 ? (int64_t)kf.min_grid * (kf.block > 0 ? kf.block : 256) / 256 : 1024;
    int64_t want = (r->n + 2047) / 2048, least = (r->n >> 30) + 1;
    int64_t grid = want < wave ? want : wave;
    return sc_launch(ctx, &kf, &a, sizeof a, grid > least ? grid : least);
}

gx_status gx__hist_cuda(gx_ctx *ctx, const gx__hist_req *r)
{
    GX__CHECK(sc_hist_check(r));
    gx__kernel kz, kh;
    GX__CHECK(sc_hist_kernel(ctx, r, "gx_hi_zero", &kz));
    GX__CHECK(sc_hist_kernel(ctx, r, "gx_hi", &kh));
    /* Both outputs are overwritten: zero them first (8-byte counts or sums). */
    sc_hz_args z = {(uint64_t)(uintptr_t)r->counts_out, r->nbins};
    GX__CHECK(sc_launch(ctx, &kz, &z, sizeof z, sc_fill_grid(&kz, r->nbins)));
    z.p = (uint64_t)(uintptr_t)r->dropped_out;
    z.nwords = 1;
    GX__CHECK(sc_launch(ctx, &kz, &z, sizeof z, 1));
    if (r->n == 0)
        return GX_OK;
    if (sc_hf_ok(r))
        return sc_hist_f32(ctx, r);
    sc_hi_args a = {(uint64_t)(uintptr_t)r->x,        (uint64_t)(uintptr_t)r->w,
                    (uint64_t)(uintptr_t)r->edges,    (uint64_t)(uintptr_t)r->counts_out,
                    (uint64_t)(uintptr_t)r->dropped_out, r->n,
                    r->nbins,                         r->lo,
                    r->hi,                            r->kind == GX__HIST_EVEN ? (double)r->nbins / (r->hi - r->lo) : 0,
                    r->base};
    /* Per-block u32 counters must not overflow: at most 2^30 values per block. */
    int64_t grid = sc_fill_grid(&kh, r->n);
    int64_t least = (r->n >> 30) + 1;
    return sc_launch(ctx, &kh, &a, sizeof a, grid > least ? grid : least);
}
