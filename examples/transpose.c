/* transpose.c -- out = in^T through shared-memory tiles (the workshop notebook's kernel, fixed).
 *
 * A naive transpose reads rows (coalesced) but writes columns: each warp's 32 stores
 * land in 32 different memory segments.  The tiled kernel reads a 32x32 tile with
 * coalesced loads into shared memory and writes it out transposed, again coalesced.
 *
 * The notebook's version had a race: threads read the tile entries that OTHER threads
 * wrote, with no barrier in between, so some read before the write landed.  The fix
 * is one __syncthreads() between the shared write and the shared read.  The tile is
 * also padded to [32][33]: reading a column of a [32][32] float tile hits one bank 32
 * times (serialised); with 33 columns the 32 reads fall in 32 different banks.
 * (`transpose --racy` runs the unfixed kernel too, to see what it does on your GPU;
 * compute-sanitizer --tool racecheck reports it.) */
#include "common.h"

/* in: rows x cols, out: cols x rows, both row-major.  Blocks of 32 x 8 threads: each
 * thread moves 4 elements of a 32x32 tile (fewer, busier threads hide latency better). */
static const char *transpose_src =
    "#define TILE 32\n"
    "#define ROWS 8\n"
    "extern \"C\" __global__ void transpose_naive(const float *in, float *out, int rows, int cols)\n"
    "{\n"
    "    int x = blockIdx.x * TILE + threadIdx.x;\n"
    "    for (int k = 0; k < TILE; k += ROWS) {\n"
    "        int y = blockIdx.y * TILE + threadIdx.y + k;\n"
    "        if (x < cols && y < rows)\n"
    "            out[(size_t)x * rows + y] = in[(size_t)y * cols + x];   /* strided writes */\n"
    "    }\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void transpose_tiled(const float *in, float *out, int rows, int cols)\n"
    "{\n"
    "    __shared__ float tile[TILE][TILE + 1];   /* +1: no bank conflicts on column reads */\n"
    "    int x = blockIdx.x * TILE + threadIdx.x;\n"
    "    for (int k = 0; k < TILE; k += ROWS) {\n"
    "        int y = blockIdx.y * TILE + threadIdx.y + k;\n"
    "        if (x < cols && y < rows)\n"
    "            tile[threadIdx.y + k][threadIdx.x] = in[(size_t)y * cols + x];\n"
    "    }\n"
    "    __syncthreads();   /* THE fix: the whole tile is written before anyone reads it */\n"
    "    x = blockIdx.y * TILE + threadIdx.x;     /* swap the block's coordinates */\n"
    "    for (int k = 0; k < TILE; k += ROWS) {\n"
    "        int y = blockIdx.x * TILE + threadIdx.y + k;\n"
    "        if (x < rows && y < cols)\n"
    "            out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y + k];\n"
    "    }\n"
    "}\n"
    "\n"
    "/* The notebook's mistake, kept for --racy: no barrier, and an unpadded tile. */\n"
    "extern \"C\" __global__ void transpose_racy(const float *in, float *out, int rows, int cols)\n"
    "{\n"
    "    __shared__ float tile[TILE][TILE];\n"
    "    int x = blockIdx.x * TILE + threadIdx.x;\n"
    "    for (int k = 0; k < TILE; k += ROWS) {\n"
    "        int y = blockIdx.y * TILE + threadIdx.y + k;\n"
    "        if (x < cols && y < rows)\n"
    "            tile[threadIdx.y + k][threadIdx.x] = in[(size_t)y * cols + x];\n"
    "    }\n"
    "    x = blockIdx.y * TILE + threadIdx.x;\n"
    "    for (int k = 0; k < TILE; k += ROWS) {\n"
    "        int y = blockIdx.x * TILE + threadIdx.y + k;\n"
    "        if (x < rows && y < cols)\n"
    "            out[(size_t)y * rows + x] = tile[threadIdx.x][threadIdx.y + k];\n"
    "    }\n"
    "}\n";

enum { TR_TILE = 32, TR_ROWS = 8 };

typedef struct tr {
    gx_ctx *ctx;
    int rows, cols;
    float *hin, *hout;
    gx_array *in, *out;
    double bytes; /* read + written per transpose */
} tr;

static int64_t tr_wrong(const tr *t)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < t->rows; i++)
        for (int64_t j = 0; j < t->cols; j++)
            bad += t->hout[j * t->rows + i] != t->hin[i * t->cols + j];
    return bad;
}

/* Fastest of several runs of one kernel, then an exact check (a transpose only moves bits). */
static int tr_kernel(tr *t, const char *entry, const char *name, int must_pass)
{
    int rc = EX_PASS;
    gx_kernel *k = NULL;
    ex_timer tm = {0};
    double best = INFINITY;
    gx_launch_cfg cfg = {
        .grid = {(unsigned)((t->cols + TR_TILE - 1) / TR_TILE), (unsigned)((t->rows + TR_TILE - 1) / TR_TILE)},
        .block = {TR_TILE, TR_ROWS}};
    gx_karg args[] = {GX_KARG_ARRAY(t->in), GX_KARG_ARRAY(t->out), GX_KARG_I32(t->rows), GX_KARG_I32(t->cols)};
    EX_TRY("compile", gx_kernel_compile(t->ctx, transpose_src, entry, NULL, &k));
    EX_TRY("events", ex_timer_make(t->ctx, &tm));
    EX_TRY("clear", gx_array_fill_f64(t->out, -1)); /* stale results must not pass */
    for (int r = 0; r < 6; r++) {
        float ms = 0;
        EX_TRY("record", gx_event_record(tm.start));
        EX_TRY(entry, gx_kernel_launch(k, &cfg, 4, args));
        EX_TRY("record", gx_event_record(tm.stop));
        EX_TRY("elapsed", gx_event_elapsed_ms(tm.start, tm.stop, &ms));
        if (r > 0)
            best = fmin(best, ms);
    }
    EX_TRY("download", gx_array_to_host(t->out, t->hout, ex_fbytes((int64_t)t->rows * t->cols)));
    int64_t bad = tr_wrong(t);
    if (must_pass)
        rc = ex_verdict(bad == 0, name, "%8.3f ms %8.1f GB/s   %lld wrong", best, t->bytes / (best * 1e6),
                        (long long)bad);
    else /* the racy kernel: whatever it does is the lesson, not a failure */
        printf("  [info] %-34s %8.3f ms   %lld wrong entries this time\n", name, best, (long long)bad);
out:
    ex_timer_free(&tm);
    gx_kernel_destroy(k);
    return rc;
}

/* The yardstick: a plain device-to-device copy of the same bytes. */
static int tr_copy(tr *t)
{
    int rc = EX_PASS;
    gx_array *dst = NULL;
    ex_timer tm = {0};
    double best = INFINITY;
    EX_TRY("similar", gx_array_similar(t->in, &dst));
    EX_TRY("events", ex_timer_make(t->ctx, &tm));
    for (int r = 0; r < 6; r++) {
        float ms = 0;
        EX_TRY("record", gx_event_record(tm.start));
        EX_TRY("copy", gx_array_copy_into(t->in, dst));
        EX_TRY("record", gx_event_record(tm.stop));
        EX_TRY("elapsed", gx_event_elapsed_ms(tm.start, tm.stop, &ms));
        if (r > 0)
            best = fmin(best, ms);
    }
    printf("  [----] %-34s %8.3f ms %8.1f GB/s   (the bound to aim for)\n", "gx_array_copy_into, same bytes", best,
           t->bytes / (best * 1e6));
out:
    ex_timer_free(&tm);
    gx_array_release(dst);
    return rc;
}

static int tr_all(gx_ctx *ctx, int quick, int racy)
{
    /* Not multiples of 32, so the edge tiles exercise the bounds checks. */
    tr t = {.ctx = ctx, .rows = quick ? 1000 : 8000, .cols = quick ? 700 : 6000};
    int64_t n = (int64_t)t.rows * t.cols, in_shape[2] = {t.rows, t.cols}, out_shape[2] = {t.cols, t.rows};
    int rc = EX_PASS;
    uint64_t seed = ex_seed();
    t.bytes = 2.0 * (double)ex_fbytes(n);
    t.hin = malloc(ex_fbytes(n));
    t.hout = malloc(ex_fbytes(n));
    if (!t.hin || !t.hout) {
        rc = ex_skip("transpose: not enough host memory");
        goto out;
    }
    ex_fill_uniform(t.hin, n, -1, 1, &seed);
    EX_TRY("upload", gx_array_from_host(ctx, GX_F32, 2, in_shape, t.hin, &t.in));
    EX_TRY("allocate", gx_array_empty(ctx, GX_F32, 2, out_shape, &t.out));
    printf("  %d x %d floats (%.0f MiB)\n", t.rows, t.cols, (double)ex_fbytes(n) / (1 << 20));
    rc |= tr_kernel(&t, "transpose_naive", "naive (strided writes)", 1);
    rc |= tr_kernel(&t, "transpose_tiled", "shared tile [32][33] + barrier", 1);
    if (racy)
        rc |= tr_kernel(&t, "transpose_racy", "racy (no barrier, [32][32])", 0);
    rc |= tr_copy(&t);
out:
    gx_array_release(t.in);
    gx_array_release(t.out);
    free(t.hin);
    free(t.hout);
    return rc;
}

int example_transpose(gx_ctx *ctx, int quick) { return tr_all(ctx, quick, 0); }

#ifndef GX_TOUR
int main(int argc, char **argv)
{
    int quick = 0, racy = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--racy") == 0)
            racy = 1;
        else {
            fprintf(stderr, "%s: unknown argument '%s' (accepted: --quick, --racy)\n", argv[0], argv[i]);
            return 2;
        }
    }
    gx_ctx *ctx = ex_open("transpose");
    if (!ctx)
        return 1;
    return ex_finish("transpose", ctx, tr_all(ctx, quick, racy));
}
#endif
