/* The loader's USDT probes, provider "tiexec": the contract between the
 * loader (interp/load.c, interp/libs.c, interp/proc.c) and bpf/tiexec-trace, which both
 * include this.
 *
 *   loaded(path, mode, strategy, text_bytes, huge_bytes, file_bytes,
 *          thp_bytes, hugetlb_bytes, elapsed_ns, reason, cache_bytes)
 *       just before the loader jumps to the program (or, with
 *       TX_MODE_LIBS in mode, to its dynamic linker); strategy is a
 *       ST_* value (common/mark.h), reason NULL or why
 *       something fell back.
 *   direct(path, reason)
 *       just before the loader execve()s the program plainly.
 *   lib(path, lib_path, text_bytes, huge_bytes, file_bytes, thp_bytes,
 *       hugetlb_bytes, reason, cache_bytes, planned)
 *       once per library mapping the stage after the dynamic linker
 *       (libs.c) placed or left alone, in the same process as the loaded
 *       probe that announced it with TX_MODE_LIBS, but later: ld.so has
 *       run since.  path is the program's, lib_path the library's as in
 *       /proc/self/maps; reason NULL or why something fell back (a
 *       library left alone: huge_bytes 0 and why, e.g. its file deleted);
 *       planned a TX_PLAN_* value: whether tiexec planned where ld.so
 *       mapped it (libplan.c), and whether that plan held.  A library
 *       given a window (libc) fires one too, from the stage's start:
 *       its read-only image, on one 2 MiB page of the text cache
 *       (TX_PLAN_WINDOW), or missed and why.
 *   libs(path, count, elapsed_ns)
 *       after the last lib probe, just before the program is entered:
 *       count lib probes fired, the stage took elapsed_ns.  A process
 *       whose loaded probe had TX_MODE_LIBS fires it unless it dies or
 *       execs first (ld.so cannot find a library: it exits 127).
 *
 * cache_bytes (the shared text cache, textcache.h), then planned, came
 * last, so that a tracer of an older loader reads the others where they
 * were (a missing argument reads 0).
 * A probe is a nop when nobody listens; without <sys/sdt.h> (meson checks
 * for it) it is not there at all. */
#pragma once

/* Bits of loaded's mode argument. */
#define TX_MODE_BINFMT 1   /* started by binfmt_misc */
#define TX_MODE_REEXEC 2   /* a re-exec through TIEXEC_EXE */
#define TX_MODE_REMAPPED 4 /* the text went through the huge-page strategies */
#define TX_MODE_LIBS 8     /* the libraries stage follows: lib probes, then libs */

/* lib's planned argument. */
#define TX_PLAN_NONE 0   /* not planned */
#define TX_PLAN_PLACED 1 /* placed before ld.so as planned */
#define TX_PLAN_MISSED 2 /* planned, but ld.so mapped it elsewhere */
#define TX_PLAN_WINDOW 3 /* its read-only image in a 2 MiB window of its own,
			  * from the text cache (libc's; text_bytes the image) */

#if TIEXEC_HAVE_SDT
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
#define TX_PROBE(...) STAP_PROBEV(tiexec, __VA_ARGS__)
#else
#define TX_PROBE(...) ((void)0)
#endif
