/* tiexec-warm's side of the shared text cache (see textentry.h and
 * common/textcache.h). */
#define _GNU_SOURCE
#include "textentry.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "geom.h"
#include "planrec.h"
#include "textcache.h"
#include "trust.h"

/* Beside each entry NAME, NAME.source holds the path it was made from, for
 * --prune (the loader never looks at it: its names are the entries'). */
#define SOURCE_SUFFIX ".source"

static uint64_t down(uint64_t x, uint64_t a) { return x & -a; }
static uint64_t up(uint64_t x, uint64_t a) { return (x + a - 1) & -a; }

/* ---- the tmpfs ---- */

/* Makes dir and its missing parents (0755 whatever the umask), checking
 * each directory on the way before anything is made in it or mounted on
 * it, by the loader's rule (textcache.h): a directory, not a symbolic
 * link, owned by root, writable by nobody else.  0, or -1 with why. */
static int mkdirs_trusted(const char *dir, char *why, size_t n)
{
	char p[PATH_MAX];

	if (dir[0] != '/' || strlen(dir) >= sizeof(p))
		return snprintf(why, n, "not an absolute path that fits"), -1;
	strcpy(p, dir);
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		struct stat st;
		*s = '\0';
		int r = lstat(p, &st);
		if (r < 0 && errno == ENOENT)
			r = mkdir(p, 0755) < 0 || chmod(p, 0755) < 0 || lstat(p, &st) < 0 ? -1 : 0;
		if (r < 0)
			return snprintf(why, n, "cannot create or look at '%s': %s", p, strerror(errno)), -1;
		if (S_ISLNK(st.st_mode))
			return snprintf(why, n, "'%s' is a symbolic link", p), -1;
		if (!S_ISDIR(st.st_mode))
			return snprintf(why, n, "'%s' is not a directory", p), -1;
		if (st.st_uid != 0)
			return snprintf(why, n, "'%s' is owned by uid %u, not root", p, (unsigned)st.st_uid), -1;
		if (st.st_mode & 022)
			return snprintf(why, n, "'%s' is writable by others than root", p), -1;
		*s = c;
		if (!c || (c == '/' && !s[1]))
			return 0;
	}
}

/* A mountinfo field with its octal escapes (\040 for a space) decoded,
 * in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* The file system type and super options of the mount at dir, from
 * /proc/self/mountinfo: 1 found, 0 not a mount point. */
static int mount_of(const char *dir, char *type, size_t tn, char *opts, size_t on)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char mp[PATH_MAX], *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
			continue;
		unescape(mp);
		if (strcmp(mp, dir))
			continue;
		char t[64], o[1024];
		if (sscanf(dash + 3, "%63s %*s %1023s", t, o) == 2) {
			snprintf(type, tn, "%s", t);
			snprintf(opts, on, "%s", o);
			found = 1; /* the last one: mounts stack */
		}
	}
	fclose(f);
	return found;
}

int textentry_mount(const char *dir, const char *size, char *why, size_t n)
{
	char type[64], opts[1024], data[256];

	if (mkdirs_trusted(dir, why, n) < 0)
		return -1;
	if (mount_of(dir, type, sizeof(type), opts, sizeof(opts))) {
		if (strcmp(type, "tmpfs") || !strstr(opts, "huge=always")) {
			snprintf(why, n, "mounted already, but not as a tmpfs with huge=always (%s %s)", type, opts);
			return -1;
		}
		return 0;
	}
	snprintf(data, sizeof(data), "mode=0755,huge=always%s%s", size ? ",size=" : "", size ? size : "");
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, data) < 0) {
		snprintf(why, n, "cannot mount a tmpfs there (%s): %s", data, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- one entry ---- */

struct move {
	unsigned i;                      /* the program header */
	uint64_t from, to, len;          /* page-aligned file ranges */
};

static int copy_range(int in, int out, uint64_t from, uint64_t to, uint64_t len)
{
	static char buf[TX_HUGE];

	while (len) {
		size_t want = len < sizeof(buf) ? len : sizeof(buf);
		ssize_t got = pread(in, buf, want, (off_t)from);
		if (got < 0)
			return -1;
		if (got == 0)
			return 0; /* past the end of the source: the rest reads as zero */
		for (ssize_t done = 0; done < got;) {
			ssize_t w = pwrite(out, buf + done, (size_t)(got - done), (off_t)(to + (uint64_t)done));
			if (w < 0)
				return -1;
			done += w;
		}
		from += (uint64_t)got, to += (uint64_t)got, len -= (uint64_t)got;
	}
	return 0;
}

static int same_range(int a, uint64_t ao, int b, uint64_t bo, uint64_t len)
{
	static char x[1 << 16], y[1 << 16];

	while (len) {
		size_t want = len < sizeof(x) ? len : sizeof(x);
		ssize_t p = pread(a, x, want, (off_t)ao), q = pread(b, y, want, (off_t)bo);
		if (p != q || p < 0)
			return 0;
		if (p == 0)
			return 1;
		if (memcmp(x, y, (size_t)p))
			return 0;
		ao += (uint64_t)p, bo += (uint64_t)p, len -= (uint64_t)p;
	}
	return 1;
}

/* Where each incongruent executable segment goes: after the end of the
 * copy, at an offset congruent to its p_vaddr modulo 2 MiB.  Returns how
 * many move; *end: the entry's size. */
static unsigned plan(const Elf64_Phdr *ph, unsigned n, uint64_t size, struct move *mv, uint64_t *end)
{
	unsigned k = 0;

	*end = up(size, TX_PAGE);
	for (unsigned i = 0; i < n; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) || !p->p_filesz ||
		    !((p->p_vaddr - p->p_offset) & (TX_HUGE - 1)))
			continue;
		uint64_t to = *end + ((down(p->p_vaddr, TX_PAGE) - *end) & (TX_HUGE - 1));
		mv[k] = (struct move){ i, down(p->p_offset, TX_PAGE), to, up(p->p_offset + p->p_filesz, TX_PAGE) - down(p->p_offset, TX_PAGE) };
		*end = to + mv[k].len;
		k++;
	}
	return k;
}

static int moved(unsigned i, const struct move *mv, unsigned nmv)
{
	for (unsigned k = 0; k < nmv; k++)
		if (mv[k].i == i)
			return 1;
	return 0;
}

/* Whether [lo, lo + len) shares a page with an executable segment that
 * stays in place: bytes the loader maps from the entry, which must be the
 * file's.  A moved segment's old place is mapped by nobody (lld's
 * --no-rosegment puts the ELF header in text that moves). */
static int in_text(const Elf64_Phdr *ph, unsigned n, const struct move *mv, unsigned nmv, uint64_t lo, uint64_t len)
{
	for (unsigned i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && ph[i].p_filesz && !moved(i, mv, nmv) &&
		    lo < up(ph[i].p_offset + ph[i].p_filesz, TX_PAGE) && lo + len > down(ph[i].p_offset, TX_PAGE))
			return 1;
	return 0;
}

/* The moved segments' sections, pointed at their new place. */
static void move_sections(Elf64_Shdr *sh, unsigned nsh, const Elf64_Phdr *ph, const struct move *mv, unsigned nmv)
{
	for (unsigned j = 0; j < nsh; j++)
		for (unsigned k = 0; k < nmv; k++) {
			const Elf64_Phdr *p = &ph[mv[k].i];
			if (sh[j].sh_type != SHT_NOBITS && sh[j].sh_size && sh[j].sh_offset >= p->p_offset &&
			    sh[j].sh_offset + sh[j].sh_size <= p->p_offset + p->p_filesz)
				sh[j].sh_offset += mv[k].to - mv[k].from;
		}
}

/* The pages only a moved segment used, punched out of the copy (tmpfs frees
 * them), unless another segment or a header table shares them. */
static void punch(int t, const Elf64_Ehdr *eh, const Elf64_Phdr *ph, const struct move *mv, unsigned nmv)
{
	uint64_t shsize = (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr);

	for (unsigned k = 0; k < nmv; k++) {
		const Elf64_Phdr *p = &ph[mv[k].i];
		uint64_t lo = up(p->p_offset, TX_PAGE), hi = down(p->p_offset + p->p_filesz, TX_PAGE);
		uint64_t keep[TEXTCACHE_PH_MAX + 3][2];
		unsigned nk = 0;
		for (unsigned i = 0; i < eh->e_phnum; i++)
			if (i != mv[k].i && ph[i].p_type == PT_LOAD && ph[i].p_filesz) {
				keep[nk][0] = down(ph[i].p_offset, TX_PAGE);
				keep[nk++][1] = up(ph[i].p_offset + ph[i].p_filesz, TX_PAGE);
			}
		keep[nk][0] = 0; /* the ELF header */
		keep[nk++][1] = TX_PAGE;
		keep[nk][0] = down(eh->e_phoff, TX_PAGE);
		keep[nk++][1] = up(eh->e_phoff + eh->e_phnum * sizeof(Elf64_Phdr), TX_PAGE);
		keep[nk][0] = down(eh->e_shoff, TX_PAGE);
		keep[nk++][1] = up(eh->e_shoff + shsize, TX_PAGE);
		for (unsigned i = 0; i < nk; i++) {
			if (keep[i][1] <= lo || keep[i][0] >= hi)
				continue;
			if (keep[i][0] <= lo)
				lo = keep[i][1];
			else
				hi = keep[i][0];
		}
		if (lo < hi)
			fallocate(t, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo, (off_t)(hi - lo));
	}
}

/* The moved segments' program and section headers pointed at their new
 * place.  A header table that shares a page with text (librustc_driver's
 * program headers lie in its second text segment) is written anew after
 * the end of the copy, and the ELF header points there: the text's bytes
 * stay the file's.  Returns -1 (EINVAL) when the ELF header itself lies in
 * text that way. */
static int patch(int fd, int t, const Elf64_Ehdr *eh, const Elf64_Phdr *ph, const struct move *mv, unsigned nmv,
		 uint64_t end)
{
	Elf64_Phdr nph[TEXTCACHE_PH_MAX];
	Elf64_Ehdr neh = *eh;
	Elf64_Shdr *sh = NULL;
	uint64_t phsize = eh->e_phnum * sizeof(*ph), shsize = (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr);
	uint64_t at = up(end, 8);
	int r = -1;

	/* Nothing moved: the copy's headers are the file's as they are (where
	 * the text segment starts at offset 0 and holds both header tables,
	 * as GNU ld lays out arm64 programs, rewriting them could only fail). */
	if (!nmv)
		return 0;
	memcpy(nph, ph, phsize);
	for (unsigned k = 0; k < nmv; k++)
		nph[mv[k].i].p_offset += mv[k].to - mv[k].from;
	/* Headers of what lies inside a moved segment (PT_PHDR, PT_NOTE,
	 * PT_GNU_EH_FRAME) follow it, as its sections do. */
	for (unsigned j = 0; j < eh->e_phnum; j++)
		for (unsigned k = 0; k < nmv && ph[j].p_type != PT_LOAD; k++) {
			const Elf64_Phdr *p = &ph[mv[k].i];
			if (ph[j].p_offset >= p->p_offset && ph[j].p_offset + ph[j].p_filesz <= p->p_offset + p->p_filesz)
				nph[j].p_offset += mv[k].to - mv[k].from;
		}
	if (in_text(ph, eh->e_phnum, mv, nmv, eh->e_phoff, phsize)) {
		neh.e_phoff = at;
		at = up(at + phsize, 8);
	}
	if (eh->e_shoff && eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shnum && eh->e_shnum < SHN_LORESERVE &&
	    (sh = malloc(shsize)) && pread(fd, sh, shsize, (off_t)eh->e_shoff) == (ssize_t)shsize) {
		move_sections(sh, eh->e_shnum, ph, mv, nmv);
		if (in_text(ph, eh->e_phnum, mv, nmv, eh->e_shoff, shsize))
			neh.e_shoff = at;
	} else {
		free(sh);
		sh = NULL;
	}
	if ((neh.e_phoff != eh->e_phoff || neh.e_shoff != eh->e_shoff) && in_text(ph, eh->e_phnum, mv, nmv, 0, sizeof(*eh))) {
		errno = EINVAL;
		goto out;
	}
	if (pwrite(t, &neh, sizeof(neh), 0) != (ssize_t)sizeof(neh) ||
	    pwrite(t, nph, phsize, (off_t)neh.e_phoff) != (ssize_t)phsize ||
	    (sh && pwrite(t, sh, shsize, (off_t)neh.e_shoff) != (ssize_t)shsize))
		goto out;
	punch(t, eh, ph, mv, nmv);
	r = 0;
out:
	free(sh);
	return r;
}

static int read_headers(int fd, Elf64_Ehdr *eh, Elf64_Phdr *ph)
{
	if (pread(fd, eh, sizeof(*eh), 0) != (ssize_t)sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > TEXTCACHE_PH_MAX ||
	    pread(fd, ph, eh->e_phnum * sizeof(*ph), (off_t)eh->e_phoff) != (ssize_t)(eh->e_phnum * sizeof(*ph)))
		return errno = ENOEXEC, -1;
	return 0;
}

/* Whether an executable segment shares file bytes or addresses with
 * another loadable segment.  No linker writes that; a file that maps the
 * same text many times over would make an entry many times its size. */
static int overlapping(const Elf64_Phdr *ph, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const Elf64_Phdr *a = &ph[i];
		if (a->p_type != PT_LOAD || !(a->p_flags & PF_X))
			continue;
		for (unsigned j = 0; j < n; j++) {
			const Elf64_Phdr *b = &ph[j];
			if (j == i || b->p_type != PT_LOAD)
				continue;
			if (a->p_filesz && b->p_filesz && a->p_offset < b->p_offset + b->p_filesz &&
			    b->p_offset < a->p_offset + a->p_filesz)
				return 1;
			if (a->p_memsz && b->p_memsz && a->p_vaddr < b->p_vaddr + b->p_memsz &&
			    b->p_vaddr < a->p_vaddr + a->p_memsz)
				return 1;
		}
	}
	return 0;
}

struct range {
	uint64_t lo, hi;
};

static int by_lo(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The byte ranges of the file (size bytes) that an entry holds, sorted and
 * merged, into a malloc'ed *out: the ELF, program and section header
 * tables, the loadable segments (whole pages of the executable ones: the
 * loader maps those pages from the entry) and the sections the section
 * headers describe (symbols, for perf and gdb).  Nothing else: data
 * appended to a file is not copied.  How many, or -1. */
static int content(int fd, const Elf64_Ehdr *eh, const Elf64_Phdr *ph, uint64_t size, struct range **out)
{
	unsigned nsh = eh->e_shoff && eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shnum < SHN_LORESERVE ? eh->e_shnum : 0;
	uint64_t shsize = (uint64_t)nsh * sizeof(Elf64_Shdr);
	Elf64_Shdr *sh = nsh ? malloc(shsize) : NULL;
	struct range *r = malloc((3 + eh->e_phnum + nsh) * sizeof(*r));
	unsigned n = 0;

	if (!r || (nsh && (!sh || pread(fd, sh, shsize, (off_t)eh->e_shoff) != (ssize_t)shsize))) {
		free(sh);
		free(r);
		return errno = ENOEXEC, -1;
	}
	r[n++] = (struct range){ 0, sizeof(*eh) };
	r[n++] = (struct range){ eh->e_phoff, eh->e_phoff + eh->e_phnum * sizeof(*ph) };
	if (nsh)
		r[n++] = (struct range){ eh->e_shoff, eh->e_shoff + shsize };
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz)
			r[n++] = ph[i].p_flags & PF_X ? (struct range){ down(ph[i].p_offset, TX_PAGE), up(ph[i].p_offset + ph[i].p_filesz, TX_PAGE) }
						      : (struct range){ ph[i].p_offset, ph[i].p_offset + ph[i].p_filesz };
	for (unsigned i = 0; i < nsh; i++)
		if (sh[i].sh_type != SHT_NOBITS && sh[i].sh_size)
			r[n++] = (struct range){ sh[i].sh_offset, sh[i].sh_offset + sh[i].sh_size };
	free(sh);
	for (unsigned i = 0; i < n; i++) {
		r[i].hi = r[i].hi < r[i].lo || r[i].hi > size ? size : r[i].hi;
		r[i].lo = r[i].lo > r[i].hi ? r[i].hi : r[i].lo;
	}
	qsort(r, n, sizeof(*r), by_lo);
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		if (r[i].lo == r[i].hi)
			continue;
		if (k && r[i].lo <= r[k - 1].hi)
			r[k - 1].hi = r[i].hi > r[k - 1].hi ? r[i].hi : r[k - 1].hi;
		else
			r[k++] = r[i];
	}
	*out = r;
	return (int)k;
}

/* Whether every byte of the executable segments of the file at fd
 * (headers eh, ph) is where the entry efd holds it (off[i]: the entry's
 * offset of ph[i]). */
static int same_text(int fd, int efd, const Elf64_Ehdr *eh, const Elf64_Phdr *ph, const uint64_t *off)
{
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    !same_range(fd, ph[i].p_offset, efd, off[i], ph[i].p_filesz))
			return 0;
	return 1;
}

/* The entry written to an unnamed file t in the cache; the step that
 * failed in *step. */
static int write_entry(int fd, int t, uint64_t size, const Elf64_Ehdr *eh, const Elf64_Phdr *ph, const char **step)
{
	struct move mv[TEXTCACHE_PH_MAX];
	struct range *r;
	uint64_t end, off[TEXTCACHE_PH_MAX];
	const char *why;
	unsigned nmv = plan(ph, eh->e_phnum, size, mv, &end);

	*step = "laying it out";
	if (overlapping(ph, eh->e_phnum))
		return errno = ENOEXEC, -1;
	*step = "reading its section headers";
	int nr = content(fd, eh, ph, size, &r);
	if (nr < 0)
		return -1;
	*step = "sizing the entry";
	if (ftruncate(t, (off_t)end) < 0) {
		free(r);
		return -1;
	}
	*step = "copying its content";
	for (int i = 0; i < nr; i++)
		if (copy_range(fd, t, r[i].lo, r[i].lo, r[i].hi - r[i].lo) < 0) {
			free(r);
			return -1;
		}
	free(r);
	*step = "copying its text to congruent offsets";
	for (unsigned k = 0; k < nmv; k++)
		if (copy_range(fd, t, mv[k].from, mv[k].to, mv[k].len) < 0)
			return -1;
	*step = "writing the moved segments' headers (EINVAL: its ELF header lies in text that stays)";
	if (patch(fd, t, eh, ph, mv, nmv, end) < 0)
		return -1;
	/* Checked before anyone can see it: the headers, and every byte of
	 * the text where the loader will map it. */
	*step = "checking the copy against the file";
	if (textcache_layout(t, ph, eh->e_phnum, off, &why) < 0 || !same_text(fd, t, eh, ph, off))
		return errno = EIO, -1;
	*step = "making it read-only";
	return fchmod(t, 0444);
}

/* NAME.source: the path the entry NAME copies, readable by root only (the
 * entry's name says nothing of where it comes from). */
static void record_source(int dfd, const char *name, const char *path)
{
	char s[TEXTCACHE_NAME_MAX + sizeof(SOURCE_SUFFIX)];

	snprintf(s, sizeof(s), "%s%s", name, SOURCE_SUFFIX);
	unlinkat(dfd, s, 0);
	int f = openat(dfd, s, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
	if (f < 0)
		return;
	if (write(f, path, strlen(path)) != (ssize_t)strlen(path))
		unlinkat(dfd, s, 0); /* no room: --prune will remove the entry */
	fchmod(f, 0400);
	close(f);
}

/* The path NAME.source records, into src (n bytes); its length, or -1. */
static ssize_t read_source(int dfd, const char *name, char *src, size_t n)
{
	char s[TEXTCACHE_NAME_MAX + sizeof(SOURCE_SUFFIX)];

	snprintf(s, sizeof(s), "%s%s", name, SOURCE_SUFFIX);
	int f = openat(dfd, s, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (f < 0)
		return -1;
	ssize_t got = read(f, src, n - 1);
	close(f);
	if (got <= 0)
		return -1;
	src[got] = '\0';
	return got;
}

/* The good entry of the file open at fd, its headers read into eh and ph
 * (see textentry_open). */
static int open_entry(const char *dir, int fd, Elf64_Ehdr *eh, Elf64_Phdr *ph, uint64_t *off)
{
	char name[TEXTCACHE_NAME_MAX];
	struct statx st;
	const char *why;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) < 0 || read_headers(fd, eh, ph) < 0 ||
	    !textcache_name(&st, name, sizeof(name)))
		return -1;
	int e = textcache_open(dir, name, &why);
	if (e >= 0 && textcache_layout(e, ph, eh->e_phnum, off, &why) < 0) {
		close(e);
		e = -1;
	}
	return e;
}

int textentry_open(const char *dir, int fd, uint64_t *off)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[TEXTCACHE_PH_MAX];

	return open_entry(dir, fd, &eh, ph, off);
}

enum te_result textentry_find(const char *dir, int fd, uint64_t *bytes)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[TEXTCACHE_PH_MAX];
	uint64_t off[TEXTCACHE_PH_MAX];
	struct stat es;
	enum te_result r = TE_FAILED;

	*bytes = 0;
	int e = open_entry(dir, fd, &eh, ph, off);
	if (e >= 0 && fstat(e, &es) == 0) {
		*bytes = (uint64_t)es.st_blocks * 512;
		r = same_text(fd, e, &eh, ph, off) ? TE_PRESENT : TE_STALE;
	}
	if (e >= 0)
		close(e);
	return r;
}

int textentry_remove(const char *dir, int fd)
{
	char name[TEXTCACHE_NAME_MAX];
	struct statx st;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) < 0 || !textcache_name(&st, name, sizeof(name)))
		return -1;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	int r = unlinkat(dfd, name, 0);
	close(dfd);
	return r;
}

/* The entry's name is the file's identity, its timestamps included: a
 * write after the entry was made gives the file another name, so the old
 * entry is never found for it.  That holds only if the write's timestamp
 * differs from the one in the name, and timestamps have a granularity
 * (one timer tick, 1 to 10 ms, where the file system or kernel has no
 * fine-grained ones: before Linux 6.13).  So an entry is made only from a
 * file whose last change is at least SETTLE_NS old: any later write gets a
 * later timestamp. */
#define SETTLE_NS 20000000LL

static void settle(const struct statx *st)
{
	struct timespec now;

	if (clock_gettime(CLOCK_REALTIME, &now) < 0)
		return;
	long long age = ((long long)now.tv_sec - st->stx_ctime.tv_sec) * 1000000000LL + now.tv_nsec - st->stx_ctime.tv_nsec;
	if (age >= 0 && age < SETTLE_NS) {
		struct timespec d = { 0, (long)(SETTLE_NS - age) };
		nanosleep(&d, NULL);
	}
}

/* Whether the file open at fd still has identity st, after its copy: a
 * write meanwhile changed its name, and the copy may hold some of both. */
static int unchanged(int fd, const struct statx *st)
{
	char a[TEXTCACHE_NAME_MAX], b[TEXTCACHE_NAME_MAX];
	struct statx now;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &now) < 0 || !textcache_name(st, a, sizeof(a)) ||
	    !textcache_name(&now, b, sizeof(b)) || strcmp(a, b))
		return errno = EAGAIN, 0;
	return 1;
}

/* dir opened, with a bad entry of that name removed: its descriptor, or
 * -1 (errno, *step). */
static int cache_dir_for(const char *dir, const char *name, const char **step)
{
	*step = "opening the cache directory";
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd >= 0)
		unlinkat(dfd, name, 0);
	return dfd;
}

/* r, once t (if open) and dfd are closed, errno as it was. */
static enum te_result closed(int t, int dfd, enum te_result r)
{
	int saved = errno;

	if (t >= 0)
		close(t);
	close(dfd);
	errno = saved;
	return r;
}

/* The unnamed entry t, written from fd (identity st), named name in dfd
 * once fd is seen unchanged, its source recorded: TE_MADE, TE_PRESENT
 * (another tiexec-warm made it just now) or TE_FAILED (errno, *step). */
static enum te_result publish(int dfd, int t, int fd, const struct statx *st, const char *name, const char *path,
			      const char **step)
{
	char link[64];

	*step = "checking that it did not change";
	if (!unchanged(fd, st))
		return TE_FAILED;
	record_source(dfd, name, path);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", t);
	*step = "naming the entry (linkat)";
	if (linkat(AT_FDCWD, link, dfd, name, AT_SYMLINK_FOLLOW) == 0)
		return TE_MADE;
	return errno == EEXIST ? TE_PRESENT : TE_FAILED;
}

enum te_result textentry_make(const char *dir, const char *path, int fd, uint64_t *bytes, const char **step)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[TEXTCACHE_PH_MAX];
	char name[TEXTCACHE_NAME_MAX];
	struct statx st;
	struct stat es;

	if (textentry_find(dir, fd, bytes) == TE_PRESENT)
		return TE_PRESENT;
	*step = "reading its headers";
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) < 0 || read_headers(fd, &eh, ph) < 0 ||
	    !textcache_name(&st, name, sizeof(name)))
		return TE_FAILED;
	settle(&st);
	int dfd = cache_dir_for(dir, name, step);
	if (dfd < 0)
		return TE_FAILED;
	*step = "creating an unnamed file in the cache (O_TMPFILE)";
	int t = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0444);
	enum te_result r = TE_FAILED;
	if (t >= 0 && write_entry(fd, t, st.stx_size, &eh, ph, step) == 0 &&
	    (r = publish(dfd, t, fd, &st, name, path, step)) != TE_FAILED && fstat(t, &es) == 0)
		*bytes = (uint64_t)es.st_blocks * 512;
	return closed(t, dfd, r);
}

/* Whether the window entry open at e holds the end bytes of fd's start
 * at offset at, in 2 MiB; *bytes: its size in memory. */
static int same_window(int fd, int e, uint64_t end, uint64_t at, uint64_t *bytes)
{
	struct stat es;

	if (fstat(e, &es) < 0)
		return 0;
	*bytes = (uint64_t)es.st_blocks * 512;
	return (uint64_t)es.st_size == TX_HUGE && at + end <= TX_HUGE && same_range(fd, 0, e, at, end);
}

/* An unnamed window entry in dfd, with fd's first end bytes at offset at,
 * checked and read-only: its descriptor, or -1 (errno, *step). */
static int write_window(int dfd, int fd, uint64_t end, uint64_t at, const char **step)
{
	uint64_t bytes;
	*step = "creating an unnamed file in the cache (O_TMPFILE)";
	int t = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0444);

	if (t < 0)
		return -1;
	*step = "sizing the window entry";
	if (ftruncate(t, (off_t)TX_HUGE) == 0 && (*step = "copying its read-only image",
						   at + end <= TX_HUGE && copy_range(fd, t, 0, at, end) == 0) &&
	    (*step = "checking the copy against the file", same_window(fd, t, end, at, &bytes) || (errno = EIO, 0)) &&
	    (*step = "making it read-only", fchmod(t, 0444) == 0))
		return t;
	int saved = errno;
	close(t);
	errno = saved;
	return -1;
}

enum te_result textentry_window(const char *dir, const char *path, int fd, uint64_t end, uint64_t at, int make,
				uint64_t *bytes, const char **step)
{
	char name[TEXTCACHE_NAME_MAX];
	const char *why;
	struct statx st;

	*bytes = 0;
	*step = "reading its identity";
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) < 0 || !textcache_window_name(&st, name, sizeof(name)))
		return TE_FAILED;
	int e = textcache_open(dir, name, &why);
	if (e >= 0) {
		int same = same_window(fd, e, end, at, bytes);
		close(e);
		if (same)
			return TE_PRESENT;
		if (!make)
			return TE_STALE;
	} else if (!make) {
		return TE_FAILED;
	}
	settle(&st);
	int dfd = cache_dir_for(dir, name, step);
	if (dfd < 0)
		return TE_FAILED;
	enum te_result r = TE_FAILED;
	int t = write_window(dfd, fd, end, at, step);
	if (t >= 0 && (r = publish(dfd, t, fd, &st, name, path, step)) != TE_FAILED)
		same_window(fd, t, end, at, bytes);
	return closed(t, dfd, r);
}

/* Whether the file open at e holds exactly the n bytes at b. */
static int same_bytes(int e, const void *b, size_t n)
{
	static char have[PLANREC_MAX + 1];

	return n <= PLANREC_MAX && pread(e, have, n + 1, 0) == (ssize_t)n && !memcmp(have, b, n);
}

/* The n bytes at b written to t: 0, or -1 with errno (ENOSPC where the
 * tmpfs took fewer). */
static int write_all(int t, const void *b, size_t n)
{
	ssize_t k = write(t, b, n);

	if (k == (ssize_t)n)
		return 0;
	if (k >= 0)
		errno = ENOSPC;
	return -1;
}

enum te_result textentry_plan(const char *dir, const char *path, int fd, const void *rec, size_t n, const char **step)
{
	char name[TEXTCACHE_NAME_MAX + sizeof(PLANREC_SUFFIX)];
	const char *why;
	struct statx st;
	size_t k;

	*step = "reading its identity";
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) < 0 || !(k = textcache_name(&st, name, TEXTCACHE_NAME_MAX)))
		return TE_FAILED;
	memcpy(name + k, PLANREC_SUFFIX, sizeof(PLANREC_SUFFIX));
	int e = textcache_open(dir, name, &why);
	if (e >= 0) {
		int same = same_bytes(e, rec, n);
		close(e);
		if (same)
			return TE_PRESENT;
	}
	settle(&st);
	int dfd = cache_dir_for(dir, name, step); /* a record that differs: replaced */
	if (dfd < 0)
		return TE_FAILED;
	*step = "creating an unnamed file in the cache (O_TMPFILE)";
	int t = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0444);
	enum te_result r = TE_FAILED;
	if (t >= 0 && (*step = "writing the plan record", write_all(t, rec, n) == 0) &&
	    (*step = "making it read-only", fchmod(t, 0444) == 0))
		r = publish(dfd, t, fd, &st, name, path, step);
	return closed(t, dfd, r);
}

/* Whether the window entry of the file open at fd is its image. */
static int window_present(const char *dir, int fd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[TEXTCACHE_PH_MAX];
	uint64_t bytes, end, at;
	const char *step;

	return read_headers(fd, &eh, ph) == 0 && (end = textcache_window_end(ph, eh.e_phnum)) &&
	       (at = textcache_window_at(ph, eh.e_phnum)) &&
	       textentry_window(dir, NULL, fd, end, at, 0, &bytes, &step) == TE_PRESENT;
}

/* ---- pruning ---- */

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix);
}

/* The name of a file's entry, with identity st, into name (n bytes): its
 * text's (textcache_name), its window's (win) or its plan record's
 * (plan).  Whether it fits. */
static int entry_name(const struct statx *st, int win, int plan, char *name, size_t n)
{
	size_t k = (win ? textcache_window_name : textcache_name)(st, name, n - sizeof(PLANREC_SUFFIX));

	if (k && plan)
		memcpy(name + k, PLANREC_SUFFIX, sizeof(PLANREC_SUFFIX));
	return k != 0;
}

int textentry_prune(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int removed = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char src[PATH_MAX], name[TEXTCACHE_NAME_MAX], s[TEXTCACHE_NAME_MAX + sizeof(SOURCE_SUFFIX)];
		struct statx st;
		const char *why = NULL;
		if (de->d_name[0] == '.' || strlen(de->d_name) >= TEXTCACHE_NAME_MAX)
			continue;
		if (has_suffix(de->d_name, SOURCE_SUFFIX)) {
			/* A record whose entry is gone. */
			snprintf(name, sizeof(name), "%.*s", (int)(strlen(de->d_name) - strlen(SOURCE_SUFFIX)), de->d_name);
			if (faccessat(dirfd(d), name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
				unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		int win = has_suffix(de->d_name, TEXTCACHE_WINDOW), plan = has_suffix(de->d_name, PLANREC_SUFFIX);
		ssize_t n = read_source(dirfd(d), de->d_name, src, sizeof(src));
		struct stat ss;
		uint64_t bytes;
		int sfd = n > 0 ? trust_open(src, NULL, &ss) : -1;
		if (n <= 0)
			why = "its source is not recorded";
		else if (sfd < 0 || statx(sfd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st) < 0)
			why = "its source is gone";
		else if (!entry_name(&st, win, plan, name, sizeof(name)) || strcmp(name, de->d_name))
			why = "its source changed";
		else if (!plan && (win ? !window_present(dir, sfd) : textentry_find(dir, sfd, &bytes) != TE_PRESENT))
			why = "its text differs from its source's";
		if (sfd >= 0)
			close(sfd);
		if (!why)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0) {
			printf("%s/%s: removed (%s%s%s)\n", dir, de->d_name, why, n > 0 ? ": " : "", n > 0 ? src : "");
			snprintf(s, sizeof(s), "%s%s", de->d_name, SOURCE_SUFFIX);
			unlinkat(dirfd(d), s, 0);
			removed++;
		}
	}
	closedir(d);
	return removed;
}
