/* Which package owns a file: asks dpkg-query, then rpm, as a user would
 * (their databases' formats are theirs).  Never prints. */
#define _GNU_SOURCE
#include "owner.h"

#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Runs argv (found on PATH) with stdout into out (NUL-terminated, cut at
 * outlen - 1) and stderr discarded.  Its exit status, or -1 when it could
 * not be run. */
static int run_capture(char *const argv[], char *out, size_t outlen)
{
	posix_spawn_file_actions_t fa;
	int p[2], status;
	size_t n = 0;
	pid_t pid;

	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (e != 0) {
		close(p[0]);
		return -1;
	}
	for (;;) {
		char sink[512];
		char *at = n + 1 < outlen ? out + n : sink;
		size_t room = n + 1 < outlen ? outlen - 1 - n : sizeof(sink);
		ssize_t got = read(p[0], at, room);
		if (got <= 0)
			break;
		if (at != sink)
			n += (size_t)got;
	}
	out[n] = '\0';
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* From dpkg-query -S's lines "pkg[, pkg...]: PATH" the first package
 * named for one of the paths ("diversion by ..." lines are not owners). */
static int dpkg_owner(const char *const paths[], int n, char *pkg, size_t pkglen)
{
	char *argv[8] = { "dpkg-query", "-S", "--" };
	char out[PATH_MAX];
	int k = 3;

	for (int i = 0; i < n && k < 7; i++)
		argv[k++] = (char *)paths[i];
	argv[k] = NULL;
	if (run_capture(argv, out, sizeof(out)) < 0)
		return 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char *colon = strstr(line, ": /");
		if (!colon || !strncmp(line, "diversion by ", 13) || !strncmp(line, "local diversion", 15))
			continue;
		*colon = '\0';
		for (int i = 0; i < n; i++)
			if (!strcmp(colon + 2, paths[i])) {
				snprintf(pkg, pkglen, "the Debian package %.*s", (int)strcspn(line, ","), line);
				return 1;
			}
		*colon = ':';
	}
	return 0;
}

static int rpm_owner(const char *path, char *pkg, size_t pkglen)
{
	char *argv[] = { "rpm", "-qf", "--queryformat", "%{NAME}\\n", "--", (char *)path, NULL };
	char out[256];

	if (access("/var/lib/rpm", F_OK) != 0 && access("/usr/lib/sysimage/rpm", F_OK) != 0)
		return 0;
	if (run_capture(argv, out, sizeof(out)) != 0 || !out[0])
		return 0;
	out[strcspn(out, "\n")] = '\0';
	snprintf(pkg, pkglen, "the RPM package %s", out);
	return 1;
}

int package_owner(const char *path, char *pkg, size_t pkglen)
{
	/* With a merged /usr, dpkg lists /lib/x, /bin/x and /sbin/x under the
	 * names the packages shipped, which resolve to /usr/lib/x... */
	char bare[PATH_MAX];
	const char *paths[2] = { path, NULL };
	int n = 1;

	if (!strncmp(path, "/usr/", 5) &&
	    (!strncmp(path + 4, "/lib", 4) || !strncmp(path + 4, "/bin/", 5) || !strncmp(path + 4, "/sbin/", 6)) &&
	    strlen(path + 4) < sizeof(bare)) {
		strcpy(bare, path + 4);
		paths[n++] = bare;
	}
	return dpkg_owner(paths, n, pkg, pkglen) || rpm_owner(path, pkg, pkglen);
}
