/* lambda_half.c -- f16 and bf16 values in lambdas.
 *
 * Kernels load a half as f32 (gx__dtype_load), so the type checker sees f32 in
 * its place and everything computes in f32.  Only the result dtype remembers the
 * halves: a lambda whose floating operands (inputs and constants) are all one
 * half type returns that type when it would return f32, as in PyTorch
 * (f16 * 2 -> f16, f16 + i32 -> f16); f16 with bf16, f32 or f64 follows the f32
 * rules (f16 + bf16 -> f32).  docs/LAMBDAS.md has the table. */
#include "jit/lambda_impl.h"

#include <stdlib.h>
#include <string.h>

static gx_dtype half_join(gx_dtype acc, gx_dtype t)
{
    if (t == GX_F16 || t == GX_BF16)
        return acc == GX_DTYPE_DEFAULT || acc == t ? t : GX_F32;
    if (t == GX_F32 || t == GX_F64 || t == GX_C64 || t == GX_C128)
        return GX_F32;
    return acc;
}

static gx_dtype half_view(gx_dtype t) { return t == GX_F16 || t == GX_BF16 ? GX_F32 : t; }

gx_status lam__half_env(const lam_env *env, lam_env *view, lam__half_bufs *bufs, gx_dtype *kind)
{
    *view = *env;
    *kind = GX_DTYPE_DEFAULT;
    bufs->args = NULL;
    bufs->consts = NULL;
    bool any = false;
    for (int i = 0; i < env->nargs && env->arg_types; i++) {
        *kind = half_join(*kind, env->arg_types[i]);
        any |= half_view(env->arg_types[i]) != env->arg_types[i];
    }
    for (int j = 0; j < env->nconsts && env->consts; j++) {
        *kind = half_join(*kind, env->consts[j].value.dtype);
        any |= half_view(env->consts[j].value.dtype) != env->consts[j].value.dtype;
    }
    if (!any)
        return GX_OK;
    if (env->nargs > 0 && env->arg_types) {
        bufs->args = malloc(sizeof(gx_dtype) * (size_t)env->nargs);
        if (!bufs->args)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
        for (int i = 0; i < env->nargs; i++)
            bufs->args[i] = half_view(env->arg_types[i]);
        view->arg_types = bufs->args;
    }
    if (env->nconsts > 0 && env->consts) {
        bufs->consts = malloc(sizeof(gx_const) * (size_t)env->nconsts);
        if (!bufs->consts)
            return gx__err(GX_ERR_OUT_OF_MEMORY, "out of host memory");
        for (int j = 0; j < env->nconsts; j++) {
            bufs->consts[j] = env->consts[j];
            bufs->consts[j].value.dtype = half_view(env->consts[j].value.dtype);
        }
        view->consts = bufs->consts;
    }
    return GX_OK;
}

void lam__half_free(lam__half_bufs *bufs)
{
    free(bufs->args);
    free(bufs->consts);
}

gx_dtype lam__half_result(gx_dtype kind, gx_dtype result)
{
    return (kind == GX_F16 || kind == GX_BF16) && result == GX_F32 ? kind : result;
}
