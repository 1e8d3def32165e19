/* tiexec: runs an x86-64 ELF program with its text on 2 MiB pages.
 *
 * Stage contract.  The kernel enters at _start (arch.h) with the initial
 * stack it built for *us*.  tiexec_main first applies our own relative
 * relocations (until then no global holding a pointer may be read), then:
 * finds the program (command line, or binfmt_misc's descriptor), validates
 * it completely before mapping anything, maps it and its interpreter the
 * way the kernel would, puts its text on huge pages (huge.c), rebuilds the
 * initial stack as a direct exec would have built it, and jumps.  No libc:
 * every service is a raw system call (sys.h); nothing is allocated; the only
 * output is one-line messages on stderr.
 *
 * Exit statuses before the program runs: 127 not found, 126 cannot be
 * executed, 125 bad tiexec option.  After the jump the process is the
 * program's, with our PID. */
#include <elf.h>
#include <errno.h>
#include <linux/auxvec.h>
#include <linux/fadvise.h>

#include "arch/x86_64/arch.h"
#include "aside.h"
#include "caps.h"
#include "hookpoint.h"
#include "huge.h"
#include "loader.h"
#include "mark.h"
#include "probes.h"
#include "sys.h"

/* USDT probes (probes.h, zero cost when nobody listens): what tiexec did,
 * for bpf/tiexec-trace.  Only the loader knows the outcome, and it must
 * not need a file, a socket or a daemon to tell it. */

#ifndef TIEXEC_VERSION
#define TIEXEC_VERSION "0.1.0"
#endif
#define AT_FLAGS_PRESERVE_ARGV0 1

ARCH_ENTRY;

__attribute__((noreturn)) void tiexec_main(uint64_t *sp);

extern Elf64_Dyn tx_dynamic[] __asm__("_DYNAMIC") __attribute__((visibility("hidden")));

struct image prog, interp;
uint64_t aux[AUX_MAX];
uint64_t aux_has;
struct opts opt;                        /* in effect */
static struct opts env_o, cli_o, note_o; /* what each source set */
static char path_buf[4096];

/* ---- self relocation ---------------------------------------------------- */

/* We are a static PIE: the kernel maps us anywhere and nobody applies our
 * R_X86_64_RELATIVE relocations but us.  Runs before any pointer stored in
 * data is used; reaches _DYNAMIC and our base through PC-relative hidden
 * symbols only. */
static void relocate_self(void)
{
	uint64_t base = (uint64_t)(uintptr_t)tx_ehdr_start;
	uint64_t rela = 0, relasz = 0;

	for (Elf64_Dyn *d = tx_dynamic; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_RELA)
			rela = d->d_un.d_ptr;
		else if (d->d_tag == DT_RELASZ)
			relasz = d->d_un.d_val;
	}
	Elf64_Rela *r = (Elf64_Rela *)(uintptr_t)(base + rela);
	for (uint64_t i = 0; rela && i < relasz / sizeof(*r); i++)
		if (ELF64_R_TYPE(r[i].r_info) == R_X86_64_RELATIVE)
			*(uint64_t *)(uintptr_t)(base + r[i].r_offset) = base + (uint64_t)r[i].r_addend;
}

/* ---- finding and opening the program ------------------------------------ */

/* Like execvp: a name without '/' is looked up in PATH.  Returns 0 with the
 * path in path_buf, or -ENOENT / -EACCES. */
static long find_in_path(const char *name, const char *pathenv)
{
	long err = -ENOENT;
	size_t nl = strlen(name);

	if (!pathenv)
		pathenv = "/bin:/usr/bin"; /* glibc's default */
	for (const char *p = pathenv;; p++) {
		const char *e = p;
		while (*e && *e != ':')
			e++;
		size_t dl = (size_t)(e - p);
		if (dl + 1 + nl + 1 <= sizeof(path_buf)) {
			/* An empty element is the current directory, named as
			 * execvp names it: the bare name, no "./". */
			size_t n = 0;
			memcpy(path_buf, p, dl);
			n += dl;
			if (dl)
				path_buf[n++] = '/';
			memcpy(path_buf + n, name, nl + 1);
			struct statx st;
			if (sys_statx(TX_AT_FDCWD, path_buf, 0, STATX_TYPE, &st) == 0) {
				if ((st.stx_mode & S_IFMT) == S_IFREG &&
				    sys_faccessat(TX_AT_FDCWD, path_buf, X_OK) == 0)
					return 0;
				err = -EACCES;
			}
		}
		if (!*e)
			break;
		p = e;
	}
	return err;
}

static const char *getenv_in(char **envp, const char *name)
{
	for (char **e = envp; *e; e++) {
		const char *v = tx_skip(*e, name);
		if (v && *v == '=')
			return v + 1;
	}
	return NULL;
}

/* ---- top level ---------------------------------------------------------- */

static void usage(void)
{
	static const char text[] =
		"Usage: tiexec [OPTIONS] PROG [ARGS...]\n"
		"Run PROG with its executable code on 2 MiB (huge) pages.\n"
		"\n"
		"  -v, --verbose          say what was placed on huge pages, and why not\n"
		"      --strategy=S       auto (default), file, thp, hugetlb or off\n"
		"      --lazy             do not fault the text in at start\n"
		"      --round-out        also cover the unaligned head and tail of the text\n"
		"                         (neighbouring read-only bytes become executable)\n"
		"      --min-text=SIZE    leave programs with less text alone (default 2M)\n"
		"      --libs, --no-libs  shared libraries' text too (the default), or not\n"
		"  -h, --help             this text\n"
		"      --version          print the version\n"
		"\n"
		"Environment: TIEXEC_VERBOSE, TIEXEC_STRATEGY, TIEXEC_LAZY, TIEXEC_ROUND_OUT,\n"
		"TIEXEC_MIN_TEXT, TIEXEC_LIBS set the same; options on the command line win.\n";
	sys_write(1, text, sizeof(text) - 1);
}

static void report(const char *path, const struct huge_result *hr, uint64_t t0)
{
	struct msg m;
	uint64_t text = prog.info.text_bytes;
	uint64_t on = hr->text_huge > text ? text : hr->text_huge;

	for (unsigned i = 0; i < hr->nnotes; i++)
		verbose_note(path, hr->notes[i]);
	if (!opt.verbose)
		return;
	msg_head(&m, path);
	msg_placed(&m, text, hr);
	msg_str(&m, ", ");
	msg_mib(&m, text - on);
	msg_str(&m, " on 4 KiB, ");
	msg_ms(&m, now_ns() - t0);
	msg_str(&m, " ms");
	say(&m);
}

/* The program runs as a plain exec would run it: used for what the loader
 * must not or need not handle itself (scripts, set-user-ID files, files we
 * may execute but not read, programs too small to gain anything). */
__attribute__((noreturn)) static void exec_plain(const char *path, char **argv, char **envp,
						const char *why)
{
	TX_PROBE(direct, path, why);
	long e = sys_execve(path, argv, envp);
	die_errno(path, NULL, e);
}

/* ---- descriptors --------------------------------------------------------- */

/* A direct exec needs no descriptor; tiexec needs one for the program, one
 * for its interpreter and one to ask which pages are huge.  Under a low
 * RLIMIT_NOFILE soft limit it borrows up to the hard limit, and gives the
 * soft limit back just before the jump (start_program). */
#define FDS_WANTED 16
static struct tx_rlimit nofile_saved;
static int nofile_raised;

static void limits_raise(void)
{
	struct tx_rlimit rl;

	if (sys_prlimit(TX_RLIMIT_NOFILE, NULL, &rl) < 0 || rl.cur >= FDS_WANTED || rl.cur >= rl.max)
		return;
	nofile_saved = rl;
	struct tx_rlimit more = {rl.max < FDS_WANTED ? rl.max : FDS_WANTED, rl.max};
	nofile_raised = sys_prlimit(TX_RLIMIT_NOFILE, &more, NULL) == 0;
}

void limits_restore(void)
{
	if (nofile_raised)
		sys_prlimit(TX_RLIMIT_NOFILE, &nofile_saved, NULL);
	nofile_raised = 0;
}

int fds_free(int n)
{
	long got[4];
	int ok = 1, k = 0;

	for (; k < n && k < 4; k++) {
		got[k] = sys_fcntl(prog.fd, TX_F_DUPFD_CLOEXEC, 0);
		if (got[k] < 0) {
			ok = 0;
			break;
		}
	}
	while (k-- > 0)
		sys_close((int)got[k]);
	return ok;
}

/* ---- re-executions of /proc/self/exe ------------------------------------ */

/* An ordinary user's program started through tiexec sees tiexec in
 * /proc/self/exe, and carries TIEXEC_EXE=PID:PATH (start.c): PID its own,
 * PATH the program.  When it executes /proc/self/exe -- in place, or in a
 * child (node's process.execPath, Go's os.Executable, cluster.fork) --
 * tiexec starts with that hint and must run PATH again with the whole
 * argv, never read it as tiexec's own command line.  It is such a
 * re-exec when
 *   - the hint's PID is ours (exec in place) and we were executed as
 *     "/proc/self/exe", or it is our parent's (a child: node's execPath,
 *     Go's exec.Command(os.Executable())) and we were executed by the
 *     name /proc/self/exe resolves to (or "/proc/self/exe"): a user typing
 *     "tiexec ..." in a shell the program started has neither, unless he
 *     types tiexec's real path in a shell that is itself the program;
 *   - or, whatever the PID (a daemonized grandchild), argv[0] is not a
 *     name of tiexec's: what a re-exec that keeps the program's argv[0]
 *     looks like.
 * Returns PATH, or NULL. */
static const char *reexec_of(const struct start *s)
{
	static char own[4096];
	const char *v = getenv_in(s->envp, "TIEXEC_EXE");
	const char *execfn = aux[AT_EXECFN] ? (const char *)(uintptr_t)aux[AT_EXECFN] : "";
	long pid = -1;

	if (!v)
		return NULL;
	if (*v >= '0' && *v <= '9') {
		pid = 0;
		while (*v >= '0' && *v <= '9')
			pid = pid * 10 + (*v++ - '0');
		if (*v++ != ':')
			return NULL;
	}
	if (*v != '/' || s->argc < 1)
		return NULL;
	if (!tx_streq(tx_basename(s->argv[0]), tx_basename(execfn)))
		return v;
	int self = pid == SC(__NR_getpid, 0, 0, 0, 0, 0, 0);
	if (!self && pid != SC(__NR_getppid, 0, 0, 0, 0, 0, 0))
		return NULL;
	if (tx_streq(execfn, "/proc/self/exe"))
		return v;
	/* In place, only "/proc/self/exe" itself (or a foreign argv[0],
	 * above) counts: a shell the program is running that execs tiexec by
	 * its path is starting tiexec. */
	if (self)
		return NULL;
	long n = sys_readlinkat(TX_AT_FDCWD, "/proc/self/exe", own, sizeof(own) - 1);
	if (n <= 0)
		return NULL;
	own[n] = '\0';
	return tx_streq(execfn, own) ? v : NULL;
}

/* Whether path names a process's executable link: /proc/self/exe,
 * /proc/thread-self/exe, /proc/PID/exe. */
static int proc_exe_link(const char *path)
{
	const char *p = tx_skip(path, "/proc/");

	if (!p)
		return 0;
	if (tx_streq(p, "self/exe") || tx_streq(p, "thread-self/exe"))
		return 1;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return tx_streq(p, "/exe");
}

/* Without the hint, a program whose /proc/self/exe names tiexec and that
 * re-executes itself with an environment of its own starts tiexec with
 * its own arguments, which are not tiexec's command line: running them
 * would run another program (its first argument, looked up in PATH).
 * Such a start is told by how tiexec was executed -- by a /proc/.../exe
 * link, or under a name that is not its own (Go's os.Executable()
 * resolves the link and keeps the program's argv[0]) -- and refused,
 * since nothing tells which program it was. */
static void refuse_anonymous_reexec(const struct start *s)
{
	const char *execfn = aux[AT_EXECFN] ? (const char *)(uintptr_t)aux[AT_EXECFN] : "";

	if (s->argc < 1)
		return;
	if (!proc_exe_link(execfn) && tx_streq(tx_basename(s->argv[0]), tx_basename(execfn)))
		return;
	die(s->argv[0], "a program re-executing itself through tiexec without TIEXEC_EXE in its "
			"environment: which program it is cannot be told (keep TIEXEC_EXE, or see the "
			"README on /proc/self/exe)",
	    NULL, 126);
}

/* ---- stages of tiexec_main ---------------------------------------------- */

/* What tiexec_main found out about how it was started. */
struct launch {
	const char *path;   /* the program */
	const char *execfn; /* its AT_EXECFN */
	long first;         /* its argv[0] is our argv[first] */
	int binfmt;         /* started by binfmt_misc */
	int reexec;         /* a program re-executing /proc/self/exe (TIEXEC_EXE) */
};

static void settings_from_env(const struct start *s)
{
	opts_default(&env_o);
	opts_default(&cli_o);
	opts_default(&opt);
	for (long i = 0; i < s->nenv; i++) {
		if (opts_env(&env_o, s->envp[i]) != OPT_ENV_OK) {
			struct msg m;
			m.n = 0;
			msg_str(&m, "tiexec: ignoring bad setting ");
			msg_str(&m, s->envp[i]);
			say(&m);
		}
	}
	opts_merge(&opt, &env_o);
}

/* Without flag C binfmt_misc runs us with the caller's credentials: a
 * set-user-ID program would run unprivileged.  Returns whether the open
 * program is one the kernel would run with more privileges. */
static int privileged(const struct statx *st)
{
	char cap[4];
	long xa = sys_fgetxattr(prog.fd, "security.capability", cap, sizeof(cap));

	return (st->stx_mode & (S_ISUID | S_ISGID)) || xa >= 0 || xa == -ERANGE;
}

/* binfmt_misc hands us the program when it was registered with us as its
 * interpreter: flag P sets AT_FLAGS_PRESERVE_ARGV0 and gives argv = [us,
 * /full/path, original argv0, args...]; flag O passes an open descriptor
 * in AT_EXECFD -- which is 0 when the caller had closed stdin, so its
 * presence counts, not its value.  A program that re-executes
 * /proc/self/exe while that still names tiexec starts us under its own
 * name, with TIEXEC_EXE saying which program it was. */
static void from_binfmt(const struct start *s, struct launch *l)
{
	int has_fd = (aux_has >> AT_EXECFD) & 1;

	if (l->reexec) {
		l->first = 0;
	} else {
		if (s->argc < 2)
			die("tiexec", "started by binfmt_misc without a program", NULL, 126);
		l->path = s->argv[1];
		l->first = (aux[AT_FLAGS] & AT_FLAGS_PRESERVE_ARGV0) && s->argc > 2 ? 2 : 1;
	}
	l->execfn = aux[AT_EXECFN] ? (const char *)(uintptr_t)aux[AT_EXECFN] : l->path;
	if (has_fd && !l->reexec) {
		prog.fd = (int)aux[AT_EXECFD];
	} else {
		prog.fd = (int)open_exec_file(l->path);
		if (prog.fd < 0)
			die_errno(l->path, NULL, prog.fd);
		if (open_for_writing(prog.fd))
			die_errno(l->path, NULL, -ETXTBSY);
	}
	prog.path = l->path;
	struct statx st;
	if (sys_statx(prog.fd, "", TX_AT_EMPTY_PATH, STATX_MODE, &st) == 0 && privileged(&st))
		die(l->path, "set-user-ID, set-group-ID or file capabilities: tiexec cannot run it with "
			     "its privileges (remove the stamp: tiexec-stamp --remove)",
		    NULL, 126);
}

__attribute__((noreturn)) static void bad_usage(const char *what, const char *why)
{
	struct msg m;

	m.n = 0;
	msg_str(&m, "tiexec: ");
	msg_str(&m, what);
	if (why) {
		msg_str(&m, ": ");
		msg_str(&m, why);
	}
	msg_str(&m, " (see tiexec --help)");
	say(&m);
	sys_exit(125);
}

/* Traced from exec (gdb or ltrace started a stamped program): a plain exec
 * of an unstamped copy, which the tracer understands (aside.h). */
static void aside(const struct start *s, const struct launch *l)
{
	verbose_note(l->path, "traced from exec: stepping aside, the program runs from an unstamped copy "
			      "as a direct exec would, on 4 KiB pages");
	limits_restore(); /* the program's own RLIMIT_NOFILE across the exec */
	step_aside(prog.fd, l->path, s->argv + l->first, s->envp);
	limits_raise();
	verbose_note(l->path, "traced, but the copy could not be made: loading it as usual");
}

/* `tiexec [OPTIONS] PROG ARGS`: options, PATH lookup, and the checks a
 * direct execve makes before it opens the file. */
static void from_command_line(const struct start *s, struct launch *l)
{
	const char *bad = NULL, *why = NULL;

	l->first = opts_argv(&cli_o, (int)s->argc, s->argv, &bad, &why);
	opt.help = cli_o.help;
	opt.version = cli_o.version;
	opts_merge(&opt, &cli_o);
	if (l->first < 0)
		bad_usage(bad, why);
	if (opt.help) {
		usage();
		sys_exit(0);
	}
	if (opt.version) {
		static const char v[] = "tiexec " TIEXEC_VERSION "\n";
		sys_write(1, v, sizeof(v) - 1);
		sys_exit(0);
	}
	if (l->first >= s->argc)
		bad_usage("missing program", NULL);
	const char *path = s->argv[l->first];
	if (!memchr(path, '/', strlen(path))) {
		long e = find_in_path(path, getenv_in(s->envp, "PATH"));
		if (e == -ENOENT)
			die(path, "command not found", NULL, 127);
		if (e < 0)
			die_errno(path, NULL, e);
		path = path_buf;
	}
	l->path = l->execfn = prog.path = path;
	prog.fd = (int)open_exec_file(path);
	if (prog.fd == -EACCES && sys_faccessat(TX_AT_FDCWD, path, X_OK) == 0) {
		verbose_note(path, "not readable (execute-only): running it directly");
		exec_plain(path, s->argv + l->first, s->envp, "not readable");
	}
	if (prog.fd == -EMFILE || prog.fd == -ENFILE) {
		verbose_note(path, "no free file descriptor (RLIMIT_NOFILE): running it directly");
		exec_plain(path, s->argv + l->first, s->envp, "no descriptor");
	}
	if (prog.fd < 0)
		die_errno(path, NULL, prog.fd);
	if (open_for_writing(prog.fd))
		die_errno(path, NULL, -ETXTBSY);
	/* The kernel grants set-user-ID, set-group-ID and file capabilities
	 * only to a real exec. */
	struct statx st;
	if (sys_statx(prog.fd, "", TX_AT_EMPTY_PATH, STATX_MODE, &st) == 0 && privileged(&st)) {
		verbose_note(path, "privileged (set-user-ID, set-group-ID or capabilities): running it directly");
		exec_plain(path, s->argv + l->first, s->envp, "privileged");
	}
}

/* Below --min-text the command line hands the program to a plain exec. */
__attribute__((noreturn)) static void exec_small(const struct start *s, const struct launch *l)
{
	if (opt.verbose) {
		struct msg m;
		msg_head(&m, l->path);
		msg_mib(&m, prog.info.text_bytes);
		msg_str(&m, " MiB of text is below --min-text (");
		msg_mib(&m, opt.min_text);
		msg_str(&m, " MiB): running it directly");
		say(&m);
	}
	TX_PROBE(direct, l->path, "below min-text");
	long e = sys_execve(l->path, s->argv + l->first, s->envp);
	/* The kernel says ENOENT for a missing interpreter too; say which
	 * file is missing. */
	if (e == -ENOENT && prog.info.interp >= 0)
		open_interp(l->path);
	die_errno(l->path, NULL, e);
}

/* Maps the program and its interpreter as the kernel would.  When no
 * descriptor is left for the interpreter (binfmt_misc's O flag took the
 * last one RLIMIT_NOFILE allows), the program's descriptor is lent to it
 * once the program is mapped, and the program opened again by name
 * afterwards; if that fails its text stays on 4 KiB pages.  (From the
 * command line tiexec_main made sure of that descriptor already.)
 * Returns whether the text may still be remapped. */
static int load_images(const char *path, int remap, int binfmt)
{
	int tight = binfmt && prog.info.interp >= 0 && !fds_free(1);

	if (prog.info.interp >= 0 && !tight)
		open_interp(path);
	place(&prog, 0);
	map_segments(&prog);
	trim_reservation(&prog, remap && opt.round_out);
	if (tight) {
		read_interp_path(path);
		sys_close(prog.fd);
		open_interp(path);
	}
	if (prog.info.interp >= 0) {
		place(&interp, 1);
		map_segments(&interp);
		trim_reservation(&interp, 0);
		sys_close(interp.fd);
	}
	if (tight) {
		prog.fd = (int)sys_openat(TX_AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
		if (prog.fd < 0 && remap) {
			verbose_note(path, "no file descriptor left for the program (RLIMIT_NOFILE): text left on 4 KiB pages");
			remap = 0;
		}
	}
	return remap;
}

static void put_text_on_huge_pages(const char *path, struct huge_result *hr)
{
	struct huge_req req = {
		.fd = prog.fd,
		.name = path,
		.o = &opt,
		.segs = prog.segs,
		.nsegs = prog.nsegs,
		.lim_lo = prog.res_lo,
		.lim_hi = prog.res_hi,
	};
	huge_apply(&req, hr);
	huge_done();
}

/* comm, as the kernel sets it: the last component of the name the program
 * was executed by -- except for execveat(fd, "", AT_EMPTY_PATH) (fexecve),
 * where AT_EXECFN is "/dev/fd/N" and the kernel (since Linux 6.14) takes
 * the file's own name instead. */
static void set_comm(const char *execfn)
{
	static char link[4096];
	const char *name = tx_basename(execfn);
	const char *n = tx_skip(execfn, "/dev/fd/");

	if (n && *n) {
		while (*n >= '0' && *n <= '9')
			n++;
		long len = fd_link(prog.fd, link, sizeof(link));
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
static void finish_process(const char *execfn)
{
	if (prog.info.exec_stack && aux[AT_EXECFN]) {
		/* PT_GNU_STACK with PF_X: the whole stack executable, as the
		 * kernel's setup_arg_pages would have made it. */
		uint64_t pg = tx_down(aux[AT_EXECFN], TX_PAGE);
		sys_mprotect(pg, TX_PAGE, PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN);
	}
	set_comm(execfn);
}

static void tell(const char *path, int remap, int hook, const struct launch *l,
		 const struct huge_result *hr, uint64_t t0)
{
	if (remap) {
		report(path, hr, t0);
	} else if (opt.verbose) {
		struct msg m;
		msg_head(&m, path);
		msg_str(&m, "loaded without remapping (--strategy=off or below --min-text), ");
		msg_ms(&m, now_ns() - t0);
		msg_str(&m, " ms");
		say(&m);
	}
	uint64_t mode = (l->binfmt ? TX_MODE_BINFMT : 0) | (l->reexec ? TX_MODE_REEXEC : 0) |
			(remap ? TX_MODE_REMAPPED : 0) | (hook ? TX_MODE_LIBS : 0);
	uint64_t text = prog.info.text_bytes, huge = hr->text_huge > text ? text : hr->text_huge;
	const char *why = hr->nnotes ? hr->notes[0] : NULL;
	TX_PROBE(loaded, path, mode, (uint64_t)opt.strategy, text, huge, hr->file, hr->thp, hr->hugetlb,
		 now_ns() - t0, why);
	(void)mode, (void)huge, (void)why;
}

/* Where the stage after ld.so gets control, or NULL for none (-v says
 * why).  Under a finite RLIMIT_AS there is none: tiexec's image (some
 * 850 KiB, mostly buffers) would stay mapped while ld.so maps the
 * libraries, which the limit may not leave room for where a direct exec
 * starts. */
static const struct hookpoint *choose_hook(const char *path)
{
	static struct hookpoint hp;
	struct tx_rlimit rl;

	hookpoint_choose(&prog, &interp, &hp);
	if (hp.kind != HOOK_NONE && sys_prlimit(TX_RLIMIT_AS, NULL, &rl) == 0 &&
	    rl.cur != TX_RLIM_INFINITY) {
		hp.kind = HOOK_NONE;
		hp.why = "RLIMIT_AS (ulimit -v) is set: no room is taken for placing them";
	}
	if (hp.kind != HOOK_NONE)
		return &hp;
	if (opt.verbose) {
		struct msg m;
		msg_head(&m, path);
		msg_str(&m, "libraries left as ld.so maps them: ");
		msg_str(&m, hp.why);
		say(&m);
	}
	return NULL;
}

/* ---- top level ---------------------------------------------------------- */

__attribute__((noreturn, used)) void tiexec_main(uint64_t *sp)
{
	struct start s;
	struct launch l;
	uint64_t t0;

	relocate_self();
	t0 = now_ns();
	parse_start(sp, &s);
	caps_enter();
	limits_raise();
	settings_from_env(&s);

	/* 1. Which program, and how we were started. */
	memset(&l, 0, sizeof(l));
	l.binfmt = (aux[AT_FLAGS] & AT_FLAGS_PRESERVE_ARGV0) || ((aux_has >> AT_EXECFD) & 1);
	if (!l.binfmt)
		l.path = reexec_of(&s);
	l.reexec = l.path != NULL;
	if (l.binfmt || l.reexec) {
		from_binfmt(&s, &l);
		if (l.binfmt && traced_by())
			aside(&s, &l);
	} else {
		refuse_anonymous_reexec(&s);
		from_command_line(&s, &l);
	}

	/* 2. Its headers, and the settings that apply to it. */
	if (read_headers(&prog, !l.binfmt) == 1) {
		verbose_note(l.path, "a script: running it directly");
		exec_plain(l.path, s.argv + l.first, s.envp, "script");
	}
	/* Precedence: defaults < the program's note < environment < options. */
	read_note(&prog, &note_o);
	opts_default(&opt);
	opts_merge(&opt, &note_o);
	opts_merge(&opt, &env_o);
	opts_merge(&opt, &cli_o);
	int remap = opt.strategy != ST_OFF && prog.info.text_bytes >= opt.min_text;
	/* A dynamic program's libraries may hold the text worth placing
	 * (clang's is in libLLVM): with libs, a small one is still loaded. */
	int hook = opt.libs && opt.strategy != ST_OFF && prog.info.interp >= 0;
	if (!remap && !hook && !l.binfmt && opt.strategy != ST_OFF)
		exec_small(&s, &l);
	if (!l.binfmt && !fds_free(prog.info.interp >= 0 ? 2 : 1)) {
		verbose_note(l.path, "no free file descriptor (RLIMIT_NOFILE): running it directly");
		exec_plain(l.path, s.argv + l.first, s.envp, "no descriptor");
	}

	/* 3. Map it, then its text on huge pages. */
	remap = load_images(l.path, remap, l.binfmt);
	struct huge_result hr;
	memset(&hr, 0, sizeof(hr));
	if (remap)
		put_text_on_huge_pages(l.path, &hr);
	const struct hookpoint *hp = hook ? choose_hook(l.path) : NULL;

	/* 4. The process as a direct exec leaves it, and the jump. */
	finish_process(l.execfn);
	tell(l.path, remap, hp != NULL, &l, &hr, t0);
	uint64_t entry = prog.info.interp >= 0 ? interp.eh.e_entry + interp.bias
					       : prog.eh.e_entry + prog.bias;
	start_program(&s, l.first, l.execfn, entry, hp);
}
