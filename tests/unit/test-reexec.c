/* The re-exec decision (interp/reexec.c): when a start of tiexec is a
 * program running /proc/self/exe again, and when it is someone typing
 * tiexec's name.  The cases follow reexec.h's rules. */
#include <string.h>

#include "reexec.h"
#include "tap.h"

#define ME 100
#define PARENT 50

struct rcase {
	const char *desc, *hint, *argv0, *execfn;
	enum reexec_verdict want;
};

static const struct rcase cases[] = {
	{"no hint: never", NULL, "tiexec", "/usr/bin/tiexec", REEXEC_NO},
	{"in place through /proc/self/exe", "100:/srv/app", "tiexec", "/proc/self/exe", REEXEC_YES},
	{"a child through /proc/self/exe", "50:/srv/app", "tiexec", "/proc/self/exe", REEXEC_YES},
	{"a child by the name the link resolves to: if it is ours", "50:/srv/app", "tiexec",
	 "/usr/libexec/tiexec/tiexec", REEXEC_IF_OWN_NAME},
	{"in place by tiexec's path: a shell the program runs starting tiexec", "100:/srv/app", "tiexec",
	 "/usr/libexec/tiexec/tiexec", REEXEC_NO},
	{"a stranger's PID: someone typing tiexec", "7:/srv/app", "tiexec", "/usr/bin/tiexec", REEXEC_NO},
	{"argv[0] not tiexec's: the program's own, whatever the PID", "7:/srv/app", "app",
	 "/usr/libexec/tiexec/tiexec", REEXEC_YES},
	{"no PID, argv[0] foreign", "/srv/app", "node", "/proc/self/exe", REEXEC_YES},
	{"no PID, argv[0] tiexec's: not ours", "/srv/app", "tiexec", "/usr/bin/tiexec", REEXEC_NO},
	{"a relative path in the hint: never", "100:srv/app", "app", "/proc/self/exe", REEXEC_NO},
	{"a PID without ':'", "100/srv/app", "app", "/proc/self/exe", REEXEC_NO},
	{"argc 0", "100:/srv/app", NULL, "/proc/self/exe", REEXEC_NO},
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rcase *c = &cases[i];
		const char *path = NULL;
		enum reexec_verdict v = reexec_decide(c->hint, c->argv0, c->execfn, ME, PARENT, &path);
		ok(v == c->want, "%s (got %d)", c->desc, (int)v);
		if (v != REEXEC_NO)
			ok(path && strcmp(path, "/srv/app") == 0, "%s: the program's path", c->desc);
	}
	ok(reexec_proc_exe_link("/proc/self/exe") && reexec_proc_exe_link("/proc/thread-self/exe") &&
		   reexec_proc_exe_link("/proc/123/exe"),
	   "exe links");
	ok(!reexec_proc_exe_link("/proc/self/exe2") && !reexec_proc_exe_link("/proc/x/exe") &&
		   !reexec_proc_exe_link("/usr/bin/exe"),
	   "not exe links");
	ok(reexec_anonymous("app", "/proc/self/exe"), "anonymous: executed by the link");
	ok(reexec_anonymous("node", "/usr/libexec/tiexec/tiexec"), "anonymous: a foreign argv[0]");
	ok(!reexec_anonymous("tiexec", "/usr/bin/tiexec"), "tiexec typed by name: not anonymous");
	ok(!reexec_anonymous(NULL, "/proc/self/exe"), "argc 0: not anonymous");
	return tap_done();
}
