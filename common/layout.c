#include "layout.h"

unsigned layout_segs(const Elf64_Phdr *ph, unsigned phnum, uint64_t bias, uint64_t file_size,
		     struct seg *segs, unsigned max)
{
	unsigned n = 0;
	int unordered = 0;

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
		s->file_short = 0;
		uint64_t avail = file_size > s->offset ? file_size - s->offset : 0;
		if (s->filesz > avail) {
			/* The page holding EOF reads as zeros past it; the
			 * pages after it would raise SIGBUS. */
			s->filesz = avail;
			s->file_short = 1;
			s->own_hi = tx_up(s->vaddr + avail, TX_PAGE);
		}
		if (n > 1 && s->vaddr < segs[n - 2].vaddr + segs[n - 2].memsz)
			unordered = 1;
	}
	if (unordered) {
		for (unsigned i = 0; i < n; i++)
			segs[i].own_hi = segs[i].own_lo;
		return n;
	}
	/* Ascending, no shared bytes: the only sharing is of the page at a
	 * boundary, which neither owns. */
	for (unsigned i = 1; i < n; i++) {
		if (segs[i].own_lo < tx_up(segs[i - 1].vaddr + segs[i - 1].memsz, TX_PAGE)) {
			if (segs[i - 1].own_hi > segs[i].own_lo)
				segs[i - 1].own_hi = segs[i].own_lo;
			segs[i].own_lo += TX_PAGE;
		}
	}
	return n;
}

int layout_unordered(const struct seg *s, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		if (s[i].vaddr < s[i - 1].vaddr + s[i - 1].memsz)
			return 1;
	return 0;
}

uint64_t layout_dyn_bias(uint64_t region, uint64_t lo, uint64_t anchor, uint64_t mod, uint64_t unit)
{
	uint64_t bias = region - lo;

	return bias + ((mod - (anchor + bias)) & (unit - 1));
}

uint64_t layout_aligned_bias(uint64_t region, uint64_t lo, uint64_t anchor, uint64_t mod,
			     uint64_t align, uint64_t first, uint64_t unit)
{
	uint64_t base = region - lo;
	uint64_t want = (0 - tx_down(first, TX_PAGE)) & (align - 1); /* bias mod align */

	if (align <= unit) {
		uint64_t b = layout_dyn_bias(region, lo, anchor, mod, unit);
		if (((b - want) & (align - 1)) == 0)
			return b;
	}
	return base + ((want - base) & (align - 1));
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
	/* Past a short file's end the pages must keep raising SIGBUS. */
	uint64_t hi = x->file_short ? tx_down(x->own_hi, TX_HUGE) : tx_up(x->own_hi, TX_HUGE);

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

uint64_t layout_file_huge(const Elf64_Phdr *ph, unsigned phnum, uint64_t file_size, int dyn)
{
	struct seg segs[TX_PH_MAX];
	uint64_t bias = 0, huge = 0, a, b;
	unsigned n = layout_segs(ph, phnum, 0, file_size, segs, TX_PH_MAX);
	int t = layout_main_text(segs, n);

	if (t < 0)
		return 0;
	if (dyn)
		bias = (segs[t].offset - segs[t].vaddr) & (TX_HUGE - 1);
	n = layout_segs(ph, phnum, bias, file_size, segs, TX_PH_MAX);
	for (unsigned i = 0; i < n; i++) {
		if (!(segs[i].flags & PF_X) || !layout_file_congruent(&segs[i]))
			continue;
		layout_inner(&segs[i], &a, &b);
		huge += b - a;
	}
	return huge;
}
