/* JSON strings out, flat objects in (see json.h). */
#include "json.h"

#include <stdlib.h>
#include <string.h>

size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t c;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) || (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return len;
}

size_t json_escape(char *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	char *o = out;

	for (size_t i = 0; i < len;) {
		unsigned char c = u[i];
		size_t n = utf8_len(u + i, len - i);

		if (n == 0) {
			memcpy(o, "\\ufffd", 6);
			o += 6;
			i++;
			continue;
		}
		if (n > 1) {
			memcpy(o, u + i, n);
			o += n;
			i += n;
			continue;
		}
		i++;
		switch (c) {
		case '"': *o++ = '\\'; *o++ = '"'; break;
		case '\\': *o++ = '\\'; *o++ = '\\'; break;
		case '\b': *o++ = '\\'; *o++ = 'b'; break;
		case '\f': *o++ = '\\'; *o++ = 'f'; break;
		case '\n': *o++ = '\\'; *o++ = 'n'; break;
		case '\r': *o++ = '\\'; *o++ = 'r'; break;
		case '\t': *o++ = '\\'; *o++ = 't'; break;
		default:
			if (c < 0x20 || c == 0x7f) {
				memcpy(o, "\\u00", 4);
				o[4] = hex[c >> 4];
				o[5] = hex[c & 15];
				o += 6;
			} else {
				*o++ = (char)c;
			}
			break;
		}
	}
	*o = '\0';
	return (size_t)(o - out);
}

void json_str(FILE *f, const char *s)
{
	size_t len = strlen(s);
	char *e = malloc(json_escape_max(len));

	putc('"', f);
	if (e) {
		json_escape(e, s, len);
		fputs(e, f);
		free(e);
	}
	putc('"', f);
}

/* ---- reading ---- */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Past the string at p (its opening quote), or NULL. */
static const char *skip_string(const char *p)
{
	for (p++; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* Past the value at p, or NULL. */
static const char *skip_value(const char *p)
{
	if (*p == '"')
		return skip_string(p);
	if (*p == '{' || *p == '[') {
		int depth = 0;
		while (*p) {
			if (*p == '"') {
				if (!(p = skip_string(p)))
					return NULL;
				continue;
			}
			if (*p == '{' || *p == '[')
				depth++;
			else if ((*p == '}' || *p == ']') && --depth == 0)
				return p + 1;
			p++;
		}
		return NULL;
	}
	while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n')
		p++;
	return p;
}

static unsigned hex4(const char *p, int *bad)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			*bad = 1;
	}
	return v;
}

/* Code point c as UTF-8 at o; how many bytes. */
static size_t put_utf8(char *o, unsigned c)
{
	if (c < 0x80)
		return o[0] = (char)c, 1;
	if (c < 0x800)
		return o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f)), 2;
	if (c < 0x10000)
		return o[0] = (char)(0xe0 | c >> 12), o[1] = (char)(0x80 | (c >> 6 & 0x3f)), o[2] = (char)(0x80 | (c & 0x3f)), 3;
	return o[0] = (char)(0xf0 | c >> 18), o[1] = (char)(0x80 | (c >> 12 & 0x3f)), o[2] = (char)(0x80 | (c >> 6 & 0x3f)),
	       o[3] = (char)(0x80 | (c & 0x3f)), 4;
}

int json_get_string(const char *v, char *out, size_t n)
{
	size_t o = 0;

	if (!v || *v != '"')
		return -1;
	for (v++; *v != '"'; v++) {
		char b[4];
		size_t k = 1;
		if (!*v)
			return -1;
		b[0] = *v;
		if (*v == '\\') {
			int bad = 0;
			switch (*++v) {
			case '"': case '\\': case '/': b[0] = *v; break;
			case 'b': b[0] = '\b'; break;
			case 'f': b[0] = '\f'; break;
			case 'n': b[0] = '\n'; break;
			case 'r': b[0] = '\r'; break;
			case 't': b[0] = '\t'; break;
			case 'u': {
				unsigned c = hex4(v + 1, &bad);
				if (bad)
					return -1;
				v += 4;
				if (c >= 0xd800 && c <= 0xdbff && v[1] == '\\' && v[2] == 'u') {
					unsigned lo = hex4(v + 3, &bad);
					if (!bad && lo >= 0xdc00 && lo <= 0xdfff) {
						c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
						v += 6;
					}
				}
				if (c >= 0xd800 && c <= 0xdfff)
					c = 0xfffd; /* a lone surrogate */
				k = put_utf8(b, c);
				break;
			}
			default:
				return -1;
			}
		}
		if (o + k >= n)
			return -1;
		memcpy(out + o, b, k);
		o += k;
	}
	out[o] = '\0';
	return 0;
}

int json_get_u64(const char *v, uint64_t *x)
{
	char *end;

	if (!v || *v < '0' || *v > '9')
		return -1;
	*x = strtoull(v, &end, 10);
	return end == v ? -1 : 0;
}

const char *json_member(const char *obj, const char *key)
{
	const char *p = skip_ws(obj);
	size_t klen = strlen(key);

	if (*p++ != '{')
		return NULL;
	for (;;) {
		p = skip_ws(p);
		if (*p != '"')
			return NULL;
		const char *k = p + 1, *after = skip_string(p);
		if (!after)
			return NULL;
		/* Keys are plain ASCII: compared as written. */
		int match = (size_t)(after - 1 - k) == klen && !memcmp(k, key, klen);
		p = skip_ws(after);
		if (*p++ != ':')
			return NULL;
		p = skip_ws(p);
		if (match)
			return p;
		if (!(p = skip_value(p)))
			return NULL;
		p = skip_ws(p);
		if (*p++ != ',')
			return NULL;
	}
}
