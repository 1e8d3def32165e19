/* Why text stays on base pages: one row of REASONS each, its name (a
 * value of enum reason) and its text.  The text is all three of what a
 * reason shows as: the line `tiexec -v` prints, the `why` field of the
 * loader's probes, and the key of tiexec-trace's fallback counter
 * (tiexec-stat --prometheus's reason label).  A row's "{}" slots (a size,
 * a file system, a kernel) are filled where the reason is found
 * (reason_fill).
 *
 * A new reason: one row, in its way's group.  tests/unit/reasons.sh checks
 * that every value is given by some code, test-facilities.c that every
 * text names its way and fits the probe's field on one line. */
#pragma once

#include <stddef.h>

#define REASONS(X) \
	/* Before any way is tried (huge.c). */ \
	X(R_PAGE_SIZES, "the kernel's page sizes are not the ones this build places text for (tiexec-stat --advise)") \
	X(R_HUGETLB_BASE_PAGES, "hugetlb: not built for 16 and 64 KiB pages yet (--strategy=thp or auto copies)") \
	X(R_WRITABLE_TEXT, "writable text is left on 4 KiB pages") \
	X(R_TEXT_BEYOND_16G, "text beyond 16 GiB per segment is left on 4 KiB pages") \
	/* The page cache (file). */ \
	X(R_FILE_NO_BLOCKS, "file: the page cache is not placed in contiguous blocks yet (16 and 64 KiB pages): the text cache or a copy serves") \
	X(R_FILE_FS_FOLIOS, "file: {} keeps {} folios in the page cache on Linux {}: nothing evicted or read again") \
	X(R_FILE_THP_PRCTL, "file: transparent huge pages are disabled for this process (prctl PR_SET_THP_DISABLE)") \
	X(R_FILE_NOT_CONGRUENT, "file: text is not placed congruent to its file offset modulo 2 MiB") \
	X(R_FILE_NO_PROC, "file: /proc is not mounted here (a chroot?): which pages are huge cannot be checked") \
	X(R_FILE_FAULT, "file: cannot fault in or verify the text") \
	X(R_FILE_SMALL_FOLIOS, "file: the page cache kept small pages for part of the text (in use elsewhere, or no large folios on this filesystem)") \
	/* The shared text cache. */ \
	X(R_CACHE_NOT_CONGRUENT, "cache: the text is not placed congruent to the cache's entry") \
	X(R_CACHE_UNMAPPABLE, "cache: the entry cannot be mapped") \
	X(R_CACHE_FAULT, "cache: cannot fault in or verify the text") \
	X(R_CACHE_UNMEASURED, "cache: whether the 2 MiB blocks are contiguous is not measured (it takes root: /proc/kpageflags)") \
	X(R_CACHE_SMALL_PAGES, "cache: part of the entry is not in 2 MiB pages (is the cache mounted huge=always?)") \
	/* Copies (thp, hugetlb). */ \
	X(R_COPY_READ, "copy: cannot read the program file") \
	X(R_COPY_EXEC, "copy: cannot make the copy executable") \
	X(R_HUGETLB_POOL, "hugetlb: not enough free pages in the reserved pool (vm.nr_hugepages)") \
	X(R_HUGETLB_MREMAP, "hugetlb: cannot move the copy into place (mremap)") \
	X(R_THP_ALLOC, "thp: cannot allocate memory for the copy") \
	X(R_THP_FAULT, "thp: cannot fault in or verify huge pages for the copy") \
	X(R_THP_MREMAP, "thp: cannot move the copy into place (mremap)") \
	X(R_THP_SMALL_PAGES, "thp: the kernel gave small pages for part of the copy (memory fragmented?)") \
	X(R_THP_UNMEASURED, "thp: whether the 2 MiB blocks are contiguous is not measured (it takes root: /proc/kpageflags)") \
	X(R_THP_NO_MEMORY, "thp: no memory left for copies") \
	X(R_THP_CGROUP_V1, "thp: the memory cgroup's limit (memory.limit_in_bytes) leaves no room for more copies") \
	X(R_THP_CGROUP_V2, "thp: the memory cgroup's limit (memory.max) leaves no room for more copies") \
	X(R_THP_MEMAVAILABLE, "thp: too little memory available (MemAvailable) for more copies") \
	X(R_THP_MDWE_PRCTL, "thp: MemoryDenyWriteExecute (PR_SET_MDWE) forbids executable copies; shmem THP is off (transparent_hugepage/shmem_enabled)") \
	X(R_THP_MDWE_OTHER, "thp: MemoryDenyWriteExecute (seccomp or LSM) forbids executable copies; shmem THP is off (transparent_hugepage/shmem_enabled)") \
	/* The THP settings (thpenv.c). */ \
	X(R_THP_PRCTL, "thp: transparent huge pages are disabled for this process (prctl PR_SET_THP_DISABLE)") \
	X(R_THP_SIZE_NEVER, "thp: transparent huge pages of {} are disabled (transparent_hugepage/{}enabled is never)") \
	X(R_THP_SIZE_OLD, "thp: transparent huge pages of {} need Linux 6.8 (transparent_hugepage/{})") \
	X(R_THP_NO_SYS, "thp: /sys is not mounted here (a chroot?): the THP settings cannot be read") \
	X(R_THP_NONE, "thp: this kernel has no transparent huge pages") \
	X(R_THP_NEVER, "thp: transparent huge pages are disabled (transparent_hugepage/enabled is never)")

enum reason {
	R_NONE,
#define REASON_VALUE(name, text) name,
	REASONS(REASON_VALUE)
#undef REASON_VALUE
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
