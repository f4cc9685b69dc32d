/* gx_test.h -- the test harness.
 *
 * Each tests/test_<area>.c holds tests written as
 *     GXT_TEST(name) { ... GXT_OK(gx_call(...)); GXT_CHECK(x == 3); ... }
 * CMake finds every GXT_TEST in those files, builds one runner (tests/runner.c) with
 * all of them in one list, and registers each as its own ctest test, run in its own
 * process:  gx_tests <name>.  The backend comes from GX_BACKEND (the suite is
 * registered once for cpu and once for cuda; a cuda run with no GPU prints a visible
 * SKIP line and exits 77, which ctest reports as skipped).
 */
#ifndef GX_TEST_H
#define GX_TEST_H

#include "gx.h"
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int gxt_failures;
extern const char *gxt_current;

#define GXT_TEST(name) void gxt_test_##name(void)

#define GXT_FAIL_AT(file, line, ...)                                      \
    do {                                                                  \
        fprintf(stderr, "%s:%d: [%s] FAILED: ", file, line, gxt_current); \
        fprintf(stderr, __VA_ARGS__);                                     \
        fprintf(stderr, "\n");                                            \
        gxt_failures++;                                                   \
    } while (0)

/* Non-fatal check. */
#define GXT_CHECK(cond)                                   \
    do {                                                  \
        if (!(cond))                                      \
            GXT_FAIL_AT(__FILE__, __LINE__, "%s", #cond); \
    } while (0)
/* Fatal: a gx call must succeed (prints gx_last_error otherwise). */
#define GXT_OK(expr)                                                                                           \
    do {                                                                                                       \
        gx_status gxt_s_ = (expr);                                                                             \
        if (gxt_s_ != GX_OK) {                                                                                 \
            GXT_FAIL_AT(__FILE__, __LINE__, "%s -> %s: %s", #expr, gx_status_string(gxt_s_), gx_last_error()); \
            return;                                                                                            \
        }                                                                                                      \
    } while (0)
/* A gx call must fail with this status and leave a non-empty message. */
#define GXT_STATUS(expr, want)                                                                         \
    do {                                                                                               \
        gx_clear_error();                                                                              \
        gx_status gxt_s_ = (expr);                                                                     \
        if (gxt_s_ != (want))                                                                          \
            GXT_FAIL_AT(__FILE__, __LINE__, "%s -> %s, want %s (%s)", #expr, gx_status_string(gxt_s_), \
                        gx_status_string(want), gx_last_error());                                      \
        else if (gxt_s_ != GX_OK && gx_last_error()[0] == 0)                                           \
            GXT_FAIL_AT(__FILE__, __LINE__, "%s: no error message", #expr);                            \
    } while (0)
#define GXT_EQ_I64(a, b)                                                                       \
    do {                                                                                       \
        long long gxt_a_ = (long long)(a), gxt_b_ = (long long)(b);                            \
        if (gxt_a_ != gxt_b_)                                                                  \
            GXT_FAIL_AT(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, gxt_a_, gxt_b_); \
    } while (0)
#define GXT_NEAR(a, b, tol)                                                                     \
    do {                                                                                        \
        double gxt_a_ = (double)(a), gxt_b_ = (double)(b);                                      \
        if (!(fabs(gxt_a_ - gxt_b_) <= (tol) * (1.0 + fabs(gxt_b_))))                           \
            GXT_FAIL_AT(__FILE__, __LINE__, "%s ~ %s: %.17g vs %.17g", #a, #b, gxt_a_, gxt_b_); \
    } while (0)
/* Message must contain a substring. */
#define GXT_MSG_HAS(sub)                                                                         \
    do {                                                                                         \
        if (!strstr(gx_last_error(), (sub)))                                                     \
            GXT_FAIL_AT(__FILE__, __LINE__, "message lacks \"%s\": %s", (sub), gx_last_error()); \
    } while (0)

/* A context on the backend under test (GX_BACKEND); the runner destroys it. */
gx_ctx *gxt_ctx(void);
/* Deterministic random bits / doubles in [0,1) for test data (xorshift, seeded per test). */
uint64_t gxt_rand_u64(void);
double gxt_rand01(void);
/* Marks the current test skipped with a reason (printed as a visible SKIP line): the
 * runner then exits 77, which ctest reports as "Skipped" -- unless a check failed.
 * Every test that returns without doing its work must call it (never a bare
 * return, never a printf of "SKIP"). */
void gxt_skip(const char *why);
/* The context under test when it runs on CUDA; else NULL and the test is marked
 * skipped ("needs the CUDA backend"). */
gx_ctx *gxt_cuda_ctx(void);
/* NVRTC present (a trivial offline compile)?  If not, the test is marked skipped. */
bool gxt_have_nvrtc(void);
/* A new empty folder gxt-XXXXXX in $TMPDIR (or /tmp) written into dir (n >= 64
 * bytes; "" if it could not be made), removed with everything in it when the test
 * process exits -- after a failed check too.  Tests leave nothing in the temp dir. */
void gxt_temp_dir(char *dir, size_t n);
/* Removes a folder and everything below it (no-op for ""). */
void gxt_rm_tree(const char *dir);

/* ------------------------------------------------------------ one op, two backends
 * In the spirit of ggml's test-backend-ops: GXT_CROSS runs an operation on a CPU
 * context and on the context under test (gxt_ctx(): CUDA in the cuda.* runs) with the
 * SAME random inputs, and compares the two results element by element.  Under
 * GX_BACKEND=cpu both sides are CPU contexts, so the case still runs and must agree
 * with itself (a determinism check); with a GPU it is CPU against CUDA. */

/* One input: dtype and shape.  Values are random: floats in [-1, 1), signed ints in
 * [-50, 50], unsigned in [0, 100], bool 0/1, complex parts in [-1, 1). */
typedef struct gxt_in {
    gx_dtype dtype;
    int ndim;
    int64_t shape[4];
} gxt_in;
/* The operation under test: a new array *out from in[0..nin) on ctx. */
typedef gx_status (*gxt_op)(gx_ctx *ctx, gx_array *const *in, gx_array **out);
/* Results must have one dtype and shape and agree within tol, relative to
 * 1 + |CPU value| (0: bit-exact after conversion to double; NaN matches NaN).
 * A GX_ERR_UNSUPPORTED from either side (a library this build lacks) skips the case
 * and marks the whole test skipped (a ctest skip unless another check fails): a test
 * that could not do all of its work never counts as passed. */
void gxt_cross(const char *what, gxt_op op, int nin, const gxt_in *in, double tol, const char *file, int line);
#define GXT_CROSS(op, nin, in, tol) gxt_cross(#op, (op), (nin), (in), (tol), __FILE__, __LINE__)

#endif
