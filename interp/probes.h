/* The loader's USDT probes, provider "tiexec": the contract between the
 * loader (interp/main.c) and bpf/tiexec-trace, which both include this.
 *
 *   loaded(path, mode, strategy, text_bytes, huge_bytes, file_bytes,
 *          thp_bytes, hugetlb_bytes, elapsed_ns, reason)
 *       just before the loader jumps to the program; strategy is a
 *       TIEXEC_STRATEGY_* value (interp/mark.h), reason NULL or why
 *       something fell back.
 *   direct(path, reason)
 *       just before the loader execve()s the program plainly. */
#pragma once

/* Bits of loaded's mode argument. */
#define TX_MODE_BINFMT 1   /* started by binfmt_misc */
#define TX_MODE_REEXEC 2   /* a re-exec through TIEXEC_EXE */
#define TX_MODE_REMAPPED 4 /* the text went through the huge-page strategies */
