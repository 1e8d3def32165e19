/* tiexec: runs an x86-64 ELF program with its text on 2 MiB pages.
 *
 * Stage contract.  The kernel enters at _start (arch.h) with the initial
 * stack it built for *us*.  tiexec_main first applies our own relative
 * relocations (until then no global holding a pointer may be read), then:
 * finds the program (command line, or binfmt_misc's descriptor), validates
 * it completely before mapping anything, maps it and its interpreter the
 * way the kernel would, puts its text on huge pages (huge.c), rebuilds the
 * initial stack as a direct exec would have built it, and jumps.  No libc:
 * every service is a raw system call (sys.h); nothing is allocated; the only
 * output is one-line messages on stderr.
 *
 * Exit statuses before the program runs: 127 not found, 126 cannot be
 * executed, 125 bad tiexec option.  After the jump the process is the
 * program's, with our PID. */
#include <elf.h>
#include <errno.h>
#include <linux/auxvec.h>
#include <linux/fadvise.h>

#include "arch/x86_64/arch.h"
#include "elfcheck.h"
#include "huge.h"
#include "layout.h"
#include "mark.h"
#include "opts.h"
#include "rt.h"
#include "sys.h"

/* USDT probes (zero cost, a nop, when nobody listens): what tiexec did,
 * for bpf/tiexec-trace.  Only the loader knows the outcome, and it must
 * not need a file, a socket or a daemon to tell it. */
#if TIEXEC_HAVE_SDT
#define SDT_USE_VARIADIC 1
#include <sys/sdt.h>
#define TX_PROBE(...) STAP_PROBEV(tiexec, __VA_ARGS__)
#else
#define TX_PROBE(...) ((void)0)
#endif
/* Bits of the "loaded" probe's mode argument. */
#define TX_MODE_BINFMT 1
#define TX_MODE_REEXEC 2
#define TX_MODE_REMAPPED 4

#ifndef TIEXEC_VERSION
#define TIEXEC_VERSION "0.1.0"
#endif
#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif
#define AT_FLAGS_PRESERVE_ARGV0 1
#define ADDR_NO_RANDOMIZE 0x0040000
#define MAX_SEGS TX_PH_MAX
#define AUX_MAX 64

ARCH_ENTRY;
ARCH_FINAL;
ARCH_JUMP_FINAL;

__attribute__((noreturn)) void tiexec_main(uint64_t *sp);

extern const char tx_ehdr_start[] __asm__("__ehdr_start") __attribute__((visibility("hidden")));
extern Elf64_Dyn tx_dynamic[] __asm__("_DYNAMIC") __attribute__((visibility("hidden")));
extern const char tx_end[] __asm__("_end") __attribute__((visibility("hidden")));

/* A program or interpreter being loaded. */
struct image {
	const char *path;
	int fd;
	uint64_t size;
	Elf64_Ehdr eh;
	Elf64_Phdr ph[TX_PH_MAX];
	struct elf_info info;
	uint64_t bias;
	uint64_t res_lo, res_hi; /* the address range reserved for it */
	struct seg segs[MAX_SEGS];
	unsigned nsegs;
};

static struct image prog, interp;
static uint64_t aux[AUX_MAX];
static struct opts opt;                 /* in effect */
static struct opts env_o, cli_o, note_o; /* what each source set */
static char exe_env[4096 + 16];         /* "TIEXEC_EXE=/abs/path" */
static char path_buf[4096];
static char interp_path[4096];

/* ---- reporting ---------------------------------------------------------- */

static void say(struct msg *m)
{
	msg_str(m, "\n");
	sys_write(2, m->b, m->n);
}

static void msg_head(struct msg *m, const char *path)
{
	m->n = 0;
	msg_str(m, "tiexec: '");
	msg_str(m, path);
	msg_str(m, "': ");
}

__attribute__((noreturn)) static void die(const char *path, const char *what, const char *detail,
					  int status)
{
	struct msg m;

	msg_head(&m, path);
	msg_str(&m, what);
	if (detail) {
		msg_str(&m, ": ");
		msg_str(&m, detail);
	}
	say(&m);
	sys_exit(status);
}

__attribute__((noreturn)) static void die_errno(const char *path, const char *what, long err)
{
	int status = (err == -ENOENT || err == -ENOTDIR) ? 127 : 126;

	if (what)
		die(path, what, tx_strerror(-err), status);
	die(path, tx_strerror(-err), NULL, status);
}

static void verbose_note(const char *path, const char *what)
{
	struct msg m;

	if (!opt.verbose)
		return;
	msg_head(&m, path);
	msg_str(&m, what);
	say(&m);
}

static uint64_t now_ns(void)
{
	struct tx_timespec ts;

	sys_clock_gettime(TX_CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.sec * 1000000000ULL + (uint64_t)ts.nsec;
}

/* ---- self relocation ---------------------------------------------------- */

/* We are a static PIE: the kernel maps us anywhere and nobody applies our
 * R_X86_64_RELATIVE relocations but us.  Runs before any pointer stored in
 * data is used; reaches _DYNAMIC and our base through PC-relative hidden
 * symbols only. */
static void relocate_self(void)
{
	uint64_t base = (uint64_t)(uintptr_t)tx_ehdr_start;
	uint64_t rela = 0, relasz = 0;

	for (Elf64_Dyn *d = tx_dynamic; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_RELA)
			rela = d->d_un.d_ptr;
		else if (d->d_tag == DT_RELASZ)
			relasz = d->d_un.d_val;
	}
	Elf64_Rela *r = (Elf64_Rela *)(uintptr_t)(base + rela);
	for (uint64_t i = 0; rela && i < relasz / sizeof(*r); i++)
		if (ELF64_R_TYPE(r[i].r_info) == R_X86_64_RELATIVE)
			*(uint64_t *)(uintptr_t)(base + r[i].r_offset) = base + (uint64_t)r[i].r_addend;
}

/* ---- finding and opening the program ------------------------------------ */

/* Like execvp: a name without '/' is looked up in PATH.  Returns 0 with the
 * path in path_buf, or -ENOENT / -EACCES. */
static long find_in_path(const char *name, const char *pathenv)
{
	long err = -ENOENT;
	size_t nl = strlen(name);

	if (!pathenv)
		pathenv = "/bin:/usr/bin"; /* glibc's default */
	for (const char *p = pathenv;; p++) {
		const char *e = p;
		while (*e && *e != ':')
			e++;
		size_t dl = (size_t)(e - p);
		if (dl + 1 + nl + 1 <= sizeof(path_buf)) {
			/* An empty element is the current directory, named as
			 * execvp names it: the bare name, no "./". */
			size_t n = 0;
			memcpy(path_buf, p, dl);
			n += dl;
			if (dl)
				path_buf[n++] = '/';
			memcpy(path_buf + n, name, nl + 1);
			struct statx st;
			if (sys_statx(TX_AT_FDCWD, path_buf, 0, STATX_TYPE, &st) == 0) {
				if ((st.stx_mode & S_IFMT) == S_IFREG &&
				    sys_faccessat(TX_AT_FDCWD, path_buf, X_OK) == 0)
					return 0;
				err = -EACCES;
			}
		}
		if (!*e)
			break;
		p = e;
	}
	return err;
}

static const char *getenv_in(char **envp, const char *name)
{
	for (char **e = envp; *e; e++) {
		const char *v = tx_skip(*e, name);
		if (v && *v == '=')
			return v + 1;
	}
	return NULL;
}

/* Reads the ELF header and program headers of an open file and validates
 * them; dies with the reason if anything is wrong.  Returns 1 if the file
 * is a "#!" script instead (only when scripts_ok). */
static int read_headers(struct image *im, int scripts_ok)
{
	static unsigned char head[512];
	struct statx st;
	long e;

	e = sys_statx(im->fd, "", TX_AT_EMPTY_PATH, STATX_TYPE | STATX_SIZE | STATX_MODE, &st);
	if (e < 0)
		die_errno(im->path, NULL, e);
	if ((st.stx_mode & S_IFMT) == S_IFDIR)
		die_errno(im->path, NULL, -EISDIR);
	if ((st.stx_mode & S_IFMT) != S_IFREG)
		die_errno(im->path, NULL, -EACCES);
	im->size = st.stx_size;

	long n = sys_pread(im->fd, head, sizeof(head), 0);
	if (n < 0)
		die_errno(im->path, "cannot read", n);
	if (scripts_ok && n >= 2 && head[0] == '#' && head[1] == '!')
		return 1;
	enum elf_err r = elf_check_ehdr(head, (size_t)n, im->size, &im->eh);
	if (r != ELF_OK)
		die(im->path, elf_err_str(r), NULL, 126);
	size_t phsize = (size_t)im->eh.e_phnum * sizeof(Elf64_Phdr);
	e = sys_pread(im->fd, im->ph, phsize, im->eh.e_phoff);
	if (e < 0)
		die_errno(im->path, "cannot read", e);
	if ((size_t)e != phsize)
		die(im->path, elf_err_str(ELF_TRUNCATED), NULL, 126);
	r = elf_check_phdrs(&im->eh, im->ph, im->size, &im->info);
	if (r != ELF_OK)
		die(im->path, elf_err_str(r), NULL, 126);
	return 0;
}

/* ---- mapping ------------------------------------------------------------ */

static int prot_of(uint32_t f)
{
	return (f & PF_R ? PROT_READ : 0) | (f & PF_W ? PROT_WRITE : 0) | (f & PF_X ? PROT_EXEC : 0);
}

static uint64_t random_u64(void)
{
	uint64_t r = 0;

	/* AT_RANDOM's 16 bytes belong to the program (stack protector,
	 * pointer guard); ask the kernel for our own. */
	sys_getrandom(&r, sizeof(r), 0);
	return r;
}

static int aslr_off(void)
{
	long p = SC(__NR_personality, 0xffffffffUL, 0, 0, 0, 0, 0);

	return p >= 0 && (p & ADDR_NO_RANDOMIZE);
}

/* Reserves the address range the image will live in (PROT_NONE), and sets
 * its bias.  Dies when a fixed-address program cannot have its addresses. */
static void place(struct image *im, int is_interp)
{
	uint64_t span = im->info.hi - im->info.lo;
	long r;

	if (im->info.type == ET_EXEC) {
		/* Rounded out to 2 MiB when free, so that --round-out has room. */
		uint64_t lo = tx_down(im->info.lo, TX_HUGE), hi = tx_up(im->info.hi, TX_HUGE);
		r = sys_mmap(lo, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (r < 0 || (uint64_t)r != lo) {
			if (r >= 0)
				sys_munmap((uint64_t)r, hi - lo);
			lo = im->info.lo, hi = im->info.hi;
			r = sys_mmap(lo, hi - lo, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				     -1, 0);
			if (r < 0 || (uint64_t)r != lo) {
				struct msg m;
				if (r >= 0)
					sys_munmap((uint64_t)r, hi - lo);
				msg_head(&m, im->path);
				msg_str(&m, "fixed load address ");
				msg_hex(&m, lo);
				msg_str(&m, "-");
				msg_hex(&m, hi);
				msg_str(&m, r == -EEXIST || r >= 0
						    ? " overlaps memory already in use (the loader or the stack)"
						    : ": cannot be mapped (below vm.mmap_min_addr?)");
				say(&m);
				sys_exit(126);
			}
		}
		im->bias = 0;
		im->res_lo = lo;
		im->res_hi = hi;
		return;
	}

	/* ET_DYN.  Where the kernel would put it: a program with an
	 * interpreter (PIE) low, above the brk of a loader like us, so that
	 * its own brk can follow it; an interpreter or a static PIE in the
	 * mmap region.  Room for 2 MiB alignment at both ends. */
	uint64_t size = span + 2 * TX_HUGE + TX_HUGE;
	r = -ENOMEM;
	if (!is_interp && im->info.interp >= 0) {
		uint64_t hint = tx_up((uint64_t)sys_brk(0), TX_HUGE) + TX_HUGE;
		if (!aslr_off())
			hint += (random_u64() & ((1ULL << 40) - 1)) & -TX_HUGE;
		if (hint + size < TX_USER_TOP)
			r = sys_mmap(hint, size, PROT_NONE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (r >= 0 && (uint64_t)r != hint) {
			sys_munmap((uint64_t)r, size);
			r = -EEXIST;
		}
	}
	if (r < 0)
		r = sys_mmap(0, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r < 0)
		die_errno(im->path, "cannot reserve address space", r);
	uint64_t region = tx_up((uint64_t)r, TX_HUGE);

	/* Anchor the largest text segment: congruent to its file offset for
	 * zero-copy huge pages, or starting on a 2 MiB boundary for a copy. */
	struct seg tmp[MAX_SEGS];
	unsigned n = layout_segs(im->ph, im->eh.e_phnum, 0, tmp, MAX_SEGS);
	int t = layout_main_text(tmp, n);
	uint64_t anchor = 0, mod = 0;
	if (t >= 0) {
		anchor = tmp[t].vaddr;
		mod = tmp[t].offset;
		if (!is_interp && (opt.strategy == ST_THP || opt.strategy == ST_HUGETLB)) {
			anchor = tx_down(anchor, TX_PAGE);
			mod = 0;
		}
	}
	im->bias = layout_dyn_bias(region, im->info.lo, anchor, mod);
	if (!is_interp && opt.strategy == ST_OFF && !aslr_off()) {
		/* No huge pages wanted: a page-granular random base, as the
		 * kernel gives, rather than one congruent to the file (which
		 * would let the kernel PMD-map cached 2 MiB folios anyway). */
		im->bias += (random_u64() % (TX_HUGE / TX_PAGE)) * TX_PAGE;
	}
	im->res_lo = (uint64_t)r;
	im->res_hi = (uint64_t)r + size;
}

/* Maps every PT_LOAD inside the reservation, as the kernel's elf_load()
 * does: file pages, the zeroed tail of the last file page when writable,
 * anonymous pages for the rest of .bss.  Later segments win a shared page. */
static void map_segments(struct image *im)
{
	for (unsigned i = 0; i < im->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &im->ph[i];
		if (p->p_type != PT_LOAD || p->p_memsz == 0)
			continue;
		int prot = prot_of(p->p_flags);
		uint64_t v = p->p_vaddr + im->bias;
		uint64_t start = tx_down(v, TX_PAGE);
		uint64_t zs = start;
		long r;

		if (p->p_filesz) {
			uint64_t fend = tx_up(v + p->p_filesz, TX_PAGE);
			r = sys_mmap(start, fend - start, prot, MAP_PRIVATE | MAP_FIXED, im->fd,
				     tx_down(p->p_offset, TX_PAGE));
			if (r < 0)
				die_errno(im->path, "cannot map segment", r);
			if (p->p_memsz > p->p_filesz && (prot & PROT_WRITE))
				memset((void *)(uintptr_t)(v + p->p_filesz), 0, fend - (v + p->p_filesz));
			zs = fend;
		}
		uint64_t ze = tx_up(v + p->p_memsz, TX_PAGE);
		if (ze > zs) {
			r = sys_mmap(zs, ze - zs, prot, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
			if (r < 0)
				die_errno(im->path, "cannot map segment", r);
		}
	}
	im->nsegs = layout_segs(im->ph, im->eh.e_phnum, im->bias, im->segs, MAX_SEGS);
}

/* Gives back the reserved address space no segment uses, keeping the
 * rounded-out pieces when --round-out may fill them. */
static void trim_reservation(struct image *im, int keep_outer)
{
	uint64_t at = im->res_lo;

	for (unsigned i = 0; i <= im->nsegs; i++) {
		uint64_t lo = im->res_hi, hi = im->res_hi;
		if (i < im->nsegs) {
			const struct seg *s = &im->segs[i];
			lo = tx_down(s->vaddr, TX_PAGE);
			hi = tx_up(s->vaddr + s->memsz, TX_PAGE);
			if (keep_outer && (s->flags & PF_X) && !(s->flags & PF_W)) {
				uint64_t a, b;
				layout_outer(im->segs, im->nsegs, i, im->res_lo, im->res_hi, &a, &b);
				if (a < b && a < lo)
					lo = a;
				if (a < b && b > hi)
					hi = b;
			}
		}
		if (lo > at)
			sys_munmap(at, lo - at);
		if (hi > at)
			at = hi;
	}
}

static void open_interp(const char *prog_path)
{
	const Elf64_Phdr *p = &prog.ph[prog.info.interp];
	struct msg m;

	long n = sys_pread(prog.fd, interp_path, p->p_filesz, p->p_offset);
	if (n != (long)p->p_filesz || elf_check_interp(interp_path, p->p_filesz) != ELF_OK)
		die(prog_path, elf_err_str(ELF_BAD_INTERP), NULL, 126);
	interp.path = interp_path;
	interp.fd = (int)sys_openat(TX_AT_FDCWD, interp_path, O_RDONLY | O_CLOEXEC, 0);
	if (interp.fd < 0) {
		msg_head(&m, prog_path);
		msg_str(&m, "interpreter '");
		msg_str(&m, interp_path);
		msg_str(&m, "': ");
		msg_str(&m, tx_strerror(-interp.fd));
		say(&m);
		sys_exit(interp.fd == -ENOENT ? 127 : 126);
	}
	read_headers(&interp, 0);
	if (interp.info.type != ET_DYN || interp.info.interp >= 0)
		die(interp_path, "interpreter is not a static ELF shared object", NULL, 126);
}

/* The policy note of a marked program (interp/mark.h), into note_o.  Reads
 * the section headers from the end (tiexec-stamp appends its section), at
 * most 32 at a time, and only notes of a sane size. */
static void read_note(struct image *im)
{
	static Elf64_Shdr sh[32];
	static unsigned char nb[4096];
	const Elf64_Ehdr *eh = &im->eh;
	const char *why = "marked, but without a readable tiexec note: defaults";

	opts_default(&note_o);
	if (eh->e_phoff != TIEXEC_MARK_PHOFF || !(im->ph[0].p_flags & TIEXEC_MARK_FLAG))
		return;
	if (eh->e_shoff && eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shnum &&
	    eh->e_shnum < SHN_LORESERVE && eh->e_shoff <= im->size &&
	    (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= im->size - eh->e_shoff) {
		for (unsigned end = eh->e_shnum; end > 0;) {
			unsigned start = end > 32 ? end - 32 : 0;
			size_t n = (end - start) * sizeof(Elf64_Shdr);
			if (sys_pread(im->fd, sh, n, eh->e_shoff + start * sizeof(Elf64_Shdr)) != (long)n)
				break;
			for (unsigned i = end - start; i-- > 0;) {
				const Elf64_Shdr *h = &sh[i];
				const void *desc;
				size_t dlen;
				if (h->sh_type != SHT_NOTE || !h->sh_size || h->sh_size > sizeof(nb) ||
				    h->sh_offset > im->size || h->sh_size > im->size - h->sh_offset ||
				    sys_pread(im->fd, nb, h->sh_size, h->sh_offset) != (long)h->sh_size ||
				    elf_note_find(nb, h->sh_size, TIEXEC_NOTE_OWNER, TIEXEC_NT_POLICY, &desc, &dlen))
					continue;
				switch (opts_note(&note_o, desc, dlen)) {
				case OPT_NOTE_OK: return;
				case OPT_NOTE_VERSION: why = "tiexec note of an unknown version: defaults"; break;
				default: why = "malformed tiexec note: defaults"; break;
				}
				opts_default(&note_o);
				goto out;
			}
			end = start;
		}
	}
out:
	verbose_note(im->path, why);
}

/* ---- the program's initial stack ---------------------------------------- */

struct start {
	long argc;
	char **argv;
	char **envp;
	long nenv;
	uint64_t *auxv;     /* pairs, ending with AT_NULL */
	uint64_t *auxv_end; /* just past the AT_NULL pair */
};

static void parse_start(uint64_t *sp, struct start *s)
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
__attribute__((noreturn)) static void start_program(struct start *s, long first, const char *execfn,
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
		case AT_PHDR: v = prog.info.phdr_vaddr ? prog.info.phdr_vaddr + prog.bias : 0; break;
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

/* ---- top level ---------------------------------------------------------- */

static void usage(void)
{
	static const char text[] =
		"Usage: tiexec [OPTIONS] PROG [ARGS...]\n"
		"Run PROG with its executable code on 2 MiB (huge) pages.\n"
		"\n"
		"  -v, --verbose          say what was placed on huge pages, and why not\n"
		"      --strategy=S       auto (default), file, thp, hugetlb or off\n"
		"      --lazy             do not fault the text in at start\n"
		"      --round-out        also cover the unaligned head and tail of the text\n"
		"                         (neighbouring read-only bytes become executable)\n"
		"      --min-text=SIZE    leave programs with less text alone (default 2M)\n"
		"  -h, --help             this text\n"
		"      --version          print the version\n"
		"\n"
		"Environment: TIEXEC_VERBOSE, TIEXEC_STRATEGY, TIEXEC_LAZY, TIEXEC_ROUND_OUT,\n"
		"TIEXEC_MIN_TEXT set the same; options on the command line win.\n";
	sys_write(1, text, sizeof(text) - 1);
}

static void report(const char *path, const struct huge_result *hr, uint64_t t0)
{
	struct msg m;
	uint64_t text = prog.info.text_bytes;
	uint64_t on = hr->text_huge > text ? text : hr->text_huge;

	for (unsigned i = 0; i < hr->nnotes; i++)
		verbose_note(path, hr->notes[i]);
	if (!opt.verbose)
		return;
	msg_head(&m, path);
	msg_mib(&m, on);
	msg_str(&m, " of ");
	msg_mib(&m, text);
	msg_str(&m, " MiB text on 2 MiB pages (file ");
	msg_mib(&m, hr->file);
	msg_str(&m, ", thp ");
	msg_mib(&m, hr->thp);
	if (hr->hugetlb) {
		msg_str(&m, ", hugetlb ");
		msg_mib(&m, hr->hugetlb);
	}
	if (hr->lazy) {
		msg_str(&m, ", lazy ");
		msg_mib(&m, hr->lazy);
	}
	msg_str(&m, "), ");
	msg_mib(&m, text - on);
	msg_str(&m, " on 4 KiB, ");
	msg_ms(&m, now_ns() - t0);
	msg_str(&m, " ms");
	say(&m);
}

/* The program runs as a plain exec would run it: used for what the loader
 * must not or need not handle itself (scripts, set-user-ID files, files we
 * may execute but not read, programs too small to gain anything). */
__attribute__((noreturn)) static void exec_plain(const char *path, char **argv, char **envp,
						const char *why)
{
	TX_PROBE(direct, path, why);
	long e = sys_execve(path, argv, envp);
	die_errno(path, NULL, e);
}

__attribute__((noreturn, used)) void tiexec_main(uint64_t *sp)
{
	struct start s;
	const char *path, *execfn;
	long first;
	int binfmt;
	uint64_t t0;

	relocate_self();
	t0 = now_ns();
	parse_start(sp, &s);

	opts_default(&env_o);
	opts_default(&cli_o);
	opts_default(&opt);
	for (long i = 0; i < s.nenv; i++) {
		if (opts_env(&env_o, s.envp[i]) != OPT_ENV_OK) {
			struct msg m;
			m.n = 0;
			msg_str(&m, "tiexec: ignoring bad setting ");
			msg_str(&m, s.envp[i]);
			say(&m);
		}
	}

	/* binfmt_misc hands us the program when it was registered with us as
	 * its interpreter: flag P sets AT_FLAGS_PRESERVE_ARGV0 and gives
	 * argv = [us, /full/path, original argv0, args...]; flag O passes an
	 * open descriptor in AT_EXECFD.  Anything else is a command line. */
	binfmt = (aux[AT_FLAGS] & AT_FLAGS_PRESERVE_ARGV0) || aux[AT_EXECFD];
	/* A program that could not be given its own /proc/self/exe (see
	 * start_program) and re-executes it starts tiexec under the
	 * program's name, with TIEXEC_EXE saying which program it was. */
	const char *again = binfmt ? NULL : getenv_in(s.envp, "TIEXEC_EXE");
	const char *self = aux[AT_EXECFN] ? (const char *)(uintptr_t)aux[AT_EXECFN] : "tiexec";
	int reexec = again && *again == '/' && s.argc > 0 &&
		     !tx_streq(tx_basename(s.argv[0]), tx_basename(self));
	opts_merge(&opt, &env_o);
	if (binfmt || reexec) {
		if (reexec) {
			path = again;
			first = 0;
		} else {
			if (s.argc < 2)
				die("tiexec", "started by binfmt_misc without a program", NULL, 126);
			path = s.argv[1];
			first = (aux[AT_FLAGS] & AT_FLAGS_PRESERVE_ARGV0) && s.argc > 2 ? 2 : 1;
		}
		execfn = aux[AT_EXECFN] ? (const char *)(uintptr_t)aux[AT_EXECFN] : path;
		if (aux[AT_EXECFD] && !reexec) {
			prog.fd = (int)aux[AT_EXECFD];
		} else {
			prog.fd = (int)sys_openat(TX_AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
			if (prog.fd < 0)
				die_errno(path, NULL, prog.fd);
		}
		prog.path = path;
		/* Without flag C binfmt_misc runs us with the caller's
		 * credentials: a set-user-ID program would run unprivileged. */
		struct statx st;
		char cap[4];
		long xa = sys_fgetxattr(prog.fd, "security.capability", cap, sizeof(cap));
		if (sys_statx(prog.fd, "", TX_AT_EMPTY_PATH, STATX_MODE, &st) == 0 &&
		    ((st.stx_mode & (S_ISUID | S_ISGID)) || xa >= 0 || xa == -ERANGE))
			die(path, "set-user-ID, set-group-ID or file capabilities: tiexec cannot run it with "
				  "its privileges (remove the stamp: tiexec-stamp --remove)",
			    NULL, 126);
	} else {
		const char *bad = NULL, *why = NULL;
		first = opts_argv(&cli_o, (int)s.argc, s.argv, &bad, &why);
		opt.help = cli_o.help;
		opt.version = cli_o.version;
		opts_merge(&opt, &cli_o);
		if (first < 0) {
			struct msg m;
			m.n = 0;
			msg_str(&m, "tiexec: ");
			msg_str(&m, bad);
			msg_str(&m, ": ");
			msg_str(&m, why);
			msg_str(&m, " (see tiexec --help)");
			say(&m);
			sys_exit(125);
		}
		if (opt.help) {
			usage();
			sys_exit(0);
		}
		if (opt.version) {
			static const char v[] = "tiexec " TIEXEC_VERSION "\n";
			sys_write(1, v, sizeof(v) - 1);
			sys_exit(0);
		}
		if (first >= s.argc) {
			struct msg m;
			m.n = 0;
			msg_str(&m, "tiexec: missing program (see tiexec --help)");
			say(&m);
			sys_exit(125);
		}
		path = s.argv[first];
		if (!memchr(path, '/', strlen(path))) {
			long e = find_in_path(path, getenv_in(s.envp, "PATH"));
			if (e == -ENOENT)
				die(path, "command not found", NULL, 127);
			if (e < 0)
				die_errno(path, NULL, e);
			path = path_buf;
		}
		execfn = path;
		prog.path = path;
		prog.fd = (int)sys_openat(TX_AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
		if (prog.fd == -EACCES && sys_faccessat(TX_AT_FDCWD, path, X_OK) == 0) {
			verbose_note(path, "not readable (execute-only): running it directly");
			exec_plain(path, s.argv + first, s.envp, "not readable");
		}
		if (prog.fd < 0)
			die_errno(path, NULL, prog.fd);
		long e = sys_faccessat(TX_AT_FDCWD, path, X_OK);
		struct statx st;
		if (e == 0)
			e = sys_statx(prog.fd, "", TX_AT_EMPTY_PATH, STATX_TYPE | STATX_MODE, &st);
		if (e == 0 && (st.stx_mode & S_IFMT) == S_IFDIR)
			e = -EISDIR;
		if (e < 0)
			die_errno(path, NULL, e);
		/* The kernel grants set-user-ID, set-group-ID and file
		 * capabilities only to a real exec. */
		char cap[4];
		long xa = sys_fgetxattr(prog.fd, "security.capability", cap, sizeof(cap));
		if ((st.stx_mode & (S_ISUID | S_ISGID)) || xa >= 0 || xa == -ERANGE) {
			verbose_note(path, "privileged (set-user-ID, set-group-ID or capabilities): running it directly");
			exec_plain(path, s.argv + first, s.envp, "privileged");
		}
	}

	if (read_headers(&prog, !binfmt) == 1) {
		verbose_note(path, "a script: running it directly");
		exec_plain(path, s.argv + first, s.envp, "script");
	}
	/* Precedence: defaults < the program's note < environment < options. */
	read_note(&prog);
	opts_default(&opt);
	opts_merge(&opt, &note_o);
	opts_merge(&opt, &env_o);
	opts_merge(&opt, &cli_o);
	int remap = opt.strategy != ST_OFF && prog.info.text_bytes >= opt.min_text;
	if (!remap && !binfmt && opt.strategy != ST_OFF) {
		if (opt.verbose) {
			struct msg m;
			msg_head(&m, path);
			msg_mib(&m, prog.info.text_bytes);
			msg_str(&m, " MiB of text is below --min-text (");
			msg_mib(&m, opt.min_text);
			msg_str(&m, " MiB): running it directly");
			say(&m);
		}
		TX_PROBE(direct, path, "below min-text");
		long e = sys_execve(path, s.argv + first, s.envp);
		/* The kernel says ENOENT for a missing interpreter too; say
		 * which file is missing. */
		if (e == -ENOENT && prog.info.interp >= 0)
			open_interp(path);
		die_errno(path, NULL, e);
	}
	if (prog.info.interp >= 0)
		open_interp(path);

	place(&prog, 0);
	map_segments(&prog);
	trim_reservation(&prog, remap && opt.round_out);
	if (prog.info.interp >= 0) {
		place(&interp, 1);
		map_segments(&interp);
		trim_reservation(&interp, 0);
		sys_close(interp.fd);
	}

	struct huge_result hr;
	memset(&hr, 0, sizeof(hr));
	if (remap) {
		struct huge_req req = {
			.fd = prog.fd,
			.name = path,
			.o = &opt,
			.segs = prog.segs,
			.nsegs = prog.nsegs,
			.lim_lo = prog.res_lo,
			.lim_hi = prog.res_hi,
		};
		huge_apply(&req, &hr);
		huge_done();
	}

	if (prog.info.exec_stack && aux[AT_EXECFN]) {
		/* PT_GNU_STACK with PF_X: the whole stack executable, as the
		 * kernel's setup_arg_pages would have made it. */
		uint64_t pg = tx_down(aux[AT_EXECFN], TX_PAGE);
		sys_mprotect(pg, TX_PAGE, PROT_READ | PROT_WRITE | PROT_EXEC | PROT_GROWSDOWN);
	}
	sys_prctl(PR_SET_NAME, (unsigned long)tx_basename(execfn), 0, 0, 0);

	if (remap) {
		report(path, &hr, t0);
	} else if (opt.verbose) {
		struct msg m;
		msg_head(&m, path);
		msg_str(&m, "loaded without remapping (--strategy=off or below --min-text), ");
		msg_ms(&m, now_ns() - t0);
		msg_str(&m, " ms");
		say(&m);
	}

	uint64_t mode = (binfmt ? TX_MODE_BINFMT : 0) | (reexec ? TX_MODE_REEXEC : 0) |
			(remap ? TX_MODE_REMAPPED : 0);
	uint64_t text = prog.info.text_bytes, huge = hr.text_huge > text ? text : hr.text_huge;
	const char *why = hr.nnotes ? hr.notes[0] : NULL;
	TX_PROBE(loaded, path, mode, (uint64_t)opt.strategy, text, huge, hr.file, hr.thp, hr.hugetlb,
		 now_ns() - t0, why);
	(void)mode, (void)huge, (void)why;

	uint64_t entry = prog.info.interp >= 0 ? interp.eh.e_entry + interp.bias
					       : prog.eh.e_entry + prog.bias;
	start_program(&s, first, execfn, entry);
}
