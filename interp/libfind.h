/* Finding the libraries worth placing in /proc/self/maps.  Pure: the text
 * is given, so the unit tests (tests/unit/test-libfind.c) feed it their
 * own. */
#pragma once

#include <stdint.h>

/* One executable file mapping, as maps lists it. */
struct lib {
	uint64_t lo, hi, off, ino;
	unsigned maj, min;
	const char *path; /* in the maps text, " (deleted)" kept */
};

struct range {
	uint64_t lo, hi;
};

/* The mappings listed in maps (whole lines, NUL-terminated; split into
 * lines in place) that are private, readable and executable but not
 * writable, of a file named by an absolute path with an inode, that hold
 * at least one whole 2 MiB piece and min_text bytes, and that overlap none
 * of skip[] (the program, its interpreter, tiexec: not libraries), into
 * libs[] (at most max).  Returns how many. */
unsigned libfind(char *maps, uint64_t min_text, const struct range *skip, unsigned nskip,
		 struct lib *libs, unsigned max);
