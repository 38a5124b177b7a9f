/* internal.h - interfaces between the library's files. Not installed. */
#ifndef FTS__INTERNAL_H
#define FTS__INTERNAL_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "faststamp.h"
#include "invariant.h"
#include "warp.h"

#define FTS__LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
/* A conversion after idle pays a TLB miss for every page it touches: the code and the
 * state it runs through are kept together, the code first in .text (the linker groups
 * hot sections), the state in .data. */
#define FTS__HOT __attribute__((hot))
#define FTS__HOT_DATA __attribute__((section(".data.fts_hot")))
#define FTS__ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* ---- errors ---------------------------------------------------------------------- */
/* The one way a public function fails: errno = err, return -1 (or NULL). */
static inline int fts__fail(int err)
{
	errno = err;
	return -1;
}

static inline void *fts__fail_null(int err)
{
	errno = err;
	return NULL;
}

/* ---- calib.c ---------------------------------------------------------------------- */
/* fts_calib_add, and step: the source saw a step since the previous sample. */
int fts__calib_add_sample(struct fts_calib *c, uint64_t before, int64_t ref_ns, uint64_t after,
			  int step);
/* 1 when the writer's state and what it published agree: no add is half done (what a
 * fork landing inside one would leave the child). */
int fts__calib_in_sync(const struct fts_calib *c);
/* Drop every sample (used when the process clock is reset in tests). */
void fts__calib_reset(struct fts_calib *c);
/* The region a history with opts needs (history.h): its chunks and length, and the
 * segments it keeps at most. 0 or -EINVAL. */
int fts__calib_dims(const struct fts_calib_opts *opts, uint32_t *dircap, size_t *len,
		    size_t *recs);
/* A history written in region (zeroed, len from fts__calib_dims, the caller's to unmap
 * after fts_calib_free), or in memory of its own (region NULL). */
struct fts_calib *fts__calib_new_at(const struct fts_calib_opts *opts, void *region, size_t len);
/* Point c's fields at a region of dircap chunks. */
void fts__calib_layout(struct fts_calib *c, void *region, uint32_t dircap);
/* A history read from a file or copied: room for n segments, put one by one (each
 * spanning [key, end], keys rising), then published with its ends (the head at the
 * first key, the tail at newest); it takes no samples (EPERM). The puts and the
 * publishing check what they are given as a file's contents: -1 if it is not a
 * history. */
struct fts__rec;
struct fts__end;
struct fts__pub;
struct fts_calib *fts__calib_new_loaded(size_t n);
int fts__calib_put_loaded(struct fts_calib *c, size_t pos, uint64_t key, uint64_t end,
			  struct fts__rec r);
int fts__calib_publish_loaded(struct fts_calib *c, size_t n, struct fts__end head,
			      struct fts__end tail, uint64_t newest);
/* The writer's samples before its first segment (none for a view of a history
 * written elsewhere), and the first's counter in *first when there is one. */
size_t fts__calib_unpublished(const struct fts_calib *c, uint64_t *first);
/* ---- history.c: the read side ------------------------------------------------------ */
/* Segment i of published state p, checked as a reader checks; -1 if there is none. */
int fts__pub_segment(const struct fts_calib *c, const struct fts__pub *p, size_t i, uint64_t *key,
		     struct fts__rec *r);

/* ---- clock.c: the process-wide clock and its fault-injection seam ----------------- */
/* How the kernel's clocksource stands to the counter. */
enum fts__relation {
	FTS__CS_IS_COUNTER,     /* it is the counter (tsc, arch_sys_counter): the kernel
				 * vouches for it on every CPU */
	FTS__CS_FROM_COUNTER,   /* computed from it by a scale (kvm-clock, Hyper-V's TSC
				 * page, xen): faststamp proves it across CPUs, and
				 * CLOCK_MONOTONIC_RAW follows it closely on every CPU */
	FTS__CS_OTHER,          /* another clock (hpet, acpi_pm): only a forced counter is
				 * used there, proven across CPUs */
};
/* The clocks a stamp converts to (fts_convert_clock): each has its own history in the
 * process clock, fed by the same samples. */
enum fts__clk {
	FTS__CLK_REALTIME, FTS__CLK_TAI, FTS__CLK_MONOTONIC, FTS__CLK_BOOTTIME, FTS__CLK_RAW,
	FTS__NCLK
};
/* The index of clock id, or -1 for a clock stamps do not convert to. */
int fts__clk_of(clockid_t id);
/* The clock id of index k. */
clockid_t fts__clk_id(int k);
/* The health reads of a sample, in this order. */
struct fts__clocks {
	int64_t rt, mono, boot, raw;   /* REALTIME, MONOTONIC, BOOTTIME, MONOTONIC_RAW ns */
	int64_t tai;                   /* CLOCK_TAI ns */
};
struct fts__source {
	/* Counter for sampling, ordered like store_fast_timestamp() reads it. */
	uint64_t (*counter)(void *ctx);
	/* CLOCK_REALTIME in ns; 0 or a negative errno. Read inside the counter bracket. */
	int (*realtime)(void *ctx, int64_t *ns);
	/* The health reads, right after; NULL: the real clocks. 0 or a negative errno. */
	int (*clocks)(void *ctx, struct fts__clocks *v);
	/* Clock k (enum fts__clk, not FTS__CLK_REALTIME) in ns, read inside a counter
	 * bracket of its own; NULL: the real clocks. 0 or a negative errno. */
	int (*read)(void *ctx, int k, int64_t *ns);
	/* Wait about ns (the sampler's period). NULL: until the period's deadline on
	 * CLOCK_MONOTONIC, or until a timerfd with TFD_TIMER_CANCEL_ON_SET fires. */
	void (*wait)(void *ctx, int64_t ns);
	/* Sleep for about ns (first calibration); NULL: the real clock. */
	void (*sleep)(void *ctx, int64_t ns);
	/* The kernel's current clocksource; NULL: read sysfs. 0 or negative errno. */
	int (*clocksource)(void *ctx, char *out, size_t len);
	/* The counter across CPUs, for a source whose relation is not FTS__CS_IS_COUNTER:
	 * the CPUs it may be read on (NULL: this process's, fts__cpus_allowed); the warp
	 * test over them (NULL: fts__warp_measure with real threads); move the sampler to
	 * one of them (NULL: pin the calling thread). 0 or a negative errno. */
	int (*cpus)(void *ctx, cpu_set_t *set);
	int (*warp)(void *ctx, const cpu_set_t *cpus, struct fts__warp *w);
	int (*migrate)(void *ctx, int cpu);
	/* The kernel's timekeeping epoch: a value that changes at every update of how it
	 * computes CLOCK_REALTIME from its clocksource (each tick, step, new rate), and only
	 * then; the hardware's: CLOCK_REALTIME_COARSE, the clock at its last update. Two
	 * equal reads say the clock ran on one line between them (rule 12; compared, never
	 * used as a time). NULL: not known, and rule 12 is not used. 0 or a negative
	 * errno. */
	int (*epoch)(void *ctx, int64_t *e);
	/* How the kernel's clocksource stands to this counter; the hardware's: the
	 * backend choice's. */
	enum fts__relation relation;
	void *ctx;
	int no_thread;    /* 1: never start the background sampler */
};
/* Replace the process clock's source (NULL: the real hardware) and drop the history
 * and any fault. For tests; not safe against concurrent conversions. */
void fts__clock_set_source(const struct fts__source *src);
/* Take one sample now (best of a few tries). 0 or negative errno (-EIO: the counter
 * is found faulty, or was before). */
int fts__clock_sample(void);
/* What the sampler thread does at each sampling round: retry a warp test that could
 * not run, when due; move to the next CPU the counter is proven on (where it needs
 * the proof); then fts__clock_sample(). */
int fts__clock_round(void);
/* Prove the counter across CPUs now, if it needs it and is not yet (warp.h): what the
 * first calibration does first. 0, or a negative errno (the test could not run). */
int fts__clock_prove(void);
/* What is added to the bound of every counter stamp for the counter's offsets between
 * CPUs, in ns: 0 where the kernel vouches for the counter or the proof saw no warp;
 * -1 while the proof could not run (counter stamps cannot be converted). */
int64_t fts__clock_skew_ns(void);
/* What the sampler does every round: has the kernel left the clocksource it had when
 * the counter was chosen? Then a last sample is taken and the counter is no longer
 * trusted. 0, or -EIO if so. */
int fts__clock_watch(void);
/* Ready the history to convert counter values up to newest (see sample.c). */
int fts__clock_prepare(uint64_t newest);
struct fts__line;
/* Below, k is a clock (enum fts__clk): its history, its reads, its fresh line.
 * For the newest stamp x of a conversion, past the newest sample: a clock read now,
 * after x, as a line for the bridge (clock.c) in *m; 1 if taken. When the clock left
 * the tail's extrapolation, a private history first takes a sample (x may then lie
 * inside it: 0). */
int fts__clock_fresh(int k, uint64_t x, struct fts__line *m);
/* A clock read now, bracketed by counter reads, as a line at fwd's band (the bridge's
 * backward line): 0, or -1 (no read: the counter is faulty, or a read failed). */
int fts__clock_read(int k, const struct fts__line *fwd, struct fts__line *m);
/* After a read *m that agreed with fwd, taken after generation gen was read: if its
 * bracket is as narrow as the narrowest seen (a warm read), the epoch and the narrowest
 * of a few reads more make rule 12's line (fts__fresh_publish). */
void fts__clock_line(int k, const struct fts__line *fwd, const struct fts__line *rate,
		     const struct fts__line *m, unsigned gen, uint64_t chain_end);
/* The source's timekeeping epoch now (struct fts__source's epoch). 0, or -1: not
 * known. */
int fts__clock_epoch(int64_t *e);

/* ---- tagged.c: tagged stamps on the other clocks ---------------------------------- */
/* The tagged stamps of stamps[0..n) to clock k (not FTS__CLK_REALTIME) into ns and err
 * (err may be NULL); other entries are left alone. 0, or a negative errno (-ERANGE:
 * before 1970; -EAGAIN: no clock read; -ENOMEM). */
int fts__tagged_convert(int k, const fast_timestamp_t *stamps, size_t n, int64_t *ns,
			int64_t *err);
/* Read the clocks with now (NULL: the real ones, fts__now) and forget every read taken.
 * For tests. */
void fts__tagged_set_clock(int (*now)(clockid_t id, int64_t *ns));

/* ---- clock.c: the fresh line (rule 12) ---------------------------------------------- */
/* Rule 12's line for counter values from read->c0 on: the bridge (rule 11) between the
 * tail and the clock read *read at the read's middle, carried on at the rate of the
 * segment rate (NULL: the tail's), its bound growing by the tail's band around it,
 * plus skew_ns; epoch: the source's timekeeping epoch read before the read; gen:
 * fts__fresh_gen() before the state the line was made from was looked at; chain_end:
 * the last counter value a line renewed from this one may bridge from (0: FRESH_CHAIN_NS
 * after the tail's key). */
void fts__fresh_publish(int k, const struct fts__line *tail, const struct fts__line *rate,
			const struct fts__line *read, int64_t epoch, int64_t skew_ns, unsigned gen,
			uint64_t chain_end);
/* Drop the fresh line: the history, the source, a fault or the skew changed. */
void fts__fresh_drop(void);
unsigned fts__fresh_gen(void);
/* The histories conversions use: cur, and old, the one used before cur (a copy of a
 * shared history the clock left), or NULL. */
struct fts__clock_view {
	const struct fts_calib *cur, *old;
};
void fts__clock_view(int k, struct fts__clock_view *v);
/* 1 when the history in use holds clock k: a process's own holds every clock; the
 * shared one (faststamp serve) CLOCK_REALTIME alone. */
int fts__clock_holds(int k);
/* Stop using the shared history (why: for fts_get_info); 1 if the clock left it. */
int fts__clock_leave_shared(const char *why);
/* Which history conversions use ("shared" or "process"), its path (the shared
 * history's socket, or the one this process publishes at), and why the shared one is not used. */
void fts__clock_sharing(char *source, size_t slen, char *path, size_t plen, char *note,
			size_t nlen);
/* faststamp serve: make the process clock's history the machine's, published at path,
 * sampled every interval_ns. 0, or -1 with the reason in err. */
int fts__clock_serve(const char *path, int64_t interval_ns, char *err, size_t errlen);
/* Stop publishing (the memory says it stopped, and why; the socket goes). */
void fts__clock_serve_stop(const char *why);
/* What the publisher's answering thread said since *seq (shared.h): 1 with the note in
 * buf, 0 if nothing new; *failed: it cannot publish at its path any more. */
int fts__clock_serve_news(unsigned *seq, char *buf, size_t len, int *failed);
int fts__clock_uses_hw(void);
/* The kernel's clocksource now (through the source's seam). 0 or negative errno. */
int fts__clock_clocksource(char *out, size_t len);
uint64_t fts__clock_samples_taken(void);
const struct fts_calib *fts__clock_history(int k);
struct fts__clock_state {
	uint64_t samples_taken, steps, suspends;
	int running, faulted;
	int threads;   /* sampler threads alive, also of sources replaced since */
	uint64_t thread_starts;   /* attempts to start one */
	int64_t ambiguous_ns;
	char fault[160];
	char proof[200];          /* the counter across CPUs: not needed, or the result */
	int64_t skew_ns;          /* fts__clock_skew_ns() */
	int64_t period_ns;        /* the sampling period of the history in use: the
				   * publisher's when attached, else this process's */
};
void fts__clock_state(struct fts__clock_state *st);

/* ---- now.c: reading and sleeping on the system clocks ---------------------------- */
/* clock id's time in ns into *ns: 0, or a negative errno. */
int fts__now(clockid_t id, int64_t *ns);
/* Sleep until CLOCK_MONOTONIC reaches deadline ns, whatever signals arrive. */
void fts__sleep_until(int64_t deadline);
/* ns (>= 0) as a struct timespec. */
struct timespec fts__timespec(int64_t ns);

/* ---- per architecture: src/arch_<arch>.c ----------------------------------------- */
struct fts__arch {
	const char *backend;    /* name of the counter backend, "generic" without one */
	int usable;             /* counter trusted for new stamps */
	enum fts__relation relation;
	char reason[192];
	uint64_t hint_hz;       /* frequency hint from the hardware, 0 if none */
	char hint_source[64];
	char cpu_flags[128];
};
/* Probe the CPU and kernel; clocksource is the kernel's current one ("" if unknown). */
void fts__arch_probe(struct fts__arch *a, const char *clocksource);
#if defined(__x86_64__)
/* The decision on x86_64 (a pure function, tested row by row): the TSC is used when it
 * is invariant and the kernel's clocksource is tsc or computed from the TSC; sets
 * usable, relation and reason. */
void fts__tsc_decide(struct fts__arch *a, int invariant, const char *clocksource);
#endif
/* More CPU flags for fts_get_info, appended to buf (slower to find than the probe's). */
void fts__arch_info_flags(char *buf, size_t len);
/* Ordered counter read for sampling; 0 on the generic backend. */
uint64_t fts__arch_counter(void);

/* ---- freq.c ---------------------------------------------------------------------- */
/* Measure the counter frequency against CLOCK_MONOTONIC_RAW over about ms milliseconds.
 * 0 or negative errno. */
int fts__freq_measure(uint64_t (*read)(void), int ms, uint64_t *hz, uint64_t *err_ppb);
/* The frequency the library uses (hint if it agrees with the measurement, else the
 * measurement), measured once; describe the choice in source. 0 on generic. */
uint64_t fts__freq(char *source, size_t len);

/* ---- sysfs.c: text parsers for kernel files (fuzzed) ----------------------------- */
/* Read a small text file into buf, NUL-terminated. Bytes read or negative errno. */
long fts__read_text(const char *path, char *buf, size_t len);
/* First whitespace-delimited word of text into out (len bytes). 0 or -EINVAL. */
int fts__parse_word(const char *text, char *out, size_t len);
/* Does a /proc/cpuinfo "flags" line in text contain flag? 1, 0. */
int fts__cpuinfo_has_flag(const char *text, const char *flag);
/* The kernel's boot id (/proc/sys/kernel/random/boot_id: 32 hex digits with dashes)
 * from text into id. 0, or -EINVAL (id then holds no meaning). */
int fts__parse_boot_id(const char *text, uint8_t id[16]);
/* The kernel's current clocksource into out; 0 or negative errno. */
int fts__clocksource(char *out, size_t len);
/* A device-tree property holding one big-endian cell (4 bytes) or two (8 bytes), as
 * read from /proc/device-tree, into *out. 0 or -EINVAL (other lengths). */
int fts__parse_dt_cells(const void *buf, size_t len, uint64_t *out);
/* 1 when name is a clocksource only an x86 kernel has ("tsc", "kvm-clock", ...). On
 * another architecture that means /sys is the host's: user-mode emulation. */
int fts__clocksource_is_x86(const char *name);

/* ---- backend choice (clock.c) ---------------------------------------------------- */
struct fts__choice {
	struct fts__arch arch;
	char clocksource[32];
	char env[32];
	int env_ignored;
	int store_counter;      /* the choice for new stamps, before any fault */
};
const struct fts__choice *fts__backend_choice(void);

#endif /* FTS__INTERNAL_H */
