/* smaps.h: the pure part of tiexec-stat.  Parses the text of
 * /proc/PID/smaps (handed over as a buffer: no I/O here) into one record per
 * mapping, and the arithmetic and string escaping the report needs.
 *
 * The parser is defensive: any line length, a last line without its newline,
 * a mapping without a name, a name with spaces or " (deleted)", fields that
 * are missing (then 0, Size then from the address range) or unknown (ignored),
 * and lines that are neither a mapping header nor a "Key: value" field
 * (counted in bad_lines, otherwise ignored). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "geom.h"

#define SMAPS_HUGE_SIZE TX_HUGE /* a PMD mapping (geom.h) */

/* Bits of smaps_map.have: which fields the text gave. */
enum {
	SMAPS_HAVE_SIZE = 1u << 0,
	SMAPS_HAVE_RSS = 1u << 1,
	SMAPS_HAVE_ANON_HUGE = 1u << 2,
	SMAPS_HAVE_FILE_PMD = 1u << 3,
	SMAPS_HAVE_SHARED_HUGETLB = 1u << 4,
	SMAPS_HAVE_PRIVATE_HUGETLB = 1u << 5,
	SMAPS_HAVE_SHMEM_PMD = 1u << 6,
};

struct smaps_map {
	uint64_t start, end;  /* [start, end) */
	char perms[5];        /* "r-xp", NUL-terminated */
	uint64_t offset;      /* file offset (hex in the header) */
	unsigned maj, min;    /* the file's device, as the kernel prints it */
	uint64_t inode;
	char *path;           /* as the kernel printed it, "" if none; never NULL */
	int deleted;          /* path ends in " (deleted)" */
	uint64_t size_kb;     /* "Size:", else (end - start) / 1024 */
	uint64_t rss_kb;      /* "Rss:" */
	uint64_t anon_huge_kb;        /* "AnonHugePages:" */
	uint64_t file_pmd_kb;         /* "FilePmdMapped:" */
	uint64_t shmem_pmd_kb;        /* "ShmemPmdMapped:" (tmpfs, memfd) */
	uint64_t shared_hugetlb_kb;   /* "Shared_Hugetlb:" */
	uint64_t private_hugetlb_kb;  /* "Private_Hugetlb:" */
	unsigned have;                /* SMAPS_HAVE_* */
};

struct smaps {
	struct smaps_map *map;
	size_t n, cap;
	size_t bad_lines; /* lines that were neither a header nor a field */
};

/* Parses LEN bytes of smaps text into OUT (which it initialises; free it with
 * smaps_free even on failure).  Returns 0, or -1 if memory ran out. */
int smaps_parse(const char *text, size_t len, struct smaps *out);
void smaps_free(struct smaps *s);

/* Parses one header line ("start-end perms offset dev inode [path]"),
 * LEN bytes without its newline.  Returns 1 if it is one (M filled in, M->path
 * malloc'ed), 0 if not, -1 if memory ran out. */
int smaps_parse_header(const char *line, size_t len, struct smaps_map *m);

/* Executable: an 'x' in the permissions. */
int smaps_is_exec(const struct smaps_map *m);

/* What is on 2 MiB pages: AnonHugePages + FilePmdMapped + ShmemPmdMapped +
 * both Hugetlb. */
uint64_t smaps_hugetlb_kb(const struct smaps_map *m);
uint64_t smaps_huge_kb(const struct smaps_map *m);

/* The whole 2 MiB-aligned pieces inside [start, end), in kB: what could be on
 * 2 MiB pages at most. */
uint64_t smaps_aligned_kb(uint64_t start, uint64_t end);

