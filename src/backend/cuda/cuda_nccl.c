/* cuda_nccl.c -- the comm slots of the CUDA backend (GX__CAP_COMM): NCCL, loaded on
 * first use through cuda_dl.c like cuBLAS.
 *
 * Where libnccl.so.2 comes from: $GX_NCCL_LIB (a full path) first when set, then the
 * dynamic loader's search (LD_LIBRARY_PATH, the ld.so cache), then the CUDA toolkit's
 * lib64.  gx does not hunt through Python packages: point GX_NCCL_LIB at PyTorch's
 * copy (site-packages/nvidia/nccl/lib/libnccl.so.2) where that is the one there is.
 *
 * nccl.h is not needed to build: the few types and constants gx uses are NCCL's
 * stable ABI, declared below.  NVLink multicast (NVLS) is switched off before the
 * first NCCL call (NCCL_NVLS_ENABLE=0 unless the environment says otherwise).
 *
 * Timeouts: communicators over several processes are made nonblocking
 * (ncclCommInitRankConfig with blocking = 0, NCCL 2.14 and newer; blocking with
 * older NCCL), so every call returns at once and gx polls ncclCommGetAsyncError
 * until the deadline, then ncclCommAbort. */
#include "backend/cuda/cuda_priv.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ NCCL's ABI */

typedef struct nccl_comm_s *nccl_comm;
typedef struct {
    char internal[128];
} nccl_id;
typedef int nccl_result; /* ncclResult_t */
enum { NCCL_OK = 0, NCCL_INVALID_ARGUMENT = 4, NCCL_INVALID_USAGE = 5, NCCL_IN_PROGRESS = 7 };
/* ncclConfig_t as NCCL 2.14 laid it out; newer NCCL reads older layouts by their
 * size and version fields. */
typedef struct {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking, cga_cluster_size, min_ctas, max_ctas;
    const char *net_name;
} nccl_config;

#define NCCL_FUNCS(X)                                                                                              \
    X(GetVersion, "ncclGetVersion", nccl_result (*)(int *), 1)                                                     \
    X(GetUniqueId, "ncclGetUniqueId", nccl_result (*)(nccl_id *), 1)                                               \
    X(CommInitRank, "ncclCommInitRank", nccl_result (*)(nccl_comm *, int, nccl_id, int), 1)                         \
    X(CommInitRankConfig, "ncclCommInitRankConfig", nccl_result (*)(nccl_comm *, int, nccl_id, int, nccl_config *), \
      0)                                                                                                           \
    X(CommInitAll, "ncclCommInitAll", nccl_result (*)(nccl_comm *, int, const int *), 1)                           \
    X(CommDestroy, "ncclCommDestroy", nccl_result (*)(nccl_comm), 1)                                               \
    X(CommAbort, "ncclCommAbort", nccl_result (*)(nccl_comm), 1)                                                   \
    X(CommGetAsyncError, "ncclCommGetAsyncError", nccl_result (*)(nccl_comm, nccl_result *), 1)                    \
    X(GetErrorString, "ncclGetErrorString", const char *(*)(nccl_result), 1)                                       \
    X(GetLastError, "ncclGetLastError", const char *(*)(nccl_comm), 0)                                             \
    X(AllReduce, "ncclAllReduce", nccl_result (*)(const void *, void *, size_t, int, int, nccl_comm, void *), 1)   \
    X(ReduceScatter, "ncclReduceScatter",                                                                          \
      nccl_result (*)(const void *, void *, size_t, int, int, nccl_comm, void *), 1)                               \
    X(AllGather, "ncclAllGather", nccl_result (*)(const void *, void *, size_t, int, nccl_comm, void *), 1)        \
    X(Broadcast, "ncclBroadcast", nccl_result (*)(const void *, void *, size_t, int, int, nccl_comm, void *), 1)   \
    X(Send, "ncclSend", nccl_result (*)(const void *, size_t, int, int, nccl_comm, void *), 1)                     \
    X(Recv, "ncclRecv", nccl_result (*)(void *, size_t, int, int, nccl_comm, void *), 1)                           \
    X(GroupStart, "ncclGroupStart", nccl_result (*)(void), 1)                                                      \
    X(GroupEnd, "ncclGroupEnd", nccl_result (*)(void), 1)

#define NCCL_FIELD(f, name, type, req) __typeof__(type) f;
static struct {
    NCCL_FUNCS(NCCL_FIELD)
} nccl;
#undef NCCL_FIELD
#define NCCL_SYM(f, name, type, req) {name, &nccl.f, req},
static const cuda_dl_sym nccl_syms[] = {NCCL_FUNCS(NCCL_SYM)};
#undef NCCL_SYM

static const char *nccl_names[4];
static cuda_dl_lib nccl_lib = {
    .what = "NCCL",
    .names = nccl_names,
    .toolkit_dirs = true,
    .syms = nccl_syms,
    .nsyms = sizeof nccl_syms / sizeof nccl_syms[0],
    .fix_absent = "set GX_NCCL_LIB to the full path of libnccl.so.2 (e.g. PyTorch's "
                  "site-packages/nvidia/nccl/lib/libnccl.so.2) or add its folder to LD_LIBRARY_PATH",
    .fix_old = "use NCCL 2.7 or newer",
};
static int nccl_version_code;

static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;
static void nccl_load(void)
{
    int n = 0;
    const char *env = getenv("GX_NCCL_LIB");
    if (env && *env)
        nccl_names[n++] = env;
    nccl_names[n++] = "libnccl.so.2";
    nccl_names[n++] = "libnccl.so";
    nccl_names[n] = NULL;
    /* Before NCCL reads its environment: multicast objects stay off (issue 23). */
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    if (cuda_dl_open(&nccl_lib) && nccl.GetVersion(&nccl_version_code) != NCCL_OK)
        nccl_version_code = 0;
}

static gx_status nccl_ready(const char *what)
{
    pthread_once(&nccl_once, nccl_load);
    if (!nccl_lib.ok)
        return gx__err(GX_ERR_UNSUPPORTED, "%s: %s", what, nccl_lib.problem);
    return GX_OK;
}

static gx_status nccl_fail(nccl_result r, nccl_comm c, const char *what, const char *call)
{
    const char *last = c && nccl.GetLastError ? nccl.GetLastError(c) : "";
    gx_status s = r == NCCL_INVALID_ARGUMENT || r == NCCL_INVALID_USAGE ? GX_ERR_INVALID_ARGUMENT : GX_ERR_BACKEND;
    return gx__err(s, "%s: %s failed: NCCL %d (%s)%s%s", what, call, r, nccl.GetErrorString(r), last && *last ? ": " : "",
                   last ? last : "");
}

/* A nonblocking communicator's call may return "in progress": wait for it here, so
 * the next call finds the communicator ready, until the deadline.  A timeout leaves
 * the communicator to the caller, who aborts it once (src/ops/comm.c, cm_note). */
static gx_status nccl_settle(nccl_comm c, nccl_result r, double deadline_ms, const char *what, const char *call)
{
    long us = 10;
    while (r == NCCL_IN_PROGRESS) {
        if (gx__now_ms() > deadline_ms)
            return gx__err(GX_ERR_TIMEOUT, "%s: %s still in progress at the deadline (a peer failed or is stuck); "
                           "the timeout is gx_comm_opts.timeout_s, else env GX_COMM_TIMEOUT (seconds), else 300.  The "
                           "NCCL communicator is aborted and broken: destroy it", what, call);
        usleep((useconds_t)us);
        if (us < 1000)
            us *= 2;
        nccl_result st = nccl.CommGetAsyncError(c, &r);
        if (st != NCCL_OK)
            r = st;
    }
    return r == NCCL_OK ? GX_OK : nccl_fail(r, c, what, call);
}

/* ------------------------------------------------------------ slots */

bool cuda_nccl_carries(gx__backend *be, gx_dtype t)
{
    (void)be;
    switch (t) {
    case GX_I8:
    case GX_U8:
    case GX_I32:
    case GX_U32:
    case GX_I64:
    case GX_U64:
    case GX_F16:
    case GX_F32:
    case GX_F64: return true;
    case GX_BF16: return nccl_version_code >= 21000; /* ncclBfloat16 came with 2.10 */
    default: return false;
    }
}

static int nccl_dtype(gx_dtype t)
{
    switch (t) {
    case GX_I8: return 0;
    case GX_I32: return 2;
    case GX_U32: return 3;
    case GX_I64: return 4;
    case GX_U64: return 5;
    case GX_F16: return 6;
    case GX_F32: return 7;
    case GX_F64: return 8;
    case GX_BF16: return 9;
    default: return 1; /* ncclUint8: bytes */
    }
}

gx_status cuda_nccl_unique_id(gx__backend *be, void *id, size_t cap, size_t *len)
{
    (void)be;
    GX__CHECK(nccl_ready("gx_comm"));
    if (cap < sizeof(nccl_id))
        return gx__err(GX_ERR_INTERNAL, "gx_comm: %zu bytes for NCCL's unique id, which needs %zu", cap,
                       sizeof(nccl_id));
    nccl_id u;
    nccl_result r = nccl.GetUniqueId(&u);
    if (r != NCCL_OK)
        return nccl_fail(r, NULL, "gx_comm", "ncclGetUniqueId");
    memcpy(id, &u, sizeof u);
    *len = sizeof u;
    return GX_OK;
}

gx_status cuda_nccl_init_rank(gx__backend *be, const void *id, size_t len, int nranks, int rank, double deadline_ms,
                                void **out)
{
    GX__CHECK(nccl_ready("gx_comm"));
    if (len != sizeof(nccl_id))
        return gx__err(GX_ERR_INTERNAL, "gx_comm: a unique id of %zu bytes; NCCL's has %zu", len, sizeof(nccl_id));
    GX__CHECK(cuda_current(be, NULL, NULL));
    nccl_id u;
    memcpy(&u, id, sizeof u);
    nccl_comm c = NULL;
    nccl_result r = NCCL_INVALID_USAGE;
    if (nccl.CommInitRankConfig && nccl_version_code >= 21400) {
        nccl_config cfg = {sizeof cfg, 0xcafebeefu, 21403u, 0, INT_MIN, INT_MIN, INT_MIN, NULL};
        r = nccl.CommInitRankConfig(&c, nranks, u, rank, &cfg);
        if (r == NCCL_OK || r == NCCL_IN_PROGRESS) {
            gx_status s = nccl_settle(c, r, deadline_ms, "gx_comm", "ncclCommInitRankConfig");
            if (s == GX_OK)
                *out = c;
            else
                nccl.CommAbort(c); /* never handed out: nobody else will */
            return s;
        }
    }
    /* NCCL before 2.14: blocking (no deadline while the ranks meet). */
    r = nccl.CommInitRank(&c, nranks, u, rank);
    if (r != NCCL_OK)
        return nccl_fail(r, NULL, "gx_comm", "ncclCommInitRank");
    *out = c;
    return GX_OK;
}

gx_status cuda_nccl_init_all(gx__backend *const *bes, int n, void **comms)
{
    GX__CHECK(nccl_ready("gx_comm_from_ctxs"));
    int devs[64];
    for (int i = 0; i < n && i < 64; i++) {
        CUdevice d;
        GX__CHECK(cuda_current(bes[i], NULL, &d));
        devs[i] = bes[i]->device;
    }
    GX__CHECK(cuda_current(bes[0], NULL, NULL));
    nccl_comm cs[64];
    nccl_result r = nccl.CommInitAll(cs, n, devs);
    if (r != NCCL_OK)
        return nccl_fail(r, NULL, "gx_comm_from_ctxs", "ncclCommInitAll");
    for (int i = 0; i < n; i++)
        comms[i] = cs[i];
    return GX_OK;
}

gx_status cuda_nccl_run(gx__backend *be, void *comm, const gx__coll *k)
{
    CUstream st;
    GX__CHECK(cuda_current(be, &st, NULL));
    nccl_comm c = comm;
    int t = nccl_dtype(k->dtype), op = (int)k->op; /* gx__redop is NCCL's order: sum, prod, max, min */
    nccl_result r;
    const char *call;
    switch (k->kind) {
    case GX__COLL_ALLREDUCE: call = "ncclAllReduce", r = nccl.AllReduce(k->send, k->recv, k->count, t, op, c, st); break;
    case GX__COLL_REDUCE_SCATTER:
        call = "ncclReduceScatter", r = nccl.ReduceScatter(k->send, k->recv, k->count, t, op, c, st);
        break;
    case GX__COLL_ALLGATHER: call = "ncclAllGather", r = nccl.AllGather(k->send, k->recv, k->count, t, c, st); break;
    case GX__COLL_BROADCAST:
        call = "ncclBroadcast", r = nccl.Broadcast(k->recv, k->recv, k->count, t, k->peer, c, st);
        break;
    case GX__COLL_SEND: call = "ncclSend", r = nccl.Send(k->send, k->count, t, k->peer, c, st); break;
    case GX__COLL_RECV: call = "ncclRecv", r = nccl.Recv(k->recv, k->count, t, k->peer, c, st); break;
    default: return gx__err(GX_ERR_INTERNAL, "%s: unknown collective %d", k->what, (int)k->kind);
    }
    return nccl_settle(c, r, k->deadline_ms, k->what, call);
}

gx_status cuda_nccl_group(gx__backend *be, void *comm, bool begin, double deadline_ms)
{
    GX__CHECK(nccl_ready("gx_comm_group"));
    GX__CHECK(cuda_current(be, NULL, NULL));
    nccl_result r = begin ? nccl.GroupStart() : nccl.GroupEnd();
    if (begin)
        return r == NCCL_OK ? GX_OK : nccl_fail(r, comm, "gx_comm_group_begin", "ncclGroupStart");
    return nccl_settle(comm, r, deadline_ms, "gx_comm_group_end", "ncclGroupEnd");
}

gx_status cuda_nccl_poll(gx__backend *be, void *comm, bool *done)
{
    CUstream st;
    GX__CHECK(cuda_current(be, &st, NULL));
    nccl_result ar = NCCL_OK;
    nccl_result r = nccl.CommGetAsyncError(comm, &ar);
    if (r != NCCL_OK)
        return nccl_fail(r, comm, "gx_comm_sync", "ncclCommGetAsyncError");
    if (ar != NCCL_OK && ar != NCCL_IN_PROGRESS)
        return nccl_fail(ar, comm, "gx_comm_sync", "a queued collective (ncclCommGetAsyncError)");
    if (!cuda_drv.StreamQuery) { /* an old driver: wait without a limit */
        *done = cuda_drv.StreamSynchronize(st) == CUDA_SUCCESS;
        return GX_OK;
    }
    CUresult q = cuda_drv.StreamQuery(st);
    if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY)
        return gx__err(GX_ERR_BACKEND, "gx_comm_sync: cuStreamQuery failed: %s (%s)", cuda_result_name(q),
                       cuda_result_string(q));
    *done = q == CUDA_SUCCESS;
    return GX_OK;
}

void cuda_nccl_abort(gx__backend *be, void *comm)
{
    (void)be;
    if (comm)
        nccl.CommAbort(comm);
}

void cuda_nccl_destroy(gx__backend *be, void *comm)
{
    if (!comm || cuda_current(be, NULL, NULL) != GX_OK)
        return;
    nccl.CommDestroy(comm);
}

gx_status cuda_nccl_version(char *buf, size_t n)
{
    GX__CHECK(nccl_ready("gx_comm"));
    int v = nccl_version_code;
    /* Since 2.9 the code is major*10000 + minor*100 + patch; before, *1000 + *100. */
    int major = v >= 20900 ? v / 10000 : v / 1000, minor = v >= 20900 ? v / 100 % 100 : v / 100 % 10, patch = v % 100;
    snprintf(buf, n, "NCCL %d.%d.%d (%s)", major, minor, patch, nccl_lib.path);
    return GX_OK;
}
