#include "elfcheck.h"

#include <string.h>

const char *elf_err_str(enum elf_err e)
{
	switch (e) {
	case ELF_OK: return "no error";
	case ELF_TRUNCATED: return "truncated ELF file";
	case ELF_NOT_ELF: return "not an ELF file";
	case ELF_BAD_CLASS: return "not a 64-bit ELF file";
	case ELF_BAD_DATA: return "not a little-endian ELF file";
	case ELF_BAD_VERSION: return "unknown ELF version";
	case ELF_BAD_MACHINE: return "not an x86-64 program";
	case ELF_BAD_TYPE: return "not an executable (ELF type is neither EXEC nor DYN)";
	case ELF_BAD_PHENTSIZE: return "bad program header entry size";
	case ELF_BAD_PHNUM: return "bad number of program headers";
	case ELF_BAD_PHOFF: return "program headers outside the file";
	case ELF_NO_LOAD: return "no loadable segment";
	case ELF_SEG_FILESZ: return "segment file size larger than its memory size";
	case ELF_SEG_PAST_EOF: return "segment extends past the end of the file";
	case ELF_SEG_RANGE: return "segment outside the user address space";
	case ELF_SEG_CONGRUENCE: return "segment address and file offset differ modulo the page size";
	case ELF_SEG_ALIGN: return "segment alignment is not a power of two";
	case ELF_SEG_OVERLAP: return "segments overlap or are out of order";
	case ELF_BAD_INTERP: return "bad interpreter path (PT_INTERP)";
	case ELF_TWO_INTERP: return "more than one interpreter (PT_INTERP)";
	case ELF_BAD_ENTRY: return "entry point outside the executable segments";
	default: return "unknown ELF error";
	}
}

enum elf_err elf_check_ehdr(const void *buf, size_t len, uint64_t file_size, Elf64_Ehdr *eh)
{
	const unsigned char *b = buf;

	if (len < SELFMAG || memcmp(b, ELFMAG, SELFMAG) != 0)
		return len && len < SELFMAG && memcmp(b, ELFMAG, len) == 0 ? ELF_TRUNCATED : ELF_NOT_ELF;
	if (len < EI_NIDENT || file_size < EI_NIDENT)
		return ELF_TRUNCATED;
	if (b[EI_CLASS] != ELFCLASS64)
		return ELF_BAD_CLASS;
	if (b[EI_DATA] != ELFDATA2LSB)
		return ELF_BAD_DATA;
	if (b[EI_VERSION] != EV_CURRENT)
		return ELF_BAD_VERSION;
	if (len < sizeof(*eh) || file_size < sizeof(*eh))
		return ELF_TRUNCATED;
	memcpy(eh, b, sizeof(*eh));
	if (eh->e_machine != EM_X86_64)
		return ELF_BAD_MACHINE;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return ELF_BAD_TYPE;
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return ELF_BAD_PHENTSIZE;
	/* PN_XNUM (0xffff) means "count in section 0"; the kernel does not
	 * support it for executables and neither do we. */
	if (eh->e_phnum == 0 || eh->e_phnum > TX_PH_MAX)
		return ELF_BAD_PHNUM;
	uint64_t phsize = (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr);
	if (eh->e_phoff > file_size || phsize > file_size - eh->e_phoff)
		return ELF_BAD_PHOFF;
	return ELF_OK;
}

static int is_pow2(uint64_t x)
{
	return (x & (x - 1)) == 0;
}

enum elf_err elf_check_phdrs(const Elf64_Ehdr *eh, const Elf64_Phdr *ph, uint64_t file_size,
			     struct elf_info *info)
{
	uint64_t prev_end = 0;
	int entry_ok = 0;

	memset(info, 0, sizeof(*info));
	info->type = eh->e_type;
	info->entry = eh->e_entry;
	info->interp = -1;

	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];

		if (p->p_type == PT_INTERP) {
			if (info->interp >= 0)
				return ELF_TWO_INTERP;
			if (p->p_filesz < 2 || p->p_filesz > 4096 || p->p_offset > file_size ||
			    p->p_filesz > file_size - p->p_offset)
				return ELF_BAD_INTERP;
			info->interp = (int)i;
			continue;
		}
		if (p->p_type == PT_GNU_STACK) {
			info->exec_stack = (p->p_flags & PF_X) != 0;
			continue;
		}
		if (p->p_type != PT_LOAD)
			continue;
		if (p->p_filesz > p->p_memsz)
			return ELF_SEG_FILESZ; /* the kernel refuses it even when empty */
		if (p->p_memsz == 0)
			continue;
		if (p->p_offset > file_size || p->p_filesz > file_size - p->p_offset)
			return ELF_SEG_PAST_EOF;
		if (p->p_vaddr >= TX_USER_TOP || p->p_memsz > TX_USER_TOP - p->p_vaddr)
			return ELF_SEG_RANGE;
		if (!is_pow2(p->p_align))
			return ELF_SEG_ALIGN;
		if ((p->p_vaddr - p->p_offset) % TX_PAGE)
			return ELF_SEG_CONGRUENCE;
		/* Neighbours may share the page where one ends and the next
		 * begins (the later mapping wins, as in the kernel), but never
		 * bytes. */
		if (info->nload && p->p_vaddr < prev_end)
			return ELF_SEG_OVERLAP;

		uint64_t start = p->p_vaddr & -TX_PAGE;
		uint64_t end = (p->p_vaddr + p->p_memsz + TX_PAGE - 1) & -TX_PAGE;
		if (end > TX_USER_TOP)
			return ELF_SEG_RANGE;
		if (!info->nload)
			info->lo = start;
		info->hi = end;
		prev_end = p->p_vaddr + p->p_memsz;
		info->nload++;

		if (p->p_flags & PF_X) {
			info->text_bytes += p->p_memsz;
			if (eh->e_entry >= p->p_vaddr && eh->e_entry - p->p_vaddr < p->p_memsz)
				entry_ok = 1;
		}
		/* The kernel's rule for AT_PHDR: the (last) loaded segment
		 * whose file bytes hold the program header table. */
		if (eh->e_phoff >= p->p_offset && eh->e_phoff - p->p_offset < p->p_filesz)
			info->phdr_vaddr = p->p_vaddr + (eh->e_phoff - p->p_offset);
	}
	if (!info->nload)
		return ELF_NO_LOAD;
	if (info->type == ET_EXEC && info->lo < TX_PAGE)
		return ELF_SEG_RANGE;
	if (!entry_ok)
		return ELF_BAD_ENTRY;
	return ELF_OK;
}

enum elf_err elf_check_interp(const char *s, uint64_t len)
{
	if (len < 2 || s[len - 1] != '\0' || memchr(s, '\0', len - 1) != NULL)
		return ELF_BAD_INTERP;
	return ELF_OK;
}

int elf_note_find(const void *buf, size_t len, const char *owner, uint32_t type, const void **desc,
		  size_t *desclen)
{
	const unsigned char *b = buf;
	size_t olen = strlen(owner) + 1;

	for (size_t at = 0; len - at >= 12 && at <= len;) {
		uint32_t h[3];
		memcpy(h, b + at, sizeof(h));
		size_t name = at + 12;
		size_t namesz = ((size_t)h[0] + 3) & ~(size_t)3;
		if (h[0] > len || namesz > len - name)
			return -1;
		size_t d = name + namesz;
		size_t descsz = ((size_t)h[1] + 3) & ~(size_t)3;
		if (h[1] > len || descsz > len - d)
			return -1;
		if (h[2] == type && h[0] == olen && memcmp(b + name, owner, olen) == 0) {
			*desc = b + d;
			*desclen = h[1];
			return 0;
		}
		at = d + descsz;
	}
	return -1;
}
