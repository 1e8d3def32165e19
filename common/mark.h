/* The tiexec mark: how a binary asks to be run through tiexec.
 *
 * Shared by tiexec-stamp (which writes it) and the loader (which reads it);
 * scripts/tiexec-binfmt and packaging/binfmt.d/tiexec.conf repeat the
 * binfmt_misc rule below (a test checks they agree).  Two parts:
 *
 * 1. The marker, which the kernel can match.  binfmt_misc only sees the
 *    first 256 bytes of a file, so the marker is bit TIEXEC_MARK_FLAG of the
 *    first program header's p_flags.  The bit lies inside PF_MASKOS
 *    (0x0ff00000, reserved for OS-specific meanings, ignored by the kernel's
 *    ELF loader, glibc's ld.so, strip and objcopy) and is not libhugetlbfs's
 *    PF_LINUX_HUGETLB (0x00100000).  The first program header must start at
 *    e_phoff == 64 (right after the ELF header), so the bit is always the
 *    byte at file offset TIEXEC_MARK_BYTE.  The e_ident padding is not used:
 *    glibc refuses nonzero padding, which would break ldd and "ld.so prog".
 *
 * 2. The note, which holds the policy: a section ".note.tiexec" of type
 *    SHT_NOTE, not loaded (no PT_LOAD or PT_NOTE covers it), holding one ELF
 *    note with owner "tiexec", type TIEXEC_NT_POLICY and as descriptor a
 *    struct tiexec_policy in little-endian byte order.
 *
 * Version rule.  `version` changes only when the meaning of an existing
 * field changes; a reader ignores a note whose version it does not know
 * (the program then runs with defaults).  New fields are appended at the end
 * without changing `version`: `size` says how many bytes of the descriptor
 * were written, and a reader takes a field as unset when it lies beyond
 * `size`.  A program whose marker is set but whose note is missing or
 * unreadable runs with defaults.
 *
 * Precedence in the loader: defaults < note < TIEXEC_* environment <
 * command-line options. */
#pragma once

#include <stdint.h>

#define TIEXEC_MARK_FLAG 0x00400000u
#define TIEXEC_MARK_PHOFF 64
#define TIEXEC_MARK_BYTE (TIEXEC_MARK_PHOFF + 4 + 2) /* (p_flags >> 16) & 0xff */

#define TIEXEC_NOTE_SECTION ".note.tiexec"
#define TIEXEC_NOTE_OWNER "tiexec"
/* Not 1 or 2: readelf names those NT_VERSION and NT_ARCH for any owner. */
#define TIEXEC_NT_POLICY 0x74780001u
#define TIEXEC_POLICY_VERSION 1

#define TIEXEC_UNSET32 0xffffffffu
#define TIEXEC_UNSET64 0xffffffffffffffffull

/* The strategy: the note's values, and the loader's and the tools' one enum. */
enum strategy {
	ST_AUTO = 0,
	ST_FILE = 1,
	ST_THP = 2,
	ST_HUGETLB = 3,
	ST_OFF = 4,
};

/* flags: a bit set turns a setting on; clear means "not asked for". */
#define TIEXEC_POLICY_ROUND_OUT 0x1u /* --round-out */
#define TIEXEC_POLICY_LAZY 0x2u      /* --lazy */
#define TIEXEC_POLICY_LIBS 0x4u      /* --libs: shared libraries too (the default) */
#define TIEXEC_POLICY_NO_LIBS 0x8u   /* --no-libs: the program's own text only */
#define TIEXEC_POLICY_WINDOWS 0x10u   /* --windows: libc in a 2 MiB window (the default) */
#define TIEXEC_POLICY_NO_WINDOWS 0x20u /* --no-windows: no library windows */

struct tiexec_policy {
	uint32_t version;  /* TIEXEC_POLICY_VERSION */
	uint32_t size;     /* bytes of this descriptor as written */
	uint32_t strategy; /* enum strategy, or TIEXEC_UNSET32 */
	uint32_t flags;    /* TIEXEC_POLICY_* */
	uint64_t min_text; /* bytes, or TIEXEC_UNSET64 */
	/* How to undo the stamp byte for byte (tiexec-stamp --remove): the
	 * file's size and section header fields before stamping, and the
	 * first program header's p_flags.  Zero when unknown. */
	uint64_t orig_size;
	uint64_t orig_shoff;
	uint16_t orig_shnum;
	uint16_t orig_shstrndx;
	uint32_t orig_flags0;
};

/* The binfmt_misc rule that sends marked programs to the loader is made by
 * the build (common/meson.build), from the layout above and the arch's
 * ARCH_ELF_MACHINE: name "tiexec", flags POF, a magic and mask over bytes
 * 0..70 ("\177ELF", 64-bit, little-endian, version 1, ET_EXEC or ET_DYN,
 * the loader's machine, e_phoff 64, e_phentsize 56, and the marker bit at
 * TIEXEC_MARK_BYTE).  scripts/tiexec-binfmt and packaging's rules are
 * filled in from it; tests/60-binfmt-register.bats checks them. */
