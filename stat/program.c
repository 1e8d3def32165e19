/* Which program a process runs (program.h). */
#define _GNU_SOURCE
#include "program.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mapsline.h"
#include "perfmap.h"
#include "procfs.h"
#include "textcache.h"

int path_in_cache(const char *path, const char *cache_dir)
{
	size_t n = strlen(cache_dir);

	return n && !strncmp(path, cache_dir, n) && path[n] == '/';
}

/* The file mapped at addr in the process (its maps text), malloc'ed, or
 * NULL: a file, not the loader and not a text cache entry -- tiexec's copy
 * of the program's text is named after the program it copies. */
static char *file_at(const char *maps, uint64_t addr, const char *cache_dir)
{
	for (const char *l = maps; *l;) {
		const char *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l) : strlen(l);
		struct maps_line m;
		if (maps_line(l, len, &m) && m.path_len && addr >= m.lo && addr < m.hi) {
			char *p = strndup(m.path, m.path_len), *r = NULL;
			if (p && !strncmp(p, "[anon:tiexec:", 13) && p[strlen(p) - 1] == ']')
				r = strndup(p + 13, strlen(p) - 14);
			else if (p && p[0] == '/' && !path_in_cache(p, cache_dir) && !exe_is_loader(p))
				r = strdup(p);
			free(p);
			return r;
		}
		l += len + (eol != NULL);
	}
	return NULL;
}

/* The program, from the process's aux vector: the file mapped where its
 * entry point (AT_ENTRY) or its program headers (AT_PHDR) are.  tiexec
 * gives the program the aux vector of a direct exec, and nothing the
 * program does to its argv or environment (a process title) or a fork
 * changes it.  malloc'ed, or NULL. */
static char *program_from_auxv(long pid, const char *cache_dir)
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
		r = file_at(maps, entry, cache_dir);
	if (!r && phdr)
		r = file_at(maps, phdr, cache_dir);
	free(maps);
	return r;
}

char *program_of(long pid, const char *cache_dir)
{
	char path[64], *exe, *env, *aux;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	exe = read_exe(path);
	if (!exe_is_loader(exe))
		return exe;
	if ((aux = program_from_auxv(pid, cache_dir))) {
		free(exe);
		return aux;
	}
	snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
	if (read_all(path, &env, &len) != 0)
		return exe;
	/* TIEXEC_EXE=PID:/absolute/path, for this PID (a child's is stale). */
	char want[32];
	int wn = snprintf(want, sizeof(want), "TIEXEC_EXE=%ld:", pid);
	for (size_t i = 0; i < len; i += strlen(env + i) + 1)
		if (!strncmp(env + i, want, (size_t)wn)) {
			free(exe);
			exe = strdup(env + i + wn);
			break;
		}
	free(env);
	return exe;
}

uint64_t program_huge_kb(const struct smaps *s, const char *prog, const char *cache_dir, const uint64_t *blocks_kb)
{
	char anon[PATH_MAX + 32], entry[PATH_MAX + TEXTCACHE_NAME_MAX] = "", name[TEXTCACHE_NAME_MAX];
	struct statx st;
	uint64_t kb = 0;

	snprintf(anon, sizeof(anon), "[anon:tiexec:%s]", prog);
	if (*cache_dir && statx(AT_FDCWD, prog, 0, STATX_BASIC_STATS, &st) == 0 &&
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
