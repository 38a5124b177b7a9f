/* shared.h - one calibration for the whole machine: `faststamp serve` publishes the
 * process clock's history in sealed memory that other processes map read-only and
 * convert with. Not installed.
 *
 * The model: no action on any file can deliver a signal to a reader or to the
 * publisher. A mapping faults (SIGBUS) only when its file shrinks under it, and a file
 * on disk can be truncated by whoever may write it; so the history lives in no file on
 * disk. It lives in a memfd the publisher creates, sizes, maps, and then seals:
 *
 *   F_SEAL_SHRINK | F_SEAL_GROW   its size is fixed for its life: no mapping of it, the
 *                                 publisher's or a reader's, can ever fault
 *   F_SEAL_FUTURE_WRITE           no one may write it from now on, through any fd or a
 *                                 new mapping: only the publisher's own mapping, made
 *                                 before the seal, writes (readers cannot corrupt each
 *                                 other's history)
 *   F_SEAL_SEAL                   and the seals are final
 *
 * PATH (default /run/faststamp/clock) is a unix stream socket the publisher listens on.
 * A reader connects (non-blocking), checks the peer with SO_PEERCRED (root, the reader's
 * own user or the service's user, looked up in /etc/passwd before NSS), and receives
 * one read-only fd of the memfd (SCM_RIGHTS) within 100 ms, or gives up. It then checks
 * with F_GET_SEALS that the memory is sealed as above (a regular file, or an unsealed
 * memfd, is refused), maps it PROT_READ, and closes the fd and the socket: from then on
 * it holds only a mapping that no one can shrink, whatever happens to PATH or to the
 * publisher.
 *
 * What is at PATH can be removed, truncated, overwritten or copied over: none of it
 * touches the memory. The publisher looks at PATH every 100 ms (lstat: the device and
 * inode of the socket it bound); when PATH is gone or is something else, it binds a new
 * socket and renames it over PATH, and says so (faststamp serve prints it). If the
 * directory no longer passes its checks, or PATH is another socket (another publisher,
 * whose place is not fought over), it says why and serve exits.
 *
 * The memory: a header (512 bytes), then a history's region (history.h) for each clock
 * (enum fts__clk: CLOCK_REALTIME's first), exactly as the publisher's histories lie in
 * memory, fts__shm_stride() bytes apart. Native byte order: it is for this machine.
 *
 *   the header      what the history is of (counter kind and frequency, clocksource,
 *                   boot), the publisher (pid, state, the reason it stopped) and its
 *                   heartbeat: the counter at its last sampler round, at least every
 *                   100 ms; readers take it as alive while the beat is under 1 s old
 *   the regions     each: the latch, the two states, the directories and the chunks
 *
 * A publisher that kept CLOCK_REALTIME's alone (an earlier build) says nregions 0 and
 * has the one region; a reader of an earlier build reads the first region of a newer
 * publisher's memory, which is CLOCK_REALTIME's, as before.
 *
 * The publisher binds its socket beside PATH (PATH.new.PID), takes its first samples,
 * then renames the socket over PATH, so a reader finds either the old publisher or the
 * new one. PATH.lock, held with flock(2) for the publisher's life (the kernel drops it
 * when the process dies, however it dies), keeps a second publisher away; a socket a
 * dead publisher left is replaced, and nothing else (a regular file, a symbolic link,
 * a socket a publisher answers at). PATH's directory is resolved once; it and every
 * directory above it are checked as ssh's StrictModes does (shared.c, check_dir).
 *
 * An fd sent is in flight until its reader takes it, charged to the publisher's user
 * and capped by its RLIMIT_NOFILE (ETOOMANYREFS past it, for every reader). So the
 * publisher holds each answered connection until its answer is read, and bounds what
 * each user (SO_PEERCRED) leaves unread: a reader over its user's share gets the byte
 * FTS__SHM_REFUSED and no fd, and every other user is still answered.
 *
 * A reader trusts nothing in the memory. It checks the header's magic, version and
 * geometry against the memory's size, and it reads the history with the read side's
 * checks (every index against its own limits, retries bounded). */
#ifndef FTS__SHARED_H
#define FTS__SHARED_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clk.h"
#include "histfile.h"
#include "history.h"
#include "warp.h"

#define FTS__SHM_MAGIC "FSTMPSHM"
#define FTS__SHM_VERSION 2   /* 2: the states carry the newest final segments (history.h) */
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
	uint32_t nregions;         /* histories after the header, one a clock; 0: one */
	int64_t skew_ns;
	uint8_t proof_cpus[128];
	/* How finely the kernel's clocks move (resolution.h), as the publisher found them
	 * at its first calibration: a property of the clocksource, which a reader shares,
	 * so a reader's bridge takes it instead of probing its own (a first conversion's
	 * 20-30 us). res_said 0: a publisher before these fields (the reader probes). */
	uint32_t res_said;
	uint32_t res_pad;
	int64_t res_ns;            /* the grid in ns; 0: fine */
	uint64_t res_ticks;        /* the same in counter ticks, with the probe's margin */
};
enum { FTS__SHM_PROOF_UNSAID = 0, FTS__SHM_PROOF_NOT_NEEDED = 1, FTS__SHM_PROOF_PROVEN = 2 };
_Static_assert(sizeof(struct fts__shm_head) <= FTS__SHM_HEAD, "the header fits its room");

/* From one clock's region to the next's: its length, to whole pages. */
static inline size_t fts__shm_stride(size_t region_len)
{
	return (region_len + 4095) & ~(size_t)4095;
}

/* ---- the publisher ------------------------------------------------------------------- */

#define FTS__SHM_ANSWER_NS 100000000LL   /* a reader waits this long for its fd */
#define FTS__SHM_RES_MAX_NS 100000000LL  /* a resolution said past this is not taken */
#define FTS__SHM_GRANTED 'F'     /* the answer's byte, with the fd */
#define FTS__SHM_REFUSED 'R'     /* the answer's byte, without: its user's share is used up */
#define FTS__SHM_WATCH_NS 100000000LL    /* the publisher looks at PATH this often */
#define FTS__SHM_HELD_MAX 4096   /* answers left unread, all users: at most this many */
#define FTS__SHM_UID_MAX 256     /* and of one user: at most this many */

/* An answer sent and not yet read: its connection, held open until its reader takes
 * the fd or goes, and the reader's user. */
struct fts__held {
	int fd;
	uid_t uid;
};

struct fts__publisher {
	int lockfd;
	int memfd;                 /* the history's memory, read-write: the publisher's */
	int rofd;                  /* the same memory opened read-only: what readers get */
	int listenfd;              /* the socket bound at path */
	int wakefd;                /* an eventfd: the answering thread stops */
	dev_t dev;                 /* the socket's file at path */
	ino_t ino;
	int thread_on;
	pthread_t thread;          /* answers readers and watches path */
	void *map;
	size_t len;
	struct fts__shm_head *head;
	char path[4096], tmp[4096];
	/* what the answering thread has to say (faststamp serve prints it): under news_lock */
	pthread_mutex_t news_lock;
	unsigned news_seq;         /* bumped at every new note */
	int failed;                /* it could not publish at path any more */
	/* Answers unread: an fd in flight is charged to this user until its reader takes
	 * it, and the kernel refuses to send more than RLIMIT_NOFILE of them (ETOOMANYREFS),
	 * to every reader. So each user may leave uid_cap unread, all of them held_cap
	 * (half the limit; uid_cap of it kept for root and this user); a reader over its
	 * user's share is refused (a byte, FTS__SHM_REFUSED, with no fd). */
	struct fts__held *held;
	uint32_t nheld, held_cap, uid_cap;
	uint64_t answered, refused, rebinds;
	char news[512];
};

/* Prepare to publish at path nregions histories (one a clock) of the counter id
 * describes: check the directory (ours, writable by no one else), take PATH.lock,
 * create the memory and map it, seal it, and bind the socket at PATH.new.PID. *region
 * is where the first history goes (region_len, from fts__calib_dims), the next ones
 * fts__shm_stride(region_len) bytes apart. 0, or -1 with what is wrong in err. */
int fts__publisher_open(struct fts__publisher *p, const char *path, const struct fts__head *id,
			uint64_t interval_ns, uint32_t dircap, size_t region_len, uint32_t nregions,
			void **region, char *err, size_t errlen);
/* What the publisher found of the counter across CPUs (before it shows the file):
 * cpus NULL when the kernel keeps time with the counter, and no proof is needed. */
void fts__publisher_proof(struct fts__publisher *p, const cpu_set_t *cpus, int64_t skew_ns);
/* The clocks' resolution the publisher found (resolution.h), before it shows the file. */
void fts__publisher_resolution(struct fts__publisher *p, int64_t res_ns, uint64_t res_ticks);
/* Put the socket in place (rename over path) and start answering: readers may attach
 * from now on. */
int fts__publisher_show(struct fts__publisher *p, char *err, size_t errlen);
/* The heartbeat: the counter now. */
void fts__publisher_beat(struct fts__publisher *p, uint64_t counter);
/* What the answering thread said since seq (*seq updated): 1 with the note in buf, 0
 * if nothing new. *failed: it cannot publish any more (serve exits). */
int fts__publisher_news(struct fts__publisher *p, unsigned *seq, char *buf, size_t len,
			int *failed);
/* Say the publisher stopped (state, why), stop answering, remove its socket, and let go
 * of the lock. The mapping stays (the history in it may still be in use by this
 * process). */
void fts__publisher_close(struct fts__publisher *p, uint32_t state, const char *why);

/* ---- readers ---------------------------------------------------------------------- */

struct fts__shared {
	struct fts_calib *view;    /* CLOCK_REALTIME's history, as a reader sees it: views[0] */
	struct fts_calib *views[FTS__NCLK];   /* each clock's, NULL where the memory has none */
	struct fts_calib viewbuf[FTS__NCLK];
	const struct fts__shm_head *head;
	uint64_t stale_ticks;      /* a beat older than this many counter ticks is stale */
};

/* Ask the publisher at path for its memory: path a socket (not followed if a
 * symbolic link), connected, its peer trusted (root, this user or the service's user).
 * The connected socket (close-on-exec), its answer on the way, or -1 with the reason in
 * why. The caller may do its own work while the publisher's thread answers. */
int fts__shared_ask(const char *path, char *why, size_t len);
/* The answer at sock (closed, whatever happens): within FTS__SHM_ANSWER_NS, holding one
 * fd, of memory sealed against shrinking, growing and writing. The fd (close-on-exec),
 * or -1 with the reason in why. */
int fts__shared_take(int sock, char *why, size_t len);
/* Both: the memory at path. */
int fts__shared_fetch(const char *path, char *why, size_t len);
/* Take the memory asked for at sock (fts__shared_ask; sock closed, whatever happens),
 * check it (header, geometry, identity: this boot, the counter and clocksource in use;
 * a live publisher with samples; a counter proven on every CPU of need, unless need is
 * NULL: this process's counter needs no proof) and map it. 0, or -1 with the reason in
 * why. */
int fts__shared_attach(struct fts__shared *s, int sock, const struct fts__head *id,
		       const cpu_set_t *need, uint64_t counter_now, char *why, size_t len);
/* The structural checks alone, for a header over a file of size bytes. */
int fts__shared_check(const struct fts__shm_head *h, size_t size, char *why, size_t len);
/* The histories the memory holds (checked by fts__shared_check): 1 to FTS__NCLK. */
uint32_t fts__shared_regions(const struct fts__shm_head *h);
/* c: a view of region i (below fts__shared_regions) of the memory at map. */
void fts__shared_view(struct fts_calib *c, void *map, const struct fts__shm_head *h, uint32_t i);
/* The clocks' resolution the publisher said (*ns, *ticks): 1, or 0 when it said none
 * or one out of reason (over FTS__SHM_RES_MAX_NS; ticks not the grid's at its
 * counter's rate, give or take the probe's margin): the reader then probes its own. */
int fts__shared_resolution(const struct fts__shm_head *h, int64_t *ns, uint64_t *ticks);
/* Is the publisher alive at counter value now? 1, or 0 with why. */
int fts__shared_alive(const struct fts__shared *s, uint64_t now, char *why, size_t len);

#endif /* FTS__SHARED_H */
