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
 * old executable is still mapped).  Entered by arch_jump_final with %rsp at
 * the program's initial stack and %rdi pointing at a struct arch_final in
 * the same page (or, after the dynamic linker, in the page after it).  It
 * unmaps the loader and the block the program's stack was built in (each
 * only if its length is not 0: the loader's own memory, or running in
 * place), sets the program as the executable (PR_SET_MM_MAP with exe_fd,
 * or PR_SET_MM_EXE_FILE), closes the program's descriptor, and, when
 * asked, drops every capability and makes the process dumpable again.
 * Last, it loads the program's registers (all zero, as from the kernel;
 * or, after the dynamic linker, what ld.so left: see ARCH_HOOK), and if a
 * gadget "syscall; [xor r,r]...; ret" was found (the vDSO's, or the
 * interpreter's "syscall; ret"), pushes the entry point and lets the
 * gadget unmap this very page (page_len bytes: with the data page, if
 * any) and "return" into the program; else it jumps there directly and
 * the page stays.  Without a page of its own (mmap failed) it runs in
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
	uint64_t sp;                    /* 216: the program's stack pointer, 0: %rsp already is */
	struct arch_regs {              /* 224: the registers the program starts with */
		uint64_t rdx, rbx, rbp, r8, r9, r10, r12, r13, r14, r15;
	} regs;
	uint64_t page_len;              /* 304: bytes the gadget unmaps at page */
};
_Static_assert(offsetof(struct arch_final, tmp_lo) == 96, "arch_final layout is the asm's");
_Static_assert(offsetof(struct arch_final, mm) == 112, "arch_final layout is the asm's");
_Static_assert(offsetof(struct arch_final, sp) == 216, "arch_final layout is the asm's");
_Static_assert(offsetof(struct arch_final, regs) == 224, "arch_final layout is the asm's");
_Static_assert(offsetof(struct arch_final, page_len) == 304, "arch_final layout is the asm's");

/* The stage after the dynamic linker (libs.c): ld.so calls this as the
 * program's first preinit function (glibc), or enters it as AT_ENTRY
 * (musl; see hookpoint.h).  Every register ld.so left is saved in
 * tx_hook_regs (%rdx carries its finalizer, for atexit) and %rsp in
 * tx_hook_sp, then tiexec_hook_main runs on the program's stack and never
 * returns: the final stage restores them and returns into ld.so (or jumps
 * to the program). */
#define ARCH_HOOK                                   \
	__asm__(".text\n"                           \
		".global tiexec_hook\n"             \
		".hidden tiexec_hook\n"             \
		".type tiexec_hook,@function\n"     \
		"tiexec_hook:\n"                    \
		"	mov %rsp, tx_hook_sp(%rip)\n" \
		"	mov %rdx, tx_hook_regs+0(%rip)\n" \
		"	mov %rbx, tx_hook_regs+8(%rip)\n" \
		"	mov %rbp, tx_hook_regs+16(%rip)\n" \
		"	mov %r8, tx_hook_regs+24(%rip)\n" \
		"	mov %r9, tx_hook_regs+32(%rip)\n" \
		"	mov %r10, tx_hook_regs+40(%rip)\n" \
		"	mov %r12, tx_hook_regs+48(%rip)\n" \
		"	mov %r13, tx_hook_regs+56(%rip)\n" \
		"	mov %r14, tx_hook_regs+64(%rip)\n" \
		"	mov %r15, tx_hook_regs+72(%rip)\n" \
		"	and $-16, %rsp\n"           \
		"	xor %ebp, %ebp\n"           \
		"	call tiexec_hook_main\n"    \
		"	hlt\n")

extern char tiexec_hook[] __attribute__((visibility("hidden")));

/* Whether p[0..2) is "syscall" (0f 05), the start of every gadget below.
 * Its last byte is rare in code (one byte in ~130 of ld.so's text): a
 * scanner looks for that byte first, eight at a time. */
#define ARCH_SYSCALL_LEN 2
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
#define ARCH_EXE_NONE 0
#define ARCH_EXE_MAP 1
#define ARCH_EXE_FILE 2

#define ARCH_FINAL                                  \
	__asm__(".text\n"                           \
		".global arch_final_code\n"         \
		".global arch_final_end\n"          \
		"arch_final_code:\n"                \
		"	mov %rdi, %rbx\n"           \
		"	mov 8(%rbx), %rsi\n"        \
		"	test %rsi, %rsi\n"          \
		"	jz 7f\n"                    \
		"	mov $11, %eax\n"            \
		"	mov 0(%rbx), %rdi\n"        \
		"	syscall\n"                  \
		"7:	mov 104(%rbx), %rsi\n"      \
		"	test %rsi, %rsi\n"          \
		"	jz 8f\n"                    \
		"	mov $11, %eax\n"            \
		"	mov 96(%rbx), %rdi\n"       \
		"	syscall\n"                  \
		"8:	mov 16(%rbx), %rax\n"       \
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
		"4:	mov 216(%rbx), %rax\n"      \
		"	test %rax, %rax\n"          \
		"	jz 6f\n"                    \
		"	mov %rax, %rsp\n"           \
		"6:	mov 32(%rbx), %rcx\n"       \
		"	mov 48(%rbx), %rax\n"       \
		"	mov 40(%rbx), %rdi\n"       \
		"	mov 224(%rbx), %rdx\n"      \
		"	mov 240(%rbx), %rbp\n"      \
		"	mov 248(%rbx), %r8\n"       \
		"	mov 256(%rbx), %r9\n"       \
		"	mov 264(%rbx), %r10\n"      \
		"	mov 272(%rbx), %r12\n"      \
		"	mov 280(%rbx), %r13\n"      \
		"	mov 288(%rbx), %r14\n"      \
		"	mov 296(%rbx), %r15\n"      \
		"	xor %r11d, %r11d\n"         \
		"	test %rax, %rax\n"          \
		"	jz 5f\n"                    \
		"	push %rcx\n"                \
		"	push %rax\n"                \
		"	xor %ecx, %ecx\n"           \
		"	mov 304(%rbx), %rsi\n"      \
		"	mov $11, %eax\n"            \
		"	mov 232(%rbx), %rbx\n"      \
		"	ret\n"                      \
		"5:	xor %edi, %edi\n"           \
		"	xor %esi, %esi\n"           \
		"	mov 232(%rbx), %rbx\n"      \
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
