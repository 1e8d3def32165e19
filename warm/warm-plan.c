/* Plan records (common/planrec.h): for each dynamically linked program
 * among the targets, the walk of its libraries that the loader's plan
 * makes at each start (interp/libplan.c), made once here and kept in the
 * text cache, so that a start checks each library by one statx instead
 * of reading it.  The walk is the loader's own code (common/libwalk.c),
 * run on the files as root: it reads them and executes nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libwalk.h"
#include "planrec.h"
#include "textentry.h"
#include "trust.h"
#include "warm.h"

/* ld.so at path: its identity into *st and its glibc's minor version
 * into *minor (glibc_minor: 0 where it says none).  Whether it could be
 * read. */
static int ldso(const char *path, struct statx *st, unsigned *minor)
{
	static struct elf e;
	const char *why;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int ok = fd >= 0 && statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, st) == 0 && S_ISREG(st->stx_mode) &&
		 st->stx_size && read_elf(fd, &e, &why) == 0;
	void *m = ok ? mmap(NULL, st->stx_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;

	if (fd >= 0)
		close(fd);
	if (m == MAP_FAILED)
		return 0;
	*minor = glibc_minor(e.ph, e.eh.e_phnum < 64 ? e.eh.e_phnum : 64, m, 1, st->stx_size);
	munmap(m, st->stx_size);
	return 1;
}

/* The walk of the libraries of the program open at fd (path, headers e,
 * ld.so at interp) into w, each library's identity with it: whether
 * every one could be looked at. */
static int walk_program(struct walk *w, int fd, const char *path, const struct elf *e, const char *interp)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	libwalk_start(w, fd, e->ph, e->eh.e_phnum < 64 ? e->eh.e_phnum : 64, interp, dirname(dir));
	for (const struct walk_lib *l; (l = libwalk_next(w));)
		if (l->fd >= 0)
			close(l->fd);
	for (unsigned i = 0; i < w->n; i++) {
		struct statx st;
		if (statx(AT_FDCWD, walk_str(w, w->lib[i].path), 0, STATX_BASIC_STATS, &st) < 0)
			return 0;
		walk_id_of(&st, &w->lib[i].id);
	}
	return 1;
}

/* Says what became of the record of t (-v, or where it failed). */
static void say_record(const struct warm *w, const struct target *t, const struct walk *wk, enum te_result r)
{
	static const char *const word[] = { [TE_MADE] = "made now", [TE_PRESENT] = "present" };

	if (r == TE_FAILED || !w->opt.verbose || w->opt.json)
		return;
	printf("%s: the plan record of its %u libraries in ld.so's order in the text cache (%s): the loader checks them "
	       "instead of reading each\n",
	       t->path, wk->n, word[r]);
}

/* The plan record of target t, where it is a dynamically linked program
 * that needs a library and the text cache is in use. */
static void plan_record(struct warm *w, const struct target *t)
{
	static struct elf e;
	static struct walk wk;
	static char rec[PLANREC_MAX];
	char interp[PATH_MAX], what[PATH_MAX + 128];
	struct stat st, want = { .st_dev = t->dev, .st_ino = t->ino };
	struct statx ist;
	const char *why, *step = "";
	unsigned minor = 0;
	size_t n;
	int fd = trust_open(t->path, &want, &st);

	if (fd < 0)
		return; /* said by do_target */
	if (read_elf(fd, &e, &why) == 0 && interp_path(fd, &e, interp, sizeof(interp)) &&
	    ldso(interp, &ist, &minor) && walk_program(&wk, fd, t->path, &e, interp) && wk.n &&
	    (n = planrec_encode(&wk, &ist, minor, wk.origin, rec, sizeof(rec))) && cache_ready(w)) {
		enum te_result r = textentry_plan(w->cache.dir, t->path, fd, rec, n, &step);
		if (r == TE_FAILED) {
			snprintf(what, sizeof(what), "cannot make its plan record in '%s': %s", w->cache.dir, step);
			fail(w, t->path, what, errno);
		}
		say_record(w, t, &wk, r);
	}
	close(fd);
}

void plan_records(struct warm *w)
{
	if (w->cache.off || w->opt.check)
		return;
	for (size_t i = 0; i < w->ntargets; i++)
		if (!w->targets[i].planned && !w->targets[i].window) /* a program's library */
			plan_record(w, &w->targets[i]);
}
