/* cpu_mem.c -- the memory the CPU backend can back: physical memory, capped by the
 * cgroups of this process.  Linux overcommits: malloc of more than exists succeeds,
 * and the process is killed when the pages are touched.  Reporting the real figure
 * lets the core refuse such a request up front (see cpu_mem.h). */
#include "backend/cpu/cpu_mem.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* v1 writes "no limit" as the largest page-aligned value below 2^63; anything this
 * large is no cap a machine could reach. */
#define CPU_MEM_NO_LIMIT (1ull << 62)

/* The number in a cgroup file: true with *v set, false for "max", junk or no file. */
static bool read_bytes(const char *path, size_t *v)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[64] = {0};
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!ok || line[0] < '0' || line[0] > '9')
        return false;
    char *end = NULL;
    unsigned long long x = strtoull(line, &end, 10);
    if (end == line || x >= CPU_MEM_NO_LIMIT)
        return false;
    *v = (size_t)x;
    return true;
}

/* Smallest limit (and smallest limit - usage) over dir/<path> and each parent of it up
 * to dir itself; the limits of ancestors cap their children. */
static void walk_up(const char *dir, const char *path, const char *limit_file, const char *usage_file, size_t *limit,
                    size_t *room)
{
    char rel[1024];
    snprintf(rel, sizeof rel, "%s", path);
    for (;;) {
        size_t n = strlen(rel);
        while (n > 0 && rel[n - 1] == '/')
            rel[--n] = 0;
        char file[1400];
        size_t lim, use;
        snprintf(file, sizeof file, "%s%s/%s", dir, rel, limit_file);
        if (read_bytes(file, &lim)) {
            if (*limit == 0 || lim < *limit)
                *limit = lim;
            snprintf(file, sizeof file, "%s%s/%s", dir, rel, usage_file);
            if (read_bytes(file, &use)) {
                size_t r = use < lim ? lim - use : 0;
                if (r < *room)
                    *room = r;
            }
        }
        if (n == 0)
            return;
        char *slash = strrchr(rel, '/');
        if (!slash)
            return;
        *slash = 0;
    }
}

/* Reads /proc/self/cgroup into buf ("" when it cannot). */
static void read_self(char *buf, size_t n)
{
    buf[0] = 0;
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f)
        return;
    size_t k = fread(buf, 1, n - 1, f);
    buf[k] = 0;
    fclose(f);
}

/* True when the comma-separated list names the memory controller. */
static bool has_memory(const char *list, size_t len)
{
    const char *p = list, *end = list + len;
    while (p < end) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        size_t w = c ? (size_t)(c - p) : (size_t)(end - p);
        if (w == 6 && memcmp(p, "memory", 6) == 0)
            return true;
        p += w + 1;
    }
    return false;
}

static void cgroup_caps(const char *sysfs, const char *self, size_t *limit, size_t *room)
{
    char own[8192];
    if (!self) {
        read_self(own, sizeof own);
        self = own;
    }
    /* Without /proc, at least the mount's roots: what a container shows as its own. */
    if (!*self)
        self = "0::/\n1:memory:/\n";
    *limit = 0;
    *room = SIZE_MAX;
    /* Each line: hierarchy-id:controllers:path. */
    for (const char *line = self; *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *c1 = memchr(line, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
        if (c2) {
            char path[1024];
            size_t plen = len - (size_t)(c2 + 1 - line);
            snprintf(path, sizeof path, "%.*s", (int)(plen < sizeof path ? plen : sizeof path - 1), c2 + 1);
            char dir[1100];
            if (c2 == c1 + 1 && strncmp(line, "0:", 2) == 0) { /* v2: one unified tree */
                walk_up(sysfs, path, "memory.max", "memory.current", limit, room);
                snprintf(dir, sizeof dir, "%s/unified", sysfs); /* hybrid systems mount it here */
                walk_up(dir, path, "memory.max", "memory.current", limit, room);
            } else if (has_memory(c1 + 1, (size_t)(c2 - c1 - 1))) {
                snprintf(dir, sizeof dir, "%s/memory", sysfs);
                walk_up(dir, path, "memory.limit_in_bytes", "memory.usage_in_bytes", limit, room);
            }
        }
        line = eol ? eol + 1 : line + len;
    }
}

size_t cpu_mem_cgroup_limit(const char *sysfs, const char *self)
{
    size_t limit, room;
    cgroup_caps(sysfs, self, &limit, &room);
    return limit;
}

size_t cpu_mem_total(size_t *avail)
{
    long pages = sysconf(_SC_PHYS_PAGES), free_pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t total = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : 0;
    size_t now = free_pages > 0 && psz > 0 ? (size_t)free_pages * (size_t)psz : 0;
    size_t limit, room;
    cgroup_caps("/sys/fs/cgroup", NULL, &limit, &room);
    if (limit && (total == 0 || limit < total))
        total = limit;
    if (room < now)
        now = room;
    if (avail)
        *avail = now;
    return total;
}
