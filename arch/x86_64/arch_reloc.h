/* x86-64: the ELF machine the loader runs, the one relocation it applies to
 * itself, the top of the user address space, and the page geometry. */
#pragma once

#include <elf.h>

#define ARCH_ELF_MACHINE EM_X86_64
#define ARCH_NAME "x86-64"
/* Debian's multiarch triplet: ld.so's built-in library directories are
 * /lib/TRIPLET and /usr/lib/TRIPLET there (warm/needed.c). */
#define ARCH_MULTIARCH "x86_64-linux-gnu"
/* glibc's dynamic linker, by its DT_SONAME (hookpoint.c). */
#define ARCH_LDSO_GLIBC "ld-linux-x86-64.so.2"
/* A static PIE's only dynamic relocation: base + addend (relocate_self). */
#define ARCH_R_RELATIVE R_X86_64_RELATIVE
/* Highest user address with 4-level paging (TASK_SIZE_MAX on x86-64). */
#define TX_USER_TOP 0x7ffffffff000ULL
/* Page geometry (common/geom.h): x86-64 has one base page, 4 KiB, and its
 * PMD maps 2 MiB (512 entries of 8 bytes in a page-table page: a PMD maps
 * page * page / 8 bytes, the same rule as arm64's). */
#define ARCH_PAGE_SIZE 4096ULL
#define ARCH_PAGE_MIN 4096ULL
#define ARCH_PAGE_MAX 4096ULL
#define ARCH_PMD_SIZE (2ULL << 20)
#define ARCH_PMD_OF(page) ((page) * (page) / 8)
/* arch_randomize_brk: the brk of a program starts up to 32 MiB past its
 * .bss (arch/x86/kernel/process.c, randomize_page(mm->brk, 0x02000000)). */
#define ARCH_BRK_RANDOM (32ULL << 20)
/* The GNU property (PT_GNU_PROPERTY) whose bits change how the kernel maps
 * a program's text, and the protection bits it adds: none on x86-64 (IBT
 * and shadow stacks are not mapping flags). */
#define ARCH_PROPERTY_TYPE 0
static inline int arch_exec_prot(unsigned bits, unsigned long hwcap2)
{
	(void)bits;
	(void)hwcap2;
	return 0;
}
