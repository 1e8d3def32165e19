/* ELF validation against the rules of the kernel's fs/binfmt_elf.c (6.18).
 *
 * What the kernel refuses before the point of no return (begin_new_exec),
 * so that execve fails with an error, we refuse with a message:
 *
 *   ours                      kernel (load_elf_binary / load_elf_phdrs)
 *   ELF_NOT_ELF               memcmp(e_ident, ELFMAG)              ENOEXEC
 *   ELF_BAD_TYPE              e_type not ET_EXEC/ET_DYN            ENOEXEC
 *   ELF_BAD_MACHINE           elf_check_arch: e_machine            ENOEXEC
 *   ELF_BAD_PHENTSIZE         e_phentsize != sizeof(elf_phdr)      ENOEXEC
 *   ELF_BAD_PHNUM             size 0 or > 64 KiB (1170 of them)    ENOEXEC
 *   ELF_BAD_PHOFF             elf_read() of the table short        EIO
 *   ELF_BAD_INTERP            first PT_INTERP: p_filesz < 2 or > PATH_MAX
 *                             (ENOEXEC), short read (EIO), last byte not
 *                             NUL (ENOEXEC)
 *   ELF_TRUNCATED             a file shorter than the ELF header: the kernel
 *                             zero-fills bprm->buf, so e_phentsize or the
 *                             table read fails (or nothing loads: killed)
 *
 * The interpreter gets the same header checks (the kernel's: magic,
 * elf_check_arch, load_elf_phdrs; ELIBBAD), and its PT_INTERP is ignored.
 * The kernel checks neither EI_CLASS, EI_DATA nor EI_VERSION: a file with
 * the wrong ones runs (measured), so we do not look at them either.
 *
 * What the kernel accepts but kills the process for after the point of no
 * return (SIGSEGV; the direct exec fails too), we refuse instead of
 * crashing:
 *
 *   ELF_SEG_FILESZ            p_filesz > p_memsz: EINVAL in the map loop
 *   ELF_SEG_RANGE             BAD_ADDR(p_vaddr), p_memsz > TASK_SIZE,
 *                             TASK_SIZE - p_memsz < p_vaddr: EINVAL
 *   ELF_SEG_CONGRUENCE        p_vaddr - p_offset not a page multiple with file
 *                             bytes to map: elf_map's mmap() gets an
 *                             unaligned offset, EINVAL
 *   ELF_SEG_OFFSET            p_offset + p_filesz beyond what mmap() takes
 *                             (file_mmap_ok: EOVERFLOW)
 *   ELF_SEG_PAST_EOF          a writable segment with .bss whose last file
 *                             page lies wholly past EOF: padzero() faults,
 *                             EFAULT (a read-only one is fine: its padzero
 *                             error is ignored, and mapping past EOF is
 *                             allowed; touching such pages gives SIGBUS,
 *                             directly or through us)
 *   ELF_NO_LOAD               no PT_LOAD with bytes: total_mapping_size() 0
 *                             (ET_DYN, interpreter: EINVAL), or an ET_EXEC
 *                             entry into nothing
 *   ELF_BAD_ENTRY             e_entry in no executable page of a PT_LOAD: the
 *                             first instruction fetch faults
 *
 * Accepted as the kernel accepts them: p_align that is not a power of two
 * (maximum_alignment() skips it), segments out of order or overlapping (mapped
 * in table order, later wins; the span is min..max, total_mapping_size()),
 * p_filesz past EOF, a second PT_INTERP (only the first is read), ET_EXEC at
 * address 0 and an ET_DYN p_align beyond the address space, which puts the
 * first segment on address 0 (mmap_min_addr decides at map time, root may
 * map page 0: measured), an ET_EXEC or
 * PT_INTERP-carrying interpreter (load_elf_interp takes ET_EXEC and ET_DYN
 * and never looks at the interpreter's PT_INTERP). */
#include "elfcheck.h"

#include <linux/limits.h> /* PATH_MAX */
#include <string.h>

const char *elf_err_str(enum elf_err e)
{
	switch (e) {
	case ELF_OK: return "no error";
	case ELF_TRUNCATED: return "truncated ELF file";
	case ELF_NOT_ELF: return "not an ELF file";
	case ELF_BAD_MACHINE: return "not an " ARCH_NAME " program";
	case ELF_BAD_TYPE: return "not an executable (ELF type is neither EXEC nor DYN)";
	case ELF_BAD_PHENTSIZE: return "bad program header entry size";
	case ELF_BAD_PHNUM: return "bad number of program headers";
	case ELF_BAD_PHOFF: return "program headers outside the file";
	case ELF_NO_LOAD: return "no loadable segment";
	case ELF_SEG_FILESZ: return "segment file size larger than its memory size";
	case ELF_SEG_PAST_EOF: return "writable segment with .bss ends past the end of the file";
	case ELF_SEG_OFFSET: return "segment file offset out of range";
	case ELF_SEG_RANGE: return "segment outside the user address space";
	case ELF_SEG_CONGRUENCE: return "segment address and file offset differ modulo the page size";
	case ELF_BAD_INTERP: return "bad interpreter path (PT_INTERP)";
	case ELF_BAD_ENTRY: return "entry point outside the executable segments";
	default: return "unknown ELF error";
	}
}

enum elf_err elf_check_ident(const void *buf, size_t len)
{
	const unsigned char *b = buf;

	if (len < ELF_IDENT_BYTES || memcmp(b, ELFMAG, SELFMAG) != 0)
		return ELF_NOT_ELF;
	if (b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB ||
	    (unsigned)(b[18] | b[19] << 8) != ARCH_ELF_MACHINE) /* e_machine, little-endian */
		return ELF_BAD_MACHINE;
	return ELF_OK;
}

enum elf_err elf_check_ident_ports(const void *buf, size_t len)
{
	const unsigned char *b = buf;
	unsigned m = len >= ELF_IDENT_BYTES ? (unsigned)(b[18] | b[19] << 8) : 0;

	if (len < ELF_IDENT_BYTES || memcmp(b, ELFMAG, SELFMAG) != 0)
		return ELF_NOT_ELF;
	if (b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB || (m != EM_X86_64 && m != EM_AARCH64))
		return ELF_BAD_MACHINE;
	return ELF_OK;
}

enum elf_err elf_check_ehdr(const void *buf, size_t len, uint64_t file_size, Elf64_Ehdr *eh)
{
	const unsigned char *b = buf;

	if (len < SELFMAG || memcmp(b, ELFMAG, SELFMAG) != 0)
		return len && len < SELFMAG && memcmp(b, ELFMAG, len) == 0 ? ELF_TRUNCATED : ELF_NOT_ELF;
	if (len < sizeof(*eh) || file_size < sizeof(*eh))
		return ELF_TRUNCATED;
	memcpy(eh, b, sizeof(*eh));
	/* The kernel's order: type, arch, then load_elf_phdrs. */
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return ELF_BAD_TYPE;
	if (eh->e_machine != ARCH_ELF_MACHINE)
		return ELF_BAD_MACHINE;
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return ELF_BAD_PHENTSIZE;
	/* PN_XNUM (0xffff) is too large, as for the kernel. */
	if (eh->e_phnum == 0 || eh->e_phnum > TX_PH_MAX)
		return ELF_BAD_PHNUM;
	uint64_t phsize = (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr);
	if (eh->e_phoff > file_size || phsize > file_size - eh->e_phoff)
		return ELF_BAD_PHOFF;
	return ELF_OK;
}

static int is_pow2(uint64_t x)
{
	return x && (x & (x - 1)) == 0;
}

/* One PT_LOAD: the checks whose failure would kill a direct exec. */
static enum elf_err check_load(const Elf64_Phdr *p, uint64_t file_size)
{
	if (p->p_filesz > p->p_memsz)
		return ELF_SEG_FILESZ;
	/* BAD_ADDR(k) and the TASK_SIZE checks apply to every PT_LOAD, even
	 * an empty one. */
	if (p->p_vaddr >= TX_USER_TOP || p->p_memsz > TX_USER_TOP - p->p_vaddr)
		return ELF_SEG_RANGE;
	if (!p->p_filesz)
		return ELF_OK; /* elf_load() maps no file bytes for it */
	if ((p->p_vaddr - p->p_offset) % TX_PAGE)
		return ELF_SEG_CONGRUENCE;
	if (p->p_offset > (uint64_t)INT64_MAX - p->p_filesz - TX_PAGE)
		return ELF_SEG_OFFSET;
	uint64_t fend = p->p_offset + p->p_filesz;
	if ((p->p_flags & PF_W) && p->p_memsz > p->p_filesz && fend % TX_PAGE &&
	    (fend & -TX_PAGE) >= file_size)
		return ELF_SEG_PAST_EOF;
	return ELF_OK;
}

enum elf_err elf_check_phdrs(const Elf64_Ehdr *eh, const Elf64_Phdr *ph, uint64_t file_size,
			     int is_interp, struct elf_info *info)
{
	uint64_t prev_end = 0, align = 0;
	int entry_ok = 0, any_load = 0;

	memset(info, 0, sizeof(*info));
	info->type = eh->e_type;
	info->entry = eh->e_entry;
	info->interp = -1;
	info->ordered = 1;

	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];

		if (p->p_type == PT_INTERP && !is_interp && info->interp < 0) {
			if (p->p_filesz < 2 || p->p_filesz > PATH_MAX || p->p_offset > file_size ||
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
		enum elf_err e = check_load(p, file_size);
		if (e != ELF_OK)
			return e;
		if (!any_load)
			info->first_vaddr = p->p_vaddr;
		any_load = 1;
		if (is_pow2(p->p_align) && p->p_align > align)
			align = p->p_align;
		/* load_elf_binary's phdr_addr: the (last) PT_LOAD whose file
		 * bytes hold the start of the program header table. */
		if (eh->e_phoff >= p->p_offset && eh->e_phoff - p->p_offset < p->p_filesz)
			info->phdr_vaddr = p->p_vaddr + (eh->e_phoff - p->p_offset);
		if (p->p_memsz == 0)
			continue;

		uint64_t start = p->p_vaddr & -TX_PAGE;
		uint64_t end = (p->p_vaddr + p->p_memsz + TX_PAGE - 1) & -TX_PAGE;
		if (end > TX_USER_TOP)
			return ELF_SEG_RANGE;
		if (!info->nload || start < info->lo)
			info->lo = start;
		if (end > info->hi)
			info->hi = end;
		/* Neighbours may share the page where one ends and the next
		 * begins, but never bytes; anything else is "unordered". */
		if (info->nload && p->p_vaddr < prev_end)
			info->ordered = 0;
		prev_end = p->p_vaddr + p->p_memsz;
		info->nload++;

		if (p->p_flags & PF_X) {
			info->text_bytes += p->p_memsz;
			if (eh->e_entry >= start && eh->e_entry < end)
				entry_ok = 1;
		}
	}
	if (!info->nload)
		return ELF_NO_LOAD;
	/* ELF_PAGEALIGN(alignment): at least a page. */
	info->align = align > TX_PAGE ? align : TX_PAGE;
	if (!entry_ok)
		return ELF_BAD_ENTRY;
	return ELF_OK;
}

enum elf_err elf_check_interp(const char *s, uint64_t len)
{
	if (len < 2 || s[len - 1] != '\0')
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
