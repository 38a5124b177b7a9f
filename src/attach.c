/* attach.c - the machine's shared history (shared.h) in the process clock: looking for
 * it at the first conversion and converting with it while it is valid, leaving it for a
 * copy and the process's own, and publishing it (faststamp serve). Owns that state;
 * what it needs of the process clock (clock.c and sampler.c, which call it under its
 * lock) comes as arguments (attach.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "calib.h"
#include "faststamp/config.h"
#include "histfile.h"
#include "history.h"
#include "internal.h"
#include "shared.h"
#include "warp.h"

/* The shared history's path the first conversion looks for: FASTSTAMP_SHARED, or
 * the default path; "" for FASTSTAMP_SHARED=0 (never). */
static void wanted_path(char *path, size_t len)
{
	const char *env = getenv("FASTSTAMP_SHARED");

	snprintf(path, len, "%s", env && !strcmp(env, "0") ? "" : env && *env ? env : FTS_SHARED_PATH);
}

/* Before the first history: use the machine's shared one if FASTSTAMP_SHARED (a path;
 * 0: never) or the default path names a valid one. */
static void attach(struct fts__attached *a, struct fts__attach *s,
		   const struct fts__attach_clock *c)
{
	struct fts__head id;
	cpu_set_t need;
	char why[160];
	int with_proof, sock;

	s->tried = 1;
	wanted_path(s->path, sizeof(s->path));
	if (!s->path[0]) {
		snprintf(s->note, sizeof(s->note), "FASTSTAMP_SHARED=0");
		return;
	}
	if (!c->counter_in_use()) {
		snprintf(s->note, sizeof(s->note), "no counter in use");
		return;
	}
	/* Asked first: what this process must know of itself to check the answer, it
	 * learns while the publisher's thread answers (the round trip is most of it). */
	sock = fts__shared_ask(s->path, why, sizeof(why));
	if (sock < 0) {
		snprintf(s->note, sizeof(s->note), "%.60s: %.160s", s->path, why);
		return;
	}
	/* The clocksource of the counter's choice: one switched since is the publisher's
	 * to find (it then stops) and this process's sampler's. */
	c->clock_id(&id, 0);
	/* the publisher's proof across CPUs stands for this process's, on its CPUs (asked
	 * of the kernel only where a proof is needed) */
	with_proof = c->needs_proof();
	if (with_proof)
		fts__warp_cpus_allowed(&need);
	if (fts__shared_attach(&a->shared, sock, &id, with_proof ? &need : NULL,
			       c->counter(), why, sizeof(why)) < 0) {
		snprintf(s->note, sizeof(s->note), "%.60s: %.160s", s->path, why);
		return;
	}
	s->note[0] = '\0';
	__atomic_store_n(&a->attached, 1, __ATOMIC_RELEASE);
}

int fts__attach_locked(struct fts__attached *a, struct fts__attach *s, int own,
		       const struct fts__attach_clock *c)
{
	if (!s->tried && !own)
		attach(a, s, c);
	return a->attached;
}

void fts__attach_never(struct fts__attach *s)
{
	s->tried = 1;
}

int fts__attach_leave_locked(struct fts__attached *a, struct fts__attach *s, const char *why)
{
	if (!a->attached)
		return 0;
	/* What was converted with it converts the same from the copy. Readers that still
	 * hold the view read on: the mapping stays. */
	for (int k = 0; k < FTS__NCLK; k++)
		if (a->shared.views[k])
			__atomic_store_n(&a->frozen[k], fts__histfile_copy(a->shared.views[k]),
					 __ATOMIC_RELEASE);
	snprintf(s->note, sizeof(s->note), "left %.60s: %.160s", s->path, why);
	__atomic_store_n(&a->attached, 0, __ATOMIC_RELEASE);
	return 1;
}

void fts__attach_reset(struct fts__attached *a, struct fts__attach *s)
{
	/* Readers that still hold a view or a copy read on: neither is freed. */
	__atomic_store_n(&a->attached, 0, __ATOMIC_RELEASE);
	for (int k = 0; k < FTS__NCLK; k++)
		__atomic_store_n(&a->frozen[k], NULL, __ATOMIC_RELEASE);
	s->tried = 0;
	s->path[0] = s->note[0] = '\0';
}

FTS__HOT int fts__attach_covers(struct fts__attached *a, uint64_t newest,
				 uint64_t (*counter)(void), char *why, size_t len)
{
	return newest <= fts__calib_newest_counter(a->shared.view) ||
	       fts__shared_alive(&a->shared, counter(), why, len);
}

int fts__attach_resolution(const struct fts__attached *a, int64_t *ns, uint64_t *ticks)
{
	return a->attached && fts__shared_resolution(a->shared.head, ns, ticks);
}

void fts__attach_state(const struct fts__attached *a, char *proof, size_t len,
		       int64_t *period_ns)
{
	const struct fts__shm_head *h = a->shared.head;

	if (!a->attached)
		return;
	if (h->proof == FTS__SHM_PROOF_PROVEN)
		snprintf(proof, len, "proven by the machine's history's publisher (faststamp serve, "
			 "pid %d)", (int)h->pid);
	*period_ns = (int64_t)h->interval_ns;
}

void fts__attach_sharing(const struct fts__attached *a, const struct fts__attach *s, int own,
			 char *source, size_t slen, char *path, size_t plen, char *note, size_t nlen)
{
	int attached = a->attached;

	own = own && !attached;
	snprintf(source, slen, "%s", attached ? "shared" : own ? "process" : "");
	if (attached)
		snprintf(path, plen, "%s", s->path);
	else if (s->publisher.head)
		snprintf(path, plen, "%s", s->publisher.path);
	else if (!own && !s->tried)
		wanted_path(path, plen);   /* where the first conversion will look */
	else
		path[0] = '\0';
	snprintf(note, nlen, "%s", s->note);
}

/* ---- faststamp serve -------------------------------------------------------------- */

int fts__attach_serve_open(struct fts__attach *s, const char *path, const struct fts__head *id,
			   int64_t interval_ns, uint32_t dircap, size_t len, void **region, char *err,
			   size_t errlen)
{
	return fts__publisher_open(&s->publisher, path, id, (uint64_t)interval_ns, dircap, len,
				   FTS__NCLK, region, err, errlen);
}

int fts__attach_serve_show(struct fts__attach *s, const cpu_set_t *cpus, int64_t skew_ns,
			   int64_t res_ns, uint64_t res_ticks, uint64_t counter, char *err,
			   size_t errlen)
{
	fts__publisher_proof(&s->publisher, cpus, skew_ns);
	fts__publisher_resolution(&s->publisher, res_ns, res_ticks);
	fts__publisher_beat(&s->publisher, counter);
	return fts__publisher_show(&s->publisher, err, errlen);
}

void fts__attach_serve_stop(struct fts__attach *s, const char *why)
{
	if (s->publisher.head)
		fts__publisher_close(&s->publisher, FTS__SHM_STOPPED, why);
}

void fts__attach_serve_round(struct fts__attach *s, int faulted, const char *why, uint64_t counter)
{
	if (!s->publisher.head)
		return;
	if (faulted)
		fts__publisher_close(&s->publisher, FTS__SHM_FAULTED, why);
	else
		fts__publisher_beat(&s->publisher, counter);
}

int fts__attach_serving(const struct fts__attach *s)
{
	return s->publisher.head != NULL;
}

int fts__attach_serve_news(struct fts__attach *s, unsigned *seq, char *buf, size_t len,
			   int *failed)
{
	return fts__publisher_news(&s->publisher, seq, buf, len, failed);
}
