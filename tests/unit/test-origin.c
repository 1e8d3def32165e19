/* $ORIGIN expansion (interp/origin.c), as glibc's and musl's dynamic
 * linkers read the token: "$ORIGIN" ends at a character that cannot be part
 * of a name, "${ORIGIN}" is delimited. */
#include <string.h>

#include "loader.h"
#include "origin.h"
#include "tap.h"

struct image prog; /* origin_find's state; not exercised here */

static void expands(const char *in, const char *dir, const char *want)
{
	char out[512];
	size_t n = origin_expand(in, dir, out);
	ok(n == strlen(want) + 1 && strcmp(out, want) == 0, "'%s' in %s -> '%s' (got '%s')", in, dir,
	   want, out);
	ok(origin_has(in) == (strcmp(in, want) != 0), "origin_has('%s')", in);
}

int main(void)
{
	plan(20);
	expands("$ORIGIN/lib", "/opt/app", "/opt/app/lib");
	expands("${ORIGIN}/lib", "/opt/app", "/opt/app/lib");
	expands("$ORIGIN", "/", "/");
	expands("$ORIGIN/../lib:$ORIGIN/lib64:/usr/lib", "/a", "/a/../lib:/a/lib64:/usr/lib");
	expands("$ORIGINAL/lib", "/a", "$ORIGINAL/lib");
	expands("$ORIGIN_X", "/a", "$ORIGIN_X");
	expands("${ORIGIN}x", "/a", "/ax");
	expands("/usr/lib:$LIB", "/a", "/usr/lib:$LIB");
	expands("", "/a", "");
	expands("lib$ORIGIN.so", "/d", "lib/d.so");
	return tap_done();
}
