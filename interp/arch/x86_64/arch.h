/* x86-64: the entry stub that hands the initial stack pointer to C, and the
 * final jump into the program.  Everything else in the loader is portable
 * C over the system calls in sys.h. */
#pragma once

#include <stddef.h>
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

/* arch_jump(dst, src, len, entry): copies the program's initial stack block
 * (argc, argv, envp, auxv, strings) from src to dst, highest byte first,
 * because dst lies above src and the two may overlap, then starts the
 * program at entry with the stack pointer at dst and every other register
 * zero, as the kernel does (%rdx = 0: no rtld_fini for atexit). */
#define ARCH_JUMP                                   \
	__asm__(".text\n"                           \
		".global arch_jump\n"               \
		".type arch_jump,@function\n"       \
		"arch_jump:\n"                      \
		"	mov %rcx, %r8\n"            \
		"	mov %rdx, %rcx\n"           \
		"	lea -1(%rdi,%rcx), %rdi\n"  \
		"	lea -1(%rsi,%rcx), %rsi\n"  \
		"	std\n"                      \
		"	rep movsb\n"                \
		"	cld\n"                      \
		"	lea 1(%rdi), %rsp\n"        \
		"	xor %eax, %eax\n"           \
		"	xor %ebx, %ebx\n"           \
		"	xor %ecx, %ecx\n"           \
		"	xor %edx, %edx\n"           \
		"	xor %esi, %esi\n"           \
		"	xor %edi, %edi\n"           \
		"	xor %ebp, %ebp\n"           \
		"	xor %r9d, %r9d\n"           \
		"	xor %r10d, %r10d\n"         \
		"	xor %r11d, %r11d\n"         \
		"	xor %r12d, %r12d\n"         \
		"	xor %r13d, %r13d\n"         \
		"	xor %r14d, %r14d\n"         \
		"	xor %r15d, %r15d\n"         \
		"	jmp *%r8\n")

__attribute__((noreturn)) void arch_jump(void *dst, const void *src, size_t len, uint64_t entry);
