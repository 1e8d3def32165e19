/* Finding the libraries worth placing (see libfind.h). */
#include "libfind.h"

#include "bits.h"
#include "elfcheck.h"
#include "mapsline.h"
#include "sys.h"

#include <string.h>

static int skipped(uint64_t lo, uint64_t hi, const struct range *skip, unsigned nskip)
{
	for (unsigned i = 0; i < nskip; i++)
		if (lo < skip[i].hi && hi > skip[i].lo)
			return 1;
	return 0;
}

/* Text at [lo, hi) worth placing: outside skip[], min_text bytes or more,
 * holding a whole 2 MiB piece. */
static int worth_placing(uint64_t lo, uint64_t hi, uint64_t min_text, const struct range *skip, unsigned nskip)
{
	return hi > lo && !skipped(lo, hi, skip, nskip) && hi - lo >= min_text &&
	       tx_up(lo, TX_HUGE) + TX_HUGE <= tx_down(hi, TX_HUGE);
}

/* One line (NUL-terminated).  Returns whether it is an executable,
 * read-only private mapping, with *b filled in.  A line cut short is none. */
static int parse_line(const char *p, struct lib *b)
{
	struct maps_line m;

	if (!maps_line(p, strlen(p), &m))
		return 0;
	b->lo = m.lo;
	b->hi = m.hi;
	b->off = m.off;
	b->maj = m.maj;
	b->min = m.min;
	b->ino = m.ino;
	b->path = m.path;
	return m.perms[0] == 'r' && m.perms[1] != 'w' && m.perms[2] == 'x' && m.perms[3] == 'p'; /* r-xp */
}

unsigned libfind(char *maps, uint64_t min_text, const struct range *skip, unsigned nskip,
		 struct lib *libs, unsigned max)
{
	unsigned k = 0;

	if (!maps)
		return 0;
	for (char *l = maps; *l && k < max;) {
		char *e = l;
		while (*e && *e != '\n')
			e++;
		char *next = *e ? e + 1 : e;
		*e = '\0';
		struct lib b;
		if (parse_line(l, &b) && *b.path == '/' && b.ino && worth_placing(b.lo, b.hi, min_text, skip, nskip))
			libs[k++] = b;
		l = next;
	}
	return k;
}

/* The public head of ld.so's link_map and r_debug (<link.h>). */
struct lm_head {
	uint64_t addr, name, ld, next, prev;
};
struct rdebug_head {
	int32_t version;
	uint64_t map;
};

static int peek(long pid, uint64_t addr, void *dst, size_t n)
{
	struct tx_iovec l = { dst, n }, r = { (void *)(uintptr_t)addr, n };

	return sys_process_vm_readv(pid, &l, 1, &r, 1) == (long)n ? 0 : -1;
}

/* 1 when the object at base has an executable segment libfind would take,
 * or cannot be read; 0 when it has none.  One read takes the ELF header
 * and, where they follow it as usual, the program headers (the first page
 * is mapped whole). */
static int worth_a_look(long pid, uint64_t base, uint64_t min_text, const struct range *skip, unsigned nskip)
{
	static union {
		Elf64_Ehdr eh;
		uint8_t b[1024];
	} u;
	static Elf64_Phdr phs[64];
	const Elf64_Ehdr *eh = &u.eh;
	const Elf64_Phdr *ph;

	if (peek(pid, base, &u, sizeof(u)) != 0 || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phnum > sizeof(phs) / sizeof(phs[0]))
		return 1;
	uint64_t phoff = eh->e_phoff, phlen = eh->e_phnum * sizeof(Elf64_Phdr);
	if (phoff % 8 == 0 && phoff <= sizeof(u) && phlen <= sizeof(u) - phoff)
		ph = (const Elf64_Phdr *)(const void *)(u.b + phoff);
	else if (peek(pid, base + phoff, phs, phlen) == 0)
		ph = phs;
	else
		return 1;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		uint64_t lo = tx_down(base + ph[i].p_vaddr, TX_PAGE), hi = tx_up(base + ph[i].p_vaddr + ph[i].p_memsz, TX_PAGE);
		if (worth_placing(lo, hi, min_text, skip, nskip))
			return 1;
	}
	return 0;
}

/* The first entry of ld.so's list of what it loaded (r_debug, which the
 * program's DT_DEBUG in dyn[0..nd) points at) into *map; whether there
 * is a list.  *audited: the program names an audit module (DT_AUDIT,
 * DT_DEPAUDIT). */
static int list_first(long pid, const Elf64_Dyn *dyn, size_t nd, uint64_t *map, int *audited)
{
	uint64_t rdebug = 0;
	struct rdebug_head rd;

	*audited = 0;
	for (size_t i = 0; dyn && i < nd && dyn[i].d_tag != DT_NULL; i++) {
		*audited |= dyn[i].d_tag == DT_AUDIT || dyn[i].d_tag == DT_DEPAUDIT;
		if (dyn[i].d_tag == DT_DEBUG)
			rdebug = dyn[i].d_un.d_ptr;
	}
	if (!rdebug || peek(pid, rdebug, &rd, sizeof(rd)) != 0 || rd.version < 1)
		return 0;
	*map = rd.map;
	return 1;
}

/* The list's entry at *map into *lm, *map moved to the next (0: none):
 * whether it could be read.  *n counts the entries: a list longer than
 * 4096 is taken for a loop. */
static int list_step(long pid, uint64_t *map, struct lm_head *lm, unsigned *n)
{
	if (++*n > 4096 || peek(pid, *map, lm, sizeof(*lm)) != 0)
		return 0;
	*map = lm->next;
	return 1;
}

int libfind_none_listed(const Elf64_Dyn *dyn, size_t nd, uint64_t min_text, const struct range *skip,
			unsigned nskip)
{
	struct lm_head lm;
	long pid = sys_getpid();
	uint64_t map;
	unsigned n = 0;
	int audited;

	if (!list_first(pid, dyn, nd, &map, &audited) || audited)
		return 0;
	while (map) {
		if (!list_step(pid, &map, &lm, &n))
			return 0;
		if (lm.ld != (uint64_t)(uintptr_t)dyn && worth_a_look(pid, lm.addr, min_text, skip, nskip))
			return 0;
	}
	return 1;
}

/* The string at addr into buf (n bytes), read a page at most at a time
 * so that no read crosses into a page that is not mapped.  0, or -1 when
 * it cannot be read or does not end within n. */
static int peek_str(long pid, uint64_t addr, char *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		size_t want = (size_t)(tx_up(addr + got + 1, TX_PAGE) - (addr + got));
		if (want > n - got)
			want = n - got;
		if (peek(pid, addr + got, buf + got, want) != 0)
			return -1;
		if (memchr(buf + got, '\0', want))
			return 0;
		got += want;
	}
	return -1;
}

int libfind_at(const Elf64_Dyn *dyn, size_t nd, uint64_t base, const char *path)
{
	static char name[PATH_MAX];
	struct lm_head lm;
	long pid = sys_getpid();
	uint64_t map;
	unsigned n = 0;
	int audited;

	if (!list_first(pid, dyn, nd, &map, &audited))
		return -1;
	while (map) {
		if (!list_step(pid, &map, &lm, &n))
			return -1;
		if (lm.addr != base)
			continue;
		/* Its name as ld.so found it ($ORIGIN expanded from the
		 * program's real path): the same file name is enough here. */
		if (peek_str(pid, lm.name, name, sizeof(name)) != 0)
			return -1;
		return tx_streq(tx_basename(name), tx_basename(path));
	}
	return 0;
}

