/* /proc files for tiexec-stat: read whole, or a link's target. */
#pragma once

#include <stddef.h>

/* The whole of a /proc file into a malloc'ed, NUL-terminated buffer.
 * Returns 0, or an errno value. */
int read_all(const char *path, char **bufp, size_t *lenp);

/* A symbolic link's target (/proc/PID/exe), malloc'ed; "" if it cannot be
 * read. */
char *read_exe(const char *path);
