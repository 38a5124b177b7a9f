/* record.c - the record file of fts_clock_record: every sample and event of the process
 * clock, buffered and written as blocks of a history file (histfile.h), and the file
 * itself (found, locked, checked, cut back or removed when a start fails). Owns the
 * recorder's state; the process clock (clock.c, sampler.c) decides when to record and
 * calls in with its lock held. Takes no lock of its own, reads no clock but
 * CLOCK_MONOTONIC. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "histfile.h"
#include "internal.h"
#include "now.h"
#include "record.h"
#include "le.h"

#define RECORD_FLUSH_NS 1000000000   /* write what is buffered at least once a second */

static struct {
	int fd;                 /* -1: not recording */
	int err;                /* the write error that stopped it, 0 */
	unsigned char *buf;
	size_t n, cap;
	int64_t flushed_at;     /* CLOCK_MONOTONIC */
} rec = { .fd = -1 };

/* The tap (record.h): entries of type, length, payload; samples go on the last entry
 * while it is a CLKSAMPLES one. */
static struct {
	int on;
	unsigned char *buf;
	size_t n, cap;
	size_t last;            /* the offset of the last entry, or SIZE_MAX */
} tap = { .last = SIZE_MAX };

static unsigned char *tap_room(size_t m)
{
	if (tap.cap - tap.n < m) {
		size_t cap = tap.cap ? tap.cap * 2 : 64 * FTS__CLKSAMPLE_BYTES;
		unsigned char *b;
		while (cap - tap.n < m)
			cap *= 2;
		if (!(b = realloc(tap.buf, cap)))
			return NULL;
		tap.buf = b;
		tap.cap = cap;
	}
	return tap.buf + tap.n;
}

/* A new entry of type, with room for len bytes of payload: its payload, or NULL (no
 * memory: the trace's history then lacks that sample or event). */
static unsigned char *tap_entry(uint32_t type, size_t len)
{
	unsigned char *p = tap_room(8 + len);

	if (!p)
		return NULL;
	fts__le_put32(p, type);
	fts__le_put32(p + 4, (uint32_t)len);
	tap.last = tap.n;
	tap.n += 8 + len;
	return p + 8;
}

static void tap_sample(const struct fts__psample *s, uint32_t steps)
{
	unsigned char *p;

	if (tap.last != SIZE_MAX && fts__le_get32(tap.buf + tap.last) == FTS__BLK_CLKSAMPLES) {
		if (!(p = tap_room(FTS__CLKSAMPLE_BYTES)))
			return;
		fts__le_put32(tap.buf + tap.last + 4, fts__le_get32(tap.buf + tap.last + 4) + FTS__CLKSAMPLE_BYTES);
		tap.n += FTS__CLKSAMPLE_BYTES;
	} else if (!(p = tap_entry(FTS__BLK_CLKSAMPLES, FTS__CLKSAMPLE_BYTES))) {
		return;
	}
	fts__histfile_put_clksample(p, s->k, steps);
}

void fts__record_tap(int on)
{
	free(tap.buf);
	tap.buf = NULL;
	tap.n = tap.cap = 0;
	tap.last = SIZE_MAX;
	tap.on = on;
}

int fts__record_tapping(void)
{
	return tap.on;
}

size_t fts__record_tap_take(unsigned char **buf)
{
	size_t n = tap.n;

	*buf = tap.buf;
	tap.buf = NULL;
	tap.n = tap.cap = 0;
	tap.last = SIZE_MAX;
	return n;
}

/* With lock held: a write error stops recording; fts_clock_record(NULL) reports it. */
static void record_stop(int err)
{
	if (rec.fd >= 0)
		close(rec.fd);
	rec.fd = -1;
	if (err && !rec.err)
		rec.err = err;
	free(rec.buf);
	rec.buf = NULL;
	rec.n = rec.cap = 0;
}

/* In a child after fork: the parent's record stays the parent's. The child writes
 * nothing to it (its blocks would interleave with the parent's) and may record a file
 * of its own. The parent's lock stays with the parent's open file. */
void fts__record_drop_inherited(void)
{
	if (rec.fd >= 0)
		close(rec.fd);
	rec.fd = -1;
	rec.err = 0;
	rec.n = 0;
	fts__record_tap(0);
}

void fts__record_flush(void)
{
	int rc;

	if (rec.fd < 0)
		return;
	fts__now(CLOCK_MONOTONIC, &rec.flushed_at);
	if (!rec.n)
		return;
	rc = fts__histfile_write_block(rec.fd, FTS__BLK_CLKSAMPLES, rec.buf, (uint32_t)rec.n);
	rec.n = 0;
	if (rc < 0)
		record_stop(-rc);
}

/* A sample of every clock, each in its bracket; steps: bit k, clock k's history was
 * told of a step before it (so a replay tells it the same). */
void fts__record_sample(const struct fts__psample *s, uint32_t steps)
{
	int64_t now;

	if (tap.on)
		tap_sample(s, steps);
	if (rec.fd < 0)
		return;
	if (rec.cap - rec.n < FTS__CLKSAMPLE_BYTES) {
		size_t cap = rec.cap ? rec.cap * 2 : 64 * FTS__CLKSAMPLE_BYTES;
		unsigned char *b = realloc(rec.buf, cap);
		if (!b) {
			record_stop(ENOMEM);
			return;
		}
		rec.buf = b;
		rec.cap = cap;
	}
	rec.n += fts__histfile_put_clksample(rec.buf + rec.n, s->k, steps);
	if (fts__now(CLOCK_MONOTONIC, &now) == 0 && now - rec.flushed_at >= RECORD_FLUSH_NS)
		fts__record_flush();
}

void fts__record_event(uint32_t type, const struct fts__psample *s, int64_t value,
		       const char *what)
{
	unsigned char b[FTS__EVENT_BYTES];
	struct fts__event e = { .type = type, .counter = s->b + (s->a - s->b) / 2,
				.realtime_ns = s->rt, .value_ns = value };
	int rc;

	snprintf(e.what, sizeof(e.what), "%s", what);
	if (tap.on) {
		unsigned char *p = tap_entry(FTS__BLK_EVENT, FTS__EVENT_BYTES);
		if (p)
			fts__histfile_put_event(p, &e);
	}
	if (rec.fd < 0)
		return;
	fts__record_flush();   /* the samples before it first */
	if (rec.fd >= 0 && (rc = fts__histfile_write_block(rec.fd, FTS__BLK_EVENT, b,
						   (uint32_t)fts__histfile_put_event(b, &e))) < 0)
		record_stop(-rc);
}


int fts__record_on(void)
{
	return rec.fd >= 0;
}

int fts__record_due(int64_t now)
{
	return rec.fd >= 0 && now - rec.flushed_at >= RECORD_FLUSH_NS;
}

int fts__record_stop(void)
{
	int err;

	fts__record_flush();
	err = rec.err;
	rec.err = 0;
	record_stop(0);
	return err;
}

/* ---- the file ----------------------------------------------------------------------- */

/* Does the file at fd hold a record of this boot and counter? *keep: its bytes up to
 * its last whole block (a record cut short, by a crash or a full disk, goes on from
 * there: a block appended after a partial one would be lost with it). */
static int same_record(int fd, const struct fts__head *h, off_t *keep)
{
	struct fts__fileinfo fi;
	struct fts_calib *c;
	int err;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return 0;
	c = fts__histfile_load(fd, &fi, &err);
	fts_calib_free(c);
	*keep = (off_t)fi.whole;
	/* a record stopped after its header or a sample (ENODATA) is one to go on with;
	 * so is the start of a header, cut short (nothing of value: written again) */
	if (!c && err != ENODATA)
		return 0;
	if (!fi.has_head)
		return fi.cut && (*keep = 0, 1);
	/* a record of an older format, or of one clock (SAMPLES), is left alone: its blocks
	 * are not ours */
	return fi.version == FTS__FILE_VERSION && !fi.saved && !fi.plain && fi.head.kind == h->kind &&
	       !memcmp(fi.head.boot_id, h->boot_id, 16);
}

/* Open the record at path: an existing file, or a new one (*created). A symbolic link
 * is not followed, dangling or not (ELOOP): one another user left in a shared directory
 * would lead the recorder into a file of its own user's. */
static int open_path(const char *path, int *created)
{
	int fd;

	*created = 0;
	for (int tries = 0; tries < 8; tries++) {
		if ((fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) >= 0 || errno != ENOENT)
			return fd;
		if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) >= 0) {
			*created = 1;
			return fd;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;   /* created and removed by others, over and over */
}

/* Undo a record start that failed after it held the file: a file it created is
 * removed (if the path still names it), one it found is cut back to the keep bytes it
 * went on from (only blocks were appended), and not touched if it has that length. */
static void undo_file(const char *path, int fd, const struct stat *was, int created,
		      off_t keep)
{
	struct stat now;

	if (created) {
		if (stat(path, &now) == 0 && now.st_dev == was->st_dev && now.st_ino == was->st_ino)
			unlink(path);
	} else if (fd >= 0 && fstat(fd, &now) == 0 && now.st_size != keep &&
		   ftruncate(fd, keep) < 0) {
		/* nothing more to do: the error that brought us here is the one reported */
	}
}

int fts__record_open(const char *path, const struct fts__head *h, struct fts__record_file *f)
{
	int rc = 0;

	*f = (struct fts__record_file){ .path = path, .fd = -1 };
	if ((f->fd = open_path(path, &f->created)) < 0)
		return errno;
	/* One recorder a file, whichever process: the lock lives as long as the open file
	 * (the recorder's life), and is dropped by the kernel if the process dies. */
	if (flock(f->fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? EBUSY : errno;
		close(f->fd);   /* a file created here and locked meanwhile is the other's now */
		f->fd = -1;
		return rc;
	}
	if (fstat(f->fd, &f->st) < 0) {
		rc = errno;
	} else if (!S_ISREG(f->st.st_mode)) {
		rc = EEXIST;
	} else if (f->st.st_size > 0 && !same_record(f->fd, h, &f->keep)) {
		rc = EEXIST;
		f->keep = f->st.st_size;   /* not ours: not a byte of it changes */
	} else if (f->keep < f->st.st_size && ftruncate(f->fd, f->keep) < 0) {
		rc = errno;
	} else if (f->keep > 0 ? lseek(f->fd, 0, SEEK_END) < 0
			       : lseek(f->fd, 0, SEEK_SET) < 0 ||
				 (rc = -fts__histfile_write_header(f->fd, h)) != 0) {
		rc = rc ? rc : errno;
	}
	if (rc)
		fts__record_undo(f);
	return rc;
}

int fts__record_begin(struct fts__record_file *f)
{
	if (rec.fd >= 0)
		return EBUSY;   /* another thread started recording meanwhile */
	rec.fd = f->fd;
	rec.err = 0;
	fts__now(CLOCK_MONOTONIC, &rec.flushed_at);
	return 0;
}

int fts__record_started(void)
{
	fts__record_flush();
	return rec.fd >= 0 ? 0 : rec.err ? rec.err : EIO;   /* a failed write closed it */
}

void fts__record_abandon(struct fts__record_file *f)
{
	/* nothing of a failed start stays: neither the recorder nor its file (a record
	 * found and written to is cut back while fd is open) */
	if (rec.fd < 0)
		f->fd = -1;   /* closed by the failed write */
	rec.fd = -1;
	rec.err = 0;
	free(rec.buf);
	rec.buf = NULL;
	rec.n = rec.cap = 0;
}

void fts__record_undo(struct fts__record_file *f)
{
	undo_file(f->path, f->fd, &f->st, f->created, f->keep);
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
