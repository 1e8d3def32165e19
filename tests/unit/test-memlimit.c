/* Unit tests for common/memlimit.c's /proc/self/cgroup parsing (TAP).
 *   gcc -std=gnu11 -Wall -Wextra -Werror -fsanitize=address,undefined \
 *       -fno-sanitize-recover=all -g -Iinterp tests/unit/test-memlimit.c \
 *       common/memlimit.c */
#include <string.h>

#include "memlimit.h"
#include "rt.h"
#include "tap.h"

struct cg_case {
	const char *desc, *text;
	int want;
	const char *path;
};

static const struct cg_case cases[] = {
	{ "v1 hybrid (this project's machines)",
	  "9:name=systemd:/\n4:memory:/process_api/70217d\n1:cpu:/\n0::/\n", 1, "/process_api/70217d" },
	{ "v1 with several controllers in one hierarchy",
	  "3:cpu,cpuacct,memory:/a/b\n0::/x\n", 1, "/a/b" },
	{ "v1 wins even when the v2 line comes first", "0::/x\n5:memory:/m\n", 1, "/m" },
	{ "a controller merely containing the word is not memory", "5:nomemory,memoryx:/m\n", 0, NULL },
	{ "pure v2", "0::/user.slice/user-0.slice/session-1.scope\n", 2,
	  "/user.slice/user-0.slice/session-1.scope" },
	{ "v2 at the namespace root", "0::/\n", 2, "/" },
	{ "no trailing newline", "4:memory:/svc", 1, "/svc" },
	{ "a path with colons", "4:memory:/a:b\n", 1, "/a:b" },
	{ "empty", "", 0, NULL },
	{ "garbage", "no colons here\n::\n", 0, NULL },
};

int main(void)
{
	char out[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cg_case *c = &cases[i];
		memset(out, 0, sizeof(out));
		int v = memlimit_cgroup_path(c->text, out, sizeof(out));
		ok(v == c->want && (!c->path || strcmp(out, c->path) == 0), "%s (got %d '%s')", c->desc, v,
		   out);
	}
	char small[4];
	ok(memlimit_cgroup_path("4:memory:/long/path\n", small, sizeof(small)) == 0,
	   "a path that does not fit is no path");
	return tap_done();
}
