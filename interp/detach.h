/* tiexec's own image, moved off tiexec's file.
 *
 * The kernel refuses to point /proc/PID/exe at another file while the old
 * executable is still mapped (EBUSY).  When the stage after ld.so needs
 * tiexec to stay and something before that stage reads the link (audit
 * modules, $ORIGIN in the environment; a file capability must be gone
 * before any of them runs: stack.c decides), the link must nevertheless be
 * the program's from ld.so's first instruction on.  So every mapping of
 * tiexec's file is replaced, at the same address and with the same bytes
 * and protection, by anonymous memory --
 * or, where MemoryDenyWriteExecute forbids making anonymous memory
 * executable, by a memfd named "tiexec".  Nothing moves, no pointer
 * changes; tiexec's .bss is anonymous already.
 *
 * tiexec-trace's USDT probes are uprobes on tiexec's file: they fire only
 * in text mapped from it.  When some are attached (the text in memory is
 * not the file's), tiexec keeps its file open through ld.so and maps its
 * text from it again at the hook, so that the stage after ld.so's probes
 * fire; the exe link is the program's by then. */
#pragma once

/* Returns 0 when no mapping of tiexec's file is left, -1 otherwise (some
 * may have moved: harmless, the bytes are the same).  *keep_fd: tiexec's
 * file, kept open when probes are attached, else -1. */
int self_detach(int *keep_fd);

/* At the hook: the text mapped from that file again, if fd is not -1;
 * closes it. */
void self_reattach(int fd);
