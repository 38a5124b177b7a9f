/* traceread.c - a trace file read back (fts_trace_open): its history loaded as a
 * record's (histfile.c), then its blocks read one at a time, each checked against its
 * CRC, and its records handed out converted. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
	struct fts_calib *hist;         /* NULL: the file holds no history (hist_err) */
	int hist_err;
	uint32_t seed;                  /* the next block header's CRC seed */
	struct fts__evtype *types[FTS_EVENT_TYPES_MAX];
	unsigned char *blk;             /* the block last read */
	size_t cap;
	struct fts__evrec *rec;         /* an events block's records, decoded: handed out */
	size_t reccap, at, count;       /* from at, of count */
	int pid, ended, failed;
	struct fts_trace_stats st;
};

struct fts_trace *fts_trace_open(const char *path, clockid_t clock)
{
	struct fts_calib *c[FTS__NCLK];
	struct fts__fileinfo fi;
	struct fts_trace *t;
	unsigned char f[16];
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
	/* the history: every block checked, a cut file read up to its cut */
	rc = fts__histfile_load_clocks(t->fd, 1u << k, c, &fi);
	if (rc == 0 && !(t->hist = c[k])) {
		rc = -EBADMSG;   /* a file of CLOCK_REALTIME alone, asked for another */
		for (int i = 0; i < FTS__NCLK; i++)
			fts_calib_free(c[i]);
	}
	if (rc == -ENODATA && fi.has_head) {
		t->hist_err = ENODATA;   /* too few samples: events, not converted */
		rc = 0;
	}
	if (rc == 0 && (lseek(t->fd, 0, SEEK_SET) < 0 || fts__histfile_read_some(t->fd, f, 16) != 16 ||
			memcmp(f, FTS__FILE_MAGIC, 8) || fts__le_get32(f + 8) != FTS__FILE_VERSION))
		rc = -EBADMSG;
	if (rc) {
		fts_trace_close(t);
		return fts__fail_null(-rc);
	}
	t->seed = fts__crc32(0, f, 16);
	t->st.bytes = 16;
	return t;
}

/* The next block: 1 with its type and payload in t->blk (len bytes), 0 at the end (or a
 * cut), or negative errno. */
static int next_block(struct fts_trace *t, uint32_t *type, size_t *len)
{
	static const unsigned char zero[8];
	unsigned char h[FTS__BLOCK_HEAD_BYTES];
	ssize_t got = fts__histfile_read_some(t->fd, h, sizeof(h));
	size_t n, pad;

	if (got < 0)
		return (int)got;
	if (got < (ssize_t)sizeof(h))
		return 0;
	if (fts__crc32(t->seed, h, 20) != fts__le_get32(h + 20) || fts__le_get32(h + 16) ||
	    fts__le_get32(h) != FTS__BLOCK_MAGIC)
		return -EBADMSG;
	t->seed = 0;
	*type = fts__le_get32(h + 4);
	n = fts__le_get32(h + 8);
	pad = (8 - n % 8) % 8;
	if (n + pad > MAX_EVENTS_BLOCK)
		return -EBADMSG;
	if (n + pad > t->cap) {
		unsigned char *b = realloc(t->blk, n + pad);
		if (!b)
			return -ENOMEM;
		t->blk = b;
		t->cap = n + pad;
	}
	if ((got = fts__histfile_read_some(t->fd, t->blk, n + pad)) < 0)
		return (int)got;
	if ((size_t)got < n + pad)
		return 0;   /* cut inside the block: the whole ones before are the trace */
	if (fts__crc32(fts__crc32(0, t->blk, n), zero, pad) != fts__le_get32(h + 12) ||
	    memcmp(t->blk + n, zero, pad))
		return -EBADMSG;
	t->st.bytes += sizeof(h) + n + pad;
	*len = n;
	return 1;
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

int fts_trace_next(struct fts_trace *t, struct fts_trace_event *ev)
{
	if (!t || !ev)
		return fts__fail(EINVAL);
	while (t->at >= t->count) {
		uint32_t type = 0;
		size_t len = 0;
		int rc;

		if (t->failed)
			return fts__fail(t->failed);
		if (t->ended)
			return 0;
		t->at = t->count = 0;
		if ((rc = next_block(t, &type, &len)) == 0) {
			t->ended = 1;
			return 0;
		}
		if (rc > 0)
			rc = take_block(t, type, len);
		if (rc < 0) {
			t->failed = -rc;
			return fts__fail(-rc);
		}
	}
	{
		const struct fts__evrec *e = &t->rec[t->at];
		uint32_t id = FTS__EV_TYPE(e->head);
		const struct fts__evtype *ty = id < FTS_EVENT_TYPES_MAX ? t->types[id] : NULL;

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
	if (!t || !st || st->size < sizeof(*st))
		return fts__fail(EINVAL);
	*st = t->st;
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
