/* The library finder (interp/libfind.c) on /proc/self/maps text: which
 * mappings the stage after ld.so places. */
#include <string.h>

#include "libfind.h"
#include "tap.h"

#define MIB (1ULL << 20)

static char maps[4096];

static unsigned find(const char *text, uint64_t min_text, const struct range *skip, unsigned nskip,
		     struct lib *libs)
{
	strcpy(maps, text);
	return libfind(maps, min_text, skip, nskip, libs, 8);
}

int main(void)
{
	struct lib libs[8];
	static const char text[] =
		"7f0000000000-7f0000200000 r--p 00000000 08:01 1234   /usr/lib/libbig.so\n"
		"7f0000200000-7f0001200000 r-xp 00200000 08:01 1234   /usr/lib/libbig.so\n"
		"7f0001200000-7f0001400000 rw-p 01200000 08:01 1234   /usr/lib/libbig.so\n"
		"7f0002000000-7f0002100000 r-xp 00000000 08:01 99     /usr/lib/libsmall.so\n"
		"7f0003000000-7f0004000000 r-xp 00000000 00:00 0      [anon-exec]\n"
		"7f0005000000-7f0006000000 rwxp 00000000 08:01 77     /usr/lib/libwx.so\n"
		"7f0007000000-7f0008000000 r-xs 00000000 08:01 78     /usr/lib/libshared.so\n"
		"7f0009000000-7f000a000000 r-xp 00000000 00:1f 55     /tmp/libgone.so (deleted)\n"
		"555500000000-555501000000 r-xp 00000000 08:01 5      /srv/prog\n"
		"7f000b001000-7f000b3ff000 r-xp 00000000 08:01 80     /usr/lib/libunaligned.so\n";
	struct range prog = {0x555500000000, 0x555501000000};

	unsigned n = find(text, 2 * MIB, &prog, 1, libs);
	ok(n == 2, "two libraries: libbig's text and a deleted one; not the small, anonymous, writable, shared or piece-less ones (got %u)", n);
	ok(n > 0 && libs[0].lo == 0x7f0000200000 && libs[0].hi == 0x7f0001200000, "libbig's r-xp range");
	ok(n > 0 && libs[0].off == 0x200000 && libs[0].maj == 8 && libs[0].min == 1 && libs[0].ino == 1234,
	   "offset, device and inode");
	ok(n > 0 && strcmp(libs[0].path, "/usr/lib/libbig.so") == 0, "path");
	ok(n > 1 && strcmp(libs[1].path, "/tmp/libgone.so (deleted)") == 0 && libs[1].maj == 0 && libs[1].min == 0x1f,
	   "a deleted library is listed, its name as maps gives it");

	n = find(text, 2 * MIB, NULL, 0, libs);
	ok(n == 3 && strcmp(libs[2].path, "/srv/prog") == 0, "without the skip ranges the program counts too");

	n = find(text, 32 * MIB, &prog, 1, libs);
	ok(n == 0, "--min-text above every library: none");

	n = find("7f0000200000-7f0001200000 r-xp 00200000 08:01 1234   /usr/lib/libbig.so", 0, NULL, 0, libs);
	ok(n == 1, "the last line without a newline");
	n = find("7f0000200000-7f0001200000 r-xp 0020", 0, NULL, 0, libs);
	ok(n == 0, "a line cut short: nothing, no read past it");
	n = find("7f0000200000-7f0001200000 r-", 0, NULL, 0, libs);
	ok(n == 0, "a line cut in its permissions");
	n = find("", 0, NULL, 0, libs);
	ok(n == 0, "empty maps");
	ok(libfind(NULL, 0, NULL, 0, libs, 8) == 0, "no maps (/proc not mounted)");

	strcpy(maps, text);
	ok(libfind(maps, 0, &prog, 1, libs, 1) == 1, "at most max");
	return tap_done();
}
