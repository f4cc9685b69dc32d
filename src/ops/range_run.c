/* range_run.c -- launching the generated pipeline kernels (see range_priv.h).
 * Scratch memory (tile status slots, per-block partials) is 64 bytes of counters,
 * then one slot per tile / part: from the pool for each run on the CPU; on CUDA the
 * stream's own (rg_scratch for reductions, rg_lookback_mem's pair for look-back). */
#include "ops/range_priv.h"
#include "ops/reduce_gen.h"
#include "ops/userfns.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

static bool run_cuda(gx_ctx *ctx) { return gx__target_is_cuda(ctx); }

/* gx_slot in range_gen.c: {acc v; u32 flag, has; acc inc}, 8 bytes per accumulator member. */
static size_t slot_acc_bytes(const rp_kspec *ks) { return 8 * (size_t)(ks->term == RP_T_COLLECT ? 1 : ks->nacc); }
static size_t slot_bytes(const rp_kspec *ks) { return 2 * slot_acc_bytes(ks) + 8; }

/* The two entries of the module for (sg, ks) (e1 NULL: only e2): from the pipeline's memo or the
 * context's when they ran this body before (rp_body_key), else generated and fetched
 * through the kernel cache. */
static gx_status get_kernels(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, const char *e1, const char *e2,
                             gx__kernel *k1, gx__kernel *k2)
{
    gx_pipe *p = (gx_pipe *)sg->pipe; /* the terminal holds the context lock */
    gx__userfns *u = gx__userfns_of(ctx);
    gx__kernel pair[2];
    gx__bkey bk;
    bk.len = 0;
    bk.over = false;
    rp_body_bkey(ctx, sg, ks, e1, e2, &bk);
    if (gx__memo_bget(ctx, &bk, pair, sizeof pair)) {
        *k1 = pair[0];
        *k2 = pair[1];
        ctx->cstats.mem_hits++;
        return GX_OK;
    }
    gx__sbuf key = {0};
    gx__sb_printf(&key, "%s|%s|%d|%zu\n", e1 ? e1 : "", e2, u ? u->count : 0, u ? u->code.len : 0);
    rp_body_key(ctx, sg, ks, &key);
    gx_status s = key.oom ? gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory for a pipeline's kernel key") : GX_OK;
    for (int i = 0; s == GX_OK && i < RP_MEMO; i++) {
        const rp_memo *m = &p->memo[i];
        if (m->key && strcmp(m->key, key.p) == 0) {
            *k1 = m->k[0];
            *k2 = m->k[1];
            gx__memo_bput(ctx, &bk, m->k, sizeof m->k);
            gx__sb_free(&key);
            return GX_OK;
        }
    }
    /* Another pipeline of this context ran the same body (gx_scan and gx_filter make
     * a new pipeline per call): its kernels are in the context's memo. */
    bool hit = s == GX_OK && !key.oom && gx__memo_get(ctx, key.p, pair, sizeof pair);
    gx__sbuf src = {0};
    if (hit) {
        *k1 = pair[0];
        *k2 = pair[1];
        ctx->cstats.mem_hits++;
    }
    if (s == GX_OK && !hit)
        s = rp_ops_compile(p);
    if (s == GX_OK && !hit)
        s = rp_generate_head(ctx, &src);
    if (s == GX_OK && !hit)
        s = rp_generate_body(ctx, sg, ks, &src);
    if (!e1)
        memset(k1, 0, sizeof *k1);
    if (s == GX_OK && !hit && e1)
        s = gx__kernel_get(ctx, src.p, "gx_pipe", e1, k1);
    if (s == GX_OK && !hit)
        s = gx__kernel_get(ctx, src.p, "gx_pipe", e2, k2);
    if (s == GX_OK && !hit) { /* the CPU grain weighs each element by its stages' cost */
        int w = 1;
        for (int i = 0; i < sg->nops; i++)
            w += sg->ops[i]->lam ? lam_cost(sg->ops[i]->lam) - 1 : 0;
        k1->cpu_work = k2->cpu_work = w > 1 ? w : 0;
    }
    if (s == GX_OK && !hit && !key.oom) {
        pair[0] = *k1;
        pair[1] = *k2;
        gx__memo_put(ctx, key.p, pair, sizeof pair);
    }
    gx__sb_free(&src);
    if (s != GX_OK) {
        gx__sb_free(&key);
        return s;
    }
    pair[0] = *k1;
    pair[1] = *k2;
    gx__memo_bput(ctx, &bk, pair, sizeof pair);
    rp_memo *m = &p->memo[p->memo_next];
    p->memo_next = (p->memo_next + 1) % RP_MEMO;
    free(m->key);
    m->key = key.p; /* owned by the memo now */
    m->k[0] = *k1;
    m->k[1] = *k2;
    return GX_OK;
}

static gx_status launch_b(gx_ctx *ctx, const gx__kernel *k, const rp_args *a, int64_t cpu_n, int64_t grid, int block)
{
    return gx__launch_1d(ctx, k, a, sizeof *a, cpu_n, 64, grid, block);
}

static gx_status launch(gx_ctx *ctx, const gx__kernel *k, const rp_args *a, int64_t cpu_n, int64_t grid)
{
    return launch_b(ctx, k, a, cpu_n, grid, RP_BLOCK);
}

/* A single-pass look-back kernel on CUDA, one block per tile: status memory from the
 * stream's pair (rg_lookback_mem), a->scratch on return. */
static gx_status lookback_launch(gx_ctx *ctx, const gx__kernel *k, rp_args *a, int64_t n, size_t bytes, int block)
{
    void *use = NULL, *clr = NULL, *par = NULL;
    size_t nclr = 0;
    GX__CHECK(rg_lookback_mem(ctx, bytes, &use, &clr, &nclr, &par));
    a->scratch = (uint64_t)(uintptr_t)use;
    a->clr = (uint64_t)(uintptr_t)clr;
    a->nclr = (int64_t)(nclr / 8);
    a->par = (uint64_t)(uintptr_t)par;
    gx_status s = launch_b(ctx, k, a, n, a->ntiles, block);
    if (s != GX_OK)
        rg_lookback_failed(ctx);
    return s;
}

/* Pool memory for the scratch area, zeroed (the CPU kernels rely on empty parts);
 * counted as scratch while the call holds it.  On the CPU backend the block is host
 * memory (its h2d is a memcpy and its launches return when done), so it is cleared in
 * place: a calloc'd staging copy and an h2d were 6% of a warm gx_filter of 1024 f32
 * (2-core VM, perf). */
static gx_status scratch_new(gx_ctx *ctx, size_t bytes, void **p)
{
    GX__CHECK(gx__scratch_alloc(ctx, bytes, p));
    if (!run_cuda(ctx))
        memset(*p, 0, bytes);
    return GX_OK; /* CUDA: every block writes the part that is read */
}

static int64_t cpu_parts(gx_ctx *ctx) { return gx__ctx_workers(ctx); }

/* n bytes of a kernel's result after the launch: from the mapped host copy `host`
 * once the stream is done, or (host NULL) copied from device address `dev`. */
static gx_status read_result(gx_ctx *ctx, const volatile void *host, const void *dev, void *dst, size_t n)
{
    if (!host)
        return ctx->be.iface->mem.d2h(&ctx->be, dst, dev, n);
    GX__CHECK(ctx->be.iface->stream.sync(&ctx->be));
    memcpy(dst, (const void *)host, n);
    return GX_OK;
}

/* The result slot's accumulator and has flag into result / *empty. */
static void reduce_result(const rp_kspec *ks, const uint8_t *slot, void *result, bool *empty)
{
    size_t ab = slot_acc_bytes(ks);
    uint32_t has;
    memcpy(&has, slot + ab + 4, 4);
    *empty = has == 0;
    memcpy(result, slot, ab);
}

/* CUDA: one launch; per-block slots and the counter from the stream's scratch
 * (rg_scratch), the result slot into mapped host memory where there is some. */
static gx_status reduce_cuda(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, rp_args *a, void *result, bool *empty)
{
    gx__kernel none, kr;
    GX__CHECK(get_kernels(ctx, sg, ks, NULL, "gx_rp_red", &none, &kr));
    int K = sg->src == RP_SRC_ARRAYS && sg->contig ? sg->vec : 1;
    /* Generators read nothing: at least 64 elements per thread, so a small run has
     * fewer blocks to count in and combine (iota | count at 2^21 on an H200: kernel
     * 10.8 -> 7.8 us; 2^29 unchanged, the grid is full there either way). */
    int64_t per = sg->src == RP_SRC_ARRAYS ? K : 64;
    int64_t want = (sg->n / per + RP_BLOCK - 1) / RP_BLOCK, full = kr.min_grid > 0 ? kr.min_grid : 1024;
    int64_t grid = want < full ? want : full;
    grid = grid > 0 ? grid : 1;
    a->nparts = grid;
    size_t sb = slot_bytes(ks), ab = slot_acc_bytes(ks);
    uint64_t part = 0, cnt = 0;
    GX__CHECK(rg_scratch(ctx, 64 + (size_t)(grid + 1) * sb, 1, &part, &cnt));
    a->scratch = part;
    a->cnt = cnt;
    uint8_t slot[2 * 16 + 8];
    if (sb > sizeof slot)
        return gx__err(GX_ERR_INTERNAL, "pipeline reduce: %zu-byte result slot", sb);
    void *hres = NULL;
    if (rg_host_result(ctx, &hres, &a->hres))                           /* else hres stays NULL */
        *(volatile uint32_t *)((uint8_t *)hres + ab + 4) = 0xFFFFFFFFu; /* has: the kernel writes 0 or 1 */
    GX__CHECK(launch(ctx, &kr, a, sg->n, grid));
    GX__CHECK(read_result(ctx, hres, (char *)(uintptr_t)part + 64 + (size_t)grid * sb, slot, sb));
    uint32_t has;
    memcpy(&has, slot + ab + 4, 4);
    if (has > 1)
        return gx__err(GX_ERR_INTERNAL, "pipeline reduce: the kernel wrote no result");
    reduce_result(ks, slot, result, empty);
    return GX_OK;
}

static gx_status run_reduce(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, void *result, bool *empty,
                            const bd_args *ba)
{
    rp_args a;
    rp_fill_args(sg, &a);
    a.b = *ba;
    memcpy(a.init, ks->init, sizeof a.init);
    if (run_cuda(ctx))
        return reduce_cuda(ctx, sg, ks, &a, result, empty);
    gx__kernel kr, kf;
    GX__CHECK(get_kernels(ctx, sg, ks, "gx_rp_red", "gx_rp_fin", &kr, &kf));
    a.nparts = cpu_parts(ctx);
    size_t sb = slot_bytes(ks), bytes = 64 + (size_t)(a.nparts + 1) * sb;
    void *scr = NULL;
    GX__CHECK(scratch_new(ctx, bytes, &scr));
    a.scratch = (uint64_t)(uintptr_t)scr;
    gx_status s = GX_OK;
    if (sg->n > 0)
        s = launch(ctx, &kr, &a, sg->n, 1);
    else
        a.nparts = 0;
    if (s == GX_OK)
        s = launch(ctx, &kf, &a, 1, 1);
    uint8_t slot[2 * 16 + 8];
    if (s == GX_OK && sb > sizeof slot)
        s = gx__err(GX_ERR_INTERNAL, "pipeline reduce: %zu-byte result slot", sb);
    if (s == GX_OK)
        s = ctx->be.iface->mem.d2h(&ctx->be, slot, (char *)scr + 64 + (size_t)a.nparts * sb, sb);
    gx__scratch_free(ctx, scr, bytes);
    GX__CHECK(s);
    reduce_result(ks, slot, result, empty);
    return GX_OK;
}

/* The terminal's kernels for the caller's memo front (sg->pipe->cap). */
static void front_record(const rp_seg *sg, const gx__kernel *k1, const gx__kernel *k2, rp_tshape sh)
{
    rp_front *f = sg->pipe->cap;
    if (!f)
        return;
    f->k[0] = *k1;
    f->k[1] = *k2;
    f->sh = sh;
    f->ok = true;
}

/* The scan kernels over a->n elements (a->out[0], a->init set); nacc accumulator
 * members. */
static gx_status scan_go(gx_ctx *ctx, const gx__kernel *k1, const gx__kernel *k2, rp_tshape sh, int nacc, rp_args *a)
{
    bool cuda = run_cuda(ctx);
    int64_t n = a->n, tile = (int64_t)sh.block * sh.items;
    a->ntiles = (n + tile - 1) / tile;
    a->nparts = cuda ? a->ntiles : cpu_parts(ctx) * RP_CPU_CHAINS;
    size_t bytes = 64 + (size_t)(a->nparts + 1) * slot_bytes(&(rp_kspec){.term = RP_T_SCAN, .nacc = nacc});
    if (cuda)
        return lookback_launch(ctx, k2, a, n, bytes, sh.block);
    void *scr = NULL;
    GX__CHECK(scratch_new(ctx, bytes, &scr));
    a->scratch = (uint64_t)(uintptr_t)scr;
    int64_t igrid = (a->ntiles + RP_BLOCK - 1) / RP_BLOCK;
    gx_status s = launch(ctx, k1, a, n, igrid < 1024 ? igrid : 1024);
    if (s == GX_OK)
        s = launch_b(ctx, k2, a, n, a->ntiles, sh.block);
    gx__scratch_free(ctx, scr, bytes);
    return s;
}

static gx_status run_scan(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, gx_array *out, const bd_args *ba)
{
    if (sg->n == 0)
        return GX_OK;
    gx__kernel k1, k2;
    bool cuda = run_cuda(ctx);
    gx_status s =
        get_kernels(ctx, sg, ks, cuda ? NULL : "gx_rp_scan_a", cuda ? "gx_rp_scan" : "gx_rp_scan_b", &k1, &k2);
    GX__CHECK(s);
    rp_args a;
    rp_fill_args(sg, &a);
    a.b = *ba;
    memcpy(a.init, ks->init, sizeof a.init);
    a.out[0] = (uint64_t)(uintptr_t)gx__array_ptr(out);
    rp_tshape sh = rp_tile_shape(ctx, sg, ks);
    front_record(sg, &k1, &k2, sh);
    return scan_go(ctx, &k1, &k2, sh, ks->nacc, &a);
}

/* Outputs: exact on the CPU (counted first); on CUDA allocated at the upper bound n
 * and narrowed to a view of the kept length after the single pass. */
static gx_status collect_outputs(gx_ctx *ctx, int arity, const gx_dtype *dt, int64_t len, gx_array **out)
{
    for (int c = 0; c < arity; c++) {
        gx_status s = gx__array_new(ctx, dt[c], 1, &len, &out[c]);
        if (s != GX_OK) {
            for (int j = 0; j < c; j++) {
                gx_array_release(out[j]);
                out[j] = NULL;
            }
            return s;
        }
    }
    return GX_OK;
}

static gx_status narrow(gx_ctx *ctx, int arity, int64_t total, int64_t cap, gx_array **out)
{
    (void)ctx;
    if (total == cap)
        return GX_OK;
    for (int c = 0; c < arity; c++) {
        gx_slice sl = {0, total, 1};
        gx_array *v = NULL;
        GX__CHECK(gx_array_view(out[c], &sl, &v));
        gx_array_release(out[c]);
        out[c] = v;
    }
    return GX_OK;
}

static gx_status collect_cpu(gx_ctx *ctx, int arity, const gx_dtype *dt, const gx__kernel *kc, const gx__kernel *kw,
                             rp_args *a, void *scr, gx_array **out)
{
    size_t sb = slot_bytes(&(rp_kspec){.term = RP_T_COLLECT});
    GX__CHECK(launch(ctx, kc, a, a->n, 1));
    int64_t parts = a->nparts, total = 0;
    uint8_t *h = malloc((size_t)parts * sb);
    if (!h)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "pipeline collect: out of host memory");
    gx_status s = ctx->be.iface->mem.d2h(&ctx->be, h, (char *)scr + 64, (size_t)parts * sb);
    for (int64_t t = 0; s == GX_OK && t < parts; t++) {
        int64_t c;
        memcpy(&c, h + (size_t)t * sb, 8);
        total += c;
    }
    free(h);
    GX__CHECK(s);
    GX__CHECK(collect_outputs(ctx, arity, dt, total, out));
    for (int c = 0; c < arity; c++)
        a->out[c] = (uint64_t)(uintptr_t)gx__array_ptr(out[c]);
    return total > 0 ? launch(ctx, kw, a, a->n, 1) : GX_OK;
}

static gx_status collect_cuda(gx_ctx *ctx, int arity, const gx_dtype *dt, const gx__kernel *kw, rp_args *a,
                              size_t bytes, rp_tshape sh, gx_array **out)
{
    int64_t n = a->n;
    GX__CHECK(collect_outputs(ctx, arity, dt, n, out));
    for (int c = 0; c < arity; c++)
        a->out[c] = (uint64_t)(uintptr_t)gx__array_ptr(out[c]);
    /* The count straight into host memory: a sync, no copy after the kernel. */
    void *hres = NULL;
    if (rg_host_result(ctx, &hres, &a->hres)) /* else hres stays NULL */
        *(volatile int64_t *)hres = -1;       /* the kernel writes the count */
    gx_status s = lookback_launch(ctx, kw, a, n, bytes, sh.block);
    int64_t total = 0;
    if (s == GX_OK)
        s = read_result(ctx, hres, (char *)(uintptr_t)a->scratch + 8, &total, 8);
    if (s == GX_OK && (total < 0 || total > n))
        s = gx__err(GX_ERR_INTERNAL, "pipeline collect: kernel reported %lld kept of %lld", (long long)total,
                    (long long)n);
    if (s == GX_OK)
        s = narrow(ctx, arity, total, n, out);
    return s;
}

/* The collect kernels over a->n > 0 elements into arity new arrays (released again on
 * failure). */
static gx_status collect_go(gx_ctx *ctx, const gx__kernel *k1, const gx__kernel *k2, rp_tshape sh, int arity,
                            const gx_dtype *dt, rp_args *a, gx_array **out)
{
    bool cuda = run_cuda(ctx);
    int64_t tile = (int64_t)sh.block * sh.items;
    a->ntiles = (a->n + tile - 1) / tile;
    a->nparts = cuda ? a->ntiles : cpu_parts(ctx);
    a->cnt = (uint64_t)a->n; /* collect: the outputs' capacity */
    size_t bytes = 64 + (size_t)(a->nparts + 1) * slot_bytes(&(rp_kspec){.term = RP_T_COLLECT});
    gx_status s;
    if (cuda) {
        s = collect_cuda(ctx, arity, dt, k2, a, bytes, sh, out);
    } else {
        void *scr = NULL;
        GX__CHECK(scratch_new(ctx, bytes, &scr));
        a->scratch = (uint64_t)(uintptr_t)scr;
        s = collect_cpu(ctx, arity, dt, k1, k2, a, scr, out);
        gx__scratch_free(ctx, scr, bytes);
    }
    if (s != GX_OK)
        for (int c = 0; c < arity; c++) {
            gx_array_release(out[c]);
            out[c] = NULL;
        }
    return s;
}

static gx_status run_collect(gx_ctx *ctx, const rp_seg *sg, int nout, gx_array **out, const bd_args *ba)
{
    for (int c = 0; c < nout; c++)
        out[c] = NULL;
    if (sg->n == 0)
        return collect_outputs(ctx, sg->arity, sg->dt, 0, out);
    bool cuda = run_cuda(ctx);
    rp_kspec ks;
    memset(&ks, 0, sizeof ks);
    ks.term = RP_T_COLLECT;
    gx__kernel k1, k2;
    gx_status s = get_kernels(ctx, sg, &ks, cuda ? NULL : "gx_rp_cnt", "gx_rp_coll", &k1, &k2);
    GX__CHECK(s);
    rp_args a;
    rp_fill_args(sg, &a);
    a.b = *ba;
    rp_tshape sh = rp_tile_shape(ctx, sg, &ks);
    front_record(sg, &k1, &k2, sh);
    return collect_go(ctx, &k1, &k2, sh, sg->arity, sg->dt, &a, out);
}

/* The collect kernels into the caller's memory (a->out set) with the count to the
 * device word `count`. */
static gx_status collect_cap_go(gx_ctx *ctx, const gx__kernel *k1, const gx__kernel *k2, rp_tshape sh, rp_args *a,
                                int64_t cap, void *count)
{
    bool cuda = run_cuda(ctx);
    int64_t n = a->n, tile = (int64_t)sh.block * sh.items;
    a->ntiles = (n + tile - 1) / tile;
    a->nparts = cuda ? a->ntiles : cpu_parts(ctx);
    a->cnt = (uint64_t)cap;
    a->hres = (uint64_t)(uintptr_t)count; /* a device word here: the kernels write the count to it */
    size_t bytes = 64 + (size_t)(a->nparts + 1) * slot_bytes(&(rp_kspec){.term = RP_T_COLLECT});
    if (cuda)
        return lookback_launch(ctx, k2, a, n, bytes, sh.block);
    void *scr = NULL;
    GX__CHECK(scratch_new(ctx, bytes, &scr));
    a->scratch = (uint64_t)(uintptr_t)scr;
    gx_status s = launch(ctx, k1, a, n, 1);
    if (s == GX_OK)
        s = launch(ctx, k2, a, n, 1);
    gx__scratch_free(ctx, scr, bytes);
    return s;
}

/* Collect into the caller's arrays (outp[c], cap elements each) with the count to
 * the device word `count`: the same kernels, no host wait (a graph may hold it).  The
 * kernels write ranks below cap only; the count is the true number kept. */
static gx_status run_collect_cap(gx_ctx *ctx, const rp_seg *sg, void *const *outp, int64_t cap, void *count,
                                 const bd_args *ba)
{
    bool cuda = run_cuda(ctx);
    rp_kspec ks;
    memset(&ks, 0, sizeof ks);
    ks.term = RP_T_COLLECT;
    gx__kernel k1, k2;
    GX__CHECK(get_kernels(ctx, sg, &ks, cuda ? NULL : "gx_rp_cnt", "gx_rp_coll", &k1, &k2));
    rp_args a;
    rp_fill_args(sg, &a);
    a.b = *ba;
    rp_tshape sh = rp_tile_shape(ctx, sg, &ks);
    front_record(sg, &k1, &k2, sh);
    for (int c = 0; c < sg->arity; c++)
        a.out[c] = (uint64_t)(uintptr_t)outp[c];
    return collect_cap_go(ctx, &k1, &k2, sh, &a, cap, count);
}

/* ------------------------------------------------------------ bound arrays */

/* Each terminal runs between the pipe's bound arrays' flag and its read-back; an
 * index out of range becomes GX_ERR_INDEX at the element's source index. */
#define RP_BIND_POS "stream position (source index of its segment)"

gx_status rp_run_reduce(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, void *result, bool *empty)
{
    bd_set bs = sg->pipe->bind;
    bd_args ba;
    GX__CHECK(bd_begin(ctx, &bs, &ba));
    return bd_end(ctx, &bs, "pipeline", RP_BIND_POS, run_reduce(ctx, sg, ks, result, empty, &ba));
}

gx_status rp_run_scan(gx_ctx *ctx, const rp_seg *sg, const rp_kspec *ks, gx_array *out)
{
    bd_set bs = sg->pipe->bind;
    bd_args ba;
    GX__CHECK(bd_begin(ctx, &bs, &ba));
    return bd_end(ctx, &bs, "pipeline", RP_BIND_POS, run_scan(ctx, sg, ks, out, &ba));
}

gx_status rp_run_collect_cap(gx_ctx *ctx, const rp_seg *sg, void *const *outp, int64_t cap, void *count)
{
    bd_set bs = sg->pipe->bind;
    bd_args ba;
    GX__CHECK(bd_begin(ctx, &bs, &ba));
    return bd_end(ctx, &bs, "pipeline", RP_BIND_POS, run_collect_cap(ctx, sg, outp, cap, count, &ba));
}

gx_status rp_run_collect(gx_ctx *ctx, const rp_seg *sg, int nout, gx_array **out)
{
    bd_set bs = sg->pipe->bind;
    bd_args ba;
    for (int c = 0; c < nout; c++)
        out[c] = NULL;
    GX__CHECK(bd_begin(ctx, &bs, &ba));
    gx_status s = run_collect(ctx, sg, nout, out, &ba);
    gx_status e = bd_end(ctx, &bs, "pipeline", RP_BIND_POS, s);
    if (s == GX_OK && e != GX_OK) /* the outputs were made, but hold zeros for the failed reads */
        for (int c = 0; c < nout; c++) {
            gx_array_release(out[c]);
            out[c] = NULL;
        }
    return e;
}

/* ------------------------------------------------------------ memo fronts */

/* A front hit (gx_filter, gx_filter_into, gx_scan): the recorded kernels, with none of
 * the pipeline's stages, planning or kernel key; the pipelines these fronts stand for
 * bind no arrays, so there is no bounds flag to read back. */
gx_status rp_front_collect(gx_ctx *ctx, const rp_front *f, rp_args *a, int arity, const gx_dtype *dt, gx_array **out)
{
    for (int c = 0; c < arity; c++)
        out[c] = NULL;
    return collect_go(ctx, &f->k[0], &f->k[1], f->sh, arity, dt, a, out);
}

gx_status rp_front_collect_cap(gx_ctx *ctx, const rp_front *f, rp_args *a, int64_t cap, void *count)
{
    return collect_cap_go(ctx, &f->k[0], &f->k[1], f->sh, a, cap, count);
}

gx_status rp_front_scan(gx_ctx *ctx, const rp_front *f, rp_args *a, gx_array *out)
{
    a->out[0] = (uint64_t)(uintptr_t)gx__array_ptr(out);
    return scan_go(ctx, &f->k[0], &f->k[1], f->sh, 1, a);
}
