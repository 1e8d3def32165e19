/* glibc-swap ROOT CMD [ARGS]: runs CMD with the C library unpacked under
 * ROOT (a libc6 package's files) in place of the machine's: each of
 * ROOT/usr/lib/MULTIARCH's files that the machine has too, and its gconv
 * directory, bound over the machine's.  Run it in a mount namespace of its
 * own (unshare -m --propagation private).  Static, and one process: bound
 * one by one, the files would meet a dynamically linked mount(8) half
 * old and half new. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define MULTIARCH "/usr/lib/" TRIPLET /* gcc -dumpmachine, given by scripts/glibc-next */

static int bind(const char *src, const char *dst)
{
	if (mount(src, dst, NULL, MS_BIND, NULL) == 0)
		return 0;
	fprintf(stderr, "glibc-swap: '%s': cannot bind over %s: %m\n", src, dst);
	return -1;
}

int main(int argc, char **argv)
{
	char dir[4096], src[4096], dst[4096];
	struct stat st;
	int n = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: glibc-swap ROOT CMD [ARGS]\n");
		return 125;
	}
	DIR *d = snprintf(dir, sizeof(dir), "%s%s", argv[1], MULTIARCH) < (int)sizeof(dir) ? opendir(dir) : NULL;
	if (!d) {
		fprintf(stderr, "glibc-swap: '%s': %m\n", dir);
		return 125;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (snprintf(src, sizeof(src), "%s/%s", dir, e->d_name) >= (int)sizeof(src) ||
		    snprintf(dst, sizeof(dst), "%s/%s", MULTIARCH, e->d_name) >= (int)sizeof(dst))
			continue;
		if (lstat(src, &st) || !S_ISREG(st.st_mode) || stat(dst, &st) || !S_ISREG(st.st_mode))
			continue;
		if (bind(src, dst))
			return 125;
		n++;
	}
	closedir(d);
	if (snprintf(src, sizeof(src), "%s/gconv", dir) < (int)sizeof(src) && stat(src, &st) == 0 && bind(src, MULTIARCH "/gconv"))
		return 125;
	if (n == 0) {
		fprintf(stderr, "glibc-swap: '%s': no library of the machine's there\n", dir);
		return 125;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "glibc-swap: '%s': %m\n", argv[2]);
	return 127;
}
