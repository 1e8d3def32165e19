/* The descriptor budget (see fds.h). */
#include "fds.h"

#include <errno.h>

#define FDS_WANTED 16

void fds_raise(struct fd_budget *b)
{
	struct tx_rlimit rl;

	b->raised = 0;
	if (sys_prlimit(TX_RLIMIT_NOFILE, NULL, &rl) < 0 || rl.cur >= FDS_WANTED || rl.cur >= rl.max)
		return;
	b->saved = rl;
	struct tx_rlimit more = {rl.max < FDS_WANTED ? rl.max : FDS_WANTED, rl.max};
	b->raised = sys_prlimit(TX_RLIMIT_NOFILE, &more, NULL) == 0;
}

void fds_restore(struct fd_budget *b)
{
	if (b->raised)
		sys_prlimit(TX_RLIMIT_NOFILE, &b->saved, NULL);
	b->raised = 0;
}

int fds_free(int fd, int n)
{
	long got[4];
	int ok = 1, k = 0;

	for (; k < n && k < 4; k++) {
		got[k] = sys_fcntl(fd, TX_F_DUPFD_CLOEXEC, 0);
		if (got[k] == -EPERM || got[k] == -ENOSYS) /* fcntl refused by a filter */
			got[k] = SC(__NR_dup, fd, 0, 0, 0, 0, 0);
		if (got[k] < 0) {
			ok = 0;
			break;
		}
	}
	while (k-- > 0)
		sys_close((int)got[k]);
	return ok;
}
