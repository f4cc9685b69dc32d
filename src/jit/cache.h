/* cache.h -- the on-disk kernel cache, content hashing, and the CPU backend's
 * compiler driver.
 *
 * Disk layout: $GX_CACHE_DIR or $XDG_CACHE_HOME/gx or ~/.cache/gx, then
 *   v<GX_VERSION_STRING>/<first 2 hex of key>/<key>.<suffix>
 * (namespaced by gx version, sharded).  Each entry is a small header
 * (magic, format version, payload length, SHA-256 of the entry's own name
 * "<key>\0<suffix>", SHA-256 of the payload) followed by the payload; entries are
 * written to a temporary file in the same directory and rename()d into place, so
 * concurrent processes never see half a file.  A corrupt, truncated, old-format or
 * misplaced entry (one whose name digest is not its file name's, e.g. copied over
 * another key's file) is reported once (stderr warning), removed, and counted; the
 * caller then rebuilds.  Total size is capped (GX_CACHE_MAX, e.g. "1GiB", default
 * 1 GiB) with least-recently-used eviction (a hit touches the entry's mtime).
 * GX_CACHE=off (or 0/false/no; on/1/true/yes is the default) disables the disk cache;
 * another value warns once and keeps it on.  An unwritable directory disables it with
 * one warning.
 */
#ifndef GX_CACHE_H
#define GX_CACHE_H

#include "core/gx_internal.h"

/* SHA-256 of data as 64 lowercase hex chars + NUL. */
void cache_sha256_hex(const void *data, size_t len, char out[65]);

/* Incremental key builder: feed strings, get the hex digest. */
typedef struct cache_key { void *md; } cache_key;
void cache_key_init(cache_key *k);
void cache_key_add(cache_key *k, const char *s);        /* adds s and a separator */
void cache_key_final(cache_key *k, char out[65]);

typedef struct cache_disk cache_disk;

/* Opens the process-wide disk cache (created on first use, shared by contexts;
 * thread-safe).  Never fails: returns a disabled cache when off or unwritable.
 * The environment (GX_CACHE, GX_CACHE_DIR, XDG_CACHE_HOME, HOME, GX_CACHE_MAX) is
 * read once, when the cache is first opened. */
cache_disk *cache_disk_get(void);
/* Tests only: forgets the singleton so the next cache_disk_get() re-reads the
 * environment.  No other thread may be using the cache (pointers die). */
void cache_disk_reset_for_tests(void);
bool cache_disk_enabled(const cache_disk *d);
const char *cache_disk_dir(const cache_disk *d);     /* "" when disabled */

/* Looks up key.suffix.  Returns 1 and a malloc'd payload on a verified hit, 0 on miss.
 * A corrupt entry: warns once, deletes it, *corrupt = 1 (if not NULL), returns 0. */
int cache_disk_load(cache_disk *d, const char *key_hex, const char *suffix,
                    void **payload, size_t *len, int *corrupt);
/* Stores atomically, then evicts least-recently-used entries over the cap.
 * Failures are silent (the cache is an optimisation) but counted. */
void cache_disk_store(cache_disk *d, const char *key_hex, const char *suffix,
                      const void *payload, size_t len);

/* What this process has done with the cache (all zero when disabled).  `bytes` is the
 * running estimate of the cache's size (other processes may have changed it since). */
typedef struct cache_disk_stats {
    uint64_t stores, store_failures, corrupt, evictions;
    size_t bytes, max;
} cache_disk_stats;
void cache_disk_counters(cache_disk *d, cache_disk_stats *out);

/* Writes all n bytes (retrying short writes and EINTR); 0 on success. */
int cache_write_full(int fd, const void *buf, size_t n);

/* ---------------------------------------------------------------- CPU compiler */

/* The C compiler the CPU backend uses: $GX_CC, else $CC, else "cc".  *id receives
 * the compiler's first `--version` line plus the host CPU model and flags digest, for
 * cache keys (stable across runs, different across machines/compilers). */
const char *cache_cc_path(void);
const char *cache_cc_id(void);

/* Compiles C `source` into a shared object with
 *   <cc> -std=c11 -O3 -march=native -fPIC -shared -fwrapv -fno-strict-aliasing
 *        -fno-math-errno -Wno-unused-function -o out.so <label>.c -lm
 * run with fork + execve (no shell; the only user-influenced text, the label, is
 * reduced to [A-Za-z0-9_] and used only inside a file name), in a private temporary
 * directory $TMPDIR/gx-cc-<pid>-XXXXXX (or /tmp/...), which is also the compiler's
 * TMPDIR and is removed on every path.  <cc> is cache_cc_path(), split at blanks so
 * that e.g. CC="ccache gcc" works.  The compiler runs in its own process group under
 * two limits, read from the environment at every call: GX_CC_TIMEOUT (wall clock,
 * whole seconds >= 1, default 120; on expiry the whole group is killed) and
 * GX_CC_MEMORY (RLIMIT_AS of each compiler process, a size, default 4GiB).
 * On success *so / *len hold the .so bytes (malloc'd).  On failure GX_ERR_COMPILE
 * with the compiler's diagnostics in the message (the source carries #line
 * directives, so they name the user's file and lines), or naming the limit that
 * stopped it and the variable that raises it. */
gx_status cache_cc_build(const char *source, const char *label, void **so, size_t *len);

/* Removes compile folders gx-cc-<pid>-* in the temporary directory that belong to
 * this user and whose process no longer exists (left by a process that was killed).
 * cache_cc_build() calls it once per process, before its first compile; exposed for
 * tests. */
void cache_cc_sweep_stale(void);

/* Loads a shared object from memory (memfd + dlopen, or a temp file that is unlinked
 * at once where memfd_create is unavailable); *handle for dlsym/dlclose.  Each call
 * gives a distinct library even when glibc would reuse a /proc/self/fd name. */
gx_status cache_so_load(const void *so, size_t len, void **handle);

#endif
