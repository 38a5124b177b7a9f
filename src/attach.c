/* attach.c - the machine's shared history (shared.h) in the process clock: looking for
 * it at the first conversion and converting with it while it is valid, leaving it for a
 * copy and the process's own, and publishing it (faststamp serve). Owns that state;
 * what it needs of the process clock (clock.c, which calls it under its lock) comes as
 * arguments (attach.h). */
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

/* The machine's shared history (shared.h), while this process converts with it. */
struct fts__attached fts__attach FTS__HOT_DATA;
static int attach_tried;
static char shared_path[256];         /* the shared history looked for */
static char shared_note[240];         /* why it is not used, "" while it is */
/* A publisher (faststamp serve): the history lies in its sealed memory (shared.h). */
static struct fts__publisher publisher;

/* The shared history's path the first conversion looks for: FASTSTAMP_SHARED, or
 * the default path; "" for FASTSTAMP_SHARED=0 (never). */
static void wanted_path(char *path, size_t len)
{
	const char *env = getenv("FASTSTAMP_SHARED");

	snprintf(path, len, "%s", env && !strcmp(env, "0") ? "" : env && *env ? env : FTS_SHARED_PATH);
}

/* Before the first history: use the machine's shared one if FASTSTAMP_SHARED (a path;
 * 0: never) or the default path names a valid one. */
static void attach(const struct fts__attach_clock *c)
{
	struct fts__head id;
	cpu_set_t need;
	char why[160];
	int with_proof;

	attach_tried = 1;
	wanted_path(shared_path, sizeof(shared_path));
	if (!shared_path[0]) {
		snprintf(shared_note, sizeof(shared_note), "FASTSTAMP_SHARED=0");
		return;
	}
	if (!c->counter_in_use()) {
		snprintf(shared_note, sizeof(shared_note), "no counter in use");
		return;
	}
	/* The clocksource of the counter's choice: one switched since is the publisher's
	 * to find (it then stops) and this process's sampler's. */
	c->clock_id(&id, 0);
	/* the publisher's proof across CPUs stands for this process's, on its CPUs (asked
	 * of the kernel only where a proof is needed) */
	with_proof = c->needs_proof();
	if (with_proof)
		fts__cpus_allowed(&need);
	if (fts__shared_attach(&fts__attach.shared, shared_path, &id, with_proof ? &need : NULL,
			       c->counter(), why, sizeof(why)) < 0) {
		snprintf(shared_note, sizeof(shared_note), "%.60s: %.160s", shared_path, why);
		return;
	}
	shared_note[0] = '\0';
	__atomic_store_n(&fts__attach.attached, 1, __ATOMIC_RELEASE);
}

int fts__attach_locked(int own, const struct fts__attach_clock *c)
{
	if (!attach_tried && !own)
		attach(c);
	return fts__attach.attached;
}

void fts__attach_never(void)
{
	attach_tried = 1;
}

int fts__attach_leave_locked(const char *why)
{
	if (!fts__attach.attached)
		return 0;
	/* What was converted with it converts the same from the copy. Readers that still
	 * hold the view read on: the mapping stays. */
	for (int k = 0; k < FTS__NCLK; k++)
		if (fts__attach.shared.views[k])
			fts__attach.frozen[k] = fts__calib_copy(fts__attach.shared.views[k]);
	snprintf(shared_note, sizeof(shared_note), "left %.60s: %.160s", shared_path, why);
	__atomic_store_n(&fts__attach.attached, 0, __ATOMIC_RELEASE);
	return 1;
}

FTS__HOT int fts__attach_covers(uint64_t newest, uint64_t (*counter)(void), char *why, size_t len)
{
	return newest <= fts__calib_newest_counter(fts__attach.shared.view) ||
	       fts__shared_alive(&fts__attach.shared, counter(), why, len);
}

void fts__attach_state(char *proof, size_t len, int64_t *period_ns)
{
	const struct fts__shm_head *h = fts__attach.shared.head;

	if (!fts__attach.attached)
		return;
	if (h->proof == FTS__SHM_PROOF_PROVEN)
		snprintf(proof, len, "proven by the machine's history's publisher (faststamp serve, "
			 "pid %d)", (int)h->pid);
	*period_ns = (int64_t)h->interval_ns;
}

void fts__attach_sharing(int own, char *source, size_t slen, char *path, size_t plen,
			 char *note, size_t nlen)
{
	int attached = fts__attach.attached;

	own = own && !attached;
	snprintf(source, slen, "%s", attached ? "shared" : own ? "process" : "");
	if (attached)
		snprintf(path, plen, "%s", shared_path);
	else if (publisher.head)
		snprintf(path, plen, "%s", publisher.path);
	else if (!own && !attach_tried)
		wanted_path(path, plen);   /* where the first conversion will look */
	else
		path[0] = '\0';
	snprintf(note, nlen, "%s", shared_note);
}

/* ---- faststamp serve -------------------------------------------------------------- */

int fts__attach_serve_open(const char *path, const struct fts__head *id, int64_t interval_ns,
			   uint32_t dircap, size_t len, void **region, char *err, size_t errlen)
{
	return fts__publisher_open(&publisher, path, id, (uint64_t)interval_ns, dircap, len,
				   FTS__NCLK, region, err, errlen);
}

int fts__attach_serve_show(const cpu_set_t *cpus, int64_t skew_ns, uint64_t counter, char *err,
			   size_t errlen)
{
	fts__publisher_proof(&publisher, cpus, skew_ns);
	fts__publisher_beat(&publisher, counter);
	return fts__publisher_show(&publisher, err, errlen);
}

void fts__attach_serve_stop(const char *why)
{
	if (publisher.head)
		fts__publisher_close(&publisher, FTS__SHM_STOPPED, why);
}

void fts__attach_serve_round(int faulted, const char *why, uint64_t counter)
{
	if (!publisher.head)
		return;
	if (faulted)
		fts__publisher_close(&publisher, FTS__SHM_FAULTED, why);
	else
		fts__publisher_beat(&publisher, counter);
}

int fts__attach_serving(void)
{
	return publisher.head != NULL;
}

int fts__attach_serve_news(unsigned *seq, char *buf, size_t len, int *failed)
{
	return fts__publisher_news(&publisher, seq, buf, len, failed);
}
