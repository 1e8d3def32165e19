/*
 * peers-probe.so, LD_PRELOAD'ed by scripts/peers.  When the program exits
 * it appends one line to $TX_PROBE_OUT:
 *
 *   PID TEXT_KB HUGE_KB EXE
 *
 * TEXT_KB: the program's executable mappings, that is every one but the
 * shared objects' (a path with ".so"), the vdso and vsyscall: the program's
 * file, and the anonymous, memfd, hugetlbfs or tmpfs mappings that the ways
 * of putting text on huge pages replace it with.  HUGE_KB: what of those is
 * on 2 MiB pages (FilePmdMapped, AnonHugePages, ShmemPmdMapped and the
 * hugetlb fields).  EXE: /proc/self/exe.
 *
 * With $TX_PROBE_HOLD naming a FIFO, it then reads that FIFO until its
 * writer closes it: the process stays, with all it mapped, for its memory
 * to be read from outside.  A process that waits for a child and exits
 * (timeout) would report itself: start such wrappers outside LD_PRELOAD.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_program_text(const char *path)
{
	return !strstr(path, ".so") && strcmp(path, "[vdso]") != 0 && strcmp(path, "[vsyscall]") != 0;
}

static const char *const huge_fields[] = {
	"FilePmdMapped:", "AnonHugePages:", "ShmemPmdMapped:", "Private_Hugetlb:", "Shared_Hugetlb:",
};

__attribute__((destructor)) static void probe(void)
{
	const char *out = getenv("TX_PROBE_OUT");
	if (!out)
		return;
	FILE *in = fopen("/proc/self/smaps", "re");
	if (!in)
		return;
	char line[4096], perms[8], path[4096], exe[4096];
	unsigned long lo, hi, v, text = 0, huge = 0;
	int counted = 0;
	while (fgets(line, sizeof(line), in)) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095[^\n]", &lo, &hi, perms, path) >= 3) {
			counted = strchr(perms, 'x') && is_program_text(path);
			if (counted)
				text += (hi - lo) / 1024;
			continue;
		}
		for (size_t i = 0; counted && i < sizeof(huge_fields) / sizeof(huge_fields[0]); i++) {
			size_t n = strlen(huge_fields[i]);
			if (strncmp(line, huge_fields[i], n) == 0 && sscanf(line + n, "%lu", &v) == 1)
				huge += v;
		}
	}
	fclose(in);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	FILE *o = fopen(out, "ae");
	if (o) {
		fprintf(o, "%d %lu %lu %s\n", (int)getpid(), text, huge, exe);
		fclose(o);
	}
	/* Opened without blocking: once the writer has gone, there is nothing
	 * to wait for (a blocking open would wait for a writer forever). */
	const char *hold = getenv("TX_PROBE_HOLD");
	int fd = hold ? open(hold, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	if (fd >= 0 && fcntl(fd, F_SETFL, 0) == 0) {
		char c;
		while (read(fd, &c, 1) > 0)
			;
	}
}
