/* arm64: making text that user space wrote fit to run.  The instruction
 * cache is not coherent with data stores: bytes written through one
 * mapping must be cleaned from the data cache to the point of
 * unification (dc cvau) and the instruction cache invalidated (ic ivau)
 * before any mapping of them executes.  The kernel does this itself when
 * it maps a page executable whose contents changed through a kernel write
 * (write(2), a page-cache fill: PG_dcache_clean is clear) and for a fresh
 * anonymous page, but not for stores user space makes into a page it
 * already holds; tiexec does it after every store of text it makes
 * (huge.c's copies, final.c's anonymous final page), so that no path
 * depends on which of those the kernel covers.  CTR_EL0 (readable at EL0
 * on Linux) says which steps the CPU needs (IDC, DIC) and the line
 * sizes.  TCG does not model caches: no test under qemu can catch a
 * missing step. */
#pragma once

#include <stdint.h>

static inline void arch_sync_icache(uint64_t lo, uint64_t len)
{
	uint64_t ctr, hi = lo + len;

	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	uint64_t dline = 4ULL << ((ctr >> 16) & 15), iline = 4ULL << (ctr & 15);
	if (!((ctr >> 28) & 1)) /* IDC: no clean to PoU needed */
		for (uint64_t a = lo & -dline; a < hi; a += dline)
			__asm__ volatile("dc cvau, %0" ::"r"(a) : "memory");
	__asm__ volatile("dsb ish" ::: "memory");
	if (!((ctr >> 29) & 1)) /* DIC: no invalidation needed */
		for (uint64_t a = lo & -iline; a < hi; a += iline)
			__asm__ volatile("ic ivau, %0" ::"r"(a) : "memory");
	__asm__ volatile("dsb ish\n\tisb" ::: "memory");
}
