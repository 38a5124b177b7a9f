/* attach.c - the machine's shared history (shared.h) in the process clock: looking for
 * it at the first conversion and converting with it while it is valid, leaving it for a
 * copy and the process's own, and publishing it (faststamp serve). Owns that state;
 * the samples, the lock and the source are clock.c's (clock_int.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "calib.h"
#include "clock.h"
#include "clock_int.h"
#include "convert.h"
#include "faststamp/config.h"
#include "histfile.h"
#include "history.h"
#include "internal.h"
#include "shared.h"

/* The machine's shared history (shared.h), while this process converts with it. */
static struct fts__shared shared FTS__HOT_DATA;
static int attached FTS__HOT_DATA;                  /* read with acquire: shared.view is in use */
static int attach_tried;
static struct fts_calib *frozen[FTS__NCLK] FTS__HOT_DATA;   /* copies of the shared histories, taken on leaving */
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

/* With lock held, before the first history: use the machine's shared one if
 * FASTSTAMP_SHARED (a path; 0: never) or the default path names a valid one. */
static void attach(void)
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
	if (!fts__pc_counter_in_use()) {
		snprintf(shared_note, sizeof(shared_note), "no counter in use");
		return;
	}
	/* The clocksource of the counter's choice: one switched since is the publisher's
	 * to find (it then stops) and this process's sampler's. */
	fts__pc_clock_id(&id, 0);
	/* the publisher's proof across CPUs stands for this process's, on its CPUs (asked
	 * of the kernel only where a proof is needed) */
	with_proof = fts__pc_needs_proof();
	if (with_proof)
		fts__cpus_allowed(&need);
	if (fts__shared_attach(&shared, shared_path, &id, with_proof ? &need : NULL,
			       fts__pc_counter(), why, sizeof(why)) < 0) {
		snprintf(shared_note, sizeof(shared_note), "%.60s: %.160s", shared_path, why);
		return;
	}
	shared_note[0] = '\0';
	__atomic_store_n(&attached, 1, __ATOMIC_RELEASE);
	fts__fresh_drop();
}

int fts__clock_leave_shared(const char *why)
{
	int left = 0;

	pthread_mutex_lock(&fts__pc_lock);
	if (attached) {
		/* What was converted with it converts the same from the copy. Readers that
		 * still hold the view read on: the mapping stays. */
		for (int k = 0; k < FTS__NCLK; k++)
			if (shared.views[k])
				frozen[k] = fts__calib_copy(shared.views[k]);
		snprintf(shared_note, sizeof(shared_note), "left %.60s: %.160s", shared_path, why);
		__atomic_store_n(&attached, 0, __ATOMIC_RELEASE);
		fts__fresh_drop();
		left = 1;
	}
	pthread_mutex_unlock(&fts__pc_lock);
	return left;
}


FTS__HOT const struct fts_calib *fts__clock_history(int k)
{
	if (__atomic_load_n(&attached, __ATOMIC_ACQUIRE))
		return shared.views[k];
	return __atomic_load_n(&fts__pc_hists[k], __ATOMIC_ACQUIRE);
}

FTS__HOT void fts__clock_view(int k, struct fts__clock_view *v)
{
	v->cur = fts__clock_history(k);
	v->old = v->cur && v->cur == shared.views[k] ? NULL :
		 __atomic_load_n(&frozen[k], __ATOMIC_ACQUIRE);
}

int fts__clock_holds(int k)
{
	return !__atomic_load_n(&attached, __ATOMIC_ACQUIRE) || shared.views[k];
}

void fts__clock_sharing(char *source, size_t slen, char *path, size_t plen, char *note,
			size_t nlen)
{
	int own;

	pthread_mutex_lock(&fts__pc_lock);
	own = !attached && fts__pc_hists[FTS__CLK_REALTIME];
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
	pthread_mutex_unlock(&fts__pc_lock);
}

/* ---- faststamp serve -------------------------------------------------------------- */

int fts__clock_serve(const char *path, int64_t interval_ns, char *err, size_t errlen)
{
	struct fts__head id;
	const cpu_set_t *cpus;
	char proof[200];
	uint32_t dircap;
	size_t len, recs;
	void *region;
	int rc;

	if (!FTS__HAVE_COUNTER || !fts__store_counter) {
		snprintf(err, errlen, "no counter in use, stamps are clock readings: nothing to "
			 "calibrate (%s)", FTS__HAVE_COUNTER ? fts__backend_choice()->arch.reason
							       : "a build without a counter");
		return -1;
	}
	fts__pc_clock_id(&id, 1);
	pthread_mutex_lock(&fts__pc_lock);
	attach_tried = 1;   /* the publisher never reads another's */
	if (fts__pc_hists[FTS__CLK_REALTIME] || fts__calib_dims(NULL, &dircap, &len, &recs) < 0) {
		snprintf(err, errlen, "the process clock is already in use");
		pthread_mutex_unlock(&fts__pc_lock);
		return -1;
	}
	if (fts__publisher_open(&publisher, path, &id, (uint64_t)interval_ns, dircap, len, FTS__NCLK,
				&region, err, errlen) < 0) {
		pthread_mutex_unlock(&fts__pc_lock);
		return -1;
	}
	fts__pc_set_period(interval_ns);
	for (int k = 0; k < FTS__NCLK; k++) {
		fts__pc_hists[k] = fts__calib_new_at(NULL, (char *)region + (size_t)k * fts__shm_stride(len), len);
		if (!fts__pc_hists[k])
			break;
	}
	if (!fts__pc_hists[FTS__NCLK - 1]) {
		snprintf(err, errlen, "%s", strerror(errno));
		rc = -1;
	} else if ((rc = fts__pc_start_locked()) < 0) {
		snprintf(err, errlen, "the first samples: %s", strerror(-rc));
	} else if (fts__pc_proof(&cpus, proof, sizeof(proof)) < 0) {
		snprintf(err, errlen, "the counter across CPUs: %s", proof);
		rc = -1;
	} else {
		fts__publisher_proof(&publisher, cpus, fts__pc_own_skew_ns());
		fts__publisher_beat(&publisher, fts__pc_counter());
		rc = fts__publisher_show(&publisher, err, errlen);
	}
	if (rc < 0)
		fts__publisher_close(&publisher, FTS__SHM_STOPPED, err);
	pthread_mutex_unlock(&fts__pc_lock);
	return rc < 0 ? -1 : 0;
}

int fts__clock_serve_news(unsigned *seq, char *buf, size_t len, int *failed)
{
	return fts__publisher_news(&publisher, seq, buf, len, failed);
}

void fts__clock_serve_stop(const char *why)
{
	pthread_mutex_lock(&fts__pc_lock);
	if (publisher.head)
		fts__publisher_close(&publisher, FTS__SHM_STOPPED, why);
	pthread_mutex_unlock(&fts__pc_lock);
}

int fts__attach_locked(int own)
{
	if (!attach_tried && !own)
		attach();
	return attached;
}

void fts__attach_never(void)
{
	attach_tried = 1;
}

FTS__HOT int fts__attach_in_use(void)
{
	return __atomic_load_n(&attached, __ATOMIC_ACQUIRE);
}

FTS__HOT int fts__attach_covers(uint64_t newest)
{
	char why[160];

	if (newest <= fts__calib_newest_counter(shared.view) ||
	    fts__shared_alive(&shared, fts__pc_counter(), why, sizeof(why)))
		return 1;
	fts__clock_leave_shared(why);
	return 0;
}

FTS__HOT int64_t fts__attach_skew_ns(void)
{
	return shared.head->skew_ns;
}

void fts__attach_state(char *proof, size_t len, int64_t *period_ns)
{
	if (!attached)
		return;
	if (shared.head->proof == FTS__SHM_PROOF_PROVEN)
		snprintf(proof, len, "proven by the machine's history's publisher (faststamp serve, "
			 "pid %d)", (int)shared.head->pid);
	*period_ns = (int64_t)shared.head->interval_ns;
}

void fts__serve_round(int faulted, const char *why, uint64_t counter)
{
	if (!publisher.head)
		return;
	if (faulted)
		fts__publisher_close(&publisher, FTS__SHM_FAULTED, why);
	else
		fts__publisher_beat(&publisher, counter);
}

int fts__serving(void)
{
	return publisher.head != NULL;
}
