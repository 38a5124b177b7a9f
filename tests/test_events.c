/* test_events.c - the event path: types and events refuse bad input and change nothing;
 * every event converts within its clock_gettime bracket on every clock, live and from
 * the file after its writer exited; produced = written + dropped, exactly, under rings
 * that fill; a trace cut at any byte gives every whole block and nothing else; a changed
 * byte costs its own block and nothing else; records in the file are as long as their fields,
 * and a trace of the earlier 48-byte layout still reads; a fork's child never writes its
 * parent's trace; a writer killed with SIGKILL leaves every record drained before. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "testmain.h"
#include "faststamp.h"
#include "event.h"
#include "histfile.h"

static const clockid_t clocks[5] = { CLOCK_REALTIME, CLOCK_TAI, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
				     CLOCK_MONOTONIC_RAW };

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A fresh path for a trace (no file there): in memory where the machine has it (the
 * cut and flip tests write thousands of files). */
static void fresh_path(char *p, size_t len)
{
	snprintf(p, len, "%s/fts-events-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
	unlink(p);
}

static unsigned char *slurp(const char *path, size_t *n)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	unsigned char *b = malloc((size_t)st.st_size + 1);
	assert_non_null(b);
	assert_int_equal(read(fd, b, (size_t)st.st_size), st.st_size);
	close(fd);
	*n = (size_t)st.st_size;
	return b;
}

static void spill(const char *path, const unsigned char *b, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, n), (ssize_t)n);
	close(fd);
}

/* ---- bad input --------------------------------------------------------------------- */

static void define_refuses_bad_input(void **state)
{
	(void)state;
	char longname[FTS_EVENT_NAME_MAX + 2];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	struct { const char *name, *fields; int err; } bad[] = {
		{ NULL, "", EINVAL }, { "x", NULL, EINVAL }, { "", "", EINVAL },
		{ longname, "", EINVAL }, { "a\"b", "", EINVAL }, { "a\\b", "", EINVAL },
		{ "a\nb", "", EINVAL }, { "ok", "a,b,c,d,e", EINVAL }, { "ok", "a,,b", EINVAL },
		{ "ok", "a,", EINVAL }, { "ok", "1a", EINVAL }, { "ok", "a b", EINVAL },
		{ "ok", "a,a", EINVAL },
		{ "ok", "abcdefghijabcdefghijabcdefghijab", EINVAL },   /* 32 bytes */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_int_equal(fts_event_define(bad[i].name, bad[i].fields), -1);
		assert_int_equal(errno, bad[i].err);
	}
	longname[FTS_EVENT_NAME_MAX] = 0;   /* the longest name is fine */
	int a = fts_event_define(longname, "abcdefghijabcdefghijabcdefghija,b,c,d");
	assert_true(a >= 0);
	assert_int_equal(fts_event_define(longname, "abcdefghijabcdefghijabcdefghija,b,c,d"), a);
	errno = 0;
	assert_int_equal(fts_event_define(longname, "b"), -1);   /* other fields */
	assert_int_equal(errno, EEXIST);
	assert_int_equal(fts_event_define(longname, "abcdefghijabcdefghijabcdefghija,b,c,d"), a);
}

static void events_refuse_bad_input(void **state)
{
	char path[64];
	(void)state;
	int t = fts_event_define("two", "x,y");
	assert_true(t >= 0);
	/* no trace: nothing to do */
	assert_int_equal(fts_event(t, 1, 2), 0);
	fresh_path(path, sizeof(path));
	assert_int_equal(fts_trace_start(path), 0);
	errno = 0;
	assert_int_equal(fts_event(FTS_EVENT_TYPES_MAX - 1), -1);   /* not defined */
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_event(-1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_event(70000), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(fts_event(t, 1, 2, 3), -1);   /* more fields than defined */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fts_event(t, 1, 2), 0);
	assert_int_equal(fts_event(t, 1), 0);           /* fewer is fine */
	errno = 0;
	assert_int_equal(fts_span_begin_relaxed(t, 1, 2, 3), -1);   /* relaxed: the same checks */
	assert_int_equal(errno, EINVAL);
	/* a type defined while the trace runs, used in the same round: in the file first */
	int late = fts_event_define("late", "z");
	assert_true(late > t);
	assert_int_equal(fts_event(late, 9), 0);
	/* the relaxed forms: kinds and fields as the ordered ones write them */
	assert_int_equal(fts_span_begin_relaxed(late, 10), 0);
	assert_int_equal(fts_event_relaxed(late, 11), 0);
	assert_int_equal(fts_span_end_relaxed(late, 12), 0);
	assert_int_equal(fts_trace_drain(), 0);
	errno = 0;
	assert_int_equal(fts_trace_start("/tmp/never-made-fts"), -1);   /* one trace */
	assert_int_equal(errno, EBUSY);
	assert_int_equal(access("/tmp/never-made-fts", F_OK), -1);
	assert_int_equal(fts_trace_stop(), 0);
	errno = 0;
	assert_int_equal(fts_trace_stop(), -1);
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_int_equal(fts_trace_drain(), -1);
	assert_int_equal(errno, ENOENT);
	/* the refused ones are not in the file */
	struct fts_trace *r = fts_trace_open(path, CLOCK_REALTIME);
	struct fts_trace_event ev;
	assert_non_null(r);
	assert_int_equal(fts_trace_next(r, &ev), 1);
	assert_int_equal(ev.nfields, 2);
	assert_string_equal(ev.name, "two");
	assert_string_equal(ev.field_names[1], "y");
	assert_int_equal(fts_trace_next(r, &ev), 1);
	assert_int_equal(ev.nfields, 1);
	assert_int_equal(fts_trace_next(r, &ev), 1);
	assert_string_equal(ev.name, "late");
	assert_int_equal(ev.fields[0], 9);
	for (int k = 0; k < 3; k++) {
		static const int kinds[3] = { FTS_EVENT_BEGIN, FTS_EVENT_INSTANT, FTS_EVENT_END };
		assert_int_equal(fts_trace_next(r, &ev), 1);
		assert_string_equal(ev.name, "late");
		assert_int_equal(ev.kind, kinds[k]);
		assert_int_equal(ev.nfields, 1);
		assert_int_equal(ev.fields[0], 10 + k);
		assert_int_equal(ev.error, 0);
	}
	assert_int_equal(fts_trace_next(r, &ev), 0);
	fts_trace_close(r);
	unlink(path);
}

static void start_refuses_existing_path(void **state)
{
	char path[64];
	(void)state;
	fresh_path(path, sizeof(path));
	spill(path, (const unsigned char *)"keep me", 7);
	errno = 0;
	assert_int_equal(fts_trace_start(path), -1);
	assert_int_equal(errno, EEXIST);
	size_t n;
	unsigned char *b = slurp(path, &n);
	assert_int_equal(n, 7);
	assert_memory_equal(b, "keep me", 7);
	free(b);
	unlink(path);
	errno = 0;
	assert_int_equal(fts_trace_start(""), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fts_trace_start(NULL), -1);
	errno = 0;
	assert_int_equal(fts_trace_start("/nonexistent-dir/x.fts"), -1);
	assert_int_equal(errno, ENOENT);
	/* a reader refuses what is no trace */
	assert_null(fts_trace_open("/nonexistent-dir/x.fts", CLOCK_REALTIME));
	assert_null(fts_trace_open("/etc/hostname", CLOCK_REALTIME));
	assert_int_equal(errno, EBADMSG);
	assert_null(fts_trace_open("/etc/hostname", 12345));
	assert_int_equal(errno, EINVAL);
}

/* ---- fidelity ------------------------------------------------------------------------ */

#define FID_N 300
struct bracket {
	int64_t lo[5], hi[5];
};

/* Each event of trace r (in the order written, one thread) within its bracket b[i] on
 * every clock. */
static void check_fidelity(const char *path, const struct bracket *b, int n)
{
	for (int k = 0; k < 5; k++) {
		struct fts_trace *r = fts_trace_open(path, clocks[k]);
		struct fts_trace_event ev;
		int i = 0, rc;
		assert_non_null(r);
		while ((rc = fts_trace_next(r, &ev)) == 1) {
			assert_true(i < n);
			assert_int_equal(ev.fields[0], (uint64_t)i);
			assert_int_equal(ev.kind, FTS_EVENT_INSTANT);
			if ((ev.stamp & FTS_STAMP_CLOCK_TAG) && k != 0) {
				assert_int_equal(ev.error, ENOTSUP);   /* a clock reading, REALTIME's */
			} else {
				if (ev.error)
					fail_msg("event %d clock %d: %s", i, k, strerror(ev.error));
				if (ev.ns + ev.err_ns < b[i].lo[k] || ev.ns - ev.err_ns > b[i].hi[k])
					fail_msg("event %d clock %d: %" PRId64 " +- %" PRId64
						 " outside [%" PRId64 ", %" PRId64 "]", i, k, ev.ns,
						 ev.err_ns, b[i].lo[k], b[i].hi[k]);
			}
			i++;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(i, n);
		fts_trace_close(r);
	}
}

static void fidelity_every_clock(void **state)
{
	char path[64];
	(void)state;
	struct bracket *b = mmap(NULL, sizeof(*b) * FID_N, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(b != MAP_FAILED);
	fresh_path(path, sizeof(path));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* the writer: brackets in shared memory, the trace checked live, then exit */
		int t = fts_event_define("fid", "i");
		if (t < 0 || fts_trace_start(path) < 0)
			_exit(2);
		for (int i = 0; i < FID_N; i++) {
			for (int k = 0; k < 5; k++)
				b[i].lo[k] = now_ns(clocks[k]);
			/* every other one relaxed: the same record, its stamp unordered */
			if ((i & 1 ? fts_event_relaxed(t, (uint64_t)i) : fts_event(t, (uint64_t)i)) < 0)
				_exit(3);
			for (int k = 4; k >= 0; k--)
				b[i].hi[k] = now_ns(clocks[k]);
			if (i % 10 == 0)
				usleep(10000);   /* the trace spans several samples (0.3 s) */
		}
		if (fts_trace_drain() < 0)
			_exit(4);
		check_fidelity(path, b, FID_N);   /* live: the writer runs, its trace too */
		_exit(fts_trace_stop() < 0 ? 5 : 0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	check_fidelity(path, b, FID_N);   /* the writer gone */
	munmap(b, sizeof(*b) * FID_N);
	unlink(path);
}

/* ---- produced = written + dropped ---------------------------------------------------- */

struct writer {
	int type;
	uint64_t ok, full, other;
};

static void *write_many(void *p)
{
	struct writer *w = p;
	for (uint64_t i = 0; i < 300000; i++) {
		int rc = fts_event(w->type, i, i);
		if (rc == 0)
			w->ok++;
		else if (errno == ENOBUFS)
			w->full++;
		else
			w->other++;
	}
	return NULL;
}

static void produced_is_written_plus_dropped(void **state)
{
	char path[64];
	struct writer w[2] = { { 0 }, { 0 } };
	pthread_t th[2];
	(void)state;
	/* small rings (made by the threads' first events, after the start reads it) */
	setenv("FASTSTAMP_EVENT_RING", "64", 1);
	fresh_path(path, sizeof(path));
	w[0].type = w[1].type = fts_event_define("many", "i,j");
	assert_int_equal(fts_trace_start(path), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, write_many, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(fts_trace_stop(), 0);
	unsetenv("FASTSTAMP_EVENT_RING");
	struct fts_trace_stats st = { .size = sizeof(st) }, fs = { .size = sizeof(fs) };
	assert_int_equal(fts_trace_stats(&st), 0);
	uint64_t ok = w[0].ok + w[1].ok, full = w[0].full + w[1].full;
	assert_int_equal(w[0].other + w[1].other, 0);
	assert_true(full > 0);   /* a ring of 64 records filled */
	assert_int_equal(st.events, ok);
	assert_int_equal(st.dropped, full);
	assert_int_equal(st.lost, 0);
	/* and the file says the same */
	struct fts_trace *r = fts_trace_open(path, CLOCK_MONOTONIC);
	struct fts_trace_event ev;
	uint64_t n = 0;
	int rc;
	assert_non_null(r);
	while ((rc = fts_trace_next(r, &ev)) == 1)
		n++;
	assert_int_equal(rc, 0);
	assert_int_equal(fts_trace_summary(r, &fs), 0);
	assert_int_equal(n, ok);
	assert_int_equal(fs.events, ok);
	assert_int_equal(fs.dropped, full);
	assert_true(fs.stopped);
	fts_trace_close(r);
	unlink(path);
}

/* ---- cut and flipped files ------------------------------------------------------------- */

/* A small trace: n events with field i, in a few drain rounds. */
static unsigned char *small_trace(int n, size_t *len)
{
	char path[64];
	int t = fts_event_define("small", "i");
	fresh_path(path, sizeof(path));
	assert_int_equal(fts_trace_start(path), 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(fts_event(t, (uint64_t)i), 0);
		if (i % 4 == 3)
			assert_int_equal(fts_trace_drain(), 0);
	}
	assert_int_equal(fts_trace_stop(), 0);
	unsigned char *b = slurp(path, len);
	unlink(path);
	return b;
}

/* The events of the file's whole blocks up to byte cut. */
static int events_before(const unsigned char *b, size_t n, size_t cut)
{
	int events = 0;
	for (size_t at = 16; at + FTS__BLOCK_HEAD_BYTES <= n;) {
		uint32_t type = b[at + 4] | (uint32_t)b[at + 5] << 8 | (uint32_t)b[at + 6] << 16 |
				(uint32_t)b[at + 7] << 24;
		uint32_t len = b[at + 8] | (uint32_t)b[at + 9] << 8 | (uint32_t)b[at + 10] << 16 |
			       (uint32_t)b[at + 11] << 24;
		size_t end = at + FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
		if (end > cut)
			break;
		if (type == FTS__BLK_EVENTS_COMPACT)
			events += (int)(b[at + FTS__BLOCK_HEAD_BYTES + 4] | b[at + FTS__BLOCK_HEAD_BYTES + 5] << 8);
		at = end;
	}
	return events;
}

/* Read the trace at path: the events' field 0 in got[], their count, or -1 (refused:
 * at open or at a block). */
static int read_all(const char *path, uint64_t *got, int max)
{
	struct fts_trace *r = fts_trace_open(path, CLOCK_REALTIME);
	struct fts_trace_event ev;
	int n = 0, rc;
	if (!r)
		return -1;
	while ((rc = fts_trace_next(r, &ev)) == 1) {
		if (n < max)
			got[n] = ev.fields[0];
		n++;
	}
	fts_trace_close(r);
	return rc < 0 ? -1 : n;
}

static void cut_anywhere_keeps_whole_blocks(void **state)
{
	char path[64];
	size_t n;
	uint64_t got[64];
	(void)state;
	unsigned char *b = small_trace(22, &n);
	fresh_path(path, sizeof(path));
	assert_int_equal(events_before(b, n, n), 22);
	for (size_t cut = 0; cut <= n; cut++) {
		spill(path, b, cut);
		int want = events_before(b, n, cut), have = read_all(path, got, 64);
		if (have < 0) {
			/* only a file cut before its history can be refused */
			if (want != 0)
				fail_msg("cut at %zu of %zu: refused, %d events before", cut, n, want);
			continue;
		}
		if (have != want)
			fail_msg("cut at %zu of %zu: %d events, %d whole", cut, n, have, want);
		for (int i = 0; i < have; i++)
			assert_int_equal(got[i], (uint64_t)i);
	}
	unlink(path);
	free(b);
}

/* A block of a trace file, as the test finds it in the bytes. */
struct blk {
	size_t at, end;
	uint32_t type;
	int events;     /* an events block's: its records' count */
	uint32_t id;    /* an EVTYPE block's: the type it defines */
};

static int blocks_of(const unsigned char *b, size_t n, struct blk *k, int max)
{
	int nb = 0;
	for (size_t at = 16; at + FTS__BLOCK_HEAD_BYTES <= n && nb < max; nb++) {
		const unsigned char *p = b + at + FTS__BLOCK_HEAD_BYTES;
		uint32_t len = b[at + 8] | (uint32_t)b[at + 9] << 8 | (uint32_t)b[at + 10] << 16 |
			       (uint32_t)b[at + 11] << 24;
		k[nb].at = at;
		k[nb].end = at + FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
		k[nb].type = b[at + 4] | (uint32_t)b[at + 5] << 8 | (uint32_t)b[at + 6] << 16 |
			     (uint32_t)b[at + 7] << 24;
		k[nb].events = k[nb].type == FTS__BLK_EVENTS_COMPACT ? p[4] | p[5] << 8 : 0;
		k[nb].id = k[nb].type == FTS__BLK_EVTYPE ? p[0] | (uint32_t)p[1] << 8 : UINT32_MAX;
		at = k[nb].end;
	}
	return nb;
}

/* A changed byte costs its block alone: every other block is read, before and after
 * it, the damage is said once (EBADMSG from fts_trace_next, then the records after
 * it) with the block's offset and where reading went on; a block of the history (or
 * one whose header did not hold, which may have been one) leaves the events' counters
 * without a time (EBADMSG), a lost type definition leaves its events named "#id". Only
 * the file's own header, changed, refuses the file. Every byte of a small trace, and
 * every byte again changed after the open. */
static void damaged_byte_costs_its_block(void **state)
{
	char path[64];
	size_t n;
	uint64_t got[64];
	struct blk k[256];
	(void)state;
	int ty = fts_event_define("small", "i");
	unsigned char *b = small_trace(22, &n);
	int nb = blocks_of(b, n, k, 256);
	assert_true(nb < 256);
	assert_int_equal(k[nb - 1].end, n);
	print_message("%zu bytes in %d blocks, each byte changed in turn\n", n, nb);
	fresh_path(path, sizeof(path));
	for (size_t i = 0; i < n; i++) {
		int hit = -1, want = 0, before = 0, have = 0, rc, bad = 0, seen_at = -1;
		for (int j = 0; j < nb; j++)
			if (k[j].at <= i && i < k[j].end)
				hit = j;
		b[i] ^= (unsigned char)(1u << (i % 8));
		spill(path, b, n);
		b[i] ^= (unsigned char)(1u << (i % 8));
		struct fts_trace *r = fts_trace_open(path, CLOCK_MONOTONIC);
		if (i < 16) {   /* the file's header: its magic, format and zeros */
			if (r || errno != EBADMSG)
				fail_msg("byte %zu of the file header changed: not refused", i);
			continue;
		}
		if (!r)
			fail_msg("byte %zu changed (block at %zu): refused (%s)", i,
				 hit < 0 ? 0 : k[hit].at, strerror(errno));
		size_t at = k[hit].at, end = k[hit].end;
		uint32_t type = k[hit].type;
		int unknown = i < at + FTS__BLOCK_HEAD_BYTES;
		int history = unknown || !(type & 0x80000000u);
		for (int j = 0; j < nb; j++) {
			if (k[j].at != at)
				want += k[j].events;
			if (k[j].at < at)
				before += k[j].events;
		}
		struct fts_trace_event ev;
		while ((rc = fts_trace_next(r, &ev)) != 0) {
			if (rc < 0) {
				if (errno != EBADMSG || seen_at >= 0)
					fail_msg("byte %zu changed: %s, or twice", i, strerror(errno));
				seen_at = have;
				continue;
			}
			if (have < 64)
				got[have] = ev.fields[0];
			have++;
			char name[16];
			snprintf(name, sizeof(name), "#%d", ty);
			if (strcmp(ev.name, type == FTS__BLK_EVTYPE && k[hit].id == (uint32_t)ty ? name : "small"))
				fail_msg("byte %zu changed: an event named %s", i, ev.name);
			if (ev.error != (ev.stamp & FTS_STAMP_CLOCK_TAG ? ENOTSUP : history ? EBADMSG : 0))
				bad++;
		}
		struct fts_trace_stats st = { .size = sizeof(st) };
		assert_int_equal(fts_trace_summary(r, &st), 0);
		fts_trace_close(r);
		if (have != want || seen_at != before || st.damaged != 1 || st.damage_at != at ||
		    st.damage_end != end || bad || st.stopped != (type != FTS__BLK_TRACE_END))
			fail_msg("byte %zu changed (block %#x at %zu-%zu): %d events (%d whole), "
				 "damage said after %d (%d before it), %" PRIu64 " damaged at %" PRIu64
				 "-%" PRIu64 ", %d not as the history allows, stopped %d", i, type, at, end,
				 have, want, seen_at, before, st.damaged, st.damage_at, st.damage_end,
				 bad, st.stopped);
		/* the events of every whole block, in order */
		for (int j = 0, e = 0, v = 0; j < nb; j++)
			for (int q = 0; q < k[j].events; q++, v++)
				if (k[j].at != at)
					assert_int_equal(got[e++], (uint64_t)v);
	}
	/* a file changed after it was opened (a trace read while written): the blocks read
	 * then are checked too, and the history loaded at the open converts the rest */
	for (size_t i = 16; i < n; i++) {
		struct fts_trace_event ev;
		int have = 0, want = 0, rc, fd, hit = 0;
		spill(path, b, n);
		struct fts_trace *r = fts_trace_open(path, CLOCK_REALTIME);
		assert_non_null(r);
		unsigned char c = (unsigned char)(b[i] ^ (1u << (i % 8)));
		assert_true((fd = open(path, O_WRONLY)) >= 0);
		assert_int_equal(pwrite(fd, &c, 1, (off_t)i), 1);
		close(fd);
		for (int j = 0; j < nb; j++)
			if (k[j].at <= i && i < k[j].end)
				hit = j;
		for (int j = 0; j < nb; j++)
			want += j == hit ? 0 : k[j].events;
		while ((rc = fts_trace_next(r, &ev)) != 0) {
			if (rc < 0) {
				assert_int_equal(errno, EBADMSG);
				continue;
			}
			assert_int_equal(ev.error, 0);
			have++;
		}
		fts_trace_close(r);
		if (have != want)
			fail_msg("byte %zu changed after the open: %d events read, %d whole", i, have, want);
	}
	/* a caller built before the damage fields: its struct, and nothing past it */
	{
		union {
			struct fts_trace_stats st;
			unsigned char b[sizeof(struct fts_trace_stats)];
		} u;
		spill(path, b, n);
		struct fts_trace *r = fts_trace_open(path, CLOCK_REALTIME);
		struct fts_trace_event ev;
		assert_non_null(r);
		while (fts_trace_next(r, &ev) > 0)
			;
		memset(&u, 0xa5, sizeof(u));
		u.st.size = FTS__TRACE_STATS_V1;
		assert_int_equal(fts_trace_summary(r, &u.st), 0);
		assert_int_equal(u.st.size, FTS__TRACE_STATS_V1);
		assert_int_equal(u.st.events, 22);
		for (size_t j = FTS__TRACE_STATS_V1; j < sizeof(u); j++)
			assert_int_equal(u.b[j], 0xa5);
		u.st.size = FTS__TRACE_STATS_V1 - 1;
		assert_int_equal(fts_trace_summary(r, &u.st), -1);
		fts_trace_close(r);
		memset(&u, 0xa5, sizeof(u));
		u.st.size = FTS__TRACE_STATS_V1;
		assert_int_equal(fts_trace_stats(&u.st), 0);
		for (size_t j = FTS__TRACE_STATS_V1; j < sizeof(u); j++)
			assert_int_equal(u.b[j], 0xa5);
	}
	unlink(path);
	free(b);
}

/* ---- the records' layout in the file ------------------------------------------------------ */

/* The byte offset of the first block of the given type at or after from, or 0. */
static size_t find_block(const unsigned char *b, size_t n, size_t from, uint32_t want)
{
	for (size_t at = from; at + FTS__BLOCK_HEAD_BYTES <= n;) {
		uint32_t type = b[at + 4] | (uint32_t)b[at + 5] << 8 | (uint32_t)b[at + 6] << 16 |
				(uint32_t)b[at + 7] << 24;
		uint32_t len = b[at + 8] | (uint32_t)b[at + 9] << 8 | (uint32_t)b[at + 10] << 16 |
			       (uint32_t)b[at + 11] << 24;
		if (type == want)
			return at;
		at += FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
	}
	return 0;
}

static uint32_t le32(const unsigned char *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A record in the file holds its stamp and fields as differences from the record
 * before (EVENTS_COMPACT, event.h): what it read back is what was written, to the bit,
 * for fields at the ends of their range and differences that wrap, types past one
 * byte, zero fields and four; in fewer bytes than packed (12 and 8 a field). A block
 * whose record count disagrees with its length is refused even under a right CRC (a
 * writer's bug, not a flipped bit), and so is a record no writer makes. */
static void records_as_differences(void **state)
{
	static const uint64_t ends[] = { 0, 1, UINT64_MAX, UINT64_C(1) << 63, 0, 255, 256,
					 UINT64_MAX - 1 };
	char path[64], name[16];
	size_t n, at;
	uint64_t f[32][4];
	int t0 = fts_event_define("sized0", ""), t4 = fts_event_define("sized4", "a,b,c,d"), tw = -1;
	struct fts_trace_event ev;
	(void)state;
	assert_true(t0 >= 0 && t4 >= 0);
	for (int i = 0; tw < 300; i++) {   /* a type whose id takes two bytes */
		snprintf(name, sizeof(name), "pad%d", i);
		assert_true((tw = fts_event_define(name, "x")) >= 0);
	}
	fresh_path(path, sizeof(path));
	assert_int_equal(fts_trace_start(path), 0);
	assert_int_equal(fts_trace_drain(), 0);
	for (int i = 0; i < 8; i++) {
		for (int k = 0; k < 4; k++)
			f[i][k] = ends[(i + 3 * k) % 8] ^ (uint64_t)k;
		assert_int_equal(fts_event(t4, f[i][0], f[i][1], f[i][2], f[i][3]), 0);
		assert_int_equal(fts_event(t0), 0);
		assert_int_equal(fts_event(tw, f[i][3]), 0);
	}
	assert_int_equal(fts_trace_drain(), 0);
	assert_int_equal(fts_trace_stop(), 0);
	unsigned char *b = slurp(path, &n);
	assert_int_equal(find_block(b, n, 16, FTS__BLK_EVENTS), 0);
	assert_int_equal(find_block(b, n, 16, FTS__BLK_EVENTS_PACKED), 0);
	/* in one block or more (the drain thread may run a round between two events) */
	size_t first = 0, records = 0, bytes = 0;
	for (at = 16; (at = find_block(b, n, at, FTS__BLK_EVENTS_COMPACT)) != 0;) {
		const unsigned char *p = b + at + FTS__BLOCK_HEAD_BYTES;
		uint32_t len = le32(b + at + 8);
		assert_int_equal(le32(p), (uint32_t)syscall(SYS_gettid));
		if (!first && le32(p + 4))
			first = at;
		records += le32(p + 4);
		bytes += len - FTS__EVENTS_HEAD_BYTES;
		at += FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
	}
	assert_int_equal(records, 24);
	print_message("24 records in %zu bytes (packed: %d)\n", bytes, 8 * (12 + 32 + 12 + 20));
	assert_true(bytes < 8 * (12 + 32 + 12 + 20));
	struct fts_trace *r = fts_trace_open(path, CLOCK_REALTIME);
	assert_non_null(r);
	for (int i = 0; i < 24; i++) {
		assert_int_equal(fts_trace_next(r, &ev), 1);
		assert_int_equal(ev.type, i % 3 == 0 ? t4 : i % 3 == 1 ? t0 : tw);
		assert_int_equal(ev.nfields, i % 3 == 0 ? 4 : i % 3 == 1 ? 0 : 1);
		for (unsigned k = 0; k < ev.nfields; k++)
			assert_int_equal(ev.fields[k], i % 3 == 0 ? f[i / 3][k] : f[i / 3][3]);
		assert_int_equal(ev.error, 0);
	}
	assert_int_equal(fts_trace_next(r, &ev), 0);
	fts_trace_close(r);
	/* one record more or less than a block holds, its CRCs made right: refused */
	unsigned char *p = b + first + FTS__BLOCK_HEAD_BYTES;
	uint32_t len = le32(b + first + 8), count = le32(p + 4);
	uint64_t got[64];
	for (int d = -1; d <= 1; d += 2) {
		p[4] = (unsigned char)(count + (uint32_t)d);
		fts__histfile_put_block(b + first, FTS__BLK_EVENTS_COMPACT, len);
		spill(path, b, n);
		assert_int_equal(read_all(path, got, 64), -1);
	}
	p[4] = (unsigned char)count;
	/* the first record's byte 0 as no writer makes it: bit 7 set; the type of a record
	 * before, which the first has not; a type in three bytes; five fields. Then a
	 * length nibble past 8, and the unused nibble set. */
	unsigned char *r0 = p + FTS__EVENTS_HEAD_BYTES, keep0 = r0[0], keep1 = r0[1];
	const unsigned char b0s[] = { (unsigned char)(keep0 | 0x80), (unsigned char)(keep0 & 0x9f),
				      (unsigned char)(keep0 | 0x60), (unsigned char)((keep0 & ~7) | 5) };
	for (size_t i = 0; i < sizeof(b0s); i++) {
		r0[0] = b0s[i];
		fts__histfile_put_block(b + first, FTS__BLK_EVENTS_COMPACT, len);
		spill(path, b, n);
		assert_int_equal(read_all(path, got, 64), -1);
	}
	r0[0] = keep0;
	fts__histfile_put_block(b + first, FTS__BLK_EVENTS_COMPACT, len);
	spill(path, b, n);
	assert_int_equal(read_all(path, got, 64), 24);   /* put back: read again */
	r0[1] = (unsigned char)((keep1 & 0xf0) | 9);
	fts__histfile_put_block(b + first, FTS__BLK_EVENTS_COMPACT, len);
	spill(path, b, n);
	assert_int_equal(read_all(path, got, 64), -1);
	unlink(path);
	free(b);
}

/* The ring size, set by the program: a size that is not a power of two from 64 to 2^24
 * is refused and changes nothing; a size accepted is the rings' of the next trace (its
 * TRACE block says so) and a thread's burst through a ring of 128 is written or counted
 * dropped, every event; the environment's, read at the start, wins over a call made
 * before. */
static uint64_t trace_ring_records(const char *path)
{
	size_t n, at;
	unsigned char *b = slurp(path, &n);
	uint64_t v;
	assert_true((at = find_block(b, n, 16, FTS__BLK_TRACE)) != 0);
	v = le32(b + at + FTS__BLOCK_HEAD_BYTES + 8) |
	    (uint64_t)le32(b + at + FTS__BLOCK_HEAD_BYTES + 12) << 32;
	free(b);
	return v;
}

static void *burst_1000(void *p)
{
	int *type = p;
	for (uint64_t i = 0; i < 1000; i++)
		fts_event(*type, i);
	return NULL;
}

static void ring_size_set_by_call(void **state)
{
	static const size_t bad[] = { 0, 1, 32, 63, 100, 65535, (size_t)1 << 25, SIZE_MAX };
	char path[64];
	int type = fts_event_define("sized_ring", "i");
	pthread_t th;
	(void)state;
	unsetenv("FASTSTAMP_EVENT_RING");
	assert_int_equal(fts_event_ring_size(1024), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_int_equal(fts_event_ring_size(bad[i]), -1);
		assert_int_equal(errno, EINVAL);
	}
	fresh_path(path, sizeof(path));
	assert_int_equal(fts_trace_start(path), 0);
	assert_int_equal(fts_trace_stop(), 0);
	assert_int_equal(trace_ring_records(path), 1024);   /* the refused ones changed nothing */
	unlink(path);
	assert_int_equal(fts_event_ring_size(128), 0);
	assert_int_equal(fts_trace_start(path), 0);
	assert_int_equal(pthread_create(&th, NULL, burst_1000, &type), 0);
	pthread_join(th, NULL);
	assert_int_equal(fts_trace_stop(), 0);
	assert_int_equal(trace_ring_records(path), 128);
	size_t n, at = 16;
	unsigned char *b = slurp(path, &n);
	uint64_t taken = 0;
	while ((at = find_block(b, n, at, FTS__BLK_EVENTS_COMPACT)) != 0) {
		uint32_t len = le32(b + at + 8);
		taken += le32(b + at + FTS__BLOCK_HEAD_BYTES + 4);
		at += FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
	}
	free(b);
	unlink(path);
	struct fts_trace_stats st = { .size = sizeof(st) };
	assert_int_equal(fts_trace_stats(&st), 0);
	assert_int_equal(st.events + st.dropped, 1000);
	assert_int_equal(taken, st.events);
	setenv("FASTSTAMP_EVENT_RING", "256", 1);
	assert_int_equal(fts_event_ring_size(4096), 0);
	assert_int_equal(fts_trace_start(path), 0);
	assert_int_equal(fts_trace_stop(), 0);
	unsetenv("FASTSTAMP_EVENT_RING");
	assert_int_equal(trace_ring_records(path), 256);
	unlink(path);
	/* a value that is no such size is refused, not passed over: no file; empty is unset */
	static const char *const badenv[] = { "100", "abc", "0", "32", "33554432", "256x", "-256", " 256" };
	for (size_t i = 0; i < sizeof(badenv) / sizeof(badenv[0]); i++) {
		setenv("FASTSTAMP_EVENT_RING", badenv[i], 1);
		errno = 0;
		if (fts_trace_start(path) != -1 || errno != EINVAL || access(path, F_OK) == 0)
			fail_msg("FASTSTAMP_EVENT_RING=\"%s\": not refused with EINVAL", badenv[i]);
	}
	setenv("FASTSTAMP_EVENT_RING", "", 1);
	assert_int_equal(fts_event_ring_size(128), 0);
	assert_int_equal(fts_trace_start(path), 0);
	assert_int_equal(fts_trace_stop(), 0);
	unsetenv("FASTSTAMP_EVENT_RING");
	assert_int_equal(trace_ring_records(path), 128);
	unlink(path);
}

/* A burst of 30,000 events in a ring of 65,536, after the drain backed off: blocks of
 * at most 4096 records, every event read back in order. */
static void *burst(void *p)
{
	int *type = p;
	for (uint64_t i = 0; i < 30000; i++)
		assert_int_equal(fts_event(*type, i), 0);
	assert_int_equal(fts_trace_drain(), 0);
	return NULL;
}

static void long_batch_split_in_blocks(void **state)
{
	char path[64];
	size_t n, at = 16;
	int type = fts_event_define("burst", "i"), blocks = 0, full = 0;
	pthread_t th;
	(void)state;
	setenv("FASTSTAMP_EVENT_RING", "65536", 1);
	fresh_path(path, sizeof(path));
	assert_int_equal(fts_trace_start(path), 0);
	usleep(150000);   /* the drain backs off to sleeps of 64 ms */
	assert_int_equal(pthread_create(&th, NULL, burst, &type), 0);
	pthread_join(th, NULL);
	assert_int_equal(fts_trace_stop(), 0);
	unsetenv("FASTSTAMP_EVENT_RING");
	unsigned char *b = slurp(path, &n);
	while ((at = find_block(b, n, at, FTS__BLK_EVENTS_COMPACT)) != 0) {
		uint32_t count = le32(b + at + FTS__BLOCK_HEAD_BYTES + 4), len = le32(b + at + 8);
		assert_true(count <= 4096);
		blocks++;
		full += count == 4096;
		at += FTS__BLOCK_HEAD_BYTES + len + (8 - len % 8) % 8;
	}
	print_message("%d blocks, %d of 4096 records\n", blocks, full);
	uint64_t *got = malloc(30000 * sizeof(*got));
	assert_non_null(got);
	assert_int_equal(read_all(path, got, 30000), 30000);
	for (int i = 0; i < 30000; i++)
		assert_int_equal(got[i], (uint64_t)i);
	free(got);
	free(b);
	unlink(path);
}

/* One trace of 3 or 4 bursts of n events each: before each, 130 ms of idle (the drain
 * backs off to sleeps of 64 ms), but before the first of 4 (it follows the start); an
 * event every pace_ns, or at full speed (0). refused[b]: the events burst b's ring
 * refused, every one of them counted as dropped. */
static void bursts(int type, uint64_t n, int nb, int64_t pace_ns, uint64_t *refused,
		   struct fts_trace_stats *st)
{
	char path[64];
	uint64_t all = 0;

	fresh_path(path, sizeof(path));
	assert_int_equal(fts_trace_start(path), 0);
	for (int b = 0; b < nb; b++) {
		if (b || nb == 3)
			usleep(130000);
		int64_t t = now_ns(CLOCK_MONOTONIC);
		refused[b] = 0;
		for (uint64_t i = 0; i < n; i++) {
			refused[b] += fts_event(type, i) != 0;
			for (t += pace_ns; pace_ns && now_ns(CLOCK_MONOTONIC) < t;)
				;
		}
		all += refused[b];
	}
	assert_int_equal(fts_trace_stop(), 0);
	assert_int_equal(fts_trace_stats(st), 0);
	print_message("%" PRIu64 " events, %" PRIu64 " dropped", st->events, st->dropped);
	assert_int_equal(st->events + st->dropped, (uint64_t)nb * n);
	assert_int_equal(all, st->dropped);
	unlink(path);
}

/* A burst into a ring after the drain backed off (130 ms of idle: its sleeps doubled
 * to 64 ms, the next one ending some 60 ms into the burst): the writer wakes it when a
 * quarter of the ring waits, so that none of the burst is dropped while three quarters
 * of the ring remain (25 ms at the burst's rate of an event every 8 us, a pace a
 * sanitizer's drain keeps); a drain left asleep finds the ring of 4096 full 33 ms into
 * it. Three bursts of a ring and a quarter, each after the idle, in a trace; a second
 * trace when the first dropped some (a drain's CPU taken by others for 25 ms, on a
 * loaded machine: a drain never woken drops in every trace). */
static void burst_after_idle_not_dropped(void **state)
{
	enum { RING = 4096, BURST = RING + RING / 4 };
	int type = fts_event_define("after_idle", "i");
	struct fts_trace_stats st = { .size = sizeof(st) };
	uint64_t refused[3];
	(void)state;
	unsetenv("FASTSTAMP_EVENT_RING");
	assert_int_equal(fts_event_ring_size(RING), 0);
	bursts(type, BURST, 3, 8000, refused, &st);
	print_message("\n");
	if (st.dropped != 0) {
		bursts(type, BURST, 3, 8000, refused, &st);
		print_message("\n");
		assert_int_equal(st.dropped, 0);
	}
}

/* Bursts at full speed into a default ring, one as the trace starts and three after the
 * drain backed off, a thread of the writer's own on another CPU: the drain must run
 * beside the writer, not behind it. The scheduler puts a woken thread (and a new one)
 * on its waker's CPU, and a drain queued there waits out the burst (0.5 ms here: less
 * than a scheduler tick, so no balancing moves it): every event past the ring is
 * dropped. In each burst of two rings the drain must have taken records while the
 * writer wrote (fewer dropped than the ring's overflow), in one of up to three traces
 * (a drain's CPU taken by another program for the whole burst). */
static int fast_bursts(int type, uint64_t n, uint64_t ring)
{
	struct fts_trace_stats st = { .size = sizeof(st) };
	uint64_t refused[4], most = 0;
	int drained = 0;

	bursts(type, n, 4, 0, refused, &st);
	for (int b = 0; b < 4; b++) {
		drained += refused[b] < n - ring;
		most = refused[b] > most ? refused[b] : most;
	}
	print_message(" (at most %" PRIu64 " of a burst's %" PRIu64
		      "), the drain beside the writer in %d of 4\n", most, n, drained);
	return drained == 4;
}

/* fts_trace_start returns with its drain asleep, ready to be woken beside a writer
 * (three starts). */
static void trace_start_waits_for_drain(void **state)
{
	char path[64];
	(void)state;
	for (int i = 0; i < 3; i++) {
		fresh_path(path, sizeof(path));
		assert_int_equal(fts_trace_start(path), 0);
		assert_true(fts__event_drain_ready());
		assert_int_equal(fts_trace_stop(), 0);
		assert_false(fts__event_drain_ready());
		unlink(path);
	}
}

static void fast_bursts_drained(void **state)
{
	enum { RING = 16384 };
	int type = fts_event_define("fast_bursts", "i"), ok = 0;
	cpu_set_t cpus;
	(void)state;
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) < 2)
		FTS_SKIP("one CPU: the drain cannot run beside the writer");
	unsetenv("FASTSTAMP_EVENT_RING");
	assert_int_equal(fts_event_ring_size(RING), 0);
	for (int t = 0; t < 3 && !ok; t++)
		ok = fast_bursts(type, 2 * RING, RING);
	assert_true(ok);
}

/* Traces written by the library in its earlier layouts still read, to the same
 * events: v1 of 48-byte records, the thread in every record (EVENTS blocks); v2 of
 * records as long as their fields (EVENTS_PACKED). Each made by a program of two
 * threads: tick and full (four fields) x6, relaxed; work spans and rx x5 in a thread;
 * one rx last. */
static void reads_layout(const char *path)
{
	struct fts_trace *r = fts_trace_open(path, CLOCK_REALTIME);
	struct fts_trace_event ev;
	struct fts_trace_stats st = { .size = sizeof(st) };
	int n = 0, full = 0, rx = 0, rc;
	uint32_t main_tid = 0;
	assert_non_null(r);
	while ((rc = fts_trace_next(r, &ev)) == 1) {
		assert_int_equal(ev.error, 0);
		if (n++ == 0)
			main_tid = ev.tid;
		if (!strcmp(ev.name, "full")) {
			assert_int_equal(ev.nfields, 4);
			assert_int_equal(ev.fields[0], (uint64_t)full);
			assert_int_equal(ev.fields[3], UINT64_MAX - (uint64_t)full);
			assert_int_equal(ev.tid, main_tid);
			full++;
		} else if (!strcmp(ev.name, "rx")) {
			assert_int_equal(ev.nfields, 2);
			assert_string_equal(ev.field_names[1], "queue");
			assert_int_equal(ev.fields[1], rx < 5 ? UINT64_C(0xfedcba9876543210) : 3);
			assert_true(rx < 5 ? ev.tid != main_tid : ev.tid == main_tid);
			rx++;
		} else if (!strcmp(ev.name, "work")) {
			assert_int_equal(ev.kind, ev.nfields ? FTS_EVENT_BEGIN : FTS_EVENT_END);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(fts_trace_summary(r, &st), 0);
	fts_trace_close(r);
	assert_int_equal(n, 28);
	assert_int_equal(full, 6);
	assert_int_equal(rx, 6);
	assert_int_equal(st.events, 28);
	assert_true(st.stopped);
}

static void reads_unpacked_layout(void **state)
{
	(void)state;
	reads_layout(FTS_TEST_DATA "/trace-v1.fts");
}

static void reads_packed_layout(void **state)
{
	(void)state;
	reads_layout(FTS_TEST_DATA "/trace-v2.fts");
}

/* ---- a full disk ------------------------------------------------------------------------ */

/* A file size limit (RLIMIT_FSIZE: write fails with EFBIG past it) stands for a full
 * disk: the writers go on, the drain counts what it lost, the file keeps its whole
 * blocks; when the disk has room again, later rounds are written after them. In a
 * child, whose limit it is. */
static void full_disk_loses_counted(void **state)
{
	char path[64];
	(void)state;
	fresh_path(path, sizeof(path));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
		struct fts_trace_stats st = { .size = sizeof(st) };
		uint64_t ok = 0, full = 0, written = 0;
		int t = fts_event_define("disk", "i");
		struct stat sb;
		signal(SIGXFSZ, SIG_IGN);
		/* the limit 16 KiB past what the start wrote (the process clock's samples so
		 * far: more the longer the process ran before), and 4 bytes more: blocks
		 * are padded to 8, so the failing write always ends inside one, leaving a
		 * part of it unless the round is cut back */
		if (t < 0 || fts_trace_start(path) < 0 || stat(path, &sb) < 0)
			_exit(2);
		rl.rlim_cur = (rlim_t)sb.st_size + 16 * 1024 + 4;
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(2);
		for (uint64_t i = 0; i < 20000; i++) {
			if (fts_event(t, i) == 0)
				ok++;
			else if (errno == ENOBUFS)
				full++;
			else
				_exit(3);   /* the writer goes on whatever the disk does */
			if (i % 500 == 499)
				fts_trace_drain();
			/* room again: later rounds write after the last whole block */
			if (i == 15000) {
				if (fts_trace_stats(&st) < 0 || st.lost == 0)
					_exit(8);
				written = st.events;
				rl.rlim_cur = RLIM_INFINITY;
				setrlimit(RLIMIT_FSIZE, &rl);
			}
		}
		errno = 0;
		if (fts_trace_stop() != -1 || errno != EFBIG)
			_exit(4);
		if (fts_trace_stats(&st) < 0 || st.lost == 0 || st.write_error != EFBIG ||
		    st.events + st.lost != ok || st.dropped != full || st.events <= written)
			_exit(5);
		/* the file: whole blocks, every event the stats say was written */
		uint64_t n = 0;
		struct fts_trace *r = fts_trace_open(path, CLOCK_REALTIME);
		struct fts_trace_event ev;
		int rc;
		if (!r)
			_exit(6);
		while ((rc = fts_trace_next(r, &ev)) == 1)
			n++;
		fts_trace_close(r);
		_exit(rc == 0 && n == st.events ? 0 : 7);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	unlink(path);
}

/* ---- fork and kill -------------------------------------------------------------------- */

static void fork_child_never_writes_parent_trace(void **state)
{
	char path[64], cpath[64];
	(void)state;
	int t = fts_event_define("forked", "who");
	fresh_path(path, sizeof(path));
	fresh_path(cpath, sizeof(cpath));
	assert_int_equal(fts_trace_start(path), 0);
	assert_int_equal(fts_event(t, 1), 0);
	/* The drain thread started by fts_trace_start under a sanitizer allocates its own
	 * state as it starts, outside any lock the library's fork handlers take: a fork at
	 * that moment leaves the child a sanitizer allocator locked forever (GCC 12's ASan;
	 * glibc's malloc has its own fork handlers). The thread is given time to start. */
	usleep(50000);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int bad = 0;
		for (int i = 0; i < 1000; i++)
			bad |= fts_event(t, 2) != 0;
		bad |= fts_trace_drain() != -1 || errno != ENOENT;
		bad |= fts_trace_stop() != -1 || errno != ENOENT;
		/* a trace of its own */
		bad |= fts_trace_start(cpath) != 0;
		for (int i = 0; i < 10; i++)
			bad |= fts_event(t, 3) != 0;
		bad |= fts_trace_stop() != 0;
		_exit(bad);
	}
	for (int i = 0; i < 100; i++)
		assert_int_equal(fts_event(t, 1), 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(fts_trace_stop(), 0);
	struct fts_trace *r = fts_trace_open(path, CLOCK_REALTIME);
	struct fts_trace_event ev;
	int n = 0;
	assert_non_null(r);
	while (fts_trace_next(r, &ev) == 1) {
		assert_int_equal(ev.fields[0], 1);
		n++;
	}
	assert_int_equal(n, 101);
	assert_int_equal(fts_trace_pid(r), getpid());
	fts_trace_close(r);
	assert_non_null(r = fts_trace_open(cpath, CLOCK_REALTIME));
	n = 0;
	while (fts_trace_next(r, &ev) == 1) {
		assert_int_equal(ev.fields[0], 3);
		n++;
	}
	assert_int_equal(n, 10);
	assert_int_equal(fts_trace_pid(r), pid);
	fts_trace_close(r);
	unlink(path);
	unlink(cpath);
}

/* A fork leaves the writer's ring its own: no page of it becomes copy-on-write, so the
 * writer takes no page fault after a fork (the child gets none of it). */
static void ring_not_copied_on_fork(void **state)
{
	char path[64];
	struct rusage a, b;
	(void)state;
	if (FTS_TEST_SANITIZED) {
		/* the sanitizers' shadow of the ring is copy-on-write after a fork */
		FTS_SKIP("page faults are the sanitizer's own here (the plain build counts them)");
		return;
	}
	int t = fts_event_define("cow", "i");
	fresh_path(path, sizeof(path));
	assert_int_equal(fts_trace_start(path), 0);
	for (int lap = 0; lap < 2; lap++) {   /* the ring and the drain's buffers made */
		for (int i = 0; i < 10000; i++)
			assert_int_equal(fts_event(t, (uint64_t)i), 0);
		assert_int_equal(fts_trace_drain(), 0);
	}
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	getrusage(RUSAGE_THREAD, &a);
	for (int i = 0; i < 10000; i++)   /* 480 KB of records: 117 pages */
		assert_int_equal(fts_event(t, (uint64_t)i), 0);
	getrusage(RUSAGE_THREAD, &b);
	assert_int_equal(fts_trace_stop(), 0);
	print_message("%ld page faults writing 10000 events after a fork\n", b.ru_minflt - a.ru_minflt);
	assert_true(b.ru_minflt - a.ru_minflt < 20);
	unlink(path);
}

static void kill9_keeps_drained(void **state)
{
	char path[64];
	(void)state;
	volatile uint64_t *drained = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(drained != MAP_FAILED);
	*drained = 0;
	fresh_path(path, sizeof(path));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int t = fts_event_define("seq", "i");
		if (t < 0 || fts_trace_start(path) < 0)
			_exit(2);
		for (uint64_t i = 0;; i++) {
			while (fts_event(t, i) != 0)
				;   /* a full ring: the drain catches up */
			if (i % 2000 == 1999)
				usleep(10000);   /* a writer that rests: some 20 MB in 2 s */
			if (i % 1000 == 999 && fts_trace_drain() == 0)
				__atomic_store_n(drained, i + 1, __ATOMIC_RELEASE);
		}
	}
	/* 2 s in (the file holds the sampler's samples of them too), and after 200,000
	 * records the writer saw drained */
	int64_t until = now_ns(CLOCK_MONOTONIC) + 2000000000;
	while (__atomic_load_n(drained, __ATOMIC_ACQUIRE) < 200000 || now_ns(CLOCK_MONOTONIC) < until)
		usleep(1000);
	kill(pid, SIGKILL);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	uint64_t want = *drained, n = 0;
	struct fts_trace *r = fts_trace_open(path, CLOCK_REALTIME);   /* every backend's */
	struct fts_trace_event ev;
	int rc;
	assert_non_null(r);
	while ((rc = fts_trace_next(r, &ev)) == 1) {
		assert_int_equal(ev.fields[0], n);   /* one thread: in order, none missing */
		assert_int_equal(ev.error, 0);
		n++;
	}
	assert_int_equal(rc, 0);
	assert_true(n >= want);
	print_message("killed after %" PRIu64 " drained; the file holds %" PRIu64 "\n", want, n);
	fts_trace_close(r);
	munmap((void *)drained, 4096);
	unlink(path);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(define_refuses_bad_input),
		cmocka_unit_test(events_refuse_bad_input),
		cmocka_unit_test(start_refuses_existing_path),
		cmocka_unit_test(fidelity_every_clock),
		cmocka_unit_test(produced_is_written_plus_dropped),
		cmocka_unit_test(cut_anywhere_keeps_whole_blocks),
		cmocka_unit_test(damaged_byte_costs_its_block),
		cmocka_unit_test(records_as_differences),
		cmocka_unit_test(reads_unpacked_layout),
		cmocka_unit_test(reads_packed_layout),
		cmocka_unit_test(ring_size_set_by_call),
		cmocka_unit_test(long_batch_split_in_blocks),
		cmocka_unit_test(burst_after_idle_not_dropped),
		cmocka_unit_test(fast_bursts_drained),
		cmocka_unit_test(trace_start_waits_for_drain),
		cmocka_unit_test(full_disk_loses_counted),
		cmocka_unit_test(fork_child_never_writes_parent_trace),
		cmocka_unit_test(ring_not_copied_on_fork),
		cmocka_unit_test(kill9_keeps_drained),
	};
	return fts_test_run(tests, argc, argv);
}
