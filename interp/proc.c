/* Process helpers (see proc.h). */
#include "proc.h"

#include "probes.h"
#include "report.h"
#include "sys.h"

#define ADDR_NO_RANDOMIZE 0x0040000

long fd_link(int fd, char *buf, size_t len)
{
	struct msg m;

	m.n = 0;
	msg_str(&m, "/proc/self/fd/");
	msg_u64(&m, (uint64_t)fd);
	m.b[m.n] = '\0';
	long n = sys_readlinkat(TX_AT_FDCWD, m.b, buf, len - 1);
	if (n <= 0 || buf[0] != '/' || n >= (long)len - 1)
		return -1;
	buf[n] = '\0';
	return n;
}

int aslr_off(void)
{
	long p = SC(__NR_personality, 0xffffffffUL, 0, 0, 0, 0, 0);

	return p >= 0 && (p & ADDR_NO_RANDOMIZE);
}

uint64_t random_u64(void)
{
	uint64_t r = 0;

	sys_getrandom(&r, sizeof(r), 0);
	return r;
}

uint64_t now_ns(void)
{
	struct tx_timespec ts;

	sys_clock_gettime(TX_CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.sec * 1000000000ULL + (uint64_t)ts.nsec;
}

const char *env_get(char **envp, const char *name)
{
	for (char **e = envp; *e; e++) {
		const char *v = tx_skip(*e, name);
		if (v && *v == '=')
			return v + 1;
	}
	return NULL;
}

__attribute__((noreturn)) void exec_plain(const char *path, char **argv, char **envp, const char *why)
{
	TX_PROBE(direct, path, why);
	long e = sys_execve(path, argv, envp);
	die_errno(path, NULL, e);
}
