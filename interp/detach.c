/* tiexec's own image off its file (see detach.h). */
#include "detach.h"

#include <elf.h>
#include <errno.h>

#include "image.h"
#include "proc.h"
#include "rt.h"
#include "sys.h"

/* The copy of [lo, lo + len) into tmp: a read-only segment from the file
 * (fd, at off) when it can be read there, and the memory's bytes otherwise
 * (writable data holds relocated pointers).  The file's bytes, because an
 * attached uprobe (a USDT probe of tiexec-trace) is an int3 written into
 * the memory of a file mapping: copied, it would trap where no probe is
 * registered.  Returns whether the memory differed from the file. */
static int copy_bytes(void *tmp, uint64_t lo, uint64_t len, int fd, uint64_t off)
{
	long got = fd >= 0 ? sys_pread(fd, tmp, len, off) : -1;

	if (got < 0) {
		memcpy(tmp, (const void *)(uintptr_t)lo, len);
		return 0;
	}
	memset((char *)tmp + got, 0, len - (uint64_t)got);
	return memcmp(tmp, (const void *)(uintptr_t)lo, (size_t)got) != 0;
}

/* [lo, lo + len) again at the same address, from anonymous memory: a copy
 * made read+write, given its protection and moved over the original in one
 * mremap.  Executable memory that may not be made so by mprotect
 * (MemoryDenyWriteExecute) comes from a memfd instead, mapped over the
 * original in one mmap.  Either way the bytes never change under the
 * instructions running from them. */
static int detach_range(uint64_t lo, uint64_t len, int prot, int fd, uint64_t off, int *probed)
{
	/* Populated at once: page by page, the faults cost more than the copy. */
	long tmp = sys_mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (tmp < 0)
		return -1;
	*probed |= copy_bytes((void *)tmp, lo, len, (prot & PROT_WRITE) ? -1 : fd, off);
	if (sys_mprotect((uint64_t)tmp, len, prot) == 0) {
		long m = SC(__NR_mremap, tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, lo, 0);
		if (m == (long)lo)
			return 0;
		sys_munmap((uint64_t)tmp, len);
		return -1;
	}
	long mfd = sys_memfd_create("tiexec", TX_MFD_CLOEXEC | TX_MFD_EXEC);
	if (mfd == -EINVAL)
		mfd = sys_memfd_create("tiexec", TX_MFD_CLOEXEC);
	int ok = mfd >= 0 && sys_pwrite((int)mfd, (void *)tmp, len, 0) == (long)len &&
		 sys_mmap(lo, len, prot, MAP_PRIVATE | MAP_FIXED, (int)mfd, 0) == (long)lo;
	if (mfd >= 0)
		sys_close((int)mfd);
	sys_munmap((uint64_t)tmp, len);
	return ok ? 0 : -1;
}

int self_detach(int *keep_fd)
{
	unsigned n;
	const Elf64_Phdr *ph = own_phdrs(&n);
	uint64_t base = (uint64_t)(uintptr_t)tx_ehdr_start;
	int fd = (int)sys_openat(TX_AT_FDCWD, "/proc/self/exe", O_RDONLY | O_CLOEXEC, 0), probed = 0, r = 0;

	for (unsigned i = 0; i < n && r == 0; i++) {
		if (ph[i].p_type != PT_LOAD || !ph[i].p_filesz)
			continue;
		uint64_t lo = tx_down(base + ph[i].p_vaddr, TX_PAGE);
		uint64_t hi = tx_up(base + ph[i].p_vaddr + ph[i].p_filesz, TX_PAGE);
		r = detach_range(lo, hi - lo, prot_of(ph[i].p_flags), fd, tx_down(ph[i].p_offset, TX_PAGE), &probed);
	}
	*keep_fd = -1;
	if (probed && r == 0)
		*keep_fd = fd;
	else if (fd >= 0)
		sys_close(fd);
	return r;
}

void self_reattach(int fd)
{
	unsigned n;
	const Elf64_Phdr *ph = own_phdrs(&n);
	uint64_t base = (uint64_t)(uintptr_t)tx_ehdr_start;

	if (fd < 0)
		return;
	for (unsigned i = 0; i < n; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X) || !ph[i].p_filesz)
			continue;
		uint64_t lo = tx_down(base + ph[i].p_vaddr, TX_PAGE);
		uint64_t hi = tx_up(base + ph[i].p_vaddr + ph[i].p_filesz, TX_PAGE);
		sys_mmap(lo, hi - lo, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd,
			 tx_down(ph[i].p_offset, TX_PAGE));
	}
	sys_close(fd);
}
