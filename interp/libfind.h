/* Finding the libraries worth placing in /proc/self/maps.  Pure: the text
 * is given, so the unit tests (tests/unit/test-libfind.c) feed it their
 * own. */
#pragma once

#include <elf.h>
#include <stddef.h>
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

/* Whether ld.so's list of the objects it loaded shows none worth placing,
 * so that maps need not be read (some 50 us, half of it the first open of
 * /proc/self in a new process).  The list is r_debug's (<link.h>, the same
 * in musl), found through the DT_DEBUG entry of dyn, the program's dynamic
 * section as ld.so left it (nd entries).  Each object's executable PT_LOADs
 * are judged as libfind judges a mapping, the program's own (its l_ld is
 * dyn) left out.  0 whenever it cannot tell: no DT_DEBUG, an audit module
 * named by DT_AUDIT or DT_DEPAUDIT (loaded in a namespace of its own, not
 * listed), memory that does not read back, an object whose base holds no
 * ELF header.  Memory is read with process_vm_readv, so a bad pointer is
 * an error, not a fault. */
int libfind_none_listed(const Elf64_Dyn *dyn, size_t nd, uint64_t min_text, const struct range *skip,
			unsigned nskip);

/* Whether ld.so's list (as libfind_none_listed finds it) holds an object
 * at base whose file has path's name: 1 yes, 0 no (ld.so mapped that
 * library elsewhere), -1 the list cannot be read. */
int libfind_at(const Elf64_Dyn *dyn, size_t nd, uint64_t base, const char *path);
