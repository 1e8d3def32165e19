/* ELF validation: everything tiexec trusts about a program file is checked here.
 *
 * Pure functions over bytes already read: no system calls, no globals, so the
 * unit tests compile this file with a hosted libc and run it under ASan/UBSan.
 * The kernel's fs/binfmt_elf.c (Linux 6.18) is the specification: a file it
 * refuses we refuse, a file it runs we run.  The only extra refusals are of
 * files the kernel accepts but that cannot survive a direct exec (it kills the
 * process with SIGSEGV after the point of no return); elfcheck.c lists each
 * rule with the kernel check it mirrors.  Each failure has its own message,
 * which is what the user sees after "tiexec: 'PATH': ". */
#pragma once

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "arch_elf.h" /* ARCH_ELF_MACHINE */
#include "arch_mm.h"  /* TX_USER_TOP */
#include "geom.h"        /* TX_PAGE, TX_HUGE */

/* The kernel refuses program header tables larger than this (load_elf_phdrs;
 * measured on 6.18: 1170 entries run, 1171 give ENOEXEC). */
#define TX_PH_MAX_BYTES 65536
#define TX_PH_MAX (TX_PH_MAX_BYTES / sizeof(Elf64_Phdr))

enum elf_err {
	ELF_OK = 0,
	ELF_TRUNCATED,
	ELF_NOT_ELF,
	ELF_BAD_MACHINE,
	ELF_BAD_TYPE,
	ELF_BAD_PHENTSIZE,
	ELF_BAD_PHNUM,
	ELF_BAD_PHOFF,
	ELF_NO_LOAD,
	ELF_SEG_FILESZ,
	ELF_SEG_PAST_EOF,
	ELF_SEG_OFFSET,
	ELF_SEG_RANGE,
	ELF_SEG_CONGRUENCE,
	ELF_BAD_INTERP,
	ELF_BAD_ENTRY,
};

const char *elf_err_str(enum elf_err e);

/* What the loader needs to know about a validated program. */
struct elf_info {
	uint16_t type;         /* ET_EXEC or ET_DYN */
	uint64_t entry;        /* unrelocated */
	uint64_t lo, hi;       /* page-aligned [lo, hi) covering every PT_LOAD */
	/* Where the program headers are loaded, unrelocated: the kernel's
	 * phdr_addr (load_elf_binary), 0 when no PT_LOAD holds them.  AT_PHDR
	 * is phdr_vaddr + load bias in both cases, as the kernel passes it. */
	uint64_t phdr_vaddr;
	unsigned nload;        /* number of PT_LOAD with p_memsz > 0 */
	int interp;            /* index of the PT_INTERP the kernel uses (the first), or -1 */
	int exec_stack;        /* PT_GNU_STACK asks for an executable stack */
	uint64_t text_bytes;   /* sum of p_memsz over executable PT_LOADs */
	/* The kernel's maximum_alignment(): the largest power-of-two p_align
	 * of the PT_LOADs (others skipped), at least a page.  An ET_DYN
	 * program's first PT_LOAD is placed on a multiple of it (on address 0
	 * when it exceeds the address space, as the kernel does). */
	uint64_t align;
	uint64_t first_vaddr;  /* p_vaddr of the first PT_LOAD in table order */
	int ordered;           /* PT_LOADs ascend and do not overlap (a shared boundary page aside) */
};

/* Whether the first len bytes of a file (20 are enough) begin an ELF file
 * of this machine: ELF_OK; ELF_NOT_ELF (or too short to tell); or
 * ELF_BAD_MACHINE for another class, byte order or e_machine.  What the
 * tools ask before anything else (tiexec-stamp, tiexec-warm). */
#define ELF_IDENT_BYTES 20
enum elf_err elf_check_ident(const void *buf, size_t len);

/* The same for a file of any machine tiexec has a port for (arch:
 * x86-64, arm64), whatever machine asks: tiexec-stamp, so that a cross
 * build stamps its programs at build time.  The stamp is the same bytes on
 * every machine (mark.h); the binfmt_misc rule of the program's machine
 * matches it there. */
#define ELF_PORTS_NAME "an x86-64 or arm64 program"
enum elf_err elf_check_ident_ports(const void *buf, size_t len);

/* Checks the first bytes of a file (at least sizeof(Elf64_Ehdr) for success)
 * and copies the header out. */
enum elf_err elf_check_ehdr(const void *buf, size_t len, uint64_t file_size, Elf64_Ehdr *eh);

/* Checks the program header table (eh->e_phnum entries) against the file
 * size and fills *info.  is_interp: the table of an interpreter, whose own
 * PT_INTERP the kernel ignores (load_elf_interp), as it ignores the
 * interpreter's p_align.  Segments may overlap and come in any order: the
 * kernel maps them in table order, a later one replacing an earlier one. */
enum elf_err elf_check_phdrs(const Elf64_Ehdr *eh, const Elf64_Phdr *ph, uint64_t file_size,
			     int is_interp, struct elf_info *info);

/* Checks the PT_INTERP bytes as the kernel does: at least 2 bytes, the last
 * one NUL.  The path is what precedes the first NUL (an interpreter
 * rewritten in place is followed by NUL padding). */
enum elf_err elf_check_interp(const char *s, uint64_t len);

/* Finds the ELF note with this owner and type among the notes in buf (the
 * contents of one SHT_NOTE section, 4-byte aligned entries).  Returns 0 and
 * the descriptor's place, or -1 if there is none or the notes are
 * malformed (an entry running past the end). */
int elf_note_find(const void *buf, size_t len, const char *owner, uint32_t type, const void **desc,
		  size_t *desclen);
