/* arm64: the system call instruction, for sys.h.  The number in x8,
 * arguments in x0-x5, the result (or -errno) in x0; nothing else is
 * clobbered.  arm64 has only the generic table: the *at forms and
 * dup3, no open, stat or dup2 (sys.h uses those alone). */
#pragma once

static inline long sys_call6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}

/* The kernel's struct stat of newfstatat on arm64, the generic layout
 * (include/uapi/asm-generic/stat.h): what sys.h's statx falls back to
 * where statx is refused. */
struct arch_kstat {
	unsigned long dev, ino;
	unsigned int mode, nlink, uid, gid;
	unsigned long rdev, pad1;
	long size;
	int blksize, pad2;
	long blocks;
	long atime;
	unsigned long atime_nsec;
	long mtime;
	unsigned long mtime_nsec;
	long ctime;
	unsigned long ctime_nsec;
	unsigned int unused4, unused5;
};
_Static_assert(sizeof(struct arch_kstat) == 128, "asm-generic struct stat is 128 bytes");
