/* Runs a libFuzzer harness without libFuzzer: every file named, and every
 * file in every directory named, once through LLVMFuzzerTestOneInput, under
 * the unit tests' sanitizers.  Speaks TAP, one line per file: a crash or a
 * sanitizer report ends the run, which the test reports as failed. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tap.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static void one(const char *path)
{
	FILE *f = fopen(path, "rb");
	static uint8_t buf[1 << 20];
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;

	if (f) {
		fclose(f);
		/* A copy of exactly n bytes: reading past it is caught. */
		uint8_t *d = malloc(n ? n : 1);
		memcpy(d, buf, n);
		LLVMFuzzerTestOneInput(d, n);
		free(d);
	}
	ok(f != NULL, "%s (%zu bytes)", path, n);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			struct dirent **e;
			int k = scandir(argv[i], &e, NULL, alphasort);
			for (int j = 0; j < k; j++) {
				char p[4096];
				snprintf(p, sizeof(p), "%s/%s", argv[i], e[j]->d_name);
				if (e[j]->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode))
					one(p);
				free(e[j]);
			}
			free(e);
		} else {
			one(argv[i]);
		}
	}
	return tap_done();
}
