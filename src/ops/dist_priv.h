/* dist_priv.h -- what dist.c (handles, constructors, gather, files) and dist_ops.c
 * (map, reduce, scan, filter, sort, matmul) share.  Prefix dx_.  Built only on the
 * public calls of gx.h and gx/comm.h. */
#ifndef GX_DIST_PRIV_H
#define GX_DIST_PRIV_H
#include "core/gx_internal.h"

struct gx_dist {
    gx_comm *comm;
    gx_ctx *ctx;
    int rank, size;
    int sharded;
    gx_array *local; /* owned */
    gx_dtype dtype;
    int ndim;
    int64_t shape[GX_MAX_DIMS]; /* global */
    int64_t *counts;            /* rows per rank (size entries) */
    int64_t offset;             /* rows before this rank */
};

/* The communicator's context, rank and size. */
gx_status dx_comm_info(gx_comm *comm, gx_ctx **ctx, int *rank, int *size);
/* d is a live gx_dist. */
gx_status dx_check(const gx_dist *d, const char *fn);
/* A new gx_dist owning `local`; counts (size entries) are copied (NULL for a
 * replicated one).  On failure local is released. */
gx_status dx_make(gx_comm *comm, gx_array *local, int sharded, const int64_t *counts, gx_dist **out);
/* A new sharded gx_dist from this rank's piece, counts gathered (pieces known to agree
 * past axis 0). */
gx_status dx_from_piece(gx_comm *comm, gx_array *local, gx_dist **out);
/* all[r * n + i] = rank r's mine[i] (an all-gather of n i64 through the device). */
gx_status dx_gather_i64(gx_comm *comm, const int64_t *mine, int n, int64_t *all);
/* Makes a status collective: every rank learns whether any rank failed.  Returns the
 * caller's own failure (its message kept), else the first failing rank's status with
 * a message naming it, else GX_OK. */
gx_status dx_agree(gx_comm *comm, gx_status mine, const char *fn);
/* Elements per row (product of shape[1..]) of d. */
int64_t dx_rowsize(const gx_dist *d);
/* "(2, 0, 3)" for counts. */
void dx_counts_str(char *buf, size_t cap, const int64_t *counts, int n);
/* A gx_scalar of dtype t from one element's bytes. */
gx_scalar dx_scalar(gx_dtype t, const void *p);
/* The row view [r0, r0 + n) of a (along axis 0). */
gx_status dx_rows_view(gx_array *a, int64_t r0, int64_t n, gx_array **out);

#endif
