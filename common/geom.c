/* The kernel's page geometry (geom.h). */
#include "geom.h"

#include "bits.h"
#include "sys.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define PMD_SIZE_FILE THP_DIR "/hpage_pmd_size"

/* The decimal number in a small sysfs file, or 0. */
static uint64_t sysfs_u64(const char *path)
{
	char b[32];
	uint64_t v = 0;
	int fd = (int)sys_openat(TX_AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	long n = sys_read(fd, b, sizeof(b) - 1);
	sys_close(fd);
	for (long i = 0; i < n && b[i] >= '0' && b[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(b[i] - '0');
	}
	return v;
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

	if (!p || *p < '0' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (kb > (UINT64_MAX >> 10) / 10)
			return 0;
		kb = kb * 10 + (uint64_t)(*p - '0');
	}
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
			const char *name = d + off + 19; /* struct linux_dirent64: d_name */
			uint64_t size = geom_thp_dir_size(name);
			off += *(unsigned short *)(void *)(d + off + 16); /* d_reclen */
			if (size)
				sizes |= size;
		}
	}
	sys_close(fd);
	return sizes ? sizes : g->pmd; /* before Linux 6.8: the PMD size only */
}

int geom_fits(const struct geom *g)
{
	return g->page == TX_PAGE && g->pmd == TX_HUGE;
}

static unsigned log2_u64(uint64_t v)
{
	unsigned s = 0;

	while (v > 1) {
		v >>= 1;
		s++;
	}
	return s;
}

uint64_t geom_hugetlb_flag(const struct geom *g)
{
	return (uint64_t)log2_u64(g->pmd) << 26; /* MAP_HUGE_SHIFT */
}

char *geom_mthp_dir(const struct geom *g, char *buf, size_t n)
{
	size_t k = 0;

	tx_cat(buf, n, &k, "hugepages-");
	tx_cat_u64(buf, n, &k, g->pmd >> 10);
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
