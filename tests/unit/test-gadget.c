/* The final stage's munmap gadgets (arch/<cpu>/arch_final.h):
 * which byte sequences count as a gadget, which registers they zero, and
 * whether such a gadget may end a return from the preinit call (only
 * registers a call may change).  x86-64: "syscall; xor r, r...; ret", the
 * first case being the gadget in Linux 6.11+'s vDSO (vgetrandom), which
 * spares the stage after ld.so its search of ld.so's text.  arm64:
 * "svc #0; ret" only, at an instruction boundary. */
#include <stddef.h>

#include "arch_final.h"
#include "tap.h"

static void zeroes(const char *what, const unsigned char *p, size_t n, long want)
{
	long got = arch_gadget_zeroes(p, n);
	ok(got == want, "%s: zeroes %#lx (got %#lx)", what, (unsigned long)want, (unsigned long)got);
	ok(arch_is_gadget(p, n) == (want >= 0), "%s: arch_is_gadget", what);
}

#if defined(__x86_64__)
static void cases(void)
{
	/* syscall; xor edx,edx; xor ecx,ecx; xor esi,esi; xor edi,edi; xor r11d,r11d; ret */
	static const unsigned char vdso[] = {0x0f, 0x05, 0x31, 0xd2, 0x31, 0xc9, 0x31, 0xf6,
					     0x31, 0xff, 0x45, 0x31, 0xdb, 0xc3, 0x90};
	static const unsigned char plain[] = {0x0f, 0x05, 0xc3};
	static const unsigned char rbx[] = {0x0f, 0x05, 0x31, 0xdb, 0xc3};          /* xor ebx,ebx */
	static const unsigned char r12[] = {0x0f, 0x05, 0x4d, 0x31, 0xe4, 0xc3};    /* xor r12,r12 */
	static const unsigned char r8q[] = {0x0f, 0x05, 0x4d, 0x33, 0xc0, 0xc3};    /* xor r8,r8 (33 form) */
	static const unsigned char mixed[] = {0x0f, 0x05, 0x31, 0xd8, 0xc3};        /* xor eax,ebx */
	static const unsigned char rexrb[] = {0x0f, 0x05, 0x44, 0x31, 0xc0, 0xc3};  /* xor eax,r8d */
	static const unsigned char nop[] = {0x0f, 0x05, 0x90, 0xc3};
	static const unsigned char noret[] = {0x0f, 0x05, 0x31, 0xd2};
	static const unsigned char notsys[] = {0x0f, 0x0b, 0xc3};

	zeroes("the vDSO's", vdso, sizeof(vdso), 0x8c6);
	ok(!(arch_gadget_zeroes(vdso, sizeof(vdso)) & ~ARCH_CALL_CLOBBERED),
	   "the vDSO's zeroes only registers a call may change");
	zeroes("syscall; ret", plain, sizeof(plain), 0);
	zeroes("xor ebx,ebx", rbx, sizeof(rbx), 1L << 3);
	ok(arch_gadget_zeroes(rbx, sizeof(rbx)) & ~ARCH_CALL_CLOBBERED, "%%rbx is kept across a call");
	zeroes("xor r12,r12", r12, sizeof(r12), 1L << 12);
	ok(arch_gadget_zeroes(r12, sizeof(r12)) & ~ARCH_CALL_CLOBBERED, "%%r12 is kept across a call");
	zeroes("xor r8,r8", r8q, sizeof(r8q), 1L << 8);
	zeroes("xor eax,ebx (two registers)", mixed, sizeof(mixed), -1);
	zeroes("xor eax,r8d (REX.R without REX.B)", rexrb, sizeof(rexrb), -1);
	zeroes("a nop before ret", nop, sizeof(nop), -1);
	zeroes("no ret within n", noret, sizeof(noret), -1);
	zeroes("ud2, not syscall", notsys, sizeof(notsys), -1);
}
#elif defined(__aarch64__)
static void cases(void)
{
	/* svc #0 = d4000001, ret = d65f03c0, nop = d503201f, svc #0x80 = d4001001 */
	static const unsigned char plain[] __attribute__((aligned(4))) = {1, 0, 0, 0xd4, 0xc0, 0x03, 0x5f, 0xd6};
	static const unsigned char shifted[] __attribute__((aligned(4))) = {0, 1, 0, 0, 0xd4, 0xc0, 0x03, 0x5f, 0xd6};
	static const unsigned char nop[] __attribute__((aligned(4))) = {1, 0, 0, 0xd4, 0x1f, 0x20, 0x03, 0xd5,
									 0xc0, 0x03, 0x5f, 0xd6};
	static const unsigned char svc80[] __attribute__((aligned(4))) = {1, 0x10, 0, 0xd4, 0xc0, 0x03, 0x5f, 0xd6};

	zeroes("svc #0; ret", plain, sizeof(plain), 0);
	ok(!(arch_gadget_zeroes(plain, sizeof(plain)) & ~ARCH_CALL_CLOBBERED), "svc #0; ret may end a call");
	zeroes("svc #0; ret one byte into a word", shifted + 1, sizeof(shifted) - 1, -1);
	zeroes("a nop before ret", nop, sizeof(nop), -1);
	zeroes("svc #0x80, not svc #0", svc80, sizeof(svc80), -1);
	zeroes("no ret within n", plain, 4, -1);
}
#endif

int main(void)
{
	cases();
	return tap_done();
}
