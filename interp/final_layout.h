/* The final stage's data as both the C code and each arch's asm
 * (arch/<cpu>/arch_final.h) read it: one layout for every port,
 * the registers the program starts with (struct arch_regs, ARCH_REGS_SIZE
 * bytes: arch_entry.h) the only part that is the arch's.  The AF_*
 * offsets are plain sums, so that the asm can take them as displacements
 * (ARCH_STR), and are checked against the compiler's. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <linux/prctl.h>

#include "arch_entry.h"

#define ARCH_S_(x) #x
#define ARCH_STR(x) ARCH_S_(x)

/* How the final stage points /proc/PID/exe at the program. */
#define ARCH_EXE_NONE 0 /* it does not: the link stays, or was set before */
#define ARCH_EXE_MAP 1  /* PR_SET_MM_MAP with exe_fd (CAP_CHECKPOINT_RESTORE) */
#define ARCH_EXE_FILE 2 /* PR_SET_MM_EXE_FILE (CAP_SYS_RESOURCE) */

struct arch_final {
	uint64_t loader_lo, loader_len;
	uint64_t exe_mode;        /* ARCH_EXE_* */
	uint64_t exe_fd;
	uint64_t entry;
	uint64_t page;            /* this page */
	uint64_t gadget;          /* the munmap gadget, or 0 */
	uint64_t drop_caps;       /* capset to nothing; bit 0: dumpable (caps.h) */
	uint32_t cap_hdr[2];      /* version 3, pid 0 */
	uint32_t cap_data[6];     /* all zero */
	uint64_t tmp_lo, tmp_len; /* where the stack block was built */
	uint64_t mm[13];          /* struct prctl_mm_map */
	uint64_t sp;              /* the program's stack pointer; 0: it already is */
	struct arch_regs regs;    /* the registers the program starts with */
	uint64_t page_len;        /* bytes the gadget unmaps at page */
	uint64_t loader2_lo, loader2_len; /* the loader's second range, if any */
};

#define AF_LOADER_LO 0
#define AF_LOADER_LEN 8
#define AF_EXE_MODE 16
#define AF_EXE_FD 24
#define AF_ENTRY 32
#define AF_PAGE 40
#define AF_GADGET 48
#define AF_DROP_CAPS 56
#define AF_CAP_HDR 64
#define AF_CAP_DATA 72
#define AF_TMP_LO 96
#define AF_TMP_LEN 104
#define AF_MM 112
#define AF_SP 216
#define AF_REGS 224
#define AF_PAGE_LEN 224 + ARCH_REGS_SIZE
#define AF_LOADER2_LO 232 + ARCH_REGS_SIZE
#define AF_LOADER2_LEN 240 + ARCH_REGS_SIZE
#define ARCH_MM_MAP_SIZE 104
#define AF_CHECK(f, o) _Static_assert(offsetof(struct arch_final, f) == o, #f " is at " #o " in the asm")
AF_CHECK(loader_lo, AF_LOADER_LO);
AF_CHECK(loader_len, AF_LOADER_LEN);
AF_CHECK(exe_mode, AF_EXE_MODE);
AF_CHECK(exe_fd, AF_EXE_FD);
AF_CHECK(entry, AF_ENTRY);
AF_CHECK(page, AF_PAGE);
AF_CHECK(gadget, AF_GADGET);
AF_CHECK(drop_caps, AF_DROP_CAPS);
AF_CHECK(cap_hdr, AF_CAP_HDR);
AF_CHECK(cap_data, AF_CAP_DATA);
AF_CHECK(tmp_lo, AF_TMP_LO);
AF_CHECK(tmp_len, AF_TMP_LEN);
AF_CHECK(mm, AF_MM);
AF_CHECK(sp, AF_SP);
AF_CHECK(regs, AF_REGS);
AF_CHECK(page_len, AF_PAGE_LEN);
AF_CHECK(loader2_lo, AF_LOADER2_LO);
AF_CHECK(loader2_len, AF_LOADER2_LEN);
_Static_assert(sizeof(struct arch_regs) == ARCH_REGS_SIZE, "ARCH_REGS_SIZE is struct arch_regs's size");
_Static_assert(sizeof(struct prctl_mm_map) == ARCH_MM_MAP_SIZE, "prctl_mm_map's size");
