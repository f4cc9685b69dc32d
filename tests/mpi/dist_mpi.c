/* dist_mpi.c -- gx/dist.h's checks (tests/dist_checks.h) on every rank of
 * `mpirun -n N gx_dist_mpi DIR`: one communicator over all ranks (gx_comm_world on
 * the backend GX_BACKEND names, CPU by default), every distributed result compared
 * with the single-process gx call on the whole array.  Exits 1 on any failure of
 * this rank (mpirun then fails), 0 otherwise.  DIR holds the shard files. */
#include "dist_checks.h"

int main(int argc, char **argv)
{
    const char *be = getenv("GX_BACKEND");
    gx_backend_kind kind = be && strcmp(be, "cuda") == 0 ? GX_BACKEND_CUDA : GX_BACKEND_CPU;
    gx_ctx *ctx = NULL;
    gx_comm *comm = NULL;
    gx_status s = gx_comm_world(kind, NULL, &ctx, &comm);
    if (s != GX_OK) {
        fprintf(stderr, "gx_comm_world: %s: %s\n", gx_status_string(s), gx_last_error());
        return s == GX_ERR_NO_DEVICE ? 77 : 1;
    }
    int fails = dxt_all(comm, argc > 1 ? argv[1] : ".");
    printf("gx_dist_mpi: rank %d/%d: %d failure(s)\n", dxt_rank, dxt_size, fails);
    fflush(stdout);
    gx_comm_destroy(comm);
    gx_ctx_destroy(ctx);
    return fails ? 1 : 0;
}
