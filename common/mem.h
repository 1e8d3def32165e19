/* The memory and string routines a freestanding build needs: the compiler
 * may call them by itself (a struct copy, a zeroed array), and the shared
 * layer and the loader call them.  Defined in mem.c for the loader only,
 * below everything that uses them; the tools use their C library's. */
#pragma once

#include <stddef.h>

void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
void *memchr(const void *s, int c, size_t n);
size_t strlen(const char *s);
