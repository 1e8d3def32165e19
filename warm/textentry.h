/* tiexec-warm's side of the shared text cache (common/textcache.h): the
 * tmpfs it lives on, and writing, listing and pruning entries. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* TE_STALE: an entry of the file's name whose text is not the file's (the
 * file was written without its timestamps changing). */
enum te_result { TE_MADE, TE_PRESENT, TE_FAILED, TE_STALE };

/* Makes sure dir is a tmpfs mounted huge=always, mounting one (size: a
 * tmpfs size= value, NULL for the kernel's default) when dir is not a
 * mount point; creates dir (0755, whatever the umask) and its parents.
 * Every directory on the way must pass the loader's rule (no symbolic
 * link, root's, writable by nobody else) before anything is made in it or
 * mounted on it.  0, or -1 with why. */
int textentry_mount(const char *dir, const char *size, char *why, size_t n);

/* The entry for the file open at fd (named path), written when missing:
 * a copy of the file's headers, loadable segments and sections (not what
 * lies outside them) whose executable segments sit at offsets congruent to
 * their p_vaddr modulo 2 MiB, written to an unnamed file, checked against
 * the source, made read-only and linked in under its name.  *bytes: its
 * size in memory.  TE_FAILED with errno (ENOSPC: the cache is full;
 * ENOEXEC: executable segments that overlap another loadable segment;
 * EAGAIN: the file changed while it was copied) and the step that failed
 * in *step ("copying its content", ...).  The caller makes sure nobody
 * has the file open for writing. */
enum te_result textentry_make(const char *dir, const char *path, int fd, uint64_t *bytes, const char **step);

/* Whether the file open at fd has a good entry, every byte of its text
 * compared with the file's: TE_PRESENT (its size in *bytes), TE_STALE (an
 * entry whose text differs) or TE_FAILED (none). */
enum te_result textentry_find(const char *dir, int fd, uint64_t *bytes);

/* The good entry of the file open at fd, opened read-only, with the
 * entry's offset of each of the file's program headers in off
 * (TEXTCACHE_PH_MAX of them, textcache.h); -1 when there is none. */
int textentry_open(const char *dir, int fd, uint64_t *off);

/* The window entry (textcache.h) of the library open at fd (named path),
 * whose read-only image ends at end (textcache_window_end) and lies at at
 * in its window (textcache_window_at): TE_PRESENT
 * when it holds the file's bytes, else with make written as
 * textentry_make writes an entry (TE_MADE, TE_FAILED with errno and
 * *step), without TE_STALE or TE_FAILED (none).  *bytes: its size in
 * memory. */
enum te_result textentry_window(const char *dir, const char *path, int fd, uint64_t end, uint64_t at, int make,
				uint64_t *bytes, const char **step);

/* The plan record (common/planrec.h) of the program open at fd (named
 * path): the n bytes at rec, written as textentry_make writes an entry
 * where the cache holds none or another (replaced): TE_MADE, TE_PRESENT,
 * or TE_FAILED with errno and *step. */
enum te_result textentry_plan(const char *dir, const char *path, int fd, const void *rec, size_t n, const char **step);

/* Unlinks the entry of the file open at fd (its users keep it until they
 * exit); 0 or -1. */
int textentry_remove(const char *dir, int fd);

/* Removes the entries of dir whose source changed or vanished (by the path
 * each entry records) or whose text differs from the source's; processes
 * mapping one keep it until they exit.
 * Prints what it removed; returns how many, or -1. */
int textentry_prune(const char *dir);
