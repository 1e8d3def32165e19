/* What the system allows for copies of the text on 2 MiB pages: the THP
 * switches (global, per size, per process), shmem THP, and whether memory
 * may be made executable after it was written (MemoryDenyWriteExecute).
 * Reads sysfs and asks the kernel; never prints. */
#pragma once

#include "geom.h"
#include "reason.h"

enum exec_refusal {
	EXEC_OK,         /* mprotect may add PROT_EXEC */
	EXEC_MDWE_PRCTL, /* prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN) */
	EXEC_MDWE_OTHER, /* a seccomp filter (systemd's MemoryDenyWriteExecute=) or an LSM */
};

/* The answers, each read once when first asked: the caller owns this (one
 * per start in the loader), set up by thpenv_init. */
struct thpenv {
	const struct geom *geom; /* the PMD size names the per-size switches */
	unsigned asked;          /* THPENV_ASKED_* */
	struct why thp_off;      /* R_NONE: allowed */
	struct why block_off;
	enum exec_refusal exec;
	char why[REASON_TEXT_MAX];       /* thp_off's text, when it names a size */
	char why_block[REASON_TEXT_MAX]; /* block_off's */
};
void thpenv_init(struct thpenv *t, const struct geom *g);

/* Why anonymous THP cannot give PMD-sized pages (R_THP_*), or NULL.  It
 * lives in t. */
const struct why *thpenv_thp_off(struct thpenv *t);

/* Why anonymous THP cannot give 2 MiB folios where a PMD is larger (the
 * contiguous blocks of geom_blocks), or NULL.  It lives in t. */
const struct why *thpenv_block_off(struct thpenv *t);

/* Whether 2 MiB folios are off by their own switch alone
 * (transparent_hugepage/hugepages-2048kB/enabled "never", Linux 6.8), so
 * that an operator can turn them on. */
int thpenv_block_switch_never(void);

/* Whether this process may have no transparent huge pages at all, the
 * page cache's included (prctl PR_SET_THP_DISABLE without
 * PR_THP_DISABLE_EXCEPT_ADVISED): then file mappings get no PMDs either. */
int thpenv_process_thp_off(void);

/* Whether shmem (a memfd) can be given PMD-sized folios. */
int thpenv_shmem_thp(const struct thpenv *t);

enum exec_refusal thpenv_exec_refusal(struct thpenv *t);
