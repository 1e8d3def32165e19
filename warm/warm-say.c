/* tiexec-warm's messages on stderr, the exit status they set, and the start
 * of a JSON line. */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "warm.h"

void worse(struct warm *w, int st)
{
	if (st > w->status)
		w->status = st;
}

void fail(struct warm *w, const char *path, const char *what, int err)
{
	if (err)
		fprintf(stderr, "tiexec-warm: '%s': %s: %s\n", path, what, strerror(err));
	else
		fprintf(stderr, "tiexec-warm: '%s': %s\n", path, what);
	worse(w, ST_FAILED);
}

/* A file or directory left out because someone other than root could
 * change it (trust.h): said, and it is not warm. */
void untrusted(struct warm *w, const char *path, const char *why)
{
	fprintf(stderr, "tiexec-warm: '%s': skipped: %s, not only by root\n", path, why);
	worse(w, ST_NOT_WARM);
}

/* A JSON line's start: {"path":"PATH" (json.h: valid UTF-8 whatever the
 * name's bytes). */
void json_path(const char *path)
{
	fputs("{\"path\":", stdout);
	json_str(stdout, path);
}
