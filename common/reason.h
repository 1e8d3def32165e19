/* Why text stays on base pages: one enum value and one row of reason.c's
 * table each.  The row's text is all three of what a reason shows as: the
 * line `tiexec -v` prints, the `why` field of the loader's probes, and the
 * key of tiexec-trace's fallback counter (tiexec-stat --prometheus's
 * reason label).  A row's "{}" slots (a size, a file system, a kernel) are
 * filled where the reason is found (reason_fill).
 *
 * A new reason: its value here (in its group), its row in reason.c.
 * tests/unit/reasons.sh checks that every value is used and
 * test-facilities.c that every row fits the probe's field on one line. */
#pragma once

#include <stddef.h>

enum reason {
	R_NONE,
	/* Before any way is tried (huge.c). */
	R_PAGE_SIZES,
	R_HUGETLB_BASE_PAGES,
	R_WRITABLE_TEXT,
	R_TEXT_BEYOND_16G,
	/* The page cache (file). */
	R_FILE_NO_BLOCKS,
	R_FILE_FS_FOLIOS,
	R_FILE_THP_PRCTL,
	R_FILE_NOT_CONGRUENT,
	R_FILE_NO_PROC,
	R_FILE_FAULT,
	R_FILE_SMALL_FOLIOS,
	/* The shared text cache. */
	R_CACHE_NOT_CONGRUENT,
	R_CACHE_UNMAPPABLE,
	R_CACHE_FAULT,
	R_CACHE_UNMEASURED,
	R_CACHE_SMALL_PAGES,
	/* Copies (thp, hugetlb). */
	R_COPY_READ,
	R_COPY_EXEC,
	R_HUGETLB_POOL,
	R_HUGETLB_MREMAP,
	R_THP_ALLOC,
	R_THP_FAULT,
	R_THP_MREMAP,
	R_THP_SMALL_PAGES,
	R_THP_UNMEASURED,
	R_THP_NO_MEMORY,
	R_THP_CGROUP_V1,
	R_THP_CGROUP_V2,
	R_THP_MEMAVAILABLE,
	R_THP_MDWE_PRCTL,
	R_THP_MDWE_OTHER,
	/* The THP settings (thpenv.c). */
	R_THP_PRCTL,
	R_THP_SIZE_NEVER,
	R_THP_SIZE_OLD,
	R_THP_NO_SYS,
	R_THP_NONE,
	R_THP_NEVER,
	R_COUNT
};

/* What the loader's probes carry of a reason's text (tiexec-trace's
 * TX_REASON_BYTES): every text, filled, fits. */
#define REASON_TEXT_MAX 128

/* A reason found, with its text: reason_text(r), or its row filled. */
struct why {
	enum reason r;
	const char *text;
};

/* r's row, as it is ("" for R_NONE and out of range). */
const char *reason_text(enum reason r);

/* r's row with its "{}" slots filled by args in order, into buf[n] (cut
 * to fit, always terminated); buf. */
const char *reason_fill(enum reason r, const char *const *args, unsigned nargs, char *buf, size_t n);
