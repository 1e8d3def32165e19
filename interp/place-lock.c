/* The conversion lock of the page cache way (place.h, place-file.c). */
#include "place.h"

#include <errno.h>

#include "proc.h"
#include "sys.h"

#define TX_LOCK_EX 2
#define TX_LOCK_NB 4
#define TX_LOCK_UN 8

/* ---- cooperation between starts of the same program ----
 *
 * Processes starting the same program at once after its cache was dropped
 * would each fault it in: the first faults read 2 MiB folios (MADV_HUGEPAGE
 * is set), but the readers race, small folios mapped by one process cannot
 * be evicted by another (POSIX_FADV_DONTNEED skips mapped pages), and each
 * falls back to a private copy: 20 starts of a 64 MiB program copied 58 MiB
 * each.  So the file stage runs under flock(LOCK_EX) on the program's
 * descriptor (flock needs only read access): one process converts the
 * cache, the others wait, then find 2 MiB folios and map them with PMDs.
 *
 * The wait is bounded, because a program may flock its own binary (one
 * instance at a time, say) for as long as it runs: we wait only while the
 * holder visibly reads the text into the cache (the first page of a
 * 2 MiB piece turns resident, by mincore), at most CONVERT_STALL_NS
 * without progress and CONVERT_WAIT_NS in all, then go on without the lock
 * (the cache may then stay in small folios, and auto copies).
 * 2 s reads about 256 MiB from a slow (~150 MB/s) disk; a holder that
 * reads nothing for 50 ms is not converting (a 2 MiB read takes a few ms
 * even from such a disk) -- or is merely starved of CPU: with 1,000 starts
 * on 2 cores the holder waited 70-300 ms to run, and hundreds gave up.
 * So a start that gives up must not get in the holder's way: it converts
 * "shared" (cacheconv.h), reading only absent pieces, in 2 MiB, mapping
 * what is huge, evicting nothing and leaving small folios unmapped.  When
 * it did evict and fault the text in, the holder's eviction failed on
 * the pages the others mapped, and all of them queued on the kernel's
 * global lru_add_drain_all lock (POSIX_FADV_DONTNEED with mapped pages):
 * 1,000 starts took 10 s and each copied.  What remains: a start that
 * gives up waiting may still take a private copy of pieces not converted
 * yet, and a self-locking program costs each later start up to 50 ms. */
#define CONVERT_POLL_NS 5000000ULL
#define CONVERT_STALL_NS 50000000ULL
#define CONVERT_WAIT_NS 2000000000ULL

/* How many 2 MiB pieces of our mapping [a, b) of the file have their first
 * page in the page cache (mincore sees the cache for file mappings, faulted
 * in or not). */
static uint64_t resident_pieces(uint64_t a, uint64_t b)
{
	uint64_t n = 0;
	unsigned char v;

	for (uint64_t p = a; p < b; p += TX_HUGE)
		if (SC(__NR_mincore, p, TX_PAGE, &v, 0, 0, 0) == 0 && (v & 1))
			n++;
	return n;
}

/* Takes the conversion lock on fd, waiting as described above.  Returns 1
 * when held (release with convert_unlock), 0 when there is no lock to take
 * (flock unsupported here), -1 when another process holds it and we go on
 * without it. */
int place_lock(int fd, uint64_t a, uint64_t b, int *gave_up)
{
	long e = SC(__NR_flock, fd, TX_LOCK_EX | TX_LOCK_NB, 0, 0, 0, 0);

	if (e == 0)
		return 1;
	if (e != -EWOULDBLOCK)
		return 0; /* no flock on this filesystem */
	if (*gave_up)
		return -1; /* waited already */
	uint64_t t0 = now_ns(), seen = t0, had = resident_pieces(a, b);
	for (;;) {
		struct tx_timespec d = { 0, (long)CONVERT_POLL_NS };
		SC(__NR_nanosleep, &d, 0, 0, 0, 0, 0);
		if (SC(__NR_flock, fd, TX_LOCK_EX | TX_LOCK_NB, 0, 0, 0, 0) == 0)
			return 1;
		uint64_t now = now_ns(), has = resident_pieces(a, b);
		if (has != had)
			had = has, seen = now;
		if (now - seen > CONVERT_STALL_NS || now - t0 > CONVERT_WAIT_NS)
			break;
	}
	*gave_up = 1;
	return -1;
}

/* Before the program starts: the lock belongs to the open file, which the
 * program may inherit (AT_EXECFD). */
void place_unlock(int fd)
{
	SC(__NR_flock, fd, TX_LOCK_UN, 0, 0, 0, 0);
}

