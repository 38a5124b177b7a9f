/* event.h - the event path's parts (docs/events.md): event.c owns the type registry and
 * the per-thread rings (the hot path); trace.c the trace being written (the drain and
 * the file); traceread.c reads a trace file. The file's layout is here, shared by the
 * writer and the reader. Not installed. */
#ifndef FTS__EVENT_H
#define FTS__EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "faststamp.h"

/* A record, as in a ring (and, little-endian, in a file's EVENTS blocks, which traces
 * held before EVENTS_PACKED): 48 bytes. */
struct fts__evrec {
	uint64_t stamp;
	uint32_t head;          /* type (bits 0-15) | kind << 16 (2 bits) | nfields << 20 */
	uint32_t tid;
	uint64_t f[FTS_EVENT_MAX_FIELDS];
};
#define FTS__EVREC_BYTES 48
_Static_assert(sizeof(struct fts__evrec) == FTS__EVREC_BYTES, "a record is 48 bytes, no padding");
#define FTS__REC_PER_LINES 4   /* records that fill whole lines (3 of 64 bytes) */
#define FTS__EV_TYPE(h) ((h) & 0xffffu)
#define FTS__EV_KIND(h) ((h) >> 16 & 3u)
#define FTS__EV_NF(h) ((h) >> 20 & 7u)

/* The trace file's blocks, beside a record's (histfile.h): optional, so that a history
 * reader (faststamp convert, history) reads a trace as the record it also is. */
enum {
	FTS__BLK_TRACE = 0x80000010,    /* pid (4), 0 (4), ring records (8) */
	FTS__BLK_EVTYPE = 0x80000011,   /* id (4), nfields (4), name[64], field names 4 x [32] */
	FTS__BLK_EVENTS = 0x80000012,   /* tid (4), count (4), dropped since the thread's
					 * last block (8), count records of 48 bytes: read,
					 * no longer written */
	FTS__BLK_TRACE_END = 0x80000013,/* events, dropped, lost (8 each): a trace stopped */
	FTS__BLK_EVENTS_PACKED = 0x80000014, /* as EVENTS, but each record as long as its
					 * fields: stamp (8), head (4), nfields x 8 (the tid
					 * is the block's): read, no longer written */
	FTS__BLK_EVENTS_COMPACT = 0x80000015, /* as EVENTS_PACKED, each record's stamp and
					 * fields as differences (below): what a trace
					 * writes now */
};
#define FTS__TRACE_BYTES 16
#define FTS__EVTYPE_BYTES (8 + 64 + FTS_EVENT_MAX_FIELDS * 32)
#define FTS__EVENTS_HEAD_BYTES 16
#define FTS__PACKED_BYTES(nf) (12 + 8 * (size_t)(nf))   /* a record in EVENTS_PACKED */
#define FTS__TRACE_END_BYTES 24
/* The size of struct fts_trace_stats before it grew (0.3): still taken. */
#define FTS__TRACE_STATS_V1 offsetof(struct fts_trace_stats, damaged)

/* An EVENTS_COMPACT block: tid (4), count (4), dropped (8), then count records, each
 *   byte 0      nfields (bits 0-2), kind (bits 3-4), how the type is given (bits 5-6:
 *               0 the record before's, 1 in one byte, 2 in two), bit 7 zero;
 *   lengths     1 + nfields nibbles, low nibble first, in (nfields + 2) / 2 bytes (an
 *               unused last nibble zero): the stamp's and each field's byte count,
 *               0 to 8;
 *   type        0, 1 or 2 bytes, little-endian;
 *   stamp       the difference from the record before's stamp (0 before the block's
 *               first), zigzag (a step back costs what a step forward does), in its
 *               count of bytes, little-endian, leading zero bytes left out;
 *   fields      each the same, the difference from the same field of the last record
 *               before that had it (0 before the block's first).
 * A counter read at 20 M events a second and fields that count or time things take a
 * byte or two each: 5-8 bytes a record of two such fields, against 28 packed. */
#define FTS__COMPACT_MAX_BYTES (1 + 3 + 2 + 8 + 8 * FTS_EVENT_MAX_FIELDS)
#define FTS__COMPACT_MAX_RECORDS 65536   /* a block's, as a reader takes them */

/* ---- evcodec.c: records in a file's blocks ------------------------------------------ */
/* A block's running values, as its records are written or read. Zeroed at a block's
 * start. */
struct fts__compact_state {
	struct fts__evrec last;   /* the last stamp and fields; the last type in head */
	int have_type;
};
/* The record e as EVENTS_COMPACT has it, at q: returns its end. Writes up to
 * FTS__COMPACT_MAX_BYTES + 8 bytes from q. */
unsigned char *fts__compact_put(unsigned char *q, const struct fts__evrec *e,
				struct fts__compact_state *s);
/* An events block's payload (p, len) of type EVENTS, EVENTS_PACKED or EVENTS_COMPACT
 * decoded into *rec (grown as needed, *cap its room), each record with its thread:
 * how many, or -EBADMSG (malformed: its records do not end exactly where the block
 * does, a record no writer makes, more than FTS__COMPACT_MAX_RECORDS compact ones) or
 * -ENOMEM. */
long fts__events_decode(uint32_t type, const unsigned char *p, size_t len,
			struct fts__evrec **rec, size_t *cap);

static inline uint64_t fts__zigzag(uint64_t diff)
{
	return diff << 1 ^ (uint64_t)((int64_t)diff >> 63);
}

static inline uint64_t fts__unzigzag(uint64_t z)
{
	return z >> 1 ^ (0 - (z & 1));
}

/* A type, as defined. */
struct fts__evtype {
	char name[FTS_EVENT_NAME_MAX + 1];
	char fields[FTS_EVENT_MAX_FIELDS][FTS_EVENT_FIELD_MAX + 1];
	unsigned nfields;
};

/* ---- event.c: types ------------------------------------------------------------------ */
/* Types defined so far (acquire: every type below it is whole). */
int fts__event_types_count(void);
const struct fts__evtype *fts__event_type_get(int id);
/* name and fields checked as fts_event_define does: 0 or EINVAL. Parsed into *t. */
int fts__event_type_parse(const char *name, const char *fields, struct fts__evtype *t);

/* ---- event.c: rings ------------------------------------------------------------------ */
/* The drain's side of every ring, with the trace's lock held (one consumer): a ring's
 * records since its last release, in two runs (the ring wraps; the drain may change
 * them in place until it releases them), and its drops since. */
struct fts__ring;
struct fts__ring_batch {
	struct fts__ring *ring;
	uint64_t head, dropped_to;      /* where the release puts the ring's tail and count */
	uint32_t tid;
	uint64_t dropped;
	size_t n;
	struct fts__evrec *rec1, *rec2;
	size_t n1, n2;
};
/* A batch for every ring with records or drops not yet released, at most `most` of a
 * ring's records each (whole: of more than FTS__REC_PER_LINES, ending where a line
 * does), into *b (grown as needed, *cap its room): how many, or
 * (size_t)-1 when no memory (nothing taken). */
size_t fts__event_rings_take(struct fts__ring_batch **b, size_t *cap, size_t most, int whole);
/* The records of n batches taken given back to their writers; the rings of threads
 * gone are freed once every record of theirs was released. */
void fts__event_rings_release(const struct fts__ring_batch *b, size_t n);
/* Start of a trace: records left in the rings and drops counted before are forgotten. */
void fts__event_rings_reset(void);
/* Events the hot path dropped without a ring (no memory), since the last reset. */
uint64_t fts__event_rings_orphan_drops(void);
/* The ring size in records for rings made from now on (FASTSTAMP_EVENT_RING): 0, or
 * -EINVAL (set, not empty, and not a power of two from 64 to 2^24: nothing changed). */
int fts__event_rings_configure(void);
size_t fts__event_rings_size(void);
/* The drain's sleep and wake-up (trace.c's drain thread calls them; a writer wakes it
 * from ring_look): FTS__DRAIN_PACED until a quarter of a ring should fill at the last
 * rate, FTS__DRAIN_IDLE backed off after a round that found nothing. */
enum { FTS__DRAIN_PACED = 1, FTS__DRAIN_IDLE = 2 };
/* The drain thread, as it ends. */
void fts__event_drain_stopped(void);
/* fts_trace_start, the drain thread made and the trace's lock let go: waits until the
 * drain sleeps the first time (its first round done), at most 1 s. A new thread, or one
 * woken by a lock let go, may be queued behind the thread that made it; a sleeping
 * drain is one a writer's wake-up moves off its CPU. */
void fts__event_drain_wait_started(void);
/* Whether the drain thread has slept once (and not ended since). */
int fts__event_drain_ready(void);
/* The drain, between rounds: sleeps `how` for up to ns, or until a writer or
 * fts__event_drain_kick wakes it; its CPUs back if the writer that woke it kept it off
 * the writer's. Its first sleep keeps its thread and the CPUs it may run on. */
void fts__event_drain_sleep(int how, int64_t ns);
/* The drain woken at once (a trace stopping). */
void fts__event_drain_kick(void);
/* In a fork's child: the parent's rings are let go (their records are not mapped in
 * the child); the calling thread makes a new one at its next event. */
void fts__event_rings_forked(void);

#endif /* FTS__EVENT_H */
