/* cconv_scan (interp/cacheconv.c) on this process's own mappings: which
 * 2 MiB pieces are huge, through PAGEMAP_SCAN and through the smaps reader
 * that kernels before 6.7 get (compat), with hundreds of mappings and a
 * mapping name longer than a page in front of the range asked about.  As
 * root, cconv_populate_shmem and cconv_scan_shmem on a file of a tmpfs
 * mounted huge=always (the text cache's kind), in a mount namespace of
 * the test's own, as on 5.10 (one touch per piece; smaps) and as on 6.1
 * (MADV_COLLAPSE). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cacheconv.h"
#include "tap.h"

#define HUGE (2ULL << 20)

/* A 2 MiB-aligned anonymous range of n pieces, faulted in; huge asks for
 * THP (MADV_HUGEPAGE) or forbids it. */
static uint64_t region(unsigned n, int huge)
{
	uint8_t *p = mmap(NULL, (n + 1) * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	uint64_t a = ((uint64_t)(uintptr_t)p + HUGE - 1) & ~(HUGE - 1);
	madvise((void *)(uintptr_t)a, n * HUGE, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset((void *)(uintptr_t)a, 1, n * HUGE);
	return a;
}

static int scan(int compat, uint64_t a, unsigned n, uint8_t *hs)
{
	struct cconv c = CCONV_INIT(compat);
	int r = cconv_scan(&c, a, a + n * HUGE, hs);
	cconv_close(&c);
	return r;
}

/* A file whose path is longer than a page, mapped below `below`; the
 * file and its directories are gone again (the name stays, "(deleted)"). */
static int long_named_mapping(uint64_t below)
{
	char dir[] = "/tmp/test-cacheconv.XXXXXX", name[200];
	int depth, fd;
	void *m = MAP_FAILED;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	if (!mkdtemp(dir) || chdir(dir) != 0)
		return -1;
	for (depth = 0; depth < 22 && mkdir(name, 0700) == 0 && chdir(name) == 0; depth++)
		;
	fd = open("f", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (depth == 22 && fd >= 0 && ftruncate(fd, 4096) == 0)
		m = mmap((void *)(uintptr_t)(below - 64 * HUGE), 4096, PROT_READ, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (fd >= 0)
		close(fd);
	unlink("f");
	for (; depth > 0 && chdir("..") == 0; depth--)
		rmdir(name);
	if (chdir("/") == 0)
		rmdir(dir);
	return m == MAP_FAILED ? -1 : 0;
}

/* n pieces of a file on a huge tmpfs at dir, mapped private and 2 MiB
 * aligned, read-only; advice before any fault (0 for none). */
static uint64_t shmem_region(const char *dir, unsigned n, int advice)
{
	char path[256];
	static char piece[2 << 20];
	int fd;

	snprintf(path, sizeof(path), "%s/f%d", dir, advice);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	memset(piece, 7, sizeof(piece));
	for (unsigned i = 0; fd >= 0 && i < n; i++)
		if (write(fd, piece, sizeof(piece)) != (ssize_t)sizeof(piece))
			return 0;
	uint8_t *r = mmap(NULL, (n + 1) * HUGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || r == MAP_FAILED)
		return 0;
	uint64_t a = ((uint64_t)(uintptr_t)r + HUGE - 1) & ~(HUGE - 1);
	void *m = mmap((void *)(uintptr_t)a, n * HUGE, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	if (advice)
		madvise(m, n * HUGE, advice);
	return a;
}

static void shmem_cases(void)
{
	char dir[] = "/tmp/test-cacheconv.XXXXXX";
	uint8_t hs[4], want[4];
	struct cconv c510 = CCONV_INIT(CCONV_COMPAT_5_10), c61 = CCONV_INIT(CCONV_COMPAT_6_1);

	if (geteuid() != 0 || unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    !mkdtemp(dir) || mount("tmpfs", dir, "tmpfs", 0, "huge=always,size=64m") != 0) {
		diag("not root, or no tmpfs of our own: the huge-tmpfs cases are left out");
		return;
	}
	/* 5.10: one touch per piece maps all of it. */
	uint64_t a = shmem_region(dir, 2, 0);
	ok(a && cconv_populate_shmem(&c510, a, 2 * HUGE) == 0, "5.10: populate");
	ok(a && scan(0, a, 2, hs) == 0 && hs[0] && hs[1], "5.10: one touch a piece maps each piece whole");
	memset(hs, 9, sizeof(hs));
	ok(a && cconv_scan_shmem(&c510, a, a + 2 * HUGE, hs) == 0 && hs[0] == 1 && hs[1] == 1, "5.10: smaps says so");
	/* 6.1: MADV_COLLAPSE says so. */
	memset(hs, 9, sizeof(hs));
	ok(a && cconv_scan_shmem(&c61, a, a + 2 * HUGE, hs) == 0 && hs[0] == 1 && hs[1] == 1,
	   "6.1: MADV_COLLAPSE says so");
	/* Faulted in small first (MADV_NOHUGEPAGE), then allowed: MADV_COLLAPSE
	 * maps the huge folios, and says they are. */
	uint64_t b = shmem_region(dir, 2, MADV_NOHUGEPAGE);
	ok(b && cconv_populate_shmem(&c61, b, 2 * HUGE) == 0 && scan(0, b, 2, want) == 0, "small: populate");
	memset(hs, 9, sizeof(hs));
	ok(b && cconv_scan_shmem(&c61, b, b + 2 * HUGE, hs) == 0 && !memcmp(hs, want, 2),
	   "6.1: with MADV_NOHUGEPAGE, as PAGEMAP_SCAN (%d %d)", want[0], want[1]);
	memset(hs, 9, sizeof(hs));
	ok(b && cconv_scan_shmem(&c510, b, b + 2 * HUGE, hs) == 0 && !memcmp(hs, want, 2),
	   "5.10: with MADV_NOHUGEPAGE, as PAGEMAP_SCAN");
	if (b && !want[0] && !want[1]) {
		madvise((void *)(uintptr_t)b, 2 * HUGE, MADV_HUGEPAGE);
		memset(hs, 9, sizeof(hs));
		ok(cconv_scan_shmem(&c61, b, b + 2 * HUGE, hs) == 0 && hs[0] == 1 && hs[1] == 1 &&
			   scan(0, b, 2, want) == 0 && want[0] && want[1],
		   "6.1: PTE-mapped huge folios: MADV_COLLAPSE maps them by PMD");
	}
	cconv_close(&c510);
	cconv_close(&c61);
	if (a)
		munmap((void *)(uintptr_t)a, 2 * HUGE);
	if (b)
		munmap((void *)(uintptr_t)b, 2 * HUGE);
	umount(dir);
	rmdir(dir);
}

int main(void)
{
	uint8_t hs[4];
	uint64_t a = region(2, 1), b = region(2, 0);

	if (!a || !b) {
		ok(0, "mmap");
		return tap_done();
	}
	if (scan(0, a, 2, hs) != 0 || !hs[0] || !hs[1]) {
		/* THP off (enabled=never) or none left: nothing to tell apart. */
		printf("1..0 # SKIP no anonymous 2 MiB pages here (THP disabled?)\n");
		return 0;
	}
	for (int compat = 0; compat < 2; compat++) {
		const char *how = compat ? "smaps" : "PAGEMAP_SCAN";
		memset(hs, 9, sizeof(hs));
		ok(scan(compat, a, 2, hs) == 0 && hs[0] == 1 && hs[1] == 1, "%s: a THP range is huge", how);
		memset(hs, 9, sizeof(hs));
		ok(scan(compat, b, 2, hs) == 0 && hs[0] == 0 && hs[1] == 0, "%s: a MADV_NOHUGEPAGE range is not", how);
	}

	/* 400 mappings in front of the range (every other one inaccessible,
	 * so none merge): some 500 KiB of smaps before it. */
	uint64_t at = a - 8 * HUGE;
	int made = 0;
	for (int i = 0; i < 400; i++, at -= 4096)
		made += mmap((void *)(uintptr_t)at, 4096, i % 2 ? PROT_NONE : PROT_READ,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != MAP_FAILED;
	memset(hs, 9, sizeof(hs));
	ok(made > 350 && scan(1, a, 2, hs) == 0 && hs[0] == 1 && hs[1] == 1, "smaps: huge behind %d mappings", made);

	if (long_named_mapping(at) == 0) {
		memset(hs, 9, sizeof(hs));
		ok(scan(1, a, 2, hs) == 0 && hs[0] == 1 && hs[1] == 1,
		   "smaps: huge behind a mapping whose name is longer than a page");
		memset(hs, 9, sizeof(hs));
		ok(scan(1, b, 2, hs) == 0 && hs[0] == 0 && hs[1] == 0, "smaps: and the small range is still small");
	} else {
		ok(0, "a mapping with a long name");
	}
	shmem_cases();
	return tap_done();
}
