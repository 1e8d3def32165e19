/* tiexec-stat --advise and --check PROG: what each strategy would give (see
 * advise.h).  The program's facts come from tiexec-stamp's reader
 * (stamp/elfio.c: the text, its whole and touched 2 MiB pieces, the stamp);
 * the machine's from the loader's own checks (common/fsfolio.c,
 * textcache.c, thpenv.c), so that the advice is what the loader decides. */
#define _GNU_SOURCE
#include "advise.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../stamp/elfio.h"
#include "fsfolio.h"
#include "geom.h"
#include "layout.h"
#include "mark.h"
#include "needed.h"
#include "textcache.h"
#include "thpenv.h"


const char *advice_way_name(enum advice_way w)
{
	static const char *const name[WAY_N] = { "file", "cache", "thp", "hugetlb" };
	return w < WAY_N ? name[w] : "none";
}

/* HugePages_Free of /proc/meminfo, in bytes of 2 MiB pages. */
static uint64_t hugetlb_free(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	unsigned long long n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %llu", &n) == 1)
			break;
	fclose(f);
	return (uint64_t)n * TX_HUGE;
}

/* file: zero copy where the page cache holds 2 MiB folios, for the pieces
 * the loader places congruent to their file offsets (layout_file_huge: a
 * PIE's text wherever its p_vaddr lies, as lld links it). */
static void way_file(int fd, const unsigned char *buf, const struct elf_facts *ef, struct way *w)
{
	struct fs_info fi;
	uint64_t huge = 0, n = ef->phnum;
	Elf64_Phdr *ph = NULL;

	/* The table as the loader reads it: plain numbering, in the file. */
	if (ef->phentsize == sizeof(Elf64_Phdr) && n < PN_XNUM && n <= TX_PH_MAX && ef->phoff <= ef->size &&
	    n * sizeof(Elf64_Phdr) <= ef->size - ef->phoff && (ph = malloc(n * sizeof(Elf64_Phdr) + 1))) {
		memcpy(ph, buf + ef->phoff, n * sizeof(Elf64_Phdr));
		huge = layout_file_huge(ph, (unsigned)n, ef->size, ef->type == ET_DYN);
	}
	free(ph);

	fs_folios(fd, &fi);
	if (!huge) {
		snprintf(w->why, sizeof(w->why), "its text is not congruent to its file offset modulo 2 MiB");
	} else if (fi.folios == FS_FOLIOS_NO) {
		char pg[24];
		snprintf(w->why, sizeof(w->why), "%s keeps %s folios in the page cache on Linux %u.%u", fi.name,
			 geom_size(TX_PAGE, pg, sizeof(pg)), fi.major, fi.minor);
	} else {
		w->huge = huge;
		if (fi.folios == FS_FOLIOS_UNKNOWN)
			snprintf(w->why, sizeof(w->why), "%s: not known to hold 2 MiB folios; tried first", fi.name);
	}
}

/* cache: the entry tiexec-warm made, mapped shared. */
static void way_cache(int fd, const char *dir, const struct elf_facts *ef, struct way *w)
{
	struct statx st;
	char name[TEXTCACHE_NAME_MAX];
	const char *why = NULL;

	if (!*dir) {
		snprintf(w->why, sizeof(w->why), "no text cache (TIEXEC_CACHE is empty)");
		return;
	}
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) != 0 || !textcache_name(&st, name, sizeof(name)))
		return;
	int cfd = textcache_open(dir, name, &why);
	if (cfd < 0) {
		snprintf(w->why, sizeof(w->why), "%s", why ? why : "no entry (tiexec-warm PROG makes one)");
		return;
	}
	struct stat cs;
	if (fstat(cfd, &cs) == 0)
		w->once = (uint64_t)cs.st_blocks * 512;
	close(cfd);
	w->huge = ef->text_huge;
}

/* As the loader: on a kernel whose page sizes are not this build's, every
 * way leaves the text on base pages. */
static void geom_refuses(const struct geom *g, struct advice *a)
{
	char have[64], want[64];
	struct geom build = { TX_PAGE, TX_HUGE };

	for (int k = 0; k < WAY_N; k++) {
		a->way[k].huge = a->way[k].per_proc = a->way[k].once = 0;
		a->way[k].partial = 0;
		snprintf(a->way[k].why, sizeof(a->way[k].why), "this kernel has %s; this build places text for %s",
			 geom_describe(g, have, sizeof(have)), geom_describe(&build, want, sizeof(want)));
	}
}

/* The copy ways, thp and hugetlb (tlb), and what thp would gain were the
 * 2 MiB switch turned on (*gain). */
static void way_copy(const struct geom *g, const struct elf_facts *ef, uint64_t pool, struct way *thp,
		     struct way *tlb, uint64_t *gain)
{
	struct thpenv t;

	thpenv_init(&t, g);
	const struct why *off = thpenv_thp_off(&t);

	/* Where pieces are contiguous blocks, a copy is whole only with
	 * 2 MiB folios: without them it holds the whole PMD pieces alone
	 * (interp/place-copy.c, copy_pmds), the program placed on a PMD boundary. */
	const struct why *boff = geom_blocks(g) ? thpenv_block_off(&t) : NULL;
	if (off && !(geom_blocks(g) && !boff)) {
		snprintf(thp->why, sizeof(thp->why), "%s", off->text);
	} else if (boff) {
		snprintf(thp->why, sizeof(thp->why), "%s", boff->text);
		thp->huge = thp->per_proc = text_in_pieces(ef, g->pmd);
		thp->partial = thp->huge > 0;
		*gain = thpenv_block_switch_never() ? ef->text_huge - thp->huge : 0;
	} else {
		thp->huge = thp->per_proc = ef->text_huge;
	}
	if (pool < ef->text_huge) {
		snprintf(tlb->why, sizeof(tlb->why), "the reserved pool has %llu MiB free (vm.nr_hugepages)",
			 (unsigned long long)(pool >> 20));
	} else {
		tlb->huge = tlb->per_proc = ef->text_huge;
	}
}

/* What auto does (interp/huge.c and its ways): file where the page cache can hold
 * 2 MiB folios, then the cache, then a copy. */
static enum advice_way auto_way(const struct advice *a)
{
	static const enum advice_way order[] = { WAY_FILE, WAY_CACHE, WAY_THP };

	for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (a->way[order[i]].huge)
			return order[i];
	return WAY_N;
}

int advise(const char *path, const char *cache_dir, struct advice *a, char *why, size_t whylen)
{
	/* Non-blocking: a FIFO at path is refused as not a regular file
	 * instead of hanging the open. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		memset(a, 0, sizeof(*a));
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	return advise_fd(fd, cache_dir, a, why, whylen);
}

int advise_fd(int fd, const char *cache_dir, struct advice *a, char *why, size_t whylen)
{
	struct elf_facts ef;
	struct stat st;

	memset(a, 0, sizeof(*a));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		snprintf(why, whylen, "%s", "not a regular file");
		close(fd);
		return -1;
	}
	void *buf = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (buf == MAP_FAILED || elf_facts_read(buf, (size_t)st.st_size, &ef, why, whylen) != 0) {
		if (buf == MAP_FAILED)
			snprintf(why, whylen, "%s", strerror(errno));
		else
			munmap(buf, (size_t)st.st_size);
		close(fd);
		return -1;
	}
	if (ef.debug_only) {
		munmap(buf, (size_t)st.st_size);
		snprintf(why, whylen, "%s", ELF_DEBUG_ONLY);
		close(fd);
		return -1;
	}
	a->text = ef.text;
	a->aligned = ef.text_huge;
	a->rounded = ef.text_round;
	a->stamped = ef.marked && ef.note_ok;
	a->strategy = a->stamped && ef.policy.strategy != TIEXEC_UNSET32 ? (int)ef.policy.strategy : -1;
	a->min_text = a->stamped && ef.policy.min_text != TIEXEC_UNSET64 ? ef.policy.min_text : TX_HUGE;
	a->round_out = a->stamped && (ef.policy.flags & TIEXEC_POLICY_ROUND_OUT);
	a->no_libs = a->stamped && (ef.policy.flags & TIEXEC_POLICY_NO_LIBS);
	a->no_windows = a->stamped && (ef.policy.flags & TIEXEC_POLICY_NO_WINDOWS);
	if (a->stamped)
		policy_format(&ef.policy, a->policy, sizeof(a->policy));
	way_file(fd, buf, &ef, &a->way[WAY_FILE]);
	munmap(buf, (size_t)st.st_size);
	way_cache(fd, cache_dir, &ef, &a->way[WAY_CACHE]);
	geom_read(&a->geom, (uint64_t)sysconf(_SC_PAGESIZE));
	a->thp_sizes = geom_thp_sizes(&a->geom);
	way_copy(&a->geom, &ef, hugetlb_free(), &a->way[WAY_THP], &a->way[WAY_HUGETLB], &a->block_gain);
	close(fd);
	if (geom_blocks(&a->geom)) {
		/* As the loader (interp/huge.c, place-file.c): neither is built for
		 * contiguous blocks yet. */
		struct way *f = &a->way[WAY_FILE], *h = &a->way[WAY_HUGETLB];
		f->huge = f->per_proc = f->once = h->huge = h->per_proc = h->once = 0;
		snprintf(f->why, sizeof(f->why), "the page cache is not placed in contiguous blocks yet (16 and 64 KiB pages)");
		snprintf(h->why, sizeof(h->why), "not built for 16 and 64 KiB pages yet");
	}
	if (!geom_fits(&a->geom))
		geom_refuses(&a->geom, a);
	a->auto_way = auto_way(a);
	return 0;
}

/* needed_libs' callback: the first library that textcache_windowed names. */
static int find_windowed(void *ctx, const char *path)
{
	struct window_advice *w = ctx;

	if (!*w->lib && textcache_windowed(path))
		snprintf(w->lib, sizeof(w->lib), "%s", path);
	return 1;
}

/* w->lib's read-only image (textcache_window_end) into w->image, and
 * whether its window has room (textcache_window_at: in a reservation,
 * arm64's, its writable segment far enough up): 1, or 0 with why. */
static int window_headers(struct window_advice *w, int *fd_out)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[TEXTCACHE_PH_MAX];
	int fd = open(w->lib, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	*fd_out = fd;
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum > TEXTCACHE_PH_MAX ||
	    pread(fd, ph, eh.e_phnum * sizeof(ph[0]), (off_t)eh.e_phoff) != (ssize_t)(eh.e_phnum * sizeof(ph[0]))) {
		snprintf(w->why, sizeof(w->why), "its headers cannot be read");
		return 0;
	}
	w->image = textcache_window_end(ph, eh.e_phnum);
	if (!w->image) {
		snprintf(w->why, sizeof(w->why), "its read-only image is not its file's first bytes within 2 MiB");
		return 0;
	}
	if (!textcache_window_at(ph, eh.e_phnum)) {
		snprintf(w->why, sizeof(w->why),
			 "ld.so maps it in a reservation (p_align above the page) whose writable segment is too close "
			 "for a window");
		return 0;
	}
	return 1;
}

int advise_window(const char *path, const struct advice *a, const char *cache_dir, struct window_advice *w)
{
	struct statx st;
	int fd = -1;

	memset(w, 0, sizeof(*w));
	needed_libs(path, find_windowed, w);
	if (!*w->lib)
		return 0;
	if (!window_headers(w, &fd))
		;
	else if (a->strategy == ST_OFF || a->no_libs)
		snprintf(w->why, sizeof(w->why), "its stamp says %s", a->no_libs ? "--no-libs" : "--strategy=off");
	else if (a->no_windows)
		snprintf(w->why, sizeof(w->why), "its stamp says --no-windows");
	else if (!*cache_dir)
		snprintf(w->why, sizeof(w->why), "no text cache (TIEXEC_CACHE is empty)");
	else if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) != 0)
		snprintf(w->why, sizeof(w->why), "%s", strerror(errno));
	else if (!textcache_window_present(cache_dir, &st) && (w->missing = 1))
		snprintf(w->why, sizeof(w->why), "no window entry in the text cache (tiexec-warm PROG makes one)");
	if (fd >= 0)
		close(fd);
	return 1;
}
