/* Page geometry (common/geom.c) and the THP settings named by it
 * (common/thpenv.c): the names and flags for a PMD of 2 MiB (x86-64, arm64
 * with 4 KiB pages), 32 MiB (arm64 with 16 KiB pages) and 512 MiB (64 KiB
 * pages), injected; and what this machine's kernel says. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "geom.h"
#include "tap.h"
#include "thpenv.h"

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << 26)
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

struct gcase {
	uint64_t page, pmd;
	const char *dir, *describe;
	unsigned shift;
};

static const struct gcase cases[] = {
	{ 4096, 2u << 20, "hugepages-2048kB/", "4 KiB pages, 2 MiB PMD", 21 },
	{ 16384, 32u << 20, "hugepages-32768kB/", "16 KiB pages, 32 MiB PMD", 25 },
	{ 65536, 512u << 20, "hugepages-524288kB/", "64 KiB pages, 512 MiB PMD", 29 },
};

int main(void)
{
	char b[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct gcase *c = &cases[i];
		struct geom g = { c->page, c->pmd };

		ok(!strcmp(geom_mthp_dir(g.pmd, b, sizeof(b)), c->dir), "%s: mTHP directory %s", c->describe, b);
		ok(!strcmp(geom_describe(&g, b, sizeof(b)), c->describe), "described as '%s'", b);
		ok(geom_hugetlb_flag(&g) == (uint64_t)c->shift << MAP_HUGE_SHIFT, "%s: MAP_HUGE_* is log2 << 26",
		   c->describe);
		ok(ARCH_PMD_OF(c->page) == c->pmd, "a PMD maps page * page / 8 bytes for %s", c->describe);
		ok(geom_fits(&g) == (c->page == TX_PAGE && !(c->pmd % TX_HUGE) && c->page < TX_HUGE), "fits this build: %d", geom_fits(&g));
		ok(geom_blocks(&g) == (c->pmd > TX_HUGE), "%s: 2 MiB pieces are %s", c->describe, geom_blocks(&g) ? "contiguous blocks" : "PMDs");
	}
	struct geom two = { 4096, 2u << 20 };
	ok(geom_hugetlb_flag(&two) == MAP_HUGE_2MB, "2 MiB gives the kernel's MAP_HUGE_2MB");

	/* Truncation never overruns and always terminates. */
	char tiny[8];
	memset(tiny, 'x', sizeof(tiny));
	geom_describe(&two, tiny, sizeof(tiny));
	ok(!strcmp(tiny, "4 KiB p"), "a short buffer holds the start: '%s'", tiny);
	ok(!strcmp(geom_size(1536u << 10, b, sizeof(b)), "1536 KiB"), "1.5 MiB is said in KiB: %s", b);

	/* This machine: the base page sysconf gives, the PMD sysfs gives. */
	struct geom here;
	long page = sysconf(_SC_PAGESIZE);
	geom_read(&here, (uint64_t)page);
	ok(here.page == (uint64_t)page, "the base page is sysconf's: %lu", (unsigned long)here.page);
	ok(here.pmd > here.page && !(here.pmd & (here.pmd - 1)), "the PMD is a power of two above it: %lu",
	   (unsigned long)here.pmd);
	geom_read(&here, 3000);
	ok(here.page == TX_PAGE, "a base page that is no power of two gives the arch's default");

	/* The mTHP directories' names. */
	ok(geom_thp_dir_size("hugepages-2048kB") == 2u << 20 && geom_thp_dir_size("hugepages-16kB") == 16384 &&
		   geom_thp_dir_size("hugepages-32768kB") == 32u << 20,
	   "hugepages-<N>kB names N KiB");
	ok(!geom_thp_dir_size("hugepages-3kB") && !geom_thp_dir_size("hugepages-kB") &&
		   !geom_thp_dir_size("hugepages-2048") && !geom_thp_dir_size("enabled") &&
		   !geom_thp_dir_size("hugepages-99999999999999999999kB"),
	   "anything else names no size");
	geom_read(&here, (uint64_t)page);
	uint64_t sizes = geom_thp_sizes(&here);
	ok(!sizes || (sizes & here.pmd), "this kernel's THP sizes include the PMD's (%#llx)", (unsigned long long)sizes);

	/* The base page at run time (pagesize.c): an arch whose kernels choose
	 * it takes AT_PAGESZ within its bounds, and with a 16 or 64 KiB page
	 * its geometry fits, its 2 MiB pieces being contiguous blocks (the
	 * 64 KiB decision, docs/reference.md "arm64"); an arch with one page
	 * keeps it whatever it is told. */
	ok(tx_page_set(3000) == TX_PAGE && tx_page_set(1u << 20) == TX_PAGE, "no power of two in bounds: unchanged");
	for (size_t i = 1; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct gcase *c = &cases[i];
		struct geom g = { c->page, c->pmd };
		if (tx_page_set(c->page) != c->page) {
			ok(ARCH_PAGE_MAX < c->page, "%s: not this arch's (pages up to %llu)", c->describe,
			   (unsigned long long)ARCH_PAGE_MAX);
			continue;
		}
		ok(TX_PAGE == c->page && geom_fits(&g) && geom_blocks(&g), "%s: placed, in 2 MiB contiguous blocks",
		   c->describe);
	}
	tx_page_set(ARCH_PAGE_SIZE);
	ok(TX_PAGE == ARCH_PAGE_SIZE, "back to the default page");

	/* thpenv's answers are kept in its struct, asked once. */
	struct thpenv t;
	geom_read(&here, (uint64_t)page);
	thpenv_init(&t, &here);
	const struct why *off = thpenv_thp_off(&t);
	ok(thpenv_thp_off(&t) == off, "thp_off is asked once and kept: %s", off ? off->text : "(on)");
	enum exec_refusal e = thpenv_exec_refusal(&t);
	ok(thpenv_exec_refusal(&t) == e, "exec_refusal is asked once and kept: %d", (int)e);
	const struct why *boff = thpenv_block_off(&t);
	ok(thpenv_block_off(&t) == boff, "block_off is asked once and kept: %s", boff ? boff->text : "(on)");
	return tap_done();
}
