/* One ELF image -- the program or its interpreter -- read, validated and
 * mapped as the kernel's binfmt_elf would (image.c), and read in memory once
 * mapped (dynamic.c).  Every field is checked (elfcheck.c) before anything
 * is mapped; errors end the loader with "tiexec: 'PATH': what" (report.h)
 * before any of the program runs.  Nothing here knows which exec it serves:
 * every function takes the image, and the settings it needs, as
 * parameters. */
#pragma once

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/limits.h> /* PATH_MAX */
#include <linux/stat.h>

#include "elfcheck.h"
#include "layout.h"
#include "opts.h"

#define MAX_SEGS TX_PH_MAX

struct image {
	const char *path;
	int fd;
	/* What the descriptor was at open (image_open_exec, image_stat): its
	 * type, mode, size and identity, asked once for every check. */
	struct statx st;
	uint64_t size;
	Elf64_Ehdr eh;
	struct elf_info info;
	uint64_t bias;
	/* Protection bits the kernel adds to its executable segments beyond
	 * PROT_EXEC (arm64: PROT_BTI), set by image_exec_prot. */
	int xprot;
	uint64_t res_lo, res_hi; /* the address range reserved for it */
	unsigned nsegs;
	/* Sized for the most the kernel takes; a start touches the first few. */
	Elf64_Phdr ph[TX_PH_MAX];
	struct seg segs[MAX_SEGS];
	char path_buf[PATH_MAX]; /* an interpreter's path (PT_INTERP) */
	/* A failed system call (the functions below that return long): what
	 * it was for ("cannot map segment", NULL for none), and whether it was
	 * the open of an interpreter.  The caller decides what follows: a call
	 * a filter refused may mean a plain exec; else image_die. */
	const char *err_what;
	int not_opened;
};

/* Validates the headers of the open file im->fd, whose im->st was filled
 * at open (an interpreter's by the interpreter's rules); dies with the
 * reason if they are not valid.  Returns 0, 1 instead if it is a "#!"
 * script and scripts_ok, or a negative errno (not a regular file, or
 * unreadable: im->err_what). */
long image_read_headers(struct image *im, int is_interp, int scripts_ok);
/* The program's policy note, when it is marked (common/mark.h), into
 * *note (defaults otherwise).  Returns NULL, or why a marked program's
 * note was not used (for -v). */
const char *image_read_note(const struct image *im, struct opts *note);
/* Opens a file to be executed as the kernel's open_exec() would, and only
 * if it would: a regular file (else -EACCES, as execve says; -EISDIR for a
 * directory), with execute permission for the *effective* ids (faccessat2
 * AT_EACCESS; X_OK also fails on a noexec mount), opened O_RDONLY|O_CLOEXEC
 * without blocking (a FIFO swapped in after the check cannot hang us) and
 * checked again on the descriptor.  Never opens a FIFO or a device.
 * Returns the descriptor (blocking mode, close-on-exec) or -errno: -ENOENT
 * and -ENOTDIR for a missing file, -EACCES, -EISDIR, -ELOOP, ...  Unlike
 * open_exec() it needs read permission too (it reads with pread).  *st
 * gets the descriptor's basic statx. */
long image_open_exec(const char *path, struct statx *st);
/* The basic statx of an open descriptor (one handed to us), into *st. */
long image_stat(int fd, struct statx *st);
/* Whether the open file is open for writing elsewhere, where that can be
 * told (by a read lease). */
int image_open_for_writing(int fd);
/* Reads prog's PT_INTERP path (through prog->fd) into interp. */
void image_interp_path(const struct image *prog, struct image *interp);
/* Opens, reads and validates prog's interpreter into interp (reading the
 * path first unless image_interp_path did).  0, or a negative errno. */
long image_open_interp(const struct image *prog, struct image *interp);
/* Reports err, which a function here returned for im (prog's image or
 * its interpreter's), and exits: 127 for a missing file, else 126. */
__attribute__((noreturn)) void image_die(const struct image *prog, const struct image *im, long err);
/* Reserves the image's address range and sets its bias (the text anchored
 * for `strategy`, modulo `unit` -- 2 MiB, or the PMD where that is larger,
 * huge_unit: congruent to its file offset, or starting on a unit boundary
 * for a copy; with `cached`, congruent to its own p_vaddr, as the text
 * cache lays it out; a fixed-address image with 2 MiB of room for
 * --round-out when round_out); maps its segments; gives back what no
 * segment uses, keeping the rounded-out pieces of the text when
 * keep_outer.  Each returns 0 or a negative errno (im->err_what). */
long image_place(struct image *im, int is_interp, enum strategy strategy, int cached, int round_out, uint64_t unit,
		 int verbose);
/* An interpreter's reservation for its window (textcache.h): its first
 * page at bytes above a 2 MiB boundary (textcache_window_at), so that its
 * read-only image ends on the next one; image_map and image_trim follow
 * as after image_place. */
long image_place_window(struct image *im, uint64_t at);
long image_map(struct image *im);
void image_trim(struct image *im, int keep_outer);
/* mmap's protection for a segment's p_flags. */
int prot_of(uint32_t pflags);
/* The value of GNU property `type` (the arch's, arch_elf.h) in the
 * PT_GNU_PROPERTY note of the open file fd with these headers, or 0. */
uint32_t image_property(int fd, const Elf64_Ehdr *eh, const Elf64_Phdr *ph, uint32_t type);
/* im->xprot as a direct exec would have it: the arch's bits for the
 * interpreter, or for a program without one (hwcap2: AT_HWCAP2). */
void image_exec_prot(struct image *im, int is_interp, unsigned long hwcap2);
/* The same bits for a library ld.so mapped (it applies them as the kernel
 * does), read from its open file; 0 when its headers cannot be read or
 * hold more than 32 program headers. */
int image_fd_exec_prot(int fd, unsigned long hwcap2);

/* Whether [a, a + n) lies inside one mapped segment of im (a writable one
 * when w), in bytes that may be read (not past the end of the file). */
int image_holds(const struct image *im, uint64_t a, uint64_t n, int w);
/* im's dynamic section in memory, when it lies inside one (writable, when
 * w) segment; its number of entries in *nd.  NULL if there is none. */
Elf64_Dyn *image_dynamic(const struct image *im, int w, size_t *nd);

/* A dynamic section's string table, in memory. */
struct strtab {
	uint64_t at, size;
};
/* The string table named by d (nd entries, im's dynamic section), when it
 * lies inside one mapped segment of im: 1 and *st, else 0. */
int image_strtab(const struct image *im, const Elf64_Dyn *d, size_t nd, struct strtab *st);
/* The string at off in st, when it is NUL-terminated there; else NULL. */
const char *strtab_at(const struct strtab *st, uint64_t off);
