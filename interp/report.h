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
/* The errno's text; 127 for ENOENT/ENOTDIR, else 126.  (A call that a
 * seccomp filter or sandbox refused, EPERM or ENOSYS, is the stage's to
 * get round first: launch.c's refused.) */
__attribute__((noreturn)) void die_errno(const char *path, const char *what, long err);
/* m, built by the caller, and exit with status. */
__attribute__((noreturn)) void die_msg(struct msg *m, int status);
/* "tiexec: what: why (see tiexec --help)", exit 125. */
__attribute__((noreturn)) void die_usage(const char *what, const char *why);
/* "tiexec: 'PATH': what" when verbose (-v), else nothing. */
void verbose_note(int verbose, const char *path, const char *what);
