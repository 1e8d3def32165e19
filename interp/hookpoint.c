/* Where the stage after the dynamic linker gets control (see hookpoint.h). */
#include "hookpoint.h"

#include "image.h"
#include "rt.h"
#include "sys.h"

#define PREINIT_MAX 4096

/* The interpreter's DT_SONAME, read from its mapped image, or NULL. */
static const char *soname(const struct image *im)
{
	size_t nd;
	const Elf64_Dyn *d = image_dynamic(im, 0, &nd);
	struct strtab st;

	if (!d || !image_strtab(im, d, nd, &st))
		return NULL;
	for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL; i++)
		if (d[i].d_tag == DT_SONAME)
			return strtab_at(&st, d[i].d_un.d_val);
	return NULL;
}

/* Two entries of the program's dynamic section that may name tiexec's
 * array: its own DT_PREINIT_ARRAY and DT_PREINIT_ARRAYSZ; else two spare
 * DT_NULL slots after the terminator (GNU ld leaves some); else (lld
 * leaves none) DT_SYMENT and DT_RELACOUNT, which glibc's ld.so can do
 * without: the first is a constant it never reads, the second only
 * spares it a loop over the relative relocations it then processes one by
 * one.  All of them are put back by the hook. */
static void preinit(const struct image *pg, struct hookpoint *hp)
{
	size_t nd, end;
	Elf64_Dyn *d = image_dynamic(pg, 1, &nd), *arr = NULL, *size = NULL, *syment = NULL, *relacount = NULL;

	if (!d) {
		hp->why = "the program has no writable dynamic section for tiexec's hook";
		return;
	}
	for (end = 0; end < nd && d[end].d_tag != DT_NULL; end++) {
		if (d[end].d_tag == DT_PREINIT_ARRAY)
			arr = &d[end];
		else if (d[end].d_tag == DT_PREINIT_ARRAYSZ)
			size = &d[end];
		else if (d[end].d_tag == DT_SYMENT)
			syment = &d[end];
		else if (d[end].d_tag == DT_RELACOUNT)
			relacount = &d[end];
	}
	if (arr && size) {
		hp->norig = (unsigned)(size->d_un.d_val / 8);
		hp->orig = arr->d_un.d_ptr + pg->bias;
		if (size->d_un.d_val > PREINIT_MAX * 8 || hp->orig % 8 ||
		    !image_holds(pg, hp->orig, hp->norig * 8ULL, 0)) {
			hp->why = "the program's preinit array is not one tiexec can extend";
			return;
		}
	} else if (arr || size) {
		hp->why = "the program's preinit array is half described";
		return;
	} else if (end + 2 < nd && d[end + 1].d_tag == DT_NULL && d[end + 2].d_tag == DT_NULL) {
		arr = &d[end];
		size = &d[end + 1];
	} else if (syment && relacount) {
		arr = syment;
		size = relacount;
	} else {
		hp->why = "no entries in the program's dynamic section for tiexec's hook";
		return;
	}
	hp->kind = HOOK_PREINIT;
	hp->arr = arr;
	hp->size = size;
	hp->saved[0] = *arr;
	hp->saved[1] = *size;
	for (unsigned i = 0; i < pg->eh.e_phnum; i++) {
		if (pg->ph[i].p_type == PT_GNU_RELRO) {
			hp->relro_lo = pg->ph[i].p_vaddr + pg->bias;
			hp->relro_hi = hp->relro_lo + pg->ph[i].p_memsz;
		}
	}
}

void hookpoint_choose(const struct image *pg, const struct image *ip, struct hookpoint *hp)
{
	const char *so = soname(ip);

	memset(hp, 0, sizeof(*hp));
	if (so && tx_streq(so, ARCH_LDSO_GLIBC))
		preinit(pg, hp);
	else if (!so && tx_skip(tx_basename(ip->path), "ld-musl-"))
		hp->kind = HOOK_ENTRY;
	else
		hp->why = "a dynamic linker tiexec does not know (neither glibc's nor musl's)";
}

size_t hookpoint_len(const struct hookpoint *hp)
{
	return hp->kind == HOOK_PREINIT ? 8 * (1 + (size_t)hp->norig) : 0;
}

void hookpoint_install(const struct hookpoint *hp, uint64_t *buf, uint64_t final, uint64_t fn,
		       uint64_t bias)
{
	if (hp->kind != HOOK_PREINIT)
		return;
	buf[0] = fn;
	memset(buf + 1, 0, 8 * (size_t)hp->norig);
	hp->arr->d_tag = DT_PREINIT_ARRAY;
	hp->arr->d_un.d_ptr = final - bias;
	hp->size->d_tag = DT_PREINIT_ARRAYSZ;
	hp->size->d_un.d_val = hookpoint_len(hp);
}

void hookpoint_fill(const struct hookpoint *hp, uint64_t final)
{
	uint64_t *a = (uint64_t *)(uintptr_t)final;
	const uint64_t *o = (const uint64_t *)(uintptr_t)hp->orig;

	for (unsigned i = 0; i < hp->norig; i++)
		a[1 + i] = o[i];
}

/* The part of [lo, hi) in pages ld.so has made read-only: PT_GNU_RELRO
 * with both ends rounded down to a page, as glibc's _dl_protect_relro
 * does.  Empty (lo >= hi) when none is. */
static void relro_part(const struct hookpoint *hp, uint64_t *lo, uint64_t *hi)
{
	uint64_t ro_lo = tx_down(hp->relro_lo, TX_PAGE), ro_hi = tx_down(hp->relro_hi, TX_PAGE);

	*lo = *lo > ro_lo ? *lo : ro_lo;
	*hi = *hi < ro_hi ? *hi : ro_hi;
}

/* The two entries written back.  Read-only pages among theirs are made
 * writable around the writes and read-only again, once for both (they
 * share a page but for a .dynamic across a page boundary); any other page
 * is as the program's segment left it (image_dynamic took only a writable
 * one). */
void hookpoint_restore(const struct hookpoint *hp)
{
	if (hp->kind != HOOK_PREINIT)
		return;
	uint64_t a = (uint64_t)(uintptr_t)hp->arr, b = (uint64_t)(uintptr_t)hp->size;
	uint64_t lo = tx_down(a < b ? a : b, TX_PAGE);
	uint64_t hi = tx_up((a > b ? a : b) + sizeof(Elf64_Dyn), TX_PAGE);

	relro_part(hp, &lo, &hi);
	if (lo < hi && sys_mprotect(lo, hi - lo, PROT_READ | PROT_WRITE) < 0)
		return;
	*hp->arr = hp->saved[0];
	*hp->size = hp->saved[1];
	if (lo < hi)
		sys_mprotect(lo, hi - lo, PROT_READ);
}
