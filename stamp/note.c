/* The policy descriptor, its note, sizes and the stamp layout: pure code. */
#include "note.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Offsets of the descriptor's fields (struct tiexec_policy, packed as
 * written: no padding in it, checked below). */
enum {
	D_VERSION = 0,
	D_SIZE = 4,
	D_STRATEGY = 8,
	D_FLAGS = 12,
	D_MIN_TEXT = 16,
	D_ORIG_SIZE = 24,
	D_ORIG_SHOFF = 32,
	D_ORIG_SHNUM = 40,
	D_ORIG_SHSTRNDX = 42,
	D_ORIG_FLAGS0 = 44,
};
_Static_assert(sizeof(struct tiexec_policy) == STAMP_DESC_SIZE, "descriptor size");
_Static_assert(__builtin_offsetof(struct tiexec_policy, min_text) == D_MIN_TEXT, "min_text");
_Static_assert(__builtin_offsetof(struct tiexec_policy, orig_flags0) == D_ORIG_FLAGS0, "orig_flags0");

void policy_unset(struct tiexec_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->version = TIEXEC_POLICY_VERSION;
	p->size = STAMP_DESC_SIZE;
	p->strategy = TIEXEC_UNSET32;
	p->flags = 0;
	p->min_text = TIEXEC_UNSET64;
}

void policy_encode(const struct tiexec_policy *p, unsigned char *out)
{
	put32(out + D_VERSION, p->version);
	put32(out + D_SIZE, p->size);
	put32(out + D_STRATEGY, p->strategy);
	put32(out + D_FLAGS, p->flags);
	put64(out + D_MIN_TEXT, p->min_text);
	put64(out + D_ORIG_SIZE, p->orig_size);
	put64(out + D_ORIG_SHOFF, p->orig_shoff);
	put16(out + D_ORIG_SHNUM, p->orig_shnum);
	put16(out + D_ORIG_SHSTRNDX, p->orig_shstrndx);
	put32(out + D_ORIG_FLAGS0, p->orig_flags0);
}

enum policy_status policy_decode(const unsigned char *desc, size_t len, struct tiexec_policy *p)
{
	uint32_t size;

	memset(p, 0, sizeof(*p));
	p->strategy = TIEXEC_UNSET32;
	p->min_text = TIEXEC_UNSET64;
	if (len < 8)
		return POLICY_SHORT;
	p->version = get32(desc + D_VERSION);
	p->size = size = get32(desc + D_SIZE);
	if (p->version != TIEXEC_POLICY_VERSION)
		return POLICY_VERSION;
	/* As the loader (interp/opts.c): size must be within what is there. */
	if (size < 8 || size > len)
		return POLICY_BAD;
#define FIELD(off, width) ((off) + (width) <= size)
	if (FIELD(D_STRATEGY, 4))
		p->strategy = get32(desc + D_STRATEGY);
	if (FIELD(D_FLAGS, 4))
		p->flags = get32(desc + D_FLAGS);
	if (FIELD(D_MIN_TEXT, 8))
		p->min_text = get64(desc + D_MIN_TEXT);
	if (FIELD(D_ORIG_SIZE, 8))
		p->orig_size = get64(desc + D_ORIG_SIZE);
	if (FIELD(D_ORIG_SHOFF, 8))
		p->orig_shoff = get64(desc + D_ORIG_SHOFF);
	if (FIELD(D_ORIG_SHNUM, 2))
		p->orig_shnum = get16(desc + D_ORIG_SHNUM);
	if (FIELD(D_ORIG_SHSTRNDX, 2))
		p->orig_shstrndx = get16(desc + D_ORIG_SHSTRNDX);
	if (FIELD(D_ORIG_FLAGS0, 4))
		p->orig_flags0 = get32(desc + D_ORIG_FLAGS0);
#undef FIELD
	if (p->strategy != TIEXEC_UNSET32 && p->strategy > TIEXEC_STRATEGY_OFF)
		return POLICY_BAD;
	return POLICY_OK;
}

void note_encode(const struct tiexec_policy *p, unsigned char *out)
{
	memset(out, 0, STAMP_NOTE_SIZE);
	put32(out, STAMP_NOTE_NAMESZ);
	put32(out + 4, STAMP_DESC_SIZE);
	put32(out + 8, TIEXEC_NT_POLICY);
	memcpy(out + 12, TIEXEC_NOTE_OWNER, STAMP_NOTE_NAMESZ);
	policy_encode(p, out + STAMP_NOTE_DESC_OFF);
}

static const char *const strategy_names[] = {
	[TIEXEC_STRATEGY_AUTO] = "auto",
	[TIEXEC_STRATEGY_FILE] = "file",
	[TIEXEC_STRATEGY_THP] = "thp",
	[TIEXEC_STRATEGY_HUGETLB] = "hugetlb",
	[TIEXEC_STRATEGY_OFF] = "off",
};

const char *strategy_to_name(uint32_t s)
{
	if (s == TIEXEC_UNSET32)
		return strategy_names[TIEXEC_STRATEGY_AUTO];
	if (s < sizeof(strategy_names) / sizeof(strategy_names[0]))
		return strategy_names[s];
	return "?";
}

int strategy_from_name(const char *s, uint32_t *out)
{
	for (uint32_t i = 0; i < sizeof(strategy_names) / sizeof(strategy_names[0]); i++) {
		if (strcmp(s, strategy_names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	return -1;
}

char *policy_format(const struct tiexec_policy *p, char *buf, size_t len)
{
	char size[32] = "default";

	if (p->min_text != TIEXEC_UNSET64)
		size_format(p->min_text, size, sizeof(size));
	snprintf(buf, len, "strategy=%s min-text=%s round-out=%s lazy=%s%s",
		 strategy_to_name(p->strategy), size,
		 p->flags & TIEXEC_POLICY_ROUND_OUT ? "yes" : "no",
		 p->flags & TIEXEC_POLICY_LAZY ? "yes" : "no",
		 p->flags & TIEXEC_POLICY_LIBS ? " libs=yes" : p->flags & TIEXEC_POLICY_NO_LIBS ? " libs=no" : "");
	return buf;
}

int size_parse(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	switch (*p) {
	case 'k': case 'K': shift = 10; p++; break;
	case 'm': case 'M': shift = 20; p++; break;
	case 'g': case 'G': shift = 30; p++; break;
	default: break;
	}
	if (shift && p[0] == 'i' && p[1] == 'B')
		p += 2;
	else if (*p == 'B')
		p++;
	if (*p || v > (UINT64_MAX >> shift))
		return -1;
	v <<= shift;
	if (v == TIEXEC_UNSET64)
		return -1;
	*out = v;
	return 0;
}

char *size_format(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "GMK";

	for (int i = 0; i < 3; i++) {
		unsigned shift = 30 - 10 * (unsigned)i;

		if (v && (v & ((UINT64_C(1) << shift) - 1)) == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", v >> shift, units[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

static int align8(uint64_t v, uint64_t *out)
{
	if (v > UINT64_MAX - 7)
		return -1;
	*out = (v + 7) & ~UINT64_C(7);
	return 0;
}

int layout_compute(uint64_t orig_size, uint16_t orig_shnum, uint16_t orig_shstrndx,
		   uint64_t old_strsz, struct stamp_layout *l)
{
	const uint64_t name = sizeof(TIEXEC_NOTE_SECTION); /* with its NUL */
	const uint64_t limit = UINT64_C(1) << 62;          /* far beyond any file */

	memset(l, 0, sizeof(*l));
	if (orig_size > limit || old_strsz > limit)
		return -1;
	if (orig_shnum == 0) {
		l->str_size = STAMP_SCRATCH_STRSZ;
		l->note_name = STAMP_SCRATCH_STRSZ - name;
		l->shnum = 3;
		l->shstrndx = 1;
	} else {
		/* SHN_LORESERVE (0xff00) and up would need extended numbering. */
		if (orig_shnum >= 0xff00 - 1 || orig_shstrndx == 0 || orig_shstrndx >= orig_shnum)
			return -1;
		l->str_size = old_strsz + name;
		l->note_name = old_strsz;
		l->shnum = (uint16_t)(orig_shnum + 1);
		l->shstrndx = orig_shstrndx;
	}
	l->note_ndx = (uint16_t)(l->shnum - 1);
	if (align8(orig_size, &l->str_off) || align8(l->str_off + l->str_size, &l->note_off) ||
	    align8(l->note_off + STAMP_NOTE_SIZE, &l->sht_off))
		return -1;
	l->end = l->sht_off + (uint64_t)l->shnum * 64;
	return 0;
}
