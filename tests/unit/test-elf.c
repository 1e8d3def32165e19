/* Unit tests for common/elfcheck.c (TAP).
 *   gcc -std=gnu11 -Wall -Wextra -Werror -fsanitize=address,undefined \
 *       -fno-sanitize-recover=all -g -Iinterp tests/unit/test-elf.c common/elfcheck.c */
#include <stddef.h>
#include <string.h>

#include "elfcheck.h"
#include "tap.h"

/* A change to one field of the template: ph = -1 for the ELF header, else the
 * index of a program header.  A zero width ends a list. */
struct patch {
	int ph;
	unsigned off, width;
	uint64_t val;
};
#define EH(f, v) { -1, offsetof(Elf64_Ehdr, f), sizeof(((Elf64_Ehdr *)0)->f), (uint64_t)(v) }
#define PH(i, f, v) { i, offsetof(Elf64_Phdr, f), sizeof(((Elf64_Phdr *)0)->f), (uint64_t)(v) }
#define MAXPATCH 8
#define MAXPH 8
/* A machine that is not this build's (arch_elf.h). */
#define OTHER_MACHINE (ARCH_ELF_MACHINE == EM_AARCH64 ? EM_X86_64 : EM_AARCH64)

struct img {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[MAXPH];
	uint64_t fsize;
};

/* ET_EXEC: headers (R) at 0x400000, text (RX) at 0x401000, data+bss (RW) at
 * 0x402000, PT_GNU_STACK; the program headers lie in the first segment.
 * ET_DYN: the same at 0, 0x1000, 0x2000. */
static void template(struct img *m, int dyn)
{
	uint64_t base = dyn ? 0 : 0x400000;

	memset(m, 0, sizeof(*m));
	memcpy(m->eh.e_ident, ELFMAG, SELFMAG);
	m->eh.e_ident[EI_CLASS] = ELFCLASS64;
	m->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	m->eh.e_ident[EI_VERSION] = EV_CURRENT;
	m->eh.e_type = dyn ? ET_DYN : ET_EXEC;
	m->eh.e_machine = ARCH_ELF_MACHINE;
	m->eh.e_version = EV_CURRENT;
	m->eh.e_entry = base + 0x1000;
	m->eh.e_phoff = sizeof(Elf64_Ehdr);
	m->eh.e_ehsize = sizeof(Elf64_Ehdr);
	m->eh.e_phentsize = sizeof(Elf64_Phdr);
	m->eh.e_phnum = 4;
	m->ph[0] = (Elf64_Phdr){ PT_LOAD, PF_R, 0, base, base, 0x200, 0x200, 0x1000 };
	m->ph[1] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, 0x1000, base + 0x1000, base + 0x1000,
				 0x100, 0x100, 0x1000 };
	m->ph[2] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_W, 0x2000, base + 0x2000, base + 0x2000,
				 0x10, 0x1000, 0x1000 };
	m->ph[3] = (Elf64_Phdr){ PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0, 0, 16 };
	m->fsize = 0x2010;
}

static void apply(struct img *m, const struct patch *p)
{
	for (; p->width; p++) {
		unsigned char *dst = p->ph < 0 ? (unsigned char *)&m->eh
					       : (unsigned char *)&m->ph[p->ph];
		memcpy(dst + p->off, &p->val, p->width); /* little-endian host */
	}
}

static const char *ename(enum elf_err e)
{
	static const char *const names[] = {
		"ELF_OK", "ELF_TRUNCATED", "ELF_NOT_ELF", "ELF_BAD_MACHINE", "ELF_BAD_TYPE",
		"ELF_BAD_PHENTSIZE", "ELF_BAD_PHNUM", "ELF_BAD_PHOFF", "ELF_NO_LOAD",
		"ELF_SEG_FILESZ", "ELF_SEG_PAST_EOF", "ELF_SEG_OFFSET", "ELF_SEG_RANGE",
		"ELF_SEG_CONGRUENCE", "ELF_BAD_INTERP", "ELF_BAD_ENTRY",
	};
	return (unsigned)e < TAP_N(names) ? names[e] : "?";
}

/* ---- elf_check_ehdr ---------------------------------------------------- */

struct ehdr_case {
	const char *desc;
	struct patch p[MAXPATCH];
	size_t len;     /* bytes handed to elf_check_ehdr; 0 with raw == NULL means 0 */
	uint64_t fsize; /* 0: same as len */
	enum elf_err want;
	const char *raw; /* if set, these len bytes instead of the template */
};

#define BIG 0x100000 /* a file size that leaves room for any phdr table */

static const struct ehdr_case ehdr_cases[] = {
	/* Truncation: a prefix of the magic is a truncated ELF file. */
	{ "empty file (0 bytes) is not an ELF file", {}, 0, 0, ELF_NOT_ELF, NULL },
	{ "1 byte \\x7f", {}, 1, 0, ELF_TRUNCATED, NULL },
	{ "3 bytes \\x7fEL", {}, 3, 0, ELF_TRUNCATED, NULL },
	{ "4 bytes: magic only", {}, 4, 0, ELF_TRUNCATED, NULL },
	{ "15 bytes: e_ident incomplete", {}, 15, 0, ELF_TRUNCATED, NULL },
	{ "16 bytes: e_ident only", {}, 16, 0, ELF_TRUNCATED, NULL },
	{ "40 bytes", {}, 40, 0, ELF_TRUNCATED, NULL },
	{ "63 bytes", {}, 63, 0, ELF_TRUNCATED, NULL },
	{ "64 bytes read but file_size 63", {}, 64, 63, ELF_TRUNCATED, NULL },
	{ "16 bytes read but file_size 15", {}, 16, 15, ELF_TRUNCATED, NULL },
	/* Not ELF at all. */
	{ "3 bytes #!/", {}, 3, 0, ELF_NOT_ELF, "#!/" },
	{ "2 bytes MZ", {}, 2, 0, ELF_NOT_ELF, "MZ" },
	{ "1 byte \\0", {}, 1, 0, ELF_NOT_ELF, "" },
	{ "3 bytes \\x7fEX (prefix mismatch)", {}, 3, 0, ELF_NOT_ELF, "\x7f" "EX" },
	{ "bad magic byte 0", { EH(e_ident[0], 0x7e) }, 64, BIG, ELF_NOT_ELF, NULL },
	{ "bad magic byte 3 (\\x7fELG)", { EH(e_ident[3], 'G') }, 64, BIG, ELF_NOT_ELF, NULL },
	{ "bad magic, only 10 bytes", { EH(e_ident[1], 'e') }, 10, 0, ELF_NOT_ELF, NULL },
	/* e_ident beyond the magic: binfmt_elf checks none of it (measured:
	 * such files run), so neither do we. */
	{ "ELFCLASS32", { EH(e_ident[EI_CLASS], ELFCLASS32) }, 64, BIG, ELF_OK, NULL },
	{ "ELFCLASSNONE", { EH(e_ident[EI_CLASS], ELFCLASSNONE) }, 64, BIG, ELF_OK, NULL },
	{ "ELFCLASS32 in a 20-byte file", { EH(e_ident[EI_CLASS], ELFCLASS32) }, 20, 0,
	  ELF_TRUNCATED, NULL },
	{ "ELFDATA2MSB", { EH(e_ident[EI_DATA], ELFDATA2MSB) }, 64, BIG, ELF_OK, NULL },
	{ "EI_VERSION 0", { EH(e_ident[EI_VERSION], 0) }, 64, BIG, ELF_OK, NULL },
	{ "EI_VERSION 2", { EH(e_ident[EI_VERSION], 2) }, 64, BIG, ELF_OK, NULL },
	{ "e_version 0", { EH(e_version, 0) }, 64, BIG, ELF_OK, NULL },
	{ "EI_VERSION 2 in a 30-byte file", { EH(e_ident[EI_VERSION], 2) }, 30, 0,
	  ELF_TRUNCATED, NULL },
	{ "ET_REL and another machine: the type is checked first, as in the kernel",
	  { EH(e_type, ET_REL), EH(e_machine, OTHER_MACHINE) }, 64, BIG, ELF_BAD_TYPE, NULL },
	/* e_machine, e_type */
	{ "another machine", { EH(e_machine, OTHER_MACHINE) }, 64, BIG, ELF_BAD_MACHINE, NULL },
	{ "EM_386", { EH(e_machine, EM_386) }, 64, BIG, ELF_BAD_MACHINE, NULL },
	{ "EM_NONE", { EH(e_machine, EM_NONE) }, 64, BIG, ELF_BAD_MACHINE, NULL },
	{ "ET_REL", { EH(e_type, ET_REL) }, 64, BIG, ELF_BAD_TYPE, NULL },
	{ "ET_CORE", { EH(e_type, ET_CORE) }, 64, BIG, ELF_BAD_TYPE, NULL },
	{ "ET_NONE", { EH(e_type, ET_NONE) }, 64, BIG, ELF_BAD_TYPE, NULL },
	{ "ET_LOOS", { EH(e_type, ET_LOOS) }, 64, BIG, ELF_BAD_TYPE, NULL },
	/* program header table */
	{ "e_phentsize 32", { EH(e_phentsize, 32) }, 64, BIG, ELF_BAD_PHENTSIZE, NULL },
	{ "e_phentsize 0", { EH(e_phentsize, 0) }, 64, BIG, ELF_BAD_PHENTSIZE, NULL },
	{ "e_phentsize 57", { EH(e_phentsize, 57) }, 64, BIG, ELF_BAD_PHENTSIZE, NULL },
	{ "e_phnum 0", { EH(e_phnum, 0) }, 64, BIG, ELF_BAD_PHNUM, NULL },
	{ "e_phnum 1171 (65576 bytes > 64 KiB)", { EH(e_phnum, 1171) }, 64, BIG, ELF_BAD_PHNUM,
	  NULL },
	{ "e_phnum 2000", { EH(e_phnum, 2000) }, 64, BIG, ELF_BAD_PHNUM, NULL },
	{ "e_phnum 0xffff (PN_XNUM)", { EH(e_phnum, 0xffff) }, 64, BIG, ELF_BAD_PHNUM, NULL },
	{ "e_phnum 1170 (the most the kernel takes)", { EH(e_phnum, 1170) }, 64, BIG, ELF_OK,
	  NULL },
	{ "e_phoff == file size", { EH(e_phoff, 0x2010) }, 64, 0x2010, ELF_BAD_PHOFF, NULL },
	{ "e_phoff past EOF", { EH(e_phoff, 0x3000) }, 64, 0x2010, ELF_BAD_PHOFF, NULL },
	{ "phdr table ends 1 byte past EOF", { EH(e_phoff, 0x2010 - 4 * 56 + 1) }, 64, 0x2010,
	  ELF_BAD_PHOFF, NULL },
	{ "phdr table ends exactly at EOF", { EH(e_phoff, 0x2010 - 4 * 56) }, 64, 0x2010, ELF_OK,
	  NULL },
	{ "64-byte file: header only, phdrs at 64", {}, 64, 64, ELF_BAD_PHOFF, NULL },
	{ "e_phoff 0xffffffffffffffc0 (offset + size overflows)",
	  { EH(e_phoff, 0xffffffffffffffc0ULL) }, 64, BIG, ELF_BAD_PHOFF, NULL },
	{ "e_phoff UINT64_MAX", { EH(e_phoff, UINT64_MAX) }, 64, BIG, ELF_BAD_PHOFF, NULL },
	/* good */
	{ "template ET_EXEC", {}, 64, 0x2010, ELF_OK, NULL },
	{ "template as ET_DYN", { EH(e_type, ET_DYN) }, 64, 0x2010, ELF_OK, NULL },
	{ "more than 64 bytes handed in", {}, sizeof(struct img), 0x2010, ELF_OK, NULL },
};

static void test_ehdr(void)
{
	for (size_t i = 0; i < TAP_N(ehdr_cases); i++) {
		const struct ehdr_case *c = &ehdr_cases[i];
		struct img m;
		unsigned char buf[sizeof(struct img)];
		Elf64_Ehdr eh;

		template(&m, 0);
		apply(&m, c->p);
		memcpy(buf, &m, sizeof(m));
		if (c->raw)
			memcpy(buf, c->raw, c->len);
		memset(&eh, 0xa5, sizeof(eh));
		enum elf_err e = elf_check_ehdr(buf, c->len, c->fsize ? c->fsize : c->len, &eh);
		if (!ok(e == c->want, "elf_check_ehdr: %s -> %s", c->desc, ename(c->want)))
			diag("  got %s", ename(e));
		if (e == ELF_OK)
			ok(memcmp(&eh, &m.eh, sizeof(eh)) == 0, "elf_check_ehdr: %s: header copied out",
			   c->desc);
	}
}

/* ---- elf_check_phdrs: errors, and odd files the kernel runs -------------- */

struct ph_case {
	const char *desc;
	int dyn;
	struct patch p[MAXPATCH];
	uint64_t fsize; /* 0: the template's */
	enum elf_err want;
};

#define TOP TX_USER_TOP

static const struct ph_case ph_err_cases[] = {
	{ "text p_filesz > p_memsz", 0, { PH(1, p_filesz, 0x101) }, 0, ELF_SEG_FILESZ },
	{ "data p_filesz > p_memsz", 0, { PH(2, p_filesz, 0x1001) }, 0x10000, ELF_SEG_FILESZ },
	{ "empty PT_LOAD with p_filesz > p_memsz (the kernel refuses it too)", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_LOAD), PH(4, p_filesz, 1) }, 0, ELF_SEG_FILESZ },
	{ "data file bytes 1 past EOF, the page with EOF holds the .bss start (kernel: runs)", 0,
	  { PH(2, p_filesz, 0x11) }, 0, ELF_OK },
	{ "writable: .bss starts on a page wholly past EOF (padzero faults)", 0,
	  { PH(2, p_filesz, 0x1011), PH(2, p_memsz, 0x2000) }, 0, ELF_SEG_PAST_EOF },
	{ "read-only: .bss starts on a page wholly past EOF (padzero error ignored)", 0,
	  { PH(2, p_filesz, 0x1011), PH(2, p_memsz, 0x2000), PH(2, p_flags, PF_R) }, 0, ELF_OK },
	{ "writable, file bytes past EOF ending on a page boundary (nothing to zero)", 0,
	  { PH(2, p_filesz, 0x1000) }, 0, ELF_OK },
	{ "data p_offset past EOF", 0, { PH(2, p_offset, 0x3000), PH(2, p_vaddr, 0x403000) }, 0,
	  ELF_SEG_PAST_EOF },
	{ "data p_offset past EOF, p_filesz 0 (pure bss)", 0,
	  { PH(2, p_offset, 0x3000), PH(2, p_vaddr, 0x403000), PH(2, p_filesz, 0) }, 0, ELF_OK },
	{ "pure bss with a p_offset not congruent to p_vaddr (nothing is mapped from the file)", 0,
	  { PH(2, p_offset, 0x3123), PH(2, p_filesz, 0) }, 0, ELF_OK },
	{ "text past EOF (the kernel maps it; touching it would SIGBUS)", 0,
	  { PH(1, p_filesz, 0x5000), PH(1, p_memsz, 0x5000), PH(2, p_vaddr, 0x406000),
	    PH(2, p_offset, 0x2000) }, 0, ELF_OK },
	{ "p_offset + p_filesz wraps to 0", 0,
	  { PH(2, p_filesz, 0xffffffffffffe000ULL), PH(2, p_memsz, 0xffffffffffffe000ULL) }, 0,
	  ELF_SEG_RANGE },
	{ "p_offset 0xfffffffffffff000", 0,
	  { PH(2, p_offset, 0xfffffffffffff000ULL), PH(2, p_vaddr, 0x403000) }, 0,
	  ELF_SEG_OFFSET },
	{ "p_offset + p_filesz past INT64_MAX (mmap: EOVERFLOW)", 0,
	  { PH(2, p_offset, 0x7ffffffffffff000ULL), PH(2, p_vaddr, 0x403000) }, 0,
	  ELF_SEG_OFFSET },
	{ "empty PT_LOAD at a kernel address (BAD_ADDR applies to it too)", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_LOAD), PH(4, p_vaddr, 0xffffffff80000000ULL) }, 0,
	  ELF_SEG_RANGE },
	{ "p_vaddr 0xfffffffffffff000 (near 2^64)", 0, { PH(2, p_vaddr, 0xfffffffffffff000ULL) },
	  0, ELF_SEG_RANGE },
	{ "p_vaddr 0xffffffff00000000", 0, { PH(2, p_vaddr, 0xffffffff00000000ULL) }, 0,
	  ELF_SEG_RANGE },
	{ "p_vaddr == TASK_SIZE_MAX", 0, { PH(2, p_vaddr, TOP) }, 0, ELF_SEG_RANGE },
	{ "segment ends 1 byte past TASK_SIZE_MAX", 0,
	  { PH(2, p_vaddr, TOP - 0x1000), PH(2, p_memsz, 0x1001) }, 0, ELF_SEG_RANGE },
	{ "p_memsz the whole user space (absurd)", 0, { PH(2, p_memsz, TX_USER_TOP - 1) }, 0,
	  ELF_SEG_RANGE },
	{ "p_memsz UINT64_MAX", 0, { PH(2, p_memsz, UINT64_MAX) }, 0, ELF_SEG_RANGE },
	{ "ET_DYN p_memsz UINT64_MAX - 0x1000 (wraps with vaddr)", 1,
	  { PH(2, p_memsz, UINT64_MAX - 0x1000) }, 0, ELF_SEG_RANGE },
	{ "p_align 3 (skipped by maximum_alignment)", 0, { PH(1, p_align, 3) }, 0, ELF_OK },
	{ "p_align 0x1800", 0, { PH(1, p_align, 0x1800) }, 0, ELF_OK },
	{ "p_align UINT64_MAX", 0, { PH(2, p_align, UINT64_MAX) }, 0, ELF_OK },
	{ "ET_DYN p_align 2^63 (the first segment goes to address 0)", 1,
	  { PH(2, p_align, 1ULL << 63) }, 0, ELF_OK },
	{ "p_vaddr - p_offset not a page multiple (+0x10)", 0, { PH(1, p_offset, 0x1010) },
	  0x10000, ELF_SEG_CONGRUENCE },
	{ "p_vaddr - p_offset not a page multiple (vaddr +0x800)", 0,
	  { PH(2, p_vaddr, 0x402800) }, 0, ELF_SEG_CONGRUENCE },
	{ "data overlaps text", 0, { PH(2, p_vaddr, 0x401080), PH(2, p_offset, 0x1080) }, 0,
	  ELF_OK },
	{ "data starts 1 byte before text ends", 0,
	  { PH(2, p_vaddr, 0x4010ff), PH(2, p_offset, 0x10ff) }, 0, ELF_OK },
	{ "bss of the headers segment runs into text", 0, { PH(0, p_memsz, 0x1001) }, 0,
	  ELF_OK },
	{ "segments out of order", 0, { PH(2, p_vaddr, 0x300000) }, 0, ELF_OK },
	{ "same p_vaddr twice", 0, { PH(2, p_vaddr, 0x401000), PH(2, p_offset, 0x1000) }, 0,
	  ELF_OK },
	{ "ET_DYN segments out of order", 1,
	  { PH(1, p_vaddr, 0x10000), PH(1, p_paddr, 0x10000), EH(e_entry, 0x10000) },
	  0, ELF_OK },
	{ "no PT_LOAD at all", 0,
	  { PH(0, p_type, PT_NOTE), PH(1, p_type, PT_NOTE), PH(2, p_type, PT_NULL) }, 0,
	  ELF_NO_LOAD },
	{ "only PT_LOADs with p_memsz 0", 0,
	  { PH(0, p_memsz, 0), PH(0, p_filesz, 0), PH(1, p_memsz, 0), PH(1, p_filesz, 0),
	    PH(2, p_memsz, 0), PH(2, p_filesz, 0) },
	  0, ELF_NO_LOAD },
	{ "e_phnum 1, a PT_NOTE", 0,
	  { EH(e_phnum, 1), PH(0, p_type, PT_NOTE) }, 0, ELF_NO_LOAD },
	{ "two PT_INTERP", 0,
	  { EH(e_phnum, 6), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0x300), PH(4, p_filesz, 28),
	    PH(5, p_type, PT_INTERP), PH(5, p_offset, 0x300), PH(5, p_filesz, 28) },
	  0, ELF_OK },
	{ "PT_INTERP p_filesz 0", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0x300), PH(4, p_filesz, 0) },
	  0, ELF_BAD_INTERP },
	{ "PT_INTERP p_filesz 1", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0x300), PH(4, p_filesz, 1) },
	  0, ELF_BAD_INTERP },
	{ "PT_INTERP p_filesz 4097 (> PATH_MAX)", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0x300),
	    PH(4, p_filesz, 4097) },
	  0x10000, ELF_BAD_INTERP },
	{ "PT_INTERP past EOF", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0x2000),
	    PH(4, p_filesz, 0x11) },
	  0, ELF_BAD_INTERP },
	{ "PT_INTERP p_offset past EOF", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0x3000),
	    PH(4, p_filesz, 28) },
	  0, ELF_BAD_INTERP },
	{ "PT_INTERP p_offset + p_filesz wraps", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0xfffffffffffffff0ULL),
	    PH(4, p_filesz, 0x20) },
	  0, ELF_BAD_INTERP },
	{ "entry in the read-only segment", 0, { EH(e_entry, 0x400000) }, 0, ELF_BAD_ENTRY },
	{ "entry past text's bytes but in its page (executable: kernel runs it)", 0,
	  { EH(e_entry, 0x401100) }, 0, ELF_OK },
	{ "entry on the page after text", 0, { EH(e_entry, 0x402000), PH(2, p_flags, PF_R) }, 0,
	  ELF_BAD_ENTRY },
	{ "entry just before text", 0, { EH(e_entry, 0x400fff) }, 0, ELF_BAD_ENTRY },
	{ "entry in the data segment", 0, { EH(e_entry, 0x402000) }, 0, ELF_BAD_ENTRY },
	{ "entry 0", 0, { EH(e_entry, 0) }, 0, ELF_BAD_ENTRY },
	{ "no executable segment", 0, { PH(1, p_flags, PF_R) }, 0, ELF_BAD_ENTRY },
	{ "ET_DYN entry outside text", 1, { EH(e_entry, 0x20) }, 0, ELF_BAD_ENTRY },
	{ "ET_EXEC with a segment at address 0 (mmap_min_addr decides)", 0,
	  { PH(0, p_vaddr, 0), PH(0, p_paddr, 0) }, 0, ELF_OK },
	{ "ET_EXEC with a segment at 0x800 (page 0)", 0,
	  { PH(0, p_vaddr, 0x800), PH(0, p_offset, 0x800), PH(0, p_filesz, 0x10),
	    PH(0, p_memsz, 0x10) },
	  0, ELF_OK },
};

/* What the tools ask first: ELF, 64-bit, little-endian, this machine. */
static void test_ident(void)
{
	struct img m;
	unsigned char b[sizeof(struct img)];

	template(&m, 0);
	memcpy(b, &m, sizeof(m));
	ok(elf_check_ident(b, sizeof(b)) == ELF_OK, "elf_check_ident: a program of this machine");
	ok(elf_check_ident(b, ELF_IDENT_BYTES - 1) == ELF_NOT_ELF, "elf_check_ident: too short to tell");
	b[0] = 'X';
	ok(elf_check_ident(b, sizeof(b)) == ELF_NOT_ELF, "elf_check_ident: no ELF magic");
	b[0] = 0x7f;
	b[EI_CLASS] = ELFCLASS32;
	ok(elf_check_ident(b, sizeof(b)) == ELF_BAD_MACHINE, "elf_check_ident: 32-bit");
	b[EI_CLASS] = ELFCLASS64;
	b[EI_DATA] = ELFDATA2MSB;
	ok(elf_check_ident(b, sizeof(b)) == ELF_BAD_MACHINE, "elf_check_ident: big-endian");
	b[EI_DATA] = ELFDATA2LSB;
	uint16_t other = OTHER_MACHINE;
	memcpy(b + 18, &other, 2);
	ok(elf_check_ident(b, sizeof(b)) == ELF_BAD_MACHINE, "elf_check_ident: another machine (%u)", other);
}

static void test_phdr_errors(void)
{
	for (size_t i = 0; i < TAP_N(ph_err_cases); i++) {
		const struct ph_case *c = &ph_err_cases[i];
		struct img m;
		struct elf_info info;

		template(&m, c->dyn);
		apply(&m, c->p);
		enum elf_err e = elf_check_phdrs(&m.eh, m.ph, c->fsize ? c->fsize : m.fsize, 0, &info);
		if (!ok(e == c->want, "elf_check_phdrs: %s%s -> %s", c->dyn ? "ET_DYN: " : "",
			c->desc, ename(c->want)))
			diag("  got %s", ename(e));
	}
}

/* ---- elf_check_phdrs: what it reports for good programs ----------------- */

struct ph_good {
	const char *desc;
	int dyn;
	struct patch p[MAXPATCH];
	uint64_t fsize;
	struct elf_info want;
};

/* type, entry, lo, hi, phdr_vaddr, nload, interp, exec_stack, text_bytes */
static const struct ph_good ph_good_cases[] = {
	{ "template ET_EXEC", 0, {}, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "template ET_DYN", 1, {}, 0, { ET_DYN, 0x1000, 0, 0x3000, 0x40, 3, -1, 0, 0x100, 0x1000, 0, 1 } },
	{ "ET_DYN may start at address 0 with p_offset != 0", 1,
	  { PH(0, p_vaddr, 0x10), PH(0, p_offset, 0x10), PH(0, p_filesz, 0x100),
	    PH(0, p_memsz, 0x100) },
	  0, { ET_DYN, 0x1000, 0, 0x3000, 0x40, 3, -1, 0, 0x100, 0x1000, 0x10, 1 } },
	{ "lo/hi rounded out to pages", 0,
	  { PH(0, p_vaddr, 0x400123), PH(0, p_offset, 0x123), PH(0, p_filesz, 0x10),
	    PH(0, p_memsz, 0x10), PH(2, p_memsz, 0x1001) },
	  0, { ET_EXEC, 0x401000, 0x400000, 0x404000, 0, 3, -1, 0, 0x100, 0x1000, 0x400123, 1 } },
	{ "hi exactly on a page end stays", 0, { PH(2, p_memsz, 0x2000) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x404000, 0x400040, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "text_bytes sums every executable segment", 0,
	  { PH(0, p_flags, PF_R | PF_X), PH(2, p_flags, PF_R | PF_W | PF_X) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, -1, 0, 0x200 + 0x100 + 0x1000, 0x1000, 0x400000, 1 } },
	{ "entry on the last byte of text", 0, { EH(e_entry, 0x4010ff) }, 0,
	  { ET_EXEC, 0x4010ff, 0x400000, 0x403000, 0x400040, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "entry in a second executable segment", 0,
	  { EH(e_entry, 0x402008), PH(2, p_flags, PF_R | PF_X) }, 0,
	  { ET_EXEC, 0x402008, 0x400000, 0x403000, 0x400040, 3, -1, 0, 0x1100, 0x1000, 0x400000, 1 } },
	{ "PT_GNU_STACK with PF_X: exec_stack", 0, { PH(3, p_flags, PF_R | PF_W | PF_X) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, -1, 1, 0x100, 0x1000, 0x400000, 1 } },
	{ "no PT_GNU_STACK: no exec_stack", 0, { PH(3, p_type, PT_NULL) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "PT_INTERP: its index", 0,
	  { EH(e_phnum, 6), PH(5, p_type, PT_INTERP), PH(5, p_offset, 0x300),
	    PH(5, p_filesz, 28) },
	  0, { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, 5, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "PT_INTERP of 4096 bytes (PATH_MAX)", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0x1000),
	    PH(4, p_filesz, 4096) },
	  0, { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, 4, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "PT_INTERP ending exactly at EOF", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0x2000),
	    PH(4, p_filesz, 0x10) },
	  0, { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, 4, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "neighbours share the page at their boundary", 0,
	  { PH(2, p_vaddr, 0x401100), PH(2, p_offset, 0x1100), PH(2, p_filesz, 0x10) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "segment ends exactly at TASK_SIZE_MAX", 0,
	  { PH(2, p_vaddr, TOP - 0x1000), PH(2, p_paddr, 0) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, TOP, 0x400040, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "PT_LOAD with p_memsz 0 is ignored (even out of order)", 0,
	  { EH(e_phnum, 5), PH(4, p_type, PT_LOAD), PH(4, p_vaddr, 0x100000) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "p_align 0, 1 and 2 MiB are powers of two (or none)", 0,
	  { PH(0, p_align, 0), PH(1, p_align, 1), PH(2, p_align, 0x200000) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, -1, 0, 0x100, 0x200000, 0x400000, 1 } },
	{ "ET_EXEC lowest segment at 0x1000", 0,
	  { PH(0, p_vaddr, 0x1000) }, 0,
	  { ET_EXEC, 0x401000, 0x1000, 0x403000, 0x1040, 3, -1, 0, 0x100, 0x1000, 0x1000, 1 } },
	{ "program headers in no segment: phdr_vaddr 0", 0, { EH(e_phoff, 0x1800) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "program headers inside text (not at the start of a segment)", 0,
	  { EH(e_phoff, 0x1010), PH(1, p_filesz, 0x100) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x401010, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	{ "program headers in bss only (past p_filesz): not loaded", 0,
	  { EH(e_phoff, 0x2040), PH(2, p_filesz, 0x10) }, 0x3000,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	/* binfmt_elf's AT_PHDR loop assigns phdr_addr for *every* PT_LOAD whose
	 * file bytes hold e_phoff, so the last such segment wins. */
	{ "two segments map the program headers: the kernel takes the last", 0,
	  { PH(2, p_vaddr, 0x600000), PH(2, p_offset, 0), PH(2, p_filesz, 0x200),
	    PH(2, p_memsz, 0x200) },
	  0, { ET_EXEC, 0x401000, 0x400000, 0x601000, 0x600040, 3, -1, 0, 0x100, 0x1000, 0x400000, 1 } },
	/* Accepted as the kernel accepts them (fs/binfmt_elf.c). */
	{ "out of order: lo/hi are min/max (total_mapping_size), not ordered", 0,
	  { PH(2, p_vaddr, 0x300000), PH(2, p_paddr, 0x300000) }, 0,
	  { ET_EXEC, 0x401000, 0x300000, 0x402000, 0x400040, 3, -1, 0, 0x100, 0x1000, 0x400000,
	    0 } },
	{ "overlapping: not ordered", 0, { PH(0, p_memsz, 0x1001) }, 0,
	  { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, -1, 0, 0x100, 0x1000, 0x400000,
	    0 } },
	{ "align: the largest power-of-two p_align (4 MiB), 0x3000 skipped", 1,
	  { PH(0, p_align, 0x400000), PH(1, p_align, 0x3000), PH(2, p_align, 0x10000) }, 0,
	  { ET_DYN, 0x1000, 0, 0x3000, 0x40, 3, -1, 0, 0x100, 0x400000, 0, 1 } },
	{ "align: a non-power-of-two larger value is skipped", 1,
	  { PH(0, p_align, 0x10000), PH(1, p_align, 0x30000000) }, 0,
	  { ET_DYN, 0x1000, 0, 0x3000, 0x40, 3, -1, 0, 0x100, 0x10000, 0, 1 } },
	{ "align: an empty PT_LOAD counts (maximum_alignment looks at every PT_LOAD)", 1,
	  { EH(e_phnum, 5), PH(4, p_type, PT_LOAD), PH(4, p_align, 0x800000) }, 0,
	  { ET_DYN, 0x1000, 0, 0x3000, 0x40, 3, -1, 0, 0x100, 0x800000, 0, 1 } },
	{ "first_vaddr is the first PT_LOAD in table order, not the lowest", 1,
	  { PH(0, p_type, PT_NULL), PH(2, p_vaddr, 0x100), PH(2, p_offset, 0x100) }, 0,
	  { ET_DYN, 0x1000, 0, 0x2000, 0, 2, -1, 0, 0x100, 0x1000, 0x1000, 0 } },
	{ "two PT_INTERP: the first is used", 0,
	  { EH(e_phnum, 6), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0x300), PH(4, p_filesz, 28),
	    PH(5, p_type, PT_INTERP), PH(5, p_offset, 0x300), PH(5, p_filesz, 1) },
	  0, { ET_EXEC, 0x401000, 0x400000, 0x403000, 0x400040, 3, 4, 0, 0x100, 0x1000, 0x400000,
	       1 } },
};


static void test_phdr_good(void)
{
	for (size_t i = 0; i < TAP_N(ph_good_cases); i++) {
		const struct ph_good *c = &ph_good_cases[i];
		const struct elf_info *w = &c->want;
		struct img m;
		struct elf_info g;

		template(&m, c->dyn);
		apply(&m, c->p);
		memset(&g, 0x5a, sizeof(g));
		enum elf_err e = elf_check_phdrs(&m.eh, m.ph, c->fsize ? c->fsize : m.fsize, 0, &g);
		int same = e == ELF_OK && g.type == w->type && g.entry == w->entry && g.lo == w->lo &&
			   g.hi == w->hi && g.phdr_vaddr == w->phdr_vaddr && g.nload == w->nload &&
			   g.interp == w->interp && g.exec_stack == w->exec_stack &&
			   g.text_bytes == w->text_bytes && g.align == w->align &&
			   g.first_vaddr == w->first_vaddr && g.ordered == w->ordered;
		if (!ok(same, "elf_check_phdrs: %s%s: ELF_OK and info", c->dyn ? "ET_DYN: " : "",
			c->desc)) {
			diag("  result %s", ename(e));
			diag("  got  type %u entry %#lx lo %#lx hi %#lx phdr %#lx nload %u interp %d "
			     "xstack %d text %#lx align %#lx first %#lx ordered %d",
			     g.type, g.entry, g.lo, g.hi, g.phdr_vaddr, g.nload, g.interp,
			     g.exec_stack, g.text_bytes, g.align, g.first_vaddr, g.ordered);
			diag("  want type %u entry %#lx lo %#lx hi %#lx phdr %#lx nload %u interp %d "
			     "xstack %d text %#lx align %#lx first %#lx ordered %d",
			     w->type, w->entry, w->lo, w->hi, w->phdr_vaddr, w->nload, w->interp,
			     w->exec_stack, w->text_bytes, w->align, w->first_vaddr, w->ordered);
		}
	}
}

/* ---- elf_check_phdrs for an interpreter ---------------------------------- */

/* load_elf_interp() never looks at the interpreter's own PT_INTERP. */
static void test_phdr_interp_rules(void)
{
	static const struct patch bad_interp[] = {
		EH(e_phnum, 5), PH(4, p_type, PT_INTERP), PH(4, p_offset, 0x3000), PH(4, p_filesz, 1),
		{ 0, 0, 0, 0 },
	};
	struct img m;
	struct elf_info info;

	template(&m, 1);
	apply(&m, bad_interp);
	ok(elf_check_phdrs(&m.eh, m.ph, m.fsize, 0, &info) == ELF_BAD_INTERP,
	   "elf_check_phdrs: a program's broken PT_INTERP is refused");
	ok(elf_check_phdrs(&m.eh, m.ph, m.fsize, 1, &info) == ELF_OK && info.interp == -1,
	   "elf_check_phdrs: an interpreter's broken PT_INTERP is ignored");
	template(&m, 0);
	ok(elf_check_phdrs(&m.eh, m.ph, m.fsize, 1, &info) == ELF_OK && info.type == ET_EXEC,
	   "elf_check_phdrs: an ET_EXEC interpreter is accepted");
	template(&m, 1);
	m.ph[1].p_type = PT_NOTE;
	ok(elf_check_phdrs(&m.eh, m.ph, m.fsize, 1, &info) == ELF_BAD_ENTRY,
	   "elf_check_phdrs: an interpreter still needs an executable entry");
}

/* ---- elf_check_interp --------------------------------------------------- */

struct interp_case {
	const char *desc;
	const char *s;
	uint64_t len;
	enum elf_err want;
};

static const struct interp_case interp_cases[] = {
	{ "glibc's ld.so", "/lib64/ld-linux-x86-64.so.2", 28, ELF_OK },
	{ "one character and NUL", "a", 2, ELF_OK },
	{ "length 0", "", 0, ELF_BAD_INTERP },
	{ "just NUL", "", 1, ELF_BAD_INTERP },
	{ "two NULs (an empty path: open fails later, ENOENT)", "\0", 2, ELF_OK },
	{ "not NUL-terminated", "/lib64/ld", 9, ELF_BAD_INTERP },
	{ "NUL one byte past the end", "/lib64/ld", 8, ELF_BAD_INTERP },
	{ "NUL inside (the path ends there)", "/lib\0/ld", 9, ELF_OK },
	{ "NUL at the start", "\0/lib/ld", 9, ELF_OK },
	{ "NUL padding after the path (rewritten in place)", "/lib/ld\0\0\0\0", 12, ELF_OK },
};

static void test_interp(void)
{
	for (size_t i = 0; i < TAP_N(interp_cases); i++) {
		const struct interp_case *c = &interp_cases[i];
		/* A heap copy of exactly len bytes, so ASan catches reads past it. */
		char *s = malloc(c->len ? c->len : 1);

		memcpy(s, c->s, c->len);
		enum elf_err e = elf_check_interp(s, c->len);
		if (!ok(e == c->want, "elf_check_interp: %s -> %s", c->desc, ename(c->want)))
			diag("  got %s", ename(e));
		free(s);
	}
}

static void test_strings(void)
{
	int distinct = 1;

	for (int a = ELF_OK; a <= ELF_BAD_ENTRY; a++)
		for (int b = a + 1; b <= ELF_BAD_ENTRY; b++)
			if (strcmp(elf_err_str((enum elf_err)a), elf_err_str((enum elf_err)b)) == 0)
				distinct = 0;
	ok(distinct, "elf_err_str: every error has its own message");
	ok(strcmp(elf_err_str(ELF_TRUNCATED), "truncated ELF file") == 0,
	   "elf_err_str(ELF_TRUNCATED)");
	ok(strcmp(elf_err_str((enum elf_err)999), "unknown ELF error") == 0,
	   "elf_err_str: out-of-range value");
}

/* ---- notes ---------------------------------------------------------------- */

/* Appends one note (owner, type, desc) to b at *n, 4-byte aligned. */
static void put_note(unsigned char *b, size_t *n, const char *owner, uint32_t type, const void *desc,
		     uint32_t dlen)
{
	uint32_t h[3] = { (uint32_t)strlen(owner) + 1, dlen, type };
	memcpy(b + *n, h, 12);
	*n += 12;
	memcpy(b + *n, owner, h[0]);
	*n += (h[0] + 3) & ~3u;
	memcpy(b + *n, desc, dlen);
	*n += (dlen + 3) & ~3u;
}

static void test_notes(void)
{
	unsigned char b[256];
	size_t n = 0;
	const void *d;
	size_t dl;
	const char gnu[16] = "0123456789abcdef", ours[6] = "policy";

	memset(b, 0, sizeof(b));
	put_note(b, &n, "GNU", 3, gnu, 16);
	put_note(b, &n, "tiexec", 2, gnu, 5);
	put_note(b, &n, "tiexec", 1, ours, 6);
	ok(elf_note_find(b, n, "tiexec", 1, &d, &dl) == 0 && dl == 6 && memcmp(d, "policy", 6) == 0,
	   "elf_note_find: the third note, after another owner and another type");
	ok(elf_note_find(b, n, "GNU", 3, &d, &dl) == 0 && dl == 16 && d == b + 16,
	   "elf_note_find: the first note");
	ok(elf_note_find(b, n, "tiexe", 1, &d, &dl) == -1, "elf_note_find: an owner prefix does not match");
	ok(elf_note_find(b, n, "tiexec", 7, &d, &dl) == -1, "elf_note_find: no such type");
	ok(elf_note_find(b, n - 1, "tiexec", 1, &d, &dl) == -1,
	   "elf_note_find: the last note cut short is not found");
	ok(elf_note_find(b, 11, "GNU", 3, &d, &dl) == -1, "elf_note_find: less than a header");
	ok(elf_note_find(b, 0, "GNU", 3, &d, &dl) == -1, "elf_note_find: empty section");

	uint32_t huge[3] = { 0xfffffff0u, 0, 1 };
	memcpy(b, huge, 12);
	ok(elf_note_find(b, 64, "tiexec", 1, &d, &dl) == -1, "elf_note_find: namesz near 4 GiB");
	uint32_t huge_desc[3] = { 7, 0xfffffffdu, 1 };
	memcpy(b, huge_desc, 12);
	memcpy(b + 12, "tiexec", 7);
	ok(elf_note_find(b, 64, "tiexec", 1, &d, &dl) == -1,
	   "elf_note_find: descsz rounding past 4 GiB");
}

int main(void)
{
	test_notes();
	test_ehdr();
	test_ident();
	test_phdr_errors();
	test_phdr_good();
	test_phdr_interp_rules();
	test_interp();
	test_strings();
	return tap_done();
}
