/* The copy ways (place.h): thp, anonymous memory with MADV_HUGEPAGE, and
 * hugetlb, the reserved pool (MAP_HUGETLB), filled with pread, made
 * read+execute and moved over the pieces with mremap.  The old mapping
 * stays until the copy is complete and known to be on huge pages, so a
 * failure leaves the 4 KiB mapping untouched.  Copies cover only
 * file-backed text (never zero fill), are left out of core dumps, stay
 * within the memory cgroup's headroom (memlimit.c), and are not attempted
 * at all when the system would refuse them (thpenv.c: THP switches,
 * MemoryDenyWriteExecute); under MemoryDenyWriteExecute a copy is a memfd
 * mapped read+execute where hugetlb or shmem THP allow. */
#include "place.h"

#include "arch_cache.h"

#include <errno.h>

#include "memlimit.h"
#include "rt.h"
#include "sys.h"

/* Kernel interfaces newer than Debian 12's uapi headers, or used only here. */
#define TX_MADV_DONTDUMP 16
#define TX_MFD_HUGETLB 4U

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

/* The same for a copy at [w, w + len). */
static void copy_blocks(const struct huge_req *r, uint64_t w, uint64_t len, uint8_t *hs)
{
	struct huge_state *st = r->state;

	if (geom_blocks(&st->geom) && !thpenv_block_off(&st->thp))
		place_mark_blocks(r, w, w + len, hs, 1);
}

/* Maps len bytes of memory for a copy at cb->w, read+write, faulted in,
 * and marks in hs[] the 2 MiB pieces that are huge. */
static enum reason copy_alloc(const struct huge_req *r, struct copy_buf *cb, uint64_t a, uint64_t len, int hugetlb,
			       enum copy_route route, uint8_t *hs)
{
	enum reason no_mem = hugetlb ? R_HUGETLB_POOL : R_THP_ALLOC;
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
		return populate(&r->state->cc, cb->w, len, 1) < 0 ? no_mem : R_NONE;
	}
	if (sys_madvise(cb->w, len, MADV_HUGEPAGE) < 0 || populate(&r->state->cc, cb->w, len, 1) < 0 ||
	    scan_huge(&r->state->cc, cb->w, cb->w + len, hs) < 0)
		return R_THP_FAULT;
	copy_blocks(r, cb->w, len, hs);
	return R_NONE;
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
	enum reason why = copy_alloc(r, &cb, a, len, hugetlb, route, hs);

	if (why != R_NONE) {
		place_note(res, why);
		ret = -1;
		goto out;
	}
	/* Fill the huge pieces. */
	for (uint64_t x = a; x < b; x += TX_HUGE) {
		uint64_t k = (x - a) / TX_HUGE;
		missed |= !hs[k];
		if (hs[k] && fill(r, (uint8_t *)(uintptr_t)(cb.w + (x - a)), x, x + TX_HUGE) < 0) {
			place_note(res, R_COPY_READ);
			ret = -1;
			goto out;
		}
	}
	/* The copy was written through cb.w: coherent before it runs
	 * (arch_cache.h). */
	arch_sync_icache(cb.w, len);
	if (copy_seal(r, &cb, a, len, hugetlb, hs) < 0) {
		place_note(res, R_COPY_EXEC);
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
			place_note(res, hugetlb ? R_HUGETLB_MREMAP : R_THP_MREMAP);
			ret = -1;
			break;
		}
		for (uint64_t p = x; p < y; p += TX_HUGE)
			state[(p - a) / TX_HUGE] = 1;
		place_account(r, res, x, y, hugetlb ? &res->hugetlb : &res->thp);
		place_account_blocks(r, res, a, x, y, hs);
		x = y;
	}
	if (missed && !hugetlb)
		place_note(res, R_THP_SMALL_PAGES);
	place_note_unmeasured(res, hs, len / TX_HUGE, R_THP_UNMEASURED);
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

static const enum reason limit_note[] = {
	[ML_NONE] = R_THP_NO_MEMORY,
	[ML_CGROUP_V1] = R_THP_CGROUP_V1,
	[ML_CGROUP_V2] = R_THP_CGROUP_V2,
	[ML_AVAILABLE] = R_THP_MEMAVAILABLE,
};

/* Why the copy strategy cannot work here at all (into res), or 0 and how
 * copies become executable.  Checked before any memory is taken. */
static int copy_refused(struct thpenv *t, struct huge_result *res, int hugetlb, enum copy_route *route)
{
	const struct why *off = hugetlb ? NULL : thpenv_thp_off(t);

	/* Pieces that are contiguous blocks need only 2 MiB folios. */
	if (off && geom_blocks(t->geom) && !thpenv_block_off(t))
		off = NULL;
	enum exec_refusal ex = thpenv_exec_refusal(t);

	*route = ROUTE_MPROTECT;
	if (off) {
		place_note_why(res, off);
		return 1;
	}
	if (ex == EXEC_OK)
		return 0;
	*route = ROUTE_MEMFD;
	if (hugetlb || thpenv_shmem_thp(t))
		return 0;
	place_note(res, ex == EXEC_MDWE_PRCTL ? R_THP_MDWE_PRCTL : R_THP_MDWE_OTHER);
	return 1;
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
		place_note(res, limit_note[ml.by]);
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
			place_note_why(res, thpenv_block_off(&r->state->thp));
			break;
		}
}

/* Copies the pieces [a, b) whose state is 0, in chunks of consecutive such
 * pieces, while memory allows. */
void place_copy(const struct huge_req *r, struct huge_result *res, uint64_t a, uint64_t b,
			uint8_t *state, uint8_t *hs, int hugetlb)
{
	enum copy_route route;

	if (copy_refused(&r->state->thp, res, hugetlb, &route))
		return;
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

