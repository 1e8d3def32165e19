/* x86-64: making text that user space wrote fit to run.  Instruction
 * fetch is coherent with stores on x86 (self-modifying code is detected
 * by the hardware), so there is nothing to do. */
#pragma once

#include <stdint.h>

static inline void arch_sync_icache(uint64_t lo, uint64_t len)
{
	(void)lo;
	(void)len;
}
