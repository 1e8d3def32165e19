// SPDX-License-Identifier: GPL-2.0
/* tiexec-trace, kernel side.
 *
 * sched_process_exec: every exec whose file is the loader (its inode and
 * device, given by user space before load) is put on the ring buffer, and
 * its pid remembered in `pending`; with trace_all_execs, every other exec
 * too.  The loader's USDT probes tiexec:loaded and tiexec:direct then say
 * what the loader did, in the same pid.  When tiexec:loaded announces the
 * libraries stage (TX_MODE_LIBS), ld.so runs first and tiexec:lib then
 * fires once per library placed or left, tiexec:libs at the end; until then the pid
 * stays in `pending`, as LIBS.  sched_process_exit reports a pending
 * loader that died before saying anything, or before its libraries were
 * placed; an exec of another file by a pid waiting for its libraries is
 * reported even without trace_all_execs, so that user space knows to stop
 * waiting.  User space joins the records by pid.  A record that does not
 * fit in the ring buffer is counted in `dropped`. */
#include "tiexec-trace-kernel.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>

#include "tiexec-trace.h"

char LICENSE[] SEC("license") = "GPL";

/* Tunables, set by user space between open and load. */
const volatile bool trace_all_execs = false;

/* The loader files, by inode and device (kernel encoding): user space adds
 * the new file when a package upgrade replaces the loader, and keeps the
 * old ones, which binfmt_misc (flag F) and running execs may still use. */
struct tx_loader_id loaders[TX_LOADERS_MAX];

/* Set by user space after load, once the USDT probes are attached: only
 * then can a loader exit "before its probe fired", or wait for libs. */
bool usdt_attached = false;
bool libs_attached = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); /* user space may resize it (--buffer-mib) */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} dropped SEC(".maps");

/* Loader pids that exec'd and have not said what they did yet (LOADING),
 * or whose libraries are still to be placed (LIBS). */
enum { LOADING = 1, LIBS = 2 };

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} pending SEC(".maps");

static __always_inline void count_drop(void)
{
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&dropped, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline void *reserve(__u64 size)
{
	void *e = bpf_ringbuf_reserve(&events, size, 0);
	if (!e)
		count_drop();
	return e;
}

static __always_inline void fill_task(struct tx_task *t, __u32 kind)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	t->kind = kind;
	t->pid = bpf_get_current_pid_tgid() >> 32;
	t->ppid = BPF_CORE_READ(task, real_parent, tgid);
	t->uid = (__u32)bpf_get_current_uid_gid();
	t->boot_ns = bpf_ktime_get_boot_ns();
	bpf_get_current_comm(t->comm, sizeof(t->comm));
}

static __always_inline bool is_loader(struct file *f)
{
	struct inode *ino = BPF_CORE_READ(f, f_inode);

	if (!ino)
		return false;
	__u64 i_ino = BPF_CORE_READ(ino, i_ino);
	__u32 s_dev = BPF_CORE_READ(ino, i_sb, s_dev);
	for (int i = 0; i < TX_LOADERS_MAX; i++)
		if (loaders[i].ino && loaders[i].ino == i_ino && loaders[i].kdev == s_dev)
			return true;
	return false;
}

/* file: the exec'd file (for binfmt_misc, the interpreter's); bprm NULL
 * from the classic tracepoint, which passes the filename in ctx instead. */
static __always_inline int on_exec(struct file *file, struct linux_binprm *bprm,
				   struct trace_event_raw_sched_process_exec *classic)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	bool loader = is_loader(file);

	if (!loader) {
		__u8 *st = bpf_map_lookup_elem(&pending, &pid);
		bool waited = st && *st == LIBS;
		bpf_map_delete_elem(&pending, &pid);
		if (!trace_all_execs && !waited)
			return 0;
	}

	struct tx_exec *e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_task(&e->t, TX_EV_EXEC);
	e->flags = loader ? TX_EXEC_LOADER : 0;
	e->args_bytes = 0;
	e->args[0] = 0;
	if (bprm) {
		const char *filename = BPF_CORE_READ(bprm, filename);
		if (BPF_CORE_READ(bprm, interp) != filename)
			e->flags |= TX_EXEC_INTERP;
		bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), filename);
	} else {
		__u32 loc = BPF_CORE_READ(classic, __data_loc_filename);
		e->flags |= TX_EXEC_CLASSIC;
		bpf_probe_read_kernel_str(e->filename, sizeof(e->filename),
					  (char *)classic + (loc & 0xffff));
	}
	if (loader) {
		/* The command line (the new one, already on the new stack): for
		 * `tiexec [options] PROG`, it names the program. */
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		struct mm_struct *mm = BPF_CORE_READ(task, mm);
		unsigned long lo = BPF_CORE_READ(mm, arg_start), hi = BPF_CORE_READ(mm, arg_end);
		__u64 n = hi > lo ? hi - lo : 0;
		if (n > TX_ARGS_BYTES - 1)
			n = TX_ARGS_BYTES - 1;
		n &= TX_ARGS_BYTES - 1; /* a bound the verifier sees (TX_ARGS_BYTES: a power of two) */
		if (n && bpf_probe_read_user(e->args, n, (void *)lo) == 0)
			e->args_bytes = (__u32)n;
		__u8 st = LOADING;
		bpf_map_update_elem(&pending, &pid, &st, BPF_ANY);
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	return on_exec(BPF_CORE_READ(bprm, file), bprm, NULL);
}

/* Without BTF-enabled tracepoints: the new mm's exe_file is bprm->file. */
SEC("tracepoint/sched/sched_process_exec")
int exec_classic(struct trace_event_raw_sched_process_exec *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	return on_exec(BPF_CORE_READ(task, mm, exe_file), NULL, ctx);
}

static __always_inline int on_exit(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;

	if ((__u32)id != pid || !usdt_attached) /* not the thread group leader */
		return 0;
	if (!bpf_map_lookup_elem(&pending, &pid))
		return 0;
	bpf_map_delete_elem(&pending, &pid);
	struct tx_exit *e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_task(&e->t, TX_EV_EXIT);
	e->exit_code = BPF_CORE_READ(task, exit_code);
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_btf, struct task_struct *p)
{
	return on_exit();
}

SEC("tracepoint/sched/sched_process_exit")
int exit_classic(void *ctx)
{
	return on_exit();
}

static __always_inline void fill_placed(struct tx_placed *p, const char *path, __u64 text, __u64 huge,
					__u64 file, __u64 thp, __u64 hugetlb, const char *reason, __u64 cache)
{
	p->text_bytes = text;
	p->huge_bytes = huge;
	p->file_bytes = file;
	p->thp_bytes = thp;
	p->hugetlb_bytes = hugetlb;
	p->cache_bytes = cache;
	p->pad = 0;
	p->path[0] = 0;
	p->reason[0] = 0;
	bpf_probe_read_user_str(p->path, sizeof(p->path), path);
	p->has_reason = reason != NULL;
	if (reason)
		bpf_probe_read_user_str(p->reason, sizeof(p->reason), reason);
}

SEC("usdt")
int BPF_USDT(loaded, const char *path, __u64 mode, __u64 strategy, __u64 text, __u64 huge,
	     __u64 file, __u64 thp, __u64 hugetlb, __u64 elapsed_ns, const char *reason, __u64 cache)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if ((mode & TX_MODE_LIBS) && libs_attached) {
		__u8 st = LIBS;
		bpf_map_update_elem(&pending, &pid, &st, BPF_ANY);
	} else {
		bpf_map_delete_elem(&pending, &pid);
	}
	struct tx_loaded *e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_task(&e->t, TX_EV_LOADED);
	e->mode = mode;
	e->strategy = strategy;
	e->elapsed_ns = elapsed_ns;
	fill_placed(&e->p, path, text, huge, file, thp, hugetlb, reason, cache);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("usdt")
int BPF_USDT(direct, const char *path, const char *reason)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	bpf_map_delete_elem(&pending, &pid);
	struct tx_direct *e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_task(&e->t, TX_EV_DIRECT);
	e->path[0] = 0;
	e->reason[0] = 0;
	bpf_probe_read_user_str(e->path, sizeof(e->path), path);
	if (reason)
		bpf_probe_read_user_str(e->reason, sizeof(e->reason), reason);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("usdt")
int BPF_USDT(lib, const char *path, const char *lib_path, __u64 text, __u64 huge, __u64 file,
	     __u64 thp, __u64 hugetlb, const char *reason, __u64 cache, __u64 planned)
{
	struct tx_lib *e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_task(&e->t, TX_EV_LIB);
	fill_placed(&e->p, lib_path, text, huge, file, thp, hugetlb, reason, cache);
	e->planned = (__u32)planned;
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("usdt")
int BPF_USDT(libs, const char *path, __u64 count, __u64 elapsed_ns)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	bpf_map_delete_elem(&pending, &pid);
	struct tx_libs *e = reserve(sizeof(*e));
	if (!e)
		return 0;
	fill_task(&e->t, TX_EV_LIBS);
	e->count = count;
	e->elapsed_ns = elapsed_ns;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
