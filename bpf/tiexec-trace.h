/* tiexec-trace: the records the kernel side (tiexec-trace.bpf.c) puts on
 * the ring buffer for the user side (tiexec-trace.c).  Every record starts
 * with its kind; sizes are fixed so that one reservation is one record. */
#ifndef TIEXEC_TRACE_H
#define TIEXEC_TRACE_H

#define TX_COMM_BYTES 16
#define TX_PATH_BYTES 256   /* paths longer than this are cut */
#define TX_ARGS_BYTES 256   /* a power of two; the first 255 bytes of a command line */
#define TX_REASON_BYTES 128 /* the loader's reasons are short static strings */
#define TX_LOADERS_MAX 4    /* loader files followed across upgrades, oldest dropped */

enum tx_kind {
	TX_EV_EXEC = 1,   /* sched_process_exec */
	TX_EV_LOADED = 2, /* USDT tiexec:loaded */
	TX_EV_DIRECT = 3, /* USDT tiexec:direct */
	TX_EV_EXIT = 4,   /* a traced loader exited before either probe fired,
			   * or before its libs probe */
	TX_EV_LIB = 5,    /* USDT tiexec:lib */
	TX_EV_LIBS = 6,   /* USDT tiexec:libs */
};

/* tx_exec.flags */
#define TX_EXEC_LOADER 1 /* the exec'd file is the loader (inode + device match) */
#define TX_EXEC_INTERP 2 /* bprm->interp differs from bprm->filename (binfmt_misc, #!) */
#define TX_EXEC_CLASSIC 4 /* from the classic tracepoint: no bprm, interp unknown */

/* The probes' arguments: TX_MODE_* bits. */
#include "../interp/probes.h"

/* The identity of a task, filled in by every probe. */
/* A loader file: inode, and device in the kernel's encoding. */
struct tx_loader_id {
	__u64 ino;
	__u32 kdev;
	__u32 pad;
};

struct tx_task {
	__u32 kind;
	__u32 pid; /* tgid */
	__u32 ppid;
	__u32 uid;
	__u64 boot_ns; /* bpf_ktime_get_boot_ns() */
	char comm[TX_COMM_BYTES];
};

struct tx_exec {
	struct tx_task t;
	__u32 flags;
	__u32 args_bytes;
	char filename[TX_PATH_BYTES]; /* bprm->filename: as exec'd */
	char args[TX_ARGS_BYTES];     /* loader execs only */
};

/* What a placement came to: the program's text, or a library's. */
struct tx_placed {
	__u64 text_bytes, huge_bytes, file_bytes, thp_bytes, hugetlb_bytes;
	__u64 cache_bytes; /* the shared text cache (0 from a loader before it) */
	__u32 has_reason;
	__u32 pad;
	char path[TX_PATH_BYTES];
	char reason[TX_REASON_BYTES];
};

struct tx_loaded {
	struct tx_task t;
	__u64 mode, strategy, elapsed_ns;
	struct tx_placed p; /* the program's */
};

struct tx_direct {
	struct tx_task t;
	char path[TX_PATH_BYTES];
	char reason[TX_REASON_BYTES];
};

/* One library placed; the program's path is not copied (joined by pid). */
struct tx_lib {
	struct tx_task t;
	struct tx_placed p; /* the library's */
	__u32 planned;      /* TX_PLAN_* (interp/probes.h) */
	__u32 pad;
};

/* The end of the libraries stage. */
struct tx_libs {
	struct tx_task t;
	__u64 count; /* lib probes fired before it */
	__u64 elapsed_ns;
};

struct tx_exit {
	struct tx_task t;
	__s32 exit_code; /* task->exit_code: status << 8 | signal */
	__u32 pad;
};

#endif
