/* Stepping aside for a debugger or tracer (see aside.h). */
#include "aside.h"

#include <errno.h>

#include "extent.h"
#include "rt.h"
#include "mark.h"
#include "proc.h"
#include "sys.h"

#define DIR_MAX 512 /* the directory of copies' path, NUL included */

long traced_by(void)
{
	static char b[4096];
	int fd = (int)sys_openat(TX_AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
	long n = fd >= 0 ? sys_read(fd, b, sizeof(b) - 1) : -1;
	long pid = 0;

	if (fd >= 0)
		sys_close(fd);
	b[n > 0 ? n : 0] = '\0';
	for (const char *p = b; *p; p++) {
		const char *v = (p == b || p[-1] == '\n') ? tx_skip(p, "TracerPid:") : NULL;
		if (!v)
			continue;
		while (*v == ' ' || *v == '\t')
			v++;
		while (*v >= '0' && *v <= '9')
			pid = pid * 10 + (*v++ - '0');
		break;
	}
	return pid;
}

/* The stamp's marker bit cleared in a copy of the ELF header's bytes from
 * offset off: binfmt_misc then leaves the copy to the kernel's own loader. */
static void clear_mark(unsigned char *b, uint64_t off, long n)
{
	if (off <= TIEXEC_MARK_BYTE && TIEXEC_MARK_BYTE < off + (uint64_t)n)
		b[TIEXEC_MARK_BYTE - off] &= (unsigned char)~(TIEXEC_MARK_FLAG >> 16);
}

/* What a copy holds, and what it may cost.  A copy has the program's
 * size, but only its data: holes stay holes (SEEK_DATA, SEEK_HOLE), so a
 * sparse file costs the debugging user what it has on disk, in $TMPDIR
 * or, failing that, in a memfd.  And the data must be the program's: its
 * ELF content (the headers, every loadable segment and every section, a
 * debugger's symbols included) and at most TRAILER_MAX of data past it (a
 * signature, an archive a program appends to itself); a file with more,
 * which no direct exec would read, gets no copy. */
#define TRAILER_MAX (16ULL << 20)
/* Whether the program open at in may be copied: its size into *size, or
 * why not into *why.  Every system call here has a second way, or is
 * done without: a filter refusing any one of them (the reason we may be
 * here) must leave a copy possible. */
static int copyable(int in, uint64_t *size, const char **why)
{
	struct statx st;
	uint64_t lo, hi, past = 0, end;

	if (sys_statx(in, "", TX_AT_EMPTY_PATH, STATX_SIZE, &st) == 0) {
		*size = st.stx_size;
	} else {
		long n = extent_seek(in, 0, TX_SEEK_END);
		if (n < 0) {
			*why = "its size cannot be read";
			return 0;
		}
		*size = (uint64_t)n;
	}
	end = extent_content_end(in);
	if (!end) /* headers unreadable: nothing to bound by, holes still kept */
		return 1;
	for (uint64_t off = end; extent_next_data(in, off, *size, &lo, &hi); off = hi)
		past += hi - lo;
	if (past > TRAILER_MAX) {
		*why = "it holds more than 16 MiB of data past its ELF content, which no direct exec reads";
		return 0;
	}
	return 1;
}

/* One range [lo, hi) of in into out at the same offset: by sendfile, or
 * by read and write with the marker bit cleared on the way. */
static int move_range(int in, int out, uint64_t lo, uint64_t hi, int by_read)
{
	static unsigned char b[65536];

	if (extent_seek(out, lo, TX_SEEK_SET) != (long)lo || (by_read && extent_seek(in, lo, TX_SEEK_SET) != (long)lo))
		return -1;
	for (uint64_t off = lo; off < hi;) {
		uint64_t want = hi - off;
		long n;
		if (!by_read) {
			n = SC(__NR_sendfile, out, in, &off, want < (1ULL << 30) ? want : 1ULL << 30, 0, 0);
			if (n <= 0)
				return -1;
			continue;
		}
		n = sys_read(in, b, want < sizeof(b) ? want : sizeof(b));
		if (n <= 0)
			return -1;
		clear_mark(b, off, n);
		for (long w = 0; w < n;) {
			long k = sys_write(out, b + w, (size_t)(n - w));
			if (k <= 0)
				return -1;
			w += k;
		}
		off += (uint64_t)n;
	}
	return 0;
}

/* The program's data (size bytes, holes kept) into out, unstamped. */
static int copy_way(int in, int out, uint64_t size, int by_read)
{
	uint64_t lo, hi;
	unsigned char mark;

	if (SC(__NR_ftruncate, out, 0, 0, 0, 0, 0) != 0)
		return -1;
	for (uint64_t off = 0; extent_next_data(in, off, size, &lo, &hi); off = hi)
		if (move_range(in, out, lo, hi, by_read) != 0)
			return -1;
	if (SC(__NR_ftruncate, out, size, 0, 0, 0, 0) != 0)
		return -1;
	if (by_read)
		return 0;
	if (sys_pread(out, &mark, 1, TIEXEC_MARK_BYTE) != 1)
		return -1;
	clear_mark(&mark, TIEXEC_MARK_BYTE, 1);
	return sys_pwrite(out, &mark, 1, TIEXEC_MARK_BYTE) == 1 ? 0 : -1;
}

/* The program's bytes into out, unstamped.  Two ways, so that a seccomp
 * filter refusing any one system call (the reason we may be here) leaves
 * one of them. */
static int copy_unstamped(int in, int out, uint64_t size)
{
	return copy_way(in, out, size, 0) == 0 || copy_way(in, out, size, 1) == 0 ? 0 : -1;
}

/* Our directory for copies, $TMPDIR/tiexec-aside-UID (else /tmp): made
 * mode 0700, and used only if it is a directory of ours that nobody else
 * can write.  Its descriptor, or -1. */
static int aside_dir(char **envp, char dir[DIR_MAX])
{
	const char *tmp = "/tmp";
	struct msg m;
	struct statx st;
	long uid = SC(__NR_geteuid, 0, 0, 0, 0, 0, 0);

	for (char **e = envp; *e; e++) {
		const char *v = tx_skip(*e, "TMPDIR=");
		if (v && *v == '/' && strlen(v) < 256)
			tmp = v;
	}
	m.n = 0;
	msg_str(&m, tmp);
	msg_str(&m, "/tiexec-aside-");
	msg_u64(&m, (uint64_t)uid);
	if (m.n >= DIR_MAX)
		return -1;
	memcpy(dir, m.b, m.n);
	dir[m.n] = '\0';
	SC(__NR_mkdirat, TX_AT_FDCWD, dir, 0700, 0, 0, 0);
	int fd = (int)sys_openat(TX_AT_FDCWD, dir, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW, 0);
	if (fd < 0)
		return -1;
	if (sys_statx(fd, "", TX_AT_EMPTY_PATH, STATX_UID | STATX_MODE, &st) < 0 || st.stx_uid != (uint32_t)uid ||
	    (st.stx_mode & 077)) {
		sys_close(fd);
		return -1;
	}
	return fd;
}

/* What a copy is of, kept beside it in a file named RECORD: the program's
 * identity (inode, size, change time: a rebuild changes it), the name it
 * was run by (the copy's), and its resolved path, one a line.  A dot name,
 * so that it is not a program's name; a program named RECORD itself gets
 * the memfd copy. */
#define RECORD ".source"

struct origin {
	struct msg line; /* the three lines */
	struct msg key;  /* the copy's directory: the path's hash, in hex */
	char path[PATH_MAX];
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static int origin_of(int fd, const char *base, struct origin *o)
{
	struct statx st;

	if (sys_statx(fd, "", TX_AT_EMPTY_PATH, STATX_INO | STATX_SIZE | STATX_CTIME, &st) < 0 ||
	    fd_link(fd, o->path, sizeof(o->path)) < 0 || strlen(o->path) > 900 || memchr(base, '\n', strlen(base)))
		return -1;
	o->line.n = 0;
	msg_hex(&o->line, st.stx_ino);
	msg_str(&o->line, " ");
	msg_hex(&o->line, st.stx_size);
	msg_str(&o->line, " ");
	msg_hex(&o->line, (uint64_t)st.stx_ctime.tv_sec);
	msg_str(&o->line, ".");
	msg_hex(&o->line, st.stx_ctime.tv_nsec);
	msg_str(&o->line, "\n");
	msg_str(&o->line, base);
	msg_str(&o->line, "\n");
	msg_str(&o->line, o->path);
	msg_str(&o->line, "\n");
	o->key.n = 0;
	msg_hex(&o->key, fnv1a(o->path));
	o->key.b[o->key.n] = '\0';
	return 0;
}

/* The RECORD in dir, into m (NUL-terminated); its length or -1. */
static long read_source(int dir, struct msg *m)
{
	int f = (int)sys_openat(dir, RECORD, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0);
	long n = f >= 0 ? sys_read(f, m->b, sizeof(m->b) - 1) : -1;

	if (f >= 0)
		sys_close(f);
	m->n = n > 0 ? (size_t)n : 0;
	m->b[m->n] = '\0';
	return n;
}

/* A file of dir written whole under a temporary name, then renamed to
 * name: readers see the old one or the new one.  By copying the program
 * unstamped (from >= 0) or writing text. */
static int write_file(int dir, const char *name, int from, uint64_t size, const struct msg *text)
{
	struct msg tmp;

	tmp.n = 0;
	msg_str(&tmp, name);
	msg_str(&tmp, ".new.");
	msg_u64(&tmp, (uint64_t)SC(__NR_getpid, 0, 0, 0, 0, 0, 0));
	tmp.b[tmp.n] = '\0';
	int c = (int)sys_openat(dir, tmp.b, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0700);
	if (c < 0)
		return -1;
	int ok = from >= 0 ? copy_unstamped(from, c, size) == 0 : sys_write(c, text->b, text->n) == (long)text->n;
	sys_close(c);
	if (ok && SC(__NR_renameat2, dir, tmp.b, dir, name, 0, 0) == 0)
		return 0;
	SC(__NR_unlinkat, dir, tmp.b, 0, 0, 0, 0);
	return -1;
}

/* Copies of programs that are gone (their path names nothing now) are
 * removed, in the first 256 entries of the directory of copies: done when
 * a copy is made, so the directory holds one copy per program path that
 * still exists, and a few more at most. */
static void prune(int top)
{
	static char d[8192];
	struct msg src;
	int seen = 0;

	for (long n; seen < 256 && (n = SC(__NR_getdents64, top, d, sizeof(d), 0, 0, 0)) > 0;) {
		for (long off = 0; off < n && seen < 256; seen++) {
			const char *name = tx_dirent_name(d + off);
			off += tx_dirent_reclen(d + off);
			int k = name[0] == '.' ? -1 : (int)sys_openat(top, name, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW, 0);
			if (k < 0)
				continue;
			char *base = read_source(k, &src) > 0 ? memchr(src.b, '\n', src.n) : NULL;
			char *path = base ? memchr(base + 1, '\n', (size_t)(src.b + src.n - base - 1)) : NULL;
			struct statx st;
			if (path && src.b[src.n - 1] == '\n') {
				*path++ = '\0';
				src.b[src.n - 1] = '\0';
				if (sys_statx(TX_AT_FDCWD, path, 0, STATX_TYPE, &st) == -ENOENT) {
					SC(__NR_unlinkat, k, base + 1, 0, 0, 0, 0);
					SC(__NR_unlinkat, k, RECORD, 0, 0, 0, 0);
					SC(__NR_unlinkat, top, name, AT_REMOVEDIR, 0, 0, 0);
				}
			}
			sys_close(k);
		}
	}
}

/* The unstamped copy with a path of its own (a debugger loads the symbols
 * of the file /proc/PID/exe names): TOP/KEY/NAME, KEY the hash of the
 * program's path, NAME the name it was run by, which the kernel makes the
 * process's name (comm, a Go program's thread names).  Made once, reused
 * while the program is unchanged, replaced when it was rebuilt: one copy
 * per program path.  The descriptor of its directory, or -1; its name
 * there in *base, the directory's path in key_path. */
static int file_copy(int fd, uint64_t size, const char *name, char **envp, const char **base, struct msg *key_path)
{
	static struct origin o;
	static struct msg have;
	static char top_path[DIR_MAX];
	int top = aside_dir(envp, top_path), dir = -1;

	*base = tx_basename(name);
	if (top < 0 || !**base || strlen(*base) > 200 || tx_streq(*base, RECORD) || origin_of(fd, *base, &o) < 0)
		goto fail;
	SC(__NR_mkdirat, top, o.key.b, 0700, 0, 0, 0);
	dir = (int)sys_openat(top, o.key.b, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW, 0);
	if (dir < 0)
		goto fail;
	struct statx cst;
	if (read_source(dir, &have) == (long)o.line.n && !memcmp(have.b, o.line.b, o.line.n) &&
	    sys_statx(dir, *base, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &cst) == 0 && (cst.stx_mode & S_IFMT) == S_IFREG)
		goto done;
	if (write_file(dir, *base, fd, size, NULL) < 0 || write_file(dir, RECORD, -1, 0, &o.line) < 0)
		goto fail;
	prune(top);
done:
	key_path->n = 0;
	msg_str(key_path, top_path);
	msg_str(key_path, "/");
	msg_str(key_path, o.key.b);
	sys_close(top);
	return dir;
fail:
	if (dir >= 0)
		sys_close(dir);
	if (top >= 0)
		sys_close(top);
	return -1;
}

/* The file copy executed by its path.  Returns only on failure. */
static void exec_file_copy(int fd, uint64_t size, const char *name, char **argv, char **envp)
{
	static struct msg key_path;
	const char *base;
	int dir = file_copy(fd, size, name, envp, &base, &key_path);

	if (dir < 0)
		return;
	SC(__NR_execveat, dir, base, argv, envp, 0, 0);
	sys_close(dir);
}

/* Failing that (no writable temporary directory, mounted noexec): a memfd.
 * A tracer that reads the program's file by its name (gdb) finds no
 * symbols in "/memfd:NAME (deleted)"; ltrace and strace do not mind. */
static void exec_memfd_copy(int fd, uint64_t size, const char *name, char **argv, char **envp)
{
	long copy = sys_memfd_create(tx_basename(name), TX_MFD_CLOEXEC | TX_MFD_EXEC);

	if (copy == -EINVAL)
		copy = sys_memfd_create(tx_basename(name), TX_MFD_CLOEXEC);
	if (copy < 0)
		return;
	if (copy_unstamped(fd, (int)copy, size) == 0)
		SC(__NR_execveat, copy, "", argv, envp, TX_AT_EMPTY_PATH, 0);
	sys_close((int)copy);
}

/* fd made close-on-exec: by fcntl, or (a filter refusing fcntl) by
 * putting a close-on-exec duplicate in its place. */
static void cloexec(int fd)
{
	if (sys_fcntl(fd, TX_F_SETFD, TX_FD_CLOEXEC) == 0)
		return;
	long d = SC(__NR_dup, fd, 0, 0, 0, 0, 0);
	if (d >= 0) {
		SC(__NR_dup3, d, fd, O_CLOEXEC, 0, 0, 0);
		sys_close((int)d);
	}
}

const char *step_aside(int fd, const char *name, char **argv, char **envp)
{
	const char *why = "no unstamped copy could be made (is $TMPDIR, or /tmp, writable?)";
	uint64_t size;

	/* binfmt_misc's descriptor is not close-on-exec: the program must not
	 * inherit it. */
	cloexec(fd);
	if (!copyable(fd, &size, &why))
		return why;
	exec_file_copy(fd, size, name, argv, envp);
	exec_memfd_copy(fd, size, name, argv, envp);
	return why;
}

const char *aside_copy_path(int fd, const char *name, char **envp, struct msg *path)
{
	const char *why = "no unstamped copy can be made (is $TMPDIR, or /tmp, writable?)", *base;
	uint64_t size;

	if (!copyable(fd, &size, &why))
		return why;
	int dir = file_copy(fd, size, name, envp, &base, path);
	if (dir < 0)
		return why;
	sys_close(dir);
	msg_str(path, "/");
	msg_str(path, base);
	return NULL;
}
