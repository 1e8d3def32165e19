#include "rt.h"

#include <errno.h>

const char *tx_strerror(long err)
{
	switch (err) {
	case EPERM: return "Operation not permitted";
	case ENOENT: return "No such file or directory";
	case EIO: return "Input/output error";
	case ENOEXEC: return "Exec format error";
	case EBADF: return "Bad file descriptor";
	case ENOMEM: return "Cannot allocate memory";
	case EACCES: return "Permission denied";
	case EFAULT: return "Bad address";
	case EBUSY: return "Device or resource busy";
	case EEXIST: return "File exists";
	case ENOTDIR: return "Not a directory";
	case EISDIR: return "Is a directory";
	case EINVAL: return "Invalid argument";
	case ENFILE: return "Too many open files in system";
	case EMFILE: return "Too many open files";
	case ETXTBSY: return "Text file busy";
	case EFBIG: return "File too large";
	case ENOSPC: return "No space left on device";
	case ENAMETOOLONG: return "File name too long";
	case ELOOP: return "Too many levels of symbolic links";
	case EOVERFLOW: return "Value too large for defined data type";
	case E2BIG: return "Argument list too long";
	case ENODEV: return "No such device";
	case ENOSYS: return "Function not implemented";
	case EAGAIN: return "Resource temporarily unavailable";
	default: return "Unknown error";
	}
}

/* The message builder is bits.h's bounded tx_cat: a byte is kept free
 * for say()'s newline. */
void msg_str(struct msg *m, const char *s)
{
	tx_cat(m->b, sizeof(m->b), &m->n, s);
}

void msg_u64(struct msg *m, uint64_t v)
{
	tx_cat_u64(m->b, sizeof(m->b), &m->n, v);
}

void msg_hex(struct msg *m, uint64_t v)
{
	char t[17];

	msg_str(m, "0x");
	msg_str(m, tx_hex(t, v));
}

static void msg_tenths(struct msg *m, uint64_t tenths)
{
	msg_u64(m, tenths / 10);
	msg_str(m, ".");
	msg_u64(m, tenths % 10);
}

void msg_mib(struct msg *m, uint64_t bytes)
{
	msg_tenths(m, (bytes * 10 + (1 << 19)) >> 20);
}

void msg_size(struct msg *m, uint64_t bytes)
{
	if (bytes < (1u << 20)) {
		msg_u64(m, bytes);
		msg_str(m, " bytes");
		return;
	}
	msg_mib(m, bytes);
	msg_str(m, " MiB");
}

void msg_ms(struct msg *m, uint64_t ns)
{
	if (ns >= 9995000) {
		msg_tenths(m, (ns + 50000) / 100000);
		return;
	}
	uint64_t h = (ns + 5000) / 10000; /* hundredths below 10 ms */
	msg_u64(m, h / 100);
	msg_str(m, h % 100 < 10 ? ".0" : ".");
	msg_u64(m, h % 100);
}
