/* arm64: the two ways into the loader's C code, as top-level asm for the
 * driver (main.c) to expand once.  Each hands C what it needs as
 * arguments; nothing goes through a global. */
#pragma once

#include <stdint.h>

/* _start: the kernel leaves argc at sp (16-byte aligned, every register
 * zero).  Call tiexec_main(sp), which never returns; the frame chain ends
 * here (x29 = x30 = 0). */
#define ARCH_ENTRY                                  \
	__asm__(".text\n"                           \
		".global _start\n"                  \
		".type _start,%function\n"          \
		"_start:\n"                         \
		"	mov x29, #0\n"              \
		"	mov x30, #0\n"              \
		"	mov x0, sp\n"               \
		"	and x9, x0, #-16\n"         \
		"	mov sp, x9\n"               \
		"	bl tiexec_main\n"           \
		"	udf #0\n")

/* The registers the program (or ld.so, after the hook) must find, beside
 * sp: what ld.so left at the hook, or all zero from the kernel.  x0 and
 * x1 for the AT_ENTRY route (glibc's _start reads its finalizer in x0),
 * the callee-saved x19-x29, and x30, the return address of the preinit
 * call.  The final stage's asm loads them (arch_final.h: AF_REGS). */
struct arch_regs {
	uint64_t x0, x1;
	uint64_t x19, x20, x21, x22, x23, x24, x25, x26, x27, x28;
	uint64_t x29, x30;
};
#define ARCH_REGS_SIZE 112 /* final_layout.h: the asm's offsets after it */

/* tiexec_hook: where ld.so gives control back (hookpoint.h), as the
 * program's first preinit function (glibc: a call by blr, the return
 * address in x30, sp as the caller left it) or as AT_ENTRY (musl: a
 * branch, the initial frame at sp).  Saves the registers of struct
 * arch_regs below sp's 16-byte-aligned value and calls
 * tiexec_hook_main(sp, regs), which never returns: the final stage
 * restores them.  The loader is not BTI-marked, so its text is not
 * guarded and ld.so's blr needs no landing pad here. */
#define ARCH_HOOK                                   \
	__asm__(".text\n"                           \
		".global tiexec_hook\n"             \
		".hidden tiexec_hook\n"             \
		".type tiexec_hook,%function\n"     \
		"tiexec_hook:\n"                    \
		"	mov x9, sp\n"               \
		"	and x10, x9, #-16\n"        \
		"	sub x10, x10, #112\n"       \
		"	mov sp, x10\n"              \
		"	stp x0, x1, [sp, #0]\n"     \
		"	stp x19, x20, [sp, #16]\n"  \
		"	stp x21, x22, [sp, #32]\n"  \
		"	stp x23, x24, [sp, #48]\n"  \
		"	stp x25, x26, [sp, #64]\n"  \
		"	stp x27, x28, [sp, #80]\n"  \
		"	stp x29, x30, [sp, #96]\n"  \
		"	mov x0, x9\n"               \
		"	mov x1, sp\n"               \
		"	mov x29, #0\n"              \
		"	bl tiexec_hook_main\n"      \
		"	udf #0\n")

extern char tiexec_hook[] __attribute__((visibility("hidden")));

/* Returning from the preinit call (HOOK_PREINIT): where to, and the stack
 * pointer the caller expects.  A blr leaves the return address in x30 and
 * sp as it was. */
static inline uint64_t arch_hook_return(uint64_t **sp, const struct arch_regs *regs)
{
	(void)sp;
	return regs->x30;
}
