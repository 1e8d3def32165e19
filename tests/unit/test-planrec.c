/* Plan records (common/planrec.c): a walk encoded and read back, checked
 * against the files it names; a record that is cut short, of another
 * format, or whose offsets leave its pool is refused with a reason, never
 * read past; one made for another ld.so or another directory is refused;
 * a library that changed since makes the walk stale. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "planrec.h"
#include "tap.h"

static struct walk w;
static char rec[PLANREC_MAX];
static char dir[] = "/tmp/test-planrec.XXXXXX";

/* A file of n bytes in dir: its path (static) and identity. */
static const char *file(const char *name, size_t n, struct statx *st)
{
	static char p[2][256];
	static int k;
	char *path = p[k++ % 2];

	snprintf(path, sizeof(p[0]), "%s/%s", dir, name);
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)n) < 0 || close(fd) < 0 ||
	    statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, st) < 0) {
		perror(path);
		exit(1);
	}
	return path;
}

/* A pool string appended to w: its offset. */
static uint16_t put(const char *s)
{
	uint16_t at = (uint16_t)w.used;
	memcpy(w.pool + w.used, s, strlen(s) + 1);
	w.used += (unsigned)strlen(s) + 1;
	return at;
}

/* w: two libraries, the second libc (a window candidate), found in dir. */
static void make_walk(void)
{
	struct statx st;

	memset(&w, 0, sizeof(w));
	w.used = 1;
	w.complete = 1;
	w.origin_used = 1;
	w.n = 2;
	w.lib[0] = (struct walk_lib){ .req = { .len = 1 << 20 }, .how = 1, .fd = 7 };
	w.lib[0].path = put(file("libone.so", 4096, &st));
	walk_id_of(&st, &w.lib[0].id);
	w.lib[1] = (struct walk_lib){ .req = { .len = 2 << 20 }, .how = 2, .win_at = 0x31000, .ro_end = 0x1cf000, .fd = -1 };
	w.lib[1].path = put(file("libc.so.6", 8192, &st));
	walk_id_of(&st, &w.lib[1].id);
}

/* The record's n bytes in a file of their own: its descriptor. */
static int record_fd(const void *b, size_t n)
{
	int fd = memfd_create("rec", 0);

	if (fd < 0 || write(fd, b, n) != (ssize_t)n) {
		perror("memfd");
		exit(1);
	}
	return fd;
}

/* planrec_load of the n bytes at b for ld.so ld in directory origin. */
static const char *load(const void *b, size_t n, const struct statx *ld, const char *origin)
{
	int fd = record_fd(b, n);
	const char *why = planrec_load(fd, &w, ld, 1);

	close(fd);
	if (!why && w.origin_used && strcmp(w.origin, origin))
		why = "another directory";
	return why;
}

int main(void)
{
	struct statx ld, other;
	const struct walk_lib *l;

	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	file("ld.so", 100, &ld);
	file("ld2.so", 200, &other);
	make_walk();
	size_t n = planrec_encode(&w, &ld, 36, dir, rec, sizeof(rec));
	ok(n > 0, "a walk of two libraries encodes (%zu bytes)", n);
	ok(planrec_encode(&w, &ld, 36, dir, rec, 64) == 0, "not into a buffer too small");

	const char *why = load(rec, n, &ld, dir);
	ok(!why, "it reads back (%s)", why ? why : "read");
	ok(w.rec && w.n == 2 && w.glibc_minor == 36 && w.complete && w.lib[0].fd == -1 && w.lib[1].fd == -1,
	   "as a walk of two libraries, glibc 2.36, no descriptor of the writer's");
	ok(w.ncand == 2, "libc, a window candidate, is the last that may be a target (ncand %u)", w.ncand);
	ok(strcmp(walk_str(&w, w.lib[1].path), walk_str(&w, w.lib[1].path)) == 0 &&
	   strstr(walk_str(&w, w.lib[1].path), "/libc.so.6") != NULL, "its paths are in the pool");
	ok((l = planrec_next(&w)) && l == &w.lib[0] && (l = planrec_next(&w)) && l == &w.lib[1] && !planrec_next(&w) &&
	   !w.stale, "each library checked against its file, in order, then none");

	ok(load(rec, n, &other, dir) && !strcmp(load(rec, n, &other, dir), "made for another ld.so"),
	   "refused for another ld.so");
	ok(load(rec, n, &ld, "/elsewhere") != NULL, "refused for a program in another directory ($ORIGIN)");
	for (size_t cut = 0; cut < n; cut += 97)
		if (!load(rec, cut, &ld, dir))
			ok(0, "a record cut at %zu bytes is refused", cut);
	ok(1, "a record cut short anywhere is refused");
	char bad[sizeof(rec)];
	memcpy(bad, rec, n);
	bad[0] ^= 1;
	ok(load(bad, n, &ld, dir) != NULL, "another format (magic) is refused");
	memcpy(bad, rec, n);
	bad[n - 1] = 'x';
	ok(load(bad, n, &ld, dir) != NULL, "a pool whose last string does not end is refused");
	/* The header's n: 12 bytes in (magic, lib_size). */
	memcpy(bad, rec, n);
	uint32_t big = WALK_MAX + 1;
	memcpy(bad + 12, &big, sizeof(big));
	ok(load(bad, n, &ld, dir) != NULL, "more libraries than a walk holds is refused");
	/* A library's path past the pool. */
	make_walk();
	w.lib[1].path = (uint16_t)(w.used + 100);
	n = planrec_encode(&w, &ld, 36, dir, rec, sizeof(rec));
	ok(n && load(rec, n, &ld, dir) != NULL, "a path outside the pool is refused");

	/* A library changed since (a new file under its name). */
	make_walk();
	n = planrec_encode(&w, &ld, 36, dir, rec, sizeof(rec));
	struct statx st;
	unlink(walk_str(&w, w.lib[1].path));
	file("libc.so.6", 8192, &st);
	ok(!load(rec, n, &ld, dir), "the record still reads");
	ok(planrec_next(&w) && !planrec_next(&w) && w.stale, "the changed library makes the walk stale");

	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return tap_done();
}
