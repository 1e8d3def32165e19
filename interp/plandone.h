/* The library plan after ld.so: what it held given back, the windows
 * mapped, and what became of each planned library said (-v, the lib
 * probe).  Called by the libraries stage (libs.c) first thing. */
#ifndef TIEXEC_PLANDONE_H
#define TIEXEC_PLANDONE_H

#include <stdint.h>

#include "exec.h"
#include "libfind.h"

#define WINDOWS_MAX 4

/* The holds of the library plan given back (ld.so has mapped what it
 * loads), and each window target that landed mapped from its window entry
 * (libwindow.h), up to WINDOWS_MAX, their ranges into win (left out of
 * what the stage places: they are on 2 MiB pages already): how many.
 * *fired counts the lib probes it fired.  -v says what planning cost,
 * names the planned libraries, and which of them missed (the targets from
 * the first that could not be held on). */
unsigned plan_done(struct exec *ex, struct range *win, uint64_t *fired);

#endif
