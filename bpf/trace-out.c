/* Rows as table lines or JSON objects, and tiexec-trace's messages. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "mark.h"
#include "policy.h"
#include "trace.h"

void err(const char *fmt, ...)
{
	va_list ap;
	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

/* What the loader's plan did for a library (interp/probes.h), or NULL. */
static const char *planned_name(uint32_t planned)
{
	return planned == TX_PLAN_PLACED   ? "placed before ld.so"
	       : planned == TX_PLAN_MISSED ? "missed"
	       : planned == TX_PLAN_WINDOW ? "a 2 MiB window of its own"
					   : NULL;
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
		fputs(",\"planned\":", stdout);
		if (planned_name(b->planned))
			json_str(stdout, planned_name(b->planned));
		else
			fputs("null", stdout);
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
		else if (planned_name(b->planned))
			snprintf(note, sizeof(note), "planned: %s", planned_name(b->planned));
		table_line("", r, "", prog, strat, huge, small4k, "-", note);
	}
}

void print_header(const struct trace *t)
{
	if (!t->opt.json)
		printf(TABLE_FMT "\n", "TIME", "PID", "UID", "VIA", "STRATEGY", "HUGE", "4K", "LOADER",
		       "PROGRAM (NOTE)");
}

/* -u, -p, -n, -x: whether the row is wanted.  -p matches the pid and its
 * parent (a service's children), -n the command name or the program's
 * file name (a part of either), -x an exec that did not get all it asked
 * for: no outcome, a failure, a plain run, or a fallback (its own or a
 * library's). */
bool wanted(const struct trace_opts *o, const struct row *r)
{
	if (o->uid >= 0 && r->uid != (uint32_t)o->uid)
		return false;
	if (o->pid >= 0 && r->pid != (uint32_t)o->pid && r->ppid != (uint32_t)o->pid)
		return false;
	if (o->name) {
		const char *base = strrchr(r->program, '/');
		if (!strstr(r->comm, o->name) && !strstr(base ? base + 1 : r->program, o->name))
			return false;
	}
	if (o->failed) {
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

void emit(struct trace *t, const struct row *r)
{
	uint64_t real_ns = r->boot_ns + (uint64_t)t->realtime_minus_boot_ns;
	time_t sec = (time_t)(real_ns / 1000000000ull);
	struct tm tm;
	bool known_strategy = r->strategy >= 0 && r->strategy <= ST_OFF;
	const char *strategy = known_strategy ? strategy_name((uint32_t)r->strategy) : NULL;
	const char *used = used_mechanism(r);
	uint64_t small = r->sizes && r->text > r->huge ? r->text - r->huge : 0;
	char abs[PATH_MAX + TX_PATH_BYTES];
	const char *program = absolute(r, abs, sizeof(abs));

	if (!wanted(&t->opt, r))
		return;
	t->nrows++;
	if (t->opt.json) {
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
		char hms[16], strat[32], huge[32], small4k[32], ms[32], note[sizeof(r->note) + 160];
		localtime_r(&sec, &tm);
		strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
		strategy_column(strat, sizeof(strat), r->strategy, used);
		fmt_mib(huge, sizeof(huge), r->sizes, r->huge);
		fmt_mib(small4k, sizeof(small4k), r->sizes, small);
		if (r->sizes)
			snprintf(ms, sizeof(ms), "%.1fms", (double)r->elapsed_ns / 1e6);
		else
			snprintf(ms, sizeof(ms), "-");
		snprintf(note, sizeof(note), "%s%s%s", r->note,
			 r->note[0] && r->libs && r->libs->why[0] ? "; " : "", r->libs ? r->libs->why : "");
		table_line(hms, r, r->via, program, strat, huge, small4k, ms, note);
		table_libs(r);
	}
	if (ferror(stdout))
		t->output_failed = true; /* e.g. a closed pipe */
}
