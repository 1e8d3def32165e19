/* Layout arithmetic: where segments go and which 2 MiB pieces of them can be
 * put on huge pages.
 *
 * Pure functions (no system calls), unit-tested on their own.  All addresses
 * here are *placed* addresses, i.e. p_vaddr plus the load bias. */
#pragma once

#include <stdint.h>

#include "bits.h"
#include "elfcheck.h"


/* A PT_LOAD as placed in memory. */
struct seg {
	uint64_t vaddr, memsz;
	/* The segment's file bytes that the file really holds: p_filesz,
	 * clamped to the end of the file.  The kernel maps p_filesz bytes even
	 * past EOF (touching those pages gives SIGBUS); nothing here may read,
	 * copy or fault in beyond filesz. */
	uint64_t filesz;
	uint64_t offset;
	uint32_t flags;          /* PF_R | PF_W | PF_X */
	/* The pages this segment alone maps, and that may be touched: minus a
	 * page shared with a neighbour, and minus pages wholly past EOF.
	 * Empty for every segment when the segments overlap or are out of
	 * order (then which bytes end up where is the kernel's table-order
	 * rule, and huge pages are not worth the risk). */
	uint64_t own_lo, own_hi;
	int file_short;          /* p_filesz runs past the end of the file */
};

/* Fills segs[] from the program headers (PT_LOAD with p_memsz > 0, in table
 * order, already validated by elf_check_phdrs) and computes each own range.
 * file_size clamps filesz (UINT64_MAX: no clamp).  Returns the number of
 * segments (at most max). */
unsigned layout_segs(const Elf64_Phdr *ph, unsigned phnum, uint64_t bias, uint64_t file_size,
		     struct seg *segs, unsigned max);

/* Whether layout_segs found the segments overlapping or out of order. */
int layout_unordered(const struct seg *s, unsigned n);

/* The load bias for an ET_DYN program placed inside a free region that
 * starts at `region` and is at least (hi - lo) + unit long: the smallest
 * bias >= region - lo with anchor + bias congruent to `mod` modulo `unit`,
 * the placement's alignment (a power of two: 2 MiB, or the PMD where a PMD
 * is larger than a piece, geom_blocks).  For the zero-copy strategy the
 * anchor is the text's p_vaddr and mod its p_offset (page cache folios are
 * aligned in the file); to start the text on a unit boundary the anchor
 * is its page and mod is 0. */
uint64_t layout_dyn_bias(uint64_t region, uint64_t lo, uint64_t anchor, uint64_t mod, uint64_t unit);

/* The load bias honouring the kernel's alignment rule as well: the bias
 * puts the first PT_LOAD's page (p_vaddr `first`) on a multiple of `align`
 * (a power of two, at least a page; load_elf_binary aligns load_bias to
 * maximum_alignment()).  When align <= unit and the congruence of
 * layout_dyn_bias agrees with it, that bias; else the smallest aligned bias
 * >= region - lo (the congruence is lost, and with it zero-copy huge pages).
 * The region must be (hi - lo) + max(align, unit) long. */
uint64_t layout_aligned_bias(uint64_t region, uint64_t lo, uint64_t anchor, uint64_t mod,
			     uint64_t align, uint64_t first, uint64_t unit);

/* The index of the largest executable segment, or -1 if none. */
int layout_main_text(const struct seg *s, unsigned n);

/* [*a, *b): the 2 MiB-aligned pieces that lie wholly inside segment s's own
 * range; empty (*a >= *b) when there is none. */
void layout_inner(const struct seg *s, uint64_t *a, uint64_t *b);

/* [*a, *b): segment i's own range rounded out to 2 MiB, except that a piece
 * holding bytes of a writable segment, of another executable segment, or
 * lying outside [lim_lo, lim_hi) is left out (those bytes cannot become
 * read+execute, or are not ours). */
void layout_outer(const struct seg *s, unsigned n, unsigned i, uint64_t lim_lo, uint64_t lim_hi,
		  uint64_t *a, uint64_t *b);

/* What the file strategy gives a program (tiexec-stat's prediction, from
 * the loader's own arithmetic): bytes of its executable segments' whole
 * 2 MiB pieces that lie congruent to their file offsets once placed.  An
 * ET_DYN program (dyn) is placed with its largest text segment congruent
 * to its file (image.c, text_anchor); an ET_EXEC one where it says. */
uint64_t layout_file_huge(const Elf64_Phdr *ph, unsigned phnum, uint64_t file_size, int dyn);

/* Whether a segment is placed congruent to its file offset modulo 2 MiB, so
 * that page cache huge folios can be mapped into it by PMDs. */
/* The piece arithmetic, one implementation for the loader and the tools.
 * The whole 2 MiB pieces inside [lo, lo + len): [*a, *b), empty when
 * *b <= *a. */
static inline void layout_pieces(uint64_t lo, uint64_t len, uint64_t *a, uint64_t *b)
{
	*a = tx_up(lo, TX_HUGE);
	*b = tx_down(lo + len, TX_HUGE);
}
/* The 2 MiB pieces [lo, hi) touches, rounded out: [*a, *b). */
static inline void layout_pieces_touched(uint64_t lo, uint64_t hi, uint64_t *a, uint64_t *b)
{
	*a = tx_down(lo, TX_HUGE);
	*b = tx_up(hi, TX_HUGE);
}
/* Whether bytes at file offset off, mapped at vaddr, are congruent: a PMD
 * can map them from the page cache. */
static inline int layout_congruent(uint64_t vaddr, uint64_t off)
{
	return ((vaddr - off) & (TX_HUGE - 1)) == 0;
}
static inline int layout_file_congruent(const struct seg *s)
{
	return layout_congruent(s->vaddr, s->offset);
}
