/* /proc files for tiexec-stat: read whole, or a link's target. */
#pragma once

#include <stddef.h>

/* The whole of a /proc file into a malloc'ed, NUL-terminated buffer.
 * Returns 0, or an errno value. */
int read_all(const char *path, char **bufp, size_t *lenp);

/* A symbolic link's target (/proc/PID/exe), malloc'ed; "" if it cannot be
 * read. */
char *read_exe(const char *path);

/* Whether a process's exe link (read_exe) names tiexec's loader: an
 * ordinary user's process without the opt-in, whose program tiexec could
 * not put there. */
int exe_is_loader(const char *exe);
