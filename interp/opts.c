#include "opts.h"

#include <stddef.h>
#include <string.h>

#include "bits.h"
#include "layout.h"
#include "mark.h"

void opts_default(struct opts *o)
{
	o->verbose = 0;
	o->strategy = ST_AUTO;
	o->lazy = 0;
	o->round_out = 0;
	o->libs = 1;
	o->windows = 1;
	o->min_text = TX_HUGE;
	o->help = o->version = 0;
	o->step_aside = 0;
	o->aside_copy = 0;
	o->set = 0;
}

void opts_merge(struct opts *dst, const struct opts *src)
{
	if (src->set & OPT_VERBOSE)
		dst->verbose = src->verbose;
	if (src->set & OPT_STRATEGY)
		dst->strategy = src->strategy;
	if (src->set & OPT_LAZY)
		dst->lazy = src->lazy;
	if (src->set & OPT_LIBS)
		dst->libs = src->libs;
	if (src->set & OPT_WINDOWS)
		dst->windows = src->windows;
	if (src->set & OPT_ROUND_OUT)
		dst->round_out = src->round_out;
	if (src->set & OPT_MIN_TEXT)
		dst->min_text = src->min_text;
	dst->set |= src->set;
}

enum opts_note_err opts_note(struct opts *o, const void *desc, size_t len)
{
	struct tiexec_policy p;

	switch (policy_decode(desc, len, &p)) {
	case POLICY_OK: break;
	case POLICY_SHORT: return OPT_NOTE_SHORT;
	case POLICY_VERSION: return OPT_NOTE_VERSION;
	case POLICY_BAD: /* fall through */
	default: return OPT_NOTE_BAD;
	}
	if ((p.flags & TIEXEC_POLICY_LIBS) && (p.flags & TIEXEC_POLICY_NO_LIBS))
		return OPT_NOTE_BAD;
	if ((p.flags & TIEXEC_POLICY_WINDOWS) && (p.flags & TIEXEC_POLICY_NO_WINDOWS))
		return OPT_NOTE_BAD;
	if (p.strategy != TIEXEC_UNSET32) {
		o->strategy = (enum strategy)p.strategy;
		o->set |= OPT_STRATEGY;
	}
	if (p.min_text != TIEXEC_UNSET64) {
		o->min_text = p.min_text;
		o->set |= OPT_MIN_TEXT;
	}
	if (p.flags & TIEXEC_POLICY_ROUND_OUT) {
		o->round_out = 1;
		o->set |= OPT_ROUND_OUT;
	}
	if (p.flags & TIEXEC_POLICY_LAZY) {
		o->lazy = 1;
		o->set |= OPT_LAZY;
	}
	if (p.flags & (TIEXEC_POLICY_LIBS | TIEXEC_POLICY_NO_LIBS)) {
		o->libs = (p.flags & TIEXEC_POLICY_LIBS) != 0;
		o->set |= OPT_LIBS;
	}
	if (p.flags & (TIEXEC_POLICY_WINDOWS | TIEXEC_POLICY_NO_WINDOWS)) {
		o->windows = (p.flags & TIEXEC_POLICY_WINDOWS) != 0;
		o->set |= OPT_WINDOWS;
	}
	return OPT_NOTE_OK;
}

int opts_bool(const char *s)
{
	return !(tx_streq(s, "") || tx_streq(s, "0") || tx_streq(s, "no") || tx_streq(s, "false") || tx_streq(s, "off"));
}

enum opts_env_err opts_env(struct opts *o, const char *e)
{
	const char *v;

	if (!(e = tx_skip(e, "TIEXEC_")))
		return OPT_ENV_OK;
	if ((v = tx_skip(e, "VERBOSE="))) {
		o->verbose = opts_bool(v);
		o->set |= OPT_VERBOSE;
	} else if ((v = tx_skip(e, "LAZY="))) {
		o->lazy = opts_bool(v);
		o->set |= OPT_LAZY;
	} else if ((v = tx_skip(e, "LIBS="))) {
		o->libs = opts_bool(v);
		o->set |= OPT_LIBS;
	} else if ((v = tx_skip(e, "WINDOWS="))) {
		o->windows = opts_bool(v);
		o->set |= OPT_WINDOWS;
	} else if ((v = tx_skip(e, "ROUND_OUT="))) {
		o->round_out = opts_bool(v);
		o->set |= OPT_ROUND_OUT;
	} else if ((v = tx_skip(e, "STRATEGY="))) {
		if (strategy_parse(v, &o->strategy))
			return OPT_ENV_BAD;
		o->set |= OPT_STRATEGY;
	} else if ((v = tx_skip(e, "MIN_TEXT="))) {
		if (size_parse(v, &o->min_text))
			return OPT_ENV_BAD;
		o->set |= OPT_MIN_TEXT;
	}
	return OPT_ENV_OK;
}

/* The value of option `name` at argv[*i]: "--name=VALUE", or "--name VALUE"
 * (then *i moves on).  NULL if a is not that option, or with *why set if
 * its value is missing. */
static const char *option_value(const char *a, const char *name, int argc, char **argv, int *i,
				const char **why)
{
	const char *v = tx_skip(a, name);

	if (!v || (*v != '=' && *v != '\0'))
		return NULL;
	if (*v == '=')
		return v + 1;
	if (++*i >= argc) {
		*why = "needs a value";
		return NULL;
	}
	return argv[*i];
}

int opts_argv(struct opts *o, int argc, char **argv, const char **bad, const char **why)
{
	int i;

	*why = NULL;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		*bad = a;
		if (a[0] != '-' || a[1] == '\0')
			break;
		if (tx_streq(a, "--")) {
			i++;
			break;
		}
		if (tx_streq(a, "-v") || tx_streq(a, "--verbose")) {
			o->verbose = 1;
			o->set |= OPT_VERBOSE;
		} else if (tx_streq(a, "--lazy")) {
			o->lazy = 1;
			o->set |= OPT_LAZY;
		} else if (tx_streq(a, "--round-out")) {
			o->round_out = 1;
			o->set |= OPT_ROUND_OUT;
		} else if (tx_streq(a, "--libs") || tx_streq(a, "--no-libs")) {
			o->libs = a[2] == 'l';
			o->set |= OPT_LIBS;
		} else if (tx_streq(a, "--windows") || tx_streq(a, "--no-windows")) {
			o->windows = a[2] == 'w';
			o->set |= OPT_WINDOWS;
		} else if (tx_streq(a, "-h") || tx_streq(a, "--help")) {
			o->help = 1;
		} else if (tx_streq(a, "--version")) {
			o->version = 1;
		} else if (tx_streq(a, "--step-aside")) {
			o->step_aside = 1;
		} else if (tx_streq(a, "--aside-copy")) {
			o->aside_copy = 1;
		} else if ((v = option_value(a, "--strategy", argc, argv, &i, why))) {
			if (strategy_parse(v, &o->strategy)) {
				*why = "must be auto, file, thp, hugetlb or off";
				return -1;
			}
			o->set |= OPT_STRATEGY;
		} else if ((v = option_value(a, "--min-text", argc, argv, &i, why))) {
			if (size_parse(v, &o->min_text)) {
				*why = "must be a size such as 4M or 2097152";
				return -1;
			}
			o->set |= OPT_MIN_TEXT;
		} else if (*why) {
			return -1;
		} else {
			*why = "unknown option";
			return -1;
		}
	}
	return i;
}
