/* evcodec.c - an events block's records, both ways: the writer's encoder of
 * EVENTS_COMPACT (trace.c's drain) and the reader's decoder of every layout a trace has
 * held (traceread.c). The layouts are in event.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "le.h"

/* v in n bytes at q, little-endian; 8 written. */
static unsigned char *put_n(unsigned char *q, uint64_t v, unsigned n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(q, &v, 8);
#else
	for (int i = 0; i < 8; i++)
		q[i] = (unsigned char)(v >> 8 * i);
#endif
	return q + n;
}

/* The bytes v needs: 0 for 0, else 1-8. */
static unsigned bytes_of(uint64_t v)
{
	return v ? (unsigned)(71 - __builtin_clzll(v)) >> 3 : 0;
}

unsigned char *fts__compact_put(unsigned char *q, const struct fts__evrec *e,
				struct fts__compact_state *s)
{
	unsigned nf = FTS__EV_NF(e->head), type = FTS__EV_TYPE(e->head), n;
	unsigned tb = s->have_type && type == FTS__EV_TYPE(s->last.head) ? 0 : type < 256 ? 1 : 2;
	unsigned char *len = q + 1;
	uint64_t v = fts__zigzag(e->stamp - s->last.stamp);

	q[0] = (unsigned char)(nf | FTS__EV_KIND(e->head) << 3 | tb << 5);
	memset(len, 0, 3);
	q = put_n(len + (nf + 2) / 2, type, tb);
	len[0] = (unsigned char)(n = bytes_of(v));
	q = put_n(q, v, n);
	for (unsigned k = 0; k < nf; k++) {
		v = fts__zigzag(e->f[k] - s->last.f[k]);
		len[(k + 1) / 2] |= (unsigned char)((n = bytes_of(v)) << 4 * ((k + 1) & 1));
		q = put_n(q, v, n);
		s->last.f[k] = e->f[k];
	}
	s->last.stamp = e->stamp;
	s->last.head = type;
	s->have_type = 1;
	return q;
}

/* n (at most 8) bytes at p + *at, little-endian, into *v, if the len bytes have them. */
static int get_n(const unsigned char *p, size_t len, size_t *at, unsigned n, uint64_t *v)
{
	if (n > 8 || len - *at < n)
		return -1;
	*v = 0;
	for (unsigned i = 0; i < n; i++)
		*v |= (uint64_t)p[*at + i] << 8 * i;
	*at += n;
	return 0;
}

/* One EVENTS_COMPACT record at p + *at into *e (its tid left alone). 0, or -1:
 * malformed. */
static int compact_get(const unsigned char *p, size_t len, size_t *at, struct fts__evrec *e,
		       struct fts__compact_state *s)
{
	unsigned b0, nf, tb, nib[1 + FTS_EVENT_MAX_FIELDS];
	uint64_t v;

	if (*at >= len || (b0 = p[*at]) >> 7 || (nf = b0 & 7) > FTS_EVENT_MAX_FIELDS ||
	    (tb = b0 >> 5 & 3) == 3 || (!tb && !s->have_type) || len - *at - 1 < (nf + 2) / 2)
		return -1;
	(*at)++;
	for (unsigned j = 0; j < (nf + 2) / 2 * 2; j++) {
		unsigned x = p[*at + j / 2] >> 4 * (j & 1) & 15;
		if (j > nf ? x != 0 : x > 8)
			return -1;
		if (j <= nf)
			nib[j] = x;
	}
	*at += (nf + 2) / 2;
	if (tb) {
		if (get_n(p, len, at, tb, &v) < 0)
			return -1;
		s->last.head = (uint32_t)v;
		s->have_type = 1;
	}
	if (get_n(p, len, at, nib[0], &v) < 0)
		return -1;
	s->last.stamp += fts__unzigzag(v);
	e->stamp = s->last.stamp;
	e->head = FTS__EV_TYPE(s->last.head) | (b0 >> 3 & 3) << 16 | nf << 20;
	for (unsigned k = 0; k < FTS_EVENT_MAX_FIELDS; k++) {
		e->f[k] = 0;
		if (k < nf && get_n(p, len, at, nib[k + 1], &v) < 0)
			return -1;
		if (k < nf)
			e->f[k] = s->last.f[k] += fts__unzigzag(v);
	}
	return 0;
}

long fts__events_decode(uint32_t type, const unsigned char *p, size_t len,
			struct fts__evrec **rec, size_t *cap)
{
	struct fts__compact_state s = { .have_type = 0 };
	size_t at = FTS__EVENTS_HEAD_BYTES, least;
	uint64_t count;
	uint32_t tid;

	if (len < FTS__EVENTS_HEAD_BYTES)
		return -EBADMSG;
	count = fts__le_get32(p + 4);
	tid = fts__le_get32(p);
	/* the fewest bytes a record takes, in each layout */
	least = type == FTS__BLK_EVENTS ? FTS__EVREC_BYTES :
		type == FTS__BLK_EVENTS_PACKED ? FTS__PACKED_BYTES(0) : 2;
	if (count > (len - at) / least ||
	    (type == FTS__BLK_EVENTS_COMPACT && count > FTS__COMPACT_MAX_RECORDS))
		return -EBADMSG;
	if (count > *cap) {
		struct fts__evrec *r = realloc(*rec, (size_t)count * sizeof(*r));
		if (!r)
			return -ENOMEM;
		*rec = r;
		*cap = (size_t)count;
	}
	for (size_t i = 0; i < count; i++) {
		struct fts__evrec *e = &(*rec)[i];
		unsigned nf;

		e->tid = tid;
		if (type == FTS__BLK_EVENTS_COMPACT) {
			if (compact_get(p, len, &at, e, &s) < 0)
				return -EBADMSG;
			continue;
		}
		if (len - at < least)
			return -EBADMSG;
		e->stamp = fts__le_get64(p + at);
		e->head = fts__le_get32(p + at + 8);
		nf = FTS__EV_NF(e->head);
		if (type == FTS__BLK_EVENTS) {
			e->tid = fts__le_get32(p + at + 12);
			at += 16;
		} else {
			at += 12;
			if (len - at < 8 * (size_t)nf)
				return -EBADMSG;
		}
		for (unsigned k = 0; k < FTS_EVENT_MAX_FIELDS; k++)
			e->f[k] = k < nf ? fts__le_get64(p + at + 8 * k) : 0;
		at += type == FTS__BLK_EVENTS ? 8 * FTS_EVENT_MAX_FIELDS : 8 * nf;
	}
	return at == len ? (long)count : -EBADMSG;
}
