/* The library plan after ld.so (see plandone.h). */
#include "plandone.h"

#include "image.h"
#include "libwindow.h"
#include "probes.h"
#include "proc.h"
#include "report.h"

/* The lib probe for a window target, library lib: its read-only image
 * (image bytes) on one 2 MiB page, or why it is not (missed). */
static void probe_window(const struct exec *ex, const char *lib, uint64_t image, const char *why)
{
	const char *path = ex->prog.path;
	uint64_t on = why ? 0 : image, none = 0;
	long planned = why ? TX_PLAN_MISSED : TX_PLAN_WINDOW;

	__asm__("" : "+r"(path));
	TX_PROBE(lib, path, lib, image, on, none, none, none, why, on, planned);
	(void)path, (void)lib, (void)image, (void)on, (void)none, (void)why, (void)planned;
}

/* -v: what planning cost this start, by the loader's own clock (libplan's
 * walk of the libraries and the final stage's replays and holds). */
static void say_plan_cost(const struct exec *ex, unsigned targets)
{
	struct msg m;

	msg_head(&m, ex->path);
	msg_str(&m, "libraries planned before ld.so: ");
	msg_u64(&m, ex->ldp.n);
	msg_str(&m, " requests replayed, ");
	msg_u64(&m, ex->ldp_held > 0 ? (uint64_t)ex->ldp_held : 0);
	msg_str(&m, " of ");
	msg_u64(&m, targets);
	msg_str(&m, targets == 1 ? " target held where it is wanted, in " : " targets held where they are wanted, in ");
	msg_u64(&m, (ex->ldp_ns + 500) / 1000);
	msg_str(&m, ex->ldp_src == PLAN_RECORD ? " \xc2\xb5s (ld.so's libraries from tiexec-warm's plan record)"
		    : ex->ldp_src == PLAN_RECORD_STALE ? " \xc2\xb5s (ld.so's libraries read from their files: one changed "
							"since tiexec-warm's plan record)"
							: " \xc2\xb5s (ld.so's libraries read from their files");
	if (ex->ldp_src == PLAN_WALKED) {
		msg_str(&m, ex->ldp_rec_why ? "; tiexec-warm's plan record not used: " : "");
		msg_str(&m, ex->ldp_rec_why ? ex->ldp_rec_why : "");
		msg_str(&m, ")");
	}
	say(&m);
}

/* -v: what became of each planned library (wwhy: a window target's
 * reason it has none; missed: held, and ld.so mapped it elsewhere). */
static void say_targets(const struct exec *ex, const char *const *wwhy, const uint8_t *missed)
{
	int landed = 0;

	for (unsigned k = 0; k < ex->ldp.n; k++) {
		if (!ex->ldp_req[k].target)
			continue;
		struct msg m;
		msg_head(&m, ex->path);
		msg_str(&m, "library '");
		msg_str(&m, walk_str(&ex->walk, ex->ldp_path[k]));
		if (landed++ >= ex->ldp_held)
			msg_str(&m, "': not placed before ld.so mapped it (its requests could not be replayed to a 2 MiB "
				    "boundary)");
		else if (missed[k])
			msg_str(&m, "': planned before ld.so, missed: ld.so mapped it elsewhere (its requests were not "
				    "the ones tiexec replayed: another glibc's order?)");
		else if (ex->ldp_req[k].below && !wwhy[k])
			msg_str(&m, "': planned before ld.so: its read-only image in a 2 MiB window of its own, mapped "
				    "from the text cache: one 2 MiB page shared by every process (" TEXTCACHE_WINDOW_EXEC ")");
		else if (ex->ldp_req[k].below) {
			msg_str(&m, "': planned before ld.so: its read-only image in a 2 MiB window of its own, left as "
				    "ld.so mapped it: ");
			msg_str(&m, wwhy[k]);
		}
		else
			msg_str(&m, "': planned before ld.so: it starts congruent to its file modulo 2 MiB");
		say(&m);
	}
}

unsigned plan_done(struct exec *ex, struct range *win, uint64_t *fired)
{
	const char *wwhy[LDPLAN_MAX_REQS];
	uint8_t missed[LDPLAN_MAX_REQS];
	int landed = 0;
	unsigned nwin = 0;

	size_t nd = 0;
	const Elf64_Dyn *dyn = image_dynamic(&ex->prog, 0, &nd);

	ldplan_release(&ex->ldp_holds);
	for (unsigned k = 0; k < ex->ldp.n; k++) {
		if (!ex->ldp_req[k].target)
			continue;
		uint64_t start = ex->ldp_holds.start[landed], below = ex->ldp_req[k].below;
		const char *lib = walk_str(&ex->walk, ex->ldp_path[k]);
		int held = landed++ < ex->ldp_held;
		wwhy[k] = "more windows than tiexec maps";
		missed[k] = 0;
		if (held && below && nwin < WINDOWS_MAX &&
		    !(wwhy[k] = libwindow_map(ex->cache_dir, &ex->cache_trust, lib, start, below, ex->aux[AT_HWCAP2], &ex->huge.cc)))
			win[nwin++] = (struct range){ start - below, start - below + TX_HUGE };
		/* Held, and ld.so mapped it there?  A glibc whose requests
		 * differ from the ones replayed maps it elsewhere.  A window
		 * mapped answers it: its entry's first page is what ld.so
		 * mapped at start (libwindow.c), so ld.so's list is read
		 * only where there is none (about 12 system calls for
		 * clang). */
		else if (held)
			missed[k] = libfind_at(dyn, nd, start, lib) == 0;
		held &= !missed[k];
		if (below) {
			probe_window(ex, lib, TX_HUGE - below,
				     held ? wwhy[k] : missed[k] ? "ld.so mapped it elsewhere than planned" : "not placed before ld.so mapped it");
			(*fired)++;
		}
	}
	if (!ex->opt.verbose)
		return nwin;
	if (ex->ldp.n)
		say_plan_cost(ex, (unsigned)landed);
	if (ex->walk.stop) {
		struct msg m;
		msg_head(&m, ex->path);
		msg_str(&m, "libraries from '");
		msg_str(&m, walk_str(&ex->walk, ex->walk.stop));
		if (ex->walk.stop_err) {
			msg_str(&m, "' on not planned before ld.so: cannot open it: ");
			msg_str(&m, tx_strerror(-ex->walk.stop_err));
		} else {
			msg_str(&m, "' on not planned before ld.so: not found where tiexec looks for it (its search "
				    "path, the default directories), or not a library it can read");
		}
		say(&m);
	}
	if (ex->window_why) {
		struct msg m;
		msg_head(&m, ex->path);
		msg_str(&m, "library '");
		msg_str(&m, walk_str(&ex->walk, ex->window_lib));
		msg_str(&m, "': no window: ");
		msg_str(&m, ex->window_why);
		say(&m);
	}
	say_targets(ex, wwhy, missed);
	return nwin;
}
