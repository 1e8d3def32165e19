/* What an image's notes say (see image.h): the GNU property that sets
 * the protection of its executable segments (arm64's BTI), and the policy
 * note tiexec-stamp adds. */
#include "image.h"

#include "arch_elf.h"
#include "mark.h"
#include "mem.h"
#include "sys.h"

/* The 4-byte value of GNU property `type` in a PT_GNU_PROPERTY note of
 * desc bytes (NT_GNU_PROPERTY_TYPE_0's: type, size, value padded to 8),
 * or 0. */
static uint32_t property_in(const unsigned char *d, uint64_t n, uint32_t type)
{
	for (uint64_t at = 0; at + 8 <= n;) {
		uint32_t t, sz;
		memcpy(&t, d + at, 4);
		memcpy(&sz, d + at + 4, 4);
		if (sz > n - at - 8)
			return 0;
		if (t == type && sz == 4) {
			uint32_t v;
			memcpy(&v, d + at + 8, 4);
			return v;
		}
		at += 8 + tx_up(sz, 8);
	}
	return 0;
}

uint32_t image_property(int fd, const Elf64_Ehdr *eh, const Elf64_Phdr *ph, uint32_t type)
{
	static unsigned char note[1024];

	for (unsigned i = 0; type && i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_GNU_PROPERTY)
			continue;
		uint64_t n = ph[i].p_filesz < sizeof(note) ? ph[i].p_filesz : sizeof(note);
		long r = sys_pread(fd, note, n, ph[i].p_offset);
		uint32_t namesz, descsz, nt;
		if (r < 16)
			return 0;
		memcpy(&namesz, note, 4);
		memcpy(&descsz, note + 4, 4);
		memcpy(&nt, note + 8, 4);
		if (namesz != 4 || memcmp(note + 12, "GNU", 4) || nt != NT_GNU_PROPERTY_TYPE_0 || descsz > (uint64_t)r - 16)
			return 0;
		return property_in(note + 16, descsz, type);
	}
	return 0;
}

int image_fd_exec_prot(int fd, unsigned long hwcap2)
{
	static Elf64_Phdr ph[32];
	Elf64_Ehdr eh;

	if (!ARCH_PROPERTY_TYPE || sys_pread(fd, &eh, sizeof(eh), 0) != (long)sizeof(eh) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 32)
		return 0;
	long n = (long)(eh.e_phnum * sizeof(Elf64_Phdr));
	if (sys_pread(fd, ph, (size_t)n, eh.e_phoff) != n)
		return 0;
	return arch_exec_prot(image_property(fd, &eh, ph, ARCH_PROPERTY_TYPE), hwcap2);
}

void image_exec_prot(struct image *im, int is_interp, unsigned long hwcap2)
{
	im->xprot = 0;
	if (ARCH_PROPERTY_TYPE && (is_interp || im->info.interp < 0))
		im->xprot = arch_exec_prot(image_property(im->fd, &im->eh, im->ph, ARCH_PROPERTY_TYPE), hwcap2);
}

/* The policy note of a marked program (common/mark.h), into note_o.  Reads
 * the section headers from the end (tiexec-stamp appends its section), at
 * most 32 at a time, and only notes of a sane size. */
const char *image_read_note(const struct image *im, struct opts *note_o)
{
	static Elf64_Shdr sh[32];
	static unsigned char nb[4096];
	const Elf64_Ehdr *eh = &im->eh;
	const char *why = "marked, but without a readable tiexec note: defaults";

	opts_default(note_o);
	if (eh->e_phoff != TIEXEC_MARK_PHOFF || !(im->ph[0].p_flags & TIEXEC_MARK_FLAG))
		return NULL;
	if (eh->e_shoff && eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shnum &&
	    eh->e_shnum < SHN_LORESERVE && eh->e_shoff <= im->size &&
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= im->size - eh->e_shoff) {
		for (unsigned end = eh->e_shnum; end > 0;) {
			unsigned start = end > 32 ? end - 32 : 0;
			size_t n = (end - start) * sizeof(Elf64_Shdr);
			if (sys_pread(im->fd, sh, n, eh->e_shoff + start * sizeof(Elf64_Shdr)) != (long)n)
				break;
			for (unsigned i = end - start; i-- > 0;) {
				const Elf64_Shdr *h = &sh[i];
				const void *desc;
				size_t dlen;
				if (h->sh_type != SHT_NOTE || !h->sh_size || h->sh_size > sizeof(nb) ||
				    h->sh_offset > im->size || h->sh_size > im->size - h->sh_offset ||
				    sys_pread(im->fd, nb, h->sh_size, h->sh_offset) != (long)h->sh_size ||
				    elf_note_find(nb, h->sh_size, TIEXEC_NOTE_OWNER, TIEXEC_NT_POLICY, &desc, &dlen))
					continue;
				switch (opts_note(note_o, desc, dlen)) {
				case OPT_NOTE_OK: return NULL;
				case OPT_NOTE_VERSION: why = "tiexec note of an unknown version: defaults"; break;
				default: why = "malformed tiexec note: defaults"; break;
				}
				opts_default(note_o);
				goto out;
			}
			end = start;
		}
	}
out:
	return why;
}
