/*
 * bench-help: the small steps of scripts/bench and scripts/peers that the
 * shell cannot take.
 *
 *   bench-help drop FILE...      evict FILE's clean pages from the page cache
 *   bench-help hugeread FILE...  read FILE through a 2 MiB-aligned mapping
 *                                advised MADV_HUGEPAGE, so that the page
 *                                cache holds it in 2 MiB folios where the
 *                                file system can ("the kernel alone")
 *   bench-help collapse FILE     MADV_COLLAPSE of FILE's first 2 MiB mapped
 *                                read-only and executable, as text is: prints
 *                                "ok" or why not (the kernel's file THP,
 *                                CONFIG_READ_ONLY_THP_FOR_FS)
 *   bench-help nothp CMD [ARG...]  run CMD with THP disabled for it and its
 *                                children (PR_SET_THP_DISABLE, kept across
 *                                execve): "THP disabled" without changing
 *                                the machine's setting
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define PMD (2UL << 20)

static int drop(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fdatasync(fd) != 0) {
		perror(path);
		return 1;
	}
	int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	if (e != 0) {
		fprintf(stderr, "bench-help: %s: %s\n", path, strerror(e));
		return 1;
	}
	return 0;
}

/* map_aligned: FILE mapped with PROT at a 2 MiB boundary; NULL on failure. */
static char *map_aligned(const char *path, int prot, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(path);
		return NULL;
	}
	size_t len = ((size_t)st.st_size + PMD - 1) & ~(PMD - 1);
	/* Reserve one piece more than needed, then map the file at the first
	 * 2 MiB boundary in it: file offset 0 lands on a PMD. */
	char *area = mmap(NULL, len + PMD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *m = MAP_FAILED;
	if (area != MAP_FAILED) {
		char *at = (char *)(((uintptr_t)area + PMD - 1) & ~(PMD - 1));
		m = mmap(at, (size_t)st.st_size, prot, MAP_PRIVATE | MAP_FIXED, fd, 0);
	}
	close(fd);
	if (m == MAP_FAILED) {
		perror(path);
		return NULL;
	}
	*size = (size_t)st.st_size;
	return m;
}

static int hugeread(const char *path)
{
	size_t size;
	char *m = map_aligned(path, PROT_READ, &size);
	if (!m)
		return 1;
	if (madvise(m, size, MADV_HUGEPAGE) != 0 || madvise(m, size, MADV_POPULATE_READ) != 0) {
		perror("madvise");
		return 1;
	}
	return 0;
}

static int collapse(const char *path)
{
	size_t size;
	char *m = map_aligned(path, PROT_READ | PROT_EXEC, &size);
	if (!m || size < PMD)
		return 1;
	if (madvise(m, PMD, MADV_HUGEPAGE) != 0 || madvise(m, PMD, MADV_COLLAPSE) != 0)
		printf("%s\n", strerror(errno));
	else
		printf("ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc >= 3 && strcmp(argv[1], "drop") == 0) {
		for (int i = 2; i < argc; i++)
			rc |= drop(argv[i]);
		return rc;
	}
	if (argc >= 3 && strcmp(argv[1], "hugeread") == 0) {
		for (int i = 2; i < argc; i++)
			rc |= hugeread(argv[i]);
		return rc;
	}
	if (argc == 3 && strcmp(argv[1], "collapse") == 0)
		return collapse(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "nothp") == 0) {
		if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) {
			perror("prctl");
			return 126;
		}
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	fprintf(stderr, "usage: bench-help drop|hugeread FILE... | collapse FILE | nothp CMD [ARG...]\n");
	return 2;
}
