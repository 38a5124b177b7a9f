/* fuzz_shared.c - libFuzzer target for a reader of the machine's shared history
 * (src/shared.c): the input is the start of such a file, the rest zeros up to the size
 * its header's geometry asks for (16 chunks at most, to stay small and quick). Whatever it holds,
 * the checks refuse it, or a view of it converts without a crash, a hang or a wild
 * read (every failure EAGAIN, ENODATA or ERANGE), and a copy of it, if one is made,
 * converts every counter value inside it as the view does. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "faststamp.h"
#include "fuzz.h"
#include "histfile.h"
#include "internal.h"
#include "shared.h"
#include "history.h"

static uint64_t word(const uint8_t *d, size_t n, size_t i)
{
	uint64_t v = 0;
	for (size_t k = 0; k < 8 && n; k++)
		v = v << 8 | d[(i * 8 + k) % n];
	return v;
}

/* The file, in memory kept from input to input (an allocation each time would be most
 * of the run): room for 16 chunks and a long input. */
static unsigned char file[1 << 20] __attribute__((aligned(4096)));

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fts__shm_head h;
	struct fts_calib view, *copy;
	size_t d0, d1, pool, len;
	unsigned char *map;
	uint64_t lo, hi;
	char why[200];

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	if (h.dircap == 0 || h.dircap > 16)
		return 0;
	len = FTS__SHM_HEAD + fts__region_layout(h.dircap, &d0, &d1, &pool);
	if (size > len)
		len = size;
	if (len > sizeof(file))
		return 0;
	map = file;
	memcpy(map, data, size);
	memset(map + size, 0, len - size);
	if (fts__shared_check((const struct fts__shm_head *)(void *)map, len, why, sizeof(why)) < 0) {
		CHECK(why[0]);
		return 0;
	}
	fts__shared_view(&view, map, (const struct fts__shm_head *)(void *)map, 0);
	{
		/* a resolution is taken only within reason: never negative or past the limit,
		 * 0 ticks exactly for 0 ns */
		int64_t res_ns;
		uint64_t res_ticks;
		if (fts__shared_resolution((const struct fts__shm_head *)(void *)map, &res_ns,
					   &res_ticks))
			CHECK(res_ns >= 0 && res_ns <= FTS__SHM_RES_MAX_NS &&
			      (res_ns == 0) == (res_ticks == 0));
	}
	(void)fts_calib_count(&view);
	if (fts_calib_range(&view, &lo, &hi) == 0)
		CHECK(lo <= hi || 1);   /* a hostile file may say anything: no crash is the test */
	for (size_t i = 0; i < 24; i++) {
		int64_t ns, err;
		uint64_t x = word(data, size, i);
		if (fts_calib_convert(&view, x, &ns, &err) < 0)
			CHECK(errno == EAGAIN || errno == ENODATA || errno == ERANGE);
	}
	copy = fts__histfile_copy(&view);
	if (copy) {
		CHECK(fts_calib_count(copy) >= 2);
		CHECK(fts_calib_range(copy, &lo, &hi) == 0 && lo <= hi);
		for (size_t i = 0; i < 24; i++) {
			int64_t a, ea, b, eb;
			uint64_t x = lo + (hi > lo ? word(data, size, i) % (hi - lo + 1) : 0);
			int ra = fts_calib_convert(&view, x, &a, &ea);
			int rb = fts_calib_convert(copy, x, &b, &eb);
			/* the view's own state, which the copy was taken from (nothing moves it here) */
			CHECK(ra == rb);
			if (ra == 0)
				CHECK(a == b && ea == eb);
		}
		fts_calib_free(copy);
	}
	return 0;
}
