/* An image's mapped segments and dynamic section, read in memory before
 * its dynamic linker runs (origin.c, hookpoint.c). */
#include "image.h"

int image_holds(const struct image *im, uint64_t a, uint64_t n, int w)
{
	for (unsigned i = 0; i < im->nsegs; i++) {
		const struct seg *g = &im->segs[i];
		if (a >= g->vaddr && n <= g->memsz && a - g->vaddr <= g->memsz - n)
			return !w || (g->flags & PF_W);
	}
	return 0;
}

Elf64_Dyn *image_dynamic(const struct image *im, int w, size_t *nd)
{
	const Elf64_Phdr *dyn = NULL;

	for (unsigned i = 0; i < im->eh.e_phnum; i++)
		if (im->ph[i].p_type == PT_DYNAMIC)
			dyn = &im->ph[i];
	if (!dyn || dyn->p_memsz < sizeof(Elf64_Dyn))
		return NULL;
	uint64_t at = dyn->p_vaddr + im->bias, len = dyn->p_memsz - dyn->p_memsz % sizeof(Elf64_Dyn);
	if (!image_holds(im, at, len, w))
		return NULL;
	*nd = len / sizeof(Elf64_Dyn);
	return (Elf64_Dyn *)(uintptr_t)at;
}
