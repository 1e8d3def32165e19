/* The text cache way (place.h): where the page cache cannot hold the text
 * in 2 MiB folios (the file system keeps small ones, or the text is not
 * congruent), the shared text cache's entry for the file (textcache.h), a
 * tmpfs file held in 2 MiB pages, mapped privately over the pieces: zero
 * copy, shared by every process, for auto and file. */
#include "place.h"

#include "rt.h"
#include "sys.h"

/* Whether the entry mapped over the pieces of [a, a + n * 2 MiB) that
 * state does not hold yet is still in 2 MiB pages, asked of one of them:
 * hs then says so for all of them, and the others are left to fault on
 * first touch.  tiexec-warm wrote the entry in 2 MiB pages and --check
 * looks at all of it; what splits a tmpfs huge page (swapping it out)
 * splits it piece by piece, so a start that finds this piece split
 * faults in and checks every piece instead.  Faulting all of a 62 MiB
 * entry in and checking it took 1.1 to 2 ms of a 5.7 to 7 ms start
 * under qemu's TCG (5.10, 6.1), and counted all of it in the process's
 * RSS, which the OOM killer weighs, where a direct start counts the pages
 * it touched.  (Asking the page cache the same way, when all of the text
 * was cached, made 1,000 simultaneous cold starts as uid 65534 copy their
 * text in up to 658 of them, scripts/load: not done.  The page cache's
 * pieces come back small one by one -- after a storm of direct starts,
 * the last piece, next to the data segment -- and instances that asked
 * another piece then map the small folios, which no later start can
 * evict.) */
static int entry_holds(struct cconv *cc, uint64_t a, uint64_t n, uint8_t *hs, const uint8_t *state)
{
	uint64_t k = 0;

	while (k < n && state[k])
		k++;
	/* Asked as of a file (shmem 0): PAGEMAP_SCAN, else the last-page
	 * rule; not MADV_COLLAPSE, which would collapse a split piece (a
	 * 2 MiB page charged to this process's cgroup), and whose first call
	 * in a process took 0.4 ms under TCG on 6.1 (later ones 20 us). */
	if (k == n || cconv_fault(cc, a + k * TX_HUGE, a + (k + 1) * TX_HUGE, hs, 0) < 0 || !hs[0])
		return 0;
	memset(hs, 1, n);
	return 1;
}

/* The shared text cache on segment s's 2 MiB-aligned pieces [a, b) that
 * are not huge yet: the entry (at eoff for the segment's p_offset) mapped
 * over each run of them, then faulted in and checked. */
void place_cache(const struct huge_req *r, struct huge_result *res, const struct seg *s,
			 uint64_t eoff, uint64_t a, uint64_t b, uint8_t *state, uint8_t *hs)
{
	uint64_t n = (b - a) / TX_HUGE;

	if ((eoff + (a - s->vaddr)) & (TX_HUGE - 1)) {
		place_note(res, R_CACHE_NOT_CONGRUENT);
		return;
	}
	for (uint64_t k = 0; k < n;) {
		uint64_t j = k;
		while (j < n && !state[j])
			j++;
		if (j > k) {
			uint64_t x = a + k * TX_HUGE, len = (j - k) * TX_HUGE;
			long m = sys_mmap(x, len, PROT_READ | PROT_EXEC | r->xprot, MAP_PRIVATE | MAP_FIXED, r->cache_fd,
					  eoff + (x - s->vaddr));
			if (m != (long)x) {
				/* MAP_FIXED failing leaves the range unmapped: the
				 * file's own pages back, or nothing runs. */
				sys_mmap(x, len, PROT_READ | PROT_EXEC | r->xprot, MAP_PRIVATE | MAP_FIXED, r->fd,
					 s->offset + (x - s->vaddr));
				place_note(res, R_CACHE_UNMAPPABLE);
				return;
			}
		}
		while (j < n && state[j])
			j++;
		k = j;
	}
	if (r->o->lazy) {
		for (uint64_t k = 0; k < n; k++)
			if (!state[k]) {
				state[k] = 1;
				res->lazy += TX_HUGE;
			}
		return;
	}
	/* Where pieces are contiguous blocks one piece says nothing of the
	 * others (a PMD, or a block of a PTE-mapped 32 MiB folio): all are
	 * faulted in and measured. */
	int blocks = geom_blocks(&r->state->geom);
	if (!blocks && entry_holds(&r->state->cc, a, n, hs, state)) {
		place_take(r, res, a, n, hs, state, &res->cache);
		return;
	}
	if (cconv_fault(&r->state->cc, a, b, hs, 1) < 0) {
		place_note(res, R_CACHE_FAULT);
		return;
	}
	if (blocks) {
		place_mark_blocks(r, a, b, hs, 1);
		place_note_unmeasured(res, hs, n, R_CACHE_UNMEASURED);
	}
	if (place_take(r, res, a, n, hs, state, &res->cache))
		place_note(res, R_CACHE_SMALL_PAGES);
}

