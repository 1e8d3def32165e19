/* ELF validation: everything tiexec trusts about a program file is checked here.
 *
 * Pure functions over bytes already read: no system calls, no globals, so the
 * unit tests compile this file with a hosted libc and run it under ASan/UBSan.
 * Each check mirrors one the kernel's binfmt_elf makes (or should make) before
 * it maps anything, and each failure has its own message, which is what the
 * user sees after "tiexec: 'PATH': ". */
#pragma once

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#define TX_PAGE 4096ULL
#define TX_HUGE (2ULL << 20)
/* The kernel refuses program header tables larger than this (load_elf_phdrs). */
#define TX_PH_MAX_BYTES 65536
#define TX_PH_MAX (TX_PH_MAX_BYTES / sizeof(Elf64_Phdr))
/* Highest user address with 4-level paging (TASK_SIZE_MAX on x86-64). */
#define TX_USER_TOP 0x7ffffffff000ULL

enum elf_err {
	ELF_OK = 0,
	ELF_TRUNCATED,
	ELF_NOT_ELF,
	ELF_BAD_CLASS,
	ELF_BAD_DATA,
	ELF_BAD_VERSION,
	ELF_BAD_MACHINE,
	ELF_BAD_TYPE,
	ELF_BAD_PHENTSIZE,
	ELF_BAD_PHNUM,
	ELF_BAD_PHOFF,
	ELF_NO_LOAD,
	ELF_SEG_FILESZ,
	ELF_SEG_PAST_EOF,
	ELF_SEG_RANGE,
	ELF_SEG_CONGRUENCE,
	ELF_SEG_ALIGN,
	ELF_SEG_OVERLAP,
	ELF_BAD_INTERP,
	ELF_TWO_INTERP,
	ELF_BAD_ENTRY,
};

const char *elf_err_str(enum elf_err e);

/* What the loader needs to know about a validated program. */
struct elf_info {
	uint16_t type;         /* ET_EXEC or ET_DYN */
	uint64_t entry;        /* unrelocated */
	uint64_t lo, hi;       /* page-aligned [lo, hi) covering every PT_LOAD */
	uint64_t phdr_vaddr;   /* where the program headers are loaded, 0 if nowhere */
	unsigned nload;        /* number of PT_LOAD with p_memsz > 0 */
	int interp;            /* index of PT_INTERP, or -1 */
	int exec_stack;        /* PT_GNU_STACK asks for an executable stack */
	uint64_t text_bytes;   /* sum of p_memsz over executable PT_LOADs */
};

/* Checks the first bytes of a file (at least sizeof(Elf64_Ehdr) for success)
 * and copies the header out. */
enum elf_err elf_check_ehdr(const void *buf, size_t len, uint64_t file_size, Elf64_Ehdr *eh);

/* Checks the program header table (eh->e_phnum entries) against the file
 * size and fills *info.  Segments must be in ascending order and must not
 * overlap, except that neighbours may share the page at their boundary. */
enum elf_err elf_check_phdrs(const Elf64_Ehdr *eh, const Elf64_Phdr *ph, uint64_t file_size,
			     struct elf_info *info);

/* Checks the PT_INTERP bytes: non-empty, NUL-terminated exactly at the end,
 * no NUL before it. */
enum elf_err elf_check_interp(const char *s, uint64_t len);

/* Finds the ELF note with this owner and type among the notes in buf (the
 * contents of one SHT_NOTE section, 4-byte aligned entries).  Returns 0 and
 * the descriptor's place, or -1 if there is none or the notes are
 * malformed (an entry running past the end). */
int elf_note_find(const void *buf, size_t len, const char *owner, uint32_t type, const void **desc,
		  size_t *desclen);
