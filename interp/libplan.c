/* The library plan stage: where ld.so will map the libraries it loads,
 * decided before ld.so runs (ldplan.h).
 *
 * Stage contract.  Reads the load section (prog and interp mapped, the
 * settings, hp) and the environment.  Writes walk, ldp, ldp_req and
 * ldp_path: the requests ld.so will make, which of them to place (their
 * library's start wanted at a residue modulo 2 MiB), or ldp.n 0.  Opens
 * each library ld.so will load, to read its headers (libwalk.c).  The
 * final stage holds the plan just before ld.so runs (ldplan_hold); the
 * stage after ld.so gives the holds back and says (-v) which planned
 * library missed.  Never exits, never prints.
 *
 * Planned: every library linked with p_align above the page (every arm64
 * library GNU ld links) whose text holds a whole 2 MiB piece, and, on a
 * kernel that does not align file mappings (before 5.18), every
 * page-aligned one too (x86-64's, placed at random there).  glibc maps
 * it 64 KiB-aligned in a reservation of its own, 2 MiB-aligned about one
 * start in 32; its alignment forgives ld.so's small requests the plan did
 * not foresee (the pages of its malloc), which the plan aims to absorb.
 * Requests: ld.so's first malloc page, ld.so.cache before the first
 * library it looks up there (from glibc 2.44, before that page: ld.so's
 * version banner says which), and each library's mapping in ld.so's
 * order.
 * From 5.18 the kernel places a page-aligned file mapping of 2 MiB or
 * more itself (2 MiB-aligned, after asking 2 MiB more than its length):
 * such a library is replayed from its own file, never a target, and the
 * holds keep out of what its placement asks (ldplan.c).  Where the walk or
 * ld.so.cache differs from ld.so, the plan misses, which costs only the
 * placement. */
#include <linux/auxvec.h>

#include "exec.h"
#include "fsfolio.h"
#include "planrec.h"
#include "proc.h"
#include "sys.h"
#include "textcache.h"

#define RTLD_MALLOC_PAGE 8192 /* ld.so's first minimal-malloc mapping */

/* Whether a plan can be made and kept: glibc's ld.so (the preinit hook
 * is glibc's; musl maps a library at its reservation, not aligned up),
 * the stage after it gives the holds back, and ld.so loads what the walk
 * finds, in its order (no preload, no audit module; LD_LIBRARY_PATH would
 * move where it finds them). */
static int plannable(const struct exec *ex)
{
	return ex->hp.kind == HOOK_PREINIT && ex->opt.libs && ex->opt.strategy != ST_OFF && !ex->ld_audit &&
	       !env_get(ex->s.envp, "LD_PRELOAD") && !env_get(ex->s.envp, "LD_LIBRARY_PATH");
}

/* $ORIGIN for the program's search path, into dir (PATH_MAX): the
 * directory of its open file's path, which /proc/self/exe gives ld.so
 * (through a symbolic link, the link's target's).  Whether there is one. */
static int origin_of(const struct exec *ex, char *dir)
{
	long n = fd_link(ex->prog.fd, dir, PATH_MAX);
	size_t dl = n > 0 ? (size_t)n : 0;

	if (n <= 0 || dir[0] != '/')
		return 0;
	while (dl > 1 && dir[dl - 1] != '/')
		dl--;
	dir[dl > 1 ? dl - 1 : 1] = '\0';
	return 1;
}

/* Whether this kernel places a file mapping of 2 MiB or more 2 MiB-aligned
 * (thp_get_unmapped_area for every file, not only DAX: Linux 5.18), where
 * an anonymous stand-in would land elsewhere. */
static int kernel_aligns_files(void)
{
	unsigned major, minor;

	kernel_release(&major, &minor);
	return major == 0 || major > 5 || (major == 5 && minor >= 18);
}

/* Whether library l gets a window of its own: a 2 MiB-aligned window that
 * holds its whole read-only image and nothing else, so that one 2 MiB
 * page can (libs.c).  glibc's libc only, so far: the library most
 * programs spend most of their time in of those with no whole 2 MiB
 * piece of text (15.7% of clang's samples), and whose read-only image
 * (1.81 MiB on x86-64, 1.61 on arm64) fits one, at the start
 * textcache_window_at gives: in a reservation (p_align above the page,
 * arm64) that start is the reservation's own, so that ld.so gives back
 * no head where the window's hold is (ldplan.c).  And only where
 * the text cache holds its window entry (cache: the cache's directory, or
 * NULL), which the stage after ld.so maps (libwindow.c checks it there):
 * without one a window gains nothing.  NULL when it gets one; "" when it
 * is no such library, windows are off or there is no cache here (nothing
 * to say); else why not. */
static const char *window_why(const struct walk *w, const struct walk_lib *l, const char *cache)
{
	struct statx st;

	if (!cache || l->req.target || !textcache_windowed(walk_str(w, l->path)))
		return "";
	if (!l->win_at)
		return sys_faccessat(TX_AT_FDCWD, cache, 0) != 0 ? "" /* no cache here */
		       : !l->ro_end ? "its read-only image is not its file's first bytes within 2 MiB"
				    : "ld.so maps it in a reservation (p_align above the page) whose writable segment is too "
				      "close for a window";
	/* A record's library was just checked against its identity. */
	if (w->rec)
		walk_id_statx(&l->id, &st);
	else if (sys_statx(TX_AT_FDCWD, walk_str(w, l->path), 0, STATX_BASIC_STATS, &st) < 0)
		return "";
	if (textcache_window_present(cache, &st))
		return NULL;
	return sys_faccessat(TX_AT_FDCWD, cache, 0) != 0 ? "" : "no window entry in the text cache (tiexec-warm PROG makes one)";
}

/* The minor version of ld.so's glibc: the plan record's, else from its
 * banner in its mapped read-only data. */
static unsigned ldso_minor(const struct exec *ex)
{
	const struct image *ld = &ex->interp;

	if (ex->walk.rec)
		return ex->walk.glibc_minor;
	return glibc_minor(ld->ph, ld->eh.e_phnum < TX_PH_MAX ? ld->eh.e_phnum : TX_PH_MAX, (const char *)(uintptr_t)ld->bias,
			   0, UINT64_MAX);
}

/* ld.so.cache's mapping, when it is there, appended to the requests q
 * (k of them): how many then. */
static unsigned ld_cache(struct ldplan_req *q, unsigned k)
{
	struct statx sx;

	if (sys_statx(TX_AT_FDCWD, "/etc/ld.so.cache", 0, STATX_SIZE, &sx) == 0 && sx.stx_size)
		q[k++] = (struct ldplan_req){ .len = sx.stx_size };
	return k;
}

/* glibc 2.44's ld.so maps ld.so.cache as it starts, before the first
 * page of its malloc (even with no name to look up there); before 2.44
 * (2.36, 2.41 and 2.43 measured) when it first looks a name up there.
 * The n requests, in the older order (the cache's at ci; -1: none made
 * yet, -2: there is no ld.so.cache), reordered so: how many then. */
static unsigned cache_first(struct exec *ex, unsigned n, int ci)
{
	struct ldplan_req *q = ex->ldp_req, c;
	unsigned at = ci >= 0 ? (unsigned)ci : n;

	if (ci == -2)
		return n;
	if (ci < 0) {
		if (n + 1 > LDPLAN_MAX_REQS || ld_cache(q, n) == n)
			return n; /* no room, or no cache: as before */
		n++;
	}
	c = q[at];
	memmove(&q[1], &q[0], at * sizeof(q[0]));
	memmove(&ex->ldp_path[1], &ex->ldp_path[0], at * sizeof(ex->ldp_path[0]));
	q[0] = c;
	return n;
}

/* The requests for the libraries the walk finds into ex->ldp_req
 * (LDPLAN_MAX_REQS), their paths' pool offsets into ex->ldp_path: how
 * many, up to the last target (0: no target); *all: how many were made
 * (the files of those past the last target are the caller's to close).
 * A page-aligned library of 2 MiB or more is mapped by ld.so from its
 * file: on a kernel that aligns such mappings the kernel places it
 * (2 MiB-aligned, congruent where its text is), and its request is the
 * library's own file, open (ldplan_req.file); on an older one (5.10) it
 * lands where an anonymous stand-in does, at random, and is planned like
 * the rest.  With windows (wdir: the text cache's directory, else NULL),
 * libc is a target too: its read-only image ending on a 2 MiB boundary,
 * the rest of that 2 MiB below it held; where it cannot be,
 * ex->window_why says why. */
static unsigned requests(struct exec *ex, const char *wdir, unsigned *all)
{
	struct walk *w = &ex->walk;
	struct ldplan_req *q = ex->ldp_req;
	const struct walk_lib *l;
	unsigned k = 0, last = 0;
	int cache = -1, aligns = kernel_aligns_files(); /* cache: as cache_first takes it */

	ex->window_why = NULL;
	q[k++] = (struct ldplan_req){ .len = RTLD_MALLOC_PAGE };
	while (k + 2 <= LDPLAN_MAX_REQS && (l = w->rec ? planrec_next(w) : libwalk_next(w))) {
		int fd = l->fd;
		if (fd >= 0 && !aligns) {
			sys_close(fd);
			fd = -1;
		}
		if (l->how == 2 && cache == -1) {
			unsigned c0 = k;
			k = ld_cache(q, k);
			cache = k > c0 ? (int)c0 : -2;
		}
		ex->ldp_path[k] = l->path;
		q[k] = l->req;
		if (fd >= 0) {
			/* The kernel places it (2 MiB-aligned): replayed from
			 * the file itself, never a target. */
			q[k++] = (struct ldplan_req){ .len = l->req.len, .file = 1, .fd = fd };
			continue;
		}
		const char *why = window_why(w, l, wdir);
		if (!why) {
			q[k].residue = l->win_at;
			q[k].below = l->win_at;
			q[k].target = 1;
		} else if (*why && !ex->window_why) {
			ex->window_why = why;
			ex->window_lib = l->path;
		}
		if (q[k++].target)
			last = k;
	}
	/* Asked only where there is a target: a scan of ld.so's data. */
	if (last && ldso_minor(ex) >= 44) {
		k = cache_first(ex, k, cache);
		for (unsigned j = last = 0; j < k; j++)
			if (q[j].target)
				last = j + 1;
	}
	*all = k;
	return last;
}

/* The walk from tiexec-warm's plan record for this program, where the
 * text cache holds one that serves (planrec.h): whether it does.  origin:
 * the program's directory, asked only where its search path says
 * $ORIGIN (*have: whether asked and found). */
static int from_record(struct exec *ex, char *origin, int *have)
{
	char name[TEXTCACHE_NAME_MAX + sizeof(PLANREC_SUFFIX)];
	const char *why;
	size_t n;

	if (!ex->cache_dir || !(n = textcache_name(&ex->prog.st, name, TEXTCACHE_NAME_MAX)))
		return 0;
	memcpy(name + n, PLANREC_SUFFIX, sizeof(PLANREC_SUFFIX));
	int fd = textcache_open_with(ex->cache_dir, &ex->cache_trust, name, &why);
	if (fd < 0) {
		if (why && sys_faccessat(TX_AT_FDCWD, ex->cache_dir, 0) == 0)
			ex->ldp_rec_why = why; /* one that is not trusted */
		return 0;
	}
	why = planrec_load(fd, &ex->walk, &ex->interp.st, kernel_aligns_files());
	sys_close(fd);
	if (!why && ex->walk.origin_used && (!(*have = origin_of(ex, origin)) || !tx_streq(origin, ex->walk.origin)))
		why = "made for the program in another directory (its search path says $ORIGIN)";
	ex->ldp_rec_why = why;
	return !why;
}

/* Closes the files of requests from to to (kernel-placed libraries). */
static void close_files(struct exec *ex, unsigned from, unsigned to)
{
	for (unsigned k = from; k < to; k++)
		if (ex->ldp_req[k].file)
			sys_close(ex->ldp_req[k].fd);
}

/* The walk of the program's libraries from their files (origin: its
 * directory, where *have says it was had already). */
static void walk_files(struct exec *ex, char *origin, int *have)
{
	const struct image *p = &ex->prog;

	if (!*have && !(*have = origin_of(ex, origin)))
		memcpy(origin, ".", 2);
	libwalk_start(&ex->walk, p->fd, p->ph, p->eh.e_phnum < TX_PH_MAX ? p->eh.e_phnum : TX_PH_MAX, ex->interp.path,
		      origin);
}

void libplan_stage(struct exec *ex)
{
	char origin[PATH_MAX];
	const char *wdir;
	unsigned all = 0;
	int have = 0;

	ex->ldp.n = 0;
	ex->window_why = NULL;
	ex->ldp_src = PLAN_WALKED;
	ex->ldp_rec_why = NULL;
	if (!plannable(ex))
		return;
	uint64_t t0 = now_ns();
	wdir = ex->opt.windows ? ex->cache_dir : NULL;
	if (from_record(ex, origin, &have))
		ex->ldp_src = PLAN_RECORD;
	else
		walk_files(ex, origin, &have);
	ex->ldp.req = ex->ldp_req;
	ex->ldp.n = requests(ex, wdir, &all);
	if (ex->walk.stale) {
		/* A library changed since tiexec-warm made the record. */
		close_files(ex, 0, all);
		ex->ldp_src = PLAN_RECORD_STALE;
		walk_files(ex, origin, &have);
		ex->ldp.n = requests(ex, wdir, &all);
	}
	close_files(ex, ex->ldp.n, all);
	ex->ldp_ns = now_ns() - t0;
}
