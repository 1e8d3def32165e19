/* Which program a process runs (program.h). */
#define _GNU_SOURCE
#include "program.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapsline.h"
#include "perfmap.h"
#include "procfs.h"
#include "textcache.h"

int path_in_cache(const char *path, const char *cache_dir)
{
	size_t n = strlen(cache_dir);

	return n && !strncmp(path, cache_dir, n) && path[n] == '/';
}

/* Whether the maps line m is a file a program may be: a file, not one of
 * the loaders and not a text cache entry. */
static int program_file(const struct maps_line *m, const char *cache_dir, const struct loaders *ld)
{
	char p[PATH_MAX];

	if (!m->path_len || m->path[0] != '/' || m->path_len >= sizeof(p) || maps_line_deleted(m) ||
	    loaders_map(ld, m->maj, m->min, m->ino))
		return 0;
	memcpy(p, m->path, m->path_len);
	p[m->path_len] = '\0';
	return !path_in_cache(p, cache_dir);
}

/* The file of maps line m in process pid, malloc'ed, and into *fd the file
 * itself (proc_open_mapping). */
static char *open_mapped(long pid, const struct maps_line *m, int *fd)
{
	char *p = strndup(m->path, m->path_len);

	*fd = p ? proc_open_mapping(pid, m->lo, m->hi, p, 0, m->ino) : -1;
	return p;
}

/* The program whose text is at addr in the process (maps, its text): the
 * file mapped there; or, where that text is tiexec's copy (anonymous) or
 * a text cache entry, the program's own file mapped next to it (its data
 * above, else its headers below).  Only what the kernel says, which file
 * is mapped where: never a name the process wrote (an [anon:...] name, its
 * environment).  malloc'ed with its file in *fd (open_mapped), or NULL. */
static char *file_at(long pid, const char *maps, uint64_t addr, const char *cache_dir, const struct loaders *ld,
		     int *fd)
{
	struct maps_line m, below = { 0 };
	int hit = 0, have_below = 0;

	for (const char *l = maps; *l;) {
		const char *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l) : strlen(l);
		l += len + (eol != NULL);
		if (!maps_line(l - len - (eol != NULL), len, &m))
			continue;
		int prog = program_file(&m, cache_dir, ld);
		if (!hit && addr >= m.lo && addr < m.hi) {
			if (prog)
				return open_mapped(pid, &m, fd);
			if (m.path_len && ((m.path[0] == '[' && strncmp(m.path, "[anon:", 6)) ||
					   loaders_map(ld, m.maj, m.min, m.ino)))
				return NULL; /* [stack], [vdso], the loader: no program's */
			hit = 1;
			continue;
		}
		if (hit && prog)
			return open_mapped(pid, &m, fd);
		if (!hit && prog) {
			below = m;
			have_below = 1;
		}
	}
	return hit && have_below ? open_mapped(pid, &below, fd) : NULL;
}

/* The program of a process that runs the loader, from its aux vector: the
 * file mapped where its entry point (AT_ENTRY) or its program headers
 * (AT_PHDR) are.  tiexec gives the program the aux vector of a direct
 * exec, and nothing the program does to its argv or environment (a
 * process title) or a fork changes it.  malloc'ed, or NULL. */
static char *program_from_auxv(long pid, const char *cache_dir, const struct loaders *ld, int *fd)
{
	char path[64], *aux, *maps, *r = NULL;
	size_t alen, mlen;
	uint64_t entry = 0, phdr = 0;

	snprintf(path, sizeof(path), "/proc/%ld/auxv", pid);
	if (read_all(path, &aux, &alen) != 0)
		return NULL;
	for (size_t i = 0; i + 16 <= alen; i += 16) {
		uint64_t k, v;
		memcpy(&k, aux + i, 8);
		memcpy(&v, aux + i + 8, 8);
		if (k == AT_ENTRY)
			entry = v;
		else if (k == AT_PHDR)
			phdr = v;
	}
	free(aux);
	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	if (read_all(path, &maps, &mlen) != 0)
		return NULL;
	if (entry)
		r = file_at(pid, maps, entry, cache_dir, ld, fd);
	if (!r && phdr)
		r = file_at(pid, maps, phdr, cache_dir, ld, fd);
	free(maps);
	return r;
}

char *program_of(long pid, const char *cache_dir, const struct loaders *ld, int *fd)
{
	char path[64];

	*fd = -1;
	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	if (!proc_runs_loader(pid, ld)) {
		*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		return read_exe(path);
	}
	char *p = program_from_auxv(pid, cache_dir, ld, fd);
	return p ? p : strdup("");
}

const char *cache_entry_source(const struct smaps *s, size_t i, const char *cache_dir, int *window)
{
	const char *path = s->map[i].path, *name = strrchr(path, '/');
	size_t n = strlen(path), wl = strlen(TEXTCACHE_WINDOW);
	char *end;

	*window = 0;
	if (!path_in_cache(path, cache_dir) || s->map[i].deleted)
		return NULL;
	*window = n > wl && !strcmp(path + n - wl, TEXTCACHE_WINDOW);
	uint64_t dev = strtoull(name + 1, &end, 16);
	if (*end != '.')
		return NULL;
	uint64_t ino = strtoull(end + 1, &end, 16);
	if (*end != '.')
		return NULL;
	for (size_t j = 0; j < s->n; j++) {
		const struct smaps_map *m = &s->map[j];
		if (j != i && m->inode == ino && ((uint64_t)m->maj << 32 | m->min) == dev && m->path[0] == '/' &&
		    !path_in_cache(m->path, cache_dir))
			return m->path;
	}
	return NULL;
}

uint64_t windows_huge_kb(const struct smaps *s, const char *cache_dir, const char **lib, unsigned max, unsigned *n)
{
	uint64_t kb = 0;
	int window;

	*n = 0;
	for (size_t i = 0; i < s->n; i++) {
		const char *src = cache_entry_source(s, i, cache_dir, &window);
		if (!window)
			continue;
		kb += smaps_huge_kb(&s->map[i]);
		if (*n < max)
			lib[(*n)++] = src;
	}
	return kb;
}

uint64_t program_huge_kb(const struct smaps *s, const char *prog, int fd, const char *cache_dir, const uint64_t *blocks_kb)
{
	char anon[PATH_MAX + 32], entry[PATH_MAX + TEXTCACHE_NAME_MAX] = "", name[TEXTCACHE_NAME_MAX];
	struct statx st;
	uint64_t kb = 0;

	snprintf(anon, sizeof(anon), "[anon:tiexec:%s]", prog);
	if (*cache_dir && fd >= 0 && statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) == 0 &&
	    textcache_name(&st, name, sizeof(name)))
		snprintf(entry, sizeof(entry), "%s/%s", cache_dir, name);
	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_map *m = &s->map[i];
		if (!smaps_is_exec(m))
			continue;
		int ours = !strcmp(m->path, prog) || !strcmp(m->path, anon) || (*entry && !strcmp(m->path, entry));
		/* A copy without a name (a kernel without CONFIG_ANON_VMA_NAME):
		 * anonymous text between mappings of the program's file. */
		if (!ours && !m->path[0] && pm_is_anon_text(m)) {
			long left, right;
			pm_neighbours(s, i, &left, &right);
			ours = (left >= 0 && !strcmp(s->map[left].path, prog)) ||
			       (right >= 0 && !strcmp(s->map[right].path, prog));
		}
		if (ours)
			kb += smaps_huge_kb(m) + (blocks_kb ? blocks_kb[i] : 0);
	}
	return kb;
}

uint64_t libs_huge_kb(const struct smaps *s, const char *prog, int fd, const char *cache_dir, const uint64_t *blocks_kb)
{
	uint64_t all = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_map *m = &s->map[i];
		if (smaps_is_exec(m) && strcmp(m->path, "[vdso]") && strcmp(m->path, "[vsyscall]"))
			all += smaps_huge_kb(m) + (blocks_kb ? blocks_kb[i] : 0);
	}
	uint64_t own = program_huge_kb(s, prog, fd, cache_dir, blocks_kb);
	return all > own ? all - own : 0;
}
