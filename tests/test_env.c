#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* test_env.c -- gx's environment variables.  A bad value warns once per process,
 * naming the variable, the value and what is accepted, and the default is used
 * (GX_BACKEND alone is an error).  Each test sets its variable before the first
 * use in its process (ctest runs every test in its own) and unsets it after. */
#include "gx_test.h"
#include "core/gx_internal.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

/* stderr goes to an unlinked temporary file between capture_begin and capture_end. */
typedef struct capture {
    int fd, saved;
} capture;

static bool capture_begin(capture *c)
{
    char path[] = "/tmp/gx-env-XXXXXX";
    c->fd = mkstemp(path);
    if (c->fd < 0)
        return false;
    unlink(path); /* nothing left behind, whatever the test does */
    fflush(stderr);
    c->saved = dup(2);
    dup2(c->fd, 2);
    return true;
}

/* Restores stderr and returns what was written meanwhile in buf. */
static void capture_end(capture *c, char *buf, size_t cap)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    lseek(c->fd, 0, SEEK_SET);
    ssize_t n = read(c->fd, buf, cap - 1);
    buf[n > 0 ? n : 0] = 0;
    close(c->fd);
}

/* gx_ctx_create with var=value (NULL value: unset), stderr of the call in err. */
static gx_status create_with(const char *var, const char *value, gx_backend_kind kind, gx_ctx **ctx, char *err,
                             size_t cap)
{
    capture c = {-1, -1};
    if (!capture_begin(&c))
        return GX_ERR_INTERNAL;
    if (value)
        setenv(var, value, 1);
    else
        unsetenv(var);
    gx_status s = gx_ctx_create(ctx, kind);
    unsetenv(var);
    capture_end(&c, err, cap);
    return s;
}

static int count_of(const char *text, const char *sub)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, sub)) != NULL; p += strlen(sub))
        n++;
    return n;
}

/* The context computes: 2*i for i in [0, 1000). */
static bool ctx_maps(gx_ctx *ctx)
{
    gx_array *x = NULL, *y = NULL;
    float h[1000];
    bool ok = gx_array_iota(ctx, GX_F32, 1000, 0, 1, &x) == GX_OK &&
              gx_map(ctx, "x -> 2.0f * x", 1, &x, NULL, &y) == GX_OK && gx_array_to_host(y, h, sizeof h) == GX_OK;
    for (int i = 0; ok && i < 1000; i++)
        ok = h[i] == 2.0f * (float)i;
    gx_array_release(x);
    gx_array_release(y);
    return ok;
}

/* ------------------------------------------------------------ tests */

GXT_TEST(env_cpu_threads_bad_values_use_the_default)
{
    static const char *const bad[] = {"garbage", "-1", "0", "4097", "3x", "99999999999999999999"};
    char err[4096];
    int warnings = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gx_ctx *ctx = NULL;
        GXT_OK(create_with("GX_CPU_THREADS", bad[i], GX_BACKEND_CPU, &ctx, err, sizeof err));
        if (i == 0) {
            GXT_CHECK(strstr(err, "GX_CPU_THREADS=\"garbage\"") != NULL);
            GXT_CHECK(strstr(err, "a whole number of threads from 1 to 4096") != NULL);
        }
        warnings += count_of(err, "GX_CPU_THREADS");
        GXT_EQ_I64(gx__ctx_workers(ctx), gx__cpu_count());
        GXT_CHECK(ctx_maps(ctx));
        GXT_OK(gx_ctx_destroy(ctx));
    }
    GXT_EQ_I64(warnings, 1); /* once per process */
    gx_ctx *ctx = NULL;
    GXT_OK(create_with("GX_CPU_THREADS", "3", GX_BACKEND_CPU, &ctx, err, sizeof err));
    GXT_EQ_I64(gx__ctx_workers(ctx), 3);
    GXT_CHECK(ctx_maps(ctx));
    GXT_OK(gx_ctx_destroy(ctx));
}

GXT_TEST(env_backend_bad_value_is_an_error)
{
    char err[4096];
    gx_ctx *ctx = NULL;
    const char *was = getenv("GX_BACKEND");
    char *saved = was ? strdup(was) : NULL; /* the suite's choice, put back below */
    gx_clear_error();
    gx_status s = create_with("GX_BACKEND", "gpu", GX_BACKEND_AUTO, &ctx, err, sizeof err);
    GXT_CHECK(s == GX_ERR_INVALID_ARGUMENT);
    GXT_CHECK(ctx == NULL);
    GXT_MSG_HAS("GX_BACKEND=\"gpu\"");
    GXT_MSG_HAS("auto, cpu and cuda");
    /* Case does not matter. */
    s = create_with("GX_BACKEND", "CPU", GX_BACKEND_AUTO, &ctx, err, sizeof err);
    if (saved)
        setenv("GX_BACKEND", saved, 1);
    free(saved);
    GXT_OK(s);
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(ctx, &k));
    GXT_CHECK(k == GX_BACKEND_CPU);
    GXT_OK(gx_ctx_destroy(ctx));
}

GXT_TEST(env_memory_limit_values)
{
    static const struct {
        const char *v;
        size_t want;
    } good[] = {
        {"1MiB", 1048576},
        {"0", 0},
        {"none", 0},
        {"2000000", 2000000},
    };
    char err[4096];
    gx_memory_stats m;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        gx_ctx *ctx = NULL;
        GXT_OK(create_with("GX_MEMORY_LIMIT", good[i].v, GX_BACKEND_AUTO, &ctx, err, sizeof err));
        GXT_OK(gx_memory_stats_get(ctx, &m));
        GXT_EQ_I64(m.limit, good[i].want);
        GXT_CHECK(strstr(err, "GX_MEMORY_LIMIT") == NULL);
        GXT_OK(gx_ctx_destroy(ctx));
    }
    gx_ctx *ctx = NULL;
    GXT_OK(create_with("GX_MEMORY_LIMIT", "50%", GX_BACKEND_AUTO, &ctx, err, sizeof err));
    gx_device_info d;
    GXT_OK(gx_device_info_get(ctx, &d));
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_EQ_I64(m.limit, d.mem_total / 2);
    gx_backend_kind k;
    GXT_OK(gx_ctx_backend(ctx, &k));
    GXT_OK(gx_ctx_destroy(ctx));
    /* A bad value leaves the backend's default: the memory the process can use on the
     * CPU (the host's memory is overcommitted), no limit on a GPU. */
    GXT_OK(create_with("GX_MEMORY_LIMIT", "lots", GX_BACKEND_AUTO, &ctx, err, sizeof err));
    GXT_OK(gx_memory_stats_get(ctx, &m));
    GXT_EQ_I64(m.limit, k == GX_BACKEND_CPU ? d.mem_total : 0);
    GXT_CHECK(strstr(err, "GX_MEMORY_LIMIT=\"lots\"") != NULL);
    GXT_CHECK(strstr(err, "8GiB") != NULL && strstr(err, "no limit") != NULL);
    GXT_CHECK(strstr(err, k == GX_BACKEND_CPU ? "default limit" : "running with no limit") != NULL);
    GXT_CHECK(ctx_maps(ctx));
    GXT_OK(gx_ctx_destroy(ctx));
}

GXT_TEST(env_profile_values)
{
    char err[8192];
    gx_ctx *ctx = NULL;
    /* Accepted values, any case, and no warning. */
    static const char *const good[] = {"OFF", "0", "no"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        GXT_OK(create_with("GX_PROFILE", good[i], GX_BACKEND_AUTO, &ctx, err, sizeof err));
        GXT_CHECK(err[0] == 0);
        GXT_OK(gx_ctx_destroy(ctx));
    }
    /* An unknown value warns and profiles as 1: the report comes at destroy. */
    capture c = {-1, -1};
    GXT_CHECK(capture_begin(&c));
    setenv("GX_PROFILE", "bogus", 1);
    gx_status s = gx_ctx_create(&ctx, GX_BACKEND_AUTO);
    unsetenv("GX_PROFILE");
    bool maps = s == GX_OK && ctx_maps(ctx);
    if (s == GX_OK)
        gx_ctx_destroy(ctx);
    capture_end(&c, err, sizeof err);
    GXT_OK(s);
    GXT_CHECK(maps);
    GXT_CHECK(strstr(err, "GX_PROFILE=\"bogus\"") != NULL);
    GXT_CHECK(strstr(err, "1/on/yes, trace, or 0/off/no") != NULL);
    GXT_CHECK(strstr(err, "gx profile") != NULL);
}

/* Removes dir and the files in it (kernel sources gx may have dumped). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        char p[1024];
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

GXT_TEST(env_dump_folder_is_checked)
{
    char err[4096], file[] = "/tmp/gx-env-file-XXXXXX", tmp[] = "/tmp/gx-env-dir-XXXXXX", sub[600], bad[600];
    int fd = mkstemp(file);
    GXT_CHECK(fd >= 0 && mkdtemp(tmp) != NULL);
    if (fd < 0)
        return;
    close(fd);
    /* A folder gx can make: made at context creation, no warning. */
    snprintf(sub, sizeof sub, "%s/dump", tmp);
    gx_ctx *ctx = NULL;
    gx_status s = create_with("GX_DUMP", sub, GX_BACKEND_AUTO, &ctx, err, sizeof err);
    struct stat st;
    bool made = stat(sub, &st) == 0 && S_ISDIR(st.st_mode);
    if (s == GX_OK) {
        GXT_CHECK(ctx->dump_dir && strcmp(ctx->dump_dir, sub) == 0);
        gx_ctx_destroy(ctx);
    }
    GXT_OK(s);
    GXT_CHECK(made);
    GXT_CHECK(strstr(err, "GX_DUMP") == NULL);
    /* Under a regular file: one warning, no dumping, and the context works. */
    snprintf(bad, sizeof bad, "%s/dump", file);
    s = create_with("GX_DUMP", bad, GX_BACKEND_AUTO, &ctx, err, sizeof err);
    if (s == GX_OK) {
        GXT_CHECK(ctx->dump_dir == NULL);
        GXT_CHECK(ctx_maps(ctx));
        gx_ctx_destroy(ctx);
    }
    GXT_OK(s);
    GXT_CHECK(strstr(err, "GX_DUMP=\"") != NULL && strstr(err, bad) != NULL);
    GXT_CHECK(strstr(err, "a folder gx can create or write into") != NULL);
    /* A regular file itself: no dumping either (the warning was given already). */
    s = create_with("GX_DUMP", file, GX_BACKEND_AUTO, &ctx, err, sizeof err);
    if (s == GX_OK) {
        GXT_CHECK(ctx->dump_dir == NULL);
        gx_ctx_destroy(ctx);
    }
    GXT_OK(s);
    GXT_CHECK(err[0] == 0);
    unlink(file);
    remove_dir(sub);
    rmdir(tmp);
}

/* The experiment knobs (GX_EW_*, GX_RG_*...) go through gx__knob_int; a name outside
 * its cached list is read afresh, so this test does not depend on what ran first. */
GXT_TEST(env_knob_bad_value_warns)
{
    char err[4096];
    capture c = {-1, -1};
    GXT_CHECK(capture_begin(&c));
    setenv("GX_TEST_KNOB", "lots", 1);
    int bad = gx__knob_int("GX_TEST_KNOB", 5, 1, 16);
    setenv("GX_TEST_KNOB", "17", 1);
    int high = gx__knob_int("GX_TEST_KNOB", 5, 1, 16);
    setenv("GX_TEST_KNOB", "7", 1);
    int good = gx__knob_int("GX_TEST_KNOB", 5, 1, 16);
    unsetenv("GX_TEST_KNOB");
    int unset = gx__knob_int("GX_TEST_KNOB", 5, 1, 16);
    capture_end(&c, err, sizeof err);
    GXT_EQ_I64(bad, 5);
    GXT_EQ_I64(high, 5);
    GXT_EQ_I64(good, 7);
    GXT_EQ_I64(unset, 5);
    GXT_CHECK(strstr(err, "GX_TEST_KNOB=\"lots\"") != NULL);
    GXT_CHECK(strstr(err, "a whole number from 1 to 16") != NULL);
    GXT_CHECK(strstr(err, "using the default (5)") != NULL);
    GXT_EQ_I64(count_of(err, "GX_TEST_KNOB"), 1);
}
