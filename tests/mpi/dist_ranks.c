/* dist_ranks.c -- gx/dist.h's checks (tests/dist_checks.h) on every rank of a
 * communicator, compared with the single-process gx call on the whole array:
 *
 *   mpirun -n N gx_dist_ranks DIR         one process per rank (gx_comm_world on the
 *                                         backend GX_BACKEND names, CPU by default)
 *   gx_dist_ranks --threads N DIR         one process, one thread per rank on CUDA
 *                                         devices 0..N-1 (gx_comm_from_ctxs; no MPI)
 *
 * Prints one line per rank and exits 1 when any rank of this process failed, 77 when
 * the devices are not there, else 0.  DIR holds the shard files. */
#include "dist_checks.h"
#include <pthread.h>

typedef struct dr_rank {
    gx_comm *comm;
    const char *dir;
    int fails;
} dr_rank;

static void *dr_thread(void *p)
{
    dr_rank *r = p;
    r->fails = dxt_all(r->comm, r->dir);
    printf("gx_dist_ranks: rank %d/%d: %d failure(s)\n", dxt_rank, dxt_size, r->fails);
    fflush(stdout);
    return NULL;
}

static int dr_threads(int n, const char *dir)
{
    int ndev = 0;
    gx_cuda_device_count(&ndev);
    if (n < 1 || n > 16 || n > ndev) {
        printf("SKIP: --threads %d needs %d CUDA devices (%d here)\n", n, n, ndev);
        return 77;
    }
    gx_ctx *ctxs[16] = {0};
    gx_comm *comms[16] = {0};
    for (int d = 0; d < n; d++)
        if (gx_ctx_create_on(&ctxs[d], GX_BACKEND_CUDA, d) != GX_OK) {
            fprintf(stderr, "device %d: %s\n", d, gx_last_error());
            return 1;
        }
    if (gx_comm_from_ctxs(n, ctxs, NULL, comms) != GX_OK) {
        fprintf(stderr, "gx_comm_from_ctxs: %s\n", gx_last_error());
        return 1;
    }
    dr_rank r[16];
    pthread_t th[16];
    for (int k = 0; k < n; k++) {
        r[k] = (dr_rank){comms[k], dir, 0};
        pthread_create(&th[k], NULL, dr_thread, &r[k]);
    }
    int fails = 0;
    for (int k = 0; k < n; k++) {
        pthread_join(th[k], NULL);
        fails += r[k].fails;
    }
    for (int k = 0; k < n; k++)
        gx_comm_destroy(comms[k]);
    for (int k = 0; k < n; k++)
        gx_ctx_destroy(ctxs[k]);
    return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--threads") == 0)
        return dr_threads(atoi(argv[2]), argc > 3 ? argv[3] : ".");
    const char *be = getenv("GX_BACKEND");
    gx_backend_kind kind = be && strcmp(be, "cuda") == 0 ? GX_BACKEND_CUDA : GX_BACKEND_CPU;
    gx_ctx *ctx = NULL;
    gx_comm *comm = NULL;
    gx_status s = gx_comm_world(kind, NULL, &ctx, &comm);
    if (s != GX_OK) {
        fprintf(stderr, "gx_comm_world: %s: %s\n", gx_status_string(s), gx_last_error());
        return s == GX_ERR_NO_DEVICE ? 77 : 1;
    }
    dr_rank r = {comm, argc > 1 ? argv[1] : ".", 0};
    dr_thread(&r);
    gx_comm_destroy(comm);
    gx_ctx_destroy(ctx);
    return r.fails ? 1 : 0;
}
