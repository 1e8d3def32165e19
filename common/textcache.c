/* The shared text cache (see textcache.h).  Compiled into the loader
 * (freestanding) and tiexec-warm (hosted): it includes only bits.h, sys.h
 * and fsfolio.h. */
#include "textcache.h"

#include <errno.h>

#include "bits.h"
#include "geom.h"
#include "fsfolio.h"
#include "sys.h"


static size_t put(char *out, size_t at, size_t n, const char *s)
{
	while (*s && at + 1 < n)
		out[at++] = *s++;
	return at;
}

static size_t put_hex(char *out, size_t at, size_t n, uint64_t v)
{
	char t[17];

	return put(out, at, n, tx_hex(t, v));
}

size_t textcache_name(const struct statx *st, char *out, size_t n)
{
	const uint64_t f[] = {
		(uint64_t)st->stx_dev_major << 32 | st->stx_dev_minor,
		st->stx_ino,
		st->stx_size,
		(uint64_t)st->stx_mtime.tv_sec,
		st->stx_mtime.tv_nsec,
		(uint64_t)st->stx_ctime.tv_sec,
		st->stx_ctime.tv_nsec,
	};
	size_t at = 0;

	for (unsigned i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (i)
			at = put(out, at, n, ".");
		at = put_hex(out, at, n, f[i]);
	}
	if (at + 1 >= n)
		return 0;
	out[at] = '\0';
	return at;
}

/* Why what statx says of a directory (or, leaf, of an entry) makes it
 * untrusted, or NULL. */
static const char *owner_why(const struct statx *st, int leaf)
{
	unsigned type = st->stx_mode & S_IFMT;

	if (type == S_IFLNK)
		return leaf ? "the entry is a symbolic link" : "a symbolic link on the way to the cache";
	if (type != (leaf ? S_IFREG : S_IFDIR))
		return leaf ? "the entry is not a regular file" : "not a directory on the way to the cache";
	if (st->stx_uid != 0)
		return leaf ? "the entry is not owned by root" : "a directory on the way to the cache is not owned by root";
	if (st->stx_mode & 022)
		return leaf ? "the entry is writable by others than root"
			    : "a directory on the way to the cache is writable by others than root";
	return NULL;
}

const char *textcache_dir_untrusted(const char *dir)
{
	char p[PATH_MAX];
	size_t n = 0;

	if (dir[0] != '/')
		return "the cache directory is not an absolute path";
	for (;;) {
		struct statx st;
		/* p: dir up to the component ending at dir[n] ("/" first). */
		size_t len = n ? n : 1;
		if (len >= sizeof(p))
			return "the cache directory's path is too long";
		for (size_t i = 0; i < len; i++)
			p[i] = dir[i];
		p[len] = '\0';
		if (sys_statx(TX_AT_FDCWD, p, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MODE | STATX_UID, &st) < 0)
			return "there is no cache directory (tiexec-warm makes it)";
		const char *why = owner_why(&st, 0);
		if (why)
			return why;
		if (!dir[n] || (!dir[n + 1] && dir[n] == '/'))
			return NULL;
		for (n++; dir[n] && dir[n] != '/'; n++)
			;
	}
}

int textcache_open(const char *dir, const char *name, const char **why)
{
	struct textcache_trust t = { 0 };

	return textcache_open_with(dir, &t, name, why);
}

int textcache_open_with(const char *dir, struct textcache_trust *t, const char *name, const char **why)
{
	char p[PATH_MAX];
	struct statx st;
	size_t n;
	int fd;

	if (!t->asked) {
		t->why = textcache_dir_untrusted(dir);
		t->asked = 1;
	}
	*why = t->why;
	if (*why)
		return -1;
	/* By its whole path: every directory on it was just found to be
	 * root's, so only root could swap one since, and O_NOFOLLOW refuses
	 * a link as the entry (one open, not the directory's and then the
	 * entry's: each is a path walk and a file at every start). */
	n = put(p, 0, sizeof(p), dir);
	if (n && p[n - 1] != '/')
		n = put(p, n, sizeof(p), "/");
	n = put(p, n, sizeof(p), name);
	if (n + 1 >= sizeof(p)) {
		*why = "the cache directory's path is too long";
		return -1;
	}
	p[n] = '\0';
	fd = (int)sys_openat(TX_AT_FDCWD, p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0);
	if (fd < 0) {
		*why = fd == -ENOENT ? NULL : fd == -ELOOP ? "the entry is a symbolic link" : "the entry cannot be opened";
		return -1;
	}
	if (sys_statx(fd, "", TX_AT_EMPTY_PATH, STATX_TYPE | STATX_MODE | STATX_UID, &st) < 0)
		*why = "the entry cannot be checked";
	else if (!(*why = owner_why(&st, 1)) && !fs_is_tmpfs(fd))
		*why = "the cache is not on a tmpfs";
	if (*why) {
		sys_close(fd);
		return -1;
	}
	return fd;
}

int textcache_layout(int efd, const Elf64_Phdr *ph, unsigned n, uint64_t *off, const char **why)
{
	/* The ELF header and, where they follow it (as tiexec-warm writes
	 * them), the program headers: one read. */
	union {
		Elf64_Ehdr eh;
		unsigned char b[sizeof(Elf64_Ehdr) + TEXTCACHE_PH_MAX * sizeof(Elf64_Phdr)];
	} h;
	const Elf64_Ehdr *eh = &h.eh;
	const Elf64_Phdr *eph = (const Elf64_Phdr *)(void *)(h.b + sizeof(Elf64_Ehdr));
	size_t phsize = n * sizeof(Elf64_Phdr);

	*why = "the entry's headers are not the file's";
	if (n > TEXTCACHE_PH_MAX)
		return -1;
	long got = sys_pread(efd, h.b, sizeof(Elf64_Ehdr) + phsize, 0);
	if (got < (long)sizeof(Elf64_Ehdr) || eh->e_phnum != n || eh->e_phentsize != sizeof(Elf64_Phdr))
		return -1;
	if ((eh->e_phoff != sizeof(Elf64_Ehdr) || got != (long)(sizeof(Elf64_Ehdr) + phsize)) &&
	    sys_pread(efd, h.b + sizeof(Elf64_Ehdr), phsize, eh->e_phoff) != (long)phsize)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		const Elf64_Phdr *a = &ph[i], *b = &eph[i];
		if (a->p_type != b->p_type || a->p_flags != b->p_flags || a->p_vaddr != b->p_vaddr ||
		    a->p_filesz != b->p_filesz || a->p_memsz != b->p_memsz)
			return -1;
		off[i] = b->p_offset;
		if (a->p_type != PT_LOAD || !(a->p_flags & PF_X))
			continue;
		if ((b->p_offset - b->p_vaddr) & (TX_HUGE - 1)) {
			*why = "the entry's text is not congruent to its addresses";
			return -1;
		}
	}
	*why = NULL;
	return 0;
}


/* See textcache.h: the library's segments before the first writable one, if they map the file's first
 * bytes as they lie there (p_offset the distance from the first one's
 * p_vaddr, the first at offset 0) and end by the writable one's first
 * page and within 2 MiB.  0 otherwise. */
uint64_t textcache_window_end(const Elf64_Phdr *ph, unsigned n)
{
	uint64_t lo = UINT64_MAX, end = 0;

	for (unsigned i = 0; i < n; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type != PT_LOAD || !p->p_memsz)
			continue;
		if (lo == UINT64_MAX) {
			lo = p->p_vaddr;
			if (p->p_offset || lo % TX_PAGE)
				return 0;
		}
		if (p->p_flags & PF_W) {
			uint64_t top = tx_up(end, TX_PAGE);
			return top <= tx_down(p->p_vaddr, TX_PAGE) && top - lo <= TX_HUGE ? top - lo : 0;
		}
		if (p->p_offset != p->p_vaddr - lo || p->p_memsz != p->p_filesz)
			return 0;
		end = p->p_vaddr + p->p_memsz;
	}
	return 0;
}

/* See textcache.h: 2 MiB - END for a page-aligned library; for one in a
 * reservation of p_align A, 2 MiB - END rounded down to A, where the
 * window's top then stays below its writable segment's first page. */
uint64_t textcache_window_at(const Elf64_Phdr *ph, unsigned n)
{
	uint64_t end = textcache_window_end(ph, n), align = 0, lo = UINT64_MAX, rw = 0;

	if (!end)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		if (ph[i].p_type != PT_LOAD || !ph[i].p_memsz)
			continue;
		if (lo == UINT64_MAX)
			lo = ph[i].p_vaddr;
		if (ph[i].p_align > align)
			align = ph[i].p_align;
		if ((ph[i].p_flags & PF_W) && !rw)
			rw = tx_down(ph[i].p_vaddr, TX_PAGE) - lo;
	}
	if (align <= TX_PAGE)
		return TX_HUGE - end;
	if (align & (align - 1) || align >= TX_HUGE)
		return 0;
	uint64_t at = tx_down(TX_HUGE - end, align);
	return at && TX_HUGE - at <= rw ? at : 0;
}

size_t textcache_window_name(const struct statx *st, char *out, size_t n)
{
	size_t at = textcache_name(st, out, n);

	if (!at || at + sizeof(TEXTCACHE_WINDOW) > n)
		return 0;
	at = put(out, at, n, TEXTCACHE_WINDOW);
	out[at] = '\0';
	return at;
}

int textcache_window_present(const char *dir, const struct statx *st)
{
	char p[4096 + TEXTCACHE_NAME_MAX];
	size_t at = put(p, 0, sizeof(p) - TEXTCACHE_NAME_MAX - 1, dir);

	if (dir[at])
		return 0; /* longer than a path */
	p[at++] = '/';
	return textcache_window_name(st, p + at, sizeof(p) - at) && sys_faccessat(TX_AT_FDCWD, p, 0) == 0 /* F_OK */;
}

int textcache_windowed(const char *path)
{
	return tx_streq(tx_basename(path), "libc.so.6");
}
