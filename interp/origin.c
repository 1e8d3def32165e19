/* $ORIGIN for a program whose /proc/self/exe names tiexec (see origin.h). */
#include "origin.h"

#include <elf.h>

#include "image.h"
#include "rt.h"
#include "searchpath.h"

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
