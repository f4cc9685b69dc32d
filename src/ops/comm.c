/* comm.c -- gx/comm.h: communicators and collectives.
 *
 * Three transports behind one set of checks:
 *   - the backend's collective library (GX__CAP_COMM: NCCL on CUDA), reached through
 *     ctx->be.iface->comm, on device memory and the context's stream;
 *   - MPI on host memory (comm_mpi.c) for backends whose device is the host;
 *   - none: a communicator of size 1 (no MPI, or gx_comm_from_ctxs on the CPU),
 *     where every collective is a copy.
 * Views are staged: through host buffers for MPI, through dense device arrays for
 * the library.  Inside a group the staged buffers live until gx_comm_group_end. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ops/comm_priv.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CM_MAGIC 0x6778636f6d6d2121ull
#define CM_DEFAULT_TIMEOUT_S 300.0

typedef enum cm_tp { CM_NONE, CM_MPI, CM_LIB } cm_tp;

/* A staged buffer: the transfer's dense memory, and where it came from. */
typedef struct cm_buf {
    void *p;         /* what the transport reads or writes */
    void *host;      /* MPI: malloc'ed staging (NULL when p is the array's own memory) */
    gx_array *tmp;   /* library: a dense device copy (NULL when p is the array's own) */
    gx_array *back;  /* the view to write the result into afterwards, or NULL */
} cm_buf;

struct gx_comm {
    uint64_t magic;
    gx_ctx *ctx;
    int rank, size, local_rank;
    double timeout_s;
    cm_tp tp;
    cmi *mpi;    /* MPI: the transport; CUDA over MPI: the id exchange and gx info */
    void *lib;   /* the backend library's communicator */
    bool world;  /* made by gx_comm_world: counts towards finalising MPI */
    bool broken;
    char why[600]; /* the timeout's message, repeated by every later call */
    int depth;     /* group nesting */
    cm_buf *pend;  /* staged buffers of the open group */
    int npend, cappend;
};

/* The library's groups belong to the calling thread (ncclGroupStart/End), not to one
 * communicator: one thread driving the ranks of gx_comm_from_ctxs opens one group for
 * all of them.  Staged buffers of collectives inside it wait for its end here. */
static _Thread_local int cm_tl_depth;
static _Thread_local cm_buf *cm_tl_pend;
static _Thread_local int cm_tl_npend, cm_tl_cap;

/* MPI that gx started: finalised when the last world communicator goes. */
static pthread_mutex_t cm_mu = PTHREAD_MUTEX_INITIALIZER;
static int cm_worlds;
static bool cm_we_init;

/* ------------------------------------------------------------ checks */

static gx_status cm_check(const gx_comm *c, const char *what)
{
    GX__ARG(c, "%s: comm is NULL", what);
    if (c->magic != CM_MAGIC)
        return gx__err(GX_ERR_INVALID_HANDLE, "%s: comm is not a live communicator (destroyed, or not made by gx)",
                       what);
    return GX_OK;
}

static gx_status cm_usable(const gx_comm *c, const char *what)
{
    GX__CHECK(cm_check(c, what));
    if (c->broken)
        return gx__err(GX_ERR_TIMEOUT, "%s: the communicator is broken by an earlier timeout (destroy it): %s", what,
                       c->why);
    return GX_OK;
}

/* A collective: a usable communicator whose context is not recording a graph (MPI's
 * transfers run at once and NCCL's are not captured by gx). */
static gx_status cm_coll(const gx_comm *c, const char *what)
{
    GX__CHECK(cm_usable(c, what));
    if (gx__graph_recording(c->ctx))
        return gx__graph_refuse(c->ctx, what, "run collectives outside gx_graph_begin / gx_graph_end");
    return GX_OK;
}

static gx_status cm_array(const gx_comm *c, const gx_array *a, const char *what, const char *name, bool out)
{
    char w[96];
    gx__fmt(w, sizeof w, "%s (%s)", what, name);
    GX__CHECK(gx__array_check(a, w));
    if (a->ctx != c->ctx)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %s belongs to another context than the communicator's", what,
                       name);
    if (out)
        GX__CHECK(gx__array_writable(a, w));
    return GX_OK;
}

static gx_status cm_same_dtype(const gx_array *s, const gx_array *r, const char *what)
{
    if (s->dtype != r->dtype)
        return gx__err(GX_ERR_DTYPE, "%s: send is %s but recv is %s; they must have one dtype", what,
                       gx_dtype_name(s->dtype), gx_dtype_name(r->dtype));
    return GX_OK;
}

static gx_status cm_size_is(const gx_array *a, int64_t want, const char *what, const char *name, const char *rule)
{
    if (a->size == want)
        return GX_OK;
    char sh[160];
    gx__shape_str(sh, sizeof sh, a->ndim, a->shape);
    return gx__err(GX_ERR_SHAPE, "%s: %s has shape %s (%lld elements) but needs %lld (%s)", what, name, sh,
                   (long long)a->size, (long long)want, rule);
}

static gx_status cm_rank_arg(const gx_comm *c, int r, const char *what, const char *name, bool not_me)
{
    if (r < 0 || r >= c->size)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %s %d is not a rank of this communicator (0..%d)", what, name, r,
                       c->size - 1);
    if (not_me && r == c->rank)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %s %d is this rank itself", what, name, r);
    return GX_OK;
}

/* counts[size], none negative; *sum gets their total. */
static gx_status cm_counts(const gx_comm *c, const int64_t *counts, const char *what, const char *name, int64_t *sum)
{
    GX__ARG(counts, "%s: %s is NULL (it needs one entry per rank, %d)", what, name, c->size);
    *sum = 0;
    for (int r = 0; r < c->size; r++) {
        if (counts[r] < 0)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: %s[%d] = %lld is negative", what, name, r,
                           (long long)counts[r]);
        *sum += counts[r];
    }
    return GX_OK;
}

/* The operator and dtype rules of gx/comm.h (every transport). */
static gx_status cm_op(const char *op, gx_dtype t, const char *what, opn_kind *out)
{
    GX__ARG(op, "%s: op is NULL; use one of " OPN_NAMES, what);
    opn_kind k = opn_parse(op);
    if (k == OPN_NONE || k == OPN_COUNT || k == OPN_MEAN)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: \"%s\" is not an operator a collective reduces with; use one of " OPN_NAMES,
                       what, op);
    bool cx = gx__dtype_is_complex(t), fl = gx__dtype_is_float(t);
    bool bitwise = k == OPN_AND || k == OPN_OR || k == OPN_XOR || k == OPN_LAND || k == OPN_LOR;
    if (cx && k != OPN_ADD && k != OPN_MUL)
        return gx__err(GX_ERR_DTYPE, "%s: \"%s\" on %s: complex numbers have no order and no bits; only \"+\" and \"*\"",
                       what, op, gx_dtype_name(t));
    if (fl && bitwise)
        return gx__err(GX_ERR_DTYPE, "%s: \"%s\" on %s: bitwise and logical operators need integer or bool data", what,
                       op, gx_dtype_name(t));
    if ((k == OPN_LAND || k == OPN_LOR) && t != GX_BOOL && !fl && !cx)
        return gx__err(GX_ERR_DTYPE, "%s: \"%s\" on %s: logical operators take bool data (compare with 0 first, or "
                       "use \"&\" / \"|\" for bits)", what, op, gx_dtype_name(t));
    if (t == GX_BOOL && (k == OPN_ADD || k == OPN_MUL))
        return gx__err(GX_ERR_DTYPE, "%s: \"%s\" on bool would leave bool; use \"||\" (any) or \"&&\" (all), or "
                       "convert to an integer dtype first", what, op);
    *out = k;
    return GX_OK;
}

/* ------------------------------------------------------------ options, handles */

static gx_status cm_timeout(const gx_comm_opts *o, const char *what, double *out)
{
    GX__OPTS_CHECK(o, what);
    if (o && (o->timeout_s < 0 || isnan(o->timeout_s)))
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: opts->timeout_s = %g; it must be > 0 (seconds) or 0 for the default",
                       what, o->timeout_s);
    if (o && o->timeout_s > 0) {
        *out = o->timeout_s;
        return GX_OK;
    }
    *out = CM_DEFAULT_TIMEOUT_S;
    const char *v = gx__env("GX_COMM_TIMEOUT");
    if (v) {
        char *end;
        double d = strtod(v, &end);
        if (end != v && *end == 0 && d > 0 && isfinite(d))
            *out = d;
        else
            gx__env_warn("GX_COMM_TIMEOUT", v, "a number of seconds > 0", "300");
    }
    return GX_OK;
}

static gx_status cm_new(gx_ctx *ctx, double timeout_s, gx_comm **out)
{
    gx_comm *c = calloc(1, sizeof *c);
    if (!c)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_comm: out of host memory");
    c->magic = CM_MAGIC, c->ctx = ctx, c->timeout_s = timeout_s, c->size = 1;
    *out = c;
    return GX_OK;
}

static cmi_when cm_when(const gx_comm *c, const char *what)
{
    return (cmi_when){gx__now_ms() + c->timeout_s * 1000.0, c->timeout_s, what};
}

/* A timeout breaks the communicator for good (see gx/comm.h). */
static gx_status cm_note(gx_comm *c, gx_status s)
{
    if (s == GX_ERR_TIMEOUT && !c->broken) {
        c->broken = true;
        snprintf(c->why, sizeof c->why, "%s", gx_last_error());
        if (c->tp == CM_LIB)
            c->ctx->be.iface->comm.abort(&c->ctx->be, c->lib);
    }
    return s;
}

/* ------------------------------------------------------------ staging */

static size_t cm_bytes(const gx_array *a) { return (size_t)a->size * gx_dtype_size(a->dtype); }

/* The data of `a` as a dense buffer: its own memory when contiguous, else a copy
 * (load: holding a's values; back: written into a afterwards). */
static gx_status cm_stage(const gx_comm *c, const gx_array *a, bool load, bool back, bool force, cm_buf *b)
{
    memset(b, 0, sizeof *b);
    if (!force && gx__array_contiguous(a)) {
        b->p = gx__array_ptr(a);
        return GX_OK;
    }
    if (c->tp == CM_LIB) {
        GX__CHECK(load ? gx_array_clone(a, GX_DTYPE_DEFAULT, &b->tmp)
                       : gx_array_empty(c->ctx, a->dtype, 1, &a->size, &b->tmp));
        b->p = gx__array_ptr(b->tmp);
    } else {
        b->host = malloc(cm_bytes(a) ? cm_bytes(a) : 1);
        if (!b->host)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_comm: %zu bytes of host staging", cm_bytes(a));
        b->p = b->host;
        if (load) {
            gx_status s = gx_array_to_host(a, b->host, cm_bytes(a));
            if (s != GX_OK) {
                free(b->host);
                return s;
            }
        }
    }
    b->back = back ? (gx_array *)a : NULL;
    return GX_OK;
}

/* Writes a staged result back and frees the staging; after a timeout the buffer
 * may still be written by MPI, so it is kept (leaked on purpose). */
static gx_status cm_unstage(cm_buf *b, gx_status s)
{
    if (s == GX_OK && b->back) {
        if (b->host)
            s = gx_array_from_host_into(b->host, cm_bytes(b->back), b->back);
        else if (b->tmp) {
            gx_array *v = NULL;
            s = gx_array_reshape(b->tmp, b->back->ndim, b->back->shape, &v);
            if (s == GX_OK)
                s = gx_array_copy_into(v, b->back);
            gx_array_release(v);
        }
    }
    if (s != GX_ERR_TIMEOUT)
        free(b->host);
    gx_array_release(b->tmp);
    memset(b, 0, sizeof *b);
    return s;
}

static gx_status cm_push(cm_buf **pend, int *n, int *cap, const cm_buf *b)
{
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 8;
        cm_buf *p = realloc(*pend, sizeof *p * (size_t)nc);
        if (!p)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_comm: out of host memory");
        *pend = p, *cap = nc;
    }
    (*pend)[(*n)++] = *b;
    return GX_OK;
}

static bool cm_grouped(const gx_comm *c) { return c->tp == CM_LIB ? cm_tl_depth > 0 : c->depth > 0; }

static gx_status cm_defer(gx_comm *c, cm_buf *b)
{
    if (c->tp == CM_LIB)
        return cm_push(&cm_tl_pend, &cm_tl_npend, &cm_tl_cap, b);
    return cm_push(&c->pend, &c->npend, &c->cappend, b);
}

/* The staged results of a finished group come back (or, after a failure, are freed). */
static gx_status cm_flush(cm_buf *pend, int *n, gx_status s)
{
    for (int i = 0; i < *n; i++) {
        gx_status u = cm_unstage(&pend[i], s);
        if (s == GX_OK)
            s = u;
    }
    *n = 0;
    return s;
}

/* dst = src element by element in row-major order (shapes may differ). */
static gx_status cm_copy(const gx_array *src, gx_array *dst)
{
    if (src == dst || dst->size == 0)
        return GX_OK;
    if (gx__same_shape(src, dst))
        return gx_array_copy_into(src, dst);
    gx_array *dense = NULL, *v = NULL;
    gx_status s = gx_array_clone(src, GX_DTYPE_DEFAULT, &dense);
    if (s == GX_OK)
        s = gx_array_reshape(dense, dst->ndim, dst->shape, &v);
    if (s == GX_OK)
        s = gx_array_copy_into(v, dst);
    gx_array_release(v);
    gx_array_release(dense);
    return s;
}

/* ------------------------------------------------------------ communicators */

static gx_status cm_lib_ok(gx_ctx *ctx, const char *what)
{
    if (!gx__ctx_supports(ctx, GX__CAP_COMM))
        return gx__err(GX_ERR_UNSUPPORTED, "%s: the %s backend has no collective library", what, ctx->be.iface->name);
    char v[256];
    return ctx->be.iface->comm.version(v, sizeof v);
}

/* The library's communicator over an MPI communicator: rank 0 makes the id, MPI
 * broadcasts it. */
static gx_status cm_lib_over_mpi(gx_comm *c, const char *what)
{
    const gx__backend_comm *io = &c->ctx->be.iface->comm;
    unsigned char id[512] = {0};
    size_t len = 0;
    gx_status s = GX_OK;
    if (c->rank == 0)
        s = io->unique_id(&c->ctx->be, id, sizeof id, &len);
    /* Every rank joins the broadcast, also after a failure on rank 0 (then len 0), so
     * no rank is left waiting. */
    uint64_t n64 = len;
    cmi_when w = cm_when(c, what);
    gx_status b = cmi_bcast(c->mpi, &n64, 1, 8, 0, &w);
    if (b == GX_OK && n64)
        b = cmi_bcast(c->mpi, id, (size_t)n64, 1, 0, &w);
    if (s != GX_OK)
        return s;
    if (b != GX_OK)
        return cm_note(c, b);
    if (n64 == 0)
        return gx__err(GX_ERR_BACKEND, "%s: rank 0 could not make the collective library's unique id", what);
    return io->init_rank(&c->ctx->be, id, (size_t)n64, c->size, c->rank, w.deadline_ms, &c->lib);
}

static gx_status cm_from_mpi_impl(gx_ctx *ctx, const void *mpi_comm, double timeout, bool world, gx_comm **out)
{
    const char *what = world ? "gx_comm_world" : "gx_comm_from_mpi";
    gx_comm *c = NULL;
    GX__CHECK(cm_new(ctx, timeout, &c));
    c->world = world;
    c->local_rank = cmi_local_rank();
    gx_status s = cmi_make(mpi_comm, &c->mpi, &c->rank, &c->size);
    if (s == GX_OK && gx__ctx_supports(ctx, GX__CAP_HOST)) {
        c->tp = CM_MPI;
    } else if (s == GX_OK) {
        s = cm_lib_ok(ctx, what);
        /* Every rank joins the id exchange whatever its own library said. */
        if (s != GX_OK && c->size > 1) {
            gx_status keep = s;
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", gx_last_error());
            uint64_t zero = 0;
            cmi_when w = cm_when(c, what);
            if (c->rank == 0)
                (void)cmi_bcast(c->mpi, &zero, 1, 8, 0, &w);
            s = gx__err(keep, "%s", msg);
        } else if (s == GX_OK) {
            c->tp = CM_LIB;
            s = cm_lib_over_mpi(c, what);
        }
    }
    if (s != GX_OK) {
        cmi_free(c->mpi, c->broken);
        free(c);
        return s;
    }
    *out = c;
    return GX_OK;
}

gx_status gx_comm_from_mpi(gx_ctx *ctx, const void *mpi_comm, const gx_comm_opts *opts, gx_comm **out)
{
    GX__ARG(out, "gx_comm_from_mpi: out is NULL");
    *out = NULL;
    GX__CHECK(gx__ctx_check(ctx));
    GX__ARG(mpi_comm, "gx_comm_from_mpi: mpi_comm is NULL (pass &comm, an MPI_Comm *)");
    double t;
    GX__CHECK(cm_timeout(opts, "gx_comm_from_mpi", &t));
    if (!cmi_available())
        return gx__err(GX_ERR_UNSUPPORTED, "gx_comm_from_mpi: gx was built without MPI: install libopenmpi-dev "
                                           "(scripts/deps) and rebuild");
    return cm_from_mpi_impl(ctx, mpi_comm, t, false, out);
}

/* A context on this rank's device: CUDA takes local rank mod the device count.  It is
 * made there directly (a context on device 0 first would cost every rank a device
 * context on GPU 0); where that backend is not CUDA (GX_BACKEND=cpu, no GPU), the
 * index means nothing and the plain context follows. */
static gx_status cm_world_ctx(gx_backend_kind kind, int local_rank, gx_ctx **ctx)
{
    int n = 0;
    if (kind != GX_BACKEND_CPU && gx_cuda_device_count(&n) == GX_OK && n > 0 && local_rank % n != 0) {
        gx_status s = gx_ctx_create_on(ctx, kind, local_rank % n);
        if (s == GX_OK || kind == GX_BACKEND_CUDA)
            return s;
        gx_clear_error(); /* AUTO chose the CPU, whose only index is 0 */
    }
    return gx_ctx_create(ctx, kind);
}

/* Size 1: the library's communicator where there is one, else plain copies. */
static gx_status cm_single(gx_ctx *ctx, double timeout, gx_comm **out)
{
    gx_comm *c = NULL;
    GX__CHECK(cm_new(ctx, timeout, &c));
    if (gx__ctx_supports(ctx, GX__CAP_COMM) && cm_lib_ok(ctx, "gx_comm_world") == GX_OK) {
        gx__backend *be = &ctx->be;
        if (ctx->be.iface->comm.init_all(&be, 1, &c->lib) == GX_OK)
            c->tp = CM_LIB;
    }
    gx_clear_error();
    *out = c;
    return GX_OK;
}

gx_status gx_comm_world(gx_backend_kind kind, const gx_comm_opts *opts, gx_ctx **ctx_out, gx_comm **out)
{
    GX__ARG(ctx_out && out, "gx_comm_world: %s is NULL", ctx_out ? "out" : "ctx_out");
    *ctx_out = NULL, *out = NULL;
    double t;
    GX__CHECK(cm_timeout(opts, "gx_comm_world", &t));
    bool mpi = cmi_available() && (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK"));
    if (!mpi) {
        gx_ctx *ctx;
        GX__CHECK(cm_world_ctx(kind, 0, &ctx));
        gx_status s = cm_single(ctx, t, out);
        if (s != GX_OK)
            gx_ctx_destroy(ctx);
        else
            *ctx_out = ctx;
        return s;
    }
    pthread_mutex_lock(&cm_mu);
    bool we = false;
    int rank, size, local;
    gx_status s = cmi_world_init(&we, &rank, &size, &local);
    if (we)
        cm_we_init = true;
    gx_ctx *ctx = NULL;
    if (s == GX_OK)
        s = cm_world_ctx(kind, local, &ctx);
    if (s == GX_OK)
        s = cm_from_mpi_impl(ctx, NULL, t, true, out);
    if (s == GX_OK) {
        cm_worlds++;
        *ctx_out = ctx;
    } else {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", gx_last_error());
        gx_ctx_destroy(ctx);
        gx__err(s, "%s", msg);
    }
    pthread_mutex_unlock(&cm_mu);
    return s;
}

gx_status gx_comm_from_ctxs(int n, gx_ctx *const *ctxs, const gx_comm_opts *opts, gx_comm **out)
{
    const char *what = "gx_comm_from_ctxs";
    GX__ARG(out, "%s: out is NULL", what);
    GX__ARG(n >= 1, "%s: n = %d; it needs at least one context", what, n);
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    GX__ARG(ctxs, "%s: ctxs is NULL", what);
    double t;
    GX__CHECK(cm_timeout(opts, what, &t));
    for (int i = 0; i < n; i++) {
        GX__CHECK(gx__ctx_check(ctxs[i]));
        if (ctxs[i]->be.iface != ctxs[0]->be.iface)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: ctxs[%d] is on the %s backend but ctxs[0] on %s; one backend "
                           "for all", what, i, ctxs[i]->be.iface->name, ctxs[0]->be.iface->name);
        for (int j = 0; j < i; j++)
            if (ctxs[j] == ctxs[i] || ctxs[j]->be.device == ctxs[i]->be.device)
                return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: ctxs[%d] and ctxs[%d] are on the same device %d; one "
                               "device per rank", what, j, i, ctxs[i]->be.device);
    }
    if (!gx__ctx_supports(ctxs[0], GX__CAP_COMM)) {
        if (n > 1)
            return gx__err(GX_ERR_UNSUPPORTED, "%s: n = %d on the %s backend: one process drives one rank there; "
                           "start %d processes with mpirun -n %d and use gx_comm_world", what, n,
                           ctxs[0]->be.iface->name, n, n);
        return cm_new(ctxs[0], t, &out[0]);
    }
    GX__CHECK(cm_lib_ok(ctxs[0], what));
    gx__backend *bes[64];
    void *libs[64];
    GX__ARG(n <= 64, "%s: n = %d; at most 64 devices", what, n);
    for (int i = 0; i < n; i++)
        bes[i] = &ctxs[i]->be;
    GX__CHECK(ctxs[0]->be.iface->comm.init_all(bes, n, libs));
    for (int i = 0; i < n; i++) {
        gx_status s = cm_new(ctxs[i], t, &out[i]);
        if (s != GX_OK) {
            for (int j = 0; j < n; j++) {
                if (j < i) {
                    out[j]->magic = 0;
                    free(out[j]);
                    out[j] = NULL;
                }
                ctxs[j]->be.iface->comm.destroy(&ctxs[j]->be, libs[j]);
            }
            return s;
        }
        out[i]->tp = CM_LIB, out[i]->lib = libs[i], out[i]->rank = i, out[i]->size = n, out[i]->local_rank = i;
    }
    return GX_OK;
}

gx_status gx_comm_destroy(gx_comm *c)
{
    if (!c)
        return GX_OK;
    GX__CHECK(cm_check(c, "gx_comm_destroy"));
    for (int i = 0; i < c->npend; i++)
        cm_unstage(&c->pend[i], c->broken ? GX_ERR_TIMEOUT : GX_ERR_INTERNAL);
    free(c->pend);
    if (c->lib) {
        if (!c->broken)
            c->ctx->be.iface->comm.destroy(&c->ctx->be, c->lib);
    }
    cmi_free(c->mpi, c->broken);
    c->magic = 0;
    if (c->world) {
        pthread_mutex_lock(&cm_mu);
        /* MPI_Finalize waits for every rank: skip it when this rank gave up on them. */
        if (--cm_worlds == 0 && cm_we_init && !c->broken) {
            cmi_finalize();
            cm_we_init = false;
        }
        pthread_mutex_unlock(&cm_mu);
    }
    free(c);
    return GX_OK;
}

gx_status gx_comm_rank(const gx_comm *c, int *out)
{
    GX__CHECK(cm_check(c, "gx_comm_rank"));
    GX__ARG(out, "gx_comm_rank: out is NULL");
    *out = c->rank;
    return GX_OK;
}

gx_status gx_comm_size(const gx_comm *c, int *out)
{
    GX__CHECK(cm_check(c, "gx_comm_size"));
    GX__ARG(out, "gx_comm_size: out is NULL");
    *out = c->size;
    return GX_OK;
}

gx_status gx_comm_ctx(const gx_comm *c, gx_ctx **out)
{
    GX__CHECK(cm_check(c, "gx_comm_ctx"));
    GX__ARG(out, "gx_comm_ctx: out is NULL");
    *out = c->ctx;
    return GX_OK;
}

gx_status gx_comm_sync(gx_comm *c)
{
    GX__CHECK(cm_usable(c, "gx_comm_sync"));
    if (c->tp != CM_LIB)
        return GX_OK;
    cmi_when w = cm_when(c, "gx_comm_sync");
    const gx__backend_comm *io = &c->ctx->be.iface->comm;
    for (long us = 20;;) {
        bool done = false;
        gx__lock(c->ctx);
        gx_status s = io->poll(&c->ctx->be, c->lib, &done);
        gx__unlock(c->ctx);
        GX__CHECK(cm_note(c, s));
        if (done)
            return GX_OK;
        if (gx__now_ms() > w.deadline_ms)
            return cm_note(c, gx__err(GX_ERR_TIMEOUT,
                                      "gx_comm_sync: the queued collectives did not finish within %g s on rank %d of "
                                      "%d (ranks 0..%d take part): a peer failed or is stuck.  The timeout is "
                                      "gx_comm_opts.timeout_s, else env GX_COMM_TIMEOUT (seconds), else 300.  The "
                                      "communicator is aborted (ncclCommAbort) and broken: destroy it",
                                      c->timeout_s, c->rank, c->size, c->size - 1));
        usleep((useconds_t)us);
        if (us < 1000)
            us *= 2;
    }
}

gx_status gx_comm_describe(const gx_comm *c, gx_comm_desc *out)
{
    GX__CHECK(cm_check(c, "gx_comm_describe"));
    GX__ARG(out, "gx_comm_describe: out is NULL");
    memset(out, 0, sizeof *out);
    out->rank = c->rank, out->size = c->size, out->local_rank = c->local_rank;
    out->device = c->ctx->be.device;
    out->backend = c->ctx->be.iface->kind;
    out->timeout_s = c->timeout_s;
    out->broken = c->broken;
    gethostname(out->host, sizeof out->host - 1);
    if (c->tp == CM_LIB) {
        if (c->ctx->be.iface->comm.version(out->transport, sizeof out->transport) != GX_OK)
            snprintf(out->transport, sizeof out->transport, "the backend's collective library");
    } else if (c->tp == CM_MPI)
        cmi_version(out->transport, sizeof out->transport);
    else
        snprintf(out->transport, sizeof out->transport, "none (size 1: collectives are copies)");
    return GX_OK;
}

#define CM_LINE 256

gx_status gx_comm_info_text(gx_comm *c, char *buf, size_t cap, size_t *needed)
{
    GX__CHECK(cm_usable(c, "gx_comm_info_text"));
    GX__ARG(buf || cap == 0, "gx_comm_info_text: buf is NULL but cap is %zu", cap);
    gx_comm_desc d;
    GX__CHECK(gx_comm_describe(c, &d));
    char mine[CM_LINE];
    snprintf(mine, sizeof mine, "rank %d/%d  host %s  local rank %d  device %d (%s)\n", d.rank, d.size, d.host,
             d.local_rank, d.device, gx_backend_name(d.backend));
    char *all = calloc((size_t)c->size, CM_LINE);
    if (!all)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_comm_info_text: out of host memory");
    gx_status s = GX_OK;
    int lines = 1;
    if (c->mpi) {
        cmi_when w = cm_when(c, "gx_comm_info_text");
        s = cm_note(c, cmi_gather_lines(c->mpi, mine, all, CM_LINE, &w));
        lines = c->rank == 0 ? c->size : 1;
    } else
        snprintf(all, CM_LINE, "%s", mine);
    if (s != GX_OK)
        return s; /* `all` may still be written by MPI: kept */
    gx__sbuf sb = {0};
    gx__sb_printf(&sb, "communicator: %d rank%s, transport %s, timeout %g s\n", d.size, d.size == 1 ? "" : "s",
                  d.transport, d.timeout_s);
    if (c->tp == CM_LIB && c->mpi) {
        char mv[160];
        cmi_version(mv, sizeof mv);
        gx__sb_printf(&sb, "  (unique id exchanged over %s)\n", mv);
    }
    for (int i = 0; i < lines; i++)
        gx__sb_printf(&sb, "  %s", all + (size_t)i * CM_LINE);
    free(all);
    s = gx__sb_export(&sb, buf, cap, needed);
    gx__sb_free(&sb);
    return s;
}

/* ------------------------------------------------------------ running one transfer */

/* The library's collective on dense device memory (the caller staged). */
static gx_status cm_lib_run(gx_comm *c, gx__coll_kind kind, const void *send, void *recv, size_t count, gx_dtype t,
                            gx__redop op, int peer, const char *what)
{
    const gx__backend_comm *io = &c->ctx->be.iface->comm;
    gx__coll k = {kind, send, recv, count, t, op, peer, gx__now_ms() + c->timeout_s * 1000.0, what};
    if (!io->carries(&c->ctx->be, t)) { /* movement only: as bytes */
        k.count = count * gx_dtype_size(t);
        k.dtype = GX_U8;
    }
    gx__lock(c->ctx);
    gx_status s = io->run(&c->ctx->be, c->lib, &k);
    gx__unlock(c->ctx);
    return cm_note(c, s);
}

static gx_status cm_lib_group(gx_comm *c, bool begin, double deadline_ms)
{
    gx__lock(c->ctx);
    gx_status s = c->ctx->be.iface->comm.group(&c->ctx->be, c->lib, begin, deadline_ms);
    gx__unlock(c->ctx);
    return s;
}

/* How the library reduces (op, dtype), or GX_ERR_DTYPE naming it. */
static gx_status cm_lib_redop(gx_comm *c, opn_kind k, gx_dtype t, const char *what, gx_dtype *lt, gx__redop *out)
{
    char lib[160] = "the collective library";
    c->ctx->be.iface->comm.version(lib, sizeof lib);
    *lt = t;
    if (t == GX_BOOL) {
        *lt = GX_U8; /* 0/1 bytes: max is "or", min is "and" */
        if (k == OPN_MAX || k == OPN_LOR || k == OPN_OR) {
            *out = GX__RED_MAX;
            return GX_OK;
        }
        if (k == OPN_MIN || k == OPN_LAND || k == OPN_AND) {
            *out = GX__RED_MIN;
            return GX_OK;
        }
    } else if (c->ctx->be.iface->comm.carries(&c->ctx->be, t)) {
        switch (k) {
        case OPN_ADD: *out = GX__RED_SUM; return GX_OK;
        case OPN_MUL: *out = GX__RED_PROD; return GX_OK;
        case OPN_MAX: *out = GX__RED_MAX; return GX_OK;
        case OPN_MIN: *out = GX__RED_MIN; return GX_OK;
        default: break;
        }
    }
    static const char *const sym[] = {"?", "+", "*", "max", "min", "&", "|", "^", "&&", "||", "count", "mean"};
    const char *os = (unsigned)k < sizeof sym / sizeof sym[0] ? sym[k] : "?";
    return gx__err(GX_ERR_DTYPE, "%s: %s cannot reduce %s data with \"%s\" (it carries i8, u8, i32, u32, i64, "
                   "u64, f16, bf16, f32, f64 with \"+\" \"*\" \"max\" \"min\", and bool with \"max\" \"min\" \"&&\" "
                   "\"||\"); convert the data, or gather it and reduce with gx_reduce_to", what, lib,
                   gx_dtype_name(t), os);
}

/* A staged pair's results come back now, or at gx_comm_group_end. */
static gx_status cm_finish(gx_comm *c, cm_buf *bufs, int n, gx_status s)
{
    if (cm_grouped(c) && s == GX_OK) {
        for (int i = 0; i < n; i++)
            if (s == GX_OK)
                s = cm_defer(c, &bufs[i]);
        if (s == GX_OK)
            return GX_OK;
    }
    for (int i = 0; i < n; i++) {
        gx_status u = cm_unstage(&bufs[i], s);
        if (s == GX_OK)
            s = u;
    }
    return s;
}

/* ------------------------------------------------------------ collectives */

/* MPI's reduction, else every rank's data gathered (all-reduce) or exchanged
 * (reduce-scatter) and folded here in rank order. */
static gx_status cm_mpi_reduce(gx_comm *c, bool scatter, opn_kind k, gx_dtype t, const void *send, void *recv,
                               size_t n, const char *what)
{
    cmi_when w = cm_when(c, what);
    gx_clear_error(); /* "MPI lacks it" is GX_ERR_UNSUPPORTED without a message */
    gx_status s = scatter ? cmi_reduce_scatter(c->mpi, k, t, send, recv, n, &w)
                          : cmi_allreduce(c->mpi, k, t, send, recv, n, &w);
    if (s != GX_ERR_UNSUPPORTED || gx_last_error()[0])
        return cm_note(c, s);
    size_t es = gx_dtype_size(t), blk = n * es;
    unsigned char *all = malloc(blk * (size_t)c->size + 1);
    int64_t *counts = malloc(sizeof(int64_t) * (size_t)c->size);
    if (!all || !counts) {
        free(all), free(counts);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", what);
    }
    for (int r = 0; r < c->size; r++)
        counts[r] = (int64_t)n;
    s = scatter ? cmi_alltoallv(c->mpi, send, counts, all, counts, es, &w)
                : cmi_allgatherv(c->mpi, send, n, all, counts, es, &w);
    if (s == GX_OK) {
        memmove(recv, all, blk);
        for (int r = 1; r < c->size; r++)
            cm_fold(k, t, recv, all + (size_t)r * blk, n);
    }
    if (s != GX_ERR_TIMEOUT)
        free(all), free(counts);
    return cm_note(c, s);
}

static gx_status cm_reduce(gx_comm *c, bool scatter, const char *op, const gx_array *send, gx_array *recv,
                           const char *what)
{
    GX__CHECK(cm_coll(c, what));
    GX__CHECK(cm_array(c, send, what, "send", false));
    GX__CHECK(cm_array(c, recv, what, "recv", true));
    GX__CHECK(cm_same_dtype(send, recv, what));
    opn_kind k = OPN_NONE;
    GX__CHECK(cm_op(op, send->dtype, what, &k));
    bool inplace = send == recv || (!scatter && gx__array_same_layout(send, recv) && send->st == recv->st);
    if (scatter && send == recv)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: send and recv are one array; reduce-scatter needs two", what);
    if (scatter)
        GX__CHECK(cm_size_is(send, recv->size * c->size, what, "send", "size x recv's elements"));
    else
        GX__CHECK(cm_size_is(recv, send->size, what, "recv", "as many as send"));
    if (!inplace && gx__arrays_overlap(recv, send))
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: send and recv overlap; pass the same array for in place%s", what,
                       scatter ? " (not allowed here)" : "");
    gx_dtype lt = send->dtype;
    gx__redop rop = GX__RED_SUM;
    if (c->tp == CM_LIB)
        GX__CHECK(cm_lib_redop(c, k, send->dtype, what, &lt, &rop));
    if (c->tp == CM_NONE || recv->size == 0) /* NCCL runs at size 1 too: that is its test */
        return c->tp == CM_NONE ? cm_copy(send, recv) : GX_OK;
    cm_buf b[2];
    GX__CHECK(cm_stage(c, recv, inplace, true, false, &b[1]));
    gx_status s = GX_OK;
    if (inplace)
        b[0] = (cm_buf){b[1].p, NULL, NULL, NULL};
    else
        s = cm_stage(c, send, true, false, false, &b[0]);
    if (s != GX_OK)
        return cm_unstage(&b[1], s);
    size_t n = (size_t)recv->size;
    if (c->tp == CM_LIB)
        s = cm_lib_run(c, scatter ? GX__COLL_REDUCE_SCATTER : GX__COLL_ALLREDUCE, b[0].p, b[1].p, n, lt, rop, 0, what);
    else
        s = cm_mpi_reduce(c, scatter, k, send->dtype, b[0].p, b[1].p, n, what);
    return cm_finish(c, b, 2, s);
}

gx_status gx_allreduce(gx_comm *c, const char *op, const gx_array *send, gx_array *recv)
{
    return cm_reduce(c, false, op, send, recv, "gx_allreduce");
}

gx_status gx_reduce_scatter(gx_comm *c, const char *op, const gx_array *send, gx_array *recv)
{
    return cm_reduce(c, true, op, send, recv, "gx_reduce_scatter");
}

static gx_status cm_gather(gx_comm *c, const gx_array *send, gx_array *recv, const int64_t *counts, const char *what)
{
    GX__CHECK(cm_coll(c, what));
    GX__CHECK(cm_array(c, send, what, "send", false));
    GX__CHECK(cm_array(c, recv, what, "recv", true));
    GX__CHECK(cm_same_dtype(send, recv, what));
    GX__ARG(send != recv, "%s: send and recv are one array; pass recv's block of this rank (a view) as send", what);
    int64_t total = send->size * c->size;
    if (counts) {
        GX__CHECK(cm_counts(c, counts, what, "counts", &total));
        if (counts[c->rank] != send->size)
            return gx__err(GX_ERR_SHAPE, "%s: counts[%d] = %lld but this rank's send has %lld elements", what, c->rank,
                           (long long)counts[c->rank], (long long)send->size);
        GX__CHECK(cm_size_is(recv, total, what, "recv", "the sum of counts"));
    } else
        GX__CHECK(cm_size_is(recv, total, what, "recv", "size x send's elements"));
    if (c->tp == CM_NONE)
        return cm_copy(send, recv);
    /* send inside recv (its own block): a copy, since the transports read it while
     * they write recv. */
    bool overlap = gx__arrays_overlap(recv, send) || (send->st == recv->st);
    cm_buf b[2];
    GX__CHECK(cm_stage(c, recv, false, true, false, &b[1]));
    gx_status s = cm_stage(c, send, true, false, overlap, &b[0]);
    if (s != GX_OK)
        return cm_unstage(&b[1], s);
    size_t es = gx_dtype_size(send->dtype);
    if (c->tp == CM_LIB && !counts) {
        s = cm_lib_run(c, GX__COLL_ALLGATHER, b[0].p, b[1].p, (size_t)send->size, send->dtype, GX__RED_SUM, 0, what);
    } else if (c->tp == CM_LIB) {
        /* Uneven: one broadcast per rank into its place, in one group. */
        double dl = gx__now_ms() + c->timeout_s * 1000.0;
        s = cm_note(c, cm_lib_group(c, true, dl));
        size_t off = 0;
        for (int r = 0; r < c->size && s == GX_OK; r++) {
            void *dst = (char *)b[1].p + off * es;
            if (counts[r] > 0 && r == c->rank) {
                gx__lock(c->ctx);
                s = c->ctx->be.iface->mem.d2d(&c->ctx->be, dst, b[0].p, (size_t)counts[r] * es);
                gx__unlock(c->ctx);
            }
            if (counts[r] > 0 && s == GX_OK)
                s = cm_lib_run(c, GX__COLL_BROADCAST, dst, dst, (size_t)counts[r], send->dtype, GX__RED_SUM, r, what);
            off += (size_t)counts[r];
        }
        gx_status e = cm_note(c, cm_lib_group(c, false, dl));
        if (s == GX_OK)
            s = e;
    } else {
        int64_t *even = NULL;
        if (!counts) {
            even = malloc(sizeof(int64_t) * (size_t)c->size);
            if (!even)
                s = gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", what);
            for (int r = 0; even && r < c->size; r++)
                even[r] = send->size;
        }
        cmi_when w = cm_when(c, what);
        if (s == GX_OK)
            s = cm_note(c, cmi_allgatherv(c->mpi, b[0].p, (size_t)send->size, b[1].p, counts ? counts : even, es, &w));
        if (s != GX_ERR_TIMEOUT)
            free(even);
    }
    return cm_finish(c, b, 2, s);
}

gx_status gx_allgather(gx_comm *c, const gx_array *send, gx_array *recv)
{
    return cm_gather(c, send, recv, NULL, "gx_allgather");
}

gx_status gx_allgatherv(gx_comm *c, const gx_array *send, gx_array *recv, const int64_t *counts)
{
    GX__ARG(counts, "gx_allgatherv: counts is NULL (it needs one entry per rank)");
    return cm_gather(c, send, recv, counts, "gx_allgatherv");
}

gx_status gx_broadcast(gx_comm *c, int root, gx_array *a)
{
    const char *what = "gx_broadcast";
    GX__CHECK(cm_coll(c, what));
    GX__CHECK(cm_array(c, a, what, "a", true));
    GX__CHECK(cm_rank_arg(c, root, what, "root", false));
    if (c->tp == CM_NONE || a->size == 0)
        return GX_OK;
    cm_buf b;
    GX__CHECK(cm_stage(c, a, c->rank == root, c->rank != root, false, &b));
    gx_status s;
    if (c->tp == CM_LIB)
        s = cm_lib_run(c, GX__COLL_BROADCAST, b.p, b.p, (size_t)a->size, a->dtype, GX__RED_SUM, root, what);
    else {
        cmi_when w = cm_when(c, what);
        s = cm_note(c, cmi_bcast(c->mpi, b.p, (size_t)a->size, gx_dtype_size(a->dtype), root, &w));
    }
    return cm_finish(c, &b, 1, s);
}

/* Point to point through the library, one pair per peer with data, in one group. */
static gx_status cm_lib_exchange(gx_comm *c, const void *send, const int64_t *sc, void *recv, const int64_t *rc,
                                 gx_dtype t, const char *what)
{
    size_t es = gx_dtype_size(t), so = 0, ro = 0;
    double dl = gx__now_ms() + c->timeout_s * 1000.0;
    gx_status s = cm_note(c, cm_lib_group(c, true, dl));
    for (int r = 0; r < c->size && s == GX_OK; r++) {
        if (r == c->rank && sc[r] > 0) { /* this rank's own block: a copy, not a transfer */
            gx__lock(c->ctx);
            s = c->ctx->be.iface->mem.d2d(&c->ctx->be, (char *)recv + ro * es, (const char *)send + so * es,
                                          (size_t)sc[r] * es);
            gx__unlock(c->ctx);
        } else if (sc[r] > 0)
            s = cm_lib_run(c, GX__COLL_SEND, (const char *)send + so * es, NULL, (size_t)sc[r], t, GX__RED_SUM, r, what);
        if (r != c->rank && rc[r] > 0 && s == GX_OK)
            s = cm_lib_run(c, GX__COLL_RECV, NULL, (char *)recv + ro * es, (size_t)rc[r], t, GX__RED_SUM, r, what);
        so += (size_t)sc[r], ro += (size_t)rc[r];
    }
    gx_status e = cm_note(c, cm_lib_group(c, false, dl));
    return s != GX_OK ? s : e;
}

static gx_status cm_a2a(gx_comm *c, const gx_array *send, const int64_t *sc, gx_array *recv, const int64_t *rc,
                        const char *what)
{
    GX__CHECK(cm_coll(c, what));
    GX__CHECK(cm_array(c, send, what, "send", false));
    GX__CHECK(cm_array(c, recv, what, "recv", true));
    GX__CHECK(cm_same_dtype(send, recv, what));
    if (send == recv || gx__arrays_overlap(recv, send))
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: send and recv %s; all-to-all needs two separate arrays", what,
                       send == recv ? "are one array" : "overlap");
    int64_t *even = NULL;
    if (!sc) {
        if (send->size % c->size)
            return cm_size_is(send, (send->size / c->size + 1) * c->size, what, "send",
                              "a multiple of the communicator's size: equal blocks");
        GX__CHECK(cm_size_is(recv, send->size, what, "recv", "as many as send"));
        even = malloc(sizeof(int64_t) * (size_t)c->size);
        if (!even)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", what);
        for (int r = 0; r < c->size; r++)
            even[r] = send->size / c->size;
        sc = rc = even;
    } else {
        int64_t st = 0, rt = 0;
        GX__CHECK(cm_counts(c, sc, what, "send_counts", &st));
        GX__CHECK(cm_counts(c, rc, what, "recv_counts", &rt));
        GX__CHECK(cm_size_is(send, st, what, "send", "the sum of send_counts"));
        GX__CHECK(cm_size_is(recv, rt, what, "recv", "the sum of recv_counts"));
        if (sc[c->rank] != rc[c->rank])
            return gx__err(GX_ERR_SHAPE, "%s: this rank (%d) sends itself %lld elements but receives %lld from itself",
                           what, c->rank, (long long)sc[c->rank], (long long)rc[c->rank]);
    }
    gx_status s = GX_OK;
    if (c->tp == CM_NONE) {
        s = cm_copy(send, recv);
        free(even);
        return s;
    }
    cm_buf b[2];
    s = cm_stage(c, recv, false, true, false, &b[1]);
    if (s == GX_OK) {
        s = cm_stage(c, send, true, false, false, &b[0]);
        if (s != GX_OK)
            s = cm_unstage(&b[1], s);
        else {
            if (c->tp == CM_LIB)
                s = cm_lib_exchange(c, b[0].p, sc, b[1].p, rc, send->dtype, what);
            else {
                cmi_when w = cm_when(c, what);
                s = cm_note(c, cmi_alltoallv(c->mpi, b[0].p, sc, b[1].p, rc, gx_dtype_size(send->dtype), &w));
            }
            s = cm_finish(c, b, 2, s);
        }
    }
    if (s != GX_ERR_TIMEOUT)
        free(even);
    return s;
}

gx_status gx_alltoall(gx_comm *c, const gx_array *send, gx_array *recv)
{
    return cm_a2a(c, send, NULL, recv, NULL, "gx_alltoall");
}

gx_status gx_alltoallv(gx_comm *c, const gx_array *send, const int64_t *send_counts, gx_array *recv,
                       const int64_t *recv_counts)
{
    GX__ARG(send_counts && recv_counts, "gx_alltoallv: %s is NULL (one entry per rank)",
            send_counts ? "recv_counts" : "send_counts");
    return cm_a2a(c, send, send_counts, recv, recv_counts, "gx_alltoallv");
}

static gx_status cm_p2p(gx_comm *c, bool send, int peer, gx_array *a, const char *what)
{
    GX__CHECK(cm_coll(c, what));
    GX__CHECK(cm_array(c, a, what, "a", !send));
    GX__CHECK(cm_rank_arg(c, peer, what, "peer", true));
    cm_buf b;
    GX__CHECK(cm_stage(c, a, send, !send, false, &b));
    gx_status s;
    if (c->tp == CM_LIB) {
        s = cm_lib_run(c, send ? GX__COLL_SEND : GX__COLL_RECV, b.p, b.p, (size_t)a->size, a->dtype, GX__RED_SUM,
                       peer, what);
    } else {
        s = cmi_post(c->mpi, send, b.p, (size_t)a->size, gx_dtype_size(a->dtype), peer);
        if (s == GX_OK && c->depth == 0) {
            cmi_when w = cm_when(c, what);
            s = cm_note(c, cmi_wait_posted(c->mpi, &w));
        }
    }
    return cm_finish(c, &b, 1, s);
}

gx_status gx_send(gx_comm *c, int peer, const gx_array *a) { return cm_p2p(c, true, peer, (gx_array *)a, "gx_send"); }

gx_status gx_recv(gx_comm *c, int peer, gx_array *a) { return cm_p2p(c, false, peer, a, "gx_recv"); }

gx_status gx_comm_group_begin(gx_comm *c)
{
    GX__CHECK(cm_usable(c, "gx_comm_group_begin"));
    if (c->tp == CM_LIB) {
        gx__lock(c->ctx);
        gx_status s = c->ctx->be.iface->comm.group(&c->ctx->be, c->lib, true, 0);
        gx__unlock(c->ctx);
        GX__CHECK(s);
        cm_tl_depth++;
        return GX_OK;
    }
    c->depth++;
    return GX_OK;
}

gx_status gx_comm_group_end(gx_comm *c)
{
    const char *what = "gx_comm_group_end";
    GX__CHECK(cm_usable(c, what));
    if (c->tp == CM_LIB) {
        if (cm_tl_depth == 0)
            return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: no group is open on this thread (call gx_comm_group_begin "
                           "first)", what);
        gx__lock(c->ctx);
        gx_status s = c->ctx->be.iface->comm.group(&c->ctx->be, c->lib, false, gx__now_ms() + c->timeout_s * 1000.0);
        gx__unlock(c->ctx);
        s = cm_note(c, s);
        if (--cm_tl_depth > 0)
            return s;
        return cm_flush(cm_tl_pend, &cm_tl_npend, s);
    }
    if (c->depth == 0)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "%s: no group is open (call gx_comm_group_begin first)", what);
    gx_status s = GX_OK;
    if (--c->depth > 0)
        return s;
    if (c->tp == CM_MPI) {
        cmi_when w = cm_when(c, what);
        s = cm_note(c, cmi_wait_posted(c->mpi, &w));
    }
    return cm_flush(c->pend, &c->npend, s);
}
