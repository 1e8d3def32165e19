/* The descriptor budget.  A direct exec needs no descriptor; tiexec needs one
 * for the program, one for its interpreter and one to ask which pages are
 * huge.  Under a low RLIMIT_NOFILE soft limit it borrows up to the hard
 * limit, and gives the soft limit back before anything of the program's
 * runs (or a plain exec). */
#pragma once

#include "sys.h"

struct fd_budget {
	struct tx_rlimit saved;
	int raised;
};

/* Raises the soft limit to a few descriptors when it is lower (and the hard
 * limit allows), remembering the old one in *b. */
void fds_raise(struct fd_budget *b);
/* Puts the soft limit back, if fds_raise raised it. */
void fds_restore(struct fd_budget *b);
/* Whether n (at most 4) more descriptors can be opened beside fd (probed
 * with dup, closed again). */
int fds_free(int fd, int n);
