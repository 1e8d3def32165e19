/* x86-64: the address space -- the top of user space, the page geometry
 * and the brk's random range. */
#pragma once

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
