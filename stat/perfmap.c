/* perfmap.c: tiexec-stat --perf-map (see perfmap.h). */
#define _GNU_SOURCE
#include "perfmap.h"

#include "layout.h"
#include "procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* What a copy can look like in /proc/PID/maps: anonymous (""), named with
 * PR_SET_VMA_ANON_NAME ("[anon:tiexec:PATH]", CONFIG_ANON_VMA_NAME), a
 * memfd (tiexec under MemoryDenyWriteExecute) or MAP_HUGETLB memory. */
int pm_is_anon_text(const struct smaps_map *m)
{
	if (m->perms[2] != 'x')
		return 0;
	return !*m->path || starts(m->path, "[anon:") || starts(m->path, "/memfd:") ||
	       starts(m->path, "/anon_hugepage");
}

int pm_is_file(const struct smaps_map *m)
{
	return m->inode != 0 && m->path[0] == '/' && !starts(m->path, "/memfd:") &&
	       !starts(m->path, "/anon_hugepage");
}

void pm_neighbours(const struct smaps *s, size_t i, long *left, long *right)
{
	size_t j;

	*left = *right = -1;
	for (j = i; j > 0 && s->map[j - 1].end == s->map[j].start; j--) {
		if (pm_is_file(&s->map[j - 1])) {
			*left = (long)(j - 1);
			break;
		}
		if (!pm_is_anon_text(&s->map[j - 1]))
			break;
	}
	for (j = i; j + 1 < s->n && s->map[j].end == s->map[j + 1].start; j++) {
		if (pm_is_file(&s->map[j + 1])) {
			*right = (long)(j + 1);
			break;
		}
		if (!pm_is_anon_text(&s->map[j + 1]))
			break;
	}
}

static int same_file(const struct smaps_map *a, const struct smaps_map *b)
{
	return a->inode == b->inode && strcmp(a->path, b->path) == 0;
}

/* A mapping at START of file offset OFF lies in segment G at
 * START - (where OFF is in G's pages): one vote for that bias.  The
 * mapping's executability must match G's (a page shared by two segments is
 * mapped for each; the permissions tell which one this is). */
int pm_bias(const struct smaps *s, size_t src, const struct pm_seg *seg, size_t nseg,
	    uint64_t *bias)
{
	uint64_t best = 0;
	size_t best_votes = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_map *m = &s->map[i];
		if (!same_file(m, &s->map[src]))
			continue;
		for (size_t g = 0; g < nseg; g++) {
			uint64_t pg = seg[g].offset & ~(TX_PAGE - 1);
			if (seg[g].exec != (m->perms[2] == 'x') || m->offset < pg ||
			    m->offset >= seg[g].offset + seg[g].filesz)
				continue;
			uint64_t cand = m->start - (seg[g].vaddr & ~(TX_PAGE - 1)) - (m->offset - pg);
			size_t votes = 0;
			for (size_t k = 0; k < s->n; k++) {
				const struct smaps_map *o = &s->map[k];
				if (!same_file(o, m))
					continue;
				for (size_t h = 0; h < nseg; h++) {
					uint64_t hp = seg[h].offset & ~(TX_PAGE - 1);
					if (seg[h].exec == (o->perms[2] == 'x') && o->offset >= hp &&
					    o->offset < seg[h].offset + seg[h].filesz &&
					    o->start == cand + (seg[h].vaddr & ~(TX_PAGE - 1)) + (o->offset - hp)) {
						votes++;
						break;
					}
				}
			}
			if (votes > best_votes) {
				best_votes = votes;
				best = cand;
			}
		}
	}
	if (!best_votes)
		return -1;
	*bias = best;
	return 0;
}

/* Within the 2 MiB pieces around an executable segment and overlapping
 * it: tiexec --round-out copies the whole pieces its text touches, the
 * read-only bytes beside it included. */
int pm_in_exec_seg(uint64_t a, uint64_t b, uint64_t bias, const struct pm_seg *seg, size_t nseg)
{
	for (size_t g = 0; g < nseg; g++) {
		uint64_t lo = bias + tx_down(seg[g].vaddr, TX_PAGE);
		uint64_t hi = tx_up(bias + seg[g].vaddr + seg[g].memsz, TX_PAGE);
		uint64_t rlo, rhi;
		layout_pieces_touched(lo, hi, &rlo, &rhi);
		if (seg[g].exec && rlo <= a && b <= rhi && a < hi && lo < b)
			return 1;
	}
	return 0;
}

/* ---- the source files: program headers and symbols (libelf) ---- */

struct pm_sym {
	uint64_t start, size;
	char *name;
};

struct pm_syms {
	struct pm_sym *v;
	size_t n, cap;
};

static int add_sym(struct pm_syms *o, uint64_t start, uint64_t size, const char *name)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 256;
		struct pm_sym *nv = realloc(o->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		o->v = nv;
		o->cap = cap;
	}
	char *nm = strdup(name);
	if (!nm)
		return -1;
	o->v[o->n++] = (struct pm_sym){ start, size, nm };
	return 0;
}

static void free_syms(struct pm_syms *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->v[i].name);
	free(o->v);
}

#define PM_MAX_SEGS 64

static size_t read_segs(Elf *e, struct pm_seg *seg)
{
	size_t n = 0, phnum;

	if (elf_getphdrnum(e, &phnum) != 0)
		return 0;
	for (size_t i = 0; i < phnum && n < PM_MAX_SEGS; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		seg[n++] = (struct pm_seg){ ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz,
					    !!(ph.p_flags & PF_X) };
	}
	return n;
}

/* The functions of E (.symtab, else .dynsym) that start inside [a, b) at
 * BIAS, cut to it.  Returns the number added, or -1 if memory ran out. */
static long copy_syms(Elf *e, uint64_t bias, uint64_t a, uint64_t b, struct pm_syms *o)
{
	Elf_Scn *scn = NULL, *use = NULL;
	GElf_Shdr sh, ush = { 0 };
	long added = 0;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !use)) {
			use = scn;
			ush = sh;
		}
	}
	if (!use)
		return 0;
	Elf_Data *d = elf_getdata(use, NULL);
	size_t n = d && ush.sh_entsize ? ush.sh_size / ush.sh_entsize : 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym))
			continue;
		int t = GELF_ST_TYPE(sym.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF || !sym.st_size)
			continue;
		const char *name = elf_strptr(e, ush.sh_link, sym.st_name);
		uint64_t lo = bias + sym.st_value, hi = lo + sym.st_size;
		if (!name || !*name || hi <= a || lo >= b)
			continue;
		if (lo < a)
			lo = a;
		if (hi > b)
			hi = b;
		if (add_sym(o, lo, hi - lo, name) != 0)
			return -1;
		added++;
	}
	return added;
}

static int has_symtab(Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && sh.sh_size)
			return 1;
	return 0;
}

/* A stripped file's full symbol table is in the debug packages (Debian's
 * -dbgsym, Fedora's -debuginfo), found by the file's build ID at
 * /usr/lib/debug/.build-id/XX/REST.debug, as perf and gdb look for it, in
 * the process's root and mount namespace, which its owner may control: so
 * opened as its owner could, without leaving its root, following a magic
 * link or blocking on a FIFO, and only a regular file (procfs.h).
 * Returns an fd, or -1. */
static int open_debug(long pid, Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || nh.n_descsz < 2 ||
			    nh.n_descsz > 64 || memcmp((char *)d->d_buf + noff, "GNU", 4) != 0)
				continue;
			const unsigned char *id = (const unsigned char *)d->d_buf + doff;
			char p[256];
			int n = snprintf(p, sizeof(p), "/usr/lib/debug/.build-id/%02x/", id[0]);
			for (size_t k = 1; k < nh.n_descsz; k++)
				n += snprintf(p + n, sizeof(p) - (size_t)n, "%02x", id[k]);
			snprintf(p + n, sizeof(p) - (size_t)n, ".debug");
			return proc_open_as_owner(pid, p);
		}
	}
	return -1;
}

/* Why a piece of anonymous text is not (known to be) a copy. */
static const char not_beside[] = "no file mapping next to it";
static const char not_inside[] = "not where its file's text lies";

/* Which file the anonymous text S->map[I] is a copy of: opens it into *E
 * (and *FD), sets *SRC and *BIAS; or returns why not. */
static const char *find_source(long pid, const struct smaps *s, size_t i, Elf **e, int *fd,
			       long *src, uint64_t *bias)
{
	const struct smaps_map *c = &s->map[i];
	const char *why = not_beside;
	long side[2];

	pm_neighbours(s, i, &side[0], &side[1]);
	for (int k = 0; k < 2; k++) {
		if (side[k] < 0 || (k == 1 && side[0] >= 0 && same_file(&s->map[side[0]], &s->map[side[1]])))
			continue;
		const struct smaps_map *f = &s->map[side[k]];
		*fd = proc_open_mapping(pid, f->start, f->end, f->path, f->deleted, f->inode);
		if (*fd < 0) {
			why = errno == ESTALE ? "its file was replaced since" : "cannot open its file";
			continue;
		}
		*e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
		struct pm_seg seg[PM_MAX_SEGS];
		size_t nseg = *e && elf_kind(*e) == ELF_K_ELF ? read_segs(*e, seg) : 0;
		if (nseg && pm_bias(s, (size_t)side[k], seg, nseg, bias) == 0 &&
		    pm_in_exec_seg(c->start, c->end, *bias, seg, nseg)) {
			*src = side[k];
			return NULL;
		}
		why = not_inside;
		elf_end(*e);
		close(*fd);
	}
	return why;
}

/* One piece of anonymous text: if it is a copy, its functions into O and a
 * line to OUT; a line too when its file could not be read.  Returns 1 for
 * a copy, 0 if not (or not known), -1 if memory ran out. */
static int name_copy(long pid, const struct smaps *s, size_t i, struct pm_syms *o, FILE *out)
{
	const struct smaps_map *c = &s->map[i];
	Elf *e;
	int fd;
	long src;
	uint64_t bias;
	const char *why = find_source(pid, s, i, &e, &fd, &src, &bias);

	if (why) {
		/* Text beside a file but outside its text (a JIT's) is no copy. */
		if (why != not_beside && why != not_inside)
			fprintf(out, "  0x%" PRIx64 "-0x%" PRIx64 " %s: %s\n", c->start, c->end,
				*c->path ? c->path : "(anonymous)", why);
		return 0;
	}
	/* A debug file has the same addresses as the file it was split from. */
	int dfd = has_symtab(e) ? -1 : open_debug(pid, e);
	Elf *de = dfd >= 0 ? elf_begin(dfd, ELF_C_READ_MMAP, NULL) : NULL;
	int use_debug = de && elf_kind(de) == ELF_K_ELF && has_symtab(de);
	long r = copy_syms(use_debug ? de : e, bias, c->start, c->end, o);
	elf_end(de);
	if (dfd >= 0)
		close(dfd);
	elf_end(e);
	close(fd);
	if (r < 0)
		return -1;
	fprintf(out, "  0x%" PRIx64 "-0x%" PRIx64 " %s: %ld functions%s\n", c->start, c->end,
		s->map[src].path, r, use_debug ? " (from its debug file)" : "");
	return 1;
}

/* ---- /tmp/perf-PID.map ---- */

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static int cmp_sym(const void *x, const void *y)
{
	const struct pm_sym *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The start addresses of the lines already in the map F (a JIT's, or ours
 * from an earlier run), sorted; *N of them.  NULL with *N = 0 if none. */
static uint64_t *starts_in(FILE *f, size_t *n)
{
	uint64_t *v = NULL, x;
	size_t cap = 0;
	char line[512];

	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strchr(line, '\n') && !feof(f)) { /* a long name: skip the rest */
			int ch;
			while ((ch = getc(f)) != EOF && ch != '\n')
				;
		}
		if (sscanf(line, "%" SCNx64, &x) != 1)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			uint64_t *nv = realloc(v, cap * sizeof(*nv));
			if (!nv)
				break; /* then some lines may be written twice: harmless */
			v = nv;
		}
		v[(*n)++] = x;
	}
	if (v)
		qsort(v, *n, sizeof(*v), cmp_u64);
	return v;
}

/* Opens /tmp/perf-PID.map for appending.  A new file belongs to the
 * process's user (perf reads it as whoever runs perf report, and a JIT in
 * the process may want to write it later).  An existing one must be a
 * plain file of the process's user or ours with one link: as root in a
 * world-writable directory, never follow a link someone else planted. */
static FILE *open_map(const char *path, long pid, char *err, size_t errlen)
{
	char proc[64];
	struct stat pst, st;
	int fd;

	snprintf(proc, sizeof(proc), "/proc/%ld", pid);
	if (stat(proc, &pst) != 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (fchmod(fd, 0644) != 0 ||
		    (geteuid() == 0 && fchown(fd, pst.st_uid, pst.st_gid) != 0)) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			unlink(path);
			return NULL;
		}
	} else if (errno == EEXIST) {
		fd = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return NULL;
		}
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
		    (st.st_uid != pst.st_uid && st.st_uid != geteuid())) {
			snprintf(err, errlen, "%s: exists and is not a plain file of the process's user",
				 path);
			close(fd);
			return NULL;
		}
	} else {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	FILE *f = fdopen(fd, "a+");
	if (!f) {
		snprintf(err, errlen, "%s", strerror(errno));
		close(fd);
	}
	return f;
}

/* Lines "START SIZE name" in hex, the format of perf's jit-interface.txt. */
static int append_syms(FILE *f, struct pm_syms *o, size_t *written)
{
	size_t nold;
	uint64_t *old = starts_in(f, &nold);

	qsort(o->v, o->n, sizeof(*o->v), cmp_sym);
	*written = 0;
	if (fseek(f, 0, SEEK_END) != 0) /* from reading to writing (C11 7.21.5.3) */
		return -1;
	for (size_t i = 0; i < o->n; i++) {
		const struct pm_sym *y = &o->v[i];
		if (i && y->start == o->v[i - 1].start) /* an alias: perf shows one name */
			continue;
		if (old && bsearch(&y->start, old, nold, sizeof(*old), cmp_u64))
			continue;
		fprintf(f, "%" PRIx64 " %" PRIx64 " %s\n", y->start, y->size, y->name);
		(*written)++;
	}
	free(old);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

int pm_write_map(long pid, const struct smaps *s, FILE *out, struct pm_report *rep, char *err,
		 size_t errlen)
{
	struct pm_syms o = { 0 };
	char path[64];
	int ret = -1;

	memset(rep, 0, sizeof(*rep));
	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", pid);
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -1;
	}
	fprintf(out, "PID %ld: %s\n", pid, path);
	for (size_t i = 0; i < s->n; i++) {
		if (!pm_is_anon_text(&s->map[i]))
			continue;
		int r = name_copy(pid, s, i, &o, out);
		if (r < 0) {
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			goto out;
		}
		rep->copies += (size_t)r;
	}
	if (!rep->copies) {
		fputs("  no copied text\n", out);
		ret = 0;
		goto out;
	}
	FILE *f = open_map(path, pid, err, errlen);
	if (!f)
		goto out;
	if (append_syms(f, &o, &rep->symbols) != 0)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	else
		ret = 0;
	if (fclose(f) != 0 && ret == 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		ret = -1;
	}
out:
	free_syms(&o);
	return ret;
}
