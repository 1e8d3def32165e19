/* The loader's only output (see report.h). */
#include "report.h"

#include <errno.h>

#include "sys.h"

/* A full buffer still ends in a newline: the line is cut, never run on. */
void say(struct msg *m)
{
	if (m->n > sizeof(m->b) - 1)
		m->n = sizeof(m->b) - 1;
	m->b[m->n++] = '\n';
	sys_write(2, m->b, m->n);
}

/* Paths can be PATH_MAX (4096) long, the buffer is 1 KiB: a long path is
 * shown as its head and tail around "...", so the reason after it always
 * fits (the tail holds the file name, the most telling part). */
#define PATH_SHOWN 320
#define PATH_PART 150

void msg_head(struct msg *m, const char *path)
{
	size_t n = strlen(path);

	m->n = 0;
	msg_str(m, "tiexec: '");
	if (n <= PATH_SHOWN) {
		msg_str(m, path);
	} else {
		memcpy(m->b + m->n, path, PATH_PART);
		m->n += PATH_PART;
		msg_str(m, "...");
		msg_str(m, path + n - PATH_PART);
	}
	msg_str(m, "': ");
}

__attribute__((noreturn)) void die(const char *path, const char *what, const char *detail,
					  int status)
{
	struct msg m;

	msg_head(&m, path);
	msg_str(&m, what);
	if (detail) {
		msg_str(&m, ": ");
		msg_str(&m, detail);
	}
	die_msg(&m, status);
}

__attribute__((noreturn)) void die_errno(const char *path, const char *what, long err)
{
	int status = (err == -ENOENT || err == -ENOTDIR) ? 127 : 126;

	if (what)
		die(path, what, tx_strerror(-err), status);
	die(path, tx_strerror(-err), NULL, status);
}

__attribute__((noreturn)) void die_msg(struct msg *m, int status)
{
	say(m);
	sys_exit(status);
}

__attribute__((noreturn)) void die_usage(const char *what, const char *why)
{
	struct msg m;

	m.n = 0;
	msg_str(&m, "tiexec: ");
	msg_str(&m, what);
	if (why) {
		msg_str(&m, ": ");
		msg_str(&m, why);
	}
	msg_str(&m, " (see tiexec --help)");
	die_msg(&m, 125);
}

void verbose_note(int verbose, const char *path, const char *what)
{
	struct msg m;

	if (!verbose)
		return;
	msg_head(&m, path);
	msg_str(&m, what);
	say(&m);
}
