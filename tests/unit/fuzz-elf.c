/* libFuzzer harness for the loader's parsing of hostile input, under
 * AddressSanitizer and UBSan: whatever the bytes, neither a crash nor a read
 * out of bounds nor undefined behaviour.  Covers, on the same bytes, what the
 * loader runs on a program file (common/elfcheck.c: header, program headers,
 * the PT_INTERP path), on an interpreter file (the same header checks, the
 * interpreter's rules for its program headers), and on the contents of a
 * note section (elfcheck's elf_note_find, then interp/opts.c's opts_note on
 * the descriptor).  Run with scripts/fuzz; not part of ./scripts/test, which
 * runs the corpus instead. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfcheck.h"
#include "mark.h"
#include "opts.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

/* As image.c's read_headers: the header, then the table in a buffer of
 * its own; then, for a program, the PT_INTERP bytes in a buffer of exactly
 * their size (as read_file would hand them over). */
static void check_elf(const uint8_t *d, size_t n, int is_interp)
{
	static Elf64_Phdr ph[TX_PH_MAX];
	Elf64_Ehdr eh;
	struct elf_info info;

	if (elf_check_ehdr(d, n, n, &eh) != ELF_OK)
		return;
	/* elf_check_ehdr promised the table is inside the file. */
	memcpy(ph, d + eh.e_phoff, (size_t)eh.e_phnum * sizeof(Elf64_Phdr));
	if (elf_check_phdrs(&eh, ph, n, is_interp, &info) != ELF_OK || info.interp < 0)
		return;
	const Elf64_Phdr *ip = &ph[info.interp];
	char *s = malloc(ip->p_filesz);
	if (!s)
		return;
	memcpy(s, d + ip->p_offset, ip->p_filesz);
	elf_check_interp(s, ip->p_filesz);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	const void *desc;
	size_t dlen;
	struct opts o;

	/* A note section: tiexec's policy note, parsed as read_note does. */
	opts_default(&o);
	if (elf_note_find(d, n, TIEXEC_NOTE_OWNER, TIEXEC_NT_POLICY, &desc, &dlen) == 0)
		opts_note(&o, desc, dlen);
	/* The note parser on the raw bytes too, whatever elf_note_find says. */
	opts_default(&o);
	opts_note(&o, d, n);
	check_elf(d, n, 0);
	check_elf(d, n, 1);
	return 0;
}
