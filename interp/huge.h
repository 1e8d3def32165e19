/* Putting a placed program's text on 2 MiB pages.
 *
 * Called after every segment is mapped normally, so that each step can fail
 * and leave a correct 4 KiB mapping behind: nothing here makes a program
 * run worse than a plain exec.  Never prints; what happened, and why not,
 * comes back in struct huge_result for the stages (load.c, libs.c) to report. */
#pragma once

#include <stdint.h>

#include "cacheconv.h"
#include "fsfolio.h"
#include "geom.h"
#include "layout.h"
#include "opts.h"
#include "rt.h"
#include "thpenv.h"

#define HUGE_MAX_NOTES 6

struct huge_result {
	uint64_t file, cache, thp, hugetlb; /* bytes on 2 MiB pages, by source */
	uint64_t text_huge;          /* of those, bytes inside executable segments */
	uint64_t text_blocks;        /* of text_huge, in contiguous blocks, measured (geom_blocks) */
	uint64_t text_unmeasured;    /* of text_huge, in blocks that could not be measured */
	uint64_t pmd;                /* the PMD size the pieces are on (0: not asked) */
	uint64_t lazy;               /* bytes advised but left to fault on first touch */
	unsigned nnotes;
	struct why notes[HUGE_MAX_NOTES]; /* why something fell back (reason.h), each reason once */
};

/* What one start carries from call to call of huge_apply (the program,
 * then each library): the kernel's page geometry, the page-cache
 * bookkeeping (cacheconv.c: the pagemap descriptor, what the kernel was
 * found to lack) and whether a conversion lock was already waited for.
 * The caller owns it (struct exec), initialised once by huge_state_init
 * with AT_PAGESZ; the geometry is read from sysfs by the first
 * huge_apply, so a start that places nothing never asks. */
struct huge_state {
	uint64_t pagesz;   /* AT_PAGESZ */
	int geom_known;
	struct geom geom;  /* geom_read, at the first huge_apply */
	struct cconv cc;
	struct thpenv thp; /* the THP settings, read when first asked */
	int lock_gave_up;
};
void huge_state_init(struct huge_state *st, uint64_t pagesz);
/* The alignment text is placed at for huge_apply: 2 MiB, or the PMD where
 * a PMD is larger than a piece (geom_blocks: 32 MiB on 16 KiB pages), so
 * that whole PMD pieces are aligned.  Reads the geometry on kernels whose
 * base page is not the arch's default only. */
uint64_t huge_unit(struct huge_state *st);

struct huge_req {
	struct huge_state *state;
	int fd;                 /* the program file */
	const char *name;       /* for naming copied regions in /proc/PID/maps */
	const struct opts *o;
	struct seg *segs;
	unsigned nsegs;
	uint64_t lim_lo, lim_hi; /* the address range reserved for the program */
	/* The shared text cache's entry (textcache.h), or -1; cache_off[i]:
	 * its file offset for segs[i]'s p_offset. */
	int cache_fd;
	const uint64_t *cache_off;
	/* fs_folios of fd, which the caller asked before looking for an
	 * entry: one fstatfs per file and start. */
	struct fs_info fs;
	/* Protection bits its text is mapped with beyond PROT_READ|PROT_EXEC
	 * (image.h: xprot), kept by every copy and cache mapping. */
	int xprot;
};

void huge_apply(const struct huge_req *r, struct huge_result *res);

/* Appends "X of Y MiB text on 2 MiB pages (file a[, cache e], thp b[,
 * hugetlb c][, lazy d])" for text bytes of text and what hr placed; where
 * pieces are contiguous blocks (a PMD of 32 MiB, say), "X of Y MiB text on
 * 32 MiB pages, Z in 2 MiB contiguous blocks[, U in 2 MiB blocks not
 * measured] (...)". */
void huge_msg(struct msg *m, uint64_t text, const struct huge_result *hr);

/* Whether text in [lo, hi) is no longer the file's (cconv_changed): such
 * text is never replaced. */
int huge_text_changed(struct huge_state *st, uint64_t lo, uint64_t hi);

/* The last thing before the program starts: releases what huge_apply kept
 * open (the pagemap descriptor). */
void huge_done(struct huge_state *st);
