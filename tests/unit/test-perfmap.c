/* test-perfmap: how tiexec-stat --perf-map (stat/perfmap.c) tells copied
 * text, the file it came from and that file's load bias, on canned maps
 * (TAP, table-driven). */
#include <string.h>

#include "perfmap.h"
#include "tap.h"

/* perfhot (tests/fixtures/perfhot.S) through tiexec --strategy=thp: the
 * copy replaced the first 12 MiB of the text; 12 KiB of it stay a file
 * mapping. */
static const char prog_split[] =
	"561dd7fff000-561dd8000000 r--p 00000000 fe:00 10961954 /t/perfhot\n"
	"561dd8000000-561dd8c00000 r-xp 00000000 00:00 0 \n"
	"561dd8c00000-561dd8c03000 r-xp 00c01000 fe:00 10961954 /t/perfhot\n"
	"561dd8c03000-561dd8c04000 r--p 00c04000 fe:00 10961954 /t/perfhot\n"
	"561dd8c04000-561dd8c05000 r--p 00c04000 fe:00 10961954 /t/perfhot\n"
	"561dd8c05000-561dd8c06000 rw-p 00c05000 fe:00 10961954 /t/perfhot\n"
	"7f93adc01000-7f93adc27000 r-xp 00d01000 fe:00 332383 /lib/ld.so\n";
static const struct pm_seg prog_segs[] = {
	{ 0, 0x720, 0, 0x720, 0 },
	{ 0x1000, 0xc02019, 0x1000, 0xc02019, 1 },
	{ 0xc04000, 0x104, 0xc04000, 0x104, 0 },
	{ 0xc05dd0, 0x270, 0xc04dd0, 0x260, 0 },
};

/* A library whose whole text was copied, in two pieces that did not merge,
 * named where the kernel has CONFIG_ANON_VMA_NAME; no r-xp file piece is
 * left, the votes come from its read-only and writable mappings.  Then a
 * JIT's code right after the library's data, and the vdso. */
static const char lib_whole[] =
	"7f0000000000-7f0000200000 r--p 00000000 fe:00 77 /l/libx.so\n"
	"7f0000200000-7f0000400000 r-xp 00000000 00:00 0 [anon:tiexec:/l/libx.so]\n"
	"7f0000400000-7f0000600000 r-xp 00000000 00:00 0 [anon:tiexec:/l/libx.so]\n"
	"7f0000600000-7f0000601000 r--p 00600000 fe:00 77 /l/libx.so\n"
	"7f0000601000-7f0000602000 rw-p 00601000 fe:00 77 /l/libx.so\n"
	"7f0000602000-7f0000603000 rwxp 00000000 00:00 0 \n"
	"7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]\n";
static const struct pm_seg lib_segs[] = {
	{ 0, 0x1000, 0, 0x1000, 0 },
	{ 0x200000, 0x400000, 0x200000, 0x400000, 1 },
	{ 0x600000, 0x800, 0x600000, 0x800, 0 },
	{ 0x601000, 0x1000, 0x601000, 0x800, 0 },
};

/* A hugetlb copy and a memfd copy (tiexec under MemoryDenyWriteExecute). */
static const char other_kinds[] =
	"400000-401000 r--p 00000000 fe:00 5 /bin/p\n"
	"401000-600000 r-xp 00001000 fe:00 5 /bin/p\n"
	"600000-800000 r-xp 00000000 00:0f 9 /anon_hugepage (deleted)\n"
	"800000-a00000 r-xs 00000000 00:01 8 /memfd:tiexec (deleted)\n"
	"a00000-a10000 r-xp 00401000 fe:00 5 /bin/p\n";
static const struct pm_seg other_segs[] = {
	{ 0x400000, 0x1000, 0, 0x1000, 0 },
	{ 0x401000, 0x60f000, 0x1000, 0x60f000, 1 },
};

static void parse(const char *text, struct smaps *s)
{
	if (smaps_parse(text, strlen(text), s) != 0)
		abort();
}

int main(void)
{
	struct smaps s;
	long l, r;
	uint64_t bias = 0;

	parse(prog_split, &s);
	ok(pm_is_anon_text(&s.map[1]) && !pm_is_anon_text(&s.map[2]) && pm_is_file(&s.map[2]),
	   "program: the anonymous r-xp is text, the file's pieces are a file");
	pm_neighbours(&s, 1, &l, &r);
	ok(l == 0 && r == 2, "program: neighbours %ld %ld", l, r);
	ok(pm_bias(&s, 2, prog_segs, TAP_N(prog_segs), &bias) == 0, "program: a bias");
	ok_u64(bias, 0x561dd7fff000, "program: the bias of the header page and the text piece");
	ok(pm_in_exec_seg(0x561dd8000000, 0x561dd8c00000, bias, prog_segs, TAP_N(prog_segs)),
	   "program: the copy is inside the text segment");
	ok(pm_in_exec_seg(0x561dd8000000, 0x561dd8e00000, bias, prog_segs, TAP_N(prog_segs)),
	   "program: a --round-out copy, to the end of the 2 MiB piece the text ends in, is");
	ok(!pm_in_exec_seg(0x561dd8000000, 0x561dd9000000, bias, prog_segs, TAP_N(prog_segs)),
	   "program: a range past the 2 MiB pieces around the text is not");
	ok(!pm_in_exec_seg(0x561dd8c00000, 0x561dd8e00000, 0x561dd9000000, prog_segs, TAP_N(prog_segs)),
	   "program: a range outside the text, even within its pieces' reach, is not");
	ok(pm_bias(&s, 6, prog_segs, TAP_N(prog_segs), &bias) != 0,
	   "a mapping past every segment gives no bias");
	smaps_free(&s);

	parse(lib_whole, &s);
	pm_neighbours(&s, 1, &l, &r);
	ok(l == 0 && r == 3, "library: across the other copy: %ld %ld", l, r);
	pm_neighbours(&s, 2, &l, &r);
	ok(l == 0 && r == 3, "library: second copy: %ld %ld", l, r);
	ok(pm_bias(&s, 0, lib_segs, TAP_N(lib_segs), &bias) == 0, "library: a bias");
	ok_u64(bias, 0x7f0000000000, "library: bias from the non-executable mappings");
	ok(pm_in_exec_seg(0x7f0000200000, 0x7f0000400000, bias, lib_segs, TAP_N(lib_segs)) &&
		   pm_in_exec_seg(0x7f0000400000, 0x7f0000600000, bias, lib_segs, TAP_N(lib_segs)),
	   "library: both copies inside the text");
	ok(pm_is_anon_text(&s.map[5]), "the JIT's code is anonymous text");
	pm_neighbours(&s, 5, &l, &r);
	ok(l == 4 && r == -1, "the JIT's code is beside the library: %ld %ld", l, r);
	ok(!pm_in_exec_seg(s.map[5].start, s.map[5].end, bias, lib_segs, TAP_N(lib_segs)),
	   "... but not where its text lies: no copy");
	ok(!pm_is_anon_text(&s.map[6]) && !pm_is_file(&s.map[6]), "[vdso] is neither");
	smaps_free(&s);

	parse(other_kinds, &s);
	ok(pm_is_anon_text(&s.map[2]) && !pm_is_file(&s.map[2]), "hugetlb copy: anonymous text");
	ok(pm_is_anon_text(&s.map[3]) && !pm_is_file(&s.map[3]), "memfd copy: anonymous text");
	pm_neighbours(&s, 3, &l, &r);
	ok(l == 1 && r == 4, "memfd copy: neighbours %ld %ld", l, r);
	ok(pm_bias(&s, 1, other_segs, TAP_N(other_segs), &bias) == 0, "non-PIE: a bias");
	ok_u64(bias, 0, "non-PIE: bias 0");
	ok(pm_in_exec_seg(0x600000, 0xa00000, bias, other_segs, TAP_N(other_segs)),
	   "non-PIE: the copies are inside the text");
	smaps_free(&s);
	return tap_done();
}
