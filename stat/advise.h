/* What each of tiexec's strategies would give a program on this machine,
 * and what it costs in memory: from the program's headers and stamp, its
 * file system, the shared text cache, the THP switches and the hugetlb
 * pool.  tiexec-stat --advise prints it; --check asks it whether a stamped
 * program would get its text on 2 MiB pages. */
#pragma once

#include "geom.h"

#include <stddef.h>
#include <stdint.h>

enum advice_way { WAY_FILE, WAY_CACHE, WAY_THP, WAY_HUGETLB, WAY_N };

struct way {
	uint64_t huge;       /* bytes of text it would put on 2 MiB pages */
	uint64_t per_proc;   /* memory of each process's own */
	uint64_t once;       /* memory once for the machine (a cache entry) */
	char why[200];       /* why it gives nothing, or a remark; "" if none */
	int partial;         /* it gives less than the aligned text, for why's reason */
};

struct advice {
	uint64_t text, aligned, rounded; /* bytes: text, its whole 2 MiB pieces, those it touches */
	int stamped;                     /* the marker bit and a readable note */
	int strategy;                    /* the stamp's ST_*, or -1 */
	uint64_t min_text;               /* the stamp's, or the loader's default */
	int round_out;                   /* the stamp says --round-out */
	int no_libs;                     /* the stamp says --no-libs */
	int no_windows;                  /* the stamp says --no-windows */
	char policy[160];                /* the stamp's policy, as tiexec-stamp --check says it */
	struct way way[WAY_N];
	enum advice_way auto_way;        /* what --strategy=auto would use; WAY_N: none */
	struct geom geom;                /* the kernel's page geometry */
	uint64_t thp_sizes;              /* its transparent huge page sizes (geom_thp_sizes) */
	uint64_t block_gain;             /* what a copy would gain in 2 MiB blocks were the
					  * 2 MiB switch not "never" (thpenv_block_switch_never) */
};

/* Fills a for the program at path, with the text cache at cache_dir ("":
 * none).  0, or -1 with a reason in why (not readable, not an ELF
 * program). */
int advise(const char *path, const char *cache_dir, struct advice *a, char *why, size_t whylen);
/* The same for the file open at fd, which it closes (for a caller that
 * opens with flags of its own). */
int advise_fd(int fd, const char *cache_dir, struct advice *a, char *why, size_t whylen);

/* A library's window (textcache.h: libc's read-only image on one 2 MiB
 * page of the text cache), as the loader would plan it for a program. */
struct window_advice {
	char lib[4096];      /* the library that would get one ("": none needed) */
	uint64_t image;      /* its read-only image, bytes (0: none that fits) */
	char why[200];       /* why it gets none; "" when it gets one */
	int missing;         /* none only for want of its entry (tiexec-warm PROG) */
};

/* Fills w for the program at path, whose advice is a, with the text cache
 * at cache_dir ("": none): from the libraries it needs (needed.h) as the
 * loader's plan chooses them (interp/libplan.c).  0 when it needs no such
 * library (w->lib ""). */
int advise_window(const char *path, const struct advice *a, const char *cache_dir, struct window_advice *w);

/* The way's name as --strategy spells it ("file", "cache", ...). */
const char *advice_way_name(enum advice_way w);
