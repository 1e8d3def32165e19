/* The page cache way, "file" (place.h): the segment is a private file
 * mapping placed congruent to its file offset; with MADV_HUGEPAGE set
 * before the first touch the page cache reads the file in 2 MiB folios and
 * faults map them with PMDs.  Zero copy, shared by every process.  Pieces
 * whose cache holds small folios get MADV_COLLAPSE (kernels with
 * CONFIG_READ_ONLY_THP_FOR_FS) or are evicted and faulted again. */
#include "place.h"

#include "rt.h"
#include "sys.h"

/* The zero-copy attempt on segment s's 2 MiB-aligned pieces [a, b). */
void place_file(const struct huge_req *r, struct huge_result *res, const struct seg *s,
			uint64_t a, uint64_t b, uint8_t *state, uint8_t *hs, int shared, int overlay)
{
	uint64_t n = (b - a) / TX_HUGE;

	if (r->o->lazy) {
		res->lazy += b - a;
		memset(state, 1, n);
		return;
	}
	/* Dirty pages are written back first: the program's own file,
	 * just linked, is worth its text on 2 MiB pages. */
	struct cconv_range cr = { r->fd, a, b, s->offset + (a - s->vaddr), NULL,
				  overlay ? CC_WRITEBACK_FSYNC : CC_WRITEBACK_RANGE, shared };
	struct cconv_stats cs = { 0, 0 };
	if (cconv_convert(&r->state->cc, &cr, hs, &cs) < 0) {
		place_note(res, sys_faccessat(TX_AT_FDCWD, "/proc/self", 0) < 0 ? R_FILE_NO_PROC : R_FILE_FAULT);
		return;
	}
	if (place_take(r, res, a, n, hs, state, &res->file))
		place_note(res, R_FILE_SMALL_FOLIOS);
}

/* Filled in a buffer of its own: the notes are reported before the next
 * file's. */
void place_note_fs_folios(struct huge_result *res, const struct fs_info *fi)
{
	static char text[REASON_TEXT_MAX];
	char pg[24], kv[24];
	size_t k = 0;

	tx_cat_u64(kv, sizeof(kv), &k, fi->major);
	tx_cat(kv, sizeof(kv), &k, ".");
	tx_cat_u64(kv, sizeof(kv), &k, fi->minor);
	const char *args[3] = { fi->name, geom_size(TX_PAGE, pg, sizeof(pg)), kv };
	struct why w = { R_FILE_FS_FOLIOS, reason_fill(R_FILE_FS_FOLIOS, args, 3, text, sizeof(text)) };
	place_note_why(res, &w);
}
