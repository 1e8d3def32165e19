/* Reading a file whole, and replacing it atomically. */
#define _GNU_SOURCE
#include "fileio.h"
#include "why.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>


void opened_close(struct opened *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f->buf);
	f->fd = -1;
	f->path = NULL;
	f->buf = NULL;
	f->len = 0;
}

int opened_read(const char *path, enum open_mode mode, struct opened *f, char *why,
		size_t whylen)
{
	struct stat st;
	size_t got = 0;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	if (stat(path, &st) != 0)
		return fail(why, whylen, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(why, whylen, "not a regular file");
	/* Replace the file a symbolic link points to, not the link. */
	f->path = realpath(path, NULL);
	if (!f->path)
		return fail(why, whylen, "%s", strerror(errno));
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (f->fd < 0)
		return fail(why, whylen, "cannot read: %s", strerror(errno));
	if (fstat(f->fd, &f->st) != 0)
		return fail(why, whylen, "%s", strerror(errno));
	if (!S_ISREG(f->st.st_mode))
		return fail(why, whylen, "not a regular file");
	/* The result replaces the file by rename, which needs only the
	 * directory to be writable; but a file one may not write is not one
	 * to change.  (Root passes the permission check, but not a read-only
	 * file system or an immutable file; an append-only one fails at the
	 * rename.) */
	if (mode == OPEN_WRITE && faccessat(AT_FDCWD, f->path, W_OK, AT_EACCESS) != 0)
		return fail(why, whylen, "cannot write: %s", strerror(errno));
	if ((uint64_t)f->st.st_size > SIZE_MAX - 1)
		return fail(why, whylen, "too large");
	f->buf = malloc((size_t)f->st.st_size + 1);
	if (!f->buf)
		return fail(why, whylen, "out of memory");
	while (got < (size_t)f->st.st_size) {
		ssize_t n = read(f->fd, f->buf + got, (size_t)f->st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(why, whylen, "cannot read: %s", strerror(errno));
		if (n == 0)
			return fail(why, whylen, "changed while being read");
		got += (size_t)n;
	}
	f->len = got;
	return 0;
}

static int write_all(int fd, const unsigned char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The names of fd's extended attributes, NUL-separated, in a new buffer
 * (*len bytes; NULL and 0 when there are none or the file system has none). */
static int list_xattrs(int fd, char **names, ssize_t *len)
{
	*names = NULL;
	*len = 0;
	for (;;) {
		ssize_t n = flistxattr(fd, NULL, 0);

		if (n < 0 && (errno == ENOTSUP || errno == ENOSYS))
			return 0;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		free(*names);
		*names = malloc((size_t)n);
		if (!*names)
			return -1;
		*len = flistxattr(fd, *names, (size_t)n);
		if (*len >= 0)
			return 0;
		if (errno != ERANGE)
			return -1;
	}
}

static int has_name(const char *names, ssize_t len, const char *name)
{
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(names + i) + 1) {
		if (strcmp(names + i, name) == 0)
			return 1;
	}
	return 0;
}

/* Gives dst every extended attribute of src, and only those. */
static int copy_xattrs(int src, int dst, char *why, size_t whylen)
{
	char *names = NULL, *dnames = NULL, *val = NULL;
	ssize_t len, dlen;
	int rc = -1;

	if (list_xattrs(src, &names, &len) != 0) {
		fail(why, whylen, "cannot list extended attributes: %s", strerror(errno));
		goto out;
	}
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(names + i) + 1) {
		const char *name = names + i;
		ssize_t n;

		for (;;) {
			n = fgetxattr(src, name, NULL, 0);
			if (n < 0)
				break;
			free(val);
			val = malloc(n ? (size_t)n : 1);
			if (!val) {
				errno = ENOMEM;
				n = -1;
				break;
			}
			n = fgetxattr(src, name, val, (size_t)n);
			if (n >= 0 || errno != ERANGE)
				break;
		}
		if (n < 0) {
			fail(why, whylen, "cannot read extended attribute %s: %s", name, strerror(errno));
			goto out;
		}
		if (fsetxattr(dst, name, val, (size_t)n, 0) != 0) {
			fail(why, whylen, "cannot copy extended attribute %s: %s", name, strerror(errno));
			goto out;
		}
	}
	/* The new file may have got attributes of its own (a default ACL of
	 * the directory): drop those the original does not have. */
	if (list_xattrs(dst, &dnames, &dlen) != 0) {
		fail(why, whylen, "cannot list extended attributes: %s", strerror(errno));
		goto out;
	}
	for (ssize_t i = 0; i < dlen; i += (ssize_t)strlen(dnames + i) + 1) {
		if (!has_name(names, len, dnames + i) && fremovexattr(dst, dnames + i) != 0 &&
		    errno != ENODATA) {
			fail(why, whylen, "cannot remove extended attribute %s: %s", dnames + i,
			     strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	free(names);
	free(dnames);
	free(val);
	return rc;
}

/* A file with several names (hard links) is rewritten in place: a rename
 * would stamp one name only, and a build tool that links its output to
 * another name (cargo: target/release/P is a link of target/release/deps/
 * P-HASH) would link the unstamped file back at its next run.  Not atomic:
 * a crash midway leaves a broken file, as a relink would. */
static int rewrite_in_place(const struct opened *f, const unsigned char *buf, size_t len, char *why,
			    size_t whylen)
{
	struct stat now;
	int fd = open(f->path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return fail(why, whylen, "cannot write it in place (it has %ju hard links): %s",
			    (uintmax_t)f->st.st_nlink,
			    errno == ETXTBSY ? "it is running" : strerror(errno));
	int rc = -1;
	if (fstat(fd, &now) != 0 || now.st_dev != f->st.st_dev || now.st_ino != f->st.st_ino)
		fail(why, whylen, "replaced by another file meanwhile");
	else if (write_all(fd, buf, len) != 0 || ftruncate(fd, (off_t)len) != 0 || fsync(fd) != 0)
		fail(why, whylen, "cannot write it in place: %s", strerror(errno));
	else
		rc = 0;
	close(fd);
	return rc;
}

int replace_file(const struct opened *f, const unsigned char *buf, size_t len, char *why,
		 size_t whylen)
{
	if (f->st.st_nlink > 1)
		return rewrite_in_place(f, buf, len, why, whylen);

	const char *slash = strrchr(f->path, '/');
	char dir[PATH_MAX], tmp[PATH_MAX];
	struct stat now, tst;
	int fd, dfd, e;

	/* realpath gave an absolute path: there is a slash. */
	if (!slash || (size_t)(slash - f->path) + 1 > sizeof(dir))
		return fail(why, whylen, "path too long");
	memcpy(dir, f->path, (size_t)(slash - f->path));
	dir[slash - f->path] = 0;
	if (snprintf(tmp, sizeof(tmp), "%s/.tiexec-stamp.XXXXXX", dir) >= (int)sizeof(tmp))
		return fail(why, whylen, "path too long");
	fd = mkostemp(tmp, O_CLOEXEC); /* O_EXCL, mode 0600 */
	if (fd < 0)
		return fail(why, whylen, "cannot create a temporary file in %s: %s", dir[0] ? dir : "/",
			    strerror(errno));

	/* Data first: writing a file drops its security.capability. */
	if (write_all(fd, buf, len) != 0) {
		fail(why, whylen, "cannot write a temporary file: %s", strerror(errno));
		goto bad;
	}
	/* Owner before mode (chown clears set-ID bits) and before the
	 * attributes (chown drops security.capability). */
	if (fchown(fd, f->st.st_uid, f->st.st_gid) != 0) {
		e = errno;
		if (fstat(fd, &tst) != 0 || tst.st_uid != f->st.st_uid || tst.st_gid != f->st.st_gid) {
			fail(why, whylen, "cannot keep the owner: %s", strerror(e));
			goto bad;
		}
	}
	if (fchmod(fd, f->st.st_mode & ALLPERMS) != 0) {
		fail(why, whylen, "cannot keep the mode: %s", strerror(errno));
		goto bad;
	}
	if (copy_xattrs(f->fd, fd, why, whylen) != 0)
		goto bad;
	if (fsync(fd) != 0) {
		fail(why, whylen, "cannot write a temporary file: %s", strerror(errno));
		goto bad;
	}
	/* Replace the file that was read, not one put in its place since. */
	if (stat(f->path, &now) != 0 || now.st_dev != f->st.st_dev || now.st_ino != f->st.st_ino) {
		fail(why, whylen, "replaced by another file meanwhile");
		goto bad;
	}
	if (rename(tmp, f->path) != 0) {
		fail(why, whylen, "cannot replace it: %s", strerror(errno));
		goto bad;
	}
	close(fd);
	/* Make the rename durable.  It has happened: a failure here is not a
	 * reason to report the stamp as failed. */
	dfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
bad:
	close(fd);
	unlink(tmp);
	return -1;
}
