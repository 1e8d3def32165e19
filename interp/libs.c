/* The libraries stage: shared libraries' text on 2 MiB pages.
 *
 * Stage contract.  Runs after ld.so, from tiexec_hook (arch_entry.h) on
 * the program's stack: ld.so has mapped and relocated every DT_NEEDED
 * library and run no initializer yet (hookpoint.h).  The loader is still
 * mapped (off its file if the stack stage moved it: detach.h).  Reads the
 * load section (prog, interp, the settings) and traced_fd, ld.so's list of
 * what it loaded, and /proc/self/maps unless that list shows nothing to
 * place (libfind.h); changes nothing in ex
 * but traced_fd (closed).  Every library mapping it changes goes through
 * huge.c, whose copies replace text in one mremap, so that it is never
 * unmapped or half written; a library whose text was changed in memory,
 * or whose file is not the mapped one any more, is left alone.  Says what
 * it did (-v, the lib and libs probes).  Never exits: the final stage
 * follows, called by the driver. */
#include <errno.h>
#include <linux/auxvec.h>

#include "detach.h"
#include "fsfolio.h"
#include "exec.h"
#include "huge.h"
#include "libfind.h"
#include "plandone.h"
#include "probes.h"
#include "proc.h"
#include "report.h"
#include "sys.h"

#define MAPS_MAX (256 * 1024)
#define LIBS_MAX 256

/* /proc/self/maps, whole: in a static buffer, or when it is longer (some
 * 500 libraries) in an anonymous mapping that doubles as needed, which
 * maps_free unmaps before the program starts. */
static char maps_static[MAPS_MAX];

static char *maps_read(uint64_t *cap_out)
{
	char *buf = maps_static;
	uint64_t cap = MAPS_MAX, n = 0;
	int fd = (int)sys_openat(TX_AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);

	*cap_out = cap;
	if (fd < 0)
		return 0;
	for (;;) {
		if (n == cap - 1) {
			long m = sys_mmap(0, cap * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m < 0)
				break; /* the libraries listed so far */
			memcpy((void *)m, buf, n);
			if (buf != maps_static)
				sys_munmap((uint64_t)(uintptr_t)buf, cap);
			buf = (char *)m;
			cap *= 2;
		}
		long got = sys_read(fd, buf + n, (size_t)(cap - 1 - n));
		if (got <= 0)
			break;
		n += (uint64_t)got;
	}
	sys_close(fd);
	buf[n] = '\0';
	*cap_out = cap;
	return buf;
}

static void maps_free(char *buf, uint64_t cap)
{
	if (buf && buf != maps_static)
		sys_munmap((uint64_t)(uintptr_t)buf, cap);
}

/* Whether the mapping's file was unlinked since it was mapped: the kernel
 * then ends its name in maps with " (deleted)". */
static const char deleted[] = " (deleted)";

static int unlinked(const struct lib *b)
{
	size_t n = strlen(b->path), d = sizeof(deleted) - 1;

	return n > d && tx_streq(b->path + n - d, deleted);
}

/* "tiexec: 'PROG': library 'LIB': ", LIB without the " (deleted)". */
static void msg_lib(struct msg *m, const char *prog, const struct lib *b)
{
	msg_head(m, prog);
	msg_str(m, "library '");
	size_t at = m->n;
	msg_str(m, b->path);
	if (unlinked(b) && m->n - at == strlen(b->path))
		m->n -= sizeof(deleted) - 1;
	msg_str(m, "': ");
}

/* Whether the library stage's b was planned (TX_PLAN_*): a target of the
 * plan with its file name (the walk found /lib/..., maps may say
 * /usr/lib/...). */
static int plan_of(const struct exec *ex, const struct lib *b)
{
	int landed = 0;

	for (unsigned k = 0; k < ex->ldp.n; k++) {
		if (!ex->ldp_req[k].target)
			continue;
		int placed = landed++ < ex->ldp_held;
		if (tx_streq(tx_basename(walk_str(&ex->walk, ex->ldp_path[k])), tx_basename(b->path)))
			return placed ? TX_PLAN_PLACED : TX_PLAN_MISSED;
	}
	return TX_PLAN_NONE;
}

/* The lib probe for b: what hr placed (NULL: nothing), why not all, and
 * whether it was planned. */
static void probe_lib(const struct exec *ex, const struct lib *b, const struct huge_result *hr, const char *why)
{
	static const struct huge_result none;
	const char *path = ex->prog.path;
	uint64_t text = b->hi - b->lo;
	long planned = plan_of(ex, b);

	if (!hr)
		hr = &none;
	uint64_t on = hr->text_huge > text ? text : hr->text_huge;
	/* In a register: as a static's field the probe's operand would be
	 * PC-relative ("ex+N(pc)"), which libbpf (1.1) cannot read. */
	__asm__("" : "+r"(path));
	TX_PROBE(lib, path, b->path, text, on, hr->file, hr->thp, hr->hugetlb, why, hr->cache, planned);
	(void)path, (void)text, (void)on, (void)why, (void)planned;
}

static void report_lib(const struct exec *ex, const struct lib *b, const struct huge_result *hr)
{
	const char *prog = ex->prog.path;
	struct msg m;
	uint64_t text = b->hi - b->lo;

	probe_lib(ex, b, hr, hr->nnotes ? hr->notes[0].text : NULL);
	if (!ex->opt.verbose)
		return;
	for (unsigned i = 0; i < hr->nnotes; i++) {
		msg_lib(&m, prog, b);
		msg_str(&m, hr->notes[i].text);
		say(&m);
	}
	msg_lib(&m, prog, b);
	huge_msg(&m, text, hr);
	say(&m);
}

/* A library left as ld.so mapped it: to the lib probe, with why; with -v,
 * why ("what[: errno text]"). */
static int report_skip(const struct exec *ex, const struct lib *b, const char *what, long err)
{
	const char *prog = ex->prog.path;
	struct msg m;

	probe_lib(ex, b, NULL, what);
	if (!ex->opt.verbose)
		return 1;
	msg_lib(&m, prog, b);
	msg_str(&m, "not placed (");
	msg_str(&m, what);
	if (err) {
		msg_str(&m, ": ");
		msg_str(&m, tx_strerror(-err));
	}
	msg_str(&m, ")");
	say(&m);
	return 1;
}

/* Whether the device stat gives is the one /proc/PID/maps shows (the
 * superblock's).  On btrfs stat gives the subvolume's anonymous device
 * (0:32) where maps gives the file system's (0:31): two anonymous devices
 * (major 0) count as the same, the inode deciding. */
static int same_device(const struct statx *st, const struct lib *b)
{
	if (st->stx_dev_major == b->maj && st->stx_dev_minor == b->min)
		return 1;
	return st->stx_dev_major == 0 && b->maj == 0;
}

/* Why the file opened by the mapping's name is not the mapped file, or
 * NULL if it is. */
static const char *not_mapped_file(const struct lib *b, const struct statx *st)
{
	if ((st->stx_mode & S_IFMT) != S_IFREG)
		return "not a regular file";
	if (st->stx_ino != b->ino || !same_device(st, b))
		return "replaced since ld.so mapped it";
	if (b->off >= st->stx_size)
		return "truncated since ld.so mapped it";
	return NULL;
}

/* "tiexec: 'PROG': library 'LIB': cache: why", with -v. */
static void cache_note(const struct exec *ex, const struct lib *b, const char *why)
{
	const char *prog = ex->prog.path;
	struct msg m;

	if (!ex->opt.verbose)
		return;
	msg_lib(&m, prog, b);
	msg_str(&m, "cache: ");
	msg_str(&m, why);
	say(&m);
}

/* The shared text cache's entry for library b (open at fd, identity st,
 * on file system fi) when the page cache cannot give its text 2 MiB
 * folios (textcache.h): its descriptor, and in *eoff the entry's offset
 * for the mapping's file offset; or -1.  The library's base must be
 * 2 MiB-aligned, as ld.so puts a library of 2 MiB or more on Linux 6.1
 * and later. */
static int lib_cache(struct exec *ex, const struct lib *b, int fd, const struct statx *st,
		     const struct fs_info *fi, uint64_t *eoff)
{
	static Elf64_Phdr ph[TEXTCACHE_PH_MAX];
	static uint64_t off[TEXTCACHE_PH_MAX];
	const char *dir = ex->cache_dir;
	char name[TEXTCACHE_NAME_MAX];
	const char *why = NULL;
	Elf64_Ehdr eh;

	if (!dir)
		return -1;
	if (fi->folios != FS_FOLIOS_NO && !((b->lo - b->off) & (TX_HUGE - 1)))
		return -1; /* the page cache does it */
	if (!textcache_name(st, name, sizeof(name)))
		return -1;
	int cfd = textcache_open_with(dir, &ex->cache_trust, name, &why);
	if (cfd < 0) {
		cache_note(ex, b, why ? why : "no entry for this file (tiexec-warm makes one)");
		return -1;
	}
	if (sys_pread(fd, &eh, sizeof(eh), 0) != (long)sizeof(eh) || eh.e_phnum > TEXTCACHE_PH_MAX ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    sys_pread(fd, ph, eh.e_phnum * sizeof(Elf64_Phdr), eh.e_phoff) != (long)(eh.e_phnum * sizeof(Elf64_Phdr))) {
		why = "the library's program headers cannot be read";
	} else if (textcache_layout(cfd, ph, eh.e_phnum, off, &why) == 0) {
		why = "the entry has no text at the mapping's offset";
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X) || tx_down(ph[i].p_offset, TX_PAGE) != b->off)
				continue;
			*eoff = tx_down(off[i], TX_PAGE);
			why = ((b->lo - *eoff) & (TX_HUGE - 1)) ? "ld.so put the library at an address that is not 2 MiB-aligned"
							    : NULL;
			break;
		}
	}
	if (why) {
		cache_note(ex, b, why);
		sys_close(cfd);
		return -1;
	}
	return cfd;
}

/* One library's text mapping, through the same strategies as the
 * program's own text.  The file is opened by the path the mapping names,
 * and used only if it is still the mapped file (device and inode).
 * Returns 1 once the library is reported, placed or left (the libs probe
 * counts them: one lib probe each). */
static int place_lib(struct exec *ex, const struct lib *b, const struct opts *o)
{
	const char *cache_dir = ex->cache_dir;
	struct statx st;
	struct huge_result hr;

	if (huge_text_changed(&ex->huge, b->lo, b->hi))
		return report_skip(ex, b, "its text was changed in memory: text relocations (DT_TEXTREL) or a patch", 0);
	int fd = (int)sys_openat(TX_AT_FDCWD, b->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);

	if (fd < 0 && unlinked(b))
		return report_skip(ex, b, "deleted or replaced since ld.so mapped it", 0);
	if (fd < 0)
		return report_skip(ex, b, "cannot open it", fd);
	long e = sys_statx(fd, "", TX_AT_EMPTY_PATH, STATX_BASIC_STATS, &st);
	const char *why = e < 0 ? "cannot stat it" : not_mapped_file(b, &st);
	if (why) {
		sys_close(fd);
		return report_skip(ex, b, why, e < 0 ? e : 0);
	}
	struct seg g;
	memset(&g, 0, sizeof(g));
	g.vaddr = b->lo;
	g.memsz = b->hi - b->lo;
	g.offset = b->off;
	g.filesz = st.stx_size - b->off < g.memsz ? st.stx_size - b->off : g.memsz;
	g.flags = PF_R | PF_X;
	g.own_lo = b->lo;
	g.own_hi = b->hi;
	uint64_t eoff = 0;
	/* Asked once, for the cache and for huge_apply's page cache attempt;
	 * neither asks without a cache or for another strategy. */
	struct fs_info fi = { FS_FOLIOS_UNKNOWN, 0, "this file system", 0, 0 };
	if (cache_dir || o->strategy == ST_AUTO || o->strategy == ST_FILE)
		fs_folios(fd, &fi);
	int cfd = lib_cache(ex, b, fd, &st, &fi, &eoff);
	struct huge_req req = {
		.state = &ex->huge,
		.fd = fd,
		.name = b->path,
		.o = o,
		.segs = &g,
		.nsegs = 1,
		.lim_lo = b->lo,
		.lim_hi = b->hi,
		.cache_fd = cfd,
		.cache_off = &eoff,
		.fs = fi,
		.xprot = image_fd_exec_prot(fd, ex->aux[AT_HWCAP2]),
	};
	memset(&hr, 0, sizeof(hr));
	huge_apply(&req, &hr);
	if (cfd >= 0)
		sys_close(cfd);
	sys_close(fd);
	report_lib(ex, b, &hr);
	return 1;
}

/* What is not a library: the program, its interpreter, tiexec.  By
 * segment, not by reservation: image_trim gave the alignment slack back,
 * and ld.so's mmap may put a library there. */
static unsigned not_libraries(const struct exec *ex, struct range *r)
{
	const struct image *im[2] = {&ex->prog, &ex->interp};
	unsigned n = 0;

	for (unsigned k = 0; k < 2; k++)
		for (unsigned i = 0; i < im[k]->nsegs; i++) {
			const struct seg *g = &im[k]->segs[i];
			r[n].lo = tx_down(g->vaddr, TX_PAGE);
			r[n++].hi = tx_up(g->vaddr + g->memsz, TX_PAGE);
		}
	r[n].lo = tx_down((uint64_t)(uintptr_t)tx_ehdr_start, TX_PAGE);
	r[n++].hi = tx_up((uint64_t)(uintptr_t)tx_end, TX_PAGE);
	return n;
}

/* Whether ld.so's own list shows no library worth placing (libfind.h).
 * Asked only from the preinit hook, before any initializer could have
 * loaded one in another namespace, and without LD_AUDIT (its modules are
 * not listed). */
static int nothing_listed(const struct exec *ex, const struct opts *o, const struct range *skip, unsigned nskip)
{
	size_t nd = 0;
	const Elf64_Dyn *dyn = image_dynamic(&ex->prog, 0, &nd);

	return ex->hp.kind == HOOK_PREINIT && !ex->ld_audit &&
	       libfind_none_listed(dyn, nd, o->min_text, skip, nskip);
}

void libs_stage(struct exec *ex)
{
	static struct lib libs[LIBS_MAX];
	static struct range skip[2 * MAX_SEGS + 2 + WINDOWS_MAX];
	struct opts o = ex->opt;
	const char *prog = ex->prog.path;

	self_reattach(ex->traced_fd);
	ex->traced_fd = -1;
	struct range win[WINDOWS_MAX];
	uint64_t t0 = now_ns(), reported = 0, cap = 0;
	unsigned nwin = plan_done(ex, win, &reported);
	char *maps = NULL;
	unsigned n = 0;

	o.round_out = 0; /* a library's neighbours are not ours to cover */
	unsigned nskip = not_libraries(ex, skip);
	for (unsigned i = 0; i < nwin; i++)
		skip[nskip++] = win[i];
	if (ex->interp_win.hi > ex->interp_win.lo)
		skip[nskip++] = ex->interp_win; /* on a 2 MiB page already */
	if (!nothing_listed(ex, &o, skip, nskip)) {
		maps = maps_read(&cap);
		if (!maps)
			verbose_note(ex->opt.verbose, prog, "libraries left as ld.so mapped them: /proc/self/maps cannot be read "
					   "(/proc not mounted?)");
		n = libfind(maps, o.min_text, skip, nskip, libs, LIBS_MAX);
	}
	for (unsigned i = 0; i < n; i++)
		reported += (uint64_t)place_lib(ex, &libs[i], &o);
	maps_free(maps, cap);
	__asm__("" : "+r"(prog));
	TX_PROBE(libs, prog, reported, now_ns() - t0);
	(void)t0, (void)reported;
	huge_done(&ex->huge);
}
