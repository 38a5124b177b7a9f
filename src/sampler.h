/* sampler.h - sampler.c's interface: the process clock's samples and its sampler
 * thread. Each function runs with the process clock's lock held, but
 * fts__sampler_move_next, which takes it. Not installed. */
#ifndef FTS__SAMPLER_H
#define FTS__SAMPLER_H

#include <stddef.h>
#include <stdint.h>

/* Take a sample and add it to the history (and the record). why: a reason to stop
 * trusting the counter found before sampling (the kernel left its clocksource), or
 * NULL. 0 or a negative errno (-EIO: the counter is found faulty, or was before). */
int fts__sampler_sample_locked(const char *why);
/* Has the kernel left the clocksource it had when the counter was chosen? Then why
 * gets the reason and 1 is returned. */
int fts__sampler_switched_locked(char *why, size_t len);
/* A sampler round: a warp test that could not run is retried when due; then a
 * sample. */
int fts__sampler_round_locked(const char *why);
/* Without the lock: the calling thread (the sampler) moves to the next CPU the counter
 * is proven on. */
void fts__sampler_move_next(void);
/* The clocks' resolution, probed once a source (resolution.c). */
void fts__sampler_probe_resolution_locked(void);
/* The clocks' resolution as another found it (the shared history's publisher): taken
 * instead of a probe. */
void fts__sampler_resolution_locked(int64_t res_ns, uint64_t res_ticks);
/* The first samples' spacing: 2 ms, longer on a coarse clock, never past the
 * sampler's period. */
int64_t fts__sampler_first_gap_ns(void);
/* Make sure the history has three samples and the sampler thread runs. 0 or a
 * negative errno. */
int fts__sampler_start_locked(void);

#endif /* FTS__SAMPLER_H */
