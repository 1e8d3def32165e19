/* The loader's tiny runtime: the memory and string routines the compiler
 * may call by itself, and a bounded message buffer for the one place that
 * prints (report.c).  No allocation, no errno, no locale. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "bits.h"

void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
void *memchr(const void *s, int c, size_t n);
size_t strlen(const char *s);

/* Text of a (positive) errno value, as strerror would say it. */
const char *tx_strerror(long err);

struct msg {
	char b[1024];
	size_t n;
};
void msg_str(struct msg *m, const char *s);
void msg_u64(struct msg *m, uint64_t v);
void msg_hex(struct msg *m, uint64_t v);
/* Bytes as MiB with one decimal ("82.0"). */
void msg_mib(struct msg *m, uint64_t bytes);
/* A size with its unit: "82.0 MiB", or "4096 bytes" below 1 MiB, where
 * MiB with one decimal would read 0.0. */
void msg_size(struct msg *m, uint64_t bytes);
/* Nanoseconds as milliseconds: two decimals below 10 ms ("0.42"), one above. */
void msg_ms(struct msg *m, uint64_t ns);
