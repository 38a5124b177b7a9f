/* calib.c - a history's storage and its writer: samples in, segments out (the model is
 * in faststamp.h, "THE MODEL"; its rules are estimate.c; readers are history.h).
 *
 * The writer keeps a few raw samples: an interval's step verdict needs the intervals
 * next to it, and its band the rates and verdicts of intervals further away, so an
 * interval is final only when FINAL_AFTER more follow it. Final intervals feed the open run (rule 6); a run
 * that closes becomes a segment for good. Each add republishes only the end of the
 * list: the open run and the intervals not yet final, each a segment of its own, and
 * the lines carried on before and after. All of that is worked out in the writer's own
 * memory first; publishing (history.h, a latch) only copies it. At the memory limit the
 * segments whose merging adds the least to the bound are merged (rule 10), into new
 * chunks listed by the other directory, published as one new state.
 *
 * fts_calib_count and fts_calib_range are here too: before its first segment a
 * history holds only the writer's samples. Dependencies run one way: this file uses
 * the read side's (history.c), which never calls it.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "estimate.h"
#include "history.h"
#include "internal.h"
#include "calib.h"

#define DEFAULT_RATE_TOL_PPB 1000
#define DEFAULT_MAX_BYTES ((size_t)64 << 20)
#define MIN_MAX_SAMPLES 16   /* the provisional end of the list, and room to merge */
/* An interval's band (rule 4) takes rates from up to three intervals away on each side
 * (rule 3's neighbour hops over one step), and the step verdicts there need their own
 * neighbours: five intervals after it and five samples before it leave one to spare. */
#define FINAL_AFTER 5
#define KEEP_BEFORE 5
#define RAW (KEEP_BEFORE + FINAL_AFTER + 2)
#define MAX_RUN FTS__RUN_MAX   /* intervals in one run at most (rule 6) */
/* Segments an add may put after the final ones: two that become final (a run and a
 * step), the open run, and the intervals not yet final. */
#define MAX_ADDED (3 + FINAL_AFTER)
#define MAX_OUT MAX_ADDED

struct given {
	uint64_t x, h;      /* bracket midpoint and half-width */
	int64_t r;          /* reading */
	int step;           /* the source saw a step since the previous sample */
};

struct fts__writer {
	double tol;
	size_t max_recs;              /* segments at most (from max_samples, max_bytes) */
	uint32_t nalloc;              /* chunks ever used from the pool */
	uint32_t nclaimed;            /* entries of the current directory with a chunk */
	uint32_t *spare;              /* chunks free again after a merge */
	uint32_t nspare;
	uint64_t last_after, added;
	/* Raw samples: s[cur] is the last one consumed (where the open run ends), those
	 * before it are kept for the rules' look back, those after await. */
	struct given s[RAW];
	unsigned ns, cur;
	/* The open run: from the anchor (ax, ay + ayf), in coordinates relative to it. */
	uint64_t ax;
	int64_t ay;
	double ayf;
	struct fts__fit fit;
	struct fts__env env[MAX_RUN];
	unsigned nenv;
	double err;                   /* its bound at its slope now (rule 8) */
	struct fts__band first_band;  /* the band of the first interval (head) */
	int have_first_band;
	struct fts__pub pub;          /* the state published last */
	int loaded;                   /* read from a saved file: it takes no samples */
};

/* The writer's samples before its first segment (none for a view of a history
 * written elsewhere): how many, and the first's counter in *first when there is one. */
static size_t unpublished(const struct fts_calib *c, uint64_t *first)
{
	if (!c->w || !c->w->ns)
		return 0;
	*first = c->w->s[0].x;
	return FTS__LD(c->w->ns);
}

/* The counts and ranges of the public API: what is published (history.c), and before
 * the first segment the writer's own samples. */
size_t fts_calib_count(const struct fts_calib *c)
{
	uint64_t newest, first;
	size_t n;

	if (!c)
		return 0;
	/* knots: the ends of the segments; before the first segment, the samples */
	if (fts__pub_read(c, &newest, &first, &n) < 0)
		return 0;
	return n ? n + 1 : unpublished(c, &first);
}

int fts_calib_range(const struct fts_calib *c, uint64_t *oldest, uint64_t *newest)
{
	uint64_t a, b;
	size_t n;

	if (!c || !oldest || !newest)
		return fts__fail(EINVAL);
	if (fts__pub_read(c, &b, &a, &n) < 0)
		return fts__fail(EAGAIN);
	/* no segment yet: the one sample, if any (the writer's own) */
	if (!n && !unpublished(c, &a))
		return fts__fail(ENODATA);
	if (!n)
		b = a;
	*oldest = a;
	*newest = b;
	return 0;
}

/* ---- publishing ---------------------------------------------------------------------- */

/* A chunk index for the directory to be, taken from the spares or the pool.
 * UINT32_MAX when the pool is spent. */
static uint32_t chunk_get(struct fts_calib *c)
{
	struct fts__writer *w = c->w;

	if (w->nspare)
		return w->spare[--w->nspare];
	if (w->nalloc < c->dircap)
		return w->nalloc++;
	return UINT32_MAX;
}

/* Make room for final segments up to position n (exclusive): chunks claimed for the
 * current directory now, counted by a state published later. */
static int reserve(struct fts_calib *c, size_t n)
{
	struct fts__writer *w = c->w;
	struct fts__dirent *dir = c->dir[w->pub.dir];
	uint32_t need = (uint32_t)((n + FTS__CHUNK_RECS - 1) / FTS__CHUNK_RECS);

	for (; w->nclaimed < need; w->nclaimed++) {
		uint32_t k = chunk_get(c);
		if (k == UINT32_MAX)
			return -ENOMEM;
		FTS__ST(dir[w->nclaimed].chunk, k);
	}
	return 0;
}

static void store_rec(struct fts__rec *d, const struct fts__rec *r)
{
	FTS__ST(d->r0, r->r0);
	FTS__ST(d->mult, r->mult);
	FTS__ST(d->err, r->err);
	FTS__ST(d->shift, r->shift);
	FTS__ST(d->flags, r->flags);
}

/* Segment pos of the list that directory d lists. */
static void get_at(const struct fts_calib *c, uint32_t d, size_t pos, uint64_t *key,
		   struct fts__rec *r)
{
	const struct fts__chunk *ch = fts__chunk_at(c, c->dir[d][pos / FTS__CHUNK_RECS].chunk);

	*key = ch->key[pos % FTS__CHUNK_RECS];
	*r = ch->rec[pos % FTS__CHUNK_RECS];
}

/* Write segment pos of the list that directory d lists. */
static void put_at(struct fts_calib *c, uint32_t d, size_t pos, uint64_t key, const struct fts__rec *r)
{
	struct fts__dirent *e = &c->dir[d][pos / FTS__CHUNK_RECS];
	struct fts__chunk *ch = fts__chunk_at(c, FTS__LD(e->chunk));
	size_t i = pos % FTS__CHUNK_RECS;

	FTS__ST(ch->key[i], key);
	store_rec(&ch->rec[i], r);
	if (i % 8 == 0) {   /* the chunk's index (history.h's FTS__SUM_KEYS) */
		uint64_t *sum = c->sum + (size_t)FTS__LD(e->chunk) * FTS__SUM_KEYS;
		FTS__ST(sum[8 + i / 8], key);
		if (i % 64 == 0)
			FTS__ST(sum[i / 64], key);
	}
	if (i == 0)
		FTS__ST(e->first, key);
}

static void store_end(struct fts__end *d, const struct fts__end *e)
{
	FTS__ST(d->key, e->key);
	store_rec(&d->rec, &e->rec);
	FTS__ST(d->grow, e->grow);
}

static void store_pub(struct fts__pub *d, const struct fts__pub *p)
{
	FTS__ST(d->newest, p->newest);
	FTS__ST(d->nfinal, p->nfinal);
	FTS__ST(d->dir, p->dir);
	FTS__ST(d->nprov, p->nprov);
	FTS__ST(d->nrecent, p->nrecent);
	store_end(&d->head, &p->head);
	store_end(&d->tail, &p->tail);
	for (uint32_t i = 0; i < p->nprov; i++) {
		FTS__ST(d->pkey[i], p->pkey[i]);
		store_rec(&d->prov[i], &p->prov[i]);
	}
	for (uint32_t i = 0; i < p->nrecent; i++) {
		FTS__ST(d->rkey[i], p->rkey[i]);
		store_rec(&d->recent[i], &p->recent[i]);
	}
}

/* Publish state p through the latch (history.h): readers move to the old copy while the
 * other is rewritten, then to the new one while the old is. The state's copy of the
 * newest final segments is made here, from the chunks p lists, whatever made p. */
static void publish(struct fts_calib *c, struct fts__pub *p)
{
	struct fts__hot *h = c->hot;
	unsigned l = FTS__LD(h->latch);

	p->nrecent = p->nfinal < FTS__PUB_RECENT ? p->nfinal : FTS__PUB_RECENT;
	for (uint32_t i = 0; i < p->nrecent; i++)
		get_at(c, p->dir, p->nfinal - p->nrecent + i, &p->rkey[i], &p->recent[i]);
	fts__latch_flip(h);
	store_pub(&h->pub[l & 1], p);
	fts__latch_flip(h);
	store_pub(&h->pub[(l + 1) & 1], p);
	c->w->pub = *p;
}

/* ---- the writer ---------------------------------------------------------------------- */

/* Relative to the origin; counters and readings may lie anywhere in their ranges. */
static struct fts__pt pt_of(const struct given *s, uint64_t ox, int64_t oy)
{
	__int128 xi = (__int128)s->x - ox, ri = (__int128)s->r - oy;

	return (struct fts__pt){ .x = fts__estimate_d128(xi), .h = (double)s->h, .r = fts__estimate_d128(ri),
				 .step = s->step, .xi = xi, .ri = ri };
}

/* The raw samples as the rules see them, in the open run's coordinates: the interval
 * from p[k] to p[k+1] has verdict step[k] (rule 3) and band band[k] (rule 4), from what
 * is known now (the last ones are provisional). */
struct view {
	struct fts__pt p[RAW];
	struct fts__ival iv[RAW];
	int step[RAW];
	struct fts__band band[RAW];
	int may_step[RAW];   /* rule 5: a step may hide in it */
};

/* The points in the open run's coordinates (after its anchor moved). */
static void view_points(const struct fts__writer *w, struct view *v)
{
	for (unsigned i = 0; i < w->ns; i++)
		v->p[i] = pt_of(&w->s[i], w->ax, w->ay);
}

/* Everything the rules say of the raw samples: rates and verdicts for all intervals,
 * bands from s[cur] on (those before are consumed). */
static void make_view(const struct fts__writer *w, struct view *v)
{
	int n = (int)w->ns;

	view_points(w, v);
	for (int k = 0; k + 1 < n; k++)
		v->iv[k] = fts__estimate_ival_of(&v->p[k], &v->p[k + 1]);
	for (int k = 0; k + 1 < n; k++)
		v->step[k] = fts__estimate_is_step(&v->iv[k], k ? &v->iv[k - 1] : NULL,
						   k + 2 < n ? &v->iv[k + 1] : NULL);
	for (int k = 0; k + 1 < n; k++)
		v->iv[k].step = v->step[k];
	for (int k = (int)w->cur; k + 1 < n; k++) {
		struct fts__ival l, r;
		int hl = fts__estimate_neighbour(v->p, v->step, n, k, -1, &l);
		int hr = fts__estimate_neighbour(v->p, v->step, n, k, 1, &r);
		v->band[k] = fts__estimate_band_of(&v->iv[k], hl ? &l : NULL, hr ? &r : NULL, w->tol);
		v->may_step[k] = v->step[k] || !hl || !hr ||
				 !fts__estimate_rate_change(&v->iv[k], &l, &r, w->tol);
		if (!v->may_step[k])
			v->band[k].lag = fts__estimate_lag(&v->iv[k], &l, &r, w->tol);
	}
}

/* The open run's bound at its slope now: the farthest of its envelopes. */
static double run_err(const struct fts__writer *w)
{
	double s = fts__estimate_fit_slope(&w->fit), e = 0;

	for (unsigned i = 0; i < w->nenv; i++) {
		double d = fts__estimate_env_dist(&w->env[i], 0, w->ayf, s);
		e = d > e || d != d ? d : e;   /* a NaN shows, never hides */
	}
	return e;
}

/* The open run as a segment from its anchor to end. */
static void run_out(const struct fts__writer *w, uint64_t end, struct fts__seg_line *o)
{
	*o = (struct fts__seg_line){ .key = w->ax, .end = end, .oy = w->ay, .y0 = w->ayf,
			   .s = fts__estimate_fit_slope(&w->fit), .err = w->err };
}

/* A new run from (x, y at oy + yf). */
static void run_start(struct fts__writer *w, uint64_t x, int64_t oy, double yf)
{
	double whole = floor(yf);
	__int128 y = (__int128)oy + fts__estimate_round_i64(whole);

	w->ax = x;
	w->ay = y > INT64_MAX ? INT64_MAX : y < INT64_MIN ? INT64_MIN : (int64_t)y;
	w->ayf = yf - (double)((__int128)w->ay - oy);
	fts__estimate_fit_start(&w->fit, 0, w->ayf);
	w->nenv = 0;
}

/* Interval k as a segment of its own, worked out from its own start (exact, and
 * small), so that the published line is the one the bound was measured against. The
 * line starts at y0 (relative to the start's reading), or for a step runs through its
 * envelope's middles (rule 7). */
static void interval_out(const struct fts__writer *w, const struct view *v, unsigned k, double y0,
			 struct fts__seg_line *o)
{
	const struct given *a = &w->s[k], *b = &w->s[k + 1];
	struct fts__pt pa = pt_of(a, a->x, a->r), pb = pt_of(b, a->x, a->r);
	struct fts__env env = fts__estimate_envelope(&pa, &pb, &v->band[k], v->may_step[k]);
	double s;

	*o = (struct fts__seg_line){ .key = a->x, .end = b->x, .oy = a->r, .y0 = y0, .step = v->step[k] };
	if (v->step[k])
		fts__estimate_step_line(&env, &o->y0, &s);
	else
		s = (pb.r - y0) / pb.x;
	o->s = s;
	o->err = fts__estimate_env_dist(&env, 0, o->y0, s);
}

/* Consume the interval from s[cur], final now: it joins the open run, or closes it
 * (rule 6), or is a step (rule 7). The segments that became final go to o. */
static void consume(struct fts__writer *w, struct view *v, struct fts__seg_line *o, unsigned *no)
{
	unsigned k = w->cur;
	struct fts__env env;
	struct fts__fit f;
	double u, c, e_iv, s_run;

	if (!w->have_first_band) {
		w->first_band = v->band[k];
		w->have_first_band = 1;
	}
	if (v->step[k]) {
		if (w->nenv)
			run_out(w, w->s[k].x, &o[(*no)++]);
		interval_out(w, v, k, 0, &o[(*no)++]);
		run_start(w, w->s[k + 1].x, w->s[k + 1].r, 0);
		view_points(w, v);
		return;
	}
	env = fts__estimate_envelope(&v->p[k], &v->p[k + 1], &v->band[k], v->may_step[k]);
	u = fts__estimate_pt_uncertainty(&v->p[k + 1], v->band[k].hi);
	c = v->p[k + 1].r;
	if (w->nenv) {
		s_run = fts__estimate_fit_slope(&w->fit);
		/* the interval's own scale: its envelope about its chord */
		e_iv = fts__estimate_env_dist(&env, v->p[k].x, v->p[k].r, v->iv[k].rate);
		f = w->fit;
		if (fts__estimate_rule6_run_ends(w->nenv, w->err, e_iv, v->p[k + 1].x, v->p[k + 1].r) ||
		    !fts__estimate_fit_add(&f, v->p[k + 1].x, c - u, c + u)) {
			/* close the run at s[k]; the next starts where it ended */
			double y_end = w->ayf + s_run * v->p[k].x;
			run_out(w, w->s[k].x, &o[(*no)++]);
			run_start(w, w->s[k].x, w->ay, y_end);
			view_points(w, v);
			env = fts__estimate_envelope(&v->p[k], &v->p[k + 1], &v->band[k], v->may_step[k]);
			c = v->p[k + 1].r;
			fts__estimate_fit_add(&w->fit, v->p[k + 1].x, c - u, c + u);
		} else {
			w->fit = f;
		}
	} else {
		fts__estimate_fit_add(&w->fit, v->p[k + 1].x, c - u, c + u);
	}
	w->env[w->nenv++] = env;
	w->err = run_err(w);
}

/* After a consume: s[cur + 1] is the last consumed; what is older than the rules look
 * back at is dropped, from the samples and their view. */
static void advance(struct fts__writer *w, struct view *v)
{
	if (++w->cur > KEEP_BEFORE) {
		unsigned n = w->ns - 1;
		memmove(&w->s[0], &w->s[1], n * sizeof(w->s[0]));
		memmove(&v->p[0], &v->p[1], n * sizeof(v->p[0]));
		memmove(&v->iv[0], &v->iv[1], n * sizeof(v->iv[0]));
		memmove(&v->step[0], &v->step[1], n * sizeof(v->step[0]));
		memmove(&v->band[0], &v->band[1], n * sizeof(v->band[0]));
		memmove(&v->may_step[0], &v->may_step[1], n * sizeof(v->may_step[0]));
		w->ns--;
		w->cur--;
	}
}

/* The provisional end of the list: the open run, then every interval not yet final. */
static void provisional(const struct fts__writer *w, const struct view *v, struct fts__seg_line *o,
			unsigned *no)
{
	unsigned k = w->cur;
	double y = 0;   /* where the next line starts, relative to that sample's reading */

	if (w->nenv) {
		run_out(w, w->s[k].x, &o[*no]);
		/* the run's end, from the anchor's reading to s[k]'s */
		y = (double)((__int128)w->ay - w->s[k].r) + o[*no].y0 + o[*no].s * v->p[k].x;
		(*no)++;
	}
	for (; k + 1 < w->ns; k++, y = 0)
		interval_out(w, v, k, y, &o[(*no)++]);
}

/* ---- the memory limit (rule 10) ------------------------------------------------------ */

/* Segment pos of the writer's list, read back by the writer (no one else writes):
 * final ones from the chunks, then provisional. */
static void seg_get(const struct fts_calib *c, size_t pos, uint64_t *key, struct fts__rec *r)
{
	const struct fts__pub *p = &c->w->pub;

	if (pos >= p->nfinal) {
		*key = p->pkey[pos - p->nfinal];
		*r = p->prov[pos - p->nfinal];
		return;
	}
	get_at(c, p->dir, pos, key, r);
}

/* A segment as a line: value at its key (relative to oy) and slope, ns per tick. */
#if FTS__CHECKING
/* The writer's list, whole: keys rising and before the newest sample, each chunk's
 * first key the directory's, the state's copy of the last final ones theirs. Checked
 * after each compaction, and after every 64th final segment published. */
static int list_ok(const struct fts_calib *c)
{
	const struct fts__pub *p = &c->w->pub;
	size_t n = (size_t)p->nfinal + p->nprov;
	uint64_t prev = 0, key;
	struct fts__rec r;

	for (size_t i = 0; i < n; i++) {
		seg_get(c, i, &key, &r);
		if ((i && key <= prev) || key >= p->newest || (i == 0 && key != p->head.key))
			return 0;
		if (i < p->nfinal && i % FTS__CHUNK_RECS == 0 &&
		    c->dir[p->dir][i / FTS__CHUNK_RECS].first != key)
			return 0;
		if (i < p->nfinal && i + p->nrecent >= p->nfinal &&   /* the state's copy */
		    (p->rkey[i + p->nrecent - p->nfinal] != key ||
		     memcmp(&p->recent[i + p->nrecent - p->nfinal], &r, sizeof(r))))
			return 0;
		prev = key;
	}
	return n > 0;
}

static uint64_t key_at(const struct fts_calib *c, size_t pos)
{
	uint64_t key;
	struct fts__rec r;

	seg_get(c, pos, &key, &r);
	return key;
}
#endif

/* The line carried on before the first segment (key, r) at the first interval's band. */
static void head_of(const struct fts__band *hb, uint64_t key, const struct fts__rec *r,
		    struct fts__end *e)
{
	e->key = key;
	fts__estimate_rule9_end(key, r->r0, 0, (double)r->err, hb, &e->rec, &e->grow);
}

/* Merge final segments until at most target remain, in passes of the pairs rule 10
 * picks, or drop the oldest where only steps are left. The merged list is written into
 * free chunks, listed by the other directory, and published as a new state; the old
 * chunks become free. */
static int compact(struct fts_calib *c, size_t target)
{
	struct fts__writer *w = c->w;
	struct fts__pub next = w->pub;
	size_t n = next.nfinal;
	uint64_t *key = malloc((n + 1) * sizeof(*key));
	struct fts__rec *rec = malloc((n + 1) * sizeof(*rec));
	struct fts__merge_cand *cd = malloc((n + 1) * sizeof(*cd));
	uint32_t nold = w->nclaimed, used, nd = next.dir ^ 1;
	uint32_t *old = malloc(((size_t)nold + 1) * sizeof(*old));
	int rc = -ENOMEM;

	if (!key || !rec || !cd || !old)
		goto out;
	for (size_t i = 0; i < n; i++)
		seg_get(c, i, &key[i], &rec[i]);
	key[n] = next.nprov ? next.pkey[0] : next.newest;
	while (n > target) {
		size_t m = 0, want = n - target;
		unsigned char *taken = malloc(n);
		if (!taken)
			goto out;
		if (!fts__estimate_rule10_pick(key, rec, n, want, cd, taken)) {   /* all steps: the oldest go */
			free(taken);
			memmove(&key[0], &key[want], (n - want + 1) * sizeof(*key));
			memmove(&rec[0], &rec[want], (n - want) * sizeof(*rec));
			n -= want;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			if (taken[i] == 2)
				continue;
			if (taken[i] == 1) {
				struct fts__seg_line o;
				fts__estimate_rule10_merge(key[i], &rec[i], key[i + 1], &rec[i + 1], key[i + 2], &o);
				fts__estimate_rule8_rec(&o, &rec[m]);
			} else {
				rec[m] = rec[i];
			}
			key[m++] = key[i];
		}
		key[m] = key[n];
		n = m;
		free(taken);
	}
	/* Lay the list out in free chunks, listed by the other directory. */
	for (uint32_t k = 0; k < nold; k++)
		old[k] = c->dir[next.dir][k].chunk;
	used = (uint32_t)((n + FTS__CHUNK_RECS - 1) / FTS__CHUNK_RECS);
	for (uint32_t k = 0; k < used; k++) {
		uint32_t id = chunk_get(c);
		if (id == UINT32_MAX) {
			while (k--)
				w->spare[w->nspare++] = c->dir[nd][k].chunk;
			goto out;
		}
		FTS__ST(c->dir[nd][k].chunk, id);
	}
	for (size_t i = 0; i < n; i++)
		put_at(c, nd, i, key[i], &rec[i]);
	next.nfinal = (uint32_t)n;
	next.dir = nd;
	if (n)
		head_of(&w->first_band, key[0], &rec[0], &next.head);
	else if (next.nprov)
		head_of(&w->first_band, next.pkey[0], &next.prov[0], &next.head);
	publish(c, &next);
	for (uint32_t k = 0; k < nold; k++)
		w->spare[w->nspare++] = old[k];
	w->nclaimed = used;
	FTS__ASSERT(list_ok(c));
	rc = 0;
out:
	free(key);
	free(rec);
	free(cd);
	free(old);
	return rc;
}

/* ---- adding a sample ------------------------------------------------------------------ */

int fts_calib_add(struct fts_calib *c, uint64_t before, int64_t ref_ns, uint64_t after)
{
	return fts__calib_add_sample(c, before, ref_ns, after, 0);
}

int fts__calib_add_sample(struct fts_calib *c, uint64_t before, int64_t ref_ns, uint64_t after,
			  int step)
{
	struct fts__writer *w;
	struct fts__seg_line o[MAX_OUT];
	struct fts__rec rec[MAX_OUT];
	struct fts__band bd;
	struct fts__pub next;
	struct view v;
	unsigned nfin = 0, no;
	uint64_t mid;
	size_t nfinal, keep;

	if (!c || before > after)
		return fts__fail(EINVAL);
	w = c->w;
	if (!w || w->loaded)
		return fts__fail(EPERM);
	mid = before + (after - before) / 2;
	if (w->added && (before < w->last_after || mid <= w->s[w->ns - 1].x))
		return fts__fail(EINVAL);
	/* Room first, so that a history that cannot take the sample is left as it was. */
	if ((keep = fts__estimate_rule10_keep(w->pub.nfinal, MAX_ADDED, w->max_recs)) && compact(c, keep) < 0)
		return fts__fail(ENOMEM);
	if (reserve(c, w->pub.nfinal + MAX_OUT) < 0)
		return fts__fail(ENOMEM);

	w->s[w->ns++] = (struct given){ .x = mid, .h = after - mid, .r = ref_ns, .step = step };
	w->last_after = after;
	if (w->added++ == 0)
		run_start(w, mid, ref_ns, 0);
	make_view(w, &v);
	while (w->ns - 1 - w->cur > FINAL_AFTER) {
		consume(w, &v, o, &nfin);
		advance(w, &v);
	}
	no = nfin;
	provisional(w, &v, o, &no);
	FTS__ASSERT(no <= MAX_OUT && no - nfin <= FTS__MAX_PROV);
	for (unsigned i = 0; i < no; i++)
		fts__estimate_rule8_rec(&o[i], &rec[i]);
	nfinal = w->pub.nfinal;
	if (nfinal + no == 0)
		return 0;   /* one sample: nothing to convert with yet */

	/* The segments that became final go to the chunks, where no published state looks
	 * yet; the rest, and the lines carried on at the ends, into the next state. */
	for (unsigned i = 0; i < nfin; i++) {
		FTS__ASSERT(i == 0 ? nfinal == 0 || o[0].key > key_at(c, nfinal - 1)
				   : o[i].key > o[i - 1].key);
		put_at(c, c->w->pub.dir, nfinal + i, o[i].key, &rec[i]);
	}
	next = w->pub;
	next.nfinal = (uint32_t)(nfinal + nfin);
	next.nprov = no - nfin;
	for (unsigned i = nfin; i < no; i++) {
		next.pkey[i - nfin] = o[i].key;
		next.prov[i - nfin] = rec[i];
	}
	next.newest = w->s[w->ns - 1].x;
	/* From the newest sample at its interval's band; from the first segment at the first
	 * interval's. */
	bd = v.band[w->ns - 2];
	next.tail.key = next.newest;
	fts__estimate_rule9_end(next.newest, w->s[w->ns - 1].r, 0,
		 fts__estimate_pt_uncertainty(&v.p[w->ns - 1], bd.hi), &bd, &next.tail.rec, &next.tail.grow);
	if (nfinal == 0) {   /* the first segment is new, or provisional */
		const struct fts__band *hb = w->have_first_band ? &w->first_band : &v.band[w->cur];
		head_of(hb, o[0].key, &rec[0], &next.head);
	}
	publish(c, &next);
	FTS__ASSERT(next.nfinal % 64 || list_ok(c));
	return 0;
}

int fts__calib_in_sync(const struct fts_calib *c)
{
	const struct fts__writer *w = c ? c->w : NULL;

	if (!w || w->loaded)
		return 1;
	/* after a whole add, what is published ends at the newest sample taken */
	return w->pub.newest == (w->added >= 2 ? w->s[w->ns - 1].x : 0) &&
	       fts__calib_newest_counter(c) == w->pub.newest;
}

/* ---- histories read from files, or copied ------------------------------------------- */

/* A history for n segments that the caller puts (fts__calib_put_loaded) and then
 * publishes (fts__calib_publish_loaded); it takes no samples after. */
struct fts_calib *fts__calib_new_loaded(size_t n)
{
	struct fts_calib_opts o = { .size = sizeof(o) };
	struct fts_calib *c;

	o.max_bytes = (n + 64) * (sizeof(struct fts__rec) + sizeof(uint64_t));
	if (!(c = fts_calib_new_opts(&o)))
		return NULL;
	if (n > c->w->max_recs || reserve(c, n) < 0) {
		fts_calib_free(c);
		return fts__fail_null(ENOMEM);
	}
	c->w->loaded = 1;
	return c;
}

/* A record from outside, checked as a reader would need it, with the fast path's
 * flag worked out here (never taken from outside): it spans [key, end]. */
static int loaded_rec(struct fts__rec *r, uint64_t key, uint64_t end)
{
	if (r->shift > 62 || (r->flags & ~(FTS__SEG_STEP | FTS__SEG_FAST)) || end < key)
		return -1;
	if (r->err > (UINT64_C(1) << 63))
		r->err = UINT64_C(1) << 63;
	r->flags &= FTS__SEG_STEP;
	if (fts__seg_fast(r->r0, r->mult, r->shift, end - key))
		r->flags |= FTS__SEG_FAST;
	return 0;
}

int fts__calib_put_loaded(struct fts_calib *c, size_t pos, uint64_t key, uint64_t end,
			  struct fts__rec r)
{
	uint64_t prev;
	struct fts__rec pr;

	if (pos > 0) {
		get_at(c, 0, pos - 1, &prev, &pr);
		if (key <= prev)
			return -1;
	}
	if (loaded_rec(&r, key, end) < 0)
		return -1;
	put_at(c, 0, pos, key, &r);
	return 0;
}

int fts__calib_publish_loaded(struct fts_calib *c, size_t n, struct fts__end head,
			      struct fts__end tail, uint64_t newest)
{
	uint64_t first, last;
	struct fts__rec r;
	struct fts__pub p = { .newest = newest, .nfinal = (uint32_t)n };

	if (n == 0 || n > UINT32_MAX)
		return -1;
	get_at(c, 0, 0, &first, &r);
	get_at(c, 0, n - 1, &last, &r);
	/* the ends where the list ends; their lines carried on, never growing less */
	if (head.key != first || tail.key != newest || last > newest || head.grow < 0 ||
	    tail.grow < 0 || loaded_rec(&head.rec, first, first) < 0 ||
	    loaded_rec(&tail.rec, newest, newest) < 0)
		return -1;
	head.rec.flags = tail.rec.flags = 0;
	p.head = head;
	p.tail = tail;
	publish(c, &p);
	return 0;
}

/* ---- creating and freeing ------------------------------------------------------------ */

void fts__calib_reset(struct fts_calib *c)
{
	struct fts__writer *w = c->w;
	struct fts__pub empty = { .dir = w->pub.dir };

	publish(c, &empty);
	for (uint32_t k = 0; k < w->nalloc; k++)
		w->spare[k] = k;
	w->nspare = w->nalloc;
	w->nclaimed = 0;
	w->ns = w->cur = w->nenv = 0;
	w->added = w->last_after = 0;
	w->have_first_band = 0;
}

/* The options as this library knows them: size-first, and whatever follows the known
 * fields in a larger struct must be zero (a newer caller asking for something this
 * library cannot do gets EINVAL, not silence). */
static int opts_read(const struct fts_calib_opts *o, struct fts_calib_opts *v)
{
	*v = (struct fts_calib_opts){ 0 };
	if (!o)
		return 0;
	if (o->size < offsetof(struct fts_calib_opts, max_samples) + sizeof(o->max_samples))
		return -EINVAL;
	for (size_t i = sizeof(*o); i < o->size; i++)
		if (((const unsigned char *)o)[i])
			return -EINVAL;
	memcpy(v, o, o->size < sizeof(*v) ? o->size : sizeof(*v));
	return 0;
}

/* The region a history with these options needs: its chunks (dircap) and length; the
 * segments it may keep. */
int fts__calib_dims(const struct fts_calib_opts *opts, uint32_t *dircap, size_t *len,
		    size_t *recs)
{
	struct fts_calib_opts o;
	size_t d0, d1, pool, bytes, chunks;

	if (opts_read(opts, &o) < 0 || (o.max_samples && o.max_samples < MIN_MAX_SAMPLES))
		return -EINVAL;
	bytes = o.max_bytes ? o.max_bytes : DEFAULT_MAX_BYTES;
	*recs = bytes / (sizeof(struct fts__rec) + sizeof(uint64_t));
	if (o.max_samples && o.max_samples - 1 < *recs)
		*recs = o.max_samples - 1;
	if (*recs < MAX_ADDED + 1)     /* a max_bytes too small for the provisional end */
		return -EINVAL;
	/* Chunks for the list, twice (a merge builds the new list beside the old). */
	chunks = 2 * ((*recs + MAX_OUT) / FTS__CHUNK_RECS + 2);
	if (chunks > UINT32_MAX / 2)
		return -EINVAL;
	*dircap = (uint32_t)chunks;
	*len = fts__region_layout(*dircap, &d0, &d1, &pool);
	return 0;
}

/* The writer's index of dircap chunks (history.h's FTS__SUM_KEYS): pages come as
 * chunks fill. */
static size_t sum_len(uint32_t dircap)
{
	return (size_t)dircap * FTS__SUM_KEYS * sizeof(uint64_t);
}

/* A history over a region of memory: the caller's (zeroed, len from fts__calib_dims), or
 * reserved here when region is NULL (pages come as chunks fill), in *c; 0, or -errno
 * with *c left alone. */
int fts__calib_init_at(struct fts_calib *c, const struct fts_calib_opts *opts, void *region,
		       size_t len)
{
	struct fts_calib_opts o;
	struct fts_calib v = { 0 };
	struct fts__writer *w;
	uint32_t dircap;
	size_t need, recs;
	int rc;

	if ((rc = fts__calib_dims(opts, &dircap, &need, &recs)) < 0 || (region && len < need))
		return rc < 0 ? rc : -EINVAL;
	opts_read(opts, &o);
	w = calloc(1, sizeof(*w));
	if (!region) {
		region = mmap(NULL, need, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		v.region = region = region == MAP_FAILED ? NULL : region;
	}
	if (w)
		w->spare = malloc((size_t)dircap * sizeof(*w->spare));
	v.sum = mmap(NULL, sum_len(dircap), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (v.sum == MAP_FAILED)
		v.sum = NULL;
	if (!w || !w->spare || !region || !v.sum) {
		if (v.region)
			munmap(v.region, need);
		if (v.sum)
			munmap(v.sum, sum_len(dircap));
		if (w)
			free(w->spare);
		free(w);
		return -ENOMEM;
	}
	fts__calib_layout(&v, region, dircap);
	v.region_len = need;
	v.flags_ok = FTS__SEG_STEP | FTS__SEG_FAST;
	v.w = w;
	w->tol = (o.rate_tol_ppb ? o.rate_tol_ppb : DEFAULT_RATE_TOL_PPB) * 1e-9;
	w->max_recs = recs;
	*c = v;
	return 0;
}

struct fts_calib *fts__calib_new_at(const struct fts_calib_opts *opts, void *region, size_t len)
{
	struct fts_calib *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return fts__fail_null(ENOMEM);
	if ((rc = fts__calib_init_at(c, opts, region, len)) < 0) {
		free(c);
		return fts__fail_null(-rc);
	}
	return c;
}

void fts__calib_layout(struct fts_calib *c, void *region, uint32_t dircap)
{
	size_t d0, d1, pool;

	fts__region_layout(dircap, &d0, &d1, &pool);
	c->hot = region;
	c->dir[0] = (struct fts__dirent *)(void *)((char *)region + d0);
	c->dir[1] = (struct fts__dirent *)(void *)((char *)region + d1);
	c->pool = (char *)region + pool;
	c->dircap = dircap;
}

struct fts_calib *fts_calib_new_opts(const struct fts_calib_opts *opts)
{
	return fts__calib_new_at(opts, NULL, 0);
}

struct fts_calib *fts_calib_new(void)
{
	return fts_calib_new_opts(NULL);
}

void fts_calib_free(struct fts_calib *c)
{
	if (!c)
		return;
	if (c->region)
		munmap(c->region, c->region_len);
	if (c->sum)
		munmap(c->sum, sum_len(c->dircap));
	if (c->w)
		free(c->w->spare);
	free(c->w);
	free(c);
}
