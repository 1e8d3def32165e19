/* Which package owns a file (dpkg, rpm). */
#pragma once

#include <stddef.h>

/* 1 when a package manager lists the file at path (absolute, symbolic
 * links resolved) as one of its package's files, with "the Debian package
 * NAME" or "the RPM package NAME" in pkg; 0 when none does or none is
 * installed. */
int package_owner(const char *path, char *pkg, size_t pkglen);
