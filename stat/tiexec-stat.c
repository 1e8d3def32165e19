/* tiexec-stat: how much of each executable mapping of a process is on 2 MiB
 * pages, and how much could be (its whole 2 MiB-aligned pieces).  Reads
 * /proc/PID/smaps; works on any process, run through tiexec or not.  The
 * parsing is in smaps.c (unit-tested in tests/unit/test-smaps.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blocks.h"
#include "perfmap.h"
#include "procfs.h"
#include "program.h"
#include "prom.h"
#include "geom.h"
#include "json.h"
#include "smaps.h"
#include "textcache.h"
#include "verdict.h"

/* The shared text cache's directory (the loader's TIEXEC_CACHE moves it):
 * its entries are the text tiexec mapped from it. */
static const char *cache_dir = TEXTCACHE_DIR;

/* The loaders whose processes run through tiexec (procfs.h): the
 * installed one, the build tree's, and TIEXEC_LOADER's. */
static struct loaders loaders;

static int from_cache(const struct smaps_map *m)
{
	return path_in_cache(m->path, cache_dir);
}

#ifndef TIEXEC_VERSION
#define TIEXEC_VERSION "unknown"
#endif

/* Where tiexec-trace.service keeps its counters (tiexec-trace --counters). */
#define TRACE_COUNTERS "/run/tiexec/trace.counters"

/* Exit statuses; with several PIDs the worst one wins. */
enum { ST_OK = 0, ST_FAILED = 1, ST_USAGE = 2 };

static const char usage[] =
	"Usage: tiexec-stat [--json] PID...\n"
	"       tiexec-stat --perf-map [--children|--follow] PID...\n"
	"       tiexec-stat --advise PROG...\n"
	"       tiexec-stat --check PID|PROG...\n"
	"       tiexec-stat --prometheus [--output FILE]\n"
	"\n"
	"For each executable mapping of each process (the program, its shared\n"
	"libraries, anonymous text such as tiexec's copies): its size, how much of it\n"
	"is on 2 MiB pages (AnonHugePages + FilePmdMapped + ShmemPmdMapped +\n"
	"Private_Hugetlb + Shared_Hugetlb in /proc/PID/smaps) and how much could be\n"
	"(ALIGNED: its whole\n"
	"2 MiB-aligned pieces), in MiB, with a total.  Any process, with or without\n"
	"tiexec: a large ALIGNED next to a small HUGE is text tiexec could put on\n"
	"2 MiB pages.\n"
	"\n"
	"      --json     one JSON object per process and line, sizes in kB\n"
	"      --perf-map write /tmp/perf-PID.map instead: names for perf of the\n"
	"                 functions in copied text (anonymous memory that holds a\n"
	"                 piece of a file's text, as tiexec --strategy=thp makes),\n"
	"                 from the symbol tables of the files; one line per copy\n"
	"      --children with --perf-map: the processes' descendants too\n"
	"      --follow   with --perf-map: and each new descendant as it appears\n"
	"                 (forking servers), until SIGINT or SIGTERM or the PIDs end\n"
	"      --advise   for programs: what each strategy would put on 2 MiB pages\n"
	"                 on this machine, what it costs in memory, and why not\n"
	"      --check    is a stamped program, running (PID) or about to run (PROG),\n"
	"                 on 2 MiB pages?  One line each; exit status 1 if one is not\n"
	"      --prometheus  the node's tiexec metrics in Prometheus' text format:\n"
	"                 processes through tiexec, their text on 2 MiB pages by way\n"
	"                 and on 4 KiB pages, tiexec-warm's files, tiexec-trace's\n"
	"                 counters (--counters); --output FILE writes FILE atomically\n"
	"                 (node_exporter's textfile collector)\n"
	"  -h, --help     this text\n"
	"      --version  the version\n"
	"\n"
	"Environment: TIEXEC_CACHE (the text cache), TIEXEC_WARM (the tiexec-warm to\n"
	"ask; empty: none), TIEXEC_TRACE_COUNTERS (default " TRACE_COUNTERS "),\n"
	"TIEXEC_LOADER (a loader besides the installed one whose processes run\n"
	"through tiexec).\n"
	"\n"
	"ALIGNED is counted at the mapping's addresses: for a program the kernel\n"
	"placed at an address that is not 2 MiB-aligned it is less than tiexec gives\n"
	"(tiexec chooses an aligned one); --advise says what tiexec would give.\n"
	"\n"
	"Exit status: 0 all reported, 1 some process missing or not readable (one line\n"
	"on stderr each; the others are still reported; --check: one is not on 2 MiB\n"
	"pages), 2 a usage error.\n";

static int bad_usage(const char *fmt, const char *arg)
{
	fputs("tiexec-stat: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'tiexec-stat --help'.\n", stderr);
	return ST_USAGE;
}

/* A PID: decimal digits only, 1 .. INT_MAX.  Returns 0 if not one. */
static long parse_pid(const char *s)
{
	long v = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return 0;
	}
	return v;
}

/* /proc/PID/comm without its newline, malloc'ed; "" if it cannot be read. */
static char *read_comm(const char *path)
{
	char *b;
	size_t n;

	if (read_all(path, &b, &n) != 0)
		return strdup("");
	if (n && b[n - 1] == '\n')
		b[n - 1] = '\0';
	return b;
}

/* Prints S for a terminal: control characters as \ooo, like the kernel. */
static void put_text(const char *s, FILE *f)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\%03o", *p);
		else
			putc(*p, f);
	}
}


struct totals {
	uint64_t size_kb, huge_kb, aligned_kb, file_pmd_kb, shmem_pmd_kb, anon_huge_kb, hugetlb_kb, cache_kb;
};

static void add_totals(struct totals *t, const struct smaps_map *m)
{
	t->size_kb += m->size_kb;
	t->huge_kb += smaps_huge_kb(m);
	t->aligned_kb += smaps_aligned_kb(m->start, m->end);
	t->file_pmd_kb += m->file_pmd_kb;
	t->shmem_pmd_kb += m->shmem_pmd_kb;
	t->anon_huge_kb += m->anon_huge_kb;
	t->hugetlb_kb += smaps_hugetlb_kb(m);
	t->cache_kb += from_cache(m) ? m->shmem_pmd_kb : 0;
}

/* The MAPPING cell of mapping i and its newline: its path, and for a text
 * cache entry the file it copies (a library's window: whose). */
static void put_mapping(const struct smaps *s, size_t i)
{
	const struct smaps_map *m = &s->map[i];
	int window;

	if (*m->path)
		put_text(m->path, stdout);
	else
		fputs("(anonymous)", stdout);
	if (from_cache(m)) {
		const char *src = cache_entry_source(s, i, cache_dir, &window);
		fputs(window ? " (text cache: the window of " : src ? " (text cache: " : " (text cache", stdout);
		if (window && !src)
			fputs("a library", stdout);
		else if (src)
			put_text(src, stdout);
		putchar(')');
	}
	putchar('\n');
}

/* kB as MiB with one decimal. */
static void mib(char *out, size_t n, uint64_t kb)
{
	snprintf(out, n, "%.1f", (double)kb / 1024.0);
}

static int maxi(int a, int b)
{
	return a > b ? a : b;
}

/* Where pieces are contiguous blocks (blocks.h): "BLOCKS MiB" after
 * "HUGE MiB", which then counts PMDs only; "-" where not measured. */
static void blocks_cell(char *out, size_t n, const struct blocks *bl, size_t i, int total)
{
	if (bl->state != BLOCKS_MEASURED)
		snprintf(out, n, "-");
	else
		mib(out, n, total ? bl->total_kb : bl->kb[i]);
}

static void print_human(long pid, const char *comm, const char *exe, const struct smaps *s, const struct blocks *bl)
{
	static const char *const hdr[3] = { "SIZE MiB", "HUGE MiB", "ALIGNED MiB" };
	struct totals t = { 0 };
	char buf[64], bc[32];
	int aw = (int)strlen("START"), w[3], bw = (int)strlen("BLOCKS MiB");
	int blk = bl->state != BLOCKS_NONE;

	for (int k = 0; k < 3; k++)
		w[k] = (int)strlen(hdr[k]);
	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_map *m = &s->map[i];
		if (!smaps_is_exec(m))
			continue;
		add_totals(&t, m);
		aw = maxi(aw, snprintf(buf, sizeof(buf), "0x%" PRIx64, m->end));
		aw = maxi(aw, snprintf(buf, sizeof(buf), "0x%" PRIx64, m->start));
	}
	uint64_t tv[3] = { t.size_kb, t.huge_kb, t.aligned_kb };
	for (int k = 0; k < 3; k++) {
		mib(buf, sizeof(buf), tv[k]);
		w[k] = maxi(w[k], (int)strlen(buf));
	}

	printf("PID %ld (", pid);
	put_text(comm, stdout);
	putchar(')');
	if (*exe) {
		putchar(' ');
		put_text(exe, stdout);
	}
	if (blk) {
		char pmd[24];
		printf("\n  HUGE: on %s PMDs; BLOCKS: in 2 MiB contiguous blocks, not on PMDs", geom_size(bl->pmd, pmd, sizeof(pmd)));
		if (bl->state == BLOCKS_UNMEASURED)
			fputs(" (not measured: reading frame numbers takes root)", stdout);
	}
	printf("\n  %-*s %-*s PERM  %*s  %*s  ", aw, "START", aw, "END", w[0], hdr[0], w[1], hdr[1]);
	if (blk)
		printf("%*s  ", bw, "BLOCKS MiB");
	printf("%*s  MAPPING\n", w[2], hdr[2]);
	int any = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_map *m = &s->map[i];
		char a[24], b[24], v[3][32];
		if (!smaps_is_exec(m))
			continue;
		any = 1;
		snprintf(a, sizeof(a), "0x%" PRIx64, m->start);
		snprintf(b, sizeof(b), "0x%" PRIx64, m->end);
		mib(v[0], sizeof(v[0]), m->size_kb);
		mib(v[1], sizeof(v[1]), smaps_huge_kb(m));
		mib(v[2], sizeof(v[2]), smaps_aligned_kb(m->start, m->end));
		printf("  %-*s %-*s %s  %*s  %*s  ", aw, a, aw, b, m->perms, w[0], v[0], w[1], v[1]);
		if (blk) {
			blocks_cell(bc, sizeof(bc), bl, i, 0);
			printf("%*s  ", bw, bc);
		}
		printf("%*s  ", w[2], v[2]);
		put_mapping(s, i);
	}
	if (!any)
		puts("  (no executable mappings)");
	char v[3][32];
	for (int k = 0; k < 3; k++)
		mib(v[k], sizeof(v[k]), tv[k]);
	printf("  %-*s  %*s  %*s  ", 2 * aw + 6, "total", w[0], v[0], w[1], v[1]);
	if (blk) {
		blocks_cell(bc, sizeof(bc), bl, 0, 1);
		printf("%*s  ", bw, bc);
	}
	printf("%*s\n", w[2], v[2]);
}

/* ",\"blocks_kb\":N" (null: not measured) where pieces are blocks. */
static void json_blocks(const struct blocks *bl, size_t i, int total)
{
	if (bl->state == BLOCKS_UNMEASURED)
		fputs(",\"blocks_kb\":null", stdout);
	else if (bl->state == BLOCKS_MEASURED)
		printf(",\"blocks_kb\":%" PRIu64, total ? bl->total_kb : bl->kb[i]);
}

static void print_json(long pid, const char *comm, const char *exe, const struct smaps *s, const struct blocks *bl)
{
	struct totals t = { 0 };
	const char *sep = "";

	printf("{\"pid\":%ld,\"comm\":", pid);
	json_str(stdout, comm);
	fputs(",\"exe\":", stdout);
	json_str(stdout, exe);
	fputs(",\"mappings\":[", stdout);
	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_map *m = &s->map[i];
		if (!smaps_is_exec(m))
			continue;
		add_totals(&t, m);
		printf("%s{\"start\":\"0x%" PRIx64 "\",\"end\":\"0x%" PRIx64 "\",\"perms\":\"%s\","
		       "\"path\":",
		       sep, m->start, m->end, m->perms);
		json_str(stdout, m->path);
		printf(",\"deleted\":%s,\"size_kb\":%" PRIu64 ",\"rss_kb\":%" PRIu64
		       ",\"huge_kb\":%" PRIu64 ",\"file_pmd_kb\":%" PRIu64 ",\"shmem_pmd_kb\":%" PRIu64
		       ",\"anon_huge_kb\":%" PRIu64 ",\"hugetlb_kb\":%" PRIu64
		       ",\"aligned_kb\":%" PRIu64 ",\"cache\":%s",
		       m->deleted ? "true" : "false", m->size_kb, m->rss_kb, smaps_huge_kb(m),
		       m->file_pmd_kb, m->shmem_pmd_kb, m->anon_huge_kb, smaps_hugetlb_kb(m),
		       smaps_aligned_kb(m->start, m->end), from_cache(m) ? "true" : "false");
		json_blocks(bl, i, 0);
		putchar('}');
		sep = ",";
	}
	printf("],\"total\":{\"size_kb\":%" PRIu64 ",\"huge_kb\":%" PRIu64
	       ",\"file_pmd_kb\":%" PRIu64 ",\"shmem_pmd_kb\":%" PRIu64 ",\"anon_huge_kb\":%" PRIu64
	       ",\"hugetlb_kb\":%" PRIu64 ",\"aligned_kb\":%" PRIu64 ",\"cache_kb\":%" PRIu64,
	       t.size_kb, t.huge_kb, t.file_pmd_kb, t.shmem_pmd_kb, t.anon_huge_kb, t.hugetlb_kb,
	       t.aligned_kb, t.cache_kb);
	json_blocks(bl, 0, 1);
	fputs("}}\n", stdout);
}

enum mode { M_HUMAN, M_JSON, M_PERF_MAP, M_CHECK };

/* What the report's header names (malloc'ed, or NULL for exe itself): for
 * a process that runs the loader (an ordinary user's), its program and the
 * loader it runs through. */
static char *header_name(long pid, const char *exe)
{
	if (!exe || !proc_runs_loader(pid, &loaders))
		return NULL;
	int fd;
	char *prog = program_of(pid, cache_dir, &loaders, &fd), *shown = NULL;
	if (fd >= 0)
		close(fd);
	size_t n = strlen(prog) + strlen(exe) + 16;
	if (*prog && (shown = malloc(n)))
		snprintf(shown, n, "%s (through %s)", prog, exe);
	free(prog);
	return shown;
}

/* pid's smaps into *s: 0, or ST_FAILED (said). */
static int read_smaps(long pid, struct smaps *s)
{
	char path[64], *text = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%ld/smaps", pid);
	int e = read_all(path, &text, &len);
	if (e) {
		const char *why = e == ENOENT || e == ESRCH		   ? "no such process"
				  : e == EACCES || e == EPERM ? "permission denied"
							      : strerror(e);
		fflush(stdout);
		fprintf(stderr, "tiexec-stat: %ld: %s\n", pid, why);
		return ST_FAILED;
	}
	e = smaps_parse(text, len, s);
	free(text);
	if (e != 0) {
		smaps_free(s);
		fflush(stdout);
		fprintf(stderr, "tiexec-stat: %ld: %s\n", pid, strerror(ENOMEM));
		return ST_FAILED;
	}
	return 0;
}

/* --perf-map for one process. */
static int report_perf_map(long pid, const struct smaps *s)
{
	struct pm_report rep;
	char err[PATH_MAX + 128];

	if (pm_write_map(pid, s, stdout, &rep, err, sizeof(err)) == 0)
		return ST_OK;
	fflush(stdout);
	fprintf(stderr, "tiexec-stat: %ld: %s\n", pid, err);
	return ST_FAILED;
}

/* --check for one process.  Where pieces are contiguous blocks, they
 * count with the PMDs, measured (blocks.h), or nothing is said. */
static int report_check(long pid, const struct smaps *s)
{
	int fd, r = 1;
	char *prog = program_of(pid, cache_dir, &loaders, &fd);
	struct blocks bl;

	blocks_measure(pid, s, &bl);
	if (!*prog)
		printf("%ld: cannot tell which program it runs\n", pid);
	else if (bl.state == BLOCKS_UNMEASURED)
		printf("%ld %s: cannot tell: its 2 MiB contiguous blocks are not measured (reading frame numbers takes root)\n",
		       pid, prog);
	else {
		struct running_huge h = { program_huge_kb(s, prog, fd, cache_dir, bl.kb),
					  libs_huge_kb(s, prog, fd, cache_dir, bl.kb), bl.part_kb, 0, { NULL }, 0 };
		h.window_kb = windows_huge_kb(s, cache_dir, h.window_lib, WINDOWS_SAID, &h.nwindow);
		r = check_running(pid, prog, fd, &h, cache_dir);
	}
	blocks_free(&bl);
	free(prog);
	if (fd >= 0)
		close(fd);
	return r ? ST_FAILED : ST_OK;
}

/* The default view (or --json) of one process. */
static int report_show(long pid, const struct smaps *s, enum mode mode, int first)
{
	char path[64];
	struct blocks bl;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	char *comm = read_comm(path);
	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	char *exe = read_exe(path);
	blocks_measure(pid, s, &bl);
	if (mode == M_JSON) {
		print_json(pid, comm ? comm : "", exe ? exe : "", s, &bl);
	} else {
		char *shown = header_name(pid, exe);
		if (!first)
			putchar('\n');
		print_human(pid, comm ? comm : "", shown ? shown : exe ? exe : "", s, &bl);
		free(shown);
	}
	blocks_free(&bl);
	free(comm);
	free(exe);
	return ST_OK;
}

static int report(long pid, enum mode mode, int first)
{
	struct smaps s;
	int r = read_smaps(pid, &s);

	if (r)
		return r;
	if (mode == M_PERF_MAP)
		r = report_perf_map(pid, &s);
	else if (mode == M_CHECK)
		r = report_check(pid, &s);
	else
		r = report_show(pid, &s, mode, first);
	smaps_free(&s);
	return r;
}

/* Appends pid's descendants (every thread's children, recursively) to
 * *v (n of them, room for *cap), leaving out those already in it. */
static void descendants(long pid, long **v, size_t *n, size_t *cap)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/task", pid);
	DIR *d = opendir(path);
	struct dirent *t;

	while (d && (t = readdir(d))) {
		char cpath[64 + sizeof(t->d_name)], *text = NULL;
		size_t len = 0;
		if (t->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%ld/task/%s/children", pid, t->d_name);
		if (read_all(cpath, &text, &len) != 0)
			continue;
		for (char *p = text, *end; p < text + len; p = end) {
			long c = strtol(p, &end, 10);
			if (end == p)
				break;
			size_t k = 0;
			while (k < *n && (*v)[k] != c)
				k++;
			if (k < *n || c <= 0)
				continue;
			if (*n == *cap) {
				long *nv = realloc(*v, (*cap = *cap ? *cap * 2 : 64) * sizeof(**v));
				if (!nv)
					break;
				*v = nv;
			}
			(*v)[(*n)++] = c;
			descendants(c, v, n, cap);
		}
		free(text);
	}
	if (d)
		closedir(d);
}

static volatile sig_atomic_t follow_stop;

static void on_stop(int sig)
{
	(void)sig;
	follow_stop = 1;
}

/* --perf-map --children / --follow: a map for each PID and each of its
 * descendants (a forked child has its parent's copies at the same
 * addresses, and perf looks for /tmp/perf-CHILD.map); with follow, again
 * every 100 ms for new ones, until a signal or every root has ended. */
static int perf_maps_of_tree(char **pids, int n, int follow)
{
	long *seen = NULL;
	size_t nseen = 0, cap = 0;
	int status = ST_OK, first = 1;

	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	do {
		size_t before = nseen;
		int alive = 0;
		for (int i = 0; i < n; i++) {
			long pid = parse_pid(pids[i]);
			alive |= kill((pid_t)pid, 0) == 0 || errno == EPERM;
			if (first && report(pid, M_PERF_MAP, 1) != ST_OK)
				status = ST_FAILED;
			descendants(pid, &seen, &nseen, &cap);
		}
		for (size_t k = before; k < nseen; k++)
			if (report(seen[k], M_PERF_MAP, 1) != ST_OK && !follow)
				status = ST_FAILED;
		fflush(stdout);
		first = 0;
		if (!alive)
			break;
		if (follow)
			usleep(100000);
	} while (follow && !follow_stop);
	free(seen);
	return status;
}

/* --prometheus [--output FILE]: to stdout, or to FILE through a temporary
 * file renamed over it, so that node_exporter never reads half a file. */
static int prometheus(const char *output)
{
	const char *warm = getenv("TIEXEC_WARM"), *tc = getenv("TIEXEC_TRACE_COUNTERS");
	struct prom_sources src = { cache_dir, warm ? warm : "tiexec-warm", tc ? tc : TRACE_COUNTERS, &loaders };
	char tmp[PATH_MAX];
	FILE *f = stdout;

	if (output) {
		if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", output) >= (int)sizeof(tmp))
			return bad_usage("--output: '%s': too long", output);
		int fd = mkstemp(tmp);
		if (fd < 0 || !(f = fdopen(fd, "w"))) {
			fprintf(stderr, "tiexec-stat: '%s': %s\n", output, strerror(errno));
			return ST_FAILED;
		}
		fchmod(fd, 0644);
	}
	uint64_t unreadable = 0;
	int r = prom_write(f, &src, &unreadable);
	/* Said, and a failure, for an ordinary user, whose metrics leave out
	 * the processes of others (they would read as zeros).  Root is told
	 * by tiexec_processes_unreadable alone: a sandbox's own PID 1 may be
	 * closed even to root, and that is no reason to fail every scrape. */
	int blind = unreadable && geteuid() != 0;
	if (blind)
		fprintf(stderr, "tiexec-stat: cannot read /proc/PID/smaps of %" PRIu64 " processes (permission denied): "
				"they are left out (run it as root)\n", unreadable);
	if (!output)
		return r == 0 && fflush(stdout) == 0 && !blind ? ST_OK : ST_FAILED;
	if (fclose(f) != 0 || r != 0 || rename(tmp, output) != 0) {
		fprintf(stderr, "tiexec-stat: '%s': %s\n", output, r ? "cannot read /proc" : strerror(errno));
		unlink(tmp);
		return ST_FAILED;
	}
	return blind ? ST_FAILED : ST_OK;
}

/* What the command line asks for. */
struct args {
	int json, perf_map, advise, check, children, follow, prom;
	const char *output;
};

/* The options into a; the index of the first operand, or -(exit status + 1)
 * when the answer is given here (--help, --version, a bad option). */
static int parse_options(int argc, char **argv, struct args *a)
{
	enum { O_JSON = 256, O_PERF_MAP, O_VERSION, O_ADVISE, O_CHECK, O_CHILDREN, O_FOLLOW, O_PROM, O_OUTPUT };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "perf-map", no_argument, NULL, O_PERF_MAP },
		{ "advise", no_argument, NULL, O_ADVISE },
		{ "check", no_argument, NULL, O_CHECK },
		{ "children", no_argument, NULL, O_CHILDREN },
		{ "follow", no_argument, NULL, O_FOLLOW },
		{ "prometheus", no_argument, NULL, O_PROM },
		{ "output", required_argument, NULL, O_OUTPUT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_JSON: a->json = 1; break;
		case O_PERF_MAP: a->perf_map = 1; break;
		case O_ADVISE: a->advise = 1; break;
		case O_CHECK: a->check = 1; break;
		case O_CHILDREN: a->children = 1; break;
		case O_FOLLOW: a->follow = 1; break;
		case O_PROM: a->prom = 1; break;
		case O_OUTPUT: a->output = optarg; break;
		case 'h':
			fputs(usage, stdout);
			return -(ST_OK + 1);
		case O_VERSION:
			printf("tiexec-stat %s\n", TIEXEC_VERSION);
			return -(ST_OK + 1);
		default:
			return -(bad_usage("bad option: '%s'", argv[optind - 1]) + 1);
		}
	}
	return optind;
}

/* --advise and --check: one line per argument (a PID or a program). */
static int advise_or_check(char **v, int n, int advise)
{
	int status = ST_OK;

	for (int i = 0; i < n; i++) {
		int r = advise ? advise_print(v[i], cache_dir)
			: parse_pid(v[i]) ? report(parse_pid(v[i]), M_CHECK, 1)
					  : check_prog(v[i], cache_dir);
		if (r != ST_OK)
			status = ST_FAILED;
	}
	fflush(stdout);
	return status;
}

/* The report (or --json, --perf-map) of each PID. */
static int reports(char **v, int n, enum mode mode)
{
	int status = ST_OK, first = 1;

	for (int i = 0; i < n; i++) {
		if (report(parse_pid(v[i]), mode, first) != ST_OK)
			status = ST_FAILED;
		else
			first = 0;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "tiexec-stat: write error: %s\n", strerror(errno));
		return ST_FAILED;
	}
	return status;
}

int main(int argc, char **argv)
{
	const char *cd = getenv("TIEXEC_CACHE");
	struct args a = { 0 };

	tx_page_set((uint64_t)sysconf(_SC_PAGESIZE)); /* geom.h */
	if (cd)
		cache_dir = cd;
	loaders_find(&loaders, getenv("TIEXEC_LOADER"));
	int first = parse_options(argc, argv, &a);
	if (first < 0)
		return -first - 1;
	if (a.json + a.perf_map + a.advise + a.check + a.prom > 1)
		return bad_usage("%s", a.prom ? "--prometheus goes alone" : "--json, --perf-map, --advise and --check do not go together");
	if (a.output && !a.prom)
		return bad_usage("%s", "--output goes with --prometheus");
	if (a.prom)
		return first < argc ? bad_usage("%s", "--prometheus takes no PID") : prometheus(a.output);
	if (first >= argc)
		return bad_usage("%s", a.advise ? "no PROG given" : "no PID given");
	if (a.advise || a.check)
		return advise_or_check(argv + first, argc - first, a.advise);
	if ((a.children || a.follow) && !a.perf_map)
		return bad_usage("%s", "--children and --follow go with --perf-map");
	for (int i = first; i < argc; i++)
		if (!parse_pid(argv[i]))
			return bad_usage("'%s': not a process ID", argv[i]);
	if (a.children || a.follow)
		return perf_maps_of_tree(argv + first, argc - first, a.follow);
	return reports(argv + first, argc - first, a.perf_map ? M_PERF_MAP : a.json ? M_JSON : M_HUMAN);
}
