/* How much memory the loader may still take for copies of the text without
 * pushing the process into its memory cgroup's limit (the OOM killer) or the
 * machine into reclaim: the smallest of every enclosing cgroup's
 * limit - (usage - inactive file cache) and of /proc/meminfo's MemAvailable.
 *
 * Reads files only; never prints. */
#pragma once

#include <stdint.h>

enum memlimit_by {
	ML_NONE,      /* nothing known limits us */
	ML_CGROUP_V1, /* a memory cgroup v1: memory.limit_in_bytes, memory.usage_in_bytes */
	ML_CGROUP_V2, /* a cgroup v2: memory.max, memory.current */
	ML_AVAILABLE, /* the machine: MemAvailable */
};

struct memlimit {
	uint64_t room;      /* bytes; UINT64_MAX when nothing limits */
	enum memlimit_by by; /* which limit is the tightest */
};

void memlimit_room(struct memlimit *m);

/* The memory controller's cgroup path in the text of /proc/self/cgroup: a
 * cgroup v1 line "N:ctrl,...,memory,...:/path" wins over the v2 line
 * "0::/path" (on a hybrid system the v2 hierarchy has no memory controller).
 * Copies the path into out (NUL-terminated) and returns 1 for v1, 2 for v2,
 * 0 when there is none or it does not fit. */
int memlimit_cgroup_path(const char *text, char *out, unsigned long n);
