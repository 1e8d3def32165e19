/* What the loader's modules share: the images being loaded, the aux vector
 * as the kernel gave it to us, the settings in effect, and the one place that
 * reports (report.c).  musl's dynamic linker shares its state the same way:
 * a loader runs once, single-threaded, with no allocator. */
#pragma once

#include <elf.h>
#include <stdint.h>

#include "elfcheck.h"
#include "layout.h"
#include "opts.h"
#include "rt.h"

#define AUX_MAX 64
#define MAX_SEGS TX_PH_MAX

extern const char tx_ehdr_start[] __asm__("__ehdr_start") __attribute__((visibility("hidden")));
extern const char tx_end[] __asm__("_end") __attribute__((visibility("hidden")));

/* A program or interpreter being loaded. */
struct image {
	const char *path;
	int fd;
	uint64_t size;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[TX_PH_MAX];
	struct elf_info info;
	uint64_t bias;
	uint64_t res_lo, res_hi; /* the address range reserved for it */
	struct seg segs[MAX_SEGS];
	unsigned nsegs;
};

extern struct image prog, interp;
extern uint64_t aux[AUX_MAX]; /* indexed by AT_* */
extern uint64_t aux_has;      /* bit AT_x set: the kernel gave AT_x (AT_EXECFD may be 0) */
extern struct opts opt;       /* the settings in effect */

/* ---- report.c: the only output, one line each on stderr ---- */
void say(struct msg *m);
void msg_head(struct msg *m, const char *path);
__attribute__((noreturn)) void die(const char *path, const char *what, const char *detail, int status);
/* 127 for ENOENT/ENOTDIR, else 126. */
__attribute__((noreturn)) void die_errno(const char *path, const char *what, long err);
void verbose_note(const char *path, const char *what);
struct huge_result;
/* "X of Y MiB text on 2 MiB pages (file a, thp b[, hugetlb c][, lazy d])". */
void msg_placed(struct msg *m, uint64_t text, const struct huge_result *hr);
uint64_t now_ns(void);

/* ---- image.c: reading, validating and mapping ELF files ---- */
/* Validates the headers of an open file (dies with the reason); returns 1
 * instead if it is a "#!" script and scripts_ok. */
int read_headers(struct image *im, int scripts_ok);
/* The program's policy note, when it is marked (interp/mark.h). */
void read_note(struct image *im, struct opts *note);
/* The absolute path an open descriptor names (/proc/self/fd/N), with
 * " (deleted)" after it for an unlinked file; its length, or -1. */
long fd_link(int fd, char *buf, size_t len);
/* Opens a file to be executed as the kernel's open_exec() would, and only
 * if it would: a regular file (else -EACCES, as execve says; -EISDIR for a
 * directory), with execute permission for the *effective* ids (faccessat2
 * AT_EACCESS; X_OK also fails on a noexec mount), opened O_RDONLY|O_CLOEXEC
 * without blocking (a FIFO swapped in after the check cannot hang us) and
 * checked again on the descriptor.  Never opens a FIFO or a device.
 * Returns the descriptor (blocking mode, close-on-exec) or -errno: -ENOENT
 * and -ENOTDIR for a missing file, -EACCES, -EISDIR, -ELOOP, ...  For the
 * interpreter (open_interp) and, by the same rules, the program itself.
 * Unlike open_exec() it needs read permission too (it reads with pread). */
long open_exec_file(const char *path);
/* Whether the open file is open for writing elsewhere, where that can be
 * told (image.c: by a read lease). */
int open_for_writing(int fd);
/* Reads the program's PT_INTERP path (through prog.fd) into interp.path. */
void read_interp_path(const char *prog_path);
/* Opens, reads and validates the program's PT_INTERP into `interp` (reading
 * the path first unless read_interp_path did). */
void open_interp(const char *prog_path);
/* Reserves the image's address range and sets its bias; maps its segments;
 * gives back what no segment uses. */
void place(struct image *im, int is_interp);
void map_segments(struct image *im);
void trim_reservation(struct image *im, int keep_outer);
/* Whether [a, a + n) lies inside one mapped segment of im (a writable one
 * when w). */
int image_holds(const struct image *im, uint64_t a, uint64_t n, int w);
/* im's dynamic section in memory, when it lies inside one (writable, when
 * w) segment; its number of entries in *nd.  NULL if there is none. */
Elf64_Dyn *image_dynamic(const struct image *im, int w, size_t *nd);
/* mmap's protection for a segment's p_flags. */
int prot_of(uint32_t pflags);
uint64_t random_u64(void);
int aslr_off(void);

/* ---- start.c: the program's initial stack, and the jump ---- */
struct start {
	long argc;
	char **argv;
	char **envp;
	long nenv;
	uint64_t *auxv;     /* pairs, ending with AT_NULL */
	uint64_t *auxv_end; /* just past the AT_NULL pair */
};
/* Decodes the stack the kernel built for us; fills aux[]. */
void parse_start(uint64_t *sp, struct start *s);
/* Whether n (at most 4) more descriptors can be opened beside prog.fd
 * (probed with dup, closed again; main.c). */
int fds_free(int n);
/* Puts back the resource limits tiexec raised for itself (main.c). */
void limits_restore(void);
/* Builds the program's stack from ours (its argv is ours from `first`) and
 * jumps to entry.  With a hook point (not NULL), ld.so (at entry) gives
 * control to tiexec_hook (libs.c) before any initializer of the program or
 * its libraries runs (hookpoint.h). */
struct hookpoint;
__attribute__((noreturn)) void start_program(struct start *s, long first, const char *execfn,
					     uint64_t entry, const struct hookpoint *hp);
/* ---- libs.c: the stage after the dynamic linker ---- */
/* Entered from tiexec_hook (arch.h), on the program's stack. */
__attribute__((noreturn)) void tiexec_hook_main(void);
/* The hook's last step: the final stage, back into ld.so or into the
 * program, with the
 * registers ld.so left. */
__attribute__((noreturn)) void start_after_hook(void);
