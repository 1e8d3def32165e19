/* $ORIGIN for a program whose /proc/self/exe names tiexec (see origin.h). */
#include "origin.h"

#include <elf.h>

#include "image.h"
#include "rt.h"

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

/* The string at strtab + off, if it lies inside the string table and is
 * NUL-terminated there. */
static const char *string_at(uint64_t strtab, uint64_t strsz, uint64_t off)
{
	if (off >= strsz)
		return NULL;
	const char *s = (const char *)(uintptr_t)(strtab + off);
	if (!memchr(s, '\0', strsz - off))
		return NULL;
	return s;
}

unsigned origin_find(const struct image *prog, struct origin_fix *fx, const char *dir)
{
	unsigned n = 0;
	size_t nd;
	Elf64_Dyn *d = image_dynamic(prog, 1, &nd);

	if (!d)
		return 0;
	uint64_t strtab = 0, strsz = 0;
	for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL; i++) {
		if (d[i].d_tag == DT_STRTAB)
			strtab = d[i].d_un.d_ptr + prog->bias;
		else if (d[i].d_tag == DT_STRSZ)
			strsz = d[i].d_un.d_val;
	}
	if (!strtab || !strsz || !image_holds(prog, strtab, strsz, 0))
		return 0;
	for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL && n < ORIGIN_MAX_FIX; i++) {
		if (d[i].d_tag != DT_RUNPATH && d[i].d_tag != DT_RPATH && d[i].d_tag != DT_NEEDED)
			continue;
		const char *s = string_at(strtab, strsz, d[i].d_un.d_val);
		if (!s || !origin_has(s))
			continue;
		fx[n].dval = &d[i].d_un.d_val;
		fx[n].src = s;
		fx[n].strtab = strtab;
		fx[n].outlen = origin_expand(s, dir, NULL);
		n++;
	}
	return n;
}
