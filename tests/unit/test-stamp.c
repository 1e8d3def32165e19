/* tiexec-stamp's pure part (stamp/note.c: the policy descriptor and its
 * note, sizes, the layout of a stamp) and its image code (stamp/elfio.c,
 * with libelf) on a small synthetic program: stamp, re-stamp, remove exactly,
 * and remove after the file was rewritten. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "arch_elf.h" /* ARCH_ELF_MACHINE, ARCH_NAME */
#include "tap.h"

#include "elfcheck.h"
#include "elfio.h"
#include "note.h"

static void test_policy(void)
{
	struct tiexec_policy p, q;
	unsigned char d[POLICY_DESC_SIZE + 8], n[POLICY_NOTE_SIZE];

	policy_unset(&p);
	ok(p.strategy == TIEXEC_UNSET32 && p.min_text == TIEXEC_UNSET64 && p.flags == 0 &&
		   p.version == TIEXEC_POLICY_VERSION && p.size == POLICY_DESC_SIZE,
	   "policy_unset: nothing set");

	p.strategy = ST_HUGETLB;
	p.flags = TIEXEC_POLICY_LAZY;
	p.min_text = 0x123456789aULL;
	p.orig_size = 0x1122334455667788ULL;
	p.orig_shoff = 0x99;
	p.orig_shnum = 0x1234;
	p.orig_shstrndx = 0x4321;
	p.orig_flags0 = 5;
	policy_encode(&p, d);
	ok(d[0] == 1 && d[4] == 48 && d[8] == 3 && d[12] == 2 && d[16] == 0x9a && d[20] == 0x12 &&
		   d[24] == 0x88 && d[31] == 0x11 && d[32] == 0x99 && d[40] == 0x34 && d[41] == 0x12 &&
		   d[42] == 0x21 && d[44] == 5,
	   "policy_encode: little-endian at the struct's offsets");
	ok(policy_decode(d, POLICY_DESC_SIZE, &q) == POLICY_OK && memcmp(&p, &q, sizeof(p)) == 0,
	   "policy_decode(policy_encode(p)) == p");

	/* A shorter writer: fields past `size` are unset. */
	put32(d + 4, 16);
	ok(policy_decode(d, 16, &q) == POLICY_OK && q.strategy == 3 && q.flags == 2 &&
		   q.min_text == TIEXEC_UNSET64 && q.orig_size == 0 && q.orig_shnum == 0,
	   "size 16: min_text unset, orig_* zero");
	put32(d + 4, 8);
	ok(policy_decode(d, 48, &q) == POLICY_OK && q.strategy == TIEXEC_UNSET32 && q.flags == 0,
	   "size 8: everything unset");
	put32(d + 4, 49);
	ok(policy_decode(d, 48, &q) == POLICY_BAD, "size beyond the descriptor: bad");
	put32(d + 4, 7);
	ok(policy_decode(d, 48, &q) == POLICY_BAD, "size below 8: bad");
	ok(policy_decode(d, 7, &q) == POLICY_SHORT, "7 bytes: short");
	put32(d + 4, 48);
	put32(d, 2);
	ok(policy_decode(d, 48, &q) == POLICY_VERSION, "version 2: not known");
	put32(d, 1);
	put32(d + 8, 5);
	ok(policy_decode(d, 48, &q) == POLICY_BAD, "strategy 5: bad");
	/* A longer (newer) descriptor: the known fields are read. */
	memset(d + 48, 0xee, 8);
	put32(d + 8, 1);
	put32(d + 4, 56);
	ok(policy_decode(d, 56, &q) == POLICY_OK && q.strategy == 1 && q.size == 56,
	   "a longer descriptor: known fields read");

	note_encode(&p, n);
	ok(get32(n) == 7 && get32(n + 4) == 48 && get32(n + 8) == TIEXEC_NT_POLICY &&
		   memcmp(n + 12, "tiexec\0\0", 8) == 0 && policy_decode(n + 20, 48, &q) == POLICY_OK &&
		   q.min_text == p.min_text,
	   "note_encode: header, padded owner, descriptor");
}

static void test_sizes(void)
{
	static const struct {
		const char *s;
		int rc;
		uint64_t v;
	} t[] = {
		{ "0", 0, 0 },
		{ "2097152", 0, 2097152 },
		{ "4K", 0, 4096 },
		{ "2M", 0, 2u << 20 },
		{ "2m", 0, 2u << 20 },
		{ "1G", 0, 1u << 30 },
		{ "3MiB", 0, 3u << 20 },
		{ "100B", 0, 100 },
		{ "18446744073709551614", 0, 18446744073709551614ull },
		{ "18446744073709551615", 0, 18446744073709551615ull }, /* stamp.c refuses it */
		{ "18446744073709551616", -1, 0 },
		{ "17179869184G", -1, 0 },
		{ "", -1, 0 },
		{ "M", -1, 0 },
		{ "-1", -1, 0 },
		{ "2 M", -1, 0 },
		{ "2T", -1, 0 },
		{ "2iB", -1, 0 },
	};
	char buf[32];

	for (size_t i = 0; i < TAP_N(t); i++) {
		uint64_t v = 0;
		int rc = size_parse(t[i].s, &v);

		ok(rc == t[i].rc && (rc || v == t[i].v), "size_parse(\"%s\")", t[i].s);
	}
	ok(strcmp(size_format(2u << 20, buf, sizeof(buf)), "2M") == 0, "size_format: 2M");
	ok(strcmp(size_format(1536u << 10, buf, sizeof(buf)), "1536K") == 0, "size_format: 1536K");
	ok(strcmp(size_format(3ull << 30, buf, sizeof(buf)), "3G") == 0, "size_format: 3G");
	ok(strcmp(size_format(1000, buf, sizeof(buf)), "1000") == 0, "size_format: 1000");
	ok(strcmp(size_format(0, buf, sizeof(buf)), "0") == 0, "size_format: 0");
}

static void test_format(void)
{
	struct tiexec_policy p;
	uint32_t s;
	char buf[160];

	policy_unset(&p);
	ok(strcmp(policy_format(&p, buf, sizeof(buf)),
		  "strategy=auto min-text=default round-out=no lazy=no") == 0,
	   "policy_format: nothing set");
	p.strategy = ST_FILE;
	p.min_text = 8u << 20;
	p.flags = TIEXEC_POLICY_ROUND_OUT | TIEXEC_POLICY_LAZY;
	ok(strcmp(policy_format(&p, buf, sizeof(buf)),
		  "strategy=file min-text=8M round-out=yes lazy=yes") == 0,
	   "policy_format: everything set");
	ok(strategy_parse("hugetlb", &s) == 0 && s == ST_HUGETLB &&
		   strategy_parse("off", &s) == 0 && s == ST_OFF &&
		   strategy_parse("Auto", &s) == -1 && strategy_parse("", &s) == -1,
	   "strategy names");
}

static void test_layout(void)
{
	struct stamp_layout l;

	ok(layout_compute(1001, 30, 29, 0x10f, &l) == 0, "layout: 30 sections");
	ok_u64(l.str_off, 1008, "  name table 8-aligned after the file");
	ok_u64(l.str_size, 0x10f + 13, "  grown by \".note.tiexec\\0\"");
	ok_u64(l.note_name, 0x10f, "  the note's name at the old end");
	ok_u64(l.note_off, (1008 + 0x10f + 13 + 7) & ~7ull, "  the note 8-aligned after it");
	ok_u64(l.sht_off, (l.note_off + POLICY_NOTE_SIZE + 7) & ~7ull, "  the table after the note");
	ok(l.shnum == 31 && l.shstrndx == 29 && l.note_ndx == 30, "  31 entries, the note last");
	ok_u64(l.end, l.sht_off + 31 * 64, "  the new size");

	ok(layout_compute(4096, 0, 0, 999, &l) == 0, "layout: no sections");
	ok(l.shnum == 3 && l.shstrndx == 1 && l.note_ndx == 2 && l.str_size == 24 &&
		   l.note_name == 11 && l.str_off == 4096,
	   "  null + .shstrtab + note, a name table from scratch");
	ok(memcmp(STAMP_SCRATCH_STRTAB + l.note_name, ".note.tiexec", 13) == 0 &&
		   memcmp(STAMP_SCRATCH_STRTAB + 1, ".shstrtab", 10) == 0,
	   "  the scratch names");

	ok(layout_compute(4096, 0xfeff, 1, 10, &l) == -1, "layout: 0xfeff sections: too many");
	ok(layout_compute(4096, 0xfefe, 1, 10, &l) == 0 && l.shnum == 0xfeff, "layout: 0xfefe: ok");
	ok(layout_compute(4096, 5, 0, 10, &l) == -1, "layout: no name table: refused");
	ok(layout_compute(4096, 5, 5, 10, &l) == -1, "layout: e_shstrndx out of range: refused");
	ok(layout_compute(UINT64_MAX - 3, 5, 1, 10, &l) == -1, "layout: huge size: refused");
}

/* A small ET_EXEC: ELF header, one PT_LOAD over the first 0x100 bytes, and
 * sections null, .text, .shstrtab, .symtab (a symbol in section 4),
 * .strtab. */
#define NAMES "\0.text\0.shstrtab\0.symtab\0.strtab"
static unsigned char *synth(size_t *len)
{
	const size_t str = 0x100, strtab = str + sizeof(NAMES), sym = 0x130, sht = 0x160;
	unsigned char *b = calloc(1, sht + 5 * 64);
	unsigned char *s;

	memcpy(b, ELFMAG, SELFMAG);
	b[EI_CLASS] = ELFCLASS64;
	b[EI_DATA] = ELFDATA2LSB;
	b[EI_VERSION] = EV_CURRENT;
	put16(b + 16, ET_EXEC);
	put16(b + 18, ARCH_ELF_MACHINE);
	put32(b + 20, EV_CURRENT);
	put64(b + 24, 0x401078);
	put64(b + 32, 64);
	put64(b + 40, sht);
	put16(b + 52, 64);
	put16(b + 54, 56);
	put16(b + 56, 1);
	put16(b + 58, 64);
	put16(b + 60, 5);
	put16(b + 62, 2);
	put32(b + 64, PT_LOAD);
	put32(b + 68, PF_R | PF_X);
	put64(b + 64 + 16, 0x400000);
	put64(b + 64 + 24, 0x400000);
	put64(b + 64 + 32, 0x100);
	put64(b + 64 + 40, 0x100);
	put64(b + 64 + 48, 0x1000);
	memset(b + 120, 0x90, 0x100 - 120);
	memcpy(b + str, NAMES, sizeof(NAMES));
	memcpy(b + strtab, "\0sym", 5);
	put32(b + sym + 24, 1);       /* symbol 1: name "sym" */
	put16(b + sym + 24 + 6, 4);   /* st_shndx 4 */
	s = b + sht + 64;             /* [1] .text */
	put32(s, 1);
	put32(s + 4, SHT_PROGBITS);
	put64(s + 8, SHF_ALLOC | SHF_EXECINSTR);
	put64(s + 16, 0x400078);
	put64(s + 24, 120);
	put64(s + 32, 0x100 - 120);
	s += 64; /* [2] .shstrtab */
	put32(s, 7);
	put32(s + 4, SHT_STRTAB);
	put64(s + 24, str);
	put64(s + 32, sizeof(NAMES));
	s += 64; /* [3] .symtab, linked to [4] .strtab */
	put32(s, 17);
	put32(s + 4, SHT_SYMTAB);
	put64(s + 24, sym);
	put64(s + 32, 48);
	put32(s + 40, 4);
	put32(s + 44, 1);
	put64(s + 48, 8);
	put64(s + 56, 24);
	s += 64; /* [4] .strtab */
	put32(s, 25);
	put32(s + 4, SHT_STRTAB);
	put64(s + 24, strtab);
	put64(s + 32, 5);
	*len = sht + 5 * 64;
	return b;
}

static void test_image(void)
{
	struct elf_facts f, g;
	struct tiexec_policy want;
	enum remove_kind kind;
	unsigned char *orig, *st = NULL, *st2 = NULL, *back = NULL, *re = NULL;
	size_t len, stlen = 0, st2len = 0, backlen = 0, relen = 0;
	char why[200] = "";

	orig = synth(&len);
	ok(elf_facts_read(orig, len, &f, why, sizeof(why)) == 0, "synthetic program read: %s", why);
	ok(f.type == ET_EXEC && f.shnum == 5 && f.str_ok && !f.note_found && !f.marked &&
		   f.seg_end == 0x100,
	   "  its facts");
	ok(stamp_refusal(&f) == NULL, "  stampable");
	ok(remove_build(orig, &f, &kind, &back, &backlen, why, sizeof(why)) == 0 &&
		   kind == REMOVE_NOTHING && !back,
	   "  --remove of an unstamped file: nothing to do");

	policy_unset(&want);
	want.strategy = ST_THP;
	ok(stamp_build(orig, &f, &want, &st, &stlen, why, sizeof(why)) == 0, "stamp: %s", why);
	ok(memcmp(st + 0x100, orig + 0x100, len - 0x100) == 0 && memcmp(st, orig, 40) == 0 &&
		   memcmp(st + 48, orig + 48, 10) == 0 && memcmp(st + 64, orig + 64, 4) == 0 &&
		   memcmp(st + 72, orig + 72, 0x100 - 72) == 0,
	   "  every original byte kept but e_shoff, e_shnum and p_flags");
	ok(elf_facts_read(st, stlen, &g, why, sizeof(why)) == 0 && g.marked && g.note_ok &&
		   g.note_ndx == 5 && g.shnum == 6 && g.policy.strategy == ST_THP &&
		   g.policy.orig_size == len && g.policy.orig_shoff == 0x160 &&
		   g.policy.orig_shnum == 5 && g.policy.orig_shstrndx == 2 &&
		   g.policy.orig_flags0 == (PF_R | PF_X) && !g.note_shared && g.seg_end == 0x100,
	   "  libelf reads the stamp back");
	ok(g.desc_off == g.note_sec_off + POLICY_NOTE_DESC_OFF && g.desc_len == 48,
	   "  the descriptor where the layout puts it");

	/* Stamping again with the same policy gives the same bytes. */
	ok(stamp_build(st, &g, &want, &st2, &st2len, why, sizeof(why)) == 0 && st2len == stlen &&
		   memcmp(st2, st, stlen) == 0,
	   "stamp twice == stamp once");
	free(st2);
	want.strategy = TIEXEC_UNSET32;
	want.flags = TIEXEC_POLICY_ROUND_OUT;
	ok(stamp_build(st, &g, &want, &st2, &st2len, why, sizeof(why)) == 0 && st2len == stlen,
	   "re-stamp with another policy: same size");
	ok(elf_facts_read(st2, st2len, &g, why, sizeof(why)) == 0 && g.note_ok &&
		   g.policy.strategy == TIEXEC_UNSET32 && g.policy.flags == TIEXEC_POLICY_ROUND_OUT &&
		   g.policy.orig_size == len,
	   "  the new policy, the orig_* fields kept");

	ok(remove_build(st2, &g, &kind, &back, &backlen, why, sizeof(why)) == 0 &&
		   kind == REMOVE_EXACT && backlen == len && memcmp(back, orig, len) == 0,
	   "--remove after re-stamp: byte-identical");
	free(back);
	back = NULL;

	/* Rewritten after stamping (here: grown by 8 bytes): the note's
	 * entry is dropped in place instead. */
	re = calloc(1, stlen + 8);
	memcpy(re, st, stlen);
	relen = stlen + 8;
	ok(elf_facts_read(re, relen, &g, why, sizeof(why)) == 0 &&
		   remove_build(re, &g, &kind, &back, &backlen, why, sizeof(why)) == 0 &&
		   kind == REMOVE_DROP && backlen == relen,
	   "--remove after the file grew: drop");
	ok(get16(back + 60) == 5 && get32(back + 68) == (PF_R | PF_X) &&
		   memcmp(back + g.shoff, orig + 0x160, 2 * 64) == 0,
	   "  5 sections again, bit clear");
	ok(elf_facts_read(back, backlen, &g, why, sizeof(why)) == 0 && !g.note_found && !g.marked,
	   "  no note left");
	free(back);
	back = NULL;

	/* Rewritten with the note in the middle (as strip --strip-debug
	 * leaves it): later sections and symbols are renumbered. */
	elf_facts_read(st, stlen, &g, why, sizeof(why));
	unsigned char *sht = re + g.shoff, tmp[64];
	memcpy(re, st, stlen);
	memcpy(tmp, sht + 5 * 64, 64);                  /* the note's entry */
	memmove(sht + 4 * 64, sht + 3 * 64, 2 * 64);    /* symtab, strtab to 4, 5 */
	memcpy(sht + 3 * 64, tmp, 64);                  /* the note to 3 */
	put32(sht + 4 * 64 + 40, 5);                    /* symtab's sh_link */
	put16(re + 0x130 + 24 + 6, 5);                  /* the symbol's section */
	ok(elf_facts_read(re, relen, &g, why, sizeof(why)) == 0 && g.note_ndx == 3 && g.note_ok,
	   "note moved to index 3: read");
	ok(remove_build(re, &g, &kind, &back, &backlen, why, sizeof(why)) == 0 &&
		   kind == REMOVE_DROP,
	   "  --remove: drop");
	ok(get16(back + 60) == 5 && get32(back + g.shoff + 3 * 64 + 40) == 4 &&
		   get16(back + 0x130 + 24 + 6) == 4 && get32(back + g.shoff + 4 * 64) == 25,
	   "  symtab link, symbol section and strtab renumbered");
	ok(memcmp(back + g.shoff, st + g.shoff, 3 * 64) == 0, "  earlier entries untouched");
	unsigned char zero[POLICY_NOTE_SIZE] = { 0 };
	ok(memcmp(back + g.note_sec_off, zero, POLICY_NOTE_SIZE) == 0, "  the note's bytes cleared");
	free(back);
	back = NULL;

	/* Refusals. */
	put16(orig + 16, ET_DYN);
	elf_facts_read(orig, len, &f, why, sizeof(why));
	ok(stamp_refusal(&f) && strcmp(stamp_refusal(&f), "a shared library, not a program") == 0,
	   "ET_DYN without PT_INTERP or DF_1_PIE: a library");
	put16(orig + 16, ET_REL);
	elf_facts_read(orig, len, &f, why, sizeof(why));
	ok(stamp_refusal(&f) && strcmp(stamp_refusal(&f), "not an executable") == 0, "ET_REL: refused");
	put16(orig + 16, ET_EXEC);
	put32(orig + 68, PF_R | PF_X | TIEXEC_MARK_FLAG);
	elf_facts_read(orig, len, &f, why, sizeof(why));
	/* The bit without a note: a stamp whose note a stripper dropped
	 * (llvm-strip).  Accepted; the new note's undo clears the bit. */
	ok(stamp_refusal(&f) == NULL, "the bit without a note: stamped again");
	unsigned char *rs = NULL, *ru = NULL;
	size_t rslen = 0, rulen = 0;
	struct elf_facts rf;
	ok(stamp_build(orig, &f, &want, &rs, &rslen, why, sizeof(why)) == 0 &&
		   get32(rs + 68) == (PF_R | PF_X | TIEXEC_MARK_FLAG),
	   "  the bit kept: %s", why);
	ok(rs && elf_facts_read(rs, rslen, &rf, why, sizeof(why)) == 0 &&
		   remove_build(rs, &rf, &kind, &ru, &rulen, why, sizeof(why)) == 0 && kind == REMOVE_EXACT &&
		   rulen == len && get32(ru + 68) == (PF_R | PF_X),
	   "  its --remove clears the bit too");
	free(rs);
	free(ru);
	ok(remove_build(orig, &f, &kind, &back, &backlen, why, sizeof(why)) == 0 &&
		   kind == REMOVE_BIT && get32(back + 68) == (PF_R | PF_X) && backlen == len,
	   "  --remove clears it");
	free(back);
	/* Another port's program is read (a cross build stamps it); a
	 * machine tiexec has no port for, or 32-bit, is refused. */
	orig[18] = EM_AARCH64 == ARCH_ELF_MACHINE ? EM_X86_64 : EM_AARCH64;
	ok(elf_facts_read(orig, len, &f, why, sizeof(why)) == 0, "another port's program: read");
	orig[18] = EM_PPC64;
	ok(elf_facts_read(orig, len, &f, why, sizeof(why)) == -1 && strcmp(why, "not " ELF_PORTS_NAME) == 0,
	   "ppc64: not a port's");
	orig[18] = (unsigned char)ARCH_ELF_MACHINE;
	orig[EI_CLASS] = ELFCLASS32;
	ok(elf_facts_read(orig, len, &f, why, sizeof(why)) == -1 &&
		   strcmp(why, "not " ELF_PORTS_NAME) == 0,
	   "32-bit: not " ELF_PORTS_NAME);
	ok(elf_facts_read((const unsigned char *)"#!/bin/sh\n", 10, &f, why, sizeof(why)) == -1 &&
		   strcmp(why, "not an ELF file") == 0,
	   "a script: not ELF");

	free(orig);
	free(st);
	free(st2);
	free(re);
}

/* Text in whole pieces of another size (a PMD of 32 MiB on arm64 with
 * 16 KiB pages; 512 MiB with 64 KiB pages), by address. */
static void test_pieces(void)
{
	struct elf_facts f;
	const uint64_t M = 1 << 20;

	memset(&f, 0, sizeof(f));
	f.xseg[0].vaddr = 0x400000; /* 4 MiB .. 68.6 MiB: one whole 32 MiB piece */
	f.xseg[0].filesz = 64 * M + 600 * 1024;
	f.nxseg = 1;
	ok(text_in_pieces(&f, 32 * M) == 32 * M, "static program at 4 MiB: one whole 32 MiB piece");
	ok(text_in_pieces(&f, 512 * M) == 0, "  no whole 512 MiB piece");
	f.xseg[0].vaddr = 0;
	ok(text_in_pieces(&f, 32 * M) == 64 * M, "a PIE from 0: two");
	f.xseg[1].vaddr = 96 * M;
	f.xseg[1].filesz = 32 * M - 1;
	f.nxseg = 2;
	ok(text_in_pieces(&f, 32 * M) == 64 * M, "  a second segment one byte short of a piece adds none");
	f.xseg[1].vaddr = UINT64_MAX - 31 * M; /* wraps: counted as none */
	f.xseg[1].filesz = 64 * M;
	ok(text_in_pieces(&f, 32 * M) == 64 * M, "  a segment that wraps adds none");
	f.nxseg = ELF_XSEG + 3;
	ok(text_in_pieces(&f, 32 * M) == 64 * M, "  segments past ELF_XSEG are not read");
}

int main(void)
{
	test_policy();
	test_sizes();
	test_format();
	test_layout();
	test_image();
	test_pieces();
	return tap_done();
}
