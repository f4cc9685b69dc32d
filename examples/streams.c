/* streams.c -- overlapping copies with compute (the lecture's chunked pipeline).
 *
 * One stream does everything in order: copy all in, compute, copy all out; the copy
 * engines and the SMs take turns.  Cut the data into chunks and give consecutive
 * chunks to different streams: while chunk 2 is copied in, chunk 1 is computed and
 * chunk 0 copied out.  Asynchronous copies need page-locked (pinned) host memory
 * (gx_host_alloc); with ordinary malloc'ed memory they would silently be synchronous. */
#include "common.h"

/* A little arithmetic per element; x * 2 is exact, so fma or not, the device gives
 * exactly the host's (x * 2 + 1). */
static const char *streams_src = "#include <gx/device.h>\n"
                                 "extern \"C\" __global__ void scale_shift(float *x, int64_t n)\n"
                                 "{\n"
                                 "    GX_FOR_EACH(i, n)\n"
                                 "        x[i] = x[i] * 2.0f + 1.0f;\n"
                                 "}\n";

enum { ST_CHUNKS = 16, ST_STREAMS = 4 };

typedef struct st {
    gx_ctx *ctx;
    gx_kernel *k;
    gx_launch_cfg cfg;
    int64_t chunk;            /* elements per chunk */
    float *in, *out;          /* pinned host buffers, ST_CHUNKS * chunk elements */
    gx_array *dev[ST_CHUNKS]; /* one device buffer per chunk */
    gx_stream *s[ST_STREAMS];
} st;

/* Issues chunk c on stream s (NULL = the default stream): H2D, kernel, D2H.  Nothing
 * waits here: the copies and the launch are queued in order on that stream. */
static gx_status st_chunk(st *p, int c, gx_stream *s)
{
    size_t bytes = ex_fbytes(p->chunk);
    gx_karg args[] = {GX_KARG_ARRAY(p->dev[c]), GX_KARG_I64(p->chunk)};
    gx_launch_cfg cfg = p->cfg;
    cfg.stream = s;
    gx_status r = gx_ctx_set_stream(p->ctx, s); /* the async copies use the current stream */
    if (r == GX_OK)
        r = gx_array_from_host_into_async(p->in + (int64_t)c * p->chunk, bytes, p->dev[c]);
    if (r == GX_OK)
        r = gx_kernel_launch(p->k, &cfg, 2, args);
    if (r == GX_OK)
        r = gx_array_to_host_async(p->dev[c], p->out + (int64_t)c * p->chunk, bytes);
    return r;
}

/* All chunks on `nstreams` streams (0 = the default stream alone); wall-clock ms. */
static gx_status st_pipeline(st *p, int nstreams, double *ms)
{
    memset(p->out, 0xff, ex_fbytes(p->chunk * ST_CHUNKS)); /* NaNs: a missing chunk shows */
    double t0 = ex_now();
    gx_status r = GX_OK;
    for (int c = 0; c < ST_CHUNKS && r == GX_OK; c++)
        r = st_chunk(p, c, nstreams ? p->s[c % nstreams] : NULL);
    gx_status r2 = gx_ctx_set_stream(p->ctx, NULL);
    for (int i = 0; i < nstreams && r == GX_OK; i++)
        r = gx_stream_sync(p->s[i]);
    if (r == GX_OK)
        r = gx_sync(p->ctx);
    *ms = (ex_now() - t0) * 1e3;
    return r != GX_OK ? r : r2;
}

static int64_t st_wrong(const st *p)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < p->chunk * ST_CHUNKS; i++)
        bad += p->out[i] != p->in[i] * 2.0f + 1.0f;
    return bad;
}

static void st_free(st *p)
{
    for (int i = 0; i < ST_STREAMS; i++)
        gx_stream_destroy(p->s[i]);
    for (int c = 0; c < ST_CHUNKS; c++)
        gx_array_release(p->dev[c]);
    gx_host_free(p->ctx, p->in);
    gx_host_free(p->ctx, p->out);
    gx_kernel_destroy(p->k);
}

int example_streams(gx_ctx *ctx, int quick)
{
    st p = {.ctx = ctx, .chunk = (quick ? (1 << 22) : (1 << 26)) / ST_CHUNKS};
    int rc = EX_PASS;
    uint64_t seed = ex_seed();
    size_t bytes = ex_fbytes(p.chunk * ST_CHUNKS);
    EX_TRY("pinned input", gx_host_alloc(ctx, bytes, (void **)&p.in));
    EX_TRY("pinned output", gx_host_alloc(ctx, bytes, (void **)&p.out));
    ex_fill_uniform(p.in, p.chunk * ST_CHUNKS, -1, 1, &seed);
    for (int c = 0; c < ST_CHUNKS; c++)
        EX_TRY("chunk buffer", gx_array_empty(ctx, GX_F32, 1, &p.chunk, &p.dev[c]));
    EX_TRY("sync", gx_sync(ctx)); /* allocated on the default stream, used on the others */
    for (int i = 0; i < ST_STREAMS; i++)
        EX_TRY("stream", gx_stream_create(ctx, &p.s[i]));
    EX_TRY("compile", gx_kernel_compile(ctx, streams_src, "scale_shift", NULL, &p.k));
    EX_TRY("suggest", gx_kernel_suggest(p.k, p.chunk, 0, &p.cfg, NULL));
    printf("  %.0f MiB in %d chunks; host buffers pinned with gx_host_alloc\n", (double)bytes / (1 << 20), ST_CHUNKS);
    double one = 0, many = 0;
    EX_TRY("warm-up", st_pipeline(&p, ST_STREAMS, &many));
    EX_TRY("one stream", st_pipeline(&p, 0, &one));
    int64_t bad1 = st_wrong(&p);
    EX_TRY("several streams", st_pipeline(&p, ST_STREAMS, &many));
    int64_t bad2 = st_wrong(&p);
    double gbs = 2.0 * (double)bytes / 1e6; /* bytes over PCIe/NVLink, both ways, per ms */
    rc |= ex_verdict(bad1 == 0, "1 stream: copy in, compute, copy out", "%8.2f ms %6.1f GB/s   %lld wrong", one,
                     gbs / one, (long long)bad1);
    char name[64];
    snprintf(name, sizeof name, "%d streams, %d chunks overlapped", ST_STREAMS, ST_CHUNKS);
    rc |= ex_verdict(bad2 == 0, name, "%8.2f ms %6.1f GB/s   %lld wrong, %.2fx faster", many, gbs / many,
                     (long long)bad2, one / many);
out:
    gx_ctx_set_stream(ctx, NULL);
    st_free(&p);
    return rc;
}

#ifndef GX_TOUR
int main(int argc, char **argv) { return ex_main(argc, argv, "streams", example_streams); }
#endif
