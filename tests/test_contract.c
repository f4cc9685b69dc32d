#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* setenv, mkstemp, dup */
#endif
/* test_contract.c -- promises of include/gx.h and the include/gx/ headers that no other test
 * asserted (issue 25).  One test per promise or small group, named after it; values
 * are checked against independent host references, failures by the exact status and
 * a substring of the message the header promises.  Promises that need the CUDA
 * backend are at the end; they skip on the CPU. */
#include "gx_test.h"
#include "backend/cpu/cpu_mem.h"

#include <complex.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static bool on_cpu(void)
{
    gx_backend_kind k = GX_BACKEND_AUTO;
    return gx_ctx_backend(gxt_ctx(), &k) == GX_OK && k == GX_BACKEND_CPU;
}

/* stderr goes to an unlinked temporary file between cap_begin and cap_end. */
typedef struct cap {
    int fd, saved;
} cap;

static bool cap_begin(cap *c)
{
    char path[] = "/tmp/gx-contract-XXXXXX";
    c->fd = mkstemp(path);
    if (c->fd < 0)
        return false;
    unlink(path);
    fflush(stderr);
    c->saved = dup(2);
    dup2(c->fd, 2);
    return true;
}

static void cap_end(cap *c, char *buf, size_t n)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    lseek(c->fd, 0, SEEK_SET);
    ssize_t k = read(c->fd, buf, n - 1);
    buf[k > 0 ? k : 0] = 0;
    close(c->fd);
}

static gx_array *i32_array(gx_ctx *ctx, int ndim, const int64_t *shape, const int32_t *h)
{
    gx_array *a = NULL;
    if (gx_array_from_host(ctx, GX_I32, ndim, shape, h, &a) != GX_OK)
        GXT_FAIL_AT(__FILE__, __LINE__, "from_host: %s", gx_last_error());
    return a;
}

/* The i32 contents of a (any view), or -1 in n on failure; caller frees. */
static int32_t *i32_back(const gx_array *a, int64_t *n)
{
    *n = -1;
    if (!a || gx_array_size(a, n) != GX_OK)
        return NULL;
    int32_t *h = malloc((size_t)(*n + 1) * 4);
    if (gx_array_to_host(a, h, (size_t)(*n + 1) * 4) != GX_OK)
        *n = -1;
    return h;
}

/* ------------------------------------------------------------ gx.h: status, errors, versions */

/* gx_status_string: "Name of a status; never NULL" -- for every status and for junk. */
GXT_TEST(contract_status_string_never_null)
{
    static const char *const names[] = {"GX_OK",
                                        "GX_ERR_INVALID_ARGUMENT",
                                        "GX_ERR_INVALID_HANDLE",
                                        "GX_ERR_OUT_OF_MEMORY",
                                        "GX_ERR_SHAPE",
                                        "GX_ERR_DTYPE",
                                        "GX_ERR_SYNTAX",
                                        "GX_ERR_TYPE",
                                        "GX_ERR_COMPILE",
                                        "GX_ERR_NO_DEVICE",
                                        "GX_ERR_BACKEND",
                                        "GX_ERR_LAUNCH",
                                        "GX_ERR_KERNEL_FAULT",
                                        "GX_ERR_UNSUPPORTED",
                                        "GX_ERR_IO",
                                        "GX_ERR_INTERNAL",
                                        "GX_ERR_INDEX",
                                        "GX_ERR_TIMEOUT"};
    for (int s = 0; s <= (int)GX_ERR_TIMEOUT; s++)
        GXT_CHECK(strcmp(gx_status_string((gx_status)s), names[s]) == 0);
    GXT_CHECK(gx_status_string((gx_status)999) != NULL);
    GXT_CHECK(gx_status_string((gx_status)-1) != NULL);
}

static void *thread_last_error(void *arg)
{
    const char **out = arg;
    *out = gx_last_error()[0] == 0 ? "" : "not empty";
    return NULL;
}

/* gx_last_error: one message after a failure, "" after gx_clear_error, per thread. */
GXT_TEST(contract_last_error_clear_and_per_thread)
{
    gx_array *a = NULL;
    int64_t n = -1;
    GXT_CHECK(gx_array_empty(gxt_ctx(), GX_F32, 1, &n, &a) == GX_ERR_SHAPE);
    GXT_CHECK(gx_last_error()[0] != 0);
    /* another thread has its own (empty) message */
    const char *other = "unset";
    pthread_t t;
    GXT_CHECK(pthread_create(&t, NULL, thread_last_error, &other) == 0);
    pthread_join(t, NULL);
    GXT_CHECK(strcmp(other, "") == 0);
    GXT_CHECK(gx_last_error()[0] != 0); /* ours is untouched by the other thread */
    gx_clear_error();
    GXT_CHECK(strcmp(gx_last_error(), "") == 0);
    GXT_CHECK(strcmp(gx_version(), GX_VERSION_STRING) == 0);
    GXT_EQ_I64(GX_VERSION_NUMBER, GX_VERSION_MAJOR * 10000 + GX_VERSION_MINOR * 100 + GX_VERSION_PATCH);
}

static gx_status try_twice(gx_ctx *ctx, int *reached)
{
    int64_t n = -5;
    gx_array *a = NULL;
    GX_TRY(gx_array_empty(ctx, GX_F32, 1, &n, &a));
    *reached = 1; /* never: GX_TRY returned */
    return GX_OK;
}

/* gx_report prints "file:line: expr: GX_ERR_NAME: <message>" and returns s; GX_OK
 * prints nothing.  GX_TRY returns the failing status from the enclosing function. */
GXT_TEST(contract_report_and_try)
{
    gx_ctx *ctx = gxt_ctx();
    char err[4096];
    cap c;
    if (!cap_begin(&c)) {
        GXT_FAIL_AT(__FILE__, __LINE__, "cannot capture stderr");
        return;
    }
    gx_status ok = gx_report(GX_OK, "fine()", "here.c", 1);
    int64_t n = -2;
    gx_array *a = NULL;
    gx_status s = gx_array_empty(ctx, GX_F32, 1, &n, &a);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", gx_last_error());
    gx_status r = gx_report(s, "make_it()", "file.c", 42);
    int reached = 0;
    gx_status t = try_twice(ctx, &reached);
    cap_end(&c, err, sizeof err);
    GXT_CHECK(ok == GX_OK);
    GXT_CHECK(r == GX_ERR_SHAPE && t == GX_ERR_SHAPE && reached == 0);
    char want[1200];
    snprintf(want, sizeof want, "file.c:42: make_it(): GX_ERR_SHAPE: %s", msg);
    GXT_CHECK(strstr(err, want) != NULL);
    GXT_CHECK(strstr(err, "here.c") == NULL);
    GXT_CHECK(strstr(err, "gx_array_empty(ctx, GX_F32, 1, &n, &a)") != NULL); /* GX_TRY's text of the call */
}

/* ------------------------------------------------------------ gx.h: dtypes and scalars */

/* gx_dtype_size: 0 for an invalid dtype; gx_dtype_name: "?" for one, "default" for
 * GX_DTYPE_DEFAULT; every element type's name parses back. */
GXT_TEST(contract_dtype_queries)
{
    static const size_t sizes[GX_DTYPE_COUNT] = {0, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
    for (int t = 0; t < GX_DTYPE_COUNT; t++)
        GXT_EQ_I64(gx_dtype_size((gx_dtype)t), sizes[t]);
    GXT_EQ_I64(gx_dtype_size((gx_dtype)GX_DTYPE_COUNT), 0);
    GXT_EQ_I64(gx_dtype_size((gx_dtype)-3), 0);
    GXT_CHECK(strcmp(gx_dtype_name((gx_dtype)99), "?") == 0);
    GXT_CHECK(strcmp(gx_dtype_name(GX_DTYPE_DEFAULT), "default") == 0);
    GXT_CHECK(strcmp(gx_dtype_name(GX_F32), "f32") == 0);
    for (int t = 1; t < GX_DTYPE_COUNT; t++) {
        gx_dtype back = GX_DTYPE_DEFAULT;
        GXT_OK(gx_dtype_parse(gx_dtype_name((gx_dtype)t), &back));
        GXT_EQ_I64(back, t);
    }
    gx_dtype d;
    GXT_STATUS(gx_dtype_parse("float", &d), GX_ERR_DTYPE);
    GXT_MSG_HAS("float");
}

/* gx_scalar_to_f64: u64/i64 beyond 2^53 round.  (Its "complex: the real part" is not
 * asserted yet: gx_scalar_to_f64, in src/ops/reduce.c, reads a complex value's bits
 * as an integer; the fix belongs with the reductions work in that file.) */
GXT_TEST(contract_scalar_to_f64)
{
    GXT_CHECK(gx_scalar_to_f64(GX_SCALAR_U64(UINT64_MAX)) == 18446744073709551616.0);
    GXT_CHECK(gx_scalar_to_f64(GX_SCALAR_I64(INT64_MIN)) == -9223372036854775808.0);
    GXT_CHECK(gx_scalar_to_f64(GX_SCALAR_I64((1ll << 53) + 1)) == 9007199254740992.0);
    GXT_CHECK(gx_scalar_to_f64(GX_SCALAR_I32(-7)) == -7.0);
    GXT_CHECK(gx_scalar_to_f64(GX_SCALAR_BOOL(5)) == 1.0);
    GXT_CHECK(gx_scalar_to_f64(GX_SCALAR_F32(0.25)) == 0.25);
    GXT_CHECK(gx_scalar_to_f64(GX_SCALAR_C128(-1.5, 9)) == -1.5); /* complex: the real part */
    GXT_CHECK(gx_scalar_to_f64(GX_SCALAR_C64(2.25, -3)) == 2.25);
}

/* A complex sum with opts->dtype: c64/c128 choose the precision; a real dtype is refused. */
GXT_TEST(contract_complex_sum_dtype_option)
{
    gx_ctx *ctx = gxt_ctx();
    double z[8] = {1, 2, 3, 4, 5, 6, 7, 8}; /* 1+2j, 3+4j, 5+6j, 7+8j */
    int64_t n = 4;
    gx_array *a = NULL, *r = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_C128, 1, &n, z, &a));
    gx_scalar s;
    gx_reduce_opts c64 = {.dtype = GX_C64}, f64 = {.dtype = GX_F64};
    GXT_OK(gx_reduce(ctx, "+", a, &c64, &s));
    GXT_CHECK(s.dtype == GX_C64 && s.v.c[0] == 16 && s.v.c[1] == 20);
    GXT_STATUS(gx_reduce(ctx, "+", a, &f64, &s), GX_ERR_DTYPE);
    GXT_MSG_HAS("c64 or c128");
    GXT_OK(gx_reduce_to(ctx, "sum", a, &c64, &r));
    gx_array_desc d;
    GXT_OK(gx_array_describe(r, &d));
    float h[2];
    GXT_OK(gx_array_to_host(r, h, sizeof h));
    GXT_CHECK(d.dtype == GX_C64 && h[0] == 16 && h[1] == 20);
    GXT_STATUS(gx_reduce_into(ctx, "+", a, &f64, r), GX_ERR_DTYPE);
    gx_array_release(r);
    gx_array_release(a);
}

/* ------------------------------------------------------------ gx.h: contexts and info */

/* "released by a *_destroy / *_release that accepts NULL": every one of them. */
GXT_TEST(contract_destroy_accepts_null)
{
    gx_ctx *ctx = gxt_ctx();
    GXT_OK(gx_ctx_destroy(NULL));
    GXT_OK(gx_array_release(NULL));
    GXT_OK(gx_event_destroy(NULL));
    GXT_OK(gx_pipe_destroy(NULL));
    GXT_OK(gx_kernel_destroy(NULL));
    GXT_OK(gx_stream_destroy(NULL));
    GXT_OK(gx_host_free(ctx, NULL));
    gx_text_free(NULL);
}

/* gx_backend_name: "auto", "cpu", "cuda"; gx_ctx_backend is never AUTO;
 * gx_ctx_create_on: index 0 for the CPU, another index is GX_ERR_NO_DEVICE. */
GXT_TEST(contract_backend_names_and_devices)
{
    GXT_CHECK(strcmp(gx_backend_name(GX_BACKEND_AUTO), "auto") == 0);
    GXT_CHECK(strcmp(gx_backend_name(GX_BACKEND_CPU), "cpu") == 0);
    GXT_CHECK(strcmp(gx_backend_name(GX_BACKEND_CUDA), "cuda") == 0);
    gx_backend_kind k = GX_BACKEND_AUTO;
    GXT_OK(gx_ctx_backend(gxt_ctx(), &k));
    GXT_CHECK(k == GX_BACKEND_CPU || k == GX_BACKEND_CUDA);
    gx_ctx *c = NULL;
    GXT_OK(gx_ctx_create_on(&c, GX_BACKEND_CPU, 0));
    GXT_OK(gx_ctx_backend(c, &k));
    GXT_CHECK(k == GX_BACKEND_CPU);
    GXT_OK(gx_ctx_destroy(c));
    c = NULL;
    GXT_STATUS(gx_ctx_create_on(&c, GX_BACKEND_CPU, 1), GX_ERR_NO_DEVICE);
    GXT_CHECK(c == NULL);
    int ndev = 0;
    GXT_OK(gx_cuda_device_count(&ndev));
    GXT_STATUS(gx_ctx_create_on(&c, GX_BACKEND_CUDA, ndev), GX_ERR_NO_DEVICE); /* one past the last */
    GXT_CHECK(c == NULL);
    GXT_STATUS(gx_ctx_backend(NULL, &k), GX_ERR_INVALID_ARGUMENT);
}

/* gx_device_info on the CPU: compute capability 0.0, one thread per block, warp 1,
 * multiprocessors = cores, memory within what the machine has. */
GXT_TEST(contract_cpu_device_info)
{
    gx_ctx *c = NULL;
    GXT_OK(gx_ctx_create(&c, GX_BACKEND_CPU));
    gx_device_info d;
    GXT_OK(gx_device_info_get(c, &d));
    GXT_CHECK(d.cc_major == 0 && d.cc_minor == 0);
    GXT_EQ_I64(d.max_threads_per_block, 1024);
    GXT_EQ_I64(d.warp_size, 32);
    GXT_EQ_I64(d.multiprocessors, sysconf(_SC_NPROCESSORS_ONLN));
    size_t phys = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    GXT_CHECK(d.mem_total > 0 && d.mem_total <= phys);
    GXT_CHECK(d.mem_free <= d.mem_total);
    GXT_CHECK(d.name[0] != 0);
    GXT_OK(gx_ctx_destroy(c));
}

/* The cap/needed convention (gx_info_text and those that refer to it): buf may be NULL
 * when cap is 0; the text is NUL-terminated and truncated to cap; *needed = length + 1. */
GXT_TEST(contract_cap_needed_convention)
{
    gx_ctx *ctx = gxt_ctx();
    size_t need = 0, need2 = 0;
    GXT_OK(gx_info_text(ctx, NULL, 0, &need));
    GXT_CHECK(need > 1);
    /* The report holds live figures (memory available), so a second call may need a
     * few bytes more or less: room to spare, then each call's own length. */
    char *full = malloc(need + 64);
    GXT_OK(gx_info_text(ctx, full, need + 64, &need2));
    GXT_EQ_I64(strlen(full) + 1, need2);
    GXT_CHECK(need2 + 16 > need && need2 < need + 16);
    char small[16];
    memset(small, 'x', sizeof small);
    GXT_OK(gx_info_text(ctx, small, sizeof small, NULL));
    GXT_EQ_I64(strlen(small), sizeof small - 1);
    GXT_CHECK(strncmp(small, full, sizeof small - 1) == 0);
    free(full);
    GXT_OK(gx_info_text(NULL, NULL, 0, &need)); /* ctx may be NULL */
    GXT_CHECK(need > 1);
    /* the profiler's report follows the same convention */
    GXT_OK(gx_profile_start(ctx, 0));
    gx_array *a = NULL;
    int64_t n = 8;
    GXT_OK(gx_array_zeros(ctx, GX_F32, 1, &n, &a));
    /* Stopped first: a live session's report spans the time until the report ("1
     * operations over 12.32 us"), so two reports of it may differ in length; a
     * stopped one ends at gx_profile_stop. */
    GXT_OK(gx_profile_stop(ctx));
    GXT_OK(gx_profile_report_text(ctx, NULL, 0, &need));
    char *rep = malloc(need);
    GXT_OK(gx_profile_report_text(ctx, rep, need, &need2));
    GXT_EQ_I64(need2, need);
    GXT_EQ_I64(strlen(rep) + 1, need);
    free(rep);
    gx_array_release(a);
}

/* gx_profile_report prints the same table as gx_profile_report_text to a FILE. */
GXT_TEST(contract_profile_report_to_file)
{
    gx_ctx *ctx = gxt_ctx();
    GXT_OK(gx_profile_start(ctx, 0));
    gx_array *a = NULL, *b = NULL;
    int64_t n = 1000;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &a));
    GXT_OK(gx_map(ctx, "x -> x * 2", 1, &a, NULL, &b));
    GXT_OK(gx_profile_stop(ctx));
    FILE *f = tmpfile();
    GXT_CHECK(f != NULL);
    if (!f)
        return;
    GXT_OK(gx_profile_report(ctx, f));
    char buf[8192];
    rewind(f);
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    buf[k] = 0;
    fclose(f);
    size_t need = 0;
    GXT_OK(gx_profile_report_text(ctx, NULL, 0, &need));
    GXT_CHECK(strstr(buf, "gx_map") != NULL);
    GXT_CHECK(k + 1 >= need - 1); /* the same table (report() may end in a newline) */
    GXT_STATUS(gx_profile_report(ctx, NULL), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(a);
    gx_array_release(b);
}

/* ------------------------------------------------------------ gx.h: memory */

/* gx_memory_stats.in_use: "0 once every array is released", even after ops that keep
 * scratch (reductions); peak keeps the highest. */
GXT_TEST(contract_memory_in_use_zero_after_release)
{
    gx_ctx *ctx = gxt_ctx();
    gx_memory_stats m;
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_EQ_I64(m.in_use, 0);
    gx_array *a = NULL, *v = NULL, *r = NULL;
    int64_t n = 100000;
    GXT_OK(gx_array_iota(ctx, GX_F32, n, 0, 1, &a));
    gx_slice sl = {1, GX_END, 3};
    GXT_OK(gx_array_view(a, &sl, &v));
    gx_scalar s;
    GXT_OK(gx_sum(a, &s));
    int ax = 0;
    gx_reduce_opts o = {.axes = &ax, .naxes = 1};
    GXT_OK(gx_reduce_to(ctx, "max", v, &o, &r));
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_CHECK(m.in_use >= (size_t)n * 4);
    GXT_OK(gx_array_release(a));
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_CHECK(m.in_use >= (size_t)n * 4); /* the view keeps the storage */
    GXT_OK(gx_array_release(v));
    GXT_OK(gx_array_release(r));
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_EQ_I64(m.in_use, 0);
    GXT_CHECK(m.peak >= (size_t)n * 4);
    GXT_STATUS(gx_memory_stats_get(ctx, NULL), GX_ERR_INVALID_ARGUMENT);
}

/* The CPU backend's default limit is what the process can use (physical memory or
 * the cgroup's cap): an allocation beyond it is GX_ERR_OUT_OF_MEMORY at the call,
 * naming the limit, without touching memory.  A GPU has no default limit. */
GXT_TEST(contract_memory_default_limit)
{
    unsetenv("GX_MEMORY_LIMIT");
    gx_ctx *ctx = gxt_ctx();
    gx_memory_stats m0, m1;
    GXT_OK(gx_memory_stats_get(ctx, &m0));
    if (!on_cpu()) {
        GXT_EQ_I64(m0.limit, 0);
        return;
    }
    size_t phys = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    GXT_CHECK(m0.limit > 0 && m0.limit <= phys);
    gx_device_info d;
    GXT_OK(gx_device_info_get(ctx, &d));
    GXT_EQ_I64(m0.limit, d.mem_total);
    int64_t n = (int64_t)((m0.limit + (1ull << 30)) / 8);
    gx_array *a = NULL;
    GXT_STATUS(gx_array_empty(ctx, GX_F64, 1, &n, &a), GX_ERR_OUT_OF_MEMORY);
    GXT_CHECK(a == NULL);
    char lim[64];
    snprintf(lim, sizeof lim, "limit %.2f GiB", (double)m0.limit / (double)(1ull << 30));
    GXT_MSG_HAS(lim);
    GXT_MSG_HAS("over the memory limit");
    GXT_MSG_HAS("pool state");
    GXT_OK(gx_memory_stats_get(ctx, &m1));
    GXT_EQ_I64(m1.retries, m0.retries); /* refused before asking the system */
    GXT_EQ_I64(m1.peak, m0.peak);
    GXT_EQ_I64(m1.in_use, 0);
    /* 0 = no limit, the caller's explicit choice; then a limit of its own */
    GXT_OK(gx_memory_set_limit(ctx, 0));
    GXT_OK(gx_memory_stats_get(ctx, &m1));
    GXT_EQ_I64(m1.limit, 0);
    GXT_OK(gx_memory_set_limit(ctx, 3u << 20));
    GXT_OK(gx_memory_stats_get(ctx, &m1));
    GXT_EQ_I64(m1.limit, 3u << 20);
}

/* GX_MEMORY_LIMIT overrides the default; gx_memory_set_limit overrides both. */
GXT_TEST(contract_memory_limit_env_then_set)
{
    setenv("GX_MEMORY_LIMIT", "1GiB", 1);
    gx_ctx *ctx = gxt_ctx();
    unsetenv("GX_MEMORY_LIMIT");
    gx_memory_stats m;
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_EQ_I64(m.limit, 1ull << 30);
    gx_array *a = NULL;
    int64_t n = (1 << 30) / 4 + 1;
    GXT_STATUS(gx_array_empty(ctx, GX_F32, 1, &n, &a), GX_ERR_OUT_OF_MEMORY);
    GXT_MSG_HAS("limit 1.00 GiB");
    GXT_OK(gx_memory_set_limit(ctx, 2ull << 30));
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_EQ_I64(m.limit, 2ull << 30);
    GXT_STATUS(gx_memory_set_limit(NULL, 0), GX_ERR_INVALID_ARGUMENT);
}

#if defined(__SANITIZE_ADDRESS__)
#define GXT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GXT_ASAN 1
#endif
#endif

/* The CPU backend's default limit is the process's memory, so the contexts that keep
 * it share it: two together cannot take more than one could.  A context with a limit
 * of its own (gx_memory_set_limit, GX_MEMORY_LIMIT) answers to that alone.  The
 * arrays are never touched, so no page of them is backed. */
GXT_TEST(contract_cpu_default_limit_shared_by_contexts)
{
    unsetenv("GX_MEMORY_LIMIT");
    if (!on_cpu()) {
        gxt_skip("the default limit is the CPU backend's (a GPU's driver refuses by itself)");
        return;
    }
#ifdef GXT_ASAN
    gxt_skip("ASan's allocator is not asked for 60% of the machine's memory");
    return;
#endif
    gx_ctx *a = gxt_ctx(), *b = NULL;
    GXT_OK(gx_ctx_create(&b, GX_BACKEND_CPU));
    gx_memory_stats m;
    GXT_OK(gx_memory_stats_get(a, &m));
    int64_t n = (int64_t)(m.limit / 5 * 3);
    gx_array *x = NULL, *y = NULL;
    gx_status s = gx_array_empty(a, GX_U8, 1, &n, &x);
    if (s == GX_ERR_OUT_OF_MEMORY && strstr(gx_last_error(), "has no more")) {
        gx_ctx_destroy(b);
        gxt_skip("this system does not reserve 60% of its memory at once (strict overcommit)");
        return;
    }
    GXT_OK(s);
    /* b holds nothing, yet a's array leaves it too little of the share */
    GXT_STATUS(gx_array_empty(b, GX_U8, 1, &n, &y), GX_ERR_OUT_OF_MEMORY);
    GXT_CHECK(y == NULL);
    GXT_MSG_HAS("over the memory limit this process's CPU contexts share");
    GXT_MSG_HAS("held by the others");
    gx_memory_stats mb;
    GXT_OK(gx_memory_stats_get(b, &mb));
    GXT_EQ_I64(mb.in_use, 0);
    GXT_EQ_I64(mb.retries, 0); /* refused before asking the system */
    /* released, the share is b's to take */
    GXT_OK(gx_array_release(x));
    x = NULL;
    GXT_OK(gx_array_empty(b, GX_U8, 1, &n, &y));
    /* a limit of a's own: the share no longer bounds a (the system still may) */
    GXT_OK(gx_memory_set_limit(a, 0));
    s = gx_array_empty(a, GX_U8, 1, &n, &x);
    GXT_CHECK(s == GX_OK || (s == GX_ERR_OUT_OF_MEMORY && !strstr(gx_last_error(), "share")));
    gx_array_release(x);
    gx_array_release(y);
    GXT_OK(gx_ctx_destroy(b));
    /* everything given back: one context may take 60% again */
    GXT_OK(gx_memory_set_limit(a, m.limit));
    gx_ctx *c = NULL;
    GXT_OK(gx_ctx_create(&c, GX_BACKEND_CPU));
    GXT_OK(gx_array_empty(c, GX_U8, 1, &n, &y));
    gx_array_release(y);
    GXT_OK(gx_ctx_destroy(c));
}

static void write_file(const char *dir, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    /* make the folders on the way */
    for (char *p = path + strlen(dir) + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The CPU backend reads cgroup caps: v2 memory.max ("max" = none) and v1
 * memory.limit_in_bytes (~2^63 = none), at every level up to the root, smallest wins. */
GXT_TEST(contract_cpu_cgroup_limit_parsing)
{
    char dir[256];
    gxt_temp_dir(dir, sizeof dir);
    GXT_CHECK(dir[0] != 0);
    if (!dir[0])
        return;
    /* nothing readable: no cap */
    GXT_EQ_I64(cpu_mem_cgroup_limit(dir, "0::/\n"), 0);
    /* v2, the namespace root ("0::/") */
    write_file(dir, "memory.max", "max\n");
    GXT_EQ_I64(cpu_mem_cgroup_limit(dir, "0::/\n"), 0);
    write_file(dir, "memory.max", "8589934592\n");
    GXT_EQ_I64(cpu_mem_cgroup_limit(dir, "0::/\n"), 8589934592ll);
    /* v2, nested: a parent's cap applies to its children */
    write_file(dir, "a/memory.max", "2000000\n");
    write_file(dir, "a/b/memory.max", "max\n");
    GXT_EQ_I64(cpu_mem_cgroup_limit(dir, "0::/a/b\n"), 2000000);
    write_file(dir, "a/b/memory.max", "1500000\n");
    GXT_EQ_I64(cpu_mem_cgroup_limit(dir, "0::/a/b\n"), 1500000);
    /* v1: the memory controller's line (alone or in a list), its "unlimited" value */
    char d1[300];
    snprintf(d1, sizeof d1, "%s/v1", dir);
    mkdir(d1, 0755);
    write_file(d1, "memory/memory.limit_in_bytes", "9223372036854771712\n");
    write_file(d1, "memory/x/memory.limit_in_bytes", "9223372036854771712\n");
    GXT_EQ_I64(cpu_mem_cgroup_limit(d1, "4:memory:/x\n3:cpu:/\n"), 0);
    write_file(d1, "memory/x/memory.limit_in_bytes", "4096000\n");
    GXT_EQ_I64(cpu_mem_cgroup_limit(d1, "5:cpuset:/\n4:memory:/x\n0::/\n"), 4096000);
    GXT_EQ_I64(cpu_mem_cgroup_limit(d1, "4:cpu,memory:/x/y/z\n"), 4096000); /* missing levels skipped */
    GXT_EQ_I64(cpu_mem_cgroup_limit(d1, "4:memoryx:/x\n"), 0);              /* another controller */
    GXT_EQ_I64(cpu_mem_cgroup_limit(d1, ""), 0);                            /* no /proc: the roots, unlimited here */
    write_file(d1, "memory/memory.limit_in_bytes", "7000000\n");
    GXT_EQ_I64(cpu_mem_cgroup_limit(d1, ""), 7000000);
    GXT_EQ_I64(cpu_mem_cgroup_limit(dir, ""), 8589934592ll);
}

/* ------------------------------------------------------------ gx.h: arrays and views */

/* gx_slice: negative start/stop count from the end; GX_END is "to the end" in
 * either direction; step 0 is an error. */
GXT_TEST(contract_slice_negative_and_end)
{
    gx_ctx *ctx = gxt_ctx();
    gx_array *a = NULL;
    GXT_OK(gx_array_iota(ctx, GX_I32, 10, 0, 1, &a));
    static const struct {
        gx_slice s;
        int n;
        int32_t want[10];
    } cases[] = {
        {{-4, -1, 1}, 3, {6, 7, 8}},
        {{-1, -4, -1}, 3, {9, 8, 7}},
        {{-3, GX_END, 1}, 3, {7, 8, 9}},
        {{-1, GX_END, -1}, 10, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
        {{1, -1, 3}, 3, {1, 4, 7}},
        {{0, GX_END, 1}, 10, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}, /* GX_ALL */
        {{4, 4, 1}, 0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gx_array *v = NULL;
        GXT_OK(gx_array_view(a, &cases[c].s, &v));
        int64_t n;
        int32_t *h = i32_back(v, &n);
        GXT_EQ_I64(n, cases[c].n);
        for (int i = 0; i < cases[c].n && i < n; i++)
            if (h[i] != cases[c].want[i]) {
                GXT_FAIL_AT(__FILE__, __LINE__, "slice case %zu element %d: %d, want %d", c, i, h[i], cases[c].want[i]);
                break;
            }
        free(h);
        gx_array_release(v);
    }
    gx_array *v = NULL;
    gx_slice zero = {-3, GX_END, 0};
    GXT_STATUS(gx_array_view(a, &zero, &v), GX_ERR_SHAPE);
    GXT_MSG_HAS("step");
    GXT_CHECK(v == NULL);
    gx_array_release(a);
}

/* gx_array_ctx names the owner; gx_array_device_ptr is a host pointer on the CPU;
 * gx_array_similar is dense even for a view; get/set outside the shape are
 * GX_ERR_SHAPE; gx_array_from_host_into checks the buffer's size. */
GXT_TEST(contract_array_accessors)
{
    gx_ctx *ctx = gxt_ctx(), *owner = NULL;
    int64_t sh[2] = {4, 6};
    int32_t h[24];
    for (int i = 0; i < 24; i++)
        h[i] = i * 3 - 7;
    gx_array *a = i32_array(ctx, 2, sh, h), *v = NULL, *s = NULL;
    GXT_OK(gx_array_ctx(a, &owner));
    GXT_CHECK(owner == ctx);
    GXT_STATUS(gx_array_ctx(NULL, &owner), GX_ERR_INVALID_ARGUMENT);
    gx_slice sl[2] = {{0, GX_END, 2}, {-1, GX_END, -2}};
    GXT_OK(gx_array_view(a, sl, &v));
    GXT_OK(gx_array_similar(v, &s));
    gx_array_desc d;
    GXT_OK(gx_array_describe(s, &d));
    GXT_CHECK(d.contiguous && !d.is_view && d.dtype == GX_I32 && d.ndim == 2 && d.shape[0] == 2 && d.shape[1] == 3);
    int64_t bad[2] = {4, 0}, neg[2] = {0, -1};
    int32_t x = 5;
    GXT_STATUS(gx_array_set(a, bad, &x), GX_ERR_SHAPE);
    GXT_STATUS(gx_array_set(a, neg, &x), GX_ERR_SHAPE);
    char small[8];
    GXT_STATUS(gx_array_from_host_into(small, sizeof small, a), GX_ERR_INVALID_ARGUMENT);
    if (on_cpu()) {
        void *p = NULL;
        GXT_OK(gx_array_device_ptr(a, &p));
        int32_t *q = p;
        GXT_EQ_I64(q[23], 23 * 3 - 7);
        q[5] = 1234; /* a host pointer: writes are the array's */
        int64_t idx[2] = {0, 5};
        GXT_OK(gx_array_get(a, idx, &x));
        GXT_EQ_I64(x, 1234);
    }
    gx_array_release(s);
    gx_array_release(v);
    gx_array_release(a);
}

/* ------------------------------------------------------------ gx.h: events */

/* gx_event_elapsed_ms: "two recorded events of one context". */
GXT_TEST(contract_events_one_context_recorded)
{
    gx_ctx *ctx = gxt_ctx(), *other = NULL;
    GXT_OK(gx_ctx_create(&other, GX_BACKEND_CPU));
    gx_event *a = NULL, *b = NULL, *c = NULL;
    GXT_OK(gx_event_create(ctx, &a));
    GXT_OK(gx_event_create(ctx, &b));
    GXT_OK(gx_event_create(other, &c));
    float ms = -1;
    GXT_OK(gx_event_record(a));
    GXT_STATUS(gx_event_elapsed_ms(a, b, &ms), GX_ERR_INVALID_ARGUMENT); /* b not recorded */
    GXT_MSG_HAS("record");
    GXT_OK(gx_event_record(b));
    GXT_OK(gx_event_elapsed_ms(a, b, &ms));
    GXT_CHECK(ms >= 0);
    GXT_OK(gx_event_record(c));
    GXT_STATUS(gx_event_elapsed_ms(a, c, &ms), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("different contexts");
    GXT_OK(gx_event_destroy(a));
    GXT_OK(gx_event_destroy(b));
    GXT_OK(gx_event_destroy(c));
    GXT_OK(gx_ctx_destroy(other));
}

/* ------------------------------------------------------------ gx/range.h: filter and pipelines */

/* gx_filter / gx_findall: the inputs have ONE shape (GX_ERR_SHAPE naming both, even
 * with one element count), out stays NULL on failure; equal shapes work for views
 * and 0-d arrays. */
GXT_TEST(contract_filter_inputs_one_shape)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t s34[2] = {3, 4}, s43[2] = {4, 3};
    int32_t h[12];
    for (int i = 0; i < 12; i++)
        h[i] = i;
    gx_array *a = i32_array(ctx, 2, s34, h), *b = i32_array(ctx, 2, s43, h);
    gx_array *in[2] = {a, b}, *out[2] = {a, a}, *ix = a;
    GXT_STATUS(gx_filter(ctx, "x, y -> x < y", 2, in, NULL, out), GX_ERR_SHAPE);
    GXT_MSG_HAS("gx_filter: input 2 has shape (4, 3) but input 1 has (3, 4); all inputs need one shape");
    GXT_CHECK(out[0] == NULL && out[1] == NULL);
    GXT_STATUS(gx_findall(ctx, "x, y -> x < y", 2, in, NULL, &ix), GX_ERR_SHAPE);
    GXT_MSG_HAS("gx_findall: input 2 has shape (4, 3) but input 1 has (3, 4)");
    GXT_CHECK(ix == NULL);
    /* another ndim with one element count */
    int64_t n12 = 12;
    gx_array *flat = i32_array(ctx, 1, &n12, h);
    gx_array *in2[2] = {a, flat};
    GXT_STATUS(gx_filter(ctx, "x, y -> x < y", 2, in2, NULL, out), GX_ERR_SHAPE);
    GXT_MSG_HAS("input 2 has shape (12,) but input 1 has (3, 4)");
    /* equal shapes through a view: b transposed is (3, 4), elements b[j][i] = j*3 + i */
    int perm[2] = {1, 0};
    gx_array *bt = NULL;
    GXT_OK(gx_array_permute(b, perm, &bt));
    gx_array *in3[2] = {a, bt};
    GXT_OK(gx_filter(ctx, "x, y -> x < y", 2, in3, NULL, out));
    GXT_OK(gx_findall(ctx, "x, y -> x < y", 2, in3, NULL, &ix));
    int64_t n0, n1, ni;
    int32_t *o0 = i32_back(out[0], &n0), *o1 = i32_back(out[1], &n1);
    int64_t *hi = NULL;
    GXT_OK(gx_array_size(ix, &ni));
    hi = malloc((size_t)(ni + 1) * 8);
    GXT_OK(gx_array_to_host(ix, hi, (size_t)(ni + 1) * 8));
    int64_t k = 0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
            int32_t x = r * 4 + c, y = c * 3 + r;
            if (!(x < y))
                continue;
            if (k < n0 && k < n1 && k < ni && (o0[k] != x || o1[k] != y || hi[k] != r * 4 + c))
                GXT_FAIL_AT(__FILE__, __LINE__, "element %lld", (long long)k);
            k++;
        }
    GXT_EQ_I64(n0, k);
    GXT_EQ_I64(n1, k);
    GXT_EQ_I64(ni, k);
    free(o0);
    free(o1);
    free(hi);
    gx_array_release(out[0]);
    gx_array_release(out[1]);
    gx_array_release(ix);
    /* 0-d inputs: one element each; a 0-d with a (1,) is two shapes */
    int32_t five = 5, seven = 7;
    gx_array *z5 = i32_array(ctx, 0, NULL, &five), *z7 = i32_array(ctx, 0, NULL, &seven);
    int64_t one = 1;
    gx_array *o7 = i32_array(ctx, 1, &one, &seven);
    gx_array *zz[2] = {z5, z7}, *zo[2] = {z5, o7};
    GXT_OK(gx_filter(ctx, "x, y -> x < y", 2, zz, NULL, out));
    int32_t *r0 = i32_back(out[0], &n0), *r1 = i32_back(out[1], &n1);
    GXT_CHECK(n0 == 1 && n1 == 1 && r0[0] == 5 && r1[0] == 7);
    free(r0);
    free(r1);
    gx_array_release(out[0]);
    gx_array_release(out[1]);
    GXT_OK(gx_findall(ctx, "x, y -> x > y", 2, zz, NULL, &ix));
    GXT_OK(gx_array_size(ix, &ni));
    GXT_EQ_I64(ni, 0);
    gx_array_release(ix);
    GXT_STATUS(gx_filter(ctx, "x, y -> x < y", 2, zo, NULL, out), GX_ERR_SHAPE);
    GXT_MSG_HAS("input 2 has shape (1,) but input 1 has ()");
    /* input counts outside 1..8 */
    GXT_STATUS(gx_filter(ctx, "x -> x > 0", 0, in, NULL, out), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_findall(ctx, "x -> x > 0", 9, in, NULL, &ix), GX_ERR_INVALID_ARGUMENT);
    gx_array *all[] = {a, b, flat, bt, z5, z7, o7};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
}

/* gx_pipe_from_arrays: one element COUNT (shapes may differ: tuples pair row-major
 * positions), each contiguous or a 1-d view with any stride; else GX_ERR_SHAPE. */
GXT_TEST(contract_pipe_from_arrays_sizes_and_layouts)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t s34[2] = {3, 4}, n12 = 12, n24 = 24, n11 = 11;
    int32_t h[24];
    for (int i = 0; i < 24; i++)
        h[i] = i;
    gx_array *a = i32_array(ctx, 2, s34, h), *f = i32_array(ctx, 1, &n12, h), *g = i32_array(ctx, 1, &n24, h);
    gx_array *e = i32_array(ctx, 1, &n11, h), *rev = NULL, *at = NULL;
    gx_slice back2 = {-1, GX_END, -2}; /* 23, 21, ..., 1: 12 elements */
    GXT_OK(gx_array_view(g, &back2, &rev));
    gx_array *src[3] = {a, f, rev};
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_from_arrays(ctx, 3, src, &p));
    GXT_OK(gx_pipe_map(p, "x, y, z -> x * 10000 + y * 100 + z", NULL));
    gx_array *o = NULL;
    GXT_OK(gx_pipe_collect(p, 1, &o));
    int64_t n;
    int32_t *r = i32_back(o, &n);
    GXT_EQ_I64(n, 12);
    for (int i = 0; i < 12 && i < n; i++)
        GXT_EQ_I64(r[i], i * 10000 + i * 100 + (23 - 2 * i));
    free(r);
    gx_array_release(o);
    gx_pipe_destroy(p);
    p = NULL;
    gx_array *mism[2] = {a, e};
    GXT_STATUS(gx_pipe_from_arrays(ctx, 2, mism, &p), GX_ERR_SHAPE);
    GXT_MSG_HAS("11 elements");
    GXT_CHECK(p == NULL);
    int perm[2] = {1, 0};
    GXT_OK(gx_array_permute(a, perm, &at));
    gx_array *nd[2] = {f, at};
    GXT_STATUS(gx_pipe_from_arrays(ctx, 2, nd, &p), GX_ERR_SHAPE);
    GXT_MSG_HAS("non-contiguous");
    GXT_STATUS(gx_pipe_from_arrays(ctx, 9, src, &p), GX_ERR_INVALID_ARGUMENT);
    gx_array *all[] = {a, f, g, e, rev, at};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gx_array_release(all[i]);
}

/* Pipeline stages and queries: drop k >= 0, component index in range, iota
 * integers wrap, to_host too small sets *len; scan_into converts to out's dtype
 * unless exact_dtype. */
GXT_TEST(contract_pipe_stage_arguments)
{
    gx_ctx *ctx = gxt_ctx();
    gx_pipe *p = NULL;
    GXT_OK(gx_pipe_iota(ctx, GX_U8, 300, 250, 1, &p));
    GXT_STATUS(gx_pipe_drop(p, -1), GX_ERR_INVALID_ARGUMENT);
    gx_dtype t;
    GXT_STATUS(gx_pipe_dtype(p, 1, &t), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_pipe_dtype(p, -1, &t), GX_ERR_INVALID_ARGUMENT);
    GXT_OK(gx_pipe_dtype(p, 0, &t));
    GXT_CHECK(t == GX_U8);
    int64_t len = 0;
    GXT_OK(gx_pipe_length(p, &len));
    GXT_EQ_I64(len, 300);
    uint8_t h[300], tiny[10];
    len = -1;
    GXT_STATUS(gx_pipe_to_host(p, tiny, sizeof tiny, &len), GX_ERR_INVALID_ARGUMENT);
    GXT_EQ_I64(len, 300);
    GXT_OK(gx_pipe_to_host(p, h, sizeof h, &len));
    GXT_EQ_I64(len, 300);
    for (int i = 0; i < 300; i++)
        if (h[i] != (uint8_t)(250 + i)) {
            GXT_FAIL_AT(__FILE__, __LINE__, "iota u8 at %d: %d", i, h[i]);
            break;
        }
    GXT_OK(gx_pipe_drop(p, 290));
    GXT_OK(gx_pipe_length(p, &len));
    GXT_EQ_I64(len, 10);
    GXT_OK(gx_pipe_to_host(p, tiny, sizeof tiny, &len));
    GXT_EQ_I64(tiny[0], (uint8_t)(250 + 290));
    GXT_OK(gx_pipe_drop(p, 100)); /* more than there is: empty */
    GXT_OK(gx_pipe_length(p, &len));
    GXT_EQ_I64(len, 0);
    gx_pipe_destroy(p);
    /* gx_pipe_scan_into: accumulates in out's dtype; exact_dtype wants the accumulator's */
    GXT_OK(gx_pipe_iota(ctx, GX_I32, 5, 1, 1, &p));
    gx_array *o = NULL;
    int64_t n5 = 5;
    GXT_OK(gx_array_empty(ctx, GX_F64, 1, &n5, &o));
    GXT_OK(gx_pipe_scan_into(p, "+", NULL, o));
    double cs[5];
    GXT_OK(gx_array_to_host(o, cs, sizeof cs));
    for (int k = 0; k < 5; k++)
        GXT_NEAR(cs[k], (k + 1) * (k + 2) / 2, 0);
    gx_pipe_opts ex = {.exact_dtype = 1};
    GXT_STATUS(gx_pipe_scan_into(p, "+", &ex, o), GX_ERR_DTYPE);
    gx_array_release(o);
    gx_pipe_destroy(p);
}

/* ------------------------------------------------------------ gx/reduce.h */

/* Empty input gives the neutral element (integers: "max" the lowest value, "min" the
 * highest, "&" all ones, "|" "^" 0; floats: "min" NaN; "||" false; count 0);
 * argmin/argmax/findmin/findmax of nothing are GX_ERR_INVALID_ARGUMENT. */
GXT_TEST(contract_reduce_empty_neutral_elements)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t z = 0;
    gx_array *i = NULL, *u = NULL, *f = NULL;
    GXT_OK(gx_array_empty(ctx, GX_I32, 1, &z, &i));
    GXT_OK(gx_array_empty(ctx, GX_U8, 1, &z, &u));
    GXT_OK(gx_array_empty(ctx, GX_F64, 1, &z, &f));
    gx_scalar s;
    GXT_OK(gx_reduce(ctx, "max", i, NULL, &s));
    GXT_CHECK(s.dtype == GX_I32 && s.v.i == INT32_MIN);
    GXT_OK(gx_reduce(ctx, "min", i, NULL, &s));
    GXT_CHECK(s.dtype == GX_I32 && s.v.i == INT32_MAX);
    GXT_OK(gx_reduce(ctx, "&", i, NULL, &s));
    GXT_EQ_I64(s.v.i, -1);
    GXT_OK(gx_reduce(ctx, "|", i, NULL, &s));
    GXT_EQ_I64(s.v.i, 0);
    GXT_OK(gx_reduce(ctx, "^", i, NULL, &s));
    GXT_EQ_I64(s.v.i, 0);
    GXT_OK(gx_reduce(ctx, "max", u, NULL, &s));
    GXT_CHECK(s.dtype == GX_U8 && s.v.u == 0);
    GXT_OK(gx_reduce(ctx, "min", u, NULL, &s));
    GXT_CHECK(s.dtype == GX_U8 && s.v.u == 255);
    GXT_OK(gx_reduce(ctx, "&", u, NULL, &s));
    GXT_EQ_I64(s.v.u, 255);
    GXT_OK(gx_reduce(ctx, "min", f, NULL, &s));
    GXT_CHECK(s.dtype == GX_F64 && isnan(s.v.f));
    GXT_OK(gx_reduce(ctx, "||", f, NULL, &s));
    GXT_CHECK(s.dtype == GX_BOOL && s.v.i == 0);
    GXT_OK(gx_reduce(ctx, "count", i, NULL, &s));
    GXT_CHECK(s.dtype == GX_I64 && s.v.i == 0);
    bool any = true, all = false;
    GXT_OK(gx_any(i, &any));
    GXT_OK(gx_all(i, &all));
    GXT_CHECK(!any && all);
    int64_t n = -1, ix = -1;
    GXT_OK(gx_count(f, &n));
    GXT_EQ_I64(n, 0);
    GXT_STATUS(gx_argmax(i, &ix), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_findmin(f, &s, &ix), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_findmax(u, &s, &ix), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_reduce(ctx, "mean", f, NULL, &s), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(i);
    gx_array_release(u);
    gx_array_release(f);
}

/* Result dtypes of the table in gx/reduce.h. */
GXT_TEST(contract_reduce_result_dtypes)
{
    gx_ctx *ctx = gxt_ctx();
    static const struct {
        gx_dtype in;
        const char *op;
        gx_dtype want;
    } t[] = {
        {GX_BOOL, "+", GX_I64},   {GX_I8, "sum", GX_I64},   {GX_U16, "+", GX_U64},    {GX_U8, "*", GX_U64},
        {GX_F32, "+", GX_F32},    {GX_F64, "prod", GX_F64}, {GX_I16, "max", GX_I16},  {GX_U32, "^", GX_U32},
        {GX_I32, "&&", GX_BOOL},  {GX_F32, "any", GX_BOOL}, {GX_U8, "count", GX_I64}, {GX_F32, "mean", GX_F32},
        {GX_I32, "mean", GX_F64}, {GX_U64, "mean", GX_F64},
    };
    int64_t n = 5;
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        gx_array *x = NULL;
        GXT_OK(gx_array_ones(ctx, t[k].in, 1, &n, &x));
        gx_scalar s;
        GXT_OK(gx_reduce(ctx, t[k].op, x, NULL, &s));
        if (s.dtype != t[k].want)
            GXT_FAIL_AT(__FILE__, __LINE__, "%s over %s gives %s, want %s", t[k].op, gx_dtype_name(t[k].in),
                        gx_dtype_name(s.dtype), gx_dtype_name(t[k].want));
        gx_array_release(x);
    }
    /* a lambda operator: opts->dtype, else the init's dtype */
    gx_array *x = NULL;
    GXT_OK(gx_array_ones(ctx, GX_I32, 1, &n, &x));
    gx_scalar init = GX_SCALAR_I64(0), s;
    gx_reduce_opts o = {.init = &init};
    GXT_OK(gx_reduce(ctx, "a, b -> a + b", x, &o, &s));
    GXT_CHECK(s.dtype == GX_I64 && s.v.i == 5);
    o.dtype = GX_F64;
    GXT_OK(gx_reduce(ctx, "a, b -> a + b", x, &o, &s));
    GXT_CHECK(s.dtype == GX_F64 && s.v.f == 5);
    gx_array_release(x);
}

/* *_into: "your array (contiguous, the same element count ...)": a strided view of the
 * right size is GX_ERR_SHAPE; a contiguous one of another shape with that count works. */
GXT_TEST(contract_reduce_into_out_contiguous)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t sh[2] = {4, 6}, s2[2] = {6, 2};
    int32_t h[24];
    int64_t want[6] = {0};
    for (int i = 0; i < 24; i++) {
        h[i] = i * 7 % 11;
        want[i % 6] += h[i];
    }
    gx_array *x = i32_array(ctx, 2, sh, h), *big = NULL, *col = NULL, *flat = NULL;
    GXT_OK(gx_array_zeros(ctx, GX_I64, 2, s2, &big));
    gx_slice sl[2] = {{0, GX_END, 1}, {0, 1, 1}}; /* 6 elements, stride 2 */
    GXT_OK(gx_array_view(big, sl, &col));
    int ax = 0;
    gx_reduce_opts o = {.axes = &ax, .naxes = 1};
    GXT_STATUS(gx_reduce_into(ctx, "+", x, &o, col), GX_ERR_SHAPE);
    GXT_MSG_HAS("contiguous");
    int64_t n6 = 6;
    GXT_OK(gx_array_zeros(ctx, GX_I64, 1, &n6, &flat));
    GXT_OK(gx_reduce_into(ctx, "+", x, &o, flat));
    int64_t got[6];
    GXT_OK(gx_array_to_host(flat, got, sizeof got));
    for (int j = 0; j < 6; j++)
        GXT_EQ_I64(got[j], want[j]);
    gx_array_release(x);
    gx_array_release(big);
    gx_array_release(col);
    gx_array_release(flat);
}

/* Complex arrays: "+" / "sum" work (to the input's dtype, no init, over all or along
 * axes); every other operator, statistic, lambda and find/arg is GX_ERR_DTYPE; a
 * mapreduce takes complex inputs with a real-valued map (docs/LAMBDAS.md). */
GXT_TEST(contract_reduce_complex_inputs)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t sh[2] = {3, 5};
    float h[30];
    double re = 0, im = 0, col_re[5] = {0}, col_im[5] = {0}, abs_sum = 0;
    for (int k = 0; k < 15; k++) {
        h[2 * k] = (float)(gxt_rand01() * 2 - 1);
        h[2 * k + 1] = (float)(gxt_rand01() * 2 - 1);
        re += h[2 * k];
        im += h[2 * k + 1];
        col_re[k % 5] += h[2 * k];
        col_im[k % 5] += h[2 * k + 1];
        abs_sum += cabs((double)h[2 * k] + I * (double)h[2 * k + 1]);
    }
    gx_array *z = NULL, *z128 = NULL, *cols = NULL, *y = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_C64, 2, sh, h, &z));
    GXT_OK(gx_array_clone(z, GX_C128, &z128));
    gx_scalar s;
    GXT_OK(gx_reduce(ctx, "sum", z, NULL, &s));
    GXT_CHECK(s.dtype == GX_C64);
    GXT_NEAR(s.v.c[0], re, 1e-5);
    GXT_NEAR(s.v.c[1], im, 1e-5);
    GXT_OK(gx_sum(z128, &s));
    GXT_CHECK(s.dtype == GX_C128);
    GXT_NEAR(s.v.c[0], re, 1e-12);
    GXT_NEAR(s.v.c[1], im, 1e-12);
    /* along axis 0, into the caller's array */
    int64_t cs[2] = {1, 5};
    GXT_OK(gx_array_zeros(ctx, GX_C128, 2, cs, &cols));
    int ax = 0;
    gx_reduce_opts oa = {.axes = &ax, .naxes = 1};
    GXT_OK(gx_reduce_into(ctx, "+", z128, &oa, cols));
    double back[10];
    GXT_OK(gx_array_to_host(cols, back, sizeof back));
    for (int j = 0; j < 5; j++) {
        GXT_NEAR(back[2 * j], col_re[j], 1e-12);
        GXT_NEAR(back[2 * j + 1], col_im[j], 1e-12);
    }
    gx_scalar init = GX_SCALAR_C64(0, 0);
    gx_reduce_opts oi = {.init = &init};
    GXT_STATUS(gx_reduce(ctx, "+", z, &oi, &s), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("init");
    static const char *const refused[] = {"*", "prod", "max", "min", "mean", "count", "&&", "||"};
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        GXT_STATUS(gx_reduce(ctx, refused[k], z, NULL, &s), GX_ERR_DTYPE);
        GXT_MSG_HAS("\"+\"");
    }
    GXT_STATUS(gx_reduce(ctx, "a, b -> a + b", z, &oi, &s), GX_ERR_DTYPE);
    GXT_STATUS(gx_prod(z, &s), GX_ERR_DTYPE);
    GXT_STATUS(gx_mean(z128, &s), GX_ERR_DTYPE);
    bool b;
    int64_t ix;
    GXT_STATUS(gx_any(z, &b), GX_ERR_DTYPE);
    GXT_STATUS(gx_argmax(z, &ix), GX_ERR_DTYPE);
    GXT_STATUS(gx_findmin(z, &s, &ix), GX_ERR_DTYPE);
    GXT_OK(gx_mapreduce(ctx, "z -> abs(z)", "+", 1, &z128, NULL, &s));
    GXT_CHECK(s.dtype == GX_F64);
    GXT_NEAR(s.v.f, abs_sum, 1e-12);
    GXT_STATUS(gx_mapreduce(ctx, "z -> z", "+", 1, &z, NULL, &s), GX_ERR_DTYPE);
    GXT_MSG_HAS("re(");
    /* scans and pipelines do not take complex arrays */
    GXT_STATUS(gx_scan(ctx, "+", z, NULL, &y), GX_ERR_DTYPE);
    gx_pipe *p = NULL;
    GXT_STATUS(gx_pipe_from_arrays(ctx, 1, &z, &p), GX_ERR_DTYPE);
    gx_array_release(z);
    gx_array_release(z128);
    gx_array_release(cols);
}

/* ------------------------------------------------------------ gx/linalg.h */

/* gx_matmul: "A new C = alpha·op(A)·op(B) (beta is ignored)". */
GXT_TEST(contract_matmul_ignores_beta)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t sa[2] = {2, 3}, sb[2] = {3, 2};
    double ha[6] = {1, 2, 3, 4, 5, 6}, hb[6] = {7, 8, 9, 10, 11, 12}, hc[4];
    gx_array *a = NULL, *b = NULL, *c = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_F64, 2, sa, ha, &a));
    GXT_OK(gx_array_from_host(ctx, GX_F64, 2, sb, hb, &b));
    gx_matmul_opts o = {.alpha = GX_SCALAR_F64(2), .beta = GX_SCALAR_F64(5)};
    gx_status s = gx_matmul(a, b, &o, &c);
    if (s == GX_ERR_UNSUPPORTED && strstr(gx_last_error(), "without CBLAS")) {
        gxt_skip("this gx was built without CBLAS: install libopenblas-dev and rebuild");
        gx_array_release(a);
        gx_array_release(b);
        return;
    }
    GXT_OK(s);
    GXT_OK(gx_array_to_host(c, hc, sizeof hc));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double w = 0;
            for (int k = 0; k < 3; k++)
                w += ha[i * 3 + k] * hb[k * 2 + j];
            GXT_NEAR(hc[i * 2 + j], 2 * w, 1e-12);
        }
    gx_array_release(a);
    gx_array_release(b);
    gx_array_release(c);
}

/* gx_rand_int: lo < hi and every value of [lo, hi) must fit the dtype (hi may be the
 * dtype's largest value + 1); values land in [lo, hi). */
GXT_TEST(contract_rand_int_bounds)
{
    gx_ctx *ctx = gxt_ctx();
    int64_t n = 4096;
    gx_array *u = NULL, *i = NULL;
    GXT_OK(gx_rand_int(ctx, (gx_rng){7, 0, 0}, 0, 256, GX_U8, 1, &n, &u));
    GXT_OK(gx_rand_int(ctx, (gx_rng){7, 1, 0}, -128, 128, GX_I8, 1, &n, &i));
    uint8_t hu[4096];
    int8_t hi[4096];
    GXT_OK(gx_array_to_host(u, hu, sizeof hu));
    GXT_OK(gx_array_to_host(i, hi, sizeof hi));
    bool lo_seen = false, hi_seen = false;
    for (int k = 0; k < 4096; k++) {
        lo_seen |= hi[k] == -128;
        hi_seen |= hu[k] == 255;
    }
    GXT_CHECK(lo_seen && hi_seen); /* both ends are reachable (4096 draws of 256 values) */
    GXT_STATUS(gx_rand_int_into((gx_rng){0, 0, 0}, -1, 10, u), GX_ERR_INVALID_ARGUMENT);
    GXT_MSG_HAS("u8");
    GXT_STATUS(gx_rand_int_into((gx_rng){0, 0, 0}, 0, 257, u), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_rand_int_into((gx_rng){0, 0, 0}, -129, 0, i), GX_ERR_INVALID_ARGUMENT);
    GXT_STATUS(gx_rand_int_into((gx_rng){0, 0, 0}, 3, 2, i), GX_ERR_INVALID_ARGUMENT);
    gx_array_release(u);
    gx_array_release(i);
}

/* FFT scaling: BACKWARD forward 1 / inverse 1/N, ORTHO both 1/sqrt(N), FORWARD
 * forward 1/N / inverse 1, NONE neither; exp(-2 pi i jk/N) forward. */
GXT_TEST(contract_fft_norm_modes)
{
    gx_ctx *ctx = gxt_ctx();
    enum { N = 6 };
    double complex x[N];
    for (int j = 0; j < N; j++)
        x[j] = (gxt_rand01() - 0.5) + I * (gxt_rand01() - 0.5);
    gx_array *in = NULL;
    int64_t n = N;
    GXT_OK(gx_array_from_host(ctx, GX_C128, 1, &n, x, &in));
    const double scale[4][2] = {{1, 1.0 / N}, {1 / sqrt(N), 1 / sqrt(N)}, {1.0 / N, 1}, {1, 1}};
    for (int norm = 0; norm < 4; norm++)
        for (int dir = 0; dir < 2; dir++) {
            gx_array *out = NULL;
            GXT_OK(gx_fft(in, 1, (gx_fft_dir)dir, (gx_fft_norm)norm, &out));
            double complex got[N];
            GXT_OK(gx_array_to_host(out, got, sizeof got));
            for (int k = 0; k < N; k++) {
                double complex w = 0;
                for (int j = 0; j < N; j++)
                    w += x[j] * cexp((dir ? 2 : -2) * M_PI * I * j * k / N);
                w *= scale[norm][dir];
                GXT_NEAR(creal(got[k]), creal(w), 1e-12);
                GXT_NEAR(cimag(got[k]), cimag(w), 1e-12);
            }
            gx_array_release(out);
        }
    gx_array_release(in);
}

/* gx_irfft ignores the imaginary parts a Hermitian spectrum cannot have: bin 0 and,
 * for even n_last, bin n_last/2. */
GXT_TEST(contract_irfft_ignores_non_hermitian_parts)
{
    gx_ctx *ctx = gxt_ctx();
    enum { NL = 8, NB = NL / 2 + 1 };
    double complex X[NB], Xj[NB];
    for (int k = 0; k < NB; k++)
        X[k] = (gxt_rand01() - 0.5) + I * (gxt_rand01() - 0.5);
    X[0] = creal(X[0]);
    X[NB - 1] = creal(X[NB - 1]);
    memcpy(Xj, X, sizeof X);
    Xj[0] += 3.0 * I;
    Xj[NB - 1] -= 5.0 * I;
    int64_t nb = NB;
    gx_array *a = NULL, *b = NULL, *ra = NULL, *rb = NULL;
    GXT_OK(gx_array_from_host(ctx, GX_C128, 1, &nb, X, &a));
    GXT_OK(gx_array_from_host(ctx, GX_C128, 1, &nb, Xj, &b));
    GXT_OK(gx_irfft(a, 1, NL, GX_FFT_NORM_BACKWARD, &ra));
    GXT_OK(gx_irfft(b, 1, NL, GX_FFT_NORM_BACKWARD, &rb));
    double ha[NL], hb[NL];
    GXT_OK(gx_array_to_host(ra, ha, sizeof ha));
    GXT_OK(gx_array_to_host(rb, hb, sizeof hb));
    for (int j = 0; j < NL; j++) {
        /* the host reference: the full Hermitian spectrum, inverse, scaled by 1/N */
        double complex w = 0;
        for (int k = 0; k < NL; k++) {
            double complex Xk = k < NB ? X[k] : conj(X[NL - k]);
            w += Xk * cexp(2 * M_PI * I * j * k / NL);
        }
        GXT_NEAR(ha[j], creal(w) / NL, 1e-12);
        GXT_NEAR(hb[j], ha[j], 1e-12);
    }
    gx_array_release(a);
    gx_array_release(b);
    gx_array_release(ra);
    gx_array_release(rb);
}

/* ------------------------------------------------------------ gx/kernel.h */

/* CPU backend: gx_kernel_compile runs the CUDA C subset (and refuses what is outside
 * it with GX_ERR_UNSUPPORTED); streams are tokens whose work is complete when each call returns; gx_host_alloc gives ordinary memory; async
 * copies behave as the synchronous ones. */
GXT_TEST(contract_cpu_kernels_and_streams)
{
    gx_ctx *c = NULL;
    GXT_OK(gx_ctx_create(&c, GX_BACKEND_CPU));
    gx_kernel *k = (gx_kernel *)1;
    GXT_STATUS(gx_kernel_compile(c, "extern \"C\" __global__ void f() { asm(\"trap;\"); }", "f", NULL, &k),
               GX_ERR_UNSUPPORTED);
    GXT_CHECK(k == NULL);
    GXT_OK(gx_kernel_compile(c, "extern \"C\" __global__ void f() {}", "f", NULL, &k));
    GXT_OK(gx_kernel_destroy(k));
    gx_stream *s = NULL, *cur = (gx_stream *)1;
    GXT_OK(gx_stream_create(c, &s));
    GXT_OK(gx_ctx_set_stream(c, s));
    GXT_OK(gx_ctx_get_stream(c, &cur));
    GXT_CHECK(cur == s);
    float *host = NULL;
    GXT_OK(gx_host_alloc(c, 64 * sizeof(float), (void **)&host));
    for (int i = 0; i < 64; i++)
        host[i] = (float)i;
    int64_t n = 64;
    gx_array *a = NULL;
    GXT_OK(gx_array_empty(c, GX_F32, 1, &n, &a));
    GXT_OK(gx_array_from_host_into_async(host, 64 * sizeof(float), a));
    memset(host, 0, 64 * sizeof(float)); /* the CPU copy is done: the array keeps its values */
    GXT_OK(gx_array_to_host_async(a, host, 64 * sizeof(float)));
    GXT_OK(gx_stream_sync(s));
    for (int i = 0; i < 64; i++)
        GXT_CHECK(host[i] == (float)i);
    GXT_OK(gx_stream_destroy(s)); /* the current stream: back to the default */
    GXT_OK(gx_ctx_get_stream(c, &cur));
    GXT_CHECK(cur == NULL);
    GXT_OK(gx_host_free(c, host));
    gx_array_release(a);
    GXT_OK(gx_ctx_destroy(c));
}

/* The following promises of gx/kernel.h need the CUDA backend (they skip on the
 * CPU): gx_kernel_suggest's fill_grid is the grid that fills the device, i.e.
 * active blocks per SM times SMs; and gx_kernel_attrs reports the entry and the
 * parameters gx read. */
GXT_TEST(contract_cuda_suggest_fill_grid)
{
    gx_ctx *ctx = gxt_ctx();
    if (on_cpu()) {
        gxt_skip("needs the CUDA backend (user kernels, occupancy)");
        return;
    }
    gx_kernel *k = NULL;
    GXT_OK(
        gx_kernel_compile(ctx,
                          "extern \"C\" __global__ void fill(float *a, long long n, float v)\n"
                          "{ long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) a[i] = v; }\n",
                          "fill", NULL, &k));
    gx_launch_cfg cfg;
    unsigned fill = 0;
    GXT_OK(gx_kernel_suggest(k, 1000000, 0, &cfg, &fill));
    GXT_CHECK(cfg.block[0] > 0 && cfg.grid[0] == (1000000 + cfg.block[0] - 1) / cfg.block[0]);
    GXT_CHECK(cfg.shmem == 0 && cfg.stream == NULL && cfg.cooperative == 0);
    int per_sm = 0;
    GXT_OK(gx_kernel_active_blocks(k, (int)cfg.block[0], 0, &per_sm));
    gx_device_info d;
    GXT_OK(gx_device_info_get(ctx, &d));
    GXT_EQ_I64(fill, (unsigned)per_sm * (unsigned)d.multiprocessors);
    gx_launch_cfg one;
    GXT_OK(gx_kernel_suggest(k, 0, 0, &one, NULL));
    GXT_CHECK(one.grid[0] >= 1); /* at least 1 */
    gx_kernel_attrs at;
    GXT_OK(gx_kernel_attrs_get(k, &at));
    GXT_CHECK(strcmp(at.entry, "fill") == 0);
    GXT_EQ_I64(at.nparams, 3);
    GXT_OK(gx_kernel_destroy(k));
}
