// test_cxx_headers.cpp -- gx's public headers are C++17: built with -std=c++17 -Wall
// -Wextra -Werror -pedantic (cmake/gxTests.cmake), and used through a few calls so
// that extern "C" linkage is checked too (a missing extern "C" fails at link time).
// gx/device.h is a kernel-side header (NVRTC); its portable part is C11 and C++.
#include "gx.h"
#include "gx/assemble.h"
#include "gx/device.h"
#include "gx/interop.h"
#include "gx/kernel.h"
#include "gx/linalg.h"
#include "gx/range.h"
#include "gx/reduce.h"

#include <cstdio>
#include <vector>

int main()
{
    // The options structs value-initialise to the documented defaults in C++ too.
    gx_map_opts mo{};
    gx_wrap_opts wo{};
    gx_dlpack_opts dlo{};
    gx_print_opts po{};
    (void)mo, (void)wo, (void)dlo, (void)po;
    static_assert(sizeof(gx_scalar) >= sizeof(double), "gx_scalar holds a double");
    gx_ctx *ctx = nullptr;
    if (gx_ctx_create(&ctx, GX_BACKEND_CPU) != GX_OK) {
        std::fprintf(stderr, "gx_ctx_create: %s\n", gx_last_error());
        return 1;
    }
    std::vector<float> host{1, 2, 3, 4};
    const int64_t n = 4;
    gx_array *a = nullptr;
    int rc = 1;
    if (gx_array_wrap(ctx, host.data(), GX_F32, 1, &n, nullptr, nullptr, &a) == GX_OK &&
        gx_map_into(ctx, "x -> x * 10.0f", 1, &a, nullptr, a) == GX_OK) {
        gx_scalar s{};
        if (gx_reduce(ctx, "+", a, nullptr, &s) == GX_OK && s.v.f == 100.0 && host[3] == 40.0f)
            rc = 0;
    }
    if (rc)
        std::fprintf(stderr, "C++ use failed: %s\n", gx_last_error());
    gx_array_release(a);
    gx_ctx_destroy(ctx);
    return rc;
}
