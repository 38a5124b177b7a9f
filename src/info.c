/* info.c - fts_get_info(). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/timex.h>

#include "internal.h"

int fts_get_info(struct fts_info *info)
{
	const struct fts__choice *ch;
	const struct fts_calib *h;
	struct fts__clock_state cs;
	struct timex tx = { .modes = 0 };
	struct fts_info v;
	uint64_t a, b;
	size_t n;

	if (!info || info->size < offsetof(struct fts_info, samples)) {
		errno = EINVAL;
		return -1;
	}
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
	snprintf(v.clocksource, sizeof(v.clocksource), "%s", ch->clocksource);
	snprintf(v.cpu_flags, sizeof(v.cpu_flags), "%s", ch->arch.cpu_flags);
	snprintf(v.env_backend, sizeof(v.env_backend), "%s", ch->env);
	v.env_ignored = ch->env_ignored;
	h = fts__clock_history();
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
	v.step_window_ns = cs.step_window_ns;
	/* How far the system clock itself may be from true time, by the kernel's NTP
	 * state: information beside the bound, which is to what the clock read. */
	int st = adjtimex(&tx);
	v.clock_synced = st >= 0 && st != TIME_ERROR;
	v.clock_esterror_ns = st >= 0 ? (int64_t)tx.esterror * 1000 : -1;
	v.clock_maxerror_ns = st >= 0 ? (int64_t)tx.maxerror * 1000 : -1;
	v.size = info->size;
	memcpy(info, &v, info->size < sizeof(v) ? info->size : sizeof(v));
	return 0;
}
