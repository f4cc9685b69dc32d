/* reduce_priv.h -- what reduce.c (API, operators, full reductions), reduce_axis.c
 * (reductions along axes) and reduce_common.c (what both build kernels from) share.
 * Calls go one way: reduce.c -> reduce_axis.c -> reduce_common.c. */
#ifndef GX_REDUCE_PRIV_H
#define GX_REDUCE_PRIV_H

#include "ops/ewise.h"
#include "ops/reduce_gen.h"

#define RD_MAXIN 8

/* An operator resolved for one accumulator dtype, as C text for the generators. */
typedef struct rd_op {
    gx_dtype acc, out; /* accumulator and stored result dtypes */
    bool find;         /* carries the first best index (better, not combine) */
    bool mean;         /* final = r / count */
    bool truth;        /* the element enters as (e != 0) */
    char combine[160]; /* expr of gx_l, gx_r (rg_comb); for lambdas: see lam */
    char better[160];  /* find: expr of gx_l, gx_r */
    char sel[48];      /* find, optional: the better of gx_l, gx_r (rg_spec.sel) */
    char identity[96]; /* expr of acc type */
    gx__sbuf lam;      /* a lambda operator's emitted expression (combine points here) */
} rd_op;

/* One reduction request after checks: inputs, the element expression, the operator,
 * the broadcast shape and which of its axes are reduced. */
typedef struct rd_job {
    gx_ctx *ctx;
    const char *fn; /* public function name for messages */
    int nin;
    gx_array *in[RD_MAXIN];
    gx_dtype et;   /* element dtype (map result, or x's dtype) */
    gx__sbuf expr; /* element expression of m0..m{nin-1} and c0.. */
    int nconst;
    gx_dtype cdt[EW_MAXCONST];
    ew_cval cval[EW_MAXCONST];
    rd_op op;
    int ndim;
    int64_t shape[GX_MAX_DIMS];
    bool red[GX_MAX_DIMS];
    int64_t nout, nred; /* output elements, elements folded into each */
    const char *ucode;  /* user functions (gx_define), may be NULL */
    bd_set bind;        /* arrays the map lambda reads by index (gx_mapreduce) */
    gx__sbuf fin;       /* opts->finish as rg_spec.final's text (an expression of r, u); empty: none */
} rd_job;

/* ---- reduce_common.c (used by reduce.c and reduce_axis.c) ---- */

/* Broadcast strides of input k in the job's shape (0 on broadcast axes). */
void rd_bcast_strides(const rd_job *job, int k, int64_t *st);
/* The statements that bind m0.., c0.. and assign v, given each input's load text. */
void rd_elem_text(const rd_job *job, const char *const *load, gx__sbuf *b);
/* The union field of ew_cval a constant of dtype t is read from ("f", "i", "u"). */
const char *rd_cval_field(gx_dtype t);
/* rg_spec fields common to every kernel of the job (acc, op text, final). */
void rd_spec_base(const rd_job *job, rg_spec *sp);

/* ---- reduce_axis.c (used by reduce.c) ---- */

/* Along axes: writes out (nout values of op.out, dense) and/or idx (nout i64). */
gx_status ra_run(rd_job *job, uint64_t out, uint64_t idx);

/* reduce_small.c: the front of small whole-array findmin / findmax on the CPU backend.
 * Each returns false when it declines the call (the full path then runs it and
 * reports any error); true when it ran it, with its status in *st.  find: 1 min, 2 max. */
bool rd_small_find_into(gx_ctx *ctx, int find, gx_array *x, const gx_reduce_opts *opts, gx_array *vals,
                        gx_array *idx, gx_status *st);
/* The host-result form: *val (x's dtype, its element size) and/or *idx. */
bool rd_small_find_host(gx_array *x, int find, void *val, int64_t *idx, gx_status *st);

#endif
