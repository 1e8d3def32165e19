/* JSON for every tool (tiexec-stat, tiexec-warm, tiexec-trace): one writer
 * of strings and one reader of the flat objects tiexec-warm --json prints.
 *
 * File names are bytes, not text: a string is written as valid UTF-8
 * always, " \ and control characters escaped, and each byte that is not
 * part of a valid UTF-8 sequence replaced by U+FFFD (so the output is
 * JSON whatever the name; such a name cannot be read back exactly). */
#pragma once

#include <stdint.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at S (of at most N bytes), 0 if none:
 * no overlong form, no surrogate, nothing past U+10FFFF.  (Prometheus'
 * label values use it too.) */
size_t utf8_len(const unsigned char *s, size_t n);

/* The body of a JSON string for LEN bytes at S (no quotes), into OUT,
 * which must hold json_escape_max(LEN) bytes; the length written (then a
 * NUL). */
static inline size_t json_escape_max(size_t len)
{
	return 6 * len + 1;
}
size_t json_escape(char *out, const char *s, size_t len);

/* S as a JSON string, quotes included, to F. */
void json_str(FILE *f, const char *s);

/* In the JSON object at OBJ (one line of tiexec-warm --json: members whose
 * values are strings, numbers, literals, arrays or objects), the value of
 * the top-level member KEY: a pointer to its first character, or NULL. */
const char *json_member(const char *obj, const char *key);

/* The string at V (a value json_member found), decoded (\uXXXX and
 * surrogate pairs to UTF-8) into OUT, N bytes; 0, or -1 when V is not a
 * string or it does not fit. */
int json_get_string(const char *v, char *out, size_t n);

/* The unsigned integer at V into *X; 0 or -1. */
int json_get_u64(const char *v, uint64_t *x);
