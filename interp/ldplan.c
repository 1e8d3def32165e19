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

/* What a replay of requests 0 to t saw: where t landed (m) and its
 * library's start, and the top a hold for it may have: t's own top, or
 * lower where t landed over space an earlier request held for a while (a
 * reservation's head or tail, given back), which that request must find
 * free again. */
struct seen {
	uint64_t m, start, top;
};

/* Replays requests 0 to t into *v and gives every stand-in back.  0 or a
 * negative errno. */
static long replay(const struct ldplan *p, unsigned t, struct seen *v)
{
	struct stand_in s[LDPLAN_MAX_REQS];
	uint64_t at[LDPLAN_MAX_REQS];
	unsigned k;
	long e = 0;

	for (k = 0; k <= t; k++) {
		e = request(&p->req[k], &at[k], &s[k]);
		if (e < 0)
			break;
	}
	if (k > t) {
		v->m = at[t];
		v->start = s[t].a;
		v->top = at[t] + tx_up(p->req[t].len, TX_PAGE);
		for (unsigned j = 0; j < t; j++) {
			uint64_t end = at[j] + tx_up(p->req[j].len, TX_PAGE);
			if (at[j] < v->top && end > v->m && at[j] > v->m)
				v->top = at[j];
		}
	}
	while (k-- > 0)
		sys_munmap(s[k].a, s[k].len);
	return e;
}

/* Where target q's request should land, modulo 2 MiB: its start itself,
 * or for an aligned reservation the middle of the align bytes below the
 * wanted start. */
static uint64_t aim(const struct ldplan_req *q)
{
	uint64_t below = q->align > TX_PAGE ? q->align / 2 : 0;

	return (q->residue - below) & (TX_HUGE - 1);
}

static int landed(const struct ldplan_req *q, uint64_t start)
{
	return (start & (TX_HUGE - 1)) == (q->residue & (TX_HUGE - 1));
}

/* Holds the top delta bytes below top: whether the kernel put it there. */
static int hold(struct ldplan_holds *h, uint64_t top, uint64_t delta)
{
	long r = h->n < LDPLAN_MAX_HOLDS && delta ? sys_mmap(top - delta, delta, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0)
					: -1;

	if (r != (long)(top - delta)) {
		if (r >= 0) /* a kernel that took the address as a hint */
			sys_munmap((uint64_t)r, delta);
		return 0;
	}
	h->a[h->n] = top - delta;
	h->len[h->n++] = delta;
	return 1;
}

/* Gives back the holds after the first n. */
static void release_to(struct ldplan_holds *h, unsigned n)
{
	while (h->n > n) {
		h->n--;
		sys_munmap(h->a[h->n], h->len[h->n]);
	}
}

/* Moves target t to its residue, the targets before it in place: 1 with
 * its start in *start, 0 when it cannot be (its holds given back), or a
 * negative errno.  A hold lies where t landed, below what any request
 * before it used, so those land as before; it moves t down by the
 * distance from its landing to the aim modulo 2 MiB (2 MiB more where the
 * hold's top had to be lower).  A window target's below bytes are held
 * too, so that nothing ld.so maps later lands in its window. */
static long place(const struct ldplan *p, unsigned t, struct ldplan_holds *h, uint64_t *start)
{
	const struct ldplan_req *q = &p->req[t];
	unsigned before = h->n;
	struct seen v;

	for (unsigned round = 0; round < 4; round++) {
		long e = replay(p, t, &v);
		if (e < 0)
			return e;
		if (landed(q, v.start)) {
			if (q->below && !hold(h, v.start, q->below))
				break;
			*start = v.start;
			return 1;
		}
		uint64_t end = v.m + tx_up(q->len, TX_PAGE);
		uint64_t shift = tx_up((v.m - aim(q)) & (TX_HUGE - 1), TX_PAGE);
		if (shift && end - shift >= v.top)
			shift += TX_HUGE;
		if (!shift || !hold(h, v.top, v.top - (end - shift)))
			break;
	}
	release_to(h, before);
	return 0;
}

int ldplan_hold(const struct ldplan *p, struct ldplan_holds *h)
{
	int n = 0;

	h->n = 0;
	if (p->n == 0 || p->n > LDPLAN_MAX_REQS)
		return -1;
	for (unsigned t = 0; t < p->n; t++) {
		if (!p->req[t].target)
			continue;
		long r = place(p, t, h, &h->start[n]);
		if (r < 0) {
			release_to(h, 0);
			return -1;
		}
		if (r == 0)
			break;
		n++;
	}
	return n;
}

void ldplan_release(struct ldplan_holds *h)
{
	release_to(h, 0);
}
