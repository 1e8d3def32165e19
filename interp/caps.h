/* The opt-in by file capability (README, "/proc/self/exe"): the kernel
 * starts tiexec with CAP_CHECKPOINT_RESTORE (or CAP_SYS_RESOURCE) in its
 * permitted and effective sets.  tiexec needs it for one thing, the prctl
 * that points /proc/PID/exe at the program, and before that it reads files
 * it has no reason to trust.  So the effective set is emptied at entry and
 * the capability is effective only around that prctl: the probe in
 * stack.c, then the final stage, which drops every capability right after
 * it.  Ambient capabilities (no secure exec) are the caller's own and are
 * left alone. */
#pragma once

#include <stdint.h>

/* Whether the kernel started us from a file capability (aux: the aux vector
 * indexed by AT_*): a secure exec with no set-user-ID or set-group-ID
 * involved. */
int caps_from_file(const uint64_t *aux);

/* At entry: in that case, no capability stays effective.  Returns whether
 * it is the case (the opt-in), which the calls below take. */
int caps_enter(const uint64_t *aux);

/* Under the opt-in, makes the capabilities the exe prctls need effective
 * (those in the permitted set), or none again. */
void caps_raise(int opted_in);
void caps_lower(int opted_in);

/* Every capability gone for good, and the process dumpable again, as a
 * plain exec of the program leaves it: before any code of the program's
 * runs (the final stage's asm does the same when nothing runs before).
 * There is nothing left to raise afterwards. */
void caps_drop_all(int how);

/* How the capabilities are dropped (caps_drop_all; the final stage's asm
 * reads bit 0 as the dumpable flag): not at all (no opt-in), and the
 * process made dumpable again as a plain exec leaves it, or kept
 * non-dumpable because the caller may not read the program (an
 * execute-only file run through binfmt_misc: its memory must not become
 * readable through /proc or ptrace). */
enum { CAPS_DROP_DUMPABLE = 1, CAPS_DROP_KEEP_UNDUMPABLE = 2 };
int caps_drop_how(int opted_in, int prog_fd);
