/* tiexec-trace's user-space side, by concern (libbpf-tools' layout):
 *   tiexec-trace.c   main: the options, the loop
 *   trace-attach.c   privileges, the loader file, loading and attaching
 *                    the eBPF programs, following the loader across upgrades
 *   trace-join.c     joining the kernel's events by pid into one row per exec
 *   trace-out.c      a row as a table line or a JSON object; messages
 *   trace-counters.c --counters FILE
 * All state is one struct trace, made by main and passed down. */
#ifndef TRACE_H
#define TRACE_H

#include <bpf/libbpf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "tiexec-trace.h"

#define PROG "tiexec-trace"
#define DEFAULT_LOADER "/usr/libexec/tiexec/tiexec"
/* A loader exec without an outcome after this long is reported as such. */
#define PENDING_MAX_NS (5ull * 1000000000ull)
#define SLOTS 8192 /* power of two */
#define LIBS_KEPT 64 /* libraries shown per exec; more are counted */

enum tp_mode { TP_AUTO, TP_BTF, TP_CLASSIC };

struct trace_opts {
	bool json, all, verbose;
	double duration_s; /* 0: until a signal */
	const char *loader;
	unsigned buffer_mib;
	enum tp_mode tp;
	/* Filters: -u, -p, -n, -x. */
	long uid, pid;     /* -1: any */
	const char *name;  /* NULL: any */
	bool failed;
};

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

/* --counters FILE: starts by outcome and fallbacks by reason, of every
 * row (the filters apply to the output only), written to FILE each second
 * they changed: "outcome NAME COUNT" and "fallback COUNT REASON" lines,
 * which tiexec-stat --prometheus turns into counters. */
#define REASONS_MAX 64
struct counters {
	const char *path;
	bool dirty;
	unsigned long long outcome[5]; /* loaded, direct, failed, unknown, other */
	unsigned nreasons;
	struct {
		char reason[TX_REASON_BYTES + 1];
		unsigned long long n;
	} reasons[REASONS_MAX];
};

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

struct trace {
	struct trace_opts opt;
	struct counters counters;
	bool usdt_on, libs_on;          /* the loader's probes are attached */
	char loader_path[PATH_MAX];     /* the loader, resolved */
	int64_t realtime_minus_boot_ns; /* for the rows' times */
	unsigned long long nrows;       /* rows printed */
	bool output_failed;             /* stdout could not be written (a closed pipe) */
	struct watch watch;
	struct slot slots[SLOTS];
};

/* trace-out.c */
__attribute__((format(printf, 1, 2))) void err(const char *fmt, ...);
uint64_t clock_ns(clockid_t c);
void print_header(const struct trace *t);
bool wanted(const struct trace_opts *o, const struct row *r);
void emit(struct trace *t, const struct row *r);

/* trace-counters.c */
void count_row(struct counters *c, const struct row *r);
void counters_write(struct counters *c);

/* trace-join.c */
int handle(void *ctx, void *data, size_t size); /* ctx: struct trace * */
void flush_pending(struct trace *t, bool all);

/* trace-attach.c */
bool privileged(void);
int find_loader(struct trace *t, struct stat *st);
struct tiexec_trace_bpf *open_and_load(const struct trace_opts *o, bool btf);
bool follow(struct trace *t, struct tiexec_trace_bpf *skel, const struct stat *st);
void watch_check(struct trace *t, struct tiexec_trace_bpf *skel);
void watch_close(struct watch *w);
uint64_t read_dropped(struct tiexec_trace_bpf *skel);
void libbpf_messages(bool verbose);

#endif
