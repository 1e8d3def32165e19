/* Reading, validating and mapping an ELF image (see image.h). */
#include "image.h"

#include <errno.h>

#include "proc.h"
#include "report.h"
#include "sys.h"

/* A failed system call of im's: what it was for, into im->err_what; err. */
static long failed(struct image *im, const char *what, long err)
{
	im->err_what = what;
	return err;
}

/* Reads the ELF header and program headers of an open file and validates
 * them; dies with the reason if the file is not a valid ELF file.  Returns
 * 1 if the file is a "#!" script instead (only when scripts_ok). */
long image_read_headers(struct image *im, int is_interp, int scripts_ok)
{
	static unsigned char head[512] TX_HOT;
	long e;

	if ((im->st.stx_mode & S_IFMT) == S_IFDIR)
		return failed(im, NULL, -EISDIR);
	if ((im->st.stx_mode & S_IFMT) != S_IFREG)
		return failed(im, NULL, -EACCES);
	im->size = im->st.stx_size;

	long n = sys_pread(im->fd, head, sizeof(head), 0);
	if (n < 0)
		return failed(im, "cannot read", n);
	if (scripts_ok && n >= 2 && head[0] == '#' && head[1] == '!')
		return 1;
	enum elf_err r = elf_check_ehdr(head, (size_t)n, im->size, &im->eh);
	if (r != ELF_OK)
		die(im->path, elf_err_str(r), NULL, 126);
	size_t phsize = (size_t)im->eh.e_phnum * sizeof(Elf64_Phdr);
	e = sys_pread(im->fd, im->ph, phsize, im->eh.e_phoff);
	if (e < 0)
		return failed(im, "cannot read", e);
	if ((size_t)e != phsize)
		die(im->path, elf_err_str(ELF_TRUNCATED), NULL, 126);
	r = elf_check_phdrs(&im->eh, im->ph, im->size, is_interp, &im->info);
	if (r != ELF_OK)
		die(im->path, elf_err_str(r), NULL, 126);
	return 0;
}

/* A direct exec refuses a file someone has open for writing (ETXTBSY,
 * deny_write_access): it may be half written.  tiexec can tell only by a
 * read lease, which the kernel refuses (EAGAIN) exactly when the file is
 * open for writing, and grants only to the file's owner or a holder of
 * CAP_LEASE; for anyone else (EACCES), or where leases are off (EINVAL),
 * it cannot tell and the program runs.  The lease lasts two system calls;
 * a writer opening the file in between makes the kernel send SIGIO to the
 * holder, so SIGIO is blocked meanwhile and such a signal taken back. */
int image_open_for_writing(int fd)
{
	uint64_t io = 1ULL << (TX_SIGIO - 1), old = 0;
	struct tx_timespec zero = {0, 0};

	SC(__NR_rt_sigprocmask, TX_SIG_BLOCK, &io, &old, 8, 0, 0);
	long e = sys_fcntl(fd, TX_F_SETLEASE, TX_F_RDLCK);
	if (e == 0)
		sys_fcntl(fd, TX_F_SETLEASE, TX_F_UNLCK);
	if (!(old & io))
		SC(__NR_rt_sigtimedwait, &io, 0, &zero, 8, 0, 0);
	SC(__NR_rt_sigprocmask, TX_SIG_SETMASK, &old, 0, 8, 0, 0);
	return e == -EAGAIN;
}

int prot_of(uint32_t f)
{
	return (f & PF_R ? PROT_READ : 0) | (f & PF_W ? PROT_WRITE : 0) | (f & PF_X ? PROT_EXEC : 0);
}

/* PROT_NONE over exactly [at, at + len): at, or a negative errno (-EEXIST
 * where something is mapped there already; also where a kernel took
 * MAP_FIXED_NOREPLACE as a mere hint and put it elsewhere). */
static long reserve_at(uint64_t at, uint64_t len)
{
	long r = sys_mmap(at, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (r >= 0 && (uint64_t)r != at) {
		sys_munmap((uint64_t)r, len);
		r = -EEXIST;
	}
	return r;
}

/* An ET_DYN reservation of no more address space than the kernel takes
 * (total_mapping_size): for an interpreter with no room to gain, and when
 * the padded one does not fit, under `ulimit -v` say.  Like
 * load_elf_binary for a static PIE, it asks for the span anywhere, then
 * moves it down (or else up) to the alignment.  No room is left for 2 MiB
 * alignment. */
static long place_exact(struct image *im, uint64_t align)
{
	uint64_t span = im->info.hi - im->info.lo;
	uint64_t want = (0 - tx_down(im->info.first_vaddr, TX_PAGE)) & (align - 1);
	long r = sys_mmap(0, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r < 0)
		return failed(im, "cannot reserve address space", r);
	uint64_t bias = (uint64_t)r - im->info.lo;
	uint64_t off = (bias - want) & (align - 1);
	if (off) {
		sys_munmap((uint64_t)r, span);
		uint64_t tries[2] = { bias - off, bias - off + align };
		r = -EEXIST;
		for (int i = 0; i < 2 && r < 0; i++) {
			uint64_t at = tries[i] + im->info.lo;
			if (at < tries[i] || at >= TX_USER_TOP || span > TX_USER_TOP - at)
				continue;
			r = reserve_at(at, span);
			bias = tries[i];
		}
		if (r < 0)
			return failed(im, "cannot reserve address space", r);
	}
	im->bias = bias;
	im->res_lo = (uint64_t)r;
	im->res_hi = (uint64_t)r + span;
	return 0;
}

/* Whether no executable segment is 2 MiB long: then none holds a whole
 * 2 MiB piece however it is placed (ld.so's text is some 150 KiB). */
static int text_under_2m(const struct image *im)
{
	for (unsigned i = 0; i < im->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &im->ph[i];
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && p->p_memsz >= TX_HUGE)
			return 0;
	}
	return 1;
}

/* Anchors the bias on the largest text segment: congruent to its file
 * offset for zero-copy huge pages, or starting on a 2 MiB boundary for a
 * copy; with the text cache, a 2 MiB-aligned bias (textcache.h).  The
 * anchor's vaddr into *anchor, what it must be congruent to modulo 2 MiB
 * into *mod.  The segments are laid out unbiased in im->segs, where
 * image_map puts them biased (a copy on the stack would take some 75 KiB
 * of it, each page a fault); returns how many. */
static unsigned text_anchor(struct image *im, int is_interp, enum strategy strategy, int cached, uint64_t *anchor,
			    uint64_t *mod)
{
	unsigned n = layout_segs(im->ph, im->eh.e_phnum, 0, im->size, im->segs, MAX_SEGS);
	int t = layout_main_text(im->segs, n);

	*anchor = *mod = 0;
	if (t >= 0) {
		*anchor = im->segs[t].vaddr;
		*mod = im->segs[t].offset;
		if (!is_interp && (strategy == ST_THP || strategy == ST_HUGETLB)) {
			*anchor = tx_down(*anchor, TX_PAGE);
			*mod = 0;
		} else if (!is_interp && cached) {
			*mod = *anchor;
		}
	}
	return n;
}

/* The bias for the image in a region from the `unit` boundary `region`. */
static uint64_t bias_in(const struct image *im, uint64_t region, uint64_t anchor, uint64_t mod, uint64_t align,
			int is_interp, enum strategy strategy, uint64_t unit)
{
	uint64_t bias = layout_aligned_bias(region, im->info.lo, anchor, mod, align, im->info.first_vaddr, unit);

	if (!is_interp && strategy == ST_OFF && !aslr_off() && align < TX_HUGE) {
		/* No huge pages wanted: a random base as granular as the
		 * alignment allows, as the kernel gives, rather than one
		 * congruent to the file (which would let the kernel PMD-map
		 * cached 2 MiB folios anyway). */
		bias += (random_u64() % (TX_HUGE / align)) * align;
	}
	return bias;
}

/* A program with an interpreter, low: from a 2 MiB boundary above our brk
 * (a random one unless randomisation is off), its span reserved exactly
 * where the bias puts it -- rounded out to 2 MiB for --round-out -- so
 * that no trim gives padding back (a mapping change at every start).
 * 0, or -1 when that range is taken. */
static int place_low(struct image *im, uint64_t anchor, uint64_t mod, uint64_t align, enum strategy strategy,
		     int round_out, uint64_t unit)
{
	uint64_t hint = tx_up((uint64_t)sys_brk(0), unit) + unit;

	if (!aslr_off())
		hint += (random_u64() & ((1ULL << 40) - 1)) & -unit;
	uint64_t bias = bias_in(im, hint, anchor, mod, align, 0, strategy, unit);
	uint64_t lo = im->info.lo + bias, hi = im->info.hi + bias;
	if (round_out)
		lo = tx_down(lo, TX_HUGE), hi = tx_up(hi, TX_HUGE);
	if (lo < hint || hi <= lo || hi > TX_USER_TOP)
		return -1;
	if (reserve_at(lo, hi - lo) < 0)
		return -1;
	im->bias = bias;
	im->res_lo = lo;
	im->res_hi = hi;
	return 0;
}

/* Reserves the address range the image will live in (PROT_NONE), and sets
 * its bias.  Dies when a fixed-address program cannot have its addresses. */
long image_place(struct image *im, int is_interp, enum strategy strategy, int cached, int round_out, uint64_t unit,
		 int verbose)
{
	uint64_t span = im->info.hi - im->info.lo;
	long r;

	if (im->info.type == ET_EXEC) {
		/* Rounded out to 2 MiB when free, so that --round-out has room;
		 * else exactly its span, as the kernel maps it, so that no trim
		 * gives padding back (a mapping change at every start). */
		uint64_t lo = tx_down(im->info.lo, TX_HUGE), hi = tx_up(im->info.hi, TX_HUGE);
		r = round_out ? reserve_at(lo, hi - lo) : -EEXIST;
		if (r < 0) {
			lo = im->info.lo, hi = im->info.hi;
			r = reserve_at(lo, hi - lo);
			if (r == -EPERM || r == -ENOSYS)
				return failed(im, "cannot reserve address space", r); /* refused */
			if (r < 0) {
				struct msg m;
				msg_head(&m, im->path);
				msg_str(&m, "fixed load address ");
				msg_hex(&m, lo);
				msg_str(&m, "-");
				msg_hex(&m, hi);
				msg_str(&m, r == -EEXIST
						    ? " overlaps memory already in use (the loader or the stack)"
						    : ": cannot be mapped (below vm.mmap_min_addr?)");
				die_msg(&m, 126);
			}
		}
		im->bias = 0;
		im->res_lo = lo;
		im->res_hi = hi;
		return 0;
	}

	/* ET_DYN.  Where the kernel would put it: a program with an
	 * interpreter (PIE) low, above the brk of a loader like us, so that
	 * its own brk can follow it; an interpreter or a static PIE in the
	 * mmap region.  The program's first segment on a multiple of its
	 * largest p_align (load_elf_binary: maximum_alignment(); the kernel
	 * does not align an interpreter, load_elf_interp).  In the mmap
	 * region, with room for 2 MiB alignment at both ends, given back once
	 * the bias is known; low, the span at the bias (place_low). */
	uint64_t align = is_interp ? TX_PAGE : im->info.align;
	/* An interpreter whose text holds no 2 MiB piece gains nothing from
	 * room to align it: reserved as load_elf_interp maps it, its span
	 * wherever mmap puts it, which spares the two trims of the padding
	 * (each a mapping change, some 0.05 ms of a start under qemu's TCG
	 * on 6.1). */
	if (is_interp && text_under_2m(im))
		return place_exact(im, align);
	uint64_t anchor, mod;
	unsigned n = text_anchor(im, is_interp, strategy, cached, &anchor, &mod);
	if (is_interp || im->info.interp < 0 || place_low(im, anchor, mod, align, strategy, round_out, unit) < 0) {
		uint64_t room = align > unit ? align : unit;
		uint64_t size = span + room + 2 * TX_HUGE;
		r = sys_mmap(0, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r == -ENOMEM) {
			verbose_note(verbose, im->path, "address space is short: reserved exactly, without room for 2 MiB alignment");
			return place_exact(im, align);
		}
		if (r < 0)
			return failed(im, "cannot reserve address space", r);
		im->bias = bias_in(im, tx_up((uint64_t)r, unit), anchor, mod, align, is_interp, strategy, unit);
		im->res_lo = (uint64_t)r;
		im->res_hi = (uint64_t)r + size;
	}
	if (layout_unordered(im->segs, n))
		verbose_note(verbose, im->path, "segments overlap or are out of order: text left on 4 KiB pages");
	return 0;
}

long image_place_window(struct image *im, uint64_t at)
{
	uint64_t span = im->info.hi - im->info.lo, size = span + at + TX_HUGE;
	long r = sys_mmap(0, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r < 0)
		return failed(im, "cannot reserve address space", r);
	im->bias = tx_up((uint64_t)r, TX_HUGE) + at - im->info.lo;
	im->res_lo = (uint64_t)r;
	im->res_hi = (uint64_t)r + size;
	return 0;
}

/* Maps every PT_LOAD inside the reservation, as the kernel's elf_load()
 * does: file pages, the zeroed tail of the last file page when writable,
 * anonymous pages for the rest of .bss.  Later segments win a shared page. */
long image_map(struct image *im)
{
	for (unsigned i = 0; i < im->eh.e_phnum; i++) {
		const Elf64_Phdr *p = &im->ph[i];
		if (p->p_type != PT_LOAD || p->p_memsz == 0)
			continue;
		int prot = prot_of(p->p_flags) | (p->p_flags & PF_X ? im->xprot : 0);
		uint64_t v = p->p_vaddr + im->bias;
		uint64_t start = tx_down(v, TX_PAGE);
		uint64_t zs = start;
		long r;

		if (p->p_filesz) {
			uint64_t fend = tx_up(v + p->p_filesz, TX_PAGE);
			r = sys_mmap(start, fend - start, prot, MAP_PRIVATE | MAP_FIXED, im->fd,
				     tx_down(p->p_offset, TX_PAGE));
			if (r < 0)
				return failed(im, "cannot map segment", r);
			if (p->p_memsz > p->p_filesz && (prot & PROT_WRITE)) {
				/* Zeroing faults the last file page in.  On a
				 * cold cache that fault reads around it: up to
				 * read_ahead_kb (8 MiB on some disks) centred on
				 * the page, in small folios -- the text before
				 * the data included, ahead of huge.c's
				 * conversion, which then has to evict it while
				 * other starts map it.  The one page is enough;
				 * the kernel's defaults come back after.  Made
				 * at every start: skipping the pair where
				 * mincore said the page was cached let up to 976
				 * of 1,000 simultaneous cold starts as uid 65534
				 * copy their text (scripts/load), for a reason
				 * not yet traced. */
				sys_madvise(start, fend - start, MADV_RANDOM);
				memset((void *)(uintptr_t)(v + p->p_filesz), 0, fend - (v + p->p_filesz));
				sys_madvise(start, fend - start, MADV_NORMAL);
			}
			zs = fend;
		}
		uint64_t ze = tx_up(v + p->p_memsz, TX_PAGE);
		if (ze > zs) {
			/* The kernel's elf_load() gives these pages with
			 * vm_brk_flags(): read-write whatever the segment's
			 * flags, executable when it is.  MemoryDenyWriteExecute
			 * refuses that to mmap (not to the kernel): then without
			 * PROT_EXEC. */
			int zprot = PROT_READ | PROT_WRITE | (prot & (PROT_EXEC | im->xprot));
			r = sys_mmap(zs, ze - zs, zprot, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
			if ((r == -EACCES || r == -EPERM) && (zprot & PROT_EXEC))
				r = sys_mmap(zs, ze - zs, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
			if (r < 0)
				return failed(im, "cannot map segment", r);
		}
	}
	im->nsegs = layout_segs(im->ph, im->eh.e_phnum, im->bias, im->size, im->segs, MAX_SEGS);
	return 0;
}

/* Gives back the reserved address space no segment uses, keeping the
 * rounded-out pieces when --round-out may fill them.  Segments may come in
 * any order (the kernel maps them in table order): the ranges to keep are
 * sorted first. */
void image_trim(struct image *im, int keep_outer)
{
	static struct {
		uint64_t lo, hi;
	} r[MAX_SEGS]; /* pairs: the few a start sorts share a page */
	unsigned n = 0;

	for (unsigned i = 0; i < im->nsegs; i++) {
		const struct seg *s = &im->segs[i];
		uint64_t a = tx_down(s->vaddr, TX_PAGE), b = tx_up(s->vaddr + s->memsz, TX_PAGE);
		if (keep_outer && (s->flags & PF_X) && !(s->flags & PF_W)) {
			uint64_t oa, ob;
			layout_outer(im->segs, im->nsegs, i, im->res_lo, im->res_hi, &oa, &ob);
			if (oa < ob && oa < a)
				a = oa;
			if (oa < ob && ob > b)
				b = ob;
		}
		unsigned j = n++;
		for (; j > 0 && r[j - 1].lo > a; j--)
			r[j] = r[j - 1];
		r[j].lo = a;
		r[j].hi = b;
	}
	uint64_t at = im->res_lo;
	for (unsigned i = 0; i <= n; i++) {
		uint64_t a = i < n ? r[i].lo : im->res_hi, b = i < n ? r[i].hi : im->res_hi;
		if (a > at)
			sys_munmap(at, a - at);
		if (b > at)
			at = b;
	}
}

/* The kernel's open_exec() for a path, before it opens anything
 * (do_open_execat, may_open): a regular file, executable for the effective
 * ids (MAY_EXEC; a noexec mount counts as not executable).  See image.h. */
long image_stat(int fd, struct statx *st)
{
	return sys_statx(fd, "", TX_AT_EMPTY_PATH, STATX_BASIC_STATS, st);
}

long image_open_exec(const char *path, struct statx *st)
{
	long e = sys_statx(TX_AT_FDCWD, path, 0, STATX_TYPE | STATX_MODE, st);

	if (e < 0)
		return e;
	if ((st->stx_mode & S_IFMT) == S_IFDIR)
		return -EISDIR;
	if ((st->stx_mode & S_IFMT) != S_IFREG)
		return -EACCES; /* FIFOs, sockets, devices: never opened */
	e = SC(__NR_faccessat2, TX_AT_FDCWD, path, X_OK, AT_EACCESS, 0, 0);
	if (e == -ENOSYS || e == -EPERM) /* before Linux 5.8, or refused by a filter: real ids */
		e = sys_faccessat(TX_AT_FDCWD, path, X_OK);
	if (e < 0)
		return e;
	/* O_NONBLOCK: if a FIFO was swapped in since the statx, open must
	 * not wait for a writer; the type is checked again on what we got. */
	long fd = sys_openat(TX_AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
	if (fd < 0)
		return fd;
	e = image_stat((int)fd, st);
	if (e == 0 && (st->stx_mode & S_IFMT) != S_IFREG)
		e = (st->stx_mode & S_IFMT) == S_IFDIR ? -EISDIR : -EACCES;
	if (e == 0)
		e = SC(__NR_fcntl, fd, F_SETFL, 0, 0, 0, 0); /* blocking again */
	if (e == -EPERM || e == -ENOSYS)
		e = 0; /* fcntl refused by a filter: no matter for a regular file */
	if (e < 0) {
		sys_close((int)fd);
		return e;
	}
	return fd;
}

void image_interp_path(const struct image *prog, struct image *interp)
{
	const Elf64_Phdr *p = &prog->ph[prog->info.interp];
	char *buf = interp->path_buf;

	if (p->p_filesz > sizeof(interp->path_buf))
		die(prog->path, elf_err_str(ELF_BAD_INTERP), NULL, 126);
	long n = sys_pread(prog->fd, buf, p->p_filesz, p->p_offset);
	if (n != (long)p->p_filesz || elf_check_interp(buf, p->p_filesz) != ELF_OK)
		die(prog->path, elf_err_str(ELF_BAD_INTERP), NULL, 126);
	interp->path = buf; /* up to the first NUL: padding is allowed */
}

long image_open_interp(const struct image *prog, struct image *interp)
{
	if (!interp->path)
		image_interp_path(prog, interp);
	interp->fd = (int)image_open_exec(interp->path, &interp->st);
	if (interp->fd < 0) {
		interp->not_opened = 1;
		return failed(interp, NULL, interp->fd);
	}
	/* ET_EXEC and ET_DYN, and its own PT_INTERP ignored, as in the
	 * kernel's load_elf_interp(). */
	return image_read_headers(interp, 1, 0);
}

void image_die(const struct image *prog, const struct image *im, long err)
{
	struct msg m;

	if (!im->not_opened)
		die_errno(im->path, im->err_what, err);
	msg_head(&m, prog->path);
	msg_str(&m, "interpreter '");
	msg_str(&m, im->path);
	msg_str(&m, "': ");
	msg_str(&m, tx_strerror(-err));
	die_msg(&m, err == -ENOENT ? 127 : 126);
}
