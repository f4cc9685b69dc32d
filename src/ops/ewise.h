/* ewise.h -- element-wise kernels: the one generator behind gx_map, copy, fill,
 * iota and conversions.
 *
 * A plan describes the iteration space (the output's shape after merging dimensions
 * that are contiguous in every operand) and the operands (op 0 = output, 1..nin
 * inputs, broadcast inputs have stride 0).  The generated kernel evaluates one C
 * expression per element, with the inputs bound to v0..v{nin-1}, the constants to
 * c0..c{nconst-1} and the output's linear index to gx_idx.  Shapes, strides and
 * pointers travel in the argument struct, so one compiled kernel serves every size. */
#ifndef GX_EWISE_H
#define GX_EWISE_H

#include "core/gx_internal.h"
#include "ops/bind.h"

#define EW_MAXIN 16
#define EW_MAXOPS (EW_MAXIN + 1)
#define EW_MAXCONST 16

typedef union ew_cval {
    double f;
    int64_t i;
    uint64_t u;
} ew_cval;

/* Must match the struct emitted by ew_source (same field order and types). */
typedef struct ew_args {
    uint64_t p[EW_MAXOPS];
    int64_t st[EW_MAXOPS][GX_MAX_DIMS];
    int64_t shape[GX_MAX_DIMS];
    int64_t n;
    ew_cval c[EW_MAXCONST];
    bd_args b; /* bound arrays (bind.h): passed only when the plan has some */
} ew_args;

typedef struct ew_plan {
    int nin;
    gx_dtype dt[EW_MAXOPS];
    int nconst;
    gx_dtype cdt[EW_MAXCONST];
    int ndim;
    bool contig; /* one dimension, every stride 0 or 1 */
    int vec;     /* CUDA: elements per vector access (1 = scalar) */
    const bd_set *bind; /* arrays the expression reads by index (NULL: none); set after
                         * ew_plan_make, args.b filled by bd_begin */
    ew_args args;
} ew_plan;

/* A named constant's value in the argument struct's representation. */
void ew_cval_of(const gx_scalar *c, ew_cval *v);

/* Broadcasts the inputs against `shape` (the output's) and fills plan strides/pointers.
 * Inputs whose shape does not broadcast give GX_ERR_SHAPE naming both shapes. */
gx_status ew_plan_make(ew_plan *pl, gx_array *out, int nin, gx_array *const *in);
/* The broadcast shape of the inputs (numpy rules). */
gx_status ew_broadcast_shape(int nin, gx_array *const *in, int *ndim, int64_t *shape);
/* Generates and runs: out[i] = expr.  `user_code` (may be NULL) is pasted before the
 * kernel (user functions).  `label` names the kernel in messages and dumps. */
gx_status ew_run(gx_ctx *ctx, ew_plan *pl, const char *expr, const char *user_code, const char *label);
/* ew_run without the choice of a table (ew_table.c calls it to build one). */
gx_status ew_run_direct(gx_ctx *ctx, ew_plan *pl, const char *expr, const char *user_code, const char *label);

/* Tabulated maps (ew_table.c).  A map of one contiguous 8- or 16-bit input (i8, u8,
 * i16, u16, f16, bf16) into an output of at most 16 bits, reading nothing else and
 * nothing that tells elements apart but their bits, is evaluated once per input bit
 * pattern (by ew_run_direct's own kernel) and applied as a lookup.  On CUDA the
 * results are bit for bit ew_run_direct's; on the CPU, whose direct sin/cos redo a
 * whole block of 256 with libm when one argument is huge, within one unit in the
 * last place of the output where such a block made the difference.  ew_run takes this
 * path when ew_table_wanted says so (GX_EW_TABLE=0/1 turn it off / on for every
 * qualifying map; by default: maps that call a costly math function, at n >= 256
 * table entries). */
bool ew_table_wanted(gx_ctx *ctx, const ew_plan *pl, const char *expr, const char *user_code);
gx_status ew_table_run(gx_ctx *ctx, const ew_plan *pl, const char *expr, const char *user_code, const char *label);
/* Tests: -1 follows GX_EW_TABLE and the size rule, 0 never, 1 whenever a map qualifies. */
void gx__ew_table_mode(int mode);

/* Generates the source only (for gx_map_source). */
gx_status ew_source(gx_ctx *ctx, const ew_plan *pl, const char *expr, const char *user_code, gx__sbuf *out);

#endif
