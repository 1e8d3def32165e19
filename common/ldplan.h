/* Where ld.so will map its libraries, decided before ld.so runs: the
 * requests ld.so will make, replayed on the kernel, and holds that move
 * chosen ones to a wanted place (see ldplan.c).  libplan.c decides what to
 * plan, final.c holds it just before ld.so, libs.c gives it back. */
#pragma once

#include <stdint.h>

#define LDPLAN_MAX_REQS 64
#define LDPLAN_MAX_HOLDS 16

/* One mmap(NULL, len) ld.so will make, in its order.  align above the
 * page: glibc's reservation for a library whose p_align is larger
 * (_dl_map_segments asks for its span plus p_align, maps the library at
 * the reservation's start aligned up to p_align and gives the rest back);
 * keep is then the library's own span.  A target's library start is
 * wanted at residue modulo 2 MiB; a window target's (below non-zero) also
 * with the below bytes under it held, so that the 2 MiB-aligned window
 * from there holds the library's read-only image and nothing else. */
struct ldplan_req {
	uint64_t len;
	uint64_t align;
	uint64_t keep;
	uint64_t residue;
	int target;
	uint64_t below;
	/* A file mapping the kernel aligns (a page-aligned library of 2 MiB
	 * or more, Linux 5.18 on): replayed as a PROT_NONE mapping of the
	 * library itself, open at fd, so that the kernel places it as it
	 * will place ld.so's. */
	int file, fd;
};

struct ldplan {
	const struct ldplan_req *req;
	unsigned n;
};

/* The address space held (PROT_NONE) while ld.so runs, and where each
 * target that lands as planned starts (in the order of the targets). */
struct ldplan_holds {
	unsigned n;
	uint64_t a[LDPLAN_MAX_HOLDS], len[LDPLAN_MAX_HOLDS];
	uint64_t start[LDPLAN_MAX_REQS];
};

/* Replays p on the kernel with PROT_NONE stand-ins, given back each time,
 * and for each target in turn holds the top of the gap it lands in until a
 * replay puts its library's start at its residue.  Returns how many
 * targets, in order, land as planned: the holds stay for them; from the
 * first target that could not be moved on, nothing is held (a miss costs
 * only the placement).  -1: a request cannot be replayed (nothing held). */
int ldplan_hold(const struct ldplan *p, struct ldplan_holds *h);

/* Closes the files of p's kernel-aligned requests (after ldplan_hold,
 * before ld.so runs: it finds the descriptors it expects). */
void ldplan_close(const struct ldplan *p);

/* Gives back what ldplan_hold held (the stage after ld.so). */
void ldplan_release(struct ldplan_holds *h);
