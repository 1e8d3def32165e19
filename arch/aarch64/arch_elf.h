/* arm64: the ELF ABI as the loader and the tools meet it -- the machine
 * and its name, the multiarch triplet, glibc's ld.so, the one relocation
 * the loader applies to itself, and the GNU property that changes how
 * text is mapped. */
#pragma once

#include <elf.h>

#define ARCH_ELF_MACHINE EM_AARCH64
#define ARCH_NAME "arm64"
/* Debian's multiarch triplet: ld.so's built-in library directories are
 * /lib/TRIPLET and /usr/lib/TRIPLET there (common/needed.c). */
#define ARCH_MULTIARCH "aarch64-linux-gnu"
/* glibc's dynamic linker, by its DT_SONAME (hookpoint.c). */
#define ARCH_LDSO_GLIBC "ld-linux-aarch64.so.1"
/* A static PIE's only dynamic relocation: base + addend (relocate_self). */
#define ARCH_R_RELATIVE R_AARCH64_RELATIVE
/* BTI: where an object's GNU property GNU_PROPERTY_AARCH64_FEATURE_1_AND
 * has GNU_PROPERTY_AARCH64_FEATURE_1_BTI and the CPU has BTI
 * (HWCAP2_BTI), the kernel maps the executable segments of the
 * interpreter, or of a program without one, PROT_BTI
 * (arch/arm64/kernel/process.c, arch_elf_adjust_prot); glibc's ld.so
 * does the same for the program and the libraries it maps.  mmap refuses
 * PROT_BTI on a CPU without BTI. */
#define ARCH_PROPERTY_TYPE 0xc0000000u /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
static inline int arch_exec_prot(unsigned bits, unsigned long hwcap2)
{
	return (bits & 1u) && (hwcap2 & (1UL << 17)) ? 0x10 /* PROT_BTI */ : 0;
}
