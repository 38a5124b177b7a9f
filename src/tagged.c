/* tagged.c - tagged stamps on the other clocks.
 *
 * A tagged stamp (the generic backend, or a stamp stored after a counter fault) holds
 * what CLOCK_REALTIME read, r. What another clock read at that moment is found as a
 * counter stamp's reading is, with CLOCK_REALTIME in the counter's place: a history
 * (struct fts_calib) per clock of observations, each that clock read between two
 * CLOCK_REALTIME reads, maps r to the clock with the rules and bound of THE MODEL
 * (faststamp.h). No sampler feeds it: every conversion takes a read after its stamps
 * (rule 11's bridge, for those past the newest observation), which joins the history
 * when the newest is FTS__OBS_GAP_NS old or more (rule 14, estimate.c decides).
 *
 * CLOCK_REALTIME goes back at a step back, and a history's counter must not: a read
 * below the newest observation starts a new history, an era. What CLOCK_REALTIME read
 * between the last observation before the step and the first after may lie in either
 * era: a stamp whose reading either could hold converts with both, its bound covering
 * both answers. That interval's length is CLOCK_MONOTONIC_RAW's, which never steps.
 * Before the first observation kept, a stamp is carried back from it (rule 9), as a
 * counter stamp before the first sample is: no step is seen there.
 *
 * Owns the eras and their lock; reads the real clocks only (a tagged stamp is one).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "estimate.h"
#include "history.h"
#include "internal.h"
#include "clock.h"
#include "now.h"
#include "tagged.h"

#define ERAS 16                  /* eras kept a clock; the oldest goes first */
#define ERA_BYTES (1u << 20)     /* an era's history at most (rule 10 merges within) */
#define TRIES 2                  /* a read: the narrowest of this many brackets */

struct obs {
	uint64_t lo, hi;         /* CLOCK_REALTIME before and after */
	int64_t v;               /* the clock between */
	int64_t raw;             /* CLOCK_MONOTONIC_RAW after */
};

struct era {
	struct fts_calib *h;     /* NULL until it holds two observations */
	struct obs first, last;  /* the first and the newest kept */
	int64_t gap_before;      /* RAW ns from the era before's newest to first; -1: none */
};

static struct {
	struct era e[ERAS];
	int n;
} eras[FTS__NCLK];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
/* The clocks read: the real ones, or a simulated machine's (fts__tagged_set_clock). */
static int (*read_clock)(clockid_t id, int64_t *ns) = fts__now;

static void before_fork(void)
{
	pthread_mutex_lock(&lock);
}

static void after_fork(void)
{
	pthread_mutex_unlock(&lock);
}

static void register_atfork(void)
{
	pthread_atfork(before_fork, after_fork, after_fork);
}

/* Clock k between two CLOCK_REALTIME reads, the narrowest of TRIES; RAW after. */
static int take(int k, struct obs *o)
{
	int got = 0;

	for (int i = 0; i < TRIES; i++) {
		int64_t a, v, b;
		if (read_clock(CLOCK_REALTIME, &a) < 0 || read_clock(fts__hw_clk_id(k), &v) < 0 ||
		    read_clock(CLOCK_REALTIME, &b) < 0 || a < 0 || b < a)
			continue;
		if (!got || (uint64_t)(b - a) < o->hi - o->lo) {
			*o = (struct obs){ .lo = (uint64_t)a, .hi = (uint64_t)b, .v = v };
			got = 1;
		}
	}
	return got && read_clock(CLOCK_MONOTONIC_RAW, &o->raw) == 0 ? 0 : -EAGAIN;
}

/* The read *m of the bridge, as a line at the tail's band (clock.c's fresh_read). */
static void read_line(const struct fts__line *tail, const struct obs *o, struct fts__line *m)
{
	*m = *tail;
	m->c0 = m->c1 = o->lo + (o->hi - o->lo) / 2;
	m->r0 = o->v;
	m->err = (uint64_t)fts__mulshift((o->hi - o->lo + 1) / 2, tail->mult + tail->grow,
					 tail->shift) + 1;
	m->flags = 0;
}

/* Era e's answer at r as an interval; read: a read after r not in e's history (for the
 * newest era), or NULL. 0, or a negative errno. */
static int era_at(const struct era *e, uint64_t r, const struct obs *read, __int128 *lo,
		  __int128 *hi)
{
	struct fts__line l, m;
	int64_t ns, err;
	int where, rc;

	if (!e->h) {   /* one observation kept: it, or the read after r, whichever is nearer */
		const struct obs *o = read && read->lo - r < r - e->first.hi ? read : &e->first;
		if (r <= e->first.hi)
			o = &e->first;
		fts__estimate_rule14_one_obs(o->lo, o->hi, o->v, r, lo, hi);
		return 0;
	}
	if ((where = fts__calib_find(e->h, r, &l)) < -1)
		return -EAGAIN;
	if (where > 0 && read) {
		read_line(&l, read, &m);
		rc = fts__bridge(&l, &m, r, &ns, &err);
	} else {
		rc = fts__line_convert(&l, where, r, &ns, &err);
	}
	if (rc < 0)
		return rc;
	*lo = (__int128)ns - err;
	*hi = (__int128)ns + err;
	return 0;
}

/* Take read o into clock k's eras: a new era when CLOCK_REALTIME went back; else into
 * the newest one's history when due. 1 if kept, 0 if not (the caller bridges to it),
 * or a negative errno. */
static int keep(int k, const struct obs *o)
{
	struct era *e = eras[k].n ? &eras[k].e[eras[k].n - 1] : NULL;
	enum fts__estimate_rule14_obs to = fts__estimate_rule14_obs(e != NULL, e ? e->last.hi : 0, o->lo,
						  e ? o->raw - e->last.raw : 0);

	if (to == FTS__OBS_BRIDGE)
		return 0;
	if (to == FTS__OBS_JOIN) {
		if (!e->h) {
			struct fts_calib_opts opts = { .size = sizeof(opts), .max_bytes = ERA_BYTES };
			if (!(e->h = fts_calib_new_opts(&opts)))
				return -ENOMEM;
			if (fts_calib_add(e->h, e->first.lo, e->first.v, e->first.hi) < 0 ||
			    fts_calib_add(e->h, o->lo, o->v, o->hi) < 0) {
				fts_calib_free(e->h);
				e->h = NULL;
				return 0;   /* not past the first (a coarse CLOCK_REALTIME) */
			}
		} else if (fts_calib_add(e->h, o->lo, o->v, o->hi) < 0) {
			return 0;   /* not past the newest: bridged */
		}
		e->last = *o;
		return 1;
	}
	/* FTS__OBS_NEW_ERA: the first read, or CLOCK_REALTIME went back */
	if (eras[k].n == ERAS) {
		fts_calib_free(eras[k].e[0].h);
		memmove(&eras[k].e[0], &eras[k].e[1], sizeof(eras[k].e[0]) * (ERAS - 1));
		eras[k].n--;
		eras[k].e[0].gap_before = -1;
	}
	eras[k].e[eras[k].n++] = (struct era){ .first = *o, .last = *o,
					       .gap_before = e ? o->raw - e->last.raw : -1 };
	return 1;
}

int fts__tagged_convert(int k, const fast_timestamp_t *stamps, size_t n, int64_t *ns,
			int64_t *err)
{
	struct obs read;
	int have_read = 0, rc = 0, any = 0;

	for (size_t i = 0; i < n; i++) {
		if (!(stamps[i] & FTS_STAMP_CLOCK_TAG))
			continue;
		int64_t r = (int64_t)(stamps[i] << 1) >> 1;
		if (r < 0)
			return -ERANGE;   /* before 1970: no CLOCK_REALTIME history holds it */
		any = 1;
	}
	if (!any)
		return 0;
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&lock);
	/* A read after every stamp, whatever their readings: one below the newest
	 * observation may still be newer than it, after CLOCK_REALTIME went back (the read
	 * then starts a new era). */
	if ((rc = take(k, &read)) < 0 || (rc = keep(k, &read)) < 0)
		goto out;
	have_read = rc == 0;
	rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		__int128 lo = 0, hi = -1, a, b;
		uint64_t r;

		if (!(stamps[i] & FTS_STAMP_CLOCK_TAG))
			continue;
		r = (uint64_t)((int64_t)(stamps[i] << 1) >> 1);
		/* every era whose CLOCK_REALTIME readings may hold r */
		for (int j = 0; j < eras[k].n && rc == 0; j++) {
			const struct era *e = &eras[k].e[j];
			int last = j == eras[k].n - 1;
			/* its readings: from its first less the step's interval before it, to
			 * its newest plus the interval after (the newest era: to the read now) */
			uint64_t top = last ? read.hi : e->last.hi + (uint64_t)eras[k].e[j + 1].gap_before;
			if (!fts__estimate_rule14_may_hold(r, e->first.lo, e->gap_before, top))
				continue;
			if ((rc = era_at(e, r, last && have_read ? &read : NULL, &a, &b)) < 0)
				break;
			if (hi < lo) {
				lo = a;
				hi = b;
			} else {
				lo = a < lo ? a : lo;
				hi = b > hi ? b : hi;
			}
		}
		if (rc == 0 && hi < lo)
			rc = -EAGAIN;   /* in no era: the oldest went (ERAS) */
		if (rc < 0)
			break;
		__int128 est = lo + (hi - lo) / 2, e = hi - est > est - lo ? hi - est : est - lo;
		if (est > INT64_MAX || est < INT64_MIN || e > INT64_MAX) {
			rc = -ERANGE;
			break;
		}
		ns[i] = (int64_t)est;
		if (err)
			err[i] = (int64_t)e;
	}
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

void fts__tagged_set_clock(int (*now)(clockid_t id, int64_t *ns))
{
	pthread_mutex_lock(&lock);
	for (int k = 0; k < FTS__NCLK; k++) {
		for (int j = 0; j < eras[k].n; j++)
			fts_calib_free(eras[k].e[j].h);
		eras[k].n = 0;
	}
	read_clock = now ? now : fts__now;
	pthread_mutex_unlock(&lock);
}
