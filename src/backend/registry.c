/* registry.c -- which backends this gx has and which one a new context runs on:
 * the kind asked for, else GX_BACKEND, else CUDA when a device answers.  The core
 * never names a backend; it gets the chosen table through gx__ctx_open. */
#include "backend/backend.h"

#include <strings.h>

/* The backends compiled in; the CPU backend is always there. */
static const gx__backend_iface *const reg_backends[] = {
    &gx__cpu_iface,
#ifdef GX_HAVE_CUDA
    &gx__cuda_iface,
#endif
};

/* GX_BACKEND for an AUTO request.  Unlike the other variables a bad value is an
 * error, not a warning: running on a backend the user did not ask for would make
 * every later result (timings above all) quietly about something else. */
static gx_status reg_env_backend(gx_backend_kind *kind)
{
    const char *env = gx__env("GX_BACKEND");
    if (!env || strcasecmp(env, "auto") == 0)
        *kind = gx__cuda_available(NULL) ? GX_BACKEND_CUDA : GX_BACKEND_CPU;
    else if (strcasecmp(env, "cpu") == 0)
        *kind = GX_BACKEND_CPU;
    else if (strcasecmp(env, "cuda") == 0)
        *kind = GX_BACKEND_CUDA;
    else
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "GX_BACKEND=\"%.200s\" is not a backend: accepted values are auto, cpu and cuda "
                       "(any case), or unset for auto",
                       env);
    return GX_OK;
}

/* Resolves AUTO through GX_BACKEND, then through what answers. */
static gx_status reg_pick(gx_backend_kind kind, gx_backend_kind *out)
{
    if (kind == GX_BACKEND_AUTO)
        GX__CHECK(reg_env_backend(&kind));
    if (kind != GX_BACKEND_CPU && kind != GX_BACKEND_CUDA)
        return gx__err(GX_ERR_INVALID_ARGUMENT,
                       "backend kind %d is not one of GX_BACKEND_AUTO, GX_BACKEND_CPU, GX_BACKEND_CUDA", (int)kind);
    *out = kind;
    return GX_OK;
}

/* The table of a kind; only CUDA can be missing (not compiled in). */
static gx_status reg_iface(gx_backend_kind kind, const gx__backend_iface **out)
{
    for (size_t i = 0; i < sizeof reg_backends / sizeof reg_backends[0]; i++)
        if (reg_backends[i]->kind == kind) {
            *out = reg_backends[i];
            return GX_OK;
        }
    return gx__err(GX_ERR_NO_DEVICE, "the CUDA backend was not built (CUDA headers were not found at build time); "
                                     "use GX_BACKEND=cpu, or rebuild with the CUDA toolkit installed");
}

gx_status gx_ctx_create_on(gx_ctx **out, gx_backend_kind kind, int device)
{
    GX__ARG(out, "gx_ctx_create: out must not be NULL");
    *out = NULL;
    gx_backend_kind k = GX_BACKEND_AUTO; /* set by reg_pick (GCC cannot tell gx__err never returns GX_OK) */
    const gx__backend_iface *iface = NULL;
    GX__CHECK(reg_pick(kind, &k));
    GX__CHECK(reg_iface(k, &iface));
    return gx__ctx_open(iface, device, out);
}

gx_status gx_ctx_create(gx_ctx **out, gx_backend_kind kind) { return gx_ctx_create_on(out, kind, 0); }

gx_status gx_cuda_device_count(int *out)
{
    GX__ARG(out, "gx_cuda_device_count: out must not be NULL");
    gx__cuda_available(out);
    return GX_OK;
}
