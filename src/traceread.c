/* traceread.c - a trace file read back (fts_trace_open): its history loaded as a
 * record's (histfile.c), then its blocks read one at a time, each checked against its
 * CRC, and its records handed out converted. A damaged block is passed over (reading
 * goes on at the next header that holds) and costs itself alone; one that may have
 * held the history costs the times, not the records. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "event.h"
#include "crc32.h"
#include "histfile.h"
#include "internal.h"
#include "le.h"

#define MAX_EVENTS_BLOCK (FTS__EVENTS_HEAD_BYTES + (size_t)FTS__EVREC_BYTES * (1u << 24))

struct fts_trace {
	int fd;
	int k;                          /* the clock, enum fts__clk */
	struct fts_calib *hist;         /* NULL: no history to convert with (hist_err) */
	int hist_err;
	uint32_t seed;                  /* the first block header's CRC seed: the file header's */
	off_t off;                      /* the next block's offset */
	struct fts__evtype *types[FTS_EVENT_TYPES_MAX];
	unsigned char head[FTS__BLOCK_HEAD_BYTES];   /* the header of the block last read */
	unsigned char *blk;             /* its payload */
	size_t cap;
	struct fts__evrec *rec;         /* an events block's records, decoded: handed out */
	size_t reccap, at, count;       /* from at, of count */
	int pid, ended, failed;
	int history_lost;               /* a block passed over may have held the history */
	struct fts_trace_stats st;
};

/* A block header that holds: its magic, its zero word and its CRC (from seed). */
static int head_holds(const unsigned char *h, uint32_t seed)
{
	return fts__le_get32(h) == FTS__BLOCK_MAGIC && !fts__le_get32(h + 16) &&
	       fts__crc32(seed, h, 20) == fts__le_get32(h + 20);
}

/* The offset of the first block header that holds at or after from (blocks start
 * 8-aligned), or the end of the file: where reading goes on after a damaged header.
 * Negative errno. */
static off_t resync(int fd, off_t from)
{
	enum { CHUNK = 16384 };
	unsigned char b[CHUNK + FTS__BLOCK_HEAD_BYTES];

	for (;; from += CHUNK) {
		ssize_t got = fts__histfile_read_at(fd, b, sizeof(b), from);
		if (got < 0)
			return got;
		for (size_t i = 0; i + FTS__BLOCK_HEAD_BYTES <= (size_t)got; i += 8)
			if (head_holds(b + i, 0))
				return from + (off_t)i;
		if (got < (ssize_t)sizeof(b))
			return from + got;
	}
}

/* The block at t->off passed over as damaged: reading goes on at next. A block whose
 * header held (known: its type is the header's) costs its own content; one whose
 * header did not may have been any block, the history's too. -EBADMSG. */
static int damaged(struct fts_trace *t, off_t next, int known, uint32_t type)
{
	if (!known || !(type & FTS__BLK_OPTIONAL))
		t->history_lost = 1;
	t->st.damaged++;
	t->st.damage_at = (uint64_t)t->off;
	t->st.damage_end = (uint64_t)next;
	t->off = next;
	return -EBADMSG;
}

/* The block at t->off: 1 with its header in t->head and its payload in t->blk (len
 * bytes), t->off past it; 0 at the end of the file or a cut (a block the file ends
 * inside, its header whole or not); -EBADMSG for a damaged block, passed over
 * (damaged()); other negative errno. */
static int next_block(struct fts_trace *t, uint32_t *type, size_t *len)
{
	static const unsigned char zero[8];
	unsigned char *h = t->head;
	ssize_t got = fts__histfile_read_at(t->fd, h, FTS__BLOCK_HEAD_BYTES, t->off);
	off_t next;
	size_t n, pad;

	if (got < 0)
		return (int)got;
	if (got < FTS__BLOCK_HEAD_BYTES)
		return 0;
	if (!head_holds(h, t->off == 16 ? t->seed : 0)) {
		if ((next = resync(t->fd, t->off + 8)) < 0)
			return (int)next;
		return damaged(t, next, 0, 0);
	}
	*type = fts__le_get32(h + 4);
	n = fts__le_get32(h + 8);
	pad = (8 - n % 8) % 8;
	next = t->off + FTS__BLOCK_HEAD_BYTES + (off_t)(n + pad);
	if (n + pad > MAX_EVENTS_BLOCK)
		return damaged(t, next, 1, *type);   /* no writer makes it */
	if (n + pad > t->cap) {
		unsigned char *b = realloc(t->blk, n + pad);
		if (!b)
			return -ENOMEM;
		t->blk = b;
		t->cap = n + pad;
	}
	if ((got = fts__histfile_read_at(t->fd, t->blk, n + pad, t->off + FTS__BLOCK_HEAD_BYTES)) < 0)
		return (int)got;
	if ((size_t)got < n + pad)
		return 0;   /* cut inside the block: the whole ones before are the trace */
	if (fts__crc32(fts__crc32(0, t->blk, n), zero, pad) != fts__le_get32(h + 12) ||
	    memcmp(t->blk + n, zero, pad))
		return damaged(t, next, 1, *type);
	t->off = next;
	t->st.bytes = (uint64_t)next;
	*len = n;
	return 1;
}

/* After a load refused for damage: the file read through, its damaged blocks passed
 * over, and the blocks a history is made of (those not optional) copied after the
 * file's header f into a file in memory, loaded as the history. 0 with c[] (NULL: no
 * history, hist_err says why), or negative errno: nothing was damaged (the file is
 * refused as it was). */
static int load_around_damage(struct fts_trace *t, const unsigned char f[16],
			      struct fts_calib *c[FTS__NCLK])
{
	uint32_t type = 0;
	size_t len = 0;
	int rc, mfd = -1;

	for (int i = 0; i < FTS__NCLK; i++)
		c[i] = NULL;
	t->off = 16;
	while ((rc = next_block(t, &type, &len)) != 0 && !t->history_lost) {
		if (rc == -EBADMSG)
			continue;
		if (rc < 0)
			break;
		if (type & FTS__BLK_OPTIONAL)
			continue;
		if (mfd < 0 && ((mfd = memfd_create("faststamp-trace", MFD_CLOEXEC)) < 0 ||
				write(mfd, f, 16) != 16)) {
			rc = -errno;
			break;
		}
		if (write(mfd, t->head, FTS__BLOCK_HEAD_BYTES) != FTS__BLOCK_HEAD_BYTES ||
		    write(mfd, t->blk, len + (8 - len % 8) % 8) != (ssize_t)(len + (8 - len % 8) % 8)) {
			rc = -(errno ? errno : EIO);
			break;
		}
	}
	if (rc == 0 && !t->st.damaged)
		rc = -EBADMSG;   /* refused for what it holds, not for damage */
	else if (rc == 0 && !t->history_lost)
		rc = mfd < 0 ? -EBADMSG : lseek(mfd, 0, SEEK_SET) < 0 ? -errno
			: fts__histfile_load_clocks(mfd, 1u << t->k, c, NULL);
	else if (rc == 0)
		rc = -EBADMSG;
	if (mfd >= 0)
		close(mfd);
	if (rc < 0 && rc != -ENOMEM && rc != -EIO && t->st.damaged) {
		t->hist_err = -rc == ENODATA ? ENODATA : EBADMSG;
		rc = 0;   /* the events are read; their times refused */
	}
	t->off = 16;
	t->st.damaged = t->st.damage_at = t->st.damage_end = 0;
	t->history_lost = 0;
	return rc;
}

struct fts_trace *fts_trace_open(const char *path, clockid_t clock)
{
	struct fts_calib *c[FTS__NCLK];
	struct fts__fileinfo fi = { 0 };
	struct fts_trace *t;
	struct stat sb;
	unsigned char f[16] = { 0 };
	int k = fts__hw_clk_of(clock), rc;

	if (!path || k < 0)
		return fts__fail_null(EINVAL);
	if (!(t = calloc(1, sizeof(*t))))
		return fts__fail_null(ENOMEM);
	t->k = k;
	t->st.size = sizeof(t->st);
	if ((t->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = errno;
		free(t);
		return fts__fail_null(rc);
	}
	rc = fstat(t->fd, &sb) < 0 ? -errno : S_ISDIR(sb.st_mode) ? -EISDIR : 0;
	/* the file's header, whole: without it nothing in the file can be trusted */
	if (rc == 0 && fts__histfile_read_some(t->fd, f, 16) == 16 &&
	    (memcmp(f, FTS__FILE_MAGIC, 8) || fts__le_get32(f + 8) != FTS__FILE_VERSION))
		rc = -EBADMSG;
	t->seed = fts__crc32(0, f, 16);
	/* the history: every block checked, a cut file read up to its cut */
	if (rc == 0 && lseek(t->fd, 0, SEEK_SET) < 0)
		rc = -errno;
	if (rc == 0)
		rc = fts__histfile_load_clocks(t->fd, 1u << k, c, &fi);
	if (rc == -EBADMSG && fi.version == FTS__FILE_VERSION)
		rc = load_around_damage(t, f, c);
	else if (rc == -ENODATA && fi.has_head)
		rc = 0, t->hist_err = ENODATA;   /* too few samples: events, not converted */
	if (rc == 0 && !t->hist_err && !(t->hist = c[k])) {
		rc = -EBADMSG;   /* a file of CLOCK_REALTIME alone, asked for another */
		for (int i = 0; i < FTS__NCLK; i++)
			fts_calib_free(c[i]);
	}
	for (int i = 0; rc == 0 && i < FTS__NCLK; i++)
		if (i != k)
			fts_calib_free(c[i]);
	if (rc) {
		fts_trace_close(t);
		return fts__fail_null(-rc);
	}
	t->off = 16;
	t->st.bytes = 16;
	return t;
}

/* A block read: an events block's records are handed out from t->at; others are
 * taken in. 0 or negative errno. */
static int take_block(struct fts_trace *t, uint32_t type, size_t len)
{
	const unsigned char *p = t->blk;

	switch (type) {
	case FTS__BLK_TRACE:
		if (len < FTS__TRACE_BYTES)
			return -EBADMSG;
		t->pid = (int)fts__le_get32(p);
		break;
	case FTS__BLK_EVTYPE: {
		uint32_t id = fts__le_get32(p), nf = fts__le_get32(p + 4);
		struct fts__evtype e;
		char name[FTS_EVENT_NAME_MAX + 1] = { 0 }, fields[4 * (FTS_EVENT_FIELD_MAX + 1)] = { 0 };
		size_t o = 0;

		if (len < FTS__EVTYPE_BYTES || id >= FTS_EVENT_TYPES_MAX || nf > FTS_EVENT_MAX_FIELDS ||
		    t->types[id])
			return -EBADMSG;
		memcpy(name, p + 8, FTS_EVENT_NAME_MAX);
		for (uint32_t i = 0; i < nf; i++) {
			size_t l = strnlen((const char *)p + 72 + 32 * i, FTS_EVENT_FIELD_MAX);
			if (i)
				fields[o++] = ',';
			memcpy(fields + o, p + 72 + 32 * i, l);
			o += l;
		}
		/* checked as the writer checked them: a reader prints them as they are */
		if (fts__event_type_parse(name, fields, &e) || e.nfields != nf ||
		    !(t->types[id] = malloc(sizeof(e))))
			return -EBADMSG;
		*t->types[id] = e;
		break;
	}
	case FTS__BLK_EVENTS:
	case FTS__BLK_EVENTS_PACKED:
	case FTS__BLK_EVENTS_COMPACT: {
		long n = fts__events_decode(type, p, len, &t->rec, &t->reccap);
		if (n < 0)
			return (int)n;
		t->st.dropped += fts__le_get64(p + 8);
		t->at = 0;
		t->count = (size_t)n;
		break;
	}
	case FTS__BLK_TRACE_END:
		if (len < FTS__TRACE_END_BYTES)
			return -EBADMSG;
		t->st.stopped = 1;
		t->st.lost = fts__le_get64(p + 16);
		break;
	default:
		break;   /* the history's blocks: read already */
	}
	return 0;
}

static void convert(const struct fts_trace *t, struct fts_trace_event *ev)
{
	fast_timestamp_t s = ev->stamp;

	ev->error = 0;
	if (s & FTS_STAMP_CLOCK_TAG) {
		if (t->k == FTS__CLK_REALTIME) {
			ev->ns = (int64_t)(s << 1) >> 1;
			ev->err_ns = 0;
			return;
		}
		ev->error = ENOTSUP;
	} else if (!t->hist) {
		ev->error = t->hist_err;
	} else if (fts_calib_convert(t->hist, s, &ev->ns, &ev->err_ns) < 0) {
		ev->error = errno;
	}
	if (ev->error) {
		ev->ns = 0;
		ev->err_ns = -1;
	}
}

/* The stand-in for type id, whose EVTYPE block was lost: "#id", fields f0-f3. NULL:
 * no memory. */
static const struct fts__evtype *unnamed(struct fts_trace *t, uint32_t id)
{
	struct fts__evtype *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	snprintf(e->name, sizeof(e->name), "#%u", (unsigned)id);
	for (unsigned k = 0; k < FTS_EVENT_MAX_FIELDS; k++)
		snprintf(e->fields[k], sizeof(e->fields[k]), "f%u", k);
	e->nfields = FTS_EVENT_MAX_FIELDS;
	return t->types[id] = e;
}

int fts_trace_next(struct fts_trace *t, struct fts_trace_event *ev)
{
	if (!t || !ev)
		return fts__fail(EINVAL);
	while (t->at >= t->count) {
		uint32_t type = 0;
		size_t len = 0;
		off_t at;
		int rc;

		if (t->failed)
			return fts__fail(t->failed);
		if (t->ended)
			return 0;
		t->at = t->count = 0;
		at = t->off;
		if ((rc = next_block(t, &type, &len)) == 0) {
			t->ended = 1;
			return 0;
		}
		/* a block that does not hold costs itself alone: said once, then passed */
		if (rc == -EBADMSG)
			return fts__fail(EBADMSG);
		if (rc > 0 && (rc = take_block(t, type, len)) == -EBADMSG) {
			t->off = at;   /* whole but not a block a writer makes: passed over too */
			t->at = t->count = 0;
			return fts__fail(-damaged(t, t->off + FTS__BLOCK_HEAD_BYTES +
						      (off_t)(len + (8 - len % 8) % 8), 1, type));
		}
		if (rc < 0) {
			t->failed = -rc;
			return fts__fail(-rc);
		}
	}
	{
		const struct fts__evrec *e = &t->rec[t->at];
		uint32_t id = FTS__EV_TYPE(e->head);
		const struct fts__evtype *ty = id < FTS_EVENT_TYPES_MAX ? t->types[id] : NULL;

		/* a type whose definition was in a damaged block: named by its id */
		if (!ty && id < FTS_EVENT_TYPES_MAX && t->st.damaged && (ty = unnamed(t, id)) == NULL) {
			t->failed = ENOMEM;
			return fts__fail(ENOMEM);
		}
		/* a record of no type, or of more fields than its type: damage */
		if (!ty || FTS__EV_NF(e->head) > ty->nfields || FTS__EV_KIND(e->head) > FTS_EVENT_END ||
		    e->head >> 23) {
			t->failed = EBADMSG;
			return fts__fail(EBADMSG);
		}
		memset(ev, 0, sizeof(*ev));
		ev->stamp = e->stamp;
		ev->type = (int)id;
		ev->kind = (int)FTS__EV_KIND(e->head);
		ev->nfields = FTS__EV_NF(e->head);
		ev->tid = e->tid;
		ev->name = ty->name;
		for (unsigned k = 0; k < FTS_EVENT_MAX_FIELDS; k++) {
			ev->fields[k] = e->f[k];
			ev->field_names[k] = k < ty->nfields ? ty->fields[k] : NULL;
		}
		convert(t, ev);
		t->at++;
		t->st.events++;
	}
	return 1;
}

int fts_trace_summary(const struct fts_trace *t, struct fts_trace_stats *st)
{
	size_t size;

	if (!t || !st || st->size < FTS__TRACE_STATS_V1)
		return fts__fail(EINVAL);
	size = st->size < sizeof(*st) ? st->size : sizeof(*st);
	memcpy(st, &t->st, size);   /* a caller's older, shorter struct: its part */
	st->size = size;
	return 0;
}

int fts_trace_pid(const struct fts_trace *t)
{
	return t ? t->pid : -1;
}

void fts_trace_close(struct fts_trace *t)
{
	if (!t)
		return;
	if (t->fd >= 0)
		close(t->fd);
	fts_calib_free(t->hist);
	for (int i = 0; i < FTS_EVENT_TYPES_MAX; i++)
		free(t->types[i]);
	free(t->blk);
	free(t->rec);
	free(t);
}
