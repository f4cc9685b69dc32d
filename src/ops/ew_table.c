/* ew_table.c -- tabulated maps: a pure function of one 8- or 16-bit input, evaluated
 * once for every bit pattern of that input, then applied to the array as a table
 * lookup (see ewise.h, ew_table_run).
 *
 * Why: a half-precision map is memory-bound only while its arithmetic is cheap.
 * sin(x)^2 + cos(x)^2 of an f16 array takes ~38 instructions an element (f32 sine and
 * cosine, conversions), which on an H200 holds it at 67% of the copy bandwidth: the
 * H200 has the H100's SMs with 1.4x its bandwidth.  An f16 input has only 65,536 bit
 * patterns, so the same kernel evaluates the function on all of them (a 65,536-element
 * map, a few microseconds), and the array's map becomes a lookup in that table held in
 * shared memory: a handful of instructions an element, bound by memory again.
 *
 * The table is built by the very kernel the direct path would run (ew_run_direct on a
 * plan whose input holds every pattern), so a tabulated map's results are those of
 * the direct one, NaN payloads included (on the CPU see ewise.h for the one caveat:
 * there a tabulated element depends on its input alone, a direct one on its block of
 * 256 when that block holds a huge sin/cos argument).  Only maps that cannot tell the two
 * apart qualify: one input streamed contiguously, no arrays read by index, no
 * reference to the element's position, nothing in user code that reads the thread's
 * identity or the clock.  Constants are fine: their values are part of the key under
 * which a table is kept for the next call (et_key). */
#include "ops/ewise.h"
#include "jit/lambda.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Test hook (gx__ew_table_mode): -1 follows GX_EW_TABLE / the size rule. */
static int et_forced = -1;
void gx__ew_table_mode(int mode) { et_forced = mode; }

#define ET_CACHED 8

/* A table kept for the next call of the same map: `key` holds everything its values
 * depend on (et_key). */
typedef struct et_cached {
    unsigned char *key;
    size_t klen;
    void *tab;
    size_t bytes;
} et_cached;

/* Per context: every 16-bit pattern in device memory, then every 8-bit one (the
 * tables' inputs), the device's shape for the launch, the kept tables. */
typedef struct et_state {
    void *patterns; /* 65,536 u16 0, 1, ..., 65535, then 256 u8 0, ..., 255 */
    int sms;
    size_t smem_optin;
    et_cached cache[ET_CACHED];
    int next; /* the slot replaced next (round robin) */
} et_state;

#define ET_PATTERNS 65536
#define ET_BYTES_AT (ET_PATTERNS * 2)   /* where the 8-bit patterns start */
#define ET_PBYTES (ET_BYTES_AT + 256)
#define ET_BLOCK et_block()
/* Threads a block (GX_ET_BLOCK, experiments). */
static int et_block(void) { return gx__knob_int("GX_ET_BLOCK", 1024, 128, 1024); }

static void et_release(gx_ctx *ctx, void *state)
{
    et_state *e = state;
    gx__scratch_free(ctx, e->patterns, ET_PBYTES);
    for (int i = 0; i < ET_CACHED; i++) {
        if (e->cache[i].tab)
            gx__scratch_free(ctx, e->cache[i].tab, e->cache[i].bytes);
        free(e->cache[i].key);
    }
    free(e);
}

static const gx__ctx_ext et_ext = {"map tables", et_release};

static gx_status et_state_of(gx_ctx *ctx, et_state **out)
{
    et_state *e = gx__ctx_ext_get(ctx, &et_ext);
    if (e) {
        *out = e;
        return GX_OK;
    }
    gx_device_info info;
    memset(&info, 0, sizeof info);
    GX__CHECK(ctx->be.iface->info(&ctx->be, &info));
    unsigned char *host = malloc(ET_PBYTES);
    e = calloc(1, sizeof *e);
    gx_status s = host && e ? GX_OK : gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for a map table");
    if (s == GX_OK)
        s = gx__scratch_alloc(ctx, ET_PBYTES, &e->patterns);
    for (int i = 0; s == GX_OK && i < ET_PATTERNS; i++) {
        uint16_t v = (uint16_t)i;
        memcpy(host + 2 * i, &v, 2);
    }
    for (int i = 0; s == GX_OK && i < 256; i++)
        host[ET_BYTES_AT + i] = (unsigned char)i;
    if (s == GX_OK)
        s = gx__mem_setup_h2d(ctx, e->patterns, host, ET_PBYTES); /* once, also inside a graph recording */
    if (s == GX_OK) {
        e->sms = info.multiprocessors > 0 ? info.multiprocessors : 1;
        e->smem_optin = info.shared_per_block_optin;
        s = gx__ctx_ext_set(ctx, &et_ext, e);
    }
    free(host);
    if (s != GX_OK && e) {
        if (e->patterns)
            gx__scratch_free(ctx, e->patterns, ET_PBYTES);
        free(e);
        return s;
    }
    *out = e;
    return s;
}

/* ------------------------------------------------------------ which maps qualify */

/* Functions whose evaluation costs far more than moving an element.  A map that calls
 * none of them is memory-bound already, and the table would only add its build. */
static const char *const et_costly[] = {"sin",   "cos",   "tan",  "asin",  "acos",  "atan",   "atan2",  "sinh",
                                        "cosh",  "tanh",  "asinh", "acosh", "atanh", "exp",    "exp2",   "expm1",
                                        "log",   "log2",  "log10", "log1p", "cbrt",  "pow",    "hypot",  "erf",
                                        "erfc",  "lgamma", "tgamma", "fmod"};

/* In a lambda's expression the prelude's gx_<name>_<dtype>; in gx_define'd C code
 * the C library's <name> or <name>f. */
static bool et_calls_costly(const char *text, bool user)
{
    for (size_t i = 0; text && i < sizeof et_costly / sizeof et_costly[0]; i++) {
        char call[24], callf[24];
        gx__fmt(call, sizeof call, user ? "%s(" : "gx_%s_", et_costly[i]);
        gx__fmt(callf, sizeof callf, "%sf(", et_costly[i]);
        if (strstr(text, call) || (user && strstr(text, callf)))
            return true;
    }
    return false;
}

/* Anything that makes an element's value depend on more than its input's bits. */
static bool et_impure(const char *text)
{
    static const char *const bad[] = {"gx_idx", "thread", "blockIdx", "clock", "atomic", "asm", "static", "rand(", "time("};
    for (size_t i = 0; text && i < sizeof bad / sizeof bad[0]; i++)
        if (strstr(text, bad[i]))
            return true;
    return false;
}

static bool et_input_dtype(gx_dtype t)
{
    return t == GX_I8 || t == GX_U8 || t == GX_I16 || t == GX_U16 || t == GX_F16 || t == GX_BF16;
}

/* The plan's shape qualifies: one contiguous 8/16-bit input, nothing bound, a
 * contiguous output of at most 16 bits that is the input itself (each element is read
 * before it is written, by the same thread) or does not overlap it.  Outputs of at
 * most 16 bits: a 128 KiB table fits in shared memory, and a value rounded to 16 bits
 * hides the last-bit differences of the CPU's block-wise sin and cos (ewise.c,
 * gen_fast_loop: a block of 256 with one huge argument is redone with libm, so there
 * an element's f32 value depends on its neighbours). */
static bool et_plan_fits(const ew_plan *pl)
{
    if (pl->nin != 1 || !pl->contig || (pl->bind && pl->bind->n > 0) || pl->args.st[0][0] != 1 ||
        pl->args.st[1][0] != 1 || !et_input_dtype(pl->dt[1]) || gx_dtype_size(pl->dt[0]) > 2)
        return false;
    size_t osz = gx_dtype_size(pl->dt[0]), isz = gx_dtype_size(pl->dt[1]);
    uint64_t o = pl->args.p[0], i = pl->args.p[1], n = (uint64_t)pl->args.n;
    return o == i || o >= i + n * isz || i >= o + n * osz;
}

/* Whether ew_run should take the table path.  GX_EW_TABLE: 0 never, 1 whenever the
 * map qualifies (any size), unset: qualifying maps that call a costly function, at
 * n >= 256 table entries (2^24 for 16-bit inputs), where the table's build (one more
 * launch, and each block's copy of the table) is a small part of the call.  H200,
 * sin^2 + cos^2 of f16 (µs, table / direct): 2^22 14.2 / 10.7, 2^24 26.9 / 28.0,
 * 2^28 286.5 / 374.4.  The cheap tests come first: most maps leave before any text
 * is scanned. */
bool ew_table_wanted(gx_ctx *ctx, const ew_plan *pl, const char *expr, const char *user_code)
{
    (void)ctx;
    int mode = et_forced >= 0 ? et_forced : gx__knob_int("GX_EW_TABLE", -1, 0, 1);
    if (mode == 0 || !et_plan_fits(pl))
        return false;
    int64_t entries = (int64_t)1 << (8 * gx_dtype_size(pl->dt[1]));
    if (mode != 1 && pl->args.n < 256 * entries)
        return false;
    if (et_impure(expr) || et_impure(user_code))
        return false;
    return mode == 1 || et_calls_costly(expr, false) || et_calls_costly(user_code, true);
}

/* ------------------------------------------------------------ the lookup kernel */

typedef struct et_args {
    uint64_t in, out, tab;
    int64_t n;
} et_args;

static const char *et_utype(size_t bytes)
{
    switch (bytes) {
    case 1: return "uint8_t";
    case 2: return "uint16_t";
    case 4: return "uint32_t";
    default: return "uint64_t";
    }
}

/* Vectors in flight per thread, within the 64 registers that 1024-thread blocks
 * allow (ptxas, f16 -> f16: 64 at 4 without spills, spills from 6; vectors of 16
 * bytes-sized elements spill already at 4). */
/* Measured without gain (H200, f16 sin^2 + cos^2 at 2^28, % of copy; this loop at 4:
 * 89.5-89.8): 2 vectors 88.9, 3 87.3; each warp taking chunks of 32 x U contiguous
 * vectors (fewer address registers) 88.3; the input staged through shared memory by
 * cp.async in 3, 4, 6 or 8 stages (no registers held for loads in flight) 85.3-86.2;
 * blocks of 512 threads (GX_ET_BLOCK) with 4 / 6 / 8 vectors a thread 76.7 / 82.8 /
 * 83.7: warps hide the lookups' latency better than loads in flight do.
 * ncu: warps wait on the global loads 77% of the time at 48.7% occupancy (one
 * 1024-thread block an SM: the 128 KiB table leaves room for no second). */
static int et_unroll(int vec) { return gx__knob_int("GX_ET_UNROLL", vec >= 16 ? 1 : 4, 1, 8); }

/* out[i] = tab[bits of in[i]], in vectors of `vec` elements.  CUDA copies the table
 * into shared memory first (every block keeps it for the whole grid-stride loop);
 * random lookups there cost a few bank conflicts per warp, far below memory time. */
static void et_source(bool cuda, size_t isz, size_t osz, int vec, size_t tbytes, gx__sbuf *b)
{
    const char *it = et_utype(isz), *ot = et_utype(osz);
    gx__sb_puts(b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    gx__sb_puts(b, "\n#line 1 \"gx-generated\"\ntypedef struct { uint64_t in, out, tab; int64_t n; } gx_tab_args;\n");
    if (!cuda) {
        gx__sb_printf(b,
                      "void gx_tab(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                      "  const gx_tab_args *a = (const gx_tab_args *)ap;\n  (void)thread;\n"
                      "  const %s *restrict in = (const %s *)a->in;\n  %s *restrict o = (%s *)a->out;\n"
                      "  const %s *restrict t = (const %s *)a->tab;\n"
                      "  for (int64_t i = begin; i < end; i++) o[i] = t[in[i]];\n}\n",
                      it, it, ot, ot, ot, ot);
        return;
    }
    const int U = et_unroll(vec);
    gx__sb_printf(b,
                  "struct __align__(%zu) gx_tvi { %s e[%d]; };\nstruct __align__(%zu) gx_tvo { %s e[%d]; };\n"
                  "extern \"C\" __global__ void __launch_bounds__(%d) gx_tab(const gx_tab_args a)\n{\n  GX_PDL_ENTER();\n"
                  "  extern __shared__ __align__(16) unsigned char gx__sm[];\n"
                  "  const %s *t = (const %s *)gx__sm;\n"
                  "  const int64_t n = a.n, nth = (int64_t)gridDim.x * blockDim.x;\n"
                  "  const int64_t nv = n / %d;\n  int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "  const gx_tvi *vi = (const gx_tvi *)a.in;\n  gx_tvo *vo = (gx_tvo *)a.out;\n",
                  isz * (size_t)vec, it, vec, osz * (size_t)vec, ot, vec, ET_BLOCK, ot, ot, vec);
    /* Software-pipelined: the first vectors are loaded before the table is copied in
     * (so the copy overlaps their latency); each vector's register is reloaded with
     * the next iteration's vector as soon as its lookups are done, so U loads stay in
     * flight with only U vectors of registers. */
    gx__sb_printf(b,
                  "  gx_tvi x[%d] = {};\n#pragma unroll\n  for (int u = 0; u < %d; u++) if (v + u * nth < nv) x[u] = vi[v + u * nth];\n",
                  U, U);
    /* The table in 16-byte words copied by cp.async: all of a thread's copies (8 for
     * a 128 KiB table) in flight at once without holding registers, one L2 round trip
     * before the lookups can start (a loop of 4 register loads then 4 stores was two;
     * 8 register loads spill). */
    gx__sb_printf(b,
                  "  {\n    const uint4 *s = (const uint4 *)a.tab;\n"
                  "    const unsigned sb = (unsigned)__cvta_generic_to_shared(gx__sm);\n"
                  "    for (int i = threadIdx.x; i < %zu; i += %d)\n"
                  "      asm volatile(\"cp.async.cg.shared.global [%%0], [%%1], 16;\\n\" :: \"r\"(sb + i * 16), \"l\"(s + i));\n"
                  "    asm volatile(\"cp.async.wait_all;\\n\" ::: \"memory\");\n"
                  "  }\n  __syncthreads();\n",
                  tbytes / 16, ET_BLOCK);
    gx__sb_printf(b,
                  "  const int64_t tid = v;\n"
                  "  for (; v < nv; v += %d * nth) {\n    const int64_t w = v + %d * nth;\n"
                  "#pragma unroll\n    for (int u = 0; u < %d; u++) {\n      gx_tvo y;\n"
                  "#pragma unroll\n      for (int k = 0; k < %d; k++) y.e[k] = t[x[u].e[k]];\n"
                  "      if (w + u * nth < nv) x[u] = vi[w + u * nth];\n"
                  "      if (v + u * nth < nv) vo[v + u * nth] = y;\n    }\n  }\n"
                  "  const %s *in = (const %s *)a.in;\n  %s *o = (%s *)a.out;\n"
                  "  for (int64_t i = nv * %d + tid; i < n; i += nth) o[i] = t[in[i]];\n}\n",
                  U, U, U, vec, it, it, ot, ot, vec);
}

static gx_status et_kernel(gx_ctx *ctx, size_t isz, size_t osz, int vec, size_t tbytes, gx__kernel *k)
{
    gx__bkey bk;
    bk.len = 0;
    bk.over = false;
    const int64_t nums[] = {0x657474, (int64_t)gx__ctx_target(ctx), (int64_t)isz, (int64_t)osz, vec,
                            et_unroll(vec), ET_BLOCK};
    gx__bkey_bytes(&bk, nums, sizeof nums);
    if (gx__memo_bget(ctx, &bk, k, sizeof *k)) {
        ctx->cstats.mem_hits++;
        return GX_OK;
    }
    gx__sbuf src = {0};
    et_source(gx__target_is_cuda(ctx), isz, osz, vec, tbytes, &src);
    gx_status s = src.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory generating a kernel")
                          : gx__kernel_get(ctx, src.p, "gx_map (table)", "gx_tab", k);
    if (s == GX_OK)
        gx__memo_bput(ctx, &bk, k, sizeof *k);
    gx__sb_free(&src);
    return s;
}

static gx_status et_apply(gx_ctx *ctx, const ew_plan *pl, const void *tab, size_t tbytes, const et_state *e)
{
    size_t isz = gx_dtype_size(pl->dt[1]), osz = gx_dtype_size(pl->dt[0]);
    int vec = pl->vec > 0 ? pl->vec : 1;
    gx__kernel k;
    GX__CHECK(et_kernel(ctx, isz, osz, vec, tbytes, &k));
    et_args a = {pl->args.p[1], pl->args.p[0], (uint64_t)(uintptr_t)tab, pl->args.n};
    gx__launch l;
    memset(&l, 0, sizeof l);
    l.args = &a;
    l.args_size = sizeof a;
    l.n = pl->args.n;
    l.cpu_align = 64;
    /* One block of 1024 threads an SM (a 128 KiB table leaves room for no second),
     * or as many as the smaller tables let fit, never more blocks than vectors. */
    int64_t per_sm = tbytes > 0 && e->smem_optin >= 2 * tbytes ? 2 : 1;
    int64_t want = (pl->args.n / vec + ET_BLOCK - 1) / ET_BLOCK, grid = (int64_t)e->sms * per_sm;
    l.grid[0] = (unsigned)(want < grid ? (want < 1 ? 1 : want) : grid);
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = ET_BLOCK;
    l.block[1] = l.block[2] = 1;
    l.shmem = gx__target_is_cuda(ctx) ? (unsigned)tbytes : 0;
    l.pdl = k.pdl;
    gx__range_push("gx_map (table)");
    gx_status s = ctx->be.iface->launch.run(&ctx->be, k.fn, &l);
    gx__range_pop();
    return s;
}

/* What a table's values depend on: target, dtypes, the constants' types and values,
 * the expression and the user code (all of it: a gx_define changes the table). */
static unsigned char *et_key(gx_ctx *ctx, const ew_plan *pl, const char *expr, const char *user_code, size_t *len)
{
    size_t le = strlen(expr), lu = user_code ? strlen(user_code) : 0;
    const int64_t head[] = {(int64_t)gx__ctx_target(ctx), pl->dt[0], pl->dt[1], pl->nconst, (int64_t)le, (int64_t)lu};
    size_t n = sizeof head + (size_t)pl->nconst * (sizeof(int64_t) + sizeof(ew_cval)) + le + lu;
    unsigned char *k = malloc(n), *p = k;
    if (!k)
        return NULL;
    memcpy(p, head, sizeof head), p += sizeof head;
    for (int j = 0; j < pl->nconst; j++) {
        int64_t t = pl->cdt[j];
        memcpy(p, &t, sizeof t), p += sizeof t;
        memcpy(p, &pl->args.c[j], sizeof(ew_cval)), p += sizeof(ew_cval);
    }
    memcpy(p, expr, le), p += le;
    if (lu)
        memcpy(p, user_code, lu);
    *len = n;
    return k;
}

static et_cached *et_find(et_state *e, const unsigned char *key, size_t klen)
{
    for (int i = 0; key && i < ET_CACHED; i++)
        if (e->cache[i].tab && e->cache[i].klen == klen && memcmp(e->cache[i].key, key, klen) == 0)
            return &e->cache[i];
    return NULL;
}

/* Keeps a fresh table in the cache (taking `key`), evicting the oldest: its memory
 * goes back to the pool in stream order, after every launch queued before. */
static void et_keep(gx_ctx *ctx, et_state *e, unsigned char *key, size_t klen, void *tab, size_t bytes)
{
    et_cached *c = &e->cache[e->next];
    e->next = (e->next + 1) % ET_CACHED;
    if (c->tab)
        gx__scratch_free(ctx, c->tab, c->bytes);
    free(c->key);
    *c = (et_cached){key, klen, tab, bytes};
}

/* A table is kept for later calls of the same map (its build is a launch and ~5 µs of
 * a 2^24 f16 map on an H200), except while a graph is recorded: a graph holds on to
 * the memory it used, which the cache could give back. */
gx_status ew_table_run(gx_ctx *ctx, const ew_plan *pl, const char *expr, const char *user_code, const char *label)
{
    et_state *e;
    GX__CHECK(et_state_of(ctx, &e));
    size_t isz = gx_dtype_size(pl->dt[1]), osz = gx_dtype_size(pl->dt[0]);
    int64_t entries = (int64_t)1 << (8 * isz);
    size_t tbytes = (size_t)entries * osz;
    if (gx__target_is_cuda(ctx) && tbytes > e->smem_optin)
        return ew_run_direct(ctx, (ew_plan *)pl, expr, user_code, label); /* older GPUs: no room */
    bool caching = !gx__graph_recording(ctx);
    size_t klen = 0;
    unsigned char *key = caching ? et_key(ctx, pl, expr, user_code, &klen) : NULL;
    et_cached *hit = et_find(e, key, klen);
    if (hit) {
        free(key);
        return et_apply(ctx, pl, hit->tab, tbytes, e);
    }
    void *tab;
    gx_status s = gx__scratch_alloc(ctx, tbytes, &tab);
    if (s != GX_OK) {
        free(key);
        return s;
    }
    /* The table: the direct kernel over every pattern of the input dtype. */
    ew_plan tp = *pl;
    tp.args.p[0] = (uint64_t)(uintptr_t)tab;
    tp.args.p[1] = (uint64_t)(uintptr_t)e->patterns + (isz == 1 ? ET_BYTES_AT : 0);
    tp.args.n = entries;
    tp.vec = (int)(16 / (isz > osz ? isz : osz));
    s = ew_run_direct(ctx, &tp, expr, user_code, label);
    if (s == GX_OK)
        s = et_apply(ctx, pl, tab, tbytes, e);
    if (s == GX_OK && key) {
        et_keep(ctx, e, key, klen, tab, tbytes);
        return GX_OK;
    }
    free(key);
    gx__scratch_free(ctx, tab, tbytes); /* stream-ordered: after the lookups */
    return s;
}
