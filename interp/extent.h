/* How far a program's ELF content reaches in its file, and where its data
 * lies (holes skipped): what the tracer's copy holds (aside.c).  Every read
 * has a second way, so that a seccomp filter refusing one system call (the
 * reason the loader may be stepping aside) leaves the other. */
#pragma once

#include <stdint.h>

#define TX_SEEK_SET 0
#define TX_SEEK_END 2
#define TX_SEEK_DATA 3
#define TX_SEEK_HOLE 4

/* lseek(2): the new offset, or -errno. */
long extent_seek(int fd, uint64_t off, int whence);

/* The next range of data at or after off, below size: [*lo, *hi), 1; or 0
 * when only holes are left.  A file system without SEEK_DATA: all data. */
int extent_next_data(int fd, uint64_t off, uint64_t size, uint64_t *lo, uint64_t *hi);

/* Where the program's ELF content ends: its headers, the program and
 * section header tables, every segment's bytes in the file and every
 * section's.  0 when its headers cannot be read. */
uint64_t extent_content_end(int fd);
