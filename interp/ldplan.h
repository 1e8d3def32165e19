/* Where ld.so will map a library, decided before ld.so runs: the requests
 * ld.so will make, replayed on the kernel, and holds that move one of them
 * to a wanted place (see ldplan.c).  libplan.c decides what to plan,
 * final.c holds it just before ld.so, libs.c gives it back. */
#pragma once

#include <stdint.h>

#define LDPLAN_MAX_HOLDS 8

/* One mmap(NULL, len) ld.so will make, in its order.  align above the
 * page: glibc's reservation for a library whose p_align is larger
 * (_dl_map_segments asks for its span plus p_align, maps the library at
 * the reservation's start aligned up to p_align and gives the rest back);
 * keep is then the library's own span. */
struct ldplan_req {
	uint64_t len;
	uint64_t align;
	uint64_t keep;
};

/* The requests up to and with the target (the last), and where the
 * target's library is wanted: its start modulo 2 MiB. */
struct ldplan {
	const struct ldplan_req *req;
	unsigned n;
	uint64_t residue;
};

/* The address space held (PROT_NONE) while ld.so runs. */
struct ldplan_holds {
	unsigned n;
	uint64_t a[LDPLAN_MAX_HOLDS], len[LDPLAN_MAX_HOLDS];
};

/* Replays p on the kernel with PROT_NONE stand-ins, given back each time,
 * and holds the top of the gap the target lands in until a replay puts
 * its library's start at the residue (one hold per round).  1: the last
 * replay landed as planned, the holds stay; 0: it did not, and nothing is
 * held (a miss costs only the placement); -1: a request cannot be
 * replayed (nothing held). */
int ldplan_hold(const struct ldplan *p, struct ldplan_holds *h);

/* Gives back what ldplan_hold held (the stage after ld.so). */
void ldplan_release(struct ldplan_holds *h);
