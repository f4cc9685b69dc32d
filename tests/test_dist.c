/* test_dist.c -- gx/dist.h on a communicator of size 1 (gx_comm_from_ctxs over the
 * test's context): the checks of dist_checks.h, which tests/mpi/dist_ranks.c runs again
 * under mpirun with 1..4 ranks.  Each distributed result is compared with gx's
 * single-array call on the whole array. */
#include "gx_test.h"
#include "dist_checks.h"

static gx_comm *dist_comm(void)
{
    gx_ctx *ctx = gxt_ctx();
    gx_comm *c = NULL;
    gx_status s = gx_comm_from_ctxs(1, &ctx, NULL, &c);
    if (s != GX_OK)
        fprintf(stderr, "gx_comm_from_ctxs: %s: %s\n", gx_status_string(s), gx_last_error());
    return c;
}

/* Runs one group of checks on a size-1 communicator over the test's context. */
static void dist_run(void (*fn)(gx_comm *, gx_ctx *))
{
    gx_comm *c = dist_comm();
    GXT_CHECK(c != NULL);
    if (!c)
        return;
    gx_comm_rank(c, &dxt_rank);
    gx_comm_size(c, &dxt_size);
    fn(c, gxt_ctx());
    GXT_EQ_I64(dxt_failures, 0);
    gx_comm_destroy(c);
}

static void dist_files_here(gx_comm *c, gx_ctx *ctx)
{
    dxt_files(c, ctx, GX_BINARY_DIR);
}

GXT_TEST(dist_layout)
{
    dist_run(dxt_layout);
}
GXT_TEST(dist_iota_rand)
{
    dist_run(dxt_iota_rand);
}
GXT_TEST(dist_map)
{
    dist_run(dxt_map);
}
GXT_TEST(dist_reduce)
{
    dist_run(dxt_reduce);
}
GXT_TEST(dist_scan)
{
    dist_run(dxt_scan);
}
GXT_TEST(dist_filter)
{
    dist_run(dxt_filter);
}
GXT_TEST(dist_sort)
{
    dist_run(dxt_sort);
}
GXT_TEST(dist_matmul)
{
    /* A gx without CBLAS has no matmul on the CPU backend: skip, naming the package. */
    int64_t s11[2] = {1, 1};
    gx_array *a = NULL, *c = NULL;
    GXT_OK(gx_array_zeros(gxt_ctx(), GX_F64, 2, s11, &a));
    gx_status s = gx_matmul(a, a, NULL, &c);
    gx_array_release(a), gx_array_release(c);
    if (s == GX_ERR_UNSUPPORTED && strstr(gx_last_error(), "without CBLAS")) {
        gxt_skip("this gx was built without CBLAS: install libopenblas-dev and rebuild");
        return;
    }
    dist_run(dxt_matmul);
}
GXT_TEST(dist_files)
{
    dist_run(dist_files_here);
}
GXT_TEST(dist_bad_input)
{
    dist_run(dxt_bad);
}
GXT_TEST(dist_views)
{
    dist_run(dxt_views);
}
