/* test_search.c - the read side's searches (src/history.h): the directory's rounds
 * (fts__dir_search) and a full chunk's, without its index (fts__chunk_search) and with
 * the writer's (fts__sum_search), each against the plain binary search (fts__search)
 * on rising lists of every length, and within its list on lists that do not rise (a
 * hostile memory). Then a writer's history, with merges: every segment found through
 * its index, or without it as another process reads the history, or in the state's
 * copy of the newest, is the one the list holds; and a state whose counts exceed its
 * room is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testmain.h"
#include "history.h"
#include "faststamp.h"
#include "daysim.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Rising keys from base, gaps of 1 to span. */
static void rising(uint64_t *k, size_t n, size_t stride, uint64_t base, uint64_t span)
{
	for (size_t i = 0; i < n; i++) {
		base += 1 + rnd() % span;
		*(uint64_t *)(void *)((char *)k + i * stride) = base;
	}
}

/* The values a search must place: each key, one before and one after it, and some
 * between and past the last. */
static void probes(const uint64_t *k, size_t n, size_t stride, uint64_t *x, size_t *nx)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t v = *(const uint64_t *)(const void *)((const char *)k + i * stride);
		x[m++] = v;
		x[m++] = v - 1;
		x[m++] = v + 1;
	}
	x[m++] = UINT64_MAX;
	*nx = m;
}

/* The writer's index of one chunk, as calib.c's put_at writes it. */
static void sum_of(const struct fts__chunk *ch, uint64_t *sum)
{
	memset(sum, 0, FTS__SUM_KEYS * sizeof(*sum));
	for (uint32_t i = 0; i < FTS__CHUNK_RECS; i += 8) {
		sum[8 + i / 8] = ch->key[i];
		if (i % 64 == 0)
			sum[i / 64] = ch->key[i];
	}
}

static void chunk_search_matches(void **state)
{
	struct fts__chunk *ch = aligned_alloc(64, sizeof(*ch));
	uint64_t *x = malloc((3 * FTS__CHUNK_RECS + 1) * sizeof(*x)), sum[FTS__SUM_KEYS];
	size_t nx;

	(void)state;
	assert_non_null(ch);
	assert_non_null(x);
	for (int round = 0; round < 200; round++) {
		rising(ch->key, FTS__CHUNK_RECS, sizeof(uint64_t), rnd() >> 2, round % 2 ? 3 : 1000000);
		sum_of(ch, sum);
		probes(ch->key, FTS__CHUNK_RECS, sizeof(uint64_t), x, &nx);
		for (size_t j = 0; j < nx; j++) {
			if (x[j] < ch->key[0])
				continue;   /* the caller's promise: key[0] <= x */
			uint32_t want = fts__search(ch->key, FTS__CHUNK_RECS, x[j], sizeof(uint64_t));
			assert_int_equal(fts__chunk_search(ch, x[j]), want);
			assert_int_equal(fts__sum_search(sum, ch, x[j]), want);
		}
	}
	/* Keys that do not rise: any answer, but in the chunk. */
	for (int round = 0; round < 2000; round++) {
		for (uint32_t i = 0; i < FTS__CHUNK_RECS; i++)
			ch->key[i] = rnd() % 4 ? rnd() : 0;
		for (uint32_t i = 0; i < FTS__SUM_KEYS; i++)
			sum[i] = rnd() % 4 ? rnd() : 0;
		uint64_t v = rnd();
		assert_true(fts__chunk_search(ch, v) < FTS__CHUNK_RECS);
		assert_true(fts__sum_search(sum, ch, v) < FTS__CHUNK_RECS);
	}
	free(x);
	free(ch);
}

static void dir_search_matches(void **state)
{
	enum { MAXN = 700, PAST = 64 };
	struct fts__dirent *dir = calloc(MAXN + PAST, sizeof(*dir));
	uint64_t *x = malloc((3 * MAXN + 2) * sizeof(*x));
	size_t nx;

	(void)state;
	assert_non_null(dir);
	assert_non_null(x);
	for (uint32_t n = 0; n <= MAXN; n++) {
		rising(&dir[0].first, n, sizeof(*dir), rnd() >> 2, n % 3 ? 2 : 1u << 20);
		/* What lies past the list counts as no key: an entry read there shows. */
		for (uint32_t i = n; i < MAXN + PAST; i++)
			dir[i].first = 0;
		probes(&dir[0].first, n, sizeof(*dir), x, &nx);
		x[nx++] = 0;
		for (size_t j = 0; j < nx; j++)
			assert_int_equal(fts__dir_search(dir, n, x[j]),
					 fts__search(&dir[0].first, n, x[j], sizeof(*dir)));
	}
	for (uint32_t n = 0; n <= MAXN; n++) {
		for (uint32_t i = 0; i < n; i++)
			dir[i].first = rnd() % 4 ? rnd() : 0;
		assert_true(fts__dir_search(dir, n, rnd()) < (n ? n : 1));
	}
	free(x);
	free(dir);
}

/* Final segment i of state p as its chunk holds it. */
static void listed(const struct fts_calib *c, const struct fts__pub *p, uint32_t i, uint64_t *key,
		   struct fts__rec *r)
{
	const struct fts__chunk *ch =
		fts__chunk_at(c, c->dir[p->dir & 1][i / FTS__CHUNK_RECS].chunk);

	*key = ch->key[i % FTS__CHUNK_RECS];
	*r = ch->rec[i % FTS__CHUNK_RECS];
	r->flags &= c->flags_ok;
}

/* Every final segment of history c's published state, found at its key and at one
 * before the next key, is the one its chunk holds: its key, its end, its line; the
 * newest through the state's copy of them, the others through the chunks; and
 * fts__pub_segment gives it. Returns how many chunks hold them. */
static uint32_t found_as_listed(const struct fts_calib *c)
{
	const struct fts__pub *p = fts__pub_of(c, fts__latch_begin(c));
	uint32_t nf = FTS__LD(p->nfinal), chunks = 0;
	uint64_t key, next;
	struct fts__rec r, rn;
	struct fts__line l;

	assert_int_equal(p->nrecent, nf < FTS__PUB_RECENT ? nf : FTS__PUB_RECENT);
	for (uint32_t i = 0; i < nf; i++) {
		listed(c, p, i, &key, &r);
		assert_int_equal(fts__pub_segment(c, p, i, &next, &rn), 0);
		assert_true(next == key && memcmp(&r, &rn, sizeof(r)) == 0);
		if (i + 1 < nf)
			listed(c, p, i + 1, &next, &rn);
		else
			next = p->nprov ? p->pkey[0] : p->newest;
		assert_int_equal(fts__calib_find(c, key, &l), 0);
		assert_true(l.c0 == key && l.c1 == next);
		assert_true(l.r0 == r.r0 && l.mult == r.mult && l.err == r.err &&
			    l.shift == r.shift && l.flags == r.flags);
		assert_int_equal(fts__calib_find(c, next - 1, &l), 0);
		assert_true(l.c0 == key && l.c1 == next);
		chunks += i % FTS__CHUNK_RECS == 0;
	}
	return chunks;
}

static void writer_index(void **state)
{
	struct fts_calib_opts o = { .size = sizeof(o), .max_samples = 3000 };
	struct fts_calib *c = fts_calib_new(), *small = fts_calib_new_opts(&o);
	struct daysim d = { 0 };
	struct fts_calib view;

	(void)state;
	assert_non_null(c);
	assert_non_null(small);
	assert_non_null(c->sum);
	assert_int_equal(daysim_ntp(&d, 80000, 7), 0);
	for (size_t i = 0; i < d.nsamp; i++) {
		assert_int_equal(fts_calib_add(c, d.b[i], d.r[i], d.a[i]), 0);
		/* the small one merges (rule 10) into other chunks, again and again */
		assert_int_equal(fts_calib_add(small, d.b[i], d.r[i], d.a[i]), 0);
		if (i % 10000 == 9999)
			found_as_listed(small);
	}
	assert_true(found_as_listed(c) >= 8);   /* full chunks, each searched by its index */
	view = *c;   /* as another process reads it: no index */
	view.w = NULL;
	view.sum = NULL;
	assert_true(found_as_listed(&view) >= 8);
	assert_true(found_as_listed(small) >= 4);
	print_message("knots kept %zu, %zu in the history that merges\n", fts_calib_count(c), fts_calib_count(small));
	assert_true(fts_calib_count(small) < 3000 && fts_calib_count(c) > 2 * 3000);   /* merged */
	daysim_free(&d);
	fts_calib_free(small);
	fts_calib_free(c);
}

/* A state whose counts exceed the room the state has for them (a hostile memory):
 * every look-up refuses it (ENODATA), and so does fts__pub_segment, before reading by
 * them. The history is a writer's, the state a copy of its published one, read through
 * a view of the copy. */
static void hostile_counts(void **state)
{
	struct fts_calib *c = fts_calib_new(), view;
	struct fts__hot *h = malloc(sizeof(*h));
	struct daysim d = { 0 };
	struct fts__pub *p;
	struct fts__line l;
	uint64_t key;
	struct fts__rec r;

	(void)state;
	assert_non_null(c);
	assert_non_null(h);
	assert_int_equal(daysim_ntp(&d, 3000, 7), 0);
	for (size_t i = 0; i < d.nsamp; i++)
		assert_int_equal(fts_calib_add(c, d.b[i], d.r[i], d.a[i]), 0);
	memcpy(h, c->hot, sizeof(*h));
	view = *c;
	view.w = NULL;
	view.sum = NULL;
	view.hot = h;
	p = &h->pub[h->latch & 1];
	assert_true(p->nfinal > FTS__PUB_RECENT && p->nrecent == FTS__PUB_RECENT);
	key = p->rkey[0];
	assert_int_equal(fts__calib_find(&view, key, &l), 0);   /* the copy as it is */
	assert_true(l.c0 == key);
	p->nrecent = FTS__PUB_RECENT + 1;
	assert_int_equal(fts__calib_find(&view, key, &l), -ENODATA);
	assert_int_equal(fts__pub_segment(&view, p, 0, &key, &r), -1);
	p->nrecent = FTS__PUB_RECENT;
	p->nprov = FTS__MAX_PROV + 1;
	assert_int_equal(fts__calib_find(&view, key, &l), -ENODATA);
	assert_int_equal(fts__pub_segment(&view, p, 0, &key, &r), -1);
	p->nprov = 0;
	p->nfinal = 3;   /* fewer final segments than the copy says */
	assert_int_equal(fts__calib_find(&view, key, &l), -ENODATA);
	assert_int_equal(fts__pub_segment(&view, p, 0, &key, &r), -1);
	daysim_free(&d);
	free(h);
	fts_calib_free(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chunk_search_matches),
		cmocka_unit_test(dir_search_matches),
		cmocka_unit_test(writer_index),
		cmocka_unit_test(hostile_counts),
	};
	return fts_test_run(tests, argc, argv);
}
