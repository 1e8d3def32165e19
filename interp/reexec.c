/* Re-executions of /proc/self/exe (see reexec.h). */
#include "reexec.h"

#include "bits.h"
#include "rt.h"

enum reexec_verdict reexec_decide(const char *hint, const char *argv0, const char *execfn, long pid_now,
				  long ppid, const char **path)
{
	const char *v = hint;
	long pid = -1;

	if (!v || !argv0)
		return REEXEC_NO;
	if (*v >= '0' && *v <= '9') {
		pid = 0;
		while (*v >= '0' && *v <= '9')
			pid = pid * 10 + (*v++ - '0');
		if (*v++ != ':')
			return REEXEC_NO;
	}
	if (*v != '/')
		return REEXEC_NO;
	*path = v;
	if (!tx_streq(tx_basename(argv0), tx_basename(execfn)))
		return REEXEC_YES;
	int self = pid == pid_now;
	if (!self && pid != ppid)
		return REEXEC_NO;
	if (tx_streq(execfn, "/proc/self/exe"))
		return REEXEC_YES;
	/* In place, only "/proc/self/exe" itself (or a foreign argv[0],
	 * above) counts: a shell the program is running that execs tiexec by
	 * its path is starting tiexec. */
	return self ? REEXEC_NO : REEXEC_IF_OWN_NAME;
}

int reexec_proc_exe_link(const char *path)
{
	const char *p = tx_skip(path, "/proc/");

	if (!p)
		return 0;
	if (tx_streq(p, "self/exe") || tx_streq(p, "thread-self/exe"))
		return 1;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return tx_streq(p, "/exe");
}

int reexec_anonymous(const char *argv0, const char *execfn)
{
	if (!argv0)
		return 0;
	return reexec_proc_exe_link(execfn) || !tx_streq(tx_basename(argv0), tx_basename(execfn));
}
