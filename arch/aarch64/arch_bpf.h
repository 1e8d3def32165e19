/* arm64's registers for tiexec-trace's BPF side.  bpf_tracing.h's PT_REGS_*
 * macros (-D__TARGET_ARCH_arm64, arch_bpf_target in meson.build) read a
 * struct pt_regs through its user-space view, struct user_pt_regs, which
 * the kernel's struct pt_regs begins with; with preserve_access_index each
 * access is relocated against the running kernel's BTF (CO-RE). */
#pragma once

struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
} __attribute__((preserve_access_index));

struct pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
	__u64 orig_x0;
} __attribute__((preserve_access_index));
