/* tiexec-stamp: marks programs to be run through tiexec by binfmt_misc, with
 * a policy (common/mark.h); checks and removes the mark.  The only part of
 * tiexec-stamp that prints. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "elfio.h"
#include "fileio.h"
#include "note.h"
#include "owner.h"
#include "trust.h"

#ifndef TIEXEC_VERSION
#define TIEXEC_VERSION "unknown"
#endif

/* Exit statuses; with several files the worst one wins. */
enum { ST_OK = 0, ST_NOT_STAMPED = 1, ST_REFUSED = 2 };

static const char usage[] =
	"Usage: tiexec-stamp [OPTIONS] FILE...    stamp FILEs in place\n"
	"       tiexec-stamp --check FILE...      is each FILE stamped, and how\n"
	"       tiexec-stamp --remove FILE...     undo the stamp\n"
	"\n"
	"Stamping marks a program so that binfmt_misc runs it through tiexec, with\n"
	"this policy (an option not given is left to tiexec's defaults):\n"
	"      --strategy=S       auto, file, thp, hugetlb or off\n"
	"      --min-text=SIZE    leave the program alone below this much text (2M, 512K)\n"
	"      --round-out        also cover the unaligned head and tail of the text\n"
	"      --lazy             do not fault the text in at start\n"
	"      --libs, --no-libs  shared libraries' text too (tiexec's default), or not\n"
	"      --windows, --no-windows\n"
	"                         libc's read-only image in a 2 MiB window of its own\n"
	"                         (tiexec's default; x86-64: its rodata executable), or not\n"
	"\n"
	"      --dry-run          say what would be done, change nothing\n"
	"      --force            stamp a file a package manager owns, or a shared\n"
	"                         library that also runs as a program (DT_SONAME)\n"
	"      --root-only        refuse a FILE that is a symbolic link, or that someone\n"
	"                         other than root (or the caller) could change: its owner,\n"
	"                         a writable directory on its path, an ACL entry\n"
	"                         (tiexec-keep, as root, on the programs it keeps)\n"
	"  -h, --help             this text\n"
	"      --version          the version\n"
	"\n"
	"Stamping again replaces the policy.  The file is replaced atomically, with\n"
	"its mode, owner and extended attributes.\n"
	"Exit status: 0 done (--check: all stamped), 1 --check: some not stamped,\n"
	"2 a file refused or an error (one line on stderr each); with several files\n"
	"the worst.\n";

/* How to go about it: --dry-run, --force, --root-only. */
struct how {
	int dry_run, force, root_only;
};

/* --root-only: why file may not be changed by root on a list's word (its
 * final component a link, or changeable by another user: trust.h), into
 * why; NULL when it may. */
static const char *not_roots(const char *file, char *why, size_t n)
{
	struct stat st;

	if (lstat(file, &st) != 0)
		return snprintf(why, n, "%s", strerror(errno)), why;
	if (S_ISLNK(st.st_mode))
		return snprintf(why, n, "a symbolic link: with --root-only, name the file itself"), why;
	char *r = realpath(file, NULL);
	if (!r)
		return snprintf(why, n, "%s", strerror(errno)), why;
	char w[PATH_MAX + 64];
	const char *c = trust_changeable(r, w, sizeof(w));
	free(r);
	if (!c)
		return NULL;
	snprintf(why, n, "%s, not only by root: refused (--root-only)", w);
	return why;
}

static void refuse(const char *file, const char *why)
{
	fprintf(stderr, "tiexec-stamp: '%s': %s\n", file, why);
}

/* Guard rails a --force lifts: files a package manager will replace (and
 * whose change its verification flags), and shared libraries that also
 * run as programs (libc.so.6 has PT_INTERP).  0, or -1 with why. */
static int guard(const struct opened *f, const struct elf_facts *facts, char *why, size_t whylen)
{
	char pkg[160];

	if (facts->soname[0]) {
		snprintf(why, whylen,
			 "declares a shared-library name (DT_SONAME %s): a library, even if it also runs "
			 "as a program; --force stamps it anyway", facts->soname);
		return -1;
	}
	if (package_owner(f->path, pkg, sizeof(pkg))) {
		snprintf(why, whylen,
			 "belongs to %s: its next upgrade drops the stamp and %s flags the change; "
			 "use tiexec-keep (a stamped copy that follows upgrades), or --force",
			 pkg, strstr(pkg, "RPM") ? "rpm -V" : "dpkg --verify");
		return -1;
	}
	return 0;
}

/* A stamped program that will not gain: the loader maps whole 2 MiB pieces
 * of text only (unless --round-out covers the head and tail). */
static void warn_no_gain(const char *file, const struct elf_facts *facts, const struct tiexec_policy *want)
{
	if (facts->text_huge || (want->flags & TIEXEC_POLICY_ROUND_OUT))
		return;
	char size[32];
	if (facts->text >= (1 << 20))
		snprintf(size, sizeof(size), "%.1f MiB", (double)facts->text / (1 << 20));
	else if (facts->text >= (1 << 10))
		snprintf(size, sizeof(size), "%ju KiB", (uintmax_t)(facts->text >> 10));
	else
		snprintf(size, sizeof(size), "%ju bytes", (uintmax_t)facts->text);
	fprintf(stderr,
		"tiexec-stamp: '%s': warning: no whole 2 MiB piece of text (%s of text): it runs "
		"on 4 KiB pages unless stamped with --round-out\n",
		file, size);
}

static int do_stamp(const char *file, const struct tiexec_policy *want, const struct how *how)
{
	struct opened f;
	struct elf_facts facts;
	unsigned char *out = NULL;
	size_t outlen = 0;
	char why[512];
	int rc = ST_REFUSED;

	if (opened_read(file, OPEN_WRITE, &f, why, sizeof(why)) != 0)
		goto fail;
	if (f.st.st_mode & (S_ISUID | S_ISGID)) {
		snprintf(why, sizeof(why),
			 "set-user-ID or set-group-ID: tiexec cannot run it with those privileges");
		goto fail;
	}
	/* A file capability is a privilege only a real exec grants, like
	 * set-user-ID: the loader refuses such a stamped program (126). */
	if (fgetxattr(f.fd, "security.capability", NULL, 0) >= 0 || errno == ERANGE) {
		snprintf(why, sizeof(why),
			 "file capabilities: tiexec cannot run it with those privileges");
		goto fail;
	}
	if (elf_facts_read(f.buf, f.len, &facts, why, sizeof(why)) != 0 ||
	    stamp_build(f.buf, &facts, want, &out, &outlen, why, sizeof(why)) != 0 ||
	    (!how->force && guard(&f, &facts, why, sizeof(why)) != 0))
		goto fail;
	/* Stamped so already: leave the file alone. */
	int same = outlen == f.len && memcmp(out, f.buf, f.len) == 0;
	if (facts.marked && !facts.note_found)
		printf("%s: its tiexec note was gone (stripped by an LLVM tool?): stamped again\n", file);
	if (how->dry_run) {
		char pol[160];
		printf("%s: %s: %s\n", file, same ? "stamped so already" : "would be stamped",
		       policy_format(want, pol, sizeof(pol)));
		rc = ST_OK;
	} else if (same || replace_file(&f, out, outlen, why, sizeof(why)) == 0) {
		rc = ST_OK;
	}
	if (rc == ST_OK)
		warn_no_gain(file, &facts, want);
fail:
	if (rc != ST_OK)
		refuse(file, why);
	free(out);
	opened_close(&f);
	return rc;
}

static int do_remove(const char *file, const struct how *how)
{
	struct opened f;
	struct elf_facts facts;
	enum remove_kind kind;
	unsigned char *out = NULL;
	size_t outlen = 0;
	char why[512];
	int rc = ST_REFUSED;

	if (opened_read(file, OPEN_WRITE, &f, why, sizeof(why)) != 0 ||
	    elf_facts_read(f.buf, f.len, &facts, why, sizeof(why)) != 0 ||
	    remove_build(f.buf, &facts, &kind, &out, &outlen, why, sizeof(why)) != 0)
		goto fail;
	/* Not stamped: nothing to do. */
	if (how->dry_run) {
		printf("%s: %s\n", file, kind == REMOVE_NOTHING ? "not stamped" : "would be unstamped");
		rc = ST_OK;
	} else if (kind == REMOVE_NOTHING || replace_file(&f, out, outlen, why, sizeof(why)) == 0) {
		rc = ST_OK;
	}
fail:
	if (rc != ST_OK)
		refuse(file, why);
	free(out);
	opened_close(&f);
	return rc;
}

static int do_check(const char *file)
{
	struct opened f;
	struct elf_facts facts;
	char why[512], pol[160];
	int rc = ST_NOT_STAMPED;

	if (opened_read(file, OPEN_READ, &f, why, sizeof(why)) != 0) {
		refuse(file, why);
		opened_close(&f);
		return ST_REFUSED;
	}
	if (f.len < SELFMAG || memcmp(f.buf, ELFMAG, SELFMAG) != 0) {
		printf("%s: not an ELF file\n", file);
	} else if (elf_facts_read(f.buf, f.len, &facts, why, sizeof(why)) != 0) {
		printf("%s: not stamped\n", file);
	} else if (facts.debug_only) {
		printf("%s: not a program: %s\n", file, ELF_DEBUG_ONLY);
	} else if (!facts.marked) {
		printf("%s: not stamped\n", file);
	} else if (!facts.note_found) {
		printf("%s: stamped, but its tiexec note is gone (llvm-strip and llvm-objcopy --strip-all "
		       "drop it): the defaults apply; stamp it again to give it its policy back\n", file);
	} else if (!facts.note_ok) {
		printf("%s: marked, but no readable note: defaults\n", file);
	} else {
		printf("%s: stamped: %s\n", file, policy_format(&facts.policy, pol, sizeof(pol)));
		rc = ST_OK;
	}
	opened_close(&f);
	return rc;
}

static int bad_usage(const char *fmt, const char *arg)
{
	fputs("tiexec-stamp: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'tiexec-stamp --help'.\n", stderr);
	return ST_REFUSED;
}

/* What the command line asks for. */
struct args {
	struct tiexec_policy want;
	struct how how;
	int check, remove, policy_given;
};

/* One policy option (c, optarg) into a: 0, or the usage error's status. */
static int policy_option(int c, const char *arg, struct args *a)
{
	a->policy_given = 1;
	switch (c) {
	case 's':
		return strategy_parse(arg, &a->want.strategy) == 0
			       ? 0
			       : bad_usage("--strategy: '%s': not auto, file, thp, hugetlb or off", arg);
	case 'm':
		return size_parse(arg, &a->want.min_text) == 0 && a->want.min_text != TIEXEC_UNSET64
			       ? 0
			       : bad_usage("--min-text: '%s': not a size such as 4M or 2097152", arg);
	case 'r': a->want.flags |= TIEXEC_POLICY_ROUND_OUT; return 0;
	case 'z': a->want.flags |= TIEXEC_POLICY_LAZY; return 0;
	case 'W': /* --windows, --no-windows */
	case 'O':
		a->want.flags &= ~(TIEXEC_POLICY_WINDOWS | TIEXEC_POLICY_NO_WINDOWS);
		a->want.flags |= c == 'W' ? TIEXEC_POLICY_WINDOWS : TIEXEC_POLICY_NO_WINDOWS;
		return 0;
	default: /* 'L' --libs, 'N' --no-libs */
		a->want.flags &= ~(TIEXEC_POLICY_LIBS | TIEXEC_POLICY_NO_LIBS);
		a->want.flags |= c == 'L' ? TIEXEC_POLICY_LIBS : TIEXEC_POLICY_NO_LIBS;
		return 0;
	}
}

/* The options into a: the index of the first FILE, or -(exit status + 1)
 * when the answer is given here. */
static int parse_options(int argc, char **argv, struct args *a)
{
	enum { O_CHECK = 256, O_REMOVE, O_VERSION, O_DRY_RUN, O_FORCE, O_ROOT_ONLY };
	static const struct option longopts[] = {
		{ "strategy", required_argument, NULL, 's' },
		{ "min-text", required_argument, NULL, 'm' },
		{ "round-out", no_argument, NULL, 'r' },
		{ "lazy", no_argument, NULL, 'z' },
		{ "libs", no_argument, NULL, 'L' },
		{ "no-libs", no_argument, NULL, 'N' },
		{ "windows", no_argument, NULL, 'W' },
		{ "no-windows", no_argument, NULL, 'O' },
		{ "check", no_argument, NULL, O_CHECK },
		{ "remove", no_argument, NULL, O_REMOVE },
		{ "dry-run", no_argument, NULL, O_DRY_RUN },
		{ "force", no_argument, NULL, O_FORCE },
		{ "root-only", no_argument, NULL, O_ROOT_ONLY },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	opterr = 0;
	/* Long options only: the policy letters above are not short ones. */
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': case 'm': case 'r': case 'z': case 'L': case 'N': case 'W': case 'O':
			if ((r = policy_option(c, optarg, a)) != 0)
				return -(r + 1);
			break;
		case O_CHECK: a->check = 1; break;
		case O_REMOVE: a->remove = 1; break;
		case O_DRY_RUN: a->how.dry_run = 1; break;
		case O_FORCE: a->how.force = 1; break;
		case O_ROOT_ONLY: a->how.root_only = 1; break;
		case 'h':
			fputs(usage, stdout);
			return -(ST_OK + 1);
		case O_VERSION:
			printf("tiexec-stamp %s\n", TIEXEC_VERSION);
			return -(ST_OK + 1);
		default:
			return -(bad_usage("bad option: '%s'", argv[optind - 1]) + 1);
		}
	}
	return optind;
}

int main(int argc, char **argv)
{
	struct args a = { .how = { 0, 0, 0 } };
	int status = ST_OK;

	policy_unset(&a.want);
	int first = parse_options(argc, argv, &a);
	if (first < 0)
		return -first - 1;
	if (a.check && a.remove)
		return bad_usage("%s", "--check and --remove do not go together");
	if ((a.check || a.remove) && a.policy_given)
		return bad_usage("%s: takes no policy options", a.check ? "--check" : "--remove");
	if (a.check && (a.how.dry_run || a.how.force))
		return bad_usage("%s", "--check takes neither --dry-run nor --force");
	if (first >= argc)
		return bad_usage("%s", "no FILE given");
	for (int i = first; i < argc; i++) {
		char why[PATH_MAX + 128];
		if (a.how.root_only && not_roots(argv[i], why, sizeof(why))) {
			refuse(argv[i], why);
			status = ST_REFUSED;
			continue;
		}
		int st = a.check ? do_check(argv[i]) : a.remove ? do_remove(argv[i], &a.how) : do_stamp(argv[i], &a.want, &a.how);
		if (st > status)
			status = st;
	}
	if (fflush(stdout) != 0)
		status = ST_REFUSED;
	return status;
}
