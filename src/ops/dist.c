/* dist.c -- gx/dist.h: the gx_dist handle, its constructors and queries, gather to a
 * root and the shard files.  Everything that crosses ranks goes through gx/comm.h's
 * collectives; a failure only one rank can see is made collective with dx_agree so
 * no rank waits in a collective its peers never join. */
#include "ops/dist_priv.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------ helpers */

gx_status dx_comm_info(gx_comm *comm, gx_ctx **ctx, int *rank, int *size)
{
    GX__CHECK(gx_comm_ctx(comm, ctx));
    GX__CHECK(gx_comm_rank(comm, rank));
    return gx_comm_size(comm, size);
}

gx_status dx_check(const gx_dist *d, const char *fn)
{
    if (!d)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the gx_dist is NULL", fn);
    if (!gx__handle_live(d))
        return gx__err(GX_ERR_INVALID_HANDLE, "%s: the gx_dist is not live (released, or not made by gx)", fn);
    return GX_OK;
}

int64_t dx_rowsize(const gx_dist *d)
{
    int64_t n = 1;
    for (int i = 1; i < d->ndim; i++)
        n *= d->shape[i];
    return n;
}

void dx_counts_str(char *buf, size_t cap, const int64_t *counts, int n)
{
    size_t len = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)counts[i]);
    if (len < cap)
        snprintf(buf + len, cap - len, ")");
}

gx_scalar dx_scalar(gx_dtype t, const void *p)
{
    gx_scalar s;
    memset(&s, 0, sizeof s);
    s.dtype = t;
    switch (t) {
    case GX_BOOL: s.v.i = *(const uint8_t *)p != 0; break;
    case GX_I8: s.v.i = *(const int8_t *)p; break;
    case GX_I16: s.v.i = *(const int16_t *)p; break;
    case GX_I32: s.v.i = *(const int32_t *)p; break;
    case GX_I64: memcpy(&s.v.i, p, 8); break;
    case GX_U8: s.v.u = *(const uint8_t *)p; break;
    case GX_U16: s.v.u = *(const uint16_t *)p; break;
    case GX_U32: s.v.u = *(const uint32_t *)p; break;
    case GX_U64: memcpy(&s.v.u, p, 8); break;
    case GX_F16: s.v.f = gx_f16_to_f32(*(const uint16_t *)p); break;
    case GX_BF16: s.v.f = gx_bf16_to_f32(*(const uint16_t *)p); break;
    case GX_F32: s.v.f = *(const float *)p; break;
    case GX_F64: memcpy(&s.v.f, p, 8); break;
    case GX_C64: s.v.c[0] = ((const float *)p)[0]; s.v.c[1] = ((const float *)p)[1]; break;
    case GX_C128: memcpy(s.v.c, p, 16); break;
    default: break;
    }
    return s;
}

gx_status dx_rows_view(gx_array *a, int64_t r0, int64_t n, gx_array **out)
{
    gx_array_desc ad = {0};
    GX__CHECK(gx_array_describe(a, &ad));
    gx_slice sl[GX_MAX_DIMS];
    for (int i = 0; i < ad.ndim; i++)
        sl[i] = GX_ALL;
    sl[0] = (gx_slice){r0, r0 + n, 1};
    return gx_array_view(a, sl, out);
}

/* A new handle on a's storage (the gx_dist's own), a view of all of it. */
static gx_status dx_own_handle(gx_array *a, gx_array **out)
{
    gx_array_desc ad = {0};
    GX__CHECK(gx_array_describe(a, &ad));
    if (ad.ndim == 0)
        return gx_array_reshape(a, 0, NULL, out);
    gx_slice sl[GX_MAX_DIMS];
    for (int i = 0; i < ad.ndim; i++)
        sl[i] = GX_ALL;
    return gx_array_view(a, sl, out);
}

gx_status dx_gather_i64(gx_comm *comm, const int64_t *mine, int n, int64_t *all)
{
    gx_ctx *ctx;
    int rank, size;
    GX__CHECK(dx_comm_info(comm, &ctx, &rank, &size));
    gx_array *s = NULL, *r = NULL;
    int64_t ns = n, nr = (int64_t)n * size;
    gx_status st = gx_array_from_host(ctx, GX_I64, 1, &ns, mine, &s);
    if (st == GX_OK)
        st = gx_array_empty(ctx, GX_I64, 1, &nr, &r);
    if (st == GX_OK)
        st = gx_allgather(comm, s, r);
    if (st == GX_OK)
        st = gx_array_to_host(r, all, (size_t)nr * sizeof(int64_t));
    gx_array_release(s);
    gx_array_release(r);
    return st;
}

gx_status dx_agree(gx_comm *comm, gx_status mine, const char *fn)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", mine != GX_OK ? gx_last_error() : "");
    int rank, size;
    gx_ctx *ctx;
    GX__CHECK(dx_comm_info(comm, &ctx, &rank, &size));
    int64_t st = mine, *all = calloc((size_t)size, sizeof *all);
    if (!all)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: no host memory for %d statuses", fn, size);
    gx_status g = dx_gather_i64(comm, &st, 1, all);
    gx_status out = GX_OK;
    int bad = -1;
    for (int r = 0; g == GX_OK && r < size && bad < 0; r++)
        if (all[r] != GX_OK)
            bad = r;
    if (bad >= 0)
        out = (gx_status)all[bad];
    free(all);
    if (mine != GX_OK)
        return gx__err(mine, "%s", msg);
    if (g != GX_OK)
        return gx__err_prefix(g, "%s: agreeing on the outcome", fn);
    if (bad >= 0)
        return gx__err(out, "%s: rank %d failed with %s (its own message says why); every rank returns it", fn, bad,
                       gx_status_string(out));
    return GX_OK;
}

gx_status dx_make(gx_comm *comm, gx_array *local, int sharded, const int64_t *counts, gx_dist **out)
{
    gx_dist *d = calloc(1, sizeof *d);
    gx_status s = d ? dx_comm_info(comm, &d->ctx, &d->rank, &d->size) : GX_ERR_OUT_OF_MEMORY;
    if (!d)
        gx__err(s, "gx_dist: no host memory for the handle");
    gx_array_desc ad = {0};
    if (s == GX_OK)
        s = gx_array_describe(local, &ad);
    if (s == GX_OK) {
        d->counts = calloc((size_t)d->size, sizeof *d->counts);
        if (!d->counts)
            s = gx__err(GX_ERR_OUT_OF_MEMORY, "gx_dist: no host memory for the counts");
    }
    if (s != GX_OK) {
        if (d)
            free(d->counts);
        free(d);
        gx_array_release(local);
        return s;
    }
    d->comm = comm;
    d->sharded = sharded;
    d->local = local;
    d->dtype = ad.dtype;
    d->ndim = ad.ndim;
    memcpy(d->shape, ad.shape, sizeof d->shape);
    for (int r = 0; r < d->size; r++) {
        d->counts[r] = sharded ? counts[r] : (ad.ndim ? ad.shape[0] : 1);
        if (sharded && r < d->rank)
            d->offset += counts[r];
    }
    if (sharded) {
        d->shape[0] = 0;
        for (int r = 0; r < d->size; r++)
            d->shape[0] += counts[r];
    }
    gx__handle_add(d);
    *out = d;
    return GX_OK;
}

gx_status dx_from_piece(gx_comm *comm, gx_array *local, gx_dist **out)
{
    gx_ctx *ctx;
    int rank, size;
    gx_array_desc ad = {0};
    gx_status s = dx_comm_info(comm, &ctx, &rank, &size);
    if (s == GX_OK)
        s = gx_array_describe(local, &ad);
    int64_t *counts = s == GX_OK ? calloc((size_t)size, sizeof *counts) : NULL;
    if (s == GX_OK && !counts)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "gx_dist: no host memory for the counts");
    if (s == GX_OK)
        s = dx_gather_i64(comm, &ad.shape[0], 1, counts);
    if (s == GX_OK)
        s = dx_make(comm, local, 1, counts, out);
    else
        gx_array_release(local);
    free(counts);
    return s;
}

/* ------------------------------------------------------------ agreeing on a layout */

/* One rank's view of a constructor's arguments: gathered so that every rank checks
 * every other's (a mistake on one rank fails everywhere instead of hanging). */
enum { DX_ST, DX_DT, DX_ND, DX_ROWS, DX_XTRA, DX_SHAPE, DX_REC = DX_SHAPE + GX_MAX_DIMS };

/* Gathers recs; returns the first failure (own message kept), else compares dtype,
 * ndim and shape past axis 0 (all of it when `whole`) and extra with rank 0's. */
static gx_status dx_exchange(gx_comm *comm, const char *fn, gx_status mine, int64_t *rec, int whole, int64_t *all)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", mine != GX_OK ? gx_last_error() : "");
    rec[DX_ST] = mine;
    int size = 0;
    gx_comm_size(comm, &size);
    gx_status g = dx_gather_i64(comm, rec, DX_REC, all);
    if (mine != GX_OK)
        return gx__err(mine, "%s", msg);
    if (g != GX_OK)
        return gx__err_prefix(g, "%s: exchanging the layout", fn);
    for (int r = 0; r < size; r++)
        if (all[r * DX_REC + DX_ST] != GX_OK)
            return gx__err((gx_status)all[r * DX_REC + DX_ST], "%s: rank %d failed with %s (its message says why)",
                           fn, r, gx_status_string((gx_status)all[r * DX_REC + DX_ST]));
    const int64_t *z = all;
    for (int r = 1; r < size; r++) {
        const int64_t *o = all + r * DX_REC;
        if (o[DX_DT] != z[DX_DT])
            return gx__err(GX_ERR_DTYPE, "%s: rank %d has dtype %s but rank 0 has %s; every rank needs one dtype", fn,
                           r, gx_dtype_name((gx_dtype)o[DX_DT]), gx_dtype_name((gx_dtype)z[DX_DT]));
        int same = o[DX_ND] == z[DX_ND] && o[DX_XTRA] == z[DX_XTRA];
        for (int i = whole ? 0 : 1; same && i < z[DX_ND]; i++)
            same = o[DX_SHAPE + i] == z[DX_SHAPE + i];
        if (!same) {
            char a[96], b[96];
            gx__shape_str(a, sizeof a, (int)o[DX_ND], o + DX_SHAPE);
            gx__shape_str(b, sizeof b, (int)z[DX_ND], z + DX_SHAPE);
            return gx__err(GX_ERR_SHAPE,
                           "%s: rank %d has shape %s but rank 0 has %s%s; they must agree%s", fn, r, a, b,
                           o[DX_XTRA] != z[DX_XTRA] ? " (or the splits differ)" : "",
                           whole ? "" : " past axis 0");
        }
    }
    return GX_OK;
}

static void dx_rec_fill(int64_t *rec, gx_dtype dt, int ndim, const int64_t *shape, int64_t extra)
{
    memset(rec, 0, DX_REC * sizeof *rec);
    rec[DX_DT] = dt;
    rec[DX_ND] = ndim;
    rec[DX_XTRA] = extra;
    for (int i = 0; i < ndim && i < GX_MAX_DIMS; i++)
        rec[DX_SHAPE + i] = shape[i];
    rec[DX_ROWS] = ndim > 0 ? shape[0] : 1;
}

/* The rows per rank: splits checked (size entries, >= 0, adding up to n), or even. */
static gx_status dx_splits(const char *fn, const int64_t *splits, int size, int64_t n, int64_t *counts)
{
    int64_t sum = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = splits ? splits[r] : n / size + (r < n % size);
        if (counts[r] < 0)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: splits[%d] = %lld is negative", fn, r, (long long)counts[r]);
        sum += counts[r];
    }
    if (sum != n)
        return gx__err(GX_ERR_SHAPE, "%s: the splits add up to %lld rows but the array has %lld", fn,
                       (long long)sum, (long long)n);
    return GX_OK;
}

static uint64_t dx_hash(const int64_t *v, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)v[i]) * 1099511628211ull;
    return h >> 1;
}

/* The checks every sharded constructor from a global shape makes, then the exchange:
 * counts (size entries) get the rows per rank. */
static gx_status dx_layout(gx_comm *comm, const char *fn, gx_status mine, gx_dtype dt, int ndim,
                           const int64_t *shape, const int64_t *splits, int64_t *counts)
{
    int size = 0;
    gx_comm_size(comm, &size);
    if (mine == GX_OK && (ndim < 1 || ndim > GX_MAX_DIMS || !shape))
        mine = gx__err(GX_ERR_INVALID_ARGUMENT, "%s: a sharded array needs 1 to %d axes and a shape (ndim %d)", fn,
                       GX_MAX_DIMS, ndim);
    for (int i = 0; mine == GX_OK && i < ndim; i++)
        if (shape[i] < 0)
            mine = gx__err(GX_ERR_SHAPE, "%s: shape[%d] = %lld is negative", fn, i, (long long)shape[i]);
    if (mine == GX_OK && gx_dtype_size(dt) == 0)
        mine = gx__err(GX_ERR_DTYPE, "%s: dtype %d is not an element type", fn, (int)dt);
    if (mine == GX_OK)
        mine = dx_splits(fn, splits, size, shape[0], counts);
    int64_t rec[DX_REC], *all = calloc((size_t)size, sizeof rec);
    if (!all)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: no host memory", fn);
    dx_rec_fill(rec, dt, mine == GX_OK ? ndim : 0, shape, mine == GX_OK ? (int64_t)dx_hash(counts, size) : 0);
    gx_status s = dx_exchange(comm, fn, mine, rec, 1, all);
    free(all);
    return s;
}

/* ------------------------------------------------------------ constructors */

static gx_status dx_from_array(gx_comm *comm, gx_array *a, int sharded, const char *fn, gx_dist **out)
{
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    gx_ctx *ctx, *actx = NULL;
    int rank, size;
    GX__CHECK(dx_comm_info(comm, &ctx, &rank, &size));
    gx_array_desc ad = {0};
    memset(&ad, 0, sizeof ad);
    gx_status mine = a ? gx_array_describe(a, &ad) : gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the array is NULL", fn);
    if (mine == GX_OK)
        mine = gx_array_ctx(a, &actx);
    if (mine == GX_OK && actx != ctx)
        mine = gx__err(GX_ERR_INVALID_ARGUMENT, "%s: the array belongs to another context than the communicator's", fn);
    if (mine == GX_OK && sharded && ad.ndim < 1)
        mine = gx__err(GX_ERR_SHAPE, "%s: a 0-d piece cannot be split along axis 0 (reshape it to (1,))", fn);
    int64_t rec[DX_REC], *all = calloc((size_t)size, sizeof rec);
    if (!all)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: no host memory", fn);
    dx_rec_fill(rec, ad.dtype, ad.ndim, ad.shape, 0);
    gx_status s = dx_exchange(comm, fn, mine, rec, !sharded, all);
    int64_t *counts = calloc((size_t)size, sizeof *counts);
    if (s == GX_OK && !counts)
        s = gx__err(GX_ERR_OUT_OF_MEMORY, "%s: no host memory", fn);
    for (int r = 0; s == GX_OK && r < size; r++)
        counts[r] = all[r * DX_REC + DX_ROWS];
    gx_array *own = NULL;
    if (s == GX_OK)
        s = dx_own_handle(a, &own);
    if (s == GX_OK)
        s = dx_make(comm, own, sharded, counts, out);
    free(all);
    free(counts);
    return s;
}

gx_status gx_dist_from_local(gx_comm *comm, gx_array *local, gx_dist **out)
{
    return dx_from_array(comm, local, 1, "gx_dist_from_local", out);
}

gx_status gx_dist_replicated(gx_comm *comm, gx_array *a, gx_dist **out)
{
    return dx_from_array(comm, a, 0, "gx_dist_replicated", out);
}

/* Root sends each rank its rows (one group), every other rank receives its own. */
static gx_status dx_scatter(gx_comm *comm, int root, gx_dtype dt, int ndim, const int64_t *shape, const void *host,
                            const int64_t *counts, gx_array **local)
{
    gx_ctx *ctx;
    int rank, size;
    GX__CHECK(dx_comm_info(comm, &ctx, &rank, &size));
    int64_t lshape[GX_MAX_DIMS], rowbytes = (int64_t)gx_dtype_size(dt), off = 0;
    for (int i = 1; i < ndim; i++)
        rowbytes *= shape[i];
    memcpy(lshape, shape, (size_t)ndim * sizeof *lshape);
    if (rank != root) {
        lshape[0] = counts[rank];
        GX__CHECK(gx_array_empty(ctx, dt, ndim, lshape, local));
        return counts[rank] ? gx_recv(comm, root, *local) : GX_OK;
    }
    /* The pieces stay alive until the group ends: a grouped send may read its buffer
     * up to gx_comm_group_end. */
    gx_array **pieces = calloc((size_t)size, sizeof *pieces);
    if (!pieces)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_dist_from_host: no host memory");
    gx_status s = gx_comm_group_begin(comm);
    for (int r = 0; s == GX_OK && r < size; off += counts[r], r++) {
        lshape[0] = counts[r];
        s = gx_array_from_host(ctx, dt, ndim, lshape, (const char *)host + off * rowbytes, &pieces[r]);
        if (s == GX_OK && r != rank && counts[r])
            s = gx_send(comm, r, pieces[r]);
    }
    gx_status e = gx_comm_group_end(comm);
    for (int r = 0; r < size; r++)
        if (r != rank || s != GX_OK || e != GX_OK)
            gx_array_release(pieces[r]);
    if (s == GX_OK && e == GX_OK)
        *local = pieces[rank];
    free(pieces);
    return s != GX_OK ? s : e;
}

gx_status gx_dist_from_host(gx_comm *comm, int root, gx_dtype dtype, int ndim, const int64_t *shape,
                            const void *host, const int64_t *splits, gx_dist **out)
{
    const char *fn = "gx_dist_from_host";
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    gx_ctx *ctx;
    int rank, size;
    GX__CHECK(dx_comm_info(comm, &ctx, &rank, &size));
    int64_t *counts = calloc((size_t)size, sizeof *counts);
    if (!counts)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: no host memory", fn);
    gx_status mine = GX_OK;
    if (root < 0 || root >= size)
        mine = gx__err(GX_ERR_INVALID_ARGUMENT, "%s: root %d is not a rank (0 .. %d)", fn, root, size - 1);
    else if (rank == root && !host)
        mine = gx__err(GX_ERR_INVALID_ARGUMENT, "%s: host is NULL on the root (rank %d)", fn, root);
    gx_status s = dx_layout(comm, fn, mine, dtype, ndim, shape, splits, counts);
    gx_array *local = NULL;
    if (s == GX_OK)
        s = dx_agree(comm, dx_scatter(comm, root, dtype, ndim, shape, host, counts, &local), fn);
    if (s == GX_OK)
        s = dx_make(comm, local, 1, counts, out);
    else
        gx_array_release(local);
    free(counts);
    return s;
}

/* The prologue of the generated sources: this rank's context, the per-rank row counts
 * (caller frees *counts) and the first global row of this rank's shard. */
static gx_status dx_shard_plan(gx_comm *comm, const char *fn, gx_dtype dtype, int ndim, const int64_t *shape,
                               const int64_t *splits, gx_ctx **ctx, int *rank, int64_t **counts, int64_t *off)
{
    int size;
    *counts = NULL;
    GX__CHECK(dx_comm_info(comm, ctx, rank, &size));
    *counts = calloc((size_t)size, sizeof **counts);
    if (!*counts)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: no host memory", fn);
    gx_status s = dx_layout(comm, fn, GX_OK, dtype, ndim, shape, splits, *counts);
    *off = 0;
    for (int r = 0; r < *rank && s == GX_OK; r++)
        *off += (*counts)[r];
    return s;
}

gx_status gx_dist_iota(gx_comm *comm, gx_dtype dtype, int64_t count, double start, double step,
                       const int64_t *splits, gx_dist **out)
{
    const char *fn = "gx_dist_iota";
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    gx_ctx *ctx = NULL;
    int rank = 0;
    int64_t *counts = NULL, off = 0;
    gx_array *local = NULL;
    gx_status s = dx_shard_plan(comm, fn, dtype, 1, &count, splits, &ctx, &rank, &counts, &off);
    if (s == GX_OK)
        s = gx_array_iota(ctx, dtype, counts[rank], start + (double)off * step, step, &local);
    if (s == GX_OK)
        s = dx_make(comm, local, 1, counts, out);
    free(counts);
    return s == GX_OK ? s : gx__err_prefix(s, "%s", fn);
}

gx_status gx_dist_rand(gx_comm *comm, gx_rng rng, gx_dtype dtype, int ndim, const int64_t *shape,
                       const int64_t *splits, gx_dist **out)
{
    const char *fn = "gx_dist_rand";
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    gx_ctx *ctx = NULL;
    int rank = 0;
    int64_t *counts = NULL, off = 0;
    gx_array *local = NULL;
    gx_status s = dx_shard_plan(comm, fn, dtype, ndim, shape, splits, &ctx, &rank, &counts, &off);
    if (s == GX_OK) {
        int64_t lshape[GX_MAX_DIMS], rowsize = 1;
        memcpy(lshape, shape, (size_t)ndim * sizeof *lshape);
        for (int i = 1; i < ndim; i++)
            rowsize *= shape[i];
        lshape[0] = counts[rank];
        rng.start += (uint64_t)(off * rowsize);
        s = gx_rand(ctx, rng, dtype, ndim, lshape, &local);
    }
    if (s == GX_OK)
        s = dx_make(comm, local, 1, counts, out);
    free(counts);
    return s == GX_OK ? s : gx__err_prefix(s, "%s", fn);
}

gx_status gx_dist_release(gx_dist *d)
{
    if (!d)
        return GX_OK;
    if (!gx__handle_remove(d))
        return gx__err(GX_ERR_INVALID_HANDLE, "gx_dist_release: the gx_dist is not live (released already?)");
    gx_status s = gx_array_release(d->local);
    free(d->counts);
    free(d);
    return s;
}

/* ------------------------------------------------------------ queries */

gx_status gx_dist_local(const gx_dist *d, gx_array **out)
{
    GX__ARG(out, "gx_dist_local: out must not be NULL");
    *out = NULL;
    GX__CHECK(dx_check(d, "gx_dist_local"));
    *out = d->local;
    return GX_OK;
}

gx_status gx_dist_describe(const gx_dist *d, gx_dist_desc *out)
{
    GX__ARG(out, "gx_dist_describe: out must not be NULL");
    GX__CHECK(dx_check(d, "gx_dist_describe"));
    memset(out, 0, sizeof *out);
    out->dtype = d->dtype;
    out->ndim = d->ndim;
    memcpy(out->shape, d->shape, sizeof out->shape);
    out->sharded = d->sharded;
    out->rank = d->rank;
    out->size = d->size;
    out->offset = d->offset;
    out->rows = d->counts[d->rank];
    return GX_OK;
}

gx_status gx_dist_counts(const gx_dist *d, int64_t *rows)
{
    GX__ARG(rows, "gx_dist_counts: rows must not be NULL");
    GX__CHECK(dx_check(d, "gx_dist_counts"));
    memcpy(rows, d->counts, (size_t)d->size * sizeof *rows);
    return GX_OK;
}

gx_status gx_dist_comm(const gx_dist *d, gx_comm **out)
{
    GX__ARG(out, "gx_dist_comm: out must not be NULL");
    *out = NULL;
    GX__CHECK(dx_check(d, "gx_dist_comm"));
    *out = d->comm;
    return GX_OK;
}

/* ------------------------------------------------------------ gather */

static gx_status dx_gather_root(const gx_dist *x, int root, gx_array *whole)
{
    gx_array **views = calloc((size_t)x->size, sizeof *views);
    if (!views)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_dist_gather: no host memory");
    gx_status s = gx_comm_group_begin(x->comm);
    int64_t off = 0;
    for (int r = 0; s == GX_OK && r < x->size; off += x->counts[r], r++) {
        if (!x->counts[r] || dx_rowsize(x) == 0)
            continue;
        s = dx_rows_view(whole, off, x->counts[r], &views[r]);
        if (s == GX_OK)
            s = r == root ? gx_array_copy_into(x->local, views[r]) : gx_recv(x->comm, r, views[r]);
    }
    gx_status e = gx_comm_group_end(x->comm);
    /* The views stay alive until the group ends (a grouped receive lands there). */
    for (int r = 0; r < x->size; r++)
        gx_array_release(views[r]);
    free(views);
    return s != GX_OK ? s : e;
}

gx_status gx_dist_gather(const gx_dist *x, int root, gx_array **out)
{
    const char *fn = "gx_dist_gather";
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    GX__CHECK(dx_check(x, fn));
    if (root < 0 || root >= x->size)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: root %d is not a rank (0 .. %d)", fn, root, x->size - 1);
    gx_status s = GX_OK;
    if (!x->sharded) {
        if (x->rank == root)
            s = gx_array_clone(x->local, GX_DTYPE_DEFAULT, out);
        return dx_agree(x->comm, s, fn);
    }
    if (x->rank == root) {
        s = gx_array_empty(x->ctx, x->dtype, x->ndim, x->shape, out);
        if (s == GX_OK)
            s = dx_gather_root(x, root, *out);
    } else if (x->counts[x->rank] && dx_rowsize(x)) {
        s = gx_send(x->comm, root, x->local);
    }
    s = dx_agree(x->comm, s, fn);
    if (s != GX_OK) {
        gx_array_release(*out);
        *out = NULL;
    }
    return s;
}

/* ------------------------------------------------------------ shard files */

#define DX_MAGIC "GXDIST1"
enum { DX_H_VER, DX_H_DT, DX_H_ND, DX_H_SHARDED, DX_H_RANK, DX_H_SIZE, DX_H_SHAPE,
       DX_H_FIXED = DX_H_SHAPE + GX_MAX_DIMS };

static void dx_path(char *buf, size_t cap, const char *prefix, int rank, int size)
{
    snprintf(buf, cap, "%s.%d-of-%d.gxd", prefix, rank, size);
}

static gx_status dx_write(const gx_dist *x, const char *path)
{
    int64_t n = 0;
    GX__CHECK(gx_array_size(x->local, &n));
    size_t bytes = (size_t)n * gx_dtype_size(x->dtype);
    size_t hn = DX_H_FIXED + (size_t)x->size;
    int64_t *h = calloc(hn, sizeof *h);
    void *buf = malloc(bytes ? bytes : 1);
    gx_status s = h && buf ? GX_OK : gx__err(GX_ERR_OUT_OF_MEMORY, "gx_dist_save: no host memory for %s", path);
    if (s == GX_OK)
        s = gx_array_to_host(x->local, buf, bytes);
    if (s == GX_OK) {
        h[DX_H_VER] = 1;
        h[DX_H_DT] = x->dtype;
        h[DX_H_ND] = x->ndim;
        h[DX_H_SHARDED] = x->sharded;
        h[DX_H_RANK] = x->rank;
        h[DX_H_SIZE] = x->size;
        memcpy(h + DX_H_SHAPE, x->shape, sizeof x->shape);
        memcpy(h + DX_H_FIXED, x->counts, (size_t)x->size * sizeof *h);
        FILE *f = fopen(path, "wb");
        int ok = f && fwrite(DX_MAGIC, 1, 8, f) == 8 && fwrite(h, sizeof *h, hn, f) == hn &&
                 fwrite(buf, 1, bytes, f) == bytes;
        if (f && fclose(f) != 0)
            ok = 0;
        if (!ok)
            s = gx__err(GX_ERR_IO, "gx_dist_save: cannot write %s (%s)", path, strerror(errno));
    }
    free(h);
    free(buf);
    return s;
}

gx_status gx_dist_save(const gx_dist *x, const char *prefix)
{
    GX__CHECK(dx_check(x, "gx_dist_save"));
    GX__ARG(prefix, "gx_dist_save: prefix must not be NULL");
    char path[4096];
    dx_path(path, sizeof path, prefix, x->rank, x->size);
    return dx_agree(x->comm, dx_write(x, path), "gx_dist_save");
}

/* Reads and checks one shard file; *local gets its piece, counts (size entries) the
 * layout, hdr the header. */
static gx_status dx_read(gx_ctx *ctx, const char *path, int rank, int size, int64_t *hdr, int64_t *counts,
                         gx_array **local)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return gx__err(GX_ERR_IO, "gx_dist_load: cannot open %s (%s)", path, strerror(errno));
    char magic[8];
    gx_status s = GX_OK;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, DX_MAGIC, 8) != 0 ||
        fread(hdr, sizeof *hdr, DX_H_FIXED, f) != DX_H_FIXED || hdr[DX_H_VER] != 1 ||
        gx_dtype_size((gx_dtype)hdr[DX_H_DT]) == 0 || hdr[DX_H_ND] < 0 || hdr[DX_H_ND] > GX_MAX_DIMS)
        s = gx__err(GX_ERR_IO, "gx_dist_load: %s is not a gx_dist shard file (bad or short header)", path);
    else if (hdr[DX_H_SIZE] != size || hdr[DX_H_RANK] != rank)
        s = gx__err(GX_ERR_IO, "gx_dist_load: %s was written by rank %lld of %lld ranks, read by rank %d of %d", path,
                    (long long)hdr[DX_H_RANK], (long long)hdr[DX_H_SIZE], rank, size);
    else if (fread(counts, sizeof *counts, (size_t)size, f) != (size_t)size)
        s = gx__err(GX_ERR_IO, "gx_dist_load: %s is short (the layout is cut off)", path);
    int64_t lshape[GX_MAX_DIMS], n = 1;
    if (s == GX_OK) {
        memcpy(lshape, hdr + DX_H_SHAPE, sizeof lshape);
        if (hdr[DX_H_SHARDED])
            lshape[0] = counts[rank];
        for (int i = 0; i < hdr[DX_H_ND]; i++)
            n *= lshape[i];
        size_t bytes = (size_t)n * gx_dtype_size((gx_dtype)hdr[DX_H_DT]);
        void *buf = malloc(bytes ? bytes : 1);
        if (!buf)
            s = gx__err(GX_ERR_OUT_OF_MEMORY, "gx_dist_load: no host memory for %s", path);
        else if (fread(buf, 1, bytes, f) != bytes)
            s = gx__err(GX_ERR_IO, "gx_dist_load: %s is short (%zu bytes of data expected)", path, bytes);
        else
            s = gx_array_from_host(ctx, (gx_dtype)hdr[DX_H_DT], (int)hdr[DX_H_ND], lshape, buf, local);
        free(buf);
    }
    fclose(f);
    return s;
}

gx_status gx_dist_load(gx_comm *comm, const char *prefix, gx_dist **out)
{
    const char *fn = "gx_dist_load";
    GX__ARG(out, "%s: out must not be NULL", fn);
    *out = NULL;
    gx_ctx *ctx;
    int rank, size;
    GX__CHECK(dx_comm_info(comm, &ctx, &rank, &size));
    int64_t hdr[DX_H_FIXED] = {0}, *counts = calloc((size_t)size, sizeof *counts);
    int64_t rec[DX_REC], *all = calloc((size_t)size, sizeof rec);
    if (!counts || !all) {
        free(counts);
        free(all);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: no host memory", fn);
    }
    char path[4096];
    dx_path(path, sizeof path, prefix ? prefix : "", rank, size);
    gx_array *local = NULL;
    gx_status mine = prefix ? dx_read(ctx, path, rank, size, hdr, counts, &local)
                            : gx__err(GX_ERR_INVALID_ARGUMENT, "%s: prefix must not be NULL", fn);
    /* Every rank's header must describe one array: the layout's hash rides along. */
    dx_rec_fill(rec, (gx_dtype)hdr[DX_H_DT], (int)hdr[DX_H_ND], hdr + DX_H_SHAPE,
                (int64_t)(dx_hash(counts, size) ^ (uint64_t)hdr[DX_H_SHARDED]) >> 1);
    gx_status s = dx_exchange(comm, fn, mine, rec, 1, all);
    if (s == GX_ERR_SHAPE || s == GX_ERR_DTYPE) {
        char why[1024];
        snprintf(why, sizeof why, "%s", gx_last_error());
        s = gx__err(GX_ERR_IO, "%s: the shard files of %s do not describe one array: %s", fn, prefix, why);
    }
    if (s == GX_OK)
        s = dx_make(comm, local, (int)hdr[DX_H_SHARDED], counts, out);
    else
        gx_array_release(local);
    free(counts);
    free(all);
    return s;
}
