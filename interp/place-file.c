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
		place_note(res, sys_faccessat(TX_AT_FDCWD, "/proc/self", 0) < 0
				  ? "file: /proc is not mounted here (a chroot?): which pages are huge cannot be checked"
				  : "file: cannot fault in or verify the text");
		return;
	}
	if (place_take(r, res, a, n, hs, state, &res->file))
		place_note(res, "file: the page cache kept small pages for part of the text (in use elsewhere, or no large folios on this filesystem)");
}

/* "file: NAME keeps 4 KiB folios in the page cache on Linux X.Y: nothing
 * evicted or read again", in a buffer of its own: the notes are reported
 * before the next file's. */
const char *place_fs_folios_note(const struct fs_info *fi)
{
	static struct msg m;

	m.n = 0;
	msg_str(&m, "file: ");
	msg_str(&m, fi->name);
	char pg[24];
	msg_str(&m, " keeps ");
	msg_str(&m, geom_size(TX_PAGE, pg, sizeof(pg)));
	msg_str(&m, " folios in the page cache on Linux ");
	msg_u64(&m, fi->major);
	msg_str(&m, ".");
	msg_u64(&m, fi->minor);
	msg_str(&m, ": nothing evicted or read again");
	m.b[m.n < sizeof(m.b) ? m.n : sizeof(m.b) - 1] = '\0';
	return m.b;
}

