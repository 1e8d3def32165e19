/* smaps.c: parses /proc/PID/smaps text; no I/O (see smaps.h). */
#include "smaps.h"

#include <stdlib.h>
#include <string.h>

#include "mapsline.h"

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}


int smaps_parse_header(const char *line, size_t len, struct smaps_map *m)
{
	struct maps_line l;

	if (!maps_line(line, len, &l))
		return 0;
	char *path = malloc(l.path_len + 1);
	if (!path)
		return -1;
	memcpy(path, l.path, l.path_len);
	path[l.path_len] = '\0';

	memset(m, 0, sizeof(*m));
	m->start = l.lo;
	m->end = l.hi;
	memcpy(m->perms, l.perms, sizeof(m->perms));
	m->offset = l.off;
	m->maj = l.maj;
	m->min = l.min;
	m->inode = l.ino;
	m->path = path;
	m->deleted = maps_line_deleted(&l);
	m->size_kb = (l.hi - l.lo) / 1024;
	return 1;
}

static const struct {
	const char *key;
	size_t off;
	unsigned bit;
} fields[] = {
	{ "Size", offsetof(struct smaps_map, size_kb), SMAPS_HAVE_SIZE },
	{ "Rss", offsetof(struct smaps_map, rss_kb), SMAPS_HAVE_RSS },
	{ "AnonHugePages", offsetof(struct smaps_map, anon_huge_kb), SMAPS_HAVE_ANON_HUGE },
	{ "FilePmdMapped", offsetof(struct smaps_map, file_pmd_kb), SMAPS_HAVE_FILE_PMD },
	{ "ShmemPmdMapped", offsetof(struct smaps_map, shmem_pmd_kb), SMAPS_HAVE_SHMEM_PMD },
	{ "Shared_Hugetlb", offsetof(struct smaps_map, shared_hugetlb_kb), SMAPS_HAVE_SHARED_HUGETLB },
	{ "Private_Hugetlb", offsetof(struct smaps_map, private_hugetlb_kb),
	  SMAPS_HAVE_PRIVATE_HUGETLB },
};

static int is_key_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* A "Key: value" line: 1 (and applied to M if M and a field we keep), 0 if
 * the line is not one. */
static int parse_field(const char *line, size_t len, struct smaps_map *m)
{
	const char *p = line, *end = line + len;
	uint64_t v;

	while (p < end && is_key_char(*p))
		p++;
	if (p == line || p == end || *p != ':')
		return 0;
	size_t klen = (size_t)(p - line);
	p++;
	if (!m)
		return 0; /* a field before any mapping */
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (strlen(fields[i].key) != klen || memcmp(fields[i].key, line, klen) != 0)
			continue;
		while (p < end && is_blank(*p))
			p++;
		if (maps_dec(&p, end, &v))
			return 0; /* a size field without a number: malformed */
		while (p < end && is_blank(*p))
			p++;
		if (p != end && !(end - p == 2 && memcmp(p, "kB", 2) == 0))
			return 0;
		*(uint64_t *)(void *)((char *)m + fields[i].off) = v;
		m->have |= fields[i].bit;
		return 1;
	}
	return 1; /* another field (VmFlags, THPeligible, ...): not ours */
}

static int push(struct smaps *s, const struct smaps_map *m)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct smaps_map *nm = realloc(s->map, cap * sizeof(*nm));
		if (!nm)
			return -1;
		s->map = nm;
		s->cap = cap;
	}
	s->map[s->n++] = *m;
	return 0;
}

int smaps_parse(const char *text, size_t len, struct smaps *out)
{
	const char *p = text, *end = text + len;
	struct smaps_map m;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t llen = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int r;

		if (llen == 0) {
			/* an empty line: nothing */
		} else if ((r = smaps_parse_header(p, llen, &m)) != 0) {
			if (r < 0 || push(out, &m) != 0) {
				if (r > 0)
					free(m.path);
				return -1;
			}
		} else if (!parse_field(p, llen, out->n ? &out->map[out->n - 1] : NULL)) {
			out->bad_lines++;
		}
		p += llen + (nl != NULL);
	}
	return 0;
}

void smaps_free(struct smaps *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->map[i].path);
	free(s->map);
	memset(s, 0, sizeof(*s));
}

int smaps_is_exec(const struct smaps_map *m)
{
	return m->perms[2] == 'x';
}

uint64_t smaps_hugetlb_kb(const struct smaps_map *m)
{
	return m->shared_hugetlb_kb + m->private_hugetlb_kb;
}

uint64_t smaps_huge_kb(const struct smaps_map *m)
{
	return m->anon_huge_kb + m->file_pmd_kb + m->shmem_pmd_kb + smaps_hugetlb_kb(m);
}

uint64_t smaps_aligned_kb(uint64_t start, uint64_t end)
{
	const uint64_t h = SMAPS_HUGE_SIZE;

	if (start > UINT64_MAX - (h - 1))
		return 0;
	uint64_t lo = (start + h - 1) & ~(h - 1), hi = end & ~(h - 1);
	return hi > lo ? (hi - lo) / 1024 : 0;
}

