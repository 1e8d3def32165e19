#include "layout.h"

unsigned layout_segs(const Elf64_Phdr *ph, unsigned phnum, uint64_t bias, struct seg *segs,
		     unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < phnum && n < max; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_memsz == 0)
			continue;
		struct seg *s = &segs[n++];
		s->vaddr = ph[i].p_vaddr + bias;
		s->memsz = ph[i].p_memsz;
		s->filesz = ph[i].p_filesz;
		s->offset = ph[i].p_offset;
		s->flags = ph[i].p_flags & (PF_R | PF_W | PF_X);
		s->own_lo = tx_down(s->vaddr, TX_PAGE);
		s->own_hi = tx_up(s->vaddr + s->memsz, TX_PAGE);
	}
	/* Segments are ascending and do not overlap (elf_check_phdrs); the
	 * only sharing is of the page at a boundary. */
	for (unsigned i = 1; i < n; i++) {
		if (segs[i].own_lo < segs[i - 1].own_hi) {
			segs[i - 1].own_hi = segs[i].own_lo;
			segs[i].own_lo += TX_PAGE;
		}
	}
	return n;
}

uint64_t layout_dyn_bias(uint64_t region, uint64_t lo, uint64_t anchor, uint64_t mod)
{
	uint64_t bias = region - lo;

	return bias + ((mod - (anchor + bias)) & (TX_HUGE - 1));
}

int layout_main_text(const struct seg *s, unsigned n)
{
	int best = -1;

	for (unsigned i = 0; i < n; i++)
		if ((s[i].flags & PF_X) && (best < 0 || s[i].memsz > s[best].memsz))
			best = (int)i;
	return best;
}

void layout_inner(const struct seg *s, uint64_t *a, uint64_t *b)
{
	*a = tx_up(s->own_lo, TX_HUGE);
	*b = tx_down(s->own_hi, TX_HUGE);
	if (s->own_lo >= s->own_hi || *a > *b)
		*a = *b = 0;
}

/* Whether [a, a + 2 MiB) may be given to segment i as a rounded-out piece. */
static int piece_allowed(const struct seg *s, unsigned n, unsigned i, uint64_t a, uint64_t lim_lo,
			 uint64_t lim_hi)
{
	uint64_t b = a + TX_HUGE;

	if (a < lim_lo || b > lim_hi)
		return 0;
	for (unsigned j = 0; j < n; j++) {
		/* The neighbour's whole page range: a page it shares with
		 * segment i is still (partly) its memory. */
		uint64_t lo = tx_down(s[j].vaddr, TX_PAGE), hi = tx_up(s[j].vaddr + s[j].memsz, TX_PAGE);
		int foreign = (s[j].flags & PF_W) || (s[j].flags & PF_X);
		if (j != i && foreign && lo < b && a < hi)
			return 0;
	}
	return 1;
}

void layout_outer(const struct seg *s, unsigned n, unsigned i, uint64_t lim_lo, uint64_t lim_hi,
		  uint64_t *a, uint64_t *b)
{
	const struct seg *x = &s[i];
	uint64_t lo = tx_down(x->own_lo, TX_HUGE);
	uint64_t hi = tx_up(x->own_hi, TX_HUGE);

	if (x->own_lo >= x->own_hi) {
		*a = *b = 0;
		return;
	}
	if (!piece_allowed(s, n, i, lo, lim_lo, lim_hi))
		lo += TX_HUGE;
	if (hi > lo && !piece_allowed(s, n, i, hi - TX_HUGE, lim_lo, lim_hi))
		hi -= TX_HUGE;
	if (lo >= hi) {
		*a = *b = 0;
		return;
	}
	*a = lo;
	*b = hi;
}
