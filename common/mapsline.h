/* One line of /proc/PID/maps (the same as a mapping's first line in
 * /proc/PID/smaps):
 *
 *     lo-hi perms offset major:minor inode   path
 *
 * The one parser of it, for the loader (libfind.c, freestanding) and the
 * tools (smaps.c, tiexec-warm, tiexec-stat).  Pure: no allocation, no
 * system call; unit-tested through test-smaps and test-libfind. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct maps_line {
	uint64_t lo, hi;      /* [lo, hi) */
	char perms[5];        /* "r-xp", NUL-terminated */
	uint64_t off;         /* file offset */
	unsigned maj, min;    /* the device, as the kernel prints it (hex) */
	uint64_t ino;
	const char *path;     /* in the line: path_len bytes, " (deleted)" kept; "" when none */
	size_t path_len;
};

/* line[0..len) without its newline.  1 when it is a mapping line (into
 * *m), 0 when not: numbers that overflow or are missing, hi < lo, a
 * permission that is none of "r-", "w-", "x-", "ps" in its place, no blank
 * after the inode. */
int maps_line(const char *line, size_t len, struct maps_line *m);

/* Whether the path ends in " (deleted)": the file was unlinked. */
int maps_line_deleted(const struct maps_line *m);

/* Numbers as the kernel prints them in /proc: at *p (before end), at least
 * one digit, no overflow.  0 and *p past them, or -1. */
int maps_hex(const char **p, const char *end, uint64_t *v);
int maps_dec(const char **p, const char *end, uint64_t *v);
