// raii.cpp -- gx from C++: handles owned by std::unique_ptr, released on every path.
#include "gx.h"

#include <cstdio>
#include <memory>
#include <stdexcept>

struct ctx_del { void operator()(gx_ctx *c) const { gx_ctx_destroy(c); } };
struct arr_del { void operator()(gx_array *a) const { gx_array_release(a); } };
using ctx_ptr = std::unique_ptr<gx_ctx, ctx_del>;
using arr_ptr = std::unique_ptr<gx_array, arr_del>;

static void check(gx_status s) { if (s != GX_OK) throw std::runtime_error(gx_last_error()); }
static ctx_ptr make_ctx() { gx_ctx *c = nullptr; check(gx_ctx_create(&c, GX_BACKEND_AUTO)); return ctx_ptr(c); }
static arr_ptr iota(gx_ctx *c, int64_t n) { gx_array *a = nullptr; check(gx_array_iota(c, GX_F64, n, 1, 1, &a)); return arr_ptr(a); }

int main()
{
    try {
        ctx_ptr ctx = make_ctx();
        arr_ptr x = iota(ctx.get(), 1000);
        gx_scalar s{};
        check(gx_reduce(ctx.get(), "+", x.get(), nullptr, &s));
        std::printf("sum of 1..1000 = %.0f\n", s.v.f); // arrays go before their context: declared after it
        return s.v.f == 500500.0 ? 0 : 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "gx: %s\n", e.what());
        return 1;
    }
}
