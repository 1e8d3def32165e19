/* See cacheconv.h.  Compiled into the loader (freestanding, with rt.c) and
 * into tiexec-warm (hosted, with libc): it includes only bits.h and sys.h
 * and calls nothing outside this file, so neither side's runtime leaks into it. */
#include "cacheconv.h"

#include <errno.h>
#include <string.h>

#include "bits.h"
#include "geom.h"
#include "mapsline.h"
#include "sys.h"


static void cc_zero(uint8_t *p, uint64_t n)
{
	while (n--)
		*p++ = 0;
}

void cconv_close(struct cconv *c)
{
	if (c->pagemap_fd >= 0)
		sys_close(c->pagemap_fd);
	if (c->kpageflags_fd >= 0)
		sys_close(c->kpageflags_fd);
	c->pagemap_fd = c->kpageflags_fd = -2;
}

/* /proc/self/pagemap, opened once for every reader here: -1 when it
 * cannot be (no /proc). */
static int pagemap(struct cconv *c)
{
	if (c->pagemap_fd == -2)
		c->pagemap_fd = (int)sys_openat(TX_AT_FDCWD, "/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0);
	if (c->pagemap_fd < 0)
		c->pagemap_fd = -1;
	return c->pagemap_fd;
}

/* Marks in hs[] (indexed from a) the whole pieces of [a, b) inside [lo, hi). */
static void mark(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi, uint8_t *hs)
{
	for (uint64_t p = tx_up(lo, TX_HUGE); p + TX_HUGE <= hi; p += TX_HUGE)
		if (p >= a && p < b)
			hs[(p - a) / TX_HUGE] = 1;
}

struct smaps_walk {
	uint64_t lo, hi, huge; /* the mapping being read, its huge bytes */
};

/* Before Linux 6.7 (no PAGEMAP_SCAN): /proc/self/smaps only has totals per
 * mapping.  Huge pages can only sit on the 2 MiB-aligned pieces inside a
 * mapping, so when the total covers all of those, each of them is huge;
 * otherwise we cannot tell which are, and claim none. */
static int all_inner(uint64_t lo, uint64_t hi, uint64_t huge)
{
	uint64_t a = tx_up(lo, TX_HUGE), b = tx_down(hi, TX_HUGE);

	return a < b && huge >= b - a;
}

/* One line of smaps: a mapping's first ("lo-hi perms ...") settles the one
 * before it; a huge-page total adds to the current one.  Returns 1 at the
 * first mapping at or past b: nothing after it can matter. */
static int smaps_line(const char *l, uint64_t a, uint64_t b, struct smaps_walk *w, uint8_t *hs)
{
	const char *v;
	struct maps_line m;
	uint64_t kb;

	if (maps_line(l, strlen(l), &m)) {
		if (all_inner(w->lo, w->hi, w->huge))
			mark(a, b, w->lo, w->hi, hs);
		w->lo = m.lo;
		w->hi = m.hi;
		w->huge = 0;
		return w->lo >= b;
	}
	if ((v = tx_skip(l, "FilePmdMapped:")) || (v = tx_skip(l, "ShmemPmdMapped:")) ||
	    (v = tx_skip(l, "AnonHugePages:")) || (v = tx_skip(l, "Private_Hugetlb:")) ||
	    (v = tx_skip(l, "Shared_Hugetlb:"))) {
		while (*v == ' ')
			v++;
		if (maps_dec(&v, v + strlen(v), &kb) == 0)
			w->huge += kb * 1024;
	}
	return 0;
}

/* Read a page at a time and stopped at the first mapping past b: the
 * kernel formats smaps as it is read (some 1.2 KiB and a page-table walk
 * per mapping), and the text lies below ld.so, tiexec, the stack and the
 * vDSO.  Streaming also has no limit on the number of mappings. */
static int scan_smaps(uint64_t a, uint64_t b, uint8_t *hs)
{
	static char buf[2 * ARCH_PAGE_MAX + 1];
	struct smaps_walk w = { 0, 0, 0 };
	uint64_t len = 0;
	int past = 0, skip = 0;
	long got;
	int fd = (int)sys_openat(TX_AT_FDCWD, "/proc/self/smaps", O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	while (!past && (got = sys_read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		char *l = buf, *end = buf + len + (uint64_t)got;
		*end = '\0';
		for (char *nl = l; !past && nl < end; nl++) {
			if (*nl != '\n')
				continue;
			*nl = '\0';
			if (!skip)
				past = smaps_line(l, a, b, &w, hs);
			skip = 0;
			l = nl + 1;
		}
		/* A partial line moves to the front.  One longer than a page
		 * (a mapping's long name) is read for what starts it, the
		 * range, and its rest skipped. */
		len = (uint64_t)(end - l);
		if (len > ARCH_PAGE_MAX && !past) {
			if (!skip)
				past = smaps_line(l, a, b, &w, hs);
			len = 0;
			skip = 1;
		}
		for (uint64_t i = 0; i < len; i++)
			buf[i] = l[i];
	}
	sys_close(fd);
	if (!past && all_inner(w.lo, w.hi, w.huge))
		mark(a, b, w.lo, w.hi, hs);
	return 0;
}

/* Whether the kernel has PAGEMAP_SCAN (Linux 6.7), asked once: an
 * argument of size 0 is EINVAL there, the ioctl ENOTTY before. */
static int has_scan(struct cconv *c)
{
	struct tx_pm_scan_arg arg;

	if (c->scan < 0) {
		cc_zero((uint8_t *)&arg, sizeof(arg));
		c->scan = !c->compat && pagemap(c) >= 0 && sys_ioctl(c->pagemap_fd, TX_PAGEMAP_SCAN, &arg) != -ENOTTY;
	}
	return c->scan;
}

/* PAGEMAP_SCAN: 0 when it answered, 1 when the kernel has none. */
static int scan_pagemap(struct cconv *c, uint64_t a, uint64_t b, uint8_t *hs)
{
	struct tx_page_region v[32];
	struct tx_pm_scan_arg arg;

	if (!has_scan(c))
		return 1;
	for (uint64_t at = a; at < b;) {
		cc_zero((uint8_t *)&arg, sizeof(arg));
		arg.size = sizeof(arg);
		arg.start = at;
		arg.end = b;
		arg.vec = (uint64_t)(uintptr_t)v;
		arg.vec_len = sizeof(v) / sizeof(v[0]);
		arg.category_mask = TX_PAGE_IS_HUGE;
		arg.return_mask = TX_PAGE_IS_HUGE;
		long n = sys_ioctl(c->pagemap_fd, TX_PAGEMAP_SCAN, &arg);
		if (n < 0)
			return 1;
		for (long i = 0; i < n; i++)
			mark(a, b, v[i].start, v[i].end, hs);
		if (arg.walk_end <= at)
			break;
		at = arg.walk_end;
	}
	return 0;
}

int cconv_scan(struct cconv *c, uint64_t a, uint64_t b, uint8_t *hs)
{
	cc_zero(hs, (b - a) / TX_HUGE);
	return scan_pagemap(c, a, b, hs) == 0 ? 0 : scan_smaps(a, b, hs);
}

#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define KPF_COMPOUND_HEAD (1ULL << 15)
#define KPF_COMPOUND_TAIL (1ULL << 16)

/* Whether the n pages whose pagemap entries are e[] form one block: see
 * cconv_blocks.  Returns CC_BLOCK, CC_BLOCK_PART (with part: the pages
 * present, at least one, are the block's and the others are not mapped
 * yet), 0, or -1 when the frames cannot be read. */
static int one_block(struct cconv *c, const uint64_t *e, uint64_t n, int part)
{
	static uint64_t f[TX_HUGE / ARCH_PAGE_MIN];
	uint64_t first = 0, absent = 0;

	while (first < n && !(e[first] & PM_PRESENT))
		first++;
	if (first == n || (first && !part))
		return 0;
	if (!(e[first] & PM_PFN_MASK))
		return -1; /* frame numbers hidden: no CAP_SYS_ADMIN */
	if ((e[first] & PM_PFN_MASK) < first)
		return 0;
	uint64_t pfn = (e[first] & PM_PFN_MASK) - first;
	if (pfn & (n - 1))
		return 0;
	for (uint64_t i = first + 1; i < n; i++) {
		absent += !(e[i] & PM_PRESENT);
		if ((absent && !part) || ((e[i] & PM_PRESENT) && (e[i] & PM_PFN_MASK) != pfn + i))
			return 0;
	}
	if (sys_pread(c->kpageflags_fd, f, n * 8, pfn * 8) != (long)(n * 8))
		return -1;
	if (!(f[0] & (KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL)))
		return 0;
	for (uint64_t i = 1; i < n; i++)
		if ((f[i] & (KPF_COMPOUND_HEAD | KPF_COMPOUND_TAIL)) != KPF_COMPOUND_TAIL)
			return 0; /* a folio starts inside the block */
	return first || absent ? CC_BLOCK_PART : CC_BLOCK;
}

int cconv_blocks(struct cconv *c, uint64_t a, uint64_t b, uint8_t *hs, int part)
{
	static uint64_t e[TX_HUGE / ARCH_PAGE_MIN];
	uint64_t n = TX_HUGE / TX_PAGE;

	if (c->kpageflags_fd == -2)
		c->kpageflags_fd = (int)sys_openat(TX_AT_FDCWD, "/proc/kpageflags", O_RDONLY | O_CLOEXEC, 0);
	if (c->kpageflags_fd < 0) {
		c->kpageflags_fd = -1;
		return -1;
	}
	if (pagemap(c) < 0)
		return -1;
	for (uint64_t p = a; p < b; p += TX_HUGE) {
		uint8_t *h = &hs[(p - a) / TX_HUGE];
		if (*h)
			continue;
		if (sys_pread(c->pagemap_fd, e, n * 8, p / TX_PAGE * 8) != (long)(n * 8))
			return -1;
		int r = one_block(c, e, n, part);
		if (r < 0)
			return -1;
		*h = (uint8_t)r;
	}
	return 0;
}

/* MADV_POPULATE_READ/WRITE (Linux 5.14), else a touch every page. */
long cconv_populate(const struct cconv *c, uint64_t a, uint64_t len, int write)
{
	long e = c->compat == CCONV_COMPAT_5_10 ? -EINVAL
						: sys_madvise(a, len, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);

	if (e != -EINVAL)
		return e;
	for (uint64_t p = a; p < a + len; p += TX_PAGE) {
		volatile uint8_t *q = (volatile uint8_t *)(uintptr_t)p;
		if (write)
			*q = 0;
		else
			(void)*q;
	}
	return 0;
}

/* One read of each piece's first byte.  A fault maps a huge folio whole,
 * by its PMD (the mapping is 2 MiB-aligned and congruent); a small folio
 * only over the fault-around window, 64 KiB unless raised in debugfs.
 * Before 6.11 faults map no more than that window, so whether a piece's
 * last page is present then says whether the piece is PMD-mapped; since,
 * one fault may map a whole large shmem folio with PTEs.  Asked only
 * without PAGEMAP_SCAN (6.7). */
static void touch_pieces(uint64_t a, uint64_t b)
{
	for (uint64_t p = a; p < b; p += TX_HUGE)
		(void)*(volatile uint8_t *)(uintptr_t)p;
}

/* The last-page rule above: one 8-byte entry of /proc/self/pagemap per
 * piece (the present bit needs no privilege; frame numbers do). */
static int scan_last_pages(struct cconv *c, uint64_t a, uint64_t b, uint8_t *hs)
{
	uint64_t e;

	if (pagemap(c) < 0)
		return -1;
	for (uint64_t p = a; p < b; p += TX_HUGE) {
		if (sys_pread(c->pagemap_fd, &e, sizeof(e), (p + TX_HUGE - TX_PAGE) / TX_PAGE * 8) != sizeof(e))
			return -1;
		hs[(p - a) / TX_HUGE] = (uint8_t)(e >> 63);
	}
	return 0;
}

/* MADV_COLLAPSE on shmem (6.1): 0 once every piece of [a, a + len) is
 * PMD-mapped; EINVAL before 6.1 (or as 5.10). */
static long shmem_collapse(const struct cconv *c, uint64_t a, uint64_t len)
{
	return c->compat == CCONV_COMPAT_5_10 ? -EINVAL : sys_madvise(a, len, MADV_COLLAPSE);
}

/* Whether the kernel has it: a length of 0 is 0 there. */
static int has_collapse(const struct cconv *c)
{
	return shmem_collapse(c, 0, 0) == 0;
}

/* Faults [a, b) in to be checked: whole (MADV_POPULATE_READ, the cheaper)
 * where PAGEMAP_SCAN or, on shmem, MADV_COLLAPSE will tell; else a read
 * per piece, for the last-page rule, which costs less than smaps.
 * Returns 1 when it read per piece, 0, or -1. */
static int fault_in(struct cconv *c, uint64_t a, uint64_t b, int shmem)
{
	if (has_scan(c) || (shmem && has_collapse(c)))
		return cconv_populate(c, a, b - a, 0) < 0 ? -1 : 0;
	touch_pieces(a, b);
	return 1;
}

/* Which pieces of [a, b), faulted in by fault_in (touched: how), are
 * PMD-mapped.  A shmem range read per piece was so because the kernel has
 * no MADV_COLLAPSE: it is not asked again. */
static int check(struct cconv *c, uint64_t a, uint64_t b, uint8_t *hs, int shmem, int touched)
{
	cc_zero(hs, (b - a) / TX_HUGE);
	if (scan_pagemap(c, a, b, hs) == 0)
		return 0;
	if (shmem && !touched && shmem_collapse(c, a, b - a) == 0) {
		mark(a, b, a, b, hs);
		return 0;
	}
	if (touched && scan_last_pages(c, a, b, hs) == 0)
		return 0;
	cc_zero(hs, (b - a) / TX_HUGE);
	return scan_smaps(a, b, hs);
}

int cconv_fault(struct cconv *c, uint64_t a, uint64_t b, uint8_t *hs, int shmem)
{
	int touched = fault_in(c, a, b, shmem);

	return touched < 0 ? -1 : check(c, a, b, hs, shmem, touched);
}

static int changed_by_pagemap(struct cconv *c, uint64_t a, uint64_t b)
{
	static uint64_t e[512];
	int fd = pagemap(c);
	int any = 0;

	for (uint64_t at = a; fd >= 0 && at < b && !any;) {
		uint64_t want = (b - at) / TX_PAGE < 512 ? (b - at) / TX_PAGE : 512;
		long got = sys_pread(fd, e, want * 8, at / TX_PAGE * 8);
		if (got < 8)
			break;
		for (long i = 0; i < got / 8; i++)
			any |= ((e[i] >> 63) & 1 && !((e[i] >> 61) & 1)) || ((e[i] >> 62) & 1);
		at += (uint64_t)(got / 8) * TX_PAGE;
	}
	return any;
}

int cconv_changed(struct cconv *c, uint64_t a, uint64_t b)
{
	struct tx_page_region v[1];
	struct tx_pm_scan_arg arg;

	if (!has_scan(c))
		return changed_by_pagemap(c, a, b);
	cc_zero((uint8_t *)&arg, sizeof(arg));
	arg.size = sizeof(arg);
	arg.start = a;
	arg.end = b;
	arg.vec = (uint64_t)(uintptr_t)v;
	arg.vec_len = 1;
	arg.max_pages = 1;
	arg.category_inverted = TX_PAGE_IS_FILE;
	arg.category_mask = TX_PAGE_IS_FILE;
	arg.category_anyof_mask = TX_PAGE_IS_PRESENT | TX_PAGE_IS_SWAPPED;
	arg.return_mask = TX_PAGE_IS_FILE;
	long n = sys_ioctl(c->pagemap_fd, TX_PAGEMAP_SCAN, &arg);
	return n < 0 ? changed_by_pagemap(c, a, b) : n > 0;
}

/* MADV_COLLAPSE on each small piece: in place, without evicting anything,
 * on kernels with CONFIG_READ_ONLY_THP_FOR_FS; EINVAL elsewhere (file text
 * then cannot be collapsed at all), remembered. */
static void collapse(struct cconv *c, const struct cconv_range *r, uint8_t *hs, struct cconv_stats *st)
{
	uint64_t n = (r->b - r->a) / TX_HUGE, tried = 0;

	for (uint64_t k = 0; k < n && !c->collapse_unsupported; k++) {
		if (hs[k])
			continue;
		long e = sys_madvise(r->a + k * TX_HUGE, TX_HUGE, MADV_COLLAPSE);
		if (e == -EINVAL)
			c->collapse_unsupported = 1;
		else
			tried++;
	}
	if (!tried)
		return;
	uint64_t before = 0, after = 0;
	for (uint64_t k = 0; k < n; k++)
		before += hs[k];
	cconv_scan(c, r->a, r->b, hs);
	for (uint64_t k = 0; k < n; k++)
		after += hs[k];
	st->collapsed += after - before;
}

/* Eviction passes over the pieces still small: a piece whose eviction
 * worked but which came back small (another process read that part of the
 * file meanwhile, in small folios) is tried again. */
#define CC_EVICT_PASSES 3

/* Whether no page of the 2 MiB at p (our mapping of the file) is in the
 * page cache, by mincore. */
static int cc_evicted(uint64_t p)
{
	unsigned char v[TX_HUGE / ARCH_PAGE_MIN];

	if (SC(__NR_mincore, p, TX_HUGE, v, 0, 0, 0) < 0)
		return 0;
	for (uint64_t i = 0; i < TX_HUGE / TX_PAGE; i++)
		if (v[i] & 1)
			return 0;
	return 1;
}

int cconv_convert(struct cconv *c, const struct cconv_range *r, uint8_t *hs, struct cconv_stats *st)
{
	uint64_t n = (r->b - r->a) / TX_HUGE;
	int small = 0;

	/* Shared: no readahead beyond the 2 MiB piece a fault reads
	 * (VM_RAND_READ).  A folio marked for asynchronous readahead by the
	 * converter's faults would otherwise start it with our file's
	 * readahead state, which reads the next piece in small folios. */
	if (r->shared)
		sys_madvise(r->a, r->b - r->a, MADV_RANDOM);
	int touched = fault_in(c, r->a, r->b, 0);
	if (r->shared)
		sys_madvise(r->a, r->b - r->a, MADV_NORMAL);
	if (touched < 0 || check(c, r->a, r->b, hs, 0, touched) < 0)
		return -1;
	for (uint64_t k = 0; k < n; k++)
		small |= !hs[k];
	if (small)
		collapse(c, r, hs, st);
	/* Pieces whose pages others map: not tried again (one bit each;
	 * beyond CC_MAX_PIECES, as tiexec-warm may ask, tried every pass). */
	uint64_t pinned[CC_MAX_PIECES / 64];
	int synced = 0;
	cc_zero((uint8_t *)pinned, sizeof(pinned));
	for (int pass = 0; pass < CC_EVICT_PASSES && !r->shared; pass++) {
		int again = 0, tried = 0;
		for (uint64_t k = 0; k < n; k++) {
			if (hs[k] || (r->keep && r->keep[k]) ||
			    (k < CC_MAX_PIECES && (pinned[k / 64] >> (k % 64) & 1)))
				continue;
			/* The cache holds small folios here: drop our page
			 * table entries, evict the pages nobody else maps,
			 * fault again.  A file just written (by a linker, say)
			 * is dirty and cannot be evicted until written back;
			 * clean pages cost nothing. */
			uint64_t p = r->a + k * TX_HUGE, off = r->off + k * TX_HUGE;
			sys_madvise(p, TX_HUGE, MADV_DONTNEED);
			if (r->writeback == CC_WRITEBACK_RANGE)
				SC(__NR_sync_file_range, r->fd, off, TX_HUGE, 7, 0, 0);
			else if (r->writeback == CC_WRITEBACK_FSYNC && !synced++)
				SC(__NR_fdatasync, r->fd, 0, 0, 0, 0, 0);
			sys_fadvise(r->fd, off, TX_HUGE, POSIX_FADV_DONTNEED);
			if (cc_evicted(p))
				again = 1;
			else if (k < CC_MAX_PIECES)
				pinned[k / 64] |= 1ULL << (k % 64);
			fault_in(c, p, p + TX_HUGE, 0);
			st->evicted++;
			tried = 1;
		}
		/* Nothing evicted (the warm case): hs[] stands. */
		if (!tried)
			break;
		check(c, r->a, r->b, hs, 0, touched);
		if (!again)
			break;
	}
	/* Small folios we map could not be evicted by anyone (a later
	 * start, tiexec-warm): what is still small is left unmapped. */
	for (uint64_t k = 0; k < n; k++)
		if (!hs[k] && !(r->keep && r->keep[k]))
			sys_madvise(r->a + k * TX_HUGE, TX_HUGE, MADV_DONTNEED);
	return 0;
}
