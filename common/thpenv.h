/* What the system allows for copies of the text on 2 MiB pages: the THP
 * switches (global, per size, per process), shmem THP, and whether memory
 * may be made executable after it was written (MemoryDenyWriteExecute).
 * Reads sysfs and asks the kernel; never prints. */
#pragma once

/* Why anonymous THP cannot give 2 MiB pages (a note, "thp: ..."), or NULL. */
const char *thpenv_thp_off(void);

/* Whether this process may have no transparent huge pages at all, the
 * page cache's included (prctl PR_SET_THP_DISABLE without
 * PR_THP_DISABLE_EXCEPT_ADVISED): then file mappings get no PMDs either. */
int thpenv_process_thp_off(void);

/* Whether shmem (a memfd) can be given 2 MiB folios. */
int thpenv_shmem_thp(void);

enum exec_refusal {
	EXEC_OK,         /* mprotect may add PROT_EXEC */
	EXEC_MDWE_PRCTL, /* prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN) */
	EXEC_MDWE_OTHER, /* a seccomp filter (systemd's MemoryDenyWriteExecute=) or an LSM */
};
enum exec_refusal thpenv_exec_refusal(void);
