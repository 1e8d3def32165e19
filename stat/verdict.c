/* tiexec-stat --advise PROG and --check PID|PROG: the advice (advise.c)
 * printed, and the verdict on a stamped program, running or about to run. */
#define _GNU_SOURCE
#include "verdict.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "advise.h"
#include "bits.h"
#include "geom.h"
#include "mark.h"
#include "needed.h"
#include "policy.h"
#include "textcache.h"

#define MIB(b) ((double)(b) / (1 << 20))

/* "  kernel: 4 KiB pages, 2 MiB PMD; transparent huge pages of 16 KiB to
 * 2 MiB": what the advice above was worked out for. */
static void print_geometry(const struct advice *a)
{
	char g[64], lo[24], hi[24];
	uint64_t s = a->thp_sizes;

	printf("  kernel: %s", geom_describe(&a->geom, g, sizeof(g)));
	if (!s)
		printf("; no transparent huge pages\n");
	else if (!(s & (s - 1)))
		printf("; transparent huge pages of %s\n", geom_size(s, lo, sizeof(lo)));
	else
		printf("; transparent huge pages of %s to %s\n", geom_size(s & -s, lo, sizeof(lo)),
		       geom_size(1ULL << (63 - __builtin_clzll(s)), hi, sizeof(hi)));
}

int advise_print(const char *prog, const char *cache_dir)
{
	struct advice a;
	char why[256];

	if (advise(prog, cache_dir, &a, why, sizeof(why)) != 0) {
		fprintf(stderr, "tiexec-stat: '%s': %s\n", prog, why);
		return 1;
	}
	char piece[24], unit[24];
	printf("%s: %.1f MiB of text, %.1f MiB in whole %s pieces (%.1f MiB of pieces with --round-out); %s%s\n",
	       prog, MIB(a.text), MIB(a.aligned), geom_size(TX_HUGE, piece, sizeof(piece)), MIB(a.rounded),
	       a.stamped ? "stamped: " : "not stamped",
	       a.stamped ? a.policy : "");
	printf("  %-8s %10s  %-34s %s\n", "STRATEGY", "HUGE MiB", "MEMORY", "NOTE");
	for (int k = 0; k < WAY_N; k++) {
		const struct way *w = &a.way[k];
		char mem[64];
		if (!w->huge)
			snprintf(mem, sizeof(mem), "-");
		else if (k == WAY_FILE)
			snprintf(mem, sizeof(mem), "none (the page cache, shared)");
		else if (k == WAY_CACHE)
			snprintf(mem, sizeof(mem), "%.1f MiB shared, once", MIB(w->once));
		else
			snprintf(mem, sizeof(mem), "%.1f MiB %s per process", MIB(w->per_proc),
				 k == WAY_THP ? "anonymous" : "of the pool");
		char only[48] = "";
		if (w->partial)
			snprintf(only, sizeof(only), "only whole %s pieces: ", geom_size(a.geom.pmd, unit, sizeof(unit)));
		printf("  %-8s %10.1f  %-34s %s%s\n", advice_way_name(k), MIB(w->huge), mem, only, w->why);
	}
	char base[40];
	snprintf(base, sizeof(base), "%s pages", geom_size(a.geom.page, unit, sizeof(unit)));
	printf("  auto: %s", a.auto_way == WAY_N ? base : advice_way_name(a.auto_way));
	if (a.rounded > a.aligned)
		printf("; --round-out adds %.1f MiB (a copy: %.1f MiB per process; neighbouring read-only bytes become executable)",
		       MIB(a.rounded - a.aligned), MIB(a.rounded));
	putchar('\n');
	/* Debian's 16 KiB kernels ship the 2 MiB switch "never" (#55 item 9):
	 * say what turning it on gives, and what "always" would cost. */
	if (a.block_gain)
		printf("  2 MiB folios: with transparent_hugepage/hugepages-2048kB/enabled at \"madvise\", a copy puts %.1f MiB"
		       " more in 2 MiB contiguous blocks (tiexec asks with MADV_HUGEPAGE); \"always\" also puts every"
		       " process's 2 MiB-aligned anonymous memory in 2 MiB folios (a postgres with ICU: about 35 MiB more)\n",
		       MIB(a.block_gain));
	struct window_advice w;
	if (advise_window(prog, &a, cache_dir, &w)) {
		printf("  window: %s: ", w.lib); /* the paths needed_libs found */
		if (*w.why)
			printf("none: %s\n", w.why);
		else
			printf("its read-only image (%.1f MiB) on one 2 MiB page of the text cache, shared by every process"
			       " (" TEXTCACHE_WINDOW_EXEC ": --no-windows turns it off)\n",
			       MIB(w.image));
	}
	print_geometry(&a);
	return 0;
}

/* The binfmt_misc rule as the kernel has it: NULL if it would run stamped
 * programs through tiexec, else why not. */
static const char *rule_missing(void)
{
	FILE *f = fopen("/proc/sys/fs/binfmt_misc/tiexec", "re");
	char line[512];
	int enabled = 0;

	if (!f)
		return access("/proc/sys/fs/binfmt_misc/status", F_OK) == 0
			       ? "the binfmt_misc rule is not registered (tiexec-binfmt register)"
			       : "binfmt_misc is not mounted, so no rule is registered (tiexec-binfmt register)";
	while (fgets(line, sizeof(line), f))
		enabled |= !strcmp(line, "enabled\n");
	fclose(f);
	return enabled ? NULL : "the binfmt_misc rule is disabled";
}

/* "4 KiB": the kernel's base page, as the advice read it. */
static const char *base_pages(const struct advice *a, char *out, size_t n)
{
	return geom_size(a->geom.page, out, n);
}

/* "what it gets" from the advice: the bytes the stamp's strategy would put
 * on 2 MiB pages, and the way; where it gets nothing, or only part of its
 * aligned text (*way then ""), why into why. */
static uint64_t expected(const struct advice *a, const char **way, char *why, size_t n)
{
	int s = a->strategy < 0 ? ST_AUTO : a->strategy;
	enum advice_way w = s == ST_FILE ? WAY_FILE : s == ST_THP ? WAY_THP
				 : s == ST_HUGETLB ? WAY_HUGETLB : a->auto_way;

	*way = "";
	if (s == ST_OFF) {
		snprintf(why, n, "its stamp says --strategy=off");
		return 0;
	}
	if (a->text < a->min_text) {
		if (a->text < (1u << 20)) /* 0.0 MiB would read as none */
			snprintf(why, n, "%ju bytes of text is below its min-text (%.1f MiB)",
				 (uintmax_t)a->text, MIB(a->min_text));
		else
			snprintf(why, n, "%.1f MiB of text is below its min-text (%.1f MiB)",
				 MIB(a->text), MIB(a->min_text));
		return 0;
	}
	if (!a->aligned) {
		snprintf(why, n, "no whole 2 MiB piece of text (%.1f MiB of text)", MIB(a->text));
		return 0;
	}
	if (s == ST_FILE && !a->way[WAY_FILE].huge && a->way[WAY_CACHE].huge)
		w = WAY_CACHE; /* file falls back on the cache, never on a copy */
	if (w == WAY_N || !a->way[w].huge || a->way[w].partial) {
		/* auto ends on a copy: its why is the one to act on.  A way
		 * that gives part of the text (whole PMD pieces alone) is
		 * short of it for that reason: what it gives, and no way. */
		const struct way *b = w != WAY_N ? &a->way[w] : a->way[WAY_THP].why[0] ? &a->way[WAY_THP] : &a->way[WAY_FILE];
		snprintf(why, n, "%s: %s", strategy_name(s), b->why[0] ? b->why : "gives nothing here");
		return w != WAY_N ? a->way[w].huge : 0;
	}
	*way = advice_way_name(w);
	return a->way[w].huge;
}

/* The libraries' whole 2 MiB pieces of text, for libs_aligned. */
static int add_lib(void *ctx, const char *path)
{
	struct advice la;
	char why[300];

	if (advise(path, "", &la, why, sizeof(why)) == 0)
		*(uint64_t *)ctx += la.aligned;
	return 1;
}

/* Bytes of text in whole 2 MiB pieces in the libraries prog needs (found
 * as ld.so would, from the files: needed.h), which tiexec places after
 * ld.so maps them unless the stamp says --no-libs. */
static uint64_t libs_aligned(const char *prog, const struct advice *a)
{
	uint64_t sum = 0;

	if (!a->no_libs && a->strategy != ST_OFF)
		needed_libs(prog, add_lib, &sum);
	return sum;
}

/* "; libc.so.6's read-only image in a 2 MiB window" for --check PROG's
 * verdict, or "; libc.so.6 has no window: no window entry ..." where only
 * the entry is wanting (a stamp's --no-windows, no cache at all: said by
 * --advise, not here). */
static void print_window(const struct window_advice *w)
{
	const char *lib = tx_basename(w->lib);

	if (*w->lib && !*w->why)
		printf("; %s's read-only image (%.1f MiB) in a 2 MiB window", lib, MIB(w->image));
	else if (*w->lib && w->missing)
		printf("; %s has no window: %s", lib, w->why);
}

int check_prog(const char *prog, const char *cache_dir)
{
	struct advice a;
	struct window_advice w;
	char why[300], base[24];
	const char *way, *rule;

	if (advise(prog, cache_dir, &a, why, sizeof(why)) != 0) {
		printf("%s: cannot tell: %s\n", prog, why);
		return 1;
	}
	if (!a.stamped) {
		printf("%s: not stamped: it runs on %s pages (a package upgrade replaced it? tiexec-keep sync)\n", prog,
		       base_pages(&a, base, sizeof(base)));
		return 1;
	}
	if ((rule = rule_missing())) {
		printf("%s: stamped, but %s: it runs on %s pages\n", prog, rule, base_pages(&a, base, sizeof(base)));
		return 1;
	}
	uint64_t huge = expected(&a, &way, why, sizeof(why)), libs = libs_aligned(prog, &a);
	advise_window(prog, &a, cache_dir, &w);
	if (!huge && (libs || (*w.lib && !*w.why))) {
		/* A dynamic program below its min-text is still loaded, for
		 * its libraries: they are what it gets. */
		printf("%s: ok", prog);
		if (libs)
			printf(": %.1f MiB of its libraries' text in whole 2 MiB pieces, placed after ld.so maps them", MIB(libs));
		print_window(&w);
		printf("; its own text stays on %s pages (%s)\n", base_pages(&a, base, sizeof(base)), why);
		return 0;
	}
	if (!huge) {
		printf("%s: would run on %s pages: %s", prog, base_pages(&a, base, sizeof(base)), why);
		print_window(&w);
		putchar('\n');
		return 1;
	}
	if (!*way) {
		printf("%s: only %.1f of %.1f MiB of its aligned text would be on huge pages: %s\n", prog, MIB(huge),
		       MIB(a.aligned), why);
		return 1;
	}
	printf("%s: ok: %.1f of %.1f MiB of its text would be on 2 MiB pages (%s)", prog, MIB(huge), MIB(a.text), way);
	if (libs)
		printf(", and %.1f MiB of its libraries' (whole 2 MiB pieces, placed after ld.so)", MIB(libs));
	print_window(&w);
	putchar('\n');
	return 0;
}

int check_running(long pid, const char *prog, int fd, const struct running_huge *h, const char *cache_dir)
{
	uint64_t huge_kb = h->own_kb;
	struct advice a;
	char why[300], base[24];
	const char *way;

	fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd < 0) {
		printf("%ld %s: cannot tell: %s\n", pid, prog, "its file cannot be opened");
		return 1;
	}
	if (advise_fd(fd, cache_dir, &a, why, sizeof(why)) != 0) {
		printf("%ld %s: cannot tell: %s\n", pid, prog, why);
		return 1;
	}
	if (!a.stamped) {
		printf("%ld %s: not stamped: its text is on %s pages unless run through tiexec (a package upgrade replaced it? tiexec-keep sync)\n",
		       pid, prog, base_pages(&a, base, sizeof(base)));
		return 1;
	}
	uint64_t want = expected(&a, &way, why, sizeof(why));
	if (!*way)
		want = a.aligned; /* what it asked for: say why it gets less */
	if (huge_kb * 1024 < want) {
		printf("%ld %s: %.1f of %.1f MiB of its aligned text on 2 MiB pages%s%s\n", pid, prog,
		       (double)huge_kb / 1024, MIB(want), why[0] && !*way ? ": " : "", why[0] && !*way ? why : "");
		return 1;
	}
	printf("%ld %s: ok: %.1f MiB of its text on 2 MiB pages", pid, prog, (double)huge_kb / 1024);
	if (h->libs_kb)
		printf(", and %.1f MiB of its libraries'", (double)h->libs_kb / 1024);
	if (h->window_kb) {
		printf(" (%.1f MiB of that: ", (double)h->window_kb / 1024);
		for (unsigned i = 0; i < h->nwindow; i++)
			printf("%s%s's", i == 0 ? "" : i + 1 < h->nwindow ? ", " : " and ",
			       h->window_lib[i] ? tx_basename(h->window_lib[i]) : "a library");
		printf(h->nwindow > 1 ? " read-only images in their 2 MiB windows)" : " read-only image in its 2 MiB window)");
	}
	if (h->part_kb)
		printf("; %.1f MiB of that in 2 MiB blocks it has mapped only in part so far (a forked child maps its text as it runs)",
		       (double)h->part_kb / 1024);
	putchar('\n');
	return 0;
}
