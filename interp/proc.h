/* Process helpers the stages share: facts about this process, and the
 * plain exec tiexec falls back to.  Explicit parameters, no state. */
#pragma once

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* The absolute path an open descriptor names (/proc/self/fd/N), with
 * " (deleted)" after it for an unlinked file; its length, or -1. */
long fd_link(int fd, char *buf, size_t len);
/* Whether address space randomization is off (setarch -R). */
int aslr_off(void);
/* 64 random bits of tiexec's own: AT_RANDOM's belong to the program. */
uint64_t random_u64(void);
/* CLOCK_MONOTONIC in nanoseconds: the one clock messages and probes use. */
uint64_t now_ns(void);
/* The value of NAME in envp, or NULL. */
const char *env_get(char **envp, const char *name);

/* The program run as a plain exec would run it: for what the loader must
 * not or need not handle itself (scripts, set-user-ID files, files it may
 * execute but not read, programs too small to gain anything).  Fires the
 * direct probe with why; dies with the exec's error. */
__attribute__((noreturn)) void exec_plain(const char *path, char **argv, char **envp, const char *why);

/* tiexec's own image, as linked: its first byte (the ELF header) and the
 * end of its .bss. */
extern const char tx_ehdr_start[] __asm__("__ehdr_start") __attribute__((visibility("hidden")));
extern const char tx_end[] __asm__("_end") __attribute__((visibility("hidden")));

/* tiexec's own program headers, n of them, where the kernel mapped them. */
static inline const Elf64_Phdr *own_phdrs(unsigned *n)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(uintptr_t)tx_ehdr_start;

	*n = eh->e_phnum;
	return (const Elf64_Phdr *)(uintptr_t)(tx_ehdr_start + eh->e_phoff);
}
