/* Which file systems give the page cache 2 MiB folios (see fsfolio.h). */
#include "fsfolio.h"

#include "bits.h"
#include "sys.h"

struct tx_statfs {
	long f_type, f_bsize;
	uint64_t f_blocks, f_bfree, f_bavail, f_files, f_ffree;
	int f_fsid[2];
	long f_namelen, f_frsize, f_flags, f_spare[4];
};

struct tx_utsname {
	char sysname[65], nodename[65], release[65], version[65], machine[65], domainname[65];
};

static const struct {
	unsigned long magic;
	const char *name;
	unsigned since_major, since_minor; /* 0, 0: always; ~0: never */
} known[] = {
	{0xef53, "ext4", 6, 16},
	{0x58465342, "xfs", 5, 18},
	{0x01021994, "tmpfs", 0, 0},
	{0x9123683e, "btrfs", ~0U, 0},
	{0x73717368, "squashfs", ~0U, 0},
	{0x65735546, "FUSE", ~0U, 0},
	{0x858458f6, "ramfs", ~0U, 0},
	{0x794c7630, "overlayfs", ~1U, 0}, /* the file system below decides */
};
#define OVERLAYFS_MAGIC 0x794c7630UL
#define TMPFS_MAGIC 0x01021994UL

static unsigned number(const char **p)
{
	unsigned v = 0;

	while (**p >= '0' && **p <= '9')
		v = v * 10 + (unsigned)(*(*p)++ - '0');
	return v;
}

void kernel_release(unsigned *major, unsigned *minor)
{
	static struct tx_utsname u TX_HOT;
	static unsigned ma TX_HOT, mi TX_HOT, asked TX_HOT;

	if (!asked++ && SC(__NR_uname, &u, 0, 0, 0, 0, 0) == 0) {
		const char *p = u.release;
		ma = number(&p);
		if (*p == '.')
			p++;
		mi = number(&p);
	}
	*major = ma;
	*minor = mi;
}

void fs_folios(int fd, struct fs_info *fi)
{
	struct tx_statfs sf;

	fi->folios = FS_FOLIOS_UNKNOWN;
	fi->overlay = 0;
	fi->name = "this file system";
	kernel_release(&fi->major, &fi->minor);
	if (SC(__NR_fstatfs, fd, &sf, 0, 0, 0, 0) < 0)
		return;
	for (unsigned i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if ((unsigned long)(unsigned)sf.f_type != known[i].magic)
			continue;
		fi->name = known[i].name;
		fi->overlay = known[i].magic == OVERLAYFS_MAGIC;
		if (known[i].since_major == ~1U)
			fi->folios = FS_FOLIOS_UNKNOWN;
		else if (known[i].since_major == ~0U)
			fi->folios = FS_FOLIOS_NO;
		else if (fi->major > known[i].since_major ||
			 (fi->major == known[i].since_major && fi->minor >= known[i].since_minor))
			fi->folios = FS_FOLIOS_YES;
		else
			fi->folios = FS_FOLIOS_NO;
	}
}


int fs_is_tmpfs(int fd)
{
	struct tx_statfs sf;

	return SC(__NR_fstatfs, fd, &sf, 0, 0, 0, 0) == 0 && (unsigned long)(unsigned)sf.f_type == TMPFS_MAGIC;
}
