/* gx/graph.h -- part of gx.h (include gx.h, not this file).
 *
 * Graphs: a sequence of gx calls recorded once and replayed any number of times with
 * the same buffers and new contents.  At 2^16 elements and below a call's cost is the
 * host's (argument checks, cache look-ups, the launch call); a replay pays it once
 * for the whole sequence.
 *
 *     gx_graph_begin(ctx);
 *     gx_map_into(ctx, "x -> 2*x + 1", 1, &x, NULL, y);      // recorded, not run
 *     gx_reduce_into(ctx, "+", y, NULL, s);                   // s: a 0-d device array
 *     gx_graph_end(ctx, &g);
 *     for (...) { gx_array_from_host_into(..., x); gx_graph_launch(g); }
 *     gx_array_to_host(s, ...);                               // waits
 *
 * Between gx_graph_begin and gx_graph_end the context's calls are RECORDED on its
 * current stream (gx_ctx_set_stream) and do not run: their outputs hold their new
 * values only after a gx_graph_launch.  The calls that a graph can hold are those
 * that stay on the device: maps (gx_map_into, gx_map), reductions into device arrays
 * (gx_reduce_into / gx_reduce_to / gx_mapreduce_into, along axes too), scans
 * (gx_scan_into), array copies and fills, and on CUDA user kernels
 * (gx_kernel_launch).  A call that waits for the device or reads a value to the host
 * (gx_reduce to a gx_scalar, gx_filter (its output's length: gx_filter_into may be
 * recorded), gx_array_to_host,
 * gx_sync, a lambda with checked bound arrays) returns GX_ERR_UNSUPPORTED naming
 * itself, and the recording is spoiled: gx_graph_end then fails too.
 *
 * Backends: CUDA records through stream capture and replays one CUDA graph (one
 * cuGraphLaunch); allocations made while recording come from gx's pool outside the
 * graph.  The CPU backend records each launch (its function, its argument bytes,
 * its range) and replays them in order: no lambda look-up, source generation or
 * planning happens again.
 *
 * Buffers: a graph reads and writes the arrays that the recorded calls used, at the
 * same addresses.  Keep every array a recorded call used alive (and its shape
 * unchanged) until gx_graph_destroy; arrays that the recorded calls made and released
 * themselves (temporaries) are kept by the graph and freed by gx_graph_destroy.
 * Parameters (constants, sizes) are those of the recording: record another graph to
 * change them (updating them in place is not supported yet). */
#ifndef GX_GRAPH_H
#define GX_GRAPH_H
#include "../gx.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct gx_graph gx_graph;

/* Starts recording ctx's calls on its current stream.  GX_ERR_INVALID_ARGUMENT if a
 * recording is already under way on ctx (graphs do not nest). */
GX_API gx_status gx_graph_begin(gx_ctx *ctx);
/* Stops the recording and gives the graph in *out (NULL on failure).  Fails with
 * GX_ERR_INVALID_ARGUMENT when no recording is under way, and with GX_ERR_UNSUPPORTED
 * when a call inside it was refused (the message repeats the first one); the
 * recording ends either way. */
GX_API gx_status gx_graph_end(gx_ctx *ctx, gx_graph **out);
/* Runs the recorded calls, in order, on the context's current stream (CUDA: queued,
 * returns at once; CPU: complete on return).  GX_ERR_INVALID_ARGUMENT while a
 * recording is under way on the graph's context. */
GX_API gx_status gx_graph_launch(gx_graph *g);
/* The number of recorded device operations (kernels, copies) on backends that replay
 * them one by one (the CPU); on CUDA the number of kernel launches and device-to-device
 * copies captured. */
GX_API gx_status gx_graph_size(const gx_graph *g, int64_t *out);
/* Frees the graph and the temporaries it kept (after its queued launches finish).
 * NULL is accepted. */
GX_API gx_status gx_graph_destroy(gx_graph *g);

#ifdef __cplusplus
}
#endif
#endif
