/* What this kernel, its settings and the process's restrictions allow for
 * copies of the text on huge pages (see thpenv.h).  Each answer is read once
 * per start, before any memory is taken for a copy. */
#include "thpenv.h"

#include <errno.h>
#include <string.h>

#include "bits.h"
#include "sys.h"

#define TX_PR_GET_MDWE 66 /* Linux 6.3 */
#define TX_PR_MDWE_REFUSE_EXEC_GAIN 1

/* Whether the first word in brackets of a sysfs choice file, e.g.
 * "always [madvise] never", is `word`.  -1 when the file cannot be read. */
static int sysfs_choice(const char *path, const char *word)
{
	char b[128];

	if (tx_read_text(path, b, sizeof(b)) < 0)
		return -1;
	for (char *p = b; *p; p++) {
		if (*p != '[')
			continue;
		const char *e = tx_skip(p + 1, word);
		return e && *e == ']';
	}
	return -1;
}

#define THP_SYSFS "/sys/kernel/mm/transparent_hugepage/"

int thpenv_process_thp_off(void)
{
	return sys_prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1;
}

#define THPENV_ASKED_THP 1u
#define THPENV_ASKED_EXEC 2u
#define THPENV_ASKED_BLOCK 4u

void thpenv_init(struct thpenv *t, const struct geom *g)
{
	t->geom = g;
	t->asked = 0;
	t->thp_off.r = t->block_off.r = R_NONE;
	t->exec = EXEC_OK;
	t->why[0] = '\0';
	t->why_block[0] = '\0';
}

/* THP_SYSFS "hugepages-<SIZE>kB/" FILE into p[n]. */
static const char *size_file(uint64_t size, const char *file, char *p, size_t n)
{
	char dir[48];
	size_t k = 0;

	tx_cat(p, n, &k, THP_SYSFS);
	tx_cat(p, n, &k, geom_mthp_dir(size, dir, sizeof(dir)));
	tx_cat(p, n, &k, file);
	return p;
}

/* Why anonymous THP cannot give us folios of size, into *w (R_NONE if it
 * can): the text in why[n] when it names the size.  Asked before anything
 * is copied: a copy that cannot be huge is wasted work.  Since Linux 6.8
 * (mTHP) each size has its own switch; "inherit" defers to the top-level
 * one, anything else overrides it (for "madvise" our MADV_HUGEPAGE is
 * enough).  Before 6.8 only the PMD size has one, the top-level switch. */
static void size_off(uint64_t size, int pmd, struct why *w, char *why, size_t n)
{
	char p[128], sz[24], dir[48];

	w->r = R_NONE;
	if (thpenv_process_thp_off()) {
		w->r = R_THP_PRCTL;
	} else {
		int never = sysfs_choice(size_file(size, "enabled", p, sizeof(p)), "never");
		if (never == 1 || (never < 0 && !pmd)) {
			const char *args[2] = { geom_size(size, sz, sizeof(sz)), geom_mthp_dir(size, dir, sizeof(dir)) };
			w->r = never == 1 ? R_THP_SIZE_NEVER : R_THP_SIZE_OLD;
			w->text = reason_fill(w->r, args, 2, why, n);
			return;
		}
		if (sysfs_choice(p, "inherit") == 0)
			return; /* always or madvise */
		never = sysfs_choice(THP_SYSFS "enabled", "never");
		if (never < 0 && sys_faccessat(TX_AT_FDCWD, "/sys/kernel", 0) < 0)
			w->r = R_THP_NO_SYS;
		else if (never < 0)
			w->r = R_THP_NONE;
		else if (never)
			w->r = R_THP_NEVER;
	}
	w->text = reason_text(w->r);
}

int thpenv_block_switch_never(void)
{
	char p[128];

	return !thpenv_process_thp_off() && sysfs_choice(size_file(TX_HUGE, "enabled", p, sizeof(p)), "never") == 1;
}

const struct why *thpenv_thp_off(struct thpenv *t)
{
	if (!(t->asked & THPENV_ASKED_THP)) {
		t->asked |= THPENV_ASKED_THP;
		size_off(t->geom->pmd, 1, &t->thp_off, t->why, sizeof(t->why));
	}
	return t->thp_off.r != R_NONE ? &t->thp_off : NULL;
}

const struct why *thpenv_block_off(struct thpenv *t)
{
	if (!(t->asked & THPENV_ASKED_BLOCK)) {
		t->asked |= THPENV_ASKED_BLOCK;
		size_off(TX_HUGE, 0, &t->block_off, t->why_block, sizeof(t->why_block));
	}
	return t->block_off.r != R_NONE ? &t->block_off : NULL;
}

/* Whether a copy can be made executable.  PR_SET_MDWE (Linux 6.3) refuses
 * any mprotect that adds PROT_EXEC and is inherited across exec; systemd's
 * MemoryDenyWriteExecute=yes does the same with a seccomp filter (EPERM),
 * and a security module may refuse it as execmem (EACCES).  The kernel's
 * own flag can be read; the others show only by trying, on one page of our
 * own, before any text is copied. */
static enum exec_refusal exec_refusal(const struct thpenv *t)
{
	long mdwe = sys_prctl(TX_PR_GET_MDWE, 0, 0, 0, 0);
	if (mdwe > 0 && (mdwe & TX_PR_MDWE_REFUSE_EXEC_GAIN))
		return EXEC_MDWE_PRCTL;
	long pg = sys_mmap(0, t->geom->page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pg < 0)
		return EXEC_OK; /* no memory: the copy will say so */
	long e = sys_mprotect((uint64_t)pg, t->geom->page, PROT_READ | PROT_EXEC);
	sys_munmap((uint64_t)pg, t->geom->page);
	return (e == -EPERM || e == -EACCES) ? EXEC_MDWE_OTHER : EXEC_OK;
}

enum exec_refusal thpenv_exec_refusal(struct thpenv *t)
{
	if (!(t->asked & THPENV_ASKED_EXEC)) {
		t->asked |= THPENV_ASKED_EXEC;
		t->exec = exec_refusal(t);
	}
	return t->exec;
}

/* Whether shmem (a memfd) can be given PMD-sized folios: the per-size
 * switch (Linux 6.11), or the top-level one when that says "inherit" or is
 * missing; "advise" is satisfied by our MADV_HUGEPAGE. */
int thpenv_shmem_thp(const struct thpenv *t)
{
	char p[128];
	int pmd_never = sysfs_choice(size_file(t->geom->pmd, "shmem_enabled", p, sizeof(p)), "never");
	if (pmd_never == 1)
		return 0;
	if (pmd_never == 0 && sysfs_choice(p, "inherit") == 0)
		return 1;
	return sysfs_choice(THP_SYSFS "shmem_enabled", "never") == 0 &&
	       sysfs_choice(THP_SYSFS "shmem_enabled", "deny") == 0;
}
