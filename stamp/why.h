/* How the stamp modules fail: they never print, they put a short reason in
 * the caller's buffer and return -1; only stamp.c reports. */
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

__attribute__((format(printf, 3, 4))) static inline int fail(char *why, size_t whylen,
							    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}
