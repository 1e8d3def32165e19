/* The small helpers every part of the loader uses, and the tools that share
 * its files (tiexec-warm): alignment and string prefixes.  Static inline and
 * free of any runtime, so the same definitions serve freestanding and hosted
 * code; one definition each. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* A small static every start writes, placed with the initialised data:
 * that page is written already (the kernel zeroes the start of .bss in
 * it), where each page of .bss a start touches first is one more fault
 * and one more zeroed page (under qemu's TCG, a clear of about 4,000
 * steps).  Only for about a kilobyte in all: the page has room for
 * some 1.5 KiB beside the data.  In the tools that share a file it is
 * only a section name. */
#define TX_HOT __attribute__((section(".data.tx_hot")))

/* x rounded down or up to a, a power of two. */
static inline uint64_t tx_down(uint64_t x, uint64_t a) { return x & -a; }
static inline uint64_t tx_up(uint64_t x, uint64_t a) { return (x + a - 1) & -a; }

/* If s starts with prefix, the rest of s; else NULL. */
static inline const char *tx_skip(const char *s, const char *prefix)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return NULL;
	return s;
}

static inline int tx_streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* The last component of a path ("b" of "/a/b" and of "/a/b/"). */
static inline const char *tx_basename(const char *path)
{
	const char *b = path;

	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1])
			b = p + 1;
	return b;
}

/* v in hex without leading zeros, at the end of t; returns where it starts. */
static inline char *tx_hex(char t[17], uint64_t v)
{
	int i = 16;

	t[i] = '\0';
	do {
		t[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	return t + i;
}

/* Bounded string building into a caller's buffer, always NUL-terminated
 * (what does not fit is dropped): tx_cat(b, n, &k, "text"), tx_cat_u64. */
static inline void tx_cat(char *b, size_t n, size_t *k, const char *s)
{
	while (*s && *k + 1 < n)
		b[(*k)++] = *s++;
	b[*k < n ? *k : n - 1] = '\0';
}
static inline void tx_cat_u64(char *b, size_t n, size_t *k, uint64_t v)
{
	char t[21];
	int i = 20;

	t[i] = '\0';
	do
		t[--i] = (char)('0' + v % 10);
	while ((v /= 10));
	tx_cat(b, n, k, t + i);
}
