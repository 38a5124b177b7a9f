/* history.c - the read side of a history (history.h holds the hot part inline):
 * conversions, the state published now, and segments copied out for a file. Reads
 * only, through the latch (fts__latch_read, one loop, one rule); writes nothing shared.
 * The writer is calib.c, which uses these (its counts and ranges add the samples it
 * has not published yet); nothing here calls calib.c. */
#include <errno.h>
#include <stdint.h>

#include "history.h"
#include "internal.h"
#include "estimate.h"

int fts__pub_read(const struct fts_calib *c, uint64_t *newest, uint64_t *first, size_t *n)
{
	struct fts__reading rd = { 0 };
	int again;

	do {
		const struct fts__pub *p = fts__latch_read(c, &rd);
		*newest = FTS__LD(p->newest);
		*first = FTS__LD(p->head.key);
		*n = (size_t)FTS__LD(p->nfinal) + FTS__LD(p->nprov);
	} while ((again = fts__latch_again(c, &rd)) > 0);
	if (!*newest)
		*n = 0;
	return again;
}

/* Rule 15 for x outside history c, l the line found for it: 0, or -ERANGE past its
 * reach (its distance at l's rate), -EAGAIN (fts__latch_again). */
static int reach(const struct fts_calib *c, const struct fts__line *l, uint64_t x)
{
	uint64_t first, newest;
	__int128 beyond;
	size_t n;
	int rc;

	if ((rc = fts__pub_read(c, &newest, &first, &n)) < 0)
		return rc;
	if (!n || l->shift > 62)
		return 0;
	beyond = fts__mulshift(x < first ? first - x : x > newest ? x - newest : 0, l->mult, l->shift);
	beyond = beyond < 0 ? -beyond : beyond;
	return fts__estimate_reach_history(first, newest, x, beyond > INT64_MAX ? INT64_MAX : (int64_t)beyond)
		       ? 0 : -ERANGE;
}

int fts_calib_convert(const struct fts_calib *c, uint64_t counter, int64_t *ref_ns,
		      int64_t *err_ns)
{
	struct fts__line l;
	int64_t ns, err;
	int where, rc;

	if (!c || !ref_ns)
		return fts__fail(EINVAL);
	where = fts__calib_find(c, counter, &l);
	if (where < -1)   /* -ENODATA, or -EAGAIN: another process's history kept moving */
		return fts__fail(-where);
	if (where != 0 && (rc = reach(c, &l, counter)) < 0)
		return fts__fail(-rc);
	if ((rc = fts__line_convert(&l, where, counter, &ns, &err)) < 0)
		return fts__fail(-rc);
	*ref_ns = ns;
	if (err_ns)
		*err_ns = err;
	return 0;
}

/* Segment i of state p of any history, checked as a reader checks, from where a look-up
 * finds it (the newest final ones from the state's copy): -1 if p has no segment i. */
int fts__pub_segment(const struct fts_calib *c, const struct fts__pub *p, size_t i, uint64_t *key,
		     struct fts__rec *r)
{
	uint32_t nf = FTS__LD(p->nfinal), np = FTS__LD(p->nprov), nr = FTS__LD(p->nrecent), k;
	struct fts__line l;

	if (np > FTS__MAX_PROV || nr > FTS__PUB_RECENT || nr > nf || i >= (size_t)nf + np ||
	    ((uint64_t)nf - nr + FTS__CHUNK_RECS - 1) / FTS__CHUNK_RECS > c->dircap)
		return -1;
	if (i >= nf) {
		*key = FTS__LD(p->pkey[i - nf]);
		fts__rec_load(c, &p->prov[i - nf], &l);
	} else if (i >= nf - nr) {
		*key = FTS__LD(p->rkey[i - (nf - nr)]);
		fts__rec_load(c, &p->recent[i - (nf - nr)], &l);
	} else {
		k = FTS__LD(c->dir[FTS__LD(p->dir) & 1][i / FTS__CHUNK_RECS].chunk);
		if (k >= c->dircap)
			return -1;
		*key = FTS__LD(fts__chunk_at(c, k)->key[i % FTS__CHUNK_RECS]);
		fts__rec_load(c, &fts__chunk_at(c, k)->rec[i % FTS__CHUNK_RECS], &l);
	}
	*r = (struct fts__rec){ .r0 = l.r0, .mult = l.mult, .err = l.err, .shift = l.shift,
				.flags = l.flags };
	return 0;
}
