/* Raw Linux system calls for the freestanding loader (the instruction is
 * arch_syscall.h's).
 *
 * The loader links no libc, so every kernel service goes through these
 * wrappers.  They return the kernel's result unchanged: a negative errno on
 * failure, never -1 with errno set.  Constants that Debian 12's 6.1 uapi
 * headers do not have yet are defined here with the kernel version that added
 * them. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <asm/unistd.h>
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/limits.h> /* PATH_MAX */
#include <linux/mman.h>
#include <linux/prctl.h>
#include <linux/stat.h>

#include "arch_syscall.h"

#define SC(n, a, b, c, d, e, f) \
	sys_call6(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_DONTNEED
#define MADV_DONTNEED 4
#endif
#ifndef MADV_RANDOM
#define MADV_NORMAL 0
#define MADV_RANDOM 1
#endif
#ifndef MADV_POPULATE_READ /* Linux 5.14 */
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_COLLAPSE /* Linux 6.1 */
#define MADV_COLLAPSE 25
#endif
#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif
#ifndef POSIX_FADV_DONTNEED
#define POSIX_FADV_DONTNEED 4
#endif
#ifndef PROT_GROWSDOWN
#define PROT_GROWSDOWN 0x01000000
#endif
/* File mode bits: include/uapi/linux/stat.h's, one set for every
 * architecture (unlike the O_* flags, which come from <linux/fcntl.h> for
 * the arch being built); glibc hides the uapi ones behind its own. */
#ifndef S_IFMT
#define S_IFMT 0170000
#define S_IFDIR 0040000
#define S_IFREG 0100000
#define S_IFLNK 0120000
#define S_ISUID 0004000
#define S_ISGID 0002000
#endif
#define X_OK 1
#define R_OK 4
#define TX_AT_FDCWD (-100)
#define TX_AT_EMPTY_PATH 0x1000
#define TX_CLOCK_MONOTONIC 1

/* PAGEMAP_SCAN (Linux 6.7): asks the kernel which ranges of our own address
 * space are mapped by huge pages (PMD-mapped THP or hugetlb), unprivileged. */
#define TX_PAGEMAP_SCAN 0xc0606610UL /* _IOWR('f', 16, struct pm_scan_arg) */
#define TX_PAGE_IS_FILE (1UL << 2)
#define TX_PAGE_IS_PRESENT (1UL << 3)
#define TX_PAGE_IS_SWAPPED (1UL << 4)
#define TX_PAGE_IS_HUGE (1UL << 6)
struct tx_page_region {
	uint64_t start, end, categories;
};
struct tx_pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

struct tx_timespec {
	long sec, nsec;
};

static inline long sys_read(int fd, void *b, size_t n) { return SC(__NR_read, fd, b, n, 0, 0, 0); }
static inline long sys_write(int fd, const void *b, size_t n) { return SC(__NR_write, fd, b, n, 0, 0, 0); }
static inline long sys_pread(int fd, void *b, size_t n, uint64_t off) { return SC(__NR_pread64, fd, b, n, off, 0, 0); }
static inline long sys_openat(int dfd, const char *p, int fl, int mode) { return SC(__NR_openat, dfd, p, fl, mode, 0, 0); }
static inline long sys_close(int fd) { return SC(__NR_close, fd, 0, 0, 0, 0, 0); }
/* statx, or where a seccomp filter refuses it (EPERM, ENOSYS: Docker's
 * profiles before 2020, some sandboxes) newfstatat with the same flags,
 * its answer put in statx's form: type, mode, owner, inode, device, size,
 * blocks and the three times, which is all tiexec asks. */
static inline long sys_statx(int dfd, const char *p, int fl, unsigned mask, struct statx *st)
{
	long e = SC(__NR_statx, dfd, p, fl, mask, st, 0);
	if (e != -ENOSYS && e != -EPERM)
		return e;
	struct arch_kstat k;
	long f = SC(__NR_newfstatat, dfd, p, &k, fl, 0, 0);
	if (f < 0)
		return f;
	unsigned char *z = (unsigned char *)st;
	for (size_t i = 0; i < sizeof(*st); i++)
		z[i] = 0;
	st->stx_mask = STATX_BASIC_STATS;
	st->stx_mode = (uint16_t)k.mode;
	st->stx_uid = k.uid;
	st->stx_gid = k.gid;
	st->stx_nlink = (uint32_t)k.nlink;
	st->stx_ino = k.ino;
	st->stx_size = (uint64_t)k.size;
	st->stx_blocks = (uint64_t)k.blocks;
	st->stx_blksize = (uint32_t)k.blksize;
	/* new_encode_dev's layout: minor in bits 0-7 and 20-31, major 8-19. */
	st->stx_dev_major = (uint32_t)((k.dev >> 8) & 0xfff);
	st->stx_dev_minor = (uint32_t)((k.dev & 0xff) | ((k.dev >> 12) & 0xfff00));
	st->stx_rdev_major = (uint32_t)((k.rdev >> 8) & 0xfff);
	st->stx_rdev_minor = (uint32_t)((k.rdev & 0xff) | ((k.rdev >> 12) & 0xfff00));
	st->stx_atime.tv_sec = (int64_t)k.atime;
	st->stx_atime.tv_nsec = (uint32_t)k.atime_nsec;
	st->stx_mtime.tv_sec = (int64_t)k.mtime;
	st->stx_mtime.tv_nsec = (uint32_t)k.mtime_nsec;
	st->stx_ctime.tv_sec = (int64_t)k.ctime;
	st->stx_ctime.tv_nsec = (uint32_t)k.ctime_nsec;
	return 0;
}
static inline long sys_faccessat(int dfd, const char *p, int mode) { return SC(__NR_faccessat, dfd, p, mode, 0, 0, 0); }
static inline long sys_mmap(uint64_t a, size_t n, int prot, int fl, int fd, uint64_t off)
{
	return SC(__NR_mmap, a, n, prot, fl, fd, off);
}
static inline long sys_munmap(uint64_t a, size_t n) { return SC(__NR_munmap, a, n, 0, 0, 0, 0); }
static inline long sys_mprotect(uint64_t a, size_t n, int prot) { return SC(__NR_mprotect, a, n, prot, 0, 0, 0); }
static inline long sys_madvise(uint64_t a, size_t n, int adv) { return SC(__NR_madvise, a, n, adv, 0, 0, 0); }
static inline long sys_fadvise(int fd, uint64_t off, uint64_t n, int adv) { return SC(__NR_fadvise64, fd, off, n, adv, 0, 0); }
static inline long sys_prctl(int op, unsigned long a, unsigned long b, unsigned long c, unsigned long d)
{
	return SC(__NR_prctl, op, a, b, c, d, 0);
}
static inline long sys_ioctl(int fd, unsigned long req, void *arg) { return SC(__NR_ioctl, fd, req, arg, 0, 0, 0); }
static inline long sys_brk(uint64_t a) { return SC(__NR_brk, a, 0, 0, 0, 0, 0); }
static inline long sys_getrandom(void *b, size_t n, unsigned fl) { return SC(__NR_getrandom, b, n, fl, 0, 0, 0); }
static inline long sys_clock_gettime(int clk, struct tx_timespec *ts) { return SC(__NR_clock_gettime, clk, ts, 0, 0, 0, 0); }
static inline long sys_execve(const char *p, char *const *argv, char *const *envp)
{
	return SC(__NR_execve, p, argv, envp, 0, 0, 0);
}
static inline long sys_getxattr(const char *p, const char *name, void *v, size_t n)
{
	return SC(__NR_getxattr, p, name, v, n, 0, 0);
}
static inline long sys_fgetxattr(int fd, const char *name, void *v, size_t n)
{
	return SC(__NR_fgetxattr, fd, name, v, n, 0, 0);
}
/* For the final stage's page (final.c) and the descriptor budget (fds.c). */
#define TX_MFD_CLOEXEC 0x1U
#define TX_MFD_EXEC 0x10U /* Linux 6.3; older kernels say EINVAL */
#define TX_RLIMIT_STACK 3
#define TX_RLIMIT_AS 9
#define TX_RLIMIT_NOFILE 7
#define TX_RLIM_INFINITY (~0ULL)
#define TX_F_DUPFD_CLOEXEC 1030
#define TX_F_SETLEASE 1024
#define TX_F_SETFD 2
#define TX_FD_CLOEXEC 1
#define TX_F_RDLCK 0
#define TX_F_UNLCK 2
#define TX_SIGIO 29
#define TX_SIG_BLOCK 0
#define TX_SIG_SETMASK 2
struct tx_rlimit {
	uint64_t cur, max;
};
static inline long sys_memfd_create(const char *name, unsigned fl) { return SC(__NR_memfd_create, name, fl, 0, 0, 0, 0); }
static inline long sys_pwrite(int fd, const void *b, size_t n, uint64_t off) { return SC(__NR_pwrite64, fd, b, n, off, 0, 0); }
static inline long sys_prlimit(int res, const struct tx_rlimit *nw, struct tx_rlimit *old)
{
	return SC(__NR_prlimit64, 0, res, nw, old, 0, 0);
}
static inline long sys_readlinkat(int dfd, const char *p, char *b, size_t n) { return SC(__NR_readlinkat, dfd, p, b, n, 0, 0); }
static inline long sys_fcntl(int fd, int cmd, long arg) { return SC(__NR_fcntl, fd, cmd, arg, 0, 0, 0); }
static inline long sys_getpid(void) { return SC(__NR_getpid, 0, 0, 0, 0, 0, 0); }
struct tx_iovec {
	void *base;
	size_t len;
};
static inline long sys_process_vm_readv(long pid, const struct tx_iovec *l, unsigned long nl,
					const struct tx_iovec *r, unsigned long nr)
{
	return SC(__NR_process_vm_readv, pid, l, nl, r, nr, 0);
}
static inline __attribute__((noreturn)) void sys_exit(int code)
{
	for (;;)
		SC(__NR_exit_group, code, 0, 0, 0, 0, 0);
}

/* A small file (in /proc or /sys) read whole into b[n], NUL-terminated:
 * the bytes read, or -errno when it cannot be opened. */
static inline long tx_read_text(const char *path, char *b, unsigned long n)
{
	int fd = (int)sys_openat(TX_AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	long got = 0, r;

	if (fd < 0)
		return fd;
	while (got < (long)n - 1 && (r = sys_read(fd, b + got, n - 1 - (unsigned long)got)) > 0)
		got += r;
	sys_close(fd);
	b[got] = '\0';
	return got;
}

/* One struct linux_dirent64 at d in a getdents64 buffer: its name, and
 * how far the next one lies. */
static inline const char *tx_dirent_name(const char *d) { return d + 19; }
static inline unsigned tx_dirent_reclen(const char *d) { return *(const unsigned short *)(const void *)(d + 16); }
