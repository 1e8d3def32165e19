/* The program's initial stack, built as the kernel would have built it for
 * a direct exec, and the jump into the program (arch.h's final stage). */
#include <errno.h>
#include <linux/auxvec.h>

#include "arch/x86_64/arch.h"
#include "caps.h"
#include "detach.h"
#include "hookpoint.h"
#include "loader.h"
#include "origin.h"
#include "sys.h"

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

ARCH_FINAL;
ARCH_JUMP_FINAL;
ARCH_HOOK;

static char exe_env[4096 + 40]; /* "TIEXEC_EXE=PID:/abs/path" */
static char prog_dir[4096];      /* the directory of that path */
/* The stack block is built here when it fits: the loader's own memory,
 * which the final stage unmaps.  A bigger one gets a mapping of its own --
 * never the stack, which may have no room left under RLIMIT_STACK (the
 * kernel accepts arguments up to 128 KiB whatever the limit). */
static uint64_t block_buf[8192];

void parse_start(uint64_t *sp, struct start *s)
{
	aux_has = 0;
	s->argc = (long)sp[0];
	s->argv = (char **)(sp + 1);
	s->envp = s->argv + s->argc + 1;
	for (s->nenv = 0; s->envp[s->nenv]; s->nenv++)
		;
	s->auxv = (uint64_t *)(s->envp + s->nenv + 1);
	uint64_t *a = s->auxv;
	for (; a[0] != AT_NULL; a += 2)
		if (a[0] < AUX_MAX) {
			aux[a[0]] = a[1];
			aux_has |= 1ULL << a[0];
		}
	s->auxv_end = a + 2;
}

/* Whether strings v[0..n-1] lie back to back, each right after the NUL of
 * the one before, as the kernel lays out the argument and environment areas. */
static int contiguous(char **v, long n)
{
	for (long i = 1; i < n; i++)
		if (v[i] != v[i - 1] + strlen(v[i - 1]) + 1)
			return 0;
	return 1;
}

static uint64_t area_end(char **v, long n)
{
	return (uint64_t)(uintptr_t)(v[n - 1] + strlen(v[n - 1]) + 1);
}

/* The address of the first gadget `is` accepts in [b, b + len).  Every
 * gadget starts with a syscall instruction, and `is` is asked only where
 * one is: eight bytes at a time are tested for its last byte (w ^ that
 * byte repeated has a zero byte), and skipped without it.  ld.so's
 * "syscall; ret" lies some 70 KiB into its text: byte by byte, through the
 * pointer, the search cost more than the rest of the stage after ld.so. */
static uint64_t scan_gadget(const unsigned char *b, uint64_t len, int (*is)(const unsigned char *, size_t))
{
	const uint64_t ones = 0x0101010101010101ULL, last = ones * ARCH_SYSCALL_LAST;
	const uint64_t k = ARCH_SYSCALL_LEN - 1;

	for (uint64_t j = 0; j + 3 <= len; j++) {
		uint64_t w;
		if (j + k + 8 <= len) {
			__builtin_memcpy(&w, b + j + k, 8);
			w ^= last;
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

/* The vDSO's "syscall; xor...; ret", if it has one (see arch.h). */
static uint64_t find_gadget(void)
{
	const unsigned char *v = (const unsigned char *)(uintptr_t)aux[AT_SYSINFO_EHDR];
	Elf64_Ehdr eh;

	if (!v)
		return 0;
	memcpy(&eh, v, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phoff > 4096 || eh.e_phnum > 16)
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

/* ---- the kernel's argument and environment areas --------------------- */

/* Where the kernel put our argument and environment strings, and which
 * of them the program keeps: its arguments are a suffix of ours (from
 * `first`), its environment ours less a stale TIEXEC_EXE when a new one
 * is given. */
struct areas {
	int args_ok;        /* argv strings back to back: they can be moved */
	int env_ok;         /* so are the environment's, right after them */
	uint64_t arg_start; /* the area: [arg_start, end) */
	uint64_t end;
	uint64_t moved;     /* bytes of the program's own argv strings */
	uint64_t env_keep;  /* bytes of the environment strings kept */
	long nenv_keep;
};

static int drop_env(const char *e, const char *hint)
{
	return hint && tx_skip(e, "TIEXEC_EXE=") != NULL;
}

static void find_areas(const struct start *s, long first, const char *hint, struct areas *a)
{
	long pargc = s->argc - first;

	memset(a, 0, sizeof(*a));
	a->args_ok = s->argc > 0 && contiguous(s->argv, s->argc);
	a->env_ok = a->args_ok && (s->nenv == 0 || (contiguous(s->envp, s->nenv) &&
						    (uint64_t)(uintptr_t)s->envp[0] == area_end(s->argv, s->argc)));
	if (a->args_ok) {
		a->arg_start = (uint64_t)(uintptr_t)s->argv[0];
		a->end = area_end(s->argv, s->argc);
		if (a->env_ok && s->nenv)
			a->end = area_end(s->envp, s->nenv);
		if (pargc)
			a->moved = area_end(s->argv, s->argc) - (uint64_t)(uintptr_t)s->argv[first];
	}
	for (long i = 0; i < s->nenv; i++) {
		if (drop_env(s->envp[i], hint))
			continue;
		a->env_keep += strlen(s->envp[i]) + 1;
		a->nenv_keep++;
	}
}

/* ---- what PR_SET_MM_MAP is told ----------------------------------------- */

/* Code, data and brk bounds of the program, as the kernel records them for
 * a direct exec (start_code..end_data from the segments, brk after .bss). */
static void program_bounds(struct prctl_mm_map *mm)
{
	uint64_t sc = UINT64_MAX, ec = 0, sd = 0, ed = 0, brk_end = 0;

	for (unsigned i = 0; i < prog.nsegs; i++) {
		const struct seg *g = &prog.segs[i];
		if ((g->flags & PF_X) && g->vaddr < sc)
			sc = g->vaddr;
		if ((g->flags & PF_X) && g->vaddr + g->filesz > ec)
			ec = g->vaddr + g->filesz;
		if (g->vaddr > sd)
			sd = g->vaddr;
		if (g->vaddr + g->filesz > ed)
			ed = g->vaddr + g->filesz;
		if (g->vaddr + g->memsz > brk_end)
			brk_end = g->vaddr + g->memsz;
	}
	uint64_t brk = (uint64_t)sys_brk(0);
	/* A static PIE keeps the brk the kernel gave us, which is where it
	 * gives one to a program without interpreter; others get it after
	 * their .bss, randomized as arch_randomize_brk does. */
	if (!(prog.info.type == ET_DYN && prog.info.interp < 0)) {
		brk = tx_up(brk_end, TX_PAGE);
		if (!aslr_off())
			brk += (random_u64() & ((32ULL << 20) - 1)) & -TX_PAGE;
	}
	memset(mm, 0, sizeof(*mm));
	mm->start_code = sc;
	mm->end_code = ec;
	mm->start_data = sd;
	mm->end_data = ed;
	mm->start_brk = mm->brk = brk;
	mm->exe_fd = (uint32_t)-1;
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
 * ld.so runs (hop_to_ldso): the code goes in then and the memfd is closed.
 * The stage's data holds the registers ld.so leaves, so it is written at
 * the hook, into a read+write page right after the code, which the gadget
 * unmaps with it.  The pair is tiexec's own mapping: ld.so maps only where
 * mmap puts it and unmaps only what it mapped. */
enum page_kind { PAGE_NONE, PAGE_MEMFD, PAGE_ANON };
struct final_page {
	enum page_kind kind;
	int fd;
	uint64_t anon;
	uint64_t len; /* the code page, and the data page after it if any */
};

static void final_page_open(struct final_page *fp, int data_page)
{
	fp->kind = PAGE_NONE;
	fp->fd = -1;
	fp->anon = 0;
	fp->len = data_page ? 2 * TX_PAGE : TX_PAGE;
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
 * address) unless f is NULL. */
static void final_page_fill(unsigned char *img, uint64_t at, struct arch_final *f)
{
	memcpy(img, arch_final_code, (size_t)(arch_final_end - arch_final_code));
	if (f) {
		f->page = at;
		memcpy(img + final_data_off(), f, sizeof(*f));
	}
}

/* Puts the code and *f into the page, or only the code if f is NULL (the
 * data then goes into the page after it, at the hook), and makes it
 * read+execute; returns its address, or 0 (then the caller runs the stage
 * in place).  The memfd is closed either way. */
static uint64_t final_page_commit(struct final_page *fp, struct arch_final *f)
{
	static unsigned char img[TX_PAGE];
	uint64_t at = 0;

	if (f)
		f->page_len = fp->len;
	if (fp->kind == PAGE_MEMFD) {
		/* Address first (the data holds it), then contents, then the
		 * memfd over the first page of the reservation. */
		long page = sys_mmap(0, fp->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		at = page >= 0 ? (uint64_t)page : 0;
		if (at) {
			final_page_fill(img, at, f);
			if (sys_pwrite(fp->fd, img, TX_PAGE, 0) != (long)TX_PAGE ||
			    sys_mmap(at, TX_PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fp->fd, 0) !=
				    (long)at) {
				sys_munmap(at, fp->len);
				at = 0;
			}
		}
		sys_close(fp->fd);
	} else if (fp->kind == PAGE_ANON) {
		at = fp->anon;
		final_page_fill((unsigned char *)(uintptr_t)at, at, f);
		if (sys_mprotect(at, TX_PAGE, PROT_READ | PROT_EXEC) < 0) {
			sys_munmap(at, fp->len);
			at = 0;
		}
	}
	return at;
}

/* ---- /proc/PID/exe ------------------------------------------------------ */

/* May we change /proc/PID/exe?  The kernel checks permission before it
 * refuses (EBUSY) because tiexec is still mapped, so one PR_SET_MM_MAP
 * with exe_fd tells.  mm must already hold the final bounds (a kernel that
 * does not mind the loader's mapping applies them now). */
static int exe_link_mode(struct prctl_mm_map *mm, int *done)
{
	*done = 0;
	mm->exe_fd = (uint32_t)prog.fd;
	long e = sys_prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)mm, sizeof(*mm), 0);
	mm->exe_fd = (uint32_t)-1;
	if (e == -EBUSY)
		return ARCH_EXE_MAP;
	if (e == 0) {
		*done = 1;
		return ARCH_EXE_NONE;
	}
	if (sys_prctl(PR_SET_MM, PR_SET_MM_EXE_FILE, (unsigned long)prog.fd, 0, 0) == -EBUSY)
		return ARCH_EXE_FILE;
	return ARCH_EXE_NONE;
}

/* The program's path as /proc/PID/exe would name it (the open file's
 * link), and its directory the way glibc's _dl_get_origin derives one (up
 * to the last '/', "/" at the top).  NULL if it cannot be had. */
static const char *program_path(void)
{
	static char path[4096];
	long n = fd_link(prog.fd, path, sizeof(path));

	if (n < 0)
		return NULL;
	size_t dl = (size_t)n;
	while (dl > 1 && path[dl - 1] != '/')
		dl--;
	if (dl > 1)
		dl--;
	memcpy(prog_dir, path, dl);
	prog_dir[dl] = '\0';
	return path;
}

/* "TIEXEC_EXE=PID:/abs/path/of/program", the re-exec hint (see
 * reexec_of in main.c), for a program whose /proc/self/exe keeps naming
 * tiexec; NULL if the path cannot be had. */
static const char *exe_hint(void)
{
	const char *path = program_path();
	struct msg h;

	if (!path || strlen(path) > sizeof(exe_env) - 40)
		return NULL;
	h.n = 0;
	msg_str(&h, "TIEXEC_EXE=");
	msg_u64(&h, (uint64_t)SC(__NR_getpid, 0, 0, 0, 0, 0, 0));
	msg_str(&h, ":");
	memcpy(exe_env, h.b, h.n);
	memcpy(exe_env + h.n, path, strlen(path) + 1);
	return exe_env;
}

/* Writes the expanded $ORIGIN strings to buf (at `final` in the program's
 * stack) and points the dynamic entries at them (origin.h). */
static void fix_origin(const struct origin_fix *fx, unsigned n, char *buf, uint64_t final)
{
	size_t at = 0;

	for (unsigned i = 0; i < n; i++) {
		origin_expand(fx[i].src, prog_dir, buf + at);
		*fx[i].dval = final + at - fx[i].strtab;
		at += fx[i].outlen;
	}
}

/* ---- the stack block ---------------------------------------------------- */

/* What goes where.  The kernel's area [arg_start, end) gets the program's
 * argv strings, then (when PR_SET_MM_MAP will move the bounds) its
 * environment strings and the hint, so that /proc/PID/cmdline and
 * /proc/PID/environ show exactly what the program sees.  When the hint
 * does not fit there (it replaces only tiexec's own words), all of them
 * move into the block instead, below the area, still back to back: a
 * program that rewrites its title over argv and the environment after it
 * (nginx, postgres) finds the same room as after a direct exec. */
struct plan {
	long pargc, nenv_out, naux;
	int env_in_block; /* argv, environment and hint strings in the block */
	size_t fnlen, xlen, words, len;
	size_t fn_off;  /* execfn, after the preinit array (hookpoint.h) */
	size_t orglen;  /* the $ORIGIN strings (origin.h), after execfn */
	size_t env_off; /* where argv+environment strings or the hint go in strs */
	uint64_t dst; /* the block's final address: the program's sp */
};

static void plan_block(const struct start *s, long first, const char *execfn, const char *hint,
		       size_t prelen, size_t orglen, const struct areas *a, struct plan *p)
{
	p->pargc = s->argc - first;
	p->naux = (long)(s->auxv_end - s->auxv) / 2;
	p->nenv_out = a->nenv_keep + (hint ? 1 : 0);
	p->fnlen = strlen(execfn) + 1;
	p->xlen = hint ? strlen(hint) + 1 : 0;
	p->env_in_block = 0;
	if (hint && a->env_ok && a->moved + a->env_keep + p->xlen > a->end - a->arg_start)
		p->env_in_block = 1;
	p->words = 1 + (size_t)p->pargc + 1 + (size_t)p->nenv_out + 1 + 2 * (size_t)p->naux;
	p->fn_off = prelen;
	p->orglen = orglen;
	p->env_off = prelen + p->fnlen + orglen;
	size_t strs = p->env_off;
	if (p->env_in_block || !a->env_ok)
		strs += p->xlen + (p->env_in_block ? a->moved + a->env_keep : 0);
	p->len = tx_up(p->words * 8 + strs, 16);
	p->dst = ((uint64_t)(uintptr_t)s->auxv_end - p->len) & -16ULL;
}

/* The block moves the program's stack pointer down by this much more than
 * the kernel's own layout; refuse to grow past RLIMIT_STACK (the kernel
 * would send SIGSEGV on the fault). */
static int block_fits_stack(const struct areas *a, const struct plan *p)
{
	struct tx_rlimit rl;

	if (sys_prlimit(TX_RLIMIT_STACK, NULL, &rl) < 0 || rl.cur == TX_RLIM_INFINITY)
		return 1;
	return a->end - p->dst + 64 * 1024 <= rl.cur;
}

static uint64_t *block_alloc(size_t len, uint64_t *tmp_lo, uint64_t *tmp_len)
{
	*tmp_lo = *tmp_len = 0;
	if (len <= sizeof(block_buf))
		return block_buf;
	size_t n = tx_up(len, TX_PAGE);
	long r = sys_mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r < 0)
		die(prog.path, "cannot allocate memory for the program's initial stack", NULL, 126);
	*tmp_lo = (uint64_t)r;
	*tmp_len = n;
	return (uint64_t *)(uintptr_t)r;
}

/* The aux vector as the program must see it, into out (naux pairs);
 * returns the number of pairs up to and including AT_NULL. */
static long build_auxv(const struct start *s, uint64_t *out, uint64_t fn_final, long naux,
		       int drop_caps)
{
	long na = 0;

	for (uint64_t *a = s->auxv;; a += 2) {
		uint64_t t = a[0], v = a[1];
		switch (t) {
		case AT_PHDR: v = prog.info.phdr_vaddr + prog.bias; break; /* the kernel's phdr_addr */
		case AT_PHENT: v = sizeof(Elf64_Phdr); break;
		case AT_PHNUM: v = prog.eh.e_phnum; break;
		case AT_BASE: v = prog.info.interp >= 0 ? interp.bias : 0; break;
		case AT_ENTRY: v = prog.eh.e_entry + prog.bias; break;
		case AT_EXECFN: v = fn_final; break;
		case AT_FLAGS: v = 0; break;
		case AT_SECURE: v = drop_caps ? 0 : v; break;
		case AT_EXECFD: continue;
		default: break;
		}
		out[2 * na] = t;
		out[2 * na + 1] = v;
		na++;
		if (t == AT_NULL)
			break;
	}
	for (long i = 2 * na; i < 2 * naux; i++)
		out[i] = 0; /* a dropped AT_EXECFD leaves trailing AT_NULLs */
	return na;
}

/* Copies the kept environment strings to `to` (which is never above
 * their source when both are in the area, so string by string is safe),
 * then the hint; fills env[] with the addresses they will have at
 * `final`.  Returns the bytes written. */
static uint64_t lay_env(const struct start *s, const char *hint, char *to, uint64_t final,
			uint64_t *env)
{
	uint64_t n = 0;
	long k = 0;

	for (long i = 0; i < s->nenv; i++) {
		if (drop_env(s->envp[i], hint))
			continue;
		size_t l = strlen(s->envp[i]) + 1;
		memmove(to + n, s->envp[i], l);
		env[k++] = final + n;
		n += l;
	}
	if (hint) {
		size_t l = strlen(hint) + 1;
		memcpy(to + n, hint, l);
		env[k++] = final + n;
		n += l;
	}
	return n;
}

__attribute__((noreturn)) static void enter_final(struct arch_final *fin, uint64_t page,
						  const struct arch_final *f, void *dst, const uint64_t *w,
						  size_t len);

/* ---- the stage after the dynamic linker ---------------------------------- */

/* When the libraries' text is wanted on huge pages too (libs.c), ld.so
 * must run first and then give control back at the hook point
 * (hookpoint.h: the program's preinit array, or AT_ENTRY on the stack,
 * whose kernel copy /proc/PID/auxv keeps the program's); tiexec stays
 * mapped, off its file, and the final stage waits for the hook.
 * Everything else -- the stack, the bounds, the exe link, the
 * capabilities, the final stage's page -- is ready before ld.so runs. */
static struct {
	struct arch_final fin; /* the final stage, all but the registers */
	struct hookpoint hp;   /* where the hook gets control */
	uint64_t pre_final;    /* HOOK_PREINIT: the array, in the program's stack */
	uint64_t entry;        /* the program's own entry point */
	const char *reopen;    /* the program to open again for the exe link */
	uint64_t page;         /* the final stage's code page, or 0: in place */
} after;

/* The program's descriptor is needed across ld.so only to set the exe
 * link at the end.  ld.so must not be short of one for it (a low
 * RLIMIT_NOFILE, the soft limit already given back): then it is closed
 * and the program opened again by its path at the hook. */
static void keep_program_fd(void)
{
	if (after.fin.exe_mode == ARCH_EXE_NONE) {
		sys_close(prog.fd);
		prog.fd = -1;
		return;
	}
	if (fds_free(1))
		return;
	after.reopen = program_path();
	sys_close(prog.fd);
	prog.fd = -1;
}

/* At the hook: the exe link needs the program open again (see above); if
 * it cannot be, the link stays tiexec's. */
static void reopen_program(struct arch_final *fin)
{
	struct prctl_mm_map mm;

	if (!after.reopen)
		return;
	prog.fd = (int)sys_openat(TX_AT_FDCWD, after.reopen, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
	if (prog.fd < 0) {
		fin->exe_mode = ARCH_EXE_NONE;
		return;
	}
	memcpy(&mm, fin->mm, sizeof(mm));
	mm.exe_fd = (uint32_t)prog.fd;
	memcpy(fin->mm, &mm, sizeof(mm));
	fin->exe_fd = (uint64_t)prog.fd;
}

/* Into ld.so, which gives control back at the hook (hookpoint.h).  No
 * capability of the file-capability opt-in goes with it: ld.so, audit
 * modules, IFUNC resolvers and a preload would run with it.  The exe
 * link, where it could be set, was set before (stage_exe_link). */
__attribute__((noreturn)) static void hop_to_ldso(const struct arch_final *fin, struct final_page *fp,
						  uint64_t *auxo, void *dst, const uint64_t *w, size_t len,
						  uint64_t ldso_entry)
{
	static struct arch_final hop;

	after.fin = *fin;
	after.fin.tmp_lo = after.fin.tmp_len = 0;
	after.fin.entry = 0;
	after.fin.drop_caps = 0;
	for (uint64_t *a = auxo; a[0] != AT_NULL; a += 2) {
		if (a[0] == AT_ENTRY && after.hp.kind == HOOK_ENTRY) {
			after.entry = a[1];
			a[1] = (uint64_t)(uintptr_t)tiexec_hook;
		}
	}
	if (fin->drop_caps)
		caps_drop_all();
	after.page = final_page_commit(fp, NULL);
	after.fin.page_len = fp->len;
	/* To ld.so with the registers a kernel gives, from the loader's own
	 * copy of the final stage: it unmaps only the block's buffer. */
	memset(&hop, 0, sizeof(hop));
	hop.tmp_lo = fin->tmp_lo;
	hop.tmp_len = fin->tmp_len;
	hop.entry = ldso_entry;
	limits_restore();
	keep_program_fd();
	arch_jump_final(dst, w, len, arch_final_code, &hop);
}

/* A "syscall; ret" in the interpreter's text, for the final stage to unmap
 * its own page on the way into the program without touching the registers
 * ld.so left (the vDSO's gadget clears %rdx, ld.so's finalizer). */
static uint64_t interp_syscall_ret(void)
{
	for (unsigned i = 0; i < interp.nsegs; i++) {
		const struct seg *g = &interp.segs[i];
		if (!(g->flags & PF_X) || (g->flags & PF_W))
			continue;
		uint64_t at = scan_gadget((const unsigned char *)(uintptr_t)g->vaddr, g->filesz,
					  arch_is_syscall_ret);
		if (at)
			return at;
	}
	return 0;
}

uint64_t tx_hook_sp;
struct arch_regs tx_hook_regs;

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

/* From the hook into the program (HOOK_ENTRY: %rsp at its initial frame),
 * or back into ld.so (HOOK_PREINIT: a return from the preinit call, the
 * program's own preinit entries next). */
__attribute__((noreturn)) void start_after_hook(void)
{
	struct arch_final *fin = &after.fin, *f = NULL;
	uint64_t sp = tx_hook_sp;

	reopen_program(fin);
	fin->regs = tx_hook_regs;
	if (after.hp.kind == HOOK_PREINIT) {
		hookpoint_fill(&after.hp, after.pre_final);
		hookpoint_restore(&after.hp);
		fin->entry = *(uint64_t *)(uintptr_t)sp;
		sp += 8;
	} else {
		restore_entry((uint64_t *)(uintptr_t)sp, after.entry);
		fin->entry = after.entry;
	}
	fin->gadget = interp_syscall_ret();
	if (after.page) {
		fin->page = after.page;
		f = (struct arch_final *)(uintptr_t)(after.page + TX_PAGE);
		memcpy(f, fin, sizeof(*f));
	}
	enter_final(fin, after.page, f, (void *)(uintptr_t)sp, NULL, 0);
}

/* Builds the program's argc/argv/envp/auxv block and jumps.  The program's
 * arguments (a suffix of ours) move to the start of the kernel's argument
 * area, so /proc/PID/cmdline shows them; PR_SET_MM_MAP (no privilege
 * needed) then makes the kernel's bounds match, with the environment
 * moved up behind them as a direct exec has it.  Without PR_SET_MM_MAP the
 * tail of the area is NUL padding.
 *
 * /proc/PID/exe: where the process may change it (CAP_CHECKPOINT_RESTORE or
 * CAP_SYS_ADMIN in its user namespace for PR_SET_MM_MAP's exe_fd, or
 * CAP_SYS_RESOURCE for PR_SET_MM_EXE_FILE), the final stage sets it to the
 * program after unmapping the loader.  Where it may not, it keeps naming
 * tiexec, and TIEXEC_EXE=<program> joins the environment so that a re-exec
 * of /proc/self/exe runs the program again (see tiexec_main). */
/* What start_program's stages share. */
struct build {
	struct start *s;
	long first;
	const char *execfn;
	const struct hookpoint *hp; /* the stage after ld.so, or NULL */
	struct areas a;
	struct plan p;
	struct prctl_mm_map mm;
	struct final_page fp;
	int exe_mode, exe_done, drop_caps, mm_ok;
	const char *hint;
	struct origin_fix fx[ORIGIN_MAX_FIX];
	unsigned nfix;
	size_t orglen;
	uint64_t *w, *envw, *auxo; /* the block: argc, argv, envp, auxv */
	char *strs;                /* its strings, at strs_final in the end */
	uint64_t strs_final, tmp_lo, tmp_len;
};

/* With a stage after ld.so, the exe link is set before ld.so runs:
 * tiexec's image leaves its file first (detach.h, which reads our own
 * file: without the capability).  If it cannot, the
 * final stage sets it as without the hook -- except under the opt-in by
 * file capability, whose capability must be gone before ld.so: then the
 * link stays tiexec's and the hint is given. */
static void exe_link_early(struct build *b)
{
	long e = -1;

	if (self_detach() == 0) {
		b->mm.exe_fd = (uint32_t)prog.fd;
		caps_raise();
		e = b->exe_mode == ARCH_EXE_MAP
			    ? sys_prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&b->mm, sizeof(b->mm), 0)
			    : sys_prctl(PR_SET_MM, PR_SET_MM_EXE_FILE, (unsigned long)prog.fd, 0, 0);
		caps_lower();
		b->mm.exe_fd = (uint32_t)-1;
	}
	if (e == 0)
		b->exe_done = 1;
	if (e == 0 || caps_from_file())
		b->exe_mode = ARCH_EXE_NONE;
}

/* 1. Bounds, the final stage's page, and whether /proc/PID/exe can be set
 *    (which decides the hint), and the $ORIGIN strings ld.so needs. */
static void stage_exe_link(struct build *b)
{
	struct areas *a = &b->a;

	program_bounds(&b->mm);
	final_page_open(&b->fp, b->hp != NULL);
	find_areas(b->s, b->first, NULL, a);
	b->mm.arg_start = a->arg_start;
	b->mm.arg_end = a->arg_start + a->moved;
	b->mm.env_start = b->mm.arg_end;
	b->mm.env_end = b->mm.arg_end + (a->env_ok ? a->env_keep : 0);
	b->mm.start_stack = (uint64_t)(uintptr_t)b->s->argv - 8;
	b->exe_mode = ARCH_EXE_NONE;
	if (a->args_ok && b->fp.kind != PAGE_NONE) {
		caps_raise();
		b->exe_mode = exe_link_mode(&b->mm, &b->exe_done);
		caps_lower();
		if (b->hp && b->exe_mode != ARCH_EXE_NONE)
			exe_link_early(b);
	}
	if (b->exe_mode == ARCH_EXE_NONE && !b->exe_done)
		b->hint = exe_hint();
	/* ld.so takes $ORIGIN from /proc/self/exe, which names tiexec while
	 * it runs unless the link is set before (not after the hook, nor for
	 * an ordinary user): hand it the strings expanded.  The program's
	 * directory (a readlink) only if it has any. */
	if ((b->hint || (b->hp && !b->exe_done)) && !aux[AT_SECURE] && origin_find(b->fx, "") &&
	    (b->hint || program_path()))
		b->nfix = origin_find(b->fx, prog_dir);
	for (unsigned i = 0; i < b->nfix; i++)
		b->orglen += b->fx[i].outlen;
}

/* 2. Where everything goes, and the block to build it in. */
static void stage_plan(struct build *b)
{
	size_t prelen = b->hp ? hookpoint_len(b->hp) : 0;

	find_areas(b->s, b->first, b->hint, &b->a);
	plan_block(b->s, b->first, b->execfn, b->hint, prelen, b->orglen, &b->a, &b->p);
	if (b->p.env_in_block && !block_fits_stack(&b->a, &b->p)) {
		verbose_note(prog.path, "no room under RLIMIT_STACK for the TIEXEC_EXE hint: "
					"re-executing /proc/self/exe will not find the program");
		b->hint = NULL;
		find_areas(b->s, b->first, NULL, &b->a);
		plan_block(b->s, b->first, b->execfn, NULL, prelen, b->orglen, &b->a, &b->p);
	}
	b->w = block_alloc(b->p.len, &b->tmp_lo, &b->tmp_len);
	b->envw = b->w + 2 + b->p.pargc;
	b->auxo = b->envw + b->p.nenv_out + 1;
	b->strs = (char *)(b->w + b->p.words);
	b->strs_final = b->p.dst + b->p.words * 8;
	memcpy(b->strs + b->p.fn_off, b->execfn, b->p.fnlen);
}

/* 3. The aux vector and the $ORIGIN strings into the block, and the final
 *    bounds and aux vector told to the kernel (PR_SET_MM_MAP records the
 *    aux vector from where it is now). */
static void stage_tell_kernel(struct build *b)
{
	struct areas *a = &b->a;
	struct plan *p = &b->p;

	b->drop_caps = caps_from_file();
	long na = build_auxv(b->s, b->auxo, b->strs_final + p->fn_off, p->naux, b->drop_caps);
	size_t org = p->fn_off + p->fnlen;
	fix_origin(b->fx, b->nfix, b->strs + org, b->strs_final + org);
	if (b->hp)
		hookpoint_install(b->hp, (uint64_t *)(uintptr_t)b->strs, b->strs_final,
				  (uint64_t)(uintptr_t)tiexec_hook, prog.bias);
	if (p->env_in_block) {
		b->mm.arg_start = b->strs_final + p->env_off;
		b->mm.arg_end = b->mm.arg_start + a->moved;
	}
	uint64_t env_at = b->mm.arg_end;
	uint64_t env_len = a->env_ok ? a->env_keep + p->xlen : 0;
	b->mm.env_start = a->args_ok ? env_at : 0;
	b->mm.env_end = b->mm.env_start + (a->args_ok ? env_len : 0);
	b->mm.start_stack = p->dst;
	b->mm.auxv = (__u64 *)b->auxo;
	b->mm.auxv_size = (uint32_t)(na * 16);
	if (b->mm.auxv_size > 52 * 8)
		b->mm.auxv_size = 0;
	b->mm_ok = a->args_ok &&
		   sys_prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&b->mm, sizeof(b->mm), 0) == 0;
}

/* 4. The strings: argv to the start of the area, then the environment
 *    (where the kernel now expects it), NUL padding to the area's old end. */
static void stage_strings(struct build *b)
{
	struct areas *a = &b->a;
	struct plan *p = &b->p;
	struct start *s = b->s;
	uint64_t *w = b->w, *envw = b->envw;
	char *to = (char *)(uintptr_t)a->arg_start;

	w[0] = (uint64_t)p->pargc;
	if (p->env_in_block && b->mm_ok) {
		/* argv, then the environment, then the hint, all in the block;
		 * the old area is cleared. */
		char *bto = b->strs + p->env_off;
		uint64_t fin = b->strs_final + p->env_off;
		if (p->pargc) {
			char *from = s->argv[b->first];
			memcpy(bto, from, a->moved);
			for (long i = 0; i < p->pargc; i++)
				w[1 + i] = fin + (uint64_t)(s->argv[b->first + i] - from);
		}
		w[1 + p->pargc] = 0;
		lay_env(s, b->hint, bto + a->moved, fin + a->moved, envw);
		envw[p->nenv_out] = 0;
		memset(to, 0, (size_t)(a->end - a->arg_start));
		return;
	}
	if (a->args_ok && p->pargc) {
		char *from = s->argv[b->first];
		memmove(to, from, a->moved);
		for (long i = 0; i < p->pargc; i++)
			w[1 + i] = (uint64_t)(uintptr_t)(to + (s->argv[b->first + i] - from));
	} else {
		for (long i = 0; i < p->pargc; i++)
			w[1 + i] = (uint64_t)(uintptr_t)s->argv[b->first + i];
	}
	w[1 + p->pargc] = 0;
	uint64_t used = a->moved;
	if (b->mm_ok && a->env_ok && !p->env_in_block) {
		used += lay_env(s, b->hint, to + a->moved, a->arg_start + a->moved, envw);
	} else {
		/* The kernel keeps its own bounds: the environment stays where
		 * it is, the hint (if any) lives in the block. */
		long k = 0;
		for (long i = 0; i < s->nenv; i++)
			if (!drop_env(s->envp[i], b->hint))
				envw[k++] = (uint64_t)(uintptr_t)s->envp[i];
		if (b->hint) {
			memcpy(b->strs + p->env_off, b->hint, p->xlen);
			envw[k] = b->strs_final + p->env_off;
		}
	}
	envw[p->nenv_out] = 0;
	if (a->args_ok) {
		uint64_t keep_end = b->mm_ok ? a->end : area_end(s->argv, s->argc);
		if (a->arg_start + used < keep_end)
			memset(to + used, 0, (size_t)(keep_end - (a->arg_start + used)));
	}
}

/* 5. The final stage's data. */
static void stage_final(struct build *b, struct arch_final *fin, uint64_t entry)
{
	memset(fin, 0, sizeof(*fin));
	fin->exe_mode = (uint64_t)b->exe_mode;
	fin->exe_fd = (uint64_t)prog.fd;
	fin->entry = entry;
	fin->drop_caps = (uint64_t)b->drop_caps;
	fin->cap_hdr[0] = 0x20080522; /* _LINUX_CAPABILITY_VERSION_3 */
	fin->tmp_lo = b->tmp_lo;
	fin->tmp_len = b->tmp_len;
	fin->loader_lo = tx_down((uint64_t)(uintptr_t)tx_ehdr_start, TX_PAGE);
	fin->loader_len = tx_up((uint64_t)(uintptr_t)tx_end, TX_PAGE) - fin->loader_lo;
	fin->gadget = find_gadget();
	b->mm.auxv = (__u64 *)(uintptr_t)(b->p.dst + (uint64_t)(b->auxo - b->w) * 8);
	b->mm.exe_fd = (uint32_t)prog.fd;
	memcpy(fin->mm, &b->mm, sizeof(b->mm));
}

/* Into the final stage: from its own page, with its data at f, when one
 * could be had, else in place (page 0: the loader then stays mapped, so
 * the link stays too); with %rsp at dst, where the block of len bytes is
 * copied first. */
__attribute__((noreturn)) static void enter_final(struct arch_final *fin, uint64_t page,
						  const struct arch_final *f, void *dst, const uint64_t *w,
						  size_t len)
{
	const void *code = (const void *)(uintptr_t)page;

	if (!page) {
		fin->loader_len = 0;
		fin->page = 0;
		fin->gadget = 0;
		fin->exe_mode = ARCH_EXE_NONE;
		code = arch_final_code;
		f = fin;
	}
	if ((fin->exe_mode == ARCH_EXE_NONE || !page) && prog.fd >= 0)
		sys_close(prog.fd);
	limits_restore();
	/* From here only the final stage runs: the exe prctl, then (opt-in)
	 * every capability dropped. */
	caps_raise();
	arch_jump_final(dst, w, len, code, f);
}

__attribute__((noreturn)) void start_program(struct start *s, long first, const char *execfn,
					     uint64_t entry, const struct hookpoint *hp)
{
	static struct build b; /* static: the stack may have little room left */
	static struct arch_final fin;
	static char path_copy[4096];

	/* The argument strings move below: keep the name messages use. */
	if (hp && strlen(prog.path) < sizeof(path_copy)) {
		memcpy(path_copy, prog.path, strlen(prog.path) + 1);
		prog.path = path_copy;
	}
	memset(&b, 0, sizeof(b));
	b.s = s;
	b.first = first;
	b.execfn = execfn;
	b.hp = hp;
	stage_exe_link(&b);
	stage_plan(&b);
	stage_tell_kernel(&b);
	stage_strings(&b);
	stage_final(&b, &fin, entry);
	if (hp) {
		after.hp = *hp;
		after.pre_final = b.strs_final;
		hop_to_ldso(&fin, &b.fp, b.auxo, (void *)(uintptr_t)b.p.dst, b.w, b.p.len, entry);
	}
	uint64_t page = final_page_commit(&b.fp, &fin);
	enter_final(&fin, page, (const struct arch_final *)(uintptr_t)(page + final_data_off()),
		    (void *)(uintptr_t)b.p.dst, b.w, b.p.len);
}
