/* shared.h - one calibration for the whole machine: `faststamp serve` publishes the
 * process clock's history in a file that other processes map read-only and convert
 * with. Not installed.
 *
 * The file: a header (512 bytes), then a history's region (history.h) exactly as the
 * publisher's history lies in memory; the publisher maps it shared and writes it in
 * place, readers map it read-only. Native byte order: the file is for this machine.
 *
 *   the header      what the history is of (counter kind and frequency, clocksource,
 *                   boot), the publisher (pid, state, the reason it stopped) and its
 *                   heartbeat: the counter at its last sampler round, at least every
 *                   100 ms; readers take it as alive while the beat is under 1 s old
 *   the region      the latch, the two states, the directories and the chunks
 *
 * The publisher creates the file beside the path (PATH.new.PID, O_EXCL|O_NOFOLLOW,
 * mode 0644), takes its first samples into it, then renames it over the path, so a
 * reader finds either the old file or a whole new one. PATH.lock, held with flock(2)
 * for the publisher's life (the kernel drops it when the process dies, however it
 * dies), keeps a second publisher away.
 *
 * A reader trusts nothing in the file. It checks the owner and mode before it maps,
 * the header's magic, version and geometry against the file's size, and it reads the
 * history with the read side's checks (every index against its own limits, retries
 * bounded). */
#ifndef FTS__SHARED_H
#define FTS__SHARED_H

#include <stddef.h>
#include <stdint.h>

#include "histfile.h"
#include "history.h"
#include "warp.h"

#define FTS__SHM_MAGIC "FSTMPSHM"
#define FTS__SHM_VERSION 1
#define FTS__SHM_HEAD 512   /* the header, then the region: one page holds both starts */
#define FTS__SHM_BEAT_NS 100000000LL     /* the publisher beats at least this often */
#define FTS__SHM_STALE_NS 1000000000LL   /* a beat older than this: not alive */

enum { FTS__SHM_RUNNING = 1, FTS__SHM_STOPPED = 2, FTS__SHM_FAULTED = 3 };

struct fts__shm_head {
	char magic[8];
	uint32_t version;
	uint32_t head_bytes;       /* where the region starts: FTS__SHM_HEAD */
	uint32_t dircap;           /* the region's geometry (history.h) */
	uint32_t kind;             /* FTS__KIND_* of the counter */
	uint64_t region_len;
	uint64_t counter_hz;
	uint8_t boot_id[16];
	char clocksource[32];
	int64_t started_ns;        /* CLOCK_REALTIME when it started */
	uint64_t interval_ns;      /* its sampling period */
	int32_t pid;
	uint32_t state;            /* FTS__SHM_*; written atomically */
	uint64_t beat;             /* the counter at its last round; written atomically */
	char why[160];             /* why it stopped, or the counter fault */
	/* The counter across CPUs (warp.h), as the publisher found it before it showed
	 * the file: FTS__SHM_PROOF_*, what every counter stamp's bound gets for offsets
	 * between CPUs, and the CPUs proven (cpu_set_t's bits). */
	uint32_t proof;
	uint32_t reserved;
	int64_t skew_ns;
	uint8_t proof_cpus[128];
};
enum { FTS__SHM_PROOF_UNSAID = 0, FTS__SHM_PROOF_NOT_NEEDED = 1, FTS__SHM_PROOF_PROVEN = 2 };
_Static_assert(sizeof(struct fts__shm_head) <= FTS__SHM_HEAD, "the header fits its room");

/* ---- the publisher ------------------------------------------------------------------- */

struct fts__publisher {
	int lockfd;
	void *map;
	size_t len;
	struct fts__shm_head *head;
	char path[4096], tmp[4096];
};

/* Prepare to publish at path a history of the counter id describes: check the
 * directory (ours, writable by no one else), take PATH.lock, create PATH.new.PID and
 * map it. *region is where the history goes (region_len, from fts__calib_dims). 0, or
 * -1 with what is wrong in err. */
int fts__publisher_open(struct fts__publisher *p, const char *path, const struct fts__head *id,
			uint64_t interval_ns, uint32_t dircap, size_t region_len, void **region,
			char *err, size_t errlen);
/* What the publisher found of the counter across CPUs (before it shows the file):
 * cpus NULL when the kernel keeps time with the counter, and no proof is needed. */
void fts__publisher_proof(struct fts__publisher *p, const cpu_set_t *cpus, int64_t skew_ns);
/* Put the file in place (rename over path): readers may attach from now on. */
int fts__publisher_show(struct fts__publisher *p, char *err, size_t errlen);
/* The heartbeat: the counter now. */
void fts__publisher_beat(struct fts__publisher *p, uint64_t counter);
/* Say the publisher stopped (state, why) and let go of the file and the lock. The
 * mapping stays (the history in it may still be in use by this process). */
void fts__publisher_close(struct fts__publisher *p, uint32_t state, const char *why);

/* ---- readers ---------------------------------------------------------------------- */

struct fts__shared {
	struct fts_calib *view;    /* the history, as a reader sees it: &viewbuf */
	struct fts_calib viewbuf;
	const struct fts__shm_head *head;
	uint64_t stale_ticks;      /* a beat older than this many counter ticks is stale */
};

/* Open and check the file at path (owner, mode, header, geometry, identity: this boot,
 * the counter and clocksource in use; a live publisher with samples; a counter proven
 * on every CPU of need, unless need is NULL: this process's counter needs no proof)
 * and map it. 0, or -1 with the reason in why. */
int fts__shared_attach(struct fts__shared *s, const char *path, const struct fts__head *id,
		       const cpu_set_t *need, uint64_t counter_now, char *why, size_t len);
/* The structural checks alone, for a header over a file of size bytes. */
int fts__shared_check(const struct fts__shm_head *h, size_t size, char *why, size_t len);
/* c: a view of the region at map + FTS__SHM_HEAD (checked by fts__shared_check). */
void fts__shared_view(struct fts_calib *c, void *map, const struct fts__shm_head *h);
/* Is the publisher alive at counter value now? 1, or 0 with why. */
int fts__shared_alive(const struct fts__shared *s, uint64_t now, char *why, size_t len);

#endif /* FTS__SHARED_H */
