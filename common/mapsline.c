/* /proc/PID/maps lines (see mapsline.h). */
#include "mapsline.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int maps_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int d;

	while (s < end && (d = hexval(*s)) >= 0) {
		if (x > (UINT64_MAX >> 4))
			return -1;
		x = x << 4 | (uint64_t)d;
		s++;
	}
	if (s == *p)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

int maps_dec(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	while (s < end && *s >= '0' && *s <= '9') {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
		s++;
	}
	if (s == *p)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

static int get_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -1;
	(*p)++;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

int maps_line(const char *line, size_t len, struct maps_line *m)
{
	static const char allowed[4][3] = { "r-", "w-", "x-", "ps" };
	const char *p = line, *end = line + len;
	uint64_t maj, min;

	if (maps_hex(&p, end, &m->lo) || get_char(&p, end, '-') || maps_hex(&p, end, &m->hi) ||
	    get_char(&p, end, ' ') || m->hi < m->lo || end - p < 4)
		return 0;
	for (int i = 0; i < 4; i++) {
		if (p[i] != allowed[i][0] && p[i] != allowed[i][1])
			return 0;
		m->perms[i] = p[i];
	}
	m->perms[4] = '\0';
	p += 4;
	if (get_char(&p, end, ' ') || maps_hex(&p, end, &m->off) || get_char(&p, end, ' ') ||
	    maps_hex(&p, end, &maj) || get_char(&p, end, ':') || maps_hex(&p, end, &min) ||
	    get_char(&p, end, ' ') || maps_dec(&p, end, &m->ino) || maj > 0xffffffffu || min > 0xffffffffu)
		return 0;
	if (p < end && !is_blank(*p))
		return 0;
	while (p < end && is_blank(*p))
		p++;
	m->maj = (unsigned)maj;
	m->min = (unsigned)min;
	m->path = p;
	m->path_len = (size_t)(end - p);
	return 1;
}

int maps_line_deleted(const struct maps_line *m)
{
	static const char suffix[] = " (deleted)";
	size_t n = sizeof(suffix) - 1;

	if (m->path_len < n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (m->path[m->path_len - n + i] != suffix[i])
			return 0;
	return 1;
}
