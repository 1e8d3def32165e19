/* A library's window from the text cache (libwindow.c). */
#pragma once

#include <stdint.h>

/* Maps the window entry (textcache.h) of the library at path, which ld.so
 * mapped at start with the below bytes under it free, over the 2 MiB
 * window from start - below: NULL, or why not (the library then stays as
 * ld.so mapped it).  dir: the text cache, or NULL. */
const char *libwindow_map(const char *dir, const char *path, uint64_t start, uint64_t below);
