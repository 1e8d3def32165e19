/* The loader's facilities that run alone in a test process: the message
 * builder and the one place that prints (rt.c, report.c), the process
 * helpers (proc.c), the descriptor budget (fds.c) and the reasons
 * (common/reason.c), printed as -v prints them.  rt.c's memcpy and
 * the like are renamed for this test (tests/meson.build), so the test's C
 * library keeps its own. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fds.h"
#include "proc.h"
#include "reason.h"
#include "report.h"
#include "tap.h"

/* What fn(arg) writes on stderr (at most n - 1 bytes), and its exit
 * status in *status (-1 if it returned), from a child process. */
static void child_stderr(void (*fn)(const void *), const void *arg, char *out, size_t n, int *status)
{
	int p[2], st = 0;

	if (pipe(p) != 0)
		abort();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		fn(arg);
		_exit(255);
	}
	close(p[1]);
	size_t k = 0;
	ssize_t r;
	while (k + 1 < n && (r = read(p[0], out + k, n - 1 - k)) > 0)
		k += (size_t)r;
	out[k] = '\0';
	close(p[0]);
	waitpid(pid, &st, 0);
	*status = WIFEXITED(st) && WEXITSTATUS(st) != 255 ? WEXITSTATUS(st) : -1;
}

static void note_on(const void *path)
{
	verbose_note(1, path, "a note");
	verbose_note(0, path, "not said");
}

static void die_enoent(const void *path)
{
	die_errno(path, "cannot open", -2 /* ENOENT */);
}

static void die_eacces(const void *path)
{
	die_errno(path, NULL, -13 /* EACCES */);
}

static void usage_error(const void *what)
{
	die_usage(what, "not an option");
}

static void test_report(void)
{
	char out[2048], longpath[4096];
	int st;

	child_stderr(note_on, "/bin/x", out, sizeof(out), &st);
	ok(!strcmp(out, "tiexec: '/bin/x': a note\n") && st == -1, "verbose_note: said with -v only: '%.*s'", (int)strcspn(out, "\n"), out);
	child_stderr(die_enoent, "/no/such", out, sizeof(out), &st);
	ok(!strcmp(out, "tiexec: '/no/such': cannot open: No such file or directory\n") && st == 127,
	   "die_errno: ENOENT is 127: '%.*s' (%d)", (int)strcspn(out, "\n"), out, st);
	child_stderr(die_eacces, "/x", out, sizeof(out), &st);
	ok(!strcmp(out, "tiexec: '/x': Permission denied\n") && st == 126, "die_errno: EACCES is 126: '%.*s' (%d)",
	   (int)strcspn(out, "\n"), out, st);
	child_stderr(usage_error, "--frob", out, sizeof(out), &st);
	ok(!strcmp(out, "tiexec: --frob: not an option (see tiexec --help)\n") && st == 125,
	   "die_usage: 125: '%.*s' (%d)", (int)strcspn(out, "\n"), out, st);

	/* A path of PATH_MAX shows its head and tail; the line still ends in
	 * the reason and one newline. */
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	memcpy(longpath + sizeof(longpath) - 9, "/tail.so", 8);
	longpath[sizeof(longpath) - 1] = '\0';
	child_stderr(note_on, longpath, out, sizeof(out), &st);
	ok(strstr(out, "...") && strstr(out, "/tail.so': a note\n") && strlen(out) < 400,
	   "a 4095-byte path is cut around '...', the reason kept (%zu bytes)", strlen(out));

	/* say() cuts a full buffer and still ends the line. */
	struct msg m = { .n = 0 };
	for (int i = 0; i < 200; i++)
		msg_str(&m, "0123456789");
	ok(m.n <= sizeof(m.b), "msg_str never runs past the buffer (%zu)", m.n);

	m.n = 0;
	msg_size(&m, 4096);
	msg_str(&m, "|");
	msg_size(&m, 3u << 20);
	msg_str(&m, "|");
	msg_mib(&m, (5u << 20) + (1u << 19));
	msg_str(&m, "|");
	msg_ms(&m, 420000);
	msg_str(&m, "|");
	msg_ms(&m, 12340000);
	msg_str(&m, "|");
	msg_hex(&m, 0x7f00);
	m.b[m.n] = '\0';
	ok(!strcmp(m.b, "4096 bytes|3.0 MiB|5.5|0.42|12.3|0x7f00"), "sizes, MiB, ms and hex: '%s'", m.b);
}

static void test_proc(void)
{
	char buf[4096];
	int fd = (int)sys_openat(TX_AT_FDCWD, "/proc/self/exe", O_RDONLY | O_CLOEXEC, 0);
	char want[4096];
	ssize_t n = readlink("/proc/self/exe", want, sizeof(want) - 1);

	want[n > 0 ? n : 0] = '\0';
	ok(fd >= 0 && fd_link(fd, buf, sizeof(buf)) > 0 && !strcmp(buf, want), "fd_link names the open file: %s", buf);
	ok(fd_link(fd, buf, 4) == -1, "fd_link: a buffer too small is an error, not a cut path");
	close(fd);
	ok(fd_link(fd, buf, sizeof(buf)) == -1, "fd_link: a closed descriptor is an error");

	char *envp[] = { "A=1", "TIEXEC_X=two", "TIEXEC=3", NULL };
	ok(env_get(envp, "TIEXEC") && !strcmp(env_get(envp, "TIEXEC"), "3"), "env_get: the whole name, not a prefix");
	ok(!env_get(envp, "B"), "env_get: absent");

	int pers = personality(0xffffffff);
	ok(aslr_off() == !!(pers & ADDR_NO_RANDOMIZE), "aslr_off follows personality (%#x)", pers);
	uint64_t t0 = now_ns(), t1 = now_ns();
	ok(t1 >= t0 && t0 > 0, "now_ns is monotonic");
	ok(random_u64() != random_u64(), "random_u64: two draws differ");
}

static void test_fds(void)
{
	struct rlimit rl, low;
	struct fd_budget b;

	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_max < 32) { /* nothing to raise the soft limit into */
		ok(1, "# SKIP the hard RLIMIT_NOFILE is %lu", (unsigned long)rl.rlim_max);
		return;
	}
	low.rlim_cur = 4;
	low.rlim_max = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &low) != 0) {
		ok(0, "setrlimit");
		return;
	}
	/* 0, 1, 2 open: with a soft limit of 4 one more fits, not two. */
	ok(fds_free(0, 1) == 1 && fds_free(0, 2) == 0, "fds_free: as many as the soft limit leaves");
	fds_raise(&b);
	struct rlimit now;
	getrlimit(RLIMIT_NOFILE, &now);
	ok(b.raised && now.rlim_cur == 16 && now.rlim_max == rl.rlim_max, "fds_raise: soft 4 -> 16 (%lu)",
	   (unsigned long)now.rlim_cur);
	ok(fds_free(0, 4) == 1, "then four more fit");
	fds_restore(&b);
	getrlimit(RLIMIT_NOFILE, &now);
	ok(now.rlim_cur == 4 && !b.raised, "fds_restore: back to 4");
	setrlimit(RLIMIT_NOFILE, &rl);
	fds_raise(&b);
	ok(!b.raised, "fds_raise: a limit of %lu is left alone", (unsigned long)rl.rlim_cur);
}

/* The longest a row's slots are filled with: a file system's name
 * (fsfolio.c's), the base page and a kernel release; or a folio size and
 * its mTHP directory. */
static const char *const fs_longest[] = { "this file system", "64 KiB", "10.100" };
static const char *const size_longest[] = { "512 MiB", "hugepages-524288kB/" };

static unsigned slots(const char *t)
{
	unsigned n = 0;

	for (const char *p = t; (p = strstr(p, "{}")); p += 2)
		n++;
	return n;
}

/* The way a reason belongs to, by its text's head, or the reasons that
 * hold before any way is tried. */
static int named(const char *t)
{
	static const char *const heads[] = { "file: ", "cache: ", "thp: ", "hugetlb: ", "copy: " };
	static const char *const before[] = { "the kernel's page sizes", "writable text", "text beyond" };

	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (!strncmp(t, heads[i], strlen(heads[i])))
			return 1;
	for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++)
		if (!strncmp(t, before[i], strlen(before[i])))
			return 1;
	return 0;
}

/* verbose_note of one text, for "/p". */
static void note_text(const void *text)
{
	verbose_note(1, "/p", text);
}

/* common/reason.c's table: every row has a text, fits the loader's probe
 * field (REASON_TEXT_MAX, tiexec-trace's TX_REASON_BYTES) filled with the
 * longest values its slots take, names the way it belongs to, and is
 * printed by -v (verbose_note) as exactly one line.  Whether every row is
 * reachable from the code: reasons.sh. */
static void test_reasons(void)
{
	char buf[4 * REASON_TEXT_MAX], want[8 * REASON_TEXT_MAX], out[8 * REASON_TEXT_MAX];

	ok(!*reason_text(R_NONE) && !*reason_text(R_COUNT), "R_NONE and out of range: no text");
	for (int r = R_NONE + 1; r < R_COUNT; r++) {
		const char *t = reason_text((enum reason)r);
		unsigned n = slots(t);
		const char *const *longest = r == R_FILE_FS_FOLIOS ? fs_longest : size_longest;
		const char *f = reason_fill((enum reason)r, longest, n, buf, sizeof(buf));
		ok(*t && named(t) && !strchr(t, '\n') && n <= (r == R_FILE_FS_FOLIOS ? 3u : 2u), "row %d has a text naming its way: %s", r, t);
		ok(strlen(f) < REASON_TEXT_MAX, "row %d fits the probe's %d bytes, filled (%zu)", r, REASON_TEXT_MAX,
		   strlen(f));
		ok(!strstr(f, "{}"), "row %d: every slot filled", r);
		snprintf(want, sizeof(want), "tiexec: '/p': %s\n", f);
		int st;
		child_stderr(note_text, f, out, sizeof(out), &st);
		ok(!strcmp(out, want), "row %d: -v prints it as one line", r);
	}
	const char *args[2] = { "2 MiB", "hugepages-2048kB/" };
	ok(!strcmp(reason_fill(R_THP_SIZE_NEVER, args, 2, buf, sizeof(buf)),
		   "thp: transparent huge pages of 2 MiB are disabled (transparent_hugepage/hugepages-2048kB/enabled is never)"),
	   "slots filled in order: %s", buf);
	ok(!strcmp(reason_fill(R_THP_SIZE_NEVER, args, 2, buf, 12), "thp: transp"), "cut to fit: %s", buf);
}

int main(void)
{
	test_report();
	test_proc();
	test_fds();
	test_reasons();
	return tap_done();
}
