/* The placement layer's dispatcher (see README "How it works"): per
 * segment, which of its 2 MiB pieces each way may take, in auto's order,
 * and the summary line.  The ways (place.h):
 *
 *   file     the page cache in 2 MiB folios, the mapping congruent to the
 *            file (place-file.c), concurrent starts of one program taking
 *            turns under its conversion lock (place-lock.c);
 *   cache    where the page cache cannot, the shared text cache's entry
 *            (place-cache.c), for auto and file;
 *   thp      a copy on anonymous THP, moved over the pieces with mremap;
 *   hugetlb  the same from the reserved pool (both place-copy.c).
 *
 * Each way leaves a correct 4 KiB mapping behind when it fails, and says
 * why in a note.  PAGEMAP_SCAN (Linux 6.7) tells which pieces really
 * ended up huge. */
#include "huge.h"

#include "place.h"
#include "rt.h"
#include "sys.h"
#include "thpenv.h"

/* TX_COMPAT=1 (CCONV_COMPAT_5_10) builds a test-only loader that behaves
 * as on Linux 5.10: no MADV_POPULATE_*, MADV_COLLAPSE or PAGEMAP_SCAN. */
#ifndef TX_COMPAT
#define TX_COMPAT 0
#endif

void huge_state_init(struct huge_state *st, uint64_t pagesz)
{
	struct cconv init = CCONV_INIT(TX_COMPAT);

	st->pagesz = pagesz;
	st->geom_known = 0;
	st->cc = init;
	thpenv_init(&st->thp, &st->geom);
	st->lock_gave_up = 0;
}

static void geom_once(struct huge_state *st)
{
	if (!st->geom_known) {
		geom_read(&st->geom, st->pagesz);
		st->geom_known = 1;
	}
}

uint64_t huge_unit(struct huge_state *st)
{
	if (TX_PAGE == ARCH_PAGE_SIZE)
		return TX_HUGE;
	geom_once(st);
	return geom_fits(&st->geom) && geom_blocks(&st->geom) ? st->geom.pmd : TX_HUGE;
}

void huge_done(struct huge_state *st)
{
	cconv_close(&st->cc);
}

int huge_text_changed(struct huge_state *st, uint64_t lo, uint64_t hi)
{
	return cconv_changed(&st->cc, lo, hi);
}

/* Where the kernel's geometry refuses strategy st outright (said in res). */
static int geometry_refuses(const struct huge_req *r, struct huge_result *res, enum strategy st)
{
	geom_once(r->state);
	if (!geom_fits(&r->state->geom)) {
		place_note(res, R_PAGE_SIZES);
		return 1;
	}
	res->pmd = r->state->geom.pmd;
	if (geom_blocks(&r->state->geom) && st == ST_HUGETLB) {
		/* Contiguous blocks come from copies and the text cache, so
		 * far: the page cache's large folios (below) and hugetlb's
		 * 2 MiB pages are not placed or measured as blocks yet. */
		place_note(res, R_HUGETLB_BASE_PAGES);
		return 1;
	}
	return 0;
}

/* The end of segment s's file-backed text, page-aligned, within what it
 * owns.  Only file-backed text is worth huge pages: what lies past
 * p_filesz is zero fill, which the kernel leaves untouched until used.
 * Copying it would let a file of a few bytes make us allocate up to
 * p_memsz (a 1 GiB zero-fill cost 1 GiB of RSS); it stays ordinary
 * anonymous memory. */
static uint64_t file_end(const struct seg *s)
{
	uint64_t fend = tx_up(s->vaddr + s->filesz, TX_PAGE);

	return fend > s->own_hi ? s->own_hi : fend;
}

/* Segment i's pieces: [*oa, *ob) what may be placed (rounded out with
 * --round-out), [*a, *b) its inner whole pieces, which the zero-copy ways
 * may take.  0 when it has none (or is not text, said where it matters). */
static int seg_pieces(const struct huge_req *r, struct huge_result *res, unsigned i, uint64_t *a, uint64_t *b,
		      uint64_t *oa, uint64_t *ob)
{
	const struct seg *s = &r->segs[i];

	if (!(s->flags & PF_X))
		return 0;
	if (s->flags & PF_W) {
		place_note(res, R_WRITABLE_TEXT);
		return 0;
	}
	layout_inner(s, a, b);
	if (r->o->round_out)
		layout_outer(r->segs, r->nsegs, i, r->lim_lo, r->lim_hi, oa, ob);
	else
		*oa = *a, *ob = *b;
	uint64_t fend = file_end(s);
	if (*b > tx_down(fend, TX_HUGE))
		*b = tx_down(fend, TX_HUGE);
	if (*ob > tx_up(fend, TX_HUGE))
		*ob = tx_up(fend, TX_HUGE);
	if (*oa >= *ob)
		return 0;
	if (*a >= *b)
		*a = *b = *oa;
	if ((*ob - *oa) / TX_HUGE > MAX_PIECES) {
		place_note(res, R_TEXT_BEYOND_16G);
		*ob = *oa + MAX_PIECES * TX_HUGE;
		if (*b > *ob)
			*b = *ob;
		if (*a > *b)
			*a = *b;
	}
	return 1;
}

/* The zero-copy ways on segment i's inner pieces [a, b) (state[] from a):
 * the page cache where it can hold them, then the text cache's entry. */
static void zero_copy(const struct huge_req *r, struct huge_result *res, unsigned i, uint64_t a, uint64_t b,
		      uint8_t *state, uint8_t *hs)
{
	const struct seg *s = &r->segs[i];

	if (geom_blocks(&r->state->geom)) {
		place_note(res, R_FILE_NO_BLOCKS);
	} else if (r->fs.folios == FS_FOLIOS_NO) {
		place_note_fs_folios(res, &r->fs);
	} else if (thpenv_process_thp_off()) {
		/* No PMD would map the cache: evict and read nothing. */
		place_note(res, R_FILE_THP_PRCTL);
	} else if (!layout_file_congruent(s)) {
		place_note(res, R_FILE_NOT_CONGRUENT);
	} else if (a < b) {
		/* Only where the page cache will be asked for 2 MiB folios:
		 * elsewhere the advice changes nothing but the mapping's
		 * flags, at a system call a start. */
		uint64_t fend = file_end(s);
		if (s->own_lo < fend)
			sys_madvise(s->own_lo, fend - s->own_lo, MADV_HUGEPAGE);
		int locked = place_lock(r->fd, a, b, &r->state->lock_gave_up);
		place_file(r, res, s, a, b, state, hs, locked < 0, r->fs.overlay);
		if (locked > 0)
			place_unlock(r->fd);
	}
	/* The cache's pages are PMD-mapped only where THP is on for the
	 * process, as the page cache's are. */
	if (r->cache_fd >= 0 && a < b && r->cache_off[i] != UINT64_MAX && !thpenv_process_thp_off())
		place_cache(r, res, s, r->cache_off[i], a, b, state, hs);
}

void huge_apply(const struct huge_req *r, struct huge_result *res)
{
	/* Per piece of a segment: whether it is placed (state), and what a
	 * check found huge (hs, for the pieces being placed).  One buffer,
	 * hs right after the segment's state: a start, which uses the first
	 * few bytes of each, touches one page of it, not two (each page a
	 * fault and a zeroed page, see TX_HOT). */
	static uint8_t pieces[2 * MAX_PIECES];
	enum strategy st = r->o->strategy;

	if (geometry_refuses(r, res, st))
		return;
	for (unsigned i = 0; i < r->nsegs; i++) {
		uint64_t a, b, oa, ob;
		if (!seg_pieces(r, res, i, &a, &b, &oa, &ob))
			continue;
		uint64_t n = (ob - oa) / TX_HUGE;
		uint8_t *state = pieces, *hs = pieces + n;
		memset(state, 0, n);
		if (st == ST_AUTO || st == ST_FILE)
			zero_copy(r, res, i, a, b, state + (a - oa) / TX_HUGE, hs);
		int left = 0;
		for (uint64_t k = 0; k < n; k++)
			left |= !state[k];
		if (left && (st == ST_AUTO || st == ST_THP || st == ST_HUGETLB))
			place_copy(r, res, oa, ob, state, hs, st == ST_HUGETLB);
	}
}

void huge_msg(struct msg *m, uint64_t text, const struct huge_result *hr)
{
	uint64_t on = hr->text_huge > text ? text : hr->text_huge;

	char pmd[24];

	if (hr->pmd > TX_HUGE) {
		/* Contiguous blocks beside PMDs: "P of T MiB text on 32 MiB
		 * pages, B in 2 MiB contiguous blocks[, U not measured]". */
		uint64_t blk = hr->text_blocks + hr->text_unmeasured;
		blk = blk > on ? on : blk;
		msg_mib(m, on - blk);
		msg_str(m, " of ");
		msg_mib(m, text);
		msg_str(m, " MiB text on ");
		msg_str(m, geom_size(hr->pmd, pmd, sizeof(pmd)));
		msg_str(m, " pages, ");
		msg_mib(m, blk - (hr->text_unmeasured > blk ? blk : hr->text_unmeasured));
		msg_str(m, " in 2 MiB contiguous blocks");
		if (hr->text_unmeasured) {
			msg_str(m, ", ");
			msg_mib(m, hr->text_unmeasured > blk ? blk : hr->text_unmeasured);
			msg_str(m, " in 2 MiB blocks not measured");
		}
		msg_str(m, " (file ");
	} else {
		msg_mib(m, on);
		msg_str(m, " of ");
		msg_mib(m, text);
		msg_str(m, " MiB text on 2 MiB pages (file ");
	}
	msg_mib(m, hr->file);
	if (hr->cache) {
		msg_str(m, ", cache ");
		msg_mib(m, hr->cache);
	}
	msg_str(m, ", thp ");
	msg_mib(m, hr->thp);
	if (hr->hugetlb) {
		msg_str(m, ", hugetlb ");
		msg_mib(m, hr->hugetlb);
	}
	if (hr->lazy) {
		msg_str(m, ", lazy ");
		msg_mib(m, hr->lazy);
	}
	msg_str(m, ")");
}
