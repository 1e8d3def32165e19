/* The library finder (interp/libfind.c) on /proc/self/maps text: which
 * mappings the stage after ld.so places; and libfind_none_listed on a
 * made-up r_debug list in this process's memory. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

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

/* ---- libfind_none_listed ---------------------------------------------- */

/* <link.h>'s public parts, as ld.so lays them out. */
struct lm {
	uint64_t addr;
	const char *name;
	const void *ld;
	struct lm *next, *prev;
};
struct rdebug {
	int version;
	struct lm *map;
};

/* An object's first page: its ELF header and one executable PT_LOAD of
 * memsz bytes at vaddr (program headers at phoff). */
struct obj {
	_Alignas(4096) uint8_t page[8192];
};

static uint64_t make_obj(struct obj *o, uint64_t vaddr, uint64_t memsz, uint64_t phoff)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)(void *)o->page;
	Elf64_Phdr *ph = (Elf64_Phdr *)(void *)(o->page + phoff);

	memset(o, 0, sizeof(*o));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_phoff = phoff;
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 2;
	ph[0].p_type = PT_LOAD; /* the read-only first segment */
	ph[0].p_flags = PF_R;
	ph[0].p_memsz = 4096;
	ph[1].p_type = PT_LOAD;
	ph[1].p_flags = PF_R | PF_X;
	ph[1].p_vaddr = vaddr;
	ph[1].p_memsz = memsz;
	return (uint64_t)(uintptr_t)o;
}

static struct obj progo, smallo, bigo, farpho;
static struct lm ents[4];
static struct rdebug rd;
static Elf64_Dyn dyn[4];

/* ents[0..n) chained from rd; dyn with DT_DEBUG (tag) and DT_NULL. */
static void chain(unsigned n, Elf64_Sxword tag)
{
	for (unsigned i = 0; i < n; i++)
		ents[i].next = i + 1 < n ? &ents[i + 1] : NULL;
	rd.version = 1;
	rd.map = &ents[0];
	memset(dyn, 0, sizeof(dyn));
	dyn[0].d_tag = tag;
	dyn[0].d_un.d_ptr = (uint64_t)(uintptr_t)&rd;
}

static void listed_cases(void)
{
	const uint64_t min = 2 * MIB;

	ents[0] = (struct lm){ make_obj(&progo, 0x200000, 64 * MIB, 64), "", dyn, 0, 0 };
	ents[1] = (struct lm){ make_obj(&smallo, 0x1000, 1 * MIB, 64), "/lib/libsmall.so", &smallo, 0, 0 };
	ents[2] = (struct lm){ make_obj(&bigo, 0x200000, 16 * MIB, 64), "/lib/libbig.so", &bigo, 0, 0 };
	chain(2, DT_DEBUG);
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 1, "listed: the program (its l_ld is dyn) and a small library: none");
	chain(3, DT_DEBUG);
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 0, "listed: a 16 MiB library: look");
	ok(libfind_none_listed(dyn, 4, 32 * MIB, NULL, 0) == 1, "listed: --min-text above it: none");
	struct range sk = { ents[2].addr, ents[2].addr + 32 * MIB };
	ok(libfind_none_listed(dyn, 4, min, &sk, 1) == 1, "listed: the big one in a skip range (ld.so, tiexec): none");
	ents[2].addr = make_obj(&bigo, 0x1000, 2 * MIB, 64);
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 1, "listed: 2 MiB of text holding no whole aligned piece: none");
	ents[2].addr = make_obj(&farpho, 0x200000, 16 * MIB, 4096);
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 0, "listed: program headers past the first KiB are read too");

	chain(2, DT_DEBUG);
	dyn[1].d_tag = DT_AUDIT;
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 0, "DT_AUDIT (modules not listed): look");
	chain(2, DT_NULL);
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 0, "no DT_DEBUG: look");
	chain(2, DT_DEBUG);
	dyn[0].d_un.d_ptr = 0;
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 0, "DT_DEBUG not filled in: look");
	chain(2, DT_DEBUG);
	rd.version = 0;
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 0, "r_version 0: look");
	chain(2, DT_DEBUG);
	ents[1].addr = (uint64_t)(uintptr_t)&rd; /* no ELF header there */
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 0, "an object without its ELF header at its base: look");
	ents[1].addr = 0x1000; /* unmapped: an error, not a fault */
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 0, "an object at an unmapped base: look, no fault");
	ents[1].addr = make_obj(&smallo, 0x1000, 1 * MIB, 64);
	chain(2, DT_DEBUG);
	ents[1].next = &ents[1];
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 0, "a list that loops: look");
	chain(2, DT_DEBUG);
	ents[1].next = (struct lm *)(uintptr_t)0x1000;
	ok(libfind_none_listed(dyn, 4, min, NULL, 0) == 0, "a list into unmapped memory: look");
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
	/* libfind reads ld.so's list with process_vm_readv, which qemu-user
	 * (the arm64 build's unit tests, scripts/cross) does not implement. */
	int x = 1, y = 0;
	struct iovec l = { &y, sizeof(y) }, r = { &x, sizeof(x) };
	if (syscall(SYS_process_vm_readv, (long)getpid(), &l, 1L, &r, 1L, 0L) < 0 && errno == ENOSYS)
		diag("skipped libfind_none_listed: process_vm_readv is not implemented here (qemu-user)");
	else
		listed_cases();
	return tap_done();
}
