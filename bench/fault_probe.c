/* fault_probe.c -- which CUDA contexts recover inside the process after a kernel
 * faults (issue 25).  Driver API only, no gx:
 *
 *   nvcc -o fault_probe bench/fault_probe.c -lcuda   (or cc ... -I$CUDA/include -lcuda)
 *   ./fault_probe primary | own | primary-runtime-held
 *
 * primary: retain the device's primary context, fault, release + reset it, retain
 *          again, and run a good kernel.
 * own:     cuCtxCreate a context of our own, fault, cuCtxDestroy, create another.
 * Each mode runs in its own process (a fault may poison what follows).  Prints one
 * line per step and "RECOVERED" or "NOT RECOVERED" last. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *ptx = ".version 8.0\n"
                         ".target sm_80\n"
                         ".address_size 64\n"
                         ".visible .entry store(.param .u64 p, .param .f32 v)\n"
                         "{\n"
                         "  .reg .u64 %rd<2>;\n"
                         "  .reg .f32 %f<2>;\n"
                         "  ld.param.u64 %rd1, [p];\n"
                         "  ld.param.f32 %f1, [v];\n"
                         "  st.global.f32 [%rd1], %f1;\n"
                         "  ret;\n"
                         "}\n";

static const char *name(CUresult r)
{
    const char *s = NULL;
    cuGetErrorName(r, &s);
    return s ? s : "?";
}

#define STEP(call)                                                                                                     \
    do {                                                                                                               \
        CUresult r_ = (call);                                                                                          \
        printf("  %-58s %s\n", #call, name(r_));                                                                       \
        if (r_ != CUDA_SUCCESS)                                                                                        \
            return r_;                                                                                                 \
    } while (0)

/* Stores v at p with the one-thread kernel; returns the sync's result. */
static CUresult run_store(CUfunction f, CUdeviceptr p, float v)
{
    void *args[] = {&p, &v};
    CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
    if (r != CUDA_SUCCESS)
        return r;
    return cuCtxSynchronize();
}

static CUresult load(CUfunction *f, CUmodule *m)
{
    STEP(cuModuleLoadData(m, ptx));
    STEP(cuModuleGetFunction(f, *m, "store"));
    return CUDA_SUCCESS;
}

/* A good kernel in the current context: writes 2.0 and reads it back. */
static CUresult works(void)
{
    CUmodule m;
    CUfunction f;
    CUdeviceptr d;
    float h = 0;
    STEP(load(&f, &m));
    STEP(cuMemAlloc(&d, 4));
    STEP(run_store(f, d, 2.0f));
    STEP(cuMemcpyDtoH(&h, d, 4));
    printf("  read back %.1f\n", h);
    cuMemFree(d);
    cuModuleUnload(m);
    return h == 2.0f ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

static void fault(void)
{
    CUmodule m;
    CUfunction f;
    if (load(&f, &m) != CUDA_SUCCESS)
        return;
    CUresult r = run_store(f, (CUdeviceptr)0x10, 1.0f);
    printf("  faulting kernel, then sync: %s\n", name(r));
}

static int primary(CUdevice dev, int reset)
{
    CUcontext c;
    if (cuDevicePrimaryCtxRetain(&c, dev) || cuCtxSetCurrent(c))
        return 1;
    printf("before the fault:\n");
    if (works())
        return 1;
    fault();
    printf("recovery (%s):\n", reset ? "release, reset, retain" : "release, retain");
    cuCtxSetCurrent(NULL);
    printf("  cuDevicePrimaryCtxRelease: %s\n", name(cuDevicePrimaryCtxRelease(dev)));
    if (reset)
        printf("  cuDevicePrimaryCtxReset: %s\n", name(cuDevicePrimaryCtxReset(dev)));
    CUresult r = cuDevicePrimaryCtxRetain(&c, dev);
    printf("  cuDevicePrimaryCtxRetain: %s\n", name(r));
    if (r || cuCtxSetCurrent(c))
        return 1;
    return works() != CUDA_SUCCESS;
}

static int own(CUdevice dev)
{
    CUcontext c;
    CUctxCreateParams p;
    memset(&p, 0, sizeof p);
    if (cuCtxCreate(&c, &p, 0, dev))
        return 1;
    printf("before the fault:\n");
    if (works())
        return 1;
    fault();
    printf("recovery (destroy, create):\n");
    printf("  cuCtxDestroy: %s\n", name(cuCtxDestroy(c)));
    CUresult r = cuCtxCreate(&c, &p, 0, dev);
    printf("  cuCtxCreate: %s\n", name(r));
    if (r)
        return 1;
    int bad = works() != CUDA_SUCCESS;
    cuCtxDestroy(c);
    return bad;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "primary";
    CUdevice dev;
    if (cuInit(0) || cuDeviceGet(&dev, 0)) {
        printf("no CUDA device\n");
        return 2;
    }
    int bad = strcmp(mode, "own") == 0           ? own(dev)
              : strcmp(mode, "primary-noreset") == 0 ? primary(dev, 0)
                                                   : primary(dev, 1);
    printf("%s: %s\n", mode, bad ? "NOT RECOVERED" : "RECOVERED");
    return bad;
}
