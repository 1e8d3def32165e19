/* test-corpus CORPUS_DIR: runs every file of the malformed-ELF corpus made by
 * tests/fixtures/mkbad through common/elfcheck.c the way the loader does, and
 * checks the result against CORPUS_DIR/MANIFEST ("<name>\t<message>"); the
 * files listed in CORPUS_DIR/GOOD must pass every check; those in
 * CORPUS_DIR/SAME ("<name>\t<result>\t<interp result>") give the result
 * listed, and their PT_INTERP file, checked by the interpreter rules, the
 * interp result ("-": not checked) (TAP).
 *
 *   gcc -std=gnu11 -Wall -Wextra -Werror -fsanitize=address,undefined \
 *       -fno-sanitize-recover=all -g -Iinterp tests/unit/test-corpus.c common/elfcheck.c
 *   gcc -o mkbad tests/fixtures/mkbad.c && ./mkbad DIR && ./test-corpus DIR */
#include <errno.h>
#include <string.h>

#include "elfcheck.h"
#include "tap.h"

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			unsigned char *nb = realloc(b, cap);
			if (!nb) {
				free(b);
				fclose(f);
				return NULL;
			}
			b = nb;
		}
		size_t r = fread(b + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	*len = n;
	return b;
}

/* The loader's sequence: the first 64 bytes (fewer if the file is shorter),
 * then the program header table, then the PT_INTERP bytes.  Each piece is
 * handed over in a heap buffer of exactly its size, so that ASan sees any
 * read past what the loader would have read.  The PT_INTERP path goes to
 * interp (up to its first NUL) when there is one. */
static enum elf_err check_file(const unsigned char *file, size_t size, int is_interp, char *interp,
			       size_t interp_size)
{
	size_t n = size < sizeof(Elf64_Ehdr) ? size : sizeof(Elf64_Ehdr);
	unsigned char *head = malloc(n ? n : 1);
	Elf64_Ehdr eh;
	struct elf_info info;

	memcpy(head, file, n);
	enum elf_err e = elf_check_ehdr(head, n, size, &eh);
	free(head);
	if (e)
		return e;

	size_t phsize = (size_t)eh.e_phnum * sizeof(Elf64_Phdr);
	Elf64_Phdr *ph = malloc(phsize);
	memcpy(ph, file + eh.e_phoff, phsize);
	e = elf_check_phdrs(&eh, ph, size, is_interp, &info);
	if (!e && info.interp >= 0) {
		const Elf64_Phdr *p = &ph[info.interp];
		char *s = malloc(p->p_filesz);
		memcpy(s, file + p->p_offset, p->p_filesz);
		e = elf_check_interp(s, p->p_filesz);
		if (!e && interp)
			snprintf(interp, interp_size, "%s", s);
		free(s);
	}
	free(ph);
	return e;
}

/* Checks one file (a program, or an interpreter when is_interp); its
 * PT_INTERP path, if any, goes to interp. */
static void check_one(const char *path, const char *name, int is_interp, const char *want,
		      char *interp, size_t interp_size)
{
	size_t size = 0;

	if (interp)
		*interp = '\0';
	unsigned char *file = slurp(path, &size);
	if (!file) {
		ok(0, "%s: %s", name, want);
		diag("  %s: %s", path, strerror(errno));
		return;
	}
	enum elf_err e = check_file(file, size, is_interp, interp, interp_size);
	const char *got = e ? elf_err_str(e) : "OK";
	if (!ok(strcmp(got, want) == 0, "%s%s: %s", name, is_interp ? " (as interpreter)" : "",
		want))
		diag("  got: %s", got);
	free(file);
}

static void check_in(const char *dir, const char *name, const char *want)
{
	char path[16384];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	check_one(path, name, 0, want, NULL, 0);
}

int main(int argc, char **argv)
{
	char path[16384], line[8192];
	int entries = 0, goods = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: test-corpus CORPUS_DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/MANIFEST", argv[1]);
	FILE *man = fopen(path, "r");
	if (!ok(man != NULL, "open %s", path))
		return tap_done();
	while (fgets(line, sizeof(line), man)) {
		line[strcspn(line, "\n")] = '\0';
		char *tab = strchr(line, '\t');
		if (!tab) {
			ok(0, "MANIFEST line has a tab: %s", line);
			continue;
		}
		*tab = '\0';
		check_in(argv[1], line, tab + 1);
		entries++;
	}
	fclose(man);
	ok(entries >= 30, "MANIFEST lists %d files (at least 30)", entries);

	snprintf(path, sizeof(path), "%s/GOOD", argv[1]);
	FILE *g = fopen(path, "r");
	if (ok(g != NULL, "open %s", path)) {
		while (fgets(line, sizeof(line), g)) {
			line[strcspn(line, "\n")] = '\0';
			if (*line) {
				check_in(argv[1], line, "OK");
				goods++;
			}
		}
		fclose(g);
		ok(goods >= 1, "GOOD lists %d files", goods);
	}

	/* SAME: "<name>\t<result>\t<interp result>" */
	int sames = 0;
	snprintf(path, sizeof(path), "%s/SAME", argv[1]);
	FILE *sm = fopen(path, "r");
	if (ok(sm != NULL, "open %s", path)) {
		while (fgets(line, sizeof(line), sm)) {
			char interp[4096], *f[3] = { line, NULL, NULL };
			line[strcspn(line, "\n")] = '\0';
			for (int k = 1; k < 3 && f[k - 1] && (f[k] = strchr(f[k - 1], '\t')); k++)
				*f[k]++ = '\0';
			if (!f[2]) {
				ok(0, "SAME line has three fields: %s", line);
				continue;
			}
			snprintf(path, sizeof(path), "%s/%s", argv[1], f[0]);
			check_one(path, f[0], 0, f[1], interp, sizeof(interp));
			if (strcmp(f[2], "-") != 0) {
				if (!ok(*interp != '\0', "%s: has a PT_INTERP", f[0]))
					continue;
				check_one(interp, f[0], 1, f[2], NULL, 0);
			}
			sames++;
		}
		fclose(sm);
		ok(sames >= 30, "SAME lists %d files (at least 30)", sames);
	}
	return tap_done();
}
