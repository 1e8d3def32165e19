/* The memory and string routines the compiler may call by itself, for the
 * loader's freestanding build (mem.h); the tools take their C library's. */
#include "mem.h"

#include <stdint.h>

/* Eight bytes at a time, then bytes: -ffreestanding and -fno-builtin keep
 * the compiler from turning these back into calls to themselves, and a
 * fixed-size __builtin_memcpy is one unaligned load or store.  Word steps
 * matter where the loader touches its own image (detach.c compares some
 * 60 KiB at every start with libraries): byte by byte that was ~40 us. */
static inline uint64_t load8(const unsigned char *p)
{
	uint64_t w;

	__builtin_memcpy(&w, p, 8);
	return w;
}

/* Front to back, each word loaded before it is stored: also right for
 * overlapping ranges with d below s (no restrict here, for memmove). */
static void copy_up(unsigned char *dp, const unsigned char *sp, size_t n)
{
	for (; n >= 8; n -= 8, dp += 8, sp += 8) {
		uint64_t w = load8(sp);
		__builtin_memcpy(dp, &w, 8);
	}
	while (n--)
		*dp++ = *sp++;
}

void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	copy_up(d, s, n);
	return d;
}

/* Each word is loaded before any store that could overlap what is still
 * to be read: forward when d is below s, from the end when above. */
void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	if (dp < sp) {
		copy_up(dp, sp, n);
		return d;
	}
	for (; n >= 8; n -= 8) {
		uint64_t w = load8(sp + n - 8);
		__builtin_memcpy(dp + n - 8, &w, 8);
	}
	while (n--)
		dp[n] = sp[n];
	return d;
}

void *memset(void *d, int c, size_t n)
{
	unsigned char *dp = d;
	uint64_t w = 0x0101010101010101ULL * (unsigned char)c;

	for (; n >= 8; n -= 8, dp += 8)
		__builtin_memcpy(dp, &w, 8);
	while (n--)
		*dp++ = (unsigned char)c;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n >= 8 && load8(x) == load8(y); n -= 8, x += 8, y += 8)
		;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

/* Bytes up to an 8-byte boundary, then whole words inside the n bytes
 * until one holds c (a zero byte in the word xor c in every byte), then
 * bytes.  The library plan looks for ld.so's version banner in some 40 KiB
 * of its read-only data at every start: byte by byte that was 20-40 us. */
void *memchr(const void *s, int c, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL, pat = ones * (unsigned char)c;
	const unsigned char *p = s, *e = p + n;

	for (; p < e && ((uintptr_t)p & 7); p++)
		if (*p == (unsigned char)c)
			return (void *)p;
	for (; e - p >= 8; p += 8) {
		uint64_t w = load8(p) ^ pat;
		if ((w - ones) & ~w & (ones << 7))
			break;
	}
	for (; p < e; p++)
		if (*p == (unsigned char)c)
			return (void *)p;
	return NULL;
}

/* Bytes up to an 8-byte boundary, then aligned words (which never cross
 * into a page the string does not reach) until one holds a zero byte; the
 * lowest flagged byte is the first zero (little-endian: a false flag only
 * follows a true one).  The environment's strings are measured a few times
 * at every start: byte by byte that was 35,000 of the loader's 62,000
 * instructions, which qemu's TCG runs at every start of the kernel matrix. */
size_t strlen(const char *s)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const char *p = s;

	for (; (uintptr_t)p & 7; p++)
		if (!*p)
			return (size_t)(p - s);
	for (;; p += 8) {
		uint64_t w = load8((const unsigned char *)p);
		uint64_t z = (w - ones) & ~w & (ones << 7);
		if (z)
			return (size_t)(p - s) + (size_t)(__builtin_ctzll(z) >> 3);
	}
}
