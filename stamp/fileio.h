/* Reading a file whole, and replacing it atomically with new contents while
 * keeping its mode, owner and extended attributes.  Never prints: failures
 * come back as a short reason in `why` (errno text included). */
#pragma once

#include <stddef.h>
#include <sys/stat.h>

struct opened {
	int fd;             /* open for reading; -1 when closed */
	struct stat st;     /* fstat of fd */
	char *path;         /* the file to replace: the symbolic links resolved */
	unsigned char *buf; /* its contents */
	size_t len;
};

enum open_mode { OPEN_READ, OPEN_WRITE };
/* Opens path (following symbolic links), checks that it is a regular file,
 * and for OPEN_WRITE that it could be written (permission, read-only file
 * system, immutable), then reads it whole.  0 on success, -1 with why.
 * opened_close frees what was opened, also after a failure. */
int opened_read(const char *path, enum open_mode mode, struct opened *f, char *why,
		size_t whylen);
void opened_close(struct opened *f);

/* Replaces f->path with buf[0..len): a temporary file in the same directory
 * (O_EXCL, mode 0600), written and given f's owner, mode and every extended
 * attribute, fsync'ed, renamed over the original, and the directory
 * fsync'ed.  On failure the original is untouched and the temporary file
 * gone.  A file with several hard links is rewritten in place instead, so
 * that every name keeps it.  0 on success, -1 with why. */
int replace_file(const struct opened *f, const unsigned char *buf, size_t len, char *why,
		 size_t whylen);
