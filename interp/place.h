/* The placement layer's inside: what the dispatcher (huge.c) and the
 * ways share.  Each way is given the 2 MiB pieces of one segment that are
 * not placed yet (state[k] zero), places what it can, marks it in state[]
 * and counts it into the result through place-acct.c; why it placed less
 * is a note (a static string).  The ways, tried in this order by auto:
 *
 *   place-file.c   the page cache in 2 MiB folios, under the conversion
 *                  lock of place-lock.c
 *   place-cache.c  the shared text cache's entry
 *   place-copy.c   copies on anonymous THP or the hugetlb pool
 *
 * hs[] is the per-piece scratch of what a check found huge (CC_PMD,
 * CC_BLOCK, HS_UNMEASURED). */
#pragma once

#include "huge.h"

#define MAX_PIECES CC_MAX_PIECES /* 16 GiB of text per segment; more stays on 4 KiB */
/* A piece kept as a contiguous block without being measured (beside
 * cacheconv.h's CC_PMD, CC_BLOCK and CC_BLOCK_PART): see place_mark_blocks. */
#define HS_UNMEASURED 4

/* place-acct.c: notes and the accounting. */
/* A reason into res->notes, once (its row's text; place_note_why: a
 * filled one). */
void place_note(struct huge_result *res, enum reason r);
void place_note_why(struct huge_result *res, const struct why *w);
uint64_t place_text_in(const struct huge_req *r, uint64_t a, uint64_t b);
void place_account(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t b, uint64_t *bucket);
void place_account_blocks(const struct huge_req *r, struct huge_result *res, uint64_t a0, uint64_t a, uint64_t b,
			  const uint8_t *hs);
int place_take(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t n, const uint8_t *hs,
	       uint8_t *state, uint64_t *bucket);
void place_mark_blocks(const struct huge_req *r, uint64_t lo, uint64_t hi, uint8_t *hs, int likely);
void place_note_unmeasured(struct huge_result *res, const uint8_t *hs, uint64_t n, enum reason why);

/* place-file.c: the page cache on segment s's pieces [a, b); shared: the
 * conversion lock was not had (read only absent pieces, evict nothing);
 * overlay: write back with fsync (overlayfs). */
void place_file(const struct huge_req *r, struct huge_result *res, const struct seg *s, uint64_t a, uint64_t b,
		uint8_t *state, uint8_t *hs, int shared, int overlay);
/* R_FILE_FS_FOLIOS, filled for the file system fi, into res. */
void place_note_fs_folios(struct huge_result *res, const struct fs_info *fi);

/* place-lock.c: 1 held (place_unlock), 0 no lock here, -1 going on
 * without it (*gave_up: one wait per start). */
int place_lock(int fd, uint64_t a, uint64_t b, int *gave_up);
void place_unlock(int fd);

/* place-cache.c: the text cache's entry (at eoff for s's p_offset) over
 * segment s's pieces [a, b). */
void place_cache(const struct huge_req *r, struct huge_result *res, const struct seg *s, uint64_t eoff, uint64_t a,
		 uint64_t b, uint8_t *state, uint8_t *hs);

/* place-copy.c: copies of the pieces [a, b) not placed yet, on anonymous
 * THP or (hugetlb) the reserved pool, while memory allows. */
void place_copy(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t b, uint8_t *state,
		uint8_t *hs, int hugetlb);
