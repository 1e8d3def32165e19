/* 2 MiB contiguous blocks of a process's text (blocks.h). */
#include "blocks.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bits.h"
#include "cacheconv.h"
#include "geom.h"

/* kB of [start, end)'s whole 2 MiB pieces that are blocks (PMD pieces
 * included: a PMD-mapped folio is one too), or -1 when frame numbers
 * cannot be read.  A block the process has mapped in part counts (a
 * forked child maps its text as it runs, onto the block's frames), and
 * into *part_kb too. */
static int64_t mapping_blocks(struct cconv *cc, uint64_t start, uint64_t end, uint64_t *part_kb)
{
	uint64_t a = tx_up(start, TX_HUGE), b = tx_down(end, TX_HUGE), kb = 0;

	if (a >= b)
		return 0;
	uint8_t *hs = calloc((b - a) / TX_HUGE, 1);
	if (!hs || cconv_blocks(cc, a, b, hs, 1) < 0) {
		free(hs);
		return -1;
	}
	for (uint64_t k = 0; k < (b - a) / TX_HUGE; k++) {
		kb += hs[k] ? TX_HUGE >> 10 : 0;
		*part_kb += hs[k] == CC_BLOCK_PART ? TX_HUGE >> 10 : 0;
	}
	free(hs);
	return (int64_t)kb;
}

void blocks_measure(long pid, const struct smaps *s, struct blocks *b)
{
	struct geom g;
	struct cconv cc = CCONV_INIT(0);
	char path[64];

	b->state = BLOCKS_NONE;
	b->kb = NULL;
	b->total_kb = b->part_kb = 0;
	geom_read(&g, TX_PAGE);
	b->pmd = g.pmd;
	if (!geom_blocks(&g))
		return;
	b->state = BLOCKS_UNMEASURED;
	snprintf(path, sizeof(path), "/proc/%ld/pagemap", pid);
	cc.pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	b->kb = calloc(s->n ? s->n : 1, sizeof(*b->kb));
	if (cc.pagemap_fd < 0 || !b->kb) {
		cconv_close(&cc);
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_map *m = &s->map[i];
		if (!smaps_is_exec(m))
			continue;
		int64_t kb = mapping_blocks(&cc, m->start, m->end, &b->part_kb);
		if (kb < 0) {
			cconv_close(&cc);
			return;
		}
		uint64_t pmd = smaps_huge_kb(m);
		b->kb[i] = (uint64_t)kb > pmd ? (uint64_t)kb - pmd : 0;
		b->total_kb += b->kb[i];
	}
	cconv_close(&cc);
	b->state = BLOCKS_MEASURED;
}

void blocks_free(struct blocks *b)
{
	free(b->kb);
	b->kb = NULL;
}
