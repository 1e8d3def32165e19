/* ld.so's libraries in its order, from the files (see libwalk.h). */
#include "libwalk.h"

#include <string.h>

#include "arch_elf.h"
#include "bits.h"
#include "elfcheck.h"
#include "searchpath.h"
#include "sys.h"
#include "textcache.h"

#define PH_MAX 64
#define DYN_MAX 512
#define STR_MAX 1024

/* s (n bytes, no NUL needed) into the pool: its offset, 0 when full. */
static uint16_t pool_add(struct walk *w, const char *s, size_t n)
{
	if (n + 1 > sizeof(w->pool) - w->used)
		return 0;
	uint16_t at = (uint16_t)w->used;
	memcpy(w->pool + at, s, n);
	w->pool[at + n] = '\0';
	w->used += (unsigned)n + 1;
	return at;
}

static int same_str(const char *a, const char *b)
{
	size_t n = strlen(a);

	return n == strlen(b) && !memcmp(a, b, n);
}

static int name_known(const struct walk *w, const char *name)
{
	for (unsigned i = 0; i < w->nnames; i++)
		if (same_str(walk_str(w, w->names[i]), name))
			return 1;
	return 0;
}

static void name_add(struct walk *w, const char *name)
{
	uint16_t at = w->nnames < sizeof(w->names) / sizeof(w->names[0]) ? pool_add(w, name, strlen(name)) : 0;

	if (at)
		w->names[w->nnames++] = at;
}

/* Whether a library was found at path already (under another name). */
static int path_known(const struct walk *w, const char *path)
{
	for (unsigned i = 0; i < w->n; i++)
		if (same_str(walk_str(w, w->lib[i].path), path))
			return 1;
	return 0;
}

/* A name looked for: the descriptor of what opened, and the first reason
 * other than its absence that a candidate did not (a negative errno). */
struct found {
	int fd, err;
};

/* dir/name into out (PATH_MAX), $ORIGIN expanded with origin; whether it
 * opens, into *f. */
static int try_dir(const char *dir, size_t dl, const char *name, const char *origin, char *out, struct found *f)
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
	f->fd = (int)sys_openat(TX_AT_FDCWD, out, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0); /* a FIFO: pread fails */
	if (f->fd < 0 && f->fd != -ENOENT && f->fd != -ENOTDIR && !f->err)
		f->err = f->fd;
	return f->fd >= 0;
}

/* name in the ':'-separated list path: whether found. */
static int try_list(const char *path, const char *name, const char *origin, char *out, struct found *f)
{
	for (const char *p = path; *p;) {
		const char *e = p;
		while (*e && *e != ':')
			e++;
		if (try_dir(p, (size_t)(e - p), name, origin, out, f))
			return 1;
		p = *e ? e + 1 : e;
	}
	return 0;
}

/* The file ld.so loads for name needed by o (prog: the program's object),
 * into out, open in f: 1 found in a search path, 2 in a default
 * directory (ld.so asked ld.so.cache first), 0 not found. */
static int find(const struct walk *w, const char *name, const struct walk_obj *o, const struct walk_obj *prog, char *out,
		struct found *f)
{
	static const char *const dflt[] = { "/lib/" ARCH_MULTIARCH, "/usr/lib/" ARCH_MULTIARCH, "/lib", "/usr/lib" };

	if (memchr(name, '/', strlen(name)))
		return 0;
	if (o->rpath && o->run && try_list(walk_str(w, o->run), name, o->dir, out, f))
		return 1;
	if (o != prog && prog->rpath && prog->run && !(o->run && !o->rpath) &&
	    try_list(walk_str(w, prog->run), name, prog->dir, out, f))
		return 1;
	if (!o->rpath && o->run && try_list(walk_str(w, o->run), name, o->dir, out, f))
		return 1;
	for (unsigned i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++)
		if (try_dir(dflt[i], strlen(dflt[i]), name, o->dir, out, f))
			return 2;
	return 0;
}

/* The library's request as glibc makes it (_dl_map_segments) into *q:
 * maplength, or for p_align above the page a reservation of maplength plus
 * p_align; a target when its text then holds a whole 2 MiB piece at the
 * residue that makes its largest text segment congruent to its file
 * modulo 2 MiB (a reservation's residue a multiple of its p_align).
 * Whether the headers are a library's. */
static int lib_request(const Elf64_Phdr *ph, unsigned n, struct ldplan_req *q, uint8_t *reserve)
{
	uint64_t lo = UINT64_MAX, end = 0, align = 0, best = 0, tv = 0;

	*q = (struct ldplan_req){ 0 };
	for (unsigned i = 0; i < n; i++) {
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
			q->residue = (p->p_offset - p->p_vaddr) & (TX_HUGE - 1);
			tv = p->p_vaddr;
		}
	}
	if (lo == UINT64_MAX || end <= lo)
		return 0;
	q->keep = end - lo;
	q->len = q->keep;
	*reserve = align > TX_PAGE && !(align & (align - 1));
	if (*reserve) {
		q->align = align;
		q->len = q->keep >= align ? q->keep + align : 2 * align;
	}
	/* A whole 2 MiB piece of that segment where the start is at the residue. */
	uint64_t a = tv + q->residue, whole = tx_up(a, TX_HUGE);
	q->target = (!*reserve || !(q->residue & (align - 1))) && whole + TX_HUGE <= a + best;
	return 1;
}

/* What was last read of a library's string table: a library's names and
 * search path usually lie close together (at its end), so one read
 * serves most of them. */
struct strwin {
	uint64_t at, len;
	char b[STR_MAX];
};

/* The string at off of the string table at file offset stroff (strsz
 * bytes) into the pool: its offset, 0 when it cannot be read.  Read
 * through win (len 0: nothing read yet). */
static uint16_t read_str(struct walk *w, struct strwin *win, int fd, uint64_t stroff, uint64_t strsz, uint64_t off)
{
	if (off >= strsz)
		return 0;
	if (off < win->at || off >= win->at + win->len || !memchr(win->b + (off - win->at), '\0', win->len - (off - win->at))) {
		/* A little before off too: names often precede the first asked. */
		uint64_t at = off > STR_MAX / 4 ? off - STR_MAX / 4 : 0;
		uint64_t want = strsz - at < sizeof(win->b) ? strsz - at : sizeof(win->b);
		long got = sys_pread(fd, win->b, want, stroff + at);
		win->at = at;
		win->len = got > (long)(off - at) ? (uint64_t)got : 0;
	}
	const char *s = win->b + (off - win->at);
	const char *nul = win->len ? memchr(s, '\0', win->len - (off - win->at)) : NULL;
	return nul ? pool_add(w, s, (size_t)(nul - s)) : 0;
}

/* The file offset of address v, from the PT_LOAD holding it, or 0. */
static uint64_t file_off(const Elf64_Phdr *ph, unsigned n, uint64_t v)
{
	for (unsigned i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && v >= ph[i].p_vaddr && v - ph[i].p_vaddr < ph[i].p_filesz)
			return v - ph[i].p_vaddr + ph[i].p_offset;
	return 0;
}

/* An object's dynamic section (read from fd): its DT_NEEDED names and
 * search path into *l, a library's DT_SONAME (lib) into the names.
 * Whether read. */
static int obj_dynamic(struct walk *w, int fd, const Elf64_Phdr *ph, unsigned n, struct walk_lib *l, int lib)
{
	static Elf64_Dyn d[DYN_MAX];
	static struct strwin win;
	const Elf64_Phdr *dyn = NULL;
	uint64_t strtab = 0, strsz = 0;

	for (unsigned i = 0; i < n; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = &ph[i];
	long got = dyn ? sys_pread(fd, d, dyn->p_filesz < sizeof(d) ? dyn->p_filesz : sizeof(d), dyn->p_offset) : 0;
	if (got < (long)sizeof(d[0]))
		return dyn == NULL; /* no dynamic section: nothing needed */
	unsigned nd = (unsigned)((unsigned long)got / sizeof(d[0]));
	for (unsigned i = 0; i < nd && d[i].d_tag != DT_NULL; i++) {
		if (d[i].d_tag == DT_STRTAB)
			strtab = file_off(ph, n, d[i].d_un.d_ptr);
		else if (d[i].d_tag == DT_STRSZ)
			strsz = d[i].d_un.d_val;
	}
	if (!strtab)
		return 0;
	win.len = 0;
	l->need = (uint16_t)w->used;
	for (unsigned i = 0; i < nd && d[i].d_tag != DT_NULL; i++) {
		if (d[i].d_tag == DT_NEEDED) {
			if (!read_str(w, &win, fd, strtab, strsz, d[i].d_un.d_val))
				return 0;
			l->nneed++;
		}
	}
	for (unsigned i = 0; i < nd && d[i].d_tag != DT_NULL; i++) {
		uint16_t at = 0;
		if (d[i].d_tag == DT_SONAME && lib && (at = read_str(w, &win, fd, strtab, strsz, d[i].d_un.d_val)))
			name_add(w, walk_str(w, at));
		else if ((d[i].d_tag == DT_RUNPATH || (d[i].d_tag == DT_RPATH && !l->run)) &&
			 (at = read_str(w, &win, fd, strtab, strsz, d[i].d_un.d_val))) {
			l->run = at;
			l->rpath = d[i].d_tag == DT_RPATH;
		}
	}
	return 1;
}

/* The library open at fd, found at path: appended to the walk.  Whether
 * its headers could be read. */
static int add_lib(struct walk *w, int fd, const char *path, uint8_t how)
{
	static union {
		Elf64_Ehdr eh;
		unsigned char b[sizeof(Elf64_Ehdr) + PH_MAX * sizeof(Elf64_Phdr)];
	} h;
	struct walk_lib *l = &w->lib[w->n];
	Elf64_Ehdr eh;
	long got = sys_pread(fd, h.b, sizeof(h.b), 0);

	/* The table in what was read, as linkers put it after the header. */
	if (got < 0 || elf_check_ehdr(h.b, (size_t)got, (uint64_t)got, &eh) != ELF_OK || eh.e_type != ET_DYN ||
	    eh.e_phnum > PH_MAX || eh.e_phoff % _Alignof(Elf64_Phdr))
		return 0;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(h.b + eh.e_phoff);
	*l = (struct walk_lib){ .how = how, .fd = -1 };
	l->ro_end = textcache_window_end(ph, eh.e_phnum);
	l->win_at = textcache_window_at(ph, eh.e_phnum);
	if (!lib_request(ph, eh.e_phnum, &l->req, &l->reserve) || !(l->path = pool_add(w, path, strlen(path))) ||
	    !obj_dynamic(w, fd, ph, eh.e_phnum, l, 1))
		return 0;
	w->n++;
	return 1;
}

/* ld.so's answer for name, needed by o: found and loaded, found and
 * already loaded, or 0 when the walk cannot go on.  ld.so also knows a
 * file it loaded by its device and inode; the walk, by the path it was
 * found at (one statx less a library; a name linked to another loaded
 * one is rare, and costs at most the placement). */
static int follow(struct walk *w, const char *name, const struct walk_obj *o, const struct walk_obj *prog)
{
	char path[PATH_MAX];
	struct found f = { -1, 0 };
	int ok, how = find(w, name, o, prog, path, &f);

	if (!how) {
		w->stop_err = f.err;
		return 0;
	}
	unsigned before = w->n;
	ok = path_known(w, path) || (w->n < WALK_MAX && add_lib(w, f.fd, path, (uint8_t)how));
	struct walk_lib *l = w->n > before ? &w->lib[before] : NULL;
	if (l && walk_kernel_places(l))
		l->fd = f.fd; /* kept for the plan's stand-in (libplan.c) */
	else
		sys_close(f.fd);
	if (ok)
		name_add(w, name);
	return ok;
}

/* The directory of path into dir (PATH_MAX). */
static void dir_of(const char *path, char *dir)
{
	size_t dl = 0, n = strlen(path);

	for (size_t i = 0; i < n; i++)
		if (path[i] == '/')
			dl = i;
	memcpy(dir, path, dl ? dl : 1);
	dir[dl ? dl : 1] = '\0';
}

/* The program's object: its DT_NEEDED names and search path, read from
 * its file (fd, program headers ph[0..n)) into the pool.  Whether it has
 * any. */
static int prog_obj(struct walk *w, int fd, const Elf64_Phdr *ph, unsigned n, struct walk_obj *o)
{
	struct walk_lib l = { 0 };

	if (!obj_dynamic(w, fd, ph, n, &l, 0))
		return 0;
	o->need = l.need;
	o->nneed = l.nneed;
	o->run = l.run;
	o->rpath = l.rpath;
	return o->nneed > 0;
}

void libwalk_start(struct walk *w, int prog_fd, const Elf64_Phdr *ph, unsigned phnum, const char *interp,
		   const char *origin)
{
	size_t n = strlen(origin);

	w->n = w->nnames = w->left = 0;
	w->cur = -1;
	w->done = 0;
	w->stop = 0;
	w->stop_err = 0;
	w->used = 1; /* offset 0: none */
	w->rec = w->stale = 0;
	w->origin_used = 0;
	w->pool[0] = '\0';
	name_add(w, tx_basename(interp));
	memcpy(w->origin, origin, n < sizeof(w->origin) ? n + 1 : 1);
	w->po = (struct walk_obj){ .dir = w->origin };
	w->o = w->po;
	if (n >= sizeof(w->origin) || !prog_obj(w, prog_fd, ph, phnum, &w->po)) {
		w->done = 1;
		return;
	}
	w->o = w->po;
	w->origin_used = w->po.run && origin_has(walk_str(w, w->po.run));
	w->name = w->po.need;
	w->left = w->po.nneed;
}

/* The next object whose names to follow (the libraries in turn): whether
 * there is one. */
static int next_obj(struct walk *w)
{
	if (w->cur + 1 >= (int)w->n)
		return 0;
	const struct walk_lib *l = &w->lib[++w->cur];
	dir_of(walk_str(w, l->path), w->dir);
	w->o = (struct walk_obj){ l->need, l->nneed, l->run, l->rpath, w->dir };
	w->name = l->need;
	w->left = l->nneed;
	return 1;
}

const struct walk_lib *libwalk_next(struct walk *w)
{
	while (!w->done) {
		if (w->left == 0) {
			if (!next_obj(w))
				w->done = w->complete = 1;
			continue;
		}
		const char *name = walk_str(w, w->name);
		w->name = (uint16_t)(w->name + strlen(name) + 1);
		w->left--;
		if (name_known(w, name))
			continue;
		unsigned before = w->n;
		if (!follow(w, name, &w->o, &w->po)) {
			w->done = 1;
			w->stop = (uint16_t)(name - w->pool);
		}
		else if (w->n > before)
			return &w->lib[before];
	}
	return NULL;
}

void walk_id_of(const struct statx *st, struct walk_id *id)
{
	*id = (struct walk_id){ .ino = st->stx_ino,
				.size = st->stx_size,
				.mtime = st->stx_mtime.tv_sec,
				.ctime = st->stx_ctime.tv_sec,
				.dev_major = st->stx_dev_major,
				.dev_minor = st->stx_dev_minor,
				.mtime_ns = st->stx_mtime.tv_nsec,
				.ctime_ns = st->stx_ctime.tv_nsec };
}

void walk_id_statx(const struct walk_id *id, struct statx *st)
{
	*st = (struct statx){ .stx_mask = STATX_BASIC_STATS,
			      .stx_ino = id->ino,
			      .stx_size = id->size,
			      .stx_mtime = { .tv_sec = id->mtime, .tv_nsec = id->mtime_ns },
			      .stx_ctime = { .tv_sec = id->ctime, .tv_nsec = id->ctime_ns },
			      .stx_dev_major = id->dev_major,
			      .stx_dev_minor = id->dev_minor };
}

unsigned glibc_minor(const Elf64_Phdr *ph, unsigned n, const char *base, int file, uint64_t size)
{
	static const char key[] = "release version 2.";
	const size_t kn = sizeof(key) - 1, at = 8; /* key[at] == 'v', rarer than 'r' */

	for (unsigned i = 0; i < n; i++) {
		const Elf64_Phdr *p = &ph[i];
		uint64_t off = file ? p->p_offset : p->p_vaddr;
		if (p->p_type != PT_LOAD || (p->p_flags & (PF_X | PF_W)) || !(p->p_flags & PF_R) || p->p_filesz < kn + 2 ||
		    off > size || p->p_filesz > size - off)
			continue;
		const char *s = base + off, *e = s + p->p_filesz;
		for (const char *v = s + at; v < e - (kn - at) - 2 && (v = memchr(v, 'v', (size_t)(e - (kn - at) - 2 - v)));
		     v++) {
			if (memcmp(v - at, key, kn))
				continue;
			unsigned m = 0;
			for (const char *d = v - at + kn; d < e && *d >= '0' && *d <= '9' && m < 1000; d++)
				m = m * 10 + (unsigned)(*d - '0');
			return m;
		}
	}
	return 0;
}
