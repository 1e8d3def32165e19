/* Joining the kernel side's events by pid: an exec of the loader, then its
 * outcome (tiexec:loaded or tiexec:direct, or its exit), then for a loaded
 * one its libraries (tiexec:lib ... tiexec:libs), into one row per exec. */
#include <stdlib.h>
#include <string.h>

#include "mark.h"
#include "trace.h"

/* Counted (--counters) whatever the filters, printed if wanted. */
static void report_row(struct trace *t, const struct row *r)
{
	count_row(&t->counters, r);
	emit(t, r);
}

static struct slot *find(struct trace *t, uint32_t pid, bool create)
{
	unsigned h = (pid * 2654435761u) & (SLOTS - 1);
	struct slot *empty = NULL;

	for (unsigned i = 0; i < SLOTS; i++) {
		struct slot *s = &t->slots[(h + i) & (SLOTS - 1)];
		if (s->state == FREE) {
			if (!empty)
				empty = s;
			break; /* no deletion tombstones: see drop_slot */
		}
		if (s->pid == pid)
			return s;
	}
	if (!create || !empty)
		return NULL;
	empty->pid = pid;
	return empty;
}

/* Deletes with backward-shift, so that lookups can stop at a free slot. */
static void drop_slot(struct trace *t, struct slot *s)
{
	unsigned i = (unsigned)(s - t->slots);
	t->slots[i].state = FREE;
	for (unsigned j = (i + 1) & (SLOTS - 1); t->slots[j].state != FREE; j = (j + 1) & (SLOTS - 1)) {
		unsigned home = (t->slots[j].pid * 2654435761u) & (SLOTS - 1);
		/* Move j to i if its home is not cyclically within (i, j]. */
		bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!between) {
			t->slots[i] = t->slots[j];
			t->slots[j].state = FREE;
			i = j;
		}
	}
}

static void copy_comm(char *dst, const char *src)
{
	memcpy(dst, src, TX_COMM_BYTES);
	dst[TX_COMM_BYTES] = 0;
}

static void row_from_task(struct row *r, const struct tx_task *t)
{
	memset(r, 0, sizeof(*r));
	r->boot_ns = t->boot_ns;
	r->pid = t->pid;
	r->ppid = t->ppid;
	r->uid = t->uid;
	copy_comm(r->comm, t->comm);
	r->strategy = -1;
}

/* For `tiexec [options] PROG`: the program named by the command line. */
static const char *program_from_args(const struct tx_exec *ex, char *buf, size_t n)
{
	const char *p = ex->args, *end = ex->args + ex->args_bytes;
	int i = 0;
	bool take = false, skip = false;

	while (p < end) {
		size_t len = strnlen(p, (size_t)(end - p));
		if (i > 0) {
			if (take || !(p[0] == '-' && p[1])) {
				snprintf(buf, n, "%.*s", (int)len, p);
				return buf;
			}
			if (skip)
				skip = false;
			else if (!strcmp(p, "--"))
				take = true;
			else if (!strcmp(p, "--strategy") || !strcmp(p, "--min-text"))
				skip = true;
		}
		p += len + 1;
		i++;
	}
	return NULL;
}

static const char *via_of_exec(const struct tx_exec *ex)
{
	if (!(ex->flags & TX_EXEC_LOADER))
		return "none";
	if (ex->flags & TX_EXEC_INTERP)
		return "binfmt";
	if (ex->flags & TX_EXEC_CLASSIC) {
		/* binfmt_misc makes the program's path argv[1]. */
		const char *a1 = memchr(ex->args, 0, ex->args_bytes);
		if (a1 && ++a1 < ex->args + ex->args_bytes &&
		    !strncmp(a1, ex->filename, (size_t)(ex->args + ex->args_bytes - a1)))
			return "binfmt";
	}
	return "command-line";
}

/* A loader exec without an outcome: USDT not attached, or none came. */
static void emit_exec(struct trace *t, const struct tx_exec *ex, const char *outcome, const char *note)
{
	struct row r;
	char prog[TX_PATH_BYTES + 1], fname[TX_PATH_BYTES + 1];

	row_from_task(&r, &ex->t);
	snprintf(fname, sizeof(fname), "%.*s", TX_PATH_BYTES, ex->filename);
	r.via = via_of_exec(ex);
	r.program = fname;
	if ((ex->flags & TX_EXEC_LOADER) && !strcmp(r.via, "command-line") &&
	    program_from_args(ex, prog, sizeof(prog)))
		r.program = prog;
	r.outcome = outcome;
	snprintf(r.note, sizeof(r.note), "%s", note);
	report_row(t, &r);
}

/* The row of a loaded exec: ld the outcome, exec_boot_ns when the exec
 * was (if seen), libs its libraries (NULL without the stage). */
static void emit_loaded(struct trace *t, const struct tx_loaded *e, bool have_exec, uint64_t exec_boot_ns,
			const struct libs_seen *libs)
{
	struct row r;
	char path[TX_PATH_BYTES + 1];

	row_from_task(&r, &e->t);
	r.boot_ns = have_exec ? exec_boot_ns : e->t.boot_ns - e->elapsed_ns;
	r.via = e->mode & TX_MODE_BINFMT ? "binfmt" : e->mode & TX_MODE_REEXEC ? "re-exec" : "command-line";
	snprintf(path, sizeof(path), "%.*s", TX_PATH_BYTES, e->p.path);
	r.program = path;
	r.outcome = "loaded";
	r.strategy = (int)e->strategy;
	r.sizes = true;
	r.text = e->p.text_bytes;
	r.huge = e->p.huge_bytes;
	r.file = e->p.file_bytes;
	r.thp = e->p.thp_bytes;
	r.hugetlb = e->p.hugetlb_bytes;
	r.cache = e->p.cache_bytes;
	r.elapsed_ns = e->elapsed_ns;
	r.remapped = e->mode & TX_MODE_REMAPPED;
	r.libs = libs;
	if (e->p.has_reason)
		snprintf(r.note, sizeof(r.note), "fallback: %.*s", TX_REASON_BYTES, e->p.reason);
	else if (!r.remapped && e->strategy != ST_OFF)
		snprintf(r.note, sizeof(r.note), "below min-text");
	report_row(t, &r);
}

/* Emits an exec held for its libraries, saying why (if not complete), and
 * frees its slot. */
static void emit_held(struct trace *t, struct slot *s, const char *why)
{
	struct libs_seen *l = &s->libs;

	if (!l->done && why)
		snprintf(l->why, sizeof(l->why), "%s", why);
	else if (l->done && l->seen < l->count)
		snprintf(l->why, sizeof(l->why), "libraries: %llu of %llu records dropped",
			 (unsigned long long)(l->count - l->seen), (unsigned long long)l->count);
	else if (l->seen > l->n)
		snprintf(l->why, sizeof(l->why), "libraries: %u more not shown", l->seen - l->n);
	emit_loaded(t, &s->ld, s->have_exec, s->exec_boot_ns, l);
	free(l->v);
	memset(l, 0, sizeof(*l));
	drop_slot(t, s);
}

void flush_pending(struct trace *t, bool all)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	for (unsigned i = 0; i < SLOTS; i++) {
		struct slot *s = &t->slots[i];
		if (s->state == FREE || (!all && now - s->mono_ns < PENDING_MAX_NS))
			continue;
		if (s->state == PENDING)
			emit_exec(t, &s->ex, "unknown", "no outcome seen");
		if (s->state == AWAIT_LIBS)
			emit_held(t, s, all ? "libraries: tracing stopped before their end" : "libraries: no end seen");
		else
			drop_slot(t, s);
		i--; /* backward shift may have moved another entry here */
	}
}

static void on_exec(struct trace *t, const struct tx_exec *ex)
{
	struct slot *s = find(t, ex->t.pid, ex->flags & TX_EXEC_LOADER);

	if (s && s->state == AWAIT_LIBS) {
		/* A library's constructor exec'd: the hook never ran. */
		emit_held(t, s, "libraries: not placed (exec'd first)");
		s = find(t, ex->t.pid, ex->flags & TX_EXEC_LOADER);
	}
	if (s && s->state == PENDING) {
		/* The last loader exec in this pid never said what it did. */
		emit_exec(t, &s->ex, "unknown", "no outcome seen");
		s->state = FREE;
		drop_slot(t, s);
		s = find(t, ex->t.pid, ex->flags & TX_EXEC_LOADER);
	} else if (s && s->state == AFTER_DIRECT) {
		/* The loader's own plain execve of the program: reported
		 * already, as "direct: REASON". */
		drop_slot(t, s);
		if (!(ex->flags & TX_EXEC_LOADER))
			return;
		s = find(t, ex->t.pid, true);
	}
	if (!(ex->flags & TX_EXEC_LOADER)) {
		/* Without --all the kernel side sends these only to end a wait. */
		if (t->opt.all)
			emit_exec(t, ex, "none", "not through tiexec");
		return;
	}
	if (!t->usdt_on) {
		emit_exec(t, ex, "unknown", "");
		return;
	}
	if (!s) { /* table full */
		emit_exec(t, ex, "unknown", "no outcome seen");
		return;
	}
	s->state = PENDING;
	s->mono_ns = clock_ns(CLOCK_MONOTONIC);
	s->ex = *ex;
}

/* Takes the pending exec of pid, if any, into r (time, via). */
static bool take_exec(struct trace *t, struct row *r, uint32_t pid, struct tx_exec *ex)
{
	struct slot *s = find(t, pid, false);
	if (!s || s->state != PENDING)
		return false;
	*ex = s->ex;
	drop_slot(t, s);
	r->boot_ns = ex->t.boot_ns;
	r->via = via_of_exec(ex);
	return true;
}

static void on_loaded(struct trace *t, const struct tx_loaded *e)
{
	struct row r;
	struct tx_exec ex;
	struct slot *s = find(t, e->t.pid, false);

	if (s && s->state == AWAIT_LIBS)
		emit_held(t, s, "libraries: no end seen");
	bool have_exec = take_exec(t, &r, e->t.pid, &ex);
	if (!(e->mode & TX_MODE_LIBS) || !t->libs_on) {
		emit_loaded(t, e, have_exec, ex.t.boot_ns, NULL);
		return;
	}
	s = find(t, e->t.pid, true);
	if (!s) { /* table full */
		struct libs_seen none = { .why = "libraries: not followed (too many execs at once)" };
		emit_loaded(t, e, have_exec, ex.t.boot_ns, &none);
		return;
	}
	s->state = AWAIT_LIBS;
	s->mono_ns = clock_ns(CLOCK_MONOTONIC);
	s->ld = *e;
	s->have_exec = have_exec;
	s->exec_boot_ns = have_exec ? ex.t.boot_ns : 0;
	memset(&s->libs, 0, sizeof(s->libs));
}

static void on_lib(struct trace *t, const struct tx_lib *e)
{
	struct slot *s = find(t, e->t.pid, false);
	struct libs_seen *l = s && s->state == AWAIT_LIBS ? &s->libs : NULL;

	if (!l)
		return;
	l->seen++;
	if (l->n == LIBS_KEPT)
		return;
	if (!l->v && !(l->v = malloc(LIBS_KEPT * sizeof(*l->v))))
		return;
	l->v[l->n++] = *e;
}

static void on_libs(struct trace *t, const struct tx_libs *e)
{
	struct slot *s = find(t, e->t.pid, false);

	if (!s || s->state != AWAIT_LIBS)
		return;
	s->libs.done = true;
	s->libs.count = e->count;
	s->libs.elapsed_ns = e->elapsed_ns;
	emit_held(t, s, NULL);
}

static void on_direct(struct trace *t, const struct tx_direct *e)
{
	struct row r;
	struct tx_exec ex;
	char path[TX_PATH_BYTES + 1];

	row_from_task(&r, &e->t);
	r.via = "command-line";
	take_exec(t, &r, e->t.pid, &ex);
	snprintf(path, sizeof(path), "%.*s", TX_PATH_BYTES, e->path);
	r.program = path;
	r.outcome = "direct";
	snprintf(r.note, sizeof(r.note), "direct: %.*s", TX_REASON_BYTES, e->reason);
	report_row(t, &r);
	if (t->opt.all) {
		struct slot *s = find(t, e->t.pid, true);
		if (s) {
			s->state = AFTER_DIRECT;
			s->mono_ns = clock_ns(CLOCK_MONOTONIC);
		}
	}
}

static void on_exit_event(struct trace *t, const struct tx_exit *e)
{
	struct slot *s = find(t, e->t.pid, false);
	char note[96];
	int code = e->exit_code;

	if (s && s->state == AWAIT_LIBS) {
		/* ld.so failed (a library not found: status 127), or a
		 * constructor ended the process. */
		if (code & 0x7f)
			snprintf(note, sizeof(note), "libraries: not placed (killed by signal %d first)", code & 0x7f);
		else
			snprintf(note, sizeof(note), "libraries: not placed (exit status %d first)", (code >> 8) & 0xff);
		emit_held(t, s, note);
		return;
	}
	if (!s || s->state != PENDING)
		return;
	if (code & 0x7f)
		snprintf(note, sizeof(note), "loader failed: killed by signal %d", code & 0x7f);
	else
		snprintf(note, sizeof(note), "loader failed: exit status %d", (code >> 8) & 0xff);
	struct tx_exec ex = s->ex;
	drop_slot(t, s);
	emit_exec(t, &ex, "failed", note);
}

int handle(void *ctx, void *data, size_t size)
{
	struct trace *t = ctx;
	const struct tx_task *task = data;

	if (size < sizeof(*task))
		return 0;
	switch (task->kind) {
	case TX_EV_EXEC:
		if (size >= sizeof(struct tx_exec))
			on_exec(t, data);
		break;
	case TX_EV_LOADED:
		if (size >= sizeof(struct tx_loaded))
			on_loaded(t, data);
		break;
	case TX_EV_DIRECT:
		if (size >= sizeof(struct tx_direct))
			on_direct(t, data);
		break;
	case TX_EV_EXIT:
		if (size >= sizeof(struct tx_exit))
			on_exit_event(t, data);
		break;
	case TX_EV_LIB:
		if (size >= sizeof(struct tx_lib))
			on_lib(t, data);
		break;
	case TX_EV_LIBS:
		if (size >= sizeof(struct tx_libs))
			on_libs(t, data);
		break;
	default:
		break;
	}
	return 0;
}
