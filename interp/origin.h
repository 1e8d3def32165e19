/* $ORIGIN for a program whose /proc/self/exe names tiexec.
 *
 * glibc's and musl's dynamic linkers expand $ORIGIN in the main program's
 * DT_RUNPATH, DT_RPATH and DT_NEEDED from readlink("/proc/self/exe"), which
 * for an ordinary user's program started through tiexec names tiexec's
 * directory.  Before the dynamic linker runs, tiexec therefore gives it
 * those strings already expanded: copies with $ORIGIN replaced by the
 * program's own directory, placed in the program's initial stack block
 * (which lives as long as the process), and the dynamic entries' d_val
 * pointed at them (d_val is an offset from DT_STRTAB; unsigned arithmetic
 * reaches any address).  Only the in-memory .dynamic of the program
 * changes, never the file; the dynamic linkers read these strings only
 * while loading (glibc caches the directories it derived), so dlopen()
 * later finds the same directories.  What stays different: an explicit
 * dlopen("$ORIGIN/...") by the main program, and dlinfo(RTLD_DI_ORIGIN),
 * still ask /proc/self/exe. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "searchpath.h"

#define ORIGIN_MAX_FIX 64
struct origin_fix {
	uint64_t *dval;     /* the dynamic entry's d_val, in the program's memory */
	const char *src;    /* its string now */
	uint64_t strtab;    /* DT_STRTAB as the dynamic linker will compute it */
	size_t outlen;      /* the expanded string's size, NUL included */
};

struct image;
/* Finds the dynamic entries of prog (mapped, before its dynamic linker
 * runs) that need it, for a program in directory dir.  Returns how many (at most
 * ORIGIN_MAX_FIX), 0 when nothing applies or the dynamic section cannot be
 * read and written safely. */
unsigned origin_find(const struct image *prog, struct origin_fix *fx, const char *dir);
