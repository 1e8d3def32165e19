/* The loader's tiny runtime: errno texts and a bounded message buffer for
 * the one place that prints (report.c).  No allocation, no errno, no
 * locale.  The memory and string routines sit below it, in the shared
 * layer (common/mem.h). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "bits.h"
#include "mem.h"

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
