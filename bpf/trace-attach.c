/* What tracing needs before the first event: the privileges, the loader
 * file, the eBPF programs loaded, the loader's USDT probes attached, and
 * the loader's path followed across package upgrades. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "trace.h"
#include "tiexec-trace.skel.h"

/* libbpf's print callback takes no context: the one setting it needs is
 * kept here (libbpf_messages). */
static bool libbpf_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!libbpf_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bool has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* bpf_capable() and perfmon_capable() of the kernel: CAP_SYS_ADMIN or the
 * specific capability. */
bool privileged(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return geteuid() == 0;
	bool admin = has_cap(d, CAP_SYS_ADMIN);
	return (admin || has_cap(d, CAP_BPF)) && (admin || has_cap(d, CAP_PERFMON));
}

/* --loader PATH, else DEFAULT_LOADER, else `tiexec` in PATH: its stat in
 * st, the path as given (to watch) in t->watch.path, resolved in
 * t->loader_path. */
int find_loader(struct trace *t, struct stat *st)
{
	const char *p = t->opt.loader;
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
	if (!realpath(p, t->loader_path)) {
		err("%s: %s", p, strerror(errno));
		return -1;
	}
	snprintf(t->watch.path, sizeof(t->watch.path), "%s", p);
	return 0;
}

uint64_t read_dropped(struct tiexec_trace_bpf *skel)
{
	uint32_t k = 0;
	uint64_t v = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.dropped), &k, &v) != 0)
		return 0;
	return v;
}

struct tiexec_trace_bpf *open_and_load(const struct trace_opts *o, bool btf)
{
	struct tiexec_trace_bpf *skel = tiexec_trace_bpf__open();
	int e;

	if (!skel) {
		err("cannot open the eBPF object: %s", strerror(errno));
		return NULL;
	}
	skel->rodata->trace_all_execs = o->all;
	bpf_map__set_max_entries(skel->maps.events, o->buffer_mib << 20);
	bpf_program__set_autoload(skel->progs.exec_btf, btf);
	bpf_program__set_autoload(skel->progs.exit_btf, btf);
	bpf_program__set_autoload(skel->progs.exec_classic, !btf);
	bpf_program__set_autoload(skel->progs.exit_classic, !btf);
	e = tiexec_trace_bpf__load(skel);
	if (e) {
		if (o->tp != TP_AUTO || !btf)
			err("cannot load the eBPF programs (%s tracepoints): %s%s", btf ? "BTF" : "classic",
			    strerror(-e), o->verbose ? "" : " (-v shows libbpf's messages)");
		tiexec_trace_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* The USDT probes of the loader file at path, links into l[4].  0 when
 * tiexec:loaded is attached (the others are optional); -1 with a line
 * on stderr. */
static int attach_usdt(struct trace *t, struct tiexec_trace_bpf *skel, const char *path, struct bpf_link *l[4])
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
		t->libs_on = true;
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
bool follow(struct trace *t, struct tiexec_trace_bpf *skel, const struct stat *st)
{
	struct watch *w = &t->watch;
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
	return attach_usdt(t, skel, realpath(w->path, real) ? real : w->path, w->links[k]) == 0;
}

/* Once a second: a new file at the loader's path (a package upgrade) is
 * followed too, and said so; a missing one is said once. */
void watch_check(struct trace *t, struct tiexec_trace_bpf *skel)
{
	struct watch *w = &t->watch;
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
	bool probes = follow(t, skel, &st);
	err("the loader %s is a new file (inode %llu, was a reinstall or an upgrade?): following it too%s",
	    w->path, (unsigned long long)st.st_ino, probes ? "" : ", without its probes");
}

void watch_close(struct watch *w)
{
	for (unsigned k = 0; k < TX_LOADERS_MAX; k++)
		for (unsigned i = 0; i < 4; i++)
			bpf_link__destroy(w->links[k][i]);
}

void libbpf_messages(bool verbose)
{
	libbpf_verbose = verbose;
	libbpf_set_print(libbpf_print);
}
