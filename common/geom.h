/* Page geometry: the size of a base page and of a PMD (the huge page tiexec
 * places text on), as the running kernel has them.
 *
 * TX_PAGE and TX_HUGE are this build's placement unit: the arch's defaults
 * (ARCH_PAGE_SIZE, ARCH_PMD_SIZE in arch_reloc.h), and the only spelling of
 * those sizes outside arch/.  geom_read asks the kernel: the base page from
 * AT_PAGESZ (the loader) or sysconf (the tools), the PMD from
 * transparent_hugepage/hpage_pmd_size (Linux 4.19), else the arch's
 * default for that base page.  Where the kernel's geometry is not the
 * build's (an arm64 kernel with 16 KiB pages: PMD 32 MiB), geom_fits says
 * so and the loader leaves the text on base pages rather than place it on
 * boundaries the kernel cannot map huge. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "arch_reloc.h" /* ARCH_PAGE_SIZE, ARCH_PMD_SIZE, ARCH_PMD_OF */

#define TX_PAGE ARCH_PAGE_SIZE
#define TX_HUGE ARCH_PMD_SIZE

struct geom {
	uint64_t page; /* bytes of a base page */
	uint64_t pmd;  /* bytes of a PMD mapping */
};

/* The kernel's geometry: page is AT_PAGESZ or sysconf(_SC_PAGESIZE) (0 when
 * unknown: the arch's default).  Reads sysfs with raw system calls. */
void geom_read(struct geom *g, uint64_t page);
/* 1 when the kernel's geometry is the one this build places text for. */
int geom_fits(const struct geom *g);
/* The MAP_HUGE_* / MFD_HUGE_* bits asking hugetlbfs for PMD-sized pages:
 * log2(pmd) << 26. */
uint64_t geom_hugetlb_flag(const struct geom *g);
/* The PMD size's mTHP directory under transparent_hugepage/, such as
 * "hugepages-<PMD in kB>kB/", into buf[n]; returns buf. */
char *geom_mthp_dir(const struct geom *g, char *buf, size_t n);
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
