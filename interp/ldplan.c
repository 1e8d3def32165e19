/* Replaying ld.so's requests (see ldplan.h).  The kernel places each
 * mmap(NULL, len) at the top of the highest gap below mmap_base that holds
 * it (and on some kernels aligns large anonymous ones to 2 MiB): the
 * replay asks the kernel itself rather than modelling it.  Holding the top
 * delta bytes of the gap the target lands in moves it delta lower, the
 * requests before it staying where they were.
 *
 * For a reservation (align above the page) the library starts at the
 * reservation aligned up to align, so any landing in the align bytes
 * below its wanted start gives the same start: the plan aims at the middle
 * of that window, and ld.so's small requests that the plan did not foresee
 * (a page of its malloc, a larger ld.so.cache) move nothing. */
#include "ldplan.h"

#include "bits.h"
#include "geom.h"
#include "sys.h"

#define LDPLAN_MAX_REQS 64

struct stand_in {
	uint64_t a, len;
};

/* One request as ld.so makes it, PROT_NONE: where the kernel put it into
 * *m, what stays mapped (the library's span) into *s.  0 or a negative
 * errno. */
static long request(const struct ldplan_req *q, uint64_t *m, struct stand_in *s)
{
	long r = sys_mmap(0, q->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (r < 0)
		return r;
	*m = s->a = (uint64_t)r;
	s->len = tx_up(q->len, TX_PAGE);
	if (q->align > TX_PAGE) {
		uint64_t top = *m + s->len, a = tx_up(*m, q->align), end = a + tx_up(q->keep, TX_PAGE);
		if (end > top)
			end = top;
		if (a > *m)
			sys_munmap(*m, a - *m);
		if (top > end)
			sys_munmap(end, top - end);
		s->a = a;
		s->len = end - a;
	}
	return 0;
}

/* Replays the requests and gives every stand-in back: the target's
 * landing into *m, its library's start into *start.  0 or a negative
 * errno. */
static long replay(const struct ldplan *p, uint64_t *m, uint64_t *start)
{
	struct stand_in s[LDPLAN_MAX_REQS];
	unsigned k;
	long e = 0;

	for (k = 0; k < p->n; k++) {
		e = request(&p->req[k], m, &s[k]);
		if (e < 0)
			break;
	}
	*start = k == p->n ? s[k - 1].a : 0;
	while (k-- > 0)
		sys_munmap(s[k].a, s[k].len);
	return e;
}

/* Where the target's reservation should land, modulo 2 MiB: its start
 * itself, or for an aligned reservation the middle of the align bytes
 * below the wanted start. */
static uint64_t aim(const struct ldplan *p)
{
	const struct ldplan_req *t = &p->req[p->n - 1];
	uint64_t below = t->align > TX_PAGE ? t->align / 2 : 0;

	return (p->residue - below) & (TX_HUGE - 1);
}

int ldplan_hold(const struct ldplan *p, struct ldplan_holds *h)
{
	uint64_t m, start, want;

	h->n = 0;
	if (p->n == 0 || p->n > LDPLAN_MAX_REQS)
		return -1;
	want = aim(p);
	for (;;) {
		if (replay(p, &m, &start) < 0) {
			ldplan_release(h);
			return -1;
		}
		if ((start & (TX_HUGE - 1)) == (p->residue & (TX_HUGE - 1)))
			return 1;
		uint64_t delta = tx_up((m - want) & (TX_HUGE - 1), TX_PAGE);
		uint64_t top = m + tx_up(p->req[p->n - 1].len, TX_PAGE);
		long r = h->n < LDPLAN_MAX_HOLDS && delta ? sys_mmap(top - delta, delta, PROT_NONE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0)
						: -1;
		if (r != (long)(top - delta)) {
			if (r >= 0) /* a kernel that took the address as a hint */
				sys_munmap((uint64_t)r, delta);
			ldplan_release(h);
			return 0;
		}
		h->a[h->n] = top - delta;
		h->len[h->n++] = delta;
	}
}

void ldplan_release(struct ldplan_holds *h)
{
	while (h->n > 0) {
		h->n--;
		sys_munmap(h->a[h->n], h->len[h->n]);
	}
}
