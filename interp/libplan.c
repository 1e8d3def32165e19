/* The library plan stage: where ld.so will map the first library it
 * loads, decided before ld.so runs (ldplan.h).
 *
 * Stage contract.  Reads the load section (prog mapped, the settings, hp)
 * and the environment.  Writes ldp, ldp_req and ldp_lib: the requests
 * ld.so will make up to that library and where its start is wanted, or
 * ldp.n 0.  Opens only that library, to read its headers.  The final
 * stage holds the plan just before ld.so runs (ldplan_hold); the stage
 * after ld.so gives the holds back and says (-v) when the plan missed.
 * Never exits, never prints.
 *
 * This first plan covers the case glibc's alignment forgives: the
 * program's first DT_NEEDED library, linked with p_align above the page
 * (every arm64 library GNU ld links), whose text holds a whole 2 MiB
 * piece.  Before it, ld.so makes one malloc page and, unless the library
 * is in the program's DT_RUNPATH, maps ld.so.cache.  The library is found
 * as ld.so would find it there (DT_RUNPATH or DT_RPATH with $ORIGIN, then
 * the multiarch and default directories); where ld.so.cache says
 * otherwise the plan is wrong, which costs only the placement. */
#include <linux/auxvec.h>

#include "arch_elf.h"
#include "elfcheck.h"
#include "exec.h"
#include "origin.h"
#include "proc.h"
#include "sys.h"

#define PH_MAX 64
#define RTLD_MALLOC_PAGE 8192 /* ld.so's first minimal-malloc mapping */

/* The program's first DT_NEEDED name and its search path (DT_RUNPATH,
 * else DT_RPATH), from its mapped image, or 0. */
static int first_needed(const struct image *prog, const char **name, const char **path)
{
	size_t nd;
	const Elf64_Dyn *d = image_dynamic(prog, 0, &nd);
	const Elf64_Dyn *need = NULL, *run = NULL, *rpath = NULL;
	struct strtab st;

	if (!d || !image_strtab(prog, d, nd, &st))
		return 0;
	for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL; i++) {
		if (d[i].d_tag == DT_NEEDED && !need)
			need = &d[i];
		else if (d[i].d_tag == DT_RUNPATH)
			run = &d[i];
		else if (d[i].d_tag == DT_RPATH)
			rpath = &d[i];
	}
	if (!run)
		run = rpath;
	*name = need ? strtab_at(&st, need->d_un.d_val) : NULL;
	*path = run ? strtab_at(&st, run->d_un.d_val) : NULL;
	if (!*path)
		*path = "";
	return *name && **name && !memchr(*name, '/', strlen(*name));
}

/* dir/name into out (PATH_MAX), $ORIGIN expanded with origin; whether it
 * opens.  The descriptor into *fd. */
static int try_dir(const char *dir, size_t dl, const char *name, const char *origin, char *out, int *fd)
{
	char d[PATH_MAX];

	if (dl == 0 || dl >= sizeof(d))
		return 0;
	memcpy(d, dir, dl);
	d[dl] = '\0';
	if (origin_expand(d, origin, NULL) + strlen(name) + 1 > PATH_MAX)
		return 0;
	size_t n = origin_expand(d, origin, out) - 1;
	out[n++] = '/';
	memcpy(out + n, name, strlen(name) + 1);
	*fd = (int)sys_openat(TX_AT_FDCWD, out, O_RDONLY | O_CLOEXEC, 0);
	return *fd >= 0;
}

/* The library ld.so will load for name, into out, open in *fd: 1 found in
 * the search path (ld.so maps no ld.so.cache before it), 2 in a default
 * directory (it does), 0 not found. */
static int find_lib(const char *name, const char *path, const char *origin, char *out, int *fd)
{
	static const char *const dflt[] = { "/lib/" ARCH_MULTIARCH, "/usr/lib/" ARCH_MULTIARCH, "/lib", "/usr/lib" };

	for (const char *p = path; *p;) {
		const char *e = p;
		while (*e && *e != ':')
			e++;
		if (try_dir(p, (size_t)(e - p), name, origin, out, fd))
			return 1;
		p = *e ? e + 1 : e;
	}
	for (unsigned i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++)
		if (try_dir(dflt[i], strlen(dflt[i]), name, origin, out, fd))
			return 2;
	return 0;
}

/* The library's request as glibc makes it (_dl_map_segments) and the
 * residue its start needs for its largest text segment to be congruent to
 * its file modulo 2 MiB, into *q and *residue: 1 when it is a reservation
 * (p_align above the page) whose text then holds a whole 2 MiB piece. */
static int lib_request(int fd, struct ldplan_req *q, uint64_t *residue)
{
	/* The headers in one read where the table follows the ELF header,
	 * as linkers put it: the table must lie in what was read. */
	static union {
		Elf64_Ehdr eh;
		unsigned char b[sizeof(Elf64_Ehdr) + PH_MAX * sizeof(Elf64_Phdr)];
	} h;
	Elf64_Ehdr e, *eh = &e;
	uint64_t lo = UINT64_MAX, end = 0, align = 0, best = 0;
	long got = sys_pread(fd, h.b, sizeof(h.b), 0);

	if (got < 0 || elf_check_ehdr(h.b, (size_t)got, (uint64_t)got, eh) != ELF_OK || eh->e_type != ET_DYN ||
	    eh->e_phnum > PH_MAX || eh->e_phoff % _Alignof(Elf64_Phdr))
		return 0;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(h.b + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type != PT_LOAD || !p->p_memsz)
			continue;
		if (lo == UINT64_MAX)
			lo = tx_down(p->p_vaddr, TX_PAGE);
		if (p->p_vaddr + p->p_memsz > end)
			end = p->p_vaddr + p->p_memsz;
		if (p->p_align > align)
			align = p->p_align;
		if ((p->p_flags & PF_X) && p->p_filesz > best) {
			best = p->p_filesz;
			*residue = (p->p_offset - p->p_vaddr) & (TX_HUGE - 1);
			q->keep = p->p_vaddr; /* for the piece check below */
		}
	}
	if (lo == UINT64_MAX || end <= lo || align <= TX_PAGE || (*residue & (align - 1)) || (align & (align - 1)))
		return 0;
	/* A whole 2 MiB piece of that segment where the start is at the residue. */
	uint64_t a = q->keep + *residue, whole = tx_up(a, TX_HUGE);
	if (whole + TX_HUGE > a + best)
		return 0;
	q->len = end - lo + align;
	q->align = align;
	q->keep = end - lo;
	return 1;
}

/* Whether a plan can be made and kept: glibc's ld.so (the preinit hook
 * is glibc's; musl maps a library at its reservation, not aligned up),
 * the stage after it gives the holds back, and ld.so loads the program's
 * first DT_NEEDED library first (no preload, no audit module;
 * LD_LIBRARY_PATH would move where it is found). */
static int plannable(const struct exec *ex)
{
	return ex->hp.kind == HOOK_PREINIT && ex->opt.libs && ex->opt.strategy != ST_OFF && !ex->ld_audit &&
	       !env_get(ex->s.envp, "LD_PRELOAD") && !env_get(ex->s.envp, "LD_LIBRARY_PATH");
}

/* $ORIGIN for the search path: the program's directory as it was named
 * (ld.so resolves /proc/self/exe; through a symbolic link the two differ
 * and the plan misses, which costs only the placement). */
static void origin_of(const char *path, char *dir, size_t n)
{
	size_t dl = 0;

	for (size_t i = 0; path[i]; i++)
		if (path[i] == '/')
			dl = i;
	if (path[dl] != '/' || dl + 1 >= n) {
		memcpy(dir, ".", 2);
		return;
	}
	memcpy(dir, path, dl ? dl : 1);
	dir[dl ? dl : 1] = '\0';
}

void libplan_stage(struct exec *ex)
{
	const char *name, *path;
	char origin[PATH_MAX];
	struct ldplan_req *q = ex->ldp_req;
	unsigned k = 0;
	int fd = -1, how;

	ex->ldp.n = 0;
	if (!plannable(ex) || !first_needed(&ex->prog, &name, &path))
		return;
	origin_of(ex->path, origin, sizeof(origin));
	how = find_lib(name, path, origin, ex->ldp_lib, &fd);
	if (!how)
		return;
	struct ldplan_req lib;
	int worth = lib_request(fd, &lib, &ex->ldp.residue);
	sys_close(fd);
	if (!worth)
		return;
	q[k++] = (struct ldplan_req){ RTLD_MALLOC_PAGE, 0, 0 };
	if (how == 2) {
		struct statx sx;
		if (sys_statx(TX_AT_FDCWD, "/etc/ld.so.cache", 0, STATX_SIZE, &sx) == 0 && sx.stx_size)
			q[k++] = (struct ldplan_req){ sx.stx_size, 0, 0 };
	}
	q[k++] = lib;
	ex->ldp.req = q;
	ex->ldp.n = k;
}
