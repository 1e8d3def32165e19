/* The placement layer's notes and accounting (place.h). */
#include "place.h"

#include "rt.h"

void place_note_why(struct huge_result *res, const struct why *w)
{
	for (unsigned i = 0; i < res->nnotes; i++)
		if (res->notes[i].r == w->r)
			return;
	if (res->nnotes < HUGE_MAX_NOTES)
		res->notes[res->nnotes++] = *w;
}

void place_note(struct huge_result *res, enum reason r)
{
	struct why w = { r, reason_text(r) };

	place_note_why(res, &w);
}

/* The bytes of [a, b) inside executable segments. */
uint64_t place_text_in(const struct huge_req *r, uint64_t a, uint64_t b)
{
	uint64_t n = 0;

	for (unsigned j = 0; j < r->nsegs; j++) {
		const struct seg *s = &r->segs[j];
		if (!(s->flags & PF_X))
			continue;
		uint64_t lo = s->vaddr > a ? s->vaddr : a;
		uint64_t hi = s->vaddr + s->memsz < b ? s->vaddr + s->memsz : b;
		if (lo < hi)
			n += hi - lo;
	}
	return n;
}

void place_account(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t b,
		    uint64_t *bucket)
{
	*bucket += b - a;
	res->text_huge += place_text_in(r, a, b);
}

/* What account counted of [a, b) (indexed from a0 in hs) that is in
 * contiguous blocks rather than on PMDs, measured or not (CC_BLOCK,
 * HS_UNMEASURED). */
void place_account_blocks(const struct huge_req *r, struct huge_result *res, uint64_t a0, uint64_t a,
			   uint64_t b, const uint8_t *hs)
{
	for (uint64_t x = a; x < b; x += TX_HUGE) {
		uint8_t h = hs[(x - a0) / TX_HUGE];
		if (h == CC_BLOCK)
			res->text_blocks += place_text_in(r, x, x + TX_HUGE);
		else if (h == HS_UNMEASURED)
			res->text_unmeasured += place_text_in(r, x, x + TX_HUGE);
	}
}

/* Where a piece is a contiguous block (geom_blocks): marks in hs[] the
 * pieces of [lo, hi), faulted in, not on PMDs that are blocks; where that
 * cannot be measured (not root: no frame numbers), every such piece
 * HS_UNMEASURED when `likely`: when what backs it comes in folios of 2 MiB
 * or more (anonymous THP's settings allow them, the text cache's tmpfs). */
void place_mark_blocks(const struct huge_req *r, uint64_t lo, uint64_t hi, uint8_t *hs, int likely)
{
	if (cconv_blocks(&r->state->cc, lo, hi, hs, 0) == 0 || !likely)
		return;
	for (uint64_t k = 0; k < (hi - lo) / TX_HUGE; k++)
		if (!hs[k])
			hs[k] = HS_UNMEASURED;
}

/* why, when one of the n pieces in hs is HS_UNMEASURED. */
void place_note_unmeasured(struct huge_result *res, const uint8_t *hs, uint64_t n, enum reason why)
{
	for (uint64_t k = 0; k < n; k++)
		if (hs[k] == HS_UNMEASURED) {
			place_note(res, why);
			return;
		}
}

/* The pieces of [a, a + n * 2 MiB) that hs says are huge and state does
 * not hold yet: taken into state and counted into *bucket.  Returns
 * whether any piece is left small. */
int place_take(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t n,
		     const uint8_t *hs, uint8_t *state, uint64_t *bucket)
{
	int small = 0;

	for (uint64_t k = 0; k < n; k++) {
		if (!state[k] && hs[k]) {
			state[k] = 1;
			place_account(r, res, a + k * TX_HUGE, a + (k + 1) * TX_HUGE, bucket);
			place_account_blocks(r, res, a, a + k * TX_HUGE, a + (k + 1) * TX_HUGE, hs);
		}
		small |= !state[k];
	}
	return small;
}

