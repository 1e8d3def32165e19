/* x86-64: the ELF machine the loader runs, the one relocation it applies to
 * itself, and the top of the user address space. */
#pragma once

#include <elf.h>

#define ARCH_ELF_MACHINE EM_X86_64
#define ARCH_NAME "x86-64"
/* Debian's multiarch triplet: ld.so's built-in library directories are
 * /lib/TRIPLET and /usr/lib/TRIPLET there (warm/needed.c). */
#define ARCH_MULTIARCH "x86_64-linux-gnu"
/* glibc's dynamic linker, by its DT_SONAME (hookpoint.c). */
#define ARCH_LDSO_GLIBC "ld-linux-x86-64.so.2"
/* A static PIE's only dynamic relocation: base + addend (relocate_self). */
#define ARCH_R_RELATIVE R_X86_64_RELATIVE
/* Highest user address with 4-level paging (TASK_SIZE_MAX on x86-64). */
#define TX_USER_TOP 0x7ffffffff000ULL
