/* The kernel's base page, where the arch's kernels choose it (geom.h:
 * TX_PAGE, ARCH_PAGE_VARIES).  Its own file, with nothing else in it, so
 * that every piece of code that rounds to a page can link it alone. */
#include "geom.h"

static uint64_t page_size = ARCH_PAGE_SIZE;

uint64_t tx_page_set(uint64_t page)
{
	if (page && !(page & (page - 1)) && page >= ARCH_PAGE_MIN && page <= ARCH_PAGE_MAX)
		page_size = page;
	return page_size;
}

uint64_t tx_page(void)
{
	return page_size;
}
