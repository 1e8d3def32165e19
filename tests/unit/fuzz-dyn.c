/* libFuzzer harness for what the loader reads of a hostile program once it
 * is mapped, before ld.so runs: its dynamic section, string table and
 * preinit array (interp/origin.c's $ORIGIN strings, interp/hookpoint.c's
 * choice and installation of the hook, the interpreter's DT_SONAME).  The
 * input is a program file; what passes elfcheck is "mapped" as the kernel
 * would map it into one region: each PT_LOAD's file bytes at its address,
 * zeros after them, and every page wholly past the end of the file made
 * inaccessible, where the real mapping raises SIGBUS.  Segments are laid
 * out by common/layout.c as the loader lays them out.  Whatever the bytes:
 * no crash, no read out of bounds, no undefined behaviour.  Run with
 * scripts/fuzz, from the same corpus as fuzz-elf. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "arch_elf.h"
#include "elfcheck.h"
#include "hookpoint.h"
#include "image.h"
#include "layout.h"
#include "origin.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

#define REGION (8UL << 20)
#define PG 4096UL

static uint8_t *region;
static struct image prog, ld;

/* A glibc ld.so as far as hookpoint.c looks: a dynamic section naming
 * DT_SONAME ARCH_LDSO_GLIBC. */
static void make_ld(void)
{
	static Elf64_Dyn dyn[4];
	static const char str[] = "\0" ARCH_LDSO_GLIBC;
	static uint8_t mem[PG] __attribute__((aligned(PG)));

	memcpy(mem + 512, str, sizeof(str));
	dyn[0].d_tag = DT_STRTAB;
	dyn[0].d_un.d_ptr = 512;
	dyn[1].d_tag = DT_STRSZ;
	dyn[1].d_un.d_val = sizeof(str);
	dyn[2].d_tag = DT_SONAME;
	dyn[2].d_un.d_val = 1;
	dyn[3].d_tag = DT_NULL;
	memcpy(mem, dyn, sizeof(dyn));
	ld.path = "/lib64/" ARCH_LDSO_GLIBC;
	ld.eh.e_phnum = 1;
	ld.ph[0].p_type = PT_DYNAMIC;
	ld.ph[0].p_memsz = sizeof(dyn);
	ld.bias = (uint64_t)(uintptr_t)mem;
	ld.nsegs = 1;
	ld.segs[0].vaddr = ld.bias;
	ld.segs[0].memsz = ld.segs[0].filesz = PG;
	ld.segs[0].flags = PF_R | PF_W;
}

/* The PT_LOADs of ph into the region, as mmap would, in table order (a
 * later segment's pages replace an earlier one's): 0 when they do not fit
 * in it.  Pages of the file wholly past its end become PROT_NONE. */
static int map(const uint8_t *d, size_t n, const Elf64_Phdr *ph, unsigned phnum, uint64_t *lo_out)
{
	static uint8_t bus[REGION / PG];
	uint64_t lo = UINT64_MAX, hi = 0;

	for (unsigned i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !ph[i].p_memsz)
			continue;
		uint64_t a = ph[i].p_vaddr & -PG, b = (ph[i].p_vaddr + ph[i].p_memsz + PG - 1) & -PG;
		if (b < a || b - a > REGION)
			return 0;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
	}
	if (!hi || hi - lo > REGION)
		return 0;
	mprotect(region, REGION, PROT_READ | PROT_WRITE);
	memset(region, 0, hi - lo);
	memset(bus, 0, (hi - lo) / PG);
	for (unsigned i = 0; i < phnum; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type != PT_LOAD || !p->p_memsz)
			continue;
		uint64_t avail = n > p->p_offset ? n - p->p_offset : 0;
		uint64_t got = p->p_filesz < avail ? p->p_filesz : avail;
		if (got)
			memcpy(region + (p->p_vaddr - lo), d + p->p_offset, got);
		/* The first page whose file page lies wholly past the end. */
		uint64_t vpg = p->p_vaddr & -PG, opg = p->p_offset & -PG, nup = (n + PG - 1) & -PG;
		uint64_t eof_pg = nup > opg ? vpg + (nup - opg) : vpg;
		/* No file bytes: anonymous memory only, as the loader maps it. */
		uint64_t file_end = p->p_filesz ? (p->p_vaddr + p->p_filesz + PG - 1) & -PG : vpg;
		uint64_t end = (p->p_vaddr + p->p_memsz + PG - 1) & -PG;
		for (uint64_t a = p->p_vaddr & -PG; a < end; a += PG)
			bus[(a - lo) / PG] = a >= eof_pg && a < file_end;
	}
	for (uint64_t k = 0; k < (hi - lo) / PG; k++)
		if (bus[k])
			mprotect(region + k * PG, PG, PROT_NONE);
	*lo_out = lo;
	return 1;
}

static void origin(void)
{
	static struct origin_fix fx[ORIGIN_MAX_FIX];
	static char out[ORIGIN_MAX_FIX * 8192];
	unsigned k = origin_find(&prog, fx, "/a/dir/of/the/program");
	size_t at = 0;

	for (unsigned i = 0; i < k; i++) {
		if (at + fx[i].outlen > sizeof(out))
			break;
		origin_expand(fx[i].src, "/a/dir/of/the/program", out + at);
		at += fx[i].outlen;
	}
}

/* The hook chosen with interp as the interpreter, and with install set,
 * put in place, filled and taken back as around ld.so. */
static void hook(const struct image *interp, int install)
{
	static uint64_t block[1 + 4096 + 1];
	struct hookpoint hp;

	hookpoint_choose(&prog, interp, &hp);
	if (!install || hp.kind != HOOK_PREINIT || hookpoint_len(&hp) > sizeof(block))
		return;
	uint64_t final = (uint64_t)(uintptr_t)block;
	hookpoint_install(&hp, block, final, 0x1234, prog.bias);
	hookpoint_fill(&hp, final);
	hookpoint_restore(&hp);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct elf_info info;
	uint64_t lo;

	if (!region) {
		region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		make_ld();
	}
	memset(&prog, 0, sizeof(prog));
	prog.path = "/a/dir/of/the/program/prog";
	if (elf_check_ehdr(d, n, n, &prog.eh) != ELF_OK)
		return 0;
	memcpy(prog.ph, d + prog.eh.e_phoff, (size_t)prog.eh.e_phnum * sizeof(Elf64_Phdr));
	if (elf_check_phdrs(&prog.eh, prog.ph, n, 0, &info) != ELF_OK)
		return 0;
	if (!map(d, n, prog.ph, prog.eh.e_phnum, &lo))
		return 0;
	prog.bias = (uint64_t)(uintptr_t)region - lo;
	prog.nsegs = layout_segs(prog.ph, prog.eh.e_phnum, prog.bias, n, prog.segs, MAX_SEGS);
	/* The same bytes as an interpreter: its DT_SONAME. */
	hook(&prog, 0);
	origin();
	/* Last: putting entries back may leave RELRO pages read-only. */
	hook(&ld, 1);
	return 0;
}
