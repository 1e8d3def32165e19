/* The initial stack (interp/block.c) on synthetic stacks: decoding the
 * kernel's, the areas and the plan, the aux vector the program sees, and
 * the strings where /proc/PID/cmdline and environ will show them. */
#include <elf.h>
#include <linux/auxvec.h>
#include <stdint.h>
#include <string.h>

#include "block.h"
#include "tap.h"

/* The kernel's layout: the argument area (argv strings, then environment
 * strings, back to back), and below it the vector. */
static char area[512];
static uint64_t stack[64];
static size_t area_len, old_end;

static char *put(const char *s)
{
	char *at = area + area_len;
	memcpy(at, s, strlen(s) + 1);
	area_len += strlen(s) + 1;
	return at;
}

/* argv = {argv...}, envp = {env...}; aux: the pairs, AT_NULL added. */
static uint64_t *make(const char *const *argv, int argc, const char *const *env, int nenv,
		      const uint64_t *aux, int naux)
{
	int k = 0;

	memset(area, 0, sizeof(area));
	area_len = 0;
	stack[k++] = (uint64_t)argc;
	for (int i = 0; i < argc; i++)
		stack[k++] = (uint64_t)(uintptr_t)put(argv[i]);
	stack[k++] = 0;
	for (int i = 0; i < nenv; i++)
		stack[k++] = (uint64_t)(uintptr_t)put(env[i]);
	stack[k++] = 0;
	for (int i = 0; i < 2 * naux; i++)
		stack[k++] = aux[i];
	stack[k++] = AT_NULL;
	stack[k++] = 0;
	old_end = area_len;
	return stack;
}

static const char *const ARGV[] = {"tiexec", "-v", "prog", "a1"};
static const char *const ENV[] = {"A=1", "TIEXEC_EXE=7:/old/prog", "B=22"};
static const uint64_t AUX[] = {AT_PHDR, 0x1040, AT_EXECFD, 3, AT_ENTRY, 0x1000, AT_SECURE, 1,
			       AT_EXECFN, 0x7fff0000, AT_FLAGS, 1};

static void parse(void)
{
	struct start s;
	uint64_t aux[AUX_MAX] = {0}, has;

	block_parse(make(ARGV, 4, ENV, 3, AUX, 6), &s, aux, &has);
	ok(s.argc == 4 && strcmp(s.argv[2], "prog") == 0, "argc and argv");
	ok(s.nenv == 3 && strcmp(s.envp[2], "B=22") == 0, "the environment");
	ok(aux[AT_ENTRY] == 0x1000 && aux[AT_EXECFD] == 3, "aux values by AT_*");
	ok((has >> AT_EXECFD) & 1 && !((has >> AT_BASE) & 1), "which AT_* the kernel gave");
	ok(s.auxv_end - s.auxv == 2 * 7, "auxv_end just past AT_NULL");
}

static void areas(void)
{
	struct start s;
	struct areas a;
	uint64_t aux[AUX_MAX], has;

	block_parse(make(ARGV, 4, ENV, 3, AUX, 6), &s, aux, &has);
	block_areas(&s, 2, NULL, &a);
	ok(a.args_ok && a.env_ok, "strings back to back: both areas movable");
	ok(a.arg_start == (uint64_t)(uintptr_t)area && a.end == (uint64_t)(uintptr_t)area + old_end,
	   "the area spans argv and environment strings");
	ok(a.moved == strlen("prog") + 1 + strlen("a1") + 1, "the program's argv strings: from argv[first]");
	ok(a.nenv_keep == 3, "without a hint, every variable is kept");
	block_areas(&s, 2, "TIEXEC_EXE=9:/new", &a);
	ok(a.nenv_keep == 2 && a.env_keep == strlen("A=1") + 1 + strlen("B=22") + 1,
	   "with a new hint, the stale TIEXEC_EXE is dropped");
	s.argv[3] = (char *)"elsewhere";
	block_areas(&s, 2, NULL, &a);
	ok(!a.args_ok && !a.env_ok, "argv strings not back to back: nothing moves");
}

static void plan_and_auxv(void)
{
	struct start s;
	struct areas a;
	struct plan p;
	uint64_t aux[AUX_MAX], has, out[2 * 7];

	block_parse(make(ARGV, 4, ENV, 3, AUX, 6), &s, aux, &has);
	block_areas(&s, 2, NULL, &a);
	block_plan(&s, 2, "/bin/prog", NULL, 16, 24, &a, &p);
	ok(p.pargc == 2 && p.naux == 7 && p.nenv_out == 3, "counts: 2 arguments, 7 aux pairs, 3 variables");
	ok(p.words == 1 + 2 + 1 + 3 + 1 + 14, "words: argc, argv, NULL, envp, NULL, auxv");
	ok(p.fn_off == 16 && p.env_off == 16 + strlen("/bin/prog") + 1 + 24,
	   "execfn after the preinit array, then the $ORIGIN strings");
	ok(p.dst % 16 == 0 && p.dst + p.len <= (uint64_t)(uintptr_t)s.auxv_end, "16-aligned, below the old vector's end");
	ok(!p.env_in_block, "no hint: the strings stay in the area");

	struct aux_prog ap = {.phdr = 0x555000040, .phnum = 13, .base = 0x7f0000, .entry = 0x555001000, .secure_off = 1};
	long na = block_auxv(&s, out, 0x7ffe1234, p.naux, &ap);
	ok(na == 6, "AT_EXECFD dropped: 6 pairs with AT_NULL (got %ld)", na);
	ok(out[0] == AT_PHDR && out[1] == 0x555000040, "AT_PHDR is the program's");
	ok(out[2] == AT_ENTRY && out[3] == 0x555001000, "AT_ENTRY is the program's");
	ok(out[4] == AT_SECURE && out[5] == 0, "AT_SECURE 0 when the capabilities are gone");
	ok(out[6] == AT_EXECFN && out[7] == 0x7ffe1234, "AT_EXECFN in the block");
	ok(out[8] == AT_FLAGS && out[9] == 0, "AT_FLAGS 0 (binfmt_misc's P flag is ours)");
	ok(out[10] == AT_NULL && out[12] == 0 && out[13] == 0, "AT_NULL, then padding");
	ap.secure_off = 0;
	block_auxv(&s, out, 0, p.naux, &ap);
	ok(out[5] == 1, "AT_SECURE kept otherwise");
}

/* Builds the block as the stack stage does, into buf, for a block that
 * will be at `final`. */
static uint64_t *strings(const char *hint, int mm_ok, int *in_block)
{
	static uint64_t buf[256];
	struct start s;
	struct areas a;
	struct plan p;
	struct block b;
	uint64_t aux[AUX_MAX], has;

	block_parse(make(ARGV, 4, ENV, 3, AUX, 6), &s, aux, &has);
	block_areas(&s, 2, hint, &a);
	block_plan(&s, 2, "prog", hint, 0, 0, &a, &p);
	memset(buf, 0xee, sizeof(buf));
	b.w = buf;
	b.envw = b.w + 2 + p.pargc;
	b.auxo = b.envw + p.nenv_out + 1;
	b.strs = (char *)(b.w + p.words);
	b.strs_final = (uint64_t)(uintptr_t)b.strs; /* built in place */
	block_strings(&s, 2, hint, &a, &p, &b, mm_ok);
	*in_block = p.env_in_block;
	return buf;
}

static void strings_cases(void)
{
	int in_block;
	uint64_t *w;

	w = strings(NULL, 1, &in_block);
	uint64_t at = (uint64_t)(uintptr_t)area;
	ok(w[0] == 2 && w[1] == at && w[2] == at + 5 && w[3] == 0, "argc and argv point at the moved strings");
	ok(w[4] == at + 8 && w[5] == at + 12 && w[7] == 0, "envp points at the moved environment");
	static const char want[] = "prog\0a1\0A=1\0TIEXEC_EXE=7:/old/prog\0B=22";
	ok(memcmp(area, want, sizeof(want)) == 0, "mm_ok: argv then the environment at the area's start");
	int zero = 1;
	for (size_t i = sizeof(want); i < old_end; i++)
		zero &= area[i] == 0;
	ok(zero, "NUL padding up to the area's old end");

	strings("TIEXEC_EXE=9:/n", 1, &in_block);
	static const char want2[] = "prog\0a1\0A=1\0B=22\0TIEXEC_EXE=9:/n";
	ok(!in_block && memcmp(area, want2, sizeof(want2)) == 0,
	   "a hint that fits replaces the stale one, after the environment");

	strings("TIEXEC_EXE=9:/a/very/long/path/that/does/not/fit/where/tiexec/stood", 1, &in_block);
	ok(in_block, "a hint longer than tiexec's own words: the strings move into the block");
	zero = 1;
	for (size_t i = 0; i < old_end; i++)
		zero &= area[i] == 0;
	ok(zero, "and the old area is cleared");

	strings("TIEXEC_EXE=9:/n", 0, &in_block);
	static const char want3[] = "prog\0a1\0";
	ok(memcmp(area, want3, sizeof(want3) - 1) == 0, "without PR_SET_MM_MAP: argv still moves");
	ok(memcmp(area + strlen("tiexec") + 1 + strlen("-v") + 1 + strlen("prog") + 1 + strlen("a1") + 1,
		  "A=1", 4) == 0,
	   "and the environment stays where the kernel put it");
}

int main(void)
{
	parse();
	areas();
	plan_and_auxv();
	strings_cases();
	return tap_done();
}
