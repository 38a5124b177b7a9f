/* faststamp.h - take a timestamp for the cost of one CPU counter read, learn the
 * wall-clock time it stands for later.
 *
 * OVERVIEW
 *   store_fast_timestamp() records "now" as an 8-byte fast_timestamp_t by reading the
 *   CPU's counter (x86_64 rdtsc; see faststamp/arch.h). No system call, no lock, no
 *   shared memory written, no set-up. fast_timestamp_to_timespec() and
 *   fast_timestamp_to_timeval() later turn the stamp into what
 *   clock_gettime(CLOCK_REALTIME) and gettimeofday() would have read at that moment,
 *   in any thread, seconds or hours later.
 *
 *   Conversion uses a history of calibration samples (struct fts_calib): each sample is
 *   one read of the system clock bracketed by two counter reads. A stamp is converted
 *   from the samples around it, so it gets the clock's behaviour at the time it was
 *   taken (NTP slews and steps included), not today's. fts_convert() also returns an
 *   error bound: the clock's reading at the stamp lies within ns +/- err_ns.
 *
 *   At load the library decides whether new stamps may use the counter (CPUID and the
 *   kernel's clocksource; FASTSTAMP_BACKEND). On x86_64 that is where the kernel keeps
 *   time with the TSC (clocksource tsc) or with a clock it computes from it (kvm-clock,
 *   hyperv_clocksource_tsc_page, xen: most virtual machines). With those the kernel does
 *   not compare the CPUs' TSCs, so the first calibration does: a warp test between the
 *   first CPU and each other one (0.2-0.9 ms on 2 idle vCPUs; up to 1 s a pair on a
 *   loaded machine). A warp wider than a sample's bracket sends new stamps to
 *   clock_gettime and adds the offsets seen to the bounds of those taken before; later,
 *   the sampler thread moves to the next CPU each round and an offset it finds is a
 *   counter fault (stamps taken on that CPU since it went off, at most one round per
 *   CPU, are not covered, nor offsets under ~0.6 us). fts_info.proof tells.
 *   Nothing else happens until the first conversion, which finds a history to convert
 *   with:
 *   - the machine's, when `faststamp serve` publishes one (FASTSTAMP_SHARED names its
 *     socket, or 0 for none; default FTS_SHARED_PATH, /run/faststamp/clock) and it is
 *     valid: its publisher runs as root, this user or the service's user and answers
 *     within 100 ms with memory sealed against shrinking and writing (so nothing done
 *     to the path or the publisher can deliver a signal to this process), of this
 *     boot, counter and clocksource, its publisher alive (a heartbeat under 1 s old).
 *     The process then takes no thread and no samples, and every process converts a
 *     stamp the history holds to the same ns and bound; or
 *   - its own: three samples 2 ms apart; while conversions keep happening a
 *     background thread adds one every 100 ms and watches for steps of the wall
 *     clock (a timerfd with TFD_TIMER_CANCEL_ON_SET); after 10 s without conversions
 *     the thread exits. When no thread can be started, conversions take its samples
 *     (at most one per 100 ms) and retry the thread after 1 s, 2 s, ... up to 64 s.
 *   A process leaves the shared history when its publisher stops, its heartbeat goes
 *   stale or it cannot be read, keeping a copy of it: stamps converted with it before
 *   convert the same after. fts_get_info() says which history is used, and why not
 *   the shared one.
 *
 *   A stamp past the newest sample is converted with one clock read after it (rule 11
 *   below): cheap, and its bound holds even when the clock stepped since the sample.
 *   That read then serves the stamps after it for a few ms (rule 12), while the kernel
 *   has not updated its clock: a fresh stamp costs about one clock_gettime, and a
 *   burst of them one multiply each.
 *
 * FAILURE MODES
 *   Each sample also reads CLOCK_MONOTONIC, CLOCK_BOOTTIME and CLOCK_MONOTONIC_RAW.
 *   The counter is judged against CLOCK_MONOTONIC_RAW, which no NTP adjustment
 *   touches: a jump, a reset, a rate change or a reversal is a counter fault, and so is
 *   the kernel leaving the counter as its clocksource. A fault switches new stamps to
 *   clock_gettime; stamps taken before stay convertible. The wall clock is judged
 *   against the counter: slews of any rate the kernel allows (ADJ_TICK up to 10 %) are
 *   followed by the history; a step or a suspend lies somewhere between two samples,
 *   and stamps taken between them get a bound that covers both sides (that span is
 *   fts_info.step_window_ns). fts_get_info() says what was seen. See faststamp(3).
 *
 * STAMP FORMAT
 *   A fast_timestamp_t is a uint64_t. Bit 63 clear: a counter reading (low 63 bits).
 *   Bit 63 set: a CLOCK_REALTIME reading in ns (bits 0..62, two's complement in 63
 *   bits), taken when the counter is not trusted (generic backend). Both kinds convert
 *   through the same calls; compare stamps only through conversion or fts_diff_ns().
 *
 * ERRORS
 *   Functions returning int return 0 on success and -1 with errno set on failure, and
 *   leave their outputs untouched on failure. store_fast_timestamp() cannot fail and
 *   never changes errno.
 *
 * THREADS, SIGNALS, FORK AND UNLOADING
 *   Stores are async-signal-safe and thread-safe. Conversions are thread-safe but not
 *   async-signal-safe (they may take a mutex while sampling, and start a thread).
 *   The sampler thread blocks every signal, so the program's signals never run on it.
 *   Sleeps inside the library use absolute deadlines: a stream of signals delays a
 *   call by the handlers' own time only. fork() may be called while other threads
 *   convert: a pthread_atfork() handler keeps it from landing inside a history write;
 *   the child starts its own sampler when it converts. Readers of a history never
 *   wait: it is published through a latch, two copies of its state. The shared library is linked
 *   with -z nodelete: dlclose() leaves it mapped (its thread may be running), and a
 *   later dlopen() finds the same instance.
 */
#ifndef FASTSTAMP_H
#define FASTSTAMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#include <faststamp/arch.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#  define FTS__API __attribute__((visibility("default")))
#else
#  define FTS__API
#endif

/* An instant, as taken by store_fast_timestamp(). 8 bytes whatever the backend. */
typedef uint64_t fast_timestamp_t;

/* Bit 63 tags a stamp that holds CLOCK_REALTIME nanoseconds rather than a counter. */
#define FTS_STAMP_CLOCK_TAG (UINT64_C(1) << 63)

/* ABI-private: read by the inline stores, written by the library. Non-zero while the
 * counter is trusted for new stamps. Do not use. */
extern FTS__API int fts__store_counter;
/* ABI-private: a tagged CLOCK_REALTIME stamp; preserves errno. Do not use (programs
 * built against earlier headers call it; this one inlines it, fts__clock_stamp_inline). */
FTS__API fast_timestamp_t fts__clock_stamp(void);

/* ABI-private: the stores' fallback, the clock read alone (with a valid pointer
 * clock_gettime cannot fail: errno stays as it was). */
static inline fast_timestamp_t fts__clock_stamp_inline(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) | FTS_STAMP_CLOCK_TAG;
}

/* store_fast_timestamp - record the current instant in *stamp.
 *
 * One counter read, ordered after every earlier load and store of this thread: a stamp
 * stored after seeing (through memory) another thread's stamp is never earlier than it.
 * On x86_64 that is lfence; rdtsc. Falls back to clock_gettime(CLOCK_REALTIME) when the
 * counter is not trusted (see fts_get_info()).
 *
 * Cost: ~19 ns on a 2.6 GHz x86_64 VM (lfence; rdtsc ~19, rdtsc alone ~10,
 * clock_gettime ~23).
 * Never fails, never sets errno, no set-up needed. Async-signal-safe.
 * stamp must be a valid pointer (it is not checked, as with gettimeofday()). */
static inline void store_fast_timestamp(fast_timestamp_t *stamp)
{
#if FTS__HAVE_COUNTER
	if (__builtin_expect(__atomic_load_n(&fts__store_counter, __ATOMIC_RELAXED), 1)) {
		*stamp = fts__counter_read() & ~FTS_STAMP_CLOCK_TAG;
		return;
	}
#endif
	*stamp = fts__clock_stamp_inline();
}

/* fts_store_relaxed - like store_fast_timestamp(), without the ordering.
 *
 * The bare counter read may execute before earlier loads of this thread have
 * completed, so it can be a few ns earlier than program order suggests; consecutive
 * relaxed stores in one thread still never go backwards. Use it in loops that stamp
 * many items in a row (packets from one batch) where causality against other threads'
 * stamps does not matter. Cost: the bare counter read (~10 ns on x86_64).
 * Never fails, never sets errno. Async-signal-safe. */
static inline void fts_store_relaxed(fast_timestamp_t *stamp)
{
#if FTS__HAVE_COUNTER
	if (__builtin_expect(__atomic_load_n(&fts__store_counter, __ATOMIC_RELAXED), 1)) {
		*stamp = fts__counter_read_relaxed() & ~FTS_STAMP_CLOCK_TAG;
		return;
	}
#endif
	*stamp = fts__clock_stamp_inline();
}

/* fast_timestamp_to_timespec - what clock_gettime(CLOCK_REALTIME) read at *stamp.
 *
 * Returns 0, or -1 with errno: EINVAL (a NULL pointer, or a counter stamp on a build
 * without a counter), ERANGE (the time does not fit), ENOMEM (no memory for the
 * history), EAGAIN or the clock's error (no calibration sample could be taken and
 * there is no history yet).
 * Cost, on a 2-vCPU x86_64 VM with kvm-clock (clock_gettime 26 ns): ~17-22 ns for a
 * stamp inside the history (recent or a day old); ~28 ns for a fresh one, stored and
 * converted at once (1.07x clock_gettime: rule 12's line and one coarse clock read);
 * ~50 ns for one stored before the last clock read but past the newest sample (the
 * bridge to that read, rule 11); after idle, a fresh one costs 0.8-2.4x the first
 * clock_gettime after the same idle (cache and TLB misses: faststamp bench); the
 * first conversion in a process ~0.5 ms with the machine's shared history (median of
 * 9 fresh processes on a 2-vCPU VM with other work running; most of it is the
 * socket's round trip to serve's answering thread and the first fault on the mapping;
 * ~45 us when it was a mapped file), ~6 ms calibrating its own, every clock's
 * history (see OVERVIEW; faststamp bench). Thread-safe, not async-signal-safe. */
FTS__API int fast_timestamp_to_timespec(const fast_timestamp_t *stamp, struct timespec *ts);

/* fast_timestamp_to_timeval - what gettimeofday() read at *stamp (microseconds,
 * truncated as gettimeofday truncates). Errors and cost as fast_timestamp_to_timespec. */
FTS__API int fast_timestamp_to_timeval(const fast_timestamp_t *stamp, struct timeval *tv);

/* fts_convert - CLOCK_REALTIME in ns since the epoch at *stamp, and its error bound.
 *
 * On success *ns is the estimate and, if err_ns is not NULL, *err_ns >= 0 bounds it
 * the system clock read within [*ns - *err_ns, *ns + *err_ns] at that moment. The bound
 * covers sample noise, rate changes (slews) between samples and one clock step between
 * two samples; past the newest sample, one step between it and the clock read the
 * conversion takes after the stamp (rule 11).
 * Tagged CLOCK_REALTIME stamps convert exactly (*err_ns = 0).
 * Errors as fast_timestamp_to_timespec. */
FTS__API int fts_convert(const fast_timestamp_t *stamp, int64_t *ns, int64_t *err_ns);

/* fts_convert_array - convert n stamps at once: ns[i] (and err_ns[i] unless err_ns is
 * NULL) as fts_convert would give for stamps[i]. Stamps in increasing order without
 * bounds are cheapest (~2 ns each inside the history, ~4 with bounds; a burst of fresh
 * ones on rule 12's line ~2.6 ns, ~4.6 with bounds); any order works. n == 0 succeeds. On failure
 * (EINVAL for NULL arrays with n > 0, ERANGE, EAGAIN) the arrays may hold part of the
 * results. */
FTS__API int fts_convert_array(const fast_timestamp_t *stamps, size_t n, int64_t *ns,
			       int64_t *err_ns);

/* fts_convert_clock - what clock_gettime(clock) read at *stamp, and its bound.
 *
 * clock is CLOCK_REALTIME, CLOCK_TAI, CLOCK_MONOTONIC, CLOCK_BOOTTIME or
 * CLOCK_MONOTONIC_RAW; fts_convert() is exactly fts_convert_clock(..., CLOCK_REALTIME,
 * ...). *ns and *err_ns (err_ns may be NULL) as fts_convert: the clock read within
 * [*ns - *err_ns, *ns + *err_ns] at the stamp.
 * Every clock has a history of its own in the process clock, fed by the same samples
 * (each clock read between two counter reads of its own), and the same promise, rules
 * 1-12 (see THE MODEL below): a wall-clock step is no step of MONOTONIC, BOOTTIME or
 * MONOTONIC_RAW, so a stamp in the span of ambiguity around it keeps a tight bound on
 * those while REALTIME's covers both sides; a suspend widens only the clocks it
 * moves against the counter (REALTIME, TAI and BOOTTIME where the counter stopped,
 * MONOTONIC and MONOTONIC_RAW where it ran on); a leap second moves REALTIME, not TAI.
 * Through the machine's shared history too: `faststamp serve` publishes every clock's.
 * A tagged stamp (the generic backend, or after a counter fault) holds CLOCK_REALTIME's
 * reading: it converts to another clock as a counter stamp does, with CLOCK_REALTIME in
 * the counter's place, from reads of that clock between two CLOCK_REALTIME reads that
 * the conversions take (one a call, kept at most every 1 ms; src/tagged.c). Its bound
 * is wider than a counter stamp's (tens of us near a step, more after long gaps
 * between conversions), and where a step back made CLOCK_REALTIME read the stamp's
 * value twice, it covers both moments.
 * Returns 0, or -1 with errno as fts_convert, and: EINVAL (another clock); ERANGE (a
 * tagged stamp before 1970, on another clock); ENOTSUP (a counter stamp on another
 * clock through the shared history of an earlier build's publisher, which holds
 * CLOCK_REALTIME's alone).
 * Cost: 1.0-1.1x fts_convert's for the same stamp, single or batched (faststamp
 * bench, 2-vCPU kvm-clock VM). Memory: a history a clock, each as CLOCK_REALTIME's
 * (MONOTONIC_RAW's, which no slew moves, keeps few segments). Thread-safe, not
 * async-signal-safe. */
FTS__API int fts_convert_clock(const fast_timestamp_t *stamp, clockid_t clock, int64_t *ns,
			       int64_t *err_ns);

/* fts_convert_array_clock - fts_convert_array on clock (as fts_convert_clock): ns[i]
 * and err_ns[i] (unless err_ns is NULL) as fts_convert_clock gives for stamps[i].
 * EINVAL for another clock, even with n == 0; otherwise errors as fts_convert_array
 * and fts_convert_clock. */
FTS__API int fts_convert_array_clock(const fast_timestamp_t *stamps, size_t n, clockid_t clock,
				     int64_t *ns, int64_t *err_ns);

/* fts_diff_ns - elapsed ns from *earlier to *later (negative if *later is earlier).
 *
 * Two counter stamps: the tick difference at the counter's measured frequency, like
 * CLOCK_MONOTONIC_RAW (clock steps and slews do not enter). Otherwise the difference
 * of their CLOCK_REALTIME conversions. Errors: EINVAL (NULL), ERANGE, EAGAIN.
 * Cost: a multiply once the frequency is known (the first call measures it, ~10 ms). */
FTS__API int fts_diff_ns(const fast_timestamp_t *earlier, const fast_timestamp_t *later,
			 int64_t *ns);

/* fts_clock_start - calibrate now rather than at the first conversion.
 *
 * Optional. Stamps taken before the first sample are converted by extrapolating
 * backwards, with a bound that grows with their age; a program that stores many stamps
 * long before it converts any calls this at start-up. Starts the background sampler
 * (which exits after 10 s without conversions). Returns 0, or -1 with errno (EAGAIN:
 * the system clock failed). Not async-signal-safe. */
FTS__API int fts_clock_start(void);

/* What the process clock runs on; filled by fts_get_info(). */
struct fts_info {
	size_t size;             /* in: sizeof(struct fts_info) */
	char backend[16];        /* "tsc", "cntvct", "rdtime" or "generic": new stamps */
	char reason[256];        /* why that backend was chosen */
	char counter[16];        /* the counter instruction, "" without one */
	uint64_t counter_hz;     /* counter frequency, 0 if none */
	char freq_source[192];   /* where counter_hz came from */
	char clocksource[32];    /* the kernel's current clocksource, "" if unreadable */
	char cpu_flags[128];     /* CPU features that matter, space-separated */
	char env_backend[32];    /* FASTSTAMP_BACKEND as found, "" if unset */
	int env_ignored;         /* 1 when FASTSTAMP_BACKEND held an unknown value */
	size_t samples;          /* samples held by the process history now */
	uint64_t samples_taken;  /* samples taken since the process started */
	int64_t history_ns;      /* span of time the history covers, 0 if < 2 samples */
	int sampler_running;     /* 1 while the background sampler thread runs */
	uint64_t steps_seen;     /* wall-clock steps found between samples */
	uint64_t suspends_seen;  /* suspends found between samples */
	int64_t step_window_ns;  /* span of the interval that held the last step or suspend:
				  * stamps in it get a bound covering both sides; 0: none */
	/* The system clock against true time, from adjtimex(2): the kernel's NTP estimate.
	 * Not part of any conversion bound (those are to what the clock read). */
	int clock_synced;        /* 1 when the kernel considers the clock synchronised */
	int64_t clock_esterror_ns;  /* estimated error, -1 if unknown */
	int64_t clock_maxerror_ns;  /* maximum error, -1 if unknown */
	/* The history conversions use: "shared" (the machine's, published by `faststamp
	 * serve`, FASTSTAMP_SHARED), "process" (this process's own), or "" before the
	 * first conversion. */
	char history_source[16];
	char history_path[256];  /* the shared history's socket ("" for the process's own;
				  * in the publisher, the socket it publishes at) */
	char history_note[240];  /* why the shared one is not used, "" while it is or
				  * before the first conversion looked */
	/* The counter across CPUs, where the kernel keeps time with a clock computed from
	 * it (kvm-clock, Hyper-V's TSC page, xen) or it is forced: the warp test's result
	 * ("proven: ..."), or why none is needed. */
	char proof[200];
	int64_t cpu_skew_ns;     /* added to every counter stamp's bound for offsets between
				  * CPUs: 0 unless the warp test saw the counter go back;
				  * -1 while the test could not run */
	/* The other clocks fts_convert_clock() converts to, against CLOCK_REALTIME now:
	 * each clock's reading minus CLOCK_REALTIME's, ns, read between two CLOCK_REALTIME
	 * reads (to within their few tens of ns; 0 if a read failed). */
	int64_t tai_offset_ns;   /* CLOCK_TAI: the TAI-UTC offset (leap seconds) */
	int64_t mono_offset_ns;  /* CLOCK_MONOTONIC: moved by every set of the wall clock */
	int64_t boot_offset_ns;  /* CLOCK_BOOTTIME: that, plus the time spent suspended */
	int64_t raw_offset_ns;   /* CLOCK_MONOTONIC_RAW: drifts at NTP's correction */
};

/* The least info->size fts_get_info() accepts: the fields up to env_ignored. */
#define FTS_INFO_MIN_SIZE offsetof(struct fts_info, samples)

/* fts_get_info - describe the backend and the process history.
 * info->size must be set, to at least FTS_INFO_MIN_SIZE (sizeof(struct fts_info) for
 * a program built against this header). Only whole fields that end within info->size
 * are written: a program built against an older, smaller struct gets the fields it
 * knows; a size ending inside a field leaves that field and the rest untouched.
 * Measures the counter frequency on first use (~10 ms). Returns 0, or -1 with errno
 * EINVAL (NULL, or size below FTS_INFO_MIN_SIZE). Not async-signal-safe. */
FTS__API int fts_get_info(struct fts_info *info);

/* ---- Calibration histories: map any counter to any reference clock ----------------
 *
 * A struct fts_calib holds samples (before, ref_ns, after): the reference clock read
 * ref_ns while the counter went from before to after. It converts any counter value to
 * the reference's reading then, with a bound. The process clock behind
 * fast_timestamp_to_*() is one of these; a NIC or GPU clock can be mapped with another.
 *
 * THE MODEL
 *   What the reference may do between two consecutive samples (an interval):
 *   P1  it steps at most once;
 *   P2  otherwise it runs at rates within the band the rates measured beside the
 *       interval span (each give or take its brackets' noise), widened by the
 *       tolerance (1 ppm by default): a slew of any size that shows in the samples
 *       around it is followed, not mistaken for a step;
 *   P3  events are sparse: where the rates on the two sides of an interval differ and
 *       its own rate lies between them, the clock changed its rate there, and no
 *       step hides in it.
 *   The guarantee: for a counter value between the oldest and the newest sample, the
 *   reference read within [ns - err, ns + err] then. Outside the samples, the same
 *   holds if the clock kept the rate band of the interval at that end and did not
 *   step (the process clock checks that with a clock read after a fresh stamp).
 *
 *   The rules that give it, each a function of src/estimate.c (rule 11: history.h;
 *   rule 12: src/convert.c; rule 13: src/clock.c, tested in tests/test_faults.c; rule
 *   14: src/tagged.c, tests/test_tagged.c)
 *   with its own test (tests/test_rules.c):
 *   1  a sample read ref_ns somewhere within its bracket: at the bracket's middle the
 *      reading is ref_ns within half the bracket at the fastest rate, plus 1 ns;
 *   2  an interval's rate is measured between the middles, its noise from both
 *      brackets and the 1 ns readings;
 *   3  an interval holds a step when its rate lies outside the rates of the
 *      intervals on both sides of it by more than 2000 ppm (beyond NTP's frequency
 *      and adjtime slews together) plus the noise; a rate change, however large,
 *      leaves the interval holding it between its neighbours, so it is never a step;
 *      an interval the process clock saw a step in is one without a verdict;
 *   4  the band: the rates measured beside the interval, on each side over the
 *      nearest interval without a step (one step may lie between), extended over up
 *      to two more until it spans half the interval, and its own rate unless it
 *      steps; with nothing beside it, its own rate widened by 2000 ppm;
 *   5  the envelope: the cones of the band's rates forward from the earlier sample
 *      and back from the later one; their hull (one step of any size), or where P3
 *      applies, their intersection;
 *   6  the estimate: runs of connected lines, each passing every sample of its run
 *      within the sample's own uncertainty (rule 1): a wide bracket does not pull the
 *      line; a run ends at a step, where no line fits, where its intervals' bounds
 *      differ by more than twice, or after 64 intervals;
 *   7  an interval with a step is a segment of its own, its line through the middles
 *      of its envelope at both ends;
 *   8  a segment's bound is the farthest its line lies from the envelopes of its
 *      intervals (largest at their corner points), plus 2 ns of fixed-point rounding;
 *   9  before the first and after the newest sample the line goes on at the middle of
 *      the end interval's band, the bound growing by half its width;
 *   10 at the memory limit (max_bytes, max_samples) pairs of neighbouring segments
 *      are merged, those whose merging widens the bound least first, over the whole
 *      history, never across a step, until a quarter of the room is free; the merged
 *      bound covers what both covered, exactly; if only steps are left, the oldest
 *      segments go and their stamps are carried back from the first left (rule 9).
 *   11 between the newest sample and a clock read after a stamp (or between the end
 *      of one history and the start of the next), the clock stepped at most once: the
 *      stamp's reading lies on the tail's extrapolation or on the line back from the
 *      read at the same band; the bound covers both; the estimate is the middle of
 *      their overlap where they meet, of their hull where they do not.
 *   12 (the process clock) a clock read serves the stamps after it while the kernel's
 *      timekeeping epoch, CLOCK_REALTIME_COARSE (moved by every tick, step and new
 *      rate), reads as it did before the read: the clock ran on one line since, with
 *      no step, at a rate in the band (P2). Such a stamp lies on rule 11's estimate at
 *      the read carried on at the newest segment's rate, its bound growing by the band
 *      around that rate, for up to 10 ms and 50 ns of growth; the read is the
 *      narrowest of three, and only one as narrow as the narrowest seen serves. After
 *      the epoch moved, a read now bridges from that line (rule 11) and serves in turn,
 *      for up to 100 ms (the sampler's period) after the newest sample.
 *   13 (the process clock, every clock) each clock fts_convert_clock() converts to has
 *      a history of its own, fed by the same samples, each clock read in a counter
 *      bracket of its own, and told of the events that move it against the counter: a
 *      set of the wall clock moves REALTIME and TAI, a leap second REALTIME, a sleep
 *      REALTIME, TAI and BOOTTIME where the counter stopped and MONOTONIC and
 *      MONOTONIC_RAW where it ran on. Rules 1-12 hold for each: a clock an event did
 *      not move keeps the bounds of a quiet clock around it.
 *   14 (tagged stamps, on another clock) rules 1-11 with CLOCK_REALTIME in the
 *      counter's place: the samples are that clock read between two CLOCK_REALTIME
 *      reads, taken by the conversions, one after each call's stamps; a read below the
 *      newest (CLOCK_REALTIME went back) starts a new history, and a stamp's reading
 *      that two histories may hold (from the first read of the later one back by the
 *      interval between them, by CLOCK_MONOTONIC_RAW) converts with both, the bound
 *      covering both answers.
 *   An interval is settled (rules 3-5 final) once five more samples follow it; until
 *   then it is published on its own, with what is known, and rebuilt at each add.
 *
 * MEMORY AND COST
 *   The segments take 40 bytes each (8 of key, 32 of line and bound), in chunks of 256
 *   taken as needed from an address range reserved at creation (twice the memory
 *   limit; reserved, not used). A day of an NTP-disciplined clock at 10 samples a
 *   second keeps about 127,000 segments (4.9 MiB, 40 bytes each); a steady clock keeps
 *   about one in seven samples. fts_calib_add costs about 0.8 us; fts_calib_convert
 *   about 10 ns for a recent counter value, about 300 ns for a random one from a day
 *   (its look-up misses the caches), on a 2.6 GHz x86_64 VM.
 *
 * Threads: fts_calib_add() calls on one history must be serialised by the caller;
 * fts_calib_convert() may run in any number of threads concurrently with them. An add
 * does its work on the writer's own copies first, then publishes the few segments it
 * changed through a latch (two copies of the state; readers take the one not being
 * written): readers never wait, and write no shared memory. */
struct fts_calib;

/* Options for fts_calib_new_opts(); zero fields take the defaults. */
struct fts_calib_opts {
	size_t size;             /* in: sizeof(struct fts_calib_opts) */
	size_t max_samples;      /* the most knots (segment ends) kept; 0: no limit but
				  * max_bytes; else at least 16 */
	uint32_t rate_tol_ppb;   /* rate tolerance between samples; default 1000 (1 ppm) */
	size_t max_bytes;        /* the most memory its segments take; default 64 MiB */
};

/* fts_calib_new - an empty history. NULL with errno ENOMEM on failure. */
FTS__API struct fts_calib *fts_calib_new(void);

/* fts_calib_new_opts - an empty history with options (NULL opts: defaults).
 * NULL with errno EINVAL (opts->size too small for max_samples; bytes past the fields
 * this library knows not zero, which a newer caller's option would need;
 * max_samples below 16; max_bytes too small for 16 segments) or ENOMEM. */
FTS__API struct fts_calib *fts_calib_new_opts(const struct fts_calib_opts *opts);

/* fts_calib_free - release a history. NULL is ignored. */
FTS__API void fts_calib_free(struct fts_calib *c);

/* fts_calib_add - add one sample: the reference read ref_ns while the counter went
 * from before to after (before <= after). Samples come in counter order.
 * Returns 0, or -1 with errno EINVAL and the history unchanged: c NULL, before > after,
 * before earlier than the previous sample's after, or a bracket whose midpoint is not
 * past the previous one's; ENOMEM and the history unchanged: the memory limit is
 * reached and no segment can merge, or no memory for the merge. Cost: ~0.8 us; a merge
 * at the memory limit costs O(segments) once per quarter of the room. */
FTS__API int fts_calib_add(struct fts_calib *c, uint64_t before, int64_t ref_ns,
			   uint64_t after);

/* fts_calib_convert - reference time at counter, and its bound.
 * *ref_ns is the estimate; *err_ns >= 0 bounds it (see above). err_ns may be NULL.
 * Returns 0, or -1 with errno: EINVAL (c or ref_ns NULL), ENODATA (fewer than two
 * samples), ERANGE (the time or its bound does not fit an int64_t). Cost: ~10 ns for a
 * recent counter value; ~300 ns for a random one from a day-long history, where the
 * look-up misses the caches (one miss costs ~165 ns on the VM measured). */
FTS__API int fts_calib_convert(const struct fts_calib *c, uint64_t counter, int64_t *ref_ns,
			       int64_t *err_ns);

/* fts_calib_count - knots held now: the ends of the history's segments (a segment
 * stands for any number of samples), or the samples while fewer than two; 0 for
 * NULL. */
FTS__API size_t fts_calib_count(const struct fts_calib *c);

/* fts_calib_range - counter values of the oldest and newest knots held.
 * Returns 0, or -1 with errno EINVAL (NULL) or ENODATA (no sample). */
FTS__API int fts_calib_range(const struct fts_calib *c, uint64_t *oldest, uint64_t *newest);

/* ---- History files: stamps converted later, in another process --------------------
 *
 * A history file (format: faststamp-history(5)) holds a saved history, or the samples
 * and events of the process clock as they were taken. Either converts every counter
 * value to the same time and bound in any process, any time later, on any machine
 * that reads the file: `faststamp convert` does it from the command line. The process
 * clock's files (fts_clock_save, fts_clock_record; format 3) hold every clock of
 * fts_convert_clock (`faststamp convert --clock`); fts_calib_save's, and files of
 * formats 1 and 2, one history, read as CLOCK_REALTIME's. A counter
 * value means something only in the boot it was read in: the file names its boot
 * (`faststamp history FILE` shows it), and so should a log of stamps. */

/* fts_calib_save - write history c to fd (from its current position): a file that
 * fts_calib_load() turns into a history converting every counter value to the same ns
 * and bound. Not concurrently with fts_calib_add() on c (as for two adds). Returns 0,
 * or -1 with errno: EINVAL (c NULL, fd < 0), ENODATA (fewer than two samples), ENOMEM,
 * EFBIG (over 26 million segments), or write(2)'s (ENOSPC, EIO, ...); a failed write
 * leaves part of a file. Cost: ~40 bytes a segment, a write(2) per block. */
FTS__API int fts_calib_save(const struct fts_calib *c, int fd);

/* fts_calib_load - read a history file from fd: a saved history (it converts, and
 * takes no samples: fts_calib_add() on it fails with EPERM), or a record (its samples
 * replayed: it takes more). Of a file of every clock (fts_clock_save, fts_clock_record)
 * it gives CLOCK_REALTIME's history, building no other (their blocks are checked for
 * their checksums). Free it with fts_calib_free(). Returns NULL with errno:
 * EBADMSG (not a history file, a version this library does not read, a bad checksum,
 * a saved history cut short, segments out of order), ENODATA (a record of fewer than
 * two samples: only started, or stopped at once, or cut short before its second;
 * no history yet), EINVAL (fd < 0), ENOMEM or EIO. A record cut short at any byte
 * (a crash, a full disk) loads with every whole block before the cut. Every byte of a
 * file is under a checksum: a file changed anywhere is refused, never read as another
 * history (files of format 1, as earlier builds wrote them, are read too, without that
 * promise: faststamp-history(5)). Streams: a regular file is read 40 KB of a block at
 * a time, the history built as its bytes arrive, so a load takes the memory of the
 * history it gives and a constant, whatever the file's size (a 2-million-sample
 * record of 64 MB: 14-40 MB, its history); a pipe is read a block at a time. Allocates
 * only for blocks the file holds (1 GiB a block at most). Cost: ~2.5 us a sample. */
FTS__API struct fts_calib *fts_calib_load(int fd);

/* fts_clock_save - write the process clock's history, now, to fd (as fts_calib_save,
 * with the counter's kind and frequency, the clocksource and this boot's id): every
 * clock's (fts_convert_clock), taken at one sample; CLOCK_REALTIME's alone while the
 * process uses the shared history of an earlier build's `faststamp serve`. ~40 bytes
 * a segment of each clock. Returns
 * 0, or -1 with errno as fts_calib_save (ENODATA: no conversion yet, and so no
 * history: see fts_clock_start). Thread-safe, not async-signal-safe. */
FTS__API int fts_clock_save(int fd);

/* fts_clock_record - from now on, append every sample and every event (step, suspend,
 * counter fault) of the process clock to the file at path, so that any stamp the
 * process stores while recording converts later from the file alone, to every clock of
 * fts_convert_clock: each sample holds each clock's reading in its own counter bracket
 * and each clock's step flag (128 bytes a sample, 1.3 kB a second at the default 100 ms
 * period), so that its replay rebuilds each clock's history as the process had it.
 *
 * Starts calibrating at once, and keeps the sampler thread running while recording,
 * even if the process never converts. Samples are buffered and written once a second
 * (and at every event): a crash loses at most the last second. A new or empty file is
 * started; a record of this boot and counter is appended to (one cut short inside a
 * block goes on from its last whole block); anything else, a record of an older format
 * included, is left alone (EEXIST).
 * One recorder a file: the recorder holds an exclusive flock(2) on it while it records, and a second fts_clock_record on the same file, from this process
 * or any other, fails with EBUSY and changes nothing in it. A call that fails leaves
 * nothing behind: a file it created is removed, a file it found is left as it was.
 * A child of fork(2) does not write to its parent's record. path NULL stops recording
 * (the buffer is written, the file closed, the lock released). A symbolic link at path
 * is never followed (ELOOP), nor one that names nothing: a link another user left in a
 * shared directory such as /tmp cannot lead the recorder into a file of its user's.
 * Returns 0, or -1 with errno: EEXIST, EBUSY (this process records already: stop
 * first; or another recorder holds the file), ELOOP (path is a symbolic link), ENOTSUP (no counter in use: a build
 * without one, or the generic backend chosen at start, by FASTSTAMP_BACKEND=generic or
 * because the counter is unusable; stamps are clock readings, which convert without a
 * history; no file is created or opened), the errors of open(2) and write(2), or
 * fts_clock_start()'s.
 * Thread-safe, not async-signal-safe. */
FTS__API int fts_clock_record(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* FASTSTAMP_H */
