/* The shared text cache (see textcache.h).  Compiled into the loader
 * (freestanding) and tiexec-warm (hosted): it includes only bits.h, sys.h
 * and fsfolio.h. */
#include "textcache.h"

#include <errno.h>

#include "bits.h"
#include "fsfolio.h"
#include "sys.h"

#define TC_HUGE (2ULL << 20)
#define TC_O_NOFOLLOW 0400000
#define TC_O_DIRECTORY 0200000
#define TC_AT_SYMLINK_NOFOLLOW 0x100

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

	if (type == 0120000)
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
	char p[4096];
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
		if (sys_statx(TX_AT_FDCWD, p, TC_AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MODE | STATX_UID, &st) < 0)
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
	struct statx st;
	int dfd, fd;

	*why = textcache_dir_untrusted(dir);
	if (*why)
		return -1;
	dfd = (int)sys_openat(TX_AT_FDCWD, dir, O_RDONLY | O_CLOEXEC | TC_O_DIRECTORY | TC_O_NOFOLLOW, 0);
	if (dfd < 0) {
		*why = "the cache directory cannot be opened";
		return -1;
	}
	fd = (int)sys_openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | TC_O_NOFOLLOW, 0);
	sys_close(dfd);
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
	Elf64_Ehdr eh;
	Elf64_Phdr eph[TEXTCACHE_PH_MAX];

	*why = "the entry's headers are not the file's";
	if (n > TEXTCACHE_PH_MAX || sys_pread(efd, &eh, sizeof(eh), 0) != (long)sizeof(eh) || eh.e_phnum != n ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    sys_pread(efd, eph, n * sizeof(Elf64_Phdr), eh.e_phoff) != (long)(n * sizeof(Elf64_Phdr)))
		return -1;
	for (unsigned i = 0; i < n; i++) {
		const Elf64_Phdr *a = &ph[i], *b = &eph[i];
		if (a->p_type != b->p_type || a->p_flags != b->p_flags || a->p_vaddr != b->p_vaddr ||
		    a->p_filesz != b->p_filesz || a->p_memsz != b->p_memsz)
			return -1;
		off[i] = b->p_offset;
		if (a->p_type != PT_LOAD || !(a->p_flags & PF_X))
			continue;
		if ((b->p_offset - b->p_vaddr) & (TC_HUGE - 1)) {
			*why = "the entry's text is not congruent to its addresses";
			return -1;
		}
	}
	*why = NULL;
	return 0;
}
