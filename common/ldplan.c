/* Replaying ld.so's requests (see ldplan.h).  The kernel places each
 * mmap(NULL, len) at the top of the highest gap below mmap_base that holds
 * it (and on some kernels aligns large anonymous ones to 2 MiB): the
 * replay asks the kernel itself rather than modelling it.  Holding the top
 * delta bytes of the gap the target lands in moves it delta lower, the
 * requests before it staying where they were.
 *
 * A page-aligned file mapping of 2 MiB or more the kernel places itself
 * from Linux 5.18 (2 MiB-aligned after asking 2 MiB more): its stand-in is
 * the library's own file, and holds keep out of the span it asked, which
 * would move it, but for one that moves it 2 MiB lower on purpose
 * (request_file, place).
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
	/* A kernel-aligned file mapping's search (req.file): the span of
	 * its length and 2 MiB more that the kernel asked free; 0, 0: none. */
	uint64_t lo, hi;
};

/* A file mapping the kernel aligns (thp_get_unmapped_area, Linux 5.18
 * on): it asks for the length and 2 MiB more, top-down, and maps the file
 * at the highest 2 MiB boundary in that span.  The span is asked first
 * with an anonymous probe of its length, which the kernel places the same
 * way (it aligns an anonymous mapping only when its length is a multiple
 * of 2 MiB); where the file then lands outside it, the span is taken as
 * the 2 MiB on either side.  Holding anything in the span moves the file. */
static long request_file(const struct ldplan_req *q, struct stand_in *s)
{
	uint64_t len = tx_up(q->len, TX_PAGE), pad = len + TX_HUGE;
	long g = sys_mmap(0, pad, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (g >= 0)
		sys_munmap((uint64_t)g, pad);
	long r = sys_mmap(0, q->len, PROT_NONE, MAP_PRIVATE, q->fd, 0);
	if (r < 0)
		return r;
	s->a = (uint64_t)r;
	s->len = len;
	s->lo = (uint64_t)g;
	s->hi = (uint64_t)g + pad;
	if (g < 0 || s->a < s->lo || s->a + len > s->hi) {
		s->lo = s->a - TX_HUGE;
		s->hi = s->a + len + TX_HUGE;
	}
	return 0;
}

/* One request as ld.so makes it, PROT_NONE: where the kernel put it into
 * *m, what stays mapped (the library's span) into *s.  0 or a negative
 * errno. */
static long request(const struct ldplan_req *q, uint64_t *m, struct stand_in *s)
{
	s->lo = s->hi = 0;
	if (q->file) {
		long e = request_file(q, s);
		*m = s->a;
		return e;
	}
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
 * lower where t landed below space an earlier request held for a while (a
 * reservation's head or tail, given back; a kernel-aligned file's span),
 * which that request must find free again.  Where t landed in such a
 * file's span above the file (the rest of its 2 MiB), hole is where that
 * space starts (else 0) and span where the next span above it starts: a
 * hold of [hole, t's top) below span keeps the file where it is (its
 * search then starts 2 MiB below it) and sends t elsewhere.  stuck: t
 * landed in such a span below its file, where no hold can move it. */
struct seen {
	uint64_t m, start, top;
	uint64_t hole, span;
	int stuck;
	uint64_t stuck_top, stuck_hole; /* that file's span's top, and the space above the file */
	int below_hit; /* t's below bytes lie over what a request before it used */
};

/* The spans of the kernel-aligned files among s[0..t) against t's landing
 * (v->m): v->top lowered to one above it, or v->hole or v->stuck; and
 * whether the below bytes under t's start lie over one, or over another
 * request's stand-in. */
static void spans(const struct stand_in *s, unsigned t, uint64_t below, struct seen *v)
{
	v->hole = 0;
	v->stuck = 0;
	v->below_hit = 0;
	v->span = UINT64_MAX;
	for (unsigned j = 0; j < t; j++) {
		uint64_t lo = s[j].hi ? s[j].lo : s[j].a, hi = s[j].hi ? s[j].hi : s[j].a + s[j].len;
		v->below_hit |= below && lo < v->start && hi > v->start - below;
		if (!s[j].hi)
			continue;
		if (s[j].lo > v->m && s[j].lo < v->top)
			v->top = s[j].lo;
		else if (s[j].lo <= v->m && v->m < s[j].hi) {
			if (v->m >= s[j].a + s[j].len)
				v->hole = s[j].a + s[j].len;
			else {
				v->stuck = 1;
				v->stuck_top = s[j].hi;
				v->stuck_hole = s[j].hi - (s[j].a + s[j].len);
			}
		}
	}
	for (unsigned j = 0; v->hole && j < t; j++)
		if (s[j].hi && s[j].lo >= v->hole && s[j].lo < v->span)
			v->span = s[j].lo;
}

/* The stand-ins of a replay: requests 0 to k-1 mapped as the kernel
 * placed them (s), where each landed (at).  They stay mapped from one
 * replay to the next: a hold that keeps out of a request's footprint
 * (footprint), and of those of the requests before it, leaves it where it
 * is (the kernel places each one at the top of the highest gap that holds
 * it, and a hold only takes free space away), so only the requests from
 * the first whose footprint the hold meets are given back (unreplay) and
 * made again at the next replay, with the hold there. */
struct replay {
	struct stand_in s[LDPLAN_MAX_REQS];
	uint64_t at[LDPLAN_MAX_REQS];
	unsigned k;
};

/* Gives the stand-ins of requests j on back. */
static void unreplay(struct replay *r, unsigned j)
{
	uint64_t a[LDPLAN_MAX_REQS], len[LDPLAN_MAX_REQS];
	unsigned n = 0;

	/* In address order, those that touch given back as one (a system
	 * call each is a good part of what planning costs). */
	for (unsigned i = j; i < r->k; i++) {
		unsigned at = n++;
		for (; at > 0 && a[at - 1] > r->s[i].a; at--) {
			a[at] = a[at - 1];
			len[at] = len[at - 1];
		}
		a[at] = r->s[i].a;
		len[at] = r->s[i].len;
	}
	for (unsigned i = 0; i < n;) {
		uint64_t lo = a[i], hi = a[i] + len[i];
		for (i++; i < n && a[i] == hi; i++)
			hi += len[i];
		sys_munmap(lo, hi - lo);
	}
	r->k = j < r->k ? j : r->k;
}

/* What request j's placement used, for a while or for good: the span a
 * kernel-aligned file's placement asked, else all of what it asked (a
 * reservation's head and tail too). */
static void footprint(const struct ldplan *p, const struct replay *r, unsigned j, uint64_t *lo, uint64_t *hi)
{
	*lo = r->s[j].hi ? r->s[j].lo : r->at[j];
	*hi = r->s[j].hi ? r->s[j].hi : r->at[j] + tx_up(p->req[j].len, TX_PAGE);
}

/* Before holding [lo, hi): the stand-ins given back from the first whose
 * footprint it meets, so that the next replay places them with the hold
 * there. */
static void clear_for(const struct ldplan *p, struct replay *r, uint64_t lo, uint64_t hi)
{
	for (unsigned j = 0; j < r->k; j++) {
		uint64_t a, b;
		footprint(p, r, j, &a, &b);
		if (a < hi && lo < b) {
			unreplay(r, j);
			return;
		}
	}
}

/* Replays requests 0 to t into *v: those before t that are not mapped yet
 * made and kept (r), t made and given back.  0 or a negative errno. */
static long replay(const struct ldplan *p, unsigned t, struct replay *r, struct seen *v)
{
	struct stand_in *s = r->s;
	uint64_t *at = r->at;
	long e;

	for (; r->k < t; r->k++)
		if ((e = request(&p->req[r->k], &at[r->k], &s[r->k])) < 0)
			return e;
	if ((e = request(&p->req[t], &at[t], &s[t])) < 0)
		return e;
	v->m = at[t];
	v->start = s[t].a;
	v->top = at[t] + tx_up(p->req[t].len, TX_PAGE);
	for (unsigned j = 0; j < t; j++) {
		uint64_t end = at[j] + tx_up(p->req[j].len, TX_PAGE);
		if (!s[j].hi && at[j] < v->top && end > v->m && at[j] > v->m)
			v->top = at[j];
	}
	spans(s, t, p->req[t].below, v);
	sys_munmap(s[t].a, s[t].len);
	return 0;
}

/* Where target q's request should land, modulo 2 MiB: its start itself,
 * or for an aligned reservation the middle of the align bytes below the
 * wanted start -- but for a window target's reservation its start: with
 * the window's below bytes held, a reservation that began lower (its
 * head given back) would not fit above them any more. */
static uint64_t aim(const struct ldplan_req *q)
{
	uint64_t below = q->align > TX_PAGE && !q->below ? q->align / 2 : 0;

	return (q->residue - below) & (TX_HUGE - 1);
}

/* Whether a replay that saw v put target q where it is wanted. */
static int landed(const struct ldplan_req *q, const struct seen *v)
{
	return (v->start & (TX_HUGE - 1)) == (q->residue & (TX_HUGE - 1)) && (!q->below || v->m == v->start);
}

/* Holds the top delta bytes below top (the stand-ins of rp given back
 * first where it meets theirs): whether the kernel put it there. */
static int hold(const struct ldplan *p, struct replay *rp, struct ldplan_holds *h, uint64_t top, uint64_t delta)
{
	if (delta)
		clear_for(p, rp, top - delta, top);
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
 * hold's top had to be lower).  Where t landed in the rest of a
 * kernel-aligned file's 2 MiB, that space is held instead, so that t lands
 * elsewhere (seen.hole).  A window target's below bytes are held too, so
 * that nothing ld.so maps later lands in its window; where they lie in a
 * kernel-aligned file's span or over a mapping of the process's own, t is
 * moved 2 MiB lower first. */
static long place(const struct ldplan *p, unsigned t, struct replay *r, struct ldplan_holds *h, uint64_t *start)
{
	const struct ldplan_req *q = &p->req[t];
	unsigned before = h->n;
	struct seen v = { 0 };

	for (unsigned round = 0, moved = 0; round < 6; round++) {
		long e = replay(p, t, r, &v);
		if (e < 0)
			return e;
		if (v.stuck) {
			/* Below the file, in the 2 MiB its placement asked: move
			 * the file itself 2 MiB lower, with the space that asked
			 * made about 1 MiB above it and below it, which t does not
			 * fit (its own top held down by more than that space). */
			uint64_t d = v.stuck_hole + TX_HUGE / 2;
			if (moved++ || !hold(p, r, h, v.stuck_top, d))
				break;
			continue;
		}
		uint64_t end = v.m + tx_up(q->len, TX_PAGE);
		if (v.hole) {
			uint64_t top = end < v.span ? end : v.span;
			uint64_t d = top > v.hole + TX_HUGE / 2 ? TX_HUGE / 2 : top > v.hole + TX_PAGE ? top - v.hole - TX_PAGE : 0;
			if (!d || !hold(p, r, h, top, top - (v.hole + d)))
				break;
			continue;
		}
		int blocked = v.below_hit;
		if (landed(q, &v) && !blocked) {
			if (!q->below || hold(p, r, h, v.start, q->below)) {
				*start = v.start;
				return 1;
			}
			blocked = 1; /* a mapping of the process's own is there */
		}
		uint64_t shift = tx_up((v.m - aim(q)) & (TX_HUGE - 1), TX_PAGE);
		if (!shift && blocked)
			shift = TX_HUGE;
		if (shift && end - shift >= v.top)
			shift += TX_HUGE;
		if (!shift || !hold(p, r, h, v.top, v.top - (end - shift)))
			break;
	}
	unreplay(r, 0); /* the holds given back: the stand-ins' places may change */
	release_to(h, before);
	return 0;
}

int ldplan_hold(const struct ldplan *p, struct ldplan_holds *h)
{
	static struct replay r;
	int n = 0;

	h->n = 0;
	if (p->n == 0 || p->n > LDPLAN_MAX_REQS)
		return -1;
	for (unsigned t = 0; t < p->n; t++) {
		if (!p->req[t].target)
			continue;
		long e = place(p, t, &r, h, &h->start[n]);
		if (e < 0) {
			unreplay(&r, 0);
			release_to(h, 0);
			return -1;
		}
		if (e == 0)
			break;
		n++;
	}
	unreplay(&r, 0);
	return n;
}

void ldplan_close(const struct ldplan *p)
{
	for (unsigned k = 0; k < p->n; k++)
		if (p->req[k].file)
			sys_close(p->req[k].fd);
}

void ldplan_release(struct ldplan_holds *h)
{
	release_to(h, 0);
}
