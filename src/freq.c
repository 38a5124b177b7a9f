/* freq.c - the counter's frequency, measured against CLOCK_MONOTONIC_RAW (which no NTP
 * adjustment touches), and the hardware hint trusted only where it agrees. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "bracket.h"
#include "internal.h"
#include "arch.h"
#include "backend.h"
#include "freq.h"
#include "now.h"

#define MEASURE_MS 10
/* A hint is used when it agrees this well with the measurement; a 10 ms measurement
 * with brackets of tens of ns is good to a few ppm, a wrong hint is off by far more. */
#define HINT_AGREE_PPM 200

static uint64_t read_counter(void *read)
{
	return ((uint64_t (*)(void))read)();
}

static int read_raw(void *ctx, int64_t *ns)
{
	(void)ctx;
	return fts__now(CLOCK_MONOTONIC_RAW, ns);
}

int fts__freq_measure(uint64_t (*read)(void), int ms, uint64_t *hz, uint64_t *err_ppb)
{
	struct fts__cbracket r0, r1;
	uint64_t c0, c1;
	int64_t start;
	int rc;

	if (!read || ms <= 0 || !hz)
		return -EINVAL;
	if ((rc = fts__cbracket_read(read_counter, read_raw, (void *)read, 5, &r0)) < 0)
		return rc;
	if (fts__now(CLOCK_MONOTONIC, &start) == 0)
		fts__sleep_until(start + (int64_t)ms * 1000000);
	if ((rc = fts__cbracket_read(read_counter, read_raw, (void *)read, 5, &r1)) < 0)
		return rc;
	c0 = r0.b + (r0.a - r0.b) / 2;
	c1 = r1.b + (r1.a - r1.b) / 2;
	if (c1 <= c0 || r1.ns <= r0.ns)
		return -EAGAIN;
	*hz = (uint64_t)((unsigned __int128)(c1 - c0) * 1000000000 / (uint64_t)(r1.ns - r0.ns));
	/* Each middle is within half its bracket, rounded up, of the clock read. */
	if (err_ppb)
		*err_ppb = (uint64_t)((unsigned __int128)(r0.a - r0.b + 1 + r1.a - r1.b + 1) / 2 *
				      1000000000 / (c1 - c0)) + 1;
	return 0;
}

static uint64_t freq_hz;
static char freq_src[256];
static pthread_once_t freq_once = PTHREAD_ONCE_INIT;

static uint64_t counter(void)
{
	return fts__arch_counter();
}

static void measure_once(void)
{
	const struct fts__choice *ch = fts__backend_choice();
	uint64_t hz = 0, eppb = 0;

	if (!FTS__HAVE_COUNTER || !fts__arch_counter()) {
		snprintf(freq_src, sizeof(freq_src), "no counter");
		return;
	}
	if (fts__freq_measure(counter, MEASURE_MS, &hz, &eppb) < 0) {
		snprintf(freq_src, sizeof(freq_src), "measurement failed");
		hz = 0;
	}
	if (ch->arch.hint_hz && hz) {
		int64_t diff = (int64_t)(ch->arch.hint_hz - hz);
		uint64_t ppm = (uint64_t)((diff < 0 ? -diff : diff) * (__int128)1000000 / (int64_t)hz);
		if (ppm <= HINT_AGREE_PPM) {
			snprintf(freq_src, sizeof(freq_src),
				 "%s, agrees with a %d ms measurement against "
				 "CLOCK_MONOTONIC_RAW within %llu ppm",
				 ch->arch.hint_source, MEASURE_MS, (unsigned long long)ppm);
			freq_hz = ch->arch.hint_hz;
			return;
		}
		snprintf(freq_src, sizeof(freq_src),
			 "measured against CLOCK_MONOTONIC_RAW over %d ms (+-%llu ppb); "
			 "%s disagrees by %llu ppm",
			 MEASURE_MS, (unsigned long long)eppb, ch->arch.hint_source,
			 (unsigned long long)ppm);
	} else if (hz) {
		snprintf(freq_src, sizeof(freq_src),
			 "measured against CLOCK_MONOTONIC_RAW over %d ms (+-%llu ppb); no hint",
			 MEASURE_MS, (unsigned long long)eppb);
	}
	freq_hz = hz;
}

uint64_t fts__freq(char *source, size_t len)
{
	pthread_once(&freq_once, measure_once);
	if (source && len)
		snprintf(source, len, "%s", freq_src);
	return freq_hz;
}
