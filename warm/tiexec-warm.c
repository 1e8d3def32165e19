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
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "arch_reloc.h"
#include "cacheconv.h"
#include "fsfolio.h"
#include "json.h"
#include "mark.h"
#include "memlimit.h"
#include "needed.h"
#include "textcache.h"
#include "textentry.h"
#include "trust.h"

#ifndef TIEXEC_VERSION
#define TIEXEC_VERSION "unknown"
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#define HUGE (2ULL << 20)
#define PAGE 4096ULL
#define DEFAULT_CONF "/etc/tiexec/warm.conf"

/* Exit statuses: the worst one wins. */
enum { ST_OK = 0, ST_NOT_WARM = 1, ST_USAGE = 2, ST_FAILED = 3 };

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

static struct {
	int check, json, verbose, prune;
} opt;

/* The shared text cache (common/textcache.h), as warm.conf sets it. */
static struct {
	const char *dir;
	char dir_buf[4096], size[64];
	int off, ready, broken;
} cache = { TEXTCACHE_DIR, "", "", 0, 0, 0 };

/* Files that did not fit in it, for the report at the end. */
struct nofit {
	char *path;
	uint64_t text;
};
static struct nofit *nofit;
static size_t nnofit;

static struct cconv cc = CCONV_INIT(0);

/* ---- targets: the files to look at, each once ---- */

struct use {
	int pid;
	uint64_t lo, hi;  /* file offsets a process maps */
	int shared_write; /* mapped MAP_SHARED and writable */
};

struct target {
	char *path; /* absolute and resolved: the file itself, opened by it */
	dev_t dev;
	ino_t ino;
	struct use *uses;
	size_t nuses;
	int named; /* given by name (not found in a directory): say why skipped */
};

static struct target *targets;
static size_t ntargets;
static int status = ST_OK;

static void worse(int st)
{
	if (st > status)
		status = st;
}

static void fail(const char *path, const char *what, int err)
{
	if (err)
		fprintf(stderr, "tiexec-warm: '%s': %s: %s\n", path, what, strerror(err));
	else
		fprintf(stderr, "tiexec-warm: '%s': %s\n", path, what);
	worse(ST_FAILED);
}

/* A file or directory left out because someone other than root could
 * change it (trust.h): said, and it is not warm. */
static void untrusted(const char *path, const char *why)
{
	fprintf(stderr, "tiexec-warm: '%s': skipped: %s, not only by root\n", path, why);
	worse(ST_NOT_WARM);
}

/* Adds the file path names (resolved, and checked: trust.h).  Returns
 * whether it is a target (new or not). */
static int add_file(const char *path, int named)
{
	char why[PATH_MAX + 64];
	struct stat st;
	char *r = realpath(path, NULL);

	if (!r || lstat(r, &st) < 0) {
		fail(path, "cannot read", errno);
		free(r);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		if (named)
			printf("%s: skipped: not a regular file\n", path);
		free(r);
		return 0;
	}
	if (trust_changeable(r, why, sizeof(why))) {
		untrusted(r, why);
		free(r);
		return 0;
	}
	for (size_t i = 0; i < ntargets; i++)
		if (targets[i].dev == st.st_dev && targets[i].ino == st.st_ino) {
			targets[i].named |= named;
			free(r);
			return 1;
		}
	struct target *t = realloc(targets, (ntargets + 1) * sizeof(*t));
	if (!t) {
		perror("tiexec-warm");
		exit(ST_FAILED);
	}
	targets = t;
	t += ntargets++;
	memset(t, 0, sizeof(*t));
	t->path = r;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->named = named;
	return 1;
}

static void add_tree(const char *path, int named, int (*want)(const char *));

/* A file, or every file under a directory (symbolic links inside a
 * directory are followed to files, not to directories: no loops). */
static void add_path(const char *path, int named, int (*want)(const char *))
{
	struct stat st;

	if (stat(path, &st) < 0) {
		fail(path, "cannot read", errno);
		return;
	}
	if (S_ISDIR(st.st_mode))
		add_tree(path, named, want);
	else if (!want || want(path))
		add_file(path, named);
}

/* Every file under the directory path, each checked (add_file); a
 * directory someone else could change is not looked into. */
static void add_tree(const char *path, int named, int (*want)(const char *))
{
	char why[PATH_MAX + 64];
	char *r = realpath(path, NULL);
	const char *w = r ? trust_changeable(r, why, sizeof(why)) : NULL;

	if (w) {
		untrusted(r, w);
		free(r);
		return;
	}
	DIR *d = r ? opendir(r) : NULL;
	struct dirent *e;

	if (!d) {
		fail(path, "cannot read the directory", errno);
		free(r);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p;
		if (asprintf(&p, "%s/%s", r[1] ? r : "", e->d_name) < 0)
			continue;
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			add_tree(p, 0, want);
		else if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && (!want || want(p)))
			add_file(p, 0);
		free(p);
	}
	closedir(d);
	free(r);
	(void)named;
}

/* ---- ELF: the whole 2 MiB pieces of the executable segments ---- */

struct span {
	uint64_t lo, hi; /* file offsets, 2 MiB-aligned */
};

#define MAX_SPANS 16

/* An ELF file's headers, read once per file. */
struct elf {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
};

/* Reads fd's ELF and program headers into *e; 0, or -1 with *why when the
 * file is not a program or shared library of the loader's machine. */
static int read_elf(int fd, struct elf *e, const char **why)
{
	const Elf64_Ehdr *eh = &e->eh;

	if (pread(fd, &e->eh, sizeof(e->eh), 0) != (ssize_t)sizeof(e->eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG)) {
		*why = "not an ELF file";
		return -1;
	}
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != ARCH_ELF_MACHINE) {
		*why = "not an " ARCH_NAME " ELF file";
		return -1;
	}
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) {
		*why = "not a program or shared library";
		return -1;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > 64 ||
	    pread(fd, e->ph, eh->e_phnum * sizeof(Elf64_Phdr), (off_t)eh->e_phoff) !=
		    (ssize_t)(eh->e_phnum * sizeof(Elf64_Phdr))) {
		*why = "bad program headers";
		return -1;
	}
	return 0;
}

/* The spans (file ranges of whole 2 MiB pieces of read-only executable
 * segments that can be PMD-mapped) of e, a file of size bytes; how many.
 * *incongruent: a segment is not congruent to its file offset. */
static int elf_spans(const struct elf *e, uint64_t size, int program, struct span *sp, int *incongruent)
{
	const Elf64_Phdr *ph = e->ph;
	int n = 0;

	*incongruent = 0;
	for (unsigned i = 0; i < e->eh.e_phnum && n < MAX_SPANS; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) || (p->p_flags & PF_W))
			continue;
		if (p->p_offset > size || p->p_filesz > size - p->p_offset)
			continue; /* a mapping of it would fault (SIGBUS): no process runs it */
		/* A library's segment must be congruent to be PMD-mapped: ld.so
		 * places it at p_vaddr plus a 2 MiB-aligned base (libraries of
		 * 2 MiB or more).  A program's is placed congruent to its file
		 * by tiexec, whatever its p_vaddr (a direct exec of it gets
		 * small pages). */
		if ((p->p_vaddr - p->p_offset) & (HUGE - 1)) {
			*incongruent = 1;
			if (!program)
				continue;
		}
		uint64_t lo = (p->p_offset + HUGE - 1) & -HUGE, hi = (p->p_offset + p->p_filesz) & -HUGE;
		if (lo < hi)
			sp[n++] = (struct span){ lo, hi };
	}
	return n;
}

/* ---- who maps what: /proc/PID/maps, once for all targets ---- */

static void scan_maps_of(int pid)
{
	char path[64], line[4096];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");

	if (!f)
		return; /* gone, or not ours to read */
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, ino;
		unsigned maj, mnr;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perms, &off, &maj, &mnr, &ino) != 7 || !ino)
			continue;
		for (size_t i = 0; i < ntargets; i++) {
			struct target *t = &targets[i];
			if (t->ino != ino || t->dev != makedev(maj, mnr))
				continue;
			struct use *u = realloc(t->uses, (t->nuses + 1) * sizeof(*u));
			if (!u)
				break;
			t->uses = u;
			t->uses[t->nuses++] = (struct use){ pid, off, off + (hi - lo), perms[1] == 'w' && perms[3] == 's' };
		}
	}
	fclose(f);
}

static void scan_maps(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int self = getpid();

	if (!d)
		return;
	while ((e = readdir(d))) {
		int pid = atoi(e->d_name);
		if (pid > 0 && pid != self)
			scan_maps_of(pid);
	}
	closedir(d);
}

/* ---- one file ---- */

struct piece_pids {
	uint64_t off;
	int pids[8];
	unsigned npids;
};

struct result {
	uint64_t aligned, before, after; /* bytes */
	uint64_t converted, collapsed, evicted, cold;
	uint64_t stuck; /* bytes still small after eviction, used by nobody we saw */
	int writing, incongruent, library;
	char no_folios[128]; /* "btrfs keeps 4 KiB folios ...": nothing tried */
	struct piece_pids kept[64];
	unsigned nkept, more_kept;
	int pids[32];
	unsigned npids;
};

static void add_pid(int *v, unsigned *n, unsigned max, int pid)
{
	for (unsigned i = 0; i < *n; i++)
		if (v[i] == pid)
			return;
	if (*n < max)
		v[(*n)++] = pid;
}

/* The processes mapping any of [off, off + HUGE) of t, into pp.  Returns
 * how many there are. */
static unsigned users(const struct target *t, uint64_t off, struct piece_pids *pp)
{
	pp->off = off;
	pp->npids = 0;
	for (size_t i = 0; i < t->nuses; i++)
		if (t->uses[i].lo < off + HUGE && t->uses[i].hi > off)
			add_pid(pp->pids, &pp->npids, 8, t->uses[i].pid);
	return pp->npids;
}

/* Whether some process has fd's file open for writing: a read lease is
 * refused (EAGAIN) then.  Taken and given back at once: a lease held would
 * make a writer's open wait for us.  -1: cannot tell (a lease needs the
 * file's owner or CAP_LEASE). */
static int open_for_writing(int fd)
{
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		return 0;
	}
	return errno == EAGAIN ? 1 : -1;
}

/* Every page of the piece at p in the page cache (mincore sees the cache
 * of a file mapping, faulted in or not)? */
static int resident(uint64_t p)
{
	unsigned char v[HUGE / PAGE];

	if (mincore((void *)(uintptr_t)p, HUGE, v) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(v); i++)
		if (!(v[i] & 1))
			return 0;
	return 1;
}

/* One 2 MiB-aligned slot of address space, for a piece at a time; its
 * reservation in *raw (2 * HUGE bytes, for munmap), or 0. */
static uint64_t slot_reserve(void **raw)
{
	*raw = mmap(NULL, 2 * HUGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return *raw == MAP_FAILED ? 0 : ((uint64_t)(uintptr_t)*raw + HUGE - 1) & -HUGE;
}

/* Our own shared read-only mapping of the piece at off, at slot (2 MiB-
 * aligned, so congruent), MADV_HUGEPAGE: faults read 2 MiB folios. */
static int map_piece(int fd, uint64_t slot, uint64_t off)
{
	if (mmap((void *)(uintptr_t)slot, HUGE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, (off_t)off) == MAP_FAILED)
		return -1;
	madvise((void *)(uintptr_t)slot, HUGE, MADV_HUGEPAGE);
	return 0;
}

/* Whether the piece at off is held in 2 MiB folios, changing nothing:
 * faults in only a piece wholly in the cache (no reads from disk), with
 * readahead off (MADV_RANDOM: a page marked for async readahead would
 * otherwise read what follows), then asks whether our mapping of it is a
 * PMD.  *cached: every page of it is in the cache. */
static int measure(int fd, uint64_t slot, uint64_t off, int *cached)
{
	uint8_t hs = 0;

	*cached = 0;
	if (map_piece(fd, slot, off) < 0)
		return 0;
	madvise((void *)(uintptr_t)slot, HUGE, MADV_RANDOM);
	*cached = resident(slot);
	if (*cached)
		cconv_fault(&cc, slot, slot + HUGE, &hs, 0);
	return hs;
}

/* Converts the piece at off, not warm when measured.  Pieces other
 * processes map (or of a file open for writing) are converted in place
 * only (MADV_COLLAPSE), and only what is cached: reading the rest would
 * add small folios next to theirs. */
static void convert(int fd, const struct target *t, uint64_t slot, uint64_t off, int writing, struct result *r)
{
	struct piece_pids pp;
	int cached;
	uint8_t hs, keep = 1;

	/* Read already, in a 2 MiB folio, by the previous piece's readahead. */
	if (measure(fd, slot, off, &cached)) {
		r->after += HUGE;
		r->converted += HUGE;
		return;
	}
	unsigned nusers = users(t, off, &pp);
	struct cconv_range cr = { fd, slot, slot + HUGE, off, NULL, 0, 0 };
	if (nusers || writing) {
		if (!cached || cc.collapse_unsupported)
			goto kept;
		cr.keep = &keep;
	}
	madvise((void *)(uintptr_t)slot, HUGE, MADV_NORMAL);
	struct cconv_stats cs = { 0, 0 };
	int ok = cconv_convert(&cc, &cr, &hs, &cs) == 0 && hs;
	r->collapsed += cs.collapsed;
	r->evicted += cs.evicted;
	if (ok) {
		r->after += HUGE;
		r->converted += HUGE;
		return;
	}
	r->stuck += nusers ? 0 : HUGE;
kept:
	if (nusers) {
		if (r->nkept < sizeof(r->kept) / sizeof(r->kept[0]))
			r->kept[r->nkept++] = pp;
		else
			r->more_kept++;
	}
}

/* A JSON line's start: {"path":"PATH" (json.h: valid UTF-8 whatever the
 * name's bytes). */
static void json_path(const char *path)
{
	fputs("{\"path\":", stdout);
	json_str(stdout, path);
}

static void report(const struct target *t, const struct result *r)
{
	if (opt.json) {
		json_path(t->path);
		printf(",\"route\":\"file\",\"aligned_kb\":%" PRIu64 ",\"warm_before_kb\":%" PRIu64 ",\"warm_kb\":%" PRIu64
		       ",\"converted_kb\":%" PRIu64 ",\"cold_before_kb\":%" PRIu64 ",\"collapsed\":%" PRIu64
		       ",\"evicted\":%" PRIu64 ",\"stuck_kb\":%" PRIu64 ",\"open_for_writing\":%s,\"incongruent\":%s,"
		       "\"no_large_folios\":%s,\"kept\":[",
		       r->aligned >> 10, r->before >> 10, r->after >> 10, r->converted >> 10, r->cold >> 10,
		       r->collapsed, r->evicted, r->stuck >> 10, r->writing > 0 ? "true" : "false",
		       r->incongruent ? "true" : "false", r->no_folios[0] ? "true" : "false");
		for (unsigned i = 0; i < r->nkept; i++) {
			printf("%s{\"offset\":%" PRIu64 ",\"pids\":[", i ? "," : "", r->kept[i].off);
			for (unsigned j = 0; j < r->kept[i].npids; j++)
				printf("%s%d", j ? "," : "", r->kept[i].pids[j]);
			printf("]}");
		}
		printf("],\"pids\":[");
		for (unsigned i = 0; i < r->npids; i++)
			printf("%s%d", i ? "," : "", r->pids[i]);
		printf("]}\n");
		return;
	}
	printf("%s: %.1f of %.1f MiB warm", t->path, r->after / 1048576.0, r->aligned / 1048576.0);
	if (!opt.check)
		printf(" (%.1f before)", r->before / 1048576.0);
	if (opt.check && r->cold)
		printf(", %.1f MiB not cached", r->cold / 1048576.0);
	if (r->no_folios[0])
		printf(", left alone: %s", r->no_folios);
	if (r->writing > 0)
		printf(", left alone: open for writing");
	if (r->stuck)
		printf(", %.1f MiB kept small: dirty pages not yet written back (or mapped meanwhile)",
		       r->stuck / 1048576.0);
	if (r->nkept || r->more_kept) {
		printf(", kept small: in use by PID");
		for (unsigned i = 0; i < r->npids; i++)
			printf("%s %d", i ? "," : "", r->pids[i]);
	} else if (opt.check && r->npids && r->after < r->aligned) {
		printf(", mapped by PID");
		for (unsigned i = 0; i < r->npids; i++)
			printf("%s %d", i ? "," : "", r->pids[i]);
	}
	printf("\n");
	if (opt.verbose) {
		if (r->incongruent)
			printf("%s: an executable segment is not congruent to its file offset modulo 2 MiB: %s\n", t->path,
			       r->library ? "no process maps it with 2 MiB pages from the page cache (the text cache can)"
					  : "tiexec places it congruent; a direct exec gets 4 KiB pages");
		for (unsigned i = 0; i < r->nkept; i++) {
			printf("%s: piece at 0x%" PRIx64 " mapped by PID", t->path, r->kept[i].off);
			for (unsigned j = 0; j < r->kept[i].npids; j++)
				printf("%s %d", j ? "," : "", r->kept[i].pids[j]);
			printf("\n");
		}
		if (!opt.check && (r->collapsed || r->evicted))
			printf("%s: %" PRIu64 " pieces collapsed in place, %" PRIu64 " evicted and read back\n", t->path,
			       r->collapsed, r->evicted);
	}
}

/* ---- the shared text cache: files the page cache cannot serve ---- */

/* The whole 2 MiB pieces at 2 MiB-aligned addresses of text segment p's
 * file data, [*lo, *hi) (empty when *hi <= *lo). */
static void text_pieces(const Elf64_Phdr *p, uint64_t *lo, uint64_t *hi)
{
	*lo = (p->p_vaddr + HUGE - 1) & -HUGE;
	*hi = (p->p_vaddr + p->p_filesz) & -HUGE;
}

/* Bytes of file data in the executable segments: the text an entry holds;
 * *pieces: whole 2 MiB pieces of it at 2 MiB-aligned addresses. */
static uint64_t text_bytes(const struct elf *e, uint64_t *pieces)
{
	const Elf64_Phdr *ph = e->ph;
	uint64_t n = 0;

	*pieces = 0;
	for (unsigned i = 0; i < e->eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			uint64_t lo, hi;
			text_pieces(&ph[i], &lo, &hi);
			n += ph[i].p_filesz;
			*pieces += hi > lo ? (hi - lo) / HUGE : 0;
		}
	return n;
}

/* A shared library: ET_DYN without PT_INTERP (a static PIE counts too). */
static int library(const struct elf *e)
{
	if (e->eh.e_type != ET_DYN)
		return 0;
	for (unsigned i = 0; i < e->eh.e_phnum; i++)
		if (e->ph[i].p_type == PT_INTERP)
			return 0;
	return 1;
}

/* The cache's size where tiexec-warm mounts it and warm.conf names none:
 * a quarter of the machine's memory, and no more than tiexec-warm's memory
 * cgroup has room for, since the entries are charged to it (a tmpfs's own
 * default, half, would let the cache push the cgroup into its OOM killer
 * before "full" is ever said).  In bytes, whole 2 MiB pages. */
static void default_cache_size(char *buf, size_t n)
{
	struct memlimit m;
	uint64_t size = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 4;

	memlimit_room(&m);
	if ((m.by == ML_CGROUP_V1 || m.by == ML_CGROUP_V2) && m.room < size)
		size = m.room;
	size &= ~(HUGE - 1);
	snprintf(buf, n, "%" PRIu64, size > HUGE ? size : (uint64_t)HUGE);
}

/* The cache mounted and trusted, once; else said once. */
static int cache_ready(void)
{
	char why[600];

	if (cache.ready || cache.broken)
		return cache.ready;
	const char *u = NULL;
	if (!cache.size[0])
		default_cache_size(cache.size, sizeof(cache.size));
	if (textentry_mount(cache.dir, cache.size, why, sizeof(why)) < 0 ||
	    (u = textcache_dir_untrusted(cache.dir))) {
		fprintf(stderr, "tiexec-warm: '%s': the text cache: %s%s\n", cache.dir, u ? u : why,
			u ? ": the loader would not use it" : "");
		worse(ST_FAILED);
		cache.broken = 1;
		return 0;
	}
	cache.ready = 1;
	return 1;
}

static const char *const cache_word[] = {
	[TE_MADE] = "made", [TE_PRESENT] = "present", [TE_FAILED] = "failed", [TE_STALE] = "stale",
};

/* How much of the text in the entry of the file open at fd is in 2 MiB
 * pages, of *aligned bytes of whole pieces: each piece mapped at a slot of
 * its own, faulted in and asked as the loader asks one of them at every
 * start (interp/huge.c: entry_holds). */
static uint64_t entry_huge(int fd, const struct elf *e, uint64_t *aligned)
{
	uint64_t off[TEXTCACHE_PH_MAX], huge = 0;

	*aligned = 0;
	int efd = textentry_open(cache.dir, fd, off);
	if (efd < 0)
		return 0;
	void *raw;
	uint64_t slot = slot_reserve(&raw);
	if (!slot) {
		close(efd);
		return 0;
	}
	for (unsigned i = 0; i < e->eh.e_phnum && i < TEXTCACHE_PH_MAX; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X))
			continue;
		uint64_t lo, hi;
		text_pieces(p, &lo, &hi);
		for (uint64_t v = lo; v < hi; v += HUGE) {
			uint8_t hs = 0;
			*aligned += HUGE;
			if (map_piece(efd, slot, off[i] + (v - p->p_vaddr)) == 0)
				cconv_fault(&cc, slot, slot + HUGE, &hs, 0);
			huge += hs ? HUGE : 0;
		}
	}
	munmap(raw, 2 * HUGE);
	close(efd);
	return huge;
}

/* Memory an entry of the file (headers e, size bytes) may take: its
 * content in 2 MiB pages, and a page more for each executable segment
 * moved to the end. */
static uint64_t entry_estimate(const struct elf *e, uint64_t size)
{
	uint64_t n = (size + HUGE - 1) & -HUGE;

	for (unsigned i = 0; i < e->eh.e_phnum; i++)
		if (e->ph[i].p_type == PT_LOAD && (e->ph[i].p_flags & PF_X))
			n += HUGE;
	return n;
}

/* The entry of the file open at fd, made unless --check (in a cache
 * ready for it), and how much of it is in 2 MiB pages (*huge of
 * *aligned).  One found split (swapped out and back, say) is made again:
 * the loader, which asks one piece of it, would take all of it for huge.
 * An entry is made only where it fits in what tiexec-warm's own memory
 * cgroup (and the machine) has room for: entries are charged to the
 * cgroup that writes them, and one that did not fit would get tiexec-warm
 * OOM-killed.  TE_FAILED with textentry_make's errno (ENOMEM: no room). */
static enum te_result cache_entry(const struct target *t, int fd, const struct elf *e, uint64_t size, uint64_t *bytes,
				  uint64_t *huge, uint64_t *aligned, const char **step)
{
	enum te_result r = textentry_find(cache.dir, fd, bytes);

	if (!opt.check && r != TE_PRESENT) {
		struct memlimit m;
		memlimit_room(&m);
		if (m.by != ML_NONE && entry_estimate(e, size) > m.room)
			return errno = ENOMEM, TE_FAILED;
		r = textentry_make(cache.dir, t->path, fd, bytes, step);
	}
	if (r == TE_FAILED || r == TE_STALE)
		return r;
	*huge = entry_huge(fd, e, aligned);
	if (*huge < *aligned && !opt.check && r == TE_PRESENT && textentry_remove(cache.dir, fd) == 0) {
		r = textentry_make(cache.dir, t->path, fd, bytes, step);
		if (r != TE_FAILED)
			*huge = entry_huge(fd, e, aligned);
	}
	return r;
}

/* Why no entry may be made of the file t open at fd now, into why (n
 * bytes), or NULL.  An entry is readable by everyone and serves the text
 * until the file's identity changes, so: a file everyone may read along
 * its whole path, that nobody has open for writing or mapped shared and
 * writable (a write through such a mapping changes no timestamp). */
static const char *refusal(const struct target *t, int fd, char *why, size_t n)
{
	char w[PATH_MAX + 64];

	if (trust_unreadable(t->path, w, sizeof(w)))
		return snprintf(why, n, "%s, and an entry would be", w), why;
	for (size_t i = 0; i < t->nuses; i++)
		if (t->uses[i].shared_write)
			return snprintf(why, n, "PID %d maps it shared and writable", t->uses[i].pid), why;
	int wr = open_for_writing(fd);
	if (wr > 0)
		return snprintf(why, n, "it is open for writing"), why;
	if (wr < 0)
		return snprintf(why, n, "cannot tell whether it is open for writing (a read lease needs its owner or CAP_LEASE)"),
		       why;
	return NULL;
}

/* A file whose text the page cache cannot hold in 2 MiB folios (why):
 * its entry in the text cache, made unless --check. */
static void cache_target(const struct target *t, int fd, const struct elf *e, uint64_t size, const char *why)
{
	uint64_t bytes = 0, huge = 0, aligned = 0, pieces, text = text_bytes(e, &pieces);
	enum te_result r;
	char refused[PATH_MAX + 256] = "", what[PATH_MAX + 256];
	const char *step = "";
	int full = 0, no_cache = 0;

	if (!pieces) {
		if (t->named || opt.verbose)
			printf("%s: skipped: less than one 2 MiB page of text\n", t->path);
		return;
	}
	if (!opt.check && refusal(t, fd, refused, sizeof(refused)))
		r = TE_FAILED; /* refused[] says why */
	else if (!opt.check && !cache_ready())
		r = TE_FAILED, no_cache = 1; /* said once, by cache_ready */
	else if ((r = cache_entry(t, fd, e, size, &bytes, &huge, &aligned, &step)) == TE_FAILED && !opt.check) {
		if (errno == ENOSPC || errno == ENOMEM) {
			full = 1;
			struct nofit *nf = realloc(nofit, (nnofit + 1) * sizeof(*nf));
			if (nf) {
				nofit = nf;
				nofit[nnofit++] = (struct nofit){ strdup(t->path), text };
			}
		} else {
			int err = errno;
			snprintf(what, sizeof(what), "cannot make its text cache entry in '%s': %s%s", cache.dir, step,
				 err == ENOEXEC ? ": an executable segment overlaps another loadable segment"
				 : err == EAGAIN ? ": it changed while it was copied" : "");
			fail(t->path, what, err == ENOEXEC || err == EAGAIN ? 0 : err);
		}
	}
	const char *state = refused[0] ? "refused" : full ? "full" : opt.check && r == TE_FAILED ? "absent" : cache_word[r];
	if (r == TE_FAILED || r == TE_STALE || huge < aligned)
		worse(ST_NOT_WARM);
	if (opt.json) {
		json_path(t->path);
		printf(",\"route\":\"cache\",\"why\":");
		json_str(stdout, why);
		printf(",\"cache\":\"%s\",\"text_kb\":%" PRIu64 ",\"huge_kb\":%" PRIu64 ",\"aligned_kb\":%" PRIu64
		       ",\"cache_kb\":%" PRIu64 "}\n",
		       state, text >> 10, huge >> 10, aligned >> 10, bytes >> 10);
		return;
	}
	if (r == TE_FAILED || r == TE_STALE)
		printf("%s: %.1f MiB of text not in the text cache (%s%s)%s%s\n", t->path, text / 1048576.0,
		       refused[0] ? "refused: " : full ? "the cache is full" : r == TE_STALE ? "its entry's text differs from the file's"
		       : opt.check ? "no entry" : no_cache ? "failed: the text cache is not usable, as said above" : "failed",
		       refused, why ? ", which it needs: " : "", why ? why : "");
	else
		printf("%s: %.1f MiB of text in the text cache (%s%s, %.1f of %.1f MiB in 2 MiB pages, %.1f MiB in memory): %s\n",
		       t->path, text / 1048576.0, cache_word[r], r == TE_MADE ? " now" : "", huge / 1048576.0,
		       aligned / 1048576.0, bytes / 1048576.0, why);
}

static void do_target(const struct target *t)
{
	struct span sp[MAX_SPANS];
	struct result r;
	const char *why = NULL;
	struct stat st, want = { .st_dev = t->dev, .st_ino = t->ino };
	int fd = trust_open(t->path, &want, &st);

	if (fd < 0) {
		fail(t->path, errno == ESTALE ? "cannot read: it was replaced since it was checked" : "cannot read", errno == ESTALE ? 0 : errno);
		return;
	}
	memset(&r, 0, sizeof(r));
	static struct elf e;
	int n = read_elf(fd, &e, &why);
	if (n < 0) {
		if (t->named || opt.verbose)
			printf("%s: skipped: %s\n", t->path, why);
		close(fd);
		return;
	}
	int lib = r.library = library(&e);
	n = elf_spans(&e, (uint64_t)st.st_size, !lib, sp, &r.incongruent);
	struct fs_info fi;
	fs_folios(fd, &fi);
	if (fi.folios == FS_FOLIOS_NO)
		snprintf(r.no_folios, sizeof(r.no_folios), "%s keeps 4 KiB folios in the page cache on Linux %u.%u",
			 fi.name, fi.major, fi.minor);
	/* tiexec places a program congruent to its file, whatever its
	 * p_vaddr: only a library's (placed by ld.so, 2 MiB-aligned) or a
	 * file system without large folios needs the cache. */
	if (!cache.off && (r.no_folios[0] || (r.incongruent && lib))) {
		cache_target(t, fd, &e, (uint64_t)st.st_size,
			     r.no_folios[0] ? r.no_folios : "its text is not congruent to its file offset modulo 2 MiB");
		close(fd);
		return;
	}
	/* Nothing to put on 2 MiB pages (most shared libraries a stamped
	 * program needs): a word only when asked. */
	if (n == 0) {
		if (t->named || opt.verbose)
			printf("%s: skipped: no whole 2 MiB page of text%s\n", t->path,
			       r.incongruent ? " congruent to its file offset" : "");
		close(fd);
		return;
	}
	/* One 2 MiB-aligned slot of address space for every piece in turn. */
	void *raw;
	uint64_t slot = slot_reserve(&raw);
	if (!slot) {
		fail(t->path, "no address space", errno);
		close(fd);
		return;
	}
	/* First what is warm (a true "before"), then the conversion. */
	uint64_t npieces = 0, k = 0;
	for (int i = 0; i < n; i++)
		npieces += (sp[i].hi - sp[i].lo) / HUGE;
	uint8_t *warm = calloc(npieces ? npieces : 1, 1);
	if (!warm) {
		perror("tiexec-warm");
		exit(ST_FAILED);
	}
	for (int i = 0; i < n; i++)
		for (uint64_t off = sp[i].lo; off < sp[i].hi; off += HUGE, k++) {
			int cached;
			struct piece_pids pp;
			warm[k] = (uint8_t)measure(fd, slot, off, &cached);
			r.aligned += HUGE;
			r.before += warm[k] ? HUGE : 0;
			r.cold += cached ? 0 : HUGE;
			if (!warm[k] && users(t, off, &pp))
				for (unsigned j = 0; j < pp.npids; j++)
					add_pid(r.pids, &r.npids, 32, pp.pids[j]);
		}
	r.after = r.before;
	if (!opt.check && r.before < r.aligned && !r.no_folios[0]) {
		r.writing = open_for_writing(fd);
		k = 0;
		for (int i = 0; i < n; i++)
			for (uint64_t off = sp[i].lo; off < sp[i].hi; off += HUGE, k++)
				if (!warm[k])
					convert(fd, t, slot, off, r.writing != 0, &r);
	}
	free(warm);
	munmap(raw, 2 * HUGE);
	close(fd);
	report(t, &r);
	if (r.after < r.aligned)
		worse(ST_NOT_WARM);
}

static int bigger_first(const void *a, const void *b)
{
	const struct nofit *x = a, *y = b;

	return x->text < y->text ? 1 : x->text > y->text ? -1 : 0;
}

/* The files the text cache had no room for, biggest first. */
static void report_nofit(void)
{
	if (!nnofit)
		return;
	qsort(nofit, nnofit, sizeof(*nofit), bigger_first);
	fprintf(stderr, "tiexec-warm: '%s': the text cache is full (raise cache-size); not cached, biggest first:",
		cache.dir);
	for (size_t i = 0; i < nnofit; i++)
		fprintf(stderr, "%s %s (%.1f MiB)", i ? "," : "", nofit[i].path, nofit[i].text / 1048576.0);
	fprintf(stderr, "\n");
}

/* ---- the configuration file ---- */

/* A program stamped by tiexec-stamp: the marker bit in its first program
 * header's p_flags (common/mark.h). */
static int stamped(const char *path)
{
	unsigned char id[4], b;
	struct stat st;
	int fd = trust_open(path, NULL, &st);
	int yes = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, id, 4, 0) == 4 && !memcmp(id, ELFMAG, SELFMAG) && pread(fd, &b, 1, TIEXEC_MARK_BYTE) == 1)
		yes = (b & (TIEXEC_MARK_FLAG >> 16)) != 0;
	close(fd);
	return yes;
}

/* A library a stamped program needs: a target if it passes the rule
 * (then its own libraries are looked at too). */
static int add_library(const char *path)
{
	return add_file(path, 0);
}

static void add_stamped_tree(const char *dir)
{
	size_t first = ntargets;

	add_path(dir, 0, stamped);
	for (size_t i = first, end = ntargets; i < end; i++)
		needed_libs(targets[i].path, add_library);
}

/* ---- who may change what we read ---- */

/* Why someone other than root (or whoever runs us) could change what path
 * names (trust.h), or NULL; a path that cannot be resolved is reported
 * where it is read. */
static const char *changeable(const char *path, char *why, size_t n)
{
	char *r = realpath(path, NULL);
	const char *w = r ? trust_changeable(r, why, n) : NULL;

	free(r);
	return w;
}

/* Whether an entry of the configuration may be read: else says why. */
static int trusted(const char *conf, unsigned lineno, const char *path)
{
	char why[PATH_MAX + 64];

	if (!changeable(path, why, sizeof(why)))
		return 1;
	fprintf(stderr, "tiexec-warm: '%s': line %u: '%s' left out: %s, not only by root\n", conf, lineno, path,
		why);
	worse(ST_FAILED);
	return 0;
}

/* "cache off", "cache DIR", "cache-size SIZE" (a tmpfs size=: 512m, 10%):
 * the shared text cache.  Returns whether s was such a line. */
static int cache_line(const char *conf, unsigned lineno, char *s)
{
	char *v;

	if (!strncmp(s, "cache-size", 10) && (s[10] == ' ' || s[10] == '\t')) {
		for (v = s + 10; *v == ' ' || *v == '\t'; v++)
			;
		if (strspn(v, "0123456789kmgKMG%") != strlen(v) || !*v || strlen(v) >= sizeof(cache.size)) {
			fprintf(stderr, "tiexec-warm: '%s': line %u: cache-size wants a size such as 512m or 10%%\n", conf,
				lineno);
			worse(ST_FAILED);
		} else {
			strcpy(cache.size, v);
		}
		return 1;
	}
	if (strncmp(s, "cache", 5) || (s[5] != ' ' && s[5] != '\t'))
		return 0;
	for (v = s + 5; *v == ' ' || *v == '\t'; v++)
		;
	if (!strcmp(v, "off")) {
		cache.off = 1;
	} else if (*v == '/' && strlen(v) < sizeof(cache.dir_buf)) {
		strcpy(cache.dir_buf, v);
		cache.dir = cache.dir_buf;
		cache.off = 0;
	} else {
		fprintf(stderr, "tiexec-warm: '%s': line %u: cache wants 'off' or an absolute directory\n", conf, lineno);
		worse(ST_FAILED);
	}
	return 1;
}

/* Lines: a path or a glob (files or directories); "stamped DIR": every
 * program tiexec-stamp marked under DIR and the libraries it needs; '#'
 * starts a comment. */
static int read_config(const char *path, int must_exist)
{
	char line[4096], why[PATH_MAX + 64];
	unsigned lineno = 0;
	struct stat st, want;
	/* Resolved once, checked, and read through the descriptor of what was
	 * checked. */
	char *r = realpath(path, NULL);
	const char *w = r && lstat(r, &want) == 0 ? trust_changeable(r, why, sizeof(why)) : NULL;
	int fd = !r || w ? -1 : trust_open(r, &want, &st);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;

	free(r);
	if (w) {
		fprintf(stderr, "tiexec-warm: '%s': refused: %s, not only by root\n", path, why);
		worse(ST_FAILED);
		return -1;
	}
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		fail(path, errno == EINVAL ? "cannot read the configuration: not a regular file" : "cannot read the configuration",
		     errno == EINVAL ? 0 : errno);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char *s = line, *e;
		if ((e = strchr(s, '#')))
			*e = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		for (e = s + strlen(s); e > s && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		if (!*s)
			continue;
		if (cache_line(path, lineno, s))
			continue;
		if (!strncmp(s, "stamped", 7) && (s[7] == ' ' || s[7] == '\t')) {
			for (s += 7; *s == ' ' || *s == '\t'; s++)
				;
			if (trusted(path, lineno, s))
				add_stamped_tree(s);
			continue;
		}
		if (*s != '/') {
			fprintf(stderr, "tiexec-warm: '%s': line %u: not an absolute path or 'stamped DIR'\n", path,
				lineno);
			worse(ST_FAILED);
			continue;
		}
		glob_t g;
		if (glob(s, GLOB_NOSORT, NULL, &g) == 0) {
			for (size_t i = 0; i < g.gl_pathc; i++)
				if (trusted(path, lineno, g.gl_pathv[i]))
					add_path(g.gl_pathv[i], 0, NULL);
			globfree(&g);
		} else if (opt.verbose) {
			printf("%s: line %u: nothing matches '%s'\n", path, lineno, s);
		}
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'c' },   { "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' }, { "config", required_argument, NULL, 'f' },
		{ "prune", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },    { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': opt.check = 1; break;
		case 'j': opt.json = 1; break;
		case 'v': opt.verbose = 1; break;
		case 'f': config = optarg; break;
		case 'p': opt.prune = 1; break;
		case 'h': fputs(usage, stdout); return ST_OK;
		case 'V': puts("tiexec-warm " TIEXEC_VERSION); return ST_OK;
		default: fputs("Try 'tiexec-warm --help'.\n", stderr); return ST_USAGE;
		}
	}
	/* TIEXEC_CACHE, as for the loader, names the text cache's directory
	 * (empty: none); a cache line of the configuration wins over it. */
	const char *ce = getenv("TIEXEC_CACHE");
	if (ce && *ce && strlen(ce) < sizeof(cache.dir_buf) && *ce == '/') {
		strcpy(cache.dir_buf, ce);
		cache.dir = cache.dir_buf;
	} else if (ce && !*ce) {
		cache.off = 1;
	}
	/* For the tests: the fallbacks of kernels before 5.14/6.7. */
	const char *compat = getenv("TIEXEC_WARM_COMPAT");
	cc.compat = compat && *compat == '1';

	const char *listed = config ? config : optind == argc ? DEFAULT_CONF : NULL;
	if (listed)
		read_config(listed, config != NULL);
	if (listed && optind == argc && !ntargets && status == ST_OK && !opt.prune && !opt.json)
		printf("%s: lists no files: nothing to do\n", listed);
	if (opt.prune) {
		int n = cache.off ? 0 : textentry_prune(cache.dir);
		if (n < 0 && errno != ENOENT)
			fail(cache.dir, "cannot read the text cache", errno);
		else if (!opt.json)
			printf("%s: %d entries removed\n", cache.dir, n < 0 ? 0 : n);
		return status;
	}
	for (int i = optind; i < argc; i++)
		add_path(argv[i], 1, NULL);
	if (ntargets)
		scan_maps();
	if (opt.verbose && !opt.json)
		printf("measured: %s on our own congruent mapping of each piece, faulted in only where wholly cached\n",
		       cc.compat ? "the last page of each piece in /proc/self/pagemap, after one read of its first"
				   " byte"
				 : "PAGEMAP_SCAN (PAGE_IS_HUGE)");
	for (size_t i = 0; i < ntargets; i++)
		do_target(&targets[i]);
	report_nofit();
	if (opt.verbose && !opt.json && cc.scan == 0 && !cc.compat)
		printf("measured: PAGEMAP_SCAN unavailable (Linux < 6.7): the last page of each piece in "
		       "/proc/self/pagemap instead\n");
	cconv_close(&cc);
	return status;
}
