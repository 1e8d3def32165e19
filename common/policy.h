/* The policy note (mark.h) in bytes, the strategies' names and sizes as
 * the user writes them: shared by the loader's options (interp/opts.c) and
 * tiexec-stamp (stamp/note.c).  Pure; unit-tested in tests/unit/test-stamp.c
 * and test-opts.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "mark.h"

/* Bytes of the descriptor tiexec-stamp writes (every field it knows). */
#define POLICY_DESC_SIZE 48u
/* The note: Elf64_Nhdr (12 bytes), "tiexec\0" padded to 8, the descriptor. */
#define POLICY_NOTE_NAMESZ 7u /* strlen("tiexec") + 1 */
#define POLICY_NOTE_DESC_OFF 20u
#define POLICY_NOTE_SIZE (POLICY_NOTE_DESC_OFF + POLICY_DESC_SIZE)
/* The section's alignment: 4, the usual one for notes, so that readers pad
 * the name and descriptor to 4 bytes, as the layout above does. */
#define POLICY_NOTE_ALIGN 4u

/* A policy with nothing set (the orig_* fields zero). */
void policy_unset(struct tiexec_policy *p);

/* Writes p (every field, version and size as given) in little-endian byte
 * order into out[POLICY_DESC_SIZE]. */
void policy_encode(const struct tiexec_policy *p, unsigned char *out);

enum policy_status {
	POLICY_OK = 0,
	POLICY_SHORT,   /* shorter than version + size */
	POLICY_VERSION, /* a version this tiexec-stamp does not know */
	POLICY_BAD,     /* size or a value out of range */
};
/* Reads a descriptor of len bytes by the rules of common/mark.h: a field
 * lying beyond the written `size` is unset (orig_* fields: zero). */
enum policy_status policy_decode(const unsigned char *desc, size_t len, struct tiexec_policy *p);

/* Writes the whole note (header, owner, descriptor) into out[POLICY_NOTE_SIZE]. */
void note_encode(const struct tiexec_policy *p, unsigned char *out);

/* A size: digits with an optional K, M or G (powers of 1024; a trailing "iB"
 * or "B" allowed), as --min-text takes it.  0 on success, -1 if malformed or
 * beyond 2^64 - 1.  (In a note, TIEXEC_UNSET64 means "unset": tiexec-stamp
 * refuses to write it.) */
int size_parse(const char *s, uint64_t *out);

/* "auto", "file", "thp", "hugetlb", "off" <-> enum strategy.  The name of
 * TIEXEC_UNSET32 is "auto" (the default); of a value out of range, "?".
 * strategy_parse: 0, or -1 for a name that is none of them. */
const char *strategy_name(uint32_t s);
int strategy_parse(const char *s, enum strategy *out);

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
