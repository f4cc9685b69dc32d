/* comm_priv.h -- the seam between gx/comm.h's calls (comm.c: checks, staging,
 * dispatch) and the MPI transport (comm_mpi.c), which moves dense host buffers.
 *
 * comm_mpi.c is always compiled: without GX_HAVE_MPI (a gx built where MPI was not
 * found) cmi_available() is false and the rest is never reached.  Every wait polls
 * with a deadline (gx__now_ms()) and returns GX_ERR_TIMEOUT past it, leaving the
 * request in flight (MPI cannot cancel a collective): the caller then keeps the
 * buffers alive for good and marks the communicator broken. */
#ifndef GX_COMM_PRIV_H
#define GX_COMM_PRIV_H

#include "core/gx_internal.h"
#include "ops/opname.h"

typedef struct cmi cmi; /* one duplicated MPI communicator and its pending requests */

/* A deadline and the words a timeout message needs. */
typedef struct cmi_when {
    double deadline_ms;
    double timeout_s;
    const char *what; /* "gx_allreduce" */
} cmi_when;

bool cmi_available(void);
/* Initialises MPI when nobody has (*we_init then true).  Fills the world's rank and
 * size and this rank's index on its host; size 1 when the process was not started by
 * mpirun and MPI is absent. */
gx_status cmi_world_init(bool *we_init, int *rank, int *size, int *local_rank);
void cmi_finalize(void);
/* Duplicates *(MPI_Comm *)mpi_comm (NULL: MPI_COMM_WORLD). */
gx_status cmi_make(const void *mpi_comm, cmi **out, int *rank, int *size);
/* broken: requests still in flight are left alone (never freed or waited for). */
void cmi_free(cmi *m, bool broken);
/* "Open MPI v4.1.4, ..." */
void cmi_version(char *buf, size_t n);
/* This rank's local index (OMPI_COMM_WORLD_LOCAL_RANK or a shared-memory split). */
int cmi_local_rank(void);

/* Reductions: GX_ERR_UNSUPPORTED (no message) when MPI lacks the type or operator
 * (f16, bf16, float max/min): the caller gathers and folds instead. */
gx_status cmi_allreduce(cmi *m, opn_kind op, gx_dtype t, const void *send, void *recv, size_t n, const cmi_when *w);
gx_status cmi_reduce_scatter(cmi *m, opn_kind op, gx_dtype t, const void *send, void *recv, size_t n,
                             const cmi_when *w);
/* Movement, in elements of esize bytes.  counts/displs: per rank, elements. */
gx_status cmi_allgatherv(cmi *m, const void *send, size_t n, void *recv, const int64_t *counts, size_t esize,
                         const cmi_when *w);
gx_status cmi_bcast(cmi *m, void *buf, size_t n, size_t esize, int root, const cmi_when *w);
gx_status cmi_alltoallv(cmi *m, const void *send, const int64_t *scounts, void *recv, const int64_t *rcounts,
                        size_t esize, const cmi_when *w);
/* Point to point: posted now; completed by cmi_wait_posted (at once outside a group). */
gx_status cmi_post(cmi *m, bool send, void *buf, size_t n, size_t esize, int peer);
gx_status cmi_wait_posted(cmi *m, const cmi_when *w);
/* Gathers every rank's text line (at most `line` bytes each) to rank 0. */
gx_status cmi_gather_lines(cmi *m, const char *mine, char *all, size_t line, const cmi_when *w);

/* Host fold of the fallback: acc[i] = acc[i] op x[i] for n elements of t (f16/bf16
 * through f64, exact before the one rounding; float max/min ignore NaN). */
void cm_fold(opn_kind op, gx_dtype t, void *acc, const void *x, size_t n);

#endif
