/* cconv_scan (common/cacheconv.c) on this process's own mappings: which
 * 2 MiB pieces are huge, through PAGEMAP_SCAN and through the smaps reader
 * that kernels before 6.7 get (compat), with hundreds of mappings and a
 * mapping name longer than a page in front of the range asked about.  As
 * root, cconv_fault on a file of a tmpfs mounted huge=always (the
 * text cache's kind), in a mount namespace of the test's own, as on 5.10
 * (one read per piece, then each piece's last page in pagemap) and as on
 * 6.1 (MADV_COLLAPSE), against PAGEMAP_SCAN; and as on 5.10 on a regular
 * file of /var/tmp. */
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

/* A file on the tmpfs at dir: one 2 MiB piece per letter of kinds, 's'
 * written while the mount says huge=never (small folios), 'h' while it
 * says huge=always; mapped private and 2 MiB aligned, read-only, not
 * faulted in, advice given first (0 for none). */
static uint64_t shmem_region(const char *dir, const char *kinds, int advice)
{
	char path[256];
	static char piece[2 << 20];
	static int files;
	unsigned n = (unsigned)strlen(kinds);
	int fd;

	snprintf(path, sizeof(path), "%s/f%d", dir, files++);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	memset(piece, 7, sizeof(piece));
	for (unsigned i = 0; fd >= 0 && i < n; i++)
		if (mount(NULL, dir, NULL, MS_REMOUNT, kinds[i] == 's' ? "huge=never" : "huge=always") != 0 ||
		    write(fd, piece, sizeof(piece)) != (ssize_t)sizeof(piece))
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

/* cconv_fault as kernel `compat` on n pieces at a (of a tmpfs file when
 * shmem): 0 when it agrees with PAGEMAP_SCAN asked afterwards, which is
 * left in want[]. */
static int fault_agrees(int compat, int shmem, uint64_t a, unsigned n, uint8_t *want)
{
	struct cconv c = CCONV_INIT(compat);
	uint8_t hs[4];

	memset(hs, 9, sizeof(hs));
	int r = cconv_fault(&c, a, a + n * HUGE, hs, shmem);
	cconv_close(&c);
	return r == 0 && scan(0, a, n, want) == 0 && !memcmp(hs, want, n) ? 0 : -1;
}

/* The last-page rule on a regular file of /var/tmp, as on 5.10: each of
 * 4 pieces, whatever folios the page cache gives it (written a page at a
 * time, 2 MiB at a time, or read back after eviction), is told as
 * PAGEMAP_SCAN tells it. */
static void file_case(void)
{
	char path[] = "/var/tmp/test-cacheconv.XXXXXX";
	static char piece[2 << 20];
	uint8_t want[4];
	int fd = mkstemp(path);

	unlink(path);
	memset(piece, 7, sizeof(piece));
	/* Piece 0 a page at a time: small folios, as a rule. */
	for (int i = 0; fd >= 0 && i < 512; i++)
		if (write(fd, piece, 4096) != 4096)
			break;
	for (int i = 1; fd >= 0 && i < 4; i++)
		if (write(fd, piece, sizeof(piece)) != (ssize_t)sizeof(piece))
			break;
	fdatasync(fd);
	/* Pieces 2 and 3 evicted: read back by the faults, 2 MiB at a time. */
	posix_fadvise(fd, 2 * HUGE, 2 * HUGE, POSIX_FADV_DONTNEED);
	uint8_t *r = mmap(NULL, 5 * HUGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t a = ((uint64_t)(uintptr_t)r + HUGE - 1) & ~(HUGE - 1);
	void *m = fd < 0 || r == MAP_FAILED ? MAP_FAILED
					    : mmap((void *)(uintptr_t)a, 4 * HUGE, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (m != MAP_FAILED)
		madvise(m, 4 * HUGE, MADV_HUGEPAGE);
	ok(m != MAP_FAILED && fault_agrees(CCONV_COMPAT_5_10, 0, a, 4, want) == 0, "5.10, a file: as PAGEMAP_SCAN");
	diag("file pieces huge: %d %d %d %d", want[0], want[1], want[2], want[3]);
	if (m != MAP_FAILED)
		munmap(m, 4 * HUGE);
}

static void shmem_cases(void)
{
	char dir[] = "/tmp/test-cacheconv.XXXXXX";
	uint8_t want[4];

	if (geteuid() != 0 || unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    !mkdtemp(dir) || mount("tmpfs", dir, "tmpfs", 0, "huge=always,size=64m") != 0) {
		diag("not root, or no tmpfs of our own: the huge-tmpfs cases are left out");
		return;
	}
	/* 5.10: one read per piece maps each piece whole, and the last
	 * pages say so; then MADV_COLLAPSE (6.1) says so too. */
	uint64_t a = shmem_region(dir, "hh", 0);
	ok(a && fault_agrees(CCONV_COMPAT_5_10, 1, a, 2, want) == 0 && want[0] && want[1],
	   "5.10: one read a piece maps it whole, and pagemap's last pages say so");
	ok(a && fault_agrees(CCONV_COMPAT_6_1, 1, a, 2, want) == 0 && want[0] && want[1], "6.1: MADV_COLLAPSE says so");
	/* A piece of small folios beside a huge one: told apart piece by
	 * piece (smaps, with totals per mapping, would claim neither). */
	uint64_t m = shmem_region(dir, "sh", 0);
	ok(m && fault_agrees(CCONV_COMPAT_5_10, 1, m, 2, want) == 0 && !want[0] && want[1],
	   "5.10: small then huge folios, told apart");
	m = shmem_region(dir, "hs", 0);
	ok(m && fault_agrees(CCONV_COMPAT_5_10, 1, m, 2, want) == 0 && want[0] && !want[1],
	   "5.10: huge then small folios, told apart");
	/* Huge folios mapped by PTEs: MADV_COLLAPSE maps them by PMD, and
	 * says so.  Made here by reading every page under MADV_NOHUGEPAGE;
	 * since 6.11 one fault maps a whole large shmem folio by PTEs, so the
	 * last-page rule, used where PAGEMAP_SCAN is missing (before 6.7),
	 * cannot be asked about them on this kernel. */
	uint64_t b = shmem_region(dir, "hh", MADV_NOHUGEPAGE);
	for (uint64_t p = b; b && p < b + 2 * HUGE; p += 4096)
		(void)*(volatile char *)(uintptr_t)p;
	ok(b && scan(0, b, 2, want) == 0 && !want[0] && !want[1], "MADV_NOHUGEPAGE: mapped by PTEs");
	if (b) {
		madvise((void *)(uintptr_t)b, 2 * HUGE, MADV_HUGEPAGE);
		ok(fault_agrees(CCONV_COMPAT_6_1, 1, b, 2, want) == 0 && want[0] && want[1],
		   "6.1: PTE-mapped huge folios: MADV_COLLAPSE maps them by PMD");
	}
	umount2(dir, MNT_DETACH);
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
	file_case();
	shmem_cases();
	return tap_done();
}
