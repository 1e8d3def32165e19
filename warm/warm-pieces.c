/* One 2 MiB piece of a file's page cache at a time, through our own
 * congruent mapping of it: measured, and converted to a 2 MiB folio
 * (cacheconv.c, the loader's own code for its file strategy). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>

#include "geom.h"
#include "warm.h"

void add_pid(int *v, unsigned *n, unsigned max, int pid)
{
	for (unsigned i = 0; i < *n; i++)
		if (v[i] == pid)
			return;
	if (*n < max)
		v[(*n)++] = pid;
}

/* The processes mapping any of [off, off + TX_HUGE) of t, into pp.  Returns
 * how many there are. */
unsigned users(const struct target *t, uint64_t off, struct piece_pids *pp)
{
	pp->off = off;
	pp->npids = 0;
	for (size_t i = 0; i < t->nuses; i++)
		if (t->uses[i].lo < off + TX_HUGE && t->uses[i].hi > off)
			add_pid(pp->pids, &pp->npids, 8, t->uses[i].pid);
	return pp->npids;
}

/* Whether some process has fd's file open for writing: a read lease is
 * refused (EAGAIN) then.  Taken and given back at once: a lease held would
 * make a writer's open wait for us.  -1: cannot tell (a lease needs the
 * file's owner or CAP_LEASE). */
int open_for_writing(int fd)
{
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		return 0;
	}
	return errno == EAGAIN ? 1 : -1;
}

/* Every page of the piece at p in the page cache (mincore sees the cache
 * of a file mapping, faulted in or not)? */
static int resident(uint64_t p)
{
	unsigned char v[TX_HUGE / ARCH_PAGE_MIN];

	if (mincore((void *)(uintptr_t)p, TX_HUGE, v) < 0)
		return 0;
	for (size_t i = 0; i < TX_HUGE / TX_PAGE; i++)
		if (!(v[i] & 1))
			return 0;
	return 1;
}

/* One 2 MiB-aligned slot of address space, for a piece at a time; its
 * reservation in *raw (2 * TX_HUGE bytes, for munmap), or 0. */
uint64_t slot_reserve(void **raw)
{
	*raw = mmap(NULL, 2 * TX_HUGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return *raw == MAP_FAILED ? 0 : ((uint64_t)(uintptr_t)*raw + TX_HUGE - 1) & -TX_HUGE;
}

/* Our own shared read-only mapping of the piece at off, at slot (2 MiB-
 * aligned, so congruent), MADV_HUGEPAGE: faults read 2 MiB folios. */
int map_piece(int fd, uint64_t slot, uint64_t off)
{
	if (mmap((void *)(uintptr_t)slot, TX_HUGE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, (off_t)off) == MAP_FAILED)
		return -1;
	madvise((void *)(uintptr_t)slot, TX_HUGE, MADV_HUGEPAGE);
	return 0;
}

/* Whether the piece at off is held in 2 MiB folios, changing nothing:
 * faults in only a piece wholly in the cache (no reads from disk), with
 * readahead off (MADV_RANDOM: a page marked for async readahead would
 * otherwise read what follows), then asks whether our mapping of it is a
 * PMD.  *cached: every page of it is in the cache. */
int measure(struct cconv *cc, int fd, uint64_t slot, uint64_t off, int *cached)
{
	uint8_t hs = 0;

	*cached = 0;
	if (map_piece(fd, slot, off) < 0)
		return 0;
	madvise((void *)(uintptr_t)slot, TX_HUGE, MADV_RANDOM);
	*cached = resident(slot);
	if (*cached)
		cconv_fault(cc, slot, slot + TX_HUGE, &hs, 0);
	return hs;
}

/* Converts the piece at off, not warm when measured.  Pieces other
 * processes map (or of a file open for writing) are converted in place
 * only (MADV_COLLAPSE), and only what is cached: reading the rest would
 * add small folios next to theirs. */
void convert(struct cconv *cc, int fd, const struct target *t, uint64_t slot, uint64_t off, int writing,
	     struct result *r)
{
	struct piece_pids pp;
	int cached;
	uint8_t hs, keep = 1;

	/* Read already, in a 2 MiB folio, by the previous piece's readahead. */
	if (measure(cc, fd, slot, off, &cached)) {
		r->after += TX_HUGE;
		r->converted += TX_HUGE;
		return;
	}
	unsigned nusers = users(t, off, &pp);
	struct cconv_range cr = { fd, slot, slot + TX_HUGE, off, NULL, 0, 0 };
	if (nusers || writing) {
		if (!cached || cc->collapse_unsupported)
			goto kept;
		cr.keep = &keep;
	}
	madvise((void *)(uintptr_t)slot, TX_HUGE, MADV_NORMAL);
	struct cconv_stats cs = { 0, 0 };
	int ok = cconv_convert(cc, &cr, &hs, &cs) == 0 && hs;
	r->collapsed += cs.collapsed;
	r->evicted += cs.evicted;
	if (ok) {
		r->after += TX_HUGE;
		r->converted += TX_HUGE;
		return;
	}
	r->stuck += nusers ? 0 : TX_HUGE;
kept:
	if (nusers) {
		if (r->nkept < sizeof(r->kept) / sizeof(r->kept[0]))
			r->kept[r->nkept++] = pp;
		else
			r->more_kept++;
	}
}
