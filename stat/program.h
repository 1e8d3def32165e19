/* Which program a process runs, and how much of the program's own text is
 * on 2 MiB pages: for --check PID and the per-program metrics. */
#pragma once

#include <stdint.h>

#include "procfs.h"
#include "smaps.h"

/* Windows a verdict names at most (libc's and the interpreter's: 2). */
#define WINDOWS_SAID 4

/* The program a process runs, as the kernel says it: /proc/PID/exe, unless
 * that is one of the loaders ld (an ordinary user's process without the
 * opt-in); then the file mapped where its aux vector's entry point lies
 * (the kernel's copy, /proc/PID/auxv, which tiexec sets for the program
 * and a fork inherits).  Never a string the process wrote: not its
 * environment, not a name it gave its memory.  Entries of the text cache
 * at cache_dir ("": none) and the loaders' files are not programs.
 * malloc'ed; "" if unknown.  *fd: the program's file, read-only, opened
 * through the kernel's link to it (or by its path as the process's owner
 * could open it), or -1. */
char *program_of(long pid, const char *cache_dir, const struct loaders *ld, int *fd);

/* Whether path names a file under the text cache at cache_dir ("": none). */
int path_in_cache(const char *path, const char *cache_dir);

/* For mapping i of s, a text cache entry under cache_dir: the file it
 * copies, as the process maps it -- the mapping of the file whose device
 * and inode begin the entry's name (textcache_name), a library's data
 * beside its text.  Only what the kernel says is mapped (the entry's
 * NAME.source, root's, is not read).  Its path in s, or NULL; *window is
 * set when the entry is a library's window (TEXTCACHE_WINDOW). */
const char *cache_entry_source(const struct smaps *s, size_t i, const char *cache_dir, int *window);

/* kB on 2 MiB pages of the windows the process maps from the text cache
 * at cache_dir (libc's, its interpreter's); into lib[0..*n) the path of
 * each one's library (NULL where it cannot be told), up to max. */
uint64_t windows_huge_kb(const struct smaps *s, const char *cache_dir, const char **lib, unsigned max, unsigned *n);

/* kB of prog's own text on 2 MiB pages in the process whose smaps is s:
 * its file mappings, tiexec's copies of it ([anon:tiexec:PROG]) and its
 * text cache entry under cache_dir (found from its file fd); with blocks_kb (per mapping of s, or
 * NULL), its 2 MiB contiguous blocks beside the PMDs too (blocks.h). */
uint64_t program_huge_kb(const struct smaps *s, const char *prog, int fd, const char *cache_dir, const uint64_t *blocks_kb);

/* kB of the rest of the process's executable text on 2 MiB pages (and,
 * with blocks_kb, in contiguous blocks): its libraries', tiexec's copies
 * and cache entries of them, what a JIT mapped on huge pages. */
uint64_t libs_huge_kb(const struct smaps *s, const char *prog, int fd, const char *cache_dir, const uint64_t *blocks_kb);
