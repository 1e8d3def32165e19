/* tiexec-warm, by concern:
 *   tiexec-warm.c   the options and the order of the work
 *   warm-config.c   warm.conf: paths, globs, "stamped DIR", the cache lines
 *   warm-targets.c  the files to look at, each once, and who maps them
 *   warm-elf.c      their headers (libelf) and whole 2 MiB pieces of text
 *   warm-pieces.c   one piece of the page cache: measured, converted
 *   warm-file.c     one file through the page cache, and its report
 *   warm-cache.c    one file through the shared text cache instead
 *   warm-plan.c     the programs' plan records (their libraries, walked)
 *   warm-say.c      messages and the exit status
 *   trust.c, textentry.c, needed.c: the ownership rule, cache entries, the
 *   libraries a program needs.
 * All state is one struct warm, made by main and passed down. */
#pragma once

#include <elf.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "cacheconv.h"
#include "textcache.h"

#define DEFAULT_CONF "/etc/tiexec/warm.conf"

/* Exit statuses: the worst one wins. */
enum { ST_OK = 0, ST_NOT_WARM = 1, ST_USAGE = 2, ST_FAILED = 3 };

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
	int planned; /* a program's first library, placed by the loader's plan */
	int window; /* a program's libc: its window entry (textcache.h) */
};

/* Files that did not fit in the text cache, for the report at the end. */
struct nofit {
	char *path;
	uint64_t text;
};

struct warm {
	struct {
		int check, json, verbose, prune;
	} opt;
	int windows_off; /* warm.conf's "windows off": no window entries */
	/* The shared text cache (common/textcache.h), as warm.conf sets it. */
	struct {
		const char *dir;
		char dir_buf[PATH_MAX], size[64];
		int off, ready, broken;
	} cache;
	struct nofit *nofit;
	size_t nnofit;
	struct cconv cc;         /* the page cache's bookkeeping (cacheconv.c) */
	int blocks;              /* pieces are contiguous blocks, not PMDs (geom_blocks) */
	struct target *targets;  /* the files to look at */
	size_t ntargets;
	int status;              /* ST_*: the worst so far */
};

struct span {
	uint64_t lo, hi; /* file offsets, 2 MiB-aligned */
};

#define MAX_SPANS 16

/* An ELF file's headers, read once per file. */
struct elf {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
};

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

/* warm-say.c */
void worse(struct warm *w, int st);
void fail(struct warm *w, const char *path, const char *what, int err);
void untrusted(struct warm *w, const char *path, const char *why);
void json_path(const char *path);

/* warm-targets.c */
struct target *add_file(struct warm *w, const char *path, int named);
void add_planned_libraries(struct warm *w);
int interp_path(int fd, const struct elf *e, char *path, size_t n);
void add_path(struct warm *w, const char *path, int named, int (*want)(const char *));
void scan_maps(struct warm *w);

/* warm-elf.c */
int read_elf(int fd, struct elf *e, const char **why);
int elf_spans(const struct elf *e, uint64_t size, int program, struct span *sp, int *incongruent);
void text_pieces(const Elf64_Phdr *p, uint64_t *lo, uint64_t *hi);
uint64_t text_bytes(const struct elf *e, uint64_t *pieces);
int library(const struct elf *e);
/* A library glibc's ld.so maps into a reservation of its own: p_align
 * above the page and below 2 MiB (GNU ld's arm64 default, 64 KiB). */
int reserved_library(const struct elf *e);
/* Why a library (e, open at fd) gets no use of 2 MiB pieces from the page
 * cache nor from an entry, into why[n], or NULL.  glibc's
 * ld.so (2.35+) places a library whose segments ask for an alignment
 * above the page size (GNU ld's arm64 default: 64 KiB) at that alignment
 * in an anonymous reservation, which the kernel does not 2 MiB-align: its
 * base is 2 MiB-aligned about one start in 2 MiB / p_align.  Where the
 * alignment is the page size, ld.so maps the file itself, and the kernel
 * places a file mapping of 2 MiB or more 2 MiB-aligned (x86-64's GNU ld
 * default).  A library that needs musl's libc is musl's ld.so's, which
 * maps the file itself; any other is taken for glibc's, the distribution's
 * ld.so.  A library of a program tiexec-warm is given is the exception
 * (planned): the loader decides where ld.so maps it (interp/libplan.c). */
const char *unplaced_library(const struct elf *e, int fd, int planned, char *why, size_t n);

/* warm-pieces.c */
void add_pid(int *v, unsigned *n, unsigned max, int pid);
unsigned users(const struct target *t, uint64_t off, struct piece_pids *pp);
int open_for_writing(int fd);
uint64_t slot_reserve(void **raw);
int map_piece(int fd, uint64_t slot, uint64_t off);
int measure(struct cconv *cc, int fd, uint64_t slot, uint64_t off, int *cached);
void convert(struct cconv *cc, int fd, const struct target *t, uint64_t slot, uint64_t off, int writing,
	     struct result *r);

/* warm-file.c */
void do_target(struct warm *w, const struct target *t);

/* warm-cache.c */
void cache_target(struct warm *w, const struct target *t, int fd, const struct elf *e, uint64_t size, const char *why);
/* A library the loader gives a window (t->window): its window entry in the
 * text cache (textcache.h), made unless --check. */
void window_target(struct warm *w, const struct target *t, int fd, const struct elf *e);
void report_nofit(struct warm *w);
/* Whether the text cache is there to write to: mounted and trusted on
 * first use (said on stderr once where it is not). */
int cache_ready(struct warm *w);

/* warm-plan.c: the plan record (common/planrec.h) of every dynamically
 * linked program among the targets, unless --check or no cache. */
void plan_records(struct warm *w);

/* warm-config.c */
int read_config(struct warm *w, const char *path, int must_exist);
