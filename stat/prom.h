/* tiexec-stat --prometheus: the node's tiexec metrics in the Prometheus
 * text format, for node_exporter's textfile collector:
 *
 *   tiexec_processes                      processes running through tiexec
 *   tiexec_text_huge_bytes{way}           their text on 2 MiB pages: file,
 *                                         cache, copy (summed over them)
 *   tiexec_text_blocks_bytes{way},        where a PMD is larger than 2 MiB
 *   tiexec_processes_blocks_unmeasured    (arm64, 16 or 64 KiB pages): their
 *                                         text in 2 MiB contiguous blocks,
 *                                         as root; processes not measured
 *   tiexec_text_small_bytes               their text left on base pages
 *   tiexec_processes_unreadable           processes one may not read
 *   tiexec_program_processes{program}, tiexec_program_text_aligned_bytes,
 *   tiexec_program_text_huge_min_bytes, tiexec_program_processes_short,
 *   tiexec_program_processes_unmeasured  per program: what holds as the
 *                                         number of its processes changes
 *   tiexec_warm_text_bytes{path,route,state}  tiexec-warm's files
 *   tiexec_trace_up, tiexec_starts_total{outcome},
 *   tiexec_fallbacks_total{reason}        tiexec-trace's counters
 *
 * A process runs through tiexec when its program is stamped, its exe is
 * one of the loaders (the file, not a name: procfs.h), or it maps
 * tiexec's copies or text cache entries.  Label values are valid UTF-8
 * and at most 1 KiB (a longer one ends in "..."). */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "procfs.h"

struct prom_sources {
	const char *cache_dir;      /* the text cache ("" none) */
	const char *warm;           /* tiexec-warm to ask, or "" */
	const char *trace_counters; /* tiexec-trace --counters' file */
	const struct loaders *loaders; /* whose processes run through tiexec */
};

/* Writes every metric to f; the processes whose smaps could not be read
 * in *unreadable.  0, or -1 (/proc unreadable, a write error). */
int prom_write(FILE *f, const struct prom_sources *src, uint64_t *unreadable);
