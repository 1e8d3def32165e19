/* tiexec-stat --prometheus: node-level metrics in the Prometheus text
 * format (see prom.h). */
#define _GNU_SOURCE
#include "prom.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "advise.h"
#include "blocks.h"
#include "geom.h"
#include "json.h"
#include "mark.h"
#include "perfmap.h"
#include "procfs.h"
#include "program.h"
#include "smaps.h"

extern char **environ;

/* One program running through tiexec: its processes, its own text's
 * whole 2 MiB pieces (per process), the least of them any of its
 * processes has on 2 MiB pages, and how many have fewer than all.  A
 * process with fewer on PMDs whose contiguous blocks could not be
 * measured is neither: it counts in unmeasured_procs alone (its text may
 * well be in blocks, and an alert must not fire on what was not seen). */
struct program {
	char *path;
	uint64_t procs, aligned_kb, min_huge_kb, short_procs, unmeasured_procs;
};

struct totals {
	uint64_t procs, file_kb, cache_kb, copy_kb, small_kb;
	/* Where a PMD is larger than the 2 MiB piece (blocks.h): text in
	 * 2 MiB contiguous blocks, not on PMDs, by way; processes whose
	 * blocks could not be measured (not root). */
	uint64_t blocks_file_kb, blocks_cache_kb, blocks_copy_kb, blocks_unmeasured;
	uint64_t unreadable; /* processes whose smaps one may not read */
	/* Of cache_kb: libraries' windows (libc's read-only image), and the
	 * processes that map one. */
	uint64_t window_kb, window_procs;
	struct program *prog;
	size_t nprog;
};

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Byte 70 of the process's program carries the stamp's marker bit. */
static int exe_stamped(long pid)
{
	char path[64];
	unsigned char b[71];

	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = pread(fd, b, sizeof(b), 0);
	close(fd);
	return n == (ssize_t)sizeof(b) && !memcmp(b, "\177ELF", 4) &&
	       (b[TIEXEC_MARK_PHOFF + 6] & (TIEXEC_MARK_FLAG >> 16));
}

/* kB of the whole 2 MiB pieces of the program's text in its file fd
 * (what --advise calls aligned); 0 if it cannot be read.  fd is the file
 * program_of opened through the kernel's link to it: no path a process
 * named is opened here. */
static uint64_t aligned_kb_of(int fd)
{
	struct advice a;
	char why[256];

	fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	return fd >= 0 && advise_fd(fd, "", &a, why, sizeof(why)) == 0 ? a.aligned >> 10 : 0;
}

/* The process of prog (malloc'ed, taken) with huge_kb of its own text on
 * 2 MiB pages, into its program's line (fd: its file, or -1); unmeasured:
 * its contiguous blocks could not be measured. */
static void add_program(struct totals *t, char *prog, int fd, uint64_t huge_kb, int unmeasured)
{
	struct program *p = NULL;

	for (size_t i = 0; i < t->nprog && !p; i++)
		if (!strcmp(t->prog[i].path, prog))
			p = &t->prog[i];
	if (p) {
		free(prog);
	} else {
		struct program *more = realloc(t->prog, (t->nprog + 1) * sizeof(*more));
		if (!more) {
			free(prog);
			return;
		}
		t->prog = more;
		p = &t->prog[t->nprog++];
		*p = (struct program){ prog, 0, aligned_kb_of(fd), UINT64_MAX, 0, 0 };
	}
	p->procs++;
	if (unmeasured && huge_kb < p->aligned_kb) {
		p->unmeasured_procs++;
		return;
	}
	p->min_huge_kb = huge_kb < p->min_huge_kb ? huge_kb : p->min_huge_kb;
	p->short_procs += huge_kb < p->aligned_kb;
}

/* One process's text in contiguous blocks (b, measured for its smaps s)
 * into p by way, taken out of what it has on base pages: a mapping of the
 * cache, anonymous text (a copy), or a file's page cache. */
static void add_blocks(const struct smaps *s, const struct blocks *b, const char *cache_dir, struct totals *p)
{
	p->blocks_unmeasured += b->state == BLOCKS_UNMEASURED;
	if (b->state != BLOCKS_MEASURED)
		return;
	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_map *m = &s->map[i];
		uint64_t kb = b->kb[i];
		if (!kb)
			continue;
		if (path_in_cache(m->path, cache_dir))
			p->blocks_cache_kb += kb;
		else if (m->path[0] != '/')
			p->blocks_copy_kb += kb;
		else
			p->blocks_file_kb += kb;
		p->small_kb -= kb < p->small_kb ? kb : p->small_kb;
	}
}

/* One process: counted when it runs through tiexec, its executable
 * mappings' text by how it is on 2 MiB pages, and its program's own. */
static void add_process(long pid, const struct prom_sources *src, struct totals *t)
{
	const char *cache_dir = src->cache_dir;
	char path[64], *text;
	size_t len;
	struct smaps s;

	snprintf(path, sizeof(path), "/proc/%ld/smaps", pid);
	int e = read_all(path, &text, &len);
	if (e == EACCES || e == EPERM)
		t->unreadable++;
	if (e)
		return;
	int ok = smaps_parse(text, len, &s) == 0;
	free(text);
	int ours = proc_runs_loader(pid, src->loaders);
	struct totals p = { .procs = 1 };
	for (size_t i = 0; ok && i < s.n; i++) {
		const struct smaps_map *m = &s.map[i];
		if (!smaps_is_exec(m) || starts(m->path, "[vdso]") || starts(m->path, "[vsyscall]"))
			continue;
		int cache = path_in_cache(m->path, cache_dir);
		long left, right;
		pm_neighbours(&s, i, &left, &right);
		/* A copy: named by tiexec (CONFIG_ANON_VMA_NAME), or anonymous
		 * text on 2 MiB pages next to a mapping of a file. */
		ours |= cache || starts(m->path, "[anon:tiexec:") ||
			(pm_is_anon_text(m) && smaps_huge_kb(m) && (left >= 0 || right >= 0));
		p.file_kb += cache ? 0 : m->file_pmd_kb;
		p.cache_kb += cache ? m->shmem_pmd_kb : 0;
		p.copy_kb += m->anon_huge_kb + smaps_hugetlb_kb(m) + (cache ? 0 : m->shmem_pmd_kb);
		p.small_kb += m->size_kb - (smaps_huge_kb(m) < m->size_kb ? smaps_huge_kb(m) : m->size_kb);
	}
	if (!ok || !(ours || exe_stamped(pid))) {
		smaps_free(&s);
		return;
	}
	const char *lib[WINDOWS_SAID];
	unsigned nlib;
	p.window_kb = windows_huge_kb(&s, cache_dir, lib, WINDOWS_SAID, &nlib);
	p.window_procs = p.window_kb > 0;
	struct blocks bl;
	blocks_measure(pid, &s, &bl);
	add_blocks(&s, &bl, cache_dir, &p);
	int fd;
	char *prog = program_of(pid, cache_dir, src->loaders, &fd);
	if (*prog)
		add_program(t, prog, fd, program_huge_kb(&s, prog, fd, cache_dir, bl.kb), bl.state == BLOCKS_UNMEASURED);
	else
		free(prog);
	if (fd >= 0)
		close(fd);
	blocks_free(&bl);
	smaps_free(&s);
	t->blocks_file_kb += p.blocks_file_kb;
	t->blocks_cache_kb += p.blocks_cache_kb;
	t->blocks_copy_kb += p.blocks_copy_kb;
	t->blocks_unmeasured += p.blocks_unmeasured;
	t->procs += p.procs;
	t->file_kb += p.file_kb;
	t->cache_kb += p.cache_kb;
	t->copy_kb += p.copy_kb;
	t->small_kb += p.small_kb;
	t->window_kb += p.window_kb;
	t->window_procs += p.window_procs;
}

/* Whether this kernel's PMD is larger than the 2 MiB piece, so that text
 * can lie in contiguous blocks (blocks.h). */
static int blocks_geometry(void)
{
	struct geom g;

	geom_read(&g, TX_PAGE);
	return geom_blocks(&g);
}

/* A label value: valid UTF-8 whatever the bytes (each byte outside a
 * valid sequence becomes U+FFFD, as in --json: one invalid name must not
 * make the parser reject the whole file, which blanks every tiexec metric
 * of the node), \ " and newline escaped, and at most LABEL_MAX bytes of
 * the value, a longer one cut at a character and ending in "...". */
#define LABEL_MAX 1024
static void label(FILE *f, const char *v)
{
	size_t len = strlen(v), out = 0;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_len((const unsigned char *)v + i, len - i);
		if (out + (n ? n : 3) > LABEL_MAX) {
			fputs("...", f);
			return;
		}
		if (n == 0) {
			fputs("\xef\xbf\xbd", f);
			out += 3;
			i++;
			continue;
		}
		if (v[i] == '\\' || v[i] == '"')
			fputc('\\', f);
		if (v[i] == '\n')
			fputs("\\n", f);
		else
			fwrite(v + i, 1, n, f);
		out += n;
		i += n;
	}
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* tiexec-warm --check --json: per configured file its route and how much
 * of its aligned text is warm.  Nothing when tiexec-warm is not there. */
static void warm_state(FILE *f, const char *warm)
{
	char *argv[] = { (char *)warm, "--check", "--json", NULL };
	posix_spawn_file_actions_t fa;
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	int e = posix_spawnp(&pid, warm, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	FILE *in = e == 0 ? fdopen(p[0], "r") : NULL;
	if (!in) {
		close(p[0]);
		if (e == 0)
			waitpid(pid, NULL, 0);
		return;
	}
	char *line = NULL;
	size_t cap = 0;
	int first = 1;
	while (getline(&line, &cap, in) > 0) {
		char fpath[8192], route[32], cache[32] = "";
		uint64_t aligned, warmkb, unmeasured = 0;
		/* The cache route says how much of its text is in 2 MiB pages
		 * as huge_kb; the page cache route as warm_kb; the window route
		 * its read-only image (image_kb), warm where its entry is. */
		const char *w = json_member(line, "warm_kb");
		if (json_get_string(json_member(line, "path"), fpath, sizeof(fpath)) < 0 ||
		    json_get_string(json_member(line, "route"), route, sizeof(route)) < 0)
			continue;
		if (!strcmp(route, "window")) {
			if (json_get_u64(json_member(line, "image_kb"), &aligned) < 0)
				continue;
			json_get_string(json_member(line, "cache"), cache, sizeof(cache));
			warmkb = !strcmp(cache, "present") || !strcmp(cache, "made") ? aligned : 0;
		} else if (json_get_u64(json_member(line, "aligned_kb"), &aligned) < 0 ||
			   json_get_u64(w ? w : json_member(line, "huge_kb"), &warmkb) < 0)
			continue;
		json_get_u64(json_member(line, "unmeasured_kb"), &unmeasured);
		if (first)
			head(f, "tiexec_warm_text_bytes", "gauge",
			     "Text of each file tiexec-warm is configured for: its whole 2 MiB pieces (state=\"aligned\"), those warm in 2 MiB pages (state=\"warm\"), and those that may be 2 MiB contiguous blocks but were not measured (state=\"unmeasured\": reading frame numbers takes CAP_SYS_ADMIN), by route; for route=\"window\", a library's read-only image in its 2 MiB window entry.");
		first = 0;
		static const char *const state[] = { "aligned", "warm", "unmeasured" };
		uint64_t kb[] = { aligned, warmkb, unmeasured };
		for (int k = 0; k < 3; k++) {
			fputs("tiexec_warm_text_bytes{path=\"", f);
			label(f, fpath);
			fputs("\",route=\"", f);
			label(f, route);
			fprintf(f, "\",state=\"%s\"} %" PRIu64 "\n", state[k], kb[k] * 1024);
		}
	}
	free(line);
	fclose(in);
	waitpid(pid, NULL, 0);
}

/* tiexec-trace --counters FILE: lines "outcome NAME COUNT" and
 * "fallback COUNT REASON". */
static void trace_counters(FILE *f, const char *path)
{
	FILE *in = fopen(path, "re");
	char line[512];
	int heads = 0;

	head(f, "tiexec_trace_up", "gauge", "1 when tiexec-trace's counters file is there (tiexec-trace --counters).");
	fprintf(f, "tiexec_trace_up %d\n", in != NULL);
	while (in && fgets(line, sizeof(line), in)) {
		char what[32], name[64];
		unsigned long long n;
		int off = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "outcome %63s %llu", name, &n) == 2) {
			if (!(heads & 1))
				head(f, "tiexec_starts_total", "counter", "Starts through tiexec seen by tiexec-trace, by outcome.");
			heads |= 1;
			fprintf(f, "tiexec_starts_total{outcome=\"%s\"} %llu\n", name, n);
		} else if (sscanf(line, "%31s %llu %n", what, &n, &off) == 2 && !strcmp(what, "fallback") && off) {
			if (!(heads & 2))
				head(f, "tiexec_fallbacks_total", "counter", "Fallbacks seen by tiexec-trace, by the loader's reason.");
			heads |= 2;
			fputs("tiexec_fallbacks_total{reason=\"", f);
			label(f, line + off);
			fprintf(f, "\"} %llu\n", n);
		}
	}
	if (in)
		fclose(in);
}

/* The per-program lines: what holds as the number of processes changes.
 * A program none of whose processes was measured has no min line; the
 * unmeasured line is there only where blocks exist (blocks_geometry). */
static void programs(FILE *f, const struct totals *t, int blocks)
{
	static const struct {
		const char *name, *help;
	} m[] = {
		{ "tiexec_program_processes", "Processes of each program running through tiexec (the file that holds its entry point)." },
		{ "tiexec_program_text_aligned_bytes", "The program's own text in whole 2 MiB pieces: what one process of it can have on 2 MiB pages." },
		{ "tiexec_program_text_huge_min_bytes", "The least of the program's own text that any of its measured processes has on 2 MiB pages." },
		{ "tiexec_program_processes_short", "Processes of the program with less than all its whole 2 MiB pieces on 2 MiB pages." },
		{ "tiexec_program_processes_unmeasured", "Processes of the program with less than all on PMDs whose 2 MiB contiguous blocks could not be measured (reading frame numbers takes CAP_SYS_ADMIN): neither short nor in the min." },
	};
	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]) - !blocks; k++) {
		head(f, m[k].name, "gauge", m[k].help);
		for (size_t i = 0; i < t->nprog; i++) {
			const struct program *p = &t->prog[i];
			uint64_t v[] = { p->procs, p->aligned_kb * 1024, p->min_huge_kb * 1024, p->short_procs, p->unmeasured_procs };
			if (k == 2 && p->min_huge_kb == UINT64_MAX)
				continue;
			fprintf(f, "%s{program=\"", m[k].name);
			label(f, p->path);
			fprintf(f, "\"} %" PRIu64 "\n", v[k]);
		}
	}
}

int prom_write(FILE *f, const struct prom_sources *src, uint64_t *unreadable)
{
	struct totals t;

	memset(&t, 0, sizeof(t));
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (pid > 0 && !*end && pid != getpid())
			add_process(pid, src, &t);
	}
	closedir(d);
	head(f, "tiexec_processes", "gauge",
	     "Processes running through tiexec: stamped programs, and programs with tiexec's copies or cache entries mapped.");
	fprintf(f, "tiexec_processes %" PRIu64 "\n", t.procs);
	head(f, "tiexec_text_huge_bytes", "gauge",
	     "Executable text of those processes on 2 MiB pages, summed over them, by way: file (the page cache), cache (the shared text cache), copy.");
	fprintf(f, "tiexec_text_huge_bytes{way=\"file\"} %" PRIu64 "\n", t.file_kb * 1024);
	fprintf(f, "tiexec_text_huge_bytes{way=\"cache\"} %" PRIu64 "\n", t.cache_kb * 1024);
	fprintf(f, "tiexec_text_huge_bytes{way=\"copy\"} %" PRIu64 "\n", t.copy_kb * 1024);
	head(f, "tiexec_text_window_bytes", "gauge",
	     "Of way=\"cache\": libraries' read-only images on 2 MiB pages from their window entries (libc's window), summed over those processes.");
	fprintf(f, "tiexec_text_window_bytes %" PRIu64 "\n", t.window_kb * 1024);
	head(f, "tiexec_processes_window", "gauge", "Processes that map a library's window from the text cache (libc's).");
	fprintf(f, "tiexec_processes_window %" PRIu64 "\n", t.window_procs);
	int blocks = blocks_geometry();
	if (blocks) {
		head(f, "tiexec_text_blocks_bytes", "gauge",
		     "Executable text of those processes in 2 MiB contiguous blocks, not on PMDs (a PMD larger than 2 MiB: arm64 with 16 or 64 KiB pages), summed over them, by way; measured from pagemap and kpageflags.");
		fprintf(f, "tiexec_text_blocks_bytes{way=\"file\"} %" PRIu64 "\n", t.blocks_file_kb * 1024);
		fprintf(f, "tiexec_text_blocks_bytes{way=\"cache\"} %" PRIu64 "\n", t.blocks_cache_kb * 1024);
		fprintf(f, "tiexec_text_blocks_bytes{way=\"copy\"} %" PRIu64 "\n", t.blocks_copy_kb * 1024);
		head(f, "tiexec_processes_blocks_unmeasured", "gauge",
		     "Processes whose contiguous blocks could not be measured (reading frame numbers takes root): their blocks count as base pages.");
		fprintf(f, "tiexec_processes_blocks_unmeasured %" PRIu64 "\n", t.blocks_unmeasured);
	}
	head(f, "tiexec_text_small_bytes", "gauge",
	     "Executable text of those processes left on base pages (not on PMDs nor, where measured, in contiguous blocks), summed over them.");
	fprintf(f, "tiexec_text_small_bytes %" PRIu64 "\n", t.small_kb * 1024);
	head(f, "tiexec_processes_unreadable", "gauge",
	     "Processes whose /proc/PID/smaps could not be read (tiexec-stat not run as root): left out of every count.");
	fprintf(f, "tiexec_processes_unreadable %" PRIu64 "\n", t.unreadable);
	programs(f, &t, blocks);
	for (size_t i = 0; i < t.nprog; i++)
		free(t.prog[i].path);
	free(t.prog);
	*unreadable = t.unreadable;
	if (src->warm && *src->warm)
		warm_state(f, src->warm);
	trace_counters(f, src->trace_counters);
	return ferror(f) ? -1 : 0;
}
