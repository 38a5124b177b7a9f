/* trace_perfetto.c - `faststamp trace --format perfetto`: the events as Perfetto's own
 * trace format (protobuf TracePackets, what its UI and trace_processor read), each
 * timestamp a whole uint64 of ns on the chosen clock, which no JSON viewer keeps: a
 * clock snapshot that makes that clock the trace's, a track a process and a track a
 * thread, and a TrackEvent an event (its fields as debug annotations). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faststamp.h"
#include "tool.h"

/* Field numbers of Perfetto's trace protos (perfetto/trace/...) that are written here. */
enum {
	TRACE_PACKET = 1,                                        /* Trace */
	PKT_CLOCK_SNAPSHOT = 6, PKT_TIMESTAMP = 8, PKT_SEQUENCE_ID = 10, PKT_TRACK_EVENT = 11,
	PKT_TIMESTAMP_CLOCK_ID = 58, PKT_TRACK_DESCRIPTOR = 60,  /* TracePacket */
	SNAP_CLOCKS = 1, SNAP_PRIMARY_TRACE_CLOCK = 2,           /* ClockSnapshot */
	CLOCK_ID = 1, CLOCK_TIMESTAMP = 2,                       /* ClockSnapshot.Clock */
	TRACK_UUID = 1, TRACK_PROCESS = 3, TRACK_THREAD = 4, TRACK_PARENT_UUID = 5,
	PROC_PID = 1,                                            /* ProcessDescriptor */
	THREAD_PID = 1, THREAD_TID = 2,                          /* ThreadDescriptor */
	EV_DEBUG_ANNOTATIONS = 4, EV_TYPE = 9, EV_TRACK_UUID = 11, EV_NAME = 23,
	ANN_UINT_VALUE = 3, ANN_NAME = 10,                       /* DebugAnnotation */
	TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3,
	SEQUENCE = 1,   /* every packet is of one sequence, this writer's */
};
/* Track uuids: a process's and a thread's apart, whatever their ids. */
#define PROCESS_TRACK(pid) ((uint64_t)1 << 40 | (uint32_t)(pid))
#define THREAD_TRACK(tid) ((uint64_t)2 << 40 | (uint32_t)(tid))

struct pb {
	unsigned char *p;
	size_t n, cap;
	int failed;
};

static void bytes(struct pb *b, const void *d, size_t len)
{
	if (b->n + len > b->cap) {
		size_t c = b->cap ? b->cap : 256;
		unsigned char *p;
		while (c < b->n + len)
			c *= 2;
		if (!(p = realloc(b->p, c))) {
			b->failed = 1;
			return;
		}
		b->p = p;
		b->cap = c;
	}
	memcpy(b->p + b->n, d, len);
	b->n += len;
}

static void varint(struct pb *b, uint64_t v)
{
	unsigned char x[10];
	size_t n = 0;

	do {
		x[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	bytes(b, x, n);
}

static void uint_field(struct pb *b, unsigned field, uint64_t v)
{
	varint(b, (uint64_t)field << 3);   /* wire type 0: varint */
	varint(b, v);
}

static void len_field(struct pb *b, unsigned field, const void *d, size_t len)
{
	varint(b, (uint64_t)field << 3 | 2);   /* wire type 2: length-delimited */
	varint(b, len);
	bytes(b, d, len);
}

/* The message in m as field of b; m emptied for the next. */
static void msg_field(struct pb *b, unsigned field, struct pb *m)
{
	len_field(b, field, m->p, m->n);
	b->failed |= m->failed;
	m->n = 0;
}

int fts_tool_trace_perfetto(FILE *o, struct fts_trace_event *const *ev, size_t n,
			    unsigned clock_id, int pid)
{
	struct pb out = { 0 }, pkt = { 0 }, m = { 0 }, sub = { 0 };
	uint32_t *tids = NULL;   /* the threads whose track is written */
	size_t ntids = 0;
	int rc = 0;

	/* the clock the timestamps are on, made the trace's own */
	uint_field(&sub, CLOCK_ID, clock_id);
	uint_field(&sub, CLOCK_TIMESTAMP, n ? (uint64_t)ev[0]->ns : 0);
	msg_field(&m, SNAP_CLOCKS, &sub);
	uint_field(&m, SNAP_PRIMARY_TRACE_CLOCK, clock_id);
	msg_field(&pkt, PKT_CLOCK_SNAPSHOT, &m);
	uint_field(&pkt, PKT_SEQUENCE_ID, SEQUENCE);
	msg_field(&out, TRACE_PACKET, &pkt);
	/* the process's track, then each thread's, the first time it is seen */
	uint_field(&m, TRACK_UUID, PROCESS_TRACK(pid));
	uint_field(&sub, PROC_PID, (uint64_t)(uint32_t)pid);
	msg_field(&m, TRACK_PROCESS, &sub);
	msg_field(&pkt, PKT_TRACK_DESCRIPTOR, &m);
	uint_field(&pkt, PKT_SEQUENCE_ID, SEQUENCE);
	msg_field(&out, TRACE_PACKET, &pkt);
	for (size_t i = 0; i < n && !out.failed; i++) {
		const struct fts_trace_event *e = ev[i];
		size_t t = 0;

		while (t < ntids && tids[t] != e->tid)
			t++;
		if (t == ntids) {
			uint32_t *nt = realloc(tids, (ntids + 1) * sizeof(*tids));
			if (!nt) {
				out.failed = 1;
				break;
			}
			tids = nt;
			tids[ntids++] = e->tid;
			uint_field(&m, TRACK_UUID, THREAD_TRACK(e->tid));
			uint_field(&m, TRACK_PARENT_UUID, PROCESS_TRACK(pid));
			uint_field(&sub, THREAD_PID, (uint64_t)(uint32_t)pid);
			uint_field(&sub, THREAD_TID, e->tid);
			msg_field(&m, TRACK_THREAD, &sub);
			msg_field(&pkt, PKT_TRACK_DESCRIPTOR, &m);
			uint_field(&pkt, PKT_SEQUENCE_ID, SEQUENCE);
			msg_field(&out, TRACE_PACKET, &pkt);
		}
		uint_field(&m, EV_TYPE, e->kind == FTS_EVENT_BEGIN ? TYPE_SLICE_BEGIN
					: e->kind == FTS_EVENT_END ? TYPE_SLICE_END : TYPE_INSTANT);
		uint_field(&m, EV_TRACK_UUID, THREAD_TRACK(e->tid));
		len_field(&m, EV_NAME, e->name, strlen(e->name));
		for (unsigned k = 0; k < e->nfields && e->field_names[k]; k++) {
			len_field(&sub, ANN_NAME, e->field_names[k], strlen(e->field_names[k]));
			uint_field(&sub, ANN_UINT_VALUE, e->fields[k]);
			msg_field(&m, EV_DEBUG_ANNOTATIONS, &sub);
		}
		uint_field(&pkt, PKT_TIMESTAMP, (uint64_t)e->ns);
		uint_field(&pkt, PKT_TIMESTAMP_CLOCK_ID, clock_id);
		uint_field(&pkt, PKT_SEQUENCE_ID, SEQUENCE);
		msg_field(&pkt, PKT_TRACK_EVENT, &m);
		msg_field(&out, TRACE_PACKET, &pkt);
		/* written a MiB at a time: the memory stays a packet's and a MiB's */
		if (out.n >= (1u << 20) || i + 1 == n) {
			if (fwrite(out.p, 1, out.n, o) != out.n)
				rc = -1;
			out.n = 0;
		}
	}
	if (!out.failed && out.n && fwrite(out.p, 1, out.n, o) != out.n)
		rc = -1;
	if (out.failed || pkt.failed || m.failed || sub.failed)
		rc = -1;
	free(tids);
	free(out.p);
	free(pkt.p);
	free(m.p);
	free(sub.p);
	return rc;
}
