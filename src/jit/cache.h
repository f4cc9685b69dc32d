/* cache.h -- the on-disk kernel cache and content hashing.  (The CPU backend's
 * compiler driver, which builds what this cache keeps on the CPU, is in
 * src/backend/cpu/cpu_cc.h.)
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
typedef struct cache_key {
    void *md;
} cache_key;
void cache_key_init(cache_key *k);
void cache_key_add(cache_key *k, const char *s); /* adds s and a separator */
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
const char *cache_disk_dir(const cache_disk *d); /* "" when disabled */

/* Looks up key.suffix.  Returns 1 and a malloc'd payload on a verified hit, 0 on miss.
 * A corrupt entry: warns once, deletes it, *corrupt = 1 (if not NULL), returns 0. */
int cache_disk_load(cache_disk *d, const char *key_hex, const char *suffix, void **payload, size_t *len, int *corrupt);
/* Stores atomically, then evicts least-recently-used entries over the cap.
 * Failures are silent (the cache is an optimisation) but counted. */
void cache_disk_store(cache_disk *d, const char *key_hex, const char *suffix, const void *payload, size_t len);

/* What this process has done with the cache (all zero when disabled).  `bytes` is the
 * running estimate of the cache's size (other processes may have changed it since). */
typedef struct cache_disk_stats {
    uint64_t stores, store_failures, corrupt, evictions;
    size_t bytes, max;
} cache_disk_stats;
void cache_disk_counters(cache_disk *d, cache_disk_stats *out);

/* Writes all n bytes (retrying short writes and EINTR); 0 on success. */
int cache_write_full(int fd, const void *buf, size_t n);

/* A file's identity as one line, "dev inode size mtime", into out; false when the
 * file cannot be examined or the line does not fit.  Side records (the compiler's
 * version line, NVRTC's) are keyed or checked by it: a replaced binary is another
 * file. */
bool cache_file_identity(const char *path, char *out, size_t cap);

/* Writes `text` to `file` through a temporary name and rename(), so a reader never
 * sees part of it.  Failures are silent: side records only save time. */
void cache_side_write(const char *file, const char *text);

#endif
