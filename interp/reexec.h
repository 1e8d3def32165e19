/* Re-executions of /proc/self/exe: whether a start of tiexec is a program
 * running itself again, and which program.  Pure: the caller gives the
 * facts (unit-tested, tests/unit/test-reexec.c).
 *
 * An ordinary user's program started through tiexec sees tiexec in
 * /proc/self/exe, and carries TIEXEC_EXE=PID:PATH (stack.c): PID its own,
 * PATH the program.  When it executes /proc/self/exe -- in place, or in a
 * child (node's process.execPath, Go's os.Executable, cluster.fork) --
 * tiexec starts with that hint and must run PATH again with the whole argv,
 * never read it as tiexec's own command line.  It is such a re-exec when
 *   - the hint's PID is ours (exec in place) and we were executed as
 *     "/proc/self/exe", or it is our parent's (a child) and we were
 *     executed by the name /proc/self/exe resolves to (or
 *     "/proc/self/exe"): a user typing "tiexec ..." in a shell the program
 *     started has neither, unless he types tiexec's real path in a shell
 *     that is itself the program;
 *   - or, whatever the PID (a daemonized grandchild), argv[0] is not a name
 *     of tiexec's: what a re-exec that keeps the program's argv[0] looks
 *     like. */
#pragma once

enum reexec_verdict {
	REEXEC_NO,
	REEXEC_YES,
	REEXEC_IF_OWN_NAME, /* if execfn is what /proc/self/exe resolves to */
};

/* hint: TIEXEC_EXE's value, or NULL; argv0 NULL when argc is 0.  On a yes
 * (or a conditional one), *path is the program. */
enum reexec_verdict reexec_decide(const char *hint, const char *argv0, const char *execfn, long pid,
				  long ppid, const char **path);

/* Whether path names a process's executable link: /proc/self/exe,
 * /proc/thread-self/exe, /proc/PID/exe. */
int reexec_proc_exe_link(const char *path);

/* Without the hint: whether this start looks like a program re-executing
 * itself -- executed by a /proc/.../exe link, or under a name that is not
 * tiexec's (Go's os.Executable() resolves the link and keeps the program's
 * argv[0]).  Its arguments are then not tiexec's command line. */
int reexec_anonymous(const char *argv0, const char *execfn);
