/* The launch stage: how tiexec was started, and which program it runs.
 *
 * Stage contract.  Reads the kernel's initial stack (sp) and the
 * environment.  Writes ex's launch section: the decoded stack and aux
 * vector, the program's path, AT_EXECFN and first argument, how tiexec was
 * started (binfmt_misc, a re-exec of /proc/self/exe, or the command line),
 * the settings of the environment and the command line, the descriptor
 * budget, the opt-in's capabilities lowered (caps.h); and prog.path and
 * prog.fd, the program open as the kernel's open_exec() would open it.
 * May exit with 0 (--help, --version), 125 (a bad option), 126 or 127 (the
 * program cannot be run, or not found), or hand the program to a plain
 * exec: a traced binfmt_misc start (aside.h), or a privileged, unreadable
 * or descriptor-starved one from the command line. */
#include <errno.h>
#include <linux/auxvec.h>

#include "aside.h"
#include "caps.h"
#include "exec.h"
#include "mark.h"
#include "proc.h"
#include "reexec.h"
#include "report.h"
#include "sys.h"

#ifndef TIEXEC_VERSION
#define TIEXEC_VERSION "0.1.0"
#endif
#define AT_FLAGS_PRESERVE_ARGV0 1

static const char *execfn_of(const struct exec *ex)
{
	return ex->aux[AT_EXECFN] ? (const char *)(uintptr_t)ex->aux[AT_EXECFN] : "";
}

static const char *argv0_of(const struct exec *ex)
{
	return ex->s.argc > 0 ? ex->s.argv[0] : NULL;
}

/* Like execvp: a name without '/' is looked up in PATH.  Returns 0 with the
 * path in buf (PATH_MAX bytes), or -ENOENT / -EACCES. */
static long find_in_path(const char *name, const char *pathenv, char *buf)
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
		if (dl + 1 + nl + 1 <= PATH_MAX) {
			/* An empty element is the current directory, named as
			 * execvp names it: the bare name, no "./". */
			size_t n = 0;
			memcpy(buf, p, dl);
			n += dl;
			if (dl)
				buf[n++] = '/';
			memcpy(buf + n, name, nl + 1);
			struct statx st;
			if (sys_statx(TX_AT_FDCWD, buf, 0, STATX_TYPE, &st) == 0) {
				if ((st.stx_mode & S_IFMT) == S_IFREG &&
				    sys_faccessat(TX_AT_FDCWD, buf, X_OK) == 0)
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
		"      --windows, --no-windows\n"
		"                         libc's read-only image in a 2 MiB window of its own\n"
		"                         (the default; x86-64: its rodata executable), or not\n"
		"      --step-aside       run PROG as a direct exec would (a stamped program\n"
		"                         from an unstamped copy): gdb's exec-wrapper\n"
		"      --aside-copy       print the path of that copy of PROG (made if need be)\n"
		"  -h, --help             this text\n"
		"      --version          print the version\n"
		"\n"
		"Environment: TIEXEC_VERBOSE, TIEXEC_STRATEGY, TIEXEC_LAZY, TIEXEC_ROUND_OUT,\n"
		"TIEXEC_MIN_TEXT, TIEXEC_LIBS set the same; options on the command line win.\n"
		"TIEXEC_CACHE names the shared text cache (default " TEXTCACHE_DIR ", empty: none).\n";
	sys_write(1, text, sizeof(text) - 1);
}

/* The shared text cache's directory: TIEXEC_CACHE, where set (empty: no
 * cache), else the default.  Whatever it names is used only if root owns
 * it and nobody else can write it (textcache.h). */
static const char *cache_dir(char **envp, char *buf, size_t n)
{
	const char *d = env_get(envp, "TIEXEC_CACHE");

	if (!d)
		return TEXTCACHE_DIR;
	if (!*d || strlen(d) >= n)
		return NULL;
	memcpy(buf, d, strlen(d) + 1);
	return buf;
}

/* The program a re-exec of /proc/self/exe names (reexec.h), or NULL. */
static const char *reexec_of(const struct exec *ex)
{
	static char own[PATH_MAX];
	const char *hint = env_get(ex->s.envp, "TIEXEC_EXE"), *path = NULL;

	if (!hint)
		return NULL;
	long pid = SC(__NR_getpid, 0, 0, 0, 0, 0, 0), ppid = SC(__NR_getppid, 0, 0, 0, 0, 0, 0);
	switch (reexec_decide(hint, argv0_of(ex), execfn_of(ex), pid, ppid, &path)) {
	case REEXEC_YES:
		return path;
	case REEXEC_IF_OWN_NAME: {
		long n = sys_readlinkat(TX_AT_FDCWD, "/proc/self/exe", own, sizeof(own) - 1);
		if (n <= 0)
			return NULL;
		own[n] = '\0';
		return tx_streq(execfn_of(ex), own) ? path : NULL;
	}
	default:
		return NULL;
	}
}

/* Without the hint, a program whose /proc/self/exe names tiexec and that
 * re-executes itself with an environment of its own starts tiexec with
 * its own arguments, which are not tiexec's command line: running them
 * would run another program (its first argument, looked up in PATH).
 * Refused, since nothing tells which program it was. */
static void refuse_anonymous_reexec(const struct exec *ex)
{
	if (!reexec_anonymous(argv0_of(ex), execfn_of(ex)))
		return;
	die(ex->s.argv[0], "a program re-executing itself through tiexec without TIEXEC_EXE in its "
			   "environment: which program it is cannot be told (keep TIEXEC_EXE, or see the "
			   "README on /proc/self/exe)",
	    NULL, 126);
}

static void settings_from_env(struct exec *ex)
{
	opts_default(&ex->env_o);
	opts_default(&ex->cli_o);
	opts_default(&ex->opt);
	for (long i = 0; i < ex->s.nenv; i++) {
		if (opts_env(&ex->env_o, ex->s.envp[i]) != OPT_ENV_OK) {
			struct msg m;
			m.n = 0;
			msg_str(&m, "tiexec: ignoring bad setting ");
			msg_str(&m, ex->s.envp[i]);
			say(&m);
		}
	}
	opts_merge(&ex->opt, &ex->env_o);
	ex->ld_audit = env_get(ex->s.envp, "LD_AUDIT") != NULL;
}

/* A system call of ours refused (EPERM, ENOSYS) by a seccomp filter or a
 * sandbox before anything of the program ran: the program runs by a plain
 * execve, as a direct exec would (the kernel's own exec is not subject to
 * the filter).  Not for a start through binfmt_misc: there execve would
 * come back to us. */
static void refused_run_plainly(struct exec *ex)
{
	verbose_note(ex->opt.verbose, ex->path, "a system call was refused (a seccomp filter?): running it directly");
	fds_restore(&ex->fds);
	exec_plain(ex->path, ex->s.argv + ex->first, ex->s.envp, "refused");
}

/* The same through binfmt_misc, or a re-exec of tiexec, where a plain
 * execve would come back to us: the program runs from an unstamped copy
 * (aside.h), executed by the kernel as a direct exec would be, on 4 KiB
 * pages; its /proc/self/exe and AT_EXECFN name the copy.  Returns when
 * no copy could be made (the refusal is then reported). */
static void refused_step_aside(struct exec *ex)
{
	if (ex->prog.fd < 0)
		return;
	verbose_note(ex->opt.verbose, ex->path, "a system call was refused (a seccomp filter?): running it from an unstamped "
			       "copy, as a direct exec would");
	fds_restore(&ex->fds);
	const char *why = step_aside(ex->prog.fd, ex->path, ex->s.argv + ex->first, ex->s.envp);
	fds_raise(&ex->fds);
	verbose_note(ex->opt.verbose, ex->path, why);
}

/* Where a system call of ours failed with err before anything of the
 * program ran: refused (EPERM, ENOSYS), the program runs by one of the
 * two above, as the way tiexec was started allows.  Returns otherwise, or
 * when that could not be done. */
static void refused(struct exec *ex, long err)
{
	if (err != -EPERM && err != -ENOSYS)
		return;
	if (ex->binfmt || ex->reexec)
		refused_step_aside(ex);
	else
		refused_run_plainly(ex);
}

/* die_errno, unless the failure was a refusal that refused() got round. */
__attribute__((noreturn)) static void fail(struct exec *ex, const char *path, long err)
{
	refused(ex, err);
	die_errno(path, NULL, err);
}

void launch_failed(struct exec *ex)
{
	refused(ex, ex->fail_err);
	image_die(&ex->prog, ex->fail_im, ex->fail_err);
}

/* prctl, which sets the program's name and command line at the end, is
 * tried early: refused, it would leave them ours, so the program runs as
 * for any refused call. */
static void probe_prctl(struct exec *ex)
{
	char name[16];

	refused(ex, sys_prctl(PR_GET_NAME, (uint64_t)(uintptr_t)name, 0, 0, 0));
}

/* Without flag C binfmt_misc runs us with the caller's credentials: a
 * set-user-ID program would run unprivileged.  Whether the open program is
 * one the kernel would run with more privileges. */
static int privileged(const struct image *im)
{
	char cap[4];
	long xa = sys_fgetxattr(im->fd, "security.capability", cap, sizeof(cap));

	return (im->st.stx_mode & (S_ISUID | S_ISGID)) || xa >= 0 || xa == -ERANGE;
}

/* The program as image_open_exec(path) opened it (fd), into ex->prog.fd,
 * or the failure reported; a file open for writing refused, as execve
 * does. */
static void take_program(struct exec *ex, const char *path, long fd)
{
	if (fd < 0)
		fail(ex, path, fd);
	if (image_open_for_writing((int)fd))
		die_errno(path, NULL, -ETXTBSY);
	ex->prog.fd = (int)fd;
}

/* binfmt_misc hands us the program when it was registered with us as its
 * interpreter: flag P sets AT_FLAGS_PRESERVE_ARGV0 and gives argv = [us,
 * /full/path, original argv0, args...]; flag O passes an open descriptor
 * in AT_EXECFD -- which is 0 when the caller had closed stdin, so its
 * presence counts, not its value.  A program that re-executes
 * /proc/self/exe while that still names tiexec starts us under its own
 * name, with TIEXEC_EXE saying which program it was. */
static void from_binfmt(struct exec *ex)
{
	int has_fd = (ex->aux_has >> AT_EXECFD) & 1;

	if (ex->reexec) {
		ex->first = 0;
	} else {
		if (ex->s.argc < 2)
			die("tiexec", "started by binfmt_misc without a program", NULL, 126);
		ex->path = ex->s.argv[1];
		ex->first = (ex->aux[AT_FLAGS] & AT_FLAGS_PRESERVE_ARGV0) && ex->s.argc > 2 ? 2 : 1;
	}
	ex->execfn = ex->aux[AT_EXECFN] ? execfn_of(ex) : ex->path;
	ex->prog.path = ex->path;
	ex->prog.fd = has_fd && !ex->reexec ? (int)ex->aux[AT_EXECFD] : -1;
	/* From here a system call of ours that a filter refuses leads to a
	 * copy instead of an error; the prctl probe waits for the program's
	 * descriptor, which the copy is made from (a re-exec opens it). */
	if (ex->prog.fd >= 0) {
		long e = image_stat(ex->prog.fd, &ex->prog.st);
		if (e < 0)
			fail(ex, ex->path, e);
	} else {
		take_program(ex, ex->path, image_open_exec(ex->path, &ex->prog.st));
	}
	probe_prctl(ex);
	if (privileged(&ex->prog))
		die(ex->path, "set-user-ID, set-group-ID or file capabilities: tiexec cannot run it with "
			      "its privileges (remove the stamp: tiexec-stamp --remove)",
		    NULL, 126);
}

/* Traced from exec (gdb or ltrace started a stamped program): a plain exec
 * of an unstamped copy, which the tracer understands (aside.h). */
static void aside(struct exec *ex)
{
	verbose_note(ex->opt.verbose, ex->path, "traced from exec: stepping aside, the program runs from an unstamped copy "
			       "as a direct exec would, on 4 KiB pages");
	fds_restore(&ex->fds); /* the program's own RLIMIT_NOFILE across the exec */
	const char *why = step_aside(ex->prog.fd, ex->path, ex->s.argv + ex->first, ex->s.envp);
	fds_raise(&ex->fds);
	struct msg m = { 0 };
	msg_str(&m, "traced, but no unstamped copy: ");
	msg_str(&m, why);
	msg_str(&m, ": loading it as usual");
	m.b[m.n < sizeof(m.b) ? m.n : sizeof(m.b) - 1] = '\0';
	verbose_note(ex->opt.verbose, ex->path, m.b);
}

/* --step-aside: gdb's exec-wrapper for a static program
 * (packaging/gdb/tiexec.py), so that `gdb ./prog`, `break X`, `run` works.
 * gdb inserts its breakpoints at the last exec of a start it expects:
 * through binfmt_misc that is tiexec's image, before tiexec steps aside.
 * As the wrapper, tiexec steps aside itself, in the wrapper's exec, which
 * gdb expects; the program's exec is then the copy's.  A program without
 * the stamp is executed as it is. */
static void step_aside_wrapper(struct exec *ex)
{
	unsigned char mark = 0;
	char **argv = ex->s.argv + ex->first;

	fds_restore(&ex->fds);
	if (sys_pread(ex->prog.fd, &mark, 1, TIEXEC_MARK_BYTE) == 1 && (mark & (TIEXEC_MARK_FLAG >> 16)))
		verbose_note(ex->opt.verbose, ex->path, step_aside(ex->prog.fd, ex->path, argv, ex->s.envp));
	exec_plain(ex->path, argv, ex->s.envp, "step-aside");
}

/* --aside-copy: gdb's support for a static PIE (packaging/gdb/tiexec.py),
 * which loads the copy as its program.  gdb checks a PIE's program headers
 * in memory against its file's before it relocates the symbols, and a
 * stamped file's differ from the copy's by the marker bit. */
static void print_aside_copy(struct exec *ex)
{
	struct msg m;

	const char *why = aside_copy_path(ex->prog.fd, ex->path, ex->s.envp, &m);
	if (why)
		die(ex->path, why, NULL, 126);
	m.b[m.n++] = '\n';
	sys_write(1, m.b, m.n);
	sys_exit(0);
}

/* --help and --version, which end here. */
static void answer_and_exit(const struct opts *cli)
{
	static const char v[] = "tiexec " TIEXEC_VERSION "\n";

	if (cli->help)
		usage();
	else
		sys_write(1, v, sizeof(v) - 1);
	sys_exit(0);
}

/* `tiexec [OPTIONS] PROG ARGS`: options, PATH lookup, and the checks a
 * direct execve makes before it opens the file. */
static void from_command_line(struct exec *ex)
{
	const char *bad = NULL, *why = NULL;
	char **argv = ex->s.argv;

	ex->first = opts_argv(&ex->cli_o, (int)ex->s.argc, argv, &bad, &why);
	opts_merge(&ex->opt, &ex->cli_o);
	if (ex->first < 0)
		die_usage(bad, why);
	if (ex->cli_o.help || ex->cli_o.version)
		answer_and_exit(&ex->cli_o);
	if (ex->first >= ex->s.argc)
		die_usage("missing program", NULL);
	const char *path = argv[ex->first];
	if (!memchr(path, '/', strlen(path))) {
		long e = find_in_path(path, env_get(ex->s.envp, "PATH"), ex->path_buf);
		if (e == -ENOENT)
			die(path, "command not found", NULL, 127);
		if (e < 0)
			die_errno(path, NULL, e);
		path = ex->path_buf;
	}
	ex->path = ex->execfn = ex->prog.path = path;
	/* From here a system call of ours that a filter refuses leads to a
	 * plain execve instead of an error. */
	probe_prctl(ex);
	long fd = image_open_exec(path, &ex->prog.st);
	if (fd == -EACCES && sys_faccessat(TX_AT_FDCWD, path, X_OK) == 0) {
		verbose_note(ex->opt.verbose, path, "not readable (execute-only): running it directly");
		exec_plain(path, argv + ex->first, ex->s.envp, "not readable");
	}
	if (fd == -EMFILE || fd == -ENFILE) {
		verbose_note(ex->opt.verbose, path, "no free file descriptor (RLIMIT_NOFILE): running it directly");
		exec_plain(path, argv + ex->first, ex->s.envp, "no descriptor");
	}
	take_program(ex, path, fd);
	/* The kernel grants set-user-ID, set-group-ID and file capabilities
	 * only to a real exec. */
	if (privileged(&ex->prog)) {
		verbose_note(ex->opt.verbose, path, "privileged (set-user-ID, set-group-ID or capabilities): running it directly");
		exec_plain(path, argv + ex->first, ex->s.envp, "privileged");
	}
	if (ex->cli_o.step_aside)
		step_aside_wrapper(ex);
	if (ex->cli_o.aside_copy)
		print_aside_copy(ex);
}

void launch_stage(struct exec *ex, uint64_t *sp)
{
	block_parse(sp, &ex->s, ex->aux, &ex->aux_has);
	tx_page_set(ex->aux[AT_PAGESZ]); /* geom.h: before anything is mapped */
	ex->caps_opted = caps_enter(ex->aux);
	fds_raise(&ex->fds);
	settings_from_env(ex);
	ex->cache_dir = cache_dir(ex->s.envp, ex->cache_dir_buf, sizeof(ex->cache_dir_buf));
	ex->binfmt = (ex->aux[AT_FLAGS] & AT_FLAGS_PRESERVE_ARGV0) || ((ex->aux_has >> AT_EXECFD) & 1);
	if (!ex->binfmt)
		ex->path = reexec_of(ex);
	ex->reexec = ex->path != NULL;
	if (ex->binfmt || ex->reexec) {
		from_binfmt(ex);
		if (ex->binfmt && traced_by())
			aside(ex);
	} else {
		refuse_anonymous_reexec(ex);
		from_command_line(ex);
	}
}
