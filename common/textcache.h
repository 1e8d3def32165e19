/* The shared text cache: one 2 MiB copy of each program's or library's text
 * for the whole machine, on a tmpfs mounted huge=always.
 *
 * Where the page cache cannot hold a file's text in 2 MiB folios (ext4
 * before Linux 6.16, XFS on 5.10, btrfs, FUSE...), or the text is not
 * congruent to its file offset modulo 2 MiB (lld's layouts,
 * librustc_driver), zero-copy placement gets nothing and every process
 * would copy the text.  A tmpfs mounted huge=always holds files in 2 MiB
 * pages on every kernel tiexec supports (5.10 on), and a private mapping of
 * one is PMD-mapped and shared by every process.  tiexec-warm writes, for
 * each configured file, an entry there: a copy of the file whose executable
 * segments sit at file offsets congruent to their p_vaddr modulo 2 MiB (an
 * incongruent one is moved to the end of the copy, its program and section
 * headers updated; everything else -- vaddrs, symbols, the build-id -- is
 * the file's).  The loader maps an entry's text over the program's (and
 * the stage after ld.so over a library's) when the page cache cannot do it.
 *
 * Entries are named by the identity of the file they copy (statx: device,
 * inode, size, modification and change time), so that a changed file never
 * finds an old entry.  The loader uses an entry only if the directory and
 * every one above it is a directory (no symbolic link) owned by root and
 * writable by nobody else, the entry is a regular file owned by root and
 * writable by nobody else, opened without following a link, on a tmpfs,
 * and its headers are the file's but for the text's offsets.  Anything
 * else is ignored, with the reason under -v.  Pure system calls and no
 * runtime: the loader and tiexec-warm share it (like cacheconv.c). */
#pragma once

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/stat.h>

#define TEXTCACHE_DIR "/run/tiexec/text"
#define TEXTCACHE_NAME_MAX 128
/* Program headers an entry may have: more, and it is not one. */
#define TEXTCACHE_PH_MAX 64

/* The entry's name for a file with identity st (STATX_BASIC_STATS):
 * "DEV.INO.SIZE.MTIME.NS.CTIME.NS" in hex -- the identity only, so every
 * name of the file (a link, a symbolic link) finds the same entry.
 * Returns its length, or 0 if out (n bytes) is too small. */
size_t textcache_name(const struct statx *st, char *out, size_t n);

/* A library's window entry: a library whose read-only image fits in 2 MiB
 * and is its file's first bytes (textcache_window_end) can be placed by
 * the loader's plan at AT bytes above a 2 MiB boundary
 * (textcache_window_at), with the AT bytes below it free
 * (interp/libplan.c).  Its window entry is then one 2 MiB page: zeros,
 * the file's first END bytes at offset AT, zeros.  The loader maps it
 * over the window, privately: one PMD, shared by every process, for
 * glibc's libc.  Named as the file's entry, with TEXTCACHE_WINDOW after
 * it. */
#define TEXTCACHE_WINDOW ".window"

/* What a window makes executable that ld.so maps otherwise (-v,
 * tiexec-stat --advise): on x86-64 libc's ELF headers and rodata; on
 * arm64 its image is one R+X segment already. */
#ifdef __aarch64__
#define TEXTCACHE_WINDOW_EXEC "the zeros around its image executable, BTI kept"
#else
#define TEXTCACHE_WINDOW_EXEC "its headers and read-only data executable"
#endif

/* The end of the library's read-only image from its start (END above), or
 * 0 where it has no window: its loadable segments before the first
 * writable one must map the file's first bytes as they lie in it (the
 * first at offset 0, each p_offset its distance from the first one's
 * p_vaddr, nothing zero-filled) and end, page-aligned, by the writable
 * one's first page and within 2 MiB. */
uint64_t textcache_window_end(const Elf64_Phdr *ph, unsigned n);

/* Where the library's read-only image lies in its window (AT above): 0
 * where it has none.  A page-aligned library's image ends on the
 * window's top (2 MiB - END: x86-64's libc, whose writable data follows
 * it there).  glibc's ld.so maps one linked with p_align A above the page
 * (GNU ld's 64 KiB on arm64) A-aligned in a reservation of its own: its
 * start is then 2 MiB - END rounded down to A above the boundary, and the
 * window's top lies in the library's own gap before its writable segment
 * (the r-x zeros of the entry there), which must be that far up
 * (arm64's libc: AT 0x60000 in Debian 13, 0x70000 in Debian 12). */
uint64_t textcache_window_at(const Elf64_Phdr *ph, unsigned n);

/* Whether the text cache at dir holds a window entry for the file with
 * identity st, by its name only (textcache_open checks what it is). */
int textcache_window_present(const char *dir, const struct statx *st);

/* Whether the library at path gets a window: glibc's libc (libc.so.6),
 * the one library named so far (interp/libplan.c says why). */
int textcache_windowed(const char *path);

/* The window entry's name for a file with identity st (see
 * textcache_name); its length, or 0 if out is too small. */
size_t textcache_window_name(const struct statx *st, char *out, size_t n);

/* Why dir cannot be trusted (see above), or NULL. */
const char *textcache_dir_untrusted(const char *dir);

/* Opens entry `name` in dir, trusted; the descriptor, or -1 with *why (or
 * *why NULL: there is no such entry). */
int textcache_open(const char *dir, const char *name, const char **why);

/* Whether a process found the cache's directory trusted, asked once:
 * every directory on its path root's and writable by nobody else, so
 * that only root could swap one after (textcache_dir_untrusted). */
struct textcache_trust {
	int asked;
	const char *why; /* NULL: trusted */
};

/* textcache_open, the directory asked only the first time for t. */
int textcache_open_with(const char *dir, struct textcache_trust *t, const char *name, const char **why);

/* Checks that the entry open at efd is a copy of a file with program
 * headers ph[0..n) (its own, read from it) but for the executable
 * segments' offsets, each congruent to its p_vaddr modulo 2 MiB; off[i]
 * gets the entry's p_offset for ph[i].  0, or -1 with *why. */
int textcache_layout(int efd, const Elf64_Phdr *ph, unsigned n, uint64_t *off, const char **why);
