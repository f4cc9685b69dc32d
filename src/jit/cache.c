/* cache.c -- content hashing (SHA-256 through OpenSSL's EVP API) and the on-disk
 * kernel cache described in cache.h.
 *
 * Design notes (the why):
 *  - The cache is an optimisation.  Nothing here ever returns an error to the
 *    caller: a cache that cannot be used is disabled with one warning, and a store
 *    that fails is dropped (and counted).
 *  - Readers never lock files.  Writers write a private temp file in the shard
 *    directory and rename() it over the final name, which is atomic within one
 *    file system, so another process sees either the old entry, the new one, or
 *    nothing -- never half a file.  A reader that loses a race with an eviction
 *    simply sees a miss.
 *  - Every entry carries the SHA-256 of its payload, so a file damaged by a full
 *    disk, a crash of some other tool, or a bad copy is detected before we hand a
 *    shared object to dlopen.
 *  - Every entry also carries a digest of its own name (key and suffix): an intact
 *    entry copied or renamed over another key's file would pass the payload check
 *    and run the wrong kernel, so a name mismatch is treated as corruption.
 *  - Entries of an older format are treated as corrupt too (removed and rebuilt);
 *    the version-named directory normally keeps them apart anyway.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, mkdtemp, utimensat */
#endif
#include "jit/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
/* OpenSSL's one-call SHA-256 (deprecated in 3.0, still built by default) where it
 * exists, EVP otherwise: the first EVP digest of a process initialises OpenSSL's
 * provider machinery and reads its configuration, 0.6-1.5 ms on this project's VM
 * against 0.012 ms for the first SHA256_Init/Final -- and every first use of gx
 * hashes a kernel source.  Same digests either way. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/sha.h>
#if defined(OPENSSL_NO_DEPRECATED_3_0) || (defined(OPENSSL_VERSION_MAJOR) && OPENSSL_VERSION_MAJOR >= 4)
#define GX_SHA_EVP 1
#else
#define GX_SHA_EVP 0
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ SHA-256 */

static void hex_of(const unsigned char *d, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[2 * n] = 0;
}

/* Raw 32-byte digest.  Returns 0 on success.  OpenSSL only fails on allocation
 * failure; callers then treat the data as unhashable (a miss / no store). */
static int sha256_raw(const void *data, size_t len, unsigned char out[32])
{
#if GX_SHA_EVP
    unsigned int n = 0;
    if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1 || n != 32)
        return -1;
    return 0;
#else
    return SHA256((const unsigned char *)data, len, out) ? 0 : -1;
#endif
}

void cache_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char d[32];
    if (sha256_raw(data ? data : "", len, d) != 0) {
        /* Only reachable when OpenSSL cannot allocate; an all-zero digest keeps the
         * caller's string well formed, and the disk cache rejects it (see key_ok). */
        memset(out, '0', 64);
        out[64] = 0;
        return;
    }
    hex_of(d, 32, out);
}

void cache_key_init(cache_key *k)
{
#if GX_SHA_EVP
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(c);
        c = NULL;
    }
#else
    SHA256_CTX *c = malloc(sizeof *c);
    if (c && SHA256_Init(c) != 1) {
        free(c);
        c = NULL;
    }
#endif
    k->md = c;
}

void cache_key_add(cache_key *k, const char *s)
{
    if (!k->md)
        return;
    /* The NUL separator makes ("ab","c") and ("a","bc") different keys; NUL cannot
     * appear inside a C string, so the encoding is unambiguous. */
    if (!s)
        s = "";
#if GX_SHA_EVP
    EVP_DigestUpdate((EVP_MD_CTX *)k->md, s, strlen(s) + 1);
#else
    SHA256_Update((SHA256_CTX *)k->md, s, strlen(s) + 1);
#endif
}

void cache_key_final(cache_key *k, char out[65])
{
    unsigned char d[32];
#if GX_SHA_EVP
    unsigned int n = 0;
    EVP_MD_CTX *c = k->md;
    bool ok = c && EVP_DigestFinal_ex(c, d, &n) == 1 && n == 32;
    EVP_MD_CTX_free(c);
#else
    SHA256_CTX *c = k->md;
    bool ok = c && SHA256_Final(d, c) == 1;
    free(c);
#endif
    if (!ok) {
        memset(out, '0', 64);
        out[64] = 0;
    } else {
        hex_of(d, 32, out);
    }
    k->md = NULL;
}

/* ------------------------------------------------------------------ disk cache */

#define HDR_MAGIC "GXKC"
#define HDR_FORMAT 2u /* 1: no name digest */
#define HDR_SIZE 80   /* magic 4 + format u32 + length u64 + name sha256 32 + payload sha256 32 */
#define HDR_NAME 16   /* offset of the name digest */
#define HDR_SUM 48    /* offset of the payload digest */
#define DEFAULT_MAX ((size_t)1 << 30)
#define RESCAN_MS 30000.0

struct cache_disk {
    bool enabled;
    char *dir;          /* .../v<version>; "" when disabled */
    size_t max;         /* GX_CACHE_MAX in bytes */
    pthread_mutex_t mu; /* guards total and the counters, serialises eviction */
    size_t total;       /* running estimate of the bytes under dir */
    double scanned_ms;  /* when total was last measured (gx__now_ms) */
    bool scanned;       /* total measured at least once (disk_total_locked) */
    uint64_t stores, store_failures, corrupt, evictions;
};

/* Returned when the cache is off or unusable; never freed. */
static cache_disk g_disabled = {.enabled = false, .dir = "", .mu = PTHREAD_MUTEX_INITIALIZER};

static _Atomic(cache_disk *) g_disk;
static pthread_mutex_t g_disk_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_warned_corrupt;

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* mkdir -p with 0700 for what we create (kernels are code we later execute, so the
 * cache should not be writable by others). */
static int mkdir_p(const char *path)
{
    char *p = strdup(path);
    if (!p)
        return -1;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int rc = mkdir(p, 0700);
    free(p);
    if (rc != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return s;
}

static bool is_hex2(const char *s)
{
    for (int i = 0; i < 2; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return s[2] == 0;
}

/* Sums the regular files in the shard directories.  If `list` is not NULL it also
 * collects (path, size, mtime) for eviction. */
typedef struct ent {
    char *path;
    off_t size;
    struct timespec mtime;
} ent;
typedef struct entlist {
    ent *v;
    size_t n, cap;
} entlist;

static size_t scan_dir(const char *dir, entlist *list)
{
    size_t total = 0;
    time_t now = time(NULL);
    DIR *top = opendir(dir);
    if (!top)
        return 0;
    struct dirent *de;
    while ((de = readdir(top))) {
        if (!is_hex2(de->d_name))
            continue;
        char *shard = str_printf("%s/%s", dir, de->d_name);
        DIR *sd = shard ? opendir(shard) : NULL;
        if (!sd) {
            free(shard);
            continue;
        }
        struct dirent *fe;
        while ((fe = readdir(sd))) {
            if (fe->d_name[0] == '.' && (fe->d_name[1] == 0 || (fe->d_name[1] == '.' && fe->d_name[2] == 0)))
                continue;
            struct stat st;
            if (fstatat(dirfd(sd), fe->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
                continue;
            total += (size_t)st.st_size;
            /* A young temp file is a store in progress (maybe in another process):
             * deleting it would only make that store fail.  Old ones are leftovers
             * of a crashed writer and may go. */
            if (!list || (strncmp(fe->d_name, ".tmp-", 5) == 0 && st.st_mtim.tv_sec > now - 3600))
                continue;
            if (list->n == list->cap) {
                size_t cap = list->cap ? list->cap * 2 : 64;
                ent *v = realloc(list->v, cap * sizeof *v);
                if (!v)
                    continue; /* evict what we did collect */
                list->v = v;
                list->cap = cap;
            }
            char *p = str_printf("%s/%s", shard, fe->d_name);
            if (!p)
                continue;
            list->v[list->n++] = (ent){p, st.st_size, st.st_mtim};
        }
        closedir(sd);
        free(shard);
    }
    closedir(top);
    return total;
}

static int ent_cmp_mtime(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Called with d->mu held when the running total passes the cap or is old.  Other
 * processes share the directory, so the running total is only an estimate: rescan to
 * get the truth (and the mtimes); if over the cap, delete the least recently used
 * entries until under 90% of it.  The cap is therefore soft across processes: it can
 * be overshot by what other processes stored since our last scan. */
static void evict_locked(cache_disk *d)
{
    entlist l = {0};
    size_t total = scan_dir(d->dir, &l);
    size_t target = d->max / 10 * 9;
    if (total > d->max) {
        qsort(l.v, l.n, sizeof *l.v, ent_cmp_mtime);
        for (size_t i = 0; i < l.n && total > target; i++) {
            /* ENOENT: another process evicted it first -- the bytes are gone either way. */
            if (unlink(l.v[i].path) == 0 || errno == ENOENT) {
                total -= (size_t)l.v[i].size < total ? (size_t)l.v[i].size : total;
                d->evictions++;
            }
        }
    }
    d->total = total;
    d->scanned_ms = gx__now_ms();
    d->scanned = true;
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i].path);
    free(l.v);
}

/* GX_CACHE: the first four choices keep the cache on (the default), the rest turn it off. */
static bool cache_off_by_env(void)
{
    static const char *const choices[] = {"on", "1", "true", "yes", "off", "0", "false", "no", NULL};
    return gx__env_choice("GX_CACHE", choices, 0, "on/off, 1/0, true/false or yes/no") >= 4;
}

static cache_disk *disabled_with_warning(const char *why)
{
    fprintf(stderr,
            "gx: warning: kernel disk cache disabled: %s; kernels will be recompiled in every process "
            "(set GX_CACHE_DIR to a writable directory, or GX_CACHE=off to silence this)\n",
            why);
    return &g_disabled;
}

static cache_disk *disk_open(void)
{
    if (cache_off_by_env())
        return &g_disabled;

    char *base = NULL;
    const char *v;
    if ((v = gx__env("GX_CACHE_DIR")))
        base = strdup(v);
    else if ((v = getenv("XDG_CACHE_HOME")) && *v == '/')
        base = str_printf("%s/gx", v);
    else if ((v = getenv("HOME")) && *v)
        base = str_printf("%s/.cache/gx", v);
    else
        return disabled_with_warning("neither GX_CACHE_DIR, XDG_CACHE_HOME nor HOME is set");
    if (!base)
        return &g_disabled; /* out of memory: quietly run without a cache */

    char *dir = str_printf("%s/v%s", base, GX_VERSION_STRING);
    free(base);
    if (!dir)
        return &g_disabled;

    char why[4400];
    if (mkdir_p(dir) != 0) {
        snprintf(why, sizeof why, "cannot create directory %.4096s (%s)", dir, strerror(errno));
        cache_disk *r = disabled_with_warning(why);
        free(dir);
        return r;
    }
    /* Probe writability now, so an unwritable cache warns once here rather than
     * failing silently on every store. */
    char *probe = str_printf("%s/.probe-XXXXXX", dir);
    int fd = probe ? mkstemp(probe) : -1;
    if (fd < 0) {
        snprintf(why, sizeof why, "cannot write in directory %.4096s (%s)", dir, strerror(errno));
        free(probe);
        cache_disk *r = disabled_with_warning(why);
        free(dir);
        return r;
    }
    close(fd);
    unlink(probe);
    free(probe);

    size_t max = gx__env_size("GX_CACHE_MAX", DEFAULT_MAX, 0, "a size such as 512MiB or 2GB", "using 1GiB");

    cache_disk *d = calloc(1, sizeof *d);
    if (!d) {
        free(dir);
        return &g_disabled;
    }
    d->enabled = true;
    d->dir = dir;
    d->max = max;
    pthread_mutex_init(&d->mu, NULL);
    return d; /* the directory is walked on first need: disk_total_locked */
}

/* Double-checked creation instead of pthread_once, because tests must be able to
 * reset the singleton (pthread_once_t cannot be re-armed portably). */
cache_disk *cache_disk_get(void)
{
    cache_disk *d = atomic_load_explicit(&g_disk, memory_order_acquire);
    if (d)
        return d;
    pthread_mutex_lock(&g_disk_mu);
    d = atomic_load_explicit(&g_disk, memory_order_relaxed);
    if (!d) {
        d = disk_open();
        atomic_store_explicit(&g_disk, d, memory_order_release);
    }
    pthread_mutex_unlock(&g_disk_mu);
    return d;
}

void cache_disk_reset_for_tests(void)
{
    pthread_mutex_lock(&g_disk_mu);
    cache_disk *d = atomic_exchange(&g_disk, NULL);
    if (d && d != &g_disabled) {
        pthread_mutex_destroy(&d->mu);
        free(d->dir);
        free(d);
    }
    pthread_mutex_unlock(&g_disk_mu);
}

bool cache_disk_enabled(const cache_disk *d) { return d && d->enabled; }
const char *cache_disk_dir(const cache_disk *d) { return d && d->enabled ? d->dir : ""; }

/* The running total, measured (and the cap enforced) when first needed -- by a store
 * or by the counters -- instead of when the cache opens: a process whose kernels are
 * all in the cache then never walks the directory (a stat per entry; a test run
 * leaves a few thousand).  On the H200 host the first cache lookup of a warm first
 * use took 1.8 of gx's 2.8 ms; deferring the walk took gx's part only to 2.7-2.9 ms,
 * so most of it was OpenSSL's first EVP digest (see the SHA-256 note above). */
static void disk_total_locked(cache_disk *d)
{
    if (!d->scanned)
        evict_locked(d);
}

void cache_disk_counters(cache_disk *d, cache_disk_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!d || !d->enabled)
        return;
    pthread_mutex_lock(&d->mu);
    disk_total_locked(d);
    out->stores = d->stores;
    out->store_failures = d->store_failures;
    out->corrupt = d->corrupt;
    out->evictions = d->evictions;
    out->bytes = d->total;
    out->max = d->max;
    pthread_mutex_unlock(&d->mu);
}

/* Keys are digests we made, suffixes are our own constants; still, they become path
 * components, so anything that could climb out of the shard ('/', "..") is refused. */
static bool name_ok(const char *key, const char *suffix)
{
    size_t n = strlen(key);
    if (n < 2 || n > 128)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    if (!suffix || !*suffix || strlen(suffix) > 32)
        return false;
    for (const char *s = suffix; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static char *entry_path(const cache_disk *d, const char *key, const char *suffix)
{
    return str_printf("%s/%.2s/%s.%s", d->dir, key, key, suffix);
}

static int read_full(int fd, void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int cache_write_full(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

bool cache_file_identity(const char *path, char *out, size_t cap)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    int n = snprintf(out, cap, "%llu %llu %lld %lld.%09ld", (unsigned long long)st.st_dev,
                     (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                     (long)st.st_mtim.tv_nsec);
    return n > 0 && (size_t)n < cap;
}

void cache_side_write(const char *file, const char *text)
{
    size_t fl = strlen(file);
    char *tmp = malloc(fl + 32);
    if (!tmp)
        return;
    snprintf(tmp, fl + 32, "%s.tmp-%ld", file, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        bool ok = cache_write_full(fd, text, strlen(text)) == 0;
        ok = close(fd) == 0 && ok;
        if (!ok || rename(tmp, file) != 0)
            unlink(tmp);
    }
    free(tmp);
}

/* Removes a corrupt entry -- but only if the path still names the file we read: a
 * concurrent writer may have renamed a good entry into place meanwhile. */
static void drop_corrupt(cache_disk *d, const char *path, int fd, const struct stat *st)
{
    struct stat now;
    bool same = stat(path, &now) == 0 && now.st_ino == st->st_ino && now.st_dev == st->st_dev;
    close(fd);
    if (same && unlink(path) == 0) {
        pthread_mutex_lock(&d->mu);
        d->total -= (size_t)st->st_size < d->total ? (size_t)st->st_size : d->total;
        pthread_mutex_unlock(&d->mu);
    }
    pthread_mutex_lock(&d->mu);
    d->corrupt++;
    pthread_mutex_unlock(&d->mu);
    if (atomic_exchange(&g_warned_corrupt, 1) == 0)
        fprintf(stderr, "gx: warning: corrupt or misplaced kernel cache entry %s removed; rebuilding\n", path);
}

/* The digest of an entry's name ("key\0suffix") that binds its content to it. */
static int name_digest(const char *key_hex, const char *suffix, unsigned char out[32])
{
    size_t k = strlen(key_hex), n = k + 1 + strlen(suffix);
    char buf[200]; /* name_ok: key <= 128, suffix <= 32 */
    if (n > sizeof buf)
        return -1;
    memcpy(buf, key_hex, k + 1);
    memcpy(buf + k + 1, suffix, n - k - 1);
    return sha256_raw(buf, n, out);
}

/* ENTRY_MISS: absent, not a regular file, or no memory to read it -- none of them corruption. */
typedef enum { ENTRY_OK, ENTRY_BAD, ENTRY_MISS } entry_check;

/* Reads and verifies the entry open on fd: header, name, length and payload digest. */
static entry_check read_entry(int fd, const struct stat *st, const unsigned char name[32], void **out, size_t *len)
{
    unsigned char hdr[HDR_SIZE], got[32];
    if (st->st_size < HDR_SIZE || read_full(fd, hdr, HDR_SIZE) != 0 || memcmp(hdr, HDR_MAGIC, 4) != 0 ||
        get_u32(hdr + 4) != HDR_FORMAT || get_u64(hdr + 8) != (uint64_t)st->st_size - HDR_SIZE ||
        memcmp(hdr + HDR_NAME, name, 32) != 0)
        return ENTRY_BAD;
    size_t n = (size_t)(st->st_size - HDR_SIZE);
    void *buf = malloc(n ? n : 1);
    if (!buf)
        return ENTRY_MISS;
    if (read_full(fd, buf, n) != 0 || sha256_raw(buf, n, got) != 0 || memcmp(got, hdr + HDR_SUM, 32) != 0) {
        free(buf);
        return ENTRY_BAD;
    }
    *out = buf;
    *len = n;
    return ENTRY_OK;
}

int cache_disk_load(cache_disk *d, const char *key_hex, const char *suffix, void **payload, size_t *len, int *corrupt)
{
    if (payload)
        *payload = NULL;
    if (len)
        *len = 0;
    if (corrupt)
        *corrupt = 0;
    unsigned char name[32];
    if (!d || !d->enabled || !key_hex || !payload || !len || !name_ok(key_hex, suffix) ||
        name_digest(key_hex, suffix, name) != 0)
        return 0;
    char *path = entry_path(d, key_hex, suffix);
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    struct stat st = {0};
    /* ENOENT is the ordinary miss; anything else is a miss too. */
    entry_check c =
        fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ? ENTRY_MISS : read_entry(fd, &st, name, payload, len);
    if (c == ENTRY_BAD) {
        drop_corrupt(d, path, fd, &st);
        if (corrupt)
            *corrupt = 1;
    } else if (fd >= 0) {
        /* A hit is a use: bump the mtime so LRU eviction keeps it.  Failure (e.g. a
         * read-only shared cache) only makes eviction less precise. */
        if (c == ENTRY_OK)
            (void)futimens(fd, NULL);
        close(fd);
    }
    free(path);
    return c == ENTRY_OK;
}

void cache_disk_store(cache_disk *d, const char *key_hex, const char *suffix, const void *payload, size_t len)
{
    if (!d || !d->enabled || !key_hex || (!payload && len) || !name_ok(key_hex, suffix))
        return;
    unsigned char hdr[HDR_SIZE];
    memcpy(hdr, HDR_MAGIC, 4);
    put_u32(hdr + 4, HDR_FORMAT);
    put_u64(hdr + 8, (uint64_t)len);
    bool hashed = name_digest(key_hex, suffix, hdr + HDR_NAME) == 0 &&
                  sha256_raw(payload ? payload : "", len, hdr + HDR_SUM) == 0;
    char *shard = str_printf("%s/%.2s", d->dir, key_hex);
    char *path = entry_path(d, key_hex, suffix);
    char *tmp = shard ? str_printf("%s/.tmp-XXXXXX", shard) : NULL;
    int fd = -1;
    bool ok = false;
    size_t replaced = 0;
    if (!shard || !path || !tmp || !hashed)
        goto done;
    if (mkdir(shard, 0700) != 0 && errno != EEXIST)
        goto done;
    fd = mkstemp(tmp);
    if (fd < 0)
        goto done;
    /* mkstemp makes 0600 files; entries are only ever read by their owner's processes. */
    if (cache_write_full(fd, hdr, HDR_SIZE) != 0 || cache_write_full(fd, payload, len) != 0) {
        close(fd);
        unlink(tmp);
        goto done;
    }
    if (close(fd) != 0) { /* a delayed write error (e.g. quota) shows up here */
        unlink(tmp);
        goto done;
    }
    struct stat old;
    if (lstat(path, &old) == 0 && S_ISREG(old.st_mode))
        replaced = (size_t)old.st_size;
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        goto done;
    }
    ok = true;
done:
    pthread_mutex_lock(&d->mu);
    if (ok) {
        d->stores++;
        d->total -= replaced < d->total ? replaced : d->total;
        d->total += HDR_SIZE + len;
        /* Other processes' stores are invisible to our running total, so it is
         * re-measured now and then as well as whenever it passes the cap. */
        if (!d->scanned || d->total > d->max || gx__now_ms() - d->scanned_ms > RESCAN_MS)
            evict_locked(d);
    } else {
        d->store_failures++;
    }
    pthread_mutex_unlock(&d->mu);
    free(shard);
    free(path);
    free(tmp);
}
