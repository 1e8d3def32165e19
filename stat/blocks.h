/* blocks.h: where a PMD is larger than the 2 MiB piece (geom_blocks: arm64
 * with 16 or 64 KiB pages), how much of each executable mapping of a
 * process lies in 2 MiB contiguous-PTE blocks rather than on PMDs.  smaps
 * shows PMD mappings only; blocks are read from the process's pagemap and
 * /proc/kpageflags (cacheconv.c, cconv_blocks, the loader's own check),
 * which takes root. */
#pragma once

#include <stdint.h>

#include "smaps.h"

struct blocks {
	int state;    /* BLOCKS_NONE, BLOCKS_MEASURED or BLOCKS_UNMEASURED */
	uint64_t pmd; /* the PMD size, when not BLOCKS_NONE */
	uint64_t *kb; /* per mapping of the smaps: kB in blocks, not on PMDs */
	uint64_t total_kb;
	uint64_t part_kb; /* of total_kb, in blocks mapped in part so far (a
			   * forked child maps its text as it runs) */
};
enum { BLOCKS_NONE, BLOCKS_MEASURED, BLOCKS_UNMEASURED };

/* Measures pid's executable mappings s into b (free with blocks_free). */
void blocks_measure(long pid, const struct smaps *s, struct blocks *b);
void blocks_free(struct blocks *b);
