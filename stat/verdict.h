/* tiexec-stat --advise and --check (verdict.c).  Each prints one report on
 * stdout and returns 0, or 1 when the program cannot be read (--advise) or
 * would not get, or does not have, its text on 2 MiB pages (--check). */
#pragma once

#include <stdint.h>

#include "program.h"

int advise_print(const char *prog, const char *cache_dir);
/* A stamped program about to run: registered rule, stamp, policy, and what
 * its strategy gives on this machine, for its own text and its libraries'
 * (a dynamic program below its min-text is loaded for them). */
int check_prog(const char *prog, const char *cache_dir);
/* What a running process has on 2 MiB pages (PMDs, and blocks where
 * measured): its program's own text, its libraries' (said beside it), and
 * of both, what lies in blocks it has mapped only in part so far. */
struct running_huge {
	uint64_t own_kb, libs_kb, part_kb;
	uint64_t window_kb;     /* of libs_kb: the windows (libc's, the interpreter's) */
	const char *window_lib[WINDOWS_SAID]; /* each one's library (NULL: not told) */
	unsigned nwindow;
};

/* Process pid running prog, whose file program_of opened as fd (not
 * closed; -1: none), with *h on 2 MiB pages. */
int check_running(long pid, const char *prog, int fd, const struct running_huge *h, const char *cache_dir);
