/* Stepping aside for a debugger or tracer.
 *
 * A stamped program started through binfmt_misc is, to the kernel, an
 * exec of tiexec: a debugger that started it (gdb, ltrace) takes tiexec's
 * aux vector for the program's, relocates the program by tiexec's entry
 * and looks for the libraries through an interpreter that is not there --
 * breakpoints are never hit, no call is traced.  When tiexec finds itself
 * traced from exec (TracerPid in /proc/self/status), it gives the tracer a
 * plain exec of the program instead: a copy with the stamp's marker bit
 * cleared (so binfmt_misc does not send it back), executed by the kernel.
 * The program then runs exactly as a direct exec would, on 4 KiB pages.
 * The copy is a file, $TMPDIR/tiexec-aside-UID/KEY/NAME (a directory of
 * mode 0700, made once; KEY the hash of the program's path, NAME the name
 * it was run by, so the process's name is the program's; a copy is reused
 * while the program is unchanged and replaced when it was rebuilt, and the
 * copies of programs that are gone are removed when a copy is made),
 * because a debugger loads the symbols of the file /proc/PID/exe names;
 * where that cannot be had, a memfd.
 *
 * The same step is taken where a seccomp filter refuses a system call
 * tiexec needs on a binfmt_misc start (launch.c), where a plain execve of
 * the program would come back to tiexec.  The copy is then made by one of
 * two routes that share no system call but open and execveat, so that any
 * one refused leaves the other. */
#pragma once

#include "rt.h"

/* The tracer's PID, or 0 when not traced (or /proc cannot tell). */
long traced_by(void);

/* The copy of the program open at fd, executed with argv and envp; returns
 * only if that could not be done, saying why (then the caller loads it as
 * usual).  A copy keeps the program's holes, and is refused to a file
 * with more than 16 MiB of data past its ELF content (headers, segments,
 * sections): it costs the debugging user what the program has on disk,
 * never more than what a debugger reads of it and a small trailer. */
const char *step_aside(int fd, const char *name, char **argv, char **envp);

/* The file copy of the program open at fd (made if need be), its path in
 * path: `tiexec --aside-copy`, for gdb's support of static PIEs
 * (packaging/gdb/tiexec.py).  NULL, or why it cannot be had. */
const char *aside_copy_path(int fd, const char *name, char **envp, struct msg *path);
