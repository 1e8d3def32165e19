/* arm64: the address space -- the top of user space, the page geometry
 * and the brk's random range. */
#pragma once

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
