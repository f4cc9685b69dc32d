/* reduce_small.c -- the front of small whole-array findmin / findmax (argmin,
 * argmax) on the CPU backend: one generated function per (dtype, min/max) that finds
 * the extreme value with plain vector min/max and then the first index holding it,
 * called inline on the calling thread.
 *
 * Why: argmin of 1024 f32 on the 2-core VM (scripts/bench-cpu, one call timed at a
 * time over 64 rotated inputs) took ~0.65-0.9 us against NumPy's ~0.62 us, where the
 * sum of the same data was ahead.  perf of a warm gx_find_into: ~30% in the two
 * generated kernels (the fold, whose index-carrying batches compare and blend, and
 * the partials' combine: a second launch), ~70% on the host -- rd_prepare's job
 * (operator texts copied and hashed: strcpy/strlen/memo_hash ~9%), the reduction
 * spec and argument block (memset/memcpy ~4%), the empty bound-array pass
 * (bd_begin/bd_collect ~4%), the per-stream scratch slot, two launches.  None of it
 * depends on anything but (dtype, min/max) for a dense whole array, so this front
 * checks the call, finds its function by that pair and runs it once.
 * Before -> after (argmin of 1024 f32 into an index array, gx_find_into, one call
 * at a time over 64 rotated inputs, median of 20000, 2-core VM): 663 -> 317 ns; argmax
 * 667 -> 320 ns.  Of the kernel's part: the first form of the passes (inline in the
 * entry, 16-trip loops) stayed scalar -- GCC unrolled the loops and kept the lanes in
 * memory -- and took 75% of a call; as generated below, both passes vectorise.
 *
 * Results are those of the full path exactly: NaN is ignored unless every value is
 * NaN (then the first index, 0), ties and +-0 give the first index (equality finds
 * both zeros), the value is the element at that index.  Anything else -- halves,
 * bool, complex, views that are not dense, larger sizes, options, outputs of another
 * dtype or shape, graph recording, the CUDA backend, any bad argument -- is left to
 * the full path (reduce.c), which also reports the errors. */
#include "ops/reduce_priv.h"
#include "jit/lambda.h"

#include <string.h>

/* Largest whole array the front takes: up to here one core beats the full path,
 * which splits over the pool from 2 x CPU_GRAIN (16384) elements on the 2-core VM
 * and 2 x CPU_GRAIN_MANY (4096) on larger hosts.  2-core VM, argmin f32, one call at
 * a time over 64 rotated inputs, median ns, full path (two threads) / front: 2^11
 * 794 / 445, 2^12 1024 / 749, 2^13 1913 / 1683, 2^14 2900 / 3424 (the split wins).
 * The front's second pass then reads L1, not memory (8192 f32 are 32 KiB). */
#define RS_MAX 8192

/* Bytes of one pass's lanes: 128 (32 f32, 16 f64...), four AVX2 vectors, so that
 * four independent vminps chains hide the instruction's latency (two chains: 16 f32
 * per 4 cycles). */
#define RS_LANE_BYTES 128

typedef struct rs_args {
    uint64_t x;   /* the first element */
    int64_t n;    /* elements, >= 1 */
    uint64_t val; /* host address of the value, or 0 */
    uint64_t idx; /* host address of the index (int64_t), or 0 */
} rs_args;

static bool rs_dtype_ok(gx_dtype t)
{
    switch (t) {
    case GX_F32: case GX_F64: case GX_I8: case GX_I16: case GX_I32: case GX_I64:
    case GX_U8: case GX_U16: case GX_U32: case GX_U64: return true;
    default: return false;
    }
}

/* GCC unrolls a loop of 16+ trips fully and then fails to pack it into vectors;
 * with unroll 1 the loop vectoriser takes it (reduce_gen.c's RG_CPU_NO_UNROLL). */
#define RS_NO_UNROLL "#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC unroll 1\n#endif\n"

/* The function's C text.  Pass 1: the extreme of the lanes, `v < m ? v : m` (a
 * single minps / vpminsd per vector: a NaN v keeps m, so NaN is ignored; floats
 * start from +-infinity, integers from x[0]).  Pass 2: the first index equal to it,
 * a lane block of compares at a time, then one by one inside the block that holds
 * it.  No float equals NaN: all-NaN input finds nothing and answers index 0.  The
 * passes are a noinline function of restrict parameters: inline in the entry, whose
 * pointer comes from the argument block, GCC kept the lanes in memory (a store and
 * reload per vector, as reduce_gen.c's rg_gen_cpu_head explains). */
static void rs_source(gx__sbuf *b, gx_dtype t, bool want_max)
{
    const char *ct = gx__dtype_ctype(t), *cmp = want_max ? ">" : "<";
    int lanes = RS_LANE_BYTES / (int)gx_dtype_size(t);
    gx__sb_puts(b, lam_prelude(GX__TARGET_C));
    gx__sb_puts(b, "\n#line 1 \"gx-generated\"\n"
                   "typedef struct { uint64_t x; int64_t n; uint64_t val, idx; } rs_args;\n");
    gx__sb_printf(b, "typedef %s rs_t;\n", ct);
    gx__sb_puts(b, "#if defined(__GNUC__)\n__attribute__((noinline))\n#endif\n"
                   "static int64_t gx_rs_body(const rs_t *restrict x, int64_t n, rs_t init)\n{\n");
    gx__sb_printf(b, "  rs_t m[%d];\n  for (int k = 0; k < %d; k++) m[k] = init;\n  int64_t i = 0;\n", lanes, lanes);
    gx__sb_printf(b, "  for (; i + %d <= n; i += %d)\n%s    for (int k = 0; k < %d; k++) {\n"
                     "      rs_t v = x[i + k];\n      m[k] = v %s m[k] ? v : m[k];\n    }\n",
                  lanes, lanes, RS_NO_UNROLL, lanes, cmp);
    gx__sb_printf(b, "  for (; i < n; i++) {\n    rs_t v = x[i];\n    m[0] = v %s m[0] ? v : m[0];\n  }\n", cmp);
    gx__sb_printf(b, "  for (int k = 1; k < %d; k++) m[0] = m[k] %s m[0] ? m[k] : m[0];\n", lanes, cmp);
    gx__sb_printf(b, "  const rs_t best = m[0];\n  int64_t j = 0;\n  for (; j + %d <= n; j += %d) {\n    int hit = 0;\n"
                     "%s    for (int k = 0; k < %d; k++) hit |= x[j + k] == best;\n    if (hit) break;\n  }\n",
                  lanes, lanes, RS_NO_UNROLL, lanes);
    gx__sb_puts(b, "  while (j < n && !(x[j] == best)) j++;\n  return j < n ? j : 0;\n}\n");
    gx__sb_puts(b, "void gx_rs(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                   "  const rs_args *a = (const rs_args *)ap;\n  (void)begin; (void)end; (void)thread;\n"
                   "  const rs_t *x = (const rs_t *)(uintptr_t)a->x;\n");
    if (t == GX_F32)
        gx__sb_printf(b, "  union { uint32_t u; float f; } init = {%s};\n", want_max ? "0xff800000u" : "0x7f800000u");
    else if (t == GX_F64)
        gx__sb_printf(b, "  union { uint64_t u; double f; } init = {%s};\n",
                      want_max ? "0xfff0000000000000ull" : "0x7ff0000000000000ull");
    gx__sb_printf(b, "  const int64_t j = gx_rs_body(x, a->n, %s);\n", gx__dtype_is_float(t) ? "init.f" : "x[0]");
    gx__sb_puts(b, "  if (a->idx) *(int64_t *)(uintptr_t)a->idx = j;\n"
                   "  if (a->val) *(rs_t *)(uintptr_t)a->val = x[j];\n}\n");
}

/* The function of (dtype, min/max): from the memo, else generated and compiled. */
static gx_status rs_kernel(gx_ctx *ctx, gx_dtype t, bool want_max, gx__kernel *k)
{
    gx__bkey bk;
    bk.len = 0;
    bk.over = false;
    const int64_t key[] = {0x7273666e64, RS_LANE_BYTES, (int64_t)t, want_max};
    gx__bkey_bytes(&bk, key, sizeof key);
    if (gx__memo_bget(ctx, &bk, k, sizeof *k)) {
        ctx->cstats.mem_hits++;
        return GX_OK;
    }
    gx__sbuf src = {0};
    rs_source(&src, t, want_max);
    gx_status s = src.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory generating an argmin kernel")
                          : gx__kernel_get(ctx, src.p, want_max ? "gx_argmax" : "gx_argmin", "gx_rs", k);
    if (s == GX_OK)
        gx__memo_bput(ctx, &bk, k, sizeof *k);
    gx__sb_free(&src);
    return s;
}

/* Whether the options ask for nothing (NULL, or all fields zero but exact_dtype,
 * which changes nothing when the outputs have the result dtypes). */
static bool rs_opts_plain(const gx_reduce_opts *o)
{
    if (!o)
        return true;
    gx_reduce_opts z;
    memset(&z, 0, sizeof z);
    z.exact_dtype = o->exact_dtype;
    return memcmp(&z, o, sizeof z) == 0;
}

/* The input: a live dense array of this context, of a dtype the front has, 1..RS_MAX
 * elements, on the CPU backend. */
static bool rs_input_ok(gx_ctx *ctx, const gx_array *x)
{
    if (!ctx || gx__ctx_check(ctx) != GX_OK || gx__target_is_cuda(ctx) || gx__array_check(x, "x") != GX_OK)
        return false;
    return x->ctx == ctx && rs_dtype_ok(x->dtype) && x->size >= 1 && x->size <= RS_MAX && gx__array_contiguous(x);
}

/* An output array: live, this context's, dtype t, one element, dense, writable, not
 * sharing memory with x. */
static bool rs_out_ok(gx_ctx *ctx, const gx_array *o, gx_dtype t, const gx_array *x)
{
    if (gx__array_check(o, "out") != GX_OK)
        return false;
    return o->ctx == ctx && o->dtype == t && o->size == 1 && !o->readonly && gx__array_contiguous(o) &&
           !gx__arrays_overlap(o, x) && gx__array_ptr(o) != gx__array_ptr(x);
}

/* Runs the front under the context lock (declines inside a graph recording, whose
 * launches are recorded by the full path). */
static bool rs_run(gx_ctx *ctx, bool want_max, const gx_array *x, void *val, int64_t *idx, gx_status *st)
{
    gx__lock(ctx);
    if (gx__graph_recording(ctx)) {
        gx__unlock(ctx);
        return false;
    }
    gx__kernel k;
    memset(&k, 0, sizeof k);
    rs_args a = {(uint64_t)(uintptr_t)gx__array_ptr(x), x->size, (uint64_t)(uintptr_t)val, (uint64_t)(uintptr_t)idx};
    *st = rs_kernel(ctx, x->dtype, want_max, &k);
    /* cpu_n 1: one part, run on this thread (no pool handoff). */
    if (*st == GX_OK)
        *st = gx__launch_1d(ctx, &k, &a, sizeof a, 1, 1, 1, 1);
    gx__unlock(ctx);
    return true;
}

bool rd_small_find_into(gx_ctx *ctx, int find, gx_array *x, const gx_reduce_opts *opts, gx_array *vals,
                        gx_array *idx, gx_status *st)
{
    if ((!vals && !idx) || !rs_opts_plain(opts) || !rs_input_ok(ctx, x))
        return false;
    if ((vals && !rs_out_ok(ctx, vals, x->dtype, x)) || (idx && !rs_out_ok(ctx, idx, GX_I64, x)))
        return false;
    return rs_run(ctx, find == 2, x, vals ? gx__array_ptr(vals) : NULL, idx ? (int64_t *)gx__array_ptr(idx) : NULL,
                  st);
}

bool rd_small_find_host(gx_array *x, int find, void *val, int64_t *idx, gx_status *st)
{
    if (gx__array_check(x, "x") != GX_OK)
        return false;
    gx_ctx *ctx = x->ctx;
    if (!rs_input_ok(ctx, x))
        return false;
    return rs_run(ctx, find == 2, x, val, idx, st);
}
