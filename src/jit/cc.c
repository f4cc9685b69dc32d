/* cc.c -- the CPU backend's compiler driver: which C compiler, an identity string
 * for cache keys, compiling generated C into a shared object, and loading a shared
 * object from memory.
 *
 * Why no shell: the generated source embeds user lambdas and the label is user text.
 * Running the compiler through posix_spawnp with a fixed argv means no user text is
 * ever parsed as a command or an option.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, mkdtemp, utimensat */
#endif
#include "jit/cache.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Flags that change the generated code; they are part of cache_cc_id() so that a
 * change here can never reuse objects built with the old flags. */
static const char *const cc_flags[] = {
    "-std=c11", "-O3", "-march=native", "-fPIC", "-shared", "-fwrapv", "-fno-strict-aliasing",
    /* Kernels never read errno; without this sqrt() keeps a slow libm call path. */
    "-fno-math-errno",
    /* Generated code carries helpers not every kernel uses. */
    "-Wno-unused-function",
#if defined(__x86_64__) && defined(__GLIBC__)
    /* Vector math from libmvec (see LAM__VECTOR_MATH in lambda_prelude.c); sin and
     * cos stay apart, because GCC's sincos merging would hide them from the
     * vectoriser. */
    "-DGX_VECTOR_MATH=1", "-fno-builtin-sin", "-fno-builtin-sinf", "-fno-builtin-cos", "-fno-builtin-cosf",
#endif
};
#define N_FLAGS (sizeof cc_flags / sizeof cc_flags[0])
#define MAX_CC_WORDS 16
#define DIAG_MAX 4096

const char *cache_cc_path(void)
{
    const char *v = getenv("GX_CC");
    if (v && *v)
        return v;
    v = getenv("CC");
    if (v && *v)
        return v;
    return "cc";
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

/* True if `prog` would be found by execvp.  Checked before spawning because some
 * posix_spawnp implementations (and valgrind) report a missing program only as a
 * child exiting with 127, which would make a poor message. */
static bool program_exists(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char buf[4096];
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        /* An empty PATH element means the current directory, as for execvp. */
        int w = n ? snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog) : snprintf(buf, sizeof buf, "./%s", prog);
        if (w > 0 && (size_t)w < sizeof buf && access(buf, X_OK) == 0)
            return true;
        p += n;
        if (*p == ':')
            p++;
    }
    return false;
}

/* Runs argv (NULL-terminated) with stdin from /dev/null and stdout+stderr into a
 * pipe.  Reads the output until EOF (the child can never block on a full pipe),
 * keeping the first `keep` bytes in *out (malloc'd, NUL-terminated), then waits.
 * Returns 0 and the wait status in *wstatus, or an errno value if it could not start. */
static int run_capture(const char *const *argv, size_t keep, char **out, size_t *outlen, bool *truncated,
                       int *wstatus)
{
    *out = NULL;
    *outlen = 0;
    *truncated = false;
    int p[2];
    /* O_CLOEXEC: other threads spawning at the same time must not inherit our write
     * end, or our read would wait for their children too. */
    if (pipe2(p, O_CLOEXEC) != 0)
        return errno;
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (!rc)
            rc = posix_spawn_file_actions_adddup2(&fa, p[1], 1);
        if (!rc)
            rc = posix_spawn_file_actions_adddup2(&fa, p[1], 2);
        pid_t pid = 0;
        if (!rc)
            rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(p[1]);
        if (rc == 0) {
            char *buf = malloc(keep + 1);
            size_t n = 0;
            char chunk[4096];
            for (;;) {
                ssize_t r = read(p[0], chunk, sizeof chunk);
                if (r < 0 && errno == EINTR)
                    continue;
                if (r <= 0)
                    break;
                size_t take = (size_t)r;
                if (n + take > keep) {
                    take = keep - n;
                    *truncated = true;
                }
                if (buf && take) {
                    memcpy(buf + n, chunk, take);
                    n += take;
                }
            }
            close(p[0]);
            int st = 0;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
            if (buf)
                buf[n] = 0;
            *out = buf;
            *outlen = buf ? n : 0;
            *wstatus = st;
            return 0;
        }
        close(p[0]);
        return rc;
    }
    close(p[0]);
    close(p[1]);
    return rc;
}

/* ------------------------------------------------------------------ cc id */

/* Identity of the CPU: -march=native output differs between machines, so objects
 * built on one host must not be reused by another sharing the cache (e.g. over NFS).
 * Model name + feature flags (x86 "model name"/"flags", Arm "CPU implementer"/
 * "CPU part"/"Features"), hashed to keep the id short. */
static void cpu_digest(char out[17], char *model, size_t mcap)
{
    static const char *const keys[] = {"model name", "flags", "Features", "CPU implementer", "CPU part",
                                       "cpu model", "isa", "cpu"};
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
typedef struct cc_id_node { struct cc_id_node *next; char *cc; char *id; } cc_id_node;
static cc_id_node *g_ids;
static pthread_mutex_t g_ids_mu = PTHREAD_MUTEX_INITIALIZER;

static char *make_id(const char *cc)
{
    char first[512] = "";
    char store[1024];
    const char *argv[MAX_CC_WORDS + 2];
    int nw = cc_words(cc, store, sizeof store, argv);
    if (nw > 0) {
        argv[nw] = "--version";
        argv[nw + 1] = NULL;
        char *out;
        size_t outlen;
        bool trunc;
        int st;
        if (program_exists(argv[0]) && run_capture(argv, 4096, &out, &outlen, &trunc, &st) == 0) {
            if (out && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
                size_t l = strcspn(out, "\r\n");
                snprintf(first, sizeof first, "%.*s", (int)(l < sizeof first - 1 ? l : sizeof first - 1), out);
            }
            free(out);
        }
    }
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

const char *cache_cc_id(void)
{
    const char *cc = cache_cc_path();
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

/* Empties and removes our private directory, whatever the compiler left in it. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                (void)unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    (void)rmdir(dir);
}

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

gx_status cache_cc_build(const char *source, const char *label, void **so, size_t *len)
{
    GX__ARG(source && so && len, "cache_cc_build: source, so and len must not be NULL");
    *so = NULL;
    *len = 0;
    const char *shown = label && *label ? label : "kernel";

    const char *cc = cache_cc_path();
    char store[1024];
    const char *argv[MAX_CC_WORDS + N_FLAGS + 8];
    int nw = cc_words(cc, store, sizeof store, argv);
    if (nw == 0)
        return gx__err(GX_ERR_COMPILE,
                       "compiling '%.200s': the C compiler command \"%.300s\" (from GX_CC / CC) is empty or "
                       "too long; set GX_CC to a C compiler such as gcc or clang",
                       shown, cc);

    char base[64];
    sanitise(label, base, sizeof base);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/gx-cc-XXXXXX", tmp_base());
    if (!mkdtemp(dir))
        return gx__err(GX_ERR_IO,
                       "compiling '%.200s': cannot create a temporary directory in %s (%s); set TMPDIR to a "
                       "writable directory",
                       shown, tmp_base(), strerror(errno));
    char src[4200], out[4200];
    snprintf(src, sizeof src, "%s/%s.c", dir, base);
    snprintf(out, sizeof out, "%s/%s.so", dir, base);

    gx_status s = GX_OK;
    if (write_file(src, source, strlen(source)) != 0) {
        s = gx__err(GX_ERR_IO, "compiling '%.200s': cannot write %s (%s); check free space in %s", shown, src,
                    strerror(errno), tmp_base());
        goto done;
    }

    int a = nw;
    for (size_t i = 0; i < N_FLAGS; i++)
        argv[a++] = cc_flags[i];
    argv[a++] = "-o";
    argv[a++] = out;
    argv[a++] = src;
#if defined(__x86_64__) && defined(__GLIBC__)
    argv[a++] = "-lmvec";
#endif
    argv[a++] = "-lm";
    argv[a] = NULL;

    char *diag = NULL;
    size_t dlen = 0;
    bool trunc = false;
    int st = 0;
    int rc = program_exists(argv[0]) ? run_capture(argv, DIAG_MAX, &diag, &dlen, &trunc, &st) : ENOENT;
    if (rc != 0) {
        s = gx__err(GX_ERR_COMPILE,
                    "compiling '%.200s': cannot run the C compiler \"%s\" (%s); install gcc or clang, or set "
                    "GX_CC to a C compiler",
                    shown, cc, strerror(rc));
        goto done;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        /* Drop trailing newlines so the message ends cleanly. */
        while (dlen && (diag[dlen - 1] == '\n' || diag[dlen - 1] == '\r'))
            diag[--dlen] = 0;
        char how[64];
        if (WIFEXITED(st))
            snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(st));
        else if (WIFSIGNALED(st))
            snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(st));
        else
            snprintf(how, sizeof how, "wait status %d", st);
        s = gx__err(GX_ERR_COMPILE, "compiling '%.200s' with %s failed (%s):\n%s%s", shown, cc, how,
                    diag && dlen ? diag : "(the compiler printed nothing)", trunc ? "\n[... diagnostics truncated]" : "");
        free(diag);
        goto done;
    }
    free(diag);
    if (read_file(out, so, len) != 0) {
        s = gx__err(GX_ERR_COMPILE,
                    "compiling '%.200s': %s reported success but its output %s cannot be read (%s)", shown, cc,
                    out, strerror(errno));
        goto done;
    }
done:
    remove_tree(dir);
    return s;
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
            s = gx__err(GX_ERR_BACKEND, "loading a compiled kernel with dlopen failed: %s",
                        e ? e : "unknown error");
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
        gx_status s = h ? GX_OK
                        : gx__err(GX_ERR_BACKEND, "loading a compiled kernel with dlopen failed: %s",
                                  e ? e : "unknown error");
        unlink(path); /* the mapping stays valid; nothing is left behind */
        *handle = h;
        return s;
    }
    return gx__err(GX_ERR_BACKEND, "loading a compiled kernel: no unused temporary file name for dlopen");
}

gx_status cache_so_load(const void *so, size_t len, void **handle)
{
    GX__ARG(so && len && handle, "cache_so_load: so, len and handle must be set (got an empty object)");
    *handle = NULL;
    bool unsupported;
    gx_status s = load_memfd(so, len, handle, &unsupported);
    if (!unsupported)
        return s;
    return load_tmpfile(so, len, handle);
}
