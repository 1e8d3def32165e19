/* One file through the shared text cache: for text the page cache cannot
 * hold in 2 MiB folios (its file system, or a library not congruent to
 * its file), an entry in a tmpfs mounted huge=always (textentry.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "geom.h"
#include "json.h"
#include "memlimit.h"
#include "textentry.h"
#include "trust.h"
#include "warm.h"

/* The cache's size where tiexec-warm mounts it and warm.conf names none:
 * a quarter of the machine's memory, and no more than tiexec-warm's memory
 * cgroup has room for, since the entries are charged to it (a tmpfs's own
 * default, half, would let the cache push the cgroup into its OOM killer
 * before "full" is ever said).  In bytes, whole 2 MiB pages. */
static void default_cache_size(char *buf, size_t n)
{
	struct memlimit m;
	uint64_t size = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 4;

	memlimit_room(&m);
	if ((m.by == ML_CGROUP_V1 || m.by == ML_CGROUP_V2) && m.room < size)
		size = m.room;
	size &= ~(TX_HUGE - 1);
	snprintf(buf, n, "%" PRIu64, size > TX_HUGE ? size : (uint64_t)TX_HUGE);
}

/* The cache mounted and trusted, once; else said once. */
int cache_ready(struct warm *w)
{
	char why[600];

	if (w->cache.ready || w->cache.broken)
		return w->cache.ready;
	const char *u = NULL;
	if (!w->cache.size[0])
		default_cache_size(w->cache.size, sizeof(w->cache.size));
	if (textentry_mount(w->cache.dir, w->cache.size, why, sizeof(why)) < 0 ||
	    (u = textcache_dir_untrusted(w->cache.dir))) {
		fprintf(stderr, "tiexec-warm: '%s': the text cache: %s%s\n", w->cache.dir, u ? u : why,
			u ? ": the loader would not use it" : "");
		worse(w, ST_FAILED);
		w->cache.broken = 1;
		return 0;
	}
	w->cache.ready = 1;
	return 1;
}

static const char *const cache_word[] = {
	[TE_MADE] = "made", [TE_PRESENT] = "present", [TE_FAILED] = "failed", [TE_STALE] = "stale",
};

/* How much of the text in the entry of the file open at fd is in 2 MiB
 * pages (huge), of aligned bytes of whole pieces: each piece mapped at a slot of
 * its own, faulted in and asked as the loader asks one of them at every
 * start (interp/place-cache.c: entry_holds).  unmeasured: pieces that may be
 * contiguous blocks of a larger folio (a PMD larger than 2 MiB) but whose
 * frames could not be read (no CAP_SYS_ADMIN, which the shipped unit does
 * not hold); they are neither in 2 MiB pages nor cold. */
struct entry_pages {
	uint64_t huge, aligned, unmeasured;
};

static void entry_huge(struct warm *w, int fd, const struct elf *e, struct entry_pages *pg)
{
	uint64_t off[TEXTCACHE_PH_MAX];

	*pg = (struct entry_pages){ 0 };
	int efd = textentry_open(w->cache.dir, fd, off);
	if (efd < 0)
		return;
	void *raw;
	uint64_t slot = slot_reserve(&raw);
	if (!slot) {
		close(efd);
		return;
	}
	for (unsigned i = 0; i < e->eh.e_phnum && i < TEXTCACHE_PH_MAX; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X))
			continue;
		uint64_t lo, hi;
		text_pieces(p, &lo, &hi);
		for (uint64_t v = lo; v < hi; v += TX_HUGE) {
			uint8_t hs = 0;
			pg->aligned += TX_HUGE;
			if (map_piece(efd, slot, off[i] + (v - p->p_vaddr)) == 0 &&
			    cconv_fault(&w->cc, slot, slot + TX_HUGE, &hs, 0) == 0 && !hs && w->blocks &&
			    cconv_blocks(&w->cc, slot, slot + TX_HUGE, &hs, 0) < 0) /* a block of a larger folio? */
				pg->unmeasured += TX_HUGE;
			pg->huge += hs ? TX_HUGE : 0;
		}
	}
	munmap(raw, 2 * TX_HUGE);
	close(efd);
}

/* Whether an entry lacks 2 MiB pages it could have: pieces measured small. */
static int entry_cold(const struct entry_pages *pg)
{
	return pg->huge + pg->unmeasured < pg->aligned;
}

/* Memory an entry of the file (headers e, size bytes) may take: its
 * content in 2 MiB pages, and a page more for each executable segment
 * moved to the end. */
static uint64_t entry_estimate(const struct elf *e, uint64_t size)
{
	uint64_t n = (size + TX_HUGE - 1) & -TX_HUGE;

	for (unsigned i = 0; i < e->eh.e_phnum; i++)
		if (e->ph[i].p_type == PT_LOAD && (e->ph[i].p_flags & PF_X))
			n += TX_HUGE;
	return n;
}

/* The entry of the file open at fd, made unless --check (in a cache
 * ready for it), and how much of it is in 2 MiB pages (*pg).  One found
 * split (swapped out and back, say) is made again:
 * the loader, which asks one piece of it, would take all of it for huge.
 * An entry is made only where it fits in what tiexec-warm's own memory
 * cgroup (and the machine) has room for: entries are charged to the
 * cgroup that writes them, and one that did not fit would get tiexec-warm
 * OOM-killed.  TE_FAILED with textentry_make's errno (ENOMEM: no room). */
static enum te_result cache_entry(struct warm *w, const struct target *t, int fd, const struct elf *e, uint64_t size, uint64_t *bytes,
				  struct entry_pages *pg, const char **step)
{
	enum te_result r = textentry_find(w->cache.dir, fd, bytes);

	if (!w->opt.check && r != TE_PRESENT) {
		struct memlimit m;
		memlimit_room(&m);
		if (m.by != ML_NONE && entry_estimate(e, size) > m.room)
			return errno = ENOMEM, TE_FAILED;
		r = textentry_make(w->cache.dir, t->path, fd, bytes, step);
	}
	if (r == TE_FAILED || r == TE_STALE)
		return r;
	entry_huge(w, fd, e, pg);
	if (entry_cold(pg) && !w->opt.check && r == TE_PRESENT && textentry_remove(w->cache.dir, fd) == 0) {
		r = textentry_make(w->cache.dir, t->path, fd, bytes, step);
		if (r != TE_FAILED)
			entry_huge(w, fd, e, pg);
	}
	return r;
}

/* Why no entry may be made of the file t open at fd now, into why (n
 * bytes), or NULL.  An entry is readable by everyone and serves the text
 * until the file's identity changes, so: a file everyone may read along
 * its whole path, that nobody has open for writing or mapped shared and
 * writable (a write through such a mapping changes no timestamp). */
static const char *refusal(const struct target *t, int fd, char *why, size_t n)
{
	char w[PATH_MAX + 64];

	if (trust_unreadable(t->path, w, sizeof(w)))
		return snprintf(why, n, "%s, and an entry would be", w), why;
	for (size_t i = 0; i < t->nuses; i++)
		if (t->uses[i].shared_write)
			return snprintf(why, n, "PID %d maps it shared and writable", t->uses[i].pid), why;
	int wr = open_for_writing(fd);
	if (wr > 0)
		return snprintf(why, n, "it is open for writing"), why;
	if (wr < 0)
		return snprintf(why, n, "cannot tell whether it is open for writing (a read lease needs its owner or CAP_LEASE)"),
		       why;
	return NULL;
}

/* A file whose text the page cache cannot hold in 2 MiB folios (why):
 * its entry in the text cache, made unless --check. */
void cache_target(struct warm *w, const struct target *t, int fd, const struct elf *e, uint64_t size, const char *why)
{
	uint64_t bytes = 0, pieces, text = text_bytes(e, &pieces);
	struct entry_pages pg = { 0 };
	enum te_result r;
	char refused[PATH_MAX + 256] = "", what[PATH_MAX + 256];
	const char *step = "";
	int full = 0, no_cache = 0;

	if (!pieces) {
		if (t->named || w->opt.verbose)
			printf("%s: skipped: less than one 2 MiB page of text\n", t->path);
		return;
	}
	if (!w->opt.check && refusal(t, fd, refused, sizeof(refused)))
		r = TE_FAILED; /* refused[] says why */
	else if (!w->opt.check && !cache_ready(w))
		r = TE_FAILED, no_cache = 1; /* said once, by cache_ready */
	else if ((r = cache_entry(w, t, fd, e, size, &bytes, &pg, &step)) == TE_FAILED && !w->opt.check) {
		if (errno == ENOSPC || errno == ENOMEM) {
			full = 1;
			struct nofit *nf = realloc(w->nofit, (w->nnofit + 1) * sizeof(*nf));
			if (nf) {
				w->nofit = nf;
				w->nofit[w->nnofit++] = (struct nofit){ strdup(t->path), text };
			}
		} else {
			int err = errno;
			snprintf(what, sizeof(what), "cannot make its text cache entry in '%s': %s%s", w->cache.dir, step,
				 err == ENOEXEC ? ": an executable segment overlaps another loadable segment"
				 : err == EAGAIN ? ": it changed while it was copied" : "");
			fail(w, t->path, what, err == ENOEXEC || err == EAGAIN ? 0 : err);
		}
	}
	const char *state = refused[0] ? "refused" : full ? "full" : w->opt.check && r == TE_FAILED ? "absent" : cache_word[r];
	if (r == TE_FAILED || r == TE_STALE || entry_cold(&pg))
		worse(w, ST_NOT_WARM);
	if (w->opt.json) {
		json_path(t->path);
		printf(",\"route\":\"cache\",\"why\":");
		json_str(stdout, why);
		printf(",\"cache\":\"%s\",\"text_kb\":%" PRIu64 ",\"huge_kb\":%" PRIu64 ",\"aligned_kb\":%" PRIu64
		       ",\"unmeasured_kb\":%" PRIu64 ",\"cache_kb\":%" PRIu64 "}\n",
		       state, text >> 10, pg.huge >> 10, pg.aligned >> 10, pg.unmeasured >> 10, bytes >> 10);
		return;
	}
	if (r == TE_FAILED || r == TE_STALE) {
		printf("%s: %.1f MiB of text not in the text cache (%s%s)%s%s\n", t->path, text / 1048576.0,
		       refused[0] ? "refused: " : full ? "the cache is full" : r == TE_STALE ? "its entry's text differs from the file's"
		       : w->opt.check ? "no entry" : no_cache ? "failed: the text cache is not usable, as said above" : "failed",
		       refused, why ? ", which it needs: " : "", why ? why : "");
		return;
	}
	char unmeasured[128] = "";
	if (pg.unmeasured)
		snprintf(unmeasured, sizeof(unmeasured), ", %.1f MiB not measured (reading frame numbers takes CAP_SYS_ADMIN)",
			 pg.unmeasured / 1048576.0);
	printf("%s: %.1f MiB of text in the text cache (%s%s, %.1f of %.1f MiB in 2 MiB pages%s, %.1f MiB in memory): %s\n",
	       t->path, text / 1048576.0, cache_word[r], r == TE_MADE ? " now" : "", pg.huge / 1048576.0,
	       pg.aligned / 1048576.0, unmeasured, bytes / 1048576.0, why);
}

static int bigger_first(const void *a, const void *b)
{
	const struct nofit *x = a, *y = b;

	return x->text < y->text ? 1 : x->text > y->text ? -1 : 0;
}

/* The files the text cache had no room for, biggest first. */
void report_nofit(struct warm *w)
{
	if (!w->nnofit)
		return;
	qsort(w->nofit, w->nnofit, sizeof(*w->nofit), bigger_first);
	fprintf(stderr, "tiexec-warm: '%s': the text cache is full (raise cache-size); not cached, biggest first:",
		w->cache.dir);
	for (size_t i = 0; i < w->nnofit; i++)
		fprintf(stderr, "%s %s (%.1f MiB)", i ? "," : "", w->nofit[i].path, w->nofit[i].text / 1048576.0);
	fprintf(stderr, "\n");
}

void window_target(struct warm *w, const struct target *t, int fd, const struct elf *e)
{
	uint64_t bytes = 0, end = textcache_window_end(e->ph, e->eh.e_phnum), at = textcache_window_at(e->ph, e->eh.e_phnum);
	char refused[PATH_MAX + 256] = "", what[PATH_MAX + 256];
	const char *step = "";
	enum te_result r;
	int no_cache = 0;

	if (!w->opt.check && refusal(t, fd, refused, sizeof(refused)))
		r = TE_FAILED;
	else if (!w->opt.check && !cache_ready(w))
		r = TE_FAILED, no_cache = 1;
	else if ((r = textentry_window(w->cache.dir, t->path, fd, end, at, !w->opt.check, &bytes, &step)) == TE_FAILED &&
		 !w->opt.check) {
		int err = errno;
		snprintf(what, sizeof(what), "cannot make its window entry in '%s': %s%s", w->cache.dir, step,
			 err == EAGAIN ? ": it changed while it was copied" : "");
		fail(w, t->path, what, err == EAGAIN ? 0 : err);
	}
	const char *state = refused[0] ? "refused" : w->opt.check && r == TE_FAILED ? "absent" : cache_word[r];
	if (r == TE_FAILED || r == TE_STALE)
		worse(w, ST_NOT_WARM);
	if (w->opt.json) {
		json_path(t->path);
		printf(",\"route\":\"window\",\"cache\":\"%s\",\"image_kb\":%" PRIu64 ",\"cache_kb\":%" PRIu64 "}\n", state,
		       end >> 10, bytes >> 10);
		return;
	}
	if (r == TE_FAILED || r == TE_STALE) {
		printf("%s: its read-only image (%.1f MiB) not in a window entry of the text cache (%s%s)\n", t->path,
		       end / 1048576.0,
		       refused[0] ? "refused: " : r == TE_STALE ? "its entry differs from the file" : w->opt.check ? "no entry"
		       : no_cache ? "failed: the text cache is not usable, as said above" : "failed",
		       refused);
		return;
	}
	printf("%s: its read-only image (%.1f MiB) in a 2 MiB window entry of the text cache (%s%s, %.1f MiB in memory): "
	       "one 2 MiB page for the programs tiexec starts\n",
	       t->path, end / 1048576.0, cache_word[r], r == TE_MADE ? " now" : "", bytes / 1048576.0);
}
