/* The pure part of tiexec-stamp: the policy descriptor and its note in
 * bytes (common/mark.h), sizes as the user writes them, and the arithmetic
 * of where a stamp puts what it appends.  No I/O, no libelf; unit-tested
 * (tests/unit/test-stamp.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "mark.h"
#include "policy.h"



/* "strategy=auto min-text=default round-out=no lazy=no" into buf; returns
 * buf.  A strategy not set prints as auto, the loader's default. */
char *policy_format(const struct tiexec_policy *p, char *buf, size_t len);

/* The shortest exact form: "2M", "1536K", "1000"; returns buf. */
char *size_format(uint64_t v, char *buf, size_t len);


/* Where a stamp puts what it appends to a file of orig_size bytes (see the
 * comment in elfio.c): a copy of the section-name table grown by
 * ".note.tiexec\0", the note, and the new section header table, each
 * 8-byte aligned after the previous one.  orig_shnum == 0 means the file had
 * no section headers: the table is then a null entry, ".shstrtab" and the
 * note, and the name table is made from scratch (old_strsz is ignored). */
struct stamp_layout {
	uint64_t str_off, str_size; /* the new section-name table */
	uint64_t note_name;         /* sh_name of the note's section */
	uint64_t note_off;          /* the note (POLICY_NOTE_SIZE bytes) */
	uint64_t sht_off;           /* the new section header table */
	uint16_t shnum, shstrndx;   /* its entry count, the name table's index */
	uint16_t note_ndx;          /* the note's index (the last) */
	uint64_t end;               /* the new file size */
};
/* The name table made from scratch: "\0.shstrtab\0.note.tiexec\0". */
#define STAMP_SCRATCH_STRTAB "\0.shstrtab\0" TIEXEC_NOTE_SECTION
#define STAMP_SCRATCH_STRSZ (sizeof(STAMP_SCRATCH_STRTAB)) /* with the final NUL */
/* 0 on success, -1 if the numbers do not fit (too many sections, sizes
 * overflowing). */
int layout_compute(uint64_t orig_size, uint16_t orig_shnum, uint16_t orig_shstrndx,
		   uint64_t old_strsz, struct stamp_layout *l);
