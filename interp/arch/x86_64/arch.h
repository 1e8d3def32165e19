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


/* The last stage, copied into an anonymous page of its own because it
 * unmaps the loader (the kernel refuses to change /proc/PID/exe while the
 * old executable is still mapped).  Entered by arch_jump_final with %rsp at the
 * program's initial stack and %rdi pointing at a struct arch_final in the
 * same page.  It unmaps the loader and the block the program's stack was
 * built in (when it was not the loader's own memory), sets the program as the executable
 * (PR_SET_MM_MAP with exe_fd, or PR_SET_MM_EXE_FILE), closes the program's
 * descriptor, and, when asked, drops every capability and makes the
 * process dumpable again.  Last, if a vDSO gadget "syscall; [xor r,r]...;
 * ret" was found, it pushes the entry point and lets the gadget unmap this
 * very page and "return" into the program; else it jumps there directly
 * and the page stays.  Without a page of its own (mmap failed) it runs in
 * place with loader_len 0 and exe_mode NONE: nothing is unmapped. */
struct arch_final {
	uint64_t loader_lo, loader_len; /* 0, 8 */
	uint64_t exe_mode;              /* 16: ARCH_EXE_* */
	uint64_t exe_fd;                /* 24 */
	uint64_t entry;                 /* 32 */
	uint64_t page;                  /* 40: this page */
	uint64_t gadget;                /* 48: vDSO gadget, or 0 */
	uint64_t drop_caps;             /* 56: capset to nothing, dumpable */
	uint32_t cap_hdr[2];            /* 64: version 3, pid 0 */
	uint32_t cap_data[6];           /* 72: all zero */
	uint64_t tmp_lo, tmp_len;       /* 96, 104: where the stack block was built */
	uint64_t mm[13];                /* 112: struct prctl_mm_map (104 bytes) */
};
_Static_assert(offsetof(struct arch_final, tmp_lo) == 96, "arch_final layout is the asm's");
_Static_assert(offsetof(struct arch_final, mm) == 112, "arch_final layout is the asm's");
#define ARCH_EXE_NONE 0
#define ARCH_EXE_MAP 1
#define ARCH_EXE_FILE 2

#define ARCH_FINAL                                  \
	__asm__(".text\n"                           \
		".global arch_final_code\n"         \
		".global arch_final_end\n"          \
		"arch_final_code:\n"                \
		"	mov %rdi, %rbx\n"           \
		"	mov $11, %eax\n"            \
		"	mov 0(%rbx), %rdi\n"        \
		"	mov 8(%rbx), %rsi\n"        \
		"	syscall\n"                  \
		"	mov $11, %eax\n"            \
		"	mov 96(%rbx), %rdi\n"       \
		"	mov 104(%rbx), %rsi\n"      \
		"	syscall\n"                  \
		"	mov 16(%rbx), %rax\n"       \
		"	cmp $1, %rax\n"             \
		"	jne 1f\n"                   \
		"	mov $157, %eax\n"           \
		"	mov $35, %edi\n"            \
		"	mov $14, %esi\n"            \
		"	lea 112(%rbx), %rdx\n"      \
		"	mov $104, %r10d\n"          \
		"	xor %r8d, %r8d\n"           \
		"	syscall\n"                  \
		"	jmp 2f\n"                   \
		"1:	cmp $2, %rax\n"             \
		"	jne 3f\n"                   \
		"	mov $157, %eax\n"           \
		"	mov $35, %edi\n"            \
		"	mov $13, %esi\n"            \
		"	mov 24(%rbx), %rdx\n"       \
		"	xor %r10d, %r10d\n"         \
		"	xor %r8d, %r8d\n"           \
		"	syscall\n"                  \
		"2:	mov $3, %eax\n"             \
		"	mov 24(%rbx), %rdi\n"       \
		"	syscall\n"                  \
		"3:	cmpq $0, 56(%rbx)\n"        \
		"	je 4f\n"                    \
		"	mov $126, %eax\n"           \
		"	lea 64(%rbx), %rdi\n"       \
		"	lea 72(%rbx), %rsi\n"       \
		"	syscall\n"                  \
		"	mov $157, %eax\n"           \
		"	mov $4, %edi\n"             \
		"	mov $1, %esi\n"             \
		"	xor %edx, %edx\n"           \
		"	xor %r10d, %r10d\n"         \
		"	xor %r8d, %r8d\n"           \
		"	syscall\n"                  \
		"4:	mov 32(%rbx), %rcx\n"       \
		"	mov 48(%rbx), %r9\n"        \
		"	mov 40(%rbx), %rdi\n"       \
		"	xor %edx, %edx\n"           \
		"	xor %ebp, %ebp\n"           \
		"	xor %r8d, %r8d\n"           \
		"	xor %r10d, %r10d\n"         \
		"	xor %r11d, %r11d\n"         \
		"	xor %r12d, %r12d\n"         \
		"	xor %r13d, %r13d\n"         \
		"	xor %r14d, %r14d\n"         \
		"	xor %r15d, %r15d\n"         \
		"	xor %ebx, %ebx\n"           \
		"	test %r9, %r9\n"            \
		"	jz 5f\n"                    \
		"	push %rcx\n"                \
		"	xor %ecx, %ecx\n"           \
		"	mov $4096, %esi\n"          \
		"	mov $11, %eax\n"            \
		"	jmp *%r9\n"                 \
		"5:	xor %edi, %edi\n"           \
		"	xor %esi, %esi\n"           \
		"	xor %eax, %eax\n"           \
		"	jmp *%rcx\n"                \
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
		".global arch_jump_final\n"         \
		".type arch_jump_final,@function\n" \
		"arch_jump_final:\n"                \
		"	mov %rcx, %r9\n"            \
		"	mov %rdx, %rcx\n"           \
		"	lea -1(%rdi,%rcx), %rdi\n"  \
		"	lea -1(%rsi,%rcx), %rsi\n"  \
		"	std\n"                      \
		"	rep movsb\n"                \
		"	cld\n"                      \
		"	lea 1(%rdi), %rsp\n"        \
		"	mov %r8, %rdi\n"            \
		"	jmp *%r9\n")

__attribute__((noreturn)) void arch_jump_final(void *dst, const void *src, size_t len,
					       const void *code, const struct arch_final *final);

/* Whether p[0..n) is "syscall", then only "xor r, r" (zeroing, 32 or 64 bit,
 * any register), then "ret": safe to run with the program's entry on top of
 * the stack. */
static inline int arch_is_gadget(const unsigned char *p, size_t n)
{
	size_t i = 2;

	if (n < 3 || p[0] != 0x0f || p[1] != 0x05)
		return 0;
	while (i < n) {
		unsigned rex = 0;
		if (p[i] == 0xc3)
			return 1;
		if ((p[i] & 0xf0) == 0x40)
			rex = p[i++];
		if (i + 1 >= n || (p[i] != 0x31 && p[i] != 0x33))
			return 0;
		unsigned m = p[i + 1];
		/* mod 11, reg == rm, and REX.R == REX.B: the same register. */
		if ((m >> 6) != 3 || ((m >> 3) & 7) != (m & 7) || ((rex >> 2) & 1) != (rex & 1))
			return 0;
		i += 2;
	}
	return 0;
}
