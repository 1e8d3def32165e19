/* The texts of REASONS (see reason.h), in one block of characters with
 * an offset each: no pointer, so nothing for the loader to relocate. */
#include "reason.h"

#include <stddef.h>
#include <stdint.h>

static const struct reason_texts {
	char none[1];
#define REASON_FIELD(name, text) char name[sizeof(text)];
	REASONS(REASON_FIELD)
#undef REASON_FIELD
} texts = {
	"",
#define REASON_TEXT(name, text) text,
	REASONS(REASON_TEXT)
#undef REASON_TEXT
};

static const uint16_t offsets[R_COUNT] = {
	offsetof(struct reason_texts, none),
#define REASON_OFFSET(name, text) offsetof(struct reason_texts, name),
	REASONS(REASON_OFFSET)
#undef REASON_OFFSET
};

const char *reason_text(enum reason r)
{
	return (unsigned)r < R_COUNT ? (const char *)&texts + offsets[r] : "";
}

const char *reason_fill(enum reason r, const char *const *args, unsigned nargs, char *buf, size_t n)
{
	const char *t = reason_text(r);
	size_t k = 0;
	unsigned a = 0;

	if (!n)
		return buf;
	for (; *t && k + 1 < n; t++) {
		if (t[0] == '{' && t[1] == '}') {
			for (const char *s = a < nargs ? args[a] : ""; *s && k + 1 < n; s++)
				buf[k++] = *s;
			a++;
			t++;
			continue;
		}
		buf[k++] = *t;
	}
	buf[k] = '\0';
	return buf;
}
