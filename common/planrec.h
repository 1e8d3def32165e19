/* A plan record: the walk of a program's libraries (libwalk.h) as
 * tiexec-warm found it, kept in the text cache beside the entries, named
 * as the program's entry with PLANREC_SUFFIX after it (textcache.h).
 *
 * At each start the loader's plan needs ld.so's libraries in its order
 * and each one's request (interp/libplan.c).  Walking them opens and reads
 * every library (19 for clang-14: about 0.25 ms of a start); a record
 * holds the walk's result, and the loader checks each library up to the
 * last one that may be a target by one statx against the identity the
 * record holds (the kernel-placed ones, which the plan replays from their
 * own files, by the descriptor it opens for that).  A library changed
 * since (an upgrade), another ld.so, or a program named through another
 * directory where its search path says $ORIGIN sends the loader back to
 * the walk.  The record is root's: written by tiexec-warm, opened by the
 * loader only as a trusted entry (textcache_open), so that no user's
 * record steers another's process; and what it says only decides where
 * the plan holds address space before ld.so -- ld.so's own list checks
 * every planned library afterwards (plandone.c): a stale or wrong record
 * costs at most the placement.  Pure system calls, shared by the loader
 * and tiexec-warm. */
#pragma once

#include <stddef.h>
#include <linux/stat.h>

#include "libwalk.h"

#define PLANREC_SUFFIX ".plan"

/* The header, the libraries, the pool. */
#define PLANREC_MAX (128 + WALK_MAX * sizeof(struct walk_lib) + WALK_POOL)

/* The record of walk w, drained (libwalk_next gave NULL), each library's
 * identity in w->lib[i].id, for ld.so with identity interp and glibc
 * minor version minor (glibc_minor), and a program in directory origin
 * (its $ORIGIN): into out (n bytes, PLANREC_MAX will do); its size, 0 if
 * it does not fit. */
size_t planrec_encode(const struct walk *w, const struct statx *interp, unsigned minor, const char *origin, void *out,
		      size_t n);

/* The record open at fd into w, as a walk whose libraries planrec_next
 * gives out, for ld.so with identity interp; aligns: the kernel places a
 * page-aligned file mapping of 2 MiB or more itself (Linux 5.18 on), so
 * that such a library is no target.  Where the program's search path
 * says $ORIGIN (w->origin_used), the record holds for a program in
 * directory w->origin only: the caller's to check.  NULL, or why it
 * cannot be used (w is then not a walk). */
const char *planrec_load(int fd, struct walk *w, const struct statx *interp, int aligns);

/* The next library of a walk planrec_load read, its file checked against
 * the record (its fd open where walk_kernel_places, as libwalk_next
 * gives it), up to the last that may be a target (a request a library of
 * p_align above the page or a page-aligned one may have, or libc's
 * window: the plan's decision, interp/libplan.c), then NULL.  NULL with
 * w->stale set: this library changed since the record was made. */
const struct walk_lib *planrec_next(struct walk *w);
