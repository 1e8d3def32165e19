/* An image's mapped segments, dynamic section and its string table, read
 * in memory before its dynamic linker runs (origin.c, hookpoint.c,
 * libplan.c). */
#include "image.h"
#include "rt.h"

/* Whether [a, a + n) lies in the readable part of segment g.  A segment
 * whose file bytes end past the end of the file (file_short) is readable
 * only as far as the file goes: a page wholly past it raises SIGBUS, which
 * a hostile program's dynamic section must not make tiexec take (ld.so
 * takes it then, as after a direct exec). */
static int seg_holds(const struct seg *g, uint64_t a, uint64_t n)
{
	uint64_t len = g->file_short ? g->filesz : g->memsz;

	return a >= g->vaddr && n <= len && a - g->vaddr <= len - n;
}

/* Whether segment g maps any page of [a, a + n). */
static int seg_touches(const struct seg *g, uint64_t a, uint64_t n)
{
	return tx_down(g->vaddr, TX_PAGE) < tx_up(a + n, TX_PAGE) &&
	       tx_down(a, TX_PAGE) < tx_up(g->vaddr + g->memsz, TX_PAGE);
}

/* In one segment, and in no page that a later one (mapped over it, in
 * table order) replaced. */
int image_holds(const struct image *im, uint64_t a, uint64_t n, int w)
{
	for (unsigned i = 0; i < im->nsegs; i++) {
		const struct seg *g = &im->segs[i];
		if (!seg_holds(g, a, n))
			continue;
		for (unsigned j = i + 1; j < im->nsegs; j++)
			if (seg_touches(&im->segs[j], a, n))
				return 0;
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
	/* Misaligned, it is not read here (ld.so may still read it). */
	if (at % _Alignof(Elf64_Dyn) || !image_holds(im, at, len, w))
		return NULL;
	*nd = len / sizeof(Elf64_Dyn);
	return (Elf64_Dyn *)(uintptr_t)at;
}

int image_strtab(const struct image *im, const Elf64_Dyn *d, size_t nd, struct strtab *st)
{
	st->at = st->size = 0;
	for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL; i++) {
		if (d[i].d_tag == DT_STRTAB)
			st->at = d[i].d_un.d_ptr + im->bias;
		else if (d[i].d_tag == DT_STRSZ)
			st->size = d[i].d_un.d_val;
	}
	return st->at && st->size && image_holds(im, st->at, st->size, 0);
}

const char *strtab_at(const struct strtab *st, uint64_t off)
{
	if (off >= st->size)
		return NULL;
	const char *s = (const char *)(uintptr_t)(st->at + off);
	return memchr(s, '\0', st->size - off) ? s : NULL;
}
