/* A library's window from the text cache (libwindow.c). */
#pragma once

#include <stdint.h>

/* Maps the window entry (textcache.h) of the library at path, which ld.so
 * mapped at start with the below bytes under it free (checked: nothing is
 * mapped over), over the 2 MiB window from start - below, executable as
 * ld.so maps the library's text (arm64: PROT_BTI where it is marked and
 * the CPU has BTI, hwcap2 the process's AT_HWCAP2), every page mapped at
 * once (cc: how to ask the kernel): NULL, or why not (the library then
 * stays as ld.so mapped it).  dir: the text cache, or NULL; trust: what
 * the process found of its directory (textcache_open_with). */
struct cconv;
struct textcache_trust;
const char *libwindow_map(const char *dir, struct textcache_trust *trust, const char *path, uint64_t start,
			  uint64_t below, unsigned long hwcap2, const struct cconv *cc);
