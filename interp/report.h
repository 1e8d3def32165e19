/* The loader's only output: one line per message on stderr, always
 * "tiexec: 'PATH': what", as the project's error convention asks.  Every
 * message, and every exit before the program runs, goes through here.
 * It keeps no setting of its own: whether -v is on is passed in. */
#pragma once

#include <stdint.h>

#include "rt.h"

/* Writes m, ending it with a newline (a full buffer is cut, never run on). */
void say(struct msg *m);
/* Starts m with "tiexec: 'PATH': " (a long path shown as head...tail). */
void msg_head(struct msg *m, const char *path);
/* "tiexec: 'PATH': what[: detail]" and exit with status. */
__attribute__((noreturn)) void die(const char *path, const char *what, const char *detail, int status);
/* The errno's text; 127 for ENOENT/ENOTDIR, else 126.  EPERM and ENOSYS
 * (what a seccomp filter or sandbox answers for a system call it refuses)
 * first go to the function report_on_refused set, if any. */
__attribute__((noreturn)) void die_errno(const char *path, const char *what, long err);
/* fn(arg) is called (once) where die_errno meets EPERM or ENOSYS, instead
 * of the error: the driver sets a plain execve of the program while
 * nothing of the program's has run yet, and takes it back (NULL) when that
 * stops being true.  fn does not return unless it failed. */
void report_on_refused(void (*fn)(void *), void *arg);
/* Where an error is reported other than by die_errno: err (negative) goes
 * to that function first if it is EPERM or ENOSYS. */
void report_refusal(long err);
/* m, built by the caller, and exit with status. */
__attribute__((noreturn)) void die_msg(struct msg *m, int status);
/* "tiexec: what: why (see tiexec --help)", exit 125. */
__attribute__((noreturn)) void die_usage(const char *what, const char *why);
/* "tiexec: 'PATH': what" when verbose (-v), else nothing. */
void verbose_note(int verbose, const char *path, const char *what);
