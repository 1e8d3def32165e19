/* perfmap.h: tiexec-stat --perf-map.  Finds the text of a process that was
 * copied into anonymous memory (tiexec --strategy=thp or hugetlb, iodlr,
 * BOLT's hugify...), tells which file each copy came from and where that
 * file is loaded, and names the functions inside the copies from the file's
 * symbol table, for perf's /tmp/perf-PID.map.
 *
 * Why it is needed: perf names a sample by the mapping it falls in.  A copy
 * is anonymous memory, which perf (when it reads /proc/PID/maps: perf record
 * -p, -a) hands to /tmp/perf-PID.map, the file JITs write; without one it
 * prints raw addresses.
 *
 * How a copy is recognised (no names needed: "[anon:tiexec:...]" exists
 * only with CONFIG_ANON_VMA_NAME): a copy replaces a piece of a file's
 * executable mapping in place (mremap), so it is an executable mapping that
 * is not file-backed, next to (possibly through other copies) a mapping of
 * the file, and inside the address range where that file's executable
 * PT_LOAD lies at the load bias its remaining file-backed mappings show.
 *
 * The pure part (copy finding, load bias) works on parsed smaps and program
 * headers and is unit-tested in tests/unit/test-perfmap.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "smaps.h"

/* A PT_LOAD, as far as placing it matters. */
struct pm_seg {
	uint64_t vaddr, memsz, offset, filesz;
	int exec; /* PF_X */
};

/* An executable mapping that is not a file's: anonymous, [anon:NAME],
 * a memfd or hugetlb copy.  Not the kernel's [vdso] and friends. */
int pm_is_anon_text(const struct smaps_map *m);

/* A mapping of a real file (inode, a path, not a memfd or hugetlb). */
int pm_is_file(const struct smaps_map *m);

/* The file-backed mappings contiguous with mapping I (across other anonymous
 * text) on its left and right: indices into S, or -1. */
void pm_neighbours(const struct smaps *s, size_t i, long *left, long *right);

/* The load bias of the file mapped at S->map[SRC] (every mapping with the
 * same inode and path votes: address - where its offset lies in a segment
 * of the same executability), or -1 if no mapping fits a segment. */
int pm_bias(const struct smaps *s, size_t src, const struct pm_seg *seg, size_t nseg,
	    uint64_t *bias);

/* [a, b) is a copy of text of an executable segment placed at BIAS: it
 * overlaps the segment and stays within the 2 MiB pieces around it (what
 * tiexec --round-out copies). */
int pm_in_exec_seg(uint64_t a, uint64_t b, uint64_t bias, const struct pm_seg *seg, size_t nseg);

/* What --perf-map did for one process. */
struct pm_report {
	size_t copies;  /* copies found (their file and place known) */
	size_t symbols; /* lines written */
};

/* Writes /tmp/perf-PID.map for the copies among S (the process's smaps):
 * creates it owned by the process's user (when run as root), or appends the
 * lines it lacks to the file the process (a JIT) already writes.  Prints one
 * line per copy to OUT.  Returns 0, or -1 with a message in ERR. */
int pm_write_map(long pid, const struct smaps *s, FILE *out, struct pm_report *rep, char *err,
		 size_t errlen);
