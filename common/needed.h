/* The shared libraries a program needs, found the way glibc's dynamic
 * linker finds them, from the files alone.
 *
 * Nothing a scanned file names is ever executed: `ld.so --list PROG` (what
 * ldd does) runs the program's own PT_INTERP, which for a file dropped
 * into a scanned directory may be anybody's script -- run as root by the
 * boot unit.  Instead DT_NEEDED, DT_RPATH and DT_RUNPATH are read with
 * libelf and resolved in ld.so's order: DT_RPATH of the object and of the
 * program (when the object has no DT_RUNPATH), DT_RUNPATH, the
 * directories of /etc/ld.so.conf (what ld.so.cache is built from), then
 * the default directories.  $ORIGIN is the object's directory; a path with
 * another $ token is skipped; LD_LIBRARY_PATH is not the boot unit's and
 * is ignored; glibc-hwcaps subdirectories are not looked at. */
#pragma once

/* Calls add(ctx, path) for every library prog needs, directly or through
 * other libraries, each once; a library that is not found is left out, as
 * `ldd` says "not found" for it.  Only the libraries add() accepts (returns
 * nonzero for) are looked into for more.  Every file is opened without
 * blocking and only if it is a regular file (trust.h). */
void needed_libs(const char *prog, int (*add)(void *ctx, const char *path), void *ctx);

/* Whether the object open at fd is one musl's ld.so loads: it needs
 * musl's libc (libc.so, or Alpine's libc.musl-ARCH.so.1). */
int needed_musl(int fd);
