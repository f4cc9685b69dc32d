/* reduce_ladder.c -- summing 2^20 floats, one rung at a time (the CUDA.jl chapter's table).
 *
 *   single thread       one GPU thread walks the whole array: no parallelism at all
 *   atomics             every thread atomically adds its element to one counter: they queue
 *   block tree, global  each block halves its slice in place in global memory, then one atomic
 *   shared memory       the same tree in the block's shared memory (and the input untouched)
 *   warp shuffles       registers: threads of a warp add each other's values directly
 *   gx_sum              gx's reduction (several loads in flight, no float atomics: deterministic)
 *   CPU                 a plain C loop on the host
 *
 * Every row is checked against a double-precision host sum; float sums in different
 * orders differ by rounding, so the tolerance grows with sqrt(n). */
#include "common.h"

/* Each kernel adds its part into out[0], which the host zeroes before every run. */
static const char *ladder_src =
    "#include <gx/device.h>\n"
    "#define BLOCK 512   /* threads per block for the tree kernels (host passes the same) */\n"
    "\n"
    "extern \"C\" __global__ void sum_single_thread(const float *a, float *out, int64_t n)\n"
    "{\n"
    "    float s = 0.0f;\n"
    "    for (int64_t i = 0; i < n; i++)\n"
    "        s += a[i];\n"
    "    out[0] = s;\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void sum_atomic(const float *a, float *out, int64_t n)\n"
    "{\n"
    "    int64_t i = gx_global_id();\n"
    "    if (i < n)\n"
    "        atomicAdd(out, a[i]);   /* n atomics on ONE address: serialised in L2 */\n"
    "}\n"
    "\n"
    "/* Block b owns a[2*BLOCK*b ...], 2*BLOCK elements, and overwrites them (run it on a copy). */\n"
    "extern \"C\" __global__ void sum_tree_global(float *a, float *out, int64_t n)\n"
    "{\n"
    "    int64_t base = 2 * (int64_t)blockIdx.x * BLOCK;\n"
    "    unsigned t = threadIdx.x;\n"
    "    for (unsigned d = 1; d < 2 * BLOCK; d *= 2) {\n"
    "        unsigned i = 2 * d * t;   /* left element of this thread's pair at this level */\n"
    "        if (i + d < 2 * BLOCK && base + i + d < n)\n"
    "            a[base + i] += a[base + i + d];\n"
    "        __syncthreads();          /* the next level reads what this level wrote */\n"
    "    }\n"
    "    if (t == 0)\n"
    "        atomicAdd(out, a[base]);\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void sum_tree_shared(const float *a, float *out, int64_t n)\n"
    "{\n"
    "    __shared__ float s[2 * BLOCK];\n"
    "    int64_t base = 2 * (int64_t)blockIdx.x * BLOCK;\n"
    "    unsigned t = threadIdx.x;\n"
    "    s[t] = base + t < n ? a[base + t] : 0.0f;   /* 0 pads the last block */\n"
    "    s[t + BLOCK] = base + t + BLOCK < n ? a[base + t + BLOCK] : 0.0f;\n"
    "    /* Halve with contiguous active threads: whole warps retire, no bank conflicts. */\n"
    "    for (unsigned d = BLOCK; d > 0; d /= 2) {\n"
    "        __syncthreads();          /* the previous level (or the loads) must be done */\n"
    "        if (t < d)\n"
    "            s[t] += s[t + d];\n"
    "    }\n"
    "    if (t == 0)\n"
    "        atomicAdd(out, s[0]);\n"
    "}\n"
    "\n"
    "/* Lane 0 ends with the sum of the warp's 32 values: 5 steps, no memory traffic. */\n"
    "static __device__ float warp_sum(float v)\n"
    "{\n"
    "    for (int o = 16; o > 0; o /= 2)\n"
    "        v += __shfl_down_sync(0xffffffffu, v, o);\n"
    "    return v;\n"
    "}\n"
    "\n"
    "/* Any grid: each thread first sums a strided slice in a register (a grid-stride\n"
    " * loop), then warps and the block combine.  blockDim.x must be a multiple of 32. */\n"
    "extern \"C\" __global__ void sum_warp_shuffle(const float *a, float *out, int64_t n)\n"
    "{\n"
    "    __shared__ float part[32];\n"
    "    float v = 0.0f;\n"
    "    GX_FOR_EACH(i, n)\n"
    "        v += a[i];\n"
    "    v = warp_sum(v);\n"
    "    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;\n"
    "    if (lane == 0)\n"
    "        part[warp] = v;\n"
    "    __syncthreads();              /* every warp's partial is in part[] */\n"
    "    if (warp == 0) {\n"
    "        v = lane < (int)blockDim.x / 32 ? part[lane] : 0.0f;\n"
    "        v = warp_sum(v);\n"
    "        if (lane == 0)\n"
    "            atomicAdd(out, v);\n"
    "    }\n"
    "}\n";

enum { LADDER_BLOCK = 512 };

typedef struct ladder {
    gx_ctx *ctx;
    gx_array *x, *scratch, *out;
    int64_t n;
    double want, tol; /* host sum in double, allowed difference */
    int rc;
} ladder;

static void ladder_row(ladder *L, const char *name, double us, double got)
{
    double gbs = (double)ex_fbytes(L->n) / (us * 1e3);
    L->rc |= ex_verdict(fabs(got - L->want) <= L->tol, name, "%12.1f us %8.1f GB/s   sum %.6g", us, gbs, got);
}

/* Runs one kernel `reps` times (each from a zeroed counter; the tree in global memory
 * also from a fresh copy of x) and keeps the fastest, like the chapter's "min time". */
static gx_status ladder_kernel(ladder *L, gx_kernel *k, const gx_launch_cfg *cfg, int in_place, int reps,
                               double *best_us, double *got)
{
    gx_karg args[] = {GX_KARG_ARRAY(in_place ? L->scratch : L->x), GX_KARG_ARRAY(L->out), GX_KARG_I64(L->n)};
    ex_timer t;
    gx_status s = ex_timer_make(L->ctx, &t);
    *best_us = INFINITY;
    for (int r = 0; r < reps && s == GX_OK; r++) {
        float ms = 0, v = 0;
        s = gx_array_fill_f64(L->out, 0);
        if (s == GX_OK && in_place)
            s = gx_array_copy_into(L->x, L->scratch);
        if (s == GX_OK)
            s = gx_event_record(t.start);
        if (s == GX_OK)
            s = gx_kernel_launch(k, cfg, 3, args);
        if (s == GX_OK)
            s = gx_event_record(t.stop);
        if (s == GX_OK)
            s = gx_event_elapsed_ms(t.start, t.stop, &ms);
        if (s == GX_OK)
            s = gx_array_to_host(L->out, &v, sizeof v);
        *best_us = fmin(*best_us, ms * 1e3);
        *got = v;
    }
    ex_timer_free(&t);
    return s;
}

/* The five hand-written rungs. */
static int ladder_gpu_rows(ladder *L, int quick)
{
    static const struct {
        const char *entry, *name;
        int kind;
    } rungs[] = {
        {"sum_single_thread", "single thread", 0},
        {"sum_atomic", "atomics", 1},
        {"sum_tree_global", "block tree in global memory", 2},
        {"sum_tree_shared", "block tree in shared memory", 3},
        {"sum_warp_shuffle", "warp shuffles", 4},
    };
    int rc = EX_PASS;
    for (size_t r = 0; r < sizeof rungs / sizeof rungs[0]; r++) {
        gx_kernel *k = NULL;
        gx_launch_cfg cfg = {.grid = {1}, .block = {1}};
        unsigned fill = 1;
        double us = 0, got = 0;
        int64_t pairs = (L->n + 2 * LADDER_BLOCK - 1) / (2 * LADDER_BLOCK);
        EX_TRY("compile", gx_kernel_compile(L->ctx, ladder_src, rungs[r].entry, NULL, &k));
        if (rungs[r].kind == 1) {
            cfg = (gx_launch_cfg){.grid = {(unsigned)((L->n + 1023) / 1024)}, .block = {1024}};
        } else if (rungs[r].kind == 2 || rungs[r].kind == 3) {
            cfg = (gx_launch_cfg){.grid = {(unsigned)(pairs > 0 ? pairs : 1)}, .block = {LADDER_BLOCK}};
        } else if (rungs[r].kind == 4) {
            /* The occupancy API's block, and just enough blocks to fill the GPU. */
            EX_TRY("suggest", gx_kernel_suggest(k, L->n, 0, &cfg, &fill));
            if (cfg.block[0] % 32)
                cfg.block[0] = 256;
            cfg.grid[0] = fill;
        }
        int reps = rungs[r].kind == 0 ? (quick ? 1 : 2) : 10;
        EX_TRY(rungs[r].entry, ladder_kernel(L, k, &cfg, rungs[r].kind == 2, reps, &us, &got));
        ladder_row(L, rungs[r].name, us, got);
    out:
        gx_kernel_destroy(k);
        if (rc != EX_PASS)
            return rc;
    }
    return rc;
}

/* gx's own reduction and the host loop; these rows run on every backend. */
static int ladder_common_rows(ladder *L, const float *h)
{
    int rc = EX_PASS;
    gx_scalar s;
    double best = INFINITY;
    /* Timed like the kernel rows: device time between two events, the result left
     * in a device array (gx_reduce_to makes it, gx_reduce_into refills it); the value
     * is then read once with gx_sum. */
    gx_array *dev = NULL;
    ex_timer tm;
    EX_TRY("gx_event_create", ex_timer_make(L->ctx, &tm));
    EX_TRY("gx_reduce_to", gx_reduce_to(L->ctx, "+", L->x, NULL, &dev)); /* warm-up: compiles or loads */
    for (int r = 0; r < 10; r++) {
        float ms = 0;
        EX_TRY("gx_event_record", gx_event_record(tm.start));
        EX_TRY("gx_reduce_into", gx_reduce_into(L->ctx, "+", L->x, NULL, dev));
        EX_TRY("gx_event_record", gx_event_record(tm.stop));
        EX_TRY("gx_event_elapsed_ms", gx_event_elapsed_ms(tm.start, tm.stop, &ms));
        best = fmin(best, ms * 1e3);
    }
    ex_timer_free(&tm);
    gx_array_release(dev);
    EX_TRY("gx_sum", gx_sum(L->x, &s));
    ladder_row(L, "gx_reduce (gx_sum's kernel)", best, gx_scalar_to_f64(s));
    float cpu = 0;
    best = INFINITY;
    for (int r = 0; r < 10; r++) {
        double t0 = ex_now();
        float acc[8] = {0}; /* 8 independent sums: the compiler can vectorise */
        int64_t i = 0;
        for (; i + 8 <= L->n; i += 8)
            for (int l = 0; l < 8; l++)
                acc[l] += h[i + l];
        for (; i < L->n; i++)
            acc[0] += h[i];
        cpu = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        best = fmin(best, (ex_now() - t0) * 1e6);
    }
    ladder_row(L, "CPU (plain C loop, one core)", best, cpu);
out:
    return rc;
}

int example_reduce_ladder(gx_ctx *ctx, int quick)
{
    ladder L = {.ctx = ctx, .n = quick ? (1 << 16) + 5 : 1 << 20};
    int rc = EX_PASS, gpu = ex_on_gpu(ctx);
    uint64_t seed = ex_seed();
    float *h = malloc(ex_fbytes(L.n));
    if (!h)
        return ex_skip("reduce ladder: not enough host memory");
    ex_fill_uniform(h, L.n, 0, 1, &seed); /* like CUDA.rand: [0, 1) */
    double sum = 0, abs_sum = 0;
    for (int64_t i = 0; i < L.n; i++)
        sum += h[i], abs_sum += fabs(h[i]);
    L.want = sum;
    /* Rounding errors of float sums behave like a random walk: ~ sqrt(n) * eps * sum|x|;
     * 8x that leaves room for unlucky orders, yet a lost block of 1024 shows. */
    L.tol = 8.0 * sqrt((double)L.n) * 0x1p-24 * abs_sum;
    EX_TRY("upload", gx_array_from_host(ctx, GX_F32, 1, &L.n, h, &L.x));
    EX_TRY("scratch", gx_array_similar(L.x, &L.scratch));
    EX_TRY("counter", gx_array_zeros(ctx, GX_F32, 0, NULL, &L.out));
    printf("  n = %lld floats (%.1f MiB), host sum %.6g; minimum of several runs\n", (long long)L.n,
           (double)ex_fbytes(L.n) / (1 << 20), L.want);
    rc = ladder_gpu_rows(&L, quick); /* CUDA C kernels: on the CPU backend too */
    if (rc == EX_PASS)
        rc = ladder_common_rows(&L, h);
    rc |= L.rc;
    gx_device_info d;
    if (gpu && gx_device_info_get(ctx, &d) == GX_OK && d.l2_bytes > ex_fbytes(L.n))
        printf("  note: %.0f MiB fit in the %.0f MiB L2 cache, so the best rows can beat the "
               "memory's %.0f GB/s -- the chapter's \"twice the theoretical limit\"\n",
               (double)ex_fbytes(L.n) / (1 << 20), (double)d.l2_bytes / (1 << 20), d.mem_bandwidth_gbs);
out:
    gx_array_release(L.x);
    gx_array_release(L.scratch);
    gx_array_release(L.out);
    free(h);
    return rc;
}

#ifndef GX_TOUR
int main(int argc, char **argv) { return ex_main(argc, argv, "reduce_ladder", example_reduce_ladder); }
#endif
