/* Memory headroom for the copies (see memlimit.h).
 *
 * The cgroup files are read where systemd and every container runtime mount
 * them: /sys/fs/cgroup/memory (v1) and /sys/fs/cgroup or, on hybrid systems,
 * /sys/fs/cgroup/unified (v2).  A limit anywhere up the tree applies to us
 * (v1's memory.use_hierarchy is always on since Linux 5.11; v2 is
 * hierarchical by design), so every ancestor is read and the smallest room
 * wins.  Where the files cannot be read the cgroup is taken as unlimited and
 * MemAvailable still bounds the copies. */
#include "memlimit.h"

#include <string.h>

#include "bits.h"
#include "sys.h"

/* Where a cgroup version keeps its files.  memory.stat's hierarchical
 * inactive file count is "total_inactive_file" in v1 and "inactive_file"
 * in v2. */
struct cg_files {
	const char *base, *limit, *usage, *inactive;
};
static const struct cg_files cg_v1 = { "/sys/fs/cgroup/memory", "memory.limit_in_bytes",
				       "memory.usage_in_bytes", "total_inactive_file" };
static const struct cg_files cg_v2 = { "/sys/fs/cgroup", "memory.max", "memory.current",
				       "inactive_file" };
static const struct cg_files cg_v2_hybrid = { "/sys/fs/cgroup/unified", "memory.max",
					      "memory.current", "inactive_file" };

/* A decimal number, or "max" (v2 for no limit). */
static int parse_u64(const char *s, uint64_t *v)
{
	if (tx_skip(s, "max")) {
		*v = UINT64_MAX;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	for (*v = 0; *s >= '0' && *s <= '9'; s++)
		*v = *v * 10 + (uint64_t)(*s - '0');
	return 0;
}

static int has_word(const char *a, const char *e, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = a; p < e;) {
		const char *q = p;
		while (q < e && *q != ',')
			q++;
		if ((size_t)(q - p) == n && !memcmp(p, w, n))
			return 1;
		p = q + 1;
	}
	return 0;
}

int memlimit_cgroup_path(const char *text, char *out, unsigned long n)
{
	int found = 0;

	for (const char *l = text; *l;) {
		const char *e = l;
		while (*e && *e != '\n')
			e++;
		const char *c1 = memchr(l, ':', (size_t)(e - l));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
		int v = 0;
		if (c2 && c2 == c1 + 1 && c1 == l + 1 && *l == '0')
			v = 2;
		else if (c2 && has_word(c1 + 1, c2, "memory"))
			v = 1;
		if (v && found != 1) {
			size_t len = (size_t)(e - c2 - 1);
			if (len + 1 > n)
				return 0;
			memcpy(out, c2 + 1, len);
			out[len] = '\0';
			found = v;
		}
		l = *e ? e + 1 : e;
	}
	return found;
}

/* The value of "key value" line `key` in text, or 0. */
static uint64_t stat_field(const char *text, const char *key)
{
	uint64_t v = 0;

	for (const char *l = text; *l; l++) {
		if (l != text && l[-1] != '\n')
			continue;
		const char *p = tx_skip(l, key);
		if (p && *p == ' ' && parse_u64(p + 1, &v) == 0)
			return v;
	}
	return 0;
}

/* limit - usage + inactive file cache of the group at base +
 * path[0..len), UINT64_MAX when it cannot be read.  The usage counts the
 * page cache read by the group, which fills any group up to its limit over
 * time; the inactive part of it is what reclaim takes first, so it counts
 * as room (the active part, which holds the text being run, does not). */
static uint64_t group_room(const struct cg_files *f, const char *path, size_t len)
{
	static char p[PATH_MAX + 64], st[8192];
	char b[64];
	size_t bl = strlen(f->base);
	uint64_t l, u;

	if (bl + len + 32 > sizeof(p))
		return UINT64_MAX;
	memcpy(p, f->base, bl);
	memcpy(p + bl, path, len);
	p[bl + len] = '/';
	char *name = p + bl + len + 1;
	memcpy(name, f->limit, strlen(f->limit) + 1);
	if (tx_read_text(p, b, sizeof(b)) <= 0 || parse_u64(b, &l) < 0)
		return UINT64_MAX;
	memcpy(name, f->usage, strlen(f->usage) + 1);
	if (tx_read_text(p, b, sizeof(b)) <= 0 || parse_u64(b, &u) < 0)
		return UINT64_MAX;
	memcpy(name, "memory.stat", sizeof("memory.stat"));
	uint64_t inactive = tx_read_text(p, st, sizeof(st)) > 0 ? stat_field(st, f->inactive) : 0;
	if (inactive > u)
		inactive = u;
	u -= inactive;
	return l > u ? l - u : 0;
}

/* The smallest room of the group at path and all its ancestors. */
static uint64_t tree_room(const struct cg_files *f, const char *path)
{
	uint64_t room = UINT64_MAX;

	for (size_t len = strlen(path);;) {
		uint64_t r = group_room(f, path, len);
		if (r < room)
			room = r;
		if (len == 0)
			break;
		while (len > 0 && path[len - 1] != '/')
			len--;
		if (len > 0)
			len--; /* "/a/b" -> "/a" -> "" (the root) */
	}
	return room;
}

static uint64_t mem_available(void)
{
	static char b[4096];
	const char *v = NULL;
	uint64_t kb;

	if (tx_read_text("/proc/meminfo", b, sizeof(b)) <= 0)
		return UINT64_MAX;
	for (const char *l = b; *l && !v; l++)
		if ((l == b || l[-1] == '\n'))
			v = tx_skip(l, "MemAvailable:");
	if (!v)
		return UINT64_MAX;
	while (*v == ' ')
		v++;
	if (parse_u64(v, &kb) < 0)
		return UINT64_MAX;
	return kb * 1024;
}

void memlimit_room(struct memlimit *m)
{
	static char text[4096], path[PATH_MAX];
	int v = tx_read_text("/proc/self/cgroup", text, sizeof(text)) > 0
			? memlimit_cgroup_path(text, path, sizeof(path))
			: 0;
	uint64_t r;

	m->room = UINT64_MAX;
	m->by = ML_NONE;
	if (v == 1) {
		r = tree_room(&cg_v1, path);
		if (r < m->room)
			m->room = r, m->by = ML_CGROUP_V1;
	} else if (v == 2) {
		r = tree_room(&cg_v2, path);
		uint64_t h = tree_room(&cg_v2_hybrid, path);
		if (h < r)
			r = h;
		if (r < m->room)
			m->room = r, m->by = ML_CGROUP_V2;
	}
	r = mem_available();
	if (r < m->room)
		m->room = r, m->by = ML_AVAILABLE;
}
