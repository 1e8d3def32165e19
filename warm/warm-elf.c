/* A program's or library's headers, read with libelf, and the whole 2 MiB
 * pieces of its read-only executable segments. */
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch_elf.h" /* ARCH_NAME */
#include "elfcheck.h"
#include "layout.h"
#include "needed.h"
#include "warm.h"

_Static_assert(sizeof(GElf_Ehdr) == sizeof(Elf64_Ehdr) && sizeof(GElf_Phdr) == sizeof(Elf64_Phdr),
	       "GElf's headers are ELF64's");

/* Reads fd's ELF and program headers into *e (with libelf); 0, or -1 with
 * *why when the file is not a program or shared library of the loader's
 * machine. */
int read_elf(int fd, struct elf *e, const char **why)
{
	unsigned char id[ELF_IDENT_BYTES];
	enum elf_err ident = pread(fd, id, sizeof(id), 0) == (ssize_t)sizeof(id) ? elf_check_ident(id, sizeof(id))
										   : ELF_NOT_ELF;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	size_t phnum = 0;
	int ret = -1;

	*why = ident == ELF_BAD_MACHINE ? "not an " ARCH_NAME " ELF file" : "not an ELF file";
	if (ident != ELF_OK)
		goto out;
	*why = "not an ELF file";
	elf = elf_begin(fd, ELF_C_READ, NULL); /* pread, only the headers: never the text */
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		goto out;
	*why = "not a program or shared library";
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		goto out;
	*why = "bad program headers";
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || elf_getphdrnum(elf, &phnum) != 0 ||
	    phnum > sizeof(e->ph) / sizeof(e->ph[0]))
		goto out;
	memcpy(&e->eh, &eh, sizeof(e->eh)); /* GElf_Ehdr is Elf64_Ehdr */
	e->eh.e_phnum = (Elf64_Half)phnum;
	for (size_t i = 0; i < phnum; i++)
		if (!gelf_getphdr(elf, (int)i, &e->ph[i]))
			goto out;
	ret = 0;
out:
	elf_end(elf);
	return ret;
}

/* The spans (file ranges of whole 2 MiB pieces of read-only executable
 * segments that can be PMD-mapped) of e, a file of size bytes; how many.
 * *incongruent: a segment is not congruent to its file offset. */
int elf_spans(const struct elf *e, uint64_t size, int program, struct span *sp, int *incongruent)
{
	const Elf64_Phdr *ph = e->ph;
	int n = 0;

	*incongruent = 0;
	for (unsigned i = 0; i < e->eh.e_phnum && n < MAX_SPANS; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) || (p->p_flags & PF_W))
			continue;
		if (p->p_offset > size || p->p_filesz > size - p->p_offset)
			continue; /* a mapping of it would fault (SIGBUS): no process runs it */
		/* A library's segment must be congruent to be PMD-mapped: ld.so
		 * places it at p_vaddr plus a 2 MiB-aligned base (libraries of
		 * 2 MiB or more).  A program's is placed congruent to its file
		 * by tiexec, whatever its p_vaddr (a direct exec of it gets
		 * small pages). */
		if (!layout_congruent(p->p_vaddr, p->p_offset)) {
			*incongruent = 1;
			if (!program)
				continue;
		}
		uint64_t lo, hi;
		layout_pieces(p->p_offset, p->p_filesz, &lo, &hi);
		if (lo < hi)
			sp[n++] = (struct span){ lo, hi };
	}
	return n;
}

/* The whole 2 MiB pieces at 2 MiB-aligned addresses of text segment p's
 * file data, [*lo, *hi) (empty when *hi <= *lo). */
void text_pieces(const Elf64_Phdr *p, uint64_t *lo, uint64_t *hi)
{
	layout_pieces(p->p_vaddr, p->p_filesz, lo, hi);
}

/* Bytes of file data in the executable segments: the text an entry holds;
 * *pieces: whole 2 MiB pieces of it at 2 MiB-aligned addresses. */
uint64_t text_bytes(const struct elf *e, uint64_t *pieces)
{
	const Elf64_Phdr *ph = e->ph;
	uint64_t n = 0;

	*pieces = 0;
	for (unsigned i = 0; i < e->eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			uint64_t lo, hi;
			text_pieces(&ph[i], &lo, &hi);
			n += ph[i].p_filesz;
			*pieces += hi > lo ? (hi - lo) / TX_HUGE : 0;
		}
	return n;
}

/* The largest p_align of e's PT_LOADs. */
static uint64_t load_align(const struct elf *e)
{
	uint64_t align = 0;

	for (unsigned i = 0; i < e->eh.e_phnum; i++)
		if (e->ph[i].p_type == PT_LOAD && e->ph[i].p_align > align)
			align = e->ph[i].p_align;
	return align;
}

int reserved_library(const struct elf *e)
{
	uint64_t align = load_align(e);

	return library(e) && align > TX_PAGE && align < TX_HUGE;
}

const char *unplaced_library(const struct elf *e, int fd, int planned, char *why, size_t n)
{
	if (planned || !reserved_library(e) || needed_musl(fd))
		return NULL;
	char a[24];
	snprintf(why, n,
		 "glibc's ld.so places it at its p_align (%s), 2 MiB-aligned about one start in %" PRIu64
		 ", unless tiexec plans it for a program: name the program",
		 geom_size(load_align(e), a, sizeof(a)), (uint64_t)(TX_HUGE / load_align(e)));
	return why;
}

/* A shared library: ET_DYN without PT_INTERP (a static PIE counts too). */
int library(const struct elf *e)
{
	if (e->eh.e_type != ET_DYN)
		return 0;
	for (unsigned i = 0; i < e->eh.e_phnum; i++)
		if (e->ph[i].p_type == PT_INTERP)
			return 0;
	return 1;
}
