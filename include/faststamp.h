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
 *   first CPU and each other one (under a millisecond a pair on idle CPUs; up to 1 s a
 *   pair on a loaded machine). It sees an offset between two CPUs only past the
 *   latency of a hand-over between them (around a tenth of a microsecond on idle CPUs,
 *   several times that on a loaded machine; figures in docs/benchmark-notes.md): every
 *   counter stamp's bound takes what it could not rule out, that latency included
 *   (fts_info.cpu_skew_ns), and a warp wider than a sample's bracket sends new stamps to
 *   clock_gettime. Later, the sampler thread moves to the next CPU each round: an
 *   offset it finds past about 0.6 us (the check's 500 ns and 1 ppm of a round) is a
 *   counter fault (stamps taken on that CPU since it went off, at most one round per
 *   CPU, are not covered); a smaller one widens cpu_skew_ns from the round that
 *   measures it (conversions before it do not cover it). fts_info.proof tells.
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
 *   - its own: three samples 2 ms apart (more on a coarse clock); while conversions
 *     keep happening a background thread adds one every 100 ms and watches for steps
 *     of the wall clock (a timerfd with TFD_TIMER_CANCEL_ON_SET); after 10 s without
 *     conversions the thread exits. When no thread can be started, conversions take its samples
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
 * Cost: the ordered counter read and nothing measurable around it (tens of ns; where the
 * kernel keeps time with the TSC, about what clock_gettime costs, whose vDSO runs the
 * same lfence; rdtsc). Figures: docs/benchmarks.md.
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
 * stamps does not matter. Cost: the bare counter read (about half the ordered one on
 * x86_64).
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
 * A counter stamp this process cannot have stored (from before the boot, or past now:
 * rule 15) is ERANGE.
 * Returns 0, or -1 with errno: EINVAL (a NULL pointer, or a counter stamp on a build
 * without a counter), ERANGE (the time does not fit), ENOMEM (no memory for the
 * history), EAGAIN or the clock's error (no calibration sample could be taken and
 * there is no history yet).
 * Cost: about one clock_gettime (tens of ns) for a stamp inside the history, recent or
 * a day old; the same for a fresh one, stored and converted at once (rule 12's line
 * and one coarse clock read); a few times that for one stored before the last clock
 * read but past the newest sample (the bridge to that read, rule 11); after idle, a
 * conversion, fresh or old, pays cache and TLB misses, as the first clock_gettime after
 * the same idle does, and some more: more attached to faststamp serve, whose history
 * another CPU writes (docs/benchmark-notes.md has the figures).
 * The first conversion in a process: of the order of 100 us with the machine's shared
 * history (mostly the socket's round trip to serve's answering thread and the first
 * fault on the mapping), a few ms calibrating its own, every clock's history (see
 * OVERVIEW). Figures: docs/benchmarks.md (faststamp bench). Thread-safe, not
 * async-signal-safe. */
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
 * Tagged CLOCK_REALTIME stamps convert exactly (*err_ns = 0). Two conversions of one
 * counter stamp may differ, within each other's bounds: THE MODEL says when and why.
 * Errors as fast_timestamp_to_timespec. */
FTS__API int fts_convert(const fast_timestamp_t *stamp, int64_t *ns, int64_t *err_ns);

/* fts_convert_array - convert n stamps at once: ns[i] (and err_ns[i] unless err_ns is
 * NULL) as fts_convert would give for stamps[i]. Stamps in increasing order without
 * bounds are cheapest (a few ns each inside the history or for a burst of fresh ones
 * on rule 12's line, a little more with bounds); any order works. n == 0 succeeds. On failure
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
 * Cost: about fts_convert's for the same stamp, single or batched (docs/benchmarks.md
 * compares them). Memory: a history a clock, each as CLOCK_REALTIME's
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
 * Cost: a multiply once the frequency is known (the first call measures it, for 10 ms). */
FTS__API int fts_diff_ns(const fast_timestamp_t *earlier, const fast_timestamp_t *later,
			 int64_t *ns);

/* fts_clock_start - calibrate now rather than at the first conversion.
 *
 * Optional. Stamps taken before the first sample (since the boot: rule 15) are
 * converted by extrapolating backwards, with a bound that grows with their age; a
 * program that stores many stamps long before it converts any calls this at start-up.
 * Starts the background sampler (which exits after 10 s without conversions). Returns
 * 0, or -1 with errno (EAGAIN: the system clock failed). Not async-signal-safe. */
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
				  * in the publisher, the socket it publishes at; before the
				  * first conversion, the one it will look for, "" for
				  * FASTSTAMP_SHARED=0) */
	char history_note[240];  /* why the shared one is not used, "" while it is or
				  * before the first conversion looked */
	/* The counter across CPUs, where the kernel keeps time with a clock computed from
	 * it (kvm-clock, Hyper-V's TSC page, xen) or it is forced: the warp test's result
	 * ("proven: ..."), or why none is needed. */
	char proof[200];
	int64_t cpu_skew_ns;     /* added to every counter stamp's bound for offsets between
				  * CPUs: what the warp test could not rule out (the offsets
				  * it saw, or under them its hand-over's latency: a fraction of a
				  * microsecond on VMs), widened by offsets the sampler measures later
				  * below a fault; 0 where no test is needed or one CPU;
				  * -1 while the test could not run */
	/* The other clocks fts_convert_clock() converts to, against CLOCK_REALTIME now:
	 * each clock's reading minus CLOCK_REALTIME's, ns, read between two CLOCK_REALTIME
	 * reads (to within their few tens of ns; 0 if a read failed). */
	int64_t tai_offset_ns;   /* CLOCK_TAI: the TAI-UTC offset (leap seconds) */
	int64_t mono_offset_ns;  /* CLOCK_MONOTONIC: moved by every set of the wall clock */
	int64_t boot_offset_ns;  /* CLOCK_BOOTTIME: that, plus the time spent suspended */
	int64_t raw_offset_ns;   /* CLOCK_MONOTONIC_RAW: drifts at NTP's correction */
	/* How coarsely the kernel's clocks move, found at the first calibration (a
	 * process attached to faststamp serve takes what serve found): on a coarse
	 * clocksource (acpi_pm) a read returns what the clock was at its last step, so
	 * every read's bracket begins this much earlier (THE MODEL, rule 1). 0: finer
	 * than 8 ns, moving with the counter, or not yet known. */
	int64_t clock_res_ns;
};

/* The least info->size fts_get_info() accepts: the fields up to env_ignored. */
#define FTS_INFO_MIN_SIZE offsetof(struct fts_info, samples)

/* fts_get_info - describe the backend and the process history.
 * info->size must be set, to sizeof(struct fts_info) (struct fts_info in = { .size =
 * sizeof(in) };). Only whole fields that end within info->size are written: a program
 * built against an older, smaller struct gets the fields it knows; a size ending
 * inside a field leaves that field and the rest untouched. A size never set is
 * refused, not guessed at: check the return value, the struct is not written then.
 * Measures the counter frequency on first use (for 10 ms). Returns 0, or -1 with
 * errno EINVAL (NULL; size below FTS_INFO_MIN_SIZE, as 0 in a zeroed struct; or above
 * 64 KiB, which no struct fts_info reaches: stack garbage). Not async-signal-safe. */
FTS__API int fts_get_info(struct fts_info *info);

/* ---- Calibration histories: map any counter to any reference clock ----------------
 *
 * A struct fts_calib holds samples (before, ref_ns, after): the reference clock read
 * ref_ns while the counter went from before to after. It converts any counter value
 * within its reach (rule 15) to the reference's reading then, with a bound. The
 * process clock behind fast_timestamp_to_*() is one of these; a NIC or GPU clock can
 * be mapped with another.
 *
 * THE MODEL
 *   What the reference may do between two consecutive samples (an interval):
 *   P1  it steps at most once;
 *   P2  otherwise it runs at rates within the band the rates measured beside the
 *       interval span (each give or take its brackets' noise), widened by the
 *       tolerance (1 ppm by default): a slew of any size that shows in the samples
 *       around it is followed, not mistaken for a step;
 *   P3  events are sparse: where the rates on the two sides of an interval differ and
 *       its own rate lies between them, the clock changed its rate there, and the
 *       one step that may hide in it is the kernel's lag: Linux reckons a new rate
 *       from a counter read and its readers see it only once it is published,
 *       reading on at the old rate meanwhile, then jumping onto the new line; the lag
 *       is at most 5 ms, the time the CPU doing the update may be stopped inside it
 *       (a virtual machine's CPU its host preempts there; an emulated guest showed
 *       lags of 20-140 us, and misses that a lag past 500 us would explain).
 *   The guarantee: for a counter value between the oldest and the newest sample, the
 *   reference read within [ns - err, ns + err] then. Outside the samples, within the
 *   history's reach (rule 15), the same holds if the clock kept the rate band of the
 *   interval at that end and did not step (the process clock checks that with a clock
 *   read after a fresh stamp); beyond its reach, no answer (ERANGE).
 *
 *   The rules that give it, each a pure function of src/estimate.c (rule 11's join
 *   inline in src/estimate.h) with its own test (tests/test_rules.c), applied by
 *   src/calib.c (rules 1-10), history.h (11), src/clock.c (13), src/tagged.c (14),
 *   src/history.c and src/convert.c (15); rule 12, the process clock's line, is
 *   src/convert.c and src/clock.c's, tested in tests/test_faults.c:
 *   1  a sample read ref_ns somewhere within its bracket: at the bracket's middle the
 *      reading is ref_ns within half the bracket at the fastest rate, plus 1 ns. (The
 *      process clock's reads: a clock computed from a coarse clocksource, acpi_pm's
 *      279 ns steps, returns what it was at its last step, up to one resolution
 *      before the read; each bracket it gives begins that much earlier, the
 *      resolution found from the reads at the first calibration, src/resolution.c,
 *      or taken from faststamp serve, which found it for the same clocksource);
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
 *      applies, their intersection widened by the kernel's lag: the change (the two
 *      sides' rates apart, give or take their noise) over 5 ms, unless the
 *      interval's own rate is the earlier side's (the change came at its end);
 *   6  the estimate: runs of connected lines, each passing every sample of its run
 *      within the sample's own uncertainty (rule 1): a wide bracket does not pull the
 *      line; a run ends at a step, where no line fits, where an interval's own scale
 *      (its envelope about its chord) and the run's bound differ by more than twice
 *      and 20 ns, after 64 intervals, or 2^40 ns (18 min) or 2^44 ticks from its start
 *      (where doubles no longer hold the ns);
 *   7  an interval with a step is a segment of its own, its line through the middles
 *      of its envelope at both ends;
 *   8  a segment's bound is the farthest its line lies from the envelopes of its
 *      intervals (largest at their corner points), plus 2 ns of fixed-point rounding;
 *   9  before the first and after the newest sample the line goes on at the middle of
 *      the end interval's band, the bound growing by half its width;
 *   10 at the memory limit (max_bytes, max_samples) pairs of neighbouring segments
 *      are merged, those whose merging widens the bound least first, over the whole
 *      history, never across a step, until a quarter of the room is free (more if an add
 *      needs it); the merged
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
 *      narrowest of three, and only one within twice the narrowest seen serves.
 *      After the epoch moved, a read now bridges from that line (rule 11) and serves in turn,
 *      for up to 100 ms (the sampler's period) after the newest sample.
 *   13 (the process clock, every clock) each clock fts_convert_clock() converts to has
 *      a history of its own, fed by the same samples, each clock read in a counter
 *      bracket of its own, and told of the events that move it against the counter: a
 *      set of the wall clock moves REALTIME and TAI, a leap second REALTIME, a sleep
 *      REALTIME, TAI and BOOTTIME (against a counter that stopped; they are told
 *      whichever way it went), and MONOTONIC and MONOTONIC_RAW too where it ran on. Rules 1-12 hold for each: a clock an event did
 *      not move keeps the bounds of a quiet clock around it.
 *   14 (tagged stamps, on another clock) rules 1-11 with CLOCK_REALTIME in the
 *      counter's place: the samples are that clock read between two CLOCK_REALTIME
 *      reads, taken by the conversions, one after each call's stamps and kept at most
 *      every 1 ms of CLOCK_MONOTONIC_RAW (closer ones only bridge, rule 11), a history
 *      of one read carried at 1:1 give or take 10 % and 500 ppm (ADJ_TICK's and NTP's
 *      most); a read below the newest (CLOCK_REALTIME went back) starts a new
 *      history, and a stamp's reading that two histories may hold (from the first
 *      read of the later one back by the interval between them, by
 *      CLOCK_MONOTONIC_RAW) converts with both, the bound covering both answers.
 *   15 (reach) a history speaks for the counter values inside it and, beyond each end,
 *      for as far again as it is long, and at least 1 s: further out the band (P2),
 *      measured over the history, would be carried over more than was ever seen, and
 *      fts_calib_convert() (and so a history file, `faststamp convert`) gives ERANGE.
 *      The process clock knows the boot and now instead: a counter stamp is ERANGE
 *      there when it precedes the boot (its CLOCK_MONOTONIC_RAW reading, bound
 *      included, is negative) or lies past the counter read the conversion takes
 *      after it by more than 1 ms plus the offsets between CPUs found
 *      (fts_info.cpu_skew_ns); a stamp on rule 12's line, which takes no counter
 *      read, may lie up to the line's end (10 ms past the read that made it). Any
 *      stamp the process stored since the boot converts, however long before its
 *      first sample (fts_clock_start).
 *   An interval is settled (rules 3-5 final) once five more samples follow it; until
 *   then it is published on its own, with what is known, and rebuilt at each add.
 *
 *   Two conversions of a stamp. Every answer holds the guarantee, so any two answers
 *   for one stamp overlap (|ns1 - ns2| <= err1 + err2), but a later one may differ
 *   and its bound may be wider (tens to hundreds of ns), while what the answer rests
 *   on is still being learnt:
 *   - a stamp past the newest sample converts with a clock read after it (rules 11,
 *     12); once samples follow it, with them (rules 1-8);
 *   - its interval is provisional until five more samples follow it (above);
 *   - the run that holds it (rule 6) takes in each new interval, up to 64, and its
 *     line and bound are fitted again to pass every sample of the run: the bound is
 *     the line's farthest distance from all their envelopes (rule 8), so it may grow;
 *   - at the memory limit two segments merge into one that covers both (rule 10);
 *   - a tagged stamp on another clock converts with the reads of each call (rule 14).
 *   Once 70 samples (64 + 5 + 1) follow the stamp's interval, its run has closed and
 *   is a segment for good: the answer no longer changes, but at a merge (rule 10).
 *   A history file (fts_calib_load) gives every stamp one answer in any process.
 *   The process clock's sampler adds a sample every 100 ms: a stamp's answer settles
 *   within 70 rounds (7 s) of it while conversions keep the sampler running.
 *
 * MEMORY AND COST
 *   The segments take 40 bytes each (8 of key, 32 of line and bound), in chunks of 256
 *   taken as needed from an address range reserved at creation (twice the memory
 *   limit; reserved, not used), and the writer keeps an index of each chunk beside
 *   them (320 bytes a chunk: about 41 bytes a segment in all). A day of an
 *   NTP-disciplined clock at 10 samples a second keeps about one segment in seven
 *   samples: a few MiB. fts_calib_add costs around a microsecond; fts_calib_convert
 *   ns to tens of ns for a recent counter value, about a hundred to a few hundred ns
 *   for a random one from a day (one cache line a level of the index, the last with
 *   the segment's: one or two misses to memory when the look-ups before it left the
 *   index cached or not). Figures: docs/benchmarks.md (the simulated day).
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
 * reached and no segment can merge, or no memory for the merge. Cost: around a
 * microsecond; a merge at the memory limit costs O(segments) once per quarter of the
 * room. */
FTS__API int fts_calib_add(struct fts_calib *c, uint64_t before, int64_t ref_ns,
			   uint64_t after);

/* fts_calib_convert - reference time at counter, and its bound.
 * *ref_ns is the estimate; *err_ns >= 0 bounds it (see above). err_ns may be NULL.
 * A counter value beyond the history's reach (rule 15: further before its oldest or
 * past its newest knot than max(the history's span, 1 s)) is ERANGE.
 * Returns 0, or -1 with errno: EINVAL (c or ref_ns NULL), ENODATA (fewer than two
 * samples), ERANGE (the time or its bound does not fit an int64_t). Cost: ns to tens of
 * ns for a recent counter value; about one miss to memory (a few hundred ns) for a
 * random one from a day-long history, where the look-up misses the caches. */
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
 * history it gives and a constant, whatever the file's size; a pipe is read a block at
 * a time. Allocates only for blocks the file holds (1 GiB a block at most). Cost: a
 * few us a sample (each is added as by fts_calib_add). */
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
 * after a last sample, so that every stamp stored while recording lies inside the
 * file's history, none past its end (the buffer is written, the file closed, the lock
 * released). A symbolic link at path is never followed (ELOOP), nor one that names
 * nothing: a link another user left in a shared directory such as /tmp cannot lead the
 * recorder into a file of its user's.
 * Returns 0, or -1 with errno: EEXIST, EBUSY (this process records already: stop
 * first; or another recorder holds the file), ELOOP (path is a symbolic link),
 * ENOTSUP (no counter in use: a build without one, or the generic backend chosen at start, by FASTSTAMP_BACKEND=generic or
 * because the counter is unusable; stamps are clock readings, which convert without a
 * history; no file is created or opened), the errors of open(2) and write(2), or
 * fts_clock_start()'s.
 * Thread-safe, not async-signal-safe. */
FTS__API int fts_clock_record(const char *path);


/* ---- Events: tracers and loggers --------------------------------------------------
 *
 * A program stamps any event it wants to keep for one counter read and a 48-byte
 * record in the calling thread's own ring; a drain moves the records into a trace
 * file, with the process clock's samples beside them, so that the trace converts
 * later, on another machine, with no live process (`faststamp trace FILE`, or
 * fts_trace_open()). docs/events.md is the design: record, ring, drain, file, and what
 * is lost when.
 *
 *   int t = fts_event_define("rx", "bytes,queue");   once, any thread
 *   fts_trace_start("run.fts");                         a new file
 *   fts_event(t, n, q);                                 an instant, 0-4 uint64_t fields
 *   fts_span_begin(t, n, q); ... fts_span_end(t);       a span
 *   fts_trace_stop();                                   every ring drained, file done
 *
 * THE HOT PATH. fts_event(), fts_span_begin() and fts_span_end() are macros over a
 * static inline: with no trace running they load one flag and return 0 (about a ns). While
 * a trace runs they call into the library once: a counter read ordered as
 * store_fast_timestamp()'s, then the record (stamp, type, kind, field count, the
 * thread's id, four fields) written to the thread's ring and published with one
 * release store of the ring's head. Wait-free, no system call (but the drain's
 * wake-up, below), no lock, no allocation and no page fault after the thread's first
 * event (which maps its ring, every page at once: 16384 records, 768 KiB, or
 * FASTSTAMP_EVENT_RING records, a power of two from
 * 64 to 2^24; a fork's child does not inherit it, so no page of it becomes
 * copy-on-write), and the only shared memory written is the thread's own ring (the
 * drain writes the tail, on a cache line of its own). Cost: a store_fast_timestamp()
 * and a few ns (`faststamp bench` measures it). A full ring never blocks:
 * the event is dropped, counted in the thread's ring, and the count reaches the trace.
 * Async-signal-safe once the thread has its ring (an event in a handler that
 * interrupted an event of the same thread is dropped and counted). Thread-safe.
 * They return 0 when the event was written or no trace runs (nothing to do), or -1
 * with errno: EINVAL (type not defined, or more fields than it was defined with),
 * ENOBUFS (the ring was full: dropped and counted), ENOMEM (the thread's first event
 * found no memory for its ring: dropped and counted in fts_trace_stats.dropped).
 * The fields are uint64_t: pass integers (a double through memcpy or a union).
 *
 * THE DRAIN. A thread of the library, started by fts_trace_start() with every signal
 * blocked, moves the records of every ring into the file in batches: while records
 * arrive, every 1 ms or sooner (down to 50 us: when a quarter of a ring fills sooner
 * at their rate), backing off to every 64 ms when idle, and at once when a writer
 * finds a quarter of its ring waiting for a drain backed off after idle, half of it for
 * one that sleeps between rounds, or its ring full. That path alone makes system calls,
 * at most once per quarter of a ring of events: sched_getaffinity(2) and
 * sched_setaffinity(2) of the drain thread, whose CPUs are set to leave out the
 * writer's (so that the scheduler does not queue the drain behind the writer for the
 * rest of its burst), then futex(2) to wake it; the drain takes back the CPUs it had at
 * its first sleep as it wakes. A seccomp filter must allow the three.
 * fts_trace_drain() does a round in the caller. Each round writes the process clock's
 * samples taken since the last (the blocks of a record, faststamp-history(5)), then the
 * event types defined since, then the records (at most a quarter of each ring a
 * round), each as its differences from the record before (5 bytes for two fields that
 * count or time things; docs/events.md), in blocks of a ring's records, each under a
 * CRC:
 * a process killed at any moment leaves a trace that loads with every record of every
 * round written before. A write that fails (a full disk) cuts the file back to its
 * last whole block; the records of that round are lost and counted
 * (fts_trace_stats.lost), the writers go on, and later rounds try again.
 *
 * FORK. A child does not trace: its events return 0 and are not written, it never
 * writes its parent's file, and it may start a trace of its own, in a new file.
 */

/* At most this many fields an event type. */
#define FTS_EVENT_MAX_FIELDS 4
/* A type's name: 1-63 bytes of printable ASCII but '"' and '\'. */
#define FTS_EVENT_NAME_MAX 63
/* A field's name: 1-31 bytes, a C identifier ([A-Za-z_][A-Za-z0-9_]*). */
#define FTS_EVENT_FIELD_MAX 31
/* Event types a process may define. */
#define FTS_EVENT_TYPES_MAX 1024

/* An event's kind. */
enum { FTS_EVENT_INSTANT = 0, FTS_EVENT_BEGIN = 1, FTS_EVENT_END = 2 };

/* fts_trace_start - from now on, this process's events go to a new file at path.
 * The file is created (O_EXCL: a path that exists, whatever it is, gives EEXIST and
 * is not touched), its header written, the process clock calibrated (this process's
 * own samples: the machine's shared history is left, as fts_clock_record does) and two
 * samples taken 2 ms apart into it, so that every stamp from now on converts from the
 * file alone; the drain thread is started, and waited for until it first sleeps (at
 * most 1 s: so that a burst at once finds it ready to run beside the writer). Records
 * left in rings from before (an event that raced the previous fts_trace_stop) are
 * discarded.
 * Returns 0, or -1 with errno: EINVAL (path NULL or empty, or FASTSTAMP_EVENT_RING set
 * to no power of two from 64 to 2^24: no file made), EBUSY (a trace runs: stop
 * it first), the errors of open(2) and write(2) (the file is then removed), EAGAIN
 * (no thread could be started), or fts_clock_start()'s. Cost: ~10-20 ms the first
 * time (the counter's frequency, the samples), a few ms in a later trace.
 * Thread-safe, not async-signal-safe. */
FTS__API int fts_trace_start(const char *path);

/* fts_event_ring_size - the records of the rings that threads make from now on (a
 * thread makes its ring at its first event while a trace runs and keeps it, whatever
 * its size, until it exits): a power of two from 64 to 2^24, 48 bytes each (default
 * 16384: 768 KiB, 0.8 ms of 20 M events a second). A ring must outlast the longest
 * time the drain may wait for a CPU, at the thread's rate (docs/events.md says what a
 * virtual machine needed). FASTSTAMP_EVENT_RING, when set (not empty),
 * is read at each fts_trace_start() and wins over a call made before it; a value that
 * is no such power of two makes fts_trace_start() fail with EINVAL.
 * Returns 0, or -1 with errno EINVAL (not such a power of two: nothing changed).
 * Thread-safe. */
FTS__API int fts_event_ring_size(size_t records);

/* fts_trace_stop - end the trace: a last sample taken, every ring drained, a summary
 * block (events written, dropped, lost) written, the file closed, the drain thread
 * gone. Events stored while it runs may miss the file (they are discarded at the next
 * start). Returns 0, or -1 with errno: ENOENT (no trace runs), or the first write
 * error of the trace (ENOSPC, EIO, ...: fts_trace_stats says how many records it lost);
 * the trace is stopped either way. Thread-safe, not async-signal-safe. */
FTS__API int fts_trace_stop(void);

/* fts_trace_drain - one drain round now, in the caller (as the drain thread does):
 * every record in the rings, and the samples taken since the last round, written to
 * the file. Returns 0, or -1 with errno: ENOENT (no trace runs), or a write's error
 * (the round's records are then lost and counted). Thread-safe, not async-signal-safe.
 * Cost: ~10-100 ns a record plus a write(2). */
FTS__API int fts_trace_drain(void);

/* What a trace holds or held, by fts_trace_stats() (the running or last trace) and
 * fts_trace_summary() (a trace file read). events: records written to the file;
 * dropped: events a full ring (or no memory for a ring) refused; lost: records drained
 * but not written (a write failed); produced = events + dropped + lost, exactly, once
 * every ring is drained. */
struct fts_trace_stats {
	size_t size;            /* in: sizeof(struct fts_trace_stats) */
	uint64_t events, dropped, lost;
	uint64_t bytes;         /* the file's length (written; read) */
	int write_error;        /* the first write error, 0 */
	int stopped;            /* fts_trace_summary: the file ends with the summary of a
				 * trace stopped by fts_trace_stop (0: killed, or cut) */
	/* fts_trace_summary (a caller built before these three gets the fields above):
	 * blocks passed over as damaged (a damaged stretch whose header did not hold counts
	 * as one), the offset of the last of them and where reading went on after it */
	uint64_t damaged, damage_at, damage_end;
};

/* fts_trace_stats - the running trace's counts, or the last one's after its stop,
 * as drained so far. Returns 0, or -1 with errno EINVAL (st NULL or st->size too
 * small). Thread-safe. */
FTS__API int fts_trace_stats(struct fts_trace_stats *st);

/* fts_event_define - an event type: its name and comma-separated field names, at most
 * FTS_EVENT_MAX_FIELDS ("" for none). Returns its id (0, 1, ... in the order of
 * definition), or -1 with errno: EINVAL (a NULL or bad name: empty, longer than
 * FTS_EVENT_NAME_MAX, a byte outside printable ASCII, '"' or '\'; a bad field name:
 * empty, too long, not an identifier, repeated; more than FTS_EVENT_MAX_FIELDS
 * fields), EEXIST (the name is defined with other fields), ENOSPC (FTS_EVENT_TYPES_MAX
 * types defined). The same name with the same fields gives the same id, so that any
 * number of threads may define it. Types live as long as the process and go into
 * every trace. Thread-safe, not async-signal-safe. Cost: around a microsecond (a mutex, a scan). */
FTS__API int fts_event_define(const char *name, const char *fields);

/* ABI-private: read by the inline event calls, written by the library. Non-zero while
 * a trace runs. Do not use. */
extern FTS__API int fts__trace_on;
/* ABI-private: write an event (head: type | kind << 16 | nfields << 20, and 1 << 24 for
 * a relaxed stamp). */
FTS__API int fts__event_put(uint32_t head, uint64_t f0, uint64_t f1, uint64_t f2,
			    uint64_t f3);

static inline int fts__event(int type, unsigned kind, unsigned n, uint64_t f0, uint64_t f1,
			     uint64_t f2, uint64_t f3)
{
	if (__builtin_expect(!__atomic_load_n(&fts__trace_on, __ATOMIC_RELAXED), 0))
		return 0;
	return fts__event_put(((uint32_t)type & 0xffffu) | kind << 16 | n << 20 |
			      (type < 0 || type > 0xffff ? 1u << 31 : 0), f0, f1, f2, f3);
}

/* Standard C99 variadic macros (no GNU extension): the first argument is the type.
 * FTS__EV_N: the fields given (0-4; 5 fails to compile: an array of negative size);
 * FTS__EV_T, FTS__EV_0..3: the type and the fields, padded with zeros. */
#define FTS__EV_N(...) FTS__EV_N_(__VA_ARGS__, 5, 4, 3, 2, 1, 0, 0)
#define FTS__EV_N_(t, a, b, c, d, e, n, ...) n
#define FTS__EV_T(t, ...) (t)
#define FTS__EV_0(t, a, b, c, d, ...) ((uint64_t)(a))
#define FTS__EV_1(t, a, b, c, d, ...) ((uint64_t)(b))
#define FTS__EV_2(t, a, b, c, d, ...) ((uint64_t)(c))
#define FTS__EV_3(t, a, b, c, d, ...) ((uint64_t)(d))
#define FTS__EV(kind, ...)                                                                \
	fts__event(FTS__EV_T(__VA_ARGS__, 0), (kind),                                     \
		   (unsigned)sizeof(char[1 - 2 * (FTS__EV_N(__VA_ARGS__) > 4)]) * 0 +       \
			   FTS__EV_N(__VA_ARGS__),                                            \
		   FTS__EV_0(__VA_ARGS__, 0, 0, 0, 0, 0), FTS__EV_1(__VA_ARGS__, 0, 0, 0, 0, 0), \
		   FTS__EV_2(__VA_ARGS__, 0, 0, 0, 0, 0), FTS__EV_3(__VA_ARGS__, 0, 0, 0, 0, 0))

/* fts_event(type, ...) - an instant of type with 0-4 uint64_t fields, in the order the
 * type names them. fts_span_begin / fts_span_end - the start and the end of a span
 * (a reader pairs an end with the latest unended begin of its type in its thread; the
 * end may carry fields of its own). An end with no begin is written as any event (the
 * hot path keeps no state of open spans): `faststamp trace` marks it, kind
 * end-unpaired in text, ph E with cat "unpaired" in JSON. See THE HOT PATH above for cost, errors and
 * safety. Standard C (C99 and later, C++11), no compiler extension. */
#define fts_event(...) FTS__EV(FTS_EVENT_INSTANT, __VA_ARGS__)
#define fts_span_begin(...) FTS__EV(FTS_EVENT_BEGIN, __VA_ARGS__)
#define fts_span_end(...) FTS__EV(FTS_EVENT_END, __VA_ARGS__)

/* fts_event_relaxed, fts_span_begin_relaxed, fts_span_end_relaxed - the same, stamped
 * as fts_store_relaxed() stamps: the counter read is not ordered against the
 * instructions around it (it may be taken some ns before or after the program's own
 * loads and stores near the call), for a few ns less. The record, the ring, the
 * errors and the file are the same. */
#define FTS__EV_RELAXED 0x100u   /* with a kind: bit 24 of the head */
#define fts_event_relaxed(...) FTS__EV(FTS_EVENT_INSTANT | FTS__EV_RELAXED, __VA_ARGS__)
#define fts_span_begin_relaxed(...) FTS__EV(FTS_EVENT_BEGIN | FTS__EV_RELAXED, __VA_ARGS__)
#define fts_span_end_relaxed(...) FTS__EV(FTS_EVENT_END | FTS__EV_RELAXED, __VA_ARGS__)

/* ---- Reading a trace -------------------------------------------------------------- */

/* One event of a trace file, as fts_trace_next() gives it. */
struct fts_trace_event {
	fast_timestamp_t stamp;
	int64_t ns, err_ns;          /* on the clock the trace was opened with: the clock
				      * read within ns +/- err_ns at the event */
	int error;                   /* 0, or why it did not convert (ns, err_ns then 0, -1):
				      * ENODATA (the file holds fewer than two samples), ERANGE,
				      * ENOTSUP (a CLOCK_REALTIME reading, bit 63, on another
				      * clock), EBADMSG (the file's history was in a damaged
				      * block: the stamp, a counter, is all there is) */
	int type, kind;              /* kind: FTS_EVENT_INSTANT, _BEGIN or _END */
	uint32_t tid;                /* the writer's thread id (gettid) */
	unsigned nfields;
	uint64_t fields[FTS_EVENT_MAX_FIELDS];
	const char *name;            /* the type's; valid until fts_trace_close ("#ID", its
				      * fields f0-f3, when its definition was in a damaged
				      * block) */
	const char *field_names[FTS_EVENT_MAX_FIELDS];   /* NULL past the type's fields */
};

struct fts_trace;

/* fts_trace_open - open the trace file at path for reading, converting its stamps to
 * clock (as fts_convert_clock). The file's history is loaded at once (streamed:
 * the memory of the history, not of the file); the events are then read one block at
 * a time by fts_trace_next(). Every block is under a CRC. A file cut short (a killed
 * writer) gives every whole block before the cut. A damaged block costs that block
 * alone: fts_trace_next() passes over it and reads every whole block after it. When
 * the damage may have held the history (a block of its samples, or a block whose own
 * header is damaged, which may have been any block), no stamp is converted (each
 * event's error is EBADMSG and its counter is given); damage in an events block alone
 * leaves the others converted. Only a damaged file header (the first 16 bytes)
 * refuses the file. Returns the trace, or NULL with errno: EINVAL (path NULL, or
 * another clock), EBADMSG (not a trace: no trace's file header, or a file that holds
 * what no writer writes under right checksums; or a history of an older format without
 * that clock), ENODATA (empty, or cut before its first whole block), EISDIR (a
 * directory), ESPIPE (a pipe: a trace is read from a file it can seek in), ENOMEM, or
 * open(2)'s. Cost: a read of the file's history, and, when the
 * file is damaged, of the whole file once more. Not async-signal-safe. */
FTS__API struct fts_trace *fts_trace_open(const char *path, clockid_t clock);

/* fts_trace_next - the next event, in the file's order (each thread's in the order it
 * wrote them; threads interleave by drain round). Returns 1 with *ev, 0 at the end of
 * the file (or of its last whole block), -1 with errno EBADMSG (a damaged block was
 * passed over, once for each: fts_trace_summary() says where; call again for the
 * blocks after it), ENOMEM or EIO (then the end). */
FTS__API int fts_trace_next(struct fts_trace *t, struct fts_trace_event *ev);

/* fts_trace_summary - what the file said of its trace, as far as it was read (all of
 * it once fts_trace_next() returned 0): events read, dropped and lost by the writer,
 * damaged blocks passed over. 0, or -1 with errno EINVAL. */
FTS__API int fts_trace_summary(const struct fts_trace *t, struct fts_trace_stats *st);

/* fts_trace_pid - the process that wrote the trace. */
FTS__API int fts_trace_pid(const struct fts_trace *t);

/* fts_trace_close - release a trace opened for reading. NULL is ignored. */
FTS__API void fts_trace_close(struct fts_trace *t);

#ifdef __cplusplus
}
#endif

#endif /* FASTSTAMP_H */
