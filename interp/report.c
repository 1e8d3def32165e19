/* The loader's only output: one line per message on stderr, always
 * "tiexec: 'PATH': what", as the project's error convention asks. */
#include <errno.h>

#include "loader.h"
#include "sys.h"

void say(struct msg *m)
{
	msg_str(m, "\n");
	sys_write(2, m->b, m->n);
}

void msg_head(struct msg *m, const char *path)
{
	m->n = 0;
	msg_str(m, "tiexec: '");
	msg_str(m, path);
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
	say(&m);
	sys_exit(status);
}

__attribute__((noreturn)) void die_errno(const char *path, const char *what, long err)
{
	int status = (err == -ENOENT || err == -ENOTDIR) ? 127 : 126;

	if (what)
		die(path, what, tx_strerror(-err), status);
	die(path, tx_strerror(-err), NULL, status);
}

void verbose_note(const char *path, const char *what)
{
	struct msg m;

	if (!opt.verbose)
		return;
	msg_head(&m, path);
	msg_str(&m, what);
	say(&m);
}

uint64_t now_ns(void)
{
	struct tx_timespec ts;

	sys_clock_gettime(TX_CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.sec * 1000000000ULL + (uint64_t)ts.nsec;
}

