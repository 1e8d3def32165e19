/* x86-64's struct pt_regs for tiexec-trace's BPF side (CO-RE: the kernel's
 * field names, relocated against its BTF), which bpf_tracing.h's PT_REGS_*
 * macros read with -D__TARGET_ARCH_x86 (arch_bpf_target in meson.build). */
#pragma once

struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
} __attribute__((preserve_access_index));
