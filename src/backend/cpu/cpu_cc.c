/* cpu_cc.c -- the CPU backend's compiler driver: which C compiler, an identity string
 * for cache keys, compiling generated C into a shared object, and loading a shared
 * object from memory.
 *
 * Why no shell: the generated source embeds user lambdas and the label is user text.
 * Running the compiler through execve with a fixed argv means no user text is ever
 * parsed as a command or an option.
 *
 * Why limits: the compiler runs user text, and `#include "/dev/zero"` alone makes gcc
 * read until the machine runs out of memory.  So each run gets a wall-clock limit
 * (GX_CC_TIMEOUT) and an address-space limit (GX_CC_MEMORY, RLIMIT_AS, inherited by
 * cc1/as/ld).  That needs fork() rather than posix_spawn (which cannot set rlimits);
 * the child goes into its own process group so a timeout kills the whole tree.
 *
 * Why pids in folder names: a process killed with SIGKILL cannot remove its compile
 * folder; naming it gx-cc-<pid>-XXXXXX lets a later process remove it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, mkdtemp, utimensat */
#endif
#include "backend/cpu/cpu_cc.h"
#include "jit/cache.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Flags that change the generated code; they are part of cpu_cc_id() so that a
 * change here can never reuse objects built with the old flags. */
static const char *const cc_flags[] = {
    "-std=c11",
    "-O3",
    "-march=native",
    "-fPIC",
    "-shared",
    "-fwrapv",
    "-fno-strict-aliasing",
    /* Kernels never read errno; without this sqrt() keeps a slow libm call path. */
    "-fno-math-errno",
    /* Generated code carries helpers not every kernel uses. */
    "-Wno-unused-function",
#if defined(__x86_64__) && defined(__GLIBC__)
    /* Vector math from libmvec (see src/jit/prelude/vector_math.h); sin and
     * cos stay apart, because GCC's sincos merging would hide them from the
     * vectoriser. */
    "-DGX_VECTOR_MATH=1",
    "-fno-builtin-sin",
    "-fno-builtin-sinf",
    "-fno-builtin-cos",
    "-fno-builtin-cosf",
#endif
};
#define N_FLAGS (sizeof cc_flags / sizeof cc_flags[0])
#define MAX_CC_WORDS 16
#define DIAG_MAX 4096

const char *cpu_cc_path(void)
{
    const char *v = gx__env("GX_CC");
    if (!v)
        v = gx__env("CC");
    return v ? v : "cc";
}

/* Splits the compiler command into argv words.  A value that names an executable
 * file is one word (a path with blanks); otherwise blanks separate words, so
 * CC="ccache gcc" works.  No quoting rules: this is not a shell.  Returns the word
 * count (0 if nothing usable); `store` owns the word text. */
static int cc_words(const char *cc, char *store, size_t cap, const char **words)
{
    size_t n = strlen(cc);
    if (n + 1 > cap)
        return 0;
    memcpy(store, cc, n + 1);
    if (strchr(cc, '/') && access(cc, X_OK) == 0) {
        words[0] = store;
        return 1;
    }
    int nw = 0;
    char *save = NULL;
    for (char *w = strtok_r(store, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (nw == MAX_CC_WORDS)
            return 0;
        words[nw++] = w;
    }
    return nw;
}

/* The path execve should run for `prog`, searching PATH as execvp would (into buf);
 * NULL if there is none.  Resolved here, in the parent, because the child of fork()
 * may only make async-signal-safe calls, and because some platforms (and valgrind)
 * report a missing program only as a child exiting with 127, a poor message. */
static const char *find_program(const char *prog, char *buf, size_t cap)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? prog : NULL;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        /* An empty PATH element means the current directory, as for execvp. */
        int w = n ? snprintf(buf, cap, "%.*s/%s", (int)n, p, prog) : snprintf(buf, cap, "./%s", prog);
        if (w > 0 && (size_t)w < cap && access(buf, X_OK) == 0)
            return buf;
        p += n;
        if (*p == ':')
            p++;
    }
    return NULL;
}

/* ------------------------------------------------------------------ limits */

#define CC_TIMEOUT_DEFAULT 120
#define CC_MEMORY_DEFAULT ((size_t)4 << 30)
#define CC_MEMORY_MIN ((size_t)16 << 20) /* below this, the value is surely a slip (3 for 3GiB) */
#define CC_MEMORY_ACCEPTED "a size of at least 16MiB, such as 4GiB or 512MB"

/* Bounds on one compiler run.  The compiler runs user text (#include "/dev/zero"
 * makes gcc read forever), so it must never be able to hang the caller or eat the
 * machine. */
typedef struct cc_limits {
    int64_t timeout_s; /* GX_CC_TIMEOUT */
    size_t mem;        /* GX_CC_MEMORY: RLIMIT_AS of each compiler process */
} cc_limits;

/* Read at every run rather than once per process, so a program (or a test) may
 * change them between compiles. */
static cc_limits cc_limits_now(void)
{
    cc_limits l;
    l.timeout_s = gx__env_int("GX_CC_TIMEOUT", CC_TIMEOUT_DEFAULT, 1, 1000000000, "a whole number of seconds >= 1");
    l.mem = gx__env_size("GX_CC_MEMORY", CC_MEMORY_DEFAULT, 0, CC_MEMORY_ACCEPTED, "using 4GiB");
    if (l.mem < CC_MEMORY_MIN) {
        gx__env_warn("GX_CC_MEMORY", gx__env("GX_CC_MEMORY"), CC_MEMORY_ACCEPTED, "using 4GiB");
        l.mem = CC_MEMORY_DEFAULT;
    }
    return l;
}

/* "4 GiB" for messages (sep " "), "4GiB" for a value to set (sep ""). */
static void fmt_size(size_t v, const char *sep, char *out, size_t cap)
{
    static const char *const units[] = {"GiB", "MiB", "KiB"};
    for (int i = 0; i < 3; i++) {
        size_t u = (size_t)1 << (30 - 10 * i);
        if (v >= u && v % u == 0) {
            snprintf(out, cap, "%zu%s%s", v / u, sep, units[i]);
            return;
        }
    }
    snprintf(out, cap, "%zu%sbytes", v, sep);
}

/* ------------------------------------------------------------------ running */

/* What one run produced: the first `keep` bytes of stdout+stderr, and how it ended. */
typedef struct cc_run {
    char *out; /* malloc'd, NUL-terminated; NULL if no memory */
    size_t outlen;
    bool truncated;
    bool timed_out;   /* stopped by us at the GX_CC_TIMEOUT deadline */
    bool exec_failed; /* the child could not exec (run_capture returns its errno) */
    int wstatus;
} cc_run;

typedef struct cc_cmd {
    const char *path;        /* for execve */
    const char *const *argv; /* NULL-terminated */
    char *const *envp;
    struct rlimit as; /* RLIMIT_AS for the child */
    double deadline;  /* gx__now_ms() value */
} cc_cmd;

static cc_cmd cmd_make(const char *path, const char *const *argv, char *const *envp, const cc_limits *lim)
{
    cc_cmd c = {path, argv, envp, {RLIM_INFINITY, RLIM_INFINITY}, gx__now_ms() + 1000.0 * (double)lim->timeout_s};
    struct rlimit cur;
    if (getrlimit(RLIMIT_AS, &cur) == 0)
        c.as = cur;
    /* Only the soft limit is lowered: an unprivileged process cannot raise its hard
     * limit, and a hard limit below ours already wins. */
    if (c.as.rlim_max == RLIM_INFINITY || (rlim_t)lim->mem < c.as.rlim_max)
        c.as.rlim_cur = (rlim_t)lim->mem;
    else
        c.as.rlim_cur = c.as.rlim_max;
    return c;
}

/* A pipe whose ends are not 0, 1 or 2 (those may be closed in the caller), so the
 * child's dup2 onto them cannot clobber one end with the other.  O_CLOEXEC: children
 * that other threads start at the same time must not keep our write end open, or our
 * read would wait for them too. */
static int pipe_high(int p[2])
{
    if (pipe2(p, O_CLOEXEC) != 0)
        return errno;
    for (int i = 0; i < 2; i++) {
        if (p[i] > 2)
            continue;
        int h = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
        if (h < 0) {
            int e = errno;
            close(p[0]);
            close(p[1]);
            return e;
        }
        close(p[i]);
        p[i] = h;
    }
    return 0;
}

/* The child between fork and exec.  Only async-signal-safe calls: other threads'
 * locks (malloc's among them) were copied in whatever state they were.  Its own
 * process group lets a timeout kill the whole tree (the driver's cc1, as, ld).  An
 * exec failure is reported through err_fd, which exec closes on success. */
__attribute__((noreturn)) static void child_exec(const cc_cmd *c, int out_fd, int err_fd)
{
    (void)setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    int e = 0;
    int nul = open("/dev/null", O_RDONLY);
    if (setrlimit(RLIMIT_AS, &c->as) != 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
        e = errno;
    if (nul > 2)
        close(nul);
    if (!e) {
        execve(c->path, (char *const *)c->argv, c->envp);
        e = errno;
    }
    (void)!write(err_fd, &e, sizeof e);
    _exit(127);
}

static int ms_left(double deadline)
{
    double left = deadline - gx__now_ms();
    return left <= 0 ? 0 : left > 1e9 ? 1000000000 : (int)left + 1;
}

/* Reads the child's output until EOF (so it can never block on a full pipe),
 * keeping the first `keep` bytes.  False when the deadline passed first. */
static bool drain(int fd, double deadline, size_t keep, cc_run *r)
{
    char *buf = malloc(keep + 1); /* without it the output is read and dropped */
    size_t n = 0;
    char chunk[4096];
    bool in_time = true;
    for (;;) {
        struct pollfd pf = {fd, POLLIN, 0};
        int ms = ms_left(deadline);
        int pr = ms ? poll(&pf, 1, ms) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0) {
            in_time = false;
            break;
        }
        ssize_t got = pr < 0 ? 0 : read(fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t take = (size_t)got;
        if (n + take > keep) {
            take = keep - n;
            r->truncated = true;
        }
        if (buf && take)
            memcpy(buf + n, chunk, take);
        n += buf ? take : 0;
    }
    if (buf)
        buf[n] = 0;
    r->out = buf;
    r->outlen = n;
    return in_time;
}

/* Waits for the child until the deadline (it may have closed its output and gone
 * on running).  False on timeout.  A child we cannot wait for (ECHILD: SIGCHLD is
 * ignored, so the kernel reaped it) counts as status 0; its output decides. */
static bool reap_by(pid_t pid, double deadline, int *st)
{
    long ns = 100000;
    for (;;) {
        pid_t w = waitpid(pid, st, WNOHANG);
        if (w == pid)
            return true;
        if (w < 0 && errno != EINTR) {
            *st = 0;
            return true;
        }
        if (gx__now_ms() >= deadline)
            return false;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        ns = ns < 10000000 ? ns * 2 : ns;
    }
}

/* The deadline passed: kill the child's whole group (it may have started cc1, as,
 * ld), and the child itself in case it never got its own group. */
static void kill_tree(pid_t pid, int *st)
{
    (void)kill(-pid, SIGKILL);
    (void)kill(pid, SIGKILL);
    while (waitpid(pid, st, 0) < 0 && errno == EINTR) {
    }
}

/* Runs c with stdin from /dev/null, stdout+stderr into r->out, under c's limits.
 * Returns 0 (and fills r) once it ran, or an errno value if it could not start
 * (exec's own errno included: ENOMEM there means the address-space limit). */
static int run_capture(const cc_cmd *c, size_t keep, cc_run *r)
{
    memset(r, 0, sizeof *r);
    int out[2], err[2], rc;
    if ((rc = pipe_high(out)) != 0)
        return rc;
    if ((rc = pipe_high(err)) != 0) {
        close(out[0]);
        close(out[1]);
        return rc;
    }
    pid_t pid = fork();
    if (pid == 0)
        child_exec(c, out[1], err[1]);
    rc = pid < 0 ? errno : 0;
    if (pid > 0)
        (void)setpgid(pid, pid); /* also here: the group must exist before any kill */
    close(out[1]);
    close(err[1]);
    int e = 0;
    ssize_t n = 0;
    while (pid > 0 && (n = read(err[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
    close(err[0]);
    if (pid > 0 && n == (ssize_t)sizeof e) { /* exec failed; the child has exited */
        rc = e ? e : ENOEXEC;
        r->exec_failed = true;
        while (waitpid(pid, &r->wstatus, 0) < 0 && errno == EINTR) {
        }
    }
    if (rc == 0) {
        bool ok = drain(out[0], c->deadline, keep, r) && reap_by(pid, c->deadline, &r->wstatus);
        if (!ok) {
            kill_tree(pid, &r->wstatus);
            r->timed_out = true;
        }
    }
    close(out[0]);
    return rc;
}

/* ------------------------------------------------------------------ cc id */

/* Identity of the CPU: -march=native output differs between machines, so objects
 * built on one host must not be reused by another sharing the cache (e.g. over NFS).
 * Model name + feature flags (x86 "model name"/"flags", Arm "CPU implementer"/
 * "CPU part"/"Features"), hashed to keep the id short. */
static void cpu_digest(char out[17], char *model, size_t mcap)
{
    static const char *const keys[] = {"model name", "flags",     "Features", "CPU implementer",
                                       "CPU part",   "cpu model", "isa",      "cpu"};
    cache_key k;
    cache_key_init(&k);
    snprintf(model, mcap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (f) {
        bool seen[sizeof keys / sizeof keys[0]] = {0};
        char line[8192];
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (!colon)
                continue;
            size_t kl = (size_t)(colon - line);
            while (kl && (line[kl - 1] == ' ' || line[kl - 1] == '\t'))
                kl--;
            for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
                if (seen[i] || strlen(keys[i]) != kl || strncmp(line, keys[i], kl) != 0)
                    continue;
                seen[i] = true; /* first CPU only: the others repeat it */
                line[strcspn(line, "\n")] = 0;
                cache_key_add(&k, line);
                if (i == 0) {
                    const char *v = colon + 1;
                    while (*v == ' ' || *v == '\t')
                        v++;
                    snprintf(model, mcap, "%s", v);
                }
            }
        }
        fclose(f);
    }
    char hex[65];
    cache_key_final(&k, hex);
    memcpy(out, hex, 16);
    out[16] = 0;
}

/* One id per distinct compiler command, computed once (running `cc --version`
 * costs milliseconds) and kept for the life of the process, so the returned
 * pointers stay valid. */
typedef struct cc_id_node {
    struct cc_id_node *next;
    char *cc;
    char *id;
} cc_id_node;
static cc_id_node *g_ids;
static pthread_mutex_t g_ids_mu = PTHREAD_MUTEX_INITIALIZER;

/* The file in the disk cache that remembers `cc --version`'s first line for one
 * compiler binary, named by the command and the binary's identity (device, inode,
 * size, mtime): replacing or upgrading the compiler names another file.  Why: the
 * run of `cc --version` was all of the CPU backend's first-call cost in a process
 * whose kernels were already in the disk cache (~20 ms of a 22 ms first map, strace
 * on the 16-core host); a file read costs tens of microseconds.  0 if there is no
 * disk cache or the binary cannot be examined. */
static int version_file(const char *cc, const char *path, char *out, size_t cap)
{
    cache_disk *d = cache_disk_get();
    char buf[256], hex[65];
    if (!cache_disk_enabled(d) || !cache_file_identity(path, buf, sizeof buf))
        return 0;
    cache_key k;
    cache_key_init(&k);
    cache_key_add(&k, "cc-version 1");
    cache_key_add(&k, cc);
    cache_key_add(&k, path);
    cache_key_add(&k, buf);
    cache_key_final(&k, hex);
    int n = snprintf(out, cap, "%s/cc-version-%.32s", cache_disk_dir(d), hex);
    return n > 0 && (size_t)n < cap;
}

/* The remembered line, if a valid one is there. */
static bool version_recall(const char *file, char *first, size_t cap)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return false;
    bool ok = fgets(first, (int)cap, f) != NULL;
    fclose(f);
    size_t l = ok ? strcspn(first, "\r\n") : 0;
    if (!ok || l == 0 || first[l] != '\n') { /* torn or truncated: run the compiler */
        first[0] = 0;
        return false;
    }
    first[l] = 0;
    return true;
}

/* Through cache_side_write: a reader never sees half a line. */
static void version_remember(const char *file, const char *first)
{
    char line[600];
    int n = snprintf(line, sizeof line, "%s\n", first);
    if (n > 0 && (size_t)n < sizeof line)
        cache_side_write(file, line);
}

/* The first line `<cc> --version` prints, or "" (run under the same limits as a
 * compile), remembered in the disk cache per compiler binary. */
static void version_line(const char *cc, char *first, size_t cap)
{
    char store[1024], found[4096], file[4096];
    const char *argv[MAX_CC_WORDS + 2];
    first[0] = 0;
    int nw = cc_words(cc, store, sizeof store, argv);
    const char *path = nw > 0 ? find_program(argv[0], found, sizeof found) : NULL;
    if (!path)
        return;
    bool have_file = version_file(cc, path, file, sizeof file);
    if (have_file && version_recall(file, first, cap))
        return;
    argv[nw] = "--version";
    argv[nw + 1] = NULL;
    cc_limits lim = cc_limits_now();
    cc_cmd c = cmd_make(path, argv, environ, &lim);
    cc_run r;
    if (run_capture(&c, 4096, &r) != 0)
        return;
    if (r.out && !r.timed_out && WIFEXITED(r.wstatus) && WEXITSTATUS(r.wstatus) == 0) {
        int l = (int)strcspn(r.out, "\r\n");
        snprintf(first, cap, "%.*s", l, r.out);
        if (have_file && first[0])
            version_remember(file, first);
    }
    free(r.out);
}

static char *make_id(const char *cc)
{
    char first[512];
    version_line(cc, first, sizeof first);
    if (!first[0])
        snprintf(first, sizeof first, "unknown compiler (`%s --version` failed)", cc);
    char model[256], digest[17];
    cpu_digest(digest, model, sizeof model);
    /* The flags are hashed into the id rather than spelled out, to keep it readable. */
    cache_key k;
    cache_key_init(&k);
    for (size_t i = 0; i < N_FLAGS; i++)
        cache_key_add(&k, cc_flags[i]);
    char fl[65];
    cache_key_final(&k, fl);
    char *id = NULL;
    int n = snprintf(NULL, 0, "%s; cc=%s; cpu=%s; cpu-flags=%s; opts=%.8s", first, cc, model, digest, fl);
    if (n > 0 && (id = malloc((size_t)n + 1)))
        snprintf(id, (size_t)n + 1, "%s; cc=%s; cpu=%s; cpu-flags=%s; opts=%.8s", first, cc, model, digest, fl);
    return id;
}

const char *cpu_cc_id(void)
{
    const char *cc = cpu_cc_path();
    pthread_mutex_lock(&g_ids_mu);
    for (cc_id_node *n = g_ids; n; n = n->next)
        if (strcmp(n->cc, cc) == 0) {
            pthread_mutex_unlock(&g_ids_mu);
            return n->id;
        }
    cc_id_node *n = calloc(1, sizeof *n);
    char *ccdup = strdup(cc);
    char *id = make_id(cc);
    if (!n || !ccdup || !id) {
        free(n);
        free(ccdup);
        free(id);
        pthread_mutex_unlock(&g_ids_mu);
        /* Out of memory: a fixed id still identifies the compiler by path. */
        return "unknown compiler (out of memory)";
    }
    n->cc = ccdup;
    n->id = id;
    n->next = g_ids;
    g_ids = n;
    pthread_mutex_unlock(&g_ids_mu);
    return id;
}

/* ------------------------------------------------------------------ build */

static const char *tmp_base(void)
{
    const char *t = getenv("TMPDIR");
    /* Relative or absurdly long TMPDIRs would make paths we cannot control. */
    if (t && t[0] == '/' && strlen(t) < 3000)
        return t;
    return "/tmp";
}

static int write_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    const char *p = data;
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = errno;
            close(fd);
            errno = e ? e : EIO;
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return close(fd);
}

static int read_file(const char *path, void **data, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n ? n : 1);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(buf);
            close(fd);
            errno = r == 0 ? EIO : errno;
            return -1;
        }
        got += (size_t)r;
    }
    close(fd);
    *data = buf;
    *len = n;
    return 0;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb;
    (void)flag;
    (void)f;
    (void)remove(p);
    return 0;
}

/* Removes a compile folder and whatever the compiler left in it (its own
 * temporaries too: it runs with TMPDIR pointing there).  Links are removed, never
 * followed, and the walk stays on one file system. */
static void remove_tree(const char *dir) { (void)nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS | FTW_MOUNT); }

/* The owner pid in a compile folder's name gx-cc-<pid>-XXXXXX, or 0. */
static pid_t folder_owner(const char *name)
{
    if (strncmp(name, "gx-cc-", 6) != 0 || name[6] < '1' || name[6] > '9')
        return 0;
    char *end;
    errno = 0;
    long v = strtol(name + 6, &end, 10);
    if (errno || v > INT_MAX || *end != '-' || strlen(end + 1) != 6)
        return 0;
    return (pid_t)v;
}

/* A process killed with SIGKILL (or by the OOM killer) mid-compile cannot remove its
 * folder; the pid in the name lets a later process see that the owner is gone.  Only
 * our own user's folders, and only when the pid is certainly dead (ESRCH: EPERM
 * means alive, someone else's). */
void cpu_cc_sweep_stale(void)
{
    const char *base = tmp_base();
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t pid = folder_owner(e->d_name);
        struct stat st;
        if (pid == 0 || pid == getpid() || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
            continue;
        char path[4200];
        if (kill(pid, 0) == -1 && errno == ESRCH && snprintf(path, sizeof path, "%s/%s", base, e->d_name) > 0)
            remove_tree(path);
    }
    closedir(d);
}

static pthread_once_t g_sweep_once = PTHREAD_ONCE_INIT;

static void sanitise(const char *label, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *s = label ? label : ""; *s && n + 1 < cap; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        out[n++] = ok ? c : '_';
    }
    out[n] = 0;
    if (n == 0)
        snprintf(out, cap, "kernel");
}

/* The environment with TMPDIR=<slot's dir>: the compiler's own temporaries (cc1's
 * .s, as's .o) then land in our folder and go with it, even after a kill. */
static char **env_with_tmpdir(char *slot)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **e = malloc((n + 2) * sizeof *e);
    if (!e)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "TMPDIR=", 7) != 0)
            e[k++] = environ[i];
    e[k++] = slot;
    e[k] = NULL;
    return e;
}

/* Users' CUDA C kernels (cpu_kernel.c) are C++: the same limits and folders, the
 * C++ compiler and these flags.  Hidden visibility lets the compiler address the
 * kernel's thread-local state without a call per access. */
static const char *const cxx_flags[] = {
    "-std=c++17", "-O3", "-march=native", "-fPIC", "-shared", "-fwrapv", "-fno-strict-aliasing",
    "-fno-math-errno", "-fvisibility=hidden", "-Wno-unused-function", "-Wno-unused-variable",
#if defined(__x86_64__)
    /* TLS descriptors: the compiler hoists a __shared__ array's (thread_local)
     * address out of loops, where the default dialect calls __tls_get_addr at each
     * access. */
    "-mtls-dialect=gnu2",
#endif
};
#define N_CXX_FLAGS (sizeof cxx_flags / sizeof cxx_flags[0])

/* The language of one build: C (generated kernels) or C++ (users' kernels). */
typedef struct cc_lang {
    const char *const *flags;
    size_t nflags;
    const char *ext;
    bool mvec;
    const char *what, *install, *env; /* for messages: "C compiler", "gcc or clang", "GX_CC" */
} cc_lang;
static const cc_lang lang_c = {cc_flags, N_FLAGS, "c", true, "C compiler", "gcc or clang", "GX_CC"};
static const cc_lang lang_cxx = {cxx_flags, N_CXX_FLAGS, "cpp", false,
                                 "C++ compiler (your CUDA C kernels compile as C++ on the CPU backend)",
                                 "g++ or clang++", "GX_CXX"};

const char *cpu_cxx_path(void)
{
    const char *v = gx__env("GX_CXX");
    if (!v)
        v = gx__env("CXX");
    return v ? v : "c++";
}

/* Fills argv after the compiler's own nw words; returns the NULL-terminated argv. */
static const char **add_args(const char **argv, int nw, const char *out, const char *src, const cc_lang *lg)
{
    int a = nw;
    for (size_t i = 0; i < lg->nflags; i++)
        argv[a++] = lg->flags[i];
    argv[a++] = "-o";
    argv[a++] = out;
    argv[a++] = src;
#if defined(__x86_64__) && defined(__GLIBC__)
    if (lg->mvec)
        argv[a++] = "-lmvec";
#endif
    argv[a++] = "-lm";
    argv[a] = NULL;
    return argv;
}

/* Evidence in the diagnostics that RLIMIT_AS stopped the compiler (gcc's "out of
 * memory allocating", "virtual memory exhausted", clang's "LLVM ERROR: out of memory",
 * C++'s bad_alloc). */
static bool says_out_of_memory(const char *diag)
{
    static const char *const signs[] = {"out of memory", "memory exhausted", "Cannot allocate memory", "bad_alloc"};
    for (size_t i = 0; i < sizeof signs / sizeof signs[0]; i++)
        if (strstr(diag, signs[i]))
            return true;
    return false;
}

static void describe_end(int st, char *how, size_t cap)
{
    if (WIFEXITED(st))
        snprintf(how, cap, "exit status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(how, cap, "killed by signal %d", WTERMSIG(st));
    else
        snprintf(how, cap, "wait status %d", st);
}

/* The message for a run that did not produce an object: stopped at the deadline,
 * out of address space, or the compiler's own diagnostics. */
static gx_status report_failure(const char *shown, const char *cc, const cc_limits *lim, cc_run *r)
{
    /* Blank lines around the diagnostics only make the message ragged. */
    while (r->outlen && (r->out[r->outlen - 1] == '\n' || r->out[r->outlen - 1] == '\r'))
        r->out[--r->outlen] = 0;
    const char *diag = r->outlen ? r->out + strspn(r->out, "\r\n") : "";
    if (!*diag)
        diag = "(the compiler printed nothing)";
    const char *more = r->truncated ? "\n[... diagnostics truncated]" : "";
    char mem[32], twice[32], how[64], hint[160] = "";
    fmt_size(lim->mem, " ", mem, sizeof mem);
    fmt_size(lim->mem * 2, "", twice, sizeof twice);
    if (r->timed_out)
        return gx__err(GX_ERR_COMPILE,
                       "compiling '%.200s': the C compiler %s was stopped after %lld s (GX_CC_TIMEOUT); raise "
                       "GX_CC_TIMEOUT (seconds) if this source really needs longer.  Its output so far:\n%s%s",
                       shown, cc, (long long)lim->timeout_s, diag, more);
    if (says_out_of_memory(diag))
        return gx__err(GX_ERR_COMPILE,
                       "compiling '%.200s': the C compiler %s ran out of its %s address-space limit "
                       "(GX_CC_MEMORY); raise GX_CC_MEMORY (e.g. GX_CC_MEMORY=%s) if this source really "
                       "needs more:\n%s%s",
                       shown, cc, mem, twice, diag, more);
    /* A compiler that crashed may have hit the limit without saying so (a failed
     * stack or mmap growth is a SIGSEGV; gcc reports "signal terminated program"). */
    if (WIFSIGNALED(r->wstatus) || strstr(diag, "signal terminated program"))
        snprintf(hint, sizeof hint, "\n(if it ran out of its %s address-space limit, raise GX_CC_MEMORY)", mem);
    describe_end(r->wstatus, how, sizeof how);
    return gx__err(GX_ERR_COMPILE, "compiling '%.200s' with %s failed (%s):\n%s%s%s", shown, cc, how, diag, more, hint);
}

/* Runs the compiler on src (in dir) and reads the object from out. */
static gx_status compile_in(const char *dir, const char **argv, int nw, const char *shown, const char *cc,
                            const char *src, const char *out, void **so, size_t *len, const cc_lang *lg)
{
    char found[4096], slot[4200];
    const char *path = find_program(argv[0], found, sizeof found);
    if (!path)
        return gx__err(GX_ERR_COMPILE, "compiling '%.200s': cannot run the %s \"%s\" (%s); install %s, or set %s to one",
                       shown, lg->what, cc, strerror(ENOENT), lg->install, lg->env);
    snprintf(slot, sizeof slot, "TMPDIR=%s", dir);
    char **envp = env_with_tmpdir(slot);
    if (!envp)
        return gx__err(GX_ERR_OUT_OF_MEMORY, "compiling '%.200s': out of host memory", shown);
    cc_limits lim = cc_limits_now();
    cc_cmd c = cmd_make(path, add_args(argv, nw, out, src, lg), envp, &lim);
    cc_run r;
    int rc = run_capture(&c, DIAG_MAX, &r);
    free(envp);
    char mem[32];
    fmt_size(lim.mem, " ", mem, sizeof mem);
    gx_status s = GX_OK;
    if (rc == ENOMEM && r.exec_failed)
        s = gx__err(GX_ERR_COMPILE,
                    "compiling '%.200s': the C compiler %s cannot even start within its %s address-space limit "
                    "(GX_CC_MEMORY); raise GX_CC_MEMORY",
                    shown, cc, mem);
    else if (rc != 0)
        s = gx__err(GX_ERR_COMPILE, "compiling '%.200s': cannot run the %s \"%s\" (%s); install %s, or set %s to one",
                    shown, lg->what, cc, strerror(rc), lg->install, lg->env);
    else if (r.timed_out || !WIFEXITED(r.wstatus) || WEXITSTATUS(r.wstatus) != 0)
        s = report_failure(shown, cc, &lim, &r);
    else if (read_file(out, so, len) != 0)
        s = gx__err(GX_ERR_COMPILE, "compiling '%.200s': %s reported success but its output %s cannot be read (%s)",
                    shown, cc, out, strerror(errno));
    free(r.out);
    return s;
}

static gx_status cc_build(const char *cc, const cc_lang *lg, const char *source, const char *label, void **so,
                          size_t *len)
{
    GX__ARG(source && so && len, "cpu_cc_build: source, so and len must not be NULL");
    *so = NULL;
    *len = 0;
    const char *shown = label && *label ? label : "kernel";

    char store[1024];
    const char *argv[MAX_CC_WORDS + N_FLAGS + N_CXX_FLAGS + 8];
    int nw = cc_words(cc, store, sizeof store, argv);
    if (nw == 0)
        return gx__err(GX_ERR_COMPILE,
                       "compiling '%.200s': the C compiler command \"%.300s\" (from GX_CC / CC) is empty or "
                       "too long; set GX_CC to a C compiler such as gcc or clang",
                       shown, cc);

    pthread_once(&g_sweep_once, cpu_cc_sweep_stale);
    char base[64];
    sanitise(label, base, sizeof base);
    char dir[4096];
    /* The pid in the name lets cpu_cc_sweep_stale() recognise an orphan. */
    snprintf(dir, sizeof dir, "%s/gx-cc-%ld-XXXXXX", tmp_base(), (long)getpid());
    if (!mkdtemp(dir))
        return gx__err(GX_ERR_IO,
                       "compiling '%.200s': cannot create a temporary directory in %s (%s); set TMPDIR to a "
                       "writable directory",
                       shown, tmp_base(), strerror(errno));
    char src[4200], out[4200];
    snprintf(src, sizeof src, "%s/%s.%s", dir, base, lg->ext);
    snprintf(out, sizeof out, "%s/%s.so", dir, base);
    gx_status s;
    if (write_file(src, source, strlen(source)) != 0)
        s = gx__err(GX_ERR_IO, "compiling '%.200s': cannot write %s (%s); check free space in %s", shown, src,
                    strerror(errno), tmp_base());
    else
        s = compile_in(dir, argv, nw, shown, cc, src, out, so, len, lg);
    remove_tree(dir);
    return s;
}

gx_status cpu_cc_build(const char *source, const char *label, void **so, size_t *len)
{
    return cc_build(cpu_cc_path(), &lang_c, source, label, so, len);
}

gx_status cpu_cxx_build(const char *source, const char *label, void **so, size_t *len)
{
    return cc_build(cpu_cxx_path(), &lang_cxx, source, label, so, len);
}

/* ------------------------------------------------------------------ load */

/* dlopen of a name already loaded returns the loaded library, and glibc compares
 * names: after "/proc/self/fd/7" was loaded and fd 7 closed, the next memfd may be
 * fd 7 again and would silently yield the *old* code.  So: while our fd is open,
 * ask whether its name is taken (RTLD_NOLOAD); if so, move to another fd number.
 * No other thread can load our name meanwhile, since it would need our open fd. */
#define MAX_DUPS 64

static bool name_loaded(const char *path)
{
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (h) {
        dlclose(h);
        return true;
    }
    (void)dlerror(); /* clear the NOLOAD miss */
    return false;
}

static gx_status load_memfd(const void *so, size_t len, void **handle, bool *unsupported)
{
    *unsupported = false;
    int fd = memfd_create("gx-kernel", MFD_CLOEXEC);
    if (fd < 0) {
        *unsupported = true;
        return GX_OK;
    }
    if (cache_write_full(fd, so, len) != 0) {
        int e = errno;
        close(fd);
        return gx__err(GX_ERR_OUT_OF_MEMORY, "loading a compiled kernel: cannot fill an in-memory file (%s)",
                       strerror(e));
    }
    int held[MAX_DUPS], nheld = 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    while (name_loaded(path) && nheld < MAX_DUPS) {
        /* Keep the taken number open so dup() hands out a fresh one. */
        int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (nfd < 0)
            break;
        held[nheld++] = fd;
        fd = nfd;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    gx_status s = GX_OK;
    void *h = NULL;
    if (name_loaded(path)) {
        /* Every nearby descriptor number names a loaded kernel already (a process
         * with many kernels): the caller falls back to a uniquely named file. */
        *unsupported = true;
    } else {
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            s = gx__err(GX_ERR_BACKEND, "loading a compiled kernel with dlopen failed: %s", e ? e : "unknown error");
        }
    }
    for (int i = 0; i < nheld; i++)
        close(held[i]);
    close(fd);
    *handle = h;
    return s;
}

static gx_status load_tmpfile(const void *so, size_t len, void **handle)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/gx-so-XXXXXX", tmp_base());
        int fd = mkstemp(path);
        if (fd < 0)
            return gx__err(GX_ERR_IO,
                           "loading a compiled kernel: cannot create a temporary file in %s (%s); set TMPDIR "
                           "to a writable directory",
                           tmp_base(), strerror(errno));
        if (cache_write_full(fd, so, len) != 0) {
            int e = errno;
            close(fd);
            unlink(path);
            return gx__err(GX_ERR_IO, "loading a compiled kernel: cannot write %s (%s)", path, strerror(e));
        }
        close(fd);
        if (name_loaded(path)) { /* an earlier, unlinked file had this name */
            unlink(path);
            continue;
        }
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        const char *e = h ? NULL : dlerror();
        gx_status s =
            h ? GX_OK
              : gx__err(GX_ERR_BACKEND, "loading a compiled kernel with dlopen failed: %s", e ? e : "unknown error");
        unlink(path); /* the mapping stays valid; nothing is left behind */
        *handle = h;
        return s;
    }
    return gx__err(GX_ERR_BACKEND, "loading a compiled kernel: no unused temporary file name for dlopen");
}

gx_status cpu_cc_so_load(const void *so, size_t len, void **handle)
{
    GX__ARG(so && len && handle, "cpu_cc_so_load: so, len and handle must be set (got an empty object)");
    *handle = NULL;
    bool unsupported;
    gx_status s = load_memfd(so, len, handle, &unsupported);
    if (!unsupported)
        return s;
    return load_tmpfile(so, len, handle);
}
