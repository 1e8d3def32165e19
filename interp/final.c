/* The final stage: from the loader into the program, or into ld.so and,
 * after the hook, back into ld.so.
 *
 * Stage contract.  final_open runs before the stack stage and writes fp:
 * the page the final stage's code will run from.  final_enter reads
 * everything before it (the block, the bounds, the exe link's mode, the
 * hook point) and never returns: it copies the block to the program's
 * stack pointer and runs the final asm (arch_final.h), which unmaps the
 * loader, sets /proc/PID/exe, drops the opt-in's capabilities and enters
 * the program -- or, with a stage after ld.so, enters ld.so with the
 * capabilities dropped and tiexec still mapped, writing ex's final section
 * for the hook.  final_after_hook runs after the libraries stage, on the
 * program's stack with the registers ld.so left (sp, regs), puts back what
 * the hook point borrowed, and leaves through the same asm into ld.so (or
 * the program).  This is the only file that expands the final asm.  Exits
 * with nothing: past this point the process is the program's. */
#include <errno.h>
#include <linux/auxvec.h>

#include "arch_cache.h"
#include "caps.h"
#include "exec.h"
#include "fds.h"
#include "proc.h"
#include "sys.h"

ARCH_FINAL;
ARCH_JUMP_FINAL;

/* The address of the first gadget `is` accepts in [b, b + len).  Every
 * gadget starts with a syscall instruction, and `is` is asked only where
 * one may be: eight positions at a time are tested for its first and last
 * bytes at once (a position where both match is a zero byte of the two
 * words xor'ed with those bytes and or'ed together), and skipped when none
 * does.  ld.so's "syscall; ret" lies some 70 KiB into its text: testing
 * the last byte alone, common in immediates and displacements, stopped
 * often enough to make this 0.03 ms of every start. */
static uint64_t scan_gadget(const unsigned char *b, uint64_t len, int (*is)(const unsigned char *, size_t))
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t first = ones * ARCH_SYSCALL_FIRST, last = ones * ARCH_SYSCALL_LAST;
	const uint64_t k = ARCH_SYSCALL_LEN - 1;

	for (uint64_t j = 0; j + ARCH_SYSCALL_LEN <= len; j++) {
		if (j + k + 8 <= len) {
			uint64_t w0, w1;
			__builtin_memcpy(&w0, b + j, 8);
			__builtin_memcpy(&w1, b + j + k, 8);
			uint64_t w = (w0 ^ first) | (w1 ^ last);
			if (!((w - ones) & ~w & (ones << 7))) {
				j += 7; /* no syscall starts at j .. j + 7 */
				continue;
			}
		}
		if (arch_is_syscall(b + j) && is(b + j, len - j < 32 ? len - j : 32))
			return (uint64_t)(uintptr_t)(b + j);
	}
	return 0;
}

/* The vDSO's munmap gadget, if it has one (see arch_final.h). */
static uint64_t vdso_gadget(const uint64_t *aux)
{
	const unsigned char *v = (const unsigned char *)(uintptr_t)aux[AT_SYSINFO_EHDR];
	Elf64_Ehdr eh;

	if (!v)
		return 0;
	memcpy(&eh, v, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phoff > TX_PAGE || eh.e_phnum > 16)
		return 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr p;
		memcpy(&p, v + eh.e_phoff + i * sizeof(p), sizeof(p));
		if (p.p_type != PT_LOAD || !(p.p_flags & PF_X) || p.p_vaddr + p.p_filesz > 65536)
			continue;
		uint64_t g = scan_gadget(v + p.p_vaddr, p.p_filesz, arch_is_gadget);
		if (g)
			return g;
	}
	return 0;
}

/* A "syscall; ret" in the last `tail` bytes of each readable executable
 * (not writable) segment of im, for the final stage to unmap its own page
 * on the way in without touching the registers the program finds:
 *   - in the interpreter's whole text, after ld.so (the vDSO's gadget
 *     clears one register: ld.so's finalizer);
 *   - near the end of the program's own text, for a program entered
 *     without ld.so whose vDSO has none (arm64 Linux 6.1's): a static C
 *     library's system call wrappers are linked last, and a start never
 *     reads through a large text for nothing (TEXT_TAIL). */
#define TEXT_TAIL (4ULL << 20)
static uint64_t text_syscall_ret(const struct image *im, uint64_t tail)
{
	for (unsigned i = 0; i < im->nsegs; i++) {
		const struct seg *g = &im->segs[i];
		if (!(g->flags & PF_X) || !(g->flags & PF_R) || (g->flags & PF_W))
			continue;
		uint64_t n = g->filesz < tail ? g->filesz : tail;
		uint64_t at = scan_gadget((const unsigned char *)(uintptr_t)(g->vaddr + g->filesz - n), n,
					  arch_is_syscall_ret);
		if (at)
			return at;
	}
	return 0;
}

/* ---- the final stage's page --------------------------------------------- */

/* The final stage runs from a page of its own because it unmaps the
 * loader.  That page must become executable without ever being writable
 * and executable: under MemoryDenyWriteExecute (PR_SET_MDWE, or systemd's
 * seccomp filter) mprotect() adding PROT_EXEC fails, while mapping a
 * memfd PROT_READ|PROT_EXEC is allowed.  So: a memfd written with pwrite;
 * failing that (no memfd, vm.memfd_noexec=2), an anonymous page made
 * executable by mprotect, probed here so that a refusal is known before
 * anything depends on it; failing both, none: the stage runs in place,
 * from the loader, which then stays mapped.
 *
 * With the stage after the dynamic linker the page is made once, before
 * ld.so runs: the code goes in then and the memfd is closed.  The stage's
 * data holds the registers ld.so leaves, so it is written at the hook,
 * into a read+write page right after the code, which the gadget unmaps
 * with it.  The pair is tiexec's own mapping: ld.so maps only where mmap
 * puts it and unmaps only what it mapped. */
void final_open(struct exec *ex)
{
	struct final_page *fp = &ex->fp;

	fp->kind = PAGE_NONE;
	fp->fd = -1;
	fp->anon = 0;
	fp->len = ex->hp.kind != HOOK_NONE ? 2 * TX_PAGE : TX_PAGE;
	long fd = sys_memfd_create("tiexec-final", TX_MFD_CLOEXEC | TX_MFD_EXEC);
	if (fd == -EINVAL)
		fd = sys_memfd_create("tiexec-final", TX_MFD_CLOEXEC);
	if (fd >= 0) {
		fp->kind = PAGE_MEMFD;
		fp->fd = (int)fd;
		return;
	}
	long page = sys_mmap(0, fp->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page < 0)
		return;
	if (sys_mprotect((uint64_t)page, TX_PAGE, PROT_READ | PROT_EXEC) < 0 ||
	    sys_mprotect((uint64_t)page, TX_PAGE, PROT_READ | PROT_WRITE) < 0) {
		sys_munmap((uint64_t)page, fp->len);
		return;
	}
	fp->kind = PAGE_ANON;
	fp->anon = (uint64_t)page;
}

/* Where the stage's data sits in its page: after the code. */
static uint64_t final_data_off(void)
{
	return tx_up((uint64_t)(arch_final_end - arch_final_code), 64);
}

/* The page's contents at `at`: the code, and *f (which learns the
 * address) unless f is NULL.  page_fill writes them into the anonymous
 * page itself; code_write and data_write into the memfd, in two pieces (a
 * 4 KiB buffer for the page would be one more page the start touches;
 * past the data the file ends, and the mapping reads zeros there). */
static void page_fill(unsigned char *img, uint64_t at, struct arch_final *f)
{
	memcpy(img, arch_final_code, (size_t)(arch_final_end - arch_final_code));
	if (f) {
		f->page = at;
		memcpy(img + final_data_off(), f, sizeof(*f));
	}
}

static int code_write(int fd)
{
	long n = (long)(arch_final_end - arch_final_code);

	return sys_pwrite(fd, arch_final_code, (size_t)n, 0) == n ? 0 : -1;
}

static int data_write(int fd, uint64_t at, struct arch_final *f)
{
	f->page = at;
	return sys_pwrite(fd, f, sizeof(*f), final_data_off()) == (long)sizeof(*f) ? 0 : -1;
}

/* The memfd mapped read+execute, with the code and, if f, *f written into
 * it: its address, or 0.  A page alone (no data page after it) is mapped
 * where mmap puts it; code and data page reserve both first, and the
 * memfd goes over the first.  *f holds the address, so it is written
 * after the mapping is made, which shows it: a private mapping reads the
 * file until it writes a page, and this one never writes.  Reserving the
 * lone page first, as before, took two mapping changes where one does;
 * each is a maple tree preallocation the kernel zeroes (init_on_alloc),
 * some 0.05 ms of a start under qemu's TCG on 6.1. */
static uint64_t memfd_map(const struct final_page *fp, struct arch_final *f)
{
	long at;

	if (code_write(fp->fd) < 0)
		return 0;
	if (fp->len == TX_PAGE) {
		at = sys_mmap(0, TX_PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fp->fd, 0);
		if (at < 0)
			return 0;
	} else {
		at = sys_mmap(0, fp->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (at < 0)
			return 0;
		if (sys_mmap((uint64_t)at, TX_PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fp->fd, 0) != at) {
			sys_munmap((uint64_t)at, fp->len);
			return 0;
		}
	}
	if (f && data_write(fp->fd, (uint64_t)at, f) < 0) {
		sys_munmap((uint64_t)at, fp->len);
		return 0;
	}
	return (uint64_t)at;
}

/* Puts the code and *f into the page, or only the code if f is NULL (the
 * data then goes into the page after it, at the hook), and makes it
 * read+execute; returns its address, or 0 (then the caller runs the stage
 * in place).  The memfd is closed either way. */
static uint64_t page_commit(struct final_page *fp, struct arch_final *f)
{
	uint64_t at = 0;

	if (f)
		f->page_len = fp->len;
	if (fp->kind == PAGE_MEMFD) {
		at = memfd_map(fp, f);
		sys_close(fp->fd);
	} else if (fp->kind == PAGE_ANON) {
		at = fp->anon;
		page_fill((unsigned char *)(uintptr_t)at, at, f);
		/* Stored by us, executed next (arch_cache.h).  The memfd's
		 * page needs none: pwrite is the kernel's store, and the
		 * kernel makes it coherent when it maps the page executable. */
		arch_sync_icache(at, TX_PAGE);
		if (sys_mprotect(at, TX_PAGE, PROT_READ | PROT_EXEC) < 0) {
			sys_munmap(at, fp->len);
			at = 0;
		}
	}
	return at;
}

/* ---- into the final asm ------------------------------------------------- */

/* What the final stage unmaps of the loader: its segments' pages, merged
 * where they touch.  Not the span from the first to the last: a loader
 * linked for 64 KiB pages (arm64) has a hole of up to 60 KiB between its
 * text and data on a 4 KiB kernel, where the kernel may have put the vDSO
 * (seen: 1 start in 5 on arm64 Linux 6.1, the program then faulting in
 * it).  More than two ranges (no linker makes them) fall back to the span. */
static void loader_ranges(struct arch_final *fin)
{
	unsigned nph;
	const Elf64_Phdr *ph = own_phdrs(&nph);
	uint64_t base = (uint64_t)(uintptr_t)tx_ehdr_start, r[2][2] = {{0, 0}, {0, 0}};
	int n = 0;

	for (unsigned i = 0; i < nph && n <= 2; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		uint64_t lo = tx_down(base + ph[i].p_vaddr, TX_PAGE), hi = tx_up(base + ph[i].p_vaddr + ph[i].p_memsz, TX_PAGE);
		if (n && lo <= r[n - 1][1])
			r[n - 1][1] = hi > r[n - 1][1] ? hi : r[n - 1][1];
		else if (n++ < 2)
			r[n - 1][0] = lo, r[n - 1][1] = hi;
	}
	if (n > 2 || n == 0) {
		r[0][0] = tx_down(base, TX_PAGE);
		r[0][1] = tx_up((uint64_t)(uintptr_t)tx_end, TX_PAGE);
		r[1][0] = r[1][1] = 0;
	}
	fin->loader_lo = r[0][0];
	fin->loader_len = r[0][1] - r[0][0];
	fin->loader2_lo = r[1][0];
	fin->loader2_len = r[1][1] - r[1][0];
}

/* The final stage's data: everything but the registers (all zero, as the
 * kernel leaves them, unless the hook fills them in). */
static void fill(struct exec *ex, struct arch_final *fin)
{
	memset(fin, 0, sizeof(*fin));
	fin->exe_mode = (uint64_t)ex->exe_mode;
	fin->exe_fd = (uint64_t)ex->prog.fd;
	fin->entry = ex->entry;
	fin->drop_caps = (uint64_t)ex->drop_caps;
	fin->cap_hdr[0] = 0x20080522; /* _LINUX_CAPABILITY_VERSION_3 */
	fin->tmp_lo = ex->tmp_lo;
	fin->tmp_len = ex->tmp_len;
	loader_ranges(fin);
	fin->gadget = vdso_gadget(ex->aux);
	if (!fin->gadget && ex->hp.kind == HOOK_NONE)
		fin->gadget = text_syscall_ret(&ex->prog, TEXT_TAIL);
	memcpy(fin->mm, &ex->mm, sizeof(ex->mm));
}

/* Into the final stage: from its own page, with its data at f, when one
 * could be had, else in place (page 0: the loader then stays mapped, so
 * the link stays too); with the stack pointer at dst, where the block of
 * len bytes is copied first. */
__attribute__((noreturn)) static void jump(struct exec *ex, struct arch_final *fin, uint64_t page,
					   const struct arch_final *f, void *dst, const uint64_t *w, size_t len)
{
	const void *code = (const void *)(uintptr_t)page;

	if (!page) {
		fin->loader_len = fin->loader2_len = 0;
		fin->page = 0;
		fin->gadget = 0;
		fin->exe_mode = ARCH_EXE_NONE;
		code = arch_final_code;
		f = fin;
	}
	if ((fin->exe_mode == ARCH_EXE_NONE || !page) && ex->prog.fd >= 0)
		sys_close(ex->prog.fd);
	fds_restore(&ex->fds);
	/* From here only the final stage runs: the exe prctl, then (opt-in)
	 * every capability dropped. */
	caps_raise(ex->caps_opted);
	arch_jump_final(dst, w, len, code, f);
}

/* The program's descriptor is needed across ld.so only to set the exe
 * link at the end.  ld.so must not be short of one for it (a low
 * RLIMIT_NOFILE, the soft limit already given back): then it is closed
 * and the program opened again by its path at the hook. */
static void keep_program_fd(struct exec *ex)
{
	if (ex->fin.exe_mode == ARCH_EXE_NONE) {
		sys_close(ex->prog.fd);
		ex->prog.fd = -1;
		return;
	}
	if (fds_free(ex->prog.fd, 1))
		return;
	ex->reopen = fd_link(ex->prog.fd, ex->prog_link, sizeof(ex->prog_link)) > 0 ? ex->prog_link : NULL;
	sys_close(ex->prog.fd);
	ex->prog.fd = -1;
}

/* Into ld.so, which gives control back at the hook (hookpoint.h).  No
 * capability of the file-capability opt-in goes with it: ld.so, audit
 * modules, IFUNC resolvers and a preload would run with it.  The exe link,
 * where it could be set, was set before (stack.c). */
__attribute__((noreturn)) static void hop_to_ldso(struct exec *ex)
{
	static struct arch_final hop;
	struct arch_final *fin = &ex->fin;
	int drop = (int)fin->drop_caps;

	/* To ld.so with the registers a kernel gives, from the loader's own
	 * copy of the final stage: it unmaps only the block's buffer. */
	memset(&hop, 0, sizeof(hop));
	hop.tmp_lo = fin->tmp_lo;
	hop.tmp_len = fin->tmp_len;
	hop.entry = ex->entry;
	fin->tmp_lo = fin->tmp_len = 0;
	fin->entry = 0;
	fin->drop_caps = 0;
	for (uint64_t *a = ex->blk.auxo; a[0] != AT_NULL; a += 2) {
		if (a[0] == AT_ENTRY && ex->hp.kind == HOOK_ENTRY) {
			ex->prog_entry = a[1];
			a[1] = ex->hook_fn;
		}
	}
	if (drop) {
		caps_drop_all(drop);
		ex->caps_opted = 0;
	}
	ex->page = page_commit(&ex->fp, NULL);
	fin->page_len = ex->fp.len;
	/* The last of our own mappings is in place: what ld.so finds. */
	if (ex->ldp.n) {
		uint64_t t0 = now_ns();
		ex->ldp_held = ldplan_hold(&ex->ldp, &ex->ldp_holds);
		ldplan_close(&ex->ldp);
		ex->ldp_ns += now_ns() - t0;
	}
	fds_restore(&ex->fds);
	keep_program_fd(ex);
	arch_jump_final((void *)(uintptr_t)ex->plan.dst, ex->blk.w, ex->plan.len, arch_final_code, &hop);
}

/* The final stage's data is built in ex->fin, which the hook finds when
 * ld.so runs in between. */
__attribute__((noreturn)) void final_enter(struct exec *ex)
{
	struct arch_final *fin = &ex->fin;

	fill(ex, fin);
	if (ex->hp.kind != HOOK_NONE)
		hop_to_ldso(ex);
	uint64_t page = page_commit(&ex->fp, fin);
	jump(ex, fin, page, (const struct arch_final *)(uintptr_t)(page + final_data_off()),
	     (void *)(uintptr_t)ex->plan.dst, ex->blk.w, ex->plan.len);
}

/* ---- after the hook ------------------------------------------------------ */

/* At the hook: the exe link needs the program open again (see
 * keep_program_fd); if it cannot be, the link stays tiexec's. */
static void reopen_program(struct exec *ex, struct arch_final *fin)
{
	struct prctl_mm_map mm;

	if (!ex->reopen)
		return;
	ex->prog.fd = (int)sys_openat(TX_AT_FDCWD, ex->reopen, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
	if (ex->prog.fd < 0) {
		fin->exe_mode = ARCH_EXE_NONE;
		return;
	}
	memcpy(&mm, fin->mm, sizeof(mm));
	mm.exe_fd = (uint32_t)ex->prog.fd;
	memcpy(fin->mm, &mm, sizeof(mm));
	fin->exe_fd = (uint64_t)ex->prog.fd;
}

/* getauxval(AT_ENTRY) must be the program's: ld.so read ours already. */
static void restore_entry(uint64_t *sp, uint64_t entry)
{
	uint64_t *p = sp + 1 + sp[0] + 1;

	while (*p)
		p++;
	for (p++; p[0] != AT_NULL; p += 2)
		if (p[0] == AT_ENTRY)
			p[1] = entry;
}

/* From the hook into the program (HOOK_ENTRY: sp at its initial frame),
 * or back into ld.so (HOOK_PREINIT: a return from the preinit call, the
 * program's own preinit entries next). */
__attribute__((noreturn)) void final_after_hook(struct exec *ex, uint64_t *sp, const struct arch_regs *regs)
{
	struct arch_final *fin = &ex->fin, *f = NULL;

	reopen_program(ex, fin);
	fin->regs = *regs;
	if (ex->hp.kind == HOOK_PREINIT) {
		hookpoint_fill(&ex->hp, ex->blk.strs_final);
		hookpoint_restore(&ex->hp);
		fin->entry = arch_hook_return(&sp, regs);
	} else {
		restore_entry(sp, ex->prog_entry);
		fin->entry = ex->prog_entry;
	}
	/* Returning from the preinit call, registers a call may change may be
	 * zeroed: the vDSO's gadget serves where it zeroes only those
	 * (Linux 6.11's), sparing a search of ld.so's text. */
	if (ex->hp.kind != HOOK_PREINIT || !fin->gadget ||
	    (arch_gadget_zeroes((const unsigned char *)(uintptr_t)fin->gadget, 32) & ~ARCH_CALL_CLOBBERED))
		fin->gadget = text_syscall_ret(&ex->interp, UINT64_MAX);
	if (ex->page) {
		fin->page = ex->page;
		f = (struct arch_final *)(uintptr_t)(ex->page + TX_PAGE);
		memcpy(f, fin, sizeof(*f));
	}
	jump(ex, fin, ex->page, f, sp, NULL, 0);
}
