/* What this kernel, its settings and the process's restrictions allow for
 * copies of the text on huge pages (see thpenv.h).  Each answer is read once
 * per start, before any memory is taken for a copy. */
#include "thpenv.h"

#include <errno.h>

#include "elfcheck.h"
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
	int fd = (int)sys_openat(TX_AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	long n = sys_read(fd, b, sizeof(b) - 1);
	sys_close(fd);
	b[n > 0 ? n : 0] = '\0';
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

/* Why anonymous THP cannot give us 2 MiB pages, or NULL if it can.  Asked
 * before anything is copied: a copy that cannot be huge is wasted work.
 * Since Linux 6.8 (mTHP) each size has its own switch; "inherit" defers
 * to the top-level one, anything else overrides it (for "madvise" our
 * MADV_HUGEPAGE is enough). */
const char *thpenv_thp_off(void)
{
	static int checked;
	static const char *why;

	if (checked)
		return why;
	checked = 1;
	if (thpenv_process_thp_off())
		return why = "thp: transparent huge pages are disabled for this process (prctl PR_SET_THP_DISABLE)";
	if (sysfs_choice(THP_SYSFS "hugepages-2048kB/enabled", "never") == 1)
		return why = "thp: transparent huge pages of 2 MiB are disabled (transparent_hugepage/hugepages-2048kB/enabled is never)";
	if (sysfs_choice(THP_SYSFS "hugepages-2048kB/enabled", "inherit") == 0)
		return why = NULL; /* always or madvise */
	int never = sysfs_choice(THP_SYSFS "enabled", "never");
	if (never < 0 && sys_faccessat(TX_AT_FDCWD, "/sys/kernel", 0) < 0)
		return why = "thp: /sys is not mounted here (a chroot?): the THP settings cannot be read";
	if (never < 0)
		return why = "thp: this kernel has no transparent huge pages";
	if (never)
		return why = "thp: transparent huge pages are disabled (transparent_hugepage/enabled is never)";
	return why = NULL;
}

/* Whether a copy can be made executable.  PR_SET_MDWE (Linux 6.3) refuses
 * any mprotect that adds PROT_EXEC and is inherited across exec; systemd's
 * MemoryDenyWriteExecute=yes does the same with a seccomp filter (EPERM),
 * and a security module may refuse it as execmem (EACCES).  The kernel's
 * own flag can be read; the others show only by trying, on one page of our
 * own, before any text is copied. */
enum exec_refusal thpenv_exec_refusal(void)
{
	static int checked;
	static enum exec_refusal why;

	if (checked)
		return why;
	checked = 1;
	long mdwe = sys_prctl(TX_PR_GET_MDWE, 0, 0, 0, 0);
	if (mdwe > 0 && (mdwe & TX_PR_MDWE_REFUSE_EXEC_GAIN))
		return why = EXEC_MDWE_PRCTL;
	long pg = sys_mmap(0, TX_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pg < 0)
		return why = EXEC_OK; /* no memory: the copy will say so */
	long e = sys_mprotect((uint64_t)pg, TX_PAGE, PROT_READ | PROT_EXEC);
	sys_munmap((uint64_t)pg, TX_PAGE);
	return why = (e == -EPERM || e == -EACCES) ? EXEC_MDWE_OTHER : EXEC_OK;
}

/* Whether shmem (a memfd) can be given 2 MiB folios: the per-size switch
 * (Linux 6.11), or the top-level one when that says "inherit" or is
 * missing; "advise" is satisfied by our MADV_HUGEPAGE. */
int thpenv_shmem_thp(void)
{
	int pmd_never = sysfs_choice(THP_SYSFS "hugepages-2048kB/shmem_enabled", "never");
	if (pmd_never == 1)
		return 0;
	if (pmd_never == 0 && sysfs_choice(THP_SYSFS "hugepages-2048kB/shmem_enabled", "inherit") == 0)
		return 1;
	return sysfs_choice(THP_SYSFS "shmem_enabled", "never") == 0 &&
	       sysfs_choice(THP_SYSFS "shmem_enabled", "deny") == 0;
}
