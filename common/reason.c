/* The one table of reasons (see reason.h). */
#include "reason.h"

#include "bits.h"

static const char *const rows[R_COUNT] = {
	[R_NONE] = "",
	[R_PAGE_SIZES] = "the kernel's page sizes are not the ones this build places text for (tiexec-stat --advise)",
	[R_HUGETLB_BASE_PAGES] = "hugetlb: not built for 16 and 64 KiB pages yet (--strategy=thp or auto copies)",
	[R_WRITABLE_TEXT] = "writable text is left on 4 KiB pages",
	[R_TEXT_BEYOND_16G] = "text beyond 16 GiB per segment is left on 4 KiB pages",

	[R_FILE_NO_BLOCKS] = "file: the page cache is not placed in contiguous blocks yet (16 and 64 KiB pages): the text cache or a copy serves",
	[R_FILE_FS_FOLIOS] = "file: {} keeps {} folios in the page cache on Linux {}: nothing evicted or read again",
	[R_FILE_THP_PRCTL] = "file: transparent huge pages are disabled for this process (prctl PR_SET_THP_DISABLE)",
	[R_FILE_NOT_CONGRUENT] = "file: text is not placed congruent to its file offset modulo 2 MiB",
	[R_FILE_NO_PROC] = "file: /proc is not mounted here (a chroot?): which pages are huge cannot be checked",
	[R_FILE_FAULT] = "file: cannot fault in or verify the text",
	[R_FILE_SMALL_FOLIOS] = "file: the page cache kept small pages for part of the text (in use elsewhere, or no large folios on this filesystem)",

	[R_CACHE_NOT_CONGRUENT] = "cache: the text is not placed congruent to the cache's entry",
	[R_CACHE_UNMAPPABLE] = "cache: the entry cannot be mapped",
	[R_CACHE_FAULT] = "cache: cannot fault in or verify the text",
	[R_CACHE_UNMEASURED] = "cache: whether the 2 MiB blocks are contiguous is not measured (it takes root: /proc/kpageflags)",
	[R_CACHE_SMALL_PAGES] = "cache: part of the entry is not in 2 MiB pages (is the cache mounted huge=always?)",

	[R_COPY_READ] = "copy: cannot read the program file",
	[R_COPY_EXEC] = "copy: cannot make the copy executable",
	[R_HUGETLB_POOL] = "hugetlb: not enough free pages in the reserved pool (vm.nr_hugepages)",
	[R_HUGETLB_MREMAP] = "hugetlb: cannot move the copy into place (mremap)",
	[R_THP_ALLOC] = "thp: cannot allocate memory for the copy",
	[R_THP_FAULT] = "thp: cannot fault in or verify huge pages for the copy",
	[R_THP_MREMAP] = "thp: cannot move the copy into place (mremap)",
	[R_THP_SMALL_PAGES] = "thp: the kernel gave small pages for part of the copy (memory fragmented?)",
	[R_THP_UNMEASURED] = "thp: whether the 2 MiB blocks are contiguous is not measured (it takes root: /proc/kpageflags)",
	[R_THP_NO_MEMORY] = "thp: no memory left for copies",
	[R_THP_CGROUP_V1] = "thp: the memory cgroup's limit (memory.limit_in_bytes) leaves no room for more copies",
	[R_THP_CGROUP_V2] = "thp: the memory cgroup's limit (memory.max) leaves no room for more copies",
	[R_THP_MEMAVAILABLE] = "thp: too little memory available (MemAvailable) for more copies",
	[R_THP_MDWE_PRCTL] = "thp: MemoryDenyWriteExecute (PR_SET_MDWE) forbids executable copies; shmem THP is off (transparent_hugepage/shmem_enabled)",
	[R_THP_MDWE_OTHER] = "thp: MemoryDenyWriteExecute (seccomp or LSM) forbids executable copies; shmem THP is off (transparent_hugepage/shmem_enabled)",

	[R_THP_PRCTL] = "thp: transparent huge pages are disabled for this process (prctl PR_SET_THP_DISABLE)",
	[R_THP_SIZE_NEVER] = "thp: transparent huge pages of {} are disabled (transparent_hugepage/{}enabled is never)",
	[R_THP_SIZE_OLD] = "thp: transparent huge pages of {} need Linux 6.8 (transparent_hugepage/{})",
	[R_THP_NO_SYS] = "thp: /sys is not mounted here (a chroot?): the THP settings cannot be read",
	[R_THP_NONE] = "thp: this kernel has no transparent huge pages",
	[R_THP_NEVER] = "thp: transparent huge pages are disabled (transparent_hugepage/enabled is never)",
};

const char *reason_text(enum reason r)
{
	return (unsigned)r < R_COUNT && rows[r] ? rows[r] : "";
}

const char *reason_fill(enum reason r, const char *const *args, unsigned nargs, char *buf, size_t n)
{
	const char *t = reason_text(r);
	size_t k = 0;
	unsigned a = 0;

	if (!n)
		return buf;
	for (; *t && k + 1 < n; t++) {
		if (t[0] == '{' && t[1] == '}') {
			for (const char *s = a < nargs ? args[a] : ""; *s && k + 1 < n; s++)
				buf[k++] = *s;
			a++;
			t++;
			continue;
		}
		buf[k++] = *t;
	}
	buf[k] = '\0';
	return buf;
}
