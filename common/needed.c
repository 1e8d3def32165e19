/* The shared libraries a program needs (see needed.h). */
#define _GNU_SOURCE
#include "needed.h"

#include "arch_elf.h"
#include "elfcheck.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trust.h"

#define MAX_OBJECTS 4096
#define MAX_DIRS 256

/* A list of strings, owned. */
struct strs {
	char **v;
	size_t n;
};

static void strs_add(struct strs *s, const char *x)
{
	char **v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!v || !(v[s->n] = strdup(x))) {
		perror("tiexec-warm");
		exit(3);
	}
	s->v = v;
	s->n++;
}

static int strs_has(const struct strs *s, const char *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], x))
			return 1;
	return 0;
}

static void strs_free(struct strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* What ld.so reads of an object's dynamic section. */
struct dyn {
	struct strs needed;
	char *rpath, *runpath;
};

/* Whether path is an object ld.so would load here: ELF, 64-bit, the
 * loader's machine (elf_check_ident). */
static int loadable(const char *path)
{
	unsigned char h[ELF_IDENT_BYTES];
	struct stat st;
	int fd = trust_open(path, NULL, &st); /* no FIFO, no device */
	int ok = fd >= 0 && pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) && elf_check_ident(h, sizeof(h)) == ELF_OK;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* The dynamic section of the object open at fd into *d (empty if none). */
static void read_dyn_fd(int fd, struct dyn *d)
{
	Elf *e;
	Elf_Scn *scn = NULL;

	memset(d, 0, sizeof(*d));
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !(data = elf_getdata(scn, NULL)))
			continue;
		GElf_Dyn dy;
		for (int i = 0; gelf_getdyn(data, i, &dy) && dy.d_tag != DT_NULL; i++) {
			const char *s = NULL;
			if (dy.d_tag == DT_NEEDED || dy.d_tag == DT_RPATH || dy.d_tag == DT_RUNPATH)
				s = elf_strptr(e, sh.sh_link, dy.d_un.d_val);
			if (!s)
				continue;
			if (dy.d_tag == DT_NEEDED && d->needed.n < 1024)
				strs_add(&d->needed, s);
			else if (dy.d_tag == DT_RPATH && !d->rpath)
				d->rpath = strdup(s);
			else if (dy.d_tag == DT_RUNPATH && !d->runpath)
				d->runpath = strdup(s);
		}
		break;
	}
	if (e)
		elf_end(e);
}

static int read_dyn(const char *path, struct dyn *d)
{
	struct stat st;
	int fd = trust_open(path, NULL, &st);

	memset(d, 0, sizeof(*d));
	if (fd < 0)
		return -1;
	read_dyn_fd(fd, d);
	close(fd);
	return 0;
}

static void dyn_free(struct dyn *d)
{
	strs_free(&d->needed);
	free(d->rpath);
	free(d->runpath);
}

int needed_musl(int fd)
{
	struct dyn d;
	int r = 0;

	read_dyn_fd(fd, &d);
	for (size_t i = 0; i < d.needed.n; i++)
		r |= !strcmp(d.needed.v[i], "libc.so") || !strncmp(d.needed.v[i], "libc.musl-", 10);
	dyn_free(&d);
	return r;
}

/* s with $ORIGIN and ${ORIGIN} replaced by origin; NULL (skip it) when
 * another $ token remains ($LIB, $PLATFORM) or it does not fit. */
static char *expand(const char *s, const char *origin)
{
	char out[PATH_MAX];
	size_t n = 0, ol = strlen(origin);

	while (*s) {
		size_t t = !strncmp(s, "${ORIGIN}", 9) ? 9 : !strncmp(s, "$ORIGIN", 7) ? 7 : 0;
		if (t == 7 && (s[7] == '_' || (s[7] >= 'A' && s[7] <= 'Z') || (s[7] >= 'a' && s[7] <= 'z') ||
			       (s[7] >= '0' && s[7] <= '9')))
			t = 0;
		if (!t && *s == '$')
			return NULL;
		if (n + (t ? ol : 1) >= sizeof(out))
			return NULL;
		if (t) {
			memcpy(out + n, origin, ol);
			n += ol;
			s += t;
		} else {
			out[n++] = *s++;
		}
	}
	out[n] = '\0';
	return strdup(out);
}

/* name in each directory of the ':'-separated list, first loadable one. */
static char *search_list(const char *list, const char *origin, const char *name)
{
	char *copy = strdup(list ? list : ""), *save = NULL, *found = NULL;

	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *d = expand(dir, origin), *p;
		if (d && asprintf(&p, "%s/%s", d, name) >= 0) {
			if (loadable(p))
				found = p;
			else
				free(p);
		}
		free(d);
	}
	free(copy);
	return found;
}

/* The directories of /etc/ld.so.conf and the files it includes, then the
 * default ones. */
static void conf_dirs(const char *file, int depth, struct strs *dirs)
{
	FILE *f = depth < 4 ? fopen(file, "re") : NULL;
	char line[PATH_MAX];

	while (f && fgets(line, sizeof(line), f) && dirs->n < MAX_DIRS) {
		char *s = line, *e;
		if ((e = strchr(s, '#')))
			*e = '\0';
		s += strspn(s, " \t");
		for (e = s + strlen(s); e > s && strchr(" \t\n", e[-1]);)
			*--e = '\0';
		if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
			char pat[PATH_MAX];
			s += 7 + strspn(s + 7, " \t");
			snprintf(pat, sizeof(pat), "%s%s", *s == '/' ? "" : "/etc/", s);
			glob_t g;
			if (glob(pat, 0, NULL, &g) == 0) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					conf_dirs(g.gl_pathv[i], depth + 1, dirs);
				globfree(&g);
			}
		} else if (*s == '/' && !strs_has(dirs, s)) {
			strs_add(dirs, s);
		}
	}
	if (f)
		fclose(f);
}

static char *dirname_of(const char *path)
{
	char *r = realpath(path, NULL), *slash;

	if (!r)
		return strdup(".");
	slash = strrchr(r, '/');
	if (slash == r)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	return r;
}

/* Where ld.so finds name for an object with these paths. */
static char *resolve(const char *name, const struct dyn *obj, const char *origin, const struct dyn *prog,
		     const char *prog_origin, const struct strs *dirs)
{
	char *p = NULL;

	if (strchr(name, '/')) {
		p = expand(name, origin);
		if (p && loadable(p))
			return p;
		free(p);
		return NULL;
	}
	if (!obj->runpath) {
		if (obj->rpath && (p = search_list(obj->rpath, origin, name)))
			return p;
		if (prog != obj && prog->rpath && !prog->runpath && (p = search_list(prog->rpath, prog_origin, name)))
			return p;
	}
	if (obj->runpath && (p = search_list(obj->runpath, origin, name)))
		return p;
	for (size_t i = 0; i < dirs->n; i++)
		if ((p = search_list(dirs->v[i], "/", name)))
			return p;
	return NULL;
}

/* The directories ld.so searches after an object's own paths:
 * /etc/ld.so.conf's (what ld.so.cache is built from), then its built-in
 * ones. */
static void search_dirs(struct strs *dirs)
{
	static const char *const defaults[] = {"/lib/" ARCH_MULTIARCH, "/usr/lib/" ARCH_MULTIARCH,
					       "/lib64", "/usr/lib64", "/lib", "/usr/lib"};

	conf_dirs("/etc/ld.so.conf", 0, dirs);
	for (size_t i = 0; i < sizeof(defaults) / sizeof(*defaults); i++)
		if (!strs_has(dirs, defaults[i]))
			strs_add(dirs, defaults[i]);
}

void needed_libs(const char *prog, int (*add)(void *ctx, const char *path), void *ctx)
{
	struct strs dirs = {0}, seen = {0}, queue = {0};
	struct dyn pd;

	search_dirs(&dirs);
	if (read_dyn(prog, &pd) < 0) {
		strs_free(&dirs);
		return;
	}
	char *porigin = dirname_of(prog);
	strs_add(&queue, prog);
	for (size_t q = 0; q < queue.n && q < MAX_OBJECTS; q++) {
		struct dyn d, *obj = &pd;
		if (q && read_dyn(queue.v[q], obj = &d) < 0)
			continue;
		char *origin = q ? dirname_of(queue.v[q]) : strdup(porigin);
		for (size_t i = 0; origin && i < obj->needed.n; i++) {
			char *p = resolve(obj->needed.v[i], obj, origin, &pd, porigin, &dirs);
			char *r = p ? realpath(p, NULL) : NULL;
			if (r && !strs_has(&seen, r)) {
				strs_add(&seen, r);
				if (add(ctx, p))
					strs_add(&queue, p);
			}
			free(r);
			free(p);
		}
		free(origin);
		if (q)
			dyn_free(&d);
	}
	free(porigin);
	dyn_free(&pd);
	strs_free(&dirs);
	strs_free(&seen);
	strs_free(&queue);
}
