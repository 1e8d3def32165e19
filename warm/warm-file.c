/* One file through the page cache: its whole 2 MiB pieces of text measured,
 * converted where they are not warm (unless --check), and reported; a file
 * the page cache cannot serve goes to the text cache (warm-cache.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsfolio.h"
#include "geom.h"
#include "trust.h"
#include "warm.h"

static void report(const struct warm *w, const struct target *t, const struct result *r)
{
	if (w->opt.json) {
		json_path(t->path);
		printf(",\"route\":\"file\",\"aligned_kb\":%" PRIu64 ",\"warm_before_kb\":%" PRIu64 ",\"warm_kb\":%" PRIu64
		       ",\"converted_kb\":%" PRIu64 ",\"cold_before_kb\":%" PRIu64 ",\"collapsed\":%" PRIu64
		       ",\"evicted\":%" PRIu64 ",\"stuck_kb\":%" PRIu64 ",\"open_for_writing\":%s,\"incongruent\":%s,"
		       "\"no_large_folios\":%s,\"kept\":[",
		       r->aligned >> 10, r->before >> 10, r->after >> 10, r->converted >> 10, r->cold >> 10,
		       r->collapsed, r->evicted, r->stuck >> 10, r->writing > 0 ? "true" : "false",
		       r->incongruent ? "true" : "false", r->no_folios[0] ? "true" : "false");
		for (unsigned i = 0; i < r->nkept; i++) {
			printf("%s{\"offset\":%" PRIu64 ",\"pids\":[", i ? "," : "", r->kept[i].off);
			for (unsigned j = 0; j < r->kept[i].npids; j++)
				printf("%s%d", j ? "," : "", r->kept[i].pids[j]);
			printf("]}");
		}
		printf("],\"pids\":[");
		for (unsigned i = 0; i < r->npids; i++)
			printf("%s%d", i ? "," : "", r->pids[i]);
		printf("]}\n");
		return;
	}
	printf("%s: %.1f of %.1f MiB warm", t->path, r->after / 1048576.0, r->aligned / 1048576.0);
	if (!w->opt.check)
		printf(" (%.1f before)", r->before / 1048576.0);
	if (w->opt.check && r->cold)
		printf(", %.1f MiB not cached", r->cold / 1048576.0);
	if (r->no_folios[0])
		printf(", left alone: %s", r->no_folios);
	if (r->writing > 0)
		printf(", left alone: open for writing");
	if (r->stuck)
		printf(", %.1f MiB kept small: dirty pages not yet written back (or mapped meanwhile)",
		       r->stuck / 1048576.0);
	if (r->nkept || r->more_kept) {
		printf(", kept small: in use by PID");
		for (unsigned i = 0; i < r->npids; i++)
			printf("%s %d", i ? "," : "", r->pids[i]);
	} else if (w->opt.check && r->npids && r->after < r->aligned) {
		printf(", mapped by PID");
		for (unsigned i = 0; i < r->npids; i++)
			printf("%s %d", i ? "," : "", r->pids[i]);
	}
	printf("\n");
	if (w->opt.verbose) {
		if (r->incongruent)
			printf("%s: an executable segment is not congruent to its file offset modulo 2 MiB: %s\n", t->path,
			       r->library ? "no process maps it with 2 MiB pages from the page cache (the text cache can)"
					  : "tiexec places it congruent; a direct exec gets 4 KiB pages");
		for (unsigned i = 0; i < r->nkept; i++) {
			printf("%s: piece at 0x%" PRIx64 " mapped by PID", t->path, r->kept[i].off);
			for (unsigned j = 0; j < r->kept[i].npids; j++)
				printf("%s %d", j ? "," : "", r->kept[i].pids[j]);
			printf("\n");
		}
		if (!w->opt.check && (r->collapsed || r->evicted))
			printf("%s: %" PRIu64 " pieces collapsed in place, %" PRIu64 " evicted and read back\n", t->path,
			       r->collapsed, r->evicted);
	}
}

/* Whether the file open at fd (its headers into e) is not worth a look:
 * not a program or library of this machine, or a library ld.so places out
 * of reach (unplaced_library).  Said when named. */
static int skipped(const struct warm *w, const struct target *t, int fd, struct elf *e)
{
	const char *why = NULL;
	char unplaced[200];

	if (read_elf(fd, e, &why) < 0 || (why = unplaced_library(e, fd, t->planned, unplaced, sizeof(unplaced)))) {
		if (t->named || w->opt.verbose)
			printf("%s: skipped: %s\n", t->path, why);
		return 1;
	}
	return 0;
}

/* Measures the n spans' pieces of fd through slot, then converts what is
 * not warm (unless --check), into r. */
static void warm_spans(struct warm *w, const struct target *t, int fd, const struct span *sp, int n, uint64_t slot,
		       struct result *r)
{
	/* First what is warm (a true "before"), then the conversion. */
	uint64_t npieces = 0, k = 0;
	for (int i = 0; i < n; i++)
		npieces += (sp[i].hi - sp[i].lo) / TX_HUGE;
	uint8_t *warm = calloc(npieces ? npieces : 1, 1);
	if (!warm) {
		perror("tiexec-warm");
		exit(ST_FAILED);
	}
	for (int i = 0; i < n; i++)
		for (uint64_t off = sp[i].lo; off < sp[i].hi; off += TX_HUGE, k++) {
			int cached;
			struct piece_pids pp;
			warm[k] = (uint8_t)measure(&w->cc, fd, slot, off, &cached);
			r->aligned += TX_HUGE;
			r->before += warm[k] ? TX_HUGE : 0;
			r->cold += cached ? 0 : TX_HUGE;
			if (!warm[k] && users(t, off, &pp))
				for (unsigned j = 0; j < pp.npids; j++)
					add_pid(r->pids, &r->npids, 32, pp.pids[j]);
		}
	r->after = r->before;
	if (!w->opt.check && r->before < r->aligned && !r->no_folios[0]) {
		r->writing = open_for_writing(fd);
		k = 0;
		for (int i = 0; i < n; i++)
			for (uint64_t off = sp[i].lo; off < sp[i].hi; off += TX_HUGE, k++)
				if (!warm[k])
					convert(&w->cc, fd, t, slot, off, r->writing != 0, r);
	}
	free(warm);
}

void do_target(struct warm *w, const struct target *t)
{
	struct span sp[MAX_SPANS];
	struct result r;
	struct stat st, want = { .st_dev = t->dev, .st_ino = t->ino };
	int fd = trust_open(t->path, &want, &st);

	if (fd < 0) {
		fail(w, t->path, errno == ESTALE ? "cannot read: it was replaced since it was checked" : "cannot read", errno == ESTALE ? 0 : errno);
		return;
	}
	memset(&r, 0, sizeof(r));
	static struct elf e;
	if (skipped(w, t, fd, &e)) {
		close(fd);
		return;
	}
	if (t->window) {
		window_target(w, t, fd, &e);
		close(fd);
		return;
	}
	int lib = r.library = library(&e);
	int n = elf_spans(&e, (uint64_t)st.st_size, !lib, sp, &r.incongruent);
	struct fs_info fi;
	fs_folios(fd, &fi);
	char pg[24];
	if (fi.folios == FS_FOLIOS_NO)
		snprintf(r.no_folios, sizeof(r.no_folios), "%s keeps %s folios in the page cache on Linux %u.%u",
			 fi.name, geom_size(TX_PAGE, pg, sizeof(pg)), fi.major, fi.minor);
	/* tiexec places a program congruent to its file, whatever its
	 * p_vaddr: only a library's (placed by ld.so, 2 MiB-aligned) or a
	 * file system without large folios needs the w->cache. */
	if (!w->cache.off && (r.no_folios[0] || (r.incongruent && lib))) {
		cache_target(w, t, fd, &e, (uint64_t)st.st_size,
			     r.no_folios[0] ? r.no_folios : "its text is not congruent to its file offset modulo 2 MiB");
		close(fd);
		return;
	}
	/* Nothing to put on 2 MiB pages (most shared libraries a stamped
	 * program needs): a word only when asked. */
	if (n == 0) {
		if (t->named || w->opt.verbose)
			printf("%s: skipped: no whole 2 MiB page of text%s\n", t->path,
			       r.incongruent ? " congruent to its file offset" : "");
		close(fd);
		return;
	}
	/* One 2 MiB-aligned slot of address space for every piece in turn. */
	void *raw;
	uint64_t slot = slot_reserve(&raw);
	if (!slot) {
		fail(w, t->path, "no address space", errno);
		close(fd);
		return;
	}
	warm_spans(w, t, fd, sp, n, slot, &r);
	munmap(raw, 2 * TX_HUGE);
	close(fd);
	report(w, t, &r);
	if (r.after < r.aligned)
		worse(w, ST_NOT_WARM);
}
