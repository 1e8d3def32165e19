/* One exec through tiexec: the state the stages share, and the stages.
 *
 * The layers, each calling only downwards:
 *   driver      main.c: the entry points, relocate_self, the one static
 *               struct exec, and the order of the stages;
 *   stages      launch.c, load.c, libplan.c, stack.c, final.c, libs.c: each takes the
 *               struct exec and never calls the driver or another stage;
 *   facilities  image, block, proc, fds, caps, origin, hookpoint, detach,
 *               aside, libfind, reexec, report, and the huge-page modules
 *               (huge, cacheconv, fsfolio, thpenv, memlimit, layout,
 *               elfcheck, opts): explicit parameters, never a struct exec;
 *   runtime     rt.c, bits.h, sys.h, and arch/<arch>/arch_*.h.
 * A loader runs once, single-threaded, with no allocator: the struct exec
 * is static (main.c), because the stage after ld.so runs after
 * tiexec_main's frame is gone.  Each section below names the stage that
 * writes it; later stages only read it, except where said. */
#pragma once

#include <stdint.h>
#include <linux/prctl.h>

#include "arch_final.h"
#include "block.h"
#include "fds.h"
#include "hookpoint.h"
#include "huge.h"
#include "image.h"
#include "ldplan.h"
#include "libfind.h"
#include "libwalk.h"
#include "opts.h"
#include "rt.h"
#include "textcache.h"

/* The final stage's page (final.c). */
enum page_kind { PAGE_NONE, PAGE_MEMFD, PAGE_ANON };
struct final_page {
	enum page_kind kind;
	int fd;
	uint64_t anon;
	uint64_t len; /* the code page, and the data page after it if any */
};

struct exec {
	/* The driver. */
	uint64_t t0;      /* when tiexec started (now_ns) */
	uint64_t hook_fn; /* tiexec_hook (arch_entry.h): where ld.so gives control back */

	/* launch: how tiexec was started, which program, the settings. */
	struct start s;         /* our initial stack, decoded */
	uint64_t aux[AUX_MAX];  /* the kernel's aux vector, indexed by AT_* */
	uint64_t aux_has;       /* bit AT_x: the kernel gave AT_x */
	const char *path;       /* the program, as messages name it */
	const char *execfn;     /* its AT_EXECFN */
	long first;             /* its argv[0] is our argv[first] */
	int binfmt;             /* started by binfmt_misc */
	int reexec;             /* a program re-executing /proc/self/exe (TIEXEC_EXE) */
	int caps_opted;         /* the file-capability opt-in (caps.h); stack clears it */
	int ld_audit;           /* LD_AUDIT is set (read here: the environment's strings move) */
	struct fd_budget fds;   /* RLIMIT_NOFILE borrowed (fds.h); later stages restore it */
	struct opts env_o, cli_o; /* what the environment and the command line set */
	struct opts opt;        /* in effect; load merges the note in */
	const char *cache_dir;  /* the shared text cache (TIEXEC_CACHE), NULL: none */
	struct textcache_trust cache_trust; /* its directory, asked once */
	struct range interp_win; /* the interpreter's window (load.c), lo == hi: none */

	/* load: the images (below), their text, where the hook goes. */
	int remap;              /* the program's text went through huge.c */
	struct huge_result hr;
	struct huge_state huge; /* huge.c's bookkeeping, from load to libs */
	struct hookpoint hp;    /* HOOK_NONE: no stage after ld.so */
	struct fs_info fs;      /* the program's file system (fs_folios) */
	int cache_fd;           /* the program's cache entry while load runs, else -1 */
	uint64_t cache_off[TEXTCACHE_PH_MAX]; /* its offset for each program header */
	uint64_t entry;         /* ld.so's entry, or the program's */
	const struct image *fail_im; /* a failed system call's image (load_stage < 0) */

	/* libplan: where ld.so will map its libraries (ldp.n 0: no plan);
	 * final holds it (ldp_held: ldplan_hold's answer, the targets that
	 * land), libs gives it back. */
	struct ldplan ldp;
	struct ldplan_holds ldp_holds;
	int ldp_held;
	uint64_t ldp_ns;        /* the plan's cost: the walk, the replays (-v) */
	/* Where the walk came from (-v): the files, tiexec-warm's plan
	 * record, or the files after the record was found stale; and why a
	 * record that is there could not be used (NULL: none such). */
	enum { PLAN_WALKED, PLAN_RECORD, PLAN_RECORD_STALE } ldp_src;
	const char *ldp_rec_why;
	/* The first library that could have a window and has none (-v): why
	 * (NULL: none such) and its path (walk's pool). */
	const char *window_why;
	uint16_t window_lib;
	long fail_err;          /* and its negative errno */

	/* final_open: the final stage's page, before the stack decides the
	 * exe link (no page: the loader stays mapped, so does the link). */
	struct final_page fp;

	/* stack: the program's initial stack block, built at blk and copied
	 * to plan.dst by the final stage. */
	struct areas areas;
	struct plan plan;
	struct block blk;
	uint64_t tmp_lo, tmp_len; /* the block's own mapping, when it has one */
	struct prctl_mm_map mm; /* the bounds, told to the kernel */
	int exe_mode;           /* ARCH_EXE_*: how the final stage sets the exe link */
	int exe_done;           /* the exe link is the program's already */
	int drop_caps;          /* the final stage drops every capability */
	int traced_fd;          /* tiexec's file, while its probes are attached (detach.h) */

	/* final: what the final stage gets, and the hook finds after ld.so. */
	struct arch_final fin;  /* the final stage, all but the registers */
	uint64_t page;          /* the final stage's code page, or 0: in place */
	uint64_t prog_entry;    /* HOOK_ENTRY: the program's own entry point */
	const char *reopen;     /* the program to open again for the exe link */

	/* The large members last, by stage: the fields above, which every
	 * start touches, then share a page or two.  Each page the loader
	 * touches first is a fault and a zeroed page: under qemu's TCG the
	 * kernel clears a page a byte per step, about 4,000 of them. */
	struct image prog;      /* launch opens prog.fd; stack and final close it */
	struct image interp;
	char cache_dir_buf[PATH_MAX]; /* cache_dir's copy: the environment's strings move */
	char path_buf[PATH_MAX];    /* the program's path, found in PATH */
	char prog_dir[PATH_MAX];    /* the program's directory, for $ORIGIN */
	char exe_env[PATH_MAX + 40]; /* "TIEXEC_EXE=PID:/abs/path", the hint */
	char prog_link[PATH_MAX];   /* the program's path as /proc/PID/exe names it */
	char path_copy[PATH_MAX];   /* the program's path: the argument strings move */
	struct ldplan_req ldp_req[LDPLAN_MAX_REQS];
	uint16_t ldp_path[LDPLAN_MAX_REQS]; /* a library request's path (walk's pool) */
	struct walk walk;           /* ld.so's libraries (libplan) */
};

/* The stages, in the order the driver calls them.  Each file opens with
 * its contract: what it reads, writes, and may exit with. */
void launch_stage(struct exec *ex, uint64_t *sp);
/* 0, or a system call failed (ex->fail_im, fail_err), before anything of
 * the program's has run: the driver hands that to launch_failed. */
long load_stage(struct exec *ex);
/* Where a failed load leads, as the way tiexec was started allows: a call
 * a filter refused (EPERM, ENOSYS) to a plain exec of the program, any
 * other failure to its message and status 126 or 127. */
__attribute__((noreturn)) void launch_failed(struct exec *ex);
void libplan_stage(struct exec *ex);
void final_open(struct exec *ex);
void stack_stage(struct exec *ex);
__attribute__((noreturn)) void final_enter(struct exec *ex);
/* After ld.so, from tiexec_hook: */
void libs_stage(struct exec *ex);
__attribute__((noreturn)) void final_after_hook(struct exec *ex, uint64_t *sp, const struct arch_regs *regs);
