/* proof.c - the process clock's proof of its counter across CPUs, and what new stamps
 * use because of it.
 *
 * Where the kernel does not keep time with the counter itself, the counter is proven
 * one clock on every CPU before conversions rely on it: the warp test (warp.c) at the
 * first calibration, retried with a backoff when it could not run; then the samples
 * the sampler takes on each CPU in turn (sampler.c) measure the offsets between them,
 * which widen every counter stamp's bound (skew_ns). Whether new stamps use the
 * counter (fts__store_counter) follows: chosen, proven (or needing no proof) and not
 * faulted. State: the object's proof (clockobj.h), under its lock. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "arch.h"
#include "backend.h"
#include "bracket.h"
#include "clockobj.h"
#include "internal.h"
#include "now.h"
#include "proof.h"

enum fts__relation fts__proof_relation(void)
{
	const struct fts__source *src = &pc->hot.src;

	return src->counter == fts__hw_counter ? fts__backend_choice()->arch.relation : src->relation;
}

/* Does the counter of this source need the proof across CPUs? */
int fts__proof_needed(void)
{
	if (pc_uses_hw() && (!FTS__HAVE_COUNTER || !fts__backend_choice()->store_counter))
		return 0;
	return fts__proof_relation() != FTS__CS_IS_COUNTER;
}

/* New stamps use the counter when it was chosen, is proven (or need not be) and no
 * fault was found. */
void fts__proof_store_choice(void)
{
	struct proof *proof = &pc->of.proof;
	int ok = !pc_faulted() && proof->state != PROOF_WARPED && proof->state != PROOF_NO_RUN &&
		 fts__backend_choice()->store_counter;
	__atomic_store_n(&fts__store_counter, ok, __ATOMIC_RELAXED);
}

/* New offsets between CPUs: rule 12's line (fresh.c) holds the old ones. */
static void skew_set(int64_t v)
{
	__atomic_store_n(&pc->hot.skew_ns, v, __ATOMIC_RELAXED);
	view_changed();
}

/* With lock held: the proof as the source starts, needed or not. */
void fts__proof_reset(void)
{
	struct proof *proof = &pc->of.proof;

	pc->of.proof = (struct proof){ .cpu = -1 };
	proof->state = fts__proof_needed() ? PROOF_PENDING : PROOF_NONE;
	snprintf(proof->text, sizeof(proof->text), "%s",
		 proof->state == PROOF_PENDING ? "pending: the warp test runs at the first calibration"
		 : fts__proof_relation() == FTS__CS_IS_COUNTER ? "not needed: the kernel keeps time with the counter"
						   : "not needed: new stamps are clock readings");
	skew_set(0);
}

void fts__proof_reset_once(void)
{
	if (pc->of.proof.state == PROOF_UNSET)
		fts__proof_reset();
}

/* With lock held: run the warp test if the counter needs it and has none yet (or the
 * last one could not run and its retry is due). A warp wider than a sample's bracket
 * keeps new stamps off the counter; every counter stamp's bound then covers the
 * offsets the test found (skew_ns), set once the counter's rate is known. */
int fts__proof_run_locked(void)
{
	const struct fts__source *src = &pc->hot.src;
	struct proof *proof = &pc->of.proof;
	struct fts__cbracket br;
	int64_t now = 0;
	int rc;

	fts__proof_reset_once();
	fts__now(CLOCK_MONOTONIC, &now);
	if (proof->state == PROOF_NO_RUN && now < proof->retry_at)
		return -EAGAIN;
	if (proof->state != PROOF_PENDING && proof->state != PROOF_NO_RUN)
		return 0;
	if ((rc = (src->cpus ? src->cpus : fts__hw_cpus)(src->ctx, &proof->cpus)) < 0 ||
	    (rc = (src->warp ? src->warp : fts__hw_warp)(src->ctx, &proof->cpus, &proof->w)) < 0 ||
	    (rc = fts__cbracket_read(src->counter, src->realtime, src->ctx, SAMPLE_TRIES, &br)) < 0) {
		/* retried as a sampler thread is: after 1 s, 2 s, ... up to 64 s */
		proof->retry_gap = proof->retry_gap ? 2 * proof->retry_gap : RETRY_MIN_NS;
		if (proof->retry_gap > RETRY_MAX_NS)
			proof->retry_gap = RETRY_MAX_NS;
		proof->state = PROOF_NO_RUN;
		proof->retry_at = now + proof->retry_gap;
		snprintf(proof->text, sizeof(proof->text), "could not run (%s): new stamps use "
			 "clock_gettime, counter stamps wait for it (retried)", strerror(-rc));
		skew_set(-1);
		fts__proof_store_choice();
		return rc;
	}
	proof->bracket = br.a - br.b;
	proof->state = proof->w.warp > proof->bracket ? PROOF_WARPED : PROOF_DONE;
	skew_set(0);
	if (proof->w.warp)
		snprintf(proof->text, sizeof(proof->text), "%s: %d CPUs, the counter went back %llu "
			 "ticks between CPU %d and the first (a sample's bracket: %llu ticks)",
			 proof->state == PROOF_WARPED ? "warp found, new stamps use clock_gettime"
						      : "proven with a warp inside a bracket",
			 proof->w.cpus, (unsigned long long)proof->w.warp, proof->w.worst_cpu,
			 (unsigned long long)proof->bracket);
	else
		snprintf(proof->text, sizeof(proof->text), "proven: %d CPUs, no backward step "
			 "(offsets within %llu ticks), %.2f ms", proof->w.cpus,
			 (unsigned long long)proof->w.spread, (double)proof->w.cost_ns / 1e6);
	fts__proof_store_choice();
	return 0;
}

static long double ns_of(uint64_t ticks)
{
	struct judged *judged = &pc->of.judged;

	/* ticks at the rate against MONOTONIC_RAW, 0 until it is known */
	return judged->health.ticks_per_ns > 0 ? (long double)ticks / judged->health.ticks_per_ns : 0;
}

/* With lock held: the bound's share for offsets between CPUs grows to ns (it never
 * shrinks: stamps taken before keep theirs covered). */
static void skew_raise_locked(int64_t ns)
{
	if (ns > pc_skew_ns())
		skew_set(ns);
}

/* With lock held, once the counter's rate is known: the offsets the warp test could
 * not rule out, in ns. Its spread covers a warp it saw, and also an offset smaller
 * than a hand-over's latency, which it cannot see: that latency is its floor. The
 * spread bounds each CPU's offset from the first, so two others may differ by twice
 * it. */
void fts__proof_skew_update_locked(void)
{
	struct proof *proof = &pc->of.proof;

	if ((proof->state == PROOF_DONE || proof->state == PROOF_WARPED) && proof->w.spread &&
	    pc->of.judged.health.ticks_per_ns > 0)
		skew_raise_locked((int64_t)ns_of(proof->w.spread) * (proof->w.pairs > 1 ? 2 : 1) + 1);
}

/* With lock held: a healthy sample taken on another CPU than the one before. An
 * offset between the two too small to be a fault (health.c) widens the bound at once;
 * after a round of the CPUs, half the round's sum does: any two CPUs are joined by
 * the shorter of the two ways round, whose offsets add up to at most that. A visit
 * that measured nothing starts the round again. */
void fts__proof_skew_visit_locked(const struct fts__seen *e)
{
	struct proof *proof = &pc->of.proof;

	if (!e->moved_ns) {
		proof->round_moved = proof->round_visits = 0;
		return;
	}
	skew_raise_locked(e->moved_ns);
	proof->round_moved += e->moved_ns;
	if (++proof->round_visits < CPU_COUNT(&proof->cpus))
		return;
	skew_raise_locked((proof->round_moved + 1) / 2);
	proof->round_moved = proof->round_visits = 0;
}
