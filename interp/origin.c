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

unsigned origin_find(const struct image *prog, struct origin_fix *fx, const char *dir)
{
	unsigned n = 0;
	size_t nd;
	Elf64_Dyn *d = image_dynamic(prog, 1, &nd);

	struct strtab st;

	if (!d || !image_strtab(prog, d, nd, &st))
		return 0;
	for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL && n < ORIGIN_MAX_FIX; i++) {
		if (d[i].d_tag != DT_RUNPATH && d[i].d_tag != DT_RPATH && d[i].d_tag != DT_NEEDED)
			continue;
		const char *s = strtab_at(&st, d[i].d_un.d_val);
		if (!s || !origin_has(s))
			continue;
		fx[n].dval = &d[i].d_un.d_val;
		fx[n].src = s;
		fx[n].strtab = st.at;
		fx[n].outlen = origin_expand(s, dir, NULL);
		n++;
	}
	return n;
}
