/* test_replay.c - runs of the fault lab (scripts/guest/) that missed, replayed: each
 * one's record (the samples of every clock the guest's process took, from its first)
 * rebuilds the history that process had, and every stamp the run found outside its
 * bound must now lie within it. A run that misses prints its record and its misses
 * (tests/guest/guest_stamp.c); run-scenario keeps them as out/guest/NAME.rec and
 * NAME.misses, and they are added to tests/data/guest/ with the rule they led to.
 *
 *   tick-plus-lag-1, -2: ADJ_TICK +1 % in the tsc guest (Linux 6.1). The kernel reckons
 *     the new rate from a counter read and publishes it to readers later (here 80-140
 *     us under TCG): in between they read on at the old rate, then jump to the new
 *     line. Stamps taken then lay below the intersection of the cones by up to 223 ns
 *     (rule 5, the kernel's lag). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "testmain.h"
#include "faststamp.h"
#include "clk.h"
#include "histfile.h"

static const char *const clock_names[FTS__NCLK] = { "rt", "tai", "mono", "boot", "raw" };

/* Replay DIR/name.rec; every miss in DIR/name.misses (clock=, stamp=, before=, after=,
 * as the guest printed them) converts within its bound. Returns the misses checked. */
static int replay(const char *name)
{
	char path[512], line[1024];
	struct fts_calib *c[FTS__NCLK] = { 0 };
	int fd, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/guest/%s.rec", FTS_TEST_DATA, name);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fts__histfile_load_all_clocks(fd, c), 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/guest/%s.misses", FTS_TEST_DATA, name);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char clk[8] = "";
		uint64_t stamp;
		int64_t before, after, ns, err;
		int k = -1;
		const char *p = strstr(line, "clock=");

		assert_non_null(p);
		assert_int_equal(sscanf(p, "clock=%7s stamp=%" SCNu64 " before=%" SCNd64
					" after=%" SCNd64, clk, &stamp, &before, &after), 4);
		for (int i = 0; i < FTS__NCLK; i++)
			if (!strcmp(clk, clock_names[i]))
				k = i;
		assert_true(k >= 0 && c[k]);
		assert_int_equal(fts_calib_convert(c[k], stamp, &ns, &err), 0);
		if (ns + err < before || ns - err > after)
			print_message("%s: %s stamp %" PRIu64 ": %" PRId64 " +- %" PRId64
				      " misses [%" PRId64 ", %" PRId64 "]\n", name, clk, stamp, ns,
				      err, before, after);
		assert_true(ns + err >= before && ns - err <= after);
		n++;
	}
	fclose(f);
	for (int i = 0; i < FTS__NCLK; i++)
		fts_calib_free(c[i]);
	return n;
}

/* Rule 5, the kernel's lag behind a new rate: the fault lab's tick-plus misses. */
static void tick_plus_lag(void **state)
{
	(void)state;
	assert_int_equal(replay("tick-plus-lag-1"), 3);
	assert_int_equal(replay("tick-plus-lag-2"), 5);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tick_plus_lag),
	};
	return fts_test_run(tests, argc, argv);
}
