/* $ORIGIN (interp/origin.c): expansion as glibc's and musl's dynamic
 * linkers read the token ("$ORIGIN" ends at a character that cannot be part
 * of a name, "${ORIGIN}" is delimited), and origin_find on a synthetic
 * mapped image: which dynamic entries it fixes, and which images it leaves
 * alone.  Links origin.c and dynamic.c alone: no loader state. */
#include <elf.h>
#include <string.h>

#include "image.h"
#include "origin.h"
#include "tap.h"

static void expands(const char *in, const char *dir, const char *want)
{
	char out[512];
	size_t n = origin_expand(in, dir, out);
	ok(n == strlen(want) + 1 && strcmp(out, want) == 0, "'%s' in %s -> '%s' (got '%s')", in, dir,
	   want, out);
	ok(origin_has(in) == (strcmp(in, want) != 0), "origin_has('%s')", in);
}

/* A program "mapped" at mem: one segment of 8 KiB, its dynamic section at
 * 0x100, its string table at 0x800. */
#define DYN_AT 0x100
#define STR_AT 0x800
static unsigned char mem[8192] __attribute__((aligned(4096)));
static struct image im;
static size_t strsz;

static uint64_t str(const char *s)
{
	uint64_t off = strsz;
	memcpy(mem + STR_AT + off, s, strlen(s) + 1);
	strsz += strlen(s) + 1;
	return off;
}

/* Builds the image: dynamic entries tags[i] naming strings[i] (a NULL
 * string: d_val as given in vals[i]), then DT_STRTAB, DT_STRSZ, DT_NULL. */
static void build(const int64_t *tags, const char *const *strings, unsigned n, uint32_t seg_flags)
{
	Elf64_Dyn *d = (Elf64_Dyn *)(mem + DYN_AT);
	unsigned k = 0;

	memset(mem, 0, sizeof(mem));
	memset(&im, 0, sizeof(im));
	strsz = 1; /* offset 0: the empty string */
	for (unsigned i = 0; i < n; i++) {
		d[k].d_tag = tags[i];
		d[k++].d_un.d_val = str(strings[i]);
	}
	d[k].d_tag = DT_STRTAB;
	d[k++].d_un.d_ptr = STR_AT;
	d[k].d_tag = DT_STRSZ;
	d[k++].d_un.d_val = strsz;
	d[k].d_tag = DT_NULL;
	d[k++].d_un.d_val = 0;
	im.bias = (uint64_t)(uintptr_t)mem;
	im.eh.e_phnum = 1;
	im.ph[0].p_type = PT_DYNAMIC;
	im.ph[0].p_vaddr = DYN_AT;
	im.ph[0].p_memsz = k * sizeof(Elf64_Dyn);
	im.segs[0].vaddr = (uint64_t)(uintptr_t)mem;
	im.segs[0].memsz = sizeof(mem);
	im.segs[0].flags = seg_flags;
	im.nsegs = 1;
}

/* Applies the fixes as the stack stage does: expanded strings in out, the
 * entries pointed at them.  Returns the string entry i now names. */
static const char *apply_and_read(struct origin_fix *fx, unsigned n, const char *dir, unsigned entry)
{
	static char out[1024];
	size_t at = 0;

	for (unsigned i = 0; i < n; i++) {
		origin_expand(fx[i].src, dir, out + at);
		*fx[i].dval = (uint64_t)(uintptr_t)out + at - fx[i].strtab;
		at += fx[i].outlen;
	}
	const Elf64_Dyn *d = (const Elf64_Dyn *)(mem + DYN_AT);
	return (const char *)(uintptr_t)(im.bias + STR_AT + d[entry].d_un.d_val);
}

static void finds(void)
{
	static const int64_t tags[] = {DT_NEEDED, DT_NEEDED, DT_RUNPATH, DT_SONAME, DT_RPATH};
	static const char *const strings[] = {"libc.so.6", "$ORIGIN/libx.so", "$ORIGIN/../lib:/usr/lib",
					      "$ORIGIN-not-looked-at", "${ORIGIN}"};
	struct origin_fix fx[ORIGIN_MAX_FIX];

	build(tags, strings, 5, PF_R | PF_W);
	unsigned n = origin_find(&im, fx, "/opt/app");
	ok(n == 3, "three entries hold $ORIGIN: DT_NEEDED, DT_RUNPATH, DT_RPATH; not DT_SONAME (got %u)", n);
	ok(n >= 1 && fx[0].outlen == strlen("/opt/app/libx.so") + 1, "the expanded size is counted");
	ok(fx[0].strtab == im.bias + STR_AT, "DT_STRTAB relocated by the bias");
	ok(strcmp(apply_and_read(fx, n, "/opt/app", 1), "/opt/app/libx.so") == 0, "DT_NEEDED names the expanded string");
	ok(strcmp((const char *)(mem + STR_AT + 1), "libc.so.6") == 0, "the string table is left alone");
	const Elf64_Dyn *d = (const Elf64_Dyn *)(mem + DYN_AT);
	ok(strcmp((const char *)(uintptr_t)(im.bias + STR_AT + d[2].d_un.d_val), "/opt/app/../lib:/usr/lib") == 0,
	   "DT_RUNPATH names the expanded string");
	ok(strcmp((const char *)(uintptr_t)(im.bias + STR_AT + d[4].d_un.d_val), "/opt/app") == 0,
	   "DT_RPATH ${ORIGIN} expanded");
}

static void leaves_alone(void)
{
	static const int64_t tags[] = {DT_RUNPATH};
	static const char *const strings[] = {"$ORIGIN/lib"};
	struct origin_fix fx[ORIGIN_MAX_FIX];

	build(tags, strings, 1, PF_R);
	ok(origin_find(&im, fx, "/a") == 0, "a read-only dynamic section: nothing (it cannot be written)");

	build(tags, strings, 1, PF_R | PF_W);
	im.ph[0].p_type = PT_NOTE;
	ok(origin_find(&im, fx, "/a") == 0, "no PT_DYNAMIC: nothing");

	build(tags, strings, 1, PF_R | PF_W);
	im.segs[0].memsz = STR_AT + 4; /* the string table runs past the segment */
	ok(origin_find(&im, fx, "/a") == 0, "a string table outside the mapped segments: nothing");

	build(tags, strings, 1, PF_R | PF_W);
	Elf64_Dyn *d = (Elf64_Dyn *)(mem + DYN_AT);
	d[0].d_un.d_val = 0x7000; /* past DT_STRSZ */
	ok(origin_find(&im, fx, "/a") == 0, "a string offset past DT_STRSZ: skipped");

	build(tags, strings, 1, PF_R | PF_W);
	d[2].d_un.d_val = 3; /* DT_STRSZ cuts "$ORIGIN/lib" before its NUL */
	ok(origin_find(&im, fx, "/a") == 0, "a string not terminated inside DT_STRSZ: skipped");

	static const int64_t plain_tags[] = {DT_NEEDED, DT_RUNPATH};
	static const char *const plain[] = {"libm.so.6", "/usr/lib/app"};
	build(plain_tags, plain, 2, PF_R | PF_W);
	ok(origin_find(&im, fx, "/a") == 0, "no $ORIGIN anywhere: nothing");
}

int main(void)
{
	expands("$ORIGIN/lib", "/opt/app", "/opt/app/lib");
	expands("${ORIGIN}/lib", "/opt/app", "/opt/app/lib");
	expands("$ORIGIN", "/", "/");
	expands("$ORIGIN/../lib:$ORIGIN/lib64:/usr/lib", "/a", "/a/../lib:/a/lib64:/usr/lib");
	expands("$ORIGINAL/lib", "/a", "$ORIGINAL/lib");
	expands("$ORIGIN_X", "/a", "$ORIGIN_X");
	expands("${ORIGIN}x", "/a", "/ax");
	expands("/usr/lib:$LIB", "/a", "/usr/lib:$LIB");
	expands("", "/a", "");
	expands("lib$ORIGIN.so", "/d", "lib/d.so");
	finds();
	leaves_alone();
	return tap_done();
}
