/* The files tiexec-warm looks at, each once (by device and inode), each
 * checked by the ownership rule (trust.h); and which processes map them. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mapsline.h"
#include "textcache.h"
#include "needed.h"
#include "trust.h"
#include "warm.h"

/* Adds the file path names (resolved, and checked: trust.h).  Returns
 * its target (new or not), or NULL. */
struct target *add_file(struct warm *w, const char *path, int named)
{
	char why[PATH_MAX + 64];
	struct stat st;
	char *r = realpath(path, NULL);

	if (!r || lstat(r, &st) < 0) {
		fail(w, path, "cannot read", errno);
		free(r);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		if (named)
			printf("%s: skipped: not a regular file\n", path);
		free(r);
		return NULL;
	}
	if (trust_changeable(r, why, sizeof(why))) {
		untrusted(w, r, why);
		free(r);
		return NULL;
	}
	for (size_t i = 0; i < w->ntargets; i++)
		if (w->targets[i].dev == st.st_dev && w->targets[i].ino == st.st_ino) {
			w->targets[i].named |= named;
			free(r);
			return &w->targets[i];
		}
	struct target *t = realloc(w->targets, (w->ntargets + 1) * sizeof(*t));
	if (!t) {
		perror("tiexec-warm");
		exit(ST_FAILED);
	}
	w->targets = t;
	t += w->ntargets++;
	memset(t, 0, sizeof(*t));
	t->path = r;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->named = named;
	return t;
}

/* The ELF headers of the file at path into e: whether read. */
static int headers(const char *path, struct elf *e)
{
	const char *why;
	struct stat st;
	int fd = trust_open(path, NULL, &st);
	int ok = fd >= 0 && read_elf(fd, e, &why) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* A library the loader's plan places (a reservation of its own:
 * reserved_library): a target, marked planned; or one it gives a window
 * (textcache.h): a target marked window.  Its own libraries are looked at
 * too. */
static int add_planned(void *ctx, const char *path)
{
	static struct elf e;
	const struct warm *w = ctx;
	struct target *t;

	if (!headers(path, &e))
		return 1;
	if (reserved_library(&e) && (t = add_file(ctx, path, 0)))
		t->planned = 1;
	else if (!w->windows_off && !w->cache.off && textcache_windowed(path) && textcache_window_at(e.ph, e.eh.e_phnum) &&
		 (t = add_file(ctx, path, 0)))
		t->window = 1;
	return 1;
}

/* The interpreter at path (PT_INTERP) of a program: a target marked
 * window, where its read-only image fits one (textcache_window_at): the
 * loader maps the interpreter itself, and places it so that its window
 * entry serves (interp/load.c). */
static void add_interp_window(struct warm *w, const char *path)
{
	static struct elf e;
	struct target *t;
	char *r = realpath(path, NULL); /* /lib64: a symbolic link on Debian */

	if (r && !w->windows_off && !w->cache.off && headers(r, &e) && textcache_window_end(e.ph, e.eh.e_phnum) &&
	    textcache_window_at(e.ph, e.eh.e_phnum) && (t = add_file(w, r, 0)))
		t->window = 1;
	free(r);
}

/* The interpreter path (PT_INTERP) of the program open at fd with
 * headers e into path (n bytes): whether it has one. */
int interp_path(int fd, const struct elf *e, char *path, size_t n)
{
	for (unsigned i = 0; i < e->eh.e_phnum && i < 64; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type != PT_INTERP)
			continue;
		if (p->p_filesz < 2 || p->p_filesz > n || pread(fd, path, p->p_filesz, (off_t)p->p_offset) != (ssize_t)p->p_filesz)
			return 0;
		path[p->p_filesz - 1] = '\0';
		return path[0] == '/';
	}
	return 0;
}

/* The libraries of every dynamically linked program among the targets
 * whose placement the loader plans before ld.so (interp/libplan.c: p_align
 * above the page, and libc's window): targets too, marked planned or
 * window, so that their entries serve each start of the program.  A library planned for one program
 * and not for another (after a large page-aligned one, where the plan
 * stops) still gets its entry. */
void add_planned_libraries(struct warm *w)
{
	static struct elf e;

	for (size_t i = 0, n = w->ntargets; i < n; i++) {
		char interp[PATH_MAX];
		const char *why;
		struct stat st;
		int fd = trust_open(w->targets[i].path, NULL, &st);
		int program = fd >= 0 && read_elf(fd, &e, &why) == 0 && interp_path(fd, &e, interp, sizeof(interp));
		if (fd >= 0)
			close(fd);
		char *prog = program ? strdup(w->targets[i].path) : NULL; /* add_file moves the targets */
		if (prog) {
			needed_libs(prog, add_planned, w);
			add_interp_window(w, interp);
		}
		free(prog);
	}
}

static void add_tree(struct warm *w, const char *path, int named, int (*want)(const char *));

/* A file, or every file under a directory (symbolic links inside a
 * directory are followed to files, not to directories: no loops). */
void add_path(struct warm *w, const char *path, int named, int (*want)(const char *))
{
	struct stat st;

	if (stat(path, &st) < 0) {
		fail(w, path, "cannot read", errno);
		return;
	}
	if (S_ISDIR(st.st_mode))
		add_tree(w, path, named, want);
	else if (!want || want(path))
		add_file(w, path, named);
}

/* Every file under the directory path, each checked (add_file); a
 * directory someone else could change is not looked into. */
static void add_tree(struct warm *w, const char *path, int named, int (*want)(const char *))
{
	char why[PATH_MAX + 64];
	char *r = realpath(path, NULL);
	const char *refused = r ? trust_changeable(r, why, sizeof(why)) : NULL;

	if (refused) {
		untrusted(w, r, refused);
		free(r);
		return;
	}
	DIR *d = r ? opendir(r) : NULL;
	struct dirent *e;

	if (!d) {
		fail(w, path, "cannot read the directory", errno);
		free(r);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p;
		if (asprintf(&p, "%s/%s", r[1] ? r : "", e->d_name) < 0)
			continue;
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			add_tree(w, p, 0, want);
		else if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && (!want || want(p)))
			add_file(w, p, 0);
		free(p);
	}
	closedir(d);
	free(r);
	(void)named;
}

static void scan_maps_of(struct warm *w, int pid)
{
	char path[64], line[4096];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");

	if (!f)
		return; /* gone, or not ours to read */
	while (fgets(line, sizeof(line), f)) {
		struct maps_line m;
		if (!maps_line(line, strcspn(line, "\n"), &m) || !m.ino)
			continue;
		for (size_t i = 0; i < w->ntargets; i++) {
			struct target *t = &w->targets[i];
			if (t->ino != m.ino || t->dev != makedev(m.maj, m.min))
				continue;
			struct use *u = realloc(t->uses, (t->nuses + 1) * sizeof(*u));
			if (!u)
				break;
			t->uses = u;
			t->uses[t->nuses++] =
				(struct use){ pid, m.off, m.off + (m.hi - m.lo), m.perms[1] == 'w' && m.perms[3] == 's' };
		}
	}
	fclose(f);
}

void scan_maps(struct warm *w)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int self = getpid();

	if (!d)
		return;
	while ((e = readdir(d))) {
		int pid = atoi(e->d_name);
		if (pid > 0 && pid != self)
			scan_maps_of(w, pid);
	}
	closedir(d);
}

