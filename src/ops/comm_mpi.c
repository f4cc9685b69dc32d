/* comm_mpi.c -- gx/comm.h's transport on host memory: MPI (see comm_priv.h).
 *
 * Every operation is MPI's nonblocking form (MPI_Iallreduce, MPI_Ibcast, ...), then
 * MPI_Testall in a loop until it completes or the deadline passes: a blocking MPI
 * call cannot be given a time limit, and a rank that never joins would hang the
 * others for good.  Elements move as contiguous types of their size, so counts stay
 * element counts (MPI counts are int: beyond INT_MAX elements is GX_ERR_UNSUPPORTED). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ops/comm_priv.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

/* ------------------------------------------------------------ host fold (both builds) */

#define CM_FOLD_INT(T)                                                                                    \
    do {                                                                                                  \
        T *a = acc;                                                                                       \
        const T *b = x;                                                                                   \
        for (size_t i = 0; i < n; i++)                                                                    \
            switch (op) {                                                                                 \
            case OPN_ADD: a[i] = (T)(a[i] + b[i]); break;                                                 \
            case OPN_MUL: a[i] = (T)(a[i] * b[i]); break;                                                 \
            case OPN_MAX: a[i] = b[i] > a[i] ? b[i] : a[i]; break;                                        \
            case OPN_MIN: a[i] = b[i] < a[i] ? b[i] : a[i]; break;                                        \
            case OPN_AND: a[i] = (T)(a[i] & b[i]); break;                                                 \
            case OPN_OR: a[i] = (T)(a[i] | b[i]); break;                                                  \
            case OPN_XOR: a[i] = (T)(a[i] ^ b[i]); break;                                                 \
            case OPN_LAND: a[i] = (T)(a[i] && b[i]); break;                                               \
            case OPN_LOR: a[i] = (T)(a[i] || b[i]); break;                                                \
            default: break;                                                                               \
            }                                                                                             \
    } while (0)

/* Floats (and halves through double): max/min keep the number over a NaN. */
static double cm_fold_f(opn_kind op, double a, double b)
{
    switch (op) {
    case OPN_ADD: return a + b;
    case OPN_MUL: return a * b;
    case OPN_MAX: return (b > a || a != a) ? b : a;
    case OPN_MIN: return (b < a || a != a) ? b : a;
    default: return a;
    }
}

void cm_fold(opn_kind op, gx_dtype t, void *acc, const void *x, size_t n)
{
    switch (t) {
    case GX_BOOL:
    case GX_U8: CM_FOLD_INT(uint8_t); break;
    case GX_I8: CM_FOLD_INT(int8_t); break;
    case GX_I16: CM_FOLD_INT(int16_t); break;
    case GX_U16: CM_FOLD_INT(uint16_t); break;
    case GX_I32: CM_FOLD_INT(int32_t); break;
    case GX_U32: CM_FOLD_INT(uint32_t); break;
    case GX_I64: CM_FOLD_INT(int64_t); break;
    case GX_U64: CM_FOLD_INT(uint64_t); break;
    case GX_F32: {
        float *a = acc;
        const float *b = x;
        for (size_t i = 0; i < n; i++)
            a[i] = (float)cm_fold_f(op, a[i], b[i]);
        break;
    }
    case GX_F64: {
        double *a = acc;
        const double *b = x;
        for (size_t i = 0; i < n; i++)
            a[i] = cm_fold_f(op, a[i], b[i]);
        break;
    }
    case GX_F16:
    case GX_BF16: {
        uint16_t *a = acc;
        const uint16_t *b = x;
        for (size_t i = 0; i < n; i++)
            gx__dtype_from_f64(t, cm_fold_f(op, gx__dtype_to_f64(t, &a[i]), gx__dtype_to_f64(t, &b[i])), &a[i]);
        break;
    }
    case GX_C64:
    case GX_C128: {
        bool d = t == GX_C128;
        for (size_t i = 0; i < n; i++) {
            double ar, ai, br, bi;
            if (d) {
                ar = ((double *)acc)[2 * i], ai = ((double *)acc)[2 * i + 1];
                br = ((const double *)x)[2 * i], bi = ((const double *)x)[2 * i + 1];
            } else {
                ar = ((float *)acc)[2 * i], ai = ((float *)acc)[2 * i + 1];
                br = ((const float *)x)[2 * i], bi = ((const float *)x)[2 * i + 1];
            }
            double rr = op == OPN_MUL ? ar * br - ai * bi : ar + br, ri = op == OPN_MUL ? ar * bi + ai * br : ai + bi;
            if (d) {
                ((double *)acc)[2 * i] = rr, ((double *)acc)[2 * i + 1] = ri;
            } else {
                ((float *)acc)[2 * i] = (float)rr, ((float *)acc)[2 * i + 1] = (float)ri;
            }
        }
        break;
    }
    default: break;
    }
}

#ifndef GX_HAVE_MPI

/* ------------------------------------------------------------ without MPI */

static gx_status cmi_absent(void)
{
    return gx__err(GX_ERR_UNSUPPORTED, "gx was built without MPI: install libopenmpi-dev (scripts/deps) and "
                                       "rebuild for communicators over several processes");
}
bool cmi_available(void) { return false; }
gx_status cmi_world_init(bool *we_init, int *rank, int *size, int *local_rank)
{
    *we_init = false, *rank = 0, *size = 1, *local_rank = 0;
    return GX_OK;
}
void cmi_finalize(void) {}
gx_status cmi_make(const void *mpi_comm, cmi **out, int *rank, int *size)
{
    (void)mpi_comm, (void)rank, (void)size;
    *out = NULL;
    return cmi_absent();
}
void cmi_free(cmi *m, bool broken) { (void)m, (void)broken; }
void cmi_version(char *buf, size_t n) { snprintf(buf, n, "none (gx built without MPI)"); }
int cmi_local_rank(void) { return 0; }
gx_status cmi_allreduce(cmi *m, opn_kind op, gx_dtype t, const void *send, void *recv, size_t n, const cmi_when *w)
{
    (void)m, (void)op, (void)t, (void)send, (void)recv, (void)n, (void)w;
    return cmi_absent();
}
gx_status cmi_reduce_scatter(cmi *m, opn_kind op, gx_dtype t, const void *send, void *recv, size_t n,
                             const cmi_when *w)
{
    (void)m, (void)op, (void)t, (void)send, (void)recv, (void)n, (void)w;
    return cmi_absent();
}
gx_status cmi_allgatherv(cmi *m, const void *send, size_t n, void *recv, const int64_t *counts, size_t esize,
                         const cmi_when *w)
{
    (void)m, (void)send, (void)n, (void)recv, (void)counts, (void)esize, (void)w;
    return cmi_absent();
}
gx_status cmi_bcast(cmi *m, void *buf, size_t n, size_t esize, int root, const cmi_when *w)
{
    (void)m, (void)buf, (void)n, (void)esize, (void)root, (void)w;
    return cmi_absent();
}
gx_status cmi_alltoallv(cmi *m, const void *send, const int64_t *scounts, void *recv, const int64_t *rcounts,
                        size_t esize, const cmi_when *w)
{
    (void)m, (void)send, (void)scounts, (void)recv, (void)rcounts, (void)esize, (void)w;
    return cmi_absent();
}
gx_status cmi_post(cmi *m, bool send, void *buf, size_t n, size_t esize, int peer)
{
    (void)m, (void)send, (void)buf, (void)n, (void)esize, (void)peer;
    return cmi_absent();
}
gx_status cmi_wait_posted(cmi *m, const cmi_when *w)
{
    (void)m, (void)w;
    return GX_OK;
}
gx_status cmi_gather_lines(cmi *m, const char *mine, char *all, size_t line, const cmi_when *w)
{
    (void)m, (void)w;
    snprintf(all, line, "%s", mine);
    return GX_OK;
}

#else

/* ------------------------------------------------------------ with MPI */

#include <mpi.h>

#define CMI_ESIZES 5 /* 1, 2, 4, 8, 16 bytes */

struct cmi {
    MPI_Comm comm;
    int rank, size;
    MPI_Datatype bytes[CMI_ESIZES]; /* contiguous types of 1..16 bytes, made on first use */
    MPI_Request *posted;           /* point to point requests awaiting cmi_wait_posted */
    int nposted, capposted;
};

bool cmi_available(void) { return true; }

static gx_status cmi_fail(int rc, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return gx__err(GX_ERR_BACKEND, "%s failed: MPI error %d (%s)", call, rc, msg);
}
#define CMI_CALL(call)                           \
    do {                                         \
        int cmi_rc_ = (call);                    \
        if (cmi_rc_ != MPI_SUCCESS)              \
            return cmi_fail(cmi_rc_, #call);     \
    } while (0)

int cmi_local_rank(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!v)
        v = getenv("MPI_LOCALRANKID"); /* MPICH */
    return v ? atoi(v) : 0;
}

gx_status cmi_world_init(bool *we_init, int *rank, int *size, int *local_rank)
{
    int inited = 0, finalized = 0;
    *we_init = false;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (finalized)
        return gx__err(GX_ERR_UNSUPPORTED, "gx_comm_world: MPI was finalised already in this process; MPI cannot "
                                           "be started twice");
    if (!inited) {
        int provided = 0;
        CMI_CALL(MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided));
        *we_init = true;
    }
    /* MPI's own errors come back as codes (gx turns them into statuses), never an abort. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CMI_CALL(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    CMI_CALL(MPI_Comm_size(MPI_COMM_WORLD, size));
    *local_rank = cmi_local_rank();
    return GX_OK;
}

void cmi_finalize(void)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Finalize();
}

gx_status cmi_make(const void *mpi_comm, cmi **out, int *rank, int *size)
{
    int inited = 0;
    *out = NULL;
    MPI_Initialized(&inited);
    if (!inited)
        return gx__err(GX_ERR_INVALID_ARGUMENT, "gx_comm_from_mpi: MPI is not initialised (call MPI_Init first, or "
                                                "use gx_comm_world)");
    cmi *m = calloc(1, sizeof *m);
    if (!m)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "gx_comm: out of host memory");
    MPI_Comm base = mpi_comm ? *(const MPI_Comm *)mpi_comm : MPI_COMM_WORLD;
    /* Our own copy: gx's messages never match the program's, and its errors return. */
    int rc = MPI_Comm_dup(base, &m->comm);
    if (rc != MPI_SUCCESS) {
        free(m);
        return cmi_fail(rc, "MPI_Comm_dup");
    }
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    for (int i = 0; i < CMI_ESIZES; i++)
        m->bytes[i] = MPI_DATATYPE_NULL;
    *rank = m->rank, *size = m->size;
    *out = m;
    return GX_OK;
}

void cmi_free(cmi *m, bool broken)
{
    if (!m)
        return;
    if (!broken) {
        for (int i = 0; i < CMI_ESIZES; i++)
            if (m->bytes[i] != MPI_DATATYPE_NULL)
                MPI_Type_free(&m->bytes[i]);
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized)
            MPI_Comm_free(&m->comm);
        free(m->posted);
    }
    /* Broken: a request may still point at the communicator, the types and the
     * request array, so they stay (a small leak in a job that has to end anyway). */
    free(broken ? NULL : m);
}

void cmi_version(char *buf, size_t n)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(v, &len);
    char *nl = strpbrk(v, "\n\r");
    if (nl)
        *nl = 0;
    snprintf(buf, n, "%s", v);
}

/* The contiguous type of esize bytes (1, 2, 4, 8 or 16). */
static gx_status cmi_type(cmi *m, size_t esize, MPI_Datatype *out)
{
    int k = esize == 1 ? 0 : esize == 2 ? 1 : esize == 4 ? 2 : esize == 8 ? 3 : esize == 16 ? 4 : -1;
    if (k < 0)
        return gx__err(GX_ERR_INTERNAL, "gx_comm: no MPI type for elements of %zu bytes", esize);
    if (m->bytes[k] == MPI_DATATYPE_NULL) {
        CMI_CALL(MPI_Type_contiguous((int)esize, MPI_BYTE, &m->bytes[k]));
        CMI_CALL(MPI_Type_commit(&m->bytes[k]));
    }
    *out = m->bytes[k];
    return GX_OK;
}

static gx_status cmi_int(size_t n, const cmi_when *w, int *out)
{
    if (n > (size_t)INT_MAX)
        return gx__err(GX_ERR_UNSUPPORTED, "%s: %zu elements in one MPI transfer; MPI counts stop at %d (split it)",
                       w->what, n, INT_MAX);
    *out = (int)n;
    return GX_OK;
}

/* Polls the requests until all complete or the deadline passes.  MPI moves data only
 * inside its calls, so the first 100 ms poll back to back (yielding the core, which
 * oversubscribed ranks share); after that the pause grows to 1 ms, so a rank waiting
 * for a slow or lost peer does not spin. */
static gx_status cmi_wait(cmi *m, MPI_Request *req, int n, const cmi_when *w)
{
    double t0 = gx__now_ms();
    long ns = 10000;
    for (;;) {
        int done = 0;
        int rc = MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS)
            return cmi_fail(rc, "MPI_Testall");
        if (done)
            return GX_OK;
        double now = gx__now_ms();
        if (now > w->deadline_ms)
            return gx__err(GX_ERR_TIMEOUT,
                           "%s: not finished after %g s on rank %d of %d (ranks 0..%d take part): a peer failed, "
                           "exited or is stuck, or the ranks called collectives in different orders.  The timeout "
                           "is gx_comm_opts.timeout_s, else env GX_COMM_TIMEOUT (seconds), else 300.  The "
                           "communicator is broken: destroy it and end the job (MPI_Abort)",
                           w->what, w->timeout_s, m->rank, m->size, m->size - 1);
        if (now - t0 < 100) {
            sched_yield();
            continue;
        }
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        if (ns < 1000000)
            ns *= 2;
    }
}

/* gx dtype -> MPI's predefined type, and operator -> MPI_Op: false where MPI lacks
 * them or means something else (float max/min and NaN). */
static bool cmi_native(opn_kind op, gx_dtype t, MPI_Datatype *dt, MPI_Op *mop)
{
    switch (t) {
    case GX_BOOL:
    case GX_U8: *dt = MPI_UINT8_T; break;
    case GX_I8: *dt = MPI_INT8_T; break;
    case GX_I16: *dt = MPI_INT16_T; break;
    case GX_U16: *dt = MPI_UINT16_T; break;
    case GX_I32: *dt = MPI_INT32_T; break;
    case GX_U32: *dt = MPI_UINT32_T; break;
    case GX_I64: *dt = MPI_INT64_T; break;
    case GX_U64: *dt = MPI_UINT64_T; break;
    case GX_F32: *dt = MPI_FLOAT; break;
    case GX_F64: *dt = MPI_DOUBLE; break;
    case GX_C64: *dt = MPI_C_FLOAT_COMPLEX; break;
    case GX_C128: *dt = MPI_C_DOUBLE_COMPLEX; break;
    default: return false; /* f16, bf16 */
    }
    bool fl = gx__dtype_is_float(t) || gx__dtype_is_complex(t);
    switch (op) {
    case OPN_ADD: *mop = MPI_SUM; return true;
    case OPN_MUL: *mop = MPI_PROD; return true;
    case OPN_MAX: *mop = MPI_MAX; return !fl;
    case OPN_MIN: *mop = MPI_MIN; return !fl;
    case OPN_AND: *mop = MPI_BAND; return !fl;
    case OPN_OR: *mop = MPI_BOR; return !fl;
    case OPN_XOR: *mop = MPI_BXOR; return !fl;
    case OPN_LAND: *mop = MPI_LAND; return !fl;
    case OPN_LOR: *mop = MPI_LOR; return !fl;
    default: return false;
    }
}

gx_status cmi_allreduce(cmi *m, opn_kind op, gx_dtype t, const void *send, void *recv, size_t n, const cmi_when *w)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_Op mop = MPI_OP_NULL;
    if (!cmi_native(op, t, &dt, &mop))
        return GX_ERR_UNSUPPORTED;
    int cnt = 0;
    GX__CHECK(cmi_int(n, w, &cnt));
    MPI_Request req;
    CMI_CALL(MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, cnt, dt, mop, m->comm, &req));
    return cmi_wait(m, &req, 1, w);
}

gx_status cmi_reduce_scatter(cmi *m, opn_kind op, gx_dtype t, const void *send, void *recv, size_t n,
                             const cmi_when *w)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    MPI_Op mop = MPI_OP_NULL;
    if (!cmi_native(op, t, &dt, &mop))
        return GX_ERR_UNSUPPORTED;
    int cnt = 0;
    GX__CHECK(cmi_int(n * (size_t)m->size, w, &cnt));
    MPI_Request req;
    CMI_CALL(MPI_Ireduce_scatter_block(send, recv, (int)n, dt, mop, m->comm, &req));
    return cmi_wait(m, &req, 1, w);
}

/* Per-rank int counts and displacements (elements) for the v-forms. */
static gx_status cmi_layout(cmi *m, const int64_t *counts, const cmi_when *w, int **cnt, int **dsp)
{
    *cnt = malloc(sizeof(int) * (size_t)m->size);
    *dsp = malloc(sizeof(int) * (size_t)m->size);
    if (!*cnt || !*dsp) {
        free(*cnt), free(*dsp);
        *cnt = *dsp = NULL;
        return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", w->what);
    }
    size_t off = 0;
    for (int r = 0; r < m->size; r++) {
        gx_status s = cmi_int(off, w, &(*dsp)[r]);
        if (s == GX_OK)
            s = cmi_int((size_t)counts[r], w, &(*cnt)[r]);
        if (s != GX_OK) {
            free(*cnt), free(*dsp);
            *cnt = *dsp = NULL;
            return s;
        }
        off += (size_t)counts[r];
    }
    return GX_OK;
}

gx_status cmi_allgatherv(cmi *m, const void *send, size_t n, void *recv, const int64_t *counts, size_t esize,
                         const cmi_when *w)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    GX__CHECK(cmi_type(m, esize, &dt));
    int cnt = 0, *rc, *dsp;
    GX__CHECK(cmi_int(n, w, &cnt));
    GX__CHECK(cmi_layout(m, counts, w, &rc, &dsp));
    MPI_Request req;
    int e = MPI_Iallgatherv(send, cnt, dt, recv, rc, dsp, dt, m->comm, &req);
    gx_status s = e == MPI_SUCCESS ? cmi_wait(m, &req, 1, w) : cmi_fail(e, "MPI_Iallgatherv");
    /* MPI keeps pointers to the count arrays until the request completes. */
    if (s != GX_ERR_TIMEOUT)
        free(rc), free(dsp);
    return s;
}

gx_status cmi_bcast(cmi *m, void *buf, size_t n, size_t esize, int root, const cmi_when *w)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    GX__CHECK(cmi_type(m, esize, &dt));
    int cnt = 0;
    GX__CHECK(cmi_int(n, w, &cnt));
    MPI_Request req;
    CMI_CALL(MPI_Ibcast(buf, cnt, dt, root, m->comm, &req));
    return cmi_wait(m, &req, 1, w);
}

gx_status cmi_alltoallv(cmi *m, const void *send, const int64_t *scounts, void *recv, const int64_t *rcounts,
                        size_t esize, const cmi_when *w)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    GX__CHECK(cmi_type(m, esize, &dt));
    int *sc, *sd, *rc, *rd;
    GX__CHECK(cmi_layout(m, scounts, w, &sc, &sd));
    gx_status s = cmi_layout(m, rcounts, w, &rc, &rd);
    if (s != GX_OK) {
        free(sc), free(sd);
        return s;
    }
    MPI_Request req;
    int e = MPI_Ialltoallv(send, sc, sd, dt, recv, rc, rd, dt, m->comm, &req);
    s = e == MPI_SUCCESS ? cmi_wait(m, &req, 1, w) : cmi_fail(e, "MPI_Ialltoallv");
    if (s != GX_ERR_TIMEOUT)
        free(sc), free(sd), free(rc), free(rd);
    return s;
}

gx_status cmi_post(cmi *m, bool send, void *buf, size_t n, size_t esize, int peer)
{
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    GX__CHECK(cmi_type(m, esize, &dt));
    cmi_when w = {0, 0, send ? "gx_send" : "gx_recv"};
    int cnt = 0;
    GX__CHECK(cmi_int(n, &w, &cnt));
    if (m->nposted == m->capposted) {
        int cap = m->capposted ? 2 * m->capposted : 16;
        MPI_Request *p = realloc(m->posted, sizeof *p * (size_t)cap);
        if (!p)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", w.what);
        m->posted = p, m->capposted = cap;
    }
    /* One tag for all: MPI keeps messages between a pair of ranks in order, and so
     * the n-th gx_send to a peer matches its n-th gx_recv. */
    MPI_Request *req = &m->posted[m->nposted];
    if (send)
        CMI_CALL(MPI_Isend(buf, cnt, dt, peer, 7, m->comm, req));
    else
        CMI_CALL(MPI_Irecv(buf, cnt, dt, peer, 7, m->comm, req));
    m->nposted++;
    return GX_OK;
}

gx_status cmi_wait_posted(cmi *m, const cmi_when *w)
{
    if (m->nposted == 0)
        return GX_OK;
    gx_status s = cmi_wait(m, m->posted, m->nposted, w);
    if (s == GX_OK)
        m->nposted = 0;
    return s;
}

gx_status cmi_gather_lines(cmi *m, const char *mine, char *all, size_t line, const cmi_when *w)
{
    char *buf = calloc(1, line);
    if (!buf)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "%s: out of host memory", w->what);
    snprintf(buf, line, "%s", mine);
    MPI_Request req;
    int e = MPI_Igather(buf, (int)line, MPI_CHAR, all, (int)line, MPI_CHAR, 0, m->comm, &req);
    gx_status s = e == MPI_SUCCESS ? cmi_wait(m, &req, 1, w) : cmi_fail(e, "MPI_Igather");
    if (s != GX_ERR_TIMEOUT)
        free(buf);
    if (m->rank != 0)
        snprintf(all, line, "%s", mine);
    return s;
}

#endif /* GX_HAVE_MPI */
