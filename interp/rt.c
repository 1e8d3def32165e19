#include "rt.h"

#include <errno.h>

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

void *memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;

	for (; n; n--, p++)
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

const char *tx_strerror(long err)
{
	switch (err) {
	case EPERM: return "Operation not permitted";
	case ENOENT: return "No such file or directory";
	case EIO: return "Input/output error";
	case ENOEXEC: return "Exec format error";
	case EBADF: return "Bad file descriptor";
	case ENOMEM: return "Cannot allocate memory";
	case EACCES: return "Permission denied";
	case EFAULT: return "Bad address";
	case EBUSY: return "Device or resource busy";
	case EEXIST: return "File exists";
	case ENOTDIR: return "Not a directory";
	case EISDIR: return "Is a directory";
	case EINVAL: return "Invalid argument";
	case ENFILE: return "Too many open files in system";
	case EMFILE: return "Too many open files";
	case ETXTBSY: return "Text file busy";
	case EFBIG: return "File too large";
	case ENOSPC: return "No space left on device";
	case ENAMETOOLONG: return "File name too long";
	case ELOOP: return "Too many levels of symbolic links";
	case EOVERFLOW: return "Value too large for defined data type";
	case E2BIG: return "Argument list too long";
	case ENODEV: return "No such device";
	case ENOSYS: return "Function not implemented";
	case EAGAIN: return "Resource temporarily unavailable";
	default: return "Unknown error";
	}
}

/* The message builder is bits.h's bounded tx_cat: a byte is kept free
 * for say()'s newline. */
void msg_str(struct msg *m, const char *s)
{
	tx_cat(m->b, sizeof(m->b), &m->n, s);
}

void msg_u64(struct msg *m, uint64_t v)
{
	tx_cat_u64(m->b, sizeof(m->b), &m->n, v);
}

void msg_hex(struct msg *m, uint64_t v)
{
	char t[17];

	msg_str(m, "0x");
	msg_str(m, tx_hex(t, v));
}

static void msg_tenths(struct msg *m, uint64_t tenths)
{
	msg_u64(m, tenths / 10);
	msg_str(m, ".");
	msg_u64(m, tenths % 10);
}

void msg_mib(struct msg *m, uint64_t bytes)
{
	msg_tenths(m, (bytes * 10 + (1 << 19)) >> 20);
}

void msg_size(struct msg *m, uint64_t bytes)
{
	if (bytes < (1u << 20)) {
		msg_u64(m, bytes);
		msg_str(m, " bytes");
		return;
	}
	msg_mib(m, bytes);
	msg_str(m, " MiB");
}

void msg_ms(struct msg *m, uint64_t ns)
{
	if (ns >= 9995000) {
		msg_tenths(m, (ns + 50000) / 100000);
		return;
	}
	uint64_t h = (ns + 5000) / 10000; /* hundredths below 10 ms */
	msg_u64(m, h / 100);
	msg_str(m, h % 100 < 10 ? ".0" : ".");
	msg_u64(m, h % 100);
}
