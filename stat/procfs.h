/* /proc files for tiexec-stat: read whole, or a link's target; which
 * processes run tiexec's loader; a process's files opened as its owner
 * could open them. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The whole of a /proc file into a malloc'ed, NUL-terminated buffer.
 * Returns 0, or an errno value. */
int read_all(const char *path, char **bufp, size_t *lenp);

/* A symbolic link's target (/proc/PID/exe), malloc'ed; "" if it cannot be
 * read. */
char *read_exe(const char *path);

/* The loaders whose processes run through tiexec, known by their files:
 * the installed one (TIEXEC_LOADER_PATH), the build tree's beside this
 * tool (build/interp/tiexec for build/stat/tiexec-stat), and the one the
 * caller names (TIEXEC_LOADER, or NULL).  A process runs through tiexec
 * when its exe is one of these files (the same device and inode): a
 * program a user merely named "tiexec" does not. */
#define LOADERS_MAX 3
struct loaders {
	size_t n;
	struct loader_file {
		unsigned long dev, ino;
		char path[4096];
	} f[LOADERS_MAX];
};
void loaders_find(struct loaders *l, const char *named);

/* Whether process pid's exe is one of l's files.  A loader replaced since
 * the process started (a package upgrade) still counts: its exe link then
 * reads "PATH (deleted)" for one of l's paths, and the file is root's and
 * has no name left. */
int proc_runs_loader(long pid, const struct loaders *l);

/* Whether the mapping of device maj:min, inode ino (a maps line) is one of
 * l's files. */
int loaders_map(const struct loaders *l, unsigned maj, unsigned min, unsigned long ino);

/* Opens path (absolute, as process pid sees it) for reading, as that
 * process's owner could: resolved inside the process's root directory
 * (an absolute symbolic link there stays there, no /proc magic link is
 * followed), with the caller's file-system identity lowered to the
 * owner's uid and gid and no supplementary group (when the caller is root
 * and the owner is not), without blocking on a FIFO, and only a regular
 * file.  A descriptor, or -1 with errno (EINVAL: not a regular file). */
int proc_open_as_owner(long pid, const char *path);

/* Opens the file process pid maps at [lo, hi): through the kernel's
 * /proc/PID/map_files link (the very file, whatever its path names now;
 * needs CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN), else, unless deleted, by
 * path as the process's owner could (proc_open_as_owner), and only if it
 * is still inode ino.  A descriptor, or -1 with errno (ESTALE: replaced). */
int proc_open_mapping(long pid, uint64_t lo, uint64_t hi, const char *path, int deleted, uint64_t ino);
