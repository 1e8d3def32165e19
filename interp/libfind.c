/* Finding the libraries worth placing (see libfind.h). */
#include "libfind.h"

#include "bits.h"
#include "cacheconv.h"
#include "elfcheck.h"

static int skipped(uint64_t lo, uint64_t hi, const struct range *skip, unsigned nskip)
{
	for (unsigned i = 0; i < nskip; i++)
		if (lo < skip[i].hi && hi > skip[i].lo)
			return 1;
	return 0;
}

/* Steps over the separator c, if it is there. */
static int sep(const char **p, char c)
{
	if (**p != c)
		return 0;
	(*p)++;
	return 1;
}

/* One line: lo-hi perms off maj:min ino   path.  Returns whether it is an
 * executable, read-only private mapping, with *b filled in.  A line cut
 * short is none. */
static int parse_line(const char *p, struct lib *b)
{
	b->lo = cconv_parse_num(&p, 16);
	if (!sep(&p, '-'))
		return 0;
	b->hi = cconv_parse_num(&p, 16);
	if (!sep(&p, ' ') || !p[0] || !p[1] || !p[2] || !p[3])
		return 0;
	int x = p[0] == 'r' && p[1] != 'w' && p[2] == 'x' && p[3] == 'p'; /* r-xp */
	p += 4;
	if (!sep(&p, ' '))
		return 0;
	b->off = cconv_parse_num(&p, 16);
	if (!sep(&p, ' '))
		return 0;
	b->maj = (unsigned)cconv_parse_num(&p, 16);
	if (!sep(&p, ':'))
		return 0;
	b->min = (unsigned)cconv_parse_num(&p, 16);
	if (!sep(&p, ' '))
		return 0;
	b->ino = cconv_parse_num(&p, 10);
	while (*p == ' ')
		p++;
	b->path = p;
	return x;
}

unsigned libfind(char *maps, uint64_t min_text, const struct range *skip, unsigned nskip,
		 struct lib *libs, unsigned max)
{
	unsigned k = 0;

	if (!maps)
		return 0;
	for (char *l = maps; *l && k < max;) {
		char *e = l;
		while (*e && *e != '\n')
			e++;
		char *next = *e ? e + 1 : e;
		*e = '\0';
		struct lib b;
		if (parse_line(l, &b) && *b.path == '/' && b.ino && b.hi > b.lo &&
		    !skipped(b.lo, b.hi, skip, nskip) && b.hi - b.lo >= min_text &&
		    tx_up(b.lo, TX_HUGE) + TX_HUGE <= tx_down(b.hi, TX_HUGE))
			libs[k++] = b;
		l = next;
	}
	return k;
}
