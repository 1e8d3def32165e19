/* A library's window, mapped from the text cache (textcache.h "window
 * entry"): run from the stage after ld.so, for a window target of the plan
 * that landed (libplan.c), once its holds are given back. */
#include "libwindow.h"

#include <linux/mman.h>

#include "cacheconv.h"
#include "geom.h"
#include "image.h"
#include "rt.h"
#include "sys.h"
#include "textcache.h"

#define CMP_BYTES 4096 /* the library's ELF header, program headers, build-id */

/* The window entry of the library open at fd, checked: one 2 MiB page
 * whose bytes from 2 MiB - below are the library's first bytes as ld.so
 * mapped them at start (its headers and build-id: the same file).  Its
 * descriptor, or -1 with *why. */
static int window_entry(const char *dir, struct textcache_trust *trust, int fd, uint64_t start, uint64_t below,
			const char **why)
{
	static unsigned char mem[CMP_BYTES], ent[CMP_BYTES];
	char name[TEXTCACHE_NAME_MAX];
	struct statx st;
	struct tx_iovec l = { mem, CMP_BYTES }, r = { (void *)(uintptr_t)start, CMP_BYTES };

	*why = "its file cannot be looked at";
	if (sys_statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) < 0 ||
	    !textcache_window_name(&st, name, sizeof(name)))
		return -1;
	*why = NULL;
	int e = textcache_open_with(dir, trust, name, why);
	if (e < 0) {
		if (!*why)
			*why = "no window entry for this file (tiexec-warm makes one for a program it warms)";
		return -1;
	}
	if (sys_statx(e, "", AT_EMPTY_PATH, STATX_SIZE, &st) < 0 || st.stx_size != TX_HUGE)
		*why = "its window entry is not one 2 MiB page";
	else if (sys_process_vm_readv(sys_getpid(), &l, 1, &r, 1) != CMP_BYTES ||
		 sys_pread(e, ent, CMP_BYTES, (long)below) != CMP_BYTES || memcmp(mem, ent, CMP_BYTES))
		*why = "its window entry is not the library ld.so mapped";
	else
		return e;
	sys_close(e);
	return -1;
}

/* Holds [a, a + len) where nothing is mapped there (MAP_FIXED_NOREPLACE):
 * whether it did. */
static int hold_free(uint64_t a, uint64_t len)
{
	long r = sys_mmap(a, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	if (r >= 0 && r != (long)a) /* a kernel that took the address as a hint */
		sys_munmap((uint64_t)r, len);
	return r == (long)a;
}

const char *libwindow_map(const char *dir, struct textcache_trust *trust, const char *path, uint64_t start,
			  uint64_t below, unsigned long hwcap2,
			  const struct cconv *cc)
{
	const char *why = "no text cache (TIEXEC_CACHE is empty)";
	uint64_t w = start - below;

	if (!dir)
		return why;
	int fd = (int)sys_openat(TX_AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return "its file cannot be opened";
	int e = window_entry(dir, trust, fd, start, below, &why);
	int xprot = e >= 0 ? image_fd_exec_prot(fd, hwcap2) : 0;
	sys_close(fd);
	if (e < 0)
		return why;
	/* The mremap below replaces whatever lies in the window: below the
	 * library only what the plan held, given back.  Held again while the
	 * entry is mapped aside, so that it does not land there: mremap
	 * refuses a source that overlaps its destination. */
	if (!hold_free(w, below)) {
		sys_close(e);
		return "something was mapped below it, in its window, after the plan's hold was given back";
	}
	/* Mapped aside, then moved over the window in one mremap: the
	 * library's read-only image is never unmapped. */
	long m = sys_mmap(0, TX_HUGE, PROT_READ | PROT_EXEC | xprot, MAP_PRIVATE, e, 0);
	sys_close(e);
	long r = m < 0 ? m : SC(__NR_mremap, m, TX_HUGE, TX_HUGE, MREMAP_MAYMOVE | MREMAP_FIXED, w, 0);
	if (r == (long)w) {
		/* Every page mapped now: where a 2 MiB piece is a
		 * contiguous-PTE block (16 KiB pages) only a whole one is
		 * folded; on 4 KiB pages the first fault maps the PMD. */
		cconv_populate(cc, w, TX_HUGE, 0);
		return NULL;
	}
	sys_munmap(w, below);
	if (m < 0)
		return "its window entry cannot be mapped";
	sys_munmap((uint64_t)m, TX_HUGE);
	return "its window entry cannot be moved over the window (mremap)";
}
