/* warm.conf: a path or glob per line, "stamped DIR", and the text cache's
 * lines; each entry read only if root alone could have changed it. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mark.h"
#include "needed.h"
#include "trust.h"
#include "warm.h"

/* A program stamped by tiexec-stamp: the marker bit in its first program
 * header's p_flags (common/mark.h). */
static int stamped(const char *path)
{
	unsigned char id[4], b;
	struct stat st;
	int fd = trust_open(path, NULL, &st);
	int yes = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, id, 4, 0) == 4 && !memcmp(id, ELFMAG, SELFMAG) && pread(fd, &b, 1, TIEXEC_MARK_BYTE) == 1)
		yes = (b & (TIEXEC_MARK_FLAG >> 16)) != 0;
	close(fd);
	return yes;
}

/* A library a stamped program needs: a target if it passes the rule
 * (then its own libraries are looked at too). */
static int add_library(void *ctx, const char *path)
{
	return add_file(ctx, path, 0) != NULL;
}

static void add_stamped_tree(struct warm *w, const char *dir)
{
	size_t first = w->ntargets;

	add_path(w, dir, 0, stamped);
	for (size_t i = first, end = w->ntargets; i < end; i++)
		needed_libs(w->targets[i].path, add_library, w);
}

/* Why someone other than root (or whoever runs us) could change what path
 * names (trust.h), or NULL; a path that cannot be resolved is reported
 * where it is read. */
static const char *changeable(const char *path, char *why, size_t n)
{
	char *r = realpath(path, NULL);
	const char *w = r ? trust_changeable(r, why, n) : NULL;

	free(r);
	return w;
}

/* Whether an entry of the configuration may be read: else says why. */
static int trusted(struct warm *w, const char *conf, unsigned lineno, const char *path)
{
	char why[PATH_MAX + 64];

	if (!changeable(path, why, sizeof(why)))
		return 1;
	fprintf(stderr, "tiexec-warm: '%s': line %u: '%s' left out: %s, not only by root\n", conf, lineno, path,
		why);
	worse(w, ST_FAILED);
	return 0;
}

/* "cache off", "cache DIR", "cache-size SIZE" (a tmpfs size=: 512m, 10%):
 * the shared text w->cache; "windows off" (or on): no window entries
 * (textcache.h).  Returns whether s was such a line. */
static int cache_line(struct warm *w, const char *conf, unsigned lineno, char *s)
{
	char *v;

	if (!strncmp(s, "windows", 7) && (s[7] == ' ' || s[7] == '\t')) {
		for (v = s + 7; *v == ' ' || *v == '\t'; v++)
			;
		if (!strcmp(v, "off") || !strcmp(v, "on")) {
			w->windows_off = v[1] == 'f';
		} else {
			fprintf(stderr, "tiexec-warm: '%s': line %u: windows wants 'off' or 'on'\n", conf, lineno);
			worse(w, ST_FAILED);
		}
		return 1;
	}
	if (!strncmp(s, "cache-size", 10) && (s[10] == ' ' || s[10] == '\t')) {
		for (v = s + 10; *v == ' ' || *v == '\t'; v++)
			;
		if (strspn(v, "0123456789kmgKMG%") != strlen(v) || !*v || strlen(v) >= sizeof(w->cache.size)) {
			fprintf(stderr, "tiexec-warm: '%s': line %u: cache-size wants a size such as 512m or 10%%\n", conf,
				lineno);
			worse(w, ST_FAILED);
		} else {
			strcpy(w->cache.size, v);
		}
		return 1;
	}
	if (strncmp(s, "cache", 5) || (s[5] != ' ' && s[5] != '\t'))
		return 0;
	for (v = s + 5; *v == ' ' || *v == '\t'; v++)
		;
	if (!strcmp(v, "off")) {
		w->cache.off = 1;
	} else if (*v == '/' && strlen(v) < sizeof(w->cache.dir_buf)) {
		strcpy(w->cache.dir_buf, v);
		w->cache.dir = w->cache.dir_buf;
		w->cache.off = 0;
	} else {
		fprintf(stderr, "tiexec-warm: '%s': line %u: cache wants 'off' or an absolute directory\n", conf, lineno);
		worse(w, ST_FAILED);
	}
	return 1;
}

/* Lines: a path or a glob (files or directories); "stamped DIR": every
 * program tiexec-stamp marked under DIR and the libraries it needs; '#'
 * starts a comment. */
int read_config(struct warm *w, const char *path, int must_exist)
{
	char line[4096], why[PATH_MAX + 64];
	unsigned lineno = 0;
	struct stat st, want;
	/* Resolved once, checked, and read through the descriptor of what was
	 * checked. */
	char *r = realpath(path, NULL);
	const char *refused = r && lstat(r, &want) == 0 ? trust_changeable(r, why, sizeof(why)) : NULL;
	int fd = !r || refused ? -1 : trust_open(r, &want, &st);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;

	free(r);
	if (refused) {
		fprintf(stderr, "tiexec-warm: '%s': refused: %s, not only by root\n", path, why);
		worse(w, ST_FAILED);
		return -1;
	}
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		fail(w, path, errno == EINVAL ? "cannot read the configuration: not a regular file" : "cannot read the configuration",
		     errno == EINVAL ? 0 : errno);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char *s = line, *e;
		if ((e = strchr(s, '#')))
			*e = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		for (e = s + strlen(s); e > s && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		if (!*s)
			continue;
		if (cache_line(w, path, lineno, s))
			continue;
		if (!strncmp(s, "stamped", 7) && (s[7] == ' ' || s[7] == '\t')) {
			for (s += 7; *s == ' ' || *s == '\t'; s++)
				;
			if (trusted(w, path, lineno, s))
				add_stamped_tree(w, s);
			continue;
		}
		if (*s != '/') {
			fprintf(stderr, "tiexec-warm: '%s': line %u: not an absolute path or 'stamped DIR'\n", path,
				lineno);
			worse(w, ST_FAILED);
			continue;
		}
		glob_t g;
		if (glob(s, GLOB_NOSORT, NULL, &g) == 0) {
			for (size_t i = 0; i < g.gl_pathc; i++)
				if (trusted(w, path, lineno, g.gl_pathv[i]))
					add_path(w, g.gl_pathv[i], 0, NULL);
			globfree(&g);
		} else if (w->opt.verbose) {
			printf("%s: line %u: nothing matches '%s'\n", path, lineno, s);
		}
	}
	fclose(f);
	return 0;
}

