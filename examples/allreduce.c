/* allreduce.c -- one program for 1..N ranks (gx/comm.h).
 *
 *     ./allreduce                          # one process: a communicator of size 1
 *     mpirun -n 4 ./allreduce              # four ranks (CPU backend: MPI carries the data)
 *     GX_BACKEND=cuda mpirun -n 2 ./allreduce   # one GPU per rank, NCCL
 *
 * Each rank fills x with (rank + 1) everywhere, sums it over the ranks in place,
 * gathers every rank's first element and checks both against what the ranks' count
 * says they must be.  Prints "allreduce: PASS" on rank 0. */
#ifndef GX_TOUR /* not a tour stop: the tour runs in one process */
#include "gx.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    (void)argc, (void)argv; /* --quick (the examples' test) changes nothing here */
    gx_ctx *ctx;
    gx_comm *comm;
    GX_CHECK(gx_comm_world(GX_BACKEND_AUTO, NULL, &ctx, &comm));
    int rank, size;
    GX_CHECK(gx_comm_rank(comm, &rank));
    GX_CHECK(gx_comm_size(comm, &size));

    int64_t n = 1 << 20;
    gx_array *x, *firsts, *mine;
    GX_CHECK(gx_array_empty(ctx, GX_F32, 1, &n, &x));
    GX_CHECK(gx_array_fill_f64(x, rank + 1));
    GX_CHECK(gx_allreduce(comm, "+", x, x)); /* in place: x = 1 + 2 + ... + size */

    int64_t all = size;
    gx_slice first = {0, 1, 1};
    GX_CHECK(gx_array_view(x, &first, &mine));
    GX_CHECK(gx_array_empty(ctx, GX_F32, 1, &all, &firsts));
    GX_CHECK(gx_allgather(comm, mine, firsts)); /* every rank's x[0] */

    gx_scalar total;
    GX_CHECK(gx_reduce(ctx, "+", x, NULL, &total)); /* waits for the collectives too */
    double want = (double)size * (size + 1) / 2;
    float got[64] = {0};
    GX_CHECK(gx_array_to_host(firsts, got, sizeof(float) * (size_t)(size < 64 ? size : 64)));
    int ok = total.v.f == want * (double)n;
    for (int r = 0; r < size && r < 64; r++)
        ok = ok && got[r] == (float)want;
    if (rank == 0) {
        char info[4096];
        GX_CHECK(gx_comm_info_text(comm, info, sizeof info, NULL));
        printf("%s", info);
        printf("sum over %d rank%s of %lld elements: %g each (want %g)\n", size, size == 1 ? "" : "s", (long long)n,
               got[0], want);
        printf("allreduce: %s\n", ok ? "PASS" : "FAIL");
    } else {
        char info[4096];
        GX_CHECK(gx_comm_info_text(comm, info, sizeof info, NULL)); /* collective: every rank joins */
    }
    gx_array_release(mine);
    gx_array_release(firsts);
    gx_array_release(x);
    GX_CHECK(gx_comm_destroy(comm));
    GX_CHECK(gx_ctx_destroy(ctx));
    return ok ? 0 : 1;
}
#endif
