/* tiexec: runs an x86-64 ELF program with its text on 2 MiB pages.
 *
 * The driver.  The kernel enters at _start (arch_entry.h) with the initial
 * stack it built for *us*; tiexec_main applies our own relative relocations
 * (until then no global holding a pointer may be read) and runs the stages
 * in order over the one struct exec (exec.h).  When the libraries' text is
 * wanted too, ld.so runs in between and gives control back at tiexec_hook,
 * which runs the stage after ld.so and the final stage.  No libc: every
 * service is a raw system call (sys.h); nothing is allocated; the only
 * output is one-line messages on stderr (report.c).
 *
 * Exit statuses before the program runs: 127 not found, 126 cannot be
 * executed, 125 bad tiexec option.  After the jump the process is the
 * program's, with our PID. */
#include <elf.h>

#include "arch_entry.h"
#include "arch_elf.h"
#include "exec.h"
#include "proc.h"
#include "report.h"
#include "rt.h"

ARCH_ENTRY;
ARCH_HOOK;

__attribute__((noreturn)) void tiexec_main(uint64_t *sp);
__attribute__((noreturn)) void tiexec_hook_main(uint64_t *sp, const struct arch_regs *regs);

extern Elf64_Dyn tx_dynamic[] __asm__("_DYNAMIC") __attribute__((visibility("hidden")));

static struct exec ex;

/* We are a static PIE: the kernel maps us anywhere and nobody applies our
 * relative relocations but us.  Runs before any pointer stored in data is
 * used; reaches _DYNAMIC and our base through PC-relative hidden symbols
 * only. */
static void relocate_self(void)
{
	uint64_t base = (uint64_t)(uintptr_t)tx_ehdr_start;
	uint64_t rela = 0, relasz = 0;

	for (Elf64_Dyn *d = tx_dynamic; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_RELA)
			rela = d->d_un.d_ptr;
		else if (d->d_tag == DT_RELASZ)
			relasz = d->d_un.d_val;
	}
	Elf64_Rela *r = (Elf64_Rela *)(uintptr_t)(base + rela);
	for (uint64_t i = 0; rela && i < relasz / sizeof(*r); i++)
		if (ELF64_R_TYPE(r[i].r_info) == ARCH_R_RELATIVE)
			*(uint64_t *)(uintptr_t)(base + r[i].r_offset) = base + (uint64_t)r[i].r_addend;
}

__attribute__((noreturn, used)) void tiexec_main(uint64_t *sp)
{
	relocate_self();
	ex.t0 = now_ns();
	ex.hook_fn = (uint64_t)(uintptr_t)tiexec_hook;
	launch_stage(&ex, sp); /* which program, the settings; may exec it plainly */
	if (load_stage(&ex) < 0) /* mapped as the kernel would, text on 2 MiB pages */
		launch_failed(&ex); /* a call refused: plainly; else the error */
	libplan_stage(&ex);    /* where ld.so will map its first library */
	final_open(&ex);       /* the final stage's page */
	stack_stage(&ex);      /* the initial stack a direct exec would build */
	final_enter(&ex);      /* into ld.so (back at tiexec_hook), or the program */
}

__attribute__((noreturn, used)) void tiexec_hook_main(uint64_t *sp, const struct arch_regs *regs)
{
	libs_stage(&ex);                /* the libraries' text on 2 MiB pages */
	final_after_hook(&ex, sp, regs); /* back into ld.so, or into the program */
}
