/* x86-64: the two ways into the loader's C code, as top-level asm for the
 * driver (main.c) to expand once.  Each hands C what it needs as
 * arguments; nothing goes through a global. */
#pragma once

#include <stdint.h>

/* _start: the kernel leaves argc at (%rsp).  Align the stack for C and call
 * tiexec_main(sp), which never returns. */
#define ARCH_ENTRY                                  \
	__asm__(".text\n"                           \
		".global _start\n"                  \
		".type _start,@function\n"          \
		"_start:\n"                         \
		"	xor %ebp, %ebp\n"           \
		"	mov %rsp, %rdi\n"           \
		"	and $-16, %rsp\n"           \
		"	call tiexec_main\n"         \
		"	hlt\n")

/* The registers the program (or ld.so, after the hook) must find, beside
 * %rsp: what ld.so left at the hook (%rdx carries its finalizer, for
 * atexit), or all zero from the kernel.  The final stage's asm loads them
 * (arch_final.h: ARCH_FINAL_REGS is this struct's offset there). */
struct arch_regs {
	uint64_t rdx, rbx, rbp, r8, r9, r10, r12, r13, r14, r15;
};
#define ARCH_REGS_SIZE 80 /* final_layout.h: the asm's offsets after it */

/* tiexec_hook: where ld.so gives control back (hookpoint.h), as the
 * program's first preinit function (glibc: a call, the return address at
 * the stack pointer) or as AT_ENTRY (musl: the initial frame at it).  Saves
 * every register ld.so left into a struct arch_regs below the stack
 * pointer's 16-byte-aligned value and calls tiexec_hook_main(sp, regs),
 * which never returns: the final stage restores them. */
#define ARCH_HOOK                                   \
	__asm__(".text\n"                           \
		".global tiexec_hook\n"             \
		".hidden tiexec_hook\n"             \
		".type tiexec_hook,@function\n"     \
		"tiexec_hook:\n"                    \
		"	mov %rsp, %rdi\n"           \
		"	and $-16, %rsp\n"           \
		"	sub $80, %rsp\n"            \
		"	mov %rdx, 0(%rsp)\n"        \
		"	mov %rbx, 8(%rsp)\n"        \
		"	mov %rbp, 16(%rsp)\n"       \
		"	mov %r8, 24(%rsp)\n"        \
		"	mov %r9, 32(%rsp)\n"        \
		"	mov %r10, 40(%rsp)\n"       \
		"	mov %r12, 48(%rsp)\n"       \
		"	mov %r13, 56(%rsp)\n"       \
		"	mov %r14, 64(%rsp)\n"       \
		"	mov %r15, 72(%rsp)\n"       \
		"	mov %rsp, %rsi\n"           \
		"	xor %ebp, %ebp\n"           \
		"	call tiexec_hook_main\n"    \
		"	hlt\n")

extern char tiexec_hook[] __attribute__((visibility("hidden")));

/* Returning from the preinit call (HOOK_PREINIT): where to, and the stack
 * pointer the caller expects.  A call pushed the return address. */
static inline uint64_t arch_hook_return(uint64_t **sp, const struct arch_regs *regs)
{
	(void)regs;
	return *(*sp)++;
}
