/* The loader's memory routines (common/mem.c, built here with their names
 * prefixed tx_test_) against the C library's, on random buffers at every
 * alignment and length up to a few words. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

void *tx_test_memchr(const void *s, int c, size_t n);
int tx_test_memcmp(const void *a, const void *b, size_t n);
size_t tx_test_strlen(const char *s);

int main(void)
{
	static unsigned char buf[320], other[320];
	unsigned bad_chr = 0, bad_cmp = 0, bad_len = 0;

	srand(54);
	for (unsigned it = 0; it < 200000; it++) {
		size_t off = (size_t)rand() % 16, n = (size_t)rand() % 280;
		int c = rand() % 4;
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = other[i] = (unsigned char)(rand() % 5);
		other[off + (size_t)rand() % 290] ^= (unsigned char)(rand() % 2);
		buf[sizeof(buf) - 1] = 0;
		bad_chr += memchr(buf + off, c, n) != tx_test_memchr(buf + off, c, n);
		int x = memcmp(buf + off, other + off, n), y = tx_test_memcmp(buf + off, other + off, n);
		bad_cmp += (x < 0) != (y < 0) || (x > 0) != (y > 0);
		bad_len += strlen((char *)buf + off) != tx_test_strlen((char *)buf + off);
	}
	ok(bad_chr == 0, "memchr finds what the C library's finds (%u differ)", bad_chr);
	ok(bad_cmp == 0, "memcmp orders as the C library's (%u differ)", bad_cmp);
	ok(bad_len == 0, "strlen measures as the C library's (%u differ)", bad_len);
	return tap_done();
}
