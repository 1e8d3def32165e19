/* Reading an ELF image with libelf, and computing the stamped or unstamped
 * image as a new byte buffer.  Works on memory only (no file I/O) and never
 * prints: failures come back as a short reason in `why`. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "note.h"

/* What tiexec-stamp needs to know about a file. */
struct elf_facts {
	size_t size;
	uint16_t type;               /* e_type */
	uint64_t phoff;              /* e_phoff */
	uint16_t phnum, phentsize;   /* e_phnum (raw), e_phentsize */
	uint32_t flags0;             /* p_flags of program header 0 (if e_phoff == 64) */
	int marked;                  /* the marker bit is set */
	int has_interp;              /* PT_INTERP */
	int df1_pie;                 /* DT_FLAGS_1 has DF_1_PIE */
	char soname[64];             /* DT_SONAME's name ("" if none; "?" unreadable) */
	uint64_t text;               /* bytes of file-backed executable segments */
	uint64_t text_huge;          /* ... of them in whole 2 MiB-aligned pieces */
	uint64_t text_round;         /* the 2 MiB pieces they touch (--round-out) */
	int text_incongruent;        /* one's p_offset differs from p_vaddr mod 2 MiB */
	/* The first ELF_XSEG of them, for counting pieces of another size
	 * (a PMD larger than 2 MiB: text_in_pieces); nxseg counts them all. */
#define ELF_XSEG 8
	struct { uint64_t vaddr, filesz; } xseg[ELF_XSEG];
	unsigned nxseg;
	uint64_t seg_end;            /* the largest p_offset + p_filesz */
	int debug_only;              /* an executable PT_LOAD with no file bytes:
				      * objcopy --only-keep-debug's output */
	uint64_t shoff;              /* e_shoff, e_shnum, e_shstrndx, e_shentsize (raw) */
	uint16_t shnum, shstrndx, shentsize;
	int str_ok;                  /* the section-name table is a usable SHT_STRTAB */
	uint64_t str_off, str_size;  /* ... and where it is */
	/* The first SHT_NOTE section named ".note.tiexec", if any. */
	int note_found;
	uint16_t note_ndx;
	uint64_t note_sec_off, note_sec_size;
	int note_shared;             /* its bytes are also in a segment or another section */
	int note_in_segment;         /* ... in a segment */
	/* Its tiexec policy note, if any. */
	int note_ok;                 /* a policy note that policy_decode accepted */
	int note_present;            /* a note with owner "tiexec" and TIEXEC_NT_POLICY */
	uint64_t desc_off, desc_len; /* where its descriptor is in the file */
	enum policy_status pstatus;
	struct tiexec_policy policy;
};

/* Fills f from the image buf[0..len).  0 on success; -1 with a reason in why
 * for a file that is no 64-bit little-endian x86-64 ELF file, or one libelf
 * cannot read.  Decides nothing else: see stamp_refusal. */
int elf_facts_read(const unsigned char *buf, size_t len, struct elf_facts *f, char *why,
		   size_t whylen);

/* Bytes of f's executable segments in whole unit-aligned pieces (unit a
 * power of two), by address, as the loader places text on a PMD larger
 * than 2 MiB.  Segments past the first ELF_XSEG are not counted. */
uint64_t text_in_pieces(const struct elf_facts *f, uint64_t unit);

/* What a file with debug_only set is, for messages. */
#define ELF_DEBUG_ONLY "a separate debug file (objcopy --only-keep-debug): its text is not in it"

/* Why tiexec-stamp will not stamp this file (a short reason), or NULL. */
const char *stamp_refusal(const struct elf_facts *f);

/* The stamped image of buf (which stamp_refusal accepted) with the policy
 * fields of want (its orig_* fields are ignored): a new buffer in *out of
 * *outlen bytes for the caller to free.  0 on success, -1 with why. */
int stamp_build(const unsigned char *buf, const struct elf_facts *f,
		const struct tiexec_policy *want, unsigned char **out, size_t *outlen, char *why,
		size_t whylen);

enum remove_kind {
	REMOVE_NOTHING, /* not stamped: no marker bit, no note; *out is NULL */
	REMOVE_BIT,     /* only the marker bit (the note was gone): bit cleared */
	REMOVE_EXACT,   /* undone byte for byte from the note's orig_* fields */
	REMOVE_DROP,    /* the file was rewritten after stamping: bit cleared and
			 * the note's section header dropped in place */
};
/* The unstamped image of buf, as for stamp_build.  0 on success (with
 * *kind), -1 with why. */
int remove_build(const unsigned char *buf, const struct elf_facts *f, enum remove_kind *kind,
		 unsigned char **out, size_t *outlen, char *why, size_t whylen);
