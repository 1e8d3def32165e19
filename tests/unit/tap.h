/* A tiny TAP producer for the unit tests (header-only, one per test binary).
 *
 *   plan(N)          optional: prints "1..N" first (use when N is known)
 *   ok(cond, ...)    prints "ok N - desc" or "not ok N - desc"; returns cond
 *   diag(...)        prints "# ..." (a comment line, ignored by TAP parsers)
 *   tap_done()       prints the trailing plan "1..N" if plan() was not called,
 *                    checks a given plan, and returns the exit status:
 *                    0 if every test passed, 1 otherwise.
 *
 * Table-driven tests do not know their count up front, so they use the
 * trailing plan (valid TAP, understood by meson and prove); a crash midway
 * then still leaves every earlier result on stdout. */
#pragma once

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_count, tap_failed, tap_planned = -1;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

__attribute__((format(printf, 2, 3))) static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 1, 2))) static inline void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static inline int tap_done(void)
{
	if (tap_planned < 0) {
		printf("1..%d\n", tap_count);
	} else if (tap_planned != tap_count) {
		diag("planned %d tests but ran %d", tap_planned, tap_count);
		tap_failed++;
	}
	if (tap_failed)
		diag("%d of %d tests failed", tap_failed, tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#define TAP_N(a) (sizeof(a) / sizeof((a)[0]))

/* ok() for two unsigned 64-bit values, with a diagnostic on mismatch. */
#define ok_u64(got, want, ...)                                                           \
	({                                                                               \
		uint64_t tap_g_ = (got), tap_w_ = (want);                                \
		int tap_r_ = ok(tap_g_ == tap_w_, __VA_ARGS__);                          \
		if (!tap_r_)                                                             \
			diag("  got 0x%" PRIx64 ", want 0x%" PRIx64, tap_g_, tap_w_);    \
		tap_r_;                                                                  \
	})
