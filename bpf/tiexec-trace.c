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
 * The files, by concern, are listed in trace.h.
 *
 * Exit status: 0 done (--duration elapsed, SIGINT, SIGTERM); 1 cannot trace
 * (privileges, no BTF, no loader, the kernel refused the programs); 2 usage
 * error. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "trace.h"
#include "tiexec-trace.skel.h"

/* Set by the signal handler: the one state outside struct trace. */
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

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

/* One option (getopt_long's c, with optarg) into t.  -1 to go on, or the
 * exit status: 0 for --help and --version, 2 for a bad value. */
static int option(int c, const char *arg, struct trace *t)
{
	struct trace_opts *o = &t->opt;
	char *end;
	unsigned long v;

	switch (c) {
	case 'j': o->json = true; return -1;
	case 'a': o->all = true; return -1;
	case 'l': o->loader = arg; return -1;
	case 'v': o->verbose = true; return -1;
	case 'n': o->name = arg; return -1;
	case 'x': o->failed = true; return -1;
	case 'C':
		t->counters.path = arg;
		t->counters.dirty = true;
		return -1;
	case 'd':
		errno = 0;
		o->duration_s = strtod(arg, &end);
		if (!errno && end != arg && !*end && o->duration_s > 0)
			return -1;
		err("--duration: not a positive number of seconds: %s", arg);
		return 2;
	case 'b':
		v = strtoul(arg, &end, 10);
		if (end != arg && !*end && v && v <= 1024 && !(v & (v - 1))) {
			o->buffer_mib = (unsigned)v;
			return -1;
		}
		err("--buffer-mib: not a power of two from 1 to 1024: %s", arg);
		return 2;
	case 't': {
		int m = !strcmp(arg, "auto") ? TP_AUTO : !strcmp(arg, "btf") ? TP_BTF : !strcmp(arg, "classic") ? TP_CLASSIC : -1;
		if (m >= 0) {
			o->tp = (enum tp_mode)m;
			return -1;
		}
		err("--tracepoint: auto, btf or classic, not %s", arg);
		return 2;
	}
	case 'u': {
		struct passwd *pw = getpwnam(arg);
		v = strtoul(arg, &end, 10);
		if (pw || (end != arg && !*end && v <= UINT32_MAX)) {
			o->uid = pw ? (long)pw->pw_uid : (long)v;
			return -1;
		}
		err("--uid: not a user name or number: %s", arg);
		return 2;
	}
	case 'p':
		v = strtoul(arg, &end, 10);
		if (end != arg && !*end && v && v <= UINT32_MAX) {
			o->pid = (long)v;
			return -1;
		}
		err("--pid: not a process ID: %s", arg);
		return 2;
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

/* The command line into t: -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct trace *t)
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
	int c, r;

	while ((c = getopt_long(argc, argv, "vhu:p:n:x", lopts, NULL)) != -1)
		if ((r = option(c, optarg, t)) >= 0)
			return r;
	if (optind < argc) {
		err("unexpected argument: %s", argv[optind]);
		usage(stderr);
		return 2;
	}
	return -1;
}

/* Whether this machine lets us trace at all: privileges, BTF. */
static int can_trace(void)
{
	if (!privileged()) {
		err("needs root (or CAP_BPF and CAP_PERFMON) to load eBPF programs");
		return 0;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		err("the kernel has no BTF (/sys/kernel/btf/vmlinux is missing): needs a kernel built with "
		    "CONFIG_DEBUG_INFO_BTF");
		return 0;
	}
	return 1;
}

/* The programs loaded with the tracepoint flavour asked for (auto: BTF,
 * else the classic ones), or NULL. */
static struct tiexec_trace_bpf *load(const struct trace_opts *o)
{
	struct tiexec_trace_bpf *skel = NULL;

	libbpf_messages(o->verbose);
	if (o->tp != TP_CLASSIC)
		skel = open_and_load(o, true);
	if (!skel && o->tp != TP_BTF) {
		if (o->tp == TP_AUTO && o->verbose)
			err("BTF tracepoints unavailable: trying the classic ones");
		skel = open_and_load(o, false);
	}
	return skel;
}

/* sched_process_exec and _exit attached, in the flavour that loaded.
 * 0, or -1 (said). */
static int attach_exec(struct tiexec_trace_bpf *skel)
{
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
		return -1;
	}
	skel->links.exit_btf = bpf_program__attach(exit_p);
	if (!skel->links.exit_btf) {
		err("cannot attach to sched_process_exit: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void on_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
}

/* Events until --duration, a signal or a failed write; once a second the
 * loader's path, held rows, counters and drops.  0, or 1 (said). */
static int run(struct trace *t, struct tiexec_trace_bpf *skel, struct ring_buffer *rb)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), last_check = t0, drops_seen = 0;
	uint64_t limit = t->opt.duration_s > 0 ? (uint64_t)(t->opt.duration_s * 1e9) : 0;

	while (!stop && !t->output_failed) {
		int n = ring_buffer__poll(rb, 100);
		if (n < 0 && n != -EINTR) {
			err("reading the ring buffer: %s", strerror(-n));
			return 1;
		}
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		if (limit && now - t0 >= limit)
			break;
		if (now - last_check < 1000000000ull)
			continue;
		last_check = now;
		watch_check(t, skel);
		flush_pending(t, false);
		counters_write(&t->counters);
		uint64_t d = read_dropped(skel);
		if (d != drops_seen) {
			err("%llu events dropped so far (ring buffer full: see --buffer-mib)", (unsigned long long)d);
			drops_seen = d;
		}
	}
	ring_buffer__consume(rb);
	flush_pending(t, true);
	counters_write(&t->counters);
	uint64_t d = read_dropped(skel);
	if (t->opt.json)
		printf("{\"dropped\":%llu}\n", (unsigned long long)d);
	fflush(stdout);
	err("%llu events, %llu dropped", t->nrows, (unsigned long long)d);
	return 0;
}

int main(int argc, char **argv)
{
	static struct trace t = { .opt = { .buffer_mib = 4, .uid = -1, .pid = -1 } };
	struct tiexec_trace_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct stat st;
	int status = parse_args(argc, argv, &t);

	if (status >= 0)
		return status;
	if (!can_trace() || find_loader(&t, &st) != 0 || !(skel = load(&t.opt)))
		return 1;
	/* The loader's identity before the exec tracepoint, so that no exec
	 * of it goes unseen; its probes with it. */
	t.usdt_on = follow(&t, skel, &st);
	skel->bss->usdt_attached = t.usdt_on;
	skel->bss->libs_attached = t.libs_on;
	status = 1;
	if (attach_exec(skel) != 0)
		goto out;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), handle, &t, NULL);
	if (!rb) {
		err("cannot set up the ring buffer: %s", strerror(errno));
		goto out;
	}
	on_signals();
	t.realtime_minus_boot_ns = (int64_t)(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME));
	setvbuf(stdout, NULL, _IOLBF, 0);
	print_header(&t);
	fflush(stdout);
	err("tracing (loader %s, dev %u:%u, inode %llu%s)", t.loader_path, major(st.st_dev), minor(st.st_dev),
	    (unsigned long long)st.st_ino, t.usdt_on ? "" : ", no USDT");
	status = run(&t, skel, rb);
out:
	ring_buffer__free(rb);
	watch_close(&t.watch);
	tiexec_trace_bpf__destroy(skel);
	return status;
}
