/* The initial stack: decoding the one the kernel built for tiexec, and
 * laying out the program's (argc, argv, envp, auxv and their strings) as a
 * direct exec would have built it.  Pure: no system calls, no state; the
 * stack stage (stack.c) decides, allocates and tells the kernel, and the
 * unit tests run these on synthetic stacks. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define AUX_MAX 64

/* The stack the kernel built for us. */
struct start {
	long argc;
	char **argv;
	char **envp;
	long nenv;
	uint64_t *auxv;     /* pairs, ending with AT_NULL */
	uint64_t *auxv_end; /* just past the AT_NULL pair */
};

/* Decodes it from the initial stack pointer; aux[AT_x] gets each value the
 * kernel gave (x < AUX_MAX), and bit x of *has says it gave it (AT_EXECFD
 * may be 0). */
void block_parse(uint64_t *sp, struct start *s, uint64_t *aux, uint64_t *has);

/* Where the kernel put our argument and environment strings, and which of
 * them the program keeps: its arguments are a suffix of ours (from `first`),
 * its environment ours less a stale TIEXEC_EXE when a new hint is given. */
struct areas {
	int args_ok;        /* argv strings back to back: they can be moved */
	int env_ok;         /* so are the environment's, right after them */
	uint64_t arg_start; /* the area: [arg_start, end) */
	uint64_t end;
	uint64_t moved;     /* bytes of the program's own argv strings */
	uint64_t env_keep;  /* bytes of the environment strings kept */
	long nenv_keep;
};
void block_areas(const struct start *s, long first, const char *hint, struct areas *a);

/* What goes where.  The kernel's area [arg_start, end) gets the program's
 * argv strings, then (when PR_SET_MM_MAP will move the bounds) its
 * environment strings and the hint, so that /proc/PID/cmdline and
 * /proc/PID/environ show exactly what the program sees.  When the hint
 * does not fit there (it replaces only tiexec's own words), all of them
 * move into the block instead, below the area, still back to back: a
 * program that rewrites its title over argv and the environment after it
 * (nginx, postgres) finds the same room as after a direct exec.  The block:
 * words (argc, argv, envp, auxv), then prelen bytes (the hook's preinit
 * array), execfn, orglen bytes of $ORIGIN strings, then the strings that
 * live in the block. */
struct plan {
	long pargc, nenv_out, naux;
	int env_in_block; /* argv, environment and hint strings in the block */
	size_t fnlen, xlen, words, len;
	size_t fn_off;  /* execfn, after the preinit array (hookpoint.h) */
	size_t orglen;  /* the $ORIGIN strings (origin.h), after execfn */
	size_t env_off; /* where argv+environment strings or the hint go in strs */
	uint64_t dst;   /* the block's final address: the program's sp */
};
void block_plan(const struct start *s, long first, const char *execfn, const char *hint,
		size_t prelen, size_t orglen, const struct areas *a, struct plan *p);

/* What the aux vector says about the program. */
struct aux_prog {
	uint64_t phdr, phnum, base, entry;
	int secure_off; /* AT_SECURE 0: the file capability's are gone before ld.so */
};
/* The aux vector as the program must see it, into out (p->naux pairs, the
 * tail AT_NULL-filled where AT_EXECFD was dropped); execfn's string at
 * fn_final.  Returns the pairs up to and including AT_NULL. */
long block_auxv(const struct start *s, uint64_t *out, uint64_t fn_final, long naux,
		const struct aux_prog *ap);

/* The block being built: its words, and its strings, which will be at
 * strs_final. */
struct block {
	uint64_t *w, *envw, *auxo; /* argc, argv...; envp...; auxv */
	char *strs;
	uint64_t strs_final;
};
/* argc, argv and envp, and the strings: argv to the start of the area, then
 * the environment (where the kernel expects it when mm_ok: PR_SET_MM_MAP
 * took the new bounds), NUL padding to the area's old end; or all in the
 * block (p->env_in_block). */
void block_strings(const struct start *s, long first, const char *hint, const struct areas *a,
		   const struct plan *p, const struct block *b, int mm_ok);
