/* The kernel's page geometry (geom.h). */
#include "geom.h"

#include <string.h>

#include "bits.h"
#include "mapsline.h"
#include "sys.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define PMD_SIZE_FILE THP_DIR "/hpage_pmd_size"

/* The decimal number in a small sysfs file, or 0. */
static uint64_t sysfs_u64(const char *path)
{
	char b[32];
	const char *p = b;
	uint64_t v = 0;
	long n = tx_read_text(path, b, sizeof(b));

	return n > 0 && maps_dec(&p, b + n, &v) == 0 ? v : 0;
}

static int power_of_two(uint64_t v)
{
	return v && !(v & (v - 1));
}

void geom_read(struct geom *g, uint64_t page)
{
	uint64_t pmd = sysfs_u64(PMD_SIZE_FILE);

	g->page = power_of_two(page) ? page : TX_PAGE;
	g->pmd = power_of_two(pmd) && pmd > g->page ? pmd : ARCH_PMD_OF(g->page);
}

uint64_t geom_thp_dir_size(const char *name)
{
	const char *p = tx_skip(name, "hugepages-");
	uint64_t kb = 0;

	if (!p || maps_dec(&p, p + strlen(p), &kb) || kb > (UINT64_MAX >> 10))
		return 0;
	return tx_streq(p, "kB") && power_of_two(kb) ? kb << 10 : 0;
}

uint64_t geom_thp_sizes(const struct geom *g)
{
	static char d[4096];
	uint64_t sizes = 0;
	int fd = (int)sys_openat(TX_AT_FDCWD, THP_DIR, O_RDONLY | O_CLOEXEC | O_DIRECTORY, 0);

	if (fd < 0)
		return 0; /* no transparent huge pages at all */
	for (long n; (n = SC(__NR_getdents64, fd, d, sizeof(d), 0, 0, 0)) > 0;) {
		for (long off = 0; off < n;) {
			sizes |= geom_thp_dir_size(tx_dirent_name(d + off));
			off += tx_dirent_reclen(d + off);
		}
	}
	sys_close(fd);
	return sizes ? sizes : g->pmd; /* before Linux 6.8: the PMD size only */
}

int geom_fits(const struct geom *g)
{
	return g->page == TX_PAGE && g->page < TX_HUGE && !(g->pmd & (TX_HUGE - 1));
}

int geom_blocks(const struct geom *g)
{
	return g->pmd > TX_HUGE;
}

uint64_t geom_hugetlb_flag(const struct geom *g)
{
	return (uint64_t)__builtin_ctzll(g->pmd) << 26; /* log2 of a power of two, << MAP_HUGE_SHIFT */
}

char *geom_mthp_dir(uint64_t size, char *buf, size_t n)
{
	size_t k = 0;

	tx_cat(buf, n, &k, "hugepages-");
	tx_cat_u64(buf, n, &k, size >> 10);
	tx_cat(buf, n, &k, "kB/");
	return buf;
}

char *geom_size(uint64_t bytes, char *buf, size_t n)
{
	size_t k = 0;
	int mib = bytes >= (1u << 20) && !(bytes & ((1u << 20) - 1));

	tx_cat_u64(buf, n, &k, mib ? bytes >> 20 : bytes >> 10);
	tx_cat(buf, n, &k, mib ? " MiB" : " KiB");
	return buf;
}

char *geom_describe(const struct geom *g, char *buf, size_t n)
{
	char s[24];
	size_t k = 0;

	tx_cat(buf, n, &k, geom_size(g->page, s, sizeof(s)));
	tx_cat(buf, n, &k, " pages, ");
	tx_cat(buf, n, &k, geom_size(g->pmd, s, sizeof(s)));
	tx_cat(buf, n, &k, " PMD");
	return buf;
}
