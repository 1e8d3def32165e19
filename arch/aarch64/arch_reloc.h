/* arm64: the ELF machine the loader runs, the one relocation it applies to
 * itself, the top of the user address space, and the page geometry. */
#pragma once

#include <elf.h>

#define ARCH_ELF_MACHINE EM_AARCH64
#define ARCH_NAME "arm64"
/* Debian's multiarch triplet: ld.so's built-in library directories are
 * /lib/TRIPLET and /usr/lib/TRIPLET there (warm/needed.c). */
#define ARCH_MULTIARCH "aarch64-linux-gnu"
/* glibc's dynamic linker, by its DT_SONAME (hookpoint.c). */
#define ARCH_LDSO_GLIBC "ld-linux-aarch64.so.1"
/* A static PIE's only dynamic relocation: base + addend (relocate_self). */
#define ARCH_R_RELATIVE R_AARCH64_RELATIVE
/* The top of the user address space with 48-bit virtual addresses
 * (TASK_SIZE_64 = 1 << VA_BITS; Debian's arm64 kernels have VA_BITS 48,
 * and a 52-bit space is only handed out to an mmap hint above it). */
#define TX_USER_TOP (1ULL << 48)
/* Page geometry (common/geom.h): arm64 kernels are built with 4, 16 or
 * 64 KiB base pages (Debian ships 4 and 16), so the page is read at run
 * time (ARCH_PAGE_VARIES: AT_PAGESZ).  A PMD maps page * page / 8 bytes
 * (a page of 8-byte entries): 2 MiB for 4 KiB pages, 32 MiB for 16 KiB,
 * 512 MiB for 64 KiB.  The placement piece is 2 MiB on all three: a PMD,
 * or a contiguous-PTE block (CONT_PTE_SHIFT: 16 x 4 KiB = 64 KiB, 128 x
 * 16 KiB = 2 MiB, 32 x 64 KiB = 2 MiB; arch/arm64/include/asm/
 * pgtable-hwdef.h), which is why 4 KiB kernels place on PMDs only. */
#define ARCH_PAGE_VARIES 1
#define ARCH_PAGE_SIZE 4096ULL
#define ARCH_PAGE_MIN 4096ULL
#define ARCH_PAGE_MAX 65536ULL
#define ARCH_PMD_SIZE (2ULL << 20)
#define ARCH_PMD_OF(page) ((page) * (page) / 8)
/* arch_randomize_brk: a 64-bit program's brk starts up to 1 GiB past its
 * .bss (arch/arm64/kernel/process.c, randomize_page(mm->brk, SZ_1G)). */
#define ARCH_BRK_RANDOM (1ULL << 30)
/* BTI: where an object's GNU property GNU_PROPERTY_AARCH64_FEATURE_1_AND
 * has GNU_PROPERTY_AARCH64_FEATURE_1_BTI and the CPU has BTI
 * (HWCAP2_BTI), the kernel maps the executable segments of the
 * interpreter, or of a program without one, PROT_BTI
 * (arch/arm64/kernel/process.c, arch_elf_adjust_prot); glibc's ld.so
 * does the same for the program and the libraries it maps.  mmap refuses
 * PROT_BTI on a CPU without BTI. */
#define ARCH_PROPERTY_TYPE 0xc0000000u /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
static inline int arch_exec_prot(unsigned bits, unsigned long hwcap2)
{
	return (bits & 1u) && (hwcap2 & (1UL << 17)) ? 0x10 /* PROT_BTI */ : 0;
}
