/* The shared text cache's names and trust checks (common/textcache.c), on
 * this machine's own directories: "/" and "/usr" are root's and writable by
 * nobody else, "/tmp" is writable by everyone, a symbolic link and a missing
 * directory are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "textcache.h"

static void names(void)
{
	struct statx st;
	char out[TEXTCACHE_NAME_MAX];

	memset(&st, 0, sizeof(st));
	st.stx_dev_major = 254;
	st.stx_dev_minor = 1;
	st.stx_ino = 0x1234;
	st.stx_size = 4096;
	st.stx_mtime.tv_sec = 0x6b118844;
	st.stx_mtime.tv_nsec = 5;
	st.stx_ctime.tv_sec = 0x6b118845;
	st.stx_ctime.tv_nsec = 0;
	size_t n = textcache_name(&st, out, sizeof(out));
	ok(n == strlen(out) && strcmp(out, "fe00000001.1234.1000.6b118844.5.6b118845.0") == 0,
	   "the name is the identity in hex (got '%s')", out);
	ok(textcache_name(&st, out, 10) == 0, "a buffer too small: no name");
	st.stx_mtime.tv_nsec = 6;
	char other[TEXTCACHE_NAME_MAX];
	textcache_name(&st, other, sizeof(other));
	ok(strcmp(out, other) != 0, "another modification time: another name");
}

static void trust(void)
{
	const char *why;

	ok(textcache_dir_untrusted("/") == NULL, "/ is trusted");
	ok(textcache_dir_untrusted("/usr/") == NULL, "/usr/ (trailing slash) is trusted");
	why = textcache_dir_untrusted("/tmp");
	ok(why && strstr(why, "writable by others"), "/tmp is refused: %s", why ? why : "(trusted)");
	why = textcache_dir_untrusted("usr");
	ok(why && strstr(why, "absolute"), "a relative path is refused: %s", why ? why : "(trusted)");
	why = textcache_dir_untrusted("/nonexistent-tiexec-dir/x");
	ok(why && strstr(why, "no cache directory"), "a missing directory: %s", why ? why : "(trusted)");
	char link[] = "/tmp/tiexec-tc-link.XXXXXX";
	int fd = mkstemp(link);
	close(fd);
	unlink(link);
	if (symlink("/usr", link) == 0) {
		why = textcache_dir_untrusted(link);
		ok(why != NULL, "a symbolic link (in /tmp) is refused: %s", why ? why : "(trusted)");
		unlink(link);
	}
	int efd = textcache_open("/usr", "no-such-entry-of-tiexec", &why);
	ok(efd < 0 && why == NULL, "no entry: -1 and no reason (%s)", why ? why : "none");
	efd = textcache_open("/", "bin", &why);
	ok(efd < 0 && why != NULL, "a directory (or link) as an entry is refused: %s", why ? why : "none");
}

int main(void)
{
	names();
	trust();
	return tap_done();
}
