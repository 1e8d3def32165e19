/* The stack stage: the program's initial stack, built as the kernel would
 * have built it for a direct exec, and what the kernel records about it.
 *
 * Stage contract.  Reads the launch and load sections, and fp (whether the
 * final stage has a page of its own: without one the loader stays mapped,
 * and so does the exe link).  Writes the stack section: the block (argc,
 * argv, envp, auxv, AT_EXECFN, the hook's preinit array, expanded $ORIGIN
 * strings) built at blk for plan.dst; the argument and environment strings
 * moved in place; the bounds told to the kernel (PR_SET_MM_MAP, no
 * privilege needed), so /proc/PID/cmdline, environ and auxv show what the
 * program sees; how and whether /proc/PID/exe becomes the program's (set
 * already, before ld.so, when the stage after ld.so follows: detach.h), and
 * otherwise the TIEXEC_EXE hint in the environment.  Under the file
 * capability opt-in its capabilities are raised only around the exe
 * prctls.  May exit with 126 (no memory for a large block). */
#include <errno.h>
#include <linux/auxvec.h>

#include "caps.h"
#include "detach.h"
#include "exec.h"
#include "origin.h"
#include "proc.h"
#include "report.h"
#include "sys.h"

/* The stack block is built here when it fits: the loader's own memory,
 * which the final stage unmaps.  A bigger one gets a mapping of its own --
 * never the stack, which may have no room left under RLIMIT_STACK (the
 * kernel accepts arguments up to 128 KiB whatever the limit). */
static uint64_t block_buf[8192];

/* Code, data and brk bounds of the program, as the kernel records them for
 * a direct exec (start_code..end_data from the segments, brk after .bss). */
static void program_bounds(const struct image *prog, struct prctl_mm_map *mm)
{
	uint64_t sc = UINT64_MAX, ec = 0, sd = 0, ed = 0, brk_end = 0;

	for (unsigned i = 0; i < prog->nsegs; i++) {
		const struct seg *g = &prog->segs[i];
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
	 * their .bss, randomized as the arch's arch_randomize_brk does. */
	if (!(prog->info.type == ET_DYN && prog->info.interp < 0)) {
		brk = tx_up(brk_end, TX_PAGE);
		if (!aslr_off())
			brk += (random_u64() & (ARCH_BRK_RANDOM - 1)) & -TX_PAGE;
	}
	memset(mm, 0, sizeof(*mm));
	mm->start_code = sc;
	mm->end_code = ec;
	mm->start_data = sd;
	mm->end_data = ed;
	mm->start_brk = mm->brk = brk;
	mm->exe_fd = (uint32_t)-1;
}

/* May we change /proc/PID/exe?  The kernel checks permission before it
 * refuses (EBUSY) because tiexec is still mapped, so one PR_SET_MM_MAP
 * with exe_fd tells.  mm must already hold the final bounds (a kernel that
 * does not mind the loader's mapping applies them now). */
static int exe_link_mode(struct prctl_mm_map *mm, int fd, int *done)
{
	*done = 0;
	mm->exe_fd = (uint32_t)fd;
	long e = sys_prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)mm, sizeof(*mm), 0);
	mm->exe_fd = (uint32_t)-1;
	if (e == -EBUSY)
		return ARCH_EXE_MAP;
	if (e == 0) {
		*done = 1;
		return ARCH_EXE_NONE;
	}
	if (sys_prctl(PR_SET_MM, PR_SET_MM_EXE_FILE, (unsigned long)fd, 0, 0) == -EBUSY)
		return ARCH_EXE_FILE;
	return ARCH_EXE_NONE;
}

/* The program's path as /proc/PID/exe would name it (the open file's
 * link), into prog_link, and its directory the way glibc's _dl_get_origin
 * derives one (up to the last '/', "/" at the top) into prog_dir.  NULL if
 * it cannot be had. */
static const char *program_path(struct exec *ex)
{
	long n = fd_link(ex->prog.fd, ex->prog_link, sizeof(ex->prog_link));

	if (n < 0)
		return NULL;
	size_t dl = (size_t)n;
	while (dl > 1 && ex->prog_link[dl - 1] != '/')
		dl--;
	if (dl > 1)
		dl--;
	memcpy(ex->prog_dir, ex->prog_link, dl);
	ex->prog_dir[dl] = '\0';
	return ex->prog_link;
}

/* "TIEXEC_EXE=PID:/abs/path/of/program", the re-exec hint (reexec.h), for a
 * program whose /proc/self/exe keeps naming tiexec; NULL if the path cannot
 * be had. */
static const char *exe_hint(struct exec *ex)
{
	const char *path = program_path(ex);
	struct msg h;

	if (!path || strlen(path) > sizeof(ex->exe_env) - 40)
		return NULL;
	h.n = 0;
	msg_str(&h, "TIEXEC_EXE=");
	msg_u64(&h, (uint64_t)SC(__NR_getpid, 0, 0, 0, 0, 0, 0));
	msg_str(&h, ":");
	memcpy(ex->exe_env, h.b, h.n);
	memcpy(ex->exe_env + h.n, path, strlen(path) + 1);
	return ex->exe_env;
}

/* Writes the expanded $ORIGIN strings to buf (at `final` in the program's
 * stack) and points the dynamic entries at them (origin.h). */
static void fix_origin(const struct origin_fix *fx, unsigned n, const char *dir, char *buf,
		       uint64_t final)
{
	size_t at = 0;

	for (unsigned i = 0; i < n; i++) {
		origin_expand(fx[i].src, dir, buf + at);
		*fx[i].dval = final + at - fx[i].strtab;
		at += fx[i].outlen;
	}
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

static uint64_t *block_alloc(struct exec *ex, size_t len)
{
	ex->tmp_lo = ex->tmp_len = 0;
	if (len <= sizeof(block_buf))
		return block_buf;
	size_t n = tx_up(len, TX_PAGE);
	long r = sys_mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r < 0)
		die(ex->path, "cannot allocate memory for the program's initial stack", NULL, 126);
	ex->tmp_lo = (uint64_t)r;
	ex->tmp_len = n;
	return (uint64_t *)(uintptr_t)r;
}

/* Whether anything that runs before the hook needs /proc/PID/exe to be
 * the program's already: the opt-in by file capability, whose capability
 * must be gone before ld.so while setting the link needs it; an audit
 * module (its code runs while ld.so loads); $ORIGIN in LD_LIBRARY_PATH or
 * LD_PRELOAD, which glibc expands from the link.  The program's own
 * $ORIGIN strings are handed to ld.so expanded (origin.h), and every
 * initializer runs after the hook (hookpoint.h), which sets the link.
 * Otherwise leaving tiexec's file before ld.so is work for nothing: about
 * 0.1 ms of a start.  ($ORIGIN in /etc/ld.so.preload is not looked for.) */
static int exe_needed_before_hook(const struct exec *ex)
{
	const char *llp = env_get(ex->s.envp, "LD_LIBRARY_PATH");
	const char *pre = env_get(ex->s.envp, "LD_PRELOAD");

	return caps_from_file(ex->aux) || ex->ld_audit || (llp && origin_has(llp)) ||
	       (pre && origin_has(pre));
}

/* With a stage after ld.so, the exe link is set before ld.so runs when
 * something there needs it (above): tiexec's image leaves its file first
 * (detach.h, which reads our own file: without the capability).  If it
 * cannot, or nothing needs it, the final stage sets it as without the
 * hook -- except under the opt-in by file capability, whose capability
 * must be gone before ld.so: then the link stays tiexec's and the hint is
 * given. */
static void exe_link_early(struct exec *ex)
{
	long e = -1;

	if (!exe_needed_before_hook(ex))
		return;
	if (self_detach(&ex->traced_fd) == 0) {
		ex->mm.exe_fd = (uint32_t)ex->prog.fd;
		caps_raise(ex->caps_opted);
		e = ex->exe_mode == ARCH_EXE_MAP
			    ? sys_prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&ex->mm, sizeof(ex->mm), 0)
			    : sys_prctl(PR_SET_MM, PR_SET_MM_EXE_FILE, (unsigned long)ex->prog.fd, 0, 0);
		caps_lower(ex->caps_opted);
		ex->mm.exe_fd = (uint32_t)-1;
	}
	if (e == 0)
		ex->exe_done = 1;
	if (e == 0 || caps_from_file(ex->aux))
		ex->exe_mode = ARCH_EXE_NONE;
}

/* 1. Bounds, whether /proc/PID/exe can be set (which decides the hint),
 *    and the $ORIGIN strings ld.so needs.  Returns the hint, or NULL. */
static const char *exe_link(struct exec *ex, struct origin_fix *fx, unsigned *nfix, size_t *orglen)
{
	struct areas *a = &ex->areas;
	int hook = ex->hp.kind != HOOK_NONE;
	const char *hint = NULL;

	program_bounds(&ex->prog, &ex->mm);
	block_areas(&ex->s, ex->first, NULL, a);
	ex->mm.arg_start = a->arg_start;
	ex->mm.arg_end = a->arg_start + a->moved;
	ex->mm.env_start = ex->mm.arg_end;
	ex->mm.env_end = ex->mm.arg_end + (a->env_ok ? a->env_keep : 0);
	ex->mm.start_stack = (uint64_t)(uintptr_t)ex->s.argv - 8;
	ex->exe_mode = ARCH_EXE_NONE;
	if (a->args_ok && ex->fp.kind != PAGE_NONE) {
		caps_raise(ex->caps_opted);
		ex->exe_mode = exe_link_mode(&ex->mm, ex->prog.fd, &ex->exe_done);
		caps_lower(ex->caps_opted);
		if (hook && ex->exe_mode != ARCH_EXE_NONE)
			exe_link_early(ex);
	}
	if (ex->exe_mode == ARCH_EXE_NONE && !ex->exe_done)
		hint = exe_hint(ex);
	/* ld.so takes $ORIGIN from /proc/self/exe, which names tiexec while
	 * it runs unless the link is set before (not after the hook, nor for
	 * an ordinary user): hand it the strings expanded.  The program's
	 * directory (a readlink) only if it has any. */
	*nfix = 0;
	*orglen = 0;
	if ((hint || (hook && !ex->exe_done)) && !ex->aux[AT_SECURE] && origin_find(&ex->prog, fx, "") &&
	    (hint || program_path(ex)))
		*nfix = origin_find(&ex->prog, fx, ex->prog_dir);
	for (unsigned i = 0; i < *nfix; i++)
		*orglen += fx[i].outlen;
	return hint;
}

/* 2. Where everything goes, and the block to build it in.  Returns the
 *    hint, dropped when it has no room. */
static const char *plan(struct exec *ex, const char *hint, size_t orglen)
{
	size_t prelen = hookpoint_len(&ex->hp);
	struct plan *p = &ex->plan;

	block_areas(&ex->s, ex->first, hint, &ex->areas);
	block_plan(&ex->s, ex->first, ex->execfn, hint, prelen, orglen, &ex->areas, p);
	if (p->env_in_block && !block_fits_stack(&ex->areas, p)) {
		verbose_note(ex->opt.verbose, ex->path, "no room under RLIMIT_STACK for the TIEXEC_EXE hint: "
				       "re-executing /proc/self/exe will not find the program");
		hint = NULL;
		block_areas(&ex->s, ex->first, NULL, &ex->areas);
		block_plan(&ex->s, ex->first, ex->execfn, NULL, prelen, orglen, &ex->areas, p);
	}
	struct block *b = &ex->blk;
	b->w = block_alloc(ex, p->len);
	b->envw = b->w + 2 + p->pargc;
	b->auxo = b->envw + p->nenv_out + 1;
	b->strs = (char *)(b->w + p->words);
	b->strs_final = p->dst + p->words * 8;
	memcpy(b->strs + p->fn_off, ex->execfn, p->fnlen);
	return hint;
}

/* 3. The aux vector, the $ORIGIN strings and the hook's array into the
 *    block, and the final bounds and aux vector told to the kernel
 *    (PR_SET_MM_MAP records the aux vector from where it is now).  Returns
 *    whether the kernel took them. */
static int tell_kernel(struct exec *ex, const struct origin_fix *fx, unsigned nfix)
{
	const struct areas *a = &ex->areas;
	const struct plan *p = &ex->plan;
	const struct block *b = &ex->blk;
	const struct image *prog = &ex->prog;
	struct aux_prog ap = {
		.phdr = prog->info.phdr_vaddr + prog->bias,
		.phnum = prog->eh.e_phnum,
		.base = prog->info.interp >= 0 ? ex->interp.bias : 0,
		.entry = prog->eh.e_entry + prog->bias,
		.secure_off = ex->drop_caps,
	};

	long na = block_auxv(&ex->s, b->auxo, b->strs_final + p->fn_off, p->naux, &ap);
	size_t org = p->fn_off + p->fnlen;
	fix_origin(fx, nfix, ex->prog_dir, b->strs + org, b->strs_final + org);
	hookpoint_install(&ex->hp, (uint64_t *)(uintptr_t)b->strs, b->strs_final, ex->hook_fn, prog->bias);
	if (p->env_in_block) {
		ex->mm.arg_start = b->strs_final + p->env_off;
		ex->mm.arg_end = ex->mm.arg_start + a->moved;
	}
	uint64_t env_len = a->env_ok ? a->env_keep + p->xlen : 0;
	ex->mm.env_start = a->args_ok ? ex->mm.arg_end : 0;
	ex->mm.env_end = ex->mm.env_start + (a->args_ok ? env_len : 0);
	ex->mm.start_stack = p->dst;
	ex->mm.auxv = (__u64 *)b->auxo;
	ex->mm.auxv_size = (uint32_t)(na * 16);
	if (ex->mm.auxv_size > 52 * 8)
		ex->mm.auxv_size = 0;
	return a->args_ok && sys_prctl(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&ex->mm, sizeof(ex->mm), 0) == 0;
}

void stack_stage(struct exec *ex)
{
	static struct origin_fix fx[ORIGIN_MAX_FIX];
	unsigned nfix;
	size_t orglen;

	/* The argument strings move below: keep the name messages use. */
	if (ex->hp.kind != HOOK_NONE && strlen(ex->path) < sizeof(ex->path_copy)) {
		memcpy(ex->path_copy, ex->path, strlen(ex->path) + 1);
		ex->path = ex->prog.path = ex->path_copy;
	}
	ex->traced_fd = -1;
	ex->drop_caps = caps_drop_how(caps_from_file(ex->aux), ex->prog.fd);
	const char *hint = exe_link(ex, fx, &nfix, &orglen);
	hint = plan(ex, hint, orglen);
	int mm_ok = tell_kernel(ex, fx, nfix);
	block_strings(&ex->s, ex->first, hint, &ex->areas, &ex->plan, &ex->blk, mm_ok);
	/* The final stage names the block where the program will find it. */
	ex->mm.auxv = (__u64 *)(uintptr_t)(ex->plan.dst + (uint64_t)(ex->blk.auxo - ex->blk.w) * 8);
	ex->mm.exe_fd = (uint32_t)ex->prog.fd;
}
