/* info.c - fts_get_info(). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>

#include "internal.h"
#include "arch.h"
#include "backend.h"
#include "clock.h"
#include "freq.h"
#include "now.h"

/* Larger than struct fts_info will ever grow. */
#define INFO_MAX_SIZE 65536

/* Where each field of struct fts_info ends, in order. */
#define END(f) (offsetof(struct fts_info, f) + sizeof(((struct fts_info *)0)->f))
static const size_t field_end[] = {
	END(size), END(backend), END(reason), END(counter), END(counter_hz),
	END(freq_source), END(clocksource), END(cpu_flags), END(env_backend),
	END(env_ignored), END(samples), END(samples_taken), END(history_ns),
	END(sampler_running), END(steps_seen), END(suspends_seen), END(step_window_ns),
	END(clock_synced), END(clock_esterror_ns), END(clock_maxerror_ns),
	END(history_source), END(history_path), END(history_note), END(proof), END(cpu_skew_ns),
	END(tai_offset_ns), END(mono_offset_ns), END(boot_offset_ns), END(raw_offset_ns),
	END(clock_res_ns),
};
_Static_assert(END(clock_res_ns) == sizeof(struct fts_info), "field_end lists every field");

/* Clock id's reading minus CLOCK_REALTIME's at the same moment: the narrowest of a few
 * brackets of two CLOCK_REALTIME reads, at their middle. 0 if a read failed. */
static int64_t offset_of(clockid_t id)
{
	int64_t best = 0, width = INT64_MAX;

	for (int i = 0; i < 5; i++) {
		int64_t a, x, b;
		if (fts__now(CLOCK_REALTIME, &a) < 0 || fts__now(id, &x) < 0 ||
		    fts__now(CLOCK_REALTIME, &b) < 0 || b < a)
			continue;
		if (b - a < width) {
			width = b - a;
			best = x - (a + (b - a) / 2);
		}
	}
	return best;
}

/* The bytes to copy for a caller's struct of size bytes: whole fields only, so a
 * caller built against an older header gets the fields it knows, and a size that ends
 * inside a field leaves that field alone rather than copying part of it. */
static size_t whole_fields(size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(field_end) / sizeof(field_end[0]); i++)
		if (field_end[i] <= size)
			n = field_end[i];
	return n;
}

int fts_get_info(struct fts_info *info)
{
	const struct fts__choice *ch;
	const struct fts_calib *h;
	struct fts__clock_state cs;
	struct timex tx = { .modes = 0 };
	struct fts_info v;
	uint64_t a, b;
	size_t n;

	/* A size past INFO_MAX_SIZE was never set (stack garbage), not a newer caller's. */
	if (!info || info->size < FTS_INFO_MIN_SIZE || info->size > INFO_MAX_SIZE)
		return fts__fail(EINVAL);
	ch = fts__backend_choice();
	memset(&v, 0, sizeof(v));
	snprintf(v.backend, sizeof(v.backend), "%s",
		 __atomic_load_n(&fts__store_counter, __ATOMIC_RELAXED) ? ch->arch.backend
									  : "generic");
	fts__clock_state(&cs);
	if (cs.faulted)
		snprintf(v.reason, sizeof(v.reason), "counter fault, new stamps use clock_gettime: %s",
			 cs.fault);
	else
		snprintf(v.reason, sizeof(v.reason), "%s", ch->arch.reason);
#ifdef FTS__COUNTER_NAME
	snprintf(v.counter, sizeof(v.counter), "%s", FTS__HAVE_COUNTER ? FTS__COUNTER_NAME : "");
#endif
	v.counter_hz = fts__freq(v.freq_source, sizeof(v.freq_source));
	/* Now, not at the choice: the kernel may have switched since. */
	if (fts__clock_clocksource(v.clocksource, sizeof(v.clocksource)) < 0)
		v.clocksource[0] = '\0';
	snprintf(v.cpu_flags, sizeof(v.cpu_flags), "%s", ch->arch.cpu_flags);
	fts__arch_info_flags(v.cpu_flags, sizeof(v.cpu_flags));
	snprintf(v.env_backend, sizeof(v.env_backend), "%s", ch->env);
	v.env_ignored = ch->env_ignored;
	h = fts__clock_history(FTS__CLK_REALTIME);
	n = fts_calib_count(h);
	v.samples = n;
	v.samples_taken = cs.samples_taken;
	if (n >= 2 && fts_calib_range(h, &a, &b) == 0) {
		int64_t ra, rb;
		if (fts_calib_convert(h, a, &ra, NULL) == 0 && fts_calib_convert(h, b, &rb, NULL) == 0)
			v.history_ns = rb - ra;
	}
	v.sampler_running = cs.running;
	v.steps_seen = cs.steps;
	v.suspends_seen = cs.suspends;
	v.step_window_ns = cs.ambiguous_ns;
	snprintf(v.proof, sizeof(v.proof), "%s", cs.proof);
	v.cpu_skew_ns = cs.skew_ns;
	v.clock_res_ns = cs.res_ns;
	v.tai_offset_ns = offset_of(CLOCK_TAI);
	v.mono_offset_ns = offset_of(CLOCK_MONOTONIC);
	v.boot_offset_ns = offset_of(CLOCK_BOOTTIME);
	v.raw_offset_ns = offset_of(CLOCK_MONOTONIC_RAW);
	/* How far the system clock itself may be from true time, by the kernel's NTP
	 * state: information beside the bound, which is to what the clock read. */
	int st = adjtimex(&tx);
	v.clock_synced = st >= 0 && st != TIME_ERROR;
	v.clock_esterror_ns = st >= 0 ? (int64_t)tx.esterror * 1000 : -1;
	v.clock_maxerror_ns = st >= 0 ? (int64_t)tx.maxerror * 1000 : -1;
	fts__clock_sharing(v.history_source, sizeof(v.history_source), v.history_path,
			   sizeof(v.history_path), v.history_note, sizeof(v.history_note));
	v.size = info->size;
	memcpy(info, &v, whole_fields(info->size));
	return 0;
}
