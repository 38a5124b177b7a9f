/* test_cpus.c - the counter across CPUs, on a simulated machine whose kernel keeps time
 * with a clock computed from the counter (kvm-clock): offsets between the CPUs'
 * counters of 100 ns to 10 ms, forward and back, present when the process starts (the
 * warp test finds them, or they hide in its hand-over) or appearing while it runs (the
 * sampler, moving between CPUs, finds them against CLOCK_MONOTONIC_RAW), on two to
 * four CPUs, and jumps of every CPU's counter at once. Every stamp's bound must cover
 * the truth on every clock, except for stamps taken on the CPU whose counter moved
 * past a fault, between the move and the sample that finds it: the detection window,
 * measured here. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "testmain.h"

#include "faststamp.h"
#include "backend.h"
#include "simclock.h"

#define NCPU 2
#define MAXSTAMPS 8000
#define ROUND_NS 100e6L   /* the sampler's period */

static struct {
	size_t n;
	fast_timestamp_t s[MAXSTAMPS];
	int64_t truth[MAXSTAMPS];
	uint64_t t[MAXSTAMPS];
	int cpu[MAXSTAMPS];
} st;

/* A stamp on cpu now: the counter there while new stamps use it, else the clock. */
static void stamp_on(int cpu)
{
	if (st.n == MAXSTAMPS)
		return;
	st.truth[st.n] = sim_truth(&simc.rt, simc.t);
	st.s[st.n] = __atomic_load_n(&fts__store_counter, __ATOMIC_RELAXED)
			     ? simc_stamp_on(cpu)
			     : ((uint64_t)st.truth[st.n] & ~FTS_STAMP_CLOCK_TAG) | FTS_STAMP_CLOCK_TAG;
	st.t[st.n] = simc.t;
	st.cpu[st.n] = cpu;
	st.n++;
}

static int faulted(void)
{
	struct fts__clock_state cs;
	fts__clock_state(&cs);
	return cs.faulted;
}

static int move_all;   /* run() moves every CPU's counter, not CPU 1's alone */

/* ns of true time with a stamp every ms on each CPU in turn and a sampler round every
 * 100 ms; at `at` ns (if >= 0) CPU 1's counter (every CPU's, with move_all) moves by
 * off ticks, at true tick *moved. Returns the true ticks from the move to the round
 * that found it (0: not found). */
static uint64_t run(long double ns, long double at, int64_t off, uint64_t *moved_at)
{
	uint64_t moved = 0, found = 0;
	long double since = 0;

	for (long double t = 0; t < ns; t += 1e6L) {
		if (at >= 0 && t >= at && !moved) {
			for (int c = move_all ? 0 : 1; c < (move_all ? simc.ncpu : 2); c++)
				simc.cpu_off[c] += off;
			moved = simc.t;
			if (moved_at)
				*moved_at = moved;
		}
		stamp_on((int)(st.n % (size_t)simc.ncpu));
		simc_advance(1e6L);
		if ((since += 1e6L) >= ROUND_NS) {
			since = 0;
			fts__clock_round();
			if (moved && !found && faulted())
				found = simc.t;
		}
	}
	return found ? found - moved : 0;
}

static const clockid_t clocks[FTS__NCLK] = { CLOCK_REALTIME, CLOCK_TAI, CLOCK_MONOTONIC,
					     CLOCK_BOOTTIME, CLOCK_MONOTONIC_RAW };

/* Every stamp converts on every clock, and its bound covers its truth there (a clock
 * reading, on CLOCK_REALTIME alone: on the others it converts with the real clocks,
 * not the simulated ones); stamps on CPU 1 in [from, to) true ticks are not judged.
 * Returns the widest bound. */
static int64_t judge(const char *what, uint64_t from, uint64_t to)
{
	size_t uncovered = 0, judged = 0;
	int64_t widest = 0;

	for (int k = 0; k < FTS__NCLK; k++)
		for (size_t i = 0; i < st.n; i++) {
			int64_t ns, err, miss, truth;
			if (k && (st.s[i] & FTS_STAMP_CLOCK_TAG))
				continue;
			assert_int_equal(fts_convert_clock(&st.s[i], clocks[k], &ns, &err), 0);
			if (st.cpu[i] == 1 && st.t[i] >= from && st.t[i] < to)
				continue;
			judged++;
			truth = k ? simc_truth_of(k, st.t[i]) : st.truth[i];
			miss = ns > truth ? ns - truth : truth - ns;
			widest = err > widest ? err : widest;
			if (miss > err && uncovered++ < 5)
				print_message("  miss: clock %d stamp %zu on CPU %d: est %lld err %lld "
					      "truth %lld\n", k, i, st.cpu[i], (long long)ns,
					      (long long)err, (long long)truth);
		}
	print_message("%-34s %zu conversions judged, %zu uncovered, widest bound %lld ns\n",
		      what, judged, uncovered, (long long)widest);
	assert_int_equal(uncovered, 0);
	return widest;
}

/* Below a microsecond, the offsets that matter most on virtual machines: a few hundred
 * ns is wider than a sample's bracket. The simulated hand-over takes HOP_NS. */
static const int64_t offsets_ns[] = { 100, -100, 300, -300, 900, -900, 2000, -2000,
				      100000, -100000, 10000000, -10000000 };
#define NOFFSETS (sizeof(offsets_ns) / sizeof(offsets_ns[0]))
#define HOP_NS 100

static int64_t info_skew_ns(void)
{
	struct fts_info in = { .size = sizeof(in) };
	assert_int_equal(fts_get_info(&in), 0);
	return in.cpu_skew_ns;
}

/* Offsets there when the process starts: the warp test sees one wider than a
 * hand-over (HOP_NS) as a warp, so new stamps use the clock; one within it is not seen,
 * and the counter stays. Either way every counter stamp's bound covers the offset (the
 * hand-over's latency is the floor of the skew) and little more. */
static void offsets_at_start(void **unused)
{
	(void)unused;
	for (size_t k = 0; k < NOFFSETS; k++) {
		struct fts__clock_state cs;
		char what[64], figures[160];
		int64_t widest, off = llabs(offsets_ns[k]), skew;
		int64_t ticks = llabs((int64_t)(offsets_ns[k] * 2.6L));
		int seen = off > HOP_NS;

		simc_use_cpus(10 + k, NCPU);
		st.n = 0;
		simc.cpu_off[1] = (int64_t)(offsets_ns[k] * 2.6L);
		run(50e6L, -1, 0, NULL);   /* stamps before any conversion */
		assert_int_equal(fts_clock_start(), 0);
		fts__clock_state(&cs);
		skew = info_skew_ns();
		print_message("%+lld ns: %s; skew %lld ns\n", (long long)offsets_ns[k], cs.proof,
			      (long long)skew);
		/* the figures: hand-overs take hop ticks, plus or minus the offset */
		if (seen)
			snprintf(figures, sizeof(figures), "warp found, new stamps use clock_gettime: "
				 "2 CPUs, the counter went back %lld ticks between CPU 1",
				 (long long)(ticks - (int64_t)simc.hop));
		else
			snprintf(figures, sizeof(figures), "proven: 2 CPUs, no backward step "
				 "(offsets within %lld ticks)", (long long)(ticks + (int64_t)simc.hop));
		assert_non_null(strstr(cs.proof, figures));
		assert_int_equal(__atomic_load_n(&fts__store_counter, __ATOMIC_RELAXED),
				 !seen && fts__backend_choice()->store_counter);
		/* the bound covers the offset and the hand-over it hides in, and little more */
		assert_true(skew >= off + HOP_NS && skew <= off + HOP_NS + 1000);
		run(1e9L, -1, 0, NULL);
		snprintf(what, sizeof(what), "offset %+lld ns at start", (long long)offsets_ns[k]);
		widest = judge(what, 0, 0);
		if (fts__backend_choice()->store_counter)   /* else clock readings, exact */
			assert_true(widest >= off);
	}
	simc_stop_thread();
}

/* Offsets that appear while the process runs. One past the sampler's threshold
 * (health.c: ~0.6 us here) is a fault, found by a sample on the CPU that moved within
 * one round per CPU; until then its stamps may be wrong (the window). A smaller one
 * is within the skew, which the sampler's visits widen to what they could not rule
 * out: every counter stamp's bound covers it, converted after a visit. */
static void offsets_mid_run(void **unused)
{
	(void)unused;
	for (size_t k = 0; k < NOFFSETS; k++) {
		struct fts__clock_state cs;
		char what[64];
		uint64_t window, moved;
		int64_t off = llabs(offsets_ns[k]), skew;

		simc_use_cpus(20 + k, NCPU);
		st.n = 0;
		assert_int_equal(fts_clock_start(), 0);
		fts__clock_state(&cs);
		assert_non_null(strstr(cs.proof, "proven"));
		/* no offset: the hand-over's latency, which the test cannot see through (its
		 * ns rounded up: 100 or 101, as the counter's rate was measured) */
		skew = info_skew_ns();
		assert_true(skew >= HOP_NS && skew <= HOP_NS + 1);
		run(2e9L, -1, 0, NULL);
		assert_false(faulted());
		window = run(2e9L, 0.55e9L, (int64_t)(offsets_ns[k] * 2.6L), &moved);
		fts__clock_state(&cs);
		skew = info_skew_ns();
		print_message("%+lld ns on CPU 1 after 2.55 s: found %.1f ms later: %s; skew %lld ns\n",
			      (long long)offsets_ns[k], (double)window / 2.6e6,
			      cs.faulted ? cs.fault : "no fault", (long long)skew);

		snprintf(what, sizeof(what), "offset %+lld ns mid-run", (long long)offsets_ns[k]);
		if (off < 900) {
			assert_false(cs.faulted);
			assert_true(skew >= off && skew <= off + 1000);
			assert_int_equal(__atomic_load_n(&fts__store_counter, __ATOMIC_RELAXED),
					 fts__backend_choice()->store_counter);
			judge(what, 0, 0);
			continue;
		}
		/* found, within a round per CPU */
		assert_true(window > 0);
		assert_true(window <= (uint64_t)(NCPU * ROUND_NS * 2.6L) + 2600000);
		assert_int_equal(__atomic_load_n(&fts__store_counter, __ATOMIC_RELAXED), 0);
		judge(what, moved, moved + window);
	}
	simc_stop_thread();
}

/* More than two CPUs. At the start the warp test bounds each CPU's offset from the
 * first, so two others may differ by twice that: here the samples are taken on CPU 1,
 * 200 ns ahead, and stamps on CPU 2, 200 ns behind. Later, offsets of 300 ns between
 * CPUs the sampler visits one after the other (each too small to be a fault) add up to
 * 600 ns between CPUs 0 and 2, which it never visits one after the other. */
static void offsets_between_other_cpus(void **unused)
{
	static const int64_t later_ns[4] = { 0, 300, 600, 300 };
	int64_t skew;
	(void)unused;

	simc_use_cpus(60, 3);
	st.n = 0;
	simc.cpu = 1;
	simc.cpu_off[1] = (int64_t)(200 * 2.6L);
	simc.cpu_off[2] = (int64_t)(-200 * 2.6L);
	run(50e6L, -1, 0, NULL);
	assert_int_equal(fts_clock_start(), 0);
	skew = info_skew_ns();
	print_message("3 CPUs, +-200 ns at start, samples on CPU 1: skew %lld ns\n", (long long)skew);
	assert_true(skew >= 400);
	run(1e9L, -1, 0, NULL);
	judge("+-200 ns on CPUs 1 and 2 at start", 0, 0);

	simc_use_cpus(61, 4);
	st.n = 0;
	assert_int_equal(fts_clock_start(), 0);
	run(2e9L, -1, 0, NULL);
	for (int c = 0; c < 4; c++)
		simc.cpu_off[c] = (int64_t)(later_ns[c] * 2.6L);
	for (int i = 0; i < 8; i++) {   /* two rounds of the CPUs, no stamps */
		simc_advance(ROUND_NS);
		fts__clock_round();
	}
	run(1e9L, -1, 0, NULL);
	skew = info_skew_ns();
	print_message("4 CPUs, 0/300/600/300 ns after 2 s: %s; skew %lld ns\n",
		      faulted() ? "fault" : "no fault", (long long)skew);
	assert_false(faulted());
	assert_true(skew >= 600);
	judge("0/300/600/300 ns on 4 CPUs mid-run", 0, 0);
	simc_stop_thread();
}

/* A jump of the counter on every CPU at once (a hypervisor that moved the machine): the
 * sampler finds it on the CPU it moved to, and again on the one before, so the
 * interval is a break in the history and every stamp keeps a bound that covers it. */
static void jump_on_every_cpu(void **unused)
{
	static const int64_t jumps_ns[] = { 2000, -2000, 100000, -100000, 10000000, -10000000 };
	(void)unused;

	move_all = 1;
	for (size_t k = 0; k < sizeof(jumps_ns) / sizeof(jumps_ns[0]); k++) {
		struct fts__clock_state cs;
		char what[64];
		uint64_t window, moved;
		int64_t widest;

		if (jumps_ns[k] < 0)
			continue;   /* a counter set back repeats earlier values: no bound can tell */
		simc_use_cpus(40 + k, NCPU);
		st.n = 0;
		assert_int_equal(fts_clock_start(), 0);
		run(2e9L, -1, 0, NULL);
		window = run(2e9L, 0.55e9L, (int64_t)(jumps_ns[k] * 2.6L), &moved);
		fts__clock_state(&cs);
		print_message("%+lld ns on every CPU: found %.1f ms later: %s\n",
			      (long long)jumps_ns[k], (double)window / 2.6e6, cs.fault);
		assert_true(window > 0);
		snprintf(what, sizeof(what), "jump %+lld ns on every CPU", (long long)jumps_ns[k]);
		widest = judge(what, 0, 0);
		/* the break: either side of it (with counter stamps: the generic backend's
		 * are clock readings, exact) */
		if (fts__backend_choice()->store_counter)
			assert_true(widest >= jumps_ns[k] / 2);
	}
	move_all = 0;
	simc_stop_thread();
}

/* A warp test that could not run: new stamps use the clock, a counter stamp stored
 * before waits (EAGAIN), and a sampler round after the retry time (1 s) runs it again:
 * then the counter is back, and the stamp converts. */
static void proof_retried_by_sampler(void **unused)
{
	struct fts__clock_state cs;
	fast_timestamp_t early;
	int64_t ns, err;
	(void)unused;

	simc_use_cpus(50, NCPU);
	simc.warp_fails = 1;
	early = simc_stamp_on(0);
	assert_int_equal(fts_clock_start(), 0);
	fts__clock_state(&cs);
	assert_non_null(strstr(cs.proof, "could not run"));
	assert_int_equal(__atomic_load_n(&fts__store_counter, __ATOMIC_RELAXED), 0);
	assert_int_equal(fts_convert(&early, &ns, &err), -1);
	assert_int_equal(errno, EAGAIN);
	fts__clock_round();   /* before the retry is due: still waiting */
	fts__clock_state(&cs);
	assert_non_null(strstr(cs.proof, "could not run"));
	usleep(1100000);
	simc_advance(100e6L);
	fts__clock_round();
	fts__clock_state(&cs);
	print_message("after the retry: %s\n", cs.proof);
	assert_non_null(strstr(cs.proof, "proven"));
	assert_int_equal(__atomic_load_n(&fts__store_counter, __ATOMIC_RELAXED),
			 fts__backend_choice()->store_counter);
	assert_int_equal(fts_convert(&early, &ns, &err), 0);
	simc_stop_thread();
}

/* Without offsets the sampler visits every CPU and finds nothing. */
static void no_offset_no_fault(void **unused)
{
	(void)unused;
	simc_use_cpus(30, NCPU);
	st.n = 0;
	assert_int_equal(fts_clock_start(), 0);
	simc_slew(50);   /* a slew moves the wall clock, not the counter against RAW */
	run(3e9L, -1, 0, NULL);
	assert_false(faulted());
	assert_int_equal(__atomic_load_n(&fts__store_counter, __ATOMIC_RELAXED),
			 fts__backend_choice()->store_counter);
	judge("no offset, 50 ppm slew", 0, 0);
	simc_stop_thread();
}

/* A move to another CPU returns once that CPU runs the sampler: a scheduler's slice
 * when a thread of the program keeps it busy. The sampler moves without the process
 * clock's lock, so that conversions, the event drain and fts_get_info, which take it,
 * do not wait with it: inside a move, another thread's fts_get_info returns. */
static pthread_t looker;
static int moves, looked_in_time;

static void *look(void *unused)
{
	struct fts_info in = { .size = sizeof(in) };
	(void)unused;
	assert_int_equal(fts_get_info(&in), 0);
	return NULL;
}

static void look_while_moving(void)
{
	struct timespec ts;

	moves++;
	assert_int_equal(pthread_create(&looker, NULL, look, NULL), 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;   /* it takes microseconds; 5 s is a lock held */
	looked_in_time = pthread_timedjoin_np(looker, NULL, &ts) == 0;
}

static void moves_without_the_lock(void **unused)
{
	(void)unused;
	simc_use_cpus(60, NCPU);
	st.n = 0;
	assert_int_equal(fts_clock_start(), 0);
	run(300e6L, -1, 0, NULL);   /* proven, on CPU 0 or 1 */
	moves = looked_in_time = 0;
	simc_on_migrate = look_while_moving;
	fts__clock_round();
	simc_on_migrate = NULL;
	if (moves && !looked_in_time)
		pthread_join(looker, NULL);   /* the round has let the lock go */
	assert_int_equal(moves, 1);
	assert_true(looked_in_time);
	simc_stop_thread();
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(offsets_at_start),
		cmocka_unit_test(offsets_mid_run),
		cmocka_unit_test(offsets_between_other_cpus),
		cmocka_unit_test(jump_on_every_cpu),
		cmocka_unit_test(proof_retried_by_sampler),
		cmocka_unit_test(no_offset_no_fault),
		cmocka_unit_test(moves_without_the_lock),
	};
	return fts_test_run(tests, argc, argv);
}
