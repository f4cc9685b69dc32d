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

gx_ctx *gxt_cuda_ctx(void)
{
    gx_ctx *ctx = gxt_ctx();
    gx_backend_kind k;
    if (gx_ctx_backend(ctx, &k) != GX_OK || k != GX_BACKEND_CUDA) {
        gxt_skip("needs the CUDA backend (GX_BACKEND=cuda on a GPU machine)");
        return NULL;
    }
    return ctx;
}

bool gxt_have_nvrtc(void)
{
    char *t = NULL;
    gx_status s = gx_kernel_ptx_offline("extern \"C\" __global__ void k() {}", "k", NULL, NULL, &t);
    gx_text_free(t);
    if (s == GX_ERR_UNSUPPORTED) {
        gxt_skip("NVRTC is not installed here");
        return false;
    }
    return true;
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

/* ------------------------------------------------------------ cross-backend cases */

#include "core/gx_internal.h" /* gx__dtype_from_f64: values of any dtype from doubles */

static double gxt_cross_value(gx_dtype t)
{
    uint64_t r = gxt_rand_u64();
    if (t == GX_BOOL)
        return (double)(r & 1);
    if (gx__dtype_is_int(t))
        return gx__dtype_is_signed(t) ? (double)(int64_t)(r % 101) - 50 : (double)(r % 101);
    return gxt_rand01() * 2 - 1;
}

/* Host data for one input (complex: re, im pairs). */
static void *gxt_cross_data(const gxt_in *in, int64_t *n)
{
    *n = 1;
    for (int d = 0; d < in->ndim; d++)
        *n *= in->shape[d];
    size_t es = gx_dtype_size(in->dtype);
    char *buf = malloc((size_t)(*n > 0 ? *n : 1) * es);
    bool cx = in->dtype == GX_C64 || in->dtype == GX_C128;
    gx_dtype part = in->dtype == GX_C64 ? GX_F32 : GX_F64;
    for (int64_t i = 0; buf && i < *n; i++) {
        if (cx) {
            gx__dtype_from_f64(part, gxt_cross_value(part), buf + i * (int64_t)es);
            gx__dtype_from_f64(part, gxt_cross_value(part), buf + i * (int64_t)es + (int64_t)es / 2);
        } else {
            gx__dtype_from_f64(in->dtype, gxt_cross_value(in->dtype), buf + i * (int64_t)es);
        }
    }
    return buf;
}

/* A result as doubles (complex: 2 per element); NULL on failure. */
static double *gxt_cross_read(gx_array *a, int64_t *count)
{
    gx_array_desc d;
    if (gx_array_describe(a, &d) != GX_OK)
        return NULL;
    bool cx = d.dtype == GX_C64 || d.dtype == GX_C128;
    gx_array *c = NULL;
    if (gx_array_clone(a, cx ? GX_C128 : GX_F64, &c) != GX_OK)
        return NULL;
    *count = d.size * (cx ? 2 : 1);
    double *v = malloc((size_t)(*count > 0 ? *count : 1) * sizeof(double));
    if (v && gx_array_to_host(c, v, (size_t)*count * sizeof(double)) != GX_OK) {
        free(v);
        v = NULL;
    }
    gx_array_release(c);
    return v;
}

static bool gxt_cross_same_shape(gx_array *a, gx_array *b)
{
    gx_array_desc da, db;
    if (gx_array_describe(a, &da) != GX_OK || gx_array_describe(b, &db) != GX_OK)
        return false;
    bool same = da.dtype == db.dtype && da.ndim == db.ndim;
    for (int d = 0; same && d < da.ndim; d++)
        same = da.shape[d] == db.shape[d];
    return same;
}

/* Runs op on ctx with the host data; *out the result (NULL on failure). */
static gx_status gxt_cross_run(gx_ctx *ctx, gxt_op op, int nin, const gxt_in *in, void **data, gx_array **out)
{
    gx_array *arr[8] = {0};
    gx_status s = GX_OK;
    for (int i = 0; i < nin && s == GX_OK; i++)
        s = gx_array_from_host(ctx, in[i].dtype, in[i].ndim, in[i].shape, data[i], &arr[i]);
    *out = NULL;
    if (s == GX_OK)
        s = op(ctx, arr, out);
    for (int i = 0; i < nin; i++)
        gx_array_release(arr[i]);
    return s;
}

static void gxt_cross_compare(const char *what, gx_array *ref, gx_array *got, double tol, const char *file, int line)
{
    if (!gxt_cross_same_shape(ref, got)) {
        GXT_FAIL_AT(file, line, "%s: the backends give results of different dtype or shape", what);
        return;
    }
    int64_t n1 = 0, n2 = 0;
    double *a = gxt_cross_read(ref, &n1), *b = gxt_cross_read(got, &n2);
    if (!a || !b || n1 != n2)
        GXT_FAIL_AT(file, line, "%s: the results could not be read back", what);
    for (int64_t i = 0; a && b && n1 == n2 && i < n1; i++) {
        bool same = a[i] == b[i] || (isnan(a[i]) && isnan(b[i])) || fabs(a[i] - b[i]) <= tol * (1 + fabs(a[i]));
        if (!same) {
            GXT_FAIL_AT(file, line, "%s: value %lld: cpu %.17g, %s %.17g (tol %g)", what, (long long)i, a[i],
                        getenv("GX_BACKEND") ? getenv("GX_BACKEND") : "auto", b[i], tol);
            break;
        }
    }
    free(a);
    free(b);
}

void gxt_cross(const char *what, gxt_op op, int nin, const gxt_in *in, double tol, const char *file, int line)
{
    if (nin < 0 || nin > 8) {
        GXT_FAIL_AT(file, line, "%s: 0..8 inputs", what);
        return;
    }
    void *data[8] = {0};
    int64_t n;
    for (int i = 0; i < nin; i++)
        data[i] = gxt_cross_data(&in[i], &n);
    gx_ctx *cpu = NULL;
    gx_array *ref = NULL, *got = NULL;
    gx_status s1 = gx_ctx_create(&cpu, GX_BACKEND_CPU);
    if (s1 == GX_OK)
        s1 = gxt_cross_run(cpu, op, nin, in, data, &ref);
    gx_status s2 = s1 == GX_OK ? gxt_cross_run(gxt_ctx(), op, nin, in, data, &got) : s1;
    if (s1 == GX_ERR_UNSUPPORTED || s2 == GX_ERR_UNSUPPORTED) { /* the test did not do all its work */
        char why[600];
        snprintf(why, sizeof why, "case %s could not run: %s", what, gx_last_error());
        gxt_skip(why);
    }
    else if (s1 != GX_OK || s2 != GX_OK)
        GXT_FAIL_AT(file, line, "%s: %s on %s: %s", what, gx_status_string(s1 != GX_OK ? s1 : s2),
                    s1 != GX_OK ? "cpu" : "the backend under test", gx_last_error());
    else
        gxt_cross_compare(what, ref, got, tol, file, line);
    gx_array_release(ref);
    gx_array_release(got);
    gx_ctx_destroy(cpu);
    for (int i = 0; i < nin; i++)
        free(data[i]);
}

int gxt_child_cache_probe(void);
int gxt_child_fault_probe(int mode);
int gxt_child_repro(const char *path);
int gxt_child_warm_probe(void);

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--child-cache-probe") == 0)
        return gxt_child_cache_probe();
    if (argc > 2 && strcmp(argv[1], "--child-fault-probe") == 0)
        return gxt_child_fault_probe(atoi(argv[2]));
    if (argc > 1 && strcmp(argv[1], "--child-warm-probe") == 0)
        return gxt_child_warm_probe();
    if (argc > 2 && strcmp(argv[1], "--child-repro") == 0)
        return gxt_child_repro(argv[2]);
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
