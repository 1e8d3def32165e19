/* The policy descriptor, its note, sizes and the stamp layout: pure code. */
#include "note.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>









char *policy_format(const struct tiexec_policy *p, char *buf, size_t len)
{
	char size[32] = "default";

	if (p->min_text != TIEXEC_UNSET64)
		size_format(p->min_text, size, sizeof(size));
	snprintf(buf, len, "strategy=%s min-text=%s round-out=%s lazy=%s%s%s",
		 strategy_name(p->strategy), size,
		 p->flags & TIEXEC_POLICY_ROUND_OUT ? "yes" : "no",
		 p->flags & TIEXEC_POLICY_LAZY ? "yes" : "no",
		 p->flags & TIEXEC_POLICY_LIBS ? " libs=yes" : p->flags & TIEXEC_POLICY_NO_LIBS ? " libs=no" : "",
		 p->flags & TIEXEC_POLICY_WINDOWS	   ? " windows=yes"
		 : p->flags & TIEXEC_POLICY_NO_WINDOWS ? " windows=no"
						       : "");
	return buf;
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
	    align8(l->note_off + POLICY_NOTE_SIZE, &l->sht_off))
		return -1;
	l->end = l->sht_off + (uint64_t)l->shnum * 64;
	return 0;
}
