/* tiexec-warm: puts the executable segments of files in the page cache in
 * 2 MiB folios, for the whole machine.
 *
 * The kernel maps a file mapping with PMDs on fault whenever the mapping is
 * congruent to the file modulo 2 MiB and the page cache holds that range
 * in 2 MiB folios, in any process, with or without tiexec.  Measuring and
 * converting is done one 2 MiB piece at a time through our own mapping of
 * the piece (congruent by construction): cacheconv.c, the code the
 * loader's file strategy uses.  See warm/tiexec-warm.1.scd. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geom.h"
#include "textentry.h"
#include "warm.h"

#ifndef TIEXEC_VERSION
#define TIEXEC_VERSION "unknown"
#endif

static const char usage[] =
	"Usage: tiexec-warm [--check] [--json] [-v] [--config FILE] [PATH...]\n"
	"       tiexec-warm --prune [--config FILE]\n"
	"\n"
	"Puts the executable segments of ELF programs and shared libraries (files,\n"
	"or every one under a directory) in the page cache in 2 MiB folios, so that\n"
	"every process mapping them gets 2 MiB pages, started through tiexec or not.\n"
	"Pieces that running processes map keep their small folios and are listed\n"
	"with those processes' PIDs.  Without PATH, the paths of " DEFAULT_CONF ".\n"
	"Where the page cache cannot hold a file's text in 2 MiB folios (its file\n"
	"system, or text not congruent to its file offset), the file is copied into\n"
	"the shared text cache instead: a tmpfs mounted huge=always (" TEXTCACHE_DIR ").\n"
	"\n"
	"      --check        change nothing; exit 1 when something is not warm\n"
	"      --config FILE  also the paths, globs and 'stamped DIR' lines of FILE\n"
	"      --json         one JSON object per file and line, sizes in kB\n"
	"      --prune        remove cache entries whose file changed or vanished\n"
	"  -v, --verbose      also files skipped, and how pieces were measured\n"
	"  -h, --help         this text\n"
	"      --version      the version\n"
	"\n"
	"Environment: TIEXEC_CACHE names the text cache's directory (empty: none);\n"
	"a 'cache' line of the configuration wins over it.\n"
	"\n"
	"Exit status: 0 all warm, 1 something is not warm (--check, or kept small\n"
	"because it is in use), 2 a usage error, 3 a file could not be read.\n";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'c' },   { "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' }, { "config", required_argument, NULL, 'f' },
		{ "prune", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },    { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct warm warm = { .cache = { .dir = TEXTCACHE_DIR }, .cc = CCONV_INIT(0) };
	struct warm *w = &warm;
	const char *config = NULL;
	int c;

	struct geom g;
	geom_read(&g, tx_page_set((uint64_t)sysconf(_SC_PAGESIZE))); /* geom.h */
	w->blocks = geom_blocks(&g);
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': w->opt.check = 1; break;
		case 'j': w->opt.json = 1; break;
		case 'v': w->opt.verbose = 1; break;
		case 'f': config = optarg; break;
		case 'p': w->opt.prune = 1; break;
		case 'h': fputs(usage, stdout); return ST_OK;
		case 'V': puts("tiexec-warm " TIEXEC_VERSION); return ST_OK;
		default: fputs("Try 'tiexec-warm --help'.\n", stderr); return ST_USAGE;
		}
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "tiexec-warm: libelf: %s\n", elf_errmsg(-1));
		return ST_FAILED;
	}
	/* TIEXEC_CACHE, as for the loader, names the text cache's directory
	 * (empty: none); a cache line of the configuration wins over it. */
	const char *ce = getenv("TIEXEC_CACHE");
	if (ce && *ce && strlen(ce) < sizeof(w->cache.dir_buf) && *ce == '/') {
		strcpy(w->cache.dir_buf, ce);
		w->cache.dir = w->cache.dir_buf;
	} else if (ce && !*ce) {
		w->cache.off = 1;
	}
	/* For the tests: the fallbacks of kernels before 5.14/6.7. */
	const char *compat = getenv("TIEXEC_WARM_COMPAT");
	w->cc.compat = compat && *compat == '1';

	const char *listed = config ? config : optind == argc ? DEFAULT_CONF : NULL;
	if (listed)
		read_config(w, listed, config != NULL);
	if (listed && optind == argc && !w->ntargets && w->status == ST_OK && !w->opt.prune && !w->opt.json)
		printf("%s: lists no files: nothing to do\n", listed);
	if (w->opt.prune) {
		int n = w->cache.off ? 0 : textentry_prune(w->cache.dir);
		if (n < 0 && errno != ENOENT)
			fail(w, w->cache.dir, "cannot read the text cache", errno);
		else if (!w->opt.json)
			printf("%s: %d entries removed\n", w->cache.dir, n < 0 ? 0 : n);
		return w->status;
	}
	for (int i = optind; i < argc; i++)
		add_path(w, argv[i], 1, NULL);
	add_planned_libraries(w);
	if (w->ntargets)
		scan_maps(w);
	if (w->opt.verbose && !w->opt.json)
		printf("measured: %s on our own congruent mapping of each piece, faulted in only where wholly cached\n",
		       w->cc.compat ? "the last page of each piece in /proc/self/pagemap, after one read of its first"
				   " byte"
				 : "PAGEMAP_SCAN (PAGE_IS_HUGE)");
	for (size_t i = 0; i < w->ntargets; i++)
		do_target(w, &w->targets[i]);
	plan_records(w);
	report_nofit(w);
	if (w->opt.verbose && !w->opt.json && w->cc.scan == 0 && !w->cc.compat)
		printf("measured: PAGEMAP_SCAN unavailable (Linux < 6.7): the last page of each piece in "
		       "/proc/self/pagemap instead\n");
	cconv_close(&w->cc);
	return w->status;
}
