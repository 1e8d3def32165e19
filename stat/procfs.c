/* Reading /proc files whole (see procfs.h). */
#define _GNU_SOURCE
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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


int exe_is_loader(const char *exe)
{
	const char *base = strrchr(exe, '/');

	return base && (!strcmp(base + 1, "tiexec") || !strcmp(base + 1, "tiexec (deleted)"));
}
