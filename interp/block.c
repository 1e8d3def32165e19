/* The initial stack, decoded and laid out (see block.h). */
#include "block.h"

#include <elf.h>
#include <linux/auxvec.h>

#include "bits.h"
#include "rt.h"

void block_parse(uint64_t *sp, struct start *s, uint64_t *aux, uint64_t *has)
{
	*has = 0;
	s->argc = (long)sp[0];
	s->argv = (char **)(sp + 1);
	s->envp = s->argv + s->argc + 1;
	for (s->nenv = 0; s->envp[s->nenv]; s->nenv++)
		;
	s->auxv = (uint64_t *)(s->envp + s->nenv + 1);
	uint64_t *a = s->auxv;
	for (; a[0] != AT_NULL; a += 2)
		if (a[0] < AUX_MAX) {
			aux[a[0]] = a[1];
			*has |= 1ULL << a[0];
		}
	s->auxv_end = a + 2;
}

/* Whether strings v[0..n-1] lie back to back, each right after the NUL of
 * the one before, as the kernel lays out the argument and environment areas. */
static int contiguous(char **v, long n)
{
	for (long i = 1; i < n; i++)
		if (v[i] != v[i - 1] + strlen(v[i - 1]) + 1)
			return 0;
	return 1;
}

static uint64_t area_end(char **v, long n)
{
	return (uint64_t)(uintptr_t)(v[n - 1] + strlen(v[n - 1]) + 1);
}

static int drop_env(const char *e, const char *hint)
{
	return hint && tx_skip(e, "TIEXEC_EXE=") != NULL;
}

void block_areas(const struct start *s, long first, const char *hint, struct areas *a)
{
	long pargc = s->argc - first;

	memset(a, 0, sizeof(*a));
	a->args_ok = s->argc > 0 && contiguous(s->argv, s->argc);
	a->env_ok = a->args_ok && (s->nenv == 0 || (contiguous(s->envp, s->nenv) &&
						    (uint64_t)(uintptr_t)s->envp[0] == area_end(s->argv, s->argc)));
	if (a->args_ok) {
		a->arg_start = (uint64_t)(uintptr_t)s->argv[0];
		a->end = area_end(s->argv, s->argc);
		if (a->env_ok && s->nenv)
			a->end = area_end(s->envp, s->nenv);
		if (pargc)
			a->moved = area_end(s->argv, s->argc) - (uint64_t)(uintptr_t)s->argv[first];
	}
	for (long i = 0; i < s->nenv; i++) {
		if (drop_env(s->envp[i], hint))
			continue;
		a->env_keep += strlen(s->envp[i]) + 1;
		a->nenv_keep++;
	}
}

void block_plan(const struct start *s, long first, const char *execfn, const char *hint,
		size_t prelen, size_t orglen, const struct areas *a, struct plan *p)
{
	p->pargc = s->argc - first;
	p->naux = (long)(s->auxv_end - s->auxv) / 2;
	p->nenv_out = a->nenv_keep + (hint ? 1 : 0);
	p->fnlen = strlen(execfn) + 1;
	p->xlen = hint ? strlen(hint) + 1 : 0;
	p->env_in_block = 0;
	if (hint && a->env_ok && a->moved + a->env_keep + p->xlen > a->end - a->arg_start)
		p->env_in_block = 1;
	p->words = 1 + (size_t)p->pargc + 1 + (size_t)p->nenv_out + 1 + 2 * (size_t)p->naux;
	p->fn_off = prelen;
	p->orglen = orglen;
	p->env_off = prelen + p->fnlen + orglen;
	size_t strs = p->env_off;
	if (p->env_in_block || !a->env_ok)
		strs += p->xlen + (p->env_in_block ? a->moved + a->env_keep : 0);
	p->len = tx_up(p->words * 8 + strs, 16);
	p->dst = ((uint64_t)(uintptr_t)s->auxv_end - p->len) & -16ULL;
}

long block_auxv(const struct start *s, uint64_t *out, uint64_t fn_final, long naux,
		const struct aux_prog *ap)
{
	long na = 0;

	for (uint64_t *a = s->auxv;; a += 2) {
		uint64_t t = a[0], v = a[1];
		switch (t) {
		case AT_PHDR: v = ap->phdr; break; /* the kernel's phdr_addr */
		case AT_PHENT: v = sizeof(Elf64_Phdr); break;
		case AT_PHNUM: v = ap->phnum; break;
		case AT_BASE: v = ap->base; break;
		case AT_ENTRY: v = ap->entry; break;
		case AT_EXECFN: v = fn_final; break;
		case AT_FLAGS: v = 0; break;
		case AT_SECURE: v = ap->secure_off ? 0 : v; break;
		case AT_EXECFD: continue;
		default: break;
		}
		out[2 * na] = t;
		out[2 * na + 1] = v;
		na++;
		if (t == AT_NULL)
			break;
	}
	for (long i = 2 * na; i < 2 * naux; i++)
		out[i] = 0; /* a dropped AT_EXECFD leaves trailing AT_NULLs */
	return na;
}

/* Copies the kept environment strings to `to` (which is never above
 * their source when both are in the area, so string by string is safe),
 * then the hint; fills env[] with the addresses they will have at
 * `final`.  Returns the bytes written. */
static uint64_t lay_env(const struct start *s, const char *hint, char *to, uint64_t final,
			uint64_t *env)
{
	uint64_t n = 0;
	long k = 0;

	for (long i = 0; i < s->nenv; i++) {
		if (drop_env(s->envp[i], hint))
			continue;
		size_t l = strlen(s->envp[i]) + 1;
		memmove(to + n, s->envp[i], l);
		env[k++] = final + n;
		n += l;
	}
	if (hint) {
		size_t l = strlen(hint) + 1;
		memcpy(to + n, hint, l);
		env[k++] = final + n;
		n += l;
	}
	return n;
}

/* argv, then the environment, then the hint, all in the block; the old
 * area is cleared. */
static void strings_in_block(const struct start *s, long first, const char *hint,
			     const struct areas *a, const struct plan *p, const struct block *b)
{
	uint64_t *w = b->w;
	char *bto = b->strs + p->env_off;
	uint64_t fin = b->strs_final + p->env_off;

	if (p->pargc) {
		char *from = s->argv[first];
		memcpy(bto, from, a->moved);
		for (long i = 0; i < p->pargc; i++)
			w[1 + i] = fin + (uint64_t)(s->argv[first + i] - from);
	}
	w[1 + p->pargc] = 0;
	lay_env(s, hint, bto + a->moved, fin + a->moved, b->envw);
	b->envw[p->nenv_out] = 0;
	memset((char *)(uintptr_t)a->arg_start, 0, (size_t)(a->end - a->arg_start));
}

void block_strings(const struct start *s, long first, const char *hint, const struct areas *a,
		   const struct plan *p, const struct block *b, int mm_ok)
{
	uint64_t *w = b->w, *envw = b->envw;
	char *to = (char *)(uintptr_t)a->arg_start;

	w[0] = (uint64_t)p->pargc;
	if (p->env_in_block && mm_ok) {
		strings_in_block(s, first, hint, a, p, b);
		return;
	}
	if (a->args_ok && p->pargc) {
		char *from = s->argv[first];
		memmove(to, from, a->moved);
		for (long i = 0; i < p->pargc; i++)
			w[1 + i] = (uint64_t)(uintptr_t)(to + (s->argv[first + i] - from));
	} else {
		for (long i = 0; i < p->pargc; i++)
			w[1 + i] = (uint64_t)(uintptr_t)s->argv[first + i];
	}
	w[1 + p->pargc] = 0;
	uint64_t used = a->moved;
	if (mm_ok && a->env_ok && !p->env_in_block) {
		used += lay_env(s, hint, to + a->moved, a->arg_start + a->moved, envw);
	} else {
		/* The kernel keeps its own bounds: the environment stays where
		 * it is, the hint (if any) lives in the block. */
		long k = 0;
		for (long i = 0; i < s->nenv; i++)
			if (!drop_env(s->envp[i], hint))
				envw[k++] = (uint64_t)(uintptr_t)s->envp[i];
		if (hint) {
			memcpy(b->strs + p->env_off, hint, p->xlen);
			envw[k] = b->strs_final + p->env_off;
		}
	}
	envw[p->nenv_out] = 0;
	if (a->args_ok) {
		uint64_t keep_end = mm_ok ? a->end : area_end(s->argv, s->argc);
		if (a->arg_start + used < keep_end)
			memset(to + used, 0, (size_t)(keep_end - (a->arg_start + used)));
	}
}
