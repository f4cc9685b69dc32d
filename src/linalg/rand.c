/* rand.c -- gx_rand / gx_randn / gx_rand_int: Philox4x32-10 counter-based numbers.
 *
 * One generated kernel per (kind, dtype), the same C text on both backends (only
 * the entry wrapper differs, as in ewise.c).  A work item is one Philox block: it
 * yields 4 words, i.e. W = 4 (32-bit outputs) or W = 2 (64-bit outputs) consecutive
 * elements, so no word is computed twice; on CUDA a full, aligned block is stored
 * with one vector store.  The mapping is documented in gx/linalg.h. */
#include "linalg/linalg_priv.h"
#include "jit/lambda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum rng_kind { RNG_UNIFORM, RNG_NORMAL, RNG_INT } rng_kind;

/* Must match the struct in the generated source. */
typedef struct rng_args {
    uint64_t p;
    int64_t n; /* elements */
    int64_t nblocks;
    uint64_t seed, offset, start;
    uint64_t lo, range;
    int64_t fast; /* CUDA: full blocks may use one vector store */
} rng_args;

#define RNG_M0 0xD2511F53u
#define RNG_M1 0xCD9E8D57u
#define RNG_W0 0x9E3779B9u
#define RNG_W1 0xBB67AE85u

void gx_philox4x32_10_host(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)RNG_M0 * c0, p1 = (uint64_t)RNG_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c0 = n0, c1 = (uint32_t)p1, c2 = n2, c3 = (uint32_t)p0;
        k0 += RNG_W0, k1 += RNG_W1;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* The generator and the value mappings, for both targets.  Written so the C and
 * CUDA compilers see the same arithmetic (no target intrinsics, no __int128). */
static const char rng_code[] =
    "typedef struct { uint64_t p; int64_t n; int64_t nblocks; uint64_t seed, offset, start; uint64_t lo, range; "
    "int64_t fast; } gxr_args;\n"
    "GXF void gxr_philox(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1, uint32_t *w)\n"
    "{\n"
    "  for (int r = 0; r < 10; r++) {\n"
    "    const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;\n"
    "    const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;\n"
    "    c0 = n0; c1 = (uint32_t)p1; c2 = n2; c3 = (uint32_t)p0;\n"
    "    k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;\n"
    "  }\n"
    "  w[0] = c0; w[1] = c1; w[2] = c2; w[3] = c3;\n"
    "}\n"
    "GXF void gxr_philox_rk(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, const uint32_t *rk, uint32_t *w)\n"
    "{\n"
    "  for (int r = 0; r < 10; r++) {\n"
    "    const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;\n"
    "    const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ rk[2 * r], n2 = (uint32_t)(p0 >> 32) ^ c3 ^ rk[2 * r + 1];\n"
    "    c0 = n0; c1 = (uint32_t)p1; c2 = n2; c3 = (uint32_t)p0;\n"
    "  }\n"
    "  w[0] = c0; w[1] = c1; w[2] = c2; w[3] = c3;\n"
    "}\n"
    "GXF uint64_t gxr_w64(const uint32_t *w, int j) { return ((uint64_t)w[2 * j] << 32) | w[2 * j + 1]; }\n"
    "GXF uint64_t gxr_mulhi64(uint64_t a, uint64_t b)\n"
    "{\n"
    "  const uint64_t m = 0xffffffffu, a0 = a & m, a1 = a >> 32, b0 = b & m, b1 = b >> 32;\n"
    "  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;\n"
    "  const uint64_t mid = (p00 >> 32) + (p01 & m) + (p10 & m);\n"
    "  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);\n"
    "}\n"
    "GXF float gxr_u01_f32(const uint32_t *w, int j) { return (float)(w[j] >> 8) * 5.9604644775390625e-8f; }\n"
    /* halves: the top 11 (f16) / 8 (bf16) bits on the format's grid, exact, below 1 */
    "GXF float gxr_u01_h11(const uint32_t *w, int j) { return (float)(w[j] >> 21) * 4.8828125e-4f; }\n"
    "GXF float gxr_u01_h8(const uint32_t *w, int j) { return (float)(w[j] >> 24) * 3.90625e-3f; }\n"
    "GXF double gxr_u01_f64(const uint32_t *w, int j) { return (double)(gxr_w64(w, j) >> 11) * "
    "1.1102230246251565404e-16; }\n"
    "GXF double gxr_bm(double u1, double u2, int odd)\n"
    "{\n"
    "  const double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586477 * u2;\n"
    "  return odd ? r * sin(t) : r * cos(t);\n"
    "}\n"
    "GXF float gxr_n_f32(const uint32_t *w, int j)\n"
    "{\n"
    "  const int q = j >> 1;\n"
    "  return (float)gxr_bm(((double)w[2 * q] + 0.5) * 2.3283064365386962890625e-10,\n"
    "                       (double)w[2 * q + 1] * 2.3283064365386962890625e-10, j & 1);\n"
    "}\n"
    "GXF double gxr_n_f64(const uint32_t *w, int j)\n"
    "{\n"
    "  return gxr_bm(((double)(gxr_w64(w, 0) >> 11) + 0.5) * 1.1102230246251565404e-16,\n"
    "                (double)(gxr_w64(w, 1) >> 11) * 1.1102230246251565404e-16, j & 1);\n"
    "}\n"
    "GXF uint64_t gxr_i32(const uint32_t *w, int j, uint64_t lo, uint64_t range) { return lo + (((uint64_t)w[j] * "
    "range) >> 32); }\n"
    "GXF uint64_t gxr_i64(const uint32_t *w, int j, uint64_t lo, uint64_t range) { return lo + gxr_mulhi64(gxr_w64(w, "
    "j), range); }\n";

/* Per-block body shared by both entries: computes the 4 words of block `blk`. */
/* The round keys depend only on the seed: computed once per thread (in registers),
 * so each Philox round costs two wide multiplies and two three-way XORs.  Measured
 * on an H200 (f32, 2^28): ~99 instructions per 4 numbers with the keys stepped in
 * every round, compute-bound at 83% of the write bandwidth. */
static void gen_round_keys(gx__sbuf *b, const char *acc)
{
    gx__sb_printf(b,
                  "  uint32_t rk[20];\n#pragma unroll\n  for (int r = 0; r < 10; r++) {\n"
                  "    rk[2 * r] = (uint32_t)%sseed + (uint32_t)r * 0x9E3779B9u;\n"
                  "    rk[2 * r + 1] = (uint32_t)(%sseed >> 32) + (uint32_t)r * 0xBB67AE85u;\n  }\n",
                  acc, acc);
}

static void gen_block_head(gx__sbuf *b, const char *acc, int W)
{
    gx__sb_printf(
        b,
        "    const uint64_t blk = %sstart / %d + (uint64_t)bi;\n"
        "    uint32_t w[4];\n"
        "    gxr_philox_rk((uint32_t)blk, (uint32_t)(blk >> 32), (uint32_t)%soffset, (uint32_t)(%soffset >> 32),\n"
        "                  rk, w);\n"
        "    const int64_t g0 = (int64_t)(blk * %d - %sstart);\n",
        acc, W, acc, acc, W, acc);
}

/* st: the cast or function that stores a value (gx__dtype_store: halves round). */
static void gen_rng_source(gx__sbuf *b, bool cuda, const char *ctype, const char *st, size_t esz, int W,
                           const char *val)
{
    gx__sb_puts(b, lam_prelude(cuda ? GX__TARGET_CUDA : GX__TARGET_C));
    gx__sb_puts(b, "\n#line 1 \"gx-rand\"\n");
    gx__sb_puts(b, rng_code);
    if (!cuda) {
        /* Blocks in groups of 16: the generator loop runs over the group with no
         * stores in between, so the compiler vectorises it across blocks. */
        gx__sb_printf(b,
                      "void gx_rng(const void *ap, int64_t begin, int64_t end, int thread)\n{\n"
                      "  const gxr_args *a = (const gxr_args *)ap;\n  (void)thread;\n"
                      "  %s *restrict o = (%s *)a->p;\n  const int64_t n = a->n;\n"
                      "  const uint64_t b0 = a->start / %d;\n"
                      "  const uint32_t o0 = (uint32_t)a->offset, o1 = (uint32_t)(a->offset >> 32);\n"
                      "  const uint32_t k0 = (uint32_t)a->seed, k1 = (uint32_t)(a->seed >> 32);\n"
                      "  for (int64_t g = begin; g < end; g += 16) {\n"
                      "    uint32_t W[4][16];\n"
                      "    for (int q = 0; q < 16; q++) {\n"
                      "      const uint64_t blk = b0 + (uint64_t)(g + q);\n"
                      "      uint32_t w[4];\n"
                      "      gxr_philox((uint32_t)blk, (uint32_t)(blk >> 32), o0, o1, k0, k1, w);\n"
                      "      W[0][q] = w[0]; W[1][q] = w[1]; W[2][q] = w[2]; W[3][q] = w[3];\n"
                      "    }\n"
                      "    const int cnt = end - g < 16 ? (int)(end - g) : 16;\n"
                      "    for (int q = 0; q < cnt; q++) {\n"
                      "      const uint32_t w[4] = {W[0][q], W[1][q], W[2][q], W[3][q]};\n"
                      "      const uint64_t blk = b0 + (uint64_t)(g + q);\n"
                      "      const int64_t g0 = (int64_t)(blk * %d - a->start);\n",
                      ctype, ctype, W, W);
        gx__sb_printf(
            b,
            "      if (g0 >= 0 && g0 + %d <= n) {\n        for (int j = 0; j < %d; j++) o[g0 + j] = %s(%s);\n"
            "        continue;\n      }\n"
            "      for (int j = 0; j < %d; j++)\n        if (g0 + j >= 0 && g0 + j < n) o[g0 + j] = %s(%s);\n"
            "    }\n  }\n}\n",
            W, W, st, val, W, st, val);
        return;
    }
    /* 16 bytes is the widest single store; a 32-byte block becomes two. */
    int align = W * (int)esz > 16 ? 16 : W * (int)esz;
    gx__sb_printf(b, "struct __align__(%d) gxr_vec { %s e[%d]; };\n", align, ctype, W);
    gx__sb_printf(b,
                  "extern \"C\" __global__ void gx_rng(const gxr_args a)\n{\n  GX_PDL_ENTER();\n"
                  "  %s *o = (%s *)a.p;\n  const int64_t n = a.n;\n"
                  "  const int64_t nth = (int64_t)gridDim.x * blockDim.x;\n",
                  ctype, ctype);
    gen_round_keys(b, "a.");
    gx__sb_puts(b,
                "  for (int64_t bi = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; bi < a.nblocks; bi += nth) {\n");
    gen_block_head(b, "a.", W);
    gx__sb_printf(
        b,
        "    if (a.fast && g0 >= 0 && g0 + %d <= n) {\n      gxr_vec v;\n"
        "#pragma unroll\n      for (int j = 0; j < %d; j++) v.e[j] = %s(%s);\n"
        "      *(gxr_vec *)(o + g0) = v;\n      continue;\n    }\n"
        "    for (int j = 0; j < %d; j++)\n      if (g0 + j >= 0 && g0 + j < n) o[g0 + j] = %s(%s);\n  }\n}\n",
        W, W, st, val, W, st, val);
}

/* What one call generates: the kernel's element type, W and value expression. */
typedef struct rng_plan {
    int W;
    const char *fn; /* gxr_* value function */
    bool ints;      /* takes lo and range */
} rng_plan;

static gx_status rng_choose(rng_kind kind, gx_dtype t, uint64_t range, rng_plan *p, const char *what)
{
    if (kind != RNG_INT) {
        if (t != GX_F32 && t != GX_F64 && !gx__dtype_is_half(t))
            return gx__err(GX_ERR_DTYPE,
                           "%s: out has dtype %s; it fills f16, bf16, f32 or f64 arrays (use gx_rand_int for "
                           "integers)",
                           what, gx_dtype_name(t));
        bool f64 = t == GX_F64;
        p->W = f64 ? 2 : 4; /* halves: the f32 words and mappings */
        if (kind == RNG_NORMAL)
            p->fn = f64 ? "gxr_n_f64" : "gxr_n_f32"; /* halves: the f32 value, rounded */
        else
            p->fn = f64 ? "gxr_u01_f64" : t == GX_F16 ? "gxr_u01_h11" : t == GX_BF16 ? "gxr_u01_h8" : "gxr_u01_f32";
        p->ints = false;
        return GX_OK;
    }
    if (!gx__dtype_is_int(t))
        return gx__err(GX_ERR_DTYPE,
                       "%s: out has dtype %s; it fills integer arrays (i8..i64, u8..u64; use gx_rand for floats)", what,
                       gx_dtype_name(t));
    bool small = range != 0 && range <= ((uint64_t)1 << 32);
    p->W = small ? 4 : 2;
    p->fn = small ? "gxr_i32" : "gxr_i64";
    p->ints = true;
    return GX_OK;
}

static gx_status rng_launch(gx_ctx *ctx, rng_args *args, const gx__kernel *k)
{
    int64_t block = k->block > 0 ? k->block : 256;
    int64_t want = (args->nblocks + block - 1) / block;
    /* GX_RNG_WAVES (experiments): resident-block waves before threads stride. */
    int waves = gx__knob_int("GX_RNG_WAVES", 1, 1, 64);
    int64_t full = k->min_grid > 0 ? (int64_t)k->min_grid * waves : 65535;
    return gx__launch_1d(ctx, k, args, sizeof *args, args->nblocks, 16, want < full ? want : full, block);
}

static gx_status rng_source(bool cuda, const rng_plan *p, gx_dtype t, gx__sbuf *src)
{
    char val[128];
    const char *acc = cuda ? "a." : "a->";
    if (p->ints)
        snprintf(val, sizeof val, "%s(w, j, %slo, %srange)", p->fn, acc, acc);
    else
        snprintf(val, sizeof val, "%s(w, j)", p->fn);
    gen_rng_source(src, cuda, gx__dtype_ctype(t), gx__dtype_store(t), gx_dtype_size(t), p->W, val);
    if (src->oom)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory generating the random-number kernel");
    return GX_OK;
}

gx_status linalg_rand_source(bool cuda, int kind, gx_dtype t, uint64_t range, gx__sbuf *out)
{
    rng_plan p;
    GX__CHECK(rng_choose((rng_kind)kind, t, range, &p, "linalg_rand_source"));
    return rng_source(cuda, &p, t, out);
}

/* Generates into a dense array (the caller copies into views). */
static gx_status rng_dense(gx_array *out, rng_kind kind, const rng_plan *p, uint64_t lo, uint64_t range, gx_rng rng)
{
    gx_ctx *ctx = out->ctx;
    size_t esz = gx_dtype_size(out->dtype);
    gx__sbuf src = {0};
    gx_status s0 = rng_source(gx__target_is_cuda(ctx), p, out->dtype, &src);
    if (s0 != GX_OK) {
        gx__sb_free(&src);
        return s0;
    }
    gx__kernel k;
    const char *label = kind == RNG_UNIFORM ? "gx_rand" : kind == RNG_NORMAL ? "gx_randn" : "gx_rand_int";
    gx_status s = gx__kernel_get(ctx, src.p, label, "gx_rng", &k);
    gx__sb_free(&src);
    if (s != GX_OK)
        return s;
    rng_args a;
    memset(&a, 0, sizeof a);
    a.p = (uint64_t)(uintptr_t)gx__array_ptr(out);
    a.n = out->size;
    a.seed = rng.seed, a.offset = rng.offset, a.start = rng.start;
    a.lo = lo, a.range = range;
    uint64_t first = rng.start / (uint64_t)p->W, last = (rng.start + (uint64_t)out->size - 1) / (uint64_t)p->W;
    a.nblocks = (int64_t)(last - first + 1);
    size_t align = (size_t)p->W * esz > 16 ? 16 : (size_t)p->W * esz;
    a.fast = rng.start % (uint64_t)p->W == 0 && a.p % align == 0;
    return rng_launch(ctx, &a, &k);
}

static gx_status rng_fill(gx_array *out, rng_kind kind, uint64_t lo, uint64_t range, gx_rng rng, const char *what)
{
    GX__CHECK(gx__array_check(out, what));
    rng_plan p;
    GX__CHECK(gx__array_writable(out, what));
    GX__CHECK(rng_choose(kind, out->dtype, range, &p, what));
    if (out->size == 0)
        return GX_OK;
    if ((uint64_t)out->size - 1 > UINT64_MAX - rng.start)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: start %llu + %lld elements runs past the end of the stream (2^64)",
                       what, (unsigned long long)rng.start, (long long)out->size);
    gx_ctx *ctx = out->ctx;
    gx__lock(ctx);
    gx_status s;
    if (gx__array_contiguous(out)) {
        s = rng_dense(out, kind, &p, lo, range, rng);
    } else {
        gx_array *tmp = NULL;
        s = gx__array_new(ctx, out->dtype, out->ndim, out->shape, &tmp);
        if (s == GX_OK)
            s = rng_dense(tmp, kind, &p, lo, range, rng);
        if (s == GX_OK)
            s = gx_array_copy_into(tmp, out);
        gx_array_release(tmp);
    }
    gx__unlock(ctx);
    return s;
}

gx_status gx_rand_into(gx_rng rng, gx_array *out) { return rng_fill(out, RNG_UNIFORM, 0, 0, rng, "gx_rand_into"); }
gx_status gx_randn_into(gx_rng rng, gx_array *out) { return rng_fill(out, RNG_NORMAL, 0, 0, rng, "gx_randn_into"); }

/* A new array filled by fill(rng, array) (the allocating forms). */
static gx_status rng_new(gx_ctx *ctx, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out, const char *what)
{
    GX__ARG(out, "%s: out must not be NULL (it receives the new array)", what);
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    return gx_array_empty(ctx, dtype, ndim, shape, out);
}

static gx_status rng_done(gx_status s, gx_array **out)
{
    if (s != GX_OK) {
        gx_array_release(*out);
        *out = NULL;
    }
    return s;
}

gx_status gx_rand(gx_ctx *ctx, gx_rng rng, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out)
{
    GX__CHECK(rng_new(ctx, dtype, ndim, shape, out, "gx_rand"));
    return rng_done(rng_fill(*out, RNG_UNIFORM, 0, 0, rng, "gx_rand"), out);
}

gx_status gx_randn(gx_ctx *ctx, gx_rng rng, gx_dtype dtype, int ndim, const int64_t *shape, gx_array **out)
{
    GX__CHECK(rng_new(ctx, dtype, ndim, shape, out, "gx_randn"));
    return rng_done(rng_fill(*out, RNG_NORMAL, 0, 0, rng, "gx_randn"), out);
}

/* The dtype's range as int64 bounds (u64 above INT64_MAX cannot be asked for). */
static void int_limits(gx_dtype t, int64_t *mn, int64_t *mx)
{
    switch (t) {
    case GX_I8: *mn = INT8_MIN, *mx = INT8_MAX; break;
    case GX_I16: *mn = INT16_MIN, *mx = INT16_MAX; break;
    case GX_I32: *mn = INT32_MIN, *mx = INT32_MAX; break;
    case GX_U8: *mn = 0, *mx = UINT8_MAX; break;
    case GX_U16: *mn = 0, *mx = UINT16_MAX; break;
    case GX_U32: *mn = 0, *mx = UINT32_MAX; break;
    case GX_U64: *mn = 0, *mx = INT64_MAX; break;
    default: *mn = INT64_MIN, *mx = INT64_MAX; break;
    }
}

gx_status gx_rand_int_into(gx_rng rng, int64_t lo, int64_t hi, gx_array *out)
{
    GX__CHECK(gx__array_check(out, "gx_rand_int"));
    if (lo >= hi)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_rand_int: the range [%lld, %lld) is empty; lo must be < hi",
                       (long long)lo, (long long)hi);
    int64_t mn, mx;
    int_limits(out->dtype, &mn, &mx);
    if (gx__dtype_is_int(out->dtype) && (lo < mn || hi - 1 > mx))
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "gx_rand_int: the range [%lld, %lld) does not fit dtype %s ([%lld, %lld])", (long long)lo,
                       (long long)hi, gx_dtype_name(out->dtype), (long long)mn, (long long)mx);
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    return rng_fill(out, RNG_INT, (uint64_t)lo, range, rng, "gx_rand_int");
}

gx_status gx_rand_int(gx_ctx *ctx, gx_rng rng, int64_t lo, int64_t hi, gx_dtype dtype, int ndim, const int64_t *shape,
                      gx_array **out)
{
    GX__CHECK(rng_new(ctx, dtype, ndim, shape, out, "gx_rand_int"));
    return rng_done(gx_rand_int_into(rng, lo, hi, *out), out);
}
