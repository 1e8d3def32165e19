/* libFuzzer harness for the loader's ELF validation (interp/elfcheck.c):
 * whatever the bytes, the checks must neither crash nor read out of bounds
 * (AddressSanitizer) nor hit undefined behaviour (UBSan).  Run with
 * scripts/fuzz; not part of ./scripts/test, which runs the corpus instead. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "elfcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static Elf64_Phdr ph[TX_PH_MAX];
	Elf64_Ehdr eh;
	struct elf_info info;
	const void *desc;
	size_t dlen;

	/* The loader reads the header from the start and the notes of a
	 * section: try both on the same bytes. */
	elf_note_find(d, n, "tiexec", 1, &desc, &dlen);
	if (elf_check_ehdr(d, n, n, &eh) != ELF_OK)
		return 0;
	/* elf_check_ehdr promised the table is inside the file. */
	memcpy(ph, d + eh.e_phoff, (size_t)eh.e_phnum * sizeof(Elf64_Phdr));
	if (elf_check_phdrs(&eh, ph, n, &info) == ELF_OK && info.interp >= 0) {
		const Elf64_Phdr *ip = &ph[info.interp];
		elf_check_interp((const char *)d + ip->p_offset, ip->p_filesz);
	}
	return 0;
}
