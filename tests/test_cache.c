/* test_cache.c -- SHA-256, the disk kernel cache, and the CPU compiler driver.
 * Every disk test works in its own fresh directory (GX_CACHE_DIR) and resets the
 * process-wide cache so the environment is read again.  Every directory a test makes
 * is removed when the process exits, whether the test passed or not. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, mkdtemp, utimensat */
#endif
#include "gx_test.h"
#include "backend/cpu/cpu_cc.h"
#include "jit/cache.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Size of an entry's header (cache.c: magic, format, length, name and payload digests). */
#define HDR 80

/* ------------------------------------------------------------ helpers */

static void rm_tree(const char *dir) { gxt_rm_tree(dir); }

/* A new empty folder in $TMPDIR (or /tmp), removed at exit.  dir holds 64 bytes. */
static void make_temp_dir(char *dir) { gxt_temp_dir(dir, 64); }

/* A fresh cache directory, made current.  dir must hold 64 bytes. */
static void fresh_cache(char *dir)
{
    make_temp_dir(dir);
    if (!dir[0])
        return;
    unsetenv("GX_CACHE");
    unsetenv("GX_CACHE_MAX");
    setenv("GX_CACHE_DIR", dir, 1);
    cache_disk_reset_for_tests();
}

static void drop_cache(const char *dir)
{
    cache_disk_reset_for_tests();
    unsetenv("GX_CACHE_DIR");
    unsetenv("GX_CACHE_MAX");
    unsetenv("GX_CACHE");
    rm_tree(dir);
}

static void key_of(int i, char out[65])
{
    char s[32];
    snprintf(s, sizeof s, "entry-%d", i);
    cache_sha256_hex(s, strlen(s), out);
}

static char *entry_file(cache_disk *d, const char *key, const char *suffix)
{
    static char path[512];
    snprintf(path, sizeof path, "%.400s/%.2s/%.64s.%.16s", cache_disk_dir(d), key, key, suffix);
    return path;
}

/* ------------------------------------------------------------ hashing */

GXT_TEST(cache_sha256_known_answers)
{
    char h[65];
    cache_sha256_hex("", 0, h);
    GXT_CHECK(strcmp(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    cache_sha256_hex("abc", 3, h);
    GXT_CHECK(strcmp(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);

    /* The builder separates its parts: ("ab","c") != ("a","bc"), and is repeatable. */
    char a[65], b[65], c[65];
    cache_key k;
    cache_key_init(&k);
    cache_key_add(&k, "ab");
    cache_key_add(&k, "c");
    cache_key_final(&k, a);
    cache_key_init(&k);
    cache_key_add(&k, "a");
    cache_key_add(&k, "bc");
    cache_key_final(&k, b);
    cache_key_init(&k);
    cache_key_add(&k, "ab");
    cache_key_add(&k, "c");
    cache_key_final(&k, c);
    GXT_CHECK(strcmp(a, b) != 0);
    GXT_CHECK(strcmp(a, c) == 0);
    GXT_CHECK(strlen(a) == 64);
    /* One part "abc" hashes "abc\0". */
    cache_key_init(&k);
    cache_key_add(&k, "abc");
    cache_key_final(&k, a);
    cache_sha256_hex("abc", 4, b);
    GXT_CHECK(strcmp(a, b) == 0);
}

/* ------------------------------------------------------------ disk cache */

GXT_TEST(cache_disk_roundtrip_and_miss)
{
    char dir[64];
    fresh_cache(dir);
    GXT_CHECK(dir[0]);
    cache_disk *d = cache_disk_get();
    GXT_CHECK(cache_disk_get() == d);
    GXT_CHECK(cache_disk_enabled(d));
    GXT_CHECK(strncmp(cache_disk_dir(d), dir, strlen(dir)) == 0);
    GXT_CHECK(strstr(cache_disk_dir(d), "/v" GX_VERSION_STRING) != NULL);

    char key[65], other[65];
    key_of(1, key);
    key_of(2, other);
    void *p = (void *)1;
    size_t n = 7;
    int corrupt = 5;
    GXT_EQ_I64(cache_disk_load(d, key, "so", &p, &n, &corrupt), 0);
    GXT_CHECK(p == NULL && n == 0 && corrupt == 0);

    const char payload[] = "shared object bytes \x00\x01\x02 with a NUL";
    cache_disk_store(d, key, "so", payload, sizeof payload);
    GXT_EQ_I64(cache_disk_load(d, key, "so", &p, &n, &corrupt), 1);
    GXT_EQ_I64(n, sizeof payload);
    GXT_CHECK(p && memcmp(p, payload, sizeof payload) == 0);
    GXT_EQ_I64(corrupt, 0);
    free(p);

    /* Other key, other suffix: misses.  Sharded layout on disk. */
    GXT_EQ_I64(cache_disk_load(d, other, "so", &p, &n, NULL), 0);
    GXT_EQ_I64(cache_disk_load(d, key, "cubin", &p, &n, NULL), 0);
    struct stat st;
    GXT_CHECK(stat(entry_file(d, key, "so"), &st) == 0 && st.st_size == (off_t)(HDR + sizeof payload));

    /* Overwrite with a new payload; an empty payload round-trips too. */
    cache_disk_store(d, key, "so", "xyz", 3);
    GXT_EQ_I64(cache_disk_load(d, key, "so", &p, &n, NULL), 1);
    GXT_CHECK(n == 3 && memcmp(p, "xyz", 3) == 0);
    free(p);
    cache_disk_store(d, other, "so", "", 0);
    GXT_EQ_I64(cache_disk_load(d, other, "so", &p, &n, NULL), 1);
    GXT_EQ_I64(n, 0);
    free(p);

    /* Names that could leave the shard are refused, not used. */
    cache_disk_store(d, "../../etc", "so", "x", 1);
    cache_disk_store(d, key, "../x", "x", 1);
    GXT_EQ_I64(cache_disk_load(d, "../../etc", "so", &p, &n, NULL), 0);

    /* The cache survives a "new process" (a reset re-opens the same directory). */
    cache_disk_reset_for_tests();
    d = cache_disk_get();
    GXT_EQ_I64(cache_disk_load(d, key, "so", &p, &n, NULL), 1);
    free(p);
    drop_cache(dir);
}

static void check_corrupt_detected(cache_disk *d, const char *key, const char *why)
{
    void *p = NULL;
    size_t n = 0;
    int corrupt = 0;
    int hit = cache_disk_load(d, key, "so", &p, &n, &corrupt);
    if (hit != 0 || corrupt != 1 || p != NULL)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s: hit=%d corrupt=%d", why, hit, corrupt);
    struct stat st;
    if (stat(entry_file(d, key, "so"), &st) == 0)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s: corrupt entry was not removed", why);
    /* It can be stored again and then hits. */
    cache_disk_store(d, key, "so", "fresh payload", 13);
    hit = cache_disk_load(d, key, "so", &p, &n, &corrupt);
    if (hit != 1 || corrupt != 0 || n != 13 || memcmp(p, "fresh payload", 13) != 0)
        GXT_FAIL_AT(__FILE__, __LINE__, "%s: store after corruption failed", why);
    free(p);
}

/* An entry as format 1 wrote it: magic, format 1, length, payload SHA-256, payload. */
static size_t old_format_entry(const unsigned char *payload, size_t n, unsigned char *out)
{
    char hex[65];
    cache_sha256_hex(payload, n, hex);
    memcpy(out, "GXKC", 4);
    for (int i = 0; i < 4; i++)
        out[4 + i] = (unsigned char)(i == 0);
    for (int i = 0; i < 8; i++)
        out[8 + i] = (unsigned char)((uint64_t)n >> (8 * i));
    for (int i = 0; i < 32; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[16 + i] = (unsigned char)v;
    }
    memcpy(out + 48, payload, n);
    return 48 + n;
}

static void rewrite(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

GXT_TEST(cache_disk_corrupt_entries)
{
    char dir[64];
    fresh_cache(dir);
    cache_disk *d = cache_disk_get();
    GXT_CHECK(cache_disk_enabled(d));
    char key[65];
    key_of(3, key);
    unsigned char payload[1000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (unsigned char)(i * 7);
    const char *path = entry_file(d, key, "so");
    unsigned char buf[2000];
    struct stat st;

    /* 1. one flipped payload byte */
    cache_disk_store(d, key, "so", payload, sizeof payload);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    GXT_EQ_I64(n, HDR + sizeof payload);
    buf[HDR + 500] ^= 0x10;
    rewrite(path, buf, n);
    check_corrupt_detected(d, key, "flipped byte");

    /* 2. truncated file */
    cache_disk_store(d, key, "so", payload, sizeof payload);
    GXT_CHECK(truncate(path, HDR + 300) == 0);
    check_corrupt_detected(d, key, "truncated");

    /* 3. garbage header, and a file shorter than a header */
    cache_disk_store(d, key, "so", payload, sizeof payload);
    memset(buf, 'G', HDR);
    memcpy(buf + HDR, payload, sizeof payload);
    rewrite(path, buf, HDR + sizeof payload);
    check_corrupt_detected(d, key, "garbage header");
    rewrite(path, "GXK", 3);
    check_corrupt_detected(d, key, "short file");

    /* 4. payload appended (length no longer matches the file) */
    cache_disk_store(d, key, "so", payload, sizeof payload);
    f = fopen(path, "ab");
    if (f) {
        fputs("tail", f);
        fclose(f);
    }
    check_corrupt_detected(d, key, "extra bytes");
    GXT_CHECK(stat(path, &st) == 0);

    /* 5. an intact entry of the previous format (48-byte header, no name digest) */
    n = old_format_entry(payload, sizeof payload, buf);
    rewrite(path, buf, n);
    check_corrupt_detected(d, key, "old format");

    cache_disk_stats cs;
    cache_disk_counters(d, &cs);
    GXT_EQ_I64(cs.corrupt, 6);
    drop_cache(dir);
}

/* Two intact entries swapped on disk (or one copied over another key's file, or
 * renamed to another suffix) would pass the payload check: the name digest in the
 * header catches each of them. */
GXT_TEST(cache_disk_entry_bound_to_its_name)
{
    char dir[64];
    fresh_cache(dir);
    cache_disk *d = cache_disk_get();
    GXT_CHECK(cache_disk_enabled(d));
    char a[65], b[65], pa[512], pb[512], tmp[520];
    key_of(7, a);
    key_of(8, b);
    cache_disk_store(d, a, "so", "payload of a", 12);
    cache_disk_store(d, b, "so", "payload of b", 12);
    snprintf(pa, sizeof pa, "%s", entry_file(d, a, "so"));
    snprintf(pb, sizeof pb, "%s", entry_file(d, b, "so"));
    snprintf(tmp, sizeof tmp, "%s.swap", pa);
    GXT_CHECK(rename(pa, tmp) == 0 && rename(pb, pa) == 0 && rename(tmp, pb) == 0);
    check_corrupt_detected(d, a, "swapped a");
    check_corrupt_detected(d, b, "swapped b");

    /* The same key under another suffix is another name. */
    char pc[512];
    snprintf(pc, sizeof pc, "%s", entry_file(d, a, "cubin"));
    GXT_CHECK(rename(pa, pc) == 0);
    void *p = NULL;
    size_t n = 0;
    int corrupt = 0;
    GXT_EQ_I64(cache_disk_load(d, a, "cubin", &p, &n, &corrupt), 0);
    GXT_EQ_I64(corrupt, 1);
    cache_disk_stats cs;
    cache_disk_counters(d, &cs);
    GXT_EQ_I64(cs.corrupt, 3);
    drop_cache(dir);
}

static void set_mtime(const char *path, time_t t)
{
    struct timespec ts[2] = {{t, 0}, {t, 0}};
    utimensat(AT_FDCWD, path, ts, 0);
}

GXT_TEST(cache_disk_evicts_least_recently_used)
{
    char dir[64];
    fresh_cache(dir);
    /* 10 entries of 1000 payload bytes = 10800 bytes; cap 5000 keeps at most 4. */
    setenv("GX_CACHE_MAX", "5000", 1);
    cache_disk_reset_for_tests();
    cache_disk *d = cache_disk_get();
    GXT_CHECK(cache_disk_enabled(d));
    char keys[12][65];
    unsigned char payload[1000] = {0};
    time_t now = time(NULL);
    for (int i = 0; i < 4; i++) {
        key_of(100 + i, keys[i]);
        cache_disk_store(d, keys[i], "so", payload, sizeof payload);
        set_mtime(entry_file(d, keys[i], "so"), now - 1000 + i); /* ages: 0 oldest */
    }
    /* A hit on entry 0 makes it the most recently used. */
    void *p;
    size_t n;
    GXT_EQ_I64(cache_disk_load(d, keys[0], "so", &p, &n, NULL), 1);
    free(p);
    /* Entry 4 makes 5 x 1080 = 5400 bytes > 5000: evict down to 4500, which drops
     * the least recently used one -- entry 1, not entry 0 (stored first, but used). */
    key_of(104, keys[4]);
    cache_disk_store(d, keys[4], "so", payload, sizeof payload);
    struct stat st;
    GXT_CHECK(stat(entry_file(d, keys[0], "so"), &st) == 0);
    GXT_CHECK(stat(entry_file(d, keys[1], "so"), &st) != 0);
    GXT_CHECK(stat(entry_file(d, keys[2], "so"), &st) == 0);
    GXT_CHECK(stat(entry_file(d, keys[3], "so"), &st) == 0);
    GXT_CHECK(stat(entry_file(d, keys[4], "so"), &st) == 0);
    cache_disk_stats cs;
    cache_disk_counters(d, &cs);
    GXT_EQ_I64(cs.evictions, 1);
    GXT_CHECK(cs.bytes <= 4500);
    GXT_EQ_I64(cs.max, 5000);

    /* Many more stores: the total stays under the cap, the newest survives. */
    for (int i = 5; i < 12; i++) {
        key_of(100 + i, keys[i]);
        cache_disk_store(d, keys[i], "so", payload, sizeof payload);
    }
    cache_disk_counters(d, &cs);
    GXT_CHECK(cs.bytes <= 5000);
    GXT_EQ_I64(cache_disk_load(d, keys[11], "so", &p, &n, NULL), 1);
    free(p);

    /* Over the cap at open: the first need of the total (here the counters; a store
     * likewise) walks the directory and evicts. */
    setenv("GX_CACHE_MAX", "2500", 1);
    cache_disk_reset_for_tests();
    d = cache_disk_get();
    cache_disk_counters(d, &cs);
    GXT_CHECK(cs.bytes <= 2250);
    drop_cache(dir);
}

GXT_TEST(cache_disk_off_and_unwritable)
{
    char dir[64];
    fresh_cache(dir);
    const char *offs[] = {"off", "0", "OFF"};
    for (int i = 0; i < 3; i++) {
        setenv("GX_CACHE", offs[i], 1);
        cache_disk_reset_for_tests();
        cache_disk *d = cache_disk_get();
        GXT_CHECK(!cache_disk_enabled(d));
        GXT_CHECK(strcmp(cache_disk_dir(d), "") == 0);
        char key[65];
        key_of(1, key);
        cache_disk_store(d, key, "so", "x", 1); /* a no-op, never a crash */
        void *p;
        size_t n;
        GXT_EQ_I64(cache_disk_load(d, key, "so", &p, &n, NULL), 0);
    }
    unsetenv("GX_CACHE");

    /* A directory below a regular file can never be created -- even as root. */
    gx_clear_error();
    setenv("GX_CACHE_DIR", "/dev/null/gx-cache", 1);
    cache_disk_reset_for_tests();
    cache_disk *d = cache_disk_get();
    GXT_CHECK(!cache_disk_enabled(d));
    GXT_CHECK(gx_last_error()[0] == 0); /* not an error, only a warning */

    /* XDG_CACHE_HOME and HOME fallbacks. */
    unsetenv("GX_CACHE_DIR");
    char *old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("XDG_CACHE_HOME", dir, 1);
    cache_disk_reset_for_tests();
    d = cache_disk_get();
    char want[128];
    snprintf(want, sizeof want, "%s/gx/v%s", dir, GX_VERSION_STRING);
    GXT_CHECK(strcmp(cache_disk_dir(d), want) == 0);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", dir, 1);
    cache_disk_reset_for_tests();
    d = cache_disk_get();
    snprintf(want, sizeof want, "%s/.cache/gx/v%s", dir, GX_VERSION_STRING);
    GXT_CHECK(strcmp(cache_disk_dir(d), want) == 0);
    if (old_xdg)
        setenv("XDG_CACHE_HOME", old_xdg, 1);
    if (old_home)
        setenv("HOME", old_home, 1);
    else
        unsetenv("HOME");
    free(old_xdg);
    free(old_home);
    drop_cache(dir);
}

typedef struct store_job {
    int id;
    int bad;
} store_job;

static void payload_for(int k, unsigned char *buf, size_t *n)
{
    *n = 2000 + (size_t)k * 37;
    for (size_t i = 0; i < *n; i++)
        buf[i] = (unsigned char)(k * 31 + i);
}

static void *store_worker(void *arg)
{
    store_job *j = arg;
    cache_disk *d = cache_disk_get();
    unsigned char buf[4000];
    for (int round = 0; round < 20; round++) {
        /* Keys 0..3 are shared by every thread; 100+id are this thread's own. */
        int k = round % 2 ? (round / 2) % 4 : 100 + j->id;
        char key[65];
        key_of(k, key);
        size_t n;
        payload_for(k % 40, buf, &n);
        cache_disk_store(d, key, "so", buf, n);
        void *p;
        size_t got;
        int corrupt = 0;
        if (cache_disk_load(d, key, "so", &p, &got, &corrupt) != 1 || got != n || memcmp(p, buf, n) != 0)
            j->bad++;
        if (corrupt)
            j->bad++;
        if (got)
            free(p);
    }
    return NULL;
}

GXT_TEST(cache_disk_concurrent_stores)
{
    char dir[64];
    fresh_cache(dir);
    cache_disk *d = cache_disk_get();
    GXT_CHECK(cache_disk_enabled(d));
    pthread_t t[8];
    store_job jobs[8];
    for (int i = 0; i < 8; i++) {
        jobs[i] = (store_job){i, 0};
        pthread_create(&t[i], NULL, store_worker, &jobs[i]);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        GXT_EQ_I64(jobs[i].bad, 0);
    }
    unsigned char buf[4000];
    for (int k = 0; k < 108; k++) {
        if (k >= 4 && k < 100)
            continue;
        char key[65];
        key_of(k, key);
        size_t n;
        payload_for(k % 40, buf, &n);
        void *p;
        size_t got;
        GXT_EQ_I64(cache_disk_load(d, key, "so", &p, &got, NULL), 1);
        GXT_CHECK(got == n && memcmp(p, buf, n) == 0);
        free(p);
    }
    /* No temp files left behind. */
    cache_disk_stats cs;
    cache_disk_counters(d, &cs);
    GXT_EQ_I64(cs.store_failures, 0);
    GXT_EQ_I64(cs.stores, 160);
    drop_cache(dir);
}

/* ------------------------------------------------------------ compiler */

static const char *add_src = "#line 1 \"user.c\"\n"
                             "int gxt_add(int a, int b) { return a + b + %d; }\n";

static int compile_and_call(const char *label, int bias, int *result)
{
    char src[256];
    snprintf(src, sizeof src, add_src, bias);
    void *so = NULL, *h = NULL;
    size_t n = 0;
    gx_status s = cpu_cc_build(src, label, &so, &n);
    if (s != GX_OK)
        return (int)s;
    s = cpu_cc_so_load(so, n, &h);
    free(so);
    if (s != GX_OK)
        return (int)s;
    int (*fn)(int, int);
    void *sym = dlsym(h, "gxt_add");
    if (!sym) {
        dlclose(h);
        return -1;
    }
    memcpy(&fn, &sym, sizeof fn);
    *result = fn(2, 3);
    dlclose(h);
    return 0;
}

GXT_TEST(cache_cc_build_load_call)
{
    int r = 0;
    int s = compile_and_call("add kernel", 0, &r);
    if (s == (int)GX_ERR_COMPILE && strstr(gx_last_error(), "cannot run the C compiler")) {
        gxt_skip("no C compiler");
        return;
    }
    GXT_EQ_I64(s, 0);
    GXT_EQ_I64(r, 5);
    /* A second, different object must not be mistaken for the first one even when the
     * memfd gets the same descriptor number; keep the first loaded meanwhile. */
    char src[256];
    snprintf(src, sizeof src, add_src, 100);
    void *so = NULL, *h1 = NULL, *h2 = NULL;
    size_t n = 0;
    GXT_OK(cpu_cc_build(src, "first", &so, &n));
    GXT_OK(cpu_cc_so_load(so, n, &h1));
    free(so);
    snprintf(src, sizeof src, add_src, 200);
    GXT_OK(cpu_cc_build(src, "second", &so, &n));
    GXT_OK(cpu_cc_so_load(so, n, &h2));
    free(so);
    int (*f1)(int, int), (*f2)(int, int);
    void *s1 = dlsym(h1, "gxt_add"), *s2 = dlsym(h2, "gxt_add");
    GXT_CHECK(s1 && s2 && h1 != h2);
    if (s1 && s2) {
        memcpy(&f1, &s1, sizeof f1);
        memcpy(&f2, &s2, sizeof f2);
        GXT_EQ_I64(f1(0, 0), 100);
        GXT_EQ_I64(f2(0, 0), 200);
    }
    dlclose(h1);
    dlclose(h2);
    /* Sequential load/unload cycles each see their own code. */
    for (int i = 0; i < 3; i++) {
        GXT_EQ_I64(compile_and_call("cycle", 10 * i, &r), 0);
        GXT_EQ_I64(r, 5 + 10 * i);
    }
    /* Hostile labels only shape a file name. */
    GXT_EQ_I64(compile_and_call("-o /tmp/evil; rm -rf / ../../x", 1, &r), 0);
    GXT_EQ_I64(r, 6);
    GXT_EQ_I64(compile_and_call("", 2, &r), 0);
    GXT_EQ_I64(compile_and_call(NULL, 3, &r), 0);
    GXT_EQ_I64(r, 8);
}

GXT_TEST(cache_cc_compile_error_names_user_lines)
{
    const char *src = "#line 1 \"user.c\"\n"
                      "int ok(void) { return 1; }\n"
                      "int broken(void) { return 1 +; }\n";
    void *so = (void *)1;
    size_t n = 9;
    GXT_STATUS(cpu_cc_build(src, "my_kernel", &so, &n), GX_ERR_COMPILE);
    if (strstr(gx_last_error(), "cannot run the C compiler")) {
        gxt_skip("no C compiler");
        return;
    }
    GXT_CHECK(so == NULL && n == 0);
    GXT_MSG_HAS("user.c:2");
    GXT_MSG_HAS("my_kernel");
    GXT_MSG_HAS("error");

    /* Huge diagnostics are trimmed, and the compiler's pipe never deadlocks. */
    size_t cap = 200000;
    char *big = malloc(cap);
    GXT_CHECK(big != NULL);
    if (!big)
        return;
    size_t len = (size_t)snprintf(big, cap, "#line 1 \"user.c\"\n");
    /* Long names, so that even a compiler that stops after 20 errors (clang) prints
     * more than the 4 KB we keep. */
    char longname[301];
    memset(longname, 'q', 300);
    longname[300] = 0;
    for (int i = 0; i < 300 && len + 400 < cap; i++)
        len += (size_t)snprintf(big + len, cap - len, "int f%d(void) { return %s%d; }\n", i, longname, i);
    GXT_STATUS(cpu_cc_build(big, "big", &so, &n), GX_ERR_COMPILE);
    GXT_MSG_HAS("user.c:1");
    GXT_MSG_HAS("truncated");
    GXT_CHECK(strlen(gx_last_error()) < 6000);
    free(big);

    /* A compiler that does not exist: a clear message, no crash. */
    setenv("GX_CC", "gx-no-such-compiler-xyz", 1);
    GXT_STATUS(cpu_cc_build("int x;", "k", &so, &n), GX_ERR_COMPILE);
    GXT_MSG_HAS("gx-no-such-compiler-xyz");
    GXT_MSG_HAS("GX_CC");
    GXT_CHECK(strstr(cpu_cc_id(), "gx-no-such-compiler-xyz") != NULL);
    unsetenv("GX_CC");
}

typedef struct cc_job {
    int id;
    int bad;
} cc_job;

static void *cc_worker(void *arg)
{
    cc_job *j = arg;
    for (int i = 0; i < 2; i++) {
        int r = 0;
        if (compile_and_call("parallel", j->id * 10 + i, &r) != 0 || r != 5 + j->id * 10 + i)
            j->bad++;
    }
    return NULL;
}

GXT_TEST(cache_cc_parallel_builds)
{
    pthread_t t[4];
    cc_job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (cc_job){i, 0};
        pthread_create(&t[i], NULL, cc_worker, &jobs[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        GXT_EQ_I64(jobs[i].bad, 0);
    }
}

GXT_TEST(cache_cc_id_stable)
{
    const char *a = cpu_cc_id();
    const char *b = cpu_cc_id();
    GXT_CHECK(a && a[0]);
    GXT_CHECK(a == b || strcmp(a, b) == 0);
    GXT_CHECK(strstr(a, "cpu-flags=") != NULL);
    GXT_CHECK(cpu_cc_path()[0] != 0);
    setenv("GX_CC", "cc", 1);
    GXT_CHECK(strcmp(cpu_cc_path(), "cc") == 0);
    unsetenv("GX_CC");
}

/* ------------------------------------------------------------ entries bound to keys, end to end */

/* What a child process saw running lambdas over 0..3. */
typedef struct swap_seen {
    int ok;          /* 1 if every value was right */
    int32_t v[2][4]; /* the values */
    gx_cache_stats cs;
} swap_seen;

static const char *const swap_lams[2] = {"x -> x * 7", "x -> x + 100"};

static void swap_child_body(int mask, swap_seen *seen)
{
    gx_ctx *ctx = NULL;
    gx_array *x = NULL;
    int32_t h[4] = {0, 1, 2, 3};
    int64_t n = 4;
    if (gx_ctx_create(&ctx, GX_BACKEND_CPU) != GX_OK || gx_array_from_host(ctx, GX_I32, 1, &n, h, &x) != GX_OK)
        return;
    seen->ok = 1;
    for (int i = 0; i < 2; i++) {
        gx_array *o = NULL;
        if (!(mask & (1 << i)))
            continue;
        if (gx_map(ctx, swap_lams[i], 1, &x, NULL, &o) != GX_OK ||
            gx_array_to_host(o, seen->v[i], sizeof seen->v[i]) != GX_OK)
            seen->ok = 0;
        for (int k = 0; k < 4; k++)
            seen->ok &= seen->v[i][k] == (i == 0 ? k * 7 : k + 100);
        gx_array_release(o);
    }
    gx_cache_stats_get(ctx, &seen->cs);
    gx_array_release(x);
    gx_ctx_destroy(ctx);
}

/* Runs the lambdas in `mask` in a new process (a fork of this one, which has no
 * context and no threads), as a second run of a program would. */
static swap_seen swap_in_child(int mask)
{
    swap_seen seen = {0};
    int p[2];
    if (pipe(p) != 0)
        return seen;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        swap_child_body(mask, &seen);
        (void)!write(p[1], &seen, sizeof seen);
        _exit(0);
    }
    close(p[1]);
    if (pid > 0 && read(p[0], &seen, sizeof seen) != (ssize_t)sizeof seen)
        memset(&seen, 0, sizeof seen);
    close(p[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    return seen;
}

/* The entry files under root (cap at most 8); returns how many. */
static char found_files[8][512];
static int n_found;

static int collect_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    /* Kernel entries only: the CPU backend also keeps its compiler's version line
     * there (cc-version-*, see cpu_cc.c), which is not a kernel. */
    if (flag == FTW_F && p[ftw->base] != '.' && strncmp(p + ftw->base, "cc-version-", 11) != 0 && n_found < 8)
        snprintf(found_files[n_found++], 512, "%s", p);
    return 0;
}

static int list_entries(const char *root)
{
    n_found = 0;
    nftw(root, collect_cb, 16, FTW_PHYS);
    return n_found;
}

/* The issue "First contact": copying the entry of `x -> x * 7` over the file of
 * `x -> x + 100` made the next run of `x -> x + 100` return 0 7 14 21, silently. */
GXT_TEST(cache_swapped_entries_rebuilt_in_new_process)
{
    char dir[64];
    fresh_cache(dir);
    GXT_CHECK(dir[0]);
    swap_seen s1 = swap_in_child(1);
    GXT_CHECK(s1.ok && s1.cs.compiles == 1);
    char first[512];
    GXT_EQ_I64(list_entries(dir), 1);
    snprintf(first, sizeof first, "%s", found_files[0]);
    swap_seen s2 = swap_in_child(2);
    GXT_CHECK(s2.ok && s2.cs.compiles == 1);
    GXT_EQ_I64(list_entries(dir), 2);
    const char *second = strcmp(found_files[0], first) == 0 ? found_files[1] : found_files[0];
    char tmp[520];
    snprintf(tmp, sizeof tmp, "%s.swap", first);
    GXT_CHECK(rename(first, tmp) == 0 && rename(second, first) == 0 && rename(tmp, second) == 0);

    /* Both entries are refused, removed and rebuilt; the values are right. */
    swap_seen s3 = swap_in_child(3);
    GXT_CHECK(s3.ok);
    GXT_EQ_I64(s3.v[1][1], 101);
    GXT_EQ_I64(s3.cs.corrupt_entries, 2);
    GXT_EQ_I64(s3.cs.compiles, 2);
    GXT_EQ_I64(s3.cs.disk_hits, 0);
    /* The rebuilt entries serve the next process. */
    swap_seen s4 = swap_in_child(3);
    GXT_CHECK(s4.ok);
    GXT_EQ_I64(s4.cs.disk_hits, 2);
    GXT_EQ_I64(s4.cs.compiles, 0);
    GXT_EQ_I64(s4.cs.corrupt_entries, 0);
    drop_cache(dir);
}

/* ------------------------------------------------------------ compiler limits */

/* A private TMPDIR (removed at exit), so that this test's compile folders are the
 * only ones in it.  dir must hold 64 bytes. */
static void private_tmpdir(char *dir)
{
    make_temp_dir(dir);
    if (dir[0])
        setenv("TMPDIR", dir, 1);
}

/* How many gx-cc-* folders are in dir. */
static int cc_folders(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, "gx-cc-", 6) == 0;
    if (d)
        closedir(d);
    return n;
}

GXT_TEST(cache_cc_memory_limit)
{
    char dir[64];
    private_tmpdir(dir);
    GXT_CHECK(dir[0]);
    setenv("GX_CC_MEMORY", "256MiB", 1);
    setenv("GX_CC_TIMEOUT", "60", 1); /* if the memory limit failed, the test would still end */
    gx_ctx *ctx = NULL;
    GXT_OK(gx_ctx_create(&ctx, GX_BACKEND_CPU)); /* the C compiler, whatever GX_BACKEND says */
    double t0 = gx__now_ms();
    gx_clear_error();
    gx_status s = gx_define(ctx, "u", "#include \"/dev/zero\"\nint f(int a){return a;}");
    gx_array *x = NULL, *o = NULL;
    int64_t n = 4;
    if (s == GX_OK && (s = gx_array_zeros(ctx, GX_I32, 1, &n, &x)) == GX_OK)
        s = gx_map(ctx, "a -> f(a)", 1, &x, NULL, &o);
    double ms = gx__now_ms() - t0;
    gx_array_release(x);
    gx_array_release(o);
    if (s == GX_OK) { /* clang reads /dev/zero as an empty file */
        gxt_skip("this C compiler does not read #include \"/dev/zero\"");
    } else {
        GXT_EQ_I64(s, GX_ERR_COMPILE);
        GXT_MSG_HAS("GX_CC_MEMORY");
        GXT_MSG_HAS("256 MiB");
        GXT_CHECK(ms < 30000);
    }
    /* Ordinary code still compiles under the same limit. */
    s = gx_define(ctx, "v", "int g(int a){return a + 1;}");
    if (s != GX_OK)
        GXT_FAIL_AT(__FILE__, __LINE__, "plain code under the limit: %s", gx_last_error());
    gx_ctx_destroy(ctx);
    GXT_EQ_I64(cc_folders(dir), 0);
    unsetenv("GX_CC_MEMORY");
    unsetenv("GX_CC_TIMEOUT");
}

/* Alive and not a zombie (a killed grandchild waits for init to reap it). */
static bool process_running(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *paren = strrchr(buf, ')');
    return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

/* A "compiler" that starts a child and sleeps: the timeout must kill both. */
GXT_TEST(cache_cc_timeout_kills_the_compiler)
{
    char dir[64];
    private_tmpdir(dir);
    GXT_CHECK(dir[0]);
    char script[128], pids[128];
    snprintf(script, sizeof script, "%s/slow-cc", dir);
    snprintf(pids, sizeof pids, "%s/pids", dir);
    FILE *f = fopen(script, "w");
    GXT_CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "#!/bin/sh\nsleep 30 &\necho $$ $! > '%s'\nwait\n", pids);
    fclose(f);
    chmod(script, 0755);
    setenv("GX_CC", script, 1);
    setenv("GX_CC_TIMEOUT", "1", 1);
    void *so = (void *)1;
    size_t n = 9;
    double t0 = gx__now_ms();
    GXT_STATUS(cpu_cc_build("int x;", "slow", &so, &n), GX_ERR_COMPILE);
    double ms = gx__now_ms() - t0;
    GXT_MSG_HAS("GX_CC_TIMEOUT");
    GXT_MSG_HAS("stopped after 1 s");
    GXT_CHECK(so == NULL && n == 0);
    GXT_CHECK(ms >= 900 && ms < 10000);
    /* Both the script and its sleep are gone (give init a moment to reap). */
    pid_t sh = 0, sl = 0;
    f = fopen(pids, "r");
    if (f) {
        long a = 0, b = 0;
        if (fscanf(f, "%ld %ld", &a, &b) == 2) {
            sh = (pid_t)a;
            sl = (pid_t)b;
        }
        fclose(f);
    }
    GXT_CHECK(sh > 0 && sl > 0);
    for (int i = 0; i < 200 && sl > 0 && (process_running(sh) || process_running(sl)); i++)
        usleep(10000);
    GXT_CHECK(sh > 0 && !process_running(sh));
    GXT_CHECK(sl > 0 && !process_running(sl));
    GXT_EQ_I64(cc_folders(dir), 0);
    unsetenv("GX_CC");
    unsetenv("GX_CC_TIMEOUT");
}

/* Folders of processes that died without cleaning up are removed; live ones,
 * ours, and names that are not ours to judge stay. */
GXT_TEST(cache_cc_sweeps_stale_folders)
{
    char dir[64];
    private_tmpdir(dir);
    GXT_CHECK(dir[0]);
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    char stale[128], inner[160], mine[128], init[128], odd[128];
    snprintf(stale, sizeof stale, "%s/gx-cc-%ld-abcdef", dir, (long)dead);
    snprintf(inner, sizeof inner, "%s/sub", stale);
    snprintf(mine, sizeof mine, "%s/gx-cc-%ld-ghijkl", dir, (long)getpid());
    snprintf(init, sizeof init, "%s/gx-cc-1-mnopqr", dir);
    snprintf(odd, sizeof odd, "%s/gx-cc-%ld-x", dir, (long)dead);
    GXT_CHECK(mkdir(stale, 0700) == 0 && mkdir(inner, 0700) == 0 && mkdir(mine, 0700) == 0 && mkdir(init, 0700) == 0 &&
              mkdir(odd, 0700) == 0);
    char file[200];
    snprintf(file, sizeof file, "%s/k.c", inner);
    rewrite(file, "int x;", 6);
    cpu_cc_sweep_stale();
    struct stat st;
    GXT_CHECK(stat(stale, &st) != 0);
    GXT_CHECK(stat(mine, &st) == 0);
    GXT_CHECK(stat(init, &st) == 0);
    GXT_CHECK(stat(odd, &st) == 0);
}

/* ------------------------------------------------------------ environment */

/* The text of a small file ("" if unreadable). */
static char *read_all(const char *path)
{
    static char buf[8192];
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
    }
    return buf;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

GXT_TEST(cache_env_bad_values_use_defaults)
{
    char dir[64], log[128];
    fresh_cache(dir);
    GXT_CHECK(dir[0]);
    snprintf(log, sizeof log, "%s/stderr.txt", dir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);

    setenv("GX_CACHE", "garbage", 1);
    setenv("GX_CACHE_MAX", "lots", 1);
    setenv("GX_CC_TIMEOUT", "0", 1);
    setenv("GX_CC_MEMORY", "plenty", 1);
    cache_disk_reset_for_tests();
    cache_disk *d = cache_disk_get();
    bool on = cache_disk_enabled(d);
    cache_disk_stats cs;
    cache_disk_counters(d, &cs);
    cache_disk_reset_for_tests(); /* read again: still one warning each */
    d = cache_disk_get();
    /* The public path works with the defaults: a map compiles and is stored. */
    gx_ctx *ctx = NULL;
    gx_array *x = NULL, *o = NULL;
    int64_t n = 8;
    gx_status s = gx_ctx_create(&ctx, GX_BACKEND_CPU);
    if (s == GX_OK)
        s = gx_array_zeros(ctx, GX_F32, 1, &n, &x);
    if (s == GX_OK)
        s = gx_map(ctx, "x -> x + 3.5f", 1, &x, NULL, &o);
    gx_cache_stats st = {0};
    if (ctx)
        gx_cache_stats_get(ctx, &st);
    cache_disk_stats cs2;
    cache_disk_counters(d, &cs2);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    const char *err = read_all(log);
    GXT_CHECK(on);
    GXT_EQ_I64(cs.max, (int64_t)1 << 30);
    GXT_EQ_I64(s, GX_OK);
    GXT_CHECK(st.compiles >= 1);
    GXT_EQ_I64(cs2.stores, st.compiles);
    GXT_EQ_I64(count_of(err, "GX_CACHE=\"garbage\""), 1);
    GXT_EQ_I64(count_of(err, "GX_CACHE_MAX=\"lots\""), 1);
    GXT_EQ_I64(count_of(err, "GX_CC_TIMEOUT=\"0\""), 1);
    GXT_EQ_I64(count_of(err, "GX_CC_MEMORY=\"plenty\""), 1);
    if (gxt_failures)
        fprintf(stderr, "captured stderr:\n%s\n", err);
    gx_array_release(x);
    gx_array_release(o);
    gx_ctx_destroy(ctx);
    unsetenv("GX_CC_TIMEOUT");
    unsetenv("GX_CC_MEMORY");
    drop_cache(dir);
}

/* cc-version-* files anywhere under root (the cache keeps them in its versioned
 * folder); the last one found goes to out. */
static char g_ver_found[600];
static int g_ver_n;
static int ver_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    if (flag == FTW_F && strncmp(p + ftw->base, "cc-version-", 11) == 0 && !strstr(p + ftw->base, ".tmp-")) {
        g_ver_n++;
        snprintf(g_ver_found, sizeof g_ver_found, "%s", p);
    }
    return 0;
}
static int find_version_files(const char *root, char *out, size_t cap)
{
    g_ver_n = 0;
    nftw(root, ver_cb, 16, FTW_PHYS);
    snprintf(out, cap, "%s", g_ver_found);
    return g_ver_n;
}

/* The CPU backend's compiler id needs `cc --version`'s first line; a process whose
 * kernels are all in the disk cache should not pay a compiler run for it, so the line
 * is remembered there per compiler binary.  A torn file is ignored and rewritten. */
GXT_TEST(cache_cc_version_remembered)
{
    char dir[64];
    fresh_cache(dir);
    GXT_CHECK(dir[0]);
    swap_seen s1 = swap_in_child(1);
    GXT_CHECK(s1.ok && s1.cs.compiles == 1);
    char found[600] = "";
    int nver = find_version_files(dir, found, sizeof found);
    GXT_EQ_I64(nver, 1);
    char line[512] = "";
    FILE *f = fopen(found, "r");
    GXT_CHECK(f != NULL);
    if (f) {
        GXT_CHECK(fgets(line, sizeof line, f) != NULL);
        fclose(f);
    }
    /* The same line `cc --version` prints first, with its newline. */
    GXT_CHECK(strlen(line) > 1 && line[strlen(line) - 1] == '\n');
    /* Torn: no newline.  The next process runs the compiler and rewrites it whole. */
    f = fopen(found, "w");
    GXT_CHECK(f != NULL);
    if (f) {
        fputs("torn", f);
        fclose(f);
    }
    swap_seen s2 = swap_in_child(1);
    GXT_CHECK(s2.ok);
    char again[512] = "";
    f = fopen(found, "r");
    GXT_CHECK(f != NULL);
    if (f) {
        GXT_CHECK(fgets(again, sizeof again, f) != NULL);
        fclose(f);
    }
    GXT_CHECK(strcmp(again, line) == 0);
}

/* gx__kernel.pdl comes from the kernel's text: only an entry whose first statement is
 * GX_PDL_ENTER() may be launched before the previous kernel ends. */
GXT_TEST(kernel_pdl_read_from_the_entry)
{
    const char *src = "GXF void gx_k_helper(int x) { }\n"
                      "extern \"C\" __global__ void gx_k(const gx_args a);\n"
                      "extern \"C\" __global__ void __launch_bounds__(256) gx_k(const gx_args a)\n{\n"
                      "  GX_PDL_ENTER();\n  work();\n}\n"
                      "extern \"C\" __global__ void gx_late(const gx_args a) {\n  int i = 0;\n"
                      "  GX_PDL_ENTER();\n}\n"
                      "extern \"C\" __global__ void my_gx_k2(const gx_args a) { GX_PDL_ENTER(); }\n";
    GXT_CHECK(gx__kernel_src_pdl(src, "gx_k"));
    GXT_CHECK(!gx__kernel_src_pdl(src, "gx_late"));  /* not the first statement */
    GXT_CHECK(!gx__kernel_src_pdl(src, "gx_k_helper"));
    GXT_CHECK(!gx__kernel_src_pdl(src, "gx_k2"));    /* only inside another name */
    GXT_CHECK(gx__kernel_src_pdl(src, "my_gx_k2"));
    GXT_CHECK(!gx__kernel_src_pdl(src, "absent"));
    GXT_CHECK(!gx__kernel_src_pdl("void f(", "f")); /* cut short */
}
