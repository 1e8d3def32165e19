/* test-smaps: the /proc/PID/smaps parser of tiexec-stat (common/smaps.c) on
 * canned text, table-driven (TAP).
 *
 *   gcc -std=gnu11 -Wall -Wextra -Werror -fsanitize=address,undefined \
 *       -fno-sanitize-recover=all -g -Istat tests/unit/test-smaps.c common/smaps.c */
#include <string.h>

#include "json.h"
#include "smaps.h"
#include "tap.h"

#define KB(x) ((uint64_t)(x))
#define MIB(x) ((uint64_t)(x) * 1024)

/* A THP copy of text (what tiexec --strategy=thp makes: anonymous, unnamed). */
static const char thp_anon[] =
	"7f0000000000-7f0004000000 r-xp 00000000 00:00 0 \n"
	"Size:              65536 kB\n"
	"KernelPageSize:        4 kB\n"
	"MMUPageSize:           4 kB\n"
	"Rss:               65536 kB\n"
	"Pss:               65536 kB\n"
	"Pss_Dirty:         65536 kB\n"
	"Shared_Clean:          0 kB\n"
	"Shared_Dirty:          0 kB\n"
	"Private_Clean:         0 kB\n"
	"Private_Dirty:     65536 kB\n"
	"Referenced:        65536 kB\n"
	"Anonymous:         65536 kB\n"
	"KSM:                   0 kB\n"
	"LazyFree:              0 kB\n"
	"AnonHugePages:     63488 kB\n"
	"ShmemPmdMapped:        0 kB\n"
	"FilePmdMapped:         0 kB\n"
	"Shared_Hugetlb:        0 kB\n"
	"Private_Hugetlb:       0 kB\n"
	"Swap:                  0 kB\n"
	"SwapPss:               0 kB\n"
	"Locked:                0 kB\n"
	"THPeligible:           1\n"
	"ProtectionKey:         0\n"
	"VmFlags: rd ex mr mw me ac hg \n";

/* Text mapped from the page cache on PMDs (CONFIG_READ_ONLY_THP_FOR_FS). */
static const char file_pmd[] =
	"555555400000-55555a400000 r-xp 00000000 fd:01 1234567                    /opt/tidb/bin/tidb-server\n"
	"Size:              81920 kB\n"
	"Rss:               81920 kB\n"
	"AnonHugePages:         0 kB\n"
	"FilePmdMapped:     79872 kB\n"
	"Shared_Hugetlb:        0 kB\n"
	"Private_Hugetlb:       0 kB\n"
	"VmFlags: rd ex mr mw me dw sd \n"
	"55555a400000-55555a600000 r--p 05000000 fd:01 1234567                    /opt/tidb/bin/tidb-server\n"
	"Size:               2048 kB\n"
	"FilePmdMapped:      2048 kB\n";

/* Text from a tmpfs mounted huge=always (or a memfd): ShmemPmdMapped. */
static const char shmem_pmd[] =
	"7f5000000000-7f5000800000 r-xp 00000000 00:30 42                         /run/text/libx.so\n"
	"Size:               8192 kB\n"
	"Rss:                8192 kB\n"
	"AnonHugePages:         0 kB\n"
	"ShmemPmdMapped:     6144 kB\n"
	"FilePmdMapped:         0 kB\n"
	"Shared_Hugetlb:        0 kB\n"
	"Private_Hugetlb:       0 kB\n";

/* Text on hugetlbfs, shared and private, a deleted file. */
static const char hugetlb[] =
	"7e0000000000-7e0000800000 r-xs 00000000 00:2f 77                         /dev/hugepages/text (deleted)\n"
	"Size:               8192 kB\n"
	"KernelPageSize:     2048 kB\n"
	"Shared_Hugetlb:     4096 kB\n"
	"Private_Hugetlb:    2048 kB\n"
	"7e0000800000-7e0000a00000 r-xp 00000000 00:2f 78                         /dev/hugepages/my text file\n"
	"Size:               2048 kB\n"
	"Private_Hugetlb:    2048 kB\n";

/* Few fields (an old kernel, or a truncated read): Size from the range; no
 * trailing newline; a mapping without a name or its trailing space. */
static const char sparse[] =
	"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
	"Rss:                 12 kB\n"
	"00651000-00652000 rw-p 00000000 00:00 0\n"
	"Size:                 4 kB\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n"
	"Size:                  4 kB";

/* Junk among the lines: each is counted, none derails the parse. */
static const char junk[] =
	"Size:               1234 kB\n" /* a field before any mapping */
	"\n"
	"this is not a field\n"
	"10000-20000 r-xp 00000000 00:00 0 \n"
	"Size:               what kB\n"                  /* not a number */
	"AnonHugePages:     99999999999999999999999 kB\n" /* overflows */
	"FilePmdMapped:      12 MB\n"                    /* not kB */
	"10000-zz000 r-xp 00000000 00:00 0\n"             /* a broken header */
	"20000-10000 r-xp 00000000 00:00 0\n"             /* end before start */
	"30000-40000 rzxp 00000000 00:00 0\n"             /* bad permissions */
	"30000-40000 r-xp 00000000 00:00 0x\n"            /* bad inode */
	"Rss:                  8 kB\n"
	"40000-50000 rwxp 00000000 00:00 0 [anon:tiexec:/usr/bin/x]\n"
	"Size:                 64 kB\n";

struct want {
	uint64_t start, end;
	const char *perms, *path;
	int deleted, exec;
	uint64_t size_kb, rss_kb, anon_huge_kb, file_pmd_kb, hugetlb_kb, huge_kb, aligned_kb;
};

static const struct want want_thp[] = {
	{ 0x7f0000000000, 0x7f0004000000, "r-xp", "", 0, 1, 65536, 65536, 63488, 0, 0, 63488,
	  MIB(64) },
};
static const struct want want_file_pmd[] = {
	{ 0x555555400000, 0x55555a400000, "r-xp", "/opt/tidb/bin/tidb-server", 0, 1, 81920, 81920,
	  0, 79872, 0, 79872, MIB(80) },
	{ 0x55555a400000, 0x55555a600000, "r--p", "/opt/tidb/bin/tidb-server", 0, 0, 2048, 0, 0,
	  2048, 0, 2048, MIB(2) },
};
static const struct want want_shmem_pmd[] = {
	{ 0x7f5000000000, 0x7f5000800000, "r-xp", "/run/text/libx.so", 0, 1, 8192, 8192, 0, 0, 0, 6144,
	  MIB(8) },
};
static const struct want want_hugetlb[] = {
	{ 0x7e0000000000, 0x7e0000800000, "r-xs", "/dev/hugepages/text (deleted)", 1, 1, 8192, 0,
	  0, 0, 6144, 6144, MIB(8) },
	{ 0x7e0000800000, 0x7e0000a00000, "r-xp", "/dev/hugepages/my text file", 0, 1, 2048, 0, 0,
	  0, 2048, 2048, MIB(2) },
};
static const struct want want_sparse[] = {
	{ 0x400000, 0x452000, "r-xp", "/usr/bin/dbus-daemon", 0, 1, 0x52000 / 1024, 12, 0, 0, 0,
	  0, 0 },
	{ 0x651000, 0x652000, "rw-p", "", 0, 0, 4, 0, 0, 0, 0, 0, 0 },
	{ 0xffffffffff600000, 0xffffffffff601000, "--xp", "[vsyscall]", 0, 1, 4, 0, 0, 0, 0, 0,
	  0 },
};
static const struct want want_junk[] = {
	{ 0x10000, 0x20000, "r-xp", "", 0, 1, 64, 8, 0, 0, 0, 0, 0 },
	{ 0x40000, 0x50000, "rwxp", "[anon:tiexec:/usr/bin/x]", 0, 1, 64, 0, 0, 0, 0, 0, 0 },
};

static const struct {
	const char *name, *text;
	size_t len;
	const struct want *want;
	size_t n, bad;
} cases[] = {
#define CASE(t, w, bad) { #t, t, sizeof(t) - 1, w, TAP_N(w), bad }
	CASE(thp_anon, want_thp, 0),
	CASE(file_pmd, want_file_pmd, 0),
	CASE(shmem_pmd, want_shmem_pmd, 0),
	CASE(hugetlb, want_hugetlb, 0),
	CASE(sparse, want_sparse, 0),
	CASE(junk, want_junk, 9),
#undef CASE
};

/* Parses a heap copy of exactly the text (no NUL after it: ASan sees any
 * read past the end). */
static int parse_copy(const char *text, size_t len, struct smaps *s)
{
	char *copy = malloc(len ? len : 1);
	memcpy(copy, text, len);
	int r = smaps_parse(copy, len, s);
	free(copy);
	return r;
}

static void check_case(size_t c)
{
	struct smaps s;
	const char *nm = cases[c].name;

	ok(parse_copy(cases[c].text, cases[c].len, &s) == 0, "%s: parses", nm);
	ok_u64(s.n, cases[c].n, "%s: %zu mappings", nm, cases[c].n);
	ok_u64(s.bad_lines, cases[c].bad, "%s: %zu bad lines", nm, cases[c].bad);
	for (size_t i = 0; i < s.n && i < cases[c].n; i++) {
		const struct smaps_map *m = &s.map[i];
		const struct want *w = &cases[c].want[i];
		ok_u64(m->start, w->start, "%s[%zu]: start", nm, i);
		ok_u64(m->end, w->end, "%s[%zu]: end", nm, i);
		if (!ok(strcmp(m->perms, w->perms) == 0, "%s[%zu]: perms %s", nm, i, w->perms))
			diag("  got %s", m->perms);
		if (!ok(strcmp(m->path, w->path) == 0, "%s[%zu]: path '%s'", nm, i, w->path))
			diag("  got '%s'", m->path);
		ok(m->deleted == w->deleted, "%s[%zu]: deleted %d", nm, i, w->deleted);
		ok(smaps_is_exec(m) == w->exec, "%s[%zu]: executable %d", nm, i, w->exec);
		ok_u64(m->size_kb, w->size_kb, "%s[%zu]: size_kb", nm, i);
		ok_u64(m->rss_kb, w->rss_kb, "%s[%zu]: rss_kb", nm, i);
		ok_u64(m->anon_huge_kb, w->anon_huge_kb, "%s[%zu]: anon_huge_kb", nm, i);
		ok_u64(m->file_pmd_kb, w->file_pmd_kb, "%s[%zu]: file_pmd_kb", nm, i);
		ok_u64(smaps_hugetlb_kb(m), w->hugetlb_kb, "%s[%zu]: hugetlb_kb", nm, i);
		ok_u64(smaps_huge_kb(m), w->huge_kb, "%s[%zu]: huge_kb", nm, i);
		ok_u64(smaps_aligned_kb(m->start, m->end), w->aligned_kb, "%s[%zu]: aligned_kb", nm,
		       i);
	}
	smaps_free(&s);
}

/* The same text, whole or cut at every byte: never a crash, and the mappings
 * before the cut are there. */
static void check_cuts(void)
{
	int bad = 0;

	for (size_t c = 0; c < TAP_N(cases); c++) {
		for (size_t cut = 0; cut <= cases[c].len; cut++) {
			struct smaps s;
			if (parse_copy(cases[c].text, cut, &s) != 0 || s.n > cases[c].n)
				bad++;
			smaps_free(&s);
		}
	}
	ok(bad == 0, "every case cut at every byte parses (%d bad)", bad);
}

/* A name longer than any line buffer, and many mappings. */
static void check_big(void)
{
	size_t plen = 100000, n = 5000;
	char *path = malloc(plen + 1);
	for (size_t i = 0; i < plen; i++)
		path[i] = (char)('a' + i % 26);
	path[0] = '/';
	path[plen] = '\0';

	size_t cap = plen + 200 + n * 120, len = 0;
	char *text = malloc(cap);
	len += (size_t)snprintf(text + len, cap - len,
				"1000000-1400000 r-xp 00000000 fd:01 9 %s\nSize: 4096 kB\n"
				"AnonHugePages: 4096 kB\n",
				path);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"%zx-%zx r--p 00000000 00:00 0 \nSize: 4 kB\nRss: 4 kB\n",
					0x10000000 + i * 0x1000, 0x10001000 + i * 0x1000);
	struct smaps s;
	ok(parse_copy(text, len, &s) == 0, "big: parses");
	ok_u64(s.n, n + 1, "big: %zu mappings", n + 1);
	ok(s.n > 0 && strcmp(s.map[0].path, path) == 0, "big: a %zu-byte name, whole", plen);
	ok_u64(s.n ? smaps_huge_kb(&s.map[0]) : 0, 4096, "big: its huge_kb");
	ok_u64(s.n ? s.map[n].start : 0, 0x10000000 + (n - 1) * 0x1000, "big: the last mapping");
	ok_u64(s.bad_lines, 0, "big: no bad lines");
	smaps_free(&s);
	free(text);
	free(path);
}

static void check_headers(void)
{
	static const struct {
		const char *line;
		int is;
		const char *path;
	} t[] = {
		{ "7f00-8f00 r-xp 00000000 00:00 0", 1, "" },
		{ "7f00-8f00 r-xp 00000000 00:00 0 ", 1, "" },
		{ "7f00-8f00 r-xp 00000000 00:00 0 \t  /a b  ", 1, "/a b  " },
		{ "7f00-8f00 r-xp 00000000 103:1a 42 /x (deleted)", 1, "/x (deleted)" },
		{ "7f00-8f00 ---p 00000000 00:00 0 [stack]", 1, "[stack]" },
		{ "7f00-8f00 r-xp 00000000 00:00", 0, NULL },
		{ "7f00-8f00 r-x", 0, NULL },
		{ "7f00 r-xp 00000000 00:00 0", 0, NULL },
		{ "-8f00 r-xp 00000000 00:00 0", 0, NULL },
		{ "7f00-8f00  r-xp 00000000 00:00 0", 0, NULL },
		{ "7f00-8f00 r-xq 00000000 00:00 0", 0, NULL },
		{ "7f00-8f00 r-xp 00000000 0000 0", 0, NULL },
		{ "7f00-8f00 r-xp 00000000 00:00 12x", 0, NULL },
		{ "10000000000000000-10000000000000001 r-xp 00000000 00:00 0", 0, NULL },
		{ "Size:   4 kB", 0, NULL },
		{ "", 0, NULL },
	};

	for (size_t i = 0; i < TAP_N(t); i++) {
		struct smaps_map m;
		size_t len = strlen(t[i].line);
		char *copy = malloc(len ? len : 1);
		memcpy(copy, t[i].line, len);
		int r = smaps_parse_header(copy, len, &m);
		ok(r == t[i].is, "header '%s': %s", t[i].line, t[i].is ? "yes" : "no");
		if (r == 1) {
			if (!ok(strcmp(m.path, t[i].path) == 0, "header '%s': path '%s'", t[i].line,
				t[i].path))
				diag("  got '%s'", m.path);
			free(m.path);
		}
		free(copy);
	}
}

static void check_aligned(void)
{
	static const struct {
		uint64_t start, end, kb;
	} t[] = {
		{ 0, 0, 0 },
		{ 0x200000, 0x400000, 2048 },
		{ 0x1ff000, 0x401000, 2048 },
		{ 0x201000, 0x5ff000, 0 },
		{ 0x201000, 0x600000, 2048 },
		{ 0x5567421cc000, 0x5567461cf000, MIB(62) },
		{ 0x400000, 0x452000, 0 },
		{ 0xffffffffffe00000, 0xffffffffffffffff, 0 },
		{ 0xffffffffffc00000, 0xffffffffffe00000, 2048 },
		{ 0xffffffffffffffff, 0xffffffffffffffff, 0 },
	};

	for (size_t i = 0; i < TAP_N(t); i++)
		ok_u64(smaps_aligned_kb(t[i].start, t[i].end), t[i].kb,
		       "aligned [0x%" PRIx64 ", 0x%" PRIx64 "): %" PRIu64 " kB", t[i].start,
		       t[i].end, t[i].kb);
}

static void check_json(void)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} t[] = {
#define J(in, out) { in, sizeof(in) - 1, out }
		J("", ""),
		J("/usr/bin/x", "/usr/bin/x"),
		J("a\"b\\c", "a\\\"b\\\\c"),
		J("\b\f\n\r\t", "\\b\\f\\n\\r\\t"),
		J("\x01\x1f\x7f", "\\u0001\\u001f\\u007f"),
		J("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
		J("\xff", "\\ufffd"),
		J("a\xc3", "a\\ufffd"),
		J("\xc0\xaf", "\\ufffd\\ufffd"),           /* overlong */
		J("\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"), /* a surrogate */
		J("\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"), /* > U+10FFFF */
		J("a\0b", "a\\u0000b"),
#undef J
	};

	for (size_t i = 0; i < TAP_N(t); i++) {
		char *out = malloc(json_escape_max(t[i].len));
		size_t n = json_escape(out, t[i].in, t[i].len);
		if (!ok(n == strlen(t[i].out) && strcmp(out, t[i].out) == 0, "json escape #%zu -> %s", i,
		   t[i].out))
			diag("  got %s", out);
		ok(n < (size_t)json_escape_max(t[i].len), "json escape #%zu fits its bound", i);
		free(out);
	}
}

/* The reader (json.h), on lines as tiexec-warm --json writes them: names
 * with " and \ read back exactly, members found only at the top level
 * (not inside a string or a nested value). */
static void check_json_read(void)
{
	char buf[256];
	uint64_t v;
	const char *line = "{\"path\":\"/opt/a\\\"b\\\\c \\u00e9\\ud83d\\ude00\\ufffd\",\"route\":\"file\","
			   "\"kept\":[{\"offset\":1,\"pids\":[2]}],\"note\":\"\\\"aligned_kb\\\":7\",\"aligned_kb\":63488}";

	ok(json_get_string(json_member(line, "path"), buf, sizeof(buf)) == 0 &&
		   !strcmp(buf, "/opt/a\"b\\c \xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbd"),
	   "json: a string with \" \\ \\u and a surrogate pair decodes");
	ok(json_get_u64(json_member(line, "aligned_kb"), &v) == 0 && v == 63488,
	   "json: a member after a nested array and a string that looks like a key");
	ok(json_member(line, "offset") == NULL, "json: a nested member is not a top-level one");
	ok(json_member(line, "missing") == NULL, "json: no such member");
	ok(json_get_string(json_member(line, "path"), buf, 8) < 0, "json: a string that does not fit is refused");
	ok(json_member("{\"path\":\"unterminated", "route") == NULL, "json: a cut line has no member");

	/* Whatever the bytes of a name, what is written reads back (non-UTF-8
	 * bytes as U+FFFD). */
	const char *name = "/x/\"q\"\\\xff\n";
	char esc[128], obj[160];
	json_escape(esc, name, strlen(name));
	snprintf(obj, sizeof(obj), "{\"path\":\"%s\"}", esc);
	ok(json_get_string(json_member(obj, "path"), buf, sizeof(buf)) == 0 &&
		   !strcmp(buf, "/x/\"q\"\\\xef\xbf\xbd\n"),
	   "json: written and read back");
}

int main(void)
{
	for (size_t c = 0; c < TAP_N(cases); c++)
		check_case(c);
	check_cuts();
	check_big();
	check_headers();
	check_aligned();
	check_json();
	check_json_read();
	return tap_done();
}
