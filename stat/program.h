/* Which program a process runs, and how much of the program's own text is
 * on 2 MiB pages: for --check PID and the per-program metrics. */
#pragma once

#include <stdint.h>

#include "smaps.h"

/* The program a process runs: /proc/PID/exe, unless that names tiexec (an
 * ordinary user's process without the opt-in); then the file its aux
 * vector's entry point lies in; then the TIEXEC_EXE hint tiexec left in its
 * environment (gone from a forked child's, or overwritten by a process
 * title).  Entries of the text cache at cache_dir ("": none) are not
 * programs.  malloc'ed; "" if unknown. */
char *program_of(long pid, const char *cache_dir);

/* Whether path names a file under the text cache at cache_dir ("": none). */
int path_in_cache(const char *path, const char *cache_dir);

/* kB of prog's own text on 2 MiB pages in the process whose smaps is s:
 * its file mappings, tiexec's copies of it ([anon:tiexec:PROG]) and its
 * text cache entry under cache_dir; with blocks_kb (per mapping of s, or
 * NULL), its 2 MiB contiguous blocks beside the PMDs too (blocks.h). */
uint64_t program_huge_kb(const struct smaps *s, const char *prog, const char *cache_dir, const uint64_t *blocks_kb);
