/* The policy note's codec, strategy names and sizes: the one implementation
 * the loader (interp/opts.c) and tiexec-stamp share.  Pure and freestanding:
 * no system call, nothing from a C library beyond memset and memcpy, which
 * the loader's runtime provides. */
#include "policy.h"

#include <string.h>

#include "bits.h"

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
_Static_assert(sizeof(struct tiexec_policy) == POLICY_DESC_SIZE, "descriptor size");
_Static_assert(__builtin_offsetof(struct tiexec_policy, min_text) == D_MIN_TEXT, "min_text");
_Static_assert(__builtin_offsetof(struct tiexec_policy, orig_flags0) == D_ORIG_FLAGS0, "orig_flags0");

static const char *const strategy_names[] = {
	[ST_AUTO] = "auto",
	[ST_FILE] = "file",
	[ST_THP] = "thp",
	[ST_HUGETLB] = "hugetlb",
	[ST_OFF] = "off",
};

void policy_unset(struct tiexec_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->version = TIEXEC_POLICY_VERSION;
	p->size = POLICY_DESC_SIZE;
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
	/* size must be within what is there. */
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
	if (p->strategy != TIEXEC_UNSET32 && p->strategy > ST_OFF)
		return POLICY_BAD;
	return POLICY_OK;
}

void note_encode(const struct tiexec_policy *p, unsigned char *out)
{
	memset(out, 0, POLICY_NOTE_SIZE);
	put32(out, POLICY_NOTE_NAMESZ);
	put32(out + 4, POLICY_DESC_SIZE);
	put32(out + 8, TIEXEC_NT_POLICY);
	memcpy(out + 12, TIEXEC_NOTE_OWNER, POLICY_NOTE_NAMESZ);
	policy_encode(p, out + POLICY_NOTE_DESC_OFF);
}

const char *strategy_name(uint32_t s)
{
	if (s == TIEXEC_UNSET32)
		return strategy_names[ST_AUTO];
	if (s < sizeof(strategy_names) / sizeof(strategy_names[0]))
		return strategy_names[s];
	return "?";
}

int strategy_parse(const char *s, enum strategy *out)
{
	for (uint32_t i = 0; i < sizeof(strategy_names) / sizeof(strategy_names[0]); i++) {
		if (tx_streq(s, strategy_names[i])) {
			*out = (enum strategy)i;
			return 0;
		}
	}
	return -1;
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
	*out = v << shift;
	return 0;
}
