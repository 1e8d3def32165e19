/* x86-64: the system call instruction, for sys.h.  Arguments in %rdi, %rsi,
 * %rdx, %r10, %r8, %r9; the result (or -errno) in %rax; %rcx and %r11 are
 * clobbered. */
#pragma once

static inline long sys_call6(long n, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* The kernel's struct stat of newfstatat on x86-64 (arch/x86/include/uapi/
 * asm/stat.h): what sys.h's statx falls back to where statx is refused. */
struct arch_kstat {
	unsigned long dev, ino, nlink;
	unsigned int mode, uid, gid, pad0;
	unsigned long rdev;
	long size, blksize, blocks;
	unsigned long atime, atime_nsec, mtime, mtime_nsec, ctime, ctime_nsec;
	long unused[3];
};
