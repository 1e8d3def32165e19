/* Reading /proc files, and what a process may claim about itself (see procfs.h). */
#define _GNU_SOURCE
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef TIEXEC_LOADER_PATH
#define TIEXEC_LOADER_PATH "/usr/libexec/tiexec/tiexec"
#endif

/* The whole of a /proc file into a malloc'ed, NUL-terminated buffer.
 * Returns 0, or an errno value. */
int read_all(const char *path, char **bufp, size_t *lenp)
{
	size_t cap = 65536, len = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return ENOMEM;
	}
	for (;;) {
		if (cap - len < 2) {
			char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				close(fd);
				return ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

/* /proc/PID/exe's target, malloc'ed; "" if it cannot be read. */
char *read_exe(const char *path)
{
	for (size_t cap = 256; cap <= (1u << 20); cap *= 2) {
		char *b = malloc(cap);
		if (!b)
			break;
		ssize_t r = readlink(path, b, cap);
		if (r < 0) {
			free(b);
			break;
		}
		if ((size_t)r < cap) {
			b[r] = '\0';
			return b;
		}
		free(b);
	}
	return strdup("");
}


static void loader_add(struct loaders *l, const char *path)
{
	struct stat st;

	if (l->n == LOADERS_MAX || !*path || strlen(path) >= sizeof(l->f[0].path) || stat(path, &st) != 0 ||
	    !S_ISREG(st.st_mode))
		return;
	for (size_t i = 0; i < l->n; i++)
		if (l->f[i].dev == st.st_dev && l->f[i].ino == st.st_ino)
			return;
	l->f[l->n].dev = st.st_dev;
	l->f[l->n].ino = st.st_ino;
	strcpy(l->f[l->n].path, path);
	l->n++;
}

void loaders_find(struct loaders *l, const char *named)
{
	char *self = read_exe("/proc/self/exe");

	l->n = 0;
	loader_add(l, TIEXEC_LOADER_PATH);
	/* build/stat/tiexec-stat -> build/interp/tiexec */
	char *slash = strrchr(self, '/');
	if (slash) {
		*slash = '\0';
		slash = strrchr(self, '/');
	}
	if (slash) {
		char p[4096];
		*slash = '\0';
		if (snprintf(p, sizeof(p), "%s/interp/tiexec", self) < (int)sizeof(p))
			loader_add(l, p);
	}
	free(self);
	if (named)
		loader_add(l, named);
}

int proc_runs_loader(long pid, const struct loaders *l)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	if (stat(path, &st) != 0)
		return 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->f[i].dev == st.st_dev && l->f[i].ino == st.st_ino)
			return 1;
	if (st.st_nlink != 0 || st.st_uid != 0)
		return 0;
	char *exe = read_exe(path);
	int yes = 0;
	size_t n = strlen(exe);
	for (size_t i = 0; i < l->n && !yes; i++) {
		size_t k = strlen(l->f[i].path);
		yes = n == k + 10 && !strncmp(exe, l->f[i].path, k) && !strcmp(exe + k, " (deleted)");
	}
	free(exe);
	return yes;
}

int loaders_map(const struct loaders *l, unsigned maj, unsigned min, unsigned long ino)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->f[i].ino == ino && major(l->f[i].dev) == maj && minor(l->f[i].dev) == min)
			return 1;
	return 0;
}

/* Root's file-system identity lowered to uid:gid with no supplementary
 * group, its groups saved in groups (*ngroups of them); or, called again
 * with those, put back.  Lowering needs CAP_SETGID and CAP_SETUID, which
 * a unit's bounding set may lack: then nothing was changed (*ngroups
 * stays -1) and -1 says so, and the file is not opened. */
static int lower_to(uid_t uid, gid_t gid, gid_t *groups, int *ngroups)
{
	if (*ngroups >= 0) {
		setfsuid(0);
		setfsgid(0);
		return setgroups((size_t)*ngroups, groups);
	}
	int n = getgroups(NGROUPS_MAX, groups);
	if (n < 0 || setgroups(0, NULL) != 0)
		return -1;
	*ngroups = n;
	setfsgid(gid);
	setfsuid(uid);
	return (uid_t)setfsuid((uid_t)-1) == uid && (gid_t)setfsgid((gid_t)-1) == gid ? 0 : -1;
}

int proc_open_as_owner(long pid, const char *path)
{
	static gid_t groups[NGROUPS_MAX];
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char p[64];
	struct stat owner, st;
	int ngroups = -1, fd = -1, e = EPERM;

	snprintf(p, sizeof(p), "/proc/%ld", pid);
	if (stat(p, &owner) != 0)
		return -1;
	snprintf(p, sizeof(p), "/proc/%ld/root", pid);
	int root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	int lower = geteuid() == 0 && owner.st_uid != 0;
	while (*path == '/')
		path++;
	if (!lower || lower_to(owner.st_uid, owner.st_gid, groups, &ngroups) == 0) {
		fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
		e = errno;
	}
	if (ngroups >= 0 && lower_to(0, 0, groups, &ngroups) != 0)
		abort(); /* root's own identity could not be put back: stop here */
	close(root);
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
		e = EINVAL;
	}
	errno = e;
	return fd;
}

int proc_open_mapping(long pid, uint64_t lo, uint64_t hi, const char *path, int deleted, uint64_t ino)
{
	char p[96];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%ld/map_files/%" PRIx64 "-%" PRIx64, pid, lo, hi);
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && !deleted)
		fd = proc_open_as_owner(pid, path);
	if (fd >= 0 && (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != ino)) {
		close(fd);
		fd = -1;
		errno = ESTALE;
	}
	return fd;
}
