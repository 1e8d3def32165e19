/* Strategies, per 2 MiB piece of text (see README "How it works"):
 *
 *   file     the segment is a private file mapping placed congruent to its
 *            file offset; with MADV_HUGEPAGE set before the first touch the
 *            page cache reads the file in 2 MiB folios and faults map them
 *            with PMDs.  Zero copy, shared by every process.  Pieces whose
 *            cache holds small folios get MADV_COLLAPSE (kernels with
 *            CONFIG_READ_ONLY_THP_FOR_FS) or are evicted and faulted again.
 *            Concurrent starts of one program take turns (flock), so that
 *            one converts the cache and the others map it.
 *   thp      anonymous memory with MADV_HUGEPAGE, filled with pread, made
 *            read+execute and moved over the piece with mremap.  The old
 *            mapping stays until the copy is complete and known to be on huge
 *            pages, so a failure leaves the 4 KiB mapping untouched.
 *   hugetlb  the same from the reserved pool (MAP_HUGETLB).
 *   cache    where the page cache cannot do `file` (the file system keeps
 *            4 KiB folios, or the text is not congruent), the shared text
 *            cache's entry for the file (textcache.h), a tmpfs file held in
 *            2 MiB pages, mapped privately over the pieces: zero copy,
 *            shared by every process, for `auto` and `file`.
 *
 * Copies cover only file-backed text (never zero fill), are left out of
 * core dumps, stay within the memory cgroup's headroom (memlimit.c), and
 * are not attempted at all when the system would refuse them (thpenv.c:
 * THP switches, MemoryDenyWriteExecute); under MemoryDenyWriteExecute a
 * copy is a memfd mapped read+execute where hugetlb or shmem THP allow.
 *
 * PAGEMAP_SCAN (Linux 6.7) tells which pieces really ended up huge. */
#include "huge.h"

#include "arch_cache.h"

#include <errno.h>
#include <linux/fadvise.h>

#include "cacheconv.h"
#include "fsfolio.h"
#include "memlimit.h"
#include "proc.h"
#include "rt.h"
#include "sys.h"
#include "thpenv.h"

/* TX_COMPAT=1 (CCONV_COMPAT_5_10) builds a test-only loader that behaves
 * as on Linux 5.10: no MADV_POPULATE_*, MADV_COLLAPSE or PAGEMAP_SCAN. */
#ifndef TX_COMPAT
#define TX_COMPAT 0
#endif
#define MAX_PIECES CC_MAX_PIECES /* 16 GiB of text per segment; more stays on 4 KiB */
/* A copy's piece kept as a contiguous block without being measured
 * (beside cacheconv.h's CC_PMD and CC_BLOCK): see copy_blocks. */
#define HS_UNMEASURED 3

/* Kernel interfaces newer than Debian 12's uapi headers, or used only here. */
#define TX_MADV_DONTDUMP 16
#define TX_MFD_HUGETLB 4U
#define TX_LOCK_EX 2
#define TX_LOCK_NB 4
#define TX_LOCK_UN 8

void huge_state_init(struct huge_state *st, uint64_t pagesz)
{
	struct cconv init = CCONV_INIT(TX_COMPAT);

	st->pagesz = pagesz;
	st->geom_known = 0;
	st->cc = init;
	thpenv_init(&st->thp, &st->geom);
	st->lock_gave_up = 0;
}

static void geom_once(struct huge_state *st)
{
	if (!st->geom_known) {
		geom_read(&st->geom, st->pagesz);
		st->geom_known = 1;
	}
}

uint64_t huge_unit(struct huge_state *st)
{
	if (TX_PAGE == ARCH_PAGE_SIZE)
		return TX_HUGE;
	geom_once(st);
	return geom_fits(&st->geom) && geom_blocks(&st->geom) ? st->geom.pmd : TX_HUGE;
}

void huge_done(struct huge_state *st)
{
	cconv_close(&st->cc);
}

int huge_text_changed(struct huge_state *st, uint64_t lo, uint64_t hi)
{
	return cconv_changed(&st->cc, lo, hi);
}

static void note(struct huge_result *res, const char *why)
{
	for (unsigned i = 0; i < res->nnotes; i++)
		if (res->notes[i] == why)
			return;
	if (res->nnotes < HUGE_MAX_NOTES)
		res->notes[res->nnotes++] = why;
}

/* Marks in hs[] the 2 MiB pieces of [a, b) that are mapped by huge pages.
 * Returns 0, or -1 when the kernel cannot tell. */
static int scan_huge(struct cconv *cc, uint64_t a, uint64_t b, uint8_t *hs)
{
	return cconv_scan(cc, a, b, hs);
}

static long populate(struct cconv *cc, uint64_t a, uint64_t len, int write)
{
	return cconv_populate(cc, a, len, write);
}

static long pread_full(int fd, uint8_t *dst, uint64_t n, uint64_t off)
{
	while (n) {
		long got = sys_pread(fd, dst, n > (1UL << 30) ? (1UL << 30) : n, off);
		if (got == -EINTR)
			continue;
		if (got < 0)
			return got;
		if (got == 0)
			break; /* past the end of the file: the rest reads as zero */
		dst += got;
		off += (uint64_t)got;
		n -= (uint64_t)got;
	}
	return 0;
}

/* Fills dst with what the program's normal mapping holds at [a, b): file
 * bytes of every segment page in range (later segments win a shared page,
 * as they do in the kernel's mapping), zero elsewhere.  dst is zeroed. */
static long fill(const struct huge_req *r, uint8_t *dst, uint64_t a, uint64_t b)
{
	for (unsigned j = 0; j < r->nsegs; j++) {
		const struct seg *s = &r->segs[j];
		if (!s->filesz)
			continue;
		uint64_t lo = tx_down(s->vaddr, TX_PAGE), hi = tx_up(s->vaddr + s->filesz, TX_PAGE);
		if (lo < a)
			lo = a;
		if (hi > b)
			hi = b;
		if (lo >= hi)
			continue;
		long e = pread_full(r->fd, dst + (lo - a), hi - lo, s->offset + (lo - s->vaddr));
		if (e < 0)
			return e;
	}
	return 0;
}

/* "[anon:tiexec:NAME]" in /proc/PID/maps; the kernel refuses some characters. */
static void name_region(uint64_t a, uint64_t len, const char *name)
{
	char b[80];
	size_t n = 0;

	for (const char *p = "tiexec:"; *p; p++)
		b[n++] = *p;
	for (const char *p = name; *p && n < sizeof(b) - 1; p++) {
		char c = *p;
		b[n++] = (c < ' ' || c > '~' || c == '[' || c == ']' || c == '\\' || c == '$' || c == '`')
				 ? '?'
				 : c;
	}
	b[n] = '\0';
	sys_prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, a, len, (unsigned long)b);
}

/* The bytes of [a, b) inside executable segments. */
static uint64_t text_in(const struct huge_req *r, uint64_t a, uint64_t b)
{
	uint64_t n = 0;

	for (unsigned j = 0; j < r->nsegs; j++) {
		const struct seg *s = &r->segs[j];
		if (!(s->flags & PF_X))
			continue;
		uint64_t lo = s->vaddr > a ? s->vaddr : a;
		uint64_t hi = s->vaddr + s->memsz < b ? s->vaddr + s->memsz : b;
		if (lo < hi)
			n += hi - lo;
	}
	return n;
}

static void account(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t b,
		    uint64_t *bucket)
{
	*bucket += b - a;
	res->text_huge += text_in(r, a, b);
}

/* What account counted of [a, b) (indexed from a0 in hs) that is in
 * contiguous blocks rather than on PMDs, measured or not (CC_BLOCK,
 * HS_UNMEASURED). */
static void account_blocks(const struct huge_req *r, struct huge_result *res, uint64_t a0, uint64_t a,
			   uint64_t b, const uint8_t *hs)
{
	for (uint64_t x = a; x < b; x += TX_HUGE) {
		uint8_t h = hs[(x - a0) / TX_HUGE];
		if (h == CC_BLOCK)
			res->text_blocks += text_in(r, x, x + TX_HUGE);
		else if (h == HS_UNMEASURED)
			res->text_unmeasured += text_in(r, x, x + TX_HUGE);
	}
}

/* How a copy becomes executable.  Normally the copy is anonymous memory,
 * filled, then mprotect'ed to read+execute.  Under MemoryDenyWriteExecute
 * that mprotect is refused, but mapping a file read+execute is not: the
 * copy is then a memfd (hugetlb, or shmem where shmem THP is allowed),
 * filled through one mapping and mapped again read+execute. */
enum copy_route { ROUTE_MPROTECT, ROUTE_MEMFD };

struct copy_buf {
	uint64_t w, x; /* the writable view, and the one moved into place */
	int fd;        /* the memfd, or -1 */
};

/* len bytes of address space congruent to `at` modulo the PMD (at a 2 MiB
 * boundary where a PMD is 2 MiB), PROT_NONE; 0 if none.  Congruent, the
 * copy's whole PMD pieces are where the text's are, and mremap moves them
 * whole (move_huge_pmd). */
static uint64_t reserve_aligned(const struct geom *g, uint64_t at, uint64_t len)
{
	uint64_t pad = g->pmd > TX_HUGE ? g->pmd : TX_HUGE;
	long raw = sys_mmap(0, len + pad, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (raw < 0)
		return 0;
	uint64_t t = (uint64_t)raw + ((at - (uint64_t)raw) & (pad - 1));
	if (t > (uint64_t)raw)
		sys_munmap((uint64_t)raw, t - (uint64_t)raw);
	if ((uint64_t)raw + pad > t)
		sys_munmap(t + len, (uint64_t)raw + pad - t);
	return t;
}

/* Where a piece is a contiguous block (geom_blocks): marks in hs[] the
 * pieces of [lo, hi), faulted in, not on PMDs that are blocks; where that
 * cannot be measured (not root: no frame numbers), every such piece
 * HS_UNMEASURED when `likely`: when what backs it comes in folios of 2 MiB
 * or more (anonymous THP's settings allow them, the text cache's tmpfs). */
static void mark_blocks(const struct huge_req *r, uint64_t lo, uint64_t hi, uint8_t *hs, int likely)
{
	if (cconv_blocks(&r->state->cc, lo, hi, hs, 0) == 0 || !likely)
		return;
	for (uint64_t k = 0; k < (hi - lo) / TX_HUGE; k++)
		if (!hs[k])
			hs[k] = HS_UNMEASURED;
}

/* why, when one of the n pieces in hs is HS_UNMEASURED. */
static void note_unmeasured(struct huge_result *res, const uint8_t *hs, uint64_t n, const char *why)
{
	for (uint64_t k = 0; k < n; k++)
		if (hs[k] == HS_UNMEASURED) {
			note(res, why);
			return;
		}
}

/* The same for a copy at [w, w + len). */
static void copy_blocks(const struct huge_req *r, uint64_t w, uint64_t len, uint8_t *hs)
{
	struct huge_state *st = r->state;

	if (geom_blocks(&st->geom) && !thpenv_block_off(&st->thp))
		mark_blocks(r, w, w + len, hs, 1);
}

/* Maps len bytes of memory for a copy at cb->w, read+write, faulted in,
 * and marks in hs[] the 2 MiB pieces that are huge. */
static const char *copy_alloc(const struct huge_req *r, struct copy_buf *cb, uint64_t a, uint64_t len, int hugetlb,
			      enum copy_route route, uint8_t *hs)
{
	const char *no_mem = hugetlb ? "hugetlb: not enough free pages in the reserved pool (vm.nr_hugepages)"
				     : "thp: cannot allocate memory for the copy";
	long m;

	cb->fd = -1;
	cb->w = cb->x = reserve_aligned(&r->state->geom, a, len);
	if (!cb->w)
		return no_mem;
	if (route == ROUTE_MEMFD) {
		cb->fd = (int)sys_memfd_create("tiexec", TX_MFD_CLOEXEC | (hugetlb ? TX_MFD_HUGETLB | (unsigned)geom_hugetlb_flag(&r->state->geom) : 0));
		if (cb->fd < 0 || SC(__NR_ftruncate, cb->fd, len, 0, 0, 0, 0) < 0)
			return no_mem;
		m = sys_mmap(cb->w, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, cb->fd, 0);
	} else if (hugetlb) {
		m = sys_mmap(cb->w, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_HUGETLB | (long)geom_hugetlb_flag(&r->state->geom), -1, 0);
	} else {
		m = sys_mmap(cb->w, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	}
	if (m < 0)
		return no_mem;
	if (hugetlb) {
		memset(hs, 1, len / TX_HUGE);
		return populate(&r->state->cc, cb->w, len, 1) < 0 ? no_mem : NULL;
	}
	if (sys_madvise(cb->w, len, MADV_HUGEPAGE) < 0 || populate(&r->state->cc, cb->w, len, 1) < 0 ||
	    scan_huge(&r->state->cc, cb->w, cb->w + len, hs) < 0)
		return "thp: cannot fault in or verify huge pages for the copy";
	copy_blocks(r, cb->w, len, hs);
	return NULL;
}

/* Makes the filled copy read+execute at cb->x. */
static long copy_seal(const struct huge_req *r, struct copy_buf *cb, uint64_t a, uint64_t len, int hugetlb, uint8_t *hs)
{
	struct cconv *cc = &r->state->cc;
	int xprot = r->xprot;

	if (cb->fd < 0)
		return sys_mprotect(cb->x, len, PROT_READ | PROT_EXEC | xprot);
	uint64_t x = reserve_aligned(&r->state->geom, a, len);
	if (!x)
		return -ENOMEM;
	long m = sys_mmap(x, len, PROT_READ | PROT_EXEC | xprot, MAP_SHARED | MAP_FIXED, cb->fd, 0);
	if (m < 0) {
		sys_munmap(x, len);
		return m;
	}
	sys_munmap(cb->w, len);
	cb->w = cb->x = x;
	if (hugetlb)
		return 0;
	/* Our own second view of the same folios: PMD-mapped when huge. */
	static uint8_t hx[MAX_PIECES];
	if (populate(cc, x, len, 0) < 0 || scan_huge(cc, x, x + len, hx) < 0)
		return -EFAULT;
	copy_blocks(r, x, len, hx);
	for (uint64_t k = 0; k < len / TX_HUGE; k++)
		hs[k] = hs[k] && hx[k] ? hx[k] : 0;
	return 0;
}

/* Copies [a, b), pieces none of which is huge yet, into huge pages and
 * moves them into place; marks in state[] (indexed from a) the ones that
 * made it.  The 4 KiB mapping of a piece is replaced only by a complete,
 * verified copy.  Returns -1 when copying should stop. */
static int copy_chunk(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t b,
		      uint8_t *state, uint8_t *hs, int hugetlb, enum copy_route route)
{
	uint64_t len = b - a;
	struct copy_buf cb;
	int missed = 0, ret = 0;
	const char *why = copy_alloc(r, &cb, a, len, hugetlb, route, hs);

	if (why) {
		note(res, why);
		ret = -1;
		goto out;
	}
	/* Fill the huge pieces. */
	for (uint64_t x = a; x < b; x += TX_HUGE) {
		uint64_t k = (x - a) / TX_HUGE;
		missed |= !hs[k];
		if (hs[k] && fill(r, (uint8_t *)(uintptr_t)(cb.w + (x - a)), x, x + TX_HUGE) < 0) {
			note(res, "copy: cannot read the program file");
			ret = -1;
			goto out;
		}
	}
	/* The copy was written through cb.w: coherent before it runs
	 * (arch_cache.h). */
	arch_sync_icache(cb.w, len);
	if (copy_seal(r, &cb, a, len, hugetlb, hs) < 0) {
		note(res, "copy: cannot make the copy executable");
		ret = -1;
		goto out;
	}
	/* A direct exec's text is file-backed and left out of core dumps
	 * (coredump_filter's default 0x33 has no bit 2); so is its copy.
	 * The flag moves with the pages in mremap. */
	sys_madvise(cb.x, len, TX_MADV_DONTDUMP);
	if (!hugetlb && cb.fd < 0)
		name_region(cb.x, len, r->name);

	/* Move runs of huge pieces over the 4 KiB mapping. */
	for (uint64_t x = a; x < b;) {
		if (!hs[(x - a) / TX_HUGE]) {
			x += TX_HUGE;
			continue;
		}
		uint64_t y = x;
		while (y < b && hs[(y - a) / TX_HUGE])
			y += TX_HUGE;
		long m = SC(__NR_mremap, cb.x + (x - a), y - x, y - x, MREMAP_MAYMOVE | MREMAP_FIXED, x, 0);
		if (m < 0) {
			note(res, hugetlb ? "hugetlb: cannot move the copy into place (mremap)"
					  : "thp: cannot move the copy into place (mremap)");
			ret = -1;
			break;
		}
		for (uint64_t p = x; p < y; p += TX_HUGE)
			state[(p - a) / TX_HUGE] = 1;
		account(r, res, x, y, hugetlb ? &res->hugetlb : &res->thp);
		account_blocks(r, res, a, x, y, hs);
		x = y;
	}
	if (missed && !hugetlb)
		note(res, "thp: the kernel gave small pages for part of the copy (memory fragmented?)");
	note_unmeasured(res, hs, len / TX_HUGE, "thp: whether the 2 MiB blocks are contiguous is not measured (it takes root: /proc/kpageflags)");
out:
	/* What was not moved is still in the temporary region. */
	if (cb.x)
		for (uint64_t x = a; x < b; x += TX_HUGE)
			if (!state[(x - a) / TX_HUGE])
				sys_munmap(cb.x + (x - a), TX_HUGE);
	if (cb.w != cb.x)
		sys_munmap(cb.w, len);
	if (cb.fd >= 0)
		sys_close(cb.fd);
	return ret;
}

/* Where memory is short, copies are made and checked a chunk at a time, so
 * that the limit is looked at again as the copy grows (the copy's pread
 * also charges the file's page cache to our cgroup). */
#define COPY_CHUNK (32UL << 20)
/* What copies leave free below the tightest limit.  The program still has
 * to start after us (heap, stack, its libraries' data and relocations: tens
 * of MiB for large programs), and the kernel cannot reclaim anonymous
 * copies without swap, while the 4 KiB file-backed text they would replace
 * is reclaimable cache.  The usage figures count reclaimable cache too, so
 * the true room is usually larger: the margin errs on the side of 4 KiB. */
#define COPY_MARGIN (64UL << 20)

static const char *const limit_note[] = {
	[ML_NONE] = "thp: no memory left for copies",
	[ML_CGROUP_V1] = "thp: the memory cgroup's limit (memory.limit_in_bytes) leaves no room for more copies",
	[ML_CGROUP_V2] = "thp: the memory cgroup's limit (memory.max) leaves no room for more copies",
	[ML_AVAILABLE] = "thp: too little memory available (MemAvailable) for more copies",
};

/* Why the copy strategy cannot work here at all, or NULL and how copies
 * become executable.  Checked before any memory is taken. */
static const char *copy_refused(struct thpenv *t, int hugetlb, enum copy_route *route)
{
	const char *off = hugetlb ? NULL : thpenv_thp_off(t);

	/* Pieces that are contiguous blocks need only 2 MiB folios. */
	if (off && geom_blocks(t->geom) && !thpenv_block_off(t))
		off = NULL;
	enum exec_refusal ex = thpenv_exec_refusal(t);

	*route = ROUTE_MPROTECT;
	if (off)
		return off;
	if (ex == EXEC_OK)
		return NULL;
	*route = ROUTE_MEMFD;
	if (hugetlb || thpenv_shmem_thp(t))
		return NULL;
	return ex == EXEC_MDWE_PRCTL
		       ? "thp: MemoryDenyWriteExecute (prctl PR_SET_MDWE) forbids executable copies, and shmem THP is off (transparent_hugepage/shmem_enabled)"
		       : "thp: MemoryDenyWriteExecute (a seccomp filter or security module) forbids executable copies, and shmem THP is off (transparent_hugepage/shmem_enabled)";
}

/* How much of a run of `want` bytes of copies memory allows now, in 2 MiB
 * pieces: all of it, or a chunk where memory is short, or 0 (said in res).
 * hugetlb pages come from the reserved pool, which is outside both
 * MemAvailable and (by default) memory cgroups. */
static uint64_t copy_room(struct huge_result *res, uint64_t want, int hugetlb)
{
	struct memlimit ml;

	if (hugetlb)
		return want;
	memlimit_room(&ml);
	uint64_t room = ml.room > COPY_MARGIN ? tx_down(ml.room - COPY_MARGIN, TX_HUGE) : 0;
	/* Room for the copy and the page cache it reads: one piece of work,
	 * one mapping.  Else in steps. */
	if (room / 2 < want && want > COPY_CHUNK)
		want = COPY_CHUNK;
	if (want > room)
		want = room;
	if (!want)
		note(res, limit_note[ml.by]);
	return want;
}

/* Where pieces are contiguous blocks but the THP settings give no 2 MiB
 * folios (thpenv_block_off): copies of whole PMD pieces only, each aligned
 * PMD of [a, b) that holds no placed piece; the rest stays on base pages,
 * and the note says why. */
static void copy_pmds(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t b,
		      uint8_t *state, uint8_t *hs, enum copy_route route)
{
	uint64_t pmd = r->state->geom.pmd, n = pmd / TX_HUGE;
	int left = 0;

	for (uint64_t k = 0; k < (b - a) / TX_HUGE; k++)
		left |= !state[k];
	for (uint64_t w = tx_up(a, pmd); w + pmd <= b; w += pmd) {
		uint8_t *st = state + (w - a) / TX_HUGE;
		int free = 1;
		for (uint64_t k = 0; k < n; k++)
			free &= !st[k];
		if (!free)
			continue;
		if (copy_room(res, pmd, 0) < pmd || copy_chunk(r, res, w, w + pmd, st, hs, 0, route) < 0)
			return;
	}
	for (uint64_t k = 0; left && k < (b - a) / TX_HUGE; k++)
		if (!state[k]) {
			note(res, thpenv_block_off(&r->state->thp));
			break;
		}
}

/* Copies the pieces [a, b) whose state is 0, in chunks of consecutive such
 * pieces, while memory allows. */
static void copy_pieces(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t b,
			uint8_t *state, uint8_t *hs, int hugetlb)
{
	enum copy_route route;
	const char *no = copy_refused(&r->state->thp, hugetlb, &route);

	if (no) {
		note(res, no);
		return;
	}
	if (geom_blocks(&r->state->geom) && thpenv_block_off(&r->state->thp)) {
		copy_pmds(r, res, a, b, state, hs, route);
		return;
	}
	for (uint64_t x = a; x < b;) {
		if (state[(x - a) / TX_HUGE]) {
			x += TX_HUGE;
			continue;
		}
		uint64_t y = x;
		while (y < b && !state[(y - a) / TX_HUGE])
			y += TX_HUGE;
		uint64_t room = copy_room(res, y - x, hugetlb);
		if (!room)
			return;
		y = x + room;
		if (copy_chunk(r, res, x, y, state + (x - a) / TX_HUGE, hs, hugetlb, route) < 0)
			return;
		x = y;
	}
}

/* The pieces of [a, a + n * 2 MiB) that hs says are huge and state does
 * not hold yet: taken into state and counted into *bucket.  Returns
 * whether any piece is left small. */
static int take_huge(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t n,
		     const uint8_t *hs, uint8_t *state, uint64_t *bucket)
{
	int small = 0;

	for (uint64_t k = 0; k < n; k++) {
		if (!state[k] && hs[k]) {
			state[k] = 1;
			account(r, res, a + k * TX_HUGE, a + (k + 1) * TX_HUGE, bucket);
			account_blocks(r, res, a, a + k * TX_HUGE, a + (k + 1) * TX_HUGE, hs);
		}
		small |= !state[k];
	}
	return small;
}

/* Whether the entry mapped over the pieces of [a, a + n * 2 MiB) that
 * state does not hold yet is still in 2 MiB pages, asked of one of them:
 * hs then says so for all of them, and the others are left to fault on
 * first touch.  tiexec-warm wrote the entry in 2 MiB pages and --check
 * looks at all of it; what splits a tmpfs huge page (swapping it out)
 * splits it piece by piece, so a start that finds this piece split
 * faults in and checks every piece instead.  Faulting all of a 62 MiB
 * entry in and checking it took 1.1 to 2 ms of a 5.7 to 7 ms start
 * under qemu's TCG (5.10, 6.1), and counted all of it in the process's
 * RSS, which the OOM killer weighs, where a direct start counts the pages
 * it touched.  (Asking the page cache the same way, when all of the text
 * was cached, made 1,000 simultaneous cold starts as uid 65534 copy their
 * text in up to 658 of them, scripts/load: not done.  The page cache's
 * pieces come back small one by one -- after a storm of direct starts,
 * the last piece, next to the data segment -- and instances that asked
 * another piece then map the small folios, which no later start can
 * evict.) */
static int entry_holds(struct cconv *cc, uint64_t a, uint64_t n, uint8_t *hs, const uint8_t *state)
{
	uint64_t k = 0;

	while (k < n && state[k])
		k++;
	/* Asked as of a file (shmem 0): PAGEMAP_SCAN, else the last-page
	 * rule; not MADV_COLLAPSE, which would collapse a split piece (a
	 * 2 MiB page charged to this process's cgroup), and whose first call
	 * in a process took 0.4 ms under TCG on 6.1 (later ones 20 us). */
	if (k == n || cconv_fault(cc, a + k * TX_HUGE, a + (k + 1) * TX_HUGE, hs, 0) < 0 || !hs[0])
		return 0;
	memset(hs, 1, n);
	return 1;
}

/* The shared text cache on segment s's 2 MiB-aligned pieces [a, b) that
 * are not huge yet: the entry (at eoff for the segment's p_offset) mapped
 * over each run of them, then faulted in and checked. */
static void cache_pieces(const struct huge_req *r, struct huge_result *res, const struct seg *s,
			 uint64_t eoff, uint64_t a, uint64_t b, uint8_t *state, uint8_t *hs)
{
	uint64_t n = (b - a) / TX_HUGE;

	if ((eoff + (a - s->vaddr)) & (TX_HUGE - 1)) {
		note(res, "cache: the text is not placed congruent to the cache's entry");
		return;
	}
	for (uint64_t k = 0; k < n;) {
		uint64_t j = k;
		while (j < n && !state[j])
			j++;
		if (j > k) {
			uint64_t x = a + k * TX_HUGE, len = (j - k) * TX_HUGE;
			long m = sys_mmap(x, len, PROT_READ | PROT_EXEC | r->xprot, MAP_PRIVATE | MAP_FIXED, r->cache_fd,
					  eoff + (x - s->vaddr));
			if (m != (long)x) {
				/* MAP_FIXED failing leaves the range unmapped: the
				 * file's own pages back, or nothing runs. */
				sys_mmap(x, len, PROT_READ | PROT_EXEC | r->xprot, MAP_PRIVATE | MAP_FIXED, r->fd,
					 s->offset + (x - s->vaddr));
				note(res, "cache: the entry cannot be mapped");
				return;
			}
		}
		while (j < n && state[j])
			j++;
		k = j;
	}
	if (r->o->lazy) {
		for (uint64_t k = 0; k < n; k++)
			if (!state[k]) {
				state[k] = 1;
				res->lazy += TX_HUGE;
			}
		return;
	}
	/* Where pieces are contiguous blocks one piece says nothing of the
	 * others (a PMD, or a block of a PTE-mapped 32 MiB folio): all are
	 * faulted in and measured. */
	int blocks = geom_blocks(&r->state->geom);
	if (!blocks && entry_holds(&r->state->cc, a, n, hs, state)) {
		take_huge(r, res, a, n, hs, state, &res->cache);
		return;
	}
	if (cconv_fault(&r->state->cc, a, b, hs, 1) < 0) {
		note(res, "cache: cannot fault in or verify the text");
		return;
	}
	if (blocks) {
		mark_blocks(r, a, b, hs, 1);
		note_unmeasured(res, hs, n, "cache: whether the 2 MiB blocks are contiguous is not measured (it takes root: /proc/kpageflags)");
	}
	if (take_huge(r, res, a, n, hs, state, &res->cache))
		note(res, "cache: part of the entry is not in 2 MiB pages (is the cache mounted huge=always?)");
}

/* The zero-copy attempt on segment s's 2 MiB-aligned pieces [a, b). */
static void file_pieces(const struct huge_req *r, struct huge_result *res, const struct seg *s,
			uint64_t a, uint64_t b, uint8_t *state, uint8_t *hs, int shared, int overlay)
{
	uint64_t n = (b - a) / TX_HUGE;

	if (r->o->lazy) {
		res->lazy += b - a;
		memset(state, 1, n);
		return;
	}
	/* Dirty pages are written back first: the program's own file,
	 * just linked, is worth its text on 2 MiB pages. */
	struct cconv_range cr = { r->fd, a, b, s->offset + (a - s->vaddr), NULL,
				  overlay ? CC_WRITEBACK_FSYNC : CC_WRITEBACK_RANGE, shared };
	struct cconv_stats cs = { 0, 0 };
	if (cconv_convert(&r->state->cc, &cr, hs, &cs) < 0) {
		note(res, sys_faccessat(TX_AT_FDCWD, "/proc/self", 0) < 0
				  ? "file: /proc is not mounted here (a chroot?): which pages are huge cannot be checked"
				  : "file: cannot fault in or verify the text");
		return;
	}
	if (take_huge(r, res, a, n, hs, state, &res->file))
		note(res, "file: the page cache kept small pages for part of the text (in use elsewhere, or no large folios on this filesystem)");
}

/* "file: NAME keeps 4 KiB folios in the page cache on Linux X.Y: nothing
 * evicted or read again", in a buffer of its own: the notes are reported
 * before the next file's. */
static const char *fs_folios_note(const struct fs_info *fi)
{
	static struct msg m;

	m.n = 0;
	msg_str(&m, "file: ");
	msg_str(&m, fi->name);
	char pg[24];
	msg_str(&m, " keeps ");
	msg_str(&m, geom_size(TX_PAGE, pg, sizeof(pg)));
	msg_str(&m, " folios in the page cache on Linux ");
	msg_u64(&m, fi->major);
	msg_str(&m, ".");
	msg_u64(&m, fi->minor);
	msg_str(&m, ": nothing evicted or read again");
	m.b[m.n < sizeof(m.b) ? m.n : sizeof(m.b) - 1] = '\0';
	return m.b;
}

/* ---- cooperation between starts of the same program ----
 *
 * Processes starting the same program at once after its cache was dropped
 * would each fault it in: the first faults read 2 MiB folios (MADV_HUGEPAGE
 * is set), but the readers race, small folios mapped by one process cannot
 * be evicted by another (POSIX_FADV_DONTNEED skips mapped pages), and each
 * falls back to a private copy: 20 starts of a 64 MiB program copied 58 MiB
 * each.  So the file stage runs under flock(LOCK_EX) on the program's
 * descriptor (flock needs only read access): one process converts the
 * cache, the others wait, then find 2 MiB folios and map them with PMDs.
 *
 * The wait is bounded, because a program may flock its own binary (one
 * instance at a time, say) for as long as it runs: we wait only while the
 * holder visibly reads the text into the cache (the first page of a
 * 2 MiB piece turns resident, by mincore), at most CONVERT_STALL_NS
 * without progress and CONVERT_WAIT_NS in all, then go on without the lock
 * (the cache may then stay in small folios, and auto copies).
 * 2 s reads about 256 MiB from a slow (~150 MB/s) disk; a holder that
 * reads nothing for 50 ms is not converting (a 2 MiB read takes a few ms
 * even from such a disk) -- or is merely starved of CPU: with 1,000 starts
 * on 2 cores the holder waited 70-300 ms to run, and hundreds gave up.
 * So a start that gives up must not get in the holder's way: it converts
 * "shared" (cacheconv.h), reading only absent pieces, in 2 MiB, mapping
 * what is huge, evicting nothing and leaving small folios unmapped.  When
 * it did evict and fault the text in, the holder's eviction failed on
 * the pages the others mapped, and all of them queued on the kernel's
 * global lru_add_drain_all lock (POSIX_FADV_DONTNEED with mapped pages):
 * 1,000 starts took 10 s and each copied.  What remains: a start that
 * gives up waiting may still take a private copy of pieces not converted
 * yet, and a self-locking program costs each later start up to 50 ms. */
#define CONVERT_POLL_NS 5000000ULL
#define CONVERT_STALL_NS 50000000ULL
#define CONVERT_WAIT_NS 2000000000ULL

/* How many 2 MiB pieces of our mapping [a, b) of the file have their first
 * page in the page cache (mincore sees the cache for file mappings, faulted
 * in or not). */
static uint64_t resident_pieces(uint64_t a, uint64_t b)
{
	uint64_t n = 0;
	unsigned char v;

	for (uint64_t p = a; p < b; p += TX_HUGE)
		if (SC(__NR_mincore, p, TX_PAGE, &v, 0, 0, 0) == 0 && (v & 1))
			n++;
	return n;
}

/* Takes the conversion lock on fd, waiting as described above.  Returns 1
 * when held (release with convert_unlock), 0 when there is no lock to take
 * (flock unsupported here), -1 when another process holds it and we go on
 * without it. */
static int convert_lock(int fd, uint64_t a, uint64_t b, int *gave_up)
{
	long e = SC(__NR_flock, fd, TX_LOCK_EX | TX_LOCK_NB, 0, 0, 0, 0);

	if (e == 0)
		return 1;
	if (e != -EWOULDBLOCK)
		return 0; /* no flock on this filesystem */
	if (*gave_up)
		return -1; /* waited already */
	uint64_t t0 = now_ns(), seen = t0, had = resident_pieces(a, b);
	for (;;) {
		struct tx_timespec d = { 0, (long)CONVERT_POLL_NS };
		SC(__NR_nanosleep, &d, 0, 0, 0, 0, 0);
		if (SC(__NR_flock, fd, TX_LOCK_EX | TX_LOCK_NB, 0, 0, 0, 0) == 0)
			return 1;
		uint64_t now = now_ns(), has = resident_pieces(a, b);
		if (has != had)
			had = has, seen = now;
		if (now - seen > CONVERT_STALL_NS || now - t0 > CONVERT_WAIT_NS)
			break;
	}
	*gave_up = 1;
	return -1;
}

/* Before the program starts: the lock belongs to the open file, which the
 * program may inherit (AT_EXECFD). */
static void convert_unlock(int fd)
{
	SC(__NR_flock, fd, TX_LOCK_UN, 0, 0, 0, 0);
}

void huge_apply(const struct huge_req *r, struct huge_result *res)
{
	/* Per piece of a segment: whether it is placed (state), and what a
	 * check found huge (hs, for the pieces being placed).  One buffer,
	 * hs right after the segment's state: a start, which uses the first
	 * few bytes of each, touches one page of it, not two (each page a
	 * fault and a zeroed page, see TX_HOT). */
	static uint8_t pieces[2 * MAX_PIECES];
	enum strategy st = r->o->strategy;

	geom_once(r->state);
	if (!geom_fits(&r->state->geom)) {
		note(res, "the kernel's page sizes are not the ones this build places text for (tiexec-stat --advise)");
		return;
	}
	res->pmd = r->state->geom.pmd;
	int blocks = geom_blocks(&r->state->geom);
	if (blocks && st == ST_HUGETLB) {
		/* Contiguous blocks come from copies and the text cache, so
		 * far: the page cache's large folios (below) and hugetlb's
		 * 2 MiB pages are not placed or measured as blocks yet. */
		note(res, "hugetlb: not built for 16 and 64 KiB pages yet (--strategy=thp or auto copies)");
		return;
	}

	for (unsigned i = 0; i < r->nsegs; i++) {
		struct seg *s = &r->segs[i];
		uint64_t a, b, oa, ob;

		if (!(s->flags & PF_X))
			continue;
		if (s->flags & PF_W) {
			note(res, "writable text is left on 4 KiB pages");
			continue;
		}
		layout_inner(s, &a, &b);
		if (r->o->round_out)
			layout_outer(r->segs, r->nsegs, i, r->lim_lo, r->lim_hi, &oa, &ob);
		else
			oa = a, ob = b;
		/* Only file-backed text is worth huge pages: what lies past
		 * p_filesz is zero fill, which the kernel leaves untouched
		 * until used.  Copying it would let a file of a few bytes make
		 * us allocate up to p_memsz (a 1 GiB zero-fill cost 1 GiB of
		 * RSS); it stays ordinary anonymous memory. */
		uint64_t fend = tx_up(s->vaddr + s->filesz, TX_PAGE);
		if (fend > s->own_hi)
			fend = s->own_hi;
		if (b > tx_down(fend, TX_HUGE))
			b = tx_down(fend, TX_HUGE);
		if (ob > tx_up(fend, TX_HUGE))
			ob = tx_up(fend, TX_HUGE);
		if (oa >= ob)
			continue;
		if (a >= b)
			a = b = oa;
		if ((ob - oa) / TX_HUGE > MAX_PIECES) {
			note(res, "text beyond 16 GiB per segment is left on 4 KiB pages");
			ob = oa + MAX_PIECES * TX_HUGE;
			if (b > ob)
				b = ob;
			if (a > b)
				a = b;
		}
		uint8_t *state = pieces, *hs = pieces + (ob - oa) / TX_HUGE;
		memset(state, 0, (ob - oa) / TX_HUGE);

		if (st == ST_AUTO || st == ST_FILE) {
			if (blocks) {
				note(res, "file: the page cache is not placed in contiguous blocks yet (16 and 64 KiB pages): the text cache or a copy serves");
			} else if (r->fs.folios == FS_FOLIOS_NO) {
				note(res, fs_folios_note(&r->fs));
			} else if (thpenv_process_thp_off()) {
				/* No PMD would map the cache: evict and read nothing. */
				note(res, "file: transparent huge pages are disabled for this process (prctl PR_SET_THP_DISABLE)");
			} else if (!layout_file_congruent(s)) {
				note(res, "file: text is not placed congruent to its file offset modulo 2 MiB");
			} else if (a < b) {
				/* Only where the page cache will be asked for 2 MiB
				 * folios: elsewhere the advice changes nothing but
				 * the mapping's flags, at a system call a start. */
				if (s->own_lo < fend)
					sys_madvise(s->own_lo, fend - s->own_lo, MADV_HUGEPAGE);
				int locked = convert_lock(r->fd, a, b, &r->state->lock_gave_up);
				file_pieces(r, res, s, a, b, state + (a - oa) / TX_HUGE, hs, locked < 0, r->fs.overlay);
				if (locked > 0)
					convert_unlock(r->fd);
			}
			/* The cache's pages are PMD-mapped only where THP is on
			 * for the process, as the page cache's are. */
			if (r->cache_fd >= 0 && a < b && r->cache_off[i] != UINT64_MAX && !thpenv_process_thp_off())
				cache_pieces(r, res, s, r->cache_off[i], a, b, state + (a - oa) / TX_HUGE, hs);
		}
		if (st == ST_AUTO || st == ST_THP || st == ST_HUGETLB) {
			int any = 0;
			for (uint64_t k = 0; k < (ob - oa) / TX_HUGE; k++)
				any |= !state[k];
			if (any)
				copy_pieces(r, res, oa, ob, state, hs, st == ST_HUGETLB);
		}
	}
}

void huge_msg(struct msg *m, uint64_t text, const struct huge_result *hr)
{
	uint64_t on = hr->text_huge > text ? text : hr->text_huge;

	char pmd[24];

	if (hr->pmd > TX_HUGE) {
		/* Contiguous blocks beside PMDs: "P of T MiB text on 32 MiB
		 * pages, B in 2 MiB contiguous blocks[, U not measured]". */
		uint64_t blk = hr->text_blocks + hr->text_unmeasured;
		blk = blk > on ? on : blk;
		msg_mib(m, on - blk);
		msg_str(m, " of ");
		msg_mib(m, text);
		msg_str(m, " MiB text on ");
		msg_str(m, geom_size(hr->pmd, pmd, sizeof(pmd)));
		msg_str(m, " pages, ");
		msg_mib(m, blk - (hr->text_unmeasured > blk ? blk : hr->text_unmeasured));
		msg_str(m, " in 2 MiB contiguous blocks");
		if (hr->text_unmeasured) {
			msg_str(m, ", ");
			msg_mib(m, hr->text_unmeasured > blk ? blk : hr->text_unmeasured);
			msg_str(m, " in 2 MiB blocks not measured");
		}
		msg_str(m, " (file ");
	} else {
		msg_mib(m, on);
		msg_str(m, " of ");
		msg_mib(m, text);
		msg_str(m, " MiB text on 2 MiB pages (file ");
	}
	msg_mib(m, hr->file);
	if (hr->cache) {
		msg_str(m, ", cache ");
		msg_mib(m, hr->cache);
	}
	msg_str(m, ", thp ");
	msg_mib(m, hr->thp);
	if (hr->hugetlb) {
		msg_str(m, ", hugetlb ");
		msg_mib(m, hr->hugetlb);
	}
	if (hr->lazy) {
		msg_str(m, ", lazy ");
		msg_mib(m, hr->lazy);
	}
	msg_str(m, ")");
}
