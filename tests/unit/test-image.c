/* The loader's image facility (interp/image.c) in a test process: opening
 * as open_exec() does, the headers and the policy note, and a program
 * placed and mapped into this process (not run) where image.c says:
 * every PT_LOAD at bias + p_vaddr with its protection, the text congruent
 * to its file offset, the dynamic section found in the mapping.
 * Arguments: a dynamic PIE (/bin/true) and tiexec-stamp (for a note). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image.h"
#include "sys.h"
#include "tap.h"

static struct image im;

static void test_open(const char *prog, const char *dir)
{
	struct statx st;
	char f[PATH_MAX];
	FILE *w;

	long fd = image_open_exec(prog, &st);
	ok(fd >= 0 && (st.stx_mode & S_IFMT) == S_IFREG, "image_open_exec: %s opens (%ld)", prog, fd);
	if (fd >= 0)
		sys_close((int)fd);
	ok(image_open_exec("/no/such/file", &st) == -ENOENT, "image_open_exec: missing is ENOENT");
	long d = image_open_exec("/", &st);
	ok(d == -EISDIR || d == -EACCES, "image_open_exec: a directory is refused (%ld)", d);
	snprintf(f, sizeof(f), "%s/plain", dir);
	if ((w = fopen(f, "w"))) /* mode 0666 & ~umask: no execute bit */
		fclose(w);
	ok(image_open_exec(f, &st) == -EACCES, "image_open_exec: no execute bit is EACCES, as execve says");
}

/* Opens path into im and reads its headers: 0, 1 for a script. */
static int load_headers(const char *path, int scripts_ok)
{
	memset(&im, 0, sizeof(im));
	im.path = path;
	im.fd = (int)image_open_exec(path, &im.st);
	if (im.fd < 0)
		return -2;
	return image_read_headers(&im, 0, scripts_ok);
}

static void dies_126(const void *path)
{
	load_headers(path, 0);
	_exit(0);
}

static int child_status(void (*fn)(const void *), const void *arg)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		freopen("/dev/null", "w", stderr);
		fn(arg);
		_exit(255);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_headers(const char *prog, const char *dir)
{
	char script[PATH_MAX], cut[PATH_MAX], cmd[3 * PATH_MAX];

	ok(load_headers(prog, 0) == 0 && im.info.interp >= 0 && im.info.nload > 0, "%s: headers read, PT_INTERP found",
	   prog);
	sys_close(im.fd);
	snprintf(script, sizeof(script), "%s/script", dir);
	FILE *w = fopen(script, "w");
	if (w) {
		fputs("#!/bin/sh\nexit 0\n", w);
		fclose(w);
	}
	snprintf(cmd, sizeof(cmd), "chmod 755 '%s'", script);
	if (system(cmd) != 0)
		abort();
	ok(load_headers(script, 1) == 1, "a #! script is said to be one");
	sys_close(im.fd);
	snprintf(cut, sizeof(cut), "%s/cut", dir);
	snprintf(cmd, sizeof(cmd), "head -c 100 '%s' > '%s' && chmod 755 '%s'", prog, cut, cut);
	if (system(cmd) != 0)
		abort();
	ok(child_status(dies_126, cut) == 126, "a file cut after its ELF header: status 126");
}

static void test_note(const char *prog, const char *stamp, const char *dir)
{
	char copy[PATH_MAX], cmd[3 * PATH_MAX];
	struct opts o;

	ok(load_headers(prog, 0) == 0 && image_read_note(&im, &o) == NULL && !o.set, "unstamped: no note, defaults");
	sys_close(im.fd);
	snprintf(copy, sizeof(copy), "%s/stamped", dir);
	/* TIEXEC_TEST_RUN: how this machine runs the build's programs (a
	 * cross build's emulator, scripts/cross), or empty. */
	const char *run = getenv("TIEXEC_TEST_RUN");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && %s '%s' --force --strategy=thp --min-text=4M '%s' >/dev/null", prog,
		 copy, run ? run : "", stamp, copy);
	if (system(cmd) != 0) {
		ok(0, "tiexec-stamp %s", copy);
		return;
	}
	ok(load_headers(copy, 0) == 0 && image_read_note(&im, &o) == NULL && o.strategy == ST_THP &&
		   o.min_text == (4u << 20) && (o.set & OPT_STRATEGY) && (o.set & OPT_MIN_TEXT),
	   "stamped --strategy=thp --min-text=4M: the note says so");
	sys_close(im.fd);
}

/* The line of /proc/self/maps for address a: its perms into p. */
static int perms_at(uint64_t a, char p[5])
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && a >= lo && a < hi)
			found = 1;
	}
	if (f)
		fclose(f);
	return found;
}

static void test_place(const char *prog)
{
	if (load_headers(prog, 0) != 0) {
		ok(0, "headers of %s", prog);
		return;
	}
	image_place(&im, 0, ST_AUTO, 0, 0, TX_HUGE, 0);
	image_map(&im);
	int all = 1, text = -1;
	for (unsigned i = 0; i < im.nsegs; i++) {
		const struct seg *s = &im.segs[i];
		char p[5], want[5] = "---p";
		int prot = prot_of(s->flags);
		want[0] = prot & PROT_READ ? 'r' : '-';
		want[1] = prot & PROT_WRITE ? 'w' : '-';
		want[2] = prot & PROT_EXEC ? 'x' : '-';
		if (!perms_at(s->vaddr, p) || strcmp(p, want)) {
			all = 0;
			diag("segment %u at %#lx: %s, want %s", i, (unsigned long)s->vaddr, p, want);
		}
		if (s->flags & PF_X)
			text = (int)i;
	}
	ok(im.nsegs > 0 && all, "%u segments mapped at bias %#lx, each with its protection", im.nsegs,
	   (unsigned long)im.bias);
	ok(text >= 0 && layout_file_congruent(&im.segs[text]), "the text lies congruent to its file offset (modulo %llu)",
	   (unsigned long long)TX_HUGE);
	ok(memcmp((void *)(uintptr_t)im.segs[0].vaddr, ELFMAG, SELFMAG) == 0, "the first segment holds the ELF header");
	size_t nd = 0;
	const Elf64_Dyn *dyn = image_dynamic(&im, 0, &nd);
	ok(dyn && nd > 0, "its dynamic section is found in the mapping (%zu entries)", nd);
	ok(im.res_lo <= im.segs[0].vaddr && im.segs[im.nsegs - 1].vaddr < im.res_hi, "inside the range reserved for it");
	sys_close(im.fd);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/test-image.XXXXXX";

	if (argc < 3 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: test-image PROG TIEXEC-STAMP\n");
		return 2;
	}
	test_open(argv[1], dir);
	test_headers(argv[1], dir);
	test_note(argv[1], argv[2], dir);
	test_place(argv[1]);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("cannot remove %s", dir);
	return tap_done();
}
