/* The few kernel types tiexec-trace.bpf.c reads, declared with only the
 * fields it uses.  preserve_access_index makes every access a CO-RE
 * relocation: libbpf finds the real offsets in the running kernel's BTF
 * (/sys/kernel/btf/vmlinux), so no full vmlinux.h is needed. */
#ifndef TIEXEC_TRACE_KERNEL_H
#define TIEXEC_TRACE_KERNEL_H

#include <linux/types.h>
#include <linux/bpf.h> /* map types, flags */

/* bpf_tracing.h names the kernel's struct pt_regs fields (di, ip, ...), not
 * the user-space ones (rdi, rip), only when it sees vmlinux.h; this header
 * plays its part. */
#define __VMLINUX_H__ 1

typedef _Bool bool;
#define true 1
#define false 0
typedef int pid_t;

#define CORE __attribute__((preserve_access_index))

/* The architecture's struct pt_regs, as bpf_tracing.h's PT_REGS_* macros
 * name its fields (arch/<cpu>/arch_bpf.h). */
#include "arch_bpf.h"

struct super_block {
	__u32 s_dev; /* dev_t: MAJOR << 20 | MINOR */
} CORE;

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} CORE;

struct file {
	struct inode *f_inode;
} CORE;

struct linux_binprm {
	struct file *file;
	const char *filename;
	const char *interp;
} CORE;

struct mm_struct {
	unsigned long arg_start, arg_end;
	struct file *exe_file;
} CORE;

struct task_struct {
	pid_t pid;
	pid_t tgid;
	int exit_code;
	struct task_struct *real_parent;
	struct mm_struct *mm;
} CORE;

/* The classic tracepoint's record (format: events/sched/sched_process_exec). */
struct trace_event_raw_sched_process_exec {
	__u32 __data_loc_filename;
	pid_t pid;
	pid_t old_pid;
} CORE;

#endif
