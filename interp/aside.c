/* Stepping aside for a debugger or tracer (see aside.h). */
#include "aside.h"

#include <errno.h>

#include "rt.h"
#include "mark.h"
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

/* The copy by sendfile, the marker byte then rewritten in place. */
static int copy_by_sendfile(int in, int out)
{
	uint64_t off = 0;
	unsigned char mark;

	for (;;) {
		long n = SC(__NR_sendfile, out, in, &off, 1L << 30, 0, 0);
		if (n == 0)
			break;
		if (n < 0)
			return -1;
	}
	if (sys_pread(out, &mark, 1, TIEXEC_MARK_BYTE) != 1)
		return -1;
	clear_mark(&mark, TIEXEC_MARK_BYTE, 1);
	return sys_pwrite(out, &mark, 1, TIEXEC_MARK_BYTE) == 1 ? 0 : -1;
}

/* The copy through a buffer, by read and write alone (from the start of
 * in, at the start of out). */
static int copy_by_read(int in, int out)
{
	static unsigned char b[65536];
	uint64_t off = 0;

	if (SC(__NR_lseek, in, 0, 0, 0, 0, 0) != 0 || SC(__NR_lseek, out, 0, 0, 0, 0, 0) != 0 ||
	    SC(__NR_ftruncate, out, 0, 0, 0, 0, 0) != 0)
		return -1;
	for (;;) {
		long n = sys_read(in, b, sizeof(b));
		if (n == 0)
			return 0;
		if (n < 0)
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
}

/* The program's bytes into out, unstamped.  Two ways, so that a seccomp
 * filter refusing any one system call (the reason we may be here) leaves
 * one of them. */
static int copy_unstamped(int in, int out)
{
	return copy_by_sendfile(in, out) == 0 || copy_by_read(in, out) == 0 ? 0 : -1;
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

static void key_name(struct msg *m, const struct statx *st)
{
	msg_hex(m, st->stx_ino);
	msg_str(m, ".");
	msg_hex(m, st->stx_size);
	msg_str(m, ".");
	msg_hex(m, (uint64_t)st->stx_ctime.tv_sec);
	msg_str(m, ".");
	msg_hex(m, st->stx_ctime.tv_nsec);
}

/* The directory of one program's copy, KEY in the directory of copies:
 * the program's inode, size and change time, so that a rebuilt program
 * gets a new copy and an unchanged one reuses its own.  The copy inside
 * has the program's own base name, which the kernel makes the process's
 * name (comm, and a Go program's thread names).  Its descriptor, or -1. */
static int key_dir(int dir, const struct statx *st)
{
	struct msg k;

	k.n = 0;
	key_name(&k, st);
	k.b[k.n] = '\0';
	SC(__NR_mkdirat, dir, k.b, 0700, 0, 0, 0);
	return (int)sys_openat(dir, k.b, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW, 0);
}

/* The unstamped copy with a path of its own (a debugger loads the symbols
 * of the file /proc/PID/exe names), made once and reused: the descriptor
 * of its directory, its name there in *base; or -1.  The directory's path
 * is left in top_path. */
static int file_copy(int fd, const char *name, char **envp, const char **base, char *top_path)
{
	struct statx st, cst;
	struct msg tmp;
	int top = aside_dir(envp, top_path), dir = -1;

	*base = tx_basename(name);
	if (top < 0 || sys_statx(fd, "", TX_AT_EMPTY_PATH, STATX_INO | STATX_SIZE | STATX_CTIME, &st) < 0)
		goto fail;
	dir = key_dir(top, &st);
	if (dir < 0 || !**base || strlen(*base) > 200)
		goto fail;
	int c = (int)sys_openat(dir, *base, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (c >= 0) {
		int same = sys_statx(c, "", TX_AT_EMPTY_PATH, STATX_SIZE | STATX_TYPE, &cst) == 0 &&
			   (cst.stx_mode & S_IFMT) == S_IFREG && cst.stx_size == st.stx_size;
		sys_close(c);
		if (same)
			goto done;
	}
	tmp.n = 0;
	msg_str(&tmp, *base);
	msg_str(&tmp, ".new.");
	msg_u64(&tmp, (uint64_t)SC(__NR_getpid, 0, 0, 0, 0, 0, 0));
	tmp.b[tmp.n] = '\0';
	c = (int)sys_openat(dir, tmp.b, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0700);
	if (c < 0)
		goto fail;
	int ok = copy_unstamped(fd, c) == 0;
	sys_close(c);
	if (!ok || SC(__NR_renameat2, dir, tmp.b, dir, *base, 0, 0) != 0) {
		SC(__NR_unlinkat, dir, tmp.b, 0, 0, 0, 0);
		goto fail;
	}
done:
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
static void exec_file_copy(int fd, const char *name, char **argv, char **envp)
{
	static char top_path[DIR_MAX];
	const char *base;
	int dir = file_copy(fd, name, envp, &base, top_path);

	if (dir < 0)
		return;
	SC(__NR_execveat, dir, base, argv, envp, 0, 0);
	sys_close(dir);
}

/* Failing that (no writable temporary directory, mounted noexec): a memfd.
 * A tracer that reads the program's file by its name (gdb) finds no
 * symbols in "/memfd:NAME (deleted)"; ltrace and strace do not mind. */
static void exec_memfd_copy(int fd, const char *name, char **argv, char **envp)
{
	long copy = sys_memfd_create(tx_basename(name), TX_MFD_CLOEXEC | TX_MFD_EXEC);

	if (copy == -EINVAL)
		copy = sys_memfd_create(tx_basename(name), TX_MFD_CLOEXEC);
	if (copy < 0)
		return;
	if (copy_unstamped(fd, (int)copy) == 0)
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

void step_aside(int fd, const char *name, char **argv, char **envp)
{
	/* binfmt_misc's descriptor is not close-on-exec: the program must not
	 * inherit it. */
	cloexec(fd);
	exec_file_copy(fd, name, argv, envp);
	exec_memfd_copy(fd, name, argv, envp);
}

long aside_copy_path(int fd, const char *name, char **envp, struct msg *path)
{
	static char top_path[DIR_MAX];
	const char *base;
	struct statx st;
	int dir = file_copy(fd, name, envp, &base, top_path);

	if (dir < 0)
		return -1;
	long e = sys_statx(fd, "", TX_AT_EMPTY_PATH, STATX_INO | STATX_SIZE | STATX_CTIME, &st);
	sys_close(dir);
	if (e < 0)
		return e;
	path->n = 0;
	msg_str(path, top_path);
	msg_str(path, "/");
	key_name(path, &st);
	msg_str(path, "/");
	msg_str(path, base);
	return 0;
}
