/* Settings, lowest precedence first: defaults, the program's own note
 * (common/mark.h), TIEXEC_* environment variables, command-line options.
 * Each source fills a struct opts and marks what it set; opts_merge layers
 * them.  Pure parsing, unit-tested. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "policy.h" /* enum strategy, strategy_name, strategy_parse, size_parse */

struct opts {
	int verbose;
	enum strategy strategy;
	int lazy;
	int round_out;
	int libs; /* shared libraries' text too (the stage after ld.so, libs.c) */
	int windows; /* libc's read-only image in a 2 MiB window of its own (libplan.c) */
	uint64_t min_text;
	int help, version;
	int step_aside; /* --step-aside: a debugger's exec-wrapper (launch.c) */
	int aside_copy; /* --aside-copy: print the path of that copy (launch.c) */
	unsigned set; /* OPT_* bits: which of the fields above this source set */
};

#define OPT_VERBOSE 0x1u
#define OPT_STRATEGY 0x2u
#define OPT_LAZY 0x4u
#define OPT_ROUND_OUT 0x8u
#define OPT_MIN_TEXT 0x10u
#define OPT_LIBS 0x20u
#define OPT_WINDOWS 0x40u

/* Copies the fields src has set over dst. */
void opts_merge(struct opts *dst, const struct opts *src);

enum opts_note_err { OPT_NOTE_OK = 0, OPT_NOTE_SHORT, OPT_NOTE_VERSION, OPT_NOTE_BAD };
/* Applies a tiexec_policy descriptor of len bytes (as found in the note).
 * Fields beyond its `size`, or unset, are left alone. */
enum opts_note_err opts_note(struct opts *o, const void *desc, size_t len);

void opts_default(struct opts *o);
/* A boolean from the environment: "", "0", "no", "false", "off" are false. */
int opts_bool(const char *s);

enum opts_env_err { OPT_ENV_OK = 0, OPT_ENV_BAD };
/* Applies one "NAME=value" environment entry if NAME is a TIEXEC_ setting.
 * Returns OPT_ENV_BAD for a malformed value (the caller warns and goes on). */
enum opts_env_err opts_env(struct opts *o, const char *entry);

/* Parses options from argv[1..argc-1] until the first non-option or "--".
 * Returns the index of the program's name (== argc if missing), or -1 on a
 * bad option, with *bad pointing at the offending word and *why at a reason. */
int opts_argv(struct opts *o, int argc, char **argv, const char **bad, const char **why);
