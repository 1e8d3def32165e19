/* common/ldplan.c on the real kernel: a plan of ld.so's requests, held, and
 * then the requests made as ld.so makes them (in this process): the
 * target's library starts where it was wanted, also when ld.so makes a
 * small request the plan did not foresee (for a library whose p_align is
 * above the page); a plan that misses holds nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "geom.h"
#include "ldplan.h"
#include "tap.h"

#define ROUNDS 50

/* ld.so's requests of p, made for real as glibc makes them (a
 * reservation's head and tail given back), plus `extra` bytes first (a
 * request the plan did not foresee; 0 for none): whether every target's
 * library started at its residue.  Everything is given back. */
static int as_ld_so(const struct ldplan *p, size_t extra)
{
	void *m[16], *x = NULL;
	size_t len[16];
	int all = 1;

	if (extra)
		x = mmap(NULL, extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (unsigned k = 0; k < p->n; k++) {
		const struct ldplan_req *q = &p->req[k];
		uint64_t r, start, end;
		len[k] = q->len;
		m[k] = mmap(NULL, q->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m[k] == MAP_FAILED)
			return 0;
		r = start = (uint64_t)(uintptr_t)m[k];
		if (q->align > TX_PAGE) {
			start = (r + q->align - 1) & ~(q->align - 1);
			end = start + ((q->keep + TX_PAGE - 1) & ~(TX_PAGE - 1));
			if (start > r)
				munmap(m[k], start - r);
			munmap((void *)(uintptr_t)end, r + q->len - end);
			m[k] = (void *)(uintptr_t)start;
			len[k] = end - start;
		}
		if (q->target)
			all &= (start & (TX_HUGE - 1)) == q->residue;
		/* Nothing later in a window target's window. */
		for (unsigned j = 0; j < k; j++) {
			uint64_t w = (uint64_t)(uintptr_t)m[j], wlo = w - p->req[j].below;
			if (p->req[j].target && p->req[j].below && start < w && start + len[k] > wlo)
				all = 0;
		}
	}
	for (unsigned k = 0; k < p->n; k++)
		munmap(m[k], len[k]);
	if (x)
		munmap(x, extra);
	return all;
}

static unsigned targets(const struct ldplan *p)
{
	unsigned n = 0;

	for (unsigned k = 0; k < p->n; k++)
		n += (unsigned)p->req[k].target;
	return n;
}

/* Whether [a, a + n) is unmapped, page by page. */
static int unmapped(uint64_t a, uint64_t n)
{
	for (uint64_t x = a; x < a + n; x += TX_PAGE)
		if (msync((void *)(uintptr_t)x, TX_PAGE, MS_ASYNC) == 0 || errno != ENOMEM)
			return 0;
	return 1;
}

/* ROUNDS plans of p: how many landed as wanted, ld.so making `extra`
 * bytes more than planned first; with hold 0, no plan is held (how many
 * land there by chance). */
static int landed_if(const struct ldplan *p, size_t extra, int *held_all, int hold)
{
	int n = 0;

	*held_all = 1;
	for (int i = 0; i < ROUNDS; i++) {
		struct ldplan_holds h;
		/* Something of the test's own between rounds, as varied as a
		 * start's address space is. */
		size_t pad = (size_t)(i % 7 + 1) * 3 * TX_PAGE;
		void *pd = mmap(NULL, pad, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		h.n = 0;
		if (hold && ldplan_hold(p, &h) != (int)targets(p))
			*held_all = 0;
		n += as_ld_so(p, extra);
		ldplan_release(&h);
		munmap(pd, pad);
	}
	return n;
}

static int landed(const struct ldplan *p, size_t extra, int *held_all)
{
	return landed_if(p, extra, held_all, 1);
}

int main(void)
{
	int all;
	tx_page_set((uint64_t)sysconf(_SC_PAGESIZE));

	/* As for the arm64 libraries: p_align 64 KiB, glibc's reservation of
	 * span + p_align after its malloc page and ld.so.cache. */
	const struct ldplan_req r64[] = { { 8192, 0, 0, 0, 0, 0, 0, 0 }, { 49152, 0, 0, 0, 0, 0, 0, 0 },
					  { 0x850010, 0x10000, 0x840010, 0, 1, 0, 0, 0 } };
	const struct ldplan p64 = { r64, 3 };
	ok(landed(&p64, 0, &all) == ROUNDS && all, "p_align 64 KiB: the library 2 MiB-aligned in %d of %d", ROUNDS, ROUNDS);
	int n = landed_if(&p64, 0, &all, 0);
	ok(n < ROUNDS / 2, "without the plan: %d of %d by chance", n, ROUNDS);
	n = landed(&p64, 8192, &all);
	ok(n == ROUNDS, "and with a malloc page the plan did not foresee: %d of %d", n, ROUNDS);

	/* Three libraries as clang's on arm64: two planned around one that
	 * is not, each a reservation whose head and tail glibc gives back. */
	const struct ldplan_req r3[] = { { 8192, 0, 0, 0, 0, 0, 0, 0 }, { 49152, 0, 0, 0, 0, 0, 0, 0 },
					 { 0x2a50000, 0x10000, 0x2a40000, 0x10000, 1, 0, 0, 0 },
					 { 0x1b0000, 0x10000, 0x1a0000, 0, 0, 0, 0, 0 },
					 { 0x5a30000, 0x10000, 0x5a20000, 0, 1, 0, 0, 0 } };
	const struct ldplan p3 = { r3, 5 };
	ok(landed(&p3, 0, &all) == ROUNDS && all, "two libraries planned after one another: %d of %d", ROUNDS, ROUNDS);
	n = landed(&p3, 3 * 8192, &all);
	ok(n == ROUNDS, "and with three malloc pages the plan did not foresee: %d of %d", n, ROUNDS);

	/* As for libc on x86-64: page-aligned, its start wanted at 0x31000
	 * modulo 2 MiB (the plan must be exact). */
	const struct ldplan_req rc[] = { { 8192, 0, 0, 0, 0, 0, 0, 0 }, { 49152, 0, 0, 0, 0, 0, 0, 0 }, { 0x1e2000, 0, 0, 0x31000, 1, 0, 0, 0 } };
	const struct ldplan pc = { rc, 3 };
	ok(landed(&pc, 0, &all) == ROUNDS && all, "page-aligned: the library at 0x31000 modulo 2 MiB in %d of %d", ROUNDS,
	   ROUNDS);

	/* libc's window on x86-64: the same, with the 0x31000 bytes below
	 * its start held, so that the request after it (a library ld.so
	 * loads after libc) lands below the window, not in it. */
	const struct ldplan_req rw[] = { { 8192, 0, 0, 0, 0, 0, 0, 0 }, { 49152, 0, 0, 0, 0, 0, 0, 0 },
					 { 0x1e2000, 0, 0, 0x31000, 1, 0x31000, 0, 0 }, { 0x9a000, 0, 0, 0, 0, 0, 0, 0 } };
	const struct ldplan pw = { rw, 4 };
	ok(landed(&pw, 0, &all) == ROUNDS && all, "a window: libc at 0x31000, nothing in the 196 KiB below, in %d of %d",
	   ROUNDS, ROUNDS);
	struct ldplan_holds hw;
	int held = ldplan_hold(&pw, &hw) == 1;
	uint64_t st = held ? hw.start[0] : 0;
	ok(held && (st & (TX_HUGE - 1)) == 0x31000 && !unmapped(st - 0x31000, 0x31000) &&
		   unmapped(st, 0x1e2000),
	   "held: the 0x31000 bytes below the library's start, not the library's own span");
	ldplan_release(&hw);
	ok(held && unmapped(st - 0x31000, 0x31000), "released: the window's bytes below are unmapped");

	/* libc's window on arm64: in a reservation (p_align 64 KiB) whose
	 * start is wanted at 0x60000, the 0x60000 bytes below it held.  The
	 * reservation must then begin at the library's start: one that
	 * began lower (its head given back) would not fit above the held
	 * bytes when ld.so asks for it. */
	const struct ldplan_req ra[] = { { 8192, 0, 0, 0, 0, 0, 0, 0 }, { 49152, 0, 0, 0, 0, 0, 0, 0 },
					 { 0x1c0000, 0x10000, 0x1b0000, 0x60000, 1, 0x60000, 0, 0 },
					 { 0x9a000, 0, 0, 0, 0, 0, 0, 0 } };
	const struct ldplan pa = { ra, 4 };
	ok(landed(&pa, 0, &all) == ROUNDS && all,
	   "a window in a reservation: libc at 0x60000, nothing in the 384 KiB below, in %d of %d", ROUNDS, ROUNDS);

	/* A target that cannot land (a residue that is not a multiple of its
	 * align) holds nothing, nor does any target after it; those before
	 * it keep theirs. */
	struct ldplan_req rb[5];
	memcpy(rb, r3, sizeof(rb));
	rb[2].residue = 0x1000;
	const struct ldplan bad = { rb, 5 };
	struct ldplan_holds h;
	ok(ldplan_hold(&bad, &h) == 0 && h.n == 0, "a plan whose first target cannot land holds nothing");
	memcpy(rb, r3, sizeof(rb));
	rb[4].residue = 0x1000;
	ok(ldplan_hold(&bad, &h) == 1, "a second target that cannot land: the first still lands");
	ldplan_release(&h);
	ok(ldplan_hold(&p64, &h) == 1, "held");
	unsigned nh = h.n;
	uint64_t a0 = nh ? h.a[0] : 0, l0 = nh ? h.len[0] : 0;
	ldplan_release(&h);
	ok(h.n == 0 && (!nh || unmapped(a0, l0)), "released: the %u holds are unmapped", nh);
	const struct ldplan none = { r64, 0 };
	ok(ldplan_hold(&none, &h) == -1 && h.n == 0, "no requests: nothing to replay");
	return tap_done();
}
