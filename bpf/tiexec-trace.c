/* tiexec-trace: shows, as they happen, the programs started through the
 * tiexec loader and what the loader did for each: the strategy, how much of
 * the text ended up on 2 MiB pages, how long the loader took, and why it
 * fell back when it did.
 *
 * The kernel side (tiexec-trace.bpf.c) reports the execs of the loader file
 * (sched_process_exec, matched on inode and device) and the loader's USDT
 * probes tiexec:loaded, tiexec:direct, tiexec:lib and tiexec:libs; this
 * side joins them by pid and prints one line (or one JSON object) per exec,
 * with the libraries its stage after the dynamic linker placed.  Those come
 * after ld.so ran, later than tiexec:loaded: an exec that announced them
 * is held until tiexec:libs, its exit, its next exec, or PENDING_MAX_NS.
 * The loader's path is checked every second: when a package upgrade puts a
 * new file there, its inode joins the ones followed (TX_LOADERS_MAX) and
 * the probes are attached to it too, with a line on stderr.
 *
 * Exit status: 0 done (--duration elapsed, SIGINT, SIGTERM); 1 cannot trace
 * (privileges, no BTF, no loader, the kernel refused the programs); 2 usage
 * error. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mark.h"
#include "policy.h"
#include "json.h"
#include "tiexec-trace.h"
#include "tiexec-trace.skel.h"

#define PROG "tiexec-trace"
#define DEFAULT_LOADER "/usr/libexec/tiexec/tiexec"
/* A loader exec without an outcome after this long is reported as such. */
#define PENDING_MAX_NS (5ull * 1000000000ull)
#define SLOTS 8192 /* power of two */
#define LIBS_KEPT 64 /* libraries shown per exec; more are counted */

enum tp_mode { TP_AUTO, TP_BTF, TP_CLASSIC };

static struct {
	bool json, all, verbose;
	double duration_s; /* 0: until a signal */
	const char *loader;
	unsigned buffer_mib;
	enum tp_mode tp;
	/* Filters: -u, -p, -n, -x. */
	long uid, pid;     /* -1: any */
	const char *name;  /* NULL: any */
	bool failed;
} opt = { .buffer_mib = 4, .uid = -1, .pid = -1 };

static volatile sig_atomic_t stop;
static bool usdt_on, libs_on;
static char loader_path[PATH_MAX];
static int64_t realtime_minus_boot_ns;
static unsigned long long nrows;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void err(const char *fmt, ...)
{
	va_list ap;
	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!opt.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- privileges and kernel ---- */

static bool has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* bpf_capable() and perfmon_capable() of the kernel: CAP_SYS_ADMIN or the
 * specific capability. */
static bool privileged(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return geteuid() == 0;
	bool admin = has_cap(d, CAP_SYS_ADMIN);
	return (admin || has_cap(d, CAP_BPF)) && (admin || has_cap(d, CAP_PERFMON));
}

/* ---- the loader ---- */

/* --loader PATH, else DEFAULT_LOADER, else `tiexec` in PATH: its stat in
 * st, the path as given (to watch) in given, resolved in loader_path. */
static int find_loader(struct stat *st, char *given, size_t given_size)
{
	const char *p = opt.loader;
	char buf[PATH_MAX];

	if (!p) {
		if (stat(DEFAULT_LOADER, st) == 0) {
			p = DEFAULT_LOADER;
		} else {
			const char *path = getenv("PATH");
			while (path && *path && !p) {
				size_t n = strcspn(path, ":");
				if (n && n + sizeof("/tiexec") < sizeof(buf)) {
					snprintf(buf, sizeof(buf), "%.*s/tiexec", (int)n, path);
					if (access(buf, X_OK) == 0 && stat(buf, st) == 0 && S_ISREG(st->st_mode))
						p = buf;
				}
				path += n + (path[n] == ':');
			}
		}
		if (!p) {
			err("cannot find the loader (not at " DEFAULT_LOADER ", no tiexec in PATH): use --loader PATH");
			return -1;
		}
	}
	if (stat(p, st) != 0) {
		err("%s: %s", p, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		err("%s: not a regular file", p);
		return -1;
	}
	if (!realpath(p, loader_path)) {
		err("%s: %s", p, strerror(errno));
		return -1;
	}
	snprintf(given, given_size, "%s", p);
	return 0;
}

/* ---- rows ---- */


/* What the libraries stage of one exec reported. */
struct libs_seen {
	bool done;           /* its end (tiexec:libs) was seen */
	uint64_t count;      /* lib probes fired, as the end says */
	uint64_t elapsed_ns; /* how long the stage took, as the end says */
	unsigned seen;       /* lib records received */
	unsigned n;          /* of those, kept in v */
	struct tx_lib *v;
	char why[96];        /* when not done, or records are missing: why */
};

struct row {
	uint64_t boot_ns;
	uint32_t pid, ppid, uid;
	char comm[TX_COMM_BYTES + 1];
	const char *program;
	const char *via;
	const char *outcome; /* loaded, direct, failed, unknown, none */
	int strategy;        /* -1: unknown */
	bool sizes;          /* the byte counts and elapsed_ns are known */
	uint64_t text, huge, file, thp, hugetlb, cache, elapsed_ns;
	bool remapped;
	char note[TX_REASON_BYTES + 64];
	const struct libs_seen *libs; /* NULL: no libraries stage */
};

/* For the table: control characters as \ooo, so that a name cannot break
 * the line. */
static const char *printable(const char *str, char *buf, size_t size)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)str; *p && o + 5 < size; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			o += (size_t)snprintf(buf + o, size - o, "\\%03o", *p);
		else
			buf[o++] = (char)*p;
	}
	buf[o] = 0;
	return buf;
}

static void json_u64(FILE *f, const char *name, bool known, uint64_t v)
{
	if (known)
		fprintf(f, ",\"%s\":%llu", name, (unsigned long long)v);
	else
		fprintf(f, ",\"%s\":null", name);
}

static void fmt_mib(char *b, size_t n, bool known, uint64_t v)
{
	if (!known)
		snprintf(b, n, "-");
	else if (v == 0)
		snprintf(b, n, "0");
	else if (v < 1024 * 1024 / 20)
		snprintf(b, n, "<0.1MiB"); /* "0.0MiB" would read as nothing */
	else
		snprintf(b, n, "%.1fMiB", (double)v / (1024.0 * 1024.0));
}

/* The mechanism that placed the most bytes, for --strategy=auto. */
static const char *mechanism(uint64_t huge, uint64_t file, uint64_t thp, uint64_t hugetlb, uint64_t cache)
{
	if (huge == 0)
		return NULL;
	if (cache > file && cache >= thp && cache >= hugetlb)
		return "cache";
	if (hugetlb >= thp && hugetlb >= file && hugetlb)
		return "hugetlb";
	if (thp >= file && thp)
		return "thp";
	if (file)
		return "file";
	return NULL;
}

static const char *used_mechanism(const struct row *r)
{
	return r->sizes ? mechanism(r->huge, r->file, r->thp, r->hugetlb, r->cache) : NULL;
}

static void strategy_column(char *b, size_t n, int strategy, const char *used)
{
	if (strategy < 0 || strategy > ST_OFF)
		snprintf(b, n, "-");
	else if (strategy == 0 && used)
		snprintf(b, n, "auto:%s", used);
	else
		snprintf(b, n, "%s", strategy_name((uint32_t)strategy));
}

static void json_libs(const struct row *r)
{
	const struct libs_seen *l = r->libs;

	if (!l) {
		fputs(",\"libs\":null,\"libs_us\":null,\"libs_note\":null", stdout);
		return;
	}
	fputs(",\"libs\":[", stdout);
	for (unsigned i = 0; i < l->n; i++) {
		const struct tx_lib *b = &l->v[i];
		char path[TX_PATH_BYTES + 1], note[TX_REASON_BYTES + 16];
		const char *used = mechanism(b->p.huge_bytes, b->p.file_bytes, b->p.thp_bytes, b->p.hugetlb_bytes, b->p.cache_bytes);
		snprintf(path, sizeof(path), "%.*s", TX_PATH_BYTES, b->p.path);
		fputs(i ? ",{\"path\":" : "{\"path\":", stdout);
		json_str(stdout, path);
		fputs(",\"used\":", stdout);
		if (used)
			json_str(stdout, used);
		else
			fputs("null", stdout);
		json_u64(stdout, "text_bytes", true, b->p.text_bytes);
		json_u64(stdout, "huge_bytes", true, b->p.huge_bytes);
		json_u64(stdout, "small_bytes", true, b->p.text_bytes > b->p.huge_bytes ? b->p.text_bytes - b->p.huge_bytes : 0);
		json_u64(stdout, "file_bytes", true, b->p.file_bytes);
		json_u64(stdout, "thp_bytes", true, b->p.thp_bytes);
		json_u64(stdout, "cache_bytes", true, b->p.cache_bytes);
		json_u64(stdout, "hugetlb_bytes", true, b->p.hugetlb_bytes);
		fputs(",\"note\":", stdout);
		if (b->p.has_reason) {
			snprintf(note, sizeof(note), "fallback: %.*s", TX_REASON_BYTES, b->p.reason);
			json_str(stdout, note);
		} else {
			fputs("null", stdout);
		}
		fputc('}', stdout);
	}
	fputc(']', stdout);
	json_u64(stdout, "libs_us", l->done, l->elapsed_ns / 1000);
	fputs(",\"libs_note\":", stdout);
	if (l->why[0])
		json_str(stdout, l->why);
	else
		fputs("null", stdout);
}

/* The table: fixed-width columns first, the program (of any length) and
 * its note last, so that long paths do not shift the columns; one line per
 * library under its exec's, the program column "+ PATH". */
#define TABLE_FMT "%-8s  %-7s %-5s %-12s %-11s %-9s %-8s %-7s %s"

static void table_line(const char *t, const struct row *r, const char *via, const char *program,
		       const char *strat, const char *huge, const char *small4k, const char *ms, const char *note)
{
	char line[8 * PATH_MAX], pbuf[4 * (PATH_MAX + TX_PATH_BYTES) + 8], nbuf[4 * (TX_REASON_BYTES + 160) + 1];
	char pid[16], uid[16];
	snprintf(pid, sizeof(pid), "%u", r->pid);
	snprintf(uid, sizeof(uid), "%u", r->uid);
	int n = snprintf(line, sizeof(line), TABLE_FMT "%s%s%s", t, pid, uid, via, strat, huge, small4k, ms,
			 printable(program, pbuf, sizeof(pbuf)), note[0] ? "  (" : "",
			 printable(note, nbuf, sizeof(nbuf)), note[0] ? ")" : "");
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	while (n > 0 && line[n - 1] == ' ')
		line[--n] = 0;
	puts(line);
}

static void table_libs(const struct row *r)
{
	const struct libs_seen *l = r->libs;

	for (unsigned i = 0; l && i < l->n; i++) {
		const struct tx_lib *b = &l->v[i];
		char prog[TX_PATH_BYTES + 3], strat[32], huge[32], small4k[32], note[TX_REASON_BYTES + 16];
		snprintf(prog, sizeof(prog), "+ %.*s", TX_PATH_BYTES, b->p.path);
		strategy_column(strat, sizeof(strat), r->strategy,
				mechanism(b->p.huge_bytes, b->p.file_bytes, b->p.thp_bytes, b->p.hugetlb_bytes, b->p.cache_bytes));
		fmt_mib(huge, sizeof(huge), true, b->p.huge_bytes);
		fmt_mib(small4k, sizeof(small4k), true,
			b->p.text_bytes > b->p.huge_bytes ? b->p.text_bytes - b->p.huge_bytes : 0);
		note[0] = 0;
		if (b->p.has_reason)
			snprintf(note, sizeof(note), "fallback: %.*s", TX_REASON_BYTES, b->p.reason);
		table_line("", r, "", prog, strat, huge, small4k, "-", note);
	}
}

static void print_header(void)
{
	if (!opt.json)
		printf(TABLE_FMT "\n", "TIME", "PID", "UID", "VIA", "STRATEGY", "HUGE", "4K", "LOADER",
		       "PROGRAM (NOTE)");
}

/* --counters FILE: starts by outcome and fallbacks by reason, of every
 * row (the filters apply to the output only), written to FILE each second
 * they changed: "outcome NAME COUNT" and "fallback COUNT REASON" lines,
 * which tiexec-stat --prometheus turns into counters. */
#define REASONS_MAX 64
static struct {
	const char *path;
	bool dirty;
	unsigned long long outcome[5]; /* loaded, direct, failed, unknown, other */
	unsigned nreasons;
	struct {
		char reason[TX_REASON_BYTES + 1];
		unsigned long long n;
	} reasons[REASONS_MAX];
} counters;

static const char *const outcome_names[5] = { "loaded", "direct", "failed", "unknown", "other" };

static void count_reason(const char *why)
{
	unsigned i = 0;

	while (i < counters.nreasons && strcmp(counters.reasons[i].reason, why))
		i++;
	if (i == counters.nreasons) {
		if (i == REASONS_MAX)
			return;
		snprintf(counters.reasons[i].reason, sizeof(counters.reasons[i].reason), "%s", why);
		counters.nreasons++;
	}
	counters.reasons[i].n++;
}

static void count_row(const struct row *r)
{
	unsigned k = 0;

	if (!counters.path || !strcmp(r->outcome, "none"))
		return;
	while (k < 4 && strcmp(r->outcome, outcome_names[k]))
		k++;
	counters.outcome[k]++;
	if (!strncmp(r->note, "fallback: ", 10))
		count_reason(r->note + 10);
	for (unsigned i = 0; r->libs && i < r->libs->n; i++)
		if (r->libs->v[i].p.has_reason) {
			char why[TX_REASON_BYTES + 1];
			snprintf(why, sizeof(why), "%.*s", TX_REASON_BYTES, r->libs->v[i].p.reason);
			count_reason(why);
		}
	counters.dirty = true;
}

static void counters_write(void)
{
	char tmp[PATH_MAX + 16];
	FILE *f;

	if (!counters.path || !counters.dirty)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", counters.path);
	if (!(f = fopen(tmp, "we"))) {
		err("--counters: %s: %s", tmp, strerror(errno));
		counters.path = NULL;
		return;
	}
	for (unsigned k = 0; k < 5; k++)
		fprintf(f, "outcome %s %llu\n", outcome_names[k], counters.outcome[k]);
	for (unsigned i = 0; i < counters.nreasons; i++)
		fprintf(f, "fallback %llu %s\n", counters.reasons[i].n, counters.reasons[i].reason);
	if (fclose(f) != 0 || rename(tmp, counters.path) != 0)
		err("--counters: %s: %s", counters.path, strerror(errno));
	counters.dirty = false;
}

/* -u, -p, -n, -x: whether the row is wanted.  -p matches the pid and its
 * parent (a service's children), -n the command name or the program's
 * file name (a part of either), -x an exec that did not get all it asked
 * for: no outcome, a failure, a plain run, or a fallback (its own or a
 * library's). */
static bool wanted(const struct row *r)
{
	if (opt.uid >= 0 && r->uid != (uint32_t)opt.uid)
		return false;
	if (opt.pid >= 0 && r->pid != (uint32_t)opt.pid && r->ppid != (uint32_t)opt.pid)
		return false;
	if (opt.name) {
		const char *base = strrchr(r->program, '/');
		if (!strstr(r->comm, opt.name) && !strstr(base ? base + 1 : r->program, opt.name))
			return false;
	}
	if (opt.failed) {
		bool bad = strcmp(r->outcome, "loaded") != 0 || !strncmp(r->note, "fallback:", 9) ||
			   (r->libs && r->libs->why[0]);
		for (unsigned i = 0; !bad && r->libs && i < r->libs->n; i++)
			bad = r->libs->v[i].p.has_reason;
		if (!bad)
			return false;
	}
	return true;
}

/* A program path as typed ("./server", "bin/x") made absolute with the
 * process's working directory, while it still runs; else as it was. */
static const char *absolute(const struct row *r, char *buf, size_t n)
{
	char link[64], cwd[PATH_MAX];
	ssize_t len;

	if (r->program[0] == '/' || !strchr(r->program, '/'))
		return r->program;
	snprintf(link, sizeof(link), "/proc/%u/cwd", r->pid);
	len = readlink(link, cwd, sizeof(cwd) - 1);
	if (len <= 0)
		return r->program;
	cwd[len] = 0;
	const char *rel = r->program;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	snprintf(buf, n, "%s%s%s", cwd, len > 1 ? "/" : "", rel);
	return buf;
}

static void emit(const struct row *r)
{
	uint64_t real_ns = r->boot_ns + (uint64_t)realtime_minus_boot_ns;
	time_t sec = (time_t)(real_ns / 1000000000ull);
	struct tm tm;
	bool known_strategy = r->strategy >= 0 && r->strategy <= ST_OFF;
	const char *strategy = known_strategy ? strategy_name((uint32_t)r->strategy) : NULL;
	const char *used = used_mechanism(r);
	uint64_t small = r->sizes && r->text > r->huge ? r->text - r->huge : 0;
	char abs[PATH_MAX + TX_PATH_BYTES];
	const char *program = absolute(r, abs, sizeof(abs));

	count_row(r);
	if (!wanted(r))
		return;
	nrows++;
	if (opt.json) {
		char iso[64];
		gmtime_r(&sec, &tm);
		strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
		printf("{\"time\":\"%s.%06lluZ\",\"time_ns\":%llu,\"pid\":%u,\"ppid\":%u,\"uid\":%u,\"comm\":", iso,
		       (unsigned long long)(real_ns % 1000000000ull / 1000), (unsigned long long)real_ns, r->pid,
		       r->ppid, r->uid);
		json_str(stdout, r->comm);
		fputs(",\"program\":", stdout);
		json_str(stdout, program);
		fputs(",\"via\":", stdout);
		json_str(stdout, r->via);
		fputs(",\"outcome\":", stdout);
		json_str(stdout, r->outcome);
		fputs(",\"strategy\":", stdout);
		if (strategy)
			json_str(stdout, strategy);
		else
			fputs("null", stdout);
		fputs(",\"used\":", stdout);
		if (used)
			json_str(stdout, used);
		else
			fputs("null", stdout);
		json_u64(stdout, "text_bytes", r->sizes, r->text);
		json_u64(stdout, "huge_bytes", r->sizes, r->huge);
		json_u64(stdout, "small_bytes", r->sizes, small);
		json_u64(stdout, "file_bytes", r->sizes, r->file);
		json_u64(stdout, "thp_bytes", r->sizes, r->thp);
		json_u64(stdout, "hugetlb_bytes", r->sizes, r->hugetlb);
		json_u64(stdout, "cache_bytes", r->sizes, r->cache);
		json_u64(stdout, "loader_us", r->sizes, r->elapsed_ns / 1000);
		fputs(",\"note\":", stdout);
		if (r->note[0])
			json_str(stdout, r->note);
		else
			fputs("null", stdout);
		json_libs(r);
		fputs("}\n", stdout);
	} else {
		char t[16], strat[32], huge[32], small4k[32], ms[32], note[sizeof(r->note) + 160];
		localtime_r(&sec, &tm);
		strftime(t, sizeof(t), "%H:%M:%S", &tm);
		strategy_column(strat, sizeof(strat), r->strategy, used);
		fmt_mib(huge, sizeof(huge), r->sizes, r->huge);
		fmt_mib(small4k, sizeof(small4k), r->sizes, small);
		if (r->sizes)
			snprintf(ms, sizeof(ms), "%.1fms", (double)r->elapsed_ns / 1e6);
		else
			snprintf(ms, sizeof(ms), "-");
		snprintf(note, sizeof(note), "%s%s%s", r->note,
			 r->note[0] && r->libs && r->libs->why[0] ? "; " : "", r->libs ? r->libs->why : "");
		table_line(t, r, r->via, program, strat, huge, small4k, ms, note);
		table_libs(r);
	}
	if (ferror(stdout))
		stop = 1; /* e.g. a closed pipe */
}

/* ---- joining ---- */

/* PENDING: a loader exec, its outcome to come; AWAIT_LIBS: loaded, its
 * libraries to come; AFTER_DIRECT: the loader's own execve to come. */
enum slot_state { FREE, PENDING, AFTER_DIRECT, AWAIT_LIBS };

struct slot {
	enum slot_state state;
	uint32_t pid;
	uint64_t mono_ns; /* when it was stored, for expiry */
	struct tx_exec ex;   /* PENDING */
	struct tx_loaded ld; /* AWAIT_LIBS: the outcome, and when the exec was */
	bool have_exec;
	uint64_t exec_boot_ns;
	struct libs_seen libs;
};

static struct slot slots[SLOTS];

static struct slot *find(uint32_t pid, bool create)
{
	unsigned h = (pid * 2654435761u) & (SLOTS - 1);
	struct slot *empty = NULL;

	for (unsigned i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[(h + i) & (SLOTS - 1)];
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
static void drop_slot(struct slot *s)
{
	unsigned i = (unsigned)(s - slots);
	slots[i].state = FREE;
	for (unsigned j = (i + 1) & (SLOTS - 1); slots[j].state != FREE; j = (j + 1) & (SLOTS - 1)) {
		unsigned home = (slots[j].pid * 2654435761u) & (SLOTS - 1);
		/* Move j to i if its home is not cyclically within (i, j]. */
		bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!between) {
			slots[i] = slots[j];
			slots[j].state = FREE;
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
static void emit_exec(const struct tx_exec *ex, const char *outcome, const char *note)
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
	emit(&r);
}

/* The row of a loaded exec: ld the outcome, exec_boot_ns when the exec
 * was (if seen), libs its libraries (NULL without the stage). */
static void emit_loaded(const struct tx_loaded *e, bool have_exec, uint64_t exec_boot_ns,
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
	emit(&r);
}

/* Emits an exec held for its libraries, saying why (if not complete), and
 * frees its slot. */
static void emit_held(struct slot *s, const char *why)
{
	struct libs_seen *l = &s->libs;

	if (!l->done && why)
		snprintf(l->why, sizeof(l->why), "%s", why);
	else if (l->done && l->seen < l->count)
		snprintf(l->why, sizeof(l->why), "libraries: %llu of %llu records dropped",
			 (unsigned long long)(l->count - l->seen), (unsigned long long)l->count);
	else if (l->seen > l->n)
		snprintf(l->why, sizeof(l->why), "libraries: %u more not shown", l->seen - l->n);
	emit_loaded(&s->ld, s->have_exec, s->exec_boot_ns, l);
	free(l->v);
	memset(l, 0, sizeof(*l));
	drop_slot(s);
}

static void flush_pending(bool all)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	for (unsigned i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[i];
		if (s->state == FREE || (!all && now - s->mono_ns < PENDING_MAX_NS))
			continue;
		if (s->state == PENDING)
			emit_exec(&s->ex, "unknown", "no outcome seen");
		if (s->state == AWAIT_LIBS)
			emit_held(s, all ? "libraries: tracing stopped before their end" : "libraries: no end seen");
		else
			drop_slot(s);
		i--; /* backward shift may have moved another entry here */
	}
}

static void on_exec(const struct tx_exec *ex)
{
	struct slot *s = find(ex->t.pid, ex->flags & TX_EXEC_LOADER);

	if (s && s->state == AWAIT_LIBS) {
		/* A library's constructor exec'd: the hook never ran. */
		emit_held(s, "libraries: not placed (exec'd first)");
		s = find(ex->t.pid, ex->flags & TX_EXEC_LOADER);
	}
	if (s && s->state == PENDING) {
		/* The last loader exec in this pid never said what it did. */
		emit_exec(&s->ex, "unknown", "no outcome seen");
		s->state = FREE;
		drop_slot(s);
		s = find(ex->t.pid, ex->flags & TX_EXEC_LOADER);
	} else if (s && s->state == AFTER_DIRECT) {
		/* The loader's own plain execve of the program: reported
		 * already, as "direct: REASON". */
		drop_slot(s);
		if (!(ex->flags & TX_EXEC_LOADER))
			return;
		s = find(ex->t.pid, true);
	}
	if (!(ex->flags & TX_EXEC_LOADER)) {
		/* Without --all the kernel side sends these only to end a wait. */
		if (opt.all)
			emit_exec(ex, "none", "not through tiexec");
		return;
	}
	if (!usdt_on) {
		emit_exec(ex, "unknown", "");
		return;
	}
	if (!s) { /* table full */
		emit_exec(ex, "unknown", "no outcome seen");
		return;
	}
	s->state = PENDING;
	s->mono_ns = clock_ns(CLOCK_MONOTONIC);
	s->ex = *ex;
}

/* Takes the pending exec of pid, if any, into r (time, via). */
static bool take_exec(struct row *r, uint32_t pid, struct tx_exec *ex)
{
	struct slot *s = find(pid, false);
	if (!s || s->state != PENDING)
		return false;
	*ex = s->ex;
	drop_slot(s);
	r->boot_ns = ex->t.boot_ns;
	r->via = via_of_exec(ex);
	return true;
}

static void on_loaded(const struct tx_loaded *e)
{
	struct row r;
	struct tx_exec ex;
	struct slot *s = find(e->t.pid, false);

	if (s && s->state == AWAIT_LIBS)
		emit_held(s, "libraries: no end seen");
	bool have_exec = take_exec(&r, e->t.pid, &ex);
	if (!(e->mode & TX_MODE_LIBS) || !libs_on) {
		emit_loaded(e, have_exec, ex.t.boot_ns, NULL);
		return;
	}
	s = find(e->t.pid, true);
	if (!s) { /* table full */
		struct libs_seen none = { .why = "libraries: not followed (too many execs at once)" };
		emit_loaded(e, have_exec, ex.t.boot_ns, &none);
		return;
	}
	s->state = AWAIT_LIBS;
	s->mono_ns = clock_ns(CLOCK_MONOTONIC);
	s->ld = *e;
	s->have_exec = have_exec;
	s->exec_boot_ns = have_exec ? ex.t.boot_ns : 0;
	memset(&s->libs, 0, sizeof(s->libs));
}

static void on_lib(const struct tx_lib *e)
{
	struct slot *s = find(e->t.pid, false);
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

static void on_libs(const struct tx_libs *e)
{
	struct slot *s = find(e->t.pid, false);

	if (!s || s->state != AWAIT_LIBS)
		return;
	s->libs.done = true;
	s->libs.count = e->count;
	s->libs.elapsed_ns = e->elapsed_ns;
	emit_held(s, NULL);
}

static void on_direct(const struct tx_direct *e)
{
	struct row r;
	struct tx_exec ex;
	char path[TX_PATH_BYTES + 1];

	row_from_task(&r, &e->t);
	r.via = "command-line";
	take_exec(&r, e->t.pid, &ex);
	snprintf(path, sizeof(path), "%.*s", TX_PATH_BYTES, e->path);
	r.program = path;
	r.outcome = "direct";
	snprintf(r.note, sizeof(r.note), "direct: %.*s", TX_REASON_BYTES, e->reason);
	emit(&r);
	if (opt.all) {
		struct slot *s = find(e->t.pid, true);
		if (s) {
			s->state = AFTER_DIRECT;
			s->mono_ns = clock_ns(CLOCK_MONOTONIC);
		}
	}
}

static void on_exit_event(const struct tx_exit *e)
{
	struct slot *s = find(e->t.pid, false);
	char note[96];
	int code = e->exit_code;

	if (s && s->state == AWAIT_LIBS) {
		/* ld.so failed (a library not found: status 127), or a
		 * constructor ended the process. */
		if (code & 0x7f)
			snprintf(note, sizeof(note), "libraries: not placed (killed by signal %d first)", code & 0x7f);
		else
			snprintf(note, sizeof(note), "libraries: not placed (exit status %d first)", (code >> 8) & 0xff);
		emit_held(s, note);
		return;
	}
	if (!s || s->state != PENDING)
		return;
	if (code & 0x7f)
		snprintf(note, sizeof(note), "loader failed: killed by signal %d", code & 0x7f);
	else
		snprintf(note, sizeof(note), "loader failed: exit status %d", (code >> 8) & 0xff);
	struct tx_exec ex = s->ex;
	drop_slot(s);
	emit_exec(&ex, "failed", note);
}

static int handle(void *ctx, void *data, size_t size)
{
	const struct tx_task *t = data;

	if (size < sizeof(*t))
		return 0;
	switch (t->kind) {
	case TX_EV_EXEC:
		if (size >= sizeof(struct tx_exec))
			on_exec(data);
		break;
	case TX_EV_LOADED:
		if (size >= sizeof(struct tx_loaded))
			on_loaded(data);
		break;
	case TX_EV_DIRECT:
		if (size >= sizeof(struct tx_direct))
			on_direct(data);
		break;
	case TX_EV_EXIT:
		if (size >= sizeof(struct tx_exit))
			on_exit_event(data);
		break;
	case TX_EV_LIB:
		if (size >= sizeof(struct tx_lib))
			on_lib(data);
		break;
	case TX_EV_LIBS:
		if (size >= sizeof(struct tx_libs))
			on_libs(data);
		break;
	default:
		break;
	}
	return 0;
}

/* ---- setup ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [--json] [--all] [--duration SECONDS] [--loader PATH]\n"
		"                    [--buffer-mib N] [--tracepoint auto|btf|classic] [-v]\n"
		"                    [-u UID|USER] [-p PID] [-n NAME] [-x]\n"
		"Shows the programs started through tiexec and what the loader did.\n"
		"  --json              one JSON object per line (and a final {\"dropped\":N})\n"
		"  --all               also execs that did not go through tiexec\n"
		"  -u, --uid UID|USER  only execs by this user\n"
		"  -p, --pid PID       only execs by this process or its children\n"
		"  -n, --name NAME     only programs whose name or command contains NAME\n"
		"  -x, --failed        only execs that fell back, ran plainly or failed\n"
		"  --counters FILE     keep starts by outcome and fallbacks by reason in FILE\n"
		"                      (for tiexec-stat --prometheus)\n"
		"  --duration SECONDS  stop after SECONDS (default: at SIGINT or SIGTERM)\n"
		"  --loader PATH       the loader to watch (default " DEFAULT_LOADER ",\n"
		"                      else tiexec in PATH)\n"
		"  --buffer-mib N      ring buffer size, a power of two (default 4)\n"
		"  --tracepoint MODE   sched_process_exec flavour (default auto: BTF, else classic)\n"
		"  -v, --verbose       libbpf's messages\n"
		"      --version       the version\n"
		"Needs root (or CAP_BPF and CAP_PERFMON) and a kernel with BTF.\n");
}

static uint64_t read_dropped(struct tiexec_trace_bpf *skel)
{
	uint32_t k = 0;
	uint64_t v = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.dropped), &k, &v) != 0)
		return 0;
	return v;
}

static struct tiexec_trace_bpf *open_and_load(bool btf)
{
	struct tiexec_trace_bpf *skel = tiexec_trace_bpf__open();
	int e;

	if (!skel) {
		err("cannot open the eBPF object: %s", strerror(errno));
		return NULL;
	}
	skel->rodata->trace_all_execs = opt.all;
	bpf_map__set_max_entries(skel->maps.events, opt.buffer_mib << 20);
	bpf_program__set_autoload(skel->progs.exec_btf, btf);
	bpf_program__set_autoload(skel->progs.exit_btf, btf);
	bpf_program__set_autoload(skel->progs.exec_classic, !btf);
	bpf_program__set_autoload(skel->progs.exit_classic, !btf);
	e = tiexec_trace_bpf__load(skel);
	if (e) {
		if (opt.tp != TP_AUTO || !btf)
			err("cannot load the eBPF programs (%s tracepoints): %s%s", btf ? "BTF" : "classic",
			    strerror(-e), opt.verbose ? "" : " (-v shows libbpf's messages)");
		tiexec_trace_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* The loader files followed: the path as given (checked every second),
 * the identities given to the kernel side, and the probes' links. */
struct watch {
	char path[PATH_MAX]; /* as given, or found (find_loader) */
	dev_t dev;
	ino_t ino;           /* of the newest file */
	unsigned nfiles;     /* files followed so far */
	bool gone_said;
	struct bpf_link *links[TX_LOADERS_MAX][4];
};

/* The USDT probes of the loader file at path, links into l[4].  0 when
 * tiexec:loaded is attached (the others are optional); -1 with a line
 * on stderr. */
static int attach_usdt(struct tiexec_trace_bpf *skel, const char *path, struct bpf_link *l[4])
{
	l[0] = bpf_program__attach_usdt(skel->progs.loaded, -1, path, "tiexec", "loaded", NULL);
	if (!l[0]) {
		int e = errno;
		err("cannot attach to the tiexec:loaded probe of %s (%s%s): reporting execs without their "
		    "outcome",
		    path, strerror(e),
		    e == ENOENT		   ? "; built without <sys/sdt.h>?"
		    : e == EACCES || e == EPERM ? "; uprobes need CAP_SYS_ADMIN"
						: "");
		return -1;
	}
	/* tiexec:direct is optional: without it those execs show as "no outcome seen". */
	l[1] = bpf_program__attach_usdt(skel->progs.direct, -1, path, "tiexec", "direct", NULL);
	if (!l[1])
		err("cannot attach to the tiexec:direct probe of %s (%s)", path, strerror(errno));
	/* tiexec:lib and tiexec:libs: a loader from before the libraries stage
	 * has neither, and its loaded probe never announces them. */
	l[2] = bpf_program__attach_usdt(skel->progs.lib, -1, path, "tiexec", "lib", NULL);
	l[3] = l[2] ? bpf_program__attach_usdt(skel->progs.libs, -1, path, "tiexec", "libs", NULL) : NULL;
	if (l[2] && l[3]) {
		libs_on = true;
	} else {
		int e = errno;
		bpf_link__destroy(l[2]);
		l[2] = NULL;
		if (e != ENOENT)
			err("cannot attach to the tiexec:lib and tiexec:libs probes of %s (%s): reporting execs "
			    "without their libraries",
			    path, strerror(e));
	}
	return 0;
}

/* Follows the loader file st (the newest one at w->path): its identity to
 * the kernel side, in the slot of the oldest when all are taken, and its
 * probes attached.  Returns whether the probes are. */
static bool follow(struct tiexec_trace_bpf *skel, struct watch *w, const struct stat *st)
{
	unsigned k = w->nfiles++ % TX_LOADERS_MAX;
	char real[PATH_MAX];

	for (unsigned i = 0; i < 4; i++) {
		bpf_link__destroy(w->links[k][i]);
		w->links[k][i] = NULL;
	}
	w->dev = st->st_dev;
	w->ino = st->st_ino;
	skel->bss->loaders[k].ino = st->st_ino;
	skel->bss->loaders[k].kdev = (major(st->st_dev) << 20) | minor(st->st_dev);
	return attach_usdt(skel, realpath(w->path, real) ? real : w->path, w->links[k]) == 0;
}

/* Once a second: a new file at the loader's path (a package upgrade) is
 * followed too, and said so; a missing one is said once. */
static void watch_check(struct tiexec_trace_bpf *skel, struct watch *w)
{
	struct stat st;

	if (stat(w->path, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (!w->gone_said)
			err("the loader %s is gone: following the files it had until one is back", w->path);
		w->gone_said = true;
		return;
	}
	w->gone_said = false;
	if (st.st_dev == w->dev && st.st_ino == w->ino)
		return;
	bool probes = follow(skel, w, &st);
	err("the loader %s is a new file (inode %llu, was a reinstall or an upgrade?): following it too%s",
	    w->path, (unsigned long long)st.st_ino, probes ? "" : ", without its probes");
}

static void watch_close(struct watch *w)
{
	for (unsigned k = 0; k < TX_LOADERS_MAX; k++)
		for (unsigned i = 0; i < 4; i++)
			bpf_link__destroy(w->links[k][i]);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		{ "duration", required_argument, NULL, 'd' },
		{ "loader", required_argument, NULL, 'l' },
		{ "buffer-mib", required_argument, NULL, 'b' },
		{ "tracepoint", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "uid", required_argument, NULL, 'u' },
		{ "pid", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "failed", no_argument, NULL, 'x' },
		{ "counters", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct watch w;
	struct tiexec_trace_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct stat st;
	char *end;
	int c, status = 1;

	while ((c = getopt_long(argc, argv, "vhu:p:n:x", lopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.json = true;
			break;
		case 'a':
			opt.all = true;
			break;
		case 'd':
			errno = 0;
			opt.duration_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(opt.duration_s > 0)) {
				err("--duration: not a positive number of seconds: %s", optarg);
				return 2;
			}
			break;
		case 'l':
			opt.loader = optarg;
			break;
		case 'b': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (end == optarg || *end || v == 0 || v > 1024 || (v & (v - 1))) {
				err("--buffer-mib: not a power of two from 1 to 1024: %s", optarg);
				return 2;
			}
			opt.buffer_mib = (unsigned)v;
			break;
		}
		case 't':
			if (!strcmp(optarg, "auto"))
				opt.tp = TP_AUTO;
			else if (!strcmp(optarg, "btf"))
				opt.tp = TP_BTF;
			else if (!strcmp(optarg, "classic"))
				opt.tp = TP_CLASSIC;
			else {
				err("--tracepoint: auto, btf or classic, not %s", optarg);
				return 2;
			}
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'u': {
			struct passwd *pw = getpwnam(optarg);
			unsigned long v = strtoul(optarg, &end, 10);
			if (pw)
				opt.uid = (long)pw->pw_uid;
			else if (end != optarg && !*end && v <= UINT32_MAX)
				opt.uid = (long)v;
			else {
				err("--uid: not a user name or number: %s", optarg);
				return 2;
			}
			break;
		}
		case 'p': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (end == optarg || *end || v == 0 || v > UINT32_MAX) {
				err("--pid: not a process ID: %s", optarg);
				return 2;
			}
			opt.pid = (long)v;
			break;
		}
		case 'n':
			opt.name = optarg;
			break;
		case 'x':
			opt.failed = true;
			break;
		case 'C':
			counters.path = optarg;
			counters.dirty = true;
			break;
		case 'V':
			printf(PROG " %s\n", TIEXEC_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		err("unexpected argument: %s", argv[optind]);
		usage(stderr);
		return 2;
	}

	if (!privileged()) {
		err("needs root (or CAP_BPF and CAP_PERFMON) to load eBPF programs");
		return 1;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		err("the kernel has no BTF (/sys/kernel/btf/vmlinux is missing): needs a kernel built with "
		    "CONFIG_DEBUG_INFO_BTF");
		return 1;
	}
	if (find_loader(&st, w.path, sizeof(w.path)) != 0)
		return 1;

	libbpf_set_print(libbpf_print);
	if (opt.tp != TP_CLASSIC)
		skel = open_and_load(true);
	if (!skel && opt.tp != TP_BTF) {
		if (opt.tp == TP_AUTO && opt.verbose)
			err("BTF tracepoints unavailable: trying the classic ones");
		skel = open_and_load(false);
	}
	if (!skel)
		return 1;

	/* The loader's identity before the exec tracepoint, so that no exec
	 * of it goes unseen; its probes with it. */
	usdt_on = follow(skel, &w, &st);
	skel->bss->usdt_attached = usdt_on;
	skel->bss->libs_attached = libs_on;

	struct bpf_program *exec_p = skel->progs.exec_btf, *exit_p = skel->progs.exit_btf;
	if (!bpf_program__autoload(exec_p)) {
		exec_p = skel->progs.exec_classic;
		exit_p = skel->progs.exit_classic;
	}
	skel->links.exec_btf = bpf_program__attach(exec_p);
	if (!skel->links.exec_btf) {
		int e = errno;
		bool classic = exec_p == skel->progs.exec_classic;
		err("cannot attach to sched_process_exec: %s%s", strerror(e),
		    classic && e == ENOENT && access("/sys/kernel/tracing/events", F_OK) != 0 &&
				    access("/sys/kernel/debug/tracing/events", F_OK) != 0
			    ? " (classic tracepoints need tracefs: mount -t tracefs tracefs /sys/kernel/tracing)"
			    : "");
		goto out;
	}
	skel->links.exit_btf = bpf_program__attach(exit_p);
	if (!skel->links.exit_btf) {
		err("cannot attach to sched_process_exit: %s", strerror(errno));
		goto out;
	}

	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), handle, NULL, NULL);
	if (!rb) {
		err("cannot set up the ring buffer: %s", strerror(errno));
		goto out;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);

	realtime_minus_boot_ns = (int64_t)(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME));
	setvbuf(stdout, NULL, _IOLBF, 0);
	print_header();
	fflush(stdout);
	err("tracing (loader %s, dev %u:%u, inode %llu%s)", loader_path, major(st.st_dev), minor(st.st_dev),
	    (unsigned long long)st.st_ino, usdt_on ? "" : ", no USDT");

	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), last_check = t0, drops_seen = 0;
	uint64_t limit = opt.duration_s > 0 ? (uint64_t)(opt.duration_s * 1e9) : 0;
	while (!stop) {
		int n = ring_buffer__poll(rb, 100);
		if (n < 0 && n != -EINTR) {
			err("reading the ring buffer: %s", strerror(-n));
			goto out;
		}
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		if (limit && now - t0 >= limit)
			break;
		if (now - last_check >= 1000000000ull) {
			last_check = now;
			watch_check(skel, &w);
			flush_pending(false);
			counters_write();
			uint64_t d = read_dropped(skel);
			if (d != drops_seen) {
				err("%llu events dropped so far (ring buffer full: see --buffer-mib)",
				    (unsigned long long)d);
				drops_seen = d;
			}
		}
	}
	ring_buffer__consume(rb);
	flush_pending(true);
	counters_write();
	uint64_t d = read_dropped(skel);
	if (opt.json)
		printf("{\"dropped\":%llu}\n", (unsigned long long)d);
	fflush(stdout);
	err("%llu events, %llu dropped", nrows, (unsigned long long)d);
	status = 0;
out:
	ring_buffer__free(rb);
	watch_close(&w);
	tiexec_trace_bpf__destroy(skel);
	return status;
}
