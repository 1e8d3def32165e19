/* $ORIGIN in a search path (see searchpath.h). */
#include "searchpath.h"

#include "bits.h"
#include "mem.h"

static int ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Length of the $ORIGIN token at s, 0 if there is none. */
static size_t token(const char *s)
{
	if (tx_skip(s, "${ORIGIN}"))
		return 9;
	if (tx_skip(s, "$ORIGIN") && !ident(s[7]))
		return 7;
	return 0;
}

size_t origin_expand(const char *s, const char *dir, char *out)
{
	size_t n = 0, dl = strlen(dir);

	while (*s) {
		size_t t = token(s);
		if (t) {
			if (out)
				memcpy(out + n, dir, dl);
			n += dl;
			s += t;
		} else {
			if (out)
				out[n] = *s;
			n++;
			s++;
		}
	}
	if (out)
		out[n] = '\0';
	return n + 1;
}

int origin_has(const char *s)
{
	for (; *s; s++)
		if (token(s))
			return 1;
	return 0;
}
