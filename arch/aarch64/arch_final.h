/* arm64: the final stage, which unmaps the loader and enters the program
 * (or returns into ld.so after the hook), the copy of the initial stack
 * block that precedes it, and what the portable code needs to find a
 * gadget for its last munmap.  final.c is the only file that expands the
 * asm.  The contract is x86-64's (arch/x86_64/arch_final.h); what
 * differs is said here. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <asm/unistd.h>

#include "final_layout.h"

/* The last stage, run from a page of its own (final.c), entered by
 * arch_jump_final with sp at the program's initial stack and x0 pointing
 * at its struct arch_final (final_layout.h).  It unmaps the loader (its
 * one or two ranges) and the stack block's buffer, sets the exe link,
 * closes the program's descriptor, drops capabilities when asked, loads
 * the program's registers (struct arch_regs; x2-x18 zero, as the kernel
 * leaves them), and enters the program:
 *   - through a gadget "svc #0; ret" (the vDSO's, ld.so's or the
 *     program's own), which
 *     unmaps this page and returns to x30 = the entry point: the program
 *     then starts with x0 = 0 (munmap's result, as a direct exec's),
 *     x1 = the page's length, x8 = __NR_munmap, x17 = the gadget and
 *     x30 = its entry, where a direct exec leaves them 0 (glibc's and
 *     musl's _start set x29 and x30 and read only x0);
 *   - else by "ret x16" to the entry (x16 keeps it), the page left mapped.
 * Both branches are RET instructions: a RET is never checked against BTI
 * landing pads, so a gadget in the middle of the vDSO's guarded text, or a
 * program entry without "bti c", is entered as the kernel's eret would. */
_Static_assert(offsetof(struct arch_regs, x19) == 16 && offsetof(struct arch_regs, x29) == 96 &&
		       offsetof(struct arch_regs, x30) == 104,
	       "arch_regs as the asm reads it");

/* Whether p[0..4) is "svc #0" (d4000001, little-endian), the start of
 * every gadget below.  Instructions are 4-byte aligned: the same bytes at
 * another offset are data or parts of two instructions.  A scanner tests
 * the first and last bytes at eight positions at once before asking
 * (final.c). */
#define ARCH_SYSCALL_LEN 4
#define ARCH_SYSCALL_FIRST 0x01
#define ARCH_SYSCALL_LAST 0xd4
static inline int arch_is_syscall(const unsigned char *p)
{
	return !((uintptr_t)p & 3) && p[0] == 0x01 && p[1] == 0x00 && p[2] == 0x00 && p[3] == 0xd4;
}

/* Whether p[0..n) is "svc #0; ret" (ret = d65f03c0): a munmap through it
 * returns to x30 with every register but x0 as set before. */
static inline int arch_is_syscall_ret(const unsigned char *p, size_t n)
{
	return n >= 8 && arch_is_syscall(p) && p[4] == 0xc0 && p[5] == 0x03 && p[6] == 0x5f && p[7] == 0xd6;
}

/* The registers a gadget zeroes besides the system call's result: none on
 * arm64, where only "svc #0; ret" is taken (0), else -1. */
static inline long arch_gadget_zeroes(const unsigned char *p, size_t n)
{
	return arch_is_syscall_ret(p, n) ? 0 : -1;
}

static inline int arch_is_gadget(const unsigned char *p, size_t n)
{
	return arch_gadget_zeroes(p, n) >= 0;
}

/* The registers a function call may change (AAPCS64: x0-x18, x30 aside). */
#define ARCH_CALL_CLOBBERED 0x7ffffL

#define ARCH_FINAL                                                   \
	__asm__(".text\n"                                                   \
		".global arch_final_code\n"                             \
		".global arch_final_end\n"                              \
		".p2align 2\n"                                          \
		"arch_final_code:\n"                                    \
		"	mov x19, x0\n"                                  \
		"	ldr x1, [x19, #" ARCH_STR(AF_LOADER_LEN) "]\n"  \
		"	cbz x1, 7f\n"                                   \
		"	ldr x0, [x19, #" ARCH_STR(AF_LOADER_LO) "]\n"   \
		"	mov x8, #" ARCH_STR(__NR_munmap) "\n"           \
		"	svc #0\n"                                       \
		"7:	ldr x1, [x19, #" ARCH_STR(AF_LOADER2_LEN) "]\n" \
		"	cbz x1, 9f\n"                                   \
		"	ldr x0, [x19, #" ARCH_STR(AF_LOADER2_LO) "]\n"  \
		"	mov x8, #" ARCH_STR(__NR_munmap) "\n"           \
		"	svc #0\n"                                       \
		"9:	ldr x1, [x19, #" ARCH_STR(AF_TMP_LEN) "]\n"     \
		"	cbz x1, 8f\n"                                   \
		"	ldr x0, [x19, #" ARCH_STR(AF_TMP_LO) "]\n"      \
		"	mov x8, #" ARCH_STR(__NR_munmap) "\n"           \
		"	svc #0\n"                                       \
		"8:	ldr x9, [x19, #" ARCH_STR(AF_EXE_MODE) "]\n"    \
		"	mov x8, #" ARCH_STR(__NR_prctl) "\n"            \
		"	mov x0, #" ARCH_STR(PR_SET_MM) "\n"             \
		"	mov x3, #0\n"                                   \
		"	mov x4, #0\n"                                   \
		"	cmp x9, #" ARCH_STR(ARCH_EXE_MAP) "\n"          \
		"	b.ne 1f\n"                                      \
		"	mov x1, #" ARCH_STR(PR_SET_MM_MAP) "\n"         \
		"	add x2, x19, #" ARCH_STR(AF_MM) "\n"            \
		"	mov x3, #" ARCH_STR(ARCH_MM_MAP_SIZE) "\n"      \
		"	svc #0\n"                                       \
		"	b 2f\n"                                         \
		"1:	cmp x9, #" ARCH_STR(ARCH_EXE_FILE) "\n"         \
		"	b.ne 3f\n"                                      \
		"	mov x1, #" ARCH_STR(PR_SET_MM_EXE_FILE) "\n"    \
		"	ldr x2, [x19, #" ARCH_STR(AF_EXE_FD) "]\n"      \
		"	svc #0\n"                                       \
		"2:	ldr x0, [x19, #" ARCH_STR(AF_EXE_FD) "]\n"      \
		"	mov x8, #" ARCH_STR(__NR_close) "\n"            \
		"	svc #0\n"                                       \
		"3:	ldr x9, [x19, #" ARCH_STR(AF_DROP_CAPS) "]\n"   \
		"	cbz x9, 4f\n"                                   \
		"	add x0, x19, #" ARCH_STR(AF_CAP_HDR) "\n"       \
		"	add x1, x19, #" ARCH_STR(AF_CAP_DATA) "\n"      \
		"	mov x8, #" ARCH_STR(__NR_capset) "\n"           \
		"	svc #0\n"                                       \
		"	mov x0, #" ARCH_STR(PR_SET_DUMPABLE) "\n"       \
		"	and x1, x9, #1\n"                               \
		"	mov x2, #0\n"                                   \
		"	mov x3, #0\n"                                   \
		"	mov x4, #0\n"                                   \
		"	mov x8, #" ARCH_STR(__NR_prctl) "\n"            \
		"	svc #0\n"                                       \
		"4:	ldr x9, [x19, #" ARCH_STR(AF_SP) "]\n"          \
		"	cbz x9, 6f\n"                                   \
		"	mov sp, x9\n"                                   \
		"6:	ldr x16, [x19, #" ARCH_STR(AF_ENTRY) "]\n"      \
		"	ldr x17, [x19, #" ARCH_STR(AF_GADGET) "]\n"     \
		"	ldp x20, x21, [x19, #" ARCH_STR(AF_REGS) "+24]\n" \
		"	ldp x22, x23, [x19, #" ARCH_STR(AF_REGS) "+40]\n" \
		"	ldp x24, x25, [x19, #" ARCH_STR(AF_REGS) "+56]\n" \
		"	ldp x26, x27, [x19, #" ARCH_STR(AF_REGS) "+72]\n" \
		"	ldp x28, x29, [x19, #" ARCH_STR(AF_REGS) "+88]\n" \
		"	ldr x30, [x19, #" ARCH_STR(AF_REGS) "+104]\n"   \
		"	mov x2, #0\n"                                   \
		"	mov x3, #0\n"                                   \
		"	mov x4, #0\n"                                   \
		"	mov x5, #0\n"                                   \
		"	mov x6, #0\n"                                   \
		"	mov x7, #0\n"                                   \
		"	mov x9, #0\n"                                   \
		"	mov x10, #0\n"                                  \
		"	mov x11, #0\n"                                  \
		"	mov x12, #0\n"                                  \
		"	mov x13, #0\n"                                  \
		"	mov x14, #0\n"                                  \
		"	mov x15, #0\n"                                  \
		"	mov x18, #0\n"                                  \
		"	cbz x17, 5f\n"                                  \
		"	mov x30, x16\n"                                 \
		"	mov x16, #0\n"                                  \
		"	ldr x0, [x19, #" ARCH_STR(AF_PAGE) "]\n"        \
		"	ldr x1, [x19, #" ARCH_STR(AF_PAGE_LEN) "]\n"    \
		"	mov x8, #" ARCH_STR(__NR_munmap) "\n"           \
		"	ldr x19, [x19, #" ARCH_STR(AF_REGS) "+16]\n"    \
		"	ret x17\n"                                      \
		"5:	ldp x0, x1, [x19, #" ARCH_STR(AF_REGS) "]\n"    \
		"	mov x8, #0\n"                                   \
		"	ldr x19, [x19, #" ARCH_STR(AF_REGS) "+16]\n"    \
		"	ret x16\n"                                      \
		"arch_final_end:\n")

extern const char arch_final_code[], arch_final_end[];

/* arch_jump_final(dst, src, len, code, final): copies the program's initial
 * stack block from src to dst, highest byte first (dst lies above src and
 * the two may overlap); then continues with sp at dst and x0 = final into
 * the final stage at code.  The branch is a RET for the reason above. */
#define ARCH_JUMP_FINAL                             \
	__asm__(".text\n"                           \
		".global arch_jump_final\n"         \
		".type arch_jump_final,%function\n" \
		"arch_jump_final:\n"                \
		"	add x5, x0, x2\n"           \
		"	add x6, x1, x2\n"           \
		"1:	cbz x2, 2f\n"               \
		"	ldrb w7, [x6, #-1]!\n"      \
		"	strb w7, [x5, #-1]!\n"      \
		"	sub x2, x2, #1\n"           \
		"	b 1b\n"                     \
		"2:	mov sp, x0\n"               \
		"	mov x0, x4\n"               \
		"	ret x3\n")

__attribute__((noreturn)) void arch_jump_final(void *dst, const void *src, size_t len,
					       const void *code, const struct arch_final *final);
