/* Whether the file system a file lives on gives its page cache 2 MiB
 * folios on this kernel -- what the zero-copy strategy needs.  Where it
 * cannot, evicting the file's small folios and reading them back is pure
 * waste (each start read a 16 MiB program three times on btrfs, then
 * copied it anyway), so nothing is evicted or read there.
 *
 * Known, by statfs's f_type and the kernel's release (uname):
 *   ext4     from Linux 6.16
 *   xfs      from Linux 5.18 (measured: none on 5.10, all on 6.1)
 *   tmpfs    always (its own huge= mount option decides)
 *   btrfs, squashfs, FUSE, ramfs: not on any kernel tiexec knows
 * Anything else (overlayfs, whose files are another file system's; NFS,
 * erofs, ...) is tried, as before.  Pure system calls, no runtime: the
 * loader and tiexec-warm share it. */
#pragma once

enum fs_folios { FS_FOLIOS_YES, FS_FOLIOS_NO, FS_FOLIOS_UNKNOWN };

struct fs_info {
	enum fs_folios folios;
	int overlay;      /* overlayfs: its files' pages are another file's */
	const char *name; /* "btrfs", ...; "this file system" when unknown */
	unsigned major, minor; /* the kernel's release */
};

/* For the file open at fd. */
void fs_folios(int fd, struct fs_info *fi);

/* The kernel's release, major and minor (uname, asked once); 0.0 when it
 * cannot be read. */
void kernel_release(unsigned *major, unsigned *minor);

/* Whether the file open at fd lives on a tmpfs (the text cache's home). */
int fs_is_tmpfs(int fd);

