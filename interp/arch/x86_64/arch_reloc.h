/* x86-64: the ELF machine the loader runs, the one relocation it applies to
 * itself, and the top of the user address space. */
#pragma once

#include <elf.h>

#define ARCH_ELF_MACHINE EM_X86_64
/* A static PIE's only dynamic relocation: base + addend (relocate_self). */
#define ARCH_R_RELATIVE R_X86_64_RELATIVE
/* Highest user address with 4-level paging (TASK_SIZE_MAX on x86-64). */
#define TX_USER_TOP 0x7ffffffff000ULL
