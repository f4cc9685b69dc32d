/* test_cache.c -- SHA-256, the disk kernel cache, and the CPU compiler driver.
 * Every disk test works in its own fresh directory (GX_CACHE_DIR) and resets the
 * process-wide cache so the environment is read again. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, pipe2, mkdtemp, utimensat */
#endif
#include "gx_test.h"
#include "jit/cache.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(p);
    return 0;
}

/* A fresh cache directory, made current.  dir must hold 64 bytes. */
static void fresh_cache(char *dir)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, 64, "%s/gxt-cache-XXXXXX", t && t[0] == '/' && strlen(t) < 40 ? t : "/tmp");
    if (!mkdtemp(dir)) {
        dir[0] = 0;
        return;
    }
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
    if (dir[0])
        nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
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
    GXT_CHECK(stat(entry_file(d, key, "so"), &st) == 0 && st.st_size == (off_t)(48 + sizeof payload));

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
    GXT_EQ_I64(n, 48 + sizeof payload);
    buf[48 + 500] ^= 0x10;
    rewrite(path, buf, n);
    check_corrupt_detected(d, key, "flipped byte");

    /* 2. truncated file */
    cache_disk_store(d, key, "so", payload, sizeof payload);
    GXT_CHECK(truncate(path, 48 + 300) == 0);
    check_corrupt_detected(d, key, "truncated");

    /* 3. garbage header, and a file shorter than a header */
    cache_disk_store(d, key, "so", payload, sizeof payload);
    memset(buf, 'G', 48);
    memcpy(buf + 48, payload, sizeof payload);
    rewrite(path, buf, 48 + sizeof payload);
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

    cache_disk_stats cs;
    cache_disk_counters(d, &cs);
    GXT_EQ_I64(cs.corrupt, 5);
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
    /* 10 entries of 1000 payload bytes = 10480 bytes; cap 5000 keeps at most 4. */
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
    /* Entry 4 makes 5 x 1048 = 5240 bytes > 5000: evict down to 4500, which drops
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

    /* Opening over the cap evicts at once (the scan at open). */
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

typedef struct store_job { int id; int bad; } store_job;

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
    gx_status s = cache_cc_build(src, label, &so, &n);
    if (s != GX_OK)
        return (int)s;
    s = cache_so_load(so, n, &h);
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
    GXT_OK(cache_cc_build(src, "first", &so, &n));
    GXT_OK(cache_so_load(so, n, &h1));
    free(so);
    snprintf(src, sizeof src, add_src, 200);
    GXT_OK(cache_cc_build(src, "second", &so, &n));
    GXT_OK(cache_so_load(so, n, &h2));
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
    GXT_STATUS(cache_cc_build(src, "my_kernel", &so, &n), GX_ERR_COMPILE);
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
    GXT_STATUS(cache_cc_build(big, "big", &so, &n), GX_ERR_COMPILE);
    GXT_MSG_HAS("user.c:1");
    GXT_MSG_HAS("truncated");
    GXT_CHECK(strlen(gx_last_error()) < 6000);
    free(big);

    /* A compiler that does not exist: a clear message, no crash. */
    setenv("GX_CC", "gx-no-such-compiler-xyz", 1);
    GXT_STATUS(cache_cc_build("int x;", "k", &so, &n), GX_ERR_COMPILE);
    GXT_MSG_HAS("gx-no-such-compiler-xyz");
    GXT_MSG_HAS("GX_CC");
    GXT_CHECK(strstr(cache_cc_id(), "gx-no-such-compiler-xyz") != NULL);
    unsetenv("GX_CC");
}

typedef struct cc_job { int id; int bad; } cc_job;

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
    const char *a = cache_cc_id();
    const char *b = cache_cc_id();
    GXT_CHECK(a && a[0]);
    GXT_CHECK(a == b || strcmp(a, b) == 0);
    GXT_CHECK(strstr(a, "cpu-flags=") != NULL);
    GXT_CHECK(cache_cc_path()[0] != 0);
    setenv("GX_CC", "cc", 1);
    GXT_CHECK(strcmp(cache_cc_path(), "cc") == 0);
    unsetenv("GX_CC");
}
