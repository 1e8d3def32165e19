/* Who may change, and who may read, what a path names: the rule of root's
 * tools for every file and directory they read or change as root
 * (tiexec-warm, and tiexec-stamp --root-only, which tiexec-keep uses).
 *
 * tiexec-warm runs as root over files that other users may have written,
 * and the text cache it fills is read by every user.  So:
 *
 * - A file is used only if nobody but root (or whoever runs tiexec-warm)
 *   can change it or any directory on its resolved path: owned by root,
 *   writable by no group but root's and by nobody through a POSIX ACL
 *   entry, writable by everyone nowhere except a sticky directory above it
 *   (/tmp: others cannot rename or remove entries they do not own).
 *   Otherwise a user could steer root: name a FIFO, a device or a root-only
 *   file through a symbolic link, or swap one in after the check.
 * - A cache entry is made only for a file that everyone may read along its
 *   whole path (every directory searchable by everyone, the file readable
 *   by everyone, no ACL entry taking that away): an entry is readable by
 *   everyone, and must never show what its source did not.
 *
 * Paths are resolved once (realpath); the checks then walk the resolved
 * path with lstat, refusing a symbolic link met on the way (one swapped in
 * since), and the file is opened by its resolved path without following a
 * link and compared with what was checked (trust_open).  Every directory on
 * that path being root's, nothing can change in between. */
#pragma once

#include <stddef.h>
#include <sys/stat.h>

/* Why someone other than root (or the caller's own uid) could change the
 * file or directory `path` (absolute, resolved) or a directory above it,
 * into why (n bytes); NULL when nobody could. */
const char *trust_changeable(const char *path, char *why, size_t n);

/* Why not everyone may read the file `path` (absolute, resolved), into why;
 * NULL when everyone may. */
const char *trust_unreadable(const char *path, char *why, size_t n);

/* Opens the regular file `path` read-only and non-blocking, without
 * following a final symbolic link and without opening anything that is not
 * a regular file (a FIFO would block, a device's open acts: both are
 * looked at through an O_PATH descriptor first and never opened).  With
 * want (not NULL): the file must be that one (same device and inode).
 * Its status in *st.  The descriptor, or -1 with errno (EINVAL: not a
 * regular file; ESTALE: not the file checked). */
int trust_open(const char *path, const struct stat *want, struct stat *st);
