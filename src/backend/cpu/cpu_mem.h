/* cpu_mem.h -- how much memory the CPU backend can back (cpu_mem.c): physical memory,
 * or less where a cgroup (a container, a systemd slice) caps this process.  The core
 * defaults its memory limit to this figure (gx_device_info.mem_total), so that an
 * allocation the system would overcommit and later kill the process for is
 * GX_ERR_OUT_OF_MEMORY at the call instead.  Part of the CPU backend. */
#ifndef GX_CPU_MEM_H
#define GX_CPU_MEM_H

#include <stddef.h>

/* The smallest memory limit of the cgroups this process is in, in bytes; 0 when none
 * applies ("max" in cgroup v2, v1's "unlimited" of about 2^63, or no readable
 * files).  `sysfs` is the cgroup mount ("/sys/fs/cgroup"), `self` the text of
 * /proc/self/cgroup (NULL: read it).  Both cgroup v2 (`0::/path`, memory.max) and v1
 * (`N:...memory...:/path`, memory/.../memory.limit_in_bytes) are read, every level
 * from the process's own cgroup up to the mount's root, because a parent's limit
 * caps its children.  Parameters, not fixed paths, so tests can feed a fake tree. */
size_t cpu_mem_cgroup_limit(const char *sysfs, const char *self);

/* What this process can use: min(physical memory, cgroup limit); *avail gets the
 * memory available now under the same caps (may be NULL). */
size_t cpu_mem_total(size_t *avail);

#endif
