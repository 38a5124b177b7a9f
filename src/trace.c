/* trace.c - the trace being written: its file, the drain (a thread of its own, or a
 * round in the caller) that moves the rings' records (event.c) and the process clock's
 * samples (record.c's tap) into it, and what a fork does to it. docs/events.md. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "crc32.h"
#include "event.h"
#include "histfile.h"
#include "internal.h"
#include "now.h"
#include "le.h"

#define DRAIN_MIN_NS 1000000      /* a round every 1 ms while records arrive, */
#define DRAIN_FAST_NS 50000       /* or sooner, down to 50 us, when they fill a quarter of
				   * a ring sooner than that */
#define DRAIN_MAX_NS 64000000     /* backing off to 64 ms when idle */
/* A ring's records go into blocks of at most this many (a ring may hold 2^24), packed
 * into a buffer that is written whenever the next block might not fit: a round's
 * memory stays near OUT_BYTES however many rings and records it takes. */
#define BLOCK_RECORDS 4096
#define OUT_BYTES (1u << 20)
#define MAX_BLOCK (FTS__BLOCK_HEAD_BYTES + FTS__EVENTS_HEAD_BYTES + \
		   BLOCK_RECORDS * FTS__COMPACT_MAX_BYTES + 8)
_Static_assert(MAX_BLOCK <= OUT_BYTES, "a block of records fits the round's buffer");

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;

/* The trace: one struct, reset by one function (trace_reset). With trace_lock held. */
static struct {
	int fd;                         /* -1: no trace */
	off_t good;                     /* bytes of whole blocks in the file */
	int types_written;
	uint64_t orphans_seen;
	struct fts_trace_stats st;
	unsigned char *out;             /* a round's blocks, not yet written */
	size_t nout, capout;
	struct fts__ring_batch *b;      /* the rings' records taken */
	size_t capb;
	uint64_t round_bytes;           /* written so far in this round */
	pthread_t thread;
	int thread_on, stop;
} tr = { .fd = -1 };

/* Room for a block of len payload bytes at the end of *buf: its payload, or NULL. */
static unsigned char *room(unsigned char **buf, size_t *n, size_t *cap, size_t len)
{
	size_t need = *n + FTS__BLOCK_HEAD_BYTES + len + 8;

	if (need > *cap) {
		size_t c = *cap ? *cap : 65536;
		unsigned char *b;
		while (c < need)
			c *= 2;
		if (!(b = realloc(*buf, c)))
			return NULL;
		*buf = b;
		*cap = c;
	}
	return *buf + *n + FTS__BLOCK_HEAD_BYTES;
}

/* The payload at *buf + *n + head made a block: -ENOMEM when room failed. */
static int block(unsigned char *p, unsigned char *buf, size_t *n, uint32_t type, size_t len)
{
	if (!p)
		return -ENOMEM;
	*n += fts__histfile_put_block(buf + *n, type, (uint32_t)len);
	return 0;
}

static int out_block(uint32_t type, const void *payload, size_t len)
{
	unsigned char *p = room(&tr.out, &tr.nout, &tr.capout, len);

	if (p)
		memcpy(p, payload, len);
	return block(p, tr.out, &tr.nout, type, len);
}

/* Every byte of out, written, and out emptied. 0 or negative errno. */
static int flush(void)
{
	for (size_t at = 0; at < tr.nout;) {
		ssize_t w = write(tr.fd, tr.out + at, tr.nout - at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		at += (size_t)w;
		tr.round_bytes += (uint64_t)w;
	}
	tr.nout = 0;
	return 0;
}

/* A batch's records as EVENTS_COMPACT blocks of at most BLOCK_RECORDS, the drops in
 * the first, into out (written first whenever a block might not fit). 0 or negative
 * errno. */
static int events_blocks(const struct fts__ring_batch *b)
{
	size_t done = 0;

	do {
		size_t k = b->n - done < BLOCK_RECORDS ? b->n - done : BLOCK_RECORDS;
		struct fts__compact_state cs = { .have_type = 0 };
		unsigned char *p, *q;
		int rc;

		if (tr.nout + MAX_BLOCK > tr.capout && (rc = flush()) < 0)
			return rc;
		p = tr.out + tr.nout + FTS__BLOCK_HEAD_BYTES;
		fts__le_put32(p, b->tid);
		fts__le_put32(p + 4, (uint32_t)k);
		fts__le_put64(p + 8, done ? 0 : b->dropped);
		q = p + FTS__EVENTS_HEAD_BYTES;
		for (size_t i = done; i < done + k; i++)
			q = fts__compact_put(q, i < b->n1 ? &b->rec1[i] : &b->rec2[i - b->n1], &cs);
		tr.nout += fts__histfile_put_block(tr.out + tr.nout, FTS__BLK_EVENTS_COMPACT, (uint32_t)(q - p));
		done += k;
	} while (done < b->n);
	return 0;
}

/* With trace_lock held: one round, of at most `most` records of each ring. sample: a
 * sample of the clock first; whole: a ring's records taken end where a line does (the
 * drain thread's rounds, beside a writer). *moved: the records it took. 0, or negative
 * errno: a failed write loses the round's records (counted); with no memory for the
 * round they stay in the rings for the next. */
static int round_locked(int sample, uint64_t *moved, size_t most, int whole)
{
	unsigned char *tap = NULL;
	size_t ntap = fts__clock_tap_take(&tap, sample), nb = 0;
	uint64_t orphans = fts__event_rings_orphan_drops(), events = 0, dropped = 0;
	int rc = 0, n;

	tr.nout = 0;
	tr.round_bytes = 0;
	if (tr.capout < OUT_BYTES) {
		unsigned char *o = realloc(tr.out, OUT_BYTES);
		if (!o)
			rc = -ENOMEM;
		else   /* its pages mapped now, not in a round that has a ring to empty */
			tr.out = memset(o, 0, OUT_BYTES), tr.capout = OUT_BYTES;
	}
	/* the samples, as the tap kept them: type, length, payload */
	for (size_t at = 0; at + 8 <= ntap && rc == 0;) {
		uint32_t type = fts__le_get32(tap + at);
		uint32_t len = fts__le_get32(tap + at + 4);
		rc = out_block(type, tap + at + 8, len);
		at += 8 + len;
	}
	free(tap);
	/* the records: a type is defined before an event of it is written, so the types
	 * counted after the rings were read cover every record taken */
	if (!rc && (nb = fts__event_rings_take(&tr.b, &tr.capb, most, whole)) == (size_t)-1) {
		nb = 0;
		rc = -ENOMEM;
	}
	for (size_t i = 0; i < nb; i++) {
		events += tr.b[i].n;
		dropped += tr.b[i].dropped;
	}
	if (orphans != tr.orphans_seen) {
		unsigned char p[FTS__EVENTS_HEAD_BYTES] = { 0 };
		fts__le_put64(p + 8, orphans - tr.orphans_seen);
		dropped += orphans - tr.orphans_seen;
		tr.orphans_seen = orphans;
		if (!rc)   /* a block of no record: its place among the others is free */
			rc = out_block(FTS__BLK_EVENTS_COMPACT, p, sizeof(p));
	}
	n = fts__event_types_count();
	for (; tr.types_written < n && !rc; tr.types_written++) {
		const struct fts__evtype *t = fts__event_type_get(tr.types_written);
		unsigned char p[FTS__EVTYPE_BYTES] = { 0 };
		fts__le_put32(p, (uint32_t)tr.types_written);
		fts__le_put32(p + 4, t->nfields);
		memcpy(p + 8, t->name, strlen(t->name));
		for (unsigned k = 0; k < t->nfields; k++)
			memcpy(p + 72 + 32 * k, t->fields[k], strlen(t->fields[k]));
		rc = out_block(FTS__BLK_EVTYPE, p, sizeof(p));
	}
	tr.st.dropped += dropped;
	if (moved)
		*moved = events;
	for (size_t i = 0; i < nb && !rc; i++)
		rc = events_blocks(&tr.b[i]);
	if (!rc)
		rc = flush();
	fts__event_rings_release(tr.b, nb);
	if (!rc) {
		tr.good += (off_t)tr.round_bytes;
		tr.st.events += events;
		tr.st.bytes = (uint64_t)tr.good;
		return 0;
	}
	/* a failed round leaves no part of a block: the file ends with its last whole one,
	 * and the next round may write again (a disk with room again) */
	if (ftruncate(tr.fd, tr.good) < 0 || lseek(tr.fd, tr.good, SEEK_SET) < 0) {
		/* the error reported is the write's */
	}
	tr.st.lost += events;
	if (!tr.st.write_error)
		tr.st.write_error = -rc;
	return rc;
}

/* How long the drain sleeps after a round that moved `moved` records, `since` ns after
 * the one before, having slept `wait` ns last: while records arrive, until a quarter of
 * a ring would fill again at their rate (so that a ring of 0.8 ms at 20 M events a
 * second does not wait out a 1 ms period), between DRAIN_FAST_NS and DRAIN_MIN_NS;
 * doubling to DRAIN_MAX_NS while none do. */
static int64_t drain_wait(uint64_t moved, int64_t since, int64_t wait)
{
	double quarter;

	if (!moved)
		return wait * 2 > DRAIN_MAX_NS ? DRAIN_MAX_NS : wait * 2;
	quarter = (double)since * (double)(fts__event_rings_size() / 4) / (double)moved;
	return quarter < DRAIN_FAST_NS ? DRAIN_FAST_NS : quarter > DRAIN_MIN_NS ? DRAIN_MIN_NS
										 : (int64_t)quarter;
}

static void *drain_main(void *arg)
{
	int64_t wait = DRAIN_MIN_NS, last = 0;

	(void)arg;
	fts__now(CLOCK_MONOTONIC, &last);
	pthread_mutex_lock(&trace_lock);
	while (!tr.stop) {
		uint64_t moved = 0;
		int64_t now = last;

		fts__now(CLOCK_MONOTONIC, &now);
		round_locked(0, &moved, fts__event_rings_size() / 4, 1);
		pthread_mutex_unlock(&trace_lock);
		/* a quarter of a ring or more in a round (but the end of a line): go on at
		 * once */
		if (moved + FTS__REC_PER_LINES > fts__event_rings_size() / 4) {
			last = now;
			pthread_mutex_lock(&trace_lock);
			continue;
		}
		wait = drain_wait(moved, now - last, wait);
		last = now;
		fts__event_drain_sleep(moved ? FTS__DRAIN_PACED : FTS__DRAIN_IDLE, wait);
		pthread_mutex_lock(&trace_lock);
	}
	pthread_mutex_unlock(&trace_lock);
	fts__event_drain_stopped();
	return NULL;
}

/* The trace's state back to none (the file closed by the caller). */
static void trace_reset(void)
{
	free(tr.out);
	free(tr.b);
	tr.out = NULL;
	tr.b = NULL;
	tr.nout = tr.capout = tr.capb = 0;
	tr.fd = -1;
	tr.thread_on = tr.stop = 0;
}

static void before_fork(void)
{
	pthread_mutex_lock(&trace_lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&trace_lock);
}

/* The child traces nothing and never writes its parent's file; it may start a trace of
 * its own. Its parent's drain thread is not in it. */
static void after_fork_child(void)
{
	__atomic_store_n(&fts__trace_on, 0, __ATOMIC_RELAXED);
	if (tr.fd >= 0)
		close(tr.fd);
	trace_reset();
	fts__event_rings_forked();
	pthread_mutex_unlock(&trace_lock);
}

static void register_atfork(void)
{
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

int fts_trace_start(const char *path)
{
	unsigned char p[FTS__TRACE_BYTES] = { 0 };
	struct fts__head h;
	sigset_t all, old;
	int rc, fd;

	if (!path || !*path)
		return fts__fail(EINVAL);
	pthread_mutex_lock(&trace_lock);
	if (tr.fd >= 0) {
		pthread_mutex_unlock(&trace_lock);
		return fts__fail(EBUSY);
	}
	if ((rc = -fts__event_rings_configure()) != 0) {
		pthread_mutex_unlock(&trace_lock);
		return fts__fail(rc);
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		rc = errno;
		pthread_mutex_unlock(&trace_lock);
		return fts__fail(rc);
	}
	/* after the process clock's and the rings' handlers: a fork's prepare takes this
	 * lock first, as the drain does */
	if ((rc = -fts__clock_tap_start(&h)) == 0)
		pthread_once(&trace_once, register_atfork);
	tr.fd = fd;
	tr.good = 0;
	tr.types_written = 0;
	tr.st = (struct fts_trace_stats){ .size = sizeof(tr.st) };
	fts__event_rings_reset();
	tr.orphans_seen = 0;
	fts__le_put32(p, (uint32_t)getpid());
	fts__le_put64(p + 8, fts__event_rings_size());
	if (!rc && (rc = -fts__histfile_write_header(fd, &h)) == 0 &&
	    (rc = -fts__histfile_write_block(fd, FTS__BLK_TRACE, p, sizeof(p))) == 0) {
		tr.good = lseek(fd, 0, SEEK_CUR);
		rc = -round_locked(0, NULL, SIZE_MAX, 0);
	}
	if (!rc) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&tr.thread, NULL, drain_main, NULL) ? EAGAIN : 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (rc) {
		fts__clock_tap_stop();
		close(fd);
		unlink(path);
		trace_reset();
		pthread_mutex_unlock(&trace_lock);
		return fts__fail(rc);
	}
	tr.thread_on = 1;
	__atomic_store_n(&fts__trace_on, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&trace_lock);
	fts__event_drain_wait_started();
	return 0;
}

int fts_trace_stop(void)
{
	unsigned char p[FTS__TRACE_END_BYTES];
	pthread_t t;
	int rc, thread;

	pthread_mutex_lock(&trace_lock);
	if (tr.fd < 0 || tr.stop) {
		pthread_mutex_unlock(&trace_lock);
		return fts__fail(ENOENT);
	}
	__atomic_store_n(&fts__trace_on, 0, __ATOMIC_RELEASE);
	tr.stop = 1;
	thread = tr.thread_on;
	t = tr.thread;
	pthread_mutex_unlock(&trace_lock);
	if (thread) {
		fts__event_drain_kick();
		pthread_join(t, NULL);
	}
	pthread_mutex_lock(&trace_lock);
	round_locked(1, NULL, SIZE_MAX, 0);
	fts__le_put64(p, tr.st.events);
	fts__le_put64(p + 8, tr.st.dropped);
	fts__le_put64(p + 16, tr.st.lost);
	if (!tr.st.write_error && (rc = -fts__histfile_write_block(tr.fd, FTS__BLK_TRACE_END, p, sizeof(p))) != 0)
		tr.st.write_error = rc;
	else if (!tr.st.write_error)
		tr.st.bytes += FTS__BLOCK_HEAD_BYTES + sizeof(p);
	tr.st.stopped = !tr.st.write_error;
	if (close(tr.fd) < 0 && !tr.st.write_error)
		tr.st.write_error = errno;
	rc = tr.st.write_error;
	fts__clock_tap_stop();
	trace_reset();
	pthread_mutex_unlock(&trace_lock);
	return rc ? fts__fail(rc) : 0;
}

int fts_trace_drain(void)
{
	int rc;

	pthread_mutex_lock(&trace_lock);
	rc = tr.fd < 0 || tr.stop ? -ENOENT : round_locked(0, NULL, SIZE_MAX, 0);
	pthread_mutex_unlock(&trace_lock);
	return rc ? fts__fail(-rc) : 0;
}

int fts_trace_stats(struct fts_trace_stats *st)
{
	size_t size;

	if (!st || st->size < FTS__TRACE_STATS_V1)
		return fts__fail(EINVAL);
	size = st->size < sizeof(*st) ? st->size : sizeof(*st);   /* an older, shorter one */
	pthread_mutex_lock(&trace_lock);
	memcpy(st, &tr.st, size);
	pthread_mutex_unlock(&trace_lock);
	st->size = size;
	return 0;
}
