/* x86-64: the final stage, which unmaps the loader and enters the program
 * (or returns into ld.so after the hook), the copy of the initial stack
 * block that precedes it, and what the portable code needs to find a
 * gadget for its last munmap.  final.c is the only file that expands the
 * asm. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <asm/unistd.h>

#include "final_layout.h"

/* The last stage, copied into an anonymous page of its own because it
 * unmaps the loader (the kernel refuses to change /proc/PID/exe while the
 * old executable is still mapped).  Entered by arch_jump_final with %rsp at
 * the program's initial stack and %rdi pointing at a struct arch_final
 * (final_layout.h) in the same page (or, after the dynamic linker, in the
 * page after it).  It unmaps the loader (one range, or two where its
 * segments leave a hole another mapping may have taken: final.c) and the
 * block the program's stack was built in (each only if its length is not
 * 0: the loader's own memory, or running in place), sets the program as the executable (exe_mode), closes the
 * program's descriptor, and, when asked, drops every capability and makes
 * the process dumpable again.  Last, it loads the program's registers
 * (struct arch_regs: all zero, as from the kernel, or what ld.so left at
 * the hook), and if a gadget "syscall; [xor r,r]...; ret" was found (the
 * vDSO's, or a "syscall; ret" of the interpreter's or the program's),
 * pushes the entry point and
 * lets the gadget unmap this very page (page_len bytes: with the data
 * page, if any) and "return" into the program; else it jumps there
 * directly and the page stays.  Without a page of its own (mmap failed) it
 * runs in place with loader_len 0 and exe_mode NONE: nothing is unmapped. */
_Static_assert(offsetof(struct arch_regs, rbx) == 8 && offsetof(struct arch_regs, r15) == 72,
	       "arch_regs as the asm reads it");

/* Whether p[0..2) is "syscall" (0f 05), the start of every gadget below.
 * A scanner tests its first and last bytes at eight positions at once
 * before asking (final.c). */
#define ARCH_SYSCALL_LEN 2
#define ARCH_SYSCALL_FIRST 0x0f
#define ARCH_SYSCALL_LAST 0x05
static inline int arch_is_syscall(const unsigned char *p)
{
	return p[0] == 0x0f && p[1] == 0x05;
}

/* Whether p[0..n) is "syscall; ret": a munmap through it returns into the
 * program with every register but %rax, %rcx and %r11 as set before. */
static inline int arch_is_syscall_ret(const unsigned char *p, size_t n)
{
	return n >= 3 && p[0] == 0x0f && p[1] == 0x05 && p[2] == 0xc3;
}
#define ARCH_FINAL                                           \
	__asm__(".text\n"                                           \
		".global arch_final_code\n"                     \
		".global arch_final_end\n"                      \
		"arch_final_code:\n"                            \
		"	mov %rdi, %rbx\n"                       \
		"	mov " ARCH_STR(AF_LOADER_LEN) "(%rbx), %rsi\n" \
		"	test %rsi, %rsi\n"                      \
		"	jz 7f\n"                                \
		"	mov $" ARCH_STR(__NR_munmap) ", %eax\n" \
		"	mov " ARCH_STR(AF_LOADER_LO) "(%rbx), %rdi\n" \
		"	syscall\n"                              \
		"7:	mov " ARCH_STR(AF_LOADER2_LEN) "(%rbx), %rsi\n" \
		"	test %rsi, %rsi\n"                      \
		"	jz 9f\n"                                \
		"	mov $" ARCH_STR(__NR_munmap) ", %eax\n" \
		"	mov " ARCH_STR(AF_LOADER2_LO) "(%rbx), %rdi\n" \
		"	syscall\n"                              \
		"9:	mov " ARCH_STR(AF_TMP_LEN) "(%rbx), %rsi\n" \
		"	test %rsi, %rsi\n"                      \
		"	jz 8f\n"                                \
		"	mov $" ARCH_STR(__NR_munmap) ", %eax\n" \
		"	mov " ARCH_STR(AF_TMP_LO) "(%rbx), %rdi\n" \
		"	syscall\n"                              \
		"8:	mov " ARCH_STR(AF_EXE_MODE) "(%rbx), %rax\n" \
		"	cmp $" ARCH_STR(ARCH_EXE_MAP) ", %rax\n" \
		"	jne 1f\n"                               \
		"	mov $" ARCH_STR(__NR_prctl) ", %eax\n"  \
		"	mov $" ARCH_STR(PR_SET_MM) ", %edi\n"   \
		"	mov $" ARCH_STR(PR_SET_MM_MAP) ", %esi\n" \
		"	lea " ARCH_STR(AF_MM) "(%rbx), %rdx\n"  \
		"	mov $" ARCH_STR(ARCH_MM_MAP_SIZE) ", %r10d\n" \
		"	xor %r8d, %r8d\n"                       \
		"	syscall\n"                              \
		"	jmp 2f\n"                               \
		"1:	cmp $" ARCH_STR(ARCH_EXE_FILE) ", %rax\n" \
		"	jne 3f\n"                               \
		"	mov $" ARCH_STR(__NR_prctl) ", %eax\n"  \
		"	mov $" ARCH_STR(PR_SET_MM) ", %edi\n"   \
		"	mov $" ARCH_STR(PR_SET_MM_EXE_FILE) ", %esi\n" \
		"	mov " ARCH_STR(AF_EXE_FD) "(%rbx), %rdx\n" \
		"	xor %r10d, %r10d\n"                     \
		"	xor %r8d, %r8d\n"                       \
		"	syscall\n"                              \
		"2:	mov $" ARCH_STR(__NR_close) ", %eax\n"  \
		"	mov " ARCH_STR(AF_EXE_FD) "(%rbx), %rdi\n" \
		"	syscall\n"                              \
		"3:	cmpq $0, " ARCH_STR(AF_DROP_CAPS) "(%rbx)\n" \
		"	je 4f\n"                                \
		"	mov $" ARCH_STR(__NR_capset) ", %eax\n" \
		"	lea " ARCH_STR(AF_CAP_HDR) "(%rbx), %rdi\n" \
		"	lea " ARCH_STR(AF_CAP_DATA) "(%rbx), %rsi\n" \
		"	syscall\n"                              \
		"	mov $" ARCH_STR(__NR_prctl) ", %eax\n"  \
		"	mov $" ARCH_STR(PR_SET_DUMPABLE) ", %edi\n" \
		"	mov " ARCH_STR(AF_DROP_CAPS) "(%rbx), %rsi\n" \
		"	and $1, %esi\n"                         \
		"	xor %edx, %edx\n"                       \
		"	xor %r10d, %r10d\n"                     \
		"	xor %r8d, %r8d\n"                       \
		"	syscall\n"                              \
		"4:	mov " ARCH_STR(AF_SP) "(%rbx), %rax\n"  \
		"	test %rax, %rax\n"                      \
		"	jz 6f\n"                                \
		"	mov %rax, %rsp\n"                       \
		"6:	mov " ARCH_STR(AF_ENTRY) "(%rbx), %rcx\n" \
		"	mov " ARCH_STR(AF_GADGET) "(%rbx), %rax\n" \
		"	mov " ARCH_STR(AF_PAGE) "(%rbx), %rdi\n" \
		"	mov " ARCH_STR(AF_REGS) "+0(%rbx), %rdx\n" \
		"	mov " ARCH_STR(AF_REGS) "+16(%rbx), %rbp\n" \
		"	mov " ARCH_STR(AF_REGS) "+24(%rbx), %r8\n" \
		"	mov " ARCH_STR(AF_REGS) "+32(%rbx), %r9\n" \
		"	mov " ARCH_STR(AF_REGS) "+40(%rbx), %r10\n" \
		"	mov " ARCH_STR(AF_REGS) "+48(%rbx), %r12\n" \
		"	mov " ARCH_STR(AF_REGS) "+56(%rbx), %r13\n" \
		"	mov " ARCH_STR(AF_REGS) "+64(%rbx), %r14\n" \
		"	mov " ARCH_STR(AF_REGS) "+72(%rbx), %r15\n" \
		"	xor %r11d, %r11d\n"                     \
		"	test %rax, %rax\n"                      \
		"	jz 5f\n"                                \
		"	push %rcx\n"                            \
		"	push %rax\n"                            \
		"	xor %ecx, %ecx\n"                       \
		"	mov " ARCH_STR(AF_PAGE_LEN) "(%rbx), %rsi\n" \
		"	mov $" ARCH_STR(__NR_munmap) ", %eax\n" \
		"	mov " ARCH_STR(AF_REGS) "+8(%rbx), %rbx\n" \
		"	ret\n"                                  \
		"5:	xor %edi, %edi\n"                       \
		"	xor %esi, %esi\n"                       \
		"	mov " ARCH_STR(AF_REGS) "+8(%rbx), %rbx\n" \
		"	jmp *%rcx\n"                            \
		"arch_final_end:\n")

extern const char arch_final_code[], arch_final_end[];

/* arch_jump_final(dst, src, len, code, final): copies the program's initial
 * stack block (argc, argv, envp, auxv, strings) from src to dst, highest byte
 * first, because dst lies above src and the two may overlap; then continues
 * with %rsp at dst and %rdi = final into the final stage at code, which
 * starts the program with every register but %rsp zero, as the kernel does
 * (%rdx = 0: no rtld_fini for atexit). */
#define ARCH_JUMP_FINAL                             \
	__asm__(".text\n"                           \
		".global arch_jump_final\n"                     \
		".type arch_jump_final,@function\n"             \
		"arch_jump_final:\n"                            \
		"	mov %rcx, %r9\n"                        \
		"	mov %rdx, %rcx\n"                       \
		"	lea -1(%rdi,%rcx), %rdi\n"              \
		"	lea -1(%rsi,%rcx), %rsi\n"              \
		"	std\n"                                  \
		"	rep movsb\n"                            \
		"	cld\n"                                  \
		"	lea 1(%rdi), %rsp\n"                    \
		"	mov %r8, %rdi\n"                        \
		"	jmp *%r9\n")

__attribute__((noreturn)) void arch_jump_final(void *dst, const void *src, size_t len,
					       const void *code, const struct arch_final *final);

/* If p[0..n) is "syscall", then only "xor r, r" (zeroing, 32 or 64 bit,
 * any register), then "ret" -- safe to run with the program's entry on top
 * of the stack -- the registers it zeroes, bit i for register number i
 * (%rax 0, %rcx 1, %rdx 2, ... %r15 15); else -1. */
static inline long arch_gadget_zeroes(const unsigned char *p, size_t n)
{
	size_t i = 2;
	long regs = 0;

	if (n < 3 || !arch_is_syscall(p))
		return -1;
	while (i < n) {
		unsigned rex = 0;
		if (p[i] == 0xc3)
			return regs;
		if ((p[i] & 0xf0) == 0x40)
			rex = p[i++];
		if (i + 1 >= n || (p[i] != 0x31 && p[i] != 0x33))
			return -1;
		unsigned m = p[i + 1];
		/* mod 11, reg == rm, and REX.R == REX.B: the same register. */
		if ((m >> 6) != 3 || ((m >> 3) & 7) != (m & 7) || ((rex >> 2) & 1) != (rex & 1))
			return -1;
		regs |= 1L << ((m & 7) | (rex & 1) << 3);
		i += 2;
	}
	return -1;
}

static inline int arch_is_gadget(const unsigned char *p, size_t n)
{
	return arch_gadget_zeroes(p, n) >= 0;
}

/* The registers a function call may change (SysV ABI: all but %rbx, %rsp,
 * %rbp and %r12-%r15): a gadget zeroing only these may end a return from
 * a call. */
#define ARCH_CALL_CLOBBERED 0x0fc7L
