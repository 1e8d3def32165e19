/* Unit tests for interp/opts.c (TAP).
 *   gcc -std=gnu11 -Wall -Wextra -Werror -fsanitize=address,undefined \
 *       -fno-sanitize-recover=all -g -Iinterp tests/unit/test-opts.c interp/opts.c */
#include <string.h>

#include "layout.h"
#include "mark.h"
#include "opts.h"
#include "tap.h"

#define KI 1024ULL
#define MI (1024ULL * KI)
#define GI (1024ULL * MI)
#define FAIL 0xdeadbeefULL /* want: size_parse fails and leaves *out alone */

/* ---- size_parse ------------------------------------------------------------ */

static const struct {
	const char *s;
	uint64_t want;
} size_cases[] = {
	{ "0", 0 },
	{ "1", 1 },
	{ "4096", 4096 },
	{ "2097152", 2 * MI },
	{ "007", 7 },
	{ "4K", 4 * KI },
	{ "4k", 4 * KI },
	{ "2M", 2 * MI },
	{ "2m", 2 * MI },
	{ "1G", GI },
	{ "3g", 3 * GI },
	{ "0M", 0 },
	{ "4KiB", 4 * KI },
	{ "2MiB", 2 * MI },
	{ "1GiB", GI },
	{ "4KB", 4 * KI },
	{ "2MB", 2 * MI },
	{ "4B", 4 },
	{ "0B", 0 },
	{ "18446744073709551609", UINT64_MAX - 6 },
	/* every representable value is accepted, UINT64_MAX included */
	{ "18446744073709551610", UINT64_MAX - 5 },
	{ "18446744073709551615", UINT64_MAX },
	{ "17179869183G", 17179869183ULL << 30 },
	{ "17592186044415M", 17592186044415ULL << 20 },
	{ "18014398509481983K", 18014398509481983ULL << 10 },
	/* overflow */
	{ "18446744073709551616", FAIL },
	{ "18446744073709551620", FAIL },
	{ "99999999999999999999", FAIL },
	{ "100000000000000000000", FAIL },
	{ "17179869184G", FAIL },
	{ "17592186044416M", FAIL },
	{ "18014398509481984K", FAIL },
	{ "18446744073709551615K", FAIL },
	/* garbage */
	{ "", FAIL },
	{ "K", FAIL },
	{ "M", FAIL },
	{ "B", FAIL },
	{ "iB", FAIL },
	{ "-1", FAIL },
	{ "+1", FAIL },
	{ " 1", FAIL },
	{ "1 ", FAIL },
	{ "1 K", FAIL },
	{ "4X", FAIL },
	{ "4T", FAIL },
	{ "4KK", FAIL },
	{ "4Ki", FAIL },
	{ "4KI", FAIL },
	{ "4Kib", FAIL },
	{ "4kib", FAIL },
	{ "4iB", FAIL },
	{ "4BB", FAIL },
	{ "4KiBB", FAIL },
	{ "4MiBx", FAIL },
	{ "0x10", FAIL },
	{ "1.5M", FAIL },
	{ "1e6", FAIL },
	{ "4b", FAIL },
};

static void test_size(void)
{
	for (size_t i = 0; i < TAP_N(size_cases); i++) {
		const char *s = size_cases[i].s;
		uint64_t want = size_cases[i].want, got = FAIL;
		int r = size_parse(s, &got);
		int good = want == FAIL ? r == -1 && got == FAIL : r == 0 && got == want;
		if (!ok(good, "size_parse(\"%s\") -> %s", s, want == FAIL ? "error" : "value"))
			diag("  returned %d, value %" PRIu64 " (want %" PRIu64 ")", r, got, want);
	}
}

/* ---- strategy_parse, strategy_name ----------------------------------------- */

static const struct {
	const char *s;
	int ret;
	enum strategy want;
} strategy_cases[] = {
	{ "auto", 0, ST_AUTO },   { "file", 0, ST_FILE },    { "thp", 0, ST_THP },
	{ "hugetlb", 0, ST_HUGETLB }, { "off", 0, ST_OFF },  { "", -1, ST_AUTO },
	{ "th", -1, ST_AUTO },    { "thpx", -1, ST_AUTO },   { "thp ", -1, ST_AUTO },
	{ " thp", -1, ST_AUTO },  { "hugetlbfs", -1, ST_AUTO }, { "on", -1, ST_AUTO },
	{ "?", -1, ST_AUTO },     { "autothp", -1, ST_AUTO },
};

static void test_strategy(void)
{
	for (size_t i = 0; i < TAP_N(strategy_cases); i++) {
		enum strategy got = (enum strategy)77;
		int r = strategy_parse(strategy_cases[i].s, &got);
		int good = r == strategy_cases[i].ret &&
			   (r == 0 ? got == strategy_cases[i].want : got == (enum strategy)77);
		ok(good, "strategy_parse(\"%s\") -> %d", strategy_cases[i].s, strategy_cases[i].ret);
	}
	int round = 1;
	for (int s = ST_AUTO; s <= ST_OFF; s++) {
		enum strategy got;
		if (strategy_parse(strategy_name((enum strategy)s), &got) || got != (enum strategy)s)
			round = 0;
	}
	ok(round, "strategy_name and strategy_parse round-trip");
}

/* ---- opts_bool ------------------------------------------------------------ */

static const struct {
	const char *s;
	int want;
} bool_cases[] = {
	{ "", 0 },     { "0", 0 },   { "no", 0 },   { "false", 0 }, { "off", 0 },
	{ "1", 1 },    { "yes", 1 }, { "true", 1 }, { "on", 1 },    { "2", 1 },
	{ "00", 1 },   { "nope", 1 }, { "offx", 1 }, { "verbose", 1 },
};

static void test_bool(void)
{
	for (size_t i = 0; i < TAP_N(bool_cases); i++)
		ok(opts_bool(bool_cases[i].s) == bool_cases[i].want, "opts_bool(\"%s\") -> %d",
		   bool_cases[i].s, bool_cases[i].want);
}

/* ---- opts_default, opts_env ----------------------------------------------- */

static int same_opts(const struct opts *a, const struct opts *b)
{
	return a->verbose == b->verbose && a->strategy == b->strategy && a->lazy == b->lazy &&
	       a->round_out == b->round_out && a->min_text == b->min_text && a->help == b->help &&
	       a->version == b->version;
}

static void show(const char *what, const struct opts *o)
{
	diag("  %s: verbose %d strategy %s lazy %d round_out %d min_text %" PRIu64
	     " help %d version %d",
	     what, o->verbose, strategy_name(o->strategy), o->lazy, o->round_out, o->min_text,
	     o->help, o->version);
}

/* The defaults with some fields changed. */
struct delta {
	int verbose, lazy, round_out, help, version; /* -1: default */
	int strategy;                                /* -1: default */
	uint64_t min_text;                           /* ~0: default */
};
#define D(...) { -1, -1, -1, -1, -1, -1, ~0ULL, __VA_ARGS__ }
#pragma GCC diagnostic ignored "-Woverride-init"

static struct opts expect(const struct delta *d)
{
	struct opts o;

	opts_default(&o);
	if (d->verbose >= 0) o.verbose = d->verbose;
	if (d->lazy >= 0) o.lazy = d->lazy;
	if (d->round_out >= 0) o.round_out = d->round_out;
	if (d->help >= 0) o.help = d->help;
	if (d->version >= 0) o.version = d->version;
	if (d->strategy >= 0) o.strategy = (enum strategy)d->strategy;
	if (d->min_text != ~0ULL) o.min_text = d->min_text;
	return o;
}

static void test_default(void)
{
	struct opts o;

	memset(&o, 0x5a, sizeof(o));
	opts_default(&o);
	ok(o.verbose == 0 && o.strategy == ST_AUTO && o.lazy == 0 && o.round_out == 0 &&
		   o.min_text == TX_HUGE && o.help == 0 && o.version == 0,
	   "opts_default: quiet, auto, eager, no round-out, min_text 2 MiB");
}

static const struct {
	const char *entry;
	enum opts_env_err ret;
	struct delta d;
} env_cases[] = {
	{ "TIEXEC_VERBOSE=1", OPT_ENV_OK, D(.verbose = 1) },
	{ "TIEXEC_VERBOSE=yes", OPT_ENV_OK, D(.verbose = 1) },
	{ "TIEXEC_VERBOSE=0", OPT_ENV_OK, D(.verbose = 0) },
	{ "TIEXEC_VERBOSE=", OPT_ENV_OK, D(.verbose = 0) },
	{ "TIEXEC_LAZY=1", OPT_ENV_OK, D(.lazy = 1) },
	{ "TIEXEC_LAZY=off", OPT_ENV_OK, D(.lazy = 0) },
	{ "TIEXEC_ROUND_OUT=true", OPT_ENV_OK, D(.round_out = 1) },
	{ "TIEXEC_STRATEGY=thp", OPT_ENV_OK, D(.strategy = ST_THP) },
	{ "TIEXEC_STRATEGY=hugetlb", OPT_ENV_OK, D(.strategy = ST_HUGETLB) },
	{ "TIEXEC_STRATEGY=off", OPT_ENV_OK, D(.strategy = ST_OFF) },
	{ "TIEXEC_STRATEGY=bogus", OPT_ENV_BAD, D() },
	{ "TIEXEC_STRATEGY=", OPT_ENV_BAD, D() },
	{ "TIEXEC_MIN_TEXT=0", OPT_ENV_OK, D(.min_text = 0) },
	{ "TIEXEC_MIN_TEXT=16M", OPT_ENV_OK, D(.min_text = 16 * MI) },
	{ "TIEXEC_MIN_TEXT=4KiB", OPT_ENV_OK, D(.min_text = 4 * KI) },
	{ "TIEXEC_MIN_TEXT=lots", OPT_ENV_BAD, D() },
	{ "TIEXEC_MIN_TEXT=", OPT_ENV_BAD, D() },
	{ "TIEXEC_MIN_TEXT=99999999999999999999", OPT_ENV_BAD, D() },
	/* not ours, or not a setting */
	{ "PATH=/usr/bin", OPT_ENV_OK, D() },
	{ "TIEXEC_UNKNOWN=1", OPT_ENV_OK, D() },
	{ "TIEXEC_VERBOSE", OPT_ENV_OK, D() },
	{ "TIEXEC_VERBOSEX=1", OPT_ENV_OK, D() },
	{ "TIEXEC_STRATEGYX=bogus", OPT_ENV_OK, D() },
	{ "TIEXEC_=1", OPT_ENV_OK, D() },
	{ "TIEXEC", OPT_ENV_OK, D() },
	{ "", OPT_ENV_OK, D() },
	{ "XTIEXEC_VERBOSE=1", OPT_ENV_OK, D() },
	{ "tiexec_verbose=1", OPT_ENV_OK, D() },
	{ "TIEXEC_HELP=1", OPT_ENV_OK, D() },
};

static void test_env(void)
{
	for (size_t i = 0; i < TAP_N(env_cases); i++) {
		struct opts o, w = expect(&env_cases[i].d);
		opts_default(&o);
		enum opts_env_err r = opts_env(&o, env_cases[i].entry);
		if (!ok(r == env_cases[i].ret && same_opts(&o, &w), "opts_env(\"%s\") -> %s",
			env_cases[i].entry, env_cases[i].ret == OPT_ENV_OK ? "ok" : "bad")) {
			diag("  returned %d", r);
			show("got ", &o);
			show("want", &w);
		}
	}
	/* the environment can turn a setting off again */
	struct opts o;
	opts_default(&o);
	opts_env(&o, "TIEXEC_VERBOSE=1");
	opts_env(&o, "TIEXEC_STRATEGY=thp");
	opts_env(&o, "TIEXEC_STRATEGY=nope");
	opts_env(&o, "TIEXEC_VERBOSE=no");
	ok(o.verbose == 0 && o.strategy == ST_THP,
	   "opts_env: later entries override, a bad one changes nothing");
}

/* ---- opts_argv ------------------------------------------------------------ */

#define MAXARG 8

struct argv_case {
	const char *desc;
	const char *argv[MAXARG]; /* NULL-terminated; argc counts up to it */
	int ret;
	const char *bad; /* when ret == -1 */
	const char *why; /* when ret == -1: a substring of *why */
	struct delta d;
};

static const struct argv_case argv_cases[] = {
	{ "no arguments: program missing (== argc)", { "tiexec" }, 1, NULL, NULL, D() },
	{ "just a program", { "tiexec", "prog", "-v" }, 1, NULL, NULL, D() },
	{ "options stop at the first non-option", { "tiexec", "-v", "prog", "--lazy", "-x" }, 2,
	  NULL, NULL, D(.verbose = 1) },
	{ "-- ends the options", { "tiexec", "--", "-v" }, 2, NULL, NULL, D() },
	{ "-- after options", { "tiexec", "--lazy", "--", "prog" }, 3, NULL, NULL, D(.lazy = 1) },
	{ "a second -- is the program", { "tiexec", "--verbose", "--", "--", "x" }, 3, NULL, NULL,
	  D(.verbose = 1) },
	{ "-- and nothing after: program missing", { "tiexec", "-v", "--" }, 3, NULL, NULL,
	  D(.verbose = 1) },
	{ "options and nothing after: program missing", { "tiexec", "-v", "--lazy" }, 3, NULL,
	  NULL, D(.verbose = 1, .lazy = 1) },
	{ "- alone is a program name", { "tiexec", "-", "x" }, 1, NULL, NULL, D() },
	{ "- after options", { "tiexec", "-v", "-" }, 2, NULL, NULL, D(.verbose = 1) },
	{ "--strategy thp", { "tiexec", "--strategy", "thp", "prog" }, 3, NULL, NULL,
	  D(.strategy = ST_THP) },
	{ "--strategy=thp", { "tiexec", "--strategy=thp", "prog" }, 2, NULL, NULL,
	  D(.strategy = ST_THP) },
	{ "--strategy=off then --strategy file: the last wins",
	  { "tiexec", "--strategy=off", "--strategy", "file", "p" }, 4, NULL, NULL,
	  D(.strategy = ST_FILE) },
	{ "--strategy value may look like the program", { "tiexec", "--strategy", "auto", "auto" },
	  3, NULL, NULL, D() },
	{ "--min-text 4M", { "tiexec", "--min-text", "4M", "p" }, 3, NULL, NULL,
	  D(.min_text = 4 * MI) },
	{ "--min-text=0", { "tiexec", "--min-text=0", "p" }, 2, NULL, NULL, D(.min_text = 0) },
	{ "every flag", { "tiexec", "-v", "--lazy", "--round-out", "-h", "--version", "p" }, 6,
	  NULL, NULL, D(.verbose = 1, .lazy = 1, .round_out = 1, .help = 1, .version = 1) },
	{ "--help", { "tiexec", "--help" }, 2, NULL, NULL, D(.help = 1) },
	{ "--strategy without a value", { "tiexec", "--strategy" }, -1, "--strategy",
	  "needs a value", D() },
	{ "--min-text without a value", { "tiexec", "-v", "--min-text" }, -1, "--min-text",
	  "needs a value", D(.verbose = 1) },
	{ "--strategy bad value", { "tiexec", "--strategy", "bogus", "p" }, -1, "--strategy",
	  "auto, file, thp, hugetlb or off", D() },
	{ "--strategy=bad value", { "tiexec", "--strategy=bogus", "p" }, -1, "--strategy=bogus",
	  "auto, file, thp, hugetlb or off", D() },
	{ "--strategy= (empty value)", { "tiexec", "--strategy=", "p" }, -1, "--strategy=",
	  "auto, file, thp, hugetlb or off", D() },
	{ "--strategy takes -- as its (bad) value", { "tiexec", "--strategy", "--", "p" }, -1,
	  "--strategy", "auto, file", D() },
	{ "--min-text bad value", { "tiexec", "--min-text", "lots", "p" }, -1, "--min-text",
	  "size", D() },
	{ "--min-text=bad value", { "tiexec", "--min-text=4Q", "p" }, -1, "--min-text=4Q", "size",
	  D() },
	{ "unknown long option", { "tiexec", "--bogus", "p" }, -1, "--bogus", "unknown option",
	  D() },
	{ "unknown short option", { "tiexec", "-x", "p" }, -1, "-x", "unknown option", D() },
	{ "unknown option after good ones", { "tiexec", "-v", "--lazy=1", "p" }, -1, "--lazy=1",
	  "unknown option", D(.verbose = 1) },
	{ "prefix of an option name is not it", { "tiexec", "--strategyx=thp", "p" }, -1,
	  "--strategyx=thp", "unknown option", D() },
	{ "option name with a suffix is not it", { "tiexec", "--verbosex", "p" }, -1, "--verbosex",
	  "unknown option", D() },
	{ "short options do not combine", { "tiexec", "-vh", "p" }, -1, "-vh", "unknown option",
	  D() },
	{ "--- is not --", { "tiexec", "---", "p" }, -1, "---", "unknown option", D() },
};

static void test_argv(void)
{
	for (size_t i = 0; i < TAP_N(argv_cases); i++) {
		const struct argv_case *c = &argv_cases[i];
		char *argv[MAXARG + 1];
		int argc = 0;
		while (c->argv[argc]) {
			argv[argc] = (char *)c->argv[argc];
			argc++;
		}
		argv[argc] = NULL;

		struct opts o, w = expect(&c->d);
		const char *bad = NULL, *why = NULL;
		opts_default(&o);
		int r = opts_argv(&o, argc, argv, &bad, &why);
		int good = r == c->ret && same_opts(&o, &w);
		if (c->ret < 0)
			good = good && bad && strcmp(bad, c->bad) == 0 && why && strstr(why, c->why);
		if (!ok(good, "opts_argv: %s", c->desc)) {
			diag("  returned %d (want %d), bad \"%s\", why \"%s\"", r, c->ret,
			     bad ? bad : "(null)", why ? why : "(null)");
			show("got ", &o);
			show("want", &w);
		}
	}
}

/* ---- the policy note and layering ---------------------------------------- */

static void test_note(void)
{
	struct tiexec_policy p;
	struct opts o;
	struct {
		const char *desc;
		uint32_t version, size, strategy, flags;
		uint64_t min_text;
		size_t len;
		enum opts_note_err want;
		unsigned want_set;
		enum strategy want_strategy;
		uint64_t want_min;
		int want_round, want_lazy;
	} cases[] = {
		{ "all unset", 1, sizeof(p), TIEXEC_UNSET32, 0, TIEXEC_UNSET64, sizeof(p), OPT_NOTE_OK, 0,
		  ST_AUTO, 2 << 20, 0, 0 },
		{ "thp, 8M, round-out, lazy", 1, sizeof(p), ST_THP,
		  TIEXEC_POLICY_ROUND_OUT | TIEXEC_POLICY_LAZY, 8 << 20, sizeof(p), OPT_NOTE_OK,
		  OPT_STRATEGY | OPT_MIN_TEXT | OPT_ROUND_OUT | OPT_LAZY, ST_THP, 8 << 20, 1, 1 },
		{ "off", 1, sizeof(p), ST_OFF, 0, TIEXEC_UNSET64, sizeof(p), OPT_NOTE_OK, OPT_STRATEGY,
		  ST_OFF, 2 << 20, 0, 0 },
		{ "a shorter, older writer: fields past size are unset", 1, 16, ST_FILE,
		  TIEXEC_POLICY_ROUND_OUT, 123, sizeof(p), OPT_NOTE_OK,
		  OPT_STRATEGY | OPT_ROUND_OUT, ST_FILE, 2 << 20, 1, 0 },
		{ "size 12: strategy only", 1, 12, ST_HUGETLB, TIEXEC_POLICY_LAZY, 123, sizeof(p),
		  OPT_NOTE_OK, OPT_STRATEGY, ST_HUGETLB, 2 << 20, 0, 0 },
		{ "a newer writer's extra bytes are ignored", 1, sizeof(p) + 8, ST_THP, 0, TIEXEC_UNSET64,
		  sizeof(p) + 8, OPT_NOTE_OK, OPT_STRATEGY, ST_THP, 2 << 20, 0, 0 },
		{ "unknown version", 2, sizeof(p), ST_THP, 0, 1, sizeof(p), OPT_NOTE_VERSION, 0, ST_AUTO,
		  2 << 20, 0, 0 },
		{ "size larger than the descriptor", 1, sizeof(p) + 4, ST_THP, 0, 1, sizeof(p),
		  OPT_NOTE_BAD, 0, ST_AUTO, 2 << 20, 0, 0 },
		{ "size below the header", 1, 4, ST_THP, 0, 1, sizeof(p), OPT_NOTE_BAD, 0, ST_AUTO,
		  2 << 20, 0, 0 },
		{ "strategy out of range", 1, sizeof(p), 9, 0, 1, sizeof(p), OPT_NOTE_BAD, 0, ST_AUTO,
		  2 << 20, 0, 0 },
		{ "descriptor of 7 bytes", 1, 7, 0, 0, 0, 7, OPT_NOTE_SHORT, 0, ST_AUTO, 2 << 20, 0, 0 },
	};
	unsigned char buf[sizeof(p) + 16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.version = cases[i].version;
		p.size = cases[i].size;
		p.strategy = cases[i].strategy;
		p.flags = cases[i].flags;
		p.min_text = cases[i].min_text;
		memset(buf, 0, sizeof(buf));
		memcpy(buf, &p, sizeof(p));
		opts_default(&o);
		enum opts_note_err e = opts_note(&o, buf, cases[i].len);
		ok(e == cases[i].want && o.set == cases[i].want_set &&
			   o.strategy == cases[i].want_strategy && o.min_text == cases[i].want_min &&
			   o.round_out == cases[i].want_round && o.lazy == cases[i].want_lazy,
		   "opts_note: %s (err %d set %#x)", cases[i].desc, e, o.set);
	}
}

static void test_merge(void)
{
	struct opts base, note, env, cli;
	char *argv[] = { "tiexec", "--min-text=1M", "prog", NULL };
	const char *bad, *why;

	opts_default(&base);
	opts_default(&note);
	opts_default(&env);
	opts_default(&cli);
	note.strategy = ST_THP;
	note.min_text = 64 << 20;
	note.round_out = 1;
	note.set = OPT_STRATEGY | OPT_MIN_TEXT | OPT_ROUND_OUT;
	opts_env(&env, "TIEXEC_STRATEGY=file");
	opts_env(&env, "TIEXEC_ROUND_OUT=0");
	opts_argv(&cli, 3, argv, &bad, &why);
	opts_merge(&base, &note);
	ok(base.strategy == ST_THP && base.min_text == 64 << 20 && base.round_out == 1,
	   "opts_merge: the note over the defaults");
	opts_merge(&base, &env);
	ok(base.strategy == ST_FILE && base.min_text == 64 << 20 && base.round_out == 0,
	   "opts_merge: the environment over the note, also to turn a flag off");
	opts_merge(&base, &cli);
	ok(base.strategy == ST_FILE && base.min_text == 1 << 20 && base.round_out == 0 && !base.verbose,
	   "opts_merge: the command line over both, unset fields untouched");
	ok(env.set == (OPT_STRATEGY | OPT_ROUND_OUT) && cli.set == OPT_MIN_TEXT,
	   "each source marks exactly what it set");
	ok((int)ST_AUTO == ST_AUTO && (int)ST_FILE == ST_FILE &&
		   (int)ST_THP == ST_THP && (int)ST_HUGETLB == ST_HUGETLB &&
		   (int)ST_OFF == ST_OFF,
	   "enum strategy matches the note's ST_* values");
}

/* Windows (libc's 2 MiB window, interp/libplan.c): on by default, off from
 * the environment, the command line or a stamp's note, the later source
 * winning; a note asking both ways is bad. */
static void test_windows(void)
{
	struct opts o, env, cli;
	struct tiexec_policy p;
	unsigned char buf[sizeof(p)];
	const char *bad, *why;
	char *argv[] = { "tiexec", "--no-windows", "prog", NULL };
	char *argv2[] = { "tiexec", "--windows", "prog", NULL };

	opts_default(&o);
	ok(o.windows == 1, "windows: on by default");
	opts_default(&env);
	env.set = 0;
	ok(opts_env(&env, "TIEXEC_WINDOWS=0") == OPT_ENV_OK && env.windows == 0 && env.set == OPT_WINDOWS,
	   "TIEXEC_WINDOWS=0: off, and set");
	opts_default(&cli);
	cli.set = 0;
	ok(opts_argv(&cli, 3, argv, &bad, &why) == 2 && cli.windows == 0 && cli.set == OPT_WINDOWS, "--no-windows");
	opts_default(&cli);
	cli.set = 0;
	ok(opts_argv(&cli, 3, argv2, &bad, &why) == 2 && cli.windows == 1 && cli.set == OPT_WINDOWS, "--windows");
	opts_merge(&o, &env);
	ok(o.windows == 0, "merge: the environment's off over the default");
	opts_merge(&o, &cli);
	ok(o.windows == 1, "merge: the command line's --windows over the environment");
	memset(&p, 0, sizeof(p));
	p.version = TIEXEC_POLICY_VERSION;
	p.size = sizeof(p);
	p.strategy = TIEXEC_UNSET32;
	p.min_text = TIEXEC_UNSET64;
	p.flags = TIEXEC_POLICY_NO_WINDOWS;
	memcpy(buf, &p, sizeof(p));
	opts_default(&o);
	o.set = 0;
	ok(opts_note(&o, buf, sizeof(buf)) == OPT_NOTE_OK && o.windows == 0 && o.set == OPT_WINDOWS,
	   "a stamp's --no-windows: off, and set");
	p.flags = TIEXEC_POLICY_WINDOWS | TIEXEC_POLICY_NO_WINDOWS;
	memcpy(buf, &p, sizeof(p));
	opts_default(&o);
	ok(opts_note(&o, buf, sizeof(buf)) == OPT_NOTE_BAD, "a note asking both ways is bad");
}

int main(void)
{
	test_size();
	test_strategy();
	test_bool();
	test_default();
	test_env();
	test_argv();
	test_note();
	test_merge();
	test_windows();
	return tap_done();
}
