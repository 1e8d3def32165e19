/* Capabilities of the file-capability opt-in (see caps.h). */
#include "caps.h"

#include <linux/auxvec.h>

#include "rt.h"

#include "sys.h"

#define CAP_V3 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */
#define CAP_SYS_ADMIN 21
#define CAP_SYS_RESOURCE 24
#define CAP_CHECKPOINT_RESTORE 40

struct cap_hdr {
	uint32_t version;
	int pid;
};
struct cap_data {
	uint32_t effective, permitted, inheritable;
};

int caps_from_file(const uint64_t *aux)
{
	return aux[AT_SECURE] && aux[AT_UID] == aux[AT_EUID] && aux[AT_GID] == aux[AT_EGID];
}

/* Sets the effective set to `want` limited to the permitted set. */
static void set_effective(uint64_t want)
{
	struct cap_hdr h = {CAP_V3, 0};
	struct cap_data d[2];

	if (SC(__NR_capget, &h, d, 0, 0, 0, 0) < 0)
		return;
	d[0].effective = (uint32_t)want & d[0].permitted;
	d[1].effective = (uint32_t)(want >> 32) & d[1].permitted;
	SC(__NR_capset, &h, d, 0, 0, 0, 0);
}

int caps_enter(const uint64_t *aux)
{
	int opted_in = caps_from_file(aux);

	if (opted_in)
		set_effective(0);
	return opted_in;
}

void caps_raise(int opted_in)
{
	if (opted_in)
		set_effective(1ULL << CAP_CHECKPOINT_RESTORE | 1ULL << CAP_SYS_ADMIN |
			      1ULL << CAP_SYS_RESOURCE);
}

void caps_lower(int opted_in)
{
	if (opted_in)
		set_effective(0);
}

void caps_drop_all(int how)
{
	struct cap_hdr h = {CAP_V3, 0};
	struct cap_data d[2];

	memset(d, 0, sizeof(d));
	SC(__NR_capset, &h, d, 0, 0, 0, 0);
	sys_prctl(PR_SET_DUMPABLE, how == CAPS_DROP_DUMPABLE, 0, 0, 0);
}

int caps_drop_how(int opted_in, int prog_fd)
{
	if (!opted_in)
		return 0;
	/* The kernel makes the exec of a file its caller may not read
	 * non-dumpable (would_dump): so does tiexec, whatever made the secure
	 * exec.  AT_EMPTY_PATH: the open program itself (Linux 5.8). */
	long r = SC(__NR_faccessat2, prog_fd, "", R_OK, AT_EACCESS | TX_AT_EMPTY_PATH, 0, 0);
	return r == 0 ? CAPS_DROP_DUMPABLE : CAPS_DROP_KEEP_UNDUMPABLE;
}
