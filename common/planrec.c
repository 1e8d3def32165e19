/* Plan records (see planrec.h). */
#include "planrec.h"

#include <string.h>

#include "bits.h"
#include "sys.h"
#include "textcache.h"

#define MAGIC "TXPLAN2"

/* The record's first bytes; the libraries (lib_size bytes each) and the
 * pool (used bytes) follow. */
struct head {
	char magic[8];
	uint32_t lib_size, n, used, origin; /* origin: the program's directory (pool), 0: its search path has no $ORIGIN */
	uint32_t complete, stop, stop_err, glibc_minor; /* ld.so's (libwalk.h) */
	struct walk_id interp;
};

_Static_assert(sizeof(struct head) <= 128, "PLANREC_MAX counts 128 bytes of header");

size_t planrec_encode(const struct walk *w, const struct statx *interp, unsigned minor, const char *origin, void *out,
		      size_t n)
{
	struct head h = { .lib_size = sizeof(struct walk_lib), .n = w->n, .used = w->used, .complete = (uint32_t)w->complete,
			  .stop = w->stop, .stop_err = (uint32_t)w->stop_err, .glibc_minor = minor };
	size_t ol = strlen(origin) + 1, libs = w->n * sizeof(w->lib[0]);
	size_t size = sizeof(h) + libs + w->used + (w->origin_used ? ol : 0);

	if (size > n || w->used + ol > WALK_POOL)
		return 0;
	memcpy(h.magic, MAGIC, sizeof(MAGIC));
	walk_id_of(interp, &h.interp);
	if (w->origin_used)
		h.origin = w->used;
	char *p = out;
	memcpy(p, &h, sizeof(h));
	for (unsigned i = 0; i < w->n; i++) {
		struct walk_lib l = w->lib[i];
		l.fd = -1; /* no descriptor of tiexec-warm's */
		l.req.fd = 0;
		memcpy(p + sizeof(h) + i * sizeof(l), &l, sizeof(l));
	}
	memcpy(p + sizeof(h) + libs, w->pool, w->used);
	if (w->origin_used)
		memcpy(p + sizeof(h) + libs + w->used, origin, ol);
	return size;
}

static int same_id(const struct walk_id *a, const struct walk_id *b)
{
	return a->ino == b->ino && a->size == b->size && a->mtime == b->mtime && a->ctime == b->ctime &&
	       a->dev_major == b->dev_major && a->dev_minor == b->dev_minor && a->mtime_ns == b->mtime_ns &&
	       a->ctime_ns == b->ctime_ns;
}

/* Whether the pool offset at names a string of w's pool (used bytes,
 * the last a NUL). */
static int in_pool(const struct walk *w, uint32_t at)
{
	return at < w->used;
}

/* Whether library l of a record may be a target of the plan (aligns: as
 * planrec_load takes it). */
static int may_be_target(const struct walk *w, const struct walk_lib *l, int aligns)
{
	return (l->req.target && !(aligns && walk_kernel_places(l))) ||
	       (l->win_at && textcache_windowed(walk_str(w, l->path)));
}

/* The record's header into *h and its libraries and pool into w: why
 * not. */
static const char *read_record(int fd, struct walk *w, struct head *h)
{
	static char buf[PLANREC_MAX + 1];
	long got = sys_pread(fd, buf, sizeof(buf), 0);

	if (got < (long)sizeof(*h) || got > (long)PLANREC_MAX)
		return "its size is not a plan record's";
	memcpy(h, buf, sizeof(*h));
	size_t libs = (size_t)h->n * sizeof(w->lib[0]);
	if (memcmp(h->magic, MAGIC, sizeof(MAGIC)) || h->lib_size != sizeof(w->lib[0]) || h->n > WALK_MAX ||
	    h->used < 1 || h->used > WALK_POOL || sizeof(*h) + libs + h->used > (size_t)got)
		return "not a plan record of this tiexec";
	memcpy(w->lib, buf + sizeof(*h), libs);
	memcpy(w->pool, buf + sizeof(*h) + libs, h->used);
	w->used = h->used;
	w->n = h->n;
	if (w->pool[w->used - 1] != '\0')
		return "not a plan record of this tiexec";
	/* The program's directory, where the record holds one, after the pool. */
	size_t rest = (size_t)got - (sizeof(*h) + libs + h->used);
	if (h->origin && (h->origin != h->used || !rest || rest > WALK_POOL - w->used ||
			  buf[got - 1] != '\0'))
		return "not a plan record of this tiexec";
	memcpy(w->pool + w->used, buf + sizeof(*h) + libs + h->used, rest);
	return NULL;
}

const char *planrec_load(int fd, struct walk *w, const struct statx *interp, int aligns)
{
	struct head h;
	struct walk_id id;
	const char *why = read_record(fd, w, &h);

	if (why)
		return why;
	walk_id_of(interp, &id);
	if (!same_id(&id, &h.interp))
		return "made for another ld.so";
	if (h.origin) {
		const char *o = walk_str(w, (uint16_t)h.origin);
		if (strlen(o) >= sizeof(w->origin))
			return "not a plan record of this tiexec";
		memcpy(w->origin, o, strlen(o) + 1);
	}
	if (h.stop && !in_pool(w, h.stop))
		return "not a plan record of this tiexec";
	w->ncand = 0;
	for (unsigned i = 0; i < w->n; i++) {
		struct walk_lib *l = &w->lib[i];
		l->fd = -1;
		l->req.file = 0;
		if (!l->path || !in_pool(w, l->path))
			return "not a plan record of this tiexec";
		if (may_be_target(w, l, aligns))
			w->ncand = i + 1;
	}
	w->complete = (int)h.complete;
	w->stop = (uint16_t)h.stop;
	w->stop_err = (int)h.stop_err;
	w->glibc_minor = h.glibc_minor;
	w->done = 1; /* libwalk_next gives nothing: planrec_next does */
	w->nnames = 0;
	w->origin_used = h.origin != 0;
	w->rec = 1;
	w->stale = 0;
	w->next = 0;
	return NULL;
}

const struct walk_lib *planrec_next(struct walk *w)
{
	struct statx st;
	struct walk_id id;

	if (!w->rec || w->stale || w->next >= w->ncand)
		return NULL;
	struct walk_lib *l = &w->lib[w->next];
	const char *path = walk_str(w, l->path);
	int fd = walk_kernel_places(l) ? (int)sys_openat(TX_AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0) : -1;
	long e = walk_kernel_places(l) ? (fd < 0 ? fd : sys_statx(fd, "", TX_AT_EMPTY_PATH, STATX_BASIC_STATS, &st))
				       : sys_statx(TX_AT_FDCWD, path, 0, STATX_BASIC_STATS, &st);
	if (e == 0)
		walk_id_of(&st, &id);
	if (e < 0 || !same_id(&id, &l->id)) {
		if (fd >= 0)
			sys_close(fd);
		w->stale = 1;
		return NULL;
	}
	l->fd = fd;
	w->next++;
	return l;
}
