/* The libraries glibc's ld.so will map for a program, in its order, read
 * from the files before ld.so runs (libplan.c plans where they land).
 *
 * ld.so loads breadth first: the program's DT_NEEDED in order, then each
 * new library's in turn (_dl_map_object_deps), skipping a name it has
 * loaded (a name asked for, or a DT_SONAME) and a file it has loaded
 * (here: a path it found).
 * Each name is found as ld.so finds it, minus ld.so.cache: DT_RPATH of the
 * object (and of the program, without DT_RUNPATH), DT_RUNPATH, with
 * $ORIGIN; then the default directories, which is where ld.so.cache points
 * on Debian.  The walk stops at the first name it cannot find: from there
 * on it would not know ld.so's order (ld.so.cache naming another
 * directory, a library that is missing).  Opens each library once to read
 * its headers and dynamic section.  Never exits, never prints. */
#pragma once

#include <elf.h>
#include <limits.h>
#include <stdint.h>
#include <linux/stat.h>

#include "geom.h"
#include "ldplan.h"

#define WALK_MAX 32      /* libraries followed */
#define WALK_POOL 16384  /* their names, search paths and paths */

/* A file's identity, as textcache_name takes it (statx): a plan record
 * (planrec.h) holds its libraries' and checks them against the files. */
struct walk_id {
	uint64_t ino, size;
	int64_t mtime, ctime;
	uint32_t dev_major, dev_minor, mtime_ns, ctime_ns;
};

struct walk_lib {
	struct ldplan_req req; /* its mmap request; target: a whole 2 MiB piece of text at req.residue */
	uint16_t path;         /* where it was found (pool) */
	uint16_t need, nneed;  /* its DT_NEEDED names, one after another (pool) */
	uint16_t run;          /* its DT_RUNPATH, else DT_RPATH (pool; 0: none) */
	uint8_t rpath;         /* run is a DT_RPATH */
	uint8_t how;           /* 1: found in its search path; 2: in a default directory */
	uint8_t reserve;       /* a reservation of its own (p_align above the page) */
	uint64_t ro_end;       /* its read-only image's end, from its start, where
				* that image is its file's first bytes and fits
				* a 2 MiB window (0: not so) */
	uint64_t win_at;       /* where its start lies in that window
				* (textcache_window_at; 0: no window) */
	int fd;                /* the file, open, where ld.so's mapping of it may
				* be one the kernel places itself (page-aligned,
				* 2 MiB or more: walk_kernel_places): the
				* caller's to close; else -1 */
	struct walk_id id;     /* its identity, in a plan record (else zeros) */
};

/* An object whose DT_NEEDED names the walk follows: the program or a
 * library. */
struct walk_obj {
	uint16_t need, nneed, run;
	int rpath;
	const char *dir; /* for $ORIGIN */
};

struct walk {
	unsigned n;           /* libraries, in ld.so's order */
	int complete;         /* every name was followed (the walk did not stop) */
	int done;             /* no more: complete, or stopped at a name */
	uint16_t stop;        /* the name it stopped at (pool; 0: none) */
	int stop_err;         /* why a candidate file did not open (-errno), or 0 */
	int cur;              /* the library whose names are followed (-1: the program's) */
	struct walk_obj po, o; /* the program, and the object followed */
	uint16_t name, left;  /* the next name of o (pool), and how many are left */
	struct walk_lib lib[WALK_MAX];
	uint16_t names[2 * WALK_MAX + 8]; /* names already loaded (pool) */
	unsigned nnames;
	unsigned used;
	int origin_used;      /* the program's search path names $ORIGIN */
	/* A walk read from a plan record (planrec.h): rec set, the libraries
	 * given out one by one (next) up to the last that may be a target
	 * (ncand); stale: one of them changed since the record was made. */
	int rec, stale;
	unsigned next, ncand;
	unsigned glibc_minor; /* a record's: its ld.so's (glibc_minor) */
	char pool[WALK_POOL];
	char origin[PATH_MAX], dir[PATH_MAX]; /* $ORIGIN of the program, of o */
};

/* Starts a walk in w of the libraries of the program open at prog_fd
 * (its program headers ph[0..phnum), as its file has them).  interp:
 * ld.so's path (its name counts as loaded); origin: the program's
 * directory for $ORIGIN. */
void libwalk_start(struct walk *w, int prog_fd, const Elf64_Phdr *ph, unsigned phnum, const char *interp,
		   const char *origin);

/* The next library ld.so will map, in its order, or NULL: all followed
 * (w->complete), or a name the walk could not follow. */
const struct walk_lib *libwalk_next(struct walk *w);

/* Whether ld.so's mapping of library l may be one the kernel places
 * itself (page-aligned, 2 MiB or more: 2 MiB-aligned from Linux 5.18). */
static inline int walk_kernel_places(const struct walk_lib *l)
{
	return !l->reserve && l->req.len >= TX_HUGE;
}

/* The identity of the file statx gave as st into *id, and back: *st
 * with the fields of the identity (textcache_name's), the rest 0. */
void walk_id_of(const struct statx *st, struct walk_id *id);
void walk_id_statx(const struct walk_id *id, struct statx *st);

/* The minor version of the glibc whose ld.so has program headers
 * ph[0..n), from the banner its --version prints ("... release version
 * 2.44."), which lies in its read-only data: each segment's bytes at
 * base + p_vaddr (mapped), or base + p_offset (file: the file's size
 * bytes at base).  0 when it is not found (not glibc's, or worded
 * otherwise). */
unsigned glibc_minor(const Elf64_Phdr *ph, unsigned n, const char *base, int file, uint64_t size);

/* The string at offset off of w's pool. */
static inline const char *walk_str(const struct walk *w, uint16_t off)
{
	return w->pool + off;
}
