#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* runner.c -- runs one test (argv[1]) or, with no argument, every test in turn.
 * Exit codes: 0 pass, 1 fail, 77 skipped (ctest's SKIP_RETURN_CODE). */
#include "gx_test.h"
#include "gxt_list.h"

#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int gxt_failures;
const char *gxt_current = "";
static gx_ctx *gxt_the_ctx;
static int gxt_skipped;
static uint64_t gxt_state = 0x9E3779B97F4A7C15ull;

uint64_t gxt_rand_u64(void)
{
    gxt_state ^= gxt_state << 13;
    gxt_state ^= gxt_state >> 7;
    gxt_state ^= gxt_state << 17;
    return gxt_state;
}

double gxt_rand01(void) { return (double)(gxt_rand_u64() >> 11) * (1.0 / 9007199254740992.0); }

void gxt_skip(const char *why)
{
    printf("SKIP [%s]: %s\n", gxt_current, why);
    gxt_skipped = 1;
}

static int gxt_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    remove(p);
    return 0;
}

void gxt_rm_tree(const char *dir)
{
    if (dir && dir[0])
        nftw(dir, gxt_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static char gxt_made[32][256];
static int gxt_nmade;

static void gxt_remove_made(void)
{
    for (int i = 0; i < gxt_nmade; i++)
        gxt_rm_tree(gxt_made[i]);
}

void gxt_temp_dir(char *dir, size_t n)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, n, "%s/gxt-XXXXXX", t && t[0] == '/' && strlen(t) + 12 < n ? t : "/tmp");
    if (!mkdtemp(dir)) {
        dir[0] = 0;
        return;
    }
    if (gxt_nmade == 0)
        atexit(gxt_remove_made);
    if (gxt_nmade < 32)
        snprintf(gxt_made[gxt_nmade++], sizeof gxt_made[0], "%s", dir);
}

gx_ctx *gxt_ctx(void)
{
    if (gxt_the_ctx)
        return gxt_the_ctx;
    gx_status s = gx_ctx_create(&gxt_the_ctx, GX_BACKEND_AUTO);
    if (s != GX_OK) {
        const char *be = getenv("GX_BACKEND");
        if (s == GX_ERR_NO_DEVICE && be && strcmp(be, "cuda") == 0) {
            printf("SKIP [%s]: no CUDA device answers here (%s)\n", gxt_current, gx_last_error());
            exit(77);
        }
        fprintf(stderr, "cannot create a context: %s: %s\n", gx_status_string(s), gx_last_error());
        exit(1);
    }
    return gxt_the_ctx;
}

static int run_one(const char *name, void (*fn)(void))
{
    gxt_current = name;
    gxt_failures = 0;
    gxt_skipped = 0;
    /* Fresh but reproducible data per test. */
    gxt_state = 0x9E3779B97F4A7C15ull ^ (uint64_t)strlen(name) * 0x100000001B3ull;
    for (const char *p = name; *p; p++)
        gxt_state = (gxt_state ^ (uint64_t)(unsigned char)*p) * 0x100000001B3ull;
    if (!gxt_state)
        gxt_state = 1;
    const char *be = getenv("GX_BACKEND");
    /* With GX_BACKEND=cuda and no GPU, backend tests skip before doing anything. */
    if (be && strcmp(be, "cuda") == 0) {
        int n = 0;
        gx_cuda_device_count(&n);
        if (n == 0) {
            printf("SKIP [%s]: GX_BACKEND=cuda but no CUDA device answers on this machine\n", name);
            return 77;
        }
    }
    fn();
    gx_ctx_destroy(gxt_the_ctx);
    gxt_the_ctx = NULL;
    if (gxt_failures) {
        printf("FAIL [%s]: %d check(s) failed\n", name, gxt_failures);
        return 1;
    }
    if (gxt_skipped)
        return 77;
    printf("PASS [%s]\n", name);
    return 0;
}

int gxt_child_cache_probe(void);

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--child-cache-probe") == 0)
        return gxt_child_cache_probe();
    if (argc > 1) {
        for (int i = 0; gxt_list[i].name; i++)
            if (strcmp(gxt_list[i].name, argv[1]) == 0)
                return run_one(gxt_list[i].name, gxt_list[i].fn);
        fprintf(stderr, "no test named %s\n", argv[1]);
        return 2;
    }
    int pass = 0, fail = 0, skip = 0;
    for (int i = 0; gxt_list[i].name; i++) {
        int r = run_one(gxt_list[i].name, gxt_list[i].fn);
        pass += r == 0;
        fail += r == 1;
        skip += r == 77;
    }
    printf("%d passed, %d failed, %d skipped\n", pass, fail, skip);
    return fail ? 1 : 0;
}
