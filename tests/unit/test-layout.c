/* Unit tests for common/layout.c (TAP).
 *   gcc -std=gnu11 -Wall -Wextra -Werror -fsanitize=address,undefined \
 *       -fno-sanitize-recover=all -g -Iinterp tests/unit/test-layout.c \
 *       common/layout.c common/elfcheck.c */
#include <string.h>

#include "layout.h"
#include "tap.h"

#define M2 TX_HUGE
#define K4 ARCH_PAGE_SIZE /* the tests run at the default page: tx_page() */
#define R PF_R
#define RX (PF_R | PF_X)
#define RW (PF_R | PF_W)

/* ---- layout_segs ---------------------------------------------------------- */

#define MAXSEG 6

struct want_seg {
	uint64_t vaddr, own_lo, own_hi;
	uint32_t flags;
};

struct segs_case {
	const char *desc;
	Elf64_Phdr ph[MAXSEG];
	unsigned phnum, max;
	uint64_t bias;
	unsigned want_n;
	struct want_seg want[MAXSEG];
};

#define LOAD(f, off, va, fsz, msz) { PT_LOAD, (f), (off), (va), (va), (fsz), (msz), 0x1000 }

static const struct segs_case segs_cases[] = {
	{ "disjoint segments: own range is the page-rounded range",
	  { LOAD(R, 0, 0x400000, 0x200, 0x200), LOAD(RX, 0x1000, 0x401000, 0x100, 0x100),
	    LOAD(RW, 0x2000, 0x402000, 0x10, 0x1800) },
	  3, MAXSEG, 0, 3,
	  { { 0x400000, 0x400000, 0x401000, R }, { 0x401000, 0x401000, 0x402000, RX },
	    { 0x402000, 0x402000, 0x404000, RW } } },
	{ "bias is added",
	  { LOAD(R, 0, 0, 0x200, 0x200), LOAD(RX, 0x1000, 0x1000, 0x100, 0x100) }, 2, MAXSEG,
	  0x7f0000000000ULL, 2,
	  { { 0x7f0000000000ULL, 0x7f0000000000ULL, 0x7f0000001000ULL, R },
	    { 0x7f0000001000ULL, 0x7f0000001000ULL, 0x7f0000002000ULL, RX } } },
	{ "unaligned starts and ends are rounded out",
	  { LOAD(RX, 0x123, 0x401123, 0x100, 0x100), LOAD(RW, 0x2f00, 0x403f00, 0x10, 0x200) },
	  2, MAXSEG, 0, 2,
	  { { 0x401123, 0x401000, 0x402000, RX }, { 0x403f00, 0x403000, 0x405000, RW } } },
	{ "shared boundary page belongs to neither neighbour",
	  { LOAD(RX, 0, 0x400000, 0x1080, 0x1080), LOAD(RW, 0x1080, 0x401080, 0x100, 0x2000) },
	  2, MAXSEG, 0, 2,
	  { { 0x400000, 0x400000, 0x401000, RX }, { 0x401080, 0x402000, 0x404000, RW } } },
	{ "a segment inside one page shared on both sides owns nothing",
	  { LOAD(RX, 0, 0x400000, 0x1100, 0x1100), LOAD(R, 0x1100, 0x401100, 0x100, 0x100),
	    LOAD(RW, 0x1200, 0x401200, 0x100, 0x2000) },
	  3, MAXSEG, 0, 3,
	  { { 0x400000, 0x400000, 0x401000, RX },
	    { 0x401100, 0x402000, 0x401000, R }, /* empty: own_lo >= own_hi */
	    { 0x401200, 0x402000, 0x404000, RW } } },
	{ "non-PT_LOAD and empty PT_LOAD entries are skipped",
	  { { PT_PHDR, R, 0x40, 0x400040, 0x400040, 0xe0, 0xe0, 8 },
	    { PT_INTERP, R, 0x200, 0x400200, 0x400200, 28, 28, 1 },
	    LOAD(R, 0, 0x400000, 0x300, 0x300), LOAD(RW, 0, 0x500000, 0, 0),
	    { PT_GNU_STACK, RW, 0, 0, 0, 0, 0, 16 }, LOAD(RX, 0x1000, 0x401000, 0x10, 0x10) },
	  6, MAXSEG, 0, 2,
	  { { 0x400000, 0x400000, 0x401000, R }, { 0x401000, 0x401000, 0x402000, RX } } },
	{ "flags keep only R, W, X",
	  { LOAD(RX | PF_MASKOS | PF_MASKPROC, 0x1000, 0x401000, 0x10, 0x10) }, 1, MAXSEG, 0, 1,
	  { { 0x401000, 0x401000, 0x402000, RX } } },
	{ "at most max segments",
	  { LOAD(R, 0, 0x400000, 0x200, 0x200), LOAD(RX, 0x1000, 0x401000, 0x100, 0x100),
	    LOAD(RW, 0x2000, 0x402000, 0x10, 0x1800) },
	  3, 2, 0, 2,
	  { { 0x400000, 0x400000, 0x401000, R }, { 0x401000, 0x401000, 0x402000, RX } } },
};

static void test_segs(void)
{
	for (size_t i = 0; i < TAP_N(segs_cases); i++) {
		const struct segs_case *c = &segs_cases[i];
		struct seg segs[MAXSEG + 1];

		memset(segs, 0xa5, sizeof(segs));
		unsigned n = layout_segs(c->ph, c->phnum, c->bias, UINT64_MAX, segs, c->max);
		int good = n == c->want_n;
		for (unsigned k = 0; good && k < n; k++) {
			const struct want_seg *w = &c->want[k];
			const struct seg *s = &segs[k];
			const Elf64_Phdr *p = NULL;
			/* the k-th non-empty PT_LOAD */
			for (unsigned j = 0, seen = 0; j < c->phnum; j++)
				if (c->ph[j].p_type == PT_LOAD && c->ph[j].p_memsz && seen++ == k) {
					p = &c->ph[j];
					break;
				}
			int empty_want = w->own_lo >= w->own_hi, empty_got = s->own_lo >= s->own_hi;
			good = p && s->vaddr == w->vaddr && s->flags == w->flags &&
			       s->memsz == p->p_memsz && s->filesz == p->p_filesz &&
			       s->offset == p->p_offset &&
			       (empty_want ? empty_got
					   : s->own_lo == w->own_lo && s->own_hi == w->own_hi);
			if (!good)
				diag("  seg %u: vaddr %#lx own [%#lx, %#lx) flags %#x; want vaddr %#lx "
				     "own [%#lx, %#lx) flags %#x",
				     k, s->vaddr, s->own_lo, s->own_hi, s->flags, w->vaddr, w->own_lo,
				     w->own_hi, w->flags);
		}
		if (n != c->want_n)
			diag("  got %u segments, want %u", n, c->want_n);
		ok(good, "layout_segs: %s", c->desc);
	}
	/* the entry past max is never written */
	struct seg segs[3];
	memset(segs, 0xa5, sizeof(segs));
	layout_segs(segs_cases[0].ph, 3, 0, UINT64_MAX, segs, 2);
	ok(segs[2].vaddr == 0xa5a5a5a5a5a5a5a5ULL, "layout_segs: nothing written past max");
}

/* ---- layout_dyn_bias ------------------------------------------------------ */

struct bias_case {
	uint64_t region, lo, anchor, mod, want; /* want: ~0 means only the properties */
};

static const struct bias_case bias_cases[] = {
	/* already congruent: bias is region - lo */
	{ 0x7f0000000000ULL, 0, 0x1000, 0x1000, 0x7f0000000000ULL },
	/* start the text page on a 2 MiB boundary */
	{ 0x7f0000000000ULL, 0, 0x1000, 0, 0x7f00001ff000ULL },
	{ 0x7f0000001000ULL, 0, 0x1000, 0, 0x7f00001ff000ULL },
	{ 0x7f0000200000ULL, 0, 0x200000, 0, 0x7f0000200000ULL },
	/* region just past a boundary: almost a whole 2 MiB step */
	{ 0x7f0000001000ULL, 0, 0, 0, 0x7f0000200000ULL },
	/* zero-copy: text p_vaddr 0x401000, p_offset 0x1000, lo 0x400000 */
	{ 0x7f1234567000ULL, 0x400000, 0x401000, 0x1000, ~0ULL },
	/* mod larger than 2 MiB: only mod % 2 MiB counts */
	{ 0x7f0000000000ULL, 0, 0x1000, 0x601000, 0x7f0000000000ULL },
	{ 0x7f0000000000ULL, 0, 0x3000, 0x801000, 0x7f00001fe000ULL },
	/* lo > 0 (a prelinked ET_DYN) */
	{ 0x7f0000000000ULL, 0x10000000, 0x10001000, 0, ~0ULL },
	{ 0x1000, 0, 0x1000, 0x1000, 0x200000 },
	{ 0x1000, 0, 0, 0, 0x200000 },
};

static int bias_props(uint64_t region, uint64_t lo, uint64_t anchor, uint64_t mod, uint64_t bias,
		      int page_congruent)
{
	uint64_t min = region - lo;

	if ((anchor + bias) % M2 != mod % M2)
		return 0;
	if (bias < min || bias - min >= M2)
		return 0;
	if (page_congruent && bias % K4)
		return 0;
	return 1;
}

/* xorshift64*: deterministic "random" values */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dULL;
}

static void test_dyn_bias(void)
{
	for (size_t i = 0; i < TAP_N(bias_cases); i++) {
		const struct bias_case *c = &bias_cases[i];
		uint64_t b = layout_dyn_bias(c->region, c->lo, c->anchor, c->mod, M2);
		int pc = c->region % K4 == 0 && c->lo % K4 == 0 && c->anchor % K4 == c->mod % K4;
		int good = bias_props(c->region, c->lo, c->anchor, c->mod, b, pc) &&
			   (c->want == ~0ULL || b == c->want);
		if (!ok(good, "layout_dyn_bias(%#lx, %#lx, %#lx, %#lx)", c->region, c->lo, c->anchor,
			c->mod))
			diag("  got %#lx, want %#lx", b, c->want);
	}

	/* Random inputs: user-space regions and ET_DYN spans, anchors inside the
	 * span, page-congruent mods half the time and arbitrary ones otherwise. */
	int bad = 0, bad_pc = 0, n_pc = 0;
	for (int i = 0; i < 100000; i++) {
		uint64_t lo = (rnd() % 0x40000000ULL) & -K4;
		uint64_t span = ((rnd() % 0x10000000ULL) & -K4) + K4;
		uint64_t region = ((rnd() % (TX_USER_TOP - 0x100000000ULL)) & -K4) + lo;
		uint64_t anchor = lo + (rnd() % span);
		uint64_t mod;
		int pc = i & 1;
		if (pc) {
			anchor &= -K4;
			mod = (rnd() % 0x40000000ULL) & -K4;
			anchor += rnd() % K4;
			mod += anchor % K4;
			n_pc++;
		} else {
			mod = rnd();
		}
		uint64_t b = layout_dyn_bias(region, lo, anchor, mod, M2);
		if (!bias_props(region, lo, anchor, mod, b, pc)) {
			if (bad++ < 5)
				diag("  layout_dyn_bias(%#lx, %#lx, %#lx, %#lx) = %#lx", region, lo, anchor,
				     mod, b);
			bad_pc += pc;
		}
	}
	ok(bad == 0, "layout_dyn_bias: 100000 random inputs: congruent, >= region - lo, < 2 MiB "
		     "above it");
	ok(bad_pc == 0 && n_pc == 50000,
	   "layout_dyn_bias: page-congruent random inputs give page-aligned biases");
}

/* ---- layout_main_text ----------------------------------------------------- */

/* A segment [lo, hi) owning its page-rounded range (file offset congruent). */
#define mkseg_c(lo, hi, f)                                                                 \
	{ (lo), (hi) - (lo), (hi) - (lo), (lo) & (M2 - 1), (f), (lo) & -K4,               \
	  ((hi) + K4 - 1) & -K4, 0 }

static struct seg mkseg(uint64_t lo, uint64_t hi, uint32_t flags)
{
	struct seg s = mkseg_c(lo, hi, flags);
	return s;
}

static void test_main_text(void)
{
	struct seg s[4] = { mkseg(0x400000, 0x401000, R), mkseg(0x401000, 0x500000, RX),
			    mkseg(0x500000, 0x900000, RX), mkseg(0x900000, 0x2000000, RW) };
	struct seg t[3] = { mkseg(0x400000, 0x500000, RX), mkseg(0x500000, 0x600000, R),
			    mkseg(0x600000, 0x700000, RX) };

	ok(layout_main_text(s, 0) == -1, "layout_main_text: no segments -> -1");
	ok(layout_main_text(s, 1) == -1, "layout_main_text: no executable segment -> -1");
	ok(layout_main_text(s + 3, 1) == -1, "layout_main_text: a big RW segment is not text");
	ok(layout_main_text(s, 2) == 1, "layout_main_text: the only executable segment");
	ok(layout_main_text(s, 4) == 2, "layout_main_text: the largest executable segment");
	ok(layout_main_text(t, 3) == 0, "layout_main_text: a tie goes to the first");
}

/* ---- layout_inner --------------------------------------------------------- */

struct range_case {
	const char *desc;
	uint64_t own_lo, own_hi;
	uint64_t a, b; /* a == b: want empty */
};

static const struct range_case inner_cases[] = {
	{ "smaller than 2 MiB, inside one piece", 0x401000, 0x480000, 0, 0 },
	{ "smaller than 2 MiB, across a boundary", 0x5ff000, 0x601000, 0, 0 },
	{ "exactly one aligned piece", 0x400000, 0x600000, 0x400000, 0x600000 },
	{ "exactly aligned, two pieces", 0x400000, 0x800000, 0x400000, 0x800000 },
	{ "straddling: one page either side", 0x3ff000, 0x801000, 0x400000, 0x800000 },
	{ "straddling: 2 MiB + 4 KiB, not one whole piece", 0x401000, 0x602000, 0, 0 },
	{ "straddling: 8 MiB unaligned", 0x401000, 0xc01000, 0x600000, 0xc00000 },
	{ "high addresses", 0x7f0000001000ULL, 0x7f0000801000ULL, 0x7f0000200000ULL,
	  0x7f0000800000ULL },
	{ "empty own range", 0x402000, 0x402000, 0, 0 },
	{ "inverted own range (shared on both sides)", 0x600000, 0x400000, 0, 0 },
	{ "inverted own range spanning pieces", 0xa00000, 0x400000, 0, 0 },
};

static void test_inner(void)
{
	for (size_t i = 0; i < TAP_N(inner_cases); i++) {
		const struct range_case *c = &inner_cases[i];
		struct seg s = mkseg(c->own_lo, c->own_hi > c->own_lo ? c->own_hi : c->own_lo, RX);
		uint64_t a = 1, b = 2;

		s.own_lo = c->own_lo;
		s.own_hi = c->own_hi;
		layout_inner(&s, &a, &b);
		int good = c->a == c->b ? a >= b : a == c->a && b == c->b;
		/* and the result lies inside the own range */
		if (a < b)
			good = good && a >= s.own_lo && b <= s.own_hi && a % M2 == 0 && b % M2 == 0;
		if (!ok(good, "layout_inner: %s", c->desc))
			diag("  got [%#lx, %#lx), want [%#lx, %#lx)", a, b, c->a, c->b);
	}
}

/* ---- layout_outer --------------------------------------------------------- */

struct outer_case {
	const char *desc;
	struct seg s[4];
	unsigned n, i;
	uint64_t lim_lo, lim_hi;
	uint64_t a, b; /* a == b: want empty */
};

#define LIM_ALL 0, 0x800000000000ULL

static const struct outer_case outer_cases[] = {
	{ "lone text inside one piece: the whole piece", { mkseg_c(0x401000, 0x480000, RX) }, 1, 0,
	  LIM_ALL, 0x400000, 0x600000 },
	{ "lone text across a boundary: both pieces", { mkseg_c(0x5ff000, 0x601000, RX) }, 1, 0,
	  LIM_ALL, 0x400000, 0x800000 },
	{ "aligned text stays as it is", { mkseg_c(0x400000, 0x800000, RX) }, 1, 0, LIM_ALL,
	  0x400000, 0x800000 },
	{ "read-only neighbours may become executable",
	  { mkseg_c(0x400000, 0x401000, R), mkseg_c(0x401000, 0x480000, RX),
	    mkseg_c(0x480000, 0x500000, R) },
	  3, 1, LIM_ALL, 0x400000, 0x600000 },
	{ "blocked below by a writable neighbour in the same piece",
	  { mkseg_c(0x400000, 0x401000, RW), mkseg_c(0x401000, 0x900000, RX) }, 2, 1, LIM_ALL,
	  0x600000, 0xa00000 },
	{ "blocked above by a writable neighbour in the same piece",
	  { mkseg_c(0x401000, 0x9f0000, RX), mkseg_c(0x9f0000, 0x9f2000, RW) }, 2, 0, LIM_ALL,
	  0x400000, 0x800000 },
	{ "blocked on both sides within one piece: nothing",
	  { mkseg_c(0x400000, 0x401000, RW), mkseg_c(0x401000, 0x480000, RX),
	    mkseg_c(0x480000, 0x481000, RW) },
	  3, 1, LIM_ALL, 0, 0 },
	{ "writable neighbour in the next piece does not block",
	  { mkseg_c(0x401000, 0x480000, RX), mkseg_c(0x600000, 0x700000, RW) }, 2, 0, LIM_ALL,
	  0x400000, 0x600000 },
	{ "blocked by another executable segment",
	  { mkseg_c(0x401000, 0x480000, RX), mkseg_c(0x480000, 0x481000, RX) }, 2, 0, LIM_ALL, 0,
	  0 },
	{ "blocked by another executable segment below",
	  { mkseg_c(0x400000, 0x401000, RX), mkseg_c(0x401000, 0x601000, RX) }, 2, 1, LIM_ALL,
	  0x600000, 0x800000 },
	{ "blocked by lim_lo", { mkseg_c(0x401000, 0x480000, RX) }, 1, 0, 0x401000,
	  0x800000000000ULL, 0, 0 },
	{ "lim_lo on the boundary allows", { mkseg_c(0x401000, 0x480000, RX) }, 1, 0, 0x400000,
	  0x600000, 0x400000, 0x600000 },
	{ "blocked by lim_hi", { mkseg_c(0x401000, 0x601000, RX) }, 1, 0, 0x400000, 0x7ff000,
	  0x400000, 0x600000 },
	{ "blocked by lim_lo and lim_hi", { mkseg_c(0x5ff000, 0x601000, RX) }, 1, 0, 0x5ff000,
	  0x601000, 0, 0 },
	{ "segment with an empty own range", { mkseg_c(0x401000, 0x401000, RX) }, 1, 0, LIM_ALL,
	  0, 0 },
};

static void check_outer(const char *desc, const struct seg *s, unsigned n, unsigned i,
			uint64_t lim_lo, uint64_t lim_hi, uint64_t wa, uint64_t wb)
{
	uint64_t a = 1, b = 2;

	layout_outer(s, n, i, lim_lo, lim_hi, &a, &b);
	int good = wa == wb ? a >= b : a == wa && b == wb;
	if (!ok(good, "layout_outer: %s", desc))
		diag("  got [%#lx, %#lx), want [%#lx, %#lx)", a, b, wa, wb);
}

static void test_outer(void)
{
	for (size_t k = 0; k < TAP_N(outer_cases); k++) {
		const struct outer_case *c = &outer_cases[k];
		check_outer(c->desc, c->s, c->n, c->i, c->lim_lo, c->lim_hi, c->a, c->b);
	}

	/* Built from program headers with layout_segs, so that neighbours
	 * share the page at their boundary and neither owns it.  The shared
	 * page holds bytes of the writable segment, so no 2 MiB piece that
	 * contains it may be made read+execute. */
	static const Elf64_Phdr shared_w[] = {
		LOAD(RX, 0, 0x400000, 0x1ff800, 0x1ff800),
		LOAD(RW, 0x1ff800, 0x5ff800, 0x100, 0x1000),
	};
	struct seg s[4];
	unsigned n = layout_segs(shared_w, 2, 0, UINT64_MAX, s, 4);
	check_outer("text sharing its last page with a writable segment: that piece is left out",
		    s, n, 0, LIM_ALL, 0, 0);

	static const Elf64_Phdr shared_w_small[] = {
		LOAD(R, 0, 0x400000, 0x1000, 0x1000),
		LOAD(RX, 0x1000, 0x401000, 0x1fe800, 0x1fe800),
		LOAD(RW, 0x1ff800, 0x5ff800, 0x100, 0x200),
	};
	n = layout_segs(shared_w_small, 3, 0, UINT64_MAX, s, 4);
	check_outer("writable segment wholly inside the shared page still blocks", s, n, 1, LIM_ALL,
		    0, 0);

	static const Elf64_Phdr shared_x[] = {
		LOAD(RX, 0, 0x400000, 0x1ff800, 0x1ff800),
		LOAD(RX, 0x1ff800, 0x5ff800, 0x100, 0x100),
	};
	n = layout_segs(shared_x, 2, 0, UINT64_MAX, s, 4);
	check_outer("text sharing its last page with another executable segment", s, n, 0, LIM_ALL,
		    0, 0);

	static const Elf64_Phdr shared_r[] = {
		LOAD(RX, 0, 0x400000, 0x1ff800, 0x1ff800),
		LOAD(R, 0x1ff800, 0x5ff800, 0x100, 0x100),
	};
	n = layout_segs(shared_r, 2, 0, UINT64_MAX, s, 4);
	check_outer("text sharing its last page with a read-only segment keeps the piece", s, n, 0,
		    LIM_ALL, 0x400000, 0x600000);

	/* Whatever the neighbours, layout_outer's range contains layout_inner's. */
	int bad = 0;
	for (size_t k = 0; k < TAP_N(outer_cases); k++) {
		const struct outer_case *c = &outer_cases[k];
		uint64_t ia, ib, oa, ob;
		layout_inner(&c->s[c->i], &ia, &ib);
		layout_outer(c->s, c->n, c->i, c->lim_lo, c->lim_hi, &oa, &ob);
		if (ia < ib && c->lim_lo <= ia && ib <= c->lim_hi && !(oa <= ia && ib <= ob))
			bad++;
	}
	ok(!bad, "layout_outer contains layout_inner when the limits allow");
}

/* ---- layout_aligned_bias: the kernel's maximum_alignment ------------------ */

static void test_aligned_bias(void)
{
	struct { uint64_t region, lo, anchor, mod, align, first, want; } c[] = {
		/* align <= 2 MiB and congruence agrees: the congruent bias */
		{ 0x7f0000000000ULL, 0, 0x1000, 0x1000, 0x10000, 0, 0x7f0000000000ULL },
		/* 64 KiB, congruence disagrees (text at 0x1000 starting a 2 MiB
		 * page): alignment wins */
		{ 0x7f0000000000ULL, 0, 0x1000, 0, 0x10000, 0, 0x7f0000000000ULL },
		/* 4 MiB: the bias a multiple of it, at or above region - lo */
		{ 0x7f0000200000ULL, 0, 0x1000, 0x1000, 0x400000, 0, 0x7f0000400000ULL },
		/* first PT_LOAD at 0x10000 on a 4 MiB boundary */
		{ 0x7f0000000000ULL, 0, 0x11000, 0x1000, 0x400000, 0x10000, 0x7f00003f0000ULL },
		/* a page: layout_dyn_bias unchanged */
		{ 0x7f0000000000ULL, 0, 0x1000, 0, 0x1000, 0, 0x7f00001ff000ULL },
	};
	for (size_t i = 0; i < TAP_N(c); i++) {
		uint64_t b = layout_aligned_bias(c[i].region, c[i].lo, c[i].anchor, c[i].mod, c[i].align,
						 c[i].first, M2);
		if (!ok(b == c[i].want, "layout_aligned_bias case %zu (align %#lx)", i, c[i].align))
			diag("  got %#lx, want %#lx", b, c[i].want);
	}
	/* Random: the first segment's page always lands on a multiple of align,
	 * never below the region, never more than max(align, 2 MiB) above. */
	int bad = 0;
	for (int i = 0; i < 100000; i++) {
		uint64_t lo = (rnd() % 0x40000000ULL) & -K4;
		uint64_t first = lo + ((rnd() % 0x100000ULL) & -K4);
		uint64_t region = ((rnd() % (TX_USER_TOP / 2)) & -K4) + lo;
		uint64_t align = K4 << (rnd() % 20);
		uint64_t anchor = lo + (rnd() % 0x1000000ULL), mod = rnd();
		uint64_t b = layout_aligned_bias(region, lo, anchor, mod, align, first, M2);
		uint64_t room = align > M2 ? align : M2;
		if ((first + b) % align || b < region - lo || b - (region - lo) >= room)
			bad++;
	}
	ok(bad == 0, "layout_aligned_bias: 100000 random cases aligned and in range (%d bad)", bad);
}

/* ---- layout_segs: file clamp and order ------------------------------------ */

static void test_segs_file_and_order(void)
{
	const Elf64_Phdr short_text[] = {
		LOAD(R, 0, 0, 0x200, 0x200),
		LOAD(RX, 0x1000, 0x1000, 0x800000, 0x800000), /* file ends at 0x3000 */
	};
	struct seg s[4];
	unsigned n = layout_segs(short_text, 2, 0, 0x3000, s, 4);
	ok(n == 2 && s[1].filesz == 0x2000 && s[1].file_short && s[1].own_hi == 0x3000 &&
		   s[0].filesz == 0x200 && !s[0].file_short,
	   "layout_segs: p_filesz past EOF is clamped, own range ends at the page holding EOF");
	uint64_t a, b;
	layout_inner(&s[1], &a, &b);
	ok(a >= b, "layout_inner: no 2 MiB piece past the end of a short file");
	layout_outer(s, n, 1, 0, 0x800000000000ULL, &a, &b);
	ok(a >= b, "layout_outer: no rounding out past the end of a short file");
	n = layout_segs(short_text, 2, 0, 0x200, s, 4);
	ok(n == 2 && s[1].filesz == 0 && s[1].own_hi <= s[1].own_lo,
	   "layout_segs: a segment wholly past EOF owns nothing");

	const Elf64_Phdr desc[] = {
		LOAD(RX, 0x200000, 0x200000, 0x400000, 0x400000),
		LOAD(R, 0, 0, 0x200, 0x200),
	};
	n = layout_segs(desc, 2, 0, UINT64_MAX, s, 4);
	ok(n == 2 && layout_unordered(s, n) && s[0].own_lo == s[0].own_hi &&
		   s[1].own_lo == s[1].own_hi,
	   "layout_segs: out of order: every own range empty (no huge pages)");
	const Elf64_Phdr over[] = {
		LOAD(R, 0, 0, 0x200, 0x1800),
		LOAD(RX, 0x1000, 0x1000, 0x100, 0x100),
	};
	n = layout_segs(over, 2, 0, UINT64_MAX, s, 4);
	ok(layout_unordered(s, n) && s[1].own_lo == s[1].own_hi, "layout_segs: overlapping: likewise");
	n = layout_segs(short_text, 2, 0, UINT64_MAX, s, 4);
	ok(!layout_unordered(s, n), "layout_unordered: ascending segments are ordered");
}

int main(void)
{
	test_aligned_bias();
	test_segs_file_and_order();
	test_segs();
	test_dyn_bias();
	test_main_text();
	test_inner();
	test_outer();
	return tap_done();
}
