/* gx/comm.h -- part of gx.h (include gx.h, not this file).
 *
 * Communicators and collectives: the same program on 1..N devices.  One process per
 * rank, started by `mpirun -n N ./prog` (MPI starts the processes and, on the CPU
 * backend, carries the data), or one process driving several GPUs
 * (gx_comm_from_ctxs).  On CUDA the data moves with NCCL (libnccl.so.2, loaded at run
 * time like cuBLAS: the loader's path, then $GX_NCCL_LIB, a full path, first when
 * set); on the CPU backend with MPI (Open MPI from the system's packages; a gx built
 * without MPI has communicators of size 1 only).
 *
 *     gx_ctx *ctx; gx_comm *comm;
 *     GX_CHECK(gx_comm_world(GX_BACKEND_AUTO, NULL, &ctx, &comm));
 *     GX_CHECK(gx_allreduce(comm, "+", x, y));          // y = sum of every rank's x
 *     gx_comm_destroy(comm); gx_ctx_destroy(ctx);
 *
 * Collectives: every rank calls them in the same order with matching sizes.  Arrays
 * belong to the communicator's context (else GX_ERR_INVALID_ARGUMENT); any view is
 * accepted (gx copies to contiguous scratch where it must); send == recv (the same
 * handle) is in place where the operation allows it (allreduce, and the block of
 * this rank for allgather).  CUDA: queued on the context's current stream, ordered
 * with gx's own work; results usable after gx_sync / gx_comm_sync or by the next gx
 * call on that context.  CPU: done when the call returns.  Counts are element counts.
 *
 * Dtypes: moving data (allgather(v), broadcast, alltoall(v), send/recv) takes every
 * dtype (bytes).  Reductions take the operators of gx's table: "+" "*" "max" "min"
 * on numbers (complex: "+" and "*" only, max/min are GX_ERR_DTYPE), "&" "|" "^" on
 * integers and bool, "&&" "||" on bool; "+" and "*" on bool are GX_ERR_DTYPE (use
 * "||" / "&&"); every other pairing is GX_ERR_DTYPE.  The result keeps the input's dtype (no
 * widening: an integer sum wraps as the dtype does).  Float max/min ignore NaN as
 * gx_reduce does (CPU); NCCL's max/min are NCCL's.  On CUDA, NCCL carries i8, u8,
 * i32, u32, i64, u64, f16, bf16, f32, f64 with "+" "*" "max" "min", and bool with
 * "max" "min" "&" "|" "&&" "||"; a reduction of another dtype (i16, u16, complex) or
 * another operator (bitwise on integers, "^" on bool) is GX_ERR_DTYPE naming NCCL.  On the CPU the reduction is MPI's own where MPI has the operator and the
 * type; f16/bf16, and float max/min, gather every rank's data and fold it on each
 * rank in rank order (the same result everywhere).
 *
 * Failures and the timeout: a collective, send/recv, gx_comm_group_end or
 * gx_comm_sync that has not finished within the communicator's timeout (default 300
 * s; opts->timeout_s, else env GX_COMM_TIMEOUT in seconds) returns GX_ERR_TIMEOUT
 * naming the operation, the ranks and the timeout.  How: on the CPU every operation is
 * started nonblocking (MPI_I...) and polled with MPI_Test until the deadline; on CUDA
 * the NCCL communicator is made nonblocking (NCCL 2.14 and newer) and gx_comm_sync
 * polls the stream and ncclCommGetAsyncError until the deadline, then calls
 * ncclCommAbort.  The communicator is then BROKEN: every later collective, group,
 * gx_comm_sync or gx_comm_info_text on it returns GX_ERR_TIMEOUT at once (the queries
 * still answer; gx_comm_desc.broken is 1); destroy it.  MPI cannot take back an operation that a peer
 * never joined, so the buffers of the timed-out call may still be written and the
 * job cannot go on: end it (MPI_Abort from the program, or exit and let mpirun end
 * the others).  A rank whose peer exited is usually ended by mpirun itself.
 */
#ifndef GX_COMM_H
#define GX_COMM_H
#include "../gx.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct gx_comm gx_comm; /* opaque; one per rank */

typedef struct gx_comm_opts {
    double timeout_s;     /* an operation (or gx_comm_sync) not finished within this returns
                           * GX_ERR_TIMEOUT and the communicator is broken (every later call
                           * on it fails; destroy it).  0 = env GX_COMM_TIMEOUT (seconds) or
                           * 300.  Negative or NaN: GX_ERR_INVALID_ARGUMENT. */
    uint64_t reserved[4]; /* zero (see the conventions in gx.h) */
} gx_comm_opts;

/* ------------------------------------------------------------------ communicators */

/* Every process started by `mpirun -n N` calls this: it initialises MPI if the
 * program has not (gx then finalises it when the last communicator it made is
 * destroyed), makes a context of `kind` on this rank's device (CUDA: local rank
 * (OMPI_COMM_WORLD_LOCAL_RANK) mod the device count) and a communicator over all
 * ranks (NCCL on CUDA, its unique id broadcast from rank 0 over MPI; MPI itself on the
 * CPU backend).  A gx built without MPI, or a process not started by mpirun: size 1
 * (on CUDA through NCCL when libnccl.so.2 loads, else collectives are plain copies;
 * gx_comm_desc.transport says which).
 * *ctx_out and *out are the caller's: destroy the communicator first, then the
 * context.  On failure both stay NULL. */
GX_API gx_status gx_comm_world(gx_backend_kind kind, const gx_comm_opts *opts, gx_ctx **ctx_out, gx_comm **out);
/* A communicator over an MPI communicator the program made itself (mpi_comm points
 * at an MPI_Comm; gx duplicates it, so the program may free its own).  ctx: CPU
 * (collectives over MPI) or CUDA (NCCL, the id broadcast over mpi_comm).  Collective
 * over mpi_comm.  GX_ERR_UNSUPPORTED in a gx built without MPI. */
GX_API gx_status gx_comm_from_mpi(gx_ctx *ctx, const void *mpi_comm, const gx_comm_opts *opts, gx_comm **out);
/* One process, several GPUs: ranks 0..n-1 are ctxs[0..n-1] (CUDA contexts on distinct
 * devices; NCCL's ncclCommInitAll).  out (n entries) receives n communicators; one
 * thread drives them, putting each collective of all ranks between
 * gx_comm_group_begin and gx_comm_group_end (of any of them) for n > 1.  The CPU
 * backend: n must be 1 (a communicator of size 1, no MPI needed).  On failure every
 * out[i] is NULL. */
GX_API gx_status gx_comm_from_ctxs(int n, gx_ctx *const *ctxs, const gx_comm_opts *opts, gx_comm **out);
/* Releases the communicator (NULL is fine).  Not collective; a broken one is released
 * without talking to its peers.  The last communicator gx_comm_world made finalises
 * MPI when gx initialised it (not after a timeout: MPI_Finalize would wait for the
 * lost rank).  gx initialises MPI with MPI_THREAD_SERIALIZED: one thread at a time. */
GX_API gx_status gx_comm_destroy(gx_comm *comm);
/* This rank's index (0 .. size-1) and the number of ranks. */
GX_API gx_status gx_comm_rank(const gx_comm *comm, int *out);
GX_API gx_status gx_comm_size(const gx_comm *comm, int *out);
/* The context the communicator's arrays belong to (borrowed). */
GX_API gx_status gx_comm_ctx(const gx_comm *comm, gx_ctx **out);
/* Waits for this rank's queued collectives (CUDA; the CPU's are done already) within
 * the timeout: GX_ERR_TIMEOUT and a broken communicator past it. */
GX_API gx_status gx_comm_sync(gx_comm *comm);

/* What a communicator runs on, for `gx info` and logs. */
typedef struct gx_comm_desc {
    int rank, size;
    int local_rank;           /* among the ranks on this host (0 without MPI) */
    int device;               /* the context's device index */
    gx_backend_kind backend;  /* the context's backend */
    double timeout_s;         /* the timeout in force */
    int broken;               /* 1 after a timeout */
    char host[64];            /* this rank's host name */
    char transport[160];      /* "NCCL 2.21.5" / "Open MPI v4.1.4, ..." / "none (size 1)" */
    uint64_t reserved[4];
} gx_comm_desc;
GX_API gx_status gx_comm_describe(const gx_comm *comm, gx_comm_desc *out);
/* The layout of the whole communicator as text, one line per rank ("rank 0/2 host
 * node1 device 0 cuda") after a line naming the transport.  COLLECTIVE (every rank
 * calls it; rank 0's text is complete, the others get their own line).  Writes a
 * NUL-terminated string into buf (truncated to cap); *needed (may be NULL) gets the
 * full length + 1. */
GX_API gx_status gx_comm_info_text(gx_comm *comm, char *buf, size_t cap, size_t *needed);

/* ------------------------------------------------------------------ collectives */

/* recv = send reduced over the ranks element by element with op (see the dtype rules
 * above).  send and recv: the same dtype and size (shapes may differ); send == recv
 * is in place. */
GX_API gx_status gx_allreduce(gx_comm *comm, const char *op, const gx_array *send, gx_array *recv);
/* send (size * n elements, row-major) reduced over the ranks; rank r's recv (n
 * elements) gets block r of the result.  send != recv. */
GX_API gx_status gx_reduce_scatter(gx_comm *comm, const char *op, const gx_array *send, gx_array *recv);
/* recv (size * n elements) = every rank's send (n elements), rank r's block at r*n.
 * send may be recv's block of this rank (a view) or another array. */
GX_API gx_status gx_allgather(gx_comm *comm, const gx_array *send, gx_array *recv);
/* Uneven all-gather: counts[size] (every rank passes the same counts; counts[r] is
 * rank r's send size, 0 allowed); recv holds them packed in rank order (sum of
 * counts elements). */
GX_API gx_status gx_allgatherv(gx_comm *comm, const gx_array *send, gx_array *recv, const int64_t *counts);
/* a on every rank = a on rank `root` (same dtype and size everywhere). */
GX_API gx_status gx_broadcast(gx_comm *comm, int root, gx_array *a);
/* Equal blocks: send and recv hold size * n elements; block j of rank i's send goes to
 * block i of rank j's recv.  send != recv. */
GX_API gx_status gx_alltoall(gx_comm *comm, const gx_array *send, gx_array *recv);
/* Uneven blocks, packed in rank order: send_counts[j] elements go to rank j,
 * recv_counts[i] come from rank i (they must agree with the peers' send counts; zero
 * allowed).  send holds sum(send_counts) elements, recv sum(recv_counts).  On CUDA a
 * group of NCCL sends and receives. */
GX_API gx_status gx_alltoallv(gx_comm *comm, const gx_array *send, const int64_t *send_counts, gx_array *recv,
                              const int64_t *recv_counts);
/* Point to point: a to / from rank `peer` (not this rank), matching sizes and dtypes.
 * Outside a group each returns when its transfer is done (CPU) or queued (CUDA); a
 * ring exchange (every rank sends right and receives left) needs a group. */
GX_API gx_status gx_send(gx_comm *comm, int peer, const gx_array *a);
GX_API gx_status gx_recv(gx_comm *comm, int peer, gx_array *a);
/* Sends and receives between begin and end are posted together and completed at
 * gx_comm_group_end (within the timeout), so no ordering among them can deadlock; for
 * communicators of gx_comm_from_ctxs, collectives of all ranks made by one thread go
 * between them too.  Groups nest; the outermost end completes them.  A received array
 * holds its data after gx_comm_group_end (CPU) or as its stream says (CUDA).  On CUDA
 * a group is the calling thread's (NCCL's ncclGroupStart/End): begin and end it on any
 * communicator of the thread's ranks. */
GX_API gx_status gx_comm_group_begin(gx_comm *comm);
GX_API gx_status gx_comm_group_end(gx_comm *comm);

#ifdef __cplusplus
}
#endif
#endif /* GX_COMM_H */
