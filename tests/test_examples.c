/* test_examples.c -- runs each program of examples/ (built into build/examples/NAME)
 * with --quick on the backend under test (GX_BACKEND is inherited) and checks that it
 * exits 0 and reports PASS.  Each example checks its own answers against a host
 * reference; this test checks that the example ran and agreed.  An example that
 * reports SKIP (the hand-written CUDA kernels on the CPU backend, which must skip
 * there; matmul without a vendor library) makes this test a ctest skip with the
 * example's reason -- never a pass. */
#define _GNU_SOURCE /* posix_spawn, mkdtemp, waitpid under -std=c11 */
#include "gx_test.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The whole file (NUL-terminated, malloc'ed), or NULL. */
static char *ex_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    return buf;
}

/* Spawns `argv` with stdout and stderr into `log`; returns the exit status, -1 if it
 * did not exit normally or could not start. */
static int ex_spawn(char *const *argv, const char *log)
{
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    pid_t pid;
    int err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd);
    if (err != 0)
        return -1;
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

/* The example's own reason for skipping: its "[SKIP] ..." line, into why. */
static void ex_skip_reason(const char *out, char *why, size_t n)
{
    const char *p = out ? strstr(out, "[SKIP] ") : NULL;
    if (!p) {
        snprintf(why, n, "the example printed SKIP without a reason");
        return;
    }
    p += strlen("[SKIP] ");
    size_t len = strcspn(p, "\n");
    snprintf(why, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

/* Runs build/examples/<name> --quick [--png <tmp>/julia.png]; gpu_only examples must
 * SKIP on the CPU backend (and this test is then skipped), every other run must PASS. */
static void ex_check(const char *name, bool gpu_only, bool png)
{
    gx_backend_kind be = GX_BACKEND_CPU;
    GXT_OK(gx_ctx_backend(gxt_ctx(), &be));
    char exe[1024], dir[512], log[600], img[600];
    snprintf(exe, sizeof exe, "%s/examples/%s", GX_BINARY_DIR, name);
    if (access(exe, X_OK) != 0) {
        GXT_FAIL_AT(__FILE__, __LINE__, "%s is not built: cmake --build build --target example_%s", exe, name);
        return;
    }
    snprintf(dir, sizeof dir, "%s/gxt-examples-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    GXT_CHECK(mkdtemp(dir) != NULL);
    snprintf(log, sizeof log, "%s/out.txt", dir);
    snprintf(img, sizeof img, "%s/julia.png", dir);
    char *argv[] = {exe, "--quick", png ? "--png" : NULL, img, NULL};
    int rc = ex_spawn(argv, log);
    char *out = ex_slurp(log);
    char pass[128], skip[128];
    snprintf(pass, sizeof pass, "%s: PASS\n", name);
    snprintf(skip, sizeof skip, "%s: SKIP\n", name);
    bool skipped = out && strstr(out, skip);
    GXT_EQ_I64(rc, 0);
    if (gpu_only && be == GX_BACKEND_CPU)
        GXT_CHECK(skipped); /* it cannot run here: it must say so, not pass */
    else if (!skipped)
        GXT_CHECK(out && strstr(out, pass));
    if (png && out && strstr(out, "wrote ")) { /* built with libpng: a real PNG file */
        char *bytes = ex_slurp(img);
        GXT_CHECK(bytes && memcmp(bytes, "\x89PNG", 4) == 0);
        free(bytes);
    }
    if (gxt_failures) {
        fprintf(stderr, "---- output of %s ----\n%s---- end ----\n", exe, out ? out : "(none)\n");
    } else if (skipped) {
        char why[512];
        ex_skip_reason(out, why, sizeof why);
        gxt_skip(why);
    }
    free(out);
    unlink(log);
    unlink(img);
    rmdir(dir);
}

GXT_TEST(examples_vadd) { ex_check("vadd", false, false); }
GXT_TEST(examples_julia) { ex_check("julia", false, true); }
GXT_TEST(examples_reduce_ladder) { ex_check("reduce_ladder", false, false); }
GXT_TEST(examples_matmul) { ex_check("matmul", false, false); }
GXT_TEST(examples_histogram) { ex_check("histogram", false, false); }
GXT_TEST(examples_transpose) { ex_check("transpose", false, false); }
GXT_TEST(examples_streams) { ex_check("streams", false, false); }
GXT_TEST(examples_coop_reduce) { ex_check("coop_reduce", true, false); }
GXT_TEST(examples_child_launch) { ex_check("child_launch", true, false); }
GXT_TEST(examples_allreduce) { ex_check("allreduce", false, false); } /* size 1; mpirun: ctest mpi.example.* */
