/* x86-64: the ELF ABI as the loader and the tools meet it -- the machine
 * and its name, the multiarch triplet, glibc's ld.so, the one relocation
 * the loader applies to itself, and the GNU property that changes how
 * text is mapped. */
#pragma once

#include <elf.h>

#define ARCH_ELF_MACHINE EM_X86_64
#define ARCH_NAME "x86-64"
/* Debian's multiarch triplet: ld.so's built-in library directories are
 * /lib/TRIPLET and /usr/lib/TRIPLET there (common/needed.c). */
#define ARCH_MULTIARCH "x86_64-linux-gnu"
/* glibc's dynamic linker, by its DT_SONAME (hookpoint.c). */
#define ARCH_LDSO_GLIBC "ld-linux-x86-64.so.2"
/* A static PIE's only dynamic relocation: base + addend (relocate_self). */
#define ARCH_R_RELATIVE R_X86_64_RELATIVE
/* The GNU property (PT_GNU_PROPERTY) whose bits change how the kernel maps
 * a program's text, and the protection bits it adds: none on x86-64 (IBT
 * and shadow stacks are not mapping flags). */
#define ARCH_PROPERTY_TYPE 0
static inline int arch_exec_prot(unsigned bits, unsigned long hwcap2)
{
	(void)bits;
	(void)hwcap2;
	return 0;
}
