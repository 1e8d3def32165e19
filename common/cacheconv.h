/* Turning a range of a file's page cache into 2 MiB folios, and telling
 * which 2 MiB pieces of a mapping are PMD-mapped.
 *
 * One implementation for the loader's file strategy (huge.c) and for
 * tiexec-warm (warm/): freestanding, raw system calls only (sys.h), no
 * libc, no globals.  The caller owns a struct cconv (descriptors and what
 * was learnt about the kernel) and the mapping: a 2 MiB-aligned range of a
 * file mapping placed congruent to its file offset, MADV_HUGEPAGE set. */
#pragma once

#include <stdint.h>

struct cconv {
	int pagemap_fd;           /* /proc/self/pagemap: -2 not opened yet, -1 unavailable */
	int scan;                 /* PAGEMAP_SCAN (Linux 6.7): -1 not asked yet, 0 none, 1 there */
	int collapse_unsupported; /* MADV_COLLAPSE said EINVAL (no CONFIG_READ_ONLY_THP_FOR_FS) */
	int compat;               /* for tests: behave as an older kernel (CCONV_COMPAT_*) */
	int kpageflags_fd;        /* /proc/kpageflags (root only): -2 not opened yet, -1 unavailable */
};
#define CCONV_COMPAT_5_10 1 /* no MADV_POPULATE_* (5.14), MADV_COLLAPSE (6.1) or PAGEMAP_SCAN (6.7) */
#define CCONV_COMPAT_6_1 2  /* no PAGEMAP_SCAN */
#define CCONV_INIT(compat_) { -2, -1, 0, (compat_), -2 }

/* The file and the mapping to convert. */
/* The most 2 MiB pieces one range may hold (16 GiB): huge.c sizes its
 * per-piece arrays by it and leaves more text on 4 KiB pages. */
#define CC_MAX_PIECES 8192

#define CC_WRITEBACK_RANGE 1
#define CC_WRITEBACK_FSYNC 2

struct cconv_range {
	int fd;
	uint64_t a, b;        /* our mapping of it, 2 MiB-aligned */
	uint64_t off;         /* the file offset mapped at a */
	const uint8_t *keep;  /* per piece, nonzero: never evict (NULL: none) */
	int writeback;        /* write dirty pages back so that they can be evicted too:
			       * CC_WRITEBACK_RANGE per piece (sync_file_range), or
			       * CC_WRITEBACK_FSYNC the whole file once (fdatasync:
			       * overlayfs passes only that on to its real file) */
	int shared;           /* another process may be converting the same range
			       * (it holds the lock we gave up waiting for): evict
			       * nothing, read no more than the pieces faulted in,
			       * and map no small folios -- mapped, they could not
			       * be evicted by that process */
};

struct cconv_stats {
	uint64_t collapsed; /* pieces MADV_COLLAPSE turned huge */
	uint64_t evicted;   /* pieces evicted and read back */
};

/* Releases the pagemap descriptor. */
void cconv_close(struct cconv *c);

/* Marks in hs[] (one byte per 2 MiB piece of [a, b), zeroed first) the
 * pieces mapped by huge pages (PMD-mapped THP or hugetlb).  PAGEMAP_SCAN
 * (Linux 6.7) says it per piece; without it /proc/self/smaps gives totals
 * per mapping, and a mapping's pieces count as huge only when the total
 * covers all of them.  Returns 0, or -1 when the kernel cannot tell. */
int cconv_scan(struct cconv *c, uint64_t a, uint64_t b, uint8_t *hs);
/* What cconv_scan and cconv_blocks mark a piece with. */
#define CC_PMD 1   /* mapped by a PMD (or hugetlb) */
#define CC_BLOCK 2 /* a contiguous-PTE block: see cconv_blocks */
#define CC_BLOCK_PART 3 /* a block's frames, mapped in part: see cconv_blocks */
/* Marks CC_BLOCK in hs[] (indexed from a, 2 MiB-aligned) each piece not
 * marked yet that the kernel maps with contiguous PTEs where it can
 * (arm64 with 16 or 64 KiB pages, geom_blocks): every page present, their
 * frames consecutive from a 2 MiB-aligned one, all in one large folio.
 * That is the condition of arm64's contpte_try_fold and contpte_set_ptes
 * (Linux 6.9); the contiguous bit itself is not visible to user space.
 * Read from /proc/self/pagemap's frame numbers and /proc/kpageflags'
 * compound head and tail bits, which need CAP_SYS_ADMIN: returns 0, or -1
 * when they cannot be read (then nothing is marked: "not measured").
 * With part, a piece whose present pages (one at least) are such a
 * block's and whose other pages are not mapped yet is marked
 * CC_BLOCK_PART: the text lies in the block, and the rest of it maps onto
 * the same frames as the process touches it (a forked child: fork copies
 * no page-table entry of a file mapping). */
int cconv_blocks(struct cconv *c, uint64_t a, uint64_t b, uint8_t *hs, int part);

/* Faults in a mapping [a, b) like cconv_convert's and marks in hs[] the
 * 2 MiB pieces mapped by a PMD.  Telling: PAGEMAP_SCAN (6.7); else, for
 * shmem (a file on a tmpfs mounted huge=always: the text cache),
 * MADV_COLLAPSE, which there (6.1) succeeds only once every piece is
 * PMD-mapped, mapping any huge folio that is not, at about 2 us a piece;
 * else whether each piece's last page is present after one read of its
 * first byte, one pagemap entry a piece; smaps, some 4 us per MiB of huge
 * folios (it weighs each 4 KiB page of them), only when pagemap cannot be
 * read.  Faulting: MADV_POPULATE_READ where one of the first two will
 * tell, else that one read per piece (a piece of small folios is left to
 * fault later).  Returns 0, or -1 when the kernel cannot tell. */
int cconv_fault(struct cconv *c, uint64_t a, uint64_t b, uint8_t *hs, int shmem);

/* Whether any page of [a, b) is no longer the file's: anonymous, present
 * or swapped out (a private copy made by writing: text relocations, a
 * patch).  PAGEMAP_SCAN asks in one call; before 6.7 /proc/self/pagemap is
 * read (bit 63 present, 62 swapped, 61 file page).  0 when it cannot be
 * told. */
int cconv_changed(struct cconv *c, uint64_t a, uint64_t b);

/* Faults [a, a + len) in: MADV_POPULATE_READ/WRITE (Linux 5.14), else one
 * touch per page.  Returns 0 or a negative errno. */
long cconv_populate(const struct cconv *c, uint64_t a, uint64_t len, int write);
/* Faults r's mapping in as cconv_fault does and makes its pieces huge
 * where the page cache allows: MADV_COLLAPSE where the kernel has it for
 * file text, else the piece's pages are evicted (those no process maps;
 * POSIX_FADV_DONTNEED leaves mapped and dirty pages alone) and faulted again, which reads them
 * back in 2 MiB folios; a few times, as other processes reading the file
 * (or faulting it elsewhere) may put small folios back meanwhile.  With
 * r->shared, only faults in and leaves the small pieces unmapped.  Leaves
 * in hs[] which pieces ended up huge.
 * Returns 0, or -1 when the mapping could not be faulted in or checked. */
int cconv_convert(struct cconv *c, const struct cconv_range *r, uint8_t *hs, struct cconv_stats *st);
