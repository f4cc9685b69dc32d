/* reduce_common.c -- what every reduction kernel of a job is built from, whether
 * it folds the whole array (reduce.c) or along axes (reduce_axis.c): the element
 * statements, the generator spec's common fields, broadcast strides.  Below both,
 * so that reduce.c -> reduce_axis.c -> reduce_common.c is the only direction. */
#include "ops/reduce_priv.h"

#include <string.h>

const char *rd_cval_field(gx_dtype t)
{
    if (gx__dtype_is_float(t))
        return "f";
    return gx__dtype_is_signed(t) ? "i" : "u";
}

void rd_elem_text(const rd_job *job, const char *const *load, gx__sbuf *b)
{
    for (int k = 0; k < job->nin; k++) {
        char lb[160]; /* halves load as f32 */
        gx__sb_printf(b, "const %s m%d = %s; ", gx__dtype_vtype(job->in[k]->dtype), k,
                      gx__dtype_load(job->in[k]->dtype, load[k], lb, sizeof lb));
    }
    for (int j = 0; j < job->nconst; j++)
        gx__sb_printf(b, "const %s c%d = (%s)u->c[%d].%s; ", gx__dtype_vtype(job->cdt[j]), j,
                      gx__dtype_vtype(job->cdt[j]), j, rd_cval_field(job->cdt[j]));
    if (job->op.truth)
        gx__sb_printf(b, "v = (rg_acc)((%s) != 0);", job->expr.p);
    else
        gx__sb_printf(b, "v = (rg_acc)(%s);", job->expr.p);
}

void rd_spec_base(const rd_job *job, rg_spec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->acc = job->op.acc;
    sp->out_dtype = job->op.out;
    sp->combine = job->op.lam.p ? job->op.lam.p : job->op.combine;
    sp->better = job->op.better;
    sp->sel = job->op.sel[0] ? job->op.sel : NULL;
    sp->identity = job->op.identity;
    sp->with_index = job->op.find;
    sp->final = job->fin.len ? job->fin.p : job->op.mean ? "r / (rg_acc)u->cnt" : NULL;
    sp->user_code = job->ucode;
    sp->label = "gx_reduce";
}

void rd_bcast_strides(const rd_job *job, int k, int64_t *st)
{
    const gx_array *a = job->in[k];
    int off = job->ndim - a->ndim;
    for (int d = 0; d < job->ndim; d++) {
        int e = d - off;
        st[d] = (e < 0 || a->shape[e] == 1) ? 0 : a->strides[e];
    }
}
