/* Who may change, and who may read, what a path names (see trust.h). */
#define _GNU_SOURCE
#include "trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

/* ---- POSIX ACLs: the system.posix_acl_access attribute ----
 * A 4-byte version (2), then entries of a 2-byte tag, 2-byte permission
 * bits and a 4-byte uid or gid, little-endian (linux/posix_acl_xattr.h). */

enum { ACL_USER_OBJ = 1, ACL_USER = 2, ACL_GROUP_OBJ = 4, ACL_GROUP = 8, ACL_MASK = 0x10, ACL_OTHER = 0x20 };

struct acl_entry {
	uint16_t tag, perm;
	uint32_t id;
};

#define ACL_MAX 256

/* path's access ACL into e: how many entries (0: none), or -1 when it
 * cannot be read whole (then nothing can be said of who it lets in). */
static int acl_read(const char *path, struct acl_entry *e)
{
	unsigned char b[4 + ACL_MAX * 8];
	ssize_t n = lgetxattr(path, "system.posix_acl_access", b, sizeof(b));
	uint32_t version;

	if (n < 0)
		return errno == ENODATA || errno == ENOTSUP ? 0 : -1;
	if (n < 4 || (n - 4) % 8)
		return -1;
	memcpy(&version, b, 4);
	if (version != 2)
		return -1;
	int k = 0;
	for (ssize_t o = 4; o < n; o += 8, k++) {
		memcpy(&e[k].tag, b + o, 2);
		memcpy(&e[k].perm, b + o + 2, 2);
		memcpy(&e[k].id, b + o + 4, 4);
	}
	return k;
}

/* The permission bits an entry really grants: named entries and the owning
 * group are limited by the mask. */
static unsigned acl_grants(const struct acl_entry *e, int n, int i)
{
	unsigned mask = 7;

	if (e[i].tag != ACL_USER && e[i].tag != ACL_GROUP && e[i].tag != ACL_GROUP_OBJ)
		return e[i].perm;
	for (int k = 0; k < n; k++)
		if (e[k].tag == ACL_MASK)
			mask = e[k].perm;
	return e[i].perm & mask;
}

/* ---- one file or directory ---- */

typedef const char *(*node_check)(const char *p, const struct stat *st, int leaf, char *why, size_t n);

/* Why someone other than root (or us) may change p. */
static const char *node_changeable(const char *p, const struct stat *st, int leaf, char *why, size_t n)
{
	struct acl_entry e[ACL_MAX];
	uid_t me = geteuid();

	if (S_ISLNK(st->st_mode))
		return snprintf(why, n, "'%s' became a symbolic link after it was resolved", p), why;
	if (st->st_uid != 0 && st->st_uid != me)
		return snprintf(why, n, "'%s' is owned by uid %u", p, (unsigned)st->st_uid), why;
	if ((st->st_mode & S_IWOTH) && (leaf || !S_ISDIR(st->st_mode) || !(st->st_mode & S_ISVTX)))
		return snprintf(why, n, "'%s' is writable by everyone", p), why;
	if (!(st->st_mode & S_IWGRP))
		return NULL;
	/* Group write: with an ACL these bits are its mask, and who may
	 * write is in its entries. */
	int k = acl_read(p, e);
	if (k < 0)
		return snprintf(why, n, "'%s' has an access ACL that cannot be read", p), why;
	if (k == 0)
		return st->st_gid == 0 ? NULL : (snprintf(why, n, "'%s' is writable by group %u", p, (unsigned)st->st_gid), why);
	for (int i = 0; i < k; i++) {
		if (!(acl_grants(e, k, i) & 2))
			continue;
		if (e[i].tag == ACL_USER && e[i].id != 0 && e[i].id != me)
			return snprintf(why, n, "'%s' is writable by uid %u (an ACL entry)", p, (unsigned)e[i].id), why;
		if (e[i].tag == ACL_GROUP && e[i].id != 0)
			return snprintf(why, n, "'%s' is writable by group %u (an ACL entry)", p, (unsigned)e[i].id), why;
		if (e[i].tag == ACL_GROUP_OBJ && st->st_gid != 0)
			return snprintf(why, n, "'%s' is writable by group %u", p, (unsigned)st->st_gid), why;
	}
	return NULL;
}

/* Why not everyone may read p (a file, the leaf) or search it (a
 * directory above). */
static const char *node_unreadable(const char *p, const struct stat *st, int leaf, char *why, size_t n)
{
	struct acl_entry e[ACL_MAX];
	unsigned need = leaf ? 4 : 1;
	const char *what = leaf ? "readable" : "searchable";

	if (S_ISLNK(st->st_mode))
		return snprintf(why, n, "'%s' became a symbolic link after it was resolved", p), why;
	/* The group class (the owning group, or with an ACL its mask) and
	 * everyone else. */
	if (!((st->st_mode >> 3) & need) || !(st->st_mode & need))
		return snprintf(why, n, "'%s' is not %s by everyone (mode %04o)", p, what, (unsigned)(st->st_mode & ALLPERMS)),
		       why;
	int k = acl_read(p, e);
	if (k < 0)
		return snprintf(why, n, "'%s' has an access ACL that cannot be read", p), why;
	for (int i = 0; i < k; i++)
		if ((e[i].tag == ACL_USER || e[i].tag == ACL_GROUP || e[i].tag == ACL_GROUP_OBJ) &&
		    !(acl_grants(e, k, i) & need))
			return snprintf(why, n, "'%s' is not %s by everyone (an ACL entry for %s %u)", p, what,
					e[i].tag == ACL_USER ? "uid" : "group",
					e[i].tag == ACL_GROUP_OBJ ? (unsigned)st->st_gid : (unsigned)e[i].id),
			       why;
	return NULL;
}

/* check() on path and on every directory above it, up to "/". */
static const char *walk(const char *path, node_check check, char *why, size_t n)
{
	char p[PATH_MAX];

	if (path[0] != '/' || strlen(path) >= sizeof(p))
		return snprintf(why, n, "'%s' is not an absolute path", path), why;
	strcpy(p, path);
	for (int leaf = 1;; leaf = 0) {
		struct stat st;
		if (lstat(p, &st) < 0)
			return snprintf(why, n, "'%s' cannot be looked at: %s", p, strerror(errno)), why;
		const char *w = check(p, &st, leaf, why, n);
		if (w)
			return w;
		char *slash = strrchr(p, '/');
		if (p[1] == '\0')
			return NULL;
		if (slash == p)
			p[1] = '\0';
		else
			*slash = '\0';
	}
}

const char *trust_changeable(const char *path, char *why, size_t n)
{
	return walk(path, node_changeable, why, n);
}

const char *trust_unreadable(const char *path, char *why, size_t n)
{
	return walk(path, node_unreadable, why, n);
}

int trust_open(const char *path, const struct stat *want, struct stat *st)
{
	char proc[64];
	int p = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (p < 0)
		return -1;
	if (fstat(p, st) < 0) {
		int e = errno;
		close(p);
		return errno = e, -1;
	}
	if (!S_ISREG(st->st_mode) || (want && (st->st_dev != want->st_dev || st->st_ino != want->st_ino))) {
		close(p);
		return errno = S_ISREG(st->st_mode) ? ESTALE : S_ISLNK(st->st_mode) ? ELOOP : EINVAL, -1;
	}
	/* Opened through the descriptor that was looked at: the very file. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p);
	int fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM) /* O_NOATIME on another's file without CAP_FOWNER */
		fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) { /* no /proc: by name, then compared */
		struct stat again;
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && (fstat(fd, &again) < 0 || again.st_dev != st->st_dev || again.st_ino != st->st_ino)) {
			close(fd);
			fd = -1;
			errno = ESTALE;
		}
	}
	int e = errno;
	close(p);
	errno = e;
	return fd;
}
