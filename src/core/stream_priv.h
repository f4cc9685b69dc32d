/* stream_priv.h -- the per-context state of streams, page-locked buffers and the
 * profiler (ctx->kx), shared by src/core/stream.c, src/core/profile.c,
 * src/core/event.c, src/ops/kernel.c and src/ops/array_ops.c. */
#ifndef GX_STREAM_PRIV_H
#define GX_STREAM_PRIV_H

#include "core/gx_internal.h"

struct gx_stream {
    gx_ctx *ctx;
    void *st; /* backend stream; NULL on the CPU backend */
    /* gx_stream_wrap: the application's stream, which gx never destroys; native is
     * the handle it gave (st too where the backend has streams). */
    bool wrapped;
    void *native;
    gx_stream *next;
};

typedef struct kx_host { /* a gx_host_alloc buffer */
    void *p;
    size_t bytes;
    struct kx_host *next;
} kx_host;

typedef struct gx__prof gx__prof;

struct gx__kx {
    gx_stream *streams; /* live streams of the context */
    gx_stream *current; /* NULL = the default stream */
    kx_host *hosts;
    /* compiled function -> index into names (always kept, so a profiler started late
     * names kernels compiled earlier) */
    gx__map labels;
    char **names; /* interned names; index 0.. */
    int nnames, capnames;
    gx__map name_index; /* name -> its index in names */
    gx__prof *prof;     /* NULL until the profiler is first started */
};

/* ctx->kx, made on first use (caller holds the lock).  NULL only when out of memory
 * (then the error is set). */
struct gx__kx *gx__kx(gx_ctx *ctx);
/* The backend stream of s for ctx (NULL s = the default stream: NULL).  Checks the
 * handle and that it belongs to ctx. */
gx_status gx__stream_backend(gx_ctx *ctx, gx_stream *s, const char *what, void **out);
/* The buffer [p, p+n) is page-locked: one of gx_host_alloc's, or the backend says so
 * (asynchronous copies need it: src/ops/array_ops.c). */
bool gx__host_pinned(gx_ctx *ctx, const void *p, size_t n);
/* Interns a name; -1 when out of memory. */
int gx__kx_name(struct gx__kx *kx, const char *name);
/* The name index of fn, or -1 when none was registered. */
int gx__kx_label_of(struct gx__kx *kx, gx__func fn);

/* Profiler (src/core/profile.c). */
gx_status gx__prof_start(gx_ctx *ctx, int trace, bool from_env);
void gx__prof_free(gx_ctx *ctx);       /* restores the backend iface */
void gx__prof_at_destroy(gx_ctx *ctx); /* prints the report when due */

#endif
