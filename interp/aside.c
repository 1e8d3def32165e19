/* Stepping aside for a debugger or tracer (see aside.h). */
#include "aside.h"

#include <errno.h>

#include "rt.h"
#include "mark.h"
#include "sys.h"

#define TX_O_DIRECTORY 0200000
#define TX_O_NOFOLLOW 0400000

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

/* The program's bytes into out, the stamp's marker bit cleared: binfmt_misc
 * then leaves the copy to the kernel's own ELF loader. */
static int copy_unstamped(int in, int out)
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
	mark &= (unsigned char)~(TIEXEC_MARK_FLAG >> 16);
	return sys_pwrite(out, &mark, 1, TIEXEC_MARK_BYTE) == 1 ? 0 : -1;
}

/* Our directory for copies, $TMPDIR/tiexec-aside-UID (else /tmp): made
 * mode 0700, and used only if it is a directory of ours that nobody else
 * can write.  Its descriptor, or -1. */
static int aside_dir(char **envp)
{
	static char dir[512];
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
	if (m.n >= sizeof(dir))
		return -1;
	memcpy(dir, m.b, m.n);
	dir[m.n] = '\0';
	SC(__NR_mkdirat, TX_AT_FDCWD, dir, 0700, 0, 0, 0);
	int fd = (int)sys_openat(TX_AT_FDCWD, dir, O_RDONLY | O_CLOEXEC | TX_O_DIRECTORY | TX_O_NOFOLLOW, 0);
	if (fd < 0)
		return -1;
	if (sys_statx(fd, "", TX_AT_EMPTY_PATH, STATX_UID | STATX_MODE, &st) < 0 || st.stx_uid != (uint32_t)uid ||
	    (st.stx_mode & 077)) {
		sys_close(fd);
		return -1;
	}
	return fd;
}

/* The copy's name: the program's base name, inode, size and change time,
 * so that a rebuilt program gets a new copy and an unchanged one reuses
 * its own. */
static void copy_name(struct msg *m, const char *name, const struct statx *st)
{
	m->n = 0;
	msg_str(m, tx_basename(name));
	msg_str(m, ".");
	msg_hex(m, st->stx_ino);
	msg_str(m, ".");
	msg_hex(m, st->stx_size);
	msg_str(m, ".");
	msg_hex(m, (uint64_t)st->stx_ctime.tv_sec);
	msg_str(m, ".");
	msg_hex(m, st->stx_ctime.tv_nsec);
	m->b[m->n < sizeof(m->b) ? m->n : sizeof(m->b) - 1] = '\0';
}

/* An unstamped copy with a path of its own (a debugger loads the symbols
 * of the file /proc/PID/exe names), made once and reused; executed by
 * that path.  Returns only on failure. */
static void exec_file_copy(int fd, const char *name, char **argv, char **envp)
{
	struct statx st, cst;
	struct msg final, tmp;
	int dir = aside_dir(envp);

	if (dir < 0 || sys_statx(fd, "", TX_AT_EMPTY_PATH, STATX_INO | STATX_SIZE | STATX_CTIME, &st) < 0)
		goto out;
	copy_name(&final, name, &st);
	int c = (int)sys_openat(dir, final.b, O_RDONLY | O_CLOEXEC | TX_O_NOFOLLOW, 0);
	if (c >= 0) {
		int same = sys_statx(c, "", TX_AT_EMPTY_PATH, STATX_SIZE | STATX_TYPE, &cst) == 0 &&
			   (cst.stx_mode & S_IFMT) == S_IFREG && cst.stx_size == st.stx_size;
		sys_close(c);
		if (same)
			SC(__NR_execveat, dir, final.b, argv, envp, 0, 0);
	}
	tmp = final;
	tmp.n = strlen(tmp.b);
	msg_str(&tmp, ".new.");
	msg_u64(&tmp, (uint64_t)SC(__NR_getpid, 0, 0, 0, 0, 0, 0));
	tmp.b[tmp.n < sizeof(tmp.b) ? tmp.n : sizeof(tmp.b) - 1] = '\0';
	c = (int)sys_openat(dir, tmp.b, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | TX_O_NOFOLLOW, 0700);
	if (c < 0)
		goto out;
	int ok = copy_unstamped(fd, c) == 0;
	sys_close(c);
	if (ok && SC(__NR_renameat, dir, tmp.b, dir, final.b, 0, 0) == 0) {
		SC(__NR_execveat, dir, final.b, argv, envp, 0, 0);
		SC(__NR_unlinkat, dir, final.b, 0, 0, 0, 0);
	} else {
		SC(__NR_unlinkat, dir, tmp.b, 0, 0, 0, 0);
	}
out:
	if (dir >= 0)
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

void step_aside(int fd, const char *name, char **argv, char **envp)
{
	/* binfmt_misc's descriptor is not close-on-exec: the program must not
	 * inherit it. */
	sys_fcntl(fd, TX_F_SETFD, TX_FD_CLOEXEC);
	exec_file_copy(fd, name, argv, envp);
	exec_memfd_copy(fd, name, argv, envp);
}
