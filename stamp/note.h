/* The pure part of tiexec-stamp: the policy descriptor and its note in
 * bytes (interp/mark.h), sizes as the user writes them, and the arithmetic
 * of where a stamp puts what it appends.  No I/O, no libelf; unit-tested
 * (tests/unit/test-stamp.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "../interp/mark.h"

/* Bytes of the descriptor this tiexec-stamp writes (every field it knows). */
#define STAMP_DESC_SIZE 48u
/* The note: Elf64_Nhdr (12 bytes), "tiexec\0" padded to 8, the descriptor. */
#define STAMP_NOTE_NAMESZ 7u /* strlen("tiexec") + 1 */
#define STAMP_NOTE_DESC_OFF 20u
#define STAMP_NOTE_SIZE (STAMP_NOTE_DESC_OFF + STAMP_DESC_SIZE)
/* The section's alignment: 4, the usual one for notes, so that readers pad
 * the name and descriptor to 4 bytes, as the layout above does. */
#define STAMP_NOTE_ALIGN 4u

/* A policy with nothing set (the orig_* fields zero). */
void policy_unset(struct tiexec_policy *p);

/* Writes p (every field, version and size as given) in little-endian byte
 * order into out[STAMP_DESC_SIZE]. */
void policy_encode(const struct tiexec_policy *p, unsigned char *out);

enum policy_status {
	POLICY_OK = 0,
	POLICY_SHORT,   /* shorter than version + size */
	POLICY_VERSION, /* a version this tiexec-stamp does not know */
	POLICY_BAD,     /* size or a value out of range */
};
/* Reads a descriptor of len bytes by the rules of interp/mark.h: a field
 * lying beyond the written `size` is unset (orig_* fields: zero). */
enum policy_status policy_decode(const unsigned char *desc, size_t len, struct tiexec_policy *p);

/* Writes the whole note (header, owner, descriptor) into out[STAMP_NOTE_SIZE]. */
void note_encode(const struct tiexec_policy *p, unsigned char *out);

/* "strategy=auto min-text=default round-out=no lazy=no" into buf; returns
 * buf.  A strategy not set prints as auto, the loader's default. */
char *policy_format(const struct tiexec_policy *p, char *buf, size_t len);

/* A size: digits with an optional K, M or G (powers of 1024; a trailing "iB"
 * or "B" allowed), as the loader's --min-text takes it.  0 on success, -1 if
 * malformed or too large (TIEXEC_UNSET64 itself means "unset"). */
int size_parse(const char *s, uint64_t *out);
/* The shortest exact form: "2M", "1536K", "1000"; returns buf. */
char *size_format(uint64_t v, char *buf, size_t len);

/* "auto", "file", "thp", "hugetlb", "off" <-> TIEXEC_STRATEGY_*. */
const char *strategy_to_name(uint32_t s);
int strategy_from_name(const char *s, uint32_t *out);

/* Where a stamp puts what it appends to a file of orig_size bytes (see the
 * comment in elfio.c): a copy of the section-name table grown by
 * ".note.tiexec\0", the note, and the new section header table, each
 * 8-byte aligned after the previous one.  orig_shnum == 0 means the file had
 * no section headers: the table is then a null entry, ".shstrtab" and the
 * note, and the name table is made from scratch (old_strsz is ignored). */
struct stamp_layout {
	uint64_t str_off, str_size; /* the new section-name table */
	uint64_t note_name;         /* sh_name of the note's section */
	uint64_t note_off;          /* the note (STAMP_NOTE_SIZE bytes) */
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

/* Little-endian access to a byte buffer. */
static inline uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}
static inline void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}
static inline void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}
static inline void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}
