/* tiexec's own image off its file (see detach.h). */
#include "detach.h"

#include <elf.h>
#include <errno.h>

#include "loader.h"
#include "sys.h"

/* [lo, lo + len) again at the same address, from anonymous memory: a copy
 * made read+write, given its protection and moved over the original in one
 * mremap.  Executable memory that may not be made so by mprotect
 * (MemoryDenyWriteExecute) comes from a memfd instead, mapped over the
 * original in one mmap.  Either way the bytes never change under the
 * instructions running from them. */
static int detach_range(uint64_t lo, uint64_t len, int prot)
{
	long tmp = sys_mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (tmp < 0)
		return -1;
	memcpy((void *)tmp, (const void *)(uintptr_t)lo, len);
	if (sys_mprotect((uint64_t)tmp, len, prot) == 0) {
		long m = SC(__NR_mremap, tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, lo, 0);
		if (m == (long)lo)
			return 0;
		sys_munmap((uint64_t)tmp, len);
		return -1;
	}
	long fd = sys_memfd_create("tiexec", TX_MFD_CLOEXEC | TX_MFD_EXEC);
	if (fd == -EINVAL)
		fd = sys_memfd_create("tiexec", TX_MFD_CLOEXEC);
	int ok = fd >= 0 && sys_pwrite((int)fd, (void *)tmp, len, 0) == (long)len &&
		 sys_mmap(lo, len, prot, MAP_PRIVATE | MAP_FIXED, (int)fd, 0) == (long)lo;
	if (fd >= 0)
		sys_close((int)fd);
	sys_munmap((uint64_t)tmp, len);
	return ok ? 0 : -1;
}

int self_detach(void)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(uintptr_t)tx_ehdr_start;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(uintptr_t)(tx_ehdr_start + eh->e_phoff);
	uint64_t base = (uint64_t)(uintptr_t)tx_ehdr_start;

	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !ph[i].p_filesz)
			continue;
		uint64_t lo = tx_down(base + ph[i].p_vaddr, TX_PAGE);
		uint64_t hi = tx_up(base + ph[i].p_vaddr + ph[i].p_filesz, TX_PAGE);
		if (detach_range(lo, hi - lo, prot_of(ph[i].p_flags)) < 0)
			return -1;
	}
	return 0;
}
