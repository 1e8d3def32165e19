/* The program's initial stack, built as the kernel would have built it for
 * a direct exec, and the jump into the program (arch.h's final stage). */
#include <errno.h>
#include <linux/auxvec.h>

#include "arch/x86_64/arch.h"
#include "loader.h"
#include "sys.h"

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif

ARCH_FINAL;
ARCH_JUMP_FINAL;

static char exe_env[4096 + 16]; /* "TIEXEC_EXE=/abs/path" */

void parse_start(uint64_t *sp, struct start *s)
{
	s->argc = (long)sp[0];
	s->argv = (char **)(sp + 1);
	s->envp = s->argv + s->argc + 1;
	for (s->nenv = 0; s->envp[s->nenv]; s->nenv++)
		;
	s->auxv = (uint64_t *)(s->envp + s->nenv + 1);
	uint64_t *a = s->auxv;
	for (; a[0] != AT_NULL; a += 2)
		if (a[0] < AUX_MAX)
			aux[a[0]] = a[1];
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
		for (uint64_t j = 0; j + 3 <= p.p_filesz; j++) {
			uint64_t n = p.p_filesz - j < 32 ? p.p_filesz - j : 32;
			if (arch_is_gadget(v + p.p_vaddr + j, n))
				return (uint64_t)(uintptr_t)(v + p.p_vaddr + j);
		}
	}
	return 0;
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
__attribute__((noreturn)) void start_program(struct start *s, long first, const char *execfn,
						   uint64_t entry)
{
	long pargc = s->argc - first;
	char **pargv = s->argv + first;
	long naux = (long)(s->auxv_end - s->auxv) / 2;

	/* Kernel's areas, as it set them up for us. */
	int args_ok = s->argc > 0 && contiguous(s->argv, s->argc);
	int env_ok = s->nenv > 0 && contiguous(s->envp, s->nenv) && args_ok &&
		     (uint64_t)(uintptr_t)s->envp[0] == area_end(s->argv, s->argc);
	uint64_t arg_start = args_ok ? (uint64_t)(uintptr_t)s->argv[0] : 0;
	uint64_t arg_end = args_ok ? area_end(s->argv, s->argc) : 0;
	uint64_t env_end = env_ok ? area_end(s->envp, s->nenv) : arg_end;
	uint64_t moved = pargc && args_ok ? (uint64_t)(arg_end - (uint64_t)(uintptr_t)pargv[0]) : 0;
	uint64_t envlen = env_ok ? env_end - arg_end : 0;

	struct prctl_mm_map mm;
	memset(&mm, 0, sizeof(mm));
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
	mm.start_code = sc;
	mm.end_code = ec;
	mm.start_data = sd;
	mm.end_data = ed;
	mm.start_brk = mm.brk = brk;
	mm.start_stack = (uint64_t)(uintptr_t)s->argv - 8;
	mm.arg_start = arg_start;
	mm.arg_end = arg_start + moved;
	mm.env_start = mm.arg_end;
	mm.env_end = mm.arg_end + envlen;
	mm.exe_fd = (uint32_t)-1;

	/* May we change /proc/PID/exe?  The kernel checks permission before
	 * it refuses (EBUSY) because tiexec is still mapped. */
	int exe_mode = ARCH_EXE_NONE, exe_done = 0;
	if (args_ok) {
		mm.exe_fd = (uint32_t)prog.fd;
		long e = sys_prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&mm, sizeof(mm), 0);
		mm.exe_fd = (uint32_t)-1;
		if (e == -EBUSY)
			exe_mode = ARCH_EXE_MAP;
		else if (e == 0)
			exe_done = 1; /* a kernel that does not mind the loader's mapping */
		else if (sys_prctl(PR_SET_MM, PR_SET_MM_EXE_FILE, (unsigned long)prog.fd, 0, 0) == -EBUSY)
			exe_mode = ARCH_EXE_FILE;
	}
	const char *extra_env = NULL;
	if (exe_mode == ARCH_EXE_NONE && !exe_done) {
		char link[32];
		struct msg m;
		m.n = 0;
		msg_str(&m, "/proc/self/fd/");
		msg_u64(&m, (uint64_t)prog.fd);
		m.b[m.n] = '\0';
		memcpy(link, m.b, m.n + 1);
		memcpy(exe_env, "TIEXEC_EXE=", 11);
		long n = SC(__NR_readlinkat, TX_AT_FDCWD, link, exe_env + 11, sizeof(exe_env) - 12, 0, 0);
		if (n > 0 && exe_env[11] == '/') {
			exe_env[11 + n] = '\0';
			extra_env = exe_env;
		}
	}
	/* File capabilities on tiexec (the opt-in for PR_SET_MM_EXE_FILE) made
	 * the kernel start us in secure mode; the program gets what a plain
	 * exec would have given it: no capabilities, dumpable, not secure. */
	int drop_caps = aux[AT_SECURE] && aux[AT_UID] == aux[AT_EUID] && aux[AT_GID] == aux[AT_EGID];

	/* The program's environment: ours, with TIEXEC_EXE replaced when it
	 * is set.  Its end must be exact: libc finds the aux vector right
	 * after the first NULL. */
	long nenv = s->nenv;
	if (extra_env)
		for (long i = 0; i < s->nenv; i++)
			nenv -= tx_skip(s->envp[i], "TIEXEC_EXE=") != NULL;
	size_t fnlen = strlen(execfn) + 1;
	size_t xlen = extra_env ? strlen(extra_env) + 1 : 0;
	size_t words = 1 + (size_t)pargc + 1 + (size_t)nenv + (extra_env ? 1 : 0) + 1 + 2 * (size_t)naux;
	size_t len = tx_up(words * 8 + fnlen + xlen, 16);
	uint64_t top = (uint64_t)(uintptr_t)s->auxv_end;
	uint64_t dst = (top - len) & -16ULL;
	uint64_t block[len / 8];
	uint64_t *w = block;

	/* auxv first, into the block, so PR_SET_MM_MAP can record it. */
	uint64_t *auxo = w + 1 + pargc + 1 + nenv + (extra_env ? 1 : 0) + 1;
	char *fn = (char *)(block + words);
	memcpy(fn, execfn, fnlen);
	uint64_t fn_final = dst + words * 8;
	if (extra_env)
		memcpy(fn + fnlen, extra_env, xlen);
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
		auxo[2 * na] = t;
		auxo[2 * na + 1] = v;
		na++;
		if (t == AT_NULL)
			break;
	}
	for (long i = 2 * na; i < 2 * naux; i++)
		auxo[i] = 0; /* a dropped AT_EXECFD leaves trailing AT_NULLs */

	mm.start_stack = dst;
	mm.auxv = (__u64 *)auxo;
	mm.auxv_size = (uint32_t)(na * 16);
	if (mm.auxv_size > 52 * 8)
		mm.auxv_size = 0;
	int mm_ok = args_ok && sys_prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&mm, sizeof(mm), 0) == 0;

	/* argv strings to the start of the area, then (when the kernel now
	 * knows the new bounds) the environment right behind them. */
	w[0] = (uint64_t)pargc;
	char *to = (char *)(uintptr_t)arg_start;
	if (args_ok && pargc) {
		char *from = pargv[0];
		memmove(to, from, moved);
		for (long i = 0; i < pargc; i++)
			w[1 + i] = (uint64_t)(uintptr_t)(to + (pargv[i] - from));
	} else {
		for (long i = 0; i < pargc; i++)
			w[1 + i] = (uint64_t)(uintptr_t)pargv[i];
	}
	w[1 + pargc] = 0;
	uint64_t *we = w + 2 + pargc;
	long ne = 0;
	if (mm_ok && env_ok) {
		char *efrom = s->envp[0], *eto = to + moved;
		memmove(eto, efrom, envlen);
		for (long i = 0; i < s->nenv; i++)
			if (!extra_env || !tx_skip(s->envp[i], "TIEXEC_EXE="))
				we[ne++] = (uint64_t)(uintptr_t)(eto + (s->envp[i] - efrom));
		memset(eto + envlen, 0, (size_t)(env_end - (uint64_t)(uintptr_t)(eto + envlen)));
	} else {
		for (long i = 0; i < s->nenv; i++)
			if (!extra_env || !tx_skip(s->envp[i], "TIEXEC_EXE="))
				we[ne++] = (uint64_t)(uintptr_t)s->envp[i];
		if (args_ok)
			memset(to + moved, 0, (size_t)(arg_end - arg_start - moved));
	}
	if (extra_env)
		we[ne++] = fn_final + fnlen;
	we[ne] = 0;

	/* The final stage, in a page of its own (see arch.h); without one,
	 * the same code runs in place and the loader stays mapped. */
	static struct arch_final in_place;
	struct arch_final *f = &in_place;
	const void *code = arch_final_code;
	size_t code_len = (size_t)(arch_final_end - arch_final_code);
	long page = sys_mmap(0, TX_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page >= 0) {
		memcpy((void *)(uintptr_t)page, arch_final_code, code_len);
		code = (const void *)(uintptr_t)page;
		f = (struct arch_final *)(uintptr_t)tx_up((uint64_t)page + code_len, 64);
	} else {
		exe_mode = ARCH_EXE_NONE;
	}
	memset(f, 0, sizeof(*f));
	if (page >= 0) {
		uint64_t lo = tx_down((uint64_t)(uintptr_t)tx_ehdr_start, TX_PAGE);
		f->loader_lo = lo;
		f->loader_len = tx_up((uint64_t)(uintptr_t)tx_end, TX_PAGE) - lo;
		f->page = (uint64_t)page;
		f->gadget = find_gadget();
	}
	f->exe_mode = (uint64_t)exe_mode;
	f->exe_fd = (uint64_t)prog.fd;
	f->entry = entry;
	f->drop_caps = (uint64_t)drop_caps;
	f->cap_hdr[0] = 0x20080522; /* _LINUX_CAPABILITY_VERSION_3 */
	mm.auxv = (__u64 *)(uintptr_t)(dst + (uint64_t)(auxo - block) * 8);
	mm.exe_fd = (uint32_t)prog.fd;
	memcpy(f->mm, &mm, sizeof(mm));
	if (exe_mode == ARCH_EXE_NONE)
		sys_close(prog.fd);
	if (page >= 0)
		sys_mprotect((uint64_t)page, TX_PAGE, PROT_READ | PROT_EXEC);
	arch_jump_final((void *)(uintptr_t)dst, block, len, code, f);
}

