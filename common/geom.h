/* Page geometry: the size of a base page, of the placement piece, and of a
 * PMD, as the running kernel has them.
 *
 * TX_HUGE is the placement piece, 2 MiB on every kernel: the unit of the
 * loader's per-piece bookkeeping and of the text cache's layout.  Where
 * the base page is 4 KiB a PMD maps it; where it is 16 or 64 KiB (arm64)
 * a PMD is 32 or 512 MiB and a piece is a contiguous-PTE block (contpte:
 * 128 or 32 entries the MMU caches as one), mapped so when it is one
 * aligned run of one large folio.  struct geom says which.
 *
 * TX_PAGE is the kernel's base page.  Where an arch has one size
 * (x86-64) it is a constant; where its kernels choose (arm64:
 * ARCH_PAGE_VARIES) it is the process's AT_PAGESZ, set once by
 * tx_page_set before anything is mapped -- the loader from its own auxv,
 * a tool from sysconf -- and read everywhere after: the one process-wide
 * fact outside struct exec, as the kernel's PAGE_SIZE is (musl's loader
 * does the same with libc.page_size).  ARCH_PAGE_MIN and ARCH_PAGE_MAX
 * bound it, for arrays.
 *
 * geom_read asks the kernel for the PMD: transparent_hugepage/
 * hpage_pmd_size (Linux 4.19), else the arch's rule for the base page. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "arch_mm.h" /* ARCH_PAGE_*, ARCH_PMD_SIZE, ARCH_PMD_OF */

#define TX_HUGE ARCH_PMD_SIZE
#ifdef ARCH_PAGE_VARIES
#define TX_PAGE tx_page()
#else
#define TX_PAGE ARCH_PAGE_SIZE
#endif

/* Sets the base page from AT_PAGESZ or sysconf; a value that is not a
 * power of two within [ARCH_PAGE_MIN, ARCH_PAGE_MAX] leaves the arch's
 * default.  Returns the page now in force. */
uint64_t tx_page_set(uint64_t page);
/* The base page in force (ARCH_PAGE_SIZE until tx_page_set). */
uint64_t tx_page(void);

struct geom {
	uint64_t page; /* bytes of a base page */
	uint64_t pmd;  /* bytes of a PMD mapping: TX_HUGE, or a multiple of it */
};

/* The kernel's geometry: page is AT_PAGESZ or sysconf(_SC_PAGESIZE) (0 when
 * unknown: the arch's default).  Reads sysfs with raw system calls. */
void geom_read(struct geom *g, uint64_t page);
/* 1 when this build can place text for the kernel's geometry: the base
 * page is TX_PAGE, and a PMD is TX_HUGE (pieces on PMDs) or a multiple of
 * it with pieces that are contiguous-PTE blocks (geom_blocks). */
int geom_fits(const struct geom *g);
/* 1 when a piece is a contiguous-PTE block rather than a PMD (a PMD
 * larger than a piece: arm64 with 16 or 64 KiB pages). */
int geom_blocks(const struct geom *g);
/* The MAP_HUGE_* / MFD_HUGE_* bits asking hugetlbfs for PMD-sized pages:
 * log2(pmd) << 26. */
uint64_t geom_hugetlb_flag(const struct geom *g);
/* The mTHP directory of a folio size under transparent_hugepage/, such as
 * "hugepages-<size in kB>kB/", into buf[n]; returns buf. */
char *geom_mthp_dir(uint64_t size, char *buf, size_t n);
/* The transparent huge page sizes the kernel offers (Linux 6.8 and later:
 * a transparent_hugepage/hugepages-<N>kB/ directory per size; before, the
 * PMD size alone): bit k set for 2^k bytes.  Reads sysfs. */
uint64_t geom_thp_sizes(const struct geom *g);
/* The size named by a directory "hugepages-<N>kB", or 0. */
uint64_t geom_thp_dir_size(const char *name);

/* A size of whole KiB as "4 KiB", or of whole MiB as "2 MiB"; returns buf. */
char *geom_size(uint64_t bytes, char *buf, size_t n);
/* "4 KiB pages, 2 MiB PMD" into buf[n] (for messages); returns buf. */
char *geom_describe(const struct geom *g, char *buf, size_t n);
