/* Where the stage after the dynamic linker (libs.c) gets control.
 *
 * It must run once ld.so has mapped and relocated every library and before
 * any code of theirs or the program's runs: a constructor may patch text,
 * enter seccomp, start threads or read getauxval(AT_ENTRY).
 *   - glibc's ld.so runs the main program's DT_PREINIT_ARRAY first of all
 *     initializers (_dl_init), after relocation.  tiexec puts its hook
 *     first in that array: a new array in the program's initial stack
 *     block, [hook, the program's own entries...], named by the program's
 *     in-memory DT_PREINIT_ARRAY/DT_PREINIT_ARRAYSZ (see preinit() for
 *     which two entries say so).  The hook copies the program's own
 *     entries, relocated by then, after itself, puts the two dynamic
 *     entries back and returns into ld.so, which has read them already.
 *     (A library marked DF_1_INITFIRST is initialized before it.)
 *   - musl's dynamic linker runs no initializer before the program's entry
 *     (libc's start code runs them): the hook takes AT_ENTRY's place on the
 *     stack and puts it back before the program runs.
 *   - any other dynamic linker: no hook, libraries stay as ld.so mapped them.
 * The file is never changed. */
#pragma once

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

struct image;

enum hook_kind { HOOK_NONE, HOOK_PREINIT, HOOK_ENTRY };

struct hookpoint {
	enum hook_kind kind;
	const char *why;       /* HOOK_NONE: why there is no stage after ld.so */
	Elf64_Dyn *arr, *size; /* HOOK_PREINIT: the program's entries to set */
	Elf64_Dyn saved[2];    /* what they held */
	uint64_t relro_lo, relro_hi; /* the program's PT_GNU_RELRO, if any */
	uint64_t orig;         /* its own preinit array (address), or 0 */
	unsigned norig;        /* its entries */
};

/* Which hook the program and its interpreter (both mapped) allow. */
void hookpoint_choose(const struct image *prog, const struct image *interp, struct hookpoint *hp);
/* Bytes of the initial stack block the hook needs (8-aligned). */
size_t hookpoint_len(const struct hookpoint *hp);
/* Before ld.so: the array into buf, which will be at `final`, with fn
 * first, and the program's dynamic entries (load bias `bias`) naming it. */
void hookpoint_install(const struct hookpoint *hp, uint64_t *buf, uint64_t final, uint64_t fn,
		       uint64_t bias);
/* In the hook: the program's own entries after fn, in the array at final. */
void hookpoint_fill(const struct hookpoint *hp, uint64_t final);
/* In the hook: the program's dynamic entries as they were. */
void hookpoint_restore(const struct hookpoint *hp);
