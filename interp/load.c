/* The load stage: the program and its interpreter mapped as the kernel would
 * map them, and the program's text on 2 MiB pages.
 *
 * Stage contract.  Reads ex's launch section (prog.fd open, the settings of
 * the environment and the command line).  Writes prog and interp (headers
 * validated, mapped; interp.fd closed again), the settings in effect with
 * the program's note merged in, remap and hr (what huge.c placed), hp (where
 * the stage after ld.so will get control, HOOK_NONE for none) and entry;
 * the process's comm and, for PT_GNU_STACK with PF_X, an executable stack;
 * interp_win, the interpreter's window, where its entry serves.
 * Says what it did (-v, and the loaded probe).  May exit with 126 or 127
 * (a bad or missing file, no address space), or hand the program to a plain
 * exec: a script, a program below --min-text, no descriptor to spare. */
#include <errno.h>
#include <linux/auxvec.h>

#include "aside.h"
#include "exec.h"
#include "fsfolio.h"
#include "fds.h"
#include "hookpoint.h"
#include "huge.h"
#include "libwindow.h"
#include "probes.h"
#include "proc.h"
#include "report.h"
#include "sys.h"

/* Below --min-text the command line hands the program to a plain exec. */
__attribute__((noreturn)) static void exec_small(struct exec *ex)
{
	if (ex->opt.verbose) {
		struct msg m;
		msg_head(&m, ex->path);
		msg_size(&m, ex->prog.info.text_bytes);
		msg_str(&m, " of text is below --min-text (");
		msg_size(&m, ex->opt.min_text);
		msg_str(&m, "): running it directly");
		say(&m);
	}
	const char *path = ex->path;
	TX_PROBE(direct, path, "below min-text");
	long e = sys_execve(path, ex->s.argv + ex->first, ex->s.envp);
	/* The kernel says ENOENT for a missing interpreter too; say which
	 * file is missing. */
	if (e == -ENOENT && ex->prog.info.interp >= 0) {
		long ie = image_open_interp(&ex->prog, &ex->interp);
		if (ie < 0)
			image_die(&ex->prog, &ex->interp, ie);
	}
	die_errno(path, NULL, e);
}

/* A system call of the stage failed with err on im: kept in ex for the
 * driver, which hands it to launch_failed (a refusal may still mean a
 * plain exec). */
static long load_failed(struct exec *ex, const struct image *im, long err)
{
	ex->fail_im = im;
	ex->fail_err = err;
	return err;
}

/* -v: the interpreter's window, what became of it (why: NULL mapped). */
static void window_said(const struct exec *ex, const char *why)
{
	struct msg m;

	msg_head(&m, ex->path);
	msg_str(&m, "interpreter '");
	msg_str(&m, ex->interp.path);
	msg_str(&m, why ? "': " : "': its read-only image in a 2 MiB window of its own, mapped from the text cache: one "
				  "2 MiB page shared by every process (" TEXTCACHE_WINDOW_EXEC ")");
	msg_str(&m, why ? why : "");
	say(&m);
}

/* Where the interpreter's first page lies in a window of its own (a
 * 2 MiB-aligned window holding its whole read-only image and nothing
 * else, as libc's, textcache.h), or 0 for none: windows on and the text
 * cache holding its window entry (tiexec-warm PROG makes one).  ld.so's
 * read-only image (196 KiB on x86-64, 148 of them text) is on 4 KiB
 * pages otherwise, where a short compile spends some 7% of its time
 * (relocations, symbol lookup).  tiexec maps the interpreter itself, so
 * no plan is needed: its reservation is placed there (image_place_window). */
static uint64_t interp_window_at(struct exec *ex)
{
	const struct image *im = &ex->interp;
	unsigned n = im->eh.e_phnum < TX_PH_MAX ? im->eh.e_phnum : TX_PH_MAX;
	uint64_t at = textcache_window_at(im->ph, n);

	if (!at || !ex->opt.windows || ex->opt.strategy == ST_OFF || !ex->cache_dir || !textcache_window_end(im->ph, n))
		return 0;
	if (textcache_window_present(ex->cache_dir, &im->st))
		return at;
	if (ex->opt.verbose && sys_faccessat(TX_AT_FDCWD, ex->cache_dir, 0) == 0)
		window_said(ex, "no window: no window entry in the text cache (tiexec-warm PROG makes one)");
	return 0;
}

/* The interpreter, mapped with its first page at bytes above a 2 MiB
 * boundary: its window entry mapped over that 2 MiB (libwindow.c), its
 * range into ex->interp_win.  Where that fails it stays as mapped. */
static void interp_window(struct exec *ex, uint64_t at)
{
	uint64_t start = ex->interp.bias + ex->interp.info.lo;
	const char *why = libwindow_map(ex->cache_dir, &ex->cache_trust, ex->interp.path, start, at, ex->aux[AT_HWCAP2],
					&ex->huge.cc);

	if (!why)
		ex->interp_win = (struct range){ start - at, start - at + TX_HUGE };
	if (ex->opt.verbose)
		window_said(ex, why);
}

/* Reserves, maps and trims the program's image (remap: its text is to be
 * placed) or the interpreter's.  0 or a negative errno. */
static long map_image(struct exec *ex, struct image *im, int is_interp, int remap)
{
	int round_out = !is_interp && remap && ex->opt.round_out;
	uint64_t at = is_interp ? interp_window_at(ex) : 0;
	long e = at ? image_place_window(im, at)
		    : image_place(im, is_interp, ex->opt.strategy, !is_interp && ex->cache_fd >= 0, round_out,
				  remap ? huge_unit(&ex->huge) : TX_HUGE, ex->opt.verbose);

	if (e < 0)
		return e;
	image_exec_prot(im, is_interp, ex->aux[AT_HWCAP2]);
	e = image_map(im);
	if (e == 0)
		image_trim(im, round_out);
	if (e == 0 && at)
		interp_window(ex, at);
	return e;
}

/* Maps the program and its interpreter as the kernel would.  When no
 * descriptor is left for the interpreter (binfmt_misc's O flag took the
 * last one RLIMIT_NOFILE allows), the program's descriptor is lent to it
 * once the program is mapped, and the program opened again by name
 * afterwards; if that fails its text stays on 4 KiB pages.  (From the
 * command line the stage made sure of that descriptor already.)  Returns
 * whether the text may still be remapped, or a negative errno
 * (load_failed). */
static long load_images(struct exec *ex, int remap)
{
	struct image *prog = &ex->prog, *interp = &ex->interp;
	int has_interp = prog->info.interp >= 0;
	int tight = ex->binfmt && has_interp && !fds_free(prog->fd, 1);
	long e;

	if (has_interp && !tight && (e = image_open_interp(prog, interp)) < 0)
		return load_failed(ex, interp, e);
	if ((e = map_image(ex, prog, 0, remap)) < 0)
		return load_failed(ex, prog, e);
	if (tight) {
		image_interp_path(prog, interp);
		sys_close(prog->fd);
		prog->fd = -1;
		if ((e = image_open_interp(prog, interp)) < 0)
			return load_failed(ex, interp, e);
	}
	if (has_interp) {
		if ((e = map_image(ex, interp, 1, 0)) < 0)
			return load_failed(ex, interp, e);
		sys_close(interp->fd);
	}
	if (tight) {
		prog->fd = (int)sys_openat(TX_AT_FDCWD, ex->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
		if (prog->fd < 0 && remap) {
			verbose_note(ex->opt.verbose, ex->path, "no file descriptor left for the program (RLIMIT_NOFILE): text left on 4 KiB pages");
			remap = 0;
		}
	}
	return remap;
}

/* Whether one load bias puts every executable segment congruent to its
 * file offset modulo 2 MiB (they all have the same p_vaddr - p_offset
 * modulo 2 MiB): what the page cache's 2 MiB folios need. */
static int text_congruent_to_itself(const struct image *im)
{
	uint64_t d = 0;
	int seen = 0;

	for (unsigned i = 0; i < im->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &im->ph[i];
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X))
			continue;
		if (seen++ && ((p->p_vaddr - p->p_offset - d) & (TX_HUGE - 1)))
			return 0;
		d = p->p_vaddr - p->p_offset;
	}
	return 1;
}

/* The shared text cache's entry for the program (textcache.h), into
 * cache_fd and cache_off, when the page cache cannot give its text 2 MiB
 * folios: the file system keeps 4 KiB folios, or no one bias makes its
 * text segments congruent.  -v says why an entry is not used.  Asks the
 * program's file system once, into ex->fs, for huge_apply too. */
static void cache_find(struct exec *ex, int remap)
{
	const struct image *prog = &ex->prog;
	char name[TEXTCACHE_NAME_MAX];
	const char *why = NULL;

	ex->cache_fd = -1;
	if (!remap || (ex->opt.strategy != ST_AUTO && ex->opt.strategy != ST_FILE))
		return;
	fs_folios(prog->fd, &ex->fs);
	if (!ex->cache_dir)
		return;
	/* The program is placed congruent to its file (image_place), so the
	 * page cache does it wherever it holds 2 MiB folios. */
	if (ex->fs.folios != FS_FOLIOS_NO && text_congruent_to_itself(prog))
		return;
	if (prog->eh.e_phnum > TEXTCACHE_PH_MAX || !textcache_name(&prog->st, name, sizeof(name)))
		return;
	int fd = textcache_open_with(ex->cache_dir, &ex->cache_trust, name, &why);
	if (fd >= 0 && textcache_layout(fd, prog->ph, prog->eh.e_phnum, ex->cache_off, &why) < 0) {
		sys_close(fd);
		fd = -1;
	}
	if (fd < 0) {
		if (ex->opt.verbose) {
			struct msg m;
			msg_head(&m, ex->path);
			msg_str(&m, "cache: ");
			if (why) {
				msg_str(&m, why);
			} else {
				msg_str(&m, "no entry for this file in ");
				msg_str(&m, ex->cache_dir);
				msg_str(&m, " (tiexec-warm makes one)");
			}
			say(&m);
		}
		return;
	}
	ex->cache_fd = fd;
}

static void put_text_on_huge_pages(struct exec *ex)
{
	static uint64_t seg_off[TEXTCACHE_PH_MAX] TX_HOT;
	unsigned k = 0;

	/* cache_off is by program header, huge.c's by segment (layout.h:
	 * PT_LOADs with p_memsz, in table order). */
	for (unsigned i = 0; ex->cache_fd >= 0 && i < ex->prog.eh.e_phnum && k < TEXTCACHE_PH_MAX; i++)
		if (ex->prog.ph[i].p_type == PT_LOAD && ex->prog.ph[i].p_memsz)
			seg_off[k++] = ex->cache_off[i];
	struct huge_req req = {
		.state = &ex->huge,
		.fd = ex->prog.fd,
		.name = ex->path,
		.o = &ex->opt,
		.segs = ex->prog.segs,
		.nsegs = ex->prog.nsegs,
		.lim_lo = ex->prog.res_lo,
		.lim_hi = ex->prog.res_hi,
		.cache_fd = k == ex->prog.nsegs ? ex->cache_fd : -1,
		.cache_off = seg_off,
		.fs = ex->fs,
		.xprot = ex->prog.xprot,
	};
	huge_apply(&req, &ex->hr);
	huge_done(&ex->huge);
	if (ex->cache_fd >= 0)
		sys_close(ex->cache_fd);
	ex->cache_fd = -1;
}

/* comm, as the kernel sets it: the last component of the name the program
 * was executed by -- except for execveat(fd, "", AT_EMPTY_PATH) (fexecve),
 * where AT_EXECFN is "/dev/fd/N" and the kernel (since Linux 6.14) takes
 * the file's own name instead. */
static void set_comm(int fd, const char *execfn)
{
	static char link[PATH_MAX];
	const char *name = tx_basename(execfn);
	const char *n = tx_skip(execfn, "/dev/fd/");

	if (n && *n) {
		while (*n >= '0' && *n <= '9')
			n++;
		long len = fd_link(fd, link, sizeof(link));
		if (!*n && len > 0) {
			/* An unlinked file's link ends in " (deleted)"; its name does not. */
			static const char del[] = " (deleted)";
			if ((size_t)len > sizeof(del) - 1 &&
			    tx_streq(link + len - (sizeof(del) - 1), del))
				link[len - (sizeof(del) - 1)] = '\0';
			name = tx_basename(link);
		}
	}
	sys_prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/* What a direct exec's setup_new_exec/setup_arg_pages would also do. */
static void finish_process(struct exec *ex)
{
	if (ex->prog.info.exec_stack && ex->aux[AT_EXECFN]) {
		/* PT_GNU_STACK with PF_X: the whole stack executable, as the
		 * kernel's setup_arg_pages would have made it. */
		uint64_t pg = tx_down(ex->aux[AT_EXECFN], TX_PAGE);
		sys_mprotect(pg, TX_PAGE, PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN);
	}
	set_comm(ex->prog.fd, ex->execfn);
}

/* Where the stage after ld.so gets control, into ex->hp (HOOK_NONE for
 * none; -v says why).  Under a finite RLIMIT_AS there is none: tiexec's
 * image (some 850 KiB, mostly buffers) would stay mapped while ld.so maps
 * the libraries, which the limit may not leave room for where a direct exec
 * starts. */
static void choose_hook(struct exec *ex)
{
	struct hookpoint *hp = &ex->hp;
	struct tx_rlimit rl;

	hookpoint_choose(&ex->prog, &ex->interp, hp);
	if (hp->kind != HOOK_NONE && sys_prlimit(TX_RLIMIT_AS, NULL, &rl) == 0 &&
	    rl.cur != TX_RLIM_INFINITY) {
		hp->kind = HOOK_NONE;
		hp->why = "RLIMIT_AS (ulimit -v) is set: no room is taken for placing them";
	}
	if (hp->kind == HOOK_NONE && ex->opt.verbose) {
		struct msg m;
		msg_head(&m, ex->path);
		msg_str(&m, "libraries left as ld.so maps them: ");
		msg_str(&m, hp->why);
		say(&m);
	}
}

/* -v's line on the program's text, and the loaded probe. */
static void tell(const struct exec *ex)
{
	const struct huge_result *hr = &ex->hr;
	const char *path = ex->path;
	uint64_t text = ex->prog.info.text_bytes, huge = hr->text_huge > text ? text : hr->text_huge;
	struct msg m;

	if (ex->remap)
		for (unsigned i = 0; i < hr->nnotes; i++)
			verbose_note(ex->opt.verbose, path, hr->notes[i].text);
	if (ex->opt.verbose) {
		msg_head(&m, path);
		if (ex->remap) {
			huge_msg(&m, text, hr);
			msg_str(&m, ", ");
			char pg[24];
			msg_mib(&m, text - huge);
			msg_str(&m, " on ");
			msg_str(&m, geom_size(TX_PAGE, pg, sizeof(pg)));
			msg_str(&m, ", ");
		} else if (ex->opt.strategy == ST_OFF) {
			msg_str(&m, "loaded without remapping (--strategy=off), ");
		} else {
			msg_str(&m, "loaded without remapping (");
			msg_size(&m, text);
			msg_str(&m, " of text, below --min-text ");
			msg_size(&m, ex->opt.min_text);
			msg_str(&m, "), ");
		}
		msg_ms(&m, now_ns() - ex->t0);
		msg_str(&m, " ms");
		say(&m);
	}
	uint64_t mode = (ex->binfmt ? TX_MODE_BINFMT : 0) | (ex->reexec ? TX_MODE_REEXEC : 0) |
			(ex->remap ? TX_MODE_REMAPPED : 0) | (ex->hp.kind != HOOK_NONE ? TX_MODE_LIBS : 0);
	uint64_t strategy = (uint64_t)ex->opt.strategy;
	const char *why = hr->nnotes ? hr->notes[0].text : NULL;
	TX_PROBE(loaded, path, mode, strategy, text, huge, hr->file, hr->thp, hr->hugetlb,
		 now_ns() - ex->t0, why, hr->cache);
	(void)mode, (void)huge, (void)why, (void)strategy;
}

long load_stage(struct exec *ex)
{
	struct image *prog = &ex->prog;
	struct opts note;
	long e = image_read_headers(prog, 0, !ex->binfmt);

	if (e < 0)
		return load_failed(ex, prog, e);
	if (e == 1) {
		verbose_note(ex->opt.verbose, ex->path, "a script: running it directly");
		exec_plain(ex->path, ex->s.argv + ex->first, ex->s.envp, "script");
	}
	/* Precedence: defaults < the program's note < environment < options. */
	const char *note_why = image_read_note(prog, &note);
	if (note_why)
		verbose_note(ex->opt.verbose, ex->path, note_why);
	opts_default(&ex->opt);
	opts_merge(&ex->opt, &note);
	opts_merge(&ex->opt, &ex->env_o);
	opts_merge(&ex->opt, &ex->cli_o);
	int remap = ex->opt.strategy != ST_OFF && prog->info.text_bytes >= ex->opt.min_text;
	/* A dynamic program's libraries may hold the text worth placing
	 * (clang's is in libLLVM): with libs, a small one is still loaded. */
	int hook = ex->opt.libs && ex->opt.strategy != ST_OFF && prog->info.interp >= 0;
	if (!remap && !hook && !ex->binfmt && ex->opt.strategy != ST_OFF)
		exec_small(ex);
	if (!ex->binfmt && !fds_free(prog->fd, prog->info.interp >= 0 ? 2 : 1)) {
		verbose_note(ex->opt.verbose, ex->path, "no free file descriptor (RLIMIT_NOFILE): running it directly");
		exec_plain(ex->path, ex->s.argv + ex->first, ex->s.envp, "no descriptor");
	}

	huge_state_init(&ex->huge, ex->aux[AT_PAGESZ]);
	cache_find(ex, remap);
	e = load_images(ex, remap);
	if (e < 0)
		return e;
	ex->remap = (int)e;
	if (ex->remap)
		put_text_on_huge_pages(ex);
	else if (ex->cache_fd >= 0)
		sys_close(ex->cache_fd);
	ex->hp.kind = HOOK_NONE;
	if (hook)
		choose_hook(ex);
	finish_process(ex);
	tell(ex);
	ex->entry = prog->info.interp >= 0 ? ex->interp.eh.e_entry + ex->interp.bias
					   : prog->eh.e_entry + prog->bias;
	return 0;
}
