/* How far a program's ELF content reaches, and where its data lies (see
 * extent.h). */
#include "extent.h"

#include <errno.h>

#include "rt.h"
#include "sys.h"

long extent_seek(int fd, uint64_t off, int whence)
{
	return SC(__NR_lseek, fd, off, whence, 0, 0, 0);
}

/* The next range of data at or after off, below size: [*lo, *hi), 1; or 0
 * when only holes are left.  A file system without SEEK_DATA: all data. */
int extent_next_data(int fd, uint64_t off, uint64_t size, uint64_t *lo, uint64_t *hi)
{
	long d = off < size ? extent_seek(fd, off, TX_SEEK_DATA) : -ENXIO;

	if (d == -ENXIO)
		return 0;
	if (d < 0) {
		*lo = off, *hi = size;
		return 1;
	}
	long h = extent_seek(fd, (uint64_t)d, TX_SEEK_HOLE);
	*lo = (uint64_t)d;
	*hi = h < 0 || (uint64_t)h > size ? size : (uint64_t)h;
	return *lo < *hi;
}

/* n bytes at off into b: by pread, or (a filter refusing it: the reason we
 * may be here) by lseek and read.  Whether all of them came. */
static int read_at(int fd, void *b, size_t n, uint64_t off)
{
	if (sys_pread(fd, b, n, off) == (long)n)
		return 1;
	return extent_seek(fd, off, TX_SEEK_SET) == (long)off && sys_read(fd, b, n) == (long)n;
}

/* n entries of ent bytes at off, read in pieces: the largest end of
 * [word at at, + word at len) over them (a segment's or section's bytes in
 * the file), or 0.  Entries whose type word at tof is skip are passed
 * over (NOBITS sections: no bytes in the file). */
static uint64_t table_end(int fd, uint64_t off, uint64_t n, unsigned ent, unsigned at, unsigned len, unsigned tof,
			  uint32_t skip)
{
	static unsigned char b[64 * 64];
	uint64_t end = 0;

	if (ent < at + 8 || ent < len + 8 || ent > 64)
		return 0;
	for (uint64_t i = 0; i < n;) {
		uint64_t k = n - i < 64 ? n - i : 64;
		if (!read_at(fd, b, k * ent, off + i * ent))
			return 0;
		for (uint64_t j = 0; j < k; j++) {
			uint64_t o, l;
			uint32_t t;
			memcpy(&t, b + j * ent + tof, 4);
			memcpy(&o, b + j * ent + at, 8);
			memcpy(&l, b + j * ent + len, 8);
			if (t != skip && o + l >= o && o + l > end)
				end = o + l;
		}
		i += k;
	}
	return end;
}

/* Where the program's ELF content ends: its headers, the program and
 * section header tables, every segment's bytes in the file and every
 * section's.  0 when its headers cannot be read. */
uint64_t extent_content_end(int fd)
{
	unsigned char eh[64];
	uint64_t phoff, shoff, shnum, end = sizeof(eh), e;
	uint16_t phent, phnum, shent, sn;

	if (!read_at(fd, eh, sizeof(eh), 0) || memcmp(eh, "\177ELF", 4) || eh[4] != 2)
		return 0;
	memcpy(&phoff, eh + 32, 8);
	memcpy(&shoff, eh + 40, 8);
	memcpy(&phent, eh + 54, 2);
	memcpy(&phnum, eh + 56, 2);
	memcpy(&shent, eh + 58, 2);
	memcpy(&sn, eh + 60, 2);
	shnum = sn;
	if (shoff && !shnum && shent == 64 && !read_at(fd, &shnum, 8, shoff + 32)) /* e_shnum in sh_size */
		return 0;
	e = table_end(fd, phoff, phnum, phent, 8, 32, 0, 0xffffffffU); /* p_offset, p_filesz */
	end = e > end ? e : end;
	end = phoff + (uint64_t)phnum * phent > end ? phoff + (uint64_t)phnum * phent : end;
	if (shoff && shnum <= 1u << 20) {
		e = table_end(fd, shoff, shnum, shent, 24, 32, 4, 8 /* SHT_NOBITS */); /* sh_offset, sh_size */
		end = e > end ? e : end;
		end = shoff + shnum * shent > end ? shoff + shnum * shent : end;
	}
	return end;
}

