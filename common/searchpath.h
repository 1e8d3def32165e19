/* $ORIGIN in the strings a dynamic linker reads (DT_RUNPATH, DT_RPATH,
 * DT_NEEDED): the loader's own fix of the program's (interp/origin.h) and
 * the walk of ld.so's libraries (libwalk.h) expand it the same way. */
#pragma once

#include <stddef.h>

/* Expands $ORIGIN and ${ORIGIN} (a name ending at a character that is not a
 * letter, digit or '_', as the dynamic linkers read it) in the NUL-terminated
 * s with dir; writes the result and its NUL to out when out is not NULL.
 * Returns the length of the result including the NUL.  Pure. */
size_t origin_expand(const char *s, const char *dir, char *out);

/* Whether s holds $ORIGIN or ${ORIGIN}.  Pure. */
int origin_has(const char *s);
