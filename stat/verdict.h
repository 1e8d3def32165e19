/* tiexec-stat --advise and --check (verdict.c).  Each prints one report on
 * stdout and returns 0, or 1 when the program cannot be read (--advise) or
 * would not get, or does not have, its text on 2 MiB pages (--check). */
#pragma once

#include <stdint.h>

int advise_print(const char *prog, const char *cache_dir);
/* A stamped program about to run: registered rule, stamp, policy, and what
 * its strategy gives on this machine, for its own text and its libraries'
 * (a dynamic program below its min-text is loaded for them). */
int check_prog(const char *prog, const char *cache_dir);
/* Process pid running prog, whose file program_of opened as fd (not
 * closed; -1: none), with huge_kb of its own text on 2 MiB pages and
 * libs_kb of its libraries' (said beside it). */
int check_running(long pid, const char *prog, int fd, uint64_t huge_kb, uint64_t libs_kb, const char *cache_dir);
