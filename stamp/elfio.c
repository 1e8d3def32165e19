/* Reading a program with libelf, and making the stamped or unstamped image.
 *
 * libelf (gelf) reads and validates: the ELF header, the program headers
 * (PT_INTERP, PT_DYNAMIC's DT_FLAGS_1), the sections and their notes.  The
 * new image is written byte by byte here, not with elf_update: libelf lays a
 * file out again when it writes it (it refills the gaps between sections,
 * may move sections and the section header table, and rewrites headers from
 * its own view), while a stamp must leave every original byte where it is,
 * so that no loadable byte moves or changes and --remove can give back the
 * exact original.
 *
 * The layout of a stamp (note.h, layout_compute):
 *
 *   [original file, untouched but for e_shoff, e_shnum, e_shstrndx and the
 *    marker bit in program header 0's p_flags]
 *   [pad to 8] [copy of the section-name table + ".note.tiexec\0"]
 *   [pad to 8] [the note]
 *   [pad to 8] [new section header table: the original entries, the name
 *               table's entry pointing at the copy, + the note's entry]
 *
 * The note records the original size and header fields, so --remove
 * truncates and restores them.  No segment covers anything appended, so the
 * kernel, ld.so and the loader never see it. */
#include "elfio.h"
#include "why.h"

#include "arch_elf.h" /* ARCH_ELF_MACHINE, ARCH_NAME: the loader's machine */
#include "elfcheck.h"    /* elf_check_ident */
#include "layout.h"      /* the piece arithmetic */

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Raw offsets of the fields written here. */
#define EH_SHOFF 40
#define EH_SHENTSIZE 58
#define EH_SHNUM 60
#define EH_SHSTRNDX 62
#define PH0_FLAGS (TIEXEC_MARK_PHOFF + 4)
#define SHDR_SIZE 64
#define SYM_SIZE 24


static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/* DT_FLAGS_1 & DF_1_PIE in the dynamic segment. */
/* The string at strtab + at (a DT_STRTAB address and offset) into out, as
 * far as it is printable; "?" when no segment holds it. */
static void soname_read(Elf *elf, uint64_t strtab, uint64_t at, char *out, size_t outlen)
{
	size_t len, n;
	const char *raw = elf_rawfile(elf, &len);
	GElf_Phdr ph;

	snprintf(out, outlen, "?");
	if (!raw || elf_getphdrnum(elf, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || strtab < ph.p_vaddr ||
		    strtab - ph.p_vaddr >= ph.p_filesz || at >= ph.p_filesz - (strtab - ph.p_vaddr))
			continue;
		uint64_t off = ph.p_offset + (strtab - ph.p_vaddr) + at;
		size_t k = 0;
		while (off + k < len && k + 1 < outlen && raw[off + k] > ' ' && raw[off + k] < 127) {
			out[k] = raw[off + k];
			k++;
		}
		out[k] = '\0';
		return;
	}
}

/* An executable segment's file-backed bytes [v, v + filesz) at offset
 * off: counted in f->text, its whole 2 MiB-aligned pieces in f->text_huge
 * and the pieces it touches in f->text_round (the loader puts a PIE at a
 * 2 MiB-aligned base, so addresses keep their offset). */
static void text_add(struct elf_facts *f, uint64_t v, uint64_t filesz, uint64_t off)
{
	uint64_t lo, hi, rlo, rhi;

	if (!filesz || v + filesz < v)
		return;
	layout_pieces(v, filesz, &lo, &hi);
	layout_pieces_touched(v, v + filesz, &rlo, &rhi);
	f->text += filesz;
	if (f->nxseg < ELF_XSEG) {
		f->xseg[f->nxseg].vaddr = v;
		f->xseg[f->nxseg].filesz = filesz;
	}
	f->nxseg++;
	if (hi > lo)
		f->text_huge += hi - lo;
	f->text_round += rhi - rlo;
	if (!layout_congruent(v, off))
		f->text_incongruent = 1;
}

uint64_t text_in_pieces(const struct elf_facts *f, uint64_t unit)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < f->nxseg && i < ELF_XSEG; i++) {
		uint64_t v = f->xseg[i].vaddr, end = v + f->xseg[i].filesz;
		uint64_t a = tx_up(v, unit), b = tx_down(end, unit);
		if (a >= v && b > a)
			sum += b - a;
	}
	return sum;
}

/* DF_1_PIE and DT_SONAME from the dynamic segment ph. */
static void dyn_scan(Elf *elf, const GElf_Phdr *ph, struct elf_facts *f)
{
	Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph->p_offset, ph->p_filesz, ELF_T_DYN);
	uint64_t strtab = 0, soname = 0;
	int has_soname = 0;
	GElf_Dyn dyn;

	if (!d)
		return;
	for (int i = 0; gelf_getdyn(d, i, &dyn); i++) {
		if (dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
			f->df1_pie = 1;
		if (dyn.d_tag == DT_STRTAB)
			strtab = dyn.d_un.d_ptr;
		if (dyn.d_tag == DT_SONAME) {
			has_soname = 1;
			soname = dyn.d_un.d_val;
		}
	}
	if (has_soname)
		soname_read(elf, strtab, soname, f->soname, sizeof(f->soname));
}

/* Looks for the policy note in the note section scn. */
static void find_policy(Elf_Scn *scn, const GElf_Shdr *sh, struct elf_facts *f)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	if (!d || !d->d_buf)
		return;
	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == TIEXEC_NT_POLICY && nh.n_namesz == sizeof(TIEXEC_NOTE_OWNER) &&
		    memcmp((const char *)d->d_buf + name_off, TIEXEC_NOTE_OWNER,
			   sizeof(TIEXEC_NOTE_OWNER)) == 0) {
			f->note_present = 1;
			f->desc_off = sh->sh_offset + desc_off;
			f->desc_len = nh.n_descsz;
			f->pstatus = policy_decode((const unsigned char *)d->d_buf + desc_off,
						   nh.n_descsz, &f->policy);
			f->note_ok = f->pstatus == POLICY_OK;
			return;
		}
		off = next;
	}
}

/* The program headers into f: the marker, the segments' end, the
 * interpreter, the dynamic section's facts, the text.  0, or -1 with why
 * (libelf checks that the table lies within the file). */
static int read_phdrs(Elf *elf, const GElf_Ehdr *eh, size_t len, size_t phnum, struct elf_facts *f, char *why,
		      size_t whylen)
{
	GElf_Phdr ph;

	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			return fail(why, whylen, "bad program header %zu: %s", i, elf_errmsg(-1));
		if (i == 0 && eh->e_phoff == TIEXEC_MARK_PHOFF) {
			f->flags0 = ph.p_flags;
			f->marked = !!(ph.p_flags & TIEXEC_MARK_FLAG);
		}
		if (ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
			return fail(why, whylen, "program header %zu reaches past the end of the file", i);
		if (ph.p_filesz && ph.p_offset + ph.p_filesz > f->seg_end)
			f->seg_end = ph.p_offset + ph.p_filesz;
		if (ph.p_type == PT_INTERP)
			f->has_interp = 1;
		if (ph.p_type == PT_DYNAMIC)
			dyn_scan(elf, &ph, f);
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			text_add(f, ph.p_vaddr, ph.p_filesz, ph.p_offset);
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && !ph.p_filesz && ph.p_memsz)
			f->debug_only = 1;
	}
	return 0;
}

/* Whether the tiexec note's section shares bytes with a segment (then it
 * is in the image) or with another section. */
static void note_overlaps(Elf *elf, const GElf_Ehdr *eh, size_t phnum, struct elf_facts *f)
{
	GElf_Phdr ph;
	GElf_Shdr sh;
	Elf_Scn *scn;

	for (size_t i = 0; i < phnum && gelf_getphdr(elf, (int)i, &ph); i++) {
		if (overlaps(ph.p_offset, ph.p_filesz, f->note_sec_off, f->note_sec_size))
			f->note_in_segment = f->note_shared = 1;
	}
	for (size_t i = 1; i < eh->e_shnum; i++) {
		if (i != f->note_ndx && (scn = elf_getscn(elf, i)) && gelf_getshdr(scn, &sh) &&
		    sh.sh_type != SHT_NOBITS && overlaps(sh.sh_offset, sh.sh_size, f->note_sec_off, f->note_sec_size))
			f->note_shared = 1;
	}
}

/* The section names' table and the tiexec note's section into f: only
 * when the header fields are the plain kind (no extended numbering) and
 * the table lies within the file.  0, or -1 with why. */
static int read_sections(Elf *elf, const GElf_Ehdr *eh, size_t len, size_t phnum, struct elf_facts *f, char *why,
			 size_t whylen)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (eh->e_shnum == 0 || eh->e_shoff == 0 || eh->e_shstrndx == SHN_XINDEX || eh->e_shentsize != SHDR_SIZE ||
	    eh->e_shoff > len || (uint64_t)eh->e_shnum * SHDR_SIZE > len - eh->e_shoff)
		return 0;
	if (eh->e_shstrndx != SHN_UNDEF && eh->e_shstrndx < eh->e_shnum && (scn = elf_getscn(elf, eh->e_shstrndx)) &&
	    gelf_getshdr(scn, &sh) && sh.sh_type == SHT_STRTAB && sh.sh_offset <= len &&
	    sh.sh_size <= len - sh.sh_offset) {
		f->str_ok = 1;
		f->str_off = sh.sh_offset;
		f->str_size = sh.sh_size;
	}
	for (size_t i = 1; i < eh->e_shnum && f->str_ok && !f->note_found; i++) {
		const char *name;

		if (!(scn = elf_getscn(elf, i)) || !gelf_getshdr(scn, &sh))
			return fail(why, whylen, "bad section header %zu: %s", i, elf_errmsg(-1));
		if (sh.sh_type != SHT_NOTE || !(name = elf_strptr(elf, eh->e_shstrndx, sh.sh_name)) ||
		    strcmp(name, TIEXEC_NOTE_SECTION) != 0)
			continue;
		f->note_found = 1;
		f->note_ndx = (uint16_t)i;
		f->note_sec_off = sh.sh_offset;
		f->note_sec_size = sh.sh_size;
		if (sh.sh_offset <= len && sh.sh_size <= len - sh.sh_offset)
			find_policy(scn, &sh, f);
	}
	if (f->note_found)
		note_overlaps(elf, eh, phnum, f);
	return 0;
}

int elf_facts_read(const unsigned char *buf, size_t len, struct elf_facts *f, char *why,
		   size_t whylen)
{
	Elf *elf;
	GElf_Ehdr eh;
	size_t phnum;
	int rc = -1;

	memset(f, 0, sizeof(*f));
	f->size = len;
	policy_unset(&f->policy);
	switch (elf_check_ident_ports(buf, len)) {
	case ELF_OK: break;
	case ELF_BAD_MACHINE: return fail(why, whylen, "not " ELF_PORTS_NAME);
	default: return fail(why, whylen, "not an ELF file");
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(why, whylen, "libelf: %s", elf_errmsg(-1));
	/* Read only: libelf does not write to an image it is given to read. */
	elf = elf_memory((char *)(uintptr_t)buf, len);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		fail(why, whylen, "not an ELF file%s%s", elf ? ": " : "",
		     elf ? elf_errmsg(-1) : "");
		goto out;
	}
	f->type = eh.e_type;
	f->phoff = eh.e_phoff;
	f->phnum = eh.e_phnum;
	f->phentsize = eh.e_phentsize;
	f->shoff = eh.e_shoff;
	f->shnum = eh.e_shnum;
	f->shstrndx = eh.e_shstrndx;
	f->shentsize = eh.e_shentsize;
	if (elf_getphdrnum(elf, &phnum) != 0) {
		fail(why, whylen, "bad program headers: %s", elf_errmsg(-1));
		goto out;
	}
	rc = read_phdrs(elf, &eh, len, phnum, f, why, whylen);
	if (rc == 0)
		rc = read_sections(elf, &eh, len, phnum, f, why, whylen);
out:
	elf_end(elf);
	return rc;
}

const char *stamp_refusal(const struct elf_facts *f)
{
	if (f->debug_only)
		return ELF_DEBUG_ONLY;
	switch (f->type) {
	case ET_EXEC:
		break;
	case ET_DYN:
		/* A PIE has an interpreter; a static PIE has none but says
		 * DF_1_PIE; anything else of type ET_DYN is a library. */
		if (!f->has_interp && !f->df1_pie)
			return "a shared library, not a program";
		break;
	default:
		return "not an executable";
	}
	if (f->phoff != TIEXEC_MARK_PHOFF)
		return "program headers not right after the ELF header (e_phoff != 64)";
	if (f->phentsize != sizeof(Elf64_Phdr))
		return "program headers of an unknown size (e_phentsize != 56)";
	if (f->phnum == 0 || f->phnum == PN_XNUM)
		return f->phnum ? "too many program headers (PN_XNUM)" : "no program headers";
	if (f->note_found) {
		if (!f->note_ok)
			return f->pstatus == POLICY_VERSION
				       ? "a tiexec note of another version (run --remove first)"
				       : "an unreadable tiexec note (run --remove first)";
		if (f->note_in_segment)
			return "the tiexec note is in a loadable segment: cannot rewrite it";
		if (f->desc_len < POLICY_DESC_SIZE)
			return "the tiexec note is too short (run --remove first)";
		return NULL;
	}
	if (f->shnum == 0 && f->shoff != 0)
		return "extended section numbering (e_shnum == 0): not supported";
	if (f->shstrndx == SHN_XINDEX)
		return "extended section numbering (e_shstrndx == SHN_XINDEX): not supported";
	if (f->shnum == 0) {
		/* A table is made from scratch; --remove could not give back
		 * another e_shentsize (the note does not record it). */
		if (f->shentsize != SHDR_SIZE)
			return "no section headers and e_shentsize != 64: cannot undo a stamp exactly";
		return NULL;
	}
	if (f->shoff == 0)
		return "e_shnum is set but e_shoff is 0";
	if (f->shentsize != SHDR_SIZE)
		return "section headers of an unknown size (e_shentsize != 64)";
	if ((uint64_t)f->shoff + (uint64_t)f->shnum * SHDR_SIZE > f->size)
		return "the section header table reaches past the end of the file";
	if (f->shnum >= 0xff00 - 1)
		return "too many sections to add one";
	if (!f->str_ok)
		return "no usable section-name string table (e_shstrndx)";
	return NULL;
}

static void put_shdr(unsigned char *p, uint32_t name, uint32_t type, uint64_t off, uint64_t size,
		     uint64_t align)
{
	memset(p, 0, SHDR_SIZE);
	put32(p + 0, name);
	put32(p + 4, type);
	put64(p + 24, off);
	put64(p + 32, size);
	put64(p + 48, align);
}

/* Appends the stamp to an unstamped image (stamp_refusal accepted it). */
static int stamp_new(const unsigned char *buf, const struct elf_facts *f,
		     const struct tiexec_policy *want, unsigned char **out, size_t *outlen,
		     char *why, size_t whylen)
{
	struct stamp_layout l;
	struct tiexec_policy p = *want;
	unsigned char *o;

	if (layout_compute(f->size, f->shnum, f->shstrndx, f->str_size, &l) != 0 ||
	    l.end > SIZE_MAX)
		return fail(why, whylen, "the file is too large to stamp");
	o = calloc(1, (size_t)l.end);
	if (!o)
		return fail(why, whylen, "out of memory");
	memcpy(o, buf, f->size);

	p.version = TIEXEC_POLICY_VERSION;
	p.size = POLICY_DESC_SIZE;
	p.orig_size = f->size;
	p.orig_shoff = f->shoff;
	p.orig_shnum = f->shnum;
	p.orig_shstrndx = f->shstrndx;
	/* A marked file without a note is one of ours whose note a stripper
	 * dropped (llvm-strip, llvm-objcopy --strip-all): stamped again, and
	 * --remove clears the bit too. */
	p.orig_flags0 = f->flags0 & ~TIEXEC_MARK_FLAG;
	note_encode(&p, o + l.note_off);

	unsigned char *sht = o + l.sht_off;
	if (f->shnum == 0) {
		memcpy(o + l.str_off, STAMP_SCRATCH_STRTAB, STAMP_SCRATCH_STRSZ);
		/* entry 0: the null section, all zero (calloc) */
		put_shdr(sht + SHDR_SIZE, 1, SHT_STRTAB, l.str_off, l.str_size, 1);
	} else {
		memcpy(o + l.str_off, buf + f->str_off, f->str_size);
		memcpy(o + l.str_off + l.note_name, TIEXEC_NOTE_SECTION, sizeof(TIEXEC_NOTE_SECTION));
		memcpy(sht, buf + f->shoff, (size_t)f->shnum * SHDR_SIZE);
		put64(sht + (size_t)l.shstrndx * SHDR_SIZE + 24, l.str_off);
		put64(sht + (size_t)l.shstrndx * SHDR_SIZE + 32, l.str_size);
	}
	put_shdr(sht + (size_t)l.note_ndx * SHDR_SIZE, (uint32_t)l.note_name, SHT_NOTE, l.note_off,
		 POLICY_NOTE_SIZE, POLICY_NOTE_ALIGN);

	put64(o + EH_SHOFF, l.sht_off);
	put16(o + EH_SHENTSIZE, SHDR_SIZE);
	put16(o + EH_SHNUM, l.shnum);
	put16(o + EH_SHSTRNDX, l.shstrndx);
	put32(o + PH0_FLAGS, f->flags0 | TIEXEC_MARK_FLAG);
	*out = o;
	*outlen = (size_t)l.end;
	return 0;
}

int stamp_build(const unsigned char *buf, const struct elf_facts *f,
		const struct tiexec_policy *want, unsigned char **out, size_t *outlen, char *why,
		size_t whylen)
{
	const char *no = stamp_refusal(f);

	if (no)
		return fail(why, whylen, "%s", no);
	if (!f->note_found)
		return stamp_new(buf, f, want, out, outlen, why, whylen);

	/* Stamped already: the new policy replaces the old in place; the
	 * orig_* fields stay (they describe the file before the first stamp). */
	struct tiexec_policy p = *want;
	unsigned char *o = malloc(f->size ? f->size : 1);

	if (!o)
		return fail(why, whylen, "out of memory");
	memcpy(o, buf, f->size);
	p.version = TIEXEC_POLICY_VERSION;
	p.size = POLICY_DESC_SIZE;
	p.orig_size = f->policy.orig_size;
	p.orig_shoff = f->policy.orig_shoff;
	p.orig_shnum = f->policy.orig_shnum;
	p.orig_shstrndx = f->policy.orig_shstrndx;
	p.orig_flags0 = f->policy.orig_flags0;
	policy_encode(&p, o + f->desc_off);
	put32(o + PH0_FLAGS, f->flags0 | TIEXEC_MARK_FLAG);
	*out = o;
	*outlen = f->size;
	return 0;
}

/* The original image, if buf is exactly what stamping it gave (possibly
 * re-stamped since with another policy): rebuilt from the orig_* fields,
 * stamped again with the note's policy and compared with buf.  Anything
 * changed after the stamp (strip, objcopy, a new section) fails the
 * comparison.  Returns the original (to free) or NULL. */
static unsigned char *exact_original(const unsigned char *buf, const struct elf_facts *f)
{
	const struct tiexec_policy *p = &f->policy;
	struct elf_facts of;
	unsigned char *orig, *again = NULL;
	size_t againlen = 0;
	char why[128];
	int same;

	if (!f->note_ok || p->size < POLICY_DESC_SIZE || p->orig_size < sizeof(Elf64_Ehdr) ||
	    p->orig_size > f->size || (p->orig_flags0 & TIEXEC_MARK_FLAG))
		return NULL;
	orig = malloc((size_t)p->orig_size);
	if (!orig)
		return NULL;
	memcpy(orig, buf, (size_t)p->orig_size);
	put64(orig + EH_SHOFF, p->orig_shoff);
	put16(orig + EH_SHNUM, p->orig_shnum);
	put16(orig + EH_SHSTRNDX, p->orig_shstrndx);
	put32(orig + PH0_FLAGS, p->orig_flags0);
	same = elf_facts_read(orig, (size_t)p->orig_size, &of, why, sizeof(why)) == 0 &&
	       !of.note_found && !stamp_refusal(&of) &&
	       stamp_new(orig, &of, p, &again, &againlen, why, sizeof(why)) == 0 &&
	       againlen == f->size;
	/* The marker bit may have been cleared by hand since: still ours. */
	if (same && (get32(again + PH0_FLAGS) ^ get32(buf + PH0_FLAGS)) == TIEXEC_MARK_FLAG)
		put32(again + PH0_FLAGS, get32(buf + PH0_FLAGS));
	same = same && memcmp(again, buf, f->size) == 0;
	free(again);
	if (!same) {
		free(orig);
		return NULL;
	}
	return orig;
}

/* Drops section header k from the table in o (in place) and renumbers the
 * references to the sections after it.  0 on success, -1 with why. */
static int drop_section(unsigned char *o, const struct elf_facts *f, uint16_t k, char *why,
			size_t whylen)
{
	unsigned char *sht = o + f->shoff;
	uint16_t n = f->shnum;

	if (k == 0 || k >= n || k == f->shstrndx)
		return fail(why, whylen, "cannot drop the note's section header");
	/* First check, then change: a refusal must leave nothing half done. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint16_t i = 1; i < n; i++) {
			unsigned char *s = sht + (size_t)i * SHDR_SIZE;
			uint32_t type = get32(s + 4), link = get32(s + 40), info = get32(s + 44);
			uint64_t flags = get64(s + 8), off = get64(s + 24), size = get64(s + 32);

			if (i == k)
				continue;
			if (link == k || ((type == SHT_REL || type == SHT_RELA ||
					   (flags & SHF_INFO_LINK)) && info == k))
				return fail(why, whylen, "another section refers to the tiexec note");
			if (pass && link > k)
				put32(s + 40, link - 1);
			if (pass && info > k && (type == SHT_REL || type == SHT_RELA || (flags & SHF_INFO_LINK)))
				put32(s + 44, info - 1);
			if (type != SHT_SYMTAB && type != SHT_DYNSYM)
				continue;
			/* Symbols name their section by index. */
			if (off > f->size || size > f->size - off)
				return fail(why, whylen, "a symbol table reaches past the end of the file");
			for (uint64_t y = 0; y + SYM_SIZE <= size; y += SYM_SIZE) {
				unsigned char *sym = o + off + y;
				uint16_t ndx = get16(sym + 6);

				if (ndx < k || ndx >= SHN_LORESERVE)
					continue;
				if (ndx == k || (flags & SHF_ALLOC))
					return fail(why, whylen, "symbols refer to sections after the tiexec note");
				if (pass)
					put16(sym + 6, (uint16_t)(ndx - 1));
			}
		}
	}
	memmove(sht + (size_t)k * SHDR_SIZE, sht + (size_t)(k + 1) * SHDR_SIZE,
		(size_t)(n - k - 1) * SHDR_SIZE);
	memset(sht + (size_t)(n - 1) * SHDR_SIZE, 0, SHDR_SIZE);
	put16(o + EH_SHNUM, (uint16_t)(n - 1));
	if (f->shstrndx > k)
		put16(o + EH_SHSTRNDX, (uint16_t)(f->shstrndx - 1));
	return 0;
}

int remove_build(const unsigned char *buf, const struct elf_facts *f, enum remove_kind *kind,
		 unsigned char **out, size_t *outlen, char *why, size_t whylen)
{
	unsigned char *o;

	*out = NULL;
	*outlen = 0;
	*kind = REMOVE_NOTHING;
	if (f->phoff != TIEXEC_MARK_PHOFF || f->phnum == 0 || (!f->marked && !f->note_found))
		return 0;
	if ((o = exact_original(buf, f))) {
		*kind = REMOVE_EXACT;
		*out = o;
		*outlen = (size_t)f->policy.orig_size;
		return 0;
	}
	o = malloc(f->size);
	if (!o)
		return fail(why, whylen, "out of memory");
	memcpy(o, buf, f->size);
	put32(o + PH0_FLAGS, f->flags0 & ~TIEXEC_MARK_FLAG);
	*kind = REMOVE_BIT;
	if (f->note_found) {
		if (drop_section(o, f, f->note_ndx, why, whylen) != 0) {
			free(o);
			return -1;
		}
		/* The note's bytes belong to nothing now: clear them, unless a
		 * segment or another section holds them too. */
		if (!f->note_shared && f->note_sec_off <= f->size &&
		    f->note_sec_size <= f->size - f->note_sec_off)
			memset(o + f->note_sec_off, 0, (size_t)f->note_sec_size);
		*kind = REMOVE_DROP;
	}
	*out = o;
	*outlen = f->size;
	return 0;
}
