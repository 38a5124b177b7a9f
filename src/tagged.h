/* tagged.h - tagged.c's interface: tagged stamps on the other clocks. Not installed. */
#ifndef FTS__TAGGED_H
#define FTS__TAGGED_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"

/* The tagged stamps of stamps[0..n) to clock k (not FTS__CLK_REALTIME) into ns and err
 * (err may be NULL); other entries are left alone. 0, or a negative errno (-ERANGE:
 * before 1970; -EAGAIN: no clock read; -ENOMEM). */
int fts__tagged_convert(int k, const fast_timestamp_t *stamps, size_t n, int64_t *ns,
			int64_t *err);
/* Read the clocks with now (NULL: the real ones, fts__now) and forget every read taken.
 * For tests. */
void fts__tagged_set_clock(int (*now)(clockid_t id, int64_t *ns));

#endif /* FTS__TAGGED_H */
